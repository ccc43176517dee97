"""``tfsql sql`` and ``tfsql run`` with every kind of statement (on DuckDB 1.4 and 2.x),
safe ``${param}`` substitution, and the interactive shell's commands."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest

import tfsql

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
    (
        "CREATE OR REPLACE MACRO rows_of(n) AS TABLE SELECT * FROM range(n); SELECT count(*) AS c FROM rows_of(3)",
        ["c", "3"],
    ),
    ("SET threads = 1; SELECT current_setting('threads') AS t", ["t", "1"]),
    ("SET VARIABLE v = 'x'; SELECT getvariable('v') AS v", ["v", "x"]),
    ("PRAGMA enable_progress_bar; SELECT 1 AS done", ["done", "1"]),
    ("ATTACH ':memory:' AS other; CREATE TABLE other.t AS SELECT 3 AS a; SELECT a FROM other.t", ["a", "3"]),
    ("CREATE SEQUENCE s; SELECT nextval('s') AS n", ["n", "1"]),
    (
        "CREATE TABLE t (a INTEGER); INSERT INTO t VALUES (1); UPDATE t SET a = 2; DELETE FROM t WHERE a = 3; "
        "SELECT a FROM t",
        ["a", "2"],
    ),
    ("BEGIN; CREATE TABLE t AS SELECT 1 AS a; COMMIT; DROP TABLE t; SELECT 9 AS nine", ["nine", "9"]),
]


@pytest.mark.parametrize("query, expected", STATEMENT_KINDS)
def test_sql_runs_every_statement_kind(query, expected, capsys):
    assert main(["sql", query, "--format", "csv"]) == 0
    assert capsys.readouterr().out.split() == expected


@pytest.mark.parametrize(
    "query",
    [
        "CREATE VIEW r AS SELECT 1",
        "CREATE TABLE t (a INTEGER)",
        "CREATE MACRO m(a) AS a",
        "SET threads = 1",
        "ATTACH ':memory:' AS x",
        "PRAGMA version",
        "EXPLAIN SELECT 1",
        "CREATE SEQUENCE q",
    ],
)
def test_sql_with_a_statement_without_rows_as_the_last(query, capsys):
    assert main(["sql", query]) == 0
    assert "Error" not in capsys.readouterr().err


@pytest.mark.skipif("duckdb-v" not in tfsql.duckdb_extension_path(), reason="COPY t TO is the V2 build's")
def test_copy_to_and_from(tmp_path, capsys):
    csv = tmp_path / "x.csv"
    query = (
        f"CREATE TABLE t AS SELECT range AS a FROM range(5); COPY t TO '{csv}'; "
        f"CREATE TABLE u (a BIGINT); COPY u FROM '{csv}'; "
        f"COPY (SELECT a FROM u) TO '{tmp_path}/x.tfrecord'; "
        f"SELECT sum(a) AS s FROM tfrecord_scan('{tmp_path}/x.tfrecord')"
    )
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
    script.write_text(
        "CREATE VIEW r AS SELECT 1 AS a;\nCREATE TABLE t AS SELECT * FROM r;\n"
        "CREATE MACRO twice(x) AS 2 * x;\nINSERT INTO t VALUES (2);\nSET threads = 1;\n"
        "PRAGMA version;\nATTACH ':memory:' AS aux;\nEXPLAIN SELECT * FROM t;\n"
        f"COPY t TO '{tmp_path}/t.csv';\nSELECT sum(twice(a)) AS s FROM t;\n"
    )
    assert main(["run", str(script)]) == 0
    captured = capsys.readouterr()
    assert last_cell(captured.out) == "6"
    assert "ran 10 statements" in captured.err


# -- ${param} ----------------------------------------------------------------------------


def test_param_inside_quotes_cannot_end_the_string(tmp_path, capsys):
    script = tmp_path / "s.sql"
    script.write_text(
        "CREATE TABLE victim AS SELECT 1 AS v;\nSELECT '${name}' AS name;\nSELECT count(*) AS n FROM victim;\n"
    )
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
    assert text == 'SELECT \'it\'\'s\', "say ""hi""", my_col, $$x\'y$$ FROM t LIMIT 5' and missing == []
    with pytest.raises(UsageError, match=r"holds \$\$"):
        substitute_params(statement, {"a": "", "b": "", "c": "c", "d": "$$; DROP TABLE t; $$"})


