"""The values tfsql's options take: their ``Literal`` types, vocabularies and defaults,
and one check per kind of value (each normalises a value or raises
:class:`OptionError` naming the option as the caller spelled it).

:mod:`tfsql.options` builds the option spec from these; front ends never re-list them.

Examples
--------
>>> from typing import get_args
>>> get_args(Mode) == MODES
True
>>> check_positive("batch_size", 3), read_compression("auto")
(3, 'infer')
"""

from __future__ import annotations

import os
from typing import Any, Callable, Literal, Mapping, Sequence, Union, cast, get_args

from tfsql.errors import OptionError

__all__ = [
    "RecordType",
    "ReadCompression",
    "WriteCompression",
    "Mode",
    "OnCorrupt",
    "Lists",
    "RECORD_TYPES",
    "READ_COMPRESSIONS",
    "WRITE_COMPRESSIONS",
    "MODES",
    "ON_CORRUPT",
    "LISTS",
    "MISSING_COLUMNS",
    "MissingColumns",
    "OptionError",
    "default_threads",
    "record_type_name",
    "record_code",
    "read_compression",
    "write_compression",
    "parse_size",
]

# --------------------------------------------------------------------------------------
# Literal types (for signatures and type checkers)
# --------------------------------------------------------------------------------------

#: ``record_type=``: tfsql's names and Spark-TFRecord's.
RecordType = Literal["example", "sequence_example", "bytes", "Example", "SequenceExample", "ByteArray"]

#: ``compression=`` when reading: ``"infer"`` detects gzip and zlib per file.
ReadCompression = Union[Literal["infer", "gzip", "zlib", "none"], None]

#: ``compression=`` when writing.
WriteCompression = Union[Literal["gzip", "zlib", "none"], None]

#: ``mode=`` of :func:`tfsql.write_tfrecord`.
Mode = Literal["error", "append", "overwrite", "overwrite_partitions", "ignore"]

#: ``on_corrupt=``: raise, skip with a warning, or call a function with each
#: :class:`tfsql.CorruptRecordError`.
OnCorrupt = Union[Literal["raise", "skip"], Callable[[Exception], object]]

#: ``lists=`` of schema inference.
Lists = Literal["auto", "always"]

#: ``missing_columns=``: a ``schema=`` column that no sampled record holds raises, or
#: is read as null.
MissingColumns = Literal["raise", "insert"]

# --------------------------------------------------------------------------------------
# Vocabularies
# --------------------------------------------------------------------------------------

#: Record type names -> canonical name (tfsql's and Spark-TFRecord's; matched in any case).
RECORD_TYPES: dict[str, str] = {
    "example": "example",
    "sequence_example": "sequence_example",
    "sequenceexample": "sequence_example",
    "bytes": "bytes",
    "bytearray": "bytes",
    "byte_array": "bytes",
    "raw": "bytes",
}

#: Compression names when reading -> canonical value (``"infer"`` detects per file).
READ_COMPRESSIONS: dict[str, str | None] = {
    "infer": "infer",
    "auto": "infer",
    "none": None,
    "uncompressed": None,
    "": None,
    "gzip": "gzip",
    "gz": "gzip",
    "zlib": "zlib",
    "deflate": "zlib",
    "org.apache.hadoop.io.compress.gzipcodec": "gzip",
    "org.apache.hadoop.io.compress.defaultcodec": "zlib",
    "org.apache.hadoop.io.compress.deflatecodec": "zlib",
}

#: Compression names when writing -> canonical value (``"auto"``: from the file name,
#: resolved by the writer of a single file; a directory is uncompressed).
WRITE_COMPRESSIONS: dict[str, str | None] = {k: v for k, v in READ_COMPRESSIONS.items() if v != "infer"}

#: The save modes of ``write_tfrecord`` (what happens when the target exists).
MODES: tuple[str, ...] = get_args(Mode)

#: ``on_corrupt`` names (a callable is accepted too).
ON_CORRUPT: tuple[str, ...] = get_args(get_args(OnCorrupt)[0])

#: ``lists`` names of schema inference.
LISTS: tuple[str, ...] = get_args(Lists)

