"""Locks that die with their process: one per write target, one per live staging directory.

Writers to the same target serialize their commits (and their recovery of a crashed
writer's commit) with an exclusive ``flock`` on ``<target>/_tfsql.lock``; each writer
also holds a lock on ``<staging>/_tfsql.owner`` for as long as it lives, which is how
the next writer tells a dead writer's staging directory (lock free: removed) from a live
one's (lock held: left alone). The kernel releases both when the process exits, however
it exits (``kill -9`` included), so a crash never leaves a target locked.

The target lock file is removed when its holder releases it; `target_lock` re-checks
after each acquisition that the file it locked is still the one at the path (the
classic unlink race), so removing it is safe.

Filesystems without ``flock`` (fsspec object stores such as ``s3://``, ``memory://``,
or a local mount whose ``flock`` fails) get no locking: tfsql then assumes one writer
at a time per target, as Spark's and Hadoop's committers do on object stores. Recovery
of a crashed commit still works there; concurrent writers are not serialized and may
remove each other's staging.

Examples
--------
>>> import fsspec, tempfile, os
>>> fs = fsspec.filesystem("file")
>>> root = tempfile.mkdtemp()
>>> with target_lock(fs, root) as lock:
...     lock.held, sorted(os.listdir(root))
(True, ['_tfsql.lock'])
>>> os.listdir(root)
[]
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from typing import Any

from fsspec.implementations.local import LocalFileSystem

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no flock, tfsql writes unlocked
    fcntl = None  # type: ignore[assignment]

__all__ = ["LOCK_NAME", "OWNER_NAME", "Lock", "is_owner_alive", "owner_lock", "target_lock", "no_commit_under_way"]

#: The target's lock file (hidden from readers by its ``_`` prefix).
LOCK_NAME = "_tfsql.lock"
#: The file inside a staging directory its writer holds locked while it lives.
OWNER_NAME = "_tfsql.owner"

_UNSUPPORTED = {errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS}
_HELD_HERE: set[str] = set()  # the target lock files this process holds


class Lock:
    """A held (or, without lock support, a pretend) lock; `held` says which."""

    def __init__(self, fd: int | None, path: str | None) -> None:
        self.fd, self.path = fd, path

    @property
    def held(self) -> bool:
        return self.fd is not None

    def release(self, *, remove: bool = False) -> None:
        """Release the lock, first removing its file when ``remove`` (while still held)."""
        if self.fd is None:
            return
        _HELD_HERE.discard(self.path or "")
        try:
            if remove and self.path is not None:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.path)
        finally:
            os.close(self.fd)
            self.fd = None


def lockable(fs: Any) -> bool:
    """True when ``fs`` is the local filesystem on a platform with ``flock``."""
    return fcntl is not None and isinstance(fs, LocalFileSystem)


@contextlib.contextmanager
def target_lock(fs: Any, root: str) -> Iterator[Lock]:
    """Hold the exclusive lock of the target directory ``root`` (created if missing);
    blocks while another process or thread holds it. The lock file is removed on exit."""
    lock = _acquire_target(fs, root)
    try:
        yield lock
    finally:
        lock.release(remove=True)


def _acquire_target(fs: Any, root: str) -> Lock:
    if not lockable(fs):
        fs.makedirs(root, exist_ok=True)
        return Lock(None, None)
    path = os.path.join(root, LOCK_NAME)
    while True:
        os.makedirs(root, exist_ok=True)
        try:
            fd = _locked_fd(path, os.O_RDWR | os.O_CREAT, fcntl.LOCK_EX)
        except FileNotFoundError:  # the directory was removed meanwhile: make it again
            continue
        except OSError as exc:
            if exc.errno in _UNSUPPORTED:
                return Lock(None, None)  # this mount has no flock: write unlocked
            raise
        _HELD_HERE.add(path)
        return Lock(fd, path)


def _locked_fd(path: str, flags: int, operation: int) -> int:
    """Open ``path`` with ``flags`` and ``flock`` it with ``operation``, again until the
    file locked is the one at the path (its holder removes it on release: the classic
    unlink race). Raises what ``open`` or ``flock`` raise."""
    while True:
        fd = os.open(path, flags, 0o666)
        try:
            fcntl.flock(fd, operation)
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except FileNotFoundError:
            same = False
        except BaseException:
            os.close(fd)
            raise
        if same:
            return fd
        os.close(fd)  # we locked a file its holder removed: lock the current one


def owner_lock(fs: Any, staging: str) -> Lock:
    """Create ``staging`` and hold its owner lock until `Lock.release` (or process exit)."""
    fs.makedirs(staging, exist_ok=True)
    if not lockable(fs):
        return Lock(None, None)
    path = os.path.join(staging, OWNER_NAME)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in _UNSUPPORTED:
            return Lock(None, None)
        raise
    return Lock(fd, path)


def is_owner_alive(fs: Any, staging: str) -> bool:
    """Whether the writer of a staging directory still lives (its owner lock is held).

    Without lock support this is always False: one writer at a time is assumed.
    """
    if not lockable(fs):
        return False
    try:
        fd = os.open(os.path.join(staging, OWNER_NAME), os.O_RDONLY)
    except OSError:
        return False  # no owner file: created before locking existed, or never finished
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
    return False


@contextlib.contextmanager
def no_commit_under_way(fs: Any, root: str) -> Iterator[bool]:
    """While a writer holds or held the target lock of ``root`` (its file exists), hold
    a shared lock on it: a commit under way is waited for, and commits wait while it is
    held. Yields True when nothing can commit into ``root`` meanwhile: the shared lock
    is held, or this process holds the target lock itself, or there is no ``flock``
    (one writer at a time is assumed). False when there is no lock file: no writer has
    the target locked now, and the caller checks that no commit ran meanwhile (see
    :func:`tfsql.commit.consistent_listing`). The lock file is opened read-only:
    readers need no write access.
    """
    path = os.path.join(root, LOCK_NAME)
    if not lockable(fs) or path in _HELD_HERE:
        yield True
        return
    try:
        fd = _locked_fd(path, os.O_RDONLY, fcntl.LOCK_SH)
    except OSError as exc:
        # no flock on this mount: nothing to wait for; no lock file (or none this process
        # may open): the caller checks the listing instead
        settled = exc.errno in _UNSUPPORTED
    else:
        try:
            yield True
        finally:
            os.close(fd)
        return
    yield settled
