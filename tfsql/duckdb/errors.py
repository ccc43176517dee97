"""Errors of the DuckDB SQL front end, and the one place where a failure becomes the
DuckDB error the user sees.

`tfsql.duckdb.connection` runs rewritten SQL (``tfrecord_scan(...)`` replaced by a registered
dataset); what goes wrong there must still read as DuckDB's error about the SQL the user
wrote:

- `sql_error` builds an error with DuckDB's message prefix for its class
  (``Binder Error: tfrecord_scan: ...``);
- `translate` maps any exception raised while running a rewritten statement: the
  ``LINE n:`` excerpt and caret point into the user's SQL, registered names become the
  call that made them (both presentation), and a data error that ended a scan (a bad
  CRC, a truncated file, a value the column cannot hold...) becomes one `ScanDataError`
  naming file, record and byte offset, whose ``__cause__`` is the tfsql error with its
  fields. Which error a scan ended with is known structurally: the Arrow path's scans
  record it (`ScanErrors`), the extension's scans report its fields
  (`tfsql.duckdb.native_reports`); no error's text decides anything. Any other error
  keeps its class: an Arrow stream over a DuckDB result raises pyarrow's ``OSError``
  for DuckDB's errors, as DuckDB's own ``fetch_record_batch`` does.

Examples
--------
>>> err = sql_error(BinderError, "bad option", function="tfrecord_scan")
>>> str(err), isinstance(err, ValueError)
('Binder Error: tfrecord_scan: bad option', True)
>>> import duckdb
>>> str(translate(duckdb.BinderException("Binder Error: Table with name __tfrecord_scan_1 does not exist"),
...               names={"__tfrecord_scan_1": "tfrecord_scan('data/')"}))
"Binder Error: Table with name tfrecord_scan('data/') does not exist"
"""

from __future__ import annotations

import contextlib
import threading
import re
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, cast

import duckdb
import pyarrow as pa

from tfsql import errors as tfsql_errors
from tfsql import messages
from tfsql.duckdb.results import arrow_reader
from tfsql.interrupts import ScanInterrupted

__all__ = [
    "BinderError",
    "ErrorContext",
    "InvalidInputError",
    "NoFilesError",
    "QueryError",
    "ScanDataError",
    "ScanErrors",
    "TargetExistsError",
    "TranslatingRelation",
    "data_error",
    "sql_error",
    "translate",
    "translating_reader",
]


class BinderError(duckdb.BinderException, ValueError):
    """A ``tfrecord_scan`` call or a ``COPY ... (FORMAT tfrecord)`` option that cannot be
    bound: unknown parameter, wrong type, no source, a value that is not a literal."""


class InvalidInputError(duckdb.InvalidInputException, ValueError):
    """A ``tfrecord_scan`` parameter value that tfsql rejects (an unknown record type...)."""


class NoFilesError(duckdb.IOException, FileNotFoundError):
    """A ``tfrecord_scan`` source matches no file."""


class TargetExistsError(duckdb.IOException, FileExistsError):
    """``COPY ... (FORMAT tfrecord)`` into a directory that holds data, without OVERWRITE,
    OVERWRITE_OR_IGNORE or APPEND."""


class QueryError(duckdb.Error):
    """DuckDB's error in the query a ``COPY ... TO ... (FORMAT tfrecord)`` of
    ``tfsql.connect()`` writes, raised while the writer read the query's rows through an
    Arrow stream. The stream passes DuckDB's message on as text only, so the message is
    DuckDB's and the class this one (DuckDB's own class is not known)."""


class ScanDataError(duckdb.InvalidInputException, tfsql_errors.TFSQLError):
    """Bad data met while DuckDB scanned TFRecord files (a corrupt or truncated record, a
    value that does not fit the schema). Also a `tfsql.TFSQLError`; the error tfsql
    raised is its ``__cause__``."""


_PREFIXES = {
    "BinderException": "Binder Error",
    "InvalidInputException": "Invalid Input Error",
    "IOException": "IO Error",
    "ParserException": "Parser Error",
    "CatalogException": "Catalog Error",
    "ConversionException": "Conversion Error",
    "PermissionException": "Permission Error",
}

_LINE = re.compile(r"^LINE (\d+): (.*)\n( *)(\^+)[^\n]*$", re.MULTILINE)
_REGISTERED = re.compile(r"__tfrecord_scan_\d+")


