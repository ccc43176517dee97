"""tfsql.dataset: discovery + partitions + schema + pushdown + parallel scan, end to end."""

from __future__ import annotations

import re
import struct
import warnings

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pads
import pytest

import tfsql
import tfsql.scanning as dataset_module
from tfrecord_files import NO_KIND, example, frame, sequence_example, write_examples, write_records
from tfsql.errors import CorruptRecordError, SchemaError


def spark_tree(root):
    """label=L/split=S/part-00000-<uuid>-c000.tfrecord, _SUCCESS, .crc files, an empty part."""
    uuid = "0a1b2c3d-0000-4000-8000-000000000000"
    rows = {}
    for label in (0, 1):
        for split in ("train", "test"):
            part = [{"id": label * 100 + (split == "test") * 10 + i, "score": float(i) / 4} for i in range(3)]
            rows[(label, split)] = part
            d = root / f"label={label}" / f"split={split}"
            write_examples(d / f"part-00000-{uuid}-c000.tfrecord", part)
            (d / f".part-00000-{uuid}-c000.tfrecord.crc").write_bytes(b"\x00junk")
    (root / "label=1" / "split=test" / f"part-00001-{uuid}-c000.tfrecord").write_bytes(b"")
    (root / "_SUCCESS").write_bytes(b"")
    return rows


def test_spark_style_tree(tmp_path):
    spark_tree(tmp_path)
    ds = tfsql.dataset(tmp_path)
    assert ds.schema == pa.schema({"id": pa.int64(), "score": pa.float32(), "label": pa.int64(), "split": pa.string()})
    assert len(ds.files) == 5
    table = ds.to_table().sort_by("id")
    assert table.column("id").to_pylist() == [0, 1, 2, 10, 11, 12, 100, 101, 102, 110, 111, 112]
    assert table.column("label").to_pylist() == [0] * 6 + [1] * 6
    assert table.column("split").to_pylist() == (["train"] * 3 + ["test"] * 3) * 2
    assert table.column("score").to_pylist() == [0.0, 0.25, 0.5] * 4


def test_partition_filter_opens_only_matching_files(tmp_path, monkeypatch):
    spark_tree(tmp_path)
    opened = []
    real = dataset_module.open_frame_reader

    def spy(found, file, options, **kwargs):
        opened.append(file.path)
        return real(found, file, options, **kwargs)

    real_count = dataset_module.count_file_records

    def count_spy(found, file, options):
        opened.append(file.path)
        return real_count(found, file, options)

    real_run = dataset_module.read_small_run

    def run_spy(found, files, options):  # small files read together
        opened.extend(file.path for file in files)
        return real_run(found, files, options)

    monkeypatch.setattr(dataset_module, "open_frame_reader", spy)
    monkeypatch.setattr(dataset_module, "count_file_records", count_spy)
    monkeypatch.setattr(dataset_module, "read_small_run", run_spy)
    ds = tfsql.dataset(tmp_path)
    opened.clear()
    table = ds.to_table(columns=["id"], filter=(pc.field("label") == 1) & (pc.field("split") == "train"))
    assert table.column("id").to_pylist() == [100, 101, 102]
    assert len(opened) == 1 and "label=1/split=train" in opened[0]
    opened.clear()
    assert ds.count_rows(filter=pc.field("split") == "test") == 6
    assert all("split=test" in p for p in opened) and len(opened) == 2  # the empty part is never opened


def test_filter_on_data_and_partition_columns_is_exact(tmp_path):
    spark_tree(tmp_path)
    ds = tfsql.dataset(tmp_path)
    expr = ((pc.field("score") > 0.3) | pc.field("id").isin([0, 110])) & (pc.field("split") != "train")
    got = ds.to_table(filter=expr).sort_by("id")
    expected = ds.to_table().filter(expr).sort_by("id")
    assert got.equals(expected)
    assert got.column("id").to_pylist() == [12, 110, 112]
    assert ds.count_rows(filter=expr) == 3


def test_filter_columns_are_decoded_but_not_returned(tmp_path):
    spark_tree(tmp_path)
    table = tfsql.dataset(tmp_path).to_table(columns=["split"], filter=pc.field("score") == 0.5)
    assert table.column_names == ["split"]
    assert table.num_rows == 4


