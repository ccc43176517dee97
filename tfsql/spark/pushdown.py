"""Spark's pushed filters as pyarrow expressions, for pruning files by partition values.

Spark (pyspark 4.1+, with ``spark.sql.python.filterPushdown.enabled``) passes a
reader's ``pushFilters`` the query's filters as :mod:`pyspark.sql.datasource` filter
objects. The reader keeps those on partition columns (:func:`filter_columns`); this
module turns them into one pyarrow expression that :meth:`tfsql.Dataset.get_fragments`
prunes files with. A filter that does not translate is dropped (Spark still applies
every filter, so pruning only ever skips files).

Examples
--------
>>> import pyarrow as pa
>>> from pyspark.sql.datasource import EqualTo, GreaterThan
>>> schema = pa.schema([("part", pa.int64())])
>>> filters_to_expression([EqualTo(("part",), 2), GreaterThan(("part",), 1)], schema)
<pyarrow.compute.Expression ((part == 2) and (part > 1))>
>>> filter_columns(EqualTo(("part",), 2))
{'part'}
"""

from __future__ import annotations

from typing import Any, Sequence

import pyarrow as pa
import pyarrow.compute as pc

try:  # pyspark 4.1+: filter pushdown
    from pyspark.sql.datasource import (
        EqualNullSafe,
        EqualTo,
        GreaterThan,
        GreaterThanOrEqual,
        In,
        IsNotNull,
        IsNull,
        LessThan,
        LessThanOrEqual,
        Not,
        StringContains,
        StringEndsWith,
        StringStartsWith,
    )

    HAS_FILTER_PUSHDOWN = True
except ImportError:  # pragma: no cover - pyspark 4.0
    HAS_FILTER_PUSHDOWN = False

__all__ = ["HAS_FILTER_PUSHDOWN", "filter_columns", "filters_to_expression"]


def filter_columns(f: Any) -> set[str]:
    """The columns a filter reads (a nested field counts as no column of ours)."""
    if isinstance(f, Not):
        return filter_columns(f.child)
    attribute = getattr(f, "attribute", None)
    if not attribute or len(attribute) != 1:
        return {"\0nested"}
    return {attribute[0]}


def filters_to_expression(filters: Sequence[Any], schema: pa.Schema) -> pc.Expression | None:
    """AND of the filters that translate to pyarrow expressions (the rest are dropped)."""
    terms = []
    for f in filters:
        try:
            term = _filter_to_expression(f, schema)
        except (ValueError, TypeError, pa.ArrowException):
            term = None
        if term is not None:
            terms.append(term)
    if not terms:
        return None
    expression = terms[0]
    for term in terms[1:]:
        expression = expression & term
    return expression


def _filter_to_expression(f: Any, schema: pa.Schema) -> pc.Expression | None:
    if isinstance(f, Not):
        child = _filter_to_expression(f.child, schema)
        return None if child is None else ~child
    name = f.attribute[0]
    column = pc.field(name)
    typ = schema.field(name).type
    if isinstance(f, IsNull):
        return column.is_null()
    if isinstance(f, IsNotNull):
        return column.is_valid()
    if isinstance(f, In):
        return column.isin(pa.array(list(f.value), typ))
    value = pc.scalar(pa.scalar(f.value, typ)) if f.value is not None else None
    if isinstance(f, EqualNullSafe):
        return column.is_null() if value is None else (column == value)
    if value is None:
        return None
    if isinstance(f, EqualTo):
        return column == value
    if isinstance(f, GreaterThan):
        return column > value
    if isinstance(f, GreaterThanOrEqual):
        return column >= value
    if isinstance(f, LessThan):
        return column < value
    if isinstance(f, LessThanOrEqual):
        return column <= value
    if isinstance(f, StringStartsWith):
        return pc.starts_with(column, f.value)
    if isinstance(f, StringEndsWith):
        return pc.ends_with(column, f.value)
    if isinstance(f, StringContains):
        return pc.match_substring(column, f.value)
    return None
