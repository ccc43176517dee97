"""Reading records by id: few reads, one decode.

:class:`RecordReader` reads a batch of record ids of a :class:`~tfsql.loader.index.RecordIndex`:
per file, the records are sorted by offset and those less than ``gap_bytes`` apart
(256 bytes for local files, 1 MiB for fsspec ones) are read together into one buffer
(local files: one positioned read per run, straight into the batch's buffer; fsspec
files: a seek and a read per run); then every record of the batch, from every file, is
decoded by one call to the C decoder (only the requested columns; in the order asked,
repeats included). Nothing is mapped, so a file cut short by another process cannot
fault the reader: local files are read through :class:`~tfsql.file_guard.GuardedFile`,
and a file that shrank, grew, was rewritten, replaced or deleted since the dataset
listed it raises :class:`~tfsql.errors.FileChangedError`. Each record's header is also
checked against the index (its length must be the indexed one), so a file changed
after it was indexed raises instead of decoding other bytes. The memory held is the
batch being read, never the files.

Examples
--------
>>> import tempfile, pyarrow as pa, tfsql
>>> from tfsql.loader.index import RecordIndex
>>> out = tempfile.mkdtemp()
>>> _ = tfsql.write_tfrecord(pa.table({"x": [10, 11, 12]}), out)
>>> ds = tfsql.dataset(out)
>>> reader = RecordReader(ds, RecordIndex.build(ds), ["x"])
>>> reader.read([2, 0, 2]).column("x").to_pylist()
[12, 10, 12]
"""

from __future__ import annotations

import collections
import os
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np
import pyarrow as pa

from tfsql.decoding import BlockDecoder
from tfsql.errors import TFSQLError
from tfsql.file_guard import GuardedFile
from tfsql.framing import RecordBlock
from tfsql.schema import column_specs

if TYPE_CHECKING:
    from tfsql.arrow_dataset import Dataset
    from tfsql.loader.index import RecordIndex

__all__ = ["RecordReader", "NotRandomAccessError", "ChangedFileError"]

_HEADER = 12
_FOOTER = 4
_OPEN_FILES = 64  # file descriptors kept open per reader
# Records closer than this are read together: reading the gap costs less than another
# read (a local read is a system call, a few hundred bytes' worth of copying; a remote
# read is a request, as long as transferring about a MiB).
_LOCAL_GAP_BYTES = 256
_REMOTE_GAP_BYTES = 1 << 20


class NotRandomAccessError(TFSQLError, TypeError):
    """Records of a compressed file were asked for by index."""


class ChangedFileError(TFSQLError, ValueError):
    """A file no longer matches the index built for it."""