def test_params_are_duckdb_variables_and_count_as_used(tmp_path, capsys):
    tricky = "it's; DROP TABLE victim; --"
    script = tmp_path / "v.sql"
    script.write_text(
        "CREATE TABLE victim AS SELECT 1 AS v;\n"
        "SELECT getvariable('text') = $$" + tricky + "$$ AS same, "
        "(SELECT count(*) FROM victim) AS n;\n"
    )
    assert main(["run", str(script), "--param", f"text={tricky}"]) == 0
    captured = capsys.readouterr()
    assert "true" in captured.out and "not used" not in captured.err


def test_getvariable_in_tfrecord_scan(tmp_path, capsys):
    tfsql.write_tfrecord(pa.table({"a": [1]}), str(tmp_path / "d"))
    script = tmp_path / "g.sql"
    script.write_text("SELECT count(*) AS n FROM tfrecord_scan(getvariable('src'));\n")
    assert main(["run", str(script), "--param", f"src={tmp_path}/d"]) == 0
    captured = capsys.readouterr()
    assert last_cell(captured.out) == "1" and "not used" not in captured.err


# -- output formats, progress, Ctrl-C ------------------------------------------------------


def test_sql_markdown_format(tmp_path, capsys):
    assert (
        main(["sql", "SELECT 1 AS id, 'a|b' AS text UNION ALL SELECT 22, NULL ORDER BY id", "--format", "markdown"])
        == 0
    )
    assert capsys.readouterr().out == ("|  id | text |\n|----:|:-----|\n|   1 | a\\|b |\n|  22 | NULL |\n")
    assert main(["sql", "SELECT 3 AS n", "--output", str(tmp_path / "r.md")]) == 0
    assert (tmp_path / "r.md").read_text() == "|   n |\n|----:|\n|   3 |\n"


def _run_cli(args, **kwargs):

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    return subprocess.Popen([sys.executable, "-m", "tfsql", *args], env=env, **kwargs)


