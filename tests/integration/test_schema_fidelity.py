"""Issue 13: non-nullable schemas, same-name SequenceExample features, tensor columns,
exact decimals and the hints for records that are not Examples, through the Python API,
Polars, DuckDB and the CLI (Spark: tests/integration/test_spark.py)."""

from __future__ import annotations

import decimal
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tfrecord_files import (
    NO_KIND,
    example,
    sequence_example,
    write_examples,
    write_records,
)
from wire import ld

import tfsql
from tfsql._proto import SequenceExample
from tfsql.errors import SchemaError

D = decimal.Decimal
POLARS_ERROR = (SchemaError, pl.exceptions.ComputeError)


REPO = Path(__file__).resolve().parents[2]


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(
        [sys.executable, "-m", "tfsql", *args], cwd=cwd, capture_output=True, text=True, env=env, check=False
    )


# --------------------------------------------------------------------------- non-nullable


@pytest.fixture
def xs(tmp_path):
    return write_examples(tmp_path / "x.tfrecord", [{"x": 1, "y": "a"}, {"x": 2, "y": "b"}, {"x": 3}])


def test_non_nullable_field_reads_and_keeps_nullable_false(xs):
    schema = pa.schema([pa.field("x", pa.int64(), nullable=False), pa.field("y", pa.string())])
    table = tfsql.read_tfrecord(xs, schema=schema)
    assert table.schema == schema
    assert table.schema.field("x").nullable is False
    assert table.to_pydict() == {"x": [1, 2, 3], "y": ["a", "b", None]}


def test_non_nullable_schema_from_parquet(xs, tmp_path):
    source = pa.table({"x": pa.array([7], pa.int32())}, schema=pa.schema([pa.field("x", pa.int32(), nullable=False)]))
    pq.write_table(source, tmp_path / "s.parquet")
    schema = pq.read_schema(tmp_path / "s.parquet")  # carries schema metadata too
    table = tfsql.read_tfrecord(xs, schema=schema)
    assert table.column("x").to_pylist() == [1, 2, 3]
    assert table.schema.field("x") == pa.field("x", pa.int32(), nullable=False)


def test_non_nullable_missing_feature_names_feature_file_and_record(xs):
    schema = pa.schema([pa.field("y", pa.string(), nullable=False)])
    with pytest.raises(
        SchemaError, match=r"feature 'y' has no value in .*x\.tfrecord, record 2 .*not nullable"
    ) as info:
        tfsql.read_tfrecord(xs, schema=schema)
    assert (info.value.feature, info.value.record_index) == ("y", 2)


def test_non_nullable_no_kind_and_empty_scalar_are_errors_but_empty_list_is_a_value(tmp_path):
    path = write_examples(tmp_path / "k.tfrecord", [{"a": 1, "l": (), "n": 1}, {"a": NO_KIND, "l": [1], "n": ()}])
    with pytest.raises(SchemaError, match=r"feature 'a' has no value in .*, record 1"):
        tfsql.read_tfrecord(path, schema=pa.schema([pa.field("a", pa.int64(), nullable=False)]))
    with pytest.raises(SchemaError, match=r"feature 'n' has no value in .*, record 1"):
        tfsql.read_tfrecord(path, schema=pa.schema([pa.field("n", pa.int64(), nullable=False)]))
    lists = tfsql.read_tfrecord(path, schema=pa.schema([pa.field("l", pa.list_(pa.int64()), nullable=False)]))
    assert lists.column("l").to_pylist() == [[], [1]]


