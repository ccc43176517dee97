"""The Spark data source itself: the ``DataSource`` classes Spark instantiates for
``format("tfrecord")`` / ``format("tfsql")``, their registration on a session, and the
check that pyspark and Java are new enough.

The classes only route: reads to :mod:`tfsql.spark.reading`, writes to
:mod:`tfsql.spark.writing`, options through :mod:`tfsql.spark.spark_options`.

Examples
--------
>>> TFRecordDataSource.name(), TFSQLDataSource.name()
('tfrecord', 'tfsql')
>>> java_version("/no/such/java") is None
True
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from typing import Any

import pyspark
from pyspark.sql.datasource import DataSource
from pyspark.sql.types import StructType

from tfsql.spark.pushdown import HAS_FILTER_PUSHDOWN
from tfsql.spark.reading import PruningReader, Reader, plan_read
from tfsql.spark.writing import Writer, plan_write

__all__ = [
    "FORMAT_NAMES",
    "FILTER_PUSHDOWN_CONF",
    "TFRecordDataSource",
    "TFSQLDataSource",
    "register",
    "check_environment",
    "java_version",
]

FORMAT_NAMES = ("tfrecord", "tfsql")
"""The format names :func:`register` registers."""

FILTER_PUSHDOWN_CONF = "spark.sql.python.filterPushdown.enabled"
"""The Spark session conf that enables ``pushFilters`` of Python data sources."""

MIN_PYSPARK = (4, 0)
MIN_JAVA = 17


class TFRecordDataSource(DataSource):
    """The ``"tfrecord"`` format: read and write TFRecord with tfsql (see :mod:`tfsql.spark`)."""

    filter_pushdown = False

    @classmethod
    def name(cls) -> str:
        return "tfrecord"

    def schema(self) -> StructType:
        plan, _, _ = plan_read(self.options, None)
        return plan.spark_schema

    def reader(self, schema: StructType) -> Reader:
        plan, dataset, pushdown = plan_read(self.options, schema)
        if pushdown is None:
            pushdown = self.filter_pushdown
        if pushdown and not HAS_FILTER_PUSHDOWN:
            raise RuntimeError(f"option filterPushdown needs pyspark >= 4.1 (found {pyspark.__version__})")
        return (PruningReader if pushdown else Reader)(plan, dataset)

    def writer(self, schema: StructType, overwrite: bool) -> Writer:
        return Writer(plan_write(self.options, schema, overwrite))


class TFSQLDataSource(TFRecordDataSource):
    """The ``"tfsql"`` alias of :class:`TFRecordDataSource`."""

    @classmethod
    def name(cls) -> str:
        return "tfsql"


class _TFRecordPruning(TFRecordDataSource):
    filter_pushdown = True


class _TFSQLPruning(TFSQLDataSource):
    filter_pushdown = True


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
        raise TypeError(f"register needs a pyspark.sql.SparkSession (pyspark >= 4.0), not {type(spark).__name__}")
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
# Environment
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
            f"tfsql.spark needs pyspark >= 4.0, found {pyspark.__version__}; upgrade with: pip install 'tfsql[spark]'"
        )
    major = java_version()
    if major is None:
        raise RuntimeError(
            "Spark needs Java 17 or newer and no `java` was found (JAVA_HOME unset and no java "
            "on PATH); install a JDK 17+ (e.g. apt-get install openjdk-17-jre-headless) and set JAVA_HOME"
        )
    if major < MIN_JAVA:
        raise RuntimeError(
            f"Spark 4 needs Java 17 or newer, found Java {major}; install a JDK 17+ and point JAVA_HOME at it"
        )
