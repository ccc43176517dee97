"""SQL literals read from the token stream: the values of ``tfrecord_scan`` arguments and
COPY options, never evaluated as SQL.

`tfsql.duckdb` rewrites SQL text (see `tfsql.duckdb.rewrite`); the values a call or a
COPY statement passes to tfsql are read here, token by token, so that no part of them
is ever run as SQL or spliced into another statement. Accepted forms:

- strings: ``'it''s'``, ``$$text$$``, ``$tag$text$tag$``;
- numbers: ``42``, ``-1``, ``1_000``, ``2.5``, ``1e3``;
- ``true`` / ``false``;
- lists ``[v, ...]`` and structs ``{'key': v, key: v, ...}`` of the above;
- a prepared-statement parameter ``?`` (its value is passed separately);
- ``getvariable('name')``: a DuckDB variable set with ``SET VARIABLE`` (read through a
  bound parameter, not by SQL text).

Anything else (a column, an expression, a function call, a ``;``) raises
`LiteralError` naming the offset and the accepted forms.

Examples
--------
>>> from tfsql.duckdb.rewrite import tokenize
>>> tokens = tokenize("[ 'a''b', $$c$$ ] {'id': 'BIGINT', emb: 'FLOAT[]'} -1_000 2.5 true")
>>> reader = LiteralReader(tokens)
>>> reader.value(0, 5), reader.value(5, 14)
(["a'b", 'c'], {'id': 'BIGINT', 'emb': 'FLOAT[]'})
>>> reader.value(14, 16), reader.value(16, 17), reader.value(17, 18)
(-1000, 2.5, True)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from tfsql.duckdb.rewrite import Token, unquote_identifier

__all__ = ["ACCEPTED", "LiteralError", "LiteralReader", "quote_identifier", "quote_string", "string_literal"]

ACCEPTED = (
    "a string 'text', a number, true or false, NULL, a list ['a', 'b'], a struct "
    "{'name': 'TYPE'}, a ? parameter or getvariable('name')"
)
"""The literal forms, for error messages."""

_NUMBER = re.compile(r"(?:\d[\d_]*)?(?:\.\d[\d_]*)?(?:[eE][+-]?\d+)?")
_DOLLAR = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)?\$")


class LiteralError(ValueError):
    """A value that is not a literal (or is malformed)."""


def string_literal(text: str) -> str:
    """The value of one ``string_const`` token: ``'it''s'`` -> ``it's``; ``$$x$$`` -> ``x``.

    Raises
    ------
    LiteralError
        For escape strings (``E'...'``) and anything else that is not a plain string.

    Examples
    --------
    >>> string_literal("'it''s'"), string_literal("$q$a'b$q$")
    ("it's", "a'b")
    """
    if len(text) >= 2 and text[0] == "'" and text[-1] == "'":
        body = text[1:-1]
        if re.search(r"(?<!')'(?!')", body.replace("''", "")):
            raise LiteralError(f"malformed string literal {text}")
        return body.replace("''", "'")
    match = _DOLLAR.match(text)
    if match and len(text) >= 2 * len(match.group(0)) and text.endswith(match.group(0)):
        return text[len(match.group(0)) : len(text) - len(match.group(0))]
    raise LiteralError(f"{text} is not a plain string literal; write it as '...' (quotes doubled) or $$...$$")


def quote_string(text: str) -> str:
    """``text`` as a SQL string literal (quotes doubled): the inverse of `string_literal`.

    Examples
    --------
    >>> quote_string("it's")
    "'it''s'"
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


