"""The README's code runs as shown, from a checkout's root as the Quickstart leaves it:
every Python block, every command of the CLI section and the ``duckdb`` command, on demo
data. The root is a scratch directory holding ``demo-data/`` and links to every entry
of this checkout's root (``tfsql/`` included, so Python started there imports the
checkout's own package, as it would in the checkout). Commands run as the activated
venv runs them: ``tfsql`` and ``duckdb`` from the directory of this Python. The Spark
block runs in its own process (it starts and stops a SparkSession) when pyspark 4 and
Java 17+ are present.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
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
    for entry in ROOT.iterdir():
        if entry.name not in ("demo-data", ".git", ".venv"):
            (work / entry.name).symlink_to(entry)
    return work


BIN = Path(sys.executable).parent  # the venv's bin directory: what activating it puts on PATH


def _activated_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(BIN.parent)
    return env


PYTHON_BLOCKS = [b for b in _blocks("python") if "spark" not in b]
SPARK_BLOCKS = [b for b in _blocks("python") if "SparkSession" in b]


def test_the_readme_has_the_blocks_this_test_runs():
    assert len(PYTHON_BLOCKS) >= 4
    assert "tfsql demo" in _blocks("sh")[0]
    assert 'pip install -q -e ".[dev]" && .venv/bin/pytest -q' in _blocks("sh")[1]


def test_the_quickstart_says_to_activate_the_venv_and_how_to_install_from_a_checkout():
    # issue 23, finding 10: the bare `tfsql` / `duckdb` commands need the venv activated;
    # `pip install tfsql` works only once the package is published
    quickstart = _section("## Quickstart")
    assert ". .venv/bin/activate" in _blocks("sh")[0]
    assert "without activating it, write `.venv/bin/tfsql`" in quickstart
    assert "Until tfsql is published on PyPI, install it from a checkout: `pip install -e .`" in quickstart
    assert '(`pip install -e ".[spark]"` with an extra)' in quickstart


def _v2_build() -> bool:
    import tfsql

    return "duckdb-v" in tfsql.duckdb_extension_path()


@pytest.mark.parametrize("index", range(len(PYTHON_BLOCKS)))
def test_python_block_runs(workdir, index, monkeypatch):
    if "COPY" in PYTHON_BLOCKS[index] and not _v2_build():
        pytest.skip("the block's COPY is the V2 build's (DuckDB 2); docs/duckdb-extension.md lists DuckDB 1.x's")
    monkeypatch.chdir(workdir)
    exec(compile(PYTHON_BLOCKS[index], f"README.md python block {index}", "exec"), {"__name__": "readme"})


@pytest.mark.spark
def test_spark_block_runs_as_written(workdir):
    pytest.importorskip("pyspark.sql.datasource", reason="needs pyspark >= 4.0")
    from tfsql.spark import java_version

    if (java_version() or 0) < 17:
        pytest.skip("needs Java 17+ for Spark 4")
    assert len(SPARK_BLOCKS) == 1
    done = subprocess.run(
        [sys.executable, "-c", SPARK_BLOCKS[0]],
        cwd=workdir,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=900,
        env=_activated_env(),  # the block itself sets PYSPARK_PYTHON
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
    if command.startswith("tfsql run") and not _v2_build():
        pytest.skip("the packaged scripts' COPY is the V2 build's (DuckDB 2)")
    # In README order: later commands use what earlier ones wrote (reviews.parquet).
    argv = shlex.split(command)
    stdout = subprocess.DEVNULL
    if ">" in argv:  # "... > file": redirect like a shell
        at = argv.index(">")
        stdout = open(workdir / argv[at + 1], "wb")
        argv = argv[:at]
    command_path = BIN / "tfsql"
    program = [str(command_path)] if command_path.exists() else [sys.executable, "-m", "tfsql"]
    try:
        done = subprocess.run(
            [*program, *argv[1:]],
            cwd=workdir,
            stdout=stdout,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            timeout=120,
            env=_activated_env(),
        )
    finally:
        if stdout is not subprocess.DEVNULL:
            stdout.close()
    assert done.returncode == 0, done.stderr.decode()


def test_the_duckdb_command_runs_as_written(workdir):
    if shutil.which("duckdb", path=str(BIN)) is None:
        pytest.skip("the duckdb command (pip install duckdb-cli) is not in this venv")
    section = _section("### The DuckDB extension")
    blocks = re.findall(r"```sh\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 2  # a count, then the whole prep round trip (a heredoc)
    outputs = []
    for block in blocks:  # pasted into a shell at the root, as written
        done = subprocess.run(
            ["bash", "-c", block],
            cwd=workdir,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=120,
            env=_activated_env(),
        )
        assert done.returncode == 0 and "Error" not in done.stderr, done.stderr
        outputs.append(done.stdout)
    assert "2000" in outputs[0]
    assert "rows_back" in outputs[1] and (workdir / "demo-data" / "prepped").is_dir()


def test_the_extension_options_the_readme_lists_are_exactly_the_native_ones(workdir):
    # The README lists the reading options the extension implements: exactly the SQL
    # spellings of tfsql.options.NATIVE_READ_OPTIONS. Each is accepted by plain DuckDB
    # with the extension loaded (schema := {...} reads), and an option outside the list
    # is refused as an unknown parameter.
    import duckdb

    import tfsql
    from tfsql.options import READ_OPTIONS, spellings

    section = _section("### The DuckDB extension")
    listed = re.search(r"NATIVE_READ_OPTIONS`:(.*?);", section, flags=re.S).group(1)
    names = {name for group in re.findall(r"`([\w/]+)`", listed) for name in group.split("/")}
    native = {name for name, (option, _) in spellings(READ_OPTIONS, "sql").items() if option.native}
    assert names == native
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    tfsql.load_extension(con)
    reviews = workdir / "demo-data" / "reviews"
    query = f"SELECT count(id) FROM tfrecord_scan('{reviews}', schema := {{'id': 'BIGINT'}})"
    assert con.sql(query).fetchall() == [(2000,)]
    with pytest.raises(duckdb.BinderException, match='Invalid named parameter "split_bytes"'):
        con.sql(f"SELECT * FROM tfrecord_scan('{reviews}', split_bytes := 4096)")


def test_every_output_lands_in_an_ignored_directory(workdir):
    # The README's blocks have run (above, in this module's order: Python, the tfsql
    # command, the duckdb command); nothing they wrote may be left outside demo-data/,
    # which .gitignore lists. (Last in the module.)
    assert "/demo-data/" in (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    written = sorted(entry.name for entry in workdir.iterdir() if not entry.is_symlink())
    assert written == ["demo-data"]


# --------------------------------------------------------------------------------------
# Issue 33 item 8: what a newcomer reads first
# --------------------------------------------------------------------------------------


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_the_table_of_contents_links_every_section_and_resolves():
    contents = README[README.index("**Contents:**") : README.index("## Quickstart")]
    anchors = {_anchor(h) for h in re.findall(r"^#{2,4} (.+)$", README, flags=re.M)}
    linked = re.findall(r"\]\(#([^)]+)\)", contents)
    assert set(linked) <= anchors, set(linked) - anchors
    sections = [_anchor(h) for h in re.findall(r"^## (.+)$", README, flags=re.M)]
    assert set(sections) <= set(linked), set(sections) - set(linked)
    for target in re.findall(r"\]\(#([^)]+)\)", README):  # every in-page link, not only the contents
        assert target in anchors, target


def test_the_requirements_box_says_what_is_needed_and_matches_pyproject():
    box = README[README.index("> **Requirements.**") : README.index("**Contents:**")]
    for needed in ("Python 3.10 or newer", "C compiler", "Linux", "macOS", "Java 17+", "`s3`", "`gcs`"):
        assert needed in box, needed
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'requires-python = ">=3.10"' in pyproject
    assert 's3 = ["s3fs' in pyproject and 'gcs = ["gcsfs' in pyproject


def test_extras_are_quoted_wherever_pip_installs_one():
    unquoted = re.findall(r"pip install [^\"`\n]*\w\[\w", README)
    assert unquoted == []


def test_remote_reads_are_shown_for_every_front_end():
    section = _section("## Remote files")
    for front_end in ("| Python |", "| Polars |", "| SQL (`tfsql.connect()`) |", "| Spark |", "| `tfsql` command |"):
        assert front_end in section, front_end


def test_the_duckdb_command_install_and_database_compatibility_are_stated():
    section = _section("### The DuckDB extension")
    assert "pip install duckdb-cli" in section
    assert "cannot be opened by the 1.5 command" in section


def test_benchmark_tables_live_in_docs_and_the_decimal_rule_in_format_md():
    assert "rec/s" not in README and "| dataset |" not in README
    benchmarks = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    assert "| dataset | inferred schema |" in benchmarks and "[docs/benchmarks.md](docs/benchmarks.md)" in README
    rule = "converted back to float32 (correctly rounded), must give the\n  same float32"
    assert rule in (ROOT / "docs" / "format.md").read_text(encoding="utf-8")
    assert "float32 holds the value exactly" not in README  # the other wording, which was not the rule
    assert README.count("docs/format.md#8-decimals") >= 2
