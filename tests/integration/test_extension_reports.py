"""The DuckDB extension reports its data errors and skipped byte ranges as fields
(``tfrecord_last_error()``, ``tfrecord_rejects()``): the fields build exactly the tfsql
error object the Python reader raises (`from_fields` below), the message is the Python
one in the SQL dialect, and a skip-mode scan lists exactly the stretches the Python
reader warns about. `tfsql.connect()` is plain DuckDB: its errors are these.
"""

from __future__ import annotations


from pathlib import Path

import duckdb
import pytest

import tfsql
from tfsql import messages
from tfsql.duckdb.extension import extension_available
from tfrecord_files import example, frame

DATA = Path(__file__).resolve().parent.parent / "data" / "tensorflow"

pytestmark = [
    pytest.mark.skipif(not extension_available(), reason="this tfsql was built without its DuckDB extension"),
    pytest.mark.usefixtures("duckdb_api"),  # once with each build: v1, and V2 on DuckDB 2
]

# The reports need a connection id, which the C API gives from v1.5.6 on
REPORTS = tuple(int(x) for x in duckdb.__version__.split(".")[:3]) >= (1, 5, 6)
needs_reports = pytest.mark.skipif(not REPORTS, reason="DuckDB < 1.5.6 gives extensions no connection id")


# CorruptRecordError's header length, for the reasons whose message names it
_LENGTH_REASONS = ("too_long", "past_end")


def from_fields(row: dict) -> tfsql.TFSQLError | None:
    """The tfsql error a ``tfrecord_last_error()`` row describes (None for an error
    that is not one of tfsql's data errors: its ``error_class`` is NULL)."""
    kind, reason, path = row.get("error_class"), row.get("reason"), row.get("file")
    if kind == "CorruptRecordError":
        return tfsql.CorruptRecordError(
            str(reason),
            path=path,
            record_index=row.get("record_index"),
            offset=row.get("byte_offset"),
            rest_of_file=bool(row.get("rest_of_file")),
            length=row.get("length") if reason in _LENGTH_REASONS else None,
            limit=row.get("limit_bytes"),
            compression=row.get("compression"),
            record_type=row.get("record_type"),
            detail=row.get("detail"),
            suggest_skip=bool(row.get("suggest_skip")),
        )
    if kind == "SchemaError" and reason in messages.INFER:
        # the inference's refusal, worded by the C core (the kinds and where each was
        # first seen are in its words only): the message the extension raised, in SQL
        return tfsql.SchemaError.from_inference(
            str(reason),
            {"sql": str(row.get("message"))},
            feature=row.get("feature"),
            path=path,
            record_index=row.get("record_index"),
            offset=row.get("byte_offset"),
        )
    if kind == "SchemaError":
        return tfsql.SchemaError.from_reason(
            str(reason),
            feature=str(row.get("feature")),
            path=path,
            record_index=row.get("record_index"),
            offset=row.get("byte_offset"),
            found=row.get("found_kind"),
            expected=row.get("expected_kind"),
        )
    if kind == "FileChangedError":
        return tfsql.FileChangedError(
            str(reason), path=path, before=row.get("size_before"), after=row.get("size_after")
        )
    return None


def _damaged(path, *, data_crc=(), length_crc=(), truncate=0, n=12) -> list[int]:
    """``n`` records {"id": i}; the data CRC of records ``data_crc`` and the length CRC of
    ``length_crc`` broken, ``truncate`` bytes cut from the end. The record offsets."""
    data, offsets = bytearray(), []
    for i in range(n):
        framed = bytearray(frame(example({"id": i, "pad": [b"x" * 4]})))
        if i in data_crc:
            framed[-1] ^= 0xFF
        if i in length_crc:
            framed[8] ^= 0xFF
        offsets.append(len(data))
        data += framed
    path.write_bytes(bytes(data[: len(data) - truncate]))
    return offsets


