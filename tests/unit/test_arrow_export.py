"""``Builder.finish_arrow`` (the core's ``decode_export_arrow``): the columns of a decode
handed over as one Arrow C data interface struct array. Checked against the reference
twin's buffers (``tfsql._reference``, an independent decoder) wrapped column by column,
for every kind and shape, nulls, empty lists and the three states of a feature, and for
the ways a consumer may take the struct over (whole, or not at all)."""

from __future__ import annotations

import ctypes
import struct

import numpy as np
import pyarrow as pa

from tfsql import _native as native
from tfsql import _reference as ref
from tfsql._proto import Example, SequenceExample
from tfsql.decoding import _column_array
from tfsql.schema import ColumnSpec, canonical_type

KINDS = {"i": native.INT64, "f": native.FLOAT, "b": native.BYTES}


def _spans(payloads: list[bytes]) -> tuple[bytes, np.ndarray, np.ndarray]:
    lengths = np.array([len(p) for p in payloads], np.uint64)
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.uint64)
    return b"".join(payloads), offsets, lengths


def _examples() -> list[bytes]:
    """Records holding each feature in each state: values, missing, no kind, empty."""
    out = []
    for r in range(4):
        ex = Example()
        f = ex.features.feature
        if r != 1:
            f["i"].int64_list.value.append(-(1 << 63) + r)
            f["il"].int64_list.value.extend([r, (1 << 63) - 1][: r % 3])
            f["f"].float_list.value.append(struct.unpack("<f", struct.pack("<f", -0.0 if r == 2 else r / 3))[0])
            f["bl"].bytes_list.value.extend([b"", b"\x00\xff", bytes([r]) * r][: r + 1])
        elif r == 1:
            f["i"].SetInParent()  # no kind
            f["il"].int64_list.SetInParent()  # empty
            f["bl"].bytes_list.SetInParent()  # empty ("f" missing)
        f["b"].bytes_list.value.append(f"r{r}".encode())
        out.append(ex.SerializeToString())
    return out


def _sequence_examples() -> list[bytes]:
    out = []
    for r in range(3):
        seq = SequenceExample()
        lists = seq.feature_lists.feature_list
        if r != 1:
            for step in range(r + 1):
                lists["steps"].feature.add().int64_list.value.extend(range(step))
            lists["words"].feature.add().bytes_list.value.append(b"w" * r)
            lists["words"].feature.add()  # a step with no kind
        out.append(seq.SerializeToString())
    return out


def _import(record_type: int, columns: list, payloads: list[bytes]) -> pa.RecordBatch:
    buf, offsets, lengths = _spans(payloads)
    builder = native.Decoder(record_type, columns).builder()
    builder.feed(buf, offsets, lengths)
    exported = builder.finish_arrow()
    assert exported.length == len(payloads)
    schema = pa.schema([(name.decode(), canonical_type(kind, shape)) for name, _, kind, shape in columns])
    batch = pa.RecordBatch._import_from_c(exported.address, schema)
    batch.validate(full=True)
    return batch


def _reference(record_type: int, columns: list, payloads: list[bytes]) -> list[list]:
    buf, offsets, lengths = _spans(payloads)
    parts = ref.Decoder(record_type, columns).decode(buf, offsets, lengths)
    return [
        _column_array(
            ColumnSpec(name.decode(), location, kind, shape, canonical_type(kind, shape)), len(payloads), p
        ).to_pylist()
        for (name, location, kind, shape), p in zip(columns, parts)
    ]


def _same(a: list, b: list) -> bool:
    """Equal, floats bit for bit (-0.0 is not 0.0)."""
    return repr(a) == repr(b)


def test_examples_every_kind_and_shape_as_the_reference_decodes_them():
    columns = [
        (b"i", native.FEATURES, native.INT64, native.SCALAR),
        (b"il", native.FEATURES, native.INT64, native.LIST),
        (b"f", native.FEATURES, native.FLOAT, native.SCALAR),
        (b"b", native.FEATURES, native.BYTES, native.SCALAR),
        (b"bl", native.FEATURES, native.BYTES, native.LIST),
        (b"absent", native.FEATURES, native.FLOAT, native.LIST),
    ]
    batch = _import(native.EXAMPLE, columns, _examples())
    expected = _reference(native.EXAMPLE, columns, _examples())
    assert all(_same(batch.column(c).to_pylist(), expected[c]) for c in range(len(columns)))
    # the three states: no kind and missing are null, an empty list is []
    assert batch.column("i").to_pylist()[1] is None and batch.column("f").to_pylist()[1] is None
    assert batch.column("il").to_pylist()[1] == [] and batch.column("bl").to_pylist()[1] == []
    assert batch.column("f").to_pylist()[2] == 0.0 and str(batch.column("f").to_pylist()[2]) == "-0.0"
    assert batch.column("absent").to_pylist() == [None] * 4


