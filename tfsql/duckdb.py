"""DuckDB SQL over TFRecord: ``tfrecord_scan(...)`` and ``COPY ... TO ... (FORMAT tfrecord)``.

`connect` returns a thin wrapper around a normal ``duckdb.DuckDBPyConnection``. When
this installation has tfsql's DuckDB extension (`tfsql.duckdb_extension_path`), the
connection loads it and most ``tfrecord_scan`` calls run as DuckDB's own table function
(see `TFRecordConnection._native_call` for the exceptions). Everything else, and every
call when the extension is absent, goes through a rewrite of the SQL text before DuckDB
sees it:

- every call ``tfrecord_scan(source, name := value, ...)`` (alias ``read_tfrecord``),
  wherever a table function may appear, is replaced by the name of a `tfsql.Dataset`
  registered on the connection. DuckDB scans a registered Dataset with projection and
  filter pushdown, so only the needed features are decoded and partition filters
  prune files. The arguments are literals read from the tokens (strings, numbers,
  true/false, lists, structs, ``?`` parameters, ``getvariable('name')``): nothing in them
  is ever run as SQL, so no statement can be smuggled through them.
- ``COPY (query) TO 'path' (FORMAT tfrecord, ...)`` / ``COPY table TO ...`` / a path
  ending in ``.tfrecord`` (``.gz``) without FORMAT run the query, stream its record
  batches into `tfsql.write_tfrecord` (nothing is materialised) and return the row count
  in a ``Count`` column, as DuckDB's COPY does.

A script is split into statements by DuckDB's own parser before anything is rewritten.
Text in string literals and comments is never touched (DuckDB's own tokenizer finds the
calls); COPY option values are literals too. Everything else (`sql`, `execute`, `table`, `register`, ...) is DuckDB's.

Registered names are ``__tfrecord_scan_<n>``, one per distinct call (same arguments,
same name), kept for the connection's life so views over ``tfrecord_scan`` stay valid.
Each statement that spells out a call re-opens its dataset (files are listed again, as
``read_parquet`` does; the schema is inferred again only when the files changed); a view
queried on its own scans the files listed when a statement last spelled out that call.

Errors. A malformed call or COPY option raises `BinderError` (a
``duckdb.BinderException`` and a ``ValueError``); an option value tfsql rejects raises
`InvalidInputError` (``duckdb.InvalidInputException`` and ``ValueError``); a source
with no files raises `NoFilesError` (``duckdb.IOException`` and
``FileNotFoundError``). All messages start like DuckDB's (``Binder Error: tfrecord_scan:
...``). Data problems (corrupt records, a feature that does not fit the schema) surface
as tfsql's own errors (`tfsql.CorruptRecordError`, `tfsql.SchemaError`) when the
dataset is opened, or as a `ScanDataError` (a ``duckdb.InvalidInputException`` and a
`tfsql.TFSQLError`) naming file, record and byte offset when the scan meets them.
Errors quote the SQL as written, never the rewritten text (see `tfsql.duckdb_errors`).

Examples
--------
>>> import tempfile, pyarrow as pa, tfsql
>>> from tfsql.duckdb import connect
>>> path = tempfile.mkdtemp() + "/t"
>>> _ = tfsql.write_tfrecord(pa.table({"label": [1, 0, 1], "x": [0.5, 1.5, 2.5]}), path)
>>> con = connect()
>>> con.sql(f"SELECT label, count(*) AS n FROM tfrecord_scan('{path}') GROUP BY ALL ORDER BY label").fetchall()
[(0, 1), (1, 2)]
>>> con.sql(f"COPY (SELECT * FROM tfrecord_scan('{path}') WHERE label = 1) TO '{path}-ones.tfrecord'").fetchall()
[(2,)]
>>> con.sql(f"SELECT x FROM read_tfrecord('{path}-ones.tfrecord') ORDER BY x").fetchall()
[(0.5,), (2.5,)]
"""

from __future__ import annotations

import itertools
import os
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

try:
    import duckdb
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("tfsql.duckdb needs DuckDB: pip install 'duckdb>=1.4'") from exc
import pyarrow as pa

