"""Tests for tfsql.discovery: paths, directories, globs, URLs, hidden files."""

from __future__ import annotations

import os
from pathlib import Path

import fsspec
import pyarrow.fs as pafs
import pytest
from fsspec.implementations.local import LocalFileSystem
from fsspec.implementations.memory import MemoryFileSystem

from tfsql.discovery import Discovered, FileInfo, discover, has_glob_magic, is_hidden_name

UUID = "3f2c9a1e-0b7d-4c55-9e1a-7d2f8b6c4e10"
PART0 = f"part-00000-{UUID}-c000.tfrecord"
PART1 = f"part-00001-{UUID}-c000.tfrecord"
PART2 = f"part-00002-{UUID}-c000.tfrecord"

# relative path -> content, laid out as Spark's TFRecord writer leaves a partitioned table
SPARK_TREE = {
    "_SUCCESS": b"",
    "_committed_1234": b"{}",
    "_started_1234": b"",
    f"label=0/split=train/{PART0}": b"abc",
    f"label=0/split=train/.{PART0}.crc": b"crc",
    f"label=1/split=test/{PART1}": b"",  # an empty part file: valid, empty
    f"label=1/split=test/.{PART1}.crc": b"crc",
    f"label=1/split=train/{PART2}": b"de",
    f"label=1/split=train/{PART2}._COPYING_": b"partial",
    "label=1/_temporary/0/_temporary/attempt_1/part-00009.tfrecord": b"tmp",
    ".staging/part-00003.tfrecord": b"hidden",
}
SPARK_VISIBLE = [
    (f"label=0/split=train/{PART0}", 3),
    (f"label=1/split=test/{PART1}", 0),
    (f"label=1/split=train/{PART2}", 2),
]


def write_tree(root: Path, files: dict[str, bytes]) -> None:
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)


def listing(found: Discovered) -> list[tuple[str, int, str | None]]:
    return [(f.path, f.size, f.root) for f in found.files]


@pytest.fixture
def mem() -> MemoryFileSystem:
    fs = fsspec.filesystem("memory")
    fs.store.clear()
    fs.pseudo_dirs[:] = [""]
    yield fs
    fs.store.clear()
    fs.pseudo_dirs[:] = [""]


def write_mem_tree(fs: MemoryFileSystem, root: str, files: dict[str, bytes]) -> None:
    for relative, content in files.items():
        fs.pipe(f"{root}/{relative}", content)


# --------------------------------------------------------------------------- directories


def test_spark_tree_local_directory(tmp_path: Path) -> None:
    write_tree(tmp_path, SPARK_TREE)
    found = discover(tmp_path)
    root = str(tmp_path)
    assert listing(found) == [(f"{root}/{rel}", size, root) for rel, size in SPARK_VISIBLE]
    assert found.is_local is True
    assert isinstance(found.filesystem, LocalFileSystem)
    assert found.files[0].display() == f"{root}/{SPARK_VISIBLE[0][0]}"
    assert found.files[0].relative_dir() == "label=0/split=train"


def test_spark_tree_local_directory_with_trailing_slash(tmp_path: Path) -> None:
    write_tree(tmp_path, SPARK_TREE)
    found = discover(str(tmp_path) + "/")
    assert [f.root for f in found.files] == [str(tmp_path)] * 3


def test_spark_tree_memory(mem: MemoryFileSystem) -> None:
    write_mem_tree(mem, "/tree", SPARK_TREE)
    found = discover("memory://tree")
    assert listing(found) == [(f"/tree/{rel}", size, "/tree") for rel, size in SPARK_VISIBLE]
    assert found.is_local is False
    assert found.filesystem is mem
    assert [f.display() for f in found.files] == [f"memory://tree/{rel}" for rel, _ in SPARK_VISIBLE]


