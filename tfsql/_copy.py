"""``COPY ... TO ... (FORMAT tfrecord, ...)``: recognise the statement, check its options, write.

DuckDB cannot be taught a new COPY format from Python, so `tfsql.duckdb` recognises
the statement in the SQL text (with DuckDB's tokenizer), streams the rows of its query
out of DuckDB and hands them to `tfsql.write_tfrecord`. This module holds the parts
that do not touch a connection:

- `parse_copy_to` splits ``COPY <query or table> TO <path> [WITH] (<options>)`` into
  the query to run, the path literal and the options, whose values are literals read
  from the tokens (`tfsql._sql_args`): no option value is ever run as SQL;
- `CopyPlan.from_options` checks the options (DuckDB's Parquet-style names) and maps
  them to `write_tfrecord` arguments;
- `write_copy` writes a stream of record batches according to a plan.

Output layout follows tfsql's single-file rule (`tfsql.naming`): a path ending in a
TFRecord suffix (``.tfrecord``, ``.tfrecords``, ``.tfrecord.gz``, ``.tfrecord.zz``) is
one file, written under a temporary name and renamed into place; any other path, and
any path ending in ``/``, is a directory of part files. Existing targets follow the
writer's modes in both cases: an error unless ``OVERWRITE``, ``OVERWRITE_OR_IGNORE`` or
``APPEND`` is given (``APPEND`` to a file adds the new records after the old ones).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


from tfsql._sql_args import LiteralError, LiteralReader
from tfsql._sql_rewrite import Token, matching_close, unquote_identifier
from tfsql.naming import TFRECORD_SUFFIXES, compression_from_name, is_single_file_target
from tfsql.writer import check_filename_pattern, check_write_options, write_tfrecord

__all__ = ["CopyStatement", "CopyPlan", "parse_copy_to", "write_copy", "OPTIONS", "TFRECORD_SUFFIXES"]

# A COPY target ending in one of TFRECORD_SUFFIXES is written as TFRecord even without
# ``FORMAT``, as one file.

OPTIONS = {
    "FORMAT": "tfrecord",
    "PARTITION_BY": "column or (columns): hive key=value directories",
    "COMPRESSION": "none | gzip | zlib | auto (auto: from the file name)",
    "COMPRESSION_LEVEL": "0-9 (gzip/zlib)",
    "RECORD_TYPE": "example | sequence_example | bytes",
    "OVERWRITE": "replace the target directory's data",
    "OVERWRITE_OR_IGNORE": "replace only the partition directories written",
    "APPEND": "add files to the target directory",
    "FILE_SIZE_BYTES": "start a new file after this many bytes (e.g. 1000000 or '64MB')",
    "ROWS_PER_FILE": "start a new file after this many rows",
    "NUM_SHARDS": "write exactly this many files part-0000k-of-0000N.tfrecord",
    "FILENAME_PATTERN": "file names with {i} (file number, shard index), {n} (shards) and/or {uuid}, "
                        "format specs allowed, e.g. 'train-{i:05d}-of-{n:05d}'",
    "TFDS": "dataset name: write a TensorFlow Datasets directory (splits from a split column)",
    "RETURN_FILES": "also return the written files in a Files column",
    "USE_TMP_FILE": "accepted; writes are always staged and committed atomically",
}
"""The COPY options understood for ``FORMAT tfrecord``, with what they do."""

_ALIASES = {"MAX_ROWS_PER_FILE": "ROWS_PER_FILE", "MAX_FILE_SIZE": "FILE_SIZE_BYTES",
            "CODEC": "COMPRESSION", "PARTITION": "PARTITION_BY"}
_DIRECTORY_OPTIONS = ("PARTITION_BY", "FILE_SIZE_BYTES", "ROWS_PER_FILE", "NUM_SHARDS", "FILENAME_PATTERN", "TFDS")
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtp]?i?b?)?\s*$", re.IGNORECASE)
_SIZE_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "m": 1000**2, "mb": 1000**2, "g": 1000**3,
               "gb": 1000**3, "t": 1000**4, "tb": 1000**4, "kib": 1024, "mib": 1024**2,
               "gib": 1024**3, "tib": 1024**4}


class CopyOptionError(ValueError):
    """An option of a ``COPY ... (FORMAT tfrecord)`` statement is unknown or invalid.

    `tfsql.duckdb` re-raises it as a ``duckdb.BinderException``."""


# --------------------------------------------------------------------------------------
# Parsing
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OptionValue:
    """An option as written: ``flag`` (no value), ``names`` (a parenthesised list or a
    bare word), or ``value`` (a literal: a number, true / false...)."""

    flag: bool = False
    names: tuple[str, ...] = ()
    value: Any = None


@dataclass(frozen=True)
class CopyStatement:
    """A ``COPY ... TO ...`` statement taken apart.

    Attributes
    ----------
    query : str
        SQL producing the rows (``SELECT * FROM tbl`` for ``COPY tbl TO ...``).
    path_sql : str
        The target as written (a string literal token).
    options : dict
        Upper-case option name -> `OptionValue`, in the order written.
    """

    query: str
    path_sql: str
    options: dict[str, OptionValue] = field(default_factory=dict)

    @property
    def format(self) -> str | None:
        """The FORMAT option's bare word (lower case), None when absent or an expression."""
        value = self.options.get("FORMAT")
        if value is None or not value.names:
            return None
        return value.names[0].lower()


