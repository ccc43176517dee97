"""scan_core checks short records' data CRCs three at a time, and its answer is still
that of checking each record in turn.

Where the CPU has a CRC-32C instruction, the core frames a buffer reading each header
and checks the data CRCs of records under 1 KiB in groups of three (interleaved: one
record's CRC is a chain of dependent steps); a record that fails ends the frames at its
header, as it does when checked alone, even after later headers were read, and even
when one of those later headers is damaged or cut short (the first damage in file order
is the one reported). Each case here is compared with a reference that checks record by
record, with the CPU's instruction and with the table-driven code
(``TFSQL_NO_HW_CRC=1``, which checks one record at a time).

Example::

    buf = frame(b"x") + bad_data_crc(frame(b"abc")) + frame(b"yz")
    N.scan_frames(buf)[2:] == (17, N.FRAME_BAD_DATA_CRC)
"""

from __future__ import annotations

import json
import os
import random
import struct
import subprocess
import sys

import crc32c as crc32c_pkg
import numpy as np
import pytest

from tfsql import _native as N
from tfrecord_files import frame

OK, TRUNCATED, BAD_LENGTH, BAD_DATA = N.FRAME_OK, N.FRAME_TRUNCATED, N.FRAME_BAD_LENGTH_CRC, N.FRAME_BAD_DATA_CRC


def _masked(data: bytes) -> int:
    c = crc32c_pkg.crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def reference_scan(buf: bytes, start: int = 0, max_records: int = -1, max_bytes: int = -1, verify: bool = True):
    """scan_core's contract, one record at a time: (lengths, end, status)."""
    pos, count, total, lengths = start, 0, 0, []
    status = OK
    while pos < len(buf):
        if max_records >= 0 and count >= max_records:
            break
        if len(buf) - pos < 12:
            status = TRUNCATED
            break
        (length,) = struct.unpack_from("<Q", buf, pos)
        if _masked(buf[pos : pos + 8]) != struct.unpack_from("<I", buf, pos + 8)[0]:
            status = BAD_LENGTH
            break
        if max_bytes >= 0 and count > 0 and (length > max_bytes or total > max_bytes - length):
            break
        room = len(buf) - pos - 12
        if room < 4 or length > room - 4:
            status = TRUNCATED
            break
        data = buf[pos + 12 : pos + 12 + length]
        if verify and _masked(data) != struct.unpack_from("<I", buf, pos + 12 + length)[0]:
            status = BAD_DATA
            break
        lengths.append(length)
        total += length
        count += 1
        pos += 16 + length
    return lengths, pos, status


def native_scan(buf: bytes, **kw):
    offs, lens, end, status = N.scan_frames(buf, **kw)
    return np.frombuffer(lens, np.uint64).tolist(), end, status


def _damage(buf: bytearray, starts: list[int], lengths: list[int], k: int, how: str) -> None:
    at = starts[k]
    if how == "data_crc":
        buf[at + 12 + lengths[k] + 1] ^= 0x10  # the footer
    elif how == "payload":
        buf[at + 12 + lengths[k] // 2] ^= 0x01
    elif how == "length_crc":
        buf[at + 9] ^= 0x04


def _stream(sizes: list[int]) -> tuple[bytearray, list[int]]:
    rng = random.Random(len(sizes) * 7919 + sum(sizes))
    parts, starts, pos = [], [], 0
    for n in sizes:
        starts.append(pos)
        parts.append(frame(bytes(rng.randrange(256) for _ in range(n))))
        pos += 16 + n
    return bytearray(b"".join(parts)), starts


#: record sizes: short ones (checked three at a time), long ones (one by one), both
SIZES = {
    "short": [0, 1, 7, 8, 9, 15, 17, 100, 178, 180],
    "mixed": [30, 2000, 5, 1023, 1024, 1, 3000, 64, 64, 64],
    "equal": [178] * 10,
}


def _cases():
    for name, sizes in SIZES.items():
        for k in range(len(sizes)):
            for how in ("data_crc", "payload", "length_crc"):
                yield name, [(k, how)], None
        for k in range(len(sizes) - 1):
            # a bad data CRC, then later damage (a damaged header, or the stream cut
            # short) that a batched check reads before the bad record is found
            for later in range(k + 1, len(sizes)):
                yield name, [(k, "data_crc"), (later, "length_crc")], None
            yield name, [(k, "payload")], "cut"
        yield name, [], "cut"


CASES = list(_cases())


def _expected_and_args(name, damage, cut):
    sizes = SIZES[name]
    buf, starts = _stream(sizes)
    for k, how in damage:
        _damage(buf, starts, sizes, k, how)
    if cut:
        buf = buf[: len(buf) - 9]  # the last record cut short
    return bytes(buf)


@pytest.mark.parametrize("name,damage,cut", CASES)
def test_batched_crcs_frame_as_one_record_at_a_time(name, damage, cut):
    buf = _expected_and_args(name, damage, cut)
    for kw in ({}, {"max_records": 4}, {"max_records": 5}, {"max_bytes": 200}, {"start": 0, "verify": False}):
        assert native_scan(buf, **kw) == reference_scan(buf, **kw), kw


def test_a_bad_record_in_the_middle_of_a_batch_ends_the_frames_at_its_header():
    buf = bytearray(frame(b"a" * 10) + frame(b"b" * 20) + frame(b"c" * 30) + frame(b"d" * 40))
    buf[26 + 12 + 20] ^= 0xFF  # record 1's footer
    assert native_scan(bytes(buf)) == ([10], 26, BAD_DATA)


def test_a_bad_data_crc_before_a_damaged_header_is_the_damage_reported():
    buf = bytearray(frame(b"a" * 10) + frame(b"b" * 20) + frame(b"c" * 30))
    buf[26 + 12 + 3] ^= 0x01  # record 1's payload
    buf[26 + 36 + 9] ^= 0x01  # record 2's length CRC
    assert native_scan(bytes(buf)) == ([10], 26, BAD_DATA)


def test_the_table_driven_crc_frames_the_same(tmp_path):
    """Without the CPU's instruction (TFSQL_NO_HW_CRC=1) every case gives the same answer."""
    script = (
        "import json, sys\n"
        "sys.path[:0] = json.loads(sys.argv[1])\n"
        "import test_framing_crc_batches as t\n"
        "from tfsql import _native as N\n"
        "assert N.hardware_crc() is False, 'the table-driven path was not taken'\n"
        "for name, damage, cut in t.CASES:\n"
        "    buf = t._expected_and_args(name, damage, cut)\n"
        "    assert t.native_scan(buf) == t.reference_scan(buf), (name, damage, cut)\n"
        "print('ok')\n"
    )
    here = os.path.dirname(os.path.abspath(__file__))
    paths = [here, os.path.join(os.path.dirname(here))]
    env = {**os.environ, "TFSQL_NO_HW_CRC": "1"}
    out = subprocess.run(
        [sys.executable, "-c", script, json.dumps(paths)], env=env, capture_output=True, text=True, check=False
    )
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-3000:]
