"""The DuckDB extension reads a file through a small window that a scan refills many
times (``READER_WINDOW_READ`` in ``tfsql/core/tfsql_core.h``, 256 KiB; ``reader_fill`` in
``tfsql/core/reader.c``): records that straddle a refill, records larger than the window and damage
far into the file read as they do in one piece.

The records are random bytes of mixed sizes (``record_type := 'bytes'``), every 40th
one larger than the window, so refills fall at every kind of position in a record.
"""

from __future__ import annotations

import duckdb
import numpy as np
import pytest
from tfrecord_files import write_records

import tfsql
from tfsql.duckdb.extension import extension_available

pytestmark = pytest.mark.skipif(not extension_available(), reason="this tfsql was built without its DuckDB extension")

RECORDS = 400
LARGE = 300_000  # bytes: more than the 256 KiB window


def _payloads() -> list[bytes]:
    rng = np.random.default_rng(7)
    sizes = [LARGE + i if i % 40 == 7 else int(rng.integers(0, 6_000)) for i in range(RECORDS)]
    return [rng.bytes(size) for size in sizes]


def _offsets(payloads: list[bytes]) -> list[int]:
    """Each record's byte offset in its framed file (12 header + payload + 4 CRC bytes)."""
    return np.concatenate([[0], np.cumsum([16 + len(p) for p in payloads])[:-1]]).tolist()


def _records(path, options: str = "") -> list[bytes]:
    con = tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))
    con.execute("SET threads = 1")  # one file, one thread: the file's order
    rows = con.sql(f"SELECT record FROM tfrecord_scan('{path}', record_type := 'bytes'{options})").fetchall()
    return [bytes(row[0]) for row in rows]


@pytest.mark.parametrize("compression", [None, "gzip"])
def test_records_across_many_refills_read_back_exactly(tmp_path, compression):
    payloads = _payloads()
    path = write_records(tmp_path / "mixed.tfrecord", payloads, compression)
    assert path.stat().st_size > 10 * (256 << 10) or compression
    assert _records(path) == payloads


def test_damage_far_into_the_file_is_found_across_refills(tmp_path):
    payloads = _payloads()
    offsets = _offsets(payloads)
    data = bytearray((write_records(tmp_path / "x.tfrecord", payloads)).read_bytes())
    late = 350  # several MiB in
    data[offsets[late] + 12] ^= 0xFF  # its payload: the data CRC fails
    bad = tmp_path / "bad_data.tfrecord"
    bad.write_bytes(bytes(data))
    with pytest.raises(
        duckdb.Error, match=f"data CRC mismatch in .*bad_data.tfrecord, record {late} at byte {offsets[late]}"
    ):
        _records(bad)
    assert _records(bad, ", on_corrupt := 'skip'") == payloads[:late] + payloads[late + 1 :]
    data[offsets[late] + 12] ^= 0xFF
    lost = [47, 48, 201]  # a large record, the one after it, and a small one
    for i in lost:
        data[offsets[i] + 8] ^= 0xFF  # the length CRC: framing is lost, the scan resynchronises
    lost_framing = tmp_path / "bad_length.tfrecord"
    lost_framing.write_bytes(bytes(data))
    with pytest.raises(
        duckdb.Error, match=f"length CRC mismatch in .*bad_length.tfrecord, record 47 at byte {offsets[47]}"
    ):
        _records(lost_framing)
    assert _records(lost_framing, ", on_corrupt := 'skip'") == [p for i, p in enumerate(payloads) if i not in lost]