def test_head_stops_reading_early(tmp_path, monkeypatch):
    for i in range(6):
        write_examples(tmp_path / f"f{i}.tfrecord", [{"x": i * 100 + j} for j in range(50)])
    opened = []
    real = dataset_module.open_frame_reader
    monkeypatch.setattr(dataset_module, "open_frame_reader", lambda *a, **k: opened.append(a[1].path) or real(*a, **k))
    ds = tfsql.dataset(tmp_path, batch_size=10, threads=2, infer_files=1)
    opened.clear()
    assert ds.head(15).column("x").to_pylist() == list(range(15))
    assert len(opened) <= 3  # decode-ahead may touch the next file or two, never all six


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_order_is_file_order_for_any_thread_count(tmp_path, threads):
    for i in range(5):
        write_examples(tmp_path / f"f{i}.tfrecord", [{"x": i * 1000 + j} for j in range(300)])
    ds = tfsql.dataset(tmp_path, batch_size=37, threads=threads)
    assert ds.to_table().column("x").to_pylist() == [i * 1000 + j for i in range(5) for j in range(300)]
    assert ds.count_rows() == 1500


def test_abandoned_stream_stops_workers(tmp_path):
    for i in range(4):
        write_examples(tmp_path / f"f{i}.tfrecord", [{"x": j} for j in range(1000)])
    batches = tfsql.dataset(tmp_path, batch_size=10, threads=2).scanner().to_batches()
    first = next(batches)
    assert first.num_rows == 10
    batches.close()  # must return promptly and not hang


def test_include_file_paths(tmp_path):
    write_examples(tmp_path / "a.tfrecord", [{"x": 1}])
    write_examples(tmp_path / "b.tfrecord", [{"x": 2}, {"x": 3}])
    table = tfsql.read_tfrecord(tmp_path, include_file_paths="file")
    assert table.column_names == ["x", "file"]
    assert [p.rsplit("/", 1)[1] for p in table.column("file").to_pylist()] == ["a.tfrecord", "b.tfrecord", "b.tfrecord"]
    filtered = tfsql.read_tfrecord(
        tmp_path, include_file_paths="file", filter=pc.ends_with(pc.field("file"), "b.tfrecord")
    )
    assert filtered.column("x").to_pylist() == [2, 3]


def test_three_states_stay_distinct(tmp_path):
    rows = [
        {"s": 1, "l": [1, 2]},
        {"s": NO_KIND, "l": NO_KIND},
        {"s": (), "l": ()},
        {},
        {"s": 5, "l": [7]},
    ]
    write_examples(tmp_path / "x.tfrecord", rows)
    table = tfsql.read_tfrecord(tmp_path / "x.tfrecord", schema={"s": pa.int64(), "l": pa.list_(pa.int64())})
    assert table.column("s").to_pylist() == [1, None, None, None, 5]
    assert table.column("l").to_pylist() == [[1, 2], None, [], None, [7]]


def test_inference_samples_several_files(tmp_path):
    write_examples(tmp_path / "a.tfrecord", [{"x": 1}])
    write_examples(tmp_path / "b.tfrecord", [{"x": 2, "late": "hello"}])
    write_examples(tmp_path / "c.tfrecord", [{"x": [3, 4]}])
    ds = tfsql.dataset(tmp_path)
    assert ds.schema == pa.schema({"x": pa.list_(pa.int64()), "late": pa.string()})
    assert ds.to_table().to_pylist() == [
        {"x": [1], "late": None},
        {"x": [2], "late": "hello"},
        {"x": [3, 4], "late": None},
    ]


def test_inference_order_utf8_and_lists_always(tmp_path):
    write_examples(tmp_path / "a.tfrecord", [{"b": b"\xff\x00", "t": "é", "n": 1.5}])
    schema = tfsql.infer_schema(tmp_path)
    assert dict(zip(schema.names, schema.types)) == {"b": pa.binary(), "t": pa.string(), "n": pa.float32()}
    always = tfsql.infer_schema(tmp_path, lists="always")
    assert always.field("n").type == pa.list_(pa.float32())


