"""Decoding: blocks of framed records into Arrow record batches of the requested columns.

:class:`BlockDecoder` is compiled once per (record type, projected columns): it hands
the block to the C decoder (which fills Arrow buffers with the GIL released), wraps the
buffers as arrays without copying, casts to the requested types, and turns decode
failures into :class:`~tfsql.errors.CorruptRecordError` / :class:`~tfsql.errors.SchemaError`
that name the file, record index (counted from the start of the file: the C decoder's
batch-relative numbers are converted in :func:`translate_decode_error` only), byte
offset and feature.

Examples
--------
>>> import io
>>> import pyarrow as pa
>>> from tfsql.framing import FrameReader
>>> from tfsql.schema import column_specs
>>> from tfsql._codec import codec
>>> from tfsql._proto import Example
>>> ex = Example()
>>> ex.features.feature["label"].int64_list.value.append(7)
>>> framed, _ = codec.encode_frames(ex.SerializeToString(), __import__("numpy").array([0, len(ex.SerializeToString())]))
>>> decoder = BlockDecoder(column_specs(pa.schema({"label": pa.int32()}), codec.EXAMPLE), codec.EXAMPLE)
>>> block = next(FrameReader(io.BytesIO(bytes(framed)), path="x").blocks())
>>> decoder.decode(block).to_pylist()
[{'label': 7}]
"""

from __future__ import annotations

import operator
import re
import threading
from typing import Callable, Iterator, Sequence

import numpy as np
import pyarrow as pa

from tfsql._bulk import gc_paused
from tfsql._codec import codec
from tfsql.errors import CorruptRecordError, SchemaError, TFSQLError
from tfsql.messages import MALFORMED_FEATURE, render
from tfsql.framing import RecordBlock
from tfsql.casting import cast_to_target
from tfsql.options import READ_OPTIONS, record_code
from tfsql.schema import ColumnSpec, canonical_type, kind_name

__all__ = [
    "BlockDecoder",
    "ExportedBatch",
    "decode_around_corrupt",
    "empty_batch",
    "translate_decode_error",
    "fixed_row_bits",
    "rows_within",
]

_VALUE_TYPES = {codec.INT64: pa.int64(), codec.FLOAT: pa.float32(), codec.BYTES: pa.binary()}
_VALUE_WIDTH = {codec.INT64: 8, codec.FLOAT: 4}
_HEADER = 12  # bytes before a record's payload
_FOOTER = 4  # bytes after it (its data CRC)
_RECORD_TYPE_NAMES = {record_code(name): name for name in READ_OPTIONS["record_type"].choices}


def record_type_name(record_type: int) -> str:
    """The ``record_type`` option's spelling of a record type code, as messages name it.

    >>> record_type_name(codec.SEQUENCE_EXAMPLE)
    'sequence_example'
    """
    return _RECORD_TYPE_NAMES.get(record_type, str(record_type))


def _buffer(b) -> pa.Buffer | None:
    return None if b is None else pa.py_buffer(b)


def _values_array(kind: int, value_offsets, values) -> pa.Array:
    if kind == codec.BYTES:
        count = len(value_offsets) // 4 - 1
        return pa.Array.from_buffers(pa.binary(), count, [None, _buffer(value_offsets), _buffer(values)])
    count = len(values) // _VALUE_WIDTH[kind]
    return pa.Array.from_buffers(_VALUE_TYPES[kind], count, [None, _buffer(values)])


