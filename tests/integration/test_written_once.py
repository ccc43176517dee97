"""Rules every writer and reader shares, written once (issue 30 item 3, issue 33 item 3,
issue 34 items 3-5):

- the file-name table of `tfsql.naming` (the TFRecord suffixes, the compression a name
  says), which the extension gets generated into ``options_gen.h``;
- a name that says a compression holds that compression, in every writer;
- an empty-string hive partition value is written ``k=`` by every writer and reads back
  as ``""`` (a null as ``__HIVE_DEFAULT_PARTITION__``, read back as null) everywhere;
- the native COPY's options come from the option spec (every RECORD_TYPE spelling);
- the native COPY names index sidecars after the file written and takes the target lock
  of `tfsql.locking`.
"""

from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

import tfsql
import tfsql.polars  # noqa: F401  (registers the namespaces)
from tfsql.cli import main as cli_main
from tfsql.duckdb.extension import extension_available
from tfsql.naming import NAME_COMPRESSIONS, TFRECORD_SUFFIXES, compression_from_name
from tfsql.options import RECORD_TYPES
from duckdb_copy_helpers import COPY_WRITER, check_race, needs_v2_copy, race

pl = pytest.importorskip("polars")


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.lstrip("v").split("-")[0].split(".")[:3])


HAS_EXTENSION = extension_available()
HAS_COPY = HAS_EXTENSION and _version(duckdb.__version__) >= (1, 5, 6)
needs_extension = pytest.mark.skipif(not HAS_EXTENSION, reason="this tfsql was built without its DuckDB extension")
needs_copy = pytest.mark.skipif(not HAS_COPY, reason="native COPY needs the extension and DuckDB >= 1.5.6")


def native() -> duckdb.DuckDBPyConnection:
    return tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))


def magic(path: Path) -> str:
    """What a file holds, by its first bytes."""
    head = path.read_bytes()[:2]
    if head == b"\x1f\x8b":
        return "gzip"
    if head[:1] == b"\x78":
        return "zlib"
    return "none"


# --------------------------------------------------------------------------------------
# The name table
# --------------------------------------------------------------------------------------


def test_the_name_table_says_gzip_for_gz_and_gzip_and_zlib_for_zz_and_zlib():
    assert NAME_COMPRESSIONS == {".gz": "gzip", ".gzip": "gzip", ".zz": "zlib", ".zlib": "zlib"}
    assert [compression_from_name(f"x.tfrecord{s}") for s in (".GZ", ".gzip", ".zz", ".ZLIB", "")] == [
        "gzip",
        "gzip",
        "zlib",
        "zlib",
        None,
    ]


@needs_extension
@pytest.mark.parametrize("suffix", TFRECORD_SUFFIXES)
def test_every_suffix_is_a_tfrecord_name_to_every_front_end(tmp_path, suffix):
    """Written with each suffix by write_tfrecord (a single file holding the compression
    its name says), then read by name by every reader; FROM 'x<suffix>' works natively
    and through tfsql.connect()."""
    path = tmp_path / f"x{suffix}"
    tfsql.write_tfrecord(pa.table({"v": [1, 2]}), str(path))
    assert path.is_file()
    assert magic(path) == (compression_from_name(suffix) or "none")
    assert tfsql.read_tfrecord(str(path)).column("v").to_pylist() == [1, 2]
    assert pl.scan_tfrecord(str(path)).collect()["v"].to_list() == [1, 2]
    plain = native()
    assert plain.sql(f"SELECT v FROM '{path}' ORDER BY v").fetchall() == [(1,), (2,)]
    con = tfsql.connect()  # held while fetching (duckdb 1.4 closes it with its last reference)
    assert con.sql(f"SELECT v FROM '{path}' ORDER BY v").fetchall() == [(1,), (2,)]


# --------------------------------------------------------------------------------------
# A name that says a compression holds it (issue 33 item 3)
# --------------------------------------------------------------------------------------

