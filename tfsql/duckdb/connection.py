"""The connection of the DuckDB front end: DuckDB's, with ``tfrecord_scan`` and COPY to TFRecord.

`TFRecordConnection` delegates everything to a ``duckdb.DuckDBPyConnection``; `sql`,
`query`, `execute` and `executemany` first split a script into statements
(`tfsql.duckdb.rewrite.split_statements`), hand each statement's ``tfrecord_scan``
calls to `tfsql.duckdb.scan_calls` (the extension runs them, or they are replaced by
registered datasets), run ``COPY ... (FORMAT tfrecord)`` through `tfsql.duckdb.copy`,
and translate errors to name the SQL as written (`tfsql.duckdb.errors`). `connect`
opens one (loading the extension when available), `sql` runs on DuckDB's default
connection.
"""

from __future__ import annotations

import threading
from functools import partial
from collections.abc import Callable
from typing import Any

import duckdb

import tfsql
from tfsql.duckdb import rewrite
from tfsql.duckdb.arguments import LiteralError, string_literal
from tfsql.duckdb.copy_from import CopyFrom, copy_from_parts, utf8_select
from tfsql.duckdb.copy import (
    CopyOptionError,
    copy_to_tfrecord,
    count_query,
    is_tfrecord_copy,
    looks_like_tfrecord_copy,
    parse_copy_to,
)
from tfsql.duckdb.errors import BinderError, ErrorContext, sql_error
from tfsql.duckdb.native_reports import last_error as last_native_error
from tfsql.duckdb.scan_calls import ScanCalls, check_has_columns

__all__ = ["TFRecordConnection", "connect", "sql", "default_connection"]


