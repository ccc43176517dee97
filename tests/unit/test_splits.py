"""Splittable reads: byte ranges of one file partition its records exactly."""

from __future__ import annotations

import io
import os
import warnings

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tfrecord_files import frame
from tfrecord_files import header as valid_header

import tfsql
from tfsql import _reference as ref
from tfsql.errors import CorruptRecordError
from tfsql.splits import RangeReader, find_range_start, plan_ranges


def records_of(reader) -> list[bytes]:
    return [bytes(b.buf[int(o) : int(o) + int(n)]) for b in reader.blocks() for o, n in zip(b.offsets, b.lengths)]


def read_by_ranges(data: bytes, split: int) -> list[bytes]:
    """Every range read on its own (as Spark tasks do), the results concatenated."""
    out: list[bytes] = []
    for start, stop in plan_ranges(len(data), split):
        out += records_of(RangeReader(io.BytesIO(data), start, stop, len(data), path="f"))
    return out


# Payloads that look like TFRecord data from the inside: whole frames (one or a chain
# of several), a lone valid header, or random bytes around them.
frames = st.lists(st.binary(max_size=8), min_size=1, max_size=3).map(lambda ps: b"".join(frame(p) for p in ps))
pieces = st.one_of(st.binary(max_size=10), frames, st.integers(0, 2**40).map(valid_header))
payloads = st.lists(pieces, max_size=4).map(b"".join)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(payloads, max_size=6))
def test_every_split_size_partitions_the_records(records):
    data = b"".join(frame(p) for p in records)
    for split in range(1, len(data) + 2):
        assert read_by_ranges(data, split) == records, split


@settings(max_examples=15, deadline=None)
@given(st.lists(payloads, min_size=1, max_size=5))
def test_a_payload_that_is_a_whole_file_is_not_a_boundary(records):
    inner = b"".join(frame(p) for p in records)
    outer = [b"head", inner, inner + inner, b"tail"]
    data = b"".join(frame(p) for p in outer)
    for split in range(1, len(data) + 2, 3):
        assert read_by_ranges(data, split) == outer, split


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(payloads, payloads.map(frame), st.binary(max_size=40), st.binary(max_size=3).map(lambda b: b * 9)),
        max_size=6,
    ).map(lambda ps: b"".join(ps)),
    st.integers(0, 60),
    st.booleans(),
    st.integers(0, 64),
    st.sampled_from([-1, 0, 3, 255, 1 << 16, 1 << 24, 2 << 30, (1 << 63) - 1]),
)
def test_native_find_boundary_matches_the_reference(native, data, start, at_eof, lookahead, max_length):
    # framed records among payloads, random bytes and runs of a repeated pattern; with
    # max_length, candidates are rejected by their length before any CRC (and several
    # at once where a byte a plausible length has zero is not)
    start = min(start, len(data))
    for stop in (start, min(len(data), start + 7), len(data), len(data) + 20):
        args = (data, start, stop, at_eof, lookahead, max_length)
        assert native.find_boundary(*args) == ref.find_boundary(*args), args


def test_find_boundary_statuses(native):
    data = frame(b"abc") + frame(b"defg")
    assert native.find_boundary(data) == (native.BOUNDARY_FOUND, 0)
    assert native.find_boundary(data, 1) == (native.BOUNDARY_FOUND, 19)
    assert native.find_boundary(data, 20) == (native.BOUNDARY_NONE, len(data))
    assert native.find_boundary(data, 1, 19) == (native.BOUNDARY_NONE, 19)
    # The second record is cut off: with more of the file to come, read more first.
    assert native.find_boundary(data[:30], 1, at_eof=False) == (native.BOUNDARY_MORE, 19)
    assert native.find_boundary(data[:30], 1, at_eof=True) == (native.BOUNDARY_NONE, 30)
    with pytest.raises(ValueError, match="find_boundary"):
        native.find_boundary(data, 5, 2)


def test_the_data_crc_is_checked_at_a_resync_point_even_without_verification(tmp_path):
    good = [frame(b"r%d" % i) for i in range(6)]
    bad = bytearray(good[3])
    bad[13] ^= 1  # record 3's data no longer matches its CRC: it cannot be a boundary
    data = b"".join(good[:3]) + bytes(bad) + b"".join(good[4:])
    start = len(b"".join(good[:3])) - 1
    assert find_range_start(io.BytesIO(data), start, len(data), len(data)) == start + 1 + len(bad)


def write_file(path, records: list[bytes]) -> bytes:
    data = b"".join(frame(p) for p in records)
    path.write_bytes(data)
    return data


