#!/usr/bin/env python3
"""Benchmark: 10^7 standard-normal draws into a preallocated buffer, kiln's random library
(bench/random/normal_fill.cpp, built here with the flags kiln gives generated code) against
NumPy's `Generator(PCG64).standard_normal(out=...)`, in one process, alternating call by call
from the same state, so each pair also checks that both produced the same bits.

    build/venv/bin/python bench/random/bench_normal.py [--n 10000000] [--reps 9]

Prints the median time per call of each and the median of the per-pair ratios (kiln / NumPy;
below 1 is faster than NumPy). Never fails on time; fails if the draws differ.
"""

import argparse
import ctypes
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
FLAGS = ["-std=c++17", "-O3", "-march=native", "-fno-math-errno", "-fPIC", "-shared"]


def build(tmp):
    lib = os.path.join(tmp, "libkiln_bench_random.so")
    cxx = os.environ.get("CXX", "c++")
    subprocess.run([cxx, *FLAGS, "-I", os.path.join(ROOT, "runtime", "include"),
                    os.path.join(HERE, "normal_fill.cpp"), "-o", lib], check=True)
    return ctypes.CDLL(lib)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=10_000_000)
    ap.add_argument("--reps", type=int, default=9)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        lib = build(tmp)
        fill = lib.kiln_bench_standard_normal
        fill.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_double), ctypes.c_int64]
        bg = np.random.PCG64(12345)
        gen = np.random.Generator(bg)
        out_np = np.empty(args.n)
        out_kiln = np.empty(args.n)
        times_np, times_kiln, ratios = [], [], []
        for rep in range(args.reps + 1):  # the first pair warms up and is not counted
            st = bg.state
            words = (ctypes.c_uint64 * 6)(st["state"]["state"] >> 64, st["state"]["state"] & (2**64 - 1),
                                          st["state"]["inc"] >> 64, st["state"]["inc"] & (2**64 - 1),
                                          st["has_uint32"], st["uinteger"])
            order = ("numpy", "kiln") if rep % 2 else ("kiln", "numpy")
            t = {}
            for who in order:
                t0 = time.perf_counter()
                if who == "numpy":
                    gen.standard_normal(out=out_np)
                else:
                    fill(words, out_kiln.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), args.n)
                t[who] = time.perf_counter() - t0
            if not np.array_equal(out_np.view(np.uint64), out_kiln.view(np.uint64)):
                sys.exit("bench_normal: kiln's draws differ from NumPy's")
            after = bg.state["state"]["state"]
            if ((words[0] << 64) | words[1]) != after:
                sys.exit("bench_normal: kiln's state after the draws differs from NumPy's")
            if rep:
                times_np.append(t["numpy"])
                times_kiln.append(t["kiln"])
                ratios.append(t["kiln"] / t["numpy"])
    med = lambda v: sorted(v)[len(v) // 2]
    print(f"standard_normal, {args.n} draws into a preallocated buffer, NumPy {np.__version__}, "
          f"{args.reps} alternating pairs (identical bits checked)")
    print(f"  kiln  {med(times_kiln) * 1e3:8.2f} ms")
    print(f"  NumPy {med(times_np) * 1e3:8.2f} ms")
    print(f"  ratio kiln/NumPy (median of pairs) {med(ratios):.3f}  (target <= 1)")


if __name__ == "__main__":
    main()
