"""The pure-Python reference codec: the API of ``tfsql/_native.pyi`` on ``protobuf``,
in modules by job: :mod:`.common` (codes, ``DecodeError``), :mod:`.framing`,
:mod:`.decoding`, :mod:`.encoding`, :mod:`.summaries` and :mod:`.rules` (the dataset
rules: hidden names, hive directories, layouts, compression, intent records).

This module is written independently of the C core and serves two purposes:

1. the oracle of the differential tests (``tests/unit/test_differential.py``), so it
   leaves every protobuf decision (packed or unpacked values, unknown fields, repeated
   map keys, oneof merging) to the ``protobuf`` package itself, and
2. the fallback codec when ``TFSQL_PURE_PYTHON=1`` is set (see ``tfsql._codec``).

It favours clarity over speed, but builds its output buffers with numpy and keeps
float32 values as raw bits end to end (Python floats would quiet signalling NaNs).

Decisions the stub leaves open, made here (the C core is expected to agree):

- Returned "buffers" are ``bytes``; ``len()`` is their size in bytes.
- ``inner_null_count`` is ``0`` (not ``None``) for SCALAR and LIST columns.
- ``Decoder`` columns: ``FEATURES`` takes ``SCALAR`` or ``LIST``; ``FEATURE_LISTS``
  takes only ``LIST_OF_LIST`` and only with ``SEQUENCE_EXAMPLE``; anything else, or
  the same (location, name) twice, is a ``ValueError``.
- When a record breaks several columns, the error names the lowest column index.
- A feature holding another kind is a ``kind_mismatch`` even when its list is empty.
- ``Encoder`` always writes ``Example.features`` and both ``SequenceExample.context``
  and ``.feature_lists`` (possibly empty), map entries in column order, packed
  numeric values; a null row of a ``RAW`` column is a ``ValueError``.
- ``summarize`` on ``RAW`` records returns ``{}``.

Examples
--------
>>> from tfsql import _reference as ref
>>> from tfsql._proto import Example
>>> ex = Example()
>>> ex.features.feature["label"].int64_list.value.append(7)
>>> payload = ex.SerializeToString()
>>> framed, ends = ref.encode_frames(payload, np.array([0, len(payload)], np.int64))
>>> offsets, lengths, end, status = ref.scan_frames(framed)
>>> status == ref.FRAME_OK and end == len(framed)
True
>>> columns = [(b"label", ref.FEATURES, ref.INT64, ref.SCALAR)]
>>> (validity, nulls, *_, values), = ref.Decoder(ref.EXAMPLE, columns).decode(
...     framed, offsets, lengths)
>>> validity is None, nulls, np.frombuffer(values, np.int64).tolist()
(True, 0, [7])
"""

from __future__ import annotations

import numpy as np  # noqa: F401  (the examples use it)

from tfsql._reference.common import (
    EXAMPLE,
    SEQUENCE_EXAMPLE,
    RAW,
    FEATURES,
    FEATURE_LISTS,
    KIND_NONE,
    BYTES,
    FLOAT,
    INT64,
    SCALAR,
    LIST,
    LIST_OF_LIST,
    FRAME_OK,
    FRAME_TRUNCATED,
    FRAME_BAD_LENGTH_CRC,
    FRAME_BAD_DATA_CRC,
    FRAME_TOO_LONG,
    BOUNDARY_FOUND,
    BOUNDARY_NONE,
    BOUNDARY_MORE,
    RESYNC_LOOKAHEAD,
    DecodeError,
    InferenceError,
)
from tfsql._reference.framing import (
    crc32c,
    masked_crc32c,
    hardware_crc,
    scan_frames,
    count_headers,
    header_offsets,
    find_boundary,
    plan_pieces,
    encode_frames,
)
from tfsql._reference.reader import (
    RecordReader,
    READER_PLAIN,
    READER_GZIP,
    READER_ZLIB,
    READER_DAMAGE,
    FRAME_PAST_END,
    READER_STREAM_CORRUPT,
    READER_STREAM_TRUNCATED,
    READER_WINDOW_READ,
)
from tfsql._reference.decoding import (
    Builder,
    Decoder,
    looks_like_sequence_example,
)
from tfsql._reference.encoding import (
    Encoder,
)
from tfsql._reference.summaries import (
    summarize,
)
from tfsql._reference.sample import SAMPLE_OK, SAMPLE_DAMAGE, SAMPLE_REFUSED
from tfsql._reference.inference import (
    FEATURE_LIST_SUFFIX,
    Inference,
    pick_files,
)

