"""PySpark front end: ``spark.read.format("tfrecord")`` and ``df.write.format("tfrecord")``.

A PySpark (4.0+) Python Data Source (:mod:`pyspark.sql.datasource`) on tfsql's core:
Spark tasks run :func:`tfsql.dataset` scans and :func:`tfsql.write_tfrecord` writes, so
no JVM jar is needed and the native decoder does the work. Install ``tfsql[spark]``;
``import tfsql`` never imports pyspark.

Reading (one Spark input partition per file, or per ``maxPartitionBytes`` byte range
of a large uncompressed file, see :mod:`tfsql.splits`)::

    import tfsql.spark
    tfsql.spark.register(spark)             # registers "tfrecord" and the alias "tfsql"
    df = spark.read.format("tfrecord").option("recordType", "Example").load("data/")
    df = spark.read.format("tfrecord").schema("id long, emb array<float>").load("data/")

Without a schema, tfsql infers one (a sample of records from several files, see
:func:`tfsql.dataset`); ``key=value`` directories become partition columns appended
after the data columns, as Spark-TFRecord does. A user schema (DDL string or
``StructType``) skips inference, reads only the features it names and casts them
(range-checked); it may name partition columns (in any position) to type them.

Writing (one file per task and partition directory, committed by the driver)::

    (df.write.format("tfrecord").mode("overwrite")
       .option("partitionBy", "split,label").option("codec", "gzip").save("out/"))

Each task writes under the hidden ``<target>/_temporary-spark-<job>/`` directory
(readers skip ``_`` names); the driver moves the files into place when every task has
succeeded (an overwrite removes the old data only then) and removes the directory when
the job aborts. Files are named as Spark names them:
``part-<task:05d>-<job uuid>-c<seq:03d>.tfrecord[.gz|.zz]``.

tfsql's single-file rule applies (`tfsql.naming`): ``.save("train.tfrecord")`` (a path
ending in ``.tfrecord``, ``.tfrecords``, ``.tfrecord.gz`` or ``.tfrecord.zz``) writes one
file — the tasks stage uncompressed files, the driver joins them in task order (after the
old records with ``mode("append")``) into a hidden temporary file, compresses it as the
codec or the name says, and renames it over the target. Any other path, and any path
ending in ``/``, is a directory of part files (Spark-TFRecord writes a directory even
for ``*.tfrecord`` names; add a ``/`` for that).

Spark facts this module is built around (measured on pyspark 4.3; ``register`` checks
the version):

- Only ``mode("append")`` and ``mode("overwrite")`` are accepted: Spark itself rejects
  the default ``errorifexists`` and ``ignore`` for Python data sources
  (``UNSUPPORTED_DATA_SOURCE_SAVE_MODE``) before tfsql runs. Always give a mode.
- ``df.write.partitionBy(...)`` fails in Spark's planner ("The provided partitioning or
  clustering columns do not match the existing table's") before tfsql runs: use
  ``.option("partitionBy", "a,b")``.
- The reader API has no column pruning: every column of the read schema is decoded.
  Pass a narrower ``.schema(...)`` to decode fewer features.
- Filter pushdown (``DataSourceReader.pushFilters``, pyspark 4.1+) needs the session
  conf ``spark.sql.python.filterPushdown.enabled=true`` (default false), and Spark
  raises ``DATA_SOURCE_PUSHDOWN_DISABLED`` if a reader implements ``pushFilters`` while
  it is off. tfsql therefore prunes partitions only when opted in:
  ``register(spark, filter_pushdown=True)`` sets the conf and makes the readers prune
  files by the filters on partition columns (Spark still applies every filter).
- Arrow batches must match the Arrow form of the read schema exactly; the reader casts
  each batch to ``pyspark.sql.pandas.types.to_arrow_schema(schema)`` (all nullable).

Options (case-insensitive). Spark-TFRecord's names: ``recordType`` (``Example`` |
``SequenceExample`` | ``ByteArray``), ``codec`` (``gzip``, ``zlib``/``deflate``, or
Hadoop class names such as ``org.apache.hadoop.io.compress.GzipCodec``). tfsql's names
for the rest: reading ``hivePartitioning`` (``auto`` | ``true`` | ``false``),
``includeFilePaths`` (a column name), ``inferSample`` / ``inferFiles`` (a number or
``all``), ``lists`` (``auto`` | ``always``), ``verifyChecksums``, ``onCorrupt``
(``raise`` | ``skip``), ``batchSize``, ``threads`` (decode threads per task, default 1:
Spark already runs one task per core), ``glob``, ``filterPushdown``,
``maxPartitionBytes`` (byte ranges an uncompressed file is split into, one Spark
partition each; default 128 MiB like Spark's ``spark.sql.files.maxPartitionBytes``,
``all`` keeps every file whole); writing
``partitionBy``, ``maxRecordsPerFile`` (Spark's name), ``compressionLevel``.

Examples
--------
>>> import tfsql.spark                                   # doctest: +SKIP
>>> tfsql.spark.register(spark)                          # doctest: +SKIP
>>> spark.range(3).write.format("tfrecord").mode("overwrite").save("/tmp/ids")  # doctest: +SKIP
>>> spark.read.format("tfrecord").load("/tmp/ids").orderBy("id").collect()      # doctest: +SKIP
[Row(id=0), Row(id=1), Row(id=2)]
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import shutil
import subprocess
import uuid
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, Sequence, cast

import pyarrow as pa
import pyarrow.compute as pc

try:
    import pyspark
    from pyspark.sql.datasource import (
        DataSource,
        DataSourceArrowWriter,
        DataSourceReader,
        InputPartition,
        WriterCommitMessage,
    )
    from pyspark.sql.pandas.types import to_arrow_schema, to_arrow_type
    from pyspark.sql.types import (
        ArrayType,
        BinaryType,
        BooleanType,
        ByteType,
        DataType,
        DecimalType,
        DoubleType,
        FloatType,
        IntegerType,
        LongType,
        ShortType,
        StringType,
        StructField,
        StructType,
    )
except ImportError as _exc:  # pragma: no cover - exercised only without pyspark 4
    raise ImportError(
        "tfsql.spark needs pyspark 4.0 or newer (its Python Data Source API, "
        f"pyspark.sql.datasource): {_exc}. Install it with: pip install 'tfsql[spark]'"
    ) from _exc

try:  # pyspark 4.1+: filter pushdown
    from pyspark.sql.datasource import (
        EqualNullSafe,
        EqualTo,
        Filter,
        GreaterThan,
        GreaterThanOrEqual,
        In,
        IsNotNull,
        IsNull,
        LessThan,
        LessThanOrEqual,
        Not,
        StringContains,
        StringEndsWith,
        StringStartsWith,
    )

    HAS_FILTER_PUSHDOWN = True
except ImportError:  # pragma: no cover - pyspark 4.0
    HAS_FILTER_PUSHDOWN = False

import fsspec

import tfsql
from tfsql import locking
from tfsql._types import RecordType, WriteCompression
from tfsql.commit import apply_commit, data_entries, recover_locked, remove_quietly
from tfsql.errors import WriteConflictError
from tfsql.naming import compression_from_name, is_single_file_target
from tfsql.schema import parse_record_type, record_type_name
from tfsql.writer.single_file import concatenate_records

__all__ = [
    "register",
    "check_environment",
    "java_version",
    "spark_to_arrow",
    "arrow_to_spark",
    "TFRecordDataSource",
    "TFSQLDataSource",
    "FORMAT_NAMES",
    "FILTER_PUSHDOWN_CONF",
]

FORMAT_NAMES = ("tfrecord", "tfsql")
"""The format names :func:`register` registers."""

FILTER_PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"
"""The Spark session conf that enables ``pushFilters`` of Python data sources."""

BYTE_ARRAY_COLUMN = "byteArray"
"""The column of ``recordType=ByteArray`` reads without a schema (Spark-TFRecord's name)."""

MIN_PYSPARK = (4, 0)
MIN_JAVA = 17
#: Byte range of an uncompressed file that one Spark partition reads (Spark's default
#: ``spark.sql.files.maxPartitionBytes``).
DEFAULT_MAX_PARTITION_BYTES = 128 << 20
STAGING_PREFIX = "_temporary-spark-"


# --------------------------------------------------------------------------------------
# Environment checks and registration
# --------------------------------------------------------------------------------------


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text)[:3])


