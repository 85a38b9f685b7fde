"""kiln.from_pytensor: a PyTensor graph as a kiln graph file (../shared/GRAPH_FORMAT.md).

The export is a walk over `FunctionGraph.toposort()`; each op goes through the op table
(ops.py). The file gets the lowest format version that expresses the graph: version 1 unless
a version-2 construct is needed (an OpFromGraph written with its body, a NoneConst-typed
variable, a v2-only op), and PyTensor 3.x spellings are normalised to version 1 where the
format allows it.
"""
from __future__ import annotations

import copy
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..errors import UnsupportedGraphError
from .ops import KILN_BLOCKWISE_CORES, KILN_LACKS, OP_TABLE
from .scalar import SCALAR_OPS
from .values import npy_bytes
from .walk import write_nodes
from .writer import ExportOptions, Shared, Unsupported, Writer

__all__ = ["from_pytensor", "ExportedGraph", "OP_TABLE", "SCALAR_OPS", "KILN_LACKS", "KILN_BLOCKWISE_CORES",
           "DEFAULT_REWRITES"]

#: PyTensor's rewrite tags `rewrite=True` applies (what PyTensor calls its graph-level rewrites).
DEFAULT_REWRITES = ("canonicalize", "stabilize", "specialize")


@dataclass
class ExportedGraph:
    """A graph file (as a dict) plus the .npy files its large constants name."""

    graph: dict
    sidecars: dict[str, np.ndarray] = field(default_factory=dict)
    inputs: list = field(default_factory=list)  #: the PyTensor variables behind graph["inputs"]
    outputs: list = field(default_factory=list)  #: the PyTensor variables behind graph["outputs"]
    v2_reasons: list[str] = field(default_factory=list)  #: why the file needs version 2 (empty: v1)
    fgraph: Any = None  #: the (rewritten) FunctionGraph that was written

    @property
    def version(self) -> int:
        return int(self.graph["version"])

    @property
    def name(self) -> str:
        return str(self.graph["name"])

    def to_json(self, indent: int | None = 1) -> str:
        """The graph file's text."""
        return json.dumps(self.graph, indent=indent, allow_nan=False, ensure_ascii=False) + "\n"

    def sidecar_bytes(self) -> dict[str, bytes]:
        """Each sidecar's .npy file content, by its path relative to the graph file."""
        return {rel: npy_bytes(a) for rel, a in self.sidecars.items()}

    def save(self, path: str | os.PathLike) -> Path:
        """Writes the graph file and its sidecar .npy files (relative to the file's folder)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        for rel, data in self.sidecar_bytes().items():
            target = path.parent / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        path.write_text(self.to_json(), encoding="utf-8")
        return path


def _as_list(x) -> tuple[list, bool]:
    if isinstance(x, (list, tuple)):
        return list(x), False
    return [x], True


def _function_graph(outputs, inputs, shared: str):
    """A cloned FunctionGraph of the caller's outputs and inputs, with shared variables made
    constants or extra inputs. Returns it and the caller's (uncloned) input variables."""
    from pytensor.compile.sharedvalue import SharedVariable
    from pytensor.graph.basic import Constant

    from .compat import graph_inputs
    from pytensor.graph.fg import FunctionGraph
    from pytensor.graph.replace import graph_replace

    if isinstance(outputs, FunctionGraph):
        fg = outputs.clone()
        if inputs is not None:
            raise TypeError("from_pytensor: inputs= cannot be given with a FunctionGraph (it has its own)")
        originals = list(outputs.inputs)
        if shared == "constant":
            consts = {v: _shared_constant(v) for v in fg.inputs if isinstance(v, SharedVariable)}
            consts = {k: c for k, c in consts.items() if c is not None}
            if consts:
                fg.replace_all(list(consts.items()), import_missing=True, reason="kiln: shared as constants")
                keep = [k for k, v in enumerate(fg.inputs) if v not in consts]
                originals = [originals[k] for k in keep]
                fg = FunctionGraph([fg.inputs[k] for k in keep], fg.outputs, clone=True)
        return fg, originals

    outs = list(outputs)
    roots = [v for v in graph_inputs(outs) if v.owner is None and not isinstance(v, Constant)]
    shared_vars = [v for v in roots if isinstance(v, SharedVariable)]
    if inputs is None:
        inputs = [v for v in roots if not isinstance(v, SharedVariable)]
    else:
        inputs = list(inputs)
        missing = [v for v in roots if v not in inputs and not isinstance(v, SharedVariable)]
        if missing:
            raise ValueError(
                "from_pytensor: the outputs depend on variable(s) that are not inputs: "
                + ", ".join(str(v) for v in missing)
            )
    extra = [v for v in shared_vars if v not in inputs]
    if shared == "input":
        inputs = inputs + extra
    elif extra:
        consts = {v: _shared_constant(v) for v in extra}
        non_tensor = [v for v, c in consts.items() if c is None]
        inputs = inputs + non_tensor
        consts = {v: c for v, c in consts.items() if c is not None}
        if consts:
            outs = graph_replace(outs, consts, strict=False)
    return FunctionGraph(inputs, outs, clone=True), inputs


