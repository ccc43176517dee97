"""A record is valid or not whatever the projection: the native decoder walks the wire
structure of every feature (lengths and wire types, key UTF-8; no values decoded) as
protobuf does, so it refuses what the reference decoder (protobuf) refuses, with the
same reason, whichever columns are asked for.

Before, a malformed feature nobody asked for went unnoticed (``read_tfrecord(p,
schema={"a": ...})`` returned rows while ``read_tfrecord(p)`` raised), a non-UTF-8
feature key was a ``SchemaError`` natively and a ``CorruptRecordError`` in the
reference, and a length varint longer than protobuf's 5 bytes decoded natively.
"""

from __future__ import annotations

import pyarrow as pa
import pytest

import tfsql
from tfsql import _native as native
from tfsql import _reference as ref

A_INT64 = [(b"a", ref.FEATURES, ref.INT64, ref.SCALAR)]


def varint(n: int) -> bytes:
    out = b""
    while True:
        byte, n = n & 0x7F, n >> 7
        if not n:
            return out + bytes([byte])
        out += bytes([byte | 0x80])


def field(number: int, body: bytes) -> bytes:
    return bytes([number << 3 | 2]) + varint(len(body)) + body


def int_feature(value: int) -> bytes:
    return field(3, field(1, varint(value)))


def entry(key: bytes, feature: bytes) -> bytes:
    return field(1, key) + field(2, feature)


def example(*entries: bytes) -> bytes:
    return field(1, b"".join(field(1, e) for e in entries))


#: feature `b`: an Int64List field whose nested length (9) overruns its parent (5 bytes),
#: then a byte of wire type 6
MALFORMED_B = example(entry(b"a", int_feature(7)), entry(b"b", bytes([0x1A, 0x05, 0x0A, 0x09, 0x0E])))
NON_UTF8_KEY = example(entry(b"a", int_feature(7)), entry(b"\xff\xfe", int_feature(1)))
OVERLONG_LENGTH = bytes.fromhex("0a808080808000")  # features: a 6-byte varint for length 0
CASES = {"malformed_b": MALFORMED_B, "non_utf8_key": NON_UTF8_KEY, "overlong_length": OVERLONG_LENGTH}


def framed(payloads: list[bytes]):
    import numpy as np

    ends = np.cumsum([0] + [len(p) for p in payloads]).astype(np.int64)
    buf, _ = ref.encode_frames(b"".join(payloads), ends)
    offsets, lengths, _, _ = ref.scan_frames(buf)
    return buf, offsets, lengths


def outcome(codec, columns, payload: bytes):
    buf, offsets, lengths = framed([payload])
    try:
        codec.Decoder(ref.EXAMPLE, columns).decode(buf, offsets, lengths)
    except codec.DecodeError as exc:
        return exc.reason, exc.record, exc.column
    return "ok"


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("columns", [[], A_INT64], ids=["no_columns", "a_only"])
def test_native_refuses_what_the_reference_refuses_whatever_the_projection(name, columns):
    assert outcome(ref, columns, CASES[name]) == ("malformed", 0, -1)
    assert outcome(native, columns, CASES[name]) == ("malformed", 0, -1)


@pytest.mark.parametrize("name", sorted(CASES))
def test_summaries_refuse_it_too(name):
    buf, offsets, lengths = framed([CASES[name]])
    for codec in (ref, native):
        with pytest.raises(codec.DecodeError):
            codec.summarize(buf, offsets, lengths, ref.EXAMPLE)


@pytest.mark.parametrize("name", sorted(CASES))
def test_read_tfrecord_raises_the_same_error_with_and_without_a_schema(tmp_path, name):
    path = tmp_path / f"{name}.tfrecord"
    buf, _, _ = framed([CASES[name]])
    path.write_bytes(bytes(buf))
    with pytest.raises(tfsql.CorruptRecordError, match="record is not a valid (tf.train.)?[Ee]xample protobuf"):
        tfsql.read_tfrecord(str(path), schema={"a": pa.int64()})
    with pytest.raises(tfsql.CorruptRecordError, match="record is not a valid (tf.train.)?[Ee]xample protobuf"):
        tfsql.read_tfrecord(str(path))