def java_version(java: str | None = None) -> int | None:
    """The major version of the ``java`` Spark would start (``JAVA_HOME`` first), or None.

    Examples
    --------
    >>> java_version("/no/such/java") is None
    True
    """
    if java is None:
        home = os.environ.get("JAVA_HOME")
        java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if not java:
        return None
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not match:
        return None
    major = int(match.group(1))
    return int(match.group(2)) if major == 1 and match.group(2) else major  # "1.8" -> 8


def check_environment() -> None:
    """Raise with the fix when pyspark is older than 4.0 or Java 17+ is missing.

    Examples
    --------
    >>> check_environment()  # doctest: +SKIP
    """
    if _version_tuple(pyspark.__version__) < MIN_PYSPARK:  # pragma: no cover - import fails first
        raise RuntimeError(
            f"tfsql.spark needs pyspark >= 4.0, found {pyspark.__version__}; "
            "upgrade with: pip install 'tfsql[spark]'"
        )
    major = java_version()
    if major is None:
        raise RuntimeError(
            "Spark needs Java 17 or newer and no `java` was found (JAVA_HOME unset and no java "
            "on PATH); install a JDK 17+ (e.g. apt-get install openjdk-17-jre-headless) and set JAVA_HOME"
        )
    if major < MIN_JAVA:
        raise RuntimeError(
            f"Spark 4 needs Java 17 or newer, found Java {major}; install a JDK 17+ and point "
            "JAVA_HOME at it"
        )


