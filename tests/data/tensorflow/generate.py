"""Write the golden TFRecord files of this directory with real TensorFlow.

Run with a Python that has TensorFlow installed (the test suite does NOT need it; the
files and their ``*.expected.json`` are checked in)::

    python3 -m venv /tmp/tfvenv && /tmp/tfvenv/bin/pip install tensorflow-cpu numpy
    /tmp/tfvenv/bin/python tests/data/tensorflow/generate.py

Every file is written with ``tf.io.TFRecordWriter`` (``TFRecordOptions`` compression
"", "GZIP" or "ZLIB") from ``tf.train.Example`` / ``tf.train.SequenceExample`` messages,
or from hand-built wire bytes for the encodings TensorFlow's own serializer never
produces. Next to each file, ``<file>.expected.json`` holds:

- ``records``: each record's content in a lossless form: a feature is
  ``{"kind": "int64_list" | "float_list" | "bytes_list" | null, "values": [...]}``
  (``kind`` null = a Feature with no kind set; a missing feature is an absent key;
  ``values`` [] = an empty list); int64 as JSON integers, float32 as 8 hex digits of
  their bits, bytes as base64. SequenceExample records hold ``context`` and
  ``feature_lists`` (a list of such features, one per step).
- ``columns``: for each column, its ``location``, the Arrow type tfsql infers
  (docs/format.md section 3) and its ``values``, one cell per record: null, or the scalar,
  or a list (of lists); int64 as integers, float32 as hex bits, string as text,
  binary as base64.
- ``column_order``: the columns in first-seen order (records in file order, map
  entries in each record's wire order).

Before writing the json, the script reads each file back with TensorFlow
(``tf.data.TFRecordDataset``), checks the raw records, parses them with TensorFlow's
protobuf classes and with ``tf.io.parse_example`` / ``parse_single_sequence_example``,
and asserts that both agree with the expected values (bitwise for floats). Where
``tf.io.parse_example``'s fast parser departs from protobuf's merge rules the json
says so under ``tensorflow_parse_example_differs`` (protobuf's answer is the expected
one, see docs/format.md section 2).
"""

from __future__ import annotations

import base64
import json
import os
import struct
import sys
from pathlib import Path

import numpy as np
import tensorflow as tf

HERE = Path(__file__).resolve().parent
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

# --------------------------------------------------------------------------- features
# A feature is described as (kind, values): kind "int64_list" | "float_list" |
# "bytes_list" | None (no kind set); float values are given as their float32 bits.


def f32(value: float) -> int:
    """The float32 bits of a Python float."""
    return struct.unpack("<I", struct.pack("<f", value))[0]


def ints(*values: int):
    return ("int64_list", list(values))


def floats(*values: float):
    return ("float_list", [f32(v) for v in values])


def float_bits(*bits: int):
    return ("float_list", list(bits))


def blobs(*values):
    return ("bytes_list", [v.encode("utf-8") if isinstance(v, str) else v for v in values])


NO_KIND = (None, [])


def tf_feature(spec) -> tf.train.Feature:
    kind, values = spec
    if kind is None:
        return tf.train.Feature()
    if kind == "int64_list":
        return tf.train.Feature(int64_list=tf.train.Int64List(value=values))
    if kind == "float_list":
        as_floats = [struct.unpack("<f", struct.pack("<I", bits))[0] for bits in values]
        return tf.train.Feature(float_list=tf.train.FloatList(value=as_floats))
    return tf.train.Feature(bytes_list=tf.train.BytesList(value=values))


def feature_json(spec) -> dict:
    kind, values = spec
    if kind == "float_list":
        values = [f"{bits:08x}" for bits in values]
    elif kind == "bytes_list":
        values = [base64.b64encode(v).decode("ascii") for v in values]
    return {"kind": kind, "values": list(values)}


# --------------------------------------------------------------------------- datasets

