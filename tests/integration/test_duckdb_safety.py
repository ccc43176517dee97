"""The SQL front end never runs argument or option text as SQL, and its errors name the
SQL the user wrote: statement smuggling through every ``tfrecord_scan`` argument and
every COPY option, then data errors met after the first batch."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

import tfsql
from tfsql.duckdb.copy import COPY_ALIASES, COPY_OPTIONS
from tfsql.duckdb.extension import extension_available
from tfsql.duckdb import SCAN_PARAMETERS, ScanDataError, connect

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
    assert con.execute("SELECT v FROM victim").fetchall() == [(42,)]
    assert con.execute("SELECT nextval('victim_seq')").fetchall() == [(1,)]


@pytest.mark.parametrize("value", SMUGGLED)
@pytest.mark.parametrize("argument", [None, *SCAN_PARAMETERS])
def test_no_scan_argument_runs_as_sql(con, tmp_path, argument, value):
    call = f"tfrecord_scan({value})" if argument is None else f"tfrecord_scan('{tmp_path}/data', {argument} := {value})"
    with pytest.raises(duckdb.Error) as info:
        con.sql(f"SELECT count(*) FROM {call}").fetchall()
    assert isinstance(info.value, (duckdb.ParserException, duckdb.BinderException)), str(info.value)
    assert "__tfrecord_scan" not in str(info.value) and "Traceback" not in str(info.value)
    assert_nothing_else_ran(con)


@pytest.mark.parametrize("value", SMUGGLED)
@pytest.mark.parametrize("option", [*[o for o in COPY_OPTIONS if o != "FORMAT"], *COPY_ALIASES])
def test_no_copy_option_runs_as_sql(con, tmp_path, option, value):
    with pytest.raises((duckdb.ParserException, duckdb.BinderException)):
        con.sql(f"COPY (SELECT 1 AS a) TO '{tmp_path}/out.tfrecord' (FORMAT tfrecord, {option} {value})")
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
        "SELECT sum(x) FROM tfrecord_scan([?], batch_size := ?) WHERE x > ?", [source, 2, 1]
    ).fetchall() == [(5,)]
    con.execute("SET VARIABLE src = ?", [source])
    assert con.sql("SELECT count(*) FROM read_tfrecord(getvariable('src'))").fetchall() == [(3,)]
    target = tmp_path / "out"
    rows = con.sql(
        f"COPY (SELECT 1 AS a) TO '{target}' (FORMAT 'tfrecord', ROWS_PER_FILE 1_0, "
        f"COMPRESSION_LEVEL 5, COMPRESSION $$gzip$$, OVERWRITE true, FILE_SIZE_BYTES '1MB')"
    )
    assert rows.fetchall() == [(1,)]
    assert con.sql(f"SELECT a FROM tfrecord_scan('{target}')").fetchall() == [(1,)]
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
            # (a ScanDataError names tfrecord_scan; on DuckDB 1.4, which keeps no reports, the
            # extension's own error stands)
            r"^Invalid Input Error: (tfrecord_scan: )?data CRC mismatch in .*part-00000-of-00001\.tfrecord, "
            r"record 9999\d at byte \d+: the record is corrupt \(add on_corrupt := 'skip' or "
            r"ignore_errors := true to the tfrecord_scan call to skip it\)$",
        ),
        (
            lambda data: bytes(data[:-7]),
            r"^Invalid Input Error: tfrecord_scan: .*truncated.* in .*part-00000-of-00001"
            r"\.tfrecord, record 99999 at byte \d+",
        ),
    ],
)
def test_data_error_after_the_first_batch_is_one_clean_duckdb_error(tmp_path, change, expected):
    source = _damaged(tmp_path, change)
    with connect(extension=False) as connection:  # the Arrow path; the extension's: below
        with pytest.raises(ScanDataError, match=expected) as info:
            connection.sql(f"SELECT sum(x) FROM tfrecord_scan('{source}', infer_sample := 10)").fetchall()
        assert isinstance(info.value, duckdb.InvalidInputException) and isinstance(info.value, tfsql.TFSQLError)
        assert isinstance(info.value.__cause__, tfsql.CorruptRecordError)
        text = str(info.value)
        assert "Traceback" not in text and "__tfrecord_scan" not in text and "\n" not in text
        # the same through execute() + fetch, and through an Arrow reader
        with pytest.raises(ScanDataError, match=expected):
            connection.execute(f"SELECT sum(x) FROM tfrecord_scan('{source}', infer_sample := 10)").fetchall()
        with pytest.raises(ScanDataError, match=expected):
            relation = connection.sql(f"SELECT x FROM tfrecord_scan('{source}', infer_sample := 10)")
            relation.to_arrow_reader(1000).read_all() if hasattr(
                relation, "to_arrow_reader"
            ) else relation.fetch_arrow_reader(1000).read_all()


@pytest.mark.parametrize(
    "change, expected",
    [
        (
            _flip_near_end,
            # (a ScanDataError names tfrecord_scan; on DuckDB 1.4, which keeps no reports, the
            # extension's own error stands)
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
    if not extension_available():
        pytest.skip("tfsql was built without its DuckDB extension")
    source = _damaged(tmp_path, change)
    with connect() as connection:
        with pytest.raises(duckdb.InvalidInputException, match=expected) as info:
            connection.sql(f"SELECT sum(x) FROM tfrecord_scan('{source}', infer_sample := 10)").fetchall()
        assert "Traceback" not in str(info.value) and "\n" not in str(info.value)


def test_invalid_utf8_is_a_clean_duckdb_error(tmp_path):
    directory = tmp_path / "utf8"
    tfsql.write_tfrecord(pa.table({"s": [b"ok"] * 9 + [b"\xff\xfe"]}), str(directory), num_shards=1)
    query = f"SELECT s FROM tfrecord_scan('{directory}', columns := {{'s': 'VARCHAR'}})"
    with connect(extension=False) as connection:  # the Arrow path
        with pytest.raises(
            ScanDataError,
            match=r"^Invalid Input Error: tfrecord_scan: feature 's' holds bytes that are not valid UTF-8 in .*"
            r"part-00000-of-00001\.tfrecord, record 9 at byte 279, but column 's' is a string; "
            r"read it as binary \(schema := giving it 'BLOB'\)$",
        ) as info:
            connection.sql(query).fetchall()
        assert "Traceback" not in str(info.value)
        assert isinstance(info.value.__cause__, tfsql.SchemaError) and info.value.__cause__.reason == "not_utf8"
    if extension_available():  # the extension reads columns := natively: the same message
        with connect() as connection:
            with pytest.raises(duckdb.InvalidInputException) as native:
                connection.sql(query).fetchall()
            assert str(native.value) == str(info.value)


def test_errors_quote_the_sql_as_written(con, tmp_path):
    source = f"{tmp_path}/data"
    with pytest.raises(duckdb.ParserException) as info:
        con.sql(f"DESCRIBE tfrecord_scan('{source}', infer_sample := 10)\n  ORDER BY")
    assert "\nLINE 2:   ORDER BY\n" in str(info.value) and "__tfrecord" not in str(info.value)
    with pytest.raises(duckdb.ParserException) as info:
        con.sql(f"DESCRIBE tfrecord_scan('{source}') WHERE x = 1")
    excerpt, caret = str(info.value).split("\n")[-2:]
    assert excerpt.startswith("LINE 1: ") and excerpt.endswith("data') WHERE x = 1")
    assert caret.index("^") == excerpt.index("WHERE")
    with pytest.raises(duckdb.CatalogException) as info:
        con.sql(f"SELECT * FROM tfrecord_scan('{source}') t JOIN no_such_table USING (x)")
    assert "__tfrecord_scan" not in str(info.value)
