"""The inference sample of a file ends at infer_sample records or infer_bytes bytes."""

from __future__ import annotations

import pyarrow as pa
import pytest

import tfsql


@pytest.fixture()
def late_feature(tmp_path):
    # 200 records of ~100 bytes, then one that also holds "late" (a null omits it).
    table = pa.table({"x": list(range(201)), "pad": ["p" * 90] * 201, "late": [None] * 200 + [7]})
    tfsql.write_tfrecord(table, tmp_path)
    (tmp_path / "features.json").unlink()  # no column description: the sample types it
    return tmp_path


def test_the_byte_bound_ends_a_files_sample(late_feature):
    assert tfsql.infer_schema(late_feature).names == ["x", "pad", "late"]
    assert tfsql.infer_schema(late_feature, infer_bytes=1000).names == ["x", "pad"]
    with pytest.warns(UserWarning, match="'late' .* is not in the schema inferred from the sample"):
        assert tfsql.read_tfrecord(late_feature, infer_bytes=1000).num_rows == 201


def test_infer_sample_none_reads_every_record_whatever_infer_bytes(late_feature):
    schema = tfsql.infer_schema(late_feature, infer_bytes=1000, infer_sample=None)
    assert schema.names == ["x", "pad", "late"]


def test_records_past_the_byte_bound_are_still_read_and_checked(tmp_path):
    values = [1] * 300 + [[1, 2]]  # a list only after the sampled bytes
    tfsql.write_tfrecord(pa.table({"v": pa.array([[v] if isinstance(v, int) else v for v in values])}), tmp_path)
    (tmp_path / "features.json").unlink()  # no column description: the sample types it
    assert tfsql.infer_schema(tmp_path, infer_bytes=100).field("v").type == pa.int64()
    with pytest.raises(tfsql.SchemaError, match="holds several values"):
        tfsql.read_tfrecord(tmp_path, infer_bytes=100)
    assert tfsql.infer_schema(tmp_path, infer_bytes=None).field("v").type == pa.list_(pa.int64())


def test_infer_bytes_must_be_positive(tmp_path):
    tfsql.write_tfrecord(pa.table({"x": [1]}), tmp_path)
    with pytest.raises(ValueError, match="infer_bytes must be a positive integer"):
        tfsql.dataset(tmp_path, infer_bytes=0)


@pytest.mark.parametrize("infer_bytes", [300_000, 1 << 20])
def test_the_sample_reads_about_infer_bytes_not_the_next_doubled_read(tmp_path, monkeypatch, infer_bytes):
    """Reads grow by doubling from 256 KiB; a sample of about 1 MiB used to read 256 KiB +
    512 KiB + 1 MiB, nearly twice what it needed. With the read budget the reads stop
    at the sample (plus at most one 64 KiB read and the record that straddles it)."""
    tfsql.write_tfrecord(pa.table({"blob": [bytes([i % 256]) * 40_000 for i in range(200)]}), tmp_path)
    (tmp_path / "features.json").unlink()  # no column description: the sample reads the file
    readers = []
    original = tfsql.framing.codec.RecordReader

    def keeping(*args, **kwargs):
        readers.append(original(*args, **kwargs))
        return readers[-1]

    monkeypatch.setattr(tfsql.framing.codec, "RecordReader", keeping)
    assert tfsql.infer_schema(tmp_path, infer_bytes=infer_bytes).names == ["blob"]
    read = sum(reader.consumed for reader in readers)  # the bytes the core's reader read
    assert infer_bytes <= read <= infer_bytes + (64 << 10) + 40_100
