"""PyTorch adapters: a map-style dataset with batched fetching, and an iterable one.

Importing this module imports ``torch`` (install ``tfsql[torch]``); nothing else in
:mod:`tfsql.loader` does.

- :class:`MapDataset` wraps a :class:`~tfsql.loader.RecordDataset`: ``len()``,
  ``ds[i]`` and ``ds.__getitems__(indices)``, which ``torch.utils.data.DataLoader``
  calls with a whole batch of indices (one read plan, one decode). Pair it with
  :class:`BatchSampler` (the exact sharding, shuffles and resume of a
  :class:`~tfsql.loader.Loader`) and ``collate_fn=collate``.
- :class:`IterableDataset` wraps a :class:`~tfsql.loader.Loader`: each DataLoader
  worker builds its own share of the rank's batches (in a DataLoader, pass
  ``batch_size=None``: the batches are already made, and ``collate_fn=collate``:
  PyTorch's default conversion would visit every string of a batch).
- :func:`data_loader` (:class:`BatchLoader`): the loader's batches as tensors, read by
  threads of the training process (the decoder releases the GIL; nothing crosses a
  process boundary), or by DataLoader worker processes (``processes=True``) that
  receive each group of batches to read from the main process.

Arrays become tensors with ``torch.from_numpy``, sharing their memory (no copy); the
memory of Arrow-backed arrays is read-only, so do not modify those tensors in place.
Bytes and strings stay Python lists.

Examples
--------
>>> import tempfile, pyarrow as pa, tfsql, torch
>>> from tfsql.loader import Loader, RecordDataset
>>> out = tempfile.mkdtemp()
>>> _ = tfsql.write_tfrecord(pa.table({"x": [1.0, 2.0, 3.0, 4.0, 5.0]}), out)
>>> loader = Loader(RecordDataset(out), batch_size=2)
>>> [b["x"].tolist() for b in data_loader(loader)]
[[1.0, 2.0], [3.0, 4.0], [5.0]]
"""

from __future__ import annotations

import warnings
from typing import Any, Iterator, Sequence

import numpy as np
import torch
import torch.utils.data

from tfsql.loader.dataset import RecordDataset
from tfsql.loader.loader import Loader

__all__ = ["MapDataset", "IterableDataset", "BatchSampler", "BatchLoader", "collate", "to_torch", "data_loader"]


def to_torch(batch: Any) -> Any:
    """NumPy arrays (in dicts, lists, tuples) as tensors sharing their memory.

    Examples
    --------
    >>> to_torch({"x": np.arange(3), "s": ["a"]})
    {'x': tensor([0, 1, 2]), 's': ['a']}
    """
    with warnings.catch_warnings():  # once a batch: it costs more than a tensor
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        return _tensors(batch)


def _tensors(batch: Any) -> Any:
    if isinstance(batch, np.ndarray):
        return batch if batch.dtype.kind in "OSUV" else torch.from_numpy(batch)
    if isinstance(batch, np.generic):
        return torch.as_tensor(batch)
    if isinstance(batch, dict):
        return {k: _tensors(v) for k, v in batch.items()}
    if isinstance(batch, tuple):
        return tuple(_tensors(v) for v in batch)
    return batch


def collate(batch: Any) -> Any:
    """The ``collate_fn`` for :class:`MapDataset`: its ``__getitems__`` already made the
    batch, so this returns it as it is.

    Examples
    --------
    >>> collate({"x": 1})
    {'x': 1}
    """
    return batch


class MapDataset(torch.utils.data.Dataset):
    """A map-style ``torch.utils.data.Dataset`` over a
    :class:`~tfsql.loader.RecordDataset`.

    Examples
    --------
    >>> import tempfile, pyarrow as pa, tfsql
    >>> from tfsql.loader import Loader, RecordDataset
    >>> out = tempfile.mkdtemp()
    >>> _ = tfsql.write_tfrecord(pa.table({"x": list(range(6))}), out)
    >>> records = RecordDataset(out)
    >>> sampler = BatchSampler(Loader(records, batch_size=4, shuffle="exact", seed=0))
    >>> loader = torch.utils.data.DataLoader(MapDataset(records), batch_sampler=sampler, collate_fn=collate)
    >>> sorted(torch.cat([b["x"] for b in loader]).tolist())
    [0, 1, 2, 3, 4, 5]
    """

    def __init__(self, records: RecordDataset) -> None:
        self.records = records

    def __len__(self) -> int:
        return len(self.records)

    def __getitem__(self, index: int) -> Any:
        return to_torch(self.records[index])

    def __getitems__(self, indices: Sequence[int]) -> Any:
        return to_torch(self.records.__getitems__(indices))


