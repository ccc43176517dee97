"""Interrupting the Python scans a query engine is pulling from (``con.interrupt()``).

DuckDB's ``con.interrupt()`` stops a query between the batches its scans deliver, but a
tfsql scan feeding DuckDB an Arrow stream may work for a long time before its next
batch: ``on_corrupt="skip"`` resynchronising through gigabytes of damage, or a filter
that keeps no row. :class:`Interrupts` records when a connection was interrupted; a scan
made after that is unaffected, one running then raises :class:`ScanInterrupted` at its
next read (files are read in chunks of at most 16 MiB, so within a fraction of a
second): every file a scan opens is an :class:`InterruptibleFile`.

Examples
--------
>>> import io
>>> interrupts = Interrupts()
>>> check = interrupts.check()  # a scan starts
>>> f = check.wrap(io.BytesIO(b"abc"))
>>> f.read(1)
b'a'
>>> interrupts.interrupt()
>>> try:
...     f.read(1)
... except ScanInterrupted as stopped:
...     print(stopped)
the scan was interrupted
>>> interrupts.check().wrap(io.BytesIO(b"abc")).read(1)  # a scan made after it: unaffected
b'a'
"""

from __future__ import annotations

import threading
import time
from typing import Any

__all__ = ["Interrupts", "InterruptCheck", "InterruptibleFile", "ScanInterrupted"]


class ScanInterrupted(KeyboardInterrupt):
    """A scan stopped by an interrupt of the connection it was feeding. A
    ``KeyboardInterrupt``, so that no ``except Exception`` on the way swallows it."""


class Interrupts:
    """When the scans of one connection were last interrupted (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._at: float | None = None

    def interrupt(self) -> None:
        """Stop the scans running now (at their next read)."""
        with self._lock:
            self._at = time.monotonic()

    def check(self) -> InterruptCheck:
        """The check of a scan starting now."""
        return InterruptCheck(self, time.monotonic())

    def since(self, started: float) -> bool:
        """Whether an interrupt came at or after ``started``."""
        with self._lock:
            return self._at is not None and self._at >= started


class InterruptCheck:
    """The interrupts that stop one scan: those after it started."""

    def __init__(self, interrupts: Interrupts, started: float) -> None:
        self._interrupts = interrupts
        self._started = started

    def raise_if_interrupted(self) -> None:
        if self._interrupts.since(self._started):
            raise ScanInterrupted("the scan was interrupted")

    def wrap(self, raw: Any) -> InterruptibleFile:
        """``raw``, its reads raising :class:`ScanInterrupted` once the scan is interrupted."""
        return InterruptibleFile(raw, self)


class InterruptibleFile:
    """A binary file whose reads first check that its scan was not interrupted."""

    def __init__(self, raw: Any, check: InterruptCheck) -> None:
        self._raw = raw
        self._check = check

    @property
    def raw(self) -> Any:
        """The file read."""
        return self._raw

    @property
    def check(self) -> InterruptCheck:
        """The check each read makes first."""
        return self._check

    def read(self, size: int = -1) -> bytes:
        self._check.raise_if_interrupted()
        return self._raw.read(size)

    def read1(self, size: int = -1) -> bytes:
        self._check.raise_if_interrupted()
        return getattr(self._raw, "read1", self._raw.read)(size)

    def readinto(self, buffer: Any) -> int:
        self._check.raise_if_interrupted()
        return self._raw.readinto(buffer)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)

    def __enter__(self) -> InterruptibleFile:
        return self

    def __exit__(self, *exc: Any) -> None:
        self._raw.close()
