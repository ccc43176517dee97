"""The ``tfsql`` command: SQL over TFRecord files from a terminal or a scheduler.

::

    tfsql sql "SELECT label, count(*) FROM tfrecord_scan('data/**') GROUP BY 1"
    tfsql run sql/split_train_test.sql --param src=data/ --param out=prepared/
    tfsql                                  # interactive SQL shell with history
    tfsql schema data/                     # inferred schema, as a table or JSON
    tfsql head data/ -n 5                  # first records, readable
    tfsql count data/                      # fast: record headers only
    tfsql verify data/                     # check every CRC; report each corrupt record
    tfsql convert data.parquet out/ --partition-by label --compression gzip
    tfsql convert out/ data.parquet        # and back
    tfsql demo                             # generate a dataset and query it

SQL goes through the tfsql DuckDB front end (:mod:`tfsql.duckdb`), so every statement
understands ``tfrecord_scan(...)`` and ``COPY ... TO ... (FORMAT tfrecord)``.

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
import json
import os
import re
import shutil
import sys
import tempfile
import time
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import pyarrow as pa

__all__ = ["main", "build_parser", "Statement", "split_statements", "substitute_params", "format_value"]

EXIT_OK = 0
EXIT_DATA = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

DEFAULT_MAX_ROWS = 40
HISTORY_FILE = "~/.tfsql_history"
RECORD_TYPES = ("example", "sequence_example", "bytes")
READ_COMPRESSIONS = ("infer", "none", "gzip", "zlib")
WRITE_COMPRESSIONS = ("none", "gzip", "zlib")
WRITE_MODES = ("error", "append", "overwrite", "overwrite_partitions", "ignore")
TFRECORD_FILE_SUFFIXES = (".tfrecord", ".tfrecords", ".tfrecord.gz", ".tfrecords.gz", ".tfrecord.zz", ".tfrecords.zz")
RESULT_FORMATS = ("table", "csv", "json", "parquet", "tfrecord")
FILE_FORMATS = ("tfrecord", "parquet", "csv", "json")


class UsageError(Exception):
    """A mistake in how the command was called (exit status 2)."""


# ======================================================================================
# Console: results on stdout, notes / progress / summary on stderr
# ======================================================================================


class Console:
    """Where the command's output goes.

    Results are printed to ``sys.stdout`` (looked up at each call, so redirection
    works); notes, progress bars and the summary line to ``sys.stderr`` unless quiet.
    Progress bars only appear when stderr is a terminal.
    """

    def __init__(self, *, quiet: bool = False) -> None:
        self.quiet = quiet

    def out(self, text: str = "") -> None:
        print(text, file=sys.stdout, flush=True)

    def note(self, text: str) -> None:
        if not self.quiet:
            print(text, file=sys.stderr, flush=True)

    def error(self, text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    @property
    def shows_progress(self) -> bool:
        return not self.quiet and _isatty(sys.stderr)

    def progress(self, **options: Any):
        """A tqdm progress bar on stderr, disabled when not on a terminal or quiet."""
        from tqdm import tqdm

        return tqdm(file=sys.stderr, disable=not self.shows_progress, leave=False, **options)

    def summary(self, *, files: int | None = None, records: int | None = None,
                nbytes: int | None = None, seconds: float, verb: str = "") -> None:
        """One line: ``[verb] 3 files, 20,000 records, 1.9 MB in 0.41 s``."""
        parts = []
        if files is not None:
            parts.append(f"{files:,} file{'' if files == 1 else 's'}")
        if records is not None:
            parts.append(f"{records:,} record{'' if records == 1 else 's'}")
        if nbytes is not None:
            parts.append(human_bytes(nbytes))
        prefix = f"{verb} " if verb else ""
        self.note(f"{prefix}{', '.join(parts)} in {seconds:.2f} s")


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def human_bytes(n: int) -> str:
    """``1908565`` -> ``'1.9 MB'`` (powers of 1000, as file managers show).

    Examples
    --------
    >>> human_bytes(512), human_bytes(1908565), human_bytes(3_200_000_000)
    ('512 B', '1.9 MB', '3.2 GB')
    """
    value = float(n)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if value < 1000 or unit == "TB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


# ======================================================================================
# SQL scripts: splitting into statements, ${param} substitution
# ======================================================================================

_DOLLAR_QUOTE = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$")
_PARAM = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True)
class Statement:
    """One statement of a SQL script.

    Attributes
    ----------
    sql : str
        Its text without comments, surrounding blanks and the closing ``;`` (line
        breaks are kept, so line numbers inside it still count).
    line : int
        1-based line of the script where it starts.
    """

    sql: str
    line: int

    @property
    def first_line(self) -> str:
        """The statement's first line (for messages)."""
        return self.sql.splitlines()[0].strip()


def split_statements(script: str) -> list[Statement]:
    """Split a SQL script at the ``;`` that end statements.

    Semicolons inside '' strings, "" identifiers, $$ dollar-quoted strings and
    comments (``--`` and ``/* */``) do not count; comments are dropped. A last
    statement without ``;`` counts too.

    Examples
    --------
    >>> [(s.line, s.sql) for s in split_statements("-- setup\\nSELECT ';';\\n\\nSELECT 2 /* ; */")]
    [(2, "SELECT ';'"), (4, 'SELECT 2')]
    """
    statements, rest = _split_complete(script)
    tail = _strip_comments(script[rest:])
    if tail.strip():
        statements.append(_statement(tail, 1 + script.count("\n", 0, rest)))
    return statements


def _split_complete(script: str) -> tuple[list[Statement], int]:
    """The statements closed by a ``;`` and the index where the unfinished rest starts."""
    statements: list[Statement] = []
    start = 0
    i, n = 0, len(script)
    while i < n:
        kind, end = _token(script, i)
        if kind == "char" and script[i] == ";":
            text = _strip_comments(script[start:i])
            if text.strip():
                statements.append(_statement(text, 1 + script.count("\n", 0, start)))
            start = end
        i = end
    return statements, start


