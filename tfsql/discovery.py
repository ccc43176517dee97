"""Find the files a source names: paths, directories, globs and fsspec URLs.

`discover` turns what a user passes to ``tfsql.dataset`` (a path, a directory, a glob,
a URL, or a list of those) into one filesystem and a deterministic list of files, skipping
the hidden and bookkeeping files that Spark, Hadoop and pyarrow leave next to data.

Rules
-----
- A directory contributes every file below it, recursively. A source item that names
  no data file (an empty directory, one holding only hidden files, a glob matching
  nothing) raises `tfsql.NoDataError` naming it, as DuckDB's ``read_parquet`` and
  Polars' ``scan_parquet`` do.
- Symbolic links: a link to a file reads as the file. A link to a directory is entered
  where the source names it or a glob component matches it, never while a directory is
  listed recursively (nor by ``**``), as fsspec's ``find`` and DuckDB's ``glob`` do: a
  link loop (``ln -s . d/a``) is listed once, not followed. A FIFO, socket or device
  raises `OSError` naming it (reading one blocks or returns nothing). The rule is the
  C core's (``tfsql_walk_action``), shared with the DuckDB extension.
- Globs (``glob=True``, the default) understand ``*``, ``?``, ``[...]`` and ``**``;
  ``**`` is a whole path component matching zero or more directory levels
  (``data/**/*.tfrecord`` also matches ``data/x.tfrecord``). A directory matched by a
  glob contributes every file below it, as Spark does (``data/*`` reads the partition
  directories of ``data``). ``glob=False`` takes the characters literally.
- A source item that does not exist raises `FileNotFoundError` naming it; one that
  names no data file (see above) raises `tfsql.NoDataError`, a `FileNotFoundError`.
- Skipped below the root of a directory or glob (Spark's ``shouldFilterOutPathName``; the
  rule is the C core's, shared with the DuckDB extension):
  any path component starting with ``.`` (``.part-0.crc``, ``.staging``); any component
  starting with ``_`` unless it contains ``=`` (``_SUCCESS``, ``_committed_*``,
  ``_started_*``, ``_temporary`` are skipped; the hive directory ``_col=1`` is kept);
  file names ending in ``.crc`` or ``._COPYING_``. ``__HIVE_DEFAULT_PARTITION__`` only
  ever appears after ``=``, so ``k=__HIVE_DEFAULT_PARTITION__`` is kept. Names ending in
  ``.tmp`` or ``.inprogress`` are *not* skipped (writers that stage files give them a
  ``.`` or ``_`` prefix, which is skipped). A glob component that itself starts with
  ``.`` or ``_`` (``data/_staging*/x``) opts its matches back in. A file the user names
  explicitly is never skipped. ``features.json``, the column description tfsql writers
  keep beside their files (`tfsql.description`), is metadata, never data, below a root.
- A directory holding the intent record of a commit a crashed writer left
  (``_tfsql-intent.json``, see `tfsql.commit`) is listed as that commit's recovery
  will leave it: the old files before the commit point, the new ones after.
- Order: source items in the order given; within an item, files sorted by the bytes of
  their paths (the core's ``tfsql_plan_order``, as the DuckDB extension orders them). A file named by two items is kept once, at its first place.
- Local paths (plain paths and ``file://`` URLs) use fsspec's ``LocalFileSystem``; their
  `FileInfo.path` is the absolute path in fsspec's form (``/`` separators, which Windows
  accepts too), ready for ``open`` or ``mmap``.
"""

from __future__ import annotations

import os
import posixpath
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Union

import fsspec
from fsspec.implementations.local import LocalFileSystem

from tfsql._codec import codec
from tfsql.commit import INTENT_NAME, consistent_listing
from tfsql.errors import NoDataError
from tfsql.messages import NO_SUCH_PATH, NOT_REGULAR, render

__all__ = ["FileInfo", "Discovered", "discover", "resolve_path", "is_hidden_name", "has_glob_magic"]

SourceItem = Union[str, "os.PathLike[str]"]
Source = Union[SourceItem, Sequence[SourceItem]]

_LOCAL_PROTOCOLS = frozenset({"file", "local"})


