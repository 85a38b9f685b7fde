#!/usr/bin/env python3
"""NumPy's own error on the functions kiln vectorises (issue 20's accuracy bound), measured as
tests/unit/test_vector_accuracy.cpp measures kiln's: float32 on every STRIDE-th bit pattern of
all 2^32 (default 97; the test takes 257) against the float64 function, float64 on 2^18 log-uniform /
uniform values of each function's range plus 2^16 random bit patterns against np.longdouble
(x86-64: 64-bit mantissa). Errors in units of the last place of the exact value's binade.

    /usr/bin/python3 bench/numpy_math_error.py [STRIDE]

Prints NumPy's version and the SIMD extensions it dispatches to on this machine: on AVX2 it
vectorises float32 exp, log, sin, cos and tanh itself; with AVX-512 (SKX) it uses SVML."""
import sys

import numpy as np

STRIDE = int(sys.argv[1]) if len(sys.argv) > 1 else 97
FUNCS = {  # name: (numpy function, float64 sample range)
    "exp": (np.exp, (-750, 710)), "exp2": (np.exp2, (-1080, 1024)), "expm1": (np.expm1, (-40, 710)),
    "log": (np.log, (0, 1e300)), "log2": (np.log2, (0, 1e300)), "log10": (np.log10, (0, 1e300)),
    "log1p": (np.log1p, (-1, 1e300)), "sin": (np.sin, (-1e5, 1e5)), "cos": (np.cos, (-1e5, 1e5)),
    "tan": (np.tan, (-1e5, 1e5)), "asin": (np.arcsin, (-1, 1)), "acos": (np.arccos, (-1, 1)),
    "atan": (np.arctan, (-1e10, 1e10)), "tanh": (np.tanh, (-25, 25)), "atanh": (np.arctanh, (-1, 1)),
}


def ulp_error(got, ref, dtype):
    """Largest |got - ref| in ULP of dtype at ref (NaN agreeing is 0; finite ones only)."""
    info = np.finfo(dtype)
    ok = np.isfinite(ref) & np.isfinite(got) & (np.abs(ref) <= info.max)
    ref, got = ref[ok], got[ok].astype(ref.dtype)
    _, e = np.frexp(ref)
    e = np.maximum(e, info.minexp)
    ulp = np.ldexp(np.ones_like(ref), (e - info.nmant - 1).astype(np.int32))
    return float(np.max(np.abs(got - ref) / ulp)) if ref.size else 0.0


def float32_error(f):
    worst = 0.0
    chunk = 1 << 22
    total = 1 << 32
    with np.errstate(all="ignore"):
        for start in range(0, total, chunk * STRIDE):
            bits = np.arange(start, min(total, start + chunk * STRIDE), STRIDE, dtype=np.uint64).astype(np.uint32)
            x = bits.view(np.float32)
            worst = max(worst, ulp_error(f(x), f(x.astype(np.float64)), np.float32))
    return worst


def float64_error(f, lo, hi):
    rng = np.random.default_rng(20)
    n = 1 << 18
    if hi > 1e6:
        mag = np.exp(rng.uniform(np.log(1e-300), np.log(hi), n))
        x = mag.copy()
        if lo < 0:
            x[1::2] = -rng.uniform(0, 1, n // 2) if lo == -1 else -mag[1::2]
    else:
        x = rng.uniform(lo, hi, n)
    x = np.concatenate([x, rng.integers(0, 2**64, 1 << 16, dtype=np.uint64).view(np.float64)])
    with np.errstate(all="ignore"):
        return ulp_error(f(x), f(x.astype(np.longdouble)), np.float64)


def main():
    print(f"NumPy {np.__version__}; float32: every {STRIDE}th of the 2^32 inputs")
    try:
        from numpy.core._multiarray_umath import __cpu_dispatch__, __cpu_features__
        print("dispatch:", ", ".join(f for f in __cpu_dispatch__ if __cpu_features__.get(f)))
    except ImportError:
        pass
    print("| function | float32 ULP | float64 ULP |\n|---|---:|---:|")
    for name, (f, (lo, hi)) in FUNCS.items():
        print(f"| {name} | {float32_error(f):.2f} | {float64_error(f, lo, hi):.2f} |", flush=True)


if __name__ == "__main__":
    main()
