"""``COPY ... TO ... (FORMAT tfrecord, ...)`` through `tfsql.duckdb`: round trips, options, atomicity.

Runs on DuckDB 2.x and 1.4 LTS (run the suite once in an environment with ``duckdb==1.4.*``).
"""

from __future__ import annotations

import collections
import os

import duckdb
import pyarrow as pa
import pytest

import tfsql
from tfsql.duckdb import BinderError, TargetExistsError, connect
from tfrecord_files import split_table

N_ROWS = 300
COLUMNS = "id, label, score, name, emb, split"


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    directory = tmp_path_factory.mktemp("copy_src") / "data"
    tfsql.write_tfrecord(split_table(N_ROWS), str(directory), partition_by="split", max_rows_per_file=70)
    return str(directory)


@pytest.fixture()
def con(source):
    connection = connect()
    connection.register("ref", tfsql.read_tfrecord(source, hive_partitioning=True))
    yield connection
    connection.close()


def rows(con, query: str) -> collections.Counter:
    return collections.Counter(
        tuple(tuple(v) if isinstance(v, list) else v for v in row) for row in con.sql(query).fetchall()
    )


def data_files(directory) -> list[str]:
    return sorted(
        os.path.relpath(os.path.join(d, f), directory)
        for d, _, files in os.walk(directory)
        for f in files
        if not f.startswith(("_", ".")) and f != "features.json"  # the column description
    )


def test_partitioned_copy_reads_back_identically(con, source, tmp_path):
    out = tmp_path / "clean"
    result = con.sql(f"""
        COPY (SELECT * FROM tfrecord_scan('{source}') WHERE label IS NOT NULL OR name IS NULL)
        TO '{out}' (FORMAT tfrecord, PARTITION_BY (split), COMPRESSION gzip)""")
    expected = rows(con, f"SELECT {COLUMNS} FROM ref WHERE label IS NOT NULL OR name IS NULL")
    assert result.fetchall() == [(sum(expected.values()),)]
    files = data_files(out)
    assert {f.split("/")[0] for f in files} == {"split=test", "split=train", "split=valid"}
    assert all(f.endswith(".tfrecord.gz") for f in files)
    assert rows(con, f"SELECT {COLUMNS} FROM tfrecord_scan('{out}', hive_partitioning := true)") == expected


def test_copy_table_to_single_file_without_format(con, tmp_path):
    target = tmp_path / "all.tfrecord"
    assert con.execute(f"COPY ref TO '{target}'").fetchall() == [(N_ROWS,)]
    assert target.is_file()
    assert rows(con, f"SELECT {COLUMNS} FROM read_tfrecord('{target}')") == rows(con, f"SELECT {COLUMNS} FROM ref")
    # gzip from the name, columns from the COPY's column list, FORMAT as a string
    gz = tmp_path / "ids.tfrecord.gz"
    con.execute(f"COPY ref (id, name) TO '{gz}' WITH (FORMAT 'tfrecord')").fetchall()
    assert gz.read_bytes()[:2] == b"\x1f\x8b"
    assert rows(con, f"SELECT * FROM tfrecord_scan('{gz}')") == rows(con, "SELECT id, name FROM ref")


def test_rows_per_file_and_file_size_make_directories(con, tmp_path):
    out = tmp_path / "rows"
    con.sql(f"COPY (SELECT id, name FROM ref) TO '{out}' (FORMAT tfrecord, ROWS_PER_FILE 50)")
    files = data_files(out)
    assert len(files) == 6
    assert [len(tfsql.read_tfrecord(str(out / f))) for f in files] == [50] * 6
    out = tmp_path / "bytes"
    con.sql(f"COPY (SELECT id, name FROM ref) TO '{out}' (FORMAT tfrecord, FILE_SIZE_BYTES '1KB')")
    assert len(data_files(out)) > 3
    assert rows(con, f"SELECT * FROM tfrecord_scan('{out}')") == rows(con, "SELECT id, name FROM ref")
    out = tmp_path / "shards"
    con.sql(f"COPY ref TO '{out}' (FORMAT tfrecord, NUM_SHARDS 3, COMPRESSION zlib, COMPRESSION_LEVEL 1)")
    assert data_files(out) == [f"part-0000{k}-of-00003.tfrecord.zz" for k in range(3)]