def test_kind_conflict_names_both_kinds(tmp_path):
    write_examples(tmp_path / "a.tfrecord", [{"v": 1}])
    write_examples(tmp_path / "b.tfrecord", [{"v": 1.5}])
    with pytest.raises(
        SchemaError,
        match=r"feature 'v' holds two kinds.*float_list \(first in .*b.tfrecord\) and int64_list \(first in .*a.tfrecord\)",
    ):
        tfsql.dataset(tmp_path)


def test_scalar_broken_later_is_a_schema_error(tmp_path):
    rows = [{"v": 1}] * 5 + [{"v": [1, 2]}]
    write_examples(tmp_path / "a.tfrecord", rows)
    with pytest.raises(
        SchemaError, match=r"feature 'v' holds several values in .*a.tfrecord, record 5 at byte \d+.*lists='always'"
    ) as info:
        tfsql.read_tfrecord(tmp_path, infer_sample=3)
    assert info.value.record_index == 5
    assert tfsql.read_tfrecord(tmp_path, infer_sample=3, lists="always").column("v").to_pylist()[-1] == [1, 2]


def test_kind_mismatch_at_read_names_feature_and_record(tmp_path):
    write_examples(tmp_path / "a.tfrecord", [{"v": 1}, {"v": 2}, {"v": "x"}])
    with pytest.raises(
        SchemaError,
        match=r"feature 'v' holds bytes_list in .*a.tfrecord, record 2 at byte \d+, but column 'v' is read from int64_list",
    ):
        tfsql.read_tfrecord(tmp_path, schema={"v": pa.int64()})


def test_user_schema_casts_and_range_checks(tmp_path):
    write_examples(
        tmp_path / "a.tfrecord",
        [{"i": 1, "f": 0.5, "b": 1, "v": [1.0, 2.0]}, {"i": 300, "f": 2.0, "b": 0, "v": [3.0, 4.0]}],
    )
    table = tfsql.read_tfrecord(
        tmp_path,
        schema={"i": pa.int16(), "f": pa.float64(), "b": pa.bool_(), "v": pa.list_(pa.float32(), 2)},
    )
    assert table.to_pylist() == [
        {"i": 1, "f": 0.5, "b": True, "v": [1.0, 2.0]},
        {"i": 300, "f": 2.0, "b": False, "v": [3.0, 4.0]},
    ]
    with pytest.raises(
        SchemaError, match=r"feature 'i' in .*a.tfrecord, record 1 does not fit the requested type int8"
    ):
        tfsql.read_tfrecord(tmp_path, schema={"i": pa.int8()})
    with pytest.raises(
        SchemaError,
        match=r"feature 'i' in .*a.tfrecord, record 1 holds 300, which does not fit the requested type bool \(only 0 and 1 do\)",
    ):
        tfsql.read_tfrecord(tmp_path, schema={"i": pa.bool_()})


def test_invalid_utf8_with_string_schema(tmp_path):
    write_examples(tmp_path / "a.tfrecord", [{"s": "ok"}, {"s": b"\xff"}])
    with pytest.raises(
        SchemaError,
        match=r"^feature 's' holds bytes that are not valid UTF-8 in .*a.tfrecord, record 1 at byte 31, but "
        r"column 's' is a string; read it as binary \(schema= giving it pa.binary\(\)\)$",
    ):
        tfsql.read_tfrecord(tmp_path, schema={"s": pa.string()})
    assert tfsql.read_tfrecord(tmp_path).column("s").to_pylist() == [b"ok", b"\xff"]


def test_sequence_example(tmp_path):
    payloads = [
        sequence_example({"id": 1}, {"tok": [[1, 2], [3]], "w": [[0.5]]}),
        sequence_example({"id": 2}, {"tok": [], "w": [[1.0, 2.0], NO_KIND]}),
        sequence_example({"id": 3}, {}),
    ]
    write_records(tmp_path / "s.tfrecord", payloads)
    table = tfsql.read_tfrecord(tmp_path, record_type="sequence_example")
    assert dict(zip(table.schema.names, table.schema.types)) == {
        "id": pa.int64(),
        "tok": pa.list_(pa.list_(pa.int64())),
        "w": pa.list_(pa.list_(pa.float32())),
    }
    assert table.select(["id", "tok", "w"]).to_pylist() == [
        {"id": 1, "tok": [[1, 2], [3]], "w": [[0.5]]},
        {"id": 2, "tok": [], "w": [[1.0, 2.0], None]},
        {"id": 3, "tok": None, "w": None},
    ]