F_SPECIALS = [
    0x7FC00000,  # quiet NaN
    0xFFC00000,  # negative quiet NaN
    0x7FC12345,  # quiet NaN with a payload
    0x7F800000,  # +inf
    0xFF800000,  # -inf
    0x80000000,  # -0.0
    0x00000001,  # smallest denormal
    0x807FFFFF,  # largest negative denormal
    0x7F7FFFFF,  # float32 max
    f32(1.5),
    f32(-2.25),
]
I_SPECIALS = [INT64_MIN, INT64_MAX, -1, 0, 1, -300, 1 << 40, INT64_MIN + 1]
NAMES = ["alpha", "héllo", "日本語", "emoji 🎉", "", "tab\tnew\nline", "nul\x00byte", "z"]
BLOBS = [b"\xff\xfe", b"\x80", b"\x00\x01\x02", b"plain ascii", b"", b"\xc3\x28"]


def tabular_records(n: int = 36) -> list:
    """Example records: every kind, scalar and list, missing / no kind / empty."""
    records = []
    for i in range(n):
        features = {}
        features["id"] = ints(i)
        if i % 5 != 3:
            features["int_extreme"] = ints(I_SPECIALS[i % len(I_SPECIALS)])
        if i == 7:
            features["score"] = floats()          # empty list: null in a scalar column
        elif i % 6 != 5:
            features["score"] = float_bits(F_SPECIALS[i % len(F_SPECIALS)])
        features["name"] = blobs(NAMES[i % len(NAMES)])
        if i % 4 != 1:
            features["blob"] = blobs(BLOBS[i % len(BLOBS)])
        features["tags"] = ints(*[I_SPECIALS[(i + j) % len(I_SPECIALS)] for j in range(i % 4)])
        if i % 7 == 6:
            pass                                   # weights missing
        elif i % 7 == 2:
            features["weights"] = floats()         # empty list: [] in a list column
        else:
            features["weights"] = float_bits(*[F_SPECIALS[(i * 3 + j) % len(F_SPECIALS)]
                                               for j in range(1 + i % 5)])
        if i % 3 == 0:
            features["maybe"] = NO_KIND            # present, no kind: null
        elif i % 3 == 1:
            features["maybe"] = ints(i * 1000)
        features["words"] = blobs(*NAMES[: i % 3])
        records.append({"features": features})
    return records


def sequence_records(n: int = 24) -> list:
    """SequenceExample records: context + feature_lists with varying step counts."""
    records = []
    for i in range(n):
        context = {"id": ints(i), "label": blobs(NAMES[i % len(NAMES)])}
        if i % 4 != 2:
            context["ctx_floats"] = float_bits(*F_SPECIALS[: i % 4])
        steps = i % 5                              # 0 steps: an empty FeatureList
        feature_lists = {
            "tokens": [ints(*range(i, i + (s % 3))) for s in range(steps)],
            "frames": [float_bits(*[F_SPECIALS[(i + s + k) % len(F_SPECIALS)]
                                    for k in range(s % 3)]) for s in range(steps)],
        }
        if i % 3 != 1:
            feature_lists["words"] = [blobs(*NAMES[s % 3: s % 3 + 2]) for s in range((i + 1) % 4)]
        if i % 2 == 0:
            raw_steps = [blobs(BLOBS[(i + s) % len(BLOBS)]) for s in range(2)]
            if i % 4 == 0:
                raw_steps.insert(1, NO_KIND)      # a step with no kind: a null inner list
            feature_lists["raw"] = raw_steps
        if i == 5:
            feature_lists["tokens"] = [ints(), ints(7), ints()]   # empty steps
        records.append({"context": context, "feature_lists": feature_lists})
    return records


def tf_example(record) -> tf.train.Example:
    return tf.train.Example(features=tf.train.Features(
        feature={k: tf_feature(v) for k, v in record["features"].items()}))


