"""SQL scripts as text: splitting into statements, ``${param}`` substitution, string literals.

Statements, comments and quoted text are found by the DuckDB front end's one SQL
reader (`tfsql.duckdb.sqltext`, DuckDB's own tokenizer), imported when a script is
read so that the ``tfsql`` command starts without DuckDB.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, Sequence

from tfsql.cli.errors import UsageError


_DOLLAR_QUOTE = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$")
_PARAM = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True)
class Statement:
    """One statement of a SQL script.

    Attributes
    ----------
    sql : str
        Its text without comments, surrounding blanks and the closing ``;`` (line
        breaks are kept, so line numbers inside it still count).
    line : int
        1-based line of the script where it starts.
    """

    sql: str
    line: int

    @property
    def first_line(self) -> str:
        """The statement's first line (for messages)."""
        return self.sql.splitlines()[0].strip()


def split_statements(script: str) -> list[Statement]:
    """Split a SQL script at the ``;`` that end statements.

    Semicolons inside '' strings, "" identifiers, $$ dollar-quoted strings and
    comments (``--`` and ``/* */``) do not count; comments are dropped. A last
    statement without ``;`` counts too.

    Examples
    --------
    >>> [(s.line, s.sql) for s in split_statements("-- setup\\nSELECT ';';\\n\\nSELECT 2 /* ; */")]
    [(2, "SELECT ';'"), (4, 'SELECT 2')]
    """
    from tfsql.duckdb.sqltext import strip_comments

    statements, rest = split_complete(script)
    tail = strip_comments(script[rest:])
    if tail.strip():
        statements.append(_statement(tail, 1 + script.count("\n", 0, rest)))
    return statements


def split_complete(script: str) -> tuple[list[Statement], int]:
    """The statements closed by a ``;`` and the index where the unfinished rest starts
    (the shell keeps reading lines until a statement is closed)."""
    from tfsql.duckdb.sqltext import statement_spans, strip_comments

    spans, rest = statement_spans(script)
    statements: list[Statement] = []
    for start, end, _ in spans:
        text = strip_comments(script[start:end])
        if text.strip():
            statements.append(_statement(text, 1 + script.count("\n", 0, start)))
    return statements, rest


def _statement(text: str, first_line: int) -> Statement:
    leading = text[: len(text) - len(text.lstrip())]
    return Statement(text.strip(), first_line + leading.count("\n"))


_BARE_VALUE = re.compile(r"-?[A-Za-z0-9_.]+|\"(?:[^\"]|\"\")+\"")


def substitute_params(
    statement: Statement, params: Mapping[str, str], *, used: set[str] | None = None
) -> tuple[str, list[tuple[str, int]]]:
    """Replace ``${name}`` (or ``${name:-default}``) in a statement by its value, so that
    no value can change the statement's structure.

    Inside a string literal (``'${src}'``) the value's quotes are doubled, inside a
    quoted identifier (``"${col}"``) its double quotes; inside a dollar-quoted string it
    must not hold the closing tag. Elsewhere (``LIMIT ${n}``, ``PARTITION BY ${key}``)
    the value must be a number or a name (letters, digits, ``_``, ``.``, a leading
    ``-``, or a ``"quoted name"``): anything else is a usage error that suggests
    ``'${name}'`` or ``getvariable('name')``.

    Returns
    -------
    (str, list of (name, line))
        The text, and the placeholders that have neither a value nor a default.

    Raises
    ------
    UsageError
        A value that does not fit where its placeholder stands.

    Examples
    --------
    >>> stmt = Statement("SELECT * FROM tfrecord_scan('${src}') LIMIT ${n:-10}", 1)
    >>> substitute_params(stmt, {"src": "it's/"})
    ("SELECT * FROM tfrecord_scan('it''s/') LIMIT 10", [])
    """
    missing: list[tuple[str, int]] = []
    text = statement.sql

    def substitute(segment: str, offset: int, quote: str) -> str:
        def replace(match: re.Match) -> str:
            name, default = match.group(1), match.group(2)
            line = statement.line + text.count("\n", 0, offset + match.start())
            if name in params:
                if used is not None:
                    used.add(name)
                value = params[name]
            elif default is not None:
                value = default
            else:
                missing.append((name, line))
                return match.group(0)
            return _quoted_value(name, value, quote, line)

        return _PARAM.sub(replace, segment)

    from tfsql.duckdb.sqltext import tokenize

    out: list[str] = []
    bare_start = 0
    for token in tokenize(text):
        quote = _quote_of(token.text) if token.kind in ("string_const", "identifier") else ""
        if quote:
            end = token.start + len(token.text)
            out.append(substitute(text[bare_start : token.start], bare_start, ""))
            out.append(substitute(text[token.start : end], token.start, quote))
            bare_start = end
    out.append(substitute(text[bare_start:], bare_start, ""))
    return "".join(out), missing


def _quote_of(token: str) -> str:
    """The quote around a quoted token: ``'``, ``"`` or a dollar tag (``$$``, ``$q$``); ``''`` for
    an unquoted name."""
    if token[:1] in ("'", '"'):
        return token[0]
    if token[:2].lower() == "e'":
        return "E'"
    match = _DOLLAR_QUOTE.match(token)
    return match.group(0) if match else ""


def _quoted_value(name: str, value: str, quote: str, line: int) -> str:
    """``value`` made safe for where its placeholder stands (``quote``: the enclosing
    quote, ``''`` for none)."""
    if quote == "E'":  # an escape string: backslashes escape, so they are doubled too
        return value.replace("\\", "\\\\").replace("'", "''")
    if quote in ("'", '"'):
        return value.replace(quote, quote * 2)
    if quote:  # a dollar-quoted string: its tag cannot be escaped
        if quote in value:
            raise UsageError(
                f"line {line}: the value of --param {name} holds {quote}, which would end the "
                f"dollar-quoted string around ${{{name}}}; use '${{{name}}}' instead"
            )
        return value
    if not _BARE_VALUE.fullmatch(value):
        raise UsageError(
            f"line {line}: ${{{name}}} stands outside quotes, so its value must be a number or a name; "
            f"got {value!r}. Write '${{{name}}}' for a string, or read the value with getvariable('{name}')"
        )
    return value


def used_variables(script: str) -> set[str]:
    """The names read with ``getvariable('name')`` in a script.

    Examples
    --------
    >>> sorted(used_variables("SELECT * FROM tfrecord_scan(GetVariable ( 'src' )) LIMIT getvariable('n')"))
    ['n', 'src']
    """
    return set(re.findall(r"getvariable\s*\(\s*'([A-Za-z_][A-Za-z0-9_]*)'\s*\)", script, re.IGNORECASE))


def parse_params(items: Sequence[str]) -> dict[str, str]:
    """``["src=data/", "n=5"]`` -> ``{"src": "data/", "n": "5"}``.

    Examples
    --------
    >>> parse_params(["src=data/", "where=a=b"])
    {'src': 'data/', 'where': 'a=b'}
    """
    params: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise UsageError(f"--param {item!r}: expected NAME=VALUE with NAME made of letters, digits and _")
        params[name] = value
    return params
