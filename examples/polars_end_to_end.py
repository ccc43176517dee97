"""Polars end to end: write a DataFrame as partitioned TFRecord, scan it lazily with
pushdown, aggregate it, and sink a filtered slice back to TFRecord.

Run it::

    python examples/polars_end_to_end.py [OUT_DIR]

Without OUT_DIR the files go to a temporary directory that is removed at the end.
"""

from __future__ import annotations

import sys

import numpy as np
import polars as pl

import tfsql  # noqa: F401  (adds pl.scan_tfrecord and the DataFrame/LazyFrame .tfrecord namespaces)
from tfsql.demo import workdir

COUNTRIES = ["DE", "FR", "JP", "US", "BR"]


def make_sessions(rows: int, *, seed: int = 0) -> pl.DataFrame:
    """Synthetic app sessions: who, when, how long, which items were viewed."""
    rng = np.random.default_rng(seed)
    n_items = rng.integers(0, 6, size=rows)
    return pl.DataFrame(
        {
            "session_id": np.arange(rows, dtype=np.int64),
            "day": rng.integers(1, 8, size=rows),  # day of the week, the partition column
            "country": rng.choice(COUNTRIES, size=rows),
            "dwell_seconds": rng.gamma(2.0, 30.0, size=rows).astype(np.float32),
            "items": [rng.integers(1000, 1100, size=k).tolist() for k in n_items],
            "purchased": (rng.random(rows) < 0.1).astype(np.int64),
        }
    )


def main(out_dir: str | None = None) -> dict:
    with workdir(out_dir) as work:
        sessions = make_sessions(5_000)

        # 1. Write: one directory per day (hive partitioning), gzip-compressed records.
        path = str(work / "sessions")
        written = sessions.tfrecord.write(path, partition_by="day", compression="gzip", mode="overwrite")
        print(f"wrote {written.rows:,} records in {len(written.files)} files under {path}")

        # 2. Scan lazily: the schema is inferred now, records are read at collect().
        lf = pl.scan_tfrecord(path)
        print("schema:", dict(lf.collect_schema()))

        # 3. Query: the day filter prunes whole partition directories; only the columns
        #    the query uses are decoded.
        weekend = (
            lf.filter(pl.col("day") >= 6)
            .group_by("country")
            .agg(
                sessions=pl.len(),
                purchase_rate=pl.col("purchased").mean().round(3),
                median_dwell=pl.col("dwell_seconds").median().round(1),
                items_viewed=pl.col("items").list.len().sum(),
            )
            .sort("country")
        )
        by_country = weekend.collect()
        print("weekend sessions per country:")
        print(by_country)

        # 4. Sink a filtered slice back to TFRecord (streamed in chunks), read it again.
        buyers_path = str(work / "buyers")
        sunk = lf.filter(pl.col("purchased") == 1).tfrecord.sink(buyers_path, mode="overwrite")
        buyers = pl.scan_tfrecord(buyers_path).select(pl.len()).collect().item()
        print(f"sank {sunk.rows:,} sessions that ended in a purchase; read back {buyers:,}")

        return {
            "written": written.rows,
            "by_country": by_country,
            "buyers": buyers,
            "expected_buyers": int(sessions["purchased"].sum()),
        }


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
