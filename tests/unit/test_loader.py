"""tfsql.loader without any framework: random access, selection, exact sharding over
(rank, worker), shuffles, resume, NumPy batches, compressed and stale-index files."""

from __future__ import annotations

import collections
import gzip
import json
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import tfsql
from tfsql.errors import CorruptRecordError
from tfsql.loader import ChangedFileError, Loader, NotRandomAccessError, RecordDataset, epoch_order
from tfsql.loader import loader as loader_module
from tfsql.record_index import StaleIndexWarning, write_index

N = 1000


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    """1000 records (x = 0..999) in 3 files per partition k = x % 2."""
    out = tmp_path_factory.mktemp("loader") / "data"
    x = np.arange(N)
    table = pa.table({"x": x, "k": x % 2, "v": [[float(i)] * (i % 3) for i in range(N)]})
    tfsql.write_tfrecord(table, str(out), partition_by=["k"], max_rows_per_file=200)
    return str(out)


def _iterate_worker(monkeypatch, loader: Loader, worker: int, num_workers: int) -> list[dict]:
    """What ``loader`` yields inside DataLoader worker ``worker`` of ``num_workers``."""
    monkeypatch.setattr(loader_module, "current_worker", lambda: (worker, num_workers))
    return list(loader)


def _epoch_by_rank(monkeypatch, ds, *, world=4, workers=3, **options) -> dict[int, list[list[int]]]:
    """Each rank's batches (of x values) in the order a DataLoader collects them from
    its workers (round-robin from worker 0)."""
    by_rank = {}
    for rank in range(world):
        per_worker = [
            [
                b["x"].tolist()
                for b in _iterate_worker(monkeypatch, Loader(ds, rank=rank, world_size=world, **options), w, workers)
            ]
            for w in range(workers)
        ]
        merged = []
        for k in range(max(len(p) for p in per_worker)):
            merged += [p[k] for p in per_worker if k < len(p)]
        by_rank[rank] = merged
    return by_rank


@pytest.mark.parametrize("shuffle", [None, "exact", "block"])
def test_four_ranks_three_workers_read_every_selected_record_once(monkeypatch, data_dir, shuffle):
    ds = RecordDataset(data_dir, columns=["x"], where=pc.field("x").isin([x for x in range(N) if x % 5]))  # 800 records
    selected = [x for x in range(N) if x % 5]
    by_rank = _epoch_by_rank(monkeypatch, ds, batch_size=16, shuffle=shuffle, seed=3, block_size=8, window=4)
    assert [len(b) for b in by_rank.values()] == [13] * 4 == [len(Loader(ds, batch_size=16, rank=0, world_size=4))] * 4
    everything = [x for batches in by_rank.values() for batch in batches for x in batch]
    assert sorted(everything) == selected  # each selected record exactly once
    # the order a rank sees does not depend on its number of workers
    one_worker = _epoch_by_rank(
        monkeypatch, ds, workers=1, batch_size=16, shuffle=shuffle, seed=3, block_size=8, window=4
    )
    assert one_worker == by_rank


def test_uneven_epoch_is_padded_or_cut_to_equal_batch_counts(monkeypatch, data_dir):
    ds = RecordDataset(data_dir, columns=["x"], where="x % 3 <> 0")  # 666 records
    padded = _epoch_by_rank(monkeypatch, ds, batch_size=16, shuffle="exact", seed=1)
    assert [len(b) for b in padded.values()] == [11] * 4  # 167 records each: 10 full batches and 7
    counts = collections.Counter(x for batches in padded.values() for batch in batches for x in batch)
    assert sorted(counts) == [x for x in range(N) if x % 3]
    first_two = ds.read_arrow(epoch_order(666, shuffle="exact", seed=1, epoch=0)[:2]).column("x")
    assert {x for x, c in counts.items() if c == 2} == set(first_two.to_pylist())  # padding repeats the first
    assert sum(counts.values()) == 668
    cut = _epoch_by_rank(monkeypatch, ds, batch_size=16, shuffle="exact", seed=1, drop_last=True)
    assert [len(b) for b in cut.values()] == [10] * 4
    flat = [x for batches in cut.values() for batch in batches for x in batch]
    assert len(flat) == len(set(flat)) == 640 and all(len(b) == 16 for bs in cut.values() for b in bs)


