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
from op_cases_lowered import FAMILIES_LOWERED
from op_cases_v2 import FAMILIES_V2

ALL_FAMILIES = {**FAMILIES, **FAMILIES_V2, **FAMILIES_LOWERED}

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


def test_lowered_ops_raise_numpy_s_errors_through_kiln_mode():
    """The run-time errors of the ops the exporter writes as subgraphs (op_cases_lowered.py) are
    CheckAndRaise nodes raising what PyTensor's perform raises: ValueError for Choose entries out
    of range under mode="raise" (also negative ones, which indexing would wrap) and for no choices,
    for PermuteRowElements with a leading axis of run-time length 1 that is not broadcastable, and
    for a Blockwise{Reshape} whose batch reshapes to different shapes."""
    from pytensor.graph.replace import vectorize_graph
    from pytensor.tensor.basic import choose, permute_row_elements

    a, c = pt.lvector("a"), pt.dmatrix("c")
    x, y = pt.dmatrix("x"), pt.lmatrix("y")
    k, vec, shapes = pt.lscalar("k"), pt.dvector("vec"), pt.lmatrix("shapes")
    shape = pt.as_tensor_variable([-1, k])
    batched = vectorize_graph(pt.reshape(vec, shape), {shape: shapes})
    outs = [choose(a, c), choose(a, c, mode="wrap"), permute_row_elements(x, y), batched]
    f = pytensor.function([a, c, x, y, vec, shapes], outs, mode=kiln.mode(name="lowered_errors"))
    ref = pytensor.function([a, c, x, y, vec, shapes], outs, mode=REFERENCE_MODE)
    good = dict(a=np.array([0, 1, 1]), c=np.arange(6.0).reshape(2, 3), x=np.ones((2, 3)),
                y=np.array([[2, 0, 1], [0, 1, 2]]), vec=np.arange(6.0), shapes=np.array([[2, -1], [-1, 3]]))
    for g, w in zip(f(**good), ref(**good)):
        assert_same("good", g, w)
    bad = [dict(a=np.array([0, 2, 1])), dict(a=np.array([0, -1, 1])), dict(c=np.zeros((0, 3))),
           dict(x=np.ones((1, 3))), dict(shapes=np.array([[2, -1], [3, -1]])), dict(shapes=np.array([[2, -1], [4, -1]])),
           dict(shapes=np.array([[2, 3], [3, 3]]))]
    for change in bad:
        values = {**good, **change}
        with pytest.raises(ValueError):
            ref(**values)
        with pytest.raises(ValueError):
            f(**values)


def test_lowered_ops_refuse_what_they_cannot_reproduce():
    """Cases the subgraphs cannot reproduce stay refused, naming the op and why."""
    from pytensor.tensor.basic import choose

    try:
        from pytensor.tensor.linalg import tensorinv
    except ImportError:
        from pytensor.tensor.nlinalg import tensorinv

    a = pt.lvector("a")
    m = pt.lmatrix("m")
    with pytest.raises(kiln.UnsupportedGraphError, match=r"(?s)TensorInv.*integer|TensorInv.*int64"):
        kiln.from_pytensor(tensorinv(m.reshape((2, 2, 2, 2))), [m])
    # Choose reads a MakeList of choices itself; the typed list alone is not a value kiln has.
    import pytensor.typed_list as tl

    c0, c1 = pt.dvector("c0"), pt.dvector("c1")
    kiln.from_pytensor(choose(a, [c0, c1]), [a, c0, c1])
    with pytest.raises(kiln.UnsupportedGraphError, match="TypedListType cannot be a graph output"):
        kiln.from_pytensor(tl.make_list([c0, c1]), [c0, c1])
    with pytest.raises(kiln.UnsupportedGraphError, match="Length"):
        kiln.from_pytensor(tl.length(tl.make_list([c0, c1])), [c0, c1])


