"""Every op family kiln implements, exported from PyTensor and compiled by kiln, against
pytensor.function: as written, after PyTensor's graph rewrites (canonicalize, stabilize,
specialize), and through kiln.mode() (PyTensor's fast_run: fusion into Composites, BLAS forms
such as Gemv/Gemm/Dot22/Ger, CAReduce fusion)."""
from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

import kiln
from helpers import REFERENCE_MODE, assert_same, check_family
from op_cases import FAMILIES
from op_cases_v2 import FAMILIES_V2

ALL_FAMILIES = {**FAMILIES, **FAMILIES_V2}

VARIANTS = {
    "raw": dict(rewrite=None),
    "rewritten": dict(rewrite=True),
    "mode": dict(mode="mode"),
}


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("family", list(ALL_FAMILIES))
def test_family_matches_pytensor(family, variant):
    cases = ALL_FAMILIES[family]()
    check_family(cases, name=f"{family}_{variant}", **VARIANTS[variant])


def test_rewritten_alloc_diag_is_an_advanced_inc_subtensor():
    """PyTensor's rewrites turn AllocDiag into set_subtensor(zeros[i, j], v): an
    AdvancedIncSubtensor with two index vectors, which kiln compiles."""
    v = pt.dvector("v")
    y = pt.diag(v)
    exported = kiln.from_pytensor(y, [v], rewrite=True)
    assert "AdvancedIncSubtensor" in {n["op"] for n in exported.graph["nodes"]}
    f = kiln.function([v], y, rewrite=True)
    vv = np.arange(1.0, 4.0)
    assert_same("diag", f(vv), pytensor.function([v], y, mode=REFERENCE_MODE)(vv))
