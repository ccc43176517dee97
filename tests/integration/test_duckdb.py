"""`tfsql.connect()` (DuckDB + the extension): ``tfrecord_scan(...)`` statements checked against a plain Arrow table.

Every statement in `STATEMENTS` runs twice on one connection: once over
``tfrecord_scan(...)`` (in one of several spellings) and once over the same data loaded
with ``tfsql.read_tfrecord`` and registered as the Arrow table ``ref``; the results must
be the same multiset of rows. Runs on DuckDB 2.x and 1.4 LTS (run the suite once in an environment with ``duckdb==1.4.*``).
"""

from __future__ import annotations

import collections
import math
import os

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tfsql
import tfsql.duckdb
from tfrecord_files import split_table, write_examples
from tfsql.duckdb import connect

BinderError = duckdb.BinderException

N_ROWS = 400


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("duckdb")
    directory = root / "data"
    tfsql.write_tfrecord(split_table(N_ROWS), str(directory), partition_by="split", max_rows_per_file=60)
    parquet_path = root / "labels.parquet"
    pq.write_table(
        pa.table({"label": [0, 1, 2, 3, 4], "label_name": ["zero", "one", "two", "three", "four"]}), str(parquet_path)
    )
    out = root / "out"
    out.mkdir()
    return {"root": root, "dir": str(directory), "pq": str(parquet_path), "out": str(out)}


@pytest.fixture(scope="module")
def con(data):
    connection = connect()
    connection.register("ref", tfsql.read_tfrecord(data["dir"], hive_partitioning=True))
    connection.register(
        "split_names",
        pa.table({"split": ["train", "test", "valid"], "split_name": ["Training", "Testing", "Validation"]}),
    )
    yield connection
    connection.close()


def normalise(value):
    if isinstance(value, float):
        return None if math.isnan(value) else float(f"{value:.7g}")
    if isinstance(value, (list, tuple)):
        return tuple(normalise(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, normalise(v)) for k, v in value.items()))
    return value


def rows_of(result) -> collections.Counter:
    assert result is not None, "the statement returned no relation"
    return collections.Counter(normalise(row) for row in result.fetchall())


SCAN_SPELLINGS = [
    "tfrecord_scan('{dir}', hive_partitioning := true)",
    "read_tfrecord('{dir}')",
    "TFRECORD_SCAN($${dir}$$, hive_partitioning = true, verify_checksums := true)",
    "tfrecord_scan('{dir}/**', compression := 'auto', union_by_name := true)",
]

