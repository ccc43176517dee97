"""The reading options' samples, kept in one place: ``SAMPLES`` of
``tests/integration/test_differential_frontends.py``, which reads each in every front end.

Tests that check what else a reading option reaches (the Spark and CLI spellings in
``tests/unit/test_options.py``, the Polars hand-off in
``tests/integration/test_polars_options.py``) take their values from there, so adding an
option needs one sample, in the differential test.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from typing import Any

_DIFFERENTIAL = Path(__file__).resolve().parent / "integration" / "test_differential_frontends.py"


@functools.cache
def reading_samples() -> dict[str, list]:
    """The differential test's ``SAMPLES``: option -> its samples (``.value``, ``.source``...)."""
    spec = importlib.util.spec_from_file_location("differential_frontend_samples", _DIFFERENTIAL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module.SAMPLES


def first_values() -> dict[str, Any]:
    """Each reading option's first sample value (options no front end offers have none)."""
    return {name: samples[0].value for name, samples in reading_samples().items() if samples}