class TFRecordConnection:
    """A DuckDB connection that understands ``tfrecord_scan`` and ``COPY ... (FORMAT tfrecord)``.

    Made by `connect`. `sql`, `query` and `execute` rewrite the statement first;
    every other attribute is the wrapped ``duckdb.DuckDBPyConnection``'s (available as
    `duckdb_connection` for APIs that need the real object).

    Examples
    --------
    >>> import tempfile, pyarrow as pa, tfsql
    >>> from tfsql.duckdb import connect
    >>> path = tempfile.mkdtemp() + "/t"
    >>> _ = tfsql.write_tfrecord(pa.table({"id": [1, 2, 3]}), path)
    >>> with connect() as con:
    ...     _ = con.register_tfrecord("ids", path)
    ...     con.execute("SELECT sum(id) FROM ids WHERE id > ?", [1]).fetchall()
    [(5,)]
    """

    def __init__(self, connection: duckdb.DuckDBPyConnection, *, native: bool = False) -> None:
        self._con = connection
        #: True when tfsql's DuckDB extension is loaded here: ``tfrecord_scan`` calls it
        #: supports run as DuckDB's own table function (see `tfsql.duckdb.scan_calls.native_route`).
        self.native = native
        self._scans = ScanCalls(connection, native=native)
        self._last_context: ErrorContext | None = None  # of the last statement run by execute/sql
        #: Called with the row count of each batch a ``COPY ... (FORMAT tfrecord)``
        #: streams into the writer (the ``tfsql`` command draws its progress bar with it).
        self.copy_progress: Callable[[int], None] | None = None

    # -- delegation ---------------------------------------------------------------------

    @property
    def duckdb_connection(self) -> duckdb.DuckDBPyConnection:
        """The wrapped DuckDB connection."""
        return self._con

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_con", "_last_context", "_scans"):
            raise AttributeError(name)
        attribute = getattr(self._con, name)
        context = self._last_context
        if context is not None and name.startswith("fetch"):  # the result of execute()
            return context.function(attribute, name)
        return attribute

    def __enter__(self) -> TFRecordConnection:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<tfsql.duckdb.TFRecordConnection over {self._con!r}>"

    def close(self) -> None:
        """Close the DuckDB connection and drop the registered datasets."""
        self._scans.clear()
        self._con.close()

    def interrupt(self) -> None:
        """Interrupt the running query, as DuckDB's ``interrupt`` does, and stop the
        tfsql scans feeding it at their next read (DuckDB itself stops a query only
        between the batches a scan delivers)."""
        self._scans.interrupts.interrupt()
        self._con.interrupt()

    def cursor(self) -> TFRecordConnection:
        """A new connection to the same database, also understanding ``tfrecord_scan``."""
        return TFRecordConnection(self._con.cursor(), native=self.native)

    # -- registration -------------------------------------------------------------------

    def register_tfrecord(self, name: str, source: Any, **options: Any) -> TFRecordConnection:
        """Register TFRecord files as a view ``name`` (see `tfsql.dataset` for ``options``).

        DuckDB scans the dataset with projection and filter pushdown.

        Examples
        --------
        >>> import tempfile, pyarrow as pa, tfsql
        >>> from tfsql.duckdb import connect
        >>> path = tempfile.mkdtemp()
        >>> _ = tfsql.write_tfrecord(pa.table({"x": [1, 2]}), path)
        >>> con = connect().register_tfrecord("t", path)
        >>> con.sql("SELECT max(x) FROM t").fetchall()
        [(2,)]
        """
        data = options.pop("dataset", None) or tfsql.dataset(source, **options)
        check_has_columns("register_tfrecord", source, data)
        self._scans.register(name, data)
        return self

    def unregister(self, name: str) -> TFRecordConnection:
        """DuckDB's ``unregister``, also forgetting a dataset registered here."""
        self._con.unregister(name)
        self._scans.forget(name)
        return self

    # -- statements ---------------------------------------------------------------------

    def sql(self, query: Any, *, alias: str = "", params: Any = None) -> Any:
        """DuckDB's ``sql`` (a relation, or None), after the tfsql rewrite.

        Examples
        --------
        >>> from tfsql.duckdb import connect
        >>> con = connect()
        >>> con.sql("SELECT 'tfrecord_scan(' AS s").fetchall()
        [('tfrecord_scan(',)]
        """

        def run(text: str, values: Any) -> Any:
            if alias:
                return self._con.sql(text, alias=alias, params=values)
            return self._con.sql(text, params=values)

        return self._run(query, params, run, self._count_relation)

    def query(self, query: Any, *, alias: str = "", params: Any = None) -> Any:
        """Same as `sql`."""
        return self.sql(query, alias=alias, params=params)

    def execute(self, query: Any, parameters: Any = None) -> TFRecordConnection:
        """DuckDB's ``execute`` after the tfsql rewrite; returns this connection (fetch
        the result with ``fetchall()``, ``fetchone()``, ``fetchdf()``...)."""

        def run(text: str, values: Any) -> None:
            if values is None:
                self._con.execute(text)
            else:
                self._con.execute(text, values)

        def count(rows: int, files: list[str] | None) -> None:
            self._con.execute(*count_query(rows, files))

        self._run(query, parameters, run, count, replaces_open_result=True)
        return self

    def executemany(self, query: Any, parameters: Any = None) -> TFRecordConnection:
        """DuckDB's ``executemany`` after rewriting ``tfrecord_scan`` calls (no COPY)."""
        if isinstance(query, str) and _mentions_tfrecord(query):
            query, _, _ = self._scans.rewrite(query, rewrite.tokenize(query), None)
        if parameters is None:
            self._con.executemany(query)
        else:
            self._con.executemany(query, parameters)
        return self

    # -- the rewrite --------------------------------------------------------------------

    def _run(self, query: Any, params: Any, run, count, *, replaces_open_result: bool = False) -> Any:
        if not isinstance(query, str) or not _mentions_tfrecord(query):
            self._last_context = None
            return run(query, params)
        statements = rewrite.split_statements(query)
        result = None
        for number, text in enumerate(statements):
            last = number == len(statements) - 1
            result = self._run_statement(
                text, params if last else None, run, count, replaces_open_result=replaces_open_result
            )
        return result

    def _run_statement(self, text: str, params: Any, run, count, *, replaces_open_result: bool = False) -> Any:
        tokens = rewrite.tokenize(text)
        try:
            parts = copy_from_parts(text, tokens)
        except CopyOptionError as err:
            raise sql_error(BinderError, str(err)) from err
        if parts is not None:  # COPY t FROM '...' (FORMAT tfrecord): an INSERT of tfrecord_scan
            text = parts.insert(self._utf8_select(parts))
            tokens = rewrite.tokenize(text)
            run = self._inserting(count)
        rewritten, params, spans = self._scans.rewrite(text, tokens, params)
        native_error = partial(last_native_error, self._con) if self._scans.native_calls else None
        context = ErrorContext(text, rewritten, spans, self._scans.calls, self._scans.scan_errors, native_error)
        tokens = rewrite.tokenize(rewritten)
        try:
            statement = parse_copy_to(rewritten, tokens)
        except CopyOptionError as err:
            statement = None
            if looks_like_tfrecord_copy(tokens):
                raise sql_error(BinderError, str(err)) from err
        if statement is not None:
            try:
                path = string_literal(statement.path_sql)
            except LiteralError as err:
                raise sql_error(BinderError, f"COPY ... TO: {err}") from None
            if is_tfrecord_copy(statement, path):
                if replaces_open_result:  # as DuckDB's execute() does before its own COPY
                    _abort_open_result(self._con)
                with context.translating():
                    rows, files = copy_to_tfrecord(self._con, statement, path, params, progress=self.copy_progress)
                self._last_context = None
                return count(rows, files)
        with context.translating():
            result = run(rewritten, params)
        self._last_context = context
        return context.wrap(result)

    def _utf8_select(self, parts: CopyFrom) -> str:
        """The INSERT's select list refusing non-UTF-8 bytes into VARCHAR columns as the
        native COPY ... FROM does (`copy_from.utf8_select`); ``*`` when the table or the
        scan cannot be described (the INSERT then reports why)."""
        try:
            sources = [str(t) for t in self.sql(f"SELECT * FROM {parts.scan} LIMIT 0").types]
            columns = parts.columns.strip()[1:-1] if parts.columns else "*"
            target = self._con.sql(f"SELECT {columns} FROM {parts.table} LIMIT 0")
        except duckdb.Error:
            return "*"
        return utf8_select(sources, list(zip(target.columns, (str(t) for t in target.types))))

    def _inserting(self, count):
        """A `run` for the INSERT a COPY ... FROM became: its result is COPY's ``Count``
        (DuckDB 1.4's ``sql`` gives no relation for an INSERT)."""

        def run(text: str, values: Any) -> Any:
            cursor = self._con.execute(text) if values is None else self._con.execute(text, values)
            return count(cursor.fetchall()[0][0], None)

        return run

    def _count_relation(self, rows: int, files: list[str] | None) -> Any:
        query, values = count_query(rows, files)
        return self._con.sql(query, params=values)