def _token(text: str, i: int) -> tuple[str, int]:
    """The kind of the SQL token at ``i`` and the index after it.

    Kinds: ``"quoted"`` (a quoted string or identifier, or a dollar-quoted body: a ``;``
    or comment marker inside does not count), ``"line comment"`` (up to, not including,
    its line break), ``"block comment"``, or ``"char"`` (any other single character).
    An unclosed token runs to the end of ``text``.
    """
    n = len(text)
    ch = text[i]
    if ch in "'\"":
        return "quoted", _end_of_quoted(text, i, ch)
    if text.startswith("--", i):
        end = text.find("\n", i)
        return "line comment", n if end < 0 else end
    if text.startswith("/*", i):
        end = text.find("*/", i + 2)
        return "block comment", n if end < 0 else end + 2
    if ch == "$" and (match := _DOLLAR_QUOTE.match(text, i)):
        end = text.find(match.group(0), match.end())
        return "quoted", n if end < 0 else end + len(match.group(0))
    return "char", i + 1


def _end_of_quoted(script: str, i: int, quote: str) -> int:
    """Index after the quote that closes the one at ``i`` (doubled quotes escape)."""
    j = i + 1
    while True:
        k = script.find(quote, j)
        if k < 0:
            return len(script)
        if script.startswith(quote, k + 1):
            j = k + 2
            continue
        return k + 1