from tfsql import _sql_rewrite as rewrite
from tfsql._sql_args import LiteralError, LiteralReader, string_literal
from tfsql._copy import (
    TFRECORD_SUFFIXES,
    CopyOptionError,
    CopyPlan,
    is_tfrecord_copy,
    parse_copy_to,
    write_copy,
)
from tfsql.duckdb_errors import (
    BinderError,
    InvalidInputError,
    NoFilesError,
    ErrorContext,
    ScanDataError,
    TargetExistsError,
    reader_of,
    sql_error,
    translating_reader,
)
import tfsql

__all__ = ["connect", "sql", "TFRecordConnection", "TABLE_FUNCTIONS", "SCAN_PARAMETERS",
           "BinderError", "InvalidInputError", "NoFilesError", "TargetExistsError", "ScanDataError",
           "duckdb_type_to_arrow"]

TABLE_FUNCTIONS = ("tfrecord_scan", "read_tfrecord")
"""The table function names the SQL front end understands."""

COPY_BATCH_ROWS = 131_072
"""Rows per record batch pulled from DuckDB by ``COPY ... (FORMAT tfrecord)``."""

SCAN_PARAMETERS: dict[str, str] = {
    "hive_partitioning": "BOOLEAN",
    "hive_types": "STRUCT",
    "filename": "BOOLEAN or VARCHAR",
    "schema": "STRUCT",
    "columns": "STRUCT",
    "record_type": "VARCHAR",
    "compression": "VARCHAR",
    "verify_checksums": "BOOLEAN",
    "on_corrupt": "VARCHAR",
    "ignore_errors": "BOOLEAN",
    "infer_sample": "BIGINT",
    "sample_size": "BIGINT",
    "infer_files": "BIGINT",
    "lists": "VARCHAR",
    "union_by_name": "BOOLEAN",
    "glob": "BOOLEAN",
    "batch_size": "BIGINT",
    "threads": "BIGINT",
}
"""Named parameters of ``tfrecord_scan`` and their DuckDB types (see `_dataset_options`)."""

NATIVE_SCAN_PARAMETERS = frozenset(SCAN_PARAMETERS) - {"schema", "columns", "hive_types"}
"""The named parameters the DuckDB extension's ``tfrecord_scan`` implements (calls with
others run through the Arrow path inside `connect`)."""


# --------------------------------------------------------------------------------------
# Type names
# --------------------------------------------------------------------------------------

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
        raise sql_error(BinderError, f"a column type must be a VARCHAR such as 'BIGINT' or 'FLOAT[]', "
                                     f"got {type_name!r}", function="tfrecord_scan")
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
                duckdb.ConstantExpression(None).cast(sql_type).alias("c"))
            arrow_type = _to_arrow_table(relation).schema.field(0).type
        except duckdb.Error:
            arrow_type = None
        if arrow_type is None:
            try:
                arrow_type = pa.type_for_alias(key)
            except ValueError:
                raise sql_error(
                    BinderError, f"unknown column type {type_name!r}; use a DuckDB type such as 'BIGINT', "
                                 f"'DOUBLE', 'VARCHAR', 'BLOB', 'FLOAT[]' or 'BIGINT[128]'",
                    function="tfrecord_scan") from None
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


def _to_arrow_table(relation: Any) -> pa.Table:
    method = getattr(relation, "to_arrow_table", None) or relation.fetch_arrow_table
    return method()


def _arrow_reader(relation: Any, rows: int) -> pa.RecordBatchReader:
    """A streaming reader over a relation (``to_arrow_reader`` on DuckDB 2.x,
    ``fetch_arrow_reader`` on 1.4) whose errors are DuckDB's exceptions again (see
    `tfsql.duckdb_errors.translating_reader`)."""
    return translating_reader(reader_of(relation, rows))


# --------------------------------------------------------------------------------------
# tfrecord_scan arguments -> dataset options
# --------------------------------------------------------------------------------------


def _sql_type_name(value: Any) -> str:
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


def _expect(function: str, name: str, value: Any, *kinds: type) -> Any:
    if isinstance(value, kinds) and not (bool not in kinds and isinstance(value, bool)):
        return value
    raise sql_error(BinderError, f"parameter {name} expects {SCAN_PARAMETERS[name]}, got "
                                 f"{_sql_type_name(value)} {value!r}", function=function)


