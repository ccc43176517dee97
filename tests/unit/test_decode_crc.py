"""Data CRCs checked on the decode threads (``RecordBlock.crc_pending``).

A scan frames each file on one reading thread checking only the headers; each record's
data CRC is checked by the thread that decodes it, just before decoding it. These tests
hold the scan to what checking at framing time gave: the same rows, the same errors
(file, record index, byte offset), in the same order, for every ``on_corrupt``, thread
count, compression, and for scans that decode no column at all.
"""

from __future__ import annotations

import gzip
import re
import struct
import warnings

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tfsql
from tfrecord_files import example, frame, framed_spans
from tfsql import _native, _reference
from tfsql.errors import CorruptRecordError

N_RECORDS = 300
SCHEMA = {"x": pa.int64(), "blob": pa.binary()}


def _payloads() -> list[bytes]:
    return [example({"x": i, "blob": bytes([i % 251]) * (i % 7 * 100)}) for i in range(N_RECORDS)]


def _record_offsets(payloads: list[bytes]) -> list[int]:
    offsets, pos = [], 0
    for p in payloads:
        offsets.append(pos)
        pos += 16 + len(p)
    return offsets


def _write(tmp_path, bad: list[int], *, compression: str | None = None):
    """A file of N_RECORDS Examples whose records ``bad`` have a wrong data CRC (the
    footer is changed, the payload left intact, so that only the CRC can tell)."""
    payloads = _payloads()
    data = bytearray(b"".join(frame(p) for p in payloads))
    offsets = _record_offsets(payloads)
    for i in bad:
        data[offsets[i] + 12 + len(payloads[i])] ^= 0x5A
    raw = bytes(data)
    path = tmp_path / ("data.tfrecord" + (".gz" if compression else ""))
    path.write_bytes(gzip.compress(raw) if compression else raw)
    return str(path), offsets


def _rows(table: pa.Table) -> list[int]:
    return table.column("x").to_pylist()


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("compression", [None, "gzip"])
def test_a_bad_data_crc_raises_naming_the_record_after_the_rows_before_it(tmp_path, threads, compression):
    path, offsets = _write(tmp_path, [137], compression=compression)
    ds = tfsql.dataset(path, schema=SCHEMA, threads=threads)
    seen: list[int] = []
    with pytest.raises(CorruptRecordError) as info:
        for batch in ds.to_batches():  # one block holds all 300 records
            seen.extend(batch.column("x").to_pylist())
    error = info.value
    assert (error.reason, error.record_index, error.offset) == ("data_crc", 137, offsets[137])
    assert error.path.endswith("data.tfrecord" + (".gz" if compression else ""))
    assert "on_corrupt='skip'" in str(error)
    assert seen == list(range(137))


@pytest.mark.parametrize("threads", [1, 2])
def test_skip_drops_exactly_the_bad_records_and_warns_for_each_in_order(tmp_path, threads):
    bad = [0, 41, 42, 150, N_RECORDS - 1]
    path, offsets = _write(tmp_path, bad)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = tfsql.read_tfrecord(path, schema=SCHEMA, threads=threads, on_corrupt="skip")
    assert _rows(table) == [i for i in range(N_RECORDS) if i not in bad]
    assert table.column("blob").to_pylist()[:2] == [bytes([1]) * 100, bytes([2]) * 200]
    messages = [str(w.message) for w in caught if "data CRC" in str(w.message)]
    assert [int(re.search(r"record (\d+) at byte (\d+)", m).group(1)) for m in messages] == bad
    assert all("skipped the record" in m for m in messages)


def test_a_callable_gets_each_error_with_its_file_offset(tmp_path):
    bad = [5, 6, 299]
    path, offsets = _write(tmp_path, bad)
    errors: list[CorruptRecordError] = []
    table = tfsql.read_tfrecord(path, schema=SCHEMA, on_corrupt=errors.append, batch_size=64)
    assert table.num_rows == N_RECORDS - 3
    assert [(e.reason, e.record_index, e.offset) for e in errors] == [("data_crc", i, offsets[i]) for i in bad]


@pytest.mark.parametrize("threads", [1, 2])
def test_a_scan_that_decodes_no_column_still_checks_the_crcs(tmp_path, threads):
    bad = [3, 200]
    path, _ = _write(tmp_path, bad)
    scanner = tfsql.dataset(path, schema=SCHEMA, threads=threads, on_corrupt="skip").scanner(columns=[])
    with pytest.warns(UserWarning, match="data CRC"):
        assert scanner.to_table().num_rows == N_RECORDS - 2
    with pytest.raises(CorruptRecordError, match="record 3 at byte"):
        tfsql.dataset(path, schema=SCHEMA, threads=threads).scanner(columns=[]).to_table()


def test_verify_checksums_false_reads_every_record(tmp_path):
    path, _ = _write(tmp_path, [10, 11])
    table = tfsql.read_tfrecord(path, schema=SCHEMA, verify_checksums=False)
    assert _rows(table) == list(range(N_RECORDS))


