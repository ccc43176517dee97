"""Smaller points where a front end now follows its ecosystem's convention (issue 23,
findings 9 and 10)."""

from __future__ import annotations

import polars as pl
import pyarrow as pa
import pytest

import tfsql
import tfsql.polars  # noqa: F401  (pl.read_tfrecord)


@pytest.fixture(scope="module")
def ids(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("conventions") / "ids.tfrecord")
    tfsql.write_tfrecord(pa.table({"id": [1, 2], "x": [3, 4]}), path)
    return path


def test_columns_as_one_string_is_a_type_error_in_the_arrow_api(ids):
    # pyarrow: "Expected a list or a dict for 'columns'"; was KeyError: column 'i'
    message = r"columns must be a list of column names \(or a dict of expressions\), not the string 'id'; for one column write columns=\['id'\]"
    with pytest.raises(TypeError, match=message):
        tfsql.read_tfrecord(ids, columns="id")
    with pytest.raises(TypeError, match=message):
        tfsql.dataset(ids).to_table(columns="id")


def test_columns_as_one_string_is_one_column_in_polars(ids):
    # as pl.read_parquet(path, columns="id")
    assert pl.read_tfrecord(ids, columns="id").to_dict(as_series=False) == {"id": [1, 2]}


def test_a_misspelt_flag_of_a_command_prints_that_commands_usage(ids, capsys):
    from tfsql.cli import main

    assert main(["head", ids, "--nn", "3"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: tfsql head ")
    assert err.rstrip().endswith("tfsql head: error: unrecognized arguments: --nn 3")
    assert main(["--bogus"]) == 2
    assert capsys.readouterr().err.rstrip().endswith("tfsql: error: unrecognized arguments: --bogus")


def test_an_unused_param_is_a_usage_error_and_nothing_runs(tmp_path, capsys):
    from tfsql.cli import main

    script = tmp_path / "s.sql"
    script.write_text("CREATE TABLE t AS SELECT 1 AS a;\nSELECT * FROM t LIMIT ${n:-10};\n")
    assert main(["run", str(script), "--param", "nn=5", "--database", str(tmp_path / "db.duckdb")]) == 2
    err = capsys.readouterr().err
    assert (
        f"{script} does not use --param nn (no ${{nn}} or getvariable('nn') in it); check the spelling or "
        "remove it; nothing was run" in err
    )
    assert not (tmp_path / "db.duckdb").exists()  # nothing ran
    assert main(["run", str(script), "--param", "n=5"]) == 0


def test_index_says_why_it_skips_each_compressed_file(tmp_path, capsys):
    from tfsql.cli import main

    out = tmp_path / "gz"
    tfsql.write_tfrecord(pa.table({"k": [1, 2], "v": [3, 4]}), str(out), partition_by="k", compression="gzip")
    files = sorted(tfsql.dataset(str(out)).files)
    assert main(["index", str(out)]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines[:2] == [f"skipped {file}: gzip-compressed files cannot be indexed" for file in files]
    assert lines[2].startswith("indexed 0 files, 0 records")
