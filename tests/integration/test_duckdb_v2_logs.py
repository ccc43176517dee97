"""The V2 extension's traces in DuckDB's log (duckdb_logs, type 'tfsql'): a SequenceExample
file read as Examples, and each stretch an on_corrupt := 'skip' scan steps over."""

from __future__ import annotations


import duckdb
import pyarrow as pa
import pytest

import tfsql
from tfsql.duckdb.extension import v2_extension_path
from tfrecord_files import example, frame

pytestmark = pytest.mark.skipif(
    v2_extension_path(duckdb.__version__) is None, reason="no V2 build of the extension for this DuckDB"
)


@pytest.fixture
def con(monkeypatch):
    monkeypatch.setenv("TFSQL_DUCKDB_API", "v2")
    connection = tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))
    connection.execute("SET enable_logging = true")
    yield connection
    connection.close()


def _logged(con) -> list:
    return [m for (m,) in con.sql("SELECT message FROM duckdb_logs WHERE type = 'tfsql' ORDER BY timestamp").fetchall()]


def test_sequence_example_read_as_example_is_logged(con, tmp_path):
    path = tmp_path / "s.tfrecord"
    tfsql.write_tfrecord(
        pa.table({"ctx": [1, 2], "seq": [[[1, 2], [3]], [[4]]]}), str(path), record_type="sequence_example"
    )
    assert con.sql(f"SELECT * FROM tfrecord_scan('{path}')").fetchall() == [(1,), (2,)]
    assert _logged(con) == [
        f"the records of {path} look like tf.train.SequenceExample (they have feature lists), but are "
        "read as Examples, which keeps only their context features; pass record_type := 'sequence_example'"
    ]
    rows = con.sql(f"SELECT * FROM tfrecord_scan('{path}', record_type := 'sequence_example')").fetchall()
    assert rows == [(1, [[1, 2], [3]]), (2, [[4]])]


def test_examples_leave_no_trace(con, tmp_path):
    path = tmp_path / "e.tfrecord"
    tfsql.write_tfrecord(pa.table({"x": [1, 2]}), str(path))
    assert con.sql(f"SELECT * FROM tfrecord_scan('{path}')").fetchall() == [(1,), (2,)]
    assert _logged(con) == []


def test_skipped_stretches_are_logged_and_listed_by_tfrecord_rejects(con, tmp_path):
    path = tmp_path / "bad.tfrecord"
    records = [bytearray(frame(example({"id": i}))) for i in range(6)]
    records[2][-1] ^= 0xFF  # record 2's data CRC
    offset = sum(len(r) for r in records[:2])
    path.write_bytes(b"".join(bytes(r) for r in records))
    rows = con.sql(f"SELECT id FROM tfrecord_scan('{path}', on_corrupt := 'skip') ORDER BY id").fetchall()
    assert rows == [(0,), (1,), (3,), (4,), (5,)]
    rejects = con.sql("SELECT file, record_index, start_offset, reason, message FROM tfrecord_rejects()").fetchall()
    assert [r[:4] for r in rejects] == [(str(path), 2, offset, "data_crc")]
    assert _logged(con) == [rejects[0][4]]
