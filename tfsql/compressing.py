"""Compress the files of one write on several threads.

gzip and zlib streams are sequential within a file, so the unit of parallel work is
the file: each :class:`CompressedStream` compresses its chunks in order, one at a time,
while the streams of different files (shards, partitions) run on the threads of one
:class:`CompressionPool`. A chunk may also be a job that makes the bytes
(:meth:`CompressedStream.write_job`): the writer queues each shard's encoding that way,
so that encoding and compression both run on the file's thread and the writing thread
only deals rows out. ``zlib``'s ``compress`` releases the GIL while it deflates, the
encoder while it encodes, and so does writing to a file, so the threads run in
parallel.

Memory is bounded: the writer blocks once ``max_pending_bytes`` of uncompressed
chunks are queued. An error in a worker is raised by the stream's next ``write`` or
its ``close``.

Examples
--------
>>> import gzip, zlib
>>> out = []
>>> pool = CompressionPool(threads=2)
>>> stream = pool.stream(zlib.compressobj(6, zlib.DEFLATED, 31), out.append)
>>> for part in (b"abc", b"def"):
...     stream.write(memoryview(part))
>>> stream.close(); pool.shutdown()
>>> gzip.decompress(b"".join(out))
b'abcdef'
"""

from __future__ import annotations

import threading
import zlib
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

__all__ = ["CompressedStream", "CompressionPool", "compressor", "compression_threads"]

DEFAULT_MAX_PENDING_BYTES = 64 << 20

_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "zlib": zlib.MAX_WBITS}  # the container of each stream


def compressor(compression: str | None, level: int | None = None) -> Any:
    """A ``zlib.compressobj`` writing one ``compression`` stream (``"gzip"`` or
    ``"zlib"``; None: no compressor) at ``level`` (0-9; None: zlib's default, 6).

    Examples
    --------
    >>> import gzip
    >>> c = compressor("gzip", 9)
    >>> gzip.decompress(c.compress(b"abc") + c.flush())
    b'abc'
    >>> compressor(None) is None
    True
    """
    if compression is None:
        return None
    return zlib.compressobj(-1 if level is None else level, zlib.DEFLATED, _WBITS[compression])


def compression_threads(threads: int | None, compression: str | None) -> int:
    """Threads that compress a write's files: ``threads`` (checked by
    `tfsql.options.WriteOptions`), by default the machine's cores (at most 8); 1
    without compression.

    Examples
    --------
    >>> compression_threads(4, "gzip"), compression_threads(4, None)
    (4, 1)
    """
    from tfsql.options import default_threads

    if compression is None:
        return 1
    return threads if threads is not None else default_threads()


class CompressionPool:
    """Worker threads shared by the compressed files of one write (``threads <= 1``:
    compress in the writing thread)."""

    def __init__(self, threads: int, max_pending_bytes: int = DEFAULT_MAX_PENDING_BYTES) -> None:
        self._executor = ThreadPoolExecutor(threads, thread_name_prefix="tfsql-compress") if threads > 1 else None
        self._max_pending = max_pending_bytes
        self._pending = 0
        self._budget = threading.Condition()

    def stream(self, compressor: Any, put: Callable[[bytes], None]) -> CompressedStream:
        """A stream feeding ``compressor`` (a ``zlib.compressobj``) whose output goes to
        ``put``, called from one thread at a time, in order."""
        return CompressedStream(self, compressor, put)

    def shutdown(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True)

    def _reserve(self, n: int) -> None:
        with self._budget:
            while self._pending and self._pending + n > self._max_pending:
                self._budget.wait()
            self._pending += n

    def _release(self, n: int) -> None:
        with self._budget:
            self._pending -= n
            self._budget.notify_all()


class CompressedStream:
    """One file's compressor: chunks are compressed in the order written."""

    def __init__(self, pool: CompressionPool, compressor: Any, put: Callable[[bytes], None]) -> None:
        self._pool = pool
        self._compressor = compressor
        self._put = put
        self._queue: deque = deque()
        self._lock = threading.Lock()
        self._active = False
        self._idle = threading.Event()
        self._idle.set()
        self._error: BaseException | None = None

    def write(self, chunk: memoryview, done: Callable[[], None] | None = None) -> None:
        """Queue ``chunk`` (kept referenced until compressed) for compression; ``done`` is
        called once its compressed bytes are handed to ``put``."""
        self._queue_item(chunk, len(chunk), done)

    def write_job(self, job: Callable[[], memoryview], nbytes: int, done: Callable[[], None] | None = None) -> None:
        """Queue ``job``, called on the stream's thread (in order with its other chunks)
        to make the chunk to compress; ``nbytes`` (its size, or an estimate) counts
        against the pool's pending bytes until it is compressed; ``done`` as in `write`."""
        self._queue_item(job, nbytes, done)

    def _queue_item(self, item: Any, nbytes: int, done: Callable[[], None] | None) -> None:
        self._raise_error()
        executor = self._pool._executor
        if executor is None:
            self._emit(self._compressor.compress(item() if callable(item) else item))
            if done is not None:
                done()
            return
        self._pool._reserve(nbytes)
        with self._lock:
            self._queue.append((item, nbytes, done))
            if self._active:
                return
            self._active = True
            self._idle.clear()
        executor.submit(self._drain)

    def close(self) -> None:
        """Wait for the queued chunks, then flush the compressor's end of stream."""
        self._idle.wait()
        self._raise_error()
        self._emit(self._compressor.flush())

    def abort(self) -> None:
        """Wait for the workers to stop touching the file (queued output is dropped)."""
        self._error = self._error or RuntimeError("aborted")
        self._idle.wait()

    def _drain(self) -> None:
        while True:
            with self._lock:
                if not self._queue:
                    self._active = False
                    self._idle.set()
                    return
                item, nbytes, done = self._queue.popleft()
            try:
                if self._error is None:
                    self._emit(self._compressor.compress(item() if callable(item) else item))
                    if done is not None:
                        done()
            except BaseException as exc:  # re-raised in the writing thread
                self._error = exc
            finally:
                self._pool._release(nbytes)

    def _emit(self, data: bytes) -> None:
        if data:
            self._put(data)

    def _raise_error(self) -> None:
        if self._error is not None:
            raise self._error
