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

The conventions are PyTorch's (``DistributedSampler``, torchdata's
``StatefulDataLoader``):

- each ``iter(loader)`` is a pass over the rest of the current epoch, from the batch
  the epoch stood at when the pass began: a pass left unfinished (a peek with
  ``next(iter(loader))``, a ``break``) does not move the next pass on; a pass run to
  its end moves the loader to the next epoch;
- :meth:`Loader.set_epoch` starts an epoch from its first batch, except the epoch a
  loaded state is in, which keeps the state's position (so "load the checkpoint, then
  ``set_epoch(epoch)`` in the loop" resumes);
- the rank and world size (unless given) are read from ``torch.distributed`` when a
  pass begins, not when the loader is made.

:meth:`Loader.state_dict` records the epoch, how many of its batches were delivered,
what the order depends on and a fingerprint of the selected records and of the data
(:mod:`tfsql.loader.fingerprint`); :meth:`Loader.load_state_dict` (in a new process too)
refuses a state taken over other records, naming what differs, and resumes with
exactly the batches that were left, on the same or another world size: on another
(an elastic resume), the records the epoch had not delivered yet are split over the
new ranks as a fresh epoch of those records would be
(:func:`~tfsql.loader.order.undelivered`), and the next epochs are those of a fresh
run on the new world size.

