"""The ``tfsql`` command: output, files written, exit codes (0 ok, 1 data, 2 usage)."""

from __future__ import annotations

import collections
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import tfsql
from tfsql import cli
from tfsql._proto import Example
from tfsql.cli import Statement, format_value, main, split_statements, substitute_params
from tfsql.demo import reviews_table, write_demo_dataset
from tfsql.writer import write_tfrecord
from tfrecord_files import frame

ROWS = 2000
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> str:
    return write_demo_dataset(tmp_path_factory.mktemp("demo"), rows=ROWS).path


@pytest.fixture(scope="module")
def expected() -> pa.Table:
    return reviews_table(rows=ROWS)


def label_counts(table: pa.Table) -> dict[int, int]:
    return dict(sorted(collections.Counter(table.column("label").to_pylist()).items()))


# --------------------------------------------------------------------------------------
# Building TFRecord files by hand (independent of tfsql's writer), for corruption tests
# --------------------------------------------------------------------------------------


def example(i: int) -> bytes:
    ex = Example()
    ex.features.feature["id"].int64_list.value.append(i)
    ex.features.feature["name"].bytes_list.value.append(f"record-{i}".encode())
    return ex.SerializeToString()


def write_records(path: Path, payloads: list[bytes]) -> list[int]:
    """Write framed records; return the byte offset of each record's header."""
    offsets, data = [], b""
    for payload in payloads:
        offsets.append(len(data))
        data += frame(payload)
    path.write_bytes(data)
    return offsets


# --------------------------------------------------------------------------------------
# sql
# --------------------------------------------------------------------------------------


def test_sql_prints_a_table(demo, expected, capsys):
    status = main(["sql", f"SELECT label, count(*) AS n FROM tfrecord_scan('{demo}') GROUP BY label ORDER BY label"])
    out = capsys.readouterr().out
    assert status == 0
    assert "│ label │   n   │" in out
    for label, n in label_counts(expected).items():
        assert f"│ {label:>5} │ {n:>5} │" in out


def test_sql_csv_to_stdout(demo, expected, capsys):
    status = main(
        [
            "sql",
            f"SELECT label, count(*) AS n FROM tfrecord_scan('{demo}') GROUP BY label ORDER BY label",
            "--format",
            "csv",
        ]
    )
    assert status == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == ["label,n"] + [f"{label},{n}" for label, n in label_counts(expected).items()]


def test_sql_json_lines_keep_lists(demo, expected, capsys):
    status = main(["sql", f"SELECT id, tags FROM tfrecord_scan('{demo}') WHERE id < 3 ORDER BY id", "-f", "json"])
    assert status == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows == [{"id": i, "tags": expected.column("tags")[i].as_py()} for i in range(3)]


def test_sql_max_rows_shows_head_and_tail(demo, capsys):
    assert main(["sql", f"SELECT id FROM tfrecord_scan('{demo}') ORDER BY id", "--max-rows", "4"]) == 0
    out = capsys.readouterr().out
    assert re.search(rf"{ROWS} rows[\s│]+\(4 shown\)", out)  # DuckDB < 2 wraps the footer
    shown = re.findall(r"│\s+(\d+) │", out)
    assert shown == ["0", "1", str(ROWS - 2), str(ROWS - 1)]


def test_sql_writes_parquet(demo, expected, tmp_path, capsys):
    out = tmp_path / "scores.parquet"
    status = main(["sql", f"SELECT id, score FROM tfrecord_scan('{demo}') ORDER BY id", "-o", str(out)])
    assert status == 0
    table = pq.read_table(out)
    assert table.column("id").to_pylist() == list(range(ROWS))
    assert table.column("score").combine_chunks().equals(expected.column("score").combine_chunks())
    assert f"wrote {out}: 1 file, {ROWS:,} records" in capsys.readouterr().err
    # the file exists now: a second run needs --mode overwrite
    assert main(["sql", "SELECT 1", "-o", str(out)]) == 2
    assert "already exists; pass --mode overwrite" in capsys.readouterr().err
    assert main(["sql", "SELECT 1 AS x", "-o", str(out), "--mode", "overwrite"]) == 0
    assert pq.read_table(out).to_pylist() == [{"x": 1}]


