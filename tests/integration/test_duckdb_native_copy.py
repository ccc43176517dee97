"""The extension alone as the SQL plugin: native COPY TO / FROM, tfrecord_schema, tfrecord_metadata.

Plain ``duckdb.connect()`` with only ``tfsql.duckdb_extension`` loaded (no tfsql.connect()
rewriting). COPY functions exist in DuckDB's C API from 1.5.6: on such an engine the
COPY tests write and read; on an older one (run the suite once in an environment with
``duckdb==1.4.*``) the extension still loads and reads, and DuckDB refuses the COPY.
The ``duckdb`` command (``pip install duckdb-cli``, 1.5.6) runs a whole prep round trip.
Written files are compared byte for byte with `tfsql.write_tfrecord`'s and decoded by the
independent reference decoder (and by TensorFlow, where it is installed).
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import zlib
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pytest

import tfsql
from tfsql import _reference as ref
from tfsql._proto import Example
from tfsql.duckdb.extension import ExtensionNotAvailable, extension_available, v2_extension_path
from duckdb_copy_helpers import TABLE_SQL, arrow_of, needs_copy_functions

pytestmark = pytest.mark.skipif(not extension_available(), reason="this tfsql was built without its DuckDB extension")


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.lstrip("v").split("-")[0].split(".")[:3])


HAS_COPY = _version(duckdb.__version__) >= (1, 5, 6)
needs_copy = pytest.mark.skipif(not HAS_COPY, reason="COPY functions need DuckDB >= 1.5.6")


def reference_payloads(path) -> list[bytes]:
    """The records of a file by the reference decoder (CRCs checked; the whole file must
    be whole records): an independent reading of what the extension wrote."""
    data = Path(path).read_bytes()
    if str(path).endswith(".gz"):
        data = gzip.decompress(data)
    elif str(path).endswith(".zz"):
        data = zlib.decompress(data)
    offsets, lengths, end, status = ref.scan_frames(data, verify=True)
    assert status == ref.FRAME_OK and end == len(data), f"{path}: damaged at byte {end} (status {status})"
    starts = np.frombuffer(offsets, dtype=np.uint64)
    sizes = np.frombuffer(lengths, dtype=np.uint64)
    return [data[int(a) : int(a) + int(n)] for a, n in zip(starts, sizes)]


def features(payload: bytes) -> dict:
    """An Example's features as {name: (kind, values)}."""
    example = Example.FromString(payload)
    return {
        name: (f.WhichOneof("kind"), list(getattr(f, f.WhichOneof("kind")).value) if f.WhichOneof("kind") else [])
        for name, f in example.features.feature.items()
    }


def native() -> duckdb.DuckDBPyConnection:
    con = tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))
    con.sql(TABLE_SQL)
    return con


def loads_v2() -> bool:
    """Whether tfsql.load_extension loads the V2 build here (TFSQL_DUCKDB_API, V2_BY_DEFAULT)."""
    v2 = v2_extension_path(duckdb.__version__)
    return v2 is not None and tfsql.duckdb_extension_path() == v2


