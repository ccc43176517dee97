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
>>> plan_matches(["/d", "/d/a", "/d-b"], [1, 1, 1], True)
[1, 2, 1]
>>> plan([("/d/b", "/d", None, None, 1, 0, 0, False), ("/d/_a", "/d", None, None, 1, 0, 0, False)], 1, (), None)
([0], None, 0, None, None, [0])
>>> hive_plan([("/d/p=1/f", "/d", None), ("/d/p=x/f", "/d", None)], False, False, (), {})
(['p'], [['1', 'x']], [None])
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

from tfsql import messages
from tfsql._reference.description import is_description_name
from tfsql._reference.inference import pick_files
from tfsql._reference.rules import (
    IN_WALK,
    LAYOUT_NONE,
    LAYOUT_TFDS,
    MATCHED,
    WALK_DESCEND,
    WALK_SKIP,
    detect_layout,
    glob_exempts,
    glob_root,
    hive_directory,
    hive_int64,
    hive_segments,
    intent_view,
    is_tfds_info_name,
    is_tfds_metadata_name,
    keep_listed,
    tfds_split,
    tfx_split,
    walk_action,
)


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


def plan_matches(paths: Sequence[str], kinds: Sequence[int], globstar: bool) -> list[int]:
    """The action for each glob match: the walk rule (met walking under ``**``, else
    matched), and a directory below or equal to another walked match skipped."""
    actions = [walk_action(kind, IN_WALK if globstar else MATCHED) for kind in kinds]
    walked = {_bytes(p.rstrip("/") or "/") for p, a in zip(paths, actions) if a == WALK_DESCEND}
    first: dict[bytes, int] = {}
    for i, path in enumerate(paths):
        if actions[i] != WALK_DESCEND:
            continue
        raw = _bytes(path.rstrip("/") or "/")
        if raw in first or any(_below(raw, d) for d in walked):
            actions[i] = WALK_SKIP
        first.setdefault(raw, i)
    return actions


def _below(path: bytes, directory: bytes) -> bool:
    prefix = directory if directory.endswith(b"/") else directory + b"/"
    return path != directory and path.startswith(prefix)


def _dirname(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _exempt(pattern: Optional[str]) -> tuple:
    if pattern is None:
        return ()
    root = glob_root(pattern)
    rest = pattern[len(root) :] if pattern.startswith(root) else pattern
    return tuple(c for c in rest.split("/") if c and glob_exempts(c))


def _rel(path: str, root: str) -> str:
    if root in ("", "/"):
        return path.lstrip("/")
    return path[len(root) + 1 :] if path.startswith(root.rstrip("/") + "/") else path


def plan(entries: Sequence[tuple], nitems: int, prefixes: Sequence[str], infer_files: Optional[int]) -> tuple:
    """``(files, empty_item, layout, splits, tfds_dir, picks)`` of a listing of entries
    ``(path, root, pattern, intent, size, mtime_ns, item, fallback)``: see
    ``tfsql/_native.pyi``."""
    views = {i: e[0] for i, e in enumerate(entries)}
    dropped: set[int] = set()
    for r, (path, root, _, intent, _, _, item, _) in enumerate(entries):
        if intent is None or root is None:
            continue
        prefix = _dirname(path) + "/"
        below = [i for i, e in enumerate(entries) if e[1] is not None and e[6] == item and e[0].startswith(prefix)]
        rels = sorted({entries[i][0][len(prefix) :] for i in below}, key=_bytes)  # a path listed twice: judged once
        try:
            judged = dict(zip(rels, intent_view(intent, rels)))
        except (ValueError, KeyError, TypeError):
            continue
        for i in below:
            old = judged[entries[i][0][len(prefix) :]]
            if old is False:
                dropped.add(i)
            elif isinstance(old, str):
                views[i] = prefix + old

    def keep(i: int) -> bool:
        path, root, pattern = entries[i][:3]
        if root is None:
            return True
        if is_description_name(path.rsplit("/", 1)[-1]):
            return False
        if path.rsplit("/", 1)[-1].startswith(tuple(prefixes)) and prefixes:
            return False
        return keep_listed(_rel(views[i], root), _exempt(pattern))

    kept = [i for i in range(len(entries)) if i not in dropped and entries[i][6] < nitems and keep(i)]
    globbed = {entries[i][6] for i in kept if not entries[i][7]}
    kept = [i for i in kept if not entries[i][7] or entries[i][6] not in globbed]
    per_item = {entries[i][6] for i in kept}
    empty = next((k for k in range(nitems) if k not in per_item), None)
    kept.sort(key=lambda i: (entries[i][6], _bytes(views[i]), i))
    seen: set[bytes] = set()
    files = []
    for i in kept:
        raw = _bytes(entries[i][0])
        if raw not in seen:
            seen.add(raw)
            files.append(i)
    info_dirs = {
        _dirname(entries[i][0])
        for i in files
        if entries[i][1] is not None and is_tfds_info_name(entries[i][0].rsplit("/", 1)[-1])
    }
    files = [
        i
        for i in files
        if not (
            entries[i][1] is not None
            and _dirname(entries[i][0]) in info_dirs
            and is_tfds_metadata_name(entries[i][0].rsplit("/", 1)[-1])
        )
    ]
    picks = pick_files([entries[i][4] for i in files], infer_files)
    paths = [entries[i][0] for i in files]
    rel_dirs = [None if entries[i][1] is None else hive_directory(entries[i][0], entries[i][1], False) for i in files]
    layout = detect_layout(paths, rel_dirs)
    splits: Optional[list] = None
    tfds_dir: Optional[str] = None
    if layout != LAYOUT_NONE:  # every file has a root then
        splits = [tfds_split(p) if layout == LAYOUT_TFDS else tfx_split(d or "") for p, d in zip(paths, rel_dirs)]
    if layout == LAYOUT_TFDS and len({_dirname(p) for p in paths}) == 1:
        tfds_dir = _dirname(paths[0])
    return files, empty, layout, splits, tfds_dir, picks
