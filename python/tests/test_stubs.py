"""The type stubs describe the extension as it is: mypy's stubtest compares every name,
signature and class in `_native.pyi` with the compiled module."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_stubtest_finds_no_difference():
    pytest.importorskip("mypy")
    out = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "simhash_store._native"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr
