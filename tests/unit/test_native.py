"""Unit tests of the C core ``tfsql._native`` against its contract (``_native.pyi``).

The independent oracle is the ``protobuf`` package (``tfsql._proto``) parsing the same
bytes, and the ``crc32c`` package for checksums. Messages protobuf would never write
(unpacked values, duplicate keys, unknown fields, merged oneofs) are hand-assembled
with the small wire helpers below.
"""

from __future__ import annotations

import os
import random
import re
import struct
import subprocess
import sys
from pathlib import Path

import crc32c as crc32c_pkg
import numpy as np
import pyarrow as pa
import pytest

from tfsql import _native as N
from tfsql._proto import Example, SequenceExample
from tfrecord_files import frame
from wire import ld, read_varint, tag, varint

EX, SEQ, RAW = N.EXAMPLE, N.SEQUENCE_EXAMPLE, N.RAW
CTX, FL = N.FEATURES, N.FEATURE_LISTS
B, F, I = N.BYTES, N.FLOAT, N.INT64
SCALAR, LIST, LOL = N.SCALAR, N.LIST, N.LIST_OF_LIST


# --------------------------------------------------------------------------- wire helpers


def vi(field: int, value: int) -> bytes:
    return tag(field, 0) + varint(value)


def f32(field: int, value: float) -> bytes:
    return tag(field, 5) + struct.pack("<f", value)


def entry(key: bytes, feature: bytes) -> bytes:
    """A map entry field (field 1 of Features / FeatureLists)."""
    return ld(1, ld(1, key) + ld(2, feature))


def example(*entries: bytes) -> bytes:
    return ld(1, b"".join(entries))


def int64_feature(*values: int) -> bytes:
    return ld(3, ld(1, b"".join(varint(v) for v in values)) if values else b"")


def float_feature(*values: float) -> bytes:
    return ld(2, ld(1, struct.pack(f"<{len(values)}f", *values)) if values else b"")


def bytes_feature(*values: bytes) -> bytes:
    return ld(1, b"".join(ld(1, v) for v in values))


# --------------------------------------------------------------------------- decode helpers


def spans(payloads):
    """``(buf, offsets, lengths)`` of the payloads laid end to end (no framing)."""
    buf = b"".join(payloads)
    lengths = np.array([len(p) for p in payloads], dtype=np.uint64)
    offsets = (np.cumsum(lengths) - lengths).astype(np.uint64)
    return buf, offsets, lengths


def bits(bitmap, n):
    if bitmap is None:
        return [True] * n
    arr = np.unpackbits(np.frombuffer(bitmap, np.uint8), bitorder="little")
    return [bool(b) for b in arr[:n]]


def column_values(result, kind, shape, n):
    """Python values of one decoded column (None for nulls), checking the layout."""
    validity, nulls, outer, inner_validity, inner_nulls, inner, value_offsets, values = result
    valid = bits(validity, n)
    assert nulls == valid.count(False)
    assert (validity is None) == (nulls == 0)
    if kind == B:
        vo = np.frombuffer(value_offsets, np.int32).tolist()
        data = bytes(values)
        assert vo[0] == 0 and vo[-1] == len(data)
        items = [data[vo[i] : vo[i + 1]] for i in range(len(vo) - 1)]
    else:
        assert value_offsets is None
        items = np.frombuffer(values, np.int64 if kind == I else np.float32).tolist()
    if shape == SCALAR:
        assert outer is None and inner is None and inner_validity is None and inner_nulls == 0
        assert len(items) == n
        return [items[i] if valid[i] else None for i in range(n)]
    oo = np.frombuffer(outer, np.int32).tolist()
    assert len(oo) == n + 1 and oo[0] == 0
    if shape == LIST:
        assert inner is None and inner_validity is None and inner_nulls == 0
        assert oo[-1] == len(items)
        for i in range(n):
            assert valid[i] or oo[i] == oo[i + 1]
        return [items[oo[i] : oo[i + 1]] if valid[i] else None for i in range(n)]
    io = np.frombuffer(inner, np.int32).tolist()
    m = len(io) - 1
    assert oo[-1] == m and io[-1] == len(items)
    inner_valid = bits(inner_validity, m)
    assert inner_nulls == inner_valid.count(False)
    lists = [items[io[j] : io[j + 1]] if inner_valid[j] else None for j in range(m)]
    return [lists[oo[i] : oo[i + 1]] if valid[i] else None for i in range(n)]


def decode(payloads, columns, record_type=EX):
    buf, offsets, lengths = spans(payloads)
    results = N.Decoder(record_type, columns).decode(buf, offsets, lengths)
    assert len(results) == len(columns)
    return [column_values(r, kind, shape, len(payloads)) for r, (_, _, kind, shape) in zip(results, columns)]


def proto_values(feature):
    """Values of a protobuf Feature, or None without a kind (floats as float32)."""
    kind = feature.WhichOneof("kind")
    if kind is None:
        return None
    values = list(getattr(feature, kind).value)
    if kind == "float_list":
        values = np.array(values, np.float32).tolist()
    return values


def expected(payloads, columns, record_type=EX):
    """What protobuf makes of the payloads, per column (kinds assumed to match)."""
    out = [[] for _ in columns]
    for payload in payloads:
        if record_type == EX:
            maps = {CTX: Example.FromString(payload).features.feature}
        else:
            msg = SequenceExample.FromString(payload)
            maps = {CTX: msg.context.feature, FL: msg.feature_lists.feature_list}
        for c, (name, location, kind, shape) in enumerate(columns):
            key = name.decode()
            if key not in maps[location]:
                out[c].append(None)
                continue
            item = maps[location][key]
            if shape == LOL:
                out[c].append([proto_values(step) for step in item.feature])
                continue
            values = proto_values(item)
            if shape == SCALAR:
                values = values[0] if values else None
            out[c].append(values)
    return out


def check(payloads, columns, record_type=EX):
    """The C decoder agrees with protobuf on these payloads; returns the values."""
    got = decode(payloads, columns, record_type)
    assert got == expected(payloads, columns, record_type)
    return got


# --------------------------------------------------------------------------- CRC-32C


