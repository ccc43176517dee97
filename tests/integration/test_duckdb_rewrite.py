"""The SQL text layer of the DuckDB front end: finding calls, statements and COPY parts.

Uses DuckDB's tokenizer, so it runs on DuckDB 2.x and 1.4 LTS (run the suite once in an environment with ``duckdb==1.4.*``),
whose tokenizers differ (1.4 emits no comment tokens; 2.0 types ``.`` as a number).
"""

from __future__ import annotations

import duckdb
import pytest

from tfsql.duckdb.copy import CopyOptionError, parse_copy_to
from tfsql.duckdb.rewrite import find_calls, split_statements, strip_comments, tokenize

NAMES = ("tfrecord_scan", "read_tfrecord")


def calls(sql):
    return [
        (c.name, [(a.name, a.text) for a in c.args], c.has_alias, c.in_from)
        for c in find_calls(sql, tokenize(sql), NAMES)
    ]


def test_finds_calls_with_positional_and_named_arguments():
    sql = "SELECT * FROM tfrecord_scan(['a', 'b'], hive_partitioning := true, schema = {'x': 'BIGINT'}, n => 1 + 2) t"
    assert calls(sql) == [
        (
            "tfrecord_scan",
            [(None, "['a', 'b']"), ("hive_partitioning", "true"), ("schema", "{'x': 'BIGINT'}"), ("n", "1 + 2")],
            True,
            True,
        )
    ]


def test_ignores_strings_comments_and_qualified_names():
    sql = (
        "SELECT 'tfrecord_scan(1)', $$read_tfrecord('x')$$, E'tfrecord_scan(\\'y\\')' "
        "-- tfrecord_scan('c')\n /* read_tfrecord('d') */ FROM s.tfrecord_scan('e'), t WHERE t.read_tfrecord = 1"
    )
    assert calls(sql) == []


def test_case_quotes_nesting_and_aliases():
    sql = (
        "SELECT * FROM TFRECORD_SCAN(concat('a', lower('B'))) JOIN \"read_tfrecord\"('c') AS r USING (id) "
        "WHERE id IN (SELECT id FROM tfrecord_scan('d'))"
    )
    assert calls(sql) == [
        ("tfrecord_scan", [(None, "concat('a', lower('B'))")], False, True),
        ("read_tfrecord", [(None, "'c'")], True, True),
        ("tfrecord_scan", [(None, "'d'")], False, True),
    ]
    assert calls("DESCRIBE tfrecord_scan('x')") == [("tfrecord_scan", [(None, "'x'")], False, False)]
    assert calls("SELECT * FROM tfrecord_scan('x') WHERE 1") == [("tfrecord_scan", [(None, "'x'")], False, True)]


def test_unbalanced_call_is_an_error():
    with pytest.raises(ValueError, match=r"unbalanced brackets: '\(' at offset 27 is never closed"):
        calls("SELECT * FROM tfrecord_scan('x'")


def test_split_statements_with_duckdbs_parser():
    sql = "SELECT ';'; -- a; comment\nSELECT $$;$$ ;; SELECT 3"
    assert [" ".join(t.text for t in tokenize(s)) for s in split_statements(sql)] == [
        "SELECT ';'",
        "SELECT $$;$$",
        "SELECT 3",
    ]
    with pytest.raises(duckdb.ParserException, match=r"syntax error at or near \";\""):
        split_statements("SELECT count(*) FROM tfrecord_scan('x'; DROP TABLE victim; SELECT 'data')")


def test_parse_copy_forms():
    sql = "COPY (SELECT 1 AS a) TO 'out.tfrecord' WITH (FORMAT tfrecord, PARTITION_BY (a, \"B\"), OVERWRITE, ROWS_PER_FILE 10)"
    statement = parse_copy_to(sql, tokenize(sql))
    assert statement.query == "SELECT 1 AS a" and statement.path_sql == "'out.tfrecord'"
    assert statement.format == "tfrecord"
    assert statement.options["PARTITION_BY"].names == ("a", "B")
    assert statement.options["OVERWRITE"].flag
    assert statement.options["ROWS_PER_FILE"].value == 10
    sql = "COPY main.tbl (x, y) TO 'p' (FORMAT 'tfrecord', COMPRESSION 'gzip')"
    statement = parse_copy_to(sql, tokenize(sql))
    assert statement.query == 'SELECT "x", "y" FROM "main"."tbl"'  # names quoted again, never pasted
    assert statement.format == "tfrecord" and statement.options["COMPRESSION"].names == ("gzip",)
    for other in ("COPY tbl FROM 'x.tfrecord'", "COPY FROM DATABASE a TO b", "SELECT 1", "COPY tbl TO ?"):
        assert parse_copy_to(other, tokenize(other)) is None
    with pytest.raises(CopyOptionError, match="COPY option FORMAT is given twice"):
        sql = "COPY t TO 'x' (FORMAT tfrecord, FORMAT csv)"
        parse_copy_to(sql, tokenize(sql))


def test_one_splitter_for_the_connection_and_the_cli():
    from tfsql.cli.sqlscript import split_statements as split_script

    script = "SELECT E'it\\'s;'; /* a /* nested; */ still; */ SELECT 2 -- two;\n; SELECT '${x}'"
    assert split_statements(script) == [
        "SELECT E'it\\'s;'",
        "/* a /* nested; */ still; */ SELECT 2 -- two;",
        "SELECT '${x}'",
    ]
    assert [(s.line, s.sql) for s in split_script(script)] == [
        (1, "SELECT E'it\\'s;'"),
        (1, "SELECT 2"),
        (2, "SELECT '${x}'"),
    ]


# --------------------------------------------------------------------------------------
# non-ASCII SQL text
# --------------------------------------------------------------------------------------


def test_tokenize_offsets_are_string_indices_after_non_ascii_text():
    sql = "SELECT 'São', f(1)"
    assert [t.text for t in tokenize(sql)] == ["SELECT", "'São'", ",", "f", "(", "1", ")"]


def test_a_string_token_stops_at_its_closing_quote_before_a_comment():
    # DuckDB 1.4 does not type comments: its string token ran on over the comment after it.
    sql = "SELECT 'it''s' -- note\n, E'a\\'b' /* c */ , $q$x$q$ FROM t"
    assert [t.text for t in tokenize(sql)] == ["SELECT", "'it''s'", ",", "E'a\\'b'", ",", "$q$x$q$", "FROM", "t"]
    assert strip_comments("SELECT '--x' -- note\n/* a\n /* b */ */ FROM t") == "SELECT '--x' \n\n FROM t"
