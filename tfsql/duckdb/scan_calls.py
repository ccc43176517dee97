"""``tfrecord_scan(...)`` calls in a statement: which path runs each, and the Arrow path's
datasets.

Given a statement's tokens, `ScanCalls.rewrite` decides for each call whether the
DuckDB extension runs it as written (`native_route`) or it takes the Arrow path: its
arguments are read as literals (`tfsql.duckdb.arguments`, `tfsql.duckdb.parameters`),
its dataset is opened (or reused) and registered on the connection, and the call is
replaced by the registered name.

Registered names are ``__tfrecord_scan_<n>``, one per distinct call (same arguments,
same name), kept for the connection's life so views over ``tfrecord_scan`` stay valid.
Each statement that spells out a call re-opens its dataset (files are listed again, as
``read_parquet`` does; the schema is inferred again only when the files changed, see
`open_dataset`).

Routing lists the source's files once in Python (`source_shape`) before the extension
lists them again in C: whether the files form a TFDS / TFX layout and which ``key=value``
directories they sit in (a scan of those in a statement that filters on a partition
column takes the Arrow path, which prunes directories) cannot be told from the path
text. The listing is short next to a scan (names and sizes, no data). What the
statement filters on is DuckDB's parser's answer (`tfsql.duckdb.filters`), asked only
for such a call.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import duckdb
import fsspec
import pyarrow as pa

import tfsql
from tfsql._codec import codec
from tfsql.errors import CorruptRecordError, NoDataError, SchemaError
from tfsql.duckdb.rewrite import Call, Token, find_calls, substitute
from tfsql.duckdb.arguments import LiteralError, LiteralReader
from tfsql.duckdb.filters import StatementFilters, statement_filters
from tfsql.duckdb.errors import BinderError, InvalidInputError, NoFilesError, ScanErrors, data_error, sql_error
from tfsql.duckdb.parameters import NATIVE_SCAN_PARAMETERS, SCAN_PARAMETERS, TABLE_FUNCTIONS, dataset_options
from tfsql.duckdb.types import sql_type_name, type_struct
from tfsql.layouts import SPLIT_COLUMN
from tfsql.interrupts import Interrupts
from tfsql.tfds import features_schema

__all__ = ["ScanCalls", "native_route", "native_reads", "source_shape", "open_dataset", "check_has_columns"]


class ScanCalls:
    """The ``tfrecord_scan`` calls of one connection: the datasets registered for the
    Arrow path, by call, and the SQL text of each (for messages)."""

    def __init__(self, connection: duckdb.DuckDBPyConnection, *, native: bool) -> None:
        self._con = connection
        self.native = native
        self._lock = threading.RLock()
        self._names: dict[tuple, str] = {}  # normalised call -> registered name
        self._datasets: dict[str, tfsql.Dataset] = {}  # registered name -> dataset (kept alive)
        self._opened: dict[tuple, tuple] = {}  # normalised call -> (dataset, files key)
        self._counter = itertools.count(1)
        #: Registered name -> the call's SQL text (errors name the call, not the name).
        self.calls: dict[str, str] = {}
        #: The tfsql errors the registered datasets' scans end with (errors.translate).
        self.scan_errors = ScanErrors()
        self.native_calls = 0
        #: The connection's interrupts, which stop the registered datasets' running scans.
        self.interrupts = Interrupts()

    def register(self, name: str, data: tfsql.Dataset) -> None:
        """Register ``data`` as ``name`` on the connection (kept alive here); its scans
        report the error that ends them to `scan_errors` and stop at `interrupts`."""
        data = data.with_error_sink(self.scan_errors.record).with_interrupts(self.interrupts)
        with self._lock:
            self._con.register(name, data)
            self._datasets[name] = data

    def forget(self, name: str) -> None:
        """Forget what was registered as ``name`` (DuckDB's unregister is the caller's)."""
        with self._lock:
            self._datasets.pop(name, None)
            for key in [k for k, v in self._names.items() if v == name]:
                del self._names[key]
                self._opened.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._datasets.clear()
            self._names.clear()
            self._opened.clear()

    def rewrite(
        self, text: str, tokens: list[Token], params: Any, *, native: bool = True
    ) -> tuple[str, Any, list[tuple[int, int, int]]]:
        """Replace each call by a registered dataset's name (except the calls the
        extension runs, when ``native``); drop the ``?`` parameters its arguments
        consumed. Also returns the replaced spans as ``(start, end, new length)``."""
        try:
            found = find_calls(text, tokens, TABLE_FUNCTIONS)
        except ValueError as err:
            raise sql_error(duckdb.ParserException, str(err)) from err
        calls = found
        if self.native and native:
            # parsed once, and only when a call's route depends on the statement's filters
            filters = cache(lambda: statement_filters(text, tokens))
            calls = [call for call in found if not native_route(call, tokens, params, self.variable, filters)]
        #: How many calls of the statement last rewritten the extension runs.
        self.native_calls = len(found) - len(calls)
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
            if any(
                t.kind != "string_const" and t.text.startswith("$") for t in tokens if call.start < t.start < call.end
            ):
                raise sql_error(
                    BinderError,
                    "$-parameters are not supported in its arguments; use ? or a literal",
                    function=call.name,
                )
            values: list = []
            if inside:
                if not isinstance(params, Sequence) or isinstance(params, str) or len(params) <= max(inside):
                    raise sql_error(
                        InvalidInputError,
                        "its arguments use ? parameters but not enough values were passed",
                        function=call.name,
                    )
                values = [params[k] for k in inside]
                consumed.update(inside)
            name = self._register_call(call, tokens, values)
            with self._lock:
                self.calls[name] = text[call.start : call.end]
            replacement = name if call.has_alias or not call.in_from else f"{name} AS {call.name}"
            replacements.append((call.start, call.end, replacement))
        if consumed:
            params = [value for k, value in enumerate(params) if k not in consumed]
        spans = [(start, end, len(new)) for start, end, new in sorted(replacements)]
        return substitute(text, replacements), params, spans

    def _register_call(self, call: Call, tokens: list[Token], params: list) -> str:
        positional = [arg for arg in call.args if arg.name is None]
        named = [arg for arg in call.args if arg.name is not None]
        if not positional:
            raise sql_error(
                BinderError,
                f"expected a source as the first argument, e.g. "
                f"{call.name}('data/*.tfrecord') or {call.name}(['a.tfrecord', "
                f"'b.tfrecord'])",
                function=call.name,
            )
        if len(positional) > 1 or call.args[0].name is not None:
            raise sql_error(
                BinderError,
                f"takes one positional argument (the source, a path, glob or list "
                f"of them); pass options by name: {call.name}('data/*', "
                f"hive_partitioning := true)",
                function=call.name,
            )
        seen = set()
        for arg in named:
            if arg.name not in SCAN_PARAMETERS:
                candidates = "\n".join(f"    {n} {t}" for n, t in SCAN_PARAMETERS.items())
                raise sql_error(
                    BinderError,
                    f'Invalid named parameter "{arg.name}" for function {call.name}\nCandidates:\n{candidates}',
                )
            if arg.name in seen:
                raise sql_error(BinderError, f'named parameter "{arg.name}" given twice', function=call.name)
            seen.add(arg.name)
        reader = LiteralReader(tokens, params, self.variable)
        values = []
        for arg in positional + named:
            try:
                values.append(reader.value(arg.first_token, arg.stop_token))
            except LiteralError as err:
                what = "the source" if arg.name is None else f"parameter {arg.name}"
                raise sql_error(BinderError, f"{what}: {err}", function=call.name) from None
        source = values[0]
        if not (
            isinstance(source, str) or (isinstance(source, list) and source and all(isinstance(s, str) for s in source))
        ):
            raise sql_error(
                BinderError,
                f"the source must be a VARCHAR path or glob, or a VARCHAR[] of "
                f"them; got {sql_type_name(source)} {source!r}",
                function=call.name,
            )
        named_values: dict[str, Any] = {arg.name: value for arg, value in zip(named, values[1:])}  # type: ignore[misc]  # named: name is set
        options = dataset_options(call.name, named_values)
        key = (repr(source), tuple(sorted((k, repr(v)) for k, v in options.items())))
        with self._lock:
            previous = self._opened.get(key)
        data, fingerprint = open_dataset(call.name, source, options, previous)
        with self._lock:
            name = self._names.get(key)
            if name is None:
                name = f"__tfrecord_scan_{next(self._counter)}"
                self._names[key] = name
            self.register(name, data)
            self._opened[key] = (data, fingerprint)
        return name

    def variable(self, name: str) -> Any:
        """The value of DuckDB variable ``name`` (``getvariable('name')`` in an argument),
        read with a bound parameter."""
        return self._con.execute("SELECT getvariable(?)", [name]).fetchall()[0][0]


# --------------------------------------------------------------------------------------
# Routing: the extension or the Arrow path
# --------------------------------------------------------------------------------------


def native_route(
    call: Call, tokens: list[Token], params: Any, variable: Any, filters: Callable[[], StatementFilters]
) -> bool:
    """Whether the extension's ``tfrecord_scan`` runs this call (the SQL text is left as
    written), decided from the call and the statement's structure, never from an
    error's text or a keyword's presence.

    The extension runs it, except:

    - a call outside a FROM (``DESCRIBE tfrecord_scan(...)``), or with arguments DuckDB
      reads differently or the literal reader refuses: the Arrow path reports them;
    - options only the Arrow path has (not in `NATIVE_SCAN_PARAMETERS`) and calls the
      extension does not read as the Arrow path does (`native_reads`);
    - a call over hive-partitioned files (unless ``hive_partitioning := false``) or a
      TFDS / TFX layout in a statement that filters on one of its partition columns
      (its ``key=value`` keys, and ``split`` for a layout): DuckDB's parse of the
      statement (``filters``, see `tfsql.duckdb.filters`) names the column in a
      ``WHERE``, ``HAVING``, ``QUALIFY`` or a join's ``ON`` / ``USING`` anywhere in
      the query that holds the call, CTEs and subqueries included, as DuckDB pushes
      an outer filter down into the scan. The Arrow path's partition pruning then opens only the
      matching directories or splits (DuckDB's C API has no filter pushdown). A filter
      on other columns, or a ``WHERE`` in a string, keeps the call native. When the
      query around the call does not parse (or this DuckDB has no
      ``json_serialize_sql``), such a call takes the Arrow path, which prunes whatever
      the filters are; the rows are the same on either path.

    A ``CREATE`` that stores its SQL (a view, a macro) keeps the call as written, so the
    definition works wherever the extension is loaded; ``CREATE TABLE ... AS`` is
    decided by its query like any other statement.
    """
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
    reader = LiteralReader(tokens, params or (), variable)
    values: dict[str | None, Any] = {}
    for arg in call.args:
        try:
            values[arg.name] = reader.value(arg.first_token, arg.stop_token)
        except LiteralError:
            return False
    shape = source_shape(values[None])
    if not native_reads(values, shape):
        return False
    if _stores_definition(tokens):
        return True
    partition_columns = set(shape.layout_columns)
    if values.get("hive_partitioning") is not False:
        partition_columns |= shape.hive_columns
    if not partition_columns:
        return True
    found = filters()
    if not found.covers(call.start):
        return False  # the query around the call was not read: the Arrow path prunes whatever it filters
    return not (found.columns & partition_columns)


def _stores_definition(tokens: list[Token]) -> bool:
    """A ``CREATE`` statement that stores its SQL (``CREATE VIEW``, ``CREATE MACRO``...),
    not a ``CREATE TABLE`` that runs its query once: the first object keyword after
    ``CREATE [OR REPLACE] [TEMP]`` says which."""
    if not tokens or not tokens[0].is_word("create"):
        return False
    for token in tokens[1:]:
        if token.is_word("table", "view", "macro", "function"):
            return not token.is_word("table")
    return True


@dataclass(frozen=True)
class SourceShape:
    """What routing needs to know of a source's files (listed once, in Python)."""

    hive_columns: frozenset[str]  # the keys of the key=value directories the files sit in (lower case)
    layout: Any  # the TFDS / TFX layout (tfsql.layouts), or None
    files: int  # how many files the source holds
    described: Any = None  # a tfsql writer's column description (tfsql.description), or None

    @property
    def layout_columns(self) -> frozenset[str]:
        """The column a TFDS / TFX layout adds (``split``), none without a layout."""
        return frozenset() if self.layout is None else frozenset({SPLIT_COLUMN})


def source_shape(source: Any) -> SourceShape:
    """The files of ``source`` (a path, glob or list of them): how many, the keys of the
    ``key=value`` directories they sit in, and their TFDS or TFX layout (`tfsql.layouts`)."""
    from tfsql.discovery import discover
    from tfsql.description import written_description
    from tfsql.layouts import layout_of
    from tfsql.partitioning import parse_partition_segments

    items = list(source) if isinstance(source, (list, tuple)) else [source]
    if not all(isinstance(item, str) for item in items):
        return SourceShape(frozenset(), None, 0)
    try:
        found = discover(items)
        layout = layout_of(found)
    except (OSError, ValueError, TypeError):
        return SourceShape(frozenset(), None, 0)
    keys = {key.lower() for f in found.files for key, _ in parse_partition_segments(f.relative_dir() or "")}
    described = written_description(found) if layout is None else None
    return SourceShape(frozenset(keys), layout, len(found.files), described)


def native_reads(values: dict[str | None, Any], shape: SourceShape) -> bool:
    """Whether the extension reads the call whose literal arguments are ``values`` as the
    Arrow path does, decided from the call itself (never from an error's text): a source
    with files (the Arrow path names a source without any), a TFDS ``features.json``
    (unless ``schema`` is given) whose types the decoder produces, ``hive_types`` all
    VARCHAR, and ``schema`` types the decoder produces without a cast (BIGINT, FLOAT,
    VARCHAR, BLOB and lists of them, nullable)."""
    if shape.files == 0:
        return False
    given = values.get("schema", values.get("columns"))
    layout = shape.layout
    if given is None and layout is not None and layout.kind == "tfds" and layout.directory is not None:
        described = features_schema(fsspec.filesystem("file"), layout.directory)
        if described is not None and not all(_decoded_as_is(f.type) for f in described[0]):
            return False
    written = shape.described
    if given is None and written is not None:
        if not all(_stored_as_written(f.type) for f in written.data_schema):
            return False  # the Arrow path casts to the written types
        if values.get("hive_partitioning") is not False and not all(
            f.type in (pa.int64(), pa.string(), pa.large_string()) for f in written.partition_schema
        ):
            return False
    hive_types = values.get("hive_types")
    if isinstance(hive_types, Mapping):
        try:
            typed = type_struct("tfrecord_scan", "hive_types", hive_types)
        except Exception:  # the extension reports bad hive_types as the Arrow path does
            return True
        if not all(f.type == pa.string() for f in typed):
            return False
    if isinstance(given, Mapping):
        try:
            schema = type_struct("tfrecord_scan", "schema", given)
        except Exception:  # the extension reports a bad schema as the Arrow path does
            return True
        return all(f.nullable and _decoded_as_is(f.type) for f in schema)
    return True


def _stored_as_written(t: pa.DataType) -> bool:
    """A described type the extension gives as written (``described_column`` in
    ``tfsql/duckdb_ext/layouts.c``): what the decoder produces and their large variants,
    bool, the integer types, dates, float16 and float64, timestamps, times and durations
    (in nanoseconds only a timestamp without a time zone), fixed-size binary, and lists, one level of fixed-size
    list and fixed-shape tensors (ARRAY columns) of them."""
    if isinstance(t, pa.FixedShapeTensorType):
        t = t.value_type
    elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        t = t.value_type
    if pa.types.is_timestamp(t) or pa.types.is_time(t) or pa.types.is_duration(t):
        return t.unit != "ns" or (pa.types.is_timestamp(t) and t.tz is None)
    return (
        pa.types.is_integer(t)
        or pa.types.is_boolean(t)
        or pa.types.is_floating(t)
        or pa.types.is_fixed_size_binary(t)
        or t in (pa.string(), pa.binary(), pa.large_string(), pa.large_binary(), pa.date32(), pa.date64())
    )


def _decoded_as_is(t: pa.DataType) -> bool:
    """A type the decoder produces without a cast: int64, float32, string, binary, and
    lists (of lists) of them."""
    depth = 0
    while pa.types.is_list(t) and depth < 2:
        t, depth = t.value_type, depth + 1
    return t in (pa.int64(), pa.float32(), pa.string(), pa.binary())


# --------------------------------------------------------------------------------------
# Opening a call's dataset
# --------------------------------------------------------------------------------------


def open_dataset(
    function: str, source: Any, options: dict[str, Any], previous: tuple[tfsql.Dataset, int | None] | None = None
) -> tuple[tfsql.Dataset, int | None]:
    """Open the dataset of a call, with its files' fingerprint.

    Given the dataset and fingerprint the same call opened before, schema inference is
    skipped when the files (local paths, sizes, modification times) are unchanged; any
    change infers again.
    """
    try:
        if previous is not None and previous[1] is not None and "schema" not in options:
            # the schema inferred before: nothing in it can be missing from the sample
            quick = _duckdb_dataset(source, {**options, "schema": previous[0].data_schema, "missing_columns": "insert"})
            if _fingerprint(quick) == previous[1]:
                return _with_a_column(source, options, quick), previous[1]
        data = _duckdb_dataset(source, options)
    except FileNotFoundError as err:
        message = err.message("sql") if isinstance(err, NoDataError) else str(err)  # its advice in SQL
        raise sql_error(NoFilesError, message, function=function) from err
    except (CorruptRecordError, SchemaError) as err:  # the sample met bad data: advice spelled for SQL
        error = data_error(err, function)
        raise error from error.__cause__
    except (ValueError, TypeError) as err:
        raise sql_error(InvalidInputError, str(err), function=function) from err
    data = _with_a_column(source, options, data)
    check_has_columns(function, source, data)
    return data, _fingerprint(data)


def _with_a_column(source: Any, options: dict[str, Any], data: tfsql.Dataset) -> tfsql.Dataset:
    """DuckDB scans no table without columns: records holding no features (inference has
    already warned how to read them) get the ``filename`` column, so ``count(*)`` works."""
    if len(data.schema) or not data.files or options.get("include_file_paths"):
        return data
    return _duckdb_dataset(
        source, {**options, "schema": data.data_schema, "missing_columns": "insert", "include_file_paths": "filename"}
    )


def _duckdb_dataset(source: Any, options: dict[str, Any]) -> tfsql.Dataset:
    """`tfsql.dataset` with DuckDB's hive rule: hive columns come from every directory of
    each file's path, as ``read_parquet`` takes them (`tfsql.partitioning`)."""
    from tfsql.opening import open_dataset as open_with_rule
    from tfsql.options import ReadOptions

    data = open_with_rule(source, ReadOptions(**options), hive_rule="path")
    taken = _duckdb_types(data.data_schema) if "schema" not in options else None
    if taken is None:
        return data
    return open_with_rule(
        source, ReadOptions(**{**options, "schema": taken, "missing_columns": "insert"}), hive_rule="path"
    )


def _duckdb_types(schema: pa.Schema) -> pa.Schema | None:
    """`schema` with the types DuckDB takes from no Arrow stream (float16, decimals wider
    than 38 digits: a column description can give them) as float32, the FLOAT the
    extension reads them as; None when it has none."""

    def taken(t: pa.DataType) -> pa.DataType:
        if pa.types.is_large_list(t):
            return pa.large_list(taken(t.value_type))
        if pa.types.is_list(t):
            return pa.list_(taken(t.value_type))
        if pa.types.is_float16(t) or (pa.types.is_decimal(t) and t.precision > 38):
            return pa.float32()
        return t

    fields = [f.with_type(taken(f.type)) for f in schema]
    return pa.schema(fields) if any(f.type != g.type for f, g in zip(fields, schema)) else None


def check_has_columns(function: str, source: Any, data: tfsql.Dataset) -> None:
    """DuckDB cannot scan a table without columns; only a source without files has none
    left after :func:`_with_a_column`: say so."""
    if len(data.schema):
        return
    raise sql_error(
        NoFilesError, f"no files found in {source!r} (hidden files such as _SUCCESS are skipped)", function=function
    )


def _fingerprint(data: tfsql.Dataset) -> int | None:
    """The key of local files' (path, size, mtime) (the core's ``tfsql_listing_key``, the
    extension's too), from the listing itself (no stat again); None for remote files."""
    found = data.discovered
    if not found.is_local:
        return None
    return codec.listing_key(
        0, [(found.files[i].path, found.files[i].size, found.files[i].mtime_ns) for i in data.file_indices]
    )
