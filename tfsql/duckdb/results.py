"""DuckDB results as Arrow: the one streaming reader over a relation, and whole tables.

DuckDB renamed its Arrow methods between 1.4 (``fetch_arrow_reader``,
``fetch_arrow_table``) and 2.x (``to_arrow_reader``, ``to_arrow_table``); every part of
tfsql that pulls Arrow data out of DuckDB (``COPY ... (FORMAT tfrecord)``, the ``tfsql``
command's outputs, type names) goes through these two functions.

Examples
--------
>>> import duckdb
>>> reader = arrow_reader(duckdb.sql("SELECT range AS x FROM range(5)"), rows=2)
>>> [batch.num_rows for batch in reader]
[2, 2, 1]
>>> arrow_table(duckdb.sql("SELECT 1 AS a")).to_pylist()
[{'a': 1}]
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

__all__ = ["arrow_reader", "arrow_table"]


def arrow_reader(relation: Any, rows: int = 1_000_000) -> pa.RecordBatchReader:
    """A streaming ``pyarrow.RecordBatchReader`` over a DuckDB relation, ``rows`` rows per
    batch at most. A relation of `tfsql.duckdb` (its errors translated) gives a reader
    whose errors are translated too."""
    method = getattr(relation, "to_arrow_reader", None) or relation.fetch_arrow_reader
    return method(rows)


def arrow_table(relation: Any) -> pa.Table:
    """The whole result of a DuckDB relation as a ``pyarrow.Table``."""
    method = getattr(relation, "to_arrow_table", None) or relation.fetch_arrow_table
    return method()
