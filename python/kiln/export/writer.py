"""The state of one export: variables and nodes written so far, the ids PyTensor variables got,
constants, the lowest format version the graph needs, and every problem met on the way (the
walk goes on after a problem, so the final error lists them all)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import Problem
from . import values
from .rng import RNG_TYPE, is_rng_type, rng_constant_value
from .unsupported import Unsupported


@dataclass
class ExportOptions:
    """The caller's choices (see kiln.from_pytensor)."""

    shared: str = "constant"  #: "constant" or "input"
    large_constants: str = "npy"  #: "npy" (sidecar files), "base64" or "inline"
    inline_limit: int = 1024  #: constants with more elements than this are written as large
    inline_opfromgraph: bool = True  #: inline OpFromGraph bodies (v1) or write them (v2)
    allow_unimplemented: bool = False  #: write ops the format has but kiln does not implement yet
    sidecar_prefix: str = "graph_data"  #: folder of .npy sidecars, relative to the graph file


@dataclass
class Shared:
    """What every scope of one export shares: options, problems, sidecar files, the version."""

    options: ExportOptions
    problems: list[Problem] = field(default_factory=list)
    sidecars: dict[str, np.ndarray] = field(default_factory=dict)
    v2_reasons: list[str] = field(default_factory=list)
    counter: int = 0

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"


def op_text(op) -> str:
    try:
        return str(op)
    except Exception:  # a broken __str__ must not hide the real problem
        return type(op).__name__


