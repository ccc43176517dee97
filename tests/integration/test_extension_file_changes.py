"""A file that changes while the DuckDB extension reads it: an error or the right rows,
never a signal or a hang.

The extension once mapped files with ``mmap``: truncating a file during
``tfrecord_scan`` killed the whole process with SIGBUS. It now reads with ``pread``
into a bounded window and checks, at each open and after each read, that the file is
the version the bind listed (``tfsql/duckdb_ext/reading.c``), like the Python reader's
``tfsql.file_guard``.

Each case runs in a subprocess with a timeout, in plain DuckDB (Python, extension
loaded) and in the ``duckdb`` command: the file is truncated, shrunk mid-record,
extended, replaced by another file or deleted at several instants of a scan. The run
must end on its own (no hang), by itself (no signal), with either the full result of
the file as it was (the change came after the last read) or an error naming the file
(``... changed while it was read ...``, or a truncated record when the change came
before the bind).

``TFSQL_CHANGE_ROWS`` makes the file larger for a manual run (the default, 40,000
records of about 1 KiB, keeps the test quick on two cores).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest

import tfsql
from tfsql.duckdb.extension import ExtensionNotAvailable, extension_available

pytestmark = pytest.mark.skipif(not extension_available(), reason="this tfsql was built without its DuckDB extension")

ROWS = int(os.environ.get("TFSQL_CHANGE_ROWS", "40000"))
VALUE_BYTES = 1000
QUERY = "SELECT count(*), sum(length(s)) FROM tfrecord_scan('{path}', schema := {{'s': 'VARCHAR'}})"
ACTIONS = ("truncate", "shrink", "grow", "replace", "delete")
DELAYS = (0.0, 0.02, 0.05, 0.1, 0.2)
TIMEOUT = 60

PYTHON_RUNNER = r"""
import sys, threading, time, duckdb, tfsql
path, action, delay, other = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
sys.path.insert(0, sys.argv[5])
from test_extension_file_changes import mutate
con = tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))
con.execute("SET threads = 2")
def later():
    time.sleep(delay)
    mutate(path, action, other)
thread = threading.Thread(target=later)
thread.start()
try:
    print("ROWS", con.sql(sys.argv[6]).fetchall())
except duckdb.Error as exc:
    print("ERROR", exc)
thread.join()
"""


def mutate(path: str, action: str, other: str) -> None:
    """Change ``path`` as ``action`` says (``other``: a different valid file)."""
    size = os.path.getsize(path)
    if action == "truncate":
        os.truncate(path, 5)  # an incomplete header: never a clean (empty) file
    elif action == "shrink":
        os.truncate(path, size // 2 + 7)  # inside a record: never a clean prefix
    elif action == "grow":
        with open(path, "ab") as f:
            f.write(b"\x01" * 5)  # an incomplete header: never a clean longer file
    elif action == "replace":
        os.replace(other, path)
    elif action == "delete":
        os.unlink(path)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """A file of ROWS records and a smaller one to swap in, and the expected result."""
    root = tmp_path_factory.mktemp("changes")
    table = pa.table({"s": ["x" * VALUE_BYTES] * ROWS})
    tfsql.write_tfrecord(table, str(root / "big.tfrecord"))
    tfsql.write_tfrecord(table.slice(0, ROWS // 3), str(root / "other.tfrecord"))
    return root, [(ROWS, ROWS * VALUE_BYTES), (ROWS // 3, ROWS // 3 * VALUE_BYTES)]


def fresh_copies(root: Path, work: Path) -> tuple[str, str]:
    work.mkdir(parents=True, exist_ok=True)
    path, other = work / "v.tfrecord", work / "w.tfrecord"
    for name in (path, other):
        if name.exists():
            name.unlink()
    shutil.copyfile(root / "big.tfrecord", path)
    shutil.copyfile(root / "other.tfrecord", other)
    return str(path), str(other)


def judge(returncode: int, output: str, path: str, expected: list[tuple[int, int]]) -> str:
    """'rows' (the full result of the file, or of the file swapped in before the bind) or
    'error' (an error naming the file); anything else fails."""
    assert 0 <= returncode < 128, f"the process ended with {returncode} (a signal): {output}"
    if output.startswith("ROWS") or output.startswith("count_star()"):
        numbers = [
            int(x)
            for x in output.replace("ROWS", "").replace(",", " ").strip(" [()]\n").split()
            if x.strip("()[]").isdigit()
        ]
        assert tuple(numbers) in expected, output
        return "rows"
    assert path in output or os.path.basename(path) in output, output
    return "error"


def run_python(path: str, other: str, action: str, delay: float) -> subprocess.CompletedProcess:
    here = str(Path(__file__).resolve().parent)
    args = [sys.executable, "-c", PYTHON_RUNNER, path, action, str(delay), other, here, QUERY.format(path=path)]
    return subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT)


def duckdb_cli() -> str | None:
    candidate = Path(sys.executable).parent / "duckdb"
    return str(candidate) if candidate.is_file() else shutil.which("duckdb")


def cli_extension_path() -> str:
    """The build the duckdb command loads: its DuckDB may not be the Python package's."""
    version = subprocess.run([duckdb_cli(), "--version"], capture_output=True, text=True).stdout.split()
    try:
        return tfsql.duckdb_extension_path(version[0].lstrip("v") if version else None)
    except ExtensionNotAvailable:  # TFSQL_DUCKDB_API=v2 and a command with no V2 build
        pytest.skip("no build of the extension for the duckdb command's version")


def run_cli(path: str, other: str, action: str, delay: float) -> tuple[int, str]:
    sql = f"SET threads = 2; LOAD '{cli_extension_path()}'; {QUERY.format(path=path)};"
    proc = subprocess.Popen(
        [duckdb_cli(), "-unsigned", "-csv", "-c", sql], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    time.sleep(delay)
    mutate(path, action, other)
    out, _ = proc.communicate(timeout=TIMEOUT)
    return proc.returncode, out


@pytest.mark.parametrize("action", ACTIONS)
def test_plain_duckdb_survives_a_file_changing_mid_scan(pristine, tmp_path, action):
    root, expected = pristine
    outcomes = {"rows": 0, "error": 0}
    for delay in DELAYS:
        path, other = fresh_copies(root, tmp_path / f"d{delay}")
        proc = run_python(path, other, action, delay)
        outcomes[judge(proc.returncode, proc.stdout + proc.stderr, path, expected)] += 1
    assert sum(outcomes.values()) == len(DELAYS)
    print(f"plain duckdb, {action}: {outcomes}")


@pytest.mark.skipif(duckdb_cli() is None, reason="the duckdb command (pip install duckdb-cli) is not installed")
@pytest.mark.parametrize("action", ACTIONS)
def test_duckdb_command_survives_a_file_changing_mid_scan(pristine, tmp_path, action):
    root, expected = pristine
    outcomes = {"rows": 0, "error": 0}
    for delay in DELAYS:
        path, other = fresh_copies(root, tmp_path / f"d{delay}")
        code, out = run_cli(path, other, action, delay)
        outcomes[judge(code, out, path, expected)] += 1
    assert sum(outcomes.values()) == len(DELAYS)
    print(f"duckdb command, {action}: {outcomes}")
