"""``on_corrupt="skip"`` gives the same rows whatever the threads, the byte ranges and
the piece reading: where framing is lost (a record length whose CRC fails), reading
resumes at the next offset where a record's both CRCs check (issue: one answer for
corrupt files), and the warning names the skipped bytes."""

from __future__ import annotations

import gzip
import struct
import warnings

import numpy as np
import pytest

import tfsql
from tfsql._codec import codec

RECORD = 1000
FRAMED = RECORD + 16


def write_raw(path, n: int, corrupt: list[int], *, compress: bool = False) -> None:
    """``n`` records of 1,000 bytes (record ``i`` starts with its id as 4 bytes), the
    length of each record in ``corrupt`` overwritten with 5,000 (its length CRC stale)."""
    data = b"".join(struct.pack("<I", i) + bytes([i % 251]) * (RECORD - 4) for i in range(n))
    framed, _ = codec.encode_frames(data, np.arange(0, n * RECORD + 1, RECORD, dtype=np.int64))
    buf = bytearray(framed)
    for i in corrupt:
        buf[i * FRAMED : i * FRAMED + 8] = struct.pack("<Q", 5000)
    path.write_bytes(gzip.compress(bytes(buf), compresslevel=1) if compress else bytes(buf))


def ids(path, **options) -> tuple[list[int], list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = tfsql.read_tfrecord(str(path), record_type="bytes", on_corrupt="skip", **options)
    got = [struct.unpack_from("<I", v)[0] for v in table.column(0).to_pylist()]
    return got, [str(w.message) for w in caught]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("split_bytes", [None, 4096, 16384])
def test_skip_resynchronises_at_the_next_record_whatever_the_split(tmp_path, threads, split_bytes):
    path = tmp_path / "c.tfrecord"
    write_raw(path, 100, [10])
    got, warned = ids(path, threads=threads, split_bytes=split_bytes)
    assert got == [i for i in range(100) if i != 10]
    assert len(warned) == 1
    assert "length CRC mismatch" in warned[0] and f"at byte {10 * FRAMED}" in warned[0]
    assert f"skipped bytes {10 * FRAMED}-{11 * FRAMED}, up to the next record whose CRCs check" in warned[0]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("split_bytes", [None, 1 << 20])
def test_skip_is_the_same_in_pieces_of_a_large_file(tmp_path, threads, split_bytes):
    # 5 MB: read in pieces by the decode threads; corrupt lengths in the first piece, at a
    # piece boundary (4 MiB) and near the end.
    n = 5200
    corrupt = [10, (4 << 20) // FRAMED, (4 << 20) // FRAMED + 1, n - 2]
    path = tmp_path / "c.tfrecord"
    write_raw(path, n, corrupt)
    got, warned = ids(path, threads=threads, split_bytes=split_bytes)
    assert got == [i for i in range(n) if i not in corrupt]
    assert len(warned) == 3  # two adjacent bad records are one skipped region


def test_skip_resynchronises_in_a_gzip_stream(tmp_path):
    path = tmp_path / "c.tfrecord.gz"
    write_raw(path, 600, [10, 400], compress=True)
    got, warned = ids(path, compression="gzip")
    assert got == [i for i in range(600) if i not in (10, 400)]
    assert len(warned) == 2


def test_a_bad_length_with_no_record_after_it_skips_the_rest(tmp_path):
    path = tmp_path / "c.tfrecord"
    write_raw(path, 20, [19])
    got, warned = ids(path)
    assert got == list(range(19))
    assert "skipped the rest of the file" in warned[0]


def test_raise_names_the_bad_length_as_before(tmp_path):
    path = tmp_path / "c.tfrecord"
    write_raw(path, 100, [10])
    with pytest.raises(
        tfsql.CorruptRecordError, match=f"length CRC mismatch in .*c.tfrecord, record 10 at byte {10 * FRAMED}"
    ):
        tfsql.read_tfrecord(str(path), record_type="bytes")
