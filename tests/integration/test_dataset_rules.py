"""The dataset rules of the C core, seen through every front end (issues 22, 23 and 26).

One set of rules decides which listed paths are data, which directories give hive
columns, when a TFX / TFDS ``split`` column appears, how symbolic links, FIFOs and NUL
bytes are treated, and how a directory holding a crashed commit's intent record reads.
Each test runs the same source through ``tfsql.read_tfrecord`` / ``tfsql.dataset``,
Polars, ``tfsql.connect()``, plain DuckDB with the extension loaded and (where it says
something) the CLI, and requires the same answer, or the answer each ecosystem's own
reader gives where the front ends differ on purpose (hive columns: DuckDB's
``read_parquet`` against Polars' ``scan_parquet``).
"""

from __future__ import annotations

import collections
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tfsql
import tfsql.polars  # registers the namespaces
from tfsql.cli import main
from tfsql.duckdb.extension import extension_available

needs_extension = pytest.mark.skipif(not extension_available(), reason="built without the DuckDB extension")
REPO = Path(__file__).resolve().parents[2]
_ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}


def native() -> duckdb.DuckDBPyConnection:
    """Plain DuckDB with the extension loaded (no tfsql rewrite)."""
    return tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))


def sql_literal(path: Path | str) -> str:
    return "'" + str(path).replace("'", "''") + "'"


# --------------------------------------------------------------------------------------
# An empty directory or a glob matching nothing is an error naming it (issue 23, 5)
# --------------------------------------------------------------------------------------


@pytest.fixture
def empty_dir(tmp_path: Path) -> Path:
    target = tmp_path / "empty"
    target.mkdir()
    (target / "_SUCCESS").write_bytes(b"")
    return target


def test_empty_directory_is_an_error_in_python_and_polars(empty_dir):
    for read in (
        lambda p: tfsql.read_tfrecord(p),
        lambda p: tfsql.dataset(p, schema={"id": pa.int64()}),
        lambda p: pl.scan_tfrecord(p).collect(),
        lambda p: pl.read_tfrecord(p),
    ):
        with pytest.raises(tfsql.NoDataError, match=r"no files found in the directory '.*empty'"):
            read(str(empty_dir))
        with pytest.raises(tfsql.NoDataError, match=r"no files match the pattern '.*empty/\*\.tfrecord'"):
            read(str(empty_dir / "*.tfrecord"))


def test_empty_directory_is_an_error_in_the_cli(empty_dir, tmp_path, capsys):
    assert main(["count", str(empty_dir)]) == 1
    assert main(["schema", str(empty_dir)]) == 1
    assert main(["convert", str(empty_dir), str(tmp_path / "out.parquet"), "-q"]) == 1
    assert not (tmp_path / "out.parquet").exists()
    assert "no files found in the directory" in capsys.readouterr().err


@needs_extension
def test_empty_directory_is_an_error_in_duckdb(empty_dir):
    for source in (empty_dir, empty_dir / "*.tfrecord"):
        for options in ("", ", schema := {'id': 'BIGINT'}"):
            query = f"SELECT count(*) FROM tfrecord_scan({sql_literal(source)}{options})"
            for con in (native(), tfsql.connect()):
                with pytest.raises(duckdb.Error, match=r"no files (found in the directory|match the pattern)"):
                    con.sql(query).fetchall()


# --------------------------------------------------------------------------------------
# Hive columns: DuckDB front ends follow read_parquet, Python and Polars scan_parquet
# --------------------------------------------------------------------------------------


@pytest.fixture
def reviews(tmp_path: Path) -> Path:
    root = tmp_path / "reviews"
    for label in (0, 1):
        part = pa.table({"id": [10 * label, 10 * label + 1]})
        tfsql.write_tfrecord(part, root / f"label={label}" / "part-0.tfrecord.gz", compression="gzip")
        (root / f"label={label}").mkdir(exist_ok=True)
        pq.write_table(part, root / f"label={label}" / "part-0.parquet")
    return root


def test_read_parquet_takes_hive_columns_from_each_files_path(reviews):
    # the rule the DuckDB front ends follow, measured on the DuckDB that runs the tests
    con = duckdb.connect()
    got = con.sql(f"SELECT * FROM read_parquet({sql_literal(reviews / 'label=0' / '*.parquet')})")
    assert got.columns == ["id", "label"] and got.fetchall() == [(0, 0), (1, 0)]
    assert pl.scan_parquet(reviews / "label=0" / "*.parquet").collect().columns == ["id"]


