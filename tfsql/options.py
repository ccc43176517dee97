"""Every option of tfsql, once: its type, default, accepted values and its spelling in
each front end.

A reading option is a field of :class:`ReadOptions`, a writing option a field of
:class:`WriteOptions`. Each field carries an :class:`Option` describing it: the
documentation line, how a value is checked and normalised (one function shared by all
front ends), and how Python (``tfsql.dataset`` / ``write_tfrecord``), Polars
(``pl.scan_tfrecord`` / ``write_tfrecord``), DuckDB SQL (``tfrecord_scan`` and ``COPY``
through ``tfsql.connect``), the native DuckDB extension, Spark (``.option(...)``) and the
``tfsql`` command spell it. Front ends build their parameter lists, help texts and error
messages from :data:`READ_OPTIONS` and :data:`WRITE_OPTIONS`; ``tests/unit/test_options.py``
checks that each front end accepts every option marked for it.

Adding an option is one field here plus its implementation.

Vocabularies (one definition each): :data:`RECORD_TYPES`, :data:`READ_COMPRESSIONS`,
:data:`WRITE_COMPRESSIONS`, :data:`MODES`, :data:`ON_CORRUPT`, :data:`LISTS`.

Examples
--------
>>> ReadOptions(record_type="SequenceExample", compression="auto").record_type
'sequence_example'
>>> ReadOptions(compression="auto").compression
'infer'
>>> ReadOptions(batch_size=0)
Traceback (most recent call last):
tfsql.options.OptionError: batch_size must be a positive integer, not 0
>>> READ_OPTIONS["infer_sample"].spelled("spark")
'inferSample'
>>> [s.name for s in READ_OPTIONS["on_corrupt"].sql]
['on_corrupt', 'ignore_errors']
>>> WriteOptions(compression="GZIP", partition_by="label").partition_by
('label',)
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping, Sequence, cast

from tfsql._types import Lists, Mode, OnCorrupt, ReadCompression, RecordType, WriteCompression

__all__ = [
    "Option",
    "Spelling",
    "OptionError",
    "ReadOptions",
    "WriteOptions",
    "READ_OPTIONS",
    "WRITE_OPTIONS",
    "FRONT_ENDS",
    "RECORD_TYPES",
    "READ_COMPRESSIONS",
    "WRITE_COMPRESSIONS",
    "MODES",
    "ON_CORRUPT",
    "LISTS",
    "record_type_name",
    "record_code",
    "read_compression",
    "write_compression",
    "from_text",
    "default_threads",
]

FrontEnd = Literal["python", "polars", "sql", "native", "spark", "cli"]
#: The front ends an option can be offered by.
FRONT_ENDS: tuple[FrontEnd, ...] = ("python", "polars", "sql", "native", "spark", "cli")

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
MODES: tuple[str, ...] = ("error", "append", "overwrite", "overwrite_partitions", "ignore")

#: ``on_corrupt`` names (a callable is accepted too).
ON_CORRUPT: tuple[str, ...] = ("raise", "skip")

#: ``lists`` names of schema inference.
LISTS: tuple[str, ...] = ("auto", "always")

#: Defaults shared by readers (the C core and the DuckDB extension use the same numbers).
DEFAULT_BATCH_SIZE = 65536
DEFAULT_BATCH_BYTES = 16 << 20
DEFAULT_INFER_SAMPLE = 1000
DEFAULT_INFER_FILES = 16
DEFAULT_INFER_BYTES = 4 << 20
DEFAULT_MAX_RECORD_BYTES = 2 << 30
DEFAULT_MAX_PARTITION_BYTES = 128 << 20  # Spark's spark.sql.files.maxPartitionBytes


class OptionError(ValueError):
    """An option value is not accepted; the message names the option as the caller
    spelled it and the values it takes."""


def default_threads() -> int:
    """Decode threads when ``threads`` is not given: the machine's cores, at most 8."""
    return max(1, min(8, os.cpu_count() or 1))


# --------------------------------------------------------------------------------------
# Checks: one per kind of value, each raising OptionError that names the option
# --------------------------------------------------------------------------------------


