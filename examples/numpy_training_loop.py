"""Feed TFRecord batches to a training loop as NumPy arrays: a logistic regression,
written in NumPy, that learns from review embeddings whether a review is positive.

``tfsql.dataset(...).to_batches(columns=..., filter=...)`` streams Arrow record batches
(decoding only the requested features, skipping partitions the filter rejects);
each batch becomes NumPy arrays without copying the values. The same loop works for
any framework that takes arrays (PyTorch: ``torch.from_numpy``; JAX: ``jnp.asarray``).

Run it::

    python examples/numpy_training_loop.py [OUT_DIR]

Without OUT_DIR the files go to a temporary directory that is removed at the end.
"""

from __future__ import annotations

import sys
from typing import Iterator

import numpy as np
import pyarrow.compute as pc

import tfsql
from tfsql.demo import EMBEDDING_DIM, workdir, write_demo_dataset


def batches_as_numpy(ds: tfsql.Dataset, split: str, *, batch_size: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(features, targets) per batch: ``emb`` as a (rows, 16) float32 matrix, and
    "positive review" (4 or 5 stars, label >= 3) as 0/1 floats."""
    for batch in ds.to_batches(columns=["emb", "label"], filter=pc.field("split") == split, batch_size=batch_size):
        emb = batch.column("emb")
        lengths = pc.list_value_length(emb)
        if pc.min(lengths).as_py() != EMBEDDING_DIM or pc.max(lengths).as_py() != EMBEDDING_DIM:
            raise ValueError(f"every emb must hold {EMBEDDING_DIM} values")
        x = emb.flatten().to_numpy(zero_copy_only=False).reshape(-1, EMBEDDING_DIM)
        y = (batch.column("label").to_numpy() >= 3).astype(np.float32)
        yield x, y


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def accuracy(ds: tfsql.Dataset, split: str, w: np.ndarray, b: float) -> float:
    right = total = 0
    for x, y in batches_as_numpy(ds, split, batch_size=4096):
        right += int(((sigmoid(x @ w + b) > 0.5) == (y > 0.5)).sum())
        total += len(y)
    return right / total


def main(out_dir: str | None = None, *, epochs: int = 5, learning_rate: float = 0.1) -> dict:
    with workdir(out_dir) as work:
        path = write_demo_dataset(work, rows=6_000).path
        ds = tfsql.dataset(path)
        rng = np.random.default_rng(0)
        w, b = rng.normal(0.0, 0.01, size=EMBEDDING_DIM).astype(np.float32), 0.0
        print(f"training on {path}: {ds.count_rows(filter=pc.field('split') == 'train'):,} train rows")
        for epoch in range(1, epochs + 1):
            losses = []
            for x, y in batches_as_numpy(ds, "train", batch_size=256):
                p = sigmoid(x @ w + b)
                losses.append(float(-np.mean(y * np.log(p + 1e-7) + (1 - y) * np.log(1 - p + 1e-7))))
                gradient = p - y
                w -= learning_rate * (x.T @ gradient) / len(y)
                b -= learning_rate * float(gradient.mean())
            print(
                f"epoch {epoch}: mean loss {np.mean(losses):.4f}, "
                f"validation accuracy {accuracy(ds, 'validation', w, b):.3f}"
            )
        test = accuracy(ds, "test", w, b)
        print(f"test accuracy {test:.3f}")
        return {"test_accuracy": test, "final_loss": float(np.mean(losses))}


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