class RecordReader:
    """Read records of ``dataset`` by id (see the module docstring) into Arrow batches
    of the data ``columns`` (None: all), with their requested types.

    Safe to pickle (file handles are opened again in the process that reads). Not for
    two threads at once on the same fsspec file; local reads are positioned and
    thread-safe.
    """

    def __init__(
        self, dataset: "Dataset", index: "RecordIndex", columns: Sequence[str] | None, *, gap_bytes: int | None = None
    ) -> None:
        self.dataset = dataset
        self.index = index
        names = list(dataset.data_schema.names) if columns is None else list(columns)
        specs = [s for s in column_specs(dataset.data_schema, dataset.options.record_code) if s.name in names]
        self.decoder = BlockDecoder(specs, dataset.options.record_code)
        if gap_bytes is None:
            gap_bytes = _LOCAL_GAP_BYTES if dataset.discovered.is_local else _REMOTE_GAP_BYTES
        self.gap_bytes = gap_bytes
        self.verify = dataset.options.verify_checksums
        self._handles: collections.OrderedDict[int, Any] = collections.OrderedDict()
        self._pid = os.getpid()

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_handles"] = collections.OrderedDict()
        decoder = state.pop("decoder")  # the C decoder is compiled again where it is unpickled
        state["_decoder_args"] = (decoder.specs, decoder.record_type)
        return state

    def __setstate__(self, state: dict) -> None:
        specs, record_type = state.pop("_decoder_args")
        self.__dict__.update(state)
        self.decoder = BlockDecoder(specs, record_type)
        self._pid = os.getpid()

    def __del__(self) -> None:
        self.close()

    def close(self) -> None:
        """Close the files this reader opened."""
        handles = getattr(self, "_handles", None)
        if handles is None or getattr(self, "_pid", None) != os.getpid():
            return
        while handles:
            _, handle = handles.popitem()
            handle.close()

    def read(self, ids: Sequence[int] | np.ndarray) -> pa.RecordBatch:
        """The records ``ids`` (dataset record ids), in that order, as one batch.

        Raises :class:`NotRandomAccessError` for a record of a compressed file, and
        :class:`ChangedFileError` when a file no longer matches its index, and
        :class:`~tfsql.errors.FileChangedError` when a local file changed since the
        dataset listed it.
        """
        ids = np.asarray(ids, dtype=np.int64)
        if len(ids) and (ids.min() < 0 or ids.max() >= len(self.index)):
            bad = int(ids[(ids < 0) | (ids >= len(self.index))][0])
            raise IndexError(f"record id {bad} is out of range for {len(self.index)} records")
        files, locals_ = self.index.locate(ids)
        payloads = np.empty(len(ids), np.uint64)  # each record's payload start in the buffer
        lengths = np.empty(len(ids), np.uint64)
        plans = []
        total = 0
        for f in np.unique(files):
            where = np.flatnonzero(files == f)
            entry = self.index.files[f]
            if entry.offsets is None or entry.sizes is None:
                raise NotRandomAccessError(
                    f"{entry.path} is compressed: its records have no byte offsets, so they cannot be "
                    "read by index (random access, shuffling). Iterate it in order (shuffle=None), or "
                    "rewrite it uncompressed (tfsql.write_tfrecord(tfsql.dataset(path), out))"
                )
            starts = entry.offsets[locals_[where]]
            sizes = entry.sizes[locals_[where]]
            runs, positions = _runs(starts, sizes, self.gap_bytes)
            payloads[where] = positions + total + _HEADER
            lengths[where] = sizes - (_HEADER + _FOOTER)
            plans.append((int(f), runs, total))
            total += int((runs[:, 1] - runs[:, 0]).sum())
        buf = np.empty(total, np.uint8)
        for f, runs, base in plans:
            self._read_runs(f, runs, buf, base)
        self._check_headers(buf, payloads, lengths, files, locals_)
        block = RecordBlock(buf.data, payloads, lengths, 0, 0, "<batch>", self.verify)
        try:
            return self.decoder.decode(block)
        except TFSQLError:
            self._raise_precise(buf, payloads, lengths, files, locals_)
            raise

    # ------------------------------------------------------------------ helpers
    def _handle(self, f: int) -> Any:
        if self._pid != os.getpid():  # a forked copy: its parent's descriptors are not ours
            self._handles = collections.OrderedDict()
            self._pid = os.getpid()
        handle = self._handles.get(f)
        if handle is not None:
            self._handles.move_to_end(f)
            return handle
        found = self.dataset.discovered
        file = found.files[self.dataset.file_indices[f]]
        if found.is_local:
            handle = GuardedFile.open(file.path, display=file.display(), size=file.size, stamps=found.stamps)
        else:
            handle = found.filesystem.open(file.path, "rb")
        self._handles[f] = handle
        while len(self._handles) > _OPEN_FILES:
            _, old = self._handles.popitem(last=False)
            old.close()
        return handle

    def _read_runs(self, f: int, runs: np.ndarray, buf: np.ndarray, base: int) -> None:
        handle = self._handle(f)
        cursor = base
        if isinstance(handle, GuardedFile):
            view = buf.data  # a writable memoryview of the batch buffer
            for start, stop in runs.tolist():
                if handle.read_at(view[cursor : cursor + stop - start], start) != stop - start:
                    handle.check()  # raises: the file's size changed
                    raise self._shorter(f, stop)
                cursor += stop - start
            handle.check()  # a change during the reads: the bytes read may mix two versions
            return
        for start, stop in runs.tolist():
            handle.seek(start)
            data = handle.read(stop - start)
            if len(data) != stop - start:
                raise self._shorter(f, stop)
            buf[cursor : cursor + stop - start] = np.frombuffer(data, np.uint8)
            cursor += stop - start

    def _shorter(self, f: int, end: int) -> ChangedFileError:
        return ChangedFileError(
            f"{self.index.files[f].path} ends before byte {end}: it changed after it was indexed; open the data again"
        )

    def _check_headers(
        self, buf: np.ndarray, payloads: np.ndarray, lengths: np.ndarray, files: np.ndarray, locals_: np.ndarray
    ) -> None:
        if not len(payloads):
            return
        at = payloads.astype(np.int64)[:, None] - _HEADER + np.arange(8)
        found = buf[at].copy().view("<u8").ravel()
        bad = np.flatnonzero(found != lengths)
        if len(bad):
            k = int(bad[0])
            entry = self.index.files[int(files[k])]
            offset = int(entry.offsets[locals_[k]])  # type: ignore[index]
            raise ChangedFileError(
                f"{entry.path}, record {int(locals_[k])} at byte {offset}: the header there does not hold the "
                f"indexed length {int(lengths[k])}: the file changed after it was indexed; open the data "
                "again (and rebuild its index sidecar with `tfsql index`)"
            )

    def _raise_precise(
        self, buf: np.ndarray, payloads: np.ndarray, lengths: np.ndarray, files: np.ndarray, locals_: np.ndarray
    ) -> None:
        """Decode the batch record by record, so that the error names the file, record
        and byte offset of the first record that fails."""
        for k in range(len(payloads)):
            entry = self.index.files[int(files[k])]
            offset = int(entry.offsets[locals_[k]])  # type: ignore[index]
            pos = int(payloads[k])
            block = RecordBlock(
                buf.data,
                payloads[k : k + 1],
                lengths[k : k + 1],
                int(locals_[k]),
                offset - (pos - _HEADER),
                entry.path,
                self.verify,
            )
            self.decoder.decode(block)


def _runs(starts: np.ndarray, sizes: np.ndarray, gap_bytes: int) -> tuple[np.ndarray, np.ndarray]:
    """Byte runs ``[start, stop)`` to read (sorted, records closer than ``gap_bytes``
    merged) and where each record starts in the runs read one after another.

    >>> runs, at = _runs(np.array([100, 0, 30]), np.array([30, 30, 30]), 10)
    >>> runs.tolist(), at.tolist()
    ([[0, 60], [100, 130]], [60, 0, 30])
    """
    order = np.argsort(starts, kind="stable")
    s = starts[order].astype(np.int64)
    e = s + sizes[order].astype(np.int64)
    reach = np.maximum.accumulate(e)
    new_run = np.ones(len(s), bool)
    new_run[1:] = s[1:] > reach[:-1] + gap_bytes
    run_id = np.cumsum(new_run) - 1
    run_starts = s[new_run]
    run_stops = np.maximum.reduceat(e, np.flatnonzero(new_run)) if len(s) else e
    lengths = run_stops - run_starts
    run_base = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    positions = np.empty(len(s), np.int64)
    positions[order] = run_base[run_id] + (s - run_starts[run_id])
    return np.stack([run_starts, run_stops], axis=1).reshape(-1, 2), positions
