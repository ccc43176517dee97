"""Whole files read in pieces by the decode threads (``Scanner._reads_in_pieces``).

A local uncompressed file of 4 MiB or more is read, with several threads, as byte
ranges of about a batch, each by a decode thread, though no option split it. That must
not show: the rows, and every error, warning and ``on_corrupt`` report, equal those of a
sequential read (one thread), with file-wide record numbers and no byte-range label.
Here files are small and the pieces 4,000 bytes, so that a file is many pieces.
"""

from __future__ import annotations

import warnings

import pyarrow as pa
import pytest

import tfsql
import tfsql.scanning
from tfrecord_files import example, frame
from tfsql.errors import CorruptRecordError, SchemaError

N = 300
SCHEMA = pa.schema({"x": pa.int64(), "blob": pa.binary()})


@pytest.fixture
def pieces(monkeypatch) -> list:
    """Read every file in pieces of 4,000 bytes; returns the pieces read."""
    monkeypatch.setattr(tfsql.scanning, "_PIECE_MIN_FILE_BYTES", 0)
    monkeypatch.setattr(tfsql.scanning, "piece_bytes", lambda batch_bytes: 4000)
    read: list = []
    original = tfsql.scanning.Scanner._read_range

    def recording(self, decoder, file_index, task, *args, **kwargs):
        read.append((task.start, task.stop, task.whole_file))
        return original(self, decoder, file_index, task, *args, **kwargs)

    monkeypatch.setattr(tfsql.scanning.Scanner, "_read_range", recording)
    return read


def _payloads() -> list[bytes]:
    return [example({"x": i, "blob": bytes([i % 251]) * (i % 5 * 40)}) for i in range(N)]


def _write(tmp_path, damage) -> str:
    """The N records, framed, with ``damage(data, offsets, payloads)`` applied."""
    payloads = _payloads()
    frames = [frame(p) for p in payloads]
    offsets = [sum(len(f) for f in frames[:i]) for i in range(N)]
    data = bytearray(b"".join(frames))
    damage(data, offsets, payloads)
    path = tmp_path / "data.tfrecord"
    path.write_bytes(bytes(data))
    return str(path)


def _bad_data_crcs(*records):
    def damage(data, offsets, payloads):
        for i in records:
            data[offsets[i] + 12 + len(payloads[i])] ^= 0x5A

    return damage


def _bad_length_crc(record):
    def damage(data, offsets, payloads):
        data[offsets[record] + 9] ^= 0x01

    return damage


def _truncated(data, offsets, payloads):
    del data[-7:]


def _unreadable_payload(record):
    """A payload that is no protobuf, under a valid CRC (re-framed)."""

    def damage(data, offsets, payloads):
        start = offsets[record]
        end = start + 16 + len(payloads[record])
        data[start:end] = frame(b"\xff" * len(payloads[record]))

    return damage


def _outcome(path: str, threads: int, on_corrupt="raise", **options):
    """Rows before the first error, the error (type and message), and the warnings."""
    rows: list[int] = []
    reports: list = []
    if on_corrupt == "collect":
        on_corrupt = lambda e: reports.append((e.reason, e.record_index, e.offset, e.path))  # noqa: E731
    error = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            ds = tfsql.dataset(path, schema=SCHEMA, threads=threads, on_corrupt=on_corrupt, **options)
            for batch in ds.to_batches():
                rows.extend(batch.column("x").to_pylist())
        except (CorruptRecordError, SchemaError) as exc:
            error = (type(exc).__name__, str(exc))
    return rows, error, [str(w.message) for w in caught], reports


def test_a_sound_file_is_read_in_pieces_with_its_rows_in_order(tmp_path, pieces):
    path = _write(tmp_path, lambda *a: None)
    table = tfsql.read_tfrecord(path, threads=2)
    assert table.column("x").to_pylist() == list(range(N))
    assert table.column("blob").to_pylist()[:3] == [b"", bytes([1]) * 40, bytes([2]) * 80]
    size = len(open(path, "rb").read())
    assert len(pieces) == -(-size // 4000) and all(whole for _, _, whole in pieces)
    assert [start for start, _, _ in pieces[:3]] == [0, 4000, 8000]


DAMAGES = {
    "data_crc": _bad_data_crcs(0, 41, 42, 150, N - 1),
    "length_crc": _bad_length_crc(150),
    "truncated": _truncated,
    "malformed": _unreadable_payload(200),
}


@pytest.mark.parametrize("damage", list(DAMAGES), ids=list(DAMAGES))
@pytest.mark.parametrize("on_corrupt", ["raise", "skip", "collect"])
def test_corruption_is_reported_as_a_sequential_read_reports_it(tmp_path, pieces, damage, on_corrupt):
    path = _write(tmp_path, DAMAGES[damage])
    expected = _outcome(path, 1, on_corrupt)
    assert pieces == []  # one thread: no pieces
    got = _outcome(path, 2, on_corrupt)
    assert pieces, "the file was not read in pieces"
    assert got[1:] == expected[1:]  # the error, the warnings, the reports
    assert expected[1] is not None or expected[2] or expected[3]  # something was reported
    assert "[bytes" not in repr(got)
    if expected[1] is None:
        assert got[0] == expected[0]
    else:  # a failed scan yields whole batches before its error: some of the rows before it
        assert got[0] == list(range(len(got[0])))


def test_a_kind_mismatch_names_the_file_wide_record(tmp_path, pieces):
    def damage(data, offsets, payloads):
        start = offsets[250]
        data[start : start + 16 + len(payloads[250])] = frame(example({"x": [1.5], "blob": b""}))

    path = _write(tmp_path, damage)
    rows, error, _, _ = _outcome(path, 2)
    assert pieces
    assert rows == list(range(len(rows))) and len(rows) < 250
    assert error is not None and error[0] == "SchemaError" and "record 250 " in error[1], error
    assert error == _outcome(path, 1)[1]


def test_a_feature_missing_from_the_inferred_schema_is_named_with_the_plain_path(tmp_path, pieces):
    payloads = [example({"x": i}) for i in range(400)] + [example({"x": 400, "late": 1})]
    path = tmp_path / "late.tfrecord"
    path.write_bytes(b"".join(frame(p) for p in payloads))
    with pytest.warns(UserWarning, match="feature 'late'") as caught:
        table = tfsql.read_tfrecord(str(path), threads=2, infer_sample=10)
    assert table.column("x").to_pylist() == list(range(401))
    assert len(pieces) > 1
    message = next(str(w.message) for w in caught if "late" in str(w.message))
    assert f"in {path} is not in the schema" in message
