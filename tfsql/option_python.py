"""The keyword parameters of the functions that take every reading option by name,
generated from the option spec (:mod:`tfsql.options`), so that an option is declared once
and a reader still sees each one by name (no ``**kwargs`` or signature forwarding).

``python -m tfsql.option_header --write`` rewrites the blocks between marker lines in
``tfsql/opening.py`` (`tfsql.dataset`) and ``tfsql/polars/scan.py`` (``pl.scan_tfrecord``
and ``pl.read_tfrecord``); ``tests/unit/test_option_header.py`` regenerates them and fails
on any difference. A block starts at a line ``# generated: <name> ...`` (in a docstring,
``.. generated: <name> ...``) and ends at ``# end generated: <name>``; what lies between
is replaced, indented like the start line. The blocks:

- ``... imports``: the types of :mod:`tfsql.option_values` the parameters' hints use;
- ``... parameters``: the keyword parameters, ``name: <annotation> = _DEFAULT.name,``
  (each module's ``_DEFAULT`` is ``ReadOptions()``, so the defaults are the spec's);
- ``... docs``: their numpydoc entries (``doc_type`` and ``details`` of the option);
- ``... options``: ``name=name,``, the options handed on by name.

`tfsql.dataset` takes every option the spec offers Python. The Polars functions take
every option it offers Polars; those spelled as a ``pl.scan_parquet`` parameter
(``Option.parquet_name``) are written by hand among Parquet's own (their types and
meaning are Polars'), the rest are generated after them.

Examples
--------
>>> blocks = generated_blocks()
>>> blocks["tfsql/opening.py"]["dataset parameters"][:2]
['schema: pa.Schema | Mapping[str, Any] | None = _DEFAULT.schema,', 'record_type: RecordType = _DEFAULT.record_type,']
>>> blocks["tfsql/polars/scan.py"]["scan options"][:2]
['schema=schema,', 'record_type=record_type,']
"""

from __future__ import annotations

import os
import re
import textwrap
from collections.abc import Iterable

from tfsql import option_values
from tfsql.options import READ_OPTIONS, Option

__all__ = ["TARGETS", "generated_blocks", "render", "write_all"]

#: The files holding generated blocks (relative to the repository's root).
TARGETS = (os.path.join("tfsql", "opening.py"), os.path.join("tfsql", "polars", "scan.py"))

_WIDTH = 88  # docstring lines, as the hand-written ones
_START = re.compile(r"^(?P<indent>\s*)(?:#|\.\.) generated: (?P<name>[a-z ]+?)(?: \(.*\))?\s*$")
_END = "end generated: {}"


def generated_blocks() -> dict[str, dict[str, list[str]]]:
    """Each target file's blocks: name -> lines (without the block's indentation)."""
    python = [o for o in READ_OPTIONS.values() if o.python]
    polars = [o for o in READ_OPTIONS.values() if o.polars]
    polars_own = [o for o in polars if not o.parquet_name]
    return {
        "tfsql/opening.py": {
            "dataset imports": _imports(python),
            "dataset parameters": _parameters(python),
            "dataset docs": _docs(python),
            "dataset options": _passed(python),
        },
        "tfsql/polars/scan.py": {
            "polars imports": _imports(polars_own),
            "scan parameters": _parameters(polars_own),
            "scan docs": _docs(polars_own),
            "scan options": _passed(polars),
            "read parameters": _parameters(polars_own),
            "read options": _passed(polars_own),
        },
    }


def _imports(options: Iterable[Option]) -> list[str]:
    names = sorted(
        {
            word
            for option in options
            for word in re.findall(r"[A-Za-z_]\w*", option.annotation)
            if word in option_values.__all__
        }
    )
    # ruff format wants a blank line between an import and the comment after it
    return [f"from tfsql.option_values import {', '.join(names)}", ""] if names else []


def _parameters(options: Iterable[Option]) -> list[str]:
    return [f"{o.name}: {o.annotation} = _DEFAULT.{o.name}," for o in options]


def _passed(options: Iterable[Option]) -> list[str]:
    return [f"{o.name}={o.name}," for o in options]


def _docs(options: Iterable[Option]) -> list[str]:
    lines: list[str] = []
    for o in options:
        lines.append(f"{o.name} : {o.doc_type}" if o.doc_type else o.name)
        text = o.details or (o.doc[:1].upper() + o.doc[1:] + ".")
        lines += textwrap.wrap(
            text,
            _WIDTH - 4,  # the block itself is indented (4 in a function's docstring)
            initial_indent="    ",
            subsequent_indent="    ",
            break_long_words=False,
            break_on_hyphens=False,
        )
    return lines


def render(path: str, text: str) -> str:
    """``text`` (the file ``path``, as in `TARGETS`) with its generated blocks rewritten.

    Raises
    ------
    ValueError
        When a block's start or end line is missing, or the file holds a block the spec
        does not generate.
    """
    blocks = generated_blocks()[path.replace(os.sep, "/")]
    lines = text.split("\n")
    out: list[str] = []
    seen: set[str] = set()
    i = 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        start = _START.match(line)
        i += 1
        if start is None:
            continue
        name, indent = start.group("name"), start.group("indent")
        if name not in blocks:
            raise ValueError(f"{path}: no generated block {name!r} (known: {', '.join(blocks)})")
        end = next((j for j in range(i, len(lines)) if lines[j].strip().endswith(_END.format(name))), None)
        if end is None:
            raise ValueError(f"{path}: the generated block {name!r} has no end line ('... {_END.format(name)}')")
        out += [indent + body if body else "" for body in blocks[name]]
        out.append(lines[end])
        seen.add(name)
        i = end + 1
    missing = set(blocks) - seen
    if missing:
        raise ValueError(f"{path}: no start line for the generated blocks {sorted(missing)}")
    return "\n".join(out)


def write_all(root: str) -> list[str]:
    """Rewrite the generated blocks of every target file under ``root``; returns the
    files that changed."""
    changed = []
    for path in TARGETS:
        full = os.path.join(root, path)
        with open(full, encoding="utf-8") as f:
            text = f.read()
        new = render(path, text)
        if new != text:
            with open(full, "w", encoding="utf-8", newline="\n") as f:
                f.write(new)
            changed.append(path)
    return changed
