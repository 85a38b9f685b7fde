"""kiln.load: call a library kiln compiled, with NumPy arrays in and out and no copies.

Inputs become DLTensors pointing at the arrays' own memory, with their strides in elements
(views, transposes and negative strides included). Outputs are the library's DLManagedTensors
adopted by NumPy: the array's base object calls the tensor's deleter when the last view of it
dies. `out=` writes into caller-provided C-contiguous arrays through call_into, which in a
steady state allocates nothing. Each thread gets its own kiln context, so one Function can be
called from several threads at once; ctypes releases the GIL during the call.
"""
from __future__ import annotations

import ctypes
import os
import threading
import warnings
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from . import _abi
from .errors import KilnLoadError, call_error


class KilnCopyWarning(UserWarning):
    """An input had to be copied because DLPack cannot describe its layout or byte order."""


@dataclass(frozen=True)
class TensorSpec:
    """An input or output of a compiled graph: its name, dtype and static shape (None where the
    length is known only at run time), and what it holds: "tensor", or "rng" (a NumPy
    Generator's PCG64 state as uint64[6], see kiln.rng_words)."""

    name: str
    dtype: np.dtype
    shape: tuple
    kind: str = "tensor"

    @property
    def ndim(self) -> int:
        return len(self.shape)


def _specs(infos, kinds, count: int) -> list[TensorSpec]:
    specs = []
    for k in range(count):
        info = infos[k]
        shape = tuple(None if info.shape[d] < 0 else int(info.shape[d]) for d in range(info.ndim))
        name = info.name.decode("utf-8", "replace") if info.name else ""
        kind = _abi.KILN_KINDS[kinds[k]] if kinds and 0 <= kinds[k] < len(_abi.KILN_KINDS) else "tensor"
        specs.append(TensorSpec(name, _abi.KILN_DTYPES[info.dtype], shape, kind))
    return specs


class _OwnedOutput:
    """The base object of an output array: it holds the library's DLManagedTensor and calls its
    deleter when NumPy lets go of the last array viewing it."""

    __slots__ = ("__array_interface__", "_managed", "__weakref__")

    def __init__(self, managed: ctypes.POINTER(_abi.DLManagedTensor), dtype: np.dtype, shape: tuple):
        t = managed.contents.dl_tensor
        strides = None
        if t.strides:
            strides = tuple(int(t.strides[d]) * dtype.itemsize for d in range(t.ndim))
        self._managed = managed
        self.__array_interface__ = {
            "version": 3,
            "shape": shape,
            "typestr": dtype.str,
            "data": (int(t.data or 0) + int(t.byte_offset), False),
            "strides": strides,
        }

    def __del__(self):
        managed, self._managed = self._managed, None
        if managed:
            try:
                managed.contents.deleter(managed)
            except Exception:  # interpreter shutdown: the process is going away anyway
                pass


def _adopt(managed) -> np.ndarray:
    """A NumPy array over a DLManagedTensor's memory, owning it (no copy)."""
    t = managed.contents.dl_tensor
    if t.device.device_type != _abi.KDL_CPU:
        managed.contents.deleter(managed)
        raise KilnLoadError("a kiln library returned a tensor that is not in CPU memory")
    dtype = _abi.numpy_dtype(t.dtype)
    shape = tuple(int(t.shape[d]) for d in range(t.ndim))
    if 0 in shape:  # no memory to share, and NumPy refuses a null data pointer
        managed.contents.deleter(managed)
        return np.empty(shape, dtype)
    return np.asarray(_OwnedOutput(managed, dtype, shape))


class _ThreadState:
    """One thread's kiln context and the DLTensor arrays its calls fill in."""

    def __init__(self, fn: "Function"):
        self._destroy = fn._info.context_destroy
        self.ctx = fn._info.context_create()
        if not self.ctx:
            raise MemoryError("kiln: context_create returned null (out of memory)")
        fn._info.context_set_num_threads(self.ctx, fn._num_threads)
        self.inputs = (_abi.DLTensor * max(fn._num_inputs, 1))()
        self.outputs = (_abi.DLTensor * max(fn._num_outputs, 1))()
        self.managed = (ctypes.POINTER(_abi.DLManagedTensor) * max(fn._num_outputs, 1))()

    def __del__(self):
        ctx, self.ctx = self.ctx, None
        if ctx:
            try:
                self._destroy(ctx)
            except Exception:
                pass


