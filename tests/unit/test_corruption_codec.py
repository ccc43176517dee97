"""Corruption fuzzer for both codecs: damaged input may only produce a non-OK frame
status or a ``DecodeError`` — never another exception, a crash or a hang.

Valid framed files (Examples and SequenceExamples of every shape, written with varied
wire encodings) are flipped, overwritten, truncated, extended, cut and spliced, both
as framed bytes (the CRCs catch most of it, and ``verify=False`` lets it through) and
as payloads re-framed with valid CRCs (so the damage reaches the protobuf decoder).
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from tfsql import _reference as ref

from test_differential import frame, record_bytes  # noqa: E402  (same directory)

pytestmark = pytest.mark.timeout(120)

SEED = 20240611

# Columns covering every location, kind and shape; the names match the base records
# below, plus kinds that mismatch on purpose.
EXAMPLE_COLUMNS = [
    (b"i", ref.FEATURES, ref.INT64, ref.SCALAR),
    (b"f", ref.FEATURES, ref.FLOAT, ref.LIST),
    (b"b", ref.FEATURES, ref.BYTES, ref.LIST),
    (b"s", ref.FEATURES, ref.BYTES, ref.SCALAR),
    (b"m", ref.FEATURES, ref.FLOAT, ref.SCALAR),
]
SEQUENCE_COLUMNS = [
    (b"i", ref.FEATURES, ref.INT64, ref.SCALAR),
    (b"t", ref.FEATURE_LISTS, ref.INT64, ref.LIST_OF_LIST),
    (b"w", ref.FEATURE_LISTS, ref.BYTES, ref.LIST_OF_LIST),
    (b"g", ref.FEATURE_LISTS, ref.FLOAT, ref.LIST_OF_LIST),
]


def base_records(record_type: int, rnd: random.Random, n: int = 8) -> list:
    """Valid payloads with every kind and shape, in varied wire encodings."""
    payloads = []
    for k in range(n):
        features = {
            b"i": (ref.INT64, [rnd.choice([0, -1, 2**63 - 1, -(2**63), k])]),
            b"f": (ref.FLOAT, [rnd.getrandbits(32) for _ in range(k % 4)]),
            b"b": (ref.BYTES, [bytes(rnd.getrandbits(8) for _ in range(k % 5))] * (k % 3)),
            b"s": (ref.BYTES, ["é日本"[: k % 4].encode()]),
        }
        if k % 2:
            features[b"m"] = None  # no kind
        if k == n - 1 and n > 1:
            features[b"m"] = (ref.INT64, [k])  # a kind mismatch, in the last record only
        lists = {}
        if record_type == ref.SEQUENCE_EXAMPLE:
            lists = {
                b"t": [(ref.INT64, list(range(s))) for s in range(k % 4)],
                b"w": [None, (ref.BYTES, [b"x", b"\xff"])][: k % 3],
                b"g": [(ref.FLOAT, [0x7F800001, 0])] * (k % 2),
            }
        record = {ref.FEATURES: features, ref.FEATURE_LISTS: lists}
        payloads.append(record_bytes(record, record_type, rnd))
    return payloads


def mutate(data: bytes, rnd: random.Random, donors: list) -> bytes:
    """One to three random mutations of ``data``."""
    out = bytearray(data)
    for _ in range(rnd.randint(1, 3)):
        op = rnd.randrange(8)
        pos = rnd.randint(0, len(out))
        if op == 0 and out:  # flip one bit
            i = rnd.randrange(len(out))
            out[i] ^= 1 << rnd.randrange(8)
        elif op == 1 and out:  # overwrite a byte with a "dangerous" value
            out[rnd.randrange(len(out))] = rnd.choice([0x00, 0x7F, 0x80, 0xFF, 0x0A, 0x12, 0x1A])
        elif op == 2:  # truncate
            del out[pos:]
        elif op == 3:  # insert random bytes
            out[pos:pos] = bytes(rnd.getrandbits(8) for _ in range(rnd.randint(1, 12)))
        elif op == 4:  # delete a span
            del out[pos : pos + rnd.randint(1, 16)]
        elif op == 5:  # splice in a piece of another input
            donor = rnd.choice(donors)
            start = rnd.randint(0, len(donor))
            out[pos:pos] = donor[start : start + rnd.randint(1, 40)]
        elif op == 6:  # a huge varint (length or value)
            out[pos:pos] = b"\xff" * rnd.randint(5, 11) + bytes([rnd.randrange(128)])
        else:  # duplicate a span in place
            out[pos:pos] = out[pos : pos + rnd.randint(1, 24)]
    return bytes(out)


def exercise(codec, buf: bytes, record_type: int, columns: list, rnd: random.Random) -> None:
    """Scan, decode and summarize ``buf``; only DecodeError may escape."""
    verify = rnd.random() < 0.5
    start = 0 if rnd.random() < 0.8 else rnd.randint(0, len(buf))
    offsets, lengths, end, status = codec.scan_frames(
        buf, start, rnd.choice([-1, -1, 1, 3]), rnd.choice([-1, -1, 0, 64]), verify
    )
    assert status in (ref.FRAME_OK, ref.FRAME_TRUNCATED, ref.FRAME_BAD_LENGTH_CRC, ref.FRAME_BAD_DATA_CRC)
    assert start <= end <= len(buf)
    assert len(offsets) == len(lengths)
    spans_ok = all(
        int(o) + int(n) <= end for o, n in zip(np.frombuffer(offsets, np.uint64), np.frombuffer(lengths, np.uint64))
    )
    assert spans_ok
    for decoder in (codec.Decoder(record_type, columns), codec.Decoder(ref.RAW, [])):
        try:
            decoder.decode(buf, offsets, lengths)
        except codec.DecodeError as exc:
            assert exc.reason in ("malformed", "kind_mismatch", "not_scalar", "overflow")
    try:
        codec.summarize(buf, offsets, lengths, record_type)
    except codec.DecodeError as exc:
        assert exc.reason == "malformed"


def corpus(record_type: int, rnd: random.Random) -> list:
    return [base_records(record_type, rnd, n) for n in (1, 4, 9)]


def run_fuzz(codec, mutations: int, seed: int) -> None:
    rnd = random.Random(seed)
    for record_type, columns in ((ref.EXAMPLE, EXAMPLE_COLUMNS), (ref.SEQUENCE_EXAMPLE, SEQUENCE_COLUMNS)):
        files = corpus(record_type, rnd)
        framed_files = [frame(payloads)[0] for payloads in files]
        donors = framed_files + [p for payloads in files for p in payloads]
        for _ in range(mutations):
            if rnd.random() < 0.5:
                # damage the framed bytes
                buf = mutate(rnd.choice(framed_files), rnd, donors)
            else:
                # damage payloads, then frame them with valid CRCs
                payloads = list(rnd.choice(files))
                for i in rnd.sample(range(len(payloads)), rnd.randint(1, len(payloads))):
                    payloads[i] = mutate(payloads[i], rnd, donors)
                buf = frame(payloads)[0]
            exercise(codec, buf, record_type, columns, rnd)
        # inputs that are not TFRecords at all
        for junk in (
            b"",
            b"\x00",
            b"not a tfrecord file at all\n" * 3,
            b"\x1f\x8b\x08\x00" + bytes(40),
            bytes(range(256)),
            b"\xff" * 100,
        ):
            exercise(codec, junk, record_type, columns, rnd)


def test_reference_survives_corruption():
    run_fuzz(ref, mutations=2000, seed=SEED)


def test_native_survives_corruption(native):
    run_fuzz(native, mutations=20000, seed=SEED + 1)


def test_mutations_reach_the_decoder():
    """The fuzzer is not vacuous: payload damage is decoded and often rejected."""
    rnd = random.Random(SEED)
    files = corpus(ref.EXAMPLE, rnd)
    donors = [p for payloads in files for p in payloads]
    outcomes = {"ok": 0, "error": 0}
    for _ in range(300):
        payloads = list(files[1])[:-1]  # without the record that mismatches on purpose
        i = rnd.randrange(len(payloads))
        payloads[i] = mutate(payloads[i], rnd, donors)
        buf, offsets, lengths = frame(payloads)
        try:
            ref.Decoder(ref.EXAMPLE, EXAMPLE_COLUMNS).decode(buf, offsets, lengths)
            outcomes["ok"] += 1
        except ref.DecodeError:
            outcomes["error"] += 1
    assert outcomes["error"] > 50 and outcomes["ok"] > 10, outcomes
