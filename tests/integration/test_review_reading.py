"""Regressions found by an adversarial review of the reading path (scanner, Polars, DuckDB)."""

from __future__ import annotations

import warnings

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
import pytest

import tfsql
import tfsql.duckdb
from tfrecord_files import example, frame, write_examples, write_records
from tfsql.duckdb.rewrite import tokenize


# --------------------------------------------------------------------------- DuckDB SQL text


def test_tokenize_offsets_are_string_indices_after_non_ascii_text():
    sql = "SELECT 'São', f(1)"
    assert [t.text for t in tokenize(sql)] == ["SELECT", "'São'", ",", "f", "(", "1", ")"]


def test_tfrecord_scan_with_non_ascii_path_and_literals(tmp_path):
    root = tmp_path / "dàta ü'q"
    write_examples(root / "city=São Paulo" / "part 0.tfrecord", [{"héllo": 1}])
    write_examples(root / "city=a%3Db" / "p.tfrecord", [{"héllo": 2}])
    con = tfsql.duckdb.connect()
    quoted = str(root).replace("'", "''")
    assert con.sql(f"SELECT 'café' AS c, \"héllo\", city FROM tfrecord_scan('{quoted}') ORDER BY 2").fetchall() == [
        ("café", 1, "São Paulo"),
        ("café", 2, "a=b"),
    ]
    assert con.sql(
        f"SELECT count(*) FROM tfrecord_scan('{quoted}/**/*.tfrecord', filename := true) WHERE city = 'São Paulo'"
    ).fetchall() == [(1,)]


def test_tfrecord_scan_over_empty_files_counts_zero(tmp_path):
    # Files without features have only the filename column (DuckDB scans no table
    # without columns), so count(*) works (issue 13).
    (tmp_path / "a.tfrecord").write_bytes(b"")
    con = tfsql.duckdb.connect()
    assert con.sql(f"SELECT count(*) FROM tfrecord_scan('{tmp_path}')").fetchall() == [(0,)]
    assert con.sql(f"SELECT * FROM tfrecord_scan('{tmp_path}')").columns == ["filename"]
    assert con.sql(f"SELECT count(*) FROM tfrecord_scan('{tmp_path}', schema := {{'x': 'BIGINT'}})").fetchall() == [(0,)]


def test_tfrecord_scan_of_a_directory_holding_only_success_marker(tmp_path):
    (tmp_path / "_SUCCESS").write_bytes(b"")
    with pytest.raises(tfsql.duckdb.NoFilesError, match=r"IO Error: tfrecord_scan: no files found in .*_SUCCESS are skipped"):
        tfsql.duckdb.connect(extension=False).sql(f"SELECT * FROM tfrecord_scan('{tmp_path}')")


# --------------------------------------------------------------------------- read casts


def test_date32_and_time32_columns_read_back_with_a_schema(tmp_path):
    days = pa.array([0, 19000], pa.int32()).cast(pa.date32())
    table = pa.table({"d": days, "ld": pa.array([[0, 1], []], pa.list_(pa.int32())).cast(pa.list_(pa.date32()))})
    tfsql.write_tfrecord(table, tmp_path / "out")
    schema = {"d": pa.date32(), "ld": pa.list_(pa.date32())}
    assert tfsql.read_tfrecord(tmp_path / "out", schema=schema).equals(table)
    got = tfsql.read_tfrecord(tmp_path / "out", schema={"d": pa.time32("s")})
    assert got.column("d").to_pylist() == pa.array([0, 19000], pa.int32()).cast(pa.time32("s")).to_pylist()
    lf = pl.scan_tfrecord(tmp_path / "out", schema={"d": pl.Date}, extra_columns="ignore")
    assert lf.collect()["d"].cast(pl.Int32).to_list() == [0, 19000]


def test_date32_schema_on_out_of_range_int64_names_the_record(tmp_path):
    write_examples(tmp_path / "a.tfrecord", [{"d": 1}, {"d": 2**40}])
    with pytest.raises(tfsql.SchemaError, match=r"feature 'd' in .*a.tfrecord, record 1 does not fit the requested "
                       r"type date32\[day\]"):
        tfsql.read_tfrecord(tmp_path, schema={"d": pa.date32()})


# --------------------------------------------------------------------------- options


@pytest.mark.parametrize("name, value", [("infer_sample", 0), ("infer_sample", -1), ("infer_files", 0)])
def test_inference_bounds_must_be_positive(tmp_path, name, value):
    write_examples(tmp_path / "a.tfrecord", [{"x": 1}])
    with pytest.raises(ValueError, match=rf"{name} must be a positive integer or None \(all of them\), not {value}"):
        tfsql.dataset(tmp_path, **{name: value})


def test_negative_scan_limit_is_an_error(tmp_path):
    write_examples(tmp_path / "a.tfrecord", [{"x": 1}])
    with pytest.raises(ValueError, match=r"limit must be a non-negative integer or None, not -1"):
        tfsql.dataset(tmp_path).scanner(limit=-1)


# --------------------------------------------------------------------------- counting


def test_polars_len_of_records_without_features(tmp_path):
    write_records(tmp_path / "a.tfrecord", [b"", b"", b""])
    with pytest.warns(UserWarning, match="no feature holds values .* record_type='bytes'"):
        lf = pl.scan_tfrecord(tmp_path)
    assert lf.select(pl.len()).collect().item() == 3
    assert lf.head(2).select(pl.len()).collect().item() == 2
    assert lf.collect().shape == (3, 0)


def test_count_rows_skips_the_records_the_scan_skips(tmp_path):
    records = [frame(example({"x": i})) for i in range(3)]
    corrupt = bytearray(records[1])
    corrupt[-6] ^= 0xFF  # a payload byte: the data CRC fails
    (tmp_path / "a.tfrecord").write_bytes(records[0] + bytes(corrupt) + records[2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds = tfsql.dataset(tmp_path, on_corrupt="skip")
        assert ds.to_table().column("x").to_pylist() == [0, 2]
        assert ds.count_rows() == 2


# --------------------------------------------------------------------------- pyarrow Dataset API


def test_expression_projection_of_any_type(tmp_path):
    write_examples(tmp_path / "k=1" / "a.tfrecord", [{"x": 1, "xy": 5}, {"x": 2, "xy": 6}])
    write_examples(tmp_path / "k=2" / "a.tfrecord", [{"x": 3, "xy": 7}])
    ds = tfsql.dataset(tmp_path)
    got = ds.to_table(columns={"z": pc.field("x") * 2, "k": pc.field("k")}, filter=pc.field("xy") > 5)
    assert got.to_pylist() == [{"z": 4, "k": 1}, {"z": 6, "k": 2}]
    assert ds.head(1, columns={"s": pc.field("x") + pc.field("k")}).to_pylist() == [{"s": 2}]
    with pytest.raises(ValueError, match=r"projection nope does not apply to the dataset's schema"):
        ds.scanner(columns={"y": pc.field("nope")})


def test_pyarrow_union_of_tfsql_datasets_is_refused_not_a_crash(tmp_path):
    write_examples(tmp_path / "a.tfrecord", [{"x": 1}])
    ds = tfsql.dataset(tmp_path)
    with pytest.raises(TypeError, match=r"pyarrow.dataset.dataset\(\) cannot combine tfsql datasets; pass every "
                       r"source to one tfsql.dataset\(\[...\]\) call instead"):
        pads.dataset([ds, ds])
