"""The core's record reader (``codec.RecordReader``, tfsql/core/reader.c) and its
pure-Python twin (tfsql/_reference/reader.py): the same chunks, the same damage, the
same byte-range ends, over a descriptor or a Python file object."""

from __future__ import annotations

import gzip
import io
import os
import zlib

import numpy as np
import pytest

import tfsql.framing
from tfrecord_files import frame
from tfrecord_files import header as lying_header
from tfsql import _native, _reference
from tfsql.framing import FrameReader

PAYLOADS = [bytes([i]) * (i * 7 % 50) for i in range(40)]
FRAMED = [frame(p) for p in PAYLOADS]
DATA = b"".join(FRAMED)
HEADS = [sum(len(f) for f in FRAMED[:i]) for i in range(len(FRAMED) + 1)]  # + the end
CODECS = [pytest.param(_native, id="core"), pytest.param(_reference, id="reference")]


def python_read(data: bytes):
    def read(view, offset):
        chunk = data[offset : offset + len(view)]
        view[: len(chunk)] = chunk
        return len(chunk)

    return read


def drain(reader, **limits) -> list:
    """Every event of a reader: ("records", first, base, payloads) or ("damage", tuple)
    (damage skipped), then ("end", chain_end)."""
    events = []
    while True:
        got = reader.next(**limits)
        if got is None:
            events.append(("end", reader.chain_end))
            return events
        if isinstance(got, int):
            events.append(("damage", reader.damage[:5]))
            assert reader.skip(limits.get("max_record_bytes", (1 << 64) - 1)) == 0
            events.append(("resumed", reader.damage[5:7]))
            continue
        window, offsets, lengths, first, base = got
        view = memoryview(window)
        spans = zip(np.frombuffer(offsets, np.uint64), np.frombuffer(lengths, np.uint64))
        events.append(("records", first, [bytes(view[int(o) : int(o) + int(n)]) for o, n in spans]))


def both(data: bytes, compression: int = 0, **kwargs) -> list:
    """The events of the core's reader and of the twin, which must agree."""
    limits = {k: kwargs.pop(k) for k in ("max_records", "max_bytes", "max_record_bytes", "verify") if k in kwargs}
    seen = [
        drain(m.RecordReader(len(data), compression, "f", read=python_read(data), **kwargs), **limits)
        for m in (_native, _reference)
    ]
    assert seen[0] == seen[1]
    return seen[0]


def records_of(events: list) -> list[bytes]:
    return [p for e in events if e[0] == "records" for p in e[2]]


@pytest.mark.parametrize("read_size", [1, 100, 1 << 20])
@pytest.mark.parametrize("max_records", [1, 7, -1])
def test_every_record_once_whatever_the_window(read_size, max_records):
    events = both(DATA, read_size=read_size, read_max=4 * read_size, max_records=max_records)
    assert records_of(events) == PAYLOADS
    assert events[-1] == ("end", len(DATA))


@pytest.mark.parametrize("stop", sorted({s for h in HEADS for s in (h - 1, h, h + 1) if 0 <= s <= len(DATA)}))
def test_a_byte_range_stop_keeps_the_records_whose_header_starts_before_it(stop):
    """At every record boundary and a byte either side: the range's records are those
    whose header starts before ``stop``, and it ends at the next one's header."""
    owned = [p for p, h in zip(PAYLOADS, HEADS) if h < stop]
    events = both(DATA, stop=stop, read_size=64)
    assert records_of(events) == owned
    assert events[-1] == ("end", HEADS[len(owned)])


@pytest.mark.parametrize("cut", sorted({s for h in HEADS for s in (h - 1, h, h + 1) if 0 < s < len(DATA)}))
def test_two_ranges_give_every_record_once(cut):
    """Ranges [0, cut) and [its chain end, end): each record read exactly once."""
    first = both(DATA, stop=cut, read_size=64)
    chain_end = first[-1][1]
    second = both(DATA, start=chain_end, first_index=len(records_of(first)), read_size=64)
    assert records_of(first) + records_of(second) == PAYLOADS
    assert [e[1] for e in second if e[0] == "records"][:1] in ([], [len(records_of(first))])


def damaged(at: int, flip: int) -> bytes:
    data = bytearray(DATA)
    data[at] ^= flip
    return bytes(data)


