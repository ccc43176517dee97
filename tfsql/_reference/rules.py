"""The dataset rules of ``tfsql/_native.pyi`` in pure Python (the C core's are in
``tfsql/core/paths.c``, ``hive.c``, ``layout.c``, ``detect.c`` and ``intent.c``).

Written from the rules' statements, on Python's own tools (``fnmatch``, ``re``,
``json``), so that ``tests/unit/test_dataset_rules_core.py`` can compare the two, and
so that ``TFSQL_PURE_PYTHON=1`` reads datasets without the C core.

Examples
--------
>>> hive_segments("label=1/extra/split=a%2Fb")
[('label', '1'), ('split', 'a/b')]
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import struct
from fnmatch import fnmatchcase
from typing import Any, Optional, Union

from tfsql._reference.framing import masked_crc32c
from tfsql._reference.inference import FEATURE_LIST_SUFFIX

ENTRY_FILE, ENTRY_DIR, ENTRY_DIR_LINK, ENTRY_OTHER, ENTRY_MISSING = range(5)
NAMED, MATCHED, IN_WALK = range(3)
WALK_READ, WALK_DESCEND, WALK_SKIP, WALK_REFUSE = range(4)
LAYOUT_NONE, LAYOUT_TFDS, LAYOUT_TFX = range(3)

_HIVE_DEFAULT = "__HIVE_DEFAULT_PARTITION__"
_HEX = re.compile(r"%([0-9A-Fa-f]{2})")
_INTEGER = re.compile(r"-?[0-9]+\Z")
_TFDS_SHARD = re.compile(r"^.+-(?P<split>[^-./]+)\.tfrecord-[0-9]+-of-[0-9]+\Z")
_INTENT_MAX_BYTES = 256 << 20


def is_hidden_name(name: str) -> bool:
    if name.startswith(".") or (name.startswith("_") and "=" not in name):
        return True
    return name.endswith((".crc", "._COPYING_"))


def glob_root(pattern: str) -> str:
    prefix = []
    for part in pattern.split("/")[:-1]:
        if has_glob_magic(part):
            break
        prefix.append(part)
    root = "/".join(prefix)
    return "/" if not root and pattern.startswith("/") else root


def glob_exempts(component: str) -> bool:
    return component[:1] in ("_", ".")


def has_glob_magic(path: str) -> bool:
    return any(ch in "*?[" for ch in path)


def keep_listed(rel: str, exempt: tuple) -> bool:
    parts = [p for p in rel.split("/") if p]
    return all(not is_hidden_name(p) or any(fnmatchcase(p, pat) for pat in exempt) for p in parts)


def walk_action(kind: int, context: int) -> int:
    if kind == ENTRY_FILE:
        return WALK_READ
    if kind == ENTRY_DIR:
        return WALK_DESCEND
    if kind == ENTRY_DIR_LINK:
        return WALK_SKIP if context == IN_WALK else WALK_DESCEND
    return WALK_REFUSE if kind == ENTRY_OTHER else WALK_SKIP


def hive_unescape(text: str) -> str:
    return _HEX.sub(lambda m: chr(int(m.group(1), 16)), text)


def hive_segments(directory: str) -> list:
    segments = []
    for part in directory.replace("\\", "/").split("/"):
        key, sep, value = part.partition("=")
        if sep and key:
            segments.append((hive_unescape(key), None if value == _HIVE_DEFAULT else hive_unescape(value)))
    return segments


def hive_int64(text: str) -> Optional[int]:
    if _INTEGER.match(text) and -(2**63) <= int(text) < 2**63:
        return int(text)
    return None


def hive_directory(path: str, root: Optional[str], whole_path: bool) -> str:
    directory = posixpath.dirname(path)
    if not whole_path:
        if root is None:
            return ""
        root = root.rstrip("/")
        if directory != root and not directory.startswith(root + "/"):
            return ""
        directory = directory[len(root) :]
    return directory.lstrip("/")


def tfds_split(path: str) -> Optional[str]:
    match = _TFDS_SHARD.match(posixpath.basename(path))
    return match.group("split") if match else None


def tfx_split(rel_dir: str) -> Optional[str]:
    for part in reversed(rel_dir.split("/")):
        if part.startswith("Split-") and len(part) > 6:
            return part[6:]
    return None


def detect_layout(paths: list, rel_dirs: list) -> int:
    if not paths or None in rel_dirs:
        return LAYOUT_NONE
    if all(tfds_split(p) is not None for p in paths):
        return LAYOUT_TFDS
    return LAYOUT_TFX if all(tfx_split(d) is not None for d in rel_dirs) else LAYOUT_NONE


SPLIT_COLUMN = "split"


def layout_owns_column(layout: int, name: str) -> bool:
    return layout != LAYOUT_NONE and name == SPLIT_COLUMN


def layout_adds_split(layout: int, columns: list) -> bool:
    return layout != LAYOUT_NONE and SPLIT_COLUMN not in columns


def feature_list_name(column: str, context: Any) -> str:
    base = column[: -len(FEATURE_LIST_SUFFIX)]
    return base if column.endswith(FEATURE_LIST_SUFFIX) and base and base in context else column


def description_root(roots: list, layout: int) -> bool:
    first = roots[0] if roots else None
    return layout == LAYOUT_NONE and first is not None and all(root == first for root in roots)


def written_partitions(user_typed: bool, hive_off: bool, hive: list, described: list) -> tuple:
    if user_typed or hive_off:
        return [-1] * len(hive), 0
    typed_by = [described.index(n) if n in described else -1 for n in hive]
    return typed_by, 0 if hive else len(described)


def tfds_merge(columns: list, described: list) -> tuple:
    typed_by = [-1] * len(columns)
    appended = []
    for d, name in enumerate(described):
        if name in columns:
            typed_by[columns.index(name)] = d
        else:
            appended.append(d)
    return typed_by, appended


def is_tfds_metadata_name(name: str) -> bool:
    return name.lower().endswith((".json", ".txt"))


def is_tfds_info_name(name: str) -> bool:
    return name == "dataset_info.json"


def detect_compression(head: Any) -> Optional[str]:
    head = bytes(head)
    if len(head) >= 12 and masked_crc32c(head[:8]) == struct.unpack_from("<I", head, 8)[0]:
        return None
    if head[:2] == b"\x1f\x8b":
        return "gzip"
    if len(head) >= 2 and (head[0] & 0x0F) == 8 and (head[0] >> 4) <= 7 and (head[0] * 256 + head[1]) % 31 == 0:
        return "zlib"
    return None


_MAGIC = (
    (b"PAR1", "parquet"),
    (b"ORC", "orc"),
    (b"ARROW1", "arrow"),
    (b"\xff\xff\xff\xff", "arrow"),
    (b"\x89PNG\r\n\x1a\n", "png"),
    (b"\xff\xd8\xff", "jpeg"),
    (b"\x1f\x8b", "gzip"),
)
_CONTROL = frozenset(range(0x20)) - {9, 10, 12, 13} | {0x7F}


def sniff_format(head: Any) -> Optional[str]:
    head = bytes(head)
    if len(head) >= 12 and masked_crc32c(head[:8]) == struct.unpack_from("<I", head, 8)[0]:
        return None
    for magic, name in _MAGIC:
        if head.startswith(magic):
            return name
    text = head[3:] if head.startswith(b"\xef\xbb\xbf") else head
    if not text or any(b in _CONTROL for b in text):
        return None
    return "json" if text.lstrip(b" \t\r\n")[:1] in (b"{", b"[") else "text"


def _inner(rel: Any) -> bool:
    return (
        isinstance(rel, str) and rel != "" and "\0" not in rel and all(p not in ("", ".", "..") for p in rel.split("/"))
    )


def intent_parse(record: bytes) -> dict:
    try:
        if len(record) > _INTENT_MAX_BYTES:
            raise ValueError("larger than any record tfsql writes")
        raw = json.loads(record)
        if raw.get("tfsql_intent") != 1 or raw["state"] not in ("prepared", "committed"):
            raise ValueError("unknown format or state")
        if not {"job", "trash", "replaced", "new", "created"} <= set(raw):
            raise ValueError("a key is missing")
        trash, new = raw["trash"], [(s, d) for s, d in raw["new"]]
        paths = [trash, *raw["replaced"], *raw["created"], *(p for pair in new for p in pair)]
        if not isinstance(raw["job"], str):
            raise ValueError("the job is not a string")
        if not (isinstance(trash, str) and trash.startswith("_trash-") and "/" not in trash):
            raise ValueError("a path leaves the target")
        if not all(map(_inner, paths)):
            raise ValueError("a path leaves the target")
    except (KeyError, TypeError, AttributeError, RecursionError) as exc:
        raise ValueError(f"not a tfsql intent record ({exc})") from None
    return {
        "state": raw["state"],
        "job": raw["job"],
        "trash": trash,
        "replaced": list(raw["replaced"]),
        "new": new,
        "created": list(raw["created"]),
    }


def intent_view(record: bytes, rels: list) -> list[Union[None, bool, str]]:
    raw = intent_parse(record)
    trash, new = raw["trash"], raw["new"]
    view: list[Union[None, bool, str]] = [None] * len(rels)
    if raw["state"] != "prepared":
        return view
    listed = {rel: i for i, rel in enumerate(rels)}
    for staged, final in new:
        if staged not in listed and final in listed:
            view[listed[final]] = False
    for i, rel in enumerate(rels):
        if rel.startswith(trash + "/") and len(rel) > len(trash) + 1:
            view[i] = rel[len(trash) + 1 :]
    return view


_TFDS_TYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "float32", "float64")


def _tfds_type(feature: Any) -> tuple:
    """(type name or None, is_list, class_label) of one features.json feature."""
    if not isinstance(feature, dict):
        return None, False, False
    image = feature.get("image")
    if isinstance(image, dict) and image.get("encodingFormat", "png") in ("png", "jpeg"):
        return "binary", False, False
    if "text" in feature:
        return "string", False, False
    if "classLabel" in feature:
        return "int64", False, True
    tensor = feature.get("tensor")
    if isinstance(tensor, dict) and tensor.get("encoding", "none") == "none":
        dtype = str(tensor.get("dtype"))
        name = {"string": "binary", "float16": "float32", "bfloat16": "float32"}.get(dtype, dtype)
        if name not in _TFDS_TYPES and name != "binary":
            return None, False, False
        shape = tensor.get("shape")
        dims = shape.get("dimensions") if isinstance(shape, dict) else None
        return name, isinstance(dims, list) and len(dims) > 0, False
    return None, False, False


def tfds_features(document: bytes) -> Optional[tuple]:
    """The top-level features of a TFDS features.json, ([(name, type or None, is_list,
    class_label)], every one described), None when it is not such a document
    (tfsql/core/tfds_features.c)."""
    if len(document) > 64 << 20:
        return None
    try:
        parsed = json.loads(document)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        return None
    features = parsed.get("featuresDict", {}).get("features") if isinstance(parsed, dict) else None
    if not isinstance(features, dict):
        return None
    typed = [(name, *_tfds_type(feature)) for name, feature in features.items()]
    return typed, all(type_name is not None for _, type_name, _, _ in typed)


_INDEX_LINE = re.compile(rb"([0-9]{1,19}) ([0-9]{1,19})(?:\n|\Z)")


def index_sidecar_path(path: str) -> str:
    """``.<name>.idx`` beside the file, the part up to the last ``/`` kept as it is.

    >>> index_sidecar_path("/data/train-0.tfrecord")
    '/data/.train-0.tfrecord.idx'
    """
    directory, slash, name = path.rpartition("/")
    return f"{directory}{slash}.{name}.idx"


def index_fresh(index_mtime_ns: int, file_mtime_ns: int) -> bool:
    """A sidecar not older than its file may describe it."""
    return index_mtime_ns >= file_mtime_ns


def index_check(text: bytes, fd: int, file_size: int, spans: bool) -> tuple[int, Optional[bytes], Optional[bytes]]:
    text = bytes(text)
    offsets: list[int] = []
    sizes: list[int] = []
    expected = position = 0
    while position < len(text):
        line = len(offsets) + 1
        match = _INDEX_LINE.match(text, position)
        if match is None or max(int(match[1]), int(match[2])) >= 1 << 63:
            raise ValueError(f"line {line} is not 'offset size' (two decimal numbers below 2^63)")
        offset, size = int(match[1]), int(match[2])
        if offset != expected:
            if offset < expected:
                raise ValueError(f"line {line} goes back to byte {offset}: the lines must follow the records in order")
            raise ValueError(f"line {line} skips to byte {offset}: a record is missing")
        if size < 16 or offset + size > file_size:
            raise ValueError(f"line {line}'s record of {size} bytes does not fit the file")
        offsets.append(offset)
        sizes.append(size)
        expected, position = offset + size, match.end()
    if expected != file_size:
        raise ValueError(f"its last record ends at byte {expected}, the file has {file_size} bytes")
    if offsets and fd >= 0:
        head = os.pread(fd, 12, offsets[-1])
        if len(head) < 12 or masked_crc32c(head[:8]) != struct.unpack_from("<I", head, 8)[0]:
            raise ValueError(f"no record header at byte {offsets[-1]} (its last line)")
        if struct.unpack_from("<Q", head)[0] + 16 != sizes[-1]:
            raise ValueError(f"the record at byte {offsets[-1]} is not {sizes[-1]} bytes long")
    if not spans:
        return len(offsets), None, None
    return len(offsets), struct.pack(f"={len(offsets)}Q", *offsets), struct.pack(f"={len(sizes)}Q", *sizes)
