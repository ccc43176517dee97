"""Train a JAX model on TFRecord records through Grain: a random-access source, Grain's
shuffle, sharding and batching, with no TensorFlow.

The demo reviews (``tfsql demo``) are written uncompressed (random access needs byte
offsets); a SQL ``WHERE`` selects the training records; :class:`tfsql.loader.grain.GrainSource`
serves them by index (``len()``, ``source[i]``) to

- ``grain.MapDataset.source(source).shuffle(seed=epoch).batch(128)`` for training a
  logistic regression written in ``jax.numpy`` (its gradient by ``jax.grad``), and
- ``grain.DataLoader(data_source=source, sampler=IndexSampler(...,
  shard_options=ShardByJaxProcess()), worker_count=2)`` for the test set, read by two
  worker processes (each JAX process of a multi-host job reads its own shard).

Run it (``pip install tfsql[grain] jax``)::

    python examples/jax_grain.py [OUT_DIR]
"""

from __future__ import annotations

import os
import sys

import grain
import jax
import jax.numpy as jnp
import numpy as np
from absl import flags

import tfsql
from tfsql.demo import EMBEDDING_DIM, reviews_table, workdir
from tfsql.loader import RecordDataset
from tfsql.loader.grain import GrainSource


def write_reviews(directory: str, rows: int) -> str:
    """The demo reviews as uncompressed TFRecord, one directory per split."""
    path = os.path.join(directory, "reviews")
    tfsql.write_tfrecord(
        reviews_table(rows=rows), path, partition_by="split", max_rows_per_file=2_000, mode="overwrite"
    )
    return path


def source(path: str, split: str) -> GrainSource:
    records = RecordDataset(
        path, columns=["emb", "label"], where=f"split = '{split}'", shapes={"emb": (EMBEDDING_DIM,)}
    )
    return GrainSource(records)


def loss(params: dict, x: jnp.ndarray, y: jnp.ndarray) -> jnp.ndarray:
    logits = x @ params["w"] + params["b"]
    return jnp.mean(jnp.logaddexp(0.0, logits) - y * logits)  # binary cross-entropy on logits


@jax.jit
def step(params: dict, x: jnp.ndarray, y: jnp.ndarray, learning_rate: float = 0.5) -> tuple[dict, jnp.ndarray]:
    value, grads = jax.value_and_grad(loss)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - learning_rate * g, params, grads), value


def main(out_dir: str | None = None, *, epochs: int = 3, workers: int = 2, rows: int = 6_000) -> dict:
    if not flags.FLAGS.is_parsed():  # Grain's worker processes read absl flags (absl.app parses them)
        flags.FLAGS.mark_as_parsed()
    with workdir(out_dir) as work:
        path = write_reviews(str(work), rows)
        train = source(path, "train")
        print(f"training on {len(train):,} records selected by SQL from {path}")
        params = {"w": jnp.zeros(EMBEDDING_DIM), "b": jnp.zeros(())}
        losses: list[float] = []
        for epoch in range(epochs):
            losses = []
            for batch in grain.MapDataset.source(train).shuffle(seed=epoch).batch(128, drop_remainder=True):
                y = (batch["label"] >= 3).astype(np.float32)
                params, value = step(params, jnp.asarray(batch["emb"]), jnp.asarray(y))
                losses.append(float(value))
            print(f"epoch {epoch}: {len(losses)} batches, mean loss {np.mean(losses):.4f}")
        test = source(path, "test")
        sampler = grain.samplers.IndexSampler(
            num_records=len(test),
            shard_options=grain.sharding.ShardByJaxProcess(drop_remainder=False),
            shuffle=False,
            num_epochs=1,
            seed=0,
        )
        loader = grain.DataLoader(
            data_source=test, sampler=sampler, operations=[grain.transforms.Batch(batch_size=256)], worker_count=workers
        )
        right = total = 0
        for batch in loader:
            predicted = (batch["emb"] @ np.asarray(params["w"]) + float(params["b"])) > 0
            right += int((predicted == (batch["label"] >= 3)).sum())
            total += len(batch["label"])
        print(
            f"test accuracy {right / total:.3f} ({total:,} records through a grain.DataLoader with {workers} workers)"
        )
        return {"test_accuracy": right / total, "final_loss": float(np.mean(losses)), "test_records": total}


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
