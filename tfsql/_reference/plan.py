"""The reference of the core's dataset plan (``tfsql/core/plan.c``): the order of a
listing, how a path is shown, and the hive columns of the files with their refusals.

Written from the rules, not from the C, so that the two can be checked against each
other (``tests/unit/test_plan.py``).

Examples
--------
>>> [["b", "a", "b"][i] for i in path_order(["b", "a", "b"])]
['a', 'b']
>>> path_display("/d/\\udc80x")
'/d/\\\\x80x'
>>> hive_plan([("/d/p=1/f", "/d", None), ("/d/p=x/f", "/d", None)], False, False, (), {})
(['p'], [['1', 'x']], [None])
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from tfsql import messages
from tfsql._reference.rules import hive_directory, hive_int64, hive_segments


def _bytes(path: str) -> bytes:
    return path.encode("utf-8", "surrogateescape")


def path_order(paths: Sequence[str]) -> list[int]:
    """Indices of `paths` sorted by their bytes, each path once (its first listing)."""
    first: dict[bytes, int] = {}
    for i, path in enumerate(paths):
        first.setdefault(_bytes(path), i)
    return [first[key] for key in sorted(first)]


def path_display(path: str) -> str:
    """The path with each byte that is not UTF-8 shown as ``\\xNN``."""
    return _bytes(path).decode("utf-8", "backslashreplace")


_MASK = (1 << 64) - 1


def _mix(h: int, v: int) -> int:
    h ^= (v + 0x9E3779B97F4A7C15 + ((h << 6) & _MASK) + (h >> 2)) & _MASK
    return (h * 0xFF51AFD7ED558CCD) & _MASK


def listing_key(seed: int, entries: Sequence[tuple[str, int, int]]) -> int:
    """A 64-bit key of (path, size, mtime_ns) entries: "re-infer only if files changed"."""
    h = _mix(0x1234567, seed)
    for path, size, mtime_ns in entries:
        raw = _bytes(path)
        h = _mix(h, len(raw))
        for byte in raw:
            h = _mix(h, byte)
        h = _mix(_mix(h, size & _MASK), mtime_ns & _MASK)
    return h


def _keys(keys: Sequence[str]) -> str:
    return "(" + ", ".join(path_display(k) for k in keys) + ")" if keys else "none"


def hive_plan(
    files: Sequence[tuple[str, Optional[str], Optional[str]]],
    whole_path: bool,
    required: bool,
    typed: Sequence[str],
    phrases: dict[str, str],
) -> Any:
    """``(names, raw, ints)`` or ``("refused", reason, fields, message)``: see
    ``tfsql/_native.pyi``."""

    def refused(reason: str, **fields: str) -> tuple:
        return ("refused", reason, fields, messages.HIVE[reason].format(**phrases, **fields))

    def shown(i: int) -> str:
        path, _, display = files[i]
        return path_display(display if display is not None else path)

    per_file = [hive_segments(hive_directory(path, root, whole_path)) for path, root, _ in files]
    keyed = [i for i, segments in enumerate(per_file) if segments]
    if not keyed:
        if required or typed:
            roots = sorted((root for _, root, _ in files if root is not None), key=_bytes)
            where = (
                messages.HIVE_WHERE["root"].format(root=path_display(roots[0]))
                if roots
                else messages.HIVE_WHERE["named"]
            )
            return refused("none_found", where=where)
        return [], [], []
    first = keyed[0]
    names = [key for key, _ in per_file[first]]
    for k, name in enumerate(names):
        if name in names[:k]:
            return refused("repeated_key", key=path_display(name), path=shown(first))
    for i, segments in enumerate(per_file):
        keys = [key for key, _ in segments]
        if keys != names:
            return refused(
                "inconsistent", first_path=shown(first), first_keys=_keys(names), path=shown(i), keys=_keys(keys)
            )
    for name in typed:
        if name not in names:
            return refused("unknown_key", key=path_display(name), keys=_keys(names))
    raw = [[segments[k][1] for segments in per_file] for k in range(len(names))]
    ints: list = []
    for column in raw:
        present = [v for v in column if v is not None]
        typed_values = [hive_int64(v) for v in present]
        is_int = bool(present) and None not in typed_values
        ints.append([None if v is None else hive_int64(v) for v in column] if is_int else None)
    return names, raw, ints
