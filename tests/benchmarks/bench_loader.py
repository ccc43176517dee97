"""Benchmark of the training loader (issue 25): records/s delivered as batches.

Run from the repository root (see README.md), in an environment that may also have
``torch``, ``tfrecord`` (vahidk's) and ``tensorflow-cpu`` (their rows read ``n/a``
without them)::

    python tests/benchmarks/bench_loader.py [--data-dir ./bench-data] [--scale 0.1] [--repeat 2]

For the tabular, vectors and image sets of ``_datasets.py`` (with index sidecars:
``indexed_copy``), every column decoded, batches of ``--batch-size`` (256) records,
1 and 2 workers, each configuration in its own process (``_measure.py``):

- ``tfsql numpy``: ``Loader(RecordDataset(dir), threads=W)`` iterated to the end,
  batches of NumPy arrays; ``sequential`` (``shuffle=None``), ``block``
  (``shuffle="block"``: runs of 256 records, windows of 16 runs) and ``exact``
  (``shuffle="exact"``, a full permutation: every batch is 256 random reads);
- ``tfsql torch``: the same through ``tfsql.loader.torch.data_loader(loader,
  num_workers=W)`` into tensors: what a PyTorch user runs by default (W threads in the
  training process, issue 32); ``tfsql torch processes``: ``data_loader(loader,
  num_workers=W, processes=True)`` (W DataLoader worker processes that receive each
  group of batches to read from the main process and send the batches back);
- ``vahidk tfrecord``: ``torch.utils.data.ChainDataset`` of one
  ``tfrecord.torch.dataset.TFRecordDataset(file, index_path, description)`` per file
  (given its index, each one shards over the DataLoader's workers), ``DataLoader(...,
  batch_size=256, num_workers=W)`` with a collate that stacks into NumPy arrays
  (bytes stay lists); in file order;
- ``tf.data``: ``TFRecordDataset(files, num_parallel_reads=W).batch(256)
  .map(parse_example, num_parallel_calls=W).as_numpy_iterator()`` (batching before
  parsing is TensorFlow's faster order); in file order.

``x tfrecord`` and ``x tf.data`` divide records/s by the same number of workers'
sequential rate of each. ``peak MB`` is the measuring process's own RSS high-water
mark over its RSS before the run (worker processes of a DataLoader are not included:
their rows say ``+W procs``). ``index MB`` is the loader's record index (16 bytes a
record) and ``batch MB`` one decoded batch: an exact shuffle holds the index, its
permutation (8 bytes a record) and a few batches, never a shuffle buffer.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import _datasets  # noqa: E402
from _measure import fmt_float, fmt_rate, fmt_ratio, format_table, measure, run_worker, worker_main  # noqa: E402

MODES = {"sequential": None, "block": "block", "exact": "exact"}


def _tfsql(config: dict) -> dict:
    from tfsql.loader import Loader, RecordDataset

    records = RecordDataset(config["path"])
    batch_size = config["batch_size"]
    shuffle = MODES[config["mode"]]
    workers = config["workers"]
    index_mb = records.index.nbytes / 2**20
    if config["torch"]:
        from tfsql.loader.torch import data_loader

        def run() -> dict:
            loader = Loader(records, batch_size=batch_size, shuffle=shuffle, seed=0, threads=1)
            data = data_loader(loader, num_workers=workers, processes=config["torch"] == "processes")
            return {"records": sum(len(next(iter(b.values()))) for b in data)}
    else:

        def run() -> dict:
            loader = Loader(records, batch_size=batch_size, shuffle=shuffle, seed=0, threads=workers)
            return {"records": sum(len(next(iter(b.values()))) for b in loader)}

    first = records.read_arrow(range(min(batch_size, len(records))))
    return {**measure(run, repeat=config["repeat"]), "index_mb": index_mb, "batch_mb": first.nbytes / 2**20}


def _collate(samples: list) -> dict:
    import numpy as np

    out = {}
    for key in samples[0]:
        values = [s[key] for s in samples]
        fixed = all(isinstance(v, np.ndarray) and v.dtype != np.uint8 for v in values)
        out[key] = np.stack(values) if fixed and len({v.shape for v in values}) == 1 else values
    return out


def _vahidk(config: dict) -> dict:
    import torch
    from tfrecord.torch.dataset import TFRecordDataset

    spec = _datasets.SPECS[config["name"]]
    kinds = {"int64": "int", "float32": "float", "string": "byte"}
    description = {name: kinds[dtype] for name, (dtype, _) in spec.tf_features.items()}
    files = sorted(str(p) for p in Path(config["path"]).glob("*.tfrecord*") if not p.name.startswith("."))
    parts = [
        TFRecordDataset(f, os.path.join(os.path.dirname(f), f".{os.path.basename(f)}.idx"), description) for f in files
    ]

    def run() -> dict:
        data = torch.utils.data.DataLoader(
            torch.utils.data.ChainDataset(parts),
            batch_size=config["batch_size"],
            num_workers=config["workers"],
            collate_fn=_collate,
        )
        return {"records": sum(len(next(iter(b.values()))) for b in data)}

    return measure(run, repeat=config["repeat"])


def _tf(config: dict) -> dict:
    import tensorflow as tf

    spec = _datasets.SPECS[config["name"]]
    features = {
        name: tf.io.FixedLenFeature(shape, getattr(tf, dtype)) for name, (dtype, shape) in spec.tf_features.items()
    }
    files = sorted(str(p) for p in Path(config["path"]).glob("*.tfrecord*") if not p.name.startswith("."))
    workers = config["workers"]

    def run() -> dict:
        ds = tf.data.TFRecordDataset(files, num_parallel_reads=workers if workers > 1 else None)
        ds = ds.batch(config["batch_size"]).map(lambda b: tf.io.parse_example(b, features), num_parallel_calls=workers)
        return {"records": sum(len(next(iter(b.values()))) for b in ds.as_numpy_iterator())}

    return measure(run, repeat=config["repeat"])


HANDLERS = {"tfsql": _tfsql, "vahidk": _vahidk, "tf": _tf}


_BASELINE_LABELS = {"tfrecord": "vahidk tfrecord", "tf.data": "tf.data"}


def _row(label: str, workers: int, rate: float, result: dict, baselines: dict) -> list[str]:
    ratios = []
    for key in ("tfrecord", "tf.data"):
        base = baselines.get(key)
        ratios.append("n/a" if base is None else fmt_ratio(rate / (base["records"] / base["seconds"])))
    procs = f" +{workers} procs" if "processes" in label or "vahidk" in label else ""
    return [
        label,
        str(workers),
        fmt_rate(rate),
        *ratios,
        fmt_float(result["peak_mb"], 1) + procs,
        fmt_float(result["index_mb"], 2) if "index_mb" in result else "",
        fmt_float(result["batch_mb"], 2) if "batch_mb" in result else "",
    ]


def _available(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    _datasets.add_common_arguments(parser)
    parser.set_defaults(scale=0.1)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--datasets", default="tabular,vectors,images")
    parser.add_argument("--workers", default="1,2")
    args = parser.parse_args()
    have_torch, have_vahidk, have_tf = _available("torch"), _available("tfrecord"), _available("tensorflow")
    print(f"# load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    for name in args.datasets.split(","):
        data = _datasets.indexed_copy(_datasets.ensure_dataset(name, args.data_dir, args.scale))
        common = {"path": str(data.path), "name": name, "batch_size": args.batch_size, "repeat": args.repeat}
        rows = []
        summary = {}
        for workers in [int(w) for w in args.workers.split(",")]:
            base = {**common, "workers": workers}
            baselines = {}
            if have_vahidk and have_torch:
                baselines["tfrecord"] = run_worker(__file__, {**base, "kind": "vahidk"})
            if have_tf:
                baselines["tf.data"] = run_worker(__file__, {**base, "kind": "tf"})
            results = []
            kinds = [(False, "numpy", MODES)]
            if have_torch:
                kinds += [("threads", "torch", MODES), ("processes", "torch processes", ["sequential", "exact"])]
            for use_torch, label, modes in kinds:
                for mode in modes:
                    result = run_worker(__file__, {**base, "kind": "tfsql", "mode": mode, "torch": use_torch})
                    results.append((f"tfsql {label} {mode}", result))
            labelled = [(_BASELINE_LABELS[key], r) for key, r in baselines.items()] + results
            for label, result in labelled:
                rate = result["records"] / result["seconds"]
                summary[(label, workers)] = rate
                rows.append(_row(label, workers, rate, result, baselines))
        print(f"## {name}: {data.rows:,} records, {data.bytes / 1e6:,.1f} MB, {_datasets.SPECS[name].description}")
        print(
            format_table(
                ["loader", "workers", "records/s", "x tfrecord", "x tf.data", "peak MB", "index MB", "batch MB"], rows
            )
        )
        for workers in [int(w) for w in args.workers.split(",")]:
            seq = summary.get(("tfsql numpy sequential", workers))
            exact = summary.get(("tfsql numpy exact", workers))
            if seq and exact:
                print(f"exact shuffle / sequential, {workers} worker(s): {fmt_ratio(exact / seq)}")
        print(flush=True)


if __name__ == "__main__":
    if not worker_main(sys.argv, HANDLERS):
        start = time.perf_counter()
        main()
        print(f"# load average at end: {os.getloadavg()[0]:.1f}; total {time.perf_counter() - start:.0f} s")
