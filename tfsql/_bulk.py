"""Building many small objects at once (a record with a million features has a million
columns, each with its field, spec and tuple): Python's cyclic garbage collector runs
every few hundred allocations and each full pass walks every live object, so building n
objects costs far more than n. :func:`gc_paused` holds the collector off while such a
batch is built (these builders make no reference cycles; reference counting frees
everything as usual) and restores it as it was.

Examples
--------
>>> import gc
>>> with gc_paused():
...     inside = gc.isenabled()
>>> inside, gc.isenabled()
(False, True)
"""

from __future__ import annotations

import contextlib
import gc
from typing import Iterator

__all__ = ["gc_paused"]


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Hold the cyclic garbage collector off inside the block (left off when it already
    was: a caller's ``gc.disable()`` is kept)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
