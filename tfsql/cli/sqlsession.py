"""Running SQL on `tfsql.connect()` (DuckDB with tfsql's extension loaded): a session
that shows results, the kinds of statements, and running a script statement by
statement. Statements run as DuckDB runs them; ``--param`` values reach a script as
DuckDB variables bound as parameters, or quoted by DuckDB's rules
(`tfsql.cli.sqlscript.substitute_params`)."""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from typing import Mapping

import pyarrow as pa

from tfsql.cli.console import Console
from tfsql.cli.errors import EXIT_OK, StatementError, UsageError
from tfsql.cli.interrupt import track_connection
from tfsql.cli.sqlscript import Statement, split_statements, substitute_params, used_variables
from tfsql.staging import removed_unless_finished


DEFAULT_MAX_ROWS = 40


_ROW_STATEMENTS = {"SELECT", "EXPLAIN", "PRAGMA", "CALL", "EXECUTE", "RELATION"}


class SQLSession:
    """A `tfsql.connect()` connection and the display of results."""

    def __init__(
        self,
        console: Console,
        *,
        database: str | None = None,
        max_rows: int = DEFAULT_MAX_ROWS,
        progress: bool | None = None,
    ) -> None:
        self.console = console
        self.database = database
        self.max_rows = max_rows
        self.progress = progress  # DuckDB's progress bar; None: when stdout is a terminal
        self._connection = None

    @property
    def connection(self):
        if self._connection is None:
            import tfsql.duckdb

            connection = tfsql.duckdb.connect(self.database)
            # DuckDB draws its progress bar (long queries) on stdout: never into results
            # that are redirected or written as csv/json to stdout.
            on = self.console.shows_query_progress if self.progress is None else self.progress
            # (progress_bar_time turns enable_progress_bar back on; the print setting stays.)
            flag = "true" if on else "false"
            connection.execute(f"SET enable_progress_bar = {flag}").fetchall()
            connection.execute(f"SET enable_progress_bar_print = {flag}").fetchall()
            track_connection(connection)
            self._connection = connection
        return self._connection

    def query(self, sql: str):
        """Run one statement; the result relation (None for statements without rows)."""
        return self.connection.sql(sql)

    def run(self, sql: str, *, show: bool = True):
        """Run one statement and print its rows if it is a query (for COPY, INSERT,
        CREATE ... AS: the row count, on stderr)."""
        if statement_type(sql) == "COPY":
            target = new_copy_target(sql)
            # DuckDB 1.4 leaves an interrupted COPY's file under its final name
            with removed_unless_finished(target) if target else contextlib.nullcontext():
                result = self.query(sql)
        else:
            result = self.query(sql)
        if not show or result is None:
            return result
        kind = statement_type(sql)
        if kind == "EXPLAIN":
            show_plan(result, self.console)
        elif kind is None or kind in _ROW_STATEMENTS:
            show_relation(result, max_rows=self.max_rows)
        elif list(getattr(result, "columns", [])) == ["Count"]:
            # The result of an executed statement (no re-run). DuckDB 2.x gives CREATE
            # VIEW / MACRO / TABLE a Count column without rows; 1.4 gives no relation.
            rows = result.fetchall()
            if rows and isinstance(rows[0][0], int):
                count = rows[0][0]
                self.console.note(f"{kind}: {count:,} row{'' if count == 1 else 's'}")
        return result

    def set_variables(self, params: Mapping[str, str]) -> None:
        """Make each param a DuckDB variable, ``getvariable('name')`` in SQL. The value is
        bound as a parameter, never spliced into SQL (names are checked by
        `tfsql.cli.sqlscript.parse_params`)."""
        for name, value in params.items():
            self.connection.execute(f'SET VARIABLE "{name}" = ?', [value]).fetchall()


def new_copy_target(sql: str) -> str | None:
    """The local path a ``COPY ... TO 'path'`` statement writes, when nothing exists there
    yet (so a failed or interrupted COPY's output can be removed); else None.

    Examples
    --------
    >>> new_copy_target("COPY (SELECT 1) TO '/nonexistent/x.parquet' (FORMAT parquet)")
    '/nonexistent/x.parquet'
    >>> new_copy_target("COPY (SELECT 1) TO '/' (FORMAT csv)"), new_copy_target("SELECT 1")
    (None, None)
    """
    from tfsql.duckdb.sqltext import string_literal, tokenize

    tokens = tokenize(sql)
    depth, path = 0, None
    for i, token in enumerate(tokens[:-1]):  # the string after the TO outside brackets
        depth += token.is_op("(", "[", "{") - token.is_op(")", "]", "}")
        if depth == 0 and token.is_word("to") and tokens[i + 1].kind == "string_const":
            try:
                path = string_literal(tokens[i + 1].text)
            except ValueError:
                return None
            break
    if not tokens or not tokens[0].is_word("copy") or not path or "://" in path or os.path.lexists(path):
        return None
    return path


