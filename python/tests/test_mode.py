"""pytensor.function(..., mode=kiln.mode()): kiln as PyTensor's backend."""
from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
import pytest

import kiln
from helpers import PYTENSOR_MAJOR, REFERENCE_MODE, assert_same, cholesky
from kiln.pytensor_mode import KilnFallbackWarning, KilnLinker


#: pytensor.scan's outputs alone (3.x warns unless asked; 2.x has no such argument).
SCAN_KW = {"return_updates": False} if PYTENSOR_MAJOR >= 3 else {}


def test_mode_compiles_through_kiln():
    x, W = pt.dvector("x"), pt.dmatrix("W")
    h = pt.tanh(pt.dot(W, x) + 1.0)
    y = pt.special.log_softmax(h) * 2.0 - h.sum()
    f = pytensor.function([W, x], [y, h.max()], mode=kiln.mode())
    assert isinstance(f.maker.linker, KilnLinker)
    exported = f.maker.linker.exported
    ops = {n["op"] for n in exported.graph["nodes"]}
    assert "Elemwise" in ops and exported.version == 1
    rng = np.random.default_rng(0)
    Wv, xv = rng.normal(size=(6, 4)), rng.normal(size=4)
    ref = pytensor.function([W, x], [y, h.max()], mode=REFERENCE_MODE)(Wv, xv)
    got = f(Wv, xv)
    for name, g, r in zip(["y", "max"], got, ref):
        assert_same(name, g, r)
    got_kw = f(x=xv, W=Wv)
    np.testing.assert_array_equal(got_kw[0], got[0])


def test_scalar_outputs_are_numpy_scalars_of_their_dtype():
    # PyTensor's test_basic::test_ScalarFromTensor: a ScalarType output is np.int8(56), as every
    # other linker returns it, not a 0-d array.
    from pytensor.tensor.basic import scalar_from_tensor

    x = pt.bscalar("x")
    f = pytensor.function([x], [scalar_from_tensor(x * 2), x + 1], mode=kiln.mode())
    s, t = f(np.int8(28))
    assert isinstance(s, np.int8) and s == 56
    assert isinstance(t, np.ndarray) and t.shape == () and t.dtype == np.int8 and t == 29


def test_blockwise_over_join_and_indexing_is_batched_by_kiln():
    # PyTensor's vectorize leaves Blockwise{Join} (unlike batch patterns) and, in 3.x,
    # Blockwise{AdvancedSubtensor} (batched indices) where its own rules give up
    # (test_basic::test_vectorize_join, test_subtensor::test_vectorize_adv_subtensor).
    from pytensor.tensor import vectorize

    rng = np.random.default_rng(3)
    x, y = pt.tensor("x", shape=(None, 2, 3)), pt.tensor("y", shape=(1, 4, 3))
    out = vectorize(lambda a, b: pt.join(0, a, b), signature="(i,j),(k,j)->(l,j)")(x, y)
    xv, yv = rng.normal(size=(5, 2, 3)), rng.normal(size=(1, 4, 3))
    got = pytensor.function([x, y], out, mode=kiln.mode())(xv, yv)
    np.testing.assert_array_equal(got, np.concatenate([xv, np.broadcast_to(yv, (5, 4, 3))], axis=1))
    for axis in (pytensor.shared(np.int64(0)), pytensor.shared(np.int64(-2))):  # known at run time only
        out = vectorize(lambda a, b: pt.join(axis, a, b), signature="(i,j),(k,j)->(l,j)")(x, y)
        got = pytensor.function([x, y], out, mode=kiln.mode())(xv, yv)
        np.testing.assert_array_equal(got, np.concatenate([xv, np.broadcast_to(yv, (5, 4, 3))], axis=1))
    cases = [(lambda a, i: a[i], "(a,b),(k)->(k,b)", (7, 5, 3), (7, 2)),
             (lambda a, i: a[:, i], "(a,b),(k)->(a,k)", (4, 5, 3), (4, 2))]
    for core, signature, x_shape, i_shape in cases if PYTENSOR_MAJOR >= 3 else []:
        x, i = pt.tensor("x", shape=x_shape), pt.tensor("i", shape=i_shape, dtype="int64")
        out = vectorize(core, signature=signature)(x, i)
        xv, iv = rng.normal(size=x_shape), rng.integers(-3, 3, size=i_shape)
        got = pytensor.function([x, i], out, mode=kiln.mode())(xv, iv)
        np.testing.assert_array_equal(got, np.stack([core(xv[b], iv[b]) for b in range(x_shape[0])]))
    # Basic indexing and increments with a batched integer index (test_subtensor's
    # test_vectorize_subtensor_without_batch_indices): kiln batches them as advanced indices.
    x, i, v = pt.tensor("x", shape=(6, 4, 5)), pt.tensor("i", shape=(6,), dtype="int64"), pt.tensor("v", shape=(6, 5))
    take = vectorize(lambda a, k: a[k, :], signature="(m,n),()->(n)")(x, i)
    add = vectorize(lambda a, k, b: pt.inc_subtensor(a[k], b), signature="(m,n),(),(n)->(m,n)")(x, i, v)
    xv, iv, vv = rng.normal(size=(6, 4, 5)), rng.integers(-4, 4, size=6), rng.normal(size=(6, 5))
    got_take, got_add = pytensor.function([x, i, v], [take, add], mode=kiln.mode())(xv, iv, vv)
    want_add = xv.copy()
    for b in range(6):
        want_add[b, iv[b]] += vv[b]
    np.testing.assert_array_equal(got_take, xv[np.arange(6), iv])
    np.testing.assert_array_equal(got_add, want_add)


