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

from tfsql.scanner import Dataset, Fragment, Scanner, dataset
from tfsql.commit import recover
from tfsql.errors import CorruptRecordError, SchemaError, TFSQLError, WriteConflictError
from tfsql.reader import infer_schema, read_tfrecord
from tfsql.writer import WriteResult, write_tfrecord

__version__ = "0.1.0"

import importlib.util as _importlib_util

if _importlib_util.find_spec("polars") is not None:
    # Attaches pl.scan_tfrecord and the df.tfrecord / lf.tfrecord namespaces.
    from tfsql.polars import attach as _attach_polars
    from tfsql.polars import scan_tfrecord

    _attach_polars()


def __getattr__(name: str):
    # The DuckDB front end is imported on first use (duckdb takes a while to import).
    if name in ("connect", "sql"):
        from tfsql import duckdb as _duckdb_front_end

        return getattr(_duckdb_front_end, name)
    if name in ("duckdb_extension_path", "load_extension"):
        from tfsql import _extension

        return getattr(_extension, name)
    raise AttributeError(f"module 'tfsql' has no attribute {name!r}")

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
    "TFSQLError",
    "CorruptRecordError",
    "SchemaError",
    "WriteConflictError",
    "__version__",
]
