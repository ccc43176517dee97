"""Choosing the records to train on: a filter evaluated once into record ids.

:func:`select_records` evaluates a filter over a dataset and returns the files that
hold records it keeps, their :class:`~tfsql.loader.index.RecordIndex` and the ids of
the records it keeps in that index, ascending. The filter is one of:

- a ``pyarrow.compute.Expression`` (``pc.field("label") >= 3``),
- a Polars expression (``pl.col("label") >= 3``),
- SQL ``WHERE`` text as written after ``SELECT ... FROM tfrecord_scan(...) WHERE``
  (``"label >= 3 AND split = 'train'"``), evaluated by DuckDB.

Files whose partition values rule them out are not opened, not even indexed
(pyarrow and Polars filters; SQL text that reads only partition columns picks whole
files without reading them); in the other files only the features the filter reads
are decoded.
A null filter result drops the record, as ``WHERE`` does. Nothing is copied or
written: the loader reads the selected records from the original files.

Examples
--------
>>> import tempfile, pyarrow as pa, pyarrow.compute as pc, tfsql
>>> out = tempfile.mkdtemp()
>>> _ = tfsql.write_tfrecord(pa.table({"x": [5, 1, 7, 2], "k": [0, 0, 1, 1]}), out, partition_by=["k"])
>>> ds = tfsql.dataset(out)
>>> files, index, ids = select_records(ds, pc.field("x") > 3)
>>> len(files.files), ids.tolist()
(2, [0, 2])
>>> files, index, ids = select_records(ds, "x < 3 AND k = 1")
>>> files.files == ds.files[1:], ids.tolist()
(True, [1])
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tfsql.scanning import _referenced_columns

if TYPE_CHECKING:
    from tfsql.arrow_dataset import Dataset
    from tfsql.loader.index import RecordIndex

__all__ = ["select_records", "sql_conjuncts"]

_MASK = "__tfsql_selected__"


def select_records(
    dataset: "Dataset", where: Any, *, index_cache: str | None = None
) -> tuple["Dataset", "RecordIndex", np.ndarray]:
    """Evaluate ``where`` over ``dataset`` (see the module docstring; None keeps every
    record). Returns the dataset of the files that hold selected records (pruned
    files are left out: not indexed, not opened), their
    :class:`~tfsql.loader.index.RecordIndex` (``index_cache``: see
    :meth:`~tfsql.loader.index.RecordIndex.build`) and the ids of the selected records
    in that index, ascending.

    Examples
    --------
    >>> import tempfile, pyarrow as pa, polars as pl, tfsql
    >>> out = tempfile.mkdtemp()
    >>> _ = tfsql.write_tfrecord(pa.table({"x": [5, 1, None]}), out)
    >>> select_records(tfsql.dataset(out), pl.col("x") < 3)[2].tolist()
    [1]
    """
    from tfsql.loader.index import RecordIndex

    if where is None:
        masks: dict[int, Any] = {p: True for p in range(len(dataset.files))}
    elif isinstance(where, pc.Expression):
        masks = _arrow_masks(dataset, where)
    elif isinstance(where, str):
        masks = _sql_masks(dataset, where)
    elif _is_polars_expr(where):
        masks = _polars_masks(dataset, where)
    else:
        raise TypeError(
            f"where must be a pyarrow.compute.Expression, a polars.Expr or SQL WHERE text, not {type(where).__name__}"
        )
    kept = sorted(masks)
    subset = dataset if kept == list(range(len(dataset.files))) else dataset.select_files(kept)
    index = RecordIndex.build(subset, cache_dir=index_cache)
    selected = []
    for i, position in enumerate(kept):
        count = int(index.counts[i])
        mask = masks[position]
        if mask is True:
            selected.append(np.arange(count, dtype=np.int64) + index.bases[i])
            continue
        if len(mask) != count:
            raise ValueError(
                f"the filter gave {len(mask)} results for the {count} records of {index.files[i].path}; "
                "select records with on_corrupt='raise' (the default), so that positions match the index"
            )
        selected.append(np.flatnonzero(mask) + index.bases[i])
    ids = np.concatenate(selected).astype(np.int64) if selected else np.zeros(0, np.int64)
    return subset, index, ids


def _is_polars_expr(where: Any) -> bool:
    polars = sys.modules.get("polars")
    return polars is not None and isinstance(where, polars.Expr)


def _positions(dataset: "Dataset", file_indices: list[int]) -> list[int]:
    """Positions (into ``dataset.files``) of some of its files' indices."""
    position = {index: p for p, index in enumerate(dataset.file_indices)}
    return [position[i] for i in file_indices]


def _arrow_masks(dataset: "Dataset", where: pc.Expression) -> dict[int, Any]:
    kept = _positions(dataset, dataset.pruned_indices(where))
    reads = set(_referenced_columns(where, dataset.schema)) - set(dataset.partition_schema.names)
    masks: dict[int, Any] = {}
    for p in kept:
        one = dataset.select_files([p])
        column = one.scanner(columns={_MASK: where}).to_table().column(_MASK)
        masks[p] = _true(column)
        if not reads and not masks[p].any():  # a partition-only filter rejects the file
            del masks[p]
    return masks


