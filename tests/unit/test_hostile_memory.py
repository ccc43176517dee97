"""Hostile files cannot make a read allocate what the file merely claims (issue 12).

Each case runs in a subprocess whose address space is capped with
``resource.setrlimit(RLIMIT_AS)``. The cap is not a flat 1 GiB: a Python process that has
imported pyarrow (and started decode threads) already maps about 1.9 GB of address space
(mostly reserved, not resident). So the subprocess first reads a tiny dataset through
every path the case uses (inference, scan with threads, count), measures its own
``VmSize``, and caps itself at that baseline plus ``MARGIN`` (512 MiB). The defects need
far more than the margin: the 2^40-length gzip made reads grow a buffer to the 4 GiB of
zeros behind the header (6.3 GB RSS), the 600 MB plain file made ``tfsql count`` buffer
all of it (1.34 GB peak), and the wide file asked for about 10 GB in one batch; fixed,
each needs a few MB. A ``MemoryError`` in the subprocess is reported as such and fails
the test.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import tfsql
from tfrecord_files import header as _header
from tfsql._codec import codec
from tfsql._proto import Example

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc are Linux")

REPO = Path(__file__).resolve().parents[2]
MARGIN = 512 << 20

_PRELUDE = textwrap.dedent(
    """
    import json, os, resource, sys, tempfile
    import pyarrow as pa
    import tfsql
    from tfsql.cli import main as cli_main

    def vm_size():
        for line in open("/proc/self/status"):
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024

    warm = tempfile.mkdtemp()
    tfsql.write_tfrecord(pa.table({"x": list(range(100))}), warm)
    tfsql.dataset(warm).to_table(); tfsql.dataset(warm).count_rows(); cli_main(["count", "-q", warm])
    cap = vm_size() + int(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))

    def attempt(name, fn):
        try:
            value = fn()
            return {"op": name, "ok": value}
        except MemoryError:
            return {"op": name, "error": "MemoryError"}
        except Exception as exc:
            return {"op": name, "error": type(exc).__name__, "message": str(exc),
                    "record_index": getattr(exc, "record_index", None), "offset": getattr(exc, "offset", None)}
    """
)


def _run_capped(body: str, *args: str) -> list[dict]:
    script = _PRELUDE + textwrap.dedent(body)
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run(
        [sys.executable, "-c", script, str(MARGIN), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


_READS = """
path = sys.argv[2]
schema = {"x": pa.int64()}
for name, fn in [
    ("infer", lambda: tfsql.dataset(path).schema.names),
    ("n_rows", lambda: tfsql.read_tfrecord(path, schema=schema, n_rows=3).num_rows),
    ("count_rows", lambda: tfsql.dataset(path, schema=schema).count_rows()),
    ("cli_count", lambda: cli_main(["count", "-q", path])),
    ("cli_verify", lambda: cli_main(["verify", "-q", path])),
]:
    print(json.dumps(attempt(name, fn)), flush=True)
"""


def _assert_clean_corruption(results: list[dict], *, needle: str) -> None:
    assert [r["op"] for r in results] == ["infer", "n_rows", "count_rows", "cli_count", "cli_verify"]
    for r in results:
        if r["op"].startswith("cli_"):
            assert r.get("ok") == 1, r  # exit status 1: a data problem
            continue
        assert r.get("error") == "CorruptRecordError", r
        assert (r["record_index"], r["offset"]) == (0, 0), r
        assert needle in r["message"], r


def test_gzip_header_claiming_2_pow_40_bytes(tmp_path):
    # A 4 MB file: a gzip member holding a header that claims 2^40 bytes, then 64
    # members of 64 MiB of zeros each (4 GiB inflated). Concatenated members are one
    # gzip stream, as TensorFlow reads them.
    zeros = gzip.compress(bytes(64 << 20), compresslevel=9)
    path = tmp_path / "lying.tfrecord.gz"
    with open(path, "wb") as f:
        f.write(gzip.compress(_header(1 << 40)))
        for _ in range(64):
            f.write(zeros)
    assert path.stat().st_size < 8 << 20
    _assert_clean_corruption(_run_capped(_READS, str(path)), needle="exceeds max_record_bytes=2147483648")


@pytest.mark.parametrize(
    "claimed, needle",
    [(1 << 40, "exceeds max_record_bytes"), (1 << 30, "claims 1073741824 bytes but the file ends 629145600 bytes")],
    ids=["2^40", "1GiB"],
)
def test_plain_600mb_file_with_a_lying_header(tmp_path, claimed, needle):
    # Sparse: the header, then 600 MB of zeros that take no disk.
    path = tmp_path / "lying.tfrecord"
    with open(path, "wb") as f:
        f.write(_header(claimed))
        f.truncate(600 << 20)
    _assert_clean_corruption(_run_capped(_READS, str(path)), needle=needle)


def test_max_record_bytes_is_settable(tmp_path):
    import pyarrow as pa

    import tfsql
    from tfsql.errors import CorruptRecordError

    out = tmp_path / "d"
    tfsql.write_tfrecord(pa.table({"s": ["a" * 100, "b"]}), out)
    assert tfsql.read_tfrecord(out, max_record_bytes=1000).column("s").to_pylist() == ["a" * 100, "b"]
    with pytest.raises(CorruptRecordError, match=r"max_record_bytes=50 in .*, record 0 at byte 0") as info:
        tfsql.read_tfrecord(out, schema={"s": pa.string()}, max_record_bytes=50)
    assert (info.value.record_index, info.value.offset) == (0, 0)
    with pytest.raises(CorruptRecordError, match="max_record_bytes=50"):
        tfsql.dataset(out, schema={"s": pa.string()}, max_record_bytes=50).count_rows()
    # A record after good ones, in the same buffer: the good ones are read, then the error.
    tfsql.write_tfrecord(pa.table({"s": ["b", "a" * 100]}), out, mode="overwrite")
    batches = tfsql.dataset(out, schema={"s": pa.string()}, max_record_bytes=50, on_corrupt="skip").to_batches()
    with pytest.warns(UserWarning, match="record 1 at byte 30.*skipped the rest of the file"):
        assert [b.column("s").to_pylist() for b in batches] == [["b"]]


def test_record_larger_than_a_chunk_is_assembled_from_a_gzip_stream(tmp_path):
    # A 20 MiB record (more than a 16 MiB read chunk) in a compressed stream: the buffer
    # grows as the bytes arrive and the record reads back exactly.
    import pyarrow as pa

    import tfsql

    value = np.random.default_rng(0).integers(0, 256, 20 << 20, dtype=np.uint8).tobytes()
    out = tmp_path / "big"
    tfsql.write_tfrecord(pa.table({"b": pa.array([value, b"x"], pa.binary())}), out, compression="gzip")
    assert tfsql.read_tfrecord(out).column("b").to_pylist() == [value, b"x"]


_WIDE = """
path = sys.argv[2]
split = int(sys.argv[3]) if len(sys.argv) > 3 else None
ds = tfsql.dataset(path, threads=2, split_bytes=split)
print(json.dumps(attempt("schema", lambda: [len(ds.schema), str(ds.schema.field("f0").type)])), flush=True)

