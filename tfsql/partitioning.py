"""Hive ``key=value`` directories: format, parse, type, and prune files by a filter.

Conventions (Spark's, which spark-tfrecord and Hive share):

- Directory names are ``escape(key)=escape(value)`` with `escape_partition_value`; a null
  value is written ``__HIVE_DEFAULT_PARTITION__`` and an empty string ``k=``, so each
  reads back as itself. Every tfsql writer follows this one rule, and so does DuckDB's
  own ``COPY ... (PARTITION_BY ...)`` (the extension's native COPY, Parquet); Spark's
  writers instead write ``""`` as null, and Spark's own partition discovery refuses a
  ``k=`` directory ("Empty partition column value"), while every tfsql reader, DuckDB's
  and pyarrow read it as the empty string.
- Reading keeps every ``key=value`` component of a file's directory below the dataset
  root and ignores components without ``=`` (pyarrow's and Polars' ``scan_parquet``
  rule; Spark instead stops at the first plain directory above a ``key=value`` one).
  Keys and values are unescaped. The DuckDB front ends pass ``hive_rule="path"``:
  every directory of each file's path counts, the root's own too, as DuckDB's
  ``read_parquet`` does (``tfrecord_scan('data/label=0/*.tfrecord')`` keeps ``label``).
  Finding, unescaping, typing and every refusal are the C core's plan
  (``tfsql_plan_hive``: the values bytes-exact, NUL included), shared with the DuckDB
  extension.
- Types (docs/format.md, section 3): a column is ``int64`` when every non-null value is a decimal integer
  that fits int64 (an optional ``-``, digits; leading zeros allowed, so ``007`` reads as
  7 like Spark, pyarrow and polars do); otherwise ``string``. A column whose values are
  all null is ``string``. A user ``hive_schema`` overrides the type of the columns it
  names (values are cast with pyarrow).
- Every partitioned file must sit under the same keys in the same order.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tfsql._codec import codec
from tfsql.discovery import FileInfo
from tfsql.errors import SchemaError
from tfsql.messages import DIALECTS
from tfsql.naming import NAME_MAX_BYTES, component_too_long

__all__ = [
    "HIVE_DEFAULT_PARTITION",
    "escape_partition_value",
    "partition_path",
    "parse_partition_segments",
    "Partitioning",
]

HIVE_DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"

# Spark's ExternalCatalogUtils.charToEscape (control characters, " # % ' * / : = ? \ DEL
# { [ ] ^), plus NUL (no path can hold it) and < > | which Spark escapes only on Windows:
# escaping them everywhere keeps written trees portable, and every reader unescapes %XX.
_CHARS_TO_ESCAPE = frozenset([chr(c) for c in range(0x00, 0x20)] + list("\"#%'*/:=?\\\x7f{[]^") + list("<>|"))


def escape_partition_value(value: str) -> str:
    """Escape a partition key or value for a directory name, as Spark and Hive do.

    Characters that are unsafe in paths (``/ \\ = % : * ? " < > | # { [ ] ^ '``, DEL and
    control characters) become ``%XX`` with uppercase hex; everything else, including
    non-ASCII text, stays as is.

    Examples
    --------
    >>> escape_partition_value("a/b=c%d")
    'a%2Fb%3Dc%25d'
    >>> escape_partition_value("héllo wörld")
    'héllo wörld'
    """
    if not any(ch in _CHARS_TO_ESCAPE for ch in value):
        return value
    return "".join(f"%{ord(ch):02X}" if ch in _CHARS_TO_ESCAPE else ch for ch in value)


def format_partition_value(value: object) -> str:
    """Return the directory text of one partition value, before escaping.

    None → ``__HIVE_DEFAULT_PARTITION__`` (``""`` stays ``""``); bool → ``true``/``false``; a
    pyarrow scalar is converted with ``as_py()``; dates and datetimes use ``isoformat``
    with a space separator (``2024-01-31``, ``2024-01-31 12:00:00``) as Spark writes
    them; everything else (int, str, float, Decimal, numpy scalars) uses ``str``.

    Examples
    --------
    >>> [format_partition_value(v) for v in [None, "", True, 3, "x", 1.5]]
    ['__HIVE_DEFAULT_PARTITION__', '', 'true', '3', 'x', '1.5']
    """
    if isinstance(value, pa.Scalar):
        value = value.as_py()
    if value is None:
        return HIVE_DEFAULT_PARTITION
    if isinstance(value, (bytes, bytearray, memoryview)):
        raise TypeError(
            f"partition values must be text, numbers, booleans or dates, not bytes ({value!r}); "
            "binary columns cannot be partition columns"
        )
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, _dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, _dt.date):
        return value.isoformat()
    return str(value)


def partition_path(names: Sequence[str], values: Sequence[object]) -> str:
    """Return the relative ``key=value/...`` directory for one partition.

    Keys and values are escaped with `escape_partition_value`; values are formatted with
    `format_partition_value` (None → ``__HIVE_DEFAULT_PARTITION__``, bool →
    ``true``/``false``, others via ``str``). So that every directory reads back exactly
    (and is not skipped as hidden), a key's leading ``.``, the ``.`` of a value ending in
    ``.crc`` or ``._COPYING_`` and the first ``_`` of the text value
    ``__HIVE_DEFAULT_PARTITION__`` (which would read back as null) are escaped too.

    Raises
    ------
    tfsql.SchemaError
        A ``key=value`` component is over 255 bytes of UTF-8 (no filesystem can name
        it); the error names the column and the value.

    Examples
    --------
    >>> partition_path(["a", "b"], [1, "x/y"])
    'a=1/b=x%2Fy'
    >>> partition_path(["day", "ok"], [None, False])
    'day=__HIVE_DEFAULT_PARTITION__/ok=false'
    >>> partition_path(["..", "k", "n"], ["a.crc", "__HIVE_DEFAULT_PARTITION__", "nul\\x00"])
    '%2E.=a%2Ecrc/k=%5F_HIVE_DEFAULT_PARTITION__/n=nul%00'
    """
    if len(names) != len(values):
        raise ValueError(f"partition_path got {len(names)} names but {len(values)} values; pass one value per name")
    segments = []
    for name, value in zip(names, values):
        if not isinstance(name, str) or not name:
            raise ValueError(f"partition column names must be non-empty strings, not {name!r}")
        segment = f"{_escape_key(name)}={_escape_value(value)}"
        if component_too_long(segment):
            shown = value if not isinstance(value, str) or len(value) <= 60 else value[:60] + "..."
            raise SchemaError(
                f"partition column {name!r}: the value {shown!r} makes the directory name "
                f"{segment[:60]}... of {len(segment.encode())} bytes, over the {NAME_MAX_BYTES}-byte "
                "limit of a file name; shorten or hash the value, or do not partition by this column",
                feature=name,
            )
        segments.append(segment)
    return "/".join(segments)


def _escape_key(name: str) -> str:
    key = escape_partition_value(name)
    return "%2E" + key[1:] if key.startswith(".") else key  # not a hidden directory


def _escape_value(value: object) -> str:
    text = format_partition_value(value)
    if text == HIVE_DEFAULT_PARTITION:
        raw = value.as_py() if isinstance(value, pa.Scalar) else value
        return text if raw is None else "%5F" + text[1:]  # the text, not null
    text = escape_partition_value(text)
    if codec.is_hidden_name("v" + text):  # a name readers skip by its ending (the core's rule):
        dot = text.rindex(".")  # every such ending starts at its last '.'
        return text[:dot] + "%2E" + text[dot + 1 :]
    return text


def parse_partition_segments(relative_dir: str) -> list[tuple[str, str | None]]:
    """Return the ``key=value`` components of a relative directory, unescaped.

    Components without ``=`` (or with an empty key) are skipped; the first ``=`` splits
    key from value; ``__HIVE_DEFAULT_PARTITION__`` becomes None.

    Examples
    --------
    >>> parse_partition_segments("label=1/extra/split=a%2Fb")
    [('label', '1'), ('split', 'a/b')]
    >>> parse_partition_segments("k=__HIVE_DEFAULT_PARTITION__")
    [('k', None)]
    """
    return codec.hive_segments(relative_dir)


@dataclass(frozen=True)
class Partitioning:
    """Hive partition columns of a list of files and their values per file.

    Attributes
    ----------
    schema : pyarrow.Schema
        The partition columns in directory order.
    values : pyarrow.Table
        One row per file, in the files' order, with the columns of `schema`.

    Examples
    --------
    >>> import pyarrow.compute as pc
    >>> files = [FileInfo(f"/d/label={i}/split={s}/part-0.tfrecord", 0, "/d")
    ...          for i, s in [(0, "train"), (1, "test")]]
    >>> part = Partitioning.discover(files)
    >>> part.schema
    label: int64
    split: string
    >>> part.values.to_pylist()
    [{'label': 0, 'split': 'train'}, {'label': 1, 'split': 'test'}]
    >>> part.prune(pc.field("split") == "test", part.schema)
    [1]
    """

    schema: pa.Schema
    values: pa.Table

    @property
    def names(self) -> list[str]:
        """The partition column names, in directory order."""
        return list(self.schema.names)

    @classmethod
    def discover(
        cls,
        files: Sequence[FileInfo],
        *,
        hive_partitioning: bool | None = None,
        hive_schema: pa.Schema | Mapping[str, Any] | None = None,
        hive_rule: str = "root",
    ) -> Partitioning | None:
        """Find the hive partition columns of `files` and type their values.

        Parameters
        ----------
        files : sequence of FileInfo
            As `tfsql.discovery.discover` returns them; files with ``root=None`` (named
            explicitly) have no partition directories.
        hive_partitioning : bool or None, default None
            None: partitioned when ``key=value`` directories are found; False: never
            (returns None); True: required (ValueError when none are found).
        hive_schema : pyarrow.Schema or dict of name to type, optional
            Types for some or all partition columns (a pyarrow type or a type name such
            as ``"int32"``); other columns are inferred.
        hive_rule : {"root", "path"}, default "root"
            Which directories hold partition columns: ``"root"`` those below the root the
            source named (Polars' ``scan_parquet``); ``"path"`` every directory of each
            file's path (DuckDB's ``read_parquet``, used by the DuckDB front ends).

        Returns
        -------
        Partitioning or None
            None when the files are not partitioned.

        Raises
        ------
        ValueError
            Files sit under different keys (the message names two of them), a key repeats
            within a path, `hive_schema` names a column that is not a partition key, or
            partitioning was asked for (or typed) and no file has ``key=value``
            directories: the core's refusals, worded by ``tfsql.messages.HIVE``.
            ValueError (a SchemaError) when a value cannot be cast to its `hive_schema`
            type.
        """
        if hive_partitioning is False:
            if hive_schema is not None:
                raise ValueError("hive_schema was given but hive_partitioning=False; drop one of them")
            return None
        if hive_partitioning not in (None, True):
            raise TypeError(f"hive_partitioning must be True, False or None, not {hive_partitioning!r}")
        user_types = _normalize_hive_schema(hive_schema)

        if hive_rule not in ("root", "path"):
            raise ValueError(f"hive_rule must be 'root' or 'path', not {hive_rule!r}")
        # the columns, each file's values, their types and every refusal: the core's plan
        planned = codec.hive_plan(
            [(f.path, f.root, f.display_name) for f in files],
            hive_rule == "path",
            bool(hive_partitioning),
            tuple(user_types),
            DIALECTS["python"],
        )
        if planned[0] == "refused":
            raise ValueError(planned[3])
        names, raw_columns, int_columns = planned
        if not names:
            return None

        columns = []
        fields = []
        for name, raw, ints in zip(names, raw_columns, int_columns):
            if name in user_types:
                column = _cast_column(name, raw, user_types[name], files)
            else:
                column = pa.array(raw, type=pa.string()) if ints is None else pa.array(ints, type=pa.int64())
            columns.append(column)
            fields.append(pa.field(name, column.type))
        schema = pa.schema(fields)
        return cls(schema=schema, values=pa.Table.from_arrays(columns, schema=schema))

    def prune(self, filter: pc.Expression | None, dataset_schema: pa.Schema) -> list[int]:
        """Return the indices of the files that may hold rows matching `filter`.

        The filter is simplified against each file's partition values (pyarrow's
        guarantee simplification, the same machinery ``pyarrow.dataset`` uses); a file is
        dropped only when the filter is provably false or null for every row in it.
        Terms on data columns are unknown and never drop a file. Handles ``==``, ``!=``,
        ranges, ``is_in``, ``is_null``, ``is_valid``, AND, OR and NOT.

        Parameters
        ----------
        filter : pyarrow.compute.Expression or None
            None keeps every file.
        dataset_schema : pyarrow.Schema
            The schema the filter refers to (data and partition columns); partition
            columns missing from it are appended.

        Raises
        ------
        TypeError
            `filter` is not a pyarrow expression.
        ValueError
            The filter references an unknown column or compares a column with a value
            of an incompatible type.
        """
        n_files = self.values.num_rows
        if filter is None:
            return list(range(n_files))
        if not isinstance(filter, pc.Expression):
            raise TypeError(f"filter must be a pyarrow.compute.Expression, not {type(filter).__name__}")
        import pyarrow.dataset as ds
        import pyarrow.fs as pafs

        schema = dataset_schema
        for partition_field in self.schema:
            if schema.get_field_index(partition_field.name) < 0:
                schema = schema.append(partition_field)

        # one guarantee per distinct partition, not per file
        group_of_file: list[int] = []
        group_index: dict[tuple, int] = {}
        guarantees: list[pc.Expression] = []
        for row in zip(*(column.to_pylist() for column in self.values.columns)):
            group = group_index.get(row)
            if group is None:
                group = group_index[row] = len(guarantees)
                guarantees.append(_guarantee(self.schema.names, row, schema))
            group_of_file.append(group)

        probe = ds.FileSystemDataset.from_paths(
            [f"/{group}" for group in range(len(guarantees))],
            schema=schema,
            format=ds.IpcFileFormat(),
            filesystem=pafs.LocalFileSystem(),
            partitions=guarantees,
        )
        try:
            kept_groups = {int(fragment.path[1:]) for fragment in probe.get_fragments(filter=filter)}
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
            raise ValueError(
                f"the filter {filter} does not fit the dataset's columns ({', '.join(schema.names)}): {exc}"
            ) from exc
        return [i for i, group in enumerate(group_of_file) if group in kept_groups]


# ---------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------


def _normalize_hive_schema(hive_schema: pa.Schema | Mapping[str, Any] | None) -> dict[str, pa.DataType]:
    if hive_schema is None:
        return {}
    if isinstance(hive_schema, pa.Schema):
        return {f.name: f.type for f in hive_schema}
    if not isinstance(hive_schema, Mapping):
        raise TypeError(
            f"hive_schema must be a pyarrow.Schema or a dict of name to type, not {type(hive_schema).__name__}"
        )
    types = {}
    for name, type_ in hive_schema.items():
        if isinstance(type_, str):
            try:
                type_ = pa.type_for_alias(type_)
            except ValueError as exc:
                raise ValueError(f"hive_schema type {type_!r} of {name!r} is not a pyarrow type name") from exc
        if not isinstance(type_, pa.DataType):
            raise TypeError(f"hive_schema type of {name!r} must be a pyarrow DataType, not {type_!r}")
        types[name] = type_
    return types


def _cast_column(name: str, raw: Sequence[str | None], target: pa.DataType, files: Sequence[FileInfo]) -> pa.Array:
    strings = pa.array(raw, type=pa.string())
    if pa.types.is_string(target):
        return strings
    if pa.types.is_boolean(target):
        # Spark writes booleans as true/false; pyarrow's cast also accepts 1/0
        strings = pc.utf8_lower(strings)
    try:
        return strings.cast(target)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        for file, value in zip(files, raw):
            if value is None:
                continue
            try:
                pa.array([value], type=pa.string()).cast(target)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
                raise SchemaError(
                    f"hive partition value {value!r} of column {name!r} (in {file.display()}) "
                    f"cannot be cast to {target}; fix hive_schema (or use string)"
                ) from exc
        raise SchemaError(f"hive partition column {name!r} cannot be cast to {target}: {exc}", feature=name) from exc


def _guarantee(names: Sequence[str], row: tuple, schema: pa.Schema) -> pc.Expression:
    """AND of ``name == value`` / ``is_null(name)`` for one partition, typed as `schema`."""
    terms = []
    for name, value in zip(names, row):
        field_ref = pc.field(name)
        if value is None:
            terms.append(field_ref.is_null())
            continue
        try:
            scalar = pa.scalar(value, type=schema.field(name).type)
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError):
            continue  # no usable guarantee for this column: it never prunes
        terms.append(field_ref == scalar)
    if not terms:
        return pc.scalar(True)
    expression = terms[0]
    for term in terms[1:]:
        expression = expression & term
    return expression
