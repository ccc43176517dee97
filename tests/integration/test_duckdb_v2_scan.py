"""tfrecord_scan through the extension built on DuckDB 2's V2 C API, where it differs in
mechanism from the v1 build but not in behaviour.

- Named parameters: the V2 API hands a parameter the call left out to the bind as its
  registered default, so the defaults are values no one types and an explicit NULL is
  refused naming its parameter, as on v1; a BOOLEAN parameter (registered untyped, since
  BOOLEAN has no spare value) takes what DuckDB's cast to BOOLEAN takes, with v1's error.
- The scan's progress (DuckDB's progress bar, ``query_progress()``): the bytes of its
  files read so far.
- The cardinality estimate: every file's index sidecar gives the exact row count, shown
  by EXPLAIN.

Plain ``duckdb.connect()`` and ``LOAD`` of each build; skipped where no V2 build exists for
this duckdb.
"""

from __future__ import annotations

import re

import duckdb
import pyarrow as pa
import pytest

import tfsql
from tfsql.duckdb.extension import duckdb_extension_path, v2_extension_path
from tfsql.record_index import write_index

V2 = v2_extension_path(duckdb.__version__)
pytestmark = pytest.mark.skipif(V2 is None, reason=f"no V2 extension built for duckdb {duckdb.__version__}")


def connect(build: str, **config: str) -> duckdb.DuckDBPyConnection:
    path = V2 if build == "v2" else duckdb_extension_path("1.4.5")  # the v1 build
    con = duckdb.connect(config={"allow_unsigned_extensions": "true", **config})
    con.sql(f"LOAD '{path}'")
    return con


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("v2scan")
    for k in range(3):
        tfsql.write_tfrecord(pa.table({"id": list(range(100 * k, 100 * k + 100 + k))}), str(root / f"p{k}.tfrecord"))
    return root


# --------------------------------------------------------------------------------------
# Named parameters: given or left out, as on v1
# --------------------------------------------------------------------------------------

BOOLEAN_VALUES = ["true", "false", "1", "0", "2", "0.4", "'yes'", "'N'", "'T'", "'1'"]


@pytest.mark.parametrize("value", BOOLEAN_VALUES)
def test_a_boolean_parameter_takes_what_v1_takes(files, value):
    # the checksums are sound either way: the rows show the call bound
    sql = f"SELECT count(*) FROM tfrecord_scan('{files}/p0.tfrecord', verify_checksums := {value})"
    assert connect("v2").sql(sql).fetchall() == connect("v1").sql(sql).fetchall() == [(100,)]


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("'x'", "Could not convert string 'x' to BOOL"),
        ("[1]", r"Unimplemented type for cast \(INTEGER\[\] -> BOOLEAN\)"),
    ],
)
def test_a_boolean_parameter_refuses_what_v1_refuses_with_v1s_message(files, value, why):
    sql = f"SELECT * FROM tfrecord_scan('{files}/p0.tfrecord', glob := {value})"
    for build in ("v1", "v2"):
        with pytest.raises(duckdb.InvalidInputException, match=rf'named parameter "glob" of type BOOLEAN: {why}'):
            connect(build).sql(sql).fetchall()


@pytest.mark.parametrize("given", ["NULL", "NULL::BOOLEAN", "NULL::VARCHAR"])
def test_a_typed_null_is_refused_too(files, given):
    with pytest.raises(duckdb.BinderException, match=r"parameter glob is NULL; give it a value"):
        connect("v2").sql(f"SELECT * FROM tfrecord_scan('{files}/p0.tfrecord', glob := {given})").fetchall()


def test_left_out_parameters_take_their_defaults(files):
    con = connect("v2")
    assert con.sql(f"SELECT count(*), sum(id) FROM tfrecord_scan('{files}/*.tfrecord')").fetchall() == [
        (303, sum(range(100)) + sum(range(100, 201)) + sum(range(200, 302)))
    ]
    # given values are still read: a count, a choice, a boolean
    sql = (
        f"SELECT count(*) FROM tfrecord_scan('{files}/p1.tfrecord', infer_sample := 5, lists := 'auto', glob := false)"
    )
    assert con.sql(sql).fetchall() == [(101,)]
    # tfrecord_metadata's count := NULL is false, as on v1
    for build in ("v1", "v2"):
        rows = connect(build).sql(f"SELECT records FROM tfrecord_metadata('{files}/p1.tfrecord', count := NULL)")
        assert rows.fetchall() == [(None,)]


# --------------------------------------------------------------------------------------
# Progress
# --------------------------------------------------------------------------------------


def test_progress_is_the_bytes_read(tmp_path):
    for k in range(4):
        tfsql.write_tfrecord(pa.table({"id": list(range(200_000))}), str(tmp_path / f"p{k}.tfrecord"))
    sql = f"SELECT id FROM tfrecord_scan('{tmp_path}/*.tfrecord')"
    seen = {}
    for build in ("v1", "v2"):
        con = connect(build, threads="1")
        con.sql("SET enable_progress_bar = true")
        con.sql("SET enable_progress_bar_print = false")
        result = con.execute(sql)  # a streaming result: the scan pauses when its buffer is full
        assert result.fetchone() == (0,)
        first = con.query_progress()
        result.fetchmany(300_000)
        seen[build] = (first, con.query_progress())
        assert len(result.fetchall()) == 800_000 - 300_001
    # the v1 API has no progress callback: DuckDB reports none
    assert seen["v1"] == (0.0, 0.0)
    first, later = seen["v2"]
    assert 0.0 < first < later < 100.0


# --------------------------------------------------------------------------------------
# Cardinality
# --------------------------------------------------------------------------------------


def estimated_rows(con: duckdb.DuckDBPyConnection, sql: str) -> int:
    plan = con.sql(f"EXPLAIN {sql}").fetchall()[0][1]
    (rows,) = re.findall(r"~([0-9,]+) rows?", plan)
    return int(rows.replace(",", ""))


def test_index_sidecars_give_the_exact_cardinality(tmp_path):
    for k in range(3):
        tfsql.write_tfrecord(pa.table({"id": list(range(100 + k))}), str(tmp_path / f"p{k}.tfrecord"))
    sql = f"SELECT * FROM tfrecord_scan('{tmp_path}/*.tfrecord', schema := {{'id': 'BIGINT'}})"
    con = connect("v2")
    assert estimated_rows(con, sql) == 1  # a given schema samples nothing: no estimate
    for k in range(2):
        write_index(str(tmp_path / f"p{k}.tfrecord"))
    assert estimated_rows(connect("v2"), sql) == 1  # one file without a sidecar: no count
    write_index(str(tmp_path / "p2.tfrecord"))
    for build in ("v1", "v2"):
        assert estimated_rows(connect(build), sql) == 303