def statement_type(sql: str) -> str | None:
    """DuckDB's type of the (last) statement: ``"SELECT"``, ``"COPY"``, ``"CREATE"``...;
    None when it does not parse (running it will say why).

    Examples
    --------
    >>> statement_type("DESCRIBE SELECT 1"), statement_type("COPY t TO 'x.csv'")
    ('SELECT', 'COPY')
    """
    import duckdb

    try:
        statements = duckdb.extract_statements(sql)
    except Exception:
        return None
    return statements[-1].type.name if statements else None


def returns_rows(sql: str) -> bool:
    """True for statements whose result is rows to show (SELECT, DESCRIBE, SUMMARIZE,
    SHOW, EXPLAIN, PRAGMA, CALL...); False for COPY, CREATE, INSERT, SET..."""
    kind = statement_type(sql)
    return kind is None or kind in _ROW_STATEMENTS


def show_relation(relation, *, max_rows: int = DEFAULT_MAX_ROWS) -> None:
    """Print a DuckDB relation as a box table (head and tail when longer than
    ``max_rows``; 0 shows every row)."""
    width = shutil.get_terminal_size((120, 24)).columns
    relation.show(max_width=width, max_rows=max_rows if max_rows > 0 else 2**62)


def show_plan(relation, console: Console) -> None:
    """Print an EXPLAIN result as DuckDB's CLI does: each plan as the text it is, its line
    breaks rendered (a table would show them as ``\\n``)."""
    rows = relation.fetchall()
    for key, plan in rows:
        if len(rows) > 1:
            console.out(f"-- {key}")
        console.out(str(plan).rstrip("\n"))


def relation_reader(relation, *, batch_rows: int = 65_536) -> pa.RecordBatchReader:
    """The rows of a DuckDB relation as a ``pyarrow.RecordBatchReader`` (streamed, by
    `tfsql.duckdb.results.arrow_reader`, imported here so that the command starts
    without DuckDB)."""
    from tfsql.duckdb.results import arrow_reader

    return arrow_reader(relation, batch_rows)


def _run_statement(
    session: SQLSession, statement: Statement, *, source: str, sql: str | None = None, show: bool = True
) -> None:
    try:
        session.run(statement.sql if sql is None else sql, show=show)
    except Exception as exc:
        raise StatementError(source, statement, exc) from exc


def run_script(session: SQLSession, script: str, params: Mapping[str, str], *, source: str, echo: bool = False) -> int:
    """Substitute params in every statement, then run them in order; stop at the first error."""
    console = session.console
    statements = split_statements(script)
    used: set[str] = set()
    prepared: list[tuple[Statement, str]] = []
    missing: list[tuple[str, int]] = []
    for statement in statements:
        text, absent = substitute_params(statement, params, used=used)
        prepared.append((statement, text))
        missing += absent
    if missing:
        names = sorted({name for name, _ in missing})
        name, line = missing[0]
        raise UsageError(
            f"{source}, line {line}: ${{{name}}} has no value; pass " + " ".join(f"--param {n}=VALUE" for n in names)
        )
    used |= used_variables(script)
    unused = sorted(set(params) - used)
    if unused:  # a misspelt name would leave its placeholder's default in place
        raise UsageError(
            f"{source} does not use "
            + ", ".join(f"--param {name}" for name in unused)
            + " (no "
            + ", ".join(f"${{{name}}} or getvariable('{name}')" for name in unused)
            + " in it); check the spelling or remove it; nothing was run"
        )
    session.set_variables(params)
    started = time.perf_counter()
    for statement, text in prepared:
        if echo:
            console.out(f"-- {source}, line {statement.line}: {statement.first_line}")
        _run_statement(session, statement, source=source, sql=text)
    n = len(prepared)
    console.note(f"ran {n} statement{'' if n == 1 else 's'} of {source} in {time.perf_counter() - started:.2f} s")
    return EXIT_OK
