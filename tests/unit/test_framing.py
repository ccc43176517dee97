"""Framing reader: blocks, compression, and precise errors for damaged files, through
the core's record reader and through its pure-Python twin (the same expectations)."""

from __future__ import annotations

import gzip
import io
import warnings
import zlib

import pytest

import tfsql.framing

from tfrecord_files import example, frame
from tfrecord_files import header as _lying_header
from tfsql._reference import FRAME_BAD_LENGTH_CRC, FRAME_OK, FRAME_TOO_LONG, FRAME_TRUNCATED
from tfsql.errors import CorruptRecordError
from tfsql.framing import FrameReader, count_plain_records, detect_compression
from tfsql.options import read_compression


@pytest.fixture(autouse=True, params=["core", "reference"])
def reader_codec(request, monkeypatch):
    """Each test runs on the C core's reader and on the reference twin."""
    from tfsql import _native, _reference

    monkeypatch.setattr(tfsql.framing, "codec", _native if request.param == "core" else _reference)


PAYLOADS = [example({"i": i, "s": "x" * i}) for i in range(20)]
FRAMED = [frame(p) for p in PAYLOADS]
DATA = b"".join(FRAMED)


def record_offset(index: int) -> int:
    return sum(len(f) for f in FRAMED[:index])


def read_all(data: bytes, **kwargs) -> list[bytes]:
    reader_kwargs = {k: kwargs.pop(k) for k in ("verify", "on_corrupt", "chunk_bytes", "compression") if k in kwargs}
    reader = FrameReader(io.BytesIO(data), path="f.tfrecord", **reader_kwargs)
    out = []
    for block in reader.blocks(**kwargs):
        for off, length in zip(block.offsets, block.lengths):
            out.append(bytes(block.buf[int(off) : int(off) + int(length)]))
    return out


@pytest.mark.parametrize("chunk_bytes", [1, 7, 64, 1000, 1 << 20])
@pytest.mark.parametrize("max_records", [1, 3, 65536])
def test_blocks_return_every_record_whatever_the_chunking(chunk_bytes, max_records):
    assert read_all(DATA, chunk_bytes=chunk_bytes, max_records=max_records) == PAYLOADS


def test_blocks_respect_record_and_byte_bounds():
    reader = FrameReader(io.BytesIO(DATA), path="f")
    sizes = [len(b) for b in reader.blocks(max_records=6)]
    assert sizes == [6, 6, 6, 2]
    reader = FrameReader(io.BytesIO(DATA), path="f")
    blocks = list(reader.blocks(max_records=100, max_bytes=60))
    assert all(int(b.lengths.sum()) <= 60 or len(b) == 1 for b in blocks)
    assert sum(len(b) for b in blocks) == 20
    assert [b.first_index for b in blocks] == sorted(b.first_index for b in blocks)


def test_empty_stream_yields_nothing():
    assert read_all(b"") == []


@pytest.mark.parametrize(
    "compression, message",
    [
        # a plain file's size vouches that the record cannot be whole: no need to read on
        (None, "its header claims 30 bytes but the file ends 20 bytes after the record's start"),
        ("gzip", "the file ends 20 bytes into it"),
    ],
)
def test_truncated_payload_names_record_and_offset(compression, message):
    data = DATA[: record_offset(5) + 20]
    if compression == "gzip":
        data = gzip.compress(data)
    with pytest.raises(
        CorruptRecordError, match=rf"truncated record in f.tfrecord, record 5 at byte {record_offset(5)}: {message}"
    ) as info:
        read_all(data, compression=compression)
    assert (info.value.path, info.value.record_index, info.value.offset) == ("f.tfrecord", 5, record_offset(5))


def test_truncated_header():
    data = DATA[: record_offset(3) + 5]
    with pytest.raises(CorruptRecordError, match="record 3") as info:
        read_all(data, chunk_bytes=16)
    assert info.value.offset == record_offset(3)


