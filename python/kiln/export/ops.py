"""The op table: how each PyTensor op is written in the graph format.

OP_TABLE maps a PyTensor Op class name to its entry. Most entries are `Same(props...)`: the
format names the op as PyTensor does and copies the listed props (in-place and check props
are left out: kiln plans memory itself and always checks). The rest are small functions for
ops whose inputs or props need rewriting into the format's form (Subtensor's idx_list, 3.x
`Join{axis}`, NoneConst lengths of SpecifyShape, ...).

KILN_LACKS lists the format's ops kiln does not implement yet: the exporter refuses them
(naming every such node) unless asked to write them anyway. When kiln gains an op, remove it
from KILN_LACKS; when PyTensor has an op the table does not know, add one entry.
"""
from __future__ import annotations

from .entries import Entry, Func, Same
from .indexing import INDEXING_OPS
from .lowered import LOWERED_OPS, blockwise_reshape
from .scalar import ScalarSpeller, spell_scalar_op
from .writer import Unsupported, Writer

#: The format's ops (version 1 and 2) that kiln does not implement yet.
KILN_LACKS: set[str] = set()

#: Linear-algebra ops: kiln loops each of them as a Blockwise core (generator/ops/linalg/, LinalgOp).
LINALG_OPS = {
    "Cholesky", "Solve", "SolveTriangular", "CholeskySolve", "LU", "LUFactor", "PivotToPermutations", "QR",
    "MatrixInverse", "MatrixPinv", "Det", "SLogDet", "Expm", "Eig", "Eigh", "Eigvalsh", "SVD", "KroneckerProduct",
    "BlockDiagonal",
}

#: Core ops kiln's Blockwise loops (generator/ops/blockwise.cpp, check_core()).
KILN_BLOCKWISE_CORES = {"Dot", "Dot22"} | LINALG_OPS
#: Core ops kiln's loader batches by their own vectorize rule (blockwise_by_vectorize): PyTensor
#: leaves Blockwise over them where its rules give up (batched indices, unlike batch patterns).
KILN_VECTORIZED_CORES = {"Subtensor", "IncSubtensor", "AdvancedSubtensor", "AdvancedIncSubtensor", "Join", "Scan"}


def _number(value) -> float:
    """A prop that must be a finite number (GradClip's bounds, GradScale's multiplier): a
    symbolic or array multiplier is not in the graph format."""
    import numpy as np

    if isinstance(value, (int, float, np.number)) and np.isfinite(value):
        return float(value)
    if isinstance(value, np.ndarray) and value.ndim == 0 and np.isfinite(value):
        return float(value)
    raise Unsupported(f"a number (the graph format keeps it as a prop), not {type(value).__name__} {value!r}")


def _axes(axis):
    return None if axis is None else [int(a) for a in axis]


# --- elementwise, reductions ----------------------------------------------------------------------


def _dtypes(variables) -> list[str]:
    return [str(v.type.dtype) for v in variables]


def _elemwise(w: Writer, node) -> None:
    w.emit(node, "Elemwise", {"scalar_op": spell_scalar_op(w, node.op.scalar_op, _dtypes(node.inputs))})


def _scalar_apply(w: Writer, node) -> None:
    """A scalar op applied outside an Elemwise (index arithmetic): an Elemwise on 0-d tensors."""
    w.emit(node, "Elemwise", {"scalar_op": spell_scalar_op(w, node.op, _dtypes(node.inputs))})


def _careduce(w: Writer, node) -> None:
    op = node.op
    cls = type(op).__name__
    props: dict = {"axis": _axes(op.axis)}
    if cls in ("Sum", "Prod", "ProdWithoutZeros", "CAReduce"):
        if getattr(op, "dtype", None):
            props["dtype"] = str(op.dtype)
        if getattr(op, "acc_dtype", None):
            props["acc_dtype"] = str(op.acc_dtype)
    if cls == "CAReduce":
        speller = ScalarSpeller(w)
        props = {"scalar_op": speller.spell(op.scalar_op), **props}
        speller.check()
    w.emit(node, cls, props)


