"""Partition pruning in plain DuckDB: the V2 extension's filter pushdown prunes a
``WHERE`` on a partition column wherever it stands, decided by DuckDB's planner.

The data: a hive directory ``p=1`` / ``p=2`` whose ``p=2`` file is corrupt. A query that
filters on ``p = 1`` succeeds only when the scan pruned ``p=2`` unopened. The v1 build
(DuckDB 1.x) has no filter pushdown: it reads every file (docs/duckdb-extension.md).
"""

from __future__ import annotations

import glob
from pathlib import Path

import pyarrow as pa
import pytest

import tfsql
from tfsql.duckdb.extension import duckdb_extension_path, extension_available

pytestmark = pytest.mark.skipif(
    not extension_available() or "duckdb-v" not in duckdb_extension_path(),
    reason="filter pushdown is the V2 build's (DuckDB 2.x)",
)

SCHEMA = "schema := {'x': 'BIGINT'}"  # no inference: nothing reads a file before the scan


@pytest.fixture(scope="module")
def hive(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("routing")
    table = pa.table({"p": [1, 1, 2, 2], "x": [1, 2, 3, 4]})
    tfsql.write_tfrecord(table, str(root / "good"), partition_by="p")
    tfsql.write_tfrecord(table, str(root / "bad"), partition_by="p")
    (corrupt,) = glob.glob(str(root / "bad" / "p=2" / "*.tfrecord"))
    Path(corrupt).write_bytes(b"\xff" * 20)  # a length whose CRC does not match
    return {
        "good": f"tfrecord_scan('{root / 'good'}', {SCHEMA})",
        "bad": f"tfrecord_scan('{root / 'bad'}', {SCHEMA})",
        "out": str(root / "out"),
    }


@pytest.fixture()
def con():
    connection = tfsql.connect()
    yield connection
    connection.close()


def _plan(con, query: str) -> str:
    return "".join(str(row[1]) for row in con.sql("EXPLAIN " + query).fetchall())


PRUNED = {
    "where": ("SELECT x FROM {t} WHERE p = 1", [(1,), (2,)]),
    "where in a CTE": ("WITH c AS (SELECT * FROM {t} WHERE p = 1) SELECT x FROM c", [(1,), (2,)]),
    "outer where over a CTE": ("WITH c AS (SELECT * FROM {t}) SELECT x FROM c WHERE p = 1", [(1,), (2,)]),
    "outer where over a subquery": ("SELECT x FROM (SELECT * FROM {t}) s WHERE s.p = 1", [(1,), (2,)]),
    "having on the group key": ("SELECT p, sum(x) FROM {t} GROUP BY p HAVING p = 1", [(1, 3)]),
    "quoted column": ('SELECT x FROM {t} WHERE "P" = 1', [(1,), (2,)]),
    "constant term of a join": ("SELECT x FROM {t} t JOIN (VALUES (1)) v(q) ON t.p = 1 AND v.q = 1", [(1,), (2,)]),
}


@pytest.mark.parametrize("name", PRUNED)
def test_a_filter_on_a_partition_column_prunes_wherever_it_stands(con, hive, name):
    template, rows = PRUNED[name]
    assert sorted(con.sql(template.format(t=hive["bad"])).fetchall()) == rows
    assert sorted(con.sql(template.format(t=hive["good"])).fetchall()) == rows


def test_create_table_as_with_a_partition_filter_prunes(con, hive):
    con.execute(f"CREATE TABLE kept AS SELECT x FROM {hive['bad']} WHERE p = 1")
    assert con.sql("SELECT x FROM kept ORDER BY x").fetchall() == [(1,), (2,)]


def test_insert_select_with_a_partition_filter_prunes(con, hive):
    con.execute("CREATE TABLE kept (x BIGINT)")
    con.execute(f"INSERT INTO kept SELECT x FROM {hive['bad']} WHERE p = 1")
    assert con.sql("SELECT x FROM kept ORDER BY x").fetchall() == [(1,), (2,)]


@pytest.mark.parametrize("suffix", [".csv", ".tfrecord"])
def test_copy_of_a_query_with_a_partition_filter_prunes(con, hive, suffix):
    out = hive["out"] + suffix
    con.execute(f"COPY (SELECT x FROM {hive['bad']} WHERE p = 1 ORDER BY x) TO '{out}'")
    assert sorted(con.sql(f"SELECT x FROM '{out}'").fetchall()) == [(1,), (2,)]


UNFILTERED = {
    "filter on a data column": ("SELECT x FROM {t} WHERE x > 1", [(2,), (3,), (4,)]),
    "where in a string": (
        "SELECT x, 'WHERE p = 1' AS s FROM {t} WHERE p = 1",
        [(1, "WHERE p = 1"), (2, "WHERE p = 1")],
    ),
    "partition column outside a filter": ("SELECT p, count(*) FROM {t} GROUP BY p ORDER BY p", [(1, 2), (2, 2)]),
}


@pytest.mark.parametrize("name", UNFILTERED)
def test_every_statement_runs_in_the_extension(con, hive, name):
    template, rows = UNFILTERED[name]
    query = template.format(t=hive["good"])
    assert "TFRECORD_SCAN" in _plan(con, query).upper()
    assert sorted(con.sql(query).fetchall()) == rows
