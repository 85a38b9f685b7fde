"""kiln.function: export + `kiln compile` + load, called the way `pytensor.function` is."""
from __future__ import annotations

from typing import Sequence

from .build import compile as compile_graph
from .export.rng import generator_from_words
from .loader import Function, bind_arguments


class KilnFunction:
    """A compiled PyTensor graph: call it with the inputs' values (by position or by the input
    variables' names); it returns one array for a single output, a list for a list of outputs.
    Shared variables that became inputs are read (`get_value(borrow=True)`) at every call, as
    PyTensor does."""

    def __init__(self, fn: Function, exported, inputs: list, shared_inputs: list, single: bool,
                 allow_input_downcast, trust_input: bool, num_outputs: int | None = None,
                 updated: Sequence = ()):
        self.fn = fn  #: the loaded kiln library (kiln.Function)
        self.graph = exported  #: the exported graph (kiln.export.ExportedGraph)
        self.inputs = inputs
        self.shared_inputs = shared_inputs
        #: the shared variables each call updates, in the order of the library's extra outputs
        self.updated = list(updated)
        self.num_outputs = len(fn.outputs) - len(self.updated) if num_outputs is None else num_outputs
        self._rng_outputs = [k for k, spec in enumerate(fn.outputs) if spec.kind == "rng"]
        self.single = single
        self.allow_input_downcast = allow_input_downcast
        self.trust_input = trust_input
        self._by_name = {}
        for k, var in enumerate(inputs):
            if var.name and var.name not in self._by_name:
                self._by_name[var.name] = k

    @property
    def num_threads(self) -> int:
        return self.fn.num_threads

    @num_threads.setter
    def num_threads(self, n: int) -> None:
        self.fn.num_threads = n

    def _values(self, args, kwargs) -> list:
        values = bind_arguments(args, kwargs, [str(v) for v in self.inputs], self._by_name, "kiln function")
        if not self.trust_input:
            values = [
                var.type.filter(v, strict=False, allow_downcast=self.allow_input_downcast)
                for var, v in zip(self.inputs, values)
            ]
        return values + [s.get_value(borrow=True) for s in self.shared_inputs]

    def __call__(self, *args, out=None, **kwargs):
        values = self._values(args, kwargs)
        if out is not None:
            if self.updated:
                raise NotImplementedError("out= is not supported by a kiln function with updates")
            outs = list(out) if isinstance(out, (list, tuple)) else [out]
            self.fn.call_into(outs, *values)
            return out
        results = self.fn.call(*values)
        # An rng comes back as its state words; PyTensor returns a Generator.
        for k in self._rng_outputs:
            results[k] = generator_from_words(results[k])
        n = self.num_outputs
        for var, value in zip(self.updated, results[n:]):
            var.set_value(value, borrow=True)
        results = results[:n]
        return results[0] if self.single else results


def function(
    inputs: Sequence,
    outputs,
    *,
    name: str = "kiln_function",
    rewrite=None,
    givens=None,
    updates=None,
    no_default_updates=False,
    shared: str = "input",
    options: Sequence[str] = (),
    num_threads: int = 1,
    allow_input_downcast=None,
    trust_input: bool = False,
    **unsupported,
) -> KilnFunction:
    """Like pytensor.function, through kiln: exports the graph, compiles it with `kiln compile`
    (cached), and loads the library.

    rewrite: PyTensor rewrites to apply before exporting (see kiln.from_pytensor); kiln rewrites
        the graph itself either way. givens: replacements applied to the outputs first.
    updates: (shared variable, new value) pairs or a dict, as pytensor.function: the library
        computes the new values as extra outputs and each call stores them with set_value.
        Shared variables with a `default_update` (RandomStream's and PyMC's generators) are
        updated too unless `no_default_updates` is True or lists them, as PyTensor does.
    shared: "input" (default) reads shared variables at each call like PyTensor; "constant"
        bakes their current values into the library (then nothing can be updated).
    options: extra `kiln compile` flags. Random generators go in and come out as NumPy
        Generators (the library carries them as uint64[6] words, see kiln.rng_words).
    """
    from .export import from_pytensor

    if unsupported:
        raise TypeError(f"kiln.function does not support {', '.join(sorted(unsupported))}")
    single = not isinstance(outputs, (list, tuple))
    outs = [outputs] if single else list(outputs)
    inputs = list(inputs)
    if any(type(v).__name__ == "In" for v in inputs):
        raise NotImplementedError("kiln.function takes plain variables as inputs, not pytensor.In")
    update_pairs = _update_pairs(updates, outs, inputs, no_default_updates)
    if update_pairs and shared != "input":
        raise ValueError('kiln.function with updates needs shared="input" (a baked-in value cannot change)')
    targets = outs + [expr for _, expr in update_pairs]
    if givens:
        from pytensor.graph.replace import clone_replace

        targets = clone_replace(targets, replace=dict(givens) if not isinstance(givens, dict) else givens)
    exported = from_pytensor(targets, inputs, rewrite=rewrite, name=name, shared=shared)
    shared_inputs = exported.inputs[len(inputs):]
    fn = compile_graph(exported, options=options, num_threads=num_threads)
    return KilnFunction(fn, exported, inputs, shared_inputs, single, allow_input_downcast, trust_input,
                        num_outputs=len(outs), updated=[var for var, _ in update_pairs])


def _update_pairs(updates, outputs: list, inputs: list, no_default_updates) -> list:
    """(shared variable, new value) pairs: the explicit `updates`, then the default updates of the
    shared variables the outputs (and those updates) depend on, as PyTensor's pfunc collects them."""
    from pytensor.compile.sharedvalue import SharedVariable

    try:  # PyTensor 3.x moved it; 2.x has it in graph.basic only
        from pytensor.graph.traversal import graph_inputs
    except ImportError:
        from pytensor.graph.basic import graph_inputs

    if updates is None:
        pairs = []
    elif isinstance(updates, dict):
        pairs = list(updates.items())
    else:
        pairs = [tuple(p) for p in updates]
    seen = set()
    for var, expr in pairs:
        if not isinstance(var, SharedVariable):
            raise TypeError(f"kiln.function: update target {var} is not a shared variable")
        if var in seen:
            raise ValueError(f"kiln.function: {var} is updated twice")
        seen.add(var)
    # The new value must have the variable's type (PyTensor's rule; a cast where lossless).
    pairs = [(var, var.type.filter_variable(expr, allow_convert=True)) for var, expr in pairs]
    if no_default_updates is True:
        return pairs
    skip = set(no_default_updates or ())
    frontier = list(outputs) + [expr for _, expr in pairs]
    while frontier:
        found = []
        for root in graph_inputs(frontier):
            if (isinstance(root, SharedVariable) and root not in seen and root not in skip
                    and getattr(root, "default_update", None) is not None and root not in inputs):
                seen.add(root)
                pairs.append((root, root.default_update))
                found.append(root.default_update)
        frontier = found
    return pairs
