"""Commit staged files into a target directory so that a crash at any instant is undone
or finished, never left half done.

Writers (``tfsql.write_tfrecord``, the Spark data source's driver) stage complete,
fsync'd files under a hidden directory inside the target, then, holding the target's
lock (:mod:`tfsql.locking`), call :func:`apply_commit`:

1. The *intent record* ``<target>/_tfsql-intent.json`` is written (to a temporary name,
   fsync'd, renamed into place, the directory fsync'd). It lists every move: the entries
   the write replaces (into ``_trash-<job>/``), ``_SUCCESS`` among them, and each staged
   file with its final place; its state is ``prepared``.
2. The moves are made (renames; the directories they touch are fsync'd).
3. ``_SUCCESS`` is written and the record is rewritten with state ``committed`` (the same
   atomic replace): this rename is the commit point.
4. The trash (the old data) is deleted, then the record.

Recovery (:func:`recover_locked`, run by every write before it looks at the target, by
``tfsql.recover(path)`` and by ``tfsql recover PATH``) reads the record: ``prepared``
is rolled back (new files back to staging, old entries back from the trash), so the
target holds the old content; ``committed`` is finished (trash and record deleted), so
the target holds the new content. Each step checks where files are, so recovery itself
may be interrupted and run again. It also removes what dead writers left: staging
directories whose owner lock is free, trash directories, a half-written record.

tfsql's readers list a directory while no commit is under way in it
(:func:`consistent_listing`: the shared target lock when a writer holds it, waited
for; else a check that no commit started or ended during the listing, retried until one
did not, so that a reader never holds a commit off), so a listing never holds half of a commit's moves. A ``prepared`` record they
then meet (a writer died in its commit) is read as the rollback would leave it
(the core's ``tfsql_plan``); a ``committed`` record needs nothing, as the new files are in
place.

Examples
--------
>>> import fsspec, os, posixpath, tempfile
>>> fs = fsspec.filesystem("file", auto_mkdir=True)
>>> root = tempfile.mkdtemp()
>>> fs.pipe(posixpath.join(root, "_temporary-1/part-0.tfrecord"), b"data")
>>> apply_commit(fs, root, job="1", new=[("_temporary-1/part-0.tfrecord", "k=1/part-0.tfrecord")])
>>> sorted(posixpath.relpath(p, root) for p in fs.find(root))
['_SUCCESS', 'k=1/part-0.tfrecord']
"""

from __future__ import annotations

import errno
import json
import os
import posixpath
import re
import shutil
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fsspec.implementations.local import LocalFileSystem

from tfsql._codec import codec
from tfsql.errors import TFSQLError
from tfsql.locking import LOCK_NAME, OWNER_NAME, is_owner_alive, no_commit_under_way

__all__ = [
    "INTENT_NAME",
    "SUCCESS_MARKER",
    "Recovery",
    "apply_commit",
    "consistent_listing",
    "data_entries",
    "is_bookkeeping",
    "recover",
    "recover_locked",
    "remove_dead_file_staging",
    "remove_quietly",
    "single_file_staging",
    "sync_dirs",
    "sync_file",
]

#: The marker Spark (and tfsql) writes into a directory when a write job committed.
SUCCESS_MARKER = "_SUCCESS"
#: The intent record of a commit under way (or interrupted).
INTENT_NAME = "_tfsql-intent.json"
_INTENT_TMP = INTENT_NAME + ".tmp"
STAGING_PREFIX = "_temporary-"
SPARK_STAGING_PREFIX = "_temporary-spark-"
TRASH_PREFIX = "_trash-"
_FORMAT = 1
# A single-file write's staging directory beside its target (tfsql.writer.single_file).
_FILE_STAGING = re.compile(r"\.(?P<name>.+)\.tfsql-[0-9a-f]{32}")


def single_file_staging(name: str, job: str) -> str:
    """The hidden directory beside the file ``name`` where a single-file write stages it.

    >>> single_file_staging("x.tfrecord", "0" * 32)
    '.x.tfrecord.tfsql-00000000000000000000000000000000'
    """
    return f".{name}.tfsql-{job}"


