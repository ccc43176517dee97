"""Read buffers reused within one scan, so that memory is not faulted in afresh per chunk.

A scan reads files in chunks of up to 16 MiB into fresh buffers and hands blocks of
them to decode threads (:mod:`tfsql.framing`). Allocating every chunk anew makes the
kernel map and zero new pages each time (the C library returns large freed blocks to
the system): on an image dataset that page-fault work was about a third of the CPU time
of a scan. A :class:`BufferPool` keeps a few chunk buffers and hands one out again once
nothing references it any more: a block, a memoryview or a numpy view of it each hold
a reference, so a buffer whose only reference is the pool's is free. Reuse is decided
under a lock, so the pool may be shared by the threads of one scan; it lives as long as
the scan (a :class:`tfsql.Scanner`), so no memory outlives it.

Examples
--------
>>> pool = BufferPool(max_buffers=2)
>>> a = pool.take(1000)
>>> b = pool.take(1000)  # `a` is still referenced: another buffer
>>> a.obj is b.obj
False
>>> first = id(a.obj)
>>> del a
>>> id(pool.take(500).obj) == first  # free again: reused
True
"""

from __future__ import annotations

import sys
import threading

import numpy as np

__all__ = ["BufferPool"]

_GRAIN = 1 << 20  # capacities are rounded up to whole MiB, so chunks of one scan fit
_MAX_POOLED = 64 << 20  # larger buffers (huge records) are never kept
# References to a pooled buffer while the pool checks it: its slot in the list and
# getrefcount's argument.
_FREE_REFS = 2


class BufferPool:
    """Up to ``max_buffers`` reusable read buffers (see the module docstring)."""

    def __init__(self, max_buffers: int = 8) -> None:
        self._buffers: list[np.ndarray] = []
        self._max = max_buffers
        self._lock = threading.Lock()

    def take(self, n: int) -> memoryview:
        """A writable buffer of ``n`` bytes (uninitialised), reused when one is free."""
        if n > _MAX_POOLED:
            return memoryview(np.empty(n, dtype=np.uint8))  # type: ignore[arg-type, unused-ignore]  # numpy arrays are buffers
        with self._lock:
            small = None
            for i in range(len(self._buffers)):
                if sys.getrefcount(self._buffers[i]) == _FREE_REFS:
                    if len(self._buffers[i]) >= n:
                        return memoryview(self._buffers[i])[:n]  # type: ignore[arg-type, unused-ignore]  # numpy arrays are buffers
                    small = i
            capacity = -(-n // _GRAIN) * _GRAIN
            # numpy allocates without zeroing (and asks for huge pages on large buffers).
            fresh = np.empty(capacity, dtype=np.uint8)
            if small is not None:
                self._buffers[small] = fresh  # a free buffer too small for this scan's chunks
            elif len(self._buffers) < self._max:
                self._buffers.append(fresh)
            return memoryview(fresh)[:n]  # type: ignore[arg-type, unused-ignore]  # numpy arrays are buffers