def _softmax(w: Writer, node) -> None:
    """2.x: axis int or None; 3.x: a tuple (an OpFromGraph then, inlined when kiln's one-axis
    Softmax cannot say it)."""
    axis = node.op.axis
    ndim = node.inputs[0].type.ndim
    if isinstance(axis, (tuple, list)):
        axes = sorted(int(a) % max(ndim, 1) for a in axis)
        if len(axes) == 1:
            axis = axes[0]
        elif axes == list(range(ndim)):
            axis = None
        else:
            return _opfromgraph(w, node, why=f"{type(node.op).__name__} over axes {axes}")
    w.emit(node, type(node.op).__name__, {"axis": None if axis is None else int(axis)})


def _cumop(w: Writer, node) -> None:
    axis = node.op.axis
    w.emit(node, "CumOp", {"axis": None if axis is None else int(axis), "mode": str(node.op.mode)})


# --- shapes, joins, allocation ------------------------------------------------------------------------


def _join(w: Writer, node) -> None:
    """3.x Join{axis} (tensors only) becomes the v1 Join with a constant axis input."""
    axis = getattr(node.op, "axis", None)
    if axis is None:
        w.emit(node, "Join")
    else:
        w.emit(node, "Join", inputs=[w.constant(int(axis), "int64"), *node.inputs])


def _join_spell(w: Writer, op) -> tuple[str, dict]:
    if getattr(op, "axis", None) is not None:
        raise Unsupported("Join{axis} (PyTensor 3.1+) cannot be a Blockwise core op in the graph format")
    return "Join", {}


def _split(w: Writer, node) -> None:
    """3.x Split{len_splits, axis} with inputs (x, splits) becomes v1's (x, axis, splits)."""
    axis = getattr(node.op, "axis", None)
    props = {"len_splits": int(node.op.len_splits)}
    if axis is None:
        w.emit(node, "Split", props)
    else:
        x, splits = node.inputs
        w.emit(node, "Split", props, inputs=[x, w.constant(int(axis), "int64"), splits])


def _specify_shape(w: Writer, node) -> None:
    """A NoneConst length (unchecked) is the constant -1 in v1."""
    x, *dims = node.inputs
    ins = [x] + [w.constant(-1, "int64") if type(d.type).__name__ == "NoneTypeT" else d for d in dims]
    w.emit(node, "SpecifyShape", inputs=ins)


def _check_and_raise(w: Writer, node) -> None:
    """CheckAndRaise, Assert and their subclasses (PyMC's CheckParameterValue raising
    ParameterValueError): the check, its message and the exception's class name."""
    op = node.op
    exc = getattr(op, "exc_type", AssertionError)
    props = {"msg": str(op.msg), "exc_type": exc.__name__ if isinstance(exc, type) else str(exc)}
    w.emit(node, "Assert" if type(op).__name__ == "Assert" else "CheckAndRaise", props)


def _alloc_diag(w: Writer, node) -> None:
    """PyTensor's AllocDiag is an OpFromGraph with axis1, axis2, offset attributes."""
    op = node.op
    props = {"offset": int(op.offset), "axis1": int(op.axis1), "axis2": int(op.axis2)}
    w.emit(node, "AllocDiag", props)


def _identity(w: Writer, node) -> None:
    """Ops that only change how PyTensor sees a value (views, copies, scalar<->0-d tensor)."""
    for out, inp in zip(node.outputs, node.inputs):
        w.alias(out, inp)


# --- products ---------------------------------------------------------------------------------------


def _blockwise_batch_ndim(node) -> int:
    """How many batch dimensions a Blockwise node loops (its first output's rank beyond the core)."""
    core_out_ndim = len(node.op.outputs_sig[0]) if hasattr(node.op, "outputs_sig") else None
    if core_out_ndim is None:
        from pytensor.tensor.utils import _parse_gufunc_signature

        core_out_ndim = len(_parse_gufunc_signature(node.op.signature)[1][0])
    return node.outputs[0].type.ndim - core_out_ndim


