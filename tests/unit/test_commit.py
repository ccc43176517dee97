"""commit_renames: all staged files move into place, or the target is left as it was."""

from __future__ import annotations

import posixpath

import fsspec
import pytest

from tfsql.commit import commit_renames


def tree(fs, root):
    return {posixpath.relpath(p, root): fs.cat_file(p) for p in fs.find(root)}


@pytest.fixture
def fs(tmp_path):
    fs = fsspec.filesystem("file", auto_mkdir=True)
    root = str(tmp_path)
    fs.pipe(posixpath.join(root, "k=1/old.tfrecord"), b"old1")
    fs.pipe(posixpath.join(root, "k=2/old.tfrecord"), b"old2")
    fs.pipe(posixpath.join(root, "_stage/k=1/new.tfrecord"), b"new1")
    fs.pipe(posixpath.join(root, "_stage/k=3/new.tfrecord"), b"new3")
    return fs, root


def staged(root):
    return [
        (posixpath.join(root, "_stage/k=1/new.tfrecord"), "k=1/new.tfrecord"),
        (posixpath.join(root, "_stage/k=3/new.tfrecord"), "k=3/new.tfrecord"),
    ]


def test_commit_replaces_and_adds(fs):
    fs, root = fs
    commit_renames(fs, root, new=staged(root), replaced=["k=1"], trash=posixpath.join(root, "_trash"))
    assert tree(fs, root) == {
        "_SUCCESS": b"",
        "k=1/new.tfrecord": b"new1",
        "k=2/old.tfrecord": b"old2",
        "k=3/new.tfrecord": b"new3",
    }


def test_failure_midway_restores_the_target(fs, monkeypatch):
    fs, root = fs
    before = tree(fs, root)
    real_mv = fs.mv

    def failing_mv(src, dst, **kwargs):
        if dst.endswith("k=3/new.tfrecord"):
            raise OSError("disk full")
        return real_mv(src, dst, **kwargs)

    monkeypatch.setattr(fs, "mv", failing_mv)
    with pytest.raises(OSError, match="disk full"):
        commit_renames(fs, root, new=staged(root), replaced=["k=1"], trash=posixpath.join(root, "_trash"))
    assert tree(fs, root) == before  # old k=1 back, no k=3 directory, no _SUCCESS, no trash
    assert not fs.exists(posixpath.join(root, "k=3"))
