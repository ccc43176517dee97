"""``Decoder.builder()``: one batch decoded from several buffers, as a byte range's
reader feeds each small read while it is in cache (`BlockDecoder.decode_blocks`).

Fed in any split, the columns equal those ``Decoder.decode`` gives for all the records
at once, in both codecs; errors count records from the failing feed's first record.
"""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pytest

import tfsql
from tfrecord_files import example, framed_spans, sequence_example
from tfsql import _native, _reference
from tfsql.decoding import BlockDecoder
from tfsql.errors import SchemaError
from tfsql.schema import column_specs
from tfsql.splits import RangeReader

CODECS = pytest.mark.parametrize("codec", [_native, _reference], ids=["native", "reference"])


def _rows(n: int) -> list[bytes]:
    return [
        example({"x": i, "s": "v" * (i % 5), "f": [0.5 * i, 1.0], **({"l": list(range(i % 3 + 1))} if i % 4 else {})})
        for i in range(n)
    ]


def _plain(columns: list) -> list:
    return [
        tuple(bytes(part) if part is not None and not isinstance(part, int) else part for part in c) for c in columns
    ]


def _columns(codec) -> list:
    return [
        (b"x", codec.FEATURES, codec.INT64, codec.SCALAR),
        (b"s", codec.FEATURES, codec.BYTES, codec.SCALAR),
        (b"f", codec.FEATURES, codec.FLOAT, codec.LIST),
        (b"l", codec.FEATURES, codec.INT64, codec.LIST),
    ]


@CODECS
@pytest.mark.parametrize("cuts", [[], [1], [7, 8, 9], [3, 30, 31, 63], list(range(1, 64))])
def test_feeding_in_any_split_gives_the_columns_of_one_decode(codec, cuts):
    data, offsets, lengths = framed_spans(_rows(64))
    decoder = codec.Decoder(codec.EXAMPLE, _columns(codec))
    whole = _plain(decoder.decode(data, offsets, lengths, None, True))
    builder = decoder.builder(4, 100)
    bounds = [0, *cuts, 64]
    for a, b in zip(bounds, bounds[1:]):
        builder.feed(data, offsets[a:b], lengths[a:b], None, True)
    assert builder.rows == 64
    assert _plain(builder.finish()) == whole


@CODECS
def test_each_feed_may_come_from_another_buffer_that_is_then_overwritten(codec):
    """The native builder keeps no pointer into a fed buffer (feature-name hints, unknown
    names): one scratch buffer refilled for every feed decodes like separate buffers."""
    payloads = _rows(40)
    decoder = codec.Decoder(codec.EXAMPLE, _columns(codec)[:2])
    unknown: set = set()
    builder = decoder.builder()
    scratch = bytearray(1 << 16)
    for i in range(0, 40, 5):
        data, offsets, lengths = framed_spans(payloads[i : i + 5])
        scratch[: len(data)] = data
        builder.feed(scratch, offsets, lengths, unknown, True)
        scratch[:] = bytes(len(scratch))  # nothing may still point here
    data, offsets, lengths = framed_spans(payloads)
    assert _plain(builder.finish()) == _plain(decoder.decode(data, offsets, lengths))
    assert unknown == {(codec.FEATURES, b"f"), (codec.FEATURES, b"l")}


@CODECS
def test_an_error_counts_from_the_feed_and_ends_the_builder(codec):
    payloads = _rows(10)
    payloads[7] = example({"x": "text"})  # bytes where int64 is expected
    data, offsets, lengths = framed_spans(payloads)
    builder = codec.Decoder(codec.EXAMPLE, _columns(codec)).builder()
    builder.feed(data, offsets[:5], lengths[:5])
    with pytest.raises(codec.DecodeError) as info:
        builder.feed(data, offsets[5:], lengths[5:])
    assert (info.value.reason, info.value.record) == ("kind_mismatch", 2)
    with pytest.raises(ValueError, match="finished"):
        builder.finish()


