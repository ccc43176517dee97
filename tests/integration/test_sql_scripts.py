"""Every packaged ``tfsql/sql/*.sql`` script runs through ``tfsql run`` on the quickstart
data and writes what it says it writes; ``tfsql run NAME`` finds them from any
directory and ``tfsql run --list`` lists them (issue 33 item 7)."""

from __future__ import annotations

import collections
import os
import re
import subprocess
import sys
from pathlib import Path

import pyarrow.compute as pc
import pytest

import tfsql
from tfsql.cli import main
from tfsql.demo import reviews_table
from duckdb_copy_helpers import needs_v2_copy

ROWS = 2000
REPO = Path(__file__).resolve().parents[2]
SCRIPTS = sorted((REPO / "tfsql" / "sql").glob("*.sql"))


#: The packaged scripts write with COPY t TO from plain columns: the V2 build's (DuckDB 2);
#: the v1 build of DuckDB 1.x takes one STRUCT column, and 1.4 has no COPY functions.


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> str:
    """The quickstart data, made as a user would: ``tfsql demo DIR --rows 2000``."""
    directory = tmp_path_factory.mktemp("demo")
    assert main(["demo", str(directory), "--rows", str(ROWS), "--quiet"]) == 0
    return str(directory / "reviews")


@pytest.fixture(scope="module")
def expected():
    return reviews_table(rows=ROWS).to_pylist()


def documented_params(script: Path) -> list[str]:
    """The params listed under ``-- Params:`` in a script's header comment."""
    header = script.read_text().split("\n\n")[0]
    block = header.split("-- Params:\n", 1)[1]
    return re.findall(r"^--   (\w+)\s", block, flags=re.MULTILINE)


def params_for(script: Path, demo: str, tmp_path: Path) -> list[str]:
    values = {
        "src": demo,
        "out": str(tmp_path / "out"),
        "features": str(tmp_path / "features.parquet"),
        "parquet": str(tmp_path / "reviews.parquet"),
    }
    args = []
    for name in documented_params(script):
        if name in values:
            args += ["--param", f"{name}={values[name]}"]
    return args


def run(script: str, demo: str, tmp_path: Path, capsys) -> str:
    path = REPO / "tfsql" / "sql" / script
    status = main(["run", str(path), *params_for(path, demo, tmp_path)])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert "warning" not in captured.err
    return captured.out


def table_rows(out: str) -> list[list[str]]:
    """The cells of every data row of the box tables in ``out``."""
    rows = []
    for line in out.splitlines():
        if line.startswith("│") and not re.match(r"│\s+(varchar|int64|double|boolean|int32)\s+│", line):
            rows.append([cell.strip() for cell in line.strip("│").split("│")])
    return rows


def test_every_script_is_tested_and_documents_its_params():
    assert [s.name for s in SCRIPTS] == [
        "convert_to_tfrecord.sql",
        "deduplicate.sql",
        "inspect_dataset.sql",
        "join_parquet_features.sql",
        "rebalance_labels.sql",
        "split_train_test.sql",
    ]
    for script in SCRIPTS:
        used = set(re.findall(r"\$\{(\w+)", re.sub(r"--[^\n]*", "", script.read_text())))
        documented = documented_params(script)
        assert used <= set(documented), (script.name, used - set(documented))
        assert f"tfsql run {script.stem} " in script.read_text()


@needs_v2_copy
def test_split_train_test(demo, expected, tmp_path, capsys):
    out = run("split_train_test.sql", demo, tmp_path, capsys)
    ds = tfsql.dataset(str(tmp_path / "out"))
    counts = {name: ds.count_rows(filter=pc.field("split") == name) for name in ("train", "validation", "test")}
    assert sum(counts.values()) == ROWS
    assert 0.75 < counts["train"] / ROWS < 0.85 and counts["validation"] > 150 and counts["test"] > 150
    printed = {row[0]: int(row[1]) for row in table_rows(out)[1:]}
    assert printed == counts
    ids = tfsql.read_tfrecord(str(tmp_path / "out"), columns=["id"]).column("id").to_pylist()
    assert sorted(ids) == list(range(ROWS))
    # deterministic: the same split again
    run("split_train_test.sql", demo, tmp_path, capsys)
    again = tfsql.dataset(str(tmp_path / "out"))
    assert {name: again.count_rows(filter=pc.field("split") == name) for name in counts} == counts


@needs_v2_copy
def test_deduplicate(demo, expected, tmp_path, capsys):
    out = run("deduplicate.sql", demo, tmp_path, capsys)
    first_id = {}
    for row in sorted(expected, key=lambda r: r["id"]):
        first_id.setdefault(row["text"], row["id"])
    kept = tfsql.read_tfrecord(str(tmp_path / "out"), columns=["id"]).column("id").to_pylist()
    assert sorted(kept) == sorted(first_id.values())
    rows = table_rows(out)
    assert rows[0] == ["records", "distinct_keys", "duplicates"]
    assert rows[1] == [str(ROWS), str(len(first_id)), str(ROWS - len(first_id))]
    assert rows[-1] == [str(len(first_id))]


