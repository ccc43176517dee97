"""The DuckDB extension reads a large uncompressed file as byte ranges on several
threads (tfsql/duckdb_ext/ranges.c): the rows, their order on one thread, the damage
raised or skipped and the record numbers it names are those of a read of the whole file.

``TFSQL_DUCKDB_RANGE_BYTES`` makes the ranges tiny here, so that range starts fall inside
records, on damaged headers and inside a payload that holds framed records itself. Each
case is compared with the same scan of the whole file (ranges larger than the file),
on one thread and on two, with each build of the extension.
"""

from __future__ import annotations

import gzip
import struct

import duckdb
import pyarrow as pa
import pytest

import tfsql
from tfsql.duckdb.extension import extension_available
from tfsql.record_index import write_index
from tfrecord_files import example, frame, sequence_example

pytestmark = [
    pytest.mark.skipif(not extension_available(), reason="this tfsql was built without its DuckDB extension"),
    pytest.mark.usefixtures("duckdb_api"),  # once with each build: v1, and V2 on DuckDB 2
]

REPORTS = tuple(int(x) for x in duckdb.__version__.split(".")[:3]) >= (1, 5, 6)
WHOLE = str(1 << 40)  # a range larger than any file here: every file is one unit
RANGES = ["97", "1000", "4096"]


def _connect(threads: int) -> duckdb.DuckDBPyConnection:
    con = tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))
    con.execute(f"SET threads = {threads}")
    return con


def _scan(monkeypatch, range_bytes: str, threads: int, sql: str, *, rejects: bool = False):
    """The rows of `sql` (and then tfrecord_rejects()) with ranges of `range_bytes`, or the
    error's message."""
    monkeypatch.setenv("TFSQL_DUCKDB_RANGE_BYTES", range_bytes)
    con = _connect(threads)
    try:
        rows = con.sql(sql).fetchall()
    except duckdb.Error as error:
        return ("error", str(error))
    return (rows, con.sql("SELECT * FROM tfrecord_rejects()").fetchall()) if rejects else rows


def _same_everywhere(monkeypatch, sql: str, *, rejects: bool = False, ranges=RANGES):
    whole = _scan(monkeypatch, WHOLE, 1, sql, rejects=rejects)
    for range_bytes in ranges:
        for threads in (1, 2):
            assert _scan(monkeypatch, range_bytes, threads, sql, rejects=rejects) == whole, (range_bytes, threads)
    return whole


def _rows(n: int) -> list[dict]:
    return [{"id": i, "x": [float(i) / 7] * (i % 5), "s": [b"v" * (i % 300)], "k": [i * 3, -i]} for i in range(n)]


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    path = tmp_path_factory.mktemp("ranges") / "many.tfrecord"
    path.write_bytes(b"".join(frame(example(row)) for row in _rows(3000)))
    return path


def test_ranges_give_the_rows_of_the_whole_file_in_order(plain, monkeypatch):
    rows = _same_everywhere(monkeypatch, f"SELECT * FROM tfrecord_scan('{plain}', filename := true)")
    assert [r[0] for r in rows] == list(range(3000))


def test_aggregates_over_ranges_on_two_threads(plain, monkeypatch):
    sql = f"SELECT count(*), sum(id), sum(len(s)), sum(hash(x)), min(filename) FROM tfrecord_scan('{plain}', filename := true)"
    ((count, total, *_),) = _same_everywhere(monkeypatch, sql)
    assert (count, total) == (3000, sum(range(3000)))


def test_a_compressed_file_and_a_file_with_an_index_read_the_same(plain, tmp_path, monkeypatch):
    packed = tmp_path / "many.tfrecord.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    indexed = tmp_path / "indexed.tfrecord"
    indexed.write_bytes(plain.read_bytes())
    write_index(str(indexed))
    sql = f"SELECT id, x, s, k FROM tfrecord_scan(['{packed}', '{indexed}'])"
    rows = _same_everywhere(monkeypatch, sql)
    assert [r[0] for r in rows] == list(range(3000)) * 2


def test_sequence_examples_over_ranges(tmp_path, monkeypatch):
    path = tmp_path / "seq.tfrecord"
    path.write_bytes(
        b"".join(frame(sequence_example({"id": i}, {"tok": [[j, i] for j in range(i % 6)]})) for i in range(800))
    )
    rows = _same_everywhere(monkeypatch, f"SELECT * FROM tfrecord_scan('{path}', record_type := 'sequence_example')")
    assert len(rows) == 800


def test_hive_partitions_and_a_pushed_filter(tmp_path, monkeypatch):
    table = pa.table(
        {"id": list(range(4000)), "p": [i % 3 for i in range(4000)], "t": ["w" * (i % 50) for i in range(4000)]}
    )
    tfsql.write_tfrecord(table, str(tmp_path / "d"), partition_by="p")
    sql = f"SELECT p, count(*), sum(id), sum(len(t)) FROM tfrecord_scan('{tmp_path}/d/**') WHERE p = 1 GROUP BY p"
    assert _same_everywhere(monkeypatch, sql) == [
        (1, 1333, sum(range(1, 4000, 3)), sum(i % 50 for i in range(1, 4000, 3)))
    ]


# --------------------------------------------------------------------------------------
# Damage: skipped or raised as a read of the whole file does
# --------------------------------------------------------------------------------------