def remove_dead_file_staging(fs: Any, parent: str, name: str | None = None) -> list[str]:
    """Remove the staging directories of dead single-file writers in ``parent`` (of the
    file ``name`` only, when given); call it holding ``parent``'s target lock, under which
    a live writer creates its staging and takes its owner lock. Returns their names."""
    removed: list[str] = []
    try:
        names = sorted(posixpath.basename(p.rstrip("/")) for p in fs.ls(parent, detail=False))
    except (FileNotFoundError, NotADirectoryError):
        return removed
    for entry in names:
        match = _FILE_STAGING.fullmatch(entry)
        if match is None or (name is not None and match["name"] != name):
            continue
        path = posixpath.join(parent, entry)
        if fs.isdir(path) and not is_owner_alive(fs, path):
            _Ops(fs, parent).remove(entry)
            removed.append(entry)
    if removed:
        sync_dirs(fs, [parent])
    return removed


def is_bookkeeping(name: str) -> bool:
    """True for the entries tfsql's writers keep in a target besides the data: lock,
    intent record, staging and trash directories (``_SUCCESS`` is data's marker, not
    bookkeeping).

    >>> [is_bookkeeping(n) for n in ["_tfsql.lock", "_temporary-x", "_trash-x", "_SUCCESS", "k=1"]]
    [True, True, True, False, False]
    """
    return name in (LOCK_NAME, OWNER_NAME, INTENT_NAME, _INTENT_TMP) or name.startswith((STAGING_PREFIX, TRASH_PREFIX))


def data_entries(fs: Any, root: str) -> list[str]:
    """Names of the entries of ``root`` that are not bookkeeping, sorted ([] if absent)."""
    try:
        names = [posixpath.basename(p.rstrip("/")) for p in fs.ls(root, detail=False)]
    except (FileNotFoundError, NotADirectoryError):
        return []
    return sorted(n for n in names if not is_bookkeeping(n))


# --------------------------------------------------------------------------------------
# Durable filesystem steps
# --------------------------------------------------------------------------------------


def sync_file(file: Any) -> None:
    """Flush a file being written and, when it has a descriptor, fsync it."""
    file.flush()
    try:
        fileno = file.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a local file: the filesystem makes it durable on close
    os.fsync(fileno)


def sync_dirs(fs: Any, directories: Iterable[str]) -> None:
    """fsync local directories so that the renames and creations in them are durable."""
    if not isinstance(fs, LocalFileSystem) or not hasattr(os, "O_DIRECTORY"):
        return
    for directory in sorted(set(directories)):
        try:
            fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        except (FileNotFoundError, PermissionError):
            continue  # gone, or a parent we may not read: nothing of ours to make durable
        try:
            os.fsync(fd)
        except OSError as exc:
            if exc.errno not in (errno.EINVAL, errno.ENOTSUP):  # no directory fsync here
                raise
        finally:
            os.close(fd)


