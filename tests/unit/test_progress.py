"""``progress=True`` on reads and writes: a bar on stderr with a total, a rate and
human-formatted numbers; nothing when off (the default)."""

from __future__ import annotations

import re

import polars as pl
import pyarrow as pa
import pytest
from tqdm import tqdm

import tfsql
import tfsql.progress

N = 50_000


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    path = tmp_path_factory.mktemp("progress") / "data"
    tfsql.write_tfrecord(pa.table({"x": range(N), "k": [i % 2 for i in range(N)]}), path, partition_by="k")
    return path


def _size(path) -> int:
    return sum(p.stat().st_size for p in path.rglob("part-*"))


def _final(err: str) -> str:
    return err.replace("\r", "\n").strip().splitlines()[-1]


def test_read_tfrecord_progress_counts_the_bytes_of_the_files(data, capsys):
    table = tfsql.read_tfrecord(data, progress=True)
    assert table.num_rows == N
    line = _final(capsys.readouterr().err)
    size = tqdm.format_sizeof(_size(data))
    assert line.startswith("reading: 100%")
    assert f"{size}/{size}" in line
    assert re.search(r"[0-9.]+[kMG]?B/s", line)


@pytest.mark.parametrize("split_bytes", [None, 20_000], ids=["pieces", "split_bytes"])
def test_a_file_read_in_pieces_counts_each_byte_about_once(data, capsys, monkeypatch, split_bytes):
    # Each piece seeks to its start: a seek forward is no read (once counted as one,
    # which made a bar of the image set end at 3.0 GB of 800 MB, without its total).
    import io

    import tfsql.scanning

    monkeypatch.setattr(tfsql.scanning, "_PIECE_MIN_FILE_BYTES", 0)
    monkeypatch.setattr(tfsql.scanning, "piece_bytes", lambda batch_bytes: 4000)
    size = _size(data)
    bar = tfsql.progress.read_bar("reading", total=size, file=io.StringIO())
    ds = tfsql.dataset(data, threads=2, split_bytes=split_bytes).with_options(progress=bar)
    assert ds.to_table().num_rows == N
    # A piece also reads the record that runs past its end, which the next one skips.
    assert size <= bar.n <= size * 1.05, (bar.n, size)
    assert tfsql.read_tfrecord(data, progress=True, threads=2, split_bytes=split_bytes).num_rows == N
    line = _final(capsys.readouterr().err)
    assert line.startswith("reading: 100%") and f"{tqdm.format_sizeof(size)}/" in line, line


def test_a_pruned_read_ends_full_at_what_it_read(data, capsys):
    import pyarrow.compute as pc

    table = tfsql.read_tfrecord(data, filter=pc.field("k") == 1, progress=True)
    assert table.num_rows == N // 2
    line = _final(capsys.readouterr().err)
    half = tqdm.format_sizeof(_size(data / "k=1"))
    assert f"{half}/{half}" in line and "100%" in line


def test_dataset_to_table_progress(data, capsys):
    assert tfsql.dataset(data).to_table(progress=True).num_rows == N
    assert _final(capsys.readouterr().err).startswith("reading: 100%")


def test_gzip_files_count_compressed_bytes(tmp_path, capsys):
    tfsql.write_tfrecord(pa.table({"x": range(N)}), tmp_path / "g", compression="gzip")
    assert tfsql.read_tfrecord(tmp_path / "g", progress=True).num_rows == N
    size = tqdm.format_sizeof(_size(tmp_path / "g"))
    assert f"{size}/{size}" in _final(capsys.readouterr().err)


def test_write_tfrecord_progress_has_the_rows_total(tmp_path, capsys):
    tfsql.write_tfrecord(pa.table({"x": range(N)}), tmp_path / "w", progress=True)
    line = _final(capsys.readouterr().err)
    assert line.startswith("writing: 100%")
    assert "50.0k/50.0k" in line and "rows/s" in line


def test_write_of_a_stream_counts_without_a_total(tmp_path, capsys):
    batches = (pa.record_batch({"x": list(range(i, i + 1000))}) for i in range(0, N, 1000))
    tfsql.write_tfrecord(batches, tmp_path / "s", progress=True)
    line = _final(capsys.readouterr().err)
    assert "50.0k rows" in line and "%" not in line


def test_polars_write_and_sink_progress(tmp_path, capsys):
    df = pl.DataFrame({"x": range(N)})
    df.tfrecord.write(tmp_path / "a", progress=True)
    assert "50.0k/50.0k" in _final(capsys.readouterr().err)
    df.lazy().tfrecord.sink(tmp_path / "b", progress=True)
    assert "50.0k rows" in _final(capsys.readouterr().err)


