"""The core's plan of a whole listing (``tfsql/core/listing.c``: ``tfsql_plan``,
``tfsql_plan_matches``) against its reference twin (``tfsql._reference.plan``): which glob
matches are walked, then the data files (hidden rules, intent view, hidden prefixes, a
glob's literal fallback), their order, the layout with its splits, and the inference
sample -- the same answer from both."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tfsql import _native, _reference

BACKENDS = [pytest.param(_native, id="core"), pytest.param(_reference, id="reference")]
FILE, DIR, DIR_LINK, OTHER, MISSING = (
    _native.ENTRY_FILE,
    _native.ENTRY_DIR,
    _native.ENTRY_DIR_LINK,
    _native.ENTRY_OTHER,
    _native.ENTRY_MISSING,
)
READ, DESCEND, SKIP, REFUSE = _native.WALK_READ, _native.WALK_DESCEND, _native.WALK_SKIP, _native.WALK_REFUSE
NOT_UTF8 = os.fsdecode(b"/d/\x80.tfrecord")


def listed(path, root="/d", pattern=None, item=0, size=1, intent=None, fallback=False):
    return (path, root, pattern, intent, size, 0, item, fallback)


def planned(codec, entries, nitems=1, prefixes=(), infer_files=None):
    files, empty, layout, splits, tfds_dir, picks = codec.plan(entries, nitems, prefixes, infer_files)
    return [entries[i][0] for i in files], empty, layout, splits, tfds_dir, picks


@pytest.mark.parametrize("codec", BACKENDS)
def test_a_directory_below_a_walked_match_is_covered(codec):
    # data/** matches every level: only the top directory is walked
    paths = ["/d", "/d/a", "/d/a/b", "/d-x", "/d/f.tfrecord", "/d/link", "/d/fifo"]
    kinds = [DIR, DIR, DIR, DIR, FILE, DIR_LINK, OTHER]
    assert codec.plan_matches(paths, kinds, True) == [DESCEND, SKIP, SKIP, DESCEND, READ, SKIP, REFUSE]
    # a glob without **: a matched link to a directory is entered; siblings are not covered
    assert codec.plan_matches(["/d/a", "/d/ab", "/d/link"], [DIR, DIR, DIR_LINK], False) == [DESCEND] * 3
    assert codec.plan_matches(["/", "/x"], [DIR, DIR], False) == [DESCEND, SKIP]
    assert codec.plan_matches(["/d/a/", "/d/a"], [DIR, DIR], False) == [DESCEND, SKIP]  # one directory once


@pytest.mark.parametrize("codec", BACKENDS)
def test_listed_files_are_kept_by_the_hidden_rules_and_ordered_by_bytes(codec):
    entries = [
        listed("/d/é.tfrecord"),
        listed("/d/_SUCCESS"),
        listed("/d/.part-0.crc"),
        listed("/d/_col=1/b.tfrecord"),
        listed(NOT_UTF8),
        listed("/d/x.tfrecord.crc"),
        listed("/d/tmp-1.tfrecord"),
        listed("/d/_SUCCESS", root=None),  # a file the user names is read whatever its name
    ]
    files, empty, layout, splits, _, picks = planned(codec, entries, prefixes=["tmp-"])
    assert files == ["/d/_SUCCESS", "/d/_col=1/b.tfrecord", NOT_UTF8, "/d/é.tfrecord"]
    assert (empty, layout, splits, picks) == (None, _native.LAYOUT_NONE, None, [0, 1, 2, 3])


@pytest.mark.parametrize("codec", BACKENDS)
def test_items_keep_their_order_and_a_file_is_read_once(codec):
    entries = [
        listed("/d/b", item=0),
        listed("/d/a", item=0),
        listed("/e/a", root="/e", item=1),
        listed("/d/a", root=None, item=1),  # named again by the second item
        listed("/d/a", root=None, item=2),
    ]
    files, empty, *_ = planned(codec, entries, nitems=3)
    assert files == ["/d/a", "/d/b", "/e/a"]
    assert empty is None  # each item named a file, even one read at its first place
    _, empty, *_ = planned(codec, entries[:3], nitems=3)
    assert empty == 2


@pytest.mark.parametrize("codec", BACKENDS)
def test_a_glob_component_that_starts_with_underscore_opts_its_matches_in(codec):
    pattern = "/d/_staging*/*.tfrecord"
    entries = [
        listed("/d/_staging1/a.tfrecord", pattern=pattern),
        listed("/d/_staging1/_b.tfrecord", pattern=pattern),
        listed("/d/_staging1/sub/_tmp/c.tfrecord", pattern=pattern),
    ]
    assert planned(codec, entries)[0] == ["/d/_staging1/a.tfrecord"]


@pytest.mark.parametrize("codec", BACKENDS)
def test_a_glob_reads_its_literal_path_only_when_it_keeps_nothing(codec):
    literal = listed("/d/x[1].tfrecord", root=None, fallback=True)
    assert planned(codec, [listed("/d/x1.tfrecord"), literal])[0] == ["/d/x1.tfrecord"]
    assert planned(codec, [listed("/d/_x1.tfrecord"), literal])[0] == ["/d/x[1].tfrecord"]
    assert planned(codec, [listed("/d/_x1.tfrecord")])[1] == 0  # names no data file


@pytest.mark.parametrize("codec", BACKENDS)
def test_a_prepared_commit_is_read_as_its_rollback_leaves_it(codec):
    record = json.dumps(
        {
            "tfsql_intent": 1,
            "state": "prepared",
            "job": "j",
            "trash": "_trash-j",
            "replaced": ["part-0.tfrecord"],
            "new": [["_staging-j/part-0.tfrecord", "part-0.tfrecord"]],
            "created": [],
        }
    ).encode()
    entries = [
        listed("/d/_tfsql-intent.json", intent=record),
        listed("/d/part-0.tfrecord"),  # the new file, already moved into place
        listed("/d/_trash-j/part-0.tfrecord"),  # the old one, read as at its old place
        listed("/d/other.tfrecord"),
    ]
    assert planned(codec, entries)[0] == ["/d/other.tfrecord", "/d/_trash-j/part-0.tfrecord"]
    # a ** glob lists a file both as a match and walking its directory: one file, left out
    twice = entries + [listed("/d/part-0.tfrecord")]
    assert planned(codec, twice)[0] == ["/d/other.tfrecord", "/d/_trash-j/part-0.tfrecord"]
    committed = record.replace(b'"prepared"', b'"committed"')
    entries[0] = listed("/d/_tfsql-intent.json", intent=committed)
    assert planned(codec, entries)[0] == ["/d/other.tfrecord", "/d/part-0.tfrecord"]


@pytest.mark.parametrize("codec", BACKENDS)
def test_a_tfds_directory_has_splits_and_its_metadata_is_not_data(codec):
    d = "/t/mnist/3.0.1"
    entries = [listed(f"{d}/{name}", root="/t") for name in ("dataset_info.json", "features.json", "label.labels.txt")]
    entries += [listed(f"{d}/mnist-{split}.tfrecord-00000-of-00001", root="/t") for split in ("train", "test")]
    files, _, layout, splits, tfds_dir, picks = planned(codec, entries, infer_files=1)
    assert files == [f"{d}/mnist-test.tfrecord-00000-of-00001", f"{d}/mnist-train.tfrecord-00000-of-00001"]
    assert (layout, splits, tfds_dir, picks) == (_native.LAYOUT_TFDS, ["test", "train"], d, [0])
    # named directly, a shard reads as its own records: no layout
    _, _, layout, splits, tfds_dir, _ = planned(codec, [listed(files[0], root=None)])
    assert (layout, splits, tfds_dir) == (_native.LAYOUT_NONE, None, None)


@pytest.mark.parametrize("codec", BACKENDS)
def test_a_tfx_directory_has_the_split_of_its_split_directory(codec):
    entries = [listed(f"/x/Split-{s}/data_tfrecord-00000-of-00001.gz", root="/x") for s in ("train", "eval")]
    files, _, layout, splits, tfds_dir, _ = planned(codec, entries)
    assert files == ["/x/Split-eval/data_tfrecord-00000-of-00001.gz", "/x/Split-train/data_tfrecord-00000-of-00001.gz"]
    assert (layout, splits, tfds_dir) == (_native.LAYOUT_TFX, ["eval", "train"], None)
    # below the Split- directory the layout is not seen
    assert planned(codec, [listed(entries[0][0], root="/x/Split-train")])[2] == _native.LAYOUT_NONE


_name = st.sampled_from(["a", "b", "_c", ".d", "k=1", "é", "\udc80", "x.crc", "dataset_info.json", "f.json"])
_path = st.lists(_name, min_size=1, max_size=3).map(lambda parts: "/r/" + "/".join(parts))
_entry = st.tuples(_path, st.sampled_from(["/r", None]), st.integers(0, 2), st.integers(0, 3), st.booleans()).map(
    lambda t: (t[0], t[1], None, None, t[3], 0, t[2], t[4] and t[1] is None)
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_entry, max_size=12), st.sampled_from([(), ("a",), ("_", "b")]), st.sampled_from([None, 0, 1, 2]))
def test_the_core_plans_a_listing_as_the_reference_does(entries, prefixes, infer_files):
    assert _native.plan(entries, 3, prefixes, infer_files) == _reference.plan(entries, 3, prefixes, infer_files)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_path, st.sampled_from([FILE, DIR, DIR_LINK, OTHER, MISSING])), max_size=10), st.booleans())
def test_the_core_picks_glob_matches_to_walk_as_the_reference_does(matches, globstar):
    paths, kinds = [p for p, _ in matches], [k for _, k in matches]
    assert _native.plan_matches(paths, kinds, globstar) == _reference.plan_matches(paths, kinds, globstar)
