"""Input adaptation of the writer: any Arrow-shaped input → record batches of one
schema with offset-based types, in slices the encoder takes at once.

- `open_input`: the schema and a batch iterator of a ``pyarrow`` Table, RecordBatch or
  RecordBatchReader, anything with ``__arrow_c_stream__`` / ``__arrow_c_array__`` (a
  Polars DataFrame, a DuckDB relation), or an iterable of record batches;
- `plain_batches`: checks that every batch has the schema and converts view-typed
  columns (Polars exports ``string_view``, ``dictionary<uint32, string_view>`` for
  categoricals, list views) to the offset-based types the partition split and the
  encoder's kernels support. `offset_based_batch` is that conversion for one batch; the
  Polars writer (``tfsql.polars``) converts its frames with it too;
- `slices`: zero-copy slices bounded in rows and bytes.

Examples
--------
>>> import pyarrow as pa
>>> schema, batches = open_input(pa.table({"s": pa.array(["a", "b"], pa.string_view())}))
>>> schema, batches = plain_batches(schema, batches)
>>> schema.field("s").type, next(batches).column(0).type
(DataType(large_string), DataType(large_string))
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tfsql.schema import offset_based_type

__all__ = ["open_input", "plain_batches", "offset_based_schema", "offset_based_batch", "slices"]

_ENCODE_ROWS = 65_536  # rows encoded at once: big enough to amortise per-call overhead
_ENCODE_BYTES = 64 << 20  # ... and a bound on the Arrow bytes of one encoded slice


def open_input(data: Any) -> tuple[pa.Schema | None, Iterator[pa.RecordBatch]]:
    """The schema and a batch iterator of any Arrow-shaped input (None: no batches).

    Examples
    --------
    >>> open_input(iter([]))[0] is None
    True
    >>> open_input("x")
    Traceback (most recent call last):
    TypeError: write_tfrecord needs Arrow-shaped data (a pyarrow Table, RecordBatch or RecordBatchReader, a Polars DataFrame, a DuckDB relation, or an iterable of record batches), not str
    """
    if isinstance(data, pa.Table):
        return data.schema, iter(data.to_batches())
    if isinstance(data, pa.RecordBatch):
        return data.schema, iter([data])
    if isinstance(data, pa.RecordBatchReader):
        return data.schema, iter(data)
    if hasattr(data, "__arrow_c_stream__"):
        if type(data).__module__.startswith("polars.") and hasattr(data, "collect_schema"):
            from tfsql.polars.sink import check_storable  # Object columns export as pointers

            check_storable(data.collect_schema())
        reader = pa.RecordBatchReader.from_stream(data)
        return reader.schema, iter(reader)
    if hasattr(data, "__arrow_c_array__"):
        batch = pa.record_batch(data)
        return batch.schema, iter([batch])
    if isinstance(data, (str, bytes, Mapping)) or not isinstance(data, Iterable):
        raise TypeError(
            f"write_tfrecord needs Arrow-shaped data (a pyarrow Table, RecordBatch or "
            f"RecordBatchReader, a Polars DataFrame, a DuckDB relation, or an iterable of "
            f"record batches), not {type(data).__name__}"
        )
    return _peek_batches(iter(data))


def offset_based_schema(schema: pa.Schema) -> pa.Schema:
    """``schema`` with every view type replaced (`tfsql.schema.offset_based_type`)."""
    return pa.schema([f.with_type(offset_based_type(f.type)) for f in schema])


def plain_batches(
    schema: pa.Schema | None, batches: Iterator[pa.RecordBatch]
) -> tuple[pa.Schema | None, Iterator[pa.RecordBatch]]:
    """Check that every batch has ``schema`` and convert view-typed columns: the
    offset-based schema and its batches (closing them closes ``batches``)."""
    if schema is None:
        return schema, batches
    plain = offset_based_schema(schema)

    def checked() -> Iterator[pa.RecordBatch]:
        for batch in batches:
            if batch.schema.names != schema.names or batch.schema.types != schema.types:
                raise ValueError(f"record batches must all have the same schema; expected {schema}, got {batch.schema}")
            yield offset_based_batch(batch, plain)

    gen = checked()
    close = getattr(batches, "close", None)
    return plain, (_Closing(gen, close) if close is not None else gen)


def offset_based_batch(batch: pa.RecordBatch, plain: pa.Schema) -> pa.RecordBatch:
    """``batch`` with the types of ``plain`` (its `offset_based_schema`, or a schema
    whose other types ``batch``'s columns cast to).

    Examples
    --------
    >>> import pyarrow as pa
    >>> batch = pa.record_batch({"l": pa.array([[1], None, [2, 3]], pa.list_view(pa.int64()))})
    >>> offset_based_batch(batch, offset_based_schema(batch.schema)).column(0).to_pylist()
    [[1], None, [2, 3]]
    """
    if batch.schema == plain:
        return batch
    return pa.RecordBatch.from_arrays([_offset_based(c, f.type) for c, f in zip(batch.columns, plain)], schema=plain)


def _offset_based(array: pa.Array, target: pa.DataType) -> pa.Array:
    """``array`` converted to ``target = tfsql.schema.offset_based_type(array.type)``.

    Lists are rebuilt from their lengths and flattened values rather than cast: pyarrow's
    cast of a list view to a list builds invalid offsets (pyarrow 26: wrong values,
    "Negative offsets" or a short offsets buffer). Dictionaries keep their indices.
    """
    t = array.type
    if t == target:
        return array
    mask = array.is_null() if array.null_count else None
    if pa.types.is_dictionary(t) and pa.types.is_dictionary(target):
        return pa.DictionaryArray.from_arrays(
            array.indices.cast(target.index_type), _offset_based(array.dictionary, target.value_type)
        )
    if pa.types.is_fixed_size_list(t) and pa.types.is_fixed_size_list(target):
        size = t.list_size
        values = array.values.slice(array.offset * size, len(array) * size)
        return pa.FixedSizeListArray.from_arrays(_offset_based(values, target.value_type), type=target, mask=mask)
    if _is_variable_list(t) and (pa.types.is_list(target) or pa.types.is_large_list(target)):
        lengths = pc.fill_null(pc.list_value_length(array), 0).to_numpy(zero_copy_only=False)
        offsets = np.zeros(len(array) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        values = _offset_based(array.flatten(), target.value_type)
        if pa.types.is_large_list(target):
            return pa.LargeListArray.from_arrays(pa.array(offsets), values, type=target, mask=mask)
        return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), values, type=target, mask=mask)
    shared = _one_view_shared(array, target)
    return shared if shared is not None else array.cast(target)


def _one_view_shared(array: pa.Array, target: pa.DataType) -> pa.Array | None:
    """A one-row ``string_view`` / ``binary_view`` array as ``large_string`` /
    ``large_binary`` over the same bytes, without a copy (its value is one stretch of one
    of the view's data buffers; a cast would copy it, which for one huge value doubles
    the memory a write needs); None when ``array`` is not such an array with a value
    stored outside its view.

    Examples
    --------
    >>> value = "x" * 100
    >>> _one_view_shared(pa.array([value], pa.string_view()), pa.large_string()).to_pylist() == [value]
    True
    >>> _one_view_shared(pa.array(["short"], pa.string_view()), pa.large_string()) is None
    True
    """
    views = {pa.string_view(): pa.large_string(), pa.binary_view(): pa.large_binary()}
    if len(array) != 1 or array.null_count or views.get(array.type) != target:
        return None
    # a view is 16 bytes: int32 length, then (values over 12 bytes) prefix, buffer index, offset
    length, _, buffer_index, offset = np.frombuffer(array.buffers()[1], dtype=np.int32)[
        4 * array.offset : 4 * array.offset + 4
    ]
    if length <= 12:  # inlined in the view itself: nothing to share
        return None
    data = array.buffers()[2 + int(buffer_index)].slice(int(offset), int(length))
    offsets = pa.py_buffer(np.array([0, length], dtype=np.int64).tobytes())
    return pa.Array.from_buffers(target, 1, [None, offsets, data])


def _is_variable_list(t: pa.DataType) -> bool:
    return (
        pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_list_view(t) or pa.types.is_large_list_view(t)
    )


def _peek_batches(items: Iterator[Any]) -> tuple[pa.Schema | None, Iterator[pa.RecordBatch]]:
    def as_batches(item: Any) -> list[pa.RecordBatch]:
        if isinstance(item, pa.RecordBatch):
            return [item]
        if isinstance(item, pa.Table):
            return item.to_batches()
        raise TypeError(
            f"an iterable passed to write_tfrecord must yield pyarrow RecordBatches (or "
            f"Tables), not {type(item).__name__}"
        )

    for first in items:
        head = as_batches(first)

        def chained() -> Iterator[pa.RecordBatch]:
            yield from head
            for item in items:
                yield from as_batches(item)

        gen: Iterator[pa.RecordBatch] = chained()
        close = getattr(items, "close", None)
        if close is not None:
            gen = _Closing(gen, close)
        return first.schema, gen
    return None, iter(())


class _Closing:
    """An iterator that also closes the source generator when closed."""

    def __init__(self, it: Iterator, close: Any) -> None:
        self._it, self._close = it, close

    def __iter__(self) -> _Closing:
        return self

    def __next__(self) -> Any:
        return next(self._it)

    def close(self) -> None:
        self._close()


def slices(batch: pa.RecordBatch) -> Iterator[pa.RecordBatch]:
    """Zero-copy slices of at most ``_ENCODE_ROWS`` rows and about ``_ENCODE_BYTES``.

    Examples
    --------
    >>> import pyarrow as pa
    >>> [s.num_rows for s in slices(pa.record_batch({"x": list(range(5))}))]
    [5]
    """
    n = batch.num_rows
    rows = _ENCODE_ROWS
    if n > 1:
        nbytes = batch.get_total_buffer_size()
        if nbytes > _ENCODE_BYTES:
            rows = max(1, min(rows, n * _ENCODE_BYTES // nbytes))
    if n <= rows:
        yield batch
        return
    for start in range(0, n, rows):
        yield batch.slice(start, rows)
