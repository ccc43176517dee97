"""The type mapping: which feature (location, kind, shape) stores each Arrow type, and
the column specs a decoder is compiled from.

A *column spec* says where a column's values live in a record (``Example.features`` /
``SequenceExample.context``, or ``SequenceExample.feature_lists``), which ``Feature``
kind holds them (bytes, float or int64 list) and their shape (scalar, list, or list
of lists), plus the Arrow type the user gets. The C decoder produces the *canonical*
Arrow type for a kind and shape (``int64``, ``float32``, ``binary``, wrapped in
lists); :mod:`tfsql.casting` then casts, range-checked, to the requested type.
Inference (the schema of records read without one) is :mod:`tfsql.inference`; the
mapping both ways is ``docs/format.md``.

A type no feature can hold is a :class:`~tfsql.errors.SchemaError`.

Examples
--------
>>> import pyarrow as pa
>>> from tfsql.schema import feature_layout
>>> feature_layout(pa.list_(pa.float64()))  # (FLOAT, LIST)
(2, 1)
"""

from __future__ import annotations

import functools
from itertools import repeat
import operator
from typing import Any, Collection, Mapping, NamedTuple

import pyarrow as pa
import pyarrow.compute as pc

from tfsql._bulk import gc_paused
from tfsql._codec import codec
from tfsql.errors import SchemaError
from tfsql.messages import RAW_SCHEMA, render

__all__ = [
    "ColumnSpec",
    "feature_layout",
    "canonical_type",
    "kind_name",
    "normalize_schema",
    "column_specs",
    "is_list_type",
    "RAW_COLUMN",
    "FEATURE_LIST_SUFFIX",
    "feature_list_name",
    "tensor_layout",
    "decimal_to_float",
    "schema_with_partitions",
    "offset_based_type",
]

#: The name of the one column of ``record_type="bytes"``.
RAW_COLUMN = "record"

_KIND_NAMES = {
    codec.KIND_NONE: "no kind",
    codec.BYTES: "bytes_list",
    codec.FLOAT: "float_list",
    codec.INT64: "int64_list",
}


def kind_name(kind: int) -> str:
    """``codec.INT64`` -> ``"int64_list"`` and so on, for messages."""
    return _KIND_NAMES.get(kind, f"kind {kind}")


_LIST_TYPES = (
    pa.types.is_list,
    pa.types.is_large_list,
    pa.types.is_fixed_size_list,
    pa.types.is_list_view,
    pa.types.is_large_list_view,
)

# The Arrow types each feature kind stores, tried in this order.
_KIND_TYPES = (
    (
        codec.INT64,
        (
            pa.types.is_boolean,
            pa.types.is_integer,
            pa.types.is_date,
            pa.types.is_timestamp,
            pa.types.is_time,
            pa.types.is_duration,
        ),
    ),
    (codec.FLOAT, (pa.types.is_floating, pa.types.is_decimal)),
    (
        codec.BYTES,
        (
            pa.types.is_string,
            pa.types.is_large_string,
            pa.types.is_binary,
            pa.types.is_large_binary,
            pa.types.is_fixed_size_binary,
            pa.types.is_string_view,
            pa.types.is_binary_view,
        ),
    ),
)


def is_list_type(t: pa.DataType) -> bool:
    """Whether ``t`` is a list type of any layout (list, large, fixed-size, view)."""
    return any(is_type(t) for is_type in _LIST_TYPES)


def _scalar_kind(t: pa.DataType) -> int | None:
    if pa.types.is_dictionary(t):
        return _scalar_kind(t.value_type)
    for kind, type_tests in _KIND_TYPES:
        if any(is_type(t) for is_type in type_tests):
            return kind
    return None


