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
