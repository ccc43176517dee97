"""The DuckDB extension reads every file through the core's one record reader
(``tfsql/core/reader.c`` over the extension's ``pread``): its scans and its inference
sample alike. A gzip file of several members ending in zero padding, read across many
window refills, and damage met inside the inference sample give what the Python
reader gives.
"""

from __future__ import annotations

import gzip
import re
import warnings

import duckdb
import pytest

import tfsql
from tfsql.duckdb.extension import extension_available
from tfrecord_files import example, frame

pytestmark = pytest.mark.skipif(not extension_available(), reason="this tfsql was built without its DuckDB extension")

ROWS = 12_000  # about 600 KB of records: the 256 KiB window refills several times


def _examples() -> list[bytes]:
    return [example({"id": i, "name": f"row-{i:05d}-" + "x" * (i % 37), "v": [float(i), -1.5]}) for i in range(ROWS)]


def _connection() -> duckdb.DuckDBPyConnection:
    con = tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))
    con.execute("SET threads = 1")  # one file, one thread: the file's order
    return con


def _scan(path, options: str = "") -> list[tuple]:
    con = _connection()  # kept open while the query runs
    return con.sql(f"SELECT id, name, v FROM tfrecord_scan('{path}'{options})").fetchall()


def _python(path, **options) -> list[tuple]:
    table = tfsql.read_tfrecord(str(path), **options)
    return list(zip(table["id"].to_pylist(), table["name"].to_pylist(), table["v"].to_pylist()))


def test_gzip_members_and_zero_padding_read_across_refills(tmp_path):
    framed = [frame(record) for record in _examples()]
    cuts = [0, 1, 4_000, 9_999, ROWS]  # a member of one record, members of thousands
    members = [gzip.compress(b"".join(framed[a:b]), mtime=0) for a, b in zip(cuts, cuts[1:])]
    path = tmp_path / "members.tfrecord.gz"
    path.write_bytes(b"".join(members) + bytes(4096))
    rows = _scan(path)
    assert len(rows) == ROWS
    assert rows[0] == (0, "row-00000-", [0.0, -1.5])
    assert rows[-1][0] == ROWS - 1
    assert rows == _python(path)


def test_the_inference_sample_steps_over_a_data_crc_failure_under_skip(tmp_path):
    framed = [frame(record) for record in _examples()]
    bad = 3  # inside the inference sample
    damaged = bytearray(framed[bad])
    damaged[14] ^= 0xFF  # a payload byte: the data CRC fails, the length CRC holds
    framed[bad] = bytes(damaged)
    path = tmp_path / "bad.tfrecord"
    path.write_bytes(b"".join(framed))
    rows = _scan(path, ", on_corrupt := 'skip'")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert rows == _python(path, on_corrupt="skip")
    assert [row[0] for row in rows] == [i for i in range(ROWS) if i != bad]
    offset = sum(len(f) for f in framed[:bad])
    with pytest.raises(duckdb.Error, match=re.escape(f"{path}, record {bad} at byte {offset}")):
        _scan(path)


def test_resync_lookahead_is_the_cores_one_value():
    from tfsql import _reference, splits
    from tfsql._codec import codec

    assert codec.RESYNC_LOOKAHEAD == splits.RESYNC_LOOKAHEAD == _reference.RESYNC_LOOKAHEAD == 256 << 10
