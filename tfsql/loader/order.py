"""The order of an epoch and its exact split over ranks and workers.

An epoch is a sequence of positions ``0 .. n-1`` (into the selected records):

- ``shuffle=None``: in order;
- ``shuffle="exact"``: a uniform random permutation drawn from ``(seed, epoch)``
  (memory: 8 bytes per record, never the records);
- ``shuffle="block"``: runs of ``block_size`` consecutive positions in a random order,
  then shuffled within windows of ``window`` consecutive runs: reads stay sequential
  within a run, and a record moves anywhere in the epoch.

Both are drawn with NumPy's PCG64 generator seeded by ``(seed, epoch)``: the same seed
and epoch give the same order on any machine and for any number of workers.

:func:`rank_sequence` gives rank ``r`` of ``world_size`` its contiguous share of the
epoch. Every rank gets the same number of records, so the same number of batches (DDP
never waits for a rank that ran out): with ``drop_last`` the epoch is cut to a
multiple of ``world_size * batch_size``; without, it is padded to a multiple of
``world_size`` by repeating its first records (at most ``world_size - 1`` of them),
and each rank's last batch may be short. :func:`worker_batches` deals a rank's batches
to its data-loading workers round-robin (from the first batch not yet consumed,
``start``: batch ``start + j`` to worker ``j % num_workers``), the order in which
PyTorch's DataLoader collects them (worker 0 first), so the rank sees its batches in
the same order whatever the number of workers.

Examples
--------
>>> epoch_order(6, shuffle=None).tolist()
[0, 1, 2, 3, 4, 5]
>>> sorted(epoch_order(6, shuffle="exact", seed=1, epoch=0).tolist())
[0, 1, 2, 3, 4, 5]
>>> [rank_sequence(np.arange(7), rank, 2, batch_size=2, drop_last=False).tolist() for rank in (0, 1)]
[[0, 1, 2, 3], [4, 5, 6, 0]]
>>> list(worker_batches(5, worker=1, num_workers=2))
[1, 3]
"""

from __future__ import annotations

from typing import Literal

import numpy as np

__all__ = ["Shuffle", "epoch_order", "rank_sequence", "batches_per_rank", "worker_batches", "undelivered"]

Shuffle = Literal["exact", "block"] | None

_EXACT_STREAM = 0
_BLOCK_STREAM = 1


def _generator(seed: int, epoch: int, stream: int) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, epoch, stream])))