def test_scanner_splits_one_file_over_threads_in_order(tmp_path):
    table = pa.table({"i": list(range(3000)), "s": ["x" * (i % 50) for i in range(3000)]})
    tfsql.write_tfrecord(table, tmp_path / "t", num_shards=1)
    ds = tfsql.dataset(tmp_path / "t", threads=2, split_bytes=4096)
    [file] = [f for f in os.listdir(tmp_path / "t") if f.endswith(".tfrecord")]
    assert os.path.getsize(tmp_path / "t" / file) > 20 * 4096
    assert ds.to_table() == table
    assert tfsql.dataset(tmp_path / "t", threads=2, split_bytes=4096).head(5) == table.slice(0, 5)
    fragments = ds.get_fragments(split_bytes=10_000)
    assert len(fragments) > 5 and fragments[1].start == 10_000 == fragments[0].stop
    assert pa.concat_tables(f.to_table() for f in fragments) == table
    assert [f.count_rows() for f in fragments][0] < 3000


def test_compressed_files_stay_whole(tmp_path):
    tfsql.write_tfrecord(pa.table({"i": list(range(2000))}), tmp_path / "t", compression="gzip")
    ds = tfsql.dataset(tmp_path / "t")
    assert [(f.start, f.stop == os.path.getsize(f.path)) for f in ds.get_fragments(split_bytes=100)] == [(0, True)]
    with pytest.raises(ValueError, match="compressed"):
        ds.file_range(0, 100)


def test_scanner_rereads_a_range_that_starts_inside_a_payload_holding_a_long_chain(tmp_path, monkeypatch):
    # A payload holding more well-framed records than the resync lookahead: a range
    # read on its own would take them for records, the scanner's check does not.
    monkeypatch.setattr("tfsql.splits.RESYNC_LOOKAHEAD", 16)
    inner = b"".join(frame(b"nested%d" % i) for i in range(50))
    records = [b"a" * 10, inner, b"b" * 10, b"c" * 700]
    path = tmp_path / "f.tfrecord"
    data = write_file(path, records)
    with pytest.raises(CorruptRecordError):  # a lone range is fooled, and fails further on
        read_by_ranges(data, 100)
    got = tfsql.read_tfrecord(path, record_type="bytes", threads=2, split_bytes=100).column("record").to_pylist()
    assert got == records


@pytest.mark.parametrize("verify", [True, False])
def test_a_corrupt_record_inside_a_range_is_reported_at_its_file_offset(tmp_path, verify):
    records = [b"%04d" % i * 10 for i in range(200)]
    frames = [frame(p) for p in records]
    data = bytearray(b"".join(frames))
    victim = 150
    offset = sum(len(f) for f in frames[:victim])
    data[offset + 3] ^= 0xFF  # the length no longer matches its CRC
    path = tmp_path / "f.tfrecord"
    path.write_bytes(bytes(data))
    kwargs = dict(record_type="bytes", threads=2, split_bytes=1000, verify_checksums=verify)
    with pytest.raises(CorruptRecordError, match=f"length CRC mismatch in .*f.tfrecord.* at byte {offset}:") as info:
        tfsql.read_tfrecord(path, **kwargs)
    assert info.value.offset == offset
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = tfsql.read_tfrecord(path, on_corrupt="skip", **kwargs).column("record").to_pylist()
    # The damaged record is lost; the range after the damage resynchronises.
    assert got[:victim] == records[:victim] and set(got) < set(records) and records[-1] == got[-1]
    assert any(str(offset) in str(w.message) for w in caught)


def test_a_truncated_last_record_is_reported_by_ranges(tmp_path):
    records = [b"%04d" % i * 10 for i in range(100)]
    path = tmp_path / "f.tfrecord"
    data = write_file(path, records)
    path.write_bytes(data[:-7])
    last = len(data) - len(frame(records[-1]))
    with pytest.raises(CorruptRecordError, match=f"truncated record in .* at byte {last}"):
        tfsql.read_tfrecord(path, record_type="bytes", threads=2, split_bytes=500)


# -- a scan cuts ranges into pieces of about a batch ----------------------------------


@pytest.fixture
def tiny_pieces(monkeypatch):
    """Pieces of 64 bytes (4 MiB at least outside tests)."""
    monkeypatch.setattr("tfsql.scanning.piece_bytes", lambda batch_bytes: 64)


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(st.lists(payloads, min_size=1, max_size=8), st.integers(1, 400), st.sampled_from([1, 2]))
def test_pieces_of_a_range_give_its_records_in_order(tmp_path_factory, tiny_pieces, records, split, threads):
    """Whatever the piece and split sizes, also with payloads that look like frames: the
    ranges' pieces, read by a scan on 1 or 2 threads, give the whole file's records."""
    path = tmp_path_factory.mktemp("pieces") / "f.tfrecord"
    data = write_file(path, records)
    ds = tfsql.dataset(str(path), record_type="bytes", threads=threads)
    by_fragment = []
    for fragment in ds.get_fragments(split_bytes=split):
        by_fragment += fragment.to_table().column("record").to_pylist()
    assert by_fragment == records
    whole = tfsql.read_tfrecord(str(path), record_type="bytes", threads=threads, split_bytes=split)
    assert whole.column("record").to_pylist() == records
    assert len(data) == os.path.getsize(path)