def feature_layout(arrow_type: pa.DataType) -> tuple[int, int]:
    """Map an Arrow type to the ``(kind, shape)`` of the feature that stores it.

    Integers, booleans, dates and timestamps go to ``int64_list``; floats and decimals
    to ``float_list``; strings and binaries to ``bytes_list``; a dictionary maps as its
    values. Lists of those are ``LIST``, lists of lists ``LIST_OF_LIST``. Arrow's
    ``null`` type (a column no record holds: writers leave it out) reads as an
    ``int64_list`` feature that must be absent.

    Raises
    ------
    SchemaError
        For types no feature can hold (struct, map, deeper nesting, ...). The
        caller adds the column name.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from tfsql._codec import codec
    >>> feature_layout(pa.list_(pa.list_(pa.string()))) == (codec.BYTES, codec.LIST_OF_LIST)
    True
    """
    try:
        return _cached_layout(arrow_type)  # a wide schema repeats a few types many times
    except TypeError:  # an unhashable (extension) type
        return _layout(arrow_type)


def _layout(arrow_type: pa.DataType) -> tuple[int, int]:
    if pa.types.is_null(arrow_type):  # in no record: read as an int64 feature none holds
        return codec.INT64, codec.SCALAR
    shape = codec.SCALAR
    inner = arrow_type
    if pa.types.is_dictionary(inner):
        inner = inner.value_type
    tensor = tensor_layout(inner)
    if tensor is not None:
        shape = codec.LIST
        inner = tensor[1]
    elif is_list_type(inner):
        shape = codec.LIST
        inner = inner.value_type
        if pa.types.is_dictionary(inner):
            inner = inner.value_type
        if is_list_type(inner):
            shape = codec.LIST_OF_LIST
            inner = inner.value_type
            if pa.types.is_dictionary(inner):
                inner = inner.value_type
    kind = _scalar_kind(inner)
    if kind is None:
        if isinstance(inner, pa.BaseExtensionType):
            raise SchemaError(_extension_message(inner))
        raise SchemaError(
            f"Arrow type {arrow_type} has no TFRecord feature representation; features hold "
            "integers, floats, strings/binary, and lists (or lists of lists) of those"
        )
    return kind, shape


_cached_layout = functools.lru_cache(maxsize=1024)(_layout)

TENSOR_EXTENSION = "arrow.fixed_shape_tensor"


def tensor_layout(arrow_type: pa.DataType) -> tuple[tuple[int, ...], pa.DataType] | None:
    """``(shape, value type)`` when ``arrow_type`` is a tensor stored as one flat feature,
    else None.

    Tensors are Arrow fixed-shape tensor columns (extension ``arrow.fixed_shape_tensor``;
    their values are taken in storage order, which is row-major for the default
    permutation) and ``fixed_size_list`` of ``fixed_size_list`` (row-major). A single
    ``fixed_size_list`` is a plain list, not a tensor.

    Examples
    --------
    >>> import pyarrow as pa
    >>> tensor_layout(pa.fixed_shape_tensor(pa.float32(), [2, 3]))
    ((2, 3), DataType(float))
    >>> tensor_layout(pa.list_(pa.list_(pa.int64(), 3), 2))
    ((2, 3), DataType(int64))
    >>> tensor_layout(pa.list_(pa.int64(), 3)) is None
    True
    """
    if isinstance(arrow_type, pa.FixedShapeTensorType):
        return tuple(arrow_type.shape), arrow_type.value_type
    if not (pa.types.is_fixed_size_list(arrow_type) and pa.types.is_fixed_size_list(arrow_type.value_type)):
        return None
    sizes = []
    inner = arrow_type
    while pa.types.is_fixed_size_list(inner):
        sizes.append(inner.list_size)
        inner = inner.value_type
    return tuple(sizes), inner