def parse_copy_to(sql: str, tokens: Sequence[Token]) -> CopyStatement | None:
    """Take a ``COPY <source> TO <path> [WITH] [(options)]`` statement apart.

    Returns None for any other statement (including ``COPY ... FROM``, ``COPY FROM
    DATABASE``), and for forms this parser does not know, which DuckDB then runs as is.

    Examples
    --------
    >>> from tfsql._sql_rewrite import tokenize
    >>> sql = "COPY (SELECT 1 AS a) TO 'out' (FORMAT tfrecord, PARTITION_BY (a, b))"
    >>> stmt = parse_copy_to(sql, tokenize(sql))
    >>> stmt.query, stmt.path_sql, stmt.format, stmt.options["PARTITION_BY"].names
    ('SELECT 1 AS a', "'out'", 'tfrecord', ('a', 'b'))
    """
    if len(tokens) < 4 or not tokens[0].is_word("copy"):
        return None
    i = 1
    if tokens[i].is_op("("):
        close = matching_close(tokens, i)
        if close == i + 1:
            return None
        query = sql[tokens[i + 1].start:tokens[close].start].strip()
        i = close + 1
    else:
        # COPY [schema.]table [(columns)] TO ...
        start = i
        while i < len(tokens) and not tokens[i].is_word("to", "from") and not tokens[i].is_op("("):
            i += 1
        if i == start or i >= len(tokens):
            return None
        table = sql[tokens[start].start:tokens[i - 1].start + len(tokens[i - 1].text)]
        columns = "*"
        if tokens[i].is_op("("):
            close = matching_close(tokens, i)
            columns = sql[tokens[i + 1].start:tokens[close].start].strip() or "*"
            i = close + 1
        query = f"SELECT {columns} FROM {table}"
    if i + 1 >= len(tokens) or not tokens[i].is_word("to") or tokens[i + 1].kind != "string_const":
        return None
    path_sql = tokens[i + 1].text
    i += 2
    if i < len(tokens) and tokens[i].is_word("with"):
        i += 1
    options: dict[str, OptionValue] = {}
    if i < len(tokens):
        if not tokens[i].is_op("("):
            raise CopyOptionError(
                f"COPY ... TO {path_sql}: expected the options in parentheses at offset "
                f"{tokens[i].start}, e.g. (FORMAT tfrecord, PARTITION_BY (split))"
            )
        close = matching_close(tokens, i)
        options = _parse_options(sql, tokens, i + 1, close)
        if close + 1 < len(tokens):
            raise CopyOptionError(f"COPY ... TO {path_sql}: unexpected {tokens[close + 1].text!r} "
                                  f"after the options at offset {tokens[close + 1].start}")
    return CopyStatement(query, path_sql, options)