@needs_extension
def test_duckdb_front_ends_keep_hive_columns_of_a_glob_under_a_partition(reviews):
    glob = sql_literal(reviews / "label=0" / "*.tfrecord.gz")
    named = sql_literal(reviews / "label=1" / "part-0.tfrecord.gz")
    for con in (native(), tfsql.connect()):
        for options in ("", ", hive_partitioning := true"):
            rel = con.sql(f"SELECT * FROM tfrecord_scan({glob}{options}) ORDER BY id")
            assert rel.columns == ["id", "label"] and rel.fetchall() == [(0, 0), (1, 0)]
        rel = con.sql(f"SELECT * FROM tfrecord_scan({named}) ORDER BY id")
        assert rel.fetchall() == [(10, 1), (11, 1)]
        rel = con.sql(f"SELECT * FROM tfrecord_scan({glob}, hive_partitioning := false)")
        assert rel.columns == ["id"]


def test_python_and_polars_take_hive_columns_below_the_named_root(reviews):
    glob = str(reviews / "label=0" / "*.tfrecord.gz")
    assert tfsql.read_tfrecord(glob).column_names == ["id"]
    assert pl.scan_tfrecord(glob).collect().columns == ["id"]
    rows = tfsql.read_tfrecord(str(reviews / "*" / "*.tfrecord.gz")).to_pylist()
    assert sorted(rows, key=lambda r: r["id"])[-1] == {"id": 11, "label": 1}


# --------------------------------------------------------------------------------------
# The split column belongs to the layout's root (issue 23, 7)
# --------------------------------------------------------------------------------------


@pytest.fixture
def penguin(tmp_path: Path) -> Path:
    root = tmp_path / "penguin"
    for split, ids in (("train", [1, 2]), ("eval", [3])):
        target = root / f"Split-{split}" / "data_tfrecord-00000-of-00001.gz"
        tfsql.write_tfrecord(pa.table({"id": ids}), target, compression="gzip")
    return root


def test_a_tfx_file_named_directly_reads_as_its_own_records(penguin, tmp_path):
    shard = str(penguin / "Split-train" / "data_tfrecord-00000-of-00001.gz")
    assert tfsql.read_tfrecord(shard).to_pylist() == [{"id": 1}, {"id": 2}]
    assert tfsql.read_tfrecord(shard, record_type="bytes").column_names == ["record"]
    assert pl.read_tfrecord(shard).columns == ["id"]
    assert tfsql.read_tfrecord(str(penguin / "Split-train")).column_names == ["id"]
    # it round-trips without a new feature
    tfsql.write_tfrecord(tfsql.read_tfrecord(shard), tmp_path / "copy.tfrecord")
    assert tfsql.read_tfrecord(str(tmp_path / "copy.tfrecord")).column_names == ["id"]
    # the layout's root still gives the split
    table = tfsql.read_tfrecord(str(penguin))
    assert sorted(table.to_pylist(), key=lambda r: r["id"]) == [
        {"id": 1, "split": "train"},
        {"id": 2, "split": "train"},
        {"id": 3, "split": "eval"},
    ]


@needs_extension
def test_a_tfx_file_named_directly_in_duckdb(penguin):
    shard = sql_literal(penguin / "Split-train" / "data_tfrecord-00000-of-00001.gz")
    for con in (native(), tfsql.connect()):
        assert con.sql(f"SELECT * FROM tfrecord_scan({shard})").columns == ["id"]
        rel = con.sql(f"SELECT * FROM tfrecord_scan({sql_literal(penguin)}) ORDER BY id")
        assert rel.fetchall() == [(1, "train"), (2, "train"), (3, "eval")]


# --------------------------------------------------------------------------------------
# Symbolic links, NUL bytes and FIFOs (issue 26, 4 and 5)
# --------------------------------------------------------------------------------------


@pytest.fixture
def looped(tmp_path: Path) -> Path:
    d = tmp_path / "d"
    tfsql.write_tfrecord(pa.table({"x": list(range(1000))}), d / "part.tfrecord")
    os.symlink(".", d / "a")
    return d


