"""The core's dataset plan (``tfsql/core/plan.c``) against its reference
(``tfsql._reference.plan``): the order of a listing, how a path is shown, the hive
columns with every refusal, and the key that decides when to infer again."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tfsql import _native, _reference
from tfsql.messages import DIALECTS

BACKENDS = [pytest.param(_native, id="core"), pytest.param(_reference, id="reference")]

# a name that is not UTF-8 (byte 0x80) sorts before an accented one (bytes c3 a9) by
# bytes, after it by code points (U+DC80 against U+00E9)
NOT_UTF8 = os.fsdecode(b"/d/\x80.tfrecord")


@pytest.mark.parametrize("codec", BACKENDS)
def test_a_listing_is_ordered_by_bytes_once(codec):
    paths = ["/d/é.tfrecord", NOT_UTF8, "/d/b", "/d/é.tfrecord", "/d/a"]
    assert [paths[i] for i in codec.path_order(paths)] == ["/d/a", "/d/b", NOT_UTF8, "/d/é.tfrecord"]
    assert codec.path_order(paths)[-1] == 0  # a repeat keeps its first place in the listing


@pytest.mark.parametrize("codec", BACKENDS)
def test_a_path_that_is_not_utf8_is_shown_escaped(codec):
    assert codec.path_display(NOT_UTF8) == "/d/\\x80.tfrecord"
    assert codec.path_display("/d/é") == "/d/é"
    assert codec.path_display(os.fsdecode(b"\xe2\x82x\xf0\x9f\x98\x80")) == "\\xe2\\x82x\U0001f600"


@pytest.mark.parametrize("codec", BACKENDS)
def test_hive_values_are_bytes_exact_and_typed(codec):
    files = [("/d/k=1/p=a%00b/f", "/d", None), ("/d/k=007/p=__HIVE_DEFAULT_PARTITION__/f", "/d", None)]
    assert codec.hive_plan(files, False, False, (), DIALECTS["python"]) == (
        ["k", "p"],
        [["1", "007"], ["a\x00b", None]],
        [[1, 7], None],
    )


REFUSALS = [
    (
        [("/d/a=1/a=2/f", "/d", None)],
        (),
        True,
        "partition key 'a' appears twice in the directories of /d/a=1/a=2/f; rename one of the key=value directories",
    ),
    (
        [("/d/k=1/f", "/d", None), ("/d/f", "/d", "memory://d/f")],
        (),
        False,
        "inconsistent hive partitioning: /d/k=1/f has partition keys (k) but memory://d/f has none; every file must "
        "sit under the same key=value directories in the same order (pass hive_partitioning=False to read without "
        "partition columns)",
    ),
    (
        [("/d/f", "/d", None)],
        (),
        True,
        "hive partitioning was requested but no key=value directories were found below '/d'; point the source at "
        "the directory above the key=value directories or pass hive_partitioning=False",
    ),
    (
        [("/d/k=1/f", "/d", None)],
        ("q",),
        False,
        "hive_schema names 'q', which is not a partition key (the partition keys are (k))",
    ),
]


@pytest.mark.parametrize("codec", BACKENDS)
@pytest.mark.parametrize("files, typed, required, message", REFUSALS)
def test_every_hive_refusal_is_rendered_from_the_templates(codec, files, typed, required, message):
    refused = codec.hive_plan(files, False, required, typed, DIALECTS["python"])
    assert refused[0] == "refused" and refused[3] == message
    sql = codec.hive_plan(files, False, required, typed, DIALECTS["sql"])[3]
    assert sql == message.replace("hive_partitioning=False", "hive_partitioning := false").replace(
        "hive_schema names", "hive_types names"
    )


_segment = st.sampled_from(["k=1", "k=x", "j=2", "k=-3", "k=%41", "k=", "plain", "_h", "k=__HIVE_DEFAULT_PARTITION__"])
_file = st.tuples(
    st.lists(_segment, max_size=3).map(lambda s: "/r/" + "/".join(s + ["f"])),
    st.sampled_from(["/r", None]),
    st.none(),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_file, max_size=5), st.booleans(), st.booleans(), st.sampled_from([(), ("k",), ("q",)]))
def test_the_core_plans_hive_columns_as_the_reference_does(files, whole_path, required, typed):
    assert _native.hive_plan(files, whole_path, required, typed, DIALECTS["python"]) == _reference.hive_plan(
        files, whole_path, required, typed, DIALECTS["python"]
    )


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=6).map(os.fsdecode), max_size=8))
def test_the_core_orders_and_shows_paths_as_the_reference_does(paths):
    assert _native.path_order(paths) == _reference.path_order(paths)
    assert [_native.path_display(p) for p in paths] == [_reference.path_display(p) for p in paths]


def test_the_listing_key_changes_with_any_file_and_matches_the_reference():
    entries = [(NOT_UTF8, 5, 1_700_000_000_123_456_789), ("/d/é", 7, 2**63 + 5)]
    key = _native.listing_key(3, entries)
    assert key == _reference.listing_key(3, entries)
    changed = [[(NOT_UTF8, 6, entries[0][2]), entries[1]], [entries[0], ("/d/é", 7, 2**63 + 6)], entries[:1]]
    assert all(_native.listing_key(3, e) != key for e in changed)
    assert _native.listing_key(4, entries) != key


@pytest.mark.parametrize("codec", BACKENDS)
def test_the_root_of_a_glob_is_its_longest_plain_directory_prefix(codec):
    assert [codec.glob_root(p) for p in ["/d/x/*.tfrecord", "/*/f", "a/b*/c", "*.tfrecord", "/d/**/f", "/d/f"]] == [
        "/d/x",
        "/",
        "a",
        "",
        "/d",
        "/d",
    ]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["", "d", "*", "a?", "[x]", "**", "é"]), max_size=5).map("/".join))
def test_the_core_finds_a_glob_root_as_the_reference_does(pattern):
    assert _native.glob_root(pattern) == _reference.glob_root(pattern)
