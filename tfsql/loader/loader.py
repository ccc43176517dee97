"""Epochs of batches: exact sharding, shuffling without a buffer, resumable state.

A :class:`Loader` iterates a :class:`~tfsql.loader.dataset.RecordDataset` in batches of
NumPy arrays. Each epoch's order comes from ``(seed, epoch)``
(:func:`~tfsql.loader.order.epoch_order`: in order, an exact permutation, or blocks);
rank ``rank`` of ``world_size`` takes its share, the same number of batches on every
rank (:func:`~tfsql.loader.order.rank_sequence`); inside a PyTorch DataLoader worker,
the worker builds every ``num_workers``-th batch of the rank (from
``torch.utils.data.get_worker_info()``), so that every record of the epoch is read by
exactly one (rank, worker) and the rank receives its batches in the same order for
any number of workers.

:meth:`Loader.state_dict` records the epoch and how many of its batches were
consumed; :meth:`Loader.load_state_dict` (in a new process too) resumes with exactly
the batches that were left. When an epoch has been iterated to its end the loader
moves to the next epoch; :meth:`Loader.set_epoch` picks one explicitly.

See :class:`Loader` for examples.
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from tfsql.loader.dataset import RecordDataset
from tfsql.loader.distributed import current_rank, current_worker
from tfsql.loader.order import Shuffle, batches_per_rank, epoch_order, rank_sequence, worker_batches
from tfsql.parallel import ordered_map

__all__ = ["Loader"]

_STATE_VERSION = 1
# A worker reads this many of its batches at once (one read plan, one decode), as long
# as they hold at most _GROUP_BYTES of records: the per-batch Python work is paid once.
_GROUP_BATCHES = 8
_GROUP_BYTES = 16 << 20
# What an epoch's order depends on: a state taken under other values would not resume it.
_PLAN_KEYS = ("records", "batch_size", "shuffle", "seed", "world_size", "drop_last", "block_size", "window")


class Loader:
    """Batches of a :class:`~tfsql.loader.dataset.RecordDataset`, epoch by epoch.

    Parameters
    ----------
    dataset : RecordDataset
    batch_size : int
        Records per batch (a rank's last batch may be short unless ``drop_last``).
    shuffle : {None, "exact", "block"}
        The order of an epoch (:func:`~tfsql.loader.order.epoch_order`). Compressed
        files are read with ``shuffle=None`` only.
    seed : int
        With the epoch number, decides the order; the same on every machine.
    drop_last : bool
        Cut each epoch to whole batches on every rank; otherwise pad it (repeating its
        first records, at most ``world_size - 1``) so every rank has as many records.
    rank, world_size : int, optional
        This process's rank; default from ``torch.distributed`` when initialised, else
        0 of 1.
    block_size, window : int
        For ``shuffle="block"``: records per block, blocks per shuffle window.
    threads : int
        Batches read ahead in parallel in this process (reads and decoding release
        the GIL); 1 reads each batch when it is asked for.
    epoch : int
        The epoch to start with.

    Examples
    --------
    >>> import tempfile, pyarrow as pa, tfsql
    >>> from tfsql.loader import RecordDataset
    >>> out = tempfile.mkdtemp()
    >>> _ = tfsql.write_tfrecord(pa.table({"x": list(range(10))}), out)
    >>> ds = RecordDataset(out)
    >>> [[b["x"].tolist() for b in Loader(ds, batch_size=2, rank=r, world_size=3)] for r in range(3)]
    [[[0, 1], [2, 3]], [[4, 5], [6, 7]], [[8, 9], [0, 1]]]
    >>> [len(Loader(ds, batch_size=2, rank=r, world_size=3, drop_last=True)) for r in range(3)]
    [1, 1, 1]
    >>> [p.tolist() for p in Loader(ds, batch_size=2, rank=1, world_size=2).batch_positions(worker=1, num_workers=2)]
    [[7, 8]]

    A resume, in this process or another, continues with exactly the batches left:

    >>> a = Loader(ds, batch_size=3, shuffle="exact", seed=3)
    >>> a.set_epoch(5)
    >>> it = iter(a); first = next(it)
    >>> b = Loader(ds, batch_size=3, shuffle="exact", seed=3)
    >>> b.load_state_dict(a.state_dict())
    >>> (b.epoch, b.consumed), [x["x"].tolist() for x in b] == [x["x"].tolist() for x in it]
    ((5, 1), True)
    """

    def __init__(
        self,
        dataset: RecordDataset,
        *,
        batch_size: int = 256,
        shuffle: Shuffle = None,
        seed: int = 0,
        drop_last: bool = False,
        rank: int | None = None,
        world_size: int | None = None,
        block_size: int = 256,
        window: int = 16,
        threads: int = 1,
        epoch: int = 0,
    ) -> None:
        if not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, not {batch_size!r}")
        if shuffle not in (None, "exact", "block"):
            raise ValueError(f"shuffle must be None, 'exact' or 'block', not {shuffle!r}")
        if shuffle is not None:
            dataset.require_random_access()
        if (rank is None) != (world_size is None):
            raise ValueError("give both rank and world_size, or neither (then torch.distributed decides)")
        if rank is None or world_size is None:
            rank, world_size = current_rank()
        rank_sequence(np.zeros(0, np.int64), rank, world_size, batch_size=batch_size, drop_last=drop_last)
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.drop_last = drop_last
        self.rank = rank
        self.world_size = world_size
        self.block_size = block_size
        self.window = window
        self.threads = threads if dataset.random_access else 1
        epoch_order(0, shuffle=shuffle, seed=seed, epoch=epoch, block_size=block_size, window=window)  # checks
        self.epoch = epoch
        self.consumed = 0  # batches of this epoch already delivered

    # ------------------------------------------------------------------ the plan
    def set_epoch(self, epoch: int) -> None:
        """Start epoch ``epoch`` from its first batch (see the class example)."""
        epoch_order(0, shuffle=self.shuffle, seed=self.seed, epoch=epoch)  # checks the value
        self.epoch = epoch
        self.consumed = 0

    def __len__(self) -> int:
        """Batches of an epoch on this rank (the same on every rank)."""
        return batches_per_rank(len(self.dataset), self.world_size, self.batch_size, self.drop_last)

    def rank_positions(self) -> np.ndarray:
        """This rank's dataset positions for the current epoch, in order."""
        order = epoch_order(
            len(self.dataset),
            shuffle=self.shuffle,
            seed=self.seed,
            epoch=self.epoch,
            block_size=self.block_size,
            window=self.window,
        )
        return rank_sequence(order, self.rank, self.world_size, batch_size=self.batch_size, drop_last=self.drop_last)

    def batch_positions(self, *, worker: int = 0, num_workers: int = 1) -> Iterator[np.ndarray]:
        """The dataset positions of each batch ``worker`` (of ``num_workers``) builds,
        from the first batch not consumed yet (see the class example).
        """
        positions = self.rank_positions()
        b = self.batch_size
        for k in worker_batches(len(self), worker=worker, num_workers=num_workers, start=self.consumed):
            yield positions[k * b : (k + 1) * b]

    # ------------------------------------------------------------------ iterating
    def __iter__(self) -> Iterator[Any]:
        """Batches of the rest of the current epoch (this worker's share, inside a
        DataLoader worker). Iterated to the end, the loader moves to the next epoch."""
        worker, num_workers = current_worker()

        def groups() -> Iterator[list[np.ndarray]]:
            size = self._group_batches()
            group: list[np.ndarray] = []
            for positions in self.batch_positions(worker=worker, num_workers=num_workers):
                group.append(positions)
                if len(group) == size:
                    yield group
                    group = []
            if group:
                yield group

        # Groups read ahead: one per thread (each up to _GROUP_BYTES), so that memory is a
        # few batches per thread whatever the records' size.
        read = ordered_map(groups, self.dataset.read_batches, threads=self.threads, prefetch=self.threads)
        try:
            for batches in read:
                for batch in batches:
                    self.consumed += num_workers
                    yield batch
        finally:
            read.close()
        self.set_epoch(self.epoch + 1)

    def _group_batches(self) -> int:
        """How many of its batches a worker reads at once (see ``_GROUP_BATCHES``)."""
        index = self.dataset.index
        sizes = [f.sizes for f in index.files if f.sizes is not None]
        total = sum(int(s.sum()) for s in sizes)
        count = sum(len(s) for s in sizes)
        batch_bytes = self.batch_size * (total / count if count else 0)
        return max(1, min(_GROUP_BATCHES, int(_GROUP_BYTES // max(batch_bytes, 1))))

    # ------------------------------------------------------------------ state
    def state_dict(self, *, batches: int | None = None) -> dict:
        """Where the loader stands: the epoch and how many of its batches were consumed
        (``batches``, for a training loop that counts its steps itself, e.g. when a
        DataLoader's workers iterate copies of the loader), plus what the order depends
        on. Plain values only: ``json.dumps`` or ``torch.save`` it (see the class
        example).
        """
        state = {
            "version": _STATE_VERSION,
            "epoch": self.epoch,
            "batches": self.consumed if batches is None else int(batches),
            "records": len(self.dataset),
            "batch_size": self.batch_size,
            "shuffle": self.shuffle,
            "seed": self.seed,
            "world_size": self.world_size,
            "drop_last": self.drop_last,
            "block_size": self.block_size,
            "window": self.window,
        }
        return state

    def load_state_dict(self, state: dict) -> None:
        """Resume from a :meth:`state_dict`: the next batches are exactly those that
        were left. Raises ``ValueError`` when the state was taken under another plan
        (other data, batch size, shuffle, seed, world size...)."""
        if state.get("version") != _STATE_VERSION:
            raise ValueError(f"not a tfsql loader state (version {state.get('version')!r})")
        mine = self.state_dict()
        different = [k for k in _PLAN_KEYS if state.get(k) != mine[k]]
        if different:
            k = different[0]
            raise ValueError(
                f"the state was taken with {k}={state.get(k)!r}, this loader has {k}={mine[k]!r}: it would not "
                "resume the same sequence; make the loader as it was"
            )
        batches = state["batches"]
        if not 0 <= batches <= len(self):
            raise ValueError(f"the state has {batches} batches consumed of an epoch of {len(self)}")
        self.epoch = state["epoch"]
        self.consumed = batches
