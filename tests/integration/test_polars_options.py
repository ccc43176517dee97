"""``pl.scan_tfrecord`` / ``pl.read_tfrecord`` take ``pl.scan_parquet`` / ``pl.read_parquet``'s
options: a signature comparison against the installed Polars (a new Polars option fails
it until it is added or explained below), and one behaviour test per option, most of
them against Parquet holding the same rows."""

from __future__ import annotations

import functools
import inspect
from pathlib import Path

import fsspec
import polars as pl
import pytest
from fsspec.implementations.memory import MemoryFileSystem

import tfsql
import tfsql.polars as tp
import tfsql.polars.scan
import tfsql.polars.source
from tfsql.options import READ_OPTIONS, ReadOptions
from option_samples import first_values

# --------------------------------------------------------------------------------------
# The signatures
# --------------------------------------------------------------------------------------

#: Parquet options scan_tfrecord / read_tfrecord accept but cannot honour for every
#: value: only these values are accepted, anything else raises a ValueError naming why.
MEANINGLESS = {
    "parallel": "TFRecord has no row groups or columns to parallelize over: 'auto' and 'none' (one decode thread) only",
    "use_statistics": "TFRecord files carry no statistics; both values read the same",
    "decryption": "TFRecord files are not encrypted: None only",
    "use_pyarrow": "read_parquet's pyarrow path; tfsql.read_tfrecord is the Arrow reader: False only",
    "pyarrow_options": "options of pyarrow's Parquet reader: None only",
    "memory_map": "tfsql streams files: True only",
}

#: Options tfsql has and the Parquet function has not.
EXTRA = {
    # read_tfrecord: read_parquet lacks these scan_parquet options, but a TFRecord
    # read needs them (extra_columns defaults to 'raise', so a schema= naming some
    # features could not be read without it).
    "hidden_file_prefix": "scan_parquet's; read_parquet lacks it",
    "extra_columns": "scan_parquet's; read_parquet lacks it",
    "cast_options": "scan_parquet's; read_parquet lacks it",
    # TFRecord's own
    "schema_overrides": "infer the schema but force some types (as read_csv's)",
    "progress": "read_tfrecord's progress bar",
    # the reading options of tfsql.options offered to Polars (explained there)
    **{name: option.doc for name, option in READ_OPTIONS.items() if option.polars},
}

#: Parquet options with a different default, and why.
OTHER_DEFAULTS: dict[str, str] = {}


def _public(function) -> dict[str, inspect.Parameter]:
    return {n: p for n, p in inspect.signature(function).parameters.items() if not n.startswith("_")}


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [(tp.scan_tfrecord, pl.scan_parquet), (tp.read_tfrecord, pl.read_parquet)],
    ids=["scan", "read"],
)
def test_parameters_match_the_installed_parquet_reader(ours, theirs):
    mine, parquet = _public(ours), _public(theirs)
    missing = [name for name in parquet if name not in mine]
    assert missing == [], f"{theirs.__name__} options scan/read_tfrecord lacks (add or explain): {missing}"
    unexplained = [name for name in mine if name not in parquet and name not in EXTRA]
    assert unexplained == [], f"options of {ours.__name__} that {theirs.__name__} lacks, unexplained: {unexplained}"
    for name, param in parquet.items():
        if name in OTHER_DEFAULTS:
            continue
        assert mine[name].default == param.default, f"{name}: default {mine[name].default!r} != {param.default!r}"
        assert mine[name].kind == param.kind, name


def test_tfrecord_options_take_the_specs_defaults():
    defaults = ReadOptions()
    for function in (tp.scan_tfrecord, tp.read_tfrecord):
        parameters = inspect.signature(function).parameters
        for name, option in READ_OPTIONS.items():
            if option.polars:
                assert parameters[name].default == getattr(defaults, name), (function.__name__, name)
                assert parameters[name].kind is inspect.Parameter.KEYWORD_ONLY, (function.__name__, name)


#: read_tfrecord's own parameters (read_parquet's that scan_parquet lacks, and the bar);
#: scan_tfrecord's that read_tfrecord lacks.
READ_ONLY = {"columns", "use_pyarrow", "pyarrow_options", "memory_map", "progress"}
SCAN_ONLY = {"cache"}


