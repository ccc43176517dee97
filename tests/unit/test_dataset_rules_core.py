"""The C core's dataset rules (tfsql._native), checked against independent Python oracles.

The rules are shared by the Python module and the DuckDB extension, so each is compared
here with what Python's own libraries say: glob components with ``fnmatch.fnmatchcase``,
the intent record parser with ``json`` + ``tfsql.commit``'s own loader, integer typing
with ``int()``. Random inputs (a fixed seed) exercise the edges.
"""

from __future__ import annotations

import fnmatch
import gzip
import json
import random
import re
import zlib

import pytest

from tfsql import _native
from tfsql.commit import _Intent
from tfsql.errors import TFSQLError


def test_glob_components_match_as_fnmatchcase():
    rng = random.Random(1)
    for _ in range(10_000):
        pattern = "".join(rng.choice("ab*?[]!-^.") for _ in range(rng.randint(1, 7)))
        name = "." + "".join(rng.choice("ab[]!-^.") for _ in range(rng.randint(0, 7)))
        try:
            want = fnmatch.fnmatchcase(name, pattern)
        except re.error:
            continue
        # a hidden component is kept exactly when the exempt pattern matches it
        assert _native.keep_listed(name, (pattern,)) is want, (pattern, name)


def test_hidden_names():
    assert [_native.is_hidden_name(n) for n in ["_SUCCESS", ".x", "_k=1", "a.crc", "a._COPYING_", "a", ""]] == [
        True,
        True,
        False,
        True,
        True,
        False,
        False,
    ]
    assert _native.keep_listed("k=1/_b=2/part-0.tfrecord", ()) is True
    assert _native.keep_listed("k=1/_temporary/part-0.tfrecord", ()) is False


def test_hive_typing_is_int64_exactly():
    for text in ["0", "-0", "007", "9223372036854775807", "-9223372036854775808"]:
        assert _native.hive_int64(text) == int(text)
    for text in ["", "-", "+1", " 1", "1 ", "1e3", "9223372036854775808", "-9223372036854775809", "١"]:
        assert _native.hive_int64(text) is None, text


def test_hive_segments_and_directories():
    assert _native.hive_segments("a=1/plain/b=%2F%3D/c=__HIVE_DEFAULT_PARTITION__/=x/d=") == [
        ("a", "1"),
        ("b", "/="),
        ("c", None),
        ("d", ""),
    ]
    assert _native.hive_unescape("100%") == "100%" and _native.hive_unescape("%C3%A9") == "\u00c3\u00a9"
    assert _native.hive_directory("/d/k=1/x.tfrecord", "/d", False) == "k=1"
    assert _native.hive_directory("/d/k=1/x.tfrecord", None, False) == ""
    assert _native.hive_directory("/d/k=1/x.tfrecord", None, True) == "d/k=1"


def test_layouts_need_the_layout_root():
    tfds = ["/v/mnist-train.tfrecord-00000-of-00002", "/v/mnist-test.tfrecord-00000-of-00001"]
    assert _native.detect_layout(tfds, ["", ""]) == _native.LAYOUT_TFDS
    assert _native.detect_layout(tfds, ["", None]) == _native.LAYOUT_NONE  # one named directly
    assert _native.detect_layout(["/p/Split-a/x.gz"], ["Split-a"]) == _native.LAYOUT_TFX
    assert _native.detect_layout(["/p/Split-a/x.gz"], [""]) == _native.LAYOUT_NONE  # root below Split-a
    assert _native.tfx_split("x/Split-eval/y") == "eval" and _native.tfds_split("a-b.tfrecord-1-of-2") == "b"


# -- the columns a layout gives a read (tfsql/core/layout_columns.c) -------------------