class ScanErrors:
    """The tfsql errors that ended the Arrow path's scans of one connection, kept as
    objects (class and fields) for `translate`: DuckDB passes an error raised inside a
    scan on as text only. Registered datasets report to `record`
    (`tfsql.Dataset.with_error_sink`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: BaseException | None = None

    def record(self, error: BaseException) -> None:
        with self._lock:
            self._last = error

    def take(self) -> BaseException | None:
        """The error recorded since the last `take`, or None."""
        with self._lock:
            error, self._last = self._last, None
        return error


def sql_error(cls: type[Exception], message: str, *, function: str | None = None) -> Exception:
    """``cls("<DuckDB prefix>: [function: ]message")``; the prefix follows ``cls``'s DuckDB base
    class (``Binder Error``, ``Invalid Input Error``, ``IO Error``...)."""
    prefix = next((_PREFIXES[k.__name__] for k in cls.__mro__ if k.__name__ in _PREFIXES), "Error")
    return cls(f"{prefix}: {function + ': ' if function else ''}{message}")


def translate(
    error: BaseException,
    *,
    sql: str | None = None,
    rewritten: str | None = None,
    spans: Iterable[tuple[int, int, int]] = (),
    names: Mapping[str, str] | None = None,
    scan_error: BaseException | None = None,
) -> BaseException:
    """The error to show for ``error``, raised while running ``rewritten`` (the user's
    ``sql`` with ``spans`` replaced, see below); ``error`` itself when nothing needs changing.

    Parameters
    ----------
    error : BaseException
        What DuckDB (or an Arrow stream over a DuckDB result) raised.
    sql, rewritten : str, optional
        The statement as the user wrote it and as DuckDB ran it.
    spans : iterable of (start, end, new_length)
        Each replacement made in ``sql``: ``sql[start:end]`` became ``new_length``
        characters of ``rewritten``.
    names : mapping, optional
        Registered name -> what to call it in messages (the call it stands for).
    scan_error : exception, optional
        The tfsql error (or `tfsql.interrupts.ScanInterrupted`) that ended one of the
        statement's scans (`ScanErrors`): DuckDB raised ``error`` because of it.
    """
    message = str(error)
    if isinstance(scan_error, ScanInterrupted) and isinstance(error, (duckdb.Error, OSError, pa.ArrowException)):
        # a scan stopped by con.interrupt() (TFRecordConnection.interrupt): DuckDB's own error
        return duckdb.InterruptException("INTERRUPT Error: Interrupted!")
    if scan_error is not None and isinstance(error, (duckdb.Error, OSError, pa.ArrowException)):
        # a scan, or the extension's bind (its schema inference's sample), met bad data:
        # raised as the Arrow path raises it (`data_error`), whichever met it
        return data_error(scan_error)
    cls = type(error)
    if sql is not None and rewritten is not None and rewritten != sql:
        message = _LINE.sub(lambda m: _relocate(m, sql, rewritten, sorted(spans)), message)
    if names:
        message = _REGISTERED.sub(lambda m: names.get(m.group(0), "tfrecord_scan(...)"), message)
    if cls is type(error) and message == str(error):
        return error
    try:
        return cls(message)
    except TypeError:  # pragma: no cover - an exception class with another signature
        return error


def data_error(original: BaseException, function: str = "tfrecord_scan") -> BaseException:
    """The DuckDB error of a ``tfrecord_scan`` that ``original`` (a tfsql error, its
    fields intact: file, record, offset) ended, its advice spelled for SQL
    (:mod:`tfsql.messages`). Its class is the error's, not where it was met (the
    extension's inference stops its sample at damage that the Arrow path's inference
    raises; the scan then meets it): `ScanDataError` for damage in a file and a value
    that does not fit its column (`tfsql.CorruptRecordError`, `tfsql.FileChangedError`,
    `tfsql.SchemaError.from_reason`), `InvalidInputError` for a sample the schema
    inference refuses (`tfsql.SchemaError.from_inference`: a kind conflict...) and a
    schema refused when the dataset is opened, in either engine.

    >>> from tfsql.errors import CorruptRecordError
    >>> error = data_error(CorruptRecordError("data_crc", path="f", record_index=1, offset=9))
    >>> type(error).__name__, str(error)
    ('ScanDataError', 'Invalid Input Error: tfrecord_scan: data CRC mismatch in f, record 1 at byte 9: the record is corrupt')
    """
    message = original.message("sql") if isinstance(original, _DIALECT_ERRORS) else str(original)
    refused = isinstance(original, tfsql_errors.SchemaError) and original.reason not in messages.SCHEMA
    error = sql_error(InvalidInputError if refused else ScanDataError, message, function=function)
    error.__cause__ = original
    error.__suppress_context__ = True
    return error


# The errors whose advice names an option (worded per dialect)
_DIALECT_ERRORS = (tfsql_errors.CorruptRecordError, tfsql_errors.SchemaError)


def may_be_scan_error(error: BaseException) -> bool:
    """Whether ``error`` can be an extension call's data error, by its class: DuckDB
    raises a table function's error as ``InvalidInputException`` (a scan's) or
    ``BinderException`` (its bind's: the schema inference's sample), and an Arrow stream
    over a DuckDB result raises pyarrow's ``OSError`` / ``ArrowException`` for it
    (DuckDB's own behaviour, kept: the stream carries text only, and nothing here reads
    it). Whether it is one is the extension's report (``tfrecord_last_error()``, cleared
    as each call binds)."""
    if isinstance(error, duckdb.Error):
        return isinstance(error, (duckdb.InvalidInputException, duckdb.BinderException))
    return isinstance(error, (OSError, pa.ArrowException))


def _relocate(match: re.Match, sql: str, rewritten: str, spans: list[tuple[int, int, int]]) -> str:
    """A ``LINE n: excerpt`` + caret block of ``rewritten``, redrawn over ``sql``."""
    line_number, excerpt, pad, carets = int(match.group(1)), match.group(2), match.group(3), match.group(4)
    lines = rewritten.split("\n")
    if not 1 <= line_number <= len(lines):
        return match.group(0)
    line = lines[line_number - 1]
    shown = excerpt.removeprefix("...").removesuffix("...")
    column_in_excerpt = len(pad) - len(f"LINE {line_number}: ") - (3 if excerpt.startswith("...") else 0)
    found = line.find(shown)
    if found < 0 or column_in_excerpt < 0:
        return match.group(0)
    position = sum(len(x) + 1 for x in lines[: line_number - 1]) + found + column_in_excerpt
    original = _original_position(position, spans)
    original_line = sql.count("\n", 0, original) + 1
    line_start = sql.rfind("\n", 0, original) + 1
    line_end = sql.find("\n", original)
    text = sql[line_start : line_end if line_end >= 0 else len(sql)]
    column = original - line_start
    prefix = f"LINE {original_line}: "
    if len(text) > 100:  # keep the excerpt readable, as DuckDB does
        first = max(0, column - 50)
        cut = text[first : first + 100]
        text = ("..." if first else "") + cut + ("..." if first + 100 < len(text) else "")
        column = column - first + (3 if first else 0)
    return f"{prefix}{text}\n{' ' * (len(prefix) + column)}{carets}"


def _original_position(position: int, spans: list[tuple[int, int, int]]) -> int:
    """Map an offset of the rewritten text back to the user's text."""
    shift = 0
    for start, end, new_length in spans:
        new_start = start + shift
        if position < new_start:
            break
        if position < new_start + new_length:
            return start
        shift += new_length - (end - start)
    return position - shift


