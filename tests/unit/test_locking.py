"""The target lock serializes writers and dies with its process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

import fsspec
import pytest

from tfsql.locking import LOCK_NAME, is_owner_alive, owner_lock, target_lock

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock is POSIX")

HOLD = """
import sys, time, fsspec
from tfsql.locking import target_lock, owner_lock
fs = fsspec.filesystem("file")
with target_lock(fs, sys.argv[1]):
    owner_lock(fs, sys.argv[1] + "/_temporary-child")
    print("L", flush=True)
    time.sleep(600)
"""


def test_a_killed_holder_frees_the_lock_and_its_staging_reads_as_dead(tmp_path):
    fs = fsspec.filesystem("file")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)], stdout=subprocess.PIPE, env=env)
    assert child.stdout.readline() == b"L\n"
    assert is_owner_alive(fs, str(tmp_path / "_temporary-child"))
    acquired = threading.Event()

    def take():
        with target_lock(fs, str(tmp_path)):
            acquired.set()

    waiter = threading.Thread(target=take)
    waiter.start()
    assert not acquired.wait(0.3)  # held by the live child
    child.send_signal(signal.SIGKILL)
    child.wait()
    waiter.join(60)
    assert acquired.is_set()
    assert not is_owner_alive(fs, str(tmp_path / "_temporary-child"))
    assert LOCK_NAME not in os.listdir(tmp_path)  # the last holder removed the file


def test_threads_of_one_process_exclude_each_other(tmp_path):
    fs = fsspec.filesystem("file")
    inside, overlaps = [0], []

    def work():
        for _ in range(20):
            with target_lock(fs, str(tmp_path)):
                inside[0] += 1
                overlaps.append(inside[0])
                inside[0] -= 1

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert overlaps == [1] * 80
    lock = owner_lock(fs, str(tmp_path / "_temporary-x"))
    assert is_owner_alive(fs, str(tmp_path / "_temporary-x"))  # seen from another descriptor
    lock.release()
    assert not is_owner_alive(fs, str(tmp_path / "_temporary-x"))
