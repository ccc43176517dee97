"""Record offset index sidecars (tfsql.record_index, `tfsql index`) and the windowed
header walk behind count_rows (codec.count_headers / header_offsets)."""

from __future__ import annotations

import gzip
import os
import struct
import warnings

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfsql
from tfrecord_files import frame, masked_crc
from tfsql import _native, _reference
from tfsql._reference import FRAME_BAD_LENGTH_CRC, FRAME_OK
from tfsql.cli import main
from tfsql.record_index import StaleIndexWarning, index_path, indexed_count, write_index


def _walk(data: bytes, tmp_path, module) -> tuple:
    path = tmp_path / "f.tfrecord"
    path.write_bytes(data)
    with open(path, "rb") as f:
        offsets, end, status, length = module.header_offsets(f.fileno(), 0, len(data), 1 << 31)
        count = module.count_headers(f.fileno(), 0, len(data), 1 << 31)
    offsets = np.frombuffer(offsets, dtype=np.uint64).tolist()
    assert count == (len(offsets), end, status, length)
    return offsets, end, status


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([0, 1, 100, 4000, 4100, 70_000]), max_size=12), st.integers(0, 40))
def test_windowed_header_walk_matches_the_reference(tmp_path_factory, sizes, damage):
    """Small records (read 64 KiB at a time) next to large ones (one header read each),
    with a corrupt header somewhere: the C walk equals the pure-Python one."""
    tmp_path = tmp_path_factory.mktemp("walk")
    frames = [frame(bytes([i % 251]) * n) for i, n in enumerate(sizes)]
    data = bytearray(b"".join(frames))
    if frames and damage < len(frames):
        at = sum(len(f) for f in frames[:damage])
        data[at] ^= 0xFF  # the length no longer matches its CRC
    expected = _walk(bytes(data), tmp_path, _reference)
    assert _walk(bytes(data), tmp_path, _native) == expected
    if frames and damage < len(frames):
        assert expected[2] == FRAME_BAD_LENGTH_CRC and len(expected[0]) == damage
    else:
        assert expected[2] == FRAME_OK
        assert expected[0] == [sum(len(f) for f in frames[:i]) for i in range(len(frames))]


def _write(path, n: int = 50, blob: int = 3000) -> str:
    table = pa.table({"x": list(range(n)), "b": [b"z" * (blob + i) for i in range(n)]})
    tfsql.write_tfrecord(table, str(path))
    return str(path)


def test_index_has_the_dali_and_vahidk_format(tmp_path):
    """One 'offset size' line per record: the header's offset, the framed size."""
    path = _write(tmp_path / "a.tfrecord")
    assert write_index(path) == 50
    lines = open(index_path(path)).read().splitlines()
    data = open(path, "rb").read()
    pos = 0
    for line in lines:  # what DALI's / vahidk's readers do with it
        offset, size = (int(v) for v in line.split(" "))
        assert offset == pos
        (length,) = struct.unpack_from("<Q", data, offset)
        assert size == 12 + length + 4
        pos += size
    assert pos == len(data)
    assert np.loadtxt(index_path(path), dtype=np.int64)[:, 0].tolist() == [int(x.split()[0]) for x in lines]


def test_count_rows_uses_a_consistent_index(tmp_path, monkeypatch):
    path = _write(tmp_path / "a.tfrecord")
    write_index(path)
    import tfsql.scanning

    def fail(*args, **kwargs):
        raise AssertionError("the headers were read")

    monkeypatch.setattr(tfsql.scanning, "count_plain_records", fail)
    assert tfsql.dataset(path).count_rows() == 50
    assert tfsql.dataset(str(tmp_path)).count_rows() == 50


def test_directories_skip_index_sidecars(tmp_path):
    _write(tmp_path / "a.tfrecord")
    write_index(str(tmp_path / "a.tfrecord"))
    ds = tfsql.dataset(str(tmp_path))
    assert [os.path.basename(f) for f in ds.files] == ["a.tfrecord"]
    assert ds.to_table().num_rows == 50


def test_a_stale_index_is_ignored_with_a_warning(tmp_path):
    path = _write(tmp_path / "a.tfrecord")
    write_index(path)
    with open(path, "ab") as f:  # two more records: the index no longer ends at the end
        f.write(frame(b"x") + frame(b"y"))
    with pytest.warns(StaleIndexWarning, match="last record ends at byte"):
        assert tfsql.dataset(path, record_type="bytes").count_rows() == 52
    write_index(path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tfsql.dataset(path, record_type="bytes").count_rows() == 52


def test_an_index_older_than_its_file_is_ignored(tmp_path):
    path = _write(tmp_path / "a.tfrecord")
    write_index(path)
    stat = os.stat(path)
    os.utime(index_path(path), ns=(stat.st_atime_ns, stat.st_mtime_ns - 10**9))
    with pytest.warns(StaleIndexWarning, match="newer than its index"):
        assert indexed_count(path) is None


def test_a_same_size_rewrite_with_other_records_is_caught(tmp_path):
    """Another file of the same size (records of other lengths) fails the check of the
    header at the index's last offset."""
    path = _write(tmp_path / "a.tfrecord", n=2, blob=100)
    write_index(path)
    size = os.path.getsize(path)
    first = frame(b"q" * 10)
    rest = size - len(first) - 16
    with open(path, "wb") as f:
        f.write(first + frame(b"r" * rest))
    os.utime(index_path(path))  # even with a newer index
    with pytest.warns(StaleIndexWarning):
        assert indexed_count(path) is None
    with pytest.warns(StaleIndexWarning):
        assert tfsql.dataset(path, record_type="bytes").count_rows() == 2


def test_an_index_that_is_not_an_index_is_ignored(tmp_path):
    path = _write(tmp_path / "a.tfrecord")
    with open(index_path(path), "w") as f:
        f.write("hello\n")
    with pytest.warns(StaleIndexWarning, match="not 'offset size'"):
        assert tfsql.dataset(path, record_type="bytes").count_rows() == 50


def test_empty_file_and_empty_index(tmp_path):
    path = tmp_path / "e.tfrecord"
    path.write_bytes(b"")
    assert write_index(str(path)) == 0
    assert open(index_path(str(path))).read() == ""
    assert indexed_count(str(path)) == 0


def test_a_corrupt_file_is_not_indexed(tmp_path):
    path = tmp_path / "c.tfrecord"
    good = frame(b"abc")
    head = struct.pack("<Q", 5)
    path.write_bytes(good + head + struct.pack("<I", masked_crc(head) ^ 1) + b"x" * 9)
    with pytest.raises(tfsql.CorruptRecordError, match=r"record 1 at byte 19"):
        write_index(str(path))
    assert not os.path.exists(index_path(str(path)))


def test_cli_index_then_count(tmp_path, capsys):
    _write(tmp_path / "a.tfrecord")
    _write(tmp_path / "b.tfrecord", n=7)
    (tmp_path / "c.tfrecord.gz").write_bytes(gzip.compress(frame(b"x")))
    assert main(["index", str(tmp_path), "-v"]) == 0
    captured = capsys.readouterr()
    assert "skipped" in captured.err and "c.tfrecord.gz" in captured.err
    assert os.path.exists(tmp_path / ".a.tfrecord.idx") and os.path.exists(tmp_path / ".b.tfrecord.idx")
    assert not os.path.exists(tmp_path / ".c.tfrecord.gz.idx")
    assert main(["count", str(tmp_path)]) == 0
    assert capsys.readouterr().out.strip() == "58"
