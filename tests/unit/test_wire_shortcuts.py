"""The C core's shortcuts on the layout writers produce give the general walk's answers.

The decoder checks a feature no column reads in the writers' layout without the general
walk (a packed Int64List of at most 10 bytes by its last byte alone, a FloatList by its
length, a BytesList value by value), and matches a map entry's key against the previous
record's key at the same place with word compares (the head and the tail of a key of 2
to 16 bytes). These cases sit on the edges of both: the native decoder must agree with
the reference decoder (protobuf) exactly.
"""

from __future__ import annotations

import pytest
from test_decoder_validity import A_INT64, entry, example, field, framed, int_feature, outcome

from tfsql import _native as native
from tfsql import _reference as ref


def packed_ints(raw: bytes) -> bytes:
    """A Feature holding an Int64List whose packed value bytes are `raw`."""
    return field(3, field(1, raw))


def packed_floats(raw: bytes) -> bytes:
    return field(2, field(1, raw))


#: feature `b` (no column reads it) beside a valid `a`, and whether protobuf parses it
UNPROJECTED = {
    "ints, one 10-byte varint": (packed_ints(b"\x80" * 9 + b"\x01"), "ok"),
    "ints, 10 bytes, the last unfinished": (packed_ints(b"\x01" * 9 + b"\x80"), "malformed"),
    "ints, one 11-byte varint": (packed_ints(b"\x80" * 10 + b"\x01"), "malformed"),
    "ints, 11 bytes, two varints": (packed_ints(b"\x01" + b"\x80" * 9 + b"\x01"), "ok"),
    "ints, one byte": (packed_ints(b"\x05"), "ok"),
    "ints, one unfinished byte": (packed_ints(b"\x85"), "malformed"),
    "ints, empty packed field": (packed_ints(b""), "ok"),
    "floats, 8 bytes": (packed_floats(b"\x00" * 8), "ok"),
    "floats, 6 bytes": (packed_floats(b"\x00" * 6), "malformed"),
    "bytes, two values": (field(1, field(1, b"xy") + field(1, b"")), "ok"),
    "bytes, a value overrunning the list": (field(1, bytes([0x0A, 0x05]) + b"xy"), "malformed"),
    "bytes, then an unknown field": (field(1, field(1, b"xy") + bytes([0x10, 0x01])), "ok"),
    "bytes, then wire type 6": (field(1, field(1, b"xy") + bytes([0x0E])), "malformed"),
    # a value's length in one byte (read inline) or more (the general reader)
    "bytes, a value ending the list exactly": (field(1, field(1, b"x" * 127)), "ok"),
    "bytes, a one-byte length one past the list": (field(1, bytes([0x0A, 0x03]) + b"xy"), "malformed"),
    "bytes, a tag with no length after it": (field(1, field(1, b"xy") + bytes([0x0A])), "malformed"),
    "bytes, a two-byte length": (field(1, field(1, b"x" * 128) + field(1, b"")), "ok"),
    "bytes, a two-byte length past the list": (field(1, bytes([0x0A, 0x80, 0x01]) + b"x" * 127), "malformed"),
    "bytes, an unfinished two-byte length": (field(1, bytes([0x0A, 0x80])), "malformed"),
}


@pytest.mark.parametrize("name", sorted(UNPROJECTED))
@pytest.mark.parametrize("columns", [[], A_INT64], ids=["no_columns", "a_only"])
def test_an_unprojected_feature_is_judged_as_protobuf_judges_it(name, columns):
    feature, expected = UNPROJECTED[name]
    payload = example(entry(b"a", int_feature(7)), entry(b"b", feature))
    want = "ok" if expected == "ok" else ("malformed", 0, -1)
    assert outcome(ref, columns, payload) == want
    assert outcome(native, columns, payload) == want


def _plain(columns: list) -> list:
    return [tuple(x if x is None or isinstance(x, int) else bytes(x) for x in column) for column in columns]


@pytest.mark.parametrize("length", range(1, 18))
def test_keys_differing_in_one_byte_go_to_their_own_columns(length):
    key = b"k" * length
    for at in range(length):
        other = key[:at] + b"j" + key[at + 1 :]
        buf, offsets, lengths = framed([example(entry(key, int_feature(1))), example(entry(other, int_feature(2)))])
        columns = [(k, ref.FEATURES, ref.INT64, ref.SCALAR) for k in (key, other)]
        got = _plain(native.Decoder(ref.EXAMPLE, columns).decode(buf, offsets, lengths))
        assert got == _plain(ref.Decoder(ref.EXAMPLE, columns).decode(buf, offsets, lengths))
        assert [column[0] for column in got] == [b"\x01", b"\x02"]  # row 0 in `key`, row 1 in `other`