def _abort_open_result(con: duckdb.DuckDBPyConnection) -> None:
    """Drop the result ``execute()`` left open on ``con`` (DuckDB 2.x keeps a query's
    result until it is fetched to its end; 1.4 drops it by itself and has no ``abort``)."""
    abort = getattr(con, "abort", None)
    if abort is not None:
        abort()


#: What every statement tfsql rewrites holds: tfrecord_scan / read_tfrecord, FORMAT
#: tfrecord, and every TFRecord suffix (tfsql.naming.TFRECORD_BASES each start so); a
#: statement without it runs as written, untokenized.
_MARKER = "tfrec"


def _mentions_tfrecord(query: str) -> bool:
    return _MARKER in query.lower()


# --------------------------------------------------------------------------------------
# Entry points
# --------------------------------------------------------------------------------------


def connect(
    database_or_connection: Any = None, *, extension: bool | None = None, **duckdb_kwargs: Any
) -> TFRecordConnection:
    """A DuckDB connection that understands ``tfrecord_scan(...)`` and ``COPY ... (FORMAT tfrecord)``.

    A connection it opens allows unsigned extensions and loads tfsql's DuckDB extension
    (when this installation has it: see `tfsql.duckdb_extension_path`), so
    ``tfrecord_scan``, ``read_tfrecord`` and ``FROM 'x.tfrecord'`` are DuckDB table
    functions there, and views over them stored in the database file work in any
    connection that loads the extension. Calls with an option the extension does not
    implement (``hive_types``...), a ``schema`` type it does not decode, and scans of
    hive-partitioned files in a statement that filters on a partition column use the
    Arrow path described above (see `tfsql.duckdb.scan_calls.native_route`).

    Parameters
    ----------
    database_or_connection : str, path, duckdb.DuckDBPyConnection or TFRecordConnection, optional
        A database file (default: in memory) to open with ``duckdb.connect``, or an open
        connection to wrap (then ``duckdb_kwargs`` must be empty).
    extension : bool, optional
        Load the DuckDB extension (default: when available). False keeps every call on
        the Arrow path; True raises when the extension cannot be loaded.
    **duckdb_kwargs
        Passed to ``duckdb.connect`` (``read_only``, ``config``...).

    Returns
    -------
    TFRecordConnection

    Examples
    --------
    >>> import duckdb, tempfile, pyarrow as pa, tfsql
    >>> from tfsql.duckdb import connect
    >>> path = tempfile.mkdtemp()
    >>> _ = tfsql.write_tfrecord(pa.table({"split": ["a", "b", "a"], "x": [1, 2, 3]}), path,
    ...                          partition_by="split")
    >>> con = connect(duckdb.connect())
    >>> con.sql(f'''SELECT split, sum(x) AS s FROM tfrecord_scan('{path}', hive_partitioning := true)
    ...             GROUP BY split ORDER BY split''').fetchall()
    [('a', 4), ('b', 2)]
    """
    if isinstance(database_or_connection, TFRecordConnection):
        if duckdb_kwargs:
            raise TypeError("connect() got DuckDB options for an already open connection")
        return database_or_connection
    from tfsql.duckdb.extension import extension_available, load_extension

    want = extension_available() if extension is None else extension
    if isinstance(database_or_connection, duckdb.DuckDBPyConnection):
        if duckdb_kwargs:
            raise TypeError("connect() got DuckDB options for an already open connection")
        con = database_or_connection
    else:
        database = ":memory:" if database_or_connection is None else str(database_or_connection)
        if want:
            config = dict(duckdb_kwargs.pop("config", None) or {})
            config.setdefault("allow_unsigned_extensions", "true")
            duckdb_kwargs["config"] = config
        con = duckdb.connect(database, **duckdb_kwargs)
    native = False
    if want:
        try:
            load_extension(con)
            native = True
        except (duckdb.Error, OSError):
            if extension:
                raise
    return TFRecordConnection(con, native=native)


_default_lock = threading.Lock()
_default: TFRecordConnection | None = None


def default_connection() -> TFRecordConnection:
    """The connection `sql` uses: DuckDB's default connection (the one ``duckdb.sql``
    uses), wrapped."""
    global _default
    underlying = duckdb.default_connection()
    with _default_lock:
        if _default is None or _default.duckdb_connection is not underlying:
            _default = TFRecordConnection(underlying)
        return _default


def sql(query: str, *, alias: str = "", params: Any = None) -> Any:
    """Run SQL with ``tfrecord_scan`` / ``COPY ... (FORMAT tfrecord)`` on DuckDB's default connection.

    Examples
    --------
    >>> import tempfile, pyarrow as pa, tfsql
    >>> from tfsql.duckdb import sql
    >>> path = tempfile.mkdtemp()
    >>> _ = tfsql.write_tfrecord(pa.table({"x": [1, 2, 3]}), path)
    >>> sql(f"SELECT count(*) FROM tfrecord_scan('{path}')").fetchall()
    [(3,)]
    """
    return default_connection().sql(query, alias=alias, params=params)
