"""The wording of tfsql's data errors, once, for every front end.

Every message a reader gives about bad data (a corrupt or truncated record, a value the
column cannot hold, a file that changed while it was read) is a template here, filled
from the error's fields. The Python classes (:mod:`tfsql.errors`) render them; the
DuckDB extension renders the same templates from the C header that
``python -m tfsql.message_header --write`` generates from this module
(``tfsql/duckdb_ext/messages_gen.h``, kept in the repository and checked by
``tests/unit/test_message_header.py``), so no wording exists twice.

A template names fields in braces (``{path}``) and nothing else: no format
specification, no conversion, so that the C renderer (a plain substitution) and
:meth:`str.format` read it alike. Besides an error's own fields a template may name
a *dialect phrase*: advice that names an option, spelled as the front end spells it.
That is the one documented difference between front ends: Python and Polars say
``pass on_corrupt='skip'``, SQL (the extension and ``tfsql.connect()``) says ``add
on_corrupt := 'skip' or ignore_errors := true to the tfrecord_scan call``.

Examples
--------
>>> render(CORRUPT["data_crc"], "python", where="f, record 3 at byte 9")
'data CRC mismatch in f, record 3 at byte 9: the record is corrupt'
>>> render(SKIP_ADVICE, "sql", rest="")
" (add on_corrupt := 'skip' or ignore_errors := true to the tfrecord_scan call to skip it)"
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AT_BYTE_ZERO",
    "CORRUPT",
    "DIALECTS",
    "FILE_CHANGED",
    "FILE_CHANGED_WHAT",
    "HIVE",
    "HIVE_WHERE",
    "GZIP_OF",
    "INFER",
    "INFER_FILES",
    "INFER_KINDS_JOIN",
    "INFER_KIND_FIRST",
    "INFER_MORE_FILES",
    "INFER_NAME",
    "INFER_NAMES_JOIN",
    "MALFORMED_DETAIL",
    "MALFORMED_FEATURE",
    "NO_MATCH",
    "NO_SUCH_PATH",
    "NOT_REGULAR",
    "NOT_TFRECORD",
    "NOT_TFRECORD_WHAT",
    "RAW_SCHEMA",
    "SCHEMA",
    "SEQUENCE_HINT",
    "SKIPPED",
    "SKIPPED_WHAT",
    "SKIP_ADVICE",
    "SKIP_REST",
    "WHERE_OFFSET",
    "WHERE_RECORD",
    "render",
]

#: A corrupt record, by ``CorruptRecordError.reason``. ``{where}``: the file, then
#: `WHERE_RECORD` and `WHERE_OFFSET` when known; ``{hint}``: `AT_BYTE_ZERO` for a
#: record at byte 0, else nothing.
CORRUPT: dict[str, str] = {
    "truncated": "truncated record in {where}: the file ends {limit} bytes into it{hint}",
    "past_end": (
        "truncated record in {where}: its header claims {length} bytes but the file ends {limit} "
        "bytes after the record's start (the file is truncated or the header corrupt){hint}"
    ),
    "length_crc": "length CRC mismatch in {where}: the file is corrupt{hint}",
    "data_crc": "data CRC mismatch in {where}: the record is corrupt",
    "too_long": (
        "record length {length} exceeds max_record_bytes={limit} in {where}: the header is corrupt "
        "(or, if the file really holds records this large, pass a larger max_record_bytes)"
    ),
    "stream_truncated": (
        "the {compression} stream of {path} ends early: the file is truncated (copy it again from its source)"
    ),
    "stream_corrupt": "the {compression} data of {path} is corrupt ({detail}); if the file is not compressed, pass {no_compression}",
    "malformed": (
        "record is not a valid {record_type} protobuf in {where}{detail}; check {record_type_option} "
        "(use 'bytes' to read the raw records)"
    ),
    "undecodable": "cannot decode {where}: {detail}",
}

WHERE_RECORD = ", record {record_index}"
WHERE_OFFSET = " at byte {offset}"
AT_BYTE_ZERO = (
    "; at byte 0 this usually means the file is not a TFRecord file (or is compressed: pass {compression_option})"
)
#: A glob that matches nothing (`tfsql.NoDataError.no_match`).
NO_MATCH = (
    "no files match the pattern {pattern}; check the pattern (pass {glob_literal} to read a path containing "
    "*, ? or [ literally)"
)
#: A directory that holds no data file (`tfsql.NoDataError.empty_directory`).
NO_FILES_IN_DIRECTORY = (
    "no files found in the directory {directory}: it is empty or holds only hidden files (names starting "
    "with . or _); check the path"
)
#: A source item that names nothing (``{item}``: quoted).
NO_SUCH_PATH = "no such file or directory: {item}; check the path"
#: A FIFO, socket or device met listing (reading one blocks or returns nothing).
NOT_REGULAR = (
    "{path} is not a regular file (a FIFO, socket or device); tfsql reads regular files only: copy its "
    "content to a file and read that"
)
#: A file whose first record, read as an Example, looks like a SequenceExample (a warning).
SEQUENCE_HINT = (
    "the records of {path} look like tf.train.SequenceExample (they have feature lists), but are read as "
    "Examples, which keeps only their context features; pass {sequence_option}"
)
#: What replaces `AT_BYTE_ZERO` when the file's first bytes say what it is
#: (`tfsql.sniffing`; the keys of ``NOT_TFRECORD_WHAT`` are the C core's
#: ``tfsql_sniff_format``): ``{what}`` from ``NOT_TFRECORD_WHAT`` (inside `GZIP_OF` for a
#: gzip file holding it), ``{reader}`` the dialect phrase ``read_<key>``.
NOT_TFRECORD = "; its bytes are {what}, not TFRecord: read it with {reader}"
NOT_TFRECORD_WHAT: dict[str, str] = {
    "parquet": "Parquet",
    "orc": "ORC",
    "arrow": "Arrow IPC (Feather)",
    "json": "JSON",
    "text": "text (CSV or similar)",
    "png": "a PNG image",
    "jpeg": "a JPEG image",
}
GZIP_OF = "gzip-compressed {what}"
#: How a malformed record's detail is put (``{detail}`` of ``CORRUPT["malformed"]``).
MALFORMED_DETAIL = " ({detail})"
#: The detail of a malformed record whose bad feature the decoder names.
MALFORMED_FEATURE = "in feature '{feature}'"
#: Ends an error when skipping could go on (``{rest}``: `SKIP_REST` or nothing).
SKIP_ADVICE = " ({skip_option} to skip it{rest})"
SKIP_REST = " and the bytes up to the next record whose CRCs check"
#: What ``on_corrupt='skip'`` reports: the error (its message without advice), then what was skipped.
SKIPPED = "{message}; skipped {what} ({skip_mode})"
SKIPPED_WHAT: dict[str, str] = {
    "range": "bytes {offset}-{skipped_to}, up to the next record whose CRCs check",
    "rest_of_file": "the rest of the file",
    "record": "the record",
}

#: A ``schema=`` that raw records (``record_type='bytes'``) cannot take: ``{count}``
#: columns (not one), or one whose ``{type}`` (as the front end names types) is not binary
#: or string.
RAW_SCHEMA: dict[str, str] = {
    "count": (
        "raw records (record type 'bytes') are one binary or string column; {schema_option} names {count} "
        "columns: give it exactly one"
    ),
    "type": (
        "raw records (record type 'bytes') are one binary or string column; column '{column}' of "
        "{schema_option} has type {type}"
    ),
}

#: A value the column cannot hold, by ``SchemaError.reason``.
SCHEMA: dict[str, str] = {
    "kind_mismatch": (
        "feature '{feature}' holds {found} in {where}, but column '{feature}' is read from {expected}; "
        "pass {schema_option} with the right type, or infer the schema from more records ({infer_option})"
    ),
    "not_scalar": (
        "feature '{feature}' holds several values in {where}, but column '{feature}' is a scalar because "
        "no sampled record had more than one; pass {lists_option}, a list type in {schema_option}, or a "
        "larger infer_sample"
    ),
    "not_utf8": (
        "feature '{feature}' holds bytes that are not valid UTF-8 in {where}, but column '{feature}' is a "
        "string; read it as binary ({binary_option})"
    ),
    "out_of_range": (
        "feature '{feature}' holds {found} in {where}, which column '{feature}' ({expected}, as the "
        "dataset's features.json describes it) cannot hold; pass {schema_option} with a wider type"
    ),
    "wrong_count": (
        "feature '{feature}' holds {found} in {where}, but column '{feature}' holds exactly {expected} (as the "
        "dataset's features.json describes it); pass {schema_option} with a list type"
    ),
}

#: What the schema inference refuses (``InferenceError.reason``), worded by the C core
#: (``tfsql/core/infer.c``, from ``tfsql/core/messages_gen.h``) and by its reference
#: (``tfsql._reference.inference``). ``{schema_hint}`` / ``{hint}``: the schema option and
#: ``missing_columns='insert'`` as the caller's front end spells them; ``{where}``: the
#: file, `WHERE_RECORD` and `WHERE_OFFSET`; ``{described}``: `INFER_KIND_FIRST` for each
#: kind, joined by `INFER_KINDS_JOIN`; ``{listed}``: the quoted names, joined by
#: `INFER_NAMES_JOIN`; ``{files}``: `INFER_FILES`; ``{first}``: the first sampled file,
#: then `INFER_MORE_FILES` when there are more.
INFER: dict[str, str] = {
    "name_not_utf8": (
        "feature name {feature} in {where} is not valid UTF-8, so it cannot name a column; pass {schema_hint} "
        "with the columns to read (features not in it are skipped)"
    ),
    "kind_conflict": (
        "feature '{feature}' holds two kinds in the inference sample: {described}; pass {schema_hint} with "
        "the type to read it as, or fix the data"
    ),
    "name_taken": (
        "feature list '{feature}' shares its name with a context feature, and its column name '{column}' is "
        "taken by another feature; pass {schema_hint} naming the columns to read"
    ),
    "missing": (
        "{schema_name} names {listed}, which is in none of the sampled records of {files} ({first}); pass "
        "{hint} to read it as null, or fix the name"
    ),
    "missing_several": (
        "{schema_name} names {listed}, which are in none of the sampled records of {files} ({first}); pass "
        "{hint} to read them as null, or fix the name"
    ),
}
INFER_KIND_FIRST = "{kind} (first in {path})"
INFER_KINDS_JOIN = " and "
INFER_NAMES_JOIN = ", "
INFER_NAME = "'{name}'"
INFER_MORE_FILES = ", ..."
#: How many files were sampled, by number.
INFER_FILES: dict[str, str] = {"one": "{count} file", "many": "{count} files"}

#: What the dataset plan refuses about hive ``key=value`` directories (the reason of the
#: core's ``tfsql_plan_hive``, which renders them from ``tfsql/core/infer_messages_gen.h``;
#: its reference is ``tfsql._reference.plan``). ``{path}`` / ``{first_path}``: files as
#: shown (a name that is not UTF-8 escaped); ``{keys}`` / ``{first_keys}``: a file's keys,
#: ``(a, b)`` or ``none``; ``{where}``: a `HIVE_WHERE`.
HIVE: dict[str, str] = {
    "repeated_key": (
        "partition key '{key}' appears twice in the directories of {path}; rename one of the key=value directories"
    ),
    "inconsistent": (
        "inconsistent hive partitioning: {first_path} has partition keys {first_keys} but {path} has {keys}; "
        "every file must sit under the same key=value directories in the same order (pass {hive_off} to read "
        "without partition columns)"
    ),
    "none_found": (
        "hive partitioning was requested but no key=value directories were found{where}; point the source at "
        "the directory above the key=value directories or pass {hive_off}"
    ),
    "unknown_key": "{hive_schema_option} names '{key}', which is not a partition key (the partition keys are {keys})",
}
HIVE_WHERE: dict[str, str] = {"root": " below '{root}'", "named": " (the files were named explicitly)"}

#: A file that changed while it was read (``FileChangedError``).
FILE_CHANGED = "{path} changed while it was read: {change}; read it again"
FILE_CHANGED_WHAT: dict[str, str] = {
    "size": "its size went from {before} to {after} bytes",
    "modified": "it was modified in place (same size, new modification time)",
    "replaced": "another file was put in its place",
    "deleted": "it was deleted",
}

#: The dialect phrases: advice naming an option, as each family of front ends spells it.
DIALECTS: dict[str, dict[str, str]] = {
    "python": {
        "sequence_option": "record_type='sequence_example'",
        "skip_option": "pass on_corrupt='skip'",
        "skip_mode": "on_corrupt='skip'",
        "compression_option": "compression=",
        "no_compression": "compression=None",
        "record_type_option": "record_type=",
        "schema_option": "schema=",
        "infer_option": "infer_sample=...",
        "lists_option": "lists='always'",
        "missing_insert": "missing_columns='insert'",
        "binary_option": "schema= giving it pa.binary()",
        "hive_off": "hive_partitioning=False",
        "hive_schema_option": "hive_schema",
        "read_parquet": "pl.read_parquet or pyarrow.parquet.read_table",
        "read_orc": "pyarrow.orc.read_table",
        "read_arrow": "pl.read_ipc or pyarrow.ipc.open_file",
        "read_json": "pl.read_json or pl.read_ndjson",
        "read_text": "pl.read_csv",
        "read_png": "open(path, 'rb').read() (an image file is one value, not records)",
        "read_jpeg": "open(path, 'rb').read() (an image file is one value, not records)",
        "glob_literal": "glob=False",
    },
    "sql": {
        "sequence_option": "record_type := 'sequence_example'",
        "skip_option": "add on_corrupt := 'skip' or ignore_errors := true to the tfrecord_scan call",
        "skip_mode": "on_corrupt := 'skip'",
        "compression_option": "compression :=",
        "no_compression": "compression := 'none'",
        "record_type_option": "record_type :=",
        "schema_option": "schema :=",
        "infer_option": "infer_sample := ...",
        "lists_option": "lists := 'always'",
        "missing_insert": "missing_columns := 'insert'",
        "binary_option": "schema := giving it 'BLOB'",
        "hive_off": "hive_partitioning := false",
        "hive_schema_option": "hive_types",
        "read_parquet": "read_parquet(...)",
        "read_orc": "pyarrow.orc (DuckDB has no ORC reader)",
        "read_arrow": "read_arrow(...) of the arrow community extension",
        "read_json": "read_json(...)",
        "read_text": "read_csv(...)",
        "read_png": "read_blob(...) (an image file is one value, not records)",
        "read_jpeg": "read_blob(...) (an image file is one value, not records)",
        "glob_literal": "glob := false",
    },
    "cli": {
        "sequence_option": "--record-type sequence_example",
        "skip_option": "pass --on-corrupt skip",
        "skip_mode": "--on-corrupt skip",
        "compression_option": "--compression",
        "no_compression": "--compression none",
        "record_type_option": "--record-type",
        "schema_option": "--schema",
        "infer_option": "--infer-sample N",
        "lists_option": "--lists always",
        "missing_insert": "--missing-columns insert",
        "binary_option": "--schema giving it BLOB",
        "read_parquet": "tfsql convert FILE OUT (to TFRecord) or tfsql sql \"SELECT * FROM read_parquet('FILE')\"",
        "read_orc": "pyarrow.orc.read_table (tfsql convert reads Parquet, CSV and JSON)",
        "read_arrow": "pyarrow.ipc.open_file (tfsql convert reads Parquet, CSV and JSON)",
        "read_json": "tfsql convert FILE OUT --from json (to TFRecord) or tfsql sql \"SELECT * FROM read_json('FILE')\"",
        "read_text": "tfsql convert FILE OUT --from csv (to TFRecord) or tfsql sql \"SELECT * FROM read_csv('FILE')\"",
        "read_png": "tfsql sql \"SELECT * FROM read_blob('FILE')\" (an image file is one value, not records)",
        "read_jpeg": "tfsql sql \"SELECT * FROM read_blob('FILE')\" (an image file is one value, not records)",
        "glob_literal": "--glob false",
        "hive_off": "--hive-partitioning false",
        "hive_schema_option": "hive_schema (tfsql.dataset's keyword; the command has no flag for it)",
    },
}


def render(template: str, dialect: str = "python", **fields: Any) -> str:
    """``template`` with its fields and the ``dialect``'s phrases filled in (a field
    given as None reads ``None``, as the C renderer writes it)."""
    return template.format(**DIALECTS[dialect], **{k: "None" if v is None else v for k, v in fields.items()})