def _column_array(spec: ColumnSpec, n: int, parts: tuple) -> pa.Array:
    """Wrap the C decoder's buffers for one column as an Arrow array (no copy)."""
    validity, null_count, outer, inner_validity, inner_nulls, inner, value_offsets, values = parts
    value_type = _VALUE_TYPES[spec.kind]
    if spec.shape == codec.SCALAR:
        buffers = [_buffer(validity)]
        if spec.kind == codec.BYTES:
            buffers += [_buffer(value_offsets), _buffer(values)]
        else:
            buffers += [_buffer(values)]
        return pa.Array.from_buffers(value_type, n, buffers, null_count)
    leaf = _values_array(spec.kind, value_offsets, values)
    if spec.shape == codec.LIST:
        return pa.Array.from_buffers(
            pa.list_(value_type), n, [_buffer(validity), _buffer(outer)], null_count, children=[leaf]
        )
    steps = len(inner) // 4 - 1
    inner_array = pa.Array.from_buffers(
        pa.list_(value_type), steps, [_buffer(inner_validity), _buffer(inner)], inner_nulls, children=[leaf]
    )
    return pa.Array.from_buffers(
        pa.list_(pa.list_(value_type)), n, [_buffer(validity), _buffer(outer)], null_count, children=[inner_array]
    )


def fixed_row_bits(specs: Sequence[ColumnSpec]) -> int:
    """Output bits every decoded row costs whatever it holds: per column a validity bit
    plus a value slot (scalars; a 32-bit offset for bytes) or a 32-bit list offset
    (lists; lists of lists count one inner offset too). A row that is empty in the
    records still costs this much in the batch.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from tfsql.schema import column_specs
    >>> fixed_row_bits(column_specs(pa.schema({"a": pa.int64(), "b": pa.list_(pa.string())}), codec.EXAMPLE))
    130
    """
    codes, reps = _layouts(specs)
    counts = np.bincount(codes, minlength=len(reps)).tolist()
    bits = 0
    # per (kind, shape, type object): a wide schema has a million columns of a few
    for spec, count in zip(reps, counts):
        if spec.shape == codec.SCALAR:
            cost = 1 + 8 * _VALUE_WIDTH.get(spec.kind, 4)
        else:
            cost = 1 + 32 * spec.shape  # LIST = 1, LIST_OF_LIST = 2
        if _casts(spec):
            cost += _slot_bits(spec.arrow_type)  # the cast makes a copy
        bits += cost * count
    return bits


_LOCATION, _KIND, _SHAPE, _TYPE, _NULLABLE, _NAME, _FEATURE = map(
    operator.attrgetter, ("location", "kind", "shape", "arrow_type", "nullable", "name", "feature")
)  # C-level getters of ColumnSpec's fields


def _layouts(specs: Sequence[ColumnSpec], *, nullable: bool = False) -> tuple[np.ndarray, list[ColumnSpec]]:
    """Number the specs by ``(kind, shape, type object[, nullable])``: ``codes[i]`` is
    spec i's number, ``reps[k]`` the first spec numbered k (they decode and cast alike),
    in order of first appearance. Keys made and looked up by C-level iteration (zip
    reuses its tuple): no Python step per column (a wide record has a million columns of
    a few layouts).

    >>> import pyarrow as pa
    >>> from tfsql.schema import column_specs
    >>> specs = column_specs(pa.schema({"a": pa.string(), "b": pa.int64(), "c": pa.string()}), codec.EXAMPLE)
    >>> codes, reps = _layouts(specs)
    >>> codes.tolist(), [s.name for s in reps]
    ([0, 1, 0], ['a', 'b'])
    """
    numbering = _Numbering()
    parts = [map(id, map(_TYPE, specs)), map(_KIND, specs), map(_SHAPE, specs)]
    if nullable:
        parts.append(map(_NULLABLE, specs))
    codes = np.fromiter(map(numbering.__getitem__, zip(*parts)), np.intp, len(specs))
    # numbered in order of first appearance: a code's first spec is where the running maximum rises
    firsts = np.flatnonzero(np.diff(np.maximum.accumulate(codes), prepend=-1)) if len(codes) else codes
    return codes, [specs[i] for i in firsts.tolist()]


class _Numbering(dict):
    """key -> its number, the next one for a key not seen yet."""

    def __missing__(self, key: tuple) -> int:
        number = self[key] = len(self)
        return number


