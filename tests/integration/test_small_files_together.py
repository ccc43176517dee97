"""Many small files read together (tfsql.small_files, issue 34 item 7): exact values,
partition and file path columns per row, and every doubt (damage, a file that is not
TFRecord, compression, a change since listing, a value that does not cast, a feature
the schema lacks) read file by file, so that errors name the file, record and byte
offset exactly as a read of that file alone does."""

from __future__ import annotations

import gzip
import os
import warnings
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import tfsql
import tfsql.scanning
from tfrecord_files import write_examples

FILES = 40


def rows_of(i: int) -> list[dict]:
    """File i holds 1 + i % 3 records; ids are unique across files."""
    return [{"id": i * 10 + j, "name": f"n{i}-{j}", "v": [float(j), 0.5]} for j in range(1 + i % 3)]


def make_tree(root: Path) -> list[tuple[Path, int]]:
    """FILES small files in hive directories ``part=<i % 4>``; (path, part) in read order."""
    made = []
    for i in range(FILES):
        directory = root / f"part={i % 4}"
        directory.mkdir(parents=True, exist_ok=True)
        made.append((write_examples(directory / f"f{i:03d}.tfrecord", rows_of(i)), i % 4))
    return sorted(made, key=lambda item: str(item[0]).encode())


@pytest.fixture
def tree(tmp_path):
    return tmp_path, make_tree(tmp_path)


def expected(made: list[tuple[Path, int]]) -> dict[str, list]:
    out: dict[str, list] = {"id": [], "name": [], "v": [], "part": [], "path": []}
    for path, part in made:
        i = int(path.stem[1:])
        for row in rows_of(i):
            out["id"].append(row["id"])
            out["name"].append(row["name"])
            out["v"].append(row["v"])
            out["part"].append(part)
            out["path"].append(str(path))
    return out


def spy_runs(monkeypatch) -> list[int]:
    """The number of files of each run read together."""
    runs: list[int] = []
    real = tfsql.scanning.read_small_run

    def spy(found, files, options):
        runs.append(len(files))
        return real(found, files, options)

    monkeypatch.setattr(tfsql.scanning, "read_small_run", spy)
    return runs


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("batch_size", [4, 65536])
def test_many_small_files_read_together_give_every_value_exactly(tree, monkeypatch, threads, batch_size):
    root, made = tree
    runs = spy_runs(monkeypatch)
    table = tfsql.read_tfrecord(root, include_file_paths="path", threads=threads, batch_size=batch_size)
    assert runs and max(runs) > 1  # files were read together
    assert table.column_names == ["id", "name", "v", "part", "path"]
    assert table.to_pydict() == expected(made)
    batches = tfsql.dataset(root, batch_size=batch_size, threads=threads).to_batches()
    assert all(batch.num_rows <= batch_size for batch in batches)


def test_filter_projection_and_polars_over_small_files(tree):
    root, made = tree
    want = expected(made)
    keep = [k for k, part in enumerate(want["part"]) if part == 1 and want["name"][k].endswith(("-1", "-2"))]
    got = tfsql.dataset(root, include_file_paths="path").to_table(
        columns=["path", "id"], filter=(pc.field("part") == 1) & pc.match_substring_regex(pc.field("name"), "-[12]$")
    )
    assert got.to_pydict() == {"path": [want["path"][k] for k in keep], "id": [want["id"][k] for k in keep]}
    frame = tfsql.scan_tfrecord(root, include_file_paths="path").collect()
    assert frame.to_dict(as_series=False) == {**want, "v": [[float(x) for x in v] for v in want["v"]]}
    assert frame.schema["part"] == pl.Int64


def corrupt_payload(path: Path, record: int) -> int:
    """Flip a payload byte of ``record`` (of 2 or 3 equal-sized records); its offset."""
    data = bytearray(path.read_bytes())
    size = len(data) // len(rows_of(int(path.stem[1:])))
    data[record * size + 12 + 3] ^= 0xFF
    path.write_bytes(bytes(data))
    return record * size


def error_alone(path: Path, **options) -> Exception:
    with pytest.raises(tfsql.TFSQLError) as alone:
        tfsql.read_tfrecord(str(path), **options)
    return alone.value


@pytest.mark.parametrize("threads", [1, 2])
def test_a_damaged_file_among_small_files_is_named_with_its_record_and_offset(tree, threads):
    root, made = tree
    bad = made[17][0]
    offset = corrupt_payload(bad, 1)
    with pytest.raises(tfsql.CorruptRecordError) as raised:
        tfsql.read_tfrecord(root, threads=threads)
    error = raised.value
    assert (error.path, error.record_index, error.offset) == (str(bad), 1, offset)
    assert str(error) == str(error_alone(bad, threads=threads))
    with pytest.warns(UserWarning, match=rf"{bad.name}.* record 1 at byte {offset}"):
        skipped = tfsql.read_tfrecord(root, threads=threads, on_corrupt="skip")
    want = expected(made)
    lost = want["id"].index(int(bad.stem[1:]) * 10 + 1)
    assert skipped.column("id").to_pylist() == want["id"][:lost] + want["id"][lost + 1 :]


