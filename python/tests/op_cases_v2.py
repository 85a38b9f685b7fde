"""PyTensor graphs for the op families graph format version 2 brought to kiln: linear algebra
(core ops and Blockwise-batched ones, with gradients), NumPy-style advanced indexing (PyTensor
2.x's and 3.x's AdvancedSubtensor forms come from the same user code in each venv), and sorting
and NumPy's extra ops. test_export_ops.py compares them with PyTensor like op_cases.py's."""
from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt

from helpers import Case, case, rng

#: LAPACK results of kiln and of SciPy/NumPy differ by rounding (blocked algorithms, other call
#: orders): a few ulps times the condition number of these well-conditioned test matrices.
LINALG_TOL = dict(rtol=1e-9, atol=1e-11)


def _spd(r, n: int, batch: tuple = ()) -> np.ndarray:
    a = r.normal(size=(*batch, n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _eigvalsh(a):
    """eigvalsh of a stack of matrices: 3.x takes b=None and batches; 2.x's Eigvalsh has a B (the
    identity here) and takes one matrix only (the first)."""
    try:
        return pt.linalg.eigvalsh(a, None)
    except NotImplementedError:
        return pt.linalg.eigvalsh(a[0], pt.eye(a.shape[-1]))


def _linalg_core() -> list[Case]:
    r = rng(21)
    A, S, B = pt.dmatrix("A"), pt.dmatrix("S"), pt.dmatrix("B")
    b = pt.dvector("b")
    Av = r.normal(size=(4, 4)) + 4 * np.eye(4)
    Sv, Bv, bv = _spd(r, 4), r.normal(size=(4, 2)), r.normal(size=4)
    L = pt.linalg.cholesky(S)

    def factorizations():
        P, Lu, U = pt.linalg.lu(A)
        lu, piv = pt.linalg.lu_factor(A)
        Q, R = pt.linalg.qr(A)
        w, V = pt.linalg.eigh(S)
        s = pt.linalg.svd(A, compute_uv=False)
        U2, s2, Vt2 = pt.linalg.svd(A, full_matrices=False)
        # Eigen- and singular vectors only up to sign: compare what the sign does not change.
        return [L, P, Lu, U, lu, piv, Q, R, w, V @ pt.diag(w) @ V.T, pt.abs(V), s, (U2 * s2) @ Vt2]

    def solves():
        return [pt.linalg.solve(A, B), pt.linalg.solve(A, b), pt.linalg.solve(S, B, assume_a="pos"),
                pt.linalg.solve(S, b, assume_a="sym"), pt.linalg.solve_triangular(L, B, lower=True),
                pt.linalg.solve_triangular(L.T, b, lower=False), pt.linalg.cho_solve((L, True), B),
                pt.linalg.solve_triangular(L, B, lower=True, unit_diagonal=True)]

    def matrix_functions():
        return [pt.linalg.inv(A), pt.linalg.det(A), *pt.linalg.slogdet(A), pt.linalg.pinv(B),
                pt.linalg.expm(A * 0.3), pt.linalg.kron(B, A[:2, :3]), pt.linalg.block_diag(A, B),
                pt.log(pt.linalg.det(S))]

    return [
        case("factorizations", lambda: ([A, S], factorizations(), [Av, Sv]), tol=LINALG_TOL),
        case("solves", lambda: ([A, S, B, b], solves(), [Av, Sv, Bv, bv]), tol=LINALG_TOL),
        case("matrix_functions", lambda: ([A, B, S], matrix_functions(), [Av, Bv, Sv]), tol=LINALG_TOL),
    ]


def _linalg_batched_and_grad() -> list[Case]:
    r = rng(22)
    T, U = pt.dtensor3("T"), pt.dtensor3("U")
    Tv, Uv = _spd(r, 3, (2,)), r.normal(size=(2, 3, 2))
    F = pt.ftensor3("F")
    Fv = _spd(r, 3, (2,)).astype("float32")
    S, b = pt.dmatrix("S"), pt.dvector("b")
    Sv, bv = _spd(r, 3), r.normal(size=3)
    A = pt.dmatrix("A")
    Av = r.normal(size=(3, 3)) + 3 * np.eye(3)

    def batched():  # Blockwise over each core op kiln loops
        Lb = pt.linalg.cholesky(T)
        return [Lb, pt.linalg.solve(T, U), pt.linalg.solve_triangular(Lb, U, lower=True), pt.linalg.det(T),
                pt.linalg.inv(T), pt.linalg.cho_solve((Lb, True), U), _eigvalsh(T)]

    def gradients():  # a Gaussian log density through Cholesky and its gradient (PyMC's MvNormal)
        L = pt.linalg.cholesky(S)
        z = pt.linalg.solve_triangular(L, b, lower=True)
        logp = -0.5 * (z ** 2).sum() - pt.log(pt.diagonal(L)).sum()
        return [logp, *pytensor.grad(logp, [S, b]), pytensor.grad(pt.linalg.solve(A, b).sum(), A),
                pytensor.grad(pt.linalg.det(A), A), pytensor.grad(pt.linalg.inv(A).sum(), A)]

    return [
        case("blockwise", lambda: ([T, U], batched(), [Tv, Uv]), tol=LINALG_TOL),
        case("blockwise_f32", lambda: ([F], [pt.linalg.cholesky(F), pt.linalg.det(F)], [Fv]),
             tol=dict(rtol=2e-5, atol=1e-5)),
        case("gradients", lambda: ([S, b, A], gradients(), [Sv, bv, Av]), tol=LINALG_TOL),
    ]


def _advanced_indexing() -> list[Case]:
    r = rng(23)
    x, t = pt.dmatrix("x"), pt.dtensor3("t")
    xv, tv = r.normal(size=(5, 4)), r.normal(size=(3, 4, 5))
    i, j = pt.lvector("i"), pt.lvector("j")
    iv, jv = np.array([0, 4, -1, 2, 4]), np.array([3, 0, 1, 1, -4])
    M = pt.lmatrix("M")
    Mv = np.array([[0, 1], [4, 4], [2, -5]])
    u8 = pt.vector("u8", dtype="uint8")
    u8v = np.array([3, 0, 1], "uint8")
    y = pt.dvector("y")
    yv = r.normal(size=5)

    def reads():
        return [x[i, j], x[M], x[1:, j[:2]], x[i, 1:3], t[j[1:3], :, i[:2]], t[:, j[:3], i[:3]], x[x > 0],
                t[t[:, :, 0] > 0], x[u8], x[None, i], t[1, j[:2]], x[i][:, j[:2]]]

    def writes():
        return [pt.set_subtensor(x[i, j], y), pt.inc_subtensor(x[i, j], y), pt.inc_subtensor(x[1:, j[:2]], 1.0),
                pt.set_subtensor(x[x < 0], 0.0), pt.inc_subtensor(x[M], 2.0), pt.inc_subtensor(t[:, j[:3], i[:3]], 1.0),
                pytensor.grad((x[i, j] ** 2).sum(), x), pytensor.grad((t[t > 0.5] * 3).sum(), t)]

    return [
        case("advanced_read", lambda: ([x, t, i, j, M, u8], reads(), [xv, tv, iv, jv, Mv, u8v])),
        case("advanced_write", lambda: ([x, t, i, j, M, y], writes(), [xv, tv, iv, jv, Mv, yv])),
    ]


def _sort_extra() -> list[Case]:
    r = rng(24)
    x = pt.dmatrix("x")
    xv = r.normal(size=(4, 5))
    v, s = pt.dvector("v"), pt.dvector("s")
    vv = np.array([3.0, -1.0, 2.0, 3.0, np.nan, 0.5, -1.0])
    sv = np.sort(r.normal(size=6))
    reps = pt.lvector("reps")
    k = pt.lvector("k")
    kv = np.array([2, 2, 0, 5, 2, 1, 0, 1])
    km = pt.lmatrix("km")
    kmv = np.array([[1, 2], [0, 1], [1, 2], [0, 1]])

    def sorting():
        return [pt.sort(x), pt.sort(x, axis=0), pt.sort(x, axis=None), pt.argsort(x), pt.argsort(x, axis=0),
                pt.sort(v), pt.argsort(v, kind="stable"), pt.sort(k, kind="mergesort"),
                pt.take_along_axis(x, pt.argsort(x, axis=1), axis=1),
                pytensor.grad((pt.sort(x, axis=1) * np.arange(5.0)).sum(), x)]

    def extra():
        return [pt.repeat(x, 2, axis=0), pt.repeat(x, reps, axis=1), pt.repeat(v, 3),
                pt.searchsorted(s, v), pt.searchsorted(s, x, side="right"), pt.searchsorted(s[::-1], v, sorter=pt.argsort(s[::-1])),
                *pt.nonzero(x > 0), pt.flatnonzero(k), pt.unique(k), *pt.unique(k, True, True, True),
                pt.unique(km, axis=0), pt.fill_diagonal(x, 7.0), pt.fill_diagonal_offset(x, -1.0, 1),
                pt.fill_diagonal_offset(x, 2.0, -2), pt.broadcast_to(v[:4], (3, 4)),
                pytensor.grad((pt.repeat(x, reps, axis=1) ** 2).sum(), x)]

    return [
        case("sort", lambda: ([x, v, k], sorting(), [xv, vv, kv])),
        case("extra", lambda: ([x, v, s, reps, k, km], extra(),
                               [xv, vv, sv, np.array([1, 0, 3, 1, 2]), kv, kmv])),
    ]


def _scan(fn, **kwargs):
    """pytensor.scan's outputs (3.x returns them alone with return_updates=False; 2.x, and 3.x
    without it, as (outputs, updates))."""
    try:
        return pytensor.scan(fn, return_updates=False, **kwargs)
    except TypeError:
        return pytensor.scan(fn, **kwargs)[0]


def _scans() -> list[Case]:
    """Scan's ScanInfo forms: a sequence with a sit-sot, a mit-sot with taps [-2, -1], a while
    loop, nit-sots with non-sequences and a given n_steps."""
    r = rng(25)
    x, eps, x0, a = pt.dvector("x"), pt.dvector("eps"), pt.dvector("x0"), pt.dvector("a")
    c = pt.dscalar("c")
    X, W = pt.dmatrix("X"), pt.dmatrix("W")
    n = pt.lscalar("n")

    def loops():
        csum = _scan(lambda e, acc: acc + e, sequences=[x], outputs_info=[pt.zeros((), dtype="float64")])
        ar2 = _scan(lambda e, xm2, xm1, k: k[0] * xm2 + k[1] * xm1 + e, sequences=[eps],
                    outputs_info=[dict(initial=x0, taps=[-2, -1])], non_sequences=[a])
        from pytensor.scan.utils import until

        def newton(z, c):
            z_new = z - (z * z - c) / (2 * z)
            return z_new, until(pt.abs(z_new - z) < 1e-12)

        roots = _scan(newton, outputs_info=[pt.as_tensor_variable(np.float64(1.0))], non_sequences=[c], n_steps=40)
        ys = _scan(lambda xt, W: pt.tanh(W @ xt), sequences=[X], non_sequences=[W], n_steps=n)
        return [csum, ar2, ar2[-1], roots[-1], roots.shape[0], ys]

    return [case("scan", lambda: ([x, eps, x0, a, c, X, W, n], loops(),
                                  [r.normal(size=6), r.normal(size=9), np.array([0.5, -0.2]), np.array([-0.3, 0.6]),
                                   np.float64(5.0), r.normal(size=(5, 3)), r.normal(size=(2, 3)), np.int64(4)]))]


def _ifelses() -> list[Case]:
    """IfElse with several outputs, a branch that does work the other does not, and the gradient
    through it; once with each branch taken."""
    from pytensor.ifelse import ifelse

    r = rng(26)
    x, y, c = pt.dvector("x"), pt.dvector("y"), pt.dscalar("c")

    def branches():
        a, b = ifelse(c > 0, [pt.exp(x), x.sum()], [y * 2.0, pt.log(pt.abs(y)).sum()])
        g = pytensor.grad(ifelse(c > 0, (x ** 2).sum(), (x * y).sum()), x)
        return [a, b, g]

    values = [r.normal(size=5), r.normal(size=5)]
    return [case("ifelse_then", lambda: ([x, y, c], branches(), [*values, np.float64(1.5)])),
            case("ifelse_else", lambda: ([x, y, c], branches(), [*values, np.float64(-2.0)]))]


FAMILIES_V2 = {
    "linalg": _linalg_core,
    "linalg_batched_grad": _linalg_batched_and_grad,
    "advanced_indexing": _advanced_indexing,
    "sort_extra": _sort_extra,
    "scan": _scans,
    "ifelse": _ifelses,
}
