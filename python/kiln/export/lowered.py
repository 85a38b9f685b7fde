"""PyTensor ops the graph format does not have, written as PyTensor subgraphs of ops it has.

Each handler builds, from the node's own inputs, a PyTensor expression of ops kiln implements
(indexing, ARange, Elemwise, Reshape, MatrixInverse, CheckAndRaise, ...) that computes what the
op's perform() computes, and writes that subgraph in the node's place. Being ordinary graph
ops, the pieces also give kiln's own differentiation of the exported graph something to
differentiate. Errors perform() raises for bad run-time values are CheckAndRaise nodes raising
the same exception class; what cannot be reproduced is refused (Unsupported) with the reason.
The scalar ops of the same kind (GammaU, J0, ...) are in scalar.py (LOWERED_SCALAR_OPS).
"""
from __future__ import annotations

from .entries import Func
from .writer import Unsupported, Writer


def _write_subgraph(w: Writer, node, outputs, inputs=()) -> None:
    """Writes the nodes between node.inputs (and `inputs`, other variables already written) and
    `outputs` and makes them the node's outputs."""
    from .compat import io_toposort
    from .walk import write_nodes

    outputs = [_fit(o, out) for o, out in zip(outputs, node.outputs)]
    write_nodes(w, io_toposort([*node.inputs, *inputs], outputs))
    for out, new in zip(node.outputs, outputs):
        w.alias(out, new)


def _fit(var, like):
    """`var` with `like`'s dtype, and `like`'s static lengths where `var` has none (so consumers
    see the types PyTensor gave them). A static length `var` knows and `like` contradicts is
    kept: PyTensor's type is the wrong one then (TensorInv says its input's shape)."""
    import pytensor.tensor as pt

    if var.type.dtype != like.type.dtype:
        var = pt.cast(var, like.type.dtype)
    if var.type.ndim != like.type.ndim:
        raise Unsupported(f"internal: lowered {like} has rank {var.type.ndim}")
    if any(s is None and t is not None for s, t in zip(var.type.shape, like.type.shape)):
        var = pt.specify_shape(var, [s if s is not None else t for s, t in zip(var.type.shape, like.type.shape)])
    return var


def _check(value, message: str, *conds):
    """value, after checking conds (0-d booleans) at run time, raising ValueError(message) as
    NumPy does; no node when there is nothing to check."""
    from pytensor.raise_op import CheckAndRaise

    return CheckAndRaise(ValueError, message)(value, *conds) if conds else value


def _broadcast_to(x, shape):
    """np.broadcast_to(x, shape), where a length of 1 at run time broadcasts too (PyTensor's Alloc,
    what pt.broadcast_to gives, and kiln's refuse that unless the length is statically 1): a
    gather x[arange(L0) % l0, arange(L1) % l1, ...] of outer-product indices. The caller has
    checked that each length l is 1 or L."""
    import pytensor.tensor as pt

    d = len(shape)
    x = pt.shape_padleft(x, d - x.type.ndim) if x.type.ndim < d else x
    if all(s == 1 for s in x.type.shape):
        return pt.broadcast_to(x, shape)
    index = [(pt.arange(shape[k], dtype="int64") % pt.maximum(x.shape[k], 1)).dimshuffle(
        *["x" if j != k else 0 for j in range(d)]) for k in range(d)]
    return x[tuple(index)] if d > 1 else x[index[0]]


def _index_along(length, axis: int, ndim: int, static_one: bool):
    """arange(length) as an index array along `axis` of `ndim` axes (length 1 elsewhere); a
    constant [0] when the length is statically 1, so the index's static shape says so."""
    import numpy as np
    import pytensor.tensor as pt

    ar = pt.constant(np.zeros(1, "int64")) if static_one else pt.arange(length, dtype="int64")
    return ar.dimshuffle(*["x" if k != axis else 0 for k in range(ndim)])


# --- PermuteRowElements -----------------------------------------------------------------------------