def _codec_columns(specs: Sequence[ColumnSpec]) -> list[tuple[bytes, int, int, int]]:
    """The C decoder's ``(feature name, location, kind, shape)`` of each spec (the
    name as UTF-8: ``ColumnSpec.feature_name``), without a Python-level call per column."""
    if any(map(_FEATURE, specs)):  # a feature list read under another column name
        names = [(s.name if s.feature is None else s.feature).encode("utf-8") for s in specs]
    else:
        names = list(map(str.encode, map(_NAME, specs)))  # UTF-8, strict
    return list(zip(names, map(_LOCATION, specs), map(_KIND, specs), map(_SHAPE, specs)))


def _casts(spec: ColumnSpec) -> bool:
    """Whether the decoded column is cast to another type."""
    return spec.arrow_type != spec.decoded_type


def _role(spec: ColumnSpec) -> str:
    """How a column leaves the decoder: ``"same"`` (its decoded type), ``"text"`` (bytes
    read as strings, same layout: only UTF-8 to check) or ``"cast"``."""
    if not _casts(spec):
        return "same"
    if spec.kind == codec.BYTES and spec.arrow_type == canonical_type(spec.kind, spec.shape, utf8=True):
        return "text"
    return "cast"


def _slot_bits(arrow_type: pa.DataType) -> int:
    try:
        return max(arrow_type.bit_width, 32)
    except ValueError:  # variable width (string, lists): an offset
        return 32