def test_a_file_that_is_not_tfrecord_among_small_files_is_named(tree):
    root, made = tree
    text = made[5][0]
    text.write_text("id,name\n1,a\n")
    with pytest.raises(tfsql.TFSQLError) as raised:
        tfsql.read_tfrecord(root, schema=pa.schema({"id": pa.int64()}))
    assert str(text) in str(raised.value)
    assert str(raised.value) == str(error_alone(text, schema=pa.schema({"id": pa.int64()})))


def test_compressed_small_files_among_plain_ones_read_exactly(tree):
    root, made = tree
    for path, _ in made[::3]:
        path.write_bytes(gzip.compress(path.read_bytes()))
    assert tfsql.read_tfrecord(root).to_pydict() == {k: v for k, v in expected(made).items() if k != "path"}


def test_a_small_file_changed_since_listing_raises_naming_it(tree):
    root, made = tree
    ds = tfsql.dataset(root)
    changed = made[23][0]
    with open(changed, "ab") as f:
        f.write(b"\0" * 7)
    with pytest.raises(tfsql.FileChangedError, match=rf"{changed.name} changed while it was read: its size went"):
        ds.to_table()


def test_a_small_file_rewritten_between_two_scans_raises_as_before(tree):
    root, made = tree
    ds = tfsql.dataset(root)
    assert ds.to_table().num_rows == len(expected(made)["id"])
    changed = made[8][0]
    data = changed.read_bytes()
    changed.write_bytes(data)  # same size, same inode, a new modification time
    os.utime(changed, ns=(0, 10**18))
    with pytest.raises(tfsql.FileChangedError, match=rf"{changed.name} changed while it was read"):
        ds.to_table()


def test_a_value_that_does_not_cast_names_its_file_record_and_offset(tree):
    root, made = tree
    target = made[29][0]
    rows = rows_of(int(target.stem[1:]))
    rows[-1]["id"] = 100_000  # beyond int16
    write_examples(target, rows)
    schema = pa.schema({"id": pa.int16(), "name": pa.string(), "v": pa.list_(pa.float32())})
    with pytest.raises(tfsql.SchemaError) as raised:
        tfsql.read_tfrecord(root, schema=schema)
    assert f"{target}, record {len(rows) - 1}" in str(raised.value)
    assert str(raised.value) == str(error_alone(target, schema=schema))


def test_a_feature_the_schema_lacks_is_reported_naming_its_file(tree):
    root, made = tree
    late = made[-3][0]
    rows = rows_of(int(late.stem[1:]))
    rows[0]["extra"] = 5
    write_examples(late, rows)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = tfsql.read_tfrecord(root, infer_files=1)
    messages = [str(w.message) for w in caught if "extra" in str(w.message)]
    assert messages == [
        f"feature 'extra' in {late} is not in the schema inferred from the sample, so it is not read; "
        "pass infer_sample=None (infer from every record) or schema= to include it"
    ]
    assert table.column("id").to_pylist() == expected(made)["id"]


def test_a_wide_record_of_every_kind_reads_exactly(tmp_path):
    keys = 2000
    row = {}
    for k in range(keys):
        kind = k % 4
        row[f"k{k}"] = k if kind == 0 else float(k) / 2 if kind == 1 else f"s{k}" if kind == 2 else [k, -k]
    path = write_examples(tmp_path / "wide.tfrecord", [row, {"k0": 7}])
    table = tfsql.read_tfrecord(path)
    assert table.num_columns == keys and table.num_rows == 2
    assert sorted(table.column_names) == sorted(row)
    first = table.slice(0, 1).to_pylist()[0]
    assert first == row
    second = table.slice(1, 1).to_pylist()[0]
    assert second == {name: (7 if name == "k0" else None) for name in row}
    frame = tfsql.scan_tfrecord(path).collect()
    assert frame.row(0, named=True) == row


def test_count_rows_counts_small_files_together_and_names_a_bad_header(tree, monkeypatch):
    root, made = tree
    runs = spy_runs(monkeypatch)
    assert tfsql.dataset(root).count_rows() == len(expected(made)["id"])
    assert runs and max(runs) > 1
    bad = made[11][0]
    data = bytearray(bad.read_bytes())
    data[9] ^= 0xFF  # the first record's length CRC
    bad.write_bytes(bytes(data))
    with pytest.raises(tfsql.CorruptRecordError) as raised:
        tfsql.dataset(root).count_rows()
    assert (raised.value.path, raised.value.record_index, raised.value.offset) == (str(bad), 0, 0)
    monkeypatch.setattr(tfsql.scanning, "read_small_run", lambda *args: None)  # each file alone
    with pytest.raises(tfsql.CorruptRecordError) as alone:
        tfsql.dataset(root).count_rows()
    assert str(raised.value) == str(alone.value)