def register(spark: Any, *, filter_pushdown: bool | None = None) -> None:
    """Register the ``"tfrecord"`` format (and its alias ``"tfsql"``) on a SparkSession.

    Parameters
    ----------
    spark : pyspark.sql.SparkSession
        The session whose ``spark.read`` / ``df.write`` get the formats.
    filter_pushdown : bool, optional
        True sets ``spark.sql.python.filterPushdown.enabled=true`` on the session and
        makes reads skip files whose partition values fail the query's filters (pyspark
        4.1+). None (default) follows the session's current value of that conf; False
        never pushes filters. A read's ``.option("filterPushdown", ...)`` overrides it.

    Examples
    --------
    >>> import tfsql.spark                                        # doctest: +SKIP
    >>> tfsql.spark.register(spark)                               # doctest: +SKIP
    >>> spark.read.format("tfrecord").load("data/").printSchema()  # doctest: +SKIP
    """
    if not hasattr(spark, "dataSource"):
        raise TypeError(
            f"register needs a pyspark.sql.SparkSession (pyspark >= 4.0), not {type(spark).__name__}"
        )
    if filter_pushdown is None:
        filter_pushdown = HAS_FILTER_PUSHDOWN and _conf_true(spark, FILTER_PUSHDOWN_CONF)
    elif filter_pushdown:
        if not HAS_FILTER_PUSHDOWN:
            raise RuntimeError(
                f"filter_pushdown=True needs pyspark >= 4.1 (found {pyspark.__version__}); "
                "upgrade pyspark or pass filter_pushdown=False"
            )
        spark.conf.set(FILTER_PUSHDOWN_CONF, "true")
    if filter_pushdown:
        spark.dataSource.register(_TFRecordPruning)
        spark.dataSource.register(_TFSQLPruning)
    else:
        spark.dataSource.register(TFRecordDataSource)
        spark.dataSource.register(TFSQLDataSource)


def _conf_true(spark: Any, key: str) -> bool:
    try:
        return str(spark.conf.get(key, "false")).strip().lower() == "true"
    except Exception:  # an unknown key on an older Spark
        return False


# --------------------------------------------------------------------------------------
# Type mapping
# --------------------------------------------------------------------------------------

_SPARK_TO_ARROW = {
    LongType: pa.int64(),
    IntegerType: pa.int32(),
    ShortType: pa.int16(),
    ByteType: pa.int8(),
    BooleanType: pa.bool_(),
    FloatType: pa.float32(),
    DoubleType: pa.float64(),
    StringType: pa.string(),
    BinaryType: pa.binary(),
}

_READABLE = "long, int, short, byte, boolean, float, double, decimal, string, binary, or arrays of them"


def spark_to_arrow(data_type: DataType, *, column: str = "?") -> pa.DataType:
    """The Arrow type tfsql decodes a feature into for a Spark column type.

    ``ArrayType(ArrayType(T))`` reads a SequenceExample feature list; ``DecimalType``
    reads a float_list when every value converts exactly (else a clear error).

    Examples
    --------
    >>> from pyspark.sql.types import ArrayType, FloatType
    >>> spark_to_arrow(ArrayType(FloatType()))
    ListType(list<item: float>)
    """
    if isinstance(data_type, ArrayType):
        return pa.list_(spark_to_arrow(data_type.elementType, column=column))
    if isinstance(data_type, DecimalType):  # from float_list, exact or an error (docs/format.md)
        return pa.decimal128(data_type.precision, data_type.scale)
    for spark_type, arrow_type in _SPARK_TO_ARROW.items():
        if isinstance(data_type, spark_type):
            return arrow_type
    raise ValueError(
        f"column {column!r} has Spark type {data_type.simpleString()}, which TFRecord features "
        f"cannot be read as; use {_READABLE}"
    )


def arrow_to_spark(arrow_type: pa.DataType, *, column: str = "?") -> DataType:
    """The Spark type of an Arrow column tfsql reads (inferred or partition columns).

    Examples
    --------
    >>> import pyarrow as pa
    >>> arrow_to_spark(pa.list_(pa.list_(pa.float32())))
    ArrayType(ArrayType(FloatType(), True), True)
    """
    t = arrow_type
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return ArrayType(arrow_to_spark(t.value_type, column=column), containsNull=True)
    simple = {
        pa.int64(): LongType(), pa.int32(): IntegerType(), pa.int16(): ShortType(),
        pa.int8(): ByteType(), pa.bool_(): BooleanType(), pa.float32(): FloatType(),
        pa.float64(): DoubleType(), pa.string(): StringType(), pa.large_string(): StringType(),
        pa.binary(): BinaryType(), pa.large_binary(): BinaryType(),
    }
    if t in simple:
        return simple[t]
    from pyspark.sql.pandas.types import from_arrow_type

    try:
        return from_arrow_type(t)
    except Exception as exc:
        raise ValueError(f"column {column!r} has Arrow type {t}, which Spark cannot hold: {exc}") from None


