"""Measuring helpers shared by the benchmark scripts: subprocess workers, timing, memory,
and plain-text tables.

Every configuration a benchmark compares runs in a fresh Python process (the script
re-invokes itself with ``--worker <json>``), so its peak RSS is its own and not the
high-water mark of whatever ran before it. Inside a worker the measured function runs
``repeat`` times; the best wall time is kept (the machine is shared) and the peak RSS is
the process high-water mark (reset just before the first run through
``/proc/self/clear_refs``) minus the RSS at that point, so interpreter, imports and setup
are excluded even when setup allocated and freed more than the run.

Examples
--------
>>> print(format_table(["name", "x"], [["a", "1"], ["bb", "22"]]))
name   x
----  --
a      1
bb    22
"""

from __future__ import annotations

import importlib.util
import json
import os
import resource
import subprocess
import sys
import time
from typing import Any, Callable, Mapping, Sequence

__all__ = [
    "WORKER_FLAG",
    "run_worker",
    "measure",
    "worker_main",
    "rss_mb",
    "peak_rss_mb",
    "reset_peak_rss",
    "tensorflow_available",
    "format_table",
    "fmt_int",
    "fmt_rate",
    "fmt_float",
    "fmt_ratio",
]

WORKER_FLAG = "--worker"
_RESULT_PREFIX = "BENCH-RESULT "


def rss_mb() -> float:
    """The current resident set size of this process, in MiB (Linux ``/proc``)."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_rss_mb() -> float:
    """The RSS high-water mark of this process so far, in MiB."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def reset_peak_rss() -> bool:
    """Reset the RSS high-water mark to the current RSS (Linux ``/proc/self/clear_refs``),
    so setup that allocated and freed memory does not count; False when not allowed."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def tensorflow_available() -> bool:
    """Whether ``import tensorflow`` would find a package in this interpreter."""
    return importlib.util.find_spec("tensorflow") is not None


def measure(fn: Callable[[], Mapping[str, Any]], *, repeat: int) -> dict[str, Any]:
    """Run ``fn`` ``repeat`` times; return its last result plus ``seconds`` (best run)
    and ``peak_mb`` (RSS high-water over all runs minus the RSS before the first)."""
    reset_peak_rss()
    baseline = rss_mb()
    best = float("inf")
    result: Mapping[str, Any] = {}
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return {**result, "seconds": best, "peak_mb": max(0.0, peak_rss_mb() - baseline), "runs": repeat}


def run_worker(
    script: str, config: Mapping[str, Any], *, env: Mapping[str, str] | None = None, timeout: float | None = None
) -> dict[str, Any]:
    """Run ``script --worker <config as JSON>`` in a fresh interpreter and return the
    dict it reported. ``env`` entries are added to this process's environment; a worker
    still running after ``timeout`` seconds is killed (``RuntimeError``)."""
    full_env = {**os.environ, **(env or {})}
    try:
        proc = subprocess.run(
            [sys.executable, script, WORKER_FLAG, json.dumps(dict(config))],
            capture_output=True,
            text=True,
            env=full_env,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"timed out after {timeout:.0f} s: benchmark worker {config}") from None
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(_RESULT_PREFIX):
            return json.loads(line[len(_RESULT_PREFIX) :])
    raise RuntimeError(f"benchmark worker {config} failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")


def worker_main(argv: Sequence[str], handlers: Mapping[str, Callable[[dict], dict]]) -> bool:
    """If ``argv`` is a worker invocation, run the handler named by the config's
    ``"kind"``, print its result for `run_worker`, and return True."""
    if len(argv) != 3 or argv[1] != WORKER_FLAG:
        return False
    config = json.loads(argv[2])
    result = handlers[config["kind"]](config)
    print(_RESULT_PREFIX + json.dumps(result), flush=True)
    return True


def format_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Left-align the first column, right-align the others."""
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        out = [str(cells[0]).ljust(widths[0])]
        out += [str(c).rjust(w) for c, w in zip(cells[1:], widths[1:])]
        return "  ".join(out).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), rule, *(line(r) for r in rows)])


def fmt_int(n: float | None) -> str:
    """``1234567`` -> ``'1,234,567'``; None -> ``'n/a'``."""
    return "n/a" if n is None else f"{int(n):,}"


def fmt_rate(x: float | None) -> str:
    """A rate with a k/M suffix: ``1_234_567`` -> ``'1.23M'``."""
    if x is None:
        return "n/a"
    if x >= 1e6:
        return f"{x / 1e6:.2f}M"
    if x >= 1e3:
        return f"{x / 1e3:.1f}k"
    return f"{x:.0f}"


def fmt_float(x: float | None, digits: int = 1) -> str:
    """A float with ``digits`` decimals (thousands separated); None -> ``'n/a'``."""
    return "n/a" if x is None else f"{x:,.{digits}f}"


def fmt_ratio(x: float | None) -> str:
    """A ratio such as ``'37.2x'``; None -> ``'n/a'``."""
    if x is None:
        return "n/a"
    return f"{x:,.0f}x" if x >= 100 else f"{x:.2f}x" if x < 10 else f"{x:.1f}x"
