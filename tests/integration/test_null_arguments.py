"""NULL for any parameter of tfrecord_scan is a Binder Error naming the parameter, in
plain DuckDB with the extension loaded and through tfsql.connect() (it was "INTERNAL
Error: Calling StringValue::Get on a NULL value")."""

from __future__ import annotations

import pyarrow as pa
import pytest

import tfsql

duckdb = pytest.importorskip("duckdb")

NULL_PARAMETERS = [
    "compression",
    "record_type",
    "on_corrupt",
    "lists",
    "glob",
    "ignore_errors",
    "verify_checksums",
    "hive_partitioning",
    "infer_sample",
    "infer_files",
]


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    target = str(tmp_path_factory.mktemp("nulls") / "a.tfrecord")
    tfsql.write_tfrecord(pa.table({"id": [1, 2]}), target)
    return target


def _native():
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    return tfsql.load_extension(con)


@pytest.mark.parametrize("front_end", ["native", "connect"])
@pytest.mark.parametrize("parameter", NULL_PARAMETERS)
def test_null_parameter_is_a_binder_error_naming_it(front_end, parameter, path):
    con = _native() if front_end == "native" else tfsql.connect()
    with pytest.raises(duckdb.BinderException, match=rf"parameter {parameter} is NULL; give it a value"):
        con.sql(f"SELECT * FROM tfrecord_scan('{path}', {parameter} := NULL)").fetchall()


@pytest.mark.parametrize("front_end", ["native", "connect"])
def test_null_column_type_in_schema_is_a_binder_error_naming_it(front_end, path):
    con = _native() if front_end == "native" else tfsql.connect()
    with pytest.raises(duckdb.BinderException, match=r"column 'id' of schema has type NULL; give its type"):
        con.sql(f"SELECT * FROM tfrecord_scan('{path}', schema := {{'id': NULL}})").fetchall()


@pytest.mark.parametrize("front_end", ["native", "connect"])
def test_values_still_read(front_end, path):
    con = _native() if front_end == "native" else tfsql.connect()
    assert con.sql(f"SELECT id FROM tfrecord_scan('{path}', infer_sample := 10) ORDER BY id").fetchall() == [
        (1,),
        (2,),
    ]