def _extension_message(t: pa.BaseExtensionType) -> str:
    name = getattr(t, "extension_name", str(t))
    if "variable_shape_tensor" in name:
        return (
            f"Arrow type {t} (a variable-shape tensor) has no TFRecord feature representation: "
            "a feature holds one flat list and no shape; write the values flattened "
            "(row-major) in one list column and the shape in another (a list<int64> column), "
            "or convert to fixed-shape tensors when every row has the same shape"
        )
    return (
        f"Arrow extension type {t} ({name}) has no TFRecord feature representation; cast the "
        "column to its storage type first (features hold integers, floats, strings/binary, "
        "lists of those, and fixed-shape tensors)"
    )


def canonical_type(kind: int, shape: int, *, utf8: bool = False) -> pa.DataType:
    """The Arrow type the decoder produces for a kind and shape.

    Examples
    --------
    >>> from tfsql._codec import codec
    >>> canonical_type(codec.FLOAT, codec.LIST)
    ListType(list<item: float>)
    """
    return _canonical_type(kind, shape, utf8)


@functools.lru_cache(maxsize=64)  # a wide schema asks for a few types a million times
def _canonical_type(kind: int, shape: int, utf8: bool) -> pa.DataType:
    if kind == codec.INT64:
        value = pa.int64()
    elif kind == codec.FLOAT:
        value = pa.float32()
    elif kind == codec.BYTES:
        value = pa.string() if utf8 else pa.binary()
    else:
        raise SchemaError(f"no Arrow type for {kind_name(kind)}")
    if shape == codec.SCALAR:
        return value
    if shape == codec.LIST:
        return pa.list_(value)
    return pa.list_(pa.list_(value))


class ColumnSpec(NamedTuple):
    """How one output column is read from records.

    ``location`` is ``codec.FEATURES`` (Example features / SequenceExample context) or
    ``codec.FEATURE_LISTS``; ``decoded_type`` is what the decoder produces and
    ``arrow_type`` what the user asked for (equal when no cast is needed). A named
    tuple: a record with a million features has a million specs, made fast and small.
    """

    name: str
    location: int
    kind: int
    shape: int
    arrow_type: pa.DataType
    nullable: bool = True
    feature: str | None = None  # the feature's name in the records, when not ``name``

    @property
    def feature_name(self) -> str:
        """The name of the feature (or feature list) in the records."""
        return self.name if self.feature is None else self.feature

    @property
    def decoded_type(self) -> pa.DataType:
        return canonical_type(self.kind, self.shape)

    @property
    def field(self) -> pa.Field:
        """The output column as an Arrow field (nullability kept)."""
        return pa.field(self.name, self.arrow_type, nullable=self.nullable)


#: Appended to the column name of a SequenceExample feature list whose name is also a
#: context feature's (the context feature keeps the plain name).
FEATURE_LIST_SUFFIX = codec.FEATURE_LIST_SUFFIX  # the core's TFSQL_FEATURE_LIST_SUFFIX


def feature_list_name(column: str, context_columns: Collection[str]) -> str:
    """The feature list a list-of-lists column reads or writes: ``N`` for a column named
    ``N__feature_list`` when ``N`` is also a context column, else the column name.

    Examples
    --------
    >>> feature_list_name("ids__feature_list", ["ids", "label"])
    'ids'
    >>> feature_list_name("ids__feature_list", ["label"])
    'ids__feature_list'
    """
    return codec.feature_list_name(column, context_columns)  # the core's rule


def normalize_schema(schema: pa.Schema | Mapping[str, Any] | None) -> pa.Schema | None:
    """Accept a ``pa.Schema``, or a mapping of name -> Arrow type (or type name such as
    ``"int64"``, ``"list<float>"``-style strings are not parsed: use pyarrow types).

    Examples
    --------
    >>> import pyarrow as pa
    >>> normalize_schema({"id": pa.int32()})
    id: int32
    """
    if schema is None or isinstance(schema, pa.Schema):
        return schema
    if isinstance(schema, Mapping):
        fields = []
        for name, typ in schema.items():
            if isinstance(typ, str):
                typ = pa.type_for_alias(typ)
            if not isinstance(typ, pa.DataType):
                raise TypeError(f"schema entry {name!r}: expected a pyarrow DataType, got {type(typ).__name__}")
            fields.append(pa.field(name, typ))
        return pa.schema(fields)
    raise TypeError(f"schema must be a pyarrow.Schema or a dict of name -> type, not {type(schema).__name__}")


