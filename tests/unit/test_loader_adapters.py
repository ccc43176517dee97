"""The PyTorch and Grain adapters of tfsql.loader (run where the framework is installed:
``pip install tfsql[torch]`` / ``tfsql[grain]``; skipped elsewhere)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import tfsql
from tfsql.loader import Loader, RecordDataset

N = 200


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("adapters") / "data"
    x = np.arange(N)
    tfsql.write_tfrecord(
        pa.table({"x": x, "emb": [[float(i), float(-i)] for i in range(N)], "label": x % 3}),
        str(out),
        max_rows_per_file=70,
    )
    return str(out)


def test_torch_dataloader_two_workers_delivers_the_rank_sequence_in_order(data_dir):
    torch = pytest.importorskip("torch")
    from tfsql.loader.torch import data_loader

    records = RecordDataset(data_dir, columns=["x", "emb"], where="label <> 0", shapes={"emb": (2,)})
    selected = sorted(records.read_arrow(range(len(records))).column("x").to_pylist())
    seen, lengths = [], []
    for rank in range(2):
        loader = Loader(records, batch_size=10, shuffle="exact", seed=4, rank=rank, world_size=2)
        expected = [
            b["x"].tolist() for b in Loader(records, batch_size=10, shuffle="exact", seed=4, rank=rank, world_size=2)
        ]
        batches = list(data_loader(loader, num_workers=2))
        assert [b["x"].tolist() for b in batches] == expected
        assert all(isinstance(b["x"], torch.Tensor) and b["emb"].shape[1:] == (2,) for b in batches)
        seen += [x for b in batches for x in b["x"].tolist()]
        lengths.append(len(batches))
    # 133 selected records: padded to 134, two ranks of 67 (7 batches each), one record twice
    assert sorted(set(seen)) == selected and len(seen) == 134 and lengths == [7, 7] == [len(loader)] * 2


def test_torch_iterable_dataset_resumes_from_a_step_count(data_dir):
    torch = pytest.importorskip("torch")
    from tfsql.loader.torch import IterableDataset, collate

    def make():
        return IterableDataset(
            Loader(RecordDataset(data_dir, columns=["x"]), batch_size=16, shuffle="block", seed=1, block_size=8)
        )

    first = make()
    full = [
        b["x"].tolist() for b in torch.utils.data.DataLoader(first, batch_size=None, collate_fn=collate, num_workers=2)
    ]
    state = first.state_dict(batches=5)
    second = make()
    second.load_state_dict(state)
    rest = [
        b["x"].tolist() for b in torch.utils.data.DataLoader(second, batch_size=None, collate_fn=collate, num_workers=2)
    ]
    assert rest == full[5:]


def test_torch_map_dataset_with_batch_sampler(data_dir):
    torch = pytest.importorskip("torch")
    from tfsql.loader.torch import BatchSampler, MapDataset, collate

    records = RecordDataset(data_dir, columns=["x", "label"])
    sampler = BatchSampler(Loader(records, batch_size=32, shuffle="exact", seed=9))
    loader = torch.utils.data.DataLoader(MapDataset(records), batch_sampler=sampler, collate_fn=collate, num_workers=2)
    epoch0 = [b["x"].tolist() for b in loader]
    epoch1 = [b["x"].tolist() for b in loader]
    assert sorted(sum(epoch0, [])) == sorted(sum(epoch1, [])) == list(range(N)) and epoch0 != epoch1
    assert len(loader) == 7 and MapDataset(records)[0]["x"].item() == records[0]["x"]


def test_grain_map_dataset_and_dataloader(data_dir):
    grain = pytest.importorskip("grain")
    from absl import flags

    from tfsql.loader.grain import GrainSource

    if not flags.FLAGS.is_parsed():  # Grain's worker processes read absl flags (absl.app parses them)
        flags.FLAGS.mark_as_parsed()

    source = GrainSource(RecordDataset(data_dir, columns=["x", "emb"]))
    shuffled = [b["x"].tolist() for b in grain.MapDataset.source(source).shuffle(seed=3).batch(64)]
    assert sorted(sum(shuffled, [])) == list(range(N)) and shuffled[0] != list(range(64))
    sampler = grain.samplers.IndexSampler(
        num_records=len(source),
        shard_options=grain.sharding.ShardOptions(shard_index=1, shard_count=2, drop_remainder=True),
        shuffle=True,
        num_epochs=1,
        seed=0,
    )
    loader = grain.DataLoader(
        data_source=source, sampler=sampler, operations=[grain.transforms.Batch(batch_size=25)], worker_count=2
    )
    batches = list(loader)
    xs = [x for b in batches for x in b["x"].tolist()]
    assert len(xs) == N // 2 == len(set(xs)) and batches[0]["emb"].shape == (25, 2)
    rows = source.__getitems__([3, 1])
    assert [r["x"] for r in rows] == [3, 1] and rows[0]["emb"].tolist() == [3.0, -3.0]


# ---------------------------------------------------------------------- issue 32: PyTorch's conventions
def _epochs(data, asked):
    """The epoch each pass delivered (its batches compared with each epoch's)."""
    out = []
    for epoch in asked:
        if epoch is not None:
            data.set_epoch(epoch)
        out.append([b["x"].tolist() for b in data])
    return out


def _options(mode: str) -> dict:
    """data_loader options of "threads-W", "processes-W" or "persistent-W"."""
    kind, workers = mode.split("-")
    options = {"processes": kind != "threads", "num_workers": int(workers)}
    if kind == "persistent":
        options["persistent_workers"] = True
    return options


@pytest.mark.parametrize("mode", ["threads-0", "threads-2", "processes-0", "processes-2", "persistent-2"])
def test_data_loader_epochs_follow_set_epoch_and_move_on_alike(data_dir, mode):
    pytest.importorskip("torch")
    from tfsql.loader.torch import data_loader

    options = _options(mode)
    records = RecordDataset(data_dir, columns=["x"])

    def epoch(e):
        return [b["x"].tolist() for b in Loader(records, batch_size=32, shuffle="exact", seed=1, epoch=e)]

    data = data_loader(Loader(records, batch_size=32, shuffle="exact", seed=1), **options)
    assert _epochs(data, [0, 3, 3, 1]) == [epoch(0), epoch(3), epoch(3), epoch(1)]
    assert _epochs(data, [None, None]) == [epoch(2), epoch(3)]  # a pass run to its end moves on
    peek = next(iter(data))["x"].tolist()  # a peek does not use up a batch of the next loop
    assert peek == epoch(4)[0] and _epochs(data, [None]) == [epoch(4)]


@pytest.mark.parametrize("mode", ["threads-2", "processes-2", "persistent-2"])
def test_data_loader_state_counts_the_batches_delivered(data_dir, mode):
    pytest.importorskip("torch")
    from tfsql.loader.torch import data_loader

    options = _options(mode)

    def make():
        records = RecordDataset(data_dir, columns=["x"])
        return data_loader(Loader(records, batch_size=16, shuffle="block", seed=2, block_size=8), **options)

    first = make()
    full = [b["x"].tolist() for b in make()]
    it = iter(first)
    head = [next(it)["x"].tolist() for _ in range(5)]
    state = first.state_dict()  # no step count needed: the batches are counted where they are delivered
    assert (state["epoch"], state["batches"]) == (0, 5) and head == full[:5]
    second = make()
    second.load_state_dict(state)
    second.set_epoch(0)  # the state's epoch: keeps its position
    assert [b["x"].tolist() for b in second] == full[5:]
    assert second.state_dict()["epoch"] == 1


def test_iterable_dataset_passes_alike_for_any_workers_and_refuses_persistent_workers(data_dir):
    torch = pytest.importorskip("torch")
    from tfsql.loader.torch import IterableDataset, collate

    records = RecordDataset(data_dir, columns=["x"])
    seen = {}
    for workers in (0, 2):
        dataset = IterableDataset(Loader(records, batch_size=32, shuffle="exact", seed=1))
        data = torch.utils.data.DataLoader(dataset, batch_size=None, collate_fn=collate, num_workers=workers)
        seen[workers] = [[b["x"].tolist() for b in data] for _ in range(2)]
        dataset.set_epoch(1)
        seen[workers].append([b["x"].tolist() for b in data])
    assert seen[0] == seen[2] and seen[0][0] == seen[0][1] != seen[0][2]  # no set_epoch: the same epoch
    dataset = IterableDataset(Loader(records, batch_size=32))
    data = torch.utils.data.DataLoader(
        dataset, batch_size=None, collate_fn=collate, num_workers=2, persistent_workers=True
    )
    assert len(list(data)) == len(dataset)
    with pytest.raises(RuntimeError, match="cannot run in persistent DataLoader workers"):
        list(data)


@pytest.mark.parametrize("new_world", [3, 6])
@pytest.mark.parametrize("workers", [0, 2])
def test_data_loader_resumes_a_four_rank_state_on_another_world_size(data_dir, new_world, workers):
    pytest.importorskip("torch")
    from tfsql.loader.torch import data_loader

    records = RecordDataset(data_dir, columns=["x"])
    options = dict(batch_size=5, shuffle="exact", seed=3)
    delivered = []
    for rank in range(4):  # 200 records: 50 a rank; each rank delivers 2 batches
        it = iter(data_loader(Loader(records, rank=rank, world_size=4, **options), num_workers=workers, processes=True))
        delivered += [x for _ in range(2) for x in next(it)["x"].tolist()]
    state = data_loader(Loader(records, rank=0, world_size=4, **options)).state_dict()
    state["batches"] = 2
    counts = set()
    for rank in range(new_world):  # 160 left: 54 / 27 a rank (padded by 2)
        data = data_loader(
            Loader(records, rank=rank, world_size=new_world, **options), num_workers=workers, processes=True
        )
        data.load_state_dict(state)
        batches = [b["x"].tolist() for b in data]
        counts.add(len(batches))
        delivered += [x for b in batches for x in b]
    assert len(counts) == 1
    extra = len(delivered) - N
    assert sorted(set(delivered)) == list(range(N)) and extra == (-160) % new_world


def test_data_loader_of_an_empty_selection_and_options_of_worker_processes(data_dir):
    pytest.importorskip("torch")
    from tfsql.loader.torch import data_loader

    empty = Loader(RecordDataset(data_dir, where="x < 0"), batch_size=8)
    assert len(empty) == 0 and list(data_loader(empty, num_workers=2)) == []
    assert list(data_loader(empty, num_workers=2, processes=True)) == []
    with pytest.raises(TypeError, match="timeout: DataLoader options apply to worker processes; pass processes=True"):
        data_loader(empty, num_workers=2, timeout=5)
