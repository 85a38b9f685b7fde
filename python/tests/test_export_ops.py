"""Every op family kiln implements, exported from PyTensor and compiled by kiln, against
pytensor.function: as written, after PyTensor's graph rewrites (canonicalize, stabilize,
specialize), and through kiln.mode() (PyTensor's fast_run: fusion into Composites, BLAS forms
such as Gemv/Gemm/Dot22/Ger, CAReduce fusion)."""
from __future__ import annotations

import pytest

from helpers import check_family
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