MISMATCH = r"'x\.tfrecord\.gz' ends in '\.gz', which says gzip, but the file would hold zlib"


def test_write_tfrecord_refuses_zlib_under_a_gz_name(tmp_path):
    with pytest.raises(ValueError, match=MISMATCH + r".*name it 'x\.tfrecord\.zz' or pass compression='gzip'"):
        tfsql.write_tfrecord(pa.table({"v": [1]}), str(tmp_path / "x.tfrecord.gz"), compression="zlib")
    with pytest.raises(
        ValueError, match=r"'x\.tfrecord\.zlib' ends in '\.zlib', which says zlib, but the file would hold gzip"
    ):
        tfsql.write_tfrecord(pa.table({"v": [1]}), str(tmp_path / "x.tfrecord.zlib"), compression="gzip")
    with pytest.raises(
        ValueError, match=r"filename_pattern 'p_\{i\}\.tfrecord\.gz' makes names such as 'p_0\.tfrecord\.gz'"
    ):
        tfsql.write_tfrecord(pa.table({"v": [1]}), str(tmp_path / "d"), filename_pattern="p_{i}.tfrecord.gz")
    assert os.listdir(tmp_path) == []
    tfsql.write_tfrecord(pa.table({"v": [1]}), str(tmp_path / "x.tfrecord.gzip"), compression="gzip")
    assert gzip.decompress((tmp_path / "x.tfrecord.gzip").read_bytes())


def test_polars_refuses_the_mismatch(tmp_path):
    frame = pl.DataFrame({"v": [1]})
    with pytest.raises(ValueError, match=MISMATCH):
        frame.tfrecord.write(str(tmp_path / "x.tfrecord.gz"), compression="zlib")
    with pytest.raises(ValueError, match=MISMATCH):
        frame.lazy().tfrecord.sink(str(tmp_path / "x.tfrecord.gz"), compression="zlib")
    assert os.listdir(tmp_path) == []


@needs_v2_copy
def test_connect_copy_and_the_cli_refuse_the_mismatch(tmp_path, capsys):
    con = tfsql.connect()
    with pytest.raises(Exception, match=MISMATCH[1:]):  # the native COPY names the whole path
        con.sql(f"COPY (SELECT 1 AS v) TO '{tmp_path / 'x.tfrecord.gz'}' (FORMAT tfrecord, COMPRESSION zlib)")
    source = tmp_path / "in.parquet"
    duckdb.sql(f"COPY (SELECT 1 AS v) TO '{source}' (FORMAT parquet)")
    assert cli_main(["convert", str(source), str(tmp_path / "x.tfrecord.gz"), "--compression", "zlib"]) != 0
    assert "ends in '.gz', which says gzip, but the file would hold zlib" in capsys.readouterr().err
    assert sorted(os.listdir(tmp_path)) == ["in.parquet"]


def test_spark_plan_refuses_the_mismatch(tmp_path):
    pytest.importorskip("pyspark.sql.datasource", reason="needs pyspark >= 4.0")
    from pyspark.sql.types import LongType, StructField, StructType

    from tfsql.spark.writing import plan_write

    schema = StructType([StructField("v", LongType())])
    options = {"path": str(tmp_path / "o"), "filenamePattern": "p-{i}.tfrecord.gz", "codec": "zlib"}
    with pytest.raises(
        ValueError, match=r"filenamePattern 'p-\{i\}\.tfrecord\.gz' .* which says gzip, but the file would hold zlib"
    ):
        plan_write(options, schema, False)


