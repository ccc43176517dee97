"""Resynchronising through damage costs a fraction of a second per GiB.

With ``on_corrupt="skip"`` a scan that loses framing searches byte by byte for the next
offset where a record's both CRCs check. That search once computed a CRC at every byte
(about 4.3 s per GiB of random bytes or zeros in the core, 4.9 s through the DuckDB
extension and 7 to 12 s through the Python reader), and the extension cannot see an
interrupt while it runs: DuckDB's C API gives a table function no interrupt flag, and
an empty chunk ends the scan. The search now rejects a candidate by its length's
plausibility (at most ``max_record_bytes``, fitting in the file) before any CRC and
passes over a run of one byte word by word, so 1 GiB of damage takes well under a
second in the core and the extension, and an interrupt waits no longer than that.

The scans run in subprocesses under a CPU-time cap (``RLIMIT_CPU``, set once the
imports and the test data are ready, so it counts the scan alone) several times what
they now take and below what they took before: a resource cap, not a wall-clock
timing. The damage is a hole in a sparse file (zeros that cost no disk) or a repeating
pattern of nonzero bytes in memory.
"""

from __future__ import annotations

import struct
import subprocess
import sys

import pytest

from tfsql import _codec
from tfsql._reference import framing as reference
from tfsql.duckdb.extension import extension_available

codec = _codec.codec
GIB = 1 << 30
CPU_SECONDS = 3  # the scan alone, after its setup; before the fix it took 4.3 to 12 s
TIMEOUT = 120

RUNNER = r"""
import math, resource, sys, warnings
front, path = sys.argv[2], sys.argv[3]
import tfsql
if front == "duckdb":
    import duckdb
    con = tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))
    con.execute("SET enable_progress_bar = false")  # a scan over 2 s would print it into stdout
elif front != "python":
    import numpy as np
    from tfsql import _codec
    pattern = np.tile(np.arange(1, 256, dtype=np.uint8), (1 << 30) // 255 + 1)[: 1 << 30]
# The cap counts the scan alone: what the setup above cost (imports, and building a GiB
# in memory, mostly page faults) varies by machine and is not what is measured.
used = resource.getrusage(resource.RUSAGE_SELF)
cap = math.ceil(used.ru_utime + used.ru_stime) + int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_CPU, (cap, cap))
if front == "python":
    warnings.simplefilter("ignore")
    table = tfsql.read_tfrecord(path, record_type="bytes", on_corrupt="skip")
    print(sorted(int.from_bytes(bytes(v)[:4], "little") for v in table.column(0).to_pylist()))
elif front == "duckdb":
    rows = con.sql(
        f"SELECT record FROM tfrecord_scan('{path}', record_type := 'bytes', on_corrupt := 'skip')"
    ).fetchall()
    print(sorted(int.from_bytes(bytes(r[0])[:4], "little") for r in rows))
else:
    print(_codec.codec.find_boundary(pattern, 0, -1, front == "eof", 256 << 10, 2 << 30))
"""


def frames(first: int, n: int) -> bytes:
    """``n`` records of 100 bytes, each starting with its id (from ``first``)."""
    out = []
    for i in range(first, first + n):
        payload = struct.pack("<I", i) + b"x" * 96
        head = struct.pack("<Q", len(payload))
        out.append(head + struct.pack("<I", codec.masked_crc32c(head)))
        out.append(payload + struct.pack("<I", codec.masked_crc32c(payload)))
    return b"".join(out)


def run_capped(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, str(CPU_SECONDS), *args], capture_output=True, text=True, timeout=TIMEOUT
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    return done.stdout.strip()


@pytest.fixture(scope="module")
def gib_of_zeros(tmp_path_factory):
    """10 records, a 1 GiB hole (zeros, sparse), 10 records."""
    path = tmp_path_factory.mktemp("resync") / "hole.tfrecord"
    with open(path, "wb") as fh:
        fh.write(frames(0, 10))
        fh.seek(GIB, 1)
        fh.write(frames(100, 10))
    # The first read of a hole makes the kernel fill a GiB of page cache with zeros (4 s
    # of system time on this machine), which the scans' CPU cap would count: read it once
    # here, outside the cap, so the cap measures the resync.
    with open(path, "rb") as fh:
        while fh.read(8 << 20):
            pass
    return path


