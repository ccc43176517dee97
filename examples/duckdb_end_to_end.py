"""DuckDB end to end: query TFRecord files with SQL, join them with an in-memory table,
and write a training split back to TFRecord with COPY.

Run it::

    python examples/duckdb_end_to_end.py [OUT_DIR]

Without OUT_DIR the files go to a temporary directory that is removed at the end.
"""

from __future__ import annotations

import sys

import pyarrow as pa

import tfsql
import tfsql.duckdb
from tfsql.demo import workdir, write_demo_dataset


def main(out_dir: str | None = None) -> dict:
    with workdir(out_dir) as work:
        # Some TFRecord data: the quickstart's product reviews, partitioned by label.
        reviews = str(write_demo_dataset(work, rows=3_000).path)

        con = tfsql.duckdb.connect()

        # tfrecord_scan(...) works wherever a table function does; a view keeps it handy.
        con.sql(f"CREATE VIEW reviews AS SELECT * FROM tfrecord_scan('{reviews}')")
        print(con.sql("DESCRIBE reviews"))

        # Aggregate: the label filter prunes partition directories before any file is read.
        stats = con.sql(
            """
            SELECT label, count(*) AS reviews, round(avg(score), 3) AS avg_score,
                   round(avg(len(tags)), 2) AS avg_tags
            FROM reviews WHERE label IN (0, 4)
            GROUP BY label ORDER BY label
            """
        )
        print(stats)
        per_label = dict(con.sql("SELECT label, count(*) FROM reviews GROUP BY label").fetchall())

        # Join with any Arrow (or pandas, polars) table registered on the connection.
        names = pa.table({"label": [0, 1, 2, 3, 4], "stars": ["*", "**", "***", "****", "*****"]})
        con.register("label_names", names)
        print(
            con.sql(
                """
            SELECT stars, count(*) AS reviews
            FROM reviews JOIN label_names USING (label)
            WHERE 'gift' IN tags
            GROUP BY stars ORDER BY stars
            """
            )
        )

        # Write the positive reviews of the training split as gzip TFRecord, one
        # directory per label; COPY returns the row count like DuckDB's own COPY.
        out = str(work / "train_positive")
        copied = con.execute(
            f"""
            COPY (SELECT id, text, emb, label FROM reviews WHERE split = 'train' AND label >= 3)
            TO '{out}' (FORMAT tfrecord, PARTITION_BY (label), COMPRESSION gzip, OVERWRITE)
            """
        ).fetchone()[0]
        print(f"COPY wrote {copied:,} rows to {out}")

        # Read the result back without SQL: the Arrow table tfsql.read_tfrecord returns.
        table = tfsql.read_tfrecord(out, columns=["id", "label"])
        print(f"read back {table.num_rows:,} rows; labels {sorted(set(table['label'].to_pylist()))}")
        return {"per_label": per_label, "copied": copied, "read_back": table.num_rows}


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