def test_blockwise_over_scan_is_batched_by_kiln():
    """vectorize_graph of a scan leaves Blockwise{Scan}; the exporter writes the Scan (its step
    function included) as the core op and kiln's loader batches it by Scan's own rule."""
    from pytensor.graph.replace import vectorize_graph

    x = pt.tensor("x", shape=())
    out = pytensor.scan(lambda x: x + 1, outputs_info=[x], n_steps=10, **SCAN_KW)
    out = out[0] if isinstance(out, tuple) else out
    x_vec = pt.tensor("x_vec", shape=(None,))
    out_vec = vectorize_graph(out, {x: x_vec})
    f = pytensor.function([x_vec], out_vec, mode=kiln.mode())
    assert any(n["op"] == "Blockwise" and n["props"]["core_op"]["op"] == "Scan"
               for n in f.maker.linker.exported.graph["nodes"])
    np.testing.assert_array_equal(f(np.array([1.0, 2.0, 3.0])), np.arange(2, 12) + np.arange(3).reshape(-1, 1))


def test_while_scan_with_a_random_stream_and_its_gradient():
    """A while loop drawing from a random stream (an rng carried by the Scan) with the gradient of
    its outputs (PyTensor's test_until_random_infer_shape): the shape function keeps the Scan, and
    its rng output's shape is the carrier's fixed one, not a Shape_i of the rng."""
    from pytensor.scan.utils import until
    from pytensor.tensor.random.utils import RandomStream

    x = pt.dscalar("x")
    srng = RandomStream(0)
    out, updates = pytensor.scan(lambda prev: (prev + srng.uniform(), until(prev > 5)), outputs_info=x, n_steps=10)
    g = pytensor.grad(out.sum(), x)
    f = pytensor.function([x], [out, g], updates=updates, mode=kiln.mode())
    for start in range(-5, 5):
        values, gradient = f(float(start))
        assert len(values) == gradient  # d/dx of the sum of len(values) terms x + draws


def test_while_scan_with_a_float_condition():
    """until() of a float: the loop stops where the condition is nonzero (Scan.perform's truth)."""
    from pytensor.scan.utils import until

    x = pt.dscalar("x")
    out = pytensor.scan(lambda prev: (prev * 2.0, until(pt.cast(prev > 20.0, "float64") * 0.5)), outputs_info=x,
                        n_steps=50, **SCAN_KW)
    out = out[0] if isinstance(out, tuple) else out
    f = pytensor.function([x], out, mode=kiln.mode())
    ref = pytensor.function([x], out, mode=REFERENCE_MODE)
    for start in (1.0, 3.0, 100.0):
        np.testing.assert_array_equal(f(start), ref(start))


