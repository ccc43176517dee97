"""Progress bars of the Python API (``progress=True``): bytes read, rows written.

Reads count the bytes taken from the files (compressed bytes for gzip and zlib files)
against the total size of the files the scan opens, so the bar has a total and an ETA
from the start; writes count rows against the input's row count when it is known (a
table, a DataFrame) and show a counter with a rate otherwise. Numbers are
human-formatted (``12.3MB/s``, ``1.50M rows``): ``tqdm``'s ``unit_scale``. Bars go to
stderr and are off by default.

Examples
--------
>>> import io
>>> out = io.StringIO()
>>> with read_bar("reading", total=2048, file=out) as bar:
...     counted = CountingFile(io.BytesIO(b"x" * 2048), bar)
...     _ = counted.read(1024); _ = counted.read()
>>> bar.n
2048
>>> "100%" in out.getvalue() and "2.05k/2.05k" in out.getvalue()
True
"""

from __future__ import annotations

import contextlib
import sys
import threading
from typing import IO, Any, Iterable, Iterator

__all__ = ["read_bar", "write_bar", "CountingFile", "locked_update", "with_read_progress"]


def _tqdm(**kwargs: Any) -> Any:
    from tqdm.auto import tqdm

    kwargs.setdefault("file", sys.stderr)
    kwargs.setdefault("dynamic_ncols", True)
    kwargs.setdefault("mininterval", 0.2)
    return tqdm(unit_scale=True, **kwargs)


def read_bar(desc: str, *, total: int | None, file: IO[str] | None = None) -> Any:
    """A bar of bytes read (``unit_scale``: ``1.20MB``; rate in bytes/s)."""
    return _tqdm(desc=desc, total=total, unit="B", unit_divisor=1000, file=file or sys.stderr)


def write_bar(desc: str, *, total: int | None, file: IO[str] | None = None) -> Any:
    """A bar of rows written (``1.50M rows``; rate in rows/s)."""
    return _tqdm(desc=desc, total=total, unit=" rows", file=file or sys.stderr)


class CountingFile:
    """A binary file whose reads advance ``bar`` by the bytes they return."""

    def __init__(self, raw: Any, bar: Any) -> None:
        self._raw = raw
        self._bar = bar

    def seek(self, offset: int, whence: int = 0) -> int:
        # A seek back (compression="infer" peeks at the first bytes; a byte range's
        # reader looks ahead for a record boundary) uncounts the bytes to be read again;
        # a seek forward (to a byte range's start) reads nothing.
        before = self._raw.tell()
        after = self._raw.seek(offset, whence)
        self._bar.update(min(0, after - before))
        return after

    def read(self, size: int = -1) -> bytes:
        data = self._raw.read(size)
        self._bar.update(len(data))
        return data

    def read1(self, size: int = -1) -> bytes:
        read1 = getattr(self._raw, "read1", self._raw.read)
        data = read1(size)
        self._bar.update(len(data))
        return data

    def readinto(self, buffer: Any) -> int:
        n = self._raw.readinto(buffer)
        self._bar.update(n or 0)
        return n

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)

    def __enter__(self) -> "CountingFile":
        return self

    def __exit__(self, *exc: Any) -> None:
        self._raw.close()


def locked_update(bar: Any) -> Any:
    """``bar.update`` made safe to call from several threads (a write's compression
    threads report the rows of the chunks they finish).

    >>> import io
    >>> bar = write_bar("writing", total=3, file=io.StringIO())
    >>> update = locked_update(bar); update(2); update(1); bar.n
    3
    """
    lock = threading.Lock()

    def update(n: int) -> None:
        with lock:
            bar.update(n)

    return update


def input_rows(data: Any) -> int | None:
    """The row count of ``data`` when known without reading it (a table, a batch, a
    DataFrame), else None.

    >>> import pyarrow as pa
    >>> input_rows(pa.table({"x": [1, 2]})), input_rows(iter([]))
    (2, None)
    """
    rows = getattr(data, "num_rows", None)
    if isinstance(rows, int):
        return rows
    height = getattr(data, "height", None)
    return height if isinstance(height, int) else None


@contextlib.contextmanager
def with_read_progress(ds: Any, desc: str, *, file_indices: Iterable[int] | None = None) -> Iterator[Any]:
    """``ds`` with a read bar attached to its scans; the total is the size of the files
    ``file_indices`` names (default: all of ``ds``'s files). The bar closes, full, when
    the block ends without an error."""
    found = ds.discovered
    indices = list(ds.file_indices if file_indices is None else file_indices)
    bar = read_bar(desc, total=sum(found.files[i].size for i in indices))
    try:
        yield ds.with_options(progress=bar)
        if bar.total is not None and bar.n != bar.total:
            # Less: pruned files or a row limit. More: byte ranges read the records
            # that run past their ends, which the next ranges skip, twice.
            bar.total = min(bar.n, bar.total)
            bar.n = bar.total
            bar.refresh()
    finally:
        bar.close()