def _strip_comments(text: str) -> str:
    """``text`` without comments; a block comment leaves its line breaks."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        kind, j = _token(text, i)
        if kind == "block comment":
            out.append("\n" * text.count("\n", i, j) or " ")
        elif kind != "line comment":
            out.append(text[i:j])
        i = j
    return "".join(out)


def _statement(text: str, first_line: int) -> Statement:
    leading = text[: len(text) - len(text.lstrip())]
    return Statement(text.strip(), first_line + leading.count("\n"))


def substitute_params(statement: Statement, params: Mapping[str, str], *,
                      used: set[str] | None = None) -> tuple[str, list[tuple[str, int]]]:
    """Replace ``${name}`` (or ``${name:-default}``) in a statement by its value.

    The replacement is textual: write ``'${src}'`` where a string literal is meant.

    Returns
    -------
    (str, list of (name, line))
        The text, and the placeholders that have neither a value nor a default.

    Examples
    --------
    >>> stmt = Statement("SELECT * FROM tfrecord_scan('${src}') LIMIT ${n:-10}", 1)
    >>> substitute_params(stmt, {"src": "data/"})
    ("SELECT * FROM tfrecord_scan('data/') LIMIT 10", [])
    """
    missing: list[tuple[str, int]] = []

    def replace(match: re.Match) -> str:
        name, default = match.group(1), match.group(2)
        if name in params:
            if used is not None:
                used.add(name)
            return params[name]
        if default is not None:
            return default
        missing.append((name, statement.line + statement.sql.count("\n", 0, match.start())))
        return match.group(0)

    return _PARAM.sub(replace, statement.sql), missing


def parse_params(items: Sequence[str]) -> dict[str, str]:
    """``["src=data/", "n=5"]`` -> ``{"src": "data/", "n": "5"}``.

    Examples
    --------
    >>> parse_params(["src=data/", "where=a=b"])
    {'src': 'data/', 'where': 'a=b'}
    """
    params: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise UsageError(f"--param {item!r}: expected NAME=VALUE with NAME made of letters, digits and _")
        params[name] = value
    return params


# ======================================================================================
# Running SQL through the tfsql DuckDB front end
# ======================================================================================

_ROW_STATEMENTS = {"SELECT", "EXPLAIN", "PRAGMA", "CALL", "EXECUTE", "RELATION"}


class StatementError(Exception):
    """A statement of a script failed; wraps the original error."""

    def __init__(self, source: str, statement: Statement, error: BaseException) -> None:
        super().__init__(
            f"{source}, line {statement.line}: {statement.first_line}\n{_error_text(error)}"
        )
        self.error = error


class SQLSession:
    """A connection of the tfsql DuckDB front end and the display of results."""

    def __init__(self, console: Console, *, database: str | None = None, max_rows: int = DEFAULT_MAX_ROWS) -> None:
        self.console = console
        self.database = database
        self.max_rows = max_rows
        self._connection = None

    @property
    def connection(self):
        if self._connection is None:
            import tfsql.duckdb

            self._connection = tfsql.duckdb.connect(self.database)
        return self._connection

    def query(self, sql: str):
        """Run one statement; the result relation (None for statements without rows)."""
        return self.connection.sql(sql)

    def run(self, sql: str, *, show: bool = True):
        """Run one statement and print its rows if it is a query (for COPY, INSERT,
        CREATE ... AS: the row count, on stderr). A ``COPY ... (FORMAT tfrecord)`` shows
        a progress bar of the rows written."""
        if statement_type(sql) == "COPY":
            with self.console.progress(unit=" rows", desc="COPY") as bar:
                self.connection.copy_progress = bar.update
                try:
                    result = self.query(sql)
                finally:
                    self.connection.copy_progress = None
        else:
            result = self.query(sql)
        if not show or result is None:
            return result
        kind = statement_type(sql)
        if kind is None or kind in _ROW_STATEMENTS:
            show_relation(result, max_rows=self.max_rows)
        elif list(getattr(result, "columns", [])) == ["Count"]:
            count = result.fetchall()[0][0]  # the result of an executed statement: no re-run
            self.console.note(f"{kind}: {count:,} row{'' if count == 1 else 's'}")
        return result

    def set_variables(self, params: Mapping[str, str]) -> None:
        """Make each param available as ``getvariable('name')`` too (DuckDB >= 1.1)."""
        for name, value in params.items():
            with contextlib.suppress(Exception):
                self.connection.execute(f"SET VARIABLE {name} = {sql_literal(value)}")


def sql_literal(text: str) -> str:
    """A SQL string literal.

    Examples
    --------
    >>> sql_literal("it's")
    "'it''s'"
    """
    return "'" + text.replace("'", "''") + "'"


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


def relation_reader(relation, *, batch_rows: int = 65_536) -> pa.RecordBatchReader:
    """The rows of a DuckDB relation as a ``pyarrow.RecordBatchReader`` (streamed)."""
    for name in ("to_arrow_reader", "fetch_arrow_reader", "fetch_record_batch"):
        method = getattr(relation, name, None)
        if method is not None:
            return method(batch_rows)
    return pa.RecordBatchReader.from_stream(relation)


# ======================================================================================
# Writing Arrow streams: csv / json (DuckDB's writers), parquet, tfrecord
# ======================================================================================


@dataclass
class WriteOptions:
    """Options of file outputs (``sql --format``, ``convert``)."""

    partition_by: list[str] = field(default_factory=list)
    compression: str | None = None
    mode: str = "error"
    record_type: str = "example"
    max_rows_per_file: int | None = None


@dataclass
class Counter:
    """Rows and batches seen by :func:`counted`."""

    rows: int = 0


def counted(reader: pa.RecordBatchReader, counter: Counter, *, limit: int | None = None,
            progress=None) -> pa.RecordBatchReader:
    """Wrap a reader to count its rows (and stop after ``limit`` rows)."""

    def batches() -> Iterator[pa.RecordBatch]:
        try:
            for batch in reader:
                if limit is not None and counter.rows + batch.num_rows > limit:
                    batch = batch.slice(0, limit - counter.rows)
                counter.rows += batch.num_rows
                if progress is not None:
                    progress.update(batch.num_rows)
                if batch.num_rows:
                    yield batch
                if limit is not None and counter.rows >= limit:
                    return
        finally:
            reader.close()

    return pa.RecordBatchReader.from_batches(reader.schema, batches())


def write_arrow(reader: pa.RecordBatchReader, fmt: str, output: str | None,
                options: WriteOptions) -> int:
    """Write a stream as ``fmt`` to ``output`` (stdout for csv and json when None).

    Returns the bytes written (0 for stdout).
    """
    if fmt == "tfrecord":
        import tfsql

        if output is None:
            raise UsageError("--format tfrecord writes a directory: pass --output DIR")
        if output.lower().endswith(TFRECORD_FILE_SUFFIXES):
            return _write_tfrecord_file(reader, output, options)
        try:
            result = tfsql.write_tfrecord(
                reader, output, partition_by=options.partition_by or None, compression=options.compression,
                mode=options.mode, record_type=options.record_type, max_rows_per_file=options.max_rows_per_file,
            )
        except FileExistsError as exc:
            if options.mode != "error" or "already holds data" not in str(exc):
                raise
            # the writer's message names its Python keyword (mode='append'); say --mode
            raise FileExistsError(
                f"{output} already holds data; pass --mode append, overwrite, "
                f"overwrite_partitions or ignore, or choose another output"
            ) from None
        return result.bytes
    if options.partition_by:
        raise UsageError(f"--partition-by works with tfrecord output only, not {fmt}")
    if output is None:
        if fmt == "parquet":
            raise UsageError("--format parquet writes a file: pass --output FILE")
        with tempfile.TemporaryDirectory(prefix="tfsql-") as scratch:
            path = os.path.join(scratch, f"result.{fmt}")
            _write_file(reader, fmt, path)
            with open(path, encoding="utf-8") as f:
                shutil.copyfileobj(f, sys.stdout)
            sys.stdout.flush()
        return 0
    _check_output_file(output, options.mode)
    _write_file(reader, fmt, output)
    return os.path.getsize(output)


def _write_tfrecord_file(reader: pa.RecordBatchReader, path: str, options: WriteOptions) -> int:
    """One TFRecord file at ``path`` (compression from ``.gz`` / ``.zz`` unless given):
    written as one shard in a hidden directory next to it, then renamed into place."""
    import tfsql

    if options.partition_by or options.max_rows_per_file:
        raise UsageError(f"{path} names one file: --partition-by and --max-rows-per-file need a directory")
    _check_output_file(path, options.mode)
    compression = options.compression
    if compression is None:
        compression = {".gz": "gzip", ".zz": "zlib"}.get(os.path.splitext(path)[1].lower())
    target = Path(path)
    staging = target.parent / f".{target.name}.tfsql-tmp-{os.getpid()}"
    try:
        result = tfsql.write_tfrecord(reader, str(staging), num_shards=1, compression=compression,
                                      record_type=options.record_type)
        os.replace(result.paths[0], target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return os.path.getsize(target)


def _check_output_file(path: str, mode: str) -> None:
    if mode not in ("error", "overwrite"):
        raise UsageError(f"--mode {mode} applies to tfrecord output; use error or overwrite for a single file")
    if os.path.isdir(path):
        raise UsageError(f"{path} is a directory; pass a file name for this output format")
    if os.path.exists(path) and mode == "error":
        raise FileExistsError(f"{path} already exists; pass --mode overwrite to replace it")


def _write_file(reader: pa.RecordBatchReader, fmt: str, path: str) -> None:
    if fmt == "parquet":
        import pyarrow.parquet as pq

        with pq.ParquetWriter(path, reader.schema) as writer:
            for batch in reader:
                writer.write_batch(batch)
        return
    import duckdb

    copy_options = {"csv": "FORMAT csv, HEADER", "json": "FORMAT json"}[fmt]
    with contextlib.closing(duckdb.connect()) as scratch:
        scratch.register("tfsql_result", reader)
        scratch.execute(f"COPY tfsql_result TO {sql_literal(path)} ({copy_options})")


# ======================================================================================
# Values for people: head
# ======================================================================================


def format_value(value: Any, *, max_chars: int = 80, max_items: int = 8, top: bool = True) -> str:
    """Render one value of a record for a terminal.

    UTF-8 text as is (truncated with its length), other bytes as ``b'...'`` with their
    length, floats with 6 significant digits, long lists truncated with their length.

    Examples
    --------
    >>> format_value("great product")
    'great product'
    >>> format_value(b"\\x89PNG\\r\\n\\x1a\\n" + bytes(100), max_chars=12)
    "b'\\\\x89PNG\\\\r\\\\n\\\\x1a\\\\n\\\\x00\\\\x00\\\\x00\\\\x00'… (108 bytes)"
    >>> format_value([0.5] * 10, max_items=3)
    '[0.5, 0.5, 0.5, …] (10 values)'
    >>> format_value(None), format_value([]), format_value(["a", "b"])
    ('null', '[]', "['a', 'b']")
    """
    if value is None:
        return "null"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, bytes):
        try:
            text = value.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is not None and (text.isprintable() or not text):
            return format_value(text, max_chars=max_chars, top=top)
        shown = repr(value[:max_chars])
        return f"{shown}{'…' if len(value) > max_chars else ''} ({len(value):,} bytes)"
    if isinstance(value, str):
        text = value.replace("\n", "\\n")
        if len(text) > max_chars:
            text = f"{text[:max_chars]}… ({len(value):,} chars)"
        return text if top else repr(text)
    if isinstance(value, (list, tuple)):
        inner = [format_value(v, max_chars=max(8, max_chars // 4), max_items=max(2, max_items // 2), top=False)
                 for v in value[:max_items]]
        if len(value) > max_items:
            return f"[{', '.join(inner)}, …] ({len(value):,} values)"
        return f"[{', '.join(inner)}]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {format_value(v, top=False)}" for k, v in value.items()) + "}"
    return str(value)


def format_table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """Left-aligned columns separated by two spaces, with a header rule.

    Examples
    --------
    >>> print(format_table(["name", "type"], [["id", "int64"]]))
    name  type
    ----  -----
    id    int64
    """
    rows = [list(map(str, r)) for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(lines)


def type_name(t: pa.DataType) -> str:
    """A short Arrow type name: ``list<float>`` rather than ``list<item: float>``.

    Examples
    --------
    >>> type_name(pa.list_(pa.list_(pa.float32())))
    'list<list<float>>'
    """
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return f"list<{type_name(t.value_type)}>"
    if pa.types.is_fixed_size_list(t):
        return f"fixed_size_list<{type_name(t.value_type)}, {t.list_size}>"
    return str(t)


def feature_kind(t: pa.DataType) -> str:
    """The tf.train.Feature kind a column reads from / writes to.

    Examples
    --------
    >>> feature_kind(pa.list_(pa.float32())), feature_kind(pa.string())
    ('float_list', 'bytes_list')
    """
    depth = 0
    while pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        t, depth = t.value_type, depth + 1
    if pa.types.is_floating(t) or pa.types.is_decimal(t):
        kind = "float_list"
    elif pa.types.is_string(t) or pa.types.is_binary(t) or pa.types.is_large_string(t) or pa.types.is_large_binary(t):
        kind = "bytes_list"
    else:
        kind = "int64_list"
    return f"feature_list of {kind}" if depth >= 2 else kind


# ======================================================================================
# Commands
# ======================================================================================


def _dataset_options(args: argparse.Namespace) -> dict[str, Any]:
    compression = getattr(args, "input_compression", None) or getattr(args, "compression", "infer")
    return {
        "record_type": args.record_type,
        "compression": None if compression == "none" else compression,
    }


def _open_dataset(path: str, args: argparse.Namespace, **extra: Any):
    import tfsql

    return tfsql.dataset(path, **_dataset_options(args), **extra)


def _open_files(path: str, args: argparse.Namespace):
    """The dataset's files without inferring a schema (raw records): count, verify."""
    import tfsql

    options = _dataset_options(args)
    options["record_type"] = "bytes"
    return tfsql.dataset(path, **options)