class _LoaderState:
    """``set_epoch``, ``state_dict`` and ``load_state_dict`` of the wrapped
    :class:`~tfsql.loader.Loader` (``batches``: the batches the training loop consumed,
    where the adapter cannot count them itself)."""

    loader: Loader

    def set_epoch(self, epoch: int) -> None:
        self.loader.set_epoch(epoch)

    def state_dict(self, *, batches: int | None = None) -> dict:
        return self.loader.state_dict(batches=batches)

    def load_state_dict(self, state: dict) -> None:
        self.loader.load_state_dict(state)


class BatchSampler(_LoaderState, torch.utils.data.Sampler):
    """The batches of indices a :class:`~tfsql.loader.Loader` plans for this rank (all of
    them: the sampler runs in the main process), for ``DataLoader(batch_sampler=...)``.
    ``set_epoch``, ``state_dict`` and ``load_state_dict`` are the loader's (pass the
    number of batches the training loop consumed to ``state_dict``: the DataLoader
    fetches ahead of it). A pass run to its end moves to the next epoch, whatever the
    number of workers (the sampler runs in the main process)."""

    def __init__(self, loader: Loader) -> None:
        self.loader = loader

    def __len__(self) -> int:
        return len(self.loader)

    def __iter__(self) -> Iterator[list[int]]:
        for positions in self.loader.begin_pass():
            yield positions.tolist()
        self.loader.next_epoch()


class IterableDataset(_LoaderState, torch.utils.data.IterableDataset):
    """A ``torch.utils.data.IterableDataset`` of a :class:`~tfsql.loader.Loader`'s
    batches, as tensors; in a DataLoader with ``num_workers=W`` worker ``w`` builds the
    rank's batches ``w, w + W, ...`` and the DataLoader yields them in order.

    ``len()`` is the number of batches per epoch on this rank. Each pass delivers the
    rest of the current epoch and does not move to the next one, with 0 workers as with
    several (the workers iterate copies: the main process cannot learn where they
    stopped): call :meth:`set_epoch` before each epoch, as with ``DistributedSampler``,
    and resume with ``load_state_dict`` of a ``state_dict(batches=steps_done)``.
    ``persistent_workers=True`` is refused (a persistent worker keeps the copy it got
    first, so it would not learn ``set_epoch`` or a loaded state): use
    :func:`data_loader`, whose batches are planned in the main process.
    """

    def __init__(self, loader: Loader) -> None:
        self.loader = loader
        self._passes = 0

    def __len__(self) -> int:
        return len(self.loader)

    def __iter__(self) -> Iterator[Any]:
        if torch.utils.data.get_worker_info() is not None:
            self._passes += 1
            if self._passes > 1:
                raise RuntimeError(
                    "tfsql.loader.torch.IterableDataset cannot run in persistent DataLoader workers: they keep "
                    "the copy of the loader they got first, so set_epoch and load_state_dict in the main process "
                    "would not reach them. Pass persistent_workers=False, or use tfsql.loader.torch.data_loader "
                    "(its batches are planned in the main process)"
                )
        for batch in self.loader.passes(threads=self.loader.threads, advance=False):
            yield to_torch(batch)