def test_bad_data_crc_raises_then_skip_drops_only_that_record():
    data = bytearray(DATA)
    data[record_offset(4) + 12 + 2] ^= 0xFF
    with pytest.raises(
        CorruptRecordError, match=r"data CRC mismatch in f.tfrecord, record 4 at byte \d+.*on_corrupt='skip'"
    ) as info:
        read_all(bytes(data))
    assert info.value.record_index == 4 and info.value.offset == record_offset(4)
    with pytest.warns(UserWarning, match="record 4"):
        got = read_all(bytes(data), on_corrupt="skip")
    assert got == PAYLOADS[:4] + PAYLOADS[5:]


def test_verify_false_ignores_data_crc():
    data = bytearray(DATA)
    data[-1] ^= 0x01  # the last record's data CRC
    assert read_all(bytes(data), verify=False) == PAYLOADS
    with pytest.raises(CorruptRecordError, match="record 19"):
        read_all(bytes(data))


def test_bad_length_crc_skip_resumes_at_the_next_record():
    data = bytearray(DATA)
    data[record_offset(7) + 9] ^= 0x10
    with pytest.raises(CorruptRecordError, match="length CRC mismatch in f.tfrecord, record 7"):
        read_all(bytes(data))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = read_all(bytes(data), on_corrupt="skip")
    assert got == PAYLOADS[:7] + PAYLOADS[8:]
    assert f"skipped bytes {record_offset(7)}-{record_offset(8)}, up to the next record" in str(caught[0].message)


def test_bad_length_crc_of_the_last_record_skips_the_rest_of_file():
    data = bytearray(DATA)
    data[record_offset(len(PAYLOADS) - 1) + 9] ^= 0x10
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = read_all(bytes(data), on_corrupt="skip")
    assert got == PAYLOADS[:-1]
    assert "skipped the rest of the file" in str(caught[0].message)


def test_not_a_tfrecord_hints_at_byte_zero():
    with pytest.raises(CorruptRecordError, match="at byte 0.*not a TFRecord file") as info:
        read_all(b"hello, this is a CSV file\n1,2,3\n")
    assert info.value.record_index == 0 and info.value.offset == 0


def test_detect_compression():
    assert detect_compression(DATA[:12]) is None
    assert detect_compression(gzip.compress(DATA)[:12]) == "gzip"
    assert detect_compression(zlib.compress(DATA)[:12]) == "zlib"
    assert detect_compression(b"") is None


def test_detect_prefers_valid_header_over_gzip_magic():
    # A record of 0x8b1f bytes starts with the gzip magic but has a valid length CRC.
    payload = b"a" * 0x8B1F
    assert frame(payload)[:2] == b"\x1f\x8b"
    assert detect_compression(frame(payload)[:12]) is None


@pytest.mark.parametrize("compression", ["gzip", "zlib"])
def test_decompressed_streams_read_back(compression):
    packed = gzip.compress(DATA) if compression == "gzip" else zlib.compress(DATA)
    for declared in (compression, "infer"):
        reader = FrameReader(io.BytesIO(packed), path="f", compression=read_compression(declared), chunk_bytes=100)
        assert [
            bytes(b.buf[int(o) : int(o) + int(n)]) for b in reader.blocks() for o, n in zip(b.offsets, b.lengths)
        ] == PAYLOADS


def test_concatenated_gzip_members_are_one_stream():
    packed = gzip.compress(DATA[: record_offset(10)]) + gzip.compress(DATA[record_offset(10) :])
    assert sum(len(b) for b in FrameReader(io.BytesIO(packed), path="f", compression="gzip").blocks()) == 20


def test_truncated_gzip_is_an_error():
    packed = gzip.compress(DATA)[:-30]
    with pytest.raises(CorruptRecordError, match="gzip stream of f.gz ends early"):
        list(FrameReader(io.BytesIO(packed), path="f.gz", compression="gzip").blocks())


def test_wrong_compression_is_a_clear_error():
    with pytest.raises(CorruptRecordError, match="gzip data of f is corrupt.*compression=None"):
        list(FrameReader(io.BytesIO(DATA), path="f", compression="gzip").blocks())


def test_read_compression_rejects_unknown():
    with pytest.raises(ValueError, match="unknown compression 'lz4'"):
        read_compression("lz4")


