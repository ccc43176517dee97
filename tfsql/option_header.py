"""The C header of the DuckDB extension's named parameters, generated from the option
spec (:mod:`tfsql.options`), so that an option is declared once.

``python -m tfsql.option_header`` prints the header; ``--write`` writes it to
``tfsql/duckdb_ext/options_gen.h``, where it is kept in the repository (the build needs
no Python step), and rewrites the generated keyword parameters of `tfsql.dataset`,
``pl.scan_tfrecord`` and ``pl.read_tfrecord`` (`tfsql.option_python`);
``tests/unit/test_option_header.py`` regenerates both and fails on any difference. The
header holds, for the reading options in :data:`~tfsql.options.NATIVE_READ_OPTIONS`:

- one entry per SQL spelling (aliases included): the parameter's name, its option, the
  kind of value (which decides its DuckDB type), its vocabulary and how a boolean
  spelling maps onto a choice (``ignore_errors := true`` is ``on_corrupt := 'skip'``);
- each vocabulary (every name Python accepts, lower case, to its canonical code) and the
  words of its error message, as :mod:`tfsql.option_values` words it;
- each option's default;
- the options of the native ``COPY ... TO ... (FORMAT tfrecord)``: every SQL spelling of
  a writing option (:data:`~tfsql.options.WRITE_OPTIONS`), whether the extension reads it
  (:data:`~tfsql.options.NATIVE_COPY_OPTIONS`), DuckDB applies it
  (:data:`~tfsql.options.DUCKDB_COPY_OPTIONS`) or it is refused, with its vocabulary;
- the file-name rules of :mod:`tfsql.naming`: the endings that say TFRecord and the
  compression a name's ending says.

Examples
--------
>>> text = c_header()
>>> '{"bytearray", TFSQL_RECORD_TYPE_BYTES}' in text
True
>>> '"threads"' in text  # not implemented by the extension, so not registered
False
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Any, Iterable

from tfsql.naming import NAME_COMPRESSIONS, TFRECORD_BASES
from tfsql.option_python import TARGETS, write_all
from tfsql.options import (
    COMPAT_SQL_PARAMETERS,
    DUCKDB_COPY_OPTIONS,
    NATIVE_COPY_OPTIONS,
    READ_OPTIONS,
    WRITE_OPTIONS,
    COPY_COMPRESSION_AUTO,
    Option,
    copy_choices,
    Spelling,
)

__all__ = ["c_header", "c_string", "header_main", "HEADER_PATH"]

#: Where the generated header is kept (relative to the repository's root).
HEADER_PATH = os.path.join("tfsql", "duckdb_ext", "options_gen.h")

_KINDS = (
    "bool",
    "count",
    "count_or_all",
    "choice",
    "name",
    "bool_or_name",
    "types",
    "columns",
    "size",
    "flag",
    "level",
    "text",
)


def c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _ident(text: Any) -> str:
    return "NONE" if text is None else str(text).upper().replace("-", "_").replace(".", "_")


def _vocabulary(option: Option) -> list[tuple[str, Any]] | None:
    """(accepted name, canonical value) of a choice option, as its check accepts them."""
    vocabulary = getattr(option.check, "vocabulary", None)
    if vocabulary is None:
        return None
    if isinstance(vocabulary, dict):
        return [(word, canonical) for word, canonical in vocabulary.items()]
    return [(word, word) for word in vocabulary]


def _canonical(words: Iterable[tuple[str, Any]]) -> list[Any]:
    seen: list[Any] = []
    for _, canonical in words:
        if canonical not in seen:
            seen.append(canonical)
    return seen


def _code(option: Option, canonical: Any, prefix: str = "") -> str:
    return f"TFSQL_{prefix.upper()}{_ident(option.name)}_{_ident(canonical)}"


def _vocabulary_block(option: Option, words: list[tuple[str, Any]], prefix: str = "") -> list[str]:
    name = prefix.upper() + _ident(option.name)
    canon = _canonical(words)
    lines = [f"/* {option.name}: {option.doc} */"]
    lines.append("enum {")
    lines += [f"    {_code(option, c, prefix)} = {i}," for i, c in enumerate(canon)]
    lines.append("};")
    lines.append(f"static const tfsql_word tfsql_{prefix}{option.name}_words[] = {{")
    lines += [f"    {{{c_string(word)}, {_code(option, c, prefix)}}}," for word, c in words if word]
    lines.append("    {NULL, 0},")
    lines.append("};")
    what = getattr(option.check, "what")
    lines.append(f"#define TFSQL_{name}_WHAT {c_string(what)}")
    lines.append(f"#define TFSQL_{name}_UNKNOWN_WORDING {1 if getattr(option.check, 'unknown') else 0}")
    return lines


def _default(option: Option, words: list[tuple[str, Any]] | None) -> str | None:
    value = option.default
    if words is not None:
        return _code(option, value) if value in _canonical(words) else None
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return str(value)
    if value is None and option.name in ("infer_sample", "infer_files", "infer_bytes", "hive_partitioning"):
        return "-1"
    return None


def _mapped(option: Option, spelling: Spelling, value: Any) -> str:
    """A boolean spelling's value for true or false, as the code of the option's choice."""
    if spelling.maps is None or value not in spelling.maps or _vocabulary(option) is None:
        return "-1"
    return _code(option, spelling.maps[value])


def _true_text(spelling: Spelling) -> str:
    """What true means for a boolean-or-name spelling (``filename := true``), or NULL."""
    mapped = (spelling.maps or {}).get(True) if spelling.value == "bool_or_name" else None
    return c_string(mapped) if isinstance(mapped, str) else "NULL"


def c_header() -> str:
    """The text of ``tfsql/duckdb_ext/options_gen.h``."""
    native = [option for option in READ_OPTIONS.values() if option.native]
    out = [
        "/*",
        " * tfsql/duckdb_ext/options_gen.h -- GENERATED from tfsql/options.py by",
        " * `python -m tfsql.option_header --write`; do not edit (tests/unit/test_option_header.py",
        " * fails when it differs from what the spec generates).",
        " *",
        " * The named parameters of tfrecord_scan / read_tfrecord: the SQL spellings of the reading",
        " * options the extension implements (tfsql.options.NATIVE_READ_OPTIONS), their vocabularies,",
        " * error wording and defaults.",
        " */",
        "#ifndef TFSQL_OPTIONS_GEN_H",
        "#define TFSQL_OPTIONS_GEN_H",
        "",
        "#include <stddef.h>",
        "",
        "/* A vocabulary entry: a name (lower case; matched in any case, spaces trimmed) and its code. */",
        "typedef struct {",
        "    const char *word;",
        "    int code;",
        "} tfsql_word;",
        "",
        "/* The options the extension implements. */",
        "enum {",
    ]
    out += [f"    TFSQL_OPTION_{_ident(o.name)}," for o in native]
    out += ["    TFSQL_OPTION_COUNT,", "};", ""]
    out += ["/* What a parameter's value is (it decides the parameter's DuckDB type). */", "enum {"]
    out += [f"    TFSQL_VALUE_{_ident(k)}," for k in _KINDS]
    out += ["};", ""]
    vocabularies: dict[str, list[tuple[str, Any]]] = {}
    for option in native:
        words = _vocabulary(option)
        if words is not None:
            vocabularies[option.name] = words
            out += _vocabulary_block(option, words) + [""]
    out.append("/* Defaults (-1: None, that is all / auto). */")
    for option in native:
        default = _default(option, vocabularies.get(option.name))
        if default is not None:
            out.append(f"#define TFSQL_DEFAULT_{_ident(option.name)} {default}")
    out += [
        "",
        "/* One named parameter: a spelling of an option. A boolean spelling of a choice maps true",
        " * and false to the choice's codes (-1: not mapped); a boolean-or-name one maps true to",
        " * `true_text`; `words` is the vocabulary of a choice. */",
        "typedef struct {",
        "    const char *name;",
        "    int option;",
        "    int value;",
        "    const tfsql_word *words;",
        "    const char *what;",
        "    int unknown_wording;",
        "    int if_true, if_false;",
        "    const char *true_text;",
        "} tfsql_param;",
        "",
        "static const tfsql_param tfsql_params[] = {",
    ]
    for option in native:
        words = vocabularies.get(option.name)
        for spelling in option.sql:
            if spelling.value not in _KINDS:  # pragma: no cover - a new kind needs a C reader
                raise ValueError(f"{spelling.name}: no C reader for values of kind {spelling.value!r}")
            vocab = f"tfsql_{option.name}_words" if words is not None else "NULL"
            what = f"TFSQL_{_ident(option.name)}_WHAT" if words is not None else "NULL"
            unknown = f"TFSQL_{_ident(option.name)}_UNKNOWN_WORDING" if words is not None else "0"
            out.append(
                f"    {{{c_string(spelling.name)}, TFSQL_OPTION_{_ident(option.name)}, "
                f"TFSQL_VALUE_{_ident(spelling.value)}, {vocab}, {what}, {unknown}, "
                f"{_mapped(option, spelling, True)}, {_mapped(option, spelling, False)}, {_true_text(spelling)}}},"
            )
    out += ["    {NULL, 0, 0, NULL, NULL, 0, -1, -1, NULL},", "};", ""]
    out += _copy_block()
    out += _names_block()
    out.append("/* read_parquet parameters accepted (a BOOLEAN) and ignored. */")
    out.append("static const char *const tfsql_compat_params[] = {")
    out += [f"    {c_string(name)}," for name in COMPAT_SQL_PARAMETERS]
    out += ["    NULL,", "};", "", "#endif /* TFSQL_OPTIONS_GEN_H */", ""]
    return "\n".join(out)


def _copy_block() -> list[str]:
    """The native COPY's option table: each SQL spelling of a writing option."""
    native = [o for o in WRITE_OPTIONS.values() if o.name in NATIVE_COPY_OPTIONS]
    out = [
        "/* COPY ... TO ... (FORMAT tfrecord): the writing options the extension reads",
        " * (tfsql.options.NATIVE_COPY_OPTIONS). */",
        "enum {",
    ]
    out += [f"    TFSQL_COPY_OPTION_{_ident(o.name)}," for o in native]
    out += ["};", ""]
    vocabularies = {}
    for option in native:
        words = _vocabulary(option)
        if words is None:
            continue
        if option.name == "compression":  # COPY's own: the name decides
            words = [*words, (COPY_COMPRESSION_AUTO, COPY_COMPRESSION_AUTO)]
        read = READ_OPTIONS.get(option.name)
        if read is not None and read.native and _vocabulary(read) == words:
            vocabularies[option.name] = f"tfsql_{option.name}_words"  # the scan's, generated above
        else:
            out += _vocabulary_block(option, words, "copy_")
            vocabularies[option.name] = f"tfsql_copy_{option.name}_words"
        out.append(f"#define TFSQL_COPY_{_ident(option.name)}_CHOICES {c_string(copy_choices(option))}")
        out.append("")
    out += [
        "/* One COPY option spelling: `option` is a TFSQL_COPY_OPTION_* the extension reads, or -1",
        " * for an option it refuses (`doc` says what it does; tfsql.write_tfrecord has it). */",
        "typedef struct {",
        "    const char *name;",
        "    int option;",
        "    int value;",
        "    const tfsql_word *words;",
        "    const char *choices;",
        "    const char *doc;",
        "} tfsql_copy_param;",
        "",
        "static const tfsql_copy_param tfsql_copy_params[] = {",
    ]
    for option in WRITE_OPTIONS.values():
        for spelling in option.sql:
            if spelling.name in DUCKDB_COPY_OPTIONS:
                continue
            if option.name in NATIVE_COPY_OPTIONS:
                has_words = option.name in vocabularies
                code = f"TFSQL_COPY_OPTION_{_ident(option.name)}"
                vocab = vocabularies[option.name] if has_words else "NULL"
                choices = f"TFSQL_COPY_{_ident(option.name)}_CHOICES" if has_words else "NULL"
            else:
                code, vocab, choices = "-1", "NULL", "NULL"
            out.append(
                f"    {{{c_string(spelling.name)}, {code}, TFSQL_VALUE_{_ident(spelling.value)}, {vocab}, "
                f"{choices}, {c_string(option.doc)}}},"
            )
    out += ["    {NULL, 0, 0, NULL, NULL, NULL},", "};", ""]
    main = []
    for option in native:
        names = [sp.name for sp in option.sql]
        main.append(names[0] + (f" (or {', '.join(names[1:])})" if len(names) > 1 else ""))
    valid = ", ".join(main) + ", and DuckDB's own " + ", ".join(DUCKDB_COPY_OPTIONS)
    out += ["/* The options a COPY error lists as valid. */", f"#define TFSQL_COPY_VALID {c_string(valid)}", ""]
    return out


