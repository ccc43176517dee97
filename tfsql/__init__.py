"""tfsql: TFRecord as a first-class format of the Python data stack.

An Arrow-producing scanner and a writer for TFRecord files of ``tf.train.Example``,
``SequenceExample`` or raw records, with a C hot path, and front ends for Polars
(``pl.scan_tfrecord``), DuckDB SQL (``tfrecord_scan(...)``, ``COPY ... (FORMAT
tfrecord)``), PySpark and the ``tfsql`` command.

Examples
--------
>>> import tempfile, pyarrow as pa, tfsql
>>> path = tempfile.mkdtemp()
>>> _ = tfsql.write_tfrecord(pa.table({"label": [1, 0], "text": ["hi", "yo"]}), path)
>>> tfsql.read_tfrecord(path).to_pylist()
[{'label': 1, 'text': 'hi'}, {'label': 0, 'text': 'yo'}]
"""

from typing import TYPE_CHECKING, Any

from tfsql.errors import (
    CorruptRecordError,
    FileChangedError,
    NoDataError,
    SchemaError,
    StaleIndexWarning,
    TFSQLError,
    WriteConflictError,
)

__version__ = "0.1.0"

if TYPE_CHECKING:  # what the lazy attributes below resolve to, for type checkers
    from tfsql.commit import recover
    from tfsql.options import ReadOptions, WriteOptions
    from tfsql.duckdb.extension import duckdb_extension_path, load_extension
    from tfsql.duckdb import connect, sql
    from tfsql.polars import scan_tfrecord
    from tfsql.arrow_dataset import Dataset, Fragment
    from tfsql.opening import dataset
    from tfsql.reading import infer_schema, read_tfrecord
    from tfsql.scanning import Scanner
    from tfsql.writer import WriteResult, write_tfrecord

# ``import tfsql`` stays light: Polars, DuckDB, PySpark and even pyarrow's compute and
# dataset modules are imported on first use of the attribute that needs them.
_LAZY = {
    "dataset": "tfsql.opening",
    "Dataset": "tfsql.arrow_dataset",
    "Scanner": "tfsql.scanning",
    "Fragment": "tfsql.arrow_dataset",
    "read_tfrecord": "tfsql.reading",
    "infer_schema": "tfsql.reading",
    "write_tfrecord": "tfsql.writer",
    "WriteResult": "tfsql.writer",
    "recover": "tfsql.commit",
    "ReadOptions": "tfsql.options",
    "WriteOptions": "tfsql.options",
    "scan_tfrecord": "tfsql.polars",
    "connect": "tfsql.duckdb",
    "sql": "tfsql.duckdb",
    "duckdb_extension_path": "tfsql.duckdb.extension",
    "load_extension": "tfsql.duckdb.extension",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tfsql' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


# pl.scan_tfrecord, pl.read_tfrecord and the .tfrecord namespaces: attached now if
# Polars is imported, else the moment it is (see tfsql._polars_hook).
from tfsql import _polars_hook  # noqa: E402  (after the lazy attributes it may use)

_polars_hook.install()

__all__ = [
    "dataset",
    "Dataset",
    "Scanner",
    "Fragment",
    "read_tfrecord",
    "infer_schema",
    "write_tfrecord",
    "recover",
    "scan_tfrecord",
    "connect",
    "sql",
    "duckdb_extension_path",
    "load_extension",
    "WriteResult",
    "ReadOptions",
    "WriteOptions",
    "TFSQLError",
    "CorruptRecordError",
    "SchemaError",
    "FileChangedError",
    "WriteConflictError",
    "NoDataError",
    "StaleIndexWarning",
    "__version__",
]
