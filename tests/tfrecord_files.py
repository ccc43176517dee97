"""Test helpers: TFRecord framing by hand (the one home of ``masked_crc`` / ``frame`` for
every test), Examples built with protobuf, framed TFRecord files written without tfsql's
writer, and written files read back without tfsql's reader.

Framing here uses the ``crc32c`` package directly and the protobufs ``tfsql._proto``
(the ``protobuf`` package), so tests of tfsql's reader, writer and codecs do not depend
on tfsql's own encoder or decoder. Messages are serialized with
``deterministic=True`` so map entries come in sorted key order (protobuf's default order
varies per process).

>>> frame(b"ab") == header(2) + b"ab" + struct.pack("<I", masked_crc(b"ab"))
True
>>> unframe(frames([b"", b"xyz"]))
[b'', b'xyz']
>>> buf, offsets, lengths = framed_spans([b"a", b"bc"])
>>> offsets.tolist(), lengths.tolist()
([12, 29], [1, 2])
"""

from __future__ import annotations

import gzip
import os
import struct
import zlib
from pathlib import Path
from typing import Iterable, Mapping

import crc32c as _crc32c
import numpy as np
import pyarrow as pa

from tfsql._proto import Example, Feature, SequenceExample


def masked_crc(data: bytes) -> int:
    """TensorFlow's masked CRC32C of ``data``."""
    crc = _crc32c.crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def header(length: int) -> bytes:
    """A record header (length and its CRC) claiming ``length`` payload bytes."""
    head = struct.pack("<Q", length)
    return head + struct.pack("<I", masked_crc(head))


def frame(payload: bytes) -> bytes:
    """One framed record."""
    return header(len(payload)) + payload + struct.pack("<I", masked_crc(payload))


def frames(payloads: Iterable[bytes]) -> bytes:
    """Framed records, one after another."""
    return b"".join(frame(p) for p in payloads)


def framed_spans(payloads: list[bytes]) -> tuple[bytes, np.ndarray, np.ndarray]:
    """``frames(payloads)`` with each payload's offset and length (what the codecs' decoders take)."""
    offsets, pos = [], 0
    for p in payloads:
        offsets.append(pos + 12)
        pos += 12 + len(p) + 4
    return frames(payloads), np.array(offsets, np.uint64), np.array([len(p) for p in payloads], np.uint64)


def unframe(stream: bytes) -> list[bytes]:
    """The payloads of a framed TFRecord stream; asserts every CRC and the exact end."""
    payloads = []
    pos = 0
    while pos < len(stream):
        head = stream[pos : pos + 8]
        (length,) = struct.unpack("<Q", head)
        assert struct.unpack("<I", stream[pos + 8 : pos + 12])[0] == masked_crc(head)
        data = stream[pos + 12 : pos + 12 + length]
        assert len(data) == length
        assert struct.unpack("<I", stream[pos + 12 + length : pos + 16 + length])[0] == masked_crc(data)
        payloads.append(data)
        pos += 16 + length
    assert pos == len(stream)
    return payloads


def fill_feature(feature: Feature, value) -> None:
    """Fill a Feature from int / float / str / bytes, or a list of one of them; ``()`` -> empty int64 list;
    ``Feature()`` (a sentinel NO_KIND) leaves the kind unset."""
    if value is NO_KIND:
        feature.SetInParent()
        return
    values = value if isinstance(value, (list, tuple)) else [value]
    if isinstance(value, tuple) and not value:
        feature.int64_list.SetInParent()
        return
    sample = values[0] if values else None
    if isinstance(sample, bool) or isinstance(sample, int):
        feature.int64_list.value.extend(values)
        feature.int64_list.SetInParent()
    elif isinstance(sample, float):
        feature.float_list.value.extend(values)
        feature.float_list.SetInParent()
    elif isinstance(sample, (str, bytes)):
        feature.bytes_list.value.extend(v.encode() if isinstance(v, str) else v for v in values)
        feature.bytes_list.SetInParent()
    else:  # empty list
        feature.float_list.SetInParent()


class _NoKind:
    def __repr__(self) -> str:
        return "NO_KIND"


NO_KIND = _NoKind()


def example(features: Mapping[str, object]) -> bytes:
    ex = Example()
    for name, value in features.items():
        fill_feature(ex.features.feature[name], value)
    return ex.SerializeToString(deterministic=True)


def sequence_example(context: Mapping[str, object], feature_lists: Mapping[str, list]) -> bytes:
    seq = SequenceExample()
    for name, value in context.items():
        fill_feature(seq.context.feature[name], value)
    for name, steps in feature_lists.items():
        fl = seq.feature_lists.feature_list[name]
        fl.SetInParent()
        for step in steps:
            fill_feature(fl.feature.add(), step)
    return seq.SerializeToString(deterministic=True)


def write_records(path: str | Path, payloads: Iterable[bytes], compression: str | None = None) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = frames(payloads)
    if compression == "gzip":
        data = gzip.compress(data)
    elif compression == "zlib":
        data = zlib.compress(data)
    path.write_bytes(data)
    return path


def write_examples(path: str | Path, rows: Iterable[Mapping[str, object]], compression: str | None = None) -> Path:
    return write_records(path, (example(r) for r in rows), compression)


def split_table(n: int) -> pa.Table:
    """``n`` rows of nullable ints and strings, float32, a float list and a ``split`` column
    (train/test/valid, the partition column of the SQL tests)."""
    return pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "label": pa.array([None if i % 11 == 0 else i % 4 for i in range(n)], pa.int64()),
            "score": pa.array([(i * 37 % 101) / 4 for i in range(n)], pa.float32()),
            "name": pa.array([None if i % 7 == 3 else f"n{i}" for i in range(n)], pa.string()),
            "emb": pa.array([[float(i), float(i % 5)] for i in range(n)], pa.list_(pa.float32())),
            "split": pa.array([("train", "test", "valid")[i % 3] for i in range(n)], pa.string()),
        }
    )


# --------------------------------------------------------------------------------------
# Reading written files back, independently of tfsql
# --------------------------------------------------------------------------------------


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


def example_values(payload: bytes) -> dict:
    """``{name: values}`` of a serialized Example."""
    return {name: None if kv is None else kv[1] for name, kv in example_dict(payload).items()}


def payloads_of(path: str) -> list[bytes]:
    """The record payloads of a written file (every CRC checked)."""
    return unframe(file_bytes(path))


def written_values(result) -> list[dict]:
    """``{name: values}`` of every record a write wrote (a ``tfsql.WriteResult``), file by file."""
    return [example_values(p) for f in result.files for p in payloads_of(f.path)]


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
