"""The per-column work of a scan done once per distinct column layout (a record with a
million features has a million columns of a few types): the row cost, how each column
leaves the decoder, the C decoder's columns and the specs, checked with exact values on
a schema mixing every role, and the garbage collector's pause around it."""

from __future__ import annotations

import gc

import numpy as np
import pyarrow as pa

from tfsql._bulk import gc_paused
from tfsql._codec import codec
from tfsql._proto import Example
from tfsql.decoding import BlockDecoder, _codec_columns, fixed_row_bits
from tfsql.framing import RecordBlock
from tfsql.schema import column_specs

MIXED = pa.schema(
    [
        pa.field("a", pa.int64()),  # as decoded
        pa.field("b", pa.int32()),  # cast
        pa.field("c", pa.list_(pa.string())),  # text
        pa.field("d", pa.int64()),
        pa.field("e", pa.string()),  # text
        pa.field("f", pa.int64(), nullable=False),  # checked for nulls
        pa.field("g", pa.binary()),
        pa.field("h", pa.string()),  # text
        pa.field("i", pa.float64()),  # cast
    ]
)


def test_row_cost_counts_each_column_by_its_layout():
    # a, d: 1 + 64; b: 65 + a 32-bit copy; c: 1 + 32 + an offset copy; e, h: 1 + 32 + 32;
    # f: 65; g: 33; i: 1 + 32 + a 64-bit copy
    assert fixed_row_bits(column_specs(MIXED, codec.EXAMPLE)) == 65 * 3 + 97 + 65 + 65 * 2 + 33 + 97
    wide = pa.schema([(f"f{i}", pa.int64()) for i in range(1000)] + [(f"s{i}", pa.string()) for i in range(10)])
    assert fixed_row_bits(column_specs(wide, codec.EXAMPLE)) == 1000 * 65 + 10 * 65


def test_each_column_leaves_the_decoder_as_its_role_says():
    decoder = BlockDecoder(column_specs(MIXED, codec.EXAMPLE), codec.EXAMPLE)
    assert decoder._fixed == [1, 5, 8] and decoder._text == [2, 4, 7]
    plain = BlockDecoder(
        column_specs(pa.schema([("x", pa.int64()), ("y", pa.float32())]), codec.EXAMPLE), codec.EXAMPLE
    )
    assert plain._fixed == [] and plain._text == []


def test_a_record_of_every_role_decodes_to_its_values():
    ex = Example()
    f = ex.features.feature
    f["a"].int64_list.value.append(-(1 << 63))
    f["b"].int64_list.value.append(-(1 << 31))
    f["c"].bytes_list.value.extend([b"x", "é".encode()])
    f["d"].int64_list.SetInParent()  # no value: null
    f["e"].bytes_list.value.append(b"")
    f["f"].int64_list.value.append(7)
    f["g"].bytes_list.value.append(b"\xff")
    f["i"].float_list.value.append(0.1)
    payload = ex.SerializeToString()
    framed = b"\0" * 12 + payload + b"\0" * 4
    block = RecordBlock(memoryview(framed), np.array([12]), np.array([len(payload)]), 0, 0, "f")
    row = BlockDecoder(column_specs(MIXED, codec.EXAMPLE), codec.EXAMPLE).decode(block).to_pylist()[0]
    assert row == {
        "a": -(1 << 63),
        "b": -(1 << 31),
        "c": ["x", "é"],
        "d": None,
        "e": "",
        "f": 7,
        "g": b"\xff",
        "h": None,
        "i": float(np.float32(0.1)),
    }


def test_the_c_decoder_reads_a_feature_list_by_its_feature_name():
    schema = pa.schema(
        [
            ("ids", pa.int64()),
            ("ids__feature_list", pa.list_(pa.list_(pa.int64()))),
            ("w", pa.list_(pa.list_(pa.string()))),
        ]
    )
    specs = column_specs(schema, codec.SEQUENCE_EXAMPLE)
    assert [s.feature_name for s in specs] == ["ids", "ids", "w"]
    assert _codec_columns(specs) == [
        (b"ids", codec.FEATURES, codec.INT64, codec.SCALAR),
        (b"ids", codec.FEATURE_LISTS, codec.INT64, codec.LIST_OF_LIST),
        (b"w", codec.FEATURE_LISTS, codec.BYTES, codec.LIST_OF_LIST),
    ]
    # a feature list without a context sibling keeps its column name
    alone = column_specs(pa.schema([("ids__feature_list", pa.list_(pa.list_(pa.int64())))]), codec.SEQUENCE_EXAMPLE)
    assert _codec_columns(alone) == [(b"ids__feature_list", codec.FEATURE_LISTS, codec.INT64, codec.LIST_OF_LIST)]


def test_the_pause_keeps_a_callers_disabled_collector():
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
    try:
        with gc_paused():
            raise KeyError("x")
    except KeyError:
        pass
    assert gc.isenabled()