def test_non_nullable_polars_and_duckdb(xs):
    schema = pa.schema([pa.field("x", pa.int64(), nullable=False)])
    assert tfsql.scan_tfrecord(xs, schema=schema, extra_columns="ignore").collect()["x"].to_list() == [1, 2, 3]
    with pytest.raises(POLARS_ERROR, match="feature 'y' has no value"):
        tfsql.scan_tfrecord(
            xs, schema=pa.schema([pa.field("y", pa.string(), nullable=False)]), extra_columns="ignore"
        ).collect()
    # in DuckDB through a registered dataset (the extension's schema := takes no NOT NULL yet)
    con = tfsql.connect()
    con.register("xs", tfsql.dataset(xs, schema=schema))
    assert con.sql("SELECT x FROM xs").fetchall() == [(1,), (2,), (3,)]
    con.register("ys", tfsql.dataset(xs, schema=pa.schema([pa.field("y", pa.string(), nullable=False)])))
    with pytest.raises(Exception, match="feature 'y' has no value in .*record 2"):
        con.sql("SELECT * FROM ys").fetchall()


# --------------------------------------------------------------------------- same-name SequenceExample


@pytest.fixture
def same_name(tmp_path):
    """tensorflow/transform's test data shape: a context feature and a feature list both
    named ``int_feature``."""
    return write_records(
        tmp_path / "same.tfrecord",
        [
            sequence_example(
                {"int_feature": 0, "label": 1.5}, {"int_feature": [[0], [1, 2]], "float_feature": [[0.5]]}
            ),
            sequence_example({"int_feature": 1, "label": 2.5}, {"int_feature": [[3]], "float_feature": [[1.5], [2.5]]}),
        ],
    )


SAME_NAME_ROWS = [
    {"int_feature": 0, "label": 1.5, "int_feature__feature_list": [[0], [1, 2]], "float_feature": [[0.5]]},
    {"int_feature": 1, "label": 2.5, "int_feature__feature_list": [[3]], "float_feature": [[1.5], [2.5]]},
]


def _rows(table_or_frame) -> list[dict]:
    rows = table_or_frame.to_dicts() if isinstance(table_or_frame, pl.DataFrame) else table_or_frame.to_pylist()
    return [dict(sorted(r.items())) for r in rows]


def test_same_name_reads_both_in_one_call(same_name):
    table = tfsql.read_tfrecord(same_name, record_type="sequence_example")
    assert table.schema.field("int_feature").type == pa.int64()
    assert table.schema.field("int_feature__feature_list").type == pa.list_(pa.list_(pa.int64()))
    assert _rows(table) == _rows(pa.Table.from_pylist(SAME_NAME_ROWS))


def test_same_name_projection_and_user_schema(same_name):
    ds = tfsql.dataset(same_name, record_type="sequence_example")
    assert ds.to_table(columns=["int_feature__feature_list"]).column(0).to_pylist() == [[[0], [1, 2]], [[3]]]
    schema = {"int_feature": pa.int8(), "int_feature__feature_list": pa.list_(pa.list_(pa.int16()))}
    table = tfsql.read_tfrecord(same_name, record_type="sequence_example", schema=schema)
    assert table.to_pydict() == {"int_feature": [0, 1], "int_feature__feature_list": [[[0], [1, 2]], [[3]]]}
    # without the context column, the plain name reads the feature list
    only_list = tfsql.read_tfrecord(
        same_name, record_type="sequence_example", schema={"int_feature": pa.list_(pa.list_(pa.int64()))}
    )
    assert only_list.column(0).to_pylist() == [[[0], [1, 2]], [[3]]]


def test_same_name_polars_duckdb(same_name):
    frame = tfsql.scan_tfrecord(same_name, record_type="sequence_example")
    assert _rows(frame.collect()) == _rows(pa.Table.from_pylist(SAME_NAME_ROWS))
    assert frame.select("int_feature__feature_list").collect().to_series().to_list() == [[[0], [1, 2]], [[3]]]
    assert frame.select(pl.len()).collect().item() == 2
    con = tfsql.connect()
    scan = f"tfrecord_scan('{same_name}', record_type := 'sequence_example')"
    assert con.sql(f"SELECT int_feature, int_feature__feature_list FROM {scan} ORDER BY 1").fetchall() == [
        (0, [[0], [1, 2]]),
        (1, [[3]]),
    ]
    assert con.sql(f"SELECT count(*) FROM {scan}").fetchall() == [(2,)]


