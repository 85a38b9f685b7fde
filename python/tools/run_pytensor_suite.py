#!/usr/bin/env python3
"""PyTensor's own test suite as an outside judge of kiln.

Extracts the `tests/` folder of the installed PyTensor's release (tag rel-<version>) from a git
repository of PyTensor (a local clone or mirror, or GitHub), makes kiln's mode PyTensor's
default mode through a pytest plugin, runs the chosen tensor test files one by one within a
time budget, and writes a pass/fail/skip table per file to docs/pytensor_suite.md.

Every failure is put in a category from its exception (see CATEGORIES): an op kiln lacks
(the exporter's UnsupportedGraphError — never passed through to PyTensor's implementation), kiln
refusing a graph, a value mismatch, a kiln run-time error, a timeout, or "other". Passing tests
that never compiled anything through kiln (they use an explicit non-default mode, or test
graph construction only) are counted apart from those that did.

PyTensor's code is never committed: it is extracted under build/pytensor-suite/.

    build/venv-pt3/bin/python python/tools/run_pytensor_suite.py [--files elemwise linalg/solvers ...]
        [--budget 600] [--per-test 120] [--source GIT_DIR_OR_URL] [--output docs/pytensor_suite.md]
"""
from __future__ import annotations

import argparse
import collections
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DEFAULT_FILES = ["elemwise", "math", "basic", "subtensor", "extra_ops", "sort", "blas", "special", "shape",
                 "math_scipy", "linalg/decomposition", "linalg/solvers", "linalg/inverse", "linalg/summary",
                 "linalg/products", "linalg/constructors"]
DEFAULT_SOURCES = [os.environ.get("PYTENSOR_SRC", ""), "/work/.mirror/pymc-devs+pytensor/repo",
                   "https://github.com/pymc-devs/pytensor.git"]

# (category, what it means, how it is recognised in the failure text: first match wins)
CATEGORIES = [
    ("timeout", "the test exceeded the per-test limit", r"KilnSuiteTimeout"),
    ("kiln lacks an op", "the exporter refused an op kiln does not implement yet",
     r"UnsupportedGraphError|KilnCompileNotImplementedError"),
    ("kiln refused the graph", "kiln rejected the exported file (exporter or kiln bug)", r"KilnGraphError"),
    ("kiln build failed", "the generated C++ did not compile (kiln bug)", r"KilnToolchainError|KilnCompileError"),
    ("kiln internal error", "kiln reported a bug in itself", r"KilnInternalError"),
    ("value mismatch", "kiln's result differs from what the test expects",
     r"Not equal to tolerance|Mismatched elements|Arrays are not|assert_allclose|Items are not equal"),
    ("kiln run-time error", "the compiled function failed (may be an error the test expected of another type)",
     r"Kiln\w*Error"),
    ("other", "the test fails for another reason (often a Python-backend detail)", r""),
]


def pytensor_version(python: str) -> str:
    out = subprocess.run([python, "-c", "import pytensor; print(pytensor.__version__)"], check=True,
                         capture_output=True, text=True).stdout.strip()
    return out.split("+")[0]


def _git_dir(src: str, dest: Path) -> str:
    """A git directory for `src`: a URL is cloned (bare, blobs on demand) under dest."""
    if re.match(r"https?://", src):
        clone = dest / "clone.git"
        if not clone.is_dir():
            subprocess.run(["git", "clone", "--bare", "--filter=blob:none", src, str(clone)], check=True)
        return str(clone)
    return str(Path(src) / ".git") if (Path(src) / ".git").exists() else src


def extract_tests(version: str, sources: list[str], dest: Path) -> Path:
    """tests/ and conftest.py of tag rel-<version> under dest/<version>/; returns that folder."""
    root = dest / version
    if (root / "tests" / "tensor").is_dir():
        return root
    tag = f"rel-{version}"
    errors = []
    for src in filter(None, sources):
        try:
            git_dir = _git_dir(src, dest)
            data = subprocess.run(["git", "--git-dir", git_dir, "archive", "--format=tar", tag, "tests", "conftest.py"],
                                  check=True, capture_output=True).stdout
            root.mkdir(parents=True, exist_ok=True)
            with tarfile.open(fileobj=io.BytesIO(data)) as tar:
                tar.extractall(root)
            return root
        except Exception as e:  # try the next source
            errors.append(f"{src}: {e}")
    raise SystemExit("cannot get PyTensor's tests for tag " + tag + ":\n  " + "\n  ".join(errors))