def _permute_row_elements(w: Writer, node) -> None:
    """out[..., j] = x[..., y[..., j]] (inverse: out[..., y[..., j]] = x[..., j]) with x and y's
    leading axes broadcast: a gather (AdvancedSubtensor) or a scatter into zeros
    (AdvancedIncSubtensor, set) over arange indices of the leading axes. make_node already
    padded x and y to one rank. perform() broadcasts a leading axis only where its static length
    is 1 and raises ValueError otherwise: the equal-length checks say the same."""
    import pytensor.tensor as pt

    x, y = node.inputs
    d = x.type.ndim
    if d == 0:
        raise Unsupported("PermuteRowElements of 0-d tensors (PyTensor's perform fails on every call)")
    xs, ys = x.type.shape, y.type.shape
    conds = [pt.eq(x.shape[k], y.shape[k]) for k in range(d - 1) if xs[k] != 1 and ys[k] != 1]
    n, m = x.shape[-1], y.shape[-1]
    row_known = xs[-1] == 1 or (xs[-1] is not None and xs[-1] == ys[-1])
    inverse = node.op.inverse
    if not row_known and not (ys[-1] == 1 and not inverse):
        # The row itself: perform's out[:] = x[y] broadcasts a y row of length 1 over x's row;
        # out[y] = x[:] (inverse) takes an x row of length 1 (or as long as y's) only.
        ok = pt.or_(pt.eq(n, m), pt.eq(n, 1))
        conds.append(ok if inverse else pt.or_(ok, pt.eq(m, 1)))
    if conds:  # checked before anything is computed from x, as perform() does
        x = _check(x, "PermuteRowElements: dimension mismatch between x and y",
                   pt.all(pt.stack(conds)) if len(conds) > 1 else conds[0])
    y64 = pt.cast(y, "int64") if y.type.dtype != "int64" else y
    if not inverse:
        lead = [_index_along(x.shape[k], k, d, xs[k] == 1) for k in range(d - 1)]
        out = x[(*lead, y64)] if d > 1 else x[y64]
        if not row_known:
            length = n if ys[-1] == 1 else pt.switch(pt.eq(m, 1), n, m)
            out = _broadcast_to(out, [*[out.shape[k] for k in range(d - 1)], length])
    else:
        shape = [y.shape[k] if xs[k] == 1 else x.shape[k] for k in range(d - 1)] + [m]
        lead = [_index_along(shape[k], k, d, xs[k] == 1 and ys[k] == 1) for k in range(d - 1)]
        zeros = pt.zeros(shape, dtype=x.type.dtype)
        out = pt.set_subtensor(zeros[(*lead, y64)] if d > 1 else zeros[y64], _broadcast_to(x, shape))
    _write_subgraph(w, node, [out])


# --- Choose -------------------------------------------------------------------------------------------


def _choose(w: Writer, node) -> None:
    """np.choose(a, choices, mode): choices[a', j1, ..., jk] with a' the checked (raise),
    wrapped (a mod N) or clipped index and j the aranges of the choices' own axes, all broadcast
    as NumPy broadcasts a with choices[0]. NumPy's ValueErrors (no choices; an entry out of
    range under mode="raise") are CheckAndRaise nodes."""
    import pytensor.tensor as pt
    from pytensor.tensor.type import TensorType

    a, c = node.inputs
    items = ()
    if not isinstance(c.type, TensorType):
        # A list of choices (make_node's MakeList when choose() is given a list): NumPy broadcasts
        # them with each other, so they are the stack of the broadcast items.
        if c.owner is None or type(c.owner.op).__name__ != "MakeList":
            raise Unsupported("Choose over a typed list that is not a MakeList of tensors: kiln has no typed lists")
        items = c.owner.inputs
        shape, conds = _numpy_broadcast_shape(items)
        c = pt.stack([_broadcast_to(_check(i, "shape mismatch: objects cannot be broadcast to a single shape",
                                             *conds), shape) for i in items])
    mode = node.op.mode
    r = max(a.type.ndim, c.type.ndim - 1)
    N = c.shape[0]
    # NumPy's first check (before a mod by zero could happen): there are choices at all.
    ai = _check(pt.cast(a, "int64"), "0-length sequence.", pt.gt(N, 0))
    if mode == "wrap":
        ai = pt.mod(ai, N)
    elif mode == "clip":
        ai = pt.clip(ai, 0, N - 1)
    if a.type.ndim < r:
        ai = pt.shape_padleft(ai, r - a.type.ndim)
    first = r - (c.type.ndim - 1)
    axes = [_index_along(c.shape[k], first + k - 1, r, c.type.shape[k] == 1) for k in range(1, c.type.ndim)]
    if mode == "raise":
        ok = pt.all(pt.and_(pt.ge(ai, 0), pt.lt(ai, N)))
        ai = _check(ai, "invalid entry in choice array", ok)
    out = c[(ai, *axes)]
    _write_subgraph(w, node, [out], inputs=items)