def _blockwise(w: Writer, node) -> None:
    """A Blockwise over a core kiln loops; with no batch dimensions (what PyTensor's gradients
    and 3.x's builders make of single matrices), just its core op, whatever that is."""
    from .walk import write_node

    core = node.op.core_op
    if type(core).__name__ == "Reshape" and _blockwise_batch_ndim(node) > 0:
        return blockwise_reshape(w, node)  # kiln's Reshape has no batching rule (lowered.py)
    if _blockwise_batch_ndim(node) == 0:
        core_node = core.make_node(*node.inputs)
        write_node(w, core_node)
        for out, core_out in zip(node.outputs, core_node.outputs):
            w.alias(out, core_out)
        return
    entry = OP_TABLE.get(type(core).__name__)
    if type(core).__name__ == "Scan":
        from .walk import scan_props

        name, props = "Scan", scan_props(w, core)
    elif entry is None:
        raise Unsupported(f"Blockwise over {type(core).__name__}, which the graph format does not have")
    else:
        name, props = entry.spell(w, core)
    if name not in KILN_BLOCKWISE_CORES | KILN_VECTORIZED_CORES and not w.options.allow_unimplemented:
        raise Unsupported(f"Blockwise over {name} is not implemented in kiln yet (kiln loops "
                          f"{', '.join(sorted(KILN_BLOCKWISE_CORES))} and batches "
                          f"{', '.join(sorted(KILN_VECTORIZED_CORES))} by their own rules)")
    w.emit(node, "Blockwise", {"core_op": {"op": name, "props": props}, "signature": str(node.op.signature)})


# --- inner graphs -------------------------------------------------------------------------------------


def _opfromgraph(w: Writer, node, why: str | None = None) -> None:
    """Inlines an OpFromGraph's body (version 1), or writes it as an OpFromGraph node
    (version 2) when the caller asked for that."""
    from .walk import write_inner_graph, inline_inner_graph

    if w.options.inline_opfromgraph:
        inline_inner_graph(w, node)
    else:
        write_inner_graph(w, node)


_IDENTITY = Func(_identity)

