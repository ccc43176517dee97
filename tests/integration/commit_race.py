"""The two sides of a reader listing a directory while a writer commits into it
(run as a script by ``test_reader_during_commit.py``, not collected).

    python commit_race.py write TARGET MODE FIRST ROWS GO DONE
    python commit_race.py read TARGET FRONT_END GO DONE

The writer stages its files, prints ``P`` and waits for the file GO before it commits;
it creates DONE once its write returned. The reader (``python``: `tfsql.read_tfrecord`;
``duckdb``: `tfsql.connect` on its Python path) lists TARGET; when its listing reaches
the third directory it creates GO and waits (up to 10 s) for DONE, so that the whole
commit happens in the middle of its listing. It prints the ids it read, one line,
sorted and comma-separated.
"""

from __future__ import annotations

import os
import sys
import time


def wait_for(path: str, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.005)


def write(target: str, mode: str, first: int, rows: int, go: str, done: str) -> None:
    import pyarrow as pa

    import tfsql
    from tfsql.writer import job

    real_commit = job.WriteJob._commit

    def paused_commit(self, *args, **kwargs):
        sys.stdout.write("P")
        sys.stdout.flush()
        wait_for(go, 60)
        return real_commit(self, *args, **kwargs)

    job.WriteJob._commit = paused_commit
    ids = list(range(first, first + rows))
    table = pa.table({"id": ids, "k": [i % 3 for i in ids]})
    tfsql.write_tfrecord(table, target, mode=mode, partition_by="k", max_rows_per_file=10)
    open(done, "w").close()


def read(target: str, front_end: str, go: str, done: str) -> None:
    real_scandir = os.scandir
    calls = [0]

    def scandir(path=".", *args):
        if str(path).startswith(target):
            calls[0] += 1
            if calls[0] == 3:
                open(go, "w").close()
                wait_for(done, 10)
        return real_scandir(path, *args)

    os.scandir = scandir
    if front_end == "python":
        import tfsql

        ids = tfsql.read_tfrecord(target, columns=["id"]).column("id").to_pylist()
    else:
        import tfsql
        from tfsql.duckdb import connect

        connection = connect()  # held: DuckDB 1.4 closes a connection nothing holds
        connection.register("t", tfsql.dataset(target))  # the Python listing, scanned by DuckDB
        ids = [r[0] for r in connection.sql("SELECT id FROM t").fetchall()]
    print(",".join(map(str, sorted(ids))))


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6], sys.argv[7])
    else:
        read(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5])