def _shared_constant(var):
    """A constant with a shared variable's current value and type (None: neither a tensor nor a
    random generator)."""
    from pytensor.graph.basic import Constant
    from pytensor.tensor.type import TensorType
    from pytensor.tensor.variable import TensorConstant

    from .rng import is_rng_type

    if is_rng_type(var.type):  # the generator's current state, copied
        return Constant(var.type, copy.deepcopy(var.get_value(borrow=True)), name=var.name)
    if not isinstance(var.type, TensorType):
        return None
    value = np.asarray(var.get_value(borrow=True))
    return TensorConstant(var.type, var.type.filter(value), name=var.name)


def _rewrite(fgraph, rewrite):
    if rewrite is None or rewrite is False:
        return fgraph
    from pytensor.graph.rewriting.db import RewriteDatabaseQuery

    if isinstance(rewrite, RewriteDatabaseQuery):  # what a Mode's optimizer is
        from pytensor.compile import optdb

        optdb.query(rewrite).rewrite(fgraph)
        return fgraph
    if callable(rewrite):
        result = rewrite(fgraph)
        return fgraph if result is None else result
    from pytensor.graph.rewriting.utils import rewrite_graph

    if rewrite is True or rewrite == "default":
        tags = DEFAULT_REWRITES
    elif isinstance(rewrite, str):
        tags = (rewrite,)
    else:
        tags = tuple(rewrite)
    rewrite_graph(fgraph, include=tags, clone=False)
    return fgraph


