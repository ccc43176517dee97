"""Build tfsql's DuckDB extensions: the sources, DuckDB's headers, the metadata footer.

Two binaries bind the C core (``tfsql/core/``) to DuckDB:

- **v1** ``tfsql/tfsql.duckdb_extension``: DuckDB's stable C API (compiled against the
  v1.5.6 headers, declaring v1.2.0), loads in DuckDB 1.2 and later. ``setup.py`` builds it
  with setuptools' compiler.
- **V2** ``tfsql/duckdb-v<X.Y.Z>/tfsql.duckdb_extension``: DuckDB 2's V2 C API, which is
  "unstable": the file loads only in DuckDB exactly X.Y.Z (its footer says
  ``C_STRUCT_UNSTABLE``, ``vX.Y.Z``). ``setup.py`` builds it for the DuckDB the install
  gets; ``tfsql build-extension`` builds it again for the DuckDB installed now.

DuckDB's headers are not part of this repository: each DuckDB source distribution on
the package index holds them (``external/duckdb/src/include/``); they are fetched once
with ``pip download`` and cached under ``~/.cache/tfsql/duckdb-<version>-include``.
``TFSQL_DUCKDB_INCLUDE`` (v1) and ``TFSQL_DUCKDB_V2_INCLUDE`` (V2) name a directory
holding them instead.

This module imports nothing from tfsql (``setup.py`` loads it by path, before tfsql's
dependencies exist).

Examples
--------
>>> metadata_footer("linux_amd64", "0.1.0", "v2.0.1", "C_STRUCT_UNSTABLE")[:4]
b'\\x00\\x00\\x00\\x00'
>>> len(metadata_footer("linux_amd64", "0.1.0", "v1.2.0", "C_STRUCT"))
512
>>> v2_directory_name("2.0.1")
'duckdb-v2.0.1'
>>> is_v2_version("2.0.1"), is_v2_version("1.5.6"), is_v2_version("2.1.0.dev12")
(True, False, True)
>>> duckdb_version_of("v1.5.6 (Variegata) 069cc9f9b5"), duckdb_version_of("2.0.1")
('1.5.6', '2.0.1')
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
from concurrent.futures import ThreadPoolExecutor

#: The file name DuckDB loads: its stem ("tfsql") names the extension and its entry
#: symbol (``tfsql_init_c_api`` for v1, ``tfsql_init_c_api_v2`` for V2).
EXTENSION_FILE = "tfsql.duckdb_extension"
V1_HEADERS = ("duckdb.h", "duckdb_extension.h")
V2_HEADERS = ("duckdb_v2.h", "duckdb_extension_v2.h")
#: The compiler flags of both extensions.
C_FLAGS = ["-O3", "-std=c99", "-fno-strict-aliasing", "-fPIC", "-fvisibility=hidden", "-Wall", "-Wextra"]

PACKAGE = os.path.dirname(os.path.abspath(__file__))


def note(message: str) -> None:
    """One line on standard error, as the build speaks."""
    print(f"tfsql: {message}", file=sys.stderr, flush=True)


def duckdb_platform() -> str | None:
    """DuckDB's platform string for this machine (``linux_amd64``, ``osx_arm64``...)."""
    machine = platform.machine().lower()
    arch = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(machine)
    if arch is None:
        return None
    if sys.platform.startswith("linux"):
        musl = (
            platform.libc_ver()[0] != "glibc" and any(name.startswith("ld-musl") for name in os.listdir("/lib"))
            if os.path.isdir("/lib")
            else False
        )
        return f"linux_{arch}" + ("_musl" if musl else "")
    if sys.platform == "darwin":
        return f"osx_{arch}"
    return None


def metadata_footer(platform_name: str, extension_version: str, duckdb_version: str, abi: str) -> bytes:
    """DuckDB's 512-byte extension footer: eight 32-byte fields (stored last to first),
    then 256 bytes of signature (zeros: the file is unsigned). ``duckdb_version`` is the C
    API version for ``abi="C_STRUCT"`` and the exact engine version (``v2.0.1``) for
    ``C_STRUCT_UNSTABLE``."""
    fields = ["4", platform_name, duckdb_version, extension_version, abi, "", "", ""]
    packed = b"".join(f.encode("ascii").ljust(32, b"\0")[:32] for f in reversed(fields))
    return packed + b"\0" * 256


