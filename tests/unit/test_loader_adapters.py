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
