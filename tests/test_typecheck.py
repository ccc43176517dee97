"""The package type-checks with mypy (configured in pyproject.toml's ``[tool.mypy]``), and
typed user code reaches the API: ``tfsql.scan_tfrecord`` is typed, ``Literal`` options
catch misspelt values. Skipped when mypy is not installed (it is in the ``test`` extra)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("mypy")

ROOT = Path(__file__).resolve().parents[1]


def _mypy(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", *args],
        cwd=cwd,
        env={**os.environ, "MYPYPATH": str(ROOT)},  # this checkout's tfsql, editable install or not
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_package_type_checks():
    done = _mypy()  # files and options from pyproject.toml
    assert done.returncode == 0, done.stdout + done.stderr


USER_CODE = """
import polars as pl
import pyarrow as pa
import tfsql
from tfsql.polars import read_tfrecord, scan_tfrecord

lf: pl.LazyFrame = tfsql.scan_tfrecord("data/", record_type="sequence_example", missing_columns="insert")
df: pl.DataFrame = read_tfrecord("data/", columns=["id"])
lf2: pl.LazyFrame = scan_tfrecord("data/")
table: pa.Table = tfsql.read_tfrecord("data/")
ds: tfsql.Dataset = tfsql.dataset("data/", compression="gzip", on_corrupt="skip")
written: tfsql.WriteResult = tfsql.write_tfrecord(table, "out/", mode="overwrite", compression="zlib")
later: pl.LazyFrame = lf.pipe(lambda f: f)
tfsql.write_tfrecord(table, "out/", mode="overwite")  # line 14: a typo
tfsql.scan_tfrecord("data/", record_type="examples")  # line 15: a typo
"""


def test_typed_user_code(tmp_path):
    (tmp_path / "user.py").write_text(textwrap.dedent(USER_CODE))
    done = _mypy("--python-version", "3.10", "--ignore-missing-imports", "--no-incremental", "user.py", cwd=tmp_path)
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert [line.split(":")[1] for line in errors] == ["14", "15"], done.stdout
    assert 'Argument "mode" to "write_tfrecord" has incompatible type' in errors[0]
    assert 'Argument "record_type" to "scan_tfrecord" has incompatible type' in errors[1]
