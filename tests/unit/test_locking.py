"""The target lock serializes writers and dies with its process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

import fsspec
import pytest

from tfsql import _native
from tfsql.locking import is_owner_alive, owner_lock, target_lock

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
    assert os.listdir(tmp_path) == ["_temporary-child"]  # no lock file: the lock is on the directory


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


def test_emptying_the_target_does_not_free_its_lock(tmp_path):
    """DuckDB's OVERWRITE removes every file of the target but keeps the directory: the
    lock is on the directory, so another writer still cannot take it."""
    fs = fsspec.filesystem("file")
    (tmp_path / "old.tfrecord").write_bytes(b"")
    with target_lock(fs, str(tmp_path)):
        for entry in tmp_path.iterdir():
            entry.unlink()
        with pytest.raises(BlockingIOError):
            _native.target_lock(str(tmp_path), True, False)
    fd = _native.target_lock(str(tmp_path), True, False)
    os.close(fd)


def test_nested_targets_and_a_file_system_root_are_locked_on_their_own(tmp_path):
    """'a' and 'a/b' are two targets, two locks; '/' can be locked (no parent needed);
    a missing directory is FileNotFoundError (write_tfrecord makes it first)."""
    (tmp_path / "a" / "b").mkdir(parents=True)
    outer = _native.target_lock(str(tmp_path / "a"), True, False)
    inner = _native.target_lock(str(tmp_path / "a" / "b"), True, False)
    root = _native.target_lock("/", False, False)
    for fd in (outer, inner, root):
        assert isinstance(fd, int)
        os.close(fd)
    with pytest.raises(FileNotFoundError):
        _native.target_lock(str(tmp_path / "missing"), True, False)
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a", "b"]  # nothing made for the locks


def test_a_replaced_directory_is_locked_anew(tmp_path):
    """A holder that removed and remade the target while another waited: the waiter locks
    the directory now at the path, not the removed one (lock, then verify the inode)."""
    fs = fsspec.filesystem("file")
    target = tmp_path / "t"
    acquired = threading.Event()
    with target_lock(fs, str(target)):

        def take():
            with target_lock(fs, str(target)) as lock:
                assert os.path.samestat(os.fstat(lock.fd), os.stat(target))
                acquired.set()

        waiter = threading.Thread(target=take)
        waiter.start()
        target.rmdir()
        target.mkdir(exist_ok=True)  # (the waiter may have made it again already)
    waiter.join(60)
    assert acquired.is_set()


WAIT = """
import sys
from tfsql import _native
print("W", flush=True)
_native.target_lock(sys.argv[1], True, True)
print("took it", flush=True)
"""


def test_a_wait_for_the_lock_can_be_interrupted(tmp_path):
    """Ctrl-C while waiting for a held target lock raises KeyboardInterrupt (the wait runs
    without the GIL; a signal ends it and runs Python's handler)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path)], stdout=subprocess.PIPE, env=env)
    assert holder.stdout.readline() == b"L\n"
    waiter = subprocess.Popen(
        [sys.executable, "-c", WAIT, str(tmp_path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    assert waiter.stdout.readline() == b"W\n"
    waiter.send_signal(signal.SIGINT)
    out, err = waiter.communicate(timeout=60)
    holder.kill()
    holder.wait()
    assert out == b"" and b"KeyboardInterrupt" in err, (out, err)
