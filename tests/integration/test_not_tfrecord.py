"""Issue 33 item 4: a file that is not TFRecord is named for what it is, with what reads
it, in every front end (the first bytes are the C core's ``tfsql_sniff_format``, shared
by the Python module and the DuckDB extension)."""

from __future__ import annotations

import gzip

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

import tfsql
from tfsql._reference import sniff_format as reference_sniff_format
from tfsql._codec import codec
from tfsql.duckdb.extension import extension_available

TABLE = pa.table({"a": [1, 2], "b": ["x", "y"]})
PNG = b"\x89PNG\r\n\x1a\n" + bytes(64)
JPEG = b"\xff\xd8\xff\xe0" + bytes(64)


def _write(path, kind: str) -> None:
    if kind == "parquet":
        pq.write_table(TABLE, path)
    elif kind == "orc":
        orc.write_table(TABLE, str(path))
    elif kind == "arrow":
        feather.write_feather(TABLE, str(path))
    elif kind == "json":
        path.write_text('{"a": 1, "b": "x"}\n{"a": 2, "b": "y"}\n')
    elif kind == "csv":
        path.write_text("a,b\n1,x\n2,y\n")
    elif kind == "png":
        path.write_bytes(PNG)
    elif kind == "jpeg":
        path.write_bytes(JPEG)
    elif kind == "gzip-csv":
        path.write_bytes(gzip.compress(b"a,b\n1,x\n2,y\n"))


#: (kind, Python phrase, SQL phrase)
CASES = [
    (
        "parquet",
        "Parquet, not TFRecord: read it with pl.read_parquet",
        "Parquet, not TFRecord: read it with read_parquet(...)",
    ),
    (
        "orc",
        "ORC, not TFRecord: read it with pyarrow.orc.read_table",
        "ORC, not TFRecord: read it with pyarrow.orc (DuckDB",
    ),
    (
        "arrow",
        "Arrow IPC (Feather), not TFRecord: read it with pl.read_ipc",
        "Arrow IPC (Feather), not TFRecord: read it with read_arrow(...)",
    ),
    ("json", "JSON, not TFRecord: read it with pl.read_json", "JSON, not TFRecord: read it with read_json(...)"),
    (
        "csv",
        "text (CSV or similar), not TFRecord: read it with pl.read_csv",
        "text (CSV or similar), not TFRecord: read it with read_csv(...)",
    ),
    (
        "png",
        "a PNG image, not TFRecord: read it with open(path, 'rb').read()",
        "a PNG image, not TFRecord: read it with read_blob(...)",
    ),
    (
        "jpeg",
        "a JPEG image, not TFRecord: read it with open(path, 'rb').read()",
        "a JPEG image, not TFRecord: read it with read_blob(...)",
    ),
    (
        "gzip-csv",
        "gzip-compressed text (CSV or similar), not TFRecord: read it with pl.read_csv",
        "gzip-compressed text (CSV or similar), not TFRecord: read it with read_csv(...)",
    ),
]


@pytest.fixture(params=CASES, ids=[c[0] for c in CASES])
def case(request, tmp_path):
    kind, python, sql = request.param
    path = tmp_path / f"data.{kind}"
    _write(path, kind)
    return str(path), python, sql


def _message(read) -> str:
    with pytest.raises(Exception) as info:
        read()
    return str(info.value)


def test_python_front_ends_name_the_format(case):
    path, python, _ = case
    for read in (lambda: tfsql.read_tfrecord(path), lambda: pl.scan_tfrecord(path).collect()):
        message = _message(read)
        assert "at byte 0: " in message and f"; its bytes are {python}" in message, message
        assert "not a TFRecord file (or is compressed" not in message


def test_connect_names_the_format_in_sql(case):
    path, _, sql = case
    message = _message(lambda: tfsql.connect().sql(f"SELECT * FROM tfrecord_scan('{path}')").fetchall())
    assert f"; its bytes are {sql}" in message, message


@pytest.mark.skipif(not extension_available(), reason="the DuckDB extension is not built")
def test_extension_names_the_format_in_sql(case):
    path, _, sql = case
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    tfsql.load_extension(con)
    message = _message(lambda: con.sql(f"SELECT * FROM tfrecord_scan('{path}')").fetchall())
    assert f"; its bytes are {sql}" in message, message


def test_tfrecord_and_unknown_bytes_keep_the_general_hint(tmp_path):
    path = tmp_path / "noise.tfrecord"
    path.write_bytes(bytes(range(256)) * 2)
    message = _message(lambda: tfsql.read_tfrecord(str(path)))
    assert (
        "; at byte 0 this usually means the file is not a TFRecord file (or is compressed: pass compression=)"
        in message
    )


@pytest.mark.parametrize(
    ("head", "found"),
    [
        (b"PAR1\x15\x04", "parquet"),
        (b"ORC\x0a", "orc"),
        (b"ARROW1\x00\x00", "arrow"),
        (b"\xff\xff\xff\xff\x10\x00", "arrow"),
        (PNG, "png"),
        (JPEG, "jpeg"),
        (b"\x1f\x8b\x08\x00", "gzip"),
        (b'\xef\xbb\xbf  [{"a": 1}]', "json"),
        (b"a\tb\r\n1\t2\r\n", "text"),
        (b"caf\xc3\xa9,1\n", "text"),
        (b"", None),
        (b"a\x00b", None),
        (bytes(codec.encode_frames(b"abc", __import__("numpy").array([0, 3], dtype="int64"))[0]), None),
    ],
)
def test_core_and_reference_sniff_alike(head, found):
    assert codec.sniff_format(head) == found
    assert reference_sniff_format(head) == found