def _numpy_broadcast_shape(variables):
    """NumPy's broadcast shape of `variables` (a length of 1 at run time broadcasts, unlike
    PyTensor's broadcast_shape), and the conditions under which it exists."""
    import pytensor.tensor as pt

    ndim = max(v.type.ndim for v in variables)
    shape, conds = [], []
    for k in range(ndim):
        lengths = [v.shape[v.type.ndim - ndim + k] for v in variables if v.type.ndim - ndim + k >= 0
                   and v.type.shape[v.type.ndim - ndim + k] != 1]
        if not lengths:
            shape.append(1)
            continue
        length = lengths[0]
        for other in lengths[1:]:
            length = pt.switch(pt.eq(length, 1), other, length)
        conds += [pt.or_(pt.eq(n, 1), pt.eq(n, length)) for n in lengths[1:] + lengths[:1]] if len(lengths) > 1 else []
        shape.append(length)
    return shape, conds


def _make_list(w: Writer, node) -> None:
    """A typed list has no format equivalent: Choose reads a MakeList's items itself (above), so
    the list gets an id only for the walk's bookkeeping; any other use of it is refused where it
    is used (or declared as a graph output)."""
    for out in node.outputs:
        w.ids[out] = w.shared.fresh("list")


# --- Bartlett -------------------------------------------------------------------------------------------


def _bartlett(w: Writer, node) -> None:
    """np.bartlett(M): n = arange(1 - M, M, 2); 1 - |n| / (M - 1), which is bit for bit NumPy's
    where(n <= 0, 1 + n/(M-1), 1 - n/(M-1)); M - 1 is taken at least 1 so that M = 1 gives [1.]
    (NumPy's special case); M < 1 gives an empty arange. In int64, as NumPy's int arange."""
    import pytensor.tensor as pt

    M = pt.cast(node.inputs[0], "int64")
    n = pt.arange(1 - M, M, 2, dtype="int64")
    out = 1.0 - pt.cast(pt.abs(n), "float64") / pt.cast(pt.maximum(M - 1, 1), "float64")
    _write_subgraph(w, node, [out])


# --- TensorInv ------------------------------------------------------------------------------------------


def _tensor_inv(w: Writer, node) -> None:
    """np.linalg.tensorinv(a, ind): inv(a.reshape(prod(a.shape[ind:]), -1)) reshaped to
    a.shape[ind:] + a.shape[:ind] (MatrixInverse raises for a singular or non-square matrix)."""
    import pytensor.tensor as pt
    from pytensor.tensor.linalg import inv

    (a,) = node.inputs
    ind = int(node.op.ind)
    if ind <= 0:
        raise Unsupported(f"TensorInv with ind={ind}: NumPy raises ValueError('Invalid ind argument.') on every call")
    if not a.type.dtype.startswith("float"):
        raise Unsupported(f"TensorInv of {a.type.dtype}: PyTensor's output type says {a.type.dtype} where NumPy "
                          "returns float64")
    d = a.type.ndim
    rows = pt.constant(1, dtype="int64")
    for k in range(ind, d):
        rows = rows * a.shape[k]
    square = pt.reshape(a, pt.stack([rows, pt.constant(-1, dtype="int64")]), ndim=2)
    out = pt.reshape(inv(square), [a.shape[k] for k in [*range(ind, d), *range(min(ind, d))]], ndim=d)
    _write_subgraph(w, node, [out])


