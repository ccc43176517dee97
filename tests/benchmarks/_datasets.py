"""Benchmark datasets: generators of Arrow batches and cached TFRecord directories.

Three datasets, 8 files each (issue 2):

- ``tabular``: 1,000,000 Examples of 4 int64, 4 float and 2 short string scalars;
- ``vectors``: 200,000 Examples of an int64 ``label``, a 128-float ``embedding`` and 20
  int64 ``ids``;
- ``images``: 20,000 Examples of one 20-60 KB random ``image`` plus 3 int64 scalars.

Batches come from numpy (seeded, so every run writes the same bytes) and are written
with ``tfsql.write_tfrecord``. A generated directory is cached under ``--data-dir``
(default ``./bench-data``) with a ``_bench.json`` stamp; later runs reuse it. ``--scale``
multiplies the row counts for quick runs (each scale has its own directory).

Derived layouts reuse the generated files through hard links (no extra disk): the first
``k`` records of a file (a subset for the slow pure-Python reference), ``n`` files cycling
over a dataset's files, and a hive-partitioned ``bucket=<i>/`` tree of the tabular files.

Examples
--------
>>> import numpy as np
>>> batch = SPECS["vectors"].make_batch(np.random.default_rng(0), 3)
>>> batch.num_rows, batch.schema.names
(3, ['label', 'embedding', 'ids'])
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
import pyarrow as pa

__all__ = [
    "DatasetSpec",
    "GeneratedDataset",
    "SPECS",
    "generate_batches",
    "ensure_dataset",
    "subset_dataset",
    "linked_files",
    "hive_layout",
    "concatenated_file",
    "indexed_copy",
    "add_common_arguments",
]

GENERATOR_VERSION = 1  # bump when a generator changes: cached directories are rebuilt
STAMP = "_bench.json"  # tfsql skips files starting with "_"

_VOCABULARY = pa.array([f"{w}{i}" for i in range(500) for w in ("cat", "dog", "tree", "sky")])


def _tabular_batch(rng: np.random.Generator, n: int) -> pa.RecordBatch:
    columns: dict[str, pa.Array] = {}
    for k in range(4):
        columns[f"int{k}"] = pa.array(rng.integers(-(1 << 40), 1 << 40, n, dtype=np.int64))
    for k in range(4):
        columns[f"float{k}"] = pa.array(rng.standard_normal(n, dtype=np.float32))
    for k in range(2):
        columns[f"str{k}"] = _VOCABULARY.take(pa.array(rng.integers(0, len(_VOCABULARY), n)))
    return pa.RecordBatch.from_pydict(columns)


def _vectors_batch(rng: np.random.Generator, n: int) -> pa.RecordBatch:
    embedding = rng.standard_normal(n * 128, dtype=np.float32)
    ids = rng.integers(0, 1 << 20, n * 20, dtype=np.int64)
    return pa.RecordBatch.from_pydict(
        {
            "label": pa.array(rng.integers(0, 1000, n, dtype=np.int64)),
            "embedding": pa.FixedSizeListArray.from_arrays(pa.array(embedding), 128).cast(pa.list_(pa.float32())),
            "ids": pa.FixedSizeListArray.from_arrays(pa.array(ids), 20).cast(pa.list_(pa.int64())),
        }
    )


def _images_batch(rng: np.random.Generator, n: int) -> pa.RecordBatch:
    sizes = rng.integers(20_000, 60_001, n, dtype=np.int64)
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(sizes, out=offsets[1:])
    data = rng.bytes(int(offsets[-1]))
    image = pa.Array.from_buffers(pa.binary(), n, [None, pa.py_buffer(offsets), pa.py_buffer(data)])
    return pa.RecordBatch.from_pydict(
        {
            "image": image,
            "height": pa.array(rng.integers(100, 1000, n, dtype=np.int64)),
            "width": pa.array(rng.integers(100, 1000, n, dtype=np.int64)),
            "label": pa.array(rng.integers(0, 1000, n, dtype=np.int64)),
        }
    )


@dataclass(frozen=True)
class DatasetSpec:
    """One benchmark dataset.

    Attributes
    ----------
    name : str
    rows : int
        Examples at scale 1.
    files : int
        Files the rows are spread over.
    batch_rows : int
        Rows per generated batch.
    make_batch : callable
        ``make_batch(rng, n) -> pa.RecordBatch``.
    tf_features : dict
        ``{feature: (tf dtype name, fixed shape)}`` for ``tf.io.FixedLenFeature``.
    description : str
    """

    name: str
    rows: int
    files: int
    batch_rows: int
    make_batch: Callable[[np.random.Generator, int], pa.RecordBatch]
    tf_features: dict[str, tuple[str, tuple[int, ...]]]
    description: str

    def scaled_rows(self, scale: float) -> int:
        """Rows at ``scale`` (at least one per file)."""
        return max(self.files, int(round(self.rows * scale)))


SPECS: dict[str, DatasetSpec] = {
    "tabular": DatasetSpec(
        "tabular",
        1_000_000,
        8,
        65_536,
        _tabular_batch,
        {
            **{f"int{k}": ("int64", ()) for k in range(4)},
            **{f"float{k}": ("float32", ()) for k in range(4)},
            **{f"str{k}": ("string", ()) for k in range(2)},
        },
        "4 int64, 4 float, 2 short string scalars",
    ),
    "vectors": DatasetSpec(
        "vectors",
        200_000,
        8,
        16_384,
        _vectors_batch,
        {"label": ("int64", ()), "embedding": ("float32", (128,)), "ids": ("int64", (20,))},
        "int64 label, 128-float embedding, 20 int64 ids",
    ),
    "images": DatasetSpec(
        "images",
        20_000,
        8,
        500,
        _images_batch,
        {"image": ("string", ()), "height": ("int64", ()), "width": ("int64", ()), "label": ("int64", ())},
        "20-60 KB random bytes + 3 int64 scalars",
    ),
}


def generate_batches(spec: DatasetSpec, rows: int, *, seed: int = 0) -> Iterator[pa.RecordBatch]:
    """Yield ``rows`` rows of ``spec`` in batches of ``spec.batch_rows``, generated on
    the fly (memory holds one batch)."""
    rng = np.random.default_rng(seed)
    done = 0
    while done < rows:
        n = min(spec.batch_rows, rows - done)
        yield spec.make_batch(rng, n)
        done += n


@dataclass(frozen=True)
class GeneratedDataset:
    """A directory of TFRecord files on disk."""

    name: str
    path: Path
    files: list[str]
    rows: int

    @property
    def bytes(self) -> int:
        """Total size of the files (TFRecord framing included)."""
        return sum(os.path.getsize(f) for f in self.files)


def _tfrecord_files(path: Path) -> list[str]:
    """The data files below ``path`` (not hidden sidecars such as ``tfsql index``'s)."""
    return sorted(str(p) for p in path.rglob("*.tfrecord*") if not p.name.startswith("."))


def _load_stamp(path: Path) -> dict | None:
    try:
        return json.loads((path / STAMP).read_text())
    except (OSError, ValueError):
        return None


def _write_stamp(path: Path, **info) -> None:
    (path / STAMP).write_text(json.dumps({"version": GENERATOR_VERSION, **info}))


def ensure_dataset(
    name: str, data_dir: str | os.PathLike, scale: float = 1.0, *, verbose: bool = True
) -> GeneratedDataset:
    """The generated dataset ``name`` at ``scale`` under ``data_dir``, writing it first
    unless a complete copy is cached there."""
    import tfsql

    spec = SPECS[name]
    rows = spec.scaled_rows(scale)
    path = Path(data_dir) / (name if scale == 1 else f"{name}-scale{scale:g}")
    stamp = _load_stamp(path)
    if stamp == {"version": GENERATOR_VERSION, "rows": rows, "files": spec.files}:
        return GeneratedDataset(name, path, _tfrecord_files(path), rows)
    if path.exists():
        shutil.rmtree(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    tfsql.write_tfrecord(
        generate_batches(spec, rows),
        path,
        max_rows_per_file=math.ceil(rows / spec.files),
    )
    _write_stamp(path, rows=rows, files=spec.files)
    found = GeneratedDataset(name, path, _tfrecord_files(path), rows)
    if verbose:
        print(
            f"# generated {name}: {rows:,} rows, {len(found.files)} files, "
            f"{found.bytes / 1e6:,.1f} MB in {time.perf_counter() - start:.1f} s -> {path}",
            flush=True,
        )
    return found


def _link(src: str, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:  # another filesystem or no hard links: a symlink reads the same
        os.symlink(os.path.abspath(src), dst)


def _fresh_dir(path: Path, stamp: dict) -> bool:
    """True when ``path`` holds a layout made for ``stamp``; else empties it."""
    if _load_stamp(path) == {"version": GENERATOR_VERSION, **stamp}:
        return True
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    return False


def subset_dataset(dataset: GeneratedDataset, records: int) -> GeneratedDataset:
    """One file holding the first ``records`` records of ``dataset``'s first file (a
    byte prefix, so the records are identical)."""
    from tfsql._codec import codec

    path = dataset.path.parent / f"{dataset.path.name}-first{records}"
    first = dataset.files[0]
    data = Path(first).read_bytes()
    offsets, lengths, _end, _status = codec.scan_frames(data, 0, records)
    count = len(offsets) // 8
    if not _fresh_dir(path, {"source": first, "records": count}):
        end = int(np.frombuffer(offsets, np.uint64)[-1] + np.frombuffer(lengths, np.uint64)[-1]) + 4
        (path / "part-00000.tfrecord").write_bytes(data[:end])
        _write_stamp(path, source=first, records=count)
    return GeneratedDataset(dataset.name, path, _tfrecord_files(path), count)


def linked_files(dataset: GeneratedDataset, n_files: int) -> GeneratedDataset:
    """A directory of ``n_files`` files cycling over ``dataset``'s files (hard links),
    so every file has the size of a generated one."""
    path = dataset.path.parent / f"{dataset.path.name}-{n_files}files"
    rows_per_file = dataset.rows // len(dataset.files)
    if not _fresh_dir(path, {"source": str(dataset.path), "files": n_files}):
        for i in range(n_files):
            _link(dataset.files[i % len(dataset.files)], path / f"part-{i:05d}.tfrecord")
        _write_stamp(path, source=str(dataset.path), files=n_files)
    return GeneratedDataset(dataset.name, path, _tfrecord_files(path), rows_per_file * n_files)


def concatenated_file(dataset: GeneratedDataset, n_files: int) -> GeneratedDataset:
    """One file holding ``n_files`` of ``dataset``'s files (cycling) back to back: a
    large single file (TFRecord files concatenate into a valid file). A real copy."""
    path = dataset.path.parent / f"{dataset.path.name}-one{n_files}"
    rows_per_file = dataset.rows // len(dataset.files)
    if not _fresh_dir(path, {"source": str(dataset.path), "concatenated": n_files}):
        with open(path / "part-00000.tfrecord", "wb") as out:
            for i in range(n_files):
                with open(dataset.files[i % len(dataset.files)], "rb") as f:
                    shutil.copyfileobj(f, out, 16 << 20)
        _write_stamp(path, source=str(dataset.path), concatenated=n_files)
    return GeneratedDataset(dataset.name, path, _tfrecord_files(path), rows_per_file * n_files)


def indexed_copy(dataset: GeneratedDataset) -> GeneratedDataset:
    """Hard links to ``dataset``'s files, each with its ``tfsql index`` sidecar."""
    from tfsql.record_index import write_index

    path = dataset.path.parent / f"{dataset.path.name}-indexed"
    if not _fresh_dir(path, {"source": str(dataset.path), "indexed": True}):
        for file in dataset.files:
            _link(file, path / Path(file).name)
            write_index(str(path / Path(file).name))
        _write_stamp(path, source=str(dataset.path), indexed=True)
    return GeneratedDataset(dataset.name, path, _tfrecord_files(path), dataset.rows)


def hive_layout(dataset: GeneratedDataset, key: str = "bucket") -> GeneratedDataset:
    """``<key>=<i>/part-00000.tfrecord`` holding file ``i`` of ``dataset`` (hard links)."""
    path = dataset.path.parent / f"{dataset.path.name}-hive"
    if not _fresh_dir(path, {"source": str(dataset.path), "key": key}):
        for i, file in enumerate(dataset.files):
            (path / f"{key}={i}").mkdir()
            _link(file, path / f"{key}={i}" / "part-00000.tfrecord")
        _write_stamp(path, source=str(dataset.path), key=key)
    return GeneratedDataset(dataset.name, path, _tfrecord_files(path), dataset.rows)


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    """``--data-dir`` and ``--scale``, shared by every benchmark script."""
    parser.add_argument(
        "--data-dir",
        default="./bench-data",
        help="where generated datasets are cached (default ./bench-data, git-ignored at the repo root)",
    )
    parser.add_argument(
        "--scale",
        type=float,
        default=1.0,
        help="multiply every dataset's row count (e.g. 0.05 for a quick run); default 1",
    )
