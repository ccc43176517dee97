"""TFDS and TFX layouts: a ``split`` column through every front end, TFDS metadata,
and TFDS-layout writes that ``tfds.builder_from_directory`` loads.

``tests/data/tfds/tiny_shapes/1.0.0`` was written by tensorflow_datasets itself
(``tests/data/tfds/make_tfds_data.py``); the TFX directory is built here in the layout
TFX's ExampleGen writes (``Split-<name>/data_tfrecord-00000-of-00001.gz``).
"""

from __future__ import annotations

import importlib.util
import json
import operator
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import tfsql
import tfsql.polars  # registers the namespaces
from tfsql.cli import main

TFDS_DIR = Path(__file__).resolve().parents[1] / "data" / "tfds" / "tiny_shapes" / "1.0.0"
EXPECTED = json.loads((TFDS_DIR.parents[1] / "tiny_shapes.expected.json").read_text())
TRAIN_IDS = [r["id"] for r in EXPECTED["train"]]
TEST_IDS = [r["id"] for r in EXPECTED["test"]]


@pytest.fixture(scope="module")
def tfx_dir(tmp_path_factory) -> Path:
    """A TFX ExampleGen output: gzip shards under Split-train / Split-eval."""
    root = tmp_path_factory.mktemp("tfx") / "examples"
    for split, ids in (("train", [1, 2, 3]), ("eval", [10, 11])):
        target = root / f"Split-{split}" / "data_tfrecord-00000-of-00001.gz"
        tfsql.write_tfrecord(pa.table({"id": ids}), str(target.with_name("x.tfrecord.gz")))
        os.rename(target.with_name("x.tfrecord.gz"), target)
    return root


# --------------------------------------------------------------------------------------
# reading TFDS
# --------------------------------------------------------------------------------------


def test_tfds_directory_reads_every_split_with_features_json_schema():
    ds = tfsql.dataset(str(TFDS_DIR))
    assert [os.path.basename(f) for f in ds.files] == [
        "tiny_shapes-test.tfrecord-00000-of-00001",
        "tiny_shapes-train.tfrecord-00000-of-00001",
    ]
    schema = ds.schema
    assert [(f.name, str(f.type)) for f in schema] == [
        ("caption", "string"),
        ("id", "int64"),
        ("image", "binary"),
        ("label", "int64"),
        ("vec", "list<item: float>"),
        ("split", "string"),
    ]
    assert json.loads(schema.field("label").metadata[b"tfds.class_names"]) == ["circle", "square", "triangle"]
    assert json.loads(schema.field("image").metadata[b"tfds.feature"])["pythonClassName"].endswith("Image")
    rows = sorted(ds.to_table().to_pylist(), key=lambda r: r["id"])
    expected = sorted(({**r, "split": split} for split, rs in EXPECTED.items() for r in rs), key=lambda r: r["id"])
    assert [{k: v for k, v in r.items() if k != "image"} for r in rows] == [
        {k: v for k, v in r.items() if k != "image_png_bytes"} for r in expected
    ]
    assert [len(r["image"]) for r in rows] == [r["image_png_bytes"] for r in expected]
    assert all(r["image"].startswith(b"\x89PNG") for r in rows)


def test_filter_on_split_opens_only_that_splits_files():
    ds = tfsql.dataset(str(TFDS_DIR))
    scanner = ds.scanner(columns=["id"], filter=pc.field("split") == "test")
    assert [os.path.basename(f) for f in scanner.files] == ["tiny_shapes-test.tfrecord-00000-of-00001"]
    assert sorted(scanner.to_table().column("id").to_pylist()) == TEST_IDS
    assert ds.count_rows(filter=pc.field("split") == "train") == len(TRAIN_IDS)


def test_tfds_shard_named_directly_reads_as_its_own_records():
    # the split column belongs to the layout's root, as a hive column to its root (issue 23)
    table = tfsql.read_tfrecord(str(TFDS_DIR / "tiny_shapes-train.tfrecord-00000-of-00001"))
    assert sorted(table.column("id").to_pylist()) == TRAIN_IDS
    assert "split" not in table.column_names


