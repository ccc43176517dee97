"""Polars predicates, taken apart for the TFRecord scan: AND-conjuncts and file pruning.

Polars hands an IO source its whole pushed-down filter as one :class:`polars.Expr`
and then trusts the source to apply it exactly. :func:`split_conjuncts` splits it
into the terms of its top-level AND (``a & b & c`` and ``pl.all_horizontal(a, b, c)``)
using only public ``Expr.meta`` APIs: ``meta.pop()`` returns a node's inputs and
``meta.eq`` tells whether re-combining them with ``&`` (or ``all_horizontal``) gives
back the same expression, i.e. whether the node was an AND. A row passes ``a & b``
exactly when it passes ``a`` and passes ``b`` (a null is not a pass in ``filter``), so
the terms can be applied separately.

:func:`kept_files` evaluates the terms that read partition columns only on a frame
with one row per file, and :func:`partition_filter` turns the surviving files'
partition values into a pyarrow expression the core scanner prunes files with.

Examples
--------
>>> import polars as pl
>>> terms = split_conjuncts((pl.col("a") > 1) & (pl.col("p") == 2) & pl.col("b").is_null())
>>> [t.meta.root_names() for t in terms]
[['a'], ['p'], ['b']]
"""

from __future__ import annotations

import functools
import operator
from typing import Iterable, Sequence

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["split_conjuncts", "combine", "references_only", "kept_files", "partition_filter"]

_FILE_INDEX = "__tfsql_file_index__"


def split_conjuncts(predicate: pl.Expr) -> list[pl.Expr]:
    """The terms of ``predicate``'s top-level AND, left to right (itself if not an AND).

    Examples
    --------
    >>> import polars as pl
    >>> len(split_conjuncts(pl.all_horizontal(pl.col("a") > 1, pl.col("b") | pl.col("c"))))
    2
    >>> len(split_conjuncts((pl.col("a") > 1) | (pl.col("b") > 2)))
    1
    """
    inputs = predicate.meta.pop()
    if len(inputs) == 2 and (inputs[1] & inputs[0]).meta.eq(predicate):
        return split_conjuncts(inputs[1]) + split_conjuncts(inputs[0])
    if len(inputs) >= 2:
        ordered = list(reversed(inputs))  # meta.pop lists inputs last first
        if pl.all_horizontal(*ordered).meta.eq(predicate):
            return [term for item in ordered for term in split_conjuncts(item)]
    return [predicate]


def combine(terms: Sequence[pl.Expr]) -> pl.Expr | None:
    """``terms[0] & terms[1] & ...`` (None for no terms)."""
    if not terms:
        return None
    return functools.reduce(operator.and_, terms)


def references_only(term: pl.Expr, names: Iterable[str]) -> bool:
    """True when every column ``term`` reads is in ``names`` (a literal reads none)."""
    allowed = set(names)
    return all(name in allowed for name in term.meta.root_names())


def kept_files(partition_values: pl.DataFrame, terms: Sequence[pl.Expr]) -> list[int]:
    """Indices of the files (rows of ``partition_values``) for which every term holds.

    ``partition_values`` has one row per file and one column per partition key, typed
    as the scan declares them, so each term evaluates exactly as it would on the rows
    of that file (every row of a file has the same partition values).
    """
    frame = partition_values.with_row_index(_FILE_INDEX)
    for term in terms:
        frame = frame.filter(term)
    return frame.get_column(_FILE_INDEX).to_list()


def partition_filter(values: pa.Table, kept: Sequence[int]) -> pc.Expression:
    """A pyarrow filter true exactly on the rows of files whose partition values are
    those of the ``kept`` rows of ``values`` (one row per file).

    The core scanner prunes files with it (its guarantee simplification drops every
    file whose values are not listed) and applies it to each batch, where it holds for
    every row of a kept file. One key gives ``is_in`` (plus ``is_null``); several keys
    give an OR of ANDs over the distinct kept value tuples.

    Examples
    --------
    >>> import pyarrow as pa
    >>> partition_filter(pa.table({"p": [1, 2, 2, None]}), [1, 2, 3])
    <pyarrow.compute.Expression (is_in(p, {value_set=int64:[
      2
    ], null_matching_behavior=MATCH}) or is_null(p, {nan_is_null=false}))>
    """
    names = values.schema.names
    columns = [values.column(name).to_pylist() for name in names]
    distinct = list(dict.fromkeys(tuple(column[i] for column in columns) for i in kept))
    if len(names) == 1:
        name, typ = names[0], values.schema.field(0).type
        present = [row[0] for row in distinct if row[0] is not None]
        terms = []
        if present:
            terms.append(pc.field(name).isin(pa.array(present, typ)))
        if len(present) < len(distinct):
            terms.append(pc.field(name).is_null())
        return _balanced(terms, operator.or_)
    alternatives = []
    for row in distinct:
        equalities = [
            pc.field(name).is_null()
            if value is None
            else pc.field(name) == pa.scalar(value, values.schema.field(name).type)
            for name, value in zip(names, row)
        ]
        alternatives.append(_balanced(equalities, operator.and_))
    return _balanced(alternatives, operator.or_)


def _balanced(terms: Sequence[pc.Expression], op) -> pc.Expression:
    """Combine with ``op`` as a balanced tree (shallow even for thousands of terms)."""
    if not terms:
        return pc.scalar(False)
    while len(terms) > 1:
        terms = [
            op(terms[i], terms[i + 1]) if i + 1 < len(terms) else terms[i] for i in range(0, len(terms), 2)
        ]
    return terms[0]
