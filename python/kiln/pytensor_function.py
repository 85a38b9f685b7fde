"""kiln.function: export + `kiln compile` + load, called the way `pytensor.function` is."""
from __future__ import annotations

from typing import Sequence

from .build import compile as compile_graph
from .loader import Function, bind_arguments


class KilnFunction:
    """A compiled PyTensor graph: call it with the inputs' values (by position or by the input
    variables' names); it returns one array for a single output, a list for a list of outputs.
    Shared variables that became inputs are read (`get_value(borrow=True)`) at every call, as
    PyTensor does."""

    def __init__(self, fn: Function, exported, inputs: list, shared_inputs: list, single: bool,
                 allow_input_downcast, trust_input: bool):
        self.fn = fn  #: the loaded kiln library (kiln.Function)
        self.graph = exported  #: the exported graph (kiln.export.ExportedGraph)
        self.inputs = inputs
        self.shared_inputs = shared_inputs
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
            outs = list(out) if isinstance(out, (list, tuple)) else [out]
            self.fn.call_into(outs, *values)
            return out
        results = self.fn.call(*values)
        return results[0] if self.single else results


def function(
    inputs: Sequence,
    outputs,
    *,
    name: str = "kiln_function",
    rewrite=None,
    givens=None,
    updates=None,
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
    shared: "input" (default) reads shared variables at each call like PyTensor; "constant"
        bakes their current values into the library.
    options: extra `kiln compile` flags. updates are not supported (a kiln library is a pure
        function): use the outputs and set the shared values yourself.
    """
    from .export import from_pytensor

    if updates:
        raise NotImplementedError("kiln.function does not support updates: a kiln library is a pure function")
    if unsupported:
        raise TypeError(f"kiln.function does not support {', '.join(sorted(unsupported))}")
    single = not isinstance(outputs, (list, tuple))
    outs = [outputs] if single else list(outputs)
    inputs = list(inputs)
    if any(type(v).__name__ == "In" for v in inputs):
        raise NotImplementedError("kiln.function takes plain variables as inputs, not pytensor.In")
    if givens:
        from pytensor.graph.replace import clone_replace

        outs = clone_replace(outs, replace=dict(givens) if not isinstance(givens, dict) else givens)
    exported = from_pytensor(outs, inputs, rewrite=rewrite, name=name, shared=shared)
    shared_inputs = exported.inputs[len(inputs):]
    fn = compile_graph(exported, options=options, num_threads=num_threads)
    return KilnFunction(fn, exported, inputs, shared_inputs, single, allow_input_downcast, trust_input)