def test_sql_writes_partitioned_tfrecord(demo, expected, tmp_path):
    out = tmp_path / "by_split"
    status = main(
        [
            "sql",
            f"SELECT id, split FROM tfrecord_scan('{demo}')",
            "--format",
            "tfrecord",
            "-o",
            str(out),
            "--partition-by",
            "split",
            "--compression",
            "gzip",
            "-q",
        ]
    )
    assert status == 0
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith("_") and p.name != "features.json") == [
        "split=test",
        "split=train",
        "split=validation",
    ]
    assert all(f.endswith(".tfrecord.gz") for f in tfsql.dataset(str(out)).files)
    back = tfsql.read_tfrecord(str(out)).sort_by("id")
    assert back.column("split").to_pylist() == expected.column("split").to_pylist()


def test_sql_writes_one_tfrecord_file_when_the_name_says_so(demo, tmp_path, capsys):
    out = tmp_path / "ids.tfrecord.gz"
    assert main(["sql", f"SELECT id FROM tfrecord_scan('{demo}') WHERE id < 10", "-o", str(out), "-q"]) == 0
    assert out.is_file() and out.read_bytes()[:2] == b"\x1f\x8b"
    assert sorted(tfsql.read_tfrecord(str(out)).column("id").to_pylist()) == list(range(10))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ids.tfrecord.gz"]  # no staging left
    assert main(["sql", "SELECT 1 AS id", "-o", str(out), "--max-rows-per-file", "1"]) == 2
    assert (
        "names one file (it ends in a TFRecord suffix), but --max-rows-per-file writes a directory"
        in capsys.readouterr().err
    )


def test_cli_existing_output_error_names_the_cli_option(tmp_path, capsys):
    # was: "... pass mode='append', 'overwrite', ..." (the Python keyword, not --mode)
    from tfsql.cli import main

    write_tfrecord(pa.table({"x": [1]}), tmp_path / "out")
    assert main(["sql", "SELECT 2 AS x", "-o", str(tmp_path / "out"), "--format", "tfrecord"]) == 2
    assert capsys.readouterr().err == (
        f"tfsql: error: {tmp_path / 'out'} already holds data; pass --mode append, overwrite, "
        f"overwrite_partitions or ignore, or choose another output\n"
    )


def test_sql_usage_errors_exit_2(demo, tmp_path, capsys):
    assert main(["sql", "SELECT 1", "--format", "parquet"]) == 2
    assert "--format parquet writes to a file or directory: pass --output" in capsys.readouterr().err
    assert main(["sql", "SELEC 1"]) == 2
    assert 'syntax error at or near "SELEC"' in capsys.readouterr().err
    assert main(["sql", "SELECT nope FROM (SELECT 1 AS x)"]) == 2
    assert "Referenced column" in capsys.readouterr().err
    assert main(["sql", "SELECT 1", "--format", "xml"]) == 2
    assert "invalid choice: 'xml'" in capsys.readouterr().err


def test_a_missing_path_is_a_usage_error(tmp_path, capsys):
    missing = tmp_path / "nothing-here"
    assert main(["sql", f"SELECT count(*) FROM tfrecord_scan('{missing}')"]) == 2
    assert str(missing) in capsys.readouterr().err
    for command in (["count"], ["schema"], ["head"], ["verify"]):
        assert main([*command, str(missing)]) == 2
        err = capsys.readouterr().err
        assert err.startswith("tfsql: error: ") and str(missing) in err


# --------------------------------------------------------------------------------------
# schema, head, count
# --------------------------------------------------------------------------------------


def test_schema_table(demo, capsys):
    assert main(["schema", demo]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "column  type          feature",
        "------  ------------  --------------",
        "id      int64         int64_list",
        "split   string        bytes_list",
        "score   float         float_list",
        "text    string        bytes_list",
        "emb     list<float>   float_list",
        "tags    list<string>  bytes_list",
        "label   int64         hive partition",
        "",
        "7 columns (1 from partition directories), 5 files, record type example",
    ]


