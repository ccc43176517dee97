"""Python started in the checkout's root finds a working tfsql (issue 23, finding 1).

Python puts the current directory first on ``sys.path``, so in the root of a checkout
``import tfsql`` imports the checkout's ``tfsql/``, not the one ``pip install .`` put in
site-packages. The README's Quickstart therefore installs in place (``pip install -e
.``), which builds the C extension and the DuckDB extension inside the checkout. The
Quickstart itself takes a minute, too slow for the default run; these tests check its
two consequences: Python started in this checkout's root (installed by the README's
test command, which is also editable) reads and writes TFRecord, and a source tree
without its compiled files says so and names the command that builds them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _env_without_pythonpath() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "TFSQL_PURE_PYTHON")}


def _python(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """This Python started in ``cwd`` with ``args``, as a user starts it (no PYTHONPATH)."""
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        env=_env_without_pythonpath(),
    )


def test_the_quickstart_installs_in_place():
    quickstart = re.findall(r"```sh\n(.*?)```", README, flags=re.S)[0]
    assert re.search(r"\.venv/bin/pip install -e \. ", quickstart), quickstart


def test_python_started_in_the_clone_root_reads_and_writes(tmp_path):
    code = (
        "import pyarrow as pa, tfsql, sys\n"
        f"path = {str(tmp_path / 'x.tfrecord')!r}\n"
        "tfsql.write_tfrecord(pa.table({'id': [1, 2, 3]}), path)\n"
        "print(tfsql.read_tfrecord(path).column('id').to_pylist())\n"
        "con = tfsql.connect()\n"
        "print(con.sql(f\"SELECT sum(id) FROM tfrecord_scan('{path}')\").fetchall())\n"
        "print(tfsql.__file__)\n"
    )
    done = _python("-c", code, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:2] == ["[1, 2, 3]", "[(6,)]"]
    assert Path(lines[2]).resolve() == ROOT / "tfsql" / "__init__.py"  # the checkout's own tree


def test_python_dash_m_tfsql_in_the_clone_root_finds_the_extension():
    done = _python("-m", "tfsql", "extension-path", cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).is_file()


def test_an_unbuilt_source_tree_names_the_cause_and_the_fix(tmp_path):
    checkout = tmp_path / "checkout"
    shutil.copytree(
        ROOT / "tfsql",
        checkout / "tfsql",
        ignore=shutil.ignore_patterns("*.so", "*.pyd", "*.duckdb_extension", "__pycache__"),
    )
    for name in ("setup.py", "pyproject.toml"):
        shutil.copy(ROOT / name, checkout / name)
    # This test's environment has tfsql installed in place; its import hook would hand
    # the copy this checkout's compiled module. Without it, as after `pip install .`:
    code = (
        "import sys\n"
        "sys.meta_path[:] = [f for f in sys.meta_path if 'Editable' not in getattr(f, '__name__', type(f).__name__)]\n"
        "import pyarrow as pa, tfsql\n"
        "tfsql.write_tfrecord(pa.table({'a': [1]}), 'x.tfrecord')\n"
    )
    done = _python("-c", code, cwd=checkout)
    assert done.returncode == 1
    message = done.stderr.strip().splitlines()[-1]
    assert message == (
        f"ImportError: tfsql was imported from the source tree {checkout / 'tfsql'}, whose C extension "
        "tfsql._native is not built (Python searches the current directory first, so a checkout's "
        f"root shadows an installed tfsql). Build it in place with: {sys.executable} -m pip install -e {checkout}"
    )


def test_an_installed_package_without_its_extension_says_to_reinstall(tmp_path):
    from tfsql._codec import missing_native_message

    package = tmp_path / "site-packages" / "tfsql"
    package.mkdir(parents=True)
    message = missing_native_message(package)
    assert message.startswith(f"tfsql's C extension tfsql._native is missing from {package}; reinstall")
    assert f"{sys.executable} -m pip install --force-reinstall tfsql" in message
