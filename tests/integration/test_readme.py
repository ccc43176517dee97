"""The README's code runs as shown: every Python block and every command of the CLI
section, on demo data, from a scratch directory holding ``demo-data/`` and links to the
repository's ``sql/`` and ``examples/``. The Spark block runs in its own process (it
starts and stops a SparkSession) when pyspark 4 and Java 17+ are present.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tfsql.demo import write_demo_dataset

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.S)


def _section(title: str) -> str:
    start = README.index(title)
    end = README.find("\n## ", start + len(title))
    return README[start : end if end != -1 else len(README)]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("readme")
    write_demo_dataset(work / "demo-data", rows=2000)
    for name in ("sql", "examples"):
        (work / name).symlink_to(ROOT / name)
    return work


PYTHON_BLOCKS = [b for b in _blocks("python") if "spark" not in b]
SPARK_BLOCKS = [b for b in _blocks("python") if "SparkSession" in b]


def test_the_readme_has_the_blocks_this_test_runs():
    assert len(PYTHON_BLOCKS) >= 4
    assert "tfsql demo" in _blocks("sh")[0]
    assert 'pip install -q -e ".[dev]" && .venv/bin/pytest -q' in _blocks("sh")[1]


@pytest.mark.parametrize("index", range(len(PYTHON_BLOCKS)))
def test_python_block_runs(workdir, index, monkeypatch):
    monkeypatch.chdir(workdir)
    exec(compile(PYTHON_BLOCKS[index], f"README.md python block {index}", "exec"), {"__name__": "readme"})


@pytest.mark.spark
def test_spark_block_runs_as_written(workdir):
    pytest.importorskip("pyspark.sql.datasource", reason="needs pyspark >= 4.0")
    from tfsql.spark import java_version

    if (java_version() or 0) < 17:
        pytest.skip("needs Java 17+ for Spark 4")
    assert len(SPARK_BLOCKS) == 1
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    done = subprocess.run(
        [sys.executable, "-c", SPARK_BLOCKS[0]],
        cwd=workdir,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=900,
        env={**env, "PYTHONPATH": str(ROOT)},  # the block itself sets PYSPARK_PYTHON
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "2000"  # every demo row, read back
    assert "Traceback" not in done.stderr and "BrokenPipeError" not in done.stderr, done.stderr


def _cli_lines() -> list[str]:
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", _section("## The `tfsql` command"), flags=re.S):
        joined = block.replace("\\\n", " ")
        for line in joined.splitlines():
            command = line.split("  #", 1)[0].strip()
            if command.startswith("tfsql ") and command != "tfsql":
                lines.append(command)
    return lines


CLI_LINES = _cli_lines()


def test_the_cli_section_lists_the_commands():
    assert len(CLI_LINES) >= 10
    assert any(line.startswith("tfsql verify") for line in CLI_LINES)


@pytest.mark.parametrize("command", CLI_LINES)
def test_cli_command_runs(workdir, command):
    # In README order: later commands use what earlier ones wrote (reviews.parquet).
    argv = shlex.split(command)
    stdout = subprocess.DEVNULL
    if ">" in argv:  # "... > file": redirect like a shell
        at = argv.index(">")
        stdout = open(workdir / argv[at + 1], "wb")
        argv = argv[:at]
    try:
        done = subprocess.run(
            [sys.executable, "-m", "tfsql", *argv[1:]],
            cwd=workdir,
            stdout=stdout,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            timeout=120,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
    finally:
        if stdout is not subprocess.DEVNULL:
            stdout.close()
    assert done.returncode == 0, done.stderr.decode()