@pytest.mark.parametrize("shuffle", ["exact", "block"])
def test_epochs_differ_and_seed_and_epoch_repeat(data_dir, shuffle):
    ds = RecordDataset(data_dir, columns=["x"])

    def epoch(seed, number):
        loader = Loader(ds, batch_size=100, shuffle=shuffle, seed=seed, epoch=number)
        return np.concatenate([b["x"] for b in loader]).tolist()

    first, second = epoch(5, 0), epoch(5, 1)
    assert sorted(first) == sorted(second) == list(range(N))
    assert first != second and first != list(range(N))
    assert epoch(5, 0) == first and epoch(6, 0) != first
    loader = Loader(ds, batch_size=100, shuffle=shuffle, seed=5)
    assert [np.concatenate([b["x"] for b in loader]).tolist() for _ in range(2)] == [first, second]  # moves on


def test_block_shuffle_keeps_runs_of_consecutive_records():
    order = epoch_order(1000, shuffle="block", seed=0, epoch=0, block_size=50, window=1)
    assert sorted(order.tolist()) == list(range(1000))
    runs = order.reshape(20, 50)
    assert (np.diff(runs, axis=1) == 1).all() and runs[:, 0].tolist() != list(range(0, 1000, 50))


def test_resume_mid_epoch_yields_exactly_the_rest(data_dir):
    ds = RecordDataset(data_dir, columns=["x"])
    loader = Loader(ds, batch_size=64, shuffle="exact", seed=11, epoch=2, rank=1, world_size=2)
    it = iter(loader)
    head = [next(it)["x"].tolist() for _ in range(3)]
    state = loader.state_dict()
    rest = [b["x"].tolist() for b in it]
    assert state["batches"] == 3 and state["epoch"] == 2 and len(head) + len(rest) == len(loader) == 8
    resumed = Loader(
        RecordDataset(data_dir, columns=["x"]), batch_size=64, shuffle="exact", seed=11, rank=1, world_size=2
    )
    resumed.load_state_dict(json.loads(json.dumps(state)))
    assert [b["x"].tolist() for b in resumed] == rest


