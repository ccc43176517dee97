"""Dataset layouts with splits: TensorFlow Datasets (TFDS) and TFX directories.

`tfsql.dataset` (and so every front end and the CLI) recognises two layouts among the
files a source lists and adds a string partition column ``split``, which prunes like a
hive partition column (a filter on ``split`` opens only that split's files):

- **TFDS** — a dataset version directory such as ``~/tensorflow_datasets/mnist/3.0.1``
  holds shards named ``{name}-{split}.tfrecord-{i:05d}-of-{n:05d}`` next to
  ``dataset_info.json``, ``features.json`` and ``{feature}.labels.txt``. When every
  file's name has that form, the split comes from the name. The metadata files are
  skipped: in a directory (listed below a source directory or glob) that holds a
  ``dataset_info.json``, files ending in ``.json`` or ``.txt`` are not data. The
  schema is then taken from ``features.json`` where it describes a feature
  (`tfsql.tfds`).
- **TFX** — ExampleGen output directories ``Split-{split}/data_tfrecord-*.gz``: when
  every file sits below a ``Split-{split}`` directory, the split is that directory's.

The ``split`` column appears only when the source names the layout's root (or a glob
below it): the TFX ``Split-{split}`` directory must lie below the root the source named,
and a file named directly reads as its own records (it round-trips without a new
feature), as a hive file named directly does. No ``split`` column is added when the
files mix layouts, when hive directories already give a ``split`` column, or when the
records hold a feature named ``split``. These rules are the C core's
(``tfsql_plan``), shared with the DuckDB extension.

Examples
--------
>>> import fsspec
>>> from tfsql.discovery import discover
>>> mem = fsspec.filesystem("memory")
>>> for split in ("train", "eval"):
...     mem.pipe(f"/tfx/Split-{split}/data_tfrecord-00000-of-00001.gz", b"")
>>> layout_of(discover("memory://tfx"))
Layout(kind='tfx', splits=['eval', 'train'], directory=None)
>>> mem.rm("/tfx", recursive=True)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from tfsql._codec import codec
from tfsql.discovery import Discovered
from tfsql.partitioning import Partitioning

__all__ = ["SPLIT_COLUMN", "Layout", "layout_of"]

SPLIT_COLUMN = codec.SPLIT_COLUMN
TFDS_METADATA = "dataset_info.json"


@dataclass(frozen=True)
class Layout:
    """The layout of a dataset's files (`layout_of`).

    Attributes
    ----------
    kind : {"tfds", "tfx"}
    splits : list of str
        The split of each file, in the files' order.
    directory : str or None
        For TFDS, the directory of the shards when they share one (where
        ``features.json`` lives); None otherwise.
    """

    kind: str
    splits: list[str]
    directory: str | None = None

    @property
    def code(self) -> int:
        """The core's code of the layout (``codec.LAYOUT_TFDS`` or ``LAYOUT_TFX``)."""
        return codec.LAYOUT_TFDS if self.kind == "tfds" else codec.LAYOUT_TFX

    def without_split(self, hive_schema: Any) -> Any:
        """`hive_schema` without an entry for the layout's own column (``split``, which
        the layout gives, always as a string: ``codec.layout_owns_column``), None when
        nothing is left."""
        if hive_schema is None:
            return None
        if isinstance(hive_schema, pa.Schema):
            fields = [f for f in hive_schema if not codec.layout_owns_column(self.code, f.name)]
            return pa.schema(fields) if fields else None
        if isinstance(hive_schema, Mapping):
            kept = {k: v for k, v in hive_schema.items() if not codec.layout_owns_column(self.code, k)}
            return kept or None
        return hive_schema

    def add_split_column(self, partitioning: Partitioning | None, data_schema: pa.Schema) -> Partitioning | None:
        """`partitioning` with the ``split`` column appended (unchanged when hive
        directories or the records already have a column of that name: the core's
        ``codec.layout_adds_split``)."""
        hive = partitioning.schema.names if partitioning is not None else []
        if not codec.layout_adds_split(self.code, data_schema.names + hive):
            return partitioning
        column = pa.array(self.splits, pa.string())
        field = pa.field(SPLIT_COLUMN, pa.string())
        if partitioning is None:
            schema = pa.schema([field])
            return Partitioning(schema=schema, values=pa.Table.from_arrays([column], schema=schema))
        return Partitioning(
            schema=partitioning.schema.append(field), values=partitioning.values.append_column(field, column)
        )


def layout_of(found: Discovered) -> Layout | None:
    """The layout the core's plan found among `found`'s files (its metadata files are
    already left out), or None.

    Examples
    --------
    >>> import fsspec
    >>> mem = fsspec.filesystem("memory")
    >>> for name in ("mnist-train.tfrecord-00000-of-00001", "mnist-test.tfrecord-00000-of-00001", "dataset_info.json"):
    ...     mem.pipe(f"/tfds/3.0.1/{name}", b"")
    >>> from tfsql.discovery import discover
    >>> layout_of(discover("memory://tfds/3.0.1"))
    Layout(kind='tfds', splits=['test', 'train'], directory='/tfds/3.0.1')
    >>> mem.rm("/tfds", recursive=True)
    """
    if found.layout == codec.LAYOUT_NONE or found.splits is None:
        return None
    kind = "tfds" if found.layout == codec.LAYOUT_TFDS else "tfx"
    return Layout(kind, list(found.splits), found.tfds_dir)
