"""PyTensor ops the graph format lacks, which the exporter writes as subgraphs of ops kiln has
(kiln/export/lowered.py, and LOWERED_SCALAR_OPS in kiln/export/scalar.py): PermuteRowElements
(and inverse_permutation), Choose, Bartlett, TensorInv, Blockwise{Reshape} with a batched shape,
and the scalar ops GammaU, GammaL, J0, J1, Deg2Rad, Rad2Deg. test_export_ops.py compares them with PyTensor like
op_cases.py's: several dtypes, broadcasting, zero lengths, non-contiguous inputs, gradients."""
from __future__ import annotations

import numpy as np
import pytensor
import pytensor.tensor as pt
from pytensor.tensor.basic import choose, inverse_permutation, permute_row_elements
from pytensor.tensor.extra_ops import bartlett

from helpers import Case, case, rng

try:  # PyTensor 3.x
    from pytensor.tensor.linalg import tensorinv
except ImportError:  # 2.x
    from pytensor.tensor.nlinalg import tensorinv


def _perms(r, shape) -> np.ndarray:
    rows = [r.permutation(shape[-1]) for _ in range(int(np.prod(shape[:-1])))]
    return np.array(rows, dtype="int64").reshape(shape)


def _permute() -> list[Case]:
    r = rng(41)
    x = pt.dmatrix("x")
    x32 = pt.tensor("x_f32", dtype="float32", shape=(None, None, None))
    xi = pt.tensor("xi", dtype="int32", shape=(1, None))  # a leading axis broadcast against y's
    v = pt.dvector("v")
    y = pt.lvector("y")
    Y = pt.lmatrix("Y")
    Y8 = pt.tensor("Y8", dtype="uint8", shape=(None, None))
    e = pt.dmatrix("e")  # zero rows
    xv = r.normal(size=(5, 8))[:, ::2]  # non-contiguous
    x32v = r.normal(size=(2, 3, 4)).astype("float32").transpose(1, 0, 2).copy()[:, :, ::-1]
    xiv = np.arange(4, dtype="int32")[None, :] * 3
    vv = r.normal(size=4)
    yv = np.array([2, 0, 3, 1])
    Yv = _perms(r, (5, 4))[::-1]  # negative strides
    Y8v = _perms(r, (2, 4)).astype("uint8")

    def outs():
        return [permute_row_elements(x, y), permute_row_elements(x, Y), permute_row_elements(x, Y, inverse=True),
                permute_row_elements(v, Y), permute_row_elements(v, Y, inverse=True),
                permute_row_elements(x32, Y8), permute_row_elements(x32, Y8, inverse=True),
                permute_row_elements(xi, Y), permute_row_elements(xi, Y, inverse=True),
                permute_row_elements(x32, y, inverse=True), permute_row_elements(e, Y[:0]),
                # rows of run-time length 1 (not static): perform broadcasts y's row (and x's, inverse)
                permute_row_elements(x, Y[:, :1]), permute_row_elements(x[:, :1], Y, inverse=True),
                inverse_permutation(y), inverse_permutation(Y), inverse_permutation(Y8), inverse_permutation(y[:0]),
                pytensor.grad((permute_row_elements(x, Y) ** 2 * np.arange(4.0)).sum(), x),
                pytensor.grad((permute_row_elements(v, Y, inverse=True) * np.arange(20.0).reshape(5, 4)).sum(), v),
                pytensor.grad((permute_row_elements(x, y, inverse=True) ** 3).sum(), x)]

    return [case("permute_row_elements", lambda: ([x, x32, xi, v, y, Y, Y8, e], outs(),
                                                  [xv, x32v, xiv, vv, yv, Yv, Y8v, np.zeros((0, 4))]))]


def _choose() -> list[Case]:
    r = rng(42)
    a = pt.lmatrix("a")
    a8 = pt.tensor("a_u8", dtype="uint8", shape=(None,))
    a0 = pt.iscalar("a0")
    ab = pt.tensor("ab", dtype="bool", shape=(None, None))
    c = pt.dtensor3("c")
    c32 = pt.tensor("c_f32", dtype="float32", shape=(None, None))
    ci = pt.tensor("ci", dtype="int64", shape=(None, 1, None))
    av = np.array([[0, 2, 1], [1, 1, 0]])
    wild = pt.lmatrix("wild")
    wildv = np.array([[-1, 5, 2], [-7, 3, 0]])
    cv = r.normal(size=(3, 2, 3))[:, :, ::-1]  # non-contiguous
    c32v = r.normal(size=(3, 3)).astype("float32")
    civ = r.integers(-9, 9, size=(3, 1, 3))

    def outs():
        outs = []
        for mode in ("raise", "wrap", "clip"):
            outs += [choose(a, c, mode=mode), choose(a8, c32, mode=mode), choose(a0, c, mode=mode),
                     choose(a, ci, mode=mode), choose(a0, c32[:, 0], mode=mode), choose(a[:0], c[:, :1], mode=mode),
                     choose(ab, c32, mode=mode), choose(a[:, :, None], c[:, :1, :], mode=mode)]
        # a list of choices (MakeList): NumPy broadcasts them with each other, lengths 1 at run time too
        outs += [choose(a, [c[0], c[1, :1], c[2, :, :1]], mode="wrap"), choose(a8, [c32[0, :1], c32[1]], mode="clip")]
        return outs + [choose(wild, c, mode="wrap"), choose(wild, c32, mode="clip"), a.choose(c)]

    return [case("choose", lambda: ([a, a8, a0, ab, c, c32, ci, wild], outs(),
                                    [av, np.array([2, 0, 1], "uint8"), np.int32(1), np.array([[True, False, True]] * 2),
                                     cv, c32v, civ, wildv]))]