def _file_size(path: str) -> int:
    if os.path.exists(path):
        return os.path.getsize(path)
    import fsspec

    fs, inner = fsspec.core.url_to_fs(path)
    return int(fs.size(inner))


def cmd_sql(args: argparse.Namespace, console: Console) -> int:
    """``tfsql sql QUERY``."""
    statements = split_statements(args.query)
    if not statements:
        raise UsageError("the query is empty")
    fmt = args.format or _format_from_extension(args.output) or "table"
    if fmt in ("parquet", "tfrecord") and not args.output:
        raise UsageError(f"--format {fmt} writes to a file or directory: pass --output")
    if fmt == "table" and args.output:
        raise UsageError("--output needs --format csv, json, parquet or tfrecord (or a file extension that names one)")
    max_rows = args.max_rows if args.max_rows is not None else (DEFAULT_MAX_ROWS if fmt == "table" else 0)
    session = SQLSession(console, database=args.database, max_rows=max_rows)
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
        nbytes = write_arrow(reader, fmt, args.output, _write_options(args))
    if args.output:
        console.summary(records=counter.rows, nbytes=nbytes, seconds=time.perf_counter() - started,
                        verb=f"wrote {args.output}:")
    return EXIT_OK


def _run_statement(session: SQLSession, statement: Statement, *, source: str, sql: str | None = None,
                   show: bool = True) -> None:
    try:
        session.run(statement.sql if sql is None else sql, show=show)
    except Exception as exc:
        raise StatementError(source, statement, exc) from exc


def _write_options(args: argparse.Namespace) -> WriteOptions:
    return WriteOptions(
        partition_by=[c.strip() for c in (args.partition_by or "").split(",") if c.strip()],
        compression=None if args.compression in (None, "none") else args.compression,
        mode=args.mode,
        record_type=args.record_type,
        max_rows_per_file=getattr(args, "max_rows_per_file", None),
    )


def cmd_run(args: argparse.Namespace, console: Console) -> int:
    """``tfsql run FILE.sql --param name=value``."""
    params = parse_params(args.param or [])
    if args.file == "-":
        source, script = "<stdin>", sys.stdin.read()
    else:
        source = args.file
        try:
            script = Path(args.file).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise FileNotFoundError(f"no such SQL script: {args.file}") from None
    session = SQLSession(console, database=args.database,
                         max_rows=DEFAULT_MAX_ROWS if args.max_rows is None else args.max_rows)
    return run_script(session, script, params, source=source, echo=args.echo)


def run_script(session: SQLSession, script: str, params: Mapping[str, str], *, source: str,
               echo: bool = False) -> int:
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
            f"{source}, line {line}: ${{{name}}} has no value; pass "
            + " ".join(f"--param {n}=VALUE" for n in names)
        )
    for name in sorted(set(params) - used):
        console.note(f"warning: --param {name} is not used by {source}")
    session.set_variables(params)
    started = time.perf_counter()
    for statement, text in prepared:
        if echo:
            console.out(f"-- {source}, line {statement.line}: {statement.first_line}")
        _run_statement(session, statement, source=source, sql=text)
    n = len(prepared)
    console.note(f"ran {n} statement{'' if n == 1 else 's'} of {source} in {time.perf_counter() - started:.2f} s")
    return EXIT_OK


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


