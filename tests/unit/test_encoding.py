"""tfsql.encoding: Arrow → Encoder buffers → records, checked with the protobuf package."""

from __future__ import annotations

import datetime as dt
import decimal

import numpy as np
import pyarrow as pa
import pytest

from tfsql.encoding import RecordEncoder
from tfsql.errors import SchemaError

from tfrecord_files import example_dict, sequence_dict, unframe

I, F, B = "int64_list", "float_list", "bytes_list"


def encode(table: pa.Table, **kwargs) -> list[bytes]:
    batch = (
        table.combine_chunks().to_batches()[0]
        if table.num_rows
        else pa.RecordBatch.from_pylist([], schema=table.schema)
    )
    framed, ends = RecordEncoder(table.schema, **kwargs).encode(batch)
    stream = bytes(framed)
    assert list(ends) == list(np.cumsum([16 + len(p) for p in unframe(stream)]))
    return unframe(stream)


def examples(table: pa.Table) -> list[dict]:
    return [example_dict(p) for p in encode(table)]


def column(array: pa.Array) -> list:
    """What each row of a one-column table becomes: the feature or None (omitted)."""
    return [ex.get("c") for ex in examples(pa.table({"c": array}))]


# --------------------------------------------------------------------------------------
# scalar types
# --------------------------------------------------------------------------------------

INT_CASES = [
    (pa.array([True, False, None]), [(I, [1]), (I, [0]), None]),
    (pa.array([-128, 127, None], pa.int8()), [(I, [-128]), (I, [127]), None]),
    (pa.array([-(2**15), 2**15 - 1, None], pa.int16()), [(I, [-(2**15)]), (I, [2**15 - 1]), None]),
    (pa.array([-(2**31), 2**31 - 1, None], pa.int32()), [(I, [-(2**31)]), (I, [2**31 - 1]), None]),
    (pa.array([-(2**63), 2**63 - 1, None], pa.int64()), [(I, [-(2**63)]), (I, [2**63 - 1]), None]),
    (pa.array([0, 255, None], pa.uint8()), [(I, [0]), (I, [255]), None]),
    (pa.array([0, 65535, None], pa.uint16()), [(I, [0]), (I, [65535]), None]),
    (pa.array([0, 2**32 - 1, None], pa.uint32()), [(I, [0]), (I, [2**32 - 1]), None]),
    (pa.array([0, 2**63 - 1, None], pa.uint64()), [(I, [0]), (I, [2**63 - 1]), None]),
    (pa.array([dt.date(1970, 1, 2), dt.date(1969, 12, 31), None], pa.date32()), [(I, [1]), (I, [-1]), None]),
    (pa.array([86_400_000, -1, None], pa.date64()), [(I, [86_400_000]), (I, [-1]), None]),
    (
        pa.array([1_700_000_000_123_456, -5, None], pa.timestamp("us", tz="UTC")),
        [(I, [1_700_000_000_123_456]), (I, [-5]), None],
    ),
    (pa.array([7, 8, None], pa.timestamp("s")), [(I, [7]), (I, [8]), None]),
    (pa.array([1000, 0, None], pa.time32("ms")), [(I, [1000]), (I, [0]), None]),
    (pa.array([10**9, 1, None], pa.time64("ns")), [(I, [10**9]), (I, [1]), None]),
    (pa.array([-3, 3, None], pa.duration("ms")), [(I, [-3]), (I, [3]), None]),
]


@pytest.mark.parametrize("array, expected", INT_CASES, ids=[str(a.type) for a, _ in INT_CASES])
def test_integer_like_types_write_int64_lists(array, expected):
    assert column(array) == expected


FLOAT_CASES = [
    (pa.array(np.array([1.5, -2.0], np.float16)), [(F, [1.5]), (F, [-2.0])]),
    (pa.array([0.1, None], pa.float32()), [(F, [np.float32(0.1)]), None]),
    (pa.array([0.1, 1e300, None]), [(F, [np.float32(0.1)]), (F, [float("inf")]), None]),
    (
        pa.array([decimal.Decimal("1.25"), decimal.Decimal("-0.1"), None], pa.decimal128(5, 2)),
        [(F, [1.25]), (F, [np.float32(-0.1)]), None],
    ),
    (pa.array([decimal.Decimal("3.5")], pa.decimal256(40, 1)), [(F, [3.5])]),
]


@pytest.mark.parametrize("array, expected", FLOAT_CASES, ids=[str(a.type) for a, _ in FLOAT_CASES])
def test_float_like_types_write_float32_lists(array, expected):
    assert column(array) == expected


