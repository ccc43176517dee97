"""One differential test for every reading option in every spelling, over every kind of
input, in the four front ends that read TFRecord files as tables:

- ``native``: plain ``duckdb`` with tfsql's extension loaded (``tfrecord_scan(...)``),
- ``connect``: ``tfsql.connect()`` (the same DuckDB with the extension, loaded for you),
- ``python``: ``tfsql.read_tfrecord``,
- ``polars``: ``pl.scan_tfrecord``.

Each case reads one input with one option given one value, spelled as each front end
spells it (every SQL alias included), and requires the same rows (column names, order
and values) from every front end that offers the option, or a refusal from all of them
of the same kind (a schema, option, data or file error) and the same message in every
front end: DuckDB's class prefix (``Invalid Input Error: ``...) and the function name
are stripped, and the one documented difference, the dialect of advice naming an option
(:data:`tfsql.messages.DIALECTS`: ``on_corrupt := 'skip'`` in SQL,
``on_corrupt='skip'`` in Python), is spelled the Python way. The native extension takes
part for the options `tfsql.options.NATIVE_READ_OPTIONS` lists.

Adding a reading option to `tfsql.options` without a sample in `SAMPLES` fails
`test_every_reading_option_has_a_sample`.

The inputs are every file of ``tests/data`` and the cases the files there do not cover,
built in a temporary directory: a file with a corrupt record, hive directories, hidden
files and sidecars, a TFX root, SequenceExamples with a context feature and a feature
list of one name, records without features, a name with glob characters, ``.gzip`` /
``.zlib`` names, directories a tfsql writer described (``features.json``) and a TFDS
``features.json`` naming a feature no record holds. Below the option cases: a name that
is not UTF-8 beside an accented one (the same order everywhere, the path shown escaped),
hive values kept as bytes, the core's plan of a listing. The cases that need each writer
(an empty partition value written by the native COPY, ``tfsql.connect()``,
``write_tfrecord`` and Polars read back alike; every RECORD_TYPE spelling of the native
COPY) are in ``test_written_once.py``.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import struct
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

import tfsql
import tfsql.polars  # noqa: F401  (registers pl.scan_tfrecord)
from tfsql.messages import DIALECTS, SCHEMA
from tfsql.options import NATIVE_READ_OPTIONS, READ_OPTIONS, Spelling
from tfrecord_files import example, frame, sequence_example, write_examples, write_records

pl = pytest.importorskip("polars")
duckdb = pytest.importorskip("duckdb")

DATA = Path(__file__).resolve().parent.parent / "data"

FRONT_ENDS = ("native", "connect", "python", "polars")


def native_connection() -> Any:
    """Plain DuckDB with the extension loaded."""
    return tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))


# --------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------


def _corrupt(path: Path) -> None:
    """Records 0-2 hold one ``emb`` value, record 3's data CRC is broken, record 4 holds
    two: a sample that stops at the damage types ``emb`` as a scalar."""
    payloads = [example({"id": i, "emb": [float(i)]}) for i in range(3)]
    payloads += [example({"id": 3, "emb": [3.0]}), example({"id": 4, "emb": [4.0, 4.5]})]
    data = bytearray()
    for i, payload in enumerate(payloads):
        framed = bytearray(frame(payload))
        if i == 3:
            framed[-1] ^= 0xFF
        data += framed
    path.write_bytes(bytes(data))


def _lost_framing(path: Path) -> None:
    """Record 1's length CRC is broken (framing is lost there), record 2 is the first to
    hold ``b``: a sample that goes past the damage as the scan does (``on_corrupt='skip'``)
    types ``b``; one that stops there does not."""
    data = bytearray()
    for i, payload in enumerate([example({"a": 0}), example({"a": 1}), example({"a": 2, "b": 7})]):
        framed = bytearray(frame(payload))
        if i == 1:
            framed[8] ^= 0xFF
        data += framed
    path.write_bytes(bytes(data))


def _build(root: Path) -> dict[str, str]:
    sources: dict[str, str] = {}
    tf = DATA / "tensorflow"
    for name in ("tabular.tfrecord", "tabular.tfrecord.gz", "tabular.tfrecord.zz", "sequence.tfrecord"):
        shutil.copy(tf / name, root / name)
    for name in ("proto3_edge_cases.tfrecord", "wire_variants.tfrecord", "empty.tfrecord"):
        shutil.copy(tf / name, root / name)
    sources.update(
        tabular=str(root / "tabular.tfrecord"),
        tabular_gz=str(root / "tabular.tfrecord.gz"),
        tabular_zz=str(root / "tabular.tfrecord.zz"),
        sequence=str(root / "sequence.tfrecord"),
        proto3=str(root / "proto3_edge_cases.tfrecord"),
        wire=str(root / "wire_variants.tfrecord"),
        empty=str(root / "empty.tfrecord"),
    )
    # the other endings tfsql.naming.NAME_COMPRESSIONS gives gzip and zlib
    shutil.copy(tf / "tabular.tfrecord.gz", root / "tabular.tfrecord.gzip")
    shutil.copy(tf / "tabular.tfrecord.zz", root / "tabular.tfrecord.zlib")
    sources.update(tabular_gzip=str(root / "tabular.tfrecord.gzip"), tabular_zlib=str(root / "tabular.tfrecord.zlib"))
    shutil.copytree(DATA / "tfds" / "tiny_shapes" / "1.0.0", root / "tfds" / "1.0.0")
    sources["tfds"] = str(root / "tfds" / "1.0.0")
    _corrupt(root / "corrupt.tfrecord")
    sources["corrupt"] = str(root / "corrupt.tfrecord")
    _lost_framing(root / "lost_framing.tfrecord")
    sources["lost_framing"] = str(root / "lost_framing.tfrecord")
    for p in (1, 2):
        write_examples(root / "hive" / f"p={p}" / "part-0.tfrecord", [{"x": p * 10 + i} for i in range(2)])
    sources["hive"] = str(root / "hive")
    hidden = root / "hidden"
    write_examples(hidden / "data.tfrecord", [{"x": i} for i in range(3)])
    write_examples(hidden / ".hidden.tfrecord", [{"x": 99}])
    write_examples(hidden / "_temporary.tfrecord", [{"x": 98}])
    write_examples(hidden / "zz_skip.tfrecord", [{"x": 97}])
    (hidden / "_SUCCESS").write_bytes(b"")
    (hidden / "data.tfrecord.crc").write_bytes(b"\0" * 8)
    (hidden / ".data.tfrecord.idx").write_bytes(struct.pack("<3Q", 0, 21, 42))
    sources["hidden"] = str(hidden)
    tfx = root / "tfx"
    write_examples(tfx / "Split-train" / "data_tfrecord-00000-of-00001.gz", [{"x": i} for i in range(3)], "gzip")
    write_examples(tfx / "Split-eval" / "data_tfrecord-00000-of-00001.gz", [{"x": 10}], "gzip")
    sources["tfx"] = str(tfx)
    write_records(
        root / "same_name.tfrecord",
        [sequence_example({"ids": [i, i + 1]}, {"ids": [[i], [i, 2]]}) for i in range(3)],
    )
    sources["same_name"] = str(root / "same_name.tfrecord")
    write_records(root / "featureless.tfrecord", [example({}) for _ in range(3)])
    sources["featureless"] = str(root / "featureless.tfrecord")
    write_examples(root / "late.tfrecord", [{"a": 1}, {"a": 2, "b": 5}])
    sources["late"] = str(root / "late.tfrecord")
    write_examples(root / "two" / "f0.tfrecord", [{"a": 1}])
    write_examples(root / "two" / "f1.tfrecord", [{"a": 2, "b": [1.5]}])
    sources["two_files"] = str(root / "two")
    write_examples(root / "lit[1].tfrecord", [{"x": 1}])
    sources["literal"] = str(root / "lit[1].tfrecord")
    # data errors every front end words from tfsql.messages: a scalar that grows a second
    # value, a feature that changes kind
    write_examples(root / "grows.tfrecord", [{"v": [1]}, {"v": [2]}, {"v": [3, 4]}])
    sources["grows"] = str(root / "grows.tfrecord")
    write_examples(root / "kinds.tfrecord", [{"v": 1}, {"v": 2}, {"v": [b"x"]}])
    sources["kinds"] = str(root / "kinds.tfrecord")
    # a feature that is int64 in one file and bytes in another: the inference refuses the
    # sample (while the extension binds the call, while the Python reader opens the dataset)
    write_examples(root / "kinds_files" / "f0.tfrecord", [{"v": 1}])
    write_examples(root / "kinds_files" / "f1.tfrecord", [{"v": [b"x"]}])
    sources["kinds_files"] = str(root / "kinds_files")
    # bytes that are not UTF-8 in a column a schema makes a string (inference makes it binary)
    write_examples(root / "not_utf8.tfrecord", [{"s": [b"ok"]}, {"s": [b"x"]}, {"s": [b"a\xffb"]}])
    sources["not_utf8"] = str(root / "not_utf8.tfrecord")
    write_examples(root / "not_utf8_list.tfrecord", [{"l": [b"a"]}, {"l": [b"b", b"c\xff"]}, {"l": [b"d"]}])
    sources["not_utf8_list"] = str(root / "not_utf8_list.tfrecord")
    # a record that is not an Example, met by the schema inference's sample (when the
    # extension binds the call, when the Python reader opens the dataset)
    write_records(root / "malformed.tfrecord", [example({"x": 1}), b"\x0a\xff\xff\xff", example({"x": 2})])
    sources["malformed"] = str(root / "malformed.tfrecord")
    # a tfsql writer's description (features.json) names a column no record holds, and
    # types a partition whose values look like integers as a string
    tfsql.write_tfrecord(pa.table({"id": [1, 2], "e": pa.array([None, None], pa.int64())}), str(root / "written"))
    sources["written"] = str(root / "written")
    tfsql.write_tfrecord(pa.table({"x": [1, 2], "p": ["007", "008"]}), str(root / "written_p"), partition_by=["p"])
    sources["written_p"] = str(root / "written_p")
    # a TFDS features.json that describes a feature no record holds
    shutil.copytree(DATA / "tfds" / "tiny_shapes" / "1.0.0", root / "tfds_extra" / "1.0.0")
    features_json = root / "tfds_extra" / "1.0.0" / "features.json"
    described = json.loads(features_json.read_text())
    described["featuresDict"]["features"]["extra"] = {
        "pythonClassName": "tensorflow_datasets.core.features.scalar.Scalar",
        "tensor": {"dtype": "int64", "encoding": "none", "shape": {}},
    }
    features_json.write_text(json.dumps(described))
    sources["tfds_extra"] = str(root / "tfds_extra" / "1.0.0")
    return sources


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> dict[str, str]:
    return _build(tmp_path_factory.mktemp("differential"))


# --------------------------------------------------------------------------------------
# Samples: option -> values that change what a read returns (or refuses)
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Sample:
    """One value of one option, read from one input (``extra``: other options given with it)."""

    source: str
    value: Any
    extra: dict = field(default_factory=dict)
    sql: str | None = None  # the SQL literal, when it is not derived from the value


SCHEMA_ID = ({"id": pa.int64(), "name": pa.string()}, "{'id': 'BIGINT', 'name': 'VARCHAR'}")
SCHEMA_TYPO = ({"id": pa.int64(), "idd": pa.int64()}, "{'id': 'BIGINT', 'idd': 'BIGINT'}")

SAMPLES: dict[str, list[Sample]] = {
    "schema": [
        Sample("tabular", SCHEMA_ID[0], sql=SCHEMA_ID[1]),
        Sample("tabular", SCHEMA_TYPO[0], sql=SCHEMA_TYPO[1]),
        Sample("not_utf8", {"s": pa.string()}, sql="{'s': 'VARCHAR'}"),
        Sample("not_utf8_list", {"l": pa.list_(pa.string())}, sql="{'l': 'VARCHAR[]'}"),
        # the description still types the partition column (a string, though "007" looks like 7)
        Sample("written_p", {"x": pa.int64()}, sql="{'x': 'BIGINT'}"),
    ],
    "record_type": [
        Sample("tabular", "bytes"),
        Sample("tabular", "ByteArray"),
        Sample("tabular", "bytearray"),
        Sample("sequence", "sequence_example"),
        Sample("sequence", "SequenceExample"),
        Sample("same_name", "sequence_example"),
        # a tfsql writer's description still types the hive columns of raw records ("007")
        Sample("written_p", "bytes"),
        # schema= names the one column of the raw records
        Sample("tabular", "bytes", extra={"schema": ({"r": pa.binary()}, "{'r': 'BLOB'}")}),
        Sample(
            "tabular", "bytes", extra={"schema": ({"r": pa.binary(), "s": pa.binary()}, "{'r': 'BLOB', 's': 'BLOB'}")}
        ),
    ],
    "compression": [
        Sample("tabular_gz", "gzip"),
        Sample("tabular_gz", "org.apache.hadoop.io.compress.GzipCodec"),
        Sample("tabular_zz", "org.apache.hadoop.io.compress.DefaultCodec"),
        Sample("tabular_zz", "deflate"),
        Sample("tabular", "none"),
        Sample("tabular_gz", "auto"),
        Sample("tabular_gzip", "gzip"),
        Sample("tabular_gzip", "auto"),
        Sample("tabular_zlib", "zlib"),
        Sample("tabular_zlib", "auto"),
    ],
    "verify_checksums": [Sample("corrupt", False)],
    "on_corrupt": [
        Sample("corrupt", "skip"),
        Sample("corrupt", "raise"),
        Sample("lost_framing", "skip"),
        Sample("lost_framing", "raise"),
    ],
    "hive_partitioning": [Sample("hive", False), Sample("hive", True)],
    "hive_schema": [
        Sample("hive", {"p": pa.string()}, sql="{'p': 'VARCHAR'}"),
        # a layout's split column is its own: a type given to it is left out
        Sample("tfx", {"split": pa.int64()}, sql="{'split': 'BIGINT'}"),
    ],
    "include_file_paths": [Sample("hidden", "fname")],
    "infer_sample": [
        Sample("late", 1),
        Sample("late", None),
        Sample("grows", 2),  # 'v' sampled as a scalar, record 2 holds two values
        Sample("kinds", 2),  # 'v' sampled as int64, record 2 holds bytes
    ],
    "infer_files": [Sample("two_files", 1), Sample("two_files", None)],
    "infer_bytes": [Sample("late", 1), Sample("late", None)],
    "lists": [Sample("tabular", "always")],
    "missing_columns": [
        Sample("tabular", "insert", extra={"schema": SCHEMA_TYPO}),
        Sample("tabular", "raise", extra={"schema": SCHEMA_TYPO}),
        # a column the dataset's description names is not a misspelling: null where no record holds it
        Sample(
            "written",
            "raise",
            extra={"schema": ({"id": pa.int64(), "e": pa.int64()}, "{'id': 'BIGINT', 'e': 'BIGINT'}")},
        ),
        Sample(
            "tfds_extra",
            "raise",
            extra={"schema": ({"id": pa.int64(), "extra": pa.int64()}, "{'id': 'BIGINT', 'extra': 'BIGINT'}")},
        ),
        Sample(
            "tfds_extra",
            "raise",
            extra={"schema": ({"id": pa.int64(), "extr": pa.int64()}, "{'id': 'BIGINT', 'extr': 'BIGINT'}")},
        ),
    ],
    "filesystem": [Sample("tabular", "local")],
    "glob": [Sample("literal", False), Sample("literal", True)],
    "hidden_file_prefix": [Sample("hidden", "zz_")],
    "batch_size": [Sample("tabular", 5)],
    "batch_bytes": [Sample("tabular", 4096)],
    "threads": [Sample("tabular", 1), Sample("tabular", 3)],
    "max_record_bytes": [Sample("tabular", 1 << 20), Sample("tabular", 8)],
    "split_bytes": [Sample("tabular", 512)],
    "progress": [],  # no front end here offers it: read_tfrecord(progress=True) is a display
}

# Every input read with no option at all; the record type each needs
BASELINES = {
    "tabular": {},
    "tabular_gz": {},
    "tabular_zz": {},
    "tabular_gzip": {},
    "tabular_zlib": {},
    "sequence": {"record_type": "sequence_example"},
    "proto3": {},
    "wire": {},
    "empty": {},
    "tfds": {},
    "corrupt": {"on_corrupt": "skip"},
    "lost_framing": {"on_corrupt": "skip"},
    "hive": {},
    "hidden": {},
    "tfx": {},
    "same_name": {"record_type": "sequence_example"},
    "featureless": {},
    "late": {},
    "two_files": {},
    "literal": {"glob": False},
    "grows": {},
    "kinds": {},
    "kinds_files": {},
    "not_utf8": {},
    "not_utf8_list": {},
    "malformed": {},
    "written": {},
    "written_p": {},
    "tfds_extra": {},
}


def test_every_reading_option_has_a_sample():
    assert set(SAMPLES) == set(READ_OPTIONS)
    for name, samples in SAMPLES.items():
        option = READ_OPTIONS[name]
        offered = option.python or option.polars or option.sql
        assert bool(samples) == bool(offered), name


# --------------------------------------------------------------------------------------
# Spelling a case for each front end
# --------------------------------------------------------------------------------------


def _sql_literal(value: Any, spelling: Spelling, given: str | None) -> str:
    if given is not None:
        return given
    if spelling.maps is not None:
        for key, mapped in spelling.maps.items():
            if mapped == value and isinstance(key, bool):
                return "true" if key else "false"
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "-1"
    if isinstance(value, int):
        return str(value)
    return "'" + str(value).replace("'", "''") + "'"


def _python_value(name: str, value: Any) -> Any:
    if name == "filesystem":
        import fsspec

        return fsspec.filesystem("file")
    return value


@dataclass
class Case:
    source: str
    python: dict  # options as tfsql.read_tfrecord / pl.scan_tfrecord take them
    sql: list[tuple[str, str]]  # (parameter, literal) as tfrecord_scan takes them
    native: bool  # every option given is implemented by the extension
    sql_offered: bool = True
    python_offered: bool = True
    polars_offered: bool = True


def _options_case(source: str, given: dict[str, tuple[Any, str | None]], spellings: dict[str, Spelling]) -> Case:
    python, sql = {}, []
    native = sql_offered = python_offered = polars_offered = True
    for name, (value, literal) in given.items():
        option = READ_OPTIONS[name]
        python[name] = _python_value(name, value)
        python_offered &= option.python
        polars_offered &= option.polars
        native &= name in NATIVE_READ_OPTIONS
        spelling = spellings.get(name) or (option.sql[0] if option.sql else None)
        if spelling is None:
            sql_offered = native = False
            continue
        sql.append((spelling.name, _sql_literal(value, spelling, literal)))
    return Case(source, python, sql, native, sql_offered, python_offered, polars_offered)


# Inputs the native extension does not read yet, and whose: the case fails until it does
NATIVE_GAPS: dict[str, str] = {}

# The extension reports its data errors (tfrecord_last_error()) on DuckDB >= 1.5.6 only
# (the C API gives extensions a connection id from then on): before, a data error met
# while it binds a call stays a Binder Error, in plain DuckDB and in tfsql.connect().
REPORTS = tuple(int(x) for x in duckdb.__version__.split(".")[:3]) >= (1, 5, 6)
if not REPORTS:
    NATIVE_GAPS["malformed"] = "DuckDB < 1.5.6: a data error of the extension's bind is a Binder Error"


def _marks(case: Case) -> list:
    reason = NATIVE_GAPS.get(case.source)
    if reason is None or not case.native:
        return []
    return [pytest.mark.xfail(reason=reason, strict=True)]


def _cases():
    for source, options in BASELINES.items():
        given = {name: (value, None) for name, value in options.items()}
        case = _options_case(source, given, {})
        yield pytest.param(case, id=f"{source}-plain", marks=_marks(case))
    for name, samples in SAMPLES.items():
        option = READ_OPTIONS[name]
        spellings = list(option.sql) or [None]
        for k, sample in enumerate(samples):
            base = {n: (v, None) for n, v in BASELINES[sample.source].items() if n != name}
            base.update({n: v for n, v in sample.extra.items()})
            base = {n: (v if isinstance(v, tuple) else (v, None)) for n, v in base.items()}
            for spelling in spellings:
                given = {**base, name: (sample.value, sample.sql)}
                chosen = {name: spelling} if spelling is not None else {}
                label = spelling.name if spelling is not None else name
                case = _options_case(sample.source, given, chosen)
                yield pytest.param(case, id=f"{label}-{k}-{sample.source}", marks=_marks(case))


CASES = list(_cases())


# --------------------------------------------------------------------------------------
# Reading through each front end
# --------------------------------------------------------------------------------------


@dataclass
class Outcome:
    columns: list[str] | None = None
    rows: list[tuple] | None = None
    kind: str | None = None  # a refusal: "bind", "data", "files"
    message: str | None = None

    def __repr__(self) -> str:
        if self.kind is not None:
            return f"refused[{self.kind}]: {self.message}"
        return f"{self.columns} {len(self.rows or [])} rows"


def _normal(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return "NaN"
    if isinstance(value, list):
        return tuple(_normal(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _normal(v)) for k, v in value.items()))
    return value


def _rows(table: pa.Table) -> Outcome:
    names = table.column_names
    rows = [tuple(_normal(row[n]) for n in names) for row in table.to_pylist()]
    return Outcome(columns=names, rows=sorted(rows, key=repr))


# The kinds of refusal, by the class each front end raises: refused when the call is
# bound (tfsql.dataset() / DuckDB's binder), by the data met while scanning, or for
# files that are not there. First match wins.
_KINDS = (
    ("CorruptRecordError", "data"),
    ("ScanDataError", "data"),
    ("SchemaError", "bind"),
    ("OptionError", "bind"),
    ("BinderException", "bind"),
    ("InvalidInputException", "data"),
    ("NoFilesError", "files"),
    ("FileNotFoundError", "files"),
    ("IOException", "files"),
)


# The SQL dialect's phrases -> the Python dialect's, longest first (a phrase may hold another)
_DIALECT = sorted(
    ((DIALECTS["sql"][key], DIALECTS["python"][key]) for key in DIALECTS["sql"]), key=lambda p: -len(p[0])
)


def _data_kind(error_class: str | None, reason: str | None) -> str | None:
    """The kind of a tfsql data error, by its class and reason: a SchemaError is a value
    met while decoding ("data": SchemaError.from_reason) or a schema or inference sample
    refused when the call is bound ("bind"); a damaged or changed file is "data"."""
    if error_class == "SchemaError":
        return "data" if reason in SCHEMA else "bind"
    return "data" if error_class else None


def _refusal(error: BaseException, *, sql: bool, reported: tuple | None = None) -> Outcome:
    """``reported``: the extension's report of the error (``error_class``, ``reason`` of
    ``tfrecord_last_error()``), whatever DuckDB class it was raised as: a bind's is a
    Binder Error in plain DuckDB. A tfsql error (or one that caused ``error``) is
    classed by its own class and reason."""
    names = {k.__name__ for k in type(error).__mro__}
    kind = next((kind for name, kind in _KINDS if name in names), type(error).__name__)
    tfsql_error = error.__cause__ if isinstance(error.__cause__, tfsql.TFSQLError) else error
    if isinstance(tfsql_error, tfsql.SchemaError):
        kind = _data_kind("SchemaError", tfsql_error.reason) or kind
    elif reported:
        kind = _data_kind(*reported) or kind
    message = str(error).split("\n")[0]
    for prefix in ("Binder Error: ", "Invalid Input Error: ", "IO Error: ", "tfrecord_scan: "):
        message = message.removeprefix(prefix)
    if sql:
        for sql_phrase, python_phrase in _DIALECT:
            message = message.replace(sql_phrase, python_phrase)
    return Outcome(kind=kind, message=message)


def _relation_rows(relation: Any) -> Outcome:
    """A DuckDB result's columns and rows (fetched as Python values, so that a scan's
    error is DuckDB's own, not an Arrow stream's)."""
    names = list(relation.columns)
    rows = [tuple(_normal(v) for v in row) for row in relation.fetchall()]
    return Outcome(columns=names, rows=sorted(rows, key=repr))


def _sql(case: Case, sources: dict[str, str]) -> str:
    args = ", ".join([f"'{sources[case.source]}'"] + [f"{p} := {v}" for p, v in case.sql])
    return f"SELECT * FROM tfrecord_scan({args})"


def _read(front_end: str, case: Case, sources: dict[str, str]) -> Outcome:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if front_end == "python":
                return _rows(tfsql.read_tfrecord(sources[case.source], **case.python))
            if front_end == "polars":
                # scan_parquet's extra_columns="raise" is Polars' own convention (no other front end has it)
                extra = {"extra_columns": "ignore"} if "schema" in case.python else {}
                frame = pl.scan_tfrecord(sources[case.source], **case.python, **extra).collect()
                return _rows(frame.to_arrow())
            if front_end == "connect":
                con = tfsql.connect()  # held while the result is fetched (duckdb 1.4 closes it with its last reference)
            else:
                con = native_connection()
            try:
                return _relation_rows(con.sql(_sql(case, sources)))
            except duckdb.Error as error:
                reported = REPORTS and con.sql("SELECT error_class, reason FROM tfrecord_last_error()").fetchall()
                return _refusal(error, sql=True, reported=reported[0] if reported else None)
        except Exception as error:  # every refusal is compared
            return _refusal(error, sql=front_end in ("native", "connect"))


def _offered(front_end: str, case: Case) -> bool:
    if front_end in ("native", "connect"):
        return case.native and case.sql_offered
    return case.python_offered if front_end == "python" else case.polars_offered


@pytest.mark.parametrize("case", CASES)
def test_front_ends_agree(case, sources):
    outcomes = {fe: _read(fe, case, sources) for fe in FRONT_ENDS if _offered(fe, case)}
    refused = {fe for fe, o in outcomes.items() if o.kind is not None}
    if refused:
        assert refused == set(outcomes), outcomes
        assert len({o.kind for o in outcomes.values()}) == 1, outcomes
        assert len({o.message for o in outcomes.values()}) == 1, outcomes
        return
    if not outcomes["python"].columns:
        # DuckDB scans no table without columns: records holding no features (and empty
        # files) get the `filename` column there (docs/duckdb-extension.md)
        for fe in ("native", "connect"):
            if fe in outcomes and outcomes[fe].columns == ["filename"]:
                outcomes[fe] = Outcome(columns=[], rows=[() for _ in outcomes[fe].rows or []])
    first = next(iter(outcomes.values()))
    for fe, outcome in outcomes.items():
        assert outcome.columns == first.columns, (fe, outcomes)
        assert outcome.rows == first.rows, (fe, outcome.columns)


def test_the_case_count_is_reported(capsys):
    """How many cases each front end ran (the closing note of the issue quotes them)."""
    counts = {fe: sum(_offered(fe, p.values[0]) for p in CASES) for fe in FRONT_ENDS}
    with capsys.disabled():
        print(f"\ndifferential cases: {len(CASES)}; per front end: {counts}")
    assert counts["native"] > 0 and counts["python"] == len([p for p in CASES if p.values[0].python_offered])


# --------------------------------------------------------------------------------------
# Paths as bytes: the order of a listing and the bytes of a hive value, in every front end
# --------------------------------------------------------------------------------------


def _ordered_rows(front_end: str, source: str, **python: Any) -> list[tuple]:
    """The rows of `source` in the order the front end returns them (not sorted)."""
    if front_end == "python":
        return [tuple(r.values()) for r in tfsql.read_tfrecord(source, **python).to_pylist()]
    if front_end == "polars":
        return [tuple(r.values()) for r in pl.scan_tfrecord(source, **python).collect().to_arrow().to_pylist()]
    sql_options = "".join(f", {'filename' if k == 'include_file_paths' else k} := '{v}'" for k, v in python.items())
    sql = f"SELECT * FROM tfrecord_scan('{source}'{sql_options})"
    if front_end == "connect":
        con = tfsql.connect()  # held: DuckDB 1.4 closes a connection nothing holds
    else:
        con = native_connection()
    return con.sql(sql).fetchall()


@pytest.fixture(scope="module")
def byte_names(tmp_path_factory) -> Path:
    """A name that is not UTF-8 (``\\x80``) beside an accented one (``é``, bytes c3 a9):
    by bytes the first comes first, by code points (U+DC80 against U+00E9) the second."""
    root = tmp_path_factory.mktemp("byte_names")
    write_examples(Path(os.fsdecode(bytes(root) + b"/\x80.tfrecord")), [{"x": 1}])
    write_examples(root / "é.tfrecord", [{"x": 2}])
    return root


@pytest.mark.parametrize("front_end", FRONT_ENDS)
def test_a_name_that_is_not_utf8_sorts_by_bytes_and_shows_escaped(front_end, byte_names):
    rows = _ordered_rows(front_end, str(byte_names), include_file_paths="file")
    assert rows == [(1, f"{byte_names}/\\x80.tfrecord"), (2, f"{byte_names}/é.tfrecord")]


def test_tfrecord_metadata_shows_a_name_that_is_not_utf8_escaped(byte_names):
    con = duckdb.connect(config={"allow_unsigned_extensions": "true"})
    tfsql.load_extension(con)
    files = [row[0] for row in con.sql(f"SELECT file FROM tfrecord_metadata('{byte_names}')").fetchall()]
    assert files == [f"{byte_names}/\\x80.tfrecord", f"{byte_names}/é.tfrecord"]


@pytest.mark.parametrize("front_end", FRONT_ENDS)
def test_a_hive_value_keeps_its_nul(front_end, tmp_path):
    write_examples(tmp_path / "p=a%00b" / "part-0.tfrecord", [{"x": 1}])
    assert _ordered_rows(front_end, str(tmp_path)) == [(1, "a\x00b")]


# --------------------------------------------------------------------------------------
# The core's plan of a listing (tfsql_plan): globs, covered directories, hidden names,
# layouts -- the same files in the same order in every front end
# --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def planned_tree(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("planned")
    for rel, x in [
        ("d/a/x.tfrecord", 1),
        ("d/a/b/y.tfrecord", 2),
        ("d/a-b/z.tfrecord", 3),
        ("d/_staging/s.tfrecord", 4),
        ("d/.hidden/h.tfrecord", 5),
        ("d/_SUCCESS", 6),
        ("tfx/Split-train/data_tfrecord-00000-of-00001.gz", 7),
        ("tfx/Split-eval/data_tfrecord-00000-of-00001.gz", 8),
    ]:
        write_examples(root / rel, [{"x": x}])
    return root


@pytest.mark.parametrize("front_end", FRONT_ENDS)
@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        # by bytes: d/a-b/z < d/a/b/y < d/a/x ('-' < '/'); d/a/b is covered by d/a
        ("d/**", [(3,), (2,), (1,)]),
        ("d/*/*.tfrecord", [(3,), (1,)]),
        ("d/_*/*.tfrecord", [(4,)]),  # a component starting with _ opts its matches in
        ("d/**/*.tfrecord", [(3,), (2,), (1,)]),
        ("tfx", [(8, "eval"), (7, "train")]),  # a TFX layout: the split column
    ],
)
def test_the_plan_of_a_listing_is_the_same_in_every_front_end(front_end, planned_tree, pattern, expected):
    assert _ordered_rows(front_end, f"{planned_tree}/{pattern}") == expected


# --------------------------------------------------------------------------------------
# missing_columns='raise' and a dataset's own description (the core's infer_check_missing)
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("front_end", FRONT_ENDS)
@pytest.mark.parametrize(
    ("source", "column"),
    [("written", "e"), ("tfds_extra", "extra")],  # a tfsql writer's features.json; a TFDS one
)
def test_a_column_the_description_names_is_null_not_missing(front_end, sources, source, column):
    """A ``schema=`` column that no sampled record holds but the dataset's description
    names is not a misspelt name: every front end reads it as null."""
    schema = {"id": pa.int64(), column: pa.int64()}
    if front_end == "python":
        got = tfsql.read_tfrecord(sources[source], schema=schema).select(["id", column]).to_pylist()
        rows = sorted(tuple(r.values()) for r in got)
    elif front_end == "polars":
        frame = pl.scan_tfrecord(sources[source], schema=schema, extra_columns="ignore").collect()
        rows = sorted(frame.select("id", column).rows())
    else:
        con = tfsql.connect() if front_end == "connect" else native_connection()
        sql = f"SELECT id, {column} FROM tfrecord_scan('{sources[source]}', schema := {{'id': 'BIGINT', '{column}': 'BIGINT'}})"
        rows = sorted(con.sql(sql).fetchall())
    assert rows and all(value is None for _, value in rows), rows
    assert [i for i, _ in rows] == sorted(i for i, _ in rows)


@pytest.mark.parametrize("front_end", FRONT_ENDS)
def test_raw_records_take_the_schema_column_name(front_end, sources):
    """``record_type='bytes'`` with ``schema=`` names the one column of raw records."""
    source = sources["tabular"]
    if front_end == "python":
        names = tfsql.read_tfrecord(source, record_type="bytes", schema={"r": pa.binary()}).column_names
    elif front_end == "polars":
        names = pl.scan_tfrecord(source, record_type="bytes", schema={"r": pa.binary()}).collect().columns
    else:
        con = tfsql.connect() if front_end == "connect" else native_connection()
        names = con.sql(
            f"SELECT * FROM tfrecord_scan('{source}', record_type := 'bytes', schema := {{'r': 'BLOB'}})"
        ).columns
    assert names == ["r"]


@pytest.mark.parametrize("front_end", FRONT_ENDS)
def test_a_written_directory_types_its_partition_columns_as_described(front_end, tmp_path):
    """The hive columns of a tfsql writer's directory take its description's types
    (``tfsql_written_partitions``): ``"007"`` stays a string; a write of no rows (its one
    empty file in the root) reads its partition columns as null columns."""
    tfsql.write_tfrecord(
        pa.table({"x": [1, 2], "p": ["007", "8"], "q": [3, 4]}), str(tmp_path / "w"), partition_by=["p", "q"]
    )
    empty = pa.table({"x": pa.array([], pa.int64()), "p": pa.array([], pa.string())})
    tfsql.write_tfrecord(empty, str(tmp_path / "e"), partition_by=["p"])
    assert sorted(_ordered_rows(front_end, str(tmp_path / "w"))) == [(1, "007", 3), (2, "8", 4)]
    if front_end == "python":
        columns = tfsql.read_tfrecord(str(tmp_path / "e")).column_names
    elif front_end == "polars":
        columns = pl.scan_tfrecord(str(tmp_path / "e")).collect().columns
    else:
        con = tfsql.connect() if front_end == "connect" else native_connection()
        columns = con.sql(f"SELECT * FROM tfrecord_scan('{tmp_path / 'e'}')").columns
    assert columns == ["x", "p"]
