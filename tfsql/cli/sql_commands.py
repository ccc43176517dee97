"""The ``tfsql sql`` and ``tfsql run`` commands."""

from __future__ import annotations

import argparse
import sys
import time

from tfsql.cli.console import Console
from tfsql.cli.errors import EXIT_OK, StatementError, UsageError
from tfsql.cli.options import writer_options
from tfsql.cli.outputs import Counter, _format_from_extension, counted, write_arrow
from tfsql.cli.sqlscript import parse_params, split_statements
from tfsql.cli.sqlsession import (
    DEFAULT_MAX_ROWS,
    SQLSession,
    _run_statement,
    relation_reader,
    returns_rows,
    run_script,
)


def cmd_sql(args: argparse.Namespace, console: Console) -> int:
    """``tfsql sql QUERY``."""
    statements = split_statements(args.query)
    if not statements:
        raise UsageError("the query is empty")
    fmt = args.format or _format_from_extension(args.output) or "table"
    if fmt in ("parquet", "tfrecord") and not args.output:
        raise UsageError(f"--format {fmt} writes to a file or directory: pass --output")
    if fmt == "table" and args.output:
        raise UsageError(
            "--output needs --format csv, json, markdown, parquet or tfrecord (or a file extension that names one)"
        )
    max_rows = args.max_rows if args.max_rows is not None else (DEFAULT_MAX_ROWS if fmt == "table" else 0)
    session = SQLSession(
        console,
        database=args.database,
        max_rows=max_rows,
        progress=False if fmt in ("csv", "json", "markdown") and not args.output else None,
    )
    started = time.perf_counter()
    *before, last = statements
    for statement in before:
        _run_statement(session, statement, source="query", show=fmt == "table")
    if fmt == "table":
        _run_statement(session, last, source="query", show=True)
        return EXIT_OK
    try:
        relation = session.query(last.sql)
    except Exception as exc:
        raise StatementError("query", last, exc) from exc
    if relation is None or not returns_rows(last.sql):
        raise UsageError(f"--format {fmt} needs a statement that returns rows (a SELECT), not: {last.first_line}")
    counter = Counter()
    with console.progress(unit=" rows", unit_scale=True, desc="query") as bar:
        reader = counted(relation_reader(relation), counter, limit=max_rows or None, progress=bar)
        written = write_arrow(reader, fmt, args.output, writer_options(args))
    if args.output:
        console.summary(
            files=written.files,
            records=counter.rows,
            nbytes=written.bytes,
            seconds=time.perf_counter() - started,
            verb=f"wrote {args.output}:",
        )
    return EXIT_OK


def cmd_run(args: argparse.Namespace, console: Console) -> int:
    """``tfsql run FILE.sql --param name=value``."""
    from tfsql.cli.scripts import resolve_script, script_listing

    if args.list:
        console.out(script_listing())
        return EXIT_OK
    if args.file is None:
        raise UsageError(
            "tfsql run needs a script: a .sql file, '-' for standard input, or a name from tfsql run --list"
        )
    params = parse_params(args.param or [])
    if args.file == "-":
        source, script = "<stdin>", sys.stdin.read()
    else:
        source = args.file
        script = resolve_script(args.file).read_text(encoding="utf-8")
    session = SQLSession(
        console, database=args.database, max_rows=DEFAULT_MAX_ROWS if args.max_rows is None else args.max_rows
    )
    return run_script(session, script, params, source=source, echo=args.echo)
