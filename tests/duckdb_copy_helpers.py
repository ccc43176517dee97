"""What the native COPY tests share (v1 and V2 extensions): the test table, Arrow from a
relation, and two writer processes racing into one target.

    >>> "FROM range(300)" in TABLE_SQL
    True
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

import tfsql

#: The build tfsql loads is the V2 one (DuckDB 2): it takes COPY from plain columns.
V2_BUILD = "duckdb-v" in tfsql.duckdb_extension_path()
#: COPY from plain columns is the V2 build's; the v1 build of DuckDB 1.5.6 takes one
#: STRUCT column, and DuckDB 1.4 has no COPY functions for extensions
#: (docs/duckdb-extension.md).
needs_v2_copy = pytest.mark.skipif(not V2_BUILD, reason="COPY from plain columns is the V2 build's (DuckDB 2)")
#: Any native COPY: DuckDB 1.4 gives extensions no COPY functions.
needs_copy_functions = pytest.mark.skipif(
    tuple(int(p) for p in duckdb.__version__.split(".")[:3] if p.isdigit()) < (1, 5, 6),
    reason="DuckDB before 1.5.6 gives extensions no COPY functions",
)

TABLE_SQL = (
    "CREATE TABLE t AS SELECT range::BIGINT AS id, (range % 3)::INTEGER AS part, "
    "[range::DOUBLE / 4, -1.5] AS scores, 'row ' || range AS text, "
    "CASE WHEN range % 4 = 0 THEN NULL ELSE range * 10 END AS maybe, "
    "(range % 2 = 0) AS even, CASE WHEN range % 5 = 0 THEN [] ELSE ['a', 'b'] END AS tags "
    "FROM range(300)"
)


def arrow_of(relation) -> pa.Table:
    """A DuckDB relation as one Arrow table (``.arrow()`` gives a reader in newer duckdb)."""
    result = relation.arrow()
    return result if isinstance(result, pa.Table) else result.read_all()


#: A COPY writer process for :func:`race`: ``python script EXTENSION STATEMENT`` loads
#: the extension, prints ``ready``, waits for a line on stdin, runs the statement and
#: prints ``ok`` or ``failed: <DuckDB's error>``.
COPY_WRITER = r"""
import sys, duckdb
con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
con.sql("LOAD '" + sys.argv[1] + "'")
con.sql("SELECT 1").fetchall()
sys.stdout.write("ready\n"); sys.stdout.flush()
sys.stdin.readline()
try:
    con.sql(sys.argv[2])
    print("ok")
except duckdb.Error as error:
    print("failed: " + str(error).replace("\n", " "))
"""


def race(script: Path, argv: Callable[[int], list[str]], writers: tuple[int, ...] = (1, 2)) -> dict[int, str]:
    """Start one process per writer (``python script *argv(w)``), wait until each prints
    ``ready``, release them together, and return what each printed last (``ok`` or
    ``failed: ...``)."""
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), *argv(w)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for w in writers
    ]
    for p in procs:
        line = p.stdout.readline()
        assert line == "ready\n", line + p.stderr.read()
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    return {w: p.communicate(timeout=300)[0].strip() for w, p in zip(writers, procs)}


def check_race(mode: str, results: dict[int, str], counts: dict[int, int], rows: int, old_rows: int) -> None:
    """Two writers' outcome: a failure says why; OVERWRITE leaves one successful writer's
    whole data (never a mix, never nothing), APPEND the old rows (writer 0) plus each
    successful writer's."""
    ok = sorted(w for w, r in results.items() if r == "ok")
    for r in results.values():
        assert r == "ok" or "another writer" in r or "not empty" in r.lower() or "No such file" in r, r
    if mode == "OVERWRITE":
        assert len(ok) >= 1, results
        assert len(counts) == 1 and list(counts.values()) == [rows] and next(iter(counts)) in ok, (results, counts)
    else:
        assert counts == {0: old_rows, **{w: rows for w in ok}}, (results, counts)
