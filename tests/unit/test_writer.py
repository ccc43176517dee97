"""tfsql.write_tfrecord: inputs, layout on disk, rotation, shards, compression, modes,
atomicity, fsspec, and a hypothesis round trip through tfsql.read_tfrecord."""

from __future__ import annotations

import gzip
import os
import re
import sys
import zlib

import fsspec
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tfsql
from tfsql.writer import files as writer_files
from tfsql.writer import inputs as writer_inputs
from tfsql.errors import SchemaError
from tfsql.writer import write_tfrecord

from tfrecord_files import (
    example_values,
    file_bytes,
    payloads_of,
    read_examples,
    tree_snapshot,
    unframe,
    written_values,
)

I, F, B = "int64_list", "float_list", "bytes_list"
UUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def data_files(root) -> list[str]:
    """Relative paths of the visible data files under root, sorted (not the column
    description, features.json: tfsql.description)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(("_", "."))]
        found += [
            os.path.relpath(os.path.join(dirpath, f), root)
            for f in filenames
            if not f.startswith(("_", ".")) and f != "features.json"
        ]
    return sorted(found)


def all_examples(root) -> list[dict]:
    return [ex for rel in data_files(root) for ex in read_examples(os.path.join(root, rel))]


def xs(examples) -> list:
    return [ex["x"][1][0] for ex in examples]


def batches(n_batches: int, rows: int = 4, fail_after: int | None = None):
    """A generator of batches of column x = 0, 1, 2, ...; raises after ``fail_after``."""
    for i in range(n_batches):
        if fail_after is not None and i == fail_after:
            raise RuntimeError("input broke")
        yield pa.record_batch(
            {"x": np.arange(i * rows, (i + 1) * rows, dtype=np.int64), "k": [f"p{j % 2}" for j in range(rows)]}
        )


# --------------------------------------------------------------------------------------
# inputs
# --------------------------------------------------------------------------------------


class OnlyCArray:
    def __init__(self, batch):
        self._batch = batch

    def __arrow_c_array__(self, requested_schema=None):
        return self._batch.__arrow_c_array__(requested_schema)


class OnlyCStream:
    def __init__(self, table):
        self._table = table

    def __arrow_c_stream__(self, requested_schema=None):
        return self._table.__arrow_c_stream__(requested_schema)


TABLE = pa.table({"x": [1, 2, 3], "s": ["a", None, "c"]})
EXPECTED = [{"x": (I, [1]), "s": (B, [b"a"])}, {"x": (I, [2])}, {"x": (I, [3]), "s": (B, [b"c"])}]


@pytest.mark.parametrize(
    "make",
    [
        lambda: TABLE,
        lambda: TABLE.to_batches()[0],
        lambda: pa.RecordBatchReader.from_batches(TABLE.schema, TABLE.to_batches(max_chunksize=2)),
        lambda: OnlyCStream(TABLE),
        lambda: OnlyCArray(TABLE.to_batches()[0]),
        lambda: iter(TABLE.to_batches(max_chunksize=1)),
        lambda: [TABLE.slice(0, 1), TABLE.slice(1).to_batches()[0]],
        lambda: __import__("polars").from_arrow(TABLE),
        lambda: __import__("duckdb").sql("SELECT * FROM (VALUES (1, 'a'), (2, NULL), (3, 'c')) t(x, s)"),
    ],
    ids=["table", "batch", "reader", "c_stream", "c_array", "iterator", "list", "polars", "duckdb"],
)
def test_every_arrow_shaped_input(tmp_path, make):
    result = write_tfrecord(make(), tmp_path / "out")
    assert all_examples(tmp_path / "out") == EXPECTED
    assert result.rows == 3 and len(result.files) == 1


def test_bad_inputs_are_type_errors(tmp_path):
    with pytest.raises(TypeError, match="write_tfrecord needs Arrow-shaped data .* not dict"):
        write_tfrecord({"x": [1]}, tmp_path / "a")
    with pytest.raises(TypeError, match="must yield pyarrow RecordBatches \\(or Tables\\), not int"):
        write_tfrecord([1, 2], tmp_path / "b")
    with pytest.raises(TypeError, match="path must be a str or path-like, not int"):
        write_tfrecord(TABLE, 3)
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_batches_with_another_schema_fail_and_leave_nothing(tmp_path):
    items = [pa.record_batch({"x": [1]}), pa.record_batch({"x": ["a"]})]
    with pytest.raises(ValueError, match="record batches must all have the same schema"):
        write_tfrecord(items, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_empty_generator_writes_no_files(tmp_path):
    result = write_tfrecord(iter([]), tmp_path / "out")
    assert (result.files, result.rows) == ([], 0)
    assert os.listdir(tmp_path / "out") == ["_SUCCESS"]


def test_large_batches_are_encoded_in_slices(tmp_path, monkeypatch):
    monkeypatch.setattr(writer_inputs, "_ENCODE_ROWS", 3)
    write_tfrecord(pa.table({"x": list(range(10))}), tmp_path / "out")
    assert xs(all_examples(tmp_path / "out")) == list(range(10))


def test_errors_count_rows_over_the_whole_input(tmp_path):
    schema = pa.schema({"x": pa.list_(pa.int64())})
    items = [pa.record_batch({"x": [[1], [2]]}, schema=schema), pa.record_batch({"x": [[3], [4, None]]}, schema=schema)]
    with pytest.raises(SchemaError, match="column 'x' has a null element inside its list at row 3;"):
        write_tfrecord(items, tmp_path / "out")
    with pytest.raises(
        SchemaError, match=r"column 'seq' has type list<item: list<item: int64>>: .*record_type=\"sequence_example\""
    ):
        write_tfrecord(pa.table({"seq": [[[1]]]}), tmp_path / "out")
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------------------
# result, naming, layout
# --------------------------------------------------------------------------------------


def test_result_names_files_rows_and_bytes(tmp_path):
    target = str(tmp_path / "out")
    result = write_tfrecord(TABLE, target)
    (f,) = result.files
    assert re.fullmatch(re.escape(target) + rf"/part-00000-{UUID}-c000\.tfrecord", f.path)
    assert (f.rows, f.bytes, f.partition) == (3, os.path.getsize(f.path), {})
    assert (result.rows, result.bytes, result.paths) == (3, f.bytes, [f.path])
    assert repr(result) == f"WriteResult(1 file, 3 rows, {f.bytes:,} bytes in {target!r})"
    assert sorted(os.listdir(target)) == ["_SUCCESS", "features.json", os.path.basename(f.path)]
    assert os.path.getsize(os.path.join(target, "_SUCCESS")) == 0


def test_partitioned_layout_and_escaping(tmp_path):
    table = pa.table(
        {
            "split": ["train", "a/b=c", None, "train", "a/b=c"],
            "label": pa.array([1, 2, 1, 1, 2], pa.int8()),
            "x": [10, 11, 12, 13, 14],
        }
    )
    result = write_tfrecord(table, tmp_path / "out", partition_by=["split", "label"])
    dirs = [os.path.dirname(p) for p in data_files(tmp_path / "out")]
    assert sorted(dirs) == [
        "split=__HIVE_DEFAULT_PARTITION__/label=1",
        "split=a%2Fb%3Dc/label=2",
        "split=train/label=1",
    ]
    partitions = sorted((f.partition["split"] or "", f.partition["label"], f.rows) for f in result.files)
    assert partitions == [("", 1, 1), ("a/b=c", 2, 2), ("train", 1, 2)]
    train_dir = tmp_path / "out" / "split=train" / "label=1"
    train = read_examples(str(train_dir / data_files(train_dir)[0]))
    assert train == [{"x": (I, [10])}, {"x": (I, [13])}]  # partition columns are not in records
    names = [os.path.basename(f.path) for f in result.files]
    job = {re.search(UUID, n).group(0) for n in names}
    assert len(job) == 1  # one uuid per write job
    assert sorted(n[-13:] for n in names) == ["c000.tfrecord", "c001.tfrecord", "c002.tfrecord"]


def test_partitioned_output_reads_back_with_tfsql(tmp_path):
    import tfsql

    table = pa.table({"split": ["b", "a", "b"], "x": [1, 2, 3]})
    write_tfrecord(table, tmp_path / "out", partition_by="split")
    back = tfsql.read_tfrecord(str(tmp_path / "out")).sort_by("x")
    assert back.to_pydict() == {"x": [1, 2, 3], "split": ["b", "a", "b"]}


def test_partition_column_errors(tmp_path):
    with pytest.raises(
        SchemaError, match=r"partition column 'l' has type list<item: int64>; partition values become directory names"
    ):
        write_tfrecord(pa.table({"l": [[1]], "x": [1]}), tmp_path / "out", partition_by="l")
    with pytest.raises(ValueError, match=r"partition column 'nope' is not in the data; the columns are \['x'\]"):
        write_tfrecord(pa.table({"x": [1]}), tmp_path / "out", partition_by=["nope"])
    with pytest.raises(ValueError, match=r"partition_by names a column twice: \['x', 'x'\]"):
        write_tfrecord(pa.table({"x": [1]}), tmp_path / "out", partition_by=["x", "x"])
    assert not (tmp_path / "out").exists()


def test_too_many_open_partition_files_rotate_instead(tmp_path, monkeypatch):
    monkeypatch.setattr(writer_files, "_MAX_OPEN_FILES", 2)
    table = pa.table({"k": [0, 1, 2, 0, 1, 2], "x": [0, 1, 2, 3, 4, 5]})
    result = write_tfrecord(table.to_batches(max_chunksize=3), tmp_path / "out", partition_by="k")
    assert len(result.files) == 6  # every partition's file was closed before its second batch
    assert sorted(xs(all_examples(tmp_path / "out"))) == [0, 1, 2, 3, 4, 5]


# --------------------------------------------------------------------------------------
# rotation and shards
# --------------------------------------------------------------------------------------


def test_max_rows_per_file_splits_batches_exactly(tmp_path):
    result = write_tfrecord(batches(3, rows=4), tmp_path / "out", max_rows_per_file=5)
    assert [f.rows for f in result.files] == [5, 5, 2]
    assert [xs(read_examples(f.path)) for f in result.files] == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [10, 11]]
    assert [f.path[-13:] for f in result.files] == ["c000.tfrecord", "c001.tfrecord", "c002.tfrecord"]


def test_max_bytes_per_file_closes_a_file_once_it_reaches_the_limit(tmp_path):
    table = pa.table({"x": np.arange(10, dtype=np.int64)})  # 10 records of 30 framed bytes
    record = len(file_bytes(write_tfrecord(table.slice(0, 1), tmp_path / "one").paths[0]))
    assert record == 30
    result = write_tfrecord(table.to_batches(max_chunksize=4), tmp_path / "out", max_bytes_per_file=70)
    assert [f.rows for f in result.files] == [3, 3, 3, 1]  # 90 bytes: over 70 by less than a record
    assert [f.bytes for f in result.files] == [90, 90, 90, 30]
    exact = write_tfrecord(table, tmp_path / "exact", max_bytes_per_file=60)
    assert [f.rows for f in exact.files] == [2, 2, 2, 2, 2]


def test_max_bytes_counts_data_before_compression(tmp_path):
    table = pa.table({"x": np.arange(10, dtype=np.int64)})
    result = write_tfrecord(table, tmp_path / "out", max_bytes_per_file=60, compression="gzip")
    assert [f.rows for f in result.files] == [2, 2, 2, 2, 2]
    assert xs(all_examples(tmp_path / "out")) == list(range(10))


def test_num_shards_deals_rows_round_robin(tmp_path):
    result = write_tfrecord(batches(5, rows=2), tmp_path / "out", num_shards=4, shard_prefix="train")
    assert [os.path.basename(p) for p in result.paths] == [f"train-0000{i}-of-00004.tfrecord" for i in range(4)]
    assert [f.rows for f in result.files] == [3, 3, 2, 2]
    assert [xs(read_examples(p)) for p in result.paths] == [[0, 4, 8], [1, 5, 9], [2, 6], [3, 7]]


def test_num_shards_with_fewer_rows_than_shards_writes_every_shard(tmp_path):
    result = write_tfrecord(pa.table({"x": [1]}), tmp_path / "out", num_shards=3, compression="zlib")
    assert [os.path.basename(p) for p in result.paths] == [
        "part-00000-of-00003.tfrecord.zz",
        "part-00001-of-00003.tfrecord.zz",
        "part-00002-of-00003.tfrecord.zz",
    ]
    assert [f.rows for f in result.files] == [1, 0, 0]
    assert [len(unframe(file_bytes(p))) for p in result.paths] == [1, 0, 0]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"num_shards": 2, "max_rows_per_file": 3}, "num_shards fixes the number of files"),
        ({"num_shards": 0}, "num_shards must be a positive integer, not 0"),
        ({"max_rows_per_file": -1}, "max_rows_per_file must be a positive integer, not -1"),
        ({"max_bytes_per_file": 1.5}, "max_bytes_per_file must be a positive integer, not 1.5"),
        ({"compression": "snappy"}, "unknown compression 'snappy'; use None, 'gzip' or 'zlib'"),
        ({"compression": "gzip", "compression_level": 11}, "compression_level must be an integer from 0 to 9, not 11"),
        ({"mode": "replace"}, "mode must be one of 'error', 'append'"),
        ({"record_type": "proto"}, "unknown record_type 'proto'"),
        ({"shard_prefix": "a/b", "num_shards": 2}, "shard_prefix must be a non-empty file name prefix"),
    ],
)
def test_option_errors(tmp_path, kwargs, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        write_tfrecord(pa.table({"x": [1], "k": ["a"]}), tmp_path / "out", **kwargs)
    assert not (tmp_path / "out").exists()


# --------------------------------------------------------------------------------------
# compression
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "compression, ext, unpack",
    [
        ("gzip", ".tfrecord.gz", gzip.decompress),
        ("GZIP", ".tfrecord.gz", gzip.decompress),
        ("zlib", ".tfrecord.zz", zlib.decompress),
        ("none", ".tfrecord", bytes),
    ],
)
def test_compressed_files_decompress_to_the_plain_stream(tmp_path, compression, ext, unpack):
    table = pa.table({"x": np.arange(1000), "s": ["é" * 10] * 1000})
    plain = write_tfrecord(table, tmp_path / "plain")
    packed = write_tfrecord(
        table.to_batches(max_chunksize=300), tmp_path / "packed", compression=compression, compression_level=9
    )
    (path,) = packed.paths
    assert path.endswith(ext)
    with open(path, "rb") as f:
        raw = f.read()
    with open(plain.paths[0], "rb") as f:
        assert unpack(raw) == f.read()
    assert packed.files[0].bytes == len(raw)


def test_gzip_is_a_single_gzip_member(tmp_path):
    result = write_tfrecord(pa.table({"x": np.arange(100)}), tmp_path / "out", compression="gzip")
    with open(result.paths[0], "rb") as f:
        raw = f.read()
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    d.decompress(raw)
    assert raw[:3] == b"\x1f\x8b\x08" and d.eof and d.unused_data == b""


# --------------------------------------------------------------------------------------
# modes
# --------------------------------------------------------------------------------------


def write_parts(target, values, mode, **kwargs):
    table = pa.table({"k": [f"p{v % 2}" for v in values], "x": values})
    return write_tfrecord(table, target, mode=mode, **kwargs)


def test_mode_error_refuses_existing_data_but_accepts_an_empty_directory(tmp_path):
    target = tmp_path / "out"
    target.mkdir()
    write_parts(target, [1], "error")
    with pytest.raises(FileExistsError, match=r"already holds data; pass mode='append', 'overwrite'"):
        write_parts(target, [2], "error")
    assert xs(all_examples(target)) == [1]


def test_a_staged_file_removed_before_the_commit_fails_the_write_and_keeps_the_target(tmp_path, monkeypatch):
    """Something that ignores the target lock (the v1 build's COPY ... OVERWRITE) removed a
    staged file: nothing is committed and the old data stays."""
    from tfsql.writer import job

    target = tmp_path / "out"
    write_parts(target, [1], "overwrite")
    real_sync = job._commit.sync_dirs

    def remove_one_staged_file(fs, directories):  # called as the staged files are made durable
        staged = sorted(p for p in fs.find(str(target)) if "/_temporary-" in p and p.endswith(".tfrecord"))
        if len(staged) == 2:
            fs.rm(staged[0])
        real_sync(fs, directories)

    monkeypatch.setattr(job._commit, "sync_dirs", remove_one_staged_file)
    with pytest.raises(tfsql.WriteConflictError, match=r"another writer removed the staging directory") as caught:
        write_parts(target, [2, 3, 4, 5], "overwrite", partition_by=["k"])
    assert caught.value.reason == "staging_removed"
    monkeypatch.undo()
    assert xs(all_examples(target)) == [1]
    assert [n for n in os.listdir(target) if n.startswith("_temporary")] == []  # the staging is gone


def test_the_commit_checks_its_staged_files_with_one_listing_not_one_request_each(monkeypatch):
    """On an object store each existence check is a request: 40 staged files cost one
    listing of the staging directory, not 40 checks."""
    fs = fsspec.filesystem("memory")
    asked: list[str] = []
    real_exists = type(fs).exists

    def counted_exists(self, path, **kwargs):
        if "/tfsql/" in sys._getframe(1).f_code.co_filename:  # tfsql's own checks, not fsspec's moves
            asked.append(path)
        return real_exists(self, path, **kwargs)

    monkeypatch.setattr(type(fs), "exists", counted_exists)
    table = pa.table({"k": [f"p{v}" for v in range(40)], "x": list(range(40))})
    result = write_tfrecord(table, "memory://staging-check/out", mode="overwrite", partition_by=["k"])
    assert len(result.files) == 40
    assert [p for p in asked if "_temporary-" in p and p.endswith(".tfrecord")] == []
    fs.rm("/staging-check", recursive=True)


def test_a_file_as_target_is_an_error(tmp_path):
    (tmp_path / "f").write_bytes(b"x")
    with pytest.raises(FileExistsError, match="is a file; write_tfrecord writes a directory"):
        write_parts(tmp_path / "f", [1], "overwrite")


def test_mode_append_adds_files(tmp_path):
    write_parts(tmp_path / "out", [1, 2], "error", partition_by="k")
    write_parts(tmp_path / "out", [3, 4], "append", partition_by="k")
    assert sorted(xs(all_examples(tmp_path / "out"))) == [1, 2, 3, 4]
    assert len(data_files(tmp_path / "out")) == 4


def test_mode_append_never_replaces_a_shard(tmp_path):
    write_parts(tmp_path / "out", [1], "error", num_shards=2)
    before = tree_snapshot(tmp_path / "out")
    with pytest.raises(
        FileExistsError, match=r"part-00000-of-00002.tfrecord' already exists; choose another shard_prefix"
    ):
        write_parts(tmp_path / "out", [2], "append", num_shards=2)
    assert tree_snapshot(tmp_path / "out") == before


def test_mode_overwrite_replaces_everything(tmp_path):
    write_parts(tmp_path / "out", [1, 2], "error", partition_by="k")
    (tmp_path / "out" / "notes.txt").write_text("old")
    write_parts(tmp_path / "out", [5], "overwrite")
    assert data_files(tmp_path / "out")[0].startswith("part-")
    assert len(data_files(tmp_path / "out")) == 1
    assert xs(all_examples(tmp_path / "out")) == [5]
    assert sorted(os.listdir(tmp_path / "out"))[0] == "_SUCCESS"


def test_mode_overwrite_partitions_replaces_only_touched_partitions(tmp_path):
    write_parts(tmp_path / "out", [1, 2, 3, 4], "error", partition_by="k")
    write_parts(tmp_path / "out", [11], "overwrite_partitions", partition_by="k")  # p1 only
    assert sorted(xs(read_examples(str(tmp_path / "out" / f)))[0] for f in data_files(tmp_path / "out")) == [2, 11]
    p0 = [f for f in data_files(tmp_path / "out") if f.startswith("k=p0")]
    assert xs(read_examples(str(tmp_path / "out" / p0[0]))) == [2, 4]
    assert not [n for n in os.listdir(tmp_path / "out") if n.startswith("_t")]  # no staging/trash left


def test_mode_overwrite_partitions_without_partition_by_replaces_everything(tmp_path):
    write_parts(tmp_path / "out", [1, 2], "error")
    write_parts(tmp_path / "out", [3], "overwrite_partitions")
    assert xs(all_examples(tmp_path / "out")) == [3]


def test_mode_ignore_writes_nothing_and_reads_no_input(tmp_path):
    write_parts(tmp_path / "out", [1], "error")
    before = tree_snapshot(tmp_path / "out")
    result = write_tfrecord(batches(2, fail_after=0), tmp_path / "out", mode="ignore")
    assert result.skipped and result.files == []
    assert repr(result) == f"WriteResult(skipped: {str(tmp_path / 'out')!r} already holds data, mode='ignore')"
    assert tree_snapshot(tmp_path / "out") == before
    assert write_tfrecord(TABLE, tmp_path / "new", mode="ignore").rows == 3


# --------------------------------------------------------------------------------------
# overwrite_partitions without partition_by replaces everything, shard names included
# --------------------------------------------------------------------------------------


def test_overwrite_partitions_without_partition_by_replaces_same_named_shards(tmp_path):
    # was: FileExistsError "'.../part-00000-of-00002.tfrecord' already exists"
    target = tmp_path / "o"
    write_tfrecord(pa.table({"a": [1, 2, 3]}), target, num_shards=2)
    result = write_tfrecord(pa.table({"a": [4]}), target, num_shards=2, mode="overwrite_partitions")
    assert [os.path.basename(p) for p in result.paths] == [
        "part-00000-of-00002.tfrecord",
        "part-00001-of-00002.tfrecord",
    ]
    assert sorted(os.listdir(target)) == [
        "_SUCCESS",
        "features.json",
        "part-00000-of-00002.tfrecord",
        "part-00001-of-00002.tfrecord",
    ]
    assert written_values(result) == [{"a": [4]}]


# --------------------------------------------------------------------------------------
# atomicity
# --------------------------------------------------------------------------------------


def existing_tree(root):
    write_parts(root, [100, 101, 102], "error", partition_by="k")
    return tree_snapshot(root)


@pytest.mark.parametrize("mode", ["error", "append", "overwrite", "overwrite_partitions", "ignore"])
@pytest.mark.parametrize("partition_by", [None, "k"])
@pytest.mark.parametrize("compression", [None, "gzip"])
def test_a_failing_input_leaves_the_target_unchanged(tmp_path, mode, partition_by, compression):
    target = tmp_path / "out"
    if mode in ("error", "ignore"):
        target.mkdir()  # an empty target: these modes would write
        (target.parent / "sibling").write_text("x")
    else:
        existing_tree(target)
    before = tree_snapshot(tmp_path)
    # an append whose columns differ from the target's description is refused before
    # the input is read (tfsql.description): the target is unchanged either way
    refused = mode == "append" and partition_by is None
    with pytest.raises(SchemaError if refused else RuntimeError, match="no column 'k'" if refused else "input broke"):
        write_tfrecord(
            batches(5, fail_after=3),
            target,
            mode=mode,
            partition_by=partition_by,
            compression=compression,
            max_rows_per_file=3,
        )
    assert tree_snapshot(tmp_path) == before


@pytest.mark.parametrize("mode", ["append", "overwrite", "overwrite_partitions"])
def test_a_schema_error_halfway_leaves_the_target_unchanged(tmp_path, mode):
    target = tmp_path / "out"
    existing_tree(target)
    (target / "features.json").unlink()  # data without a description: no type to match
    before = tree_snapshot(tmp_path)
    schema = pa.schema({"k": pa.string(), "x": pa.list_(pa.int64())})
    items = [
        pa.record_batch({"k": ["p0"], "x": [[1]]}, schema=schema),
        pa.record_batch({"k": ["p1"], "x": [[None]]}, schema=schema),
    ]
    with pytest.raises(SchemaError, match="at row 1;"):
        write_tfrecord(items, target, mode=mode, partition_by="k")
    assert tree_snapshot(tmp_path) == before


def test_keyboard_interrupt_cleans_up_a_new_target_and_its_parents(tmp_path):
    def interrupted():
        yield pa.record_batch({"x": [1]})
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_tfrecord(interrupted(), tmp_path / "a" / "b" / "out")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize(
    "mode, partition_by",
    [
        ("overwrite", None),
        ("overwrite_partitions", "k"),
        ("append", "k"),
    ],
)
def test_a_failing_commit_rolls_back(tmp_path, monkeypatch, mode, partition_by):
    target = tmp_path / "out"
    existing_tree(target)
    before = tree_snapshot(tmp_path)
    import tfsql.commit

    real_rename = os.rename
    calls = []

    def failing_rename(src, dst):
        calls.append(dst)
        if len(calls) == 4:  # old data moved to the trash, some new files moved in
            raise OSError("disk full")
        return real_rename(src, dst)

    monkeypatch.setattr(tfsql.commit.os, "rename", failing_rename)
    table = pa.table({"k": ["p1", "p7", "p7", "p8"], "x": [1, 7, 9, 8]})
    with pytest.raises(OSError, match="disk full"):
        write_tfrecord(table, target, mode=mode, partition_by=partition_by, max_rows_per_file=1)
    monkeypatch.undo()
    assert len(calls) > 4  # the failing move, then the undo moves
    assert tree_snapshot(tmp_path) == before


# --------------------------------------------------------------------------------------
# a failed write must not delete what another writer committed meanwhile
# --------------------------------------------------------------------------------------


def test_failed_write_keeps_files_another_writer_committed_to_the_new_target(tmp_path):
    # was: the failing job removed the whole target directory it had created,
    # including the other writer's committed files
    target = tmp_path / "new" / "o"

    def batches():
        yield pa.record_batch({"v": [1]})
        other = write_tfrecord(pa.table({"v": [2]}), target, mode="append")
        assert other.rows == 1
        raise RuntimeError("input broke")

    with pytest.raises(RuntimeError, match="input broke"):
        write_tfrecord(batches(), target, mode="append")
    names = sorted(n for n in os.listdir(target) if n != "features.json")
    assert len(names) == 2 and names[0] == "_SUCCESS" and names[1].startswith("part-00000-")
    assert [example_values(p) for p in payloads_of(str(target / names[1]))] == [{"v": [2]}]


def test_failed_write_still_removes_the_empty_directories_it_created(tmp_path):
    def batches():
        yield pa.record_batch({"v": [1]})
        raise RuntimeError("input broke")

    with pytest.raises(RuntimeError, match="input broke"):
        write_tfrecord(batches(), tmp_path / "a" / "b" / "c")
    assert os.listdir(tmp_path) == []


# --------------------------------------------------------------------------------------
# fsspec filesystems
# --------------------------------------------------------------------------------------


def test_memory_filesystem_write_and_modes():
    fs = fsspec.filesystem("memory")
    root = "memory://tfsql-writer-test/out"
    try:
        result = write_tfrecord(pa.table({"k": ["a", "b"], "x": [1, 2]}), root, partition_by="k", compression="gzip")
        assert sorted(p.split("/")[-2] for p in result.paths) == ["k=a", "k=b"]
        assert all(p.startswith(root + "/k=") for p in result.paths)
        with fs.open(result.files[0].path, "rb") as f:
            assert len(unframe(gzip.decompress(f.read()))) == 1
        write_tfrecord(pa.table({"k": ["a"], "x": [3]}), root, partition_by="k", mode="overwrite_partitions")
        names = sorted(p[len("/tfsql-writer-test/out/") :].split("/")[0] for p in fs.find("/tfsql-writer-test/out"))
        assert names == ["_SUCCESS", "features.json", "k=a", "k=b"]
        with pytest.raises(FileExistsError, match="already holds data"):
            write_tfrecord(TABLE, root)
        with pytest.raises(RuntimeError, match="input broke"):
            write_tfrecord(batches(3, fail_after=1), root, mode="overwrite")
        assert len(fs.find("/tfsql-writer-test/out")) == 4  # _SUCCESS, features.json, two files
    finally:
        fs.rm("/tfsql-writer-test", recursive=True)


# --------------------------------------------------------------------------------------
# round trip (hypothesis) through tfsql.read_tfrecord
# --------------------------------------------------------------------------------------

_FLOAT64 = st.floats(allow_nan=False, width=64)
_SCALARS = {
    "bool": (pa.bool_(), st.booleans()),
    "int8": (pa.int8(), st.integers(-(2**7), 2**7 - 1)),
    "int16": (pa.int16(), st.integers(-(2**15), 2**15 - 1)),
    "int32": (pa.int32(), st.integers(-(2**31), 2**31 - 1)),
    "int64": (pa.int64(), st.integers(-(2**63), 2**63 - 1)),
    "uint8": (pa.uint8(), st.integers(0, 2**8 - 1)),
    "uint32": (pa.uint32(), st.integers(0, 2**32 - 1)),
    "uint64": (pa.uint64(), st.integers(0, 2**63 - 1)),
    "float32": (pa.float32(), st.floats(allow_nan=False, width=32)),
    "float64": (pa.float64(), _FLOAT64),
    "string": (pa.string(), st.text(max_size=8)),
    "large_string": (pa.large_string(), st.text(max_size=8)),
    "binary": (pa.binary(), st.binary(max_size=8)),
    "large_binary": (pa.large_binary(), st.binary(max_size=8)),
}


@st.composite
def tables(draw):
    sequence = draw(st.booleans())
    n_rows = draw(st.integers(0, 12))
    n_cols = draw(st.integers(1, 4))
    fields, columns = [], []
    for i in range(n_cols):
        name = draw(st.sampled_from(sorted(_SCALARS)))
        arrow_type, values = _SCALARS[name]
        depth = draw(st.sampled_from([0, 1, 2] if sequence else [0, 1]))
        strategy = values
        for _ in range(depth):
            arrow_type = pa.list_(arrow_type)
            strategy = st.lists(strategy, max_size=3)
        column = draw(st.lists(st.none() | strategy, min_size=n_rows, max_size=n_rows))
        fields.append(pa.field(f"c{i}_{name}", arrow_type))
        columns.append(pa.array(column, arrow_type))
    return pa.Table.from_arrays(columns, schema=pa.schema(fields)), sequence


def as_float32(value):
    if isinstance(value, list):
        return [as_float32(v) for v in value]
    if isinstance(value, float):
        with np.errstate(over="ignore"):
            return float(np.float32(value))
    return value


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=tables(), chunk=st.integers(1, 5), compression=st.sampled_from([None, "gzip", "zlib"]))
def test_round_trip_through_read_tfrecord(tmp_path_factory, case, chunk, compression):
    import tfsql

    table, sequence = case
    record_type = "sequence_example" if sequence else "example"
    target = tmp_path_factory.mktemp("rt")
    write_tfrecord(
        table.to_batches(max_chunksize=chunk),
        target,
        record_type=record_type,
        compression=compression,
        max_rows_per_file=chunk + 1,
    )
    if table.num_rows == 0:  # no rows write no file: a directory without data is an error
        with pytest.raises(FileNotFoundError, match="no files found in the directory"):
            tfsql.read_tfrecord(str(target), schema=table.schema, record_type=record_type)
        return
    # an all-null column writes no feature: reading it back by name needs missing_columns="insert"
    back = tfsql.read_tfrecord(str(target), schema=table.schema, record_type=record_type, missing_columns="insert")
    assert back.schema == table.schema
    for name in table.column_names:
        expected = table.column(name).to_pylist()
        if "float" in name:
            expected = as_float32(expected)
        assert back.column(name).to_pylist() == expected, name


def test_filename_pattern(tmp_path):
    table = pa.table({"x": list(range(5))})
    result = write_tfrecord(table, tmp_path / "o", filename_pattern="train_{i}", max_rows_per_file=2)
    assert sorted(p.name for p in (tmp_path / "o").glob("*.tfrecord")) == [
        "train_0.tfrecord",
        "train_1.tfrecord",
        "train_2.tfrecord",
    ]
    assert [f.rows for f in result.files] == [2, 2, 1]
    uuids = write_tfrecord(table, tmp_path / "u", filename_pattern="{uuid}", compression="zlib")
    assert len(uuids.files) == 1 and re.fullmatch(r"[0-9a-f-]{36}\.tfrecord\.zz", uuids.files[0].path.rsplit("/", 1)[1])
    with pytest.raises(
        ValueError, match=r"filename_pattern 'fixed' must contain \{i\} \(the file's number\) or \{uuid\}"
    ):
        write_tfrecord(table, tmp_path / "e", filename_pattern="fixed")
    with pytest.raises(
        ValueError, match=r"has the field \{name\}; the fields are \{i\} \(the file's number\) and \{uuid\}"
    ):
        write_tfrecord(table, tmp_path / "e", filename_pattern="{i}_{name}")
    with pytest.raises(ValueError, match=r"has the field \{n\}.*; \{n\} needs num_shards"):
        write_tfrecord(table, tmp_path / "e", filename_pattern="{i}-of-{n}")
    with pytest.raises(ValueError, match=r"filename_pattern 'x\{i:q\}' cannot be formatted: Unknown format code 'q'"):
        write_tfrecord(table, tmp_path / "e", filename_pattern="x{i:q}")
    assert not (tmp_path / "e").exists()


# --------------------------------------------------------------------------------------
# Another writer commits while this one stages (the concurrent-writer races, in-process)
# --------------------------------------------------------------------------------------


def _batches_with_a_write_in_between(target, mode, seen):
    """Input whose consumption lets another writer commit to ``target`` midway."""
    yield pa.record_batch({"x": [1, 2]})
    seen.append(sorted(os.listdir(target)))  # our staging exists
    write_tfrecord(pa.table({"x": [100]}), target, mode=mode)
    seen.append(sorted(os.listdir(target)))
    yield pa.record_batch({"x": [3]})


def test_a_losing_error_mode_writer_gets_a_write_conflict_naming_the_target(tmp_path):
    # was: both writers could pass the check; a loser failed with a raw FileNotFoundError
    target = tmp_path / "out"
    seen = []
    with pytest.raises(
        tfsql.WriteConflictError,
        match=rf"'{target}' already holds data \(another writer committed to it while "
        r"this one was writing\); pass mode=",
    ) as info:
        write_tfrecord(_batches_with_a_write_in_between(target, "error", seen), target)
    assert isinstance(info.value, FileExistsError) and info.value.path == str(target)
    staging = [n for n in seen[0] if n.startswith("_temporary-")]
    assert len(staging) == 1 and staging[0] in seen[1]  # the other writer left ours alone
    assert tfsql.read_tfrecord(str(target))["x"].to_pylist() == [100]
    assert not [n for n in os.listdir(target) if n.startswith(("_temporary", "_trash", "_tfsql"))]


@pytest.mark.parametrize("mode, expected", [("overwrite", [1, 2, 3]), ("append", [0, 1, 2, 3, 100])])
def test_a_write_committed_meanwhile_is_replaced_or_kept_as_if_serial(tmp_path, mode, expected):
    target = tmp_path / "out"
    write_tfrecord(pa.table({"x": [0]}), target)
    seen = []
    write_tfrecord(_batches_with_a_write_in_between(target, "append", seen), target, mode=mode)
    assert sorted(tfsql.read_tfrecord(str(target))["x"].to_pylist()) == expected
    assert [n for n in seen[1] if n.startswith("_temporary-")] == [n for n in seen[0] if n.startswith("_temporary-")]
    assert not [n for n in os.listdir(target) if n.startswith(("_temporary", "_trash", "_tfsql"))]


def test_filename_pattern_format_specs_and_num_shards(tmp_path):
    table = pa.table({"x": list(range(5))})
    specs = write_tfrecord(table, tmp_path / "f", filename_pattern="train-{i:03d}", max_rows_per_file=2)
    assert [p.rsplit("/", 1)[1] for p in specs.paths] == [
        "train-000.tfrecord",
        "train-001.tfrecord",
        "train-002.tfrecord",
    ]
    shards = write_tfrecord(
        table, tmp_path / "s", num_shards=2, filename_pattern="train-{i:05d}-of-{n:05d}", compression="gzip"
    )
    assert [p.rsplit("/", 1)[1] for p in shards.paths] == [
        "train-00000-of-00002.tfrecord.gz",
        "train-00001-of-00002.tfrecord.gz",
    ]
    assert [f.rows for f in shards.files] == [3, 2]
    # a name that already says .tfrecord (TFDS style) gets no extra suffix
    tfds_style = write_tfrecord(table, tmp_path / "t", num_shards=2, shard_prefix="mnist-train.tfrecord")
    assert [p.rsplit("/", 1)[1] for p in tfds_style.paths] == [
        "mnist-train.tfrecord-00000-of-00002",
        "mnist-train.tfrecord-00001-of-00002",
    ]
    assert sorted(tfsql.read_tfrecord(str(tmp_path / "t")).column("x").to_pylist()) == [0, 1, 2, 3, 4]


def test_num_shards_per_partition(tmp_path):
    table = pa.table({"x": list(range(7)), "k": ["a", "b", "a", "a", "b", "a", "a"]})
    result = write_tfrecord(table, tmp_path / "o", partition_by="k", num_shards=2)
    got = {(f.path.rsplit("/", 2)[1], f.path.rsplit("/", 1)[1]): f.rows for f in result.files}
    assert got == {
        ("k=a", "part-00000-of-00002.tfrecord"): 3,
        ("k=a", "part-00001-of-00002.tfrecord"): 2,
        ("k=b", "part-00000-of-00002.tfrecord"): 1,
        ("k=b", "part-00001-of-00002.tfrecord"): 1,
    }
    first = tfsql.read_tfrecord(str(tmp_path / "o" / "k=a" / "part-00000-of-00002.tfrecord"))
    assert first.column("x").to_pylist() == [0, 3, 6]  # the partition's rows dealt round robin
