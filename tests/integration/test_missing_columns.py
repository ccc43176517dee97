"""``schema=`` is judged the same way in every front end: a named feature that no sampled
record holds raises, naming it, unless ``missing_columns="insert"`` (in each front end's
spelling) reads it as null. It used to read as all-null silently in tfsql.read_tfrecord,
tfsql.dataset and tfrecord_scan(schema := {...})."""

from __future__ import annotations

import pyarrow as pa
import pytest

import tfsql
import tfsql.duckdb
from tfsql.cli import main

duckdb = pytest.importorskip("duckdb")

TYPO = {"id": pa.int64(), "idd": pa.int64()}
# The extension reports its errors (tfrecord_last_error()) from DuckDB 1.5.6 on
REPORTS = tuple(int(x) for x in duckdb.__version__.split(".")[:3]) >= (1, 5, 6)


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    target = str(tmp_path_factory.mktemp("missing") / "a.tfrecord")
    tfsql.write_tfrecord(pa.table({"id": [1, 2, 3]}), target)
    return target


def test_python_dataset_and_read_tfrecord_name_the_missing_column(path):
    for read in (tfsql.dataset, tfsql.read_tfrecord):
        with pytest.raises(
            tfsql.SchemaError, match=r"schema= names 'idd', which is in none of the sampled records"
        ) as info:
            read(path, schema=TYPO)
        assert info.value.feature == "idd"
        assert "missing_columns='insert'" in str(info.value)
    table = tfsql.read_tfrecord(path, schema=TYPO, missing_columns="insert")
    assert table.to_pylist() == [{"id": 1, "idd": None}, {"id": 2, "idd": None}, {"id": 3, "idd": None}]


@pytest.mark.parametrize("front_end", ["native", "connect"])
def test_sql_names_the_missing_column(front_end, path):
    if front_end == "native":
        con = tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))
    else:
        con = tfsql.connect()
    schema = "{'id': 'BIGINT', 'idd': 'BIGINT'}"
    # a Binder Error (the bind's refusal) in both: connect() is plain DuckDB; the fields
    # are in tfrecord_last_error() where the extension keeps reports (DuckDB >= 1.5.6)
    with pytest.raises(duckdb.BinderException, match=r"schema := names 'idd', which is in none of the sampled records"):
        con.sql(f"SELECT * FROM tfrecord_scan('{path}', schema := {schema})").fetchall()
    if REPORTS:
        assert con.sql("SELECT reason, feature FROM tfrecord_last_error()").fetchall() == [("missing", "idd")]
    query = f"SELECT count(idd), count(*) FROM tfrecord_scan('{path}', schema := {schema}, missing_columns := 'insert')"
    assert con.sql(query).fetchall() == [(0, 3)]


def test_polars_names_the_missing_column(path):
    pl = pytest.importorskip("polars")
    import tfsql.polars  # noqa: F401

    with pytest.raises(tfsql.SchemaError, match=r"schema= names 'idd'"):
        pl.scan_tfrecord(path, schema=TYPO)
    assert pl.scan_tfrecord(path, schema=TYPO, missing_columns="insert").collect()["idd"].null_count() == 3


def test_cli_names_the_missing_column(path, capsys):
    assert main(["head", path, "--schema", "id BIGINT, idd BIGINT"]) == 1
    assert "names 'idd', which is in none of the sampled records" in capsys.readouterr().err
    assert main(["head", path, "--schema", "id BIGINT, idd BIGINT", "--missing-columns", "insert"]) == 0


def test_spark_spelling_reaches_the_dataset():
    pytest.importorskip("pyspark")
    import tfsql.spark

    assert tfsql.spark.dataset_options({"missingColumns": "insert"})["missing_columns"] == "insert"
    assert tfsql.spark.dataset_options({"missingColumns": "raise"})["missing_columns"] == "raise"


def test_spark_reads_a_field_no_record_holds_as_null_by_default():
    """Issue 33 item 5: Spark's convention (its own readers, spark-tfrecord) is null for a
    ``.schema(...)`` field no record holds; Python and Polars keep the strict default."""
    pytest.importorskip("pyspark")
    import tfsql.spark

    assert tfsql.spark.dataset_options({})["missing_columns"] == "insert"
