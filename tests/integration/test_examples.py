"""Every ``examples/*.py`` runs (``main(out_dir)``) and computes what it says."""

from __future__ import annotations

import collections
import os
import runpy
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

import tfsql
from tfsql.demo import reviews_table
from duckdb_copy_helpers import needs_v2_copy

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


def example(name: str):
    """The example's ``main`` function."""
    return runpy.run_path(str(EXAMPLES / f"{name}.py"), run_name=f"example_{name}")["main"]


def test_every_example_is_tested():
    assert sorted(p.stem for p in EXAMPLES.glob("*.py")) == [
        "coco_images",
        "duckdb_end_to_end",
        "jax_grain",
        "numpy_training_loop",
        "polars_end_to_end",
        "pytorch_training",
        "read_tensorflow_files",
    ]


def test_polars_end_to_end(tmp_path, capsys):
    result = example("polars_end_to_end")(str(tmp_path))
    assert result["written"] == 5000
    assert result["buyers"] == result["expected_buyers"] > 0
    sessions = runpy.run_path(str(EXAMPLES / "polars_end_to_end.py"))["make_sessions"](5000)
    weekend = sessions.filter(pl.col("day") >= 6)
    expected = weekend.group_by("country").agg(sessions=pl.len()).sort("country")
    assert result["by_country"]["sessions"].to_list() == expected["sessions"].to_list()
    assert result["by_country"]["items_viewed"].sum() == weekend["items"].list.len().sum()
    assert sorted(p.name for p in (tmp_path / "sessions").iterdir() if p.is_dir()) == [f"day={d}" for d in range(1, 8)]
    assert "weekend sessions per country:" in capsys.readouterr().out


@needs_v2_copy
def test_duckdb_end_to_end(tmp_path, capsys):
    result = example("duckdb_end_to_end")(str(tmp_path))
    rows = reviews_table(rows=3000).to_pylist()
    assert result["per_label"] == dict(collections.Counter(r["label"] for r in rows))
    positive_train = sum(1 for r in rows if r["split"] == "train" and r["label"] >= 3)
    assert result["copied"] == result["read_back"] == positive_train
    out = capsys.readouterr().out
    assert f"COPY wrote {positive_train:,} rows to {tmp_path / 'train_positive'}" in out


def test_coco_images(tmp_path, capsys):
    result = example("coco_images")(str(tmp_path))
    assert result["images"] == 60
    assert sum(result["objects"].values()) == result["expected_objects"] > 60
    assert set(result["objects"]) == {"cat", "dog", "bird"}
    names = sorted(p.name for p in (tmp_path / "coco").iterdir() if not p.name.startswith("_"))
    assert names == ["features.json"] + [f"train-0000{k}-of-00004.tfrecord" for k in range(4)]
    assert "round trip ok: 60 images, PNG bytes identical, boxes equal" in capsys.readouterr().out


def test_coco_png_encoder_writes_valid_pngs():
    module = runpy.run_path(str(EXAMPLES / "coco_images.py"))
    import numpy as np
    import zlib

    pixels = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)
    data = module["png_bytes"](pixels)
    assert module["png_size"](data) == (3, 2)
    idat_length = int.from_bytes(data[33:37], "big")
    assert data[37:41] == b"IDAT"
    assert zlib.decompress(data[41 : 41 + idat_length]) == b"\x00" + pixels[0].tobytes() + b"\x00" + pixels[1].tobytes()


@pytest.mark.skipif(not (REPO / "tests/data/tensorflow/tabular.tfrecord").exists(), reason="no golden files")
def test_read_tensorflow_files(capsys):
    result = example("read_tensorflow_files")()
    assert result["counts"] == {"tabular.tfrecord": 36, "tabular.tfrecord.gz": 36, "tabular.tfrecord.zz": 36}
    assert result["sequences"] == 24
    assert result["sql"] == (36, 12, 54)
    assert "equal TensorFlow's values" in capsys.readouterr().out


def test_read_tensorflow_files_without_golden_files(tmp_path, capsys):
    assert example("read_tensorflow_files")(data_dir=tmp_path) is None
    assert "no TensorFlow golden files" in capsys.readouterr().out


def test_numpy_training_loop(tmp_path, capsys):
    result = example("numpy_training_loop")(str(tmp_path), epochs=3)
    assert result["test_accuracy"] > 0.85  # the embeddings are clustered by label
    assert result["final_loss"] < 0.3
    out = capsys.readouterr().out
    assert out.count("validation accuracy") == 3


def test_an_example_runs_as_a_script(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / "numpy_training_loop.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "test accuracy" in done.stdout
    assert tfsql.dataset(str(tmp_path / "reviews")).count_rows() == 6000


def test_pytorch_training(tmp_path, capsys):
    """Runs where PyTorch is installed (``tfsql[torch]``): two DataLoader workers, a
    checkpoint after 5 batches and a resumed run that finishes the epoch."""
    pytest.importorskip("torch")
    result = example("pytorch_training")(str(tmp_path), epochs=2)
    assert result["test_accuracy"] > 0.85 and result["train_records"] == 4800
    out = capsys.readouterr().out
    assert "checkpoint at epoch 0, batch 5: stopping" in out and "resumed at epoch 0, batch 5 of 37" in out
    assert "epoch 0: 32 batches on rank 0 of 1" in out and "epoch 1: 37 batches on rank 0 of 1" in out


def test_jax_grain(tmp_path, capsys):
    """Runs where Grain and JAX are installed (``tfsql[grain]``, ``jax``)."""
    pytest.importorskip("grain")
    pytest.importorskip("jax")
    result = example("jax_grain")(str(tmp_path), epochs=2)
    assert result["test_accuracy"] > 0.85
    assert result["test_records"] == sum(1 for r in reviews_table(rows=6000).to_pylist() if r["split"] == "test")
    assert "through a grain.DataLoader with 2 workers" in capsys.readouterr().out
