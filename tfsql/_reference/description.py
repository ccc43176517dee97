"""The column description tfsql writers keep beside their data (``features.json``):
the pure-Python twin of ``tfsql/core/description.c`` (same type text, same bytes).

Examples
--------
>>> type_parts("timestamp[us, tz=UTC]")
('timestamp', 'us', 'UTC', 0, 0, 0, (), ())
>>> parse_description(render_description([("x", "list<int64>", False)]))
[('x', 'list<int64>', False)]
"""

from __future__ import annotations

import json
import re
from typing import Any, Optional

from tfsql._reference.rules import tfds_features

__all__ = ["is_description_name", "render_description", "parse_description", "type_parts"]

_LEAVES = (
    "null bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float16 float32 float64 string "
    "large_string binary large_binary date32 date64"
).split()
_DATA, _PARTITION = "tfsql type: ", "tfsql partition type: "
_TENSOR = "tensorflow_datasets.core.features.tensor_feature.Tensor"
_DICT = "tensorflow_datasets.core.features.features_dict.FeaturesDict"
_INTEGER = re.compile(r"(-?)([0-9]{1,18})(?![0-9])")


def is_description_name(name: str) -> bool:
    """``features.json``: metadata, never data, below a directory or glob root."""
    return name == "features.json"


class _Cursor:
    def __init__(self, text: str) -> None:
        self.text, self.at = text, 0

    def eat(self, word: str) -> bool:
        if self.text.startswith(word, self.at):
            self.at += len(word)
            return True
        return False

    def number(self, negative: bool = False) -> int:
        m = _INTEGER.match(self.text, self.at)
        if m is None or (m.group(1) and not negative):
            raise ValueError(self.text)
        self.at = m.end()
        return int(m.group(0))

    def comma(self) -> bool:
        if not self.eat(","):
            return False
        self.eat(" ")
        return True

    def expect(self, word: str) -> None:
        if not self.eat(word):
            raise ValueError(self.text)


def _leaf(c: _Cursor) -> tuple:
    """(leaf, unit, tz, precision, scale, width) at the cursor."""
    for name in ("fixed_size_binary", "decimal128", "decimal256", "timestamp", "time32", "time64", "duration"):
        if c.eat(name):
            break
    else:
        names = [n for n in _LEAVES if c.text.startswith(n, c.at)]
        if not names:
            raise ValueError(c.text)
        name = max(names, key=len)
        c.at += len(name)
        return name, "s", "", 0, 0, 0
    if name == "fixed_size_binary":
        c.expect("[")
        width = c.number()
        c.expect("]")
        if not 1 <= width <= 2**31 - 1:
            raise ValueError(c.text)
        return name, "s", "", 0, 0, width
    if name.startswith("decimal"):
        c.expect("(")
        precision = c.number()
        if not c.comma():
            raise ValueError(c.text)
        scale = c.number(negative=True)
        c.expect(")")
        if not (1 <= precision <= (38 if name == "decimal128" else 76) and -precision <= scale <= precision):
            raise ValueError(c.text)
        return name, "s", "", precision, scale, 0
    c.expect("[")
    unit = next((u for u in ("ms", "us", "ns", "s") if c.eat(u)), None)
    allowed = {"time32": ("s", "ms"), "time64": ("us", "ns")}.get(name, ("s", "ms", "us", "ns"))
    if unit not in allowed:
        raise ValueError(c.text)
    tz = ""
    if name == "timestamp" and c.comma():
        c.expect("tz=")
        end = c.text.find("]", c.at)
        tz = c.text[c.at : end] if end >= 0 else ""
        if not tz or len(tz.encode()) >= 64:
            raise ValueError(c.text)
        c.at = end
    c.expect("]")
    return name, unit, tz, 0, 0, 0


def _type(c: _Cursor, wraps: list, shape: list) -> tuple:
    if c.eat("fixed_shape_tensor<"):
        leaf = _leaf(c)
        if leaf[0] == "null":
            raise ValueError(c.text)
        wraps.append(("fixed_shape_tensor", 0))
        c.expect(">[")
        shape.append(c.number())
        while c.eat(","):
            shape.append(c.number())
        c.expect("]")
        if min(shape) < 1 or len(shape) > 8:
            raise ValueError(c.text)
        return leaf
    wrap = next((w for w in ("list", "large_list", "fixed_size_list") if c.eat(w + "<")), None)
    if wrap is None:
        return _leaf(c)
    at = len(wraps)
    wraps.append((wrap, 0))
    leaf = _type(c, wraps, shape)
    c.expect(">")
    if wrap == "fixed_size_list":
        c.expect("[")
        size = c.number()
        c.expect("]")
        if not 1 <= size <= 2**31 - 1:
            raise ValueError(c.text)
        wraps[at] = (wrap, size)
    return leaf