def column_specs(schema: pa.Schema, record_type: int) -> list[ColumnSpec]:
    """Column specs for a (user or inferred) schema of data columns.

    For ``SequenceExample``, list-of-list columns read ``feature_lists`` and every other
    column the context; a list-of-lists column ``N__feature_list`` reads the feature list
    ``N`` when the schema also has the context column ``N`` (see
    :func:`feature_list_name`). For raw records the schema must be one binary/string
    column. Non-nullable fields stay non-nullable (a record without a value is then an
    error).

    Examples
    --------
    >>> import pyarrow as pa
    >>> from tfsql._codec import codec
    >>> [s.shape for s in column_specs(pa.schema({"x": pa.int32()}), codec.EXAMPLE)] == [codec.SCALAR]
    True
    """
    with gc_paused():  # a million columns: a million specs
        specs = _plain_specs(schema, record_type)
        return specs if specs is not None else _column_specs(list(schema), record_type)


class _Layouts(dict):
    """Arrow type -> ``(type, kind, shape)``, the type being the first object seen equal
    to it (shared by its specs); a type no feature holds, or a list of lists, is
    :data:`_NOT_PLAIN`."""

    def __missing__(self, t: pa.DataType) -> tuple:
        try:
            kind, shape = feature_layout(t)
        except SchemaError:
            kind, shape = None, None
        entry = self[t] = _NOT_PLAIN if shape in (None, codec.LIST_OF_LIST) else (t, kind, shape)
        return entry


_NOT_PLAIN = (None, None, None)
_TYPE_KIND_SHAPE = [operator.itemgetter(i) for i in range(3)]


def _plain_specs(schema: pa.Schema, record_type: int) -> list[ColumnSpec] | None:
    """The specs of a schema whose columns are all nullable features of the records
    (not raw records, no list of lists: no column's feature depends on another column),
    read in bulk (names, types, one lookup per column, specs made by C-level maps: a
    record with a million features); None for any other schema."""
    if record_type == codec.RAW:
        return None
    # every non-nullable field (or list item) prints " not null" (a name may too: then the slow way)
    if " not null" in schema.to_string(show_field_metadata=False, show_schema_metadata=False):
        return None
    layouts = _Layouts()
    try:
        entries = list(map(layouts.__getitem__, schema.types))
    except TypeError:  # an unhashable (extension) type
        return None
    if _NOT_PLAIN in layouts.values():
        return None
    types, kinds, shapes = (map(get, entries) for get in _TYPE_KIND_SHAPE)
    rows = zip(schema.names, repeat(codec.FEATURES), kinds, shapes, types, repeat(True), repeat(None))
    return list(map(functools.partial(tuple.__new__, ColumnSpec), rows))


