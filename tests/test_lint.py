"""The repository passes ``ruff check`` with the rules in pyproject.toml's ``[tool.ruff]``
(pyflakes and pycodestyle) and is formatted by ``ruff format``. Skipped when ruff is not
installed (it is in the ``test`` extra)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _ruff() -> list[str]:
    try:
        import ruff  # noqa: F401  (the package ships the binary)
    except ImportError:
        found = shutil.which("ruff")
        if found is None:
            pytest.skip("ruff is not installed")
        return [found]
    return [sys.executable, "-m", "ruff"]


def test_ruff_check_passes():
    done = subprocess.run([*_ruff(), "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_format_leaves_the_tree_unchanged():
    done = subprocess.run(
        [*_ruff(), "format", "--check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