@pytest.mark.parametrize("backend", ["native", "reference"])
def test_the_layout_adds_split_unless_a_column_has_the_name(backend):
    from tfsql import _reference

    codec = _native if backend == "native" else _reference
    tfds, tfx, none = codec.LAYOUT_TFDS, codec.LAYOUT_TFX, codec.LAYOUT_NONE
    assert codec.SPLIT_COLUMN == "split"
    assert [codec.layout_adds_split(layout, ["x", "p"]) for layout in (tfds, tfx, none)] == [True, True, False]
    assert codec.layout_adds_split(tfx, ["x", "split"]) is False  # a data or hive column has it
    assert codec.layout_adds_split(tfx, ["Split", "split_"]) is True  # names compare exactly
    assert [codec.layout_owns_column(layout, "split") for layout in (tfds, tfx, none)] == [True, True, False]
    assert codec.layout_owns_column(tfds, "p") is False


@pytest.mark.parametrize("backend", ["native", "reference"])
def test_tfds_merge_types_inferred_columns_in_place_and_appends_the_rest(backend):
    from tfsql import _reference

    codec = _native if backend == "native" else _reference
    # described c types column 2, a column 0; x and y (no column) follow in their order
    assert codec.tfds_merge(["a", "b", "c"], ["c", "x", "a", "y"]) == ([2, -1, 0], [1, 3])
    assert codec.tfds_merge([], ["x"]) == ([], [0])
    assert codec.tfds_merge(["a"], []) == ([-1], [])
    assert codec.tfds_merge(["é\udc80"], ["é\udc80"]) == ([0], [])  # names as bytes


@pytest.mark.parametrize("backend", ["native", "reference"])
def test_written_partitions_type_the_hive_columns_a_description_names(backend):
    from tfsql import _reference

    codec = _native if backend == "native" else _reference
    # hive p and q found; the description's partition columns q, p, r: p takes described 1, q 0
    assert codec.written_partitions(False, False, ["p", "q", "s"], ["q", "p", "r"]) == ([1, 0, -1], 0)
    # no key=value directory (a write of no rows): every described partition column is null
    assert codec.written_partitions(False, False, [], ["q", "p"]) == ([], 2)
    assert codec.written_partitions(False, False, [], []) == ([], 0)
    # hive columns typed by the user, or hive partitioning off: the hive plan stands
    assert codec.written_partitions(True, False, ["p"], ["p"]) == ([-1], 0)
    assert codec.written_partitions(True, False, [], ["p"]) == ([], 0)
    assert codec.written_partitions(False, True, [], ["p"]) == ([], 0)
    assert codec.written_partitions(False, False, ["P", "é\udc80"], ["p", "é\udc80"]) == ([-1, 1], 0)  # bytes


@pytest.mark.parametrize("backend", ["native", "reference"])
def test_a_read_takes_the_description_of_its_one_root(backend):
    from tfsql import _reference

    codec = _native if backend == "native" else _reference
    none, tfds = codec.LAYOUT_NONE, codec.LAYOUT_TFDS
    assert codec.description_root(["/d", "/d", "/d"], none) is True
    assert codec.description_root(["/d", "/e"], none) is False  # several roots
    assert codec.description_root(["/d", None], none) is False  # a file named itself
    assert codec.description_root([None], none) is False
    assert codec.description_root([], none) is False
    assert codec.description_root(["/d"], tfds) is False  # a layout's own metadata describes it
    assert codec.description_root(["/d\udc80", "/d\udc80"], none) is True  # bytes


@pytest.mark.parametrize("backend", ["native", "reference"])
def test_a_feature_list_column_beside_its_context_column_reads_the_list(backend):
    from tfsql import _reference

    codec = _native if backend == "native" else _reference
    assert codec.feature_list_name("ids__feature_list", {"ids", "label"}) == "ids"
    assert codec.feature_list_name("ids__feature_list", ["ids"]) == "ids"  # any container
    assert codec.feature_list_name("ids__feature_list", {"label"}) == "ids__feature_list"
    assert codec.feature_list_name("ids", {"ids"}) == "ids"
    assert codec.feature_list_name("__feature_list", {""}) == "__feature_list"  # N is not empty
    assert codec.feature_list_name("\udc80__feature_list", {"\udc80"}) == "\udc80"  # bytes


def test_compression_detection():
    assert _native.detect_compression(gzip.compress(b"x")) == "gzip"
    assert _native.detect_compression(zlib.compress(b"x")) == "zlib"
    assert _native.detect_compression(b"") is None and _native.detect_compression(b"\0" * 12) is None


