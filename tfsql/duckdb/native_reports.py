"""The DuckDB extension's reports, read back as tfsql's objects.

DuckDB passes a table function's error on as text only, and its C API has no
warnings. The extension therefore keeps, per connection, the fields of the data error
that ended its last failed scan (``tfrecord_last_error()``) and the stretches its
``on_corrupt := 'skip'`` scans stepped over (``tfrecord_rejects()``);
docs/duckdb-extension.md describes both. `last_error` turns the first into the tfsql
error the Python reader raises for the same damage (`tfsql.CorruptRecordError`,
`tfsql.SchemaError`, `tfsql.FileChangedError`), built from those fields, never from a
message's text (the schema inference's refusal, `tfsql.SchemaError.from_inference`,
keeps the message the C core worded: the kinds it names and where each was first seen
are no field).

Both functions need the connection id the C API gives from v1.5.6 (DuckDB 1.5.6 and
later); on DuckDB 1.4 they refuse, and `last_error` returns None (the extension's own
error then stands as DuckDB raised it).

Examples
--------
>>> from_fields({"error_class": "CorruptRecordError", "reason": "data_crc", "file": "f",
...              "record_index": 3, "byte_offset": 9, "suggest_skip": True}).message("sql")
"data CRC mismatch in f, record 3 at byte 9: the record is corrupt (add on_corrupt := 'skip' or ignore_errors := true to the tfrecord_scan call to skip it)"
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import duckdb

from tfsql import messages
from tfsql.errors import CorruptRecordError, FileChangedError, SchemaError, TFSQLError

__all__ = ["LAST_ERROR", "REJECTS", "from_fields", "last_error"]

#: The extension's table functions (registered by ``tfsql/duckdb_ext/reports.c``).
LAST_ERROR = "tfrecord_last_error"
REJECTS = "tfrecord_rejects"

# CorruptRecordError's header length, for the reasons whose message names it
_LENGTH_REASONS = ("too_long", "past_end")


def last_error(con: duckdb.DuckDBPyConnection) -> TFSQLError | None:
    """The data error that ended the last failed extension scan of ``con`` (the same
    connection: the extension keys its reports by connection id), or None when there
    is none or the engine keeps none (DuckDB before 1.5.6)."""
    try:
        cursor = con.execute(f"SELECT * FROM {LAST_ERROR}()")
        names = [d[0] for d in cursor.description or ()]
        rows = cursor.fetchall()
    except duckdb.Error:
        return None
    return from_fields(dict(zip(names, rows[0]))) if rows else None


def from_fields(row: Mapping[str, Any]) -> TFSQLError | None:
    """The tfsql error a ``tfrecord_last_error()`` row describes (None for an error
    that is not one of tfsql's data errors: its ``error_class`` is NULL)."""
    kind, reason, path = row.get("error_class"), row.get("reason"), row.get("file")
    if kind == "CorruptRecordError":
        return CorruptRecordError(
            str(reason),
            path=path,
            record_index=row.get("record_index"),
            offset=row.get("byte_offset"),
            rest_of_file=bool(row.get("rest_of_file")),
            length=row.get("length") if reason in _LENGTH_REASONS else None,
            limit=row.get("limit_bytes"),
            compression=row.get("compression"),
            record_type=row.get("record_type"),
            detail=row.get("detail"),
            suggest_skip=bool(row.get("suggest_skip")),
        )
    if kind == "SchemaError" and reason in messages.INFER:
        # the inference's refusal, worded by the C core (the kinds and where each was
        # first seen are in its words only): the message the extension raised, in SQL
        return SchemaError.from_inference(
            str(reason),
            {"sql": str(row.get("message"))},
            feature=row.get("feature"),
            path=path,
            record_index=row.get("record_index"),
            offset=row.get("byte_offset"),
        )
    if kind == "SchemaError":
        return SchemaError.from_reason(
            str(reason),
            feature=str(row.get("feature")),
            path=path,
            record_index=row.get("record_index"),
            offset=row.get("byte_offset"),
            found=row.get("found_kind"),
            expected=row.get("expected_kind"),
        )
    if kind == "FileChangedError":
        return FileChangedError(str(reason), path=path, before=row.get("size_before"), after=row.get("size_after"))
    return None
