"""Build the C core, ``tfsql._native``, and the DuckDB extension ``tfsql.duckdb_extension``.

Everything else is declared in pyproject.toml. Both binaries compile the same C core
(tfsql/core/*.c, header tfsql/core/tfsql_core.h) with their binding: the Python module
adds tfsql/_native_module.c, the DuckDB extension tfsql/duckdb_ext/*.c, compiled
against DuckDB's C extension API headers, which are not part of this repository: the
build takes them from the directory in ``TFSQL_DUCKDB_INCLUDE`` (it must hold ``duckdb.h`` and
``duckdb_extension.h``), else from a cache, else from the ``duckdb`` source
distribution fetched with ``pip download``. When none works the install goes on without
the extension and says so once; ``tfsql.connect()`` then uses its Python path.
"""

import os
import platform
import shutil
import subprocess
import sys
import tarfile
import tempfile

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

#: The DuckDB release whose headers the extension is compiled against: C API v1.5.6, whose
#: copy functions give COPY ... (FORMAT tfrecord). The extension declares v1.2.0 (below)
#: and asks for the v1.5.6 functions only on engines that have them
#: (tfsql/duckdb_ext/api_version.c), so the one file loads in DuckDB 1.2 and later.
DUCKDB_HEADERS_VERSION = "1.5.6"
#: The C API version written in the extension's metadata footer.
DUCKDB_CAPI_VERSION = "v1.2.0"
EXTENSION_FILE = "tfsql.duckdb_extension"
HEADERS = ("duckdb.h", "duckdb_extension.h")

#: The C core (tfsql/core/*.c, one public header tfsql/core/tfsql_core.h), compiled into
#: both binaries: the Python module tfsql._native and the DuckDB extension.
CORE_SOURCES = sorted(
    os.path.join("tfsql", "core", name)
    for name in os.listdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "tfsql", "core"))
    if name.endswith(".c")
)
#: The DuckDB extension's binding (tfsql/duckdb_ext/*.c, private header duckdb_ext.h).
EXTENSION_SOURCES = sorted(
    os.path.join("tfsql", "duckdb_ext", name)
    for name in os.listdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "tfsql", "duckdb_ext"))
    if name.endswith(".c")
)
CORE_HEADERS = [os.path.join("tfsql", "core", "tfsql_core.h"), os.path.join("tfsql", "core", "core_internal.h")]

if sys.platform == "win32":
    extra_compile_args = ["/O2", "/W4"]
else:
    # hidden: the core's functions stay inside the module (PyInit_ is exported by its macro)
    extra_compile_args = ["-O3", "-std=c99", "-fno-strict-aliasing", "-fvisibility=hidden", "-Wall", "-Wextra"]


def _note(message):
    print(f"tfsql: {message}", file=sys.stderr, flush=True)


def duckdb_platform():
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


def _has_headers(directory):
    return directory and all(os.path.isfile(os.path.join(directory, h)) for h in HEADERS)


def _cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tfsql", f"duckdb-{DUCKDB_HEADERS_VERSION}-include")


def _download_headers(target):
    """Fetch the duckdb sdist with pip and extract the two C API headers into `target`."""
    with tempfile.TemporaryDirectory() as tmp:
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--no-binary",
            "duckdb",
            "--disable-pip-version-check",
            "-q",
            "-d",
            tmp,
            f"duckdb=={DUCKDB_HEADERS_VERSION}",
        ]
        _note(
            f"fetching the DuckDB {DUCKDB_HEADERS_VERSION} C API headers (pip download duckdb, "
            "once; set TFSQL_DUCKDB_INCLUDE to a directory holding duckdb.h and "
            "duckdb_extension.h to skip this)"
        )
        result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        archives = [f for f in os.listdir(tmp) if f.endswith((".tar.gz", ".tgz"))]
        if result.returncode != 0 or not archives:
            raise RuntimeError("pip download duckdb failed: " + result.stdout.strip()[-500:])
        staging = tempfile.mkdtemp(dir=os.path.dirname(target) if os.path.isdir(os.path.dirname(target)) else None)
        try:
            with tarfile.open(os.path.join(tmp, archives[0])) as archive:
                for member in archive.getmembers():
                    name = os.path.basename(member.name)
                    if name in HEADERS and member.name.replace("\\", "/").endswith("src/include/" + name):
                        source = archive.extractfile(member)
                        with open(os.path.join(staging, name), "wb") as out:
                            shutil.copyfileobj(source, out)
            if not _has_headers(staging):
                raise RuntimeError("the duckdb sdist holds no src/include/duckdb_extension.h")
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if os.path.isdir(target):
                shutil.rmtree(target)
            os.replace(staging, target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)


