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
