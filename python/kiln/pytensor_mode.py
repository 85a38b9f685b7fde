"""kiln as a PyTensor backend: `pytensor.function(..., mode=kiln.mode())`.

KilnLinker plugs in the way PyTensor's JAX and Numba linkers do (a JITLinker): PyTensor runs its
rewrites, hands the linker the FunctionGraph, and the linker exports it, compiles it with kiln and
calls the library from one thunk. Ops kiln lacks raise the exporter's UnsupportedGraphError at
compile time; nothing falls back to PyTensor's own implementations unless the caller asks for a
`fallback` linker explicitly (then the whole function runs there, with a warning).
"""
from __future__ import annotations

import re
import warnings
from typing import Sequence

from pytensor.compile.mode import Mode
from pytensor.graph.rewriting.db import RewriteDatabaseQuery
from pytensor.link.basic import JITLinker
from pytensor.scalar import ScalarType

from .build import compile as compile_graph
from .errors import KilnAssertionError, UnsupportedGraphError
from .export import from_pytensor
from .export.rng import generator_from_words


class KilnFallbackWarning(UserWarning):
    """A function ran on another linker because kiln cannot express its graph (opt-in)."""


class KilnLinker(JITLinker):
    """A Linker that compiles the whole FunctionGraph with kiln into one thunk."""

    required_rewrites = ("minimum_compile",)
    # kiln plans memory and in-place work itself; C-only rewrites produce ops for PyTensor's C
    # backend only.
    incompatible_rewrites = ("cxx_only", "inplace", "scan_reduce_trace_prealloc")

    def __init__(self, *, options: Sequence[str] = (), num_threads: int = 1, fallback: str | None = None,
                 name: str = "pytensor_function", **kwargs):
        self.kiln_options = tuple(options)
        self.num_threads = num_threads
        self.fallback = fallback
        self.graph_name = name
        self.exported = None  #: the graph last exported (for inspection)
        super().__init__(**kwargs)

    def clone(self, allow_gc=None):
        return type(self)(options=self.kiln_options, num_threads=self.num_threads, fallback=self.fallback,
                          name=self.graph_name, allow_gc=self.allow_gc if allow_gc is None else allow_gc)

    def fgraph_convert(self, fgraph, **kwargs):
        self.exported = from_pytensor(fgraph, shared="input", name=self.graph_name)
        fn = compile_graph(self.exported, options=self.kiln_options, num_threads=self.num_threads)
        call = fn.call
        check_errors = _check_exception_types(fgraph)
        # kiln writes a ScalarType value as a 0-d tensor; PyTensor's other linkers return it as a
        # NumPy scalar of its dtype (np.int8(56), not array(56, dtype=int8)), and callers test that.
        scalar_outputs = [k for k, v in enumerate(fgraph.outputs) if isinstance(v.type, ScalarType)]
        # An rng comes back as its state words (uint64[6]); PyTensor's storage holds Generators,
        # which the function's updates write into shared variables that other functions share.
        rng_outputs = [k for k, spec in enumerate(fn.outputs) if spec.kind == "rng"]

        def run(*inputs):
            try:
                outputs = call(*inputs)
            except KilnAssertionError as e:
                raise _as_check_exception(e, check_errors) from e
            for k in scalar_outputs:
                outputs[k] = outputs[k][()]
            for k in rng_outputs:
                outputs[k] = generator_from_words(outputs[k])
            return outputs

        run.kiln_function = fn
        return run

    def jit_compile(self, fn):
        return fn

    def create_thunk_inputs(self, storage_map):
        return [storage_map[n] for n in self.fgraph.inputs]

    def make_all(self, input_storage=None, output_storage=None, storage_map=None):
        try:
            return super().make_all(input_storage, output_storage, storage_map)
        except UnsupportedGraphError as e:
            if not self.fallback:
                raise
            from pytensor.compile.mode import predefined_linkers

            warnings.warn(f"kiln cannot compile this function; running it on the {self.fallback!r} linker "
                          f"(fallback= was given):\n{e}", KilnFallbackWarning, stacklevel=2)
            other = predefined_linkers[self.fallback].clone() if isinstance(self.fallback, str) else self.fallback
            other = other.accept(self.fgraph, no_recycling=self.no_recycling)
            return other.make_all(input_storage, output_storage, storage_map)


def _check_exception_types(fgraph) -> dict[str, type]:
    """The exception classes of the graph's CheckAndRaise nodes (scipy's LinAlgError, PyMC's
    ParameterValueError, ...) by class name: a failed check raises what PyTensor raises."""
    from pytensor.raise_op import CheckAndRaise

    types = {}
    for node in fgraph.apply_nodes:
        exc = getattr(node.op, "exc_type", None)
        if isinstance(node.op, CheckAndRaise) and isinstance(exc, type) and issubclass(exc, Exception):
            types.setdefault(exc.__name__, exc)
    return types


_CHECK_FAILED = re.compile(r": (\w+): (.*?) \[kiln status")


def _builtin_exception(name: str):
    """A built-in exception class by name: the exporter's own checks (the NumPy errors of the ops
    it writes as subgraphs, kiln/export/lowered.py) raise ValueError, which no graph node names."""
    import builtins

    cls = getattr(builtins, name, None)
    return cls if isinstance(cls, type) and issubclass(cls, Exception) else None


def _as_check_exception(error: KilnAssertionError, types: dict[str, type]) -> Exception:
    """kiln's message names the check's exception class and message; the graph's own class when
    it is one of `types` (else the KilnAssertionError itself)."""
    m = _CHECK_FAILED.search(str(error))
    cls = (types.get(m.group(1)) or _builtin_exception(m.group(1))) if m else None
    if cls is None or cls is AssertionError:
        return error
    try:
        return cls(m.group(2))
    except Exception:  # an exception class that wants other arguments
        return error


def mode(*, optimizer="fast_run", options: Sequence[str] = (), num_threads: int = 1, fallback: str | None = None,
         name: str = "pytensor_function") -> Mode:
    """A PyTensor Mode that compiles through kiln.

    optimizer: PyTensor's rewrites to run first ("fast_run", "fast_compile", a
        RewriteDatabaseQuery, or None for only what every function needs); kiln rewrites the
        result again itself. options: extra `kiln compile` flags. num_threads: threads per call.
    fallback: a PyTensor linker name ("cvm", "numba", "py", ...) to run functions kiln cannot
        express; off by default, so such functions raise kiln's UnsupportedGraphError.
    """
    linker = KilnLinker(options=options, num_threads=num_threads, fallback=fallback, name=name)
    if optimizer == "fast_run":
        # As PyTensor's other JIT linkers (Numba, JAX): the scan trace rewrite for a backend that
        # does not preallocate outputs (sit-sots read only at [-1] become untraced states).
        optimizer = RewriteDatabaseQuery(include=["fast_run", "scan_save_mem_no_prealloc"])
    elif isinstance(optimizer, str):
        optimizer = RewriteDatabaseQuery(include=[optimizer])
    elif optimizer is None:
        optimizer = RewriteDatabaseQuery(include=[])
    return Mode(linker, optimizer)
