#!/usr/bin/env python3
"""Times NumPy's batched np.linalg.cholesky on W9's workload (100,000 symmetric positive definite
4x4 matrices, float64 and float32) for bench/report.py, which sets kiln's W9 time against it.

Runs in its own process in the same bench/run as kiln_bench (NumPy loops LAPACK's potrf over the
batch on one thread). Writes {"W9/numpy/<dtype>/threads:1": [ms, ...]} (one time per repetition).

Usage: numpy_linalg.py OUT.json [--reps N]"""
import argparse
import json
import time

import numpy as np

BATCH = 100_000


def spd_batch(dtype):
    r = np.random.default_rng(23)
    b = r.uniform(-1.0, 1.0, size=(BATCH, 4, 4))
    return (b @ np.swapaxes(b, -1, -2) + 4.0 * np.eye(4)).astype(dtype)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("out")
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    result = {}
    for dtype in ("float64", "float32"):
        x = spd_batch(dtype)
        np.linalg.cholesky(x)  # warm-up
        times = []
        for _ in range(a.reps):
            t0 = time.perf_counter()
            np.linalg.cholesky(x)
            times.append((time.perf_counter() - t0) * 1e3)
        result[f"W9/numpy/{dtype}/threads:1"] = times
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
