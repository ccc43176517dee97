"""Generate the TFDS test dataset with tensorflow_datasets itself (run by hand).

    /path/to/venv-with-tensorflow-datasets/bin/python tests/data/tfds/make_tfds_data.py

Writes ``tests/data/tfds/tiny_shapes/1.0.0/``: a ``tiny_shapes`` builder with a train
split (2 shards) and a test split (1 shard): an encoded PNG image, a class label with
names, a float tensor of shape (2,), a scalar int and a text feature; and
``tiny_shapes.expected.json`` with the values each record holds (as tfsql reads them).
"""

from __future__ import annotations

import json
import os
import shutil

import numpy as np
import tensorflow_datasets as tfds

HERE = os.path.dirname(os.path.abspath(__file__))

ROWS = {
    "train": [
        {"id": i, "label": i % 3, "vec": [float(i), i + 0.5], "caption": f"train {i}"}
        for i in range(5)
    ],
    "test": [
        {"id": 100 + i, "label": (i + 1) % 3, "vec": [-float(i), 0.25], "caption": f"test {i}"}
        for i in range(3)
    ],
}


def _image(seed: int) -> np.ndarray:
    return (np.arange(4 * 4, dtype=np.uint8).reshape(4, 4, 1) * (seed + 1)) % 251


class TinyShapes(tfds.core.GeneratorBasedBuilder):
    VERSION = tfds.core.Version("1.0.0")

    def _info(self) -> tfds.core.DatasetInfo:
        return tfds.core.DatasetInfo(
            builder=self,
            description="tfsql test data",
            features=tfds.features.FeaturesDict({
                "image": tfds.features.Image(shape=(4, 4, 1)),
                "label": tfds.features.ClassLabel(names=["circle", "square", "triangle"]),
                "vec": tfds.features.Tensor(shape=(2,), dtype=np.float32),
                "id": tfds.features.Scalar(dtype=np.int64),
                "caption": tfds.features.Text(),
            }),
            supervised_keys=("image", "label"),
        )

    def _split_generators(self, dl_manager):
        return {name: self._generate_examples(name) for name in ROWS}

    def _generate_examples(self, split):
        for row in ROWS[split]:
            yield row["id"], {**row, "image": _image(row["id"])}


def main() -> None:
    target = os.path.join(HERE, "tiny_shapes")
    shutil.rmtree(target, ignore_errors=True)
    builder = TinyShapes(data_dir=HERE)
    builder.download_and_prepare(
        download_config=tfds.download.DownloadConfig(
            max_examples_per_split=None,
        ),
        file_format="tfrecord",
    )
    expected = {}
    for split in ROWS:
        rows = []
        for example in tfds.as_numpy(builder.as_dataset(split=split, decoders={"image": tfds.decode.SkipDecoding()})):
            rows.append({
                "id": int(example["id"]),
                "label": int(example["label"]),
                "vec": [float(v) for v in example["vec"]],
                "caption": example["caption"].decode(),
                "image_png_bytes": len(example["image"]),
            })
        expected[split] = sorted(rows, key=lambda r: r["id"])
    with open(os.path.join(HERE, "tiny_shapes.expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
