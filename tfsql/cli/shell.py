"""The interactive SQL shell (bare ``tfsql`` or ``tfsql shell``) and its history."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from typing import Callable

from tfsql.cli.console import Console, _isatty
from tfsql.cli.errors import EXIT_OK, _error_text
from tfsql.cli.sqlscript import _split_complete
from tfsql.cli.sqlsession import DEFAULT_MAX_ROWS, SQLSession, run_script


HISTORY_FILE = "~/.tfsql_history"


SHELL_HELP = """\
Enter SQL statements ending with ';' (they may span several lines). tfrecord_scan('path')
reads TFRecord files; COPY (query) TO 'dir' (FORMAT tfrecord, ...) writes them.
  .help          this text
  .tables        the tables and views of this session
  .maxrows N     show at most N rows of each result (0: all)
  .quit / .exit  leave (or Ctrl-D)
History is kept in ~/.tfsql_history."""


class Shell:
    """The interactive SQL shell (``tfsql`` without a command)."""

    prompt = "tfsql> "
    continuation = "  ...> "

    def __init__(self, session: SQLSession, *, read_line: Callable[[str], str] = input) -> None:
        self.session = session
        self.read_line = read_line
        self.errors = 0

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
            statements, rest = _split_complete(buffer)
            buffer = buffer[rest:]
            for statement in statements:
                try:
                    self.session.run(statement.sql)
                except KeyboardInterrupt:
                    console.error("interrupted")
                except Exception as exc:  # the shell goes on after an error
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
        else:
            console.error(f"unknown command {line!r}; .help lists the commands")
        return True


def cmd_shell(args: argparse.Namespace, console: Console) -> int:
    """Bare ``tfsql``: a shell on a terminal, else run standard input as a script."""
    session = SQLSession(console, database=getattr(args, "database", None),
                         max_rows=getattr(args, "max_rows", None) or DEFAULT_MAX_ROWS)
    if not _isatty(sys.stdin):
        return run_script(session, sys.stdin.read(), {}, source="<stdin>")
    import tfsql

    console.out(f"tfsql {tfsql.__version__} SQL shell (DuckDB). .help for help, .quit or Ctrl-D to leave.")
    with _readline_history(os.environ.get("TFSQL_HISTORY", HISTORY_FILE)):
        return Shell(session).loop()


@contextlib.contextmanager
def _readline_history(path: str):
    """Load and save the shell history when readline is available."""
    try:
        import readline
    except ImportError:  # Windows without pyreadline
        yield
        return
    history = os.path.expanduser(path)
    with contextlib.suppress(OSError):
        readline.read_history_file(history)
    readline.set_history_length(2000)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            readline.write_history_file(history)