def test_kiln_differentiates_the_lowered_ops(tmp_path):
    """`kiln grad` differentiates the exported subgraphs themselves: PermuteRowElements (both
    directions, a broadcast leading axis), Choose (in the choices), TensorInv, Blockwise{Reshape},
    J0/J1 and GammaU/GammaL in x equal pytensor.grad's gradients (PyTensor has none for Choose,
    TensorInv, GammaU and GammaL: there the reference is the gradient of the same decomposition
    written by hand)."""
    from pytensor.tensor.basic import choose, permute_row_elements

    try:
        from pytensor.tensor.linalg import tensorinv
    except ImportError:
        from pytensor.tensor.nlinalg import tensorinv
    from kiln.build import library_for
    from kiln.compiler import run_kiln

    t = pt.dvector("t")
    x = t[:12].reshape((3, 4))
    perm = pt.as_tensor_variable(np.array([[1, 3, 0, 2], [3, 2, 1, 0], [0, 1, 2, 3]]))
    a = pt.as_tensor_variable(np.array([[0, 2, 1, 2], [1, 1, 0, 0]]))
    w = np.arange(12.0).reshape(3, 4)
    # (PyTensor types TensorInv's output as its input, so the shape has to read the same permuted)
    sq = t[:16].reshape((2, 2, 2, 2)) + pt.as_tensor_variable(4 * np.eye(4).reshape(2, 2, 2, 2))
    z = t[4:9]
    k1, k2 = pt.constant(2.5, dtype="float64"), pt.constant(1.5, dtype="float64")  # not float32 (gamma(k) in k's dtype)
    cost_of = {
        "permute": lambda: (permute_row_elements(x, perm) * w).sum()
        + (permute_row_elements(t[:4], perm, inverse=True) ** 2 * w).sum(),
        "choose": lambda: (choose(a, x[:, None, :], mode="wrap") ** 2).sum(),
        "special": lambda: (pt.math.j0(z) * pt.math.j1(z)).sum() + pt.math.gammau(k1, pt.exp(z)).sum()
        + pt.math.gammal(k2, pt.exp(z)).sum(),
        "tensorinv": lambda: (tensorinv(sq, ind=2) * np.arange(16.0).reshape(2, 2, 2, 2)).sum(),
    }
    by_hand = {  # PyTensor's gradient of what the lowering computes, where PyTensor has none
        "choose": lambda: (x[np.array([[0, 2, 1, 2], [1, 1, 0, 0]]) % 3, np.arange(4)[None, :]] ** 2).sum(),
        "special": lambda: (pt.math.j0(z) * pt.math.j1(z)).sum()
        + (pt.math.gammaincc(k1, pt.exp(z)) * pt.gamma(k1)).sum() + (pt.math.gammainc(k2, pt.exp(z)) * pt.gamma(k2)).sum(),
        "tensorinv": lambda: (pt.linalg.inv(sq.reshape((4, 4))).reshape((2, 2, 2, 2)) * np.arange(16.0).reshape(2, 2, 2, 2)).sum(),
    }
    tv = np.random.default_rng(45).normal(size=16) * 0.5 + 1.0
    for name, cost_fn in cost_of.items():
        cost = cost_fn()
        cost.name = "cost"
        exported = kiln.from_pytensor([cost], [t], name=f"lowered_grad_{name}")
        graph = exported.save(tmp_path / f"{name}.json")
        grad_file = tmp_path / f"{name}_grad.json"
        run_kiln(["grad", str(graph), "--cost", "cost", "--wrt", "t", "-o", str(grad_file), "--disconnected", "zero"])
        fn = kiln.load(library_for(grad_file, name=f"lowered_grad_{name}"))
        got = fn(tv)
        ref_cost = by_hand.get(name, cost_fn)()
        want = pytensor.function([t], [ref_cost, pytensor.grad(ref_cost, t)], mode=REFERENCE_MODE)(tv)
        assert_same(f"{name} cost", got[0], want[0], dict(rtol=1e-10, atol=1e-12))
        assert_same(f"{name} gradient", got[1], want[1], dict(rtol=1e-9, atol=1e-12))


