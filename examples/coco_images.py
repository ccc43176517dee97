"""A COCO-style object detection dataset as TFRecord: PNG images as bytes, boxes as
float lists, labels as int lists, in the feature names of the TensorFlow Object
Detection API (``image/encoded``, ``image/object/bbox/xmin``...). Written in shards,
read back, checked, and queried with SQL.

The images are real PNG files (made with zlib and struct: coloured rectangles on a
noisy background), so any image library can decode what this writes.

Run it::

    python examples/coco_images.py [OUT_DIR]

Without OUT_DIR the files go to a temporary directory that is removed at the end.
"""

from __future__ import annotations

import struct
import sys
import zlib
from pathlib import Path

import numpy as np
import pyarrow as pa

import tfsql
import tfsql.duckdb
from tfsql.demo import workdir

CLASSES = ["cat", "dog", "bird"]
COLOURS = np.array([[230, 60, 40], [40, 120, 230], [250, 210, 40]], dtype=np.uint8)
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_bytes(pixels: np.ndarray) -> bytes:
    """Encode an ``(height, width, 3)`` uint8 array as a PNG file (RGB, 8 bits)."""
    height, width, _ = pixels.shape
    scanlines = b"".join(b"\x00" + pixels[y].tobytes() for y in range(height))  # filter 0 per row

    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return PNG_SIGNATURE + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(scanlines)) + chunk(b"IEND", b"")


def png_size(data: bytes) -> tuple[int, int]:
    """(width, height) from a PNG's IHDR chunk."""
    if not data.startswith(PNG_SIGNATURE):
        raise ValueError("not a PNG file")
    return struct.unpack(">II", data[16:24])


def make_dataset(n_images: int, *, seed: int = 0) -> pa.Table:
    """Images with 0-4 objects each; boxes normalised to [0, 1] like the OD API's."""
    rng = np.random.default_rng(seed)
    rows: dict[str, list] = {
        name: []
        for name in (
            "image/id",
            "image/filename",
            "image/format",
            "image/width",
            "image/height",
            "image/encoded",
            "image/object/bbox/xmin",
            "image/object/bbox/ymin",
            "image/object/bbox/xmax",
            "image/object/bbox/ymax",
            "image/object/class/label",
            "image/object/class/text",
        )
    }
    for image_id in range(n_images):
        width, height = int(rng.integers(48, 97)), int(rng.integers(48, 97))
        pixels = rng.integers(0, 40, size=(height, width, 3), dtype=np.uint8)
        boxes, labels = [], []
        for _ in range(int(rng.integers(0, 5))):
            x0, y0 = int(rng.integers(0, width - 16)), int(rng.integers(0, height - 16))
            x1, y1 = int(rng.integers(x0 + 8, width + 1)), int(rng.integers(y0 + 8, height + 1))
            label = int(rng.integers(len(CLASSES)))
            pixels[y0:y1, x0:x1] = COLOURS[label]
            boxes.append((x0 / width, y0 / height, x1 / width, y1 / height))
            labels.append(label)
        rows["image/id"].append(image_id)
        rows["image/filename"].append(f"{image_id:06d}.png")
        rows["image/format"].append("png")
        rows["image/width"].append(width)
        rows["image/height"].append(height)
        rows["image/encoded"].append(png_bytes(pixels))
        for i, name in enumerate(("xmin", "ymin", "xmax", "ymax")):
            rows[f"image/object/bbox/{name}"].append([b[i] for b in boxes])
        rows["image/object/class/label"].append(labels)
        rows["image/object/class/text"].append([CLASSES[k] for k in labels])
    types = {
        "image/encoded": pa.binary(),
        "image/object/class/label": pa.list_(pa.int64()),
        "image/object/class/text": pa.list_(pa.string()),
    }
    types.update({f"image/object/bbox/{n}": pa.list_(pa.float32()) for n in ("xmin", "ymin", "xmax", "ymax")})
    return pa.table({name: pa.array(values, types.get(name)) for name, values in rows.items()})


def main(out_dir: str | None = None) -> dict:
    with workdir(out_dir) as work:
        images = make_dataset(60)
        path = str(work / "coco")
        # Four shards named train-0000k-of-00004.tfrecord, TensorFlow's convention.
        written = tfsql.write_tfrecord(images, path, num_shards=4, shard_prefix="train", mode="overwrite")
        print(f"wrote {written.rows} images ({written.bytes:,} bytes) in {[Path(p).name for p in written.paths]}")

        ds = tfsql.dataset(path)
        print(ds.schema)
        table = ds.to_table()

        # Check the round trip: the same PNG bytes, sizes and boxes come back.
        by_id = {row["image/id"]: row for row in table.to_pylist()}
        original = images.to_pylist()
        for row in original:
            back = by_id[row["image/id"]]
            assert back["image/encoded"] == row["image/encoded"]
            assert png_size(back["image/encoded"]) == (row["image/width"], row["image/height"])
            assert back["image/object/class/label"] == row["image/object/class/label"]
            assert np.allclose(back["image/object/bbox/xmin"], row["image/object/bbox/xmin"])
        print(f"round trip ok: {len(original)} images, PNG bytes identical, boxes equal")

        # Object counts per class, with SQL (feature names with '/' need double quotes).
        con = tfsql.duckdb.connect()
        per_class = con.sql(
            f"""
            SELECT class, count(*) AS objects FROM (
                SELECT unnest("image/object/class/text") AS class FROM tfrecord_scan('{path}'))
            GROUP BY class ORDER BY class
            """
        )
        print(per_class)
        # Only the box columns are decoded here: the image bytes are skipped on the wire.
        big = con.sql(
            f"""
            SELECT count(*) FROM (
                SELECT unnest(list_zip("image/object/bbox/xmin", "image/object/bbox/xmax",
                                       "image/object/bbox/ymin", "image/object/bbox/ymax")) AS b
                FROM tfrecord_scan('{path}'))
            WHERE (b[2] - b[1]) * (b[4] - b[3]) > 0.25
            """
        ).fetchall()[0][0]
        print(f"{big} objects cover more than a quarter of their image")
        return {
            "images": table.num_rows,
            "objects": dict(per_class.fetchall()),
            "big_objects": big,
            "expected_objects": sum(len(r["image/object/class/label"]) for r in original),
        }


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
