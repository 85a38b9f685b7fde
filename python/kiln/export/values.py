"""Constant values and types as the graph format writes them (GRAPH_FORMAT.md, "Types" and
"Constant values")."""
from __future__ import annotations

import base64
import io
import math

import numpy as np

#: dtypes graph format version 1 knows.
V1_DTYPES = {
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64",
}
#: dtypes version 2 adds.
V2_DTYPES = {"float16", "complex64", "complex128"}
#: the version-2 dtypes kiln implements (all of them).
V2_IMPLEMENTED_DTYPES = {"float16", "complex64", "complex128"}


def tensor_type(dtype: str, shape) -> dict:
    """{"dtype": ..., "shape": [...]} with None for lengths known only at run time.

    A negative static length is written as unknown: PyTensor's Split takes its outputs' static
    lengths from constant splits without checking their sign (`split(x, [5, -1])` has a length
    -1), and leaves the refusal to the call, as kiln's run-time check then does too.
    """
    return {"dtype": str(dtype), "shape": [None if s is None or int(s) < 0 else int(s) for s in shape]}


def _scalar_json(x, kind: str):
    if kind == "b":
        return bool(x)
    if kind in "iu":
        return int(x)
    if kind == "c":
        return [_scalar_json(x.real, "f"), _scalar_json(x.imag, "f")]
    f = float(x)
    if math.isnan(f):
        return "nan"
    if math.isinf(f):
        return "inf" if f > 0 else "-inf"
    return f


def nested_json(a: np.ndarray):
    """A NumPy array as nested JSON lists (a bare value for 0-d), non-finite floats as strings
    and complex numbers as [real, imag] pairs."""
    kind = a.dtype.kind
    if a.ndim == 0:
        return _scalar_json(a[()], kind)
    if kind == "f" and np.isfinite(a).all():
        return a.tolist()  # fast path: Python floats round-trip exactly
    return [nested_json(sub) for sub in a]


def npy_bytes(a: np.ndarray) -> bytes:
    """The .npy file of a (little-endian, C order)."""
    buf = io.BytesIO()
    np.save(buf, np.ascontiguousarray(a.astype(a.dtype.newbyteorder("<"), copy=False)), allow_pickle=False)
    return buf.getvalue()


def base64_value(a: np.ndarray) -> dict:
    """{"base64": ..., "order": "C"} with little-endian raw data."""
    raw = np.ascontiguousarray(a.astype(a.dtype.newbyteorder("<"), copy=False)).tobytes()
    return {"base64": base64.b64encode(raw).decode("ascii"), "order": "C"}
