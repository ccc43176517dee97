"""Train a PyTorch model from TFRecord files chosen by SQL, with exact sharding, a
global shuffle and a resumable epoch: no TensorFlow.

The data are the demo reviews (``tfsql demo``), written here uncompressed with index
sidecars (random access needs byte offsets: gzip files are read in order only). A SQL
``WHERE`` picks the training records once; the loader reads just those, by their
offsets, from the original files. A logistic regression (a ``torch.nn.Linear``) learns
from the 16-float review embeddings whether a review is positive (label >= 3).

- ``RecordDataset(path, columns=..., where="split = 'train'")``: record ids of the
  selection, ``emb`` as a (batch, 16) array, a ``transform`` run in the workers;
- ``Loader(..., shuffle="exact", seed=0)``: a new permutation each epoch from
  ``(seed, epoch)``; under ``torchrun`` it takes its rank's share from
  ``torch.distributed`` (every rank the same number of batches) and the model is
  wrapped in ``DistributedDataParallel``;
- ``data_loader(loader, num_workers=2)``: the batches as tensors, read by two threads
  of this process (``processes=True``: two DataLoader worker processes), planned and
  counted here;
- a checkpoint in the middle of an epoch saves ``data.state_dict()`` with the model; a
  new process (here: new objects) loads it, and ``set_epoch`` of its epoch resumes
  exactly where it stopped (on another number of ranks too).

Run it (``pip install tfsql[torch]``)::

    python examples/pytorch_training.py [OUT_DIR]
    torchrun --nproc_per_node=2 examples/pytorch_training.py OUT_DIR   # DDP on CPU (gloo)
"""

from __future__ import annotations

import os
import sys

import numpy as np
import torch
import torch.distributed as dist

import tfsql
from tfsql.demo import EMBEDDING_DIM, reviews_table, workdir
from tfsql.loader import Loader, RecordDataset
from tfsql.loader.torch import data_loader


def write_reviews(directory: str, rows: int) -> str:
    """The demo reviews as uncompressed TFRecord with index sidecars, one directory per split."""
    path = os.path.join(directory, "reviews")
    tfsql.write_tfrecord(
        reviews_table(rows=rows), path, partition_by="split", max_rows_per_file=2_000, index=True, mode="overwrite"
    )
    return path


def features_and_target(batch: dict) -> dict:
    """Runs in the DataLoader workers: the target "positive review" as 0/1 floats."""
    return {"x": batch["emb"], "y": (batch["label"] >= 3).astype(np.float32)}


def records(path: str, where: str) -> RecordDataset:
    return RecordDataset(
        path, columns=["emb", "label"], where=where, shapes={"emb": (EMBEDDING_DIM,)}, transform=features_and_target
    )


def accuracy(model: torch.nn.Module, path: str, split: str) -> float:
    loader = Loader(records(path, f"split = '{split}'"), batch_size=1024, rank=0, world_size=1)
    right = total = 0
    with torch.no_grad():
        for batch in data_loader(loader):
            right += int(((model(batch["x"]).squeeze(1) > 0) == (batch["y"] > 0.5)).sum())
            total += len(batch["y"])
    return right / total


def train(
    path: str, *, epochs: int, workers: int, stop_after: int | None = None, checkpoint: str | None = None
) -> dict:
    """Train (resuming from ``checkpoint`` when it exists); with ``stop_after``, save a
    checkpoint after that many steps of the first epoch and stop there."""
    torch.manual_seed(0)
    net = torch.nn.Linear(EMBEDDING_DIM, 1)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.5)
    loader = Loader(records(path, "split = 'train'"), batch_size=128, shuffle="exact", seed=0, drop_last=True)
    data = data_loader(loader, num_workers=workers)
    first_epoch, step = 0, 0
    if checkpoint is not None and os.path.exists(checkpoint):
        saved = torch.load(checkpoint)
        net.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        data.load_state_dict(saved["loader"])
        first_epoch = saved["loader"]["epoch"]
        print(f"resumed at epoch {first_epoch}, batch {saved['loader']['batches']} of {len(data)}")
    model: torch.nn.Module = torch.nn.parallel.DistributedDataParallel(net) if dist.is_initialized() else net
    loss_fn = torch.nn.BCEWithLogitsLoss()
    losses: list[float] = []
    for epoch in range(first_epoch, epochs):
        data.set_epoch(epoch)  # the loaded state's epoch keeps its position
        losses = []
        for batch in data:
            optimizer.zero_grad()
            loss = loss_fn(model(batch["x"]).squeeze(1), batch["y"])
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            step += 1
            if stop_after is not None and step == stop_after:
                assert checkpoint is not None
                state = {
                    "model": net.state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "loader": data.state_dict(),  # the batches delivered so far
                }
                torch.save(state, checkpoint)
                print(f"checkpoint at epoch {epoch}, batch {step}: stopping")
                return {"stopped_at": step}
        print(
            f"epoch {epoch}: {len(losses)} batches on rank {loader.rank} of {loader.world_size}, mean loss {np.mean(losses):.4f}"
        )
    return {"model": net, "final_loss": float(np.mean(losses)) if losses else float("nan")}


def main(out_dir: str | None = None, *, epochs: int = 3, workers: int = 2, rows: int = 6_000) -> dict:
    if "RANK" in os.environ and not dist.is_initialized():  # started by torchrun
        dist.init_process_group("gloo")
    with workdir(out_dir) as work:
        path = write_reviews(str(work), rows) if not dist.is_initialized() or dist.get_rank() == 0 else None
        if dist.is_initialized():
            dist.barrier()
            path = os.path.join(str(work), "reviews")
        assert path is not None
        n_train = len(records(path, "split = 'train'"))
        print(f"training on {n_train:,} records selected by SQL from {path}")
        checkpoint = os.path.join(str(work), f"checkpoint-{dist.get_rank() if dist.is_initialized() else 0}.pt")
        if os.path.exists(checkpoint):
            os.remove(checkpoint)  # from an earlier run
        train(path, epochs=epochs, workers=workers, stop_after=5, checkpoint=checkpoint)
        result = train(path, epochs=epochs, workers=workers, checkpoint=checkpoint)  # a restarted run
        test = accuracy(result["model"], path, "test")
        print(f"test accuracy {test:.3f}")
        if dist.is_initialized():
            dist.destroy_process_group()
        return {"test_accuracy": test, "final_loss": result["final_loss"], "train_records": n_train}


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
