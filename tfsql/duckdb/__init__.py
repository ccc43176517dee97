"""DuckDB SQL over TFRecord: ``tfrecord_scan(...)`` and ``COPY ... TO ... (FORMAT tfrecord)``.

`connect` returns a thin wrapper around a normal ``duckdb.DuckDBPyConnection``. When
this installation has tfsql's DuckDB extension (`tfsql.duckdb_extension_path`), the
connection loads it and most ``tfrecord_scan`` calls run as DuckDB's own table function
(see `tfsql.duckdb.scan_calls.native_route` for the exceptions). Everything else, and every
call when the extension is absent, goes through a rewrite of the SQL text before DuckDB
sees it:

- every call ``tfrecord_scan(source, name := value, ...)`` (alias ``read_tfrecord``),
  wherever a table function may appear, is replaced by the name of a `tfsql.Dataset`
  registered on the connection. DuckDB scans a registered Dataset with projection and
  filter pushdown, so only the needed features are decoded and partition filters
  prune files. The arguments are literals read from the tokens (strings, numbers,
  true/false, lists, structs, ``?`` parameters, ``getvariable('name')``): nothing in them
  is ever run as SQL, so no statement can be smuggled through them.
- ``COPY (query) TO 'path' (FORMAT tfrecord, ...)`` / ``COPY table TO ...`` / a path
  ending in ``.tfrecord`` (``.gz``) without FORMAT run the query, stream its record
  batches into `tfsql.write_tfrecord` (nothing is materialised) and return the row count
  in a ``Count`` column, as DuckDB's COPY does. A query giving one STRUCT column (plus
  partition columns), the native COPY's form, writes the STRUCT's fields.
- ``COPY table [(columns)] FROM 'path' (FORMAT tfrecord, ...)`` runs as ``INSERT INTO
  table [(columns)] SELECT * FROM tfrecord_scan('path', option := value, ...)``
  (`tfsql.duckdb.copy_from`).

A script is split into statements by DuckDB's own parser before anything is rewritten.
Text in string literals and comments is never touched (DuckDB's own tokenizer finds the
calls); COPY option values are literals too. Everything else (`sql`, `execute`, `table`, `register`, ...) is DuckDB's.

Registered names are ``__tfrecord_scan_<n>``, one per distinct call (same arguments,
same name), kept for the connection's life so views over ``tfrecord_scan`` stay valid.
Each statement that spells out a call re-opens its dataset (files are listed again, as
``read_parquet`` does; the schema is inferred again only when the files changed); a view
queried on its own scans the files listed when a statement last spelled out that call.

The named parameters of ``tfrecord_scan`` and the COPY options are the SQL spellings of
`tfsql.options` (`SCAN_PARAMETERS`, `tfsql.duckdb.copy.COPY_OPTIONS`).

Modules: `connection` (the connection, `connect`, `sql`), `scan_calls` (each call's
route and the Arrow path's datasets), `filters` (the columns a statement filters on,
by DuckDB's parser), `parameters` (named parameters from the option
spec), `arguments` (literal values), `rewrite` (tokens, statements, calls), `copy`
(COPY to TFRecord), `copy_from` (COPY from TFRecord), `errors` (DuckDB's errors, mapped in one place), `results` (Arrow
out of DuckDB), `types` (DuckDB type names), `extension` (the DuckDB extension's file).

Errors. A malformed call or COPY option raises `BinderError` (a
``duckdb.BinderException`` and a ``ValueError``); an option value tfsql rejects raises
`InvalidInputError` (``duckdb.InvalidInputException`` and ``ValueError``); a source
with no files raises `NoFilesError` (``duckdb.IOException`` and
``FileNotFoundError``). All messages start like DuckDB's (``Binder Error: tfrecord_scan:
...``). Data problems surface with tfsql's own error as their ``__cause__``, the same
class whichever path (the extension, the Arrow one) runs the call and wherever the
data was met (the schema inference's sample or the scan): damaged or changed files and
a value that does not fit its column (`tfsql.CorruptRecordError`,
`tfsql.FileChangedError`, `tfsql.SchemaError` of a decoding reason) as a `ScanDataError`
(a ``duckdb.InvalidInputException`` and a `tfsql.TFSQLError`) naming file, record and
byte offset; a sample the schema inference refuses (a feature of two kinds, a
``schema`` column no sampled record holds: `tfsql.SchemaError` of an inference reason)
as an `InvalidInputError`.
Errors quote the SQL as written, never the rewritten text (see `tfsql.duckdb.errors`).

Examples
--------
>>> import tempfile, pyarrow as pa, tfsql
>>> from tfsql.duckdb import connect
>>> path = tempfile.mkdtemp() + "/t"
>>> _ = tfsql.write_tfrecord(pa.table({"label": [1, 0, 1], "x": [0.5, 1.5, 2.5]}), path)
>>> con = connect()
>>> con.sql(f"SELECT label, count(*) AS n FROM tfrecord_scan('{path}') GROUP BY ALL ORDER BY label").fetchall()
[(0, 1), (1, 2)]
>>> con.sql(f"COPY (SELECT * FROM tfrecord_scan('{path}') WHERE label = 1) TO '{path}-ones.tfrecord'").fetchall()
[(2,)]
>>> con.sql(f"SELECT x FROM read_tfrecord('{path}-ones.tfrecord') ORDER BY x").fetchall()
[(0.5,), (2.5,)]
"""

from __future__ import annotations

try:
    import duckdb  # noqa: F401  (the real DuckDB: imports are absolute)
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("tfsql.duckdb needs DuckDB: pip install 'duckdb>=1.4'") from exc

from tfsql.duckdb.connection import TFRecordConnection, connect, sql
from tfsql.duckdb.connection import default_connection as default_connection  # public, not in __all__
from tfsql.duckdb.errors import BinderError, InvalidInputError, NoFilesError, ScanDataError, TargetExistsError
from tfsql.duckdb.parameters import SCAN_PARAMETERS, TABLE_FUNCTIONS
from tfsql.duckdb.parameters import NATIVE_SCAN_PARAMETERS as NATIVE_SCAN_PARAMETERS  # public, not in __all__
from tfsql.duckdb.types import duckdb_type_to_arrow

__all__ = [
    "connect",
    "sql",
    "TFRecordConnection",
    "TABLE_FUNCTIONS",
    "SCAN_PARAMETERS",
    "BinderError",
    "InvalidInputError",
    "NoFilesError",
    "TargetExistsError",
    "ScanDataError",
    "duckdb_type_to_arrow",
]
