"""tfsql.loader's state and PyTorch's conventions, without any framework: a state knows
the records it resumes, set_epoch after a resume keeps the position, a peek does not use
up a batch, the rank is read when a pass begins, elastic resume on another world size,
and empty selections (issue 32)."""

from __future__ import annotations

import collections
import json
import os

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import tfsql
from tfsql.loader import Loader, RecordDataset
from tfsql.loader import loader as loader_module

N = 1200


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    """1200 records (id = 0..1199) in files of 250 records, partitioned by part = id % 3."""
    out = tmp_path_factory.mktemp("resume") / "data"
    ids = np.arange(N)
    parts = np.array(["a", "b", "c"])[ids % 3]
    tfsql.write_tfrecord(pa.table({"id": ids, "part": parts}), str(out), partition_by=["part"], max_rows_per_file=250)
    return str(out)


def _ids(batches) -> list[list[int]]:
    return [b["id"].tolist() for b in batches]


def _in_order(ds: RecordDataset) -> list[int]:
    """The ids of ``ds``'s records by position (partitions first)."""
    return ds.read_arrow(range(len(ds))).column("id").to_pylist()


def _rank_epoch(monkeypatch, loader: Loader, workers: int) -> list[list[int]]:
    """What ``loader`` delivers in one pass on its rank with ``workers`` DataLoader
    workers (0: in the process): each worker iterates its own copy of the loader, and
    the DataLoader collects their batches round-robin."""
    if workers == 0:
        return _ids(loader)
    per_worker = []
    for w in range(workers):
        copy = Loader.__new__(Loader)
        copy.__dict__.update({k: (list(v) if isinstance(v, list) else v) for k, v in loader.__dict__.items()})
        monkeypatch.setattr(loader_module, "current_worker", lambda w=w: (w, workers))
        per_worker.append(_ids(copy))
    monkeypatch.setattr(loader_module, "current_worker", lambda: (0, 1))
    merged = []
    for k in range(max(len(p) for p in per_worker)):
        merged += [p[k] for p in per_worker if k < len(p)]
    return merged


# ---------------------------------------------------------------------- 1. the state's identity
def test_a_state_of_another_selection_of_the_same_size_is_refused(data_dir):
    low = Loader(RecordDataset(data_dir, where="id < 600"), batch_size=10)
    it = iter(low)
    next(it)
    state = json.loads(json.dumps(low.state_dict()))
    high = Loader(RecordDataset(data_dir, where="id >= 600"), batch_size=10)
    assert len(high.dataset) == len(low.dataset) == 600
    with pytest.raises(ValueError, match=r"other records: the selection differs: the state selected 600 records"):
        high.load_state_dict(state)
    same = Loader(RecordDataset(data_dir, where=pc.field("id") < 600), batch_size=10)
    same.load_state_dict(state)  # the same records, chosen by another kind of filter
    assert _ids(same) == _ids(Loader(RecordDataset(data_dir, where="id < 600"), batch_size=10))[1:]


def test_a_state_over_partitions_of_the_same_size_names_the_files(data_dir):
    a = Loader(RecordDataset(data_dir, where="part = 'a'"), batch_size=10)
    state = a.state_dict()
    b = Loader(RecordDataset(data_dir, where="part = 'b'"), batch_size=10)
    with pytest.raises(ValueError, match=r"file part=a/\S+ held selected records when the state was taken"):
        b.load_state_dict(state)


def test_data_rewritten_with_the_same_count_is_noticed(tmp_path):
    import shutil

    out = str(tmp_path / "d")
    tfsql.write_tfrecord(pa.table({"id": list(range(100))}), out)
    loader = Loader(RecordDataset(out), batch_size=10)
    state = loader.state_dict()
    (name,) = [f for f in os.listdir(out) if f.endswith(".tfrecord")]
    path = os.path.join(out, name)
    stat = os.stat(path)

    def rewrite(ids):
        other = str(tmp_path / f"other{ids[0]}")
        tfsql.write_tfrecord(pa.table({"id": ids}), other)
        (written,) = [f for f in os.listdir(other) if f.endswith(".tfrecord")]
        shutil.copyfile(os.path.join(other, written), path)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))

    rewrite(list(range(99, -1, -1)))  # the same size, record sizes and count: other values
    assert os.path.getsize(path) == stat.st_size
    with pytest.raises(ValueError, match=rf"file {name} changed: its modification time was {stat.st_mtime_ns}"):
        Loader(RecordDataset(out), batch_size=10).load_state_dict(state)
    rewrite([i * 10**12 for i in range(100)])  # larger records
    with pytest.raises(ValueError, match=rf"file {name} changed: its size was {stat.st_size}"):
        Loader(RecordDataset(out), batch_size=10).load_state_dict(state)


def test_a_copy_of_the_data_elsewhere_resumes(data_dir, tmp_path):
    import shutil

    copy = str(tmp_path / "copy")
    shutil.copytree(data_dir, copy, copy_function=shutil.copy2)  # keeps modification times
    loader = Loader(RecordDataset(data_dir), batch_size=100, shuffle="exact", seed=1)
    it = iter(loader)
    next(it)
    state = loader.state_dict()
    rest = _ids(it)
    assert _ids(Loader(RecordDataset(copy), batch_size=100, shuffle="exact", seed=1).resumed(state)) == rest


