"""An ordered, bounded, abandonable decode-ahead pipeline.

Engines pull batches one at a time from one thread (DuckDB's Arrow thread, Polars'
IO-plugin generator), so parallelism has to come from inside the scanner:
:func:`ordered_map` runs ``produce()`` (file reading and framing) on a background
thread, hands each item to a pool of worker threads running ``work(item)`` (decoding,
with the GIL released in C), and yields the results in the order the items were
produced. At most ``prefetch`` results are in flight, so memory is bounded by the batch
size, not the dataset size. Closing the generator early (a LIMIT) stops the producer,
cancels queued work and returns promptly.

Examples
--------
>>> list(ordered_map(lambda: iter(range(5)), lambda x: x * x, threads=2))
[0, 1, 4, 9, 16]
"""

from __future__ import annotations

import queue
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, Generator, Iterable, Iterator, TypeVar

__all__ = ["ordered_map"]

T = TypeVar("T")
R = TypeVar("R")

_DONE = object()


def ordered_map(
    produce: Callable[[], Iterable[T]],
    work: Callable[[T], R],
    *,
    threads: int,
    prefetch: int | None = None,
) -> Generator[R, None, None]:
    """Yield ``work(item)`` for each item of ``produce()``, in order.

    ``threads <= 1`` runs everything in the calling thread (no background threads).
    Exceptions from ``produce`` or ``work`` are re-raised in the consumer, in order.
    """
    if threads <= 1:
        for item in produce():
            yield work(item)
        return
    prefetch = prefetch or 2 * threads
    results: queue.Queue = queue.Queue(maxsize=prefetch)
    stop = threading.Event()
    pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="tfsql-decode")

    def put(entry) -> bool:
        while not stop.is_set():
            try:
                results.put(entry, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def producer() -> None:
        iterator: Iterator[T] = iter(())
        try:
            iterator = iter(produce())
            for item in iterator:
                if stop.is_set():
                    break
                if not put(pool.submit(work, item)):
                    break
        except BaseException as exc:  # handed to the consumer
            failed: Future = Future()
            failed.set_exception(exc)
            put(failed)
        finally:
            close = getattr(iterator, "close", None)
            if close is not None:
                close()
            put(_DONE)

    thread = threading.Thread(target=producer, name="tfsql-read", daemon=True)
    thread.start()
    try:
        while True:
            entry = results.get()
            if entry is _DONE:
                break
            yield entry.result()
    finally:
        stop.set()
        while True:  # unblock the producer and drop queued work
            try:
                entry = results.get_nowait()
            except queue.Empty:
                break
            if isinstance(entry, Future):
                entry.cancel()
        thread.join()
        pool.shutdown(wait=True, cancel_futures=True)