@pytest.fixture
def con(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    connection = native()
    yield connection
    connection.close()


# --------------------------------------------------------------------------------------
# COPY ... TO
# --------------------------------------------------------------------------------------


@needs_copy
@pytest.mark.parametrize(
    ("name", "options", "python_options"),
    [
        ("out.tfrecord", "", {}),
        ("out.tfrecord.gz", ", COMPRESSION_LEVEL 9", {"compression": "gzip", "compression_level": 9}),
        ("out.tfrecord.zz", "", {"compression": "zlib"}),
        ("out.tfrecord", ", COMPRESSION gzip", {"compression": "gzip"}),
    ],
)
def test_copy_to_writes_the_bytes_write_tfrecord_writes(con, tmp_path, name, options, python_options):
    # (execute: duckdb 1.5's con.sql() returns no relation for a COPY)
    rows = con.execute(f"COPY (SELECT t FROM t ORDER BY id) TO '{name}' (FORMAT tfrecord{options})").fetchall()
    assert rows == [(300,)]
    expected = tmp_path / "python"
    expected.mkdir()
    tfsql.write_tfrecord(arrow_of(con.sql("SELECT * FROM t ORDER BY id")), str(expected / name), **python_options)
    assert (tmp_path / name).read_bytes() == (expected / name).read_bytes()
    back = tfsql.read_tfrecord(str(tmp_path / name))
    assert back.column("id").to_pylist() == list(range(300))
    assert back.column("maybe").to_pylist()[:5] == [None, 10, 20, 30, None]
    assert back.column("tags").to_pylist()[:2] == [[], [b"a", b"b"]] or back.column("tags").to_pylist()[:2] == [
        [],
        ["a", "b"],
    ]
    leftovers = [p.name for p in tmp_path.iterdir() if "tfsql-tmp" in p.name]
    assert leftovers == []


@needs_copy
def test_reference_decoder_reads_every_native_file(con, tmp_path):
    con.sql("COPY (SELECT t FROM t ORDER BY id) TO 'ref.tfrecord' (FORMAT tfrecord)")
    records = [features(p) for p in reference_payloads(tmp_path / "ref.tfrecord")]
    assert len(records) == 300
    assert records[4] == {
        "id": ("int64_list", [4]),
        "part": ("int64_list", [1]),
        "scores": ("float_list", [1.0, -1.5]),
        "text": ("bytes_list", [b"row 4"]),
        "even": ("int64_list", [1]),
        "tags": ("bytes_list", [b"a", b"b"]),
    }  # maybe is NULL: no feature at all
    assert records[5]["maybe"] == ("int64_list", [50]) and records[5]["tags"] == ("bytes_list", [])


@needs_copy
def test_sequence_example_feature_lists_and_raw_records(con, tmp_path):
    con.sql(
        "COPY (SELECT {'id': id, 'steps': [[id, id + 1], [id + 2]]} FROM t ORDER BY id) "
        "TO 'seq.tfrecord' (FORMAT tfrecord, RECORD_TYPE sequence_example)"
    )
    back = tfsql.read_tfrecord(str(tmp_path / "seq.tfrecord"), record_type="sequence_example")
    assert back.column("steps").to_pylist()[1] == [[1, 2], [3]]
    con.sql("COPY (SELECT text FROM t ORDER BY id) TO 'raw.tfrecord' (FORMAT tfrecord, RECORD_TYPE bytes)")
    raw = tfsql.read_tfrecord(str(tmp_path / "raw.tfrecord"), record_type="bytes")
    assert raw.column(0).to_pylist()[:2] == [b"row 0", b"row 1"]
    with pytest.raises(duckdb.BinderException, match="list of lists.*RECORD_TYPE sequence_example"):
        con.sql("COPY (SELECT {'steps': [[1]]}) TO 'x.tfrecord' (FORMAT tfrecord)")


@needs_copy
def test_partitioned_copy_names_files_tfrecord_and_return_files_says_what_duckdb_chose(con, tmp_path):
    # measured on DuckDB 2.0.1: the function is given 'out/part=0/data_0.' (no
    # FILE_EXTENSION), adds its extension, and RETURN_FILES lists DuckDB's names
    rows = con.sql(
        "COPY (SELECT {'id': id, 'text': text} AS features, part FROM t) TO 'out' "
        "(FORMAT tfrecord, PARTITION_BY (part), COMPRESSION gzip, RETURN_FILES)"
    ).fetchall()
    assert rows[0][0] == 300
    # the V2 build declares '.tfrecord' (one extension per function) and adds '.gz' itself
    said = "data_0.tfrecord" if loads_v2() else "data_0."
    assert sorted(rows[0][1]) == [f"out/part={k}/{said}" for k in range(3)]
    written = sorted(str(p.relative_to(tmp_path)) for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert written == ["out/features.json"] + [f"out/part={k}/data_0.tfrecord.gz" for k in range(3)]
    back = tfsql.read_tfrecord(str(tmp_path / "out"))
    assert sorted(back.column("id").to_pylist()) == list(range(300))
    assert sorted(set(back.column("part").to_pylist())) == [0, 1, 2]
    # with FILE_EXTENSION the names agree
    rows = con.sql(
        "COPY (SELECT {'id': id} AS features, part FROM t) TO 'named' "
        "(FORMAT tfrecord, PARTITION_BY (part), FILE_EXTENSION 'tfrecord', RETURN_FILES)"
    ).fetchall()
    assert sorted(rows[0][1]) == [f"named/part={k}/data_0.tfrecord" for k in range(3)]
    assert all((tmp_path / f).is_file() for f in rows[0][1])


@needs_copy
def test_duckdb_applies_its_own_write_modes(con, tmp_path):
    copy = "COPY (SELECT {'id': id} AS f, part FROM t) TO 'modes' (FORMAT tfrecord, PARTITION_BY (part)MODE)"
    con.sql(copy.replace("MODE", ""))
    with pytest.raises(duckdb.Error, match="(?i)not empty|exists|overwrite"):
        con.sql(copy.replace("MODE", ""))
    con.sql(copy.replace("MODE", ", APPEND"))
    assert tfsql.read_tfrecord(str(tmp_path / "modes")).num_rows == 600
    con.sql(copy.replace("MODE", ", OVERWRITE"))
    assert tfsql.read_tfrecord(str(tmp_path / "modes")).num_rows == 300
    con.sql(
        "COPY (SELECT {'id': id} AS f, part FROM t) TO 'named' "
        "(FORMAT tfrecord, PARTITION_BY (part), FILENAME_PATTERN 'shard_{i}')"
    )
    assert (
        sorted(p.name for p in (tmp_path / "named").rglob("*") if p.is_file())
        == ["features.json"] + ["shard_0.tfrecord"] * 3
    )
    con.sql("COPY (SELECT t FROM t) TO 'threads' (FORMAT tfrecord, PER_THREAD_OUTPUT, COMPRESSION zlib)")
    assert {p.suffix for p in (tmp_path / "threads").iterdir()} == {".zz"}
    assert tfsql.read_tfrecord(str(tmp_path / "threads")).num_rows == 300
    con.sql("COPY (SELECT t FROM t) TO 'single.tfrecord' (FORMAT tfrecord)")
    con.sql("COPY (SELECT t FROM t WHERE id < 7) TO 'single.tfrecord' (FORMAT tfrecord)")  # DuckDB's tmp_ + move
    assert tfsql.read_tfrecord(str(tmp_path / "single.tfrecord")).num_rows == 7
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == ["single.tfrecord"]


@needs_copy
def test_index_sidecars_follow_the_files(con, tmp_path):
    con.sql("COPY (SELECT {'id': id} AS f, part FROM t) TO 'idx' (FORMAT tfrecord, PARTITION_BY (part), INDEX)")
    from tfsql.record_index import indexed_count

    counts = [indexed_count(str(tmp_path / f"idx/part={k}/data_0.tfrecord")) for k in range(3)]
    assert counts == [100, 100, 100]
    con.sql("COPY (SELECT t FROM t) TO 'one.tfrecord' (FORMAT tfrecord, INDEX)")
    con.sql("COPY (SELECT t FROM t WHERE id < 5) TO 'one.tfrecord' (FORMAT tfrecord, INDEX)")  # tmp_ + move
    assert indexed_count(str(tmp_path / "one.tfrecord")) == 5
    with pytest.raises(duckdb.BinderException, match="INDEX writes record offsets, which compressed files"):
        con.sql("COPY (SELECT t FROM t) TO 'c.tfrecord.gz' (FORMAT tfrecord, INDEX, COMPRESSION gzip)")


@needs_copy
def test_copy_to_errors_say_what_to_write(con):
    if loads_v2():  # the V2 API tells the function the columns' names: each is a feature
        con.sql("COPY t TO 'plain.tfrecord' (FORMAT tfrecord)")
        Path("plain.tfrecord").unlink()
    else:
        with pytest.raises(duckdb.BinderException, match=r"C API tells a COPY function .* COPY \(SELECT t FROM t\)"):
            con.sql("COPY t TO 'plain.tfrecord' (FORMAT tfrecord)")
    with pytest.raises(duckdb.BinderException, match="NUM_SHARDS .* tfsql.write_tfrecord"):
        con.sql("COPY (SELECT t FROM t) TO 'x' (FORMAT tfrecord, NUM_SHARDS 3)")
    with pytest.raises(duckdb.BinderException, match='Unrecognized option "(?i:FOO)" .* valid options: RECORD_TYPE'):
        con.sql("COPY (SELECT t FROM t) TO 'x' (FORMAT tfrecord, FOO 3)")
    with pytest.raises(duckdb.BinderException, match="COMPRESSION_LEVEL expects 0 to 9, got 12"):
        con.sql("COPY (SELECT t FROM t) TO 'x.tfrecord.gz' (FORMAT tfrecord, COMPRESSION_LEVEL 12)")
    with pytest.raises(duckdb.BinderException, match="no TFRecord feature holds"):
        con.sql("COPY (SELECT {'d': INTERVAL 1 DAY}) TO 'x.tfrecord' (FORMAT tfrecord)")
    with pytest.raises(duckdb.Error, match="a list holds a NULL element"):
        con.sql("COPY (SELECT {'l': [1, NULL]}) TO 'x.tfrecord' (FORMAT tfrecord)")
    assert sorted(p.name for p in Path(".").iterdir()) == []  # neither the file nor its temporary one


KILL_SCRIPT = r"""
import sys, duckdb, tfsql
con = tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))
con.sql("SELECT 1").fetchall()
print("ready", flush=True)
con.sql("COPY (SELECT {'id': range, 'pad': repeat('x', 40)} AS f FROM range(1500000)) "
        "TO '" + sys.argv[1] + "' (FORMAT tfrecord)")
print("done", flush=True)
"""


@needs_copy
def test_a_killed_copy_leaves_no_partial_file_under_a_final_name(tmp_path):
    """SIGKILL while the COPY writes (once its temporary file exists, at staggered
    moments after): 20 kills, and the final name never holds a partial file; the killed
    writer's hidden temporary file is all it leaves."""
    script = tmp_path / "kill.py"
    script.write_text(KILL_SCRIPT)
    target = tmp_path / "out.tfrecord"
    kills = 0
    for attempt in range(20):
        proc = subprocess.Popen([sys.executable, str(script), str(target)], stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "ready"
        while proc.poll() is None and not any("tfsql-tmp" in p.name for p in tmp_path.iterdir()):
            time.sleep(0.002)
        time.sleep(0.01 * (attempt % 10))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait(timeout=120)
        temporary = [p for p in tmp_path.iterdir() if "tfsql-tmp" in p.name]
        assert all(p.name.startswith(".out.tfrecord.tfsql-tmp-") for p in temporary)
        for p in temporary:
            p.unlink()
        if target.exists():  # the COPY finished before the kill: the file is whole
            assert tfsql.read_tfrecord(str(target)).num_rows == 1_500_000
            target.unlink()
    assert kills == 20


# --------------------------------------------------------------------------------------
# COPY ... FROM
# --------------------------------------------------------------------------------------


@pytest.fixture
def written(tmp_path):
    path = tmp_path / "src"
    tfsql.write_tfrecord(
        pa.table({"id": list(range(10)), "score": [i / 2 for i in range(10)], "name": [f"n{i}" for i in range(10)]}),
        str(path / "a.tfrecord"),
    )
    return str(path / "a.tfrecord")


@needs_copy
def test_copy_from_casts_to_the_table_columns_by_position(written):
    con = native()
    con.sql("CREATE TABLE d (k INTEGER, s DOUBLE, n VARCHAR)")
    assert con.execute(f"COPY d FROM '{written}' (FORMAT tfrecord)").fetchall() == [(10,)]
    assert con.sql("SELECT * FROM d ORDER BY k LIMIT 2").fetchall() == [(0, 0.0, "n0"), (1, 0.5, "n1")]
    con.sql("CREATE TABLE small (k TINYINT, s FLOAT, n BLOB)")
    con.sql(f"COPY small FROM '{written}' (FORMAT tfrecord, RECORD_TYPE 'example')")
    assert con.sql("SELECT n FROM small ORDER BY k LIMIT 1").fetchall() == [(b"n0",)]


@needs_copy
def test_copy_from_errors_name_the_columns(written, tmp_path):
    con = native()
    con.sql("CREATE TABLE two (a INTEGER, b VARCHAR)")
    with pytest.raises(
        duckdb.BinderException,
        match=r"column count mismatch: the table takes 2 columns but the TFRecord data has 3 \(id BIGINT, score FLOAT, name VARCHAR\)",
    ):
        con.sql(f"COPY two FROM '{written}' (FORMAT tfrecord)")
    con.sql("CREATE TABLE dates (a DATE, b FLOAT, c VARCHAR)")
    with pytest.raises(duckdb.BinderException, match='column 1 "id" is BIGINT, which does not cast to DATE'):
        con.sql(f"COPY dates FROM '{written}' (FORMAT tfrecord)")
    tfsql.write_tfrecord(pa.table({"big": [1, 300]}), str(tmp_path / "big.tfrecord"))
    con.sql("CREATE TABLE tiny (a TINYINT)")
    with pytest.raises(duckdb.Error, match='the value 300 does not fit the table\'s column "big"'):
        con.sql(f"COPY tiny FROM '{tmp_path / 'big.tfrecord'}' (FORMAT tfrecord)")
    assert con.sql("SELECT count(*) FROM tiny").fetchall() == [(0,)]
    with pytest.raises(duckdb.BinderException, match="(?i)'bogus' is not a supported option"):
        con.sql(f"COPY tiny FROM '{written}' (FORMAT tfrecord, BOGUS 1)")


def test_duckdb_before_1_5_6_loads_reads_and_refuses_copy(written):
    if HAS_COPY:
        pytest.skip("this DuckDB has COPY functions; run the suite with duckdb==1.4.* for this check")
    con = native()
    assert con.sql(f"SELECT count(*) FROM tfrecord_scan('{written}')").fetchall() == [(10,)]
    with pytest.raises(duckdb.Error, match="(?i)copy function.*tfrecord"):
        con.sql("COPY (SELECT t FROM t) TO 'x.tfrecord' (FORMAT tfrecord)")


# --------------------------------------------------------------------------------------
# tfrecord_schema / tfrecord_metadata
# --------------------------------------------------------------------------------------


def test_tfrecord_schema_lists_the_scan_columns(tmp_path):
    tfsql.write_tfrecord(
        pa.table({"id": [1, 2], "steps": [[[1.0], [2.0]], [[3.0]]], "label": ["a", "b"], "split": ["train", "test"]}),
        str(tmp_path / "seq"),
        record_type="sequence_example",
        partition_by=["split"],
    )
    con = native()
    rows = con.sql(f"SELECT * FROM tfrecord_schema('{tmp_path / 'seq'}', record_type := 'sequence_example')").fetchall()
    assert sorted(rows) == sorted(
        [
            ("id", "BIGINT", True, "int64_list", "context", "feature"),
            ("steps", "DOUBLE[][]", True, "float_list", "feature_lists", "feature"),  # as written
            ("label", "VARCHAR", True, "bytes_list", "context", "feature"),
            ("split", "VARCHAR", True, None, None, "partition"),
        ]
    )
    described = con.sql(
        f"DESCRIBE SELECT * FROM tfrecord_scan('{tmp_path / 'seq'}', record_type := 'sequence_example')"
    )
    assert [(r[0], r[1]) for r in described.fetchall()] == [(r[0], r[1]) for r in rows]


def test_tfrecord_metadata_lists_files_with_counts(tmp_path):
    table = pa.table({"id": list(range(12)), "p": [i % 2 for i in range(12)]})
    tfsql.write_tfrecord(table, str(tmp_path / "plain"), partition_by=["p"], index=True)
    tfsql.write_tfrecord(table, str(tmp_path / "gz"), partition_by=["p"], compression="gzip")
    con = native()
    rows = con.sql(f"SELECT * FROM tfrecord_metadata('{tmp_path / 'plain'}') ORDER BY file").fetchall()
    assert [(Path(r[0]).parent.name, r[1] == os.path.getsize(r[0]), r[2], r[3], r[4], r[5], r[6]) for r in rows] == [
        ("p=0", True, "none", {"p": "0"}, None, 6, "index"),
        ("p=1", True, "none", {"p": "1"}, None, 6, "index"),
    ]
    rows = con.sql(
        f"SELECT compression, records, records_source FROM tfrecord_metadata('{tmp_path / 'gz'}')"
    ).fetchall()
    assert rows == [("gzip", None, None)] * 2
    rows = con.sql(
        f"SELECT compression, records, records_source FROM tfrecord_metadata('{tmp_path / 'gz'}', count := true)"
    ).fetchall()
    assert rows == [("gzip", 6, "count")] * 2


# --------------------------------------------------------------------------------------
# The duckdb command: a whole prep round trip with the extension alone
# --------------------------------------------------------------------------------------


def duckdb_cli() -> str | None:
    candidate = Path(sys.executable).parent / "duckdb"
    return str(candidate) if candidate.is_file() else shutil.which("duckdb")


def cli_version(cli: str) -> tuple[int, ...]:
    out = subprocess.run([cli, "--version"], capture_output=True, text=True).stdout
    return _version(out.split()[0]) if out else (0,)


def cli_extension_path(cli: str) -> str:
    """The build the duckdb command loads (its DuckDB may not be the Python package's)."""
    try:
        return tfsql.duckdb_extension_path(".".join(map(str, cli_version(cli))))
    except ExtensionNotAvailable:  # TFSQL_DUCKDB_API=v2 and a command with no V2 build
        pytest.skip("no build of the extension for the duckdb command's version")


@pytest.mark.skipif(duckdb_cli() is None, reason="the duckdb command (pip install duckdb-cli) is not installed")
def test_duckdb_command_prep_round_trip(tmp_path, written):
    cli = duckdb_cli()
    if cli_version(cli) < (1, 5, 6):
        pytest.skip("COPY functions need the duckdb command >= 1.5.6")
    script = f"""
LOAD '{cli_extension_path(cli)}';
SELECT column_name, column_type FROM tfrecord_schema('{written}');
CREATE TABLE src AS SELECT * FROM '{written}';
COPY (SELECT {{'id': id, 'name': name}} AS features, id % 2 AS half FROM src WHERE score >= 1)
  TO 'prep' (FORMAT tfrecord, PARTITION_BY (half), COMPRESSION gzip);
SELECT half, count(*) FROM tfrecord_scan('prep') GROUP BY half ORDER BY half;
SELECT count(*) FROM tfrecord_metadata('prep', count := true);
CREATE TABLE back (id BIGINT, name VARCHAR, half INTEGER);
COPY back FROM 'prep' (FORMAT tfrecord);
COPY (SELECT src FROM src) TO 'one.tfrecord.gz' (FORMAT tfrecord);
SELECT count(*) FROM 'one.tfrecord.gz';
SELECT sum(id) FROM back;
"""
    out = subprocess.run([cli, "-unsigned", "-csv", "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split()
    assert lines[:4] == ["column_name,column_type", "id,BIGINT", "score,FLOAT", "name,VARCHAR"]
    assert "half,count_star()" in lines and "0,4" in lines and "1,4" in lines
    assert lines[-4:] == ["count_star()", "10", "sum(id)", str(sum(range(2, 10)))]
    assert len(reference_payloads(tmp_path / "one.tfrecord.gz")) == 10  # a gzip stream of whole records
    assert sorted(p.name for p in (tmp_path / "prep").rglob("*") if p.is_file()) == ["data_0.tfrecord.gz"] * 2 + [
        "features.json"
    ]


# --------------------------------------------------------------------------------------
# TensorFlow, where it is installed
# --------------------------------------------------------------------------------------


@needs_copy
def test_tensorflow_reads_native_copy_files_back(con, tmp_path):
    tf = pytest.importorskip("tensorflow")
    con.sql(
        "COPY (SELECT {'id': id, 'text': text, 'scores': scores} FROM t ORDER BY id) TO 'tf.tfrecord.gz' (FORMAT tfrecord)"
    )
    spec = {
        "id": tf.io.FixedLenFeature([], tf.int64),
        "text": tf.io.FixedLenFeature([], tf.string),
        "scores": tf.io.VarLenFeature(tf.float32),
    }
    got = [
        tf.io.parse_single_example(r, spec) for r in tf.data.TFRecordDataset(str(tmp_path / "tf.tfrecord.gz"), "GZIP")
    ]
    assert [int(g["id"]) for g in got] == list(range(300))
    assert got[3]["text"].numpy() == b"row 3"
    assert list(got[3]["scores"].values.numpy()) == [0.75, -1.5]


# --------------------------------------------------------------------------------------
# INSERT ... SELECT FROM tfrecord_scan: DuckDB's casts, on every DuckDB (1.4 has no COPY FROM)
# --------------------------------------------------------------------------------------


def test_insert_select_loads_with_duckdb_casts(written):
    con = tfsql.connect()
    con.sql("CREATE TABLE d (k SMALLINT, s DOUBLE, n VARCHAR)")
    scan = f"tfrecord_scan('{written}', record_type := 'example')"
    assert con.execute(f"INSERT INTO d SELECT * FROM {scan}").fetchall() == [(10,)]
    assert con.sql("SELECT * FROM d ORDER BY k LIMIT 2").fetchall() == [(0, 0.0, "n0"), (1, 0.5, "n1")]
    con.sql("CREATE TABLE named (n VARCHAR, k BIGINT, s FLOAT)")
    con.sql(f"INSERT INTO named (k, s, n) SELECT * FROM {scan}")  # the file's columns in that order
    assert con.sql("SELECT * FROM named ORDER BY k LIMIT 1").fetchall() == [("n0", 0, 0.0)]
    con.sql("CREATE TABLE wrong (k BIGINT, s DOUBLE, n INTEGER)")
    with pytest.raises(duckdb.ConversionException, match="Could not convert string 'n0'"):
        con.sql(f"INSERT INTO wrong SELECT * FROM {scan}")
    con.sql("CREATE TABLE two (a BIGINT, b BIGINT)")
    with pytest.raises(duckdb.BinderException, match='table "?two"? has 2 columns but 3 values were supplied'):
        con.sql(f"INSERT INTO two SELECT * FROM {scan}")


@pytest.mark.skipif(duckdb_cli() is None, reason="the duckdb command (pip install duckdb-cli) is not installed")
def test_readme_round_trip_runs_in_the_duckdb_command(tmp_path):
    cli = duckdb_cli()
    if cli_version(cli) < (1, 5, 6):
        pytest.skip("COPY functions need the duckdb command >= 1.5.6")
    from tfsql.demo import write_demo_dataset

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("#### A whole prep round trip") :]
    block = section[section.index("```sh\n") + 6 : section.index("```", section.index("```sh\n") + 6)]
    body = block.split("\n", 1)[1].rsplit("EOF", 1)[0]  # the SQL of the heredoc
    script = body.replace('$(tfsql extension-path --duckdb-version "$(duckdb --version)")', cli_extension_path(cli))
    assert script != body
    write_demo_dataset(tmp_path / "demo-data", rows=2000)
    out = subprocess.run(
        [cli, "-unsigned", "-csv", "-c", script + "SELECT count(*), count(DISTINCT split) FROM back;"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr
    kept = tfsql.read_tfrecord(str(tmp_path / "demo-data" / "reviews"))
    expected = sum(
        1
        for label, score in zip(kept["label"].to_pylist(), kept["score"].to_pylist())
        if label in (0, 4) and score > 0.2
    )
    assert out.stdout.split()[-1] == f"{expected},3"
    assert sorted(p.name for p in (tmp_path / "demo-data" / "prepped").rglob("*") if p.is_file()) == [
        "data_0.tfrecord.gz"
    ] * 3 + ["features.json"]


def test_tfsql_files_command_lists_files_and_counts(tmp_path):
    table = pa.table({"id": list(range(6)), "p": [0, 0, 0, 1, 1, 1]})
    tfsql.write_tfrecord(table, str(tmp_path / "d"), partition_by=["p"], compression="gzip")
    run = [sys.executable, "-m", "tfsql", "files", str(tmp_path / "d")]
    out = subprocess.run([*run, "--count"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1].endswith("6 records")
    assert "p=0" in out.stdout and "3 (count)" in out.stdout
    lines = subprocess.run([*run, "--json"], capture_output=True, text=True).stdout.splitlines()
    rows = [json.loads(line) for line in lines]
    assert [(r["compression"], r["partitions"], r["records"]) for r in rows] == [
        ("gzip", {"p": "0"}, None),
        ("gzip", {"p": "1"}, None),
    ]


@needs_copy_functions
def test_connect_copy_takes_the_native_struct_row_form_too(tmp_path):
    """A statement written for the native COPY writes the same records in tfsql.connect()."""
    con = tfsql.connect()
    con.sql(TABLE_SQL)
    con.sql(f"COPY (SELECT t FROM t ORDER BY id) TO '{tmp_path / 'a.tfrecord'}' (FORMAT tfrecord)")
    con.sql(
        f"COPY (SELECT {{'id': id, 'text': text}} AS features, part FROM t) TO '{tmp_path / 'parts'}' "
        "(FORMAT tfrecord, PARTITION_BY (part))"
    )
    expected = tmp_path / "expected.tfrecord"
    tfsql.write_tfrecord(arrow_of(con.sql("SELECT * FROM t ORDER BY id")), str(expected))
    assert (tmp_path / "a.tfrecord").read_bytes() == expected.read_bytes()
    parts = tfsql.read_tfrecord(str(tmp_path / "parts"))
    assert parts.column_names == ["id", "text", "part"] and parts.num_rows == 300
