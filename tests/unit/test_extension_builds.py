"""Which extension build a DuckDB loads: the V2 build made for exactly its version on
DuckDB 2, the v1 build on DuckDB 1.x (tfsql.duckdb.extension.duckdb_extension_path), and
``tfsql build-extension`` / ``tfsql extension-path --duckdb-version``."""

import os
import subprocess
import sys

import duckdb
import pytest

from tfsql import extension_build
from tfsql.duckdb import extension
from tfsql.duckdb.extension import ExtensionNotAvailable, duckdb_extension_path, v2_extension_path

V1 = os.path.join(extension_build.PACKAGE, extension_build.EXTENSION_FILE)
needs_v1 = pytest.mark.skipif(not os.path.isfile(V1), reason="built without the DuckDB extension")


@needs_v1
def test_duckdb_1_loads_the_v1_build(monkeypatch):
    monkeypatch.delenv("TFSQL_DUCKDB_API", raising=False)
    assert duckdb_extension_path("1.4.5") == V1
    assert duckdb_extension_path("1.5.6") == V1


@needs_v1
def test_forcing_v1_on_duckdb_2(monkeypatch):
    monkeypatch.setenv("TFSQL_DUCKDB_API", "v1")
    assert duckdb_extension_path("2.0.1") == V1


def test_forcing_v2_without_a_build_says_how_to_build_it(monkeypatch, tmp_path):
    monkeypatch.setenv("TFSQL_DUCKDB_API", "v2")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    with pytest.raises(ExtensionNotAvailable, match=r"DuckDB 2\.99\.0: run `tfsql build-extension`"):
        duckdb_extension_path("2.99.0")


@needs_v1
def test_duckdb_2_without_its_build_loads_v1_and_says_so_once(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("TFSQL_DUCKDB_API", "auto")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(extension, "V2_BY_DEFAULT", True)
    monkeypatch.setattr(extension, "_warned", set())
    assert duckdb_extension_path("2.99.0") == V1
    assert duckdb_extension_path("2.99.0") == V1
    err = capsys.readouterr().err
    assert err.count("Run `tfsql build-extension`") == 1
    assert "DuckDB 2.99.0" in err


def test_a_build_in_the_cache_is_found(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    built = tmp_path / "tfsql" / "duckdb-v2.98.0" / "tfsql.duckdb_extension"
    built.parent.mkdir(parents=True)
    built.write_bytes(b"x")
    assert v2_extension_path("2.98.0") == str(built)
    assert v2_extension_path("1.5.6") is None


def _v2_here():
    return v2_extension_path(duckdb.__version__)


@pytest.mark.skipif(_v2_here() is None, reason="no V2 build for the duckdb installed here (DuckDB 1.x?)")
def test_the_v2_build_loads_in_its_duckdb_and_says_its_abi():
    path = _v2_here()
    with open(path, "rb") as f:
        footer = f.read()[-512:]
    fields = [footer[i : i + 32].rstrip(b"\0").decode() for i in range(0, 256, 32)][::-1]
    assert fields[0] == "4"
    assert fields[2] == "v" + duckdb.__version__
    assert fields[4] == "C_STRUCT_UNSTABLE"
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.execute("LOAD '" + path.replace("'", "''") + "'")
    assert con.sql("SELECT loaded FROM duckdb_extensions() WHERE extension_name = 'tfsql'").fetchall() == [(True,)]


@needs_v1
def test_extension_path_for_another_duckdb_command():
    out = subprocess.run(
        [sys.executable, "-m", "tfsql", "extension-path", "--duckdb-version", "1.5.6"],
        capture_output=True,
        text=True,
        env={**os.environ, "TFSQL_DUCKDB_API": "auto"},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == V1


def test_build_extension_refuses_duckdb_1():
    out = subprocess.run(
        [sys.executable, "-m", "tfsql", "build-extension", "--duckdb-version", "1.5.6"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2
    assert "DuckDB 1.5.6 has no V2 C API" in out.stderr