def test_file_url(tmp_path: Path) -> None:
    write_tree(tmp_path, SPARK_TREE)
    found = discover(f"file://{tmp_path}")
    root = str(tmp_path)
    assert listing(found) == [(f"{root}/{rel}", size, root) for rel, size in SPARK_VISIBLE]
    assert found.is_local is True
    assert isinstance(found.filesystem, LocalFileSystem)


def test_relative_path_becomes_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_tree(tmp_path, {"data/a.tfrecord": b"x"})
    monkeypatch.chdir(tmp_path)
    found = discover("data")
    assert listing(found) == [(f"{tmp_path}/data/a.tfrecord", 1, f"{tmp_path}/data")]


def test_underscore_hive_directory_and_default_partition_are_kept(tmp_path: Path) -> None:
    write_tree(
        tmp_path,
        {
            "_col=1/a.tfrecord": b"",
            "_col=2/_SUCCESS": b"",
            "k=__HIVE_DEFAULT_PARTITION__/b.tfrecord": b"",
            "_meta/c.tfrecord": b"",
            "x.crc": b"",
        },
    )
    found = discover(tmp_path)
    assert [f.path for f in found.files] == [
        f"{tmp_path}/_col=1/a.tfrecord",
        f"{tmp_path}/k=__HIVE_DEFAULT_PARTITION__/b.tfrecord",
    ]


def test_hidden_components_above_the_root_do_not_matter(tmp_path: Path) -> None:
    write_tree(tmp_path, {"_work/.cache/data/part-0.tfrecord": b"1"})
    found = discover(tmp_path / "_work" / ".cache" / "data")
    assert [f.path for f in found.files] == [f"{tmp_path}/_work/.cache/data/part-0.tfrecord"]


def test_empty_directory_is_an_error_naming_it(tmp_path: Path) -> None:
    # read_parquet and scan_parquet raise for a directory without data files (issue 23)
    write_tree(tmp_path, {"out/_SUCCESS": b"", "empty/.keep": b""})
    for name in ("out", "empty"):
        with pytest.raises(FileNotFoundError, match=f"no files found in the directory '.*/{name}': it is empty"):
            discover(tmp_path / name)
    (tmp_path / "bare").mkdir()
    with pytest.raises(FileNotFoundError, match="no files found in the directory '.*/bare'"):
        discover(tmp_path / "bare")
    with pytest.raises(FileNotFoundError, match="no files match the pattern '.*/out/\\*'"):
        discover(str(tmp_path / "out" / "*"))


# --------------------------------------------------------------------------- explicit files and lists


def test_explicit_file_has_no_root_and_is_never_skipped(tmp_path: Path) -> None:
    write_tree(tmp_path, {"label=1/_SUCCESS": b"", "label=1/a.tfrecord": b"xy"})
    found = discover([tmp_path / "label=1" / "a.tfrecord", str(tmp_path / "label=1" / "_SUCCESS")])
    assert listing(found) == [
        (f"{tmp_path}/label=1/a.tfrecord", 2, None),
        (f"{tmp_path}/label=1/_SUCCESS", 0, None),
    ]
    assert found.files[0].relative_dir() is None


def test_list_keeps_item_order_and_removes_duplicates(tmp_path: Path) -> None:
    write_tree(tmp_path, {"b/2.tfrecord": b"", "b/1.tfrecord": b"", "a/3.tfrecord": b""})
    found = discover([tmp_path / "b", tmp_path / "a", tmp_path / "b" / "1.tfrecord", tmp_path / "a"])
    assert listing(found) == [
        (f"{tmp_path}/b/1.tfrecord", 0, f"{tmp_path}/b"),
        (f"{tmp_path}/b/2.tfrecord", 0, f"{tmp_path}/b"),
        (f"{tmp_path}/a/3.tfrecord", 0, f"{tmp_path}/a"),
    ]


