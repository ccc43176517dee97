"""Automatic registration of tfsql's PySpark data source.

PySpark (4.x) registers, at session start, the ``DefaultSource`` of every installed
top-level module whose name starts with ``pyspark_`` (one format name per module).
This module exists for that alone, so ``spark.read.format("tfrecord")`` works after
``pip install tfsql[spark]`` without calling :func:`tfsql.spark.register` (which also
adds the alias ``"tfsql"``). PySpark's discovery lists installed modules with
``pkgutil``, which does not see the modules of an editable install.
"""

from tfsql.spark import TFRecordDataSource as DefaultSource

__all__ = ["DefaultSource"]