@pytest.mark.parametrize(
    "front",
    [
        "python",
        pytest.param(
            "duckdb",
            marks=pytest.mark.skipif(not extension_available(), reason="built without its DuckDB extension"),
        ),
    ],
)
def test_skip_resynchronises_through_a_gib_of_zeros_under_a_cpu_cap(gib_of_zeros, front):
    assert run_capped(front, str(gib_of_zeros)) == str(list(range(10)) + list(range(100, 110)))


INTERRUPTED = r"""
import signal, sys, threading, time, warnings
warnings.simplefilter("ignore")
import tfsql
front, path = sys.argv[1], sys.argv[2]
sql = f"SELECT count(*) FROM tfrecord_scan('{path}', record_type := 'bytes', on_corrupt := 'skip')"
if front == "python":
    scan = lambda: tfsql.read_tfrecord(path, record_type="bytes", on_corrupt="skip").num_rows
elif front == "polars":
    import polars as pl
    scan = lambda: pl.scan_tfrecord(path, record_type="bytes", on_corrupt="skip").collect().height
else:
    import duckdb
    if front == "duckdb":
        con = tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))
    else:
        con = tfsql.connect()
    if front.startswith("registered"):  # the Python reader in DuckDB, stopped by its Interrupts
        from tfsql.interrupts import Interrupts
        interrupts = Interrupts()
        data = tfsql.dataset(path, record_type="bytes", on_corrupt="skip").with_interrupts(interrupts)
        con.register("t", data)
        sql = "SELECT count(*) FROM t"
    scan = lambda: con.sql(sql).fetchall()[0][0]
def once(*_):  # Ctrl-C raises KeyboardInterrupt once (Polars passes it on again)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt
signal.signal(signal.SIGINT, once)
if front == "duckdb":  # con.interrupt() from another thread, 0.5 s in
    threading.Timer(0.5, con.interrupt).start()
elif front == "registered-interrupt":  # the dataset's interrupts and DuckDB's, 0.5 s
    # after the scan began (an interrupt before it is, by design, not the scan's: under
    # load DuckDB may take longer than 0.5 s to plan the query and start the scan)
    scan_began = threading.Event()
    check = interrupts.check
    interrupts.check = lambda: (scan_began.set(), check())[1]
    def stop_the_running_scan():
        if scan_began.wait(30):
            time.sleep(0.5)
            interrupts.interrupt(), con.interrupt()
    threading.Thread(target=stop_the_running_scan, daemon=True).start()
else:  # Ctrl-C, 0.5 s in
    threading.Timer(0.5, lambda: signal.raise_signal(signal.SIGINT)).start()
try:
    print("rows", scan())
except BaseException as error:
    print("interrupted", type(error).__name__, str(error).replace(chr(10), " "))
"""


def interrupted_scan(front: str, path) -> list[str]:
    """What the INTERRUPTED script printed, split; it must end within the timeout."""
    done = subprocess.run(
        [sys.executable, "-c", INTERRUPTED, front, str(path)], capture_output=True, text=True, timeout=60
    )
    out = done.stdout.split()
    assert out[:1] in (["interrupted"], ["rows"]), (done.returncode, done.stdout, done.stderr[-2000:])
    if out[0] == "interrupted":  # KeyboardInterrupt, DuckDB's "Query interrupted" or
        # "Interrupted!", or its error wrapping an Arrow stream producer's KeyboardInterrupt
        assert "interrupt" in " ".join(out[1:]).lower(), done.stdout
    return out


@pytest.fixture(scope="module")
def tib_of_zeros(gib_of_zeros):
    """10 records, a 1 TiB hole, 10 records: no scan reaches its end in a test's time."""
    path = gib_of_zeros.parent / "tib.tfrecord"
    with open(path, "wb") as fh:
        fh.write(frames(0, 10))
        fh.seek(1 << 40, 1)
        fh.write(frames(100, 10))
    return path


@pytest.mark.parametrize("front", ["python", "registered-interrupt"])
def test_an_interrupt_stops_a_python_skip_scan_through_any_damage(tib_of_zeros, front):
    # Ctrl-C in Python, or the Interrupts of a tfsql.dataset registered in DuckDB (with
    # con.interrupt()), 0.5 s into a scan resynchronising through 1 TiB of zeros stops
    # it: DuckDB alone stops a query only between batches, after the whole of the damage.
    assert interrupted_scan(front, tib_of_zeros)[0] == "interrupted"