@dataclass(frozen=True)
class FileInfo:
    """One data file found by `discover`.

    Attributes
    ----------
    path : str
        The path as the filesystem accepts it: for local files the absolute path, for
        fsspec filesystems their own path without protocol (``"bucket/x/part-0.tfrecord"``
        for S3, ``"/x/part-0.tfrecord"`` for ``memory://``).
    size : int
        Size in bytes; 0-byte files are valid and empty.
    root : str or None
        The directory the source named (a directory source, or a glob's longest
        non-glob directory prefix), against which hive ``key=value`` directories are
        parsed; None when the user named the file itself.
    display_name : str or None
        How messages name the file (a URL such as ``"memory://x/part-0.tfrecord"`` for
        remote filesystems); None means `path`. Not part of equality.
    mtime_ns : int
        Its modification time as listed (0 when the filesystem gives none).
    has_index : bool or None
        Whether its index sidecar (`codec.index_sidecar_path`) was in the listing of
        its directory; None when its directory was not listed (named files, glob matches).

    Examples
    --------
    >>> f = FileInfo("/data/label=1/part-0.tfrecord", 10, "/data")
    >>> f.display(), f.relative_dir()
    ('/data/label=1/part-0.tfrecord', 'label=1')
    """

    path: str
    size: int
    root: str | None
    display_name: str | None = field(default=None, compare=False)
    mtime_ns: int = field(default=0, compare=False, repr=False)
    has_index: bool | None = field(default=None, compare=False, repr=False)

    def display(self) -> str:
        """Return the name to use for this file in messages and file-path columns (a URL
        for remote files; bytes that are not UTF-8 shown as ``\\xNN``, the core's
        ``tfsql_path_display``)."""
        shown = self.display_name if self.display_name is not None else self.path
        return shown if shown.isascii() else codec.path_display(shown)

    def relative_dir(self) -> str | None:
        """Return the file's directory relative to `root` with ``/`` separators.

        ``""`` when the file sits directly in the root, None when `root` is None.
        """
        if self.root is None:
            return None
        parts = _relative_parts(self.path, self.root)
        return "/".join(parts[:-1])


@dataclass(frozen=True)
class Discovered:
    """The result of `discover`: one filesystem and the files to read, in order.

    Attributes
    ----------
    filesystem : fsspec.AbstractFileSystem
        ``LocalFileSystem`` for local paths, else the fsspec filesystem of the URL or
        the one the caller passed.
    files : list of FileInfo
        The files, in the deterministic order described in the module docstring.
    is_local : bool
        True when `filesystem` is the local filesystem (files can be memory-mapped).
    layout : int
        The layout the core's plan found (``codec.LAYOUT_NONE``, ``_TFDS``, ``_TFX``).
    splits : list of str or None
        With a layout, each file's split.
    tfds_dir : str or None
        For TFDS, the shards' directory when they share one (where ``features.json`` is).
    picks : list of int
        The positions in `files` that schema inference samples.
    stamps : dict
        The identity of each local file when it was first opened, so that every later
        open and read checks it did not change (:mod:`tfsql.file_guard`).
    """

    filesystem: fsspec.AbstractFileSystem
    files: list[FileInfo]
    is_local: bool
    layout: int = 0
    splits: list[str] | None = field(default=None, compare=False, repr=False)
    tfds_dir: str | None = None
    picks: list[int] = field(default_factory=list, compare=False, repr=False)
    stamps: dict = field(default_factory=dict, compare=False, repr=False)


