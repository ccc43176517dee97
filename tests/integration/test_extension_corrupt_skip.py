"""``on_corrupt := 'skip'`` in the DuckDB extension: where framing is lost the scan
resynchronises at the next offset where both CRCs check, so the rows do not depend on
threads, compression or the front end.

The extension once ended a file at a bad length CRC (keeping 10 of 100 records here)
while the Python reader's byte ranges found the next record boundary and read on.
"""

from __future__ import annotations

import gzip
import struct

import duckdb
import pytest

import tfsql
from tfsql import _codec
from tfsql.duckdb.extension import extension_available

pytestmark = pytest.mark.skipif(not extension_available(), reason="this tfsql was built without its DuckDB extension")

codec = _codec.codec
RECORDS, SIZE, DAMAGED = 100, 1000, 10


def frame(payload: bytes) -> bytes:
    head = struct.pack("<Q", len(payload))
    return (
        head + struct.pack("<I", codec.masked_crc32c(head)) + payload + struct.pack("<I", codec.masked_crc32c(payload))
    )


def payload(i: int) -> bytes:
    return i.to_bytes(4, "little") * (SIZE // 4)


@pytest.fixture()
def lying_length(tmp_path):
    """100 raw records of 1,000 bytes; record 10's length says 5,000 (its CRC is stale)."""
    data = bytearray(b"".join(frame(payload(i)) for i in range(RECORDS)))
    at = DAMAGED * (SIZE + 16)
    data[at : at + 8] = struct.pack("<Q", 5000)
    plain = tmp_path / "lying.tfrecord"
    plain.write_bytes(bytes(data))
    packed = tmp_path / "lying.tfrecord.gz"
    packed.write_bytes(gzip.compress(bytes(data)))
    return plain, packed


def connection(threads: int) -> duckdb.DuckDBPyConnection:
    con = tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))
    con.execute(f"SET threads = {threads}")
    return con


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("compressed", [False, True])
def test_a_lying_length_is_stepped_over_by_resynchronising(lying_length, threads, compressed):
    path = lying_length[compressed]
    con = connection(threads)  # kept: DuckDB 1.4 closes a connection nothing holds
    rows = con.sql(
        f"SELECT record FROM tfrecord_scan('{path}', record_type := 'bytes', on_corrupt := 'skip')"
    ).fetchall()
    expected = [payload(i) for i in range(RECORDS) if i != DAMAGED]
    assert [bytes(r[0]) for r in rows] == expected


def test_plain_and_compressed_copies_give_the_same_rows_on_two_threads(lying_length):
    plain, packed = lying_length
    sql = (
        f"SELECT filename LIKE '%.gz', count(*), sum(hash(record)) FROM tfrecord_scan(['{plain}', '{packed}'], "
        "record_type := 'bytes', on_corrupt := 'skip', filename := true) GROUP BY ALL ORDER BY ALL"
    )
    con = connection(2)
    (plain_rows, packed_rows) = con.sql(sql).fetchall()
    assert plain_rows[1:] == packed_rows[1:] and plain_rows[1] == RECORDS - 1


def test_without_skip_the_lying_length_is_an_error_naming_record_and_byte(lying_length):
    plain, _ = lying_length
    con = connection(1)
    with pytest.raises(
        duckdb.Error, match=rf"length CRC mismatch in {plain}, record {DAMAGED} at byte {DAMAGED * (SIZE + 16)}"
    ):
        con.sql(f"SELECT count(*) FROM tfrecord_scan('{plain}', record_type := 'bytes')").fetchall()
