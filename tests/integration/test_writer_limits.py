"""The writer refuses what the readers would refuse and fails clearly at its own limits
(issue 26, finding 10): a record over ``max_record_bytes`` (the readers' option and
default), duplicate column names, more shards than open files allow."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pyarrow as pa
import pytest

import tfsql
from tfsql.options import READ_OPTIONS, WRITE_OPTIONS


def test_the_writer_limit_is_the_readers_limit():
    assert WRITE_OPTIONS["max_record_bytes"].default == READ_OPTIONS["max_record_bytes"].default == 2 << 30


@pytest.mark.parametrize("target", ["d", "x.tfrecord"])
def test_a_record_over_max_record_bytes_is_refused_before_anything_is_written(tmp_path, target):
    table = pa.table({"id": [1, 2], "s": ["a", "x" * 5000]})
    with pytest.raises(
        tfsql.SchemaError, match=r"row 1 encodes to a record of \d+ bytes, more than max_record_bytes=4000"
    ):
        tfsql.write_tfrecord(table, str(tmp_path / target), max_record_bytes=4000)
    assert [n for n in os.listdir(tmp_path) if not n.startswith(".")] == []
    # None writes it; readers read it with a limit at least as large
    tfsql.write_tfrecord(table, str(tmp_path / target), max_record_bytes=None)
    with pytest.raises(tfsql.CorruptRecordError, match="exceeds max_record_bytes=4000"):
        tfsql.read_tfrecord(str(tmp_path / target), max_record_bytes=4000, schema={"id": pa.int64(), "s": pa.string()})
    assert tfsql.read_tfrecord(str(tmp_path / target)).column("s").to_pylist() == ["a", "x" * 5000]


def test_duplicate_column_names_are_named(tmp_path):
    table = pa.table([pa.array([1, 2]), pa.array([3, 4])], names=["a", "a"])
    with pytest.raises(tfsql.SchemaError, match="the data has two columns named 'a'"):
        tfsql.write_tfrecord(table, str(tmp_path / "d"))


SHARDS = textwrap.dedent(
    """
    import resource, sys
    import pyarrow as pa, tfsql
    resource.setrlimit(resource.RLIMIT_NOFILE, (256, 256))
    try:
        tfsql.write_tfrecord(pa.table({"a": list(range(10))}), sys.argv[1], num_shards=1000, **eval(sys.argv[2]))
    except ValueError as exc:
        print(type(exc).__name__, exc)
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="RLIMIT_NOFILE is POSIX")
@pytest.mark.parametrize("options", ["{}", "{'partition_by': 'p'}"])
def test_more_shards_than_open_files_allow_is_a_clear_error(tmp_path, options):
    if "partition_by" in options:
        options = "{'partition_by': 'a'}"
    run = subprocess.run(
        [sys.executable, "-c", SHARDS, str(tmp_path / "d"), options], capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.startswith("ValueError num_shards=1000 keeps 1000 files open at once"), run.stdout
    assert "open-file limit of this process (256, see `ulimit -n`)" in run.stdout
    assert not os.path.exists(tmp_path / "d") or os.listdir(tmp_path / "d") == []
