"""`tfsql.connect()` (plain DuckDB + the extension) runs no second statement hidden in a
``tfrecord_scan`` argument, a COPY option or a COPY path, and its data errors are one
clean DuckDB error naming file, record and byte offset."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

import tfsql
from tfsql.duckdb import connect
from tfsql.options import (
    COMPAT_SQL_PARAMETERS,
    DUCKDB_COPY_OPTIONS,
    NATIVE_COPY_OPTIONS,
    READ_OPTIONS,
    WRITE_OPTIONS,
    spellings,
)

#: ``tfrecord_scan``'s named parameters (the extension's) and the COPY options it reads.
SCAN_PARAMETERS = [n for n, (o, _) in spellings(READ_OPTIONS, "sql").items() if o.native] + list(COMPAT_SQL_PARAMETERS)
COPY_OPTIONS = [n for n, (o, _) in spellings(WRITE_OPTIONS, "sql").items() if o.name in NATIVE_COPY_OPTIONS] + list(
    DUCKDB_COPY_OPTIONS
)

SMUGGLED = [
    "'x'; DROP TABLE victim; SELECT 'data'",
    "nextval('victim_seq')",
    "(SELECT nextval('victim_seq'))",
    "'a' || (SELECT nextval('victim_seq'))::VARCHAR",
    "[nextval('victim_seq')]",
    "{'a': (SELECT nextval('victim_seq'))}",
    "getvariable('x'); DROP TABLE victim",
    "true; DROP TABLE victim",
]


@pytest.fixture
def con(tmp_path):
    connection = connect()
    connection.execute("CREATE TABLE victim AS SELECT 42 AS v; CREATE SEQUENCE victim_seq")
    tfsql.write_tfrecord(pa.table({"x": [1, 2, 3]}), str(tmp_path / "data"))
    yield connection
    connection.close()


def assert_nothing_else_ran(con):
    """No second statement ran. (An argument is a DuckDB constant expression, evaluated as
    ``read_parquet``'s are: ``nextval(...)`` in one may advance the sequence, as it does
    in any DuckDB table function's argument.)"""
    assert con.execute("SELECT v FROM victim").fetchall() == [(42,)]


@pytest.mark.parametrize("value", SMUGGLED)
@pytest.mark.parametrize("argument", [None, *SCAN_PARAMETERS])
def test_no_scan_argument_runs_as_sql(con, tmp_path, argument, value):
    call = f"tfrecord_scan({value})" if argument is None else f"tfrecord_scan('{tmp_path}/data', {argument} := {value})"
    with pytest.raises(duckdb.Error) as info:
        con.sql(f"SELECT count(*) FROM {call}").fetchall()
    assert "Traceback" not in str(info.value)
    assert_nothing_else_ran(con)


@pytest.mark.parametrize("value", SMUGGLED)
@pytest.mark.parametrize("option", COPY_OPTIONS)
def test_no_copy_option_runs_as_sql(con, tmp_path, option, value):
    statement = f"COPY (SELECT 1 AS a) TO '{tmp_path}/out.tfrecord' (FORMAT tfrecord, {option} {value})"
    if ";" not in value:  # one expression, which DuckDB evaluates as for any COPY format
        try:
            con.sql(statement)
        except duckdb.Error:
            pass
        assert_nothing_else_ran(con)
        return
    with pytest.raises(duckdb.ParserException):
        con.sql(statement)
    assert_nothing_else_ran(con)
    assert not (tmp_path / "out.tfrecord").exists()


@pytest.mark.parametrize(
    "path",
    [
        "('x.tfrecord'; DROP TABLE victim; SELECT 'y.tfrecord')",
        "'x' || (SELECT nextval('victim_seq'))::VARCHAR || '.tfrecord'",
    ],
)
def test_copy_path_does_not_run_as_sql(con, path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(duckdb.Error):
        con.sql(f"COPY (SELECT 1 AS a) TO {path} (FORMAT tfrecord)")
    assert_nothing_else_ran(con)
    assert not list(tmp_path.glob("*.tfrecord"))


def test_literal_forms_and_parameters_still_work(con, tmp_path):
    source = f"{tmp_path}/data"
    assert con.sql(
        f"SELECT sum(x) FROM tfrecord_scan($${source}$$, infer_sample := -1, columns := {{x: 'BIGINT'}}, glob := false)"
    ).fetchall() == [(6,)]
    assert con.execute(
        "SELECT sum(x) FROM tfrecord_scan([?], batch_bytes := ?) WHERE x > ?", [source, 4096, 1]
    ).fetchall() == [(5,)]
    con.execute("SET VARIABLE src = ?", [source])
    assert con.sql("SELECT count(*) FROM read_tfrecord(getvariable('src'))").fetchall() == [(3,)]
    if "duckdb-v" not in tfsql.duckdb_extension_path():
        return  # the v1 build's COPY takes a STRUCT column (and DuckDB 1.4 has none)
    target = tmp_path / "out"
    rows = con.sql(
        f"COPY (SELECT 1 AS a, 2 AS b) TO '{target}' (FORMAT 'tfrecord', PARTITION_BY a, "
        f"COMPRESSION_LEVEL 5, COMPRESSION $$gzip$$, OVERWRITE true)"
    )
    assert rows.fetchall() == [(1,)]
    assert con.sql(f"SELECT a, b FROM tfrecord_scan('{target}')").fetchall() == [(1, 2)]
    assert_nothing_else_ran(con)


# -- errors ------------------------------------------------------------------------------


def _damaged(tmp_path, change) -> str:
    directory = tmp_path / "damaged"
    tfsql.write_tfrecord(pa.table({"x": list(range(100_000))}), str(directory), num_shards=1)
    (path,) = directory.glob("*.tfrecord")
    path.write_bytes(change(bytearray(path.read_bytes())))
    return str(directory)


def _flip_near_end(data: bytearray) -> bytes:
    data[len(data) - 40] ^= 0xFF
    return bytes(data)


@pytest.mark.parametrize(
    "change, expected",
    [
        (
            _flip_near_end,
            r"^Invalid Input Error: (tfrecord_scan: )?data CRC mismatch in .*part-00000-of-00001\.tfrecord, "
            r"record 9999\d at byte \d+: the record is corrupt \(add on_corrupt := 'skip' or ignore_errors "
            r":= true to the tfrecord_scan call to skip it\)$",
        ),
        (
            lambda data: bytes(data[:-7]),
            r"^Invalid Input Error: (tfrecord_scan: )?truncated record in .*part-00000-of-00001\.tfrecord, "
            r"record 99999 at byte \d+: its header claims 16 bytes but the file ends 25 bytes after the "
            r"record's start",  # the Python reader's wording (a file's size vouches for it)
        ),
    ],
)
def test_data_error_in_the_extension_is_one_clean_duckdb_error(tmp_path, change, expected):
    source = _damaged(tmp_path, change)
    with connect() as connection:
        with pytest.raises(duckdb.InvalidInputException, match=expected) as info:
            connection.sql(f"SELECT sum(x) FROM tfrecord_scan('{source}', infer_sample := 10)").fetchall()
        assert "Traceback" not in str(info.value) and "\n" not in str(info.value)


def test_invalid_utf8_is_a_clean_duckdb_error(tmp_path):
    directory = tmp_path / "utf8"
    tfsql.write_tfrecord(pa.table({"s": [b"ok"] * 9 + [b"\xff\xfe"]}), str(directory), num_shards=1)
    query = f"SELECT s FROM tfrecord_scan('{directory}', columns := {{'s': 'VARCHAR'}})"
    with connect() as connection:
        with pytest.raises(
            duckdb.InvalidInputException,
            match=r"^Invalid Input Error: (tfrecord_scan: )?feature 's' holds bytes that are not valid UTF-8 in .*"
            r"part-00000-of-00001\.tfrecord, record 9 at byte 279, but column 's' is a string; "
            r"read it as binary \(schema := giving it 'BLOB'\)$",
        ) as info:
            connection.sql(query).fetchall()
        assert "Traceback" not in str(info.value)


def test_errors_quote_the_sql_as_written(con, tmp_path):
    source = f"{tmp_path}/data"
    with pytest.raises(duckdb.ParserException) as info:
        con.sql(f"SELECT * FROM tfrecord_scan('{source}', infer_sample := 10)\n  ORDER BY")
    assert "LINE" not in str(info.value) or "\nLINE 2:   ORDER BY\n" in str(info.value)  # DuckDB 1.4 quotes no line
    with pytest.raises(duckdb.CatalogException) as info:
        con.sql(f"SELECT * FROM tfrecord_scan('{source}') t JOIN no_such_table USING (x)")
    assert "__tfrecord_scan" not in str(info.value)