def find_duckdb_headers():
    """The directory holding duckdb.h and duckdb_extension.h, or None (with a note)."""
    named = os.environ.get("TFSQL_DUCKDB_INCLUDE")
    if named:
        if _has_headers(named):
            return named
        _note(f"TFSQL_DUCKDB_INCLUDE={named} does not hold duckdb.h and duckdb_extension.h")
        return None
    cached = _cache_dir()
    if _has_headers(cached):
        return cached
    try:
        os.makedirs(os.path.dirname(cached), exist_ok=True)
        _download_headers(cached)
    except Exception as exc:  # any failure only means: no extension
        _note(f"could not get the DuckDB headers ({exc})")
        return None
    return cached


def metadata_footer(platform_name, extension_version):
    """DuckDB's 512-byte extension footer: eight 32-byte fields (stored last to first),
    then 256 bytes of signature (zeros: the file is unsigned)."""
    fields = ["4", platform_name, DUCKDB_CAPI_VERSION, extension_version, "C_STRUCT", "", "", ""]
    packed = b"".join(f.encode("ascii").ljust(32, b"\0")[:32] for f in reversed(fields))
    return packed + b"\0" * 256


def _version():
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "pyproject.toml")) as f:
        for line in f:
            if line.startswith("version"):
                return line.split("=", 1)[1].strip().strip('"')
    return "0"


class BuildWithDuckDBExtension(build_ext):
    """build_ext that also builds tfsql.duckdb_extension (optional: never fails the build)."""

    def run(self):
        super().run()
        self._extension_output = None
        if os.path.exists(self._target()):  # never ship an extension left by an earlier build
            os.remove(self._target())
        if os.environ.get("TFSQL_NO_DUCKDB_EXTENSION"):
            return
        try:
            self._build_duckdb_extension()
        except Exception as exc:
            _note(f"the DuckDB extension was not built ({exc}); tfsql.connect() will use its Python path")

    def _target(self):
        if self.inplace:
            return os.path.join(os.path.dirname(os.path.abspath(__file__)), "tfsql", EXTENSION_FILE)
        return os.path.join(self.build_lib, "tfsql", EXTENSION_FILE)

    def _build_duckdb_extension(self):
        platform_name = duckdb_platform()
        if sys.platform == "win32" or platform_name is None:
            raise RuntimeError(
                f"the extension is built for Linux and macOS only, not {sys.platform} {platform.machine()}"
            )
        include = find_duckdb_headers()
        if include is None:
            raise RuntimeError("no DuckDB headers")
        here = os.path.dirname(os.path.abspath(__file__))
        sources = [os.path.join(here, name) for name in CORE_SOURCES + EXTENSION_SOURCES]
        objects = self.compiler.compile(
            sources,
            output_dir=os.path.join(self.build_temp, "duckdb_extension"),
            include_dirs=[include, os.path.join(here, "tfsql", "core")],
            extra_postargs=[
                "-O3",
                "-std=c99",
                "-fno-strict-aliasing",
                "-fPIC",
                "-fvisibility=hidden",
                "-Wall",
                "-Wextra",
            ],
        )
        target = self._target()
        os.makedirs(os.path.dirname(target), exist_ok=True)
        library = os.path.join(self.build_temp, "tfsql_duckdb_extension.so")
        link_args = ["-shared"] + (["-undefined", "dynamic_lookup"] if sys.platform == "darwin" else [])
        self.compiler.link_shared_object(
            objects, library, libraries=["dl", "pthread"] if sys.platform != "darwin" else [], extra_preargs=link_args
        )
        with open(library, "rb") as f:
            binary = f.read()
        partial = target + ".tmp"
        with open(partial, "wb") as f:
            f.write(binary + metadata_footer(platform_name, _version()))
        os.replace(partial, target)
        self._extension_output = target

    def get_outputs(self):
        outputs = super().get_outputs()
        target = getattr(self, "_extension_output", None)
        return outputs + ([target] if target and not self.inplace else [])

    def get_output_mapping(self):
        mapping = super().get_output_mapping()
        target = getattr(self, "_extension_output", None)
        if target and not self.inplace:
            here = os.path.dirname(os.path.abspath(__file__))
            mapping[target] = os.path.join(here, "tfsql", EXTENSION_FILE)
        return mapping


if __name__ == "__main__":  # pip runs this file as __main__; tests import its constants
    setup(
        ext_modules=[
            Extension(
                "tfsql._native",
                sources=CORE_SOURCES + ["tfsql/_native_module.c", "tfsql/_native_rules.c", "tfsql/_native_reader.c"],
                depends=CORE_HEADERS + ["tfsql/_native_rules.h", "tfsql/_native_reader.h"],
                extra_compile_args=extra_compile_args,
                # tfsql/core/zlib_load.c loads libz at run time (dlopen: libdl before glibc 2.34)
                libraries=["dl"] if sys.platform.startswith("linux") else [],
            )
        ],
        cmdclass={"build_ext": BuildWithDuckDBExtension},
    )
