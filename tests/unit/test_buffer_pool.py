"""The core's pool of large freed output buffers (``tfsql/core/buffer_pool.c``) and the
sizes a Decoder remembers from its batches (``decode_note_sizes``).

A batch's large buffers go back to the pool when its consumer releases it, and a later
batch of the same decoder starts from one of them, at about the size the earlier batch
needed. These tests decode batches that need more than that (the buffer grows), fewer
(it is given back shorter) and the same, while earlier batches are held or released,
on one thread and on two, and compare every value with the pure-Python reference
decoder: reuse never changes a value, a null, an empty list or a batch still held.
"""

from __future__ import annotations

import gc
import struct
import sys
import threading

import numpy as np
import pyarrow as pa
import pytest

import tfsql
from tfsql import _native as native
from tfsql import _reference as ref
from tfsql._proto import Example
from tfsql.decoding import _column_array
from tfsql.schema import ColumnSpec, canonical_type

COLUMNS = [
    (b"emb", native.FEATURES, native.FLOAT, native.LIST),
    (b"ids", native.FEATURES, native.INT64, native.LIST),
    (b"name", native.FEATURES, native.BYTES, native.SCALAR),
    (b"label", native.FEATURES, native.INT64, native.SCALAR),
]
POOL_ON = sys.platform != "win32"  # on Windows the pool keeps nothing


def _record(r: int) -> bytes:
    """Mostly 64 floats, with every few records another length, empty, no kind or
    missing; ids of varying length and size; a name of 40-80 bytes."""
    ex = Example()
    f = ex.features.feature
    state = r % 13
    if state == 3:
        f["emb"].float_list.SetInParent()  # an empty list
    elif state == 5:
        f["emb"].SetInParent()  # no kind: null
    elif state != 7:  # 7: missing, null
        n = 64 if state else 65 + r % 5  # mixed lengths across records
        values = [struct.unpack("<f", struct.pack("<f", (r * 64 + i) / 7.0))[0] for i in range(n)]
        if r % 17 == 0:
            values[0] = -0.0
        f["emb"].float_list.value.extend(values)
    f["ids"].int64_list.value.extend([(r * 2654435761 + i) % (1 << 40) - (1 << 39) for i in range(r % 23)])
    if r % 11 != 4:
        f["name"].bytes_list.value.append(bytes([65 + r % 26]) * (40 + r % 41))
    f["label"].int64_list.value.append(r)
    return ex.SerializeToString()


RECORDS = [_record(r) for r in range(7000)]


def _spans(payloads: list[bytes]) -> tuple[bytes, np.ndarray, np.ndarray]:
    lengths = np.array([len(p) for p in payloads], np.uint64)
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.uint64)
    return b"".join(payloads), offsets, lengths


SCHEMA = pa.schema([(name.decode(), canonical_type(kind, shape)) for name, _, kind, shape in COLUMNS])


def _expected(payloads: list[bytes]) -> list[str]:
    """The reference decoder's columns, floats bit for bit (repr: -0.0 is not 0.0)."""
    buf, offsets, lengths = _spans(payloads)
    parts = ref.Decoder(native.EXAMPLE, COLUMNS).decode(buf, offsets, lengths)
    return [
        repr(_column_array(ColumnSpec(n.decode(), loc, k, s, canonical_type(k, s)), len(payloads), p).to_pylist())
        for (n, loc, k, s), p in zip(COLUMNS, parts)
    ]


def _decode(decoder, payloads: list[bytes], *, rows: int, payload: int) -> pa.RecordBatch:
    buf, offsets, lengths = _spans(payloads)
    builder = decoder.builder(rows, payload)
    half = len(payloads) // 2  # two feeds, as a reader's reads
    builder.feed(buf, offsets[:half], lengths[:half])
    builder.feed(buf, offsets[half:], lengths[half:])
    columns = builder.finish_arrow()  # held while pyarrow takes it over
    batch = pa.RecordBatch._import_from_c(columns.address, SCHEMA)
    batch.validate(full=True)
    return batch


def _columns(batch: pa.RecordBatch) -> list[str]:
    return [repr(batch.column(c).to_pylist()) for c in range(batch.num_columns)]


# Batches of one decoder: the same size (reuse), larger (grows past the remembered
# size), much smaller (given back shorter), then the same again.
CUTS = [(0, 3000), (3000, 6000), (0, 7000), (6500, 6800), (100, 3100), (3500, 6500)]
EXPECTED = {cut: _expected(RECORDS[cut[0] : cut[1]]) for cut in set(CUTS)}


@pytest.mark.parametrize("reserve", ["exact", "batch limits"])
def test_batches_reusing_released_buffers_decode_as_the_reference(reserve):
    native.buffer_pool_clear()
    decoder = native.Decoder(native.EXAMPLE, COLUMNS)
    reuses = native.buffer_pool()[2]
    for a, b in CUTS:
        payloads = RECORDS[a:b]
        # as Decoder.decode reserves (this batch's rows and bytes), or as a scan does
        # (its batch limits, far above what the batch holds)
        rows, payload = (len(payloads), sum(map(len, payloads))) if reserve == "exact" else (65536, 16 << 20)
        batch = _decode(decoder, payloads, rows=rows, payload=payload)
        assert _columns(batch) == EXPECTED[(a, b)], (a, b)
        del batch  # released: its large buffers go back to the pool
    if POOL_ON:
        assert native.buffer_pool()[2] > reuses  # later batches started from pooled buffers
    native.buffer_pool_clear()
    assert native.buffer_pool()[:2] == (0, 0)


