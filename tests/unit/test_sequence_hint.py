"""A record read as an Example that is really a SequenceExample: the core's
``tfsql_looks_like_sequence_example`` (``tfsql/core/sequence_hint.c``), which the Python
inference and the extension's both ask, against its reference (protobuf)."""

from __future__ import annotations

import pytest

from tests.tfrecord_files import NO_KIND, example, sequence_example
from tfsql import _native, _reference

BACKENDS = [pytest.param(_native, id="core"), pytest.param(_reference, id="reference")]


def _len(n: int) -> bytes:
    assert n < 128
    return bytes([n])


def _entry(key: bytes, *values: bytes) -> bytes:
    """A FeatureLists map entry on the wire: key = 1, then each value = 2 (merged)."""
    body = b"\x0a" + _len(len(key)) + key + b"".join(b"\x12" + _len(len(v)) + v for v in values)
    return b"\x0a" + _len(len(body)) + body


def _lists(*entries: bytes) -> bytes:
    """A SequenceExample holding only feature_lists = 2 with these entries."""
    body = b"".join(entries)
    return b"\x12" + _len(len(body)) + body


STEP_WITH_KIND = b"\x0a\x04\x1a\x02\x08\x01"  # FeatureList: one Feature, int64_list [1]
STEP_WITHOUT_KIND = b"\x0a\x00"  # FeatureList: one Feature, no kind

CASES = {
    "feature lists holding values": (sequence_example({"id": 1}, {"tok": [[1, 2]]}), True),
    "an empty step list still has a kind": (sequence_example({}, {"tok": [()]}), True),
    "a feature list with no steps": (sequence_example({"id": 1}, {"tok": []}), False),
    "steps without a kind": (sequence_example({}, {"tok": [NO_KIND, NO_KIND]}), False),
    "context only": (sequence_example({"id": 1}, {}), False),
    "an Example": (example({"id": 1, "name": "x"}), False),
    "no bytes": (b"", False),
    "not a protobuf": (b"\xff\xff\xff", False),
    "a valid start, then bytes protobuf refuses": (sequence_example({}, {"tok": [[1]]}) + b"\x12\x05", False),
    "a repeated key keeps its last entry (no kind)": (
        _lists(_entry(b"k", STEP_WITH_KIND), _entry(b"k", STEP_WITHOUT_KIND)),
        False,
    ),
    "a repeated key keeps its last entry (a kind)": (
        _lists(_entry(b"k", STEP_WITHOUT_KIND), _entry(b"k", STEP_WITH_KIND)),
        True,
    ),
    "another key keeps its kind": (
        _lists(_entry(b"a", STEP_WITH_KIND), _entry(b"b", STEP_WITH_KIND), _entry(b"b", STEP_WITHOUT_KIND)),
        True,
    ),
    "an entry's repeated values merge": (_lists(_entry(b"k", STEP_WITH_KIND, STEP_WITHOUT_KIND)), True),
    "feature_lists repeated: the pieces merge": (
        _lists(_entry(b"k", STEP_WITH_KIND)) + _lists(_entry(b"k", STEP_WITHOUT_KIND)),
        False,
    ),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_looks_like_sequence_example(backend, case):
    record, expected = CASES[case]
    assert backend.looks_like_sequence_example(record) is expected
    assert backend.looks_like_sequence_example(memoryview(bytearray(record))) is expected


def test_the_python_inference_asks_the_core(tmp_path, monkeypatch):
    """The warning follows the core's sample loop (``Inference.sample_file``: no second
    parser in tfsql.inference)."""
    import warnings

    import tfsql
    from tests.tfrecord_files import write_records
    from tfsql.framing import FrameReader

    sample = FrameReader.sample

    def answered(hint):
        def patched(self, *args, **kwargs):
            sampled, _, error = sample(self, *args, **kwargs)
            return sampled, hint, error

        return patched

    write_records(tmp_path / "e.tfrecord", [example({"id": 1})])
    monkeypatch.setattr(FrameReader, "sample", answered(True))
    with pytest.warns(UserWarning, match=r"e.tfrecord look like tf.train.SequenceExample"):
        tfsql.read_tfrecord(tmp_path)
    monkeypatch.setattr(FrameReader, "sample", answered(False))
    write_records(tmp_path / "s.tfrecord", [sequence_example({"id": 1}, {"tok": [[1]]})])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tfsql.read_tfrecord(tmp_path / "s.tfrecord")
