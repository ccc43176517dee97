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

The C core summarises each sampled block (``codec.summarize``: per feature its kinds,
value counts and UTF-8-ness); :func:`merge_stats` folds the summaries and
:func:`infer_from_stats` maps them to columns, following ``docs/format.md`` section 3:

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
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable, Mapping, Sequence

import numpy as np
import pyarrow as pa

from tfsql._codec import codec
from tfsql._proto import SequenceExample
from tfsql.decoding import translate_decode_error
from tfsql.errors import SchemaError
from tfsql.framing import FrameReader, RecordBlock
from tfsql.options import DEFAULT_INFER_BYTES, READ_OPTIONS
from tfsql.schema import FEATURE_LIST_SUFFIX, RAW_COLUMN, canonical_type, feature_list_name, kind_name

__all__ = ["sample_indices", "infer_data_schema", "sample_stats", "FeatureStats", "merge_stats", "infer_from_stats"]


def sample_indices(n_files: int, infer_files: int | None) -> list[int]:
    """Indices of ``infer_files`` files spread evenly over ``n_files`` (first and last included)."""
    if infer_files is None or infer_files >= n_files:
        return list(range(n_files))
    if infer_files <= 1:
        return [0][: max(infer_files, 0)]
    step = (n_files - 1) / (infer_files - 1)
    return sorted({round(i * step) for i in range(infer_files)})


def infer_data_schema(
    paths: Sequence[str],
    open_reader: Callable[[int], FrameReader],
    *,
    record_type: int,
    infer_sample: int | None,
    lists: str,
    infer_bytes: int | None = DEFAULT_INFER_BYTES,
) -> tuple[pa.Schema, dict[tuple[int, str], FeatureStats]]:
    """Infer the data schema from the files ``open_reader(i)`` opens (``i`` indexes
    ``paths``, already chosen by :func:`sample_indices`).

    Returns the schema and the merged per-feature statistics (the scanner uses them
    to report features that appear later but are not in the schema).
    """
    merged, sampled = _sample(paths, open_reader, record_type, infer_sample, infer_bytes)
    valued = any(k != codec.KIND_NONE for st in merged.values() for k in st.kinds)
    if sampled and not valued:
        _warn_no_features(sampled, record_type)
    schema = infer_from_stats(merged.values(), record_type, lists=lists, warn_kindless=valued)
    return schema, merged


def sample_stats(
    paths: Sequence[str],
    open_reader: Callable[[int], FrameReader],
    *,
    record_type: int,
    infer_sample: int | None,
    infer_bytes: int | None = DEFAULT_INFER_BYTES,
) -> dict[tuple[int, str], FeatureStats]:
    """Per-feature statistics of the first ``infer_sample`` records (or ``infer_bytes``)
    of each file ``open_reader(i)`` opens, keyed by ``(location, feature name)``."""
    return _sample(paths, open_reader, record_type, infer_sample, infer_bytes)[0]


def _sample(
    paths: Sequence[str],
    open_reader: Callable[[int], FrameReader],
    record_type: int,
    infer_sample: int | None,
    infer_bytes: int | None,
) -> tuple[dict[tuple[int, str], FeatureStats], list[str]]:
    """The merged statistics of the sample, and the files that had sampled records."""
    merged: dict[tuple[int, str], FeatureStats] = {}
    byte_limit = None if infer_sample is None else infer_bytes
    sampled: list[str] = []  # files with at least one sampled record
    if record_type != codec.RAW:
        for i, path in enumerate(paths):
            with contextlib.closing(open_reader(i)) as reader:
                reader.read_budget = byte_limit  # read about the sample, not twice that
                sampled_bytes = 0
                for block in reader.blocks(limit=infer_sample):
                    if block.first_index == 0:
                        sampled.append(path)
                        if record_type == codec.EXAMPLE:
                            _warn_if_sequence_examples(block, path)
                    if byte_limit is not None:
                        block = _first_bytes(block, byte_limit - sampled_bytes)
                        sampled_bytes += int(block.lengths.sum())
                    merge_stats(merged, _summarize(block, record_type), path=path)
                    if byte_limit is not None and sampled_bytes >= byte_limit:
                        break
    return merged, sampled


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


def _first_bytes(block: RecordBlock, limit: int) -> RecordBlock:
    """The block's first records, up to the one whose payload reaches ``limit`` bytes."""
    ends = np.cumsum(block.lengths)
    keep = int(np.searchsorted(ends, limit)) + 1
    if keep >= len(block):
        return block
    return replace(block, offsets=block.offsets[:keep], lengths=block.lengths[:keep])


def _warn_if_sequence_examples(block, path: str) -> None:
    """Read as Examples, SequenceExamples lose their feature lists (field 2 is unknown to
    Example); say so when a file's first record has feature lists."""
    first = bytes(block.buf[int(block.offsets[0]) : int(block.offsets[0] + block.lengths[0])])
    try:
        lists = SequenceExample.FromString(first).feature_lists.feature_list
        # Other protobufs can parse as a SequenceExample with feature lists; real ones
        # hold values in at least one step.
        looks_sequence = any(step.WhichOneof("kind") for fl in lists.values() for step in fl.feature)
    except Exception:  # not a SequenceExample either; decoding reports what is wrong
        return
    if looks_sequence:
        warnings.warn(
            f"the records of {path} look like tf.train.SequenceExample (they have feature "
            "lists), but are read as Examples, which keeps only their context features; "
            "pass record_type='sequence_example'",
            stacklevel=4,
        )


