"""Change a file while a front end scans it, at fixed instants, and print each outcome.

Run by ``test_changing_files.py`` in a subprocess with a timeout (a hang or a signal
fails the test there): ``python changing_file.py FRONT_END DIR`` prints one line per case,
``<case> ok-rows`` (the complete rows of one version of the file), ``<case> changed``
(a clear :class:`tfsql.FileChangedError` naming the file) or ``<case> BAD <what>``.

The instant is deterministic: ``tfsql.scanning.open_raw`` is wrapped so that the change
happens inside the read that brings the bytes read so far past a fraction of the file
(a read on any thread), then the scan goes on.
"""

from __future__ import annotations

import os
import shutil
import sys
import threading

import pyarrow as pa

import tfsql
import tfsql.scanning

ROWS = 24_000
PAD = "x" * 200

# (threads, split_bytes): one thread; pieces (a file of 4 MiB and more, several threads);
# byte ranges.
SETTINGS = [(1, None), (2, None), (2, 1 << 20)]
INSTANTS = [0.0, 0.5]  # a fraction of the file read before the change
CHANGES = ["truncate0", "shrink_half", "shrink_1", "grow", "replace", "rewrite", "delete"]


def table(first: int, n: int) -> pa.Table:
    return pa.table({"id": pa.array(range(first, first + n), pa.int64()), "s": [PAD] * n})


def make_template(directory: str) -> tuple[str, str]:
    """The file's content before (ids 0..ROWS-1) and after a rewrite (ids from 10**6)."""
    old = os.path.join(directory, "old.tfrecord")
    new = os.path.join(directory, "new.tfrecord")
    tfsql.write_tfrecord(table(0, ROWS), old)
    tfsql.write_tfrecord(table(10**6, ROWS), new)
    return old, new


def mutations(path: str, new: str) -> dict:
    size = os.path.getsize(path)

    def replace() -> None:
        shutil.copyfile(new, path + ".tmp")
        os.replace(path + ".tmp", path)

    def rewrite_in_place() -> None:  # same size, new content, same inode
        with open(new, "rb") as src, open(path, "r+b") as dst:
            dst.write(src.read(size))

    def grow() -> None:
        with open(new, "rb") as src, open(path, "ab") as dst:
            dst.write(src.read(1 << 20))

    return {
        "truncate0": lambda: os.truncate(path, 0),
        "shrink_half": lambda: os.truncate(path, size // 2),
        "shrink_1": lambda: os.truncate(path, size - 1),
        "grow": grow,
        "replace": replace,
        "rewrite": rewrite_in_place,
        "delete": lambda: os.unlink(path),
    }


class Trigger:
    """Runs ``change`` once the reads of the scan pass ``after`` bytes."""

    def __init__(self, change, after: int) -> None:
        self.change = change
        self.after = after
        self.read = 0
        self.fired = False
        self.lock = threading.Lock()

    def count(self, n: int) -> None:
        with self.lock:
            self.read += n
            if not self.fired and self.read > self.after:
                self.fired = True
                self.change()


class _Counted:
    def __init__(self, raw, trigger: Trigger) -> None:
        self._raw = raw
        self._trigger = trigger

    def read(self, n: int = -1) -> bytes:
        data = self._raw.read(n)
        self._trigger.count(len(data))
        return data

    def readinto(self, view) -> int:
        got = self._raw.readinto(view) or 0
        self._trigger.count(got)
        return got

    def __getattr__(self, name: str):
        return getattr(self._raw, name)


def scan(front_end: str, path: str, threads: int, split: int | None) -> list[int]:
    """The ids the front end reads from ``path``."""
    if front_end == "python":
        return tfsql.dataset(path, threads=threads, split_bytes=split).to_table(columns=["id"]).column("id").to_pylist()
    if front_end == "polars":
        from tfsql.polars import scan_tfrecord

        frame = scan_tfrecord(path, threads=threads, split_bytes=split).select("id").collect()
        return frame["id"].to_list()
    if front_end == "duckdb":
        from tfsql.duckdb import connect

        con = connect()
        con.register("t", tfsql.dataset(path, threads=threads, split_bytes=split))  # the Python reader in DuckDB
        rows = con.sql("SELECT id FROM t").fetchall()
        return [r[0] for r in rows]
    raise ValueError(front_end)


def main(front_end: str, directory: str) -> None:
    old, new = make_template(directory)
    expected = {tuple(range(ROWS)), tuple(range(10**6, 10**6 + ROWS))}
    original_open_raw = tfsql.scanning.open_raw
    path = os.path.join(directory, "part-0.tfrecord")
    for threads, split in SETTINGS:
        for instant in INSTANTS:
            for name in CHANGES:
                case = f"{name}@{instant}/threads={threads}/split={split}"
                shutil.copyfile(old, path)
                trigger = Trigger(mutations(path, new)[name], int(instant * os.path.getsize(path)))
                tfsql.scanning.open_raw = lambda *a, **k: _Counted(original_open_raw(*a, **k), trigger)
                try:
                    ids = scan(front_end, path, threads, split)
                except Exception as exc:  # tfsql.FileChangedError, or a DuckDB error quoting it
                    ok = "part-0.tfrecord changed while it was read" in str(exc)
                    print(case, "changed" if ok else f"BAD {type(exc).__name__}: {str(exc)[:300]}")
                else:
                    print(case, "ok-rows" if tuple(ids) in expected else f"BAD {len(ids)} rows")
                finally:
                    tfsql.scanning.open_raw = original_open_raw
                sys.stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