@needs_copy
def test_native_copy_refuses_the_mismatch(tmp_path):
    con = native()
    with pytest.raises(
        duckdb.Error, match=r"x\.tfrecord\.gz' ends in '\.gz', which says gzip, but the file would hold zlib"
    ):
        con.sql(f"COPY (SELECT {{'v': 1}}) TO '{tmp_path / 'x.tfrecord.gz'}' (FORMAT tfrecord, COMPRESSION zlib)")
    with pytest.raises(duckdb.Error, match=r"ends in '\.zlib', which says zlib, but the file would hold gzip"):
        con.sql(
            f"COPY (SELECT {{'v': 1}} AS f, 1 AS p) TO '{tmp_path / 'd'}' "
            "(FORMAT tfrecord, PARTITION_BY (p), FILE_EXTENSION 'tfrecord.zlib', CODEC gzip)"
        )
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == []
    con.sql(f"COPY (SELECT {{'v': 1}}) TO '{tmp_path / 'y.tfrecord.zlib'}' (FORMAT tfrecord)")
    assert zlib.decompress((tmp_path / "y.tfrecord.zlib").read_bytes())


# --------------------------------------------------------------------------------------
# The hive default partition: one rule for every writer
# --------------------------------------------------------------------------------------

PARTITIONED = pa.table({"x": [1, 2, 3], "p": ["", None, "a"]})
EXPECTED = [(1, ""), (2, None), (3, "a")]


def _written_by(writer: str, target: Path) -> None:
    if writer == "write_tfrecord":
        tfsql.write_tfrecord(PARTITIONED, str(target), partition_by=["p"])
    elif writer == "polars":
        pl.from_arrow(PARTITIONED).tfrecord.write(str(target), partition_by=["p"])
    elif writer == "connect":
        con = tfsql.connect()
        con.register("t", PARTITIONED)
        con.sql(f"COPY (SELECT x, p FROM t) TO '{target}' (FORMAT tfrecord, PARTITION_BY (p))")
    else:
        con = native()
        con.register("t", PARTITIONED)
        con.sql(f"COPY (SELECT {{'x': x}} AS f, p FROM t) TO '{target}' (FORMAT tfrecord, PARTITION_BY (p))")


@pytest.mark.parametrize("writer", ["native", pytest.param("connect", marks=needs_v2_copy), "write_tfrecord", "polars"])
def test_an_empty_partition_value_reads_back_as_empty_everywhere(tmp_path, writer):
    if writer == "native" and not HAS_COPY:
        pytest.skip("native COPY needs the extension and DuckDB >= 1.5.6")
    target = tmp_path / "out"
    _written_by(writer, target)
    assert sorted(d for d in os.listdir(target) if not d.startswith("_")) == [
        "features.json",
        "p=",
        "p=__HIVE_DEFAULT_PARTITION__",
        "p=a",
    ]
    con = tfsql.connect()  # held while fetching (duckdb 1.4 closes it with its last reference)
    rows = {
        "python": [tuple(r.values()) for r in tfsql.read_tfrecord(str(target)).select(["x", "p"]).to_pylist()],
        "polars": pl.scan_tfrecord(str(target)).select("x", "p").collect().rows(),
        "connect": con.sql(f"SELECT x, p FROM tfrecord_scan('{target}')").fetchall(),
    }
    if HAS_EXTENSION:
        plain = native()
        rows["native"] = plain.sql(f"SELECT x, p FROM tfrecord_scan('{target}')").fetchall()
    for reader, got in rows.items():
        assert sorted(got, key=repr) == sorted(EXPECTED, key=repr), reader


# --------------------------------------------------------------------------------------
# Native COPY: options from the spec, only inside the target, sidecars, the lock
# --------------------------------------------------------------------------------------