def test_schema_json(demo, capsys):
    assert main(["schema", demo, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["files"] == 5 and doc["record_type"] == "example"
    assert [(c["name"], c["type"], c["partition"]) for c in doc["columns"]] == [
        ("id", "int64", False),
        ("split", "string", False),
        ("score", "float", False),
        ("text", "string", False),
        ("emb", "list<float>", False),
        ("tags", "list<string>", False),
        ("label", "int64", True),
    ]


def test_head_shows_text_bytes_and_lists_readably(tmp_path, capsys):
    png = b"\x89PNG\r\n\x1a\n" + bytes(200)
    table = pa.table(
        {"id": [7], "text": ["héllo wörld"], "image": [png], "ascii": [b"plain bytes"], "vals": [list(range(20))]}
    )
    tfsql.write_tfrecord(table, str(tmp_path / "d"))
    assert main(["head", str(tmp_path / "d"), "-n", "1", "--max-chars", "10"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "-- record 0 --",
        "id     7",
        "text   héllo wörl… (11 chars)",
        "image  b'\\x89PNG\\r\\n\\x1a\\n\\x00\\x00'… (208 bytes)",
        "ascii  plain byte… (11 chars)",
        "vals   [0, 1, 2, 3, 4, 5, 6, 7, …] (20 values)",
    ]


def test_head_n_and_columns(demo, expected, capsys):
    assert main(["head", demo, "-n", "2", "-c", "id,tags"]) == 0
    first_two = sorted(tfsql.dataset(demo).head(2).column("id").to_pylist())
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "-- record 0 --" and out[3] == "" and out[4] == "-- record 1 --" and len(out) == 7
    assert out[1] == f"id    {first_two[0]}"
    assert out[2] == f"tags  {format_value(expected.column('tags')[first_two[0]].as_py())}"
    assert main(["head", demo, "-c", "nope"]) == 2
    assert "no column 'nope'; the columns are id, split, score, text, emb, tags, label" in capsys.readouterr().err


def test_format_value():
    assert format_value(None) == "null"
    assert format_value(0.1234567891) == "0.123457"
    assert format_value("a\nb") == "a\\nb"
    assert format_value(b"\xff\x00") == "b'\\xff\\x00' (2 bytes)"
    assert format_value([[1, 2], [3]]) == "[[1, 2], [3]]"
    assert format_value(["x" * 30], max_chars=40) == "['xxxxxxxxxx… (30 chars)']"


def test_count_and_per_file(demo, capsys):
    assert main(["count", demo]) == 0
    captured = capsys.readouterr()
    assert captured.out == f"{ROWS}\n"
    assert captured.err.startswith(f"counted 5 files, {ROWS:,} records, ")
    assert main(["count", demo, "--per-file", "-q"]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert captured.err == ""
    assert len(lines) == 6 and lines[-1] == f"{ROWS:,}  total"
    per_file = {line.split()[1]: int(line.split()[0].replace(",", "")) for line in lines[:-1]}
    assert sum(per_file.values()) == ROWS
    assert all("/label=" in path for path in per_file)


# --------------------------------------------------------------------------------------
# verify
# --------------------------------------------------------------------------------------


def test_verify_ok(demo, capsys):
    assert main(["verify", demo, "--decode"]) == 0
    assert capsys.readouterr().out == f"OK: {ROWS:,} records in 5 files framed, CRC-checked and decoded\n"


def test_verify_reports_each_corrupt_record_with_index_and_offset(tmp_path, capsys):
    path = tmp_path / "bad.tfrecord"
    offsets = write_records(path, [example(i) for i in range(10)])
    data = bytearray(path.read_bytes())
    for index in (3, 7):
        data[offsets[index] + 12 + 2] ^= 0xFF  # a byte inside the payload: data CRC mismatch
    path.write_bytes(bytes(data))
    status = main(["verify", str(path)])
    out = capsys.readouterr().out.splitlines()
    assert status == 1
    assert out == [
        f"CORRUPT data CRC mismatch in {path}, record 3 at byte {offsets[3]}: the record is corrupt",
        f"CORRUPT data CRC mismatch in {path}, record 7 at byte {offsets[7]}: the record is corrupt",
        "FAILED: 2 problems in 1 of 1 files (8 good records)",
    ]


def test_verify_truncated_file_and_good_neighbour(tmp_path, capsys):
    good_offsets = write_records(tmp_path / "a.tfrecord", [example(i) for i in range(4)])
    offsets = write_records(tmp_path / "b.tfrecord", [example(i) for i in range(5)])
    data = (tmp_path / "b.tfrecord").read_bytes()
    (tmp_path / "b.tfrecord").write_bytes(data[:-7])
    assert good_offsets and main(["verify", str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"CORRUPT truncated record in {tmp_path / 'b.tfrecord'}, record 4 at byte {offsets[4]}")
    assert out[0].endswith("the rest of the file cannot be framed")
    assert out[1] == "FAILED: 1 problem in 1 of 2 files (8 good records)"


def test_verify_decode_finds_records_that_are_not_protobufs(tmp_path, capsys):
    # CRCs are right, the payload is not an Example: only --decode sees it.
    path = tmp_path / "junk.tfrecord"
    payloads = [example(i) for i in range(1010)]
    payloads[1005] = payloads[1008] = b"\xff\xff\xff\xff"  # after the 1000 records inference reads
    offsets = write_records(path, payloads)
    assert main(["verify", str(path)]) == 0
    assert capsys.readouterr().out == "OK: 1,010 records in 1 file framed and CRC-checked\n"
    assert main(["verify", str(path), "--decode"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 3
    for line, index in zip(out, (1005, 1008)):
        assert line.startswith("CORRUPT record is not a valid example protobuf in ")
        assert f"record {index} at byte {offsets[index]}" in line
    assert out[2] == "FAILED: 2 problems in 1 of 1 files (1,010 good records)"


def test_verify_decode_when_inference_meets_the_bad_record(tmp_path, capsys):
    path = tmp_path / "junk.tfrecord"
    payloads = [example(i) for i in range(6)]
    payloads[4] = b"\xff\xff\xff\xff"
    offsets = write_records(path, payloads)
    assert main(["verify", str(path), "--decode"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"CORRUPT record is not a valid example protobuf in {path}, record 4 at byte {offsets[4]}")
    assert out[1] == "(no schema could be inferred, so the records are framed and CRC-checked, not decoded)"
    assert out[2] == "FAILED: 1 problem in 1 of 1 files (6 good records)"


def test_reading_a_corrupt_file_is_a_data_error(tmp_path, capsys):
    path = tmp_path / "bad.tfrecord"
    offsets = write_records(path, [example(i) for i in range(3)])
    data = bytearray(path.read_bytes())
    data[offsets[1] + 14] ^= 0x01
    path.write_bytes(bytes(data))
    assert main(["head", str(path), "-n", "3"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"tfsql: error: data CRC mismatch in {path}, record 1 at byte {offsets[1]}")


# --------------------------------------------------------------------------------------
# convert
# --------------------------------------------------------------------------------------


def test_convert_parquet_to_tfrecord_and_back(expected, tmp_path, capsys):
    source = tmp_path / "reviews.parquet"
    pq.write_table(expected, source)
    out = tmp_path / "tf"
    assert main(["convert", str(source), str(out), "--partition-by", "label", "--compression", "gzip"]) == 0
    # the files written (one per label), not the one file read (issue 23, finding 9)
    assert f"converted 1 parquet file -> tfrecord {out}: 5 files, {ROWS:,} records" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == [f"label={i}" for i in range(5)]
    assert len(tfsql.dataset(str(out)).files) == 5
    assert all(f.endswith(".tfrecord.gz") for f in tfsql.dataset(str(out)).files)

    back = tmp_path / "back.parquet"
    assert main(["convert", str(out), str(back), "-q"]) == 0
    table = pq.read_table(back).sort_by("id").select(expected.column_names)
    assert table.equals(expected)


def test_convert_to_csv_and_json(demo, tmp_path):
    assert main(["convert", demo, str(tmp_path / "r.csv"), "-q"]) == 0
    header = (tmp_path / "r.csv").read_text().splitlines()[0]
    assert header == "id,split,score,text,emb,tags,label"
    assert main(["convert", demo, str(tmp_path / "r.jsonl"), "-q"]) == 0
    lines = (tmp_path / "r.jsonl").read_text().splitlines()
    assert len(lines) == ROWS and set(json.loads(lines[0])) == {"id", "split", "score", "text", "emb", "tags", "label"}


def test_convert_usage_errors(demo, tmp_path, capsys):
    assert main(["convert", demo, str(tmp_path / "x.parquet"), "--compression", "gzip"]) == 2
    assert "--compression applies to tfrecord output, not parquet" in capsys.readouterr().err
    assert main(["convert", str(tmp_path / "missing.parquet"), str(tmp_path / "out")]) == 2
    assert "no such file or directory" in capsys.readouterr().err
    os.makedirs(tmp_path / "full")
    tfsql.write_tfrecord(pa.table({"x": [1]}), str(tmp_path / "full"), mode="overwrite")
    assert main(["convert", demo, str(tmp_path / "full")]) == 2
    assert "already holds data" in capsys.readouterr().err


# --------------------------------------------------------------------------------------
# run: scripts, params, errors
# --------------------------------------------------------------------------------------


def test_run_substitutes_params_and_prints_query_results(demo, tmp_path, capsys):
    script = tmp_path / "s.sql"
    script.write_text(
        "-- count the rows of ${src} (a comment: not substituted, no value needed for ${other})\n"
        "CREATE TABLE t AS SELECT * FROM tfrecord_scan('${src}');\n"
        "SELECT count(*) AS n, ${extra:-42} AS extra FROM t;\n"
        "SELECT getvariable('src') = '${src}' AS same;\n"
    )
    assert main(["run", str(script), "--param", f"src={demo}"]) == 0
    captured = capsys.readouterr()
    assert re.search(rf"│\s+{ROWS} │\s+42 │", captured.out)
    assert "│ true    │" in captured.out
    assert "Count" not in captured.out  # CREATE's row count is a note on stderr
    if int(duckdb.__version__.split(".")[0]) >= 2:  # DuckDB < 2 reports no count for CREATE
        assert f"CREATE: {ROWS:,} rows\n" in captured.err
    assert f"ran 3 statements of {script}" in captured.err


def test_run_stops_at_the_first_error_with_its_line(demo, tmp_path, capsys):
    marker = tmp_path / "marker.csv"
    script = tmp_path / "s.sql"
    script.write_text(
        f"SELECT 1;\n\n-- the next statement fails\nSELECT *\nFROM no_such_table;\nCOPY (SELECT 1) TO '{marker}';\n"
    )
    assert main(["run", str(script)]) == 2  # a catalog error is a usage error
    err = capsys.readouterr().err
    assert err.startswith(f"tfsql: error: {script}, line 4: SELECT *\nCatalog Error: Table with name no_such_table")
    assert not marker.exists()


def test_run_data_error_exits_1(tmp_path, capsys):
    path = tmp_path / "bad.tfrecord"
    offsets = write_records(path, [example(i) for i in range(3)])
    data = bytearray(path.read_bytes())
    data[offsets[2] + 14] ^= 0x01
    path.write_bytes(bytes(data))
    script = tmp_path / "s.sql"
    script.write_text(f"SELECT sum(id) FROM tfrecord_scan('{path}');")
    assert main(["run", str(script)]) == 1
    err = capsys.readouterr().err
    assert f"{script}, line 1: SELECT sum(id)" in err and "record 2" in err


def test_run_checks_every_param_before_running(tmp_path, capsys):
    marker = tmp_path / "marker.csv"
    script = tmp_path / "s.sql"
    script.write_text(f"COPY (SELECT 1) TO '{marker}';\nSELECT '${{a}}';\n\nSELECT '${{b}}', '${{a}}';\n")
    assert main(["run", str(script), "-p", "c=1"]) == 2
    err = capsys.readouterr().err
    assert f"tfsql: error: {script}, line 2: ${{a}} has no value; pass --param a=VALUE --param b=VALUE" in err
    assert not marker.exists()
    assert main(["run", str(script), "-p", "noequals"]) == 2
    assert "expected NAME=VALUE" in capsys.readouterr().err


def test_run_missing_script_is_a_usage_error(tmp_path, capsys):
    assert main(["run", str(tmp_path / "nope.sql")]) == 2
    assert f"no such SQL script: {tmp_path / 'nope.sql'}" in capsys.readouterr().err


def test_split_statements_ignores_semicolons_in_strings_and_comments():
    script = (
        "-- header; not a statement\n"
        "SELECT 'a;b', \"c;d\" -- trailing; comment\n"
        "  FROM t;\n"
        "/* block;\n comment */ SELECT $$x;y$$, $tag$;$tag$;\n"
        "SELECT 'it''s;';\n"
        "SELECT 3"
    )
    statements = split_statements(script)
    assert [(s.line, s.first_line) for s in statements] == [
        (2, "SELECT 'a;b', \"c;d\""),
        (5, "SELECT $$x;y$$, $tag$;$tag$"),
        (6, "SELECT 'it''s;'"),
        (7, "SELECT 3"),
    ]
    assert statements[0].sql == "SELECT 'a;b', \"c;d\" \n  FROM t"


def test_substitute_params_reports_missing_with_their_lines():
    statement = Statement("SELECT '${a}',\n  ${b:-7},\n  '${c}'", 10)
    text, missing = substitute_params(statement, {"a": "x"})
    assert text == "SELECT 'x',\n  7,\n  '${c}'"
    assert missing == [("c", 12)]


# --------------------------------------------------------------------------------------
# the shell, help, exit codes, python -m tfsql
# --------------------------------------------------------------------------------------


def test_shell_runs_multiline_statements_and_goes_on_after_errors(capsys):
    lines = iter(
        [
            ".help",
            "SELECT 40 +",
            "  2 AS answer;",
            "SELECT * FROM missing_table;",
            ".maxrows 4",
            "SELECT range AS r FROM range(50);",
            ".tables",
            ".bogus",
            ".quit",
            "SELECT 'not reached';",
        ]
    )
    prompts = []

    def read_line(prompt):
        prompts.append(prompt)
        return next(lines)

    shell = cli.Shell(cli.SQLSession(cli.Console()), read_line=read_line)
    assert shell.loop() == 0
    captured = capsys.readouterr()
    assert prompts[:3] == ["tfsql> ", "tfsql> ", "  ...> "]
    assert ".quit / .exit  leave" in captured.out
    assert "│     42 │" in captured.out
    assert re.search(r"50 rows[\s│]+\(4 shown\)", captured.out)
    assert "not reached" not in captured.out
    assert "error: Catalog Error: Table with name missing_table does not exist" in captured.err
    assert "unknown command '.bogus'" in captured.err
    assert shell.errors == 1


def test_help_explains_commands_options_and_exit_status(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for command in ("sql", "run", "shell", "schema", "head", "count", "verify", "convert", "demo"):
        assert f"    {command} " in out
    assert "exit status:" in out and "2  a usage problem" in out
    assert main(["run", "--help"]) == 0
    out = capsys.readouterr().out
    assert "${name:-default}" in out and "getvariable('name')" in out
    assert main(["verify", "--help"]) == 0
    assert "record index and byte offset" in capsys.readouterr().out


def test_usage_errors_exit_2(capsys):
    assert main(["head"]) == 2
    assert "the following arguments are required: path" in capsys.readouterr().err
    assert main(["frobnicate"]) == 2
    assert main(["head", "x", "-n", "many"]) == 2


def test_unexpected_errors_print_one_line_unless_debug(demo, monkeypatch, capsys):
    def boom(args, console):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(cli, "cmd_count", boom)
    assert main(["count", demo]) == 1
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "tfsql: error: RuntimeError: boom",
        "tfsql: (an unexpected error: run with --debug for the traceback)",
    ]
    assert main(["--debug", "count", demo]) == 1
    assert "Traceback (most recent call last)" in capsys.readouterr().err
    assert main(["count", demo, "--debug"]) == 1
    assert "Traceback (most recent call last)" in capsys.readouterr().err


def test_demo_command(tmp_path, capsys):
    assert main(["demo", str(tmp_path / "d"), "--rows", "500"]) == 0
    out = capsys.readouterr().out
    assert f"Wrote 500 synthetic product reviews to {tmp_path / 'd' / 'reviews'}/" in out
    counts = label_counts(reviews_table(rows=500))
    for label, n in counts.items():
        assert f"│ {label:>5} │ {n:>7} │" in out
    splits = collections.Counter(reviews_table(rows=500).column("split").to_pylist())
    assert f"split=train: {splits['train']:,} records; split=test: {splits['test']:,} records" in out
    assert tfsql.dataset(str(tmp_path / "d" / "splits")).count_rows() == splits["train"] + splits["test"]
    # running it again replaces the data
    assert main(["demo", str(tmp_path / "d"), "--rows", "300", "-q"]) == 0
    assert tfsql.dataset(str(tmp_path / "d" / "reviews")).count_rows() == 300


def test_python_dash_m_tfsql(demo, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "tfsql", "--version"], capture_output=True, text=True, env=env)
    assert (done.returncode, done.stdout) == (0, f"tfsql {tfsql.__version__}\n")
    # bare `tfsql` with a pipe on stdin runs it as a script
    done = subprocess.run(
        [sys.executable, "-m", "tfsql", "-q"],
        input=f"SELECT count(*) AS n FROM tfrecord_scan('{demo}');",
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert re.search(rf"│\s+{ROWS} │", done.stdout)
    done = subprocess.run(
        [sys.executable, "-m", "tfsql", "verify", str(tmp_path / "missing")], capture_output=True, text=True, env=env
    )
    assert done.returncode == 2 and done.stderr.startswith("tfsql: error: ")