def tf_sequence_example(record) -> tf.train.SequenceExample:
    return tf.train.SequenceExample(
        context=tf.train.Features(
            feature={k: tf_feature(v) for k, v in record["context"].items()}),
        feature_lists=tf.train.FeatureLists(feature_list={
            k: tf.train.FeatureList(feature=[tf_feature(s) for s in steps])
            for k, steps in record["feature_lists"].items()}))


# --------------------------------------------------------------------------- wire bytes
# A tiny protobuf wire writer for the encodings TensorFlow's serializer never emits.


def varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def tag(number: int, wire_type: int) -> bytes:
    return varint(number << 3 | wire_type)


def ld(number: int, payload: bytes) -> bytes:
    return tag(number, 2) + varint(len(payload)) + payload


def unknown_fields(first_number: int) -> bytes:
    """One unknown field of every wire type (varint, fixed64, bytes, group, fixed32)."""
    n = first_number
    return (tag(n, 0) + varint(2**63 + 5)
            + tag(n + 1, 1) + struct.pack("<Q", 0x0102030405060708)
            + ld(n + 2, b"\x0a\x03xyz unknown")
            + tag(n + 3, 3) + tag(1, 0) + varint(9) + ld(2, b"in group") + tag(n + 3, 4)
            + tag(n + 4, 5) + struct.pack("<I", 0xDEADBEEF))


def entry(key: str, feature: bytes, *, value_first: bool = False, junk: bool = False) -> bytes:
    key_field, value_field = ld(1, key.encode("utf-8")), ld(2, feature)
    body = value_field + key_field if value_first else key_field + value_field
    if junk:
        body += unknown_fields(20)
    return ld(1, body)


def int64_unpacked(values) -> bytes:
    return b"".join(tag(1, 0) + varint(v) for v in values)


def int64_packed(values) -> bytes:
    return ld(1, b"".join(varint(v) for v in values))


def float_unpacked(bits) -> bytes:
    return b"".join(tag(1, 5) + struct.pack("<I", b) for b in bits)


def float_packed(bits) -> bytes:
    return ld(1, b"".join(struct.pack("<I", b) for b in bits))


def unknown_fields_no_group(first_number: int) -> bytes:
    """Unknown varint, fixed64, bytes and fixed32 fields (no group)."""
    n = first_number
    return (tag(n, 0) + varint(2**63 + 5)
            + tag(n + 1, 1) + struct.pack("<Q", 0x0102030405060708)
            + ld(n + 2, b"\x0a\x03xyz unknown")
            + tag(n + 4, 5) + struct.pack("<I", 0xDEADBEEF))


def ordered_record(raw: bytes, expected: dict) -> dict:
    return {"features": {key: expected[key] for key in wire_keys(raw, "example")["features"]}}


def wire_variant_records() -> list:
    """``(raw bytes, expected record)``: encodings other writers emit that both
    protobuf and tf.io.parse_example read the same way."""
    out = []
    for i in range(12):
        ints_a = [i, -i - 1, INT64_MIN, INT64_MAX][: 1 + i % 4]
        bits_a = [0x7F800001, 0xFFBFFFFF, f32(0.5), 0x00000002][: 1 + i % 4]  # sNaNs first
        entries = [
            # int64 values unpacked (one varint field per value), unknown fields after
            # them in the Feature
            entry("u_int", ld(3, int64_unpacked(ints_a)) + unknown_fields(40)),
            # packed int64 values followed by unknown fields inside the Int64List
            entry("list_junk", ld(3, int64_packed([i, -i]) + unknown_fields(30))),
            # float values unpacked (one fixed32 field per value), key after value
            entry("u_float", ld(2, float_unpacked(bits_a)), value_first=True),
            # a packed float list that is present but empty (length 0)
            entry("empty_packed", ld(2, ld(1, b""))),
        ]
        expected = {
            "u_int": ("int64_list", ints_a),
            "list_junk": ("int64_list", [i, -i]),
            "u_float": ("float_list", bits_a),
            "empty_packed": ("float_list", []),
        }
        if i % 3 == 0:
            # a repeated map key: the last entry wins
            entries.append(entry("dup", ld(3, int64_packed([1, 2]))))
            entries.append(entry("dup", ld(2, float_packed([f32(9.0)]))))
            entries.append(entry("dup", ld(3, int64_packed([i]))))
            expected["dup"] = ("int64_list", [i])
        if i % 4 == 3:
            # a repeated key whose entries hold different kinds: the last one wins
            entries.append(entry("dup_kinds", ld(3, int64_packed([i]))))
            entries.append(entry("dup_kinds", ld(1, ld(1, b"\xff not utf-8"))))
            expected["dup_kinds"] = ("bytes_list", [b"\xff not utf-8"])
        # the entries split over two Features messages (protobuf merges them), with
        # unknown fields around them at the top level
        half = len(entries) // 2
        raw = (unknown_fields_no_group(60) + ld(1, b"".join(entries[:half]))
               + unknown_fields_no_group(70) + ld(1, b"".join(entries[half:])))
        out.append((raw, ordered_record(raw, expected)))
    return out


