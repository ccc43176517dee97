"""The reference of one file's inference sample read through a record reader
(``infer_sample_file``, ``tfsql/core/infer_sample.c``): the loop, which damage the
sample goes past (as the scan does, under ``on_corrupt='skip'``), which ends it, and
which is an error now. It runs over any reader and inference of the codec API (the
C core's or the reference's).

Examples
--------
>>> from tfsql._reference.common import EXAMPLE
>>> import struct
>>> from tfsql._reference.framing import masked_crc32c
>>> from tfsql._reference.inference import Inference
>>> from tfsql._reference.reader import RecordReader, READER_PLAIN
>>> head = struct.pack("<Q", 0)  # two empty records: two Examples without features
>>> data = 2 * (head + struct.pack("<II", masked_crc32c(head), masked_crc32c(b"")))
>>> reader = RecordReader(len(data), READER_PLAIN, "f", read=lambda view, at: _copy(data, view, at))
>>> inference = Inference(EXAMPLE, 10, None)
>>> inference.begin_file("f")
>>> sample_file(inference, reader, EXAMPLE, "f", 1 << 20, True, False, False)
(0, True, False, None)
>>> inference.sampled_records
2
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tfsql._reference.common import EXAMPLE, FRAME_BAD_DATA_CRC, FRAME_TOO_LONG, InferenceError
from tfsql._reference.decoding import looks_like_sequence_example
from tfsql._reference.reader import READER_STREAM_CORRUPT, READER_STREAM_TRUNCATED

__all__ = ["sample_file", "SAMPLE_OK", "SAMPLE_DAMAGE", "SAMPLE_REFUSED"]

SAMPLE_OK, SAMPLE_DAMAGE, SAMPLE_REFUSED = 0, 1, 2
_HEADER = 12


def _copy(data: bytes, view: memoryview, at: int) -> int:
    n = min(len(view), len(data) - at)
    view[:n] = data[at : at + n]
    return n


def _on_damage(status: int, skip_corrupt: bool, tolerant: bool, sampled_records: int) -> int:
    """1: go past it; 0: the file's sample ends (the scan reports it); -1: an error now."""
    if status in (READER_STREAM_CORRUPT, READER_STREAM_TRUNCATED):
        return -1
    if skip_corrupt or tolerant:
        return 1 if skip_corrupt else 0
    lost = status != FRAME_BAD_DATA_CRC and sampled_records == 0  # framing lost before any record
    return -1 if status == FRAME_TOO_LONG or lost else 0


def sample_file(
    inference: Any,
    reader: Any,
    record_type: int,
    path: str,
    max_record_bytes: int,
    verify: bool,
    skip_corrupt: bool,
    tolerant: bool,
    budget: int | None = None,
) -> tuple[int, bool, bool, Exception | None]:
    """Read the current file's sample (``(status, sampled, sequence_hint, error)``, as
    ``Inference.sample_file`` in ``tfsql/_native.pyi``); ``budget``: the bytes a file's
    sample reads about (infer_bytes; None when every record is sampled)."""
    sampled = hint = False
    if budget is not None and hasattr(reader, "limit_reads"):
        reader.limit_reads(budget)  # about the sample, not twice that (the reference's reader)
    while True:
        wanted = inference.records_wanted
        if wanted == 0:
            return SAMPLE_OK, sampled, hint, None
        limit = -1 if wanted is None else wanted
        got = reader.next(limit, -1, max_record_bytes, verify)
        while isinstance(got, int):
            act = _on_damage(reader.damage[0], skip_corrupt, tolerant, inference.sampled_records)
            if act <= 0:
                return (SAMPLE_DAMAGE if act < 0 else SAMPLE_OK), sampled, hint, None
            got = reader.skip(max_record_bytes) or reader.next(limit, -1, max_record_bytes, verify)
        if got is None:
            return SAMPLE_OK, sampled, hint, None
        window, offs, lens, first, base = got
        offsets, lengths = np.frombuffer(offs, np.uint64), np.frombuffer(lens, np.uint64)
        if first == 0:
            sampled = True
            start = int(offsets[0])
            hint = record_type == EXAMPLE and looks_like_sequence_example(
                memoryview(window)[start : start + int(lengths[0])]
            )
        try:
            _, done = inference.add(window, offsets, lengths, first, base)
        except ValueError as raised:  # the inference's DecodeError or InferenceError (either codec's)
            exc: Any = raised
            if type(exc).__name__ == "InferenceError":
                return SAMPLE_REFUSED, sampled, hint, exc
            if type(exc).__name__ != "DecodeError" or exc.reason != "malformed":
                raise
            if tolerant:
                return SAMPLE_OK, sampled, hint, None  # the scan reports it
            at = base + int(offsets[exc.record]) - _HEADER
            bad = InferenceError("malformed", "", path=path, record=first + exc.record, offset=at)
            return SAMPLE_REFUSED, sampled, hint, bad
        if done:
            return SAMPLE_OK, sampled, hint, None
