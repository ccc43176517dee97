"""DuckDB over ``con.register(name, tfsql.dataset(...))``: pushdown results vs a plain Arrow table.

DuckDB calls ``type(ds).scanner(ds, columns=..., filter=...)`` and does not re-apply the
filter, so every query here is checked against the same data registered as an Arrow
table, and the scanner calls are recorded to see what was pushed. Runs on DuckDB 2.x
and 1.4 LTS (run the suite once in an environment with ``duckdb==1.4.*``).
"""

from __future__ import annotations

import collections

import duckdb
import pyarrow as pa
import pytest

import tfsql

N_ROWS = 360


def make_table(n: int = N_ROWS) -> pa.Table:
    return pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "label": pa.array([None if i % 13 == 0 else i % 5 for i in range(n)], pa.int64()),
            "score": pa.array([(i * 29 % 97) / 2 for i in range(n)], pa.float32()),
            "name": pa.array([None if i % 6 == 1 else f"name{i % 17}" for i in range(n)], pa.string()),
            "split": pa.array([("train", "test", "valid")[i % 3] for i in range(n)], pa.string()),
            "day": pa.array([i % 2 for i in range(n)], pa.int64()),
        }
    )


@pytest.fixture(scope="module")
def directory(tmp_path_factory):
    path = tmp_path_factory.mktemp("register") / "data"
    tfsql.write_tfrecord(make_table(), str(path), partition_by=["split", "day"], max_rows_per_file=25)
    return str(path)


@pytest.fixture()
def scans(monkeypatch):
    """Record every ``scanner()`` call DuckDB makes: (columns, filter, scanner)."""
    calls = []
    original = tfsql.Dataset.scanner

    def recording(self, *args, **kwargs):
        scanner = original(self, *args, **kwargs)
        calls.append((kwargs.get("columns"), kwargs.get("filter"), scanner))
        return scanner

    monkeypatch.setattr(tfsql.Dataset, "scanner", recording)
    return calls


@pytest.fixture()
def con(directory):
    connection = duckdb.connect()
    connection.register("t", tfsql.dataset(directory, hive_partitioning=True))
    connection.register("ref", tfsql.read_tfrecord(directory, hive_partitioning=True))
    connection.register("labels", pa.table({"label": [0, 1, 2, 3], "word": ["zero", "one", "two", "three"]}))
    yield connection
    connection.close()


def same(con, query: str) -> collections.Counter:
    """Run ``query`` over ``t`` (the dataset) and over ``ref`` (the Arrow table); they must agree."""
    got = collections.Counter(con.sql(query.format(t="t")).fetchall())
    want = collections.Counter(con.sql(query.format(t="ref")).fetchall())
    assert got == want
    assert sum(want.values()) > 0, "the query must return rows to be a test"
    return got


def test_projection_reads_only_the_needed_columns(con, scans):
    same(con, "SELECT name, score FROM {t}")
    columns, row_filter, _ = scans[-1]
    assert sorted(columns) == ["name", "score"] and row_filter is None


def test_filter_on_data_column(con, scans):
    same(con, "SELECT id, name FROM {t} WHERE score > 30 AND id < 200")
    _, row_filter, _ = scans[-1]
    assert row_filter is not None and "id" in str(row_filter)  # 2.0 keeps the float32 compare


def test_filter_on_partition_column_opens_only_matching_files(con, scans, directory):
    same(con, "SELECT id, label FROM {t} WHERE split = 'test'")
    _, _, scanner = scans[-1]
    all_files = tfsql.dataset(directory).files
    assert 0 < len(scanner.files) < len(all_files)
    assert all("/split=test/" in f for f in scanner.files)
    assert sorted(scanner.files) == sorted(f for f in all_files if "/split=test/" in f)


def test_filter_on_two_partition_columns_and_data(con, scans):
    same(con, "SELECT id FROM {t} WHERE split = 'valid' AND day = 1 AND label >= 2")
    _, _, scanner = scans[-1]
    assert scanner.files and all("/split=valid/day=1/" in f for f in scanner.files)


def test_in_list(con):
    same(con, "SELECT id, label FROM {t} WHERE label IN (1, 4)")
    same(con, "SELECT id FROM {t} WHERE split IN ('train', 'valid') AND name IN ('name3', 'name5')")


def test_or(con):
    same(con, "SELECT id FROM {t} WHERE label = 0 OR score < 3")
    same(con, "SELECT id FROM {t} WHERE split = 'test' OR name = 'name7'")


def test_is_null_and_is_not_null(con):
    same(con, "SELECT id FROM {t} WHERE label IS NULL")
    same(con, "SELECT id, label FROM {t} WHERE name IS NULL AND label IS NOT NULL")


def test_limit(con):
    got = con.sql("SELECT id FROM t LIMIT 7").fetchall()
    assert len(got) == 7 and len(set(got)) == 7
    same(con, "SELECT id, name FROM {t} ORDER BY id DESC LIMIT 5")
    same(con, "SELECT id FROM {t} WHERE split = 'train' ORDER BY id LIMIT 3 OFFSET 4")


def test_count_star(con):
    assert same(con, "SELECT count(*) FROM {t}") == collections.Counter({(N_ROWS,): 1})
    same(con, "SELECT count(*) FROM {t} WHERE day = 0")
    same(con, "SELECT count(*), count(label), count(name) FROM {t} WHERE split <> 'test'")


def test_aggregates_and_ranges(con):
    same(con, "SELECT split, day, count(*), sum(id), min(score), max(name) FROM {t} GROUP BY ALL")
    same(con, "SELECT id FROM {t} WHERE id BETWEEN 100 AND 120 AND score <> 10")
    same(con, "SELECT id FROM {t} WHERE name LIKE 'name1%' AND NOT (label = 1)")


def test_joins(con):
    same(con, "SELECT t.id, l.word FROM {t} t JOIN labels l ON t.label = l.label WHERE t.day = 1")
    same(con, "SELECT a.id, b.id FROM {t} a JOIN {t} b ON a.id = b.id + 3 AND a.split = b.split")
    same(con, "SELECT l.word, count(t.id) FROM labels l LEFT JOIN {t} t USING (label) GROUP BY l.word")
    same(con, "SELECT id FROM {t} WHERE id IN (SELECT id * 2 FROM {t} WHERE label = 3)")