def _type_struct(function: str, name: str, value: Any) -> pa.Schema:
    if not isinstance(value, Mapping) or not value:
        raise sql_error(
            BinderError, f"parameter {name} expects a STRUCT of column name -> type name, e.g. "
                         f"{name} := {{'label': 'BIGINT', 'emb': 'FLOAT[]'}}; got {_sql_type_name(value)} {value!r}",
            function=function)
    return pa.schema([_typed_field(str(column), type_name) for column, type_name in value.items()])


_NOT_NULL = re.compile(r"(?is)(.*?)\s+NOT\s+NULL\s*")


def _typed_field(column: str, type_name: Any) -> pa.Field:
    """A schema entry: ``'BIGINT'``, or ``'BIGINT NOT NULL'`` for a column that every
    record must have."""
    match = _NOT_NULL.fullmatch(type_name) if isinstance(type_name, str) else None
    if match:
        return pa.field(column, duckdb_type_to_arrow(match.group(1)), nullable=False)
    return pa.field(column, duckdb_type_to_arrow(type_name))


def _optional_count(function: str, name: str, value: Any) -> int | None:
    _expect(function, name, value, int)
    return None if value < 0 else value


def _dataset_options(function: str, named: Mapping[str, Any]) -> dict[str, Any]:
    """Map ``tfrecord_scan`` named parameters (already evaluated) to `tfsql.dataset` options.

    ``filename := true`` adds a ``filename`` column (``filename := 'path'`` names it),
    as ``read_parquet`` does; ``schema``/``columns`` and ``hive_types`` take a STRUCT
    of name -> DuckDB type name; ``ignore_errors := true`` is ``on_corrupt := 'skip'``;
    ``sample_size`` is ``infer_sample`` (-1: all records); ``union_by_name`` is accepted
    and always on (features are matched by name across files); ``compression := 'auto'``
    detects per file.
    """
    options: dict[str, Any] = {}
    for name, value in named.items():
        if name in ("hive_partitioning", "verify_checksums", "glob"):
            options[name] = _expect(function, name, value, bool)
        elif name == "union_by_name":
            _expect(function, name, value, bool)
        elif name == "ignore_errors":
            if _expect(function, name, value, bool):
                options["on_corrupt"] = "skip"
        elif name in ("schema", "columns"):
            if "schema" in options:
                raise sql_error(BinderError, "give either schema or columns, not both", function=function)
            options["schema"] = _type_struct(function, name, value)
        elif name == "hive_types":
            options["hive_schema"] = _type_struct(function, name, value)
        elif name == "filename":
            if isinstance(value, bool):
                if value:
                    options["include_file_paths"] = "filename"
            else:
                options["include_file_paths"] = _expect(function, name, value, str)
        elif name == "compression":
            text = _expect(function, name, value, str).lower()
            options[name] = {"auto": "infer", "none": None, "uncompressed": None}.get(text, text)
        elif name in ("record_type", "on_corrupt", "lists"):
            options[name] = _expect(function, name, value, str)
        elif name in ("infer_sample", "sample_size"):
            options["infer_sample"] = _optional_count(function, name, value)
        elif name == "infer_files":
            options[name] = _optional_count(function, name, value)
        elif name in ("batch_size", "threads"):
            options[name] = _expect(function, name, value, int)
        else:  # pragma: no cover - names are checked against SCAN_PARAMETERS first
            raise AssertionError(name)
    return options


def _open_dataset(function: str, source: Any, options: dict[str, Any],
                  previous: tuple[tfsql.Dataset, tuple | None] | None = None
                  ) -> tuple[tfsql.Dataset, tuple | None]:
    """Open the dataset of a call, with its files' fingerprint.

    Given the dataset and fingerprint the same call opened before, schema inference is
    skipped when the files (local paths, sizes, modification times) are unchanged; any
    change infers again.
    """
    try:
        if previous is not None and previous[1] is not None and "schema" not in options:
            quick = tfsql.dataset(source, schema=previous[0].data_schema, **options)
            if _fingerprint(quick.files) == previous[1]:
                return _with_a_column(source, options, quick), previous[1]
        data = tfsql.dataset(source, **options)
    except FileNotFoundError as err:
        raise sql_error(NoFilesError, str(err), function=function) from err
    except (ValueError, TypeError) as err:
        raise sql_error(InvalidInputError, str(err), function=function) from err
    data = _with_a_column(source, options, data)
    _check_has_columns(function, source, data)
    return data, _fingerprint(data.files)


