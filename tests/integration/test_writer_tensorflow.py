"""Files written by tfsql.write_tfrecord are read by TensorFlow with identical values.

Runs only where ``tensorflow`` imports (``pip install tfsql[tensorflow]``).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from tfsql.writer import write_tfrecord

tf = pytest.importorskip("tensorflow")

pytestmark = pytest.mark.tensorflow

COMPRESSIONS = [(None, ""), ("gzip", "GZIP"), ("zlib", "ZLIB")]

TABLE = pa.table(
    {
        "label": pa.array([1, 0, -(2**63)], pa.int64()),
        "flag": [True, False, True],
        "small": pa.array([7, 200, 3], pa.uint8()),
        "score": [0.1, -2.5, 1e-3],  # float64: narrowed to float32
        "text": ["héllo", "", "日本語"],
        "blob": [b"\x00\xff", b"", b"abc"],
        "ids": pa.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]], pa.list_(pa.int64(), 3)),
        "tags": [["a", "b"], [], ["c"]],
        "weights": [[0.5], [], [1.5, 2.5]],
    }
)


def records(paths, tf_compression):
    dataset = tf.data.TFRecordDataset(paths, compression_type=tf_compression)
    return [r.numpy() for r in dataset]


@pytest.mark.parametrize("compression, tf_compression", COMPRESSIONS)
def test_tensorflow_parses_written_examples(tmp_path, compression, tf_compression):
    result = write_tfrecord(
        TABLE.to_batches(max_chunksize=2), tmp_path / "out", compression=compression, max_rows_per_file=2
    )
    assert len(result.files) == 2
    serialized = records(result.paths, tf_compression)
    parsed = tf.io.parse_example(
        serialized,
        {
            "label": tf.io.FixedLenFeature([], tf.int64),
            "flag": tf.io.FixedLenFeature([], tf.int64),
            "small": tf.io.FixedLenFeature([], tf.int64),
            "score": tf.io.FixedLenFeature([], tf.float32),
            "text": tf.io.FixedLenFeature([], tf.string),
            "blob": tf.io.FixedLenFeature([], tf.string),
            "ids": tf.io.FixedLenFeature([3], tf.int64),
            "tags": tf.io.VarLenFeature(tf.string),
            "weights": tf.io.RaggedFeature(tf.float32),
        },
    )
    assert parsed["label"].numpy().tolist() == [1, 0, -(2**63)]
    assert parsed["flag"].numpy().tolist() == [1, 0, 1]
    assert parsed["small"].numpy().tolist() == [7, 200, 3]
    assert parsed["score"].numpy().tolist() == np.array([0.1, -2.5, 1e-3], np.float32).tolist()
    assert parsed["text"].numpy().tolist() == ["héllo".encode(), b"", "日本語".encode()]
    assert parsed["blob"].numpy().tolist() == [b"\x00\xff", b"", b"abc"]
    assert parsed["ids"].numpy().tolist() == [[1, 2, 3], [4, 5, 6], [7, 8, 9]]
    assert tf.sparse.to_dense(parsed["tags"], default_value=b"").numpy().tolist() == [
        [b"a", b"b"],
        [b"", b""],
        [b"c", b""],
    ]
    assert parsed["weights"].to_list() == [[0.5], [], [1.5, 2.5]]


def test_tensorflow_sees_nulls_as_missing_features(tmp_path):
    table = pa.table({"x": [1, None, 3], "s": [None, "b", None]})
    result = write_tfrecord(table, tmp_path / "out")
    parsed = tf.io.parse_example(
        records(result.paths, ""),
        {
            "x": tf.io.FixedLenFeature([], tf.int64, default_value=-1),
            "s": tf.io.FixedLenFeature([], tf.string, default_value=b"?"),
        },
    )
    assert parsed["x"].numpy().tolist() == [1, -1, 3]
    assert parsed["s"].numpy().tolist() == [b"?", b"b", b"?"]


@pytest.mark.parametrize("compression, tf_compression", COMPRESSIONS)
def test_tensorflow_parses_written_sequence_examples(tmp_path, compression, tf_compression):
    table = pa.table(
        {
            "id": ["a", "b"],
            "length": [3, 1],
            "frames": pa.array([[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [[7.0, 8.0]]], pa.list_(pa.list_(pa.float32()))),
            "words": [[["x"], ["y", "z"], []], [["w"]]],
            "tokens": [[10, 11, 12], [13]],  # list<int64> as a feature list of one-value steps
        }
    )
    result = write_tfrecord(
        table,
        tmp_path / "out",
        record_type="sequence_example",
        compression=compression,
        layout={"tokens": "feature_list"},
        num_shards=2,
    )
    serialized = records(result.paths, tf_compression)
    assert len(serialized) == 2
    got = []
    for record in serialized:
        context, lists = tf.io.parse_single_sequence_example(
            record,
            context_features={
                "id": tf.io.FixedLenFeature([], tf.string),
                "length": tf.io.FixedLenFeature([], tf.int64),
            },
            sequence_features={
                "frames": tf.io.FixedLenSequenceFeature([2], tf.float32),
                "words": tf.io.RaggedFeature(tf.string),
                "tokens": tf.io.FixedLenSequenceFeature([], tf.int64),
            },
        )
        got.append(
            (
                context["id"].numpy(),
                int(context["length"].numpy()),
                lists["frames"].numpy().tolist(),
                lists["words"].to_list(),
                lists["tokens"].numpy().tolist(),
            )
        )
    assert got == [
        (b"a", 3, [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [[b"x"], [b"y", b"z"], []], [10, 11, 12]),
        (b"b", 1, [[7.0, 8.0]], [[b"w"]], [13]),
    ]


@pytest.mark.parametrize("compression, tf_compression", COMPRESSIONS)
def test_tensorflow_reads_raw_records(tmp_path, compression, tf_compression):
    table = pa.table({"record": [b"\x00one", b"", b"three"]})
    result = write_tfrecord(table, tmp_path / "out", record_type="bytes", compression=compression)
    assert records(result.paths, tf_compression) == [b"\x00one", b"", b"three"]


def test_tensorflow_parses_tensor_columns_with_their_shape(tmp_path):
    values = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 8
    table = pa.table(
        {
            "t": pa.FixedShapeTensorArray.from_numpy_ndarray(values),
            "n": pa.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]], pa.list_(pa.list_(pa.int64(), 2), 2)),
        }
    )
    result = write_tfrecord(table, tmp_path / "out")
    parsed = tf.io.parse_example(
        records(result.paths, ""),
        {
            "t": tf.io.FixedLenFeature([3, 4], tf.float32),  # TensorFlow reshapes row-major
            "n": tf.io.FixedLenFeature([2, 2], tf.int64),
        },
    )
    np.testing.assert_array_equal(parsed["t"].numpy(), values)
    assert parsed["n"].numpy().tolist() == [[[1, 2], [3, 4]], [[5, 6], [7, 8]]]


def test_tensorflow_parses_same_name_context_and_feature_list(tmp_path):
    table = pa.table(
        {
            "int_feature": [0, 1],
            "int_feature__feature_list": pa.array([[[0], [1]], [[2]]], pa.list_(pa.list_(pa.int64()))),
        }
    )
    result = write_tfrecord(table, tmp_path / "out", record_type="sequence_example")
    first, second = records(result.paths, "")
    for serialized, context, steps in ((first, 0, [[0], [1]]), (second, 1, [[2]])):
        ctx, seq = tf.io.parse_single_sequence_example(
            serialized,
            context_features={"int_feature": tf.io.FixedLenFeature([], tf.int64)},
            sequence_features={"int_feature": tf.io.FixedLenSequenceFeature([1], tf.int64)},
        )
        assert int(ctx["int_feature"].numpy()) == context
        assert seq["int_feature"].numpy().tolist() == steps