STATEMENTS = [
    "SELECT * FROM {t}",
    "SELECT id, name FROM {t} WHERE score > 20",
    "SELECT id FROM {t} WHERE split = 'test'",
    "SELECT id, label FROM {t} WHERE label IN (1, 3) AND split <> 'train'",
    "SELECT id FROM {t} WHERE label = 2 OR name LIKE 'n1%'",
    "SELECT id FROM {t} WHERE label IS NULL",
    "SELECT count(*) FROM {t} WHERE name IS NOT NULL",
    "SELECT id, score FROM {t} ORDER BY score DESC, id LIMIT 7",
    "SELECT count(*), sum(id), min(score), max(name) FROM {t}",
    "SELECT split, label, count(*) AS n, avg(score) AS s FROM {t} GROUP BY ALL",
    "SELECT label, count(*) FROM {t} GROUP BY label HAVING count(*) > 90",
    "SELECT id, row_number() OVER (PARTITION BY split ORDER BY id) AS rn FROM {t}",
    "SELECT id, sum(id) OVER (ORDER BY id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW) AS s FROM {t}",
    "SELECT id, lag(name) OVER (ORDER BY id) AS prev, lead(label, 2) OVER (ORDER BY id) AS nxt FROM {t}",
    "SELECT id, label FROM {t} QUALIFY rank() OVER (PARTITION BY label ORDER BY score DESC, id) <= 3",
    "SELECT t.id, p.label_name FROM {t} t JOIN read_parquet('{pq}') p ON t.label = p.label",
    "SELECT p.label_name, count(t.id) FROM read_parquet('{pq}') p LEFT JOIN {t} t USING (label) GROUP BY ALL",
    "SELECT a.id, n.split_name FROM {t} AS a JOIN split_names n ON a.split = n.split WHERE a.id % 7 = 0",
    "SELECT a.id, b.id FROM {t} a JOIN {t} b ON a.id = b.id + 4 WHERE a.label = b.label",
    "WITH s AS (SELECT * FROM {t} WHERE split = 'train') SELECT label, count(*) FROM s GROUP BY label",
    "SELECT avg(x) FROM (SELECT score * 2 AS x FROM {t} WHERE id < 100) sub",
    "SELECT id FROM range(0, 500, 3) r(id) WHERE id IN (SELECT id FROM {t} WHERE label = 1)",
    "SELECT label_name FROM read_parquet('{pq}') p "
    "WHERE EXISTS (SELECT 1 FROM {t} t WHERE t.label = p.label AND t.split = 'valid')",
    "SELECT id, score - (SELECT avg(score) FROM {t}) AS d FROM {t} WHERE id < 20",
    "SELECT id, 'a' AS src FROM {t} WHERE id < 10 UNION ALL SELECT id, 'b' FROM {t} WHERE id > 390",
    "SELECT label FROM {t} UNION SELECT label FROM read_parquet('{pq}')",
    "SELECT id FROM {t} EXCEPT SELECT id FROM {t} WHERE split = 'train'",
    "SELECT label FROM {t} WHERE split = 'test' INTERSECT SELECT label FROM {t} WHERE split = 'valid'",
    "CREATE OR REPLACE TABLE ctas_{u} AS SELECT * FROM {t} WHERE label = 3; SELECT * FROM ctas_{u}",
    "CREATE OR REPLACE TABLE ins_{u} (id BIGINT, name VARCHAR); "
    "INSERT INTO ins_{u} SELECT id, name FROM {t} WHERE split = 'valid'; SELECT * FROM ins_{u}",
    "CREATE OR REPLACE VIEW v_{u} AS SELECT id, upper(name) AS n FROM {t}; SELECT * FROM v_{u} WHERE n IS NOT NULL",
    "DESCRIBE SELECT * FROM {t}",
    "DESCRIBE FROM {t}",
    "SELECT column_name, column_type, min, max, count, null_percentage FROM (SUMMARIZE FROM {t})",
    "COPY (SELECT id, name FROM {t} WHERE label = 0) TO '{out}/copy_{u}.parquet' (FORMAT parquet); "
    "SELECT * FROM read_parquet('{out}/copy_{u}.parquet')",
    "SELECT 'tfrecord_scan(' || id AS s, 'read_tfrecord(''x'')' AS q FROM {t} WHERE id < 5",
    "SELECT id -- tfrecord_scan('nope')\nFROM /* read_tfrecord('x') */ {t} WHERE id < 5",
    "FROM {t} SELECT id, label WHERE id BETWEEN 10 AND 20",
    "SELECT id, len(emb), list_sum(emb) FROM {t} WHERE emb[1] > 300",
    "SELECT id, unnest(emb) AS e FROM {t} WHERE id < 10",
    "SELECT upper(name), length(name), split FROM {t} WHERE name LIKE '%3%'",
    "SELECT count(*) FILTER (WHERE label = 1), sum(CASE WHEN split = 'train' THEN 1 ELSE 0 END) FROM {t}",
    "SELECT DISTINCT split, label FROM {t}",
    "SELECT id, label FROM {t} ORDER BY label NULLS FIRST, id LIMIT 10 OFFSET 5",
    "SELECT id, x FROM {t}, LATERAL (SELECT id * 2 AS x) WHERE id < 5",
    "SELECT id, score * 2 + 1 AS y, id // 7 AS z FROM {t} WHERE score BETWEEN 10 AND 12",
    "SELECT count(*) FROM {t} WHERE id NOT IN (SELECT id FROM {t} WHERE label IS NULL)",
    "PIVOT (SELECT split, label FROM {t}) ON split USING count(*)",
    "SELECT ';' AS s, count(*) FROM {t};",
    "SELECT $$tfrecord_scan('x')$$ AS s, E'read_tfrecord(\\'y\\')' AS e, count(*) FROM {t}",
]


