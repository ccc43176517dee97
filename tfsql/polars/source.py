"""The Polars IO source of the TFRecord scan: what Polars asks for, read from a
:class:`tfsql.Dataset`.

:func:`scan_dataset` registers a :class:`TFRecordSource` with
``polars.io.plugins.register_io_source``; it decodes nothing itself, it translates each
request into one :class:`tfsql.Scanner` and converts the Arrow batches.

Polars trusts an IO source completely (see ``docs/architecture.md``, Polars contract), so
the source

- outputs exactly the requested ``with_columns``, in that order (``select(pl.len())``
  asks for one column);
- applies the pushed predicate exactly, on every batch, after splitting it into
  AND-terms (:mod:`tfsql.polars.predicates`): the terms that read only hive partition
  columns are evaluated on a frame with one row per file, and the files they reject are
  never opened;
- honours ``n_rows``: with a predicate it means "the first n rows of the source, then
  filter", so no file is pruned then;
- casts every batch to the declared Polars schema.

Examples
--------
>>> import tempfile, pyarrow as pa, polars as pl, tfsql
>>> path = tempfile.mkdtemp() + "/out"
>>> _ = tfsql.write_tfrecord(pa.table({"x": [1, 2, 3]}), path)
>>> source = TFRecordSource(tfsql.dataset(path), pl.Schema({"x": pl.Int64}))
>>> source.describe()
'1 file'
>>> [f["x"].to_list() for f in source(["x"], pl.col("x") > 1, None, None)]
[[2, 3]]
"""

from __future__ import annotations

import inspect
import operator
from dataclasses import dataclass
from typing import Any, Collection, Iterator, Mapping

import polars as pl
import pyarrow as pa
from polars.io.plugins import register_io_source

from tfsql.polars.predicates import combine, kept_files, references_only, split_conjuncts
from tfsql.polars.types import frame_type, polars_schema, to_frame
from tfsql.arrow_dataset import Dataset
from tfsql.decoding import ExportedBatch

__all__ = ["scan_dataset", "ScanPlan", "TFRecordSource", "EXPLAIN_NAME"]

#: The name ``explain()`` shows for the scan: ``PYTHON[tfrecord] SCAN``.
EXPLAIN_NAME = "tfrecord"


def scan_dataset(
    ds: Dataset,
    *,
    n_rows: int | None = None,
    polars_types: Mapping[str, pl.DataType] | None = None,
    cache: bool = True,
) -> pl.LazyFrame:
    """A LazyFrame over an opened :class:`tfsql.Dataset` (what :func:`scan_tfrecord` returns).

    ``polars_types`` overrides the Polars type of columns (e.g. ``pl.Categorical`` for
    a string feature); each batch is cast to it. ``cache=False`` tells Polars the
    scan is not pure, so a query using it twice reads it twice.

    Examples
    --------
    >>> import tempfile, pyarrow as pa, tfsql
    >>> path = tempfile.mkdtemp() + "/out"
    >>> _ = tfsql.write_tfrecord(pa.table({"x": [1, 2]}), path)
    >>> scan_dataset(tfsql.dataset(path)).collect()["x"].to_list()
    [1, 2]
    """
    schema = _frame_types(ds)
    # the columns whose Polars type is not the one their Arrow type imports as
    overridden = {name for name, dtype in (polars_types or {}).items() if name in schema and dtype != schema[name]}
    if overridden:
        schema = {**schema, **{name: polars_types[name] for name in overridden}}  # type: ignore[index]
    source = TFRecordSource(ds, schema, n_rows=n_rows, overridden=overridden)
    options = {
        "validate_schema": True,  # a batch off the declared schema is our bug: fail loudly
        "is_pure": cache,  # the same scan twice in a plan may be read once
        "explain_name": EXPLAIN_NAME,
        "explain_detail": source.describe(),
    }
    accepted = inspect.signature(register_io_source).parameters  # older Polars lack some
    supported: dict[str, Any] = {k: v for k, v in options.items() if k in accepted}
    return register_io_source(source, schema=source.schema, **supported)