def test_blocks_limit_stops_after_that_many_records():
    reader = FrameReader(io.BytesIO(DATA), path="f", chunk_bytes=64)
    blocks = list(reader.blocks(max_records=3, limit=7))
    assert max(len(b) for b in blocks) <= 3 and sum(len(b) for b in blocks) == 7
    assert [bytes(b.buf[int(o) : int(o) + int(n)]) for b in blocks for o, n in zip(b.offsets, b.lengths)] == PAYLOADS[
        :7
    ]
    assert reader.records_read == 7
    assert sum(len(b) for b in FrameReader(io.BytesIO(DATA), path="f").blocks(max_records=-1, limit=5)) == 5
    assert list(FrameReader(io.BytesIO(DATA), path="f").blocks(limit=0)) == []


COUNT_CASES = {
    "good": (DATA, (20, len(DATA), FRAME_OK)),
    "empty": (b"", (0, 0, FRAME_OK)),
    "truncated payload": (DATA[:-3], (19, record_offset(19), FRAME_TRUNCATED)),
    "truncated header": (DATA + b"\x01\x02", (20, len(DATA), FRAME_TRUNCATED)),
    "bad length crc": (FRAMED[0] + b"\x00" * 12 + DATA, (1, len(FRAMED[0]), FRAME_BAD_LENGTH_CRC)),
    "too long": (FRAMED[0] + _lying_header(1 << 40) + DATA, (1, len(FRAMED[0]), FRAME_TOO_LONG)),
    "past the end": (FRAMED[0] + _lying_header(1000) + b"\x00" * 100, (1, len(FRAMED[0]), FRAME_TRUNCATED)),
}


@pytest.mark.parametrize("case", sorted(COUNT_CASES))
def test_count_headers_native_and_reference_agree(case, tmp_path):
    from tfsql import _native, _reference

    data, (count, end, status) = COUNT_CASES[case]
    path = tmp_path / "f.tfrecord"
    path.write_bytes(data)
    with open(path, "rb") as f:
        results = [m.count_headers(f.fileno(), 0, len(data), 1 << 31) for m in (_native, _reference)]
    assert results[0] == results[1]
    assert results[0][:3] == (count, end, status)
    if status == FRAME_TOO_LONG:
        assert results[0][3] == 1 << 40


@pytest.mark.parametrize("case", ["too long", "past the end", "truncated payload", "bad length crc"])
def test_count_plain_records_names_record_and_offset(case, tmp_path):
    data, (count, end, _) = COUNT_CASES[case]
    path = tmp_path / "f.tfrecord"
    path.write_bytes(data)
    with open(path, "rb") as f, pytest.raises(CorruptRecordError) as info:
        count_plain_records(f.fileno(), path=str(path), size=len(data))
    assert (info.value.record_index, info.value.offset) == (count, end)
    assert f"record {count} at byte {end}" in str(info.value)


def test_pooled_buffers_are_reused_only_once_nothing_holds_them():
    """A scan's buffer pool (tfsql.buffers): blocks still held keep their bytes (their
    buffer is not handed out again); dropped blocks give their buffer back."""
    from tfsql.buffers import BufferPool

    payloads = [bytes([i]) * (100 + i) for i in range(200)]
    data = b"".join(frame(p) for p in payloads)
    pool = BufferPool(max_buffers=4)
    kept = list(FrameReader(io.BytesIO(data), path="f", chunk_bytes=1000, buffers=pool).blocks())
    assert len(kept) > 10
    got = [bytes(b.buf[int(o) : int(o) + int(n)]) for b in kept for o, n in zip(b.offsets, b.lengths)]
    assert got == payloads
    del kept, got
    seen = set()
    for block in FrameReader(io.BytesIO(data), path="f", chunk_bytes=1000, buffers=pool).blocks():
        seen.add(id(block.buf.obj))
        assert [bytes(block.buf[int(o) : int(o) + int(n)]) for o, n in zip(block.offsets, block.lengths)] == payloads[
            block.first_index : block.first_index + len(block)
        ]
        del block
    assert len(seen) <= 4  # the pool's buffers, reused chunk after chunk
