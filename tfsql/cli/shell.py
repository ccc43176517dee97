"""The interactive SQL shell (bare ``tfsql`` or ``tfsql shell``) and its history."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time
from typing import Callable

from tfsql.cli.console import Console, _isatty
from tfsql.cli.errors import EXIT_OK, _error_text, is_interrupt
from tfsql.cli.outputs import write_arrow
from tfsql.duckdb.sqltext import quote_identifier
from tfsql.cli.sqlscript import split_complete
from tfsql.cli.sqlsession import DEFAULT_MAX_ROWS, SQLSession, relation_reader, returns_rows, run_script


HISTORY_FILE = "~/.tfsql_history"


SHELL_HELP = """\
Enter SQL statements ending with ';' (they may span several lines). tfrecord_scan('path')
reads TFRecord files; COPY (query) TO 'dir' (FORMAT tfrecord, ...) writes them.
  .help          this text
  .tables        the tables and views of this session
  .schema [NAME] the CREATE statements of tables, views and macros (or NAME's columns)
  .mode MODE     show results as table (default), csv, json or markdown
  .timer on|off  print each statement's run time
  .maxrows N     show at most N rows of each result (0: all)
  .quit / .exit  leave (or Ctrl-D)
Tab completes keywords, tables and functions; Ctrl-C stops a running query.
History is kept in ~/.tfsql_history."""

MODES = ("table", "csv", "json", "markdown")
DOT_COMMANDS = (".help", ".tables", ".schema", ".mode", ".timer", ".maxrows", ".quit", ".exit")


class Shell:
    """The interactive SQL shell (``tfsql`` without a command)."""

    prompt = "tfsql> "
    continuation = "  ...> "

    def __init__(self, session: SQLSession, *, read_line: Callable[[str], str] = input) -> None:
        self.session = session
        self.read_line = read_line
        self.errors = 0
        self.mode = "table"
        self.timer = False
        self._names: list[str] | None = None  # completion candidates, refreshed after statements
        self._keywords: set[str] = set()  # upper case

    def run(self, sql: str) -> None:
        """Run one statement, showing its result in the current `mode` (and its run time
        when the timer is on)."""
        started = time.perf_counter()
        self._names = None  # it may create or drop tables
        try:
            if self.mode == "table" or not returns_rows(sql):
                self.session.run(sql)
            else:
                relation = self.session.query(sql)
                if relation is not None:
                    write_arrow(relation_reader(relation), self.mode, None, {})
        finally:
            if self.timer:
                self.session.console.out(f"Run Time: {time.perf_counter() - started:.3f} s")

    def completions(self, text: str) -> list[str]:
        """What Tab offers for the word ``text``: dot commands, SQL keywords, tables,
        views, columns and functions of the session (keywords in the case typed).

        Examples
        --------
        >>> from tfsql.cli.console import Console
        >>> shell = Shell(SQLSession(Console()))
        >>> shell.completions(".ti"), "tfrecord_scan" in shell.completions("tfrec")
        (['.timer'], True)
        >>> "SELECT" in shell.completions("SEL"), "select" in shell.completions("sel")
        (True, True)
        """
        if text.startswith("."):
            return [c for c in DOT_COMMANDS if c.startswith(text)]
        if self._names is None:
            self._names = self._completion_names()
        lowered = text.lower()
        words = sorted({n for n in self._names if n.lower().startswith(lowered)})
        if text[:1].isupper():
            return [w.upper() if w.islower() and w.isidentifier() and w.upper() in self._keywords else w for w in words]
        return words

    def _completion_names(self) -> list[str]:
        con = self.session.connection
        keywords = [r[0] for r in con.execute("SELECT keyword_name FROM duckdb_keywords()").fetchall()]
        self._keywords = {k.upper() for k in keywords}
        names = [
            r[0]
            for r in con.execute(
                "SELECT table_name FROM duckdb_tables() UNION SELECT view_name FROM duckdb_views() "
                "UNION SELECT column_name FROM duckdb_columns() UNION SELECT DISTINCT function_name "
                "FROM duckdb_functions() WHERE function_name NOT LIKE '%\\_\\_%' ESCAPE '\\'"
            ).fetchall()
        ]
        with contextlib.suppress(Exception):  # registered Arrow tables (not in duckdb_tables())
            names += [r[0] for r in con.execute("SHOW TABLES").fetchall()]
        return [k.lower() for k in keywords] + names + ["tfrecord_scan", "read_tfrecord"]

    def complete(self, text: str, state: int) -> str | None:
        """A ``readline`` completer over `completions`."""
        try:
            options = self.completions(text)
        except Exception:  # completion must never break the prompt
            return None
        return options[state] if state < len(options) else None

    def show_schema(self, name: str) -> None:
        """``.schema``: CREATE statements of tables, views and macros (of ``name`` only when given)."""
        con = self.session.connection
        query = (
            "SELECT sql FROM (SELECT table_name AS n, sql FROM duckdb_tables() UNION ALL "
            "SELECT view_name, sql FROM duckdb_views() WHERE NOT internal UNION ALL "
            "SELECT function_name, 'CREATE MACRO ' || function_name || '(' || array_to_string(parameters, ', ') "
            "|| ') AS ' || macro_definition || ';' FROM duckdb_functions() "
            "WHERE function_type IN ('macro', 'table_macro') AND NOT internal) "
            "WHERE ? IS NULL OR lower(n) = lower(?) ORDER BY n"
        )
        rows = con.execute(query, [name or None, name or None]).fetchall()
        for (sql,) in rows:
            self.session.console.out(sql)
        if name and not rows:  # e.g. a registered dataset: its columns
            self.session.run("DESCRIBE " + quote_identifier(name))

    def loop(self) -> int:
        console = self.session.console
        buffer = ""
        while True:
            try:
                line = self.read_line(self.continuation if buffer.strip() else self.prompt)
            except EOFError:
                console.out("")
                break
            except KeyboardInterrupt:
                console.out("^C")
                buffer = ""
                continue
            if not buffer.strip() and line.strip().startswith("."):
                if not self.dot_command(line.strip()):
                    break
                continue
            buffer += line + "\n"
            statements, rest = split_complete(buffer)
            buffer = buffer[rest:]
            for statement in statements:
                try:
                    self.run(statement.sql)
                except KeyboardInterrupt:
                    console.error("interrupted")
                except Exception as exc:  # the shell goes on after an error
                    if is_interrupt(exc):
                        console.error("interrupted")
                        continue
                    self.errors += 1
                    console.error(f"error: {_error_text(exc)}")
        return EXIT_OK

    def dot_command(self, line: str) -> bool:
        """Run a ``.command``; False to leave the shell."""
        console = self.session.console
        word, _, argument = line.partition(" ")
        if word in (".quit", ".exit", ".q"):
            return False
        if word == ".help":
            console.out(SHELL_HELP)
        elif word == ".tables":
            self.session.run("SHOW TABLES")
        elif word == ".maxrows" and argument.strip().isdigit():
            self.session.max_rows = int(argument)
        elif word == ".mode" and argument.strip() in MODES:
            self.mode = argument.strip()
        elif word == ".mode":
            console.error(f".mode {argument.strip() or '?'}: choose one of {', '.join(MODES)} (now {self.mode})")
        elif word == ".timer" and argument.strip() in ("on", "off"):
            self.timer = argument.strip() == "on"
        elif word == ".schema":
            self.show_schema(argument.strip())
        else:
            console.error(f"unknown command {line!r}; .help lists the commands")
        return True


def cmd_shell(args: argparse.Namespace, console: Console) -> int:
    """Bare ``tfsql``: a shell on a terminal, else run standard input as a script."""
    session = SQLSession(
        console, database=getattr(args, "database", None), max_rows=getattr(args, "max_rows", None) or DEFAULT_MAX_ROWS
    )
    if not _isatty(sys.stdin):
        return run_script(session, sys.stdin.read(), {}, source="<stdin>")
    import tfsql

    console.out(f"tfsql {tfsql.__version__} SQL shell (DuckDB). .help for help, .quit or Ctrl-D to leave.")
    shell = Shell(session)
    with _readline_history(os.environ.get("TFSQL_HISTORY", HISTORY_FILE), shell.complete):
        return shell.loop()


@contextlib.contextmanager
def _readline_history(path: str, completer: Callable[[str, int], str | None] | None = None):
    """Load and save the shell history, and complete with Tab, when readline is available."""
    try:
        import readline
    except ImportError:  # Windows without pyreadline
        yield
        return
    if completer is not None:
        readline.set_completer(completer)
        readline.set_completer_delims(" \t\n()[]{},;=<>+-*/%|'\"")
        binding = "bind ^I rl_complete" if "libedit" in (readline.__doc__ or "") else "tab: complete"
        readline.parse_and_bind(binding)
    history = os.path.expanduser(path)
    with contextlib.suppress(OSError):
        readline.read_history_file(history)
    readline.set_history_length(2000)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            readline.write_history_file(history)
