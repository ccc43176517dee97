"""Round trips keep their types and their emptiness (issue 33, item 3).

Every tfsql writer leaves a column description (``features.json``, `tfsql.description`)
beside a directory's files, and every reader takes the columns, their order and their
types from it: one table holding every Arrow type the README's writing table lists
(plus an all-null column and a ``null`` column), and the same table with 0 rows, go
through each writer and come back through each reader with the same schema and values.
Then: an append with another type is refused naming the column, discovery never reads
the description as data, and TensorFlow (where it is installed) still parses the files.
"""

from __future__ import annotations

import datetime
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tfsql
from tfsql.duckdb.extension import extension_available
from tfsql.schema import decimal_to_float
from round_trip_readers import NEEDS_TF_PYTHON, TF_PYTHON, sql_result
from typed_tables import DUCKDB_COLUMNS, ROWS, as_read, full_table


def assert_same(got: pa.Table, want: pa.Table) -> None:
    """Same schema (names, order, types) and the same values, exactly."""
    assert got.schema.names == want.schema.names
    for name in want.schema.names:
        assert got.schema.field(name).type == want.schema.field(name).type, name
        assert got.column(name).combine_chunks().equals(want.column(name).combine_chunks()), (
            name,
            got.column(name),
            want.column(name),
        )


# --------------------------------------------------------------------------------------
# writers
# --------------------------------------------------------------------------------------


def write_python(table: pa.Table, path: Path) -> pa.Table:
    """Write `table`; return what the writer was given."""
    tfsql.write_tfrecord(table, path)
    return table


