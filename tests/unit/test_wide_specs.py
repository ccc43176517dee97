"""Column specs of a wide schema are read in bulk (``tfsql.schema._plain_specs``: names,
types and one lookup per column, issue 34 item 7), and the decoder numbers the columns'
layouts with NumPy (``tfsql.decoding._layouts``): both give exactly what the per-column
reading gives, and every schema they do not cover goes the per-column way."""

from __future__ import annotations

import pyarrow as pa
import pytest

from tfsql._codec import codec
from tfsql.decoding import BlockDecoder, fixed_row_bits
from tfsql.errors import SchemaError
from tfsql.schema import _column_specs, _plain_specs, column_specs

KINDS = [pa.int64(), pa.string(), pa.list_(pa.float32()), pa.binary(), pa.int32(), pa.list_(pa.string()), pa.bool_()]


def _mixed(n: int) -> pa.Schema:
    return pa.schema([pa.field(f"f{i}", KINDS[i * 7 % 5 + i % 2]) for i in range(n)])


def test_a_plain_schema_is_read_in_bulk_as_field_by_field():
    schema = _mixed(3_000)
    bulk = _plain_specs(schema, codec.EXAMPLE)
    assert bulk is not None and bulk == _column_specs(list(schema), codec.EXAMPLE)
    assert [s.feature for s in bulk[:3]] == [None] * 3 and all(s.nullable for s in bulk)
    # one type object per distinct type, shared by its columns
    assert len({id(s.arrow_type) for s in bulk}) == len(set(schema.types))


@pytest.mark.parametrize(
    "schema, record_type",
    [
        (pa.schema([pa.field("a", pa.int64()), pa.field("b", pa.int64(), nullable=False)]), codec.EXAMPLE),
        (pa.schema([pa.field("a", pa.list_(pa.field("item", pa.int64(), nullable=False)))]), codec.EXAMPLE),
        (pa.schema([pa.field("x not null", pa.int64())]), codec.EXAMPLE),  # a name that reads like it
        (pa.schema({"ids": pa.int64(), "ids__feature_list": pa.list_(pa.list_(pa.int64()))}), codec.SEQUENCE_EXAMPLE),
        (pa.schema({"record": pa.binary()}), codec.RAW),
    ],
    ids=["not nullable", "list item not nullable", "name", "feature lists", "raw"],
)
def test_other_schemas_go_field_by_field(schema, record_type):
    assert _plain_specs(schema, record_type) is None
    assert column_specs(schema, record_type) == _column_specs(list(schema), record_type)


def test_a_type_no_feature_holds_is_named_as_before():
    schema = pa.schema({"a": pa.int64(), "s": pa.struct([("x", pa.int64())])})
    assert _plain_specs(schema, codec.EXAMPLE) is None
    with pytest.raises(SchemaError, match="column 's'"):
        column_specs(schema, codec.EXAMPLE)


def test_the_decoder_judges_each_layout_once_and_every_column_as_before():
    """Casts (int32, bool), text (string), non-nullable columns: the columns cast or
    checked one by one and the text columns are those a per-column judgement picks."""
    fields = [pa.field(f.name, f.type, nullable=i % 11 != 3) for i, f in enumerate(_mixed(2_000))]
    specs = column_specs(pa.schema(fields), codec.EXAMPLE)
    decoder = BlockDecoder(specs, codec.EXAMPLE)
    text_type = {pa.string(), pa.list_(pa.string())}
    fixed = [
        i
        for i, s in enumerate(specs)
        if not s.nullable or (s.arrow_type != s.decoded_type and s.arrow_type not in text_type)
    ]
    text = [i for i, s in enumerate(specs) if s.nullable and s.arrow_type in text_type]
    assert decoder._fixed == fixed and decoder._text == text
    per_column = sum(
        (1 + 8 * {codec.INT64: 8, codec.FLOAT: 4}.get(s.kind, 4) if s.shape == codec.SCALAR else 1 + 32 * s.shape)
        + (0 if s.arrow_type == s.decoded_type else max(_bit_width(s.arrow_type), 32))
        for s in specs
    )
    assert fixed_row_bits(specs) == per_column


def _bit_width(t: pa.DataType) -> int:
    try:
        return t.bit_width
    except ValueError:
        return 32


def test_a_decoded_batch_reports_the_bytes_of_its_buffers():
    """A piece's output budget counts what the column builders held (pyarrow's nbytes
    walks every column's buffers: seconds for a million columns): the exported bytes and
    the validity bitmaps the export leaves out (no nulls)."""
    import io

    import numpy as np

    from tfsql._proto import Example
    from tfsql.framing import FrameReader

    payloads = []
    for r in range(5):
        ex = Example()
        ex.features.feature["i"].int64_list.value.extend(range(r))
        ex.features.feature["s"].bytes_list.value.append(b"x" * r)
        ex.features.feature["f"].float_list.value.append(r / 2)
        payloads.append(ex.SerializeToString())
    data = b"".join(payloads)
    ends = np.cumsum([0] + [len(p) for p in payloads])
    framed, _ = codec.encode_frames(data, ends)
    block = next(FrameReader(io.BytesIO(bytes(framed)), path="x").blocks())
    schema = pa.schema({"i": pa.list_(pa.int64()), "s": pa.binary(), "f": pa.float32()})
    decoder = BlockDecoder(column_specs(schema, codec.EXAMPLE), codec.EXAMPLE)
    batch = decoder.decode(block)
    assert 0 < batch.nbytes <= decoder.output_bytes(batch) <= batch.nbytes + 8 * batch.num_columns
    other = pa.record_batch({"a": [1, 2, 3]})  # not one it made: its buffers' sizes
    assert decoder.output_bytes(other) == other.get_total_buffer_size() == 24


def test_the_polars_types_of_a_scan_come_from_the_specs_as_from_the_schema(tmp_path):
    """The Polars scan's declared types are found through the specs' shared type objects
    (data columns) and the Arrow types (hive and file path columns): the types the
    schema gives column by column."""
    import polars as pl

    import tfsql
    from tfsql.polars.source import _frame_types
    from tfsql.polars.types import polars_schema

    table = pa.table({"a": [1, 2], "s": ["x", "y"], "l": [[1.5], []], "part": ["p", "q"], "n": [3, 4]})
    tfsql.write_tfrecord(table, str(tmp_path / "out"), partition_by=["part"])
    ds = tfsql.dataset(str(tmp_path / "out"), include_file_paths="file", schema={"n": pa.int32(), "s": pa.string()})
    assert (
        _frame_types(ds)
        == polars_schema(ds.schema, {})
        == {
            "n": pl.Int32,
            "s": pl.String,
            "part": pl.String,
            "file": pl.String,
        }
    )
    wide = tfsql.dataset(str(tmp_path / "out"))
    assert list(_frame_types(wide).items()) == list(polars_schema(wide.schema, {}).items())