def _parse_options(sql: str, tokens: Sequence[Token], first: int, stop: int) -> dict[str, OptionValue]:
    options: dict[str, OptionValue] = {}
    i = first
    while i < stop:
        name_token = tokens[i]
        if not name_token.is_name:
            raise CopyOptionError(f"COPY option name expected at offset {name_token.start}, "
                                  f"got {name_token.text!r}")
        name = unquote_identifier(name_token.text).upper()
        i += 1
        if i < stop and tokens[i].is_op("="):
            i += 1
        value_first = i
        depth = 0
        while i < stop and not (depth == 0 and tokens[i].is_op(",")):
            if tokens[i].is_op("(", "[", "{"):
                depth += 1
            elif tokens[i].is_op(")", "]", "}"):
                depth -= 1
            i += 1
        value_tokens = tokens[value_first:i]
        i += 1  # the comma
        if name in options:
            raise CopyOptionError(f"COPY option {name} is given twice")
        try:
            options[name] = _option_value(value_tokens)
        except LiteralError as err:
            raise CopyOptionError(f"COPY option {name}: {err}") from None
    return options


def _option_value(value_tokens: Sequence[Token]) -> OptionValue:
    if not value_tokens:
        return OptionValue(flag=True)
    if len(value_tokens) == 1 and value_tokens[0].is_name:
        return OptionValue(names=(unquote_identifier(value_tokens[0].text),))
    if len(value_tokens) == 1 and re.fullmatch(r"'(?:[^']|'')*'", value_tokens[0].text):
        return OptionValue(names=(_name_or_string(value_tokens[0].text),))
    if value_tokens[0].is_op("(") and value_tokens[-1].is_op(")"):
        inner = value_tokens[1:-1]
        items = [t for t in inner if not t.is_op(",")]
        if all(t.is_name or t.kind == "string_const" for t in items) and len(inner) == 2 * len(items) - 1:
            return OptionValue(names=tuple(_name_or_string(t.text) for t in items))
    return OptionValue(value=LiteralReader(value_tokens).value(0, len(value_tokens)))


def _name_or_string(text: str) -> str:
    if len(text) >= 2 and text[0] == "'" and text[-1] == "'":
        return text[1:-1].replace("''", "'")
    return unquote_identifier(text)


# --------------------------------------------------------------------------------------
# Options -> writer arguments
# --------------------------------------------------------------------------------------


def is_tfrecord_copy(statement: CopyStatement, path: str | None = None) -> bool:
    """True when the statement asks for TFRecord: ``FORMAT tfrecord``, or no FORMAT and a
    ``.tfrecord[.gz]`` path (``path`` is the evaluated path when known)."""
    fmt = statement.format
    if fmt is not None:
        return fmt in ("tfrecord", "tfrecords")
    if "FORMAT" in statement.options:
        return False  # FORMAT given as an expression: not ours
    target = (path if path is not None else statement.path_sql.strip("'")).lower()
    return target.endswith(TFRECORD_SUFFIXES)