def _native() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    tfsql.load_extension(con)
    return con


def _python_skips(path) -> list[tfsql.CorruptRecordError]:
    seen: dict[tuple, tfsql.CorruptRecordError] = {}

    def keep(error: tfsql.CorruptRecordError) -> None:  # inference may meet the same damage first
        seen[(error.path, error.offset)] = error

    tfsql.read_tfrecord(str(path), on_corrupt=keep)
    return sorted(seen.values(), key=lambda e: (e.path, e.offset))


def _rows(con, sql: str) -> list[dict]:
    cursor = con.execute(sql)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


@needs_reports
def test_rejects_list_exactly_the_ranges_python_reports(tmp_path):
    """A record stepped over, a lost framing resynchronised, a truncated end: the rows of
    tfrecord_rejects() are the stretches Python's on_corrupt reports name."""
    offsets = _damaged(tmp_path / "a.tfrecord", data_crc=(2, 9), length_crc=(5,))
    _damaged(tmp_path / "b.tfrecord", truncate=7)
    framed = offsets[1]  # every record's framed size
    con = _native()
    ids = [r[0] for r in con.sql(f"SELECT id FROM tfrecord_scan('{tmp_path}', on_corrupt := 'skip')").fetchall()]
    python = _python_skips(tmp_path)
    assert sorted(ids) == sorted(
        r["id"] for r in tfsql.read_tfrecord(str(tmp_path), on_corrupt=lambda e: None).to_pylist()
    )
    rows = _rows(con, "SELECT * FROM tfrecord_rejects()")
    expected = [
        {
            "file": e.path,
            "record_index": e.record_index,
            "start_offset": e.offset,
            "end_offset": e.skipped_to if e.skipped_to is not None else (None if e.rest_of_file else e.offset + framed),
            "rest_of_file": e.rest_of_file,
            "reason": e.reason,
            "message": e.skipped_message("sql"),
            "more_rejects": 0,
        }
        for e in python
    ]
    assert rows == expected
    assert [(r["reason"], r["start_offset"], r["end_offset"]) for r in rows] == [
        ("data_crc", offsets[2], offsets[3]),
        # resumed at record 10: the first after which the records' CRCs check (9's does not)
        ("length_crc", offsets[5], offsets[10]),
        ("past_end", offsets[11], None),  # its header claims more bytes than the file holds
    ]
    assert rows[-1]["file"] == str(tmp_path / "b.tfrecord") and rows[-1]["rest_of_file"]


@needs_reports
def test_a_new_skip_scan_replaces_the_rejects_and_other_connections_see_none(tmp_path):
    bad, good = tmp_path / "bad.tfrecord", tmp_path / "good.tfrecord"
    _damaged(bad, data_crc=(1,))
    _damaged(good)
    con, other = _native(), _native()
    con.sql(f"SELECT * FROM tfrecord_scan('{bad}', ignore_errors := true)").fetchall()
    assert [r[1] for r in con.sql("SELECT * FROM tfrecord_rejects()").fetchall()] == [1]
    assert other.sql("SELECT * FROM tfrecord_rejects()").fetchall() == []
    con.sql(f"SELECT * FROM tfrecord_scan('{good}', ignore_errors := true)").fetchall()
    assert con.sql("SELECT * FROM tfrecord_rejects()").fetchall() == []


