"""kiln.pymc: a PyMC model's log density and its gradient as a kiln library.

The graph has one input, `x`: the model's free (continuous) value variables in PyMC's own
order (`model.value_vars`) and transformed spaces (`sigma_log__`, ...), raveled and
concatenated exactly as PyMC's DictToArrayBijection and join_nonshared_inputs do. Its outputs
are `logp` (a 0-d float) and `dlogp` (the gradient, shaped like x): one call gives both,
sharing their intermediates.
"""
from __future__ import annotations

import ctypes
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np

from .build import library_for
from .compiler import run_kiln
from .export import ExportedGraph, from_pytensor
from .loader import Function, load

def pymc_rewrites(model):
    """The PyTensor rewrites PyMC's own compiled logp gets (pymc.pytensorf.compile: fast_run plus
    its rewrite of parameter checks into logp = -inf, or none with check_bounds=False), minus what
    kiln does itself (in-place work) and C-backend-only forms."""
    from pytensor.graph.rewriting.db import RewriteDatabaseQuery

    from .pytensor_mode import KilnLinker

    check = "local_check_parameter_to_ninf_switch" if model.check_bounds else "local_remove_check_parameter"
    return RewriteDatabaseQuery(include=["fast_run", check], exclude=list(KilnLinker.incompatible_rewrites))