@needs_copy
@pytest.mark.parametrize("spelling", sorted(RECORD_TYPES) + ["Example", "SequenceExample", "ByteArray"])
def test_every_record_type_spelling_in_native_copy(tmp_path, spelling):
    """Each name RECORD_TYPES accepts writes what write_tfrecord writes for it."""
    kind = RECORD_TYPES[spelling.lower()]
    if kind == "bytes":
        query, table = "SELECT 'raw-' || range::VARCHAR FROM range(3)", pa.table({"r": [b"raw-0", b"raw-1", b"raw-2"]})
    elif kind == "sequence_example":
        query = "SELECT {'ids': [[range], [range, 1]]} FROM range(3)"
        table = pa.table({"ids": [[[i], [i, 1]] for i in range(3)]})
    else:
        query, table = "SELECT {'id': range} FROM range(3)", pa.table({"id": [0, 1, 2]})
    out = tmp_path / "native.tfrecord"
    native().sql(f"COPY ({query}) TO '{out}' (FORMAT tfrecord, RECORD_TYPE '{spelling}')")
    tfsql.write_tfrecord(table, str(tmp_path / "python.tfrecord"), record_type=kind)
    assert out.read_bytes() == (tmp_path / "python.tfrecord").read_bytes()


@needs_copy
def test_native_copy_option_errors_come_from_the_spec():
    con = native()
    with pytest.raises(
        duckdb.Error, match=r"COPY option RECORD_TYPE expects example, sequence_example, bytes, got 'proto'"
    ):
        con.sql("COPY (SELECT {'v': 1}) TO 'never.tfrecord' (FORMAT tfrecord, RECORD_TYPE proto)")
    with pytest.raises(
        duckdb.Error, match=r"COPY option MAX_RECORD_BYTES \(refuse a record larger .*tfsql\.write_tfrecord"
    ):
        con.sql("COPY (SELECT {'v': 1}) TO 'never.tfrecord' (FORMAT tfrecord, MAX_RECORD_BYTES 10)")
    with pytest.raises(
        duckdb.Error, match=r"COPY options (COMPRESSION and CODEC|CODEC and COMPRESSION) contradict each other"
    ):
        con.sql("COPY (SELECT {'v': 1}) TO 'never.tfrecord' (FORMAT tfrecord, COMPRESSION gzip, CODEC gzip)")
    assert not os.path.exists("never.tfrecord")


@needs_copy
def test_an_index_follows_the_file_written_not_a_neighbour_named_like_it(tmp_path):
    """COPY TO 'tmp_foo.tfrecord' next to foo.tfrecord: foo's index is not touched, and
    tmp_foo gets its own; DuckDB's own tmp_ file (overwriting foo) moves its index along."""
    from tfsql.record_index import indexed_count

    con = native()
    con.sql(f"COPY (SELECT {{'v': range}} FROM range(100)) TO '{tmp_path / 'foo.tfrecord'}' (FORMAT tfrecord, INDEX)")
    foo_index = (tmp_path / ".foo.tfrecord.idx").read_bytes()
    con.sql(f"COPY (SELECT {{'v': range}} FROM range(7)) TO '{tmp_path / 'tmp_foo.tfrecord'}' (FORMAT tfrecord, INDEX)")
    assert (tmp_path / ".foo.tfrecord.idx").read_bytes() == foo_index
    assert indexed_count(str(tmp_path / "foo.tfrecord")) == 100
    assert indexed_count(str(tmp_path / "tmp_foo.tfrecord")) == 7
    con.sql(f"COPY (SELECT {{'v': range}} FROM range(5)) TO '{tmp_path / 'foo.tfrecord'}' (FORMAT tfrecord, INDEX)")
    assert indexed_count(str(tmp_path / "foo.tfrecord")) == 5
    # DuckDB wrote that COPY under 'tmp_foo.tfrecord' (its USE_TMP_FILE, replacing the file
    # of that name) and moved it to foo.tfrecord: the index went along, none is left behind
    assert sorted(os.listdir(tmp_path)) == [".foo.tfrecord.idx", "foo.tfrecord"]