def _spark_schema(schema: pa.Schema) -> StructType:
    return StructType([StructField(f.name, arrow_to_spark(f.type, column=f.name), True) for f in schema])


# --------------------------------------------------------------------------------------
# Options
# --------------------------------------------------------------------------------------

_READ_OPTIONS = {
    "path", "paths", "recordtype", "codec", "compression", "hivepartitioning",
    "includefilepaths", "infersample", "inferfiles", "lists", "verifychecksums",
    "oncorrupt", "batchsize", "threads", "glob", "filterpushdown", "maxpartitionbytes",
}
_WRITE_OPTIONS = {
    "path", "recordtype", "codec", "compression", "compressionlevel", "partitionby",
    "maxrecordsperfile",
}
_OPTION_NAMES = {
    name.lower(): name
    for name in (
        "path", "recordType", "codec", "compression", "hivePartitioning", "includeFilePaths",
        "inferSample", "inferFiles", "lists", "verifyChecksums", "onCorrupt", "batchSize",
        "threads", "glob", "filterPushdown", "compressionLevel", "partitionBy", "maxRecordsPerFile",
        "maxPartitionBytes",
    )
}

_CODECS: dict[str, WriteCompression] = {
    "": None,
    "none": None,
    "uncompressed": None,
    "gzip": "gzip",
    "gz": "gzip",
    "org.apache.hadoop.io.compress.gzipcodec": "gzip",
    "zlib": "zlib",
    "deflate": "zlib",
    "org.apache.hadoop.io.compress.defaultcodec": "zlib",
    "org.apache.hadoop.io.compress.deflatecodec": "zlib",
}


class _Options:
    """Spark's string options, parsed with messages that name the option."""

    def __init__(self, options: Mapping[str, str], allowed: set[str], action: str) -> None:
        self._raw = {str(k).lower(): v for k, v in dict(options).items()}
        unknown = sorted(k for k in self._raw if k not in allowed)
        if unknown:
            known = ", ".join(sorted(_OPTION_NAMES.get(k, k) for k in allowed if k != "paths"))
            raise ValueError(f"unknown {action} option {unknown[0]!r} for format 'tfrecord'; the options are {known}")

    def get(self, name: str, default: Any = None) -> Any:
        return self._raw.get(name.lower(), default)

    def paths(self) -> list[str]:
        if "paths" in self._raw:
            paths = json.loads(self._raw["paths"])
        elif "path" in self._raw:
            paths = [self._raw["path"]]
        else:
            paths = []
        if not paths:
            raise ValueError("format 'tfrecord' needs a path: .load(path) or .save(path)")
        return [_absolute(p) for p in paths]

    def boolean(self, name: str, default: bool) -> bool:
        value = self.get(name)
        if value is None:
            return default
        text = str(value).strip().lower()
        if text in ("true", "1", "yes"):
            return True
        if text in ("false", "0", "no"):
            return False
        raise ValueError(f"option {name} must be true or false, not {value!r}")

    def integer(self, name: str, default: int | None, *, allow_all: bool = False) -> int | None:
        value = self.get(name)
        if value is None:
            return default
        text = str(value).strip().lower()
        if allow_all and text in ("all", "-1"):
            return None
        try:
            number = int(text)
        except ValueError:
            number = 0
        if number < 1:
            extra = " or 'all'" if allow_all else ""
            raise ValueError(f"option {name} must be a positive integer{extra}, not {value!r}")
        return number

    def choice(self, name: str, default: str, choices: Sequence[str]) -> str:
        value = str(self.get(name, default)).strip().lower()
        if value not in choices:
            raise ValueError(f"option {name} must be one of {', '.join(choices)}, not {self.get(name)!r}")
        return value

    def record_type(self) -> RecordType:
        value = self.get("recordType", "Example")
        try:
            code = parse_record_type(value)
        except ValueError:
            raise ValueError(
                f"option recordType must be Example, SequenceExample or ByteArray, not {value!r}"
            ) from None
        return cast(RecordType, record_type_name(code))

    def codec(self) -> WriteCompression:
        value = self.get("codec", self.get("compression"))
        if value is None:
            return None
        key = str(value).strip().lower()
        if key not in _CODECS:
            raise ValueError(
                f"option codec {value!r} is not supported; use gzip, zlib (alias deflate) or none "
                "(Hadoop's GzipCodec / DefaultCodec class names work too)"
            )
        return _CODECS[key]


def _absolute(path: str) -> str:
    """Local paths absolute (executors may run elsewhere); URLs as given."""
    if "://" in path:
        return path[len("file://"):] if path.startswith("file://") else path
    if path.startswith("file:"):
        path = path[len("file:"):]
    return os.path.abspath(os.path.expanduser(path))