def test_feature_lists_as_lists_of_lists():
    columns = [
        (b"steps", native.FEATURE_LISTS, native.INT64, native.LIST_OF_LIST),
        (b"words", native.FEATURE_LISTS, native.BYTES, native.LIST_OF_LIST),
    ]
    batch = _import(native.SEQUENCE_EXAMPLE, columns, _sequence_examples())
    assert batch.column("steps").to_pylist() == [[[]], None, [[], [0], [0, 1]]]
    assert batch.column("words").to_pylist() == [[[b""], None], None, [[b"ww"], None]]
    expected = _reference(native.SEQUENCE_EXAMPLE, columns, _sequence_examples())
    assert [batch.column(c).to_pylist() for c in range(2)] == expected


def test_raw_records_as_one_binary_column():
    buf, offsets, lengths = _spans([b"abc", b"", b"\x00"])
    builder = native.Decoder(native.RAW, []).builder()
    builder.feed(buf, offsets, lengths)
    exported = builder.finish_arrow()
    batch = pa.RecordBatch._import_from_c(exported.address, pa.schema([("record", pa.binary())]))
    assert batch.column(0).to_pylist() == [b"abc", b"", b"\x00"]


def test_a_struct_never_imported_is_released_with_its_object():
    columns = [(b"bl", native.FEATURES, native.BYTES, native.LIST)]
    buf, offsets, lengths = _spans(_examples())
    for _ in range(200):  # freed each time (under a leak checker, nothing is left)
        builder = native.Decoder(native.EXAMPLE, columns).builder()
        builder.feed(buf, offsets, lengths)
        assert builder.finish_arrow().length == 4  # dropped at once
    # imported once: a second import of the same struct is refused, not a double free
    builder = native.Decoder(native.EXAMPLE, columns).builder()
    builder.feed(buf, offsets, lengths)
    exported = builder.finish_arrow()
    schema = pa.schema([("bl", pa.list_(pa.binary()))])
    first = pa.RecordBatch._import_from_c(exported.address, schema)
    try:
        pa.RecordBatch._import_from_c(exported.address, schema)
        raise AssertionError("imported twice")
    except pa.ArrowInvalid:
        pass
    assert first.column(0).to_pylist()[3] == [b"", b"\x00\xff", b"\x03\x03\x03"]


def test_a_builder_is_done_after_it():
    builder = native.Decoder(native.EXAMPLE, [(b"i", native.FEATURES, native.INT64, native.SCALAR)]).builder()
    builder.finish_arrow()
    try:
        builder.finish_arrow()
        raise AssertionError("finished twice")
    except ValueError as exc:
        assert "finished" in str(exc)


def test_small_and_large_buffers_of_one_batch_as_the_reference_decodes_them():
    # 100 records: the scalars' and lists' buffers are large (moved out of the builders),
    # the always-missing column's and the rare feature's small (copied into one block)
    payloads = []
    for r in range(100):
        ex = Example()
        f = ex.features.feature
        f["i"].int64_list.value.append(r * 1_000_003 - (1 << 62))
        f["bl"].bytes_list.value.extend([bytes([r % 256]) * (r % 7), b"x"][: r % 3])
        if r == 57:
            f["rare"].float_list.value.extend([1.5, -0.0])
        payloads.append(ex.SerializeToString())
    columns = [
        (b"i", native.FEATURES, native.INT64, native.SCALAR),
        (b"bl", native.FEATURES, native.BYTES, native.LIST),
        (b"rare", native.FEATURES, native.FLOAT, native.LIST),
        (b"absent", native.FEATURES, native.BYTES, native.SCALAR),
    ]
    batch = _import(native.EXAMPLE, columns, payloads)
    expected = _reference(native.EXAMPLE, columns, payloads)
    assert all(_same(batch.column(c).to_pylist(), expected[c]) for c in range(len(columns)))
    assert batch.column("i").to_pylist()[99] == 99 * 1_000_003 - (1 << 62)
    assert batch.column("rare").to_pylist()[57] == [1.5, -0.0] and batch.column("rare").null_count == 99
    assert batch.column("bl").to_pylist()[5] == [b"\x05" * 5, b"x"]


class _CArray(ctypes.Structure):
    pass


_CArray._fields_ = [
    ("length", ctypes.c_int64),
    ("null_count", ctypes.c_int64),
    ("offset", ctypes.c_int64),
    ("n_buffers", ctypes.c_int64),
    ("n_children", ctypes.c_int64),
    ("buffers", ctypes.POINTER(ctypes.c_void_p)),
    ("children", ctypes.POINTER(ctypes.POINTER(_CArray))),
    ("dictionary", ctypes.POINTER(_CArray)),
    ("release", ctypes.CFUNCTYPE(None, ctypes.POINTER(_CArray))),
    ("private_data", ctypes.c_void_p),
]


