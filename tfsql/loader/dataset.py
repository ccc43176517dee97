"""A random-access view of TFRecord files: ``len()``, ``ds[i]`` and batched reads.

:class:`RecordDataset` opens a dataset (files, directories, globs, fsspec URLs, or a
:class:`tfsql.Dataset`), indexes its records (:mod:`tfsql.loader.index`), keeps those
a filter selects (:mod:`tfsql.loader.selection`) and reads any of them by position:
``ds[i]`` one record, ``ds.__getitems__(positions)`` a batch (few reads, one decode,
:mod:`tfsql.loader.reading`), as NumPy arrays (:mod:`tfsql.loader.batches`), through an
optional ``transform`` (decoding images, augmentations) run where the batch is made.

Compressed (gzip/zlib) files are read in order only: ``len()`` works, ``ds[i]``
raises :class:`~tfsql.loader.reading.NotRandomAccessError`, and a
:class:`~tfsql.loader.loader.Loader` iterates them with ``shuffle=None``.

Examples
--------
>>> import tempfile, pyarrow as pa, tfsql
>>> out = tempfile.mkdtemp()
>>> _ = tfsql.write_tfrecord(pa.table({"label": [0, 1, 1, 0], "x": [[1.0, 2.0]] * 4}), out)
>>> ds = RecordDataset(out, where="label = 1")
>>> len(ds), ds.record_ids.tolist()
(2, [1, 2])
>>> ds[0]
{'label': np.int64(1), 'x': array([1., 2.])}
>>> ds.__getitems__([1, 0])["label"]
array([1, 1])
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pyarrow as pa

from tfsql.arrow_dataset import Dataset
from tfsql.loader.batches import BytesAs, to_numpy
from tfsql.loader.reading import NotRandomAccessError, RecordReader
from tfsql.loader.selection import select_records
from tfsql.loader.sequential import SequentialReader

__all__ = ["RecordDataset"]


class RecordDataset:
    """Records of TFRecord files by position, as dicts of NumPy arrays.

    Parameters
    ----------
    source : str, list of str, or tfsql.Dataset
        What :func:`tfsql.dataset` opens (files, directories, globs, fsspec URLs), or an
        opened dataset.
    columns : list of str, optional
        The columns to read (data and partition columns); default all. Only these
        features are decoded.
    where : pyarrow Expression, polars Expr or str, optional
        Keep only the records this filter selects (SQL text is a ``WHERE`` clause);
        evaluated once, here (:func:`~tfsql.loader.selection.select_records`).
    pad, shapes, fill, bytes_as
        How columns become arrays (:func:`~tfsql.loader.batches.to_numpy`).
    transform : callable, optional
        Applied to each dict returned (a batch from ``__getitems__``, a record from
        ``__getitem__``), in the process that reads it (a DataLoader worker).
    index_cache : str, optional
        A directory (outside the data) where header walks of files without a fresh
        index sidecar are kept for later runs.
    **options
        Passed to :func:`tfsql.dataset` when ``source`` is not a dataset.

    Attributes
    ----------
    record_ids : numpy.ndarray
        The dataset record id (:class:`~tfsql.loader.index.RecordIndex`) of each position.
    index : RecordIndex
        The index of the files that hold selected records.
    dataset : tfsql.Dataset
        Those files (partition-pruned).

    Examples
    --------
    >>> import tempfile, pyarrow as pa, tfsql
    >>> out = tempfile.mkdtemp()
    >>> _ = tfsql.write_tfrecord(pa.table({"tokens": [[1, 2, 3], [4]]}), out)
    >>> ds = RecordDataset(out, pad={"tokens": (4, 0)})
    >>> batch = ds.__getitems__([0, 1])
    >>> batch["tokens"], batch["tokens_lengths"]
    (array([[1, 2, 3, 0],
           [4, 0, 0, 0]]), array([3, 1]))
    """

    def __init__(
        self,
        source: Any,
        *,
        columns: Sequence[str] | None = None,
        where: Any = None,
        pad: Mapping[str, tuple[int, Any]] | None = None,
        shapes: Mapping[str, Sequence[int]] | None = None,
        fill: Mapping[str, Any] | None = None,
        bytes_as: BytesAs = "list",
        transform: Callable[[dict], Any] | None = None,
        index_cache: str | None = None,
        **options: Any,
    ) -> None:
        if isinstance(source, Dataset):
            if options:
                raise TypeError(f"options ({', '.join(options)}) apply when opening a source, not to a Dataset")
            self.dataset = source
        else:
            import tfsql

            self.dataset = tfsql.dataset(source, **options)
        schema = self.dataset.schema
        self.columns = list(schema.names) if columns is None else list(columns)
        missing = [c for c in self.columns if c not in schema.names]
        if missing:
            raise KeyError(f"column {missing[0]!r} is not in the dataset; its columns are {', '.join(schema.names)}")
        data = [c for c in self.columns if c in self.dataset.data_schema.names]
        self.dataset, self.index, self.record_ids = select_records(self.dataset, where, index_cache=index_cache)
        self._convert: dict[str, Any] = dict(pad=pad, shapes=shapes, fill=fill, bytes_as=bytes_as)
        self.transform = transform
        self._reader: RecordReader | SequentialReader
        if self.index.random_access:
            self._reader = RecordReader(self.dataset, self.index, data)
        else:
            self._reader = SequentialReader(self.dataset, self.index, data)
        self._file_columns = _file_columns(self.dataset, self.columns)

    @property
    def random_access(self) -> bool:
        """Whether records can be read in any order (no file is compressed)."""
        return self.index.random_access

    def __len__(self) -> int:
        return len(self.record_ids)

    def __getitem__(self, position: int) -> Any:
        """One record as a dict: scalars as NumPy scalars, lists as 1-D arrays (a
        padded list: its padded row and ``<name>_lengths``)."""
        if not isinstance(position, (int, np.integer)):
            raise TypeError(f"a position is an integer, not {type(position).__name__}; use __getitems__ for several")
        n = len(self)
        if not -n <= position < n:
            raise IndexError(f"position {position} is out of range for {n} records")
        self.require_random_access()
        batch = self.numpy_batch([int(position) % n])
        record = {}
        for name, value in batch.items():
            if name.endswith("_offsets") and name[: -len("_offsets")] in batch:
                continue
            offsets = batch.get(f"{name}_offsets")
            record[name] = value if offsets is not None else value[0]
        return record if self.transform is None else self.transform(record)

    def __getitems__(self, positions: Sequence[int] | np.ndarray) -> Any:
        """The records at ``positions`` as one batch: a dict of NumPy arrays (see
        :func:`~tfsql.loader.batches.to_numpy`), through ``transform``."""
        self.require_random_access()
        batch = self.numpy_batch(positions)
        return batch if self.transform is None else self.transform(batch)

    def read_batches(self, batches: Sequence[Sequence[int] | np.ndarray]) -> list[Any]:
        """:meth:`__getitems__` of several batches without the random-access check
        (compressed files are streamed forward, so ascending positions cost one pass: what
        a :class:`~tfsql.loader.loader.Loader` does with ``shuffle=None``), with one read
        plan and one decode (the
        per-batch work of the C decoder's call, casts and Arrow wrapping is paid once).

        Examples
        --------
        >>> import tempfile, pyarrow as pa, tfsql
        >>> out = tempfile.mkdtemp()
        >>> _ = tfsql.write_tfrecord(pa.table({"v": [[1], [2, 3], [], [4]]}), out)
        >>> [b["v_offsets"].tolist() for b in RecordDataset(out).read_batches([[0, 1], [2, 3]])]
        [[0, 1, 3], [0, 0, 1]]
        """
        groups = [np.asarray(b, dtype=np.int64) for b in batches]
        if not groups:
            return []
        positions = np.concatenate(groups)
        table = self.read_arrow(positions)
        out = []
        start = 0
        for group in groups:
            part = table.slice(start, len(group))
            batch = to_numpy(part, record_ids=self.record_ids[positions[start : start + len(group)]], **self._convert)
            out.append(batch if self.transform is None else self.transform(batch))
            start += len(group)
        return out

    def read_arrow(self, positions: Sequence[int] | np.ndarray) -> pa.RecordBatch:
        """The records at ``positions`` as an Arrow batch of :attr:`columns`.

        Examples
        --------
        >>> import tempfile, pyarrow as pa, tfsql
        >>> out = tempfile.mkdtemp()
        >>> _ = tfsql.write_tfrecord(pa.table({"x": [4, 5], "k": ["a", "b"]}), out, partition_by=["k"])
        >>> RecordDataset(out).read_arrow([1, 0]).to_pylist()
        [{'x': 5, 'k': 'b'}, {'x': 4, 'k': 'a'}]
        """
        positions = np.asarray(positions, dtype=np.int64)
        if len(positions) and (positions.min() < -len(self) or positions.max() >= len(self)):
            raise IndexError(f"a position is out of range for {len(self)} records")
        ids = self.record_ids[positions]
        data = self._reader.read(ids)
        if not self._file_columns:
            return data
        files, _ = self.index.locate(ids)
        arrays = []
        for name in self.columns:
            if name in self._file_columns:
                arrays.append(self._file_columns[name].take(pa.array(files)))
            else:
                arrays.append(data.column(name))
        return pa.RecordBatch.from_arrays(arrays, names=self.columns)

    def numpy_batch(self, positions: Sequence[int] | np.ndarray) -> dict:
        """The records at ``positions`` as a dict of NumPy arrays, before ``transform``
        (what :meth:`__getitems__` returns without the random-access check)."""
        positions = np.asarray(positions, dtype=np.int64)
        return to_numpy(self.read_arrow(positions), record_ids=self.record_ids[positions], **self._convert)

    def require_random_access(self) -> None:
        """Raise `NotRandomAccessError` naming a compressed file when some file cannot be
        read by position."""
        if not self.random_access:
            first = next(f for f in self.index.files if not f.random_access)
            raise NotRandomAccessError(
                f"{first.path} is compressed: its records have no byte offsets, so they cannot be read by "
                "position (random access, shuffling). Iterate a Loader with shuffle=None (reads in order), or "
                "rewrite the data uncompressed (tfsql.write_tfrecord(tfsql.dataset(path), out))"
            )

    def __repr__(self) -> str:
        return f"<tfsql.loader.RecordDataset {len(self)} of {len(self.index)} records, {len(self.index.files)} files>"


def _file_columns(dataset: Dataset, columns: Sequence[str]) -> dict[str, pa.Array]:
    """The requested partition and file path columns, one value per file."""
    out = {}
    values = dataset.partition_values
    for name in columns:
        if name in dataset.partition_schema.names:
            out[name] = values.column(name).combine_chunks()
        elif name == dataset.options.include_file_paths:
            out[name] = pa.array(dataset.files, pa.string())
    return out