def rows_within(budget_bytes: int, row_bits: int, max_rows: int) -> int:
    """Rows of ``row_bits`` each that fit in ``budget_bytes`` (at least 1, at most ``max_rows``).

    Examples
    --------
    >>> rows_within(16 << 20, 20_000 * 65, 65536), rows_within(16 << 20, 65, 65536)
    (103, 65536)
    """
    if row_bits <= 0:
        return max_rows
    return max(1, min(max_rows, budget_bytes * 8 // row_bits))


def empty_batch(num_rows: int) -> pa.RecordBatch:
    """A batch with no columns and ``num_rows`` rows (for ``count(*)``-style scans)."""
    return pa.RecordBatch.from_struct_array(pa.nulls(num_rows, pa.struct([])))


class ExportedBatch:
    """A decoded batch still in the core's Arrow C data interface struct (no pyarrow
    object per column), for a consumer of the Arrow PyCapsule interface: Polars takes it
    with ``pl.DataFrame(batch)``. It has the pyarrow batch's ``schema``, ``num_rows``,
    ``num_columns`` and ``nbytes``; it is taken over once, by ``__arrow_c_array__`` or
    :meth:`to_pyarrow` (and :meth:`slice`, which goes through it). Its string columns
    were checked UTF-8 before it was made.

    Examples
    --------
    >>> import io, polars as pl
    >>> from tfsql.framing import FrameReader
    >>> from tfsql.schema import column_specs
    >>> from tfsql._proto import Example
    >>> ex = Example()
    >>> ex.features.feature["label"].int64_list.value.append(7)
    >>> ex.features.feature["name"].bytes_list.value.append("é".encode())
    >>> data = ex.SerializeToString()
    >>> framed, _ = codec.encode_frames(data, np.array([0, len(data)]))
    >>> specs = column_specs(pa.schema({"label": pa.int64(), "name": pa.string()}), codec.EXAMPLE)
    >>> block = next(FrameReader(io.BytesIO(bytes(framed)), path="x").blocks())
    >>> batch = BlockDecoder(specs, codec.EXAMPLE, exported=True).decode(block)
    >>> (type(batch).__name__, batch.num_rows, batch.num_columns)  # the native codec's
    ('ExportedBatch', 1, 2)
    >>> pl.DataFrame(batch).rows()
    [(7, 'é')]
    """

    __slots__ = ("schema", "num_rows", "nbytes", "_columns")

    def __init__(self, columns, schema: pa.Schema) -> None:
        self._columns = columns  # the Builder's ArrowColumns
        self.schema = schema
        self.num_rows: int = columns.length
        self.nbytes: int = columns.nbytes

    @property
    def num_columns(self) -> int:
        return len(self.schema)

    def __arrow_c_array__(self, requested_schema=None) -> tuple:
        """The Arrow PyCapsule interface: (schema, struct array) capsules, the struct moved
        out of this batch (``requested_schema`` is not honoured: the types are the batch's)."""
        return self.schema.__arrow_c_schema__(), self._columns.capsule()

    def to_pyarrow(self) -> pa.RecordBatch:
        """The batch as a ``pyarrow.RecordBatch`` (takes the struct over, without a copy)."""
        return pa.RecordBatch._import_from_c(self._columns.address, self.schema)

    def slice(self, offset: int = 0, length: int | None = None) -> pa.RecordBatch:
        """Rows ``offset`` to ``offset + length`` as a ``pyarrow.RecordBatch``."""
        return self.to_pyarrow().slice(offset, length)


class BlockDecoder:
    """Decode :class:`~tfsql.framing.RecordBlock` objects into batches of ``specs``.

    With ``exported``, a batch that needs no cast and no check column by column comes
    out as an :class:`ExportedBatch` (the native codec only; string columns are checked
    UTF-8 first, and a batch where one is not stays on the pyarrow path, which names the
    value): for a consumer of the Arrow PyCapsule interface, such as Polars.
    """

    def __init__(
        self,
        specs: Sequence[ColumnSpec],
        record_type: int,
        *,
        schema: pa.Schema | None = None,
        exported: bool = False,
    ) -> None:
        self.specs = list(specs)
        self.record_type = record_type
        self._exported = exported
        self._built = threading.local()  # (id, bytes) of the batch last made on each thread
        self.schema = pa.schema([s.field for s in self.specs]) if schema is None else schema
        with gc_paused():  # a million columns: a million tuples
            self._decoder = codec.Decoder(record_type, _codec_columns(self.specs)) if self.specs else None
        codes, reps = _layouts(self.specs, nullable=True)
        # How each column leaves the decoder, judged once per (kind, shape, type object,
        # nullable): as it was built; as text (binary read as string: imported as strings
        # and their UTF-8 checked for the whole batch at once); or cast and checked one by
        # one (``_fixed``: another type, or a column that may hold no null).
        roles = [_role(spec) for spec in reps]
        fixed = np.array([role == "cast" or not spec.nullable for role, spec in zip(roles, reps)], bool)
        text = np.array([role == "text" for role in roles], bool) & ~fixed
        self._fixed: list[int] = np.flatnonzero(fixed[codes]).tolist() if fixed.any() else []
        self._text: list[int] = np.flatnonzero(text[codes]).tolist() if text.any() else []
        fixed_columns = set(self._fixed)
        self._decoded_schema = (
            self.schema
            if not fixed_columns
            else pa.schema(
                [
                    s.field if i not in fixed_columns else pa.field(s.name, s.decoded_type)
                    for i, s in enumerate(self.specs)
                ]
            )
        )

    def decode(self, block: RecordBlock, *, unknown: set | None = None) -> pa.RecordBatch:
        """Decode ``block``; when ``unknown`` is a set, add to it ``(location, name)``
        of features the records hold that are not among the columns. A block whose
        data CRCs are pending has them checked, each just before its record is
        decoded; the first mismatch raises a ``data_crc`` :class:`CorruptRecordError`
        (see :func:`decode_around_corrupt`)."""
        n = len(block)
        if self._decoder is None:
            if block.crc_pending:
                _check_data_crcs(block)
            return empty_batch(n)
        builder = self._decoder.builder(n, int(block.lengths.sum()))
        try:
            builder.feed(block.buf, block.offsets, block.lengths, unknown, block.crc_pending)
        except codec.DecodeError as exc:
            raise translate_decode_error(exc, block, self.record_type, self.specs) from None
        return self._finish(builder, n, [block])

    def decode_blocks(
        self, blocks: Iterator[RecordBlock], max_rows: int, max_bytes: int, *, unknown: set | None = None
    ) -> Iterator[tuple[pa.RecordBatch, RecordBlock, int]]:
        """Decode consecutive blocks into batches of at most ``max_rows`` records and
        ``max_bytes`` of payload (a larger record makes a batch of its own; blocks are cut
        where a batch ends), each block as soon as it is read: a reader of small
        chunks (see :class:`~tfsql.splits.RangeReader`) then decodes bytes still in cache
        and reuses its buffers, yet yields large batches. Yields each batch with the head of its
        first block (:meth:`RecordBlock.head`: the file and record index its errors and
        casts name) and the file offset just past its last record.

        Examples
        --------
        >>> import numpy as np
        >>> from tfsql._proto import Example
        >>> from tfsql.schema import column_specs
        >>> ex = Example(); ex.features.feature["v"].int64_list.value.append(5)
        >>> framed, _ = codec.encode_frames(ex.SerializeToString() * 1, np.array([0, ex.ByteSize()]))
        >>> blocks = [RecordBlock(memoryview(bytes(framed)), np.array([12]), np.array([ex.ByteSize()]), i, 0, "f") for i in range(3)]
        >>> decoder = BlockDecoder(column_specs(pa.schema({"v": pa.int64()}), codec.EXAMPLE), codec.EXAMPLE)
        >>> [(batch.num_rows, end) for batch, _, end in decoder.decode_blocks(iter(blocks), 2, 1 << 20)]
        [(2, 30), (1, 30)]
        """
        pending: list[RecordBlock] = []  # the rest of a block cut at a batch's end
        blocks = iter(blocks)
        while True:
            builder = None  # made for the first block (a piece may hold no record: a wide schema's builder is large)
            spans: list[RecordBlock] = []  # where its records start (buffers not held), for a value's error
            rows = payload = 0
            while rows < max_rows and payload < max_bytes:
                block = pending.pop() if pending else next(blocks, None)
                if block is None:
                    break
                take = _fitting(block.lengths, max_rows - rows, max_bytes - payload, first=not rows)
                if take == 0:  # its first record does not fit the bytes left: the batch is full
                    pending.append(block)
                    break
                if take < len(block):
                    pending.append(block.slice(take, len(block)))
                    block = block.slice(0, take)
                if self._decoder is not None:
                    if builder is None:
                        builder = self._decoder.builder(max_rows, max_bytes)
                    try:
                        builder.feed(block.buf, block.offsets, block.lengths, unknown, block.crc_pending)
                    except codec.DecodeError as exc:
                        raise translate_decode_error(exc, block, self.record_type, self.specs) from None
                elif block.crc_pending:
                    _check_data_crcs(block)
                spans.append(block.positions())
                end = block.record_offset(len(block) - 1) + _HEADER + int(block.lengths[-1]) + _FOOTER
                rows += len(block)
                payload += int(block.lengths.sum())
            if not spans:
                return
            batch = empty_batch(rows) if builder is None else self._finish(builder, rows, spans)
            yield batch, spans[0].head(), end

    def output_bytes(self, batch: pa.RecordBatch | ExportedBatch) -> int:
        """The bytes of the buffers of a batch this decoder just made on this thread (as
        its column builders held them), else of any batch (each buffer's size: pyarrow's
        ``nbytes`` walks every column's buffer ranges, seconds for a million columns).

        >>> BlockDecoder([], codec.EXAMPLE).output_bytes(pa.record_batch({"a": [1, 2]}))
        16
        """
        if isinstance(batch, ExportedBatch):
            return batch.nbytes
        last = getattr(self._built, "last", None)
        if last is not None and last[0] == id(batch):
            return last[1]
        return batch.get_total_buffer_size()

    def _finish(self, builder, n: int, spans: list[RecordBlock]) -> pa.RecordBatch:
        """The batch of the records fed to ``builder``: the native codec hands its columns
        over as one Arrow struct array (no Python object per column; only the columns in
        ``_fixed`` are then cast or checked one by one), the reference twin as buffers."""
        if not hasattr(builder, "finish_arrow"):  # the reference twin (TFSQL_PURE_PYTHON=1)
            return self._batch(builder.finish(), n, spans)
        columns = builder.finish_arrow()  # held while pyarrow takes its struct over
        fixed = self._fixed
        # the UTF-8 of the string columns, every value (the other columns are built valid)
        text_valid = not self._text or columns.utf8_invalid(self._text) < 0
        if self._exported and not fixed and text_valid:
            return ExportedBatch(columns, self._decoded_schema)
        batch = pa.RecordBatch._import_from_c(columns.address, self._decoded_schema)
        if not text_valid:  # a value is not UTF-8: its column's cast names the record
            fixed = sorted(fixed + self._text)
            arrays = batch.columns
            for i in self._text:
                arrays[i] = arrays[i].view(self.specs[i].decoded_type)
            batch = pa.RecordBatch.from_arrays(arrays, names=self.schema.names)
        if not fixed:
            self._built.last = (id(batch), columns.nbytes)  # for output_bytes
            return batch
        arrays = batch.columns
        first = spans[0]
        offset_of = _offset_finder(spans)
        for i in fixed:
            arrays[i] = cast_to_target(
                arrays[i], self.specs[i], where=first.path, first_record=first.first_index, offset_of=offset_of
            )
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)

    def _batch(self, columns: list, n: int, spans: list[RecordBlock]) -> pa.RecordBatch:
        """The C decoder's columns as a batch of the requested types (no copy but casts);
        ``spans``: the blocks the batch was decoded from, in order (their positions)."""
        arrays = []
        first = spans[0]
        offset_of = _offset_finder(spans)
        for spec, parts in zip(self.specs, columns):
            array = _column_array(spec, n, parts)
            arrays.append(
                cast_to_target(array, spec, where=first.path, first_record=first.first_index, offset_of=offset_of)
            )
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)