@needs_reports
def test_cursors_of_one_database_keep_their_own_reports(tmp_path):
    # each cursor is a connection of its own: its last error and rejects are its own, on
    # the V2 build too (the extension gives each connection an id in its session setting
    # tfsql_connection_id; before, V2 kept one report for the process)
    bad, good = tmp_path / "bad.tfrecord", tmp_path / "good.tfrecord"
    _damaged(bad, data_crc=(1,))
    _damaged(good)
    db = _native()
    a, b = db.cursor(), db.cursor()
    a.sql(f"SELECT * FROM tfrecord_scan('{bad}', ignore_errors := true)").fetchall()
    with pytest.raises(duckdb.Error):
        b.sql(f"SELECT * FROM tfrecord_scan('{tmp_path}/missing.tfrecord')").fetchall()
    assert [r[1] for r in a.sql("SELECT * FROM tfrecord_rejects()").fetchall()] == [1]
    assert b.sql("SELECT * FROM tfrecord_rejects()").fetchall() == []
    assert a.sql("SELECT count(*) FROM tfrecord_last_error()").fetchall() == [(0,)]
    ((message,),) = b.sql("SELECT message FROM tfrecord_last_error()").fetchall()
    assert "missing.tfrecord" in message
    a.sql(f"SELECT * FROM tfrecord_scan('{good}', ignore_errors := true)").fetchall()
    assert a.sql("SELECT * FROM tfrecord_rejects()").fetchall() == []
    assert b.sql("SELECT count(*) FROM tfrecord_last_error()").fetchall() == [(1,)]


@needs_reports
def test_rejects_are_capped(tmp_path):
    path = tmp_path / "many.tfrecord"
    payload = example({"id": 1})
    broken = bytearray(frame(payload))
    broken[-1] ^= 0xFF
    path.write_bytes(bytes(broken) * 10_003)
    con = _native()
    assert con.sql(f"SELECT count(*) FROM tfrecord_scan('{path}', on_corrupt := 'skip')").fetchall() == [(0,)]
    assert con.sql("SELECT count(*), sum(more_rejects) FROM tfrecord_rejects()").fetchall() == [(10_000, 3)]


@needs_reports
def test_last_error_holds_the_fields_python_raises(tmp_path):
    path = tmp_path / "damaged.tfrecord"
    offsets = _damaged(path, length_crc=(3,))
    con = _native()
    with pytest.raises(duckdb.InvalidInputException):
        con.sql(f"SELECT * FROM tfrecord_scan('{path}')").fetchall()
    (row,) = _rows(con, "SELECT * FROM tfrecord_last_error()")
    with pytest.raises(tfsql.CorruptRecordError) as python:
        tfsql.read_tfrecord(str(path))
    native = from_fields(row)
    assert type(native) is tfsql.CorruptRecordError
    assert vars(native) == vars(python.value)
    assert (row["reason"], row["record_index"], row["byte_offset"]) == ("length_crc", 3, offsets[3])
    assert row["message"] == python.value.message("sql")
    # the next scan of the connection forgets it
    con.sql(f"SELECT count(*) FROM tfrecord_scan('{path}', on_corrupt := 'skip')").fetchall()
    assert con.sql("SELECT * FROM tfrecord_last_error()").fetchall() == []


@needs_reports
def test_connect_raises_duckdbs_error_with_the_python_message_and_fields(tmp_path):
    path = tmp_path / "damaged.tfrecord"
    offsets = _damaged(path, data_crc=(4,))
    con = tfsql.connect()
    with pytest.raises(duckdb.InvalidInputException) as info:
        con.sql(f"SELECT * FROM tfrecord_scan('{path}')").fetchall()
    (row,) = _rows(con, "SELECT * FROM tfrecord_last_error()")
    cause = from_fields(row)
    assert type(cause) is tfsql.CorruptRecordError
    assert (cause.reason, cause.path, cause.record_index, cause.offset) == ("data_crc", str(path), 4, offsets[4])
    assert str(info.value) == "Invalid Input Error: tfrecord_scan: " + cause.message("sql")


