"""samples/pymc end to end: export a PyMC model, compile it, call it from Python and from C++
(through the generated radon.h) and check both print the same numbers."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pymc")

SAMPLE = Path(__file__).resolve().parents[2] / "samples" / "pymc" / "run.sh"


def test_pymc_sample_python_and_cpp_agree(tmp_path):
    env = dict(os.environ, PYTHON=sys.executable)
    proc = subprocess.run([str(SAMPLE), str(tmp_path / "out")], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "C++ and Python agree" in proc.stdout
    assert "kiln logp" in proc.stdout
    for name in ("libradon.so", "radon.h", "radon.json", "radon_main"):
        assert (tmp_path / "out" / name).is_file()
