"""ctypes mirrors of runtime/include/kiln/kiln.h and the DLPack structs it uses.

Only layouts live here; the loader (loader.py) gives them behaviour. Keep this file in step
with kiln.h: KILN_ABI_VERSION, the status and dtype enums, kiln_graph_info's field order.
"""
from __future__ import annotations

import ctypes

import numpy as np

#: kiln.h's KILN_ABI_VERSION: a library with another version is refused.
ABI_VERSION = 2


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    pass


DLManagedTensorDeleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", DLManagedTensorDeleter),
]

KDL_CPU = 1

# DLPack type codes (kDLBool is 6 in DLPack >= 0.8; kiln.h uses it for bool).
_DL_INT, _DL_UINT, _DL_FLOAT, _DL_COMPLEX, _DL_BOOL = 0, 1, 2, 5, 6


class TensorInfo(ctypes.Structure):
    _fields_ = [
        ("name", ctypes.c_char_p),
        ("dtype", ctypes.c_int32),
        ("ndim", ctypes.c_int32),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
    ]


ContextPtr = ctypes.c_void_p

GraphInfoFields = [
    ("abi_version", ctypes.c_uint32),
    ("name", ctypes.c_char_p),
    ("graph_name", ctypes.c_char_p),
    ("kiln_version", ctypes.c_char_p),
    ("num_inputs", ctypes.c_int32),
    ("num_outputs", ctypes.c_int32),
    ("inputs", ctypes.POINTER(TensorInfo)),
    ("outputs", ctypes.POINTER(TensorInfo)),
    ("context_create", ctypes.CFUNCTYPE(ContextPtr)),
    ("context_destroy", ctypes.CFUNCTYPE(None, ContextPtr)),
    ("context_set_num_threads", ctypes.CFUNCTYPE(None, ContextPtr, ctypes.c_int32)),
    ("context_last_error", ctypes.CFUNCTYPE(ctypes.c_char_p, ContextPtr)),
    (
        "call",
        ctypes.CFUNCTYPE(
            ctypes.c_int32, ContextPtr, ctypes.POINTER(DLTensor), ctypes.POINTER(ctypes.POINTER(DLManagedTensor))
        ),
    ),
    (
        "output_shapes",
        ctypes.CFUNCTYPE(ctypes.c_int32, ContextPtr, ctypes.POINTER(DLTensor), ctypes.POINTER(ctypes.c_int64)),
    ),
    ("call_into", ctypes.CFUNCTYPE(ctypes.c_int32, ContextPtr, ctypes.POINTER(DLTensor), ctypes.POINTER(DLTensor))),
    ("input_kinds", ctypes.POINTER(ctypes.c_int32)),  # ABI 2: a kiln_kind per input
    ("output_kinds", ctypes.POINTER(ctypes.c_int32)),
]


class GraphInfo(ctypes.Structure):
    _fields_ = GraphInfoFields


# call_into with plain addresses for its arguments: ctypes converts a c_void_p argument from an
# int faster than a POINTER(DLTensor) one from an array (radon's bind_into: 0.4 µs of 4.7 a call).
CallIntoByAddress = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)


#: kiln_kind codes (kiln.h) in order: a tensor, or an rng (a PCG64 state as uint64[6]).
KILN_KINDS = ["tensor", "rng"]

# kiln_dtype codes (kiln.h) in order: the NumPy dtype of each.
KILN_DTYPES = [
    np.dtype(np.bool_),
    np.dtype(np.int8),
    np.dtype(np.int16),
    np.dtype(np.int32),
    np.dtype(np.int64),
    np.dtype(np.uint8),
    np.dtype(np.uint16),
    np.dtype(np.uint32),
    np.dtype(np.uint64),
    np.dtype(np.float32),
    np.dtype(np.float64),
    np.dtype(np.float16),
    np.dtype(np.complex64),
    np.dtype(np.complex128),
]


def dl_dtype(dtype: np.dtype) -> DLDataType | None:
    """The DLPack dtype of a NumPy dtype kiln supports (native byte order), else None."""
    dtype = np.dtype(dtype)
    if not dtype.isnative:
        return None
    if dtype.kind == "b":
        return DLDataType(_DL_BOOL, 8, 1)
    code = {"i": _DL_INT, "u": _DL_UINT, "f": _DL_FLOAT, "c": _DL_COMPLEX}.get(dtype.kind)
    if code is None or dtype not in KILN_DTYPES:
        return None
    return DLDataType(code, dtype.itemsize * 8, 1)


def numpy_dtype(dl: DLDataType) -> np.dtype:
    """The NumPy dtype of a DLPack dtype that a kiln library produced."""
    if dl.lanes != 1:
        raise TypeError(f"vector DLPack dtype (lanes={dl.lanes}) is not supported")
    if dl.code == _DL_BOOL and dl.bits == 8:
        return np.dtype(np.bool_)
    kind = {_DL_INT: "i", _DL_UINT: "u", _DL_FLOAT: "f", _DL_COMPLEX: "c"}.get(dl.code)
    if kind is None or dl.bits % 8:
        raise TypeError(f"unsupported DLPack dtype code={dl.code} bits={dl.bits}")
    return np.dtype(f"{kind}{dl.bits // 8}")