def test_existing_directory_needs_a_mode(con, tmp_path):
    out = tmp_path / "modes"
    copy = f"COPY (SELECT id, split FROM ref WHERE id < 30) TO '{out}' (FORMAT tfrecord, PARTITION_BY split"
    con.sql(copy + ")")
    with pytest.raises(
        TargetExistsError,
        match=r"^IO Error: COPY \.\.\. TO .*already holds data.*"
        r"add OVERWRITE, OVERWRITE_OR_IGNORE or APPEND",
    ):
        con.sql(copy + ")")
    con.sql(copy + ", APPEND)")
    assert con.sql(f"SELECT count(*) FROM tfrecord_scan('{out}')").fetchall() == [(60,)]
    con.sql(copy.replace("id < 30", "id < 6") + ", OVERWRITE)")
    assert con.sql(f"SELECT count(*) FROM tfrecord_scan('{out}')").fetchall() == [(6,)]
    # OVERWRITE_OR_IGNORE replaces only the partitions written
    con.sql(copy.replace("id < 30", "split = 'test' AND id < 9") + ", OVERWRITE_OR_IGNORE true)")
    assert rows(con, f"SELECT split, count(*) FROM tfrecord_scan('{out}') GROUP BY split") == collections.Counter(
        {("train", 2): 1, ("valid", 2): 1, ("test", 3): 1}
    )


def test_unknown_and_unsupported_options(con, tmp_path):
    with pytest.raises(
        BinderError,
        match=r'Unrecognized option "ROW_GROUP_SIZE" for COPY \.\.\. \(FORMAT '
        r"tfrecord\); valid options: FORMAT, PARTITION_BY, RECORD_TYPE, COMPRESSION",
    ):
        con.sql(f"COPY ref TO '{tmp_path}/x' (FORMAT tfrecord, ROW_GROUP_SIZE 10)")
    with pytest.raises(BinderError, match=r"COPY option FILENAME_PATTERN: filename_pattern 'f' must contain \{i\}"):
        con.sql(f"COPY ref TO '{tmp_path}/x' (FORMAT tfrecord, PARTITION_BY split, FILENAME_PATTERN 'f')")
    with pytest.raises(BinderError, match=r"COPY options OVERWRITE and APPEND contradict each other"):
        con.sql(f"COPY ref TO '{tmp_path}/x' (FORMAT tfrecord, PARTITION_BY split, OVERWRITE, APPEND)")
    with pytest.raises(BinderError, match=r"COMPRESSION expects none, gzip, zlib or auto, got 'snappy'"):
        con.sql(f"COPY ref TO '{tmp_path}/x.tfrecord' (COMPRESSION snappy)")
    with pytest.raises(
        BinderError,
        match=r"the path ends in a TFRecord suffix, so it names one file, but "
        r"ROWS_PER_FILE writes a directory of files; drop the suffix or end the path with '/'",
    ):
        con.sql(f"COPY ref TO '{tmp_path}/x.tfrecord' (ROWS_PER_FILE 10)")
    assert not os.listdir(tmp_path)


def test_failing_query_leaves_directory_target_unchanged(con, tmp_path):
    out = tmp_path / "keep"
    con.sql(f"COPY (SELECT id, split FROM ref) TO '{out}' (FORMAT tfrecord, PARTITION_BY (split))")
    before = sorted((f, (out / f).read_bytes()) for f in data_files(out))
    failing = (
        f"COPY (SELECT range AS id, CASE WHEN range = 250000 THEN error('boom') ELSE 'x' END AS split "
        f"FROM range(300000)) TO '{out}' (FORMAT tfrecord, PARTITION_BY (split), OVERWRITE)"
    )
    with pytest.raises(duckdb.Error, match="boom"):
        con.sql(failing)
    assert sorted((f, (out / f).read_bytes()) for f in data_files(out)) == before
    assert sorted(os.listdir(out)) == ["_SUCCESS", "features.json", "split=test", "split=train", "split=valid"]
    # the connection is usable afterwards
    assert con.sql(f"SELECT count(*) FROM tfrecord_scan('{out}')").fetchall() == [(N_ROWS,)]


def test_failing_query_leaves_file_target_unchanged(con, tmp_path):
    target = tmp_path / "one.tfrecord"
    con.sql(f"COPY (SELECT id FROM ref) TO '{target}'")
    before = target.read_bytes()
    with pytest.raises(duckdb.Error, match="boom"):
        con.sql(
            f"COPY (SELECT CASE WHEN range = 250000 THEN error('boom') ELSE range END AS id "
            f"FROM range(300000)) TO '{target}' (OVERWRITE)"
        )
    assert target.read_bytes() == before
    assert os.listdir(tmp_path) == ["one.tfrecord"]
    with pytest.raises(duckdb.Error, match="boom"):
        con.sql(f"COPY (SELECT error('boom') AS id) TO '{tmp_path}/new.tfrecord'")
    assert os.listdir(tmp_path) == ["one.tfrecord"]