def discover(
    source: Source,
    *,
    filesystem: Any = None,
    glob: bool = True,
    hidden_file_prefix: str | Sequence[str] | None = None,
    infer_files: int | None = None,
) -> Discovered:
    """List the files named by `source`: each item is listed here (os.scandir for local
    directories, fsspec otherwise) and the core's plan (``tfsql_plan``) decides which of
    the listed files are data, their order, their layout and the inference sample.

    Parameters
    ----------
    source : str, os.PathLike, or a list or tuple of those
        Local paths, ``file://`` URLs or fsspec URLs (``memory://``, ``s3://``,
        ``gs://`` ...), each a file, a directory (read recursively) or a glob. All items
        must live on one filesystem.
    filesystem : fsspec.AbstractFileSystem or pyarrow.fs.FileSystem, optional
        The filesystem to resolve plain paths on. A pyarrow filesystem is wrapped with
        fsspec's ``ArrowFSWrapper`` (its local filesystem becomes fsspec's).
    glob : bool, default True
        Expand ``*``, ``?``, ``[...]`` and ``**``; False takes paths literally.
    hidden_file_prefix : str or list of str, optional
        Also skip listed files whose name starts with one of these prefixes (as
        Polars' ``scan_parquet``); explicitly named files are kept.
    infer_files : int, optional
        How many files the inference samples (`Discovered.picks`; None: all).

    Returns
    -------
    Discovered

    Raises
    ------
    FileNotFoundError
        A source item does not exist or its glob matches nothing.
    ValueError
        The source is empty, mixes filesystems, or holds an invalid glob.
    TypeError
        The source or filesystem has the wrong type.

    Examples
    --------
    >>> import fsspec
    >>> mem = fsspec.filesystem("memory")
    >>> mem.pipe("/doc/label=1/part-0.tfrecord", b"")
    >>> mem.pipe("/doc/_SUCCESS", b"")
    >>> found = discover("memory://doc")
    >>> [(f.path, f.size, f.root) for f in found.files]
    [('/doc/label=1/part-0.tfrecord', 0, '/doc')]
    >>> found.files[0].display()
    'memory://doc/label=1/part-0.tfrecord'
    >>> mem.rm("/doc", recursive=True)
    """
    items = _source_items(source)
    fs_option = _coerce_filesystem(filesystem)
    chosen_fs: fsspec.AbstractFileSystem | None = None
    entries: list[Entry] = []
    walked: set[str] = set()  # every path listed walking a directory (hidden ones included)
    resolved = []
    for index, item in enumerate(items):
        fs, path = _resolve(item, fs_option)
        if chosen_fs is None:
            chosen_fs = fs
        elif fs is not chosen_fs and fs != chosen_fs:
            raise ValueError(
                f"source items live on different filesystems: {items[0]!r} and {item!r}; read them as separate datasets"
            )
        resolved.append(path)
        entries += _list_item(fs, path, item, index, walked, glob=glob)
    assert chosen_fs is not None
    prefixes = (hidden_file_prefix,) if isinstance(hidden_file_prefix, str) else tuple(hidden_file_prefix or ())
    order, empty, layout, splits, tfds_dir, picks = codec.plan(entries, len(items), prefixes, infer_files)
    if empty is not None:
        item = items[empty]
        if glob and has_glob_magic(resolved[empty]):
            raise NoDataError.no_match(item)
        raise NoDataError.empty_directory(item)
    local = isinstance(chosen_fs, LocalFileSystem)
    files = []
    for e in (entries[i] for i in order):
        path = e[0]
        has_index = (codec.index_sidecar_path(path) in walked) if path in walked else None
        files.append(FileInfo(path, e[4], e[1], None if local else _display_name(chosen_fs, path), e[5], has_index))
    return Discovered(
        filesystem=chosen_fs,
        files=files,
        is_local=local,
        layout=layout,
        splits=splits,
        tfds_dir=tfds_dir,
        picks=picks,
    )


def is_hidden_name(name: str) -> bool:
    """Return True for a path component that readers skip (Spark's rule).

    Examples
    --------
    >>> [is_hidden_name(n) for n in ["_SUCCESS", ".part-0.crc", "_col=1", "part-0.tfrecord"]]
    [True, True, False, False]
    """
    return codec.is_hidden_name(name)


def has_glob_magic(path: str) -> bool:
    """Return True when `path` contains a glob character (``*``, ``?`` or ``[``).

    Examples
    --------
    >>> has_glob_magic("data/*.tfrecord"), has_glob_magic("data/x.tfrecord")
    (True, False)
    """
    return codec.has_glob_magic(path)


# ---------------------------------------------------------------------------------------
# source items and filesystems
# ---------------------------------------------------------------------------------------


