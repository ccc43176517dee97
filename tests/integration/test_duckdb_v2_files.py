"""The V2 extension's files through DuckDB's file system: a URL (``memory://`` from an fsspec
file system registered with DuckDB, ``s3://`` where httpfs is loaded) is listed, read and
written wherever DuckDB routes it, and ``~`` expands as DuckDB expands it; the v1 build
keeps its local-only messages for the same sources."""

from __future__ import annotations

import re
import duckdb
import fsspec
import pyarrow as pa
import pytest

import tfsql
from duckdb_copy_helpers import arrow_of
from tfsql.duckdb.extension import v2_extension_path
from tfrecord_files import example, frame

needs_v2 = pytest.mark.skipif(
    v2_extension_path(duckdb.__version__) is None, reason="no V2 build of the extension for this DuckDB"
)


def _connect(api: str, monkeypatch) -> duckdb.DuckDBPyConnection:
    monkeypatch.setenv("TFSQL_DUCKDB_API", api)
    con = tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))
    # no network here: DuckDB must not try to fetch httpfs
    con.execute("SET autoinstall_known_extensions = false")
    con.execute("SET autoload_known_extensions = false")
    return con


@pytest.fixture
def memory():
    fs = fsspec.filesystem("memory")
    fs.store.clear()
    fs.pseudo_dirs.clear()
    fs.pseudo_dirs.append("")
    yield fs
    fs.store.clear()
    fs.pseudo_dirs.clear()
    fs.pseudo_dirs.append("")


@pytest.fixture
def con(monkeypatch, memory):
    connection = _connect("v2", monkeypatch)
    connection.register_filesystem(memory)
    yield connection
    connection.close()


def _put(memory, path: str, table: pa.Table, tmp_path, **options) -> bytes:
    """write_tfrecord's bytes of `table`, stored at `path` in the memory file system."""
    local = tmp_path / ("w" + path.replace("/", "_"))
    tfsql.write_tfrecord(table, str(local), **options)
    data = local.read_bytes()
    memory.pipe_file(path, data)
    return data


@pytest.fixture
def dataset(memory, tmp_path):
    """memory://d: two hive partitions (one gzip), a hidden file and a _-file left out."""
    _put(memory, "/d/p=1/a.tfrecord", pa.table({"x": [1, 2], "s": ["a", "b"]}), tmp_path)
    _put(memory, "/d/p=2/b.tfrecord.gz", pa.table({"x": [3], "s": ["c"]}), tmp_path, compression="gzip")
    _put(memory, "/d/p=2/.hidden.tfrecord", pa.table({"x": [99], "s": ["h"]}), tmp_path)
    memory.pipe_file("/d/_SUCCESS", b"")
    return "memory://d"


@needs_v2
@pytest.mark.parametrize("source", ["memory://d", "memory://d/**", "memory://d/p=*/*", "memory:///d/**"])
def test_scan_reads_a_registered_fsspec_file_system_with_hive_partitions(con, dataset, source):
    rows = con.sql(f"SELECT x, s, p FROM tfrecord_scan('{source}') ORDER BY x").fetchall()
    assert rows == [(1, "a", 1), (2, "b", 1), (3, "c", 2)]


@needs_v2
def test_globs_filename_column_and_pushdown_over_memory(con, dataset):
    rows = con.sql("SELECT x, filename FROM tfrecord_scan('memory://d/p=1/*.tfrecord', filename := true)").fetchall()
    assert rows == [(1, "memory://d/p=1/a.tfrecord"), (2, "memory://d/p=1/a.tfrecord")]
    assert con.sql("SELECT sum(x) FROM tfrecord_scan('memory://d/**') WHERE p = 2").fetchall() == [(3,)]
    assert con.sql("SELECT count(*) FROM 'memory://d/p=2/*.tfrecord.gz'").fetchall() == [(1,)]


@needs_v2
def test_metadata_and_schema_of_memory_files(con, dataset):
    rows = con.sql(
        "SELECT file, compression, partitions FROM tfrecord_metadata('memory://d/**') ORDER BY file"
    ).fetchall()
    assert rows == [
        ("memory://d/p=1/a.tfrecord", "none", {"p": "1"}),
        ("memory://d/p=2/b.tfrecord.gz", "gzip", {"p": "2"}),
    ]
    counts = con.sql("SELECT records FROM tfrecord_metadata('memory://d', count := true) ORDER BY file").fetchall()
    assert counts == [(2,), (1,)]
    schema = con.sql("SELECT column_name, column_type, origin FROM tfrecord_schema('memory://d')").fetchall()
    assert schema == [("x", "BIGINT", "feature"), ("s", "VARCHAR", "feature"), ("p", "BIGINT", "partition")]


