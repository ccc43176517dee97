"""Clear errors for odd inputs (issue 12, item 5): feature names that are not UTF-8, and
``tfsql convert`` deciding its source format from options and contents."""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tfsql
from tfsql._codec import codec
from tfsql.cli import main
from tfsql.errors import CorruptRecordError


def _field(number: int, payload: bytes) -> bytes:
    assert len(payload) < 128
    return bytes([number << 3 | 2, len(payload)]) + payload


def _example(name: bytes, value: int) -> bytes:
    """An Example with one int64 feature, built by hand (protobuf refuses non-UTF-8 keys)."""
    feature = _field(3, _field(1, bytes([value])))  # int64_list, packed
    return _field(1, _field(1, _field(1, name) + _field(2, feature)))


@pytest.fixture
def non_utf8_file(tmp_path) -> str:
    records = [_example(b"ok", 7), _example(b"bad\xff\xfename", 8)]
    data = b"".join(records)
    framed, _ = codec.encode_frames(data, np.array([0, len(records[0]), len(data)], dtype=np.int64))
    path = tmp_path / "names.tfrecord"
    path.write_bytes(bytes(framed))
    return str(path)


def test_non_utf8_feature_name_is_a_corrupt_record_naming_file_record_and_bytes(non_utf8_file):
    """A feature name is a proto3 string: protobuf (the reference decoder, TensorFlow)
    refuses a record whose name is not UTF-8, whichever columns are read."""
    for read in (tfsql.read_tfrecord, tfsql.infer_schema, tfsql.dataset):
        with pytest.raises(CorruptRecordError) as info:
            read(non_utf8_file)
        message = str(info.value)
        assert f"record is not a valid example protobuf in {non_utf8_file}, record 1 at byte 31" in message
        assert (info.value.path, info.value.record_index, info.value.offset) == (non_utf8_file, 1, 31)


def test_non_utf8_feature_name_is_refused_with_a_schema_too(non_utf8_file):
    with pytest.raises(CorruptRecordError, match="record 1 at byte 31"):
        tfsql.read_tfrecord(non_utf8_file, schema={"ok": pa.int64()})


def test_non_utf8_feature_name_exits_1_in_the_cli(non_utf8_file, capsys):
    assert main(["head", non_utf8_file]) == 1
    err = capsys.readouterr().err
    assert "record 1 at byte 31" in err and "not a valid example protobuf" in err and "Traceback" not in err


@pytest.fixture
def tfrecord_dir(tmp_path) -> str:
    path = tmp_path / "src"
    tfsql.write_tfrecord(pa.table({"x": [1, 2, 3]}), path)
    return str(path)


def test_convert_tfrecord_directory_with_a_stray_meta_json_is_a_usage_error(tfrecord_dir, tmp_path, capsys):
    with open(os.path.join(tfrecord_dir, "meta.json"), "w") as f:
        json.dump({"rows": 3}, f)
    assert main(["convert", tfrecord_dir, str(tmp_path / "out.parquet")]) == 2
    err = capsys.readouterr().err
    assert f"{tfrecord_dir} holds files of several formats: 1 json (meta.json), 1 tfrecord (part-" in err
    assert "Traceback" not in err
    assert not (tmp_path / "out.parquet").exists()
    # Choosing the files converts them.
    pattern = os.path.join(tfrecord_dir, "*.tfrecord")
    assert main(["convert", pattern, str(tmp_path / "out.parquet"), "--from", "tfrecord"]) == 0
    assert pq.read_table(tmp_path / "out.parquet").column("x").to_pylist() == [1, 2, 3]


def test_convert_mixed_parquet_and_tfrecord_directory_lists_both(tfrecord_dir, tmp_path, capsys):
    pq.write_table(pa.table({"x": [4]}), os.path.join(tfrecord_dir, "extra.parquet"))
    assert main(["convert", tfrecord_dir, str(tmp_path / "out.json")]) == 2
    err = capsys.readouterr().err
    assert "holds files of several formats: 1 parquet (extra.parquet), 1 tfrecord (part-" in err


def test_convert_reads_extensionless_tfrecord_part_files_and_ignores_bookkeeping(tfrecord_dir, tmp_path):
    # Spark-style part files without an extension, next to _SUCCESS and a .crc file.
    (part,) = [n for n in os.listdir(tfrecord_dir) if n.endswith(".tfrecord")]
    shutil.move(os.path.join(tfrecord_dir, part), os.path.join(tfrecord_dir, "part-r-00000"))
    for name in ("_SUCCESS", ".part-r-00000.crc"):
        with open(os.path.join(tfrecord_dir, name), "w") as f:
            f.write("{}")
    assert main(["convert", tfrecord_dir, str(tmp_path / "out.parquet")]) == 0
    assert pq.read_table(tmp_path / "out.parquet").column("x").to_pylist() == [1, 2, 3]


def test_convert_json_directory_by_contents(tmp_path):
    src = tmp_path / "json"
    src.mkdir()
    (src / "rows").write_text('{"x": 1}\n{"x": 2}\n')
    assert main(["convert", str(src), str(tmp_path / "out")]) == 0
    assert tfsql.read_tfrecord(tmp_path / "out").column("x").to_pylist() == [1, 2]


def test_convert_gzip_tfrecord_file_without_extension(tmp_path):
    tfsql.write_tfrecord(pa.table({"x": [5]}), tmp_path / "gz", compression="gzip")
    (part,) = (tmp_path / "gz").glob("*.tfrecord.gz")
    plain_name = tmp_path / "data"
    shutil.copy(part, plain_name)
    assert main(["convert", str(plain_name), str(tmp_path / "out.parquet")]) == 0
    assert pq.read_table(tmp_path / "out.parquet").column("x").to_pylist() == [5]
