"""Golden files written by real TensorFlow (``tests/data/tensorflow``) read back exactly.

Each ``<file>.expected.json`` (see that directory's README) holds the expected Arrow type
and values of every column, floats as float32 bits and binary as base64. TensorFlow is
not needed here: ``generate.py`` wrote and checked the files.
"""

from __future__ import annotations

import base64
import gzip
import json
import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from tfsql import _reference as ref
from wire import read_varint

DATA = Path(__file__).resolve().parents[1] / "data" / "tensorflow"
GOLDEN = sorted(p.name[: -len(".expected.json")] for p in DATA.glob("*.expected.json"))


def expected(name: str) -> dict:
    return json.loads((DATA / f"{name}.expected.json").read_text(encoding="utf-8"))


def file_bytes(name: str) -> bytes:
    """The uncompressed TFRecord stream of a golden file."""
    raw = (DATA / name).read_bytes()
    compression = expected(name)["compression"]
    if compression == "gzip":
        return gzip.decompress(raw)
    if compression == "zlib":
        return zlib.decompress(raw)
    return raw


def test_golden_files_are_present():
    assert GOLDEN == [
        "empty.tfrecord",
        "proto3_edge_cases.tfrecord",
        "sequence.tfrecord",
        "tabular.tfrecord",
        "tabular.tfrecord.gz",
        "tabular.tfrecord.zz",
        "wire_variants.tfrecord",
    ]


# --------------------------------------------------------------------------- Arrow → json cells


def type_name(t: pa.DataType) -> str:
    """The json's type grammar: int64, float32, string, binary, list<...>."""
    if pa.types.is_list(t):
        return f"list<{type_name(t.value_type)}>"
    names = {pa.int64(): "int64", pa.float32(): "float32", pa.string(): "string", pa.binary(): "binary"}
    return names.get(t, f"unexpected {t}")


def arrow_cells(array: pa.Array) -> list:
    """One json-style cell per row (null, scalar, or list), floats as hex bits."""
    nulls = array.is_null().to_pylist()
    t = array.type
    if pa.types.is_list(t):
        offsets = array.offsets.to_pylist()
        children = arrow_cells(array.values)
        return [None if nulls[i] else children[offsets[i] : offsets[i + 1]] for i in range(len(array))]
    if pa.types.is_float32(t):
        bits = np.frombuffer(array.buffers()[1], "<u4")[array.offset : array.offset + len(array)]
        return [None if nulls[i] else f"{int(bits[i]):08x}" for i in range(len(array))]
    values = array.to_pylist()
    if pa.types.is_binary(t):
        return [None if v is None else base64.b64encode(v).decode("ascii") for v in values]
    return values


# --------------------------------------------------------------------------- wire order


def length_delimited(data: bytes):
    """``(field number, payload)`` of each length-delimited field, in wire order."""
    pos = 0
    while pos < len(data):
        tag, pos = read_varint(data, pos)
        number, wire_type = tag >> 3, tag & 7
        if wire_type == 0:
            pos = read_varint(data, pos)[1]
        elif wire_type == 1:
            pos += 8
        elif wire_type == 5:
            pos += 4
        elif wire_type == 2:
            length, pos = read_varint(data, pos)
            yield number, data[pos : pos + length]
            pos += length
        elif wire_type == 3:  # a group: skip to its end tag
            depth = 1
            while depth:
                tag, pos = read_varint(data, pos)
                if tag & 7 == 3:
                    depth += 1
                elif tag & 7 == 4:
                    depth -= 1
                elif tag & 7 == 0:
                    pos = read_varint(data, pos)[1]
                elif tag & 7 == 1:
                    pos += 8
                elif tag & 7 == 5:
                    pos += 4
                else:
                    length, pos = read_varint(data, pos)
                    pos += length


def first_seen_order(stream: bytes, record_type: str) -> list:
    """Column names in first-seen order: records in file order, map keys in wire order."""
    sections = {1} if record_type == "example" else {1, 2}
    order: list = []
    pos = 0
    while pos < len(stream):
        (length,) = np.frombuffer(stream, "<u8", count=1, offset=pos).tolist()
        payload = stream[pos + 12 : pos + 12 + length]
        pos += 12 + length + 4
        for number, section in length_delimited(payload):
            if number not in sections:
                continue
            for entry_number, entry in length_delimited(section):
                if entry_number != 1:
                    continue
                key = b""
                for key_number, value in length_delimited(entry):
                    if key_number == 1:
                        key = value
                if key.decode("utf-8") not in order:
                    order.append(key.decode("utf-8"))
    return order


@pytest.mark.parametrize("name", GOLDEN)
def test_expected_column_order_is_the_wire_order(name):
    want = expected(name)
    assert first_seen_order(file_bytes(name), want["record_type"]) == want["column_order"]
    assert sorted(want["column_order"]) == sorted(want["columns"])


# --------------------------------------------------------------------------- read_tfrecord