#: ``missing_columns`` names.
MISSING_COLUMNS: tuple[str, ...] = get_args(MissingColumns)

#: Defaults shared by readers (the C core and the DuckDB extension use the same numbers).
DEFAULT_BATCH_SIZE = 65536
DEFAULT_BATCH_BYTES = 16 << 20
DEFAULT_INFER_SAMPLE = 1000
DEFAULT_INFER_FILES = 16
DEFAULT_INFER_BYTES = 4 << 20
DEFAULT_MAX_RECORD_BYTES = 2 << 30
DEFAULT_MAX_PARTITION_BYTES = 128 << 20  # Spark's spark.sql.files.maxPartitionBytes


def default_threads() -> int:
    """Decode threads when ``threads`` is not given: the machine's cores, at most 8."""
    return max(1, min(8, os.cpu_count() or 1))


# --------------------------------------------------------------------------------------
# Checks: one per kind of value, each raising OptionError that names the option
# --------------------------------------------------------------------------------------


def choice_check(
    vocabulary: Mapping[str, Any] | Sequence[str], what: str, *, unknown: bool = False
) -> Callable[[str, Any], Any]:
    """A check of names in ``vocabulary``; an error says ``what`` they are (``unknown``:
    worded "unknown NAME 'value'; use WHAT")."""

    def check(name: str, value: Any) -> Any:
        key = value.strip().lower() if isinstance(value, str) else value
        if isinstance(vocabulary, Mapping):
            if key is None and None in vocabulary.values():
                return None
            if isinstance(key, str) and key in vocabulary:
                return vocabulary[key]
        elif key in vocabulary:
            return key
        if unknown:
            raise OptionError(f"unknown {name} {value!r}; use {what}")
        raise OptionError(f"{name} must be {what}, not {value!r}")

    # what the C header of the extension's vocabularies is generated from (tfsql.option_header)
    check.vocabulary = vocabulary  # type: ignore[attr-defined]
    check.what = what  # type: ignore[attr-defined]
    check.unknown = unknown  # type: ignore[attr-defined]
    return check


def record_type_name(value: Any, name: str = "record_type") -> str:
    """The canonical record type name (``"example"``, ``"sequence_example"``, ``"bytes"``).

    >>> record_type_name("ByteArray"), record_type_name("SequenceExample")
    ('bytes', 'sequence_example')
    """
    return cast(str, check_record_type(name, value))


def record_code(value: Any, name: str = "record_type") -> int:
    """The C codec's code of a record type (any name :data:`RECORD_TYPES` accepts).

    >>> from tfsql._codec import codec
    >>> record_code("SequenceExample") == codec.SEQUENCE_EXAMPLE
    True
    """
    from tfsql._codec import codec

    codes = {"example": codec.EXAMPLE, "sequence_example": codec.SEQUENCE_EXAMPLE, "bytes": codec.RAW}
    return codes[record_type_name(value, name)]


def read_compression(value: Any, name: str = "compression") -> str | None:
    """``"infer"``, ``"gzip"``, ``"zlib"`` or None (no compression).

    >>> read_compression("auto"), read_compression("DEFLATE"), read_compression("none")
    ('infer', 'zlib', None)
    """
    return cast("str | None", check_read_compression(name, value))


def write_compression(value: Any, name: str = "compression") -> str | None:
    """``"gzip"``, ``"zlib"`` or None.

    >>> write_compression("org.apache.hadoop.io.compress.GzipCodec"), write_compression(None)
    ('gzip', None)
    """
    return cast("str | None", check_write_compression(name, value))


check_record_type = choice_check(
    RECORD_TYPES,
    "'example', 'sequence_example' or 'bytes' (Spark-TFRecord's 'Example', 'SequenceExample', 'ByteArray' work too)",
    unknown=True,
)
check_read_compression = choice_check(
    READ_COMPRESSIONS, "'infer' (alias 'auto'), None, 'gzip' or 'zlib' (alias 'deflate')", unknown=True
)
check_write_compression = choice_check(WRITE_COMPRESSIONS, "None, 'gzip' or 'zlib' (alias 'deflate')", unknown=True)
check_mode = choice_check(MODES, "one of " + ", ".join(repr(m) for m in MODES))
check_lists = choice_check(LISTS, "'auto' or 'always'")
check_missing_columns = choice_check(MISSING_COLUMNS, "'insert' or 'raise'")


