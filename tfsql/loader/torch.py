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
- :func:`data_loader` makes that DataLoader, faster: its workers send small arrays
  as NumPy and the main process makes them tensors (:class:`BatchLoader`).

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
    if isinstance(batch, np.ndarray):
        if batch.dtype.kind in "OSUV":
            return batch
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
            return torch.from_numpy(batch)
    if isinstance(batch, np.generic):
        return torch.as_tensor(batch)
    if isinstance(batch, dict):
        return {k: to_torch(v) for k, v in batch.items()}
    if isinstance(batch, tuple):
        return tuple(to_torch(v) for v in batch)
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
    """``set_epoch``, ``state_dict(batches=...)`` and ``load_state_dict`` of the wrapped
    :class:`~tfsql.loader.Loader` (``batches``: the batches the training loop consumed;
    the DataLoader fetches ahead of it)."""

    loader: Loader

    def set_epoch(self, epoch: int) -> None:
        self.loader.set_epoch(epoch)

    def state_dict(self, *, batches: int) -> dict:
        return self.loader.state_dict(batches=batches)

    def load_state_dict(self, state: dict) -> None:
        self.loader.load_state_dict(state)


class BatchSampler(_LoaderState, torch.utils.data.Sampler):
    """The batches of indices a :class:`~tfsql.loader.Loader` plans for this rank (all of
    them: the sampler runs in the main process), for ``DataLoader(batch_sampler=...)``.
    ``set_epoch``, ``state_dict`` and ``load_state_dict`` are the loader's (pass the
    number of batches the training loop consumed to ``state_dict``: the DataLoader
    fetches ahead of it)."""

    def __init__(self, loader: Loader) -> None:
        self.loader = loader

    def __len__(self) -> int:
        return len(self.loader)

    def __iter__(self) -> Iterator[list[int]]:
        for positions in self.loader.batch_positions():
            yield positions.tolist()
        self.loader.set_epoch(self.loader.epoch + 1)


class IterableDataset(_LoaderState, torch.utils.data.IterableDataset):
    """A ``torch.utils.data.IterableDataset`` of a :class:`~tfsql.loader.Loader`'s
    batches, as tensors; in a DataLoader with ``num_workers=W`` worker ``w`` builds the
    rank's batches ``w, w + W, ...`` and the DataLoader yields them in order.

    ``len()`` is the number of batches per epoch on this rank. Call :meth:`set_epoch`
    before each epoch (the DataLoader's workers iterate copies of the loader, so it
    cannot move on by itself), and resume with ``load_state_dict`` of a
    ``state_dict(batches=steps_done)``.
    """

    def __init__(self, loader: Loader) -> None:
        self.loader = loader

    def __len__(self) -> int:
        return len(self.loader)

    def __iter__(self) -> Iterator[Any]:
        for batch in self.loader:
            yield to_torch(batch)


class BatchLoader(_LoaderState):
    """A ``torch.utils.data.DataLoader`` over a :class:`~tfsql.loader.Loader`'s batches
    (:func:`data_loader` makes one), yielding dicts of tensors.

    Its workers send small arrays to the main process as NumPy arrays (pickled by
    value: cheaper than PyTorch's shared-memory tensors for batches of many small
    arrays), arrays of at least ``_SHARED_BYTES`` as tensors in shared memory, and
    the main process wraps them with ``torch.from_numpy`` (no copy).

    Attributes
    ----------
    dataloader : torch.utils.data.DataLoader
    """

    def __init__(self, loader: Loader, **options: Any) -> None:
        self.loader = loader
        self.dataloader = torch.utils.data.DataLoader(
            _WorkerBatches(loader), batch_size=None, collate_fn=collate, **options
        )

    def __len__(self) -> int:
        return len(self.loader)

    def __iter__(self) -> Iterator[Any]:
        for batch in self.dataloader:
            yield to_torch(batch)


_SHARED_BYTES = 1 << 20


class _WorkerBatches(torch.utils.data.IterableDataset):
    """The loader's batches, large arrays as tensors (shared memory), the rest NumPy."""

    def __init__(self, loader: Loader) -> None:
        self.loader = loader

    def __iter__(self) -> Iterator[Any]:
        in_worker = torch.utils.data.get_worker_info() is not None
        for batch in self.loader:
            if in_worker and isinstance(batch, dict):
                batch = {k: to_torch(v) if _large(v) else v for k, v in batch.items()}
            yield batch


def _large(value: Any) -> bool:
    return isinstance(value, np.ndarray) and value.nbytes >= _SHARED_BYTES


def data_loader(loader: Loader, *, num_workers: int = 0, **options: Any) -> BatchLoader:
    """A :class:`BatchLoader`: the batches of ``loader`` from ``num_workers`` DataLoader
    worker processes, as tensors (``options``: other ``torch.utils.data.DataLoader``
    arguments, such as ``pin_memory`` or ``persistent_workers``). Call ``set_epoch``
    before each epoch; ``state_dict(batches=...)`` / ``load_state_dict`` resume.

    Examples
    --------
    >>> import tempfile, pyarrow as pa, tfsql
    >>> from tfsql.loader import RecordDataset
    >>> out = tempfile.mkdtemp()
    >>> _ = tfsql.write_tfrecord(pa.table({"s": ["a", "b", "c"], "x": [1, 2, 3]}), out)
    >>> [(b["s"], b["x"].tolist()) for b in data_loader(Loader(RecordDataset(out), batch_size=2), num_workers=1)]
    [(['a', 'b'], [1, 2]), (['c'], [3])]
    """
    return BatchLoader(loader, num_workers=num_workers, **options)
