"""One file's inference sample through the record reader, decided once in the core
(``infer_sample_file``, tfsql/core/infer_sample.c) and by its pure-Python twin
(``tfsql/_reference/sample.py``): which records the sample takes, which damage it goes
past (``on_corrupt='skip'``: as the scan does), stops at (the ``missing_columns`` check)
or reports now, and the SequenceExample hint."""

from __future__ import annotations

import pytest

from tests.tfrecord_files import example, frame, sequence_example
from tfsql import _native, _reference

CODECS = {"native": _native, "reference": _reference}
MAX = 1 << 20


def _file(payloads: list[bytes], damage: dict[int, str] | None = None) -> bytes:
    """The framed records, record i damaged as damage[i] says: "length" (its length CRC:
    framing is lost there) or "data" (its data CRC)."""
    out = bytearray()
    for i, payload in enumerate(payloads):
        framed = bytearray(frame(payload))
        how = (damage or {}).get(i)
        if how == "length":
            framed[8] ^= 0xFF
        elif how == "data":
            framed[-1] ^= 0xFF
        out += framed
    return bytes(out)


def _sample(backend: str, data: bytes, *, skip=False, tolerant=False, infer_sample=100, record_type=None):
    codec = CODECS[backend]
    inference = codec.Inference(codec.EXAMPLE if record_type is None else record_type, infer_sample, None)
    inference.begin_file("f.tfrecord")

    def read(view, offset):
        n = min(len(view), len(data) - offset)
        view[:n] = data[offset : offset + n]
        return n

    reader = codec.RecordReader(len(data), codec.READER_PLAIN, "f.tfrecord", read=read)
    status, sampled, hint, error = inference.sample_file(reader, MAX, True, skip, tolerant)
    return status, sampled, hint, error, inference.sampled_records, reader


RECORDS = [example({"a": 0}), example({"a": 1}), example({"a": 2, "b": 7})]


@pytest.mark.parametrize("backend", CODECS)
def test_a_clean_file_gives_its_first_records(backend):
    codec = CODECS[backend]
    assert _sample(backend, _file(RECORDS))[:5] == (codec.SAMPLE_OK, True, False, None, 3)
    assert _sample(backend, _file(RECORDS), infer_sample=2)[4] == 2
    assert _sample(backend, b"")[:5] == (codec.SAMPLE_OK, False, False, None, 0)


@pytest.mark.parametrize("backend", CODECS)
@pytest.mark.parametrize("how", ["length", "data"])
def test_damage_is_gone_past_under_skip_stops_the_check_and_is_an_error_otherwise(backend, how):
    codec = CODECS[backend]
    data = _file(RECORDS, {1: how})
    # on_corrupt='skip': records 0 and 2, as the scan reads them (framing found again)
    assert _sample(backend, data, skip=True)[:5] == (codec.SAMPLE_OK, True, False, None, 2)
    # the missing_columns check: the file's sample ends at the damage, unreported
    assert _sample(backend, data, tolerant=True)[:5] == (codec.SAMPLE_OK, True, False, None, 1)
    # otherwise the file's sample ends there too (the scan reports it where it reads it)
    assert _sample(backend, data)[:5] == (codec.SAMPLE_OK, True, False, None, 1)
    # but framing lost before the sample holds any record is an error now (the reader's
    # damage saying where); a data CRC leaves the framing whole, for the scan to report
    status, _, _, error, records, reader = _sample(backend, _file(RECORDS, {0: how}))
    if how == "data":
        assert (status, error, records) == (codec.SAMPLE_OK, None, 0)
    else:
        assert (status, error, records) == (codec.SAMPLE_DAMAGE, None, 0)
        assert reader.damage[:3] == (codec.FRAME_BAD_LENGTH_CRC, 0, 0)


@pytest.mark.parametrize("backend", CODECS)
def test_a_header_over_max_record_bytes_is_an_error_now_unless_skipped_or_checking(backend):
    codec = CODECS[backend]
    data = _file(RECORDS[:1]) + frame(b"x" * (MAX + 1)) + _file(RECORDS[1:])
    status, _, _, _, records, reader = _sample(backend, data)
    assert (status, records, reader.damage[0]) == (codec.SAMPLE_DAMAGE, 1, codec.FRAME_TOO_LONG)
    assert _sample(backend, data, tolerant=True)[:5] == (codec.SAMPLE_OK, True, False, None, 1)
    assert _sample(backend, data, skip=True)[:5] == (codec.SAMPLE_OK, True, False, None, 3)


@pytest.mark.parametrize("backend", CODECS)
def test_a_record_that_is_not_an_example_is_refused_with_where_it_is(backend):
    codec = CODECS[backend]
    data = _file([RECORDS[0], b"\x0a\xff\xff\xff", RECORDS[1]])
    status, sampled, _, error, _, _ = _sample(backend, data)
    assert (status, sampled) == (codec.SAMPLE_REFUSED, True)
    assert (error.reason, error.path, error.record, error.offset) == (
        "malformed",
        "f.tfrecord",
        1,
        len(frame(RECORDS[0])),
    )
    # the check: the file's sample ends there (the chunk that holds it is not folded)
    assert _sample(backend, data, tolerant=True)[:5] == (codec.SAMPLE_OK, True, False, None, 0)


@pytest.mark.parametrize("backend", CODECS)
def test_a_first_record_that_looks_like_a_sequence_example_is_hinted(backend):
    codec = CODECS[backend]
    seq = _file([sequence_example({"id": 1}, {"tok": [[1]]})])
    assert _sample(backend, seq)[2] is True
    assert _sample(backend, seq, record_type=codec.SEQUENCE_EXAMPLE)[2] is False
    assert _sample(backend, _file(RECORDS))[2] is False
