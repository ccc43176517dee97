"""``write_tfrecord(index=True)``: record index sidecars written and committed with the data.

Each data file gets ``.<name>.idx`` beside it, byte for byte what ``tfsql index`` writes
(DALI's and vahidk/tfrecord's ``offset size`` lines), never older than its file, moved
into place by the same commit, and gone when the file it indexes is replaced.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pyarrow as pa
import pytest

import tfsql
from tfsql.record_index import StaleIndexWarning, index_path, indexed_count, write_index

TABLE = pa.table({"x": list(range(10)), "p": [i % 2 for i in range(10)], "s": ["v" * i for i in range(10)]})


def _data_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.tfrecord"))


def _offsets_and_sizes(path: Path) -> list[tuple[int, int]]:
    """The spans of the file's records, walked from its bytes (the index's meaning)."""
    data, spans, pos = path.read_bytes(), [], 0
    while pos < len(data):
        length = int.from_bytes(data[pos : pos + 8], "little")
        spans.append((pos, 12 + length + 4))
        pos += 12 + length + 4
    return spans


def _assert_indexed(path: Path) -> None:
    sidecar = Path(index_path(str(path)))
    lines = [tuple(int(v) for v in line.split()) for line in sidecar.read_text().splitlines()]
    assert lines == _offsets_and_sizes(path)
    assert sidecar.stat().st_mtime_ns >= path.stat().st_mtime_ns
    with warnings.catch_warnings():
        warnings.simplefilter("error", StaleIndexWarning)
        assert indexed_count(str(path)) == len(lines)


def test_every_file_of_a_partitioned_rotated_write_gets_its_index(tmp_path):
    out = tmp_path / "out"
    result = tfsql.write_tfrecord(TABLE, out, partition_by="p", max_rows_per_file=2, index=True)
    files = _data_files(out)
    assert len(files) == len(result.files) == 6
    for path in files:
        _assert_indexed(path)
    assert sorted(p.name for p in out.rglob(".*.idx")) == sorted(f".{p.name}.idx" for p in files)
    assert tfsql.read_tfrecord(out).sort_by("x").column("x").to_pylist() == list(range(10))
    assert tfsql.dataset(out).count_rows() == 10
    assert not list(out.rglob("_temporary-*"))


def test_the_index_is_byte_for_byte_what_tfsql_index_writes(tmp_path):
    tfsql.write_tfrecord(TABLE, tmp_path / "a", num_shards=2, index=True)
    tfsql.write_tfrecord(TABLE, tmp_path / "b", num_shards=2)
    for written, plain in zip(_data_files(tmp_path / "a"), _data_files(tmp_path / "b")):
        assert written.read_bytes() == plain.read_bytes()
        write_index(str(plain))
        assert Path(index_path(str(written))).read_bytes() == Path(index_path(str(plain))).read_bytes()


def test_overwrite_without_index_removes_the_old_indexes(tmp_path):
    out = tmp_path / "out"
    tfsql.write_tfrecord(TABLE, out, num_shards=2, index=True)
    assert len(list(out.glob(".*.idx"))) == 2
    tfsql.write_tfrecord(TABLE.slice(0, 3), out, num_shards=2, mode="overwrite")
    assert list(out.glob(".*.idx")) == []
    assert tfsql.dataset(out).count_rows() == 3


def test_append_indexes_only_the_new_files(tmp_path):
    out = tmp_path / "out"
    tfsql.write_tfrecord(TABLE, out, filename_pattern="first-{i}")
    tfsql.write_tfrecord(TABLE, out, filename_pattern="second-{i}", mode="append", index=True)
    assert [p.name for p in out.glob(".*.idx")] == [".second-0.tfrecord.idx"]
    _assert_indexed(out / "second-0.tfrecord")
    assert tfsql.dataset(out).count_rows() == 20


def test_a_single_file_target_gets_its_index_and_loses_it_when_replaced(tmp_path):
    target = tmp_path / "train.tfrecord"
    tfsql.write_tfrecord(TABLE, target, index=True)
    _assert_indexed(target)
    tfsql.write_tfrecord(TABLE.slice(0, 4), target, mode="append", index=True)
    _assert_indexed(target)
    assert indexed_count(str(target)) == 14
    tfsql.write_tfrecord(TABLE.slice(0, 1), target, mode="overwrite")
    assert not Path(index_path(str(target))).exists()
    assert tfsql.dataset(target).count_rows() == 1


@pytest.mark.parametrize("target,options", [("out", {"compression": "gzip"}), ("one.tfrecord.gz", {})])
def test_compressed_files_have_no_index(tmp_path, target, options):
    with pytest.raises(ValueError, match="index=True needs (uncompressed files|an uncompressed file)"):
        tfsql.write_tfrecord(TABLE, tmp_path / target, index=True, **options)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif("duckdb-v" not in tfsql.duckdb_extension_path(), reason="COPY from plain columns is V2's")
def test_sql_copy_index(tmp_path):
    out = tmp_path / "out"
    con = tfsql.connect()
    query = "SELECT range AS x, range % 2 AS p FROM range(5)"
    con.execute(f"COPY ({query}) TO '{out}' (FORMAT tfrecord, PARTITION_BY (p), INDEX)")
    files = _data_files(out)
    assert len(files) == 2
    for path in files:
        _assert_indexed(path)


def test_cli_convert_index(tmp_path):
    source = tmp_path / "in"
    tfsql.write_tfrecord(TABLE, source)
    out = tmp_path / "out"
    run = subprocess.run(
        [sys.executable, "-m", "tfsql", "convert", str(source), str(out), "--index"],
        capture_output=True,
        text=True,
        env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)),
    )
    assert run.returncode == 0, run.stderr
    (path,) = _data_files(out)
    _assert_indexed(path)


def test_polars_write_index(tmp_path):
    pl = pytest.importorskip("polars")
    import tfsql.polars  # noqa: F401  (registers the namespaces)

    out = tmp_path / "out"
    pl.DataFrame({"x": [1, 2, 3]}).tfrecord.write(str(out), index=True)
    (path,) = _data_files(out)
    _assert_indexed(path)
    assert indexed_count(str(path)) == 3