def cmd_schema(args: argparse.Namespace, console: Console) -> int:
    """``tfsql schema PATH``."""
    extra: dict[str, Any] = {"lists": args.lists}
    if args.infer_sample is not None:
        extra["infer_sample"] = args.infer_sample or None
    ds = _open_dataset(args.path, args, **extra)
    partition_names = set(ds.partition_schema.names)
    columns = [
        {
            "name": f.name,
            "type": type_name(f.type),
            "feature": "hive partition" if f.name in partition_names else (
                "raw record" if args.record_type == "bytes" else feature_kind(f.type)),
            "partition": f.name in partition_names,
        }
        for f in ds.schema
    ]
    if args.json:
        console.out(json.dumps({"record_type": args.record_type, "files": len(ds.files), "columns": columns}, indent=2))
        return EXIT_OK
    console.out(format_table(["column", "type", "feature"], [[c["name"], c["type"], c["feature"]] for c in columns]))
    n = len(ds.files)
    console.out(f"\n{len(columns)} columns ({len(partition_names)} from partition directories), "
                f"{n} file{'' if n == 1 else 's'}, record type {args.record_type}")
    return EXIT_OK


def cmd_head(args: argparse.Namespace, console: Console) -> int:
    """``tfsql head PATH -n 5``."""
    if args.n < 0:
        raise UsageError("-n must be >= 0")
    ds = _open_dataset(args.path, args)
    columns = [c.strip() for c in args.columns.split(",")] if args.columns else None
    if columns:
        unknown = [c for c in columns if c not in ds.schema.names]
        if unknown:
            raise UsageError(f"no column {unknown[0]!r}; the columns are {', '.join(ds.schema.names)}")
    table = ds.head(args.n, columns=columns)
    if args.format != "table":
        write_arrow(table.to_reader(), args.format, None, WriteOptions())
        return EXIT_OK
    names = table.column_names
    width = max((len(n) for n in names), default=0)
    for i, record in enumerate(table.to_pylist()):
        console.out(f"{'' if i == 0 else chr(10)}-- record {i} --")
        for name in names:
            console.out(f"{name.ljust(width)}  {format_value(record[name], max_chars=args.max_chars)}")
    if table.num_rows == 0:
        console.note("(no records)")
    return EXIT_OK


def cmd_count(args: argparse.Namespace, console: Console) -> int:
    """``tfsql count PATH``: record headers only, no decoding."""
    started = time.perf_counter()
    ds = _open_files(args.path, args)
    fragments = ds.get_fragments()
    total = nbytes = 0
    rows: list[tuple[int, str]] = []
    with console.progress(total=len(fragments), unit=" files", desc="count") as bar:
        for fragment in fragments:
            n = fragment.count_rows()
            total += n
            nbytes += _file_size(fragment.path)
            rows.append((n, fragment.path))
            bar.update(1)
    if args.per_file:
        width = len(f"{total:,}")
        for n, path in rows:
            console.out(f"{n:>{width},}  {path}")
        console.out(f"{total:>{width},}  total")
    else:
        console.out(str(total))
    console.summary(files=len(fragments), records=total, nbytes=nbytes, seconds=time.perf_counter() - started,
                    verb="counted")
    return EXIT_OK


@dataclass(frozen=True)
class Problem:
    """One corrupt record (or unreadable stretch) found by ``verify``."""

    path: str
    record_index: int | None
    offset: int | None
    message: str


def _verifying_reader(stream, *, path: str, problems: list[Problem]):
    """A FrameReader that records each corrupt record in ``problems`` and goes on
    where the framing allows, instead of raising or warning."""
    from tfsql.records import FrameReader

    def record(error) -> None:
        message = str(error)
        if error.rest_of_file:
            message += "; the rest of the file cannot be framed"
        problems.append(Problem(path, error.record_index, error.offset, message))

    return FrameReader(stream, path=path, verify=True, on_corrupt=record)


def cmd_verify(args: argparse.Namespace, console: Console) -> int:
    """``tfsql verify PATH``: frame every record, check every CRC, report each problem."""
    import fsspec

    from tfsql.errors import TFSQLError
    from tfsql.records import normalize_compression, open_decompressed

    started = time.perf_counter()
    files = [fragment.path for fragment in _open_files(args.path, args).get_fragments()]
    compression = normalize_compression(_dataset_options(args)["compression"])
    problems: list[Problem] = []
    decoder = None
    if args.decode:
        decoder, problem = _verify_decoder(args)
        if problem is not None:
            problems.append(problem)
            console.out(f"CORRUPT {problem.message}")
            console.out("(no schema could be inferred, so the records are framed and CRC-checked, not decoded)")
    records = nbytes = 0
    with console.progress(total=len(files), unit=" files", desc="verify") as bar:
        for path in files:
            before = len(problems)
            nbytes += _file_size(path)
            fs, inner = fsspec.core.url_to_fs(path)
            raw = fs.open(inner, "rb")
            try:
                stream = open_decompressed(raw, compression, path=path)
                reader = _verifying_reader(stream, path=path, problems=problems)
                for block in reader.blocks():
                    records += len(block)
                    if decoder is not None:
                        problems += _decode_problems(decoder, block)
            except TFSQLError as exc:  # e.g. a corrupt or truncated gzip stream
                problems.append(Problem(path, getattr(exc, "record_index", None), getattr(exc, "offset", None), str(exc)))
            finally:
                raw.close()
            for problem in problems[before:]:
                bar.clear()
                console.out(f"CORRUPT {problem.message}")
            bar.update(1)
    seconds = time.perf_counter() - started
    bad_files = len({problem.path for problem in problems})
    if problems:
        console.out(f"FAILED: {len(problems)} problem{'' if len(problems) == 1 else 's'} in {bad_files} of "
                    f"{len(files)} files ({records:,} good records)")
    else:
        what = "framed, CRC-checked and decoded" if decoder is not None else "framed and CRC-checked"
        console.out(f"OK: {records:,} records in {len(files)} file{'' if len(files) == 1 else 's'} {what}")
    console.summary(files=len(files), records=records, nbytes=nbytes, seconds=seconds, verb="verified")
    return EXIT_DATA if problems else EXIT_OK


