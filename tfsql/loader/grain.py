"""A Grain (JAX) random-access data source over TFRecord records.

Importing this module imports ``grain`` (install ``tfsql[grain]``); nothing else in
:mod:`tfsql.loader` does. :class:`GrainSource` is a ``grain.sources.RandomAccessDataSource``:
``len()`` and ``source[i]`` (a dict of NumPy values for one record), picklable for
Grain's worker processes. Grain does the shuffling, sharding and batching:

- ``grain.MapDataset.source(src).shuffle(seed=...).batch(32)``, or
- ``grain.DataLoader(data_source=src, sampler=grain.samplers.IndexSampler(len(src),
  shard_options=grain.sharding.ShardByJaxProcess(), shuffle=True, seed=0), ...)``.

Variable-length lists must be padded (``pad=`` of the record dataset) or given a
``shapes=`` entry for Grain's batching to stack them.

Examples
--------
>>> import tempfile, pyarrow as pa, tfsql, grain
>>> from tfsql.loader import RecordDataset
>>> out = tempfile.mkdtemp()
>>> _ = tfsql.write_tfrecord(pa.table({"x": [1, 2, 3, 4]}), out)
>>> source = GrainSource(RecordDataset(out))
>>> [b["x"].tolist() for b in grain.MapDataset.source(source).batch(3)]
[[1, 2, 3], [4]]
"""

from __future__ import annotations

from typing import Any, Sequence

import grain  # noqa: F401  (the framework this adapter is for: fail early without it)

from tfsql.loader.dataset import RecordDataset

__all__ = ["GrainSource"]


class GrainSource:
    """A Grain ``RandomAccessDataSource`` over a :class:`~tfsql.loader.RecordDataset`.

    Examples
    --------
    >>> import tempfile, pyarrow as pa, tfsql
    >>> from tfsql.loader import RecordDataset
    >>> out = tempfile.mkdtemp()
    >>> _ = tfsql.write_tfrecord(pa.table({"x": [7, 8]}), out)
    >>> source = GrainSource(RecordDataset(out))
    >>> len(source), source[1]
    (2, {'x': np.int64(8)})
    """

    def __init__(self, records: RecordDataset) -> None:
        records.require_random_access()
        self.records = records

    def __len__(self) -> int:
        return len(self.records)

    def __getitem__(self, record_key: int) -> Any:
        return self.records[int(record_key)]

    def __getitems__(self, record_keys: Sequence[int]) -> list[Any]:
        """Several records with one read plan and one decode (as a list of records)."""
        batch = self.records.numpy_batch([int(k) for k in record_keys])
        records = [
            {name: _row(batch, name, i) for name in batch if not _is_offsets(batch, name)}
            for i in range(len(record_keys))
        ]
        if self.records.transform is not None:
            records = [self.records.transform(r) for r in records]
        return records

    def __repr__(self) -> str:
        return f"GrainSource({self.records!r})"


def _is_offsets(batch: dict, name: str) -> bool:
    return name.endswith("_offsets") and name[: -len("_offsets")] in batch


def _row(batch: dict, name: str, i: int) -> Any:
    offsets = batch.get(f"{name}_offsets")
    if offsets is not None:
        return batch[name][offsets[i] : offsets[i + 1]]
    return batch[name][i]