def _bartlett_tensorinv() -> list[Case]:
    r = rng(43)
    Ms = [pt.scalar(f"M{k}", dtype=dt) for k, dt in enumerate(("int64", "int64", "int8", "int32", "uint16", "int64"))]
    Mv = [np.int64(7), np.int64(1), np.int8(0), np.int32(-3), np.uint16(12), np.int64(2)]
    a = pt.dtensor4("a")
    a32 = pt.tensor("a_f32", dtype="float32", shape=(None, None, None))
    s = pt.dmatrix("s")
    av = (r.normal(size=(6, 6)) + 4 * np.eye(6)).reshape(2, 3, 6, 1)
    a32v = (r.normal(size=(24, 24)) + 8 * np.eye(24)).astype("float32").reshape(24, 8, 3)
    sv = (r.normal(size=(3, 3)) + 3 * np.eye(3)).T  # non-contiguous

    def outs():
        return [*(bartlett(M) for M in Ms), tensorinv(a), tensorinv(s, ind=1)]

    return [case("bartlett_tensorinv", lambda: ([*Ms, a, s], outs(), [*Mv, av, sv]), tol=dict(rtol=1e-9, atol=1e-11)),
            case("tensorinv_float32", lambda: ([a32], [tensorinv(a32, ind=1)], [a32v]))]


def _blockwise_reshape() -> list[Case]:
    from pytensor.graph.replace import vectorize_graph

    k = pt.lscalar("k")
    vec = pt.dvector("vec")
    mat = pt.dmatrix("mat")
    shapes = pt.lmatrix("shapes")
    shape = pt.as_tensor_variable([-1, k])
    out = pt.reshape(vec, shape)

    def outs():
        return [vectorize_graph(out, {shape: pt.stack([[-1, k], [k - 1, -1]], axis=0)}),
                vectorize_graph(out, {shape: shapes, vec: mat}),
                vectorize_graph(out, {shape: shapes}),
                pytensor.grad((vectorize_graph(out, {shape: shapes, vec: mat}) ** 2).sum(), mat)]

    return [case("blockwise_reshape", lambda: ([k, vec, mat, shapes], outs(),
                                               [np.int64(3), np.arange(6.0), np.arange(18.0).reshape(6, 3).T,
                                                np.array([[2, -1], [-1, 3], [2, 3]])]))]


def _scalars() -> list[Case]:
    r = rng(44)
    k, x = pt.dvector("k"), pt.dvector("x")
    k32, x32 = pt.fvector("k_f32"), pt.fvector("x_f32")
    ki = pt.ivector("ki")
    kv, xv = np.array([0.5, 1.0, 2.5, 7.0, 0.1]), np.array([0.2, 3.0, 2.5, 1.0, 10.0])
    zv = np.array([-12.0, -1.5, 0.0, 0.3, 2.4, 30.0])
    z = pt.dvector("z")
    z32 = pt.fvector("z_f32")
    zi = pt.tensor("zi", dtype="int16", shape=(None,))

    def outs():
        return [m.gammau(k, x), m.gammal(k, x), m.gammal(ki, x), m.gammau(k[:, None], x[None, ::-1]),
                m.j0(z), m.j1(z), m.j0(zi), m.j1(zi),
                m.j0(z) * m.j1(z) + pt.exp(z * 0.1),  # fused into a Composite by kiln.mode()
                pytensor.grad((m.j0(z) ** 2 + m.j1(z) * z).sum(), z),
                m.deg2rad(z), m.rad2deg(z), m.deg2rad(zi), m.rad2deg(zi), m.deg2rad(ki),
                pytensor.grad((m.deg2rad(z) * m.rad2deg(z) ** 2).sum(), z)]

    def outs32():
        return [m.gammau(k32, x32), m.gammal(k32, x32), m.gammau(ki, x32), m.j0(z32), m.j1(z32),
                pytensor.grad(m.j1(z32).sum(), z32), m.deg2rad(z32), m.rad2deg(z32)]

    m = pt.math
    values = dict(k=kv, x=xv, k32=kv.astype("float32"), x32=xv.astype("float32"), ki=np.array([1, 2, 3, 4, 5], "int32"),
                  z=zv, z32=zv.astype("float32"), zi=np.array([-3, 0, 1, 7], "int16"))
    return [case("special_scalars", lambda: ([k, x, ki, z, zi], outs(), [values[n] for n in ("k", "x", "ki", "z", "zi")]),
                 tol=dict(rtol=1e-10, atol=1e-13)),
            case("special_scalars_float32", lambda: ([k32, x32, ki, z32], outs32(),
                                                     [values[n] for n in ("k32", "x32", "ki", "z32")]))]


FAMILIES_LOWERED = {
    "lowered_permute": _permute,
    "lowered_choose": _choose,
    "lowered_bartlett_tensorinv": _bartlett_tensorinv,
    "lowered_blockwise_reshape": _blockwise_reshape,
    "lowered_scalars": _scalars,
}
