"""Polars front end: ``pl.scan_tfrecord``, ``pl.read_tfrecord`` and the ``.tfrecord``
writer namespaces.

``scan_tfrecord`` is a Polars IO plugin (``polars.io.plugins.register_io_source``)
over :func:`tfsql.dataset`: it decodes nothing itself, it translates what Polars asks
for into one :class:`tfsql.Scanner` per query and converts the Arrow batches.

The contract with Polars, one module per job:

- :mod:`tfsql.polars.scan`: ``scan_tfrecord`` / ``read_tfrecord``, their parameters
  (``scan_parquet``'s, then the reading options of :mod:`tfsql.options`);
- :mod:`tfsql.polars.parquet_options`: what each Parquet option means for TFRecord;
- :mod:`tfsql.polars.source`: the IO source Polars calls (columns, predicate, row
  limit, batch size), held to Polars' trust in it;
- :mod:`tfsql.polars.predicates`: pushed predicates split into AND-terms, file pruning;
- :mod:`tfsql.polars.types`: Polars <-> Arrow types;
- :mod:`tfsql.polars.sink`: writing DataFrames and LazyFrames (``pl.PartitionBy``,
  ``lazy=True``);
- :mod:`tfsql.polars.namespaces`: ``df.tfrecord`` / ``lf.tfrecord`` and :func:`attach`.

Importing this package imports Polars and attaches (:func:`attach`). Once both
:mod:`tfsql` and Polars are imported, in either order, ``polars.scan_tfrecord``,
``polars.read_tfrecord`` and the namespaces exist: ``import tfsql`` installs
:mod:`tfsql._polars_hook`, which stays outside this package because ``import tfsql``
must not import Polars (and importing any module of this package runs this file).

Examples
--------
>>> import tempfile, polars as pl, tfsql
>>> from tfsql.polars import scan_tfrecord
>>> path = tempfile.mkdtemp() + "/out"
>>> df = pl.DataFrame({"id": [1, 2, 3], "split": ["a", "b", "a"]})
>>> _ = write_frame(df, path, partition_by="split")
>>> scan_tfrecord(path).filter(pl.col("split") == "a").select("id").sort("id").collect()["id"].to_list()
[1, 3]
"""

from tfsql.polars.types import SchemaLike, arrow_type
from tfsql.polars.source import EXPLAIN_NAME, ScanPlan, TFRecordSource, scan_dataset
from tfsql.polars.scan import read_tfrecord, scan_tfrecord
from tfsql.polars.sink import sink_frame, write_frame
from tfsql.polars.namespaces import TFRecordFrameNamespace, TFRecordLazyFrameNamespace, attach

__all__ = [
    "scan_tfrecord",
    "read_tfrecord",
    "scan_dataset",
    "attach",
    "arrow_type",
    "write_frame",
    "sink_frame",
    "TFRecordFrameNamespace",
    "TFRecordLazyFrameNamespace",
    "TFRecordSource",
    "ScanPlan",
    "SchemaLike",
    "EXPLAIN_NAME",
]

# Importing this package means Polars is imported: attach (see tfsql._polars_hook).
attach()