def test_raw_records(tmp_path):
    write_records(tmp_path / "r.tfrecord", [b"abc", b"", b"\x00\x01"], compression="gzip")
    table = tfsql.read_tfrecord(tmp_path, record_type="bytes")
    assert table.to_pydict() == {"record": [b"abc", b"", b"\x00\x01"]}
    assert tfsql.dataset(tmp_path, record_type="ByteArray").count_rows() == 3


def test_count_rows_reads_headers_only(tmp_path, monkeypatch):
    spark_tree(tmp_path)
    ds = tfsql.dataset(tmp_path)

    def boom(*args, **kwargs):
        raise AssertionError("count_rows decoded records")

    monkeypatch.setattr(dataset_module.BlockDecoder, "decode", boom)
    assert ds.count_rows() == 12
    assert ds.count_rows(filter=pc.field("label") == 0) == 6


def test_corrupt_record_through_dataset(tmp_path):
    path = write_examples(tmp_path / "a.tfrecord", [{"x": i} for i in range(5)])
    data = bytearray(path.read_bytes())
    (length,) = struct.unpack_from("<Q", data, 0)
    second = 12 + length + 4
    data[second + 12] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptRecordError, match=rf"data CRC mismatch in .*a.tfrecord, record 1 at byte {second}"):
        tfsql.read_tfrecord(path, schema={"x": pa.int64()})
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        table = tfsql.read_tfrecord(path, schema={"x": pa.int64()}, on_corrupt="skip")
    assert table.column("x").to_pylist() == [0, 2, 3, 4]


def test_malformed_record_message_names_one_file_relative_record(tmp_path):
    # The C decoder counts records from the start of its batch (record 3 of the batch
    # holding records 4..7); the message names only the file's record 7.
    payloads = [example({"x": i}) for i in range(10)]
    payloads[7] = b"\x0a\x05\x0a"  # Example.features claims 5 bytes, 1 follows
    write_records(tmp_path / "a.tfrecord", payloads)
    with pytest.raises(CorruptRecordError) as info:
        tfsql.dataset(tmp_path, schema={"x": pa.int64()}, batch_size=4, threads=1).to_table()
    message = str(info.value)
    assert message.startswith("record is not a valid example protobuf in ")
    assert info.value.record_index == 7 and info.value.reason == "malformed"
    assert re.findall(r"record \d+", message) == ["record 7"], message


def test_with_options_changes_only_scan_time_options(tmp_path):
    write_examples(tmp_path / "a.tfrecord", [{"x": 1}])
    ds = tfsql.dataset(tmp_path)
    assert ds.with_options(threads=1, batch_size=7).options.batch_size == 7
    assert ds.with_options(record_type="ByteArray").options.record_type == "bytes"
    with pytest.raises(ValueError, match="with_options cannot change infer_sample: .*pass it to tfsql.dataset"):
        ds.with_options(infer_sample=5)
    with pytest.raises(TypeError, match="with_options: unknown option 'nope'"):
        ds.with_options(nope=1)
    with pytest.raises(ValueError, match="batch_size must be a positive integer, not 0"):
        ds.with_options(batch_size=0)


def test_memory_filesystem():
    fsspec = pytest.importorskip("fsspec")
    fs = fsspec.filesystem("memory")
    from tfrecord_files import frame

    try:
        with fs.open("/tfsql-test/k=a/part-0.tfrecord", "wb") as f:
            f.write(frame(example({"x": 1})) + frame(example({"x": 2})))
        with fs.open("/tfsql-test/k=b/part-0.tfrecord", "wb") as f:
            f.write(frame(example({"x": 3})))
        table = tfsql.read_tfrecord("memory://tfsql-test/**", filter=pc.field("k") == "b")
        assert table.to_pylist() == [{"x": 3, "k": "b"}]
    finally:
        fs.rm("/tfsql-test", recursive=True)


