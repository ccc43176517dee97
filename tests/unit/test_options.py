"""Every front end accepts every option `tfsql.options` marks for it, with the same meaning.

Each reading option is given, in each front end's spelling, a value different from its
default (from SAMPLES); the read must succeed and, where the front end hands options to
`tfsql.dataset`, arrive as the same Python value. Adding an option to the spec without a
sample here, or without its front ends accepting it, fails this module.
"""

from __future__ import annotations

import inspect

import pyarrow as pa
import pytest

import tfsql
from tfsql.options import READ_OPTIONS, WRITE_OPTIONS, ReadOptions, WriteOptions, from_text

# option -> (Python value, text as a Spark option or CLI argument, SQL literal)
READ_SAMPLES: dict[str, tuple] = {
    "schema": ({"x": pa.int64()}, None, "{'x': 'BIGINT'}"),
    "record_type": ("example", "Example", "'example'"),
    "compression": (None, "none", "'none'"),
    "verify_checksums": (False, "false", "false"),
    "on_corrupt": ("skip", "skip", "'skip'"),
    "hive_partitioning": (True, "true", "true"),
    "hive_schema": ({"p": pa.int32()}, None, "{'p': 'INTEGER'}"),
    "include_file_paths": ("fname", "fname", "'fname'"),
    "infer_sample": (10, "10", "10"),
    "infer_files": (2, "2", "2"),
    "infer_bytes": (1000, "1000", "1000"),
    "lists": ("always", "always", "'always'"),
    "missing_columns": ("insert", "insert", "'insert'"),
    "filesystem": (None, None, None),
    "glob": (False, "false", "false"),
    "hidden_file_prefix": (("zz_",), "zz_", "'zz_'"),
    "batch_size": (2, "2", "2"),
    "batch_bytes": (1 << 20, "1048576", "1048576"),
    "threads": (1, "1", "1"),
    "max_record_bytes": (1 << 20, "1048576", "1048576"),
    "split_bytes": (1 << 20, "1048576", "1048576"),
    "progress": (None, None, None),
}

# SQL spellings whose literal differs from the option's main one
SQL_LITERALS = {
    "ignore_errors": ("true", "skip"),
    "filename": ("'fname'", "fname"),
    "sample_size": ("10", 10),
    "columns": ("{'x': 'BIGINT'}", None),
}

# Native spellings whose literal differs (the extension reads hive_types VARCHAR only)
NATIVE_SQL_LITERALS = {"hive_types": "{'p': 'VARCHAR'}"}

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


def test_every_option_has_a_sample():
    assert set(READ_SAMPLES) == set(READ_OPTIONS)
    assert set(WRITE_SAMPLES) == set(WRITE_OPTIONS)


def test_option_types_check_their_values():
    assert ReadOptions(**{name: s[0] for name, s in READ_SAMPLES.items()}).threads == 1
    with pytest.raises(ValueError, match="threads must be a positive integer, not 0"):
        ReadOptions(threads=0)
    assert WriteOptions(compression="GZIP").compression == "gzip"
    with pytest.raises(ValueError, match="compression_level must be an integer from 0 to 9, not 10"):
        WriteOptions(compression_level=10)


@pytest.mark.parametrize("name", [n for n, o in READ_OPTIONS.items() if o.python])
def test_python_dataset_accepts(name, source):
    assert name in inspect.signature(tfsql.dataset).parameters
    table = tfsql.dataset(source, **{name: READ_SAMPLES[name][0]}).to_table()
    assert table.num_rows == 3


@pytest.mark.parametrize("name", [n for n, o in READ_OPTIONS.items() if o.polars])
def test_polars_scan_accepts(name, source):
    import tfsql.polars

    for function in (tfsql.polars.scan_tfrecord, tfsql.polars.read_tfrecord):
        assert name in inspect.signature(function).parameters, function.__name__
    frame = tfsql.polars.scan_tfrecord(source, **{name: READ_SAMPLES[name][0]}).collect()
    assert frame.height == 3


def _sql_cases(native: bool):
    for name, option in READ_OPTIONS.items():
        if native and not option.native:
            continue
        for spelling in option.sql:
            literal = SQL_LITERALS.get(spelling.name, (READ_SAMPLES[name][2],))[0]
            if native:
                literal = NATIVE_SQL_LITERALS.get(spelling.name, literal)
            yield pytest.param(spelling.name, literal, id=spelling.name)


@pytest.mark.parametrize("parameter,literal", list(_sql_cases(native=False)))
def test_sql_tfrecord_scan_accepts(parameter, literal, source):
    con = tfsql.connect()
    assert con.sql(f"SELECT count(*) FROM tfrecord_scan('{source}', {parameter} := {literal})").fetchall() == [(3,)]


@pytest.mark.parametrize("parameter,literal", list(_sql_cases(native=True)))
def test_native_extension_accepts(parameter, literal, source):
    import duckdb

    if tfsql.duckdb_extension_path() is None:
        pytest.skip("the DuckDB extension was not built")
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    tfsql.load_extension(con)
    assert con.sql(f"SELECT count(*) FROM tfrecord_scan('{source}', {parameter} := {literal})").fetchall() == [(3,)]


@pytest.mark.parametrize(
    "name,spelling", [pytest.param(n, s, id=s.name) for n, o in READ_OPTIONS.items() for s in o.spark]
)
def test_spark_read_options(name, spelling):
    pytest.importorskip("pyspark")
    import tfsql.spark

    text = READ_SAMPLES[name][1]
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
    value, text, _ = READ_SAMPLES[name]
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
        assert got[name] == value


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
    out = tmp_path / "out"
    con = tfsql.connect()
    query = "SELECT range AS x, range % 2 AS p, 'train' AS split FROM range(4)"
    con.execute(f"COPY ({query}) TO '{out}' (FORMAT tfrecord, {option} {literal})")
    assert tfsql.dataset(str(out)).count_rows() == 4


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
