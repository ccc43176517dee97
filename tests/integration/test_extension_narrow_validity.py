"""A damaged record is refused the same whatever a query projects.

``count(*)``, ``sum(id)`` over one column and ``SELECT *`` in the DuckDB extension, and
the Python reader asked for one column, all name the same file, record index and byte
offset for: a feature no projected column reads that protobuf would refuse (a bytes
value overrunning its list, a packed varint left unfinished, a float list of 6 bytes),
and a data CRC that fails at each place of the core's batches of three (scan_core
checks short records' data CRCs three at a time). The queries run on one thread and on
two, with each build of the extension, and with byte ranges cut inside the file.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

import tfsql
from tfsql.duckdb.extension import extension_available
from tfrecord_files import example, frame

pytestmark = [
    pytest.mark.skipif(not extension_available(), reason="this tfsql was built without its DuckDB extension"),
    pytest.mark.usefixtures("duckdb_api"),  # once with each build: v1, and V2 on DuckDB 2
]

SCHEMA = "schema := {'id': 'BIGINT', 's': 'VARCHAR', 'f': 'FLOAT[]', 'k': 'BIGINT[]'}"
QUERIES = {
    "count": "SELECT count(*) FROM tfrecord_scan('{path}', " + SCHEMA + ")",
    "one column": "SELECT sum(id) FROM tfrecord_scan('{path}', " + SCHEMA + ")",
    "every column": "SELECT * FROM tfrecord_scan('{path}', " + SCHEMA + ")",
    "a schema of one column": "SELECT sum(id) FROM tfrecord_scan('{path}', schema := {'id': 'BIGINT'})",
}
RECORDS = 40


def _record(i: int) -> bytes:
    return example({"id": i, "s": [b"w"], "f": [0.5, 1.5], "k": [i, 300]})


def _malformed(record: bytes, how: str) -> bytes:
    """`record` with one of its unprojected features made malformed, its size kept."""
    bad = bytearray(record)
    if how == "bytes value overruns":
        at = bad.index(b"\x0a\x01w")  # the BytesList's value: length 1 -> 5
        bad[at + 1] = 0x05
    elif how == "unfinished varint":
        at = bad.index(b"\xac\x02")  # 300's varint, the last of k's packed values
        bad[at + 1] = 0x82
    elif how == "float list of 6 bytes":
        at = bad.index(b"\x0a\x08\x00\x00\x00\x3f")  # f's packed floats: 8 bytes -> 6,
        bad[at + 1] = 0x06  # then an unknown varint field (2 bytes): the size is kept
        bad[at + 8 : at + 10] = b"\x10\x00"
    return bytes(bad)


def _write(tmp_path, damaged: int, how: str) -> tuple[str, int]:
    """The file, and the byte offset of record `damaged`'s header."""
    records = [_record(i) for i in range(RECORDS)]
    if how != "data crc":
        records[damaged] = _malformed(records[damaged], how)
    frames = [frame(r) for r in records]
    if how == "data crc":
        bad = bytearray(frames[damaged])
        bad[-1] ^= 0x20  # the footer
        frames[damaged] = bytes(bad)
    path = tmp_path / "damaged.tfrecord"
    path.write_bytes(b"".join(frames))
    return str(path), sum(len(f) for f in frames[:damaged])


def _extension_error(monkeypatch, sql: str, threads: int, range_bytes: str) -> str:
    monkeypatch.setenv("TFSQL_DUCKDB_RANGE_BYTES", range_bytes)
    con = tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))
    con.execute(f"SET threads = {threads}")
    with pytest.raises(duckdb.Error) as info:
        con.sql(sql).fetchall()
    return str(info.value)


def test_the_malformed_layouts_are_refused_by_protobuf():
    """The damage here is what the tests mean it to be: protobuf refuses each record."""
    from google.protobuf.message import DecodeError

    from tfsql._proto import Example

    for how in ("bytes value overruns", "unfinished varint", "float list of 6 bytes"):
        with pytest.raises(DecodeError):
            Example.FromString(_malformed(_record(7), how))
        assert len(_malformed(_record(7), how)) == len(_record(7))


@pytest.mark.parametrize("how", ["bytes value overruns", "unfinished varint", "float list of 6 bytes", "data crc"])
@pytest.mark.parametrize("damaged", [0, 1, 2, 3, 4, 13, RECORDS - 1])
def test_every_projection_names_the_same_record(tmp_path, monkeypatch, how, damaged):
    path, offset = _write(tmp_path, damaged, how)
    where = f"in {path}, record {damaged} at byte {offset}"
    for name, template in QUERIES.items():
        for threads, range_bytes in ((1, str(1 << 40)), (2, "500")):
            message = _extension_error(monkeypatch, template.replace("{path}", path), threads, range_bytes)
            assert where in message, (name, threads, message)
    with pytest.raises(tfsql.CorruptRecordError) as info:
        tfsql.read_tfrecord(path, columns=["id"], schema=pa.schema([("id", pa.int64())]))
    assert (info.value.path, info.value.record_index, info.value.offset) == (path, damaged, offset)
    assert info.value.reason == ("data_crc" if how == "data crc" else "malformed")
