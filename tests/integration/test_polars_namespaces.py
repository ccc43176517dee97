"""df.tfrecord.write / lf.tfrecord.sink, read back with pl.scan_tfrecord."""

from __future__ import annotations

import os

import polars as pl
import pyarrow as pa
import pytest
from polars.testing import assert_frame_equal

import tfsql
from tfsql import polars as tfpl
from tfsql.polars.sink import _arrow_reader

tfpl.attach()


def sample_frame(n: int = 250) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "id": pl.Series(range(n), dtype=pl.Int32),
            "flag": [i % 3 == 0 for i in range(n)],
            "x": pl.Series([i / 4 for i in range(n)], dtype=pl.Float32),
            "word": [None if i % 5 == 0 else f"w{i}é" for i in range(n)],
            "blob": [bytes([i % 256, 0, 255]) for i in range(n)],
            "vec": pl.Series([[float(i), 0.5] for i in range(n)], dtype=pl.Array(pl.Float32, 2)),
            "tokens": pl.Series([[f"t{j}" for j in range(i % 4)] for i in range(n)], dtype=pl.List(pl.String)),
            "split": ["train" if i % 4 else "test" for i in range(n)],
        }
    )


def test_write_then_scan_with_the_frame_schema_gives_the_frame(tmp_path):
    df = sample_frame()
    result = df.tfrecord.write(str(tmp_path / "out"))
    assert isinstance(result, tfsql.WriteResult)
    assert result.rows == 250 and len(result.files) == 1
    got = pl.scan_tfrecord(str(tmp_path / "out"), schema=df.schema).collect()
    assert_frame_equal(got, df)


def test_write_then_scan_without_schema_gives_the_frame(tmp_path):
    df = sample_frame()
    df.tfrecord.write(str(tmp_path / "out"))
    # the written dtypes and column order, from the column description (tfsql.description)
    got = pl.scan_tfrecord(str(tmp_path / "out")).collect()
    assert_frame_equal(got, df)


def test_a_file_named_directly_widens_types(tmp_path):
    df = sample_frame()
    df.tfrecord.write(str(tmp_path / "out"))
    (part,) = (tmp_path / "out").glob("*.tfrecord")
    got = pl.scan_tfrecord(str(part)).collect()
    # a file named directly is typed by inference: integers and booleans -> Int64,
    # floats -> Float32, Array -> List, bytes that are not UTF-8 -> Binary
    assert dict(got.schema) == {
        "id": pl.Int64,
        "flag": pl.Int64,
        "x": pl.Float32,
        "word": pl.String,
        "blob": pl.Binary,
        "vec": pl.List(pl.Float32),
        "tokens": pl.List(pl.String),
        "split": pl.String,
    }
    # inferred column order is first-seen order: "word" is null (omitted) in record 0
    assert got.columns == ["id", "flag", "x", "blob", "vec", "tokens", "split", "word"]
    widened = df.cast({"id": pl.Int64, "flag": pl.Int64, "vec": pl.List(pl.Float32)})
    assert_frame_equal(got, widened.select(got.columns))


def test_write_partitioned_through_the_namespace(tmp_path):
    df = sample_frame()
    result = df.tfrecord.write(str(tmp_path / "out"), partition_by="split", compression="gzip")
    assert sorted(f.partition["split"] for f in result.files) == ["test", "train"]
    assert all(f.path.endswith(".tfrecord.gz") for f in result.files)
    assert sorted(os.listdir(tmp_path / "out")) == ["_SUCCESS", "features.json", "split=test", "split=train"]
    lf = pl.scan_tfrecord(str(tmp_path / "out"), schema=df.drop("split").schema)
    assert lf.collect_schema().names()[-1] == "split"  # partition columns come last
    got = lf.filter(pl.col("split") == "test").sort("id").collect()
    assert_frame_equal(got, df.filter(pl.col("split") == "test").select(got.columns))


def test_write_options_are_forwarded(tmp_path):
    df = sample_frame()
    df.tfrecord.write(str(tmp_path / "out"))
    with pytest.raises(FileExistsError, match="already holds data; pass mode="):
        df.tfrecord.write(str(tmp_path / "out"))
    result = df.tfrecord.write(str(tmp_path / "out"), mode="overwrite", max_rows_per_file=100)
    assert [f.rows for f in result.files] == [100, 100, 50]
    with pytest.raises(TypeError, match="unexpected keyword argument 'partition'"):
        df.tfrecord.write(str(tmp_path / "other"), partition="split")


@pytest.mark.parametrize("chunk_size", [None, 16])
def test_sink_streams_a_query_into_files(tmp_path, chunk_size):
    df = sample_frame()
    lf = df.lazy().filter(pl.col("id") % 2 == 0).with_columns(double=pl.col("x") * 2)
    options = {} if chunk_size is None else {"chunk_size": chunk_size}
    result = lf.tfrecord.sink(str(tmp_path / "out"), partition_by=["split"], **options)
    assert result.rows == 125
    expected = lf.collect()
    got = pl.scan_tfrecord(str(tmp_path / "out"), schema=expected.drop("split").schema).sort("id").collect()
    assert_frame_equal(got, expected.select(got.columns))


def test_sink_of_a_scan_round_trips(tmp_path):
    df = sample_frame()
    df.tfrecord.write(str(tmp_path / "a"), partition_by="split")
    lf = pl.scan_tfrecord(str(tmp_path / "a"), schema=df.drop("split").schema)
    lf.filter(pl.col("flag")).tfrecord.sink(str(tmp_path / "b"), chunk_size=10)
    got = pl.scan_tfrecord(str(tmp_path / "b"), schema=df.schema).sort("id").collect()
    assert_frame_equal(got, df.filter(pl.col("flag")).sort("id"))


def test_sink_of_an_empty_result_writes_no_rows(tmp_path):
    result = sample_frame().lazy().filter(pl.col("id") < 0).tfrecord.sink(str(tmp_path / "out"))
    assert result.rows == 0


def test_view_types_are_exported_as_plain_arrow_types():
    reader = _arrow_reader(pl.Schema({"s": pl.String, "l": pl.List(pl.Binary)}), [])
    assert reader.schema == pa.schema([("s", pa.large_string()), ("l", pa.large_list(pa.large_binary()))])