def _source_items(source: Source) -> list[str]:
    if isinstance(source, (str, os.PathLike)):
        raw: list[Any] = [source]
    elif isinstance(source, (list, tuple)):
        raw = list(source)
    else:
        raise TypeError(f"source must be a path, URL, or a list or tuple of those, not {type(source).__name__}")
    if not raw:
        raise ValueError("source is an empty list; pass at least one path, directory or glob")
    items = []
    for item in raw:
        if isinstance(item, os.PathLike):
            item = os.fspath(item)
        if not isinstance(item, str):
            raise TypeError(f"source items must be str or os.PathLike, not {type(item).__name__} ({item!r})")
        if not item:
            raise ValueError("source holds an empty path")
        if "\0" in item:
            raise ValueError(f"the path {item!r} holds a NUL byte, which no file name can hold; remove it")
        items.append(item)
    return items


def resolve_path(path: str, filesystem: Any = None) -> tuple[fsspec.AbstractFileSystem, str]:
    """The file system of ``path`` and the path as that file system names it, as
    `discover` resolves each source item.

    Parameters
    ----------
    path : str
        A local path or a URL (``s3://...``, ``file://...``).
    filesystem : fsspec.AbstractFileSystem or pyarrow.fs.FileSystem, optional
        The file system to use (then a URL's protocol must be its own).

    Examples
    --------
    >>> fs, root = resolve_path("file:///tmp/data/")
    >>> type(fs).__name__, root
    ('LocalFileSystem', '/tmp/data')
    """
    return _resolve(path, _coerce_filesystem(filesystem))


def _coerce_filesystem(filesystem: Any) -> fsspec.AbstractFileSystem | None:
    if filesystem is None or isinstance(filesystem, fsspec.AbstractFileSystem):
        return filesystem
    try:
        import pyarrow.fs as pafs
    except ImportError:  # pragma: no cover - pyarrow is a dependency
        pafs = None
    if pafs is not None and isinstance(filesystem, pafs.FileSystem):
        if isinstance(filesystem, pafs.LocalFileSystem):
            return LocalFileSystem()
        from fsspec.implementations.arrow import ArrowFSWrapper

        return ArrowFSWrapper(filesystem)
    raise TypeError(
        f"filesystem must be an fsspec filesystem or a pyarrow.fs.FileSystem, not {type(filesystem).__name__}"
    )


def _resolve(item: str, fs_option: fsspec.AbstractFileSystem | None) -> tuple[fsspec.AbstractFileSystem, str]:
    """Return the filesystem and the filesystem's own path for one source item."""
    protocol, _ = fsspec.core.split_protocol(item)
    if fs_option is not None:
        if protocol is not None and protocol not in _protocols(fs_option):
            raise ValueError(
                f"{item!r} is a {protocol}:// URL but filesystem= is a "
                f"{type(fs_option).__name__}; pass a plain path or drop filesystem="
            )
        if isinstance(fs_option, LocalFileSystem) and protocol is None:
            return fs_option, _local_path(item)
        return fs_option, _strip_trailing_sep(fs_option._strip_protocol(item))
    if protocol is None:
        return LocalFileSystem(), _local_path(item)
    fs, path = fsspec.core.url_to_fs(item)
    if isinstance(fs, LocalFileSystem):
        return fs, _local_path(path)
    return fs, _strip_trailing_sep(path)


def _protocols(fs: fsspec.AbstractFileSystem) -> tuple[str, ...]:
    protocol = fs.protocol
    return (protocol,) if isinstance(protocol, str) else tuple(protocol)


def _local_path(path: str) -> str:
    absolute = os.path.abspath(os.path.expanduser(path))
    return LocalFileSystem._strip_protocol(absolute)


def _strip_trailing_sep(path: str) -> str:
    stripped = path.rstrip("/")
    return stripped if stripped or not path else "/"


def _display_name(fs: fsspec.AbstractFileSystem, path: str) -> str | None:
    if isinstance(fs, LocalFileSystem):
        return None
    protocol = _protocols(fs)[0]
    if protocol in ("subtree", "mock"):  # wrapped pyarrow filesystems without a URL form
        return None
    if protocol == "memory":
        return "memory://" + path.lstrip("/")
    try:
        return fs.unstrip_protocol(path)
    except Exception:  # pragma: no cover - exotic filesystems
        return f"{protocol}://{path}"


# ---------------------------------------------------------------------------------------
# listing: each item's entries, raw; the core's plan (tfsql_plan) decides what they mean
# ---------------------------------------------------------------------------------------