class _Ops:
    """The few filesystem steps a commit takes, durable on the local filesystem."""

    def __init__(self, fs: Any, root: str) -> None:
        self.fs, self.root = fs, root
        self.local = isinstance(fs, LocalFileSystem)
        self.touched: set[str] = set()

    def path(self, rel: str) -> str:
        if self.local and "/" in rel:
            link = self.link_on_the_way(rel)
            if link is not None:
                raise TFSQLError(
                    f"{posixpath.join(self.root, link)} is a symbolic link on the way to {posixpath.join(self.root, rel)}: a "
                    "commit acts only inside its target and follows no links there; nothing was moved there"
                )
        return posixpath.join(self.root, rel) if rel else self.root

    def link_on_the_way(self, rel: str, *, itself: bool = False) -> str | None:
        """The first directory of ``rel`` (relative to the root; ``rel`` itself too when
        ``itself``) that is a symbolic link (or no directory), each resolved in turn
        without following links; None when there is none (or the rest does not exist)."""
        parts = rel.split("/")
        current = self.root
        for k, part in enumerate(parts if itself else parts[:-1]):
            current = os.path.join(current, part)
            try:
                mode = os.lstat(current).st_mode
            except FileNotFoundError:
                return None
            if stat.S_ISLNK(mode) or (k < len(parts) - 1 and not stat.S_ISDIR(mode)):
                return "/".join(parts[: k + 1])
        return None

    def exists(self, rel: str) -> bool:
        return os.path.lexists(self.path(rel)) if self.local else self.fs.exists(self.path(rel))

    def makedirs(self, rel: str) -> None:
        missing = []
        while rel and not self.exists(rel):
            missing.append(rel)
            rel = posixpath.dirname(rel)
        for directory in reversed(missing):
            self.fs.makedirs(self.path(directory), exist_ok=True)
            self.touched.add(self.path(posixpath.dirname(directory)))

    def rename(self, src: str, dst: str) -> None:
        self.makedirs(posixpath.dirname(dst))
        if self.local:
            os.rename(self.path(src), self.path(dst))
        else:
            self.fs.mv(self.path(src), self.path(dst), recursive=True)
        self.touched.update(posixpath.dirname(self.path(p)) for p in (src, dst))

    def sync(self) -> None:
        sync_dirs(self.fs, self.touched)
        self.touched.clear()

    def write_atomic(self, rel: str, data: bytes) -> None:
        if not self.local:
            self.fs.pipe(self.path(rel), data)
            return
        tmp = self.path(rel + ".tmp")
        with open(tmp, "wb") as f:
            f.write(data)
            sync_file(f)
        os.replace(tmp, self.path(rel))
        sync_dirs(self.fs, [posixpath.dirname(self.path(rel))])

    def touch(self, rel: str) -> None:
        if self.local:
            with open(self.path(rel), "wb") as f:
                sync_file(f)
        else:
            self.fs.pipe(self.path(rel), b"")
        self.touched.add(posixpath.dirname(self.path(rel)))

    def read(self, rel: str) -> bytes:
        return self.fs.cat_file(self.path(rel))

    def remove(self, rel: str) -> None:
        path = self.path(rel)
        if self.local:
            for _ in range(10):  # another process may be removing parts of it meanwhile
                try:
                    if os.path.isdir(path) and not os.path.islink(path):
                        shutil.rmtree(path)
                    elif os.path.lexists(path):
                        os.unlink(path)
                    break
                except FileNotFoundError:
                    continue
        elif self.fs.exists(path):
            self.fs.rm(path, recursive=True)
        self.touched.add(posixpath.dirname(path))

    def rmdir_if_empty(self, rel: str) -> None:
        path = self.path(rel)
        try:
            if self.fs.isdir(path) and not self.fs.ls(path, detail=False):
                self.fs.rmdir(path)
                self.touched.add(posixpath.dirname(path))
        except OSError:
            pass


# --------------------------------------------------------------------------------------
# The intent record
# --------------------------------------------------------------------------------------


@dataclass
class _Intent:
    job: str
    trash: str
    replaced: list[str]
    new: list[tuple[str, str]]  # (staged path, final path), both relative to the target
    created: list[str]  # directories the moves create, shallowest first
    state: str = "prepared"

    def dump(self) -> bytes:
        return json.dumps(
            {
                "tfsql_intent": _FORMAT,
                "state": self.state,
                "job": self.job,
                "trash": self.trash,
                "replaced": self.replaced,
                "new": [list(pair) for pair in self.new],
                "created": self.created,
            },
            indent=1,
        ).encode()

    @classmethod
    def load(cls, data: bytes, where: str) -> _Intent:
        """The record ``data`` read by the core's parser (``codec.intent_parse``, the one
        parser, which the DuckDB extension uses too); a TFSQLError naming ``where`` when
        it is not one tfsql wrote."""
        try:
            raw = codec.intent_parse(data)
        except ValueError as exc:
            raise TFSQLError(
                f"{where}: the commit intent record is not one tfsql wrote ({exc}); it was left "
                "as is. Inspect the directory, then remove the record by hand"
            ) from None
        return cls(raw["job"], raw["trash"], raw["replaced"], raw["new"], raw["created"], raw["state"])

    def paths(self) -> list[str]:
        """Every path the record names (relative to the target)."""
        return [self.trash, *self.replaced, *self.created, *(p for pair in self.new for p in pair)]