def _fill_dltensor(dl: _abi.DLTensor, arr: np.ndarray, keep: list) -> None:
    """Points `dl` at `arr`'s memory; `keep` receives the ctypes arrays that must outlive the call."""
    ndim = arr.ndim
    shape = (ctypes.c_int64 * max(ndim, 1))(*arr.shape)
    strides = (ctypes.c_int64 * max(ndim, 1))(*(s // arr.itemsize for s in arr.strides))
    keep.append(shape)
    keep.append(strides)
    dl.data = arr.ctypes.data
    dl.device = _abi.DLDevice(_abi.KDL_CPU, 0)
    dl.ndim = ndim
    dl.dtype = _abi.dl_dtype(arr.dtype)
    dl.shape = shape
    dl.strides = strides
    dl.byte_offset = 0


def as_dlpack_input(value: Any, spec: TensorSpec | None = None, *, strict: bool = False, what: str = "input"):
    """The NumPy array a kiln call reads for `value`: the array itself whenever DLPack can
    describe it (any element-aligned strides, native byte order), else a C-contiguous copy with a
    KilnCopyWarning (or a ValueError when `strict`). Python scalars and lists take the dtype of
    `spec`; objects with __dlpack__ (torch, JAX on CPU) are borrowed through np.from_dlpack.
    For an rng input, a NumPy Generator (PCG64) is passed as its uint64[6] state words."""
    if isinstance(value, np.random.Generator) and spec is not None and spec.kind == "rng":
        from .export.rng import rng_words

        value = rng_words(value)
    if isinstance(value, np.ndarray):
        arr = value
    elif hasattr(value, "__dlpack__") and not isinstance(value, np.generic):
        arr = np.from_dlpack(value)
    elif isinstance(value, (int, float, bool, list, tuple)) and spec is not None:
        arr = np.asarray(value, dtype=spec.dtype)
    else:
        arr = np.asarray(value)
    if arr.dtype.kind not in "biufc" or _abi.dl_dtype(arr.dtype.newbyteorder("=")) is None:
        raise TypeError(f"kiln {what}: dtype {arr.dtype} is not supported (bool, int8..64, uint8..64, float16/32/64, complex64/128)")
    reason = None
    if not arr.dtype.isnative:
        reason = f"has non-native byte order ({arr.dtype.str})"
    elif any(s % arr.itemsize for s in arr.strides) and arr.size > 1:
        reason = f"has strides {arr.strides} that are not multiples of its item size {arr.itemsize}"
    if reason:
        if strict:
            raise ValueError(f"kiln {what} {reason}; DLPack cannot describe it (pass a copy)")
        warnings.warn(f"kiln {what} {reason}: copying it", KilnCopyWarning, stacklevel=3)
        arr = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("="))
    elif any(s % arr.itemsize for s in arr.strides):  # size <= 1: the strides are never used
        arr = np.lib.stride_tricks.as_strided(arr, strides=[0] * arr.ndim)
    return arr


class Function:
    """A graph compiled by kiln, callable with NumPy arrays (see module doc)."""

    def __init__(self, library: ctypes.CDLL, info: _abi.GraphInfo, path: str, *, num_threads: int = 1,
                 strict: bool = False):
        self._library = library  # keeps the code alive (ctypes never unloads it anyway)
        self._info = info
        self.path = path
        self.strict = strict
        self.name = info.name.decode()
        self.graph_name = (info.graph_name or b"").decode("utf-8", "replace")
        self.kiln_version = (info.kiln_version or b"").decode()
        self._num_inputs = info.num_inputs
        self._num_outputs = info.num_outputs
        self.inputs = _specs(info.inputs, info.input_kinds, info.num_inputs)
        self.outputs = _specs(info.outputs, info.output_kinds, info.num_outputs)
        self._num_threads = max(1, int(num_threads))
        self._local = threading.local()
        self._states: "weakref.WeakSet[_ThreadState]" = weakref.WeakSet()
        self._states_lock = threading.Lock()
        self._input_index = {}
        for k, spec in enumerate(self.inputs):
            if spec.name and spec.name not in self._input_index:
                self._input_index[spec.name] = k

    def __repr__(self) -> str:
        ins = ", ".join(f"{s.name or '?'}: {s.dtype}{list(s.shape)}" for s in self.inputs)
        outs = ", ".join(f"{s.name or '?'}: {s.dtype}{list(s.shape)}" for s in self.outputs)
        return f"<kiln.Function {self.name}({ins}) -> ({outs}) from {self.path}>"

    # --- threads and contexts -------------------------------------------------------------------

    @property
    def num_threads(self) -> int:
        """Threads each call may use (OpenMP loops and BLAS); 1 by default."""
        return self._num_threads

    @num_threads.setter
    def num_threads(self, n: int) -> None:
        self._num_threads = max(1, int(n))
        with self._states_lock:
            for state in list(self._states):
                self._info.context_set_num_threads(state.ctx, self._num_threads)

    def _state(self) -> _ThreadState:
        state = getattr(self._local, "state", None)
        if state is None:
            state = _ThreadState(self)
            self._local.state = state
            with self._states_lock:
                self._states.add(state)
        return state

    # --- calls -------------------------------------------------------------------------------------

    def _bind(self, args: Sequence[Any], kwargs: dict) -> list:
        names = [s.name or str(k) for k, s in enumerate(self.inputs)]
        values = bind_arguments(args, kwargs, names, self._input_index, self.name)
        return [
            as_dlpack_input(v, spec, strict=self.strict, what=f"input {k} ({spec.name or '?'}) of {self.name}")
            for k, (v, spec) in enumerate(zip(values, self.inputs))
        ]

    def _check(self, state: _ThreadState, status: int) -> None:
        if status:
            msg = self._info.context_last_error(state.ctx)
            raise call_error(status, (msg or b"").decode("utf-8", "replace"), self.name)

    def call(self, *args, **kwargs) -> list[np.ndarray]:
        """Runs the graph; returns every output as a new array owning the library's memory."""
        arrays = self._bind(args, kwargs)
        state = self._state()
        keep: list = []
        for dl, arr in zip(state.inputs, arrays):
            _fill_dltensor(dl, arr, keep)
        managed = state.managed
        for k in range(self._num_outputs):
            managed[k] = None
        status = self._info.call(state.ctx, state.inputs, managed)
        self._check(state, status)
        # managed[k] is a view into the array the next call overwrites: take the addresses.
        addresses = [ctypes.cast(managed[k], ctypes.c_void_p).value for k in range(self._num_outputs)]
        return [_adopt(ctypes.cast(a, ctypes.POINTER(_abi.DLManagedTensor))) for a in addresses]

    def output_shapes(self, *args, **kwargs) -> list[tuple]:
        """The outputs' shapes for these inputs (computing only what the shapes need)."""
        arrays = self._bind(args, kwargs)
        state = self._state()
        keep: list = []
        for dl, arr in zip(state.inputs, arrays):
            _fill_dltensor(dl, arr, keep)
        total = sum(s.ndim for s in self.outputs)
        flat = (ctypes.c_int64 * max(total, 1))()
        self._check(state, self._info.output_shapes(state.ctx, state.inputs, flat))
        shapes, pos = [], 0
        for spec in self.outputs:
            shapes.append(tuple(int(flat[pos + d]) for d in range(spec.ndim)))
            pos += spec.ndim
        return shapes

    def call_into(self, out: Sequence[np.ndarray], *args, **kwargs) -> list[np.ndarray]:
        """Runs the graph into caller-provided outputs (C-contiguous, the right dtype and shape:
        see output_shapes); returns `out`."""
        out = list(out)
        if len(out) != self._num_outputs:
            raise TypeError(f"{self.name} has {self._num_outputs} output(s), out= gave {len(out)}")
        for k, o in enumerate(out):
            if not isinstance(o, np.ndarray):
                raise TypeError(f"out[{k}] of {self.name} must be a NumPy array, not {type(o).__name__}")
            if not o.flags.writeable:
                raise ValueError(f"out[{k}] of {self.name} is read-only")
            if _abi.dl_dtype(o.dtype) is None:
                raise TypeError(f"out[{k}] of {self.name}: dtype {o.dtype} is not supported")
        arrays = self._bind(args, kwargs)
        state = self._state()
        keep: list = []
        for dl, arr in zip(state.inputs, arrays):
            _fill_dltensor(dl, arr, keep)
        for dl, arr in zip(state.outputs, out):
            _fill_dltensor(dl, arr, keep)
        self._check(state, self._info.call_into(state.ctx, state.inputs, state.outputs))
        return out

    def bind_into(self, out: Sequence[np.ndarray], *args, **kwargs):
        """A callable with no arguments that runs the graph from these inputs into `out` (as
        call_into) with everything prepared once: the per-call cost is one ctypes call. The
        arrays are read and written in place at each call, so change the inputs' contents
        (x[:] = ...) between calls, never rebind them; the callable keeps them alive. For
        samplers and benchmarks calling one density many times from Python."""
        out = list(out)
        self.call_into(out, *args, **kwargs)  # checks everything once (and warms the context up)
        arrays = self._bind(args, kwargs)
        state = self._state()
        keep: list = [arrays, out]
        inputs = (_abi.DLTensor * max(self._num_inputs, 1))()
        outputs = (_abi.DLTensor * max(self._num_outputs, 1))()
        for dl, arr in zip(inputs, arrays):
            _fill_dltensor(dl, arr, keep)
        for dl, arr in zip(outputs, out):
            _fill_dltensor(dl, arr, keep)
        raw = _abi.CallIntoByAddress(ctypes.cast(self._info.call_into, ctypes.c_void_p).value)
        ctx, check = state.ctx, self._check
        inputs_at, outputs_at = ctypes.addressof(inputs), ctypes.addressof(outputs)

        def run() -> None:
            status = raw(ctx, inputs_at, outputs_at)
            if status:
                check(state, status)

        run.keep = (keep, state, inputs, outputs)  # buffers and context outlive the callable's uses
        return run

    def __call__(self, *args, out=None, **kwargs):
        """Runs the graph: one output comes back as an array, several as a tuple. With `out=`
        (an array, or a sequence with one array per output) the results are written there."""
        if out is not None:
            outs = [out] if isinstance(out, np.ndarray) else list(out)
            self.call_into(outs, *args, **kwargs)
            return out
        results = self.call(*args, **kwargs)
        return results[0] if self._num_outputs == 1 else tuple(results)


_MISSING = object()


def bind_arguments(args: Sequence[Any], kwargs: dict, names: list[str], index: dict[str, int], what: str) -> list:
    """Input values in order from positional and keyword arguments (keywords by input name,
    `index` maps a name to its position); a TypeError names what is missing, unknown or doubled."""
    if len(args) > len(names):
        raise TypeError(f"{what} takes {len(names)} input(s), got {len(args)}")
    values = list(args) + [_MISSING] * (len(names) - len(args))
    for key, value in kwargs.items():
        k = index.get(key)
        if k is None:
            raise TypeError(f"{what} has no input named {key!r}")
        if values[k] is not _MISSING:
            raise TypeError(f"{what} got input {key!r} twice")
        values[k] = value
    missing = [names[k] for k, v in enumerate(values) if v is _MISSING]
    if missing:
        raise TypeError(f"{what} is missing input(s) {', '.join(missing)}")
    return values


def _library_path(path: str | os.PathLike) -> Path:
    p = Path(path)
    if p.is_dir():
        libs = sorted(p.glob("lib*.so"))
        if len(libs) != 1:
            found = ", ".join(x.name for x in libs) or "none"
            raise KilnLoadError(f"{p} must hold exactly one lib*.so to load (found {found}); pass the file")
        return libs[0]
    if not p.exists():
        raise KilnLoadError(f"no such library: {p}")
    return p


def load(path: str | os.PathLike, name: str | None = None, *, num_threads: int = 1, strict: bool = False) -> Function:
    """Opens a library kiln compiled (`libNAME.so`, or the folder `kiln compile -o` wrote) and
    returns its graph as a callable Function. `name` is the symbol prefix (default: from the file
    name). With `strict`, inputs DLPack cannot describe raise instead of being copied."""
    lib_path = _library_path(path)
    if name is None:
        stem = lib_path.name
        name = stem[3:-3] if stem.startswith("lib") and stem.endswith(".so") else lib_path.stem
    try:
        library = ctypes.CDLL(str(lib_path.resolve()), mode=os.RTLD_NOW | os.RTLD_LOCAL)
    except OSError as e:
        raise KilnLoadError(f"cannot load {lib_path}: {e}") from None
    try:
        info_fn = getattr(library, f"{name}_info")
    except AttributeError:
        raise KilnLoadError(f"{lib_path} has no graph named {name!r} (no symbol {name}_info)") from None
    info_fn.restype = ctypes.POINTER(_abi.GraphInfo)
    info_fn.argtypes = []
    ptr = info_fn()
    if not ptr:
        raise KilnLoadError(f"{lib_path}: {name}_info returned null")
    info = ptr.contents
    if info.abi_version != _abi.ABI_VERSION:
        raise KilnLoadError(
            f"{lib_path}: graph {name!r} uses kiln ABI version {info.abi_version} but this package speaks "
            f"version {_abi.ABI_VERSION}; recompile it with a matching kiln"
        )
    return Function(library, info, str(lib_path), num_threads=num_threads, strict=strict)