def test_tuple_of_memory_urls(mem: MemoryFileSystem) -> None:
    mem.pipe("/m/b.tfrecord", b"1")
    mem.pipe("/m/a.tfrecord", b"22")
    found = discover(("memory://m/b.tfrecord", "memory://m/a.tfrecord"))
    assert listing(found) == [("/m/b.tfrecord", 1, None), ("/m/a.tfrecord", 2, None)]
    assert found.files[1].display() == "memory://m/a.tfrecord"


# --------------------------------------------------------------------------- globs


@pytest.fixture
def glob_tree(tmp_path: Path) -> Path:
    write_tree(
        tmp_path,
        {
            "top.tfrecord": b"",
            "tap.tfrecord": b"",
            "a/one.tfrecord": b"",
            "a/b/two.tfrecord": b"",
            "a/b/notes.txt": b"",
            "b/three.tfrecord": b"",
            "c/four.tfrecord": b"",
            "_h/hidden.tfrecord": b"",
            "a/.x.tfrecord": b"",
        },
    )
    return tmp_path


def relative_paths(found: Discovered, base: Path) -> list[str]:
    return [os.path.relpath(f.path, base) for f in found.files]


def test_glob_double_star_everything(glob_tree: Path) -> None:
    found = discover(f"{glob_tree}/**")
    assert relative_paths(found, glob_tree) == [
        "a/b/notes.txt",
        "a/b/two.tfrecord",
        "a/one.tfrecord",
        "b/three.tfrecord",
        "c/four.tfrecord",
        "tap.tfrecord",
        "top.tfrecord",
    ]
    assert {f.root for f in found.files} == {str(glob_tree)}


def test_glob_double_star_matches_zero_or_more_levels(glob_tree: Path) -> None:
    found = discover(f"{glob_tree}/**/*.tfrecord")
    assert relative_paths(found, glob_tree) == [
        "a/b/two.tfrecord",
        "a/one.tfrecord",
        "b/three.tfrecord",
        "c/four.tfrecord",
        "tap.tfrecord",
        "top.tfrecord",
    ]
    below_a = discover(f"{glob_tree}/a/**/*.tfrecord")
    assert relative_paths(below_a, glob_tree) == ["a/b/two.tfrecord", "a/one.tfrecord"]
    assert {f.root for f in below_a.files} == {f"{glob_tree}/a"}


def test_glob_question_mark(glob_tree: Path) -> None:
    found = discover(f"{glob_tree}/t?p.tfrecord")
    assert listing(found) == [
        (f"{glob_tree}/tap.tfrecord", 0, str(glob_tree)),
        (f"{glob_tree}/top.tfrecord", 0, str(glob_tree)),
    ]


def test_glob_brackets_match_directories_and_expand_them(glob_tree: Path) -> None:
    found = discover(f"{glob_tree}/[ab]")
    assert relative_paths(found, glob_tree) == [
        "a/b/notes.txt",
        "a/b/two.tfrecord",
        "a/one.tfrecord",
        "b/three.tfrecord",
    ]
    assert {f.root for f in found.files} == {str(glob_tree)}


def test_glob_in_middle_component_root_is_prefix(glob_tree: Path) -> None:
    found = discover(f"{glob_tree}/*/*.tfrecord")
    assert listing(found) == [
        (f"{glob_tree}/a/one.tfrecord", 0, str(glob_tree)),
        (f"{glob_tree}/b/three.tfrecord", 0, str(glob_tree)),
        (f"{glob_tree}/c/four.tfrecord", 0, str(glob_tree)),
    ]


def test_glob_component_starting_with_underscore_opts_in(glob_tree: Path) -> None:
    found = discover(f"{glob_tree}/_*/*.tfrecord")
    assert relative_paths(found, glob_tree) == ["_h/hidden.tfrecord"]