BYTES_CASES = [
    (pa.array(["héllo", "", None, "日本"]), [(B, ["héllo".encode()]), (B, [b""]), None, (B, ["日本".encode()])]),
    (pa.array(["a", None], pa.large_string()), [(B, [b"a"]), None]),
    (
        pa.array(["view-string-longer-than-12", "s", None], pa.string_view()),
        [(B, [b"view-string-longer-than-12"]), (B, [b"s"]), None],
    ),
    (pa.array([b"\x00\xff", b"", None]), [(B, [b"\x00\xff"]), (B, [b""]), None]),
    (pa.array([b"\x01", None], pa.large_binary()), [(B, [b"\x01"]), None]),
    (pa.array([b"\x00" * 20, None], pa.binary_view()), [(B, [b"\x00" * 20]), None]),
    (pa.array([b"ab", None, b"\x00\x01"], pa.binary(2)), [(B, [b"ab"]), None, (B, [b"\x00\x01"])]),
]


@pytest.mark.parametrize("array, expected", BYTES_CASES, ids=[str(a.type) for a, _ in BYTES_CASES])
def test_string_and_binary_types_write_bytes_lists(array, expected):
    assert column(array) == expected


def test_dictionary_writes_its_values():
    array = pa.array(["b", None, "a", "b"]).dictionary_encode()
    assert column(array) == [(B, [b"b"]), None, (B, [b"a"]), (B, [b"b"])]


def test_all_null_and_empty_strings_columns():
    assert column(pa.array([None, None], pa.string())) == [None, None]
    assert column(pa.array(["", ""])) == [(B, [b""]), (B, [b""])]


def test_sliced_arrays_use_their_offset():
    array = pa.array(["x", "yy", None, "zzz"]).slice(1, 3)
    assert column(array) == [(B, [b"yy"]), None, (B, [b"zzz"])]
    ints = pa.array([1, None, 3, 4], pa.uint64()).slice(1)
    assert column(ints) == [None, (I, [3]), (I, [4])]


def test_an_empty_batch_writes_nothing():
    assert encode(pa.table({"c": pa.array([], pa.int64())})) == []


def test_a_record_with_every_feature_null_is_an_empty_example():
    assert examples(pa.table({"a": [None], "b": pa.array([None], pa.string())})) == [{}]


def test_a_null_typed_column_is_omitted_everywhere():
    table = pa.table({"n": pa.array([None, None], pa.null()), "x": [1, 2]})
    assert RecordEncoder(table.schema).columns[0].name == "x"
    assert examples(table) == [{"x": (I, [1])}, {"x": (I, [2])}]


# --------------------------------------------------------------------------------------
# lists
# --------------------------------------------------------------------------------------


LIST_CASES = [
    (pa.array([[1, 2], [], None, [3]]), [(I, [1, 2]), (I, []), None, (I, [3])]),
    (pa.array([[1.5], [], None], pa.large_list(pa.float64())), [(F, [1.5]), (F, []), None]),
    (pa.array([[1, 2], None, [3, 4]], pa.list_(pa.int32(), 2)), [(I, [1, 2]), None, (I, [3, 4])]),
    (pa.array([["a", "é"], [], None], pa.list_view(pa.string())), [(B, [b"a", "é".encode()]), (B, []), None]),
    (pa.array([[True], [False, True]], pa.large_list_view(pa.bool_())), [(I, [1]), (I, [0, 1])]),
    (pa.array([[b"\x00"], []], pa.list_(pa.binary())), [(B, [b"\x00"]), (B, [])]),
    (pa.array([["x", "y"], ["x"]], pa.list_(pa.dictionary(pa.int8(), pa.string()))), [(B, [b"x", b"y"]), (B, [b"x"])]),
    (pa.array([[dt.date(1970, 1, 3)]], pa.list_(pa.date32())), [(I, [2])]),
]


@pytest.mark.parametrize("array, expected", LIST_CASES, ids=[str(a.type) for a, _ in LIST_CASES])
def test_list_types_write_all_values(array, expected):
    assert column(array) == expected


def test_sliced_list_arrays_write_only_their_rows():
    array = pa.array([[9, 9], [1], None, [2, 3]]).slice(1)
    assert column(array) == [(I, [1]), None, (I, [2, 3])]
    fixed = pa.array([[9, 9], [1, 2], [3, 4]], pa.list_(pa.int64(), 2)).slice(1)
    assert column(fixed) == [(I, [1, 2]), (I, [3, 4])]