def first_batches():
    stream = ds.to_batches()
    out = []
    for batch in stream:
        out.append([batch.num_rows, batch.nbytes, batch.column("f7")[0].as_py(), batch.column("f7").null_count])
        if len(out) == 2:
            break
    stream.close()
    return out

print(json.dumps(attempt("batches", first_batches)), flush=True)
print(json.dumps(attempt("count", lambda: ds.count_rows())), flush=True)
print(json.dumps(attempt("rows", lambda: sum(b.num_rows for b in ds.to_batches(columns=["f7"])))), flush=True)
"""


@pytest.mark.parametrize("split_bytes", [None, 512 << 10], ids=["whole", "ranges"])
def test_wide_record_then_many_empty_records_keeps_batches_bounded(tmp_path, split_bytes):
    # One record with 20,000 int64 features, then 65,535 empty records: 1.4 MB on disk,
    # but a batch of 65,536 rows x 20,000 nullable int64 columns would be about 10 GB.
    k = 20_000
    example = Example()
    for j in range(k):
        example.features.feature[f"f{j}"].int64_list.value.append(j)
    first = example.SerializeToString()
    ends = np.array([0] + [len(first)] * 65_536, dtype=np.int64)
    framed, _ = codec.encode_frames(first, ends)
    path = tmp_path / "wide.tfrecord"
    path.write_bytes(bytes(framed))
    # In byte ranges too: a range's decoded batches stop at twice batch_bytes and the
    # rest of the range is read as it is consumed (it once held all ~600 batches).
    extra = [] if split_bytes is None else [str(split_bytes)]
    results = {r["op"]: r for r in _run_capped(_WIDE, str(path), *extra)}
    assert results["schema"].get("ok") == [k, "int64"], results["schema"]
    batches = results["batches"].get("ok")
    assert batches is not None, results["batches"]
    budget = 16 << 20
    rows_per_batch = budget * 8 // (k * 65)  # 65 bits a row per nullable int64 column
    assert [b[0] for b in batches] == [rows_per_batch] * 2
    assert all(b[1] <= budget for b in batches), batches
    assert [b[2:] for b in batches] == [[7, rows_per_batch - 1], [None, rows_per_batch]]
    assert results["count"].get("ok") == 65_536
    assert results["rows"].get("ok") == 65_536


_MANY_LISTS = """
path = sys.argv[2]
print(json.dumps(attempt("rows", lambda: [tfsql.read_tfrecord(path, threads=t).num_rows for t in (1, 2)])), flush=True)
"""


def test_many_list_columns_share_one_reservation(tmp_path):
    # 300 float-list columns over 14 MB of records: each list column reserving the
    # block's whole payload for its values (as a column of two does) would ask for
    # 300 x 14 MB of address space; they share twice the payload instead.
    table = pa.table({f"l{j}": pa.array([[1.0, 2.0, 3.0]] * 2_000, pa.list_(pa.float32())) for j in range(300)})
    tfsql.write_tfrecord(table, tmp_path / "lists", num_shards=1)
    results = {r["op"]: r for r in _run_capped(_MANY_LISTS, str(tmp_path / "lists"))}
    assert results["rows"].get("ok") == [2_000, 2_000], results["rows"]
