"""Spark's string options, parsed by the option spec (:mod:`tfsql.options`).

Spark hands a data source its ``.option(name, value)`` pairs as text, with the names in
any letter case. Which names exist, their aliases, their Spark defaults and how their
text becomes a value all come from the ``spark`` spellings of
:data:`tfsql.options.READ_OPTIONS` / :data:`tfsql.options.WRITE_OPTIONS` and
:func:`tfsql.options.from_text`; this module only adds what belongs to Spark itself:
the ``path`` / ``paths`` Spark sets from ``.load()`` / ``.save()``, and the data
source's own ``filterPushdown`` (not a reading option of :func:`tfsql.dataset`).

:func:`dataset_options` and :func:`writer_options` are the one parsing path: the data
source calls them, and ``tests/unit/test_options.py`` checks them against the spec.

Examples
--------
>>> dataset_options({"InferSample": "10", "codec": "gzip"})["infer_sample"]
10
>>> writer_options({"partitionBy": "a, b", "maxBytesPerFile": "64MB"})["max_bytes_per_file"]
64000000
>>> dataset_options({"recordType": "Proto"})
Traceback (most recent call last):
tfsql.errors.OptionError: option recordType 'Proto' is not supported; option recordType must be Example, SequenceExample or ByteArray
"""

from __future__ import annotations

import json
import os
from typing import Any, Mapping

from tfsql.option_values import check_boolean
from tfsql.options import READ_OPTIONS, WRITE_OPTIONS, Option, OptionError, Spelling, from_text, spellings

__all__ = [
    "dataset_options",
    "writer_options",
    "read_options",
    "target_path",
    "read_paths",
    "option_names",
    "options_help",
]

#: Options Spark itself sets: ``.load(path)`` / ``.load(p1, p2)`` / ``.save(path)``.
_SPARK_PATHS = ("path", "paths")


#: The data source's own reading option: prune files by the filters Spark pushes on
#: partition columns (default: as :func:`tfsql.spark.register` was told).
FILTER_PUSHDOWN = Option(
    "filter_pushdown",
    "skip files whose partition values fail the query's filters (pyspark 4.1+)",
    check_boolean,
    python=False,
    polars=False,
    spark=(Spelling("filterPushdown", "bool"),),
)


def _spark_spec(spec: Mapping[str, Option], extra: tuple[Option, ...] = ()) -> dict[str, Option]:
    options = {name: option for name, option in spec.items() if option.spark}
    options.update((option.name, option) for option in extra)
    return options


_READ = _spark_spec(READ_OPTIONS, (FILTER_PUSHDOWN,))
_WRITE = _spark_spec(WRITE_OPTIONS)


def option_names(action: str) -> list[str]:
    """Every option name a read or a write accepts (aliases included), as Spark users spell them.

    >>> option_names("write")[:4]
    ['codec', 'compression', 'compressionLevel', 'filenamePattern']
    """
    spec = _READ if action == "read" else _WRITE
    return sorted([s.name for o in spec.values() for s in o.spark] + ["path"], key=str.lower)


def options_help() -> str:
    """The reading and writing options as text: name (aliases), default, meaning.

    >>> print(options_help().splitlines()[4])
    - ``recordType`` (default example): what the records hold: tf.train.Example, SequenceExample, or raw bytes (one binary column)
    """
    lines = []
    for title, spec in (("Reading options", _READ), ("Writing options", _WRITE)):
        lines += ["", "", title, "-" * len(title)]
        for option in spec.values():
            main, *aliases = option.spark
            default = option.default_for(main)
            also = f", alias {', '.join(a.name for a in aliases)}" if aliases else ""
            lines.append(
                f"- ``{main.name}``{also} (default {'none' if default in (None, ()) else default}): {option.doc}"
            )
    return "\n".join(lines) + "\n"


