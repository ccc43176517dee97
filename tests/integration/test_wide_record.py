"""Records with tens of thousands of feature keys read exactly (issue 34, item 7): every
kind, scalars and lists, and the three states of a feature (missing, present with no
kind, an empty list) kept apart, through ``read_tfrecord`` and Polars, with an inferred
schema and with a ``schema=`` that casts. The native decoder hands such a batch over as
one Arrow struct array (``Builder.finish_arrow``), so this is the path under test; the
expected values are computed here from the features written, not read back."""

from __future__ import annotations

import struct
import sys
import warnings
from pathlib import Path

import polars as pl
import pyarrow as pa
import pytest

import tfsql
import tfsql.polars  # noqa: F401  (scan_tfrecord)
from tfsql._proto import Example

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tfrecord_files import frames  # noqa: E402

KEYS = 20_000
RECORDS = 3
KINDS = ("int64", "float", "bytes")


def _f32(x: float) -> float:
    """``x`` as the float32 a float_list holds."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _values(i: int, r: int) -> list:
    """The values feature ``f<i>`` holds in record ``r`` (scalars: one; lists: 0 to 3)."""
    count = 1 if i % 2 == 0 else (i + r) % 4
    kind = KINDS[i % 3]
    if kind == "int64":
        extremes = [-(1 << 63), (1 << 63) - 1]  # a list's third value: int64's ends
        return [
            extremes[i % 2] if j == 2 else (-1) ** j * ((i * 1_000_003 + r * 7 + j) * 1_000_000_007 % (1 << 62))
            for j in range(count)
        ]
    if kind == "float":
        return [_f32((i + 0.25) * (r + 1) * (-1) ** j / 3) for j in range(count)]
    return [f"v{i}.{r}.{j}\u00e9".encode() + bytes([j]) for j in range(count)]


def _state(i: int, r: int) -> str:
    """Record 1 holds the three states: ``f<i>`` missing, with no kind, or an empty list;
    the other records hold values (so that every feature has a kind)."""
    if r != 1:
        return "values"
    return {1: "missing", 2: "no kind", 3: "empty"}.get(i % 5, "values")


def _record(r: int) -> bytes:
    ex = Example()
    for i in range(KEYS):
        state = _state(i, r)
        if state == "missing":
            continue
        feature = ex.features.feature[f"f{i}"]
        kind = KINDS[i % 3]
        if state == "no kind":
            feature.SetInParent()
            continue
        target = {"int64": feature.int64_list, "float": feature.float_list, "bytes": feature.bytes_list}[kind]
        target.SetInParent()  # an empty list keeps its kind
        if state == "values":
            target.value.extend(_values(i, r))
    return ex.SerializeToString()


@pytest.fixture(scope="module")
def wide(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("wide") / "wide.tfrecord"
    path.write_bytes(frames([_record(r) for r in range(RECORDS)]))
    return str(path)


def _is_list(i: int) -> bool:
    """Whether ``f<i>`` is a list column when inferred: odd features have 0 to 3 values."""
    return i % 2 == 1


def _expected(i: int, r: int, *, as_list: bool, text: bool) -> object:
    """The value of ``f<i>`` in row ``r``: missing and no kind are null; an empty list is
    ``[]`` in a list column and null in a scalar one."""
    state = _state(i, r)
    if state in ("missing", "no kind"):
        return None
    values = [] if state == "empty" else _values(i, r)
    if text and KINDS[i % 3] == "bytes":
        values = [v.decode() for v in values]
    if as_list:
        return values
    return values[0] if values else None


def _same(got: object, want: object) -> bool:
    """Equal, with float32 values compared bit for bit (-0.0 is not 0.0)."""
    if isinstance(want, float):
        return isinstance(got, float) and struct.pack("<f", got) == struct.pack("<f", want)
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(_same(g, w) for g, w in zip(got, want))
    return got == want


def _check(columns: dict[str, list], *, all_lists: bool, text: bool, keys: int = KEYS) -> None:
    assert sorted(columns) == sorted(f"f{i}" for i in range(keys))  # inferred: in the records' order
    bad = [
        (i, r, columns[f"f{i}"][r], want)
        for i in range(keys)
        for r in range(RECORDS)
        if not _same(columns[f"f{i}"][r], want := _expected(i, r, as_list=all_lists or _is_list(i), text=text))
    ]
    assert not bad, f"{len(bad)} wrong values, the first: {bad[:3]}"


def test_inferred_schema_reads_every_key_exactly(wide):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every feature has a kind in some record: no warning
        table = tfsql.read_tfrecord(wide)
    assert table.num_rows == RECORDS
    for i in (0, 1, 2, 3, 4, 5):
        leaf = {"int64": pa.int64(), "float": pa.float32(), "bytes": pa.string()}[KINDS[i % 3]]
        assert table.schema.field(f"f{i}").type == (pa.list_(leaf) if _is_list(i) else leaf)
    _check(table.to_pydict(), all_lists=False, text=True)


def test_polars_reads_every_key_exactly(wide):
    frame = tfsql.scan_tfrecord(wide).collect()
    assert frame.shape == (RECORDS, KEYS)
    _check(frame.to_dict(as_series=False), all_lists=False, text=True)


#: The features a schema= names when it casts (each cast column is cast on its own: fewer
#: keep the test fast)
CAST_KEYS = 3_000


def _list_schema(*, cast: bool) -> pa.Schema:
    """Every feature as a list column (an empty list then reads as ``[]``); with
    ``cast``, the first CAST_KEYS features, int64 as int64 still but bytes as strings and
    floats as float64, so that the decoded columns of two kinds in three are cast one by
    one among columns imported whole."""
    leaves = {"int64": pa.int64(), "float": pa.float64() if cast else pa.float32(), "bytes": pa.string()}
    if not cast:
        leaves["bytes"] = pa.binary()
    return pa.schema([(f"f{i}", pa.list_(leaves[KINDS[i % 3]])) for i in range(CAST_KEYS if cast else KEYS)])


@pytest.mark.parametrize("cast", [False, True], ids=["decoded types", "cast"])
def test_schema_reads_the_three_states_apart(wide, cast):
    table = tfsql.read_tfrecord(wide, schema=_list_schema(cast=cast))
    assert table.schema == _list_schema(cast=cast)
    columns = table.to_pydict()
    if cast:  # float32 values widened exactly: compare them as float32 again
        for i in range(1, CAST_KEYS, 3):
            columns[f"f{i}"] = [None if v is None else [_f32(x) for x in v] for v in columns[f"f{i}"]]
    _check(columns, all_lists=True, text=cast, keys=CAST_KEYS if cast else KEYS)
    row = 1  # the states side by side in one record: missing, no kind -> null; empty -> []
    assert [columns[f"f{i}"][row] for i in (6, 7, 8)] == [None, None, []]


def test_polars_schema_reads_the_three_states_apart(wide):
    frame = tfsql.scan_tfrecord(wide, schema=_list_schema(cast=False)).collect()
    assert frame.schema["f1"] == pl.List(pl.Float32) and frame.schema["f2"] == pl.List(pl.Binary)
    _check(frame.to_dict(as_series=False), all_lists=True, text=False)


def test_a_non_nullable_column_among_many_is_checked(wide):
    """A column that must hold a value in every record is checked one by one among
    the columns imported whole: f0 always has one, f6 is missing from record 1."""
    fields = [pa.field(f"f{i}", pa.int64(), nullable=i != 0) for i in range(0, KEYS, 6)]
    table = tfsql.read_tfrecord(wide, schema=pa.schema(fields))
    assert table.column("f0").to_pylist() == [_expected(0, r, as_list=False, text=False) for r in range(RECORDS)]
    fields[1] = fields[1].with_nullable(False)
    with pytest.raises(tfsql.SchemaError, match="f6"):
        tfsql.read_tfrecord(wide, schema=pa.schema(fields))


def test_bytes_not_utf8_in_an_inferred_string_column_named(tmp_path):
    """String columns come over whole and their UTF-8 is checked for the batch at once;
    a value that is not UTF-8 (after the inference sample) is still reported with its
    feature and record."""
    records = []
    for r in range(3):
        ex = Example()
        for i in range(2_000):
            value = b"\xff\xfe" if (r, i) == (2, 1234) else f"t{i}.{r}".encode()
            ex.features.feature[f"s{i}"].bytes_list.value.append(value)
        records.append(ex.SerializeToString())
    path = tmp_path / "text.tfrecord"
    path.write_bytes(frames(records))
    assert tfsql.read_tfrecord(str(path), infer_sample=1, n_rows=2).column("s1234").to_pylist() == [
        "t1234.0",
        "t1234.1",
    ]
    with pytest.raises(tfsql.SchemaError, match="s1234") as raised:
        tfsql.read_tfrecord(str(path), infer_sample=1)
    assert raised.value.record_index == 2


def test_the_extension_types_more_distinct_columns_than_its_bind_keeps_made(tmp_path):
    # The V2 build makes each distinct column type once per bind and copies it (DuckDB 2
    # makes a type from its text by parsing SQL); past the 32 it keeps, a type is made
    # for its column alone. 40 columns of 40 fixed-size array types (the written
    # description types them), read exactly.
    import duckdb

    table = pa.table({f"a{k}": pa.array([list(range(k, 2 * k))], pa.list_(pa.int64(), k)) for k in range(1, 41)})
    tfsql.write_tfrecord(table, str(tmp_path / "out"))
    con = tfsql.load_extension(duckdb.connect(config={"allow_unsigned_extensions": "true"}))
    query = f"FROM tfrecord_scan('{tmp_path / 'out'}')"
    assert [(name, kind) for name, kind, *_ in con.sql(f"DESCRIBE SELECT * {query}").fetchall()] == [
        (f"a{k}", f"BIGINT[{k}]") for k in range(1, 41)
    ]
    assert con.sql(f"SELECT * {query}").fetchall() == [tuple(tuple(range(k, 2 * k)) for k in range(1, 41))]


def test_polars_takes_the_decoded_columns_as_the_core_built_them(wide):
    """Polars imports a batch of the decoded columns straight from the core's Arrow C
    struct (``ExportedBatch``, the Arrow PyCapsule interface), and the frame is exactly
    ``read_tfrecord``'s, types included: 20,000 keys of three kinds, scalars and lists,
    strings, and the three states."""
    from polars.testing import assert_frame_equal

    from tfsql.decoding import ExportedBatch

    batches = list(tfsql.dataset(wide).scanner().to_batches(exported=True))
    assert {type(b) for b in batches} == {ExportedBatch} and sum(b.num_rows for b in batches) == RECORDS
    frame = tfsql.scan_tfrecord(wide).collect()
    assert_frame_equal(frame, pl.from_arrow(tfsql.read_tfrecord(wide)), check_exact=True)
    # a scan that casts, or a projection, still reads the same values
    some = [f"f{i}" for i in range(0, KEYS, 7)]
    assert_frame_equal(tfsql.scan_tfrecord(wide).select(some).collect(), frame.select(some), check_exact=True)


@pytest.mark.parametrize(
    "bad",
    [b"\xff\xfe", b"\xc3"],  # the second joins the next value's b"\xa9" into a valid "é"
    ids=["not UTF-8", "a character cut between values"],
)
def test_polars_refuses_bytes_not_utf8_in_a_string_column_with_tfsql_error(tmp_path, bad):
    """The values Polars takes whole are checked UTF-8 one by one first (Polars itself
    accepted invalid UTF-8, then panicked showing it): a value that is not is tfsql's
    SchemaError naming the feature and record, as read_tfrecord says."""
    records = []
    for r in range(3):
        ex = Example()
        for i in range(2_000):
            values = [bad, b"\xa9"] if (r, i) == (2, 1234) else [f"t{i}.{r}".encode(), b"x"]
            ex.features.feature[f"s{i}"].bytes_list.value.extend(values)
        records.append(ex.SerializeToString())
    path = tmp_path / "text.tfrecord"
    path.write_bytes(frames(records))
    assert tfsql.scan_tfrecord(str(path), infer_sample=1, n_rows=2).collect()["s1234"].to_list() == [
        ["t1234.0", "x"],
        ["t1234.1", "x"],
    ]
    # (Polars 1.x wraps an IO source's exception in ComputeError, message kept; 2.x re-raises it)
    with pytest.raises((tfsql.SchemaError, pl.exceptions.ComputeError), match="s1234.*record 2") as raised:
        tfsql.scan_tfrecord(str(path), infer_sample=1).collect()
    if isinstance(raised.value, tfsql.SchemaError):
        assert raised.value.record_index == 2
    with pytest.raises(tfsql.SchemaError, match="s1234") as direct:
        tfsql.read_tfrecord(str(path), infer_sample=1)
    assert direct.value.record_index == 2
