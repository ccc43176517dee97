"""``COPY t FROM 'x.tfrecord' (FORMAT tfrecord, ...)`` in `tfsql.connect()`: an INSERT.

`tfsql.connect()` runs the statement as ``INSERT INTO t [(columns)] SELECT * FROM
tfrecord_scan('x.tfrecord', option := value, ...)``, so it works on every DuckDB
version and on the Arrow path alike: the file's columns go to the table's columns by
position and DuckDB casts them as an INSERT does (the extension's native COPY FROM on
DuckDB >= 1.5.6 matches by position too, with the casts listed in
``docs/duckdb-extension.md``). Each COPY option becomes the scan's named parameter of
the same name (``RECORD_TYPE sequence_example`` -> ``record_type := 'sequence_example'``,
a flag alone -> ``:= true``), so the reading options are tfrecord_scan's. Nothing of
the statement is pasted as it was written: the table and column names are quoted
again, an option that is no scan parameter is refused, values are quoted literals.

Examples
--------
>>> from tfsql.duckdb.rewrite import tokenize
>>> sql = "COPY t (a, b) FROM 'x.tfrecord' (FORMAT tfrecord, RECORD_TYPE example, IGNORE_ERRORS)"
>>> print(copy_from_as_insert(sql, tokenize(sql)))
INSERT INTO "t" ("a", "b") SELECT * FROM tfrecord_scan('x.tfrecord', record_type := 'example', ignore_errors := true)
>>> copy_from_as_insert("COPY t FROM 'x.csv'", tokenize("COPY t FROM 'x.csv'")) is None
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from tfsql.duckdb.arguments import quote_string
from tfsql.duckdb.copy import CopyOptionError, OptionValue, _parse_options, copy_target, qualified_name
from tfsql.duckdb.parameters import SCAN_PARAMETERS
from tfsql.duckdb.rewrite import Token, matching_close
from tfsql.naming import is_tfrecord_name

__all__ = ["CopyFrom", "copy_from_as_insert", "copy_from_parts"]


@dataclass(frozen=True)
class CopyFrom:
    """A ``COPY <table> [(columns)] FROM <path> (FORMAT tfrecord, ...)`` taken apart, every
    part as SQL tfsql built: ``table`` (quoted), ``columns`` (``""`` or `` ("a", "b")``)
    and ``scan`` (the ``tfrecord_scan(...)`` call)."""

    table: str
    columns: str
    scan: str

    def insert(self, select: str = "*") -> str:
        """The INSERT that runs it, selecting ``select`` (by default every column) of the scan."""
        return f"INSERT INTO {self.table}{self.columns} SELECT {select} FROM {self.scan}"


def copy_from_as_insert(sql: str, tokens: Sequence[Token]) -> str | None:
    """The INSERT that runs ``sql`` when it is a ``COPY <table> FROM <path>`` reading
    TFRecord (``FORMAT tfrecord``, or no FORMAT and a TFRecord suffix); None otherwise.

    Raises
    ------
    CopyOptionError
        The options cannot be taken apart.
    """
    parts = copy_from_parts(sql, tokens)
    return None if parts is None else parts.insert()


def copy_from_parts(sql: str, tokens: Sequence[Token]) -> CopyFrom | None:
    """`copy_from_as_insert`'s statement taken apart (None when it is not one)."""
    if len(tokens) < 4 or not tokens[0].is_word("copy"):
        return None
    i = 1
    while i < len(tokens) and not tokens[i].is_word("from", "to") and not tokens[i].is_op("("):
        i += 1
    if i == 1 or i >= len(tokens):
        return None
    table = qualified_name(tokens[1:i])
    if table is None:
        return None  # not a table name: DuckDB runs (and judges) the statement as written
    columns = ""
    if tokens[i].is_op("("):
        close = matching_close(tokens, i)
        names = qualified_name(tokens[i + 1 : close], separator=",")
        if names is None:
            return None
        columns = f" ({names})"
        i = close + 1
    target = copy_target(tokens, i, "from")
    if target is None:
        return None
    path_sql, i = target
    options: dict[str, OptionValue] = {}
    if i < len(tokens) and tokens[i].is_op("("):
        close = matching_close(tokens, i)
        options = _parse_options(sql, tokens, i + 1, close)
        i = close + 1
    if i < len(tokens):
        return None  # not a form this parser knows: DuckDB runs (and judges) it as written
    format_value = options.pop("FORMAT", None)
    if format_value is not None:
        if not format_value.names or format_value.names[0].lower() not in ("tfrecord", "tfrecords"):
            return None
    elif not is_tfrecord_name(path_sql.strip("'")):
        return None
    arguments = [path_sql] + [f"{_parameter(name)} := {_literal(name, value)}" for name, value in options.items()]
    return CopyFrom(table, columns, f"tfrecord_scan({', '.join(arguments)})")


