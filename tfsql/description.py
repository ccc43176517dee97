"""The column description every tfsql writer keeps beside its data: ``features.json``.

A directory a tfsql writer fills holds, next to its TFRecord files, a ``features.json``
in TensorFlow Datasets' FeaturesDict format: one ``Tensor`` feature per column, in
column order, with the dtype and shape TFDS parses the records with, and the column's
Arrow type in the feature's ``description`` (``"tfsql type: timestamp[us, tz=UTC]"``;
``"tfsql partition type: int64"`` for a hive partition column). Readers take the
columns, their order and their types from it, so timestamps, dates, decimals, unsigned
integers, tensors and large types read back as written, and a 0-row write reads back
as 0 rows with its columns (docs/format.md, section 10).

The JSON is written and read only by the C core (``tfsql_description_render`` /
``tfsql_description_parse``, ``tfsql/core/description.c``, through `tfsql._codec`);
this module turns Arrow types into the core's type text and back.

Examples
--------
>>> import pyarrow as pa
>>> type_text(pa.timestamp("us", tz="UTC")), type_text(pa.list_(pa.uint8()))
('timestamp[us, tz=UTC]', 'list<uint8>')
>>> arrow_type("fixed_shape_tensor<float32>[2,3]")
FixedShapeTensorType(extension<arrow.fixed_shape_tensor[value_type=float, shape=[2,3]]>)
>>> described = Description.parse(render(pa.schema([("t", pa.date32()), ("k", pa.int64())]), ["k"]))
>>> described.data_schema, described.partition_schema
(t: date32[day], k: int64)
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from tfsql._codec import codec
from tfsql.errors import SchemaError

__all__ = ["NAME", "Description", "type_text", "arrow_type", "render", "read", "written_description", "check_append"]

NAME = "features.json"

_UNITS = {"s": "s", "ms": "ms", "us": "us", "ns": "ns"}
_SIMPLE = {
    pa.null(): "null",
    pa.bool_(): "bool",
    pa.int8(): "int8",
    pa.int16(): "int16",
    pa.int32(): "int32",
    pa.int64(): "int64",
    pa.uint8(): "uint8",
    pa.uint16(): "uint16",
    pa.uint32(): "uint32",
    pa.uint64(): "uint64",
    pa.float16(): "float16",
    pa.float32(): "float32",
    pa.float64(): "float64",
    pa.string(): "string",
    pa.large_string(): "large_string",
    pa.string_view(): "string",
    pa.binary(): "binary",
    pa.large_binary(): "large_binary",
    pa.binary_view(): "binary",
    pa.date32(): "date32",
    pa.date64(): "date64",
}
_ARROW = {text: t for t, text in _SIMPLE.items() if text not in ("string", "binary") or t in (pa.string(), pa.binary())}


def type_text(t: pa.DataType) -> str:
    """The core's type text of an Arrow type a tfsql writer stores (views, dictionaries
    and list views as the types they read back as); `ValueError` for another."""
    if isinstance(t, pa.DictionaryType):
        return type_text(t.value_type)
    if isinstance(t, pa.FixedShapeTensorType):
        if t.permutation is not None and list(t.permutation) != sorted(t.permutation):
            raise ValueError(f"{t}: a permuted tensor has no description")
        return f"fixed_shape_tensor<{type_text(t.value_type)}>[{','.join(str(d) for d in t.shape)}]"
    if t in _SIMPLE:
        return _SIMPLE[t]
    if pa.types.is_timestamp(t):
        return f"timestamp[{t.unit}, tz={t.tz}]" if t.tz else f"timestamp[{t.unit}]"
    if pa.types.is_time32(t) or pa.types.is_time64(t) or pa.types.is_duration(t):
        return f"{'duration' if pa.types.is_duration(t) else str(t).split('[')[0]}[{t.unit}]"
    if pa.types.is_decimal(t) and t.bit_width in (128, 256):
        return f"decimal{t.bit_width}({t.precision}, {t.scale})"
    if pa.types.is_fixed_size_binary(t):
        return f"fixed_size_binary[{t.byte_width}]"
    if pa.types.is_fixed_size_list(t):
        return f"fixed_size_list<{type_text(t.value_type)}>[{t.list_size}]"
    if pa.types.is_list(t) or pa.types.is_list_view(t):
        return f"list<{type_text(t.value_type)}>"
    if pa.types.is_large_list(t) or pa.types.is_large_list_view(t):
        return f"large_list<{type_text(t.value_type)}>"
    raise ValueError(f"{t} has no tfsql type text")


def arrow_type(text: str) -> pa.DataType:
    """The Arrow type of the core's type text; `ValueError` for other text."""
    parts = codec.type_parts(text)
    if parts is None:
        raise ValueError(f"{text!r} is not a tfsql type")
    leaf, unit, tz, precision, scale, width, wraps, shape = parts
    if leaf == "fixed_size_binary":
        t: pa.DataType = pa.binary(width)
    elif leaf == "decimal128":
        t = pa.decimal128(precision, scale)
    elif leaf == "decimal256":
        t = pa.decimal256(precision, scale)
    elif leaf == "timestamp":
        t = pa.timestamp(unit, tz=tz or None)
    elif leaf == "time32":
        t = pa.time32(unit)
    elif leaf == "time64":
        t = pa.time64(unit)
    elif leaf == "duration":
        t = pa.duration(unit)
    else:
        t = _ARROW[leaf]
    for wrap, size in reversed(wraps):
        if wrap == "fixed_shape_tensor":
            t = pa.fixed_shape_tensor(t, list(shape))
        elif wrap == "fixed_size_list":
            t = pa.list_(t, size)
        elif wrap == "large_list":
            t = pa.large_list(t)
        else:
            t = pa.list_(t)
    return t


