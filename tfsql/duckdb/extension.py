"""Find and load ``tfsql.duckdb_extension``, the DuckDB extension built from tfsql's C core.

The extension gives any DuckDB connection ``tfrecord_scan(...)`` / ``read_tfrecord(...)``
and ``FROM 'x.tfrecord'`` as real table functions. It is not signed by DuckDB, so a
connection loads it only when ``allow_unsigned_extensions`` is set (the ``duckdb``
command: ``duckdb -unsigned``). ``setup.py`` builds the file next to tfsql's own
modules (``tfsql/tfsql.duckdb_extension``, shipped as package data of ``tfsql``), one
directory above this package.

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
from typing import Any

from tfsql.duckdb.errors import sql_error

__all__ = ["duckdb_extension_path", "load_extension", "extension_available", "ExtensionNotAvailable"]

EXTENSION_FILE = "tfsql.duckdb_extension"


class ExtensionNotAvailable(FileNotFoundError):
    """This installation of tfsql has no DuckDB extension (it was built without DuckDB's
    headers, or on a platform the extension does not support)."""


def duckdb_extension_path() -> str:
    """The absolute path of ``tfsql.duckdb_extension``, shipped inside the package.

    Raises `ExtensionNotAvailable` when this installation was built without it.

    Examples
    --------
    >>> duckdb_extension_path().endswith("tfsql.duckdb_extension")
    True
    """
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # tfsql/
    path = os.path.join(package, EXTENSION_FILE)
    if not os.path.isfile(path):
        raise ExtensionNotAvailable(
            f"{path} does not exist: this tfsql was installed without its DuckDB extension "
            "(the build could not get DuckDB's C headers; reinstall with network access to "
            "PyPI, or with TFSQL_DUCKDB_INCLUDE naming a directory that holds duckdb.h and "
            "duckdb_extension.h)"
        )
    return path


def extension_available() -> bool:
    """Whether `duckdb_extension_path` exists (``TFSQL_NO_DUCKDB_EXTENSION=1`` in the
    environment makes it False, to force tfsql.connect()'s Python path)."""
    if os.environ.get("TFSQL_NO_DUCKDB_EXTENSION"):
        return False
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

    con = getattr(con, "duckdb_connection", con)
    path = duckdb_extension_path()
    try:
        allowed = con.execute("SELECT current_setting('allow_unsigned_extensions')").fetchone()[0]
    except duckdb.Error:
        allowed = None
    if allowed is False or str(allowed).lower() == "false":
        raise sql_error(
            UnsignedExtensionsNotAllowed,
            "tfsql's DuckDB extension is not signed by DuckDB, and this connection "
            "does not allow unsigned extensions. Open it with "
            "duckdb.connect(config={'allow_unsigned_extensions': 'true'}) (the duckdb command: "
            "duckdb -unsigned), or use tfsql.connect(), which does this for you",
        )
    escaped = path.replace("'", "''")
    con.execute(f"LOAD '{escaped}'")
    return con


def _permission_base() -> type:
    import duckdb

    return getattr(duckdb, "PermissionException", duckdb.Error)


class UnsignedExtensionsNotAllowed(_permission_base(), PermissionError):  # type: ignore[misc]
    """`load_extension` on a connection without ``allow_unsigned_extensions``."""