def test_read_tfrecord_takes_scan_tfrecords_parameters():
    scan, read = _public(tp.scan_tfrecord), _public(tp.read_tfrecord)
    assert set(read) - set(scan) == READ_ONLY
    assert set(scan) - set(read) == SCAN_ONLY
    for name in set(scan) - SCAN_ONLY:
        assert (read[name].default, read[name].annotation, read[name].kind) == (
            scan[name].default,
            scan[name].annotation,
            scan[name].kind,
        ), name


@pytest.mark.parametrize("function", [tp.scan_tfrecord], ids=["scan"])
def test_every_parameter_is_documented(function):
    import re

    documented = set()
    for names in re.findall(r"^    (\w+(?:, \w+)*) :", function.__doc__, flags=re.M):
        documented.update(names.split(", "))
    assert [name for name in _public(function) if name not in documented] == []
    # the values a TFRecord option's entry lists are the spec's
    for name, option in READ_OPTIONS.items():
        if option.polars and option.choices:
            listed = re.search(rf"^    {name} : {{(.*?)}}", function.__doc__, flags=re.M)
            assert listed is not None, name
            values = [v.strip().strip('"') for v in listed.group(1).split(",")]
            assert ["none" if v == "None" else v for v in values] == list(option.choices), name


def test_pl_read_tfrecord_is_attached():
    assert pl.read_tfrecord is tp.read_tfrecord
    assert tfsql.scan_tfrecord is tp.scan_tfrecord


# --------------------------------------------------------------------------------------
# Data: the same rows as TFRecord and as Parquet
# --------------------------------------------------------------------------------------

ROWS = pl.DataFrame(
    {
        "id": [1, 2, 3, 4, 5, 6],
        "name": ["a", "b", "c", "d", "e", "f"],
        "dt": ["2024-01-01", "2024-01-01", "2024-01-02", "2024-01-02", "2024-01-03", "2024-01-03"],
    }
)


@pytest.fixture(scope="module")
def both(tmp_path_factory) -> tuple[str, str]:
    root = tmp_path_factory.mktemp("options")
    tf, pq = root / "tf", root / "pq"
    tfsql.write_tfrecord(ROWS, tf, partition_by="dt")
    for (dt,), group in ROWS.group_by("dt"):  # hive directories, the key not in the files
        (pq / f"dt={dt}").mkdir(parents=True)
        group.drop("dt").write_parquet(pq / f"dt={dt}" / "part-0.parquet")
    return str(tf), str(pq)


def _same(tf_lf: pl.LazyFrame, pq_lf: pl.LazyFrame, sort: str | None = "id") -> pl.DataFrame:
    got, want = tf_lf.collect(), pq_lf.collect()
    if sort:
        got, want = got.sort(sort), want.sort(sort)
    assert got.schema == want.schema
    assert got.to_dicts() == want.to_dicts()
    return got


# --------------------------------------------------------------------------------------
# One test per option
# --------------------------------------------------------------------------------------


def test_n_rows(both):
    tf, pq = both
    got = _same(pl.scan_tfrecord(tf, n_rows=3, schema_overrides={"id": pl.Int64}), pl.scan_parquet(pq, n_rows=3))
    assert got["id"].to_list() == [1, 2, 3]


def test_row_index_name_and_offset(both):
    tf, pq = both
    got = _same(
        pl.scan_tfrecord(tf, row_index_name="i", row_index_offset=10).filter(pl.col("id") > 4),
        pl.scan_parquet(pq, row_index_name="i", row_index_offset=10).filter(pl.col("id") > 4),
    )
    assert got.columns[0] == "i"
    assert got["i"].to_list() == [14, 15]  # numbered before the filter


def test_parallel(both, monkeypatch):
    tf, _ = both
    assert pl.scan_tfrecord(tf, parallel="none").collect().height == 6
    assert _dataset_options(monkeypatch, tf, parallel="none")["threads"] == 1
    with pytest.raises(ValueError, match="parallel='columns' chooses how Parquet row groups or columns"):
        pl.scan_tfrecord(tf, parallel="columns")


def test_use_statistics_reads_the_same(both):
    tf, _ = both
    assert (
        pl.scan_tfrecord(tf, use_statistics=False)
        .collect()
        .sort("id")
        .equals(pl.scan_tfrecord(tf).collect().sort("id"))
    )


def test_hive_partitioning(both):
    tf, pq = both
    _same(pl.scan_tfrecord(tf, hive_partitioning=False), pl.scan_parquet(pq, hive_partitioning=False))