def _names_block() -> list[str]:
    """tfsql.naming's file-name table."""
    codes = {"gzip": "TFSQL_COMPRESSION_GZIP", "zlib": "TFSQL_COMPRESSION_ZLIB"}
    out = [
        "/* File names (tfsql.naming): the endings that say TFRecord, alone or followed by an ending",
        " * that says a compression. */",
    ]
    out.append("static const char *const tfsql_tfrecord_bases[] = {")
    out += [f"    {c_string(base)}," for base in TFRECORD_BASES]
    out += ["    NULL,", "};", "static const tfsql_word tfsql_name_compressions[] = {"]
    out += [f"    {{{c_string(suffix)}, {codes[c]}}}," for suffix, c in NAME_COMPRESSIONS.items()]
    out += ["    {NULL, 0},", "};", ""]
    return out


def header_main(argv: list[str] | None, module_name: str) -> int:
    """The command of a generated header (``python -m <module_name>``): print the
    module's ``c_header()``, or with ``--write`` write it to its ``HEADER_PATH``
    (relative to the repository's root), the other headers its ``more_headers()``
    gives (when it has one), and the Python blocks the module generates (its
    ``write_python(root)``, when it has one)."""
    module = importlib.import_module(module_name)  # (under `python -m` it runs as __main__)
    path = module.HEADER_PATH
    write_python = getattr(module, "write_python", None)
    also = f" and the generated blocks of {', '.join(TARGETS)}" if write_python is not None else ""
    parser = argparse.ArgumentParser(
        prog=f"python -m {module_name}", description=(module.__doc__ or "").split("\n\n")[0]
    )
    parser.add_argument("--write", action="store_true", help=f"write {path}{also} (in this checkout)")
    args = parser.parse_args(argv)
    headers = [(path, module.c_header()), *getattr(module, "more_headers", list)()]
    if args.write:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        for header, text in headers:
            with open(os.path.join(root, header), "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
        if write_python is not None:
            write_python(root)
    else:
        sys.stdout.write("".join(text for _, text in headers))
    return 0


#: The reading options' keyword blocks in tfsql.dataset and the Polars functions.
write_python = write_all


def main(argv: list[str] | None = None) -> int:
    return header_main(argv, "tfsql.option_header")


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
