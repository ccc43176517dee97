"""Find and load ``tfsql.duckdb_extension``, the DuckDB extension built from tfsql's C core.

The extension gives any DuckDB connection ``tfrecord_scan(...)`` / ``read_tfrecord(...)``
and ``FROM 'x.tfrecord'`` as real table functions. It is not signed by DuckDB, so a
connection loads it only when ``allow_unsigned_extensions`` is set (the ``duckdb``
command: ``duckdb -unsigned``). There are two builds of it, both package data of ``tfsql``
(tfsql/extension_build.py builds them):

- ``tfsql/tfsql.duckdb_extension``, on DuckDB's stable C API: loads in DuckDB 1.2 and later;
- ``tfsql/duckdb-v<X.Y.Z>/tfsql.duckdb_extension``, on DuckDB 2's V2 C API: loads only in
  DuckDB X.Y.Z, the version it was built for (``tfsql build-extension`` builds it for the
  DuckDB installed now, into the package or, when that is read-only, into
  ``~/.cache/tfsql/duckdb-v<X.Y.Z>/``).

`duckdb_extension_path` picks the one for the running DuckDB. ``TFSQL_DUCKDB_API=v1``
(or ``v2``) in the environment forces one of them.

Examples
--------
>>> import duckdb
>>> from tfsql.duckdb.extension import load_extension
>>> con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
>>> load_extension(con) is con
True
>>> con.sql("SELECT function_name FROM duckdb_functions() WHERE function_name = 'tfrecord_scan'").fetchall()
[('tfrecord_scan',)]
"""

from __future__ import annotations

import os
import sys
from typing import Any

from tfsql import extension_build
from tfsql.duckdb.sqltext import quote_string

__all__ = [
    "duckdb_extension_path",
    "v2_extension_path",
    "load_extension",
    "extension_available",
    "ExtensionNotAvailable",
]

EXTENSION_FILE = extension_build.EXTENSION_FILE
#: Whether DuckDB 2 loads the V2 build when it has one (``TFSQL_DUCKDB_API=auto``).
V2_BY_DEFAULT = True
_warned: set = set()


class ExtensionNotAvailable(FileNotFoundError):
    """This installation of tfsql has no DuckDB extension (it was built without DuckDB's
    headers, or on a platform the extension does not support)."""


def v2_extension_path(duckdb_version: str) -> str | None:
    """The V2 build for DuckDB ``duckdb_version`` (in the package, else in the cache), or
    None when there is none.

    Examples
    --------
    >>> v2_extension_path("1.5.6") is None
    True
    """
    if not extension_build.is_v2_version(duckdb_version):
        return None
    name = extension_build.v2_directory_name(duckdb_version)
    for base in (extension_build.PACKAGE, extension_build.cache_root()):
        path = os.path.join(base, name, EXTENSION_FILE)
        if os.path.isfile(path):
            return path
    return None


def _v1_extension_path() -> str:
    path = os.path.join(extension_build.PACKAGE, EXTENSION_FILE)
    if not os.path.isfile(path):
        raise ExtensionNotAvailable(
            f"{path} does not exist: this tfsql was installed without its DuckDB extension "
            "(the build could not get DuckDB's C headers; reinstall with network access to "
            "PyPI, or with TFSQL_DUCKDB_INCLUDE naming a directory that holds duckdb.h and "
            "duckdb_extension.h)"
        )
    return path


def duckdb_extension_path(duckdb_version: str | None = None) -> str:
    """The absolute path of the extension build that DuckDB ``duckdb_version`` (default:
    the duckdb Python package installed here) loads.

    DuckDB 2 gets the V2 build made for exactly its version when there is one, else the
    v1 build (said once on standard error, with the command that builds the V2 one);
    DuckDB 1.x gets the v1 build. ``TFSQL_DUCKDB_API=v1`` / ``v2`` forces one.
    Raises `ExtensionNotAvailable` when this installation has no build it can use.

    Examples
    --------
    >>> duckdb_extension_path().endswith("tfsql.duckdb_extension")
    True
    >>> duckdb_extension_path("1.4.5").endswith(os.path.join("tfsql", "tfsql.duckdb_extension"))
    True
    """
    version = duckdb_version or extension_build.running_duckdb_version() or ""
    api = os.environ.get("TFSQL_DUCKDB_API", "auto").strip().lower()
    wants_v2 = api == "v2" or (api == "auto" and V2_BY_DEFAULT and extension_build.is_v2_version(version))
    if wants_v2:
        path = v2_extension_path(version)
        if path is not None:
            return path
        if api == "v2":
            raise ExtensionNotAvailable(
                f"TFSQL_DUCKDB_API=v2, but there is no V2 build of tfsql's extension for DuckDB "
                f"{version}: run `tfsql build-extension` (a C compiler and network access to "
                "PyPI for DuckDB's headers), or unset TFSQL_DUCKDB_API"
            )
        if version not in _warned:
            _warned.add(version)
            print(
                f"tfsql: no build of tfsql's DuckDB extension for DuckDB {version}'s V2 C API (DuckDB "
                "was installed or upgraded after tfsql); using the v1 build, which lacks filter "
                "pushdown and DuckDB's file systems. Run `tfsql build-extension` to build it.",
                file=sys.stderr,
            )
    return _v1_extension_path()


def extension_available() -> bool:
    """Whether `duckdb_extension_path` exists (this installation has a build the running
    DuckDB loads)."""
    try:
        duckdb_extension_path()
    except ExtensionNotAvailable:
        return False
    return True


def load_extension(con: Any) -> Any:
    """Load tfsql's DuckDB extension into ``con`` (a ``duckdb.DuckDBPyConnection``) and
    return ``con``.

    The connection must allow unsigned extensions:
    ``duckdb.connect(config={"allow_unsigned_extensions": "true"})``. Otherwise this raises
    a ``duckdb.PermissionException`` (a ``PermissionError`` too) that says so. Loading
    twice is harmless.

    To make module-level ``duckdb.sql(...)`` see ``tfrecord_scan``, load it into a
    connection and make that DuckDB's default (``duckdb.set_default_connection``, DuckDB 1.1+)::

        con = tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))
        duckdb.set_default_connection(con)
    """
    import duckdb

    path = duckdb_extension_path()
    try:
        allowed = con.execute("SELECT current_setting('allow_unsigned_extensions')").fetchone()[0]
    except duckdb.Error:
        allowed = None
    if allowed is False or str(allowed).lower() == "false":
        raise UnsignedExtensionsNotAllowed(
            "Permission Error: tfsql's DuckDB extension is not signed by DuckDB, and this connection "
            "does not allow unsigned extensions. Open it with "
            "duckdb.connect(config={'allow_unsigned_extensions': 'true'}) (the duckdb command: "
            "duckdb -unsigned), or use tfsql.connect(), which does this for you",
        )
    con.execute(f"LOAD {quote_string(path)}")
    return con


def _permission_base() -> type:
    import duckdb

    return getattr(duckdb, "PermissionException", duckdb.Error)


class UnsignedExtensionsNotAllowed(_permission_base(), PermissionError):  # type: ignore[misc]
    """`load_extension` on a connection without ``allow_unsigned_extensions``."""
