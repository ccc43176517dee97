"""Every statement through `tfsql.connect()` leaves the connection as plain DuckDB leaves
it after the same statement over Parquet: a statement run after it works (or fails) the
same way, and the first statement's result fetches the same rows.

DuckDB 2.x keeps a query's result open on the connection after ``execute()`` until it is
fetched to its end (a statement other than a query is finished at once), and refuses other
work meanwhile; DuckDB 1.4 drops the open result instead. Runs on both (run the suite once
in an environment with ``duckdb==1.4.*``).
"""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tfsql
from duckdb_copy_helpers import V2_BUILD, needs_v2_copy

TABLE = pa.table({"id": [1, 2, 3], "p": ["a", "b", "a"]})

# Each pair: the statement through tfsql.connect() on TFRecord data, and the same
# statement in plain DuckDB on Parquet data. {src}/{out} are filled in per test.
STATEMENTS = {
    "copy_to_file": (
        "COPY (SELECT * FROM tfrecord_scan('{src}')) TO '{out}.tfrecord' (FORMAT tfrecord)",
        "COPY (SELECT * FROM read_parquet('{src}')) TO '{out}.parquet' (FORMAT parquet)",
    ),
    "copy_partitioned": (
        "COPY (SELECT * FROM tfrecord_scan('{src}')) TO '{out}' (FORMAT tfrecord, PARTITION_BY (p))",
        "COPY (SELECT * FROM read_parquet('{src}')) TO '{out}' (FORMAT parquet, PARTITION_BY (p))",
    ),
    "copy_return_files": (
        "COPY (SELECT 1 AS a) TO '{out}.tfrecord' (FORMAT tfrecord, RETURN_FILES)",
        "COPY (SELECT 1 AS a) TO '{out}.parquet' (FORMAT parquet, RETURN_FILES)",
    ),
    "create_view": (
        "CREATE VIEW v AS SELECT * FROM tfrecord_scan('{src}')",
        "CREATE VIEW v AS SELECT * FROM read_parquet('{src}')",
    ),
    "create_table": (
        "CREATE TABLE t AS SELECT * FROM tfrecord_scan('{src}')",
        "CREATE TABLE t AS SELECT * FROM read_parquet('{src}')",
    ),
    "select": (
        "SELECT id FROM tfrecord_scan('{src}') ORDER BY id",
        "SELECT id FROM read_parquet('{src}') ORDER BY id",
    ),
    "select_arrow_path": (  # schema := takes the Arrow path of tfsql.connect()
        "SELECT id FROM tfrecord_scan('{src}', schema := {{'id': 'BIGINT'}}) ORDER BY id",
        "SELECT id FROM read_parquet('{src}') ORDER BY id",
    ),
    "select_empty": (
        "SELECT id FROM tfrecord_scan('{src}') WHERE id > 10",
        "SELECT id FROM read_parquet('{src}') WHERE id > 10",
    ),
    "describe": (
        "DESCRIBE SELECT id FROM tfrecord_scan('{src}')",
        "DESCRIBE SELECT id FROM read_parquet('{src}')",
    ),
    "script": (
        "CREATE TABLE s AS SELECT * FROM tfrecord_scan('{src}'); SELECT count(*) FROM s",
        "CREATE TABLE s AS SELECT * FROM read_parquet('{src}'); SELECT count(*) FROM s",
    ),
    "copy_after_create": (
        "CREATE TABLE c AS SELECT * FROM tfrecord_scan('{src}'); COPY c TO '{out}.tfrecord' (FORMAT tfrecord)",
        "CREATE TABLE c AS SELECT * FROM read_parquet('{src}'); COPY c TO '{out}.parquet' (FORMAT parquet)",
    ),
}


