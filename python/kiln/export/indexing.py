"""Subtensor and its relatives in the graph format.

PyTensor 2.x keeps the index types in `idx_list` (ScalarType entries, slices of them);
3.x numbers the index inputs (ints, slices of ints). Both say the same thing as the format's
`idx_list`: every non-None entry is taken from the next index input. 2.x's AdvancedSubtensor has
no idx_list: its inputs are tensors, MakeSlice results and NoneConst (newaxis), and the format
entries come from those. An advanced index that is one integer vector on the first axis is
written as AdvancedSubtensor1 (version 1, and what kiln implements).
"""
from __future__ import annotations

from .entries import Func
from .writer import Unsupported, Writer


def _basic_entry(entry) -> dict:
    if isinstance(entry, slice):
        return {"slice": [None if part is None else "input" for part in (entry.start, entry.stop, entry.step)]}
    return {"index": "input"}


def _idx_list(op) -> list[dict]:
    return [_basic_entry(e) for e in op.idx_list]


def _subtensor_spell(w: Writer, op) -> tuple[str, dict]:
    return "Subtensor", {"idx_list": _idx_list(op)}


def _inc_subtensor_spell(w: Writer, op) -> tuple[str, dict]:
    return "IncSubtensor", {"idx_list": _idx_list(op), "set_instead_of_inc": bool(op.set_instead_of_inc)}


def _written_as_spelled(spell):
    """A writer for ops whose node is the op as spelled, over the node's own inputs."""
    def write(w: Writer, node) -> None:
        w.emit(node, *spell(w, node.op))
    return write


def _advanced_subtensor1(w: Writer, node) -> None:
    w.emit(node, "AdvancedSubtensor1")


def _advanced_inc_subtensor1(w: Writer, node) -> None:
    w.emit(node, "AdvancedIncSubtensor1", _increment_flags(node.op))


def _is_int_vector(var) -> bool:
    t = var.type
    return getattr(t, "ndim", None) == 1 and str(getattr(t, "dtype", "")).startswith(("int", "uint"))


def _advanced_entries(w: Writer, op, index_inputs) -> tuple[list[dict], list]:
    """The format's idx_list and the index inputs it consumes, for 2.x and 3.x AdvancedSubtensor."""
    if hasattr(op, "idx_list") and op.idx_list is not None and len(op.idx_list):  # 3.x: numbered inputs
        return [_basic_entry(e) for e in op.idx_list], list(index_inputs)
    entries, inputs = [], []
    for var in index_inputs:  # 2.x: one input per entry
        tname = type(var.type).__name__
        if tname == "NoneTypeT":
            entries.append({"newaxis": True})
        elif tname == "SliceType":
            parts = _slice_parts(w, var)
            entries.append({"slice": ["input" if p is not None else None for p in parts]})
            inputs += [p for p in parts if p is not None]
        else:
            entries.append({"index": "input"})
            inputs.append(var)
    return entries, inputs


def _slice_parts(w: Writer, var) -> list:
    """(start, stop, step) of a 2.x slice variable: variables, constant ids, or None."""
    owner = var.owner
    if owner is not None and type(owner.op).__name__ == "MakeSlice":
        return [None if type(p.type).__name__ == "NoneTypeT" else p for p in owner.inputs]
    data = getattr(var, "data", None)
    if isinstance(data, slice):
        return [None if p is None else w.constant(int(p), "int64") for p in (data.start, data.stop, data.step)]
    raise Unsupported(f"slice index {var} is neither a MakeSlice nor a constant slice")


def _is_single_vector_index(entries: list[dict], inputs: list) -> bool:
    return len(entries) == 1 and entries[0] == {"index": "input"} and _is_int_vector(inputs[0])


def _advanced_subtensor(w: Writer, node) -> None:
    x, *index_inputs = node.inputs
    entries, inputs = _advanced_entries(w, node.op, index_inputs)
    if _is_single_vector_index(entries, inputs):
        w.emit(node, "AdvancedSubtensor1", inputs=[x, inputs[0]])
        return
    w.emit(node, "AdvancedSubtensor", {"idx_list": entries}, inputs=[x, *inputs])


def _increment_flags(op) -> dict:
    flags = {"set_instead_of_inc": bool(op.set_instead_of_inc)}
    if getattr(op, "ignore_duplicates", False):
        flags["ignore_duplicates"] = True
    return flags


def _advanced_spell(name: str, flags):
    """A Blockwise core spelling of 3.x's AdvancedSubtensor/AdvancedIncSubtensor, whose index
    inputs are the node's own; 2.x's (slices and newaxes as inputs) has none."""
    def spell(w: Writer, op) -> tuple[str, dict]:
        if not (hasattr(op, "idx_list") and op.idx_list is not None and len(op.idx_list)):
            raise Unsupported(f"{type(op).__name__} of PyTensor 2.x (slices as inputs) cannot be a Blockwise "
                              "core op in the graph format")
        return name, {"idx_list": _idx_list(op), **flags(op)}
    return spell


def _advanced_inc_subtensor(w: Writer, node) -> None:
    op = node.op
    x, y, *index_inputs = node.inputs
    entries, inputs = _advanced_entries(w, op, index_inputs)
    flags = _increment_flags(op)
    if _is_single_vector_index(entries, inputs):
        w.emit(node, "AdvancedIncSubtensor1", flags, inputs=[x, y, inputs[0]])
        return
    w.emit(node, "AdvancedIncSubtensor", {"idx_list": entries, **flags}, inputs=[x, y, *inputs])


def _make_slice(w: Writer, node) -> None:
    """MakeSlice results are consumed by the AdvancedSubtensor entries that use them; alone they
    have no format equivalent, so give them an id only for the walk's bookkeeping."""
    for out in node.outputs:
        w.ids[out] = w.shared.fresh("slice")


INDEXING_OPS = {
    "Subtensor": Func(_written_as_spelled(_subtensor_spell), spell=_subtensor_spell),
    "IncSubtensor": Func(_written_as_spelled(_inc_subtensor_spell), spell=_inc_subtensor_spell),
    "AdvancedSubtensor1": Func(_advanced_subtensor1),
    "AdvancedIncSubtensor1": Func(_advanced_inc_subtensor1),
    "AdvancedSubtensor": Func(_advanced_subtensor, spell=_advanced_spell("AdvancedSubtensor", lambda op: {})),
    "AdvancedIncSubtensor": Func(_advanced_inc_subtensor,
                                 spell=_advanced_spell("AdvancedIncSubtensor", _increment_flags)),
    "MakeSlice": Func(_make_slice),
}