@CODECS
def test_feature_lists_and_raw_records_build_across_feeds(codec):
    payloads = [sequence_example({"c": i}, {"steps": [[i], [i, i]]}) for i in range(9)]
    data, offsets, lengths = framed_spans(payloads)
    columns = [
        (b"c", codec.FEATURES, codec.INT64, codec.SCALAR),
        (b"steps", codec.FEATURE_LISTS, codec.INT64, codec.LIST_OF_LIST),
    ]
    for record_type, cols in ((codec.SEQUENCE_EXAMPLE, columns), (codec.RAW, [])):
        decoder = codec.Decoder(record_type, cols)
        builder = decoder.builder()
        for a in range(0, 9, 4):
            builder.feed(data, offsets[a : a + 4], lengths[a : a + 4])
        assert _plain(builder.finish()) == _plain(decoder.decode(data, offsets, lengths))


def test_builder_arguments_are_checked():
    decoder = _native.Decoder(_native.EXAMPLE, _columns(_native))
    with pytest.raises(ValueError, match="rows and payload must be >= 0"):
        decoder.builder(-1)
    with pytest.raises(TypeError, match="unknown must be a set or None"):
        decoder.builder().feed(b"", np.zeros(0, np.uint64), np.zeros(0, np.uint64), [])


def test_decode_blocks_cuts_batches_by_rows_and_names_the_record_of_an_error(tmp_path):
    rows = [{"x": i} for i in range(25)] + [{"x": "oops"}] + [{"x": 1}]
    path = tmp_path / "f.tfrecord"
    from tfrecord_files import write_examples

    write_examples(path, rows)
    specs = column_specs(pa.schema({"x": pa.int64()}), _native.EXAMPLE)
    decoder = BlockDecoder(specs, _native.EXAMPLE)
    size = path.stat().st_size
    with open(path, "rb") as raw:
        reader = RangeReader(raw, 0, size, size, path=str(path), chunk_bytes=64)
        batches = decoder.decode_blocks(reader.blocks(10, 1 << 20), 10, 1 << 20)
        assert [batch.num_rows for batch, _, _ in (next(batches), next(batches))] == [10, 10]
        with pytest.raises(SchemaError, match="record 25"):
            next(batches)


@pytest.mark.parametrize("split_bytes", [1000, 5000])
def test_a_split_scan_reads_small_chunks_into_full_batches(tmp_path, split_bytes):
    table = pa.table({"x": list(range(3000)), "s": [f"v{i}" for i in range(3000)]})
    tfsql.write_tfrecord(table, tmp_path / "out", num_shards=1)
    ds = tfsql.dataset(tmp_path / "out", split_bytes=split_bytes, threads=2, batch_bytes=1 << 20)
    got = ds.to_table()
    assert got.column("x").to_pylist() == list(range(3000))
    assert got.column("s").to_pylist() == [f"v{i}" for i in range(3000)]


@pytest.mark.timeout(30, method="thread")  # a worker thread spinning: end the run, with stacks
def test_a_record_too_big_for_the_rest_of_the_byte_budget_starts_the_next_batch(tmp_path):
    # Records of 300-byte values against 1,000 payload bytes per batch: the fourth
    # record of each batch does not fit the bytes left, so the batch ends before it
    # (a range's reader once looped forever on such a record, growing memory).
    table = pa.table({"s": [chr(97 + i % 26) * 300 for i in range(40)]})
    tfsql.write_tfrecord(table, tmp_path / "out", num_shards=1)
    ds = tfsql.dataset(tmp_path / "out", split_bytes=4096, batch_bytes=1000, threads=2)
    batches = list(ds.to_batches())
    assert max(b.num_rows for b in batches) == 3
    assert pa.Table.from_batches(batches).column("s").to_pylist() == table.column("s").to_pylist()


def test_reference_decode_is_one_feed():
    data, offsets, lengths = framed_spans(_rows(5))
    decoder = _reference.Decoder(_reference.EXAMPLE, _columns(_reference))
    assert _plain(decoder.decode(data, offsets, lengths)) == _plain(
        _native.Decoder(_native.EXAMPLE, _columns(_native)).decode(data, offsets, lengths)
    )
    assert isinstance(io.BytesIO(), io.BytesIO)
