"""Temporary paths of outputs being written, removed if the process has to end at once.

Writers put an output under a temporary name beside its target and rename it when done
(`tfsql.writer.single_file`, the ``tfsql`` command's file outputs); their ``finally``
blocks remove the temporary path after an error or ``KeyboardInterrupt``. A process
that must end without unwinding (the ``tfsql`` command after a second Ctrl-C, see
`tfsql.cli.interrupt.exit_now`) calls `remove_staged` first, so no partial output is
left behind under any name.

Examples
--------
>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), ".out.tfsql-1")
>>> with removed_at_exit(path):
...     _ = open(path, "w").write("partial")
...     remove_staged()
>>> os.path.exists(path)
False
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
from collections.abc import Iterator

__all__ = ["removed_at_exit", "remove_staged", "removed_unless_finished"]

_lock = threading.Lock()
_staged: set[str] = set()


@contextlib.contextmanager
def removed_at_exit(path: str) -> Iterator[None]:
    """Within the block, `remove_staged` removes ``path`` (a file or a directory)."""
    with _lock:
        _staged.add(path)
    try:
        yield
    finally:
        with _lock:
            _staged.discard(path)


@contextlib.contextmanager
def removed_unless_finished(path: str) -> Iterator[None]:
    """For an output written straight to its final name (``path``, which does not exist
    yet) by code that does not stage it: removed when the block raises (``KeyboardInterrupt``
    included) or the process ends at once within it.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "out.parquet")
    >>> try:
    ...     with removed_unless_finished(path):
    ...         _ = open(path, "w").write("partial")
    ...         raise KeyboardInterrupt
    ... except KeyboardInterrupt:
    ...     os.path.exists(path)
    False
    """
    with removed_at_exit(path):
        try:
            yield
        except BaseException:
            _remove(path)
            raise


def remove_staged() -> None:
    """Remove every path registered by an unfinished `removed_at_exit` block."""
    with _lock:
        paths = list(_staged)
    for path in paths:
        _remove(path)


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            os.unlink(path)
