"""``tfrecord_scan``'s named parameters, derived from the option spec, and their reading.

Every reading option with a SQL spelling in `tfsql.options.READ_OPTIONS` is a named
parameter (aliases included: ``columns`` for ``schema``, ``sample_size`` for
``infer_sample``, ``ignore_errors`` for ``on_corrupt``, ``filename`` for
``include_file_paths``). The spelling's kind of value decides the parameter's DuckDB
type (`SCAN_PARAMETERS`) and how a literal becomes the option's Python value
(`dataset_options`); the option's own check then validates it. `COMPAT_PARAMETERS`
are ``read_parquet`` parameters accepted so that queries written for Parquet run as
they are; they are not options.

Examples
--------
>>> SCAN_PARAMETERS["hive_partitioning"], SCAN_PARAMETERS["filename"], SCAN_PARAMETERS["schema"]
('BOOLEAN', 'BOOLEAN or VARCHAR', 'STRUCT')
>>> dataset_options("tfrecord_scan", {"ignore_errors": True, "sample_size": -1, "compression": "auto"})
{'on_corrupt': 'skip', 'infer_sample': None, 'compression': 'infer'}
>>> "split_bytes" in NATIVE_SCAN_PARAMETERS, "ignore_errors" in NATIVE_SCAN_PARAMETERS
(False, True)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tfsql.duckdb.errors import BinderError, InvalidInputError, sql_error
from tfsql.duckdb.types import sql_type_name, type_struct
from tfsql.options import COMPAT_SQL_PARAMETERS, READ_OPTIONS, Option, OptionError, Spelling, parse_size, spellings

__all__ = ["TABLE_FUNCTIONS", "SCAN_PARAMETERS", "NATIVE_SCAN_PARAMETERS", "COMPAT_PARAMETERS", "dataset_options"]

TABLE_FUNCTIONS = ("tfrecord_scan", "read_tfrecord")
"""The table function names the SQL front end understands."""

COMPAT_PARAMETERS: dict[str, str] = COMPAT_SQL_PARAMETERS
"""``read_parquet`` parameters accepted (checked for their type) and otherwise ignored
(`tfsql.options.COMPAT_SQL_PARAMETERS`)."""

SPELLINGS: dict[str, tuple[Option, Spelling]] = spellings(READ_OPTIONS, "sql")
"""SQL parameter name -> (the option, its spelling)."""

SCAN_PARAMETERS: dict[str, str] = {
    **{name: spelling.sql_type for name, (_, spelling) in SPELLINGS.items()},
    **COMPAT_PARAMETERS,
}
"""Named parameters of ``tfrecord_scan`` and their DuckDB types."""

NATIVE_SCAN_PARAMETERS = frozenset(
    [name for name, (option, _) in SPELLINGS.items() if option.native] + list(COMPAT_PARAMETERS)
)
"""The named parameters the DuckDB extension's ``tfrecord_scan`` implements (calls with
others run through the Arrow path inside `tfsql.duckdb.connect`)."""


def _expected(function: str, name: str, value: Any) -> Exception:
    return sql_error(
        BinderError,
        f"parameter {name} expects {SCAN_PARAMETERS[name]}, got {sql_type_name(value)} {value!r}",
        function=function,
    )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _read(function: str, spelling: Spelling, value: Any) -> Any:
    """The Python value of a literal given for ``spelling`` (its SQL type checked)."""
    kind, name = spelling.value, spelling.name
    if kind in ("bool", "flag"):
        ok = isinstance(value, bool)
    elif kind in ("count", "count_or_all", "level"):
        ok = _is_int(value)
    elif kind in ("choice", "name", "text"):
        ok = isinstance(value, str)
    elif kind == "bool_or_name":
        ok = isinstance(value, (bool, str))
    elif kind == "columns":
        ok = isinstance(value, str) or (isinstance(value, list) and all(isinstance(v, str) for v in value))
    elif kind == "size":
        ok = _is_int(value) or isinstance(value, str)
        if ok:
            try:
                value = parse_size(value, name)
            except OptionError as err:
                raise sql_error(InvalidInputError, str(err), function=function) from None
    elif kind == "types":
        return type_struct(function, name, value)
    else:  # pragma: no cover - every kind a reading option's SQL spelling uses is above
        raise AssertionError(kind)
    if not ok:
        raise _expected(function, name, value)
    return value


def null_parameter(name: str) -> str:
    """The message of a NULL given for parameter ``name`` (the extension words it alike)."""
    return f"parameter {name} is NULL; give it a value, or leave it out for its default"


def dataset_options(function: str, named: Mapping[str, Any]) -> dict[str, Any]:
    """Map ``tfrecord_scan`` named parameters (already read as literals) to `tfsql.dataset`
    options, each checked by its option (`tfsql.options`).

    A literal of the wrong SQL type raises `BinderError`; a value the option rejects,
    `InvalidInputError` naming the parameter as written. Two spellings of one option
    (``schema`` and ``columns``) cannot both be given.
    """
    options: dict[str, Any] = {}
    given: dict[str, str] = {}  # option -> the parameter that gave it
    for name, value in named.items():
        if value is None:
            raise sql_error(BinderError, null_parameter(name), function=function)
        if isinstance(value, dict) and name in SPELLINGS and SPELLINGS[name][1].value == "types":
            for column, typed in value.items():
                if typed is None:
                    raise sql_error(
                        BinderError,
                        f"column '{column}' of {name} has type NULL; give its type, e.g. "
                        f"{name} := {{'{column}': 'BIGINT'}}",
                        function=function,
                    )
        if name in COMPAT_PARAMETERS:
            if not isinstance(value, bool):
                raise _expected(function, name, value)
            continue
        option, spelling = SPELLINGS[name]
        if option.name in given:
            raise sql_error(BinderError, f"give either {given[option.name]} or {name}, not both", function=function)
        given[option.name] = name
        try:
            options[option.name] = option.validate(
                spelling.translate(_read(function, spelling, value)), as_spelled=name
            )
        except OptionError as err:
            # refused when the call is bound, as the extension refuses it
            raise sql_error(BinderError, str(err), function=function) from None
    return options