def test_glob(tmp_path):
    tfsql.write_tfrecord(ROWS, tmp_path / "a[1]")
    assert pl.scan_tfrecord(tmp_path / "a[1]", glob=False).collect().height == 6
    with pytest.raises(FileNotFoundError):
        pl.scan_tfrecord(tmp_path / "a[1]" / "*.gz", glob=True)


def test_hidden_file_prefix(tmp_path):
    tfsql.write_tfrecord(ROWS.head(2), tmp_path / "t", filename_pattern="keep_{i}")
    tfsql.write_tfrecord(ROWS.tail(4), tmp_path / "t", filename_pattern="tmp_{i}", mode="append")
    assert pl.scan_tfrecord(tmp_path / "t").collect().height == 6
    got = pl.scan_tfrecord(tmp_path / "t", hidden_file_prefix=["tmp_", "x"]).collect()
    assert got["id"].to_list() == [1, 2]
    # a file named explicitly is read whatever its name
    named = next((tmp_path / "t").glob("tmp_*"))
    assert pl.scan_tfrecord(named, hidden_file_prefix="tmp_").collect().height == 4


def test_schema_and_hive_schema(both):
    tf, pq = both
    schema = {"id": pl.Int16, "name": pl.String}
    _same(
        pl.scan_tfrecord(tf, schema=schema, hive_schema={"dt": pl.String}),
        pl.scan_parquet(pq, hive_schema={"dt": pl.String}).cast({"id": pl.Int16}),
    )


def test_try_parse_hive_dates(both):
    tf, pq = both
    got = _same(pl.scan_tfrecord(tf), pl.scan_parquet(pq))
    assert got.schema["dt"] == pl.Date
    _same(pl.scan_tfrecord(tf, try_parse_hive_dates=False), pl.scan_parquet(pq, try_parse_hive_dates=False))
    # the date partition column still prunes files
    assert pl.scan_tfrecord(tf).filter(pl.col("dt") == pl.date(2024, 1, 2)).collect()["id"].to_list() == [3, 4]


def test_hive_datetimes(tmp_path):
    df = pl.DataFrame({"x": [1, 2], "t": ["2024-01-01 10:00:00", "2024-01-01 11:30:00"]})
    tfsql.write_tfrecord(df, tmp_path / "t", partition_by="t")
    got = pl.scan_tfrecord(tmp_path / "t").sort("x").collect()
    assert got.schema["t"] == pl.Datetime("us")
    assert got["t"].dt.strftime("%H:%M").to_list() == ["10:00", "11:30"]


class _Opened(Exception):
    """Raised by the spy of `_dataset_options` once it has seen the options."""


def _dataset_options(monkeypatch, source, **options) -> dict:
    """The options ``pl.scan_tfrecord`` hands to `tfsql.dataset` (which is not run)."""
    seen: dict = {}
    real = tfsql.polars.scan.dataset

    def spy(*args, **kwargs):
        seen.update(kwargs)
        raise _Opened

    monkeypatch.setattr(tfsql.polars.scan, "dataset", spy)
    with pytest.raises(_Opened):
        pl.scan_tfrecord(source, **options)
    monkeypatch.setattr(tfsql.polars.scan, "dataset", real)
    return seen


def test_low_memory_decodes_in_one_thread(both, monkeypatch):
    tf, _ = both
    assert _dataset_options(monkeypatch, tf, low_memory=True)["threads"] == 1
    assert _dataset_options(monkeypatch, tf, low_memory=True, threads=3)["threads"] == 3
    assert _dataset_options(monkeypatch, tf)["threads"] is None
    assert pl.scan_tfrecord(tf, low_memory=True).collect().height == 6


def test_tfrecord_options_reach_the_dataset_as_given(both, monkeypatch):
    tf, _ = both
    # every option Polars hands on as given (the others: Polars' types, fsspec options), at
    # its first sample in the differential test
    converted = {"schema", "hive_schema", "filesystem"}
    polars_options = {n for n, o in READ_OPTIONS.items() if o.polars}
    given = {name: value for name, value in first_values().items() if name in polars_options - converted}
    assert set(given) == polars_options - converted
    seen = _dataset_options(monkeypatch, tf, **given)
    assert {name: seen[name] for name in given} == given


def test_max_record_bytes_reports_longer_records_as_corrupt(both):
    tf, _ = both
    with pytest.raises(tfsql.CorruptRecordError, match="exceeds max_record_bytes=8"):
        pl.read_tfrecord(tf, max_record_bytes=8)
    with pytest.warns(UserWarning):
        assert pl.scan_tfrecord(tf, max_record_bytes=8, on_corrupt="skip").collect().height == 0
    assert pl.read_tfrecord(tf, max_record_bytes=1 << 10).height == 6