def test_a_row_limit_counts_only_good_records(tmp_path):
    path, _ = _write(tmp_path, [2, 4])
    with pytest.warns(UserWarning, match="data CRC"):
        table = tfsql.read_tfrecord(path, schema=SCHEMA, n_rows=5, on_corrupt="skip")
    assert _rows(table) == [0, 1, 3, 5, 6]


def test_a_filter_sees_only_good_records(tmp_path):
    path, _ = _write(tmp_path, [7, 8])
    with pytest.warns(UserWarning, match="data CRC"):
        table = tfsql.read_tfrecord(path, schema=SCHEMA, filter=pa.compute.field("x") < 10, on_corrupt="skip")
    assert _rows(table) == [0, 1, 2, 3, 4, 5, 6, 9]


@pytest.mark.parametrize("codec", [_native, _reference], ids=["native", "reference"])
@pytest.mark.parametrize("record_type", ["example", "raw"])
def test_decoder_verify_reports_the_first_bad_record(codec, record_type):
    payloads = [example({"v": i}) for i in range(6)]
    data, offsets, lengths = framed_spans(payloads)
    broken = bytearray(data)
    footer = int(offsets[3] + lengths[3])
    broken[footer] ^= 0x01
    code = codec.EXAMPLE if record_type == "example" else codec.RAW
    columns = [(b"v", codec.FEATURES, codec.INT64, codec.SCALAR)] if record_type == "example" else []
    decoder = codec.Decoder(code, columns)
    decoder.decode(bytes(broken), offsets, lengths)  # not asked to verify: decodes
    decoder.decode(data, offsets, lengths, None, True)  # intact: decodes
    with pytest.raises(codec.DecodeError) as info:
        decoder.decode(bytes(broken), offsets, lengths, None, True)
    assert (info.value.reason, info.value.record) == ("data_crc", 3)


def test_native_decoder_verify_rejects_a_footer_outside_the_buffer():
    payload = example({"v": 1})
    data = frame(payload)[:-2]  # the footer is cut short
    offsets = np.array([12], dtype=np.uint64)
    lengths = np.array([len(payload)], dtype=np.uint64)
    decoder = _native.Decoder(_native.EXAMPLE, [(b"v", _native.FEATURES, _native.INT64, _native.SCALAR)])
    with pytest.raises(_native.DecodeError) as info:
        decoder.decode(data, offsets, lengths, None, True)
    assert info.value.reason == "data_crc"
    assert struct.unpack("<Q", data[:8])[0] == len(payload)


@settings(max_examples=150, deadline=None)
@given(
    lengths=st.lists(st.integers(0, 700), min_size=1, max_size=12),
    data=st.data(),
)
def test_decoder_verify_checks_records_in_any_grouping_of_lengths(lengths, data):
    # The native decoder checks CRCs three records at a time (interleaved): whatever the
    # lengths and alignments, it must report exactly the first bad record, as the
    # reference does one record at a time, and accept intact records.
    payloads = [bytes((i * 7 + j) % 256 for j in range(n)) for i, n in enumerate(lengths)]
    framed, offsets, sizes = framed_spans(payloads)
    for codec in (_native, _reference):
        assert len(codec.Decoder(codec.RAW, []).decode(framed, offsets, sizes, None, True)) == 1
    bad = sorted(data.draw(st.sets(st.integers(0, len(payloads) - 1), min_size=1)))
    broken = bytearray(framed)
    for i in bad:
        target = int(offsets[i]) + (data.draw(st.integers(0, lengths[i] - 1)) if lengths[i] else lengths[i])
        broken[target] ^= 0x10  # a payload byte, or the footer of an empty record
    for codec in (_native, _reference):
        with pytest.raises(codec.DecodeError) as info:
            codec.Decoder(codec.RAW, []).decode(bytes(broken), offsets, sizes, None, True)
        assert (info.value.reason, info.value.record) == ("data_crc", bad[0])


@pytest.mark.parametrize("cut_record", [0, 1, 2, 3])
def test_native_decoder_verify_rejects_a_missing_footer_at_any_place_in_a_group(cut_record):
    payloads = [example({"v": i}) for i in range(cut_record + 1)]
    data, offsets, lengths = framed_spans(payloads)
    cut = data[:-2]  # the last record's footer is cut short
    decoder = _native.Decoder(_native.EXAMPLE, [(b"v", _native.FEATURES, _native.INT64, _native.SCALAR)])
    with pytest.raises(_native.DecodeError) as info:
        decoder.decode(cut, offsets, lengths, None, True)
    assert (info.value.reason, info.value.record) == ("data_crc", cut_record)
    ((*_, values),) = decoder.decode(cut, offsets[:-1], lengths[:-1], None, True)  # the records before it
    assert np.frombuffer(values, np.int64).tolist() == list(range(cut_record))