def _offset_finder(spans: list[RecordBlock]) -> Callable[[int], int]:
    """The byte offset of a batch's row, from the blocks it was decoded from, in order."""

    def offset_of(row: int) -> int:
        for span in spans:
            if row < len(span):
                return span.record_offset(row)
            row -= len(span)
        raise IndexError(row)

    return offset_of


def translate_decode_error(exc, block: RecordBlock, record_type: int, specs: Sequence[ColumnSpec]) -> TFSQLError:
    """Turn the C decoder's ``DecodeError`` into a tfsql error naming file, record,
    byte offset and feature, with advice."""
    record = block.first_index + exc.record  # the decoder counts from the block's first record
    offset = block.record_offset(exc.record)
    where = f"{block.path}, record {record} at byte {offset}"
    spec = specs[exc.column] if 0 <= exc.column < len(specs) else None
    if exc.reason == "data_crc":
        return _data_crc_error(block, exc.record)
    if exc.reason == "malformed":
        feature = _feature_name(exc.column, specs)
        return CorruptRecordError(
            "malformed",
            path=block.path,
            record_index=record,
            offset=offset,
            record_type=_RECORD_TYPE_NAMES.get(record_type, str(record_type)),
            detail=None if feature is None else render(MALFORMED_FEATURE, feature=feature),
        )
    if exc.reason in ("kind_mismatch", "not_scalar") and spec is not None:
        return SchemaError.from_reason(
            exc.reason,
            feature=spec.name,
            path=block.path,
            record_index=record,
            offset=offset,
            found=kind_name(exc.found_kind),
            expected=kind_name(spec.kind),
        )
    if exc.reason == "overflow":
        return SchemaError(
            f"a batch of {block.path} holds more than 2 GiB of bytes in one column near {where}; "
            "pass a smaller batch_size",
            path=block.path,
            record_index=record,
        )
    return CorruptRecordError(
        "undecodable", path=block.path, record_index=record, offset=offset, detail=_decoder_detail(exc)
    )