#: One regular file of a listing, as the core's plan takes it (tfsql/_native.pyi ``plan``):
#: (path, root, pattern, intent record bytes, size, mtime_ns, item, fallback).
Entry = tuple


def _list_item(
    fs: fsspec.AbstractFileSystem, path: str, item: str, index: int, walked: set[str], *, glob: bool
) -> list[Entry]:
    """The raw listing of one source item (hidden files and intent records included);
    the paths met walking directories are added to `walked`."""
    if glob and has_glob_magic(path):
        entries = _list_glob(fs, path, item, index, walked)
        # a file literally named with glob characters is read when the glob keeps nothing
        try:
            literal = _info(fs, path)
        except (OSError, ValueError):
            literal = None  # a store that refuses such a name has no such file
        if literal is not None:
            entries += [e[:7] + (True,) for e in _list_named(fs, path, literal, index, walked)]
        elif not entries:
            raise NoDataError.no_match(item)
        return entries
    info = _info(fs, path)
    if info is None:
        raise FileNotFoundError(render(NO_SUCH_PATH, item=repr(item)))
    return _list_named(fs, path, info, index, walked)


def _info(fs: fsspec.AbstractFileSystem, path: str) -> dict[str, Any] | None:
    try:
        return fs.info(path)
    except FileNotFoundError:
        return None


def _list_named(
    fs: fsspec.AbstractFileSystem, path: str, info: dict[str, Any], index: int, walked: set[str]
) -> list[Entry]:
    if _walk_action(fs, path, info, codec.NAMED) == codec.WALK_DESCEND:
        return _list_directory(fs, path, path, None, index, walked)
    return [(path, None, None, None, int(info.get("size") or 0), _mtime_ns(info), index, False)]


def _list_glob(fs: fsspec.AbstractFileSystem, pattern: str, item: str, index: int, walked: set[str]) -> list[Entry]:
    """The glob's matches: files as they are, directories walked (the core says which:
    one below another walked match is listed with it)."""
    try:
        matches = fs.glob(pattern, detail=True)
    except ValueError as exc:
        raise ValueError(f"invalid glob pattern {item!r}: {exc}") from exc
    root = codec.glob_root(pattern)
    paths = [_strip_trailing_sep(p) for p in matches]
    infos = list(matches.values())
    kinds = [_entry_kind(fs, p, info) for p, info in zip(paths, infos)]
    entries: list[Entry] = []
    for match_path, info, action in zip(paths, infos, codec.plan_matches(paths, kinds, "**" in pattern)):
        if action == codec.WALK_REFUSE:
            _refuse(fs, match_path)
        elif action == codec.WALK_DESCEND:
            entries += _list_directory(fs, match_path, root, pattern, index, walked)
        elif action == codec.WALK_READ:
            entries.append((match_path, root, pattern, None, int(info.get("size") or 0), _mtime_ns(info), index, False))
    return entries


def _list_directory(
    fs: fsspec.AbstractFileSystem, directory: str, root: str, pattern: str | None, index: int, walked: set[str]
) -> list[Entry]:
    """Every regular file below `directory`, taken while no commit is under way in it
    (tfsql.commit), an intent record with its content."""
    if isinstance(fs, LocalFileSystem):
        found = consistent_listing(fs, directory, lambda: _walk_local(directory))
    else:
        found = consistent_listing(fs, directory, lambda: _walk_fsspec(fs, directory))
    entries = []
    walked.update(path for path, _, _ in found)
    for path, size, mtime_ns in found:
        intent = _read_intent(fs, path) if path.endswith(_INTENT_SUFFIX) else None
        entries.append((path, root, pattern, intent, size, mtime_ns, index, False))
    return entries


_INTENT_SUFFIX = "/" + INTENT_NAME


def _read_intent(fs: fsspec.AbstractFileSystem, path: str) -> bytes | None:
    try:
        return fs.cat_file(path)
    except OSError:
        return None  # gone or unreadable: the files are read as they are


