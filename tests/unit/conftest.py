"""Fixtures shared by the unit tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def native():
    """The C core, or a skip when it is not built (the reference codec tests still run)."""
    try:
        from tfsql import _native
    except ImportError as exc:
        pytest.skip(f"tfsql._native is not built ({exc}); run `pip install -e . --no-build-isolation`")
    return _native
