"""An index sidecar is validated whole before any front end trusts it (issue 34, item
6): a repeated, dropped or reordered line, or numbers past 2^63, make it ignored with a
StaleIndexWarning (exported from tfsql) and the headers are walked instead, so every
front end counts and reads exactly the file's records."""

from __future__ import annotations

import os
import warnings

import pyarrow as pa
import pytest

import tfsql
from tfsql import _native, _reference
from tfsql.cli import main
from tfsql.duckdb.extension import extension_available
from tfsql.record_index import index_path, write_index

N = 1000


def spoil_duplicate_first(lines):
    return [lines[0], *lines]


def spoil_drop_one(lines):
    return lines[:500] + lines[501:]


def spoil_huge(lines):
    return [f"{2**64 - 16} 16", *lines[1:]]


def spoil_overflow_sum(lines):
    # each number is below 2^63, their sum is not
    return [*lines[:-1], f"{lines[-1].split()[0]} {2**63 - 1}"]


def spoil_swap(lines):
    return [lines[1], lines[0], *lines[2:]]


SPOILS = {
    f.__name__[6:]: f for f in [spoil_duplicate_first, spoil_drop_one, spoil_huge, spoil_overflow_sum, spoil_swap]
}


@pytest.fixture(params=list(SPOILS))
def spoiled(request, tmp_path):
    path = str(tmp_path / "a.tfrecord")
    tfsql.write_tfrecord(pa.table({"id": list(range(N))}), path)
    write_index(path)
    sidecar = index_path(path)
    lines = open(sidecar).read().splitlines()
    with open(sidecar, "w") as f:
        f.write("".join(line + "\n" for line in SPOILS[request.param](lines)))
    os.utime(sidecar)  # newer than the file: only its content is wrong
    return path


def test_stale_index_warning_is_exported():
    assert tfsql.StaleIndexWarning is tfsql.record_index.StaleIndexWarning
    assert "StaleIndexWarning" in tfsql.__all__


def test_count_rows_walks_the_headers(spoiled):
    with pytest.warns(tfsql.StaleIndexWarning, match="ignoring the record index"):
        assert tfsql.dataset(spoiled).count_rows() == N


def test_tfsql_count_walks_the_headers(spoiled, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", tfsql.StaleIndexWarning)
        assert main(["count", spoiled]) == 0
    assert capsys.readouterr().out.split()[-1] == str(N)


def test_record_dataset_reads_each_record_once(spoiled):
    from tfsql.loader import RecordDataset

    with pytest.warns(tfsql.StaleIndexWarning):
        ds = RecordDataset(spoiled)
        assert len(ds) == N
        assert [ds[i]["id"] for i in (0, 1, 500, N - 1)] == [0, 1, 500, N - 1]


@pytest.mark.skipif(not extension_available(), reason="the DuckDB extension is not built")
def test_tfrecord_metadata_walks_the_headers(spoiled):
    con = tfsql.connect()
    assert con.sql(f"SELECT records FROM tfrecord_metadata('{spoiled}', count := true)").fetchall() == [(N,)]
    assert con.sql(f"SELECT records FROM tfrecord_metadata('{spoiled}')").fetchall() == [(None,)]
    assert con.sql(f"SELECT count(*), count(DISTINCT id) FROM tfrecord_scan('{spoiled}')").fetchall() == [(N, N)]


@pytest.mark.parametrize("spoil", list(SPOILS))
def test_both_codecs_refuse_the_same_sidecars(tmp_path, spoil):
    path = str(tmp_path / "a.tfrecord")
    tfsql.write_tfrecord(pa.table({"id": list(range(N))}), path)
    write_index(path)
    text = open(index_path(path), "rb").read()
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        good = [codec.index_check(text, f.fileno(), size, True) for codec in (_native, _reference)]
        assert good[0] == good[1] and good[0][0] == N
        bad = "".join(line + "\n" for line in SPOILS[spoil](text.decode().splitlines())).encode()
        whys = []
        for codec in (_native, _reference):
            with pytest.raises(ValueError) as info:
                codec.index_check(bad, f.fileno(), size, False)
            whys.append(str(info.value))
        assert whys[0] == whys[1]


def _older_within_the_second(tmp_path) -> str:
    """A file whose sidecar is valid but older than the file by 1 µs, in the same whole
    second (an index made before the file was rewritten)."""
    path = str(tmp_path / "a.tfrecord")
    tfsql.write_tfrecord(pa.table({"id": list(range(N))}), path)
    write_index(path)
    file_ns = 1_700_000_000_500_000_000
    os.utime(path, ns=(file_ns, file_ns))
    os.utime(index_path(path), ns=(file_ns - 1000, file_ns - 1000))
    return path


@pytest.mark.parametrize("codec", [_native, _reference], ids=["core", "reference"])
def test_the_sidecar_rules_of_both_codecs(codec):
    assert codec.index_sidecar_path("/data/train-0.tfrecord") == "/data/.train-0.tfrecord.idx"
    assert codec.index_sidecar_path("train-0.tfrecord") == ".train-0.tfrecord.idx"
    assert codec.index_sidecar_path("/a") == "/.a.idx"
    assert codec.index_sidecar_path("s3://b/d/x") == "s3://b/d/.x.idx"
    name = os.fsdecode(b"/d/\x80\xc3\xa9")  # not UTF-8, then an accent: kept byte for byte
    assert os.fsencode(codec.index_sidecar_path(name)) == b"/d/.\x80\xc3\xa9.idx"
    assert codec.index_fresh(10, 10) and codec.index_fresh(11, 10)
    assert not codec.index_fresh(9, 10)
    assert not codec.index_fresh(1_700_000_000_499_999_000, 1_700_000_000_500_000_000)  # same second


def test_an_index_older_within_the_second_is_stale_in_python(tmp_path):
    path = _older_within_the_second(tmp_path)
    with pytest.warns(tfsql.StaleIndexWarning, match="the file is newer than its index"):
        assert tfsql.dataset(path).count_rows() == N


@pytest.mark.skipif(not extension_available(), reason="the DuckDB extension is not built")
def test_an_index_older_within_the_second_is_stale_in_the_extension(tmp_path):
    """The extension judged freshness by whole seconds, Python by nanoseconds: the same
    sidecar was trusted by one and ignored by the other."""
    path = _older_within_the_second(tmp_path)
    con = tfsql.connect()
    assert con.sql(f"SELECT records, records_source FROM tfrecord_metadata('{path}')").fetchall() == [(None, None)]
    assert con.sql(f"SELECT records FROM tfrecord_metadata('{path}', count := true)").fetchall() == [(N,)]