def test_jacobian_by_a_scan_over_gradients_of_scans():
    """PyTensor's test_pushout_seqs: a scan over pytensor.grad of another scan's outputs (its
    backward scan nested in the step). The gradient of pt.diag is an OpFromGraph whose inner
    input is the very variable of the step around it; inlining it must not rename that variable
    outside the body."""
    def predict(i, x_star, s_star, X, h):
        D = X.shape[1]
        iL = pt.diag(h[i, :D])
        inp = (X - x_star).dot(iL)
        return ((inp * inp.dot(iL.dot(s_star).dot(iL))).sum()) * h[i, D]

    h = pytensor.shared(np.random.default_rng(3).uniform(0.5, 1.5, size=(3, 5)))
    X, x_star, s_star = pt.dmatrix("X"), pt.dvector("x_star"), pt.dmatrix("s_star")
    M = pytensor.scan(predict, sequences=pt.arange(h.shape[0]), non_sequences=[x_star, s_star, X, h], **SCAN_KW)
    M = M[0] if isinstance(M, tuple) else M
    J = pytensor.scan(lambda i, M, x: pytensor.grad(M[i], x), sequences=pt.arange(M.shape[0]),
                      non_sequences=[M, x_star], **SCAN_KW)
    J = J[0] if isinstance(J, tuple) else J
    rng = np.random.default_rng(4)
    args = (rng.random((6, 4)), rng.random(4), np.eye(4) + 0.1)
    got = pytensor.function([X, x_star, s_star], J, mode=kiln.mode())(*args)
    want = pytensor.function([X, x_star, s_star], J, mode=REFERENCE_MODE)(*args)
    assert np.abs(want).max() > 1e-3
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_fast_run_fusion_reaches_kiln_as_composites():
    x = pt.dvector("x")
    y = pt.exp(x) * pt.sin(x) + pt.sqrt(x + 2.0)
    f = pytensor.function([x], y, mode=kiln.mode())
    scalar_ops = [n["props"]["scalar_op"] for n in f.maker.linker.exported.graph["nodes"] if n["op"] == "Elemwise"]
    assert any(isinstance(s, dict) and s.get("name") == "Composite" for s in scalar_ops)
    xv = np.linspace(-1, 1, 7)
    np.testing.assert_allclose(f(xv), np.exp(xv) * np.sin(xv) + np.sqrt(xv + 2), rtol=1e-14)


def test_shared_variables_and_updates():
    x = pt.dvector("x")
    total = pytensor.shared(np.zeros(3), name="total")
    calls = pytensor.shared(np.int64(0), name="calls")
    f = pytensor.function([x], total + x, updates={total: total + x, calls: calls + 1}, mode=kiln.mode())
    for k in range(3):
        np.testing.assert_array_equal(f(np.ones(3)), np.full(3, k + 1.0))
    np.testing.assert_array_equal(total.get_value(), [3.0, 3.0, 3.0])
    assert calls.get_value() == 3


def test_rng_updates_are_generators_other_functions_can_use():
    """A random stream's update writes a NumPy Generator back into the shared variable (not
    kiln's uint64[6] words), in the state NumPy would leave it, so another function sharing it
    (on any linker) and a reset of its value keep working."""
    from pytensor.tensor.random.utils import RandomStream

    srng = RandomStream(123)
    draws = srng.normal(size=(4,))
    f = pytensor.function([], draws, mode=kiln.mode())
    g = pytensor.function([], draws, mode="FAST_COMPILE")
    rng_var = next(iter(srng.state_updates))[0]
    reference = np.random.default_rng(123)
    rng_var.set_value(np.random.default_rng(123))
    first = f()
    np.testing.assert_array_equal(first, reference.normal(size=4))
    assert isinstance(rng_var.get_value(borrow=True), np.random.Generator)
    assert rng_var.get_value(borrow=True).bit_generator.state == reference.bit_generator.state
    np.testing.assert_array_equal(g(), reference.normal(size=4))  # PyTensor's own linker continues the stream
    rng_var.set_value(np.random.default_rng(123))  # a reset, as PyTensor's tests do
    np.testing.assert_array_equal(f(), first)


