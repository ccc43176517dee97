"""A crafted intent record cannot make recovery or a commit act outside the target
(issue 34, item 2): every path it names is resolved component by component without
following symbolic links, and one that goes through a link is refused with the record
left for the user. The record is read by the core's parser in both codecs."""

from __future__ import annotations

import json
import os

import fsspec
import pyarrow as pa
import pytest

import tfsql
from tfsql import _reference
from tfsql._codec import load_codec
from tfsql.commit import INTENT_NAME, apply_commit, recover_locked


def record(state, *, trash="_trash-a", replaced=(), new=(), created=()):
    return json.dumps(
        {
            "tfsql_intent": 1,
            "state": state,
            "job": "a",
            "trash": trash,
            "replaced": list(replaced),
            "new": [list(p) for p in new],
            "created": list(created),
        }
    )


@pytest.fixture
def place(tmp_path):
    target, outside = tmp_path / "target", tmp_path / "outside"
    target.mkdir()
    (outside / "keep").mkdir(parents=True)
    (outside / "keep" / "precious").write_text("precious")
    (outside / "empty").mkdir()
    (target / "_SUCCESS").write_text("")
    (target / "data.tfrecord").write_bytes(b"x")
    os.symlink("../outside", target / "lnk")
    return target, outside


def snapshot(*roots):
    return {
        os.path.join(d, n): os.path.islink(os.path.join(d, n))
        for root in roots
        for d, dirs, files in os.walk(root)
        for n in dirs + files
    }


SHAPES = {
    # the trash is a link: finishing a committed record would delete outside/keep
    "trash link": ("committed", {"trash": "_trash-a", "replaced": ["keep"]}, "_trash-a"),
    # a prepared record's new file through a link: the rollback would move _SUCCESS out
    "new through link": ("prepared", {"new": [("lnk/stolen", "_SUCCESS")]}, "lnk"),
    # a created directory through a link: the rollback would remove outside/empty
    "created through link": ("prepared", {"created": ["lnk/empty"]}, "lnk"),
    "replaced through link": ("prepared", {"replaced": ["lnk/keep"]}, "lnk"),
}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("how", ["recover", "write"])
def test_a_record_through_a_link_is_refused_and_nothing_moves(place, shape, how):
    target, outside = place
    state, fields, link = SHAPES[shape]
    if shape == "trash link":
        os.symlink("../outside", target / "_trash-a")
    (target / INTENT_NAME).write_text(record(state, **fields))
    before = snapshot(target, outside)
    match = f"names .* which goes through the symbolic link {target}/{link}: tfsql acts only inside the target"
    with pytest.raises(tfsql.TFSQLError, match=match):
        if how == "recover":
            tfsql.recover(str(target))
        else:
            tfsql.write_tfrecord(pa.table({"x": [1]}), str(target), mode="append")
    assert snapshot(target, outside) == before
    assert (outside / "keep" / "precious").read_text() == "precious"
    assert (target / INTENT_NAME).exists()  # left for the user


def test_a_commit_into_a_linked_directory_is_refused_before_any_move(place):
    target, outside = place
    fs = fsspec.filesystem("file")
    (target / "_stage").mkdir()
    (target / "_stage" / "part.tfrecord").write_bytes(b"new")
    before = snapshot(target, outside)
    with pytest.raises(tfsql.TFSQLError, match="the commit needs lnk/part.tfrecord, which goes through"):
        apply_commit(fs, str(target), job="b", new=[("_stage/part.tfrecord", "lnk/part.tfrecord")])
    assert snapshot(target, outside) == before


def test_a_link_as_the_last_component_is_moved_not_followed(place):
    """A replaced entry that is itself a link (a user's dataset may hold one) is moved
    into the trash and removed as a link; what it points to stays."""
    target, outside = place
    fs = fsspec.filesystem("file")
    (target / "_stage").mkdir()
    (target / "_stage" / "part.tfrecord").write_bytes(b"new")
    apply_commit(fs, str(target), job="b", new=[("_stage/part.tfrecord", "part.tfrecord")], replaced=["lnk"])
    assert not os.path.lexists(target / "lnk")
    assert (outside / "keep" / "precious").read_text() == "precious"
    assert recover_locked(fs, str(target)).commit is None


@pytest.mark.parametrize("pure", [False, True])
def test_one_parser_reads_the_record_in_both_codecs(pure):
    codec = load_codec(pure)
    text = record("prepared", replaced=["k=1"], new=[("_temporary-a/x", "k=1/x")], created=["k=1"]).encode()
    assert codec.intent_parse(text) == {
        "state": "prepared",
        "job": "a",
        "trash": "_trash-a",
        "replaced": ["k=1"],
        "new": [("_temporary-a/x", "k=1/x")],
        "created": ["k=1"],
    }
    for bad in [
        record("prepared", trash="_trash-a/keep"),
        record("prepared", replaced=["a/../b"]),
        record("prepared", created=["/abs"]),
        record("done"),
        json.dumps({"tfsql_intent": 1, "state": "prepared"}),
    ]:
        with pytest.raises(ValueError):
            codec.intent_parse(bad.encode())


def test_recovery_uses_the_codecs_parser(monkeypatch, tmp_path):
    """commit._Intent.load has no parser of its own: the pure-Python switch reaches it."""
    from tfsql import commit

    monkeypatch.setattr(commit, "codec", _reference)
    (tmp_path / INTENT_NAME).write_text(record("committed", trash="_trash-a"))
    (tmp_path / "_trash-a").mkdir()
    assert recover_locked(fsspec.filesystem("file"), str(tmp_path)).commit == "finished"
    assert not (tmp_path / "_trash-a").exists()
