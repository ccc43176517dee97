"""Reading many small local files together: one buffer, one framing, one decode.

A scan of a dataset of many small files (a million files of one record each) spent
nearly all its time on per-file work: opening each file through the change guard,
framing it, decoding it into a batch of its own and finishing that batch (partition
and file path columns, filter, projection). :func:`read_small_files` reads a run of
consecutive small, local, uncompressed files into one buffer instead (two ``fstat``
calls and one positioned read per file, no Python object per record) and frames it
once; the scanner then decodes the run's records as one block and finishes one batch
for all of them, taking each row's partition values and file path by its file.

Nothing here decides an error: any doubt — a file that changed (size, modification
time, identity, gone), is compressed, is not cleanly framed (a bad CRC, a record too
long, a truncated record), or whose records a batch fails to decode — makes the caller
read the files of the run one by one as before, so values, errors (file, record, byte
offset), warnings and ``on_corrupt`` behave exactly as they do for a single file.

Examples
--------
>>> import os, tempfile, numpy as np
>>> from tfsql._codec import codec
>>> directory = tempfile.mkdtemp()
>>> paths = []
>>> for i, payload in enumerate([b"ab", b"cde"]):
...     framed, _ = codec.encode_frames(payload, np.array([0, 1, len(payload)]))
...     paths.append(os.path.join(directory, f"part-{i}.tfrecord"))
...     with open(paths[-1], "wb") as f:
...         _ = f.write(bytes(framed))
>>> run = read_small_files(paths, [os.path.getsize(p) for p in paths], {})
>>> [bytes(run.buf[o : o + n]) for o, n in zip(run.offsets, run.lengths)]
[b'a', b'b', b'c', b'de']
>>> [(k, b.path, b.first_index, [b.record_offset(i) for i in range(len(b))]) for k, b in run.per_file(1, 4, ["a", "b"])]
[(0, 'a', 1, [17]), (1, 'b', 0, [0, 17])]
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from tfsql._codec import codec
from tfsql.file_guard import FileStamp, expected_stamp
from tfsql.framing import RecordBlock

__all__ = ["SmallFiles", "read_small_files", "SMALL_FILE_BYTES"]

#: Files up to this size are read together (see the module docstring).
SMALL_FILE_BYTES = 1 << 20

_HEADER = 12
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)


@dataclass
class SmallFiles:
    """The records of consecutive files, read into one buffer.

    ``offsets`` and ``lengths`` (uint64) are each record's payload in ``buf``;
    ``starts[k]`` is where file ``k`` of the run begins in ``buf`` and ``firsts[k]`` the
    position of its first record (``firsts[-1]``: the number of records).
    """

    buf: memoryview
    offsets: np.ndarray
    lengths: np.ndarray
    starts: np.ndarray
    firsts: np.ndarray

    def record_files(self, start: int, stop: int) -> np.ndarray:
        """For records ``start`` to ``stop``, the position in the run of each one's file."""
        counts = np.diff(self.firsts)
        return np.repeat(np.arange(len(counts)), counts)[start:stop]

    def block(self, start: int, stop: int, path: str) -> RecordBlock:
        """Records ``start`` to ``stop`` as one block (``path`` names it; its record
        numbers and offsets mean nothing, so an error is never worded from it)."""
        return RecordBlock(self.buf, self.offsets[start:stop], self.lengths[start:stop], 0, 0, path)

    def per_file(self, start: int, stop: int, paths: Sequence[str]) -> list[tuple[int, RecordBlock]]:
        """Records ``start`` to ``stop`` as one block per file, each numbered and placed
        as a read of that file alone numbers and places it: ``(k, block)`` with ``k`` the
        file's position in the run and ``paths[k]`` its name."""
        out = []
        first_file = int(np.searchsorted(self.firsts, start, side="right")) - 1
        for k in range(first_file, len(self.starts)):
            a, b = max(start, int(self.firsts[k])), min(stop, int(self.firsts[k + 1]))
            if a >= b:
                break
            base = -int(self.starts[k])  # record_offset(i) = offset in the file
            block = RecordBlock(self.buf, self.offsets[a:b], self.lengths[a:b], a - int(self.firsts[k]), base, paths[k])
            out.append((k, block))
        return out


def read_small_files(
    paths: Sequence[str],
    sizes: Sequence[int],
    stamps: dict,
    *,
    verify: bool = True,
    max_record_bytes: int = 1 << 62,
    detect: bool = False,
) -> SmallFiles | None:
    """Read the non-empty local files ``paths`` of the listed ``sizes`` into one buffer
    and frame them; None when anything is not as listed or not cleanly framed (see the
    module docstring), and the caller reads them one by one. ``stamps`` is the scan's
    record of each file's identity (:mod:`tfsql.file_guard`): a file met before must be
    the same, a file met now is added. With ``detect``, a file whose first bytes say
    gzip or zlib also gives None."""
    total = sum(sizes)
    data = bytearray(total)
    view = memoryview(data)
    starts = np.empty(len(paths), dtype=np.uint64)
    position = 0
    for k, (path, size) in enumerate(zip(paths, sizes)):
        if not _read_one(path, size, view[position : position + size], stamps):
            return None
        if detect and codec.detect_compression(view[position : position + _HEADER]) is not None:
            return None
        starts[k] = position
        position += size
    offsets_buf, lengths_buf, end, status = codec.scan_frames(view, 0, -1, -1, verify)
    if status != codec.FRAME_OK or end != total:
        return None
    offsets = np.frombuffer(offsets_buf, dtype=np.uint64)
    lengths = np.frombuffer(lengths_buf, dtype=np.uint64)
    if len(lengths) and int(lengths.max()) > max_record_bytes:
        return None
    # Each file must start a record: the frames then tile each file exactly.
    firsts = np.searchsorted(offsets - _HEADER, starts)
    if np.any(firsts >= len(offsets)) or np.any(offsets[np.minimum(firsts, len(offsets) - 1)] - _HEADER != starts):
        return None
    return SmallFiles(view, offsets, lengths, starts, np.append(firsts, len(offsets)))


def _read_one(path: str, size: int, into: memoryview, stamps: dict) -> bool:
    """Read a whole file into ``into`` with the change guard's checks (the listed size,
    the identity of its first open in this scan, no change while read)."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:
        return False
    try:
        before = FileStamp.of(os.fstat(fd))
        expected = expected_stamp(stamps, path, before, size)
        if expected.change(before) is not None or os.preadv(fd, [into], 0) != size:
            return False
        return expected.change(FileStamp.of(os.fstat(fd))) is None
    except OSError:
        return False
    finally:
        os.close(fd)
