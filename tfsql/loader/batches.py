"""Arrow batches as dicts of NumPy arrays, the form a training step takes.

:func:`to_numpy` turns each column of a batch into arrays:

- a scalar column: a 1-D array (``bool``, integers, floats);
- a fixed-size list (``pa.list_(t, k)``): a 2-D array ``(rows, k)``; a tensor column
  (``fixed_shape_tensor``, nested fixed-size lists): ``(rows, *shape)``; a variable
  list named in ``shapes``: reshaped to ``(rows, *shape)`` (every row must hold that
  many values);
- a variable-length list: its values (1-D) under the column's name and the row
  offsets (int64, ``rows + 1``, from 0) under ``"<name>_offsets"``; or, when named in
  ``pad`` as ``(length, value)``, a 2-D array ``(rows, length)`` padded with
  ``value``, with the row lengths under ``"<name>_lengths"`` (a longer row raises:
  nothing is cut off silently);
- bytes and strings: a list of ``bytes`` / ``str`` (``bytes_as="list"``), or the Arrow
  array (``bytes_as="arrow"``); lists of lists, and lists of bytes, stay Arrow arrays.

Values are not copied where Arrow's layout is NumPy's (numeric columns without
nulls). A missing value (a null: the feature is absent, or has no kind, or a scalar's
list is empty) raises, naming the column and the record, unless ``fill`` gives the
column a value to use instead: missing values are never turned into zeros silently.

Examples
--------
>>> import pyarrow as pa
>>> batch = pa.record_batch({"y": [1, 0], "v": [[1.0], [2.0, 3.0]], "s": ["a", "b"]})
>>> out = to_numpy(batch)
>>> out["y"], out["v"], out["v_offsets"], out["s"]
(array([1, 0]), array([1., 2., 3.]), array([0, 1, 3]), ['a', 'b'])
>>> to_numpy(batch, pad={"v": (3, 0.0)})["v"]
array([[1., 0., 0.],
       [2., 3., 0.]])
"""

from __future__ import annotations

from typing import Any, Literal, Mapping, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tfsql.schema import tensor_layout

__all__ = ["to_numpy", "BytesAs"]

BytesAs = Literal["list", "arrow"]


def to_numpy(
    batch: pa.RecordBatch,
    *,
    pad: Mapping[str, tuple[int, Any]] | None = None,
    shapes: Mapping[str, Sequence[int]] | None = None,
    fill: Mapping[str, Any] | None = None,
    bytes_as: BytesAs = "list",
    record_ids: np.ndarray | None = None,
) -> dict[str, Any]:
    """The columns of ``batch`` as NumPy arrays (see the module docstring).

    ``record_ids`` (the dataset record id of each row) only serves error messages.

    Examples
    --------
    >>> import pyarrow as pa
    >>> to_numpy(pa.record_batch({"x": [1, None]}))
    Traceback (most recent call last):
    ValueError: column 'x' has no value in record 1; pass fill={'x': ...} to use a value for missing ones
    >>> to_numpy(pa.record_batch({"x": [1, None]}), fill={"x": -1})["x"]
    array([ 1, -1])
    """
    if bytes_as not in ("list", "arrow"):
        raise ValueError(f"bytes_as must be 'list' or 'arrow', not {bytes_as!r}")
    pad = pad or {}
    shapes = shapes or {}
    fill = fill or {}
    out: dict[str, Any] = {}
    for name, column in zip(batch.schema.names, batch.columns):
        if column.null_count:
            if name not in fill:
                row = int(np.flatnonzero(~column.is_valid().to_numpy(zero_copy_only=False))[0])
                where = row if record_ids is None else int(record_ids[row])
                raise ValueError(
                    f"column {name!r} has no value in record {where}; pass fill={{{name!r}: ...}} to use a "
                    "value for missing ones"
                )
            column = pc.coalesce(column, pa.scalar(fill[name], column.type))
        _convert(out, name, column, pad.get(name), shapes.get(name), bytes_as, record_ids)
    return out


def _convert(
    out: dict[str, Any],
    name: str,
    column: pa.Array,
    pad: tuple[int, Any] | None,
    shape: Sequence[int] | None,
    bytes_as: BytesAs,
    record_ids: np.ndarray | None,
) -> None:
    t = column.type
    if isinstance(column, pa.ExtensionArray) and isinstance(t, pa.FixedShapeTensorType):
        out[name] = column.to_numpy_ndarray()
        return
    layout = tensor_layout(t)
    if layout is not None or pa.types.is_fixed_size_list(t):
        dims = layout[0] if layout is not None else (t.list_size,)
        leaf = column
        while pa.types.is_fixed_size_list(leaf.type):
            leaf = leaf.flatten()
        if _is_bytes(leaf.type):
            out[name] = column if bytes_as == "arrow" else column.to_pylist()
            return
        out[name] = _plain(leaf).reshape((len(column), *dims))
        return
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        if pa.types.is_list(t.value_type) or pa.types.is_large_list(t.value_type) or _is_bytes(t.value_type):
            out[name] = column if bytes_as == "arrow" else column.to_pylist()
            return
        offsets = column.offsets.to_numpy().astype(np.int64)
        offsets -= offsets[0]
        values = _plain(column.flatten())
        lengths = np.diff(offsets)
        if shape is not None:
            size = int(np.prod(shape))
            wrong = np.flatnonzero(lengths != size)
            if len(wrong):
                raise ValueError(
                    f"column {name!r} holds {int(lengths[wrong[0]])} values in record "
                    f"{_record(wrong[0], record_ids)}, not {size} (shape {tuple(shape)})"
                )
            out[name] = values.reshape((len(column), *shape))
        elif pad is not None:
            length, value = pad
            long = np.flatnonzero(lengths > length)
            if len(long):
                raise ValueError(
                    f"column {name!r} holds {int(lengths[long[0]])} values in record "
                    f"{_record(long[0], record_ids)}, more than its padded length {length}"
                )
            padded = np.full((len(column), length), value, dtype=values.dtype)
            mask = np.arange(length) < lengths[:, None]
            padded[mask] = values
            out[name] = padded
            out[f"{name}_lengths"] = lengths
        else:
            out[name] = values
            out[f"{name}_offsets"] = offsets
        return
    if _is_bytes(t):
        out[name] = column if bytes_as == "arrow" else column.to_pylist()
        return
    out[name] = _plain(column)


def _record(row: int, record_ids: np.ndarray | None) -> int:
    return int(row) if record_ids is None else int(record_ids[row])


def _is_bytes(t: pa.DataType) -> bool:
    return pa.types.is_binary(t) or pa.types.is_string(t) or pa.types.is_large_binary(t) or pa.types.is_large_string(t)


def _plain(array: pa.Array) -> np.ndarray:
    """A column without nulls as NumPy (no copy for numbers; bools, dates, decimals convert)."""
    return array.to_numpy(zero_copy_only=False)
