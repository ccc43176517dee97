"""The DuckDB extension bounds its memory by the call, not by the file.

A 3 MB gzip file whose one record header claims 2^40 bytes, followed by 3 GB of zeros,
once took 4.1 GB in ``tfrecord_scan`` (the extension inflated the whole stream looking
for the record's end, whatever ``SET memory_limit`` said) and ignored interrupts for
about 20 s. The extension now reads compressed files in bounded chunks, refuses a
record over ``max_record_bytes`` from its header alone (the Python reader's limit and
wording), and bounds each output chunk by ``batch_bytes``.

The scans run in a subprocess under an address-space cap (``RLIMIT_AS``) and a timeout.
"""

from __future__ import annotations

import gzip
import re
import struct
import subprocess
import sys

import duckdb
import pytest

import tfsql
from tfsql import _codec
from tfsql.duckdb.extension import extension_available
from tfsql.options import DEFAULT_MAX_RECORD_BYTES

pytestmark = pytest.mark.skipif(not extension_available(), reason="this tfsql was built without its DuckDB extension")

codec = _codec.codec
TIMEOUT = 60
CAP_BYTES = 2 << 30  # the interpreter and DuckDB take about 1.1 GB of address space idle

CAPPED_RUNNER = r"""
import resource, sys, duckdb, tfsql
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]), int(sys.argv[1])))
con = tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))
con.execute("SET memory_limit = '200MB'")
try:
    print("ROWS", con.sql(sys.argv[2]).fetchall())
except duckdb.Error as exc:
    print("ERROR", exc)
"""


def header(length: int) -> bytes:
    head = struct.pack("<Q", length)
    return head + struct.pack("<I", codec.masked_crc32c(head))


def frame(payload: bytes) -> bytes:
    return header(len(payload)) + payload + struct.pack("<I", codec.masked_crc32c(payload))


def capped_query(sql: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", CAPPED_RUNNER, str(CAP_BYTES), sql], capture_output=True, text=True, timeout=TIMEOUT
    )
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stdout}{proc.stderr}"
    return proc.stdout


@pytest.fixture(scope="module")
def bomb(tmp_path_factory):
    """A gzip file of a 2^40-byte record header then 3 GB of zeros (about 3 MB): gzip
    members of zeros, concatenated, inflate to one stream."""
    path = tmp_path_factory.mktemp("bomb") / "bomb.tfrecord.gz"
    zeros = gzip.compress(bytes(30 << 20), compresslevel=9)
    with open(path, "wb") as out:
        out.write(gzip.compress(header(1 << 40)))
        for _ in range(100):
            out.write(zeros)
    return str(path)


def test_a_gzip_bomb_is_refused_from_its_header_under_a_memory_cap(bomb):
    out = capped_query(f"SELECT count(*) FROM tfrecord_scan('{bomb}', record_type := 'bytes')")
    assert out.startswith("ERROR"), out
    assert (
        f"record length {1 << 40} exceeds max_record_bytes={DEFAULT_MAX_RECORD_BYTES} in {bomb}, record 0 at byte 0"
        in out
    )


def test_a_gzip_bomb_is_refused_by_inference_under_a_memory_cap(bomb):
    out = capped_query(f"SELECT * FROM tfrecord_scan('{bomb}')")
    assert out.startswith("ERROR") and "exceeds max_record_bytes" in out, out


def test_max_record_bytes_is_a_named_parameter_with_the_python_wording(tmp_path):
    path = tmp_path / "r.tfrecord"
    path.write_bytes(frame(b"a" * 10) + frame(b"b" * 100) + frame(b"c" * 10))
    sql = f"SELECT octet_length(record) FROM tfrecord_scan('{path}', record_type := 'bytes', max_record_bytes := {{}})"
    con = tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))
    assert con.sql(sql.format(100)).fetchall() == [(10,), (100,), (10,)]
    with pytest.raises(tfsql.CorruptRecordError) as python:
        tfsql.read_tfrecord(str(path), record_type="bytes", max_record_bytes=99)
    wording = str(python.value).split(" (pass on_corrupt")[0]
    assert wording.startswith(f"record length 100 exceeds max_record_bytes=99 in {path}, record 1 at byte 26")
    with pytest.raises(duckdb.Error, match=re.escape(wording)):
        con.sql(sql.format(99)).fetchall()


def test_batch_bytes_is_a_named_parameter(tmp_path):
    path = tmp_path / "r.tfrecord"
    path.write_bytes(b"".join(frame(bytes([i]) * 1000) for i in range(50)))
    con = tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))
    rows = con.sql(
        f"SELECT count(*), sum(octet_length(record)) FROM tfrecord_scan('{path}', record_type := 'bytes', batch_bytes := 4000)"
    ).fetchall()
    assert rows == [(50, 50_000)]
