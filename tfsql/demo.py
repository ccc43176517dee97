"""The quickstart: generate a small realistic TFRecord dataset, then query it.

``tfsql demo [DIR]`` (or :func:`run_demo`) writes synthetic product reviews — no
download — as hive-partitioned, gzip-compressed TFRecord files of ``tf.train.Example``
under ``DIR/reviews`` (default ``./demo-data``), then runs a few SQL queries through the
DuckDB front end, a ``COPY ... (FORMAT tfrecord)`` that writes the train and test splits,
and a Polars query, printing each query and its result.

Every row is one review::

    id     int64          unique, 0..rows-1
    label  int64          star rating minus one, 0..4 (imbalanced: 4 is the most common);
                          the partition column (``reviews/label=3/part-...tfrecord.gz``)
    split  string         "train" (80 %), "validation" (10 %), "test" (10 %)
    score  float32        helpfulness score in [0, 1]
    text   string         the review; about 2 % of rows repost an earlier review's text
    emb    list<float32>  a 16-value sentence embedding, clustered by label
    tags   list<string>   0 to 3 product categories

Examples
--------
>>> import tempfile
>>> from tfsql.demo import reviews_table
>>> table = reviews_table(rows=5, seed=1)
>>> table.column_names
['id', 'label', 'split', 'score', 'text', 'emb', 'tags']
>>> table.num_rows, len(table.column("emb")[0])
(5, 16)
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
import pyarrow as pa

__all__ = ["reviews_table", "write_demo_dataset", "run_demo", "workdir", "DEFAULT_DIR", "DEFAULT_ROWS", "EMBEDDING_DIM"]

DEFAULT_DIR = "demo-data"
DEFAULT_ROWS = 20_000
EMBEDDING_DIM = 16
LABEL_SHARES = (0.08, 0.12, 0.20, 0.27, 0.33)  # 1-star reviews are rare, 5-star common
SPLIT_SHARES = {"train": 0.8, "validation": 0.1, "test": 0.1}
DUPLICATE_SHARE = 0.02
ROWS_PER_FILE = 2_500
#: The uncompressed, indexed copy beside ``reviews`` (random access needs byte offsets).
PLAIN_NAME = "reviews-plain"

_OPENERS = (
    ("Terrible", "Awful", "Do not buy this", "Very disappointed with the", "Returned the"),
    ("Poor", "Not great:", "Underwhelming", "Had problems with the", "Mediocre at best:"),
    ("Decent", "It's okay:", "Average", "Does the job, mostly:", "Mixed feelings about the"),
    ("Good", "Happy with the", "Solid", "Would recommend the", "Nice"),
    ("Excellent", "Love this", "Fantastic", "Best purchase this year:", "Five stars for the"),
)
_DETAILS = (
    ("It broke after {n} days.", "Stopped working after {n} uses.", "Customer support never answered."),
    ("Feels cheap and flimsy.", "Works, but louder than expected.", "Instructions were missing."),
    ("Fine for the price.", "Does what it says, nothing more.", "Battery lasts about {n} hours."),
    ("Well built and easy to use.", "Arrived in {n} days, works great.", "Good value for money."),
    ("Exceeded my expectations.", "Still perfect after {n} months.", "I bought a second one for my family."),
)
_PRODUCTS = (
    "blender",
    "headphones",
    "garden hose",
    "desk lamp",
    "backpack",
    "coffee grinder",
    "phone case",
    "yoga mat",
    "kettle",
    "keyboard",
    "water bottle",
    "board game",
    "drill",
    "novel",
    "face cream",
)
_BRANDS = ("Acme", "Northwind", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay")
_TAGS = ("kitchen", "electronics", "garden", "sports", "toys", "books", "beauty", "office", "gift", "sale")


def reviews_table(*, rows: int = DEFAULT_ROWS, seed: int = 0) -> pa.Table:
    """Generate the synthetic product reviews as an Arrow table (deterministic per seed).

    Parameters
    ----------
    rows : int
        Number of reviews.
    seed : int
        Random seed; the same seed gives the same table.

    Returns
    -------
    pyarrow.Table
        Columns ``id, label, split, score, text, emb, tags`` (see the module docstring).

    Examples
    --------
    >>> t = reviews_table(rows=1000, seed=0)
    >>> sorted(set(t.column("label").to_pylist()))
    [0, 1, 2, 3, 4]
    >>> reviews_table(rows=3, seed=7).equals(reviews_table(rows=3, seed=7))
    True
    """
    if not isinstance(rows, int) or isinstance(rows, bool) or rows < 1:
        raise ValueError(f"rows must be a positive integer, not {rows!r}")
    rng = np.random.default_rng(seed)
    label = rng.choice(len(LABEL_SHARES), size=rows, p=LABEL_SHARES)
    split = rng.choice(list(SPLIT_SHARES), size=rows, p=list(SPLIT_SHARES.values()))
    score = rng.beta(2.0, 5.0, size=rows).astype(np.float32)
    centroids = rng.normal(0.0, 1.0, size=(len(LABEL_SHARES), EMBEDDING_DIM))
    emb = (centroids[label] + rng.normal(0.0, 1.0, size=(rows, EMBEDDING_DIM))).astype(np.float32)
    text = [_review_text(rng, int(lab)) for lab in label]
    n_tags = rng.integers(0, 4, size=rows)
    tags = [list(rng.choice(_TAGS, size=k, replace=False)) for k in n_tags]

    # Reposts: a few rows copy an earlier row's content (a new id, its own split).
    for i in np.flatnonzero(rng.random(rows) < DUPLICATE_SHARE):
        if i == 0:
            continue
        j = int(rng.integers(0, i))
        label[i], score[i], emb[i], text[i], tags[i] = label[j], score[j], emb[j], text[j], tags[j]

    emb_offsets = np.arange(0, (rows + 1) * EMBEDDING_DIM, EMBEDDING_DIM, dtype=np.int32)
    return pa.table(
        {
            "id": pa.array(np.arange(rows, dtype=np.int64)),
            "label": pa.array(label.astype(np.int64)),
            "split": pa.array(split.tolist(), pa.string()),
            "score": pa.array(score),
            "text": pa.array(text, pa.string()),
            "emb": pa.ListArray.from_arrays(pa.array(emb_offsets), pa.array(emb.reshape(-1))),
            "tags": pa.array([[str(t) for t in row] for row in tags], pa.list_(pa.string())),
        }
    )


def _review_text(rng: np.random.Generator, label: int) -> str:
    opener = _OPENERS[label][rng.integers(len(_OPENERS[label]))]
    detail = _DETAILS[label][rng.integers(len(_DETAILS[label]))].format(n=int(rng.integers(2, 30)))
    brand = _BRANDS[rng.integers(len(_BRANDS))]
    product = _PRODUCTS[rng.integers(len(_PRODUCTS))]
    model = f"{chr(65 + int(rng.integers(26)))}-{int(rng.integers(100, 1000))}"
    return f"{opener} {brand} {product} (model {model}). {detail}"


def write_demo_dataset(
    directory: str | os.PathLike = DEFAULT_DIR,
    *,
    rows: int = DEFAULT_ROWS,
    seed: int = 0,
):
    """Write the reviews to ``directory/reviews`` as hive-partitioned gzip TFRecord,
    and the same records uncompressed with their index sidecars to
    ``directory/reviews-plain`` (for random access: `tfsql.loader`, ``tfsql index``).

    The files are partitioned by ``label`` (``reviews/label=0/...``), at most
    2,500 records per file. Existing ``reviews`` and ``reviews-plain`` directories are
    replaced.

    Parameters
    ----------
    directory : str or path-like
        Where to write (created if needed).
    rows, seed : int
        See :func:`reviews_table`.

    Returns
    -------
    tfsql.WriteResult
        The write of ``reviews``.

    Examples
    --------
    >>> import os, tempfile, tfsql
    >>> directory = tempfile.mkdtemp()
    >>> result = write_demo_dataset(directory, rows=500)
    >>> result.rows, tfsql.dataset(result.path).count_rows()
    (500, 500)
    >>> sorted(os.listdir(os.path.join(directory, "reviews-plain", "label=0")))[0].startswith(".part-")  # an index
    True
    """
    import tfsql

    table = reviews_table(rows=rows, seed=seed)
    # the same records uncompressed, with index sidecars: random access (tfsql.loader,
    # tfsql index / count) needs the byte offsets a gzip stream does not have
    for name, plain in ((PLAIN_NAME, True), ("reviews", False)):
        result = tfsql.write_tfrecord(
            table,
            str(Path(directory) / name),
            partition_by="label",
            compression=None if plain else "gzip",
            index=plain,
            max_rows_per_file=ROWS_PER_FILE,
            mode="overwrite",
        )
    return result


@contextlib.contextmanager
def workdir(out_dir: str | os.PathLike | None) -> Iterator[Path]:
    """``out_dir`` (created) or a temporary directory removed afterwards.

    The output directory of the ``examples/*.py`` scripts (``python examples/NAME.py
    [OUT_DIR]``).

    Examples
    --------
    >>> with workdir(None) as work:
    ...     work.is_dir()
    True
    >>> work.exists()
    False
    """
    if out_dir is not None:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        yield Path(out_dir)
        return
    with tempfile.TemporaryDirectory(prefix="tfsql-example-") as tmp:
        yield Path(tmp)


def run_demo(
    directory: str | os.PathLike = DEFAULT_DIR,
    *,
    rows: int = DEFAULT_ROWS,
    seed: int = 0,
    echo: Callable[[str], None] = print,
) -> dict[str, int]:
    """Generate the demo dataset and run the quickstart queries, printing each one.

    Parameters
    ----------
    directory : str or path-like
        Output directory: ``reviews/`` (the dataset), ``reviews-plain/`` (its
        uncompressed, indexed copy) and ``splits/`` (the train and test splits written
        by ``COPY``) are created inside it and replaced when they exist.
    rows, seed : int
        See :func:`reviews_table`.
    echo : callable
        Receives each piece of output (``print`` by default).

    Returns
    -------
    dict
        ``{"rows": ..., "files": ..., "train": ..., "test": ...}``: rows and files
        written, and the records in each split written by the ``COPY``.

    Examples
    --------
    >>> import tempfile
    >>> summary = run_demo(tempfile.mkdtemp(), rows=300, echo=lambda text: None)
    >>> summary["rows"], summary["train"] + summary["test"] < 300
    (300, True)
    """
    import polars as pl

    import tfsql
    import tfsql.duckdb
    import tfsql.polars
    from tfsql.duckdb.sqltext import quote_string

    started = time.perf_counter()
    directory = Path(directory)
    result = write_demo_dataset(directory, rows=rows, seed=seed)
    reviews = str(directory / "reviews")
    splits = str(directory / "splits")
    echo(
        f"Wrote {result.rows:,} synthetic product reviews to {reviews}/ "
        f"({len(result.files)} gzip TFRecord files partitioned by label, {result.bytes:,} bytes),\n"
        f"and the same records uncompressed with index sidecars to {directory / PLAIN_NAME}/ (random access)."
    )
    ds = tfsql.dataset(reviews)
    columns = ", ".join(
        f"{field.name} {str(field.type).replace('item: ', '')}"
        + (" (partition)" if field.name in ds.partition_schema.names else "")
        for field in ds.schema
    )
    echo(f"Columns inferred from the records: {columns}")

    con = tfsql.duckdb.connect()
    scan = f"tfrecord_scan({quote_string(reviews)})"
    queries = [
        (
            "Reviews per star rating (label), with the average helpfulness score",
            f"SELECT label, count(*) AS reviews, round(avg(score), 3) AS avg_score\n"
            f"FROM {scan}\nGROUP BY label ORDER BY label",
        ),
        (
            "Helpful positive reviews per split (the label filter prunes partitions)",
            f"SELECT split, count(*) AS reviews, round(avg(len(tags)), 2) AS avg_tags\n"
            f"FROM {scan}\nWHERE label >= 3 AND score > 0.4\nGROUP BY split ORDER BY split",
        ),
    ]
    for step, (title, query) in enumerate(queries, start=1):
        echo(f"\n{step}. {title}:\n{query};")
        echo(str(con.sql(query)))

    copy = (
        f"COPY (SELECT * FROM {scan} WHERE split IN ('train', 'test'))\n"
        f"TO {quote_string(splits)} (FORMAT tfrecord, PARTITION_BY (split), COMPRESSION gzip, OVERWRITE)"
    )
    if "duckdb-v" in tfsql.duckdb_extension_path():  # the V2 build's COPY takes plain columns
        echo(f"\n3. Write the train and test splits as their own TFRecord directories:\n{copy};")
        con.execute(copy)
    else:  # DuckDB 1.x: the v1 build's COPY takes one STRUCT column (1.4: no COPY at all)
        query = f"SELECT * FROM {scan} WHERE split IN ('train', 'test')"
        echo(
            "\n3. Write the train and test splits as their own TFRecord directories (the query's rows to "
            f"write_tfrecord):\n{query};"
        )
        rows = con.sql(query).arrow()
        tfsql.write_tfrecord(rows, splits, partition_by="split", compression="gzip", mode="overwrite")
    split_counts = {
        name: tfsql.dataset(os.path.join(splits, f"split={name}")).count_rows() for name in ("train", "test")
    }
    echo(f"   {splits}/split=train: {split_counts['train']:,} records; split=test: {split_counts['test']:,} records")

    echo("\n4. The most common tags of 5-star reviews (Polars, lazy scan with pushdown):")
    lazy = (
        tfsql.polars.scan_tfrecord(reviews)
        .filter(pl.col("label") == 4)
        .select(pl.col("tags").explode().drop_nulls())
        .group_by("tags")
        .agg(pl.len().alias("reviews"))
        .sort(["reviews", "tags"], descending=[True, False])
        .head(5)
    )
    echo(str(lazy.collect()))

    echo(
        f"\nDone in {time.perf_counter() - started:.1f} s. Next, try:\n"
        f"  tfsql sql \"SELECT label, count(*) FROM tfrecord_scan('{reviews}') GROUP BY ALL\"\n"
        f"  tfsql head {reviews} -n 3\n"
        f"  tfsql schema {reviews}\n"
        f"  tfsql run split_train_test --param src={reviews} --param out={directory / 'prepared'}\n"
        f"  tfsql index {directory / PLAIN_NAME}   # the uncompressed copy: random access by record"
    )
    return {"rows": result.rows, "files": len(result.files), **split_counts}
