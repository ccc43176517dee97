"""A data error met while DuckDB scans TFRecord files through `tfsql.connect()` is one
DuckDB error whose text names file, record and byte offset with advice spelled for
SQL, and whose fields (class, reason, file, record, offset) ``tfrecord_last_error()``
gives as columns: kept by the scan itself, never parsed back from a message's text."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

import tfsql
from tfsql.duckdb import connect

FIELDS = "SELECT error_class, reason, file, record_index, byte_offset FROM tfrecord_last_error()"


def _reports(connection) -> bool:
    """The extension keeps its reports on DuckDB 1.5.6 and later (docs/duckdb-extension.md)."""
    try:
        connection.sql(FIELDS).fetchall()
    except duckdb.Error:
        return False
    return True


def test_scan_data_error_names_the_record_and_its_fields_are_kept(tmp_path):
    directory = tmp_path / "utf8"
    tfsql.write_tfrecord(pa.table({"s": [b"ok"] * 9 + [b"\xff\xfe"]}), str(directory), num_shards=1)
    with connect() as connection:
        with pytest.raises(duckdb.InvalidInputException) as info:
            connection.sql(f"SELECT s FROM tfrecord_scan('{directory}', columns := {{'s': 'VARCHAR'}})").fetchall()
        text = str(info.value)
        assert "part-00000-of-00001.tfrecord, record 9 at byte 279" in text and "Traceback" not in text
        if _reports(connection):
            ((kind, reason, path, record, offset),) = connection.sql(FIELDS).fetchall()
            assert (kind, reason, record, offset) == ("SchemaError", "not_utf8", 9, 279)
            assert path.endswith("part-00000-of-00001.tfrecord")


def test_corrupt_record_advice_is_spelled_for_sql(tmp_path):
    path = tmp_path / "c.tfrecord"
    tfsql.write_tfrecord(pa.table({"x": list(range(5))}), str(path))
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF  # the last record's data CRC
    path.write_bytes(bytes(data))
    with connect() as connection:
        with pytest.raises(
            duckdb.InvalidInputException, match=r"record 4 .*add on_corrupt := 'skip' or ignore_errors := true"
        ):
            connection.sql(f"SELECT x FROM tfrecord_scan('{path}', schema := {{'x': 'BIGINT'}})").fetchall()
        if _reports(connection):
            ((kind, reason, _, record, _),) = connection.sql(FIELDS).fetchall()
            assert (kind, reason, record) == ("CorruptRecordError", "data_crc", 4)
