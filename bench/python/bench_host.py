"""Issue 20, item 3: kiln's W1, W3 and W4 libraries called from a Python process that imported
NumPy first, beside the same workloads' hand-written -ffast-math loops (libmvec) in the same
process and run: the ratios bench/run prints from C++, measured where most users call kiln.

    python bench/python/bench_host.py --libs DIR --hand LIB [--reps 15] [--threads 1 2]

DIR holds libw1_elemwise_*.so, libw3_logsoftmax_*.so and libw4_logreg_*.so (bench/run compiles
them into build-bench/bench-work/libs; W4 is `kiln grad` of graphs/w4_loss_*.json); LIB is
libkiln_bench_host_loops.so (bench/host_loops.cpp, built by bench/run). kiln is called through
the `kiln` Python package (python/, on sys.path here) with call_into into preallocated outputs,
as the C++ bench calls it. Each repetition times kiln and the hand loop back to back (medians of
`--reps`); the table is printed and written as JSON with --json.

Also reported: which BLAS the process had loaded before kiln's libraries, and whether its
thread count was left as it was (kiln sets a pthread OpenBLAS's count to the context's
threads for its products: templates/cpp/prologue/blas.hpp).
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np  # first, as a host process would: its BLAS is loaded before kiln's libraries

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
import kiln  # noqa: E402

W3_ROWS, W3_COLS = 10_000, 1_000  # bench/hand_loops.hpp
W4_N, W4_D = 1_000_000, 20
W1_N = 1 << 24


def loaded_blas() -> list[str]:
    """The BLAS libraries mapped into this process."""
    found = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1] if "/" in line else ""
            if any(k in os.path.basename(path) for k in ("openblas", "blas", "mkl")):
                found.add(path)
    return sorted(found)


def openblas_threads() -> dict[str, int]:
    """Each loaded OpenBLAS's thread count (NumPy's wheels rename its symbols)."""
    counts = {}
    for path in loaded_blas():
        lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD if hasattr(os, "RTLD_NOLOAD") else 0)
        for symbol in ("openblas_get_num_threads", "scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_"):
            fn = getattr(lib, symbol, None)
            if fn is not None:
                counts[os.path.basename(path)] = int(fn())
                break
    return counts


def median_ms(samples: list[float]) -> float:
    return 1e3 * statistics.median(samples)


def run(args) -> list[dict]:
    hand = ctypes.CDLL(str(args.hand))
    rng = np.random.default_rng(0)
    rows = []
    for dtype in ("float64", "float32"):
        np_t = np.dtype(dtype)
        c_t = ctypes.c_double if dtype == "float64" else ctypes.c_float
        ptr = ctypes.POINTER(c_t)

        def p(a):
            return a.ctypes.data_as(ptr)

        # W1: exp(sin x) + 0.5 log1p(x^2)
        x1 = rng.uniform(-4, 4, W1_N).astype(np_t)
        y1k, y1h = np.empty_like(x1), np.empty_like(x1)
        w1 = kiln.load(args.libs / f"libw1_elemwise_{dtype}.so")
        w1_hand = getattr(hand, f"kiln_bench_fast_w1_{dtype}")
        # W3: row log_softmax
        x3 = rng.normal(size=(W3_ROWS, W3_COLS)).astype(np_t)
        y3k, y3h = np.empty_like(x3), np.empty_like(x3)
        w3 = kiln.load(args.libs / f"libw3_logsoftmax_{dtype}.so")
        w3_hand = getattr(hand, f"kiln_bench_fast_w3_{dtype}")
        # W4: logistic loss and its gradient
        X = rng.normal(size=(W4_N, W4_D)).astype(np_t)
        yv = (rng.uniform(size=W4_N) < 0.5).astype(np_t)
        w = (0.1 * rng.normal(size=W4_D)).astype(np_t)
        b = np.asarray(0.05, dtype=np_t)
        w4 = kiln.load(args.libs / f"libw4_logreg_{dtype}.so")
        w4_outs = [np.empty(shape, dtype=np_t) for shape in w4.output_shapes(X, yv, w, b)]
        ph, lossh, gwh, gbh = (np.empty(W4_N, np_t), np.empty((), np_t), np.empty(W4_D, np_t), np.empty((), np_t))
        w4_hand = getattr(hand, f"kiln_bench_fast_w4_{dtype}")

        for threads in args.threads:
            for fn in (w1, w3, w4):
                fn.num_threads = threads
            cases = {
                "W1": (lambda: w1.call_into([y1k], x1), lambda: w1_hand(p(x1), p(y1h), W1_N, threads),
                       lambda: np.testing.assert_allclose(y1k, y1h, rtol=1e-5 if dtype == "float32" else 1e-12)),
                "W3": (lambda: w3.call_into([y3k], x3), lambda: w3_hand(p(x3), p(y3h), threads),
                       lambda: np.testing.assert_allclose(y3k, y3h, rtol=1e-4 if dtype == "float32" else 1e-11, atol=1e-5)),
                "W4": (lambda: w4.call_into(w4_outs, X, yv, w, b),
                       lambda: w4_hand(p(X), p(yv), p(w), c_t(float(b)), p(ph), p(lossh), p(gwh), p(gbh), threads),
                       lambda: np.testing.assert_allclose(w4_outs[0], lossh, rtol=1e-3 if dtype == "float32" else 1e-9)),
            }
            for name, (kiln_call, hand_call, check) in cases.items():
                kiln_call()
                hand_call()
                check()  # the two compute the same thing
                kt, ht = [], []
                for _ in range(args.reps):
                    t0 = time.perf_counter()
                    kiln_call()
                    t1 = time.perf_counter()
                    hand_call()
                    t2 = time.perf_counter()
                    kt.append(t1 - t0)
                    ht.append(t2 - t1)
                row = {"workload": name, "dtype": dtype, "threads": threads, "kiln_ms": median_ms(kt),
                       "hand_fastmath_ms": median_ms(ht)}
                row["ratio"] = row["kiln_ms"] / row["hand_fastmath_ms"]
                rows.append(row)
                print(f"{name} {dtype:8} {threads} thr  kiln {row['kiln_ms']:8.2f} ms  hand -ffast-math "
                      f"{row['hand_fastmath_ms']:8.2f} ms  ratio {row['ratio']:.2f}", flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--libs", type=Path, required=True)
    ap.add_argument("--hand", type=Path, required=True)
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    blas_before = loaded_blas()
    threads_before = openblas_threads()
    print(f"NumPy {np.__version__}; BLAS loaded before kiln: {', '.join(blas_before) or 'none'}; "
          f"OpenBLAS threads {threads_before}; load average {os.getloadavg()[0]:.1f}", flush=True)
    rows = run(args)
    blas_after = loaded_blas()
    print(f"BLAS loaded after kiln's libraries: {', '.join(blas_after) or 'none'}; "
          f"OpenBLAS threads now {openblas_threads()}")
    if args.json:
        args.json.write_text(json.dumps({"numpy": np.__version__, "blas_before": blas_before,
                                         "blas_after": blas_after, "openblas_threads_before": threads_before,
                                         "openblas_threads_after": openblas_threads(),
                                         "loadavg": os.getloadavg(), "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