class LiteralReader:
    """Reads literal values from a token list.

    Parameters
    ----------
    tokens : sequence of Token
        The statement's tokens (`tfsql.duckdb.rewrite.tokenize`).
    parameters : sequence, optional
        Values of the ``?`` parameters met, in order of appearance.
    variable : callable, optional
        ``name -> value`` of a DuckDB variable, for ``getvariable('name')``.
    """

    def __init__(
        self, tokens: Sequence[Token], parameters: Sequence[Any] = (), variable: Callable[[str], Any] | None = None
    ) -> None:
        self._tokens = tokens
        self._parameters = list(parameters)
        self._next_parameter = 0
        self._variable = variable

    def value(self, first: int, stop: int) -> Any:
        """The value of ``tokens[first:stop]``, which must be exactly one literal.

        Raises
        ------
        LiteralError
        """
        if first >= stop:
            raise LiteralError("a value is missing")
        value, end = self._read(first, stop)
        if end != stop:
            token = self._tokens[end]
            raise LiteralError(f"unexpected {token.text!r} at offset {token.start}: a value must be {ACCEPTED}")
        return value

    def _read(self, i: int, stop: int) -> tuple[Any, int]:
        tokens = self._tokens
        token = tokens[i]
        if token.kind == "string_const":
            return string_literal(token.text), i + 1
        if token.is_op("-", "+") and i + 1 < stop and tokens[i + 1].kind == "numeric_const":
            number, end = self._read(i + 1, stop)
            return (-number if token.text == "-" else number), end
        if token.kind == "numeric_const" and _NUMBER.fullmatch(token.text) and token.text not in ("", "."):
            text = token.text.replace("_", "")
            is_float = any(c in text for c in ".eE")
            return (float(text) if is_float else int(text)), i + 1
        if token.is_word("true", "false"):
            return token.text.lower() == "true", i + 1
        if token.is_word("null"):
            return None, i + 1
        if token.is_op("?"):
            if self._next_parameter >= len(self._parameters):
                raise LiteralError(f"the ? at offset {token.start} has no value: pass one more parameter")
            value = self._parameters[self._next_parameter]
            self._next_parameter += 1
            return value, i + 1
        if token.is_op("["):
            return self._sequence(i, stop, "]", self._list_item)
        if token.is_op("{"):
            items, end = self._sequence(i, stop, "}", self._struct_item)
            return dict(items), end
        if (
            token.is_word("getvariable")
            and i + 3 < stop
            and tokens[i + 1].is_op("(")
            and tokens[i + 2].kind == "string_const"
            and tokens[i + 3].is_op(")")
        ):
            if self._variable is None:
                raise LiteralError("getvariable() is not available here")
            return self._variable(string_literal(tokens[i + 2].text)), i + 4
        raise LiteralError(
            f"{token.text!r} at offset {token.start} is not a literal: a value must be "
            f"{ACCEPTED} (expressions, columns and other functions are not evaluated)"
        )

    def _list_item(self, i: int, stop: int) -> tuple[Any, int]:
        return self._read(i, stop)

    def _struct_item(self, i: int, stop: int) -> tuple[Any, int]:
        key_token = self._tokens[i]
        if key_token.kind == "string_const":
            key = string_literal(key_token.text)
        elif key_token.is_name:
            key = unquote_identifier(key_token.text)
        else:
            raise LiteralError(
                f"a struct key (a name or 'string') expected at offset {key_token.start}, got {key_token.text!r}"
            )
        if i + 1 >= stop or not self._tokens[i + 1].is_op(":"):
            raise LiteralError(f"':' expected after the struct key {key_token.text} at offset {key_token.start}")
        if i + 2 >= stop:
            raise LiteralError(f"the struct key {key_token.text} has no value")
        value, end = self._read(i + 2, stop)
        return (key, value), end

    def _sequence(self, i: int, stop: int, closer: str, item) -> tuple[list, int]:
        tokens = self._tokens
        items: list = []
        j = i + 1
        if j < stop and tokens[j].is_op(closer):
            return items, j + 1
        while j < stop:
            value, j = item(j, stop)
            items.append(value)
            if j < stop and tokens[j].is_op(closer):
                return items, j + 1
            if j < stop and tokens[j].is_op(","):
                j += 1
                if j < stop and tokens[j].is_op(closer):  # trailing comma
                    return items, j + 1
                continue
            break
        where = tokens[j] if j < stop else tokens[stop - 1]
        raise LiteralError(
            f"expected ',' or {closer!r} at offset {where.start} in the "
            f"{'list' if closer == ']' else 'struct'} opened at offset {tokens[i].start}"
        )
