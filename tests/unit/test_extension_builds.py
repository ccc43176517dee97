"""Which extension build a DuckDB loads: the V2 build made for exactly its version on
DuckDB 2, the v1 build on DuckDB 1.x (tfsql.duckdb.extension.duckdb_extension_path), and
``tfsql build-extension`` / ``tfsql extension-path --duckdb-version``."""

import os
import shutil
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


def missing_v2_build(duckdb_version: str, v1_build: str, compiler: str | None) -> str | None:
    """Why this installation should hold a V2 build and does not, or None.

    setup.py builds the V2 extension leniently (no -Werror; a failed compile is a note and
    leaves no ``tfsql/duckdb-v*/``), so the V2 tests would skip silently. Where DuckDB 2 is
    installed, the v1 build exists (DuckDB's headers were reachable) and a C compiler is
    there, a missing V2 build is a failed build."""
    if not extension_build.is_v2_version(duckdb_version) or not os.path.isfile(v1_build) or compiler is None:
        return None
    if v2_extension_path(duckdb_version) is not None:
        return None
    return (
        f"DuckDB {duckdb_version} is installed, the v1 build {v1_build} exists and the C compiler "
        f"{compiler} is there, but there is no V2 build: setup.py's V2 compile failed (its note in "
        "the build output says why; `tfsql build-extension` shows the compiler's error)"
    )


def test_duckdb_2_with_a_compiler_and_the_v1_build_has_its_v2_build():
    compiler = shutil.which(os.environ.get("CC") or "cc")
    problem = missing_v2_build(duckdb.__version__, V1, compiler)
    assert problem is None, problem


def test_a_missing_v2_build_is_named(monkeypatch, tmp_path):
    v1 = tmp_path / "tfsql.duckdb_extension"
    v1.write_bytes(b"")
    monkeypatch.setattr(extension_build, "PACKAGE", str(tmp_path))
    monkeypatch.setattr(extension_build, "cache_root", lambda: str(tmp_path / "cache"))
    problem = missing_v2_build("2.0.1", str(v1), "/usr/bin/cc")
    assert problem is not None and "there is no V2 build: setup.py's V2 compile failed" in problem
    # DuckDB 1.x, no v1 build, or no compiler: nothing is missing
    assert missing_v2_build("1.4.5", str(v1), "/usr/bin/cc") is None
    assert missing_v2_build("2.0.1", str(tmp_path / "none"), "/usr/bin/cc") is None
    assert missing_v2_build("2.0.1", str(v1), None) is None
    # with the build there, nothing is missing
    (tmp_path / "duckdb-v2.0.1").mkdir()
    (tmp_path / "duckdb-v2.0.1" / "tfsql.duckdb_extension").write_bytes(b"")
    assert missing_v2_build("2.0.1", str(v1), "/usr/bin/cc") is None
