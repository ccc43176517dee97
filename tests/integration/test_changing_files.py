"""A file that changes while it is read: a clear error or complete rows, never a hang or
a signal (issue: files that change under a reader).

Each front end (Python, Polars, ``tfsql.connect()`` on its Python path) scans a 6 MB
file in a subprocess with a timeout while the file is truncated, shrunk, grown,
rewritten in place, replaced or deleted at two instants of the scan, with one thread,
with pieces and with byte ranges (``changing_file.py``). Ctrl-C stops a scan promptly.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX truncate and signals")

HERE = Path(__file__).resolve().parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE.parents[1]), os.environ.get("PYTHONPATH", "")])}


@pytest.mark.parametrize("front_end", ["python", "polars", "duckdb"])
def test_a_file_changed_during_a_scan_is_an_error_or_complete_rows(front_end, tmp_path):
    if front_end == "polars":
        pytest.importorskip("polars")
    if front_end == "duckdb":
        pytest.importorskip("duckdb")
    run = subprocess.run(
        [sys.executable, str(HERE / "changing_file.py"), front_end, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        env=ENV,
    )
    assert run.returncode == 0, run.stderr[-3000:]  # a negative code is a signal
    outcomes = dict(line.split(" ", 1) for line in run.stdout.splitlines())
    assert len(outcomes) == 3 * 2 * 7, run.stdout
    bad = {case: what for case, what in outcomes.items() if what not in ("changed", "ok-rows")}
    assert bad == {}
    # Every truncation, growth and in-place rewrite is noticed, whatever the instant.
    for case, what in outcomes.items():
        if case.split("@")[0] in ("truncate0", "shrink_half", "shrink_1", "grow", "rewrite"):
            assert what == "changed", case


SLOW_SCAN = textwrap.dedent(
    """
    import os, signal, sys, time
    import pyarrow as pa
    import tfsql, tfsql.scanning

    path = sys.argv[1]
    tfsql.write_tfrecord(pa.table({"id": range(40_000), "s": ["x" * 200] * 40_000}), path)
    original = tfsql.scanning.open_raw
    state = {"reads": 0}

    class Slow:  # each read takes 0.2 s: the whole scan would take about a minute
        def __init__(self, raw):
            self._raw = raw
        def readinto(self, view):
            time.sleep(0.2)
            state["reads"] += 1
            if state["reads"] == 3:
                os.kill(os.getpid(), signal.SIGINT)
            return self._raw.readinto(view)
        def read(self, n=-1):
            buf = bytearray(n if n >= 0 else 1 << 20)
            return bytes(buf[: self.readinto(memoryview(buf))])
        def __getattr__(self, name):
            return getattr(self._raw, name)

    tfsql.scanning.open_raw = lambda *a, **k: Slow(original(*a, **k))
    import tfsql.framing
    tfsql.framing._FIRST_READ_BYTES = 16 << 10  # many small reads
    tfsql.framing.DEFAULT_CHUNK_BYTES = 16 << 10
    try:
        tfsql.dataset(path, threads=int(sys.argv[2])).to_table()
    except KeyboardInterrupt:
        print("interrupted")
    """
)


@pytest.mark.parametrize("threads", [1, 2])
def test_ctrl_c_stops_a_scan(threads, tmp_path):
    run = subprocess.run(
        [sys.executable, "-c", SLOW_SCAN, str(tmp_path / "big.tfrecord"), str(threads)],
        capture_output=True,
        text=True,
        timeout=30,
        env=ENV,
    )
    assert run.returncode == 0 and run.stdout.strip() == "interrupted", run.stderr[-3000:]