def is_v2_version(version: str) -> bool:
    """Whether DuckDB ``version`` has the V2 C API (DuckDB 2 and later)."""
    match = re.match(r"v?(\d+)\.", version)
    return match is not None and int(match.group(1)) >= 2


def duckdb_version_of(text: str) -> str:
    """The version in ``text``: a version ("2.0.1", "v2.0.1") or what ``duckdb --version``
    prints ("v1.5.6 (Variegata) 069cc9f9b5"). Raises ValueError when there is none."""
    match = re.search(r"\bv?(\d+\.\d+\.\d+(?:[.\w-]*)?)", text.strip())
    if match is None:
        raise ValueError(f"no DuckDB version in {text!r} (expected X.Y.Z, or what duckdb --version prints)")
    return match.group(1)


def v2_directory_name(version: str) -> str:
    """The directory, inside the package or the cache, of the V2 binary for ``version``."""
    return "duckdb-v" + version.lstrip("v")


def cache_root() -> str:
    """``$XDG_CACHE_HOME/tfsql`` (``~/.cache/tfsql``): fetched headers, rebuilt binaries."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tfsql")


def header_cache(version: str) -> str:
    return os.path.join(cache_root(), f"duckdb-{version}-include")


def has_headers(directory: str | None, names: tuple) -> bool:
    return bool(directory) and all(os.path.isfile(os.path.join(directory, h)) for h in names)  # type: ignore[arg-type]


def _download_headers(version: str, target: str) -> None:
    """Fetch the duckdb ``version`` sdist with pip; keep its C API headers in ``target``."""
    wanted = V1_HEADERS + V2_HEADERS
    with tempfile.TemporaryDirectory() as tmp:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", "duckdb"]
        command += ["--disable-pip-version-check", "-q", "-d", tmp, f"duckdb=={version}"]
        note(
            f"fetching the DuckDB {version} C API headers (pip download duckdb, once; set "
            "TFSQL_DUCKDB_INCLUDE / TFSQL_DUCKDB_V2_INCLUDE to a directory holding them to skip this)"
        )
        result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        archives = [f for f in os.listdir(tmp) if f.endswith((".tar.gz", ".tgz"))]
        if result.returncode != 0 or not archives:
            raise RuntimeError("pip download duckdb failed: " + result.stdout.strip()[-500:])
        os.makedirs(os.path.dirname(target), exist_ok=True)
        staging = tempfile.mkdtemp(dir=os.path.dirname(target))
        try:
            with tarfile.open(os.path.join(tmp, archives[0])) as archive:
                for member in archive.getmembers():
                    name = os.path.basename(member.name)
                    if name in wanted and member.name.replace("\\", "/").endswith("src/include/" + name):
                        source = archive.extractfile(member)
                        if source is not None:
                            with open(os.path.join(staging, name), "wb") as out:
                                shutil.copyfileobj(source, out)
            if not has_headers(staging, V1_HEADERS):
                raise RuntimeError("the duckdb sdist holds no src/include/duckdb_extension.h")
            if os.path.isdir(target):
                shutil.rmtree(target)
            os.replace(staging, target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)


def find_headers(version: str, names: tuple, environment_variable: str) -> str | None:
    """The directory holding DuckDB ``version``'s headers ``names``, or None (with a note):
    the directory in ``environment_variable``, else the cache, else fetched into it."""
    named = os.environ.get(environment_variable)
    if named:
        if has_headers(named, names):
            return named
        note(f"{environment_variable}={named} does not hold {' and '.join(names)}")
        return None
    cached = header_cache(version)
    if has_headers(cached, names):
        return cached
    try:
        _download_headers(version, cached)
    except Exception as exc:  # any failure only means: no extension
        note(f"could not get the DuckDB {version} headers ({exc})")
        return None
    if not has_headers(cached, names):
        note(f"the duckdb {version} source distribution holds no {' / '.join(names)}")
        return None
    return cached


def _includes(path: str) -> list:
    with open(path) as f:
        return re.findall(r'^\s*#\s*include\s*"([^"]+)"', f.read(), re.M)


def sources(root: str = PACKAGE) -> dict:
    """The C sources of each binary, relative to the repository (``root`` is the package):
    ``core`` (tfsql/core/), ``v1`` (tfsql/duckdb_ext/), ``common`` (the files of
    tfsql/duckdb_ext/ that call no DuckDB function: they include ext_common.h, not
    duckdb_ext.h) and ``v2`` (tfsql/duckdb_v2/)."""

    def listed(directory: str) -> list:
        full = os.path.join(root, directory)
        if not os.path.isdir(full):
            return []
        return sorted(os.path.join("tfsql", directory, n) for n in os.listdir(full) if n.endswith(".c"))

    top = os.path.dirname(root)
    v1 = listed("duckdb_ext")
    common = [s for s in v1 if "duckdb_ext.h" not in _includes(os.path.join(top, s))]
    return {"core": listed("core"), "v1": v1, "common": common, "v2": listed("duckdb_v2")}


def running_duckdb_version() -> str | None:
    """The version of the duckdb Python package importable here, or None."""
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:  # pragma: no cover - Python >= 3.8 has it
        return None
    try:
        return version("duckdb")
    except PackageNotFoundError:
        return None


def build_v2(
    version: str, target: str, extension_version: str, root: str = PACKAGE, compiler: str | None = None
) -> str:
    """Compile the V2 extension for DuckDB ``version`` into ``target`` (a file path),
    written under a temporary name and renamed. Raises RuntimeError saying why not."""
    platform_name = duckdb_platform()
    if sys.platform == "win32" or platform_name is None:
        raise RuntimeError(f"the extension is built for Linux and macOS only, not {sys.platform} {platform.machine()}")
    include = find_headers(version, V2_HEADERS, "TFSQL_DUCKDB_V2_INCLUDE")
    if include is None:
        raise RuntimeError(f"no DuckDB {version} V2 headers")
    parts = sources(root)
    if not parts["v2"]:
        raise RuntimeError("no V2 sources (tfsql/duckdb_v2/*.c)")
    top = os.path.dirname(root)
    cc = compiler or os.environ.get("CC") or "cc"
    includes = [f"-I{include}", f"-I{os.path.join(root, 'core')}", f"-I{os.path.join(root, 'duckdb_ext')}"]
    with tempfile.TemporaryDirectory() as tmp:

        def compile_one(source: str) -> str:
            obj = os.path.join(tmp, source.replace(os.sep, "_") + ".o")
            command = [cc, "-c", *C_FLAGS, "-D_GNU_SOURCE", *includes, os.path.join(top, source), "-o", obj]
            result = subprocess.run(command, capture_output=True, text=True)
            if result.returncode != 0:
                raise RuntimeError(f"{cc} failed on {source}:\n{result.stderr[-2000:]}")
            return obj

        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            objects = list(pool.map(compile_one, parts["core"] + parts["common"] + parts["v2"]))
        library = os.path.join(tmp, "tfsql_v2.so")
        link = [cc, "-shared", *(["-undefined", "dynamic_lookup"] if sys.platform == "darwin" else [])]
        link += [*objects, "-o", library] + (["-ldl", "-lpthread"] if sys.platform != "darwin" else [])
        result = subprocess.run(link, capture_output=True, text=True)
        if result.returncode != 0:
            raise RuntimeError(f"linking the V2 extension failed:\n{result.stderr[-2000:]}")
        with open(library, "rb") as built:
            binary = built.read()
    os.makedirs(os.path.dirname(target), exist_ok=True)
    partial = f"{target}.tmp-{os.getpid()}"
    with open(partial, "wb") as f:
        f.write(
            binary + metadata_footer(platform_name, extension_version, "v" + version.lstrip("v"), "C_STRUCT_UNSTABLE")
        )
    os.replace(partial, target)
    return target