def _choice(vocabulary: Mapping[str, Any] | Sequence[str], what: str, *, unknown: bool = False
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

    return check


def record_type_name(value: Any, name: str = "record_type") -> str:
    """The canonical record type name (``"example"``, ``"sequence_example"``, ``"bytes"``).

    >>> record_type_name("ByteArray"), record_type_name("SequenceExample")
    ('bytes', 'sequence_example')
    """
    return cast(str, _record_type(name, value))


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
    return cast("str | None", _read_compression(name, value))


def write_compression(value: Any, name: str = "compression") -> str | None:
    """``"gzip"``, ``"zlib"`` or None.

    >>> write_compression("org.apache.hadoop.io.compress.GzipCodec"), write_compression(None)
    ('gzip', None)
    """
    return cast("str | None", _write_compression(name, value))


_record_type = _choice(
    RECORD_TYPES, "'example', 'sequence_example' or 'bytes' (Spark-TFRecord's 'Example', "
    "'SequenceExample', 'ByteArray' work too)", unknown=True,
)
_read_compression = _choice(READ_COMPRESSIONS, "'infer' (alias 'auto'), None, 'gzip' or 'zlib' (alias 'deflate')",
                            unknown=True)
_write_compression = _choice(WRITE_COMPRESSIONS, "None, 'gzip' or 'zlib' (alias 'deflate')", unknown=True)
_mode = _choice(MODES, "one of " + ", ".join(repr(m) for m in MODES))
_lists = _choice(LISTS, "'auto' or 'always'")


def _on_corrupt(name: str, value: Any) -> Any:
    if callable(value):
        return value
    return _choice(ON_CORRUPT, "one of 'raise', 'skip' or a function called with each CorruptRecordError")(
        name, value)


def _boolean(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise OptionError(f"{name} must be true or false, not {value!r}")


def _optional_boolean(name: str, value: Any) -> bool | None:
    return None if value is None else _boolean(name, value)


def _positive(name: str, value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value
    raise OptionError(f"{name} must be a positive integer, not {value!r}")


def _positive_or_none(name: str, value: Any) -> int | None:
    return None if value is None else _positive(name, value)


def _positive_or_all(name: str, value: Any) -> int | None:
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
        return value
    raise OptionError(f"{name} must be a positive integer or None (all of them), not {value!r}")


def _level(name: str, value: Any) -> int | None:
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 9):
        return value
    raise OptionError(f"{name} must be an integer from 0 to 9, not {value!r}")


def _column_name(name: str, value: Any) -> str | None:
    if value is None or (isinstance(value, str) and value):
        return value
    raise OptionError(f"{name} must be a column name, not {value!r}")


def _text(name: str, value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    raise OptionError(f"{name} must be a string, not {value!r}")


def _file_prefix(name: str, value: Any) -> str:
    if isinstance(value, str) and value and "/" not in value and "\\" not in value:
        return value
    raise OptionError(f"{name} must be a non-empty file name prefix, not {value!r}")


def _columns(name: str, value: Any) -> tuple[str, ...]:
    names = (value,) if isinstance(value, str) else tuple(value or ())
    if not all(isinstance(n, str) and n for n in names):
        raise OptionError(f"{name} must be a column name or a list of them, not {value!r}")
    if len(set(names)) != len(names):
        raise OptionError(f"{name} names a column twice: {list(names)}")
    return names


def _prefixes(name: str, value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    prefixes = (value,) if isinstance(value, str) else tuple(value)
    if not all(isinstance(p, str) and p for p in prefixes):
        raise OptionError(f"{name} must be a file name prefix or a list of them, not {value!r}")
    return prefixes


def _anything(name: str, value: Any) -> Any:
    return value


# --------------------------------------------------------------------------------------
# The spec
# --------------------------------------------------------------------------------------

#: Spark-TFRecord's record type names (matched in any case through RECORD_TYPES).
_SPARK_RECORD_TYPES = ("Example", "SequenceExample", "ByteArray")

ValueKind = Literal["bool", "count", "count_or_all", "choice", "name", "text", "types", "bool_or_name",
                    "size", "columns", "flag", "level"]


@dataclass(frozen=True)
class Spelling:
    """How one front end spells an option.

    ``value`` is the kind of value as written there (it decides how text is parsed and
    which SQL type a parameter has); ``maps`` translates front-end values before the
    option's check (``ignore_errors := true`` -> ``on_corrupt='skip'``); ``default``
    overrides the option's default in this front end (Spark's ``maxPartitionBytes``);
    ``shown`` lists the values as this front end's users know them, for its error
    messages (Spark-TFRecord's ``Example``, ``SequenceExample``, ``ByteArray``).
    """

    name: str
    value: ValueKind
    maps: Mapping[Any, Any] | None = None
    default: Any = None  # None: the option's own default
    shown: tuple[str, ...] = ()  # the values as this front end documents them (its error messages)

    @property
    def sql_type(self) -> str:
        """The DuckDB type of a SQL parameter of this spelling."""
        return _SQL_TYPES[self.value]

    def translate(self, value: Any) -> Any:
        """The Python value of a value given in this spelling.

        >>> Spelling("ignore_errors", "bool", maps={True: "skip", False: "raise"}).translate(True)
        'skip'
        >>> Spelling("sample_size", "count_or_all").translate(-1) is None
        True
        """
        if self.value == "count_or_all" and isinstance(value, int) and not isinstance(value, bool) and value < 0:
            value = None
        if self.maps is not None and isinstance(value, (bool, int, str)) and value in self.maps:
            return self.maps[value]
        return value


_SQL_TYPES: dict[str, str] = {
    "bool": "BOOLEAN", "flag": "BOOLEAN", "count": "BIGINT", "count_or_all": "BIGINT", "level": "BIGINT",
    "choice": "VARCHAR", "name": "VARCHAR", "text": "VARCHAR", "types": "STRUCT",
    "bool_or_name": "BOOLEAN or VARCHAR", "size": "BIGINT or VARCHAR", "columns": "VARCHAR or VARCHAR[]",
}


@dataclass(frozen=True)
class Option:
    """One option: what it means, how its values are checked, how each front end spells it.

    ``python`` and ``polars`` are keyword arguments named like the option; ``sql`` and
    ``spark`` list spellings (the first is the main one, the rest aliases); ``cli`` is a
    flag. ``native`` marks the options the DuckDB extension implements in C.
    """

    name: str
    doc: str
    check: Callable[[str, Any], Any]
    default: Any = None
    choices: tuple[str, ...] = ()
    python: bool = True
    polars: bool = True
    sql: tuple[Spelling, ...] = ()
    native: bool = False
    spark: tuple[Spelling, ...] = ()
    cli: str | None = None
    cli_value: ValueKind = "text"
    scan_time: bool = False

    def offered_by(self, front_end: FrontEnd) -> bool:
        """Whether ``front_end`` offers this option."""
        if front_end in ("python", "polars"):
            return getattr(self, front_end)
        if front_end == "native":
            return self.native
        return bool(getattr(self, front_end))

    def spelled(self, front_end: FrontEnd) -> str | None:
        """The option's main name in ``front_end`` (None: not offered)."""
        if not self.offered_by(front_end):
            return None
        if front_end in ("sql", "native"):
            return self.sql[0].name
        if front_end == "spark":
            return self.spark[0].name
        if front_end == "cli":
            return self.cli
        return self.name

    def validate(self, value: Any, *, as_spelled: str | None = None) -> Any:
        """The checked, normalised value (``as_spelled`` names the option in errors)."""
        return self.check(as_spelled or self.name, value)


def _option(default: Any, doc: str, check: Callable[[str, Any], Any], **spec: Any) -> Any:
    """A dataclass field carrying its :class:`Option` (completed with the field's name)."""
    return field(default=default, metadata={"option": dict(doc=doc, check=check, default=default, **spec)})


def _spec(cls: type) -> dict[str, Option]:
    return {f.name: Option(name=f.name, **f.metadata["option"]) for f in dataclasses.fields(cls)}


class _Checked:
    """Runs each field's check in ``__post_init__`` (values normalised in place)."""

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            spec = f.metadata["option"]
            object.__setattr__(self, f.name, spec["check"](f.name, getattr(self, f.name)))

    def changed(self, **changes: Any) -> Any:
        """A copy with ``changes`` applied (and checked)."""
        unknown = sorted(set(changes) - {f.name for f in dataclasses.fields(self)})  # type: ignore[arg-type]
        if unknown:
            raise TypeError(f"unknown option {unknown[0]!r}")
        return dataclasses.replace(self, **changes)  # type: ignore[type-var]


@dataclass(frozen=True)
class ReadOptions(_Checked):
    """The reading options of :func:`tfsql.dataset` and every reader built on it.

    ``scan_time`` options can change per scan (:meth:`tfsql.Dataset.with_options`);
    the others decide discovery and the schema when a dataset is opened.
    """

    schema: Any = _option(
        None, "read these columns with these types instead of inferring them", _anything,
        sql=(Spelling("schema", "types"), Spelling("columns", "types")), cli="--schema", cli_value="types")
    record_type: RecordType = _option(
        "example", "what the records hold: tf.train.Example, SequenceExample, or raw bytes (one binary column)",
        _record_type, choices=("example", "sequence_example", "bytes"), native=True,
        sql=(Spelling("record_type", "choice"),), spark=(Spelling("recordType", "choice", shown=_SPARK_RECORD_TYPES),),
        cli="--record-type", cli_value="choice", scan_time=True)
    compression: ReadCompression = _option(
        "infer", "compression of the files; 'infer' detects gzip and zlib per file from their first bytes",
        _read_compression, choices=("infer", "none", "gzip", "zlib"), native=True,
        sql=(Spelling("compression", "choice"),),
        spark=(Spelling("codec", "choice"), Spelling("compression", "choice")),
        cli="--compression", cli_value="choice", scan_time=True)
    verify_checksums: bool = _option(
        True, "check each record's data CRC (the length CRC is always checked)", _boolean, native=True,
        sql=(Spelling("verify_checksums", "bool"),), spark=(Spelling("verifyChecksums", "bool"),),
        cli="--verify-checksums", cli_value="bool", scan_time=True)
    on_corrupt: OnCorrupt = _option(
        "raise", "'raise' stops at a corrupt record; 'skip' drops it with a warning", _on_corrupt,
        choices=ON_CORRUPT, native=True,
        sql=(Spelling("on_corrupt", "choice"), Spelling("ignore_errors", "bool", maps={True: "skip", False: "raise"})),
        spark=(Spelling("onCorrupt", "choice"),), cli="--on-corrupt", cli_value="choice", scan_time=True)
    hive_partitioning: bool | None = _option(
        None, "None discovers key=value directories; False ignores them; True requires them", _optional_boolean,
        native=True, sql=(Spelling("hive_partitioning", "bool"),),
        spark=(Spelling("hivePartitioning", "choice", maps={"auto": None, "true": True, "false": False}),),
        cli="--hive-partitioning", cli_value="bool")
    hive_schema: Any = _option(
        None, "types of the partition columns (default: int64 when every value is an integer, else string)",
        _anything, sql=(Spelling("hive_types", "types"),))
    include_file_paths: str | None = _option(
        None, "add a string column of this name holding each row's file", _column_name, native=True,
        sql=(Spelling("filename", "bool_or_name", maps={True: "filename", False: None}),),
        spark=(Spelling("includeFilePaths", "name"),), cli="--include-file-paths", cli_value="name",
        scan_time=True)
    infer_sample: int | None = _option(
        DEFAULT_INFER_SAMPLE, "records read from each sampled file to infer the schema (None: all)",
        _positive_or_all, native=True,
        sql=(Spelling("infer_sample", "count_or_all"), Spelling("sample_size", "count_or_all")),
        spark=(Spelling("inferSample", "count_or_all"),), cli="--infer-sample", cli_value="count_or_all")
    infer_files: int | None = _option(
        DEFAULT_INFER_FILES, "files sampled to infer the schema, spread over the list (None: all)",
        _positive_or_all, native=True, sql=(Spelling("infer_files", "count_or_all"),),
        spark=(Spelling("inferFiles", "count_or_all"),), cli="--infer-files", cli_value="count_or_all")
    infer_bytes: int | None = _option(
        DEFAULT_INFER_BYTES, "a file's inference sample also ends once it holds this many record bytes",
        _positive_or_all, sql=(Spelling("infer_bytes", "count_or_all"),),
        spark=(Spelling("inferBytes", "count_or_all"),), cli="--infer-bytes", cli_value="count_or_all")
    lists: Lists = _option(
        "auto", "'always' infers list columns even where every record holds one value", _lists,
        choices=LISTS, native=True, sql=(Spelling("lists", "choice"),), spark=(Spelling("lists", "choice"),),
        cli="--lists", cli_value="choice")
    filesystem: Any = _option(None, "an fsspec filesystem for plain paths", _anything)
    glob: bool = _option(
        True, "False treats *?[ in paths literally", _boolean, native=True, sql=(Spelling("glob", "bool"),),
        spark=(Spelling("glob", "bool"),), cli="--glob", cli_value="bool")
    hidden_file_prefix: Any = _option(
        None, "also skip files whose name starts with one of these prefixes", _prefixes,
        sql=(Spelling("hidden_file_prefix", "columns"),), spark=(Spelling("hiddenFilePrefix", "columns"),),
        cli="--hidden-file-prefix", cli_value="columns")
    batch_size: int = _option(
        DEFAULT_BATCH_SIZE, "rows per batch at most", _positive, native=True,
        sql=(Spelling("batch_size", "count"),), spark=(Spelling("batchSize", "count"),),
        cli="--batch-size", cli_value="count", scan_time=True)
    batch_bytes: int = _option(
        DEFAULT_BATCH_BYTES, "bytes per batch at most (records read and Arrow columns decoded)", _positive,
        sql=(Spelling("batch_bytes", "count"),), spark=(Spelling("batchBytes", "count"),), scan_time=True)
    threads: int | None = _option(
        None, "decode threads (default: cores, at most 8; 1 decodes in the calling thread)", _positive_or_none,
        native=True, sql=(Spelling("threads", "count"),), spark=(Spelling("threads", "count", default=1),),
        cli="--threads", cli_value="count", scan_time=True)
    max_record_bytes: int = _option(
        DEFAULT_MAX_RECORD_BYTES, "a record whose header claims more bytes is reported as corrupt", _positive,
        sql=(Spelling("max_record_bytes", "count"),), spark=(Spelling("maxRecordBytes", "count"),),
        cli="--max-record-bytes", cli_value="count", scan_time=True)
    split_bytes: int | None = _option(
        None, "read an uncompressed file of at least twice this size as byte ranges on several threads "
              "(None: whole files)", _positive_or_none,
        sql=(Spelling("split_bytes", "count_or_all"),),
        spark=(Spelling("maxPartitionBytes", "count_or_all", default=DEFAULT_MAX_PARTITION_BYTES),),
        scan_time=True)
    progress: Any = _option(None, "a progress bar that file reads advance (tfsql.progress)", _anything,
                            python=False, polars=False, scan_time=True)

    @property
    def decode_threads(self) -> int:
        """``threads``, or the default when it is None."""
        return self.threads or default_threads()

    @property
    def record_code(self) -> int:
        """The C codec's code of ``record_type``."""
        return record_code(self.record_type)


@dataclass(frozen=True)
class WriteOptions(_Checked):
    """The writing options of :func:`tfsql.write_tfrecord` and every writer built on it
    (checks between options, such as ``num_shards`` with ``max_rows_per_file``, are the
    writer's)."""

    partition_by: Any = _option(
        (), "columns whose values become key=value directories", _columns,
        sql=(Spelling("PARTITION_BY", "columns"), Spelling("PARTITION", "columns")),
        spark=(Spelling("partitionBy", "columns"),), cli="--partition-by", cli_value="columns")
    record_type: RecordType = _option(
        "example", "Example, SequenceExample (list-of-list columns become feature lists) or raw bytes",
        _record_type, choices=("example", "sequence_example", "bytes"),
        sql=(Spelling("RECORD_TYPE", "choice"),), spark=(Spelling("recordType", "choice", shown=_SPARK_RECORD_TYPES),),
        cli="--record-type", cli_value="choice")
    layout: Any = _option(None, "per-column feature layout overrides", _anything, polars=True)
    compression: WriteCompression = _option(
        None, "gzip or zlib stream compression (files get .gz / .zz)", _write_compression,
        choices=("none", "gzip", "zlib"),
        sql=(Spelling("COMPRESSION", "choice"), Spelling("CODEC", "choice")),
        spark=(Spelling("codec", "choice"), Spelling("compression", "choice")),
        cli="--compression", cli_value="choice")
    compression_level: int | None = _option(
        None, "0-9 (gzip/zlib)", _level, sql=(Spelling("COMPRESSION_LEVEL", "level"),),
        spark=(Spelling("compressionLevel", "level"),), cli="--compression-level", cli_value="level")
    mode: Mode = _option(
        "error", "when the target exists: error, append, overwrite, overwrite_partitions or ignore", _mode,
        choices=MODES,
        sql=(Spelling("OVERWRITE", "flag", maps={True: "overwrite"}),
             Spelling("OVERWRITE_OR_IGNORE", "flag", maps={True: "overwrite_partitions"}),
             Spelling("APPEND", "flag", maps={True: "append"})),
        cli="--mode", cli_value="choice")
    max_rows_per_file: int | None = _option(
        None, "start a new file after this many records", _positive_or_none,
        sql=(Spelling("ROWS_PER_FILE", "count"), Spelling("MAX_ROWS_PER_FILE", "count")),
        spark=(Spelling("maxRecordsPerFile", "count"),), cli="--max-rows-per-file", cli_value="count")
    max_bytes_per_file: int | None = _option(
        None, "start a new file after this many bytes", _positive_or_none,
        sql=(Spelling("FILE_SIZE_BYTES", "size"), Spelling("MAX_FILE_SIZE", "size")),
        spark=(Spelling("maxBytesPerFile", "size"),), cli="--max-bytes-per-file", cli_value="size")
    num_shards: int | None = _option(
        None, "write exactly this many files part-0000k-of-0000N.tfrecord", _positive_or_none,
        # not a Spark option: Spark's partitions decide the files (df.repartition(n)); a task
        # cannot move rows to another, so "exactly N files" cannot hold (tfsql.spark.writing)
        sql=(Spelling("NUM_SHARDS", "count"),), spark=(),
        cli="--num-shards", cli_value="count")
    shard_prefix: str = _option("part", "file name prefix of shards", _file_prefix)
    filename_pattern: str | None = _option(
        None, "file names with {i}, {n} and/or {uuid}, e.g. 'train-{i:05d}-of-{n:05d}'", _text,
        sql=(Spelling("FILENAME_PATTERN", "text"),), spark=(Spelling("filenamePattern", "text"),),
        cli="--filename-pattern", cli_value="text")
    tfds: str | None = _option(
        None, "write a TensorFlow Datasets directory of this dataset name", _text,
        sql=(Spelling("TFDS", "name"),), spark=(), cli="--tfds", cli_value="name")
    filesystem: Any = _option(None, "an fsspec filesystem for plain paths", _anything)
    threads: int | None = _option(
        None, "threads that encode and compress files (default: cores, at most 8)", _positive_or_none,
        sql=(Spelling("THREADS", "count"),), cli="--threads", cli_value="count")
    progress: bool = _option(False, "show a progress bar", _boolean, polars=False)


#: Every reading option by its Python name.
READ_OPTIONS: dict[str, Option] = _spec(ReadOptions)
#: Every writing option by its Python name.
WRITE_OPTIONS: dict[str, Option] = _spec(WriteOptions)


def from_text(option: Option, spelling: Spelling, text: Any) -> Any:
    """The Python value of an option given as text (a Spark option or a CLI argument),
    checked. Raises :class:`OptionError` naming the option as spelled.

    >>> opt = READ_OPTIONS["infer_sample"]
    >>> from_text(opt, opt.spark[0], "all") is None, from_text(opt, opt.spark[0], "50")
    (True, 50)
    >>> from_text(READ_OPTIONS["verify_checksums"], READ_OPTIONS["verify_checksums"].spark[0], "no")
    Traceback (most recent call last):
    tfsql.options.OptionError: verifyChecksums must be true or false, not 'no'
    """
    name, kind = spelling.name, spelling.value
    if not isinstance(text, str):
        value = text
    elif kind in ("bool", "flag"):
        lowered = text.strip().lower()
        value = {"true": True, "false": False, "1": True, "0": False}.get(lowered, text)
    elif kind in ("count", "count_or_all", "level"):
        lowered = text.strip().lower()
        if kind == "count_or_all" and lowered in ("all", "-1"):
            value = None
        else:
            try:
                value = int(lowered)
            except ValueError:
                raise OptionError(f"{name} must be {'an integer' if kind == 'level' else 'a positive integer'}"
                                  f"{' or all' if kind == 'count_or_all' else ''}, not {text!r}") from None
    elif kind == "size":
        value = parse_size(text, name)
    elif kind == "columns":
        value = [part.strip() for part in text.split(",") if part.strip()]
    elif kind == "choice":
        value = text.strip().lower()
    else:
        value = text
    return option.validate(spelling.translate(value), as_spelled=name)


_SIZE_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "m": 1000**2, "mb": 1000**2, "g": 1000**3,
               "gb": 1000**3, "t": 1000**4, "tb": 1000**4, "ki": 1024, "kib": 1024, "mi": 1024**2,
               "mib": 1024**2, "gi": 1024**3, "gib": 1024**3, "ti": 1024**4, "tib": 1024**4}


def parse_size(value: Any, name: str = "size") -> int:
    """A byte count: an integer, or text such as ``'64MB'``, ``'1.5GiB'``, ``'1000'``.

    >>> parse_size("64MB"), parse_size("2KiB"), parse_size(10)
    (64000000, 2048, 10)
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return _positive(name, value)
    if isinstance(value, str):
        text = value.strip().lower().replace(" ", "")
        number = text.rstrip("abcdefghijklmnopqrstuvwxyz")
        unit = text[len(number):]
        if number and unit in _SIZE_UNITS:
            try:
                return _positive(name, int(float(number) * _SIZE_UNITS[unit]))
            except ValueError:
                pass
    raise OptionError(f"{name} must be a number of bytes such as 1000000 or '64MB', not {value!r}")