def test_a_held_batch_is_never_reused_while_later_ones_are():
    native.buffer_pool_clear()
    decoder = native.Decoder(native.EXAMPLE, COLUMNS)
    held = _decode(decoder, RECORDS[0:3000], rows=3000, payload=1 << 20)
    for a, b in CUTS:
        _decode(decoder, RECORDS[a:b], rows=b - a, payload=1 << 20)  # released at once
    # its buffers were never in the pool: still the values it was decoded with
    assert _columns(held) == EXPECTED[(0, 3000)]
    emb = held.column("emb")
    assert emb.null_count == sum(1 for r in range(3000) if r % 13 in (5, 7))
    assert emb.to_pylist()[3] == [] and emb.to_pylist()[5] is None and emb.to_pylist()[7] is None


def test_two_threads_sharing_a_decoder_and_the_pool():
    native.buffer_pool_clear()
    decoder = native.Decoder(native.EXAMPLE, COLUMNS)
    failures: list = []

    def work(cuts: list[tuple[int, int]]) -> None:
        try:
            for _ in range(3):
                for a, b in cuts:
                    batch = _decode(decoder, RECORDS[a:b], rows=65536, payload=16 << 20)
                    if _columns(batch) != EXPECTED[(a, b)]:
                        failures.append((a, b))
        except Exception as exc:  # reported by the main thread
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(CUTS[i::2],)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs fork()")
def test_a_fork_while_another_thread_holds_the_pool_leaves_the_child_a_usable_pool(tmp_path):
    """PyTorch's DataLoader forks workers from a process whose threads may be decoding:
    a fork while a thread holds the pool's lock must not leave the child's copy locked
    (its first decode would hang). The child here takes the lock once; it hung before
    the pool's fork handlers."""
    import subprocess

    script = tmp_path / "fork_pool.py"
    script.write_text(
        "import os, threading, time, warnings\n"
        "warnings.simplefilter('ignore')  # fork() with threads running\n"
        "from tfsql import _native\n"
        "holder = threading.Thread(target=_native._buffer_pool_hold, args=(1500,))\n"
        "holder.start()\n"
        "time.sleep(0.3)\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    _native.buffer_pool()\n"
        "    os._exit(7)\n"
        "deadline = time.monotonic() + 20\n"
        "while time.monotonic() < deadline:\n"
        "    done, status = os.waitpid(pid, os.WNOHANG)\n"
        "    if done:\n"
        "        print('child exit', os.waitstatus_to_exitcode(status))\n"
        "        break\n"
        "    time.sleep(0.05)\n"
        "else:\n"
        "    os.kill(pid, 9)\n"
        "    print('child hung')\n"
        "holder.join()\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert (done.stdout.strip(), done.returncode) == ("child exit 7", 0), done.stderr


def _give_batches(n: int, rows: int = 7000) -> None:
    """Decode ``n`` batches of the same decoder, all held, then release them together:
    their large buffers (each over 256 KiB) are offered to the pool at once."""
    decoder = native.Decoder(native.EXAMPLE, COLUMNS)
    held = [_decode(decoder, RECORDS[:rows], rows=65536, payload=16 << 20) for _ in range(n)]
    del held


@pytest.mark.skipif(not POOL_ON, reason="the pool keeps nothing on Windows")
def test_a_scan_with_threads_widens_the_pool_while_it_runs_and_narrows_it_after():
    """A scan of several threads holds several batches at once; the pool keeps what
    they release (up to the scan's widening, tfsql_pool_widen) so that the next
    batches reuse their pages, and goes back to 64 MiB, freeing the oldest buffers,
    when the scan ends."""
    base = 64 << 20
    gc.collect()  # scans abandoned in a reference cycle end (and narrow) here
    native.buffer_pool_clear()
    assert native.buffer_pool()[3] == base
    native.buffer_pool_widen(100 << 20)
    native.buffer_pool_widen(20 << 20)  # two scans at once: the widenings add up
    assert native.buffer_pool()[3] == base + (120 << 20)
    _give_batches(40)  # 40 x 2.5 MB (floats, ids, names): over 64 MiB
    count, held, _, limit = native.buffer_pool()
    assert base < held <= limit
    native.buffer_pool_narrow(100 << 20)
    count, held, _, limit = native.buffer_pool()
    assert limit == base + (20 << 20) and held <= limit
    native.buffer_pool_narrow(20 << 20)
    native.buffer_pool_narrow(1 << 20)  # more than was widened: never below 64 MiB
    count, held, _, limit = native.buffer_pool()
    assert limit == base and held <= base
    native.buffer_pool_clear()


@pytest.mark.skipif(not POOL_ON, reason="the pool keeps nothing on Windows")
def test_a_scan_on_two_threads_widens_the_pool_by_its_batches_and_narrows_it_at_its_end(tmp_path):
    path = tmp_path / "f.tfrecord"
    tfsql.write_tfrecord(pa.table({"v": [b"x" * 1000] * 20}), str(path))
    gc.collect()  # scans abandoned in a reference cycle end (and narrow) here
    native.buffer_pool_clear()
    seen = []
    for threads in (1, 2):
        batches = tfsql.dataset(str(path), threads=threads, batch_bytes=8 << 20).scanner().to_batches()
        next(batches)
        seen.append(native.buffer_pool()[3])
        batches.close()
        seen.append(native.buffer_pool()[3])
    # threads=2: 2 x 2 batches of 8 MiB with the quarter tbuf_take_sized leaves spare
    assert seen == [64 << 20, 64 << 20, (64 << 20) + 40 * (1 << 20), 64 << 20]
