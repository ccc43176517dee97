"""Issue 33 item 6: every hint is spelled in its front end's own dialect — Python
keywords (``on_corrupt='skip'``), SQL named parameters (``on_corrupt := 'skip'``), the
command's flags (``--on-corrupt skip``) — from the three spellings the message templates
carry (:data:`tfsql.messages.DIALECTS`); no front end's refusal spells another's."""

from __future__ import annotations

import duckdb
import polars as pl
import pyarrow as pa
import pytest

import tfsql
from tfsql.cli import main
from tfsql.duckdb.extension import extension_available
from tfsql.messages import DIALECTS

#: What only each dialect writes.
OWN = {
    "python": ["='skip'", "glob=False", "schema=", "missing_columns='insert'", "compression="],
    "sql": [":="],
    "cli": ["--on-corrupt", "--glob", "--schema", "--missing-columns", "--compression"],
}


def _foreign(dialect: str) -> list[str]:
    return [mark for other, marks in OWN.items() if other != dialect for mark in marks]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("dialects")
    tfsql.write_tfrecord(pa.table({"id": [1, 2]}), str(root / "ok.tfrecord"))
    tfsql.write_tfrecord(pa.table({"id": ["x"]}), str(root / "kinds" / "a.tfrecord"))
    tfsql.write_tfrecord(pa.table({"id": [1.5]}), str(root / "kinds" / "b.tfrecord"))
    (root / "notes.txt").write_text("id,name\n1,a\n")
    return root


def _cases(root):
    """(what, Python keywords, SQL parameters, CLI arguments) of each refusal."""
    ok, kinds, notes = str(root / "ok.tfrecord"), str(root / "kinds"), str(root / "notes.txt")
    glob = str(root / "none" / "*.tfrecord")
    return [
        ("not tfrecord", (notes, {}), f"'{notes}'", [notes]),
        (
            "missing column",
            (ok, {"schema": {"id": pa.int64(), "idd": pa.int64()}}),
            f"'{ok}', schema := {{'id': 'BIGINT', 'idd': 'BIGINT'}}",
            [ok, "--schema", "id BIGINT, idd BIGINT"],
        ),
        ("kind conflict", (kinds, {}), f"'{kinds}'", [kinds]),
        ("glob", (glob, {}), f"'{glob}'", [glob]),
        ("compression", (ok, {"compression": "gzip"}), f"'{ok}', compression := 'gzip'", [ok, "--compression", "gzip"]),
    ]


def _refusal(call) -> str:
    with pytest.raises(Exception) as info:
        call()
    return str(info.value)


def _check(dialect: str, message: str) -> None:
    found = [mark for mark in _foreign(dialect) if mark in message]
    assert not found, (dialect, found, message)
    assert any(mark in message for mark in OWN[dialect]), (dialect, message)


@pytest.mark.parametrize("case", range(5), ids=["not-tfrecord", "missing", "kinds", "glob", "compression"])
def test_python_and_polars_speak_python(data, case):
    _, (path, options), _, _ = _cases(data)[case]
    _check("python", _refusal(lambda: tfsql.read_tfrecord(path, **options)))
    _check("python", _refusal(lambda: pl.scan_tfrecord(path, **options).collect()))


@pytest.mark.parametrize("case", range(5), ids=["not-tfrecord", "missing", "kinds", "glob", "compression"])
def test_connect_speaks_sql(data, case):
    _, _, sql, _ = _cases(data)[case]
    _check("sql", _refusal(lambda: tfsql.connect().sql(f"SELECT * FROM tfrecord_scan({sql})").fetchall()))


@pytest.mark.skipif(not extension_available(), reason="the DuckDB extension is not built")
@pytest.mark.parametrize("case", range(5), ids=["not-tfrecord", "missing", "kinds", "glob", "compression"])
def test_extension_speaks_sql(data, case):
    _, _, sql, _ = _cases(data)[case]
    con = tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))
    _check("sql", _refusal(lambda: con.sql(f"SELECT * FROM tfrecord_scan({sql})").fetchall()))


@pytest.mark.parametrize("case", range(5), ids=["not-tfrecord", "missing", "kinds", "glob", "compression"])
def test_cli_speaks_flags(data, case, capsys):
    _, _, _, args = _cases(data)[case]
    assert main(["head", *args]) != 0
    _check("cli", capsys.readouterr().err)


def test_every_dialect_spells_every_phrase():
    assert set(DIALECTS) == {"python", "sql", "cli"}
    assert set(DIALECTS["cli"]) == set(DIALECTS["python"]) == set(DIALECTS["sql"])
