"""DuckDB type names as Arrow types: ``'BIGINT'``, ``'FLOAT[]'``, ``'BIGINT[128]'``...

The ``tfsql`` command's ``--schema`` names column types the way DuckDB does; DuckDB
itself resolves each name (on a private in-memory connection, never as SQL text), and
the result is reduced to the plain Arrow types tfsql decodes into.

Examples
--------
>>> duckdb_type_to_arrow("BIGINT"), duckdb_type_to_arrow("BLOB")
(DataType(int64), DataType(binary))
"""

from __future__ import annotations

import threading
from typing import Any

import duckdb
import pyarrow as pa

from tfsql.duckdb.results import arrow_table

__all__ = ["duckdb_type_to_arrow"]

_types_lock = threading.Lock()
_types_connection: Any = None
_type_cache: dict[str, pa.DataType] = {}


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
        raise ValueError(f"a column type must be a VARCHAR such as 'BIGINT' or 'FLOAT[]', got {type_name!r}")
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
                raise ValueError(
                    f"unknown column type {type_name!r}; use a DuckDB type such as 'BIGINT', "
                    f"'DOUBLE', 'VARCHAR', 'BLOB', 'FLOAT[]' or 'BIGINT[128]'"
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
