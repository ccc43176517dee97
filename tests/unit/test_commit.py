"""apply_commit / recover_locked / the reader's view (tfsql_plan): all staged files move into place, or
the target is left as it was, whatever instant a crash interrupts the commit."""

from __future__ import annotations

import json
import os
import posixpath

import fsspec
import pytest

import tfsql
from tfsql import commit
from tfsql.commit import INTENT_NAME, apply_commit, recover_locked
from tfsql.discovery import discover


def tree(fs, root):
    return {posixpath.relpath(p, root): fs.cat_file(p) for p in fs.find(root)}


OLD = {"_SUCCESS": b"", "k=1/old.tfrecord": b"old1", "k=2/old.tfrecord": b"old2"}
NEW = {"_SUCCESS": b"", "k=1/new.tfrecord": b"new1", "k=2/old.tfrecord": b"old2", "k=3/new.tfrecord": b"new3"}
STAGED = [("_stage/k=1/new.tfrecord", "k=1/new.tfrecord"), ("_stage/k=3/new.tfrecord", "k=3/new.tfrecord")]


@pytest.fixture
def target(tmp_path):
    fs = fsspec.filesystem("file", auto_mkdir=True)
    root = str(tmp_path)
    for rel, data in OLD.items():
        fs.pipe(posixpath.join(root, rel), data)
    fs.pipe(posixpath.join(root, "_stage/k=1/new.tfrecord"), b"new1")
    fs.pipe(posixpath.join(root, "_stage/k=3/new.tfrecord"), b"new3")
    return fs, root


def visible(fs, root):
    return {
        posixpath.relpath(p, root): fs.cat_file(p)
        for p in fs.find(root)
        if not posixpath.relpath(p, root).startswith("_")
    }


def test_commit_replaces_and_adds(target):
    fs, root = target
    apply_commit(fs, root, job="j", new=STAGED, replaced=["k=1"])
    assert tree(fs, root) == NEW


def test_failure_midway_restores_the_target(target, monkeypatch):
    fs, root = target
    before = tree(fs, root)
    real = os.rename

    def failing(src, dst):
        if dst.endswith("k=3/new.tfrecord"):
            raise OSError("disk full")
        return real(src, dst)

    monkeypatch.setattr(commit.os, "rename", failing)
    with pytest.raises(OSError, match="disk full"):
        apply_commit(fs, root, job="j", new=STAGED, replaced=["k=1"])
    assert tree(fs, root) == before  # old k=1 back, no k=3, no trash, no intent record
    assert not fs.exists(posixpath.join(root, "k=3"))


class Crash(BaseException):
    """Stands for kill -9: nothing after it runs, not even the rollback."""


def crash_after(monkeypatch, steps):
    """Make the commit die after ``steps`` renames/replaces (intent writes included)."""
    count = [0]
    real_rename, real_replace = os.rename, os.replace

    def counted(real):
        def step(src, dst):
            if count[0] == steps:
                raise Crash
            count[0] += 1
            return real(src, dst)

        return step

    monkeypatch.setattr(commit.os, "rename", counted(real_rename))
    monkeypatch.setattr(commit.os, "replace", counted(real_replace))
    monkeypatch.setattr(commit, "_roll_back", lambda ops, intent: None)  # no cleanup: killed


# the commit takes 1 (intent) + 2 (_SUCCESS, k=1 to trash) + 2 (new files) + 1 (committed)
# renames; step 6 dies after the commit point, before the old data is deleted
@pytest.mark.parametrize("steps", range(8))
def test_a_crash_at_every_step_recovers_old_or_new_and_readers_agree(target, monkeypatch, steps):
    fs, root = target
    crash_after(monkeypatch, steps)
    if steps == 6:
        monkeypatch.setattr(commit, "_finish", lambda ops, intent: (_ for _ in ()).throw(Crash()))
    try:
        apply_commit(fs, root, job="j", new=STAGED, replaced=["k=1"])
        crashed = False
    except Crash:
        crashed = True
    monkeypatch.undo()
    assert crashed == (steps < 7)
    expected = NEW if steps >= 6 else OLD
    # tfsql's reader, meeting the intent record, reads what recovery will leave
    read = [f.path for f in discover(root).files]
    assert sorted(fs.cat_file(p) for p in read) == sorted(visible_of(expected).values())
    result = recover_locked(fs, root)
    assert result.commit == {0: None, 6: "finished", 7: None}.get(steps, "rolled back")
    after = tree(fs, root)
    for staged, _ in STAGED:
        after.pop(staged, None)
    assert after == expected


