"""Filter pushdown of the V2 extension: predicates on the hive partition columns and the
filename column prune files before they are opened, with exactly the rows DuckDB's own
filter above the scan gives (TFSQL_FILTER_PUSHDOWN=0 refuses every predicate)."""

from __future__ import annotations

import os
import re

import duckdb
import pyarrow as pa
import pytest

import tfsql
from tfsql.duckdb.extension import v2_extension_path

pytestmark = pytest.mark.skipif(
    v2_extension_path(duckdb.__version__) is None, reason="no V2 build of the extension for this DuckDB"
)


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """d/p=<0..9>/q=<a|b|__HIVE_DEFAULT_PARTITION__>/part.tfrecord, 5 rows each: x = 10p + i."""
    root = tmp_path_factory.mktemp("hive")
    for p in range(10):
        for q in ("a", "b", "__HIVE_DEFAULT_PARTITION__"):
            leaf = root / f"p={p}" / f"q={q}"
            leaf.mkdir(parents=True)
            tfsql.write_tfrecord(pa.table({"x": [10 * p + i for i in range(5)]}), str(leaf / "part.tfrecord"))
    return root


@pytest.fixture(scope="module")
def con():
    before = os.environ.get("TFSQL_DUCKDB_API")
    os.environ["TFSQL_DUCKDB_API"] = "v2"
    connection = tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))
    yield connection
    connection.close()
    if before is None:
        os.environ.pop("TFSQL_DUCKDB_API", None)
    else:
        os.environ["TFSQL_DUCKDB_API"] = before


PREDICATES = [
    "p = 1",
    "1 = p",
    "p <> 1",
    "p < 3",
    "3 > p",
    "p <= 3",
    "p > 7",
    "p >= 7",
    "p > 1 AND p < 3",
    "p BETWEEN 2 AND 4",
    "p BETWEEN 2 AND 4 OR q = 'a'",
    "p > 1 AND p <= 3",
    "p >= 2 AND p < 4",
    "q BETWEEN 'a' AND 'b'",
    "q > 'a' AND q < 'b'",
    "p NOT BETWEEN 2 AND 4",
    "p IN (1, 2)",
    "p NOT IN (1, 2)",
    "p IN (1, NULL)",
    "p NOT IN (1, NULL)",
    "p = NULL",
    "q = 'a'",
    "q > 'a'",
    "q IS NULL",
    "q IS NOT NULL",
    "q = 'a' OR p = 3",
    "(q = 'b' AND p < 2) OR p = 9",
    "p = 1.5",
    "p = '2'",
    "p + 1 = 4",
    "x = 3 OR p = 1",
    "x > 40 AND p < 6",
    "filename = '{leaf}'",
    "filename > '{leaf}'",
    "filename LIKE '%p=3%'",
]


def _rows(con, tree, where):
    leaf = str(tree / "p=4" / "q=b" / "part.tfrecord")
    sql = (
        f"SELECT p, q, x, filename FROM tfrecord_scan('{tree}/**', filename := true) "
        f"WHERE {where.format(leaf=leaf)} ORDER BY ALL"
    )
    return con.sql(sql).fetchall()


@pytest.mark.parametrize("where", PREDICATES)
def test_pushed_down_predicates_give_the_rows_duckdb_filtering_gives(con, tree, where, monkeypatch):
    pushed = _rows(con, tree, where)
    monkeypatch.setenv("TFSQL_FILTER_PUSHDOWN", "0")
    assert _rows(con, tree, where) == pushed


def test_typed_answers(con, tree):
    assert len(_rows(con, tree, "p = 1")) == 15
    assert len(_rows(con, tree, "q IS NULL")) == 50
    assert len(_rows(con, tree, "p IN (1, NULL)")) == 15
    assert _rows(con, tree, "p NOT IN (1, NULL)") == []


def _scanned(con, sql) -> int:
    """The rows the tfrecord_scan operator produced, from EXPLAIN ANALYZE."""
    plan = con.sql("EXPLAIN ANALYZE " + sql).fetchall()[0][1]
    scan = plan[plan.index("TFRECORD_SCAN") :]
    return int(re.search(r"(\d+) rows", scan).group(1))


def test_explain_analyze_shows_only_the_matching_files_rows_scanned(con, tree, monkeypatch):
    sql = f"SELECT count(*) FROM tfrecord_scan('{tree}/**') WHERE p = 1"
    assert con.sql(sql).fetchall() == [(15,)]
    assert _scanned(con, sql) == 15
    monkeypatch.setenv("TFSQL_FILTER_PUSHDOWN", "0")
    assert _scanned(con, sql) == 150


@pytest.mark.parametrize(
    ("where", "rows", "scanned"),
    [
        # DuckDB's API shows all of these as one BETWEEN node with bounds 2 and 4 (or 1
        # and 3) and does not say which bounds are inclusive: the scan prunes with the
        # inclusive range and leaves the exact test to DuckDB above it
        ("p BETWEEN 2 AND 4", 45, 45),
        ("p > 2 AND p < 4", 15, 45),
        ("p >= 2 AND p < 4", 30, 45),
        ("p > 1 AND p <= 3", 30, 45),
        ("q BETWEEN 'a' AND 'a'", 50, 50),
        ("p BETWEEN 2 AND 4 OR p = 9", 60, 60),
    ],
)
def test_a_between_prunes_files_with_its_inclusive_range(con, tree, where, rows, scanned, monkeypatch):
    sql = f"SELECT count(*) FROM tfrecord_scan('{tree}/**') WHERE {where}"
    assert con.sql(sql).fetchall() == [(rows,)]
    assert _scanned(con, sql) == scanned
    monkeypatch.setenv("TFSQL_FILTER_PUSHDOWN", "0")
    assert con.sql(sql).fetchall() == [(rows,)]
    assert _scanned(con, sql) == 150