_check_on_corrupt_name = choice_check(
    ON_CORRUPT, "one of 'raise', 'skip' or a function called with each CorruptRecordError"
)


def check_on_corrupt(name: str, value: Any) -> Any:
    if callable(value):
        return value
    return _check_on_corrupt_name(name, value)


check_on_corrupt.vocabulary = ON_CORRUPT  # type: ignore[attr-defined]
check_on_corrupt.what = "'raise' or 'skip'"  # type: ignore[attr-defined]
check_on_corrupt.unknown = False  # type: ignore[attr-defined]


def check_boolean(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise OptionError(f"{name} must be true or false, not {value!r}")


def check_optional_boolean(name: str, value: Any) -> bool | None:
    return None if value is None else check_boolean(name, value)


def check_positive(name: str, value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    raise OptionError(f"{name} must be a positive integer, not {value!r}")


def check_positive_or_none(name: str, value: Any) -> int | None:
    return None if value is None else check_positive(name, value)


def check_positive_or_all(name: str, value: Any) -> int | None:
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
        return value
    raise OptionError(f"{name} must be a positive integer or None (all of them), not {value!r}")


def check_level(name: str, value: Any) -> int | None:
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 9):
        return value
    raise OptionError(f"{name} must be an integer from 0 to 9, not {value!r}")


def check_column_name(name: str, value: Any) -> str | None:
    if value is None or (isinstance(value, str) and value):
        return value
    raise OptionError(f"{name} must be a column name, not {value!r}")


def check_text(name: str, value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise OptionError(f"{name} must be a string, not {value!r}")


def check_file_prefix(name: str, value: Any) -> str:
    if isinstance(value, str) and value and "/" not in value and "\\" not in value:
        return value
    raise OptionError(f"{name} must be a non-empty file name prefix, not {value!r}")


def check_columns(name: str, value: Any) -> tuple[str, ...]:
    names = (value,) if isinstance(value, str) else tuple(value or ())
    if not all(isinstance(n, str) and n for n in names):
        raise OptionError(f"{name} must be a column name or a list of them, not {value!r}")
    if len(set(names)) != len(names):
        raise OptionError(f"{name} names a column twice: {list(names)}")
    return names


def check_prefixes(name: str, value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    prefixes = (value,) if isinstance(value, str) else tuple(value)
    if not all(isinstance(p, str) and p for p in prefixes):
        raise OptionError(f"{name} must be a file name prefix or a list of them, not {value!r}")
    return prefixes


def check_anything(name: str, value: Any) -> Any:
    return value


_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "k": 1000,
    "kb": 1000,
    "m": 1000**2,
    "mb": 1000**2,
    "g": 1000**3,
    "gb": 1000**3,
    "t": 1000**4,
    "tb": 1000**4,
    "ki": 1024,
    "kib": 1024,
    "mi": 1024**2,
    "mib": 1024**2,
    "gi": 1024**3,
    "gib": 1024**3,
    "ti": 1024**4,
    "tib": 1024**4,
}


def parse_size(value: Any, name: str = "size") -> int:
    """A byte count: an integer, or text such as ``'64MB'``, ``'1.5GiB'``, ``'1000'``.

    >>> parse_size("64MB"), parse_size("2KiB"), parse_size(10)
    (64000000, 2048, 10)
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return check_positive(name, value)
    if isinstance(value, str):
        text = value.strip().lower().replace(" ", "")
        number = text.rstrip("abcdefghijklmnopqrstuvwxyz")
        unit = text[len(number) :]
        if number and unit in _SIZE_UNITS:
            try:
                return check_positive(name, int(float(number) * _SIZE_UNITS[unit]))
            except ValueError:
                pass
    raise OptionError(f"{name} must be a number of bytes such as 1000000 or '64MB', not {value!r}")