def _verify_decoder(args: argparse.Namespace) -> tuple[Any, Problem | None]:
    """A decoder of every column of the inferred schema, or the problem that stopped
    inference (a record in the inference sample that does not decode)."""
    from tfsql.decode import BlockDecoder
    from tfsql.errors import TFSQLError
    from tfsql.schema import column_specs, parse_record_type

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # framing problems are reported by the check itself
            ds = _open_dataset(args.path, args, on_corrupt="skip")
    except TFSQLError as exc:
        return None, Problem(getattr(exc, "path", None) or args.path, getattr(exc, "record_index", None),
                             getattr(exc, "offset", None), str(exc))
    code = parse_record_type(args.record_type)
    return BlockDecoder(column_specs(ds.data_schema, code), code), None


def _decode_problems(decoder, block) -> list[Problem]:
    """Decode a block; when that fails, decode its records one by one to name each bad one."""
    from tfsql.errors import TFSQLError
    from tfsql.records import RecordBlock

    try:
        decoder.decode(block)
        return []
    except TFSQLError:
        pass
    problems = []
    for i in range(len(block)):
        single = RecordBlock(block.buf, block.offsets[i:i + 1], block.lengths[i:i + 1],
                             block.first_index + i, block.base_offset, block.path)
        try:
            decoder.decode(single)
        except TFSQLError as exc:
            problems.append(Problem(block.path, block.first_index + i, block.record_offset(i), str(exc)))
    return problems


def _format_from_extension(path: str | None) -> str | None:
    if not path:
        return None
    name = path.lower().rstrip("/")
    for suffixes, fmt in (((".parquet", ".pq"), "parquet"), ((".csv",), "csv"),
                          ((".json", ".jsonl", ".ndjson"), "json"),
                          (TFRECORD_FILE_SUFFIXES, "tfrecord")):
        if name.endswith(suffixes):
            return fmt
    return None


def _source_format(path: str, explicit: str | None) -> str:
    if explicit:
        return explicit
    fmt = _format_from_extension(path)
    if fmt:
        return fmt
    if os.path.isdir(path):
        for root, _, names in os.walk(path):
            for name in names:
                if not name.startswith(("_", ".")) and (found := _format_from_extension(name)):
                    return found
    return "tfrecord"


def cmd_convert(args: argparse.Namespace, console: Console) -> int:
    """``tfsql convert SRC DST``."""
    import pyarrow.dataset as pads

    import tfsql

    started = time.perf_counter()
    source_format = _source_format(args.src, args.source_format)
    target_format = args.to or _format_from_extension(args.dst) or "tfrecord"
    if source_format == "tfrecord":
        ds = tfsql.dataset(args.src, record_type=args.record_type,
                           compression=None if args.input_compression == "none" else args.input_compression)
        n_files, reader = len(ds.files), ds.scanner().to_reader()
    else:
        if not os.path.exists(args.src) and not any(ch in args.src for ch in "*?["):
            raise FileNotFoundError(f"no such file or directory: {args.src}")
        source = pads.dataset(args.src, format=source_format, partitioning="hive")
        n_files, reader = len(source.files), source.scanner().to_reader()
    if target_format != "tfrecord" and args.compression not in (None, "none"):
        raise UsageError(f"--compression applies to tfrecord output, not {target_format}")
    counter = Counter()
    with console.progress(unit=" rows", unit_scale=True, desc="convert") as bar:
        nbytes = write_arrow(counted(reader, counter, progress=bar), target_format, args.dst, _write_options(args))
    console.summary(files=n_files, records=counter.rows, nbytes=nbytes, seconds=time.perf_counter() - started,
                    verb=f"converted {source_format} -> {target_format} {args.dst}:")
    return EXIT_OK


def cmd_demo(args: argparse.Namespace, console: Console) -> int:
    """``tfsql demo [DIR]``."""
    from tfsql.demo import run_demo

    run_demo(args.directory, rows=args.rows, seed=args.seed, echo=console.out)
    return EXIT_OK


# ======================================================================================
# The parser
# ======================================================================================

EXIT_STATUS_HELP = """\
exit status:
  0  success
  1  a data problem: corrupt or truncated records (verify found any), data that does
     not fit the schema, a query that fails on valid SQL, an I/O error
  2  a usage problem: a bad option or argument, a missing input path, an output that
     exists (see --mode), an unset ${param}, SQL that does not parse or bind"""

MAIN_DESCRIPTION = """\
SQL and tools for TFRecord files (tf.train.Example, SequenceExample, raw records).
Without a command, tfsql starts an interactive SQL shell (or runs the SQL script on
standard input when it is not a terminal). In SQL, tfrecord_scan('path', option := value)
reads TFRecord files and COPY (query) TO 'dir' (FORMAT tfrecord, PARTITION_BY (col),
COMPRESSION gzip) writes them."""

RUN_DESCRIPTION = """\
Run a SQL script statement by statement through the tfsql DuckDB front end, printing
the rows of each query (SELECT, DESCRIBE, SUMMARIZE, SHOW...). Stops at the first
failing statement, printing its line in the file and its first line.

Parameters: ${name} in the script is replaced by the value of --param name=VALUE before
the statement runs (textual replacement: write '${src}' where a string is meant);
${name:-default} uses the default when the param is not given. Placeholders inside
comments are ignored. Every param is also set as a DuckDB variable, readable with
getvariable('name'). A placeholder with neither value nor default stops the script
before anything runs (exit 2)."""


class _Formatter(argparse.RawDescriptionHelpFormatter):
    pass


def _common(quiet_default: Any = False) -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    group = common.add_argument_group("output")
    group.add_argument("-q", "--quiet", action="store_true", default=quiet_default,
                       help="no progress bars, summary line or warnings on stderr")
    group.add_argument("--debug", action="store_true", default=quiet_default,
                       help="print the full traceback of an error")
    return common


def _add_read_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("reading")
    group.add_argument("--record-type", choices=RECORD_TYPES, default="example",
                       help="what the records hold: tf.train.Example (default), SequenceExample, or "
                            "raw bytes (one binary column 'record')")
    group.add_argument("--compression", choices=READ_COMPRESSIONS, default="infer",
                       help="compression of the files; 'infer' (default) detects gzip and zlib per file "
                            "from their first bytes")


