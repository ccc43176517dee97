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
``part-<task:05d>-<job uuid>-c<seq:03d>.tfrecord[.gz|.zz]`` (or by ``filenamePattern``).

The package, by job: :mod:`~tfsql.spark.source` (the DataSource classes and
:func:`register`), :mod:`~tfsql.spark.spark_options` (Spark's string options),
:mod:`~tfsql.spark.reading` (read planning, partitions, the task reader),
:mod:`~tfsql.spark.pushdown` (pushed filters), :mod:`~tfsql.spark.writing` (task
writes and the commit), :mod:`~tfsql.spark.types` (Spark <-> Arrow types).

``save(path)`` always writes a directory of part files, as Spark's own formats and
Spark-TFRecord do, whatever the path's name: ``.save("train.tfrecord")`` makes a
directory ``train.tfrecord`` (tfsql's single-file rule, `tfsql.naming`, is for writers
outside Spark).

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

Options (case-insensitive; names, aliases, defaults and values from the option spec
:mod:`tfsql.options`, parsed by :func:`dataset_options` / :func:`writer_options`):
Spark-TFRecord's names ``recordType`` (``Example`` | ``SequenceExample`` |
``ByteArray``) and ``codec`` (``gzip``, ``zlib``/``deflate``, or Hadoop class names
such as ``org.apache.hadoop.io.compress.GzipCodec``), Spark's ``maxRecordsPerFile``
and ``maxPartitionBytes`` (byte ranges an uncompressed file is split into, one Spark
partition each; default 128 MiB like ``spark.sql.files.maxPartitionBytes``, ``all``
keeps every file whole), ``threads`` (decode threads per task, default 1: Spark already
runs one task per core), the data source's own ``filterPushdown``, and tfsql's names for
the rest (listed below). ``filenamePattern`` numbers the files of the whole job and
``numShards`` is not offered (:mod:`tfsql.spark.writing` says why).

Examples
--------
>>> import tfsql.spark                                   # doctest: +SKIP
>>> tfsql.spark.register(spark)                          # doctest: +SKIP
>>> spark.range(3).write.format("tfrecord").mode("overwrite").save("/tmp/ids")  # doctest: +SKIP
>>> spark.read.format("tfrecord").load("/tmp/ids").orderBy("id").collect()      # doctest: +SKIP
[Row(id=0), Row(id=1), Row(id=2)]
"""

from __future__ import annotations

try:
    import pyspark.sql.datasource  # noqa: F401  (the Python Data Source API, pyspark 4.0+)
except ImportError as _exc:  # pragma: no cover - exercised only without pyspark 4
    raise ImportError(
        "tfsql.spark needs pyspark 4.0 or newer (its Python Data Source API, "
        f"pyspark.sql.datasource): {_exc}. Install it with: pip install 'tfsql[spark]'"
    ) from _exc

from tfsql.spark.pushdown import HAS_FILTER_PUSHDOWN
from tfsql.spark.reading import BYTE_ARRAY_COLUMN
from tfsql.spark.source import (
    FILTER_PUSHDOWN_CONF,
    FORMAT_NAMES,
    TFRecordDataSource,
    TFSQLDataSource,
    check_environment,
    java_version,
    register,
)
from tfsql.spark.spark_options import dataset_options, options_help, writer_options
from tfsql.spark.types import arrow_to_spark, spark_to_arrow

__all__ = [
    "register",
    "check_environment",
    "java_version",
    "spark_to_arrow",
    "arrow_to_spark",
    "dataset_options",
    "writer_options",
    "TFRecordDataSource",
    "TFSQLDataSource",
    "FORMAT_NAMES",
    "FILTER_PUSHDOWN_CONF",
    "HAS_FILTER_PUSHDOWN",
    "BYTE_ARRAY_COLUMN",
]

if __doc__ is not None:  # the option list, from the spec (absent under python -OO)
    __doc__ += options_help()