@dataclass
class CompiledLogp:
    """A compiled model density: logp and dlogp of the flat parameter vector."""

    function: Function  #: the loaded library (inputs: x; outputs: logp, dlogp)
    graph: ExportedGraph | None  #: what was exported (None when kiln computed the gradient)
    point_map_info: tuple  #: (name, shape, size, dtype) per value variable, in order
    initial_point: np.ndarray  #: the model's initial point, flattened
    library_path: Path
    graph_path: Path | None

    @property
    def ndim(self) -> int:
        """Length of the flat parameter vector."""
        return int(self.initial_point.size)

    @property
    def value_var_names(self) -> list[str]:
        return [info[0] for info in self.point_map_info]

    def logp_dlogp(self, x) -> tuple[float, np.ndarray]:
        """Log density and its gradient at x (one library call)."""
        logp, dlogp = self.function.call(np.asarray(x, dtype=self.initial_point.dtype))
        return float(logp), dlogp

    def logp(self, x) -> float:
        return self.logp_dlogp(x)[0]

    def dlogp(self, x) -> np.ndarray:
        return self.logp_dlogp(x)[1]

    def point_to_array(self, point: dict) -> np.ndarray:
        """A PyMC point (dict by value-variable name) as the flat vector x."""
        parts = [np.asarray(point[name], dtype=self.initial_point.dtype).ravel()
                 for name, *_ in self.point_map_info]
        return np.concatenate(parts) if parts else np.zeros(0, self.initial_point.dtype)

    def array_to_point(self, x) -> dict:
        """The flat vector x as a PyMC point."""
        x = np.asarray(x)
        point, start = {}, 0
        for name, shape, size, dtype in self.point_map_info:
            point[name] = x[start:start + size].reshape(shape).astype(dtype)
            start += size
        return point

    def _nutpie_symbol(self, suffix: str):
        symbol = f"{self.function.name}_nutpie_{suffix}"
        try:
            return getattr(self.function._library, symbol)
        except AttributeError:
            raise RuntimeError(f"{self.library_path} has no {symbol}: compile it with nutpie=True "
                               "(kiln compile --nutpie)") from None

    def nutpie_logp_address(self) -> int:
        """The address of the library's nutpie entry point (kiln compile --nutpie)
        `int64_t NAME_nutpie_logp(uint64_t dim, const double* x, double* grad, double* logp,
        void* user_data)`: what nutpie's compiled models call, with no Python in the loop."""
        return ctypes.cast(self._nutpie_symbol("logp"), ctypes.c_void_p).value

    def nutpie_logp(self, x) -> tuple[int, float, np.ndarray]:
        """Calls the nutpie entry point as nutpie does: (return code, logp, gradient). The code is
        0, or nutpie's convention (docs/python.md): 3/4 a non-finite gradient/logp, other positive
        codes a recoverable failure at x, negative ones an error no point can fix."""
        fn = self._nutpie_symbol("logp")
        fn.restype = ctypes.c_int64
        fn.argtypes = [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
        x = np.ascontiguousarray(x, dtype=np.float64)
        grad = np.empty_like(x)
        logp = np.zeros((), dtype=np.float64)
        code = fn(x.size, x.ctypes.data, grad.ctypes.data, logp.ctypes.data, None)
        return int(code), float(logp), grad

    def nutpie_last_error(self) -> str:
        """The calling thread's last message from the nutpie entry point."""
        fn = self._nutpie_symbol("last_error")
        fn.restype = ctypes.c_char_p
        fn.argtypes = []
        return (fn() or b"").decode("utf-8", "replace")


def _point_map_info(model, value_vars, point) -> tuple:
    return tuple((v.name, np.shape(point[v.name]), int(np.size(point[v.name])), str(v.dtype)) for v in value_vars)


def logp_graph(model, *, jacobian: bool = True, gradient: bool = True):
    """(outputs [logp, dlogp], x, point_map_info, initial point) of a model, before export."""
    from pymc.pytensorf import join_nonshared_inputs

    value_vars = list(model.value_vars)
    if not value_vars:
        raise ValueError("the model has no free variables")
    discrete = [v.name for v in value_vars if v not in model.continuous_value_vars]
    if discrete:
        raise ValueError(f"kiln.pymc needs a model of continuous variables; {', '.join(discrete)} are discrete")
    point = model.initial_point()
    outputs = [model.logp(jacobian=jacobian)]
    if gradient:
        outputs.append(model.dlogp(jacobian=jacobian))
    outputs, x = join_nonshared_inputs(point, outputs, value_vars)
    x.name = "x"
    outputs[0].name = "logp"
    if gradient:
        outputs[1].name = "dlogp"
    info = _point_map_info(model, value_vars, point)
    flat = np.concatenate([np.asarray(point[v.name], dtype=x.dtype).ravel() for v in value_vars])
    return outputs, x, info, flat


def compile_logp(
    model,
    path: str | os.PathLike | None = None,
    *,
    name: str = "logp",
    jacobian: bool = True,
    grad: str = "pytensor",
    rewrite="pymc",
    options: Sequence[str] = (),
    num_threads: int = 1,
    nutpie: bool = True,
) -> CompiledLogp:
    """Compiles a PyMC model's logp and dlogp into a kiln library.

    path: the folder for NAME.json, libNAME.so and NAME.h (default: kiln's Python cache).
    grad: "pytensor" differentiates with pytensor.grad (PyMC's own gradient graph);
        "kiln" exports logp only and lets `kiln grad` differentiate it.
    rewrite: PyTensor rewrites before export: "pymc" (default) those PyMC's compiled logp gets
        (pymc_rewrites), or anything kiln.from_pytensor takes; kiln rewrites again itself.
    options: extra `kiln compile` flags.
    nutpie: also export the nutpie entry point (kiln compile --nutpie; nutpie_logp_address()).
    """
    if grad not in ("pytensor", "kiln"):
        raise ValueError(f"grad must be 'pytensor' or 'kiln', not {grad!r}")
    outputs, x, info, flat = logp_graph(model, jacobian=jacobian, gradient=grad == "pytensor")
    options = [*options, "--nutpie"] if nutpie and "--nutpie" not in options else list(options)
    if isinstance(rewrite, str) and rewrite == "pymc":
        rewrite = pymc_rewrites(model)
    exported = from_pytensor(outputs, [x], rewrite=rewrite, name=name, shared="constant")
    out_dir = Path(path) if path is not None else None
    if grad == "pytensor":
        if out_dir is None:
            lib = library_for(exported, name=name, options=options)
            graph_path = lib.parent / "graph.json"
        else:
            graph_path = exported.save(out_dir / f"{name}.json")
            lib = library_for(graph_path, name=name, options=options, out_dir=out_dir)
        fn = load(lib, num_threads=num_threads)
        return CompiledLogp(fn, exported, info, flat, Path(lib), graph_path)
    out_dir = out_dir or _scratch_dir(exported)
    logp_file = exported.save(out_dir / f"{name}_logp.json")
    graph_path = out_dir / f"{name}.json"
    run_kiln(["grad", str(logp_file), "--cost", "logp", "--wrt", "x", "-o", str(graph_path)])
    lib = library_for(graph_path, name=name, options=options, out_dir=out_dir)
    fn = load(lib, num_threads=num_threads)
    if [s.name for s in fn.outputs] != ["logp", "grad_x"]:
        raise RuntimeError(f"kiln grad gave outputs {[s.name for s in fn.outputs]}, expected logp and grad_x")
    return CompiledLogp(fn, None, info, flat, Path(lib), graph_path)


def _scratch_dir(exported: ExportedGraph) -> Path:
    from .compiler import cache_root, graph_digest

    return cache_root() / ("grad-" + graph_digest(exported.to_json(), exported.sidecar_bytes()))


def nutpie_model(model, compiled: CompiledLogp | None = None, **compile_kwargs):
    """A nutpie model whose log density is kiln's library: `nutpie.sample(kiln.pymc.nutpie_model(model))`.

    nutpie calls the library's nutpie entry point (compiled.nutpie_logp_address()) from its own
    threads, with no Python in the loop. nutpie's public interface takes compiled models only from
    its own compile_pymc_model, so this compiles the model there (numba backend: the initial
    point and the draws' deterministics come from it) and swaps its logp callback for kiln's;
    both follow PyMC's ordering of the flat vector, which is checked.
    """
    import dataclasses

    import nutpie

    compiled = compiled or compile_logp(model, **compile_kwargs)
    theirs = nutpie.compile_pymc_model(model, backend="numba")
    if theirs.n_dim != compiled.ndim:
        raise RuntimeError(f"nutpie's model has {theirs.n_dim} parameters, kiln's {compiled.ndim}")
    names = list(theirs.shape_info[0])[: len(compiled.value_var_names)]
    if names != compiled.value_var_names:
        raise RuntimeError(f"nutpie orders the parameters {names}, kiln {compiled.value_var_names}")

    class _Address:  # what nutpie reads of its numba cfunc
        address = compiled.nutpie_logp_address()
        keep_alive = compiled

    return dataclasses.replace(theirs, compiled_logp_func=_Address())


__all__ = ["compile_logp", "CompiledLogp", "logp_graph", "nutpie_model", "pymc_rewrites"]