def _damaged(path, *, data_crc=(), length_crc=(), lying=(), truncate=0, n=60) -> list[int]:
    """``n`` records {"id": i, "pad": ...}: the data CRC of records ``data_crc``, the length
    CRC of ``length_crc`` broken, the length of ``lying`` raised (its CRC stale),
    ``truncate`` bytes cut from the end. The record offsets."""
    data, offsets = bytearray(), []
    for i in range(n):
        framed = bytearray(frame(example({"id": i, "pad": [b"x" * (40 + 13 * (i % 7))]})))
        if i in data_crc:
            framed[-1] ^= 0xFF
        if i in length_crc:
            framed[8] ^= 0xFF
        if i in lying:
            framed[0:8] = struct.pack("<Q", 5000)
        offsets.append(len(data))
        data += framed
    path.write_bytes(bytes(data[: len(data) - truncate]))
    return offsets


def _damage_ranges(offsets: list[int]) -> list[str]:
    """Range sizes that start ranges on, just before and just after damaged headers."""
    return ["61", "250", str(offsets[5]), str(offsets[5] + 1), str(offsets[20] - 1), str(offsets[31])]


@pytest.mark.skipif(not REPORTS, reason="DuckDB < 1.5.6 gives extensions no connection id")
def test_skipped_damage_and_its_reports_over_ranges(tmp_path, monkeypatch):
    path = tmp_path / "damaged.tfrecord"
    offsets = _damaged(path, data_crc=(3, 5500), length_crc=(5, 6), lying=(3000,), truncate=9, n=6000)
    sql = f"SELECT id FROM tfrecord_scan('{path}', on_corrupt := 'skip')"
    ranges = ["997", str(offsets[5]), str(offsets[5] + 1), str(offsets[3000] - 1), str(offsets[3000])]
    rows, rejects = _same_everywhere(monkeypatch, sql, rejects=True, ranges=ranges)
    # resynchronised at 7 and 3001 (the records after them frame well); the last cut short
    assert [r[0] for r in rows] == [i for i in range(5999) if i not in (3, 5, 6, 3000, 5500)]
    assert [(r[2], r[3]) for r in rejects] == [
        (offsets[3], offsets[4]),
        (offsets[5], offsets[7]),
        (offsets[3000], offsets[3001]),
        (offsets[5500], offsets[5501]),
        (offsets[5999], None),
    ]


@pytest.mark.parametrize("damage", [{"data_crc": (31,)}, {"length_crc": (20,)}, {"lying": (5,)}, {"truncate": 9}])
def test_raised_damage_names_the_record_a_whole_read_names(tmp_path, monkeypatch, damage):
    path = tmp_path / "damaged.tfrecord"
    offsets = _damaged(path, **damage)
    kind, message = _same_everywhere(
        monkeypatch,
        f"SELECT sum(id) FROM tfrecord_scan('{path}', schema := {{'id': 'BIGINT'}})",
        ranges=_damage_ranges(offsets),
    )
    assert kind == "error" and "record" in message


def test_a_record_protobuf_refuses_names_its_index(tmp_path, monkeypatch):
    path = tmp_path / "malformed.tfrecord"
    payloads = [example({"id": i, "pad": [b"y" * 30]}) for i in range(80)]
    payloads[47] = b"\xff\xff\xff"
    path.write_bytes(b"".join(frame(p) for p in payloads))
    kind, message = _same_everywhere(
        monkeypatch, f"SELECT sum(id) FROM tfrecord_scan('{path}', schema := {{'id': 'BIGINT'}})"
    )
    assert kind == "error" and "record 47" in message, message


def test_a_payload_holding_framed_records_is_not_a_range_start(tmp_path, monkeypatch):
    """A record whose bytes are a TFRecord stream longer than the resynchronisation
    lookahead: a range starting inside it must not take its inner records for the
    file's (a boundary search alone would)."""
    inner = b"".join(frame(b"inner-%06d" % i + b"z" * 500) for i in range(700))  # ~360 KB
    payloads = [b"a" * 100, inner, b"b" * 100, inner, b"c" * 100]
    path = tmp_path / "nested.tfrecord"
    path.write_bytes(b"".join(frame(p) for p in payloads))
    sql = f"SELECT hash(record), octet_length(record) FROM tfrecord_scan('{path}', record_type := 'bytes')"
    rows = _same_everywhere(monkeypatch, sql, ranges=["1000", "65536", "300000"])
    assert [r[1] for r in rows] == [len(p) for p in payloads]


@pytest.mark.parametrize("threads", [1, 2])
def test_a_table_made_from_ranges_keeps_the_file_order(plain, monkeypatch, threads):
    monkeypatch.setenv("TFSQL_DUCKDB_RANGE_BYTES", "1000")
    con = _connect(threads)
    con.execute(f"CREATE TABLE t AS SELECT id FROM tfrecord_scan('{plain}')")
    con.execute("CREATE TABLE u AS SELECT * FROM t LIMIT 0")
    con.execute(f"INSERT INTO u SELECT id FROM tfrecord_scan('{plain}')")
    expected = [(i,) for i in range(3000)]
    assert con.sql("SELECT id FROM t").fetchall() == con.sql("SELECT id FROM u").fetchall() == expected
