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

VARIANTS = {
    "raw": dict(rewrite=None),
    "rewritten": dict(rewrite=True),
    "mode": dict(mode="mode"),
}


@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("family", list(FAMILIES))
def test_family_matches_pytensor(family, variant):
    cases = FAMILIES[family]()
    check_family(cases, name=f"{family}_{variant}", **VARIANTS[variant])


def test_rewritten_alloc_diag_needs_advanced_inc_subtensor():
    """PyTensor's rewrites turn AllocDiag into an AdvancedIncSubtensor with two index vectors;
    until kiln has it, the exporter refuses it by name (then this compares values)."""
    v = pt.dvector("v")
    y = pt.diag(v)
    try:
        f = kiln.function([v], y, rewrite=True)
    except kiln.UnsupportedGraphError as e:
        assert "AdvancedIncSubtensor" in str(e)
        pytest.xfail("kiln lacks AdvancedIncSubtensor")
    vv = np.arange(1.0, 4.0)
    assert_same("diag", f(vv), pytensor.function([v], y, mode=REFERENCE_MODE)(vv))
