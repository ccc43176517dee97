"""A writing process killed (SIGKILL) at its Nth filesystem step, for the crash tests
(run as a script, not collected).

    python step_killer.py N TARGET MODE FIRST_ID ROWS [--index] [--partitioned]

Writes ROWS rows ``{"id": FIRST_ID + i, "k": i % 3}`` to TARGET with
`tfsql.write_tfrecord` in MODE (a single file when TARGET ends in ``.tfrecord``; with
``--partitioned`` a directory partitioned by ``k``, one file per 25 rows; ``--index``
writes the record index). Each step that changes the filesystem (a rename, a removal,
a directory made or removed, an fsync) is counted; at step N the process kills itself
before taking it. It prints ``D`` and exits 0 when the write finished before step N
(then N is past the last step).
"""

from __future__ import annotations

import os
import shutil
import signal
import sys


def main(argv: list[str]) -> int:
    import pyarrow as pa

    import tfsql

    kill_at, target, mode, first, rows = int(argv[0]), argv[1], argv[2], int(argv[3]), int(argv[4])
    steps = [0]

    def counted(function):
        def step(*args, **kwargs):
            steps[0] += 1
            if steps[0] == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)
            return function(*args, **kwargs)

        return step

    for module, name in [
        (os, "rename"),
        (os, "replace"),
        (os, "unlink"),
        (os, "remove"),
        (os, "rmdir"),
        (os, "mkdir"),
        (os, "fsync"),
        (shutil, "rmtree"),
        (shutil, "move"),
    ]:
        setattr(module, name, counted(getattr(module, name)))
    ids = list(range(first, first + rows))
    data = pa.table({"id": ids, "k": [i % 3 for i in ids]})
    options = {"index": True} if "--index" in argv else {}
    if "--partitioned" in argv:
        options.update(partition_by="k", max_rows_per_file=25)
    tfsql.write_tfrecord(data, target, mode=mode, **options)
    sys.stdout.write("D")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
