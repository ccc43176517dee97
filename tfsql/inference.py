"""Schema inference over an explicit, deterministic sample of records.

The sample is the first ``infer_sample`` records of each of up to ``infer_files``
non-empty files, chosen evenly through the sorted file list (always the first and the
last file) — never only the first file. Each file's sample also ends once its
records hold ``infer_bytes`` bytes (4 MiB: a hundred large image records tell the
schema as well as a thousand, and the scan that follows reads them again).
``infer_sample=None`` reads every record of every chosen file (whatever
``infer_bytes``) and ``infer_files=None`` chooses every file, so
``infer_sample=None, infer_files=None`` infers from the whole dataset.

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
from dataclasses import replace
from typing import Callable, Sequence

import numpy as np
import pyarrow as pa

from tfsql._codec import codec
from tfsql._proto import SequenceExample
from tfsql.decode import translate_decode_error
from tfsql.errors import SchemaError
from tfsql.records import FrameReader, RecordBlock
from tfsql.schema import FeatureStats, infer_from_stats, merge_stats

__all__ = ["sample_indices", "infer_data_schema", "sample_stats", "DEFAULT_INFER_SAMPLE", "DEFAULT_INFER_FILES",
           "DEFAULT_INFER_BYTES"]

#: Records read from the start of each sampled file.
DEFAULT_INFER_SAMPLE = 1000
#: Files sampled, spread evenly through the file list.
DEFAULT_INFER_FILES = 16
#: Record bytes after which a file's sample ends (even before ``infer_sample`` records).
DEFAULT_INFER_BYTES = 4 << 20


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
    paths: Sequence[str], open_reader: Callable[[int], FrameReader], record_type: int, infer_sample: int | None,
    infer_bytes: int | None,
) -> tuple[dict[tuple[int, str], FeatureStats], list[str]]:
    """The merged statistics of the sample, and the files that had sampled records."""
    merged: dict[tuple[int, str], FeatureStats] = {}
    byte_limit = None if infer_sample is None else infer_bytes
    sampled: list[str] = []  # files with at least one sampled record
    if record_type != codec.RAW:
        for i, path in enumerate(paths):
            with contextlib.closing(open_reader(i)) as reader:
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
    for _, name in summary:
        if not _is_utf8(name):
            raise _non_utf8_name_error(block, record_type, name)
    return summary


def _is_utf8(name: bytes) -> bool:
    try:
        name.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _non_utf8_name_error(block, record_type: int, name: bytes) -> SchemaError:
    """A column cannot be named by bytes that are not UTF-8 (Arrow field names are
    strings): name the file, the first record holding ``name`` and its bytes."""
    record = 0
    for i in range(len(block)):
        one = codec.summarize(block.buf, block.offsets[i : i + 1], block.lengths[i : i + 1], record_type)
        if any(key == name for _, key in one):
            record = i
            break
    index = block.first_index + record
    return SchemaError(
        f"feature name {name!r} in {block.path}, record {index} at byte "
        f"{block.record_offset(record)} is not valid UTF-8, so it cannot name a column; "
        "pass schema= with the columns to read (features not in it are skipped)",
        feature=name.decode("utf-8", errors="backslashreplace"),
        path=block.path,
        record_index=index,
    )
