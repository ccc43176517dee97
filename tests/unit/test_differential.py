"""Differential tests: the C core ``tfsql._native`` against ``tfsql._reference``.

Hypothesis generates Examples and SequenceExamples with every column shape and kind,
missing / no-kind / empty features, unicode and non-UTF-8 bytes, extreme int64s and
every float32 bit pattern, and writes them with a small wire writer that varies the
encoding the way any proto3 parser must accept: packed, unpacked and split-packed
values, unknown fields of every wire type, repeated map keys (the last wins), value
before key, entries shuffled, Features split over several messages. Both codecs must
return the same buffers (byte for byte, floats included), the same errors, the same
encoded bytes and the same summaries.
"""

from __future__ import annotations

import os
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tfsql import _reference as ref
from tfrecord_files import framed_spans as frame
from wire import ld, tag, varint


# Shrinking these composite batches can take minutes on a busy machine, so it is off
# unless TFSQL_SHRINK=1; a failure still prints the falsifying batch and its seed.
SETTINGS = settings(
    max_examples=200,
    deadline=None,
    phases=[p for p in Phase if p != Phase.shrink or os.environ.get("TFSQL_SHRINK") == "1"],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)

# --------------------------------------------------------------------------- wire writer


# Groups (wire types 3/4, deprecated but still accepted by every protobuf parser).
# Set to False to look for other differences while the C core rejects them.
GROUPS = True


def unknown_field(rnd, depth: int = 0) -> bytes:
    """One unknown field (numbers 4..3000 collide with no known field), any wire type."""
    number = rnd.choice([4, 5, 15, 16, 100, 2047, 3000])
    wire_type = rnd.choice([0, 1, 2, 3, 5] if GROUPS and depth < 2 else [0, 1, 2, 5])
    if wire_type == 0:
        return tag(number, 0) + varint(rnd.choice([0, 1, 300, 2**63, 2**64 - 1]))
    if wire_type == 1:
        return tag(number, 1) + struct.pack("<Q", rnd.getrandbits(64))
    if wire_type == 5:
        return tag(number, 5) + struct.pack("<I", rnd.getrandbits(32))
    if wire_type == 2:
        return ld(number, bytes(rnd.getrandbits(8) for _ in range(rnd.randint(0, 5))))
    inner = b"".join(unknown_field(rnd, depth + 1) for _ in range(rnd.randint(0, 2)))
    return tag(number, 3) + inner + tag(number, 4)


def junk(rnd) -> bytes:
    """Unknown fields, usually none."""
    if rnd.random() < 0.7:
        return b""
    return b"".join(unknown_field(rnd) for _ in range(rnd.randint(1, 3)))


def chunks(values: list, rnd) -> list:
    """Split values into 1..3 consecutive chunks (some possibly empty)."""
    cuts = sorted(rnd.randint(0, len(values)) for _ in range(rnd.randint(0, 2)))
    bounds = [0, *cuts, len(values)]
    return [values[a:b] for a, b in zip(bounds, bounds[1:])]


def numeric_list(values: list, rnd, encode_one, wire_type: int) -> bytes:
    """A FloatList / Int64List body: packed, unpacked, or split packed + unpacked."""
    style = rnd.choice(["packed", "packed", "unpacked", "split"])
    if style == "packed":
        body = ld(1, b"".join(encode_one(v) for v in values)) if values else b""
    elif style == "unpacked":
        body = b"".join(tag(1, wire_type) + encode_one(v) for v in values)
    else:
        parts = []
        for chunk in chunks(values, rnd):
            if rnd.random() < 0.5:
                parts.append(ld(1, b"".join(encode_one(v) for v in chunk)))
            else:
                parts.append(b"".join(tag(1, wire_type) + encode_one(v) for v in chunk))
        body = b"".join(parts)
    return junk(rnd) + body + junk(rnd)


