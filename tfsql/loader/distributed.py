"""Where this process stands in a distributed job: its rank and its data-loading worker.

Both are read from PyTorch when it is already imported (it is never imported here):
the rank and world size from ``torch.distributed`` when a process group is
initialised, the worker from ``torch.utils.data.get_worker_info()`` inside a
DataLoader worker. Otherwise a process is rank 0 of 1 and worker 0 of 1.

Examples
--------
>>> import sys
>>> "torch" in sys.modules or (current_rank(), current_worker()) == ((0, 1), (0, 1))
True
"""

from __future__ import annotations

import sys

__all__ = ["current_rank", "current_worker"]


def current_rank() -> tuple[int, int]:
    """``(rank, world_size)`` of this process (``(0, 1)`` outside a process group)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        dist = torch.distributed
        if dist.is_available() and dist.is_initialized():
            return dist.get_rank(), dist.get_world_size()
    return 0, 1


def current_worker() -> tuple[int, int]:
    """``(worker id, number of workers)`` of this DataLoader worker (``(0, 1)`` in the
    main process)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        info = torch.utils.data.get_worker_info()
        if info is not None:
            return info.id, info.num_workers
    return 0, 1