from tfsql._reference.plan import (
    hive_plan,
    listing_key,
    path_display,
    path_order,
    plan,
    plan_matches,
)
from tfsql._reference.description import (
    is_description_name,
    render_description,
    parse_description,
    type_parts,
)
from tfsql._reference.rules import (
    ENTRY_FILE,
    ENTRY_DIR,
    ENTRY_DIR_LINK,
    ENTRY_OTHER,
    ENTRY_MISSING,
    NAMED,
    MATCHED,
    IN_WALK,
    WALK_READ,
    WALK_DESCEND,
    WALK_SKIP,
    WALK_REFUSE,
    LAYOUT_NONE,
    LAYOUT_TFDS,
    LAYOUT_TFX,
    is_hidden_name,
    glob_exempts,
    glob_root,
    has_glob_magic,
    keep_listed,
    walk_action,
    hive_segments,
    hive_unescape,
    hive_int64,
    hive_directory,
    tfds_features,
    tfds_split,
    tfx_split,
    detect_layout,
    is_tfds_metadata_name,
    is_tfds_info_name,
    layout_owns_column,
    layout_adds_split,
    tfds_merge,
    written_partitions,
    description_root,
    feature_list_name,
    SPLIT_COLUMN,
    detect_compression,
    index_check,
    index_fresh,
    index_sidecar_path,
    intent_parse,
    sniff_format,
    intent_view,
)

__all__ = [
    "EXAMPLE",
    "SEQUENCE_EXAMPLE",
    "RAW",
    "FEATURES",
    "FEATURE_LISTS",
    "KIND_NONE",
    "BYTES",
    "FLOAT",
    "INT64",
    "SCALAR",
    "LIST",
    "LIST_OF_LIST",
    "FRAME_OK",
    "FRAME_TRUNCATED",
    "FRAME_BAD_LENGTH_CRC",
    "FRAME_BAD_DATA_CRC",
    "FRAME_TOO_LONG",
    "BOUNDARY_FOUND",
    "BOUNDARY_NONE",
    "BOUNDARY_MORE",
    "RESYNC_LOOKAHEAD",
    "DecodeError",
    "crc32c",
    "masked_crc32c",
    "hardware_crc",
    "scan_frames",
    "count_headers",
    "header_offsets",
    "find_boundary",
    "plan_pieces",
    "encode_frames",
    "RecordReader",
    "READER_PLAIN",
    "READER_GZIP",
    "READER_ZLIB",
    "READER_DAMAGE",
    "FRAME_PAST_END",
    "READER_STREAM_CORRUPT",
    "READER_STREAM_TRUNCATED",
    "READER_WINDOW_READ",
    "Builder",
    "Decoder",
    "looks_like_sequence_example",
    "Encoder",
    "summarize",
    "InferenceError",
    "Inference",
    "pick_files",
    "ENTRY_FILE",
    "ENTRY_DIR",
    "ENTRY_DIR_LINK",
    "ENTRY_OTHER",
    "ENTRY_MISSING",
    "NAMED",
    "MATCHED",
    "IN_WALK",
    "WALK_READ",
    "WALK_DESCEND",
    "WALK_SKIP",
    "WALK_REFUSE",
    "LAYOUT_NONE",
    "LAYOUT_TFDS",
    "LAYOUT_TFX",
    "is_hidden_name",
    "glob_exempts",
    "glob_root",
    "has_glob_magic",
    "keep_listed",
    "walk_action",
    "hive_plan",
    "listing_key",
    "FEATURE_LIST_SUFFIX",
    "hive_segments",
    "path_display",
    "path_order",
    "plan",
    "plan_matches",
    "hive_unescape",
    "hive_int64",
    "hive_directory",
    "tfds_features",
    "is_description_name",
    "render_description",
    "parse_description",
    "type_parts",
    "tfds_split",
    "tfx_split",
    "detect_layout",
    "is_tfds_metadata_name",
    "is_tfds_info_name",
    "layout_owns_column",
    "layout_adds_split",
    "tfds_merge",
    "written_partitions",
    "description_root",
    "feature_list_name",
    "SAMPLE_OK",
    "SAMPLE_DAMAGE",
    "SAMPLE_REFUSED",
    "SPLIT_COLUMN",
    "detect_compression",
    "index_check",
    "index_fresh",
    "index_sidecar_path",
    "intent_parse",
    "sniff_format",
    "intent_view",
]
