"""Shared fixtures: the kiln executable (the tests need it: scripts/test builds it), a private
cache folder per test session, and helpers comparing kiln with PyTensor."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


def pytest_configure(config):
    from kiln.compiler import find_kiln

    try:
        os.environ["KILN"] = find_kiln()
    except Exception as e:  # the tests are about kiln: without it they cannot run
        raise pytest.UsageError(f"kiln's Python tests need the kiln executable: {e}") from None


def pytest_report_header(config):
    import numpy

    lines = [f"kiln: {os.environ.get('KILN')}", f"numpy {numpy.__version__}"]
    try:
        import pytensor

        lines.append(f"pytensor {pytensor.__version__}")
    except ImportError:
        lines.append("pytensor: not installed")
    try:
        import pymc

        lines.append(f"pymc {pymc.__version__}")
    except ImportError:
        pass
    return lines