def test_same_name_cli_schema_and_head(same_name, tmp_path):
    out = cli("schema", str(same_name), "--record-type", "sequence_example", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    columns = {c["name"]: (c["type"], c["feature"]) for c in json.loads(out.stdout)["columns"]}
    assert columns["int_feature"] == ("int64", "int64_list")
    assert columns["int_feature__feature_list"] == ("list<list<int64>>", "feature_list of int64_list")
    out = cli("head", str(same_name), "--record-type", "sequence_example", "-n", "1", "-f", "json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.splitlines()[0])["int_feature__feature_list"] == [[0], [1, 2]]


def test_same_name_written_back_unchanged(same_name, tmp_path):
    table = tfsql.read_tfrecord(same_name, record_type="sequence_example")
    tfsql.write_tfrecord(table, tmp_path / "out", record_type="sequence_example")
    raw = tfsql.read_tfrecord(tmp_path / "out", record_type="bytes").column(0)
    first = SequenceExample.FromString(raw[0].as_py())
    assert set(first.context.feature) == {"int_feature", "label"}
    assert set(first.feature_lists.feature_list) == {"int_feature", "float_feature"}
    assert [list(f.int64_list.value) for f in first.feature_lists.feature_list["int_feature"].feature] == [[0], [1, 2]]
    assert _rows(tfsql.read_tfrecord(tmp_path / "out", record_type="sequence_example")) == _rows(table)


def test_literal_suffix_beside_context_is_ambiguous(tmp_path):
    path = write_records(tmp_path / "amb.tfrecord", [sequence_example({"a": 1}, {"a__feature_list": [[1]]})])
    with pytest.raises(SchemaError, match="'a__feature_list' is taken"):
        tfsql.read_tfrecord(path, record_type="sequence_example")


# --------------------------------------------------------------------------- CLI --schema


def test_cli_schema_option_for_schema_head_convert(xs, tmp_path):
    out = cli("schema", str(xs), "--schema", "x INTEGER NOT NULL, y VARCHAR", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert [(c["name"], c["type"]) for c in json.loads(out.stdout)["columns"]] == [
        ("x", "int32 not null"),
        ("y", "string"),
    ]
    out = cli("head", str(xs), "--schema", "y VARCHAR NOT NULL", "-f", "json", cwd=tmp_path)
    assert out.returncode == 1 and "feature 'y' has no value" in out.stderr and "record 2" in out.stderr
    out = cli("convert", str(xs), str(tmp_path / "x.parquet"), "--schema", "x TINYINT", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert pq.read_table(tmp_path / "x.parquet").to_pydict() == {"x": [1, 2, 3]}
    out = cli("head", str(xs), "--schema", str(tmp_path / "x.parquet"), "-f", "json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert [json.loads(line) for line in out.stdout.splitlines()] == [{"x": 1}, {"x": 2}, {"x": 3}]
    out = cli("schema", str(xs), "--schema", "x BIGINT[", cwd=tmp_path)
    assert out.returncode == 2 and "--schema" in out.stderr


# --------------------------------------------------------------------------- tensors


def test_fixed_shape_tensor_writes_flat_row_major_and_reads_back(tmp_path):
    values = np.arange(24, dtype=np.int64).reshape(3, 2, 4) - 5
    tensor = pa.FixedShapeTensorArray.from_numpy_ndarray(values)
    nested = pa.array(
        [[[1.5, 2.5], [3.5, 4.5]], None, [[5.5, 6.5], [7.5, 8.5]]], pa.list_(pa.list_(pa.float32(), 2), 2)
    )
    table = pa.table({"t": tensor, "n": nested})
    tfsql.write_tfrecord(table, tmp_path / "out")
    assert tfsql.read_tfrecord(tmp_path / "out").equals(table)  # the column description's types
    (part,) = (tmp_path / "out").glob("*.tfrecord")
    flat = tfsql.read_tfrecord(part)  # a file named directly: its records, flat
    assert flat.to_pydict() == {
        "t": [list(range(-5, 3)), list(range(3, 11)), list(range(11, 19))],
        "n": [[1.5, 2.5, 3.5, 4.5], None, [5.5, 6.5, 7.5, 8.5]],
    }
    back = tfsql.read_tfrecord(tmp_path / "out", schema=table.schema)
    assert back.equals(table)
    np.testing.assert_array_equal(back.column("t").combine_chunks().to_numpy_ndarray(), values)
    sliced = pa.table({"t": tensor.slice(1, 2)})
    tfsql.write_tfrecord(sliced, tmp_path / "sliced")
    assert tfsql.read_tfrecord(tmp_path / "sliced", schema=sliced.schema).equals(sliced)


def test_tensor_shape_mismatch_is_a_clear_error(tmp_path):
    tfsql.write_tfrecord(
        pa.table({"t": pa.FixedShapeTensorArray.from_numpy_ndarray(np.zeros((2, 2, 2)))}), tmp_path / "o"
    )
    with pytest.raises(
        SchemaError,
        match=r"feature 't' in .*, record 0 holds 4 values, but the requested tensor "
        r"shape \(3 x 2\) needs exactly 6",
    ):
        tfsql.read_tfrecord(tmp_path / "o", schema={"t": pa.fixed_shape_tensor(pa.float64(), [3, 2])})


def test_tensor_polars_array_and_cli(tmp_path):
    tfsql.write_tfrecord(
        pa.table({"t": pa.FixedShapeTensorArray.from_numpy_ndarray(np.arange(8).reshape(2, 2, 2))}), tmp_path / "o"
    )
    frame = tfsql.scan_tfrecord(tmp_path / "o", schema={"t": pl.Array(pl.Int64, (2, 2))}).collect()
    assert frame["t"].to_list() == [[[0, 1], [2, 3]], [[4, 5], [6, 7]]]
    out = cli("head", str(tmp_path / "o"), "--schema", "t BIGINT[2][2]", "-n", "1", "-f", "json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"t": [[0, 1], [2, 3]]}


def test_null_inside_a_tensor_and_variable_shape_are_errors(tmp_path):
    bad = pa.table(
        {"n": pa.array([[[1.0, 2.0], [3.0, 4.0]], [[1.0, 2.0], None]], pa.list_(pa.list_(pa.float32(), 2), 2))}
    )
    with pytest.raises(SchemaError, match="column 'n' has a null inside its tensor at row 1"):
        tfsql.write_tfrecord(bad, tmp_path / "bad")
    assert not (tmp_path / "bad").exists()

    class VariableShape(pa.ExtensionType):
        def __init__(self):
            super().__init__(
                pa.struct([("data", pa.list_(pa.int64())), ("shape", pa.list_(pa.int32(), 1))]),
                "arrow.variable_shape_tensor",
            )

        def __arrow_ext_serialize__(self):
            return b""

        @classmethod
        def __arrow_ext_deserialize__(cls, storage_type, serialized):
            return cls()

    storage = pa.array([{"data": [1, 2], "shape": [2]}], VariableShape().storage_type)
    table = pa.table({"v": pa.ExtensionArray.from_storage(VariableShape(), storage)})
    with pytest.raises(SchemaError, match="variable-shape tensor.*write the values flattened"):
        tfsql.write_tfrecord(table, tmp_path / "v")


# --------------------------------------------------------------------------- decimals


@pytest.fixture
def floats(tmp_path):
    return write_examples(tmp_path / "f.tfrecord", [{"f": 2.5}, {"f": 0.1}, {"f": -7.25}])


def test_decimal_read_is_exact_or_an_error(floats):
    table = tfsql.read_tfrecord(floats, schema={"f": pa.decimal128(10, 2)})
    assert table.column("f").to_pylist() == [D("2.50"), D("0.10"), D("-7.25")]
    with pytest.raises(
        SchemaError,
        match=r"feature 'f' in .*f\.tfrecord, record 0 holds 2\.5, which "
        r"decimal128\(10, 0\) cannot hold exactly \(it would read as 2\)",
    ):
        tfsql.read_tfrecord(floats, schema={"f": pa.decimal128(10, 0)})
    with pytest.raises(SchemaError, match=r"record 2 holds -7\.25, which decimal128\(10, 1\)"):
        tfsql.read_tfrecord(floats, schema={"f": pa.list_(pa.decimal128(10, 1))})


def test_decimal_same_rule_in_polars_and_duckdb(floats):
    assert tfsql.scan_tfrecord(floats, schema={"f": pl.Decimal(10, 2)}).collect()["f"].to_list() == [
        D("2.50"),
        D("0.10"),
        D("-7.25"),
    ]
    with pytest.raises(POLARS_ERROR, match=r"holds 2\.5, which decimal128\(10, 0\) cannot hold exactly"):
        tfsql.scan_tfrecord(floats, schema={"f": pl.Decimal(10, 0)}).collect()
    # in DuckDB through a registered dataset (the extension's schema := reads no DECIMAL yet)
    con = tfsql.connect()
    con.register("f2", tfsql.dataset(floats, schema={"f": pa.decimal128(10, 2)}))
    assert con.sql("SELECT f FROM f2").fetchall() == [(D("2.50"),), (D("0.10"),), (D("-7.25"),)]
    con.register("f0", tfsql.dataset(floats, schema={"f": pa.decimal128(10, 0)}))
    with pytest.raises(Exception, match=r"holds 2\.5, which decimal128\(10, 0\) cannot hold exactly"):
        con.sql("SELECT f FROM f0").fetchall()


def test_float16_read_is_exact_or_an_error(tmp_path):
    path = write_examples(tmp_path / "h.tfrecord", [{"f": 0.5}, {"f": 0.1}])
    with pytest.raises(SchemaError, match=r"record 1 holds 0\.10000000149011612, which halffloat cannot hold exactly"):
        tfsql.read_tfrecord(path, schema={"f": pa.float16()})


def test_decimal_write_is_exact_or_an_error(tmp_path):
    table = pa.table({"d": pa.array([D("2.50"), D("0.10"), None, D("-7.25")], pa.decimal128(10, 2))})
    tfsql.write_tfrecord(table, tmp_path / "ok")
    assert tfsql.read_tfrecord(tmp_path / "ok", schema=table.schema).equals(table)
    lossy = pa.table({"d": pa.array([[D("1")], [D("1"), D("123456789.12")]], pa.list_(pa.decimal128(12, 2)))})
    with pytest.raises(
        SchemaError,
        match=r"column 'd' row 1 holds the decimal 123456789\.12, which a float_list "
        r"\(float32\) cannot store exactly \(it would read back as 123456792\.0\).*"
        r"cast the column to string",
    ):
        tfsql.write_tfrecord(lossy, tmp_path / "lossy")
    assert not (tmp_path / "lossy").exists()
    as_text = lossy.set_column(0, "d", lossy.column("d").cast(pa.list_(pa.string())))
    tfsql.write_tfrecord(as_text, tmp_path / "text")
    assert tfsql.read_tfrecord(tmp_path / "text").column("d").to_pylist() == [["1.00"], ["1.00", "123456789.12"]]


# --------------------------------------------------------------------------- hints


def _elwc(i: int) -> bytes:
    """A tensorflow_ranking ExampleListWithContext: examples (field 1) and context (field 2)."""
    context = example({"query_tokens": ["a", "b"], "qid": i})
    examples = [example({"doc_tokens": ["x"], "relevance": 1}), example({"doc_tokens": ["y", "z"], "relevance": 0})]
    return b"".join(ld(1, e) for e in examples) + ld(2, context)


@pytest.mark.parametrize("record_type", ["example", "sequence_example"])
def test_records_that_are_not_examples_advise_bytes(tmp_path, record_type):
    path = write_records(tmp_path / "elwc.tfrecord", [_elwc(i) for i in range(3)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = tfsql.read_tfrecord(path, record_type=record_type)
    assert table.num_columns == 0 and table.num_rows == 3
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1, messages
    assert "record_type='bytes'" in messages[0] and "ExampleListWithContext" in messages[0]
    assert "sequence_example" not in messages[0]
    raw = tfsql.read_tfrecord(path, record_type="bytes")
    assert raw.column("record").to_pylist() == [_elwc(i) for i in range(3)]


def test_kindless_feature_hint_says_how_to_keep_it(tmp_path):
    path = write_examples(tmp_path / "k.tfrecord", [{"a": 1, "k": NO_KIND}, {"a": 2}])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = tfsql.read_tfrecord(path)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1, messages  # once, not again by the scan as "not in the sample"
    assert "feature 'k' never has a kind set" in messages[0]
    assert "carries no values" in messages[0] and "name it with a type in schema=" in messages[0]
    assert "infer_sample=None" not in messages[0]
    assert table.column_names == ["a"]
    kept = tfsql.read_tfrecord(path, schema={"a": pa.int64(), "k": pa.int64()})
    assert kept.to_pydict() == {"a": [1, 2], "k": [None, None]}


def test_count_on_featureless_files_in_duckdb_and_polars(tmp_path):
    path = write_records(tmp_path / "e.tfrecord", [example({}), example({}), example({})])
    # the extension gives such files the filename column (DuckDB scans no table without columns)
    con = tfsql.connect()
    assert con.sql(f"SELECT count(*) FROM tfrecord_scan('{path}')").fetchall() == [(3,)]
    files = con.sql(f"SELECT DISTINCT filename FROM tfrecord_scan('{path}')").fetchall()
    assert files == [(str(path),)]
    with pytest.warns(UserWarning, match="record_type='bytes'"):
        frame = tfsql.scan_tfrecord(path).select(pl.len()).collect()
    assert frame.item() == 3


# --------------------------------------------------------------------------- date and time columns read with a schema


def test_date32_and_time32_columns_read_back_with_a_schema(tmp_path):
    days = pa.array([0, 19000], pa.int32()).cast(pa.date32())
    table = pa.table({"d": days, "ld": pa.array([[0, 1], []], pa.list_(pa.int32())).cast(pa.list_(pa.date32()))})
    tfsql.write_tfrecord(table, tmp_path / "out")
    schema = {"d": pa.date32(), "ld": pa.list_(pa.date32())}
    assert tfsql.read_tfrecord(tmp_path / "out", schema=schema).equals(table)
    got = tfsql.read_tfrecord(tmp_path / "out", schema={"d": pa.time32("s")})
    assert got.column("d").to_pylist() == pa.array([0, 19000], pa.int32()).cast(pa.time32("s")).to_pylist()
    lf = pl.scan_tfrecord(tmp_path / "out", schema={"d": pl.Date}, extra_columns="ignore")
    assert lf.collect()["d"].cast(pl.Int32).to_list() == [0, 19000]


def test_date32_schema_on_out_of_range_int64_names_the_record(tmp_path):
    write_examples(tmp_path / "a.tfrecord", [{"d": 1}, {"d": 2**40}])
    with pytest.raises(
        tfsql.SchemaError,
        match=r"feature 'd' in .*a.tfrecord, record 1 does not fit the requested "
        r"type date32\[day\]",
    ):
        tfsql.read_tfrecord(tmp_path, schema={"d": pa.date32()})
