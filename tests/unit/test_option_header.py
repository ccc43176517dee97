"""The extension's parameter table and the keyword parameters of the functions that take
every reading option by name are generated from the option spec (and the extension's
data-error wording from tfsql/messages.py): the header and the blocks kept in the
repository are what ``python -m tfsql.option_header --write`` and
``python -m tfsql.message_header --write`` write today."""

from __future__ import annotations

import os

import pytest

from tfsql import message_header, option_header
from tfsql.option_header import c_header
from tfsql.option_python import TARGETS, render
from tfsql.options import READ_OPTIONS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.mark.parametrize("module", [option_header, message_header], ids=["option_header", "message_header"])
def test_generated_header_is_up_to_date(module):
    """Each generated header kept in the repository (the options' and the data errors'
    wording) is what its generator writes today."""
    command = f"python -m {module.__name__} --write"
    for path, text in [(module.HEADER_PATH, module.c_header()), *getattr(module, "more_headers", list)()]:
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            kept = f.read()
        assert kept == text, f"{path} differs from its spec: run `{command}`"


def test_only_native_options_are_registered():
    text = c_header()
    for option in READ_OPTIONS.values():
        for spelling in option.sql:
            registered = f'{{"{spelling.name}", TFSQL_OPTION_' in text
            assert registered == option.native, spelling.name


def test_vocabularies_hold_every_name_python_accepts():
    text = c_header()
    for word in ("bytearray", "sequenceexample", "org.apache.hadoop.io.compress.gzipcodec", "deflate", "insert"):
        assert f'{{"{word}", TFSQL_' in text


def test_generated_python_parameters_are_up_to_date():
    stale = []
    for path in TARGETS:
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            text = f.read()
        if render(path, text) != text:
            stale.append(path)
    assert stale == [], "run `python -m tfsql.option_header --write`"


def test_every_option_is_passed_by_name_in_its_generated_blocks():
    with open(os.path.join(ROOT, TARGETS[0]), encoding="utf-8") as f:
        opening = f.read()
    for name, option in READ_OPTIONS.items():
        assert (f"    {name}: " in opening) == option.python, name
        assert (f"        {name}={name},\n" in opening) == option.python, name


def test_a_block_without_its_end_line_is_refused():
    text = "# generated: dataset parameters\nx = 1\n"
    with pytest.raises(ValueError, match="the generated block 'dataset parameters' has no end line"):
        render(TARGETS[0], text)