def _with_a_column(source: Any, options: dict[str, Any], data: tfsql.Dataset) -> tfsql.Dataset:
    """DuckDB scans no table without columns: records holding no features (inference has
    already warned how to read them) get the ``filename`` column, so ``count(*)`` works."""
    if len(data.schema) or not data.files or "include_file_paths" in options:
        return data
    return tfsql.dataset(source, **{**options, "schema": data.data_schema, "include_file_paths": "filename"})


def _check_has_columns(function: str, source: Any, data: tfsql.Dataset) -> None:
    """DuckDB cannot scan a table without columns; only a source without files has none
    left after :func:`_with_a_column`: say so."""
    if len(data.schema):
        return
    raise sql_error(NoFilesError, f"no files found in {source!r} (hidden files such as _SUCCESS are "
                                  f"skipped)", function=function)


def _fingerprint(files: Sequence[str]) -> tuple | None:
    """(path, size, mtime) of local files; None when a file is remote or gone."""
    entries = []
    for path in files:
        if "://" in path and not path.startswith("file://"):
            return None
        try:
            stat = os.stat(path.removeprefix("file://"))
        except OSError:
            return None
        entries.append((path, stat.st_size, stat.st_mtime_ns))
    return tuple(entries)


# --------------------------------------------------------------------------------------
# The connection
# --------------------------------------------------------------------------------------


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
        #: supports run as DuckDB's own table function (see `_native_call`).
        self.native = native
        self._lock = threading.RLock()
        self._names: dict[tuple, str] = {}  # normalised call -> registered name
        self._datasets: dict[str, tfsql.Dataset] = {}  # registered name -> dataset (kept alive)
        self._opened: dict[tuple, tuple] = {}  # normalised call -> (dataset, files fingerprint)
        self._counter = itertools.count(1)
        self._calls: dict[str, str] = {}  # registered name -> the call's SQL text (for messages)
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
        if name.startswith("__") or name in ("_con", "_last_context"):
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
        with self._lock:
            self._datasets.clear()
            self._names.clear()
            self._opened.clear()
        self._con.close()

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
        _check_has_columns("register_tfrecord", source, data)
        with self._lock:
            self._con.register(name, data)
            self._datasets[name] = data
        return self

    def unregister(self, name: str) -> TFRecordConnection:
        """DuckDB's ``unregister``, also forgetting a dataset registered here."""
        with self._lock:
            self._con.unregister(name)
            self._datasets.pop(name, None)
            for key in [k for k, v in self._names.items() if v == name]:
                del self._names[key]
                self._opened.pop(key, None)
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
            self._con.execute(*self._count_query(rows, files))

        self._run(query, parameters, run, count)
        return self

    def executemany(self, query: Any, parameters: Any = None) -> TFRecordConnection:
        """DuckDB's ``executemany`` after rewriting ``tfrecord_scan`` calls (no COPY)."""
        if isinstance(query, str) and _mentions_tfrecord(query):
            query, _, _ = self._rewrite_scans(query, rewrite.tokenize(query), None)
        if parameters is None:
            self._con.executemany(query)
        else:
            self._con.executemany(query, parameters)
        return self

    # -- the rewrite --------------------------------------------------------------------

    def _run(self, query: Any, params: Any, run, count) -> Any:
        if not isinstance(query, str) or not _mentions_tfrecord(query):
            self._last_context = None
            return run(query, params)
        statements = rewrite.split_statements(query)
        result = None
        for number, text in enumerate(statements):
            last = number == len(statements) - 1
            result = self._run_statement(text, params if last else None, run, count)
        return result

    def _run_statement(self, text: str, params: Any, run, count, *, native: bool = True) -> Any:
        tokens = rewrite.tokenize(text)
        given = params
        rewritten, params, spans = self._rewrite_scans(text, tokens, params, native=native)
        context = ErrorContext(text, rewritten, spans, self._calls)
        tokens = rewrite.tokenize(rewritten)
        try:
            statement = parse_copy_to(rewritten, tokens)
        except CopyOptionError as err:
            statement = None
            if _looks_like_tfrecord_copy(rewritten, tokens):
                raise sql_error(BinderError, str(err)) from err
        if statement is not None:
            try:
                path = string_literal(statement.path_sql)
            except LiteralError as err:
                raise sql_error(BinderError, f"COPY ... TO: {err}") from None
            if is_tfrecord_copy(statement, path):
                with context.translating():
                    rows, files = self._copy_to_tfrecord(statement, path, params)
                self._last_context = None
                return count(rows, files)
        try:
            with context.translating():
                result = run(rewritten, params)
        except duckdb.BinderException as err:
            if native and self.native and _arrow_path_binds(err):
                return self._run_statement(text, given, run, count, native=False)
            raise
        self._last_context = context
        return context.wrap(result)

    def _rewrite_scans(self, text: str, tokens: list[rewrite.Token], params: Any, *, native: bool = True
                       ) -> tuple[str, Any, list[tuple[int, int, int]]]:
        """Replace each tfrecord_scan call by a registered dataset's name (except the calls
        the extension runs, when ``native``); drop the ``?`` parameters its arguments
        consumed. Also returns the replaced spans as ``(start, end, new length)``."""
        try:
            calls = rewrite.find_calls(text, tokens, TABLE_FUNCTIONS)
        except ValueError as err:
            raise sql_error(duckdb.ParserException, str(err)) from err
        if self.native and native:
            calls = [call for call in calls if not self._native_call(call, tokens, params)]
        if not calls:
            return text, params, []
        # A new statement ends any unfinished result of execute(), as DuckDB's own
        # statements do; registering a dataset would otherwise be refused (DuckDB 2.x).
        self._con.execute("SELECT NULL").fetchall()
        question_marks = [t.start for t in tokens if t.is_op("?")]
        consumed: set[int] = set()
        replacements = []
        for call in calls:
            inside = [k for k, start in enumerate(question_marks) if call.start < start < call.end]
            if any(t.kind != "string_const" and t.text.startswith("$")
                   for t in tokens if call.start < t.start < call.end):
                raise sql_error(BinderError, "$-parameters are not supported in its arguments; use ? or "
                                             "a literal", function=call.name)
            values: list = []
            if inside:
                if not isinstance(params, Sequence) or isinstance(params, str) or len(params) <= max(inside):
                    raise sql_error(InvalidInputError, "its arguments use ? parameters but not enough "
                                                       "values were passed", function=call.name)
                values = [params[k] for k in inside]
                consumed.update(inside)
            name = self._register_call(call, tokens, values)
            with self._lock:
                self._calls[name] = text[call.start:call.end]
            replacement = name if call.has_alias or not call.in_from else f"{name} AS {call.name}"
            replacements.append((call.start, call.end, replacement))
        if consumed:
            params = [value for k, value in enumerate(params) if k not in consumed]
        spans = [(start, end, len(new)) for start, end, new in sorted(replacements)]
        return rewrite.substitute(text, replacements), params, spans

    def _native_call(self, call: rewrite.Call, tokens: list[rewrite.Token], params: Any) -> bool:
        """Whether the extension's ``tfrecord_scan`` runs this call (the SQL text is left
        as written): always, except for options only the Arrow path has, and for a
        statement with WHERE (not a CREATE) over hive-partitioned files or a TFDS / TFX
        layout, where the Arrow path's partition pruning opens only the matching
        directories or splits (DuckDB's C API has no filter pushdown)."""
        if not call.in_from:
            return False  # e.g. ``DESCRIBE tfrecord_scan(...)``, which DuckDB cannot parse
        if [arg.name for arg in call.args[:1]] != [None] or sum(arg.name is None for arg in call.args) != 1:
            return False  # the Arrow path explains what the call lacks
        for arg in call.args:
            if arg.name is None:
                continue
            if arg.name not in NATIVE_SCAN_PARAMETERS:
                return False
            spelled = tokens[arg.first_token - 1].text.strip() if arg.first_token > 0 else ""
            if spelled != ":=" and not (spelled == "=" and not any(c in arg.text for c in "<>=!")):
                return False  # DuckDB's parser reads ``name = a < b`` differently
        # Inside connect() every argument is a literal on either path: a call whose
        # arguments the literal reader refuses takes the Arrow path, which reports it.
        reader = LiteralReader(tokens, params or (), self._variable)
        values: dict[str | None, Any] = {}
        for arg in call.args:
            try:
                values[arg.name] = reader.value(arg.first_token, arg.stop_token)
            except LiteralError:
                return False
        partitioned, layout = _source_shape(values[None])
        if tokens and tokens[0].is_word("create"):
            return True
        if not any(t.is_word("where") for t in tokens):
            return True
        if layout:
            return False  # the Arrow path prunes the files of a TFDS / TFX split like a partition
        if values.get("hive_partitioning") is False:
            return True
        return not partitioned

    def _register_call(self, call: rewrite.Call, tokens: list[rewrite.Token], params: list) -> str:
        positional = [arg for arg in call.args if arg.name is None]
        named = [arg for arg in call.args if arg.name is not None]
        if not positional:
            raise sql_error(BinderError, f"expected a source as the first argument, e.g. "
                                         f"{call.name}('data/*.tfrecord') or {call.name}(['a.tfrecord', "
                                         f"'b.tfrecord'])", function=call.name)
        if len(positional) > 1 or call.args[0].name is not None:
            raise sql_error(BinderError, f"takes one positional argument (the source, a path, glob or list "
                                         f"of them); pass options by name: {call.name}('data/*', "
                                         f"hive_partitioning := true)", function=call.name)
        seen = set()
        for arg in named:
            if arg.name not in SCAN_PARAMETERS:
                candidates = "\n".join(f"    {n} {t}" for n, t in SCAN_PARAMETERS.items())
                raise sql_error(BinderError, f'Invalid named parameter "{arg.name}" for function '
                                             f"{call.name}\nCandidates:\n{candidates}")
            if arg.name in seen:
                raise sql_error(BinderError, f'named parameter "{arg.name}" given twice', function=call.name)
            seen.add(arg.name)
        reader = LiteralReader(tokens, params, self._variable)
        values = []
        for arg in positional + named:
            try:
                values.append(reader.value(arg.first_token, arg.stop_token))
            except LiteralError as err:
                what = "the source" if arg.name is None else f"parameter {arg.name}"
                raise sql_error(BinderError, f"{what}: {err}", function=call.name) from None
        source = values[0]
        if not (isinstance(source, str) or (isinstance(source, list) and source
                                            and all(isinstance(s, str) for s in source))):
            raise sql_error(BinderError, f"the source must be a VARCHAR path or glob, or a VARCHAR[] of "
                                         f"them; got {_sql_type_name(source)} {source!r}", function=call.name)
        named_values: dict[str, Any] = {arg.name: value for arg, value in zip(named, values[1:])}  # type: ignore[misc]  # named: name is set
        options = _dataset_options(call.name, named_values)
        key = (repr(source), tuple(sorted((k, repr(v)) for k, v in options.items())))
        with self._lock:
            previous = self._opened.get(key)
        data, fingerprint = _open_dataset(call.name, source, options, previous)
        with self._lock:
            name = self._names.get(key)
            if name is None:
                name = f"__tfrecord_scan_{next(self._counter)}"
                self._names[key] = name
            self._con.register(name, data)
            self._datasets[name] = data
            self._opened[key] = (data, fingerprint)
        return name

    def _variable(self, name: str) -> Any:
        """The value of DuckDB variable ``name`` (``getvariable('name')`` in an argument),
        read with a bound parameter."""
        return self._con.execute("SELECT getvariable(?)", [name]).fetchall()[0][0]

    # -- COPY ---------------------------------------------------------------------------

    def _copy_to_tfrecord(self, statement, path: str, params: Any) -> tuple[int, list[str] | None]:
        try:
            plan = CopyPlan.from_options(path, statement.options)
        except CopyOptionError as err:
            raise sql_error(BinderError, str(err)) from err
        relation = self._con.sql(statement.query, params=params) if params else self._con.sql(statement.query)
        if relation is None:
            raise sql_error(BinderError, "the query returns no rows to write (it is not a SELECT)",
                            function="COPY ... (FORMAT tfrecord)")
        # The stream must be drained before any other statement runs on this connection
        # (DuckDB 1.4 would silently truncate it, 2.x raises).
        reader = _arrow_reader(relation, COPY_BATCH_ROWS)
        try:
            result = write_copy(_reporting(reader, self.copy_progress), plan)
        except FileExistsError as err:
            raise sql_error(TargetExistsError, f"{err}. In SQL: add OVERWRITE, OVERWRITE_OR_IGNORE or "
                                               f"APPEND to the COPY options", function=f"COPY ... TO {path!r}") from err
        finally:
            reader.close()
        return result.rows, (result.paths if plan.return_files else None)

    @staticmethod
    def _count_query(rows: int, files: list[str] | None) -> tuple[str, list]:
        if files is None:
            return 'SELECT CAST(? AS BIGINT) AS "Count"', [rows]
        return 'SELECT CAST(? AS BIGINT) AS "Count", CAST(? AS VARCHAR[]) AS "Files"', [rows, files]

    def _count_relation(self, rows: int, files: list[str] | None) -> Any:
        query, values = self._count_query(rows, files)
        return self._con.sql(query, params=values)