def from_pytensor(
    outputs,
    inputs: Sequence | None = None,
    *,
    rewrite=None,
    name: str = "graph",
    shared: str = "constant",
    path: str | os.PathLike | None = None,
    large_constants: str = "npy",
    inline_limit: int = 1024,
    inline_opfromgraph: bool = True,
    allow_unimplemented: bool = False,
) -> ExportedGraph:
    """Exports PyTensor variables (or a FunctionGraph) as a kiln graph.

    outputs: a variable, a list of variables, or a FunctionGraph (then its inputs are used).
    inputs: the graph's inputs in order (default: every non-constant root, in graph order).
    rewrite: None/False exports the graph as written; True applies PyTensor's canonicalize,
        stabilize and specialize rewrites first; a tag or a list of tags applies those
        (rewrite_graph); a RewriteDatabaseQuery runs that query of PyTensor's optdb (what a
        Mode's optimizer is, e.g. fast_run); a callable receives the FunctionGraph and may
        rewrite it in place or return a new one.
    shared: "constant" bakes shared variables' current values in; "input" makes each an input
        after the explicit ones.
    large_constants: constants above `inline_limit` elements become "npy" sidecar files (next to
        the graph file, see ExportedGraph.save), "base64" strings, or "inline" JSON.
    inline_opfromgraph: inline OpFromGraph bodies (version 1) or write OpFromGraph nodes (v2).
    allow_unimplemented: write ops the format has but kiln does not implement yet, instead of
        refusing them.
    path: also save the graph file there.

    Raises UnsupportedGraphError listing every node kiln cannot express.
    """
    from pytensor.graph.fg import FunctionGraph

    if shared not in ("constant", "input"):
        raise ValueError(f"shared must be 'constant' or 'input', not {shared!r}")
    if large_constants not in ("npy", "base64", "inline"):
        raise ValueError(f"large_constants must be 'npy', 'base64' or 'inline', not {large_constants!r}")
    if isinstance(outputs, FunctionGraph):
        fgraph, original_inputs = _function_graph(outputs, inputs, shared)
        original_outputs = list(outputs.outputs)
    else:
        outs, _ = _as_list(outputs)
        fgraph, original_inputs = _function_graph(outs, inputs, shared)
        original_outputs = outs
    fgraph = _rewrite(fgraph, rewrite)

    prefix = (Path(path).stem if path is not None else _file_stem(name)) + "_data"
    options = ExportOptions(shared=shared, large_constants=large_constants, inline_limit=inline_limit,
                            inline_opfromgraph=inline_opfromgraph, allow_unimplemented=allow_unimplemented,
                            sidecar_prefix=prefix)
    state = Shared(options)
    w = Writer(state)
    input_ids = []
    for var in fgraph.inputs:
        try:
            input_ids.append(w.declare(var, prefix="in"))
        except Unsupported as e:  # recorded; the walk goes on to find every other problem
            state.problems.append(_input_problem(var, str(e)))
            w.ids[var] = state.fresh("bad")
    write_nodes(w, fgraph.toposort())
    output_ids = []
    declared = {v["id"] for v in w.variables}
    for k, var in enumerate(fgraph.outputs):
        try:
            vid = w.var_id(var)
        except Unsupported as e:
            state.problems.append(_input_problem(var, str(e)))
            continue
        if vid not in declared and not vid.startswith("bad"):  # a slice or typed list: bookkeeping only
            state.problems.append(_input_problem(var, f"a {type(var.type).__name__} cannot be a graph output "
                                                      "(the graph format's values are tensors)"))
        output_ids.append(vid)
    if state.problems:
        raise UnsupportedGraphError(state.problems, name)
    output_ids = _name_outputs(w, output_ids, [getattr(v, "name", None) for v in original_outputs], input_ids)

    graph = {
        "format": "kiln-graph",
        "version": 2 if state.v2_reasons else 1,
        "name": name,
        "variables": w.variables,
        "nodes": w.nodes,
        "inputs": input_ids,
        "outputs": output_ids,
    }
    exported = ExportedGraph(graph, state.sidecars, original_inputs, original_outputs, list(state.v2_reasons), fgraph)
    if path is not None:
        exported.save(path)
    return exported


def _file_stem(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name) or "graph"


def _input_problem(var, reason: str):
    from ..errors import Problem

    return Problem(type(var.type).__name__, str(var), reason, "graph input/output")


def _name_outputs(w: Writer, output_ids: list[str], wanted: list[str | None], input_ids: list[str]) -> list[str]:
    """Outputs carry the caller's output names (or keep their variable's name, or get output0,
    output1, ...): the library's metadata shows them. Rewrites may have replaced an output by an
    unnamed or differently named variable; an output that needs a name its variable cannot take
    (a graph input's, another output's) gets its own variable through an identity node."""
    by_id = {v["id"]: v for v in w.variables}
    taken = {v["name"] for v in w.variables if v.get("name")}
    result: list[str] = []
    for k, (vid, name) in enumerate(zip(output_ids, wanted)):
        entry = by_id[vid]
        repeated = vid in result
        if repeated and name in (None, entry.get("name")):  # the same output listed again
            result.append(vid)
            continue
        if name is None:
            name = entry.get("name")
        if name is None:
            name = f"output{k}"
            while name in taken:
                name += "_"
        if entry.get("name") == name and not repeated:
            result.append(vid)
        elif not entry.get("name") and not repeated and vid not in input_ids:
            entry["name"] = name
            result.append(vid)
        else:
            new_id = w.shared.fresh("out")
            w.variables.append({"id": new_id, "name": name, "type": entry["type"]})
            w.node("Elemwise", {"scalar_op": "identity"}, [vid], [new_id])
            result.append(new_id)
        taken.add(name)
    return result