def test_tfds_directory_through_polars_duckdb_and_cli(capsys):
    lf = tfsql.polars.scan_tfrecord(str(TFDS_DIR))
    got = lf.filter(pl.col("split") == "test").select("id").collect()["id"].sort().to_list()
    assert got == TEST_IDS
    con = tfsql.connect()
    assert con.sql(
        f"SELECT split, count(*), sum(label) FROM tfrecord_scan('{TFDS_DIR}') GROUP BY 1 ORDER BY 1"
    ).fetchall() == [("test", 3, 3), ("train", 5, 4)]
    assert main(["count", str(TFDS_DIR)]) == 0  # the JSON metadata is not read as records
    assert capsys.readouterr().out.split()[0] == "8"
    assert main(["schema", str(TFDS_DIR), "--json"]) == 0
    columns = {c["name"]: c["type"] for c in json.loads(capsys.readouterr().out)["columns"]}
    assert columns["split"] == "string" and columns["image"] == "binary"


def test_tfds_convert_from_a_tfds_directory(tmp_path, capsys):
    out = tmp_path / "out.parquet"
    assert main(["convert", str(TFDS_DIR), str(out), "-q"]) == 0
    import pyarrow.parquet as pq

    table = pq.read_table(out)
    assert sorted(table.column("id").to_pylist()) == sorted(TRAIN_IDS + TEST_IDS)


# --------------------------------------------------------------------------------------
# reading TFX
# --------------------------------------------------------------------------------------


