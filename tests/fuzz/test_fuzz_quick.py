"""A short run of the differential fuzzer (``fuzz_decoder.py``) in the default suite: no
exception other than ``DecodeError`` from either codec, and no difference at all between
the C core and the reference decoder (protobuf).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
pytest.importorskip("google.protobuf")

import fuzz_decoder  # noqa: E402  (this directory, put on sys.path above)


def test_a_short_fuzzing_run_finds_no_difference():
    counts = fuzz_decoder.run(seed=20261125, count=300)
    assert not counts, counts
