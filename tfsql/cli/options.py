"""The parser's building blocks: the option groups the subcommands share, option value
types, choices and the longer help texts."""

from __future__ import annotations

import argparse
from typing import Any


RECORD_TYPES = ("example", "sequence_example", "bytes")
READ_COMPRESSIONS = ("infer", "none", "gzip", "zlib")
WRITE_COMPRESSIONS = ("none", "gzip", "zlib")
WRITE_MODES = ("error", "append", "overwrite", "overwrite_partitions", "ignore")


RESULT_FORMATS = ("table", "csv", "json", "markdown", "parquet", "tfrecord")
FILE_FORMATS = ("tfrecord", "parquet", "csv", "json")


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

Parameters: every --param name=VALUE is a DuckDB variable, read in SQL with
getvariable('name') (bound as a value, never spliced into the SQL), e.g.
tfrecord_scan(getvariable('src')). ${name} in the script is also replaced by the value
before the statement runs: write '${src}' where a string is meant (quotes in the value
are doubled, so they cannot end the string); outside quotes (LIMIT ${n}, a column
${key}) the value must be a number or a name. ${name:-default} uses the default when
the param is not given. Placeholders inside comments are ignored. A placeholder with
neither value nor default stops the script before anything runs (exit 2)."""


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


SCHEMA_HELP = (
    "read these columns with these types instead of inferring them: DuckDB column definitions "
    "such as 'id BIGINT NOT NULL, emb FLOAT[], price DECIMAL(10,2), img UTINYINT[28][28]' "
    "(NOT NULL: every record must have the feature; T[a][b]: a tensor), or a .parquet file "
    "whose schema to use"
)


def _add_schema_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--schema", type=_schema, metavar="COLUMNS|FILE.parquet", help=SCHEMA_HELP)


def _schema(text: str) -> Any:
    """``--schema``: DuckDB column definitions, or the schema of a Parquet file."""
    import os

    import pyarrow as pa

    if text.lower().endswith(".parquet") and os.path.isfile(text):
        import pyarrow.parquet as pq

        return pq.read_schema(text).remove_metadata()
    if ";" in text or not text.strip():
        raise argparse.ArgumentTypeError(f"expected column definitions such as 'id BIGINT, emb FLOAT[]', got {text!r}")
    import duckdb

    from tfsql.duckdb import duckdb_type_to_arrow

    con = duckdb.connect()
    try:
        con.execute(f"CREATE TABLE columns_of_schema ({text})")
        described = con.execute("DESCRIBE columns_of_schema").fetchall()
    except duckdb.Error as exc:
        raise argparse.ArgumentTypeError(
            f"expected column definitions such as 'id BIGINT NOT NULL, emb FLOAT[]': {exc}"
        ) from None
    finally:
        con.close()
    return pa.schema([
        pa.field(name, duckdb_type_to_arrow(type_name), nullable=null != "NO")
        for name, type_name, null, *_ in described
    ])


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
                            "csv, json and parquet outputs accept error and overwrite")
    group.add_argument("--record-type", choices=RECORD_TYPES, default="example",
                       help="tfrecord output: Example (default), SequenceExample (list-of-list columns "
                            "become feature lists) or raw bytes (one binary column)")
    group.add_argument("--max-rows-per-file", type=_positive_int, metavar="N",
                       help="tfrecord output: start a new file after N records")
    group.add_argument("--num-shards", type=_positive_int, metavar="N",
                       help="tfrecord output: write exactly N files part-0000k-of-0000N.tfrecord "
                            "(per partition / split)")
    group.add_argument("--tfds", metavar="NAME",
                       help="tfrecord output: write a TensorFlow Datasets directory of dataset NAME "
                            "(splits from a 'split' column or --partition-by COL; loads with "
                            "tfds.builder_from_directory)")


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