PLUGIN = r'''
"""pytest plugin (written by kiln's run_pytensor_suite.py): kiln's mode as PyTensor's default,
one JSON line per test with its outcome and how many functions went through kiln."""
import json, os, signal, time
import pytest
import pytensor
import kiln
from kiln.pytensor_mode import KilnLinker
from kiln.errors import UnsupportedGraphError

_counts = {"compiled": 0, "refused": 0}
_convert = KilnLinker.fgraph_convert


def _counting_convert(self, fgraph, **kwargs):
    try:
        result = _convert(self, fgraph, **kwargs)
    except UnsupportedGraphError:
        _counts["refused"] += 1
        raise
    _counts["compiled"] += 1
    return result


KilnLinker.fgraph_convert = _counting_convert


class KilnSuiteTimeout(Exception):
    pass


def pytest_configure(config):
    options = os.environ.get("KILN_SUITE_OPTIONS", "").split()
    pytensor.config.mode = kiln.mode(options=options)  # what get_default_mode() returns


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    def on_alarm(signum, frame):
        raise KilnSuiteTimeout("KilnSuiteTimeout: the test exceeded the per-test limit")

    limit = int(os.environ.get("KILN_SUITE_PER_TEST", "120"))
    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(limit)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _counts["compiled"] = _counts["refused"] = 0
    item._kiln_reports = []
    yield
    reports = item._kiln_reports
    outcome = "passed"
    text = ""
    for r in reports:
        if r.failed:
            outcome, text = "failed", str(r.longrepr)
            break
        if r.skipped:
            outcome = "xfailed" if hasattr(r, "wasxfail") else "skipped"
        elif hasattr(r, "wasxfail"):
            outcome = "xpassed"
    with open(os.environ["KILN_SUITE_LOG"], "a") as f:
        f.write(json.dumps({"test": item.nodeid, "outcome": outcome,
                            "duration": sum(r.duration for r in reports),
                            "kiln_compiled": _counts["compiled"], "kiln_refused": _counts["refused"],
                            "text": text[-6000:]}) + "\n")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    item._kiln_reports.append(outcome.get_result())
'''


def categorise(record: dict) -> str:
    if record["outcome"] in ("skipped", "xfailed"):
        return "skip"
    if record["outcome"] in ("passed", "xpassed"):
        return "pass (kiln)" if record["kiln_compiled"] else "pass (no kiln code)"
    for name, _, pattern in CATEGORIES:
        if re.search(pattern, record["text"]):
            return name
    return "other"


def lacking_ops(text: str) -> list[str]:
    m = re.search(r"\(ops: ([^)]*)\)", text)
    if m:
        return [s.strip() for s in m.group(1).split(",")]
    m = re.search(r"(\w+) is not implemented yet in kiln", text)
    return [m.group(1)] if m else []


def test_path(root: Path, name: str) -> Path | None:
    """tests/tensor/[folder/]test_<name>.py, or the folder tests/tensor/[folder/]test_<name>/
    (PyTensor 3.x splits linalg's tests that way: "linalg/decomposition")."""
    folder, _, base = name.rpartition("/")
    stem = root / "tests" / "tensor" / folder / f"test_{base}"
    for path in (stem.with_suffix(".py"), stem):
        if path.exists():
            return path
    return None


def run_file(python: str, root: Path, name: str, budget: int, per_test: int, log: Path, extra: list[str]) -> dict:
    path = test_path(root, name)
    if path is None:
        return {"file": name, "missing": True}
    log.unlink(missing_ok=True)
    # PYTENSOR_FLAGS: what PyTensor's own conftest.py sets (too late for a plugin importing pytensor)
    env = dict(os.environ, KILN_SUITE_LOG=str(log), KILN_SUITE_PER_TEST=str(per_test),
               PYTENSOR_FLAGS="warn__ignore_bug_before=all,on_opt_error=raise,on_shape_error=raise",
               PYTHONPATH=os.pathsep.join([str(root), str(root / "_kiln"), os.environ.get("PYTHONPATH", "")]))
    cmd = [python, "-m", "pytest", "-q", "-p", "kiln_suite_plugin", "-p", "no:cacheprovider", "--rootdir", str(root),
           "-o", "addopts=", "-o", "xfail_strict=true", "-W", "ignore::DeprecationWarning",
           str(path.relative_to(root)), *extra]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        out, _ = proc.communicate(timeout=budget)
        timed_out = False
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        timed_out = True
    elapsed = time.monotonic() - start
    records = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    collected = re.search(r"(\d+) (?:tests? )?collected|collected (\d+) items", out or "")
    return {"file": name, "records": records, "elapsed": elapsed, "timed_out": timed_out,
            "tail": (out or "")[-3000:], "collected": collected.group(0) if collected else ""}


COLUMNS = ["pass (kiln)", "pass (no kiln code)", "kiln lacks an op", "kiln refused the graph", "kiln build failed",
           "kiln internal error", "value mismatch", "kiln run-time error", "timeout", "other", "skip"]


