"""No statement smuggling through the text tfsql builds (issue 34, item 1).

`tfsql.connect()` and ``tfsql sql`` hand statements to DuckDB as written (the
extension's COPY and scan take their options from DuckDB's binder); tfsql builds SQL
text only for ``${param}`` placeholders (values quoted by DuckDB's rules) and
``--schema`` (a ``CREATE TABLE``). Every shape below hides a
second statement in a quote, a ``;``, a comment, a path, an option name or value; each
must fail (or run as the one statement it is) and the canary table and canary file must
survive, through `tfsql.connect()`, ``tfsql sql`` and ``tfsql run --param``.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

import tfsql
from tfsql.cli import main
from tfsql.duckdb import connect

CANARY_TEXT = "canary\n"


@pytest.fixture
def place(tmp_path):
    """The data file, the canary file and the payload: SQL that drops the canary table
    and overwrites the canary file when it runs."""
    tfsql.write_tfrecord(pa.table({"x": [1, 2]}), str(tmp_path / "f.tfrecord"))
    canary = tmp_path / "canary.csv"
    canary.write_text(CANARY_TEXT)
    payload = f"DROP TABLE victim; COPY (SELECT 'pwned') TO '{canary}' (FORMAT csv, HEADER false)"
    return tmp_path, canary, payload


def shapes(data: str, payload: str) -> list[str]:
    """Statements that smuggle ``payload`` (each is one statement as DuckDB reads it)."""
    q = payload.replace("'", "''")
    return [
        # the issue's statement: a quoted option *name* that used to be pasted unquoted
        f"""COPY t FROM '{data}' (FORMAT tfrecord, "record_type := 'example'); {payload}; SELECT 2; --" 'v')""",
        f"""COPY t FROM '{data}' (FORMAT tfrecord, "record_type := 'example') /*" 'v')""",
        # option values: quotes in a string, a quoted name
        f"COPY t FROM '{data}' (FORMAT tfrecord, RECORD_TYPE 'example''); {q}; --')",
        f"""COPY t FROM '{data}' (FORMAT tfrecord, RECORD_TYPE "example'); {payload}; --")""",
        f"COPY t FROM '{data}' (FORMAT tfrecord, COMPRESSION ('a'')); {q}; --', 'b'))",
        # the table and its columns
        f"""COPY "t; {payload}; --" FROM '{data}' (FORMAT tfrecord)""",
        f"""COPY t ("x) SELECT 1; {payload}; --") FROM '{data}' (FORMAT tfrecord)""",
        f"COPY t /* ; {payload}; */ FROM '{data}' (FORMAT tfrecord)",
        # the path
        f"COPY t FROM '{data}''); {q}; --.tfrecord' (FORMAT tfrecord)",
        # COPY ... TO: the table, its columns, a comment at the end of the query
        f"""COPY "t; {payload}; --" TO '{data}.out.tfrecord' (FORMAT tfrecord)""",
        f"""COPY t ("x FROM t; {payload}; --") TO '{data}.out.tfrecord' (FORMAT tfrecord)""",
        f"COPY (SELECT {{'x': 1}} AS s --\n) TO '{data}.out.tfrecord' (FORMAT tfrecord)",
    ]


def survived(con, canary) -> None:
    assert con.execute("SELECT v FROM victim").fetchall() == [(42,)]
    assert canary.read_text() == CANARY_TEXT


@pytest.mark.parametrize("shape", range(12))
def test_connect_runs_no_smuggled_statement(place, shape):
    tmp_path, canary, payload = place
    con = connect()
    con.execute("CREATE TABLE victim AS SELECT 42 AS v; CREATE TABLE t (x BIGINT)")
    statement = shapes(str(tmp_path / "f.tfrecord"), payload)[shape]
    try:
        con.execute(statement)
    except duckdb.Error:
        pass
    survived(con, canary)
    con.close()


HAS_COPY = tuple(int(p) for p in duckdb.__version__.split(".")[:3] if p.isdigit()) >= (1, 5, 6)
needs_copy = pytest.mark.skipif(not HAS_COPY, reason="COPY functions need DuckDB >= 1.5.6")


@needs_copy
def test_the_issues_statement_is_refused_as_an_unknown_option(place):
    tmp_path, _, payload = place
    con = connect()
    con.execute("CREATE TABLE victim AS SELECT 42 AS v; CREATE TABLE t (x BIGINT)")
    with pytest.raises(duckdb.BinderException, match="is not a supported option for copy function 'tfrecord'"):
        con.execute(shapes(str(tmp_path / "f.tfrecord"), payload)[0])


@pytest.mark.skipif("duckdb-v" not in tfsql.duckdb_extension_path(), reason="COPY t TO is the V2 build's")
def test_quoted_names_and_values_still_work(place):
    tmp_path, _, _ = place
    data = str(tmp_path / "f.tfrecord")
    con = connect()
    con.execute('CREATE SCHEMA s; CREATE TABLE s."my t" ("my x" BIGINT, y BIGINT)')
    con.execute(f"""COPY s."my t" ("my x") FROM '{data}' (FORMAT tfrecord, "RECORD_TYPE" 'example')""")
    assert con.execute('SELECT "my x", y FROM s."my t" ORDER BY 1').fetchall() == [(1, None), (2, None)]
    con.execute(f"""COPY s."my t" ("my x") TO '{tmp_path}/out.tfrecord' (FORMAT tfrecord)""")
    assert con.execute(f"SELECT * FROM tfrecord_scan('{tmp_path}/out.tfrecord') ORDER BY 1").fetchall() == [(1,), (2,)]


@pytest.mark.parametrize("shape", range(12))
def test_tfsql_sql_runs_no_smuggled_statement(place, shape, capsys):
    tmp_path, canary, payload = place
    database = str(tmp_path / "db.duckdb")
    assert main(["sql", "-d", database, "CREATE TABLE victim AS SELECT 42 AS v; CREATE TABLE t (x BIGINT)"]) == 0
    main(["sql", "-d", database, shapes(str(tmp_path / "f.tfrecord"), payload)[shape]])
    capsys.readouterr()
    with duckdb.connect(database) as con:
        survived(con, canary)


@pytest.mark.parametrize(
    "script, value",
    [
        ("SELECT E'${v}' AS v", "\\'; DROP TABLE victim; --"),
        ("SELECT '${v}' AS v", "'; DROP TABLE victim; --"),
        ('SELECT 1 AS "${v}"', '"; DROP TABLE victim; --'),
        ("SELECT $$${v}$$ AS v", "$$; DROP TABLE victim; --"),
        ("SELECT 1 AS v LIMIT ${v}", "1; DROP TABLE victim"),
        ("SELECT 1 AS v -- ${v}\n", "x\nDROP TABLE victim"),
    ],
)
def test_tfsql_run_param_runs_no_smuggled_statement(tmp_path, capsys, script, value):
    database = str(tmp_path / "db.duckdb")
    assert main(["sql", "-d", database, "CREATE TABLE victim AS SELECT 42 AS v"]) == 0
    path = tmp_path / "s.sql"
    path.write_text(script + ";\n")
    code = main(["run", str(path), "-d", database, "--param", f"v={value}"])
    out = capsys.readouterr().out
    if code == 0 and "E'" in script:
        assert value in out  # the value, as text
    with duckdb.connect(database) as con:
        assert con.execute("SELECT v FROM victim").fetchall() == [(42,)]


@pytest.mark.parametrize(
    "schema",
    [
        "x BIGINT); DROP TABLE victim; --",
        "x BIGINT) AS SELECT 1 AS x --",
        "x BIGINT DEFAULT 1) --",
        "x BIGINT, y VARCHAR DEFAULT (SELECT content FROM read_text('/etc/hostname'))",
    ],
)
def test_schema_option_is_column_definitions_only(place, schema, capsys):
    tmp_path, _, _ = place
    assert main(["head", str(tmp_path / "f.tfrecord"), "--schema", schema]) == 2
    assert "expected column definitions" in capsys.readouterr().err