def _scan_options(options: _Options) -> dict[str, Any]:
    """Keyword arguments of :func:`tfsql.dataset` shared by planning and tasks."""
    given = options.get("codec", options.get("compression"))
    scan: dict[str, Any] = dict(
        record_type=options.record_type(),
        compression="infer" if given is None else options.codec(),
        verify_checksums=options.boolean("verifyChecksums", True),
        on_corrupt=options.choice("onCorrupt", "raise", ("raise", "skip")),
        threads=options.integer("threads", 1),
        glob=options.boolean("glob", True),
    )
    batch_size = options.integer("batchSize", None)
    if batch_size is not None:
        scan["batch_size"] = batch_size
    return scan


def _inference_options(options: _Options) -> dict[str, Any]:
    """Keyword arguments of :func:`tfsql.dataset` for schema inference (tfsql's defaults
    where an option is not given)."""
    infer: dict[str, Any] = {"lists": options.choice("lists", "auto", ("auto", "always"))}
    for option, keyword in (("inferSample", "infer_sample"), ("inferFiles", "infer_files")):
        if options.get(option) is not None:
            infer[keyword] = options.integer(option, None, allow_all=True)
    return infer


# --------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------


@dataclass
class _ReadPlan:
    """Everything a task needs to read one file, decided on the driver (picklable)."""

    scan: dict[str, Any]  # tfsql.dataset keyword arguments (no schema, no partitioning)
    data_schema: pa.Schema  # the features to decode, as Arrow types
    partition_schema: pa.Schema  # partition columns, typed as the driver discovered them
    file_column: str | None  # includeFilePaths
    spark_schema: StructType  # the output schema, in Spark's column order
    max_partition_bytes: int | None = DEFAULT_MAX_PARTITION_BYTES  # None: whole files


class _FilePartition(InputPartition):
    """One input file (or the byte range ``span`` of it) and its hive partition values
    (from the driver's discovery)."""

    def __init__(self, path: str, partition_values: Mapping[str, Any], span: tuple[int, int] | None = None) -> None:
        super().__init__(path)
        self.path = path
        self.partition_values = dict(partition_values)
        self.span = span


class _Reader(DataSourceReader):
    """Plans one partition per file; each task decodes its file with tfsql."""

    def __init__(self, plan: _ReadPlan, dataset: "tfsql.Dataset | None") -> None:
        self.plan = plan
        self._dataset = dataset  # not needed in tasks: dropped when pickled
        self.pushed: list = []

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_dataset"] = None
        return state

    def partitions(self) -> list[_FilePartition]:
        if self._dataset is None:  # pragma: no cover - partitions() runs where reader() ran
            raise RuntimeError("tfsql.spark: partitions() called on a reader without its dataset")
        expression = _filters_to_expression(self.pushed, self.plan.partition_schema)
        split = self.plan.max_partition_bytes
        try:
            fragments = self._dataset.get_fragments(expression, split_bytes=split)
        except (ValueError, TypeError, pa.ArrowException):
            fragments = self._dataset.get_fragments(split_bytes=split)  # an unprunable filter: read everything
        parts = [_FilePartition(f.path, f.partition_values, f.byte_range) for f in fragments]
        return parts or [_FilePartition("", {})]  # Spark needs at least one partition

    def read(self, partition: _FilePartition) -> Iterator[pa.RecordBatch]:  # type: ignore[override]  # Spark passes back our partitions
        plan = self.plan
        if not partition.path:
            return
        target = to_arrow_schema(plan.spark_schema, timezone="UTC")
        scan = {**plan.scan, "glob": False}  # the path names one file: take it literally
        dataset = tfsql.dataset(partition.path, schema=plan.data_schema, hive_partitioning=False, **scan)
        span = getattr(partition, "span", None)
        if span is not None:
            dataset = dataset.file_range(span[0], span[1])
        constants = {
            f.name: pa.scalar(partition.partition_values.get(f.name), f.type) for f in plan.partition_schema
        }
        if plan.file_column is not None:
            constants[plan.file_column] = pa.scalar(partition.path, pa.string())
        for batch in dataset.to_batches():
            n = batch.num_rows
            columns = {name: batch.column(name) for name in batch.schema.names}
            for name, scalar in constants.items():
                columns[name] = pa.repeat(scalar, n)
            arrays = [columns[f.name] for f in target]
            yield pa.RecordBatch.from_arrays(arrays, names=target.names).cast(target)


if HAS_FILTER_PUSHDOWN:

    class _PruningReader(_Reader):
        """A reader that skips files by the filters Spark pushes on partition columns."""

        def pushFilters(self, filters: list[Filter]) -> list[Filter]:
            partition_names = set(self.plan.partition_schema.names)
            self.pushed = [f for f in filters if _filter_columns(f) <= partition_names]
            return filters  # Spark still applies every filter; pruning only skips files