@needs_v2_copy
def test_rebalance_labels(demo, expected, tmp_path, capsys):
    out = run("rebalance_labels.sql", demo, tmp_path, capsys)
    before = collections.Counter(r["label"] for r in expected)
    minority = min(before.values())
    after = collections.Counter(
        tfsql.read_tfrecord(str(tmp_path / "out"), columns=["label"]).column("label").to_pylist()
    )
    assert after == {label: minority for label in range(5)}
    rows = table_rows(out)
    assert [r for r in rows if len(r) == 2 and r[0].isdigit()] == (
        [[str(k), str(before[k])] for k in range(5)] + [[str(k), str(minority)] for k in range(5)]
    )


@needs_v2_copy
def test_join_parquet_features(demo, expected, tmp_path, capsys):
    out = run("join_parquet_features.sql", demo, tmp_path, capsys)
    assert (tmp_path / "features.parquet").exists()
    joined = tfsql.read_tfrecord(str(tmp_path / "out")).to_pylist()
    assert len(joined) == ROWS
    by_id = {r["id"]: r for r in expected}
    for row in joined:
        assert row["text_chars"] == len(by_id[row["id"]]["text"])
        assert row["n_tags"] == len(by_id[row["id"]]["tags"])
        norm = sum(v * v for v in by_id[row["id"]]["emb"]) ** 0.5
        assert row["emb_norm"] == pytest.approx(norm, rel=1e-5)
    assert "│ emb_norm    │ DOUBLE      │" in out  # as written (the column description)


@needs_v2_copy
def test_convert_to_tfrecord(demo, tmp_path, capsys):
    out = run("convert_to_tfrecord.sql", demo, tmp_path, capsys)
    assert table_rows(out)[1] == [str(ROWS), str(ROWS), "0"]
    ds = tfsql.dataset(str(tmp_path / "out"))
    assert ds.partition_schema.names == ["split", "label"]
    assert all(f.endswith(".tfrecord.gz") for f in ds.files)
    assert all(re.search(r"/split=(train|validation|test)/label=[0-4]/[^/]+\.tfrecord\.gz$", f) for f in ds.files)
    assert ds.count_rows() == ROWS


def test_inspect_dataset(demo, expected, tmp_path, capsys):
    out = run("inspect_dataset.sql", demo, tmp_path, capsys)
    assert "│ emb         │ FLOAT[]     │" in out  # DESCRIBE
    assert "null_percentage" in out  # SUMMARIZE
    no_tags = sum(1 for r in expected if not r["tags"])
    assert table_rows(out)[-1] == ["16", "16", str(no_tags), "3"]


@needs_v2_copy
def test_a_script_runs_in_a_real_subprocess(demo, tmp_path):
    script = REPO / "tfsql" / "sql" / "rebalance_labels.sql"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "tfsql",
            "run",
            str(script),
            "--param",
            f"src={demo}",
            "--param",
            f"out={tmp_path / 'balanced'}",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stderr
    assert f"ran 3 statements of {script}" in done.stderr
    assert tfsql.dataset(str(tmp_path / "balanced")).count_rows() == 5 * min(
        collections.Counter(r["label"] for r in reviews_table(rows=ROWS).to_pylist()).values()
    )


@needs_v2_copy
@pytest.mark.parametrize("spelling", ["rebalance_labels", "rebalance_labels.sql", "sql/rebalance_labels.sql"])
def test_a_packaged_script_runs_by_name_from_any_directory(demo, tmp_path, spelling):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-m", "tfsql", "run", spelling, "--param", f"src={demo}", "--param", "out=balanced"],
        capture_output=True,
        text=True,
        env=env,
        cwd=elsewhere,
    )
    assert done.returncode == 0, done.stderr
    assert tfsql.dataset(str(elsewhere / "balanced")).count_rows() > 0
    assert sorted(p.name for p in elsewhere.iterdir()) == ["balanced"]


def test_run_list_names_every_packaged_script(capsys):
    assert main(["run", "--list"]) == 0
    out = capsys.readouterr().out
    listed = [line.split()[0] for line in out.splitlines()[: len(SCRIPTS)]]
    assert listed == [s.stem for s in SCRIPTS]
    assert (
        "split_train_test       Split a dataset into train / validation / test (80 / 10 / 10) by a hash of its id."
        in out
    )


def test_run_of_an_unknown_name_lists_the_scripts(capsys):
    assert main(["run", "split_train"]) == 2
    err = capsys.readouterr().err
    assert (
        "no such SQL script: split_train (neither a file nor a script shipped with tfsql: convert_to_tfrecord," in err
    )


def test_demo_writes_an_uncompressed_indexed_copy(tmp_path, capsys):
    assert main(["demo", str(tmp_path), "--rows", "600", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert f"tfsql run split_train_test --param src={tmp_path / 'reviews'}" in out
    plain = tfsql.dataset(str(tmp_path / "reviews-plain"))
    assert not any(f.endswith(".gz") for f in plain.files)
    for f in plain.files:
        assert os.path.exists(os.path.join(os.path.dirname(f), "." + os.path.basename(f) + ".idx"))
    assert sorted(tfsql.read_tfrecord(str(tmp_path / "reviews-plain")).column("id").to_pylist()) == list(range(600))
    assert main(["index", str(tmp_path / "reviews-plain")]) == 0
    assert "indexed 5 files, 600 records" in capsys.readouterr().err