#: COPY from plain columns is the V2 build's (DuckDB 2); DuckDB 1.4 has no COPY functions
#: for extensions and the v1 build of 1.5.6 takes one STRUCT column (docs/duckdb-extension.md).
if not V2_BUILD:
    STATEMENTS = {k: v for k, v in STATEMENTS.items() if not k.startswith("copy")}


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    base = tmp_path_factory.mktemp("state")
    tfsql.write_tfrecord(TABLE, str(base / "src.tfrecord"))
    pq.write_table(TABLE, base / "src.parquet")
    return {"tfrecord": str(base / "src.tfrecord"), "parquet": str(base / "src.parquet")}


def _outcome(action):
    try:
        return ("ok", action())
    except duckdb.Error as err:
        return ("error", type(err).__name__)


def _run_pair(kind, first, second, sources, tmp_path):
    tfsql_sql, plain_sql = STATEMENTS[kind]
    outcomes = []
    for con, text, src, out in (
        (tfsql.connect(), tfsql_sql, sources["tfrecord"], tmp_path / "tfsql-out"),
        (duckdb.connect(), plain_sql, sources["parquet"], tmp_path / "plain-out"),
    ):
        with con:
            getattr(con, first)(text.format(src=src, out=out))
            after = _outcome(lambda: second(con))
            outcomes.append(after)
    return outcomes


SECOND = {
    "sql": lambda con: con.sql("SELECT 42").fetchall(),
    "execute": lambda con: con.execute("SELECT 42").fetchall(),
    "table_function": lambda con: con.sql("SELECT count(*) FROM range(3)").fetchall(),
}


@pytest.mark.parametrize("second", sorted(SECOND))
@pytest.mark.parametrize("kind", sorted(STATEMENTS))
def test_a_statement_after_execute_behaves_as_in_plain_duckdb(kind, second, sources, tmp_path):
    ours, plain = _run_pair(kind, "execute", SECOND[second], sources, tmp_path)
    assert ours == plain


@pytest.mark.parametrize("kind", sorted(STATEMENTS))
def test_a_statement_after_sql_behaves_as_in_plain_duckdb(kind, sources, tmp_path):
    ours, plain = _run_pair(kind, "sql", SECOND["sql"], sources, tmp_path)
    assert ours == plain


@pytest.mark.parametrize(
    "kind",
    [k for k in ["copy_to_file", "copy_partitioned", "select", "select_arrow_path", "script"] if k in STATEMENTS],
)
def test_the_result_of_execute_fetches_as_in_plain_duckdb(kind, sources, tmp_path):
    tfsql_sql, plain_sql = STATEMENTS[kind]
    with tfsql.connect() as ours, duckdb.connect() as plain:
        got = ours.execute(tfsql_sql.format(src=sources["tfrecord"], out=tmp_path / "a")).fetchall()
        want = plain.execute(plain_sql.format(src=sources["parquet"], out=tmp_path / "b")).fetchall()
    assert got == want


@needs_v2_copy
def test_copy_then_select_on_one_connection(tmp_path):
    # The report of issue 23, as written.
    with tfsql.connect() as con:
        con.execute(f"COPY (SELECT 1 AS a) TO '{tmp_path / 'a.tfrecord'}' (FORMAT tfrecord)")
        assert con.sql("SELECT 42").fetchall() == [(42,)]
        assert con.execute("SELECT 42").fetchall() == [(42,)]


@needs_v2_copy
def test_copy_result_has_the_count_column_and_files(tmp_path):
    with tfsql.connect() as con:
        con.execute(f"COPY (SELECT 1 AS a) TO '{tmp_path / 'a.tfrecord'}' (FORMAT tfrecord, RETURN_FILES)")
        assert [column[0] for column in con.description] == ["Count", "Files"]
        assert con.fetchall() == [(1, [str(tmp_path / "a.tfrecord")])]


@needs_v2_copy
def test_copy_after_an_unfinished_query_works_as_in_plain_duckdb(sources, tmp_path):
    with tfsql.connect() as con:
        con.execute("SELECT * FROM range(10)")  # left open on DuckDB 2.x
        con.execute(f"COPY (SELECT 1 AS a) TO '{tmp_path / 'a.tfrecord'}' (FORMAT tfrecord)")
        assert con.fetchall() == [(1,)]