def test_progress_is_off_by_default(data, tmp_path, capsys):
    tfsql.read_tfrecord(data)
    tfsql.write_tfrecord(pa.table({"x": [1]}), tmp_path / "q")
    pl.read_tfrecord(data)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    "options",
    [{}, {"columns": ["x"]}, {"n_rows": 10}, {"hive_partitioning": True}],
    ids=["all", "columns", "n_rows", "hive"],
)
def test_polars_read_ends_with_its_total(data, capsys, options):
    # issue 23, finding 9: pl.read_tfrecord(progress=True) ended without a total
    assert pl.read_tfrecord(data, progress=True, **options).height == (10 if "n_rows" in options else N)
    line = _final(capsys.readouterr().err)
    assert re.match(r"reading: 100%\|[^|]*\| ([0-9.]+[kMG]?)/\1 ", line), line


def _held_compression_bars(monkeypatch):
    """Record every write bar, and hold compressed output until the returned event is
    set: (bars, release)."""
    import io
    import threading

    import tfsql.compressing

    bars = []

    def recording_bar(desc, *, total, file=None):
        bars.append(tfsql.progress._tqdm(desc=desc, total=total, unit=" rows", file=io.StringIO()))
        return bars[-1]

    monkeypatch.setattr(tfsql.progress, "write_bar", recording_bar)
    release = threading.Event()
    real_emit = tfsql.compressing.CompressedStream._emit

    def held_emit(self, data):
        release.wait(60)
        real_emit(self, data)

    monkeypatch.setattr(tfsql.compressing.CompressedStream, "_emit", held_emit)
    return bars, release


def test_a_compressed_write_counts_rows_once_they_are_compressed(tmp_path, monkeypatch):
    # issue 23, finding 9: a gzip write's bar reached 100% as the rows were taken from
    # the input and then sat there for seconds while the compression threads caught up.
    # Here compression is held until the input is consumed: the bar must not be full then.
    import threading

    bars, release = _held_compression_bars(monkeypatch)
    consumed = threading.Event()
    table = pa.table({"x": range(1000), "k": [i % 2 for i in range(1000)]})

    def batches():
        yield from table.to_batches(max_chunksize=100)
        consumed.set()

    reader = pa.RecordBatchReader.from_batches(table.schema, batches())
    writer = threading.Thread(
        target=tfsql.write_tfrecord,
        args=(reader, tmp_path / "w"),
        kwargs={"compression": "gzip", "threads": 2, "partition_by": "k", "progress": True},
    )
    writer.start()
    try:
        assert consumed.wait(60)
        assert bars[0].n < 1000  # every row taken from the input, none of them compressed yet
    finally:
        release.set()
        writer.join(60)
    assert bars[0].n == 1000
    assert tfsql.read_tfrecord(tmp_path / "w").num_rows == 1000


def test_a_compressed_polars_write_counts_rows_once_they_are_compressed(tmp_path, monkeypatch):
    # issue 23, finding 9, for df.tfrecord.write(progress=True): the Polars writer counted
    # rows as it handed them to the writer, so a gzip write reached 100% and then sat
    # there while compression caught up. Its bar is now the writer's, with the frame's
    # row count as its total.
    import threading

    import polars as pl

    import tfsql.polars.sink

    bars, release = _held_compression_bars(monkeypatch)
    consumed = threading.Event()
    real_reader = tfsql.polars.sink._arrow_reader

    def watched_reader(schema, frames):
        def watched():
            yield from frames
            consumed.set()

        return real_reader(schema, watched())

    monkeypatch.setattr(tfsql.polars.sink, "_arrow_reader", watched_reader)
    df = pl.DataFrame({"x": range(1000), "k": [i % 2 for i in range(1000)]})
    writer = threading.Thread(
        target=tfsql.polars.sink.write_frame,
        args=(df, tmp_path / "w"),
        kwargs={"compression": "gzip", "threads": 2, "partition_by": "k", "progress": True},
    )
    writer.start()
    try:
        assert consumed.wait(60)
        assert bars[0].total == 1000
        assert bars[0].n < 1000  # every row taken from the frame, none of them compressed yet
    finally:
        release.set()
        writer.join(60)
    assert bars[0].n == 1000
    assert tfsql.read_tfrecord(tmp_path / "w").num_rows == 1000