# --------------------------------------------------------------------------------------
# Translating errors raised later (a relation is lazy: it fails when fetched)
# --------------------------------------------------------------------------------------


class ErrorContext:
    """What `translate` needs to know about one rewritten statement."""

    def __init__(
        self,
        sql: str | None = None,
        rewritten: str | None = None,
        spans: Iterable[tuple[int, int, int]] = (),
        names: Mapping[str, str] | None = None,
        scan_errors: ScanErrors | None = None,
        native_error: Callable[[], BaseException | None] | None = None,
    ) -> None:
        self.sql = sql
        self.rewritten = rewritten
        self.spans = list(spans)
        self.names = dict(names or {})
        self.scan_errors = scan_errors
        #: The data error of the statement's extension scans, as fields
        #: (`tfsql.duckdb.native_reports.last_error`), when it ran any.
        self.native_error = native_error

    def translate(self, error: BaseException) -> BaseException:
        scan_error = self.scan_errors.take() if self.scan_errors is not None else None
        if scan_error is None and self.native_error is not None and may_be_scan_error(error):
            scan_error = self.native_error()
        return translate(
            error, sql=self.sql, rewritten=self.rewritten, spans=self.spans, names=self.names, scan_error=scan_error
        )

    @contextlib.contextmanager
    def translating(self) -> Iterator[None]:
        """Re-raise DuckDB / Arrow errors of the block as `translate` makes them."""
        try:
            yield
        except (duckdb.Error, OSError, pa.ArrowException) as err:
            new = self.translate(err)
            if new is err:
                raise
            raise new from new.__cause__

    def wrap(self, result: Any) -> Any:
        """A relation whose errors are translated; anything else as is.

        Where DuckDB's relation class is a Python class (DuckDB 2.x) the relation stays
        itself, its class switched to a subclass that translates (so DuckDB's own APIs,
        ``FROM python_variable`` included, take it as ever); elsewhere (1.4) it is wrapped
        in a `TranslatingRelation`.
        """
        if type(result) is TranslatingRelation or not isinstance(result, duckdb.DuckDBPyRelation):
            return result
        if _translate_in_place(result, self):
            return result
        return TranslatingRelation(result, self)

    def function(self, method: Any, name: str = "") -> Any:
        """``method`` with its errors translated (and relations / readers it returns wrapped)."""

        def call(*args: Any, **kwargs: Any) -> Any:
            args = tuple(_unwrap(a) for a in args)
            kwargs = {k: _unwrap(v) for k, v in kwargs.items()}
            with self.translating():
                result = method(*args, **kwargs)
            if isinstance(result, pa.RecordBatchReader):
                return translating_reader(result, self)
            return self.wrap(result)

        call.__name__ = name or getattr(method, "__name__", "method")
        call.__doc__ = getattr(method, "__doc__", None)
        return call


