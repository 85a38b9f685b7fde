"""PyTensor graphs covering every op family kiln implements, grouped by family. Each family
becomes one kiln library; test_export_ops.py compares it with PyTensor."""
from __future__ import annotations

import numpy as np
import pytensor
import pytensor.scalar as ps
import pytensor.tensor as pt
from pytensor.tensor.elemwise import Elemwise

from helpers import Case, case, rng


def _elemwise() -> list[Case]:
    r = rng(1)
    cases = []
    x = pt.dmatrix("x")
    xv = r.uniform(0.1, 2.0, (3, 4))
    unary = [pt.exp, pt.exp2, pt.expm1, pt.log, pt.log2, pt.log10, pt.log1p, pt.sqrt, pt.sqr, pt.reciprocal,
             pt.sin, pt.cos, pt.tan, pt.arctan, pt.sinh, pt.cosh, pt.tanh, pt.arcsinh, pt.sigmoid, pt.softplus,
             pt.erf, pt.erfc, pt.erfcx, pt.gamma, pt.gammaln, pt.psi, pt.floor, pt.ceil, pt.trunc, pt.abs, pt.neg,
             pt.sign, pt.isnan, pt.isinf]
    cases.append(case("unary_f64", lambda: ([x], [f(x) for f in unary], [xv])))
    u = pt.dvector("u")
    cases.append(case("unary_domain", lambda: (
        [u], [pt.arcsin(u), pt.arccos(u), pt.arctanh(u), pt.erfinv(u), pt.log1mexp(-u - 0.5),
              pt.arccosh(u + 2), pt.round(u * 5, "half_to_even"), pt.round(u * 5, "half_away_from_zero")],
        [np.array([-0.9, -0.5, 0.0, 0.25, 0.5, 0.9])])))
    f = pt.fmatrix("f")
    cases.append(case("unary_f32", lambda: ([f], [pt.exp(f), pt.log1p(f), pt.sigmoid(f), pt.tanh(f) * 2 + 1],
                                             [r.uniform(0.1, 2, (2, 5)).astype("float32")])))
    i8, i32 = pt.bvector("i8"), pt.ivector("i32")
    cases.append(case("int_to_float", lambda: ([i8, i32], [pt.exp(i8), pt.sqrt(i32), i8 / i8, i32 / 2],
                                                [np.array([1, 2, 3], "int8"), np.array([4, 9, 16], "int32")])))
    a, b = pt.dmatrix("a"), pt.drow("b")
    av, bv = r.normal(size=(3, 4)), r.normal(size=(1, 4))
    binary = [a + b, a - b, a * b, a / b, a ** 2, pt.maximum(a, b), pt.minimum(a, b), pt.arctan2(a, b),
              a > b, a >= b, a < b, a <= b, pt.eq(a, b), pt.neq(a, b), pt.switch(a > 0, a, b), pt.clip(a, -0.5, 0.5),
              a // 0.7, a % 0.7, pt.add(a, b, a), pt.mul(a, b, 2.0)]
    cases.append(case("binary_broadcast", lambda: ([a, b], binary, [av, bv])))
    m, n = pt.lvector("m"), pt.lvector("n")
    mv, nv = np.array([-7, -3, 0, 5, 9]), np.array([2, -3, 4, 3, -2])
    cases.append(case("integer", lambda: ([m, n], [m // n, m % n, m * n, m - n, pt.bitwise_and(m, n), m | n, m ^ n,
                                                   ~m, pt.cast(m, "float32"), pt.cast(m > 0, "int8"), m ** 2],
                                          [mv, nv])))
    p, q = pt.bvector("p"), pt.bvector("q")
    cases.append(case("bool", lambda: ([p, q], [pt.and_(p > 0, q > 0), pt.or_(p > 0, q > 0), pt.xor(p > 0, q > 0),
                                               pt.invert(p > 0), pt.cast(p > 0, "float64")],
                                       [np.array([1, 0, 1, 0], "int8"), np.array([1, 1, 0, 0], "int8")])))
    s = pt.dscalar("s")
    cases.append(case("scalar_0d", lambda: ([s, x], [s * 2 + 1, x + s, pt.exp(s)], [np.array(0.3), xv])))
    # A Composite built by hand (what PyTensor's fusion makes), nested one level.
    i0, i1 = ps.float64("i0"), ps.float64("i1")
    inner = ps.Composite([i0, i1], [ps.log1p(ps.exp(i0)) * i1])
    j0, j1 = ps.float64("j0"), ps.float64("j1")
    outer = ps.Composite([j0, j1], [inner(j0, j1) + ps.sqr(j1), ps.switch(ps.gt(j0, 0.0), j0, j1)])
    c1, c2 = pt.dvector("c1"), pt.dvector("c2")
    cases.append(case("composite", lambda: ([c1, c2], Elemwise(outer)(c1, c2),
                                            [r.normal(size=7), r.normal(size=7)])))
    return cases


def _shape_ops() -> list[Case]:
    r = rng(2)
    x = pt.tensor3("x", dtype="float64")
    xv = r.normal(size=(2, 3, 4))
    k = pt.lscalar("k")
    cases = [
        case("dimshuffle", lambda: ([x], [x.transpose(2, 0, 1), x.dimshuffle(0, "x", 1, 2), x[:, None].sum(1),
                                          x.T, pt.expand_dims(x, 0)], [xv])),
        case("reshape", lambda: ([x, k], [x.reshape((6, 4)), x.reshape((k, -1)), x.flatten(), x.reshape((2, 12)).T,
                                          pt.specify_shape(x, (2, None, 4)) * 2], [xv, np.array(3)])),
        case("shape", lambda: ([x], [x.shape, x.shape[1], x.size, pt.squeeze(x[:, :1, :])], [xv])),
    ]
    return cases


def _reductions() -> list[Case]:
    r = rng(3)
    x = pt.dtensor3("x")
    xv = r.normal(size=(2, 3, 4))
    b = pt.bmatrix("b")
    bv = r.integers(-100, 100, (3, 5)).astype("int8")
    f = pt.fmatrix("f")
    fv = r.normal(size=(4, 5)).astype("float32")
    return [
        case("sum_prod", lambda: ([x], [x.sum(), x.sum(axis=1), x.sum(axis=(0, 2)), x.prod(axis=2), x.mean(axis=0),
                                        x.var(axis=1), x.std()], [xv])),
        case("max_min", lambda: ([x], [x.max(), x.max(axis=0), x.min(axis=(1, 2)), pt.argmax(x, axis=1),
                                       pt.argmax(x), pt.argmin(x, axis=2)], [xv])),
        case("all_any", lambda: ([x], [pt.all(x > 0, axis=1), pt.any(x > 1), pt.all(x > -10)], [xv])),
        case("int_sums", lambda: ([b], [b.sum(), b.sum(axis=0), b.prod(axis=1), b.max(axis=1), b.sum(dtype="int8")],
                                  [bv])),
        case("float32_sums", lambda: ([f], [f.sum(axis=1), f.mean(), f.max(axis=0)], [fv])),
        case("logsumexp", lambda: ([x], [pt.logsumexp(x, axis=2), pt.logsumexp(x)], [xv])),
    ]


def _cumulative_softmax() -> list[Case]:
    r = rng(4)
    x = pt.dmatrix("x")
    xv = r.normal(size=(3, 5))
    i = pt.lvector("i")
    return [
        case("cumsum", lambda: ([x, i], [pt.cumsum(x, axis=0), pt.cumsum(x, axis=1), pt.cumprod(x, axis=1),
                                         pt.cumsum(x), pt.cumsum(i)], [xv, np.array([3, -1, 4, 1, -5])])),
        case("softmax", lambda: ([x], [pt.special.softmax(x, axis=1), pt.special.softmax(x, axis=0),
                                       pt.special.log_softmax(x, axis=1), pt.special.softmax(x, axis=None)], [xv])),
        case("softmax_grad", lambda: ([x], [pytensor.grad((pt.special.softmax(x, axis=1)[:, 0] ** 2).sum(), x)],
                                      [xv])),
    ]


def _indexing() -> list[Case]:
    r = rng(5)
    x = pt.dmatrix("x")
    xv = r.normal(size=(5, 4))
    v = pt.dvector("v")
    vv = r.normal(size=6)
    i, j = pt.lscalar("i"), pt.lscalar("j")
    idx = pt.lvector("idx")
    idxv = np.array([0, 3, -1, 3, 2])
    y = pt.dvector("y")
    return [
        case("basic", lambda: ([x, i, j, v], [x[1], x[-1, 2], x[1:4], x[::-1], x[1:, ::2], x[i:j], x[:, i], x[i, j],
                                           x[-3:-1, ::-2], x[::2, 1:3], v[i:]], [xv, np.array(1), np.array(3), vv])),
        case("inc_set", lambda: ([x, v, i], [pt.set_subtensor(x[1:3, 0], 7.0), pt.inc_subtensor(x[:, 1:], 1.5),
                                             pt.set_subtensor(v[i], -1.0), pt.inc_subtensor(x[i], v[:4]),
                                             pt.set_subtensor(x[::-2, ::2], 0.0)], [xv, vv, np.array(2)])),
        case("advanced1", lambda: ([x, v, idx], [v[idx], x[idx], v[idx] * 2 + 1, x[idx].sum(axis=1)],
                                   [xv, vv, idxv])),
        case("advanced_inc1", lambda: ([v, idx, y], [pt.inc_subtensor(v[idx], y), pt.set_subtensor(v[idx], y),
                                                     pt.inc_subtensor(v[idx], 1.0)],
                                       [vv, idxv, r.normal(size=5)])),
        case("advanced_grad", lambda: ([v, idx], [pytensor.grad((v[idx] ** 2).sum(), v)], [vv, idxv])),
    ]


def _products() -> list[Case]:
    r = rng(6)
    A, B = pt.dmatrix("A"), pt.dmatrix("B")
    x, y = pt.dvector("x"), pt.dvector("y")
    Av, Bv = r.normal(size=(4, 3)), r.normal(size=(3, 5))
    xv, yv = r.normal(size=3), r.normal(size=4)
    F = pt.fmatrix("F")
    Fv = r.normal(size=(3, 3)).astype("float32")
    T3, U3 = pt.dtensor3("T3"), pt.dtensor3("U3")
    return [
        case("dot", lambda: ([A, B, x, y], [pt.dot(A, B), pt.dot(A, x), pt.dot(y, A), pt.dot(x, x), A @ B,
                                            2.0 * pt.dot(A, x) + 0.5 * y, pt.outer(y, x) + A,
                                            pt.dot(A, B).T @ y], [Av, Bv, xv, yv])),
        case("dot_f32", lambda: ([F], [pt.dot(F, F), pt.dot(F, F[0])], [Fv])),
        case("batched", lambda: ([T3, U3], [pt.matmul(T3, U3), pt.batched_dot(T3, U3)],
                                 [r.normal(size=(2, 3, 4)), r.normal(size=(2, 4, 2))])),
    ]


def _build_ops() -> list[Case]:
    r = rng(7)
    x, y = pt.dmatrix("x"), pt.dmatrix("y")
    xv, yv = r.normal(size=(2, 3)), r.normal(size=(4, 3))
    v = pt.dvector("v")
    vv = r.normal(size=4)
    n = pt.lscalar("n")
    s = pt.dscalar("s")
    return [
        case("join_split", lambda: ([x, y, v], [pt.concatenate([x, y], axis=0), pt.concatenate([x, x], axis=1),
                                                pt.stack([v, v * 2]), *pt.split(v, [1, 3], n_splits=2),
                                                pt.join(0, v, v[:2])], [xv, yv, vv])),
        case("alloc", lambda: ([n, s, v], [pt.zeros((n, 2)), pt.ones((3,)), pt.full((2, n), s),
                                           pt.alloc(v, 3, 4), pt.zeros_like(v), pt.ones_like(v, dtype="int32")],
                               [np.array(3), np.array(1.5), vv])),
        case("ranges", lambda: ([n], [pt.arange(n), pt.arange(1, n, 2), pt.arange(0.5, n, 0.25), pt.eye(n),
                                      pt.eye(n, 4, 1), pt.tri(n, n, -1), pt.tril(pt.ones((n, n))),
                                      pt.triu(pt.ones((n, n)), 1)], [np.array(5)])),
        case("diag", lambda: ([x, v], [pt.diagonal(x), pt.diagonal(x, offset=1), pt.trace(pt.outer(v, v))],
                              [xv, vv])),
        case("alloc_diag", lambda: ([v], [pt.diag(v), pt.diag(v, k=1)], [vv])),
        case("make_vector", lambda: ([s, n], [pt.stack([s, s * 2, s + 1]), pt.as_tensor([n, n + 1])],
                                     [np.array(2.5), np.array(4)])),
    ]


def _checks() -> list[Case]:
    from pytensor.raise_op import Assert, CheckAndRaise

    v = pt.dvector("v")
    return [
        case("assert_pass", lambda: ([v], [Assert("v must be positive")(v, pt.all(v > 0)) * 2,
                                           CheckAndRaise(ValueError, "bad")(v, pt.all(v < 10))],
                                     [np.array([1.0, 2.0])])),
    ]


FAMILIES = {
    "elemwise": _elemwise,
    "shape": _shape_ops,
    "reductions": _reductions,
    "cumulative_softmax": _cumulative_softmax,
    "indexing": _indexing,
    "products": _products,
    "build": _build_ops,
    "checks": _checks,
}