def _fitting(lengths: np.ndarray, rows: int, budget: int, *, first: bool) -> int:
    """How many of a block's records fit ``rows`` more rows and ``budget`` more payload
    bytes (a batch's first record always fits).

    >>> import numpy as np
    >>> _fitting(np.array([5, 5, 5]), 10, 12, first=False), _fitting(np.array([50]), 10, 12, first=True)
    (2, 1)
    """
    fit = min(len(lengths), rows, int(np.searchsorted(np.cumsum(lengths), budget, side="right")))
    return max(fit, 1) if first else fit


def _data_crc_error(block: RecordBlock, record: int, *, suggest_skip: bool = False) -> CorruptRecordError:
    return CorruptRecordError(
        "data_crc",
        path=block.path,
        record_index=block.first_index + record,
        offset=block.record_offset(record),
        rest_of_file=False,
        suggest_skip=suggest_skip,
    )


def _check_data_crcs(block: RecordBlock) -> None:
    """Check the data CRCs of a block's records (consecutive frames) with the framing
    scan, for blocks no column decodes; the first mismatch raises."""
    if not len(block):
        return
    start = int(block.offsets[0]) - _HEADER
    offsets, _, _, status = codec.scan_frames(block.buf, start, len(block), -1, True)
    good = len(offsets) // 8
    if status == codec.FRAME_BAD_DATA_CRC and good < len(block):
        raise _data_crc_error(block, good)