def _reporting(reader: pa.RecordBatchReader, progress: Callable[[int], None] | None) -> pa.RecordBatchReader:
    """``reader``, calling ``progress(rows)`` as each batch passes (when given)."""
    if progress is None:
        return reader

    def batches():
        for batch in reader:
            progress(batch.num_rows)
            yield batch

    return pa.RecordBatchReader.from_batches(reader.schema, batches())


#: Binder errors of the extension's tfrecord_scan that the Arrow path handles (it names
#: the source, renames same-name feature lists, reads what inference cannot type).
_ARROW_PATH_BINDS = ("is both a context feature and a feature list", "this needs tfsql.connect()",
                     "run the query through tfsql.connect()", "no files found")


def _arrow_path_binds(err: Exception) -> bool:
    """Whether a statement the extension failed to bind runs again through the Arrow path."""
    return any(text in str(err) for text in _ARROW_PATH_BINDS)


def _source_shape(source: Any) -> tuple[bool, bool]:
    """Whether ``source`` (a path, glob or list of them) holds ``key=value`` directories,
    and whether its files form a TFDS or TFX layout (`tfsql.layouts`)."""
    from tfsql.discovery import discover
    from tfsql.layouts import detect_layout

    items = list(source) if isinstance(source, (list, tuple)) else [source]
    if not all(isinstance(item, str) for item in items):
        return False, False
    try:
        found, layout = detect_layout(discover(items))
    except (OSError, ValueError, TypeError):
        return False, False
    return any("=" in (f.relative_dir() or "") for f in found.files), layout is not None


