#!/usr/bin/env python3
"""The radon model's logp + dlogp per call: kiln's library against PyTensor's backends, all
called from this one Python process on the same graph (PyMC's logp and its pytensor.grad,
joined on the flat parameter vector, after PyMC's rewrites), and compile times.

    build/venv-pymc/bin/python bench/python/bench_radon.py [--counties 85] [--n 919] [--reps 7]

Per call: kiln through its Python loader (`call_into` into preallocated outputs: binding,
checks and DLTensor filling in Python each call) and through `bind_into` (prepared once, then
one ctypes call of the library's `call_into`: the C ABI's cost), PyTensor's functions with
`trust_input=True` (their Python call path included) in NUMBA, C (FAST_RUN with the C VM) and
JAX modes where the backend is installed. Compile: `kiln compile` of the exported graph cold
(kiln's on-disk cache emptied), cold for the graph only (the cache's precompiled headers kept,
as for any model after kiln's first on a machine) and cached (same graph again, new output
folder), the export,
and each PyTensor mode's `pytensor.function` (first in this process, then again: PyTensor's own
caches warm). The radon data are simulated with the real data set's sizes (85 counties, 919
houses). Prints a table and the ratios; writes nothing.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
import timeit
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python"))
sys.path.insert(0, str(REPO / "python" / "tests"))  # pymc_models.radon: the model test_pymc.py checks


def per_call_us(fn, reps: int) -> float:
    """Median over `reps` rounds of the mean time per call (microseconds)."""
    timer = timeit.Timer(fn)
    number, _ = timer.autorange()
    rounds = timer.repeat(repeat=reps, number=number)
    return float(np.median(rounds)) / number * 1e6


def seconds(fn) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--counties", type=int, default=85)
    ap.add_argument("--n", type=int, default=919)
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args()
    os.environ.setdefault("KILN", str(REPO / "build" / "kiln"))

    import pytensor

    import kiln
    import kiln.pymc
    from kiln.compiler import compile_graph_file

    from pymc_models import radon

    model = radon(args.counties, args.n)
    outputs, x, info, x0 = kiln.pymc.logp_graph(model)
    t_export, exported = seconds(lambda: kiln.from_pytensor(outputs, [x], rewrite=kiln.pymc.pymc_rewrites(model),
                                                           name="radon"))
    rows, compile_rows = [], [("kiln: export (PyTensor rewrites + graph file)", t_export)]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        graph_file = exported.save(tmp / "radon.json")
        # Cold: kiln's own cache (XDG_CACHE_HOME/kiln) moved to an empty folder for this process.
        os.environ["XDG_CACHE_HOME"] = str(tmp / "xdg")
        t_cold, lib = seconds(lambda: compile_graph_file(graph_file, tmp / "cold", name="radon"))
        # A new graph on a machine where kiln has compiled before: everything but the cache's
        # once-per-compiler pieces (precompiled system headers, compiler answers) removed, as
        # W7's compile_cold in bench/ does.
        for entry in (tmp / "xdg" / "kiln").iterdir():
            if entry.name not in ("pch", "compilers"):
                shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
        t_new_graph, lib = seconds(lambda: compile_graph_file(graph_file, tmp / "new_graph", name="radon"))
        t_cached, _ = seconds(lambda: compile_graph_file(graph_file, tmp / "cached", name="radon"))
        compile_rows += [("kiln compile, cold (empty cache: builds the precompiled headers too)", t_cold),
                         ("kiln compile, cold graph (the cache's once-per-compiler pieces present)", t_new_graph),
                         ("kiln compile, cached", t_cached)]
        f = kiln.load(lib)
        logp_out, dlogp_out = np.empty(()), np.empty_like(x0)
        point = x0 + 0.1
        f.call_into([logp_out, dlogp_out], point)
        rows.append(("kiln, Function.call_into (Python loader)",
                     per_call_us(lambda: f.call_into([logp_out, dlogp_out], point), args.reps)))
        rows.append(("kiln, Function.bind_into (one ctypes call)",
                     per_call_us(f.bind_into([logp_out, dlogp_out], point), args.reps)))
        want = (logp_out.copy(), dlogp_out.copy())

        modes = {"NUMBA": "NUMBA", "C (FAST_RUN, cvm)": pytensor.compile.mode.Mode(linker="cvm", optimizer="fast_run"),
                 "JAX": "JAX"}
        for label, mode in modes.items():
            try:
                t_first, fn = seconds(lambda: pytensor.function([x], outputs, mode=mode, trust_input=True))
                t_again, _ = seconds(lambda: pytensor.function([x], outputs, mode=mode, trust_input=True))
            except Exception as e:  # the backend is not installed (JAX) or cannot take the graph
                print(f"PyTensor {label}: unavailable ({type(e).__name__}: {str(e).splitlines()[0][:100]})")
                continue
            got = fn(point)
            np.testing.assert_allclose(got[0], want[0], rtol=1e-10)
            np.testing.assert_allclose(got[1], want[1], rtol=1e-9, atol=1e-9)
            rows.append((f"PyTensor {label}", per_call_us(lambda: fn(point), args.reps)))
            compile_rows += [(f"PyTensor {label}: pytensor.function, first", t_first),
                             (f"PyTensor {label}: pytensor.function, again", t_again)]

    print(f"radon: {args.counties} counties, {args.n} observations, {x0.size} parameters; "
          f"PyTensor {pytensor.__version__}")
    print("\n| logp + dlogp, one call | µs |\n|---|---|")
    for label, us in rows:
        print(f"| {label} | {us:.2f} |")
    kiln_us = rows[1][1]
    best = min(rows[2:], key=lambda r: r[1]) if len(rows) > 2 else None
    if best:
        print(f"\nkiln bind_into / best PyTensor ({best[0]}): {kiln_us / best[1]:.2f} (the issue's target: <= 0.5)")
    print("\n| compile | s |\n|---|---|")
    for label, s in compile_rows:
        print(f"| {label} | {s:.3f} |")


if __name__ == "__main__":
    main()