def utf8_select(sources: Sequence[str], targets: Sequence[tuple[str, str]]) -> str:
    """The select list of a COPY ... FROM's INSERT that refuses bytes that are not UTF-8
    going into a VARCHAR column, as the extension's native COPY ... FROM does (DuckDB's
    own BLOB -> VARCHAR cast would store them as escaped text such as ``\\xFF``):
    ``sources`` are the scan's column types, ``targets`` the filled columns' (name, type),
    by position. ``*`` when no column needs it.

    >>> print(utf8_select(["BIGINT", "BLOB"], [("a", "BIGINT"), ("s", "VARCHAR")]))
    #1, CASE WHEN #2 IS NULL THEN NULL WHEN try(decode(#2)) IS NULL THEN error('COPY ... FROM (FORMAT tfrecord): a value of the table''s VARCHAR column "s" is not UTF-8; make the column a BLOB') ELSE decode(#2) END
    """
    items, checked = [], False
    for position, (source, (name, target)) in enumerate(zip(sources, targets), start=1):
        column = f"#{position}"
        refusal = quote_string(
            f'COPY ... FROM (FORMAT tfrecord): a value of the table\'s VARCHAR column "{name}" is not UTF-8; '
            "make the column a BLOB"
        )
        # (coalesce(try(...), error(...)) loses the error on DuckDB 1.4: a CASE keeps it)
        if source == "BLOB" and target == "VARCHAR":
            items.append(_decoded(column, refusal))
        elif source == "BLOB[]" and target == "VARCHAR[]":
            items.append(f"list_transform({column}, lambda x: {_decoded('x', refusal)})")
        else:
            items.append(column)
            continue
        checked = True
    return ", ".join(items) if checked and len(sources) == len(targets) else "*"


def _decoded(value: str, refusal: str) -> str:
    return f"CASE WHEN {value} IS NULL THEN NULL WHEN try(decode({value})) IS NULL THEN error({refusal}) ELSE decode({value}) END"


def _parameter(name: str) -> str:
    """The scan parameter an option names; an option that is none is refused here, as
    DuckDB refuses an unknown COPY option (its name is never pasted into SQL)."""
    parameter = name.lower()
    if parameter not in SCAN_PARAMETERS:
        raise CopyOptionError(
            f"COPY ... FROM (FORMAT tfrecord): unknown option {name!r}; "
            f"valid options: {', '.join(sorted(SCAN_PARAMETERS))}"
        )
    return parameter


def _literal(name: str, value: OptionValue) -> str:
    if value.flag:
        return "true"
    if value.names:
        if len(value.names) == 1:
            return _quote(value.names[0])
        return "[" + ", ".join(_quote(n) for n in value.names) + "]"
    if isinstance(value.value, bool):
        return "true" if value.value else "false"
    if isinstance(value.value, (int, float)):
        return repr(value.value) if math.isfinite(value.value) else _quote(repr(value.value))
    if isinstance(value.value, str):
        return _quote(value.value)
    raise CopyOptionError(
        f"COPY ... FROM (FORMAT tfrecord): option {name} has a value {value.value!r} it cannot pass on"
    )


def _quote(text: str) -> str:
    return quote_string(text)