_contexts: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # relation -> its ErrorContext
_subclasses: dict[type, type | None] = {}  # relation class -> its translating subclass (None: impossible)


def _translate_in_place(relation: Any, context: ErrorContext) -> bool:
    """Switch ``relation``'s class to one that translates its errors; False when the
    class cannot be switched (a C++ class: DuckDB 1.4)."""
    base = type(relation)
    if base not in _subclasses:
        _subclasses[base] = _translating_subclass(base)
    subclass = _subclasses[base]
    if subclass is None:
        return False
    try:
        _contexts[relation] = context
        relation.__class__ = subclass
    except TypeError:
        _subclasses[base] = None
        _contexts.pop(relation, None)
        return False
    return True


def _translating_subclass(base: type) -> type | None:
    def __getattribute__(self: Any, name: str) -> Any:  # noqa: N807
        attribute = cast(Any, base).__getattribute__(self, name)
        if name.startswith("_") or not callable(attribute):
            return attribute
        context = _contexts.get(self)
        return attribute if context is None else context.function(attribute, name)

    def __repr__(self: Any) -> str:  # noqa: N807
        context = _contexts.get(self) or ErrorContext()
        with context.translating():
            return cast(Any, base).__repr__(self)

    try:
        return type(
            base.__name__,
            (base,),
            {
                "__slots__": (),
                "__getattribute__": __getattribute__,
                "__repr__": __repr__,
                "__str__": __repr__,
                "__module__": base.__module__,
            },
        )
    except TypeError:
        return None


def _unwrap(value: Any) -> Any:
    return value.duckdb_relation if isinstance(value, TranslatingRelation) else value


class TranslatingRelation:
    """A ``duckdb.DuckDBPyRelation`` whose errors (raised when it runs) name the SQL the
    user wrote and carry no Python traceback; everything else is the relation's.
    ``duckdb_relation`` is the relation itself, for APIs that need the real object."""

    __slots__ = ("_context", "duckdb_relation")

    def __init__(self, relation: Any, context: ErrorContext) -> None:
        self.duckdb_relation = relation
        self._context = context

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.duckdb_relation, name)
        if callable(attribute) and not isinstance(attribute, type):
            return self._context.function(attribute, name)
        return attribute

    def __dir__(self) -> list[str]:
        return dir(self.duckdb_relation)

    @property  # type: ignore[misc]
    def __class__(self) -> type:  # isinstance(x, duckdb.DuckDBPyRelation) holds, for DuckDB's own APIs
        return type(self.duckdb_relation)

    def __repr__(self) -> str:
        with self._context.translating():
            return repr(self.duckdb_relation)

    __str__ = __repr__

    def __len__(self) -> int:
        with self._context.translating():
            return len(self.duckdb_relation)

    def __getitem__(self, key: Any) -> Any:
        return self._context.wrap(self.duckdb_relation[key])

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        reader = self._context.function(arrow_reader)(self.duckdb_relation)  # translating its errors
        return reader.__arrow_c_stream__(requested_schema)


def translating_reader(
    reader: pa.RecordBatchReader, context: ErrorContext | None = None, *, statement: bool = False
) -> pa.RecordBatchReader:
    """``reader`` whose errors are translated (`ErrorContext.translate`: a scan's data
    error becomes a `ScanDataError`). An Arrow stream over a DuckDB result raises
    pyarrow's ``OSError("Invalid Input Error: ...")`` for DuckDB's errors, with text only;
    that stays so (DuckDB's own behaviour) unless ``statement``: the stream is how a SQL
    statement (a ``COPY ... TO``) reads its query, and its errors are then `QueryError`,
    a ``duckdb.Error`` (whatever the text says)."""
    context = context or ErrorContext()

    def batches() -> Iterator[pa.RecordBatch]:
        try:
            while True:
                try:
                    with context.translating():
                        try:
                            batch = reader.read_next_batch()
                        except StopIteration:
                            return
                except (OSError, pa.ArrowException) as err:
                    if not statement or isinstance(err, duckdb.Error):
                        raise
                    raise QueryError(str(err)) from None
                yield batch
        finally:
            reader.close()

    return pa.RecordBatchReader.from_batches(reader.schema, batches())