def proto3_edge_records() -> list:
    """``(raw bytes, expected record)``: what any proto3 parser accepts but TensorFlow's
    fast ``tf.io.parse_example`` rejects or reads differently (recorded in the json)."""
    out = []
    for i in range(10):
        entries = [
            # unknown fields of every wire type inside a map entry
            entry("entry_junk", ld(3, int64_packed([i])), junk=True),
            # packed int64 split in two chunks plus an unpacked value: protobuf appends
            entry("split", ld(3, int64_packed([i, i + 1]) + int64_packed([-i])
                              + int64_unpacked([i * 7]))),
        ]
        expected = {"entry_junk": ("int64_list", [i]), "split": ("int64_list", [i, i + 1, -i, i * 7])}
        if i % 2 == 0:
            # the oneof: a later kind replaces an earlier one; the same kind twice merges
            entries.append(entry("oneof", ld(2, float_packed([f32(1.0)]))
                                 + ld(3, int64_packed([5])) + ld(3, int64_packed([6, i]))))
            expected["oneof"] = ("int64_list", [5, 6, i])
            # an entry with a key but no value: a Feature with no kind
            entries.append(ld(1, ld(1, b"no_value")))
            expected["no_value"] = NO_KIND
        else:
            entries.append(entry("oneof", ld(3, int64_packed([i]))))
            expected["oneof"] = ("int64_list", [i])
            entries.append(entry("no_value", ld(3, int64_packed([i]))))
            expected["no_value"] = ("int64_list", [i])
        group = tag(90, 3) + tag(1, 0) + varint(9) + tag(90, 4) if i % 3 == 0 else b""
        raw = group + ld(1, b"".join(entries) + unknown_fields(50))
        out.append((raw, ordered_record(raw, expected)))
    return out


# --------------------------------------------------------------------------- wire order


def read_varint(data: bytes, pos: int):
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def skip(data: bytes, pos: int, number: int, wire_type: int) -> int:
    if wire_type == 0:
        return read_varint(data, pos)[1]
    if wire_type == 1:
        return pos + 8
    if wire_type == 5:
        return pos + 4
    if wire_type == 2:
        length, pos = read_varint(data, pos)
        return pos + length
    while True:  # group
        t, pos = read_varint(data, pos)
        if t & 7 == 4 and t >> 3 == number:
            return pos
        pos = skip(data, pos, t >> 3, t & 7)


def fields(data: bytes):
    """``(number, wire_type, payload or None)`` of each top-level field."""
    pos = 0
    while pos < len(data):
        t, pos = read_varint(data, pos)
        number, wire_type = t >> 3, t & 7
        if wire_type == 2:
            length, start = read_varint(data, pos)
            pos = start + length
            yield number, wire_type, data[start:pos]
        else:
            pos = skip(data, pos, number, wire_type)
            yield number, wire_type, None