else:  # pragma: no cover - pyspark 4.0
    _PruningReader = _Reader  # type: ignore[misc, assignment]


def _filter_columns(f: Any) -> set[str]:
    if isinstance(f, Not):
        return _filter_columns(f.child)
    attribute = getattr(f, "attribute", None)
    if not attribute or len(attribute) != 1:
        return {"\0nested"}
    return {attribute[0]}


def _filters_to_expression(filters: Sequence[Any], schema: pa.Schema) -> pc.Expression | None:
    """AND of the filters that translate to pyarrow expressions (the rest are dropped)."""
    terms = []
    for f in filters:
        try:
            term = _filter_to_expression(f, schema)
        except (ValueError, TypeError, pa.ArrowException):
            term = None
        if term is not None:
            terms.append(term)
    if not terms:
        return None
    expression = terms[0]
    for term in terms[1:]:
        expression = expression & term
    return expression


def _filter_to_expression(f: Any, schema: pa.Schema) -> pc.Expression | None:
    if isinstance(f, Not):
        child = _filter_to_expression(f.child, schema)
        return None if child is None else ~child
    name = f.attribute[0]
    column = pc.field(name)
    typ = schema.field(name).type
    if isinstance(f, IsNull):
        return column.is_null()
    if isinstance(f, IsNotNull):
        return column.is_valid()
    if isinstance(f, In):
        return column.isin(pa.array(list(f.value), typ))
    value = pc.scalar(pa.scalar(f.value, typ)) if f.value is not None else None
    if isinstance(f, EqualNullSafe):
        return column.is_null() if value is None else (column == value)
    if value is None:
        return None
    if isinstance(f, EqualTo):
        return column == value
    if isinstance(f, GreaterThan):
        return column > value
    if isinstance(f, GreaterThanOrEqual):
        return column >= value
    if isinstance(f, LessThan):
        return column < value
    if isinstance(f, LessThanOrEqual):
        return column <= value
    if isinstance(f, StringStartsWith):
        return pc.starts_with(column, f.value)
    if isinstance(f, StringEndsWith):
        return pc.ends_with(column, f.value)
    if isinstance(f, StringContains):
        return pc.match_substring(column, f.value)
    return None


def _partition_schema(paths: list[str], scan: dict[str, Any], hive: bool | None) -> pa.Schema:
    """The partition columns of ``paths`` (a discovery without inference)."""
    # a probe with no columns: nothing is decoded (record_type "bytes" needs its column)
    probe = tfsql.dataset(paths, schema=pa.schema([]), hive_partitioning=hive, **{**scan, "record_type": "example"})
    return probe.partition_schema


def _plan_read(options: Mapping[str, str], spark_schema: StructType | None) -> tuple[_ReadPlan, "tfsql.Dataset"]:
    """Discover the files and resolve the schema (inferred, or the user's) on the driver."""
    opts = _Options(options, _READ_OPTIONS, "read")
    paths = opts.paths()
    scan = _scan_options(opts)
    hive = {"auto": None, "true": True, "false": False}[
        opts.choice("hivePartitioning", "auto", ("auto", "true", "false"))
    ]
    file_column = opts.get("includeFilePaths")
    infer = _inference_options(opts)
    raw = scan["record_type"] == "bytes"
    if spark_schema is None:
        data_schema = pa.schema([pa.field(BYTE_ARRAY_COLUMN, pa.binary())]) if raw else None
        dataset = tfsql.dataset(paths, schema=data_schema, hive_partitioning=hive, **scan, **infer)
        if not dataset.files:
            raise ValueError(
                f"no TFRecord files found in {', '.join(paths)} to infer a schema from; "
                "check the path or pass a schema with .schema(...)"
            )
        if file_column is not None and file_column in dataset.schema.names:
            raise ValueError(
                f"option includeFilePaths={file_column!r} collides with a column of the data; "
                "choose another name"
            )
        spark_schema = _spark_schema(dataset.schema)
        if file_column is not None:
            spark_schema = spark_schema.add(file_column, StringType(), True)
    else:
        names = [f.name for f in spark_schema.fields]
        partition_names = set(_partition_schema(paths, scan, hive).names)
        data_fields, hive_types = [], {}
        for f in spark_schema.fields:
            if f.name in partition_names:
                hive_types[f.name] = to_arrow_type(f.dataType, timezone="UTC")
            elif f.name != file_column:
                data_fields.append(pa.field(f.name, spark_to_arrow(f.dataType, column=f.name), f.nullable))
        if file_column is not None and file_column not in names:
            raise ValueError(
                f"option includeFilePaths={file_column!r} names a column the schema lacks; add "
                f"'{file_column} string' to the schema"
            )
        dataset = tfsql.dataset(
            paths, schema=pa.schema(data_fields), hive_partitioning=hive,
            hive_schema=hive_types or None, **scan,
        )
    plan = _ReadPlan(
        scan=scan,
        data_schema=dataset.data_schema,
        partition_schema=dataset.partition_schema,
        file_column=file_column,
        spark_schema=spark_schema,
        max_partition_bytes=opts.integer("maxPartitionBytes", DEFAULT_MAX_PARTITION_BYTES, allow_all=True),
    )
    return plan, dataset