@needs_v2
def test_on_corrupt_skip_over_memory(con, memory):
    records = [bytearray(frame(example({"id": i}))) for i in range(5)]
    records[1][-1] ^= 0xFF  # record 1's data CRC
    memory.pipe_file("/bad/x.tfrecord", b"".join(bytes(r) for r in records))
    with pytest.raises(duckdb.Error, match=r"memory://bad/x\.tfrecord.*record 1"):
        con.sql("SELECT id FROM tfrecord_scan('memory://bad/x.tfrecord')").fetchall()
    rows = con.sql("SELECT id FROM tfrecord_scan('memory://bad/x.tfrecord', on_corrupt := 'skip') ORDER BY id")
    assert rows.fetchall() == [(0,), (2,), (3,), (4,)]
    rejects = con.sql("SELECT file, record_index, reason FROM tfrecord_rejects()").fetchall()
    assert rejects == [("memory://bad/x.tfrecord", 1, "data_crc")]


@needs_v2
def test_a_large_memory_file_reads_across_many_chunks(con, memory, tmp_path):
    _put(memory, "/big/x.tfrecord", pa.table({"x": list(range(50_000))}), tmp_path)
    assert con.sql("SELECT count(*), sum(x) FROM tfrecord_scan('memory://big')").fetchall() == [
        (50_000, 50_000 * 49_999 // 2)
    ]


@needs_v2
def test_a_missing_memory_path_is_named(con, memory):
    with pytest.raises(duckdb.BinderException, match=r"no such file or directory: 'memory://nope'; check the path"):
        con.sql("SELECT * FROM tfrecord_scan('memory://nope')")
    with pytest.raises(duckdb.BinderException, match=r"no files match the pattern 'memory://nope/\*\*'"):
        con.sql("SELECT * FROM tfrecord_scan('memory://nope/**')")


@needs_v2
def test_copy_to_memory_writes_write_tfrecords_bytes(con, memory, tmp_path):
    table = pa.table({"x": list(range(1000)), "s": [f"r{i}" for i in range(1000)]})
    con.register("t", table)
    assert con.sql("COPY (SELECT * FROM t ORDER BY x) TO 'memory://out/x.tfrecord' (FORMAT tfrecord)").fetchall() == [
        (1000,)
    ]
    tfsql.write_tfrecord(table, str(tmp_path / "x.tfrecord"))
    assert memory.cat_file("/out/x.tfrecord") == (tmp_path / "x.tfrecord").read_bytes()
    assert [p for p in memory.find("/out") if "tfsql-tmp" in p] == []
    back = con.sql("SELECT count(*), sum(x) FROM tfrecord_scan('memory://out/x.tfrecord')").fetchall()
    assert back == [(1000, 499500)]
    stats = con.sql("COPY (SELECT * FROM t ORDER BY x) TO 'memory://out/y.tfrecord' (FORMAT tfrecord, RETURN_STATS)")
    assert stats.fetchall()[0][:3] == ("memory://out/y.tfrecord", 1000, (tmp_path / "x.tfrecord").stat().st_size)


@needs_v2
def test_partitioned_copy_to_memory_matches_write_tfrecord_per_partition(con, memory, tmp_path):
    con.execute("SET threads = 1")  # one writer per partition, rows in order
    table = pa.table({"x": list(range(300)), "p": [i % 3 for i in range(300)]})
    con.register("t", table)
    con.sql(
        "COPY (SELECT * FROM t ORDER BY x) TO 'memory://parts' (FORMAT tfrecord, PARTITION_BY (p), COMPRESSION gzip)"
    )
    files = sorted(memory.find("/parts"))
    assert files == ["/parts/features.json"] + [f"/parts/p={k}/data_0.tfrecord.gz" for k in range(3)]
    for k in range(3):
        expected = tmp_path / f"p{k}.tfrecord.gz"
        tfsql.write_tfrecord(table.filter(pa.compute.equal(table["p"], k)).select(["x"]), str(expected))
        assert memory.cat_file(f"/parts/p={k}/data_0.tfrecord.gz") == expected.read_bytes()
    rows = con.sql("SELECT p, count(*), sum(x) FROM tfrecord_scan('memory://parts') GROUP BY p ORDER BY p").fetchall()
    assert rows == [(0, 100, 14850), (1, 100, 14950), (2, 100, 15050)]
    # the same COPY to a local directory writes the same bytes
    con.sql(
        f"COPY (SELECT * FROM t ORDER BY x) TO '{tmp_path / 'local'}' (FORMAT tfrecord, PARTITION_BY (p), COMPRESSION gzip)"
    )
    for k in range(3):
        local = (tmp_path / "local" / f"p={k}" / "data_0.tfrecord.gz").read_bytes()
        assert memory.cat_file(f"/parts/p={k}/data_0.tfrecord.gz") == local
    assert memory.cat_file("/parts/features.json") == (tmp_path / "local" / "features.json").read_bytes()


@needs_v2
def test_copy_to_memory_with_index_and_overwrite(con, memory, tmp_path):
    con.register("t", arrow_of(duckdb.sql("SELECT range AS x FROM range(10)")))
    con.sql("COPY (SELECT * FROM t ORDER BY x) TO 'memory://idx/x.tfrecord' (FORMAT tfrecord, INDEX)")
    con.sql(f"COPY (SELECT * FROM t ORDER BY x) TO '{tmp_path / 'x.tfrecord'}' (FORMAT tfrecord, INDEX)")
    assert memory.cat_file("/idx/.x.tfrecord.idx") == (tmp_path / ".x.tfrecord.idx").read_bytes()
    assert len(memory.cat_file("/idx/.x.tfrecord.idx").splitlines()) == 10
    # over the file: DuckDB writes 'tmp_x.tfrecord' and moves it; the index is x.tfrecord's
    con.sql("COPY (SELECT * FROM t WHERE x < 4 ORDER BY x) TO 'memory://idx/x.tfrecord' (FORMAT tfrecord, INDEX)")
    assert sorted(memory.find("/idx")) == ["/idx/.x.tfrecord.idx", "/idx/x.tfrecord"]
    first_four = (tmp_path / ".x.tfrecord.idx").read_bytes().splitlines(keepends=True)[:4]
    assert memory.cat_file("/idx/.x.tfrecord.idx") == b"".join(first_four)
    copy = (
        "COPY (SELECT x, x % 3 AS p FROM t WHERE x < {n}) TO 'memory://parts' (FORMAT tfrecord, PARTITION_BY (p){mode})"
    )
    con.sql(copy.format(n=10, mode=""))
    with pytest.raises(duckdb.Error, match="(?i)not empty|exists|overwrite"):
        con.sql(copy.format(n=10, mode=""))
    con.sql(copy.format(n=2, mode=", OVERWRITE"))
    assert con.sql("SELECT x, p FROM tfrecord_scan('memory://parts') ORDER BY x").fetchall() == [(0, 0), (1, 1)]


def _duckdbs_message(con, query: str) -> str:
    """The message of the error `query` raises, without DuckDB's "<Type> Error: " prefix."""
    with pytest.raises(duckdb.Error) as error:
        con.sql(query).fetchall()
    text = str(error.value)
    return text.split("Error: ", 1)[1] if text.startswith(("Binder Error: ", "IO Error: ")) else text


@needs_v2
@pytest.mark.parametrize("source", ["s3://bucket/x.tfrecord", "s3://bucket/d/**"])
def test_s3_without_httpfs_fails_with_duckdbs_message_naming_httpfs(con, source):
    duckdbs = _duckdbs_message(con, f"SELECT * FROM read_parquet('{source}')")
    assert duckdbs.startswith(f"File {source} requires the extension httpfs to be loaded\n")
    assert _duckdbs_message(con, f"SELECT * FROM tfrecord_scan('{source}')") == duckdbs
    assert _duckdbs_message(con, f"SELECT * FROM tfrecord_metadata('{source}')") == duckdbs


@needs_v2
def test_copy_to_s3_without_httpfs_fails_with_duckdbs_message(con):
    ours = _duckdbs_message(con, "COPY (SELECT 1 AS x) TO 's3://bucket/out.tfrecord' (FORMAT tfrecord)")
    assert re.match(
        r"File s3://bucket/\.out\.tfrecord\.tfsql-tmp-\d+-\d+ requires the extension httpfs to be loaded\n", ours
    )


@needs_v2
def test_tilde_expands_to_duckdbs_home_directory(con, tmp_path):
    tfsql.write_tfrecord(pa.table({"x": [7, 8]}), str(tmp_path / "home.tfrecord"))
    con.execute(f"SET home_directory = '{tmp_path}'")
    assert con.sql("SELECT x FROM tfrecord_scan('~/home.tfrecord')").fetchall() == [(7,), (8,)]
    assert con.sql("SELECT x FROM tfrecord_scan('~/*.tfrecord')").fetchall() == [(7,), (8,)]
    con.sql("COPY (SELECT 9 AS x) TO '~/copied.tfrecord' (FORMAT tfrecord)")
    assert tfsql.read_tfrecord(str(tmp_path / "copied.tfrecord")).column("x").to_pylist() == [9]


@needs_v2
def test_copy_from_a_memory_file(con, memory, tmp_path):
    _put(memory, "/cf/x.tfrecord", pa.table({"x": list(range(10))}), tmp_path)
    con.execute("CREATE TABLE t (x BIGINT)")
    assert con.sql("COPY t FROM 'memory://cf/x.tfrecord' (FORMAT tfrecord)").fetchall() == [(10,)]
    assert con.sql("SELECT sum(x) FROM t").fetchall() == [(45,)]


def test_v1_keeps_its_local_only_messages(monkeypatch, memory):
    con = _connect("v1", monkeypatch)
    con.register_filesystem(memory)
    memory.pipe_file("/d/x.tfrecord", frame(example({"id": 1})))
    cases = {
        "memory://d/**": "no files match the pattern 'memory://d/**'; check the pattern (pass glob := false "
        "to read a path containing *, ? or [ literally)",
        "memory://d": "no such file or directory: 'memory://d'; check the path",
        "s3://bucket/x.tfrecord": "no such file or directory: 's3://bucket/x.tfrecord'; check the path",
        "~/x.tfrecord": "no such file or directory: '~/x.tfrecord'; check the path",
    }
    for source, message in cases.items():
        with pytest.raises(duckdb.BinderException) as error:
            con.sql(f"SELECT * FROM tfrecord_scan('{source}')")
        assert str(error.value) == f"Binder Error: {message}"
    con.close()
