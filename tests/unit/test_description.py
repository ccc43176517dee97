"""The column description's one home, the C core (tfsql/core/description.c), and its
pure-Python twin agree: the same type text, the same features.json bytes, the same
columns read back; every Arrow type a writer describes maps to type text and back."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from tfsql import _native as native
from tfsql import _reference as ref
from tfsql import description

COLUMNS = [
    ("a", "timestamp[ns, tz=Europe/Paris]", False),
    ('quote"back\\slash\nnew\x01line é', "list<int64>", False),
    ("t", "fixed_shape_tensor<float32>[2,3,4]", False),
    ("d", "decimal128(10, -2)", False),
    ("w", "decimal256(76, 76)", False),
    ("f", "large_list<fixed_size_list<fixed_size_binary[4]>[3]>", False),
    ("tt", "time32[ms]", False),
    ("u", "uint64", False),
    ("p", "int64", True),
]

TEXTS = [
    "null",
    "bool",
    "int8",
    "uint16",
    "float16",
    "large_string",
    "binary",
    "date64",
    "timestamp[s]",
    "timestamp[us, tz=+05:30]",
    "time64[ns]",
    "duration[ms]",
    "list<list<float32>>",
    "fixed_size_list<string>[1]",
]
NOT_TEXT = [
    "",
    "int",
    "int64 ",
    "list<int64",
    "list<int64>>",
    "time32[us]",
    "time64[s]",
    "decimal128(39, 1)",
    "decimal128(10, 11)",
    "fixed_shape_tensor<null>[1]",
    "fixed_shape_tensor<int8>[0]",
    "fixed_size_list<int8>[0]",
    "timestamp[us, tz=]",
    "list<list<list<list<list<int8>>>>>",
]


def test_both_render_the_same_bytes_and_read_them_back():
    rendered = native.render_description(COLUMNS)
    assert rendered == ref.render_description(COLUMNS)
    assert native.parse_description(rendered) == ref.parse_description(rendered) == COLUMNS
    document = json.loads(rendered)
    assert list(document["featuresDict"]["features"]) == [name for name, _, _ in COLUMNS]


@pytest.mark.parametrize("text", TEXTS)
def test_type_text_parses_alike(text):
    assert native.type_parts(text) == ref.type_parts(text) is not None


@pytest.mark.parametrize("text", NOT_TEXT)
def test_other_text_is_no_type(text):
    assert native.type_parts(text) is None and ref.type_parts(text) is None


@pytest.mark.parametrize("codec", [native, ref], ids=["core", "reference"])
def test_a_features_json_without_tfsql_types_is_no_description(codec):
    tfds = {"featuresDict": {"features": {"x": {"tensor": {"dtype": "int64", "shape": {}, "encoding": "none"}}}}}
    assert codec.parse_description(json.dumps(tfds).encode()) is None
    assert codec.parse_description(b'{"featuresDict": {"features": {}}}') is None
    assert codec.parse_description(b"not json") is None
    with pytest.raises(ValueError, match="'x'"):
        codec.render_description([("x", "int", False)])


@pytest.mark.parametrize(
    "arrow",
    [
        pa.int8(),
        pa.uint64(),
        pa.float16(),
        pa.decimal128(5, 2),
        pa.decimal256(40, 3),
        pa.binary(7),
        pa.date64(),
        pa.timestamp("ms", tz="America/New_York"),
        pa.time32("s"),
        pa.duration("ns"),
        pa.large_list(pa.list_(pa.string())),
        pa.list_(pa.list_(pa.int16(), 2), 3),
        pa.fixed_shape_tensor(pa.uint8(), [2, 2, 3]),
    ],
    ids=str,
)
def test_arrow_types_round_trip_through_type_text(arrow):
    assert description.arrow_type(description.type_text(arrow)) == arrow


def test_views_and_dictionaries_are_described_as_what_they_read_back_as():
    assert description.type_text(pa.string_view()) == "string"
    assert description.type_text(pa.dictionary(pa.int32(), pa.large_string())) == "large_string"
    assert description.type_text(pa.list_view(pa.int8())) == "list<int8>"
    with pytest.raises(ValueError):
        description.type_text(pa.struct([("a", pa.int8())]))
