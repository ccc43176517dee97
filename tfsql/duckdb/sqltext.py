"""SQL text read with DuckDB's tokenizer, and SQL quoting: tfsql's one SQL splitter.

tfsql never rewrites a statement: `tfsql.connect()` is DuckDB's connection with the
extension loaded. This module serves the ``tfsql`` command (`tfsql.cli.sqlscript`
splits a script into statements for its line numbers and its shell, substitutes
``${param}`` by quoted values) and the few places that put a value into SQL text
(`quote_string`, `quote_identifier`: DuckDB's quoting rules, never a value unquoted).

``duckdb.tokenize`` gives each token's start offset and a coarse type. Facts it
relies on, measured on DuckDB 1.4 and 2.0:

- string literals (``'...'``, ``E'...'``, ``$$...$$``) are one ``string_const`` token,
  so text inside strings is never mistaken for SQL;
- comments are ``comment`` tokens on 2.0 and *not tokens at all* on 1.4 (they sit in
  the gap between two tokens), so both are skipped here and a comment never yields a
  token;
- operator spellings vary (2.0 types ``.`` as ``numeric_const``, 1.4 types ``:`` and
  ``::`` as ``keyword``), so punctuation is recognised by its text, not its type;
- offsets count bytes of the UTF-8 text, not characters, so they are mapped back to
  string indices before any slicing (``'São Paulo'`` before a token shifts it).

Examples
--------
>>> [t.text for t in tokenize("SELECT 'a;b' AS x -- c")]
['SELECT', "'a;b'", 'AS', 'x']
>>> quote_string("it's"), quote_identifier('a"b')
("'it''s'", '"a""b"')
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "Token",
    "tokenize",
    "statement_spans",
    "strip_comments",
    "string_literal",
    "quote_string",
    "quote_identifier",
]

_WORD = re.compile(r'"(?:[^"]|"")*"|[^\s()\[\]{},;:=<>!+\-*/%|&^~\'".?$]+')
_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {")", "]", "}"}


@dataclass(frozen=True)
class Token:
    """One SQL token: where it starts and ends, DuckDB's type name, and its text.

    ``end`` is the start of the next token (so the span may hold trailing whitespace
    or, on DuckDB 1.4, a comment); ``text`` is the token alone.
    """

    start: int
    end: int
    kind: str  # identifier | keyword | string_const | numeric_const | operator
    text: str

    def is_op(self, *ops: str) -> bool:
        """True when this token is one of the punctuation / operator spellings ``ops``."""
        return self.kind not in ("string_const", "identifier") and self.text in ops

    def is_word(self, *words: str) -> bool:
        """True when this is an unquoted identifier or keyword equal to one of ``words``
        (case-insensitive; ``words`` lower case)."""
        return self.kind in ("identifier", "keyword") and self.text.lower() in words

    @property
    def is_name(self) -> bool:
        """An identifier or keyword (quoted or not)."""
        return self.kind in ("identifier", "keyword")


def _token_text(sql: str, start: int, end: int, kind: str) -> str:
    span = sql[start:end]
    if kind in ("identifier", "keyword"):
        match = _WORD.match(sql, start)
        if match and match.end() <= end:
            return match.group(0)
        return span.strip()
    if kind == "string_const":
        return _string_literal(span)
    # Operators and numbers: cut trailing space and (1.4) a comment in the gap.
    span = span.split("--", 1)[0].split("/*", 1)[0]
    return span.strip()


def _string_literal(span: str) -> str:
    r"""The string literal that starts ``span`` (``'...'`` with doubled quotes, ``E'...'``
    with backslash escapes, ``$tag$...$tag$``): DuckDB 1.4 does not type comments, so its
    string token runs on to the next token, over a comment in between.

    >>> _string_literal("'it''s' -- note\n"), _string_literal("E'a\\'b' /* c */ "), _string_literal("$q$x$q$ ")
    ("'it''s'", "E'a\\'b'", '$q$x$q$')
    """
    i = 1 if span[:2] in ("E'", "e'") else 0
    dollar = re.match(r"\$[A-Za-z_0-9]*\$", span)
    if dollar:
        close = span.find(dollar.group(0), dollar.end())
        return span[: close + dollar.end()] if close >= 0 else span.rstrip()
    if span[i : i + 1] != "'":
        return span.rstrip()
    j = i + 1
    while j < len(span):
        if i and span[j] == "\\":
            j += 2
        elif span[j] == "'" and span[j + 1 : j + 2] == "'":
            j += 2
        elif span[j] == "'":
            return span[: j + 1]
        else:
            j += 1
    return span.rstrip()


def tokenize(sql: str) -> list[Token]:
    """The tokens of ``sql`` (comments dropped), by ``duckdb.tokenize``.

    Examples
    --------
    >>> [t.text for t in tokenize("SELECT a /* tfrecord_scan( */ FROM t")]
    ['SELECT', 'a', 'FROM', 't']
    """
    import duckdb

    to_index = _char_index(sql)
    every = [(to_index(pos), str(kind).rsplit(".", 1)[-1]) for pos, kind in duckdb.tokenize(sql)]
    tokens = []
    end = len(sql)
    for i in range(len(every) - 1, -1, -1):  # backwards: ``end`` is the next token that is not a comment
        pos, kind = every[i]
        if kind == "comment":
            continue
        # The text stops at the next token, a comment included (DuckDB 2.x types them).
        text = _token_text(sql, pos, every[i + 1][0] if i + 1 < len(every) else len(sql), kind)
        if text:
            tokens.append(Token(pos, end, kind, text))
        end = pos
    tokens.reverse()
    return tokens


def _char_index(sql: str):
    """A function mapping a UTF-8 byte offset of ``sql`` (what ``duckdb.tokenize``
    returns) to its string index."""
    if sql.isascii():
        return lambda offset: offset
    starts = {}
    offset = 0
    for index, char in enumerate(sql):
        starts[offset] = index
        offset += len(char.encode("utf-8", errors="surrogatepass"))
    starts[offset] = len(sql)
    return starts.__getitem__


def statement_spans(sql: str) -> tuple[list[tuple[int, int, bool]], int]:
    """Where the statements of a script are, found at its ``;`` tokens (so a ``;`` in a
    string, a quoted name or a comment never ends one).

    Returns ``(spans, rest)``: ``(start, end, nested)`` for each statement a ``;`` closes
    (``end`` is the ``;``'s offset; ``nested``: that ``;`` stands inside brackets, which
    no valid statement has), and the offset where the text no ``;`` closes starts (an
    unfinished statement, blanks or comments).

    Examples
    --------
    >>> script = "SELECT ';' /* ; */; SELECT (1;"
    >>> spans, rest = statement_spans(script)
    >>> [(script[start:end], nested) for start, end, nested in spans], script[rest:]
    ([("SELECT ';' /* ; */", False), (' SELECT (1', True)], '')
    """
    spans: list[tuple[int, int, bool]] = []
    start = 0
    depth = 0
    for token in tokenize(sql):
        if token.is_op(*_OPENERS):
            depth += 1
        elif token.is_op(*_CLOSERS):
            depth = max(0, depth - 1)
        elif token.is_op(";"):
            spans.append((start, token.start, depth > 0))
            start = token.start + 1
    return spans, start


def strip_comments(sql: str) -> str:
    """``sql`` without its comments (``--`` to the end of the line, ``/* */``, nested or
    not); a block comment leaves its line breaks (or a blank), so line numbers still count.

    Examples
    --------
    >>> strip_comments("SELECT '--x' -- note\\n/* a\\n /* b */ */ FROM t")
    "SELECT '--x' \\n\\n FROM t"
    """
    out: list[str] = []
    position = 0
    for token in tokenize(sql):
        out.append(_without_comments(sql[position : token.start]))
        position = token.start + len(token.text)
        out.append(sql[token.start : position])
    out.append(_without_comments(sql[position:]))
    return "".join(out)


def _without_comments(gap: str) -> str:
    """The text between two tokens (blanks and comments only) without the comments."""
    out: list[str] = []
    i = 0
    while i < len(gap):
        if gap.startswith("--", i):
            end = gap.find("\n", i)
            i = len(gap) if end < 0 else end
        elif gap.startswith("/*", i):
            depth, j = 1, i + 2
            while j < len(gap) and depth:
                if gap.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif gap.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append("\n" * gap.count("\n", i, j) or " ")
            i = j
        else:
            out.append(gap[i])
            i += 1
    return "".join(out)


_DOLLAR = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$")


def string_literal(text: str) -> str:
    """The value of one ``string_const`` token: ``'it''s'`` -> ``it's``; ``$$x$$`` -> ``x``.

    Raises ``ValueError`` for escape strings (``E'...'``) and anything else that is not a
    plain string.

    Examples
    --------
    >>> string_literal("'it''s'"), string_literal("$q$a'b$q$")
    ("it's", "a'b")
    """
    if len(text) >= 2 and text[0] == "'" and text[-1] == "'":
        body = text[1:-1]
        if re.search(r"(?<!')'(?!')", body.replace("''", "")):
            raise ValueError(f"malformed string literal {text}")
        return body.replace("''", "'")
    match = _DOLLAR.match(text)
    if match and len(text) >= 2 * len(match.group(0)) and text.endswith(match.group(0)):
        return text[len(match.group(0)) : len(text) - len(match.group(0))]
    raise ValueError(f"{text} is not a plain string literal; write it as '...' (quotes doubled) or $$...$$")


def quote_string(text: str) -> str:
    """``text`` as a SQL string literal (quotes doubled): the inverse of `string_literal`.

    Examples
    --------
    >>> string_literal(quote_string("a''b")) == "a''b"
    True
    """
    return "'" + text.replace("'", "''") + "'"


def quote_identifier(name: str) -> str:
    """``name`` as a quoted SQL identifier (double quotes doubled).

    Examples
    --------
    >>> quote_identifier('a"b')
    '"a""b"'
    """
    return '"' + name.replace('"', '""') + '"'
