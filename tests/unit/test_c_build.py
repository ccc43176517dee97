"""The C sources: each compiles alone with ``-Wall -Wextra -Werror``, and the layout rules
hold (no ``.c`` file includes another; the bindings include only the core's public
header; the core has no Python).

The source lists and the DuckDB header lookup are setup.py's own, so the test compiles
exactly what the build compiles.
"""

import importlib.util
import os
import re
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "tfsql"
FLAGS = ["-c", "-O3", "-std=c99", "-fno-strict-aliasing", "-fPIC", "-Wall", "-Wextra", "-Werror"]


def _setup_module():
    spec = importlib.util.spec_from_file_location("tfsql_setup", ROOT / "setup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # its setup() call runs only as __main__
    return module


SETUP = _setup_module()


def _compiler() -> str:
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        pytest.skip(f"no C compiler ({compiler}) on this machine")
    return compiler


def _compile(source: str, include_dirs: list, tmp_path: Path) -> None:
    command = [_compiler(), *FLAGS, *(f"-I{d}" for d in include_dirs), source, "-o", str(tmp_path / "out.o")]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, f"{source} does not compile cleanly:\n{result.stderr}"
    assert result.stderr == "", f"{source} printed diagnostics:\n{result.stderr}"


EB = SETUP.EB


def _duckdb_headers():
    named = os.environ.get("TFSQL_DUCKDB_INCLUDE")
    for directory in (named, EB.header_cache(SETUP.DUCKDB_HEADERS_VERSION)):
        if directory and EB.has_headers(directory, EB.V1_HEADERS):
            return directory
    return None


def _duckdb_v2_headers():
    version = EB.running_duckdb_version() or ""
    named = os.environ.get("TFSQL_DUCKDB_V2_INCLUDE")
    for directory in (named, EB.header_cache(version)):
        if directory and EB.has_headers(directory, EB.V2_HEADERS):
            return directory
    return None


def test_setup_lists_every_c_source():
    """The build compiles every .c file of the core and of the extension's binding."""
    assert sorted(SETUP.CORE_SOURCES) == sorted(str(p.relative_to(ROOT)) for p in (PACKAGE / "core").glob("*.c"))
    assert sorted(SETUP.EXTENSION_SOURCES) == sorted(
        str(p.relative_to(ROOT)) for p in (PACKAGE / "duckdb_ext").glob("*.c")
    )
    assert "tfsql/core/decoder.c" in SETUP.CORE_SOURCES
    assert "tfsql/duckdb_ext/entry.c" in SETUP.EXTENSION_SOURCES
    parts = EB.sources(str(PACKAGE))
    assert sorted(parts["v2"]) == sorted(str(p.relative_to(ROOT)) for p in (PACKAGE / "duckdb_v2").glob("*.c"))
    assert "tfsql/duckdb_v2/entry.c" in parts["v2"]
    assert "tfsql/duckdb_ext/reading.c" in parts["common"]
    assert "tfsql/duckdb_ext/scan.c" not in parts["common"]


def test_the_engine_neutral_extension_files_call_no_duckdb_function():
    """The files both DuckDB bindings compile (they include ext_common.h, not duckdb_ext.h)
    use nothing of either DuckDB header, and ext_common.h includes neither."""
    parts = EB.sources(str(PACKAGE))
    assert len(parts["common"]) >= 8
    offenders = [
        s
        for s in parts["common"]
        if re.search(r"\bduckdb_\w+\s*\(|\bduckdb_(type|value|vector)\b", (ROOT / s).read_text())
    ]
    assert offenders == []
    assert [inc for inc in _includes(PACKAGE / "duckdb_ext" / "ext_common.h") if "duckdb" in inc] == []


@pytest.mark.parametrize(
    "source",
    [os.path.join("tfsql", "core", p.name) for p in sorted((PACKAGE / "core").glob("*.c"))]
    + [os.path.join("tfsql", "_native_module.c")],
)
def test_core_and_python_binding_compile_without_a_warning(source, tmp_path):
    python_include = sysconfig.get_paths()["include"]
    if not (Path(python_include) / "Python.h").is_file():
        pytest.skip(f"no Python.h in {python_include}")
    _compile(source, [python_include], tmp_path)


@pytest.mark.parametrize(
    "source", [os.path.join("tfsql", "duckdb_ext", p.name) for p in sorted((PACKAGE / "duckdb_ext").glob("*.c"))]
)
def test_duckdb_extension_sources_compile_without_a_warning(source, tmp_path):
    headers = _duckdb_headers()
    if headers is None:
        pytest.skip("no DuckDB C API headers (set TFSQL_DUCKDB_INCLUDE, or build once to cache them)")
    _compile(source, [headers, str(PACKAGE / "core")], tmp_path)


@pytest.mark.parametrize(
    "source", [os.path.join("tfsql", "duckdb_v2", p.name) for p in sorted((PACKAGE / "duckdb_v2").glob("*.c"))]
)
def test_duckdb_v2_extension_sources_compile_without_a_warning(source, tmp_path):
    headers = _duckdb_v2_headers()
    if headers is None:
        pytest.skip("no DuckDB V2 C API headers for the duckdb installed here (DuckDB 1.x, or not built yet)")
    _compile(source, [headers, str(PACKAGE / "core"), str(PACKAGE / "duckdb_ext")], tmp_path)


def _c_files():
    return sorted(p for p in PACKAGE.rglob("*") if p.suffix in (".c", ".h"))


def _includes(path: Path) -> list:
    return re.findall(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', path.read_text(), re.M)


def test_no_c_file_includes_another_c_file():
    files = _c_files()
    assert len(files) > 10
    offenders = [(str(p.relative_to(ROOT)), inc) for p in files for inc in _includes(p) if inc.endswith(".c")]
    assert offenders == []


def test_the_bindings_include_only_the_public_core_header():
    bindings = [PACKAGE / "_native_module.c", *sorted((PACKAGE / "duckdb_ext").glob("*.[ch]"))]
    private = [(str(p.relative_to(ROOT)), inc) for p in bindings for inc in _includes(p) if "core_internal" in inc]
    assert private == []
    assert "core/tfsql_core.h" in _includes(PACKAGE / "_native_module.c")
    assert "tfsql_core.h" in _includes(PACKAGE / "duckdb_ext" / "ext_common.h")
    assert "ext_common.h" in _includes(PACKAGE / "duckdb_ext" / "duckdb_ext.h")
    assert "ext_common.h" in _includes(PACKAGE / "duckdb_v2" / "v2_ext.h")


def test_the_core_has_no_python():
    core = sorted((PACKAGE / "core").glob("*.[ch]"))
    assert [str(p.relative_to(ROOT)) for p in core if "Python.h" in _includes(p)] == []
    assert [str(p.relative_to(ROOT)) for p in core if re.search(r"\bPy[A-Z_]\w*", p.read_text())] == []


def test_one_file_defines_the_duckdb_api_table():
    """duckdb_extension.h: one translation unit defines the API global: api_version.c,
    whose capi_load fills it for the engine that loads the extension (the entry point
    macros, which would define it too, are not used); every other one declares it extern."""
    sources = sorted((PACKAGE / "duckdb_ext").glob("*.c"))
    definition = re.compile(r"^duckdb_ext_api_v1 duckdb_ext_api\b|^\s*DUCKDB_EXTENSION_(GLOBAL|ENTRYPOINT\w*)\b", re.M)
    defining = [p.name for p in sources if definition.search(p.read_text())]
    assert defining == ["api_version.c"]
    assert "DUCKDB_EXTENSION_EXTERN" in (PACKAGE / "duckdb_ext" / "duckdb_ext.h").read_text()
