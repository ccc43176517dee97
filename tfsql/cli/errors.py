"""How a failure of the ``tfsql`` command becomes its exit status and its one-line message.

Exit status: 0 success; 1 a data problem; 2 a usage problem; 130 interrupted (see
:mod:`tfsql.cli`). :class:`UsageError` is a mistake in how the command was called;
:class:`StatementError` names the statement of a script that failed.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import pyarrow as pa

if TYPE_CHECKING:
    from tfsql.cli.sqlscript import Statement


EXIT_OK = 0
EXIT_DATA = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """A mistake in how the command was called (exit status 2)."""


class StatementError(Exception):
    """A statement of a script failed; wraps the original error."""

    def __init__(self, source: str, statement: Statement, error: BaseException) -> None:
        super().__init__(f"{source}, line {statement.line}: {statement.first_line}\n{_error_text(error)}")
        self.error = error


#: DuckDB's errors that are the caller's to fix: the statement, and the files it names
#: (IOException: a path not found, not readable or not writable).
_DUCKDB_USAGE_ERRORS = ("ParserException", "SyntaxException", "BinderException", "CatalogException", "IOException")


def is_interrupt(error: BaseException) -> bool:
    """True for Ctrl-C, however it surfaced, by the class of the error or of one it was
    raised from: ``KeyboardInterrupt`` (a tfsql scan's ``ScanInterrupted`` too) or
    DuckDB's interrupted query (``duckdb.InterruptException``, which `tfsql.connect()`
    also raises for a scan of its Arrow path that an interrupt stopped). One exception:
    DuckDB's Python client, when its own signal check stops a query, raises a plain
    ``RuntimeError("Query interrupted")`` (its C++ ``std::runtime_error``), which no
    class or field tells from another RuntimeError: that one is known by its text.

    Examples
    --------
    >>> import duckdb
    >>> is_interrupt(duckdb.InterruptException("INTERRUPT Error: Interrupted!")), is_interrupt(ValueError("bad"))
    (True, False)
    """
    duckdb = sys.modules.get("duckdb")
    classes: tuple[type[BaseException], ...] = (KeyboardInterrupt,)
    if duckdb is not None:
        classes += (duckdb.InterruptException,)
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, classes) or (type(cause) is RuntimeError and str(cause).startswith("Query interrupted")):
            return True
        cause = cause.error if isinstance(cause, StatementError) else cause.__cause__
    return False


def exit_status(error: BaseException) -> int:
    """The exit status for an error: 1 for data problems, 2 for usage problems, 130 for
    an interruption (Ctrl-C).

    Examples
    --------
    >>> import tfsql
    >>> exit_status(tfsql.CorruptRecordError("bad")), exit_status(FileNotFoundError("x"))
    (1, 2)
    """
    from tfsql.errors import TFSQLError

    if is_interrupt(error):
        return EXIT_INTERRUPTED
    if isinstance(error, StatementError):
        return exit_status(error.error)
    cause: BaseException | None = error
    while cause is not None:  # a front end may wrap a data error (raise ... from err)
        if isinstance(cause, TFSQLError):
            return EXIT_DATA
        cause = cause.__cause__
    if isinstance(error, (UsageError, FileNotFoundError, FileExistsError, IsADirectoryError, NotADirectoryError)):
        return EXIT_USAGE
    if isinstance(error, pa.ArrowException):
        return EXIT_DATA
    if isinstance(error, (ValueError, TypeError, KeyError)):
        return EXIT_USAGE
    duckdb = sys.modules.get("duckdb")
    if duckdb is not None and isinstance(error, duckdb.Error):
        names = {cls.__name__ for cls in type(error).__mro__}
        if names & set(_DUCKDB_USAGE_ERRORS):
            return EXIT_USAGE
    return EXIT_DATA


def _is_known(error: BaseException) -> bool:
    """Errors whose message is enough (no hint about --debug)."""
    duckdb = sys.modules.get("duckdb")
    return (
        type(error).__module__.startswith("tfsql")
        or isinstance(error, (StatementError, pa.ArrowException, OSError))
        or (duckdb is not None and isinstance(error, duckdb.Error))
    )


def _error_text(error: BaseException) -> str:
    if isinstance(error, StatementError):
        return str(error)
    if isinstance(error, KeyError) and error.args:
        return str(error.args[0])
    from tfsql.errors import TFSQLError

    message = getattr(error, "message", None)
    # tfsql's data errors spell their advice as the command's flags (--on-corrupt skip)
    text = (message("cli") if isinstance(error, TFSQLError) and callable(message) else str(error)).strip()
    if isinstance(error, (UsageError, FileNotFoundError, FileExistsError)) or _is_known(error):
        return text or type(error).__name__
    first = text.splitlines()[0] if text else ""
    return f"{type(error).__name__}: {first}" if first else type(error).__name__
