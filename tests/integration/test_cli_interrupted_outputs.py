"""Every output of the ``tfsql`` command is written under a temporary name and renamed on
success (issue 23, finding 3): Ctrl-C or an error in the middle of a write leaves nothing
under the final name (an existing file stays as it was), and the rerun works.

Each interrupted command writes far more than it can finish before the signal (billions
of generated rows, or a large input): the test waits until the command's staged output
exists, then sends SIGINT, so nothing depends on timing; exit status 130 proves the
command was stopped in the middle.
"""

from __future__ import annotations

import glob
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from duckdb_copy_helpers import needs_v2_copy

ENDLESS = "SELECT range AS a, md5(range::VARCHAR) AS b FROM range(5000000000)"
SMALL = "SELECT range AS a, md5(range::VARCHAR) AS b FROM range(3)"


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def _tfsql(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tfsql", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        env=_env(),
    )


def _interrupted(argv: list[str], cwd: Path, *written: str) -> subprocess.CompletedProcess:
    """Run ``tfsql argv``, send SIGINT once a path matching one of the globs ``written``
    (the staged output, or the final name that must not appear before the end) exists."""
    process = subprocess.Popen(
        [sys.executable, "-m", "tfsql", *argv],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=_env(),
    )
    try:
        deadline = time.monotonic() + 120
        while not any(glob.glob(str(cwd / pattern)) for pattern in written):  # '.x*' matches hidden names
            if process.poll() is not None:
                out, err = process.communicate()
                pytest.fail(f"tfsql ended (status {process.returncode}) before any of {written} appeared: {err}")
            if time.monotonic() > deadline:
                pytest.fail(f"none of {written} appeared")
            time.sleep(0.01)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def _left(directory: Path) -> list[str]:
    return sorted(name for name in os.listdir(directory) if name != "big.parquet")


@pytest.fixture(scope="module")
def big_parquet(tmp_path_factory) -> Path:
    """A Parquet file that takes far longer to convert than to start converting."""
    import duckdb

    path = tmp_path_factory.mktemp("big") / "big.parquet"
    with duckdb.connect() as con:
        con.execute(f"COPY (SELECT range AS a, 'row ' || range AS b FROM range(10000000)) TO '{path}'")
    return path


@pytest.mark.parametrize("name", ["out.parquet", "out.csv", "out.json", "out.tfrecord", "out.tfrecord.gz"])
def test_sql_output_interrupted_leaves_nothing_and_the_rerun_works(name, tmp_path):
    done = _interrupted(["sql", ENDLESS, "-o", name], tmp_path, f".{name}.tfsql-*", name)
    assert done.returncode == 130, done.stderr
    assert _left(tmp_path) == []
    again = _tfsql("sql", SMALL, "-o", name, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert _left(tmp_path) == [name]


def test_sql_output_to_a_directory_interrupted_leaves_no_data(tmp_path):
    done = _interrupted(
        ["sql", ENDLESS, "-o", "out/", "--format", "tfrecord"], tmp_path, "out/_temporary-*/*", "out/part-*"
    )
    assert done.returncode == 130, done.stderr
    left = os.listdir(tmp_path / "out") if (tmp_path / "out").exists() else []
    assert [name for name in left if not name.startswith(("_", "."))] == []
    again = _tfsql("sql", SMALL, "-o", "out/", "--format", "tfrecord", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert _tfsql("count", "out", cwd=tmp_path).stdout.strip() == "3"


def test_an_interrupted_overwrite_keeps_the_old_file(tmp_path):
    assert _tfsql("sql", SMALL, "-o", "out.parquet", cwd=tmp_path).returncode == 0
    done = _interrupted(
        ["sql", ENDLESS, "-o", "out.parquet", "--mode", "overwrite"], tmp_path, ".out.parquet.tfsql-*", "out.parquet.*"
    )
    assert done.returncode == 130, done.stderr
    assert _left(tmp_path) == ["out.parquet"]
    assert pq.read_table(tmp_path / "out.parquet").num_rows == 3


@pytest.mark.parametrize("name", ["out.parquet", "out.csv", "out.json", "out.tfrecord"])
def test_convert_interrupted_leaves_nothing_and_the_rerun_works(name, big_parquet, tmp_path):
    source = tmp_path / "big.parquet"
    source.symlink_to(big_parquet)
    done = _interrupted(["convert", "big.parquet", name], tmp_path, f".{name}.tfsql-*", name)
    assert done.returncode == 130, done.stderr
    assert _left(tmp_path) == []


@pytest.mark.parametrize(
    "copy",
    [
        pytest.param("COPY ({query}) TO 'out.tfrecord' (FORMAT tfrecord)", marks=needs_v2_copy),
        "COPY ({query}) TO 'out.parquet' (FORMAT parquet)",
    ],
)
def test_copy_interrupted_leaves_nothing(copy, tmp_path):
    target = copy.split("'")[1]
    done = _interrupted(["sql", copy.format(query=ENDLESS)], tmp_path, f".{target}.tfsql-*", target)
    assert done.returncode == 130, done.stderr
    assert _left(tmp_path) == []
    again = _tfsql("sql", copy.format(query=SMALL), cwd=tmp_path)
    assert again.returncode == 0, again.stderr


@pytest.mark.parametrize("name", ["out.parquet", "out.csv", "out.json", "out.md", "out.tfrecord"])
def test_an_error_in_the_middle_leaves_nothing(name, tmp_path):
    failing = "SELECT CASE WHEN range < 3000000 THEN range ELSE error('boom') END AS a FROM range(4000000)"
    done = _tfsql("sql", failing, "-o", name, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "boom" in done.stderr
    assert _left(tmp_path) == []
    again = _tfsql("sql", SMALL, "-o", name, cwd=tmp_path)
    assert again.returncode == 0, again.stderr


_WRAPPED_INTERRUPT = r"""
import argparse, os, signal, sys, time
import tfsql.cli as cli
from tfsql.cli.console import Console
import tfsql.cli.interrupt as interrupt

def handler(args, console):
    try:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(30)
    except KeyboardInterrupt:
        pass  # DuckDB took the KeyboardInterrupt of a scan thread ...
    seen = getattr(interrupt, "ctrl_c_seen", None)  # (before it existed: a second's wait)
    deadline = time.monotonic() + (30 if seen else 1)
    while not (seen and seen()) and time.monotonic() < deadline:
        time.sleep(0.01)
    # ... and ended the statement with its own error, as measured under load
    raise RuntimeError(
        "Invalid Input Error: exporting a stream from the object registered as "
        "'tfsql_result' failed: KeyboardInterrupt:"
    )

args = argparse.Namespace(handler=handler, quiet=False, debug=False)
sys.exit(cli._run(args, Console(), True))
"""


def test_an_error_after_ctrl_c_ends_as_interrupted(tmp_path):
    # Ctrl-C during `tfsql convert` once ended with status 1: DuckDB reported the scan
    # thread's KeyboardInterrupt inside an Invalid Input Error worded unlike the ones the
    # message check knew. An error the command ends with after Ctrl-C is the interruption's.
    done = subprocess.run(
        [sys.executable, "-c", _WRAPPED_INTERRUPT],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        env=_env(),
    )
    assert done.returncode == 130, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "tfsql: interrupted"
