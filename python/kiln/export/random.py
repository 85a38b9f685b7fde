"""Random variables (graph format version 2): every PyTensor RandomVariable is written by class
name with its props and PyTensor's inputs `(rng, size, *params)` and outputs `(next_rng, draws)`.

kiln does not implement random variables yet: while KILN_HAS_RANDOM_VARIABLES is False the
exporter refuses them (naming each), unless asked to write them anyway.
"""
from __future__ import annotations

from .entries import Func
from .writer import Unsupported, Writer

#: Flip when kiln's code generator implements the RandomVariable ops.
KILN_HAS_RANDOM_VARIABLES = False


def _random_variable(w: Writer, node) -> None:
    op = node.op
    if not KILN_HAS_RANDOM_VARIABLES and not w.options.allow_unimplemented:
        raise Unsupported("random variables (graph format v2) are not implemented in kiln yet")
    props = {}
    for key in getattr(op, "__props__", ()):
        if key == "inplace":
            continue
        value = getattr(op, key)
        props[key] = str(value) if key == "dtype" else value
    w.require_v2(f"random variable {type(op).__name__}")
    w.emit(node, type(op).__name__, props)


RANDOM_VARIABLE = Func(_random_variable)


def is_random_variable(op) -> bool:
    return any(base.__name__ == "RandomVariable" for base in type(op).__mro__)