# ---------------------------------------------------------------------- 2. PyTorch's conventions
def test_set_epoch_of_a_resumed_state_keeps_its_position(data_dir):
    ds = RecordDataset(data_dir)
    full = Loader(ds, batch_size=100, shuffle="exact", seed=2, epoch=3)
    epoch3 = _ids(full)
    saved = Loader(ds, batch_size=100, shuffle="exact", seed=2, epoch=3)
    it = iter(saved)
    [next(it) for _ in range(4)]
    state = saved.state_dict()
    resumed = Loader(ds, batch_size=100, shuffle="exact", seed=2)
    resumed.load_state_dict(state)
    seen = {}
    for epoch in range(3, 5):  # the usual loop after loading a checkpoint
        resumed.set_epoch(epoch)
        seen[epoch] = _ids(resumed)
    assert seen[3] == epoch3[4:]
    assert seen[4] == _ids(Loader(ds, batch_size=100, shuffle="exact", seed=2, epoch=4))
    resumed.set_epoch(3)  # asked again, after the resumed pass: the epoch from its start
    assert _ids(resumed) == epoch3


def test_a_peek_does_not_use_up_a_batch_of_the_next_loop(data_dir):
    loader = Loader(RecordDataset(data_dir), batch_size=500)
    ids = _in_order(loader.dataset)
    peek = next(iter(loader))["id"].tolist()
    assert peek == ids[:500] and loader.state_dict()["batches"] == 1
    assert _ids(loader) == [ids[:500], ids[500:1000], ids[1000:]]
    assert loader.epoch == 1 and loader.consumed == 0
    resumed = Loader(RecordDataset(data_dir), batch_size=500)
    resumed.load_state_dict({**loader.state_dict(), "epoch": 0, "batches": 1})
    next(iter(resumed))  # a peek after a resume: the loop still starts at the state's batch
    assert _ids(resumed) == [ids[500:1000], ids[1000:]]


def test_passes_move_epochs_the_same_for_any_number_of_workers(monkeypatch, data_dir):
    ds = RecordDataset(data_dir)
    orders = {e: _ids(Loader(ds, batch_size=100, shuffle="exact", seed=5, epoch=e)) for e in range(3)}
    loader = Loader(ds, batch_size=100, shuffle="exact", seed=5)
    assert [_ids(loader) for _ in range(3)] == [orders[0], orders[1], orders[2]]
    for workers in (1, 3):  # in workers, copies iterate; set_epoch in the main process reaches each pass
        loader = Loader(ds, batch_size=100, shuffle="exact", seed=5)
        for e in (0, 2, 1):
            loader.set_epoch(e)
            assert _rank_epoch(monkeypatch, loader, workers) == orders[e]


def test_the_rank_is_read_when_a_pass_begins(monkeypatch, data_dir):
    ds = RecordDataset(data_dir)
    loader = Loader(ds, batch_size=100)  # made before the process group
    assert (loader.rank, loader.world_size, len(loader)) == (0, 1, 12)
    monkeypatch.setattr(loader_module, "current_rank", lambda: (2, 3))
    assert (loader.rank, loader.world_size, len(loader)) == (2, 3, 4)
    ids = _in_order(ds)
    assert _ids(loader) == [ids[800 + 100 * k : 900 + 100 * k] for k in range(4)]
    assert loader.state_dict()["world_size"] == 3


# ---------------------------------------------------------------------- 3. elastic resume
def _elastic(monkeypatch, data_dir, *, new_world, workers, shuffle="exact", drop_last=False, batch_size=10, taken=3):
    """Four ranks deliver ``taken`` batches of epoch 2; the job resumes on ``new_world``
    ranks. Returns (ids delivered before, each new rank's batches, state)."""
    ds = RecordDataset(data_dir)
    options = dict(batch_size=batch_size, shuffle=shuffle, seed=7, drop_last=drop_last, epoch=2)
    before = []
    for rank in range(4):
        old = Loader(ds, rank=rank, world_size=4, **options)
        it = iter(old)
        before += [x for _ in range(taken) for x in next(it)["id"].tolist()]
        state = old.state_dict()  # the same on every rank
    state = json.loads(json.dumps(state))
    after = {}
    for rank in range(new_world):
        new = Loader(RecordDataset(data_dir), rank=rank, world_size=new_world, **{**options, "epoch": 0})
        new.load_state_dict(state)
        new.set_epoch(2)
        after[rank] = _rank_epoch(monkeypatch, new, workers)
        assert new.epoch == (3 if workers == 0 else 2)  # in workers, copies iterate
    return before, after, state


