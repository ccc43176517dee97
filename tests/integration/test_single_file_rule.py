"""One single-file rule for every writer (`tfsql.naming`): a target ending in a TFRecord
suffix is one file, anything else (and anything ending in ``/``) a directory of part
files; existing targets follow ``mode``, never silent replacement."""

from __future__ import annotations

import gzip
import os

import polars as pl
import pyarrow as pa
import pytest

import tfsql
import tfsql.polars  # registers the namespaces
from tfsql.cli import main
from tfsql.naming import TFRECORD_SUFFIXES, is_single_file_target
from duckdb_copy_helpers import needs_v2_copy


def ids(path) -> list[int]:
    return sorted(tfsql.read_tfrecord(str(path)).column("x").to_pylist())


def listing(directory) -> list[str]:
    return sorted(os.listdir(directory))


def test_suffixes_are_defined_once():
    import tfsql.cli.outputs

    assert TFRECORD_SUFFIXES == tuple(
        base + ending
        for base in (".tfrecord", ".tfrecords", ".tfrec")
        for ending in ("", ".gz", ".gzip", ".zz", ".zlib")
    )
    assert tfsql.cli.outputs.TFRECORD_SUFFIXES is TFRECORD_SUFFIXES
    assert [
        is_single_file_target(p)
        for p in (
            "a.tfrecord",
            "a.TFRECORDS",
            "a.tfrecord.gz",
            "a.tfrecord.zz",
            "a.tfrec.zlib",
            "a.tfrecord/",
            "a",
            "a.gz",
        )
    ] == [True] * 5 + [False] * 3


def test_write_tfrecord(tmp_path):
    target = tmp_path / "train.tfrecord"
    result = tfsql.write_tfrecord(pa.table({"x": [1, 2]}), str(target))
    assert target.is_file() and result.paths == [str(target)] and result.rows == 2
    with pytest.raises(FileExistsError, match="train.tfrecord' already exists; pass mode='overwrite'"):
        tfsql.write_tfrecord(pa.table({"x": [3]}), str(target))
    assert tfsql.write_tfrecord(pa.table({"x": [3]}), str(target), mode="ignore").skipped
    tfsql.write_tfrecord(pa.table({"x": [3]}), str(target), mode="append")
    assert ids(target) == [1, 2, 3]
    tfsql.write_tfrecord(pa.table({"x": [4]}), str(target), mode="overwrite")
    assert ids(target) == [4]
    assert listing(tmp_path) == ["train.tfrecord"]  # no temporary left behind
    # compressed by its name; append keeps one valid gzip stream
    gz = tmp_path / "z.tfrecord.gz"
    tfsql.write_tfrecord(pa.table({"x": [1]}), str(gz))
    tfsql.write_tfrecord(pa.table({"x": [2]}), str(gz), mode="append")
    assert gz.read_bytes()[:2] == b"\x1f\x8b" and ids(gz) == [1, 2]
    gzip.decompress(gz.read_bytes())
    # a trailing / means a directory, whatever the name
    tfsql.write_tfrecord(pa.table({"x": [5]}), str(tmp_path / "d.tfrecord") + "/")
    assert (tmp_path / "d.tfrecord").is_dir() and ids(tmp_path / "d.tfrecord") == [5]
    with pytest.raises(IsADirectoryError, match="is a directory; add a trailing '/'"):
        tfsql.write_tfrecord(pa.table({"x": [5]}), str(tmp_path / "d.tfrecord"))
    # other directory options need a directory (a partitioned write makes one: see below)
    with pytest.raises(ValueError, match=r"names one file \(it ends in a TFRecord suffix\), but max_rows_per_file"):
        tfsql.write_tfrecord(pa.table({"x": [5]}), str(tmp_path / "p.tfrecord"), max_rows_per_file=1)
    # anything else is a directory
    tfsql.write_tfrecord(pa.table({"x": [6]}), str(tmp_path / "out"))
    assert (tmp_path / "out").is_dir()


def test_single_file_write_is_atomic(tmp_path):
    target = tmp_path / "keep.tfrecord"
    tfsql.write_tfrecord(pa.table({"x": [1]}), str(target))
    before = target.read_bytes()

    def failing():
        yield pa.record_batch({"x": [7]})
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        tfsql.write_tfrecord(failing(), str(target), mode="overwrite")
    assert target.read_bytes() == before and listing(tmp_path) == ["keep.tfrecord"]


def test_polars_write_and_sink(tmp_path):
    df = pl.DataFrame({"x": [1, 2]})
    df.tfrecord.write(str(tmp_path / "w.tfrecord"))
    assert (tmp_path / "w.tfrecord").is_file() and ids(tmp_path / "w.tfrecord") == [1, 2]
    with pytest.raises(FileExistsError):
        df.tfrecord.write(str(tmp_path / "w.tfrecord"))
    df.lazy().tfrecord.sink(str(tmp_path / "w.tfrecord"), mode="append")
    assert ids(tmp_path / "w.tfrecord") == [1, 1, 2, 2]
    df.lazy().tfrecord.sink(str(tmp_path / "s.tfrecord.zz"))
    assert (tmp_path / "s.tfrecord.zz").is_file() and ids(tmp_path / "s.tfrecord.zz") == [1, 2]
    df.tfrecord.write(str(tmp_path / "dir") + "/")
    assert (tmp_path / "dir").is_dir()


