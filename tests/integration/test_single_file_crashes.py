"""A single-file write killed at any step (issue: crash windows): the file holds its old or
its new records, never an index that does not match it, and the hidden staging
directory the killed writer left beside it is removed by the next write of the file,
by ``tfsql.recover`` on the file or on its directory, and by ``tfsql recover FILE``.

``step_killer.py`` kills the writer at its Nth filesystem step; the default run kills at
every fourth step, ``pytest -m slow`` at every step.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pyarrow as pa
import pytest

import tfsql
from tfsql.record_index import indexed_count

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL and flock are POSIX")

HERE = Path(__file__).resolve().parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parents[1]), os.environ.get("PYTHONPATH", "")])}
OLD = list(range(50))
NEW = list(range(1000, 1030))


def old_file(path: Path, index: bool) -> None:
    tfsql.write_tfrecord(pa.table({"id": OLD, "k": [i % 3 for i in OLD]}), str(path), index=index)


def ids(path: Path) -> list[int]:
    return tfsql.read_tfrecord(str(path), columns=["id"]).column("id").to_pylist()


def kill_at(step: int, path: Path, mode: str, index: bool) -> bool:
    """Run the writer, killed at ``step``; True when it finished before that step."""
    args = [sys.executable, str(HERE / "step_killer.py"), str(step), str(path), mode, str(NEW[0]), str(len(NEW))]
    run = subprocess.run(args + (["--index"] if index else []), capture_output=True, text=True, timeout=120, env=ENV)
    if run.returncode == 0:
        assert run.stdout == "D"
        return True
    assert run.returncode == -9, run.stderr[-2000:]
    return False


def check_killed_write(tmp_path: Path, mode: str, index: bool, every: int) -> int:
    """Kill the write at step 1, 1 + every, ...; check each outcome and its cleanup.
    Returns the number of kills."""
    new_content = NEW if mode == "overwrite" else OLD + NEW
    kills = 0
    for step in range(1, 1000, every):
        directory = tmp_path / f"{mode}-{index}-{step}"
        directory.mkdir()
        path = directory / "x.tfrecord"
        old_file(path, index)
        if kill_at(step, path, mode, index):
            assert ids(path) == new_content
            assert sorted(os.listdir(directory)) == ([".x.tfrecord.idx"] if index else []) + ["x.tfrecord"]
            return kills
        kills += 1
        assert ids(path) in (OLD, new_content), step
        if os.path.exists(directory / ".x.tfrecord.idx"):
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # a StaleIndexWarning fails the test
                assert indexed_count(str(path)) in (len(OLD), len(new_content)), step
        cleaner = step % 3
        if cleaner == 0:
            tfsql.recover(str(path))
        elif cleaner == 1:
            tfsql.recover(str(directory))
        else:
            tfsql.write_tfrecord(pa.table({"id": [7]}), str(path), mode="overwrite")
            assert ids(path) == [7]
        left = [n for n in os.listdir(directory) if n not in ("x.tfrecord", ".x.tfrecord.idx")]
        assert left == [], (step, cleaner)
    raise AssertionError("the write never finished")


@pytest.mark.parametrize(("mode", "index"), [("append", True), ("overwrite", False)])
def test_a_killed_single_file_write_leaves_old_or_new_and_is_cleaned(tmp_path, mode, index):
    assert check_killed_write(tmp_path, mode, index, every=4) >= 5


@pytest.mark.slow
@pytest.mark.parametrize(("mode", "index"), [("append", True), ("append", False), ("overwrite", True)])
def test_a_single_file_write_killed_at_every_step(tmp_path, mode, index):
    assert check_killed_write(tmp_path, mode, index, every=1) >= 20


def test_cli_recover_takes_a_single_file(tmp_path):
    path = tmp_path / "x.tfrecord"
    old_file(path, False)
    leftover = tmp_path / (".x.tfrecord.tfsql-" + "0" * 32)
    leftover.mkdir()
    (leftover / "final").write_bytes(b"partial")
    run = subprocess.run(
        [sys.executable, "-m", "tfsql", "recover", str(path)], capture_output=True, text=True, timeout=60, env=ENV
    )
    assert run.returncode == 0, run.stderr
    assert f"removed .x.tfrecord.tfsql-{'0' * 32}" in run.stdout
    assert sorted(os.listdir(tmp_path)) == ["x.tfrecord"]
    assert ids(path) == OLD