def visible_of(content):
    return {k: v for k, v in content.items() if not k.startswith("_")}


def test_recovery_interrupted_itself_can_run_again(target, monkeypatch):
    fs, root = target
    crash_after(monkeypatch, 4)  # k=1 in the trash, k=1/new moved in
    with pytest.raises(Crash):
        apply_commit(fs, root, job="j", new=STAGED, replaced=["k=1"])
    monkeypatch.undo()
    calls = [0]
    real = os.rename

    def die_once(src, dst):
        calls[0] += 1
        if calls[0] == 2:
            raise Crash
        return real(src, dst)

    monkeypatch.setattr(commit.os, "rename", die_once)
    with pytest.raises(Crash):
        recover_locked(fs, root)
    monkeypatch.undo()
    assert recover_locked(fs, root).commit == "rolled back"
    assert visible(fs, root) == visible_of(OLD)
    assert not fs.exists(posixpath.join(root, INTENT_NAME))


def test_a_tampered_intent_record_is_refused_and_nothing_moves(tmp_path):
    fs = fsspec.filesystem("file")
    root = str(tmp_path)
    (tmp_path / "keep.tfrecord").write_bytes(b"x")
    record = {
        "tfsql_intent": 1,
        "state": "prepared",
        "job": "j",
        "trash": "_trash-j",
        "replaced": ["../../etc"],
        "new": [],
        "created": [],
    }
    (tmp_path / INTENT_NAME).write_text(json.dumps(record))
    with pytest.raises(tfsql.TFSQLError, match="not one tfsql wrote .*path leaves the target"):
        recover_locked(fs, root)
    assert (tmp_path / "keep.tfrecord").exists() and (tmp_path / INTENT_NAME).exists()


def test_leftovers_of_dead_writers_go_and_live_ones_stay(tmp_path):
    from tfsql import locking

    fs = fsspec.filesystem("file")
    root = str(tmp_path)
    for name in ["_temporary-dead", "_trash-old", "_temporary-spark-job"]:
        (tmp_path / name).mkdir()
        (tmp_path / name / "f").write_bytes(b"x")
    live = locking.owner_lock(fs, str(tmp_path / "_temporary-live"))
    (tmp_path / (INTENT_NAME + ".tmp")).write_text("{")
    result = recover_locked(fs, root)
    assert result.commit is None
    assert result.removed == ["_temporary-dead", "_tfsql-intent.json.tmp", "_trash-old"]
    assert sorted(os.listdir(root)) == ["_temporary-live", "_temporary-spark-job"]
    live.release()
    assert recover_locked(fs, root).removed == ["_temporary-live"]


def test_memory_filesystem_commits_and_recovers():
    fs = fsspec.filesystem("memory")
    root = "/commit-test"
    fs.pipe(root + "/old.tfrecord", b"old")
    fs.pipe(root + "/_temporary-a/new.tfrecord", b"new")
    apply_commit(fs, root, job="a", new=[("_temporary-a/new.tfrecord", "new.tfrecord")], replaced=["old.tfrecord"])
    assert sorted(posixpath.relpath(p, root) for p in fs.find(root)) == ["_SUCCESS", "new.tfrecord"]
    fs.rm(root, recursive=True)


def test_recover_api_and_command_roll_back_a_crashed_commit(target, monkeypatch, capsys):
    from tfsql.cli import main

    fs, root = target
    crash_after(monkeypatch, 3)  # _SUCCESS and k=1 in the trash
    with pytest.raises(Crash):
        apply_commit(fs, root, job="j", new=STAGED, replaced=["k=1"])
    monkeypatch.undo()
    assert main(["recover", root]) == 0
    assert capsys.readouterr().out == (
        f"{root}: an interrupted commit was rolled back (the old content is kept); no leftovers\n"
    )
    assert visible(fs, root) == visible_of(OLD) and fs.exists(posixpath.join(root, "_SUCCESS"))
    assert str(tfsql.recover(root)) == f"{root}: no interrupted commit; no leftovers"
    assert main(["recover", posixpath.join(root, "_SUCCESS")]) == 2
    assert "is not a directory; tfsql.recover takes a write target" in capsys.readouterr().err