def type_parts(text: str) -> Optional[tuple]:
    """``(leaf, unit, tz, precision, scale, width, ((wrap, size), ...), shape)`` of type
    text (the grammar in ``tfsql_core.h``), None for other text."""
    c = _Cursor(text)
    wraps: list = []
    shape: list = []
    try:
        leaf = _type(c, wraps, shape)
    except ValueError:
        return None
    if c.at != len(text) or len(wraps) > 4:
        return None
    return (*leaf, tuple(wraps), tuple(shape))


def _dtype(leaf: str) -> str:
    if leaf in ("bool", "float16", "float32", "float64") or leaf.startswith(("int", "uint")):
        return leaf
    if leaf in ("string", "large_string", "binary", "large_binary", "fixed_size_binary"):
        return "string"
    return "float32" if leaf.startswith("decimal") else "int64"


def _feature(text: str, partition: bool) -> dict:
    parts = type_parts(text)
    if parts is None:
        raise ValueError(f"{text!r} is not a tfsql type")
    leaf, *_, wraps, shape = parts
    dims: list[str] = []
    for wrap, size in wraps:
        if wrap == "fixed_shape_tensor":
            dims.extend(str(d) for d in shape)
        else:
            dims.append(str(size) if wrap == "fixed_size_list" else "-1")
    return {
        "description": (_PARTITION if partition else _DATA) + text,
        "pythonClassName": _TENSOR,
        "tensor": {"dtype": _dtype(leaf), "encoding": "none", "shape": {"dimensions": dims} if dims else {}},
    }


def render_description(columns: Any) -> bytes:
    """The ``features.json`` of ``[(name, type text, partition)]``."""
    features = {}
    for name, text, partition in columns:
        try:
            features[name] = _feature(text, bool(partition))
        except ValueError:
            raise ValueError(f"column {name!r}: {text!r} is not a tfsql type") from None
    document = {"featuresDict": {"features": features}, "pythonClassName": _DICT}
    return (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode()


def parse_description(document: Any) -> Optional[list]:
    """``[(name, type text, partition)]`` of a tfsql writer's ``features.json``; None
    for TFDS's own (a feature without a tfsql type) or for other bytes."""
    if tfds_features(bytes(document)) is None:
        return None
    features = json.loads(bytes(document))["featuresDict"]["features"]
    if not features:
        return None  # no column: nothing a tfsql writer writes
    columns = []
    for name, feature in features.items():
        description = feature.get("description") if isinstance(feature, dict) else None
        if not isinstance(description, str):
            return None
        partition = description.startswith(_PARTITION)
        if not partition and not description.startswith(_DATA):
            return None
        text = description[len(_PARTITION if partition else _DATA) :]
        parts = type_parts(text)
        if parts is None:
            return None
        columns.append((name, _render_type(parts), partition))
    return columns


def _render_type(parts: tuple) -> str:
    """Type text from ``type_parts`` (normalised spacing)."""
    leaf, unit, tz, precision, scale, width, wraps, shape = parts
    if leaf == "fixed_size_binary":
        text = f"{leaf}[{width}]"
    elif leaf.startswith("decimal"):
        text = f"{leaf}({precision}, {scale})"
    elif leaf == "timestamp":
        text = f"{leaf}[{unit}, tz={tz}]" if tz else f"{leaf}[{unit}]"
    elif leaf in ("time32", "time64", "duration"):
        text = f"{leaf}[{unit}]"
    else:
        text = leaf
    for wrap, size in reversed(wraps):
        if wrap == "fixed_shape_tensor":
            text = f"{wrap}<{text}>[{','.join(str(d) for d in shape)}]"
        elif wrap == "fixed_size_list":
            text = f"{wrap}<{text}>[{size}]"
        else:
            text = f"{wrap}<{text}>"
    return text