def report(results: list[dict], version: str, args, output: Path) -> None:
    order = {name: k for k, name in enumerate(DEFAULT_FILES)}
    results = sorted(results, key=lambda r: order.get(r["file"], len(order)))
    lines = [
        "# PyTensor's test suite against kiln",
        "",
        f"PyTensor {version}'s own tests (`tests/tensor/[folder/]test_<file>[.py]` of tag `rel-{version}`), run with",
        "kiln's mode registered as PyTensor's default mode (`python/tools/run_pytensor_suite.py`).",
        f"Budget: {args.budget} s per file, {args.per_test} s per test; kiln compile options: "
        f"`{args.kiln_options or '(default)'}`. A file whose budget ran out shows the tests it reached.",
        "",
        "\"pass (kiln)\": the test passed and compiled at least one function through kiln; \"pass (no kiln",
        "code)\": it passed without compiling through kiln (it builds graphs only, or asks for another mode",
        "explicitly), so it says nothing about kiln. Ops kiln lacks raise the exporter's error — nothing",
        "falls back to PyTensor's implementation.",
        "",
        "| file | tests run | " + " | ".join(COLUMNS) + " | time (s) |",
        "|---|---|" + "---|" * len(COLUMNS) + "---|",
    ]
    totals = collections.Counter()
    missing_ops = collections.Counter()
    by_category = collections.defaultdict(list)
    for res in results:
        if res.get("missing"):
            lines.append(f"| {res['file']} | (no such file in this release) |" + " |" * len(COLUMNS) + " |")
            continue
        counts = collections.Counter()
        for rec in res["records"]:
            cat = categorise(rec)
            counts[cat] += 1
            if cat == "kiln lacks an op":
                for op in lacking_ops(rec["text"]):
                    missing_ops[op] += 1
            if cat not in ("pass (kiln)", "pass (no kiln code)", "skip"):
                by_category[cat].append(rec)
        totals.update(counts)
        ran = len(res["records"])
        note = " (budget hit)" if res["timed_out"] else ""
        lines.append(f"| {res['file']} | {ran}{note} | " + " | ".join(str(counts[c]) for c in COLUMNS)
                     + f" | {res['elapsed']:.0f} |")
    lines.append("| **total** | " + str(sum(totals.values())) + " | "
                 + " | ".join(f"**{totals[c]}**" for c in COLUMNS) + " | |")
    lines += ["", "## Ops kiln lacks (tests refused, by op)", ""]
    for op, n in missing_ops.most_common():
        lines.append(f"- `{op}`: {n}")
    lines += ["", "## Failures by category", ""]
    for name, meaning, _ in CATEGORIES:
        recs = by_category.get(name, [])
        if not recs:
            continue
        lines += [f"### {name} ({len(recs)}): {meaning}", ""]
        for rec in recs[:40]:
            lines.append(f"- `{rec['test']}`: {summary(rec['text'])}")
        if len(recs) > 40:
            lines.append(f"- ... and {len(recs) - 40} more")
        lines.append("")
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text("\n".join(lines) + "\n")


def summary(text: str) -> str:
    """The exception line of a failure, shortened."""
    lines = [ln.strip() for ln in text.splitlines() if ln.startswith("E ") or "Error" in ln]
    line = next((ln for ln in reversed(lines) if ln.startswith("E ")), lines[-1] if lines else "")
    line = line[1:].strip() if line.startswith("E ") else line
    return line.replace("|", "\\|")[:200]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", nargs="*", default=DEFAULT_FILES, help="tests/tensor/test_<name>.py to run")
    ap.add_argument("--budget", type=int, default=600, help="seconds per file")
    ap.add_argument("--per-test", type=int, default=120, help="seconds per test")
    ap.add_argument("--source", action="append", help="git dir or URL of PyTensor (tried in order)")
    ap.add_argument("--kiln-options", default="", help="extra `kiln compile` flags, e.g. '--cxxflags -O1'")
    ap.add_argument("--output", type=Path, default=REPO / "docs" / "pytensor_suite.md")
    ap.add_argument("--work", type=Path, default=REPO / "build" / "pytensor-suite")
    ap.add_argument("--merge", action="store_true",
                    help="keep the other files' results of earlier runs (WORK/results.json) in the table")
    ap.add_argument("pytest_args", nargs="*", help="extra pytest arguments (after --)")
    args = ap.parse_args()

    python = sys.executable
    version = pytensor_version(python)
    root = extract_tests(version, args.source or DEFAULT_SOURCES, args.work)
    plugin_dir = root / "_kiln"
    plugin_dir.mkdir(exist_ok=True)
    (plugin_dir / "kiln_suite_plugin.py").write_text(PLUGIN)
    os.environ["KILN_SUITE_OPTIONS"] = args.kiln_options
    os.environ.setdefault("KILN", str(REPO / "build" / "kiln"))
    os.environ.setdefault("KILN_PYTHON_CACHE", str(args.work / "libs"))
    raw = args.work / "results.json"
    earlier = json.loads(raw.read_text()) if args.merge and raw.is_file() else []
    results = [r for r in earlier if r["file"] not in args.files]
    for name in args.files:
        res = run_file(python, root, name, args.budget, args.per_test, args.work / f"{name.replace('/', '_')}.jsonl", args.pytest_args)
        results.append(res)
        raw.write_text(json.dumps(results, indent=1))
        n = len(res.get("records", []))
        print(f"{name}: {n} tests in {res.get('elapsed', 0):.0f} s{' (budget hit)' if res.get('timed_out') else ''}",
              flush=True)
        report(results, version, args, args.output)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