def _walk_local(directory: str) -> list[tuple[str, int, int]]:
    """(path, size, mtime_ns) of every file below a local directory, by the core's walk
    rule, one stat per entry (os.scandir's)."""
    out: list[tuple[str, int, int]] = []
    kinds = (codec.ENTRY_FILE, codec.ENTRY_DIR, codec.ENTRY_DIR_LINK, codec.ENTRY_OTHER, codec.ENTRY_MISSING)
    action_of = {kind: codec.walk_action(kind, codec.IN_WALK) for kind in kinds}
    pending = [directory]
    while pending:
        current = pending.pop()
        try:
            it = os.scandir(current)
        except (FileNotFoundError, NotADirectoryError):
            continue
        with it:
            for entry in it:
                path = entry.path if current != "/" else "/" + entry.name
                try:
                    if entry.is_dir(follow_symlinks=False):
                        kind, st = codec.ENTRY_DIR, None
                    elif entry.is_file(follow_symlinks=False):
                        kind, st = codec.ENTRY_FILE, entry.stat(follow_symlinks=False)
                    else:
                        st = entry.stat(follow_symlinks=False)
                        kind = _local_kind(path, st)
                        if kind == codec.ENTRY_FILE and stat.S_ISLNK(st.st_mode):
                            st = os.stat(path)
                except FileNotFoundError:
                    continue
                action = action_of[kind]
                if action == codec.WALK_DESCEND:
                    pending.append(path)
                elif action == codec.WALK_READ and st is not None:
                    out.append((path, st.st_size, st.st_mtime_ns))
                elif action == codec.WALK_REFUSE:
                    _refuse(None, path)
    return out


def _local_kind(path: str, st: os.stat_result) -> int:
    mode = st.st_mode
    if stat.S_ISLNK(mode):
        try:
            mode = os.stat(path).st_mode
        except OSError:
            return codec.ENTRY_MISSING
        if stat.S_ISDIR(mode):
            return codec.ENTRY_DIR_LINK
    if stat.S_ISDIR(mode):
        return codec.ENTRY_DIR
    return codec.ENTRY_FILE if stat.S_ISREG(mode) else codec.ENTRY_OTHER


def _walk_fsspec(fs: fsspec.AbstractFileSystem, directory: str) -> list[tuple[str, int, int]]:
    out = []
    for path, info in fs.find(directory, withdirs=False, detail=True).items():
        if _walk_action(fs, path, info, codec.IN_WALK) == codec.WALK_READ:
            out.append((path, int(info.get("size") or 0), _mtime_ns(info)))
    return out


def _mtime_ns(info: dict[str, Any]) -> int:
    mtime = info.get("mtime")
    return int(mtime * 1e9) if isinstance(mtime, (int, float)) else 0


def _walk_action(fs: fsspec.AbstractFileSystem, path: str, info: dict[str, Any], context: int) -> int:
    """What listing does with one entry (the core's rule): read, descend, skip, or refuse
    (a FIFO, socket or device, which raises `OSError` naming it)."""
    action = codec.walk_action(_entry_kind(fs, path, info), context)
    if action == codec.WALK_REFUSE:
        _refuse(fs, path)
    return action


def _refuse(fs: fsspec.AbstractFileSystem | None, path: str) -> None:
    shown = (_display_name(fs, path) if fs is not None else None) or path
    raise OSError(render(NOT_REGULAR, path=shown))


def _entry_kind(fs: fsspec.AbstractFileSystem, path: str, info: dict[str, Any]) -> int:
    kind = info.get("type", "file")
    if kind == "file":
        return codec.ENTRY_FILE
    if kind == "directory":
        return codec.ENTRY_DIR_LINK if info.get("islink") else codec.ENTRY_DIR
    if info.get("islink") and isinstance(fs, LocalFileSystem):  # fsspec lists links unresolved
        try:
            return _local_kind(path, os.lstat(path))
        except OSError:
            return codec.ENTRY_MISSING
    return codec.ENTRY_OTHER


def _relative_parts(path: str, root: str) -> list[str]:
    """Components of `path` below `root` (both in the filesystem's ``/`` form)."""
    if root in ("", "/"):
        relative = path.lstrip("/")
    else:
        root_prefix = root.rstrip("/") + "/"
        relative = path[len(root_prefix) :] if path.startswith(root_prefix) else posixpath.relpath(path, root)
    return [part for part in relative.split("/") if part]
