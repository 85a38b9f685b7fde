"""Random generator states in the graph format (version 2) and in kiln's C ABI.

A NumPy Generator over PCG64 is an rng value: in the file an `{"kind": "rng"}` variable whose
constant value mirrors `bit_generator.state`; in the C ABI a uint64 tensor of shape [6]
(kiln.h, "Random generators").
"""
from __future__ import annotations

import numpy as np

from .unsupported import Unsupported

RNG_TYPE = {"kind": "rng", "bit_generator": "PCG64"}


def is_rng_type(t) -> bool:
    return "RandomGenerator" in type(t).__name__


def rng_constant_value(generator: np.random.Generator) -> dict:
    """The format's value of an rng constant: NumPy's PCG64 state, 128-bit integers as decimals."""
    state = generator.bit_generator.state
    if state.get("bit_generator") != "PCG64":
        raise Unsupported(f"only PCG64 generators are in the graph format, not {state.get('bit_generator')}")
    inner = state["state"]
    return {"pcg64": {"state": str(int(inner["state"])), "inc": str(int(inner["inc"])),
                      "has_uint32": int(state["has_uint32"]), "uinteger": int(state["uinteger"])}}


def rng_words(generator: np.random.Generator) -> np.ndarray:
    """A Generator's state as kiln's C ABI carries it: uint64[6] = state_hi, state_lo, inc_hi,
    inc_lo, has_uint32, uinteger (kiln.h, "Random generators")."""
    value = rng_constant_value(generator)["pcg64"]
    state, inc = int(value["state"]), int(value["inc"])
    mask = (1 << 64) - 1
    return np.array([state >> 64, state & mask, inc >> 64, inc & mask, value["has_uint32"], value["uinteger"]],
                    dtype=np.uint64)


def generator_from_words(words) -> np.random.Generator:
    """A NumPy Generator(PCG64) in the state of kiln's uint64[6] words."""
    w = [int(x) for x in np.asarray(words, dtype=np.uint64)]
    bit = np.random.PCG64()
    bit.state = {"bit_generator": "PCG64", "state": {"state": (w[0] << 64) | w[1], "inc": (w[2] << 64) | w[3]},
                 "has_uint32": w[4], "uinteger": w[5]}
    return np.random.Generator(bit)
