"""Every front end accepts every option `tfsql.options` marks for it, with the same meaning.

Reading options: `tests/integration/test_differential_frontends.py` reads every option's
samples (its `SAMPLES`, the one place a reading option gets a sample) in every spelling
through DuckDB with the extension, `tfsql.connect()`, `tfsql.read_tfrecord` and
`pl.scan_tfrecord`, and requires the same rows or the same refusal. This module checks
the rest from the same samples: the keyword parameters of `tfsql.dataset`,
`pl.scan_tfrecord` and `pl.read_tfrecord` (generated from the spec), the Spark option
names and the CLI flags, which must give the option the sample's value.

Writing options: each is given, in each front end's spelling, a value different from its
default (from WRITE_SAMPLES); the write must succeed. Adding a writing option to the spec
without a sample here fails this module.
"""

from __future__ import annotations

import inspect
from typing import Any

import pyarrow as pa
import pytest

import tfsql
from tfsql.options import READ_OPTIONS, WRITE_OPTIONS, ReadOptions, WriteOptions, from_text
from option_samples import first_values


#: option -> its first sample's value in the differential test
READ_VALUES: dict[str, Any] = first_values()


def _as_text(value: Any) -> str:
    """A sample value as a Spark option or a CLI argument spells it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "all"
    if isinstance(value, (list, tuple)):
        return ",".join(value)
    return str(value)


WRITE_SAMPLES: dict[str, tuple] = {
    "partition_by": (("p",), "p", "(p)"),
    "record_type": ("example", "Example", "'example'"),
    "layout": (None, None, None),
    "compression": ("gzip", "gzip", "'gzip'"),
    "compression_level": (5, "5", "5"),
    "mode": ("overwrite", "overwrite", "true"),
    "max_rows_per_file": (2, "2", "2"),
    "max_bytes_per_file": (1_000_000, "1MB", "'1MB'"),
    "num_shards": (2, "2", "2"),
    "shard_prefix": ("shard", None, None),
    "filename_pattern": ("f-{i}", "f-{i}", "'f-{i}'"),
    "tfds": ("ds", "ds", "'ds'"),
    "filesystem": (None, None, None),
    "threads": (1, "1", "1"),
    "index": (True, "true", "true"),
    "max_record_bytes": (1 << 20, "1048576", "1048576"),
    "progress": (False, None, None),
}


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    root = tmp_path_factory.mktemp("options")
    tfsql.write_tfrecord(pa.table({"x": [1, 2, 3], "p": [1, 1, 1]}), str(root), partition_by=["p"])
    return str(root)


def test_every_writing_option_has_a_sample():
    assert set(WRITE_SAMPLES) == set(WRITE_OPTIONS)


def test_option_types_check_their_values():
    values = {name: value for name, value in READ_VALUES.items() if name != "filesystem"}
    assert ReadOptions(**values).threads == 1
    with pytest.raises(ValueError, match="threads must be a positive integer, not 0"):
        ReadOptions(threads=0)
    assert WriteOptions(compression="GZIP").compression == "gzip"
    with pytest.raises(ValueError, match="compression_level must be an integer from 0 to 9, not 10"):
        WriteOptions(compression_level=10)


@pytest.mark.parametrize("name", list(READ_OPTIONS))
def test_functions_taking_every_reading_option_by_name(name):
    import tfsql.polars

    option = READ_OPTIONS[name]
    default = getattr(ReadOptions(), name)
    functions = [tfsql.dataset] if option.python else []
    functions += [tfsql.polars.scan_tfrecord, tfsql.polars.read_tfrecord] if option.polars else []
    for function in functions:
        parameter = inspect.signature(function).parameters.get(name)
        assert parameter is not None, function.__name__
        if function is tfsql.dataset or not option.parquet_name:  # Polars' own for Parquet's parameters
            assert parameter.default == default, function.__name__


@pytest.mark.parametrize(
    "name,spelling", [pytest.param(n, s, id=s.name) for n, o in READ_OPTIONS.items() for s in o.spark]
)
def test_spark_read_options(name, spelling):
    pytest.importorskip("pyspark")
    import tfsql.spark

    text = _as_text(READ_VALUES[name])
    expected = from_text(READ_OPTIONS[name], spelling, text)
    assert tfsql.spark.dataset_options({spelling.name: text})[name] == expected


@pytest.mark.parametrize(
    "name,spelling", [pytest.param(n, s, id=s.name) for n, o in WRITE_OPTIONS.items() for s in o.spark]
)
def test_spark_write_options(name, spelling):
    pytest.importorskip("pyspark")
    import tfsql.spark

    text = WRITE_SAMPLES[name][1]
    expected = from_text(WRITE_OPTIONS[name], spelling, text)
    assert tfsql.spark.writer_options({spelling.name: text})[name] == expected


@pytest.mark.parametrize("name", [n for n, o in READ_OPTIONS.items() if o.cli])
@pytest.mark.parametrize("command", ["schema", "head", "count", "verify"])
def test_cli_read_flags(command, name, source):
    from tfsql.cli import build_parser
    from tfsql.cli.options import dataset_options

    option = READ_OPTIONS[name]
    value = READ_VALUES[name]
    text = _as_text(value)
    if option.cli_value == "types":
        arguments = [command, source, option.cli, "x BIGINT"]
    elif option.cli_value == "bool":
        arguments = [command, source, option.cli if value else "--no-" + option.cli[2:]]
    else:
        arguments = [command, source, option.cli, text]
    got = dataset_options(build_parser().parse_args(arguments))
    if option.cli_value == "types":
        assert got[name] == pa.schema([pa.field("x", pa.int64())])
    else:
        assert option.validate(got[name]) == option.validate(value)


@pytest.mark.parametrize("name", [n for n, o in WRITE_OPTIONS.items() if o.cli])
def test_cli_write_flags(name, source, tmp_path):
    from tfsql.cli import build_parser
    from tfsql.cli.options import writer_options

    option = WRITE_OPTIONS[name]
    value, text, _ = WRITE_SAMPLES[name]
    given = [option.cli if value else "--no-" + option.cli[2:]] if option.cli_value == "bool" else [option.cli, text]
    args = build_parser().parse_args(["convert", source, str(tmp_path / "out"), *given])
    assert writer_options(args)[name] == value


def _copy_cases():
    for name, option in WRITE_OPTIONS.items():
        for spelling in option.sql:
            yield pytest.param(name, spelling.name, WRITE_SAMPLES[name][2], id=spelling.name)


@pytest.mark.parametrize("name,option,literal", list(_copy_cases()))
def test_sql_copy_accepts(name, option, literal, tmp_path):
    """``COPY ... (FORMAT tfrecord)`` is the extension's (V2 build: plain columns): it takes
    its own options and DuckDB's; the writer's other options are refused naming the
    writer, which takes them (`test_python_writer_accepts`)."""
    from tfsql.options import DUCKDB_COPY_OPTIONS, NATIVE_COPY_OPTIONS

    if "duckdb-v" not in tfsql.duckdb_extension_path():
        pytest.skip("COPY from plain columns is the V2 build's")
    import duckdb

    out = tmp_path / "out"
    con = tfsql.connect()
    query = "SELECT range AS x, range % 2 AS p, 'train' AS split FROM range(4)"
    statement = f"COPY ({query}) TO '{out}' (FORMAT tfrecord, {option} {literal})"
    if name in NATIVE_COPY_OPTIONS or option in DUCKDB_COPY_OPTIONS:
        con.execute(statement)
        assert tfsql.dataset(str(out)).count_rows() == 4
    else:
        # DuckDB refuses FILE_SIZE_BYTES itself for a C-API format (docs/duckdb-extension.md)
        refusal = "not implemented for" if option == "FILE_SIZE_BYTES" else r".* tfsql\.write_tfrecord"
        with pytest.raises(duckdb.BinderException, match=rf"{option} {refusal}"):
            con.execute(statement)


@pytest.mark.parametrize("name", [n for n, o in WRITE_OPTIONS.items() if o.python])
def test_python_writer_accepts(name, tmp_path):
    assert name in inspect.signature(tfsql.write_tfrecord).parameters
    table = pa.table({"x": [1, 2, 3, 4], "p": [0, 1, 0, 1], "split": ["train"] * 4})
    value = WRITE_SAMPLES[name][0]
    extra = {"num_shards": 2} if name == "shard_prefix" else {}
    tfsql.write_tfrecord(table, str(tmp_path / "out"), **{name: value}, **extra)
    assert tfsql.dataset(str(tmp_path / "out")).count_rows() == 4


@pytest.mark.parametrize("name", [n for n, o in WRITE_OPTIONS.items() if o.polars])
def test_polars_writer_accepts(name, tmp_path):
    import polars as pl

    import tfsql.polars  # noqa: F401  (registers the namespaces)

    frame = pl.DataFrame({"x": [1, 2, 3, 4], "p": [0, 1, 0, 1], "split": ["train"] * 4})
    value = WRITE_SAMPLES[name][0]
    extra = {"num_shards": 2} if name == "shard_prefix" else {}
    frame.tfrecord.write(str(tmp_path / "out"), **{name: value}, **extra)
    assert tfsql.dataset(str(tmp_path / "out")).count_rows() == 4