class TFRecordDataSource(DataSource):
    """The ``"tfrecord"`` format: read and write TFRecord with tfsql (see the module docs)."""

    filter_pushdown = False

    @classmethod
    def name(cls) -> str:
        return "tfrecord"

    def schema(self) -> StructType:
        plan, _ = _plan_read(self.options, None)
        return plan.spark_schema

    def reader(self, schema: StructType) -> _Reader:
        plan, dataset = _plan_read(self.options, schema)
        opts = _Options(self.options, _READ_OPTIONS, "read")
        pushdown = opts.boolean("filterPushdown", self.filter_pushdown)
        if pushdown and not HAS_FILTER_PUSHDOWN:
            raise RuntimeError(
                f"option filterPushdown needs pyspark >= 4.1 (found {pyspark.__version__})"
            )
        return (_PruningReader if pushdown else _Reader)(plan, dataset)

    def writer(self, schema: StructType, overwrite: bool) -> "_Writer":
        return _Writer(_plan_write(self.options, schema, overwrite))


class TFSQLDataSource(TFRecordDataSource):
    """The ``"tfsql"`` alias of :class:`TFRecordDataSource`."""

    @classmethod
    def name(cls) -> str:
        return "tfsql"


class _TFRecordPruning(TFRecordDataSource):
    filter_pushdown = True


class _TFSQLPruning(TFSQLDataSource):
    filter_pushdown = True


# --------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------


@dataclass
class _WritePlan:
    target: str  # the output directory (absolute local path or URL)
    job_id: str
    overwrite: bool
    record_type: RecordType  # checked by _Options
    compression: WriteCompression
    compression_level: int | None
    partition_by: list[str]
    max_rows_per_file: int | None
    target_existed: bool
    single_file: bool = False  # the target ends in a TFRecord suffix (tfsql.naming)

    @property
    def staging(self) -> str:
        if self.single_file:  # a hidden sibling of the file
            parent, name = posixpath.split(self.target)
            return posixpath.join(parent, f".{name}.{STAGING_PREFIX}{self.job_id}")
        return posixpath.join(self.target, STAGING_PREFIX + self.job_id)


@dataclass
class _TaskFiles(WriterCommitMessage):
    """What one task staged: paths relative to its task directory (= final relative paths)."""

    task_dir: str
    files: list[str] = field(default_factory=list)
    rows: int = 0


def _plan_write(options: Mapping[str, str], schema: StructType, overwrite: bool) -> _WritePlan:
    opts = _Options(options, _WRITE_OPTIONS, "write")
    [target] = opts.paths()
    partition_by = [c.strip() for c in str(opts.get("partitionBy", "")).split(",") if c.strip()]
    names = schema.fieldNames()
    missing = [c for c in partition_by if c not in names]
    if missing:
        raise ValueError(
            f"option partitionBy names {missing[0]!r}, which is not a column; the columns are {', '.join(names)}"
        )
    record_type = opts.record_type()
    if record_type == "example":
        for f in schema.fields:
            if isinstance(f.dataType, ArrayType) and isinstance(f.dataType.elementType, ArrayType):
                raise ValueError(
                    f"column {f.name!r} is {f.dataType.simpleString()}: arrays of arrays are "
                    "SequenceExample feature lists; write with .option(\"recordType\", \"SequenceExample\")"
                )
    if record_type == "bytes":
        data = [f for f in schema.fields if f.name not in partition_by]
        if len(data) != 1 or not isinstance(data[0].dataType, (BinaryType, StringType)):
            raise ValueError(
                "recordType ByteArray writes one binary column as the records; the data has "
                f"columns {', '.join(f.name for f in data) or '(none)'} besides partitionBy"
            )
    level = opts.get("compressionLevel")
    fs, root = fsspec.core.url_to_fs(target)
    raw = options.get("path") or (json.loads(options.get("paths") or "[]") or [""])[0]
    single_file = is_single_file_target(raw)
    if single_file:
        given = "partitionBy" if partition_by else "maxRecordsPerFile" if opts.get("maxRecordsPerFile") else None
        if given:
            raise ValueError(f"{raw!r} ends in a TFRecord suffix, so it names one file, but option {given} "
                             "writes a directory of files; drop the suffix or end the path with '/'")
        if fs.isdir(root):
            raise ValueError(f"{raw!r} is a directory; end the path with '/' to write part files into it")
    return _WritePlan(
        target=target,
        job_id=str(uuid.uuid4()),
        overwrite=bool(overwrite),
        record_type=record_type,
        compression=opts.codec() or (compression_from_name(target) if single_file else None),
        compression_level=None if level is None else opts.integer("compressionLevel", None),
        partition_by=partition_by,
        max_rows_per_file=opts.integer("maxRecordsPerFile", None),
        target_existed=fs.exists(root),
        single_file=single_file,
    )


