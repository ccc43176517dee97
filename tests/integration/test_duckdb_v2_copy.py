"""Native COPY (FORMAT tfrecord) through the extension built on DuckDB 2's V2 C API.

Plain ``duckdb.connect()`` and ``LOAD`` of the V2 binary (no tfsql.connect()): COPY TO of
a table, a query or chosen columns, each column a feature named after it; files compared
byte for byte with `tfsql.write_tfrecord`'s; which targets are files and which are
directories, side by side with DuckDB's own ``FORMAT parquet``; patterns that leave the
target refused; the target's lock. Skipped where no V2 build exists for this duckdb.
"""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

import tfsql
from tfsql.duckdb.extension import v2_extension_path
from duckdb_copy_helpers import COPY_WRITER, TABLE_SQL, arrow_of, check_race, race

V2 = v2_extension_path(duckdb.__version__)
pytestmark = pytest.mark.skipif(V2 is None, reason=f"no V2 extension built for duckdb {duckdb.__version__}")


def connect() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con.sql(f"LOAD '{V2}'")
    con.sql(TABLE_SQL)
    return con


def files_under(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


@pytest.fixture
def con(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    connection = connect()
    yield connection
    connection.close()


# --------------------------------------------------------------------------------------
# Bytes: the same as write_tfrecord's
# --------------------------------------------------------------------------------------


def test_copy_table_to_a_file_writes_write_tfrecords_bytes(con, tmp_path):
    assert con.sql("COPY t TO 'x.tfrecord' (FORMAT tfrecord)").fetchall() == [(300,)]
    (tmp_path / "py").mkdir()
    tfsql.write_tfrecord(arrow_of(con.sql("SELECT * FROM t")), str(tmp_path / "py" / "x.tfrecord"))
    assert (tmp_path / "x.tfrecord").read_bytes() == (tmp_path / "py" / "x.tfrecord").read_bytes()
    back = tfsql.read_tfrecord(str(tmp_path / "x.tfrecord"))
    assert back.column("id").to_pylist() == list(range(300))
    assert back.column("maybe").to_pylist()[:5] == [None, 10, 20, 30, None]
    assert back.column("scores").to_pylist()[1] == [0.25, -1.5]
    assert files_under(tmp_path) == ["py/x.tfrecord", "x.tfrecord"]  # no temporary file, no lock file


def test_partitioned_gzip_copy_writes_write_tfrecords_bytes_per_partition(con, tmp_path):
    rows = con.sql("COPY t TO 'd' (FORMAT tfrecord, PARTITION_BY (part), COMPRESSION gzip, RETURN_FILES)").fetchall()
    assert rows[0][0] == 300
    # the function declares '.tfrecord'; a compressed file gets '.gz' after the name DuckDB
    # chose, which RETURN_FILES lists (the V2 API takes one extension per function)
    assert sorted(rows[0][1]) == [f"d/part={k}/data_0.tfrecord" for k in range(3)]
    # the target holds the columns' description beside the partitions (tfsql.description)
    assert files_under(tmp_path / "d") == ["features.json"] + [f"part={k}/data_0.tfrecord.gz" for k in range(3)]
    tfsql.write_tfrecord(
        arrow_of(con.sql("SELECT * FROM t")), str(tmp_path / "py"), partition_by=["part"], compression="gzip"
    )
    for k in range(3):
        (expected,) = (tmp_path / "py" / f"part={k}").iterdir()
        assert (tmp_path / "d" / f"part={k}" / "data_0.tfrecord.gz").read_bytes() == expected.read_bytes()
    back = tfsql.read_tfrecord(str(tmp_path / "d"))
    assert sorted(back.column("id").to_pylist()) == list(range(300))
    assert sorted(set(back.column("part").to_pylist())) == [0, 1, 2]
    # a single-file target keeps the name written, as write_tfrecord's does
    con.sql("COPY t TO 'one.tfrecord' (FORMAT tfrecord, COMPRESSION gzip)")
    tfsql.write_tfrecord(arrow_of(con.sql("SELECT * FROM t")), str(tmp_path / "py1.tfrecord"), compression="gzip")
    assert (tmp_path / "one.tfrecord").read_bytes() == (tmp_path / "py1.tfrecord").read_bytes()


@pytest.mark.parametrize(("compression", "suffix"), [("gzip", "gz"), ("zlib", "zz")])
def test_return_files_names_compressed_files_as_written_given_their_file_extension(con, tmp_path, compression, suffix):
    # The V2 API takes the extension DuckDB names files with once per copy function
    # (duckdb_v2_copy_function_set_file_extension, at registration), not per statement,
    # and no callback can rename a file DuckDB named: so a compressed file gets its '.gz'
    # / '.zz' after DuckDB's name and RETURN_FILES lists DuckDB's name, unless the
    # statement's FILE_EXTENSION already ends in it -- then both agree exactly.
    sql = "COPY t TO 'd' (FORMAT tfrecord, PARTITION_BY (part), COMPRESSION {c}{ext}, RETURN_FILES)"
    (said,) = con.sql(sql.format(c=compression, ext="")).fetchall()
    assert sorted(said[1]) == [f"d/part={k}/data_0.tfrecord" for k in range(3)]
    assert files_under(tmp_path / "d") == ["features.json"] + [f"part={k}/data_0.tfrecord.{suffix}" for k in range(3)]
    (said,) = con.sql(sql.format(c=compression, ext=f", FILE_EXTENSION 'tfrecord.{suffix}', OVERWRITE")).fetchall()
    assert sorted(said[1]) == [f"d/part={k}/data_0.tfrecord.{suffix}" for k in range(3)]
    assert files_under(tmp_path / "d") == ["features.json"] + [f"part={k}/data_0.tfrecord.{suffix}" for k in range(3)]
    back = tfsql.read_tfrecord(str(tmp_path / "d"))
    assert sorted(back.column("id").to_pylist()) == list(range(300))
    # a single file is written under the name given, which RETURN_FILES says
    assert con.sql(
        f"COPY t TO 'one.tfrecord' (FORMAT tfrecord, COMPRESSION {compression}, RETURN_FILES)"
    ).fetchall() == [(300, ["one.tfrecord"])]


def test_copy_of_a_query_and_of_chosen_columns_names_features_after_the_columns(con, tmp_path):
    con.sql(
        "COPY (SELECT id * 2 AS doubled, text AS \"Mixed Name\" FROM t WHERE id < 3) TO 'q.tfrecord' (FORMAT tfrecord)"
    )
    back = tfsql.read_tfrecord(str(tmp_path / "q.tfrecord"))
    assert back.column_names == ["doubled", "Mixed Name"]
    assert back.column("doubled").to_pylist() == [0, 2, 4]
    assert back.column("Mixed Name").to_pylist() in (["row 0", "row 1", "row 2"], [b"row 0", b"row 1", b"row 2"])
    con.sql("COPY t (text, id) TO 'c.tfrecord' (FORMAT tfrecord)")
    back = tfsql.read_tfrecord(str(tmp_path / "c.tfrecord"))
    assert back.column_names == ["text", "id"]
    assert back.column("id").to_pylist() == list(range(300))


def test_tfsql_options_from_the_option_spec(con, tmp_path):
    con.sql(
        "COPY (SELECT id, [[id, id + 1], [id + 2]] AS steps FROM t WHERE id < 4) TO 's.tfrecord' "
        "(FORMAT tfrecord, RECORD_TYPE sequence_example)"
    )
    back = tfsql.read_tfrecord(str(tmp_path / "s.tfrecord"), record_type="sequence_example")
    assert back.column("id").to_pylist() == [0, 1, 2, 3]
    assert back.column("steps").to_pylist()[1] == [[1, 2], [3]]
    con.sql("COPY (SELECT text FROM t WHERE id < 2) TO 'r.tfrecord' (FORMAT tfrecord, RECORD_TYPE bytes)")
    assert tfsql.read_tfrecord(str(tmp_path / "r.tfrecord"), record_type="bytes").column(0).to_pylist() == [
        b"row 0",
        b"row 1",
    ]
    con.sql("COPY t TO 'z.tfrecord.zz' (FORMAT tfrecord, COMPRESSION_LEVEL 9)")
    tfsql.write_tfrecord(arrow_of(con.sql("SELECT * FROM t")), str(tmp_path / "py.tfrecord.zz"), compression_level=9)
    assert (tmp_path / "z.tfrecord.zz").read_bytes() == (tmp_path / "py.tfrecord.zz").read_bytes()
    with pytest.raises(duckdb.BinderException, match='Unrecognized option "bogus" for COPY'):
        con.sql("COPY t TO 'b.tfrecord' (FORMAT tfrecord, BOGUS 1)")
    with pytest.raises(duckdb.BinderException, match="COPY option COMPRESSION_LEVEL needs COMPRESSION gzip or zlib"):
        con.sql("COPY t TO 'b.tfrecord' (FORMAT tfrecord, COMPRESSION none, COMPRESSION_LEVEL 3)")
    with pytest.raises(duckdb.BinderException, match="list of lists: it becomes a SequenceExample feature list"):
        con.sql("COPY (SELECT [[1]] AS x) TO 'b.tfrecord' (FORMAT tfrecord)")
    with pytest.raises(duckdb.BinderException, match=r"column \"d\" has a type no TFRecord feature holds \(INTERVAL\)"):
        con.sql("COPY (SELECT INTERVAL 1 DAY AS d) TO 'b.tfrecord' (FORMAT tfrecord)")
    assert not (tmp_path / "b.tfrecord").exists()


def test_index_sidecars_follow_the_final_names(con, tmp_path):
    from tfsql.record_index import indexed_count

    con.sql("COPY t TO 'idx' (FORMAT tfrecord, PARTITION_BY (part), INDEX)")
    assert [indexed_count(str(tmp_path / f"idx/part={k}/data_0.tfrecord")) for k in range(3)] == [100, 100, 100]
    con.sql("COPY t TO 'foo.tfrecord' (FORMAT tfrecord, INDEX)")
    con.sql("COPY (SELECT * FROM t WHERE id < 5) TO 'foo.tfrecord' (FORMAT tfrecord, INDEX)")  # DuckDB's tmp_ + move
    assert indexed_count(str(tmp_path / "foo.tfrecord")) == 5
    # a target named tmp_<name> keeps its own index; foo's is left alone (issue 34 item 5)
    con.sql("COPY (SELECT * FROM t WHERE id < 7) TO 'tmp_foo.tfrecord' (FORMAT tfrecord, INDEX)")
    assert indexed_count(str(tmp_path / "tmp_foo.tfrecord")) == 7
    assert indexed_count(str(tmp_path / "foo.tfrecord")) == 5
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == [
        ".foo.tfrecord.idx",
        ".tmp_foo.tfrecord.idx",
        "foo.tfrecord",
        "tmp_foo.tfrecord",
    ]


def test_return_stats_counts_rows_and_bytes(con, tmp_path):
    (row,) = con.sql("COPY t TO 'st.tfrecord' (FORMAT tfrecord, RETURN_STATS)").fetchall()
    assert row[0] == "st.tfrecord"
    assert row[1] == 300
    assert row[2] == (tmp_path / "st.tfrecord").stat().st_size


def test_duckdbs_write_modes(con, tmp_path):
    copy = "COPY t TO 'modes' (FORMAT tfrecord, PARTITION_BY (part)MODE)"
    con.sql(copy.replace("MODE", ""))
    con.sql(copy.replace("MODE", ", APPEND"))
    assert tfsql.read_tfrecord(str(tmp_path / "modes")).num_rows == 600
    con.sql(copy.replace("MODE", ", OVERWRITE"))
    assert tfsql.read_tfrecord(str(tmp_path / "modes")).num_rows == 300
    con.sql("COPY t TO 'named' (FORMAT tfrecord, PARTITION_BY (part), FILENAME_PATTERN 'shard_{i}')")
    assert files_under(tmp_path / "named") == ["features.json"] + [f"part={k}/shard_0.tfrecord" for k in range(3)]
    con.sql("COPY t TO 'threads' (FORMAT tfrecord, PER_THREAD_OUTPUT, COMPRESSION zlib)")
    assert {p.name[-12:] for p in (tmp_path / "threads").iterdir()} == {".tfrecord.zz"}
    assert tfsql.read_tfrecord(str(tmp_path / "threads")).num_rows == 300


# --------------------------------------------------------------------------------------
# Targets: files and directories as COPY ... (FORMAT parquet) has them
# --------------------------------------------------------------------------------------


def _existing_file(root: Path, ext: str) -> None:
    (root / f"old.{ext}").write_bytes(b"x")


def _existing_dir(root: Path, ext: str) -> None:
    (root / "olddir").mkdir()
    (root / "olddir" / "keep").write_bytes(b"x")


def _empty_dir(root: Path, ext: str) -> None:
    (root / "olddir").mkdir()


def _a_file_named_like_the_dir(root: Path, ext: str) -> None:
    (root / "olddir").write_bytes(b"x")


TARGETS = [
    ("new file", None, "new.EXT", ""),
    ("new directory name", None, "newdir", ""),
    ("name ending in /", None, "newdir/", ""),
    ("existing file", _existing_file, "old.EXT", ""),
    ("existing file, OVERWRITE", _existing_file, "old.EXT", ", OVERWRITE"),
    ("existing directory", _existing_dir, "olddir", ""),
    ("existing directory, OVERWRITE", _existing_dir, "olddir", ", OVERWRITE"),
    ("empty directory", _empty_dir, "olddir", ""),
    ("PARTITION_BY, new", None, "pnew", ", PARTITION_BY (part)"),
    ("PARTITION_BY, a name with a suffix", None, "new.EXT", ", PARTITION_BY (part)"),
    ("PARTITION_BY, a name ending in /", None, "newdir/", ", PARTITION_BY (part)"),
    ("PARTITION_BY, existing directory", _existing_dir, "olddir", ", PARTITION_BY (part)"),
    ("PARTITION_BY, empty directory", _empty_dir, "olddir", ", PARTITION_BY (part)"),
    ("PARTITION_BY, existing directory, OVERWRITE", _existing_dir, "olddir", ", PARTITION_BY (part), OVERWRITE"),
    ("PARTITION_BY, existing directory, APPEND", _existing_dir, "olddir", ", PARTITION_BY (part), APPEND"),
    ("PARTITION_BY, existing file", _a_file_named_like_the_dir, "olddir", ", PARTITION_BY (part)"),
    ("PER_THREAD_OUTPUT, new", None, "threads", ", PER_THREAD_OUTPUT"),
]


def _outcome(con, root: Path, fmt: str, setup, target: str, options: str):
    root.mkdir()
    if setup is not None:
        setup(root, fmt)
    try:
        con.sql(
            f"COPY (SELECT * FROM t WHERE id < 30) TO '{root.name}/{target.replace('EXT', fmt)}' (FORMAT {fmt}{options})"
        )
        result = "ok"
    except duckdb.Error as exc:
        result = type(exc).__name__
    uuid = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
    shape = []
    for path in sorted(root.rglob("*")):
        name = uuid.sub("UUID", str(path.relative_to(root))).replace(fmt, "EXT")
        shape.append(name + ("/" if path.is_dir() else ""))
    return result, shape


@pytest.mark.parametrize(("case", "setup", "target", "options"), TARGETS, ids=[c[0] for c in TARGETS])
def test_targets_are_files_or_directories_as_parquets_are(con, tmp_path, case, setup, target, options):
    parquet = _outcome(con, tmp_path / "parquet", "parquet", setup, target, options)
    tfrecord = _outcome(con, tmp_path / "tfrecord", "tfrecord", setup, target, options)
    # a partitioned target also holds the columns' description (tfsql.description)
    described = [name for name in tfrecord[1] if name.endswith("features.json")]
    expected_description = [f"{target.rstrip('/')}/features.json"]
    assert described == (expected_description if "PARTITION_BY" in options and tfrecord[0] == "ok" else [])
    assert (tfrecord[0], [name for name in tfrecord[1] if name not in described]) == parquet
    assert "_tfsql.lock" not in str(tfrecord)


def test_writing_a_directory_as_one_file_names_the_rule(con, tmp_path):
    (tmp_path / "olddir").mkdir()
    with pytest.raises(duckdb.IOException, match="cannot write the file '.*olddir': it is a directory"):
        con.sql("COPY t TO 'olddir' (FORMAT tfrecord, OVERWRITE)")


# --------------------------------------------------------------------------------------
# Safety: patterns that leave the target, the target's lock
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "option",
    [
        "FILENAME_PATTERN '../../../x_{i}'",
        "FILE_EXTENSION 'tfrecord/../../../../e'",
        "FILENAME_PATTERN '../x_{i}'",  # out of the partition directories: all into one file
    ],
)
def test_patterns_leaving_the_target_are_refused(con, tmp_path, option):
    (tmp_path / "a" / "b" / "target").mkdir(parents=True)
    (tmp_path / "a" / "b" / "target" / "keep.tfrecord").write_bytes(b"")
    with pytest.raises(duckdb.Error, match=r"outside the COPY's target|names two files of this COPY"):
        con.sql(f"COPY t TO 'a/b/target' (FORMAT tfrecord, PARTITION_BY (part), OVERWRITE_OR_IGNORE, {option})")
    assert files_under(tmp_path) == ["a/b/target/keep.tfrecord"]


def test_per_thread_pattern_leaving_the_target_is_refused(con, tmp_path):
    (tmp_path / "a").mkdir()
    with pytest.raises(duckdb.Error, match=r"DuckDB would write 'y_0.tfrecord', which is outside the COPY's target"):
        con.sql("COPY t TO 'a/pto' (FORMAT tfrecord, PER_THREAD_OUTPUT, FILENAME_PATTERN '../../y_{i}')")
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_copy_fails_clearly_while_write_tfrecord_holds_the_target(con, tmp_path):
    import fsspec

    from tfsql import locking

    target = tmp_path / "out"
    with locking.target_lock(fsspec.filesystem("file"), str(target)):
        with pytest.raises(
            duckdb.Error,
            match=r"is being written by another writer \(it holds the target's lock, a flock on that directory\)",
        ):
            con.sql(f"COPY t TO '{target}' (FORMAT tfrecord, PARTITION_BY (part), APPEND)")
        assert files_under(target) == []  # the lock is on the directory: no lock file
    con.sql(f"COPY t TO '{target}' (FORMAT tfrecord, PARTITION_BY (part), OVERWRITE)")
    assert files_under(target) == ["features.json"] + [f"part={k}/data_0.tfrecord" for k in range(3)]


def test_v1_and_v2_write_the_same_bytes(tmp_path):
    v1 = Path(tfsql.__file__).parent / "tfsql.duckdb_extension"
    if not v1.exists():
        pytest.skip("no v1 extension")
    con1 = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    con1.sql(f"LOAD '{v1}'")
    con1.sql(TABLE_SQL)
    con1.sql(f"COPY (SELECT t FROM t) TO '{tmp_path / 'v1.tfrecord'}' (FORMAT tfrecord)")
    con2 = connect()
    con2.sql(f"COPY t TO '{tmp_path / 'v2.tfrecord'}' (FORMAT tfrecord)")
    assert (tmp_path / "v1.tfrecord").read_bytes() == (tmp_path / "v2.tfrecord").read_bytes()
    # the v1 form (one STRUCT column: its fields are the features) works on V2 too
    con2.sql(f"COPY (SELECT t FROM t) TO '{tmp_path / 'v2struct.tfrecord'}' (FORMAT tfrecord)")
    assert (tmp_path / "v1.tfrecord").read_bytes() == (tmp_path / "v2struct.tfrecord").read_bytes()
    con2.sql(
        f"COPY (SELECT {{'id': id, 'text': text}} AS f, part FROM t) TO '{tmp_path / 'p'}' (FORMAT tfrecord, PARTITION_BY (part))"
    )
    back = tfsql.read_tfrecord(str(tmp_path / "p"))
    assert sorted(back.column_names) == ["id", "part", "text"]
    assert sorted(back.column("id").to_pylist()) == list(range(300))
    con2.sql(
        f"COPY (SELECT CASE WHEN id = 1 THEN NULL ELSE {{'id': id}} END AS f FROM t WHERE id < 3) TO '{tmp_path / 'n.tfrecord'}' (FORMAT tfrecord)"
    )
    assert tfsql.read_tfrecord(str(tmp_path / "n.tfrecord")).column("id").to_pylist() == [0, None, 2]


@pytest.mark.parametrize("mode", ["OVERWRITE", "APPEND"])
def test_two_concurrent_copies_never_mix_or_lose(con, tmp_path, mode):
    """Two processes COPY into one target at once: the target then holds exactly the rows
    of the writers that reported success (OVERWRITE: one writer's whole data; APPEND: the
    old data plus each successful writer's), and a failure says why (issue 34 item 4)."""
    from collections import Counter

    script = tmp_path / "concurrent_writer.py"
    script.write_text(COPY_WRITER)
    for trial in range(3):
        target = tmp_path / f"t{trial}"
        con.sql(
            f"COPY (SELECT 0 AS w, range AS i, '' AS pad, range % 3 AS p FROM range(30)) TO '{target}' "
            "(FORMAT tfrecord, PARTITION_BY (p))"
        )
        results = race(
            script,
            lambda w: [
                str(V2),
                f"COPY (SELECT {w} AS w, range AS i, repeat('x', 100) AS pad, range % 3 AS p "
                f"FROM range(60000)) TO '{target}' (FORMAT tfrecord, PARTITION_BY (p), {mode})",
            ],
        )
        counts = dict(Counter(tfsql.read_tfrecord(str(target)).column("w").to_pylist()))
        check_race(mode, results, counts, rows=60000, old_rows=30)
        assert [p.name for p in target.rglob("*") if p.name.startswith((".", "_tfsql"))] == []


# --------------------------------------------------------------------------------------
# COPY ... FROM
# --------------------------------------------------------------------------------------


def test_copy_from_reads_through_the_scan_and_casts_as_v1(con, tmp_path):
    rows = 3000  # more than one chunk
    tfsql.write_tfrecord(
        pa.table(
            {
                "id": pa.array(range(rows), pa.int64()),
                "s": [f"value-{i:05d}-and-more" for i in range(rows)],
                "f": pa.array([[0.5, float(i)] if i % 7 else None for i in range(rows)], pa.list_(pa.float32())),
            }
        ),
        "a.tfrecord",
    )
    con.sql("CREATE TABLE same (id BIGINT, s VARCHAR, f FLOAT[])")
    con.sql("CREATE TABLE casted (id INTEGER, s BLOB, f DOUBLE[])")
    assert con.sql("COPY same FROM 'a.tfrecord' (FORMAT tfrecord)").fetchall() == [(rows,)]
    assert con.sql("COPY casted FROM 'a.tfrecord' (FORMAT tfrecord, MAX_RECORD_BYTES '100000')").fetchall() == [(rows,)]
    expected = [(i, f"value-{i:05d}-and-more", [0.5, float(i)] if i % 7 else None) for i in range(rows)]
    assert con.sql("SELECT * FROM same ORDER BY id").fetchall() == expected
    assert con.sql("SELECT id, s::VARCHAR, f FROM casted ORDER BY id").fetchall() == expected
    assert con.sql("SELECT typeof(id), typeof(s), typeof(f) FROM casted LIMIT 1").fetchall() == [
        ("INTEGER", "BLOB", "DOUBLE[]")
    ]


def test_copy_from_refuses_as_v1(con, tmp_path):
    tfsql.write_tfrecord(pa.table({"id": pa.array([1, 300], pa.int64())}), "a.tfrecord")
    con.sql("CREATE TABLE small (id TINYINT)")
    with pytest.raises(duckdb.InvalidInputException, match='the value 300 does not fit the table\'s column "id"'):
        con.sql("COPY small FROM 'a.tfrecord' (FORMAT tfrecord)")
    con.sql("CREATE TABLE two (id BIGINT, x BIGINT)")
    with pytest.raises(duckdb.BinderException, match="column count mismatch: the table takes 2 columns but"):
        con.sql("COPY two FROM 'a.tfrecord' (FORMAT tfrecord)")
    con.sql("CREATE TABLE wide (id BIGINT)")
    with pytest.raises(duckdb.BinderException, match="'bogus' is not a supported option for copy function 'tfrecord'"):
        con.sql("COPY wide FROM 'a.tfrecord' (FORMAT tfrecord, BOGUS 1)")
    with pytest.raises(duckdb.BinderException, match="on_corrupt must be 'raise' or 'skip'"):
        con.sql("COPY wide FROM 'a.tfrecord' (FORMAT tfrecord, ON_CORRUPT 'maybe')")
    assert con.sql("SELECT count(*) FROM small").fetchall() == [(0,)]
