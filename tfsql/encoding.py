"""Arrow record batches → the buffers the native encoder takes (docs/format.md section 5).

``RecordEncoder`` is compiled once per (Arrow schema, record type, layout): it decides
each column's feature kind and shape with :func:`tfsql.schema.feature_layout`, where it
goes in the record (``Example.features``, ``SequenceExample.context`` or
``SequenceExample.feature_lists``), and builds a native ``Encoder``. Then, batch by batch,
it turns Arrow arrays into the canonical buffers of ``Encoder.encode`` (see
``tfsql/_native.pyi``; the conversion is :mod:`tfsql.feature_buffers`): int64 / float32
/ bytes values, int64 offsets and a uint8 validity array, and returns the framed
TFRecord bytes. A column whose type or values cannot be stored as a feature raises
`tfsql.errors.SchemaError` naming it (and the input row, for values).

Conversions (done by Arrow compute kernels, never per value in Python):

- bool → 0/1, every integer type → int64 (a uint64 above 2**63-1 is a ``SchemaError``),
  date / time / timestamp / duration → int64 of the stored integer;
- float16 / float32 / float64 → float32 (float64 is narrowed: precision is lost and
  values beyond float32's range become ±inf);
- decimal → float32 only when exact (the float32 reads back as the same decimal), else a
  ``SchemaError`` that says to cast to string (exact bytes) or float64 (rounding accepted);
- string / binary in every Arrow flavour → bytes (strings as UTF-8);
- dictionary → its values; list / large_list / fixed_size_list / list_view → all values;
- tensors (``arrow.fixed_shape_tensor``, fixed_size_list of fixed_size_list) → one flat
  list of their values in row-major (storage) order;
- a null value omits the feature; a null element inside a list is a ``SchemaError``.

Examples
--------
>>> import pyarrow as pa
>>> from tfsql.encoding import RecordEncoder
>>> batch = pa.record_batch({"label": [1, 0], "tokens": [["a", "b"], []]})
>>> encoder = RecordEncoder(batch.schema, record_type="example")
>>> framed, ends = encoder.encode(batch)
>>> len(ends)
2
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping

import numpy as np
import pyarrow as pa

from tfsql import schema as _schema
from tfsql._codec import codec
from tfsql.errors import SchemaError
from tfsql.feature_buffers import RowLabel, column_arrays
from tfsql.options import record_code

_FRAMING = 16  # the 12-byte header and 4-byte data CRC around each record

__all__ = ["FeatureColumn", "RecordEncoder", "LAYOUT_CHOICES"]

LAYOUT_CHOICES = ("context", "feature_list")
"""Values accepted in ``layout=`` (SequenceExample only): ``"context"`` puts a column in
``SequenceExample.context``; ``"feature_list"`` puts it in ``feature_lists`` — a
``list<T>`` column then becomes one step per element, each step holding one value."""


@dataclass(frozen=True)
class FeatureColumn:
    """How one Arrow column is written.

    Attributes
    ----------
    name : str
        Column name, which is also the feature name.
    location : int
        ``codec.FEATURES`` (Example features / SequenceExample context) or
        ``codec.FEATURE_LISTS``.
    kind : int
        ``codec.BYTES``, ``codec.FLOAT`` or ``codec.INT64``.
    shape : int
        ``codec.SCALAR``, ``codec.LIST`` or ``codec.LIST_OF_LIST``.
    steps_from_list : bool
        True when a ``list<T>`` column is written as a feature list of one-value steps
        (``layout={name: "feature_list"}``).
    feature : str or None
        The feature list's name when it is not the column name: a feature-list column
        ``N__feature_list`` beside a context column ``N`` writes the feature list ``N``
        (:func:`tfsql.schema.feature_list_name`), so a table read from such a file writes
        it back unchanged.
    """

    name: str
    location: int
    kind: int
    shape: int
    steps_from_list: bool = False
    feature: str | None = None

    def native(self) -> tuple[bytes, int, int, int]:
        """The ``(name, location, kind, shape)`` tuple of the native ``Encoder``."""
        name = self.name if self.feature is None else self.feature
        return (name.encode("utf-8"), self.location, self.kind, self.shape)


class RecordEncoder:
    """Encode record batches of one schema into framed TFRecord bytes.

    Parameters
    ----------
    schema : pyarrow.Schema
        The columns to write (partition columns already removed).
    record_type : str or int
        ``"example"``, ``"sequence_example"`` or ``"bytes"`` (raw records; exactly one
        string or binary column, written verbatim), or a ``codec`` record type code.
    layout : mapping of str to str, optional
        SequenceExample only: ``{column: "context" | "feature_list"}`` where the type
        alone does not say it. By default list-of-list columns go to ``feature_lists``
        and every other column to ``context``.

    Raises
    ------
    SchemaError
        A column's type cannot be written (struct, map, ...), a list-of-list column in
        Example mode or in a SequenceExample context, a scalar column placed in
        ``feature_lists``, duplicate column names, or a raw-mode schema that is not one
        binary/string column.
    ValueError
        ``layout`` names an unknown column or value, or is given without
        ``record_type="sequence_example"``.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from tfsql.encoding import RecordEncoder
    >>> table = pa.table({"frames": [[[1.0, 2.0], [3.0]]], "id": ["a"]})
    >>> enc = RecordEncoder(table.schema, record_type="sequence_example")
    >>> [(c.name, c.location) for c in enc.columns]
    [('frames', 1), ('id', 0)]
    """

    def __init__(
        self,
        schema: pa.Schema,
        *,
        record_type: str | int = "example",
        layout: Mapping[str, str] | None = None,
        max_record_bytes: int | None = None,
    ) -> None:
        self.schema = schema
        self.max_record_bytes = max_record_bytes
        self.record_type = record_type if isinstance(record_type, int) else record_code(record_type)
        self.columns: tuple[FeatureColumn, ...] = _plan_columns(schema, self.record_type, layout or {})
        self._positions = [schema.get_field_index(c.name) for c in self.columns]
        self._encoder: Any
        if self.record_type == codec.RAW:
            self._encoder = None
        else:
            self._encoder = codec.Encoder(self.record_type, [c.native() for c in self.columns])

    def arrays(
        self,
        batch: pa.RecordBatch,
        *,
        row_base: int = 0,
        row_numbers: np.ndarray | None = None,
    ) -> list[tuple]:
        """The ``Encoder.encode`` argument tuples for ``batch``.

        Error messages name rows as ``row_base + i`` for batch row ``i``, or
        ``row_base + row_numbers[i]`` when the batch was gathered from a larger one
        (partition splitting), so they count rows of the whole input.
        """
        _check_same_schema(batch.schema, self.schema)
        label = RowLabel(row_base, row_numbers)
        return [column_arrays(batch.column(i), spec, label) for i, spec in zip(self._positions, self.columns)]

    def encode(
        self,
        batch: pa.RecordBatch,
        *,
        row_base: int = 0,
        row_numbers: np.ndarray | None = None,
    ) -> tuple[Any, np.ndarray]:
        """Encode and frame every row of ``batch`` (row labels as in `arrays`).

        Returns
        -------
        framed : buffer
            The framed records, back to back (an object with the buffer protocol).
        ends : numpy.ndarray
            int64 end offset of each record in ``framed``.
        """
        return self.prepare(batch, row_base=row_base, row_numbers=row_numbers)()

    def prepare(
        self,
        batch: pa.RecordBatch,
        *,
        row_base: int = 0,
        row_numbers: np.ndarray | None = None,
    ) -> Callable[[], tuple[Any, np.ndarray]]:
        """Check ``batch`` and gather its columns now (every error about its values is
        raised here, in row order), and return a function that encodes it, as
        :meth:`encode` does: that part runs in C with the GIL released, so another thread
        may call it (a writer encodes and compresses each file on its own thread).

        Examples
        --------
        >>> import pyarrow as pa
        >>> enc = RecordEncoder(pa.schema([("x", pa.int64())]))
        >>> encode = enc.prepare(pa.record_batch({"x": [1, 2]}))
        >>> encode()[1].tolist()
        [30, 60]
        """
        if self.max_record_bytes is not None and batch.nbytes > self.max_record_bytes:
            # A record may be too large: encode now and check, so that the error is
            # raised here, before anything is written.
            framed, ends = self._unchecked(batch, row_base, row_numbers)()
            self._check_sizes(ends, RowLabel(row_base, row_numbers))
            return lambda: (framed, ends)
        return self._unchecked(batch, row_base, row_numbers)

    def _check_sizes(self, ends: np.ndarray, label: RowLabel) -> None:
        """Refuse a record larger than ``max_record_bytes`` (readers refuse it)."""
        assert self.max_record_bytes is not None
        sizes = np.diff(ends, prepend=0) - _FRAMING
        over = np.flatnonzero(sizes > self.max_record_bytes)
        if len(over):
            row = int(over[0])
            raise SchemaError(
                f"row {label(row)} encodes to a record of {int(sizes[row])} bytes, more than "
                f"max_record_bytes={self.max_record_bytes} (readers refuse records over their "
                "max_record_bytes, 2 GiB by default); pass a larger max_record_bytes (or None) to "
                "write it, and read it with one at least as large",
                record_index=label(row),
            )

    def _unchecked(
        self, batch: pa.RecordBatch, row_base: int, row_numbers: np.ndarray | None
    ) -> Callable[[], tuple[Any, np.ndarray]]:
        n = batch.num_rows
        arrays = self.arrays(batch, row_base=row_base, row_numbers=row_numbers)
        if self.record_type == codec.RAW:
            validity, _, _, value_offsets, data = arrays[0]
            if validity is not None:
                row = RowLabel(row_base, row_numbers)(int(np.argmin(validity)))
                name = self.columns[0].name
                raise SchemaError(
                    f'column {name!r} is null at row {row}; record_type="bytes" writes '
                    f"each value as one record and a null has no bytes: drop or fill the "
                    f"nulls first",
                    feature=name,
                    record_index=row,
                )

            def encode_raw() -> tuple[Any, np.ndarray]:
                framed, ends = codec.encode_frames(data, value_offsets)
                return framed, np.frombuffer(ends, dtype=np.uint64).astype(np.int64)

            return encode_raw
        encoder = self._encoder

        def encode() -> tuple[Any, np.ndarray]:
            framed, ends = encoder.encode(arrays, n)
            return framed, np.frombuffer(ends, dtype=np.uint64).astype(np.int64)

        return encode


# --------------------------------------------------------------------------------------
# Planning: Arrow schema → column specs
# --------------------------------------------------------------------------------------


def _plan_columns(schema: pa.Schema, record_type: int, layout: Mapping[str, str]) -> tuple[FeatureColumn, ...]:
    duplicates = sorted({n for n in schema.names if schema.names.count(n) > 1})
    if duplicates:
        raise SchemaError(
            f"column names must be unique to become feature names; {duplicates} appear "
            f"more than once: rename them first",
            feature=duplicates[0],
        )
    unknown = sorted(set(layout) - set(schema.names))
    if unknown:
        raise ValueError(f"layout names columns that are not in the data: {unknown}; the columns are {schema.names}")
    bad = {k: v for k, v in layout.items() if v not in LAYOUT_CHOICES}
    if bad:
        raise ValueError(f"layout values must be one of {LAYOUT_CHOICES}, got {bad}")
    if layout and record_type != codec.SEQUENCE_EXAMPLE:
        raise ValueError(
            "layout= places columns in a SequenceExample's context or feature_lists; "
            'pass record_type="sequence_example" with it'
        )
    if record_type == codec.RAW:
        return (_plan_raw(schema),)
    # A column of Arrow type null holds only nulls: its feature is omitted from every
    # record, so it needs no encoder column.
    columns = [_plan_column(f, record_type, layout.get(f.name)) for f in schema if not pa.types.is_null(f.type)]
    context = [c.name for c in columns if c.location == codec.FEATURES]
    return tuple(
        replace(c, feature=_schema.feature_list_name(c.name, context))
        if c.location == codec.FEATURE_LISTS and _schema.feature_list_name(c.name, context) != c.name
        else c
        for c in columns
    )


def _plan_raw(schema: pa.Schema) -> FeatureColumn:
    if len(schema) != 1:
        raise SchemaError(
            f'record_type="bytes" writes exactly one binary or string column verbatim, '
            f"but the data has {len(schema)} columns {schema.names}; select one column "
            f"(partition columns do not count)"
        )
    field = schema.field(0)
    kind, shape = _layout_of(field)
    if kind != codec.BYTES or shape != codec.SCALAR:
        raise SchemaError(
            f'record_type="bytes" needs a binary or string column, but column {field.name!r} has type {field.type}',
            feature=field.name,
        )
    return FeatureColumn(field.name, codec.FEATURES, codec.BYTES, codec.SCALAR)


def _plan_column(field: pa.Field, record_type: int, placement: str | None) -> FeatureColumn:
    kind, shape = _layout_of(field)
    if record_type == codec.EXAMPLE:
        if shape == codec.LIST_OF_LIST:
            raise SchemaError(
                f"column {field.name!r} has type {field.type}: a list of lists becomes a "
                f"SequenceExample feature list, which an Example cannot hold; pass "
                f'record_type="sequence_example" (or flatten the column)',
                feature=field.name,
            )
        return FeatureColumn(field.name, codec.FEATURES, kind, shape)
    # SequenceExample
    if placement is None:
        placement = "feature_list" if shape == codec.LIST_OF_LIST else "context"
    if placement == "context":
        if shape == codec.LIST_OF_LIST:
            raise SchemaError(
                f"column {field.name!r} is a list of lists ({field.type}); the "
                f"SequenceExample context holds only scalars and lists, so it must be a "
                f'"feature_list"',
                feature=field.name,
            )
        return FeatureColumn(field.name, codec.FEATURES, kind, shape)
    if shape == codec.SCALAR:
        raise SchemaError(
            f"column {field.name!r} has scalar type {field.type}; a feature_list column "
            f"must be a list (one step per element) or a list of lists (one step per "
            f"inner list)",
            feature=field.name,
        )
    return FeatureColumn(
        field.name,
        codec.FEATURE_LISTS,
        kind,
        codec.LIST_OF_LIST,
        steps_from_list=shape == codec.LIST,
    )


def _layout_of(field: pa.Field) -> tuple[int, int]:
    try:
        return _schema.feature_layout(field.type)
    except SchemaError as exc:
        raise SchemaError(f"column {field.name!r}: {exc}", feature=field.name) from None


def _check_same_schema(got: pa.Schema, expected: pa.Schema) -> None:
    if got.names != expected.names or got.types != expected.types:
        raise ValueError(f"record batches must all have the same schema; expected {expected}, got {got}")