@dataclass(frozen=True)
class CopyPlan:
    """Where and how to write: the target, one file or a directory, `write_tfrecord` kwargs."""

    path: str
    single_file: bool
    writer_options: dict[str, Any]
    return_files: bool = False

    @classmethod
    def from_options(cls, path: str, options: dict[str, OptionValue]) -> CopyPlan:
        """Check ``options`` and map them to `write_tfrecord` arguments.

        Raises
        ------
        CopyOptionError
            An unknown option (the message lists the valid ones), a bad value, or
            options that contradict each other.
        """
        values: dict[str, Any] = {}
        for raw_name, value in options.items():
            name = _ALIASES.get(raw_name, raw_name)
            if name not in OPTIONS:
                valid = ", ".join(OPTIONS)
                raise CopyOptionError(
                    f'Unrecognized option "{raw_name}" for COPY ... (FORMAT tfrecord); '
                    f"valid options: {valid}"
                )
            if value.flag:
                values[name] = True
            elif value.names:
                values[name] = list(value.names) if name == "PARTITION_BY" or len(value.names) > 1 \
                    else value.names[0]
            else:
                values[name] = value.value

        kwargs: dict[str, Any] = {}
        if "PARTITION_BY" in values:
            columns = values["PARTITION_BY"]
            kwargs["partition_by"] = [columns] if isinstance(columns, str) else list(columns)
        kwargs["compression"] = _compression(values.get("COMPRESSION", "auto"), path)
        if "FILENAME_PATTERN" in values:
            try:
                check_filename_pattern(values["FILENAME_PATTERN"], shards="NUM_SHARDS" in values)
            except ValueError as err:
                raise CopyOptionError(f"COPY option FILENAME_PATTERN: {err}") from None
            kwargs["filename_pattern"] = values["FILENAME_PATTERN"]
        if "COMPRESSION_LEVEL" in values:
            kwargs["compression_level"] = _integer("COMPRESSION_LEVEL", values["COMPRESSION_LEVEL"])
        if "RECORD_TYPE" in values:
            kwargs["record_type"] = str(values["RECORD_TYPE"]).lower()
        if "FILE_SIZE_BYTES" in values:
            kwargs["max_bytes_per_file"] = _size(values["FILE_SIZE_BYTES"])
        if "ROWS_PER_FILE" in values:
            kwargs["max_rows_per_file"] = _integer("ROWS_PER_FILE", values["ROWS_PER_FILE"])
        if "NUM_SHARDS" in values:
            kwargs["num_shards"] = _integer("NUM_SHARDS", values["NUM_SHARDS"])
        if "TFDS" in values:
            kwargs["tfds"] = str(values["TFDS"])
        modes = [name for name, mode in (("OVERWRITE", "overwrite"), ("OVERWRITE_OR_IGNORE",
                                         "overwrite_partitions"), ("APPEND", "append"))
                 if _boolean(name, values.get(name, False))]
        if len(modes) > 1:
            raise CopyOptionError(f"COPY options {' and '.join(modes)} contradict each other; give one")
        single_file = is_single_file_target(path)
        directory_options = [name for name in _DIRECTORY_OPTIONS if name in values]
        if single_file and directory_options:
            raise CopyOptionError(
                f"COPY ... TO {path!r}: the path ends in a TFRecord suffix, so it names one file, "
                f"but {directory_options[0]} writes a directory of files; drop the suffix or "
                "end the path with '/'"
            )
        if modes:
            kwargs["mode"] = {"OVERWRITE": "overwrite", "OVERWRITE_OR_IGNORE": "overwrite_partitions",
                              "APPEND": "append"}[modes[0]]
        try:
            check_write_options(**kwargs)
        except ValueError as err:
            raise CopyOptionError(f"COPY ... (FORMAT tfrecord): {err}") from None
        _boolean("USE_TMP_FILE", values.get("USE_TMP_FILE", True))
        return_files = _boolean("RETURN_FILES", values.get("RETURN_FILES", False))
        return cls(path, single_file, kwargs, return_files)


def _boolean(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.lower() in ("true", "false", "on", "off", "1", "0"):
        return value.lower() in ("true", "on", "1")
    raise CopyOptionError(f"COPY option {name} expects a boolean, got {value!r}")


def _integer(name: str, value: Any) -> int:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise CopyOptionError(f"COPY option {name} expects a non-negative integer, got {value!r}")
    return value


def _size(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    match = _SIZE.match(value) if isinstance(value, str) else None
    unit = (match.group(2) or "").lower() if match else ""
    if match is None or unit not in _SIZE_UNITS or float(match.group(1)) <= 0:
        raise CopyOptionError(
            f"COPY option FILE_SIZE_BYTES expects a positive byte count such as 1000000 or "
            f"'64MB', got {value!r}"
        )
    return int(float(match.group(1)) * _SIZE_UNITS[unit])


def _compression(value: Any, path: str) -> str | None:
    name = str(value).lower()
    if name == "auto":
        return compression_from_name(path)
    if name in ("none", "uncompressed", ""):
        return None
    if name in ("gzip", "zlib"):
        return name
    raise CopyOptionError(f"COPY option COMPRESSION expects none, gzip, zlib or auto, got {value!r}")


# --------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------


def write_copy(batches: Any, plan: CopyPlan):
    """Write ``batches`` (a ``pyarrow.RecordBatchReader``) as ``plan`` says.

    `write_tfrecord` writes the one file or the directory the path names (atomic
    commit or rename), so a failing query leaves the old data untouched.

    Returns
    -------
    tfsql.WriteResult
    """
    return write_tfrecord(batches, plan.path, **plan.writer_options)

