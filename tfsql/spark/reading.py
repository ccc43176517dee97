"""Reading with Spark: the read plan (files, schema) made on the driver, the input
partitions (one per file, or per byte range of a large uncompressed file), and the
reader each Spark task runs.

The driver opens the paths with :func:`tfsql.dataset` (discovery, partition columns,
inference or the user's schema) and plans fragments with
:meth:`tfsql.Dataset.get_fragments` (``split_bytes`` from Spark's ``maxPartitionBytes``,
pruned by pushed filters, :mod:`tfsql.spark.pushdown`). Each task reads its one file
(literally, no discovery) and appends the partition values and the file column as
constants, casting each batch to the Arrow form of the Spark schema, which Spark
requires exactly.

Examples
--------
>>> plan, dataset, pushdown = plan_read({"path": "tests/data/tensorflow/tabular.tfrecord"}, None)
>>> plan.spark_schema.fieldNames()[:2], len(Reader(plan, dataset).partitions()), pushdown
(['tags', 'weights'], 1, None)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Mapping

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, InputPartition
from pyspark.sql.pandas.types import to_arrow_schema, to_arrow_type
from pyspark.sql.types import StringType, StructType

import tfsql
from tfsql.options import READ_OPTIONS
from tfsql.spark.pushdown import HAS_FILTER_PUSHDOWN, filter_columns, filters_to_expression
from tfsql.spark.spark_options import read_options, read_paths
from tfsql.spark.types import spark_schema as spark_schema_of
from tfsql.spark.types import arrow_to_spark, spark_to_arrow

__all__ = ["BYTE_ARRAY_COLUMN", "ReadPlan", "plan_read", "FilePartition", "Reader", "PruningReader"]

BYTE_ARRAY_COLUMN = "byteArray"
"""The column of ``recordType=ByteArray`` reads without a schema (Spark-TFRecord's name)."""


@dataclass
class ReadPlan:
    """Everything a task needs to read one file, decided on the driver (picklable)."""

    scan: dict[str, Any]  # tfsql.dataset keyword arguments of a scan (the spec's scan_time options)
    data_schema: pa.Schema  # the features to decode, as Arrow types
    partition_schema: pa.Schema  # partition columns, typed as the driver discovered them
    file_column: str | None  # includeFilePaths
    spark_schema: StructType  # the output schema, in Spark's column order
    split_bytes: int | None  # maxPartitionBytes; None: whole files


def _partition_schema(paths: list[str], options: dict[str, Any], hive: bool | None) -> pa.Schema:
    """The partition columns of ``paths`` (a discovery without inference)."""
    # a probe with no columns: nothing is decoded (record_type "bytes" needs its column)
    probe = tfsql.dataset(
        paths,
        schema=pa.schema([]),
        hive_partitioning=hive,
        **{**options, "record_type": "example", "missing_columns": "insert"},
    )
    return probe.partition_schema


def _written_types(paths: list[str], opts: Mapping[str, Any]) -> dict[str, pa.DataType]:
    """The data columns' types a tfsql writer's column description gives (none without
    one: `tfsql.description`)."""
    from tfsql.description import written_description
    from tfsql.discovery import discover

    try:
        found = discover(paths, filesystem=opts.get("filesystem"), glob=opts.get("glob", True))
    except (OSError, ValueError):
        return {}
    written = written_description(found)
    return {} if written is None else {f.name: f.type for f in written.data_schema}


def _spark_type_of(t: pa.DataType) -> Any:
    try:
        return arrow_to_spark(t)
    except ValueError:
        return None


def plan_read(
    options: Mapping[str, str], spark_schema: StructType | None
) -> tuple[ReadPlan, "tfsql.Dataset", bool | None]:
    """Discover the files and resolve the schema (inferred, or the user's) on the driver;
    also the read's ``filterPushdown`` option (None: not given)."""
    opts, _, pushdown = read_options(options)
    paths = read_paths(options)
    file_column = opts.pop("include_file_paths")
    split_bytes = opts.pop("split_bytes")
    hive = opts.pop("hive_partitioning")
    scan = {name: value for name, value in opts.items() if READ_OPTIONS[name].scan_time}
    raw = opts["record_type"] == "bytes"
    file_option = READ_OPTIONS["include_file_paths"].spelled("spark")
    if spark_schema is None:
        data_schema = pa.schema([pa.field(BYTE_ARRAY_COLUMN, pa.binary())]) if raw else None
        try:
            dataset = tfsql.dataset(paths, schema=data_schema, hive_partitioning=hive, **opts)
        except tfsql.NoDataError as err:
            raise ValueError(
                f"no TFRecord files found in {', '.join(paths)} to infer a schema from; "
                "check the path or pass a schema with .schema(...)"
            ) from err
        if file_column is not None and file_column in dataset.schema.names:
            raise ValueError(
                f"option {file_option}={file_column!r} collides with a column of the data; choose another name"
            )
        spark_schema = spark_schema_of(dataset.schema)
        if file_column is not None:
            spark_schema = spark_schema.add(file_column, StringType(), True)
    else:
        names = [f.name for f in spark_schema.fields]
        partition_names = set(_partition_schema(paths, opts, hive).names)
        written = _written_types(paths, opts)
        data_fields, hive_types = [], {}
        for f in spark_schema.fields:
            if f.name in partition_names:
                hive_types[f.name] = to_arrow_type(f.dataType, timezone="UTC")
            elif f.name in written and _spark_type_of(written[f.name]) == f.dataType:
                # the type the writer wrote (a column description): its stored integers mean
                # that unit; the read casts each batch to the Spark type
                data_fields.append(pa.field(f.name, written[f.name], f.nullable))
            elif f.name != file_column:
                data_fields.append(pa.field(f.name, spark_to_arrow(f.dataType, column=f.name), f.nullable))
        if file_column is not None and file_column not in names:
            raise ValueError(
                f"option {file_option}={file_column!r} names a column the schema lacks; add "
                f"'{file_column} string' to the schema"
            )
        dataset = tfsql.dataset(
            paths,
            schema=pa.schema(data_fields),
            hive_partitioning=hive,
            hive_schema=hive_types or None,
            **opts,
        )
    plan = ReadPlan(
        scan=scan,
        data_schema=dataset.data_schema,
        partition_schema=dataset.partition_schema,
        file_column=file_column,
        spark_schema=spark_schema,
        split_bytes=split_bytes,
    )
    return plan, dataset, pushdown


class FilePartition(InputPartition):
    """One input file (or the byte range ``span`` of it) and its hive partition values
    (from the driver's discovery)."""

    def __init__(self, path: str, partition_values: Mapping[str, Any], span: tuple[int, int] | None = None) -> None:
        super().__init__(path)
        self.path = path
        self.partition_values = dict(partition_values)
        self.span = span


class Reader(DataSourceReader):
    """Plans one partition per file (or byte range); each task decodes it with tfsql."""

    def __init__(self, plan: ReadPlan, dataset: "tfsql.Dataset | None") -> None:
        self.plan = plan
        self._dataset = dataset  # not needed in tasks: dropped when pickled
        self.pushed: list = []

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_dataset"] = None
        return state

    def partitions(self) -> list[FilePartition]:
        if self._dataset is None:  # pragma: no cover - partitions() runs where reader() ran
            raise RuntimeError("tfsql.spark: partitions() called on a reader without its dataset")
        expression = filters_to_expression(self.pushed, self.plan.partition_schema)
        split = self.plan.split_bytes
        try:
            fragments = self._dataset.get_fragments(expression, split_bytes=split)
        except (ValueError, TypeError, pa.ArrowException):
            fragments = self._dataset.get_fragments(split_bytes=split)  # an unprunable filter: read everything
        parts = [FilePartition(f.path, f.partition_values, f.byte_range) for f in fragments]
        return parts or [FilePartition("", {})]  # Spark needs at least one partition

    def read(self, partition: FilePartition) -> Iterator[pa.RecordBatch]:  # type: ignore[override]  # Spark passes back our partitions
        plan = self.plan
        if not partition.path:
            return
        target = to_arrow_schema(plan.spark_schema, timezone="UTC")
        # the path names one file: take it literally; the driver judged the schema's columns
        dataset = tfsql.dataset(
            partition.path,
            schema=plan.data_schema,
            hive_partitioning=False,
            glob=False,
            missing_columns="insert",
            **plan.scan,
        )
        span = getattr(partition, "span", None)
        if span is not None:
            dataset = dataset.file_range(span[0], span[1])
        constants = {f.name: pa.scalar(partition.partition_values.get(f.name), f.type) for f in plan.partition_schema}
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
    from pyspark.sql.datasource import Filter

    class PruningReader(Reader):
        """A reader that skips files by the filters Spark pushes on partition columns."""

        def pushFilters(self, filters: list[Filter]) -> list[Filter]:
            partition_names = set(self.plan.partition_schema.names)
            self.pushed = [f for f in filters if filter_columns(f) <= partition_names]
            return filters  # Spark still applies every filter; pruning only skips files

else:  # pragma: no cover - pyspark 4.0
    PruningReader = Reader  # type: ignore[misc, assignment]
