"""The ``tfsql`` command: SQL over TFRecord files from a terminal or a scheduler.

::

    tfsql sql "SELECT label, count(*) FROM tfrecord_scan('data/**') GROUP BY 1"
    tfsql run sql/split_train_test.sql --param src=data/ --param out=prepared/
    tfsql                                  # interactive SQL shell with history
    tfsql schema data/                     # inferred schema, as a table or JSON
    tfsql head data/ -n 5                  # first records, readable
    tfsql count data/                      # fast: record headers only
    tfsql index data/                      # offset index sidecars: counts read no record
    tfsql verify data/                     # check every CRC; report each corrupt record
    tfsql extension-path                   # the DuckDB extension to LOAD in duckdb -unsigned
    tfsql build-extension                  # build it for the DuckDB installed now (DuckDB 2)
    tfsql convert data.parquet out/ --partition-by label --compression gzip
    tfsql convert out/ data.parquet        # and back
    tfsql demo                             # generate a dataset and query it
    tfsql recover out/                     # resolve a write that crashed (kill -9, power loss)

SQL runs on `tfsql.connect()`: DuckDB with tfsql's extension loaded, so every statement
runs as in ``duckdb -unsigned`` after ``LOAD`` of the extension (``tfrecord_scan(...)``,
``COPY ... TO ... (FORMAT tfrecord)``...).

Exit status: 0 success; 1 a data problem (corrupt or truncated records, data that does
not fit the schema, a query that fails on valid SQL, an I/O error); 2 a usage problem
(a bad option or argument, a missing input path, an output that exists without
``--mode``, an unset ``${param}``, SQL that does not parse or bind). Progress bars go
to stderr and only when it is a terminal; ``--quiet`` turns them and the summary line
off. Results go to stdout, messages to stderr.

Examples
--------
>>> from tfsql.cli import main
>>> main(["sql", "SELECT 42 AS answer", "--format", "csv"])
answer
42
0
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import traceback
import warnings
from typing import Any, Sequence

from tfsql.cli.console import Console
from tfsql.cli.errors import EXIT_DATA, EXIT_INTERRUPTED, EXIT_USAGE, _error_text, _is_known, exit_status
from tfsql.cli.interrupt import ctrl_c_seen, exit_now, handle_ctrl_c
from tfsql.cli.file_commands import cmd_convert, cmd_count, cmd_demo, cmd_head, cmd_schema
from tfsql.cli.options import (
    EXIT_STATUS_HELP,
    FILE_FORMATS,
    MAIN_DESCRIPTION,
    RESULT_FORMATS,
    RUN_DESCRIPTION,
    _common,
    _Formatter,
    _non_negative_int,
    _positive_int,
    add_input_options,
    add_read_options,
    add_write_options,
)
from tfsql.cli.files_command import cmd_files
from tfsql.cli.index_command import cmd_index
from tfsql.cli.recover import cmd_recover
from tfsql.cli.render import format_value
from tfsql.cli.shell import Shell, cmd_shell
from tfsql.cli.sql_commands import cmd_run, cmd_sql
from tfsql.cli.sqlscript import Statement, split_statements, substitute_params
from tfsql.cli.sqlsession import DEFAULT_MAX_ROWS, SQLSession
from tfsql.cli.verify import cmd_verify

__all__ = [
    "main",
    "build_parser",
    "Statement",
    "split_statements",
    "substitute_params",
    "format_value",
    "Console",
    "SQLSession",
    "Shell",
]


def cmd_extension_path(args: argparse.Namespace, console: Console) -> int:
    """``tfsql extension-path``: print where the extension build for this DuckDB (or for
    ``--duckdb-version``) is (exit 1 when this installation has none)."""
    from tfsql.duckdb.extension import ExtensionNotAvailable, duckdb_extension_path

    from tfsql.extension_build import duckdb_version_of

    try:
        path = duckdb_extension_path(args.duckdb_version and duckdb_version_of(args.duckdb_version))
    except (ExtensionNotAvailable, ValueError) as err:
        print(f"tfsql: {err}", file=sys.stderr)
        return 1
    print(path)
    return 0


def cmd_build_extension(args: argparse.Namespace, console: Console) -> int:
    """``tfsql build-extension``: build the V2 extension for the DuckDB installed here (or
    ``--duckdb-version``) into the package, or into the cache when the package is
    read-only; print its path."""
    import tfsql
    from tfsql import extension_build

    try:
        version = extension_build.duckdb_version_of(args.duckdb_version) if args.duckdb_version else None
    except ValueError as err:
        print(f"tfsql: {err}", file=sys.stderr)
        return 2
    version = version or extension_build.running_duckdb_version()
    if not version or not extension_build.is_v2_version(version):
        print(
            f"tfsql: DuckDB {version or '(not installed)'} has no V2 C API; it loads the v1 build "
            "installed with tfsql (tfsql extension-path)",
            file=sys.stderr,
        )
        return 2
    relative = os.path.join(extension_build.v2_directory_name(version), extension_build.EXTENSION_FILE)
    package_dir = extension_build.PACKAGE
    base = package_dir if os.access(package_dir, os.W_OK) else extension_build.cache_root()
    try:
        path = extension_build.build_v2(version, os.path.join(base, relative), tfsql.__version__)
    except (RuntimeError, OSError) as err:
        print(f"tfsql: the extension for DuckDB {version} was not built: {err}", file=sys.stderr)
        return 1
    print(path)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The ``tfsql`` argument parser (every subcommand and option, with help)."""
    import tfsql

    parser = argparse.ArgumentParser(
        prog="tfsql",
        description=MAIN_DESCRIPTION,
        epilog=EXIT_STATUS_HELP,
        formatter_class=_Formatter,
        parents=[_common()],
    )
    parser.add_argument("--version", action="version", version=f"tfsql {tfsql.__version__}")
    parser.add_argument(
        "-d", "--database", metavar="FILE", help="shell: DuckDB database file to open (default: in memory)"
    )
    parser.set_defaults(handler=cmd_shell, max_rows=None)
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")
    common = _common(argparse.SUPPRESS)

    def command(name: str, help: str, description: str | None = None, **kw: Any) -> argparse.ArgumentParser:
        sub = commands.add_parser(
            name,
            help=help,
            description=description or help,
            epilog=EXIT_STATUS_HELP,
            formatter_class=_Formatter,
            parents=[common],
            **kw,
        )
        sub.set_defaults(command_parser=sub)  # reports its own unknown flags, with its usage
        return sub

    database_help = "DuckDB database file to open (default: in memory); tables persist there between runs"

    p = command(
        "sql",
        "run SQL (one or more statements) and print or save the result",
        "Run SQL through the tfsql DuckDB front end and print the result of the last statement\n"
        "as a table, or write it as csv/json (stdout or --output), parquet or tfrecord (--output).\n"
        "Example: tfsql sql \"SELECT label, count(*) FROM tfrecord_scan('data/') GROUP BY 1\"",
    )
    p.add_argument("query", help="SQL text; statements separated by ';' run in order")
    p.add_argument(
        "-f",
        "--format",
        choices=RESULT_FORMATS,
        help="table (default on stdout), csv, json (JSON lines), markdown, parquet, tfrecord; "
        "default from the --output extension",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="PATH",
        help="file (csv, json, markdown, parquet) or directory (tfrecord; one file when the name "
        "ends in .tfrecord, .tfrecords or .tfrec, optionally followed by .gz/.gzip or .zz/.zlib, a directory when it "
        "ends in /) to write; csv, json and markdown go to stdout without it",
    )
    p.add_argument(
        "--max-rows",
        type=_non_negative_int,
        metavar="N",
        help=f"rows to show or write: default {DEFAULT_MAX_ROWS} for the table display "
        "(longer results show their head and tail), all rows for other formats; 0: all",
    )
    p.add_argument("-d", "--database", metavar="FILE", help=database_help)
    add_write_options(
        p,
        tfrecord_help="options of --output files (tfrecord options need --format tfrecord; "
        "csv, json and parquet outputs take --mode error or overwrite)",
    )
    p.set_defaults(handler=cmd_sql)

    p = command("run", "run a SQL script statement by statement, with ${param} substitution", RUN_DESCRIPTION)
    p.add_argument(
        "file",
        nargs="?",
        help="the .sql script ('-' reads standard input), or the name of a script shipped with tfsql (--list)",
    )
    p.add_argument("--list", action="store_true", help="list the SQL scripts shipped with tfsql and exit")
    p.add_argument(
        "-p",
        "--param",
        action="append",
        metavar="NAME=VALUE",
        help="value of ${NAME} in the script; repeat for several params",
    )
    p.add_argument(
        "--max-rows",
        type=_non_negative_int,
        metavar="N",
        help=f"rows to show of each query result (default {DEFAULT_MAX_ROWS}; 0: all)",
    )
    p.add_argument("--echo", action="store_true", help="print each statement's line and first line before it runs")
    p.add_argument("-d", "--database", metavar="FILE", help=database_help)
    p.set_defaults(handler=cmd_run)

    p = command(
        "shell",
        "interactive SQL shell (also what bare 'tfsql' starts)",
        "Interactive SQL shell with history (~/.tfsql_history, or $TFSQL_HISTORY).\n"
        "Statements end with ';' and may span lines; .help lists the dot commands.\n"
        "When standard input is not a terminal, it is run as a script instead.",
    )
    p.add_argument(
        "--max-rows",
        type=_non_negative_int,
        metavar="N",
        help=f"rows to show of each result (default {DEFAULT_MAX_ROWS}; 0: all)",
    )
    p.add_argument("-d", "--database", metavar="FILE", help=database_help)
    p.set_defaults(handler=cmd_shell)

    p = command(
        "schema",
        "print the schema inferred from TFRecord files",
        "Print the Arrow schema tfsql infers for PATH: one row per column with its type and\n"
        "the tf.train.Feature kind it comes from; hive key=value directories add partition\n"
        "columns after the data columns.",
    )
    p.add_argument("path", help="file, directory (read recursively), glob or URL")
    p.add_argument(
        "--json",
        action="store_true",
        help="print JSON: {record_type, files, columns: [{name, type, feature, partition}]}",
    )
    add_read_options(p)
    p.set_defaults(handler=cmd_schema)

    p = command(
        "head",
        "print the first records, readably",
        "Print the first records of PATH, one 'column  value' line per feature. UTF-8 text is\n"
        "shown as is, other bytes as b'...' with their length, long lists and strings are\n"
        "truncated with their length.",
    )
    p.add_argument("path", help="file, directory (read recursively), glob or URL")
    p.add_argument("-n", type=int, default=5, metavar="N", help="number of records (default 5)")
    p.add_argument("-c", "--columns", metavar="COL[,COL...]", help="only these columns")
    p.add_argument(
        "--max-chars",
        type=_positive_int,
        default=80,
        metavar="N",
        help="truncate text and bytes after N characters (default 80)",
    )
    p.add_argument(
        "-f",
        "--format",
        choices=("table", "csv", "json"),
        default="table",
        help="table (default: readable), csv or json (JSON lines, full values)",
    )
    add_read_options(p)
    p.set_defaults(handler=cmd_head)

    p = command(
        "count",
        "count records, reading only the record headers",
        "Count the records of PATH without decoding them (only the 12-byte record headers\n"
        "are read; compressed files are decompressed).",
    )
    p.add_argument("path", help="file, directory (read recursively), glob or URL")
    p.add_argument("--per-file", action="store_true", help="print each file's count, then the total")
    add_read_options(p)
    p.set_defaults(handler=cmd_count)

    p = command(
        "files",
        "list the files of a dataset: size, compression, partitions, split, record count",
        "List the TFRecord files PATH names (as tfrecord_scan finds them) with their size,\n"
        "compression, hive partition values, split and record count. Counts come from index\n"
        "sidecars (tfsql index); --count walks the record headers of the other files. Runs\n"
        "the DuckDB extension's tfrecord_metadata.",
    )
    p.add_argument("path", help="file, directory (read recursively) or glob")
    p.add_argument("--count", action="store_true", help="count the records of files without an index sidecar")
    p.add_argument("--json", action="store_true", help="print JSON lines, one per file")
    p.set_defaults(handler=cmd_files)

    p = command(
        "index",
        "write record offset index sidecars (DALI / vahidk tfrecord format)",
        "Write the index of each uncompressed local file of PATH beside it, as\n"
        "'.<name>.idx': one 'offset size' line per record (the format of DALI's tfrecord2idx\n"
        "and vahidk/tfrecord). count_rows and 'tfsql count' then count records\n"
        "from the index while it matches the file; a stale index is ignored with a warning.\n"
        "Compressed files are skipped.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="files, directories (read recursively), globs")
    p.add_argument("-v", "--verbose", action="store_true", help="print each index written with its records")
    add_read_options(p)
    p.set_defaults(handler=cmd_index)

    p = command(
        "verify",
        "check every record's framing and CRCs; report each corrupt record",
        "Read every record of PATH checking the length and data CRCs, and report EACH problem\n"
        "with its file, record index and byte offset (in the decompressed stream for gzip and\n"
        "zlib files). A record with a bad data CRC is skipped and checking goes on; a bad\n"
        "length or a truncated record ends the check of that file. Exit status 1 when any\n"
        "problem was found.",
    )
    p.add_argument("path", help="file, directory (read recursively), glob or URL")
    p.add_argument(
        "--decode",
        action="store_true",
        help="also parse every record as the --record-type protobuf against the inferred schema",
    )
    add_read_options(p)
    p.set_defaults(handler=cmd_verify)

    p = command(
        "extension-path",
        "print the path of tfsql's DuckDB extension (for LOAD in duckdb)",
        "Print the path of tfsql.duckdb_extension, the DuckDB extension that gives any DuckDB\n"
        "connection tfrecord_scan(...), read_tfrecord(...) and FROM 'x.tfrecord'. It is not\n"
        "signed by DuckDB, so start the duckdb command with -unsigned, then LOAD the path:\n"
        "  duckdb -unsigned -c \"LOAD '$(tfsql extension-path)'; FROM 'data/part-0.tfrecord'\"\n"
        "A duckdb command of another version than the duckdb Python package: name its version\n"
        "  LOAD '$(tfsql extension-path --duckdb-version \"$(duckdb --version)\")'",
    )
    p.add_argument(
        "--duckdb-version",
        metavar="X.Y.Z",
        help="the DuckDB that loads it: X.Y.Z or what `duckdb --version` prints (default: the duckdb package here)",
    )
    p.set_defaults(handler=cmd_extension_path)

    p = command(
        "build-extension",
        "build tfsql's DuckDB 2 extension for the DuckDB installed now",
        "Build the extension on DuckDB 2's V2 C API for exactly the DuckDB version installed\n"
        "(or --duckdb-version), with the C compiler (CC, else cc) and DuckDB's headers from its\n"
        "source distribution on PyPI (fetched once; TFSQL_DUCKDB_V2_INCLUDE names a directory\n"
        "holding duckdb_v2.h and duckdb_extension_v2.h instead). pip install builds it for the\n"
        "DuckDB it installs; run this after upgrading DuckDB. Prints the path built.",
    )
    p.add_argument("--duckdb-version", metavar="X.Y.Z", help="the DuckDB to build for (default: the one installed)")
    p.set_defaults(handler=cmd_build_extension)

    p = command(
        "convert",
        "convert between TFRecord and Parquet, CSV or JSON",
        "Convert SRC to DST, streaming. Formats come from the extensions (.parquet, .csv,\n"
        ".json/.jsonl, .tfrecord[.gz]; a directory is TFRecord unless it holds files of another\n"
        "format) or from --from / --to. TFRecord output is a directory of part files.\n"
        "Examples:\n"
        "  tfsql convert data.parquet out/ --partition-by label --compression gzip\n"
        "  tfsql convert out/ data.parquet",
    )
    p.add_argument("src", help="source file, directory or glob")
    p.add_argument(
        "dst",
        help="target file (parquet, csv, json, or one .tfrecord[.gz|.zz] file) or "
        "directory (tfrecord; a trailing / always means a directory)",
    )
    p.add_argument("--from", dest="source_format", choices=FILE_FORMATS, help="source format (default: from SRC)")
    p.add_argument("--to", choices=FILE_FORMATS, help="target format (default: from DST's extension, else tfrecord)")
    add_input_options(p)
    add_write_options(
        p,
        tfrecord_help="options of the output (--record-type also applies to TFRecord input; "
        "csv, json and parquet outputs take --mode error or overwrite)",
    )
    p.set_defaults(handler=cmd_convert)

    p = command(
        "recover",
        "finish or undo a write that crashed; remove dead writers' leftovers",
        "Resolve the commit a crashed writer (kill -9, power loss) left in the target directory\n"
        "PATH: undo it when it had not reached its commit point (the old data stays), finish it\n"
        "otherwise (the new data stays); then remove the staging and trash directories of dead\n"
        "writers. Every tfsql write does this first; run it before reading PATH with other tools.",
    )
    p.add_argument("path", help="the target directory of the writes (path or URL)")
    p.set_defaults(handler=cmd_recover)

    p = command(
        "demo",
        "generate a small TFRecord dataset and run example queries on it",
        "Generate synthetic product reviews (id, label, split, score, text, emb, tags) as\n"
        "hive-partitioned gzip TFRecord under DIR/reviews (no download), then run SQL\n"
        "queries, a COPY to DIR/splits and a Polars query on them.",
    )
    p.add_argument(
        "directory",
        nargs="?",
        default="demo-data",
        metavar="DIR",
        help="output directory (default ./demo-data); its reviews/ and splits/ are replaced",
    )
    p.add_argument(
        "--rows", type=_positive_int, default=20_000, metavar="N", help="reviews to generate (default 20000)"
    )
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.set_defaults(handler=cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``tfsql`` command; returns the exit status.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default ``sys.argv[1:]``).

    Examples
    --------
    >>> main(["sql", "SELECT 1 AS one, 'a' AS letter", "--format", "json"])
    {"one":1,"letter":"a"}
    0
    """
    parser = build_parser()
    try:
        args, unknown = parser.parse_known_args(argv)
        if unknown:  # argparse would report them with the top-level usage
            (getattr(args, "command_parser", None) or parser).error(f"unrecognized arguments: {' '.join(unknown)}")
    except SystemExit as exc:  # --help, --version (0) or a usage error (2)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    console = Console(quiet=args.quiet)
    as_program = argv is None and args.handler is not cmd_shell  # the shell handles Ctrl-C itself
    status = _run(args, console, as_program)
    if as_program and status == EXIT_INTERRUPTED:
        exit_now(status)  # do not wait for threads a stopped scan may leave behind
    return status


def _run(args: argparse.Namespace, console: Console, as_program: bool) -> int:
    """Run the command's handler; its exit status (errors become messages)."""
    try:
        with warnings.catch_warnings(), handle_ctrl_c() if as_program else contextlib.nullcontext():
            if args.quiet:
                warnings.simplefilter("ignore")
            else:
                warnings.showwarning = _show_warning
            return args.handler(args, console)
    except KeyboardInterrupt:
        console.error("tfsql: interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # e.g. `tfsql sql ... | head`
        with contextlib.suppress(OSError):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        return EXIT_DATA
    except Exception as exc:
        status = EXIT_INTERRUPTED if as_program and ctrl_c_seen() else exit_status(exc)
        if status == EXIT_INTERRUPTED:
            console.error("tfsql: interrupted")
            return status
        console.error(f"tfsql: error: {_error_text(exc)}")
        if args.debug:
            traceback.print_exc(file=sys.stderr)
        elif status == EXIT_DATA and not _is_known(exc):
            console.error("tfsql: (an unexpected error: run with --debug for the traceback)")
        return status


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"tfsql: warning: {message}", file=sys.stderr)
