"""``.ci/run`` runs the README's test command, then the DuckDB tests on DuckDB 1.4 LTS.

The second step selects its test files with a ``grep`` over the test modules; this test
applies the same pattern, so the selection is known to hold the DuckDB, CLI and
SQL-script tests, and every selected module has tests (pytest exits with status 5 when
it collects none).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CI = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _readme_test_command() -> str:
    (line,) = [line for line in README.splitlines() if line.startswith("python3 -m venv .venv") and "pytest" in line]
    return line


def _duckdb_selection() -> list[str]:
    match = re.search(r"grep -lE '([^']+)' ((?:tests/\S+ ?)+)\)", CI)
    assert match, "the 1.4 step's grep is not where this test looks for it"
    pattern = re.compile(match.group(1))
    files = [path for glob in match.group(2).split() for path in sorted(ROOT.glob(glob))]
    return [path.name for path in files if pattern.search(path.read_text(encoding="utf-8"))]


def test_ci_runs_the_readme_test_command_as_written():
    command = _readme_test_command()
    assert command in CI.splitlines()


def test_the_second_step_runs_on_duckdb_14_installed_the_readme_way():
    assert '.venv-duckdb14/bin/pip install -q -e ".[test]" "duckdb==1.4.*"' in CI
    assert '.venv-duckdb14/bin/pytest -q "${duckdb_tests[@]}" tfsql/duckdb tfsql/cli' in CI


def test_the_duckdb_selection_holds_the_duckdb_cli_and_sql_script_tests():
    selected = set(_duckdb_selection())
    integration = {path.name for path in (ROOT / "tests" / "integration").glob("test_*.py")}
    wanted = {name for name in integration if name.startswith(("test_duckdb", "test_cli"))}
    wanted |= {"test_sql_scripts.py", "test_readme.py", "test_examples.py", "test_ci.py"} & integration
    assert wanted - {"test_ci.py"} <= selected, wanted - selected
    assert "test_duckdb_copy.py" in selected and "test_cli_sql.py" in selected


def test_every_selected_module_has_tests():
    for name in _duckdb_selection():
        (path,) = list(ROOT.glob(f"tests/*/{name}"))
        assert re.search(r"^def test_", path.read_text(encoding="utf-8"), flags=re.M), name
