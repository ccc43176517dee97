"""``lf.tfrecord.sink`` takes what ``sink_parquet`` takes for partitioning (``pl.PartitionBy``)
and ``lazy=True``."""

from __future__ import annotations

import polars as pl
import pytest

import tfsql  # noqa: F401  (attaches the namespaces)

LF = pl.LazyFrame({"id": [1, 2, 3, 4, 5], "year": [2024, 2024, 2025, 2025, 2025], "x": [0.5, 1.5, 2.5, 3.5, 4.5]})


def _dirs(root) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.is_dir())


def test_partition_by_key(tmp_path):
    result = LF.tfrecord.sink(pl.PartitionBy(str(tmp_path / "out"), key="year"))
    assert result.rows == 5
    assert _dirs(tmp_path / "out") == ["year=2024", "year=2025"]
    back = pl.scan_tfrecord(tmp_path / "out").sort("id").collect()
    assert back.to_dict(as_series=False) == LF.collect().select("id", "x", "year").to_dict(as_series=False)


def test_partition_by_expression_and_file_limits(tmp_path):
    target = pl.PartitionBy(str(tmp_path / "out"), key=(pl.col("id") % 2).alias("odd"), max_rows_per_file=1)
    result = LF.tfrecord.sink(target)
    assert _dirs(tmp_path / "out") == ["odd=0", "odd=1"]
    assert sorted(f.rows for f in result.files) == [1, 1, 1, 1, 1]  # one row per file
    back = pl.scan_tfrecord(tmp_path / "out").sort("id").collect()
    assert back["odd"].to_list() == [1, 0, 1, 0, 1]


def test_partition_by_approximate_bytes(tmp_path):
    result = LF.tfrecord.sink(pl.PartitionBy(str(tmp_path / "out"), approximate_bytes_per_file=1))
    assert len(result.files) == 5  # every record exceeds one byte: a file each


@pytest.mark.parametrize(
    ("target", "options", "message"),
    [
        (pl.PartitionBy("x", key="year", include_key=True), {}, r"include_key=True\) is not supported"),
        (
            pl.PartitionBy("x", key="year", file_path_provider=lambda args: "f"),
            {},
            "file_path_provider=...\\) is not supported",
        ),
        (pl.PartitionBy("x", key="year"), {"partition_by": "id"}, "partition_by= and a pl.PartitionBy target"),
    ],
)
def test_partition_by_what_cannot_be_honoured_raises(target, options, message):
    with pytest.raises(ValueError, match=message):
        LF.tfrecord.sink(target, **options)


def test_lazy_writes_when_collected(tmp_path):
    out = tmp_path / "out"
    lf = LF.filter(pl.col("id") > 1).tfrecord.sink(str(out), lazy=True)
    assert isinstance(lf, pl.LazyFrame)
    assert not out.exists()
    files = lf.collect()
    assert files.columns == ["path", "rows", "bytes"]
    assert files["rows"].sum() == 4
    assert pl.scan_tfrecord(out).select(pl.len()).collect().item() == 4


def test_lazy_sinks_collect_together(tmp_path):
    a = LF.tfrecord.sink(pl.PartitionBy(str(tmp_path / "a"), key="year"), lazy=True)
    b = LF.tfrecord.sink(str(tmp_path / "b"), compression="gzip", lazy=True)
    done = pl.collect_all([a, b])
    assert [d["rows"].sum() for d in done] == [5, 5]
    assert _dirs(tmp_path / "a") == ["year=2024", "year=2025"]


def test_lazy_checks_options_up_front(tmp_path):
    with pytest.raises(ValueError, match="unknown compression 'lz4'"):
        LF.tfrecord.sink(str(tmp_path / "out"), compression="lz4", lazy=True)