def test_split_bytes_and_infer_bytes_read_the_same_rows(both):
    tf, _ = both
    expected = pl.scan_tfrecord(tf).sort("id").collect()
    got = pl.scan_tfrecord(tf, split_bytes=16, threads=2, infer_bytes=1).sort("id").collect()
    assert got.equals(expected)
    assert pl.read_tfrecord(tf, split_bytes=16, infer_bytes=1).sort("id").equals(expected)


@pytest.mark.parametrize("cache", [True, False])
def test_cache_is_the_sources_purity(both, monkeypatch, cache):
    tf, _ = both
    seen = {}
    real = tfsql.polars.source.register_io_source

    @functools.wraps(real)
    def spy(source, **kwargs):
        seen.update(kwargs)
        return real(source, **kwargs)

    monkeypatch.setattr(tfsql.polars.source, "register_io_source", spy)
    assert pl.scan_tfrecord(tf, cache=cache).collect().height == 6
    assert seen["is_pure"] is cache


class RecordingFS(MemoryFileSystem):
    """A memory filesystem under its own protocol that records its constructor options."""

    protocol = ("tfsqltest",)
    made: list[dict] = []

    def __init__(self, *args, **kwargs):
        RecordingFS.made.append(dict(kwargs))
        super().__init__()

    @classmethod
    def _strip_protocol(cls, path):
        return MemoryFileSystem._strip_protocol("memory://" + path.removeprefix("tfsqltest://"))


@pytest.fixture
def remote():
    fsspec.register_implementation("tfsqltest", RecordingFS, clobber=True)
    RecordingFS.made.clear()
    tfsql.write_tfrecord(ROWS, "memory://opts/data", mode="overwrite")
    yield "tfsqltest://opts/data"
    MemoryFileSystem().rm("/opts", recursive=True)


def test_storage_options_reach_fsspec(remote):
    got = pl.scan_tfrecord(remote, storage_options={"anon": True, "skip_instance_cache": True}).collect()
    assert got.height == 6
    assert RecordingFS.made == [{"anon": True}]  # fsspec itself consumes skip_instance_cache


def test_storage_options_translate_polars_s3_names():
    from tfsql.polars.parquet_options import _fsspec_options

    assert _fsspec_options("s3", {"aws_access_key_id": "k", "aws_secret_access_key": "s", "aws_region": "eu"}) == {
        "key": "k",
        "secret": "s",
        "client_kwargs": {"region_name": "eu"},
    }


def test_storage_options_on_a_local_path_raise(both):
    with pytest.raises(
        ValueError, match="storage_options= configures a remote filesystem, but the source is a local path"
    ):
        pl.scan_tfrecord(both[0], storage_options={"anon": True})


def test_credential_provider_credentials_reach_fsspec(remote):
    calls = []

    def provider():
        calls.append(1)
        return {"token": "t0k3n"}, None

    lf = pl.scan_tfrecord(remote, storage_options={"anon": False}, credential_provider=provider)
    assert lf.collect().height == 6
    assert calls == [1]
    assert RecordingFS.made == [{"anon": False, "token": "t0k3n"}]
    with pytest.raises(TypeError, match="credential_provider must be a function, 'auto' or None"):
        pl.scan_tfrecord(remote, credential_provider="env")


def test_include_file_paths(both):
    tf, pq = both
    got = pl.scan_tfrecord(tf, include_file_paths="file").collect()
    want = pl.scan_parquet(pq, include_file_paths="file").collect()
    assert got.schema == want.schema
    assert got.sort("id")["file"].str.contains("dt=2024-01-0[123]/part-").all()


def test_missing_columns(both):
    tf, _ = both
    schema = {"id": pl.Int64, "name": pl.String, "nmae": pl.String}
    with pytest.raises(
        tfsql.SchemaError, match=r"schema= names 'nmae', which is in none of the sampled records of 3 files"
    ):
        pl.scan_tfrecord(tf, schema=schema)
    got = pl.scan_tfrecord(tf, schema=schema, missing_columns="insert").collect()
    assert got["nmae"].null_count() == 6
    with pytest.raises(ValueError, match="missing_columns must be 'insert' or 'raise'"):
        pl.scan_tfrecord(tf, schema=schema, missing_columns="ignore")


