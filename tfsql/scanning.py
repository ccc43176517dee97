"""Scanning: reading a dataset's files in order into Arrow batches of the requested
columns (:class:`Scanner`), and opening those files for framing.

A scan (see :mod:`tfsql.arrow_dataset` for the dataset it reads):

1. prunes files with the filter's partition terms (no file is opened for a pruned
   partition),
2. reads each remaining file in chunks and frames its records (CRC-checked); a local
   uncompressed file is read by the decode threads themselves, in pieces of about a
   batch (byte ranges, :mod:`tfsql.splits`; each piece is checked to start where the
   previous one ended, and an error sends the rest of the file to the sequential
   reader, so that it is reported as a whole-file read reports it), as are the ranges
   ``split_bytes`` cuts,
3. decodes only the needed features (the requested columns plus those the filter
   reads) on worker threads with the GIL released, in file order,
4. appends partition columns and the file path column, applies the filter exactly
   (DuckDB and Polars trust the scanner), keeps the requested columns,
5. stops early at a row limit, or when the consumer abandons the stream.

Examples
--------
>>> import tempfile, pyarrow as pa, pyarrow.compute as pc, tfsql
>>> out = tempfile.mkdtemp()
>>> _ = tfsql.write_tfrecord(pa.table({"x": [1, 2, 3]}), out)
>>> scanner = tfsql.dataset(out).scanner(columns=["x"], filter=pc.field("x") > 1)
>>> scanner.to_table().column("x").to_pylist(), scanner.count_rows()
([2, 3], 2)
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import os
import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generator, Iterator, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads

from tfsql._codec import codec
from tfsql.decoding import BlockDecoder, decode_around_corrupt, empty_batch, fixed_row_bits, rows_within
from tfsql.discovery import Discovered, FileInfo
from tfsql.errors import CorruptRecordError, TFSQLError
from tfsql.file_guard import GuardedFile
from tfsql.framing import DEFAULT_CHUNK_BYTES, FrameReader, count_plain_records, report_corrupt, resolve_compression
from tfsql.interrupts import InterruptCheck, ScanInterrupted
from tfsql.options import ReadOptions
from tfsql.buffers import BufferPool
from tfsql.parallel import ordered_map
from tfsql.record_index import indexed_count
from tfsql.schema import ColumnSpec
from tfsql.small_files import SMALL_FILE_BYTES, SmallFiles, read_small_files
from tfsql.splits import RangeReader, piece_bytes, plan_pieces, plan_ranges

if TYPE_CHECKING:
    from tfsql.arrow_dataset import Dataset

__all__ = ["Scanner", "open_raw", "open_frame_reader", "read_small_run", "count_file_records"]

# Reads of a byte range of a local file (made by the decode threads): small enough that
# a chunk is still in cache when it is framed, CRC-checked and decoded, and its buffer
# is reused for the next one (tfsql.buffers); the batches stay large (decode_blocks).
_PIECE_READ_BYTES = 1 << 20
# A piece's decoded batches (held until the piece is done) stop at this many times
# batch_bytes: ordinary records decode to about their size, so only records that
# expand (a wide schema, sparse records) ever reach it.
_PIECE_OUTPUT_BATCHES = 2
# Files from this size on are read in pieces even when not split (Scanner._reads_in_pieces).
_PIECE_MIN_FILE_BYTES = 4 << 20
# Small files read together (tfsql.small_files): at most this many in one read.
_RUN_FILES = 16384


def _pool_widening(threads: int, batch_bytes: int) -> int:
    """The bytes a scan on ``threads`` threads lets the core's pool of freed output
    buffers (``tfsql/core/buffer_pool.c``) keep beyond its 64 MiB while it runs: the
    batches its threads and its read-ahead hold at once (2 per thread), each with the
    quarter to spare a column buffer keeps. Its consumer releases batches while the
    threads start the next ones; with 64 MiB alone an images scan on 2 threads freed
    most released buffers and zeroed fresh pages for the next batches instead (a seventh
    of its CPU time). One thread needs none; the pure-Python codec has no pool.

    Examples
    --------
    >>> _pool_widening(1, 16 << 20), _pool_widening(2, 16 << 20) == 80 << 20
    (0, True)
    """
    if threads <= 1 or not hasattr(codec, "buffer_pool_widen"):
        return 0
    return 2 * threads * (batch_bytes + batch_bytes // 4)


def open_raw(found: Discovered, file: FileInfo) -> Any:
    """Open one file of a dataset as a binary stream of its stored bytes. A local file
    raises :class:`~tfsql.errors.FileChangedError` when it changed since it was listed
    and first opened, or changes while it is read (:mod:`tfsql.file_guard`)."""
    if found.is_local:
        return GuardedFile.open(file.path, display=file.display(), size=file.size, stamps=found.stamps)
    return found.filesystem.open(file.path, "rb")


def _opened(found: Discovered, file: FileInfo, options: ReadOptions, interrupt: InterruptCheck | None) -> Any:
    """A file of the dataset opened for a scan: counted, and stopped by ``interrupt``."""
    raw = _counted(open_raw(found, file), options)
    return raw if interrupt is None else interrupt.wrap(raw)


def _counted(raw: Any, options: ReadOptions) -> Any:
    """``raw``, counting its reads on the scan's progress bar when it has one."""
    if options.progress is None:
        return raw
    from tfsql.progress import CountingFile

    return CountingFile(raw, options.progress)