def _parse(options: Mapping[str, Any], spec: Mapping[str, Option], action: str) -> tuple[dict[str, Any], set[str]]:
    """Every option of ``spec`` with its value (the Spark default when not given), and
    the names of the options given."""
    by_name = {name.lower(): pair for name, pair in spellings(spec, "spark").items()}
    given: dict[str, tuple[str, Any]] = {}
    for key, text in options.items():
        lowered = str(key).lower()
        if lowered in _SPARK_PATHS:
            continue
        if lowered not in by_name:
            raise OptionError(
                f"unknown {action} option {lowered!r} for format 'tfrecord'; "
                f"the options are {', '.join(option_names(action))}"
            )
        option, spelling = by_name[lowered]
        value = _value(option, spelling, text)
        if option.name in given and given[option.name][1] != value:
            raise OptionError(
                f"options {given[option.name][0]} and {spelling.name} name the same setting "
                f"with different values ({options[given[option.name][0]]!r}, {text!r}); give one"
            )
        given[option.name] = (str(key), value)
    values = {}
    for name, option in spec.items():
        values[name] = given[name][1] if name in given else option.default_for(option.spark[0])
    return values, set(given)


def _value(option: Option, spelling: Spelling, text: Any) -> Any:
    try:
        return from_text(option, spelling, text)
    except OptionError as exc:
        if spelling.shown:
            *rest, last = spelling.shown
            detail = f"{spelling.name} must be {', '.join(rest)} or {last}"
        else:
            detail = str(exc)
        raise OptionError(f"option {spelling.name} {text!r} is not supported; option {detail}") from None


def read_options(options: Mapping[str, Any]) -> tuple[dict[str, Any], set[str], bool | None]:
    """:func:`dataset_options`, the names given, and ``filterPushdown`` (None: not given)."""
    values, given = _parse(options, _READ, "read")
    pushdown = values.pop(FILTER_PUSHDOWN.name) if FILTER_PUSHDOWN.name in given else None
    values.pop(FILTER_PUSHDOWN.name, None)
    return values, given, pushdown


def dataset_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The :func:`tfsql.dataset` keyword arguments of a read's Spark options: every
    reading option Spark offers, by its Python name, with its value (Spark's default
    where it has one: ``threads`` 1, ``maxPartitionBytes`` 128 MiB as ``split_bytes``).

    Raises :class:`tfsql.errors.OptionError` naming the option as given for an
    unknown option or a value it does not take.

    >>> opts = dataset_options({"inferSample": "all", "hivePartitioning": "false"})
    >>> opts["infer_sample"], opts["hive_partitioning"], opts["threads"], opts["split_bytes"]
    (None, False, 1, 134217728)
    """
    return read_options(options)[0]


def writer_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The :func:`tfsql.write_tfrecord` keyword arguments of a write's Spark options
    (every writing option Spark offers, by its Python name).

    >>> opts = writer_options({"codec": "org.apache.hadoop.io.compress.GzipCodec", "partitionBy": "a,b"})
    >>> opts["compression"], opts["partition_by"], opts["max_rows_per_file"]
    ('gzip', ('a', 'b'), None)
    """
    return _parse(options, _WRITE, "write")[0]


def raw_paths(options: Mapping[str, Any]) -> list[str]:
    """The paths as the user gave them to ``.load()`` / ``.save()``."""
    lowered = {str(k).lower(): v for k, v in options.items()}
    if "paths" in lowered:
        paths = list(json.loads(lowered["paths"]) or [])
    elif "path" in lowered:
        paths = [lowered["path"]]
    else:
        paths = []
    if not paths:
        raise ValueError("format 'tfrecord' needs a path: .load(path) or .save(path)")
    return paths


def read_paths(options: Mapping[str, Any]) -> list[str]:
    """The paths to read, local ones absolute (executors may run elsewhere)."""
    return [_absolute(p) for p in raw_paths(options)]


def target_path(options: Mapping[str, Any]) -> tuple[str, str]:
    """The write target: (as given, absolute or a URL)."""
    [raw] = raw_paths(options)[:1]
    return raw, _absolute(raw)


def _absolute(path: str) -> str:
    """Local paths absolute; URLs as given.

    >>> _absolute("file:///tmp/x"), _absolute("s3://b/k")
    ('/tmp/x', 's3://b/k')
    """
    if "://" in path:
        return path[len("file://") :] if path.startswith("file://") else path
    if path.startswith("file:"):
        path = path[len("file:") :]
    return os.path.abspath(os.path.expanduser(path))
