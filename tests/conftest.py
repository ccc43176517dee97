"""Test-run options shared by every test directory."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config, items):
    """Tests marked ``slow`` run only when asked for (``pytest -m slow``)."""
    if "slow" in (config.getoption("markexpr") or ""):
        return
    skip = pytest.mark.skip(reason="slow: run with -m slow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)