def test_valid_neighbours_still_decode():
    good = example(entry(b"a", int_feature(7)), entry(b"b", field(1, field(1, b"\xff"))))
    assert outcome(native, A_INT64, good) == "ok" == outcome(ref, A_INT64, good)
    five_byte_length = bytes.fromhex("0a8080808000")  # protobuf takes 5 bytes
    assert outcome(native, A_INT64, five_byte_length) == "ok" == outcome(ref, A_INT64, five_byte_length)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_extension_refuses_it_whatever_the_projection(tmp_path, name):
    duckdb = pytest.importorskip("duckdb")
    from tfsql.duckdb.extension import extension_available

    if not extension_available():
        pytest.skip("this tfsql was built without its DuckDB extension")
    path = tmp_path / f"{name}.tfrecord"
    buf, _, _ = framed([CASES[name]])
    path.write_bytes(bytes(buf))
    con = tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))
    for sql in (
        f"SELECT * FROM tfrecord_scan('{path}', schema := {{'a': 'BIGINT'}})",
        f"SELECT * FROM tfrecord_scan('{path}')",
    ):
        with pytest.raises(duckdb.Error, match="record is not a valid example protobuf"):
            con.sql(sql).fetchall()


def outcomes(codec, columns, payloads: list[bytes]):
    """Decode several records in one call: each column's buffers as bytes (None where
    absent) and counts, or the error."""
    buf, offsets, lengths = framed(payloads)
    try:
        columns_out = codec.Decoder(ref.EXAMPLE, columns).decode(buf, offsets, lengths)
    except codec.DecodeError as exc:
        return exc.reason, exc.record, exc.column
    return [
        tuple(part if isinstance(part, int) or part is None else bytes(part) for part in column)
        for column in columns_out
    ]


AB_INT64 = A_INT64 + [(b"b", ref.FEATURES, ref.INT64, ref.SCALAR)]
GOOD = example(entry(b"a", int_feature(1)), entry(b"b", int_feature(2)))
#: each follows GOOD, whose keys the decoder remembers by position (the key hints): the
#: same keys in the same places take the decoder's short path, which must judge them as
#: the general one does
AFTER_GOOD = {
    "malformed_b": MALFORMED_B,
    "same_keys": example(entry(b"a", int_feature(3)), entry(b"b", int_feature(4))),
    "a_repeated": example(entry(b"a", int_feature(5)), entry(b"a", int_feature(6))),
    "b_repeated_malformed_first": example(
        entry(b"a", int_feature(7)), entry(b"b", bytes([0x1A, 0x02, 0x0A, 0x09])), entry(b"b", int_feature(8))
    ),
    "other_key_same_length": example(entry(b"a", int_feature(9)), entry(b"c", int_feature(10))),
    "float_where_int_was": example(entry(b"a", int_feature(11)), entry(b"b", field(2, field(1, b"\0\0\x80?")))),
    "packed_run_unterminated": example(entry(b"a", int_feature(12)), entry(b"b", field(3, field(1, b"\x81\x82")))),
    "two_values_in_entry": example(
        entry(b"a", int_feature(13)) + field(2, int_feature(14)), entry(b"b", int_feature(2))
    ),
}


@pytest.mark.parametrize("name", sorted(AFTER_GOOD))
@pytest.mark.parametrize("columns", [[], A_INT64, AB_INT64], ids=["no_columns", "a_only", "a_and_b"])
def test_a_record_after_one_with_the_same_keys_is_judged_alike(name, columns):
    payloads = [GOOD, AFTER_GOOD[name], GOOD]
    expected = outcomes(ref, columns, payloads)
    assert outcomes(native, columns, payloads) == expected