@pytest.mark.parametrize(
    "data, damage, resumed, kept",
    [
        # a bad length CRC: resynchronised at the next record
        (damaged(HEADS[3] + 9, 0x10), (_native.FRAME_BAD_LENGTH_CRC, 3, HEADS[3]), (0, HEADS[4]), [3]),
        # a bad data CRC: the record is stepped over
        (damaged(HEADS[10] + 12, 0xFF), (_native.FRAME_BAD_DATA_CRC, 10, HEADS[10]), (0, 0), [10]),
        # a header claiming more than max_record_bytes, then nothing: the rest is lost
        (DATA + lying_header(1 << 40) + b"\x00" * 30, (_native.FRAME_TOO_LONG, 40, len(DATA)), (1, 0), []),
        # more than the file holds
        (DATA[: HEADS[39] + 20], (_native.FRAME_PAST_END, 39, HEADS[39]), (1, 0), [39]),
    ],
)
def test_damage_and_resync_agree_with_the_twin(data, damage, resumed, kept):
    events = both(data, max_record_bytes=1 << 20)
    assert [e[1][:3] for e in events if e[0] == "damage"] == [damage]
    assert [e[1] for e in events if e[0] == "resumed"] == [resumed]
    assert records_of(events) == [p for i, p in enumerate(PAYLOADS) if i not in kept]


def test_a_damaged_range_ends_without_a_chain_end():
    data = bytearray(DATA)
    data[HEADS[5] + 9] ^= 0x10
    events = both(bytes(data), stop=HEADS[7])  # resumed at record 6, inside the range
    assert records_of(events) == PAYLOADS[:5] + PAYLOADS[6:7] and events[-1] == ("end", HEADS[7])
    events = both(bytes(data), stop=HEADS[5] + 3)  # no boundary before the range's stop
    assert records_of(events) == PAYLOADS[:5] and events[-1] == ("end", None)


def padded_members() -> bytes:
    return gzip.compress(DATA[: HEADS[10]]) + gzip.compress(DATA[HEADS[10] :]) + b"\x00" * 100


@pytest.mark.parametrize("read_size", [1, 64, 1 << 20])
def test_gzip_members_and_zero_padding(read_size):
    assert records_of(both(padded_members(), _native.READER_GZIP, read_size=read_size)) == PAYLOADS


def test_zlib_and_damaged_streams():
    assert records_of(both(zlib.compress(DATA), _native.READER_ZLIB)) == PAYLOADS
    for data, status in [
        (gzip.compress(DATA)[:-30], _native.READER_STREAM_TRUNCATED),
        (DATA, _native.READER_STREAM_CORRUPT),
    ]:
        got = [
            m.RecordReader(len(data), m.READER_GZIP, "f", read=python_read(data)).next() for m in (_native, _reference)
        ]
        assert got == [_native.READER_DAMAGE] * 2


class PlainFile:
    """A file object with only read and seek (no readinto, no descriptor), as some
    fsspec files are."""

    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)

    def read(self, n: int = -1) -> bytes:
        return self._data.read(n)

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._data.seek(offset, whence)

    def close(self) -> None:
        pass


@pytest.mark.parametrize("codec", CODECS)
def test_gzip_members_and_padding_through_a_python_file_object(codec, monkeypatch):
    monkeypatch.setattr(tfsql.framing, "codec", codec)
    for compression in ("gzip", "infer"):
        reader = FrameReader(PlainFile(padded_members()), path="f.gz", compression=compression, chunk_bytes=100)
        got = [bytes(b.buf[int(o) : int(o) + int(n)]) for b in reader.blocks() for o, n in zip(b.offsets, b.lengths)]
        assert got == PAYLOADS
        assert reader.chain_end == len(DATA)


@pytest.mark.parametrize("codec", CODECS)
def test_a_local_file_is_read_by_descriptor_and_checked(codec, monkeypatch, tmp_path):
    """A tfsql.file_guard file is read with pread; a change since listing is the
    guard's error, found after the chunk that read it."""
    from tfsql.errors import FileChangedError
    from tfsql.file_guard import GuardedFile

    monkeypatch.setattr(tfsql.framing, "codec", codec)
    path = tmp_path / "f.tfrecord"
    path.write_bytes(DATA)
    stamps: dict = {}
    with GuardedFile.open(str(path), display="f", size=len(DATA), stamps=stamps) as raw:
        blocks = list(FrameReader(raw, path="f").blocks())
    assert sum(len(b) for b in blocks) == len(PAYLOADS)
    with GuardedFile.open(str(path), display="f", size=len(DATA), stamps=stamps) as raw:
        os.truncate(path, HEADS[20])
        with pytest.raises(FileChangedError, match="size"):
            list(FrameReader(raw, path="f").blocks())


def test_without_a_zlib_library_compressed_files_read_through_the_reference(monkeypatch):
    """Where the core finds no libz to load (Windows), Python's zlib inflates them."""
    original = _native.RecordReader

    def no_zlib(size, compression, path, **kwargs):
        if compression != _native.READER_PLAIN:
            raise OSError(f"{path}: reading compressed files needs the zlib library (libz.so.1), which was not found")
        return original(size, compression, path, **kwargs)

    monkeypatch.setattr(tfsql.framing, "codec", _native)
    monkeypatch.setattr(_native, "RecordReader", no_zlib)
    reader = FrameReader(io.BytesIO(padded_members()), path="f.gz", compression="gzip")
    assert [len(b) for b in reader.blocks(max_records=-1)] == [len(PAYLOADS)]