@pytest.mark.parametrize("number", range(len(STATEMENTS)))
def test_statement_matches_arrow_table(con, data, number):
    template = STATEMENTS[number]
    scan = SCAN_SPELLINGS[number % len(SCAN_SPELLINGS)].format(**data)
    over_scan = template.format(t=scan, u="scan", **data)
    over_table = template.format(t="ref", u="ref", **data)
    expected = rows_of(con.sql(over_table))
    assert sum(expected.values()) > 0, "the statement must return rows to be a test"
    assert rows_of(con.sql(over_scan)) == expected


def test_statement_count():
    assert len(STATEMENTS) >= 40


def test_explain_shows_the_extensions_scan(con, data):
    plan = con.sql(f"EXPLAIN SELECT id FROM tfrecord_scan('{data['dir']}') WHERE label = 1").fetchall()
    text = plan[0][1]
    assert "TFRECORD_SCAN" in text.upper()


def test_default_alias_is_the_function_name(con, data):
    rows = con.sql(f"SELECT tfrecord_scan.id FROM tfrecord_scan('{data['dir']}') WHERE id < 3 ORDER BY 1")
    assert rows.fetchall() == [(0,), (1,), (2,)]
    rows = con.sql(f"SELECT read_tfrecord.id FROM read_tfrecord('{data['dir']}') WHERE id = 7")
    assert rows.fetchall() == [(7,)]


def test_list_source_and_literal_arguments(con, data):
    train, test = (f"{data['dir']}/split={s}/*.tfrecord" for s in ("train", "test"))
    result = con.sql(f"SELECT count(*) FROM tfrecord_scan(['{train}', '{test}',])").fetchall()
    expected = con.sql("SELECT count(*) FROM ref WHERE split IN ('train', 'test')").fetchall()
    assert result == expected
    result = con.sql(
        f"SELECT count(*) FROM tfrecord_scan('{train}', infer_sample := 1_00, "
        f"hive_partitioning := false, infer_files := -1)"
    ).fetchall()
    assert result == con.sql("SELECT count(*) FROM ref WHERE split = 'train'").fetchall()


@pytest.mark.parametrize(
    "argument, message",
    [
        ("concat('a', 'b')", "no such file or directory: 'ab'"),
        ("'a' || 'b'", "no such file or directory: 'ab'"),
        ("E'a\\tb'", "no such file or directory: 'a\tb'"),
        ("'a'::VARCHAR", "no such file or directory: 'a'"),
        ("1 + 1", "tfrecord_scan: the source must be a VARCHAR path or glob"),
        ("(SELECT 'x')", "Table function cannot contain subqueries"),
    ],
)
def test_arguments_are_constant_expressions_as_in_read_parquet(con, argument, message):
    """DuckDB evaluates a table function's arguments (constant expressions, no subquery)
    before the extension sees their values."""
    with pytest.raises(BinderError) as info:
        con.sql(f"SELECT * FROM tfrecord_scan({argument})")
    assert str(info.value).startswith("Binder Error: " + message)


