"""The extension's parameter table is generated from the option spec: the header kept in
the repository is what ``python -m tfsql.option_header --write`` writes today."""

from __future__ import annotations

import os

from tfsql.option_header import HEADER_PATH, c_header
from tfsql.options import READ_OPTIONS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_generated_header_is_up_to_date():
    with open(os.path.join(ROOT, HEADER_PATH), encoding="utf-8") as f:
        kept = f.read()
    assert kept == c_header(), (
        f"{HEADER_PATH} differs from the option spec: run `python -m tfsql.option_header --write`"
    )


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