def _add_write_options(parser: argparse.ArgumentParser, *, tfrecord_help: str) -> None:
    group = parser.add_argument_group("writing", tfrecord_help)
    group.add_argument("--partition-by", metavar="COL[,COL...]",
                       help="tfrecord output: write hive key=value directories of these columns")
    group.add_argument("--compression", choices=WRITE_COMPRESSIONS, default=None,
                       help="tfrecord output: gzip or zlib stream compression (files get .gz / .zz); "
                            "default none")
    group.add_argument("--mode", choices=WRITE_MODES, default="error",
                       help="when the output exists: error (default), append, overwrite, "
                            "overwrite_partitions (only the partitions written), ignore (write nothing); "
                            "single-file outputs accept error and overwrite")
    group.add_argument("--record-type", choices=RECORD_TYPES, default="example",
                       help="tfrecord output: Example (default), SequenceExample (list-of-list columns "
                            "become feature lists) or raw bytes (one binary column)")
    group.add_argument("--max-rows-per-file", type=_positive_int, metavar="N",
                       help="tfrecord output: start a new file after N records")


def _positive_int(text: str) -> int:
    return _int_at_least(text, 1, "a positive integer")


def _non_negative_int(text: str) -> int:
    return _int_at_least(text, 0, "an integer >= 0")