def decode_around_corrupt(
    decode: Callable[[RecordBlock], pa.RecordBatch], block: RecordBlock, *, raising: bool
) -> list[pa.RecordBatch | CorruptRecordError]:
    """Decode a block whose data CRCs are pending, around the records whose CRC fails.

    Returns, in record order, the batches of the good runs and a ``data_crc``
    :class:`CorruptRecordError` for each bad record, for the caller to report as
    ``on_corrupt`` says; when ``raising``, decoding stops at the first bad record.
    Errors other than a data CRC mismatch propagate.

    Examples
    --------
    >>> import numpy as np
    >>> framed, _ = codec.encode_frames(b"abc", np.array([0, 1, 2, 3]))
    >>> data = bytearray(framed); data[17 + 12] ^= 0xFF  # corrupt record 1's payload
    >>> block = RecordBlock(memoryview(bytes(data)), np.array([12, 29, 46]), np.array([1, 1, 1]), 0, 0, "f", True)
    >>> decoder = BlockDecoder([], codec.EXAMPLE)
    >>> [type(e).__name__ for e in decode_around_corrupt(decoder.decode, block, raising=False)]
    ['RecordBatch', 'CorruptRecordError', 'RecordBatch']
    """
    entries: list[pa.RecordBatch | CorruptRecordError] = []
    while len(block):
        try:
            entries.append(decode(block))
            break
        except CorruptRecordError as exc:
            if exc.reason != "data_crc" or not block.crc_pending or exc.record_index is None:
                raise
            bad = exc.record_index - block.first_index
        if bad:
            entries.append(decode(block.slice(0, bad, crc_pending=False)))  # checked up to `bad`
        entries.append(_data_crc_error(block, bad, suggest_skip=raising))
        if raising:
            break
        block = block.slice(bad + 1, len(block))
    return entries


def _feature_name(column: int, specs: Sequence[ColumnSpec]) -> str | None:
    """The name of the decoder's column ``column`` (-1: none named)."""
    return specs[column].name if 0 <= column < len(specs) else None


def _decoder_detail(exc: Exception) -> str:
    """The decoder's explanation of an undecodable record, without its batch-relative
    record number (a message names one record: the file-relative one).

    >>> _decoder_detail(ValueError("undecodable at record 1: Error parsing message"))
    'Error parsing message'
    """
    return re.sub(r"^(?:\w+ at )?record \d+(?:, column \d+)?:?\s*", "", str(exc))