@needs_reports
def test_schema_errors_are_reported_with_their_fields(tmp_path):
    path = tmp_path / "late.tfrecord"
    payloads = [example({"v": [1]}) for _ in range(3)] + [example({"v": [1, 2]})]
    path.write_bytes(b"".join(frame(p) for p in payloads))
    con = tfsql.connect()
    with pytest.raises(duckdb.InvalidInputException):
        con.sql(f"SELECT v FROM tfrecord_scan('{path}', infer_sample := 2)").fetchall()
    (row,) = _rows(con, "SELECT * FROM tfrecord_last_error()")
    cause = from_fields(row)
    assert type(cause) is tfsql.SchemaError
    assert (cause.reason, cause.feature, cause.record_index) == ("not_scalar", "v", 3)
    with pytest.raises(tfsql.SchemaError) as python:
        tfsql.read_tfrecord(str(path), infer_sample=2)
    assert str(cause) == str(python.value)


@pytest.mark.skipif(REPORTS, reason="DuckDB >= 1.5.6 keeps the reports")
def test_reports_refuse_clearly_where_the_engine_gives_no_connection_id():
    con = _native()
    for function in ("tfrecord_last_error", "tfrecord_rejects"):
        with pytest.raises(duckdb.BinderException, match=rf"{function}: this DuckDB .* no connection id"):
            con.sql(f"SELECT * FROM {function}()").fetchall()


def test_the_extension_words_errors_from_the_python_templates(tmp_path):
    """No data error is worded in the extension's C: its messages are the templates of
    tfsql/messages.py (messages_gen.h), in the SQL dialect."""
    path = tmp_path / "damaged.tfrecord"
    _damaged(path, data_crc=(0,))
    con = _native()  # held while the result is fetched (duckdb 1.4 closes it with its last reference)
    with pytest.raises(duckdb.InvalidInputException) as native:
        con.sql(f"SELECT * FROM tfrecord_scan('{path}')").fetchall()
    with pytest.raises(tfsql.CorruptRecordError) as python:
        tfsql.read_tfrecord(str(path))
    assert str(native.value) == "Invalid Input Error: tfrecord_scan: " + python.value.message("sql")


