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
from pymc_models import (categorical, censored, distributions_zoo, eight_schools, garch_scan, gaussian_process,  # noqa: E402
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
    # PyMC's gradient of a scan: pytensor.grad's backward scan (mit-mot buffers), compiled
    "garch_scan": garch_scan,
}

#: Models whose graphs need graph format version 2 (the others must be written as version 1).
NEEDS_V2 = {"garch_scan"}  # Scan


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


def test_nutpie_entry_point_gives_logp_and_gradient(tmp_path):
    model = radon()
    compiled = kiln.pymc.compile_logp(model, tmp_path, name="radon")
    assert "radon_nutpie_logp" in (tmp_path / "radon.h").read_text()
    assert compiled.nutpie_logp_address()
    rng = np.random.default_rng(7)
    for scale in (0.0, 0.1, 1.0):
        x = compiled.initial_point + scale * rng.standard_normal(compiled.ndim)
        code, logp, grad = compiled.nutpie_logp(x)
        assert code == 0, compiled.nutpie_last_error()
        want_logp, want_grad = compiled.logp_dlogp(x)
        assert logp == want_logp
        np.testing.assert_array_equal(grad, want_grad)
        assert compiled.nutpie_last_error() == ""
    # nutpie's codes: a non-finite density at a point is recoverable (3: gradient, 4: logp) ...
    x = compiled.initial_point.copy()
    x[0] = np.inf
    code, _, _ = compiled.nutpie_logp(x)
    assert code in (3, 4), code
    assert "not finite" in compiled.nutpie_last_error()
    # ... a vector of the wrong length is not (a negative kiln status, the message kept).
    code, _, _ = compiled.nutpie_logp(compiled.initial_point[:-1])
    assert code in (-5, -6), code  # -KILN_ERR_INPUT_SHAPE, or _BROADCAST where x's length is dynamic
    assert compiled.nutpie_last_error()


def test_nutpie_entry_point_is_optional(tmp_path):
    compiled = kiln.pymc.compile_logp(eight_schools(False), tmp_path, name="eight_schools", nutpie=False)
    with pytest.raises(RuntimeError, match="nutpie=True"):
        compiled.nutpie_logp_address()


def test_nutpie_samples_through_kiln():
    nutpie = pytest.importorskip("nutpie")
    model = eight_schools(False)
    compiled = kiln.pymc.compile_logp(model, name="eight_schools_noncentered")
    kw = dict(draws=300, tune=300, chains=2, seed=3, progress_bar=False)
    ours = nutpie.sample(kiln.pymc.nutpie_model(model, compiled), **kw)
    theirs = nutpie.sample(nutpie.compile_pymc_model(model, backend="numba"), **kw)
    # The draws' log densities are kiln's: recomputed through the library at each stored draw.
    post = ours.posterior
    for chain, draw in [(0, 0), (1, 150), (1, 299)]:
        point = {name: post[name].values[chain, draw] for name in compiled.value_var_names
                 if name in post} | _transformed(model, post, chain, draw)
        x = compiled.point_to_array(point)
        assert np.isclose(compiled.logp(x), ours.sample_stats["logp"].values[chain, draw], rtol=1e-9, atol=1e-9)
    # The same sampler on the same density: posteriors agree within Monte Carlo error.
    for name in ("mu", "tau"):
        a, b = post[name].values.ravel(), theirs.posterior[name].values.ravel()
        assert abs(a.mean() - b.mean()) < 4 * np.hypot(a.std(), b.std()) / np.sqrt(len(a) / 10)


def _transformed(model, post, chain, draw):
    """The value variables of a draw in their transformed spaces (tau_log__ from tau)."""
    out = {}
    for rv in model.free_RVs:
        value = model.rvs_to_values[rv]
        transform = model.rvs_to_transforms.get(rv)
        if transform is not None and value.name not in post:
            out[value.name] = transform.forward(post[rv.name].values[chain, draw], *rv.owner.inputs).eval()
    return out


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
