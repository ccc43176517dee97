"""The parser's building blocks: the reading and writing option groups (built from the
option spec, :mod:`tfsql.options`), the mapping from parsed arguments to keyword
arguments of :func:`tfsql.dataset` and :func:`tfsql.write_tfrecord`, option value types
and the longer help texts.

Every option of the spec with a ``cli`` spelling becomes a flag; its value is parsed
and checked by :func:`tfsql.options.from_text`, so the flags accept what the Python
keywords accept. Options not given on the command line are absent from the parsed
arguments, and from :func:`dataset_options` / :func:`writer_options`.

Examples
--------
>>> parser = argparse.ArgumentParser()
>>> add_read_options(parser)
>>> dataset_options(parser.parse_args(["--compression", "none", "--no-verify-checksums", "--infer-sample", "0"]))
{'compression': None, 'verify_checksums': False, 'infer_sample': None}
>>> parser = argparse.ArgumentParser()
>>> add_write_options(parser, tfrecord_help="")
>>> writer_options(parser.parse_args(["--partition-by", "a,b", "--max-bytes-per-file", "64MB"]))
{'partition_by': ('a', 'b'), 'max_bytes_per_file': 64000000}
"""

from __future__ import annotations

import argparse
from typing import Any

from tfsql.options import READ_OPTIONS, WRITE_OPTIONS, Option, OptionError, Spelling, from_text

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
    group.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        default=quiet_default,
        help="no progress bars, summary line or warnings on stderr",
    )
    group.add_argument(
        "--debug", action="store_true", default=quiet_default, help="print the full traceback of an error"
    )
    return common


# --------------------------------------------------------------------------------------
# The reading and writing option groups, from the option spec
# --------------------------------------------------------------------------------------

#: Where parsed option values live in the namespace: ``read_<name>``, ``write_<name>``
#: (``convert`` has both groups, which share option names).
_READ, _WRITE = "read_", "write_"

_METAVARS = {
    "count": "N",
    "count_or_all": "N|all",
    "level": "0-9",
    "size": "BYTES",
    "name": "NAME",
    "text": "TEXT",
    "columns": "NAME[,NAME...]",
    "types": "COLUMNS|FILE.parquet",
}

TYPES_HELP = (
    "DuckDB column definitions such as 'id BIGINT NOT NULL, emb FLOAT[], price DECIMAL(10,2), "
    "img UTINYINT[28][28]' (NOT NULL: every record must have the feature; T[a][b]: a tensor), "
    "or a .parquet file whose schema to use"
)
SCHEMA_HELP = READ_OPTIONS["schema"].doc + ": " + TYPES_HELP


def add_read_options(parser: argparse.ArgumentParser) -> None:
    """The ``reading`` group: a flag for every reading option with a CLI spelling."""
    group = parser.add_argument_group("reading")
    for name, option in READ_OPTIONS.items():
        if option.cli:
            _add_option(group, option, _READ + name)


def add_write_options(parser: argparse.ArgumentParser, *, tfrecord_help: str) -> None:
    """The ``writing`` group: a flag for every writing option with a CLI spelling."""
    group = parser.add_argument_group("writing", tfrecord_help)
    for name, option in WRITE_OPTIONS.items():
        if option.cli:
            _add_option(group, option, _WRITE + name)


def add_input_options(parser: argparse.ArgumentParser) -> None:
    """``convert``'s reading options of TFRecord input: ``--schema`` and
    ``--input-compression`` (its ``--compression`` is the output's; ``--record-type``
    applies to both, see :func:`convert_input_options`)."""
    group = parser.add_argument_group("reading TFRecord input")
    _add_option(group, READ_OPTIONS["schema"], _READ + "schema", help_prefix="TFRecord input: ")
    _add_option(
        group,
        READ_OPTIONS["compression"],
        _READ + "compression",
        flag="--input-compression",
        help_prefix="TFRecord input: ",
    )


def dataset_options(args: argparse.Namespace) -> dict[str, Any]:
    """Keyword arguments of :func:`tfsql.dataset` from the reading options given."""
    return {name: getattr(args, _READ + name) for name in READ_OPTIONS if hasattr(args, _READ + name)}


