"""The reference schema inference: the sample's per-file budget, the merged feature
summaries and the columns they resolve to, written independently of the C core's
``tfsql/core/infer.c`` (the API of ``Inference`` in ``tfsql/_native.pyi``).

Examples
--------
>>> from tfsql._reference.common import EXAMPLE
>>> inference = Inference(EXAMPLE, 1000, 4 << 20)
>>> inference.records_wanted
0
>>> inference.begin_file("f")
>>> inference.records_wanted
1000
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from tfsql._reference.common import (
    _KIND_NAMES,
    BYTES,
    FEATURE_LISTS,
    FLOAT,
    INT64,
    KIND_NONE,
    LIST,
    LIST_OF_LIST,
    RAW,
    SCALAR,
    InferenceError,
)
from tfsql._reference.sample import sample_file
from tfsql._reference.summaries import summarize
from tfsql import messages
from tfsql.messages import render

__all__ = ["Inference", "pick_files"]

FEATURE_LIST_SUFFIX = "__feature_list"


def pick_files(sizes: Any, infer_files: int | None) -> list[int]:
    """Positions of the non-empty files (size != 0) the inference samples: ``infer_files``
    of them spread evenly, first and last included, each position rounded half to even
    in exact arithmetic (None: all).

    >>> pick_files([1] * 10, 4), pick_files([0, 3, 0, 5], None)
    ([0, 3, 6, 9], [1, 3])
    """
    nonempty = [i for i, size in enumerate(sizes) if size != 0]
    if infer_files is None or infer_files >= len(nonempty):
        return nonempty
    if infer_files <= 1:
        return nonempty[: max(infer_files, 0)]
    span, steps = len(nonempty) - 1, infer_files - 1
    picked: list[int] = []
    for j in range(infer_files):
        q, r = divmod(j * span, steps)
        if 2 * r > steps or (2 * r == steps and q % 2 == 1):
            q += 1
        if not picked or picked[-1] != nonempty[q]:
            picked.append(nonempty[q])
    return picked


@dataclass
class _Stats:
    location: int
    name: bytes
    first_file: dict[int, int] = field(default_factory=dict)  # kind -> file it was first seen in
    max_len: int = 0
    utf8: bool = True


class Inference:
    """Inference over framed records, file by file (see ``tfsql/_native.pyi``)."""

    def __init__(self, record_type: int, infer_sample: int | None, infer_bytes: int | None) -> None:
        self._record_type = record_type
        self._sample = infer_sample
        self._bytes = None if infer_sample is None else infer_bytes
        self._stats: dict[tuple[int, bytes], _Stats] = {}
        self._paths: list[str] = []
        self._file_records = 0
        self._file_bytes = 0
        self._done = True
        self.sampled_records = 0
        self.sampled_bytes = 0

    def begin_file(self, path: str) -> None:
        self._paths.append(path)
        self._file_records = self._file_bytes = 0
        self._done = self._record_type == RAW or self._sample == 0

    @property
    def records_wanted(self) -> int | None:
        if self._done:
            return 0
        return None if self._sample is None else self._sample - self._file_records

    def add(self, buf: Any, offsets: Any, lengths: Any, first_index: int, base: int) -> tuple[int, bool]:
        if self._done or len(offsets) == 0:
            return 0, self._done
        lengths = np.asarray(lengths, dtype=np.uint64)
        keep = len(lengths) if self._sample is None else min(len(lengths), self._sample - self._file_records)
        taken_bytes = int(lengths[:keep].sum())
        if self._bytes is not None:
            ends = self._file_bytes + np.cumsum(lengths[:keep].astype(np.int64))
            reached = np.flatnonzero(ends >= self._bytes)
            if len(reached):
                keep = int(reached[0]) + 1
                taken_bytes = int(ends[keep - 1]) - self._file_bytes
                self._done = True
        offsets = np.asarray(offsets, dtype=np.uint64)[:keep]
        summary = summarize(buf, offsets, lengths[:keep], self._record_type)
        file = len(self._paths) - 1
        for (location, name), (mask, _present, _min, max_len, utf8, _inner) in summary.items():
            st = self._stats.setdefault((location, name), _Stats(location, name))
            for kind in (KIND_NONE, BYTES, FLOAT, INT64):
                if mask & (1 << kind):
                    st.first_file.setdefault(kind, file)
            st.max_len = max(st.max_len, max_len)
            st.utf8 = st.utf8 and bool(utf8)
        self._file_records += keep
        self._file_bytes += taken_bytes
        self.sampled_records += keep
        self.sampled_bytes += taken_bytes
        if self._sample is not None and self._file_records >= self._sample:
            self._done = True
        return keep, self._done

    def sample_file(
        self, reader: Any, max_record_bytes: int, verify: bool, skip_corrupt: bool, tolerant: bool
    ) -> tuple[int, bool, bool, Exception | None]:
        return sample_file(
            self,
            reader,
            self._record_type,
            self._paths[-1],
            max_record_bytes,
            verify,
            skip_corrupt,
            tolerant,
            budget=self._bytes,
        )

    def resolve(self, lists_always: bool, schema_hint: str) -> list[tuple[bytes, str, int, int, int, bool]]:
        resolved: list[tuple[_Stats, int, int, bool]] = []
        for st in self._stats.values():
            kinds = sorted(k for k in st.first_file if k != KIND_NONE)
            name = st.name.decode("utf-8", errors="backslashreplace")
            if len(kinds) > 1:
                described = messages.INFER_KINDS_JOIN.join(
                    render(messages.INFER_KIND_FIRST, kind=_KIND_NAMES[k], path=self._paths[st.first_file[k]])
                    for k in kinds
                )
                raise InferenceError(
                    "kind_conflict",
                    render(messages.INFER["kind_conflict"], feature=name, described=described, schema_hint=schema_hint),
                    feature=name,
                )
            kind = kinds[0] if kinds else KIND_NONE
            if st.location == FEATURE_LISTS:
                shape = LIST_OF_LIST
            elif lists_always or st.max_len != 1:
                shape = LIST
            else:
                shape = SCALAR
            resolved.append((st, kind, shape, kind == BYTES and st.utf8))
        context = {st.name for st, kind, _, _ in resolved if kind != KIND_NONE and st.location != FEATURE_LISTS}
        columns: list[tuple[bytes, str, int, int, int, bool]] = []
        for st, kind, shape, utf8 in resolved:
            renamed = st.location == FEATURE_LISTS and kind != KIND_NONE and st.name in context
            column = (st.name + (FEATURE_LIST_SUFFIX.encode() if renamed else b"")).decode(
                "utf-8", errors="backslashreplace"
            )
            columns.append((st.name, column, st.location, kind, shape, utf8))
        for raw, column, location, kind, _, _ in columns:
            if kind == KIND_NONE or location != FEATURE_LISTS:
                continue
            literal = raw.endswith(FEATURE_LIST_SUFFIX.encode()) and raw[: -len(FEATURE_LIST_SUFFIX)] in context
            clash = sum(1 for c in columns if c[1] == column and c[3] != KIND_NONE) > 1
            if literal or clash:
                shown = raw.decode("utf-8", errors="backslashreplace")
                raise InferenceError(
                    "name_taken",
                    render(messages.INFER["name_taken"], feature=shown, column=column, schema_hint=schema_hint),
                    feature=shown,
                )
        return columns

    def check_missing(self, columns: list[str], schema_name: str, hint: str, described: Sequence[str] = ()) -> None:
        if not self._stats:
            return
        held = {st.name.decode("utf-8", errors="surrogateescape") for st in self._stats.values()}
        held |= set(described)  # the dataset's description names it: not a misspelling
        held |= {
            st.name.decode("utf-8", errors="surrogateescape") + FEATURE_LIST_SUFFIX
            for st in self._stats.values()
            if st.location == FEATURE_LISTS
        }
        missing = [c for c in columns if c not in held]
        if not missing:
            return
        listed = messages.INFER_NAMES_JOIN.join(render(messages.INFER_NAME, name=c) for c in missing)
        count = len(self._paths)
        files = render(messages.INFER_FILES["one" if count == 1 else "many"], count=count)
        first = (self._paths[0] if self._paths else "") + (messages.INFER_MORE_FILES if count > 1 else "")
        raise InferenceError(
            "missing",
            render(
                messages.INFER["missing" if len(missing) == 1 else "missing_several"],
                schema_name=schema_name,
                listed=listed,
                files=files,
                first=first,
                hint=hint,
            ),
            feature=missing[0],
        )
