"""Locks that die with their process: one per write target, one per live staging directory.

Writers to the same target exclude each other with an exclusive ``flock`` on a
descriptor of the target directory itself -- no lock file: tfsql/core/target_lock.c
holds the one implementation, which both native COPY bindings call too, reached here
through ``tfsql._native.target_lock``. DuckDB's ``COPY ... (OVERWRITE)`` empties the
target but keeps the directory, so it cannot remove the lock from under its holder (it
removed the ``<target>/_tfsql.lock`` file earlier versions used), and nothing is made
outside the target or left behind after a write. Each writer also holds a lock on
``<staging>/_tfsql.owner`` for as long as it lives, which is how the next writer tells a
dead writer's staging directory (lock free: removed) from a live one's (lock held: left
alone). The kernel releases both when the process exits, however it exits (``kill -9``
included), so a crash never leaves a target locked.

Writers stage side by side (each in its own staging directory inside the target) and
hold the target lock only to create their staging and to commit. A native COPY holds
it for its whole statement, and -- as DuckDB's OVERWRITE would empty the target, live
staging directories included -- refuses to start while any writer's owner lock is held
in the target (tfsql_target_busy in the core), naming it.

Filesystems without ``flock`` (fsspec object stores such as ``s3://``, ``memory://``,
or a local mount whose ``flock`` fails, NFS's on a directory included) get no locking:
tfsql then assumes one writer at a time per target, as Spark's and Hadoop's committers
do on object stores. Recovery of a crashed commit still works there; concurrent writers
are not serialized and may remove each other's staging.

Examples
--------
>>> import fsspec, tempfile, os
>>> fs = fsspec.filesystem("file")
>>> root = tempfile.mkdtemp()
>>> with target_lock(fs, root) as lock:
...     lock.held, os.listdir(root)
(True, [])
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import Any

from fsspec.implementations.local import LocalFileSystem

try:
    from tfsql import _native
except ImportError:  # pragma: no cover - no C core built: tfsql writes unlocked
    _native = None  # type: ignore[assignment]

__all__ = [
    "LOCK_NAME",
    "OWNER_NAME",
    "Lock",
    "is_owner_alive",
    "owner_lock",
    "target_lock",
    "no_commit_under_way",
]

#: The lock file earlier versions kept inside the target; still bookkeeping to readers.
LOCK_NAME = "_tfsql.lock"
#: The file inside a staging directory its writer holds locked while it lives.
OWNER_NAME = "_tfsql.owner"

_HELD_HERE: dict[str, int] = {}  # the targets this process holds locked: how many holds


class Lock:
    """A held (or, without lock support, a pretend) lock; `held` says which. ``path`` is
    the locked directory (a target) or file (a staging directory's owner file)."""

    def __init__(self, fd: int | None, path: str | None) -> None:
        self.fd, self.path = fd, path

    @property
    def held(self) -> bool:
        return self.fd is not None

    def release(self) -> None:
        """Release the lock (close its descriptor)."""
        if self.fd is None:
            return
        if self.path in _HELD_HERE:
            _HELD_HERE[self.path] -= 1
            if not _HELD_HERE[self.path]:
                del _HELD_HERE[self.path]
        os.close(self.fd)
        self.fd = None


def lockable(fs: Any) -> bool:
    """True when ``fs`` is the local filesystem on a platform with ``flock``."""
    return _native is not None and os.name == "posix" and isinstance(fs, LocalFileSystem)


@contextlib.contextmanager
def target_lock(fs: Any, root: str) -> Iterator[Lock]:
    """Hold the exclusive lock of the target directory ``root`` (created if missing);
    blocks while another process or thread holds it."""
    lock = _acquire_target(fs, root)
    try:
        yield lock
    finally:
        lock.release()


def _acquire_target(fs: Any, root: str) -> Lock:
    if not lockable(fs):
        fs.makedirs(root, exist_ok=True)
        return Lock(None, None)
    path = os.path.abspath(root)
    while True:
        os.makedirs(path, exist_ok=True)
        try:
            fd = _native.target_lock(path, True, True)
        except FileNotFoundError:  # the directory was removed meanwhile: make it again
            continue
        if fd is None:
            return Lock(None, None)  # this mount has no flock: write unlocked
        _HELD_HERE[path] = _HELD_HERE.get(path, 0) + 1
        return Lock(fd, path)


def owner_lock(fs: Any, staging: str) -> Lock:
    """Create ``staging`` and hold its owner lock until `Lock.release` (or process exit)."""
    fs.makedirs(staging, exist_ok=True)
    if not lockable(fs):
        return Lock(None, None)
    path = os.path.join(staging, OWNER_NAME)
    fd = _native.owner_lock(path)
    return Lock(None, None) if fd is None else Lock(fd, path)


def is_owner_alive(fs: Any, staging: str) -> bool:
    """Whether the writer of a staging directory still lives (its owner lock is held).

    Without lock support this is always False: one writer at a time is assumed.
    """
    return lockable(fs) and _native.owner_alive(os.path.join(staging, OWNER_NAME))


@contextlib.contextmanager
def no_commit_under_way(fs: Any, root: str) -> Iterator[bool]:
    """Wait for a commit (or a native COPY) under way into ``root`` and list without one.

    While a writer holds the target lock of ``root``, wait for it and hold the shared
    lock while the caller lists: the commit is whole in the listing or not in it. Yields
    True when nothing can commit into ``root`` meanwhile: that shared lock is held, or
    this process holds the target lock itself, or there is no ``flock`` (one writer at a
    time is assumed). Yields False when no writer held the lock: a listing then does not
    hold commits off (a reader stopped mid-listing must not stall every writer), and the
    caller checks that no commit ran meanwhile (see
    :func:`tfsql.commit.consistent_listing`); also when the lock cannot be taken (``root``
    is missing or cannot be opened). Readers need no write access: the lock is on a
    descriptor of the directory they list.
    """
    path = os.path.abspath(root)
    if not lockable(fs) or path in _HELD_HERE:
        yield True
        return
    try:
        try:
            fd = _native.target_lock(path, False, False)
            waited = False
        except BlockingIOError:  # a writer holds it: wait, then list under the shared lock
            fd = _native.target_lock(path, False, True)
            waited = True
    except OSError:
        yield False
        return
    if fd is None:
        yield True  # no flock on this mount: nothing to wait for
        return
    if not waited:
        os.close(fd)  # no writer: list without holding commits off, and check
        yield False
        return
    try:
        yield True
    finally:
        os.close(fd)