def _true(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """Where a boolean column is true (null counts as false)."""
    return pc.fill_null(column, False).to_numpy(zero_copy_only=False).astype(bool)


def _polars_masks(dataset: "Dataset", where: Any) -> dict[int, Any]:
    import polars as pl

    from tfsql.polars.predicates import kept_files, references_only, split_conjuncts
    from tfsql.polars.types import to_frame

    partitions = dataset.partition_schema.names
    terms = split_conjuncts(where)
    partition_terms = [t for t in terms if references_only(t, partitions)]
    data_terms = [t for t in terms if not references_only(t, partitions)]
    kept = kept_files(to_frame(dataset.partition_values), partition_terms) if partition_terms else None
    positions = range(len(dataset.files)) if kept is None else kept
    masks: dict[int, Any] = {}
    names = list(dict.fromkeys(n for t in data_terms for n in t.meta.root_names()))
    missing = [n for n in names if n not in dataset.schema.names]
    if missing:
        raise ValueError(f"the filter reads {missing[0]!r}, which is not a column of the dataset")
    for p in positions:
        if not data_terms:
            masks[p] = True
            continue
        table = dataset.select_files([p]).to_table(columns=names)
        frame = to_frame(table)
        result = frame.select(pl.all_horizontal(data_terms).fill_null(False).alias(_MASK)).get_column(_MASK)
        if len(result) != table.num_rows:
            raise ValueError("the Polars filter must give one value per record (a row-wise boolean expression)")
        masks[p] = result.to_numpy().astype(bool)
    return masks


def _sql_masks(dataset: "Dataset", where: str) -> dict[int, Any]:
    import duckdb

    from tfsql.duckdb.results import arrow_table

    con = duckdb.connect(config={"threads": 1})  # one thread: results in record order
    try:
        kept = list(range(len(dataset.files)))
        rest = []
        for term in sql_conjuncts(where):
            files = _sql_partition_only(con, dataset, term)
            if files is None:
                rest.append(term)
            else:
                kept = [p for p in kept if p in set(files)]
        if not rest:
            return {p: True for p in kept}
        condition = " AND ".join(f"({t})" for t in rest)
        masks: dict[int, Any] = {}
        for p in kept:
            con.register("tfrecord_records", dataset.select_files([p]))
            try:
                column = arrow_table(con.sql(f"SELECT coalesce({condition}, false) FROM tfrecord_records"))
            finally:
                con.unregister("tfrecord_records")
            masks[p] = _true(column.column(0))
        return masks
    finally:
        con.close()


def sql_conjuncts(where: str) -> list[str]:
    """The terms of the top-level ``AND`` of SQL ``WHERE`` text (DuckDB's tokenizer;
    ``AND`` inside parentheses, ``CASE`` or ``BETWEEN`` does not split).

    Examples
    --------
    >>> sql_conjuncts("k = 1 AND (a OR b AND c) AND x BETWEEN 1 AND 3 AND CASE WHEN a AND b THEN 1 END = 1")
    ['k = 1', '(a OR b AND c)', 'x BETWEEN 1 AND 3', 'CASE WHEN a AND b THEN 1 END = 1']
    """
    from tfsql.duckdb.sqltext import tokenize

    terms, begin, depth, cases, between = [], 0, 0, 0, False
    tokens = tokenize(where)
    for token in tokens:
        if token.is_op("(", "["):
            depth += 1
        elif token.is_op(")", "]"):
            depth -= 1
        elif token.is_word("case"):
            cases += 1
        elif token.is_word("end") and cases:
            cases -= 1
        elif token.is_word("between") and not depth and not cases:
            between = True
        elif token.is_word("and") and not depth and not cases:
            if between:
                between = False
                continue
            terms.append(where[begin : token.start].strip())
            begin = token.end
    terms.append(where[begin:].strip())
    return [t for t in terms if t]


def _sql_partition_only(con: Any, dataset: "Dataset", where: str) -> list[int] | None:
    """The files ``where`` keeps, when it reads partition columns (or the file path
    column) only; None when it reads a feature."""
    import duckdb

    files = dataset.partition_values
    path_column = dataset.options.include_file_paths
    if path_column is not None:
        files = files.append_column(path_column, pa.array(dataset.files, pa.string()))
    files = files.append_column(_MASK, pa.array(range(len(dataset.files)), pa.int64()))
    con.register("tfrecord_files", files)
    try:
        rows = con.sql(f"SELECT {_MASK} FROM tfrecord_files WHERE {where}").fetchall()
    except duckdb.BinderException:
        return None  # it names a column the file table lacks: a feature
    finally:
        con.unregister("tfrecord_files")
    return [r[0] for r in rows]
