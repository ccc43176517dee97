"""write_tfrecord's Arrow inputs: list views, dictionaries of view types (Polars
categoricals), and batches whose schema differs from the first batch's.

Each test names the defect it pins down. Written files are read back with the framing
reader and protobuf of ``tests/tfrecord_files.py``, independent of tfsql's reader.
"""

from __future__ import annotations

import os

import pyarrow as pa
import pytest

import tfsql
from tfsql import _proto
from tfrecord_files import example_values, payloads_of, written_values
from tfsql.writer import write_tfrecord


def _tree(root) -> list[str]:
    found = []
    for dirpath, _, filenames in os.walk(root):
        found += [os.path.relpath(os.path.join(dirpath, f), root) for f in filenames]
        found += [os.path.relpath(dirpath, root) + "/"]
    return sorted(found)


# --------------------------------------------------------------------------------------
# list views: pyarrow's cast of a list view to a list builds invalid offsets
# --------------------------------------------------------------------------------------


def test_list_view_with_nulls_is_written_with_its_values(tmp_path):
    # was: ArrowInvalid "Offsets buffer size (bytes): 24 isn't large enough"
    column = pa.array([["a"], ["b", "c"], None], pa.large_list_view(pa.string()))
    result = write_tfrecord(pa.table({"x": column}), tmp_path / "o")
    assert written_values(result) == [{"x": [b"a"]}, {"x": [b"b", b"c"]}, {}]


def test_sliced_list_view_is_written_with_its_values(tmp_path):
    # was: ArrowInvalid "Negative offsets in list array"
    column = pa.array([[1], [2, 3], None], pa.list_view(pa.int32()))
    result = write_tfrecord(pa.table({"x": column}).slice(1), tmp_path / "o")
    assert written_values(result) == [{"x": [2, 3]}, {}]


def test_list_view_with_out_of_order_views_is_written_in_row_order(tmp_path):
    # list views may point anywhere in their values; was: ArrowInvalid / a ValueError
    # about decreasing outer_offsets
    column = pa.ListViewArray.from_arrays(
        pa.array([2, 0, 1], pa.int32()), pa.array([1, 2, 2], pa.int32()), pa.array([10, 20, 30])
    )
    result = write_tfrecord(pa.table({"x": column}), tmp_path / "o")
    assert written_values(result) == [{"x": [30]}, {"x": [10, 20]}, {"x": [20, 30]}]


def test_list_of_list_views_in_a_sequence_example(tmp_path):
    inner = pa.ListViewArray.from_arrays(
        pa.array([1, 0], pa.int32()), pa.array([2, 1], pa.int32()), pa.array([1.0, 2.0, 3.0], pa.float32())
    )
    column = pa.ListArray.from_arrays(pa.array([0, 2], pa.int32()), inner)
    result = write_tfrecord(pa.table({"f": column}), tmp_path / "o", record_type="sequence_example")
    (payload,) = payloads_of(result.files[0].path)
    sequence = _proto.SequenceExample()
    sequence.ParseFromString(payload)
    steps = sequence.feature_lists.feature_list["f"].feature
    assert [list(step.float_list.value) for step in steps] == [[2.0, 3.0], [1.0]]


# --------------------------------------------------------------------------------------
# dictionaries of view types (Polars categoricals export dictionary<uint32, string_view>)
# --------------------------------------------------------------------------------------


def _categorical(values: list[str | None]) -> pa.DictionaryArray:
    categories = sorted({v for v in values if v is not None})
    indices = pa.array([None if v is None else categories.index(v) for v in values], pa.uint32())
    return pa.DictionaryArray.from_arrays(indices, pa.array(categories, pa.string_view()))


def test_partition_by_a_dictionary_of_string_view(tmp_path):
    # was: ArrowNotImplementedError "Function 'array_take' has no kernel matching input
    # types (string_view, uint32)"
    table = pa.table({"k": _categorical(["b", "a", None, "b"]), "v": [1, 2, 3, 4]})
    result = write_tfrecord(table, tmp_path / "o", partition_by="k")
    got = sorted(
        (f.partition["k"] or "", r["v"][0])
        for f in result.files
        for r in (example_values(p) for p in payloads_of(f.path))
    )
    assert got == [("", 3), ("a", 2), ("b", 1), ("b", 4)]
    assert sorted(d for d in os.listdir(tmp_path / "o") if not d.startswith("_")) == [
        "features.json",
        "k=__HIVE_DEFAULT_PARTITION__",
        "k=a",
        "k=b",
    ]


def test_data_column_dictionary_of_string_view_and_list_of_it(tmp_path):
    tags = pa.ListArray.from_arrays(pa.array([0, 2, 2, 3], pa.int32()), _categorical(["x", "y", "x"]))
    table = pa.table({"c": _categorical(["u", None, "v"]), "tags": tags})
    result = write_tfrecord(table, tmp_path / "o")
    assert written_values(result) == [{"c": [b"u"], "tags": [b"x", b"y"]}, {"tags": []}, {"c": [b"v"], "tags": [b"x"]}]


def test_polars_categorical_partition_round_trip(tmp_path):
    pl = pytest.importorskip("polars")
    df = pl.DataFrame({"k": pl.Series(["b", "a", "b"], dtype=pl.Categorical), "v": [1, 2, 3]})
    result = write_tfrecord(df, tmp_path / "o", partition_by="k")
    assert sorted((f.partition["k"], f.rows) for f in result.files) == [("a", 1), ("b", 2)]
    back = tfsql.read_tfrecord(tmp_path / "o").sort_by("v").to_pylist()
    assert back == [{"v": 1, "k": "b"}, {"v": 2, "k": "a"}, {"v": 3, "k": "b"}]


# --------------------------------------------------------------------------------------
# batches whose schema differs from the first batch's
# --------------------------------------------------------------------------------------


def _existing(tmp_path):
    target = tmp_path / "o"
    write_tfrecord(pa.table({"p": ["a"], "v": [1]}), target, partition_by="p")
    return target, _tree(target)


def test_later_batch_with_an_extra_column_is_an_error_not_a_silent_drop(tmp_path):
    # was: column w silently dropped from the second batch's records
    target, before = _existing(tmp_path)

    def batches():
        yield pa.record_batch({"p": ["a"], "v": [2]})
        yield pa.record_batch({"p": ["a"], "v": [3], "w": [4]})

    with pytest.raises(
        ValueError,
        match="record batches must all have the same schema; "
        "expected p: string\nv: int64, got p: string\nv: int64\nw: int64",
    ):
        write_tfrecord(batches(), target, partition_by="p", mode="append")
    assert _tree(target) == before


def test_later_batch_missing_a_column_is_a_schema_error_not_a_key_error(tmp_path):
    # was: KeyError 'Field "v" does not exist in schema'
    target, before = _existing(tmp_path)

    def batches():
        yield pa.record_batch({"p": ["a"], "v": [2]})
        yield pa.record_batch({"p": ["a"]})

    with pytest.raises(ValueError, match="record batches must all have the same schema"):
        write_tfrecord(batches(), target, partition_by="p", mode="append")
    assert _tree(target) == before


def test_later_batch_with_reordered_columns_is_an_error(tmp_path):
    target, before = _existing(tmp_path)

    def batches():
        yield pa.record_batch({"p": ["a"], "v": [2]})
        yield pa.record_batch({"v": [3], "p": ["a"]})

    with pytest.raises(ValueError, match="record batches must all have the same schema"):
        write_tfrecord(batches(), target, partition_by="p", mode="append")
    assert _tree(target) == before