def _is_inner(rel: Any) -> bool:
    """A normalized relative path below the target (no ``..``, not absolute, not empty)."""
    return (
        isinstance(rel, str)
        and rel not in ("", ".")
        and not rel.startswith("/")
        and posixpath.normpath(rel) == rel
        and ".." not in rel.split("/")
    )


def apply_commit(
    fs: Any,
    root: str,
    *,
    job: str,
    new: Sequence[tuple[str, str]],
    replaced: Sequence[str] = (),
) -> None:
    """Move staged files into ``root`` and replace entries, all or nothing, crash-safe.

    Call it holding the target lock, after :func:`recover_locked`.

    Parameters
    ----------
    fs : fsspec.AbstractFileSystem
    root : str
        The target directory (it exists).
    job : str
        The write job's id; the trash is ``_trash-<job>``.
    new : sequence of (str, str)
        ``(staged path, final path)`` of each file, relative to ``root`` (an absolute
        staged path below ``root`` is accepted). Their final paths must not exist
        outside the replaced entries.
    replaced : sequence of str
        Paths relative to ``root`` of existing entries (files or directories) to replace.
    """
    ops = _Ops(fs, root)
    prefix = root.rstrip("/") + "/"
    pairs = [(s.removeprefix(prefix), d) for s, d in new]
    replaced = [r for r in replaced if r != SUCCESS_MARKER]
    if ops.exists(SUCCESS_MARKER):
        replaced.insert(0, SUCCESS_MARKER)  # absent from the first move to the commit point
    outside = [p for p in [*replaced, *(p for pair in pairs for p in pair)] if not _is_inner(p)]
    if outside:
        raise ValueError(f"commit paths must be relative paths inside {root}, got {outside[0]!r}")
    intent = _Intent(job, TRASH_PREFIX + job, replaced, pairs, _created_directories(ops, pairs, replaced))
    _refuse_links(ops, intent, written=False)
    ops.write_atomic(INTENT_NAME, intent.dump())
    try:
        for rel in replaced:
            ops.rename(rel, posixpath.join(intent.trash, rel))
        for directory in intent.created:
            ops.makedirs(directory)
        for staged, rel in pairs:
            ops.rename(staged, rel)
        ops.touch(SUCCESS_MARKER)
        ops.touched.add(posixpath.dirname(root.rstrip("/")))  # the target's own entry
        ops.sync()
        intent.state = "committed"
        ops.write_atomic(INTENT_NAME, intent.dump())  # the commit point
    except BaseException:
        try:
            _roll_back(ops, intent)
        except Exception:  # pragma: no cover - the next write or recover() finishes it
            pass
        raise
    try:
        _finish(ops, intent)
    except Exception:  # pragma: no cover - committed; the next write finishes the cleanup
        pass


def _refuse_links(ops: _Ops, intent: _Intent, *, written: bool = True) -> None:
    """Refuse a record naming a path through a symbolic link (or a trash that is one):
    following it would move or delete files outside the target. Checked before any
    step, so nothing is changed; a record read from the target is left for the user."""
    if not ops.local:
        return  # object stores have no links
    for rel in intent.paths():
        link = ops.link_on_the_way(rel, itself=rel == intent.trash)
        if link is None:
            continue
        where = f"{ops.root}/{INTENT_NAME}: the commit intent record names" if written else "the commit needs"
        left = (
            "; it was left as is. Inspect the directory, then remove the record by hand"
            if written
            else "; nothing was changed. Write to a target without links inside it"
        )
        raise TFSQLError(
            f"{where} {rel}, which goes through the symbolic link {ops.root}/{link}: tfsql acts only "
            f"inside the target and follows no links there{left}"
        )