def test_walk_actions():
    entry = {
        "file": _native.ENTRY_FILE,
        "dir": _native.ENTRY_DIR,
        "link": _native.ENTRY_DIR_LINK,
        "fifo": _native.ENTRY_OTHER,
        "gone": _native.ENTRY_MISSING,
    }
    action = {
        _native.WALK_READ: "read",
        _native.WALK_DESCEND: "descend",
        _native.WALK_SKIP: "skip",
        _native.WALK_REFUSE: "refuse",
    }
    table = {
        (kind, where): action[_native.walk_action(code, context)]
        for kind, code in entry.items()
        for where, context in (("named", _native.NAMED), ("matched", _native.MATCHED), ("walk", _native.IN_WALK))
    }
    assert table[("link", "named")] == table[("link", "matched")] == "descend"
    assert table[("link", "walk")] == "skip"  # a link loop is listed once
    assert {table[("fifo", w)] for w in ("named", "matched", "walk")} == {"refuse"}
    assert table[("gone", "walk")] == "skip" and table[("file", "walk")] == "read"


def _record(**changes) -> bytes:
    intent = _Intent(
        "j1",
        "_trash-j1",
        ["_SUCCESS", "k=1"],
        [("_temporary-j1/a", "k=1/a"), ("_temporary-j1/b\u00e9\U0001f600", "k=2/b")],
        ["k=2"],
    )
    for key, value in changes.items():
        setattr(intent, key, value)
    return intent.dump()


def test_intent_view_reads_as_the_rollback_leaves_it():
    rels = ["k=1/a", "_temporary-j1/b\u00e9\U0001f600", "k=2/b", "_trash-j1/k=1/old", "_trash-j1/_SUCCESS", "k=0/x"]
    assert _native.intent_view(_record(), rels) == [False, None, None, "k=1/old", "_SUCCESS", None]
    assert _native.intent_view(_record(state="committed"), rels) == [None] * len(rels)


def test_intent_parser_accepts_exactly_what_tfsql_commit_accepts():
    rng = random.Random(2)
    samples = [
        _record(),
        _record(state="committed"),
        _record(new=[("../a", "b")]),
        _record(trash="trash"),
        json.dumps({"tfsql_intent": 1}).encode(),
        b"{}",
        b"",
        b"[]",
    ]
    for k in range(5_000):
        data = bytearray(samples[k] if k < len(samples) else rng.choice(samples[:2]))
        if k >= len(samples):
            for _ in range(rng.randint(1, 3)):
                i = rng.randrange(len(data))
                op = rng.random()
                if op < 0.4:
                    data[i] = rng.choice(b'{}[]",:\\u0123 abe/.')
                elif op < 0.7:
                    del data[i]
                else:
                    data.insert(i, rng.choice(b'{}[]",:\\ 1.'))
        try:
            _Intent.load(bytes(data), "x")
            python_accepts = True
        except TFSQLError:
            python_accepts = False
        except RecursionError:  # pragma: no cover - not produced by these mutations
            continue
        try:
            _native.intent_view(bytes(data), [])
            core_accepts = True
        except ValueError:
            core_accepts = False
        assert core_accepts is python_accepts, bytes(data)


def test_intent_parser_bounds_nesting():
    deep = b'{"x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with pytest.raises(ValueError, match="nested too deeply"):
        _native.intent_view(deep, [])


def test_the_pure_python_rules_agree_with_the_core():
    from tfsql import _reference as ref

    rng = random.Random(3)
    for _ in range(5_000):
        text = "".join(
            rng.choice(["a", "=", "/", "%2F", "%", "_", ".", "Split-", "-", "x.tfrecord-1-of-2", "%C3"])
            for _ in range(6)
        )
        assert ref.hive_segments(text) == _native.hive_segments(text), text
        assert ref.tfds_split(text) == _native.tfds_split(text), text
        globbed = text + "*?["[rng.randrange(4) :]
        assert ref.has_glob_magic(globbed) == _native.has_glob_magic(globbed), globbed
        assert ref.tfx_split(text) == _native.tfx_split(text), text
        assert ref.keep_listed(text, ("_*",)) == _native.keep_listed(text, ("_*",)), text
        assert ref.hive_int64(text[:3]) == _native.hive_int64(text[:3])
        for root, whole in (("/a", False), (None, False), (None, True)):
            path = re.sub("/+", "/", "/a/" + text).rstrip("/")  # listed paths are normalized
            assert ref.hive_directory(path, root, whole) == _native.hive_directory(path, root, whole), (path, root)
    for kind in range(5):
        for context in range(3):
            assert ref.walk_action(kind, context) == _native.walk_action(kind, context)
    rels = ["k=1/a", "_trash-j1/k=1/old", "x"]
    assert ref.intent_view(_record(), rels) == _native.intent_view(_record(), rels)
    assert ref.detect_compression(gzip.compress(b"x")) == "gzip" and ref.detect_compression(b"") is None


