"""Writers survive kill -9 at any instant and concurrent writers (issue: crash-safe commit).

A writing subprocess is killed with SIGKILL at random instants (a quarter of the trials
while it commits); afterwards tfsql's reader, ``tfsql.recover`` and the next write must
all see exactly the old or the new content, and the next write must leave no staging,
trash, lock or intent record behind. Two writing processes started together must end
as if they had run one after the other. The default run does a few trials;
``pytest -m slow`` runs hundreds.
"""

from __future__ import annotations

import sys

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL and flock are POSIX")

from crash_harness import concurrency_table, crash_table, run  # noqa: E402


def check(crashes, concurrent):
    for r in crashes:
        assert r["outcome"] in ("old", "new"), (r, crash_table(crashes))
        assert r["reader_agrees"], r
        assert r["leftovers"] == [], r
    for r in concurrent:
        assert r["serial"], r
        assert r["file_not_found"] == 0, r
        assert r["leftovers"] == [], r


def test_kill_9_and_concurrent_writers_few_trials(tmp_path):
    crashes, concurrent = run(8, 4, tmp_path, seed=1)
    assert sum(r["inside_commit"] for r in crashes) == 4
    check(crashes, concurrent)


@pytest.mark.slow
def test_kill_9_and_concurrent_writers_many_trials(tmp_path):
    crashes, concurrent = run(200, 52, tmp_path, seed=2)
    print("\n" + crash_table(crashes) + "\n\n" + concurrency_table(concurrent))
    check(crashes, concurrent)
