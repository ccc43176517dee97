"""``tfsql sql`` and ``tfsql run`` with every kind of statement (on DuckDB 1.4 and 2.x),
safe ``${param}`` substitution, and the interactive shell's commands."""

from __future__ import annotations

import pytest

from tfsql.cli import Statement, main, substitute_params
from tfsql.cli.errors import UsageError

def last_cell(out: str) -> str:
    """The last value of the last box table printed."""
    return [line.strip("│ ") for line in out.splitlines() if line.startswith("│")][-1]


STATEMENT_KINDS = [
    ("CREATE VIEW r AS SELECT 1 AS one; SELECT * FROM r", ["one", "1"]),
    ("CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (7), (8); SELECT sum(a) AS s FROM t", ["s", "15"]),
    ("CREATE TABLE t AS SELECT 5 AS a; SELECT a FROM t", ["a", "5"]),
    ("CREATE MACRO plus_one(a) AS a + 1; SELECT plus_one(41) AS answer", ["answer", "42"]),
    ("CREATE OR REPLACE MACRO rows_of(n) AS TABLE SELECT * FROM range(n); SELECT count(*) AS c FROM rows_of(3)",
     ["c", "3"]),
    ("SET threads = 1; SELECT current_setting('threads') AS t", ["t", "1"]),
    ("SET VARIABLE v = 'x'; SELECT getvariable('v') AS v", ["v", "x"]),
    ("PRAGMA enable_progress_bar; SELECT 1 AS done", ["done", "1"]),
    ("ATTACH ':memory:' AS other; CREATE TABLE other.t AS SELECT 3 AS a; SELECT a FROM other.t", ["a", "3"]),
    ("CREATE SEQUENCE s; SELECT nextval('s') AS n", ["n", "1"]),
    ("CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1); UPDATE t SET a = 2; DELETE FROM t WHERE a = 3; "
     "SELECT a FROM t", ["a", "2"]),
    ("BEGIN; CREATE TABLE t AS SELECT 1 AS a; COMMIT; DROP TABLE t; SELECT 9 AS nine", ["nine", "9"]),
]


@pytest.mark.parametrize("query, expected", STATEMENT_KINDS)
def test_sql_runs_every_statement_kind(query, expected, capsys):
    assert main(["sql", query, "--format", "csv"]) == 0
    assert capsys.readouterr().out.split() == expected


@pytest.mark.parametrize("query", ["CREATE VIEW r AS SELECT 1", "CREATE TABLE t (a INTEGER)",
                                   "CREATE MACRO m(a) AS a", "SET threads = 1", "ATTACH ':memory:' AS x",
                                   "PRAGMA version", "EXPLAIN SELECT 1", "CREATE SEQUENCE q"])
def test_sql_with_a_statement_without_rows_as_the_last(query, capsys):
    assert main(["sql", query]) == 0
    assert "Error" not in capsys.readouterr().err


def test_copy_to_and_from(tmp_path, capsys):
    csv = tmp_path / "x.csv"
    query = (f"CREATE TABLE t AS SELECT range AS a FROM range(5); COPY t TO '{csv}'; "
             f"CREATE TABLE u (a BIGINT); COPY u FROM '{csv}'; "
             f"COPY (SELECT a FROM u) TO '{tmp_path}/x.tfrecord'; "
             f"SELECT sum(a) AS s FROM tfrecord_scan('{tmp_path}/x.tfrecord')")
    assert main(["sql", query]) == 0
    captured = capsys.readouterr()
    assert last_cell(captured.out) == "10"
    assert "COPY: 5 rows" in captured.err


def test_explain_renders_its_line_breaks(capsys):
    assert main(["sql", "EXPLAIN SELECT 1 AS one"]) == 0
    out = capsys.readouterr().out
    assert "\\n" not in out
    lines = out.splitlines()
    assert len(lines) >= 4 and all(line[0] in "┌│└╭╰├" for line in lines if line.strip())