def test_gradient_ops_export_and_kiln_differentiates_them_as_pytensor(tmp_path):
    """pytensor.gradient's zero_grad, disconnected_grad, grad_clip and grad_scale are exported as
    kiln's ops of the same names: their values pass through, and `kiln grad` of the exported
    cost equals pytensor.grad's gradient; a symbolic multiplier is refused."""
    from pytensor.gradient import disconnected_grad, grad_clip, grad_scale, zero_grad

    from kiln.build import library_for
    from kiln.compiler import run_kiln

    t = pt.dvector("t")
    cost = ((zero_grad(t) * t).sum() + (disconnected_grad(t ** 2) * t).sum() + (grad_clip(t, -0.5, 0.75) ** 2).sum()
            + (grad_scale(pt.exp(t), 2.5) * t).sum())
    cost.name = "cost"
    exported = kiln.from_pytensor([cost], [t], name="gradient_ops")
    assert {"ZeroGrad", "DisconnectedGrad", "GradClip", "GradScale"} <= {n["op"] for n in exported.graph["nodes"]}
    graph = exported.save(tmp_path / "gradient_ops.json")
    run_kiln(["grad", str(graph), "--cost", "cost", "--wrt", "t", "-o", str(tmp_path / "g.json")])
    fn = kiln.load(library_for(tmp_path / "g.json", name="gradient_ops"))
    tv = np.random.default_rng(46).normal(size=7)
    got = fn(tv)
    want = pytensor.function([t], [cost, pytensor.grad(cost, t)], mode=REFERENCE_MODE)(tv)
    assert_same("cost", got[0], want[0], dict(rtol=1e-12, atol=1e-14))
    assert_same("gradient", got[1], want[1], dict(rtol=1e-12, atol=1e-14))

    m = pt.dscalar("m")
    with pytest.raises(kiln.UnsupportedGraphError, match="GradScale"):
        kiln.from_pytensor([grad_scale(t, m).sum()], [t, m])


def test_float16_graphs_compute_as_pytensor_and_numpy():
    """A float16 graph (graph format v2) through kiln equals PyTensor's Python implementation
    (NumPy's float16 arithmetic: each operation in float32, rounded): elementwise ops fused into
    one loop, promotion with int8 (stays float16) and float32, a Sum (float32 accumulator), a
    dot, and a cast back from float64."""
    x = pt.tensor("x", dtype="float16", shape=(None,))
    y = pt.tensor("y", dtype="float16", shape=(None,))
    k = pt.tensor("k", dtype="int8", shape=(None,))
    m = pt.tensor("m", dtype="float16", shape=(None, None))
    w = pt.fvector("w")
    outs = [x * y + pt.exp(x) - 1.5, x * k, (x * w).sum(), pt.tanh(x).sum(), pt.dot(m, y),
            pt.cast(pt.cast(x, "float64") / 3, "float16"), x * y + y]
    exported = kiln.from_pytensor(outs, [x, y, k, m, w], name="half")
    assert exported.graph["version"] == 2
    fn = kiln.function([x, y, k, m, w], outs)
    r = np.random.default_rng(16)
    xv = r.normal(size=50).astype("float16")
    yv = r.normal(size=50).astype("float16")
    kv = r.integers(-5, 5, size=50).astype("int8")
    mv = r.normal(size=(7, 50)).astype("float16")
    wv = r.normal(size=50).astype("float32")
    got = fn(xv, yv, kv, mv, wv)
    want = pytensor.function([x, y, k, m, w], outs, mode=REFERENCE_MODE)(xv, yv, kv, mv, wv)
    for i, (g, e) in enumerate(zip(got, want)):
        assert np.asarray(g).dtype == np.asarray(e).dtype, i
        assert_same(f"output {i}", g, e, dict(rtol=1e-3, atol=1e-3))
    # Arithmetic is exact: NumPy's float16 ops are correctly rounded, as kiln's (fused or not).
    assert np.asarray(got[6]).dtype == np.float16
    np.testing.assert_array_equal(got[6], want[6])


