"""The walk over a FunctionGraph's toposort: each node goes to its op table entry; nodes kiln
cannot express are recorded and the walk goes on, so one error lists them all."""
from __future__ import annotations

from .ops import KILN_LACKS, ifelse_entry, lookup, opfromgraph_entry, scalar_apply_entry, scan_entry
from .random import RANDOM_VARIABLE, is_random_variable
from .writer import Unsupported, Writer


def _entry_for(op):
    entry = lookup(op)
    if entry is not None:
        return entry, None
    from pytensor.compile.builders import OpFromGraph
    from pytensor.scalar.basic import ScalarOp

    if isinstance(op, ScalarOp):
        return scalar_apply_entry(), None
    if isinstance(op, OpFromGraph):
        return opfromgraph_entry(), None
    if is_random_variable(op):
        return RANDOM_VARIABLE, None
    cls = type(op).__name__
    module = type(op).__module__
    if cls == "Scan":
        return scan_entry(), None
    if cls == "IfElse":
        return ifelse_entry(), None
    return None, f"no kiln equivalent ({module}.{cls} is not in the graph format)"


def write_node(w: Writer, node) -> None:
    """Writes one PyTensor node (or records why it cannot be written)."""
    entry, why = _entry_for(node.op)
    if entry is None:
        w.problem(node, why)
        return
    first_new = len(w.nodes)
    try:
        entry.write(w, node)
    except Unsupported as e:
        w.problem(node, str(e))
        return
    if w.options.allow_unimplemented:
        return
    lacking = sorted({n["op"] for n in w.nodes[first_new:] if n["op"] in KILN_LACKS})
    if lacking:
        w.problem(node, f"{', '.join(lacking)} is not implemented in kiln yet (the graph format has it)")


def write_nodes(w: Writer, nodes) -> None:
    for node in nodes:
        write_node(w, node)


def _inner(op):
    from .compat import io_toposort

    return op.inner_inputs, op.inner_outputs, io_toposort(op.inner_inputs, op.inner_outputs)


def inline_inner_graph(w: Writer, node) -> None:
    """An OpFromGraph's body written in place of the node (its inner variables get new ids in
    the same scope; the node's outputs become the body's outputs)."""
    inner_in, inner_out, order = _inner(node.op)
    # PyTensor may build an OpFromGraph over the very variables of the graph around it (its
    # inner inputs and nodes are those objects, not clones): the aliases and ids the body sets
    # hold only inside it, so they are undone afterwards.
    outside = dict(w.ids)
    for inner, outer in zip(inner_in, node.inputs):
        w.alias(inner, outer)
    problems_before = len(w.shared.problems)
    write_nodes(w, order)
    if len(w.shared.problems) > problems_before:
        w.ids = outside
        for out in node.outputs:
            w.ids.setdefault(out, w.shared.fresh("bad"))
        return
    out_ids = [w.var_id(inner) for inner in inner_out]
    w.ids = outside
    for outer, vid in zip(node.outputs, out_ids):
        w.ids[outer] = vid


def write_inner_graph(w: Writer, node) -> None:
    """An OpFromGraph written as one node with its body in props.inner (graph format v2)."""
    inner_in, inner_out, order = _inner(node.op)
    sub = w.child()
    in_ids = [sub.declare(v, prefix="i") for v in inner_in]
    write_nodes(sub, order)
    out_ids = [sub.var_id(v) for v in inner_out]
    inner = {"variables": sub.variables, "nodes": sub.nodes, "inputs": in_ids, "outputs": out_ids}
    w.require_v2(f"an OpFromGraph node ({type(node.op).__name__}) written with its inner graph")
    name = getattr(node.op, "name", None) or type(node.op).__name__
    w.emit(node, "OpFromGraph", {"name": str(name), "inner": inner})


SCAN_INFO_FIELDS = ("n_seqs", "mit_mot_in_slices", "mit_mot_out_slices", "mit_sot_in_slices", "sit_sot_in_slices",
                    "n_nit_sot", "n_non_seqs", "as_while")


def write_scan(w: Writer, node) -> None:
    """A Scan written as one node with its step function in props.inner (graph format v2), its
    ScanInfo in props.info (2.x's n_shared_outs written as it is called there)."""
    w.emit(node, "Scan", scan_props(w, node.op))


def scan_props(w: Writer, op) -> dict:
    """A Scan op's props: info, truncate_gradient, name and its step function as `inner` (also
    what a Blockwise over a Scan names as its core op)."""
    info = op.info
    sub = w.child()
    in_ids = [sub.declare(v, prefix="i") for v in op.inner_inputs]
    from .compat import io_toposort

    write_nodes(sub, io_toposort(op.inner_inputs, op.inner_outputs))
    out_ids = [sub.var_id(v) for v in op.inner_outputs]
    inner = {"variables": sub.variables, "nodes": sub.nodes, "inputs": in_ids, "outputs": out_ids}
    fields = {}
    for f in SCAN_INFO_FIELDS:
        v = getattr(info, f)
        fields[f] = [[int(t) for t in taps] for taps in v] if isinstance(v, tuple) else (bool(v) if f == "as_while" else int(v))
    untraced = "n_untraced_sit_sot" if hasattr(type(info), "__dataclass_fields__") and \
        "n_untraced_sit_sot" in type(info).__dataclass_fields__ else "n_shared_outs"
    fields[untraced] = int(getattr(info, untraced))
    w.require_v2("a Scan node written with its step function")
    return {"info": fields, "truncate_gradient": int(op.truncate_gradient), "name": str(op.name or "scan_fn"),
            "inner": inner}