class BatchLoader(_LoaderState):
    """Batches of a :class:`~tfsql.loader.Loader` as dicts of tensors (:func:`data_loader`
    makes one), read by threads of this process (the default) or by the worker
    processes of a ``torch.utils.data.DataLoader`` (``processes=True``).

    Either way, the batches are planned and counted here, in the main process:
    ``state_dict()`` is where the training loop stands (the batches it received), a
    pass run to its end moves to the next epoch, and ``set_epoch`` / ``load_state_dict``
    reach the workers, ``persistent_workers`` too (they receive each group of batches to
    read from the main process). Each ``iter()`` is a pass from where the epoch stood
    when it began: a peek with ``next(iter(loader))`` does not use up a batch of the
    next loop.

    Attributes
    ----------
    dataloader : torch.utils.data.DataLoader or None
        The DataLoader of worker processes (``processes=True``).
    """

    def __init__(self, loader: Loader, *, num_workers: int = 0, processes: bool = False, **options: Any) -> None:
        self.loader = loader
        self.num_workers = num_workers
        self.pin_memory = bool(options.pop("pin_memory", False)) and torch.cuda.is_available()
        self.dataloader: torch.utils.data.DataLoader | None = None
        if processes:
            self._sampler = _GroupSampler()
            self.dataloader = torch.utils.data.DataLoader(
                _GroupReader(loader.dataset),
                batch_sampler=self._sampler,
                collate_fn=collate,
                num_workers=num_workers,
                pin_memory=self.pin_memory,
                **options,
            )
            return
        options.pop("persistent_workers", None)  # threads are made for each pass
        if options:
            raise TypeError(
                f"{', '.join(sorted(options))}: DataLoader options apply to worker processes; pass processes=True "
                "to read with a torch DataLoader's workers, or leave them out (threads read the batches)"
            )

    def __len__(self) -> int:
        return len(self.loader)

    def __iter__(self) -> Iterator[Any]:
        if self.dataloader is None:
            return self._threads()
        return self._processes()

    def _threads(self) -> Iterator[Any]:
        for batch in self.loader.passes(threads=max(1, self.num_workers)):
            batch = to_torch(batch)
            yield _pinned(batch) if self.pin_memory else batch

    def _processes(self) -> Iterator[Any]:
        loader = self.loader
        self._sampler.groups = loader.groups(loader.begin_pass())
        for group in self.dataloader:  # type: ignore[union-attr]
            for batch in group:
                loader.consumed += 1
                yield to_torch(batch)
        loader.next_epoch()


def _pinned(batch: dict) -> dict:
    return {k: v.pin_memory() if isinstance(v, torch.Tensor) else v for k, v in batch.items()}


class _GroupSampler(torch.utils.data.Sampler):
    """In the main process: each group of batches of the pass :class:`BatchLoader`
    begins, as the one "index" of a DataLoader batch."""

    groups: Iterator[list[np.ndarray]] = iter(())

    def __init__(self) -> None:
        pass

    def __iter__(self) -> Iterator[list[list[np.ndarray]]]:
        for group in self.groups:
            yield [group]


_SHARED_BYTES = 1 << 20


class _GroupReader(torch.utils.data.Dataset):
    """In a worker process: reads a group of batches (one read plan, one decode); large
    arrays go back as tensors (shared memory), the rest as NumPy (pickled)."""

    def __init__(self, records: RecordDataset) -> None:
        self.records = records

    def __getitems__(self, groups: Sequence[list[np.ndarray]]) -> list[Any]:
        (group,) = groups
        out = []
        for batch in self.records.read_batches(group):
            if isinstance(batch, dict):
                batch = {k: to_torch(v) if _large(v) else v for k, v in batch.items()}
            out.append(batch)
        return out

    def __getitem__(self, index: int) -> Any:
        raise TypeError("read through __getitems__ with a group of batches")

    def __len__(self) -> int:
        return len(self.records)


def _large(value: Any) -> bool:
    return isinstance(value, np.ndarray) and value.nbytes >= _SHARED_BYTES


def data_loader(loader: Loader, *, num_workers: int = 0, processes: bool = False, **options: Any) -> BatchLoader:
    """A :class:`BatchLoader`: the batches of ``loader`` as tensors, read ahead by
    ``num_workers`` threads of this process (0 or 1: in this thread, each batch when it
    is asked for), or,
    with ``processes=True``, by ``num_workers`` DataLoader worker processes
    (``options``: other ``torch.utils.data.DataLoader`` arguments, such as
    ``persistent_workers``).

    Threads are the default: the C decoder releases the GIL, and the batches stay in
    this process (worker processes send every batch to it, which costs more than the
    decoding for large records such as images). Use processes for a ``transform`` that
    holds the GIL (Python image decoding, augmentations).

    ``state_dict()`` / ``load_state_dict()`` resume, ``set_epoch`` picks an epoch (see
    :class:`BatchLoader`).

    Examples
    --------
    >>> import tempfile, pyarrow as pa, tfsql
    >>> from tfsql.loader import RecordDataset
    >>> out = tempfile.mkdtemp()
    >>> _ = tfsql.write_tfrecord(pa.table({"s": ["a", "b", "c"], "x": [1, 2, 3]}), out)
    >>> [(b["s"], b["x"].tolist()) for b in data_loader(Loader(RecordDataset(out), batch_size=2), num_workers=1)]
    [(['a', 'b'], [1, 2]), (['c'], [3])]
    >>> data = data_loader(Loader(RecordDataset(out), batch_size=2), num_workers=1, processes=True)
    >>> [b["x"].tolist() for b in data], data.state_dict()["epoch"]
    ([[1, 2], [3]], 1)
    """
    return BatchLoader(loader, num_workers=num_workers, processes=processes, **options)
