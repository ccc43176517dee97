"""Read TFRecord files written by TensorFlow itself, and check the values against what
TensorFlow's own parser saw.

The files are the golden files in ``tests/data/tensorflow/`` of the tfsql repository,
written by ``tf.io.TFRecordWriter`` (see its ``generate.py``), roughly::

    with tf.io.TFRecordWriter("tabular.tfrecord.gz", options="GZIP") as writer:
        writer.write(tf.train.Example(features=tf.train.Features(feature={...})).SerializeToString())

tfsql needs no TensorFlow to read them: compression is detected from the bytes,
the schema is inferred from the records, SequenceExamples come back as nested lists.

Run it from a checkout of the repository::

    python examples/read_tensorflow_files.py
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import polars as pl

import tfsql
import tfsql.duckdb
from tfsql.polars import scan_tfrecord

GOLDEN = Path(__file__).resolve().parent.parent / "tests" / "data" / "tensorflow"


def expected_column(path: Path, column: str) -> list:
    """The values TensorFlow parsed for ``column`` (decoded from the .expected.json)."""
    spec = json.loads(path.with_name(path.name + ".expected.json").read_text())["columns"][column]
    if spec["arrow_type"] in ("binary", "list<binary>"):
        decode = lambda v: base64.b64decode(v)  # noqa: E731
        return [
            None if v is None else ([decode(x) for x in v] if isinstance(v, list) else decode(v))
            for v in spec["values"]
        ]
    return spec["values"]


def main(out_dir: str | None = None, *, data_dir: str | Path | None = None) -> dict | None:
    """Read the golden files (``out_dir`` is unused: this example writes nothing)."""
    golden = Path(data_dir) if data_dir is not None else GOLDEN
    if not (golden / "tabular.tfrecord").exists():
        print(f"no TensorFlow golden files in {golden}: run this from a checkout of the tfsql repository")
        return None

    # tf.train.Example records; the three files hold the same records uncompressed,
    # GZIP and ZLIB: compression is detected per file from its first bytes.
    counts = {}
    for name in ("tabular.tfrecord", "tabular.tfrecord.gz", "tabular.tfrecord.zz"):
        table = tfsql.read_tfrecord(golden / name)
        counts[name] = table.num_rows
        for column in ("id", "name", "tags", "words", "blob"):
            assert table[column].to_pylist() == expected_column(golden / name, column), (name, column)
    print(f"tabular: {counts} records; id, name, tags, words and blob equal TensorFlow's values")
    print(tfsql.infer_schema(golden / "tabular.tfrecord"))

    # SequenceExample: context features are columns, feature lists list<list<...>> columns.
    seq = tfsql.read_tfrecord(golden / "sequence.tfrecord", record_type="sequence_example")
    assert seq["tokens"].to_pylist() == expected_column(golden / "sequence.tfrecord", "tokens")
    print(f"sequence: {seq.num_rows} SequenceExamples, columns {seq.column_names}")

    # The same files from Polars and DuckDB.
    longest = (
        scan_tfrecord(golden / "sequence.tfrecord", record_type="sequence_example")
        .select("id", steps=pl.col("tokens").list.len())
        .sort(["steps", "id"], descending=[True, False])
        .head(3)
        .collect()
    )
    print("sequences with the most steps:")
    print(longest)
    con = tfsql.duckdb.connect()
    rows = con.sql(
        f"SELECT count(*) AS records, count(maybe) AS with_maybe, sum(len(tags)) AS tags "
        f"FROM tfrecord_scan('{golden / 'tabular.tfrecord.gz'}')"
    )
    print(rows)
    return {"counts": counts, "sequences": seq.num_rows, "sql": rows.fetchall()[0]}


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