def test_tfx_split_directories_give_a_split_column(tfx_dir, capsys):
    ds = tfsql.dataset(str(tfx_dir))
    assert ds.schema.names == ["id", "split"]
    assert sorted(ds.to_table().to_pylist(), key=lambda r: r["id"]) == [
        {"id": 1, "split": "train"},
        {"id": 2, "split": "train"},
        {"id": 3, "split": "train"},
        {"id": 10, "split": "eval"},
        {"id": 11, "split": "eval"},
    ]
    assert [os.path.relpath(f, tfx_dir) for f in ds.scanner(filter=pc.field("split") == "eval").files] == [
        "Split-eval/data_tfrecord-00000-of-00001.gz"
    ]
    got = tfsql.polars.scan_tfrecord(str(tfx_dir)).filter(pl.col("split") == "eval").collect()["id"].to_list()
    assert sorted(got) == [10, 11]
    con = tfsql.connect()
    assert con.sql(f"SELECT split, sum(id) FROM tfrecord_scan('{tfx_dir}') GROUP BY 1 ORDER BY 1").fetchall() == [
        ("eval", 21),
        ("train", 6),
    ]
    assert main(["head", str(tfx_dir), "-n", "5", "-f", "csv"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "id,split" and "10,eval" in out


def test_records_with_a_split_feature_keep_it(tmp_path):
    tfsql.write_tfrecord(pa.table({"id": [1], "split": ["mine"]}), str(tmp_path / "Split-train/x.tfrecord"))
    assert tfsql.read_tfrecord(str(tmp_path)).to_pylist() == [{"id": 1, "split": "mine"}]


# --------------------------------------------------------------------------------------
# writing TFDS
# --------------------------------------------------------------------------------------


def test_tfds_write_layout_and_metadata(tmp_path):
    table = pa.table(
        {
            "x": [1, 2, 3, 4, 5],
            "v": [[1.5], [2.0, 3.0], [], [4.0], [5.0]],
            "split": ["train", "test", "train", "train", "test"],
        }
    )
    target = tmp_path / "my_ds" / "2.1.0"
    result = tfsql.write_tfrecord(table, str(target), tfds="my_ds", num_shards=2)
    assert sorted(os.listdir(target)) == [
        "_SUCCESS",
        "dataset_info.json",
        "features.json",
        "my_ds-test.tfrecord-00000-of-00002",
        "my_ds-test.tfrecord-00001-of-00002",
        "my_ds-train.tfrecord-00000-of-00002",
        "my_ds-train.tfrecord-00001-of-00002",
    ]
    assert [f.rows for f in result.files] == [2, 1, 1, 1]
    info = json.loads((target / "dataset_info.json").read_text())
    assert info["name"] == "my_ds" and info["version"] == "2.1.0" and info["fileFormat"] == "tfrecord"
    assert [(s["name"], s["shardLengths"]) for s in info["splits"]] == [("train", ["2", "1"]), ("test", ["1", "1"])]
    features = json.loads((target / "features.json").read_text())["featuresDict"]["features"]
    assert features["x"]["tensor"] == {"shape": {}, "dtype": "int64", "encoding": "none"}
    assert features["v"]["tensor"] == {"shape": {"dimensions": ["-1"]}, "dtype": "float64", "encoding": "none"}
    back = tfsql.dataset(str(target)).to_table().sort_by("x")
    assert back.to_pylist() == table.sort_by("x").to_pylist()
    with pytest.raises(FileExistsError):
        tfsql.write_tfrecord(table, str(target), tfds="my_ds")
    with pytest.raises(ValueError, match="tfds with mode='append'"):
        tfsql.write_tfrecord(table, str(target), tfds="my_ds", mode="append")
    with pytest.raises(tfsql.SchemaError, match=r"column 'x' is null in input row 1; a TFDS feature of fixed shape"):
        tfsql.write_tfrecord(pa.table({"x": [1, None], "v": [[1.0], None]}), str(tmp_path / "nulls"), tfds="nulls")
    assert not (tmp_path / "nulls").exists()
    with pytest.raises(ValueError, match="TFDS split names are letters, digits and _"):
        tfsql.write_tfrecord(pa.table({"x": [1], "split": ["a-b"]}), str(tmp_path / "bad"), tfds="bad")


def test_tfds_round_trip_keeps_features(tmp_path):
    source = tfsql.dataset(str(TFDS_DIR)).to_table()
    target = tmp_path / "tiny_shapes" / "1.0.0"
    tfsql.write_tfrecord(source, str(target), tfds="tiny_shapes")
    written = json.loads((target / "features.json").read_text())
    assert written == json.loads((TFDS_DIR / "features.json").read_text())
    assert (target / "label.labels.txt").read_text() == "circle\nsquare\ntriangle\n"
    back = tfsql.dataset(str(target)).to_table()
    assert back.schema == source.schema
    assert sorted(back.to_pylist(), key=operator.itemgetter("id")) == sorted(
        source.to_pylist(), key=operator.itemgetter("id")
    )


def test_tfds_write_from_a_query_and_cli(tmp_path, capsys):
    con = tfsql.connect()  # a query's rows to the writer (the native COPY lets DuckDB name the files)
    rows = con.sql("SELECT range AS x, CASE WHEN range < 3 THEN 'train' ELSE 'test' END AS split FROM range(5)")
    tfsql.write_tfrecord(rows.arrow(), f"{tmp_path}/sql_ds/1.0.0", tfds="sql_ds", num_shards=2)
    assert sorted(os.listdir(tmp_path / "sql_ds" / "1.0.0")) == [
        "_SUCCESS",
        "dataset_info.json",
        "features.json",
        "sql_ds-test.tfrecord-00000-of-00002",
        "sql_ds-test.tfrecord-00001-of-00002",
        "sql_ds-train.tfrecord-00000-of-00002",
        "sql_ds-train.tfrecord-00001-of-00002",
    ]
    assert (
        main(
            [
                "sql",
                "SELECT 1 AS x, 'valid' AS split",
                "-o",
                str(tmp_path / "cli_ds"),
                "--format",
                "tfrecord",
                "--tfds",
                "cli_ds",
                "-q",
            ]
        )
        == 0
    )
    assert sorted(os.listdir(tmp_path / "cli_ds")) == [
        "_SUCCESS",
        "cli_ds-valid.tfrecord-00000-of-00001",
        "dataset_info.json",
        "features.json",
    ]
    assert tfsql.read_tfrecord(str(tmp_path / "cli_ds")).to_pylist() == [{"x": 1, "split": "valid"}]


def _tfds_python() -> str | None:
    """A Python that imports tensorflow_datasets: this one, or $TFSQL_TFDS_PYTHON."""
    if importlib.util.find_spec("tensorflow_datasets") is not None:
        return sys.executable
    return os.environ.get("TFSQL_TFDS_PYTHON") or None


_LOAD = textwrap.dedent("""
    import json, sys
    import tensorflow_datasets as tfds
    builder = tfds.builder_from_directory(sys.argv[1])
    out = {}
    for split in builder.info.splits:
        rows = []
        for example in tfds.as_numpy(builder.as_dataset(split=split)):
            rows.append({k: v.tolist() if hasattr(v, "tolist") else v for k, v in example.items()})
        out[split] = rows
    print(json.dumps(out, default=lambda o: o.decode("latin-1")))
""")


@pytest.mark.tensorflow
@pytest.mark.skipif(_tfds_python() is None, reason="needs tensorflow_datasets (or TFSQL_TFDS_PYTHON)")
def test_tfds_layout_write_loads_with_builder_from_directory(tmp_path):
    table = pa.table(
        {
            "id": pa.array([1, 2, 3, 4, 5], pa.int64()),
            "score": pa.array([0.5, -1.25, 2.0, 3.5, 0.0], pa.float32()),
            "tokens": [[1, 2], [], [3], [4, 5, 6], [7]],
            "text": ["a", "bé", "c", "d", "e"],
            "blob": [b"\x00\x01", b"", b"x", b"\xff", b"y"],
            "split": ["train", "test", "train", "train", "test"],
        }
    )
    source = tfsql.dataset(str(TFDS_DIR)).to_table()
    tfsql.write_tfrecord(table, str(tmp_path / "mine" / "1.0.0"), tfds="mine", num_shards=2)
    tfsql.write_tfrecord(source, str(tmp_path / "tiny_shapes" / "1.0.0"), tfds="tiny_shapes")
    python = _tfds_python()
    for name in ("mine", "tiny_shapes"):
        done = subprocess.run(
            [python, "-c", _LOAD, str(tmp_path / name / "1.0.0")],
            capture_output=True,
            check=False,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        loaded = json.loads(done.stdout.strip().splitlines()[-1])
        if name == "mine":
            for split in ("train", "test"):
                expected = [
                    {k: v for k, v in r.items() if k != "split"} for r in table.to_pylist() if r["split"] == split
                ]
                for r in expected:
                    r["text"] = r["text"].encode().decode("latin-1")
                    r["blob"] = r["blob"].decode("latin-1")
                assert sorted(loaded[split], key=lambda r: r["id"]) == expected
        else:
            for split, rows in EXPECTED.items():
                got = sorted(loaded[split], key=lambda r: r["id"])
                assert [(r["id"], r["label"], r["vec"], r["caption"]) for r in got] == [
                    (r["id"], r["label"], r["vec"], r["caption"]) for r in rows
                ]
                # the image feature decodes the PNG bytes back to the 4x4x1 pixels
                assert [len(r["image"]) for r in got] == [4] * len(rows)


def test_tfds_test_data_is_small():
    assert sum(p.stat().st_size for p in TFDS_DIR.iterdir()) < 10_000


def test_features_json_it_cannot_describe_falls_back_to_inference(tmp_path):
    copy = tmp_path / "tiny_shapes" / "1.0.0"
    copy.mkdir(parents=True)
    for p in TFDS_DIR.iterdir():
        (copy / p.name).write_bytes(p.read_bytes())
    document = json.loads((copy / "features.json").read_text())
    features = document["featuresDict"]["features"]
    features["id"] = {
        "pythonClassName": "tensorflow_datasets.core.features.sequence_feature.Sequence",
        "sequence": {"length": "-1"},
    }
    features["absent"] = {"pythonClassName": "tensorflow_datasets.core.features.text_feature.Text", "text": {}}
    (copy / "features.json").write_text(json.dumps(document))
    schema = tfsql.dataset(str(copy)).schema
    assert {f.name: str(f.type) for f in schema} == {
        "caption": "string",
        "id": "int64",
        "image": "binary",
        "label": "int64",
        "vec": "list<item: float>",
        "absent": "string",
        "split": "string",
    }
    assert schema.names[-2:] == ["absent", "split"]  # described but never seen: after the inferred ones
    assert schema.field("id").metadata is None  # inferred, not described
    assert tfsql.dataset(str(copy)).to_table(columns=["absent"]).column("absent").null_count == 8