def test_duckdb_progress_bar_never_enters_redirected_results():

    # DuckDB draws its progress bar on stdout once a query runs longer than progress_bar_time
    process = _run_cli(
        [
            "sql",
            "SET progress_bar_time = 0; SELECT count(*) AS n FROM range(20000000) WHERE hash(range) % 7 = 0",
            "--format",
            "csv",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    lines = out.decode().split("\n")
    assert lines[0] == "n" and lines[1].isdigit() and lines[2:] == [""]


def test_duckdb_progress_bar_on_a_terminal():

    leader, follower = os.openpty()
    process = _run_cli(
        ["sql", "SET progress_bar_time = 0; SELECT count(*) AS n FROM range(30000000) WHERE hash(range) % 7 = 0"],
        stdout=follower,
        stderr=subprocess.PIPE,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    process.communicate(timeout=120)
    os.close(leader)
    shown = b"".join(chunks).decode()
    assert process.returncode == 0
    assert "100%" in shown and "▕" in shown  # DuckDB's bar, then the result table
    assert "│ n " in shown or "│    n" in shown or "n" in shown.split()


def _interrupt_when_started(process, marker):
    """Ctrl-C once the command wrote ``marker`` (its long query then runs); its output."""

    try:
        while not marker.exists() and process.poll() is None:
            time.sleep(0.05)
        time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        return process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise


def test_ctrl_c_during_a_long_query_exits_130_without_traceback(tmp_path):

    marker = tmp_path / "started.csv"
    process = _run_cli(
        ["sql", f"COPY (SELECT 1 AS started) TO '{marker}'; SELECT sum(hash(range)) FROM range(3000000000)"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = _interrupt_when_started(process, marker)
    assert process.returncode == 130, err
    assert err.decode().strip().endswith("tfsql: interrupted")
    assert "Traceback" not in err.decode() + out.decode()


def test_ctrl_c_during_a_tfrecord_scan_exits_130(tmp_path):

    data = tmp_path / "data"
    tfsql.write_tfrecord(pa.table({"x": range(200000)}), str(data))
    marker = tmp_path / "started.csv"
    process = _run_cli(
        [
            "sql",
            f"COPY (SELECT 1 AS started) TO '{marker}'; SELECT sum(hash(x, r.range)) "
            f"FROM tfrecord_scan('{data}') t, range(100000) r",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    _, err = _interrupt_when_started(process, marker)
    assert process.returncode == 130, err
    assert "Traceback" not in err.decode() and "tfsql: interrupted" in err.decode()


# -- the shell -----------------------------------------------------------------------------


def _shell(lines):
    from tfsql import cli

    feed = iter(lines)
    return cli.Shell(cli.SQLSession(cli.Console()), read_line=lambda prompt: next(feed))


def test_shell_mode_timer_and_schema(capsys):
    shell = _shell(
        [
            "CREATE TABLE people (id INTEGER, name VARCHAR);",
            "INSERT INTO people VALUES (1, 'ann'), (2, 'bo');",
            "CREATE VIEW names AS SELECT name FROM people;",
            "CREATE MACRO twice(x) AS 2 * x;",
            ".mode csv",
            "SELECT * FROM people ORDER BY id;",
            ".mode json",
            "SELECT twice(id) AS t FROM people ORDER BY id;",
            ".mode markdown",
            "SELECT name FROM names ORDER BY name;",
            ".mode yaml",
            ".mode table",
            ".timer on",
            "SELECT 1 AS one;",
            ".timer off",
            "SELECT 2 AS two;",
            ".schema",
            ".schema PEOPLE",
            ".quit",
        ]
    )
    assert shell.loop() == 0
    captured = capsys.readouterr()
    out = captured.out
    assert "id,name\n1,ann\n2,bo\n" in out
    assert '{"t":2}\n{"t":4}\n' in out
    assert "| name |\n|:-----|\n| ann  |\n| bo   |\n" in out
    assert ".mode yaml: choose one of table, csv, json, markdown (now markdown)" in captured.err
    run_times = [line for line in out.splitlines() if line.startswith("Run Time: ")]
    assert len(run_times) == 1 and run_times[0].endswith(" s")
    assert re.search(r'^CREATE TABLE people\(id INTEGER, "?name"? VARCHAR\);$', out, re.MULTILINE)
    assert re.search(r'^CREATE VIEW "?names"? AS SELECT "?name"? FROM people;$', out, re.MULTILINE)
    assert "CREATE MACRO twice(x) AS (2 * x);" in out
    assert out.count("CREATE TABLE people") == 2  # .schema and .schema PEOPLE
    assert shell.errors == 0


def test_shell_tab_completion():
    shell = _shell([])
    shell.session.run("CREATE TABLE training_examples (label_id INTEGER)")
    shell.run("SELECT 1")  # statements refresh the candidates
    assert shell.completions("train") == ["training_examples"]
    assert "label_id" in shell.completions("label")
    assert "SELECT" in shell.completions("SEL") and "select" in shell.completions("sel")
    assert "read_parquet" in shell.completions("read_par") and "tfrecord_scan" in shell.completions("tfrec")
    assert shell.completions(".sch") == [".schema"]
    assert shell.complete("train", 0) == "training_examples" and shell.complete("train", 1) is None


def test_shell_ctrl_c_while_typing_clears_the_line(capsys):
    from tfsql import cli

    lines = iter(["SELECT", KeyboardInterrupt, "SELECT 5 AS five;", ".quit"])

    def read_line(prompt):
        line = next(lines)
        if line is KeyboardInterrupt:
            raise KeyboardInterrupt
        return line

    shell = cli.Shell(cli.SQLSession(cli.Console()), read_line=read_line)
    assert shell.loop() == 0
    out = capsys.readouterr().out
    assert "^C" in out and "five" in out


def test_a_param_named_like_a_keyword(tmp_path, capsys):
    script = tmp_path / "k.sql"
    script.write_text("SELECT getvariable('select') AS v, '${select}' AS w;\n")
    assert main(["run", str(script), "--param", "select=it's"]) == 0
    assert capsys.readouterr().out.count("it's") == 2