OP_TABLE: dict[str, Entry] = {
    # elementwise and dimension shuffles
    "Elemwise": Func(_elemwise, lambda w, op: ("Elemwise", {"scalar_op": spell_scalar_op(w, op.scalar_op)})),
    "DimShuffle": Same("input_ndim", "new_order"),
    # reductions, cumulative ops, softmax
    **{cls: Func(_careduce) for cls in ("Sum", "Prod", "ProdWithoutZeros", "Max", "Min", "All", "Any", "CAReduce")},
    "Argmax": Same("axis", convert={"axis": _axes}),
    "CumOp": Func(_cumop),
    "Softmax": Func(_softmax),
    "LogSoftmax": Func(_softmax),
    "SoftmaxGrad": Same("axis"),
    # shapes and shape-building ops
    "Shape": Same(),
    "Shape_i": Same("i"),
    "Reshape": Same("ndim"),
    "SpecifyShape": Func(_specify_shape),
    "Alloc": Same(),
    "AllocEmpty": Same("dtype", convert={"dtype": str}),
    "MakeVector": Same("dtype", convert={"dtype": str}),
    "Join": Func(_join, spell=_join_spell),
    "Split": Func(_split),
    "ARange": Same("dtype", convert={"dtype": str}),
    "Eye": Same("dtype", convert={"dtype": str}),
    "Tri": Same("dtype", convert={"dtype": str}),
    "ExtractDiag": Same("offset", "axis1", "axis2"),
    "AllocDiag": Func(_alloc_diag),
    "CheckAndRaise": Func(_check_and_raise),
    "Assert": Func(_check_and_raise),
    # indexing (indexing.py)
    **INDEXING_OPS,
    # products and their BLAS forms
    "Dot": Same(), "Dot22": Same(), "Dot22Scalar": Same(), "BatchedDot": Same(),
    "Gemv": Same(), "CGemv": Same(), "Gemm": Same(), "Ger": Same(), "CGer": Same(),
    "Blockwise": Func(_blockwise),
    # identity wrappers (version 2 names them; version 1 needs no node at all)
    **{cls: _IDENTITY for cls in ("ViewOp", "DeepCopyOp", "OutputGuard", "SpecifyAssumptions", "TensorFromScalar",
                                  "ScalarFromTensor", "CpuContiguous", "Unbroadcast")},
    # pytensor.gradient's ops: views that change only the gradient (kiln's ops/gradient_ops.h)
    "ZeroGrad": Same(), "DisconnectedGrad": Same(), "UndefinedGrad": Same(),
    "GradClip": Same("clip_lower_bound", "clip_upper_bound",
                     convert={"clip_lower_bound": _number, "clip_upper_bound": _number}),
    "GradScale": Same("multiplier", convert={"multiplier": _number}),
    # linear algebra (2.x slinalg/nlinalg, 3.x pytensor.tensor.linalg; overwrite_* props are left out). The
    # format's "More ops" are version 1 too (PyTensor 2.26 has them under these names), except Eig.
    "Cholesky": Same("lower", "on_error"),
    "Solve": Same("assume_a", "lower", "b_ndim"),
    "SolveTriangular": Same("lower", "unit_diagonal", "trans", "b_ndim"),
    "CholeskySolve": Same("lower", "b_ndim"),
    "LU": Same("permute_l", "p_indices"),
    "LUFactor": Same(),
    "PivotToPermutations": Same("inverse"),
    "QR": Same("mode", "pivoting"),
    "MatrixInverse": Same(), "Det": Same(), "SLogDet": Same(),
    "MatrixPinv": Same("hermitian"),
    "Expm": Same(),
    "Eigh": Same("UPLO", "lower"),
    "Eigvalsh": Same("lower"),
    "Eig": Same(version=2),  # complex outputs: version 2
    "SVD": Same("full_matrices", "compute_uv"),
    "KroneckerProduct": Same(),
    "BlockDiagonal": Same("n_inputs"),
    # sorting and NumPy's extra ops
    "SortOp": Same("kind"),
    "ArgSortOp": Same("kind"),
    "Repeat": Same("axis"),
    "BroadcastTo": Same(),
    "SearchsortedOp": Same("side"),
    "Nonzero": Same(),
    "Unique": Same("return_index", "return_inverse", "return_counts", "axis"),
    "FillDiagonal": Same(),
    "FillDiagonalOffset": Same(),
    # ops the format lacks, written as subgraphs of ops it has (lowered.py)
    **LOWERED_OPS,
}


#: Ops whose subclasses keep their meaning (a subclass only names the check or the exception),
#: so a subclass PyTensor or PyMC defines is written through its base's entry.
SUBCLASSES_MEAN_THE_SAME = ("CheckAndRaise",)


def lookup(op) -> Entry | None:
    """The table entry for an op, by class name (or by a base in SUBCLASSES_MEAN_THE_SAME)."""
    entry = OP_TABLE.get(type(op).__name__)
    if entry is None:
        for base in type(op).__mro__[1:]:
            if base.__name__ in SUBCLASSES_MEAN_THE_SAME:
                return OP_TABLE[base.__name__]
    return entry


def scalar_apply_entry() -> Entry:
    return Func(_scalar_apply)


def opfromgraph_entry() -> Entry:
    return Func(_opfromgraph)


def scan_entry() -> Entry:
    from .walk import write_scan

    return Func(lambda w, node: write_scan(w, node))


def _ifelse(w: Writer, node) -> None:
    op = node.op
    w.require_v2("an IfElse node (control flow)")
    props = {"n_outs": int(op.n_outs), "as_view": bool(op.as_view)}
    if getattr(op, "name", None):
        props["name"] = str(op.name)
    w.emit(node, "IfElse", props)


def ifelse_entry() -> Entry:
    return Func(_ifelse)
