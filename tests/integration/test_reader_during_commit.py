"""A reader never sees a commit in progress (issue: crash windows): a whole commit made
while a reader lists the target gives the reader entirely the old or entirely the new
rows, in `tfsql.read_tfrecord` and in `tfsql.connect()` on its Python path
(``commit_race.py`` makes the commit happen in the middle of the listing)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

import tfsql

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock is POSIX")

HERE = Path(__file__).resolve().parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parents[1]), os.environ.get("PYTHONPATH", "")])}
SCRIPT = str(HERE / "commit_race.py")


@pytest.mark.parametrize("front_end", ["python", "duckdb"])
@pytest.mark.parametrize("mode", ["append", "overwrite"])
def test_a_commit_during_a_listing_is_seen_whole_or_not_at_all(tmp_path, front_end, mode):
    if front_end == "duckdb":
        pytest.importorskip("duckdb")
    target = str(tmp_path / "t")
    old = list(range(60))
    tfsql.write_tfrecord(
        pa.table({"id": old, "k": [i % 3 for i in old]}), target, partition_by="k", max_rows_per_file=10
    )
    new = list(range(1000, 1060))
    go, done = str(tmp_path / "go"), str(tmp_path / "done")
    writer = subprocess.Popen(
        [sys.executable, SCRIPT, "write", target, mode, "1000", "60", go, done],
        stdout=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    try:
        assert writer.stdout.read(1) == "P"  # staged, waiting to commit
        reader = subprocess.run(
            [sys.executable, SCRIPT, "read", target, front_end, go, done],
            capture_output=True,
            text=True,
            timeout=120,
            env=ENV,
        )
        assert writer.wait(timeout=120) == 0
    finally:
        writer.kill()
    assert reader.returncode == 0, reader.stderr[-3000:]
    got = [int(x) for x in reader.stdout.strip().split(",") if x]
    assert os.path.exists(done)  # the commit did happen during the listing
    expected_new = sorted(old + new) if mode == "append" else new
    assert got in (old, expected_new)


def read_both(target: str) -> tuple[list[int], list[int]]:
    """The ids `read_tfrecord` and DuckDB over a registered `tfsql.dataset` read, sorted."""
    from tfsql.duckdb import connect

    python = sorted(tfsql.read_tfrecord(target, columns=["id"]).column("id").to_pylist())
    connection = connect()  # held: DuckDB 1.4 closes a connection nothing holds
    connection.register("t", tfsql.dataset(target))
    sql = sorted(r[0] for r in connection.sql("SELECT id FROM t").fetchall())
    return python, sql


@pytest.mark.parametrize("mode", ["overwrite", "append"])
def test_a_killed_directory_write_reads_old_or_new_before_recovery(tmp_path, mode):
    pytest.importorskip("duckdb")
    old = list(range(60))
    new = list(range(1000, 1030))
    expected_new = new if mode == "overwrite" else sorted(old + new)
    kills = 0
    for step in range(1, 1000, 12):
        target = str(tmp_path / f"t{step}")
        tfsql.write_tfrecord(pa.table({"id": old, "k": [i % 3 for i in old]}), target, partition_by="k")
        args = [sys.executable, str(HERE / "step_killer.py"), str(step), target, mode, "1000", "30", "--partitioned"]
        run = subprocess.run(args, capture_output=True, text=True, timeout=120, env=ENV)
        python, sql = read_both(target)  # before any recovery
        assert python == sql, step
        assert python in (old, expected_new), step
        if run.returncode == 0:
            assert python == expected_new
            break
        assert run.returncode == -9, run.stderr[-2000:]
        kills += 1
    assert kills >= 4
