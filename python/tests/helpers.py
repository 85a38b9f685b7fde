"""Helpers: run a family of small graphs through kiln and through PyTensor, compare output by
output (dtype exactly, values to a tolerance that depends on the dtype)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable

import numpy as np
import pytensor

import kiln

PYTENSOR_MAJOR = int(pytensor.__version__.split(".")[0])

#: The mode reference values come from. FAST_COMPILE runs each op's NumPy-based perform (quick to
#: compile, and PyTensor's own reference semantics); KILN_TEST_REFERENCE_MODE=FAST_RUN compares
#: with PyTensor's optimised default backend instead (slower: C or Numba compilation).
REFERENCE_MODE = os.environ.get("KILN_TEST_REFERENCE_MODE", "FAST_COMPILE")

try:  # PyTensor 3.x
    from pytensor.tensor.linalg import cholesky
except ImportError:  # 2.x
    from pytensor.tensor.slinalg import cholesky


@dataclass
class Case:
    """One graph: named outputs over inputs, with the values to call it on."""

    name: str
    inputs: list
    outputs: list
    values: list
    only_raw: str = ""  #: why PyTensor's rewrites turn this case into ops kiln lacks ("" if they do not)
    tol: dict | None = None  #: rtol/atol for float outputs instead of the dtype's default


def tolerance(dtype) -> dict:
    dtype = np.dtype(dtype)
    if dtype == np.float32:
        return dict(rtol=2e-5, atol=1e-6)
    if dtype.kind == "f":
        return dict(rtol=1e-11, atol=1e-13)
    return dict(rtol=0, atol=0)


def assert_same(name: str, got, want, tol: dict | None = None) -> None:
    """kiln's result equals PyTensor's: same dtype and shape, values to the dtype's tolerance
    (or `tol`)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{name}: dtype {got.dtype}, PyTensor gives {want.dtype}"
    assert got.shape == want.shape, f"{name}: shape {got.shape}, PyTensor gives {want.shape}"
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=name)
    else:
        np.testing.assert_allclose(got, want, err_msg=name, **(tol or tolerance(want.dtype)))


def family(cases: list[Case]) -> tuple[list, list, list, list[tuple[str, dict | None]]]:
    """All cases as one graph (inputs, outputs, values, (output label, tolerance)): one kiln
    library per family keeps the number of C++ compilations small."""
    inputs, outputs, values, labels = [], [], [], []
    for case in cases:
        for var, value in zip(case.inputs, case.values):
            if not any(var is seen for seen in inputs):  # cases may share an input
                inputs.append(var)
                values.append(value)
        outputs += case.outputs
        labels += [(f"{case.name}[{k}]", case.tol) for k in range(len(case.outputs))]
    return inputs, outputs, values, labels


def check_family(cases: list[Case], *, rewrite=None, mode: str = "function", name: str = "family") -> kiln.Function:
    """Compiles the cases with kiln (kiln.function with `rewrite`, or through kiln.mode() when
    mode == "mode") and compares every output with PyTensor (REFERENCE_MODE). Cases marked
    only_raw are left out when PyTensor rewrites the graph."""
    if rewrite or mode == "mode":
        cases = [c for c in cases if not c.only_raw]
    inputs, outputs, values, labels = family(cases)
    reference = pytensor.function(inputs, outputs, on_unused_input="ignore", mode=REFERENCE_MODE)
    want = reference(*values)
    if mode == "mode":
        f = pytensor.function(inputs, outputs, mode=kiln.mode(name=name), on_unused_input="ignore")
        got = f(*values)
        compiled = f.maker.linker
    else:
        f = kiln.function(inputs, outputs, rewrite=rewrite, name=name)
        got = f(*values)
        compiled = f
    assert len(got) == len(want) == len(labels)
    for (label, tol), g, w in zip(labels, got, want):
        assert_same(label, g, w, tol)
    return compiled


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def case(name: str, build: Callable, only_raw: str = "", tol: dict | None = None) -> Case:
    """A Case from a function returning (inputs, outputs, values)."""
    inputs, outputs, values = build()
    return Case(name, list(inputs), list(outputs), list(values), only_raw, tol)