def test_execute_keeps_parameters(con, data):
    scan = f"tfrecord_scan('{data['dir']}')"
    got = con.execute(f"SELECT id FROM {scan} WHERE label = ? AND split = ? ORDER BY id", [2, "valid"]).fetchall()
    want = con.execute("SELECT id FROM ref WHERE label = ? AND split = ? ORDER BY id", [2, "valid"]).fetchall()
    assert got == want and len(got) > 10
    # a ? inside the call's arguments is evaluated there and removed from the rest
    got = con.execute(
        "SELECT count(*) FROM tfrecord_scan(?, hive_partitioning := ?) WHERE label = ?", [data["dir"], True, 1]
    ).fetchall()
    assert got == con.execute("SELECT count(*) FROM ref WHERE label = 1").fetchall()
    relation = con.sql(f"SELECT max(id) FROM {scan} WHERE split = $1", params=["test"])
    assert relation.fetchall() == [(397,)]


def test_filename_and_schema_parameters(con, data):
    rows = con.sql(
        f"SELECT bool_and(filename LIKE '%.tfrecord'), count(DISTINCT filename) > 3 "
        f"FROM tfrecord_scan('{data['dir']}', filename := true)"
    ).fetchall()
    assert rows == [(True, True)]
    rows = con.sql(f"SELECT count(DISTINCT src) FROM tfrecord_scan('{data['dir']}', filename := 'src')").fetchall()
    assert rows == [(len(tfsql.dataset(data["dir"]).files),)]
    described = con.sql(f"""DESCRIBE SELECT * FROM tfrecord_scan('{data["dir"]}',
        columns := {{'id': 'BIGINT', 'score': 'FLOAT', 'emb': 'FLOAT[]', 'name': 'VARCHAR'}})""").fetchall()
    assert [(r[0], r[1]) for r in described] == [
        ("id", "BIGINT"),
        ("score", "FLOAT"),
        ("emb", "FLOAT[]"),
        ("name", "VARCHAR"),
        ("split", "VARCHAR"),
    ]
    rows = con.sql(
        f"SELECT sum(id), sum(emb[2]) FROM tfrecord_scan('{data['dir']}', "
        f"schema := {{'id': 'BIGINT', 'emb': 'FLOAT[]'}}, hive_types := {{'split': 'VARCHAR'}})"
    ).fetchall()
    assert rows == [(sum(range(N_ROWS)), float(sum(i % 5 for i in range(N_ROWS))))]


def test_views_over_tfrecord_scan_list_the_files_again(data, tmp_path):
    """A view keeps the call as written: each query of it lists the files again."""
    directory = tmp_path / "growing"
    tfsql.write_tfrecord(pa.table({"id": [1, 2]}), str(directory))
    with connect() as connection:
        connection.sql(f"CREATE VIEW tv AS SELECT id FROM tfrecord_scan('{directory}/*.tfrecord')")
        assert connection.sql("SELECT sum(id) FROM tv").fetchall() == [(3,)]
        tfsql.write_tfrecord(pa.table({"id": [10]}), str(directory / "more.tfrecord"))
        assert connection.sql("SELECT sum(id) FROM tv").fetchall() == [(13,)]


def test_multiple_statements_return_the_last_result(con, data):
    scan = f"tfrecord_scan('{data['dir']}')"
    relation = con.sql(
        f"CREATE OR REPLACE TEMP TABLE m AS SELECT * FROM {scan};  SELECT count(*) FROM m; "
        f"SELECT count(*) * 2 FROM {scan} -- done;"
    )
    assert relation.fetchall() == [(2 * N_ROWS,)]


def test_statements_without_tfrecord_pass_through(con):
    assert con.sql("SELECT 40 + 2").fetchall() == [(42,)]
    assert con.execute("SELECT ? * 2", [21]).fetchall() == [(42,)]
    assert con.table("split_names").count("*").fetchall() == [(3,)]


def test_connect_loads_into_an_existing_connection(data):
    raw = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    raw.execute("CREATE TABLE shared AS SELECT 1 AS x")
    assert connect(raw) is raw
    raw.sql(f"CREATE TABLE copied AS SELECT id FROM tfrecord_scan('{data['dir']}') WHERE id < 3")
    assert raw.sql("SELECT count(*) FROM copied").fetchall() == [(3,)]
    with pytest.raises(TypeError, match="DuckDB options for an already open connection"):
        connect(raw, read_only=True)
    raw.close()
    with pytest.raises(PermissionError, match="does not allow unsigned extensions"):
        connect(duckdb.connect())


