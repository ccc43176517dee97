"""A data error met while DuckDB scans a dataset of tfsql.connect()'s Arrow path reaches
the user as DuckDB's error with the tfsql error object behind it (its class and fields:
file, record, offset), kept by the scan itself, not parsed back from a traceback's text."""

from __future__ import annotations

import pyarrow as pa
import pytest

import tfsql
from tfsql.duckdb import ScanDataError, connect


def test_scan_data_error_carries_the_tfsql_error_object(tmp_path):
    directory = tmp_path / "utf8"
    tfsql.write_tfrecord(pa.table({"s": [b"ok"] * 9 + [b"\xff\xfe"]}), str(directory), num_shards=1)
    with connect(extension=False) as connection:
        with pytest.raises(ScanDataError) as info:
            connection.sql(f"SELECT s FROM tfrecord_scan('{directory}', columns := {{'s': 'VARCHAR'}})").fetchall()
    cause = info.value.__cause__
    assert isinstance(cause, tfsql.TFSQLError)
    assert cause.record_index == 9 and cause.path.endswith("part-00000-of-00001.tfrecord")
    assert str(info.value).startswith("Invalid Input Error: tfrecord_scan: ") and "Traceback" not in str(info.value)


def test_corrupt_record_advice_is_spelled_for_sql(tmp_path):
    path = tmp_path / "c.tfrecord"
    tfsql.write_tfrecord(pa.table({"x": list(range(5))}), str(path))
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF  # the last record's data CRC
    path.write_bytes(bytes(data))
    with connect(extension=False) as connection:
        with pytest.raises(ScanDataError, match=r"add on_corrupt := 'skip' or ignore_errors := true") as info:
            connection.sql(f"SELECT x FROM tfrecord_scan('{path}', schema := {{'x': 'INTEGER'}})").fetchall()
    assert isinstance(info.value.__cause__, tfsql.CorruptRecordError)
    assert info.value.__cause__.record_index == 4
