"""Unit tests of ``tfsql._reference``, the pure-Python codec (exact expected values)."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from tfsql import _reference as ref
from tfsql._proto import Example, Feature, SequenceExample
from tfrecord_files import framed_spans as spans
from tfrecord_files import frames as frame
from tfrecord_files import masked_crc as masked
from wire import ld

# --------------------------------------------------------------------------- helpers


def decode(record_type, columns, payloads):
    return ref.Decoder(record_type, columns).decode(*spans(payloads))


def example(**features) -> bytes:
    ex = Example()
    for name, value in features.items():
        target = ex.features.feature[name]
        if value is None:
            target.SetInParent()  # present, no kind
        elif isinstance(value, Feature):
            target.CopyFrom(value)
        else:
            kind, values = value
            getattr(target, kind).SetInParent()
            getattr(target, kind).value.extend(values)
    return ex.SerializeToString()


def i64(*v):
    return ("int64_list", list(v))


def f32(*v):
    return ("float_list", list(v))


def byt(*v):
    return ("bytes_list", list(v))


def as_i32(buf) -> list:
    return np.frombuffer(buf, "<i4").tolist()


def as_i64(buf) -> list:
    return np.frombuffer(buf, "<i8").tolist()


def as_u32(buf) -> list:
    return np.frombuffer(buf, "<u4").tolist()


# --------------------------------------------------------------------------- CRC


def test_crc32c_check_value_and_continuation():
    assert ref.crc32c(b"123456789") == 0xE3069283
    assert ref.crc32c(b"6789", ref.crc32c(b"12345")) == 0xE3069283
    assert ref.crc32c(np.frombuffer(b"123456789", np.uint8)) == 0xE3069283


def test_masked_crc32c_matches_tensorflow_mask():
    assert ref.masked_crc32c(b"") == 0xA282EAD8
    assert ref.masked_crc32c(b"123456789") == masked(b"123456789")
    assert ref.hardware_crc() is False


# --------------------------------------------------------------------------- framing


PAYLOADS = [b"abc", b"hello", b"seven77"]


def test_scan_frames_indexes_every_record():
    buf = frame(PAYLOADS)
    offsets, lengths, end, status = ref.scan_frames(buf)
    assert np.frombuffer(offsets, np.uint64).tolist() == [12, 12 + 3 + 16, 12 + 3 + 16 + 5 + 16]
    assert np.frombuffer(lengths, np.uint64).tolist() == [3, 5, 7]
    assert (end, status) == (len(buf), ref.FRAME_OK)
    assert len(offsets) == 24  # bytes


def test_scan_frames_empty_buffer_is_ok():
    offsets, lengths, end, status = ref.scan_frames(b"")
    assert (len(offsets), len(lengths), end, status) == (0, 0, 0, ref.FRAME_OK)


def test_scan_frames_limits():
    buf = frame(PAYLOADS)
    offsets, _, end, status = ref.scan_frames(buf, max_records=2)
    assert (np.frombuffer(offsets, np.uint64).tolist(), end, status) == ([12, 31], 40, ref.FRAME_OK)
    offsets, _, end, status = ref.scan_frames(buf, max_bytes=8)
    assert (len(offsets) // 8, end, status) == (2, 40, ref.FRAME_OK)
    offsets, _, end, status = ref.scan_frames(buf, max_bytes=0)  # at least one record
    assert (len(offsets) // 8, end, status) == (1, 19, ref.FRAME_OK)
    offsets, _, end, status = ref.scan_frames(buf, max_records=0)
    assert (len(offsets), end, status) == (0, 0, ref.FRAME_OK)
    offsets, _, end, status = ref.scan_frames(buf, start=19, max_records=1)
    assert (np.frombuffer(offsets, np.uint64).tolist(), end) == ([31], 40)


def test_scan_frames_truncated_payload_and_header():
    buf = frame(PAYLOADS)
    offsets, _, end, status = ref.scan_frames(buf[:-1])
    assert (len(offsets) // 8, end, status) == (2, 40, ref.FRAME_TRUNCATED)
    offsets, _, end, status = ref.scan_frames(buf[:45])  # 5 bytes of the third header
    assert (len(offsets) // 8, end, status) == (2, 40, ref.FRAME_TRUNCATED)


def test_scan_frames_bad_crcs():
    buf = bytearray(frame(PAYLOADS))
    buf[19 + 8] ^= 1  # second record's length CRC
    _, _, end, status = ref.scan_frames(buf)
    assert (end, status) == (19, ref.FRAME_BAD_LENGTH_CRC)
    buf = bytearray(frame(PAYLOADS))
    buf[19 + 12] ^= 1  # second record's payload
    offsets, _, end, status = ref.scan_frames(buf)
    assert (len(offsets) // 8, end, status) == (1, 19, ref.FRAME_BAD_DATA_CRC)
    offsets, _, end, status = ref.scan_frames(buf, verify=False)
    assert (len(offsets) // 8, end, status) == (3, len(buf), ref.FRAME_OK)


def test_scan_frames_rejects_start_outside_buffer():
    with pytest.raises(ValueError, match=r"start=5 is outside the buffer of 3 bytes"):
        ref.scan_frames(b"abc", start=5)


def test_encode_frames_matches_independent_framing():
    data = b"xx" + b"".join(PAYLOADS)
    framed, ends = ref.encode_frames(data, np.array([2, 5, 10, 17], np.int64))
    assert framed == frame(PAYLOADS)
    assert np.frombuffer(ends, np.uint64).tolist() == [19, 40, 63]
    framed, ends = ref.encode_frames(b"", np.array([0], np.int64))
    assert (framed, ends) == (b"", b"")


def test_encode_frames_rejects_bad_offsets():
    with pytest.raises(ValueError, match=r"value_offsets point outside their target of 3"):
        ref.encode_frames(b"abc", np.array([0, 4], np.int64))
    with pytest.raises(ValueError, match=r"value_offsets are not non-decreasing"):
        ref.encode_frames(b"abc", np.array([0, 2, 1], np.int64))


# --------------------------------------------------------------------------- decoding


def test_scalar_int64_three_null_states_and_empty_list():
    payloads = [example(a=i64(5)), example(), example(a=None), example(a=i64()), example(a=i64(-(2**63)))]
    ((validity, nulls, outer, inner_v, inner_n, inner_o, value_offsets, values),) = decode(
        ref.EXAMPLE, [(b"a", ref.FEATURES, ref.INT64, ref.SCALAR)], payloads
    )
    assert validity == bytes([0b10001])
    assert nulls == 3
    assert (outer, inner_v, inner_n, inner_o, value_offsets) == (None, None, 0, None, None)
    assert as_i64(values) == [5, 0, 0, 0, -(2**63)]


def test_scalar_float_keeps_every_bit_including_signalling_nan():
    bits = [0x7F800001, 0xFFC00000, 0x80000000, 0x00000001, 0x7F800000]
    payloads = [ld(1, ld(1, ld(1, b"x") + ld(2, ld(2, ld(1, struct.pack("<I", b)))))) for b in bits]
    ((validity, nulls, *_, values),) = decode(ref.EXAMPLE, [(b"x", ref.FEATURES, ref.FLOAT, ref.SCALAR)], payloads)
    assert (validity, nulls) == (None, 0)
    assert as_u32(values) == bits


def test_scalar_bytes_null_rows_are_empty_slots():
    payloads = [example(s=byt(b"ab")), example(), example(s=byt(b"\xff"))]
    ((validity, nulls, _, _, _, _, value_offsets, values),) = decode(
        ref.EXAMPLE, [(b"s", ref.FEATURES, ref.BYTES, ref.SCALAR)], payloads
    )
    assert (validity, nulls) == (bytes([0b101]), 1)
    assert as_i32(value_offsets) == [0, 2, 2, 3]
    assert values == b"ab\xff"


def test_list_columns_of_every_kind():
    payloads = [example(i=i64(1, 2, 3), f=f32(0.5), b=byt(b"x", b"")), example(i=i64(), f=None), example(b=byt(b"yz"))]
    columns = [
        (b"i", ref.FEATURES, ref.INT64, ref.LIST),
        (b"f", ref.FEATURES, ref.FLOAT, ref.LIST),
        (b"b", ref.FEATURES, ref.BYTES, ref.LIST),
    ]
    ints, floats, blobs = decode(ref.EXAMPLE, columns, payloads)
    assert (ints[0], ints[1], as_i32(ints[2]), as_i64(ints[7])) == (bytes([0b011]), 1, [0, 3, 3, 3], [1, 2, 3])
    assert ints[6] is None
    assert (floats[0], floats[1], as_i32(floats[2])) == (bytes([0b001]), 2, [0, 1, 1, 1])
    assert np.frombuffer(floats[7], "<f4").tolist() == [0.5]
    assert (blobs[0], blobs[1], as_i32(blobs[2])) == (bytes([0b101]), 1, [0, 2, 2, 3])
    assert (as_i32(blobs[6]), blobs[7]) == ([0, 1, 1, 3], b"xyz")


def test_validity_bitmap_padding_bits_are_zero():
    payloads = [example(a=i64(1)) if i % 3 else example() for i in range(10)]
    ((validity, nulls, *_),) = decode(ref.EXAMPLE, [(b"a", ref.FEATURES, ref.INT64, ref.SCALAR)], payloads)
    assert (validity, nulls) == (bytes([0b10110110, 0b00000001]), 4)


def sequence(context: dict, lists: dict) -> bytes:
    seq = SequenceExample()
    for name, (kind, values) in context.items():
        getattr(seq.context.feature[name], kind).value.extend(values)
    for name, steps in lists.items():
        fl = seq.feature_lists.feature_list[name]
        fl.SetInParent()
        for step in steps:
            feature = fl.feature.add()
            if step is not None:
                getattr(feature, step[0]).SetInParent()
                getattr(feature, step[0]).value.extend(step[1])
    return seq.SerializeToString()


def test_sequence_example_list_of_list_and_context():
    payloads = [
        sequence({"id": i64(1)}, {"t": [i64(1, 2), None, i64()]}),
        sequence({}, {"t": []}),  # zero steps: an empty outer list
        sequence({"id": i64(3)}, {}),  # missing: null
        sequence({}, {"t": [i64(9)]}),
    ]
    columns = [(b"id", ref.FEATURES, ref.INT64, ref.SCALAR), (b"t", ref.FEATURE_LISTS, ref.INT64, ref.LIST_OF_LIST)]
    ids, steps = decode(ref.SEQUENCE_EXAMPLE, columns, payloads)
    assert (ids[0], ids[1], as_i64(ids[7])) == (bytes([0b0101]), 2, [1, 0, 3, 0])
    validity, nulls, outer, inner_v, inner_n, inner_o, value_offsets, values = steps
    assert (validity, nulls, as_i32(outer)) == (bytes([0b1011]), 1, [0, 3, 3, 3, 4])
    assert (inner_v, inner_n, as_i32(inner_o)) == (bytes([0b1101]), 1, [0, 2, 2, 2, 3])
    assert (value_offsets, as_i64(values)) == (None, [1, 2, 9])


def test_sequence_example_bytes_steps():
    payloads = [sequence({}, {"w": [byt(b"a", b"bc"), byt(b"")]})]
    ((validity, nulls, outer, inner_v, inner_n, inner_o, value_offsets, values),) = decode(
        ref.SEQUENCE_EXAMPLE, [(b"w", ref.FEATURE_LISTS, ref.BYTES, ref.LIST_OF_LIST)], payloads
    )
    assert (validity, nulls, as_i32(outer), inner_v, inner_n) == (None, 0, [0, 2], None, 0)
    assert (as_i32(inner_o), as_i32(value_offsets), values) == ([0, 2, 3], [0, 1, 3, 3], b"abc")


def test_raw_decoder_returns_whole_payloads():
    ((validity, nulls, outer, inner_v, inner_n, inner_o, value_offsets, values),) = decode(
        ref.RAW, [], [b"one", b"", b"\x00\xff"]
    )
    assert (validity, nulls, outer, inner_v, inner_n, inner_o) == (None, 0, None, None, 0, None)
    assert (as_i32(value_offsets), values) == ([0, 3, 3, 5], b"one\x00\xff")


def test_empty_batch():
    (ints,) = decode(ref.EXAMPLE, [(b"a", ref.FEATURES, ref.INT64, ref.LIST)], [])
    assert ints == (None, 0, struct.pack("<i", 0), None, 0, None, None, b"")


def test_kind_mismatch_names_record_column_and_kind():
    payloads = [example(a=i64(1), b=i64(1)), example(a=i64(2), b=f32(1.0))]
    columns = [(b"a", ref.FEATURES, ref.INT64, ref.SCALAR), (b"b", ref.FEATURES, ref.INT64, ref.SCALAR)]
    with pytest.raises(ref.DecodeError, match=r"kind_mismatch at record 1, column 1") as info:
        decode(ref.EXAMPLE, columns, payloads)
    assert (info.value.reason, info.value.record, info.value.column, info.value.found_kind) == (
        "kind_mismatch",
        1,
        1,
        ref.FLOAT,
    )
    assert isinstance(info.value, ValueError)


def test_kind_mismatch_even_for_an_empty_list():
    with pytest.raises(ref.DecodeError, match=r"kind_mismatch at record 0, column 0"):
        decode(ref.EXAMPLE, [(b"a", ref.FEATURES, ref.BYTES, ref.LIST)], [example(a=f32())])


def test_first_failing_column_is_reported():
    payloads = [example(a=i64(1, 2), b=byt(b"x"))]
    columns = [(b"b", ref.FEATURES, ref.INT64, ref.LIST), (b"a", ref.FEATURES, ref.INT64, ref.SCALAR)]
    with pytest.raises(ref.DecodeError) as info:
        decode(ref.EXAMPLE, columns, payloads)
    assert (info.value.reason, info.value.column, info.value.found_kind) == ("kind_mismatch", 0, ref.BYTES)


def test_not_scalar():
    with pytest.raises(ref.DecodeError, match=r"not_scalar at record 1, column 0: 2 values") as info:
        decode(
            ref.EXAMPLE, [(b"a", ref.FEATURES, ref.FLOAT, ref.SCALAR)], [example(a=f32(1.0)), example(a=f32(1.0, 2.0))]
        )
    assert (info.value.reason, info.value.found_kind) == ("not_scalar", 0)


def test_inner_kind_mismatch_in_feature_lists():
    payloads = [sequence({}, {"t": [i64(1), f32(2.0)]})]
    with pytest.raises(ref.DecodeError) as info:
        decode(ref.SEQUENCE_EXAMPLE, [(b"t", ref.FEATURE_LISTS, ref.INT64, ref.LIST_OF_LIST)], payloads)
    assert (info.value.reason, info.value.record, info.value.column, info.value.found_kind) == (
        "kind_mismatch",
        0,
        0,
        ref.FLOAT,
    )


@pytest.mark.parametrize(
    "payload", [b"\x0a\x05\x0a", b"\xff", b"\x0a\x02\x0a\x05", ld(1, ld(1, ld(1, b"\xff")))]
)  # last: key not UTF-8
def test_malformed_payload(payload):
    with pytest.raises(ref.DecodeError, match=r"malformed at record 1") as info:
        decode(ref.EXAMPLE, [(b"a", ref.FEATURES, ref.INT64, ref.LIST)], [example(), payload])
    assert (info.value.reason, info.value.record, info.value.column) == ("malformed", 1, -1)


def test_proto3_wire_variants():
    unknown = b"\x98\x06\x07" + b"\xa1\x06" + bytes(8) + ld(101, b"zz") + b"\xad\x06" + bytes(4)
    entry_with_unknown = ld(1, ld(1, b"a") + ld(2, ld(3, b"\x08\x05\x08\x7f")) + unknown)
    repeated_key = ld(1, ld(1, b"b") + ld(2, ld(3, ld(1, b"\x01")))) + ld(
        1, ld(2, ld(2, ld(1, bytes(4)))) + ld(1, b"b")
    )  # value before key
    payload = unknown + ld(1, entry_with_unknown) + ld(1, repeated_key + unknown)
    a, b = decode(
        ref.EXAMPLE, [(b"a", ref.FEATURES, ref.INT64, ref.LIST), (b"b", ref.FEATURES, ref.FLOAT, ref.LIST)], [payload]
    )
    assert (a[0], as_i32(a[2]), as_i64(a[7])) == (None, [0, 2], [5, 127])
    assert (b[0], as_i32(b[2]), as_u32(b[7])) == (None, [0, 1], [0])


def test_decoder_rejects_bad_columns():
    with pytest.raises(ValueError, match=r"FEATURE_LISTS column needs SEQUENCE_EXAMPLE"):
        ref.Decoder(ref.EXAMPLE, [(b"a", ref.FEATURE_LISTS, ref.INT64, ref.LIST_OF_LIST)])
    with pytest.raises(ValueError, match=r"a FEATURES column is SCALAR or LIST"):
        ref.Decoder(ref.EXAMPLE, [(b"a", ref.FEATURES, ref.INT64, ref.LIST_OF_LIST)])
    with pytest.raises(ValueError, match=r"unknown kind 0"):
        ref.Decoder(ref.EXAMPLE, [(b"a", ref.FEATURES, ref.KIND_NONE, ref.LIST)])
    with pytest.raises(ValueError, match=r"is listed twice"):
        ref.Decoder(ref.EXAMPLE, [(b"a", ref.FEATURES, ref.INT64, ref.LIST)] * 2)
    with pytest.raises(TypeError, match=r"name must be bytes, got str"):
        ref.Decoder(ref.EXAMPLE, [("a", ref.FEATURES, ref.INT64, ref.LIST)])


def test_decode_rejects_spans_outside_the_buffer():
    with pytest.raises(ValueError, match=r"record span \[2, 12\) is outside the buffer of 4"):
        ref.Decoder(ref.RAW, []).decode(b"abcd", np.array([2], np.uint64), np.array([10], np.uint64))


# --------------------------------------------------------------------------- encoding


def u8(*v):
    return np.array(v, np.uint8)


def i64a(*v):
    return np.array(v, np.int64)


def parse_frames(framed: bytes, message_class):
    offsets, lengths, end, status = ref.scan_frames(framed)
    assert (end, status) == (len(framed), ref.FRAME_OK)
    return [
        message_class.FromString(framed[o : o + n])
        for o, n in zip(np.frombuffer(offsets, np.uint64).tolist(), np.frombuffer(lengths, np.uint64).tolist())
    ]


def test_encode_example_exact_bytes():
    encoder = ref.Encoder(
        ref.EXAMPLE, [(b"id", ref.FEATURES, ref.INT64, ref.SCALAR), (b"w", ref.FEATURES, ref.FLOAT, ref.LIST)]
    )
    framed, ends = encoder.encode(
        [(u8(1, 0), None, None, None, i64a(-1, 99)), (None, i64a(0, 1, 1), None, None, np.array([2.0], np.float32))], 2
    )
    id_entry = ld(1, b"id") + ld(2, ld(3, ld(1, b"\xff" * 9 + b"\x01")))
    w_entry = ld(1, b"w") + ld(2, ld(2, ld(1, struct.pack("<f", 2.0))))
    empty_w = ld(1, b"w") + ld(2, ld(2, b""))
    expected = [ld(1, ld(1, id_entry) + ld(1, w_entry)), ld(1, ld(1, empty_w))]
    assert framed == frame(expected)
    assert np.frombuffer(ends, np.uint64).tolist() == [16 + len(expected[0]), 32 + len(expected[0]) + len(expected[1])]


def test_encode_then_parse_with_protobuf():
    encoder = ref.Encoder(
        ref.EXAMPLE,
        [
            (b"s", ref.FEATURES, ref.BYTES, ref.SCALAR),
            (b"l", ref.FEATURES, ref.BYTES, ref.LIST),
            (b"f", ref.FEATURES, ref.FLOAT, ref.SCALAR),
        ],
    )
    bits = np.array([0x7F800001, 0x80000000, 0], np.uint32)
    framed, _ = encoder.encode(
        [
            (None, None, None, i64a(3, 5, 6, 9), b"xxxabcdefg"),  # offsets start at 3
            (u8(1, 1, 0), i64a(1, 3, 3, 4), None, i64a(0, 1, 2, 4, 5), b"pqrst"),
            (None, None, None, None, bits.view(np.float32)),
        ],
        3,
    )
    records = parse_frames(framed, Example)
    feats = [r.features.feature for r in records]
    assert [list(f["s"].bytes_list.value) for f in feats] == [[b"ab"], [b"c"], [b"def"]]
    assert list(feats[0]["l"].bytes_list.value) == [b"q", b"rs"]
    assert feats[1]["l"].WhichOneof("kind") == "bytes_list"
    assert list(feats[1]["l"].bytes_list.value) == []
    assert "l" not in feats[2]
    assert [f["f"].float_list.SerializeToString() for f in feats] == [
        ld(1, struct.pack("<I", b)) for b in bits.tolist()
    ]


def test_encode_sequence_example():
    encoder = ref.Encoder(
        ref.SEQUENCE_EXAMPLE,
        [(b"t", ref.FEATURE_LISTS, ref.INT64, ref.LIST_OF_LIST), (b"id", ref.FEATURES, ref.INT64, ref.SCALAR)],
    )
    framed, _ = encoder.encode(
        [
            (u8(1, 1, 0), i64a(0, 2, 2, 2), i64a(0, 2, 2), None, i64a(7, 8)),
            (None, None, None, None, i64a(1, 2, 3)),
        ],
        3,
    )
    records = parse_frames(framed, SequenceExample)
    steps = [
        [list(s.int64_list.value) for s in r.feature_lists.feature_list["t"].feature]
        if "t" in r.feature_lists.feature_list
        else None
        for r in records
    ]
    assert steps == [[[7, 8], []], [], None]
    assert [r.context.feature["id"].int64_list.value[0] for r in records] == [1, 2, 3]
    assert framed[12 : 12 + 4] == b"\x0a\x0d\x0a\x0b"  # context first, always written


def test_encode_raw():
    encoder = ref.Encoder(ref.RAW, [(b"record", ref.FEATURES, ref.BYTES, ref.SCALAR)])
    framed, _ = encoder.encode([(None, None, None, i64a(0, 2, 2), b"ab")], 2)
    assert framed == frame([b"ab", b""])
    with pytest.raises(ValueError, match=r"RAW record 0 is null"):
        encoder.encode([(u8(0), None, None, i64a(0, 2), b"ab")], 1)


def test_encoder_rejects_bad_input():
    encoder = ref.Encoder(ref.EXAMPLE, [(b"l", ref.FEATURES, ref.INT64, ref.LIST)])
    with pytest.raises(ValueError, match=r"expected 1 column arrays, got 0"):
        encoder.encode([], 1)
    with pytest.raises(ValueError, match=r"outer_offsets point outside their target of 1"):
        encoder.encode([(None, i64a(0, 2), None, None, i64a(5))], 1)
    with pytest.raises(ValueError, match=r"LIST needs outer_offsets"):
        encoder.encode([(None, None, None, None, i64a(5))], 1)
    with pytest.raises(ValueError, match=r"a RAW Encoder takes exactly one SCALAR BYTES"):
        ref.Encoder(ref.RAW, [(b"l", ref.FEATURES, ref.INT64, ref.LIST)])


# --------------------------------------------------------------------------- summarize


def test_summarize_example():
    payloads = [
        example(b=byt(b"x", b"y"), a=i64(1)),
        example(a=None, c=f32()),
        example(b=byt(b"\xff"), a=f32(1.0, 2.0, 3.0)),
    ]
    stats = ref.summarize(*spans(payloads), ref.EXAMPLE)
    # protobuf serializes map keys in its own order; the summary follows the wire
    first = [name for _, name in stats]
    assert set(first) == {b"a", b"b", b"c"}
    assert stats == {
        (ref.FEATURES, b"a"): [(1 << ref.INT64) | (1 << ref.KIND_NONE) | (1 << ref.FLOAT), 3, 0, 3, True, 3],
        (ref.FEATURES, b"b"): [1 << ref.BYTES, 2, 1, 2, False, 2],
        (ref.FEATURES, b"c"): [1 << ref.FLOAT, 1, 0, 0, True, 0],
    }


def test_summarize_follows_wire_order_and_feature_lists():
    entry = lambda k, f: ld(1, ld(1, k) + ld(2, f))  # noqa: E731
    steps = ld(1, ld(1, ld(1, b"\xfe"))) + ld(1, b"") + ld(1, ld(3, ld(1, b"\x01\x02\x03")))
    payload = (
        ld(2, ld(1, ld(1, b"z") + ld(2, steps)))  # feature_lists first
        + ld(1, entry(b"y", ld(3, ld(1, b"\x05"))) + entry(b"x", b""))
    )
    empty_lists = ld(2, ld(1, ld(1, b"z")))  # z with zero steps
    stats = ref.summarize(*spans([payload, empty_lists]), ref.SEQUENCE_EXAMPLE)
    assert list(stats) == [(ref.FEATURE_LISTS, b"z"), (ref.FEATURES, b"y"), (ref.FEATURES, b"x")]
    assert stats[(ref.FEATURE_LISTS, b"z")] == [
        (1 << ref.BYTES) | (1 << ref.KIND_NONE) | (1 << ref.INT64),
        2,
        0,
        3,
        False,
        3,
    ]
    assert stats[(ref.FEATURES, b"y")] == [1 << ref.INT64, 1, 1, 1, True, 1]
    assert stats[(ref.FEATURES, b"x")] == [1 << ref.KIND_NONE, 1, 0, 0, True, 0]


def test_summarize_malformed_and_raw():
    with pytest.raises(ref.DecodeError, match=r"malformed at record 0") as info:
        ref.summarize(*spans([b"\x0a\x09"]), ref.EXAMPLE)
    assert (info.value.reason, info.value.column) == ("malformed", -1)
    assert ref.summarize(*spans([b"\x0a\x09"]), ref.RAW) == {}


def test_decode_error_pickles():
    import pickle

    error = ref.DecodeError("kind_mismatch", record=3, column=1, found_kind=2)
    clone = pickle.loads(pickle.dumps(error))
    assert (str(clone), clone.reason, clone.record, clone.column, clone.found_kind) == (
        "kind_mismatch at record 3, column 1",
        "kind_mismatch",
        3,
        1,
        2,
    )


def test_large_int64_values_survive_null_rows():
    payloads = [example(a=i64(2**63 - 1, -(2**63) + 1)), example(), example(a=i64(2**53 + 1))]
    ((validity, nulls, outer, *_, values),) = decode(ref.EXAMPLE, [(b"a", ref.FEATURES, ref.INT64, ref.LIST)], payloads)
    assert (validity, nulls, as_i32(outer)) == (bytes([0b101]), 1, [0, 2, 2, 3])
    assert as_i64(values) == [2**63 - 1, -(2**63) + 1, 2**53 + 1]


def test_decode_reports_unknown_features():
    payloads = [example(a=i64(1), b=None), example(c=f32())]
    unknown: set = set()
    ref.Decoder(ref.EXAMPLE, [(b"a", ref.FEATURES, ref.INT64, ref.SCALAR)]).decode(*spans(payloads), unknown)
    assert unknown == {(ref.FEATURES, b"b"), (ref.FEATURES, b"c")}
    unknown = set()
    payload = sequence({"id": i64(1)}, {"t": [], "u": [None]})
    ref.Decoder(ref.SEQUENCE_EXAMPLE, [(b"t", ref.FEATURE_LISTS, ref.INT64, ref.LIST_OF_LIST)]).decode(
        *spans([payload]), unknown
    )
    assert unknown == {(ref.FEATURES, b"id"), (ref.FEATURE_LISTS, b"u")}