def test_a_cut_gzip_stream_is_worded_as_in_python(tmp_path):
    """The stream errors come from the same templates (the extension meets this one while
    sampling, so DuckDB raises it as a Binder Error)."""
    path = tmp_path / "cut.tfrecord.gz"
    tfsql.write_tfrecord(tfsql.read_tfrecord(str(DATA / "tabular.tfrecord")), str(path), compression="gzip")
    whole = path.read_bytes()
    path.write_bytes(whole[: len(whole) // 2])
    con = _native()
    with pytest.raises(duckdb.Error) as native:
        con.sql(f"SELECT * FROM tfrecord_scan('{path}')").fetchall()
    with pytest.raises(tfsql.CorruptRecordError) as python:
        tfsql.read_tfrecord(str(path))
    assert python.value.reason == "stream_truncated"
    assert str(native.value) == "Binder Error: " + python.value.message("sql")


@needs_reports
def test_copy_from_reports_what_it_skipped(tmp_path, duckdb_api):
    path, earlier = tmp_path / "damaged.tfrecord", tmp_path / "earlier.tfrecord"
    offsets = _damaged(path, data_crc=(3,))
    _damaged(earlier, data_crc=(1,))
    con = _native()
    con.sql(f"SELECT * FROM tfrecord_scan('{earlier}', on_corrupt := 'skip')").fetchall()
    con.sql("CREATE TABLE t (id BIGINT, pad VARCHAR)")
    con.sql(f"COPY t FROM '{path}' (FORMAT tfrecord, ON_CORRUPT 'skip')")
    assert con.sql("SELECT count(*) FROM t").fetchall() == [(11,)]
    rows = con.sql("SELECT record_index, start_offset, end_offset, reason FROM tfrecord_rejects()").fetchall()
    assert rows == [(3, offsets[3], offsets[4], "data_crc")]  # the COPY's own, not the earlier scan's


@needs_reports
def test_a_data_error_of_the_extensions_bind_is_reported(tmp_path):
    """The schema inference's sample meets a record that is not an Example while the
    extension binds the call: DuckDB raises a Binder Error and the extension reports the
    fields in tfrecord_last_error()."""
    path = tmp_path / "malformed.tfrecord"
    path.write_bytes(frame(example({"x": 1})) + frame(b"\x0a\xff\xff\xff") + frame(example({"x": 2})))
    sql = f"SELECT * FROM tfrecord_scan('{path}')"
    con = _native()
    with pytest.raises(duckdb.BinderException):
        con.sql(sql).fetchall()
    assert _rows(con, "SELECT error_class, reason, record_index, byte_offset FROM tfrecord_last_error()") == [
        {"error_class": "CorruptRecordError", "reason": "malformed", "record_index": 1, "byte_offset": 30}
    ]
    with pytest.raises(duckdb.BinderException) as info:
        tfsql.connect().sql(sql).fetchall()
    assert "record is not a valid example protobuf in " in str(info.value)
    assert "check record_type :=" in str(info.value)  # the SQL dialect


@needs_reports
def test_a_bind_error_is_not_attributed_to_an_earlier_calls_data_error(tmp_path):
    """A call whose bind fails for another reason (two kinds in the inference sample)
    after one that failed on bad data: the report was cleared as the second call bound,
    so tfrecord_last_error() holds the second call's own error (the kind conflict)."""
    bad = tmp_path / "malformed.tfrecord"
    bad.write_bytes(frame(example({"x": 1})) + frame(b"\x0a\xff\xff\xff"))
    kinds = tmp_path / "kinds.tfrecord"
    kinds.write_bytes(frame(example({"v": 1})) + frame(example({"v": [b"x"]})))
    con = tfsql.connect()
    with pytest.raises(duckdb.BinderException):
        con.sql(f"SELECT * FROM tfrecord_scan('{bad}')").fetchall()
    with pytest.raises(duckdb.BinderException, match="holds two kinds in the inference sample"):
        con.sql(f"SELECT * FROM tfrecord_scan('{kinds}')").fetchall()
    cause = from_fields(_rows(con, "SELECT * FROM tfrecord_last_error()")[0])
    assert isinstance(cause, tfsql.SchemaError) and (cause.reason, cause.feature) == ("kind_conflict", "v")


@needs_reports
def test_an_inference_refusal_of_the_extensions_bind_is_reported(tmp_path):
    """A feature that is int64 in one file and bytes in another: the schema inference
    refuses the sample while the extension binds the call. Plain DuckDB raises a Binder
    Error (its dialect for a bind's refusal) and the extension reports the fields in
    tfrecord_last_error()."""
    (tmp_path / "a.tfrecord").write_bytes(frame(example({"x": 1})))
    (tmp_path / "b.tfrecord").write_bytes(frame(example({"x": [b"y"]})))
    sql = f"SELECT * FROM tfrecord_scan('{tmp_path}')"
    described = f"bytes_list (first in {tmp_path / 'b.tfrecord'}) and int64_list (first in {tmp_path / 'a.tfrecord'})"
    expected = (
        f"feature 'x' holds two kinds in the inference sample: {described}; pass schema := with the type to "
        "read it as, or fix the data"
    )
    con = _native()
    with pytest.raises(duckdb.BinderException) as plain:
        con.sql(sql).fetchall()
    assert str(plain.value) == f"Binder Error: {expected}"
    assert _rows(
        con, "SELECT error_class, reason, feature, file, record_index, message FROM tfrecord_last_error()"
    ) == [
        {
            "error_class": "SchemaError",
            "reason": "kind_conflict",
            "feature": "x",
            "file": None,
            "record_index": None,
            "message": expected,
        }
    ]
    cause = from_fields(_rows(con, "SELECT * FROM tfrecord_last_error()")[0])
    assert isinstance(cause, tfsql.SchemaError)
    assert (cause.reason, cause.feature, cause.path, cause.record_index) == ("kind_conflict", "x", None, None)
    assert str(cause) == expected  # the extension's words, kept whole
