"""What the writer writes, the reader reads: names the reader would hide are rejected
before anything is written, partition keys and values are escaped so that they read
back exactly, and names no filesystem can hold are clear errors naming column and value."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest

import tfsql
from tfsql import write_tfrecord


def files_under(path):
    return sorted(os.path.relpath(os.path.join(d, f), path) for d, _, fs in os.walk(path) for f in fs)


@pytest.mark.parametrize("pattern", [".x_{i}", "_x_{i}", "_SUCCESS{i}"])
def test_a_filename_pattern_the_reader_hides_is_rejected_before_writing(tmp_path, pattern):
    # was: 3 rows written, 0 read back
    out = tmp_path / "out"
    with pytest.raises(
        ValueError,
        match=rf"filename_pattern '{pattern}' makes file names such as "
        r"'.*\.tfrecord', which readers skip as hidden",
    ):
        write_tfrecord(pa.table({"x": [1, 2, 3]}), out, filename_pattern=pattern)
    assert not out.exists()


def test_a_shard_prefix_the_reader_hides_is_rejected(tmp_path):
    with pytest.raises(
        ValueError,
        match=r"shard_prefix '_train' makes file names such as "
        r"'_train-00000-of-00001.tfrecord', which readers skip",
    ):
        write_tfrecord(pa.table({"x": [1]}), tmp_path / "out", num_shards=2, shard_prefix="_train")


def test_a_filename_pattern_too_long_for_a_file_name_is_rejected(tmp_path):
    with pytest.raises(ValueError, match=r"over the 255-byte limit of a file name; use a shorter filename_pattern"):
        write_tfrecord(pa.table({"x": [1]}), tmp_path / "out", filename_pattern="a" * 250 + "{i}")
    assert not (tmp_path / "out").exists()


def test_a_pattern_starting_with_a_letter_still_works(tmp_path):
    result = write_tfrecord(pa.table({"x": [1]}), tmp_path / "out", filename_pattern="x_{i}")
    assert [os.path.basename(p) for p in result.paths] == ["x_0.tfrecord"]


@pytest.mark.parametrize("column", ["..", "../../escape", ".hidden", "_under", "nul\x00key", "a=b"])
def test_partition_column_names_round_trip_and_stay_inside_the_target(tmp_path, column):
    # was: '..' and '../../escape' read back no rows and no columns
    out = tmp_path / "deep" / "out"
    table = pa.table({"x": [1, 2, 3], column: ["p", "q", "p"]})
    write_tfrecord(table, out, partition_by=column)
    assert sorted(os.listdir(tmp_path)) == ["deep"] and os.listdir(tmp_path / "deep") == ["out"]
    back = tfsql.read_tfrecord(str(out))
    assert back.column_names == ["x", column]
    assert sorted(zip(back["x"].to_pylist(), back[column].to_pylist())) == [(1, "p"), (2, "q"), (3, "p")]


VALUES = [
    "a.crc",
    "x._COPYING_",
    "nul\x00byte",
    "__HIVE_DEFAULT_PARTITION__",
    "..",
    ".dot",
    "_u",
    "a/b",
    "%41",
    "x" * 200,
]


def test_partition_values_round_trip_exactly(tmp_path):
    # was: '__HIVE_DEFAULT_PARTITION__' read back as null, 'a.crc' was hidden, NUL raised
    # "ValueError: embedded null byte" without the column
    out = tmp_path / "out"
    table = pa.table({"i": list(range(len(VALUES) + 1)), "k": VALUES + [None]})
    write_tfrecord(table, out, partition_by="k")
    back = tfsql.read_tfrecord(str(out))
    assert sorted(zip(back["i"].to_pylist(), back["k"].to_pylist())) == list(
        zip(range(len(VALUES) + 1), VALUES + [None])
    )


def test_a_value_too_long_for_a_directory_name_names_column_and_value(tmp_path):
    # was: ENAMETOOLONG showing an internal _temporary path
    out = tmp_path / "out"
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "old.tfrecord").write_bytes(b"")
    table = pa.table({"x": [1, 2], "label": ["short", "v" * 300]})
    with pytest.raises(
        tfsql.SchemaError,
        match=r"partition column 'label': the value 'vvvv.*\.\.\.' makes the "
        r"directory name label=vvv.* of 306 bytes, over the 255-byte "
        r"limit of a file name",
    ) as info:
        write_tfrecord(table, out, partition_by="label", mode="append")
    assert info.value.feature == "label"
    assert "_temporary" not in str(info.value)
    assert files_under(out) == ["old.tfrecord"]  # nothing written, no staging left


def test_a_non_ascii_value_is_measured_in_bytes(tmp_path):
    table = pa.table({"x": [1], "label": ["é" * 126]})  # 252 bytes + "label=" = 258
    with pytest.raises(tfsql.SchemaError, match="of 258 bytes, over the 255-byte limit"):
        write_tfrecord(table, tmp_path / "out", partition_by="label")
    write_tfrecord(pa.table({"x": [1], "label": ["é" * 124]}), tmp_path / "ok", partition_by="label")
    assert tfsql.read_tfrecord(str(tmp_path / "ok"))["label"].to_pylist() == ["é" * 124]


# --------------------------------------------------------------------------------------
# Callers choose the name layout and read each file's place from the result (no parsing)
# --------------------------------------------------------------------------------------


def test_a_caller_fixes_its_own_parts_of_the_name_and_reads_files_from_the_result(tmp_path):
    # what the Spark writer's task 3 of job J does: Spark's part-<task>-<job>-c<seq> names
    job = "0f8fad5b-d9cb-469f-a165-70867728950e"
    table = pa.table({"k": ["a", "b", "a", "a"], "x": [1, 2, 3, 4]})
    result = write_tfrecord(
        table,
        tmp_path / "out",
        partition_by="k",
        max_rows_per_file=2,
        compression="gzip",
        filename_pattern=f"part-00003-{job}-c{{i:03d}}",
    )
    expected = [
        ("k=a", f"part-00003-{job}-c000.tfrecord.gz", 0, 2),
        ("k=a", f"part-00003-{job}-c001.tfrecord.gz", 1, 1),
        ("k=b", f"part-00003-{job}-c002.tfrecord.gz", 2, 1),
    ]
    got = [("k=" + f.partition["k"], f.relative.split("/")[1], f.index, f.rows) for f in result.files]
    assert got == expected  # in the order the files were started; {i} of the name is the index
    assert [f.path for f in result.files] == [os.path.join(str(tmp_path / "out"), f.relative) for f in result.files]
    assert files_under(tmp_path / "out") == sorted(
        ["_SUCCESS", "features.json"] + [f"{d}/{n}" for d, n, _, _ in expected]
    )


def test_shards_report_their_index(tmp_path):
    result = write_tfrecord(
        pa.table({"x": list(range(5))}), tmp_path / "out", num_shards=3, filename_pattern="s-{i}-of-{n}"
    )
    assert [(f.relative, f.index, f.rows) for f in result.files] == [
        ("s-0-of-3.tfrecord", 0, 2),
        ("s-1-of-3.tfrecord", 1, 2),
        ("s-2-of-3.tfrecord", 2, 1),
    ]


def test_a_single_file_target_reports_its_name(tmp_path):
    result = write_tfrecord(pa.table({"x": [1, 2]}), tmp_path / "one.tfrecord")
    assert [(f.relative, f.index, f.rows) for f in result.files] == [("one.tfrecord", 0, 2)]