def test_copy_with_parameters_and_return_files(con, tmp_path):
    out = tmp_path / "params"
    result = con.execute(
        f"COPY (SELECT id FROM ref WHERE label = ? AND split = ?) TO '{out}' "
        f"(FORMAT tfrecord, ROWS_PER_FILE 10, RETURN_FILES)",
        [1, "train"],
    ).fetchall()
    count = con.execute("SELECT count(*) FROM ref WHERE label = 1 AND split = 'train'").fetchall()[0][0]
    assert result[0][0] == count and count > 10
    assert sorted(result[0][1]) == sorted(str(out / f) for f in data_files(out))
    assert len(result[0][1]) == -(-count // 10)


def test_copy_of_empty_query_writes_an_empty_file(con, tmp_path):
    target = tmp_path / "empty.tfrecord.gz"
    assert con.sql(f"COPY (SELECT id FROM ref WHERE id < 0) TO '{target}'").fetchall() == [(0,)]
    assert target.read_bytes()[:2] == b"\x1f\x8b"
    assert tfsql.dataset(str(target), schema={"id": pa.int64()}).to_table().num_rows == 0


def test_other_formats_pass_through(con, tmp_path):
    target = tmp_path / "x.tfrecord"
    con.sql(f"COPY (SELECT 1 AS a) TO '{target}' (FORMAT csv, HEADER)")
    assert target.read_text() == "a\n1\n"
    parquet = tmp_path / "x.parquet"
    con.sql(f"COPY (SELECT id, name FROM ref WHERE id < 5) TO '{parquet}' (FORMAT parquet)")
    assert (
        con.sql(f"SELECT * FROM read_parquet('{parquet}') ORDER BY id").fetchall()
        == con.sql("SELECT id, name FROM ref WHERE id < 5 ORDER BY id").fetchall()
    )


def test_copy_in_a_script_then_read(con, source, tmp_path):
    out = tmp_path / "script"
    relation = con.sql(
        f"COPY (SELECT id, label FROM tfrecord_scan('{source}') WHERE split = 'valid') "
        f"TO '{out}' (FORMAT tfrecord, PARTITION_BY label); "
        f"SELECT count(*) FROM tfrecord_scan('{out}', hive_partitioning := true)"
    )
    assert relation.fetchall() == con.sql("SELECT count(*) FROM ref WHERE split = 'valid'").fetchall()
    assert "label=__HIVE_DEFAULT_PARTITION__" in os.listdir(out)


def test_options_outside_parentheses_are_an_error_for_tfrecord_only(con, tmp_path):
    with pytest.raises(BinderError, match=r"expected the options in parentheses"):
        con.sql(f"COPY ref TO '{tmp_path}/x.tfrecord' FORMAT tfrecord")
    assert not os.listdir(tmp_path)


def test_copy_reports_progress_per_batch(tmp_path):
    import tfsql

    con = tfsql.connect()
    seen = []
    con.copy_progress = seen.append
    count = con.sql(f"COPY (SELECT range AS x FROM range(250000)) TO '{tmp_path / 'out'}' (FORMAT tfrecord)").fetchall()
    assert count == [(250000,)]
    assert sum(seen) == 250000 and len(seen) >= 2


def test_copy_filename_pattern_names_the_files(con, tmp_path):
    out = tmp_path / "named"
    count = con.sql(
        f"COPY (SELECT * FROM ref WHERE id < 30) TO '{out}' "
        "(FORMAT tfrecord, PARTITION_BY split, FILENAME_PATTERN 'shard_{i}', COMPRESSION gzip)"
    )
    assert count.fetchall() == [(30,)]
    files = sorted(p.relative_to(out).as_posix().split("/") for p in out.rglob("*.tfrecord.gz"))
    assert [directory for directory, _ in files] == ["split=test", "split=train", "split=valid"]
    assert sorted(name for _, name in files) == ["shard_0.tfrecord.gz", "shard_1.tfrecord.gz", "shard_2.tfrecord.gz"]
    assert con.sql(f"SELECT count(*) FROM tfrecord_scan('{out}')").fetchall() == [(30,)]


@pytest.mark.parametrize(
    "option, message",
    [
        ("COMPRESSION gzip, COMPRESSION_LEVEL 10", "compression_level must be an integer from 0 to 9, not 10"),
        ("NUM_SHARDS 0", "num_shards must be a positive integer, not 0"),
        ("ROWS_PER_FILE 0", "max_rows_per_file must be a positive integer, not 0"),
    ],
)
def test_invalid_writer_option_values_are_binder_errors(con, tmp_path, option, message):
    with pytest.raises(BinderError, match=rf"COPY \.\.\. \(FORMAT tfrecord\): {message}"):
        con.sql(f"COPY ref TO '{tmp_path}/x' (FORMAT tfrecord, {option})")
    assert not os.listdir(tmp_path)


def test_two_spellings_of_one_option_contradict(con, tmp_path):
    with pytest.raises(BinderError, match=r"COPY options ROWS_PER_FILE and MAX_ROWS_PER_FILE contradict each other"):
        con.sql(f"COPY ref TO '{tmp_path}/x' (FORMAT tfrecord, ROWS_PER_FILE 2, MAX_ROWS_PER_FILE 3)")
    assert (
        con.sql(
            f"COPY ref TO '{tmp_path}/y' (FORMAT tfrecord, PARTITION_BY ['split'], THREADS 1, MAX_FILE_SIZE '1MB')"
        ).fetchall()
        == con.sql("SELECT count(*) FROM ref").fetchall()
    )
    assert not os.path.exists(tmp_path / "x")