def test_connect_is_duckdbs_own_connection():
    con = connect()
    assert type(con) is duckdb.DuckDBPyConnection
    assert con.sql("SELECT current_setting('allow_unsigned_extensions')").fetchall() == [(True,)]


def test_module_sql_uses_tfsqls_default_connection(data):
    tfsql.sql(f"CREATE OR REPLACE TABLE default_t AS SELECT id FROM tfrecord_scan('{data['dir']}') WHERE id < 4")
    assert tfsql.sql("SELECT sum(id) FROM default_t").fetchall() == [(6,)]
    assert tfsql.duckdb.default_connection().sql("SELECT count(*) FROM default_t").fetchall() == [(4,)]
    tfsql.sql("DROP TABLE default_t")


def test_register_a_dataset_and_cursor(data):
    with connect() as connection:
        connection.register("tr", tfsql.dataset(data["dir"], hive_partitioning=True))
        assert connection.execute("SELECT count(*) FROM tr WHERE split = ?", ["train"]).fetchall() == [(134,)]
        cursor = connection.cursor()
        assert cursor.sql(f"SELECT count(*) FROM tfrecord_scan('{data['dir']}')").fetchall() == [(N_ROWS,)]
        connection.unregister("tr")
        with pytest.raises(duckdb.CatalogException, match="tr"):
            connection.sql("SELECT * FROM tr")


# --------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------


def test_unknown_named_parameter_lists_candidates(con, data):
    # the V2 build registers its BOOLEAN parameters as ANY: the V2 API passes an omitted
    # parameter as its default, and BOOLEAN has no value left to tell "omitted" from an
    # explicit NULL, which must be refused (docs/duckdb-extension.md)
    boolean = "ANY" if "duckdb-v" in tfsql.duckdb_extension_path() else "BOOLEAN"
    with pytest.raises(
        BinderError,
        match=r'Invalid named parameter "foo" for function tfrecord_scan\n'
        rf"Candidates:\n(?:    .+\n)*    hive_partitioning {boolean}\n",
    ):
        con.sql(f"SELECT * FROM tfrecord_scan('{data['dir']}', foo := 1)")


def test_missing_source_and_extra_positional(con, data):
    with pytest.raises(BinderError, match=r"No function matches the given name and argument types 'tfrecord_scan\("):
        con.sql("SELECT * FROM tfrecord_scan(hive_partitioning := true)")
    with pytest.raises(
        BinderError,
        match=r"No function matches .*'read_tfrecord\((STRING_LITERAL|VARCHAR), (STRING_LITERAL|VARCHAR)\)'",
    ):
        con.sql(f"SELECT * FROM read_tfrecord('{data['dir']}', 'x')")


def test_wrong_parameter_types(con, data):
    with pytest.raises(BinderError, match=r"tfrecord_scan: the source must be a VARCHAR path or glob"):
        con.sql("SELECT * FROM tfrecord_scan(42)")
    with pytest.raises(BinderError, match=r"column 'id' of columns has type 'NOT_A_TYPE'"):
        con.sql(f"SELECT * FROM tfrecord_scan('{data['dir']}', columns := {{'id': 'NOT_A_TYPE'}})")


def test_no_files(con, data):
    with pytest.raises(BinderError, match=r"^Binder Error: no files match the pattern '.*nothing_here/\*\.tfrecord'"):
        con.sql(f"SELECT * FROM tfrecord_scan('{data['root']}/nothing_here/*.tfrecord')")


def test_bad_option_value(con, data):
    with pytest.raises(BinderError, match=r"^Binder Error: tfrecord_scan: .*record.type"):
        con.sql(f"SELECT * FROM tfrecord_scan('{data['dir']}', record_type := 'nonsense')")