class Writer:
    """One id scope of a graph file: the top level, or the inner graph of an OpFromGraph."""

    def __init__(self, shared: Shared):
        self.shared = shared
        self.options = shared.options
        self.variables: list[dict] = []
        self.nodes: list[dict] = []
        self.ids: dict[Any, str] = {}
        self._small_constants: dict[tuple, str] = {}

    # --- versions and problems ---------------------------------------------------------------------

    def require_v2(self, reason: str) -> None:
        """Records that the graph uses a version-2 construct."""
        if reason not in self.shared.v2_reasons:
            self.shared.v2_reasons.append(reason)

    def problem(self, node, reason: str) -> None:
        """Records a node kiln cannot express and declares its outputs, so the walk goes on."""
        outs = ", ".join(o.name or f"<{o.type}>" for o in node.outputs)
        self.shared.problems.append(Problem(type(node.op).__name__, op_text(node.op), reason, f"giving {outs}"))
        for out in node.outputs:
            if out not in self.ids:
                self.ids[out] = self.shared.fresh("bad")

    # --- variables ---------------------------------------------------------------------------------

    def type_of(self, var) -> dict:
        """The format's type of a PyTensor variable (tensors, scalars as 0-d tensors, NoneConst)."""
        t = var.type
        kind = type(t).__name__
        if kind == "NoneTypeT":
            self.require_v2("a NoneConst variable ({\"kind\": \"none\"} type)")
            return {"kind": "none"}
        if is_rng_type(t):
            self.require_v2("a random generator (rng) variable")
            return dict(RNG_TYPE)
        if "RandomState" in kind:
            raise Unsupported("a legacy RandomState generator is not in the graph format (use a Generator)")
        dtype = getattr(t, "dtype", None)
        if dtype is None:
            raise Unsupported(f"variable {var} has type {t}, which the graph format cannot express")
        if dtype not in values.V1_DTYPES:
            if dtype in values.V2_IMPLEMENTED_DTYPES:
                self.require_v2(f"dtype {dtype}")
            elif dtype in values.V2_DTYPES:
                raise Unsupported(f"dtype {dtype} (graph format v2) is not implemented in kiln yet")
            else:
                raise Unsupported(f"dtype {dtype} is not in the graph format")
        shape = getattr(t, "shape", ())  # ScalarType: () -> a 0-d tensor
        return values.tensor_type(dtype, shape)

    def _add_variable(self, entry: dict) -> str:
        self.variables.append(entry)
        return entry["id"]

    def declare(self, var, *, prefix: str = "v") -> str:
        """A new id for `var` (a graph input or a node output), with its name and type."""
        vid = self.shared.fresh(prefix)
        entry = {"id": vid}
        if var.name:
            entry["name"] = var.name
        entry["type"] = self.type_of(var)
        self.ids[var] = self._add_variable(entry)
        return vid

    def alias(self, var, same_as) -> None:
        """`var` is the same value as `same_as` (identity wrappers, inlined graphs)."""
        self.ids[var] = self.var_id(same_as)

    def var_id(self, var) -> str:
        """The id of a variable already written; constants are written on first use."""
        vid = self.ids.get(var)
        if vid is not None:
            return vid
        if not _is_constant(var):
            raise Unsupported(f"variable {var} is used before it is computed (not an input of the graph?)")
        if type(var.type).__name__ == "NoneTypeT":
            self.require_v2("a NoneConst input ({\"kind\": \"none\"} type)")
            vid = self._add_variable({"id": self.shared.fresh("none"), "type": {"kind": "none"}, "value": None})
        elif is_rng_type(var.type):
            self.require_v2("a random generator (rng) constant")
            entry = {"id": self.shared.fresh("rng"), "type": dict(RNG_TYPE), "value": rng_constant_value(var.data)}
            if var.name:
                entry["name"] = var.name
            vid = self._add_variable(entry)
        else:
            vid = self.constant(np.asarray(var.data), str(var.type.dtype), getattr(var.type, "shape", ()), var.name)
        self.ids[var] = vid
        return vid

    def constant(self, value, dtype: str, shape=None, name: str | None = None) -> str:
        """A constant of `dtype`; `shape` (static lengths, None = from the value) is its type."""
        a = np.asarray(value, dtype=dtype)
        type_shape = list(a.shape) if shape is None else [a.shape[d] if s is None else s for d, s in enumerate(shape)]
        ty = values.tensor_type(a.dtype.name, type_shape)
        if a.dtype.name in values.V2_IMPLEMENTED_DTYPES:
            self.require_v2(f"a constant of dtype {a.dtype}")
        elif a.dtype.name not in values.V1_DTYPES:
            raise Unsupported(f"constant of dtype {a.dtype} is not supported by kiln")
        small = a.size <= self.options.inline_limit or self.options.large_constants == "inline"
        if small and not name:
            key = (a.dtype.str, a.shape, a.tobytes())
            hit = self._small_constants.get(key)
            if hit:
                return hit
        vid = self.shared.fresh("c")
        entry = {"id": vid}
        if name:
            entry["name"] = name
        entry["type"] = ty
        if small:
            entry["value"] = values.nested_json(a)
            if not name:
                self._small_constants[(a.dtype.str, a.shape, a.tobytes())] = vid
        elif self.options.large_constants == "base64":
            entry["value"] = values.base64_value(a)
        else:
            rel = f"{self.options.sidecar_prefix}/{vid}.npy"
            self.shared.sidecars[rel] = np.ascontiguousarray(a)
            entry["value"] = {"npy": rel}
        return self._add_variable(entry)

    def new_variable(self, dtype: str, shape) -> str:
        """An intermediate the exporter introduces itself (e.g. when it splits one op into two)."""
        return self._add_variable({"id": self.shared.fresh("t"), "type": values.tensor_type(dtype, shape)})

    # --- nodes -------------------------------------------------------------------------------------

    def node(self, op: str, props: dict | None, inputs: list[str], outputs: list[str]) -> None:
        """Writes one node (ids already declared)."""
        entry: dict = {"op": op}
        if props:
            entry["props"] = props
        entry["inputs"] = list(inputs)
        entry["outputs"] = list(outputs)
        self.nodes.append(entry)

    def emit(self, node, op: str, props: dict | None = None, inputs=None) -> None:
        """Writes a PyTensor node as `op` with `props`; inputs default to the node's own (or a list
        of PyTensor variables and ids), outputs are the node's outputs."""
        ins = node.inputs if inputs is None else inputs
        in_ids = [i if isinstance(i, str) else self.var_id(i) for i in ins]
        out_ids = [self.declare(o) for o in node.outputs]
        self.node(op, props, in_ids, out_ids)

    def child(self) -> "Writer":
        """A new id scope (an OpFromGraph's inner graph) sharing options and problems."""
        return Writer(self.shared)


def _is_constant(var) -> bool:
    from pytensor.graph.basic import Constant

    return isinstance(var, Constant)
