"""DuckDB SQL over TFRecord: plain DuckDB with tfsql's extension loaded.

`connect` is ``duckdb.connect()`` plus ``LOAD`` of tfsql's DuckDB extension (the build
for the running DuckDB: `tfsql.duckdb.extension`), and returns DuckDB's own
connection. tfsql does not read, rewrite or route SQL: ``tfrecord_scan(...)`` /
``read_tfrecord(...)``, ``FROM 'x.tfrecord'``, ``COPY ... TO/FROM ... (FORMAT
tfrecord)``, ``tfrecord_metadata``, ``tfrecord_schema``, ``tfrecord_last_error()`` and
``tfrecord_rejects()`` are the extension's, every error is DuckDB's, and the same SQL
runs in any DuckDB that loads the extension (``duckdb -unsigned``, then
``LOAD '<tfsql extension-path>'``). docs/duckdb-extension.md describes the SQL surface.

Sources the extension cannot open (``memory://``, any other fsspec file system, or a
`tfsql.dataset` option with no SQL spelling, such as ``hidden_file_prefix``): open them
with `tfsql.dataset` and register the dataset, which DuckDB scans as Arrow with
projection and filter pushdown::

    con.register("t", tfsql.dataset("memory://data/", hive_partitioning=True))

`sql` runs a query on one such connection kept for the process.

Modules: `connection` (`connect`, `sql`), `extension` (which build, and ``LOAD``),
`sqltext` (DuckDB's tokenizer for the ``tfsql`` command's scripts; SQL quoting),
`results` (Arrow out of DuckDB 1.4 and 2.x), `types` (DuckDB type names as Arrow types).

Examples
--------
>>> import tempfile, pyarrow as pa, tfsql
>>> path = tempfile.mkdtemp() + "/t"
>>> _ = tfsql.write_tfrecord(pa.table({"label": [1, 0, 1], "x": [0.5, 1.5, 2.5]}), path)
>>> con = tfsql.connect()
>>> con.sql(f"SELECT label, count(*) AS n FROM tfrecord_scan('{path}') GROUP BY ALL ORDER BY label").fetchall()
[(0, 1), (1, 2)]
>>> con.sql(f"SELECT x FROM '{path}/*.tfrecord' WHERE label = 1 ORDER BY x").fetchall()
[(0.5,), (2.5,)]
>>> _ = con.register("m", tfsql.dataset(path))
>>> con.sql("SELECT sum(label) FROM m").fetchall()
[(2,)]
"""

from __future__ import annotations

try:
    import duckdb  # noqa: F401  (the real DuckDB: imports are absolute)
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("tfsql.duckdb needs DuckDB: pip install 'duckdb>=1.4'") from exc

from tfsql.duckdb.connection import connect, sql
from tfsql.duckdb.connection import default_connection as default_connection  # public, not in __all__
from tfsql.duckdb.extension import ExtensionNotAvailable, duckdb_extension_path, load_extension
from tfsql.duckdb.types import duckdb_type_to_arrow

__all__ = [
    "connect",
    "sql",
    "load_extension",
    "duckdb_extension_path",
    "ExtensionNotAvailable",
    "duckdb_type_to_arrow",
]