def feature_bytes(feature, rnd) -> bytes:
    """A serialized Feature; ``None`` is a Feature with no kind."""
    if feature is None:
        return junk(rnd)
    kind, values = feature
    if kind == ref.BYTES:
        body = junk(rnd) + b"".join(ld(1, v) for v in values) + junk(rnd)
    elif kind == ref.FLOAT:
        body = numeric_list(values, rnd, lambda b: struct.pack("<I", b), 5)
    else:
        body = numeric_list(values, rnd, varint, 0)
    return junk(rnd) + ld(kind, body) + junk(rnd)


def entry_bytes(key: bytes, value: bytes, rnd) -> bytes:
    fields = [ld(1, key), ld(2, value)]
    if rnd.random() < 0.2:
        fields.reverse()  # value before key
    return ld(1, junk(rnd) + fields[0] + junk(rnd) + fields[1] + junk(rnd))


def decoy(rnd, list_location: bool) -> bytes:
    """Some other content for a key, to be replaced by a later entry of the same key."""
    feature = rnd.choice([None, (ref.INT64, [7]), (ref.BYTES, [b"decoy"]), (ref.FLOAT, [0])])
    if list_location:
        return ld(1, feature_bytes(feature, rnd))
    return feature_bytes(feature, rnd)


def map_message(items: list, rnd, list_location: bool) -> list:
    """The entries of a Features / FeatureLists map, shuffled, some keys repeated
    (an earlier decoy entry that the real, later entry replaces). Returns the list of
    entry byte strings in wire order."""
    items = list(items)
    rnd.shuffle(items)
    entries = []
    for key, value in items:
        if rnd.random() < 0.15:
            entries.append(entry_bytes(key, decoy(rnd, list_location), rnd))
        entries.append(entry_bytes(key, value, rnd))
    return entries


def split_message(number: int, entries: list, rnd) -> bytes:
    """Field ``number`` holding the entries, sometimes split over two messages (which a
    parser merges), with unknown fields around."""
    if entries and rnd.random() < 0.2:
        cut = rnd.randint(0, len(entries))
        return ld(number, b"".join(entries[:cut]) + junk(rnd)) + junk(rnd) + ld(number, b"".join(entries[cut:]))
    return ld(number, junk(rnd) + b"".join(entries) + junk(rnd))


def record_bytes(record: dict, record_type: int, rnd) -> bytes:
    features = [(key, feature_bytes(f, rnd)) for key, f in record[ref.FEATURES].items()]
    parts = [junk(rnd) + split_message(1, map_message(features, rnd, False), rnd)]
    if record_type == ref.SEQUENCE_EXAMPLE:
        lists = [
            (key, b"".join(ld(1, feature_bytes(step, rnd)) for step in steps) + junk(rnd))
            for key, steps in record[ref.FEATURE_LISTS].items()
        ]
        parts.append(split_message(2, map_message(lists, rnd, True), rnd))
        if rnd.random() < 0.2:
            parts.reverse()  # feature_lists before context
    return b"".join(parts) + junk(rnd)


# --------------------------------------------------------------------------- strategies