# -- a TFDS directory's features.json (tfsql/core/tfds_features.c) -------------------


def _features(features: object) -> object:
    described, complete = _native.tfds_features(json.dumps({"featuresDict": {"features": features}}).encode())
    assert complete == all(type_name is not None for _, type_name, _, _ in described)
    return described


def test_tfds_features_types_each_kind_of_feature():
    tensor = "tensorflow_datasets.core.features.tensor_feature.Tensor"
    assert _features(
        {
            "png": {"image": {"encodingFormat": "png"}},
            "default_image": {"image": {"shape": {"dimensions": ["4"]}}},
            "webp": {"image": {"encodingFormat": "webp"}},
            "caption": {"text": {}},
            "label": {"classLabel": {"numClasses": "3"}},
            "vec": {"pythonClassName": tensor, "tensor": {"dtype": "float32", "shape": {"dimensions": ["2"]}}},
            "scalar": {"tensor": {"dtype": "uint8", "encoding": "none", "shape": {}}},
            "half": {"tensor": {"dtype": "float16"}},
            "bytes": {"tensor": {"dtype": "string", "shape": {"dimensions": []}}},
            "zlib": {"tensor": {"dtype": "int64", "encoding": "zlib"}},
            "complex": {"tensor": {"dtype": "complex64"}},
            "sequence": {"sequence": {"length": "-1"}},
            "odd": [1, {"text": {}}],
        }
    ) == [
        ("png", "binary", False, False),
        ("default_image", "binary", False, False),
        ("webp", None, False, False),
        ("caption", "string", False, False),
        ("label", "int64", False, True),
        ("vec", "float32", True, False),
        ("scalar", "uint8", False, False),
        ("half", "float32", False, False),
        ("bytes", "binary", False, False),
        ("zlib", None, False, False),
        ("complex", None, False, False),
        ("sequence", None, False, False),
        ("odd", None, False, False),
    ]


@pytest.mark.parametrize(
    "document",
    [b"", b"[]", b"{", b'{"featuresDict": {}}', b'{"featuresDict": {"features": []}}', b'{"a": 1} x', b"[" * 100000],
)
def test_tfds_features_of_a_document_that_is_not_one_is_none(document):
    assert _native.tfds_features(document) is None


def test_tfds_features_names_keep_their_escapes_undone():
    assert _features({"caf\u00e9\n": {"text": {}}}) == [("caf\u00e9\n", "string", False, False)]


def test_the_reference_types_features_json_as_the_core_does():
    """``TFSQL_PURE_PYTHON=1`` reads a TFDS directory through the reference's twin."""
    from tfsql import _reference

    tensor = {"tensor": {"dtype": "float32", "shape": {"dimensions": ["2"]}}}
    documents = [
        json.dumps(
            {"featuresDict": {"features": {"a": {"text": {}}, "v": tensor, "w": {"image": {"encodingFormat": "webp"}}}}}
        ).encode(),
        json.dumps(
            {
                "featuresDict": {
                    "features": {"l": {"classLabel": {}}, "z": {"tensor": {"dtype": "int64", "encoding": "zlib"}}}
                }
            }
        ).encode(),
        b"",
        b"[]",
        b"{",
        b'{"featuresDict": {"features": []}}',
        b"[" * 100000,
    ]
    for document in documents:
        assert _reference.tfds_features(document) == _native.tfds_features(document), document[:40]