def test_glob_false_takes_characters_literally(tmp_path: Path) -> None:
    write_tree(tmp_path, {"x[1].tfrecord": b"1", "x1.tfrecord": b"22"})
    literal = discover(tmp_path / "x[1].tfrecord", glob=False)
    assert listing(literal) == [(f"{tmp_path}/x[1].tfrecord", 1, None)]
    pattern = discover(tmp_path / "x[1].tfrecord")
    assert listing(pattern) == [(f"{tmp_path}/x1.tfrecord", 2, str(tmp_path))]


def test_glob_matching_nothing_falls_back_to_a_literal_file(tmp_path: Path) -> None:
    write_tree(tmp_path, {"y[2].tfrecord": b"1"})
    assert listing(discover(tmp_path / "y[2].tfrecord")) == [(f"{tmp_path}/y[2].tfrecord", 1, None)]


def test_glob_memory(mem: MemoryFileSystem) -> None:
    write_mem_tree(mem, "/g", {"k=1/a.tfrecord": b"1", "k=2/b.tfrecord": b"", "k=2/_SUCCESS": b""})
    found = discover("memory://g/**/*.tfrecord")
    assert listing(found) == [("/g/k=1/a.tfrecord", 1, "/g"), ("/g/k=2/b.tfrecord", 0, "/g")]


def test_invalid_glob(tmp_path: Path) -> None:
    with pytest.raises(
        ValueError, match=r"invalid glob pattern '.*/a\*\*': .*'\*\*' can only be an entire path component"
    ):
        discover(f"{tmp_path}/a**")


# --------------------------------------------------------------------------- errors


def test_missing_path(tmp_path: Path) -> None:
    missing = f"{tmp_path}/nope"
    with pytest.raises(FileNotFoundError, match=rf"^no such file or directory: '{missing}'; check the path$"):
        discover(missing)