def _created_directories(ops: _Ops, pairs: Sequence[tuple[str, str]], replaced: Sequence[str]) -> list[str]:
    """Directories the moves will create: missing now, or inside a replaced entry."""
    gone = tuple(r + "/" for r in replaced)
    created: set[str] = set()
    for _, rel in pairs:
        parent = posixpath.dirname(rel)
        while parent and parent not in created:
            if ops.exists(parent) and not (parent + "/").startswith(gone):
                break
            created.add(parent)
            parent = posixpath.dirname(parent)
    return sorted(created, key=lambda d: (d.count("/"), d))


def _roll_back(ops: _Ops, intent: _Intent) -> None:
    """Undo a ``prepared`` commit: the target holds exactly its old content again."""
    for staged, rel in reversed(intent.new):
        if not ops.exists(staged) and ops.exists(rel):
            ops.rename(rel, staged)

    def in_trash(rel: str) -> bool:
        return ops.exists(posixpath.join(intent.trash, rel))

    if ops.exists(SUCCESS_MARKER) and (SUCCESS_MARKER not in intent.replaced or in_trash(SUCCESS_MARKER)):
        ops.remove(SUCCESS_MARKER)  # the new marker
    for directory in reversed(intent.created):
        ops.rmdir_if_empty(directory)
    for rel in reversed(intent.replaced):
        if in_trash(rel):
            if ops.exists(rel):
                raise TFSQLError(
                    f"{ops.path(rel)} exists and its old version is in {ops.path(intent.trash)}: "
                    "the interrupted commit cannot be undone automatically; nothing was removed"
                )
            ops.rename(posixpath.join(intent.trash, rel), rel)
    ops.sync()
    ops.remove(intent.trash)
    ops.remove(INTENT_NAME)
    ops.sync()


def _finish(ops: _Ops, intent: _Intent) -> None:
    """Complete a ``committed`` commit: delete the old data, then the record."""
    ops.remove(intent.trash)
    ops.remove(INTENT_NAME)
    ops.sync()


# --------------------------------------------------------------------------------------
# Recovery
# --------------------------------------------------------------------------------------


@dataclass
class Recovery:
    """What :func:`tfsql.recover` found and did in a target directory.

    Attributes
    ----------
    path : str
        The target directory.
    commit : str or None
        ``"rolled back"`` (an interrupted commit was undone: the old content stays),
        ``"finished"`` (it had reached its commit point: the new content stays), or None.
    removed : list of str
        Leftovers of dead writers that were removed (staging, trash, a half-written record).
    """

    path: str
    commit: str | None = None
    removed: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        done = {
            None: "no interrupted commit",
            "rolled back": "an interrupted commit was rolled back (the old content is kept)",
            "finished": "an interrupted commit was finished (the new content is kept)",
        }[self.commit]
        removed = f"; removed {', '.join(self.removed)}" if self.removed else "; no leftovers"
        return f"{self.path}: {done}{removed}"


def recover_locked(fs: Any, root: str, *, keep: Iterable[str] = (), display: str | None = None) -> Recovery:
    """Resolve an interrupted commit in ``root`` and remove dead writers' leftovers.

    Call it holding the target lock. ``keep`` names entries of the caller's own (its
    staging directory, on filesystems without locks where liveness cannot be checked).
    Staging directories of Spark jobs (``_temporary-spark-*``) are left alone: their
    writers are Spark tasks and drivers whose liveness tfsql cannot see.
    """
    ops = _Ops(fs, root)
    result = Recovery(display or root)
    if not fs.isdir(root):
        return result
    if ops.exists(INTENT_NAME):
        intent = _Intent.load(ops.read(INTENT_NAME), ops.path(INTENT_NAME))
        _refuse_links(ops, intent)
        if intent.state == "committed":
            _finish(ops, intent)
            result.commit = "finished"
        else:
            _roll_back(ops, intent)
            result.commit = "rolled back"
    own = set(keep)
    for name in sorted(posixpath.basename(p.rstrip("/")) for p in fs.ls(root, detail=False)):
        if name in own or name.startswith(SPARK_STAGING_PREFIX):
            continue
        dead = (
            name == _INTENT_TMP
            or name.startswith(TRASH_PREFIX)
            or (name.startswith(STAGING_PREFIX) and not is_owner_alive(fs, ops.path(name)))
        )
        if dead:
            ops.remove(name)
            result.removed.append(name)
    result.removed += remove_dead_file_staging(fs, root)
    ops.sync()
    return result


