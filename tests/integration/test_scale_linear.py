"""A record with very many feature keys is read in time linear in its keys (issue 34,
item 9): no per-column step rebuilds a whole schema. Checked by counting the schema
builds (never by timing); the sizes that show the cost are in
tests/benchmarks/bench_scale.py."""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl
import pytest

import tfsql

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_scale import make_files, make_wide  # noqa: E402

KEYS = 3000


@pytest.fixture(scope="module")
def wide(tmp_path_factory):
    return make_wide(tmp_path_factory.mktemp("wide"), KEYS)


def test_read_tfrecord_reads_every_key(wide):
    table = tfsql.read_tfrecord(wide)
    assert table.num_columns == KEYS and table.num_rows == 1
    assert table.column("f0").to_pylist() == [0] and table.column(f"f{KEYS - 1}").to_pylist() == [KEYS - 1]


def test_polars_takes_each_batch_schema_once(wide, monkeypatch):
    builds = 0
    schema = pl.DataFrame.schema

    def counting(self):
        nonlocal builds
        builds += 1
        return schema.fget(self)

    monkeypatch.setattr(pl.DataFrame, "schema", property(counting))
    frame = tfsql.scan_tfrecord(wide).collect()
    assert frame.width == KEYS and frame.row(0)[:3] == (0, 1, 2)
    assert builds < 10  # was one per column (KEYS), each O(KEYS)


def test_many_small_files_every_front_end_counts_them(tmp_path):
    root = make_files(tmp_path, 300)
    assert tfsql.dataset(root).count_rows() == 300
    assert tfsql.read_tfrecord(root).num_rows == 300
    assert tfsql.scan_tfrecord(root).select(pl.len()).collect().item() == 300
    assert tfsql.connect().sql(f"SELECT count(*) FROM tfrecord_scan('{root}')").fetchall() == [(300,)]