def test_children_moved_out_outlive_the_struct_released_before_them():
    # a consumer may move children out (copy the struct, mark the original released) and
    # release them after the parent: their buffers (shared block and nodes) stay valid
    columns = [(name.encode(), native.FEATURES, native.INT64, native.SCALAR) for name in ("a", "b", "c")]
    payloads = []
    for r in range(2):
        ex = Example()
        for k, name in enumerate("abc"):
            ex.features.feature[name].int64_list.value.append(100 * k + r)
        payloads.append(ex.SerializeToString())
    buf, offsets, lengths = _spans(payloads)
    builder = native.Decoder(native.EXAMPLE, columns).builder()
    builder.feed(buf, offsets, lengths)
    exported = builder.finish_arrow()
    parent = _CArray.from_address(exported.address)
    moved = []
    for k in (2, 0):  # moved out: a copy, the original marked released
        child = parent.children[k].contents
        moved.append(_CArray.from_buffer_copy(child))
        child.release = ctypes.cast(None, type(child.release))
    parent.release(ctypes.byref(parent))  # the struct first (releases "b" only)
    assert not parent.release
    values = [list(ctypes.cast(m.buffers[1], ctypes.POINTER(ctypes.c_int64))[:2]) for m in moved]
    assert values == [[200, 201], [0, 1]]
    for m in moved:
        m.release(ctypes.byref(m))
        assert not m.release
    del exported  # already released: its object frees nothing more


def _exported_strings(scalars: list[bytes], lists: list[list[bytes]]):
    """ArrowColumns of a scalar bytes column ``s`` (a value per record), a list column
    ``sl`` and an int64 column ``n``."""
    payloads = []
    for value, values in zip(scalars, lists):
        ex = Example()
        ex.features.feature["s"].bytes_list.value.append(value)
        ex.features.feature["sl"].bytes_list.value.extend(values)
        ex.features.feature["n"].int64_list.value.append(len(values))
        payloads.append(ex.SerializeToString())
    buf, offsets, lengths = _spans(payloads)
    columns = [
        (b"s", native.FEATURES, native.BYTES, native.SCALAR),
        (b"sl", native.FEATURES, native.BYTES, native.LIST),
        (b"n", native.FEATURES, native.INT64, native.SCALAR),
    ]
    builder = native.Decoder(native.EXAMPLE, columns).builder()
    builder.feed(buf, offsets, lengths)
    return builder.finish_arrow()


def test_utf8_is_checked_value_by_value():
    valid = _exported_strings(["é".encode(), b"", b"x"], [["é".encode(), b"", "日本".encode()], [], [b"plain"]])
    assert valid.utf8_invalid([0, 1]) == -1 and valid.utf8_invalid([]) == -1
    # "\xc3" + "\xa9" is "é" when joined, but neither value is UTF-8 on its own
    split = _exported_strings([b"ok", b"ok"], [[b"ok"], [b"\xc3", b"\xa9"]])
    assert split.utf8_invalid([0]) == -1
    assert split.utf8_invalid([1]) == 0 and split.utf8_invalid([0, 1]) == 1
    # a surrogate (ED A0 80), an overlong (C0 80) and a lone FF are not UTF-8 either
    for bad in (b"\xed\xa0\x80", b"\xc0\x80", b"\xff"):
        assert _exported_strings([b"x", bad], [[], []]).utf8_invalid([0]) == 0
    # not a bytes column, or no such column: not text
    assert valid.utf8_invalid([2]) == 0 and valid.utf8_invalid([0, 7]) == 1


def test_a_capsule_moves_the_struct_out():
    exported = _exported_strings(["é".encode(), b"y"], [["é".encode(), b"x"], [b"y"]])
    assert exported.nbytes > 0
    schema = pa.schema([("s", pa.string()), ("sl", pa.list_(pa.string())), ("n", pa.int64())])

    class Batch:  # what tfsql.decoding.ExportedBatch hands a consumer
        def __arrow_c_array__(self, requested_schema=None):
            return schema.__arrow_c_schema__(), exported.capsule()

    batch = pa.record_batch(Batch())
    assert batch.to_pydict() == {"s": ["é", "y"], "sl": [["é", "x"], ["y"]], "n": [2, 1]}
    for again in (exported.capsule, lambda: exported.utf8_invalid([0])):  # taken over: refused
        try:
            again()
            raise AssertionError("used twice")
        except ValueError as exc:
            assert "already taken over" in str(exc)
    # a capsule no consumer takes releases the struct with itself
    for _ in range(200):
        _exported_strings([b"z"], [[b"z"]]).capsule()
