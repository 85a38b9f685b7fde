"""PyMC models through kiln.pymc.compile_logp: logp and dlogp equal PyMC's own compiled
compile_logp/compile_dlogp at many points of the flat parameter space. Models needing ops
kiln lacks check the exporter's refusal and flip to the real comparison when the ops land."""
from __future__ import annotations

import numpy as np
import pytest

pm = pytest.importorskip("pymc")

import kiln  # noqa: E402
import kiln.pymc  # noqa: E402
from helpers import REFERENCE_MODE  # noqa: E402
from pymc.blocking import DictToArrayBijection  # noqa: E402
from pymc_models import (categorical, censored, distributions_zoo, eight_schools, gaussian_process,  # noqa: E402
                         logistic_glm, mvnormal_lkj, radon, truncated)

N_POINTS = 25
LOGP_TOL = dict(rtol=1e-10, atol=1e-9)
DLOGP_TOL = dict(rtol=1e-9, atol=1e-9)


def points(compiled, n=N_POINTS, seed=0):
    """The initial point and n random points around it (in the transformed space)."""
    rng = np.random.default_rng(seed)
    x0 = compiled.initial_point
    return [x0] + [x0 + rng.normal(0, 0.7, x0.shape) for _ in range(n)]


def check_model(model, compiled):
    logp_fn = model.compile_logp(mode=REFERENCE_MODE)
    dlogp_fn = model.compile_dlogp(mode=REFERENCE_MODE)
    for x in points(compiled):
        point = compiled.array_to_point(x)
        got_logp, got_dlogp = compiled.logp_dlogp(x)
        np.testing.assert_allclose(got_logp, logp_fn(point), **LOGP_TOL)
        np.testing.assert_allclose(got_dlogp, dlogp_fn(point), **DLOGP_TOL)


SUPPORTED = {
    "eight_schools_noncentered": lambda: eight_schools(False),
    "eight_schools_centered": lambda: eight_schools(True),
    "radon": radon,
    "logistic_glm": logistic_glm,
    "censored": censored,
    "truncated": truncated,
    "distributions_zoo": distributions_zoo,
    "categorical": categorical,
    "gaussian_process": gaussian_process,
    "mvnormal_lkj": mvnormal_lkj,
}

#: Models whose graphs need graph format version 2 (the others must be written as version 1).
NEEDS_V2 = set()


@pytest.mark.parametrize("name", list(SUPPORTED))
def test_logp_and_dlogp_match_pymc(name):
    model = SUPPORTED[name]()
    compiled = kiln.pymc.compile_logp(model, name=name)
    assert compiled.graph.version == (2 if name in NEEDS_V2 else 1), compiled.graph.v2_reasons
    assert [s.name for s in compiled.function.outputs] == ["logp", "dlogp"]
    check_model(model, compiled)


@pytest.mark.parametrize("name", ["eight_schools_noncentered", "radon"])
def test_kiln_gradient_matches_pymc(name, tmp_path):
    model = SUPPORTED[name]()
    compiled = kiln.pymc.compile_logp(model, tmp_path, name=name, grad="kiln")
    check_model(model, compiled)


def test_flat_vector_follows_pymc_ordering(tmp_path):
    model = radon()
    compiled = kiln.pymc.compile_logp(model, tmp_path, name="radon")
    ip = model.initial_point()
    mapped = DictToArrayBijection.map({v.name: ip[v.name] for v in model.value_vars})
    np.testing.assert_array_equal(compiled.point_to_array(ip), mapped.data)
    assert compiled.value_var_names == [v.name for v in model.value_vars]
    assert [i[1:] for i in mapped.point_map_info] == [i[1:] for i in compiled.point_map_info]
    assert (tmp_path / "radon.json").is_file() and (tmp_path / "libradon.so").is_file()
    assert (tmp_path / "radon.h").is_file()
    x = compiled.initial_point + 0.1
    assert compiled.logp(x) == compiled.logp_dlogp(x)[0]
    np.testing.assert_array_equal(compiled.dlogp(x), compiled.logp_dlogp(x)[1])


def test_nutpie_entry_point_is_not_there_yet():
    compiled = kiln.pymc.compile_logp(eight_schools(False), name="eight_schools_noncentered")
    with pytest.raises(NotImplementedError, match="nutpie entry point"):
        compiled.nutpie_logp_address()


# Models that need ops kiln does not implement yet: the exporter must refuse them naming those
# ops; once kiln has them (KILN_LACKS shrinks) these compare with PyMC like the others.
NEEDS_MORE_OPS: dict = {}


@pytest.mark.parametrize("name", list(NEEDS_MORE_OPS) or [pytest.param("none", marks=pytest.mark.skip(
    reason="every model of this file compiles with kiln"))])
def test_models_needing_ops_kiln_lacks(name):
    build, expected = NEEDS_MORE_OPS[name]
    model = build()
    try:
        compiled = kiln.pymc.compile_logp(model, name=name)
    except kiln.UnsupportedGraphError as e:
        assert e.op_names & expected, f"refused for {e.op_names}, expected one of {expected}:\n{e}"
        pytest.xfail(f"kiln lacks {sorted(e.op_names)}")
    check_model(model, compiled)