def wire_keys(raw: bytes, record_type: str) -> dict:
    """Map keys per location in wire order (first occurrence), for column order."""
    sections = {1: "features"} if record_type == "example" else {1: "context", 2: "feature_lists"}
    keys: dict = {name: [] for name in sections.values()}
    keys["order"] = []
    for number, wire_type, payload in fields(raw):
        if wire_type != 2 or number not in sections:
            continue
        for n2, wt2, entry_bytes in fields(payload):
            if n2 != 1 or wt2 != 2:
                continue
            key = b""
            for n3, wt3, value in fields(entry_bytes):
                if n3 == 1 and wt3 == 2:
                    key = value
            name = key.decode("utf-8")
            if name not in keys[sections[number]]:
                keys[sections[number]].append(name)
                keys["order"].append(name)
    return keys


# --------------------------------------------------------------------------- expected


def arrow_type(location: str, specs: list) -> str:
    """docs/format.md section 3: the Arrow type inferred from every record's feature."""
    kinds = {kind for spec in specs for kind, _ in spec if kind is not None}
    assert len(kinds) == 1, f"one kind per column expected, got {kinds}"
    (kind,) = kinds
    if kind == "bytes_list":
        all_utf8 = True
        for spec in specs:
            for _, values in spec:
                for v in values:
                    try:
                        v.decode("utf-8")
                    except UnicodeDecodeError:
                        all_utf8 = False
        base = "string" if all_utf8 else "binary"
    else:
        base = {"int64_list": "int64", "float_list": "float32"}[kind]
    if location == "feature_lists":
        return f"list<list<{base}>>"
    lengths = [len(values) for spec in specs for _, values in spec]
    scalar = max(lengths, default=0) == 1  # only-empty lists stay lists
    return base if scalar else f"list<{base}>"


def cell_value(base: str, value):
    if base == "float32":
        return f"{value:08x}"
    if base == "string":
        return value.decode("utf-8")
    if base == "binary":
        return base64.b64encode(value).decode("ascii")
    return value


def column_cells(arrow: str, location: str, features: list) -> list:
    """One expected cell per record (``features[i]`` is None when missing)."""
    base = arrow.replace("list<", "").replace(">", "")
    cells = []
    for feature in features:
        if feature is None:
            cells.append(None)
        elif location == "feature_lists":
            cells.append([None if kind is None else [cell_value(base, v) for v in values]
                          for kind, values in feature])
        elif feature[0] is None:
            cells.append(None)
        elif arrow.startswith("list<"):
            cells.append([cell_value(base, v) for v in feature[1]])
        else:
            cells.append(cell_value(base, feature[1][0]) if feature[1] else None)
    return cells


def expected_json(name: str, record_type: str, compression: str, records: list,
                  raw_records: list) -> dict:
    locations = ["features"] if record_type == "example" else ["context", "feature_lists"]
    order: list = []
    where: dict = {}
    for raw in raw_records:
        keys = wire_keys(raw, record_type)
        for key in keys["order"]:
            if key not in order:
                order.append(key)
        for location in locations:
            for key in keys[location]:
                where.setdefault(key, location)
    columns = {}
    for key in order:
        location = where[key]
        per_record = [r[location].get(key) for r in records]
        present = [f for f in per_record if f is not None]
        if location == "feature_lists":
            arrow = arrow_type(location, present)
        else:
            arrow = arrow_type(location, [[f] for f in present])
        columns[key] = {
            "location": "feature_lists" if location == "feature_lists" else "features",
            "arrow_type": arrow,
            "values": column_cells(arrow, location, per_record),
        }
    records_json = []
    for r in records:
        if record_type == "example":
            records_json.append({"features": {k: feature_json(v)
                                              for k, v in r["features"].items()}})
        else:
            records_json.append({
                "context": {k: feature_json(v) for k, v in r["context"].items()},
                "feature_lists": {k: [feature_json(s) for s in steps]
                                  for k, steps in r["feature_lists"].items()},
            })
    out = {
        "file": name,
        "record_type": record_type,
        "compression": compression,
        "tensorflow_version": tf.__version__,
        "num_records": len(records),
        "column_order": order,
        "columns": columns,
        "records": records_json,
    }
    return out


