"""Data errors are worded once: the extension's message templates are generated from
tfsql/messages.py (tests/unit/test_option_header.py checks the generated header is
current), and the extension's C holds none of the wording itself."""

from __future__ import annotations

import glob
import os

import pytest

import tfsql
from tfsql import messages

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _fixed_parts(template: str) -> list[str]:
    """The longest literal pieces of a template (between its fields)."""
    pieces = []
    for chunk in template.replace("}", "{").split("{")[::2]:
        if len(chunk.strip()) >= 16:
            pieces.append(chunk)
    return pieces


def test_no_template_is_worded_again_in_the_extension_sources():
    templates = [*messages.CORRUPT.values(), *messages.SCHEMA.values(), *messages.FILE_CHANGED_WHAT.values()]
    sources = {}
    for path in glob.glob(os.path.join(ROOT, "tfsql", "duckdb_ext", "*.c")):
        with open(path, encoding="utf-8") as f:
            sources[path] = " ".join(f.read().split())  # C string pieces joined across lines
    for template in templates:
        for piece in _fixed_parts(template):
            found = [p for p, text in sources.items() if piece.strip() in text]
            assert not found, (piece, found)


def _joined(paths: list[str]) -> dict[str, str]:
    sources = {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            # C string pieces and Python f-string pieces joined across lines
            sources[path] = " ".join(f.read().replace('"\n', '"').replace('" "', "").split())
    return sources


def test_no_inference_template_is_worded_again():
    """The inference's refusals (messages.INFER) are worded in messages.py alone: not in
    the core's C (tfsql/core/infer.c renders tfsql/core/infer_messages_gen.h), the
    bindings, nor the reference inference (tfsql/_reference/inference.py)."""
    paths = [
        *glob.glob(os.path.join(ROOT, "tfsql", "core", "*.c")),
        *glob.glob(os.path.join(ROOT, "tfsql", "duckdb_ext", "*.c")),
        os.path.join(ROOT, "tfsql", "_native_module.c"),
        *glob.glob(os.path.join(ROOT, "tfsql", "_reference", "*.py")),
        *glob.glob(os.path.join(ROOT, "tfsql", "*.py")),
    ]
    sources = _joined([p for p in paths if not p.endswith("messages.py")])
    pieces = [piece.strip() for template in messages.INFER.values() for piece in _fixed_parts(template)]
    pieces += ["in none of the sampled records", "(first in", "record is not a valid"]
    assert len(pieces) > 8
    found = [(piece, path) for piece in pieces for path, text in sources.items() if piece in text]
    assert found == []


@pytest.mark.parametrize("dialect", sorted(messages.DIALECTS))
def test_every_dialect_spells_every_phrase(dialect):
    assert set(messages.DIALECTS[dialect]) == set(messages.DIALECTS["python"])


def test_the_dialects_differ_only_in_their_phrases():
    error = tfsql.CorruptRecordError(
        "length_crc", path="f", record_index=0, offset=0, rest_of_file=True, suggest_skip=True
    )
    sql = error.message("sql")
    for key, phrase in messages.DIALECTS["sql"].items():
        sql = sql.replace(phrase, messages.DIALECTS["python"][key])
    assert sql == str(error)
    assert "compression :=" in error.message("sql") and "on_corrupt := 'skip'" in error.message("sql")


def test_the_no_data_messages_are_worded_once():
    """A source naming no data file (a glob matching nothing, an empty directory, nothing
    at all), a FIFO met listing and the SequenceExample hint are worded in messages.py
    alone: the extension renders the generated templates, Python renders them."""
    sources = _joined(glob.glob(os.path.join(ROOT, "tfsql", "duckdb_ext", "*.c")))
    for path in glob.glob(os.path.join(ROOT, "tfsql", "*.py")):
        if not path.endswith("messages.py"):  # its code's strings; docstrings show examples
            sources[path] = " ".join(_code_strings(path))
    once = ("NO_MATCH", "NO_FILES_IN_DIRECTORY", "NO_SUCH_PATH", "NOT_REGULAR", "SEQUENCE_HINT")
    for template in (getattr(messages, name) for name in once):
        for piece in (p.strip() for p in _fixed_parts(template)):
            found = [p for p, text in sources.items() if piece in text]
            assert not found, (piece, found)


def test_the_extension_words_no_data_as_python_does(tmp_path):
    from tfsql.duckdb.extension import extension_available

    if not extension_available():
        pytest.skip("the DuckDB extension is not built")
    (tmp_path / "_SUCCESS").write_bytes(b"")
    con = tfsql.connect()
    for source in (str(tmp_path), str(tmp_path / "*.tfrecord")):
        with pytest.raises(tfsql.NoDataError) as python:
            tfsql.dataset(source)
        with pytest.raises(Exception) as sql:
            con.sql(f"SELECT * FROM tfrecord_scan('{source}')")
        assert str(sql.value).split("Error: ", 1)[1] == python.value.message("sql")


def _code_strings(path: str) -> list[str]:
    """The string constants of a module that are not docstrings."""
    import ast

    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]