def test_extra_columns(both):
    tf, _ = both
    with pytest.raises(tfsql.SchemaError, match=r"the records hold features that schema= does not name: 'name'"):
        pl.scan_tfrecord(tf, schema={"id": pl.Int64})
    got = pl.scan_tfrecord(tf, schema={"id": pl.Int64}, extra_columns="ignore").collect()
    assert got.columns == ["id", "dt"]


def test_cast_options(both):
    tf, _ = both
    pl.scan_tfrecord(tf, schema={"id": pl.Int16, "name": pl.String})  # None: range-checked casts
    with pytest.raises(tfsql.SchemaError, match=r"column 'id': TFRecord stores int64, and cast_options"):
        pl.scan_tfrecord(tf, schema={"id": pl.Int16, "name": pl.String}, cast_options=pl.ScanCastOptions())
    lf = pl.scan_tfrecord(tf, schema={"id": pl.Int64, "name": pl.String}, cast_options=pl.ScanCastOptions())
    assert lf.collect().height == 6
    with pytest.raises(TypeError, match="cast_options must be a polars.ScanCastOptions"):
        pl.scan_tfrecord(tf, schema={"id": pl.Int64, "name": pl.String}, cast_options={"integer_cast": "upcast"})


def test_cast_options_float_upcast(tmp_path):
    tfsql.write_tfrecord(pl.DataFrame({"f": [0.5, 1.5]}), tmp_path / "f")
    with pytest.raises(tfsql.SchemaError, match="TFRecord stores float32"):
        pl.scan_tfrecord(tmp_path / "f", schema={"f": pl.Float64}, cast_options=pl.ScanCastOptions())
    lf = pl.scan_tfrecord(
        tmp_path / "f", schema={"f": pl.Float64}, cast_options=pl.ScanCastOptions(float_cast="upcast")
    )
    assert lf.collect()["f"].to_list() == [0.5, 1.5]


def test_decryption_raises(both):
    with pytest.raises(ValueError, match="TFRecord files are not encrypted"):
        pl.scan_tfrecord(both[0], decryption=object())


def test_schema_overrides(both):
    tf, _ = both
    lf = pl.scan_tfrecord(tf, schema_overrides={"id": pl.UInt8})
    assert lf.collect_schema() == pl.Schema({"id": pl.UInt8, "name": pl.String, "dt": pl.Date})
    with pytest.raises(ValueError, match="schema_overrides names 'nope', not a feature of the inferred schema"):
        pl.scan_tfrecord(tf, schema_overrides={"nope": pl.Int8})
    with pytest.raises(ValueError, match="schema= fixes every column's type"):
        pl.scan_tfrecord(tf, schema={"id": pl.Int8}, schema_overrides={"id": pl.Int8})


# --------------------------------------------------------------------------------------
# read_tfrecord
# --------------------------------------------------------------------------------------


def test_read_tfrecord_matches_read_parquet(both):
    tf, pq = both
    got = pl.read_tfrecord(tf, columns=["name", "id"], row_index_name="r")
    want = pl.read_parquet(pq, columns=["name", "id"], row_index_name="r")
    assert got.schema == want.schema
    assert got.sort("id").drop("r").to_dicts() == want.sort("id").drop("r").to_dicts()
    by_position = pl.read_tfrecord(tf, columns=[1, 0])
    assert by_position.columns == ["name", "id"]


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ({"use_pyarrow": True}, "for an Arrow table use tfsql.read_tfrecord"),
        ({"pyarrow_options": {}}, "pyarrow_options= goes to pyarrow's Parquet reader"),
        ({"memory_map": False}, "tfsql streams TFRecord files"),
        ({"parallel": "row_groups"}, "TFRecord has neither"),
    ],
)
def test_read_tfrecord_rejects_parquet_only_options(both, option, message):
    with pytest.raises(ValueError, match=message):
        pl.read_tfrecord(both[0], **option)


def test_read_tfrecord_progress(both, capsys):
    from tqdm import tqdm

    df = pl.read_tfrecord(both[0], progress=True)
    assert df.height == 6
    err = capsys.readouterr().err
    size = tqdm.format_sizeof(sum(f.stat().st_size for f in Path(both[0]).rglob("part-*")))
    assert "reading: 100%" in err
    assert f"{size}/{size}" in err
    pl.read_tfrecord(both[0])
    assert capsys.readouterr().err == ""  # off by default