def open_frame_reader(
    found: Discovered,
    file: FileInfo,
    options: ReadOptions,
    *,
    start: int = 0,
    first_index: int = 0,
    interrupt: InterruptCheck | None = None,
) -> FrameReader:
    """Open one file of a dataset for framing (decompressing as the options say); with
    ``start``, an uncompressed file from that record boundary, its record ``first_index``;
    with ``interrupt``, its reads raise once the scan is interrupted."""
    raw = _opened(found, file, options, interrupt)
    return FrameReader(
        raw,
        path=file.display(),
        compression=None if start else options.compression,
        size=_raw_size(raw, file),
        verify=options.verify_checksums,
        on_corrupt=options.on_corrupt,
        max_record_bytes=options.max_record_bytes,
        base_offset=start,
        first_index=first_index,
    )


def read_small_run(found: Discovered, files: list[FileInfo], options: ReadOptions) -> SmallFiles | None:
    """Read the small local files ``files`` of a dataset together
    (:func:`tfsql.small_files.read_small_files`; None: read each alone instead)."""
    return read_small_files(
        [f.path for f in files],
        [f.size for f in files],
        found.stamps,
        verify=options.verify_checksums,
        max_record_bytes=options.max_record_bytes,
        detect=options.compression == "infer",
    )


def _raw_size(raw: Any, file: FileInfo) -> int | None:
    """The size of an open file now (it may have changed since discovery)."""
    try:
        return os.fstat(raw.fileno()).st_size
    except (AttributeError, OSError, ValueError, NotImplementedError):
        return file.size or None


def count_file_records(found: Discovered, file: FileInfo, options: ReadOptions) -> int:
    """The number of records in one file. An uncompressed local file is counted from
    its index sidecar when it has a consistent one (:mod:`tfsql.record_index`), else
    from its record headers alone (12 bytes read per record); other files are framed. With
    ``on_corrupt`` other than ``"raise"`` data CRCs are checked, so that records a scan
    would skip are not counted."""
    if options.on_corrupt == "raise" and found.is_local and hasattr(codec, "count_headers"):
        guarded: Any = GuardedFile.open(file.path, display=file.display(), size=file.size, stamps=found.stamps)
        with guarded as raw:
            if resolve_compression(raw, options.compression) is None:
                # a consistent `tfsql index` sidecar (not looked for when the listing had none)
                indexed = None if file.has_index is False else indexed_count(file.path, raw.fileno())
                if indexed is not None:
                    return indexed
                try:
                    return count_plain_records(
                        raw.fileno(),
                        path=file.display(),
                        size=file.size,  # the guard checked it when it opened the file
                        max_record_bytes=options.max_record_bytes,
                    )
                finally:
                    guarded.check()  # the headers were read with pread: a change shows only here
    header_only = options.changed(verify_checksums=False) if options.on_corrupt == "raise" else options
    with contextlib.closing(open_frame_reader(found, file, header_only)) as reader:
        return sum(len(block) for block in reader.blocks(max_records=1 << 20, max_bytes=-1))


def _referenced_columns(expression: pc.Expression, schema: pa.Schema, *, role: str = "filter") -> list[str]:
    """The columns of ``schema`` that ``expression`` (a ``"filter"``, or a
    ``"projection"`` of any type) reads.

    pyarrow has no public API for an expression's field references, so each column
    whose name occurs in the expression's text is dropped in turn from an empty table
    and the expression evaluated: a failure means it is referenced.
    """

    def evaluate(table: pa.Table) -> None:
        if role == "filter":
            table.filter(expression)
        else:
            pads.dataset(table).to_table(columns={"_": expression})

    text = str(expression)
    empty = schema.empty_table()
    try:
        evaluate(empty)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as exc:
        raise ValueError(f"{role} {expression} does not apply to the dataset's schema: {exc}") from None
    needed = []
    for name in schema.names:
        if name not in text:
            continue
        try:
            evaluate(empty.drop_columns([name]))
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, KeyError):
            needed.append(name)
    return needed


def _constant_column(value: pa.Scalar, n: int) -> pa.Array:
    return pa.array([value.as_py()], value.type).take(np.zeros(n, dtype=np.int32))


