"""The kiln executable opens OpenBLAS on the evaluator's first BLAS or LAPACK call
(generator/cli/lazy_openblas.cpp), not at start.

Checks that (1) `kiln` does not list OpenBLAS among its shared-library dependencies, so every
OpenBLAS symbol it calls goes through a trampoline (a symbol missing from the trampoline list
would bring the dependency back), and (2) `kiln eval` through those trampolines gives the NumPy
fixtures' values for the linear-algebra and product families: CBLAS with float and double
scalar arguments (alpha in a vector register), LAPACK with Fortran's hidden length arguments
on the stack, and the run-time failures LAPACK reports.

Usage: python3 lazy_openblas.py KILN FIXTURE_CASES_DIR
"""
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np


def needed_libraries(path):
    dump = subprocess.run(["objdump", "-p", path], check=True, capture_output=True, text=True).stdout
    return re.findall(r"NEEDED\s+(\S+)", dump)


def run_case(kiln, case_dir, out_dir):
    case = json.load(open(os.path.join(case_dir, "case.json")))
    if any(spec.get("view") for spec in case["inputs"].values()):
        return "skipped"  # the CLI passes contiguous arrays only
    args = [kiln, "eval", os.path.join(case_dir, "graph.json"), "--output-dir", out_dir]
    for name, spec in case["inputs"].items():
        args += ["--input", f"{name}={os.path.join(case_dir, spec['file'])}"]
    r = subprocess.run(args, capture_output=True, text=True)
    if "error" in case:
        if r.returncode == 0 or case["error"] not in r.stderr:
            raise AssertionError(f"{case_dir}: expected an error with {case['error']!r}, got rc {r.returncode}: {r.stderr}")
        return "error"
    if r.returncode != 0:
        raise AssertionError(f"{case_dir}: kiln eval failed (rc {r.returncode}): {r.stderr}")
    labels = [m.group(1) for m in re.finditer(r"^(\S+) = ", r.stdout, re.M)]
    if len(labels) != len(case["outputs"]):
        raise AssertionError(f"{case_dir}: {len(labels)} outputs printed, {len(case['outputs'])} expected")
    for label, expected_file in zip(labels, case["outputs"]):
        got = np.load(os.path.join(out_dir, label + ".npy"))
        want = np.load(os.path.join(case_dir, expected_file))
        single = want.dtype == np.float32  # the fixture harness's default tolerances (tests/unit/fixtures.cpp)
        rtol, atol = case.get("rtol", 1e-5 if single else 1e-10), case.get("atol", 1e-6 if single else 1e-12)
        if got.dtype != want.dtype or got.shape != want.shape or not np.allclose(got, want, rtol=rtol, atol=atol,
                                                                                 equal_nan=True):
            raise AssertionError(f"{case_dir}: output {label} differs from {expected_file}")
    return "ok"


def main():
    kiln, cases = sys.argv[1], sys.argv[2]
    needed = needed_libraries(kiln)
    blas = [lib for lib in needed if "openblas" in lib]
    if blas:
        raise SystemExit(f"kiln depends on {blas}: an OpenBLAS symbol it calls has no trampoline in "
                         "generator/cli/lazy_openblas.cpp (add its name to KILN_LAZY_OPENBLAS_SYMBOLS)")
    counts = {}
    with tempfile.TemporaryDirectory() as tmp:
        for family in ("linalg", "dot"):
            for name in sorted(os.listdir(os.path.join(cases, family))):
                out = os.path.join(tmp, family, name)
                os.makedirs(out)
                result = run_case(kiln, os.path.join(cases, family, name), out)
                counts[result] = counts.get(result, 0) + 1
    print("kiln needs", ", ".join(needed), "- cases:", counts)
    if counts.get("ok", 0) < 100:
        raise SystemExit("too few cases ran")


if __name__ == "__main__":
    main()