def test_a_symlink_loop_is_listed_once_in_python(looped):
    assert tfsql.read_tfrecord(str(looped)).num_rows == 1000
    assert tfsql.read_tfrecord(str(looped / "**" / "*.tfrecord")).num_rows == 1000
    # a glob component enters the link once: d/part.tfrecord and d/a/part.tfrecord
    assert tfsql.read_tfrecord(str(looped / "*")).num_rows == 2000


@needs_extension
def test_a_symlink_loop_is_listed_once_in_duckdb(looped):
    for con in (native(), tfsql.connect()):
        assert con.sql(f"SELECT count(*) FROM tfrecord_scan({sql_literal(looped)})").fetchall() == [(1000,)]
        glob = sql_literal(looped / "**" / "*.tfrecord")
        assert con.sql(f"SELECT count(*) FROM tfrecord_scan({glob})").fetchall() == [(1000,)]
        star = sql_literal(looped / "*")
        assert con.sql(f"SELECT count(*) FROM tfrecord_scan({star})").fetchall() == [(2000,)]


@needs_extension
def test_two_symlink_loops_do_not_hang_the_bind(looped):
    os.symlink(".", looped / "b")
    script = textwrap.dedent(
        f"""
        import duckdb, tfsql
        con = tfsql.load_extension(duckdb.connect(config={{"allow_unsigned_extensions": "true"}}))
        print(con.sql("SELECT count(*) FROM tfrecord_scan({sql_literal(looped)})").fetchall())
        print(con.sql("SELECT count(*) FROM tfrecord_scan({sql_literal(looped / "**")})").fetchall())
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, env=_ENV)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["[(1000,)]", "[(1000,)]"]


@needs_extension
def test_a_nul_byte_in_a_path_is_an_error(tmp_path):
    small = tmp_path / "small.tfrecord"
    tfsql.write_tfrecord(pa.table({"x": [1]}), small)
    query = f"SELECT * FROM tfrecord_scan({sql_literal(small)} || chr(0) || 'x')"
    plain, front = native(), tfsql.connect()
    with pytest.raises(duckdb.Error, match="holds a NUL byte"):
        plain.sql(query).fetchall()
    with pytest.raises(duckdb.Error, match="holds a NUL byte"):
        plain.execute("SELECT * FROM tfrecord_scan(?)", [f"{small}\0x"]).fetchall()
    with pytest.raises((duckdb.Error, ValueError), match="holds a NUL byte"):
        front.sql("SELECT * FROM tfrecord_scan(?)", params=[f"{small}\0x"]).fetchall()
    with pytest.raises(ValueError, match="holds a NUL byte"):
        tfsql.read_tfrecord(str(small) + "\0x")


def _engine_at_least(*version: int) -> bool:
    return tuple(int(part) for part in duckdb.__version__.split(".")[:3] if part.isdigit()) >= version


@needs_extension
@pytest.mark.skipif(
    not _engine_at_least(1, 5, 6),
    reason="DuckDB before 1.5.6 gives extensions no way to see a NUL after non-ASCII text (docs/duckdb-extension.md)",
)
@pytest.mark.parametrize("name", ["é", "a'b", "x\\y", "日本'é\\"])
def test_a_nul_byte_after_any_text_is_an_error(tmp_path, name):
    # The extension once asked only DuckDB's BLOB cast, which refuses non-ASCII text and
    # reads backslash escapes: '/p/é' || chr(0) || 'x' silently read '/p/é'.
    path = tmp_path / f"{name}.tfrecord"
    tfsql.write_tfrecord(pa.table({"x": [7]}), path)
    con = native()
    assert con.sql(f"SELECT x FROM tfrecord_scan({sql_literal(path)})").fetchall() == [(7,)]
    for query in (
        f"SELECT x FROM tfrecord_scan({sql_literal(path)} || chr(0) || 'x')",
        f"SELECT x FROM tfrecord_scan({sql_literal(path)} || chr(0))",
        f"SELECT x FROM tfrecord_scan([{sql_literal(path)}, {sql_literal(path)} || chr(0) || 'x'])",
    ):
        with pytest.raises(duckdb.BinderException, match="holds a NUL byte, which no file name can hold"):
            con.sql(query).fetchall()
    with pytest.raises(duckdb.BinderException, match="holds a NUL byte"):
        con.execute("SELECT x FROM tfrecord_scan(?)", [f"{path}\0x"]).fetchall()


def _fifo_read(code: str, fifo: Path) -> subprocess.CompletedProcess:
    """Run `code` (reading the FIFO) in a subprocess while a writer feeds the FIFO."""
    feeder = subprocess.Popen(
        [sys.executable, "-c", f"open({str(fifo)!r}, 'wb').write(b'x' * 100)"], stdout=subprocess.DEVNULL
    )
    try:
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=_ENV)
    finally:
        feeder.kill()
        feeder.wait()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_refused_with_a_message(tmp_path):
    fifo = tmp_path / "records.tfrecord"
    os.mkfifo(fifo)
    readers = [
        f"import tfsql; tfsql.read_tfrecord({str(fifo)!r})",
        f"import tfsql; tfsql.read_tfrecord({str(tmp_path)!r})",
    ]
    if extension_available():
        load = "import duckdb, tfsql; con = tfsql.load_extension(duckdb.connect(config={'allow_unsigned_extensions': 'true'}))"
        readers += [
            f"{load}; con.sql({f'SELECT count(*) FROM tfrecord_scan({sql_literal(source)})'!r}).fetchall()"
            for source in (fifo, tmp_path)
        ]
    for code in readers:
        done = _fifo_read(code, fifo)
        assert done.returncode != 0, code
        assert "is not a regular file (a FIFO, socket or device)" in done.stderr, done.stderr


# --------------------------------------------------------------------------------------
# A crashed commit reads as its recovery will leave it, in every front end (issue 26, 6)
# --------------------------------------------------------------------------------------

_CRASHING_WRITER = textwrap.dedent(
    """
    import os, sys
    import pyarrow as pa
    import tfsql
    from tfsql import commit

    target, step = sys.argv[1], int(sys.argv[2])
    done = [0]

    def counted(method):
        def run(*args, **kwargs):
            done[0] += 1
            if done[0] == step:
                os._exit(9)  # as a kill -9 at this step of the commit
            return method(*args, **kwargs)
        return run

    for name in ("rename", "makedirs", "write_atomic", "touch", "remove"):
        setattr(commit._Ops, name, counted(getattr(commit._Ops, name)))
    table = pa.table({"id": [100 + i for i in range(9)], "k": [i % 3 for i in range(9)]})
    tfsql.write_tfrecord(table, target, mode="overwrite", partition_by="k", max_rows_per_file=2)
    """
)


def _content(rows: list[tuple]) -> collections.Counter:
    return collections.Counter(rows)


@needs_extension
def test_a_killed_partitioned_overwrite_reads_old_or_new_in_every_front_end(tmp_path):
    old = pa.table({"id": list(range(9)), "k": [i % 3 for i in range(9)]})
    old_rows = _content([(r["id"], r["k"]) for r in old.to_pylist()])
    new_rows = _content([(100 + i, i % 3) for i in range(9)])
    outcomes = collections.Counter()
    step = 0
    while True:
        step += 1
        target = tmp_path / f"out{step}"
        tfsql.write_tfrecord(old, target, partition_by="k", max_rows_per_file=2)
        writer = subprocess.run(
            [sys.executable, "-c", _CRASHING_WRITER, str(target), str(step)], capture_output=True, timeout=60, env=_ENV
        )
        if writer.returncode == 0:
            break  # every step has been cut once
        assert writer.returncode == 9, writer.stderr
        python = tfsql.read_tfrecord(str(target))
        seen = {"read_tfrecord": _content(list(zip(python.column("id").to_pylist(), python.column("k").to_pylist())))}
        query = f"SELECT id, k FROM tfrecord_scan({sql_literal(target)})"
        plain, front = native(), tfsql.connect()  # duckdb 1.4 closes a connection nothing holds
        seen["duckdb"] = _content(plain.sql(query).fetchall())
        seen["connect"] = _content(front.sql(query).fetchall())
        assert seen["read_tfrecord"] in (old_rows, new_rows), step
        assert seen["duckdb"] == seen["read_tfrecord"], step
        assert seen["connect"] == seen["read_tfrecord"], step
        outcomes["old" if seen["read_tfrecord"] == old_rows else "new"] += 1
    assert step > 8 and outcomes["old"] > 0 and outcomes["new"] > 0, outcomes
