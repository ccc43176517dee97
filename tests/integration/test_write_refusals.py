"""Issue 33 item 2: a writer refuses a column it cannot store faithfully, naming the
column and the fix, and leaves the target as it was (Polars ``Object`` columns used to be
written as the objects' memory addresses)."""

from __future__ import annotations

import polars as pl
import pyarrow as pa
import pytest

import tfsql

OBJECTS = pl.DataFrame({"id": [1, 2], "o": pl.Series([object(), object()], dtype=pl.Object)})
OBJECT_MESSAGE = (
    "column 'o' holds Python objects (Polars Object), which no TFRecord feature can store: convert it "
    "first, e.g. pl.col('o').map_elements(str, return_dtype=pl.String) for their text or "
    "map_elements(pickle.dumps, return_dtype=pl.Binary) for their bytes, or drop it"
)


@pytest.mark.parametrize(
    "write",
    [
        lambda df, out: df.tfrecord.write(out),
        lambda df, out: df.lazy().tfrecord.sink(out),
        lambda df, out: df.tfrecord.write(out + ".tfrecord"),
    ],
    ids=["write", "sink", "one-file"],
)
def test_polars_object_column_is_refused(tmp_path, write):
    out = str(tmp_path / "out")
    with pytest.raises(tfsql.SchemaError) as info:
        write(OBJECTS, out)
    assert str(info.value) == OBJECT_MESSAGE
    assert info.value.feature == "o"
    assert list(tmp_path.iterdir()) == []  # nothing written


@pytest.mark.parametrize(
    ("column", "message"),
    [
        (
            pa.array([{"a": 1}]),
            "column 'c': Arrow type struct<a: int64> has no TFRecord feature representation",
        ),
        (
            pa.array([pa.scalar((1, 2, 3), pa.month_day_nano_interval())]),
            "column 'c': Arrow type month_day_nano_interval has no TFRecord feature representation",
        ),
    ],
    ids=["struct", "interval"],
)
def test_types_no_kind_holds_are_refused_naming_the_column(tmp_path, column, message):
    with pytest.raises(tfsql.SchemaError) as info:
        tfsql.write_tfrecord(pa.table({"c": column}), str(tmp_path / "out"))
    assert str(info.value).startswith(message)
    assert info.value.feature == "c"
    assert list(tmp_path.iterdir()) == []


def test_polars_frame_given_to_write_tfrecord_is_checked_too(tmp_path):
    with pytest.raises(tfsql.SchemaError, match="column 'o' holds Python objects"):
        tfsql.write_tfrecord(OBJECTS, str(tmp_path / "out"))
    assert list(tmp_path.iterdir()) == []
