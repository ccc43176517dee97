"""Eager reading: ``read_tfrecord`` and ``infer_schema``, thin wrappers over :func:`tfsql.dataset`.

Examples
--------
>>> import tempfile, pyarrow as pa, tfsql
>>> path = tempfile.mkdtemp()
>>> _ = tfsql.write_tfrecord(pa.table({"label": [0, 1], "name": ["a", "b"]}), path)
>>> tfsql.read_tfrecord(path, columns=["name"]).to_pylist()
[{'name': 'a'}, {'name': 'b'}]
>>> tfsql.infer_schema(path)
label: int64
name: string
"""

from __future__ import annotations

from typing import Any, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from tfsql.opening import dataset

__all__ = ["read_tfrecord", "infer_schema"]


def read_tfrecord(
    source: Any,
    *,
    columns: Sequence[str] | None = None,
    filter: pc.Expression | None = None,
    n_rows: int | None = None,
    progress: bool = False,
    **options: Any,
) -> pa.Table:
    """Read TFRecord files into a ``pyarrow.Table``.

    Parameters
    ----------
    source : str, path, or list of them
        Files, directories, globs or fsspec URLs (see :func:`tfsql.dataset`).
    columns : list of str, optional
        Only these columns, in this order; only their features are decoded.
    filter : pyarrow.compute.Expression, optional
        Keep matching rows (partition terms prune files without opening them).
    n_rows : int, optional
        Stop after this many rows.
    progress : bool
        Show a progress bar of the bytes read (of the files the scan opens) on stderr.
    **options
        Any option of :func:`tfsql.dataset`: ``schema``, ``record_type``,
        ``compression``, ``verify_checksums``, ``on_corrupt``, ``hive_partitioning``,
        ``include_file_paths``, ``infer_sample``, ``lists``, ``threads``...

    Examples
    --------
    >>> import tempfile, pyarrow as pa, tfsql
    >>> path = tempfile.mkdtemp()
    >>> _ = tfsql.write_tfrecord(pa.table({"x": [1, 2, 3]}), path, compression="gzip")
    >>> tfsql.read_tfrecord(path, n_rows=2).column("x").to_pylist()
    [1, 2]
    >>> tfsql.read_tfrecord(path, record_type="bytes").column_names
    ['record']
    """
    return dataset(source, **options).to_table(columns=columns, filter=filter, limit=n_rows, progress=progress)


def infer_schema(source: Any, **options: Any) -> pa.Schema:
    """The schema :func:`read_tfrecord` would produce: data columns, then partition
    columns (see :mod:`tfsql.inference` for the sample it reads).

    Examples
    --------
    >>> import tempfile, pyarrow as pa, tfsql
    >>> path = tempfile.mkdtemp()
    >>> _ = tfsql.write_tfrecord(pa.table({"ids": [[1, 2], [3]]}), path)
    >>> tfsql.infer_schema(path).field("ids").type
    ListType(list<item: int64>)
    """
    return dataset(source, **options).schema