# The native COPY follows DuckDB's rule for files and directories, not this one
# (docs/duckdb-extension.md; tests/integration/test_duckdb_v2_copy.py compares it with
# COPY ... (FORMAT parquet)); `tfsql sql --output` writes a query's rows by this rule.


def test_cli_sql_and_convert(tmp_path, capsys):
    out = tmp_path / "r.tfrecord"
    assert main(["sql", "SELECT 1 AS x", "-o", str(out), "-q"]) == 0
    assert out.is_file()
    assert main(["sql", "SELECT 2 AS x", "-o", str(out), "-q"]) == 2
    assert "already exists; pass --mode" in capsys.readouterr().err
    assert main(["sql", "SELECT 2 AS x", "-o", str(out), "--mode", "append", "-q"]) == 0
    assert ids(out) == [1, 2]
    assert main(["sql", "SELECT 3 AS x", "-o", str(tmp_path / "d.tfrecord") + "/", "-q"]) == 0
    assert (tmp_path / "d.tfrecord").is_dir()
    assert main(["convert", str(out), str(tmp_path / "c.tfrecord.gz"), "-q"]) == 0
    assert (tmp_path / "c.tfrecord.gz").read_bytes()[:2] == b"\x1f\x8b" and ids(tmp_path / "c.tfrecord.gz") == [1, 2]
    assert main(["convert", str(out), str(tmp_path / "c.tfrecord.gz"), "-q"]) == 2
    assert main(["convert", str(out), str(tmp_path / "cdir"), "-q"]) == 0
    assert (tmp_path / "cdir").is_dir() and ids(tmp_path / "cdir") == [1, 2]


def test_cli_data_errors_stay_data_errors(tmp_path, capsys):
    # a null in a TFDS scalar column is a data error (exit 1), not a usage error (exit 2)
    assert (
        main(
            ["sql", "SELECT NULL::BIGINT AS x", "-o", str(tmp_path / "t"), "--format", "tfrecord", "--tfds", "t", "-q"]
        )
        == 1
    )
    assert "column 'x' is null in input row 0" in capsys.readouterr().err


def test_single_file_on_an_fsspec_filesystem():
    import fsspec

    mem = fsspec.filesystem("memory")
    try:
        tfsql.write_tfrecord(pa.table({"x": [1, 2]}), "memory://rule/a.tfrecord.gz")
        tfsql.write_tfrecord(pa.table({"x": [3]}), "memory://rule/a.tfrecord.gz", mode="append")
        assert mem.ls("/rule", detail=False) == ["/rule/a.tfrecord.gz"]
        assert ids("memory://rule/a.tfrecord.gz") == [1, 2, 3]
    finally:
        mem.rm("/rule", recursive=True)


PARTITIONED = pa.table({"id": [1, 2, 1], "x": [10, 20, 30]})


def _partitions(directory) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))


def _hive_rows(directory) -> list[tuple]:
    table = tfsql.read_tfrecord(str(directory), hive_partitioning=True)
    return sorted(zip(table.column("id").to_pylist(), table.column("x").to_pylist()))


@pytest.mark.parametrize("name", ["out.tfrecord", "out.tfrecord.gz", "out"])
def test_a_partitioned_write_makes_a_directory_whatever_the_name(name, tmp_path):
    # issue 23, finding 8: as DuckDB's COPY TO 'x.parquet' (PARTITION_BY (p)) does
    target = tmp_path / name
    result = tfsql.write_tfrecord(PARTITIONED, str(target), partition_by="id")
    assert target.is_dir() and _partitions(target) == ["id=1", "id=2"]
    assert len(result.files) == 2 and _hive_rows(target) == [(1, 10), (1, 30), (2, 20)]


def test_a_partitioned_polars_write_and_sink_make_a_directory(tmp_path):
    df = pl.from_arrow(PARTITIONED)
    df.tfrecord.write(str(tmp_path / "w.tfrecord"), partition_by="id")
    df.lazy().tfrecord.sink(pl.PartitionBy(str(tmp_path / "s.tfrecord"), key="id"))
    for name in ("w.tfrecord", "s.tfrecord"):
        assert _partitions(tmp_path / name) == ["id=1", "id=2"]
        assert _hive_rows(tmp_path / name) == [(1, 10), (1, 30), (2, 20)]


@needs_v2_copy
def test_a_partitioned_copy_makes_a_directory(tmp_path):
    with tfsql.connect() as con:
        con.register("t", PARTITIONED)
        con.execute(f"COPY t TO '{tmp_path / 'c.tfrecord'}' (FORMAT tfrecord, PARTITION_BY (id))")
        assert con.fetchall() == [(3,)]
    assert _partitions(tmp_path / "c.tfrecord") == ["id=1", "id=2"]
    assert _hive_rows(tmp_path / "c.tfrecord") == [(1, 10), (1, 30), (2, 20)]


def test_a_partitioned_cli_output_makes_a_directory(tmp_path):
    query = "SELECT * FROM (VALUES (1, 10), (2, 20), (1, 30)) t(id, x)"
    assert main(["sql", query, "-o", str(tmp_path / "o.tfrecord"), "--partition-by", "id", "-q"]) == 0
    assert _hive_rows(tmp_path / "o.tfrecord") == [(1, 10), (1, 30), (2, 20)]