def write_cli(table: pa.Table, path: Path) -> pa.Table:
    """``tfsql convert`` from Parquet (which stores date64 as date32 and has no view or
    float16 type of its own: what it reads back is what the command was given)."""
    source = path.parent / (path.name + ".parquet")
    pq.write_table(table, source)
    done = subprocess.run(
        [sys.executable, "-m", "tfsql", "convert", str(source), str(path) + "/"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return pq.read_table(source)


def parquet_round_trip(table: pa.Table, path: Path) -> pa.Table:
    pq.write_table(table, path)
    return pq.read_table(path)


PYTHON_WRITERS = {"write_tfrecord": write_python, "cli": write_cli}


@pytest.fixture(params=[ROWS, 0], ids=["rows", "empty"])
def rows(request) -> int:
    return request.param


@pytest.mark.parametrize("writer", sorted(PYTHON_WRITERS))
def test_every_type_round_trips_through_the_python_readers(tmp_path, writer, rows):
    target = tmp_path / "out"
    want = as_read(PYTHON_WRITERS[writer](full_table(rows), target))
    assert_same(tfsql.read_tfrecord(target), want)
    assert_same(tfsql.dataset(target).to_table(), want)
    assert tfsql.dataset(target).count_rows() == rows
    # the CLI reads it back into Parquet with the same schema
    back = tmp_path / "back.parquet"
    done = subprocess.run(
        [sys.executable, "-m", "tfsql", "convert", str(target), str(back)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert_same(pq.read_table(back), parquet_round_trip(want, tmp_path / "want.parquet"))


# -- Polars --------------------------------------------------------------------------


def polars_table(rows: int) -> pl.DataFrame:
    """The full table's columns Polars holds (it has no float16, decimal256, time32,
    fixed-size binary or fixed-shape tensor type of its own)."""
    table = full_table(rows)
    dropped = ["f16", "dec256", "fsb", "t32", "tensor", "nothing", "sv", "bv", "ts_s", "ts_ms", "d64", "lf32"]
    return pl.from_arrow(table.drop_columns(dropped))  # type: ignore[return-value]


@pytest.mark.parametrize("how", ["namespace", "sink", "write_tfrecord"])
def test_polars_writes_read_back_with_their_dtypes(tmp_path, how, rows):
    df = polars_table(rows)
    target = tmp_path / "out"
    if how == "namespace":
        df.tfrecord.write(target)
    elif how == "sink":
        df.lazy().tfrecord.sink(target)
    else:
        tfsql.write_tfrecord(df, target)
    want = df.with_columns(pl.col("dict").cast(pl.String))  # a dictionary reads back as its values
    for back in (pl.read_tfrecord(target), pl.scan_tfrecord(target).collect()):
        assert back.schema == want.schema
        assert back.equals(want)
    assert_same(tfsql.read_tfrecord(target), as_read(df.to_arrow()))


# -- DuckDB --------------------------------------------------------------------------


def duckdb_source(con: duckdb.DuckDBPyConnection, rows: int) -> None:
    """Table ``src`` of the DuckDB columns (``rows`` of them) and a partition column."""
    selects = ", ".join(f"CAST(({values})[i + 1] AS {t}) AS {name}" for name, (t, values) in DUCKDB_COLUMNS.items())
    con.execute(f"CREATE OR REPLACE TABLE src AS SELECT {selects}, i % 2 AS part FROM range({rows}) r(i)")


def native_connection() -> duckdb.DuckDBPyConnection:
    return tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.lstrip("v").split("-")[0].split(".")[:3])


needs_copy = pytest.mark.skipif(
    not extension_available() or _version(duckdb.__version__) < (1, 5, 6), reason="native COPY needs DuckDB >= 1.5.6"
)

ROW = "{" + ", ".join(f"'{name}': {name}" for name in DUCKDB_COLUMNS) + "}"


def duckdb_readers(target: Path) -> dict[str, tuple[list[str], pa.Table]]:
    """(column types, rows as Arrow) of ``SELECT *`` over `target` through each SQL
    reader, rows in ``i64``/partition order."""
    query = f"SELECT * FROM tfrecord_scan('{target}') ORDER BY part, i64"
    readers = {"tfsql.connect": sql_result(tfsql.connect().sql(query))}
    if extension_available():
        readers["extension"] = sql_result(native_connection().sql(query))
    return readers


def duckdb_expected(con: duckdb.DuckDBPyConnection) -> tuple[list[str], pa.Table]:
    return sql_result(con.sql("SELECT * FROM src ORDER BY part, i64"))


@needs_copy
@pytest.mark.parametrize("writer", ["native", "connect"])
def test_duckdb_copy_round_trips_through_every_sql_reader(tmp_path, writer, rows):
    target = tmp_path / "out"
    con = native_connection() if writer == "native" else tfsql.connect()
    duckdb_source(con, rows)
    con.execute(f"COPY (SELECT {ROW} AS row, part FROM src) TO '{target}' (FORMAT tfrecord, PARTITION_BY (part))")
    want = duckdb_expected(con)
    if rows == 0:  # (tfsql.connect() is plain DuckDB with the extension too)
        # DuckDB calls a COPY function for no file when no row comes: nothing is written
        assert not target.exists() or not any(target.iterdir())
        return
    for reader, got in duckdb_readers(target).items():
        assert got == want, reader
    # the Python readers give the written Arrow types
    table = tfsql.read_tfrecord(target)
    assert table.schema.names == [*DUCKDB_COLUMNS, "part"]
    assert table.schema.field("u8").type == pa.uint8()
    tstz = table.schema.field("tstz").type  # the native COPY says UTC, DuckDB's Arrow its TimeZone
    assert pa.types.is_timestamp(tstz) and tstz.unit == "us" and tstz.tz in ("UTC", "Etc/UTC")
    assert table.schema.field("arr").type == pa.list_(pa.int32(), 2)


@pytest.mark.skipif(not extension_available(), reason="this tfsql was built without its DuckDB extension")
def test_sql_readers_give_a_python_write_its_types(tmp_path, rows):
    """What write_tfrecord wrote, read in SQL: the types DuckDB gives the written Arrow
    types (float16 as FLOAT; decimals as DECIMAL(p, s), over 38 digits as the nearest
    DOUBLE: tests/integration/test_round_trip_matrix.py checks them on both builds)."""
    table = full_table(rows)
    target = tmp_path / "out"
    tfsql.write_tfrecord(table, target)
    reference = as_read(table)
    reference = reference.set_column(  # DuckDB has no float16: FLOAT, the same values
        reference.schema.get_field_index("f16"), "f16", reference.column("f16").cast(pa.float32())
    )
    reference = reference.set_column(  # no decimal over 38 digits: the DOUBLE nearest its value
        reference.schema.get_field_index("dec256"),
        "dec256",
        decimal_to_float(reference.column("dec256").combine_chunks(), pa.float64()),
    )
    plain = duckdb.connect()
    plain.register("src", reference)
    want = sql_result(plain.sql("SELECT * FROM src"))
    assert sql_result(native_connection().sql(f"SELECT * FROM tfrecord_scan('{target}')")) == want
    # tfsql.connect() is plain DuckDB with the extension loaded: the same types
    assert sql_result(tfsql.connect().sql(f"SELECT * FROM tfrecord_scan('{target}')")) == want


# -- Spark: tests/integration/test_spark.py (test_spark_*_its_types), with its session --


# --------------------------------------------------------------------------------------
# the description's rules
# --------------------------------------------------------------------------------------


def test_the_description_is_tfds_features_json(tmp_path):
    tfsql.write_tfrecord(full_table(), tmp_path / "out")
    document = json.loads((tmp_path / "out" / "features.json").read_text())
    features = document["featuresDict"]["features"]
    assert list(features) == full_table().schema.names
    assert features["ts_tz"]["description"] == "tfsql type: timestamp[ms, tz=Europe/Paris]"
    assert features["nothing"]["description"] == "tfsql type: null"  # Arrow's null type
    assert features["tensor"]["tensor"] == {"dtype": "float32", "encoding": "none", "shape": {"dimensions": ["2", "2"]}}
    assert features["u8"]["tensor"]["dtype"] == "uint8"
    assert document["pythonClassName"] == "tensorflow_datasets.core.features.features_dict.FeaturesDict"


def test_an_empty_write_reads_back_as_no_rows_with_its_columns(tmp_path):
    table = pa.table({"id": pa.array([], pa.int64()), "when": pa.array([], pa.timestamp("ns"))})
    result = tfsql.write_tfrecord(table, tmp_path / "out")
    assert result.rows == 0 and len(result.files) == 1 and result.files[0].rows == 0
    back = tfsql.read_tfrecord(tmp_path / "out")
    assert back.num_rows == 0 and back.schema == table.schema


def test_schema_wins_per_column(tmp_path):
    tfsql.write_tfrecord(full_table(), tmp_path / "out")
    back = tfsql.read_tfrecord(tmp_path / "out", schema={"u8": pa.int64(), "all_null": pa.int64()})
    assert back.schema == pa.schema([("u8", pa.int64()), ("all_null", pa.int64())])
    assert back.column("u8").to_pylist() == [0, 255, None]
    # a described column no record holds is no misspelt name
    assert back.column("all_null").to_pylist() == [None, None, None]


def test_an_append_with_another_type_is_refused_naming_the_column(tmp_path):
    target = tmp_path / "out"
    tfsql.write_tfrecord(pa.table({"id": [1], "when": pa.array([1], pa.date32())}), target)
    with pytest.raises(tfsql.SchemaError, match=r"'when' as date32\[day\].*gives it as int64") as caught:
        tfsql.write_tfrecord(pa.table({"id": [2], "when": [2]}), target, mode="append")
    assert caught.value.feature == "when"
    with pytest.raises(tfsql.SchemaError, match="has no column 'extra'"):
        tfsql.write_tfrecord(
            pa.table({"id": [2], "when": pa.array([2], pa.date32()), "extra": [1]}), target, mode="append"
        )
    tfsql.write_tfrecord(pa.table({"id": [3], "when": pa.array([3], pa.date32())}), target, mode="append")
    assert tfsql.read_tfrecord(target).sort_by("id").column("when").to_pylist() == [
        datetime.date(1970, 1, 2),
        datetime.date(1970, 1, 4),
    ]


@needs_copy
def test_a_native_copy_append_with_another_type_is_refused(tmp_path):
    target = tmp_path / "out"
    con = native_connection()
    con.execute(f"COPY (SELECT {{'x': 1::TINYINT}} AS row, 1 AS p) TO '{target}' (FORMAT tfrecord, PARTITION_BY (p))")
    with pytest.raises(duckdb.Error, match='column "x" as int64'):
        con.execute(
            f"COPY (SELECT {{'x': 1::BIGINT}} AS row, 1 AS p) TO '{target}' (FORMAT tfrecord, PARTITION_BY (p), APPEND)"
        )


def test_hive_columns_are_typed_from_the_description(tmp_path):
    table = pa.table({"x": [1, 2], "code": ["007", "010"], "day": pa.array([1, 2], pa.date32())})
    tfsql.write_tfrecord(table, tmp_path / "out", partition_by=["code", "day"])
    back = tfsql.read_tfrecord(tmp_path / "out").sort_by("x")
    assert back.schema == pa.schema([("x", pa.int64()), ("code", pa.string()), ("day", pa.date32())])
    assert back.column("code").to_pylist() == ["007", "010"]
    con = tfsql.connect()
    assert con.sql(f"SELECT code FROM tfrecord_scan('{tmp_path / 'out'}') ORDER BY x").fetchall() == [
        ("007",),
        ("010",),
    ]


def test_a_file_named_directly_reads_its_own_records(tmp_path):
    tfsql.write_tfrecord(pa.table({"u": pa.array([7], pa.uint8())}), tmp_path / "out")
    (part,) = [p for p in (tmp_path / "out").iterdir() if p.name.endswith(".tfrecord")]
    assert tfsql.read_tfrecord(part).schema == pa.schema([("u", pa.int64())])


@pytest.mark.parametrize("source", ["dir", "glob"])
def test_discovery_never_reads_the_description_as_data(tmp_path, source):
    target = tmp_path / "out"
    tfsql.write_tfrecord(pa.table({"x": [1, 2]}), target)
    path = str(target) if source == "dir" else str(target / "*")
    assert [Path(f.path).name for f in tfsql.dataset(path).discovered.files if f.path.endswith(".json")] == []
    assert tfsql.read_tfrecord(path).column("x").to_pylist() == [1, 2]
    if extension_available():
        con = native_connection()
        files = con.sql(f"SELECT file FROM tfrecord_metadata('{path}')").fetchall()
        assert [f for (f,) in files if f.endswith("features.json")] == []
        assert con.sql(f"SELECT x FROM tfrecord_scan('{path}') ORDER BY x").fetchall() == [(1,), (2,)]


def test_a_features_json_beside_foreign_data_is_not_data(tmp_path):
    """A directory holding TFRecord files and some features.json (say TFDS's, without a
    tfsql type) reads its records and infers: the file is metadata, never a record."""
    tfsql.write_tfrecord(pa.table({"x": [1]}), tmp_path / "out")
    for document in (
        {"featuresDict": {"features": {}}},
        {"featuresDict": {"features": {"y": {"tensor": {"dtype": "int64", "shape": {}, "encoding": "none"}}}}},
    ):
        (tmp_path / "out" / "features.json").write_text(json.dumps(document))
        assert tfsql.read_tfrecord(tmp_path / "out").to_pylist() == [{"x": 1}]
        if extension_available():
            con = native_connection()
            assert con.sql(f"SELECT * FROM tfrecord_scan('{tmp_path / 'out'}')").fetchall() == [(1,)]


# --------------------------------------------------------------------------------------
# TensorFlow and TFDS still read the files
# --------------------------------------------------------------------------------------


@pytest.mark.skipif(TF_PYTHON is None, reason=NEEDS_TF_PYTHON)
def test_tensorflow_parses_the_files_with_the_description_shapes(tmp_path):
    table = full_table().select(["i64", "u16", "f32", "s", "l64", "tensor", "fsl", "d32"])
    table = table.filter(pa.array([True, False, True]))  # features of fixed shape need values
    tfsql.write_tfrecord(table, tmp_path / "out")
    script = textwrap.dedent(
        f"""
        import glob, json
        import tensorflow as tf
        doc = json.load(open({str(tmp_path / "out" / "features.json")!r}))
        kinds = {{"int16": tf.int64, "int64": tf.int64, "uint16": tf.int64, "float32": tf.float32, "string": tf.string}}
        spec = {{}}
        for name, feature in doc["featuresDict"]["features"].items():
            tensor = feature["tensor"]
            shape = [int(d) for d in tensor["shape"].get("dimensions", [])]
            if shape[:1] == [-1]:
                spec[name] = tf.io.VarLenFeature(kinds[tensor["dtype"]])
            else:
                spec[name] = tf.io.FixedLenFeature(shape, kinds[tensor["dtype"]])
        files = sorted(glob.glob({str(tmp_path / "out" / "*.tfrecord")!r}))
        rows = [tf.io.parse_single_example(r, spec) for r in tf.data.TFRecordDataset(files)]
        def value(v):
            if isinstance(v, tf.SparseTensor):
                v = tf.sparse.to_dense(v)
            return v.numpy().decode() if v.dtype == tf.string else v.numpy().tolist()
        print(json.dumps([{{k: value(v) for k, v in r.items()}} for r in rows]))
        """
    )
    done = subprocess.run(
        [TF_PYTHON, "-c", script], capture_output=True, text=True, env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = json.loads(done.stdout.strip().splitlines()[-1])
    assert [r["i64"] for r in rows] == [-(2**63), 2**63 - 1]
    assert [r["u16"] for r in rows] == [65535, 1]
    assert [r["s"] for r in rows] == ["a", "ünïcode"]
    assert [r["l64"] for r in rows] == [[1, 2], []]
    assert [r["tensor"] for r in rows] == [[[0.0, 1.0], [2.0, 3.0]], [[8.0, 9.0], [10.0, 11.0]]]
    assert [r["fsl"] for r in rows] == [[1, 2], [3, 4]]
    assert [r["d32"] for r in rows] == [19782, -1]


@pytest.mark.skipif(not extension_available(), reason="the DuckDB extension is not built")
def test_the_extension_refuses_values_the_described_type_cannot_hold(tmp_path):
    """A record whose value does not fit the described column (a file added to the
    directory by another writer) is an error naming the feature, the record and its byte
    offset: out_of_range for an integer type, wrong_count for a fixed-size list."""
    tfsql.write_tfrecord(
        pa.table({"small": pa.array([1], pa.int8()), "pair": pa.array([[1, 2]], pa.list_(pa.int64(), 2))}),
        tmp_path / "out",
    )
    con = native_connection()
    assert con.sql(f"SELECT * FROM tfrecord_scan('{tmp_path / 'out'}')").fetchall() == [(1, (1, 2))]
    other = tmp_path / "other.tfrecord"
    cases = [
        ({"small": [1, 300], "pair": [[1, 2], [1, 2]]}, "small", r"holds 300 .*, which column 'small' \(TINYINT, as"),
        (
            {"small": [1, 1], "pair": [[1, 2], [1, 2, 3]]},
            "pair",
            r"holds 3 values .*, but column 'pair' holds exactly 2",
        ),
    ]
    for columns, feature, why in cases:
        tfsql.write_tfrecord(pa.table(columns), other)
        other.rename(tmp_path / "out" / "added.tfrecord")
        with pytest.raises(duckdb.Error, match=rf"feature '{feature}' {why}") as caught:
            con.sql(f"SELECT {feature} FROM tfrecord_scan('{tmp_path / 'out'}')").fetchall()
        assert re.search(r"added\.tfrecord, record 1 at byte \d+", str(caught.value))
        (tmp_path / "out" / "added.tfrecord").unlink()
