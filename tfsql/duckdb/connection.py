"""`connect` and `sql`: DuckDB's own connection with tfsql's extension loaded.

`connect` opens (or takes) a ``duckdb.DuckDBPyConnection`` that allows unsigned
extensions and LOADs the extension build the running DuckDB takes
(`tfsql.duckdb.extension.duckdb_extension_path`); nothing else. Every statement then
runs as DuckDB runs it: ``tfrecord_scan`` and ``COPY ... (FORMAT tfrecord)`` are the
extension's, errors are DuckDB's. `sql` runs on one such connection kept for the process.
"""

from __future__ import annotations

import threading
from typing import Any

import duckdb

from tfsql.duckdb.extension import load_extension

__all__ = ["connect", "sql", "default_connection"]


def connect(database: Any = None, **duckdb_kwargs: Any) -> duckdb.DuckDBPyConnection:
    """``duckdb.connect(database, ...)`` with tfsql's DuckDB extension loaded.

    Parameters
    ----------
    database : str, path or duckdb.DuckDBPyConnection, optional
        A database file (default: in memory), or an open connection to load the
        extension into (it must allow unsigned extensions; ``duckdb_kwargs`` must then
        be empty).
    **duckdb_kwargs
        Passed to ``duckdb.connect`` (``read_only``, ``config``...);
        ``allow_unsigned_extensions`` is set in ``config`` unless given.

    Returns
    -------
    duckdb.DuckDBPyConnection
        DuckDB's connection itself: ``tfrecord_scan(...)``, ``read_tfrecord(...)``,
        ``FROM 'x.tfrecord'``, ``COPY ... (FORMAT tfrecord)``, ``tfrecord_metadata``... are
        the extension's, and views over them stored in a database file work in any
        DuckDB that loads it.

    Raises
    ------
    tfsql.duckdb.extension.ExtensionNotAvailable
        When this installation has no build of the extension for this DuckDB.

    Examples
    --------
    >>> import duckdb, tempfile, pyarrow as pa, tfsql
    >>> path = tempfile.mkdtemp()
    >>> _ = tfsql.write_tfrecord(pa.table({"split": ["a", "b", "a"], "x": [1, 2, 3]}), path,
    ...                          partition_by="split")
    >>> con = tfsql.connect()
    >>> isinstance(con, duckdb.DuckDBPyConnection)
    True
    >>> con.sql(f'''SELECT split, sum(x) AS s FROM tfrecord_scan('{path}')
    ...             GROUP BY split ORDER BY split''').fetchall()
    [('a', 4), ('b', 2)]
    """
    if isinstance(database, duckdb.DuckDBPyConnection):
        if duckdb_kwargs:
            raise TypeError("connect() got DuckDB options for an already open connection")
        return load_extension(database)
    config = dict(duckdb_kwargs.pop("config", None) or {})
    config.setdefault("allow_unsigned_extensions", "true")
    con = duckdb.connect(":memory:" if database is None else str(database), config=config, **duckdb_kwargs)
    try:
        return load_extension(con)
    except BaseException:
        con.close()
        raise


_default_lock = threading.Lock()
_default: duckdb.DuckDBPyConnection | None = None


def default_connection() -> duckdb.DuckDBPyConnection:
    """The in-memory connection `sql` runs on (made by `connect` on first use)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = connect()
        return _default


def sql(query: str, *, alias: str = "", params: Any = None) -> Any:
    """``duckdb.sql``, on `default_connection` (which has the extension loaded).

    Examples
    --------
    >>> import tempfile, pyarrow as pa, tfsql
    >>> path = tempfile.mkdtemp()
    >>> _ = tfsql.write_tfrecord(pa.table({"x": [1, 2, 3]}), path)
    >>> tfsql.sql(f"SELECT count(*) FROM tfrecord_scan('{path}')").fetchall()
    [(3,)]
    """
    con = default_connection()
    return con.sql(query, alias=alias, params=params) if alias else con.sql(query, params=params)