def render(schema: pa.Schema, partition_by: Sequence[str] = ()) -> bytes:
    """The ``features.json`` bytes of a write: the data columns of `schema` in order,
    then the `partition_by` columns (as hive directories give them, after the data). A
    column of Arrow's ``null`` type is in no record and not described (it has no type
    to read back)."""
    data = [f for f in schema if f.name not in partition_by]
    columns = [(f.name, type_text(f.type), False) for f in data]
    columns += [(name, type_text(schema.field(name).type), True) for name in partition_by]
    return bytes(codec.render_description(columns))


@dataclass(frozen=True)
class Description:
    """The columns a ``features.json`` written by tfsql describes."""

    data_schema: pa.Schema
    partition_schema: pa.Schema

    @staticmethod
    def parse(document: bytes) -> Description | None:
        """The description in `document`; None for TFDS's own ``features.json`` (no
        tfsql types) or bytes that are not one."""
        columns = codec.parse_description(document)
        if columns is None:
            return None
        try:
            data = [pa.field(n, arrow_type(t)) for n, t, partition in columns if not partition]
            parts = [pa.field(n, arrow_type(t)) for n, t, partition in columns if partition]
        except (ValueError, KeyError):
            return None
        return Description(pa.schema(data), pa.schema(parts))


def read(fs: Any, directory: str) -> Description | None:
    """The description in ``directory/features.json``; None when there is none."""
    try:
        with fs.open(posixpath.join(directory, NAME), "rb") as handle:
            return Description.parse(handle.read())
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError):
        return None


def written_description(found: Any) -> Description | None:
    """The description a tfsql writer left in the one root directory every listed file
    (of a `tfsql.discovery.Discovered`) was found below; None for files named directly,
    several roots, a TFDS / TFX layout, or a root without one (the core's
    ``codec.description_root``, which the extension asks too)."""
    roots = [f.root for f in found.files]
    if not codec.description_root(roots, found.layout):
        return None
    return read(found.filesystem, roots[0])


def check_append(existing: Description, new: Description, display: str) -> None:
    """Refuse an append whose columns (`new`) differ from the target's description,
    naming the first column that differs and what the target holds."""
    for kind, old_schema, new_schema in (
        ("column", existing.data_schema, new.data_schema),
        ("partition column", existing.partition_schema, new.partition_schema),
    ):
        for name in dict.fromkeys(old_schema.names + new_schema.names):
            old_t = old_schema.field(name).type if name in old_schema.names else None
            new_t = new_schema.field(name).type if name in new_schema.names else None
            if old_t != new_t:
                held = f"holds {kind} {name!r} as {old_t}" if old_t is not None else f"has no {kind} {name!r}"
                given = f"as {new_t}" if new_t is not None else "without it"
                raise SchemaError(
                    f"{display!r} {held} ({NAME}); this append gives it {given}: cast the column to "
                    f"{old_t if old_t is not None else 'match'}, or write with mode='overwrite'",
                    feature=name,
                )
        if old_schema.names != new_schema.names:
            raise SchemaError(
                f"{display!r} holds the {kind}s {old_schema.names} in that order ({NAME}); this append gives "
                f"{new_schema.names}: select the columns in the target's order, or write with mode='overwrite'"
            )
