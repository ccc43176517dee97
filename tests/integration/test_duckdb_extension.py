"""tfsql's DuckDB extension (``tfsql.duckdb_extension``): one behaviour with the Arrow path.

The differential tests run the statement suite of test_duckdb.py and the TensorFlow
golden files three ways and require identical rows: through the extension's own
``tfrecord_scan`` on a plain DuckDB connection, through the Arrow path
(``con.register(name, tfsql.dataset(...))``: a `tfsql.Dataset` DuckDB scans) and over the table
``tfsql.read_tfrecord`` returns. The other tests cover loading, the replacement scan,
errors, views kept in a database file, and the ``duckdb`` command.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

import tfsql
from tfsql.duckdb.extension import extension_available
from tfrecord_files import split_table

pytestmark = [
    pytest.mark.skipif(not extension_available(), reason="this tfsql was built without its DuckDB extension"),
    pytest.mark.usefixtures("duckdb_api"),  # once with each build: v1, and V2 on DuckDB 2
]

HERE = Path(__file__).resolve().parent
GOLDEN_DIR = HERE.parent / "data" / "tensorflow"
N_ROWS = 400


def _suite():
    spec = importlib.util.spec_from_file_location("duckdb_statement_suite", HERE / "test_duckdb.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SUITE = _suite()


def native_connection() -> duckdb.DuckDBPyConnection:
    return tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))


data = SUITE.data  # the statement suite's files: a hive-partitioned directory and a Parquet file


@pytest.fixture(scope="module")
def con(data, duckdb_api):
    """A tfsql.connect() connection (extension loaded) with the three sources side by side."""
    connection = tfsql.connect()
    connection.register("arrow_scan", tfsql.dataset(data["dir"]))
    connection.register("ref", tfsql.read_tfrecord(data["dir"]))
    connection.register(
        "split_names",
        pa.table({"split": ["train", "test", "valid"], "split_name": ["Training", "Testing", "Validation"]}),
    )
    yield connection
    connection.close()


@pytest.mark.parametrize("number", range(len(SUITE.STATEMENTS)))
def test_statement_native_arrow_and_read_tfrecord_agree(con, data, number):
    template = SUITE.STATEMENTS[number]
    raw = con  # DuckDB itself: the extension's function
    # DuckDB parses ``DESCRIBE name`` / ``SUMMARIZE name`` but not a table function there
    wrap = "SELECT * FROM {}" if "DESCRIBE {t}" in template or "SUMMARIZE {t}" in template else "{}"
    native = template.format(t=wrap.format(f"tfrecord_scan('{data['dir']}')"), u="native", **data)
    results = [
        SUITE.rows_of(raw.sql(native)),
        SUITE.rows_of(raw.sql(template.format(t=wrap.format("arrow_scan"), u="arrow", **data))),
        SUITE.rows_of(raw.sql(template.format(t=wrap.format("ref"), u="ref", **data))),
    ]
    assert sum(results[2].values()) > 0
    assert results[0] == results[2]
    assert results[1] == results[2]


def golden_names():
    return sorted(p.name[: -len(".expected.json")] for p in GOLDEN_DIR.glob("*.expected.json"))


@pytest.mark.parametrize("name", golden_names())
def test_golden_files_native_arrow_and_read_tfrecord_agree(name):
    want = json.loads((GOLDEN_DIR / f"{name}.expected.json").read_text(encoding="utf-8"))
    path = str(GOLDEN_DIR / name)
    record_type = want["record_type"]
    con = native_connection()
    table = tfsql.read_tfrecord(path, record_type=record_type)
    if table.num_columns == 0:  # the empty file: only the filename column, as in tfsql.connect()
        scan = f"tfrecord_scan('{path}', record_type := '{record_type}')"
        assert con.sql(f"SELECT * FROM {scan}").columns == ["filename"]
        assert con.sql(f"SELECT count(*) FROM {scan}").fetchall() == [(0,)]
        return
    con.register("ref", table)
    con.register("arrow_scan", tfsql.dataset(path, record_type=record_type))
    native = con.sql(f"SELECT * FROM tfrecord_scan('{path}', record_type := '{record_type}')")
    assert native.columns == table.column_names
    assert [str(t) for t in native.types] == [str(t) for t in con.sql("SELECT * FROM ref").types]
    expected = con.sql("SELECT * FROM ref").fetchall()
    assert len(expected) == want["num_records"]
    # repr: NaN equals NaN, and floats compare bit for bit
    assert repr(native.fetchall()) == repr(expected)
    assert repr(con.sql("SELECT * FROM arrow_scan").fetchall()) == repr(expected)


def test_options_agree_with_read_tfrecord(data, tmp_path):
    con = native_connection()
    cases = [
        ("hive_partitioning := false", {"hive_partitioning": False}),
        ("filename := true", {"include_file_paths": "filename"}),
        ("filename := 'src'", {"include_file_paths": "src"}),
        ("lists := 'always'", {"lists": "always"}),
        ("sample_size := 5, infer_files := 1", {"infer_sample": 5, "infer_files": 1}),
        ("record_type := 'bytes'", {"record_type": "bytes"}),
        ("verify_checksums := false, compression := 'none'", {"verify_checksums": False, "compression": None}),
    ]
    for sql_options, options in cases:
        table = tfsql.read_tfrecord(data["dir"], **options)
        con.register("ref", table)
        native = con.sql(f"SELECT * FROM tfrecord_scan('{data['dir']}', {sql_options})")
        assert native.columns == table.column_names, sql_options
        assert sorted(native.fetchall(), key=repr) == sorted(con.sql("SELECT * FROM ref").fetchall(), key=repr), (
            sql_options
        )


def test_schema_reads_the_named_columns_as_read_tfrecord_does(data):
    con = native_connection()
    spec = {"id": pa.int64(), "name": pa.string(), "emb": pa.list_(pa.float32()), "missing": pa.binary()}
    table = tfsql.read_tfrecord(data["dir"], schema=spec, hive_partitioning=False, missing_columns="insert")
    con.register("ref", table)
    for param in ("schema", "columns"):
        native = con.sql(
            f"SELECT * FROM tfrecord_scan('{data['dir']}', hive_partitioning := false, {param} := "
            "{'id': 'BIGINT', 'name': 'VARCHAR', 'emb': 'FLOAT[]', 'missing': 'BLOB'}, missing_columns := 'insert')"
        )
        assert native.columns == ["id", "name", "emb", "missing"]
        assert repr(sorted(native.fetchall(), key=repr)) == repr(
            sorted(con.sql("SELECT * FROM ref").fetchall(), key=repr)
        )
    with pytest.raises(duckdb.Error, match="'DECIMAL\\(4,2\\)', which the DuckDB extension does not read yet"):
        con.sql(f"SELECT * FROM tfrecord_scan('{data['dir']}', schema := {{'id': 'DECIMAL(4,2)'}})")


def test_sources_lists_globs_and_replacement_scan(data, tmp_path):
    table = pa.table({"id": [1, 2, 3], "w": [[0.5], [], [1.5, 2.5]]})
    tfsql.write_tfrecord(table, str(tmp_path / "a.tfrecord"))
    tfsql.write_tfrecord(table, str(tmp_path / "b.tfrecord.gz"), compression="gzip")
    tfsql.write_tfrecord(table, str(tmp_path / "c.tfrecords"))
    con = native_connection()
    assert con.sql(f"SELECT sum(id) FROM '{tmp_path}/a.tfrecord'").fetchall() == [(6,)]
    assert con.sql(f"SELECT sum(id) FROM '{tmp_path}/b.tfrecord.gz'").fetchall() == [(6,)]
    assert con.sql(f"SELECT sum(id) FROM '{tmp_path}/c.tfrecords'").fetchall() == [(6,)]
    assert con.sql(f"SELECT count(*) FROM '{tmp_path}/*.tfrecord*'").fetchall() == [(9,)]
    both = con.sql(f"SELECT id, w FROM read_tfrecord(['{tmp_path}/a.tfrecord', '{tmp_path}/c.tfrecords'])")
    assert sorted(both.fetchall()) == sorted([(1, [0.5]), (2, []), (3, [1.5, 2.5])] * 2)
    assert con.sql(f"SELECT count(*) FROM tfrecord_scan('{data['dir']}/**/*.tfrecord')").fetchall() == [(N_ROWS,)]
    assert con.sql(f"SELECT DISTINCT split FROM tfrecord_scan('{data['dir']}/*') ORDER BY 1").fetchall() == [
        ("test",),
        ("train",),
        ("valid",),
    ]


def test_changed_files_are_inferred_again(tmp_path):
    con = native_connection()
    path = tmp_path / "t.tfrecord"
    tfsql.write_tfrecord(pa.table({"a": [1, 2]}), str(path))
    assert con.sql(f"SELECT * FROM '{path}'").fetchall() == [(1,), (2,)]
    assert con.sql(f"SELECT * FROM '{path}'").fetchall() == [(1,), (2,)]  # the cached inference
    shutil.rmtree(path) if path.is_dir() else path.unlink()
    tfsql.write_tfrecord(pa.table({"b": ["x"], "c": [[1.5]]}), str(path))
    relation = con.sql(f"SELECT * FROM '{path}'")
    assert relation.columns == ["b", "c"]
    assert relation.fetchall() == [("x", 1.5)]  # one value per record: a scalar, as read_tfrecord infers


def test_projection_is_pushed_down(data):
    con = native_connection()  # kept: DuckDB 1.4's relations do not keep their connection open
    text = con.sql(f"EXPLAIN SELECT id FROM tfrecord_scan('{data['dir']}') WHERE label = 1").fetchall()[0][1]
    assert "TFRECORD_SCAN" in text.upper()
    assert "name" not in text.split("TFRECORD_SCAN")[-1]


def test_data_error_in_scan_names_file_record_and_offset(tmp_path):
    tfsql.write_tfrecord(pa.table({"x": list(range(1000))}), str(tmp_path / "d"), num_shards=1)
    (path,) = (tmp_path / "d").glob("*.tfrecord")
    damaged = bytearray(path.read_bytes())
    damaged[5000] ^= 0xFF
    path.write_bytes(bytes(damaged))
    con = native_connection()
    with pytest.raises(duckdb.Error) as caught:
        con.sql(f"SELECT sum(x) FROM tfrecord_scan('{tmp_path / 'd'}', sample_size := 10)").fetchall()
    message = str(caught.value)
    assert f"data CRC mismatch in {path}, record 165 at byte 4987" in message
    assert "ignore_errors := true" in message
    assert "Traceback" not in message and "Python" not in message
    skipped = con.sql(f"SELECT count(*), sum(x) FROM tfrecord_scan('{tmp_path / 'd'}', ignore_errors := true)")
    assert skipped.fetchall() == [(999, sum(range(1000)) - 165)]


def test_bind_errors_are_clear(tmp_path):
    con = native_connection()
    with pytest.raises(duckdb.Error, match="no such file or directory: 'nope'"):
        con.sql("SELECT * FROM tfrecord_scan('nope')")
    with pytest.raises(duckdb.Error, match="unknown record_type 'nonsense'"):
        tfsql.write_tfrecord(pa.table({"x": [1]}), str(tmp_path / "x.tfrecord"))
        con.sql(f"SELECT * FROM tfrecord_scan('{tmp_path}/x.tfrecord', record_type := 'nonsense')")


def test_load_extension_needs_unsigned_extensions():
    with pytest.raises(PermissionError, match="allow_unsigned_extensions"):
        tfsql.load_extension(duckdb.connect())
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    assert tfsql.load_extension(tfsql.load_extension(con)) is con  # twice is harmless


def test_extension_path_command():
    out = subprocess.run(
        [sys.executable, "-m", "tfsql", "extension-path"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert out.stdout.strip() == tfsql.duckdb_extension_path()
    assert os.path.isfile(out.stdout.strip())


def test_view_in_database_file_works_in_a_new_process(data, tmp_path):
    database = tmp_path / "x.duckdb"
    with tfsql.connect(str(database)) as con:
        con.sql(f"CREATE VIEW rv AS SELECT * FROM tfrecord_scan('{data['dir']}')")
        con.sql(f"CREATE VIEW only_test AS SELECT id FROM tfrecord_scan('{data['dir']}') WHERE split = 'test'")
    script = (
        "import sys, tfsql\n"
        "con = tfsql.connect(sys.argv[1])\n"
        "print(con.sql('SELECT count(*) FROM rv').fetchall()[0][0])\n"
        "print(con.sql('SELECT count(*) FROM only_test').fetchall()[0][0])\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(database)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert out.returncode == 0, out.stderr
    expected_test = sum(1 for row in split_table(N_ROWS).to_pylist() if row["split"] == "test")
    assert out.stdout.split() == [str(N_ROWS), str(expected_test)]


def test_default_connection_recipe(data):
    if not hasattr(duckdb, "set_default_connection"):
        pytest.skip("duckdb.set_default_connection needs DuckDB 1.1+")
    previous = duckdb.default_connection()
    try:
        duckdb.set_default_connection(native_connection())
        assert duckdb.sql(f"SELECT count(*) FROM tfrecord_scan('{data['dir']}')").fetchall() == [(N_ROWS,)]
    finally:
        duckdb.set_default_connection(previous)


def duckdb_cli() -> str | None:
    found = shutil.which("duckdb")
    candidate = Path(sys.executable).parent / "duckdb"
    return str(candidate) if candidate.is_file() else found


@pytest.mark.skipif(duckdb_cli() is None, reason="the duckdb command (pip install duckdb-cli) is not installed")
def test_duckdb_command_loads_the_extension(data, monkeypatch):
    # the command's own DuckDB version picks the build, whichever the Python package's is
    monkeypatch.delenv("TFSQL_DUCKDB_API", raising=False)
    version = subprocess.run([duckdb_cli(), "--version"], capture_output=True, text=True).stdout.split()[0]
    sql = (
        f"LOAD '{tfsql.duckdb_extension_path(version)}'; "
        f"SELECT split, count(*) FROM tfrecord_scan('{data['dir']}') GROUP BY ALL ORDER BY split;"
    )
    out = subprocess.run([duckdb_cli(), "-unsigned", "-csv", "-c", sql], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    counts = {}
    for row in split_table(N_ROWS).to_pylist():
        counts[row["split"]] = counts.get(row["split"], 0) + 1
    assert out.stdout.split() == ["split,count_star()"] + [f"{k},{v}" for k, v in sorted(counts.items())]
    refused = subprocess.run(
        [duckdb_cli(), "-c", f"LOAD '{tfsql.duckdb_extension_path(version)}'"], capture_output=True, text=True
    )
    assert refused.returncode != 0 and "unsigned" in (refused.stderr + refused.stdout).lower()


FUZZ_SCRIPT = r"""
import random, sys, duckdb, tfsql
source, work, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = open(source, "rb").read()
con = tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))
rng = random.Random(7)
outcomes = {"rows": 0, "error": 0}
for i in range(count):
    mutated = bytearray(data)
    kind = i % 3
    if kind == 0:
        for _ in range(rng.randint(1, 4)):
            mutated[rng.randrange(len(mutated))] = rng.randrange(256)
    elif kind == 1:
        del mutated[rng.randrange(len(mutated)):]
    else:
        at = rng.randrange(len(mutated))
        mutated[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 9)))
    path = f"{work}/m{i}.tfrecord"
    open(path, "wb").write(bytes(mutated))
    for options in ("", ", verify_checksums := false", ", ignore_errors := true"):
        try:
            con.sql(f"SELECT * FROM tfrecord_scan('{path}'{options})").fetchall()
            outcomes["rows"] += 1
        except duckdb.Error as err:
            assert "Traceback" not in str(err)
            outcomes["error"] += 1
