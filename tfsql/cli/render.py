"""Values and tables for people: record values, aligned columns, short Arrow type names."""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import pyarrow as pa


def format_value(value: Any, *, max_chars: int = 80, max_items: int = 8, top: bool = True) -> str:
    """Render one value of a record for a terminal.

    UTF-8 text as is (truncated with its length), other bytes as ``b'...'`` with their
    length, floats with 6 significant digits, long lists truncated with their length.

    Examples
    --------
    >>> format_value("great product")
    'great product'
    >>> format_value(b"\\x89PNG\\r\\n\\x1a\\n" + bytes(100), max_chars=12)
    "b'\\\\x89PNG\\\\r\\\\n\\\\x1a\\\\n\\\\x00\\\\x00\\\\x00\\\\x00'… (108 bytes)"
    >>> format_value([0.5] * 10, max_items=3)
    '[0.5, 0.5, 0.5, …] (10 values)'
    >>> format_value(None), format_value([]), format_value(["a", "b"])
    ('null', '[]', "['a', 'b']")
    """
    if value is None:
        return "null"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, bytes):
        try:
            text = value.decode("utf-8")
        except UnicodeDecodeError:
            text = None
        if text is not None and (text.isprintable() or not text):
            return format_value(text, max_chars=max_chars, top=top)
        shown = repr(value[:max_chars])
        return f"{shown}{'…' if len(value) > max_chars else ''} ({len(value):,} bytes)"
    if isinstance(value, str):
        text = value.replace("\n", "\\n")
        if len(text) > max_chars:
            text = f"{text[:max_chars]}… ({len(value):,} chars)"
        return text if top else repr(text)
    if isinstance(value, (list, tuple)):
        inner = [
            format_value(v, max_chars=max(8, max_chars // 4), max_items=max(2, max_items // 2), top=False)
            for v in value[:max_items]
        ]
        if len(value) > max_items:
            return f"[{', '.join(inner)}, …] ({len(value):,} values)"
        return f"[{', '.join(inner)}]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {format_value(v, top=False)}" for k, v in value.items()) + "}"
    return str(value)


def format_table(headers: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    """Left-aligned columns separated by two spaces, with a header rule.

    Examples
    --------
    >>> print(format_table(["name", "type"], [["id", "int64"]]))
    name  type
    ----  -----
    id    int64
    """
    rows = [list(map(str, r)) for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip(), "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(lines)


def type_name(t: pa.DataType) -> str:
    """A short Arrow type name: ``list<float>`` rather than ``list<item: float>``.

    Examples
    --------
    >>> type_name(pa.list_(pa.list_(pa.float32())))
    'list<list<float>>'
    """
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return f"list<{type_name(t.value_type)}>"
    if pa.types.is_fixed_size_list(t):
        return f"fixed_size_list<{type_name(t.value_type)}, {t.list_size}>"
    return str(t)


def feature_kind(t: pa.DataType) -> str:
    """The tf.train.Feature kind a column reads from / writes to.

    Examples
    --------
    >>> feature_kind(pa.list_(pa.float32())), feature_kind(pa.string())
    ('float_list', 'bytes_list')
    """
    from tfsql._codec import codec
    from tfsql.errors import SchemaError
    from tfsql.schema import feature_layout, kind_name

    try:
        kind, shape = feature_layout(t)
    except SchemaError:
        return "?"
    return f"feature_list of {kind_name(kind)}" if shape == codec.LIST_OF_LIST else kind_name(kind)


def markdown_table(table: pa.Table) -> str:
    """A Markdown (GitHub) table of ``table``: numbers right-aligned, ``|`` escaped, line
    breaks as ``<br>``, nulls as ``NULL``.

    Examples
    --------
    >>> print(markdown_table(pa.table({"id": [1, None], "text": ["a|b", "two\\nlines"]})))
    |   id | text         |
    |-----:|:-------------|
    |    1 | a\\|b         |
    | NULL | two<br>lines |
    """

    def cell(value: Any) -> str:
        if value is None:
            return "NULL"
        text = value if isinstance(value, str) else format_value(value, max_chars=10**9, max_items=10**9)
        return text.replace("|", "\\|").replace("\r\n", "<br>").replace("\n", "<br>")

    numeric = [
        pa.types.is_integer(f.type) or pa.types.is_floating(f.type) or pa.types.is_decimal(f.type) for f in table.schema
    ]
    rows = [[cell(v) for v in row.values()] for row in table.to_pylist()]
    headers = [h.replace("|", "\\|") for h in table.column_names]
    widths = [max([len(h), 3] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return (
            "| " + " | ".join(c.rjust(w) if right else c.ljust(w) for c, w, right in zip(cells, widths, numeric)) + " |"
        )

    rule = (
        "|"
        + "|".join(("-" * (w + 1) + ":") if right else (":" + "-" * (w + 1)) for w, right in zip(widths, numeric))
        + "|"
    )
    return "\n".join([line(headers), rule] + [line(r) for r in rows])
