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


def _duckdb_apis() -> list:
    """The builds of tfsql's DuckDB extension that load in the installed DuckDB: v1, and
    V2 when there is a V2 build for exactly this DuckDB version."""
    try:
        import duckdb

        from tfsql.duckdb.extension import v2_extension_path
    except ImportError:  # pragma: no cover - the DuckDB tests skip themselves
        return ["v1"]
    return ["v1"] + (["v2"] if v2_extension_path(duckdb.__version__) is not None else [])


@pytest.fixture(scope="module", params=_duckdb_apis())
def duckdb_api(request):
    """Run a module's tests once with each build of the extension (TFSQL_DUCKDB_API)."""
    import os

    before = os.environ.get("TFSQL_DUCKDB_API")
    os.environ["TFSQL_DUCKDB_API"] = request.param
    yield request.param
    if before is None:
        os.environ.pop("TFSQL_DUCKDB_API", None)
    else:
        os.environ["TFSQL_DUCKDB_API"] = before