def test_dollar_parameter_inside_call_is_duckdbs(con, data):
    assert con.execute("SELECT count(*) FROM tfrecord_scan($1)", [data["dir"]]).fetchall() == [(N_ROWS,)]


def test_corrupt_record_is_reported_and_can_be_skipped(tmp_path):
    directory = tmp_path / "corrupt"
    tfsql.write_tfrecord(pa.table({"x": list(range(1000))}), str(directory), num_shards=1)
    (path,) = directory.glob("*.tfrecord")
    damaged = bytearray(path.read_bytes())
    damaged[5000] ^= 0xFF
    path.write_bytes(bytes(damaged))
    with connect() as connection:
        with pytest.raises(
            duckdb.InvalidInputException,
            match=r"data CRC mismatch in .*part-00000-of-00001"
            r"\.tfrecord, record 165 at byte 4987",
        ):
            connection.sql(f"SELECT sum(x) FROM tfrecord_scan('{directory}', infer_sample := 10)").fetchall()
        rows = connection.sql(
            f"SELECT count(*) FROM tfrecord_scan('{directory}', infer_sample := 10, ignore_errors := true)"
        ).fetchall()
        assert rows == [(999,)]


@pytest.mark.skipif("duckdb-v" not in tfsql.duckdb_extension_path(), reason="the v1 build's COPY takes a STRUCT column")
def test_changed_files_are_seen_by_the_next_statement(tmp_path):
    directory = tmp_path / "changing"
    directory.mkdir()
    with connect() as connection:
        connection.sql(f"COPY (SELECT 1 AS a) TO '{directory}/part.tfrecord'")
        query = f"SELECT * FROM tfrecord_scan('{directory}')"
        assert connection.sql(query).fetchall() == [(1,)]
        assert connection.sql(query).fetchall() == [(1,)]  # unchanged files: the schema is reused
        connection.sql(f"COPY (SELECT 'x' AS b, 2 AS c) TO '{directory}/part.tfrecord' (OVERWRITE)")
        assert connection.sql(query).fetchall() == [("x", 2)]


def test_python_only_options_are_not_parameters(con, data):
    """``split_bytes``, ``batch_size``, ``threads``, ``hidden_file_prefix`` are the Python
    reader's: register a `tfsql.dataset` to use them (docs/duckdb-extension.md)."""
    with pytest.raises(
        duckdb.BinderException, match=r'Invalid named parameter "split_bytes" for function tfrecord_scan'
    ):
        con.sql(f"SELECT count(*) FROM tfrecord_scan('{data['dir']}', split_bytes := 1048576)")
    with pytest.raises(duckdb.BinderException, match=r"tfrecord_scan: give either schema or columns, not both"):
        con.sql(
            f"SELECT * FROM tfrecord_scan('{data['dir']}', schema := {{'id': 'BIGINT'}}, columns := {{'id': 'BIGINT'}})"
        )
    with pytest.raises(duckdb.BinderException, match=r"tfrecord_scan: batch_bytes must be a positive integer, not 0"):
        con.sql(f"SELECT * FROM tfrecord_scan('{data['dir']}', batch_bytes := 0)")


# --------------------------------------------------------------------------------------
# tfrecord_scan over non-ASCII paths, empty files, marker-only directories
# --------------------------------------------------------------------------------------


def test_tfrecord_scan_with_non_ascii_path_and_literals(tmp_path):
    root = tmp_path / "dàta ü'q"
    write_examples(root / "city=São Paulo" / "part 0.tfrecord", [{"héllo": 1}])
    write_examples(root / "city=a%3Db" / "p.tfrecord", [{"héllo": 2}])
    con = tfsql.duckdb.connect()
    quoted = str(root).replace("'", "''")
    assert con.sql(f"SELECT 'café' AS c, \"héllo\", city FROM tfrecord_scan('{quoted}') ORDER BY 2").fetchall() == [
        ("café", 1, "São Paulo"),
        ("café", 2, "a=b"),
    ]
    assert con.sql(
        f"SELECT count(*) FROM tfrecord_scan('{quoted}/**/*.tfrecord', filename := true) WHERE city = 'São Paulo'"
    ).fetchall() == [(1,)]