See :class:`Loader` for examples.
"""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from tfsql.loader.dataset import RecordDataset
from tfsql.loader.distributed import current_rank, current_worker
from tfsql.loader.fingerprint import differences, fingerprint
from tfsql.loader.order import Shuffle, batches_per_rank, epoch_order, rank_sequence, undelivered, worker_batches
from tfsql.parallel import ordered_map

__all__ = ["Loader"]

_STATE_VERSION = 2
# A worker reads this many of its batches at once (one read plan, one decode), as long
# as they hold at most _GROUP_BYTES of records: the per-batch Python work is paid once.
_GROUP_BATCHES = 8
_GROUP_BYTES = 16 << 20
# What an epoch's order depends on: a state taken under other values would not resume it.
_PLAN_KEYS = ("records", "batch_size", "shuffle", "seed", "drop_last", "block_size", "window")


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
        0 of 1, read when each pass begins.
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

    A resume, in this process or another, continues with exactly the batches left, and
    ``set_epoch`` of the state's epoch keeps its position:

    >>> a = Loader(ds, batch_size=3, shuffle="exact", seed=3)
    >>> a.set_epoch(5)
    >>> it = iter(a); first = next(it)
    >>> b = Loader(ds, batch_size=3, shuffle="exact", seed=3)
    >>> b.load_state_dict(a.state_dict())
    >>> b.set_epoch(5)
    >>> (b.epoch, b.consumed), [x["x"].tolist() for x in b] == [x["x"].tolist() for x in it]
    ((5, 1), True)

    On another world size: the 6 records the state's 2 ranks had not delivered (each
    delivered one batch: 0, 1 and 5, 6), over 3 ranks, then over 4 (two repeated, so
    that every rank has as many):

    >>> c = Loader(ds, batch_size=2, rank=0, world_size=2)
    >>> _ = next(iter(c))
    >>> state = c.state_dict()
    >>> [[x["x"].tolist() for x in Loader(ds, batch_size=2, rank=r, world_size=3).resumed(state)] for r in range(3)]
    [[[2, 3]], [[4, 7]], [[8, 9]]]
    >>> [[x["x"].tolist() for x in Loader(ds, batch_size=2, rank=r, world_size=4).resumed(state)] for r in range(4)]
    [[[2, 3]], [[4, 7]], [[8, 9]], [[2, 3]]]
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
        if rank is not None and world_size is not None:
            rank_sequence(np.zeros(0, np.int64), rank, world_size, batch_size=batch_size, drop_last=drop_last)
        self._given: tuple[int, int] | None = None if rank is None or world_size is None else (rank, world_size)
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.drop_last = drop_last
        self.block_size = block_size
        self.window = window
        self.threads = threads if dataset.random_access else 1
        epoch_order(0, shuffle=shuffle, seed=seed, epoch=epoch, block_size=block_size, window=window)  # checks
        self.epoch = epoch
        self.consumed = 0  # batches of the current epoch's plan delivered (in the current pass)
        self._start = 0  # the batch the next pass begins at (a loaded state's position)
        self._segments: list[tuple[int, int]] = []  # runs of this epoch on other world sizes
        self._segment_world: int | None = None  # the world size _start counts batches of
        self._resumed = False  # a state was loaded and its epoch has not been run to its end since
        self._fingerprint: dict | None = None

    # ------------------------------------------------------------------ where we are
    def _where(self) -> tuple[int, int]:
        return self._given if self._given is not None else current_rank()

    @property
    def rank(self) -> int:
        """This process's rank (given, or from ``torch.distributed`` now)."""
        return self._where()[0]

    @property
    def world_size(self) -> int:
        """The number of ranks (given, or from ``torch.distributed`` now)."""
        return self._where()[1]

    def set_epoch(self, epoch: int) -> None:
        """Start epoch ``epoch`` from its first batch; for the epoch of a state just
        loaded, keep the state's position (see the class example)."""
        epoch_order(0, shuffle=self.shuffle, seed=self.seed, epoch=epoch)  # checks the value
        if self._resumed and epoch == self.epoch:
            return
        self.epoch = epoch
        self.consumed = self._start = 0
        self._segments = []
        self._segment_world = None
        self._resumed = False

    def _plan(self, world_size: int) -> tuple[list[tuple[int, int]], int]:
        """The runs of this epoch before the current one, and the batch it begins at,
        on ``world_size`` ranks (a position counted on another world size becomes a
        run of its own: an elastic resume)."""
        if self._start and self._segment_world not in (None, world_size):
            return [*self._segments, (self._segment_world, self._start)], 0
        return list(self._segments), self._start

    def _epoch_rest(self, segments: list[tuple[int, int]]) -> np.ndarray:
        order = epoch_order(
            len(self.dataset),
            shuffle=self.shuffle,
            seed=self.seed,
            epoch=self.epoch,
            block_size=self.block_size,
            window=self.window,
        )
        return undelivered(order, segments, batch_size=self.batch_size, drop_last=self.drop_last)

    def __len__(self) -> int:
        """Batches of the current epoch on this rank (the same on every rank; for an
        epoch resumed on another world size, those of the resumed part)."""
        world = self.world_size
        segments, _ = self._plan(world)
        n = len(self._epoch_rest(segments)) if segments else len(self.dataset)
        return batches_per_rank(n, world, self.batch_size, self.drop_last)

    def rank_positions(self) -> np.ndarray:
        """This rank's dataset positions for the current epoch, in order."""
        rank, world = self._where()
        segments, _ = self._plan(world)
        return rank_sequence(
            self._epoch_rest(segments), rank, world, batch_size=self.batch_size, drop_last=self.drop_last
        )

    def batch_positions(self, *, worker: int = 0, num_workers: int = 1) -> Iterator[np.ndarray]:
        """The dataset positions of each batch ``worker`` (of ``num_workers``) builds,
        from the batch the next pass begins at (see the class example)."""
        rank, world = self._where()
        segments, start = self._plan(world)
        yield from self._batches(segments, rank, world, start, worker, num_workers)

    def _batches(
        self, segments: list, rank: int, world: int, start: int, worker: int, num_workers: int
    ) -> Iterator[np.ndarray]:
        positions = rank_sequence(
            self._epoch_rest(segments), rank, world, batch_size=self.batch_size, drop_last=self.drop_last
        )
        b = self.batch_size
        count = -(-len(positions) // b)
        for k in worker_batches(count, worker=worker, num_workers=num_workers, start=start):
            yield positions[k * b : (k + 1) * b]

    # ------------------------------------------------------------------ iterating
    def begin_pass(self, *, worker: int = 0, num_workers: int = 1) -> Iterator[np.ndarray]:
        """Begin a pass over the rest of the current epoch, as ``iter()`` does (read the
        rank and world size, settle a resume), and return the positions of each batch
        ``worker`` of ``num_workers`` builds in it: for adapters that read the batches
        elsewhere (they call :meth:`next_epoch` when the pass is delivered)."""
        rank, world = self._where()
        self._segments, self._start = self._plan(world)
        self._segment_world = world
        self.consumed = self._start
        return self._batches(list(self._segments), rank, world, self._start, worker, num_workers)

    def next_epoch(self) -> None:
        """Move to the first batch of the next epoch (a pass ran to its end)."""
        self.set_epoch(self.epoch + 1)

    def __iter__(self) -> Iterator[Any]:
        """Batches of the rest of the current epoch (this worker's share, inside a
        DataLoader worker). Iterated to the end, the loader moves to the next epoch."""
        return self.passes(threads=self.threads)

    def passes(self, *, threads: int, advance: bool = True, group: bool = False) -> Iterator[Any]:
        """A pass as ``iter()`` makes it, read by ``threads`` threads; ``advance``:
        move to the next epoch at its end; ``group``: yield lists of batches read
        together (as they are read)."""
        worker, num_workers = current_worker()
        positions = self.begin_pass(worker=worker, num_workers=num_workers)
        # Groups read ahead: one per thread (each up to _GROUP_BYTES), so that memory is a
        # few batches per thread whatever the records' size.
        read = ordered_map(lambda: self.groups(positions), self.dataset.read_batches, threads=threads, prefetch=threads)
        try:
            for batches in read:
                if group:
                    self.consumed += num_workers * len(batches)
                    yield batches
                    continue
                for batch in batches:
                    self.consumed += num_workers
                    yield batch
        finally:
            read.close()
        if advance:
            self.next_epoch()

    def groups(self, batches: Iterator[np.ndarray]) -> Iterator[list[np.ndarray]]:
        """``batches`` in groups read together (one read plan, one decode): up to
        ``_GROUP_BATCHES`` batches of at most ``_GROUP_BYTES`` of records."""
        size = self._group_batches()
        group: list[np.ndarray] = []
        for positions in batches:
            group.append(positions)
            if len(group) == size:
                yield group
                group = []
        if group:
            yield group

    def _group_batches(self) -> int:
        """How many of its batches a worker reads at once (see ``_GROUP_BATCHES``)."""
        index = self.dataset.index
        sizes = [f.sizes for f in index.files if f.sizes is not None]
        total = sum(int(s.sum()) for s in sizes)
        count = sum(len(s) for s in sizes)
        batch_bytes = self.batch_size * (total / count if count else 0)
        return max(1, min(_GROUP_BATCHES, int(_GROUP_BYTES // max(batch_bytes, 1))))

    # ------------------------------------------------------------------ state
    def _data_fingerprint(self) -> dict:
        if self._fingerprint is None:
            self._fingerprint = fingerprint(self.dataset)
        return self._fingerprint

    def state_dict(self, *, batches: int | None = None) -> dict:
        """Where the loader stands: the epoch and how many of its batches were delivered
        (``batches``, for a training loop that counts its steps itself, e.g. when a
        DataLoader's workers iterate copies of the loader), the world size they were
        delivered on, what the order depends on, and a fingerprint of the records and
        data. Plain values only: ``json.dumps`` or ``torch.save`` it (see the class
        example). Every rank of a job gives the same state: ranks step together.
        """
        world = self._segment_world if self._segment_world is not None else self.world_size
        return {
            "version": _STATE_VERSION,
            "epoch": self.epoch,
            "batches": self.consumed if batches is None else int(batches),
            "world_size": world,
            "segments": [list(s) for s in self._segments],
            "batch_size": self.batch_size,
            "shuffle": self.shuffle,
            "seed": self.seed,
            "drop_last": self.drop_last,
            "block_size": self.block_size,
            "window": self.window,
            **self._data_fingerprint(),
        }

    def load_state_dict(self, state: dict) -> None:
        """Resume from a :meth:`state_dict`: the next batches are exactly those that
        were left, on this world size or another (an elastic resume: see the module
        docstring). Raises ``ValueError`` when the state was taken under another plan
        (batch size, shuffle, seed...) or over other records, naming what differs."""
        if state.get("version") != _STATE_VERSION:
            raise ValueError(
                f"not a tfsql loader state of this version (version {state.get('version')!r}, this tfsql reads "
                f"{_STATE_VERSION}); start the epoch over with set_epoch"
            )
        mine = self.state_dict()
        different = [k for k in _PLAN_KEYS if state.get(k) != mine[k]]
        if different:
            k = different[0]
            raise ValueError(
                f"the state was taken with {k}={state.get(k)!r}, this loader has {k}={mine[k]!r}: it would not "
                "resume the same sequence; make the loader as it was"
            )
        changed = differences(state, mine)
        if changed:
            raise ValueError(
                f"the state was taken over other records: {'; '.join(changed)}. Resume over the records it was "
                "taken on, or start the epoch over (set_epoch)"
            )
        segments = [(int(w), int(b)) for w, b in state["segments"]]
        world, batches = int(state["world_size"]), int(state["batches"])
        rest = len(self._rest_after(state["epoch"], segments))
        planned = batches_per_rank(rest, world, self.batch_size, self.drop_last)
        if not 0 <= batches <= planned:
            raise ValueError(f"the state has {batches} batches delivered of an epoch of {planned}")
        self.epoch = state["epoch"]
        self._segments, self._start, self._segment_world = segments, batches, world
        self.consumed = batches
        self._resumed = True

    def _rest_after(self, epoch: int, segments: list[tuple[int, int]]) -> np.ndarray:
        saved, self.epoch = self.epoch, epoch
        try:
            return self._epoch_rest(segments)
        finally:
            self.epoch = saved

    def resumed(self, state: dict) -> "Loader":
        """This loader after ``load_state_dict(state)`` (for chaining).

        Examples
        --------
        >>> import tempfile, pyarrow as pa, tfsql
        >>> out = tempfile.mkdtemp()
        >>> _ = tfsql.write_tfrecord(pa.table({"x": [1, 2, 3]}), out)
        >>> state = {**Loader(RecordDataset(out), batch_size=1).state_dict(), "batches": 2}
        >>> [b["x"].tolist() for b in Loader(RecordDataset(out), batch_size=1).resumed(state)]
        [[3]]
        """
        self.load_state_dict(state)
        return self