def epoch_order(
    n: int,
    *,
    shuffle: Shuffle,
    seed: int = 0,
    epoch: int = 0,
    block_size: int = 256,
    window: int = 16,
) -> np.ndarray:
    """The positions ``0 .. n-1`` in the order of epoch ``epoch`` (see the module
    docstring); an int64 array.

    Examples
    --------
    >>> epoch_order(8, shuffle="block", seed=0, epoch=0, block_size=2, window=1).tolist()
    [6, 7, 2, 3, 4, 5, 0, 1]
    >>> (epoch_order(100, shuffle="exact", seed=0, epoch=0) == epoch_order(100, shuffle="exact", seed=0, epoch=1)).all()
    np.False_
    """
    if shuffle is None:
        return np.arange(n, dtype=np.int64)
    _check_seed(seed, epoch)
    if shuffle == "exact":
        return _generator(seed, epoch, _EXACT_STREAM).permutation(n).astype(np.int64)
    if shuffle == "block":
        if block_size < 1 or window < 1:
            raise ValueError(f"block_size and window must be at least 1, not {block_size} and {window}")
        rng = _generator(seed, epoch, _BLOCK_STREAM)
        blocks = rng.permutation(-(-n // block_size))
        starts = blocks * block_size
        runs = np.minimum(starts + block_size, n) - starts
        order = np.repeat(starts - np.cumsum(runs) + runs, runs) + np.arange(int(runs.sum()))
        span = block_size * window
        for begin in range(0, n, span):
            chunk = order[begin : begin + span]
            if window > 1:
                order[begin : begin + span] = chunk[rng.permutation(len(chunk))]
        return order.astype(np.int64)
    raise ValueError(f"shuffle must be None, 'exact' or 'block', not {shuffle!r}")


def _check_seed(seed: int, epoch: int) -> None:
    for name, value in (("seed", seed), ("epoch", epoch)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer, not {value!r}")


def _share(n: int, world_size: int, batch_size: int, drop_last: bool) -> int:
    if drop_last:
        return n // (world_size * batch_size) * batch_size
    return -(-n // world_size)


def batches_per_rank(n: int, world_size: int, batch_size: int, drop_last: bool) -> int:
    """How many batches each rank gets from an epoch of ``n`` records.

    Examples
    --------
    >>> batches_per_rank(10, 3, 2, drop_last=False), batches_per_rank(10, 3, 2, drop_last=True)
    (2, 1)
    """
    return -(-_share(n, world_size, batch_size, drop_last) // batch_size)


def rank_sequence(order: np.ndarray, rank: int, world_size: int, *, batch_size: int, drop_last: bool) -> np.ndarray:
    """Rank ``rank``'s contiguous share of the epoch ``order`` (see the module docstring).

    Examples
    --------
    >>> rank_sequence(np.arange(10), 2, 3, batch_size=2, drop_last=True).tolist()
    [4, 5]
    """
    if world_size < 1 or not 0 <= rank < world_size:
        raise ValueError(f"rank must be in [0, world_size), not rank {rank} of {world_size}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, not {batch_size}")
    n = len(order)
    share = _share(n, world_size, batch_size, drop_last)
    start = rank * share
    if start + share <= n:
        return order[start : start + share]
    if n == 0:
        return order[:0]
    padded = np.resize(order, share * world_size)  # np.resize repeats from the start
    return padded[start : start + share]


def worker_batches(n_batches: int, *, worker: int, num_workers: int, start: int = 0) -> range:
    """The batch numbers (of a rank's ``n_batches``) that ``worker`` of ``num_workers``
    builds, from batch ``start`` on (a resumed epoch).

    Examples
    --------
    >>> list(worker_batches(7, worker=0, num_workers=3, start=2))
    [2, 5]
    """
    if num_workers < 1 or not 0 <= worker < num_workers:
        raise ValueError(f"worker must be in [0, num_workers), not worker {worker} of {num_workers}")
    return range(start + worker, n_batches, num_workers)


def undelivered(order: np.ndarray, segments: list[tuple[int, int]], *, batch_size: int, drop_last: bool) -> np.ndarray:
    """The part of an epoch's ``order`` not delivered yet, in epoch order, after
    ``segments``: each ``(world_size, batches)`` is a run on ``world_size`` ranks that
    split what was left of the epoch (:func:`rank_sequence`) and each delivered its
    first ``batches`` batches; then the job was resumed on another world size.

    Examples
    --------
    >>> undelivered(np.arange(12), [(2, 1)], batch_size=2, drop_last=False).tolist()
    [2, 3, 4, 5, 8, 9, 10, 11]
    >>> undelivered(np.arange(12), [(2, 1), (4, 1)], batch_size=2, drop_last=False).tolist()
    []
    """
    rest = order
    for world_size, batches in segments:
        share = _share(len(rest), world_size, batch_size, drop_last)
        if not 0 <= batches <= -(-share // batch_size):
            raise ValueError(f"{batches} batches of a run on {world_size} ranks with {-(-share // batch_size)}")
        taken = min(batches * batch_size, share)
        if not taken or not len(rest):
            continue
        planned = np.resize(rest, share * world_size) if share * world_size > len(rest) else rest
        delivered = np.zeros(len(order), bool)
        delivered[planned[: share * world_size].reshape(world_size, share)[:, :taken]] = True
        rest = rest[~delivered[rest]]
    return rest