# --- Blockwise{Reshape} ---------------------------------------------------------------------------


def blockwise_reshape(w: Writer, node) -> None:
    """A Blockwise over Reshape{ndim} with a batched shape (PyTensor's vectorize rule keeps one
    Reshape when only x is batched). Blockwise reshapes x[b] to shape[b] for every batch index b
    and stacks the results, so they must all have one shape: every row, its -1 resolved against
    x's core size as np.reshape does, equals the first. Then it is one Reshape of x broadcast to
    the batch shape, to batch shape + that row. Checked as Blockwise and NumPy check: no
    run-time broadcasting of a batch axis not statically 1, rows NumPy can reshape to (at most
    one -1, no other negative length, a -1 beside no zero length), and no empty batch (Blockwise
    raises NotImplementedError there)."""
    import pytensor.tensor as pt

    x, shp = node.inputs
    ndim = int(node.op.core_op.ndim)
    B = node.outputs[0].type.ndim - ndim
    core_x = [x.shape[k] for k in range(B, x.type.ndim)]
    batch, conds = [], []
    for k in range(B):
        free = [v.shape[k] for v in (x, shp) if v.type.shape[k] != 1]
        length = free[0] if len(free) == 1 else (pt.maximum(*free) if free else pt.constant(1, dtype="int64"))
        conds += [pt.eq(f, length) for f in free]
        batch.append(length)
    size = pt.constant(1, dtype="int64")
    for c in core_x:
        size = size * c
    rows = pt.cast(shp, "int64")
    unknown = pt.eq(rows, -1)
    known = pt.prod(pt.switch(unknown, 1, rows), axis=-1, keepdims=True)
    n_unknown = pt.sum(unknown, axis=-1)
    conds += [pt.all(pt.le(n_unknown, 1)), pt.all(pt.ge(rows, -1)),
              pt.all(pt.or_(pt.eq(n_unknown, 0), pt.neq(known[..., 0], 0)))]
    resolved = pt.switch(unknown, size // pt.maximum(known, 1), rows)
    conds.append(pt.all(pt.eq(pt.prod(resolved, axis=-1), size)))  # np.reshape's size check, every row
    n_batch = pt.constant(1, dtype="int64")
    for b in batch:
        n_batch = n_batch * b
    resolved = _check(resolved, "Blockwise{Reshape}: incompatible batch shapes or shapes to reshape to",
                      pt.all(pt.stack(conds)))
    from pytensor.raise_op import CheckAndRaise

    resolved = CheckAndRaise(NotImplementedError, "vectorize with zero size not implemented")(
        resolved, pt.gt(n_batch, 0))
    first = pt.reshape(resolved, (-1, ndim), ndim=2)[0]
    same = pt.all(pt.eq(resolved, first))
    first = _check(first, "Blockwise{Reshape}: the batch's reshapes give different shapes", same)
    xb = pt.broadcast_to(x, [*batch, *core_x]) if any(x.type.shape[k] == 1 for k in range(B)) else x
    out = pt.reshape(xb, pt.concatenate([pt.stack(batch), first]) if B else first, ndim=B + ndim)
    _write_subgraph(w, node, [out])


LOWERED_OPS = {
    "PermuteRowElements": Func(_permute_row_elements),
    "Choose": Func(_choose),
    "MakeList": Func(_make_list),
    "Bartlett": Func(_bartlett),
    "TensorInv": Func(_tensor_inv),
}