INT64S = st.one_of(st.sampled_from([-(2**63), 2**63 - 1, 0, -1, 1, 127, 128, -129]), st.integers(-(2**63), 2**63 - 1))
FLOAT_BITS = st.one_of(
    st.sampled_from(
        [
            0x7FC00000,
            0x7F800001,
            0xFFC00000,
            0xFFBFFFFF,
            0x7F800000,
            0xFF800000,
            0x80000000,
            0x00000000,
            0x00000001,
            0x807FFFFF,
            0x7F7FFFFF,
        ]
    ),
    st.integers(0, 2**32 - 1),
)
BYTES_VALUES = st.one_of(
    st.binary(max_size=10),
    st.text(max_size=5).map(str.encode),
    st.sampled_from([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x00"]),
)
VALUES = {ref.INT64: INT64S, ref.FLOAT: FLOAT_BITS, ref.BYTES: BYTES_VALUES}
NAMES = st.one_of(st.text(max_size=6), st.sampled_from(["a", "label", "é", "日本", ""]))


@st.composite
def feature_values(draw, kind: int, max_size: int):
    return (kind, draw(st.lists(VALUES[kind], max_size=max_size)))


@st.composite
def cell(draw, kind: int, shape: int):
    """One record's content for a column: ``"missing"``, None (no kind), a feature, or
    (rarely) a wrong kind / too many values to exercise the errors."""
    broken = draw(st.integers(0, 24)) == 0
    if shape == ref.LIST_OF_LIST:
        if draw(st.integers(0, 4)) == 0:
            return "missing"
        step = st.one_of(st.none(), feature_values(kind, 3))
        if broken:
            other = draw(st.sampled_from([k for k in VALUES if k != kind]))
            step = st.one_of(step, feature_values(other, 2))
        return draw(st.lists(step, max_size=4))
    choice = draw(st.integers(0, 5))
    if choice == 0:
        return "missing"
    if choice == 1:
        return None
    if broken:
        if draw(st.booleans()):
            return draw(feature_values(draw(st.sampled_from([k for k in VALUES if k != kind])), 2))
        return (kind, draw(st.lists(VALUES[kind], min_size=2, max_size=3)))
    return draw(feature_values(kind, 1 if shape == ref.SCALAR else 5))


@st.composite
def batches(draw):
    """``(record_type, columns, records, payloads)``."""
    record_type = draw(st.sampled_from([ref.EXAMPLE, ref.SEQUENCE_EXAMPLE]))
    names = draw(st.lists(NAMES, min_size=1, max_size=5, unique=True))
    columns = []
    for name in names:
        kind = draw(st.sampled_from([ref.BYTES, ref.FLOAT, ref.INT64]))
        if record_type == ref.SEQUENCE_EXAMPLE and draw(st.booleans()):
            columns.append((name.encode(), ref.FEATURE_LISTS, kind, ref.LIST_OF_LIST))
        else:
            columns.append((name.encode(), ref.FEATURES, kind, draw(st.sampled_from([ref.SCALAR, ref.LIST]))))
    extra = draw(st.lists(NAMES.filter(lambda n: n not in names), max_size=2, unique=True))
    n_records = draw(st.integers(0, 8))
    rnd = draw(st.randoms(use_true_random=False))
    records, payloads = [], []
    for _ in range(n_records):
        record = {ref.FEATURES: {}, ref.FEATURE_LISTS: {}}
        for name, location, kind, shape in columns:
            content = draw(cell(kind, shape))
            if content != "missing":
                record[location][name] = content
        for name in extra:  # features no column asks for
            record[ref.FEATURES][name.encode()] = draw(
                st.one_of(st.none(), feature_values(draw(st.sampled_from(list(VALUES))), 3))
            )
        records.append(record)
        payloads.append(record_bytes(record, record_type, rnd))
    return record_type, columns, records, payloads


# --------------------------------------------------------------------------- comparison


def plain(value):
    """Buffers as bytes, for exact comparison."""
    if value is None or isinstance(value, (int, bool, str)):
        return value
    if isinstance(value, (tuple, list)):
        return tuple(plain(v) for v in value)
    return bytes(memoryview(value).cast("B"))


def decode_or_error(codec, record_type, columns, buf, offsets, lengths):
    try:
        return "ok", plain(codec.Decoder(record_type, columns).decode(buf, offsets, lengths))
    except codec.DecodeError as exc:
        return "error", (exc.reason, exc.record, exc.column, exc.found_kind)


def unknown_features(codec, record_type, columns, buf, offsets, lengths) -> set:
    """The ``unknown`` set ``Decoder.decode`` fills (features not among the columns)."""
    unknown: set = set()
    codec.Decoder(record_type, columns).decode(buf, offsets, lengths, unknown)
    return unknown


def acceptable_errors(record_type, columns, payload: bytes) -> set:
    """Every error the reference finds in one record, one column at a time."""
    buf, offsets, lengths = frame([payload])
    errors = set()
    for index, column in enumerate(columns):
        outcome, detail = decode_or_error(ref, record_type, [column], buf, offsets, lengths)
        if outcome == "error":
            reason, _, col, found = detail
            errors.add((reason, index if col >= 0 else -1, found))
    return errors


def assert_same_decode(native, record_type, columns, payloads):
    buf, offsets, lengths = frame(payloads)
    expected = decode_or_error(ref, record_type, columns, buf, offsets, lengths)
    got = decode_or_error(native, record_type, columns, buf, offsets, lengths)
    if expected[0] == "ok" or got[0] == "ok":
        assert got == expected
        assert unknown_features(native, record_type, columns, buf, offsets, lengths) == (
            unknown_features(ref, record_type, columns, buf, offsets, lengths)
        )
        return expected
    reason, record, column, found = got[1]
    assert record == expected[1][1], (got, expected)
    assert (reason, column, found) in acceptable_errors(record_type, columns, payloads[record]), (got, expected)
    return expected


# --------------------------------------------------------------------------- the tests


@SETTINGS
@given(batch=batches())
def test_decoder_matches_reference(native, batch):
    record_type, columns, _, payloads = batch
    assert_same_decode(native, record_type, columns, payloads)


@SETTINGS
@given(batch=batches())
def test_summarize_matches_reference(native, batch):
    record_type, _, _, payloads = batch
    buf, offsets, lengths = frame(payloads)
    expected = ref.summarize(buf, offsets, lengths, record_type)
    got = native.summarize(buf, offsets, lengths, record_type)
    assert list(got.items()) == list(expected.items())


def bitmap_bytes(bitmap, n: int):
    if bitmap is None:
        return None
    bits = np.unpackbits(np.frombuffer(bitmap, np.uint8), bitorder="little")[:n]
    return bits.astype(np.uint8)


def encoder_inputs(decoded: list, columns: list, n_rows: int, shift: int) -> list:
    """Encoder arrays from decoded columns; bytes data and list values get ``shift``
    leading filler items, so the offsets do not start at 0."""
    arrays = []
    for (validity, _, outer, _, _, inner, value_offsets, values), (_, _, kind, shape) in zip(decoded, columns):
        as64 = lambda b: None if b is None else np.frombuffer(b, "<i4").astype(np.int64)  # noqa: E731
        outer64, inner64, vo64 = as64(outer), as64(inner), as64(value_offsets)
        if kind == ref.BYTES:
            values = b"#" * shift + values
            vo64 = vo64 + shift
        elif shape != ref.SCALAR:
            dtype = "<i8" if kind == ref.INT64 else "<f4"
            values = np.concatenate([np.zeros(shift, dtype), np.frombuffer(values, dtype)])
            if shape == ref.LIST:
                outer64 = outer64 + shift
            else:
                inner64 = inner64 + shift
        arrays.append((bitmap_bytes(validity, n_rows), outer64, inner64, vo64, values))
    return arrays


@SETTINGS
@given(batch=batches(), shift=st.integers(0, 2))
def test_encoder_matches_reference(native, batch, shift):
    record_type, columns, records, payloads = batch
    buf, offsets, lengths = frame(payloads)
    try:
        decoded = plain(ref.Decoder(record_type, columns).decode(buf, offsets, lengths))
    except ref.DecodeError:
        return  # the inputs are invalid for these columns; nothing to encode
    arrays = encoder_inputs(decoded, columns, len(payloads), shift)
    expected_framed, expected_ends = ref.Encoder(record_type, columns).encode(arrays, len(payloads))
    framed, ends = native.Encoder(record_type, columns).encode(arrays, len(payloads))
    framed, ends = plain(framed), plain(ends)
    # protobuf-equal: the same records decode to the same columns and summaries
    got_spans = ref.scan_frames(framed)
    want_spans = ref.scan_frames(expected_framed)
    assert got_spans[2:] == (len(framed), ref.FRAME_OK)
    assert plain(ref.Decoder(record_type, columns).decode(framed, *got_spans[:2])) == plain(
        ref.Decoder(record_type, columns).decode(expected_framed, *want_spans[:2])
    )
    assert ref.summarize(framed, *got_spans[:2], record_type) == ref.summarize(
        expected_framed, *want_spans[:2], record_type
    )
    # both write the columns in column order: byte-identical
    assert framed == expected_framed
    assert ends == plain(expected_ends)


@SETTINGS
@given(payloads=st.lists(st.binary(max_size=40), max_size=8), data=st.data())
def test_raw_and_framing_match_reference(native, payloads, data):
    buf, offsets, lengths = frame(payloads)
    assert plain(native.Decoder(ref.RAW, []).decode(buf, offsets, lengths)) == plain(
        ref.Decoder(ref.RAW, []).decode(buf, offsets, lengths)
    )
    value_offsets = np.cumsum([0] + [len(p) for p in payloads]).astype(np.int64)
    assert plain(native.encode_frames(b"".join(payloads), value_offsets)) == plain(
        ref.encode_frames(b"".join(payloads), value_offsets)
    )
    raw_column = [(b"record", ref.FEATURES, ref.BYTES, ref.SCALAR)]
    arrays = [(None, None, None, value_offsets, b"".join(payloads))]
    assert plain(native.Encoder(ref.RAW, raw_column).encode(arrays, len(payloads))) == plain(
        ref.Encoder(ref.RAW, raw_column).encode(arrays, len(payloads))
    )
    # scanning with limits, from a record boundary, over damaged bytes
    damaged = bytearray(buf)
    if damaged and data.draw(st.booleans()):
        position = data.draw(st.integers(0, len(damaged) - 1))
        damaged[position] ^= data.draw(st.integers(1, 255))
    damaged = bytes(damaged[: data.draw(st.integers(0, len(damaged)))])
    boundaries = [0] + [int(o) + int(n) + 4 for o, n in zip(offsets, lengths)]
    start = data.draw(st.sampled_from([b for b in boundaries if b <= len(damaged)]))
    max_records = data.draw(st.integers(-1, 4))
    max_bytes = data.draw(st.sampled_from([-1, 0, 10, 40, 100]))
    verify = data.draw(st.booleans())
    args = (damaged, start, max_records, max_bytes, verify)
    assert plain(native.scan_frames(*args)) == plain(ref.scan_frames(*args))


@SETTINGS
@given(data=st.binary(max_size=64))
def test_crc_matches_reference(native, data):
    assert native.crc32c(data) == ref.crc32c(data)
    assert native.crc32c(data, 0x12345678) == ref.crc32c(data, 0x12345678)
    assert native.masked_crc32c(data) == ref.masked_crc32c(data)


def test_constants_match_reference(native):
    names = [
        "EXAMPLE",
        "SEQUENCE_EXAMPLE",
        "RAW",
        "FEATURES",
        "FEATURE_LISTS",
        "KIND_NONE",
        "BYTES",
        "FLOAT",
        "INT64",
        "SCALAR",
        "LIST",
        "LIST_OF_LIST",
        "FRAME_OK",
        "FRAME_TRUNCATED",
        "FRAME_BAD_LENGTH_CRC",
        "FRAME_BAD_DATA_CRC",
    ]
    assert {n: getattr(native, n) for n in names} == {n: getattr(ref, n) for n in names}
    assert issubclass(native.DecodeError, ValueError)


GROUP = tag(77, 3) + tag(1, 0) + varint(5) + ld(2, b"x") + tag(77, 4)


@pytest.mark.parametrize("where", ["record", "features", "entry", "feature", "int64_list"])
def test_unknown_group_fields_are_skipped(native, where):
    """A (deprecated) group is an unknown field like any other: protobuf skips it."""
    groups = {w: GROUP if w == where else b"" for w in ["record", "features", "entry", "feature", "int64_list"]}
    feature = ld(3, ld(1, varint(5)) + groups["int64_list"]) + groups["feature"]
    entry = ld(1, ld(1, b"a") + ld(2, feature) + groups["entry"])
    payload = groups["record"] + ld(1, entry + groups["features"])
    buf, offsets, lengths = frame([payload])
    columns = [(b"a", ref.FEATURES, ref.INT64, ref.LIST)]
    expected = decode_or_error(ref, ref.EXAMPLE, columns, buf, offsets, lengths)
    assert expected[0] == "ok"
    assert decode_or_error(native, ref.EXAMPLE, columns, buf, offsets, lengths) == expected
    assert native.summarize(buf, offsets, lengths, ref.EXAMPLE) == ref.summarize(buf, offsets, lengths, ref.EXAMPLE)