def test_complex_graphs_compute_as_pytensor():
    """A complex graph (graph format v2) through kiln equals PyTensor's Python implementation:
    arithmetic with NumPy's products and quotients, exp/log/sqrt with C99's branch cuts, the
    parts (real, imag, abs, angle — float64 as PyTensor's scalar Angle), complex(re, im),
    promotion of complex64 with float64 and int8, a Sum (complex128 accumulator), a dot (BLAS's
    unconjugated zgemv) and a complex constant."""
    z = pt.tensor("z", dtype="complex64", shape=(None,))
    w = pt.tensor("w", dtype="complex128", shape=(None,))
    m = pt.tensor("m", dtype="complex128", shape=(None, None))
    re = pt.dvector("re")
    k = pt.tensor("k", dtype="int8", shape=(None,))
    c = pt.constant(np.array([1 - 2j, 0.5j], dtype="complex128"))
    outs = [z * w / (z + 1j) - pt.conj(w), pt.exp(z) * k, pt.sqrt(-w), pt.log(z),
            pt.real(z), pt.imag(w), pt.abs(z), pt.angle(w), pt.complex(re, re * 2),
            (z * z).sum(), pt.dot(m, w), w[:2] * c, z ** 2, z * re]
    exported = kiln.from_pytensor(outs, [z, w, m, re, k], name="cplx")
    assert exported.graph["version"] == 2
    fn = kiln.function([z, w, m, re, k], outs)
    r = np.random.default_rng(64)
    zv = (r.normal(size=40) + 1j * r.normal(size=40)).astype("complex64")
    wv = r.normal(size=40) + 1j * r.normal(size=40)
    wv[3] = -2 + 0j  # on sqrt's branch cut: sqrt(-w) of -(-2+0j) = 2-0j
    wv[4] = -2 - 0j
    mv = r.normal(size=(5, 40)) + 1j * r.normal(size=(5, 40))
    rv = r.normal(size=40)
    kv = r.integers(-5, 5, size=40).astype("int8")
    got = fn(zv, wv, mv, rv, kv)
    want = pytensor.function([z, w, m, re, k], outs, mode=REFERENCE_MODE)(zv, wv, mv, rv, kv)
    for i, (g, e) in enumerate(zip(got, want)):
        assert np.asarray(g).dtype == np.asarray(e).dtype, (i, np.asarray(g).dtype, np.asarray(e).dtype)
        tol = dict(rtol=2e-5, atol=2e-5) if np.asarray(e).dtype in (np.complex64, np.float32) else dict(rtol=1e-12, atol=1e-12)
        assert_same(f"output {i}", g, e, tol)
    # The branch cut's side follows the sign of the zero (C99's csqrt, as NumPy).
    np.testing.assert_array_equal(np.signbit(np.imag(got[2][3:5])), np.signbit(np.imag(want[2][3:5])))


def test_eig_exports_and_matches_numpy():
    """pt.linalg.eig (a Blockwise of Eig, complex outputs) through kiln, for a matrix (float64)
    and a batch (float32): PyTensor's dtypes, its eigenvalues (compared as sets: another LAPACK
    build may deflate in another order), and eigenvectors that satisfy A v = v diag(w) with unit
    norm."""
    x = pt.dmatrix("x")
    b = pt.tensor("b", dtype="float32", shape=(None, None, None))
    outs = [*pt.linalg.eig(x), *pt.linalg.eig(b)]
    fn = kiln.function([x, b], outs)
    r = np.random.default_rng(7)
    xv = r.normal(size=(6, 6))
    bv = r.normal(size=(2, 4, 4)).astype("float32")
    got = fn(xv, bv)
    want = pytensor.function([x, b], outs, mode=REFERENCE_MODE)(xv, bv)
    for i, (g, e) in enumerate(zip(got, want)):
        assert np.asarray(g).dtype == np.asarray(e).dtype, i
    for (w, v), (we, _), a, tol in (((got[0], got[1]), (want[0], want[1]), xv, 1e-10),
                                    ((got[2], got[3]), (want[2], want[3]), bv, 2e-5)):
        key = lambda z: np.lexsort((np.round(z.imag, 4), np.round(z.real, 4)), axis=-1)  # noqa: E731
        np.testing.assert_allclose(np.take_along_axis(w, key(w), -1), np.take_along_axis(we, key(we), -1),
                                   rtol=tol * 10, atol=tol * 10)
        np.testing.assert_allclose(a.astype(v.dtype) @ v, v * w[..., None, :], rtol=tol * 10, atol=tol * 10)
        np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, rtol=tol * 10)
