"""tfsql.duckdb.filters: the columns a statement's filters name, by DuckDB's parser."""

from __future__ import annotations

import pytest

from tfsql.duckdb.filters import parse_query, statement_filters
from tfsql.duckdb.rewrite import tokenize

CALL = "tfrecord_scan('d', hive_partitioning := true)"

CASES = {
    "where": (f"SELECT * FROM {CALL} WHERE p = 1", {"p"}),
    "no filter": (f"SELECT p, count(*) FROM {CALL} GROUP BY p", set()),
    "keyword in a string": (f"SELECT 'WHERE p = 1' FROM {CALL}", set()),
    "keyword in a comment": (f"SELECT 1 FROM {CALL} -- WHERE p = 1", set()),
    "qualified and quoted": (f'SELECT * FROM {CALL} t WHERE t."Split" = ?', {"split"}),
    "cte": (f"WITH c AS (SELECT * FROM {CALL} WHERE a > 0) SELECT * FROM c", {"a"}),
    "outer filter": (f"SELECT * FROM (SELECT * FROM {CALL}) WHERE b IS NULL", {"b"}),
    "having and qualify": (
        f"SELECT p, row_number() OVER () AS r FROM {CALL} GROUP BY p HAVING p > 0 QUALIFY r < 3",
        {"p", "r"},
    ),
    "join on": (f"SELECT * FROM {CALL} t JOIN u ON t.k = u.k", {"k"}),
    "join using": (f'SELECT * FROM {CALL} t JOIN u USING (k, "L")', {"k", "l"}),
    "union": (f"SELECT 1 UNION ALL SELECT 2 FROM {CALL} WHERE q", {"q"}),
    "from first": (f"FROM {CALL} SELECT x WHERE y = 2", {"y"}),
    "create table as": (f"CREATE TABLE n AS SELECT * FROM {CALL} WHERE p = 1", {"p"}),
    "create or replace temp table as with": (
        f"CREATE OR REPLACE TEMP TABLE n AS WITH c AS (FROM {CALL}) SELECT * FROM c WHERE p = 1",
        {"p"},
    ),
    "insert select": (f"INSERT INTO n (x) SELECT x FROM {CALL} WHERE p = 1", {"p"}),
    "copy": (f"COPY (SELECT * FROM {CALL} WHERE p = 1) TO 'out.tfrecord' (FORMAT tfrecord)", {"p"}),
    "explain": (f"EXPLAIN ANALYZE SELECT * FROM {CALL} WHERE p = 1", {"p"}),
    "non-ASCII before": (f"SELECT 'São Paulo' AS c FROM {CALL} WHERE p = 1", {"p"}),
}


@pytest.mark.parametrize("name", CASES)
def test_columns_the_filters_name(name):
    sql, columns = CASES[name]
    found = statement_filters(sql, tokenize(sql))
    assert found.columns == columns
    assert found.covers(sql.index("tfrecord_scan"))


def test_a_query_that_does_not_parse_is_not_covered():
    sql = f"DESCRIBE {CALL}"  # valid only once tfsql rewrites the call
    found = statement_filters(sql, tokenize(sql))
    assert found.columns == frozenset() and found.spans == ()
    assert not found.covers(sql.index("tfrecord_scan"))


def test_only_the_parsed_query_is_covered():
    sql = f"COPY (SELECT * FROM {CALL} WHERE p = 1) TO 'x.csv'"
    found = statement_filters(sql, tokenize(sql))
    assert [sql[start:end] for start, end in found.spans] == [f"SELECT * FROM {CALL} WHERE p = 1"]
    assert not found.covers(sql.index("TO 'x.csv'"))


def test_parse_query_refuses_what_is_not_one_select():
    assert parse_query("SELECT 1")["statements"][0]["node"]["type"] == "SELECT_NODE"
    for text in ["INSERT INTO t SELECT 1", "SELECT 1; SELECT 2", "SELEC 1", ""]:
        assert parse_query(text) is None, text


def test_a_forked_child_parses_on_its_own_connection():
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork on this platform")
    assert parse_query("SELECT 1") is not None  # the parent's connection exists
    context = multiprocessing.get_context("fork")
    with context.Pool(1) as pool:
        result = pool.apply_async(statement_filters, (CASES["where"][0], tokenize(CASES["where"][0])))
        assert result.get(timeout=60).columns == {"p"}
