"""Tests for tfsql.partitioning: hive escaping, parsing, typing and pruning."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import fsspec
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from tfsql.discovery import FileInfo, discover
from tfsql.partitioning import (
    HIVE_DEFAULT_PARTITION,
    Partitioning,
    escape_partition_value,
    format_partition_value,
    parse_partition_segments,
    partition_path,
)

UUID = "3f2c9a1e-0b7d-4c55-9e1a-7d2f8b6c4e10"


def unescape_partition_value(text: str) -> str | None:
    """A value as readers unescape it: the value of the directory ``k=<text>``."""
    return parse_partition_segments(f"k={text}")[0][1]


def files_under(root: str, *relative: str) -> list[FileInfo]:
    return [FileInfo(f"{root}/{r}", 0, root) for r in relative]


# --------------------------------------------------------------------------- escaping


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [
        ("plain", "plain"),
        ("a/b", "a%2Fb"),
        ("k=v", "k%3Dv"),
        ("100%", "100%25"),
        ("a b", "a b"),
        ("C:\\dir", "C%3A%5Cdir"),
        ("*?\"<>|#{}[]^'", "%2A%3F%22%3C%3E%7C%23%7B}%5B%5D%5E%27"),
        ("tab\there\nnew\x01\x1f\x7f", "tab%09here%0Anew%01%1F%7F"),
        ("héllo/wörld ☃", "héllo%2Fwörld ☃"),
        ("", ""),
    ],
)
def test_escape_and_round_trip(raw: str, escaped: str) -> None:
    assert escape_partition_value(raw) == escaped
    assert unescape_partition_value(escaped) == raw


def test_unescape_keeps_percent_without_two_hex_digits() -> None:
    assert unescape_partition_value("a%2") == "a%2"
    assert unescape_partition_value("a%zz%41") == "a%zzA"
    assert unescape_partition_value("%2f") == "/"
    assert unescape_partition_value("%") == "%"


def test_every_ascii_character_round_trips() -> None:
    text = "".join(chr(c) for c in range(1, 128)) + "日本"
    escaped = escape_partition_value(text)
    assert "/" not in escaped and "=" not in escaped and "\\" not in escaped
    assert unescape_partition_value(escaped) == text


# --------------------------------------------------------------------------- partition_path


def test_partition_path_values() -> None:
    assert partition_path(["a", "b"], [1, "x/y"]) == "a=1/b=x%2Fy"
    assert partition_path(["n"], [None]) == f"n={HIVE_DEFAULT_PARTITION}"
    assert partition_path(["e"], [""]) == "e="  # read back as "", not null (DuckDB's rule)
    assert partition_path(["t", "f"], [True, False]) == "t=true/f=false"
    assert partition_path(["d"], [dt.date(2024, 1, 31)]) == "d=2024-01-31"
    assert partition_path(["ts"], [dt.datetime(2024, 1, 31, 12, 5)]) == "ts=2024-01-31 12%3A05%3A00"
    assert partition_path(["x"], [-7]) == "x=-7"
    assert partition_path(["f"], [1.5]) == "f=1.5"
    assert partition_path(["m"], [Decimal("1.10")]) == "m=1.10"
    assert partition_path(["k=y"], ["v"]) == "k%3Dy=v"
    assert partition_path(["s"], [pa.scalar(3, pa.int8())]) == "s=3"
    assert partition_path([], []) == ""


def test_partition_path_numpy_scalars() -> None:
    assert partition_path(["b", "i"], [np.bool_(True), np.int64(5)]) == "b=true/i=5"


def test_partition_path_errors() -> None:
    with pytest.raises(ValueError, match=r"partition_path got 2 names but 1 values"):
        partition_path(["a", "b"], [1])
    with pytest.raises(
        TypeError, match=r"partition values must be text, numbers, booleans or dates, not bytes \(b'x'\)"
    ):
        partition_path(["a"], [b"x"])
    with pytest.raises(ValueError, match=r"partition column names must be non-empty strings, not ''"):
        partition_path([""], [1])


def test_format_partition_value() -> None:
    assert format_partition_value(None) == HIVE_DEFAULT_PARTITION
    assert format_partition_value("a/b") == "a/b"


def test_partition_path_parses_back() -> None:
    names = ["label", "split", "note"]
    values = [3, None, "a=b/c%d é"]
    assert parse_partition_segments(partition_path(names, values)) == [
        ("label", "3"),
        ("split", None),
        ("note", "a=b/c%d é"),
    ]


# --------------------------------------------------------------------------- parsing


def test_parse_partition_segments() -> None:
    assert parse_partition_segments("") == []
    assert parse_partition_segments("a=1/plain/b=x%2Fy") == [("a", "1"), ("b", "x/y")]
    assert parse_partition_segments(f"k={HIVE_DEFAULT_PARTITION}") == [("k", None)]
    assert parse_partition_segments("k=") == [("k", "")]
    assert parse_partition_segments("=v/x=a=b") == [("x", "a=b")]
    assert parse_partition_segments("k%3Dy=1") == [("k=y", "1")]
    assert parse_partition_segments("_col=1") == [("_col", "1")]


# --------------------------------------------------------------------------- discover: layout


def test_spark_tree_partition_values(tmp_path: Path) -> None:
    tree = {
        "_SUCCESS": b"",
        f"label=0/split=train/part-00000-{UUID}-c000.tfrecord": b"abc",
        f"label=0/split=train/.part-00000-{UUID}-c000.tfrecord.crc": b"c",
        f"label=1/split=test/part-00001-{UUID}-c000.tfrecord": b"",
        f"label={HIVE_DEFAULT_PARTITION}/split=a%2Fb/part-00002-{UUID}-c000.tfrecord": b"d",
    }
    for relative, content in tree.items():
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_bytes(content)
    found = discover(tmp_path)
    part = Partitioning.discover(found.files)
    assert part is not None
    assert part.schema == pa.schema([("label", pa.int64()), ("split", pa.string())])
    assert part.names == ["label", "split"]
    assert [f.path.removeprefix(str(tmp_path)) for f in found.files] == [
        f"/label=0/split=train/part-00000-{UUID}-c000.tfrecord",
        f"/label=1/split=test/part-00001-{UUID}-c000.tfrecord",
        f"/label={HIVE_DEFAULT_PARTITION}/split=a%2Fb/part-00002-{UUID}-c000.tfrecord",
    ]
    assert part.values.to_pydict() == {"label": [0, 1, None], "split": ["train", "test", "a/b"]}


def test_memory_tree_partition_values() -> None:
    mem = fsspec.filesystem("memory")
    try:
        mem.pipe("/p/year=2024/month=01/a.tfrecord", b"")
        mem.pipe("/p/year=2024/month=12/b.tfrecord", b"")
        part = Partitioning.discover(discover("memory://p").files)
        assert part is not None
        assert part.values.to_pydict() == {"year": [2024, 2024], "month": [1, 12]}
    finally:
        mem.store.clear()
        mem.pseudo_dirs[:] = [""]


def test_not_partitioned() -> None:
    files = files_under("/d", "a.tfrecord", "sub/b.tfrecord")
    assert Partitioning.discover(files) is None
    assert Partitioning.discover([]) is None


def test_explicit_files_are_not_partitioned() -> None:
    files = [FileInfo("/d/k=1/a.tfrecord", 0, None), FileInfo("/d/k=2/b.tfrecord", 0, None)]
    assert Partitioning.discover(files) is None


def test_hive_partitioning_false() -> None:
    assert Partitioning.discover(files_under("/d", "k=1/a"), hive_partitioning=False) is None
    with pytest.raises(ValueError, match=r"hive_schema was given but hive_partitioning=False"):
        Partitioning.discover(files_under("/d", "k=1/a"), hive_partitioning=False, hive_schema={"k": pa.int8()})


def test_hive_partitioning_true_requires_key_value_dirs() -> None:
    with pytest.raises(
        ValueError,
        match=r"hive partitioning was requested but no key=value directories were found below '/d'; "
        r"point the source at the directory above the key=value directories or pass hive_partitioning=False",
    ):
        Partitioning.discover(files_under("/d", "a.tfrecord"), hive_partitioning=True)
    with pytest.raises(ValueError, match=r"no key=value directories were found \(the files were named explicitly\)"):
        Partitioning.discover([FileInfo("/d/k=1/a", 0, None)], hive_partitioning=True)


def test_hive_partitioning_true_with_key_value_dirs() -> None:
    part = Partitioning.discover(files_under("/d", "k=x/a"), hive_partitioning=True)
    assert part is not None and part.values.to_pydict() == {"k": ["x"]}


def test_plain_directories_between_keys_are_ignored() -> None:
    part = Partitioning.discover(files_under("/d", "k=1/batch_a/j=x/f", "k=2/batch_b/j=y/f"))
    assert part is not None
    assert part.values.to_pydict() == {"k": [1, 2], "j": ["x", "y"]}


def test_inconsistent_key_sets() -> None:
    files = files_under("/a", "x=1/f.tfrecord", "y=2/f.tfrecord")
    with pytest.raises(
        ValueError,
        match=r"^inconsistent hive partitioning: /a/x=1/f\.tfrecord has partition keys \(x\) but "
        r"/a/y=2/f\.tfrecord has \(y\); every file must sit under the same key=value directories "
        r"in the same order \(pass hive_partitioning=False to read without partition columns\)$",
    ):
        Partitioning.discover(files)


def test_inconsistent_some_files_not_partitioned() -> None:
    files = files_under("/a", "x=1/f.tfrecord", "g.tfrecord")
    with pytest.raises(ValueError, match=r"/a/x=1/f\.tfrecord has partition keys \(x\) but /a/g\.tfrecord has none"):
        Partitioning.discover(files)
    # the unpartitioned file first: still names both
    with pytest.raises(ValueError, match=r"/a/x=1/f\.tfrecord has partition keys \(x\) but /a/g\.tfrecord has none"):
        Partitioning.discover(list(reversed(files)))


def test_inconsistent_key_order() -> None:
    files = files_under("/a", "x=1/y=2/f", "y=3/x=4/f")
    with pytest.raises(ValueError, match=r"/a/x=1/y=2/f has partition keys \(x, y\) but /a/y=3/x=4/f has \(y, x\)"):
        Partitioning.discover(files)


def test_inconsistent_message_uses_display_names() -> None:
    files = [FileInfo("/m/x=1/f", 0, "/m", "memory://m/x=1/f"), FileInfo("/m/f", 0, "/m", "memory://m/f")]
    with pytest.raises(ValueError, match=r"memory://m/x=1/f has partition keys \(x\) but memory://m/f has none"):
        Partitioning.discover(files)


def test_repeated_key() -> None:
    with pytest.raises(ValueError, match=r"partition key 'x' appears twice in the directories of /a/x=1/x=2/f"):
        Partitioning.discover(files_under("/a", "x=1/x=2/f"))


# --------------------------------------------------------------------------- discover: types


def infer(*values: str) -> pa.Array:
    part = Partitioning.discover(files_under("/r", *(f"k={v}/f{i}" for i, v in enumerate(values))))
    assert part is not None
    return part.values.column("k").combine_chunks()


def test_integer_inference() -> None:
    assert infer("1", "-20", HIVE_DEFAULT_PARTITION).equals(pa.array([1, -20, None], pa.int64()))
    assert infer("007", "8").equals(pa.array([7, 8], pa.int64()))
    assert infer("9223372036854775807").equals(pa.array([2**63 - 1], pa.int64()))


def test_string_inference() -> None:
    assert infer("+1", "2").equals(pa.array(["+1", "2"]))
    assert infer("1", "x").equals(pa.array(["1", "x"]))
    assert infer("1.5").equals(pa.array(["1.5"]))
    assert infer("9223372036854775808").equals(pa.array(["9223372036854775808"]))
    assert infer(" 1").equals(pa.array([" 1"]))
    assert infer("").equals(pa.array([""]))
    assert infer("-").equals(pa.array(["-"]))
    assert infer(HIVE_DEFAULT_PARTITION, HIVE_DEFAULT_PARTITION).equals(pa.array([None, None], pa.string()))
    assert infer("%31").equals(pa.array([1], pa.int64()))  # unescaped before typing


def test_user_hive_schema() -> None:
    files = files_under("/r", "a=1/b=2024-01-31/c=007/d=true/f", f"a=2/b={HIVE_DEFAULT_PARTITION}/c=8/d=False/f")
    part = Partitioning.discover(
        files, hive_schema=pa.schema([("a", pa.int32()), ("b", pa.date32()), ("c", pa.string()), ("d", pa.bool_())])
    )
    assert part is not None
    assert part.schema == pa.schema([("a", pa.int32()), ("b", pa.date32()), ("c", pa.string()), ("d", pa.bool_())])
    assert part.values.to_pydict() == {
        "a": [1, 2],
        "b": [dt.date(2024, 1, 31), None],
        "c": ["007", "8"],
        "d": [True, False],
    }


def test_partial_hive_schema_as_dict_with_alias() -> None:
    files = files_under("/r", "a=1/c=007/f")
    part = Partitioning.discover(files, hive_schema={"c": "string"})
    assert part is not None
    assert part.schema == pa.schema([("a", pa.int64()), ("c", pa.string())])
    assert part.values.to_pydict() == {"a": [1], "c": ["007"]}


def test_hive_schema_cast_error_names_value_and_file() -> None:
    files = files_under("/r", "a=1/f", "a=x/g")
    with pytest.raises(
        ValueError,
        match=r"^hive partition value 'x' of column 'a' \(in /r/a=x/g\) cannot be cast to int16; "
        r"fix hive_schema \(or use string\)$",
    ):
        Partitioning.discover(files, hive_schema={"a": pa.int16()})
    with pytest.raises(
        ValueError, match=r"hive partition value '300' of column 'a' \(in /r/a=300/f\) cannot be cast to int8"
    ):
        Partitioning.discover(files_under("/r", "a=300/f"), hive_schema={"a": pa.int8()})


def test_hive_schema_errors() -> None:
    files = files_under("/r", "a=1/f")
    with pytest.raises(
        ValueError, match=r"hive_schema names 'z', which is not a partition key \(the partition keys are \(a\)\)"
    ):
        Partitioning.discover(files, hive_schema={"z": pa.int64()})
    with pytest.raises(ValueError, match=r"hive_schema type 'integer' of 'a' is not a pyarrow type name"):
        Partitioning.discover(files, hive_schema={"a": "integer"})
    with pytest.raises(TypeError, match=r"hive_schema type of 'a' must be a pyarrow DataType, not 3"):
        Partitioning.discover(files, hive_schema={"a": 3})
    with pytest.raises(TypeError, match=r"hive_schema must be a pyarrow.Schema or a dict of name to type, not list"):
        Partitioning.discover(files, hive_schema=[("a", pa.int8())])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"hive partitioning was requested but no key=value directories"):
        Partitioning.discover(files_under("/r", "f"), hive_schema={"a": pa.int8()})


# --------------------------------------------------------------------------- prune


@pytest.fixture
def part() -> Partitioning:
    layout = [
        "label=0/split=train/f0",
        "label=0/split=test/f1",
        "label=1/split=train/f2",
        "label=1/split=train/f3",
        "label=2/split=test/f4",
        f"label={HIVE_DEFAULT_PARTITION}/split=train/f5",
        f"label=3/split={HIVE_DEFAULT_PARTITION}/f6",
    ]
    result = Partitioning.discover(files_under("/r", *layout))
    assert result is not None
    assert result.values.to_pydict() == {
        "label": [0, 0, 1, 1, 2, None, 3],
        "split": ["train", "test", "train", "train", "test", "train", None],
    }
    return result


DATASET_SCHEMA = pa.schema([("x", pa.int64()), ("name", pa.string()), ("label", pa.int64()), ("split", pa.string())])
F = pc.field


@pytest.mark.parametrize(
    ("expression", "kept"),
    [
        (F("label") == 1, [2, 3]),
        (F("label") != 1, [0, 1, 4, 6]),
        (F("label").isin([1, 2]), [2, 3, 4]),
        (F("label").isin([0, None]), [0, 1, 5]),
        ((F("label") == 0) | (F("split") == "test"), [0, 1, 4]),
        ((F("label") == 1) & (F("x") > 3), [2, 3]),
        ((F("label") == 1) | (F("x") > 3), [0, 1, 2, 3, 4, 5, 6]),
        (F("label").is_null(), [5]),
        (F("split").is_null(), [6]),
        (F("label").is_valid(), [0, 1, 2, 3, 4, 6]),
        (~F("split").is_null(), [0, 1, 2, 3, 4, 5]),
        (F("label") >= 2, [4, 6]),
        ((F("label") > 0) & (F("label") < 3), [2, 3, 4]),
        (F("split") < "tr", [1, 4]),
        (~(F("label") == 0), [2, 3, 4, 6]),
        (F("label") == 1.5, []),
        (F("label") == pa.scalar(2, pa.int32()), [4]),
        (F("x") > 3, [0, 1, 2, 3, 4, 5, 6]),
        ((F("name") == "a") & F("x").is_null(), [0, 1, 2, 3, 4, 5, 6]),
        (pc.scalar(True), [0, 1, 2, 3, 4, 5, 6]),
        (pc.scalar(False), []),
        (None, [0, 1, 2, 3, 4, 5, 6]),
    ],
    ids=lambda value: str(value) if not isinstance(value, list) else None,
)
def test_prune(part: Partitioning, expression: pc.Expression | None, kept: list[int]) -> None:
    assert part.prune(expression, DATASET_SCHEMA) == kept


def test_prune_appends_missing_partition_columns(part: Partitioning) -> None:
    data_only = pa.schema([("x", pa.int64())])
    assert part.prune((F("split") == "test") & (F("x") == 1), data_only) == [1, 4]


def test_prune_with_user_typed_partitions() -> None:
    files = files_under("/r", "d=2024-01-01/f", "d=2024-02-01/g", f"d={HIVE_DEFAULT_PARTITION}/h")
    part = Partitioning.discover(files, hive_schema={"d": pa.date32()})
    assert part is not None
    schema = pa.schema([("x", pa.int64())]).append(part.schema.field("d"))
    assert part.prune(F("d") >= pa.scalar(dt.date(2024, 1, 15), pa.date32()), schema) == [1]
    assert part.prune(F("d").is_null(), schema) == [2]


def test_prune_errors(part: Partitioning) -> None:
    with pytest.raises(TypeError, match=r"filter must be a pyarrow.compute.Expression, not str"):
        part.prune("label = 1", DATASET_SCHEMA)  # type: ignore[arg-type]
    with pytest.raises(
        ValueError,
        match=r"the filter \(nope == 1\) does not fit the dataset's columns \(x, name, label, split\): .*nope",
    ):
        part.prune(F("nope") == 1, DATASET_SCHEMA)
    with pytest.raises(ValueError, match=r"the filter \(label == \"a\"\) does not fit the dataset's columns .*equal"):
        part.prune(F("label") == "a", DATASET_SCHEMA)
