"""Arrow <-> feature mapping: record types, column layouts, inference and read casts.

A *column spec* says where a column's values live in a record (``Example.features`` /
``SequenceExample.context``, or ``SequenceExample.feature_lists``), which ``Feature``
kind holds them (bytes, float or int64 list) and their shape (scalar, list, or list
of lists), plus the Arrow type the user gets. The C decoder produces the *canonical*
Arrow type for a kind and shape (``int64``, ``float32``, ``binary``, wrapped in
lists); :func:`cast_to_target` then casts, range-checked, to the requested type.

Inference (see :func:`infer_from_stats`) follows ``docs/format.md`` section 3:

- ``int64_list`` -> ``int64``, ``float_list`` -> ``float32``, ``bytes_list`` ->
  ``string`` when every sampled value is valid UTF-8, else ``binary``;
- scalar when no sampled record holds more than one value and some hold one, else
  a list (so a feature whose sampled lists are all empty stays a list;
  ``lists="always"`` forces lists); ``SequenceExample`` feature lists ->
  ``list<list<K>>``;
- column order is the order in which features are first seen, reading the sampled
  files in order and each record's features in wire order (for files tfsql writes
  that is the written column order);
- a feature seen with two kinds is a :class:`~tfsql.errors.SchemaError` naming both.

Examples
--------
>>> import pyarrow as pa
>>> from tfsql.schema import feature_layout, parse_record_type
>>> feature_layout(pa.list_(pa.float64()))  # (FLOAT, LIST)
(2, 1)
>>> parse_record_type("SequenceExample")
1
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping

import pyarrow as pa
import pyarrow.compute as pc

from tfsql._codec import codec
from tfsql.errors import SchemaError

__all__ = [
    "ColumnSpec",
    "FeatureStats",
    "parse_record_type",
    "record_type_name",
    "feature_layout",
    "canonical_type",
    "kind_name",
    "normalize_schema",
    "column_specs",
    "merge_stats",
    "infer_from_stats",
    "cast_to_target",
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

_RECORD_TYPES = {
    "example": codec.EXAMPLE,
    "sequence_example": codec.SEQUENCE_EXAMPLE,
    "sequenceexample": codec.SEQUENCE_EXAMPLE,
    "bytes": codec.RAW,
    "bytearray": codec.RAW,
    "byte_array": codec.RAW,
    "raw": codec.RAW,
}

_KIND_NAMES = {
    codec.KIND_NONE: "no kind",
    codec.BYTES: "bytes_list",
    codec.FLOAT: "float_list",
    codec.INT64: "int64_list",
}


def parse_record_type(value: str | int) -> int:
    """Return the codec code of a record type name.

    Accepts tfsql's names (``"example"``, ``"sequence_example"``, ``"bytes"``) and
    Spark-TFRecord's (``"Example"``, ``"SequenceExample"``, ``"ByteArray"``), any case.

    Examples
    --------
    >>> parse_record_type("ByteArray") == parse_record_type("bytes")
    True
    """
    if isinstance(value, int) and value in (codec.EXAMPLE, codec.SEQUENCE_EXAMPLE, codec.RAW):
        return value
    if isinstance(value, str):
        code = _RECORD_TYPES.get(value.strip().lower())
        if code is not None:
            return code
    raise ValueError(
        f"unknown record_type {value!r}; use 'example', 'sequence_example' or 'bytes' "
        "(Spark-TFRecord's 'Example', 'SequenceExample', 'ByteArray' work too)"
    )


def record_type_name(code: int) -> str:
    """The canonical name of a record type code (``0`` -> ``"example"``)."""
    return {codec.EXAMPLE: "example", codec.SEQUENCE_EXAMPLE: "sequence_example", codec.RAW: "bytes"}[code]


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


def _is_list(t: pa.DataType) -> bool:
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
    values. Lists of those are ``LIST``, lists of lists ``LIST_OF_LIST``.

    Raises
    ------
    SchemaError
        For types no feature can hold (struct, map, deeper nesting, null, ...). The
        caller adds the column name.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from tfsql._codec import codec
    >>> feature_layout(pa.list_(pa.list_(pa.string()))) == (codec.BYTES, codec.LIST_OF_LIST)
    True
    """
    shape = codec.SCALAR
    inner = arrow_type
    if pa.types.is_dictionary(inner):
        inner = inner.value_type
    tensor = tensor_layout(inner)
    if tensor is not None:
        shape = codec.LIST
        inner = tensor[1]
    elif _is_list(inner):
        shape = codec.LIST
        inner = inner.value_type
        if pa.types.is_dictionary(inner):
            inner = inner.value_type
        if _is_list(inner):
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
    if kind == codec.INT64:
        value = pa.int64()
    elif kind == codec.FLOAT:
        value = pa.float32()
    elif kind == codec.BYTES:
        value = pa.string() if utf8 else pa.binary()
    else:
        raise ValueError(f"no Arrow type for {kind_name(kind)}")
    if shape == codec.SCALAR:
        return value
    if shape == codec.LIST:
        return pa.list_(value)
    return pa.list_(pa.list_(value))