def test_run_script_with_every_statement_kind(tmp_path, capsys):
    script = tmp_path / "kinds.sql"
    script.write_text("CREATE VIEW r AS SELECT 1 AS a;\nCREATE TABLE t AS SELECT * FROM r;\n"
                      "CREATE MACRO twice(x) AS 2 * x;\nINSERT INTO t VALUES (2);\nSET threads = 1;\n"
                      "PRAGMA version;\nATTACH ':memory:' AS aux;\nEXPLAIN SELECT * FROM t;\n"
                      f"COPY t TO '{tmp_path}/t.csv';\nSELECT sum(twice(a)) AS s FROM t;\n")
    assert main(["run", str(script)]) == 0
    captured = capsys.readouterr()
    assert last_cell(captured.out) == "6"
    assert "ran 10 statements" in captured.err


# -- ${param} ----------------------------------------------------------------------------


def test_param_inside_quotes_cannot_end_the_string(tmp_path, capsys):
    script = tmp_path / "s.sql"
    script.write_text("CREATE TABLE victim AS SELECT 1 AS v;\n"
                      "SELECT '${name}' AS name;\nSELECT count(*) AS n FROM victim;\n")
    value = "x'; DROP TABLE victim; SELECT '"
    assert main(["run", str(script), "--param", f"name={value}"]) == 0
    out = capsys.readouterr().out
    assert value in out and last_cell(out) == "1"


@pytest.mark.parametrize("value", ["1; DROP TABLE victim", "1 OR true", "id) --", "'x'"])
def test_param_outside_quotes_must_be_a_number_or_a_name(tmp_path, capsys, value):
    script = tmp_path / "s.sql"
    script.write_text("CREATE TABLE victim AS SELECT 1 AS v;\nSELECT * FROM range(10) LIMIT ${n};\n")
    assert main(["run", str(script), "--param", f"n={value}"]) == 2
    err = capsys.readouterr().err
    assert "${n} stands outside quotes, so its value must be a number or a name" in err
    assert "getvariable('n')" in err


def test_substitution_quoting_rules():
    statement = Statement("SELECT '${a}', \"${b}\", ${c}, $$${d}$$ FROM t LIMIT ${n:-5}", 1)
    text, missing = substitute_params(statement, {"a": "it's", "b": 'say "hi"', "c": "my_col", "d": "x'y"})
    assert text == "SELECT 'it''s', \"say \"\"hi\"\"\", my_col, $$x'y$$ FROM t LIMIT 5" and missing == []
    with pytest.raises(UsageError, match=r"holds \$\$"):
        substitute_params(statement, {"a": "", "b": "", "c": "c", "d": "$$; DROP TABLE t; $$"})


def test_params_are_duckdb_variables_and_count_as_used(tmp_path, capsys):
    tricky = "it's; DROP TABLE victim; --"
    script = tmp_path / "v.sql"
    script.write_text("CREATE TABLE victim AS SELECT 1 AS v;\n"
                      "SELECT getvariable('text') = $$" + tricky + "$$ AS same, "
                      "(SELECT count(*) FROM victim) AS n;\n")
    assert main(["run", str(script), "--param", f"text={tricky}"]) == 0
    captured = capsys.readouterr()
    assert "true" in captured.out and "not used" not in captured.err


def test_getvariable_in_tfrecord_scan(tmp_path, capsys):
    assert main(["sql", f"COPY (SELECT 1 AS a) TO '{tmp_path}/d' (FORMAT tfrecord)"]) == 0
    script = tmp_path / "g.sql"
    script.write_text("SELECT count(*) AS n FROM tfrecord_scan(getvariable('src'));\n")
    assert main(["run", str(script), "--param", f"src={tmp_path}/d"]) == 0
    captured = capsys.readouterr()
    assert last_cell(captured.out) == "1" and "not used" not in captured.err
