"""Build the C core, ``tfsql._native``, and the DuckDB extension ``tfsql.duckdb_extension``.

Everything else is declared in pyproject.toml. Both binaries compile the same C core
(tfsql/core/*.c, header tfsql/core/tfsql_core.h) with their binding: the Python module
adds tfsql/_native_module.c, the DuckDB extension tfsql/duckdb_ext/*.c, compiled
against DuckDB's C extension API headers, which are not part of this repository: the
build takes them from the directory in ``TFSQL_DUCKDB_INCLUDE`` (it must hold ``duckdb.h`` and
``duckdb_extension.h``), else from a cache, else from the ``duckdb`` source
distribution fetched with ``pip download``. When none works the install goes on without
the extension and says so once; ``tfsql.connect()`` then uses its Python path.

On DuckDB 2 a second extension is built on DuckDB's V2 C API (tfsql/duckdb_v2/*.c plus
the files of tfsql/duckdb_ext/ that call no DuckDB function), for the exact DuckDB version
the install gets: ``tfsql/duckdb-v<version>/tfsql.duckdb_extension``. The helpers shared
with ``tfsql build-extension`` (headers, footer, sources) are in tfsql/extension_build.py.
"""

import glob
import importlib.util
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))


def _load_extension_build():
    """tfsql/extension_build.py, loaded by path: tfsql's own dependencies are not there yet."""
    spec = importlib.util.spec_from_file_location(
        "tfsql_extension_build", os.path.join(HERE, "tfsql", "extension_build.py")
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


EB = _load_extension_build()

#: The DuckDB release whose headers the v1 extension is compiled against: C API v1.5.6, whose
#: copy functions give COPY ... (FORMAT tfrecord). The extension declares v1.2.0 (below)
#: and asks for the v1.5.6 functions only on engines that have them
#: (tfsql/duckdb_ext/api_version.c), so the one file loads in DuckDB 1.2 and later.
DUCKDB_HEADERS_VERSION = "1.5.6"
#: The C API version written in the v1 extension's metadata footer.
DUCKDB_CAPI_VERSION = "v1.2.0"
EXTENSION_FILE = EB.EXTENSION_FILE
_SOURCES = EB.sources(os.path.join(HERE, "tfsql"))
#: The C core (tfsql/core/*.c, one public header tfsql/core/tfsql_core.h), compiled into
#: every binary: the Python module tfsql._native and the DuckDB extensions.
CORE_SOURCES = _SOURCES["core"]
#: The v1 DuckDB extension's binding (tfsql/duckdb_ext/*.c, private header duckdb_ext.h).
EXTENSION_SOURCES = _SOURCES["v1"]
CORE_HEADERS = [os.path.join("tfsql", "core", "tfsql_core.h"), os.path.join("tfsql", "core", "core_internal.h")]

if sys.platform == "win32":
    extra_compile_args = ["/O2", "/W4"]
else:
    # hidden: the core's functions stay inside the module (PyInit_ is exported by its macro)
    extra_compile_args = ["-O3", "-std=c99", "-fno-strict-aliasing", "-fvisibility=hidden", "-Wall", "-Wextra"]


def find_duckdb_headers():
    """The directory holding the v1.5.6 duckdb.h and duckdb_extension.h, or None (with a note)."""
    return EB.find_headers(DUCKDB_HEADERS_VERSION, EB.V1_HEADERS, "TFSQL_DUCKDB_INCLUDE")


def duckdb_version_for_v2():
    """The DuckDB version the V2 extension is built for: ``TFSQL_DUCKDB_VERSION``, else the
    duckdb already in the environment pip installs into (asked outside pip's isolated
    build environment), else the build environment's own duckdb (pyproject.toml's
    build requirements: the newest release, which a fresh install gets too)."""
    named = os.environ.get("TFSQL_DUCKDB_VERSION")
    if named:
        return named
    ask = [sys.executable, "-I", "-c", "import importlib.metadata as m; print(m.version('duckdb'))"]
    try:
        result = subprocess.run(ask, capture_output=True, text=True, timeout=120)
        if result.returncode == 0 and result.stdout.strip():
            return result.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return EB.running_duckdb_version()


def _version():
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "pyproject.toml")) as f:
        for line in f:
            if line.startswith("version"):
                return line.split("=", 1)[1].strip().strip('"')
    return "0"


class BuildWithDuckDBExtension(build_ext):
    """build_ext that also builds the DuckDB extensions (optional: never fails the build)."""

    def run(self):
        super().run()
        self._extension_outputs = {}
        self._remove_earlier_builds()
        if os.environ.get("TFSQL_NO_DUCKDB_EXTENSION"):
            return
        try:
            self._build_v1()
        except Exception as exc:
            EB.note(f"the DuckDB extension was not built ({exc}); tfsql.connect() will use its Python path")
        version = duckdb_version_for_v2()
        if version and EB.is_v2_version(version):
            try:
                self._build_v2(version)
            except Exception as exc:
                EB.note(
                    f"the DuckDB {version} (V2 C API) extension was not built ({exc}); DuckDB {version} "
                    "loads the v1 extension instead (`tfsql build-extension` tries again)"
                )

    def _package_dir(self):
        return os.path.join(HERE, "tfsql") if self.inplace else os.path.join(self.build_lib, "tfsql")

    def _remove_earlier_builds(self):
        """Never ship an extension left by an earlier build."""
        package = self._package_dir()
        if os.path.exists(os.path.join(package, EXTENSION_FILE)):
            os.remove(os.path.join(package, EXTENSION_FILE))
        for directory in glob.glob(os.path.join(package, EB.v2_directory_name("*"))):
            shutil.rmtree(directory, ignore_errors=True)

    def _build_v1(self):
        platform_name = EB.duckdb_platform()
        if sys.platform == "win32" or platform_name is None:
            raise RuntimeError(
                f"the extension is built for Linux and macOS only, not {sys.platform} {EB.platform.machine()}"
            )
        include = find_duckdb_headers()
        if include is None:
            raise RuntimeError("no DuckDB headers")
        sources = [os.path.join(HERE, name) for name in CORE_SOURCES + EXTENSION_SOURCES]
        objects = self.compiler.compile(
            sources,
            output_dir=os.path.join(self.build_temp, "duckdb_extension"),
            include_dirs=[include, os.path.join(HERE, "tfsql", "core")],
            extra_postargs=EB.C_FLAGS,
        )
        target = os.path.join(self._package_dir(), EXTENSION_FILE)
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
            f.write(binary + EB.metadata_footer(platform_name, _version(), DUCKDB_CAPI_VERSION, "C_STRUCT"))
        os.replace(partial, target)
        self._extension_outputs[target] = os.path.join(HERE, "tfsql", EXTENSION_FILE)

    def _build_v2(self, version):
        relative = os.path.join(EB.v2_directory_name(version), EXTENSION_FILE)
        target = os.path.join(self._package_dir(), relative)
        compiler = (self.compiler.compiler or ["cc"])[0] if hasattr(self.compiler, "compiler") else None
        EB.build_v2(version, target, _version(), root=os.path.join(HERE, "tfsql"), compiler=compiler)
        self._extension_outputs[target] = os.path.join(HERE, "tfsql", relative)

    def get_outputs(self):
        outputs = super().get_outputs()
        built = getattr(self, "_extension_outputs", {})
        return outputs + (list(built) if not self.inplace else [])

    def get_output_mapping(self):
        mapping = super().get_output_mapping()
        if not self.inplace:
            mapping.update(getattr(self, "_extension_outputs", {}))
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
