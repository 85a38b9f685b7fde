"""complex64/complex128 (issue 18): kiln beside NumPy in the same process and run.

    build/venv-pt3/bin/python bench/python/bench_complex.py [--reps 9] [--threads 1 2] [--json FILE]

Workloads, each a PyTensor graph compiled by `kiln.function` and the same NumPy expression:
  C1  exp(z) * w / (z + 1j) - conj(w), complex128, 2^20 elements (elementwise: NumPy's textbook
      product and Smith quotient in kiln/runtime/complex.hpp, C99's cexp)
  C2  |z|^2 summed (abs, sqr, Sum with a complex128 accumulator for complex64), complex64, 2^22
  C3  dot of two 512x512 complex128 matrices (both call BLAS's zgemm)
  C4  Eig of a 300x300 float64 matrix (both call LAPACK's dgeev)
Ratios are NumPy's median time over kiln's (above 1: kiln is faster). NumPy's elementwise loops
are single-threaded; kiln's use the context's threads (--threads). The BLAS/LAPACK rows compare
the same library calls, NumPy's wheel carrying its own OpenBLAS.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
import kiln  # noqa: E402
import pytensor.tensor as pt  # noqa: E402


def median_time(f, reps: int) -> float:
    f()  # warm
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def workloads(r: np.random.Generator):
    z = pt.tensor("z", dtype="complex128", shape=(None,))
    w = pt.tensor("w", dtype="complex128", shape=(None,))
    n1 = 1 << 20
    zv = r.normal(size=n1) + 1j * r.normal(size=n1)
    wv = r.normal(size=n1) + 1j * r.normal(size=n1)
    yield ("C1 elementwise complex128 2^20", [z, w], pt.exp(z) * w / (z + 1j) - pt.conj(w), (zv, wv),
           lambda: np.exp(zv) * wv / (zv + 1j) - np.conj(wv))

    c = pt.tensor("c", dtype="complex64", shape=(None,))
    n2 = 1 << 22
    cv = (r.normal(size=n2) + 1j * r.normal(size=n2)).astype(np.complex64)
    yield ("C2 sum |z|^2 complex64 2^22", [c], pt.sqr(pt.abs(c)).sum(), (cv,),
           lambda: np.square(np.abs(cv)).sum())

    a = pt.tensor("a", dtype="complex128", shape=(None, None))
    b = pt.tensor("b", dtype="complex128", shape=(None, None))
    av = r.normal(size=(512, 512)) + 1j * r.normal(size=(512, 512))
    bv = r.normal(size=(512, 512)) + 1j * r.normal(size=(512, 512))
    yield ("C3 dot complex128 512x512", [a, b], pt.dot(a, b), (av, bv), lambda: np.dot(av, bv))

    m = pt.dmatrix("m")
    mv = r.normal(size=(300, 300))
    yield ("C4 eig float64 300x300", [m], pt.linalg.eig(m)[0], (mv,), lambda: np.linalg.eig(mv)[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=9)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows = []
    for name, inputs, output, values, numpy_fn in workloads(np.random.default_rng(18)):
        t_numpy = median_time(numpy_fn, args.reps)
        row = {"workload": name, "numpy_s": t_numpy}
        for threads in args.threads:
            fn = kiln.function(inputs, output, num_threads=threads)
            got, want = np.asarray(fn(*values)), np.asarray(numpy_fn())
            if "eig" not in name:  # eigenvalue order is LAPACK's and may differ between builds
                np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
            t_kiln = median_time(lambda: fn(*values), args.reps)
            row[f"kiln_s_{threads}t"] = t_kiln
            row[f"ratio_{threads}t"] = t_numpy / t_kiln
        rows.append(row)
        cells = "  ".join(f"{threads} thread(s): kiln {row[f'kiln_s_{threads}t'] * 1e3:8.2f} ms, x{row[f'ratio_{threads}t']:.2f}"
                          for threads in args.threads)
        print(f"{name:34s} NumPy {t_numpy * 1e3:8.2f} ms  {cells}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