def test_a_range_is_decoded_piece_by_piece_as_it_is_consumed(tmp_path, tiny_pieces, monkeypatch):
    """Memory is bounded by the piece (about a batch), not the range: with one thread,
    the first batch comes out after one piece is read, and a piece after the first
    starts where the one before ended, without a boundary search."""
    records = [b"%05d" % i * 8 for i in range(300)]  # 56-byte frames
    path = tmp_path / "f.tfrecord"
    write_file(path, records)
    import tfsql.scanning
    import tfsql.splits

    read: list[int] = []
    original = tfsql.scanning.Scanner._read_range

    def spy(self, decoder, file_index, task, start, *args, **kwargs):
        read.append(task.start)
        return original(self, decoder, file_index, task, start, *args, **kwargs)

    searches: list[int] = []
    find = tfsql.splits.find_range_start

    def counting_find(raw, start, stop, size, **kwargs):
        searches.append(start)
        return find(raw, start, stop, size, **kwargs)

    monkeypatch.setattr(tfsql.scanning.Scanner, "_read_range", spy)
    monkeypatch.setattr(tfsql.splits, "find_range_start", counting_find)
    fragment = tfsql.dataset(str(path), record_type="bytes", threads=1).file_range(0, 10_000)
    batches = fragment.to_batches()
    first = next(batches)
    assert read == [0] and first.num_rows <= 2
    rest = [r for b in batches for r in b.column("record").to_pylist()]
    assert first.column("record").to_pylist() + rest == [r for r in records if records.index(r) * 56 < 10_000]
    assert len(read) == 10_000 // 64 + 1
    assert searches == [0, 10_024]  # byte 0 (no read) and the range's end (for the next range's reader)


def test_head_of_a_range_reads_that_range(tmp_path):
    records = [b"%04d" % i * 10 for i in range(200)]
    path = tmp_path / "f.tfrecord"
    write_file(path, records)
    fragment = tfsql.dataset(str(path), record_type="bytes").get_fragments(split_bytes=1000)[1]
    got = fragment.head(3).column("record").to_pylist()
    assert got == fragment.to_table().column("record").to_pylist()[:3]
    assert got[0] != records[0]


@pytest.mark.parametrize(
    "start, stop, piece",
    [(0, 100, 40), (0, 0, 4), (5, 5, 3), (7, 3, 2), (100, 350, 100), (0, 1, 1), (3, (5 << 32) + 1, 1 << 32)],
)
def test_the_core_cuts_ranges_as_the_reference_does(start, stop, piece):
    """``plan_ranges`` and ``plan_pieces`` cut with the core's ``tfsql_range_at`` (which the
    DuckDB extension's scan units use too); the reference twin cuts the same."""
    from tfsql import _native

    expected = [(p, min(p + piece, stop)) for p in range(start, stop, piece)]
    assert _native.plan_pieces(start, stop, piece) == ref.plan_pieces(start, stop, piece) == expected
    with pytest.raises(ValueError):
        _native.plan_pieces(start, stop, 0)
    with pytest.raises(ValueError):
        ref.plan_pieces(start, stop, 0)


def test_a_piece_of_a_whole_file_makes_one_batch_not_one_and_a_record(tmp_path):
    """A file read in pieces by 2 threads: 250 records of 40,000 bytes (40,016 framed),
    batch_bytes 4,500,000. Pieces of the whole batch budget held 113 records, 4,520,000
    bytes of payload: a batch of 112 and one of a single record (images: every third
    batch of one record). Pieces of 15/16 of the budget (4,218,750 bytes) hold 106 and
    105 records: one batch each."""
    path = tmp_path / "f.tfrecord"
    records = [bytes([r % 251]) * 40_000 for r in range(250)]
    write_file(path, records)
    ds = tfsql.dataset(str(path), record_type="bytes", threads=2, batch_bytes=4_500_000)
    batches = list(ds.scanner().to_batches())
    assert [b.num_rows for b in batches] == [106, 105, 39]
    assert [r for b in batches for r in b.column("record").to_pylist()] == records
