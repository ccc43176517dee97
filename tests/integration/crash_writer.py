"""A writing process for the crash and concurrency tests (run as a script, not collected).

    python crash_writer.py TARGET MODE FIRST_ID ROWS [PARTITIONS] [--wait FLAGFILE]

Writes ROWS rows ``{"id": FIRST_ID + i, "k": PARTITIONS[i % len], "v": ...}`` to TARGET
partitioned by ``k``, one file per 25 rows, with `tfsql.write_tfrecord` in MODE. It
prints one letter to stdout, flushed, at each stage, so that the parent knows where a
kill landed: ``S`` started writing, ``C`` commit begun (intent record next), ``F``
commit point passed (deleting the old data), ``D`` done; on an error it prints
``E <exception type> <message>`` and exits 3. With ``--wait`` it waits for FLAGFILE to
exist before writing (both writers of a concurrency trial start together).
"""

from __future__ import annotations

import os
import sys
import time

import pyarrow as pa


def table(first: int, rows: int, partitions: list[int]) -> pa.Table:
    ids = list(range(first, first + rows))
    return pa.table(
        {
            "id": ids,
            "k": [partitions[i % len(partitions)] for i in range(rows)],
            "v": [f"value-{i}" * 3 for i in ids],
        }
    )


def say(letter: str) -> None:
    sys.stdout.write(letter)
    sys.stdout.flush()


def main(argv: list[str]) -> int:
    import tfsql
    from tfsql import commit

    target, mode, first, rows = argv[0], argv[1], int(argv[2]), int(argv[3])
    partitions = [int(p) for p in argv[4].split(",")] if len(argv) > 4 and not argv[4].startswith("--") else [0, 1, 2]
    if "--wait" in argv:
        flag = argv[argv.index("--wait") + 1]
        while not os.path.exists(flag):
            time.sleep(0.001)
    real_apply, real_finish = commit.apply_commit, commit._finish

    def apply_commit(*args, **kwargs):
        say("C")
        return real_apply(*args, **kwargs)

    def finish(*args, **kwargs):
        say("F")
        return real_finish(*args, **kwargs)

    commit._finish = finish
    commit.apply_commit = apply_commit  # the writer calls it through the module
    data = table(first, rows, partitions)
    say("S")
    try:
        tfsql.write_tfrecord(
            data.to_batches(max_chunksize=50), target, mode=mode, partition_by="k", max_rows_per_file=25
        )
    except Exception as exc:  # reported to the parent, which asserts on the type
        say(f"E {type(exc).__name__} {exc}")
        return 3
    say("D")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