def recover(path: str | os.PathLike, *, filesystem: Any = None) -> Recovery:
    """Finish or undo a write that crashed in ``path``, and remove dead writers' leftovers.

    Every tfsql write does this first, so calling it is needed only before reading the
    target with other tools (Spark, TensorFlow), which do not know the intent record. It
    waits while a live writer commits, and never touches a live writer's staging.
    A single file's target (``x.tfrecord``) has no commit to resolve: its dead writers'
    hidden staging directories beside it (``.x.tfrecord.tfsql-*``) are removed, as they
    are by ``recover`` on its directory and by the next write of the file.

    Parameters
    ----------
    path : str or path-like
        The target directory of the writes, or a single file's target (a local path or
        an fsspec URL).
    filesystem : fsspec or pyarrow filesystem, optional
        Overrides the filesystem the path implies.

    Returns
    -------
    Recovery
        What was found and done.

    Examples
    --------
    >>> import tempfile, pyarrow as pa, tfsql
    >>> out = tempfile.mkdtemp()
    >>> _ = tfsql.write_tfrecord(pa.table({"x": [1]}), out, mode="overwrite")
    >>> tfsql.recover(out).commit is None
    True
    """
    from tfsql.discovery import resolve_path
    from tfsql.locking import target_lock

    text = os.fspath(path)
    fs, root = resolve_path(text, filesystem)
    if not fs.isdir(root):
        from tfsql.naming import is_single_file_target

        parent, name = posixpath.split(root.rstrip("/"))
        if not is_single_file_target(name) or not fs.isdir(parent):
            raise NotADirectoryError(
                f"{text!r} is not a directory; tfsql.recover takes a write target "
                "(a directory, or a TFRecord file's name such as x.tfrecord)"
            )
        with target_lock(fs, parent):
            return Recovery(text, removed=remove_dead_file_staging(fs, parent, name))
    with target_lock(fs, root):
        return recover_locked(fs, root, display=text)


def _commit_stamp(root: str) -> tuple:
    """What every commit into ``root`` changes: the intent record's content and the
    ``_SUCCESS`` marker's inode (each commit makes a new one while the old one is in the
    trash), and the presence of the lock file earlier versions' writers made for a
    commit (the lock is now a flock on the directory: no file)."""

    def inode(name: str) -> int | None:
        try:
            return os.lstat(os.path.join(root, name)).st_ino
        except OSError:
            return None

    try:
        with open(os.path.join(root, INTENT_NAME), "rb") as f:
            intent: bytes | None = f.read()
    except OSError:
        intent = None
    return inode(LOCK_NAME), intent, inode(SUCCESS_MARKER)


def consistent_listing(fs: Any, root: str, find: Any) -> Any:
    """``find()`` (a listing of the directory ``root``) taken while no commit into
    ``root`` was under way, so that it never holds part of a commit's moves: under the
    shared target lock when a writer held it (its commit is waited for), else retried
    until no commit started or ended while it ran (the intent record and
    the ``_SUCCESS`` marker were the same before and after).
    Listings of other filesystems than the local one are taken as they are.

    >>> import fsspec, tempfile
    >>> fs, root = fsspec.filesystem("file"), tempfile.mkdtemp()
    >>> consistent_listing(fs, root, lambda: fs.find(root))
    []
    """
    if not isinstance(fs, LocalFileSystem):
        return find()
    while True:
        with no_commit_under_way(fs, root) as settled:
            if settled:
                return find()
            before = _commit_stamp(root)
            listing = find()
            after = _commit_stamp(root)
        if before == after and before[0] is None:
            return listing


def remove_quietly(fs: Any, path: str) -> None:
    """Remove ``path`` (recursively) if it exists; cleanup never masks another error."""
    try:
        if fs.exists(path):
            fs.rm(path, recursive=True)
    except Exception:  # pragma: no cover - cleanup must not mask the original error
        pass
