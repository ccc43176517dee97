"""Damaged files through the whole reader: only tfsql errors, with the right record and offset.

Thousands of seeded mutations (bit flips, truncations, insertions, splices of two files)
of plain, gzip and zlib TFRecord files go through the full framing + decoding path;
each must either read or raise :class:`tfsql.TFSQLError` — never another exception, a
crash or a hang.
"""

from __future__ import annotations

import gzip
import io
import random
import warnings
import zlib

import pyarrow as pa
import pytest

import tfsql
from tfrecord_files import NO_KIND, example, frame, sequence_example, write_records
from tfsql.decoding import BlockDecoder
from tfsql.errors import CorruptRecordError, TFSQLError
from tfsql.framing import FrameReader
from tfsql.options import record_code
from tfsql.schema import column_specs

SCHEMA = pa.schema({"id": pa.int64(), "name": pa.binary(), "w": pa.list_(pa.float32()), "tags": pa.list_(pa.int64())})
SEQ_SCHEMA = pa.schema({"id": pa.int64(), "tok": pa.list_(pa.list_(pa.int64()))})


def _examples(rng: random.Random, n: int) -> list[bytes]:
    return [
        example(
            {
                "id": i,
                "name": bytes(rng.randrange(256) for _ in range(rng.randrange(8))) or NO_KIND,
                "w": [rng.random() for _ in range(rng.randrange(4))],
                "tags": [rng.randrange(-(2**40), 2**40) for _ in range(1 + rng.randrange(3))],
            }
        )
        for i in range(n)
    ]


def _mutate(rng: random.Random, data: bytes, other: bytes) -> bytes:
    buf = bytearray(data)
    op = rng.randrange(5)
    if op == 0 and buf:  # flip bits
        for _ in range(1 + rng.randrange(4)):
            buf[rng.randrange(len(buf))] ^= 1 << rng.randrange(8)
    elif op == 1:  # truncate
        del buf[rng.randrange(len(buf) + 1) :]
    elif op == 2:  # insert junk
        at = rng.randrange(len(buf) + 1)
        buf[at:at] = bytes(rng.randrange(256) for _ in range(1 + rng.randrange(16)))
    elif op == 3:  # splice another file in
        at = rng.randrange(len(buf) + 1)
        cut = rng.randrange(len(other) + 1)
        buf[at:] = other[cut:]
    else:  # overwrite a length field with a large value
        if len(buf) >= 8:
            at = rng.randrange(len(buf) - 7)
            buf[at : at + 8] = rng.getrandbits(64).to_bytes(8, "little")
    return bytes(buf)


def _read(data: bytes, schema: pa.Schema, record_type: str, compression, verify: bool = True) -> int:
    rtype = record_code(record_type)
    decoder = BlockDecoder(column_specs(schema, rtype), rtype)
    reader = FrameReader(
        io.BytesIO(data), path="mutant.tfrecord", compression=compression, chunk_bytes=257, verify=verify
    )
    rows = 0
    for block in reader.blocks(max_records=7):
        rows += decoder.decode(block).num_rows
    return rows


@pytest.mark.timeout(300)
@pytest.mark.parametrize("verify", [True, False], ids=["crc", "no-crc"])
@pytest.mark.parametrize("compression", [None, "gzip", "zlib"])
def test_mutated_files_raise_only_tfsql_errors(compression, verify):
    rng = random.Random(20261122)
    clean = b"".join(frame(p) for p in _examples(rng, 12))
    other = b"".join(frame(p) for p in _examples(rng, 5))
    pack = {None: lambda b: b, "gzip": gzip.compress, "zlib": zlib.compress}[compression]
    packed_clean, packed_other = pack(clean), pack(other)
    outcomes = {"read": 0, "error": 0}
    for _ in range(1500):
        mutant = _mutate(rng, packed_clean, packed_other)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _read(mutant, SCHEMA, "example", "infer", verify)
            outcomes["read"] += 1
        except TFSQLError:
            outcomes["error"] += 1
    # Both outcomes occur: damage is caught, and undamaged or harmlessly damaged files read.
    assert outcomes["error"] > 300 and outcomes["read"] > 0, outcomes


@pytest.mark.timeout(300)
def test_mutated_sequence_examples_raise_only_tfsql_errors():
    rng = random.Random(7)
    payloads = [
        sequence_example({"id": i}, {"tok": [[j] * rng.randrange(1, 3) for j in range(rng.randrange(4))]})
        for i in range(10)
    ]
    clean = b"".join(frame(p) for p in payloads)
    assert _read(clean, SEQ_SCHEMA, "sequence_example", None) == 10
    errors = 0
    for i in range(1500):
        try:
            _read(_mutate(rng, clean, clean), SEQ_SCHEMA, "sequence_example", None, verify=i % 2 == 0)
        except TFSQLError:
            errors += 1
    assert 300 < errors < 1500


def test_truncation_at_every_byte_names_the_right_record(tmp_path):
    payloads = [example({"id": i, "name": b"x" * i}) for i in range(6)]
    frames = [frame(p) for p in payloads]
    data = b"".join(frames)
    starts = [sum(len(f) for f in frames[:i]) for i in range(len(frames) + 1)]
    for cut in range(len(data)):
        record = max(i for i in range(len(frames)) if starts[i] <= cut)
        if starts[record] == cut:
            assert _read(data[:cut], pa.schema({"id": pa.int64()}), "example", None) == record
            continue
        with pytest.raises(CorruptRecordError) as info:
            _read(data[:cut], pa.schema({"id": pa.int64()}), "example", None)
        assert (info.value.record_index, info.value.offset) == (record, starts[record]), cut


def test_non_tfrecord_files_through_read_tfrecord(tmp_path):
    (tmp_path / "notes.txt").write_text("id,name\n1,a\n")
    with pytest.raises(
        CorruptRecordError, match=r"notes.txt, record 0 at byte 0.*its bytes are text \(CSV or similar\), not TFRecord"
    ) as info:
        tfsql.read_tfrecord(tmp_path / "notes.txt")
    assert (info.value.record_index, info.value.offset) == (0, 0)
    (tmp_path / "data.parquet").write_bytes(b"PAR1" + b"\x00" * 40 + b"PAR1")
    with pytest.raises(CorruptRecordError, match="record 0 at byte 0"):
        tfsql.read_tfrecord(tmp_path / "data.parquet")


def test_corrupt_record_inside_a_directory_names_the_file(tmp_path):
    write_records(tmp_path / "a.tfrecord", [example({"id": 1})])
    bad = write_records(tmp_path / "b.tfrecord", [example({"id": 2}), example({"id": 3})])
    data = bytearray(bad.read_bytes())
    data[-1] ^= 0x55
    bad.write_bytes(bytes(data))
    second = len(frame(example({"id": 2})))
    with pytest.raises(CorruptRecordError, match=rf"b.tfrecord, record 1 at byte {second}") as info:
        tfsql.read_tfrecord(tmp_path, schema={"id": pa.int64()})
    assert info.value.path.endswith("b.tfrecord")