def test_missing_item_in_a_list(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.tfrecord": b""})
    with pytest.raises(FileNotFoundError, match=r"no such file or directory: '.*/b\.tfrecord'"):
        discover([tmp_path / "a.tfrecord", tmp_path / "b.tfrecord"])


def test_glob_matching_nothing(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.tfrecord": b""})
    pattern = f"{tmp_path}/*.gz"
    with pytest.raises(
        FileNotFoundError,
        match=r"^no files match the pattern '.*/\*\.gz'; check the pattern "
        r"\(pass glob=False to read a path containing \*, \? or \[ literally\)$",
    ):
        discover(pattern)


def test_missing_memory_url(mem: MemoryFileSystem) -> None:
    with pytest.raises(FileNotFoundError, match=r"^no such file or directory: 'memory://absent/x'; check the path$"):
        discover("memory://absent/x")


def test_empty_source() -> None:
    with pytest.raises(ValueError, match=r"source is an empty list; pass at least one path"):
        discover([])


def test_wrong_source_types() -> None:
    with pytest.raises(TypeError, match=r"source must be a path, URL, or a list or tuple of those, not int"):
        discover(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"source items must be str or os.PathLike, not bytes"):
        discover([b"/x"])  # type: ignore[list-item]


def test_mixed_filesystems(tmp_path: Path, mem: MemoryFileSystem) -> None:
    write_tree(tmp_path, {"a.tfrecord": b""})
    mem.pipe("/m/a.tfrecord", b"")
    with pytest.raises(ValueError, match=r"source items live on different filesystems: .*'memory://m/a\.tfrecord'"):
        discover([str(tmp_path / "a.tfrecord"), "memory://m/a.tfrecord"])


# --------------------------------------------------------------------------- filesystem=


def test_filesystem_option_with_plain_paths(mem: MemoryFileSystem) -> None:
    mem.pipe("/fs/k=1/a.tfrecord", b"abc")
    found = discover("/fs", filesystem=mem)
    assert listing(found) == [("/fs/k=1/a.tfrecord", 3, "/fs")]
    assert found.filesystem is mem
    assert found.files[0].display() == "memory://fs/k=1/a.tfrecord"
    # a URL of the same protocol is accepted too
    assert listing(discover("memory://fs", filesystem=mem)) == [("/fs/k=1/a.tfrecord", 3, "/fs")]


def test_filesystem_option_rejects_other_protocols(mem: MemoryFileSystem) -> None:
    with pytest.raises(ValueError, match=r"'s3://b/x' is a s3:// URL but filesystem= is a MemoryFileSystem"):
        discover("s3://b/x", filesystem=mem)


def test_pyarrow_local_filesystem_becomes_fsspec_local(tmp_path: Path) -> None:
    write_tree(tmp_path, {"a.tfrecord": b"1"})
    found = discover(tmp_path, filesystem=pafs.LocalFileSystem())
    assert isinstance(found.filesystem, LocalFileSystem)
    assert found.is_local is True
    assert listing(found) == [(f"{tmp_path}/a.tfrecord", 1, str(tmp_path))]


def test_pyarrow_filesystem_is_wrapped(tmp_path: Path) -> None:
    write_tree(tmp_path, {"sub/k=1/a.tfrecord": b"12", "sub/_SUCCESS": b""})
    subtree = pafs.SubTreeFileSystem(str(tmp_path), pafs.LocalFileSystem())
    found = discover("sub", filesystem=subtree)
    assert found.is_local is False
    assert listing(found) == [("sub/k=1/a.tfrecord", 2, "sub")]
    assert found.files[0].display() == "sub/k=1/a.tfrecord"
    with found.filesystem.open(found.files[0].path, "rb") as handle:
        assert handle.read() == b"12"


def test_wrong_filesystem_type(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match=r"filesystem must be an fsspec filesystem or a pyarrow.fs.FileSystem, not str"):
        discover(tmp_path, filesystem="memory")


# --------------------------------------------------------------------------- small helpers


def test_is_hidden_name() -> None:
    hidden = [
        "_SUCCESS",
        "_committed_1",
        "_started_1",
        "_temporary",
        ".part-0.crc",
        ".staging",
        "part-0.crc",
        "part-0.tfrecord._COPYING_",
    ]
    visible = ["part-0.tfrecord", "_col=1", "k=__HIVE_DEFAULT_PARTITION__", "x.tmp", "x.inprogress"]
    assert [is_hidden_name(n) for n in hidden] == [True] * len(hidden)
    assert [is_hidden_name(n) for n in visible] == [False] * len(visible)


def test_has_glob_magic() -> None:
    assert [has_glob_magic(p) for p in ["a/*", "a?", "a[bc]", "a/**", "a/b", "k=v%2F"]] == [
        True,
        True,
        True,
        True,
        False,
        False,
    ]


def test_fileinfo_equality_ignores_display_name() -> None:
    assert FileInfo("/x/a", 1, "/x", "memory://x/a") == FileInfo("/x/a", 1, "/x")
    assert FileInfo("/x/a", 1, "/x").relative_dir() == ""
    assert FileInfo("/x/k=1/j=2/a", 1, "/x").relative_dir() == "k=1/j=2"


def test_double_star_lists_each_subtree_once(mem: MemoryFileSystem, monkeypatch: pytest.MonkeyPatch) -> None:
    import tfsql.discovery as discovery_module

    write_mem_tree(mem, "/deep", {"a/b/c/1.tfrecord": b"", "a/b/2.tfrecord": b"", "d/3.tfrecord": b""})
    listed: list[str] = []
    original = discovery_module._list_directory

    def spy(fs, directory, *args):  # type: ignore[no-untyped-def]
        listed.append(directory)
        return original(fs, directory, *args)

    monkeypatch.setattr(discovery_module, "_list_directory", spy)
    found = discover("memory://deep/**")
    assert [f.path for f in found.files] == ["/deep/a/b/2.tfrecord", "/deep/a/b/c/1.tfrecord", "/deep/d/3.tfrecord"]
    assert listed == ["/deep"]
