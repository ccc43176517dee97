"""Schema inference: the data schema of records read without one, from an explicit,
deterministic sample.

The sample is the first ``infer_sample`` records of each of up to ``infer_files``
non-empty files, chosen evenly through the sorted file list (always the first and the
last file) — never only the first file. Each file's sample also ends once its
records hold ``infer_bytes`` bytes (4 MiB: a hundred large image records tell the
schema as well as a thousand, and the scan that follows reads them again).
``infer_sample=None`` reads every record of every chosen file (whatever
``infer_bytes``) and ``infer_files=None`` chooses every file, so
``infer_sample=None, infer_files=None`` infers from the whole dataset.

The plan and the type rules live once, in the C core (``tfsql/core/infer.c``), which
the DuckDB extension calls too: :func:`sample_indices` asks it which files, and
``codec.Inference`` takes the records each file's reader frames, keeps those within the
file's budget, folds their feature summaries and resolves them to columns
(``docs/format.md`` section 3):

- ``int64_list`` -> ``int64``, ``float_list`` -> ``float32``, ``bytes_list`` ->
  ``string`` when every sampled value is valid UTF-8, else ``binary``;
- scalar when no sampled record holds more than one value and some hold one, else
  a list (so a feature whose sampled lists are all empty stays a list;
  ``lists="always"`` forces lists); ``SequenceExample`` feature lists ->
  ``list<list<K>>``;
- column order is the order in which features are first seen, reading the sampled
  files in order and each record's features in wire order (for files tfsql writes
  that is the written column order);
- a feature seen with two kinds is a :class:`~tfsql.errors.SchemaError` naming both.

This module reads the files (any file system tfsql opens), turns the core's answer into
a ``pyarrow`` schema and its errors into tfsql's, and warns about what the sample shows.

Examples
--------
>>> sample_indices(10, 4)
[0, 3, 6, 9]
>>> sample_indices(3, 8)
[0, 1, 2]
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Any, Callable, NamedTuple, Sequence

import pyarrow as pa

from tfsql._codec import codec
from tfsql.decoding import record_type_name
from tfsql.messages import DIALECTS, SEQUENCE_HINT, render
from tfsql.errors import CorruptRecordError, SchemaError
from tfsql.framing import FrameReader
from tfsql.options import DEFAULT_INFER_BYTES, READ_OPTIONS
from tfsql.schema import RAW_COLUMN, canonical_type

__all__ = ["sample_indices", "infer_data_schema", "sample_columns", "missing_columns", "SampledColumn"]

PYTHON_PHRASES = DIALECTS["python"]  # option spellings in messages (tfsql.messages)


def sample_indices(n_files: int, infer_files: int | None, sizes: Sequence[int] | None = None) -> list[int]:
    """Indices of the files inference samples: ``infer_files`` of the ``n_files`` (the
    non-empty ones when their ``sizes`` are given) spread evenly, first and last
    included (the C core's plan)."""
    return list(codec.pick_files(list(sizes) if sizes is not None else [1] * n_files, infer_files))


class SampledColumn(NamedTuple):
    """A feature of the inference sample and the column it resolves to (``kind`` is
    ``codec.KIND_NONE`` for a feature that never had a kind: it is not a column; a
    named tuple, as a record may have a million features)."""

    name: str
    column: str
    location: int
    kind: int
    shape: int
    utf8: bool


def infer_data_schema(
    paths: Sequence[str],
    open_reader: Callable[[int], FrameReader],
    *,
    record_type: int,
    infer_sample: int | None,
    lists: str,
    infer_bytes: int | None = DEFAULT_INFER_BYTES,
) -> tuple[pa.Schema, list[SampledColumn]]:
    """Infer the data schema from the files ``open_reader(i)`` opens (``i`` indexes
    ``paths``, already chosen by :func:`sample_indices`).

    Returns the schema and every sampled feature (the scanner is told which carried no
    kind, so that it does not report them again).
    """
    lists = READ_OPTIONS["lists"].validate(lists)
    if record_type == codec.RAW:
        return pa.schema([pa.field(RAW_COLUMN, pa.binary())]), []
    sampled, columns = _sample(paths, open_reader, record_type, infer_sample, infer_bytes, lists == "always")
    valued = any(c.kind != codec.KIND_NONE for c in columns)
    if sampled and not valued:
        _warn_no_features(sampled, record_type)
    fields = []
    types: dict[tuple[int, int, bool], pa.DataType] = {}  # one object per type (a few)
    for c in columns:
        if c.kind == codec.KIND_NONE:
            if valued:
                _warn_kindless(c)
            continue
        key = (c.kind, c.shape, c.utf8)
        t = types.get(key)
        if t is None:
            t = types[key] = canonical_type(c.kind, c.shape, utf8=c.utf8)
        fields.append(pa.field(c.column, t))
    return pa.schema(fields), columns


def sample_columns(
    paths: Sequence[str],
    open_reader: Callable[[int], FrameReader],
    *,
    record_type: int,
    infer_sample: int | None,
    infer_bytes: int | None = DEFAULT_INFER_BYTES,
) -> list[SampledColumn]:
    """Every feature of the inference sample of the files ``open_reader(i)`` opens."""
    if record_type == codec.RAW:
        return []
    return _sample(paths, open_reader, record_type, infer_sample, infer_bytes, False)[1]


def missing_columns(
    paths: Sequence[str],
    open_reader: Callable[[int], FrameReader],
    columns: Sequence[str],
    *,
    record_type: int,
    infer_sample: int | None,
    infer_bytes: int | None,
    described: Sequence[str] = (),
) -> SchemaError | None:
    """The error for ``columns`` (of a user schema) that none of the records inference
    would sample holds and the dataset's description (``described``) does not name, or
    None (also when the sample holds no feature: nothing to judge); worded for Python
    and for SQL (`tfsql.SchemaError.message`)."""
    if record_type == codec.RAW:
        return None
    # a record that does not decode ends its file's sample here: the scan reports it
    inference = _sampled(paths, open_reader, record_type, infer_sample, infer_bytes, tolerant=True)[0]

    def check(phrases: dict[str, str]) -> None:
        inference.check_missing(list(columns), phrases["schema_option"], phrases["missing_insert"], list(described))

    try:
        check(PYTHON_PHRASES)
    except codec.InferenceError as exc:
        return _schema_error(exc, check)
    return None


def _sample(
    paths: Sequence[str],
    open_reader: Callable[[int], FrameReader],
    record_type: int,
    infer_sample: int | None,
    infer_bytes: int | None,
    lists_always: bool,
) -> tuple[list[str], list[SampledColumn]]:
    """The files that had sampled records, and the sample's columns."""
    inference, sampled = _sampled(paths, open_reader, record_type, infer_sample, infer_bytes)
    try:
        resolved = inference.resolve(lists_always, PYTHON_PHRASES["schema_option"])
    except codec.InferenceError as exc:
        raise _schema_error(exc, lambda phrases: inference.resolve(lists_always, phrases["schema_option"])) from None
    columns = [
        SampledColumn(name.decode("utf-8", errors="surrogateescape"), column, location, kind, shape, bool(utf8))
        for name, column, location, kind, shape, utf8 in resolved
    ]
    return sampled, columns


def _sampled(
    paths: Sequence[str],
    open_reader: Callable[[int], FrameReader],
    record_type: int,
    infer_sample: int | None,
    infer_bytes: int | None,
    *,
    tolerant: bool = False,
) -> tuple[Any, list[str]]:
    """The core's inference over the sample of the files, and the files that had records
    (``tolerant``: a record that does not decode ends its file's sample, unreported)."""
    inference = codec.Inference(record_type, infer_sample, infer_bytes)
    sampled: list[str] = []  # files with at least one sampled record
    for i, path in enumerate(paths):
        inference.begin_file(path)
        with contextlib.closing(open_reader(i)) as reader:
            had_records, hint, error = reader.sample(inference, record_type, tolerant=tolerant)
        if had_records:
            sampled.append(path)
        if hint:
            warnings.warn(render(SEQUENCE_HINT, path=path), stacklevel=4)
        if error is not None and error.reason == "malformed":  # worded as the scan words it
            raise CorruptRecordError(
                "malformed",
                path=error.path,
                record_index=error.record,
                offset=error.offset,
                record_type=record_type_name(record_type),
            )
        if error is not None:
            raise _schema_error(error) from None
    return inference, sampled


def _schema_error(exc: Exception, reword: Callable[[dict[str, str]], Any] | None = None) -> SchemaError:
    """The core's inference error as tfsql's (its fields kept); ``reword``, given the
    phrases of each other dialect (:data:`tfsql.messages.DIALECTS`: SQL, the CLI), asks the
    core again, for its wording (`tfsql.SchemaError.message`)."""
    worded = {"python": str(exc)}
    if reword is not None:
        for dialect, phrases in DIALECTS.items():
            if dialect != "python":
                try:
                    reword(phrases)
                except codec.InferenceError as again:
                    worded[dialect] = str(again)
    record = getattr(exc, "record", -1)
    return SchemaError.from_inference(
        getattr(exc, "reason", "") or "unknown",
        worded,
        feature=getattr(exc, "feature", "") or None,
        path=getattr(exc, "path", "") or None,
        record_index=record if record >= 0 else None,
        offset=getattr(exc, "offset", -1) if record >= 0 else None,
    )


def _warn_kindless(c: SampledColumn) -> None:
    where = "feature list" if c.location == codec.FEATURE_LISTS else "feature"
    warnings.warn(
        f"{where} {c.name!r} never has a kind set in the inference sample (no "
        "bytes_list, float_list or int64_list), so it carries no values and its type "
        "is unknown: it is left out. To keep it as a column (null where it has no "
        f"values), name it with a type in schema=, e.g. schema={{{c.name!r}: "
        "pa.int64(), ...}",
        stacklevel=3,
    )


def _warn_no_features(paths: Sequence[str], record_type: int) -> None:
    """Records in which no feature holds values are usually other protobufs (ranking's
    ExampleListWithContext, NoteSequence, ...) that happen to parse: say how to read them."""
    kind = "tf.train.Example" if record_type == codec.EXAMPLE else "tf.train.SequenceExample"
    more = f" and {len(paths) - 1} more" if len(paths) > 1 else ""
    warnings.warn(
        f"no feature holds values in the sampled records of {paths[0]}{more} read as {kind}, "
        "so the table has no data columns. If the records are other protobufs (for example "
        "tensorflow_ranking's ExampleListWithContext), read them with record_type='bytes' "
        "(one binary column of serialized records) and parse them with their own message class",
        stacklevel=4,
    )
