"""tfsql's one SQL splitter (`tfsql.duckdb.sqltext`, used by the ``tfsql`` command's scripts and shell).

Uses DuckDB's tokenizer, so it runs on DuckDB 2.x and 1.4 LTS (run the suite once in an environment with ``duckdb==1.4.*``),
whose tokenizers differ (1.4 emits no comment tokens; 2.0 types ``.`` as a number).
"""

from __future__ import annotations


from tfsql.cli.sqlscript import split_statements as split_script
from tfsql.duckdb.sqltext import statement_spans, strip_comments, tokenize


def test_split_statements_at_semicolon_tokens():
    sql = "SELECT ';'; -- a; comment\nSELECT $$;$$ ;; SELECT 3"
    assert [s.sql for s in split_script(sql)] == ["SELECT ';'", "SELECT $$;$$", "SELECT 3"]
    spans, rest = statement_spans("SELECT count(*) FROM tfrecord_scan('x'; DROP TABLE victim; SELECT 'data')")
    assert [nested for _, _, nested in spans] == [True, True] and rest > 0  # inside brackets: DuckDB refuses it


def test_comments_and_escape_strings_do_not_split():
    script = "SELECT E'it\\'s;'; /* a /* nested; */ still; */ SELECT 2 -- two;\n; SELECT '${x}'"
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
