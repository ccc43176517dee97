"""Record index of a dataset: where every record of every file starts, for random access.

:class:`RecordIndex` holds, for each file of a :class:`tfsql.Dataset`, the byte offset
of each record's header and its framed size (12 + payload + 4), as int64 arrays: 16
bytes per record, never the records. A file's offsets come from its index sidecar
(``.<name>.idx``, :mod:`tfsql.record_index`) when the sidecar matches the file; a stale
sidecar (the file changed after it was written) is ignored with a
:class:`~tfsql.record_index.StaleIndexWarning`. Otherwise the offsets are found by a
header walk (12 bytes read per record) and kept in memory, or in ``cache_dir`` (a
directory outside the data, keyed by path, size and modification time) when given.

Compressed (gzip/zlib) files have no record offsets: their records are counted (by
decompressing them once) and can only be read in order.

Examples
--------
>>> import os, tempfile, pyarrow as pa, tfsql
>>> out = tempfile.mkdtemp()
>>> _ = tfsql.write_tfrecord(pa.table({"x": [1, 2, 3]}), out, max_rows_per_file=2)
>>> index = RecordIndex.build(tfsql.dataset(out))
>>> len(index), index.counts.tolist(), index.locate([0, 2])
(3, [2, 1], (array([0, 1]), array([0, 0])))
"""

from __future__ import annotations

import hashlib
import os
import warnings
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Sequence

import numpy as np

from tfsql.record_index import indexed_spans, record_spans
from tfsql.scanning import count_file_records

if TYPE_CHECKING:
    from tfsql.arrow_dataset import Dataset

__all__ = ["FileRecords", "RecordIndex"]


@dataclass(frozen=True)
class FileRecords:
    """The records of one file: ``offsets`` (header byte offsets) and ``sizes`` (framed
    sizes), or None for both when the file is compressed; ``count`` records; ``where``
    how the offsets were found (``"sidecar"``, ``"cache"``, ``"headers"`` or
    ``"compressed"``); ``mtime_ns`` the file's modification time when it was indexed
    (local files; a loader state compares it).

    Examples
    --------
    >>> FileRecords("f", 2, np.array([0, 30]), np.array([30, 30]), "headers").random_access
    True
    """

    path: str
    count: int
    offsets: np.ndarray | None
    sizes: np.ndarray | None
    where: str
    mtime_ns: int | None = None  # the modification time when indexed (local files)

    @property
    def random_access(self) -> bool:
        """Whether records of this file can be read by index (it is uncompressed)."""
        return self.offsets is not None