def test_missing_path_and_bad_options(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope"):
        tfsql.dataset(tmp_path / "nope")
    write_examples(tmp_path / "a.tfrecord", [{"x": 1}])
    with pytest.raises(ValueError, match="on_corrupt must be one of 'raise', 'skip'"):
        tfsql.dataset(tmp_path, on_corrupt="ignore")
    with pytest.raises(ValueError, match="unknown record_type 'proto'"):
        tfsql.dataset(tmp_path, record_type="proto")
    with pytest.raises(KeyError, match="column 'y' is not in the dataset"):
        tfsql.read_tfrecord(tmp_path, columns=["y"])


def test_pyarrow_dataset_api_surface(tmp_path):
    spark_tree(tmp_path)
    ds = tfsql.dataset(tmp_path)
    assert isinstance(ds, pa.dataset.Dataset)
    frags = ds.get_fragments(filter=pc.field("label") == 0)
    assert len(frags) == 2 and frags[0].partition_values == {"label": 0, "split": "test"}
    assert frags[0].to_table().num_rows == 3
    assert ds.filter(pc.field("label") == 1).count_rows() == 6
    assert ds.take([0, 4]).column("id").to_pylist() == ds.to_table().column("id").take([0, 4]).to_pylist()
    assert ds.replace_schema(pa.schema({"id": pa.int32()})).schema.names == ["id", "label", "split"]
    reader = ds.scanner(columns=["id"]).to_reader()
    assert isinstance(reader, pa.RecordBatchReader) and reader.read_all().num_rows == 12
    with pytest.raises(NotImplementedError, match="join"):
        ds.join(ds, "id")
    with pytest.raises(NotImplementedError, match="sort_by"):
        ds.sort_by("id")


def test_limit_does_not_open_files_it_does_not_need(tmp_path, monkeypatch):
    for i in range(6):
        write_examples(tmp_path / f"f{i}.tfrecord", [{"x": i * 10 + j} for j in range(5)])
    opened = []
    real = dataset_module.open_frame_reader
    monkeypatch.setattr(dataset_module, "open_frame_reader", lambda *a, **k: opened.append(a[1].path) or real(*a, **k))
    ds = tfsql.dataset(tmp_path, threads=2, infer_files=1)
    opened.clear()
    # missing_columns="insert": judging schema= reads the inference sample, which opens files
    read = tfsql.read_tfrecord(tmp_path, n_rows=7, threads=2, schema=ds.data_schema, missing_columns="insert")
    assert read.column("x").to_pylist() == [
        0,
        1,
        2,
        3,
        4,
        10,
        11,
    ]
    assert [p.rsplit("/", 1)[1] for p in opened] == ["f0.tfrecord", "f1.tfrecord"]


def test_select_files_and_partition_values(tmp_path):
    spark_tree(tmp_path)
    ds = tfsql.dataset(tmp_path)
    assert ds.partition_values.to_pylist() == [
        {"label": 0, "split": "test"},
        {"label": 0, "split": "train"},
        {"label": 1, "split": "test"},
        {"label": 1, "split": "test"},
        {"label": 1, "split": "train"},
    ]
    sub = ds.select_files([4])
    assert sub.files == [ds.files[4]]
    assert sub.to_table().column("id").to_pylist() == [100, 101, 102]
    assert sub.partition_values.to_pylist() == [{"label": 1, "split": "train"}]


def test_feature_missing_from_inferred_schema_is_reported_once(tmp_path):
    write_examples(tmp_path / "a.tfrecord", [{"x": 1}] * 3 + [{"x": 2, "late": 5}, {"x": 3, "late": 6}])
    ds = tfsql.dataset(tmp_path, infer_sample=2)
    assert ds.schema.names == ["x"]
    with pytest.warns(
        UserWarning,
        match=r"feature 'late' in .*a.tfrecord is not in the schema inferred from the sample.*infer_sample=None",
    ) as caught:
        assert ds.to_table().column("x").to_pylist() == [1, 1, 1, 2, 3]
    assert len([w for w in caught if "late" in str(w.message)]) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds.to_table()  # reported once per dataset
        tfsql.read_tfrecord(tmp_path, schema={"x": pa.int64()})  # a user schema excludes on purpose
    assert tfsql.read_tfrecord(tmp_path, infer_sample=None).column("late").to_pylist() == [None, None, None, 5, 6]


def test_feature_with_only_empty_lists_is_inferred_as_a_list(tmp_path):
    write_examples(tmp_path / "a.tfrecord", [{"e": ()}, {"e": ()}])
    table = tfsql.read_tfrecord(tmp_path)
    assert table.schema.field("e").type == pa.list_(pa.int64())
    assert table.column("e").to_pylist() == [[], []]


def test_on_corrupt_callable_receives_each_error(tmp_path):
    path = write_examples(tmp_path / "a.tfrecord", [{"x": i} for i in range(4)])
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF  # last record's data CRC
    path.write_bytes(bytes(data))
    seen = []
    table = tfsql.read_tfrecord(path, schema={"x": pa.int64()}, on_corrupt=seen.append)
    assert table.column("x").to_pylist() == [0, 1, 2]
    assert [(e.record_index, e.rest_of_file) for e in seen] == [(3, False)]
    assert str(seen[0]).startswith("data CRC mismatch in ") and seen[0].offset > 0


def test_fixed_size_list_length_mismatch_names_the_record(tmp_path):
    write_examples(tmp_path / "a.tfrecord", [{"v": [1.0, 2.0]}, {"v": [1.0, 2.0, 3.0]}])
    with pytest.raises(
        SchemaError,
        match=r"feature 'v' in .*a.tfrecord, record 1 holds 3 values, but the requested type fixed_size_list<item: float>\[2\] needs exactly 2",
    ) as info:
        tfsql.read_tfrecord(tmp_path, schema={"v": pa.list_(pa.float32(), 2)})
    assert info.value.record_index == 1


def test_batch_size_must_be_positive(tmp_path):
    write_examples(tmp_path / "a.tfrecord", [{"x": 1}])
    with pytest.raises(ValueError, match="batch_size must be a positive integer, not 0"):
        tfsql.dataset(tmp_path).scanner(batch_size=0)


def test_sequence_examples_read_as_examples_warn(tmp_path):
    write_records(tmp_path / "s.tfrecord", [sequence_example({"id": 1}, {"tok": [[1, 2]]})])
    with pytest.warns(
        UserWarning, match=r"s.tfrecord look like tf.train.SequenceExample.*record_type='sequence_example'"
    ):
        table = tfsql.read_tfrecord(tmp_path)
    assert table.to_pylist() == [{"id": 1}]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tfsql.read_tfrecord(tmp_path, record_type="sequence_example")
        write_examples(tmp_path / "e" / "e.tfrecord", [{"id": 1}])
        tfsql.read_tfrecord(tmp_path / "e")


def test_dataset_is_an_arrow_stream_for_other_writers(tmp_path):
    spark_tree(tmp_path / "in")
    ds = tfsql.dataset(tmp_path / "in")
    pa.dataset.write_dataset(ds, tmp_path / "pq", format="parquet")  # takes the stream, no C++ dataset
    assert pa.dataset.dataset(tmp_path / "pq").to_table().sort_by("id").equals(ds.to_table().sort_by("id"))
    assert pa.RecordBatchReader.from_stream(ds).read_all().num_rows == 12


# --------------------------------------------------------------------------------------
# option checks
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("name, value", [("infer_sample", 0), ("infer_sample", -1), ("infer_files", 0)])
def test_inference_bounds_must_be_positive(tmp_path, name, value):
    write_examples(tmp_path / "a.tfrecord", [{"x": 1}])
    with pytest.raises(ValueError, match=rf"{name} must be a positive integer or None \(all of them\), not {value}"):
        tfsql.dataset(tmp_path, **{name: value})


def test_negative_scan_limit_is_an_error(tmp_path):
    write_examples(tmp_path / "a.tfrecord", [{"x": 1}])
    with pytest.raises(ValueError, match=r"limit must be a non-negative integer or None, not -1"):
        tfsql.dataset(tmp_path).scanner(limit=-1)


# --------------------------------------------------------------------------------------
# counting what the scan reads
# --------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------
# the pyarrow Dataset API
# --------------------------------------------------------------------------------------


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
    with pytest.raises(
        TypeError,
        match=r"pyarrow.dataset.dataset\(\) cannot combine tfsql datasets; pass every "
        r"source to one tfsql.dataset\(\[...\]\) call instead",
    ):
        pads.dataset([ds, ds])