# --------------------------------------------------------------------------- TF checks


def float_list_bits(float_list) -> list:
    """Exact float32 bits of a protobuf FloatList (Python floats would quiet sNaNs)."""
    wire = float_list.SerializeToString()
    if not wire:
        return []
    length, pos = read_varint(wire, 1)
    return np.frombuffer(wire[pos:pos + length], "<u4").tolist()


def spec_from_tf(feature) -> tuple:
    kind = feature.WhichOneof("kind")
    if kind == "int64_list":
        return (kind, list(feature.int64_list.value))
    if kind == "float_list":
        return (kind, float_list_bits(feature.float_list))
    if kind == "bytes_list":
        return (kind, list(feature.bytes_list.value))
    return NO_KIND


def check_with_tensorflow(path: Path, compression: str, record_type: str, records: list,
                          raw_records: list, *, tf_may_differ: bool) -> list:
    """Read the file back with TensorFlow and compare with the expected records;
    returns the differences of ``tf.io.parse_example`` (see ``check_parse_ops``)."""
    tf_compression = {"none": "", "gzip": "GZIP", "zlib": "ZLIB"}[compression]
    read = [t.numpy() for t in tf.data.TFRecordDataset(str(path), compression_type=tf_compression)]
    assert read == raw_records, f"{path}: raw records differ"
    for i, raw in enumerate(read):
        if record_type == "example":
            parsed = tf.train.Example.FromString(raw)
            got = {"features": {k: spec_from_tf(v) for k, v in parsed.features.feature.items()}}
            want = dict(records[i]["features"])
            for key in UPB_DROPS.get((path.name, i), ()):
                del want[key]
            assert got["features"] == want, (path, i, got)
        else:
            parsed = tf.train.SequenceExample.FromString(raw)
            got = {
                "context": {k: spec_from_tf(v) for k, v in parsed.context.feature.items()},
                "feature_lists": {k: [spec_from_tf(s) for s in fl.feature]
                                  for k, fl in parsed.feature_lists.feature_list.items()},
            }
            assert got["context"] == records[i]["context"], (path, i, got)
            assert got["feature_lists"] == records[i]["feature_lists"], (path, i, got)
    return check_parse_ops(path, record_type, records, read, tf_may_differ=tf_may_differ)


# Python protobuf (upb) moves a map entry holding unknown fields into the unknown fields
# of the map's message instead of keeping it (C++ protobuf keeps it).
UPB_DROPS = {("proto3_edge_cases.tfrecord", i): ("entry_junk",) for i in range(10)}

DTYPES = {"int64_list": tf.int64, "float_list": tf.float32, "bytes_list": tf.string}


def as_comparable(values, kind: str) -> list:
    array = np.asarray(values)
    if kind == "float_list":
        return array.astype("<f4").view("<u4").tolist()
    return array.tolist()