def _mentions_tfrecord(query: str) -> bool:
    lowered = query.lower()
    return "tfrecord" in lowered


def _looks_like_tfrecord_copy(text: str, tokens: list[rewrite.Token]) -> bool:
    """A COPY statement naming ``FORMAT tfrecord`` or a ``.tfrecord[.gz]`` target."""
    if not tokens or not tokens[0].is_word("copy"):
        return False
    for i, token in enumerate(tokens):
        if token.is_word("format") and i + 1 < len(tokens) \
                and tokens[i + 1].text.strip("'\"").lower() in ("tfrecord", "tfrecords"):
            return True
        if token.kind == "string_const" and token.text.strip("'").lower().endswith(TFRECORD_SUFFIXES):
            return True
    return False


# --------------------------------------------------------------------------------------
# Entry points
# --------------------------------------------------------------------------------------


def connect(database_or_connection: Any = None, *, extension: bool | None = None,
            **duckdb_kwargs: Any) -> TFRecordConnection:
    """A DuckDB connection that understands ``tfrecord_scan(...)`` and ``COPY ... (FORMAT tfrecord)``.

    A connection it opens allows unsigned extensions and loads tfsql's DuckDB extension
    (when this installation has it: see `tfsql.duckdb_extension_path`), so
    ``tfrecord_scan``, ``read_tfrecord`` and ``FROM 'x.tfrecord'`` are DuckDB table
    functions there, and views over them stored in the database file work in any
    connection that loads the extension. Calls with ``schema``/``columns``/``hive_types``
    and filtered scans of hive-partitioned files use the Arrow path described above.

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
    from tfsql._extension import extension_available, load_extension

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
