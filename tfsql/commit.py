"""Commit staged files into a target directory by renames: all of them, or none.

Writers (``tfsql.write_tfrecord``, the Spark data source's driver) stage every file
under a hidden directory inside the target, then call :func:`commit_renames`: existing
entries the write replaces move into a hidden trash directory, the staged files move
into place, ``_SUCCESS`` is written, and only then is the trash deleted. Every rename
and every directory created is journaled; if anything fails, the journal is undone in
reverse, so the target is exactly as before (old data back from the trash, new
directories removed), and the error is raised again.

Examples
--------
>>> import fsspec, posixpath, tempfile
>>> fs = fsspec.filesystem("file", auto_mkdir=True)
>>> root = tempfile.mkdtemp()
>>> fs.pipe(posixpath.join(root, "_temporary-1/part-0.tfrecord"), b"data")
>>> commit_renames(fs, root, new=[(posixpath.join(root, "_temporary-1/part-0.tfrecord"),
...                                "k=1/part-0.tfrecord")], trash=posixpath.join(root, "_trash-1"))
>>> sorted(posixpath.relpath(p, root) for p in fs.find(root))
['_SUCCESS', 'k=1/part-0.tfrecord']
"""

from __future__ import annotations

import posixpath
from typing import Any, Sequence

__all__ = ["SUCCESS_MARKER", "commit_renames", "remove_quietly"]

#: The marker Spark (and tfsql) writes into a directory when a write job committed.
SUCCESS_MARKER = "_SUCCESS"


def commit_renames(
    fs: Any,
    root: str,
    *,
    new: Sequence[tuple[str, str]],
    replaced: Sequence[str] = (),
    trash: str,
) -> None:
    """Move staged files into ``root``, replacing some entries, atomically.

    Parameters
    ----------
    fs : fsspec.AbstractFileSystem
    root : str
        The target directory (it exists).
    new : sequence of (str, str)
        ``(staged path, path relative to root)`` of each file to move into place.
    replaced : sequence of str
        Paths relative to ``root`` of existing entries (files or directories) to
        replace: they move to ``trash`` first and are deleted after the commit.
    trash : str
        A hidden directory inside ``root`` for the replaced entries.
    """
    moves: list[tuple[str, str]] = []  # (source, destination); source "" = directory made
    marker = posixpath.join(root, SUCCESS_MARKER)
    marker_existed = fs.exists(marker)
    try:
        for rel in replaced:
            _move(fs, root, posixpath.join(root, rel), posixpath.join(trash, rel), moves)
        for staged, rel in new:
            _move(fs, root, staged, posixpath.join(root, rel), moves)
        with fs.open(marker, "wb"):
            pass
    except BaseException:
        for src, dst in reversed(moves):
            try:
                if src:
                    fs.mv(dst, src, recursive=True)
                elif not fs.find(dst):
                    fs.rm(dst, recursive=True)
            except Exception:  # pragma: no cover - best effort on a failing filesystem
                pass
        if not marker_existed:
            remove_quietly(fs, marker)
        if fs.exists(trash) and not fs.find(trash):
            remove_quietly(fs, trash)  # only when every old file is back
        raise
    remove_quietly(fs, trash)


def _move(fs: Any, root: str, src: str, dst: str, moves: list[tuple[str, str]]) -> None:
    """Rename ``src`` to ``dst``, journaling the move and any directory it creates."""
    missing = []
    parent = posixpath.dirname(dst)
    while parent and parent != root and not fs.exists(parent):
        missing.append(parent)
        parent = posixpath.dirname(parent)
    for directory in reversed(missing):
        fs.makedirs(directory, exist_ok=True)
        moves.append(("", directory))  # undo: remove the directory again
    fs.mv(src, dst, recursive=True)
    moves.append((src, dst))


def remove_quietly(fs: Any, path: str) -> None:
    """Remove ``path`` (recursively) if it exists; cleanup never masks another error."""
    try:
        if fs.exists(path):
            fs.rm(path, recursive=True)
    except Exception:  # pragma: no cover - cleanup must not mask the original error
        pass