def _column_specs(fields: list[pa.Field], record_type: int) -> list[ColumnSpec]:
    # each distinct type's layout once, and one type object per distinct type shared by
    # its specs (a wide schema has a million columns of a few types)
    known: dict[pa.DataType, tuple[pa.DataType, tuple[int, int] | None]] = {}
    typed = []
    for f in fields:
        t = f.type
        entry = known.get(t)
        if entry is None:
            try:
                entry = known[t] = (t, feature_layout(t))
            except SchemaError:
                entry = known[t] = (t, None)
        typed.append(entry)
    context: set[str] | None = None  # the columns a feature list's name depends on (when one is there)
    specs = []
    new, features = tuple.__new__, codec.FEATURES  # a spec without ColumnSpec's Python-level __new__
    for f, (t, layout) in zip(fields, typed):
        name = f.name
        if layout is None:
            try:
                feature_layout(t)
            except SchemaError as exc:
                raise SchemaError(f"column {name!r}: {exc}", feature=name) from None
        kind, shape = layout  # type: ignore[misc]  # None raised above
        if record_type == codec.RAW:
            if shape != codec.SCALAR or kind != codec.BYTES:
                raise SchemaError(render(RAW_SCHEMA["type"], column=name, type=t), feature=name)
        if shape == codec.LIST_OF_LIST:
            if record_type != codec.SEQUENCE_EXAMPLE:
                raise SchemaError(
                    f"column {name!r} has type {t}: lists of lists are SequenceExample "
                    "feature_lists; pass record_type='sequence_example'",
                    feature=name,
                )
            if context is None:
                context = {g.name for g, (_, lay) in zip(fields, typed) if lay is None or lay[1] != codec.LIST_OF_LIST}
            feature = feature_list_name(name, context)
            specs.append(
                ColumnSpec(name, codec.FEATURE_LISTS, kind, shape, t, f.nullable, None if feature == name else feature)
            )
        else:
            specs.append(new(ColumnSpec, (name, features, kind, shape, t, f.nullable, None)))
    return specs


def decimal_to_float(values: pa.Array, float_type: pa.DataType | None = None) -> pa.Array:
    """Decimals to the nearest float (correctly rounded, through their decimal text;
    Arrow's direct cast can be one unit off).

    Examples
    --------
    >>> import decimal, pyarrow as pa
    >>> decimal_to_float(pa.array([decimal.Decimal("0.10")], pa.decimal128(4, 2))).to_pylist() == [pa.scalar(0.1, pa.float32()).as_py()]
    True
    """
    return pc.cast(pc.cast(values, pa.string()), pa.float32() if float_type is None else float_type)


def offset_based_type(t: pa.DataType) -> pa.DataType:
    """``t`` with view types (``string_view``, ``binary_view``, list views, as Polars
    exports) replaced by their offset-based equivalents, which every Arrow kernel
    supports; inside lists and dictionaries too.

    Examples
    --------
    >>> import pyarrow as pa
    >>> offset_based_type(pa.list_(pa.string_view()))
    ListType(list<item: large_string>)
    """
    if pa.types.is_dictionary(t):
        return pa.dictionary(t.index_type, offset_based_type(t.value_type), t.ordered)
    if pa.types.is_string_view(t):
        return pa.large_string()
    if pa.types.is_binary_view(t):
        return pa.large_binary()
    if pa.types.is_list_view(t) or pa.types.is_large_list_view(t) or pa.types.is_large_list(t):
        return pa.large_list(offset_based_type(t.value_type))
    if pa.types.is_list(t):
        return pa.list_(offset_based_type(t.value_type))
    if pa.types.is_fixed_size_list(t):
        return pa.list_(offset_based_type(t.value_type), t.list_size)
    return t


def schema_with_partitions(data: pa.Schema, partition: pa.Schema | None, file_column: str | None) -> pa.Schema:
    """The full dataset schema: data columns, then partition columns, then the file path column."""
    if (partition is None or not len(partition)) and file_column is None:
        # nothing to add (and no per-column copy of a wide schema); no schema metadata, as built
        return data if data.metadata is None else data.remove_metadata()
    fields = list(data)
    names = set(data.names)
    if partition is not None:
        for f in partition:
            if f.name in names:
                raise SchemaError(
                    f"partition column {f.name!r} is also a feature in the records; rename the "
                    "directory key or pass hive_partitioning=False"
                )
            fields.append(f)
            names.add(f.name)
    if file_column is not None:
        if file_column in names:
            raise SchemaError(
                f"include_file_paths={file_column!r} collides with an existing column", feature=file_column
            )
        fields.append(pa.field(file_column, pa.string()))
    return pa.schema(fields)
