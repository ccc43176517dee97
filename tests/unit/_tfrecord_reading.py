"""Independent readers for written TFRecord files, for the writer's tests.

Framing is parsed by :func:`tfrecord_files.unframe` (byte by byte, with the ``crc32c``
package) and the protobufs with ``tfsql._proto`` (the ``protobuf`` package), so these
helpers share no code with the encoder they check.
"""

from __future__ import annotations

import gzip
import os
import zlib

from tfrecord_files import unframe
from tfsql._proto import Example, SequenceExample


def file_bytes(path: str) -> bytes:
    """A file's TFRecord stream, decompressed according to its extension."""
    with open(path, "rb") as f:
        raw = f.read()
    if path.endswith(".gz"):
        assert raw[:2] == b"\x1f\x8b"
        return gzip.decompress(raw)
    if path.endswith(".zz"):
        return zlib.decompress(raw)
    return raw


def feature_value(feature) -> tuple[str, list] | None:
    kind = feature.WhichOneof("kind")
    if kind is None:
        return None
    return kind, list(getattr(feature, kind).value)


def example_dict(payload: bytes) -> dict:
    """``{name: (kind, values)}`` of a serialized Example."""
    ex = Example.FromString(payload)
    return {k: feature_value(v) for k, v in ex.features.feature.items()}


def sequence_dict(payload: bytes) -> tuple[dict, dict]:
    """``(context, feature_lists)`` of a serialized SequenceExample; feature lists map
    to ``(kind, [values per step])``."""
    seq = SequenceExample.FromString(payload)
    context = {k: feature_value(v) for k, v in seq.context.feature.items()}
    lists = {}
    for name, feature_list in seq.feature_lists.feature_list.items():
        steps = [feature_value(f) for f in feature_list.feature]
        kinds = {s[0] for s in steps if s is not None}
        assert len(kinds) <= 1
        lists[name] = (kinds.pop() if kinds else None, [s[1] if s else None for s in steps])
    return context, lists


def read_examples(path: str) -> list[dict]:
    return [example_dict(p) for p in unframe(file_bytes(path))]


def tree_snapshot(root: str) -> dict[str, bytes | None]:
    """Every file and directory under ``root`` with file contents (None for dirs)."""
    snapshot: dict[str, bytes | None] = {}
    if not os.path.exists(root):
        return snapshot
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        snapshot[rel_dir] = None
        for name in filenames:
            with open(os.path.join(dirpath, name), "rb") as f:
                snapshot[os.path.join(rel_dir, name)] = f.read()
    return snapshot
