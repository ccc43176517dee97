"""DuckDB SQL over TFRecord: ``tfrecord_scan(...)`` and ``COPY ... TO ... (FORMAT tfrecord)``.

DuckDB's Python API cannot add a table function or a COPY format, so `connect` returns
a thin wrapper around a normal ``duckdb.DuckDBPyConnection`` that rewrites SQL text
before DuckDB sees it:

- every call ``tfrecord_scan(source, name := value, ...)`` (alias ``read_tfrecord``),
  wherever a table function may appear, is replaced by the name of a `tfsql.Dataset`
  registered on the connection. DuckDB scans a registered Dataset with projection and
  filter pushdown, so only the needed features are decoded and partition filters
  prune files. The arguments are constant expressions that DuckDB itself evaluates.
- ``COPY (query) TO 'path' (FORMAT tfrecord, ...)`` / ``COPY table TO ...`` / a path
  ending in ``.tfrecord`` (``.gz``) without FORMAT run the query, stream its record
  batches into `tfsql.write_tfrecord` (nothing is materialised) and return the row count
  in a ``Count`` column, as DuckDB's COPY does.

Text in string literals and comments is never touched (DuckDB's own tokenizer finds the
calls). Everything else (`sql`, `execute`, `table`, `register`, ...) is DuckDB's.

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
dataset is opened, or as the error DuckDB reports for a failing scan.

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
from tfsql._copy import (
    TFRECORD_SUFFIXES,
    CopyOptionError,
    CopyPlan,
    is_tfrecord_copy,
    parse_copy_to,
    write_copy,
)
import tfsql

__all__ = ["connect", "sql", "TFRecordConnection", "TABLE_FUNCTIONS", "SCAN_PARAMETERS",
           "BinderError", "InvalidInputError", "NoFilesError", "TargetExistsError", "duckdb_type_to_arrow"]

TABLE_FUNCTIONS = ("tfrecord_scan", "read_tfrecord")
"""The table function names the SQL front end understands."""

COPY_BATCH_ROWS = 131_072
"""Rows per record batch pulled from DuckDB by ``COPY ... (FORMAT tfrecord)``."""

SCAN_PARAMETERS = {
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


class BinderError(duckdb.BinderException, ValueError):
    """A ``tfrecord_scan`` call or a ``COPY ... (FORMAT tfrecord)`` option that cannot be
    bound: unknown parameter, wrong type, no source."""


class InvalidInputError(duckdb.InvalidInputException, ValueError):
    """A ``tfrecord_scan`` parameter value that tfsql rejects (an unknown record type...)."""


class NoFilesError(duckdb.IOException, FileNotFoundError):
    """A ``tfrecord_scan`` source matches no file."""


class TargetExistsError(duckdb.IOException, FileExistsError):
    """``COPY ... (FORMAT tfrecord)`` into a directory that holds data, without OVERWRITE,
    OVERWRITE_OR_IGNORE or APPEND."""


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
        raise BinderError(f"Binder Error: tfrecord_scan: a column type must be a VARCHAR such as "
                          f"'BIGINT' or 'FLOAT[]', got {type_name!r}")
    key = type_name.strip()
    with _types_lock:
        if key in _type_cache:
            return _type_cache[key]
        if _types_connection is None:
            _types_connection = duckdb.connect()
        arrow_type = None
        if ";" not in key:
            try:
                relation = _types_connection.sql(f"SELECT CAST(NULL AS {key}) AS c LIMIT 0")
                arrow_type = _to_arrow_table(relation).schema.field(0).type
            except duckdb.Error:
                arrow_type = None
        if arrow_type is None:
            try:
                arrow_type = pa.type_for_alias(key)
            except ValueError:
                raise BinderError(
                    f"Binder Error: tfrecord_scan: unknown column type {type_name!r}; use a DuckDB "
                    f"type such as 'BIGINT', 'DOUBLE', 'VARCHAR', 'BLOB', 'FLOAT[]' or 'BIGINT[128]'"
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


def _to_arrow_table(relation: Any) -> pa.Table:
    method = getattr(relation, "to_arrow_table", None) or relation.fetch_arrow_table
    return method()


def _arrow_reader(relation: Any, rows: int) -> pa.RecordBatchReader:
    """A streaming reader over a relation (``to_arrow_reader`` on DuckDB 2.x,
    ``fetch_arrow_reader`` on 1.4) whose errors are DuckDB's exceptions again (the Arrow
    stream turns them into ``OSError("Invalid Input Error: ...")``)."""
    method = getattr(relation, "to_arrow_reader", None) or relation.fetch_arrow_reader
    reader = method(rows)

    def batches():
        try:
            while True:
                try:
                    batch = reader.read_next_batch()
                except StopIteration:
                    return
                except (OSError, pa.ArrowException) as err:
                    raise _as_duckdb_error(err) from err
                yield batch
        finally:
            reader.close()

    return pa.RecordBatchReader.from_batches(reader.schema, batches())


def _as_duckdb_error(err: Exception) -> Exception:
    """``OSError("Invalid Input Error: boom")`` -> ``duckdb.InvalidInputException(...)``."""
    message = str(err)
    prefix, separator, _ = message.partition(" Error: ")
    if not separator or len(prefix.split()) > 3:
        return err
    name = "".join(word if word.isupper() else word.capitalize() for word in prefix.split()) + "Exception"
    cls = getattr(duckdb, name, None)
    if not (isinstance(cls, type) and issubclass(cls, duckdb.Error)):
        cls = duckdb.Error
    return cls(message)


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
    raise BinderError(
        f"Binder Error: {function}: parameter {name} expects {SCAN_PARAMETERS[name]}, got "
        f"{_sql_type_name(value)} {value!r}"
    )


def _type_struct(function: str, name: str, value: Any) -> pa.Schema:
    if not isinstance(value, Mapping) or not value:
        raise BinderError(
            f"Binder Error: {function}: parameter {name} expects a STRUCT of column name -> type "
            f"name, e.g. {name} := {{'label': 'BIGINT', 'emb': 'FLOAT[]'}}; got "
            f"{_sql_type_name(value)} {value!r}"
        )
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
                raise BinderError(f"Binder Error: {function}: give either schema or columns, not both")
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
        raise NoFilesError(f"IO Error: {function}: {err}") from err
    except (ValueError, TypeError) as err:
        raise InvalidInputError(f"Invalid Input Error: {function}: {err}") from err
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
    """DuckDB cannot scan a table without columns: say why there are none instead."""
    if len(data.schema):
        return
    if not data.files:
        raise NoFilesError(f"IO Error: {function}: no files found in {source!r} (hidden files such as "
                           f"_SUCCESS are skipped)")
    count = len(data.files)
    raise InvalidInputError(
        f"Invalid Input Error: {function}: the {count} file{'' if count == 1 else 's'} of {source!r} "
        f"hold no features to infer columns from (the files are empty, or no record sets a feature); "
        f"pass schema := {{'name': 'TYPE', ...}} to read them")


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

    def __init__(self, connection: duckdb.DuckDBPyConnection) -> None:
        self._con = connection
        self._lock = threading.RLock()
        self._names: dict[tuple, str] = {}  # normalised call -> registered name
        self._datasets: dict[str, tfsql.Dataset] = {}  # registered name -> dataset (kept alive)
        self._opened: dict[tuple, tuple] = {}  # normalised call -> (dataset, files fingerprint)
        self._counter = itertools.count(1)
        #: Called with the row count of each batch a ``COPY ... (FORMAT tfrecord)``
        #: streams into the writer (the ``tfsql`` command draws its progress bar with it).
        self.copy_progress: Callable[[int], None] | None = None

    # -- delegation ---------------------------------------------------------------------

    @property
    def duckdb_connection(self) -> duckdb.DuckDBPyConnection:
        """The wrapped DuckDB connection."""
        return self._con

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "_con":
            raise AttributeError(name)
        return getattr(self._con, name)

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
        return TFRecordConnection(self._con.cursor())

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
            query, _ = self._rewrite_scans(query, rewrite.tokenize(query), None)
        if parameters is None:
            self._con.executemany(query)
        else:
            self._con.executemany(query, parameters)
        return self

    # -- the rewrite --------------------------------------------------------------------

    def _run(self, query: Any, params: Any, run, count) -> Any:
        if not isinstance(query, str) or not _mentions_tfrecord(query):
            return run(query, params)
        tokens = rewrite.tokenize(query)
        statements = rewrite.split_statements(query, tokens)
        if not statements:
            return run(query, params)
        result = None
        for number, (first, stop) in enumerate(statements):
            last = number == len(statements) - 1
            text = query[tokens[first].start:tokens[stop - 1].end].rstrip()
            result = self._run_statement(text, params if last else None, run, count)
        return result

    def _run_statement(self, text: str, params: Any, run, count) -> Any:
        tokens = rewrite.tokenize(text)
        text, params = self._rewrite_scans(text, tokens, params)
        tokens = rewrite.tokenize(text)
        try:
            statement = parse_copy_to(text, tokens)
        except CopyOptionError as err:
            statement = None
            if _looks_like_tfrecord_copy(text, tokens):
                raise BinderError(f"Binder Error: {err}") from err
        if statement is not None:
            path = self._evaluate([statement.path_sql], None, "COPY")[0]
            if not isinstance(path, str):
                raise BinderError(f"Binder Error: COPY ... TO expects a file name (VARCHAR), got {path!r}")
            if is_tfrecord_copy(statement, path):
                rows, files = self._copy_to_tfrecord(statement, path, params)
                return count(rows, files)
        return run(text, params)

    def _rewrite_scans(self, text: str, tokens: list[rewrite.Token], params: Any) -> tuple[str, Any]:
        """Replace each tfrecord_scan call by a registered dataset's name; drop the
        ``?`` parameters its arguments consumed."""
        try:
            calls = rewrite.find_calls(text, tokens, TABLE_FUNCTIONS)
        except ValueError as err:
            raise duckdb.ParserException(f"Parser Error: {err}") from err
        if not calls:
            return text, params
        question_marks = [t.start for t in tokens if t.is_op("?")]
        consumed: set[int] = set()
        replacements = []
        for call in calls:
            inside = [k for k, start in enumerate(question_marks) if call.start < start < call.end]
            if any(t.kind != "string_const" and t.text.startswith("$")
                   for t in tokens if call.start < t.start < call.end):
                raise BinderError(f"Binder Error: {call.name}: $-parameters are not supported in its "
                                  f"arguments; use ? or a constant")
            values = None
            if inside:
                if not isinstance(params, Sequence) or isinstance(params, str) or len(params) <= max(inside):
                    raise InvalidInputError(f"Invalid Input Error: {call.name}: its arguments use ? "
                                            f"parameters but not enough values were passed")
                values = [params[k] for k in inside]
                consumed.update(inside)
            name = self._register_call(call, values)
            replacement = name if call.has_alias or not call.in_from else f"{name} AS {call.name}"
            replacements.append((call.start, call.end, replacement))
        if consumed:
            params = [value for k, value in enumerate(params) if k not in consumed]
        return rewrite.substitute(text, replacements), params

    def _register_call(self, call: rewrite.Call, params: list | None) -> str:
        positional = [arg for arg in call.args if arg.name is None]
        named = [arg for arg in call.args if arg.name is not None]
        if not positional:
            raise BinderError(
                f"Binder Error: {call.name}: expected a source as the first argument, e.g. "
                f"{call.name}('data/*.tfrecord') or {call.name}(['a.tfrecord', 'b.tfrecord'])"
            )
        if len(positional) > 1 or call.args[0].name is not None:
            raise BinderError(
                f"Binder Error: {call.name}: takes one positional argument (the source, a path, "
                f"glob or list of them); pass options by name: {call.name}('data/*', "
                f"hive_partitioning := true)"
            )
        seen = set()
        for arg in named:
            if arg.name not in SCAN_PARAMETERS:
                candidates = "\n".join(f"    {n} {t}" for n, t in SCAN_PARAMETERS.items())
                raise BinderError(f'Binder Error: Invalid named parameter "{arg.name}" for function '
                                  f"{call.name}\nCandidates:\n{candidates}")
            if arg.name in seen:
                raise BinderError(f'Binder Error: {call.name}: named parameter "{arg.name}" given twice')
            seen.add(arg.name)
        values = self._evaluate([a.text for a in positional + named], params, call.name)
        source = values[0]
        if isinstance(source, tuple):
            source = list(source)
        if not (isinstance(source, str) or (isinstance(source, list) and source
                                            and all(isinstance(s, str) for s in source))):
            raise BinderError(f"Binder Error: {call.name}: the source must be a VARCHAR path or glob, "
                              f"or a VARCHAR[] of them; got {_sql_type_name(source)} {source!r}")
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

    def _evaluate(self, expressions: list[str], params: list | None, function: str) -> tuple:
        """Evaluate constant SQL expressions with DuckDB: ``SELECT e1, e2, ...``."""
        select = "SELECT\n" + "\n,\n".join(expressions) + "\n"
        try:
            if params:
                row = self._con.execute(select, params).fetchall()[0]
            else:
                row = self._con.execute(select).fetchall()[0]
        except duckdb.Error as err:
            prefix, _, message = str(err).split("\n", 1)[0].rpartition(" Error: ")
            raise type(err)(f"{prefix + ' Error: ' if prefix else ''}{function}: its arguments must be "
                            f"constant expressions: {message}") from err
        return tuple(row)

    # -- COPY ---------------------------------------------------------------------------

    def _copy_to_tfrecord(self, statement, path: str, params: Any) -> tuple[int, list[str] | None]:
        try:
            plan = CopyPlan.from_options(
                path, statement.options,
                lambda expression: self._evaluate([expression], None, "COPY")[0])
        except CopyOptionError as err:
            raise BinderError(f"Binder Error: {err}") from err
        relation = self._con.sql(statement.query, params=params) if params else self._con.sql(statement.query)
        if relation is None:
            raise BinderError("Binder Error: COPY ... (FORMAT tfrecord): the query returns no rows "
                              "to write (it is not a SELECT)")
        # The stream must be drained before any other statement runs on this connection
        # (DuckDB 1.4 would silently truncate it, 2.x raises).
        reader = _arrow_reader(relation, COPY_BATCH_ROWS)
        try:
            result = write_copy(_reporting(reader, self.copy_progress), plan)
        except FileExistsError as err:
            raise TargetExistsError(
                f"IO Error: COPY ... TO {path!r}: {err}. In SQL: add OVERWRITE, "
                f"OVERWRITE_OR_IGNORE or APPEND to the COPY options") from err
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


def connect(database_or_connection: Any = None, **duckdb_kwargs: Any) -> TFRecordConnection:
    """A DuckDB connection that understands ``tfrecord_scan(...)`` and ``COPY ... (FORMAT tfrecord)``.

    Parameters
    ----------
    database_or_connection : str, path, duckdb.DuckDBPyConnection or TFRecordConnection, optional
        A database file (default: in memory) to open with ``duckdb.connect``, or an open
        connection to wrap (then ``duckdb_kwargs`` must be empty).
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
    if isinstance(database_or_connection, duckdb.DuckDBPyConnection):
        if duckdb_kwargs:
            raise TypeError("connect() got DuckDB options for an already open connection")
        return TFRecordConnection(database_or_connection)
    database = ":memory:" if database_or_connection is None else str(database_or_connection)
    return TFRecordConnection(duckdb.connect(database, **duckdb_kwargs))


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