def check_parse_ops(path, record_type, records, raw_records, *, tf_may_differ: bool) -> list:
    """Compare tf.io.parse_example / parse_single_sequence_example with the records
    (a missing or no-kind feature parses as an empty list there, so both are []).

    Returns the differences ``{"record", "feature", "tf_result"}`` when
    ``tf_may_differ`` (the proto3 edge-case file), else asserts there are none.
    """
    differences = []
    locations = ["features"] if record_type == "example" else ["context", "feature_lists"]
    for location in locations:
        kinds = {}
        for r in records:
            for key, value in r[location].items():
                for kind, _ in (value if location == "feature_lists" else [value]):
                    if kind is not None:
                        kinds[key] = kind
        for key, kind in kinds.items():
            spec = {key: tf.io.RaggedFeature(DTYPES[kind], row_splits_dtype=tf.int64)}
            for i, raw in enumerate(raw_records):
                if location == "feature_lists":
                    got_tensor = tf.io.parse_single_sequence_example(
                        raw, sequence_features=spec)[1][key]
                    got = [as_comparable(step.numpy(), kind) for step in got_tensor]
                    want = [list(v) for _, v in records[i]["feature_lists"].get(key, [])]
                    assert got == want, (path, i, key, got, want)
                    continue
                if location == "context":
                    got_tensor = tf.io.parse_single_sequence_example(
                        raw, context_features=spec)[0][key]
                    got = as_comparable(got_tensor.numpy(), kind)
                    want = list(records[i]["context"].get(key, NO_KIND)[1])
                    assert got == want, (path, i, key, got, want)
                    continue
                want = list(records[i]["features"].get(key, NO_KIND)[1])
                try:
                    got = as_comparable(tf.io.parse_example([raw], spec)[key][0].numpy(), kind)
                except (tf.errors.InvalidArgumentError, UnicodeDecodeError):
                    # "Could not parse example input" (TF's message quotes the raw
                    # record, which can make the message itself undecodable)
                    got = "error"
                if got != want:
                    assert tf_may_differ, (path, i, key, got, want)
                    if kind == "bytes_list" and not isinstance(got, str):
                        got = [base64.b64encode(v).decode("ascii") for v in got]
                    elif kind == "float_list" and not isinstance(got, str):
                        got = [f"{bits:08x}" for bits in got]
                    differences.append({"record": i, "feature": key, "tf_result": got})
    assert not tf_may_differ or differences, "expected tf.io.parse_example to differ"
    return differences


# --------------------------------------------------------------------------- writing


def write(name: str, record_type: str, compression: str, records: list, raw_records: list,
          *, tf_may_differ: bool = False) -> None:
    path = HERE / name
    options = tf.io.TFRecordOptions(
        compression_type={"none": "", "gzip": "GZIP", "zlib": "ZLIB"}[compression])
    with tf.io.TFRecordWriter(str(path), options) as writer:
        for raw in raw_records:
            writer.write(raw)
    differences = check_with_tensorflow(path, compression, record_type, records, raw_records,
                                        tf_may_differ=tf_may_differ)
    expected = expected_json(name, record_type, compression, records, raw_records)
    if differences:
        expected["tensorflow_parse_example_differs"] = differences
    with open(HERE / f"{name}.expected.json", "w", encoding="utf-8") as out:
        json.dump(expected, out, indent=1, ensure_ascii=False)
        out.write("\n")
    print(f"{name}: {len(records)} records, {os.path.getsize(path)} bytes")


def main() -> int:
    tabular = tabular_records()
    tabular_raw = [tf_example(r).SerializeToString() for r in tabular]
    write("tabular.tfrecord", "example", "none", tabular, tabular_raw)
    write("tabular.tfrecord.gz", "example", "gzip", tabular, tabular_raw)
    write("tabular.tfrecord.zz", "example", "zlib", tabular, tabular_raw)

    sequence = sequence_records()
    write("sequence.tfrecord", "sequence_example", "none", sequence,
          [tf_sequence_example(r).SerializeToString() for r in sequence])

    variants = wire_variant_records()
    write("wire_variants.tfrecord", "example", "none", [v[1] for v in variants],
          [v[0] for v in variants])

    edges = proto3_edge_records()
    write("proto3_edge_cases.tfrecord", "example", "none", [v[1] for v in edges],
          [v[0] for v in edges], tf_may_differ=True)

    write("empty.tfrecord", "example", "none", [], [])
    return 0


if __name__ == "__main__":
    sys.exit(main())