@dataclass(frozen=True)
class ColumnSpec:
    """How one output column is read from records.

    ``location`` is ``codec.FEATURES`` (Example features / SequenceExample context) or
    ``codec.FEATURE_LISTS``; ``decoded_type`` is what the decoder produces and
    ``arrow_type`` what the user asked for (equal when no cast is needed).
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

    def as_codec_tuple(self) -> tuple[bytes, int, int, int]:
        return (self.feature_name.encode("utf-8"), self.location, self.kind, self.shape)


#: Appended to the column name of a SequenceExample feature list whose name is also a
#: context feature's (the context feature keeps the plain name).
FEATURE_LIST_SUFFIX = "__feature_list"


def feature_list_name(column: str, context_columns: Iterable[str]) -> str:
    """The feature list a list-of-lists column reads or writes: ``N`` for a column named
    ``N__feature_list`` when ``N`` is also a context column, else the column name.

    Examples
    --------
    >>> feature_list_name("ids__feature_list", ["ids", "label"])
    'ids'
    >>> feature_list_name("ids__feature_list", ["label"])
    'ids__feature_list'
    """
    if column.endswith(FEATURE_LIST_SUFFIX):
        base = column[: -len(FEATURE_LIST_SUFFIX)]
        if base in set(context_columns):
            return base
    return column


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
                raise TypeError(
                    f"schema entry {name!r}: expected a pyarrow DataType, got {type(typ).__name__}"
                )
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
    specs = []
    context = [f.name for f in schema if not _is_list_of_lists(f.type)]
    for f in schema:
        try:
            kind, shape = feature_layout(f.type)
        except SchemaError as exc:
            raise SchemaError(f"column {f.name!r}: {exc}", feature=f.name) from None
        if record_type == codec.RAW:
            if shape != codec.SCALAR or kind != codec.BYTES:
                raise SchemaError(
                    f"record_type='bytes' reads one binary or string column; column {f.name!r} "
                    f"has type {f.type}",
                    feature=f.name,
                )
        if shape == codec.LIST_OF_LIST and record_type != codec.SEQUENCE_EXAMPLE:
            raise SchemaError(
                f"column {f.name!r} has type {f.type}: lists of lists are SequenceExample "
                "feature_lists; pass record_type='sequence_example'",
                feature=f.name,
            )
        location = codec.FEATURE_LISTS if shape == codec.LIST_OF_LIST else codec.FEATURES
        feature = feature_list_name(f.name, context) if shape == codec.LIST_OF_LIST else f.name
        specs.append(
            ColumnSpec(f.name, location, kind, shape, f.type, f.nullable, None if feature == f.name else feature)
        )
    return specs


def _is_list_of_lists(t: pa.DataType) -> bool:
    try:
        return feature_layout(t)[1] == codec.LIST_OF_LIST
    except SchemaError:
        return False


# --------------------------------------------------------------------------- inference


@dataclass
class FeatureStats:
    """Merged inference statistics of one feature across sampled records."""

    location: int
    name: str
    kinds: dict[int, str] = field(default_factory=dict)  # kind -> first file seen with it
    present: int = 0
    min_len: int = 0
    max_len: int = 0
    utf8: bool = True
    max_inner_len: int = 0


def merge_stats(
    merged: dict[tuple[int, str], FeatureStats], summary: Mapping, *, path: str
) -> None:
    """Fold one ``codec.summarize`` result, from file ``path``, into ``merged``."""
    for (location, raw_name), (mask, present, min_len, max_len, utf8, max_inner) in summary.items():
        name = raw_name.decode("utf-8", errors="surrogateescape")
        key = (location, name)
        stats = merged.get(key)
        if stats is None:
            stats = merged[key] = FeatureStats(location, name, min_len=min_len)
        for kind in (codec.KIND_NONE, codec.BYTES, codec.FLOAT, codec.INT64):
            if mask & (1 << kind):
                stats.kinds.setdefault(kind, path)
        stats.present += present
        stats.min_len = min(stats.min_len, min_len)
        stats.max_len = max(stats.max_len, max_len)
        stats.max_inner_len = max(stats.max_inner_len, max_inner)
        stats.utf8 = stats.utf8 and bool(utf8)


def infer_from_stats(
    stats: Iterable[FeatureStats], record_type: int, *, lists: str = "auto", warn_kindless: bool = True
) -> pa.Schema:
    """Build the data schema from merged statistics (see the module docstring).

    A feature that never has a kind is left out, with a warning unless
    ``warn_kindless=False``.

    Examples
    --------
    >>> from tfsql._codec import codec
    >>> s = FeatureStats(codec.FEATURES, "label", {codec.INT64: "f"}, present=2, min_len=1, max_len=1)
    >>> infer_from_stats([s], codec.EXAMPLE)
    label: int64
    """
    if lists not in ("auto", "always"):
        raise ValueError(f"lists must be 'auto' or 'always', not {lists!r}")
    if record_type == codec.RAW:
        return pa.schema([pa.field(RAW_COLUMN, pa.binary())])
    fields: list[tuple[FeatureStats, pa.Field]] = []
    for st in stats:
        kinds = {k: p for k, p in st.kinds.items() if k != codec.KIND_NONE}
        if len(kinds) > 1:
            described = " and ".join(f"{kind_name(k)} (first in {p})" for k, p in sorted(kinds.items()))
            raise SchemaError(
                f"feature {st.name!r} holds two kinds in the inference sample: {described}; "
                "pass schema= with the type to read it as, or fix the data",
                feature=st.name,
            )
        if not kinds:
            if warn_kindless:
                where = "feature list" if st.location == codec.FEATURE_LISTS else "feature"
                warnings.warn(
                    f"{where} {st.name!r} never has a kind set in the inference sample (no "
                    "bytes_list, float_list or int64_list), so it carries no values and its type "
                    "is unknown: it is left out. To keep it as a column (null where it has no "
                    f"values), name it with a type in schema=, e.g. schema={{{st.name!r}: "
                    "pa.int64(), ...}",
                    stacklevel=3,
                )
            continue
        (kind,) = kinds
        if st.location == codec.FEATURE_LISTS:
            shape = codec.LIST_OF_LIST
        elif lists == "always" or st.max_len != 1:  # several values, or only empty lists
            shape = codec.LIST
        else:
            shape = codec.SCALAR
        typ = canonical_type(kind, shape, utf8=st.utf8)
        fields.append((st, pa.field(st.name, typ)))
    return pa.schema(_name_columns(fields))


def _name_columns(fields: list[tuple[FeatureStats, pa.Field]]) -> list[pa.Field]:
    """Column names: the feature names, except that a feature list sharing its name with
    a context feature becomes ``name + FEATURE_LIST_SUFFIX``."""
    context = {st.name for st, _ in fields if st.location != codec.FEATURE_LISTS}
    named: list[pa.Field] = []
    taken: set[str] = set()
    for st, f in fields:
        name = st.name
        if st.location == codec.FEATURE_LISTS and name in context:
            name = st.name + FEATURE_LIST_SUFFIX
        elif st.location == codec.FEATURE_LISTS and feature_list_name(name, context) != name:
            taken.add(name)  # a literal "N__feature_list" beside a context "N" is ambiguous
        if name in taken or (name != st.name and name in context):
            raise SchemaError(
                f"feature list {st.name!r} shares its name with a context feature, and its "
                f"column name {name!r} is taken by another feature; pass schema= naming the "
                "columns to read",
                feature=st.name,
            )
        taken.add(name)
        named.append(f.with_name(name))
    return named


# --------------------------------------------------------------------------- read casts


def _first_failing_row(decoded: pa.Array, target: pa.DataType) -> int | None:
    """Locate the first row whose cast fails, for error messages (slow path only)."""
    lo, hi = 0, len(decoded)
    if hi == 0:
        return None
    # Binary search on prefixes: the smallest prefix that fails to cast.
    while lo < hi:
        mid = (lo + hi) // 2
        try:
            _safe_cast(decoded.slice(0, mid + 1), target)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            hi = mid
        else:
            lo = mid + 1
    return lo if lo < len(decoded) else None


def _check_bool(decoded: pa.Array, spec: ColumnSpec, *, where: str, first_record: int) -> None:
    """Every int64 value (possibly nested) read as bool must be 0 or 1."""
    flat = _flat_values(decoded)
    if len(flat) == 0:
        return
    bad = pc.fill_null(pc.and_(pc.not_equal(flat, 0), pc.not_equal(flat, 1)), False)
    if not pc.any(bad).as_py():
        return
    i = pc.index(bad, True).as_py()
    row = first_record + _flat_rows(decoded)[i].as_py()
    raise SchemaError(
        f"feature {spec.feature_name!r} in {where}, record {row} holds {flat[i].as_py()}, which "
        f"does not fit the requested type {spec.arrow_type} (only 0 and 1 do); read it as an "
        "integer type",
        feature=spec.name,
        path=where,
        record_index=row,
    )


def _leaf_type(t: pa.DataType) -> pa.DataType:
    while _is_list(t):
        t = t.value_type
    return t


def _with_leaf(t: pa.DataType, leaf: pa.DataType) -> pa.DataType:
    """``t`` with its innermost value type replaced by ``leaf`` (list nesting kept)."""
    if pa.types.is_fixed_size_list(t):
        return pa.list_(_with_leaf(t.value_type, leaf), t.list_size)
    if pa.types.is_large_list(t):
        return pa.large_list(_with_leaf(t.value_type, leaf))
    if pa.types.is_list_view(t):
        return pa.list_view(_with_leaf(t.value_type, leaf))
    if pa.types.is_large_list_view(t):
        return pa.large_list_view(_with_leaf(t.value_type, leaf))
    if pa.types.is_list(t):
        return pa.list_(_with_leaf(t.value_type, leaf))
    return leaf


def _safe_cast(decoded: pa.Array, target: pa.DataType) -> pa.Array:
    """``pc.cast(decoded, target, safe=True)``; 32-bit temporal targets (``date32``,
    ``time32``), which Arrow casts only from int32, go through int32 (range-checked),
    so a column written from ``date32`` reads back with its schema."""
    leaf = _leaf_type(target)
    if pa.types.is_date32(leaf) or pa.types.is_time32(leaf):
        decoded = pc.cast(decoded, _with_leaf(target, pa.int32()), safe=True)
    return pc.cast(decoded, target, safe=True)


def _check_fixed_size(
    decoded: pa.Array, spec: ColumnSpec, *, where: str, first_record: int, tensor_shape: tuple | None = None
) -> None:
    """A fixed-size list type needs every non-null list to hold exactly its size (a
    tensor: the product of its shape)."""
    target = spec.arrow_type
    if not pa.types.is_fixed_size_list(target) or not (
        pa.types.is_list(decoded.type) or pa.types.is_large_list(decoded.type)
    ):
        return
    lengths = pc.list_value_length(decoded)
    wrong = pc.and_kleene(pc.is_valid(lengths), pc.not_equal(lengths, target.list_size))
    if not pc.any(wrong).as_py():
        return
    row = pc.index(wrong, True).as_py()
    count = lengths[row].as_py()
    if tensor_shape is not None:
        shape = " x ".join(map(str, tensor_shape))
        needs = (
            f"the requested tensor shape ({shape}) needs exactly {target.list_size}; "
            "check the shape in schema=, or read it as a variable-length list (pa.list_(...))"
        )
    else:
        needs = (
            f"the requested type {target} needs exactly {target.list_size}; read it as a "
            "variable-length list (pa.list_(...)) instead"
        )
    raise SchemaError(
        f"feature {spec.feature_name!r} in {where}, record {first_record + row} holds "
        f"{count} value{'' if count == 1 else 's'}, but {needs}",
        feature=spec.name,
        path=where,
        record_index=first_record + row,
    )


def _flat_rows(array: pa.Array) -> pa.Array:
    """For each innermost value of ``array`` (lists flattened), the row holding it."""
    rows = None
    while _is_list(array.type):
        parents = pc.list_parent_indices(array)
        rows = parents if rows is None else pc.take(rows, parents)
        array = array.flatten()
    return rows if rows is not None else pa.array(range(len(array)), pa.int64())


def _flat_values(array: pa.Array) -> pa.Array:
    while _is_list(array.type):
        array = array.flatten()
    return array


def _check_exact(decoded: pa.Array, cast: pa.Array, spec: ColumnSpec, *, where: str, first_record: int) -> None:
    """Casts that Arrow may round (float to decimal or float16) must give back the
    decoded value exactly: the cast value converted back is compared with the original."""
    leaf = _leaf_type(spec.arrow_type)
    if not (pa.types.is_decimal(leaf) or pa.types.is_float16(leaf)):
        return
    original = _flat_values(decoded)
    back = pc.cast(_flat_values(cast), original.type, safe=False)
    if pa.types.is_decimal(leaf):
        back = decimal_to_float(_flat_values(cast), original.type)
    differs = pc.fill_null(pc.not_equal(back, original), False)
    if not pc.any(differs).as_py():
        return
    i = pc.index(differs, True).as_py()
    row = _flat_rows(decoded)[i].as_py()
    if pa.types.is_decimal(leaf):
        how = (
            f"decimals read exactly: the float32 value must survive {leaf} and back; raise "
            "the scale, or read it as float32/float64"
        )
    else:
        how = "read it as float32 or float64"
    raise SchemaError(
        f"feature {spec.feature_name!r} in {where}, record {first_record + row} holds "
        f"{original[i].as_py()!r}, which {leaf} cannot hold exactly (it would read as "
        f"{_flat_values(cast)[i].as_py()}); {how}",
        feature=spec.name,
        path=where,
        record_index=first_record + row,
    )


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


def _check_not_null(array: pa.Array, spec: ColumnSpec, *, where: str, first_record: int) -> None:
    if spec.nullable or array.null_count == 0:
        return
    row = pc.index(pc.is_null(array), True).as_py()
    what = "feature list" if spec.location == codec.FEATURE_LISTS else "feature"
    raise SchemaError(
        f"{what} {spec.feature_name!r} has no value in {where}, record {first_record + row} "
        f"(missing, no kind set, or an empty list for a scalar), but column {spec.name!r} is "
        "not nullable in schema=; make the column nullable there (pa.field(..., nullable=True), "
        "no NOT NULL) or filter such records out of the files",
        feature=spec.name,
        path=where,
        record_index=first_record + row,
    )


def _read_tensor(
    decoded: pa.Array, spec: ColumnSpec, layout: tuple, *, where: str, first_record: int
) -> pa.Array:
    """A flat list column reshaped to the tensor type ``spec.arrow_type`` (row-major)."""
    shape, value_type = layout
    total = 1
    for size in shape:
        total *= size
    flat = replace(spec, arrow_type=pa.list_(value_type, total), nullable=True)
    _check_fixed_size(decoded, flat, where=where, first_record=first_record, tensor_shape=shape)
    storage = _cast(decoded, flat, where=where, first_record=first_record)
    target = spec.arrow_type
    if isinstance(target, pa.BaseExtensionType):
        return pa.ExtensionArray.from_storage(target, storage)
    values = storage.values.slice(storage.offset * total, len(storage) * total)
    for size in reversed(shape[1:]):
        values = pa.FixedSizeListArray.from_arrays(values, size)
    mask = storage.is_null() if storage.null_count else None
    return pa.FixedSizeListArray.from_arrays(values, shape[0], mask=mask).cast(target)


def cast_to_target(
    decoded: pa.Array, spec: ColumnSpec, *, where: str, first_record: int
) -> pa.Array:
    """Cast a decoded column to ``spec.arrow_type``: exact or a :class:`SchemaError`.

    Integers are range-checked, bytes UTF-8-checked; a float read as a decimal (or
    float16) must convert back to the same float32; a tensor type reshapes a flat list
    (row-major) after checking its value count; a non-nullable column must have a value
    in every record. ``where`` names the file for messages and ``first_record`` is the
    record index of row 0 in that file.

    Examples
    --------
    >>> import pyarrow as pa
    >>> from tfsql._codec import codec
    >>> spec = ColumnSpec("price", codec.FEATURES, codec.FLOAT, codec.SCALAR, pa.decimal128(10, 2))
    >>> cast_to_target(pa.array([2.5], pa.float32()), spec, where="f", first_record=0).to_pylist()
    [Decimal('2.50')]
    >>> spec = ColumnSpec("price", codec.FEATURES, codec.FLOAT, codec.SCALAR, pa.decimal128(10, 0))
    >>> cast_to_target(pa.array([2.5], pa.float32()), spec, where="f", first_record=0)
    Traceback (most recent call last):
    ...
    tfsql.errors.SchemaError: feature 'price' in f, record 0 holds 2.5, which decimal128(10, 0) cannot hold exactly (it would read as 2); decimals read exactly: the float32 value must survive decimal128(10, 0) and back; raise the scale, or read it as float32/float64
    """
    tensor = tensor_layout(spec.arrow_type)
    if tensor is not None:
        result = _read_tensor(decoded, spec, tensor, where=where, first_record=first_record)
    else:
        result = _cast(decoded, spec, where=where, first_record=first_record)
    _check_not_null(result, spec, where=where, first_record=first_record)
    return result


def _cast(decoded: pa.Array, spec: ColumnSpec, *, where: str, first_record: int) -> pa.Array:
    target = spec.arrow_type
    if decoded.type == target:
        return decoded
    if pa.types.is_boolean(_leaf_type(target)):
        _check_bool(decoded, spec, where=where, first_record=first_record)
    _check_fixed_size(decoded, spec, where=where, first_record=first_record)
    try:
        cast = _safe_cast(decoded, target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        row = _first_failing_row(decoded, target)
        at = f", record {first_record + row}" if row is not None else ""
        raise SchemaError(
            f"feature {spec.name!r} in {where}{at} does not fit the requested type {target}: "
            f"{exc}; widen the type in schema= (decoded as {decoded.type})",
            feature=spec.name,
            path=where,
            record_index=None if row is None else first_record + row,
        ) from None
    _check_exact(decoded, cast, spec, where=where, first_record=first_record)
    return cast


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
    fields = list(data)
    names = set(data.names)
    if partition is not None:
        for f in partition:
            if f.name in names:
                raise ValueError(
                    f"partition column {f.name!r} is also a feature in the records; rename the "
                    "directory key or pass hive_partitioning=False"
                )
            fields.append(f)
            names.add(f.name)
    if file_column is not None:
        if file_column in names:
            raise ValueError(f"include_file_paths={file_column!r} collides with an existing column")
        fields.append(pa.field(file_column, pa.string()))
    return pa.schema(fields)

