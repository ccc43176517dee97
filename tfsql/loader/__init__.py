"""Training from TFRecord files without TensorFlow: random access, selection, exact
sharding, global shuffling and resumable epochs, as NumPy batches.

- :class:`RecordDataset`: ``len()``, ``ds[i]`` and ``ds.__getitems__(positions)`` over
  files, directories, globs or fsspec URLs, with index sidecars or a header walk
  (:mod:`tfsql.loader.index`), the records a filter selects (pyarrow, Polars or SQL
  ``WHERE``, :mod:`tfsql.loader.selection`), read with few reads and one decode
  (:mod:`tfsql.loader.reading`) into NumPy (:mod:`tfsql.loader.batches`).
- :class:`Loader`: epochs of batches, sharded exactly over (rank, worker) with equal
  batch counts per rank, in order or shuffled from ``(seed, epoch)``
  (:mod:`tfsql.loader.order`), with ``state_dict()`` / ``load_state_dict()``: a state
  knows the records it resumes (:mod:`tfsql.loader.fingerprint`) and resumes on the
  same or another world size.
- Adapters: :mod:`tfsql.loader.torch` (PyTorch map-style and iterable datasets) and
  :mod:`tfsql.loader.grain` (a Grain ``RandomAccessDataSource``) import their
  framework when they are imported, never before.

Examples
--------
>>> import tempfile, pyarrow as pa, tfsql
>>> from tfsql.loader import Loader, RecordDataset
>>> out = tempfile.mkdtemp()
>>> _ = tfsql.write_tfrecord(pa.table({"label": [0, 1, 1, 0, 1], "x": [1.0, 2.0, 3.0, 4.0, 5.0]}), out)
>>> ds = RecordDataset(out, where="label = 1")
>>> [batch["x"].tolist() for batch in Loader(ds, batch_size=2)]
[[2.0, 3.0], [5.0]]
"""

from tfsql.loader.batches import to_numpy
from tfsql.loader.dataset import RecordDataset
from tfsql.loader.index import FileRecords, RecordIndex
from tfsql.loader.loader import Loader
from tfsql.loader.order import batches_per_rank, epoch_order, rank_sequence, undelivered, worker_batches
from tfsql.loader.reading import ChangedFileError, NotRandomAccessError, RecordReader
from tfsql.loader.selection import select_records

__all__ = [
    "RecordDataset",
    "Loader",
    "RecordIndex",
    "FileRecords",
    "RecordReader",
    "select_records",
    "to_numpy",
    "epoch_order",
    "rank_sequence",
    "batches_per_rank",
    "worker_batches",
    "undelivered",
    "NotRandomAccessError",
    "ChangedFileError",
]
