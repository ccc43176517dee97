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
  explicitly is never skipped, nor filtered by ``extensions``. ``features.json``, the
  column description tfsql writers keep beside their files (`tfsql.description`), is
  metadata, never data, below a root.
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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Union

import fsspec
from fsspec.implementations.local import LocalFileSystem

from tfsql._codec import codec
from tfsql.commit import consistent_listing, pending_view
from tfsql.errors import NoDataError

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

    def display(self) -> str:
        """Return the name to use for this file in messages and file-path columns (a URL
        for remote files; bytes that are not UTF-8 shown as ``\\xNN``, the core's
        ``tfsql_path_display``)."""
        return codec.path_display(self.display_name if self.display_name is not None else self.path)

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
    stamps : dict
        The identity of each local file when it was first opened, so that every later
        open and read checks it did not change (:mod:`tfsql.file_guard`).
    """

    filesystem: fsspec.AbstractFileSystem
    files: list[FileInfo]
    is_local: bool
    stamps: dict = field(default_factory=dict, compare=False, repr=False)


def discover(
    source: Source,
    *,
    filesystem: Any = None,
    glob: bool = True,
    exclude_hidden: bool = True,
    extensions: str | Iterable[str] | None = None,
    hidden_file_prefix: str | Sequence[str] | None = None,
) -> Discovered:
    """List the files named by `source`.

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
    exclude_hidden : bool, default True
        Skip hidden and bookkeeping files below a directory or glob root (see the
        module docstring).
    extensions : str or iterable of str, optional
        Keep only listed files whose name ends with one of these suffixes
        (``".tfrecord"``, ``[".tfrecord", ".gz"]``); explicitly named files are kept.
    hidden_file_prefix : str or list of str, optional
        Also skip listed files whose name starts with one of these prefixes (as
        Polars' ``scan_parquet``); explicitly named files are kept.

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
    suffixes = _normalize_extensions(extensions)
    fs_option = _coerce_filesystem(filesystem)

    chosen_fs: fsspec.AbstractFileSystem | None = None
    files: list[FileInfo] = []
    seen: set[str] = set()
    for item in items:
        fs, path = _resolve(item, fs_option)
        if chosen_fs is None:
            chosen_fs = fs
        elif fs is not chosen_fs and fs != chosen_fs:
            raise ValueError(
                f"source items live on different filesystems: {items[0]!r} and {item!r}; read them as separate datasets"
            )
        for info in _list_item(fs, path, item, glob=glob, exclude_hidden=exclude_hidden, suffixes=suffixes):
            if info.path not in seen:
                seen.add(info.path)
                files.append(info)
    assert chosen_fs is not None
    if hidden_file_prefix:
        prefixes = (hidden_file_prefix,) if isinstance(hidden_file_prefix, str) else tuple(hidden_file_prefix)
        files = [f for f in files if f.root is None or not posixpath.basename(f.path).startswith(prefixes)]
    return Discovered(
        filesystem=chosen_fs,
        files=files,
        is_local=isinstance(chosen_fs, LocalFileSystem),
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


def _normalize_extensions(extensions: str | Iterable[str] | None) -> tuple[str, ...] | None:
    if extensions is None:
        return None
    if isinstance(extensions, str):
        return (extensions,)
    suffixes = tuple(extensions)
    if not suffixes or not all(isinstance(s, str) and s for s in suffixes):
        raise ValueError(f"extensions must be non-empty strings such as '.tfrecord', not {extensions!r}")
    return suffixes


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
# listing
# ---------------------------------------------------------------------------------------


def _list_item(
    fs: fsspec.AbstractFileSystem,
    path: str,
    item: str,
    *,
    glob: bool,
    exclude_hidden: bool,
    suffixes: tuple[str, ...] | None,
) -> list[FileInfo]:
    """Return the files one source item names, in the plan's order (by bytes)."""
    if glob and has_glob_magic(path):
        found = _list_glob(fs, path, item, exclude_hidden=exclude_hidden, suffixes=suffixes)
        if found:
            return found
        # nothing matched, but a file literally named with glob characters may exist
    try:
        info = fs.info(path)
    except FileNotFoundError:
        info = None
    if info is None:
        if glob and has_glob_magic(path):
            raise NoDataError.no_match(item)
        raise FileNotFoundError(f"no such file or directory: {item!r}; check the path")
    action = _walk_action(fs, path, info, codec.NAMED)
    if action == codec.WALK_DESCEND:
        files = _list_directory(fs, path, root=path, exempt=(), exclude_hidden=exclude_hidden, suffixes=suffixes)
        if not files:
            raise NoDataError(
                f"no files found in the directory {item!r}: it is empty or holds only hidden files "
                "(names starting with . or _); check the path"
            )
        return files
    return [FileInfo(path, int(info.get("size") or 0), None, _display_name(fs, path))]


def _list_glob(
    fs: fsspec.AbstractFileSystem,
    pattern: str,
    item: str,
    *,
    exclude_hidden: bool,
    suffixes: tuple[str, ...] | None,
) -> list[FileInfo] | None:
    """Expand a glob; empty when it matches no data file."""
    try:
        matches = fs.glob(pattern, detail=True)
    except ValueError as exc:
        raise ValueError(f"invalid glob pattern {item!r}: {exc}") from exc
    if not matches:
        return []
    root = codec.glob_root(pattern)
    # pattern components that explicitly ask for hidden names opt their matches back in
    exempt = tuple(part for part in _relative_parts(pattern, root) if codec.glob_exempts(part))
    by_path: dict[str, FileInfo] = {}
    listed_dirs: set[str] = set()
    for match_path, info in sorted(matches.items(), key=lambda item: len(item[0])):
        match_path = _strip_trailing_sep(match_path)
        # a match of ** is met while walking; other components match it themselves
        action = _walk_action(fs, match_path, info, codec.IN_WALK if "**" in pattern else codec.MATCHED)
        if action == codec.WALK_SKIP:
            continue
        if action == codec.WALK_DESCEND:
            if _has_listed_ancestor(match_path, listed_dirs):
                continue  # its files are already listed (``data/**`` matches every level)
            listed_dirs.add(match_path)
            for found in _list_directory(
                fs, match_path, root=root, exempt=exempt, exclude_hidden=exclude_hidden, suffixes=suffixes
            ):
                by_path.setdefault(found.path, found)
        elif _keep(match_path, root, exempt, exclude_hidden, suffixes):
            by_path.setdefault(
                match_path,
                FileInfo(match_path, int(info.get("size") or 0), root, _display_name(fs, match_path)),
            )
    paths = list(by_path)
    return [by_path[paths[i]] for i in codec.path_order(paths)]


def _has_listed_ancestor(path: str, listed_dirs: set[str]) -> bool:
    parent = posixpath.dirname(path)
    while parent and parent != path:
        if parent in listed_dirs:
            return True
        path, parent = parent, posixpath.dirname(parent)
    return False


def _list_directory(
    fs: fsspec.AbstractFileSystem,
    directory: str,
    *,
    root: str,
    exempt: tuple[str, ...],
    exclude_hidden: bool,
    suffixes: tuple[str, ...] | None,
) -> list[FileInfo]:
    # taken while no commit is under way in it (tfsql.commit)
    listing = consistent_listing(fs, directory, lambda: fs.find(directory, withdirs=False, detail=True))
    # an interrupted commit's record: read the content its rollback restores (tfsql.commit)
    left_out, in_trash = pending_view(fs, listing) if exclude_hidden else (set(), {})
    files = []
    listed = [p for p in listing if p not in left_out]
    for k in codec.path_order([in_trash.get(p, p) for p in listed]):  # by bytes (tfsql_plan_order)
        file_path = listed[k]
        info = listing[file_path]
        if _walk_action(fs, file_path, info, codec.IN_WALK) != codec.WALK_READ:
            continue
        if _keep(in_trash.get(file_path, file_path), root, exempt, exclude_hidden, suffixes):
            files.append(FileInfo(file_path, int(info.get("size") or 0), root, _display_name(fs, file_path)))
    return files


def _keep(
    path: str,
    root: str,
    exempt: tuple[str, ...],
    exclude_hidden: bool,
    suffixes: tuple[str, ...] | None,
) -> bool:
    parts = _relative_parts(path, root)
    if suffixes is not None and not parts[-1].endswith(suffixes):
        return False
    if codec.is_description_name(parts[-1]):  # a writer's column description (tfsql.description)
        return False
    return not exclude_hidden or codec.keep_listed("/".join(parts), exempt)


def _walk_action(fs: fsspec.AbstractFileSystem, path: str, info: dict[str, Any], context: int) -> int:
    """What listing does with one entry (the core's rule): read, descend, skip, or refuse
    (a FIFO, socket or device, which raises `OSError` naming it)."""
    action = codec.walk_action(_entry_kind(fs, path, info), context)
    if action == codec.WALK_REFUSE:
        raise OSError(
            f"{_display_name(fs, path) or path} is not a regular file (a FIFO, socket or device); "
            "tfsql reads regular files only: copy its content to a file and read that"
        )
    return action


def _entry_kind(fs: fsspec.AbstractFileSystem, path: str, info: dict[str, Any]) -> int:
    kind = info.get("type", "file")
    if kind == "file":
        return codec.ENTRY_FILE
    if kind == "directory":
        return codec.ENTRY_DIR_LINK if info.get("islink") else codec.ENTRY_DIR
    if info.get("islink") and isinstance(fs, LocalFileSystem):  # fsspec lists links unresolved
        try:
            mode = os.stat(path).st_mode
        except OSError:
            return codec.ENTRY_MISSING
        if stat.S_ISDIR(mode):
            return codec.ENTRY_DIR_LINK
        return codec.ENTRY_FILE if stat.S_ISREG(mode) else codec.ENTRY_OTHER
    return codec.ENTRY_OTHER


def _relative_parts(path: str, root: str) -> list[str]:
    """Components of `path` below `root` (both in the filesystem's ``/`` form)."""
    if root in ("", "/"):
        relative = path.lstrip("/")
    else:
        root_prefix = root.rstrip("/") + "/"
        relative = path[len(root_prefix) :] if path.startswith(root_prefix) else posixpath.relpath(path, root)
    return [part for part in relative.split("/") if part]