IN_RESYNC = r"""
import signal, sys, threading
import tfsql
from tfsql import framing
damaged = framing.FrameReader._damaged
def ctrl_c_once_resyncing(self, reader):  # Ctrl-C 0.3 s after this thread began a resync
    threading.Timer(0.3, lambda: signal.raise_signal(signal.SIGINT)).start()
    framing.FrameReader._damaged = damaged
    return damaged(self, reader)
framing.FrameReader._damaged = ctrl_c_once_resyncing
try:
    print("rows", tfsql.read_tfrecord(sys.argv[1], record_type="bytes", on_corrupt="skip").num_rows)
except KeyboardInterrupt as error:
    print("interrupted", type(error).__name__, threading.current_thread() is threading.main_thread())
"""


def test_ctrl_c_stops_a_resync_the_main_thread_is_running(tib_of_zeros):
    # A file whose damage the parallel read meets is read again from there on the main
    # thread, which then resynchronises through 1 TiB of zeros inside the core with the
    # GIL released. Ctrl-C during that search used to wait for it to end (a test run
    # hung when the interrupt came late enough); the core's reads on the main thread
    # now run Python's signal handlers first.
    done = subprocess.run(
        [sys.executable, "-c", IN_RESYNC, str(tib_of_zeros)], capture_output=True, text=True, timeout=30
    )
    assert done.stdout.split() == ["interrupted", "KeyboardInterrupt", "True"], (done.stdout, done.stderr[-2000:])


@pytest.mark.parametrize(
    "front",
    [
        "polars",
        "registered",
        pytest.param(
            "connect", marks=pytest.mark.skipif(not extension_available(), reason="built without its DuckDB extension")
        ),
        pytest.param(
            "duckdb", marks=pytest.mark.skipif(not extension_available(), reason="built without its DuckDB extension")
        ),
    ],
)
def test_an_interrupt_ends_a_skip_scan_through_a_gib_of_damage(gib_of_zeros, front):
    # Ctrl-C (Polars, tfsql.connect(), a registered dataset) or con.interrupt()
    # (plain DuckDB) 0.5 s into the scan: it ends, interrupted or with all its rows, once
    # the resync through the damage returns. Neither the extension (DuckDB's C API gives
    # a table function no interrupt flag) nor a Python scan feeding Polars or DuckDB's
    # Ctrl-C handling (neither runs Python's SIGINT handler while it waits) sees the
    # interrupt sooner; the resync's speed bounds the wait.
    out = interrupted_scan(front, gib_of_zeros)
    assert out[0] == "interrupted" or out == ["rows", "20"], out


@pytest.mark.parametrize("front", ["eof", "window"])
def test_find_boundary_passes_a_gib_of_nonzero_bytes_under_a_cpu_cap(front):
    # At the end of the file no boundary; in a window the last 11 bytes need more.
    expected = (codec.BOUNDARY_NONE, GIB) if front == "eof" else (codec.BOUNDARY_MORE, GIB - 11)
    assert run_capped(front, "-") == str(expected)


@pytest.mark.parametrize("impl", [codec, reference], ids=["native", "reference"])
def test_find_boundary_takes_no_record_longer_than_max_length(impl):
    # A whole, well-framed record of 100 bytes after 3 bytes of damage.
    data = b"\xff" * 3 + frames(0, 3)
    assert impl.find_boundary(data, 1) == (codec.BOUNDARY_FOUND, 3)
    assert impl.find_boundary(data, 1, max_length=100) == (codec.BOUNDARY_FOUND, 3)
    assert impl.find_boundary(data, 1, max_length=99) == (codec.BOUNDARY_NONE, len(data))
    # Not at the end of the file, a candidate over max_length asks for no more bytes.
    head = frames(0, 1)[:12]
    assert impl.find_boundary(b"\x00" + head, 1, at_eof=False) == (codec.BOUNDARY_MORE, 1)
    assert impl.find_boundary(b"\x00" + head, 1, at_eof=False, max_length=99) == (codec.BOUNDARY_MORE, 2)


def test_a_run_of_one_byte_is_searched_like_the_reference():
    # Runs of one byte value (rejected alike), then a record; and runs ending the buffer.
    record = frames(7, 1)
    for fill in (b"\x00", b"\x01", b"\xab"):
        for n in (0, 5, 12, 13, 40, 1000):
            for data in (fill * n + record, record + fill * n, fill * n):
                for at_eof in (True, False):
                    args = (data, 0, -1, at_eof, 1024, 1 << 20)
                    assert codec.find_boundary(*args) == reference.find_boundary(*args), (fill, n, at_eof)