def _spectrum(A):
    """rfft's magnitudes: kiln has no FFT ops (RFFTOp) yet."""
    from pytensor.tensor import fft

    return pt.sqrt(pt.sqr(fft.rfft(A)).sum(axis=-1))


def test_ops_kiln_lacks_raise_instead_of_falling_back():
    A = pt.dmatrix("A")
    with pytest.raises(kiln.UnsupportedGraphError, match="RFFTOp"):
        pytensor.function([A], _spectrum(A), mode=kiln.mode())


def test_explicit_fallback_warns_and_runs_elsewhere():
    A = pt.dmatrix("A")
    with pytest.warns(KilnFallbackWarning, match="RFFTOp"):
        f = pytensor.function([A], _spectrum(A), mode=kiln.mode(fallback="py"))
    M = np.array([[4.0, 2.0, 1.0, -1.0], [2.0, 3.0, 0.5, 0.25]])
    np.testing.assert_allclose(f(M), np.abs(np.fft.rfft(M)), rtol=1e-12)


def test_linear_algebra_compiles_through_kiln():
    A = pt.dmatrix("A")
    f = pytensor.function([A], cholesky(A), mode=kiln.mode())
    assert isinstance(f.maker.linker, KilnLinker)
    M = np.array([[4.0, 2.0], [2.0, 3.0]])
    np.testing.assert_allclose(f(M), np.linalg.cholesky(M), rtol=1e-14)


def test_runtime_errors_surface_as_kiln_exceptions():
    v, i = pt.dvector("v"), pt.lscalar("i")
    f = pytensor.function([v, i], v[i], mode=kiln.mode())
    assert f(np.arange(3.0), 2) == 2.0
    with pytest.raises(IndexError):
        f(np.arange(3.0), 3)


class _ModelError(Exception):
    pass


def test_failed_checks_raise_the_graph_s_exception_class():
    """A CheckAndRaise raises its exc_type in PyTensor (scipy's LinAlgError for Cholesky's
    on_error="raise", PyMC's ParameterValueError): so does a function compiled through kiln."""
    from pytensor.raise_op import CheckAndRaise

    v = pt.dvector("v")
    y = CheckAndRaise(_ModelError, "v must be positive")(v * 2, pt.all(v > 0))
    f = pytensor.function([v], y, mode=kiln.mode())
    np.testing.assert_array_equal(f(np.ones(2)), [2.0, 2.0])
    with pytest.raises(_ModelError, match="^v must be positive") as e:
        f(-np.ones(2))
    if PYTENSOR_MAJOR >= 3:  # 2.x's raise_with_op rebuilds the exception without its cause
        assert isinstance(e.value.__cause__, kiln.KilnAssertionError)


def test_cholesky_on_error_raise_is_numpy_s_linalg_error():
    """PyTensor's own test_cholesky_indef expects scipy.linalg.LinAlgError (NumPy's) from a
    Cholesky of an indefinite matrix with on_error="raise": PyTensor 3 builds a CheckAndRaise of
    it, 2.x's Cholesky raises in kiln's compiled code (KILN_ERR_LINALG, kiln.KilnLinAlgError)."""
    import warnings

    assert issubclass(kiln.KilnLinAlgError, np.linalg.LinAlgError)
    x = pt.dmatrix("x")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = cholesky(x, lower=True, on_error="raise")
    f = pytensor.function([x], out, mode=kiln.mode())
    np.testing.assert_allclose(f(np.array([[4.0, 2.0], [2.0, 5.0]])), [[2.0, 0.0], [1.0, 2.0]])
    with pytest.raises(np.linalg.LinAlgError):
        f(np.array([[1.0, 0.2], [0.2, -2.0]]))


def test_mode_without_pytensor_rewrites():
    x = pt.dmatrix("x")
    y = (x.T @ x).sum(axis=0)
    f = pytensor.function([x], y, mode=kiln.mode(optimizer=None))
    xv = np.arange(6.0).reshape(3, 2)
    np.testing.assert_allclose(f(xv), (xv.T @ xv).sum(axis=0))