def _summarize(block, record_type: int) -> dict:
    try:
        summary = codec.summarize(block.buf, block.offsets, block.lengths, record_type)
    except codec.DecodeError as exc:
        raise translate_decode_error(exc, block, record_type, specs=()) from None
    return summary  # names are UTF-8: summarize refuses a record with another (protobuf's rule)


@dataclass
class FeatureStats:
    """Merged inference statistics of one feature across sampled records."""

    location: int
    name: str
    kinds: dict[int, str] = field(default_factory=dict)  # kind -> first file seen with it
    present: int = 0
    min_len: int = 0
    max_len: int = 0
    utf8: bool = True
    max_inner_len: int = 0


def merge_stats(merged: dict[tuple[int, str], FeatureStats], summary: Mapping, *, path: str) -> None:
    """Fold one ``codec.summarize`` result, from file ``path``, into ``merged``."""
    for (location, raw_name), (mask, present, min_len, max_len, utf8, max_inner) in summary.items():
        name = raw_name.decode("utf-8", errors="surrogateescape")
        key = (location, name)
        stats = merged.get(key)
        if stats is None:
            stats = merged[key] = FeatureStats(location, name, min_len=min_len)
        for kind in (codec.KIND_NONE, codec.BYTES, codec.FLOAT, codec.INT64):
            if mask & (1 << kind):
                stats.kinds.setdefault(kind, path)
        stats.present += present
        stats.min_len = min(stats.min_len, min_len)
        stats.max_len = max(stats.max_len, max_len)
        stats.max_inner_len = max(stats.max_inner_len, max_inner)
        stats.utf8 = stats.utf8 and bool(utf8)


def infer_from_stats(
    stats: Iterable[FeatureStats], record_type: int, *, lists: str = "auto", warn_kindless: bool = True
) -> pa.Schema:
    """Build the data schema from merged statistics (see the module docstring).

    A feature that never has a kind is left out, with a warning unless
    ``warn_kindless=False``.

    Examples
    --------
    >>> from tfsql._codec import codec
    >>> s = FeatureStats(codec.FEATURES, "label", {codec.INT64: "f"}, present=2, min_len=1, max_len=1)
    >>> infer_from_stats([s], codec.EXAMPLE)
    label: int64
    """
    lists = READ_OPTIONS["lists"].validate(lists)
    if record_type == codec.RAW:
        return pa.schema([pa.field(RAW_COLUMN, pa.binary())])
    fields: list[tuple[FeatureStats, pa.Field]] = []
    for st in stats:
        kinds = {k: p for k, p in st.kinds.items() if k != codec.KIND_NONE}
        if len(kinds) > 1:
            described = " and ".join(f"{kind_name(k)} (first in {p})" for k, p in sorted(kinds.items()))
            raise SchemaError(
                f"feature {st.name!r} holds two kinds in the inference sample: {described}; "
                "pass schema= with the type to read it as, or fix the data",
                feature=st.name,
            )
        if not kinds:
            if warn_kindless:
                where = "feature list" if st.location == codec.FEATURE_LISTS else "feature"
                warnings.warn(
                    f"{where} {st.name!r} never has a kind set in the inference sample (no "
                    "bytes_list, float_list or int64_list), so it carries no values and its type "
                    "is unknown: it is left out. To keep it as a column (null where it has no "
                    f"values), name it with a type in schema=, e.g. schema={{{st.name!r}: "
                    "pa.int64(), ...}",
                    stacklevel=3,
                )
            continue
        (kind,) = kinds
        if st.location == codec.FEATURE_LISTS:
            shape = codec.LIST_OF_LIST
        elif lists == "always" or st.max_len != 1:  # several values, or only empty lists
            shape = codec.LIST
        else:
            shape = codec.SCALAR
        typ = canonical_type(kind, shape, utf8=st.utf8)
        fields.append((st, pa.field(st.name, typ)))
    return pa.schema(_name_columns(fields))


def _name_columns(fields: list[tuple[FeatureStats, pa.Field]]) -> list[pa.Field]:
    """Column names: the feature names, except that a feature list sharing its name with
    a context feature becomes ``name + FEATURE_LIST_SUFFIX``."""
    context = {st.name for st, _ in fields if st.location != codec.FEATURE_LISTS}
    named: list[pa.Field] = []
    taken: set[str] = set()
    for st, f in fields:
        name = st.name
        if st.location == codec.FEATURE_LISTS and name in context:
            name = st.name + FEATURE_LIST_SUFFIX
        elif st.location == codec.FEATURE_LISTS and feature_list_name(name, context) != name:
            taken.add(name)  # a literal "N__feature_list" beside a context "N" is ambiguous
        if name in taken or (name != st.name and name in context):
            raise SchemaError(
                f"feature list {st.name!r} shares its name with a context feature, and its "
                f"column name {name!r} is taken by another feature; pass schema= naming the "
                "columns to read",
                feature=st.name,
            )
        taken.add(name)
        named.append(f.with_name(name))
    return named
