"""``sink_parquet``'s ways of writing, for ``lf.tfrecord.sink``: ``pl.PartitionBy`` targets
and ``lazy=True``.

A :class:`polars.PartitionBy` becomes :func:`tfsql.write_tfrecord` options: its
``key`` columns (or expressions, computed first) become ``partition_by``, its
``max_rows_per_file`` and ``approximate_bytes_per_file`` the writer's
``max_rows_per_file`` and ``max_bytes_per_file``. Keys are written as hive
``key=value`` directories only, never inside the records (TFRecord readers, tfsql's and
Spark's, restore them from the directories), so ``include_key=True`` raises; Polars'
default ``None`` writes them into Parquet files too. A ``file_path_provider`` raises:
file names come from the writer (``filename_pattern=``).

Examples
--------
>>> import polars as pl
>>> lf = pl.LazyFrame({"a": [1, 1, 2], "b": [3, 4, 5]})
>>> lf2, path, options = partition_target(lf, pl.PartitionBy("out", key="a", max_rows_per_file=10), {})
>>> path, options
('out', {'partition_by': ['a'], 'max_rows_per_file': 10})
"""

from __future__ import annotations

from typing import Any, Callable

import polars as pl

__all__ = ["partition_target", "deferred"]

_NO_LIMIT = (1 << 64) - 1  # PartitionBy's approximate_bytes_per_file when "auto" / None


def partition_target(lf: Any, path: Any, options: dict[str, Any]) -> tuple[Any, Any, dict[str, Any]]:
    """``(frame, target directory, writer options)`` for a sink ``path`` that may be a
    :class:`polars.PartitionBy` (anything else passes through)."""
    partition_by_class = getattr(pl, "PartitionBy", None)
    if partition_by_class is None or not isinstance(path, partition_by_class):
        return lf, path, options
    inner = getattr(path, "_pl_partition_by", None)
    if inner is None:
        raise TypeError("this Polars' PartitionBy is not understood by tfsql; pass partition_by= and a directory")
    if inner.file_path_provider is not None:
        raise ValueError(
            "PartitionBy(file_path_provider=...) is not supported: tfsql names the files; "
            "pass filename_pattern= (e.g. 'train_{i}') to choose their names"
        )
    if inner.include_key:
        raise ValueError(
            "PartitionBy(include_key=True) is not supported: tfsql writes partition keys as hive "
            "key=value directories only (readers restore them as columns); leave include_key unset"
        )
    out = dict(options)
    for option in ("partition_by", "max_rows_per_file", "max_bytes_per_file"):
        if option in out:
            raise ValueError(f"{option}= and a pl.PartitionBy target both say how to split files: use one")
    keys = [pl.Expr._from_pyexpr(e) for e in (inner.key or [])]
    if keys:
        computed = [e for e in keys if not e.meta.is_column()]
        if computed:
            lf = lf.with_columns(computed)
        out["partition_by"] = [e.meta.output_name() for e in keys]
    if inner.max_rows_per_file not in (None, _NO_LIMIT):
        out["max_rows_per_file"] = int(inner.max_rows_per_file)
    if inner.approximate_bytes_per_file not in (None, _NO_LIMIT):
        out["max_bytes_per_file"] = int(inner.approximate_bytes_per_file)
    return lf, str(inner.base_path), out


def deferred(write: Callable[[], Any]) -> pl.LazyFrame:
    """A LazyFrame that runs ``write()`` (returning a :class:`tfsql.WriteResult`) when
    collected, and holds one row per written file: ``path``, ``rows``, ``bytes``
    (``sink_parquet(lazy=True)``'s frame is empty; collect either with
    ``pl.collect_all``)."""
    schema = {"path": pl.String, "rows": pl.Int64, "bytes": pl.Int64}

    def run() -> pl.DataFrame:
        result = write()
        return pl.DataFrame(
            {"path": result.paths, "rows": [f.rows for f in result.files], "bytes": [f.bytes for f in result.files]},
            schema=schema,
        )

    return pl.defer(run, schema=schema)