print(outcomes["rows"], outcomes["error"])
"""


def test_mutated_files_never_crash_the_scan(tmp_path):
    """Damaged bytes give rows or a DuckDB error, never a crash of the process."""
    table = pa.table(
        {"id": list(range(40)), "s": [f"v{i}" for i in range(40)], "f": [[i * 0.5] * (i % 4) for i in range(40)]}
    )
    tfsql.write_tfrecord(table, str(tmp_path / "src.tfrecord"))
    written = tmp_path / "src.tfrecord"
    source = written if written.is_file() else sorted(p for p in written.rglob("*.tfrecord") if p.is_file())[0]
    work = tmp_path / "work"
    work.mkdir()
    out = subprocess.run(
        [sys.executable, "-c", FUZZ_SCRIPT, str(source), str(work), "150"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert out.returncode == 0, out.stderr[-2000:]
    rows, errors = map(int, out.stdout.split())
    assert rows > 0 and errors > 0


def test_discovery_matches_tfsql_discover(tmp_path):
    """Directories, globs (``*``, ``?``, ``[...]``, ``**``) and the hidden-file rules list
    the same files as `tfsql.discovery.discover`."""
    from tfsql.discovery import discover

    tree = [
        "a/k=1/part-0.tfrecord",
        "a/k=1/.part-0.tfrecord.crc",
        "a/k=2/part-1.tfrecord",
        "a/_SUCCESS",
        "a/_temporary/x.tfrecord",
        "a/.staging/y.tfrecord",
        "a/_col=3/part-2.tfrecord",
        "b/x.tfrecord",
        "b/deep/er/y.tfrecord",
        "b/z.tfrecords",
        "b/_skip/w.tfrecord",
    ]
    tfsql.write_tfrecord(pa.table({"x": [1]}), str(tmp_path / "one"))
    payload = next(p for p in (tmp_path / "one").rglob("*.tfrecord")).read_bytes()
    for name in tree:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(payload)
    con = native_connection()
    sources = [
        "a",
        "b",
        "a/*",
        "b/*.tfrecord",
        "b/**/*.tfrecord",
        "b/**",
        "a/k=[12]/*",
        "b/?.tfrecord",
        "a/_col=3",
        "b/_skip/*",
        ["a/k=1", "b/x.tfrecord", "a/k=1/part-0.tfrecord"],
    ]
    for source in sources:
        items = source if isinstance(source, list) else [source]
        absolute = [str(tmp_path / item) for item in items]
        want = [f.path for f in discover(absolute).files]
        sql = "[" + ", ".join(f"'{p}'" for p in absolute) + "]"
        got = con.sql(
            f"SELECT DISTINCT filename FROM tfrecord_scan({sql}, record_type := 'bytes', "
            f"filename := true, hive_partitioning := false)"
        ).fetchall()
        assert sorted(row[0] for row in got) == sorted(want), source


def _record_offsets(data: bytes) -> list[int]:
    offsets, at = [], 0
    while at + 12 <= len(data):
        offsets.append(at)
        at += 12 + int.from_bytes(data[at : at + 8], "little") + 4
    return offsets


def test_damaged_records_across_chunks(tmp_path):
    """The scan frames one output chunk (2,048 records) at a time: damaged records on
    both sides of chunk boundaries are reported with their index and offset in the file,
    and ignore_errors skips each of them, then drops a truncated tail."""
    rows = 10_000
    tfsql.write_tfrecord(pa.table({"x": list(range(rows))}), str(tmp_path / "d"), num_shards=1)
    (path,) = (tmp_path / "d").glob("*.tfrecord")
    data = bytearray(path.read_bytes())
    offsets = _record_offsets(bytes(data))
    bad = [100, 2047, 2048, 4097, 6000]
    for index in bad:
        data[offsets[index] + 14] ^= 0xFF  # inside the payload: a data CRC mismatch
    tail = 9_000
    path.write_bytes(bytes(data[: offsets[tail] + 20]))  # record 9000 is cut short
    con = native_connection()
    query = f"SELECT count(*), sum(x) FROM tfrecord_scan('{tmp_path / 'd'}', sample_size := 10"
    with pytest.raises(duckdb.Error, match=f"data CRC mismatch in {path}, record 100 at byte {offsets[100]}"):
        con.sql(query + ")").fetchall()
    kept = [i for i in range(tail) if i not in bad]
    assert con.sql(query + ", ignore_errors := true)").fetchall() == [(len(kept), sum(kept))]
    data[offsets[100] + 14] ^= 0xFF
    for index in bad[1:]:
        data[offsets[index] + 14] ^= 0xFF
    path.write_bytes(bytes(data[: offsets[tail] + 20]))
    with pytest.raises(duckdb.Error, match=f"truncated record in {path}, record {tail} at byte {offsets[tail]}"):
        con.sql(query + ")").fetchall()


@pytest.mark.parametrize("compression", [None, "gzip"])
def test_inference_sample_ends_at_infer_bytes(tmp_path, compression):
    """As tfsql.inference: a file's sample ends with the record whose payload brings the
    sample to 4 MiB (a compressed file is inflated only that far); a feature first seen
    after it is not a column, in the extension as in read_tfrecord."""
    blob = b"\0" * (1 << 20)
    rows = [{"blob": blob, "early": None, "late": None} for _ in range(6)]
    rows[3]["early"] = 1  # the 4th record brings the sample past 4 MiB: still sampled
    rows[4]["late"] = 2  # the 5th is not
    table = pa.Table.from_pylist(rows, schema=pa.schema({"blob": pa.binary(), "early": pa.int64(), "late": pa.int64()}))
    target = tmp_path / ("d.tfrecord.gz" if compression else "d.tfrecord")
    tfsql.write_tfrecord(table, str(target), compression=compression)
    with pytest.warns(UserWarning, match="feature 'late' .* is not in the schema inferred from the sample"):
        expected = tfsql.read_tfrecord(str(target)).column_names
    assert expected == ["blob", "early"]
    con = native_connection()
    described = con.sql(f"DESCRIBE SELECT * FROM tfrecord_scan('{target}')").fetchall()
    assert [row[0] for row in described] == expected
    everything = con.sql(f"DESCRIBE SELECT * FROM tfrecord_scan('{target}', sample_size := -1)").fetchall()
    assert [row[0] for row in everything] == ["blob", "early", "late"]


def test_feature_list_sharing_a_context_name(tmp_path):
    """tensorflow/transform's shape: a context feature and a feature list both named
    int_feature. The feature list is the column int_feature__feature_list, as in
    read_tfrecord, when inferred and when named in columns :=."""
    rows = [
        {"int_feature": 0, "label": 1.5, "int_feature__feature_list": [[0], [1, 2]], "float_feature": [[0.5]]},
        {"int_feature": 1, "label": 2.5, "int_feature__feature_list": [[3]], "float_feature": [[1.5], [2.5]]},
    ]
    schema = pa.schema(
        {
            "int_feature": pa.int64(),
            "label": pa.float32(),
            "int_feature__feature_list": pa.list_(pa.list_(pa.int64())),
            "float_feature": pa.list_(pa.list_(pa.float32())),
        }
    )
    path = tmp_path / "same.tfrecord"
    tfsql.write_tfrecord(pa.Table.from_pylist(rows, schema=schema), str(path), record_type="sequence_example")
    reference = tfsql.read_tfrecord(str(path), record_type="sequence_example")
    con = native_connection()
    scan = f"tfrecord_scan('{path}', record_type := 'sequence_example')"
    native = con.sql(f"SELECT * FROM {scan}").arrow()
    native = native.read_all() if hasattr(native, "read_all") else native
    assert native.column_names == reference.column_names
    assert native.to_pylist() == reference.to_pylist()
    named = con.sql(
        f"SELECT * FROM tfrecord_scan('{path}', record_type := 'sequence_example', columns := "
        "{'int_feature': 'BIGINT', 'int_feature__feature_list': 'BIGINT[][]'})"
    ).fetchall()
    assert named == [(0, [[0], [1, 2]]), (1, [[3]])]
    assert con.sql(f"SELECT count(*) FROM {scan}").fetchall() == [(2,)]


TFDS_DIR = HERE.parent / "data" / "tfds" / "tiny_shapes" / "1.0.0"


def _native_rows(con, query: str) -> list[dict]:
    result = con.sql(query)
    names = [d[0] for d in result.description]
    return sorted((dict(zip(names, row)) for row in result.fetchall()), key=repr)


def _reference_rows(source: str) -> list[dict]:
    return sorted(tfsql.read_tfrecord(source).to_pylist(), key=repr)


def test_tfx_layout_gives_the_split_column(tmp_path):
    root = tmp_path / "examples"
    for split, ids in (("train", [1, 2, 3]), ("eval", [10, 11])):
        target = root / f"Split-{split}" / "data_tfrecord-00000-of-00001.gz"
        tfsql.write_tfrecord(pa.table({"id": ids}), str(target.with_name("x.tfrecord.gz")))
        os.rename(target.with_name("x.tfrecord.gz"), target)
    con = native_connection()
    described = con.sql(f"DESCRIBE SELECT * FROM tfrecord_scan('{root}')").fetchall()
    assert [(row[0], row[1]) for row in described] == [("id", "BIGINT"), ("split", "VARCHAR")]
    assert _native_rows(con, f"SELECT * FROM tfrecord_scan('{root}')") == _reference_rows(str(root))
    with_names = con.sql(f"SELECT split, filename FROM tfrecord_scan('{root}', filename := true) WHERE id = 10")
    assert with_names.fetchall() == [("eval", str(root / "Split-eval" / "data_tfrecord-00000-of-00001.gz"))]


def test_tfds_layout_without_features_json(tmp_path):
    """TFDS shards: the split comes from the file name, and the metadata files beside
    them (dataset_info.json, *.labels.txt) are not data. Without features.json the
    columns are inferred, as in read_tfrecord."""
    directory = tmp_path / "tiny_shapes" / "1.0.0"
    directory.mkdir(parents=True)
    for path in TFDS_DIR.iterdir():
        if path.name != "features.json":
            shutil.copy(path, directory / path.name)
    assert (directory / "dataset_info.json").exists()
    con = native_connection()
    names = [row[0] for row in con.sql(f"DESCRIBE SELECT * FROM tfrecord_scan('{directory}')").fetchall()]
    assert names == tfsql.read_tfrecord(str(directory)).column_names and names[-1] == "split"
    assert _native_rows(con, f"SELECT * FROM tfrecord_scan('{directory}')") == _reference_rows(str(directory))
    # a shard named directly reads as its own records: no split column (issue 23)
    shard = directory / "tiny_shapes-test.tfrecord-00000-of-00001"
    assert "split" not in con.sql(f"SELECT * FROM tfrecord_scan('{shard}')").columns


def test_tfds_features_json_types_the_columns_natively():
    """features.json types the columns as in read_tfrecord (the core's rule, shared)."""
    con = native_connection()
    described = con.sql(f"DESCRIBE SELECT * FROM tfrecord_scan('{TFDS_DIR}')").fetchall()
    assert [(row[0], row[1]) for row in described] == [
        ("caption", "VARCHAR"),
        ("id", "BIGINT"),
        ("image", "BLOB"),
        ("label", "BIGINT"),
        ("vec", "FLOAT[]"),
        ("split", "VARCHAR"),
    ]
    assert _native_rows(con, f"SELECT * FROM tfrecord_scan('{TFDS_DIR}')") == _reference_rows(str(TFDS_DIR))


def _tfds_copy(tmp_path, change) -> Path:
    copy = tmp_path / "tiny_shapes" / "1.0.0"
    shutil.copytree(TFDS_DIR, copy)
    document = json.loads((copy / "features.json").read_text())
    change(document["featuresDict"]["features"])
    (copy / "features.json").write_text(json.dumps(document))
    return copy


def test_tfds_features_json_partly_described_infers_the_rest_natively(tmp_path):
    def change(features):
        features["id"] = {"pythonClassName": "x.Sequence", "sequence": {"length": "-1"}}
        features["absent"] = {"pythonClassName": "x.Text", "text": {}}

    copy = _tfds_copy(tmp_path, change)
    con = native_connection()
    described = con.sql(f"DESCRIBE SELECT * FROM tfrecord_scan('{copy}')").fetchall()
    assert [row[0] for row in described] == tfsql.read_tfrecord(str(copy)).column_names
    assert [row[0] for row in described][-2:] == ["absent", "split"]
    assert _native_rows(con, f"SELECT * FROM tfrecord_scan('{copy}')") == _reference_rows(str(copy))


def test_tfds_feature_of_a_dtype_the_extension_cannot_read_names_it(tmp_path):
    def change(features):
        features["id"]["tensor"]["dtype"] = "int32"

    copy = _tfds_copy(tmp_path, change)
    con = native_connection()
    with pytest.raises(
        duckdb.Error,
        match=r"features.json describes feature 'id' as int32, which the DuckDB extension does not read yet",
    ):
        con.sql(f"SELECT * FROM tfrecord_scan('{copy}')").fetchall()
    con.register("described", tfsql.dataset(str(copy)))  # the documented way: the Python reader casts
    assert con.sql("SELECT typeof(id), count(*) FROM described GROUP BY 1").fetchall() == [("INTEGER", 8)]


def test_records_with_a_split_feature_keep_it_natively(tmp_path):
    tfsql.write_tfrecord(pa.table({"id": [1], "split": ["mine"]}), str(tmp_path / "Split-train/x.tfrecord"))
    con = native_connection()
    assert con.sql(f"SELECT * FROM tfrecord_scan('{tmp_path}')").fetchall() == [(1, "mine")]


def test_compressed_file_is_inflated_as_the_scan_goes(tmp_path):
    """A gzip file is inflated into a window of a few MiB that moves with the scan: records
    across its refills, a record larger than the window, and a damaged record far into
    the file (reported at its offset in the inflated bytes) behave as in a plain file."""
    import gzip

    rows = 6_000
    pad = [b"\0" * (2_000 if i != 4_500 else 9 << 20) for i in range(rows)]
    table = pa.table({"x": list(range(rows)), "pad": pad})
    tfsql.write_tfrecord(table, str(tmp_path / "plain.tfrecord"))
    data = bytearray((tmp_path / "plain.tfrecord").read_bytes())
    offsets = _record_offsets(bytes(data))
    (tmp_path / "good.tfrecord.gz").write_bytes(gzip.compress(bytes(data), 1))
    con = native_connection()
    query = "SELECT count(*), sum(x), sum(length(pad)) FROM tfrecord_scan('{}')"
    expected = [(rows, sum(range(rows)), sum(len(p) for p in pad))]
    assert con.sql(query.format(tmp_path / "good.tfrecord.gz")).fetchall() == expected
    bad = 5_000
    data[offsets[bad] + 14] ^= 0xFF
    (tmp_path / "bad.tfrecord.gz").write_bytes(gzip.compress(bytes(data), 1))
    with pytest.raises(
        duckdb.Error, match=f"data CRC mismatch in .*bad.tfrecord.gz, record {bad} at byte {offsets[bad]}"
    ):
        con.sql(query.format(tmp_path / "bad.tfrecord.gz")).fetchall()
    skipped = con.sql(query.format(tmp_path / "bad.tfrecord.gz")[:-1] + ", ignore_errors := true)").fetchall()
    assert skipped == [(rows - 1, sum(range(rows)) - bad, expected[0][2] - len(pad[bad]))]
    data[offsets[bad] + 14] ^= 0xFF
    truncated = gzip.compress(bytes(data[: offsets[5_500] + 30]), 1)
    (tmp_path / "cut.tfrecord.gz").write_bytes(truncated)
    with pytest.raises(
        duckdb.Error,
        match=f"truncated record in .*cut.tfrecord.gz, record 5500 at byte "
        f"{offsets[5_500]}: the file ends 30 bytes into it",
    ):
        con.sql(query.format(tmp_path / "cut.tfrecord.gz")).fetchall()


def _two_partitions(root: Path) -> Path:
    for p in (1, 2):
        tfsql.write_tfrecord(pa.table({"x": [p * 10]}), str(root / f"p={p}" / "part-0.tfrecord"))
    return root


def test_hive_types_varchar_reads_the_partition_values_as_text_natively(tmp_path):
    root = _two_partitions(tmp_path / "hive")
    con = native_connection()
    query = f"SELECT x, p, typeof(p) FROM tfrecord_scan('{root}', hive_types := {{'p': 'VARCHAR'}}) ORDER BY x"
    assert con.sql(query).fetchall() == [(10, "1", "VARCHAR"), (20, "2", "VARCHAR")]
    assert tfsql.connect().sql(query).fetchall() == [(10, "1", "VARCHAR"), (20, "2", "VARCHAR")]


def test_hive_types_refusals_name_the_column_natively(tmp_path):
    root = _two_partitions(tmp_path / "hive")
    con = native_connection()
    with pytest.raises(
        duckdb.Error, match=r"hive_types names 'q', which is not a partition key \(the partition keys are \(p\)\)"
    ):
        con.sql(f"SELECT * FROM tfrecord_scan('{root}', hive_types := {{'q': 'VARCHAR'}})").fetchall()
    with pytest.raises(duckdb.Error, match="hive_types was given but hive_partitioning := false"):
        con.sql(f"SELECT * FROM tfrecord_scan('{root}', hive_partitioning := false, hive_types := {{'p': 'VARCHAR'}})")
    plain = tmp_path / "plain" / "data.tfrecord"
    tfsql.write_tfrecord(pa.table({"x": [1]}), str(plain))
    with pytest.raises(duckdb.Error, match="no key=value directories were found"):
        con.sql(f"SELECT * FROM tfrecord_scan('{plain.parent}', hive_types := {{'q': 'VARCHAR'}})")
    with pytest.raises(
        duckdb.Error, match="partition column 'p' type 'INTEGER', which the DuckDB extension does not read"
    ):
        con.sql(f"SELECT * FROM tfrecord_scan('{root}', hive_types := {{'p': 'INTEGER'}})")
    # a type the extension does not read: a registered tfsql.dataset casts (docs/duckdb-extension.md)
    con.register("typed", tfsql.dataset(str(root), hive_schema={"p": pa.int32()}))
    typed = con.sql("SELECT DISTINCT typeof(p) FROM typed")
    assert typed.fetchall() == [("INTEGER",)]