def _int_at_least(text: str, minimum: int, expected: str) -> int:
    """An integer option value of at least ``minimum`` (``expected`` names it in errors)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The ``tfsql`` argument parser (every subcommand and option, with help)."""
    import tfsql

    parser = argparse.ArgumentParser(
        prog="tfsql", description=MAIN_DESCRIPTION, epilog=EXIT_STATUS_HELP,
        formatter_class=_Formatter, parents=[_common()],
    )
    parser.add_argument("--version", action="version", version=f"tfsql {tfsql.__version__}")
    parser.add_argument("-d", "--database", metavar="FILE",
                        help="shell: DuckDB database file to open (default: in memory)")
    parser.set_defaults(handler=cmd_shell, max_rows=None)
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")
    common = _common(argparse.SUPPRESS)

    def command(name: str, help: str, description: str | None = None, **kw: Any) -> argparse.ArgumentParser:
        return commands.add_parser(name, help=help, description=description or help, epilog=EXIT_STATUS_HELP,
                                   formatter_class=_Formatter, parents=[common], **kw)

    database_help = "DuckDB database file to open (default: in memory); tables persist there between runs"

    p = command("sql", "run SQL (one or more statements) and print or save the result",
                "Run SQL through the tfsql DuckDB front end and print the result of the last statement\n"
                "as a table, or write it as csv/json (stdout or --output), parquet or tfrecord (--output).\n"
                "Example: tfsql sql \"SELECT label, count(*) FROM tfrecord_scan('data/') GROUP BY 1\"")
    p.add_argument("query", help="SQL text; statements separated by ';' run in order")
    p.add_argument("-f", "--format", choices=RESULT_FORMATS,
                   help="table (default on stdout), csv, json (JSON lines), parquet, tfrecord; "
                        "default from the --output extension")
    p.add_argument("-o", "--output", metavar="PATH",
                   help="file (csv, json, parquet) or directory (tfrecord; one file when the name ends "
                        "in .tfrecord, .tfrecord.gz or .tfrecord.zz) to write; csv and json go to stdout "
                        "without it")
    p.add_argument("--max-rows", type=_non_negative_int, metavar="N",
                   help=f"rows to show or write: default {DEFAULT_MAX_ROWS} for the table display "
                        "(longer results show their head and tail), all rows for other formats; 0: all")
    p.add_argument("-d", "--database", metavar="FILE", help=database_help)
    _add_write_options(p, tfrecord_help="options of --output files (tfrecord options need --format tfrecord)")
    p.set_defaults(handler=cmd_sql)

    p = command("run", "run a SQL script statement by statement, with ${param} substitution",
                RUN_DESCRIPTION)
    p.add_argument("file", help="the .sql script ('-' reads standard input)")
    p.add_argument("-p", "--param", action="append", metavar="NAME=VALUE",
                   help="value of ${NAME} in the script; repeat for several params")
    p.add_argument("--max-rows", type=_non_negative_int, metavar="N",
                   help=f"rows to show of each query result (default {DEFAULT_MAX_ROWS}; 0: all)")
    p.add_argument("--echo", action="store_true", help="print each statement's line and first line before it runs")
    p.add_argument("-d", "--database", metavar="FILE", help=database_help)
    p.set_defaults(handler=cmd_run)

    p = command("shell", "interactive SQL shell (also what bare 'tfsql' starts)",
                "Interactive SQL shell with history (~/.tfsql_history, or $TFSQL_HISTORY).\n"
                "Statements end with ';' and may span lines; .help lists the dot commands.\n"
                "When standard input is not a terminal, it is run as a script instead.")
    p.add_argument("--max-rows", type=_non_negative_int, metavar="N",
                   help=f"rows to show of each result (default {DEFAULT_MAX_ROWS}; 0: all)")
    p.add_argument("-d", "--database", metavar="FILE", help=database_help)
    p.set_defaults(handler=cmd_shell)

    p = command("schema", "print the schema inferred from TFRecord files",
                "Print the Arrow schema tfsql infers for PATH: one row per column with its type and\n"
                "the tf.train.Feature kind it comes from; hive key=value directories add partition\n"
                "columns after the data columns.")
    p.add_argument("path", help="file, directory (read recursively), glob or URL")
    p.add_argument("--json", action="store_true", help="print JSON: {record_type, files, columns: [{name, type, feature, partition}]}")
    p.add_argument("--infer-sample", type=_non_negative_int, metavar="N",
                   help="records read per file for inference (default 1000; 0: all records)")
    p.add_argument("--lists", choices=("auto", "always"), default="auto",
                   help="auto: a feature with at most one value per sampled record is a scalar column; "
                        "always: every feature is a list column")
    _add_read_options(p)
    p.set_defaults(handler=cmd_schema)

    p = command("head", "print the first records, readably",
                "Print the first records of PATH, one 'column  value' line per feature. UTF-8 text is\n"
                "shown as is, other bytes as b'...' with their length, long lists and strings are\n"
                "truncated with their length.")
    p.add_argument("path", help="file, directory (read recursively), glob or URL")
    p.add_argument("-n", type=int, default=5, metavar="N", help="number of records (default 5)")
    p.add_argument("-c", "--columns", metavar="COL[,COL...]", help="only these columns")
    p.add_argument("--max-chars", type=_positive_int, default=80, metavar="N",
                   help="truncate text and bytes after N characters (default 80)")
    p.add_argument("-f", "--format", choices=("table", "csv", "json"), default="table",
                   help="table (default: readable), csv or json (JSON lines, full values)")
    _add_read_options(p)
    p.set_defaults(handler=cmd_head)

    p = command("count", "count records, reading only the record headers",
                "Count the records of PATH without decoding them (only the 12-byte record headers\n"
                "are read; compressed files are decompressed).")
    p.add_argument("path", help="file, directory (read recursively), glob or URL")
    p.add_argument("--per-file", action="store_true", help="print each file's count, then the total")
    _add_read_options(p)
    p.set_defaults(handler=cmd_count)

    p = command("verify", "check every record's framing and CRCs; report each corrupt record",
                "Read every record of PATH checking the length and data CRCs, and report EACH problem\n"
                "with its file, record index and byte offset (in the decompressed stream for gzip and\n"
                "zlib files). A record with a bad data CRC is skipped and checking goes on; a bad\n"
                "length or a truncated record ends the check of that file. Exit status 1 when any\n"
                "problem was found.")
    p.add_argument("path", help="file, directory (read recursively), glob or URL")
    p.add_argument("--decode", action="store_true",
                   help="also parse every record as the --record-type protobuf against the inferred schema")
    _add_read_options(p)
    p.set_defaults(handler=cmd_verify)

    p = command("convert", "convert between TFRecord and Parquet, CSV or JSON",
                "Convert SRC to DST, streaming. Formats come from the extensions (.parquet, .csv,\n"
                ".json/.jsonl, .tfrecord[.gz]; a directory is TFRecord unless it holds files of another\n"
                "format) or from --from / --to. TFRecord output is a directory of part files.\n"
                "Examples:\n"
                "  tfsql convert data.parquet out/ --partition-by label --compression gzip\n"
                "  tfsql convert out/ data.parquet")
    p.add_argument("src", help="source file, directory or glob")
    p.add_argument("dst", help="target file (parquet, csv, json, or one .tfrecord[.gz] file) or "
                               "directory (tfrecord)")
    p.add_argument("--from", dest="source_format", choices=FILE_FORMATS, help="source format (default: from SRC)")
    p.add_argument("--to", choices=FILE_FORMATS, help="target format (default: from DST's extension, else tfrecord)")
    p.add_argument("--input-compression", choices=READ_COMPRESSIONS, default="infer",
                   help="compression of TFRecord input (default: infer per file)")
    _add_write_options(p, tfrecord_help="options of the output (--record-type also applies to TFRecord input)")
    p.set_defaults(handler=cmd_convert)

    p = command("demo", "generate a small TFRecord dataset and run example queries on it",
                "Generate synthetic product reviews (id, label, split, score, text, emb, tags) as\n"
                "hive-partitioned gzip TFRecord under DIR/reviews (no download), then run SQL\n"
                "queries, a COPY to DIR/splits and a Polars query on them.")
    p.add_argument("directory", nargs="?", default="demo-data", metavar="DIR",
                   help="output directory (default ./demo-data); its reviews/ and splits/ are replaced")
    p.add_argument("--rows", type=_positive_int, default=20_000, metavar="N", help="reviews to generate (default 20000)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.set_defaults(handler=cmd_demo)
    return parser


# ======================================================================================
# main and errors
# ======================================================================================

_DUCKDB_USAGE_ERRORS = ("ParserException", "SyntaxException", "BinderException", "CatalogException")


def exit_status(error: BaseException) -> int:
    """The exit status for an error: 1 for data problems, 2 for usage problems.

    Examples
    --------
    >>> import tfsql
    >>> exit_status(tfsql.CorruptRecordError("bad")), exit_status(FileNotFoundError("x"))
    (1, 2)
    """
    from tfsql.errors import TFSQLError

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
    if isinstance(error, (ValueError, TypeError, KeyError)):  # incl. tfsql.duckdb's BinderError
        return EXIT_USAGE
    duckdb = sys.modules.get("duckdb")
    if duckdb is not None and isinstance(error, duckdb.Error):
        names = {cls.__name__ for cls in type(error).__mro__}
        if names & set(_DUCKDB_USAGE_ERRORS):
            return EXIT_USAGE
        if "IOException" in names and ("No files found" in str(error) or "No such file" in str(error)):
            return EXIT_USAGE
    return EXIT_DATA


def _is_known(error: BaseException) -> bool:
    """Errors whose message is enough (no hint about --debug)."""
    duckdb = sys.modules.get("duckdb")
    return (type(error).__module__.startswith("tfsql")
            or isinstance(error, (StatementError, pa.ArrowException, OSError))
            or (duckdb is not None and isinstance(error, duckdb.Error)))


def _error_text(error: BaseException) -> str:
    if isinstance(error, StatementError):
        return str(error)
    if isinstance(error, KeyError) and error.args:
        return str(error.args[0])
    text = str(error).strip()
    if isinstance(error, (UsageError, FileNotFoundError, FileExistsError)) or _is_known(error):
        return text or type(error).__name__
    first = text.splitlines()[0] if text else ""
    return f"{type(error).__name__}: {first}" if first else type(error).__name__


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
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version (0) or a usage error (2)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    console = Console(quiet=args.quiet)
    try:
        with warnings.catch_warnings():
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
        status = exit_status(exc)
        console.error(f"tfsql: error: {_error_text(exc)}")
        if args.debug:
            traceback.print_exc(file=sys.stderr)
        elif status == EXIT_DATA and not _is_known(exc):
            console.error("tfsql: (an unexpected error: run with --debug for the traceback)")
        return status


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"tfsql: warning: {message}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