def test_crc32c_known_vectors():
    assert N.crc32c(b"123456789") == 0xE3069283
    assert N._crc32c_sw(b"123456789") == 0xE3069283
    assert N.crc32c(b"") == 0
    assert N.crc32c(bytes(32)) == 0x8A9136AA
    assert N.masked_crc32c(b"") == 0xA282EAD8
    c = N.crc32c(b"123456789")
    assert N.masked_crc32c(b"123456789") == (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def test_crc32c_matches_crc32c_package_on_many_lengths_and_alignments():
    rng = np.random.default_rng(1)
    data = rng.integers(0, 256, 40_000, dtype=np.uint8).tobytes()
    view = memoryview(bytearray(data))
    lengths = list(range(0, 70)) + [255, 256, 1000, 3071, 3072, 3073, 6150, 9216 + 13, 39_990]
    for length in lengths:
        for align in range(0, 9):
            chunk = view[align : align + length]
            want = crc32c_pkg.crc32c(chunk)
            assert N.crc32c(chunk) == want, (length, align)
            assert N._crc32c_sw(chunk) == want, (length, align)


def test_crc32c_continues_from_a_previous_crc():
    a, b = b"hello, ", b"world" * 2000
    assert N.crc32c(b, N.crc32c(a)) == N.crc32c(a + b)
    assert N._crc32c_sw(b, crc=N._crc32c_sw(a)) == N.crc32c(a + b)


def test_crc32c_accepts_any_contiguous_buffer():
    arr = np.arange(1000, dtype=np.int64)
    assert N.crc32c(arr) == crc32c_pkg.crc32c(arr.tobytes())
    assert N.crc32c(bytearray(b"123456789")) == 0xE3069283


def test_crc32c_rejects_an_out_of_range_start_value():
    with pytest.raises(ValueError, match=r"crc must be in \[0, 2\*\*32\)"):
        N.crc32c(b"x", 1 << 32)
    with pytest.raises(ValueError, match=r"crc must be in"):
        N.crc32c(b"x", -1)


def test_hardware_crc_is_a_bool_and_env_var_forces_the_portable_code():
    assert isinstance(N.hardware_crc(), bool)
    code = (
        "from tfsql import _native as N; import crc32c, os; d = os.urandom(10007); "
        "assert N.crc32c(d) == crc32c.crc32c(d); print(N.hardware_crc())"
    )
    env = dict(os.environ, TFSQL_NO_HW_CRC="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _x_power_mod(n: int, poly: int) -> int:
    """x**n mod poly over GF(2) (poly with its x**32 term)."""
    r = 1
    for _ in range(n):
        r <<= 1
        if r >> 32 & 1:
            r ^= poly
    return r


def _reflect(value: int, bits: int) -> int:
    return int(format(value, f"0{bits}b")[::-1], 2)


def _poly_div(a: int, b: int) -> int:
    q = 0
    while a.bit_length() >= b.bit_length():
        shift = a.bit_length() - b.bit_length()
        q |= 1 << shift
        a ^= b << shift
    return q


def test_the_clmul_fold_constants_are_the_ones_the_comment_defines():
    """The PCLMULQDQ constants in core/crc32c.c, derived again: k(n) = reflect32(x^n mod P) << 1
    and the Barrett pair. The same formulas give Linux's published constants for the
    IEEE polynomial, which checks the formulas themselves."""
    source = (Path(__file__).resolve().parents[2] / "tfsql" / "core" / "crc32c.c").read_text()
    found = dict(re.findall(r"#define CLMUL_(K\d|MU|POLY) (0x[0-9a-f]+)ull", source))

    def k(n: int, poly: int) -> int:
        return _reflect(_x_power_mod(n, poly), 32) << 1

    ieee = 0x104C11DB7
    assert [k(n, ieee) for n in (544, 480, 160, 96, 64)] == [
        0x154442BD4,
        0x1C6E41596,
        0x1751997D0,
        0xCCAA009E,
        0x163CD6124,
    ]
    assert (_reflect(_poly_div(1 << 64, ieee), 33), _reflect(ieee, 33)) == (0x1F7011641, 0x1DB710641)
    castagnoli = 0x11EDC6F41
    derived = {f"K{i}": k(n, castagnoli) for i, n in enumerate((544, 480, 160, 96, 64), start=1)}
    derived["MU"] = _reflect(_poly_div(1 << 64, castagnoli), 33)
    derived["POLY"] = _reflect(castagnoli, 33)
    assert {name: int(value, 16) for name, value in found.items()} == derived


def test_every_crc_routine_agrees_on_lengths_around_the_clmul_threshold():
    """The clmul fold (256 bytes and up), the CRC32 instruction (words at any alignment,
    tails of 4, 2 and 1 bytes) and the table code give the same CRC on the same bytes,
    from any start value; each in its own process."""
    code = (
        "from tfsql import _native as N; import crc32c, random; random.seed(5); d = random.randbytes(70000)\n"
        "for n in list(range(0, 40)) + list(range(240, 340)) + [1023, 1024, 4096 + 15, 65536 + 7]:\n"
        "    for a in range(9):\n"
        "        c = d[a : a + n]; s = random.getrandbits(32)\n"
        "        assert N.crc32c(c) == crc32c.crc32c(c), (n, a)\n"
        "        assert N.crc32c(c, s) == N._crc32c_sw(c, s), (n, a)\n"
        "print('ok')"
    )
    for flag in ({}, {"TFSQL_NO_CLMUL_CRC": "1"}, {"TFSQL_NO_HW_CRC": "1"}):
        env = dict(os.environ, **flag)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        assert (out.returncode, out.stdout.strip()) == (0, "ok"), (flag, out.stderr)


# --------------------------------------------------------------------------- framing


PAYLOADS = [b"", b"a", b"hello world", bytes(range(256)) * 10]


def u64(buf):
    return np.frombuffer(buf, np.uint64).tolist()


def test_encode_frames_matches_the_tfrecord_layout_and_scans_back():
    data = b"".join(PAYLOADS)
    offsets = np.cumsum([0] + [len(p) for p in PAYLOADS]).astype(np.int64)
    framed, ends = N.encode_frames(data, offsets)
    assert bytes(framed) == b"".join(frame(p) for p in PAYLOADS)
    assert u64(ends) == np.cumsum([16 + len(p) for p in PAYLOADS]).tolist()
    offs, lens, end, status = N.scan_frames(framed)
    assert status == N.FRAME_OK and end == len(framed)
    assert u64(lens) == [len(p) for p in PAYLOADS]
    assert [bytes(framed)[o : o + n] for o, n in zip(u64(offs), u64(lens))] == PAYLOADS


def test_encode_frames_offsets_need_not_start_at_zero():
    framed, ends = N.encode_frames(b"xxabcdef", np.array([2, 5, 8], np.int64))
    assert bytes(framed) == frame(b"abc") + frame(b"def")


def test_encode_frames_with_no_records():
    framed, ends = N.encode_frames(b"", np.array([], np.int64))
    assert len(framed) == 0 and len(ends) == 0


@pytest.mark.parametrize("offsets", [[0, 5, 3], [0, 99], [-1, 2]])
def test_encode_frames_rejects_bad_offsets(offsets):
    with pytest.raises(ValueError, match="value_offsets are decreasing or point outside"):
        N.encode_frames(b"abcdef", np.array(offsets, np.int64))


def test_scan_frames_of_an_empty_buffer():
    offs, lens, end, status = N.scan_frames(b"")
    assert (len(offs), len(lens), end, status) == (0, 0, 0, N.FRAME_OK)


def test_scan_frames_from_start():
    buf = frame(b"one") + frame(b"two")
    offs, lens, end, status = N.scan_frames(buf, start=len(frame(b"one")))
    assert u64(offs) == [19 + 12] and u64(lens) == [3] and end == len(buf)


@pytest.mark.parametrize("start", [-1, 100])
def test_scan_frames_rejects_a_start_outside_the_buffer(start):
    with pytest.raises(ValueError, match=r"start=.* is outside the buffer of 37 bytes"):
        N.scan_frames(frame(b"abc") + frame(b"de"), start)


@pytest.mark.parametrize("cut", [1, 11, 12, 14, 15])
def test_scan_frames_truncated_record(cut):
    good = frame(b"first")
    buf = good + frame(b"abc")[:cut]
    offs, lens, end, status = N.scan_frames(buf)
    assert status == N.FRAME_TRUNCATED
    assert end == len(good) and u64(lens) == [5]


def test_scan_frames_bad_length_crc():
    bad = bytearray(frame(b"abc"))
    bad[9] ^= 1
    offs, lens, end, status = N.scan_frames(frame(b"x") + bytes(bad))
    assert (status, end, u64(lens)) == (N.FRAME_BAD_LENGTH_CRC, 17, [1])


def test_scan_frames_bad_data_crc_and_verify_false():
    bad = bytearray(frame(b"abc"))
    bad[13] ^= 0x40
    buf = frame(b"x") + bytes(bad) + frame(b"yz")
    offs, lens, end, status = N.scan_frames(buf)
    assert (status, end, u64(lens)) == (N.FRAME_BAD_DATA_CRC, 17, [1])
    offs, lens, end, status = N.scan_frames(buf, verify=False)
    assert (status, end, u64(lens)) == (N.FRAME_OK, len(buf), [1, 3, 2])
    # the caller may skip 12 + length + 4 bytes past a bad data CRC
    offs, lens, end, status = N.scan_frames(buf, start=17 + 12 + 3 + 4)
    assert (status, u64(lens)) == (N.FRAME_OK, [2])


def test_scan_frames_max_records_and_max_bytes():
    buf = b"".join(frame(b"x" * n) for n in (3, 4, 5, 6))
    offs, lens, end, status = N.scan_frames(buf, max_records=2)
    assert (u64(lens), end, status) == ([3, 4], 19 + 20, N.FRAME_OK)
    offs, lens, end, status = N.scan_frames(buf, max_records=0)
    assert (u64(lens), end, status) == ([], 0, N.FRAME_OK)
    offs, lens, end, status = N.scan_frames(buf, max_bytes=12)
    assert (u64(lens), status) == ([3, 4, 5], N.FRAME_OK)
    offs, lens, end, status = N.scan_frames(buf, max_bytes=11)
    assert u64(lens) == [3, 4]
    # at least one record when one is complete
    offs, lens, end, status = N.scan_frames(buf, max_bytes=0)
    assert (u64(lens), end) == ([3], 19)


def test_scan_frames_returns_buffers_usable_by_pyarrow_and_numpy():
    buf = frame(b"abc") * 3
    offs, lens, end, status = N.scan_frames(bytearray(buf))
    assert isinstance(offs, N.Buffer) and len(offs) == 24
    assert pa.py_buffer(offs).to_pybytes() == np.array([12, 31, 50], np.uint64).tobytes()
    assert "Buffer of 24 bytes" in repr(offs)


# --------------------------------------------------------------------------- Decoder


COLS_TABULAR = [
    (b"i", CTX, I, SCALAR),
    (b"f", CTX, F, SCALAR),
    (b"s", CTX, B, SCALAR),
    (b"il", CTX, I, LIST),
    (b"fl", CTX, F, LIST),
    (b"sl", CTX, B, LIST),
]


def make_example(**features) -> bytes:
    ex = Example()
    for name, (kind, values) in features.items():
        feature = ex.features.feature[name]
        if kind == "none":
            feature.SetInParent()
        else:
            getattr(feature, kind).SetInParent()
            getattr(feature, kind).value.extend(values)
    return ex.SerializeToString()


def test_decode_examples_built_with_protobuf():
    payloads = [
        make_example(
            i=("int64_list", [7]),
            f=("float_list", [1.5]),
            s=("bytes_list", [b"ab"]),
            il=("int64_list", [1, -2, 2**63 - 1, -(2**63)]),
            fl=("float_list", [0.25, -3.0]),
            sl=("bytes_list", [b"", b"xyz"]),
        ),
        make_example(),
        make_example(
            i=("int64_list", []),
            f=("none", None),
            s=("bytes_list", []),
            il=("int64_list", []),
            fl=("none", None),
            sl=("bytes_list", []),
        ),
        make_example(i=("int64_list", [-1]), other=("float_list", [9.0]), s=("bytes_list", [b"\xff\x00"])),
    ]
    got = check(payloads, COLS_TABULAR)
    assert got == [
        [7, None, None, -1],
        [1.5, None, None, None],
        [b"ab", None, None, b"\xff\x00"],
        [[1, -2, 2**63 - 1, -(2**63)], None, [], None],
        [[0.25, -3.0], None, None, None],
        [[b"", b"xyz"], None, [], None],
    ]


def test_decode_of_no_records():
    assert decode([], COLS_TABULAR) == [[] for _ in COLS_TABULAR]


def test_decode_scalar_values_buffer_has_zero_for_null_rows():
    payloads = [make_example(i=("int64_list", [5])), make_example(), make_example(i=("int64_list", [6]))]
    buf, offsets, lengths = spans(payloads)
    ((validity, nulls, *_, values),) = N.Decoder(EX, [(b"i", CTX, I, SCALAR)]).decode(buf, offsets, lengths)
    assert nulls == 1 and bytes(validity) == b"\x05"
    assert np.frombuffer(values, np.int64).tolist() == [5, 0, 6]


def test_decode_unpacked_and_packed_values_concatenate():
    ints = ld(3, vi(1, 5) + ld(1, varint(6) + varint(-7)) + vi(1, 8))
    floats = ld(2, f32(1, 1.5) + ld(1, struct.pack("<2f", 2.5, 3.5)) + f32(1, 4.5))
    payload = example(entry(b"il", ints), entry(b"fl", floats))
    assert check([payload], COLS_TABULAR[3:5]) == [[[5, 6, -7, 8]], [[1.5, 2.5, 3.5, 4.5]]]


def test_decode_negative_and_extreme_varints():
    values = [-1, -(2**63), 2**63 - 1, 0, 127, 128, 2**35]
    payload = example(entry(b"il", int64_feature(*values)))
    assert len(varint(-1)) == 10
    assert check([payload], [(b"il", CTX, I, LIST)]) == [[values]]


def test_decode_packed_varints_of_every_length_at_every_distance_from_the_end():
    """Varints of 1 to 10 bytes, each as the last value of a packed list and followed by
    0 to 9 more one-byte values, so that each length is decoded both by the 8-byte
    (loop-free) path and by the byte loop near the end of the list."""
    for length in range(1, 11):
        value = (1 << (7 * length - 1)) | 0x55 if length < 10 else -(2**62) - 3
        assert len(varint(value)) == length
        for tail in range(10):
            values = [300, value] + list(range(tail))
            payload = example(entry(b"il", int64_feature(*values)))
            assert check([payload], [(b"il", CTX, I, LIST)]) == [[values]], (length, tail)


def test_decode_unknown_fields_of_every_wire_type_at_every_level():
    unknown = vi(9, 300) + tag(10, 1) + b"\x01" * 8 + ld(11, b"junk") + tag(12, 5) + b"abcd"
    int_list = ld(3, unknown + ld(1, varint(4)) + unknown)
    bytes_list = ld(1, unknown + ld(1, b"v") + unknown)
    payload = (
        unknown
        + ld(
            1,
            unknown
            + ld(1, ld(1, b"i") + ld(2, unknown + int_list + unknown))
            + unknown
            + ld(1, ld(2, bytes_list + unknown) + ld(1, b"s")),
        )
        + unknown
    )
    assert check([payload], [(b"i", CTX, I, SCALAR), (b"s", CTX, B, SCALAR)]) == [[4], [b"v"]]


def test_decode_unknown_fields_inside_a_map_entry_are_skipped():
    # C++ protobuf and TensorFlow keep such an entry; Python's upb moves the whole entry
    # to the unknown fields (dropping it from the map). tfsql follows C++/TensorFlow.
    unknown = vi(9, 300) + tag(10, 1) + b"\x01" * 8 + ld(11, b"junk") + tag(12, 5) + b"abcd"
    payload = ld(
        1,
        ld(1, ld(1, b"old") + ld(2, int64_feature(1)))
        + ld(1, unknown + ld(1, b"i") + unknown + ld(2, int64_feature(4)) + unknown),
    )
    assert decode([payload], [(b"i", CTX, I, SCALAR), (b"old", CTX, I, SCALAR)]) == [[4], [1]]


def test_decode_known_fields_with_another_wire_type_are_unknown_fields():
    # Example.features as a varint; Int64List.value as fixed32; Feature.int64_list as fixed64
    payload = vi(1, 3) + example(entry(b"i", ld(3, ld(1, varint(2)) + f32(1, 1.0)) + tag(3, 1) + b"\x00" * 8))
    assert check([payload], [(b"i", CTX, I, LIST)]) == [[[2]]]


def test_decode_entry_fields_in_any_order():
    payload = ld(1, ld(1, ld(2, int64_feature(1)) + ld(1, b"i")))
    assert check([payload], [(b"i", CTX, I, SCALAR)]) == [[1]]


def test_decode_repeated_map_key_last_entry_wins():
    payload = example(entry(b"i", int64_feature(1)), entry(b"s", bytes_feature(b"a")), entry(b"i", int64_feature(2, 3)))
    assert check([payload], [(b"i", CTX, I, LIST), (b"s", CTX, B, LIST)]) == [[[2, 3]], [[b"a"]]]
    # the later entry replaces even with a Feature without kind
    payload = example(entry(b"i", int64_feature(1)), entry(b"i", b""))
    assert check([payload], [(b"i", CTX, I, LIST)]) == [[None]]


def test_decode_repeated_features_field_merges_the_maps():
    payload = example(entry(b"i", int64_feature(1)), entry(b"s", bytes_feature(b"x"))) + example(
        entry(b"i", int64_feature(5))
    )
    assert check([payload], [(b"i", CTX, I, SCALAR), (b"s", CTX, B, SCALAR)]) == [[5], [b"x"]]


def test_decode_entry_without_key_is_the_empty_name_and_without_value_is_null():
    payload = ld(1, ld(1, ld(2, int64_feature(9))) + ld(1, ld(1, b"i")))
    assert check([payload], [(b"", CTX, I, SCALAR), (b"i", CTX, I, LIST)]) == [[9], [None]]


def test_decode_feature_without_kind_is_null_and_empty_list_is_empty():
    payloads = [example(entry(b"x", b"")), example(entry(b"x", int64_feature())), example(entry(b"x", ld(3, b"")))]
    assert check(payloads, [(b"x", CTX, I, LIST)]) == [[None, [], []]]
    assert check(payloads, [(b"x", CTX, I, SCALAR)]) == [[None, None, None]]


def test_decode_oneof_same_kind_concatenates_and_a_later_kind_replaces():
    same = int64_feature(1) + int64_feature(2, 3)
    replaced = int64_feature(1) + float_feature(2.0) + int64_feature(4) + int64_feature(5)
    payloads = [example(entry(b"x", same)), example(entry(b"x", replaced))]
    assert check(payloads, [(b"x", CTX, I, LIST)]) == [[[1, 2, 3], [4, 5]]]
    # a float feature later replaced by int64: no kind mismatch for an int64 column
    payload = example(entry(b"x", bytes_feature(b"q") + int64_feature(7)))
    assert check([payload], [(b"x", CTX, I, SCALAR)]) == [[7]]


def test_decode_repeated_value_field_in_one_entry_merges_the_features():
    payload = ld(1, ld(1, ld(1, b"x") + ld(2, int64_feature(1)) + ld(2, int64_feature(2))))
    assert check([payload], [(b"x", CTX, I, LIST)]) == [[[1, 2]]]
    payload = ld(1, ld(1, ld(1, b"x") + ld(2, int64_feature(1)) + ld(2, bytes_feature(b"z"))))
    assert check([payload], [(b"x", CTX, B, LIST)]) == [[[b"z"]]]


def test_decode_refuses_a_malformed_feature_no_column_reads():
    """A record is valid or not whatever the projection (protobuf parses every feature)."""
    garbage = ld(3, b"\xff\xff")  # a malformed Int64List nobody asked for
    payload = example(entry(b"bad", garbage), entry(b"i", int64_feature(3)))
    with pytest.raises(N.DecodeError) as info:
        N.Decoder(EX, [(b"i", CTX, I, SCALAR)]).decode(*spans([payload]))
    assert (info.value.reason, info.value.record, info.value.column) == ("malformed", 0, -1)
    valid = example(entry(b"other", int64_feature(5)), entry(b"i", int64_feature(3)))
    assert decode([valid], [(b"i", CTX, I, SCALAR)]) == [[3]]


def test_decode_kind_mismatch():
    payloads = [make_example(x=("int64_list", [1])), make_example(x=("float_list", []))]
    buf, offsets, lengths = spans(payloads)
    decoder = N.Decoder(EX, [(b"y", CTX, B, LIST), (b"x", CTX, I, LIST)])
    with pytest.raises(
        N.DecodeError,
        match=r"record 1: feature b'x' holds a float_list but "
        r"column 1 expects int64_list",
    ) as info:
        decoder.decode(buf, offsets, lengths)
    err = info.value
    assert isinstance(err, ValueError)
    assert (err.reason, err.record, err.column, err.found_kind) == ("kind_mismatch", 1, 1, F)


def test_decode_not_scalar():
    payloads = [make_example(x=("bytes_list", [b"a", b"b"]))]
    with pytest.raises(
        N.DecodeError,
        match=r"record 0: feature b'x' has 2 values but column 0 "
        r"is a scalar",
    ) as info:
        N.Decoder(EX, [(b"x", CTX, B, SCALAR)]).decode(*spans(payloads))
    assert (info.value.reason, info.value.record, info.value.column, info.value.found_kind) == ("not_scalar", 0, 0, 0)


MALFORMED = {
    "end group": tag(5, 4),
    "unclosed group": tag(5, 3) + vi(6, 1),
    "mismatched end group": tag(5, 3) + tag(6, 4),
    "groups nested too deep": tag(5, 3) * 100 + tag(5, 4) * 100,
    "wire type 6": tag(5, 6),
    "wire type 7": b"\x0f",
    "field number 0": b"\x00\x00",
    "varint of 11 bytes": vi(5, 1)[:1] + b"\x80" * 10 + b"\x00",
    "truncated varint": tag(5, 0) + b"\x80",
    "length past the end": tag(1, 2) + varint(100) + b"abc",
    "truncated fixed64": tag(5, 1) + b"1234567",
    "truncated fixed32": tag(5, 5) + b"123",
    "packed floats of 5 bytes": example(entry(b"i", ld(2, ld(1, b"12345")))),
    "packed varint running off": example(entry(b"i", ld(3, ld(1, b"\x01\x80")))),
    "packed varint of 11 bytes": example(entry(b"i", ld(3, ld(1, b"\x80" * 10 + b"\x01")))),
    "bad entry": ld(1, ld(1, b"\x0a\x05ab")),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_decode_malformed(name):
    payload = MALFORMED[name]
    decoder = N.Decoder(EX, [(b"i", CTX, I, LIST)])
    with pytest.raises(N.DecodeError, match=r"record 1 is not a valid Example protobuf") as info:
        decoder.decode(*spans([example(), payload]))
    assert (info.value.reason, info.value.record, info.value.column) == ("malformed", 1, -1)
    with pytest.raises(N.DecodeError, match="record 0 is not a valid Example protobuf"):
        N.summarize(*spans([payload]), EX)


def test_protobuf_agrees_the_malformed_cases_are_malformed():
    from google.protobuf.message import DecodeError as ProtobufDecodeError

    for name, payload in MALFORMED.items():
        if name == "groups nested too deep":
            continue  # protobuf's recursion limit is 100; tfsql's group depth limit is 64
        with pytest.raises(ProtobufDecodeError):
            Example.FromString(payload)


def test_unknown_groups_are_skipped_like_protobuf():
    grouped = tag(7, 3) + vi(1, 5) + tag(8, 3) + ld(2, b"xy") + tag(8, 4) + tag(7, 4)
    payload = example(entry(b"i", int64_feature(1))) + grouped
    assert Example.FromString(payload).features.feature["i"].int64_list.value == [1]
    parts = N.Decoder(EX, [(b"i", CTX, I, LIST)]).decode(*spans([payload]))
    assert np.frombuffer(parts[0][-1], np.int64).tolist() == [1]


def test_decode_rejects_spans_outside_the_buffer():
    decoder = N.Decoder(EX, [(b"i", CTX, I, LIST)])
    with pytest.raises(ValueError, match=r"record 1: its span \(offset \+ length\) lies outside"):
        decoder.decode(b"\x0a\x00", np.array([0, 1], np.uint64), np.array([2, 2], np.uint64))
    with pytest.raises(ValueError, match="2 offsets but 1 lengths"):
        decoder.decode(b"", np.zeros(2, np.uint64), np.zeros(1, np.uint64))
    with pytest.raises(ValueError, match="offsets and lengths must be uint64 arrays"):
        decoder.decode(b"", b"123", b"123")


def test_decode_sequence_examples():
    def seq(context=None, lists=None):
        msg = SequenceExample()
        for name, values in (context or {}).items():
            msg.context.feature[name].int64_list.value.extend(values)
        for name, steps in (lists or {}).items():
            feature_list = msg.feature_lists.feature_list[name]
            feature_list.SetInParent()
            for step in steps:
                feature = feature_list.feature.add()
                if step is not None:
                    feature.float_list.SetInParent()
                    feature.float_list.value.extend(step)
        return msg.SerializeToString()

    payloads = [
        seq({"label": [1]}, {"frames": [[1.0, 2.0], [], None, [3.5]]}),
        seq({"label": [2]}),
        seq({}, {"frames": []}),
    ]
    columns = [(b"label", CTX, I, SCALAR), (b"frames", FL, F, LOL)]
    assert check(payloads, columns, SEQ) == [
        [1, 2, None],
        [[[1.0, 2.0], [], None, [3.5]], None, []],
    ]
    # a feature_lists name never matches a context column and vice versa
    assert check(payloads, [(b"frames", CTX, F, LIST), (b"label", FL, I, LOL)], SEQ) == [[None] * 3, [None] * 3]


def test_decode_sequence_example_hand_built_cases():
    step_a, step_b = bytes_feature(b"a"), bytes_feature(b"b", b"c")
    payload = (
        ld(2, ld(1, ld(1, b"w") + ld(2, ld(1, step_a))))  # replaced below
        + ld(1, entry(b"n", int64_feature(4)))
        + ld(2, ld(1, ld(2, ld(1, step_b) + ld(9, b"?")) + ld(2, ld(1, b"")) + ld(1, b"w")))
    )
    columns = [(b"w", FL, B, LOL), (b"n", CTX, I, SCALAR)]
    assert check([payload], columns, SEQ) == [[[[b"b", b"c"], None]], [4]]


def test_decode_sequence_example_step_kind_mismatch():
    payload = ld(2, ld(1, ld(1, b"w") + ld(2, ld(1, bytes_feature(b"a")) + ld(1, float_feature(1.0)))))
    with pytest.raises(N.DecodeError, match="holds a float_list but column 0 expects bytes_list") as info:
        N.Decoder(SEQ, [(b"w", FL, B, LOL)]).decode(*spans([payload]))
    assert (info.value.reason, info.value.found_kind) == ("kind_mismatch", F)


def test_decode_raw_records():
    payloads = [b"abc", b"", b"\x00\xff"]
    buf, offsets, lengths = spans(payloads)
    (result,) = N.Decoder(RAW, [("ignored", 1, 2, 3)]).decode(buf, offsets, lengths)
    assert column_values(result, B, SCALAR, 3) == payloads
    assert result[0] is None and result[1] == 0


def test_decode_buffers_are_zero_copy_arrow_buffers():
    payloads = [make_example(il=("int64_list", [1, 2])), make_example(il=("int64_list", [3]))]
    ((validity, nulls, outer, _, _, _, _, values),) = N.Decoder(EX, [(b"il", CTX, I, LIST)]).decode(*spans(payloads))
    arr = pa.ListArray.from_buffers(
        pa.list_(pa.int64()),
        2,
        [None, pa.py_buffer(outer)],
        children=[pa.Array.from_buffers(pa.int64(), 3, [None, pa.py_buffer(values)])],
    )
    assert arr.to_pylist() == [[1, 2], [3]]
    assert pa.py_buffer(values).address == np.frombuffer(values, np.uint8).ctypes.data


def test_decoder_rejects_bad_columns():
    with pytest.raises(ValueError, match="unknown record type 7"):
        N.Decoder(7, [])
    with pytest.raises(TypeError, match=r"Decoder column 0: name must be bytes, got str"):
        N.Decoder(EX, [("x", CTX, I, SCALAR)])
    with pytest.raises(ValueError, match=r"Decoder column 0 \(b'x'\): unknown kind 0"):
        N.Decoder(EX, [(b"x", CTX, 0, SCALAR)])
    with pytest.raises(ValueError, match=r"a FEATURES column is SCALAR or LIST, got shape 2"):
        N.Decoder(EX, [(b"x", CTX, I, LOL)])
    with pytest.raises(ValueError, match="a FEATURE_LISTS column needs SEQUENCE_EXAMPLE"):
        N.Decoder(EX, [(b"x", FL, I, LOL)])
    with pytest.raises(ValueError, match="a FEATURE_LISTS column needs SEQUENCE_EXAMPLE"):
        N.Decoder(SEQ, [(b"x", FL, I, LIST)])
    with pytest.raises(ValueError, match=r"unknown location 5"):
        N.Decoder(EX, [(b"x", 5, I, LIST)])
    with pytest.raises(ValueError, match=r"Decoder column 1 \(b'x'\) is listed twice"):
        N.Decoder(EX, [(b"x", CTX, I, LIST), (b"x", CTX, F, LIST)])
    N.Decoder(SEQ, [(b"x", CTX, I, LIST), (b"x", FL, F, LOL)])  # two locations: fine


def test_decode_many_columns_and_records_in_varying_key_order():
    rng = random.Random(5)
    names = [f"feature_{i}" for i in range(80)]
    payloads = []
    for _ in range(50):
        ex = Example()
        for name in rng.sample(names, 60):
            ex.features.feature[name].int64_list.value.extend(
                rng.randrange(-(10**12), 10**12) for _ in range(rng.randrange(3))
            )
        payloads.append(ex.SerializeToString())
    columns = [(n.encode(), CTX, I, LIST) for n in names[::3]]
    check(payloads, columns)


# --------------------------------------------------------------------------- Encoder


def length_delimited(data: bytes):
    """``(field, body)`` of each field of a message made of length-delimited fields."""
    pos = 0
    while pos < len(data):
        key, pos = read_varint(data, pos)
        assert key & 7 == 2
        length, pos = read_varint(data, pos)
        yield key >> 3, data[pos : pos + length]
        pos += length


def wire_keys(payload: bytes):
    """The map keys of an Example in wire order."""
    return [
        dict(length_delimited(entry_body))[1]
        for _, features in length_delimited(payload)
        for _, entry_body in length_delimited(features)
    ]


def i64(values):
    return np.array(values, np.int64)


def u8(values):
    return np.array(values, np.uint8)


def test_encode_examples_parse_back_with_protobuf():
    columns = [
        (b"i", CTX, I, SCALAR),
        (b"f", CTX, F, SCALAR),
        (b"s", CTX, B, SCALAR),
        (b"il", CTX, I, LIST),
        (b"fl", CTX, F, LIST),
        (b"sl", CTX, B, LIST),
    ]
    n = 3
    arrays = [
        (None, None, None, None, i64([-1, 2**63 - 1, -(2**63)])),
        (u8([1, 0, 1]), None, None, None, np.array([0.5, 9, -2.25], np.float32)),
        (u8([0, 1, 1]), None, None, i64([0, 0, 3, 3]), b"abc"),
        (None, i64([0, 2, 2, 5]), None, None, i64([1, -1, 300, 0, 5])),
        (u8([1, 1, 0]), i64([1, 1, 3, 3]), None, None, np.array([7, 1, 2], np.float32)),
        (None, i64([0, 1, 1, 3]), None, i64([0, 2, 2, 6]), b"hiwxyz"),
    ]
    framed, ends = N.Encoder(EX, columns).encode(arrays, n)
    offs, lens, end, status = N.scan_frames(framed)
    assert (status, end, u64(ends)[-1]) == (N.FRAME_OK, len(framed), len(framed))
    payloads = [bytes(framed)[o : o + ln] for o, ln in zip(u64(offs), u64(lens))]
    assert expected(payloads, columns) == [
        [-1, 2**63 - 1, -(2**63)],
        [0.5, None, -2.25],
        [None, b"abc", b""],  # row 2 is a valid empty bytes value
        [[1, -1], [], [300, 0, 5]],
        [[], [1.0, 2.0], None],
        [[b"hi"], [], [b"", b"wxyz"]],
    ]
    # map entries in column order, empty valid rows write an empty list, nulls are omitted
    assert wire_keys(payloads[1]) == [b"i", b"s", b"il", b"fl", b"sl"]
    ex = Example.FromString(payloads[1])
    assert ex.features.feature["il"].WhichOneof("kind") == "int64_list"
    # and the decoder reads exactly the same back
    assert decode(payloads, columns)[3:] == expected(payloads, columns)[3:]


@pytest.mark.parametrize(
    "kind, shape, arrays, fill",
    [
        (I, SCALAR, (None, None, None, None, i64([-3])), lambda f: f.int64_list.value.append(-3)),
        (
            I,
            LIST,
            (None, i64([0, 3]), None, None, i64([0, 2**40, -1])),
            lambda f: f.int64_list.value.extend([0, 2**40, -1]),
        ),
        (I, LIST, (None, i64([0, 0]), None, None, i64([])), lambda f: f.int64_list.SetInParent()),
        (
            F,
            LIST,
            (None, i64([0, 2]), None, None, np.array([1, -2.5], np.float32)),
            lambda f: f.float_list.value.extend([1, -2.5]),
        ),
        (F, LIST, (None, i64([0, 0]), None, None, np.array([], np.float32)), lambda f: f.float_list.SetInParent()),
        (
            B,
            LIST,
            (None, i64([0, 2]), None, i64([0, 1, 3]), b"abc"),
            lambda f: f.bytes_list.value.extend([b"a", b"bc"]),
        ),
        (B, SCALAR, (None, None, None, i64([0, 200]), b"x" * 200), lambda f: f.bytes_list.value.append(b"x" * 200)),
    ],
)
def test_encode_writes_the_bytes_protobuf_writes(kind, shape, arrays, fill):
    name = b"n" * 130  # a key whose length takes a 2-byte varint
    framed, _ = N.Encoder(EX, [(name, CTX, kind, shape)]).encode([arrays], 1)
    ex = Example()
    fill(ex.features.feature[name.decode()])
    assert bytes(framed) == frame(ex.SerializeToString())


def test_encode_sequence_examples_parse_back_with_protobuf():
    columns = [(b"label", CTX, B, SCALAR), (b"steps", FL, I, LOL), (b"emb", FL, F, LOL)]
    arrays = [
        (u8([1, 0]), None, None, i64([0, 3, 3]), b"cat"),
        (None, i64([0, 2, 3]), i64([0, 2, 2, 5]), None, i64([1, 2, 3, 4, 5])),
        (u8([0, 1]), i64([0, 0, 0]), i64([0]), None, np.array([], np.float32)),
    ]
    framed, ends = N.Encoder(SEQ, columns).encode(arrays, 2)
    offs, lens, end, status = N.scan_frames(framed)
    payloads = [bytes(framed)[o : o + ln] for o, ln in zip(u64(offs), u64(lens))]
    assert expected(payloads, columns, SEQ) == [
        [b"cat", None],
        [[[1, 2], []], [[3, 4, 5]]],
        [None, []],
    ]
    assert check(payloads, columns, SEQ)
    msg = SequenceExample.FromString(payloads[0])
    assert msg.HasField("context") and msg.HasField("feature_lists")


def test_encode_raw_records():
    framed, ends = N.Encoder(RAW, [(b"record", CTX, B, SCALAR)]).encode(
        [(None, None, None, i64([1, 4, 4, 6]), b"xabcde")], 3
    )
    assert bytes(framed) == frame(b"abc") + frame(b"") + frame(b"de")
    with pytest.raises(ValueError, match="RAW record 1 is null; a record cannot be null"):
        N.Encoder(RAW, [(b"record", CTX, B, SCALAR)]).encode([(u8([1, 0]), None, None, i64([0, 1, 2]), b"ab")], 2)
    with pytest.raises(ValueError, match="a RAW Encoder takes exactly one SCALAR BYTES column"):
        N.Encoder(RAW, [(b"record", CTX, I, SCALAR)])


def test_encode_with_no_rows_and_with_no_columns():
    framed, ends = N.Encoder(EX, [(b"i", CTX, I, SCALAR)]).encode([(None, None, None, None, i64([]))], 0)
    assert len(framed) == 0 and len(ends) == 0
    framed, ends = N.Encoder(EX, []).encode([], 2)
    assert bytes(framed) == frame(b"\x0a\x00") * 2


@pytest.mark.parametrize(
    "arrays, message",
    [
        ([(None, None, None, None, i64([1]))], r"1 values for 2 rows"),
        ([(u8([1]), None, None, None, i64([1, 2]))], r"validity has 1 bytes for 2 rows"),
        ([(None, None, None, None, None)], r"values is None"),
        ([(None, None, None, None, b"123")], r"values must be an int64 array"),
        (
            [(None, None)],
            r"expected \(validity, outer_offsets, inner_offsets, value_offsets, "
            r"values\), got 2 items",
        ),
        ([], r"expected 1 column arrays, got 0"),
    ],
)
def test_encode_rejects_bad_arrays(arrays, message):
    with pytest.raises(ValueError, match=message):
        N.Encoder(EX, [(b"i", CTX, I, SCALAR)]).encode(arrays, 2)


@pytest.mark.parametrize(
    "arrays, message",
    [
        ([(None, None, None, i64([0, 1]), b"a")], r"LIST needs outer_offsets"),
        ([(None, i64([0, 1]), None, i64([0, 1]), b"a")], r"outer_offsets has 2 items for 2 rows"),
        (
            [(None, i64([0, 1, 2]), None, i64([0, 1]), b"a")],
            r"outer_offsets are decreasing or point outside the 1 items",
        ),
        (
            [(None, i64([0, 1, 1]), None, i64([0, 2]), b"a")],
            r"value_offsets are decreasing or point outside the 1 bytes of values",
        ),
        ([(None, i64([0, 1, 1]), None, None, b"a")], r"BYTES needs value_offsets"),
    ],
)
def test_encode_rejects_bad_offsets(arrays, message):
    with pytest.raises(ValueError, match=r"Encoder column 0 \(b's'\): " + message):
        N.Encoder(EX, [(b"s", CTX, B, LIST)]).encode(arrays, 2)


def test_encode_rejects_a_negative_row_count():
    with pytest.raises(ValueError, match="n_rows must be >= 0, got -1"):
        N.Encoder(EX, []).encode([], -1)


def test_encode_decode_round_trip_on_random_data():
    rng = np.random.default_rng(3)
    n = 200
    columns = [
        (b"a", CTX, I, LIST),
        (b"b", CTX, F, LIST),
        (b"c", CTX, B, LIST),
        (b"d", CTX, I, SCALAR),
        (b"e", FL, B, LOL),
        (b"g", FL, I, LOL),
    ]
    outer = np.concatenate([[0], np.cumsum(rng.integers(0, 4, n))]).astype(np.int64)
    total = int(outer[-1])
    ints = rng.integers(-(2**63), 2**63 - 1, total, dtype=np.int64, endpoint=True)
    floats = rng.standard_normal(total).astype(np.float32)
    vo = np.concatenate([[0], np.cumsum(rng.integers(0, 5, total))]).astype(np.int64)
    data = rng.integers(0, 256, int(vo[-1]), dtype=np.uint8).tobytes()
    scalars = rng.integers(-100, 100, n, dtype=np.int64)
    validity = (rng.random(n) > 0.2).astype(np.uint8)
    step_outer = np.concatenate([[0], np.cumsum(rng.integers(0, 3, n))]).astype(np.int64)
    inner = np.sort(rng.integers(0, total + 1, int(step_outer[-1]) + 1)).astype(np.int64)
    arrays = [
        (validity, outer, None, None, ints),
        (None, outer, None, None, floats),
        (validity, outer, None, vo, data),
        (validity, None, None, None, scalars),
        (validity, step_outer, inner, vo, data),
        (None, step_outer, inner, None, ints),
    ]
    framed, ends = N.Encoder(SEQ, columns).encode(arrays, n)
    offs, lengths, end, status = N.scan_frames(framed)
    assert status == N.FRAME_OK and len(u64(offs)) == n
    payloads = [bytes(framed)[o : o + ln] for o, ln in zip(u64(offs), u64(lengths))]
    got = check(payloads, columns, SEQ)

    strings = [data[vo[j] : vo[j + 1]] for j in range(total)]
    rows = [range(outer[i], outer[i + 1]) for i in range(n)]
    steps = [range(step_outer[i], step_outer[i + 1]) for i in range(n)]
    assert got[0] == [ints[r].tolist() if validity[i] else None for i, r in enumerate(rows)]
    assert got[1] == [floats[r].tolist() for r in rows]
    assert got[2] == [[strings[j] for j in r] if validity[i] else None for i, r in enumerate(rows)]
    assert got[3] == [int(scalars[i]) if validity[i] else None for i in range(n)]
    assert got[4] == [
        [strings[inner[s] : inner[s + 1]] for s in r] if validity[i] else None for i, r in enumerate(steps)
    ]
    assert got[5] == [[ints[inner[s] : inner[s + 1]].tolist() for s in r] for r in steps]


# --------------------------------------------------------------------------- summarize


def test_summarize_examples():
    payloads = [
        make_example(a=("int64_list", [1, 2]), s=("bytes_list", [b"ok"])),
        make_example(s=("bytes_list", [b"\xff"]), n=("none", None), a=("int64_list", [])),
        make_example(a=("float_list", [1.0, 2.0, 3.0])),
        example(entry(b"d", int64_feature(1)), entry(b"d", int64_feature(1, 2, 3))),
    ]
    assert N.summarize(*spans(payloads), EX) == {
        (CTX, b"a"): [(1 << I) | (1 << F), 3, 0, 3, True, 3],
        (CTX, b"s"): [1 << B, 2, 1, 1, False, 1],
        (CTX, b"n"): [1 << N.KIND_NONE, 1, 0, 0, True, 0],
        (CTX, b"d"): [1 << I, 1, 3, 3, True, 3],
    }


def test_summarize_first_seen_order():
    payloads = [example(entry(b"z", b""), entry(b"y", b"")), example(entry(b"a", b""), entry(b"y", b""))]
    assert list(N.summarize(*spans(payloads), EX)) == [(CTX, b"z"), (CTX, b"y"), (CTX, b"a")]


def test_summarize_sequence_examples():
    steps = ld(1, bytes_feature(b"a", b"b")) + ld(1, b"") + ld(1, bytes_feature("é".encode()))
    payloads = [
        ld(2, ld(1, ld(1, b"w") + ld(2, steps))) + ld(1, entry(b"c", float_feature(1.0))),
        ld(2, ld(1, ld(1, b"w") + ld(2, b""))),
    ]
    assert N.summarize(*spans(payloads), SEQ) == {
        (FL, b"w"): [(1 << B) | (1 << N.KIND_NONE), 2, 0, 3, True, 2],
        (CTX, b"c"): [1 << F, 1, 1, 1, True, 1],
    }


def test_summarize_raw_is_empty():
    assert N.summarize(*spans([b"\xff\xff"]), RAW) == {}


def test_summarize_utf8_strictness():
    bad_values = [b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82", b"\x80"]
    good_values = [b"", "ascii only, long enough".encode(), "日本語 🎉".encode()]
    for value in bad_values + good_values:
        stats = N.summarize(*spans([make_example(s=("bytes_list", [value]))]), EX)
        assert stats[(CTX, b"s")][4] == (value in good_values), value


# --------------------------------------------------------------------------- fuzzing


def _valid_records():
    rng = random.Random(11)
    examples = []
    for _ in range(8):
        ex = Example()
        for name in ("i", "f", "s", "il"):
            feature = ex.features.feature[name]
            kind = {"i": "int64_list", "il": "int64_list", "f": "float_list", "s": "bytes_list"}[name]
            lst = getattr(feature, kind)
            for _ in range(rng.randrange(1, 4) if name == "il" else 1):
                lst.value.append(
                    rng.choice([b"abc", b"\xff"]) if kind == "bytes_list" else rng.randrange(-(2**40), 2**40)
                )
        examples.append(ex.SerializeToString())
    seqs = []
    for _ in range(4):
        msg = SequenceExample()
        msg.context.feature["i"].int64_list.value.append(rng.randrange(100))
        fl = msg.feature_lists.feature_list["w"]
        for _ in range(3):
            fl.feature.add().bytes_list.value.extend([b"x", b"yz"])
        seqs.append(msg.SerializeToString())
    return examples, seqs


def _mutate(rng, payload):
    data = bytearray(payload)
    op = rng.randrange(5)
    if op == 0 and data:
        for _ in range(rng.randrange(1, 4)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    elif op == 1 and data:
        data[rng.randrange(len(data))] = rng.choice([0x00, 0x7F, 0x80, 0xFF, 0x0B, 0x0C])
    elif op == 2:
        del data[rng.randrange(len(data) + 1) :]
    elif op == 3:
        pos = rng.randrange(len(data) + 1)
        data[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 6)))
    else:
        a, b = sorted(rng.randrange(len(data) + 1) for _ in range(2))
        pos = rng.randrange(len(data) + 1)
        data[pos:pos] = data[a:b]
    return bytes(data)


def test_mutated_records_only_raise_decode_error():
    examples, seqs = _valid_records()
    rng = random.Random(1234)
    ex_decoders = [
        N.Decoder(EX, COLS_TABULAR[:3] + [(b"il", CTX, I, LIST)]),
        N.Decoder(EX, [(b"i", CTX, B, LIST), (b"s", CTX, I, SCALAR)]),
    ]
    seq_decoders = [N.Decoder(SEQ, [(b"i", CTX, I, SCALAR), (b"w", FL, B, LOL)]), N.Decoder(SEQ, [(b"w", FL, I, LOL)])]
    one = np.zeros(1, np.uint64)
    outcomes = {"ok": 0, "error": 0}
    for _ in range(3000):
        is_seq = rng.random() < 0.4
        record_type = SEQ if is_seq else EX
        payload = _mutate(rng, rng.choice(seqs if is_seq else examples))
        lengths = np.array([len(payload)], np.uint64)
        for decoder in seq_decoders if is_seq else ex_decoders:
            try:
                decoder.decode(payload, one, lengths)
                outcomes["ok"] += 1
            except N.DecodeError as err:
                assert err.reason in ("malformed", "kind_mismatch", "not_scalar")
                outcomes["error"] += 1
        try:
            N.summarize(payload, one, lengths, record_type)
        except N.DecodeError as err:
            assert err.reason == "malformed"
    assert outcomes["ok"] > 100 and outcomes["error"] > 100


def test_mutated_frames_never_crash_the_scanner():
    examples, _ = _valid_records()
    framed = b"".join(frame(p) for p in examples)
    rng = random.Random(99)
    statuses = set()
    for _ in range(1000):
        buf = _mutate(rng, framed)
        for verify in (True, False):
            offs, lens, end, status = N.scan_frames(buf, verify=verify)
            statuses.add(status)
            assert 0 <= end <= len(buf)
            for o, n in zip(u64(offs), u64(lens)):
                assert o + n + 4 <= len(buf)
    assert statuses == {N.FRAME_OK, N.FRAME_TRUNCATED, N.FRAME_BAD_LENGTH_CRC, N.FRAME_BAD_DATA_CRC}


def test_a_column_growing_through_many_mib_in_one_batch_keeps_its_values(tmp_path):
    """A list column's values are presized for a few values a row and grow by doubling,
    here from 120 KB to 16 MiB in each block of a read; the values survive each move."""
    import pyarrow as pa

    import tfsql

    rows = 30_000
    values = np.arange(rows * 128, dtype=np.float32)
    emb = pa.FixedSizeListArray.from_arrays(pa.array(values), 128).cast(pa.list_(pa.float32()))
    tfsql.write_tfrecord(pa.table({"emb": emb}), tmp_path / "t", num_shards=1)
    for threads in (1, 2):
        table = tfsql.read_tfrecord(tmp_path / "t", threads=threads)
        assert table.num_rows == rows
        got = table.column("emb").combine_chunks().flatten().to_numpy()
        assert np.array_equal(got, values)
