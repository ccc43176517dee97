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
with one row per file; the scan then reads only the files it keeps
(``Dataset.select_files``).

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

__all__ = ["split_conjuncts", "combine", "references_only", "kept_files"]

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