@pytest.mark.parametrize("new_world", [3, 6])
@pytest.mark.parametrize("workers", [0, 2])
def test_a_four_rank_state_resumes_on_another_world_size_exactly_once(monkeypatch, data_dir, new_world, workers):
    before, after, state = _elastic(monkeypatch, data_dir, new_world=new_world, workers=workers)
    assert state["world_size"] == 4 and state["batches"] == 3 and len(before) == 120
    counts = {len(batches) for batches in after.values()}
    assert counts == {(N - 120) // new_world // 10}  # equal batch counts: 36 on 3 ranks, 18 on 6
    delivered = before + [x for batches in after.values() for b in batches for x in b]
    assert sorted(delivered) == list(range(N))  # every record of the epoch exactly once
    # the next epoch is the one a fresh run on the new world size sees
    for rank in range(new_world):
        resumed = Loader(
            RecordDataset(data_dir), rank=rank, world_size=new_world, batch_size=10, shuffle="exact", seed=7
        )
        resumed.load_state_dict(state)
        _ids(resumed)
        fresh = Loader(RecordDataset(data_dir), rank=rank, world_size=new_world, batch_size=10, shuffle="exact", seed=7)
        fresh.set_epoch(3)
        assert resumed.epoch == 3 and _ids(resumed) == _ids(fresh)


def test_an_elastic_resume_can_be_resumed_again(data_dir):
    ds = RecordDataset(data_dir)
    options = dict(batch_size=10, shuffle="block", seed=1, block_size=16, window=4)
    state = {**Loader(ds, rank=0, world_size=4, **options).state_dict(), "batches": 3}
    delivered = []
    for rank in range(4):
        positions = Loader(ds, rank=rank, world_size=4, **options).rank_positions()[:30]
        delivered += ds.read_arrow(positions).column("id").to_pylist()
    on_three = [Loader(ds, rank=r, world_size=3, **options).resumed(state) for r in range(3)]
    iters = [iter(loader) for loader in on_three]
    for it in iters:
        delivered += [x for _ in range(5) for x in next(it)["id"].tolist()]
    second = json.loads(json.dumps(on_three[0].state_dict()))
    assert second["segments"] == [[4, 3]] and (second["world_size"], second["batches"]) == (3, 5)
    rest = [Loader(ds, rank=r, world_size=2, **options).resumed(second) for r in range(2)]
    tails = [_ids(loader) for loader in rest]
    assert len(tails[0]) == len(tails[1])
    delivered += [x for t in tails for b in t for x in b]
    assert sorted(delivered) == list(range(N))


def test_an_elastic_resume_pads_like_any_epoch(data_dir):
    """1200 - 4 * 2 * 7 = 1144 records left over 5 ranks: one repeated, equal batch counts."""
    ds = RecordDataset(data_dir)
    state = {**Loader(ds, rank=0, world_size=4, batch_size=7).state_dict(), "batches": 2}
    before = []
    for rank in range(4):
        before += (
            ds.read_arrow(Loader(ds, rank=rank, world_size=4, batch_size=7).rank_positions()[:14])
            .column("id")
            .to_pylist()
        )
    after = [_ids(Loader(ds, rank=r, world_size=5, batch_size=7).resumed(state)) for r in range(5)]
    assert {len(a) for a in after} == {33}  # 229 records a rank, in 33 batches
    counts = collections.Counter(before + [x for a in after for b in a for x in b])
    assert sorted(counts) == list(range(N)) and sum(counts.values()) == N + 1
    with pytest.raises(ValueError, match="3 batches delivered of an epoch of 2"):
        Loader(ds, batch_size=700).load_state_dict({**Loader(ds, batch_size=700).state_dict(), "batches": 3})


# ---------------------------------------------------------------------- 4. empty selections
@pytest.mark.parametrize(
    "where",
    [
        "part = 'zz'",
        pc.field("part") == "zz",
        pl.col("part") == "zz",
        "id < 0",
        pc.field("id") < 0,
        pl.col("id") < 0,
        "part = 'a' AND id = 1",
    ],
    ids=["sql-partition", "arrow-partition", "polars-partition", "sql-data", "arrow-data", "polars-data", "sql-both"],
)
def test_an_empty_selection_is_an_empty_dataset(data_dir, where):
    ds = RecordDataset(data_dir, where=where)
    assert len(ds) == 0 and ds.record_ids.tolist() == []
    loader = Loader(ds, batch_size=10, shuffle="exact", rank=1, world_size=2)
    assert len(loader) == 0 and list(loader) == [] and loader.epoch == 1
    assert ds.read_arrow([]).num_rows == 0
    again = Loader(RecordDataset(data_dir, where=where), batch_size=10, shuffle="exact", rank=0, world_size=3)
    assert again.resumed(loader.state_dict()).consumed == 0 and list(again) == []


def test_partition_values_of_no_files_keep_their_types(data_dir):
    ds = tfsql.dataset(data_dir).select_files([])
    assert ds.partition_values.schema == tfsql.dataset(data_dir).partition_values.schema
    assert ds.partition_values.num_rows == 0


def test_stale_index_warning_is_exported_from_tfsql():
    from tfsql.record_index import StaleIndexWarning

    assert tfsql.StaleIndexWarning is StaleIndexWarning and issubclass(StaleIndexWarning, Warning)
