"""``COPY t FROM`` follows one set of rules in every front end (issue 34, item 8): a
file that is not TFRecord at all reports the scan's own error (not a column-count
mismatch), and bytes that are not UTF-8 going into a VARCHAR column are refused (never
stored as escaped text), natively, through `tfsql.connect()` (extension or Arrow path)
and through ``tfsql sql``."""

from __future__ import annotations

import random

import duckdb
import pyarrow as pa
import pytest

import tfsql
from tfsql.cli import main
from tfsql.duckdb.extension import extension_available

HAS_COPY = tuple(int(p) for p in duckdb.__version__.split(".")[:3] if p.isdigit()) >= (1, 5, 6)


def native():
    return tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))


FRONT_ENDS = {
    "connect": pytest.param(
        tfsql.connect,
        marks=pytest.mark.skipif(not (extension_available() and HAS_COPY), reason="native COPY needs DuckDB >= 1.5.6"),
    ),
    "native": pytest.param(
        native,
        marks=pytest.mark.skipif(not (extension_available() and HAS_COPY), reason="native COPY needs DuckDB >= 1.5.6"),
    ),
}


@pytest.fixture
def files(tmp_path):
    junk = tmp_path / "junk.tfrecord"
    junk.write_bytes(random.Random(0).randbytes(4096))
    text = str(tmp_path / "text.tfrecord")
    tfsql.write_tfrecord(pa.table({"s": [b"ok", None, b"\xff\xfe"], "l": [[b"a", b"b"], [b"\xff", b"c"], None]}), text)
    return str(junk), text


@pytest.mark.parametrize("make", list(FRONT_ENDS.values()), ids=list(FRONT_ENDS))
def test_random_bytes_report_the_scans_error(files, make):
    junk, _ = files
    con = make()
    con.execute("CREATE TABLE t (a BIGINT, b VARCHAR)")
    with pytest.raises(duckdb.Error, match=r"length CRC mismatch in .*junk.tfrecord, record 0 at byte 0") as info:
        con.execute(f"COPY t FROM '{junk}' (FORMAT tfrecord)")
    assert "column count" not in str(info.value) and "columns but" not in str(info.value)


@pytest.mark.parametrize("make", list(FRONT_ENDS.values()), ids=list(FRONT_ENDS))
@pytest.mark.parametrize("column", ["s", "l"])
def test_bytes_that_are_not_utf8_are_refused_for_varchar(files, make, column):
    _, text = files
    con = make()
    kind = "VARCHAR" if column == "s" else "VARCHAR[]"
    other = "BLOB[]" if column == "s" else "BLOB"
    con.execute(f"CREATE TABLE t (s {'VARCHAR' if column == 's' else 'BLOB'}, l {kind if column == 'l' else other})")
    message = f'a value of the table\'s VARCHAR column "{column}" is not UTF-8; make the column a BLOB'
    if column == "l":
        message = "is not UTF-8; make the column a BLOB"
    with pytest.raises(duckdb.InvalidInputException, match=message):
        con.execute(f"COPY t FROM '{text}' (FORMAT tfrecord)")
    assert con.execute("SELECT count(*) FROM t").fetchall() == [(0,)]


@pytest.mark.parametrize("make", list(FRONT_ENDS.values()), ids=list(FRONT_ENDS))
def test_utf8_and_null_values_still_copy(tmp_path, make):
    path = str(tmp_path / "ok.tfrecord")
    tfsql.write_tfrecord(pa.table({"s": [b"caf\xc3\xa9", None], "n": [1, 2]}), path)
    con = make()
    con.execute("CREATE TABLE t (s VARCHAR, n BIGINT)")
    con.execute(f"COPY t FROM '{path}' (FORMAT tfrecord)")
    assert con.execute("SELECT s, n FROM t ORDER BY n").fetchall() == [("café", 1), (None, 2)]


@pytest.mark.skipif(not (extension_available() and HAS_COPY), reason="COPY FROM needs DuckDB >= 1.5.6")
def test_tfsql_sql_refuses_the_same(files, capsys):
    junk, text = files
    assert main(["sql", f"CREATE TABLE t (s VARCHAR, l BLOB[]); COPY t FROM '{text}' (FORMAT tfrecord)"]) != 0
    assert "is not UTF-8; make the column a BLOB" in capsys.readouterr().err
    assert main(["sql", f"CREATE TABLE t (a BIGINT, b VARCHAR); COPY t FROM '{junk}' (FORMAT tfrecord)"]) != 0
    assert "length CRC mismatch" in capsys.readouterr().err


@pytest.mark.skipif(not (extension_available() and HAS_COPY), reason="COPY FROM needs DuckDB >= 1.5.6")
def test_a_described_type_copies_into_that_very_type_only(tmp_path, duckdb_api):
    """A column the scan gives in the table's type (a described timestamp[s] or
    decimal128(10, 2)) is taken as it is; another unit, width or scale is refused at bind,
    naming both types (its values copied as they lie would all be wrong)."""
    import datetime
    import decimal

    table = pa.table(
        {
            "ts": pa.array([1_700_000_000, None], pa.timestamp("s")),
            "d": pa.array([decimal.Decimal("12.34"), decimal.Decimal("-0.05")], pa.decimal128(10, 2)),
        }
    )
    tfsql.write_tfrecord(table, tmp_path / "out")
    con = native()
    con.execute("CREATE TABLE t (ts TIMESTAMP_S, d DECIMAL(10,2))")
    con.execute(f"COPY t FROM '{tmp_path / 'out'}' (FORMAT tfrecord)")
    assert con.execute("SELECT * FROM t ORDER BY d").fetchall() == [
        (None, decimal.Decimal("-0.05")),
        (datetime.datetime(2023, 11, 14, 22, 13, 20), decimal.Decimal("12.34")),
    ]
    for types, refused in [
        ("ts TIMESTAMP, d DECIMAL(10,2)", r'"ts" is TIMESTAMP_S, which does not cast to TIMESTAMP,'),
        ("ts TIMESTAMP_S, d DECIMAL(10,3)", r'"d" is DECIMAL\(10,2\), which does not cast to DECIMAL\(10,3\),'),
    ]:
        con.execute(f"CREATE OR REPLACE TABLE other ({types})")
        with pytest.raises(duckdb.BinderException, match=refused):
            con.execute(f"COPY other FROM '{tmp_path / 'out'}' (FORMAT tfrecord)")
    assert con.execute("SELECT count(*) FROM t").fetchall() == [(2,)]