class Scanner:
    """A planned scan: the columns to output, the filter, the files left after pruning.

    Examples
    --------
    >>> import tempfile, pyarrow as pa, tfsql
    >>> path = tempfile.mkdtemp()
    >>> _ = tfsql.write_tfrecord(pa.table({"a": [1, 2, 3], "b": ["x", "y", "z"]}), path)
    >>> sc = tfsql.dataset(path).scanner(columns=["b"], filter=pa.compute.field("a") > 1)
    >>> sc.projected_schema
    b: string
    >>> sc.to_table().column("b").to_pylist()
    ['y', 'z']
    """

    def __init__(
        self,
        dataset: "Dataset",
        *,
        columns: Sequence[str] | Mapping[str, pc.Expression] | None,
        filter: pc.Expression | None,
        batch_size: int,
        threads: int,
        limit: int | None = None,
    ) -> None:
        self._dataset = dataset
        self._filter = filter
        self._batch_size = batch_size
        self._threads = threads
        if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
            raise ValueError(f"limit must be a non-negative integer or None, not {limit!r}")
        self._limit = limit
        self._buffers = BufferPool()  # read buffers reused within this scan
        self._together: bool | None = None  # small files read together (_reads_together)
        self._together_misses = 0
        self._seen_records = self._seen_bytes = 0  # in the runs read so far
        self._row_bits_fixed: int | None = None
        # Interrupts from now on stop this scan (a front end's con.interrupt()).
        self._interrupt = None if dataset.interrupts is None else dataset.interrupts.check()
        schema = dataset.schema
        if columns is None:
            self._columns: list[str] = list(schema.names)
            self._expressions = None
        elif isinstance(columns, Mapping):
            self._columns = []
            self._expressions = dict(columns)
        else:
            self._columns = list(columns)
            self._expressions = None
            names = set(schema.names)  # (schema.names is a new list at each access)
            missing = [c for c in self._columns if c not in names]
            if missing:
                raise KeyError(
                    f"column {missing[0]!r} is not in the dataset; its columns are {', '.join(schema.names)}"
                )
        needed = set(self._columns)
        filter_columns = set(_referenced_columns(filter, schema)) if filter is not None else set()
        needed.update(filter_columns)
        if self._expressions is not None:
            for expr in self._expressions.values():
                if isinstance(expr, pc.Expression):
                    needed.update(_referenced_columns(expr, schema, role="projection"))
        every = columns is None  # every column, in order (a wide schema: no pass per column)
        data_names = list(dataset.data_schema.names) if every else [n for n in dataset.data_schema.names if n in needed]
        # Specs come from the whole data schema: a feature-list column's feature name
        # can depend on another column (tfsql.schema.feature_list_name).
        self._specs: list[ColumnSpec] = (
            list(dataset.column_specs) if every else [spec for spec in dataset.column_specs if spec.name in needed]
        )
        self._partition_names = [n for n in dataset.partition_schema.names if n in needed]
        file_col = dataset.options.include_file_paths
        self._with_file_column = file_col is not None and file_col in needed
        # the decoded batch is the output as it is (no column to add, drop or reorder)
        self._decoded_only = (
            not self._partition_names
            and not self._with_file_column
            and (every or self._columns == [spec.name for spec in self._specs])
        )
        self._track_unknown = dataset.schema_inferred and len(data_names) == len(dataset.data_schema)
        self._file_indices = dataset.pruned_indices(filter)
        self._data_filter_free = not (filter_columns - set(dataset.partition_schema.names))
        if self._expressions is not None:
            probe = pads.dataset(schema.empty_table()).to_table(columns=self._expressions, filter=filter)
            self._projected = probe.schema
        else:
            names = schema.names
            if self._columns == names:
                self._projected = schema  # every column, in order (no per-column copy)
            else:
                # by position: schema.field(name) searches every field (quadratic in columns)
                position = {name: i for i, name in enumerate(names)}
                self._projected = pa.schema([schema.field(position[c]) for c in self._columns])

    # ------------------------------------------------------------------ metadata
    @property
    def projected_schema(self) -> pa.Schema:
        """The schema of the batches this scan yields."""
        return self._projected

    @property
    def dataset_schema(self) -> pa.Schema:
        return self._dataset.schema

    @property
    def files(self) -> list[str]:
        """The files this scan opens, after partition pruning."""
        found = self._dataset.discovered
        return [found.files[i].display() for i in self._file_indices]

    @property
    def file_indices(self) -> list[int]:
        """Positions in the dataset's ``discovered`` listing of the files this scan opens,
        after partition pruning (`files` names them)."""
        return list(self._file_indices)

    # ------------------------------------------------------------------ reading
    def _blocks(self) -> Iterator[tuple[int, Any]]:
        """Frame the files in order; without a filter, stop once ``limit`` records
        are read (decode-ahead then never opens files a LIMIT does not need). Runs of
        small local files are read together (:meth:`_small_run`)."""
        dataset = self._dataset
        found = dataset.discovered
        remaining = self._limit if self._filter is None else None
        run: list[int] = []  # small files to read together
        run_bytes = 0
        for i in self._file_indices:
            file = found.files[i]
            if file.size == 0:
                continue
            if remaining is not None and remaining <= 0:
                return
            if remaining is None and self._reads_together(i):
                if run and (run_bytes + file.size > self._run_bytes() or len(run) >= self._run_files()):
                    yield from self._small_run(run)
                    run, run_bytes = [], 0
                run.append(i)
                run_bytes += file.size
                continue
            if run:
                yield from self._small_run(run)
                run, run_bytes = [], 0
            spans = self._ranges_of(i) if remaining is None or dataset.byte_range is not None else None
            if spans is not None:
                yield from self._range_tasks(i, spans)
                continue
            if remaining is None and self._reads_in_pieces(i):
                yield from self._range_tasks(i, [(0, file.size)], whole_file=True)
                continue
            read = yield from self._file_blocks(i, remaining)
            if remaining is not None:
                remaining -= read
        if run:
            yield from self._small_run(run)

    def _file_blocks(self, i: int, limit: int | None) -> Generator[tuple[int, Any], None, int]:
        """Frame file ``i`` alone into blocks (at most ``limit`` records); returns how
        many records it read."""
        found = self._dataset.discovered
        options = self._dataset.options
        rows = rows_within(options.batch_bytes, self._row_bits(i), self._batch_size)
        with contextlib.closing(open_frame_reader(found, found.files[i], options, interrupt=self._interrupt)) as reader:
            reader.buffers = self._buffers
            # Data CRCs are checked by the decode threads as they decode, except
            # under a LIMIT, whose count must not include records found corrupt.
            reader.defer_data_crc = limit is None
            for block in reader.blocks(rows, options.batch_bytes, limit=limit):
                yield i, block
            return reader.records_read

    def _reads_together(self, index: int) -> bool:
        """Whether file ``index`` is read with its small neighbours in one buffer
        (:mod:`tfsql.small_files`): local, not compressed by option, at most
        ``SMALL_FILE_BYTES``, not split nor read in pieces, no progress bar to count its
        reads."""
        dataset = self._dataset
        if self._together is None:
            options = dataset.options
            self._together = (
                dataset.discovered.is_local
                and dataset.byte_range is None
                and options.progress is None
                and options.compression in (None, "infer")
                and hasattr(os, "preadv")
            )
        return (
            self._together
            and dataset.discovered.files[index].size <= SMALL_FILE_BYTES
            and self._ranges_of(index) is None
            and not self._reads_in_pieces(index)
        )

    def _run_files(self) -> int:
        """The most files one run reads: one until a run has shown how many records its
        files hold (a consumer that stops after a batch then stops reading too)."""
        return _RUN_FILES if self._seen_records else 1

    def _run_bytes(self) -> int:
        """The most bytes one run reads: a batch's records, as the runs so far measured
        their size, and at most ``batch_bytes``."""
        budget = self._dataset.options.batch_bytes
        if not self._seen_records:
            return budget
        return max(1, min(budget, self._batch_size * self._seen_bytes // self._seen_records))

    def _small_run(self, run: list[int]) -> Iterator[tuple[int, Any]]:
        """The records of the small files ``run`` read into one buffer, in parts of
        at most a batch; when that read is in any doubt (a change, compression,
        damage), each file is read alone instead, which reports what is wrong exactly
        as it always does. Two such runs in a row turn reading together off for the
        rest of the scan (a dataset of compressed files)."""
        found = self._dataset.discovered
        options = self._dataset.options
        if self._interrupt is not None:
            self._interrupt.raise_if_interrupted()
        got = read_small_run(found, [found.files[i] for i in run], options)
        if got is None:
            self._together_misses += 1
            if self._together_misses >= 2:
                self._together = False
            for i in run:
                yield from self._file_blocks(i, None)
            return
        self._together_misses = 0
        self._seen_records += int(got.firsts[-1])
        self._seen_bytes += len(got.buf)
        bits = self._fixed_bits()
        if self._partition_names or self._with_file_column:
            bits = max(self._row_bits(i) for i in run)
        rows = rows_within(options.batch_bytes, bits, self._batch_size)
        n = int(got.firsts[-1])
        for start in range(0, n, rows):
            yield run[0], _SmallPart(got, run, start, min(n, start + rows))

    def _fixed_bits(self) -> int:
        """:func:`~tfsql.decoding.fixed_row_bits` of the decoded columns (computed once)."""
        if self._row_bits_fixed is None:
            self._row_bits_fixed = fixed_row_bits(self._specs)
        return self._row_bits_fixed

    def _row_bits(self, file_index: int) -> int:
        """Output bits each row of this file costs before its values (decoded columns,
        partition and file path constants): blocks are cut so that a batch's columns stay
        within ``batch_bytes`` even when its records are empty."""
        bits = self._fixed_bits()
        if self._partition_names:
            values = self._dataset.partitioning.values  # type: ignore[union-attr]  # set when partitioned
            for name in self._partition_names:
                scalar = values.column(name)[file_index]
                bits += 33 + 8 * len(scalar.as_py() or "") if pa.types.is_string(scalar.type) else 65
        if self._with_file_column:
            bits += 33 + 8 * len(self._dataset.discovered.files[file_index].display().encode())
        return bits

    def _ranges_of(self, index: int) -> list[tuple[int, int]] | None:
        """The byte ranges to read file ``index`` as (None: whole, as blocks): the
        dataset's own range, or ranges for the decode threads when the file is large
        and uncompressed."""
        dataset = self._dataset
        if dataset.byte_range is not None:
            return [dataset.byte_range]
        split = dataset.options.split_bytes
        size = dataset.discovered.files[index].size
        if self._threads <= 1 or split is None or size < 2 * split or not dataset.splittable(index):
            return None
        return plan_ranges(size, split)

    def _reads_in_pieces(self, index: int) -> bool:
        """Whether file ``index``, not split by ``split_bytes``, is still read by the
        decode threads in pieces: local, uncompressed and of at least 4 MiB, with several
        threads. Each thread then reads, checks and decodes its own small chunks while
        they are in cache, instead of waiting on one reading thread (tabular set: 1.2x
        faster). Smaller files are read ahead a batch at a time, not a piece."""
        dataset = self._dataset
        return (
            self._threads > 1
            and dataset.discovered.files[index].size >= _PIECE_MIN_FILE_BYTES
            and dataset.discovered.is_local
            and dataset.splittable(index)
        )

    def _range_tasks(
        self, file_index: int, spans: list[tuple[int, int]], *, whole_file: bool = False
    ) -> Iterator[tuple[int, "_RangeTask"]]:
        """The ranges cut into pieces of about a batch (:func:`tfsql.splits.plan_pieces`):
        a piece is one unit of decode work, so memory is bounded by the batch size
        whatever the range size. Only the first piece's start is trusted; every later
        piece is checked against the end of the one before (:meth:`_checked_ranges`).
        ``whole_file``: the pieces of a file no option split (see :class:`_RangeTask`)."""
        piece = piece_bytes(self._dataset.options.batch_bytes)
        own_range = self._dataset.byte_range is not None
        for k, (start, stop) in enumerate(spans):
            pieces = plan_pieces(start, stop, piece)
            for j, (a, b) in enumerate(pieces):
                yield (
                    file_index,
                    _RangeTask(
                        a,
                        b,
                        trusted=k == 0 and j == 0,
                        check_end_from=stop if own_range else None,
                        whole_file=whole_file,
                    ),
                )

    def _read_range(
        self,
        decoder: BlockDecoder,
        file_index: int,
        task: "_RangeTask",
        start: int | None,
        hints: dict | None = None,
        *,
        raise_errors: bool = False,
    ) -> "_RangeResult":
        """Decode the records whose header starts in the task's range, from the record
        boundary ``start`` (None: find it). An error is returned in the result, to be
        raised once the range's start is confirmed (``raise_errors``: raised at once).
        ``hints`` gets where the next piece's first record starts, so that a piece read
        after the one before it (always, with one thread) needs no search."""
        found = self._dataset.discovered
        file = found.files[file_index]
        options = self._dataset.options
        batches: list[pa.RecordBatch] = []
        with contextlib.closing(_opened(found, file, options, self._interrupt)) as raw:
            reader = RangeReader(
                raw,
                task.start,
                task.stop,
                file.size,
                path=file.display(),
                verify=options.verify_checksums,
                # A whole file's piece raises on any corruption: the rest of the file is
                # then read sequentially, which reports it (see _checked_ranges).
                on_corrupt="raise" if task.whole_file else options.on_corrupt,
                boundary=start,
                max_record_bytes=options.max_record_bytes,
                buffers=self._buffers,
                chunk_bytes=_PIECE_READ_BYTES if found.is_local else DEFAULT_CHUNK_BYTES,
                label=file.display() if task.whole_file else None,
                # Its data CRCs are checked as the records are decoded (a mismatch is an
                # error like any other, which the sequential reader then reports).
                defer_data_crc=task.whole_file,
            )
            rows = rows_within(options.batch_bytes, self._row_bits(file_index), self._batch_size)
            unknown: set | None = set() if self._track_unknown else None
            records = produced = 0
            try:
                blocks = reader.blocks(rows, options.batch_bytes, check_end_from=task.check_end_from)
                for batch, first, end in decoder.decode_blocks(blocks, rows, options.batch_bytes, unknown=unknown):
                    if unknown:
                        self._report_unknown(unknown, first.path)
                    records += batch.num_rows
                    produced += decoder.output_bytes(batch)
                    batches.append(self._finish_batch(file_index, batch))
                    if produced >= _PIECE_OUTPUT_BATCHES * options.batch_bytes and end < task.stop:
                        # Records that decode to far more than their size (a wide schema,
                        # sparse records): the caller reads the rest of the piece.
                        return _RangeResult(task, reader.first, end, batches, records=records, resume=end)
            except TFSQLError as exc:
                if raise_errors:
                    raise
                # Raised once the check against the previous range says this range
                # did start at a true boundary (else it is read again from there).
                return _RangeResult(task, reader.first, None, [], error=exc)
        if hints is not None and reader.chain_end is not None:
            hints[(file_index, task.stop)] = reader.chain_end
        return _RangeResult(task, reader.first, reader.chain_end, batches, records=records)

    def _decode_item(self, decoder: BlockDecoder, item: tuple[int, Any], hints: dict) -> Any:
        file_index, block = item
        if isinstance(block, _SmallPart):
            return file_index, self._decode_small(decoder, block)
        if isinstance(block, _RangeTask):
            hint = hints.pop((file_index, block.start), None)
            return file_index, self._read_range(decoder, file_index, block, hint, hints)
        if block.crc_pending:
            raising = self._dataset.options.on_corrupt == "raise"
            entries = decode_around_corrupt(
                lambda b: self._decode_block(decoder, (file_index, b)), block, raising=raising
            )
            return file_index, _CheckedBlock(entries)
        return file_index, self._decode_block(decoder, item)

    def _decode_small(self, decoder: BlockDecoder, part: "_SmallPart") -> Any:
        """A part of a run of small files decoded as one batch, each row's partition
        values and file path taken by its file; when that fails, or finds features the
        schema lacks, its files are decoded one by one, which raises, warns and names
        files, records and offsets exactly as a scan of each file alone does."""
        found = self._dataset.discovered
        run = part.run
        unknown: set | None = set() if self._track_unknown else None
        try:
            batch = decoder.decode(
                run.block(part.start, part.stop, found.files[part.files[0]].display()), unknown=unknown
            )
        except Exception:
            batch = None
        if batch is not None and not unknown:
            row_files = np.asarray(part.files, dtype=np.int64)[run.record_files(part.start, part.stop)]
            return self._finish_batch(part.files[0], batch, row_files=row_files)
        paths = [found.files[i].display() for i in part.files]
        blocks = run.per_file(part.start, part.stop, paths)
        return _CheckedBlock([self._decode_block(decoder, (part.files[k], block)) for k, block in blocks])

    def _decode_block(self, decoder: BlockDecoder, item: tuple[int, Any]) -> pa.RecordBatch:
        file_index, block = item
        if self._track_unknown:
            unknown: set = set()
            batch = decoder.decode(block, unknown=unknown)
            if unknown:
                self._report_unknown(unknown, block.path)
        else:
            batch = decoder.decode(block)
        return self._finish_batch(file_index, batch)

    def _finish_batch(
        self, file_index: int, batch: pa.RecordBatch, *, row_files: np.ndarray | None = None
    ) -> pa.RecordBatch:
        """A decoded batch of file ``file_index`` (with ``row_files``: of the file of each
        row) with its partition and file path columns, filtered and projected as the
        scan asks."""
        n = batch.num_rows
        if self._partition_names or self._with_file_column:
            arrays = list(batch.columns)
            fields = list(batch.schema)
            if self._partition_names:
                values = self._dataset.partitioning.values  # type: ignore[union-attr]  # set when partitioned
                for name in self._partition_names:
                    if row_files is None:
                        arrays.append(_constant_column(values.column(name)[file_index], n))
                    else:
                        arrays.append(values.column(name).take(row_files).combine_chunks())
                    fields.append(values.schema.field(name))
            if self._with_file_column:
                name = self._dataset.options.include_file_paths
                files = self._dataset.discovered.files
                if row_files is None:
                    arrays.append(_constant_column(pa.scalar(files[file_index].display()), n))
                else:
                    distinct, local = np.unique(row_files, return_inverse=True)
                    shown = pa.array([files[i].display() for i in distinct.tolist()], pa.string())
                    arrays.append(shown.take(local))
                fields.append(pa.field(name, pa.string()))
            batch = pa.RecordBatch.from_arrays(arrays, schema=pa.schema(fields))
        if self._filter is not None:
            batch = batch.filter(self._filter)
        if self._expressions is not None:
            return _project_expressions(batch, self._expressions, self._projected)
        if not self._columns:
            return empty_batch(batch.num_rows)
        if self._decoded_only:
            return batch  # already the columns asked for, in order
        return batch.select(self._columns)

    def _report_unknown(self, unknown: set, path: str) -> None:
        reported = self._dataset.kindless_features
        for location, raw_name in sorted(unknown):
            name = raw_name.decode("utf-8", errors="backslashreplace")
            if (location, name) in reported:
                continue
            reported.add((location, name))
            where = "feature list" if location == codec.FEATURE_LISTS else "feature"
            warnings.warn(
                f"{where} {name!r} in {path} is not in the schema inferred from the sample, "
                "so it is not read; pass infer_sample=None (infer from every record) or "
                "schema= to include it",
                stacklevel=2,
            )

    def to_batches(self, *, exported: bool = False) -> Generator[Any, None, None]:
        """Yield batches in file order; stops early at the scan's limit. With
        ``exported`` (for a consumer of the Arrow PyCapsule interface, such as Polars), a
        batch that is the decoded columns as they are may be a
        :class:`tfsql.decoding.ExportedBatch` instead of a ``pyarrow.RecordBatch``."""
        # a scan of the decoded columns as they are shares their schema (no per-column rebuild)
        plain = self._decoded_only and self._expressions is None
        schema = self._projected if plain else None
        exported = exported and plain and self._filter is None and bool(self._columns)
        decoder = BlockDecoder(self._specs, self._dataset.options.record_code, schema=schema, exported=exported)
        self._fixed_bits()  # here, once: not by each decode thread at the same time (a wide schema's pass)
        hints: dict = {}  # (file, piece start) -> its first record, from the piece before
        stream = ordered_map(
            self._blocks,
            lambda item: self._decode_item(decoder, item, hints),
            threads=self._threads,
        )
        remaining = self._limit
        widening = _pool_widening(self._threads, self._dataset.options.batch_bytes)
        if widening:
            codec.buffer_pool_widen(widening)
        try:
            for batch in self._checked_ranges(decoder, stream):
                if remaining is not None:
                    if batch.num_rows >= remaining:
                        if remaining:
                            yield batch.slice(0, remaining)
                        return
                    remaining -= batch.num_rows
                if batch.num_rows:
                    yield batch
        finally:
            stream.close()
            if widening:
                codec.buffer_pool_narrow(widening)  # the oldest buffers above 64 MiB are freed

    def _checked_ranges(self, decoder: BlockDecoder, stream: Iterator[tuple[int, Any]]) -> Iterator[pa.RecordBatch]:
        """Flatten decoded items into batches, checking that each byte range of a file
        starts where the previous one's last record ended; a range that does not (a
        corrupt region, a misleading payload) is read again from there."""
        expected: int | None = None  # where the next range's first record must start
        records = 0  # records of the file before that point (pieces of a whole file)
        finished: int | None = None  # a file whose rest was read sequentially
        for file_index, item in stream:
            if isinstance(item, _CheckedBlock):
                for entry in item.entries:
                    if isinstance(entry, CorruptRecordError):
                        report_corrupt(entry, self._dataset.options.on_corrupt, stacklevel=4)
                    else:
                        yield entry
                continue
            if not isinstance(item, _RangeResult):
                yield item
                continue
            task = item.task
            if file_index == finished:
                continue
            if task.trusted:
                expected = item.first if task.start else 0
                records = 0
            while True:
                if (
                    expected is not None
                    and item.first != expected
                    and not (item.first is None and expected >= task.stop)
                ):
                    item = self._read_range(decoder, file_index, task, expected, raise_errors=not task.whole_file)
                if item.error is not None:
                    if task.whole_file and expected is not None:
                        # Read the rest of the file as a whole-file read does, so that what
                        # is wrong with it is reported (or skipped) just as that read would.
                        finished = file_index
                        yield from self._read_sequentially(decoder, file_index, expected, records)
                        break
                    raise item.error
                if item.first is not None and item.first < task.stop:
                    expected = item.chain_end
                    records += item.records
                yield from item.batches
                if item.resume is None:
                    break
                # The piece's batches outgrew its output budget: the rest of it is read
                # here, as it is consumed, so memory stays bounded by the batch size.
                task = dataclasses.replace(task, start=item.resume, trusted=True)
                item = self._read_range(decoder, file_index, task, item.resume, raise_errors=not task.whole_file)

    def _read_sequentially(
        self, decoder: BlockDecoder, file_index: int, start: int, first_index: int
    ) -> Iterator[pa.RecordBatch]:
        """The records of a file from the boundary ``start`` (record ``first_index``) to
        its end, framed and decoded on this thread; corruption is handled by
        ``on_corrupt`` with file-wide record numbers, as in a whole-file read."""
        found = self._dataset.discovered
        options = self._dataset.options
        rows = rows_within(options.batch_bytes, self._row_bits(file_index), self._batch_size)
        file = found.files[file_index]
        with contextlib.closing(
            open_frame_reader(found, file, options, start=start, first_index=first_index, interrupt=self._interrupt)
        ) as reader:
            for block in reader.blocks(rows, options.batch_bytes):
                yield self._decode_block(decoder, (file_index, block))

    def to_reader(self) -> pa.RecordBatchReader:
        """A ``pyarrow.RecordBatchReader`` over :meth:`to_batches` (lazy); the tfsql error
        (or interrupt, `tfsql.interrupts.ScanInterrupted`) that ends it goes to the
        dataset's ``error_sink`` too (the reader's consumer may see it only as text)."""
        return pa.RecordBatchReader.from_batches(self._projected, self._reporting(self.to_batches()))

    def _reporting(self, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        sink = self._dataset.error_sink
        try:
            yield from batches
        except (TFSQLError, ScanInterrupted) as error:
            if sink is not None:
                sink(error)
            raise

    def to_table(self) -> pa.Table:
        return pa.Table.from_batches(list(self.to_batches()), schema=self._projected)

    def head(self, num_rows: int) -> pa.Table:
        """The first ``num_rows`` rows; reading stops once they are found."""
        if num_rows < 0:
            raise ValueError("head: num_rows must be >= 0")
        limited = copy.copy(self)
        limited._limit = num_rows if self._limit is None else min(num_rows, self._limit)
        return limited.to_table()

    def count_rows(self) -> int:
        """Count the rows this scan yields; reads only record headers when the filter
        (if any) touches partition columns only. With ``on_corrupt`` other than
        ``"raise"`` the data CRCs are still checked, so that records the scan would
        skip are not counted."""
        if self._data_filter_free and self._limit is None and self._dataset.byte_range is None:
            return self._count_records()
        return sum(b.num_rows for b in self.to_batches())

    def _count_records(self) -> int:
        """The records of the scan's files: runs of small local files are read together
        and framed (their headers checked as :func:`count_file_records` checks them),
        any other file, or a run in any doubt, counted by :func:`count_file_records`."""
        found = self._dataset.discovered
        options = self._dataset.options
        # "raise" counts from the headers alone (data CRCs unchecked), as count_file_records does
        framing = options.changed(verify_checksums=False) if options.on_corrupt == "raise" else options
        total = 0
        run: list[int] = []
        run_bytes = 0

        def count_run() -> int:
            got = read_small_run(found, [found.files[i] for i in run], framing) if len(run) > 1 else None
            if got is not None:
                return int(got.firsts[-1])
            return sum(count_file_records(found, found.files[i], options) for i in run)

        for i in self._file_indices:
            size = found.files[i].size
            if size == 0:
                continue
            if found.files[i].has_index or not self._reads_together(i):  # a sidecar: checked and used
                total += count_file_records(found, found.files[i], options)
                continue
            if run and (run_bytes + size > options.batch_bytes or len(run) >= _RUN_FILES):
                total += count_run()
                run, run_bytes = [], 0
            run.append(i)
            run_bytes += size
        if run:
            total += count_run()
        return total

    def __repr__(self) -> str:
        return f"<tfsql.Scanner {len(self._file_indices)} files>\n{self._projected}"


@dataclass(frozen=True)
class _CheckedBlock:
    """A block decoded on a worker with its data CRCs checked there: its batches and
    the errors of its corrupt records, in record order, reported in file order by
    the consumer (:func:`tfsql.decoding.decode_around_corrupt`)."""

    entries: list


@dataclass(frozen=True)
class _SmallPart:
    """Records ``start`` to ``stop`` of a run of small files read together; ``files``
    are the run's files (positions in the dataset's listing)."""

    run: SmallFiles
    files: list
    start: int
    stop: int


@dataclass(frozen=True)
class _RangeTask:
    """Read the records whose header starts in bytes ``[start, stop)`` of a file.
    ``trusted``: the boundary found at ``start`` is taken as is (the first piece of a
    file or of the dataset's own range); otherwise it is checked against the end of the
    piece before. ``check_end_from``: the end of the dataset's own range, which no later
    piece checks (see :meth:`tfsql.splits.RangeReader.blocks`; None: a later piece does).
    ``whole_file``: a piece of a file no option split, read in pieces for speed alone;
    any corruption in it makes the rest of the file read sequentially instead."""

    start: int
    stop: int
    trusted: bool = True
    check_end_from: int | None = None
    whole_file: bool = False


@dataclass
class _RangeResult:
    """A decoded range: where its first record starts (None: none starts in it), where
    the record after its last one starts (None: unknown after a corrupt region)."""

    task: _RangeTask
    first: int | None
    chain_end: int | None
    batches: list
    error: Exception | None = None
    records: int = 0  # the records it decoded
    resume: int | None = None  # where the rest of the range starts, when it stopped early


def _project_expressions(batch: pa.RecordBatch, expressions: Mapping[str, Any], schema: pa.Schema) -> pa.RecordBatch:
    table = pads.dataset(pa.Table.from_batches([batch])).to_table(columns=dict(expressions)).cast(schema)
    return table.combine_chunks().to_batches()[0] if table.num_rows else schema.empty_table().to_batches()[0]
