"""Issue 14: how long ``import tfsql`` takes, in fresh processes, against a baseline checkout.

Each measurement starts a new interpreter that times the import statement alone
(``time.perf_counter`` around it, so interpreter start-up is excluded) and reports
which heavy modules it loaded; the best of ``--repeat`` processes is kept (the machine
may be shared). The baseline is another checkout of tfsql with its C extension built
(``--baseline DIR``, e.g. a worktree of the main branch); this checkout is "current".

    python tests/benchmarks/bench_import.py --baseline /path/to/main-checkout

Rows: ``import tfsql`` alone; ``import polars`` then ``import tfsql`` (the time tfsql
adds to a Polars user's process); ``import tfsql`` then ``import polars`` (same, through
the import hook); and ``import tfsql; tfsql.dataset`` (the first use of the scanner).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _measure import fmt_float, fmt_ratio, format_table  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("polars", "duckdb", "pyspark", "pyarrow", "pyarrow.compute", "pyarrow.dataset", "numpy", "fsspec")

CASES = {
    "import tfsql": ("", "import tfsql"),
    "import polars; import tfsql": ("import polars", "import tfsql"),
    "import tfsql; import polars": ("", "import tfsql; import polars; polars.scan_tfrecord"),
    "import tfsql; tfsql.dataset": ("", "import tfsql; tfsql.dataset"),
}

_WORKER = """
import json, sys, time
{setup}
t = time.perf_counter()
{timed}
elapsed = time.perf_counter() - t
print(json.dumps([elapsed, [m for m in {heavy!r} if m in sys.modules]]))
"""


def _once(checkout: Path, setup: str, timed: str) -> tuple[float, list[str]]:
    code = _WORKER.format(setup=setup, timed=timed, heavy=HEAVY)
    env = {**os.environ, "PYTHONPATH": str(checkout), "PYTHONDONTWRITEBYTECODE": "0"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=checkout, check=True
    )
    elapsed, loaded = json.loads(done.stdout.strip().splitlines()[-1])
    return elapsed, loaded


def best(checkout: Path, setup: str, timed: str, repeat: int) -> tuple[float, list[str]]:
    _once(checkout, setup, timed)  # warm the .pyc cache and the page cache
    runs = [_once(checkout, setup, timed) for _ in range(repeat)]
    return min(r[0] for r in runs), runs[0][1]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="a checkout of tfsql to compare with (built)")
    parser.add_argument("--repeat", type=int, default=10, help="fresh processes per case; the best is kept")
    args = parser.parse_args(argv)

    rows = []
    for name, (setup, timed) in CASES.items():
        before, _ = best(args.baseline, setup, timed, args.repeat)
        after, loaded = best(ROOT, setup, timed, args.repeat)
        rows.append(
            [
                name,
                fmt_float(before * 1000),
                fmt_float(after * 1000),
                fmt_ratio(before / after),
                ", ".join(m for m in loaded if "." not in m) or "-",
            ]
        )
    print(f"best of {args.repeat} fresh processes (ms); baseline {args.baseline}, current {ROOT}")
    print(format_table(["case", "baseline ms", "current ms", "speed-up", "heavy modules loaded (current)"], rows))


if __name__ == "__main__":
    main()