class RecordIndex:
    """The :class:`FileRecords` of every file of a dataset, in the dataset's file order;
    record ``i`` of the dataset is record ``i - bases[f]`` of file ``f``.

    Examples
    --------
    >>> index = RecordIndex([FileRecords("a", 2, None, None, "compressed"), FileRecords("b", 1, None, None, "compressed")])
    >>> index.bases.tolist(), index.random_access
    ([0, 2, 3], False)
    """

    def __init__(self, files: Sequence[FileRecords]) -> None:
        self.files = list(files)
        self.counts = np.array([f.count for f in self.files], dtype=np.int64)
        self.bases = np.concatenate([[0], np.cumsum(self.counts)]).astype(np.int64)

    @classmethod
    def build(cls, dataset: "Dataset", *, cache_dir: str | None = None) -> "RecordIndex":
        """Index every file of ``dataset`` (see the module docstring); ``cache_dir``
        keeps header walks across processes. Never writes beside the data.

        Examples
        --------
        >>> import tempfile, pyarrow as pa, tfsql
        >>> out = tempfile.mkdtemp()
        >>> _ = tfsql.write_tfrecord(pa.table({"x": [1, 2]}), out, index=True)
        >>> [f.where for f in RecordIndex.build(tfsql.dataset(out)).files]
        ['sidecar']
        """
        found = dataset.discovered
        entries = []
        for position, file_index in enumerate(dataset.file_indices):
            file = found.files[file_index]
            display = file.display()
            if file.size == 0:
                entries.append(FileRecords(display, 0, np.zeros(0, np.int64), np.zeros(0, np.int64), "headers"))
            elif not dataset.splittable(file_index):
                count = count_file_records(found, file, dataset.options)
                entries.append(FileRecords(display, count, None, None, "compressed"))
            else:
                entries.append(_plain_file_records(dataset, file_index, cache_dir))
            if found.is_local:
                entries[-1] = replace(entries[-1], mtime_ns=_mtime_ns(file.path))
        return cls(entries)

    def __len__(self) -> int:
        return int(self.bases[-1])

    @property
    def random_access(self) -> bool:
        """Whether every file is uncompressed (every record can be read by index)."""
        return all(f.random_access for f in self.files)

    @property
    def nbytes(self) -> int:
        """Memory held by the offsets and sizes."""
        total = 0
        for f in self.files:
            if f.offsets is not None and f.sizes is not None:
                total += f.offsets.nbytes + f.sizes.nbytes
        return total

    def locate(self, ids: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(file position, record within that file)`` of each dataset record id.

        Examples
        --------
        >>> index = RecordIndex([FileRecords("a", 2, None, None, "compressed"), FileRecords("b", 3, None, None, "compressed")])
        >>> [a.tolist() for a in index.locate([4, 0, 2])]
        [[1, 0, 1], [2, 0, 0]]
        """
        ids = np.asarray(ids, dtype=np.int64)
        files = np.searchsorted(self.bases, ids, side="right") - 1
        return files, ids - self.bases[files]


def _plain_file_records(dataset: "Dataset", file_index: int, cache_dir: str | None) -> FileRecords:
    found = dataset.discovered
    file = found.files[file_index]
    display = file.display()
    max_bytes = dataset.options.max_record_bytes
    if not found.is_local:
        starts, sizes = record_spans(file.path, fs=found.filesystem, max_record_bytes=max_bytes)
        return FileRecords(display, len(starts), starts, sizes, "headers")
    spans = None if file.has_index is False else indexed_spans(file.path)  # none in the listing: none
    if spans is not None:
        return FileRecords(display, len(spans[0]), spans[0], spans[1], "sidecar")
    cached = _cache_file(cache_dir, file.path) if cache_dir is not None else None
    if cached is not None and os.path.exists(cached):
        try:
            with np.load(cached) as saved:
                starts, sizes = saved["offsets"], saved["sizes"]
            return FileRecords(display, len(starts), starts, sizes, "cache")
        except (OSError, ValueError, KeyError) as exc:
            warnings.warn(f"ignoring the unreadable index cache {cached} of {display}: {exc}", stacklevel=4)
    starts, sizes = record_spans(file.path, max_record_bytes=max_bytes)
    if cached is not None:
        _save(cached, starts, sizes)
    return FileRecords(display, len(starts), starts, sizes, "headers")


def _mtime_ns(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def _cache_file(cache_dir: str, path: str) -> str | None:
    """The cache entry of ``path`` as it is now (its size and modification time are in
    the key, so a changed file never finds the old entry)."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    key = f"{os.path.abspath(path)}\0{stat.st_size}\0{stat.st_mtime_ns}".encode()
    return os.path.join(cache_dir, hashlib.sha256(key).hexdigest()[:32] + ".npz")


def _save(target: str, starts: np.ndarray, sizes: np.ndarray) -> None:
    """Write a cache entry under a temporary name and rename it into place."""
    os.makedirs(os.path.dirname(target), exist_ok=True)
    staged = f"{target}.{os.getpid()}.tmp.npz"
    try:
        np.savez(staged, offsets=starts, sizes=sizes)
        os.replace(staged, target)
    finally:
        if os.path.exists(staged):
            os.remove(staged)