_WRITER_NAME = re.compile(r"^part-\d{5}-[0-9a-f-]{36}-(c\d{3,}\..+)$")


class _Writer(DataSourceArrowWriter):
    """Tasks stage files with ``tfsql.write_tfrecord``; the driver commits or aborts."""

    def __init__(self, plan: _WritePlan) -> None:
        self.plan = plan

    def write(self, iterator: Iterator[pa.RecordBatch]) -> _TaskFiles:
        from pyspark import TaskContext

        plan = self.plan
        context = TaskContext.get()
        task = context.partitionId() if context is not None else 0
        attempt = context.taskAttemptId() if context is not None else uuid.uuid4().int % 10**9
        task_dir = posixpath.join(plan.staging, f"task-{task:05d}-{attempt}")
        first = next(iterator, None)
        if first is None:
            return _TaskFiles(task_dir)

        def batches() -> Iterator[pa.RecordBatch]:
            yield first
            yield from iterator

        result = tfsql.write_tfrecord(
            batches(),
            task_dir,
            partition_by=plan.partition_by or None,
            record_type=plan.record_type,
            compression=None if plan.single_file else plan.compression,  # compressed once, when joined
            compression_level=plan.compression_level,
            mode="overwrite",
            max_rows_per_file=plan.max_rows_per_file,
        )
        fs, root = fsspec.core.url_to_fs(task_dir)
        staged = []
        for written in result.files:
            _, path = fsspec.core.url_to_fs(written.path)
            relative = posixpath.relpath(path, root)
            directory, name = posixpath.split(relative)
            match = _WRITER_NAME.match(name)
            final = f"part-{task:05d}-{plan.job_id}-{match.group(1)}" if match else name
            final = posixpath.join(directory, final) if directory else final
            if final != relative:
                fs.mv(posixpath.join(root, relative), posixpath.join(root, final))
            staged.append(final)
        return _TaskFiles(task_dir, staged, result.rows)

    def commit(self, messages: list[_TaskFiles | None]) -> None:  # type: ignore[override]  # our tasks' messages
        plan = self.plan
        if plan.single_file:
            self._commit_file(messages)
            return
        fs, root = fsspec.core.url_to_fs(plan.target)
        staging = posixpath.join(root, posixpath.basename(plan.staging))
        try:
            with locking.target_lock(fs, root):
                recover_locked(fs, root, keep=[posixpath.basename(staging)], display=plan.target)
                replaced = data_entries(fs, root) if plan.overwrite else []
                new = []
                for message in messages:
                    if message is None:
                        continue
                    _, task_root = fsspec.core.url_to_fs(message.task_dir)
                    for relative in message.files:
                        if not plan.overwrite and fs.exists(posixpath.join(root, relative)):
                            raise WriteConflictError(
                                f"{posixpath.join(root, relative)} already exists; the write was rolled back",
                                path=posixpath.join(root, relative))
                        new.append((posixpath.join(task_root, relative), relative))
                apply_commit(fs, root, job="spark-" + plan.job_id, new=new, replaced=replaced)
        finally:
            remove_quietly(fs, staging)

    def _commit_file(self, messages: list[_TaskFiles | None]) -> None:
        """One file: the old records (append), then every task's in task order, written
        to a hidden temporary file and renamed over the target."""
        plan = self.plan
        fs, target = fsspec.core.url_to_fs(plan.target)
        _, staging = fsspec.core.url_to_fs(plan.staging)
        try:
            sources = [target] if not plan.overwrite and fs.exists(target) else []
            for message in messages:
                if message is not None:
                    _, task_root = fsspec.core.url_to_fs(message.task_dir)
                    sources.extend(posixpath.join(task_root, relative) for relative in message.files)
            fs.makedirs(staging, exist_ok=True)
            final = posixpath.join(staging, "final")
            level = -1 if plan.compression_level is None else plan.compression_level
            concatenate_records(fs, sources, final, plan.compression, level)
            fs.mv(final, target)
        finally:
            remove_quietly(fs, staging)

    def abort(self, messages: list[_TaskFiles | None]) -> None:  # type: ignore[override]  # our tasks' messages
        plan = self.plan
        if plan.single_file:
            remove_quietly(*fsspec.core.url_to_fs(plan.staging))
            return
        fs, root = fsspec.core.url_to_fs(plan.target)
        remove_quietly(fs, posixpath.join(root, posixpath.basename(plan.staging)))
        if not plan.target_existed:
            try:
                if fs.exists(root) and not fs.ls(root, detail=False):
                    fs.rmdir(root)
            except Exception:  # pragma: no cover - cleanup must not mask the failure
                pass