def test_resume_in_a_new_process(data_dir, tmp_path):
    """A state saved as JSON by one process resumes the epoch in another."""
    script = textwrap.dedent(
        """
        import json, sys
        from tfsql.loader import Loader, RecordDataset
        loader = Loader(RecordDataset(sys.argv[1], columns=["x"]), batch_size=100, shuffle="block", seed=2, threads=2)
        if sys.argv[2] == "save":
            it = iter(loader)
            [next(it) for _ in range(4)]
            json.dump(loader.state_dict(), open(sys.argv[3], "w"))
            print(json.dumps([b["x"].tolist() for b in it]))
        else:
            loader.load_state_dict(json.load(open(sys.argv[3])))
            print(json.dumps([b["x"].tolist() for b in loader]))
        """
    )
    state = str(tmp_path / "state.json")

    def run(mode):
        done = subprocess.run(
            [sys.executable, "-c", script, data_dir, mode, state], capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    rest = run("save")
    assert len(rest) == 6 and run("load") == rest


def test_load_state_dict_refuses_another_plan(data_dir):
    ds = RecordDataset(data_dir, columns=["x"])
    state = Loader(ds, batch_size=64, shuffle="exact", seed=1).state_dict()
    with pytest.raises(ValueError, match="taken with seed=1, this loader has seed=2"):
        Loader(ds, batch_size=64, shuffle="exact", seed=2).load_state_dict(state)


def test_random_access_reads_any_positions_in_the_order_asked(data_dir):
    ds = RecordDataset(data_dir, columns=["x", "k", "v"])
    truth = {x: (x % 2, [float(x)] * (x % 3)) for x in range(N)}
    positions = [999, 0, 500, 0, 123]
    batch = ds.__getitems__(positions)
    xs = ds.record_ids[positions]  # record ids follow the files' order, not x
    got = [int(x) for x in batch["x"]]
    assert got == [int(ds.read_arrow([p]).column("x")[0].as_py()) for p in positions]
    assert batch["k"].tolist() == [truth[x][0] for x in got]
    offsets = batch["v_offsets"]
    assert [batch["v"][offsets[i] : offsets[i + 1]].tolist() for i in range(5)] == [truth[x][1] for x in got]
    assert len(set(xs.tolist())) == 4
    assert ds[-1]["x"] == ds.__getitems__([len(ds) - 1])["x"][0]
    with pytest.raises(IndexError, match="position 1000 is out of range for 1000 records"):
        ds[1000]


def test_a_batch_of_consecutive_records_is_one_read_and_one_decode(data_dir, monkeypatch):
    from tfsql.loader import reading

    ds = RecordDataset(data_dir, columns=["x"])
    runs, decodes = [], []
    real_runs, real_decode = reading._runs, ds._reader.decoder.decode
    monkeypatch.setattr(reading, "_runs", lambda *a: runs.append(len(real_runs(*a)[0])) or real_runs(*a))
    monkeypatch.setattr(ds._reader.decoder, "decode", lambda block: decodes.append(len(block)) or real_decode(block))
    ds.__getitems__(np.arange(10, 150))  # within one file
    assert runs == [1] and decodes == [140]
    runs.clear(), decodes.clear()
    ds.__getitems__([5, 250, 6, 450])  # three files (200 records each): one run each (5 and 6 adjacent), one decode
    assert runs == [1, 1, 1] and decodes == [4]
    runs.clear(), decodes.clear()
    ds.__getitems__([5, 50, 250])  # 5 and 50: two runs of one file (over a KiB apart)
    assert sorted(runs) == [1, 2] and decodes == [3]


def test_outputs_as_numpy(tmp_path):
    table = pa.table(
        {
            "label": pa.array([1, 0, 1], pa.int64()),
            "fixed": pa.array([[1, 2], [3, 4], [5, 6]], pa.list_(pa.int64(), 2)),
            "image": pa.array([[[0, 1, 2], [3, 4, 5]]] * 3, pa.list_(pa.list_(pa.float32(), 3), 2)),
            "tokens": [[1, 2, 3], [], [4]],
            "name": ["a", "bb", "c"],
            "blob": [b"\x00", b"\x01\x02", b""],
        }
    )
    tfsql.write_tfrecord(table, str(tmp_path / "d"))
    ds = RecordDataset(str(tmp_path / "d"), schema=table.schema)
    out = ds.__getitems__([0, 1, 2])
    assert out["fixed"].tolist() == [[1, 2], [3, 4], [5, 6]] and out["fixed"].shape == (3, 2)
    assert out["image"].shape == (3, 2, 3) and out["image"].dtype == np.float32
    assert out["tokens"].tolist() == [1, 2, 3, 4] and out["tokens_offsets"].tolist() == [0, 3, 3, 4]
    assert out["name"] == ["a", "bb", "c"] and out["blob"] == [b"\x00", b"\x01\x02", b""]
    padded = RecordDataset(
        str(tmp_path / "d"), columns=["tokens", "blob"], pad={"tokens": (3, -1)}, bytes_as="arrow", schema=table.schema
    )
    out = padded.__getitems__([0, 1, 2])
    assert out["tokens"].tolist() == [[1, 2, 3], [-1, -1, -1], [4, -1, -1]] and out["tokens_lengths"].tolist() == [
        3,
        0,
        1,
    ]
    assert out["blob"].to_pylist() == [b"\x00", b"\x01\x02", b""]
    with pytest.raises(ValueError, match="column 'tokens' holds 3 values in record 0, more than its padded length 2"):
        RecordDataset(str(tmp_path / "d"), columns=["tokens"], pad={"tokens": (2, 0)})[0]
    shaped = RecordDataset(str(tmp_path / "d"), columns=["tokens"], shapes={"tokens": (1,)})
    with pytest.raises(ValueError, match=r"column 'tokens' holds 0 values in record 1, not 1 \(shape \(1,\)\)"):
        shaped.__getitems__([1])
    assert shaped.__getitems__([2])["tokens"].tolist() == [[4]]
    one = RecordDataset(str(tmp_path / "d"), columns=["label", "tokens"])[0]
    assert one["label"] == 1 and one["tokens"].tolist() == [1, 2, 3] and set(one) == {"label", "tokens"}


def test_missing_values_raise_unless_filled(tmp_path):
    tfsql.write_tfrecord(pa.table({"x": [1, None, 3], "y": [[1, 5], None, [2]]}), str(tmp_path / "d"))
    ds = RecordDataset(str(tmp_path / "d"), columns=["x"])
    with pytest.raises(ValueError, match=r"column 'x' has no value in record 1; pass fill=\{'x': \.\.\.\}"):
        ds.__getitems__([0, 1])
    filled = RecordDataset(str(tmp_path / "d"), fill={"x": -1, "y": []}).__getitems__([0, 1, 2])
    assert filled["x"].tolist() == [1, -1, 3] and filled["y_offsets"].tolist() == [0, 2, 2, 3]


def test_transform_runs_on_each_batch(data_dir):
    ds = RecordDataset(data_dir, columns=["x"], transform=lambda b: {"double": b["x"] * 2})
    assert ds.__getitems__([0, 1])["double"].tolist() == [2 * x for x in ds.read_arrow([0, 1]).column("x").to_pylist()]
    doubled = np.concatenate([b["double"] for b in Loader(ds, batch_size=300)])
    assert doubled.tolist() == [2 * x for x in ds.read_arrow(range(N)).column("x").to_pylist()]


def test_selections_agree_and_prune_partitions(data_dir, tmp_path):
    ds = RecordDataset(data_dir, columns=["x"], batch_size=7)  # several decoded batches per file
    expected = [int(i) for i in ds.record_ids if ds.read_arrow([i]).column("x")[0].as_py() % 7 == 3]
    for where in (pc.field("x").isin(list(range(3, N, 7))), pl.col("x") % 7 == 3, "x % 7 = 3"):
        assert RecordDataset(data_dir, columns=["x"], where=where, batch_size=7).record_ids.tolist() == expected
    # partition filters never open the other partition's files: corrupt them and select
    broken = tmp_path / "broken"
    tfsql.write_tfrecord(pa.table({"x": [1, 2, 3, 4], "k": [0, 1, 0, 1]}), str(broken), partition_by=["k"])
    for f in (broken / "k=1").iterdir():
        f.write_bytes(b"\x00" * 40)
    both = ((pc.field("k") == 0) & (pc.field("x") > 1), (pl.col("k") == 0) & (pl.col("x") > 1), "k = 0 AND x > 1")
    for where in (pc.field("k") == 0, pl.col("k") == 0, "k = 0", *both):
        kept = RecordDataset(str(broken), where=where, columns=["x"], schema={"x": pa.int64()})
        assert sorted(kept.__getitems__(range(len(kept)))["x"].tolist()) == ([1, 3] if "x" not in str(where) else [3])


def test_gzip_files_iterate_in_order_and_refuse_random_access(tmp_path):
    tfsql.write_tfrecord(
        pa.table({"x": list(range(50))}), str(tmp_path / "z"), compression="gzip", max_rows_per_file=20
    )
    ds = RecordDataset(str(tmp_path / "z"))
    assert len(ds) == 50 and not ds.random_access
    with pytest.raises(
        NotRandomAccessError,
        match=r"\.gz is compressed: its records have no byte offsets, so they cannot be read by position",
    ):
        ds[3]
    with pytest.raises(NotRandomAccessError, match="Iterate a Loader with shuffle=None"):
        Loader(ds, shuffle="exact")
    assert [b["x"].tolist() for b in Loader(ds, batch_size=15)] == [
        list(range(i, min(i + 15, 50))) for i in range(0, 50, 15)
    ]
    ranks = [np.concatenate([b["x"] for b in Loader(ds, batch_size=8, rank=r, world_size=2)]).tolist() for r in (0, 1)]
    assert ranks == [list(range(25)), list(range(25, 50))]


def test_a_stale_index_sidecar_is_detected_and_not_used(tmp_path):
    path = str(tmp_path / "d" / "part.tfrecord")
    os.makedirs(os.path.dirname(path))
    tfsql.write_tfrecord(pa.table({"s": ["a", "bb", "ccc"]}), path)
    write_index(path)
    assert [f.where for f in RecordDataset(path).index.files] == ["sidecar"]
    other = str(tmp_path / "other.tfrecord")
    tfsql.write_tfrecord(pa.table({"s": ["dddd", "e", "ff", "g"]}), other)
    os.replace(other, path)  # the file changes, its sidecar stays
    with pytest.warns(StaleIndexWarning, match="ignoring the record index"):
        ds = RecordDataset(path)
    assert [f.where for f in ds.index.files] == ["headers"]
    assert ds.__getitems__([3, 0])["s"] == ["g", "dddd"]


def test_a_file_changed_after_indexing_raises_instead_of_reading_other_bytes(tmp_path):
    path = str(tmp_path / "part.tfrecord")
    tfsql.write_tfrecord(pa.table({"s": ["a", "bb", "ccc"]}), path)
    ds = RecordDataset(path)
    tfsql.write_tfrecord(pa.table({"s": ["dddd", "e", "ff"]}), path, mode="overwrite")
    with pytest.raises(tfsql.FileChangedError, match=r"part\.tfrecord changed while it was read: another file"):
        ds.__getitems__([1])


def test_a_file_rewritten_in_place_unnoticed_by_its_stamp_fails_the_header_check(tmp_path):
    """Same size, same inode, its old modification time put back: only the record
    headers show the change."""
    path = str(tmp_path / "part.tfrecord")
    tfsql.write_tfrecord(pa.table({"s": ["a", "bb", "ccc"]}), path)
    ds = RecordDataset(path)
    other = str(tmp_path / "other.tfrecord")
    tfsql.write_tfrecord(pa.table({"s": ["aa", "b", "ccc"]}), other)
    before = os.stat(path)
    assert os.path.getsize(other) == before.st_size
    with open(path, "r+b") as f, open(other, "rb") as new:
        f.write(new.read())
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    with pytest.raises(
        ChangedFileError, match=r"record 1 at byte \d+: the header there does not hold the indexed length"
    ):
        ds.__getitems__([1])


def test_index_cache_keeps_header_walks_outside_the_data(data_dir, tmp_path):
    cache = str(tmp_path / "cache")
    before = sorted(os.listdir(os.path.join(data_dir, "k=0")))
    first = RecordDataset(data_dir, index_cache=cache)
    second = RecordDataset(data_dir, index_cache=cache)
    assert {f.where for f in first.index.files} == {"headers"} and {f.where for f in second.index.files} == {"cache"}
    assert sorted(os.listdir(os.path.join(data_dir, "k=0"))) == before and len(os.listdir(cache)) == 6
    assert second.__getitems__([7])["x"].tolist() == first.__getitems__([7])["x"].tolist()


def test_a_corrupt_record_in_a_batch_names_its_file_record_and_offset(tmp_path):
    out = tmp_path / "d"
    tfsql.write_tfrecord(pa.table({"x": list(range(10))}), str(out), max_rows_per_file=5)
    second = sorted(p for p in out.iterdir() if p.name.endswith(".tfrecord"))[1]
    data = bytearray(second.read_bytes())
    data[30 * 2 + 14] ^= 0xFF  # record 2's payload
    second.write_bytes(bytes(data))
    ds = RecordDataset(str(out), schema={"x": pa.int64()})
    with pytest.raises(CorruptRecordError, match=rf"{second.name}.*record 2.*byte 60"):
        ds.__getitems__([0, 9, 7, 1])
    assert ds.__getitems__([0, 9])["x"].tolist() == [0, 9]


def test_gzip_bytes_by_hand_are_detected(tmp_path):
    path = tmp_path / "a.tfrecord"
    tfsql.write_tfrecord(pa.table({"x": [1, 2]}), str(path))
    (tmp_path / "b.tfrecord").write_bytes(gzip.compress(path.read_bytes()))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ds = RecordDataset([str(path), str(tmp_path / "b.tfrecord")])
    assert [f.where for f in ds.index.files] == ["headers", "compressed"] and len(ds) == 4


def test_a_dataset_and_loader_pickle_for_worker_processes(data_dir):
    """Spawned workers (Grain, DataLoader with spawn) get a pickled copy: it reads the
    same records (its C decoder compiled again, its files opened again)."""
    import pickle

    ds = RecordDataset(data_dir, columns=["x", "k"])
    loader = Loader(ds, batch_size=50, shuffle="exact", seed=2)
    copy = pickle.loads(pickle.dumps(loader))
    assert [b["x"].tolist() for b in copy] == [b["x"].tolist() for b in loader]


def test_a_file_cut_short_after_indexing_raises_instead_of_faulting(tmp_path):
    """A file truncated since it was indexed raises on every later read, also of the
    records it still holds (as the scanner does: the file is another version now)."""
    path = tmp_path / "part.tfrecord"
    tfsql.write_tfrecord(pa.table({"x": list(range(100))}), str(path))
    ds = RecordDataset(str(path))
    assert ds.__getitems__([99])["x"].tolist() == [99]
    os.truncate(path, 30 * 50)
    cut = r"part\.tfrecord changed while it was read: its size went from 3000 to 1500 bytes; read it again"
    with pytest.raises(tfsql.FileChangedError, match=cut):
        ds.__getitems__([0, 99])
    with pytest.raises(tfsql.FileChangedError, match=cut):
        ds.__getitems__([3])


_CUT_WHILE_READING = textwrap.dedent(
    """
    import os, sys
    from tfsql.loader import RecordDataset

    def attempt(ds, ids):
        try:
            print(len(ds.__getitems__(ids)["s"]), "records")
        except Exception as exc:
            print(type(exc).__name__, exc)

    def cut_after_first_call(name, path):
        # another process truncates the file to 4096 bytes right after this call
        real = getattr(os, name)

        def call_then_cut(*args):
            result = real(*args)
            setattr(os, name, real)
            os.truncate(path, 4096)
            return result

        setattr(os, name, call_then_cut)

    for path in sys.argv[1:]:
        ds = RecordDataset(path)  # indexed: 2000 records
        attempt(ds, [0])  # the file is open (and was mapped, before)
        # a.tfrecord: the cut lands just after the reader looked at the file's size;
        # b.tfrecord: during the reads of the batch
        cut_after_first_call("fstat" if path.endswith("a.tfrecord") else "preadv", path)
        attempt(ds, list(range(2000)))
        attempt(ds, [1])
    """
)


def test_a_file_cut_short_while_a_batch_is_read_raises_and_never_signals(tmp_path):
    """A file truncated by another process while the loader reads it: reads are
    positioned reads (no mapping that could fault with SIGBUS, which killed the process
    before), and the change raises tfsql.FileChangedError naming the file and sizes."""
    paths = [str(tmp_path / "a.tfrecord"), str(tmp_path / "b.tfrecord")]
    for path in paths:
        tfsql.write_tfrecord(pa.table({"s": ["x" * 1000] * 2000}), path)
    size = os.path.getsize(paths[0])
    done = subprocess.run(
        [sys.executable, "-c", _CUT_WHILE_READING, *paths], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    cut = f"changed while it was read: its size went from {size} to 4096 bytes; read it again"
    assert done.stdout.splitlines() == [
        "1 records",
        "2000 records",  # read in full before the cut: the right bytes
        f"FileChangedError {paths[0]} {cut}",
        "1 records",
        f"FileChangedError {paths[1]} {cut}",
        f"FileChangedError {paths[1]} {cut}",
    ]
