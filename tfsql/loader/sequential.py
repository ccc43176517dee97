"""Reading records by id in file order, for compressed files (which have no offsets).

:class:`SequentialReader` streams each file's decoded batches forward and takes the
asked records as it passes them: reading ids in ascending order costs one pass over
the files that hold them. An id behind the stream's position (a padded epoch repeats
its first records) restarts that file.

Examples
--------
>>> import gzip, os, tempfile, pyarrow as pa, tfsql
>>> from tfsql.loader.index import RecordIndex
>>> out = tempfile.mkdtemp()
>>> _ = tfsql.write_tfrecord(pa.table({"x": [1, 2, 3]}), out, compression="gzip")
>>> ds = tfsql.dataset(out)
>>> reader = SequentialReader(ds, RecordIndex.build(ds), ["x"])
>>> reader.read([1, 2]).column("x").to_pylist(), reader.read([0]).column("x").to_pylist()
([2, 3], [1])
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator, Sequence

import numpy as np
import pyarrow as pa

if TYPE_CHECKING:
    from tfsql.arrow_dataset import Dataset
    from tfsql.loader.index import RecordIndex

__all__ = ["SequentialReader"]


class SequentialReader:
    """Read records of ``dataset`` by id, streaming its files in order (see the module
    docstring), into batches of the data ``columns`` (None: all)."""

    def __init__(self, dataset: "Dataset", index: "RecordIndex", columns: Sequence[str] | None) -> None:
        self.dataset = dataset
        self.index = index
        self.columns = list(dataset.data_schema.names) if columns is None else list(columns)
        self._file = -1
        self._batches: Iterator[pa.RecordBatch] | None = None
        self._batch: pa.RecordBatch | None = None
        self._first = 0  # record number (in the file) of self._batch's first row

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.update(_file=-1, _batches=None, _batch=None, _first=0)
        return state

    def read(self, ids: Sequence[int] | np.ndarray) -> pa.RecordBatch:
        """The records ``ids``, in that order, as one batch."""
        files, locals_ = self.index.locate(np.asarray(ids, dtype=np.int64))
        pieces: list[pa.RecordBatch] = []
        for f, local in zip(files.tolist(), locals_.tolist()):
            batch, row = self._seek(f, local)
            pieces.append(batch.slice(row, 1))
        schema = pa.schema([self.dataset.data_schema.field(c) for c in self.columns])
        if not pieces:
            return schema.empty_table().to_batches()[0] if len(schema) else pa.record_batch({})
        return pa.Table.from_batches(pieces, schema=schema).combine_chunks().to_batches()[0]

    def _seek(self, f: int, local: int) -> tuple[pa.RecordBatch, int]:
        if f != self._file or local < self._first:
            self._file = f
            self._batches = self.dataset.select_files([f]).to_batches(columns=self.columns)
            self._batch, self._first = None, 0
        while self._batch is None or local >= self._first + self._batch.num_rows:
            if self._batch is not None:
                self._first += self._batch.num_rows
            assert self._batches is not None
            self._batch = next(self._batches, None)
            if self._batch is None:
                raise IndexError(f"{self.index.files[f].path} has no record {local}: it changed after it was indexed")
        return self._batch, local - self._first
