"""Every option of tfsql, once: its type, default, accepted values and its spelling in
each front end.

A reading option is a field of :class:`ReadOptions`, a writing option a field of
:class:`WriteOptions`. Each field carries an :class:`Option` describing it: the
documentation line, how a value is checked and normalised (one function shared by all
front ends), and how Python (``tfsql.dataset`` / ``write_tfrecord``), Polars
(``pl.scan_tfrecord`` / ``write_tfrecord``), DuckDB SQL (``tfrecord_scan`` and ``COPY``
through ``tfsql.connect``), the native DuckDB extension, Spark (``.option(...)``) and the
``tfsql`` command spell it. Front ends build their parameter lists, help texts and error
messages from :data:`READ_OPTIONS` and :data:`WRITE_OPTIONS` (the keyword parameters of
``tfsql.dataset``, ``pl.scan_tfrecord`` and ``pl.read_tfrecord`` are generated from them:
`tfsql.option_python`); ``tests/integration/test_differential_frontends.py`` and
``tests/unit/test_options.py`` check that each front end accepts every option marked for it.

Adding an option is one field here plus its implementation (and, for a reading option,
``python -m tfsql.option_header --write``, which writes its keyword parameter into the
functions that take every reading option by name: see `tfsql.option_python`).

Vocabularies (one definition each): :data:`RECORD_TYPES`, :data:`READ_COMPRESSIONS`,
:data:`WRITE_COMPRESSIONS`, :data:`MODES`, :data:`ON_CORRUPT`, :data:`LISTS`,
:data:`MISSING_COLUMNS`.

Examples
--------
>>> ReadOptions(record_type="SequenceExample", compression="auto").record_type
'sequence_example'
>>> ReadOptions(compression="auto").compression
'infer'
>>> ReadOptions(batch_size=0)
Traceback (most recent call last):
tfsql.errors.OptionError: batch_size must be a positive integer, not 0
>>> READ_OPTIONS["infer_sample"].spelled("spark")
'inferSample'
>>> [s.name for s in READ_OPTIONS["on_corrupt"].sql]
['on_corrupt', 'ignore_errors']
>>> WriteOptions(compression="GZIP", partition_by="label").partition_by
('label',)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping

from tfsql.option_values import (  # noqa: F401  (re-exported: the vocabularies are part of the spec)
    DEFAULT_BATCH_BYTES,
    DEFAULT_BATCH_SIZE,
    DEFAULT_INFER_BYTES,
    DEFAULT_INFER_FILES,
    DEFAULT_INFER_SAMPLE,
    DEFAULT_MAX_PARTITION_BYTES,
    DEFAULT_MAX_RECORD_BYTES,
    LISTS,
    MISSING_COLUMNS,
    MODES,
    ON_CORRUPT,
    READ_COMPRESSIONS,
    RECORD_TYPES,
    WRITE_COMPRESSIONS,
    Lists,
    MissingColumns,
    Mode,
    OnCorrupt,
    OptionError,
    ReadCompression,
    RecordType,
    WriteCompression,
    check_anything,
    check_boolean,
    check_column_name,
    check_columns,
    check_file_prefix,
    check_level,
    check_lists,
    check_missing_columns,
    check_mode,
    check_on_corrupt,
    check_optional_boolean,
    check_positive,
    check_positive_or_all,
    check_positive_or_none,
    check_prefixes,
    check_read_compression,
    check_record_type,
    check_text,
    check_write_compression,
    default_threads,
    parse_size,
    read_compression,
    record_code,
    record_type_name,
    write_compression,
)

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
    "MISSING_COLUMNS",
    "NATIVE_READ_OPTIONS",
    "NATIVE_COPY_OPTIONS",
    "DUCKDB_COPY_OPTIONS",
    "COPY_COMPRESSION_AUTO",
    "copy_choices",
    "COMPAT_SQL_PARAMETERS",
    "record_type_name",
    "record_code",
    "read_compression",
    "write_compression",
    "from_text",
    "spellings",
    "default_threads",
]

FrontEnd = Literal["python", "polars", "sql", "native", "spark", "cli"]
#: The front ends an option can be offered by.
FRONT_ENDS: tuple[FrontEnd, ...] = ("python", "polars", "sql", "native", "spark", "cli")

# --------------------------------------------------------------------------------------
# The spec
# --------------------------------------------------------------------------------------

#: Spark-TFRecord's record type names (matched in any case through RECORD_TYPES).
_SPARK_RECORD_TYPES = ("Example", "SequenceExample", "ByteArray")

ValueKind = Literal[
    "bool",
    "count",
    "count_or_all",
    "choice",
    "name",
    "text",
    "types",
    "bool_or_name",
    "size",
    "columns",
    "flag",
    "level",
]


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
    "bool": "BOOLEAN",
    "flag": "BOOLEAN",
    "count": "BIGINT",
    "count_or_all": "BIGINT",
    "level": "BIGINT",
    "choice": "VARCHAR",
    "name": "VARCHAR",
    "text": "VARCHAR",
    "types": "STRUCT",
    "bool_or_name": "BOOLEAN or VARCHAR",
    "size": "BIGINT or VARCHAR",
    "columns": "VARCHAR or VARCHAR[]",
}


@dataclass(frozen=True)
class Option:
    """One option: what it means, how its values are checked, how each front end spells it.

    ``python`` and ``polars`` are keyword arguments named like the option; ``sql`` and
    ``spark`` list spellings (the first is the main one, the rest aliases); ``cli`` is a
    flag. ``native`` marks the options the DuckDB extension implements in C.

    A reading option's keyword parameter in `tfsql.dataset`, ``pl.scan_tfrecord`` and
    ``pl.read_tfrecord`` is generated from here (`tfsql.option_python`): ``annotation``
    is its type hint (default: the field's), ``doc_type`` and ``details`` its numpydoc
    entry (the type, and the paragraph; default: ``doc``). ``parquet_name`` marks an
    option Polars takes as the ``pl.scan_parquet`` parameter of the same name, written
    by hand among those in ``tfsql/polars/scan.py`` with Polars' types and wording.
    """

    name: str
    doc: str
    check: Callable[[str, Any], Any]
    default: Any = None
    choices: tuple[str, ...] = ()
    python: bool = True
    polars: bool = True
    annotation: str = "Any"
    doc_type: str = ""
    details: str = ""
    parquet_name: bool = False
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

    def default_for(self, spelling: Spelling) -> Any:
        """The option's default where ``spelling`` is used (the spelling's own, if it has one).

        >>> opt = READ_OPTIONS["threads"]
        >>> opt.default_for(opt.sql[0]), opt.default_for(opt.spark[0])
        (None, 1)
        """
        return self.default if spelling.default is None else spelling.default


def _option(default: Any, doc: str, check: Callable[[str, Any], Any], **spec: Any) -> Any:
    """A dataclass field carrying its :class:`Option` (completed with the field's name)."""
    return field(default=default, metadata={"option": dict(doc=doc, check=check, default=default, **spec)})


def _spec(cls: type, native: frozenset[str] = frozenset()) -> dict[str, Option]:
    unknown = native - {f.name for f in dataclasses.fields(cls)}
    assert not unknown, f"NATIVE_READ_OPTIONS names no option {sorted(unknown)}"
    return {
        f.name: Option(
            name=f.name,
            native=f.name in native,
            **{"annotation": str(f.type), **f.metadata["option"]},
        )
        for f in dataclasses.fields(cls)
    }


#: ``read_parquet`` parameters that ``tfrecord_scan`` accepts (checked for their type) and
#: otherwise ignores, so that queries written for Parquet run as they are; they are not
#: options (``union_by_name`` is always on: features are matched by name across files).
COMPAT_SQL_PARAMETERS: dict[str, str] = {"union_by_name": "BOOLEAN"}

#: The reading options the DuckDB extension implements in C: its parameter table
#: (``tfsql/duckdb_ext/options_gen.h``, ``python -m tfsql.option_header``) registers
#: their SQL spellings, and only theirs. An option joins this set when its C
#: implementation lands (and its sample in tests/integration/test_differential_frontends.py
#: then runs natively too).
NATIVE_READ_OPTIONS: frozenset[str] = frozenset(
    {
        "schema",
        "record_type",
        "compression",
        "verify_checksums",
        "on_corrupt",
        "hive_partitioning",
        "hive_schema",
        "include_file_paths",
        "infer_sample",
        "infer_files",
        "infer_bytes",
        "lists",
        "missing_columns",
        "glob",
        "max_record_bytes",
        "batch_bytes",
    }
)

#: The writing options the extension's native ``COPY ... TO ... (FORMAT tfrecord)`` reads
#: in its bind (``tfsql/duckdb_ext/copy_to.c``, from the table
#: ``python -m tfsql.option_header`` generates); their other SQL spellings too.
NATIVE_COPY_OPTIONS: frozenset[str] = frozenset({"record_type", "compression", "compression_level", "index"})

#: The options DuckDB's own COPY applies before a COPY function sees the rows (the
#: extension never receives them). Every other SQL spelling of a writing option is
#: refused by the native COPY with a message naming ``tfsql.write_tfrecord`` and
#: ``tfsql convert``, which write the files themselves.
DUCKDB_COPY_OPTIONS: tuple[str, ...] = (
    "PARTITION_BY",
    "OVERWRITE",
    "OVERWRITE_OR_IGNORE",
    "APPEND",
    "FILENAME_PATTERN",
    "FILE_EXTENSION",
    "PER_THREAD_OUTPUT",
    "USE_TMP_FILE",
    "RETURN_FILES",
)

#: What COPY's COMPRESSION adds to the writing vocabulary: the compression the file's name says.
COPY_COMPRESSION_AUTO = "auto"


def copy_choices(option: Option) -> str:
    """How a COPY error lists a choice option's values (the extension's native COPY, whose
    table ``python -m tfsql.option_header`` generates).

    >>> copy_choices(WRITE_OPTIONS["compression"])
    'none, gzip, zlib or auto'
    """
    choices = ", ".join(option.choices)
    return choices + f" or {COPY_COMPRESSION_AUTO}" if option.name == "compression" else choices


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


# The spec reads as a table, one option per field with its spellings beside it, so the
# formatter leaves it as written.
# fmt: off
@dataclass(frozen=True)
class ReadOptions(_Checked):
    """The reading options of :func:`tfsql.dataset` and every reader built on it.

    ``scan_time`` options can change per scan (:meth:`tfsql.Dataset.with_options`);
    the others decide discovery and the schema when a dataset is opened.
    """

    schema: Any = _option(
        None, "read these columns with these types instead of inferring them", check_anything,
        sql=(Spelling("schema", "types"), Spelling("columns", "types")), cli="--schema", cli_value="types",
        parquet_name=True, annotation="pa.Schema | Mapping[str, Any] | None",
        doc_type="pyarrow.Schema or dict of name -> pyarrow type, optional",
        details="Skip inference: read these columns, cast (range-checked) to these types. "
                "``list<list<...>>`` columns read SequenceExample feature lists.")
    record_type: RecordType = _option(
        "example", "what the records hold: tf.train.Example, SequenceExample, or raw bytes (one binary column)",
        check_record_type, choices=("example", "sequence_example", "bytes"), sql=(Spelling("record_type", "choice"),), spark=(Spelling("recordType", "choice", shown=_SPARK_RECORD_TYPES),),
        cli="--record-type", cli_value="choice", scan_time=True,
        doc_type='{"example", "sequence_example", "bytes"}',
        details='Spark-TFRecord\'s ``"Example"``, ``"SequenceExample"``, ``"ByteArray"`` work too. '
                '``"bytes"`` reads each record as one binary column ``record``.')
    compression: ReadCompression = _option(
        "infer", "compression of the files; 'infer' detects gzip and zlib per file from their first bytes",
        check_read_compression, choices=("infer", "none", "gzip", "zlib"), sql=(Spelling("compression", "choice"),),
        spark=(Spelling("codec", "choice"), Spelling("compression", "choice")),
        cli="--compression", cli_value="choice", scan_time=True,
        doc_type='{"infer", None, "gzip", "zlib"}',
        details='``"infer"`` detects gzip and zlib by their magic bytes, per file.')
    verify_checksums: bool = _option(
        True, "check each record's data CRC (the length CRC is always checked)", check_boolean, sql=(Spelling("verify_checksums", "bool"),), spark=(Spelling("verifyChecksums", "bool"),),
        cli="--verify-checksums", cli_value="bool", scan_time=True,
        doc_type="bool", details="Check each record's data CRC (the length CRC is always checked).")
    on_corrupt: OnCorrupt = _option(
        "raise", "'raise' stops at a corrupt record; 'skip' drops it with a warning", check_on_corrupt,
        choices=ON_CORRUPT, sql=(Spelling("on_corrupt", "choice"), Spelling("ignore_errors", "bool", maps={True: "skip", False: "raise"})),
        spark=(Spelling("onCorrupt", "choice"),), cli="--on-corrupt", cli_value="choice", scan_time=True,
        doc_type='{"raise", "skip"} or callable',
        details='``"skip"`` drops records whose data CRC fails (and the rest of a file after a bad length '
                "or truncation) with a warning for each; a callable is called with each "
                ":class:`~tfsql.errors.CorruptRecordError` instead of the warning.")
    hive_partitioning: bool | None = _option(
        None, "None discovers key=value directories; False ignores them; True requires them", check_optional_boolean,
        sql=(Spelling("hive_partitioning", "bool"),),
        spark=(Spelling("hivePartitioning", "choice", maps={"auto": None, "true": True, "false": False}),),
        cli="--hive-partitioning", cli_value="bool", parquet_name=True,
        doc_type="bool or None",
        details="None discovers ``key=value`` directories; False ignores them; True requires them.")
    hive_schema: Any = _option(
        None, "types of the partition columns (default: int64 when every value is an integer, else string)",
        check_anything, sql=(Spelling("hive_types", "types"),), parquet_name=True,
        annotation="pa.Schema | Mapping[str, Any] | None", doc_type="pyarrow.Schema or dict, optional",
        details="Types of partition columns (default: int64 when every value is an integer, else string).")
    include_file_paths: str | None = _option(
        None, "add a string column of this name holding each row's file", check_column_name, sql=(Spelling("filename", "bool_or_name", maps={True: "filename", False: None}),),
        spark=(Spelling("includeFilePaths", "name"),), cli="--include-file-paths", cli_value="name",
        scan_time=True, parquet_name=True,
        doc_type="str, optional", details="Add a string column of this name holding each row's file.")
    infer_sample: int | None = _option(
        DEFAULT_INFER_SAMPLE, "records read from each sampled file to infer the schema (None: all)",
        check_positive_or_all, sql=(Spelling("infer_sample", "count_or_all"), Spelling("sample_size", "count_or_all")),
        spark=(Spelling("inferSample", "count_or_all"),), cli="--infer-sample", cli_value="count_or_all",
        doc_type="int or None",
        details="Inference reads the first ``infer_sample`` records of each sampled file (None: all). "
                "See :mod:`tfsql.inference`.")
    infer_files: int | None = _option(
        DEFAULT_INFER_FILES, "files sampled to infer the schema, spread over the list (None: all)",
        check_positive_or_all, sql=(Spelling("infer_files", "count_or_all"),),
        spark=(Spelling("inferFiles", "count_or_all"),), cli="--infer-files", cli_value="count_or_all",
        doc_type="int or None",
        details="Inference samples up to ``infer_files`` files, spread over the list (None: all).")
    infer_bytes: int | None = _option(
        DEFAULT_INFER_BYTES, "a file's inference sample also ends once it holds this many record bytes",
        check_positive_or_all, sql=(Spelling("infer_bytes", "count_or_all"),),
        spark=(Spelling("inferBytes", "count_or_all"),), cli="--infer-bytes", cli_value="count_or_all",
        doc_type="int or None",
        details="A file's inference sample also ends once it holds this many record bytes (default 4 MiB; "
                "None: no byte bound; ignored with ``infer_sample=None``).")
    lists: Lists = _option(
        "auto", "'always' infers list columns even where every record holds one value", check_lists,
        choices=LISTS, sql=(Spelling("lists", "choice"),), spark=(Spelling("lists", "choice"),),
        cli="--lists", cli_value="choice",
        doc_type='{"auto", "always"}',
        details='``"always"`` infers list columns even where every record holds one value.')
    missing_columns: MissingColumns = _option(
        "raise", "a schema= column no sampled record holds: 'raise' names it, 'insert' reads it as null",
        check_missing_columns, choices=MISSING_COLUMNS, sql=(Spelling("missing_columns", "choice"),),
        spark=(Spelling("missingColumns", "choice", default="insert"),), cli="--missing-columns", cli_value="choice",
        parquet_name=True, doc_type='{"raise", "insert"}',
        details="A ``schema=`` column that none of the records inference would sample holds raises a "
                ':class:`~tfsql.errors.SchemaError` naming it (a misspelt name; a column the '
                "dataset's ``features.json`` names is none, and reads as null); "
                '``"insert"`` reads it as null.')
    filesystem: Any = _option(None, "an fsspec filesystem for plain paths", check_anything,
                              doc_type="fsspec filesystem, optional",
                              details="For plain paths on another filesystem.")
    glob: bool = _option(
        True, "False treats *?[ in paths literally", check_boolean, sql=(Spelling("glob", "bool"),),
        spark=(Spelling("glob", "bool"),), cli="--glob", cli_value="bool", parquet_name=True,
        doc_type="bool", details="False treats ``*?[`` in paths literally.")
    batch_size: int = _option(
        DEFAULT_BATCH_SIZE, "rows per batch at most", check_positive, sql=(Spelling("batch_size", "count"),), spark=(Spelling("batchSize", "count"),),
        cli="--batch-size", cli_value="count", scan_time=True,
        doc_type="int", details="Rows per batch at most.")
    batch_bytes: int = _option(
        DEFAULT_BATCH_BYTES, "bytes per batch at most (records read and Arrow columns decoded)", check_positive,
        sql=(Spelling("batch_bytes", "count"),), spark=(Spelling("batchBytes", "count"),), scan_time=True,
        doc_type="int",
        details="Bytes per batch at most, of both the records read and the Arrow columns decoded from them "
                "(a batch of many columns holds fewer rows).")
    threads: int | None = _option(
        None, "decode threads (default: cores, at most 8; 1 decodes in the calling thread)", check_positive_or_none,
        sql=(Spelling("threads", "count"),), spark=(Spelling("threads", "count", default=1),),
        cli="--threads", cli_value="count", scan_time=True,
        doc_type="int, optional",
        details="Decode threads (default: cores, at most 8); 1 decodes in the calling thread.")
    max_record_bytes: int = _option(
        DEFAULT_MAX_RECORD_BYTES, "a record whose header claims more bytes is reported as corrupt", check_positive,
        sql=(Spelling("max_record_bytes", "count"),), spark=(Spelling("maxRecordBytes", "count"),),
        cli="--max-record-bytes", cli_value="count", scan_time=True,
        doc_type="int",
        details="A record whose header claims more bytes (default 2 GiB) is reported as corrupt "
                "(:class:`~tfsql.errors.CorruptRecordError`) before memory is allocated for it.")
    split_bytes: int | None = _option(
        None, "read an uncompressed file of at least twice this size as byte ranges on several threads "
              "(None: files of 4 MiB and more are still read in pieces by the decode threads)",
        check_positive_or_none,
        sql=(Spelling("split_bytes", "count_or_all"),),
        spark=(Spelling("maxPartitionBytes", "count_or_all", default=DEFAULT_MAX_PARTITION_BYTES),),
        scan_time=True,
        doc_type="int or None",
        details="With several threads, an uncompressed file of at least twice this size is read as byte "
                "ranges of this size on several threads at once (see :mod:`tfsql.splits`; output order is "
                "kept). None (the default): a local file of 4 MiB or more is still read by the decode threads "
                "in pieces of about a batch, smaller ones a batch at a time.")
    hidden_file_prefix: Any = _option(
        None, "also skip files whose name starts with one of these prefixes", check_prefixes,
        sql=(Spelling("hidden_file_prefix", "columns"),), spark=(Spelling("hiddenFilePrefix", "columns"),),
        cli="--hidden-file-prefix", cli_value="columns", parquet_name=True,
        annotation="str | Sequence[str] | None", doc_type="str or list of str, optional",
        details="Also skip files found in directories or by globs whose name starts with one of these "
                "prefixes.")
    progress: Any = _option(None, "a progress bar that file reads advance (tfsql.progress)", check_anything,
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
        (), "columns whose values become key=value directories", check_columns,
        sql=(Spelling("PARTITION_BY", "columns"), Spelling("PARTITION", "columns")),
        spark=(Spelling("partitionBy", "columns"),), cli="--partition-by", cli_value="columns")
    record_type: RecordType = _option(
        "example", "Example, SequenceExample (list-of-list columns become feature lists) or raw bytes",
        check_record_type, choices=("example", "sequence_example", "bytes"),
        sql=(Spelling("RECORD_TYPE", "choice"),), spark=(Spelling("recordType", "choice", shown=_SPARK_RECORD_TYPES),),
        cli="--record-type", cli_value="choice")
    layout: Any = _option(None, "per-column feature layout overrides", check_anything, polars=True)
    compression: WriteCompression = _option(
        None, "gzip or zlib stream compression (files get .gz / .zz)", check_write_compression,
        choices=("none", "gzip", "zlib"),
        sql=(Spelling("COMPRESSION", "choice"), Spelling("CODEC", "choice")),
        spark=(Spelling("codec", "choice"), Spelling("compression", "choice")),
        cli="--compression", cli_value="choice")
    compression_level: int | None = _option(
        None, "0-9 (gzip/zlib)", check_level, sql=(Spelling("COMPRESSION_LEVEL", "level"),),
        spark=(Spelling("compressionLevel", "level"),), cli="--compression-level", cli_value="level")
    mode: Mode = _option(
        "error", "when the target exists: error, append, overwrite, overwrite_partitions or ignore", check_mode,
        choices=MODES,
        sql=(Spelling("OVERWRITE", "flag", maps={True: "overwrite"}),
             Spelling("OVERWRITE_OR_IGNORE", "flag", maps={True: "overwrite_partitions"}),
             Spelling("APPEND", "flag", maps={True: "append"})),
        cli="--mode", cli_value="choice")
    max_rows_per_file: int | None = _option(
        None, "start a new file after this many records", check_positive_or_none,
        sql=(Spelling("ROWS_PER_FILE", "count"), Spelling("MAX_ROWS_PER_FILE", "count")),
        spark=(Spelling("maxRecordsPerFile", "count"),), cli="--max-rows-per-file", cli_value="count")
    max_bytes_per_file: int | None = _option(
        None, "start a new file after this many bytes", check_positive_or_none,
        sql=(Spelling("FILE_SIZE_BYTES", "size"), Spelling("MAX_FILE_SIZE", "size")),
        spark=(Spelling("maxBytesPerFile", "size"),), cli="--max-bytes-per-file", cli_value="size")
    num_shards: int | None = _option(
        None, "write exactly this many files part-0000k-of-0000N.tfrecord", check_positive_or_none,
        # not a Spark option: Spark's partitions decide the files (df.repartition(n)); a task
        # cannot move rows to another, so "exactly N files" cannot hold (tfsql.spark.writing)
        sql=(Spelling("NUM_SHARDS", "count"),), spark=(),
        cli="--num-shards", cli_value="count")
    shard_prefix: str = _option("part", "file name prefix of shards", check_file_prefix)
    filename_pattern: str | None = _option(
        None, "file names with {i}, {n} and/or {uuid}, e.g. 'train-{i:05d}-of-{n:05d}'", check_text,
        sql=(Spelling("FILENAME_PATTERN", "text"),), spark=(Spelling("filenamePattern", "text"),),
        cli="--filename-pattern", cli_value="text")
    tfds: str | None = _option(
        None, "write a TensorFlow Datasets directory of this dataset name", check_text,
        sql=(Spelling("TFDS", "name"),), spark=(), cli="--tfds", cli_value="name")
    filesystem: Any = _option(None, "an fsspec filesystem for plain paths", check_anything)
    threads: int | None = _option(
        None, "threads that encode and compress files (default: cores, at most 8)", check_positive_or_none,
        sql=(Spelling("THREADS", "count"),), cli="--threads", cli_value="count")
    max_record_bytes: int | None = _option(
        DEFAULT_MAX_RECORD_BYTES, "refuse a record larger than this, which readers would refuse by default "
        "(None: any size)", check_positive_or_none,
        sql=(Spelling("MAX_RECORD_BYTES", "count"),), spark=(Spelling("maxRecordBytes", "count"),),
        cli="--max-record-bytes", cli_value="count")
    index: bool = _option(
        False, "write a .<name>.idx record index beside each file (uncompressed files only)", check_boolean,
        sql=(Spelling("INDEX", "flag"),), spark=(Spelling("index", "bool"),), cli="--index", cli_value="bool")
    progress: bool = _option(False, "show a progress bar", check_boolean, polars=False)
# fmt: on


#: Every reading option by its Python name.
READ_OPTIONS: dict[str, Option] = _spec(ReadOptions, NATIVE_READ_OPTIONS)
#: Every writing option by its Python name.
WRITE_OPTIONS: dict[str, Option] = _spec(WriteOptions)


def spellings(spec: Mapping[str, Option], front_end: Literal["sql", "spark"]) -> dict[str, tuple[Option, Spelling]]:
    """Every name ``front_end`` spells an option of ``spec`` by -> (the option, the spelling).

    >>> spellings(READ_OPTIONS, "sql")["sample_size"][0].name
    'infer_sample'
    """
    return {spelling.name: (option, spelling) for option in spec.values() for spelling in getattr(option, front_end)}


def from_text(option: Option, spelling: Spelling, text: Any) -> Any:
    """The Python value of an option given as text (a Spark option or a CLI argument),
    checked. Raises :class:`OptionError` naming the option as spelled.

    >>> opt = READ_OPTIONS["infer_sample"]
    >>> from_text(opt, opt.spark[0], "all") is None, from_text(opt, opt.spark[0], "50")
    (True, 50)
    >>> from_text(READ_OPTIONS["verify_checksums"], READ_OPTIONS["verify_checksums"].spark[0], "no")
    Traceback (most recent call last):
    tfsql.errors.OptionError: verifyChecksums must be true or false, not 'no'
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
                raise OptionError(
                    f"{name} must be {'an integer' if kind == 'level' else 'a positive integer'}"
                    f"{' or all' if kind == 'count_or_all' else ''}, not {text!r}"
                ) from None
    elif kind == "size":
        value = parse_size(text, name)
    elif kind == "columns":
        value = [part.strip() for part in text.split(",") if part.strip()]
    elif kind == "choice":
        value = text.strip().lower()
    else:
        value = text
    return option.validate(spelling.translate(value), as_spelled=name)