@dataclass(frozen=True)
class ScanPlan:
    """What one call of the IO source reads (derived from Polars' request).

    Attributes
    ----------
    columns : list of str
        The output columns, in order.
    decode : list of str
        The columns the scanner produces: ``columns`` plus those the residual predicate
        reads.
    residual : polars.Expr or None
        The predicate applied to each batch (the pushed predicate minus the terms that
        selected files).
    files : list of int or None
        Positions (in ``Dataset.files``) of the files the partition terms keep; None:
        every file.
    limit : int or None
        Raw rows to read (before ``residual``).
    no_files : bool
        The partition terms rejected every file: read nothing.
    """

    columns: list[str]
    decode: list[str]
    residual: pl.Expr | None
    files: list[int] | None
    limit: int | None
    no_files: bool = False


class TFRecordSource:
    """The callable registered with ``register_io_source``: Polars calls it with
    ``(with_columns, predicate, n_rows, batch_size)`` and iterates the DataFrames it
    yields. ``schema`` maps each column to its Polars type (a ``pl.Schema`` or a dict);
    ``overridden``, when known, names the columns whose type there is not the one their
    Arrow type imports as (:func:`~tfsql.polars.types.frame_type`): the batches are cast
    to it (unknown: each column's type is compared, once per scan).
    """

    def __init__(
        self,
        ds: Dataset,
        schema: Mapping[str, pl.DataType],
        *,
        n_rows: int | None = None,
        overridden: Collection[str] | None = None,
    ) -> None:
        self._dataset = ds
        self.schema = schema
        self._overridden = None if overridden is None else set(overridden)
        self._n_rows = n_rows
        self._partition_names = list(ds.partition_schema.names)
        self._partitions: tuple[pa.Table, pl.DataFrame] | None = None

    def describe(self) -> str:
        """One line for ``explain()``: files, partition keys, row cap."""
        n = len(self._dataset.files)
        text = f"{n} file{'' if n == 1 else 's'}"
        if self._partition_names:
            text += f"; hive partitions: {', '.join(self._partition_names)}"
        if self._n_rows is not None:
            text += f"; n_rows={self._n_rows}"
        return text

    # ------------------------------------------------------------------ planning
    def _partition_values(self) -> tuple[pa.Table, pl.DataFrame]:
        """Partition values, one row per file: as Arrow and as Polars (declared types)."""
        if self._partitions is None:
            table = self._dataset.partition_values
            frame = to_frame(table)
            frame = frame.cast({name: self.schema[name] for name in frame.columns})
            self._partitions = (table, frame)
        return self._partitions

    def plan(self, with_columns: list[str] | None, predicate: pl.Expr | None, n_rows: int | None) -> ScanPlan:
        """Translate one Polars request into scanner arguments (see :class:`ScanPlan`)."""
        columns = list(self.schema) if with_columns is None else list(with_columns)
        limit = _smaller(self._n_rows, n_rows)
        residual, files, no_files = predicate, None, False
        # With a row limit the predicate applies to the first rows of the whole source,
        # so no file may be skipped.
        if predicate is not None and limit is None and self._partition_names:
            terms = split_conjuncts(predicate)
            on_files = [references_only(t, self._partition_names) for t in terms]
            if any(on_files):
                table, frame = self._partition_values()
                kept = kept_files(frame, [t for t, f in zip(terms, on_files) if f])
                residual = combine([t for t, f in zip(terms, on_files) if not f])
                if not kept:
                    no_files = True
                elif len(kept) < table.num_rows:
                    files = kept
        decode = list(columns)
        if residual is not None:
            decode += [name for name in dict.fromkeys(residual.meta.root_names()) if name not in columns]
        return ScanPlan(columns, decode, residual, files, limit, no_files)

    # ------------------------------------------------------------------ reading
    def __call__(
        self,
        with_columns: list[str] | None,
        predicate: pl.Expr | None,
        n_rows: int | None,
        batch_size: int | None,
    ) -> Iterator[pl.DataFrame]:
        plan = self.plan(with_columns, predicate, n_rows)
        return self._read(plan, batch_size)

    def _read(self, plan: ScanPlan, batch_size: int | None) -> Iterator[pl.DataFrame]:
        if plan.no_files or plan.limit == 0:
            return
        bound = self._dataset.options.batch_size
        source = self._dataset if plan.files is None else self._dataset.select_files(plan.files)
        scanner = source.scanner(
            # every column in order: None, so that the scanner makes no pass over them by name
            columns=None if plan.decode == list(self.schema) else plan.decode,
            batch_size=bound if batch_size is None else max(1, min(batch_size, bound)),
            limit=plan.limit,
        )
        projected = scanner.projected_schema
        # batches of the decoded columns as they are come over as the core built them
        # (the Arrow PyCapsule interface: no pyarrow object per column; strings checked UTF-8)
        batches = scanner.to_batches(exported=True)
        checked: pa.Schema | None = None  # the batch schema `mismatched` was found for
        mismatched: dict[Any, Any] = {}
        try:
            for batch in batches:
                if isinstance(batch, ExportedBatch):
                    frame = pl.DataFrame(batch)
                elif batch.num_columns:
                    frame = to_frame(batch, rechunk=False)
                else:  # records without features: from_arrow would drop the row count
                    frame = pl.DataFrame(height=batch.num_rows)
                if checked is None or not (batch.schema is checked or batch.schema.equals(checked)):
                    mismatched = self._mismatched(batch.schema, projected, plan.decode)  # once per scan, as a rule
                    checked = batch.schema
                if mismatched:
                    frame = frame.cast(mismatched)
                if plan.residual is not None:
                    frame = frame.filter(plan.residual)
                if len(plan.decode) != len(plan.columns):
                    frame = frame.select(plan.columns)
                if frame.height:
                    yield frame
        finally:
            batches.close()

    def _mismatched(self, arrow: pa.Schema, projected: pa.Schema, names: list[str]) -> dict[str, pl.DataType]:
        """The columns (``names``, in order, of Arrow types ``arrow``) whose frame type is
        not the declared one, with the declared type: with the scan's own types
        (``projected``) the overridden columns, else each column's frame type compared
        (:func:`~tfsql.polars.types.frame_type`: the same objects as the declared schema's
        where they agree, so most compare by identity)."""
        if self._overridden is not None and arrow.equals(projected):
            return {name: self.schema[name] for name in names if name in self._overridden}
        types = map(frame_type, arrow.types)
        return {
            n: t for n, have, t in zip(names, types, map(self.schema.__getitem__, names)) if have is not t and have != t
        }


def _frame_types(ds: Dataset) -> dict[str, pl.DataType]:
    """The Polars type each column of ``ds`` imports as: the data columns' through the
    type objects their specs share (one conversion per distinct object, looked up by
    C-level iteration: a record with a million features), the others' by their Arrow
    type; :func:`~tfsql.polars.types.polars_schema` when the specs are not the leading
    columns."""
    schema, specs = ds.schema, ds.column_specs
    names = schema.names
    n = len(specs)
    if n > len(names) or not all(map(operator.eq, names, map(_NAME, specs))):
        return polars_schema(schema, {})
    objects = {id(t): t for t in map(_TYPE, specs)}
    table = {key: frame_type(t) for key, t in objects.items()}
    types = list(map(table.__getitem__, map(id, map(_TYPE, specs))))
    types += [frame_type(schema.field(i).type) for i in range(n, len(names))]
    return dict(zip(names, types))


_NAME, _TYPE = operator.attrgetter("name"), operator.attrgetter("arrow_type")


def _smaller(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a, b)