def test_canonical_buffers_for_a_list_column():
    table = pa.table({"s": pa.array([["ab", "c"], None, []])})
    (arrays,) = RecordEncoder(table.schema).arrays(table.to_batches()[0])
    validity, outer, inner, value_offsets, values = arrays
    assert validity.dtype == np.uint8 and validity.tolist() == [1, 0, 1]
    assert outer.dtype == np.int64 and outer.tolist() == [0, 2, 2, 2]
    assert inner is None
    assert value_offsets.dtype == np.int64 and value_offsets.tolist() == [0, 2, 3]
    assert bytes(values) == b"abc"


def test_canonical_buffers_for_scalar_columns():
    table = pa.table({"i": pa.array([1, 2], pa.int8()), "f": [0.5, None]})
    (i, f) = RecordEncoder(table.schema).arrays(table.to_batches()[0])
    assert i[0] is None and i[4].dtype == np.int64 and i[4].tolist() == [1, 2]
    assert f[0].tolist() == [1, 0] and f[4].dtype == np.float32 and f[4][0] == 0.5


# --------------------------------------------------------------------------------------
# SequenceExample
# --------------------------------------------------------------------------------------


def test_sequence_example_puts_lists_of_lists_in_feature_lists():
    table = pa.table(
        {
            "frames": pa.array([[[1.0, 2.0], [], [3.0]], [], None], pa.list_(pa.list_(pa.float32()))),
            "words": pa.array([[["a"]], [["b", "c"]], [["d"]]]),
            "id": [1, 2, 3],
        }
    )
    records = [sequence_dict(p) for p in encode(table, record_type="sequence_example")]
    assert records == [
        ({"id": (I, [1])}, {"frames": (F, [[1.0, 2.0], [], [3.0]]), "words": (B, [[b"a"]])}),
        ({"id": (I, [2])}, {"frames": (None, []), "words": (B, [[b"b", b"c"]])}),
        ({"id": (I, [3])}, {"words": (B, [[b"d"]])}),
    ]


def test_layout_feature_list_turns_a_list_into_one_value_steps():
    table = pa.table({"tokens": [[5, 6], [], None], "label": [[1], [2], [3]]})
    records = [
        sequence_dict(p) for p in encode(table, record_type="SequenceExample", layout={"tokens": "feature_list"})
    ]
    assert records == [
        ({"label": (I, [1])}, {"tokens": (I, [[5], [6]])}),
        ({"label": (I, [2])}, {"tokens": (None, [])}),
        ({"label": (I, [3])}, {}),
    ]


def test_layout_errors():
    schema = pa.schema({"x": pa.int64(), "l": pa.list_(pa.int64()), "ll": pa.list_(pa.list_(pa.int64()))})
    with pytest.raises(ValueError, match=r"layout names columns that are not in the data: \['nope'\]"):
        RecordEncoder(schema, record_type="sequence_example", layout={"nope": "context"})
    with pytest.raises(
        ValueError, match=r"layout values must be one of \('context', 'feature_list'\), got \{'l': 'list'\}"
    ):
        RecordEncoder(schema, record_type="sequence_example", layout={"l": "list"})
    with pytest.raises(ValueError, match='pass record_type="sequence_example" with it'):
        RecordEncoder(schema.remove(2), layout={"l": "feature_list"})
    with pytest.raises(SchemaError, match="column 'x' has scalar type int64; a feature_list column must be a list"):
        RecordEncoder(schema, record_type="sequence_example", layout={"x": "feature_list"})
    with pytest.raises(SchemaError, match=r"column 'll' is a list of lists .* must be a \"feature_list\""):
        RecordEncoder(schema, record_type="sequence_example", layout={"ll": "context"})


# --------------------------------------------------------------------------------------
# raw records
# --------------------------------------------------------------------------------------


def test_raw_mode_writes_values_verbatim():
    table = pa.table({"record": pa.array([b"\x00abc", b"", "é".encode()])})
    assert encode(table, record_type="bytes") == [b"\x00abc", b"", "é".encode()]
    strings = pa.table({"s": pa.array(["x", "yz"], pa.large_string())})
    assert encode(strings, record_type="raw") == [b"x", b"yz"]


