"""Which columns a statement filters on, read from DuckDB's own parse of it.

`tfsql.duckdb.scan_calls.native_route` sends a ``tfrecord_scan`` call over
hive-partitioned files or a TFDS / TFX layout to the Arrow path when the statement
filters on one of its partition columns, since only that path prunes directories
(DuckDB's C API has no filter pushdown). Whether it does is not guessed from the text:
DuckDB's parser (``json_serialize_sql``, in the ``json`` extension every DuckDB wheel
links in) gives the statement as a tree, and `statement_filters` collects the column
names that its filters name: every ``WHERE``, ``HAVING`` and ``QUALIFY`` clause and
every join's ``ON`` / ``USING``, at any depth (CTEs and subqueries included, since
DuckDB pushes an outer filter down through them into the scan; DuckDB 1.4 also pushes
a join's min/max into it).

``json_serialize_sql`` serialises SELECT statements only. For any other statement
(``CREATE TABLE ... AS``, ``INSERT ... SELECT``, ``COPY (query) TO``, ``EXPLAIN``,
``DESCRIBE query``...) the queries inside it are parsed instead: from each ``SELECT``,
``WITH`` or ``FROM`` keyword to the end of its bracket (or of the statement), the
first that parses wins and its text is not tried again. The tokens only propose where
a query may start; DuckDB's parser decides what it is.

Examples
--------
>>> from tfsql.duckdb.rewrite import tokenize
>>> sql = "COPY (SELECT x FROM t WHERE \\"P\\" = 1 AND 'y = 2' <> s) TO 'out.csv'"
>>> found = statement_filters(sql, tokenize(sql))
>>> sorted(found.columns), found.covers(sql.index("FROM t"))
(['p', 's'], True)
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import duckdb

from tfsql.duckdb.rewrite import Token, enclosing_closes

__all__ = ["StatementFilters", "statement_filters", "parse_query"]

_FILTER_CLAUSES = ("where_clause", "having", "qualify")  # of a SELECT node
_QUERY_STARTS = ("select", "with", "from")

_parser_lock = threading.Lock()
_parser: duckdb.DuckDBPyConnection | None = None


_inherited: list[duckdb.DuckDBPyConnection] = []  # kept, never closed, in a forked child


def _forget_parser() -> None:
    """A forked child opens its own parser connection: the parent's is kept but not used
    (closing it there crashes, its database's threads are not in the child)."""
    global _parser, _parser_lock
    if _parser is not None:
        _inherited.append(_parser)
    _parser, _parser_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_parser)


@dataclass(frozen=True)
class StatementFilters:
    """What DuckDB's parser says of a statement's filters.

    ``columns``: the column names (lower case, the last part of a qualified name) its
    filters name. ``spans``: the ``(start, end)`` text offsets of the queries that were
    parsed; a part of the statement outside them was not read (see `covers`).
    """

    columns: frozenset[str]
    spans: tuple[tuple[int, int], ...]

    def covers(self, offset: int) -> bool:
        """Whether the text at ``offset`` lies in a parsed query (so `columns` includes
        the filters around it)."""
        return any(start <= offset < end for start, end in self.spans)


def statement_filters(text: str, tokens: Sequence[Token]) -> StatementFilters:
    """The columns the filters of statement ``text`` (tokens ``tokens``) name, by DuckDB's parser.

    A SELECT is parsed whole; in any other statement each query it holds is parsed (see
    the module's documentation). Where nothing parses, or this DuckDB lacks
    ``json_serialize_sql``, `StatementFilters.covers` says False.

    Examples
    --------
    >>> from tfsql.duckdb.rewrite import tokenize
    >>> sql = "WITH c AS (SELECT * FROM t) SELECT 'WHERE a = 1' FROM c JOIN u ON c.k = u.k QUALIFY b > 2"
    >>> sorted(statement_filters(sql, tokenize(sql)).columns)
    ['b', 'k']
    >>> sql = "CREATE TABLE n AS SELECT * FROM t WHERE day >= 2"
    >>> statement_filters(sql, tokenize(sql)).columns
    frozenset({'day'})
    """
    tree = parse_query(text)
    if tree is not None:
        return StatementFilters(frozenset(_filtered_columns(tree)), ((0, len(text)),))
    closes = enclosing_closes(tokens)
    columns: set[str] = set()
    spans: list[tuple[int, int]] = []
    parsed_until = 0
    for i, token in enumerate(tokens):
        if token.start < parsed_until or not token.is_word(*_QUERY_STARTS):
            continue
        close = closes[i]
        end = len(text) if close is None else close
        tree = parse_query(text[token.start : end])
        if tree is not None:
            columns |= _filtered_columns(tree)
            spans.append((token.start, end))
            parsed_until = end
    return StatementFilters(frozenset(columns), tuple(spans))


def parse_query(text: str) -> Any:
    """DuckDB's parse of the SELECT statement ``text`` (``json_serialize_sql``, as JSON
    objects), or None when ``text`` is not one SELECT statement DuckDB parses, or this
    DuckDB has no ``json_serialize_sql``.

    Parsing binds nothing: the tables and functions named need not exist. It runs on a
    private in-memory connection, so a caller's open result or failed transaction is
    left alone.

    Examples
    --------
    >>> parse_query("SELECT * FROM tfrecord_scan('a/*') WHERE split = 'train'")["statements"][0]["node"]["type"]
    'SELECT_NODE'
    >>> parse_query("INSERT INTO t SELECT 1") is None
    True
    """
    global _parser
    with _parser_lock:
        try:
            if _parser is None:
                _parser = duckdb.connect(config={"threads": 1})
            row = _parser.execute("SELECT json_serialize_sql(?)", [text]).fetchone()
        except duckdb.Error:  # no json_serialize_sql in this DuckDB (no json extension)
            return None
    tree = json.loads(row[0]) if row and row[0] is not None else None
    if not isinstance(tree, dict) or tree.get("error") or len(tree.get("statements") or ()) != 1:
        return None
    return tree


def _filtered_columns(tree: Any) -> set[str]:
    """The column names in the filters anywhere in a parse tree: the ``WHERE`` /
    ``HAVING`` / ``QUALIFY`` of every SELECT node and the ``ON`` / ``USING`` of every join."""
    found: set[str] = set()
    for node in _objects(tree):
        filters = [node.get(key) for key in _FILTER_CLAUSES]
        if node.get("type") == "JOIN":
            filters.append(node.get("condition"))
            found |= {str(name).lower() for name in node.get("using_columns") or ()}
        for expression in filters:
            if expression is not None:
                found |= _column_names(expression)
    return found


def _column_names(expression: Any) -> set[str]:
    """Every column an expression tree names (the last part of each, lower case)."""
    return {
        str(node["column_names"][-1]).lower()
        for node in _objects(expression)
        if node.get("class") == "COLUMN_REF" and isinstance(node.get("column_names"), list) and node["column_names"]
    }


def _objects(tree: Any) -> Iterator[dict]:
    """Every JSON object in a parse tree, at any depth."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            yield node
            stack.extend(node.values())
