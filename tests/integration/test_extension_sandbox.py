"""``SET enable_external_access = false`` holds for tfsql's table functions as for DuckDB's
own readers: a file outside ``allowed_directories`` is refused, one inside is read.

Before, the extension read every local path with the C library and so read any file
while DuckDB refused the same path to ``read_parquet``. The V2 build now routes every
path through DuckDB's file system in a sandboxed connection (DuckDB's own rules and
Permission Error); the v1 build cannot ask DuckDB which paths are allowed, so on DuckDB
1.5.6 it refuses every read while the setting is off, and DuckDB 1.4 does not let it
see the setting at all (docs/duckdb-extension.md).
"""

from __future__ import annotations

import os

import duckdb
import pyarrow as pa
import pytest

import tfsql
from tfsql.duckdb.extension import extension_available

pytestmark = [
    pytest.mark.skipif(not extension_available(), reason="this tfsql was built without its DuckDB extension"),
    pytest.mark.usefixtures("duckdb_api"),  # once with each build: v1, and V2 on DuckDB 2
]

SEES_THE_SETTING = tuple(int(x) for x in duckdb.__version__.split(".")[:3]) >= (1, 5, 6)
DUCKDB_REFUSES = "file system operations are disabled by configuration"


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """outside.tfrecord beside allowed/{one.tfrecord, d/p=0.., d/p=1..}."""
    root = tmp_path_factory.mktemp("sandbox")
    tfsql.write_tfrecord(pa.table({"x": [100, 200]}), str(root / "outside.tfrecord"))
    tfsql.write_tfrecord(pa.table({"x": [1, 2, 3]}), str(root / "allowed" / "one.tfrecord"))
    tfsql.write_tfrecord(
        pa.table({"x": list(range(10)), "p": [i % 2 for i in range(10)]}),
        str(root / "allowed" / "d"),
        partition_by=["p"],
    )
    return root


def _sandboxed(root) -> duckdb.DuckDBPyConnection:
    con = tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))
    con.execute(f"SET allowed_directories = ['{root / 'allowed'}']")
    con.execute("SET enable_external_access = false")
    return con


OUTSIDE = [
    "SELECT count(*) FROM tfrecord_scan('{root}/outside.tfrecord')",
    "SELECT count(*) FROM tfrecord_scan('{root}/**')",
    "SELECT count(*) FROM tfrecord_scan('{root}/allowed/../outside.tfrecord')",
    "SELECT count(*) FROM tfrecord_metadata('{root}/outside.tfrecord')",
    "SELECT count(*) FROM tfrecord_schema('{root}/outside.tfrecord')",
]


@pytest.mark.parametrize("sql", OUTSIDE)
def test_a_file_outside_the_allowed_directories_is_refused(duckdb_api, tree, sql):
    if duckdb_api == "v1" and not SEES_THE_SETTING:
        pytest.skip("DuckDB 1.4 gives a v1 extension no way to read enable_external_access")
    con = _sandboxed(tree)
    with pytest.raises(duckdb.Error) as refused:
        con.sql(sql.format(root=tree)).fetchall()
    if duckdb_api == "v2":
        assert DUCKDB_REFUSES in str(refused.value)
    else:
        assert "cannot read files while enable_external_access is false" in str(refused.value)
    assert "use DuckDB 2.x" in str(refused.value) or duckdb_api == "v2"


def test_copy_from_outside_is_refused(duckdb_api, tree):
    if duckdb_api == "v1" and not SEES_THE_SETTING:
        pytest.skip("DuckDB 1.4 gives a v1 extension no way to read enable_external_access")
    con = _sandboxed(tree)
    con.execute("CREATE TABLE t (x BIGINT)")
    with pytest.raises(duckdb.Error, match="enable_external_access is false|" + DUCKDB_REFUSES):
        con.execute(f"COPY t FROM '{tree}/outside.tfrecord' (FORMAT tfrecord)")
    assert con.sql("SELECT count(*) FROM t").fetchall() == [(0,)]


def test_inside_the_allowed_directories_v2_reads_as_usual(duckdb_api, tree):
    if duckdb_api != "v2":
        pytest.skip("the v1 build refuses every read while external access is off")
    con = _sandboxed(tree)
    allowed = tree / "allowed"
    assert con.sql(f"SELECT list(x ORDER BY x) FROM tfrecord_scan('{allowed}/one.tfrecord')").fetchall() == [
        ([1, 2, 3],)
    ]
    by_p = "SELECT p, sum(x) FROM tfrecord_scan('{}') GROUP BY p ORDER BY p"
    assert con.sql(by_p.format(f"{allowed}/d")).fetchall() == [(0, 20), (1, 25)]  # a directory
    assert con.sql(by_p.format(f"{allowed}/d/**")).fetchall() == [(0, 20), (1, 25)]  # a glob
    metadata = f"SELECT file, size, partitions FROM tfrecord_metadata('{allowed}/d') ORDER BY file"
    open_con = tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))
    assert con.sql(metadata).fetchall() == open_con.sql(metadata).fetchall()
    assert len(con.sql(metadata).fetchall()) == 2
    assert con.sql(f"SELECT column_name FROM tfrecord_schema('{allowed}/one.tfrecord')").fetchall() == [("x",)]
    con.execute("CREATE TABLE t (x BIGINT)")
    con.execute(f"COPY t FROM '{allowed}/one.tfrecord' (FORMAT tfrecord)")
    assert con.sql("SELECT list(x ORDER BY x) FROM t").fetchall() == [([1, 2, 3],)]
    con.execute(f"COPY t TO '{allowed}/out.tfrecord' (FORMAT tfrecord)")
    assert con.sql(f"SELECT count(*) FROM tfrecord_scan('{allowed}/out.tfrecord')").fetchall() == [(3,)]
    os.remove(allowed / "out.tfrecord")


def test_without_the_sandbox_every_path_reads(duckdb_api, tree):
    con = tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))
    assert con.sql(f"SELECT sum(x) FROM tfrecord_scan('{tree}/outside.tfrecord')").fetchall() == [(300,)]
