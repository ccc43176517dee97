"""Parallel compression of a write's files: same bytes out, errors surface, memory bounded."""

from __future__ import annotations

import gzip
import threading
import zlib

import pyarrow as pa
import pytest

import tfsql
from tfsql.compressing import CompressionPool


def test_chunks_of_several_streams_are_compressed_in_order():
    pool = CompressionPool(threads=3, max_pending_bytes=50)
    outs = [[] for _ in range(4)]
    streams = [pool.stream(zlib.compressobj(6, zlib.DEFLATED, 31), out.append) for out in outs]
    expected = [b"" for _ in streams]
    for i in range(300):
        for k, stream in enumerate(streams):
            chunk = b"%d-%d," % (k, i) * (i % 5)
            expected[k] += chunk
            stream.write(memoryview(chunk))
    for stream in streams:
        stream.close()
    pool.shutdown()
    assert [gzip.decompress(b"".join(out)) for out in outs] == expected


def test_a_worker_error_is_raised_in_the_writer():
    pool = CompressionPool(threads=2)
    failed = threading.Event()

    def put(data):
        failed.set()
        raise OSError("disk full")

    stream = pool.stream(zlib.compressobj(0), put)
    stream.write(memoryview(b"x" * 100_000))
    failed.wait(5)
    with pytest.raises(OSError, match="disk full"):
        stream.close()
    pool.shutdown()


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("compression", ["gzip", "zlib"])
def test_written_shards_are_identical_whatever_the_threads(tmp_path, threads, compression):
    table = pa.table({"i": list(range(20_000)), "s": [f"v{i % 97}" for i in range(20_000)]})
    kwargs = dict(compression=compression, num_shards=3, shard_prefix="p")
    tfsql.write_tfrecord(table, tmp_path / "one", threads=1, **kwargs)
    tfsql.write_tfrecord(table, tmp_path / "many", threads=threads, **kwargs)
    names = sorted(p.name for p in (tmp_path / "one").iterdir() if p.name.startswith("p-"))
    assert names == sorted(p.name for p in (tmp_path / "many").iterdir() if p.name.startswith("p-"))
    assert len(names) == 3
    for name in names:
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "many" / name).read_bytes()
    assert tfsql.read_tfrecord(tmp_path / "many").sort_by("i") == table


def test_threads_must_be_positive(tmp_path):
    with pytest.raises(ValueError, match="threads must be a positive integer"):
        tfsql.write_tfrecord(pa.table({"x": [1]}), tmp_path / "o", compression="gzip", threads=0)


def _batches(n_batches: int, rows: int) -> list[pa.RecordBatch]:
    return [
        pa.record_batch(
            {"i": list(range(b * rows, (b + 1) * rows)), "s": [f"v{i % 89}" * (i % 7) for i in range(rows)]}
        )
        for b in range(n_batches)
    ]


@pytest.mark.parametrize("threads", [2, 3])
@pytest.mark.parametrize("partition_by", [None, ["p"]])
def test_many_chunks_per_shard_give_the_same_bytes_whatever_the_threads(tmp_path, threads, partition_by):
    """Several input batches (several encode jobs per file, queued on the file's thread),
    with and without partitions: the files are byte for byte those of one thread."""
    batches = _batches(5, 3000)
    if partition_by:
        batches = [b.append_column("p", pa.array([i % 2 for i in range(b.num_rows)])) for b in batches]
    kwargs = dict(compression="gzip", num_shards=2, partition_by=partition_by, shard_prefix="x")
    tfsql.write_tfrecord(iter(batches), tmp_path / "one", threads=1, **kwargs)
    tfsql.write_tfrecord(iter(batches), tmp_path / "many", threads=threads, **kwargs)
    one = {p.relative_to(tmp_path / "one"): p.read_bytes() for p in (tmp_path / "one").rglob("x-*")}
    many = {p.relative_to(tmp_path / "many"): p.read_bytes() for p in (tmp_path / "many").rglob("x-*")}
    assert one == many and len(one) == (4 if partition_by else 2)


def test_shards_are_encoded_on_the_compression_threads(tmp_path, monkeypatch):
    """The writing thread only deals rows out: each shard's encoding runs on its file's
    compression thread (Amdahl: a serial encoder would cap the speed-up)."""
    from tfsql.encoding import RecordEncoder

    where: list[str] = []
    prepare = RecordEncoder.prepare

    def spying_prepare(self, *args, **kwargs):
        encode = prepare(self, *args, **kwargs)

        def run():
            where.append(threading.current_thread().name)
            return encode()

        return run

    monkeypatch.setattr(RecordEncoder, "prepare", spying_prepare)
    tfsql.write_tfrecord(iter(_batches(3, 2000)), tmp_path / "o", compression="zlib", num_shards=2, threads=2)
    assert len(where) == 6 and all(name.startswith("tfsql-compress") for name in where)
    where.clear()
    tfsql.write_tfrecord(iter(_batches(1, 2000)), tmp_path / "p", compression="zlib", num_shards=2, threads=1)
    assert where == [threading.main_thread().name] * 2


def test_a_bad_value_is_reported_at_its_row_whatever_the_threads(tmp_path):
    """Values are checked on the writing thread, in row order, before encoding is queued."""
    values = list(range(10_000))
    values[7777] = 2**64 - 1
    table = pa.table({"u": pa.array(values, pa.uint64())})
    messages = []
    for threads in (1, 2):
        with pytest.raises(Exception) as info:
            tfsql.write_tfrecord(table, tmp_path / f"t{threads}", compression="gzip", num_shards=3, threads=threads)
        messages.append(str(info.value))
    assert messages[0] == messages[1] and "7777" in messages[0]