def read_tfrecord():
    tfsql = pytest.importorskip("tfsql")
    reader = getattr(tfsql, "read_tfrecord", None)
    if reader is None:
        pytest.skip("tfsql.read_tfrecord is not implemented yet")
    return reader


@pytest.mark.parametrize("name", GOLDEN)
def test_read_tfrecord_reads_golden_file_exactly(name):
    want = expected(name)
    table = read_tfrecord()(str(DATA / name), record_type=want["record_type"], compression=want["compression"])
    assert isinstance(table, pa.Table)
    assert table.num_rows == want["num_records"]
    assert sorted(table.column_names) == sorted(want["columns"])
    for column_name, column in want["columns"].items():
        array = table.column(column_name).combine_chunks()
        assert type_name(array.type) == column["arrow_type"], column_name
        assert arrow_cells(array) == column["values"], column_name


@pytest.mark.parametrize("name", GOLDEN)
def test_read_tfrecord_column_order_is_first_seen(name):
    want = expected(name)
    table = read_tfrecord()(str(DATA / name), record_type=want["record_type"], compression=want["compression"])
    assert table.column_names == want["column_order"]


@pytest.mark.parametrize("name", ["tabular.tfrecord.gz", "tabular.tfrecord.zz"])
def test_read_tfrecord_infers_compression_from_magic_bytes(name):
    table = read_tfrecord()(str(DATA / name))
    plain = read_tfrecord()(str(DATA / "tabular.tfrecord"))
    assert table.num_rows == 36
    assert table.schema == plain.schema
    for column_name in plain.column_names:
        assert arrow_cells(table.column(column_name).combine_chunks()) == arrow_cells(
            plain.column(column_name).combine_chunks()
        )


# --------------------------------------------------------------------------- reference codec


KINDS = {"int64": ref.INT64, "float32": ref.FLOAT, "string": ref.BYTES, "binary": ref.BYTES}


def decoder_column(name: str, column: dict) -> tuple:
    arrow_type = column["arrow_type"]
    base = arrow_type.replace("list<", "").replace(">", "")
    depth = arrow_type.count("list<")
    location = ref.FEATURE_LISTS if column["location"] == "feature_lists" else ref.FEATURES
    return (name.encode("utf-8"), location, KINDS[base], (ref.SCALAR, ref.LIST, ref.LIST_OF_LIST)[depth])


def buffer_cells(decoded: tuple, n: int, kind: int, shape: int, base: str) -> list:
    """Cells of one decoded column (the ``Decoder.decode`` tuple layout)."""
    validity, _, outer, inner_validity, _, inner_offsets, value_offsets, values = decoded

    def valid(bitmap, i):
        return bitmap is None or bool(bitmap[i // 8] >> (i % 8) & 1)

    if kind == ref.BYTES:
        vo = np.frombuffer(value_offsets, "<i4").tolist()
        leaves = [bytes(values[vo[k] : vo[k + 1]]) for k in range(len(vo) - 1)]
        leaves = [v.decode("utf-8") if base == "string" else base64.b64encode(v).decode("ascii") for v in leaves]
    elif kind == ref.FLOAT:
        leaves = [f"{b:08x}" for b in np.frombuffer(values, "<u4").tolist()]
    else:
        leaves = np.frombuffer(values, "<i8").tolist()
    if shape == ref.SCALAR:
        return [leaves[i] if valid(validity, i) else None for i in range(n)]
    outer_offsets = np.frombuffer(outer, "<i4").tolist()
    if shape == ref.LIST:
        return [leaves[outer_offsets[i] : outer_offsets[i + 1]] if valid(validity, i) else None for i in range(n)]
    inner = np.frombuffer(inner_offsets, "<i4").tolist()
    steps = [leaves[inner[j] : inner[j + 1]] if valid(inner_validity, j) else None for j in range(len(inner) - 1)]
    return [steps[outer_offsets[i] : outer_offsets[i + 1]] if valid(validity, i) else None for i in range(n)]


@pytest.mark.parametrize("name", GOLDEN)
def test_reference_codec_decodes_golden_file_exactly(name):
    want = expected(name)
    record_type = {"example": ref.EXAMPLE, "sequence_example": ref.SEQUENCE_EXAMPLE}[want["record_type"]]
    stream = file_bytes(name)
    offsets, lengths, end, status = ref.scan_frames(stream)
    assert (end, status, len(offsets) // 8) == (len(stream), ref.FRAME_OK, want["num_records"])
    names = list(want["columns"])
    columns = [decoder_column(n, want["columns"][n]) for n in names]
    decoded = ref.Decoder(record_type, columns).decode(stream, offsets, lengths)
    for column_name, (_, _, kind, shape), result in zip(names, columns, decoded):
        arrow_type = want["columns"][column_name]["arrow_type"]
        base = arrow_type.replace("list<", "").replace(">", "")
        cells = buffer_cells(result, want["num_records"], kind, shape, base)
        assert cells == want["columns"][column_name]["values"], column_name
    summary = ref.summarize(stream, offsets, lengths, record_type)
    assert [n.decode("utf-8") for _, n in summary] == want["column_order"]