def test_raw_mode_errors():
    with pytest.raises(
        SchemaError,
        match=r'record_type="bytes" writes exactly one binary or string column verbatim, but the data has 2 columns \[\'a\', \'b\'\]',
    ):
        RecordEncoder(pa.schema({"a": pa.binary(), "b": pa.binary()}), record_type="bytes")
    with pytest.raises(
        SchemaError, match=r"record_type=\"bytes\" needs a binary or string column, but column 'a' has type int64"
    ):
        RecordEncoder(pa.schema({"a": pa.int64()}), record_type="bytes")
    table = pa.table({"r": pa.array([b"x", None])})
    with pytest.raises(SchemaError, match="column 'r' is null at row 1; record_type=\"bytes\"") as info:
        encode(table, record_type="bytes")
    assert (info.value.feature, info.value.record_index) == ("r", 1)


# --------------------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "arrow_type",
    [
        pa.struct({"a": pa.int64()}),
        pa.map_(pa.string(), pa.int64()),
        pa.list_(pa.null()),
        pa.list_(pa.list_(pa.list_(pa.int64()))),
    ],
    ids=str,
)
def test_unsupported_types_name_the_column(arrow_type):
    with pytest.raises(SchemaError, match=r"^column 'bad': Arrow type .* has no TFRecord feature") as info:
        RecordEncoder(pa.schema({"ok": pa.int64(), "bad": arrow_type}))
    assert info.value.feature == "bad"


def test_list_of_lists_in_example_mode_says_use_sequence_example():
    with pytest.raises(
        SchemaError,
        match=r"column 'seq' has type list<item: list<item: int64>>: .* pass record_type=\"sequence_example\"",
    ):
        RecordEncoder(pa.schema({"seq": pa.list_(pa.list_(pa.int64()))}))


def test_null_element_inside_a_list_names_column_and_row():
    table = pa.table({"x": [[1], [2, None], None]})
    with pytest.raises(
        SchemaError, match=r"^column 'x' has a null element inside its list at row 1; .* drop or fill them"
    ) as info:
        encode(table)
    assert (info.value.feature, info.value.record_index) == ("x", 1)


def test_null_inner_list_names_column_and_row():
    table = pa.table({"x": pa.array([[[1]], [[2]], [[3], None]])})
    with pytest.raises(SchemaError, match=r"^column 'x' has a null inner list at row 2"):
        encode(table, record_type="sequence_example")
    inner_null = pa.table({"x": pa.array([[[1], [2, None]]])})
    with pytest.raises(SchemaError, match=r"^column 'x' has a null element inside its list at row 0"):
        encode(inner_null, record_type="sequence_example")


def test_error_rows_count_from_row_base_and_row_numbers():
    batch = pa.record_batch({"x": [[1], [None]]})
    encoder = RecordEncoder(batch.schema)
    with pytest.raises(SchemaError, match="at row 101;"):
        encoder.encode(batch, row_base=100)
    with pytest.raises(SchemaError, match="at row 107;"):
        encoder.encode(batch, row_base=100, row_numbers=np.array([3, 7]))


def test_uint64_above_int64_max_is_an_error_not_a_wrap():
    table = pa.table({"u": pa.array([1, None, 2**63], pa.uint64())})
    with pytest.raises(
        SchemaError,
        match=r"^column 'u' row 2 holds the uint64 value 9223372036854775808, above the int64 maximum 9223372036854775807",
    ) as info:
        encode(table)
    assert (info.value.feature, info.value.record_index) == ("u", 2)
    lists = pa.table({"u": pa.array([[1], [], [3, 2**64 - 1]], pa.list_(pa.uint64()))})
    with pytest.raises(SchemaError, match=r"^column 'u' row 2 holds the uint64 value 18446744073709551615"):
        encode(lists)


def test_uint64_garbage_under_a_null_is_not_an_error():
    values = pa.py_buffer(np.array([1, 2**64 - 1], dtype=np.uint64).tobytes())
    validity = pa.py_buffer(bytes([0b01]))
    array = pa.Array.from_buffers(pa.uint64(), 2, [validity, values])
    assert column(array) == [(I, [1]), None]


def test_duplicate_column_names_are_rejected():
    with pytest.raises(SchemaError, match=r"column names must be unique to become feature names; \['a'\] appear"):
        RecordEncoder(pa.schema([("a", pa.int64()), ("a", pa.string())]))


def test_batches_must_match_the_schema():
    encoder = RecordEncoder(pa.schema({"a": pa.int64()}))
    with pytest.raises(ValueError, match="record batches must all have the same schema"):
        encoder.encode(pa.record_batch({"a": ["x"]}))