def writer_options(args: argparse.Namespace) -> dict[str, Any]:
    """Keyword arguments of :func:`tfsql.write_tfrecord` from the writing options given."""
    return {name: getattr(args, _WRITE + name) for name in WRITE_OPTIONS if hasattr(args, _WRITE + name)}


def convert_input_options(args: argparse.Namespace) -> dict[str, Any]:
    """``convert``'s :func:`tfsql.dataset` keyword arguments: its reading options and
    the output's ``--record-type``, which TFRecord input is read as too."""
    options = dataset_options(args)
    written = writer_options(args)
    if "record_type" in written:
        options["record_type"] = written["record_type"]
    return options


def given_or_default(options: dict[str, Any], name: str, *, writing: bool = False) -> Any:
    """``options[name]``, or the option's default when it was not given.

    >>> given_or_default({}, "record_type"), given_or_default({}, "mode", writing=True)
    ('example', 'error')
    """
    if name in options:
        return options[name]
    return (WRITE_OPTIONS if writing else READ_OPTIONS)[name].default


def _add_option(group: Any, option: Option, dest: str, *, flag: str | None = None, help_prefix: str = "") -> None:
    flag = flag or option.cli
    assert flag is not None
    help = help_prefix + option.doc + (": " + TYPES_HELP if option.cli_value == "types" else "")
    default = _default_text(option)
    if default is not None:
        help += f" (default: {default})"
    help = help.replace("%", "%%")
    if option.cli_value == "bool":
        group.add_argument(flag, dest=dest, action=argparse.BooleanOptionalAction, default=argparse.SUPPRESS, help=help)
        return
    metavar = "{" + ",".join(option.choices) + "}" if option.choices else _METAVARS[option.cli_value]
    group.add_argument(
        flag, dest=dest, type=_flag_type(option, flag), default=argparse.SUPPRESS, metavar=metavar, help=help
    )


def _default_text(option: Option) -> str | None:
    if option.cli_value == "bool":
        return None if option.default is None else ("on" if option.default else "off")
    if option.default is None or option.default == ():
        return None
    return str(option.default)


def _flag_type(option: Option, flag: str) -> Any:
    """The argparse ``type`` of a flag: its text to the option's checked value."""
    if option.cli_value == "types":
        return _schema
    # "0" means "all" where "all" is accepted (the CLI's long-standing spelling)
    spelling = Spelling(flag, option.cli_value, maps={0: None} if option.cli_value == "count_or_all" else None)

    def value(text: str) -> Any:
        try:
            return from_text(option, spelling, text)
        except OptionError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    value.__name__ = option.name
    return value


def _schema(text: str) -> Any:
    """``--schema``: DuckDB column definitions, or the schema of a Parquet file."""
    import os

    import pyarrow as pa

    if text.lower().endswith(".parquet") and os.path.isfile(text):
        import pyarrow.parquet as pq

        return pq.read_schema(text).remove_metadata()
    import duckdb

    from tfsql.duckdb import duckdb_type_to_arrow
    from tfsql.duckdb.sqltext import tokenize

    # the definitions must stay inside the statement's parentheses: no ';', and no
    # bracket closed that they did not open (a comment is ended by the line break after)
    depth = 0
    for token in tokenize(text):
        depth += token.is_op("(", "[", "{") - token.is_op(")", "]", "}")
        if depth < 0:
            break
    if ";" in text or depth != 0 or not text.strip():
        raise argparse.ArgumentTypeError(f"expected column definitions such as 'id BIGINT, emb FLOAT[]', got {text!r}")
    con = duckdb.connect(config={"enable_external_access": False})
    try:
        con.execute(f"CREATE TABLE columns_of_schema (\n{text}\n)")
        described = con.execute("DESCRIBE columns_of_schema").fetchall()
    except duckdb.Error as exc:
        raise argparse.ArgumentTypeError(
            f"expected column definitions such as 'id BIGINT NOT NULL, emb FLOAT[]': {exc}"
        ) from None
    finally:
        con.close()
    return pa.schema(
        [
            pa.field(name, duckdb_type_to_arrow(type_name), nullable=null != "NO")
            for name, type_name, null, *_ in described
        ]
    )


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
