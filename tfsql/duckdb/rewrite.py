"""SQL text, read with DuckDB's tokenizer: statement boundaries, comments, ``tfrecord_scan(...)`` calls.

DuckDB offers no Python API to add a table function, so `tfsql.duckdb` rewrites the
SQL text instead: every call of a tfsql table function is replaced by the name of a
registered `tfsql.Dataset`. This module does the text part only; it never evaluates
anything. It is also tfsql's one SQL splitter: `statement_spans` finds the statements
of a script for the connection (`split_statements`) and for the ``tfsql`` command's
scripts and shell (`tfsql.cli.sqlscript`).

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
  string indices before any slicing (``'São Paulo'`` before a call shifts it).

Examples
--------
>>> sql = "SELECT 'tfrecord_scan(' FROM tfrecord_scan('a/*', hive_partitioning := true)"
>>> [(call.name, [a.name for a in call.args]) for call in find_calls(sql, tokenize(sql), ["tfrecord_scan"])]
[('tfrecord_scan', [None, 'hive_partitioning'])]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "Token",
    "Argument",
    "Call",
    "tokenize",
    "split_statements",
    "statement_spans",
    "strip_comments",
    "find_calls",
    "enclosing_closes",
    "matching_close",
    "substitute",
    "unquote_identifier",
]

_WORD = re.compile(r'"(?:[^"]|"")*"|[^\s()\[\]{},;:=<>!+\-*/%|&^~\'".?$]+')
_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {")", "]", "}"}
# A keyword right after a table function call that is not an alias of it.
_NOT_ALIAS = {
    "where",
    "group",
    "order",
    "limit",
    "offset",
    "join",
    "left",
    "right",
    "full",
    "inner",
    "outer",
    "cross",
    "natural",
    "positional",
    "asof",
    "anti",
    "semi",
    "on",
    "using",
    "union",
    "except",
    "intersect",
    "having",
    "window",
    "qualify",
    "using",
    "tablesample",
    "returning",
    "to",
    "select",
    "from",
    "with",
    "lateral",
    "pivot",
    "unpivot",
    "fetch",
    "for",
}


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


@dataclass(frozen=True)
class Argument:
    """One argument of a call: ``name`` for ``name := value`` / ``name = value`` /
    ``name => value`` (lower case), None for a positional one; ``text`` is the value's
    SQL (comments included, which DuckDB ignores when it evaluates it)."""

    name: str | None
    text: str
    first_token: int  # index of the value's first token
    stop_token: int = -1  # index just past the value's last token


@dataclass(frozen=True)
class Call:
    """A call ``name(args...)`` found in the token stream."""

    name: str  # the function name as matched, lower case
    start: int  # offset of the name
    end: int  # offset just past the closing parenthesis
    args: tuple[Argument, ...]
    has_alias: bool  # an alias (``AS x`` or a bare name) follows the call
    in_from: bool  # preceded by FROM / JOIN / a comma / LATERAL: a table position


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


def unquote_identifier(text: str) -> str:
    """``"My Col"`` -> ``My Col``; unquoted names are returned as written."""
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        return text[1:-1].replace('""', '"')
    return text


def split_statements(sql: str) -> list[str]:
    """The statements of a script, split by DuckDB's own parser, each without its closing ``;``.

    SQL that does not parse raises DuckDB's ``ParserException`` (quoting the text as
    written), so nothing is rewritten or run from a script DuckDB would reject.

    Examples
    --------
    >>> split_statements("SELECT ';'; SELECT 2 -- two;\\n;")
    ["SELECT ';'", 'SELECT 2 -- two;']
    """
    import duckdb

    # DuckDB's parser checks the script; its statements' text is not used (DuckDB 1.4
    # expands a PIVOT into two statements without text), the split is at ``;`` tokens.
    # Forms only the rewrite makes valid (DESCRIBE tfrecord_scan(...)) do not parse: then
    # a ``;`` inside brackets is DuckDB's parse error.
    parse_error: Exception | None = None
    try:
        duckdb.extract_statements(sql)
    except duckdb.Error as err:
        parse_error = err
    spans, rest = statement_spans(sql)
    if parse_error is not None and any(nested for _, _, nested in spans):
        raise parse_error
    texts = [sql[start:end] for start, end, _ in spans] + [sql[rest:]]
    statements = []
    for text in texts:
        text = text.strip()
        tokens = tokenize(text)
        while tokens and tokens[-1].is_op(";"):
            text = text[: tokens.pop().start].rstrip()
        if tokens:
            statements.append(text)
    return statements


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


def matching_close(tokens: Sequence[Token], open_index: int) -> int:
    """The index of the bracket closing ``tokens[open_index]``.

    Raises
    ------
    ValueError
        When the bracket is never closed.
    """
    depth = 0
    for i in range(open_index, len(tokens)):
        if tokens[i].is_op(*_OPENERS):
            depth += 1
        elif tokens[i].is_op(*_CLOSERS):
            depth -= 1
            if depth == 0:
                return i
    raise ValueError(
        f"unbalanced brackets: {tokens[open_index].text!r} at offset {tokens[open_index].start} is never closed"
    )


def enclosing_closes(tokens: Sequence[Token]) -> list[int | None]:
    """For each token, the text offset of the bracket that closes the group it stands in
    (None at the top level, or when that group is never closed).

    >>> sql = "a (b [c] d) e"
    >>> enclosing_closes(tokenize(sql)) == [None, None, 10, 10, 7, 7, 10, 10, None]
    True
    """
    closes: list[int | None] = []
    groups: list[int | None] = []  # the closing offset of each open group, innermost last
    for i, token in enumerate(tokens):
        closes.append(groups[-1] if groups else None)
        if token.is_op(*_OPENERS):
            try:
                groups.append(tokens[matching_close(tokens, i)].start)
            except ValueError:
                groups.append(None)
        elif token.is_op(*_CLOSERS) and groups:
            groups.pop()
    return closes


def _split_arguments(sql: str, tokens: Sequence[Token], open_index: int, close_index: int) -> tuple[Argument, ...]:
    args: list[Argument] = []
    first = open_index + 1
    depth = 0
    for i in range(open_index + 1, close_index + 1):
        token = tokens[i]
        if i < close_index and token.is_op(*_OPENERS):
            depth += 1
        elif i < close_index and token.is_op(*_CLOSERS):
            depth -= 1
        elif i == close_index or (depth == 0 and token.is_op(",")):
            if i == first:
                if i == close_index and not args:
                    break  # f()
                raise ValueError(f"empty argument at offset {token.start}")
            name = None
            value_first = first
            if i - first >= 3 and tokens[first].is_name and tokens[first + 1].is_op(":=", "=", "=>"):
                name = unquote_identifier(tokens[first].text).lower()
                value_first = first + 2
            text = sql[tokens[value_first].start : token.start].rstrip()
            args.append(Argument(name, text, value_first, i))
            first = i + 1
    return tuple(args)


def find_calls(sql: str, tokens: Sequence[Token], names: Iterable[str]) -> list[Call]:
    """Every call of a function in ``names`` (lower case), in text order.

    A name preceded by ``.`` (``schema.fn(...)``, ``t.col``) is not a call of ours.
    Nested calls (``tfrecord_scan`` inside another's arguments) are not returned.
    """
    wanted = set(names)
    calls: list[Call] = []
    i = 0
    while i < len(tokens) - 1:
        token = tokens[i]
        if (
            token.is_name
            and unquote_identifier(token.text).lower() in wanted
            and tokens[i + 1].is_op("(")
            and not (i > 0 and tokens[i - 1].is_op("."))
        ):
            close = matching_close(tokens, i + 1)
            args = _split_arguments(sql, tokens, i + 1, close)
            after = tokens[close + 1] if close + 1 < len(tokens) else None
            has_alias = after is not None and (
                after.is_word("as") or (after.kind == "identifier" and after.text.lower() not in _NOT_ALIAS)
            )
            before = tokens[i - 1] if i > 0 else None
            in_from = before is not None and (before.is_word("from", "join", "lateral") or before.is_op(","))
            calls.append(
                Call(
                    unquote_identifier(token.text).lower(),
                    token.start,
                    tokens[close].start + 1,
                    args,
                    has_alias,
                    in_from,
                )
            )
            i = close + 1
        else:
            i += 1
    return calls


def substitute(sql: str, replacements: Iterable[tuple[int, int, str]]) -> str:
    """``sql`` with each ``(start, end, text)`` span replaced (spans must not overlap)."""
    out = []
    position = 0
    for start, end, text in sorted(replacements):
        out.append(sql[position:start])
        out.append(text)
        position = end
    out.append(sql[position:])
    return "".join(out)
