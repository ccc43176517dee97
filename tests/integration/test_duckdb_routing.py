"""tfsql.connect()'s route for a ``tfrecord_scan`` call over partitioned files, decided by
DuckDB's parse of the statement (`tfsql.duckdb.filters`), not by spotting a keyword.

The data: a hive directory ``p=1`` / ``p=2`` whose ``p=2`` file is corrupt. A query that
filters on ``p = 1`` succeeds only when the Arrow path pruned ``p=2`` unopened; the
extension's scan (no filter pushdown in DuckDB's C API) reads every file and meets the
corrupt one. ``EXPLAIN`` names the scan that ran: ``TFRECORD_SCAN`` for the extension.
"""

from __future__ import annotations

import glob
from pathlib import Path

import pyarrow as pa
import pytest

import tfsql
import tfsql.duckdb.filters
from tfsql.duckdb.extension import extension_available

pytestmark = pytest.mark.skipif(not extension_available(), reason="this tfsql was built without its DuckDB extension")

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
    assert connection.native
    yield connection
    connection.close()


def _scan_function(con, query: str) -> str:
    plan = "".join(str(row[1]) for row in con.sql("EXPLAIN " + query).fetchall())
    return "extension" if "TFRECORD_SCAN" in plan else "arrow"


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


NATIVE = {
    "filter on a data column": "SELECT x FROM {t} WHERE x > 1",
    "where in a string": "SELECT x, 'WHERE p = 1' AS s FROM {t}",
    "where in an unrelated subquery": "SELECT x, (SELECT count(*) FROM range(3) WHERE range > 0) AS n FROM {t}",
    "partition column outside a filter": "SELECT p, count(*) FROM {t} GROUP BY p ORDER BY p",
}


@pytest.mark.parametrize("name", NATIVE)
def test_a_statement_not_filtering_on_a_partition_column_runs_in_the_extension(con, hive, name):
    query = NATIVE[name].format(t=hive["good"])
    assert _scan_function(con, query) == "extension"
    with tfsql.connect(extension=False) as arrow:
        assert sorted(con.sql(query).fetchall()) == sorted(arrow.sql(query).fetchall())


def test_a_partition_filter_takes_the_arrow_path_with_the_same_rows(con, hive):
    query = f"SELECT x, p FROM {hive['good']} WHERE p = 2"
    assert _scan_function(con, query) == "arrow"
    assert sorted(con.sql(query).fetchall()) == [(3, 2), (4, 2)]
    assert sorted(con.duckdb_connection.sql(query).fetchall()) == [(3, 2), (4, 2)]  # the extension's own


def test_without_json_serialize_sql_a_partitioned_scan_takes_the_arrow_path(con, hive, monkeypatch):
    """A DuckDB without the json extension cannot say what a statement filters: a call
    over partitioned files then takes the Arrow path, which prunes whatever it filters."""
    import duckdb

    class NoJson:
        def execute(self, *args):
            raise duckdb.CatalogException("Catalog Error: Scalar Function with name json_serialize_sql does not exist!")

    monkeypatch.setattr(tfsql.duckdb.filters, "_parser", NoJson())
    query = f"SELECT x FROM {hive['good']} WHERE x > 1"
    assert _scan_function(con, query) == "arrow"
    assert sorted(con.sql(query).fetchall()) == [(2,), (3,), (4,)]
    unpartitioned = f"SELECT count(*) FROM tfrecord_scan('{hive['out']}-plain', {SCHEMA})"
    tfsql.write_tfrecord(pa.table({"x": [5]}), hive["out"] + "-plain")
    assert _scan_function(con, unpartitioned) == "extension"  # nothing to prune: the parse is not asked
