"""Ctrl-C for the ``tfsql`` process: stop cleanly with exit status 130, whatever runs.

Python handles SIGINT only when the main thread runs Python code (DuckDB checks for it
while a plain query runs); a query that scans TFRecord files through Python threads can
keep the main thread waiting inside DuckDB, so the ``KeyboardInterrupt`` may never come.
When ``tfsql`` runs as a program (not when `tfsql.cli.main` is called from Python),
`handle_ctrl_c` also has the signal written to a pipe (``signal.set_wakeup_fd``) that a
thread of its own waits on. At Ctrl-C that thread interrupts the running DuckDB queries
(``connection.interrupt()``); if the command has not stopped by itself (``tfsql:
interrupted``, exit status 130, no traceback) a few seconds later, or at a second
Ctrl-C, it prints the same line and ends the process with status 130.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import weakref
from collections.abc import Iterator
from typing import Any

__all__ = ["GRACE_SECONDS", "ctrl_c_seen", "exit_now", "handle_ctrl_c", "track_connection"]

GRACE_SECONDS = 3.0
"""How long the command may take to stop by itself after Ctrl-C."""

_connections: weakref.WeakSet = weakref.WeakSet()
_seen = threading.Event()


def ctrl_c_seen() -> bool:
    """Whether Ctrl-C reached the running `handle_ctrl_c` block: an error the command
    ends with after that is the interruption's doing (a scan thread interrupted inside
    DuckDB surfaces as whatever error DuckDB wraps it in), so it ends as interrupted.

    >>> ctrl_c_seen()
    False
    """
    return _seen.is_set()


def track_connection(connection: Any) -> None:
    """Remember a DuckDB connection to interrupt on Ctrl-C."""
    with contextlib.suppress(TypeError):
        _connections.add(connection)


def exit_now(status: int) -> None:
    """Remove the staged files of unfinished outputs, flush the standard streams and end
    the process at once (no waiting for threads)."""
    from tfsql.staging import remove_staged

    remove_staged()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(status)


@contextlib.contextmanager
def handle_ctrl_c(status: int = 130) -> Iterator[None]:
    """Within the block, Ctrl-C stops the command as described above (POSIX; elsewhere
    Python's own handling applies)."""
    if os.name != "posix" or threading.current_thread() is not threading.main_thread():
        yield
        return
    done = threading.Event()
    _seen.clear()
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)

    def watch() -> None:
        count = 0
        while True:
            try:
                data = os.read(read_end, 64)
            except OSError:
                return
            if done.is_set() or not data:
                return
            if signal.SIGINT not in data:
                continue
            count += 1
            _seen.set()
            if count > 1:
                sys.stderr.write("tfsql: interrupted\n")
                exit_now(status)
            for connection in list(_connections):
                with contextlib.suppress(Exception):
                    connection.interrupt()
            threading.Thread(target=_deadline, args=(done, status), daemon=True).start()

    previous = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    thread = threading.Thread(target=watch, name="tfsql-ctrl-c", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        signal.set_wakeup_fd(previous)
        with contextlib.suppress(OSError):
            os.write(write_end, b"\0")
        thread.join(1)
        for fd in (read_end, write_end):
            with contextlib.suppress(OSError):
                os.close(fd)


def _deadline(done: threading.Event, status: int) -> None:
    if not done.wait(GRACE_SECONDS):
        sys.stderr.write("tfsql: interrupted\n")
        exit_now(status)
