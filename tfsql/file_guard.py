"""Reading a local file that may change under the reader: every change is an error.

A scan plans its reads from the size the file had when it was listed (byte ranges,
pieces) and may open a file several times (one open per piece). Another process can
meanwhile truncate, extend, rewrite, replace or delete it. Reading on would then loop
on bytes that are gone, drop records silently, or mix two versions of the file, so
:class:`GuardedFile` checks, at each open and after each read, that the file is the
one the scan first opened (same device and inode), with the listed size and the same
modification time, and raises :class:`~tfsql.errors.FileChangedError` naming the file
and the change otherwise. A file whose content never changes while it is read (or that
is deleted or replaced after its last open: the reader still holds the old one) reads
completely and correctly.

The stamps a scan records (:class:`FileStamp`, one per path) live in a dict the scan
owns, so that every open of a file within one scan is compared with the first.

Examples
--------
>>> import os, tempfile
>>> fd, name = tempfile.mkstemp()
>>> _ = os.write(fd, b"0123456789")
>>> stamps = {}
>>> f = GuardedFile.open(name, display=name, size=10, stamps=stamps)
>>> f.read(4)
b'0123'
>>> os.truncate(name, 6)
>>> f.read(4)  # doctest: +ELLIPSIS
Traceback (most recent call last):
tfsql.errors.FileChangedError: ... changed while it was read: its size went from 10 to 6 bytes; read it again
>>> f.close(); os.close(fd)
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from tfsql.errors import FileChangedError

__all__ = ["FileStamp", "GuardedFile", "expected_stamp"]


if hasattr(os, "preadv"):

    def _pread_into(fd: int, view: memoryview, offset: int) -> int:
        return os.preadv(fd, [view], offset)

else:  # platforms without preadv: one more copy

    def _pread_into(fd: int, view: memoryview, offset: int) -> int:
        data = os.pread(fd, len(view), offset)
        view[: len(data)] = data
        return len(data)


@dataclass(frozen=True)
class FileStamp:
    """What identifies one version of a file: device, inode, size, modification time."""

    dev: int
    ino: int
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, st: os.stat_result) -> "FileStamp":
        """The stamp of a ``stat`` result.

        >>> FileStamp.of(os.stat(__file__)).size == os.path.getsize(__file__)
        True
        """
        return cls(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)

    def change(self, now: "FileStamp") -> str | None:
        """How ``now``, a later ``stat`` of the file, differs from this stamp:
        ``"replaced"`` (another file), ``"size"``, ``"modified"``, or None.

        >>> stamp = FileStamp(dev=1, ino=2, size=10, mtime_ns=5)
        >>> [stamp.change(FileStamp(1, i, s, m)) for i, s, m in [(2, 10, 5), (3, 10, 5), (2, 9, 5), (2, 10, 6)]]
        [None, 'replaced', 'size', 'modified']
        """
        if (now.dev, now.ino) != (self.dev, self.ino):
            return "replaced"
        if now.size != self.size:
            return "size"
        return "modified" if now.mtime_ns != self.mtime_ns else None


def expected_stamp(stamps: dict[str, FileStamp], path: str, now: FileStamp, size: int) -> FileStamp:
    """The stamp ``path`` must match in this scan: that of its first open (``now``, with
    the size it was listed with), recorded in ``stamps`` when this is that open."""
    return stamps.setdefault(path, FileStamp(now.dev, now.ino, size, now.mtime_ns))


class GuardedFile:
    """An unbuffered binary file that raises :class:`~tfsql.errors.FileChangedError`
    when the file changes (see the module docstring). ``size`` is the size the file had
    when it was listed; ``stamps`` maps a path to the stamp of its first open in this
    scan (filled here)."""

    def __init__(self, raw: Any, *, display: str, expected: FileStamp) -> None:
        self._raw = raw
        self._display = display
        self._expected = expected
        self._pos = 0

    @classmethod
    def open(cls, path: str, *, display: str, size: int, stamps: dict[str, FileStamp]) -> "GuardedFile":
        """Open ``path`` for reading, checking it against ``size`` and its stamp."""
        try:
            raw = open(path, "rb", buffering=0)
        except FileNotFoundError:
            raise FileChangedError("deleted", path=display) from None
        try:
            now = FileStamp.of(os.fstat(raw.fileno()))
            guarded = cls(raw, display=display, expected=expected_stamp(stamps, path, now, size))
            guarded.check(now)
        except BaseException:
            raw.close()
            raise
        return guarded

    def check(self, now: FileStamp | None = None) -> None:
        """Raise when the open file is not the expected one, or its size or modification
        time is not the expected one."""
        if now is None:
            now = FileStamp.of(os.fstat(self._raw.fileno()))
        change = self._expected.change(now)
        if change == "size":
            raise FileChangedError("size", path=self._display, before=self._expected.size, after=now.size)
        if change is not None:
            raise FileChangedError(change, path=self._display)

    def readinto(self, view: Any) -> int:
        got = self._raw.readinto(view) or 0
        self._pos += got
        self.check()
        return got

    def read_at(self, view: Any, offset: int) -> int:
        """Read into the writable byte memoryview ``view`` from byte ``offset`` (a positioned read:
        no seek, no mapping that could fault if the file shrinks), as many bytes as it
        holds unless the file ends first; return how many were read. Call :meth:`check`
        after a group of such reads.

        >>> import tempfile
        >>> with tempfile.NamedTemporaryFile() as tmp:
        ...     _ = tmp.write(b"0123456789"); tmp.flush()
        ...     f = GuardedFile.open(tmp.name, display=tmp.name, size=10, stamps={})
        ...     buf = bytearray(4)
        ...     (f.read_at(memoryview(buf), 3), bytes(buf), f.read_at(memoryview(buf), 8))
        ...     f.close()
        (4, b'3456', 2)
        """
        fd = self._raw.fileno()
        done = _pread_into(fd, view, offset)
        while 0 < done < len(view):  # a short read that is not the end of the file
            got = _pread_into(fd, view[done:], offset + done)
            if got == 0:
                break
            done += got
        return done

    def read(self, n: int = -1) -> bytes:
        data = self._raw.read(n)
        self._pos += len(data)
        self.check()
        return data

    def seek(self, offset: int, whence: int = 0) -> int:
        self._pos = self._raw.seek(offset, whence)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def fileno(self) -> int:
        return self._raw.fileno()

    def seekable(self) -> bool:
        return True

    def readable(self) -> bool:
        return True

    @property
    def closed(self) -> bool:
        return self._raw.closed

    def close(self) -> None:
        self._raw.close()

    def __enter__(self) -> "GuardedFile":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