@needs_copy
def test_native_copy_fails_clearly_while_write_tfrecord_holds_the_target(tmp_path):
    from tfsql import locking
    import fsspec

    target = tmp_path / "out"
    with locking.target_lock(fsspec.filesystem("file"), str(target)):
        with pytest.raises(
            duckdb.Error,
            match=r"is being written by another writer \(it holds the target's lock, a flock on that directory\); "
            "nothing was written",
        ):
            native().sql(
                f"COPY (SELECT {{'v': 1}} AS f, 1 AS p) TO '{target}' (FORMAT tfrecord, PARTITION_BY (p), APPEND)"
            )
        assert [p.name for p in target.rglob("*") if p.is_file()] == []  # no lock file: a flock on the directory
    con = native()  # and once released, a COPY writes, then leaves no lock file
    con.sql(f"COPY (SELECT {{'v': 1}} AS f, 1 AS p) TO '{target}' (FORMAT tfrecord, PARTITION_BY (p), OVERWRITE)")
    con.sql(f"COPY (SELECT {{'v': 2}} AS f, 1 AS p) TO '{target}' (FORMAT tfrecord, PARTITION_BY (p), OVERWRITE)")
    assert sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file()) == [
        "features.json",
        "p=1/data_0.tfrecord",
    ]
    assert tfsql.read_tfrecord(str(target)).column("v").to_pylist() == [2]


@needs_copy
@pytest.mark.parametrize("mode", ["OVERWRITE", "APPEND"])
def test_two_concurrent_native_copies_never_mix_or_lose(tmp_path, mode):
    """Two processes COPY into one target at once, several trials: the target then holds
    exactly the rows of the writers that reported success (OVERWRITE: one writer's whole
    data; APPEND: the old data plus each successful writer's), and a failure says why."""
    script = tmp_path / "concurrent_writer.py"  # (not copy.py: it would shadow the copy module)
    script.write_text(COPY_WRITER)
    for trial in range(6):
        target = tmp_path / f"t{trial}"
        con = native()
        con.sql(
            f"COPY (SELECT {{'w': 0, 'i': range, 'pad': ''}} AS f, range % 3 AS p FROM range(30)) TO '{target}' (FORMAT tfrecord, PARTITION_BY (p))"
        )
        results = race(
            script,
            lambda w: [
                tfsql.duckdb_extension_path(),
                f"COPY (SELECT {{'w': {w}, 'i': range, 'pad': repeat('x', 100)}} AS f, range % 3 AS p "
                f"FROM range(60000)) TO '{target}' (FORMAT tfrecord, PARTITION_BY (p), {mode})",
            ],
        )
        counts = dict(
            native()
            .sql(f"SELECT f.w, count(*) FROM (SELECT {{'w': w}} AS f FROM tfrecord_scan('{target}')) GROUP BY ALL")
            .fetchall()
        )
        check_race(mode, results, counts, rows=60000, old_rows=30)
        assert [p.name for p in target.rglob("*") if p.name.startswith((".", "_tfsql"))] == []


@pytest.mark.skipif("duckdb-v" not in tfsql.duckdb_extension_path(), reason="the V2 build's COPY")
def test_copy_picks_tfrecord_by_the_tfrecord_extension_and_by_format_otherwise(tmp_path):
    """DuckDB picks a COPY format by the target's extension: the extension declares
    ``tfrecord`` (so ``x.tfrecord`` and ``x.tfrecord.gz``); any other TFRecord suffix
    (``.tfrec``, ``.tfrecords``) needs ``FORMAT tfrecord`` (docs/duckdb-extension.md)."""
    con = tfsql.connect()
    con.sql(f"COPY (SELECT 7 AS v) TO '{tmp_path / 'x.tfrecord'}'")
    con.sql(f"COPY (SELECT 8 AS v) TO '{tmp_path / 'x.TFREC'}' (FORMAT tfrecord)")
    assert tfsql.read_tfrecord(str(tmp_path / "x.tfrecord")).column("v").to_pylist() == [7]
    assert tfsql.read_tfrecord(str(tmp_path / "x.TFREC")).column("v").to_pylist() == [8]