def test_tfrecord_scan_over_empty_files_counts_zero(tmp_path):
    # Files without features have only the filename column (DuckDB scans no table
    # without columns), so count(*) works (issue 13).
    (tmp_path / "a.tfrecord").write_bytes(b"")
    con = tfsql.duckdb.connect()
    assert con.sql(f"SELECT count(*) FROM tfrecord_scan('{tmp_path}')").fetchall() == [(0,)]
    assert con.sql(f"SELECT * FROM tfrecord_scan('{tmp_path}')").columns == ["filename"]
    assert con.sql(f"SELECT count(*) FROM tfrecord_scan('{tmp_path}', schema := {{'x': 'BIGINT'}})").fetchall() == [
        (0,)
    ]


def test_tfrecord_scan_of_a_directory_holding_only_success_marker(tmp_path):
    (tmp_path / "_SUCCESS").write_bytes(b"")
    with pytest.raises(
        duckdb.BinderException, match=r"^Binder Error: no files found in the directory .*: it is empty "
    ):
        tfsql.duckdb.connect().sql(f"SELECT * FROM tfrecord_scan('{tmp_path}')")


def test_a_file_changed_in_place_is_inferred_again_from_its_listed_mtime(tmp_path):
    """The extension infers a call's schema again only when its files changed: the key
    is taken from the listing (path, size, mtime), not from a second stat."""
    path = tmp_path / "part-0.tfrecord"
    write_examples(path, [{"a": 1}])
    con = tfsql.connect()
    assert con.sql(f"SELECT * FROM tfrecord_scan('{tmp_path}')").fetchall() == [(1,)]
    before = os.stat(path)
    write_examples(path, [{"b": 2}])  # the same size: only the modification time tells
    assert os.path.getsize(path) == before.st_size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
    result = con.sql(f"SELECT * FROM tfrecord_scan('{tmp_path}')")
    assert (result.columns, result.fetchall()) == (["b"], [(2,)])


# --------------------------------------------------------------------------------------
# What plain DuckDB + the extension leaves to Python (docs/duckdb-extension.md)
# --------------------------------------------------------------------------------------


def test_an_fsspec_source_is_read_through_a_registered_dataset(tmp_path):
    """``memory://`` (any fsspec file system) is the Python reader's: registered, DuckDB
    scans it as Arrow with filter pushdown; the extension itself reads local paths."""
    source = f"memory://{tmp_path.name}/d"
    tfsql.write_tfrecord(pa.table({"x": [1, 2, 3], "p": [0, 1, 1]}), source, partition_by="p")
    with connect() as con:
        con.register("m", tfsql.dataset(source, hive_partitioning=True))
        assert con.sql("SELECT sum(x) FROM m WHERE p = 1").fetchall() == [(5,)]
        with pytest.raises(duckdb.Error):
            con.sql(f"SELECT * FROM tfrecord_scan('{source}')").fetchall()


def test_a_querys_rows_go_to_the_writer_on_every_duckdb(tmp_path):
    """``write_tfrecord``'s rule for a query's rows (every DuckDB, also 1.4 without COPY)."""
    with connect() as con:
        rows = con.sql("SELECT range AS x, range % 2 AS p FROM range(10)").arrow()
        result = tfsql.write_tfrecord(rows, str(tmp_path / "out"), partition_by="p", num_shards=1)
    assert result.rows == 10
    assert sorted(tfsql.read_tfrecord(str(tmp_path / "out")).column("x").to_pylist()) == list(range(10))
