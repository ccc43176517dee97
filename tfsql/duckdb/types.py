"""DuckDB type names as Arrow types: ``'BIGINT'``, ``'FLOAT[]'``, ``'VARCHAR NOT NULL'``...

``tfrecord_scan``'s ``schema`` / ``columns`` / ``hive_types`` parameters and the
``tfsql`` command's ``--schema`` name column types the way DuckDB does; DuckDB itself
resolves each name (on a private in-memory connection, never as SQL text), and the
result is reduced to the plain Arrow types tfsql decodes into.

Examples
--------
>>> type_struct("tfrecord_scan", "schema", {"id": "BIGINT NOT NULL", "emb": "FLOAT[]"})
id: int64 not null
emb: list<item: float>
  child 0, item: float
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from typing import Any

import duckdb
import pyarrow as pa

from tfsql.duckdb.errors import BinderError, sql_error
from tfsql.duckdb.results import arrow_table

__all__ = ["duckdb_type_to_arrow", "type_struct", "sql_type_name"]

_types_lock = threading.Lock()
_types_connection: Any = None
_type_cache: dict[str, pa.DataType] = {}
_NOT_NULL = re.compile(r"(?is)(.*?)\s+NOT\s+NULL\s*")


def duckdb_type_to_arrow(type_name: str) -> pa.DataType:
    """The Arrow type DuckDB gives a column of SQL type ``type_name``.

    DuckDB resolves the name (``'BIGINT'``, ``'FLOAT[]'``, ``'BIGINT[128]'``,
    ``'VARCHAR'``, ``'BLOB'``, ``'STRUCT(a INT)'``...) on a private in-memory connection;
    Arrow names (``'int64'``, ``'float32'``) work too.

    Examples
    --------
    >>> duckdb_type_to_arrow("BIGINT[4]")
    FixedSizeListType(fixed_size_list<item: int64>[4])
    >>> duckdb_type_to_arrow("FLOAT[]"), duckdb_type_to_arrow("VARCHAR")
    (ListType(list<item: float>), DataType(string))
    """
    global _types_connection
    if not isinstance(type_name, str):
        raise sql_error(
            BinderError,
            f"a column type must be a VARCHAR such as 'BIGINT' or 'FLOAT[]', got {type_name!r}",
            function="tfrecord_scan",
        )
    key = type_name.strip()
    with _types_lock:
        if key in _type_cache:
            return _type_cache[key]
        if _types_connection is None:
            _types_connection = duckdb.connect()
        arrow_type = None
        try:  # DuckDB parses the name as a type (never as SQL text)
            sql_type = duckdb.sqltype(key)
            relation = _types_connection.sql("SELECT 1 AS c LIMIT 0").select(
                duckdb.ConstantExpression(None).cast(sql_type).alias("c")
            )
            arrow_type = arrow_table(relation).schema.field(0).type
        except duckdb.Error:
            arrow_type = None
        if arrow_type is None:
            try:
                arrow_type = pa.type_for_alias(key)
            except ValueError:
                raise sql_error(
                    BinderError,
                    f"unknown column type {type_name!r}; use a DuckDB type such as 'BIGINT', "
                    f"'DOUBLE', 'VARCHAR', 'BLOB', 'FLOAT[]' or 'BIGINT[128]'",
                    function="tfrecord_scan",
                ) from None
        arrow_type = _plain_arrow_type(arrow_type)
        _type_cache[key] = arrow_type
        return arrow_type


def _plain_arrow_type(t: pa.DataType) -> pa.DataType:
    """Large / view variants to the plain Arrow types tfsql decodes into; field names of
    lists normalised to ``item``."""
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return pa.binary()
    if pa.types.is_fixed_size_list(t):
        return pa.list_(_plain_arrow_type(t.value_type), t.list_size)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_list_view(t):
        return pa.list_(_plain_arrow_type(t.value_type))
    return t


def sql_type_name(value: Any) -> str:
    """The SQL type of a literal's Python value, for messages.

    >>> sql_type_name(True), sql_type_name(3), sql_type_name({"a": 1}), sql_type_name(None)
    ('BOOLEAN', 'BIGINT', 'STRUCT', 'NULL')
    """
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, int):
        return "BIGINT"
    if isinstance(value, float):
        return "DOUBLE"
    if isinstance(value, str):
        return "VARCHAR"
    if isinstance(value, Mapping):
        return "STRUCT"
    if isinstance(value, (list, tuple)):
        return "LIST"
    return "NULL" if value is None else type(value).__name__


def type_struct(function: str, name: str, value: Any) -> pa.Schema:
    """The schema a STRUCT of column name -> type name describes (parameter ``name`` of
    ``function``); ``'BIGINT NOT NULL'`` marks a column every record must have."""
    if not isinstance(value, Mapping) or not value:
        raise sql_error(
            BinderError,
            f"parameter {name} expects a STRUCT of column name -> type name, e.g. "
            f"{name} := {{'label': 'BIGINT', 'emb': 'FLOAT[]'}}; got {sql_type_name(value)} {value!r}",
            function=function,
        )
    return pa.schema([_typed_field(str(column), type_name) for column, type_name in value.items()])


def _typed_field(column: str, type_name: Any) -> pa.Field:
    match = _NOT_NULL.fullmatch(type_name) if isinstance(type_name, str) else None
    if match:
        return pa.field(column, duckdb_type_to_arrow(match.group(1)), nullable=False)
    return pa.field(column, duckdb_type_to_arrow(type_name))
