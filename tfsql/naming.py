"""Names of written files: the TFRecord suffixes, the single-file rule, file name patterns.

The single-file rule (every writer follows it: `tfsql.write_tfrecord`, Polars'
``df.tfrecord.write`` / ``lf.tfrecord.sink``, DuckDB ``COPY ... TO``, the CLI):

- a target whose name ends in a TFRecord suffix (`TFRECORD_SUFFIXES`, any letter case)
  is **one file**;
- anything else is a **directory** of part files;
- a trailing ``/`` always means a directory (``"train.tfrecord/"`` is a directory);
- a partitioned write (``partition_by``) always makes a directory, whatever the name, as
  DuckDB's ``COPY ... TO 'x.parquet' (PARTITION_BY (p))`` does.

Spark's ``save(path)`` always writes a directory (`tfsql.spark.writing`), as Spark's own
formats do.

Existing targets follow the writer's ``mode`` in both cases; nothing is replaced unless
``mode`` says so.

File names of a directory write (`tfsql.writer.files`):

- by default Spark's layout ``part-00000-<job uuid>-c<i:03d>``, or with ``num_shards``
  ``<shard_prefix>-<i:05d>-of-<n:05d>``;
- with ``filename_pattern`` a Python format string with the placeholders ``{i}`` (the
  file's number in the write: 0, 1, ... in the order files are started; the shard index
  with ``num_shards``), ``{n}`` (the number of shards, with ``num_shards`` only) and
  ``{uuid}`` (a fresh UUID per file); format specs work (``{i:05d}``). Text outside the
  braces is kept literally, so a caller can fix its own parts of the name: Spark's
  writer task ``t`` of job ``J`` passes ``filename_pattern=f"part-{t:05d}-{J}-c{{i:03d}}"``
  and gets Spark's ``part-<task>-<job>-c<seq>`` names without renaming anything;
- the extension `tfrecord_extension` (``.tfrecord`` plus ``.gz`` / ``.zz``,
  `COMPRESSION_SUFFIXES`) is appended unless the name already says ``.tfrecord``.

The names' rules are written once, here: `TFRECORD_BASES` and `NAME_COMPRESSIONS` are
the table every reader and writer follows; the DuckDB extension gets them generated into
``tfsql/duckdb_ext/options_gen.h`` (``python -m tfsql.option_header --write``). A name
ending in ``.gz`` / ``.gzip`` holds gzip, one ending in ``.zz`` / ``.zlib`` holds zlib,
and every writer refuses to put another compression under such a name
(`check_name_compression`).

Every file written is reported in `tfsql.WriteResult.files` with its path relative to
the target (``relative``), its partition values and its number ``index`` (the ``{i}``
of its name), so callers never parse file names.

What the writer may name a file or directory, so that its own reader reads it back
(checked before anything is written, by `check_file_names`):

- A file name (from ``filename_pattern`` or ``shard_prefix``) that the reader's
  hidden-file rule skips (``_*``, ``.*``: see `tfsql.discovery.is_hidden_name`) is
  rejected: the write would report rows that no read returns.
- A name holding NUL, or longer than `NAME_MAX_BYTES` bytes of UTF-8 (the limit of a
  path component on Linux, macOS and Windows filesystems), is rejected. Partition
  directories (`tfsql.partitioning.partition_path`) follow the same length rule; their
  other hazards (a hidden-looking key such as ``..``, a value ending in ``.crc``, NUL,
  the text ``__HIVE_DEFAULT_PARTITION__``) are escaped so that they read back exactly.
"""

from __future__ import annotations

import string
import uuid as _uuid
from typing import Any, Literal

from tfsql.discovery import is_hidden_name

__all__ = [
    "TFRECORD_BASES",
    "NAME_COMPRESSIONS",
    "TFRECORD_SUFFIXES",
    "COMPRESSION_SUFFIXES",
    "is_tfrecord_name",
    "check_name_compression",
    "check_pattern_compression",
    "tfrecord_extension",
    "is_single_file_target",
    "compression_from_name",
    "has_tfrecord_name",
    "check_filename_pattern",
    "format_filename",
    "NAME_MAX_BYTES",
    "check_file_names",
    "component_too_long",
]

TFRECORD_BASES = (".tfrecord", ".tfrecords", ".tfrec")
"""The endings that say TFRecord (before a compression suffix, compared in lower case)."""

NAME_COMPRESSIONS: dict[str, Literal["gzip", "zlib"]] = {".gz": "gzip", ".gzip": "gzip", ".zz": "zlib", ".zlib": "zlib"}
"""The compression a file name's ending says (compared in lower case)."""

TFRECORD_SUFFIXES = tuple(base + ending for base in TFRECORD_BASES for ending in ("", *NAME_COMPRESSIONS))
"""File name endings that mark a TFRecord file (compared in lower case): a base of
`TFRECORD_BASES`, alone or followed by a suffix of `NAME_COMPRESSIONS`."""

COMPRESSION_SUFFIXES: dict[str | None, str] = {None: "", "gzip": ".gz", "zlib": ".zz"}
"""The suffix each write compression adds after ``.tfrecord`` (one of `NAME_COMPRESSIONS`)."""

_FIELDS = ("i", "n", "uuid")


def is_single_file_target(path: Any, *, partitioned: bool = False) -> bool:
    """True when a write target names one file (see the module docstring);
    ``partitioned``: the write has ``partition_by`` columns.

    Examples
    --------
    >>> [is_single_file_target(p) for p in ["out/train.tfrecord", "x.TFRecord.GZ", "out", "train.tfrecord/"]]
    [True, True, False, False]
    >>> is_single_file_target("out.tfrecord", partitioned=True)
    False
    """
    if partitioned:
        return False
    text = str(path)
    if text.endswith(("/", "\\")):
        return False
    return is_tfrecord_name(text)


def is_tfrecord_name(path: str) -> bool:
    """True when a path ends in a TFRecord suffix (`TFRECORD_SUFFIXES`, any letter case).

    Examples
    --------
    >>> [is_tfrecord_name(p) for p in ["a.tfrecord", "a.TFRecords.zlib", "a.tfrec.gzip", "a.gz", "a.parquet"]]
    [True, True, True, False, False]
    """
    return path.lower().endswith(TFRECORD_SUFFIXES)


def compression_from_name(path: str) -> Literal["gzip", "zlib"] | None:
    """The compression a file name says (`NAME_COMPRESSIONS`): ``"gzip"`` for ``.gz`` and
    ``.gzip``, ``"zlib"`` for ``.zz`` and ``.zlib``, None for any other name.

    Examples
    --------
    >>> [compression_from_name(p) for p in ["a.tfrecord.gz", "a.GZIP", "a.tfrecord.zz", "a.zlib", "a"]]
    ['gzip', 'gzip', 'zlib', 'zlib', None]
    """
    lowered = path.lower()
    for suffix, compression in NAME_COMPRESSIONS.items():
        if lowered.endswith(suffix):
            return compression
    return None


def check_name_compression(name: str, compression: str | None, *, option: str = "compression") -> None:
    """Raise ``ValueError`` when ``name`` ends in a suffix that says a compression
    (`NAME_COMPRESSIONS`) other than ``compression``, the one the writer would put in it:
    ``gzip.open`` and every reader that trusts the name would fail on the file.
    ``option`` is how the caller's front end spells the compression option.

    Examples
    --------
    >>> check_name_compression("x.tfrecord.gz", "gzip")
    >>> check_name_compression("x.tfrecord", "zlib")  # the name says nothing
    >>> check_name_compression("x.tfrecord.gz", "zlib")
    Traceback (most recent call last):
    ValueError: 'x.tfrecord.gz' ends in '.gz', which says gzip, but the file would hold zlib (compression='zlib'): name it 'x.tfrecord.zz' or pass compression='gzip'
    """
    said = compression_from_name(name)
    if said is None or said == compression:
        return
    suffix = next(s for s in NAME_COMPRESSIONS if name.lower().endswith(s))
    stem = name[: len(name) - len(suffix)]
    holds = compression or "no compression"
    renamed = stem + COMPRESSION_SUFFIXES[compression] if compression in COMPRESSION_SUFFIXES else stem
    raise ValueError(
        f"{name!r} ends in {suffix!r}, which says {said}, but the file would hold {holds} "
        f"({option}={compression!r}): name it {renamed!r} or pass {option}={said!r}"
    )


def check_pattern_compression(
    pattern: str, compression: str | None, *, option: str = "filename_pattern", compression_option: str = "compression"
) -> None:
    """`check_name_compression` for the names a checked ``filename_pattern`` makes: a
    name that already says TFRecord gets no extension added, so its own ending must agree.

    Examples
    --------
    >>> check_pattern_compression("part-{i}", "zlib")  # gets '.tfrecord.zz' added
    >>> check_pattern_compression("part-{i}.tfrecord.gz", None)
    Traceback (most recent call last):
    ValueError: filename_pattern 'part-{i}.tfrecord.gz' makes names such as 'part-0.tfrecord.gz', which ends in '.gz', which says gzip, but the file would hold no compression (compression=None): name it 'part-0.tfrecord' or pass compression='gzip'
    """
    name = format_filename(pattern, 0, 1)
    if not has_tfrecord_name(name):
        return
    try:
        check_name_compression(name, compression, option=compression_option)
    except ValueError as err:
        raise ValueError(
            f"{option} {pattern!r} makes names such as {name!r}, which {str(err).split(' ', 1)[1]}"
        ) from None


def tfrecord_extension(compression: str | None) -> str:
    """The extension of a written file: ``.tfrecord`` plus the compression's suffix.

    Examples
    --------
    >>> tfrecord_extension(None), tfrecord_extension("gzip"), tfrecord_extension("zlib")
    ('.tfrecord', '.tfrecord.gz', '.tfrecord.zz')
    """
    return ".tfrecord" + COMPRESSION_SUFFIXES[compression]


def has_tfrecord_name(name: str) -> bool:
    """True when a file name already says TFRecord (``x.tfrecord``, TFDS's
    ``mnist-train.tfrecord-00000-of-00001``), so writers add no ``.tfrecord`` suffix.

    Examples
    --------
    >>> has_tfrecord_name("mnist-train.tfrecord-00000-of-00004"), has_tfrecord_name("part-0")
    (True, False)
    """
    return ".tfrecord" in name.lower()


def check_filename_pattern(pattern: Any, *, shards: bool = False) -> None:
    """Raise ``ValueError`` unless `pattern` is a usable ``filename_pattern``.

    A file name (no ``/``) and a Python format string whose fields are ``{i}``, ``{uuid}``
    and, when ``shards`` (with ``num_shards``), ``{n}``; it must contain ``{i}`` or
    ``{uuid}`` so that every file gets its own name.

    Examples
    --------
    >>> check_filename_pattern("train-{i:05d}-of-{n:05d}", shards=True)
    >>> check_filename_pattern("train_{j}")
    Traceback (most recent call last):
    ValueError: filename_pattern 'train_{j}' has the field {j}; the fields are {i} (the file's number) and {uuid}
    """
    if not isinstance(pattern, str) or "/" in pattern or "\\" in pattern or not pattern.strip():
        raise ValueError(f"filename_pattern must be a file name such as 'part_{{i}}', got {pattern!r}")
    allowed = _FIELDS if shards else ("i", "uuid")
    try:
        fields = [name for _, name, _, _ in string.Formatter().parse(pattern) if name is not None]
    except ValueError as exc:
        raise ValueError(
            f"filename_pattern {pattern!r} is not a valid format string: {exc}; write a literal brace as {{{{ or }}}}"
        ) from None
    for name in fields:
        if name not in allowed:
            known = " and ".join(
                ["{i} (the file's number)", "{uuid}"] + (["{n} (the number of shards)"] if shards else [])
            )
            also = "; {n} needs num_shards" if name == "n" else ""
            raise ValueError(f"filename_pattern {pattern!r} has the field {{{name}}}; the fields are {known}{also}")
    if not {"i", "uuid"} & set(fields):
        raise ValueError(
            f"filename_pattern {pattern!r} must contain {{i}} (the file's number) or {{uuid}} "
            "so that every file gets its own name"
        )
    try:
        name = format_filename(pattern, 0, 1)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"filename_pattern {pattern!r} cannot be formatted: {exc}") from None
    if "/" in name or not name.strip():
        raise ValueError(f"filename_pattern {pattern!r} gives the file name {name!r}")


def format_filename(pattern: str, i: int, n: int | None = None) -> str:
    """Fill a checked pattern: ``{i}`` → `i`, ``{n}`` → `n`, ``{uuid}`` → a fresh UUID.

    Examples
    --------
    >>> format_filename("mnist-train.tfrecord-{i:05d}-of-{n:05d}", 3, 16)
    'mnist-train.tfrecord-00003-of-00016'
    """
    return pattern.format(i=i, n=n if n is not None else 0, uuid=str(_uuid.uuid4()))


#: The longest path component, in bytes of UTF-8, that the writer creates.
NAME_MAX_BYTES = 255
_WIDEST_NUMBER = 10**12 - 1  # file numbers of {i} never get wider in practice


def component_too_long(name: str) -> bool:
    """True when ``name`` is over `NAME_MAX_BYTES` bytes of UTF-8."""
    return len(name.encode("utf-8", "surrogatepass")) > NAME_MAX_BYTES


def check_file_names(pattern: str | None, shard_prefix: str | None, extension: str) -> None:
    """Raise ``ValueError`` when ``filename_pattern`` or ``shard_prefix`` would make file
    names the reader hides or the filesystem refuses (NUL, over the length limit).

    ``pattern`` has passed `check_filename_pattern` already.

    Examples
    --------
    >>> check_file_names("part_{i:03d}", None, ".tfrecord")
    >>> check_file_names("_part_{i}", None, ".tfrecord")
    Traceback (most recent call last):
    ValueError: filename_pattern '_part_{i}' makes file names such as '_part_0.tfrecord', which readers skip as hidden (names starting with '_' or '.'); start it with another character
    """
    zero_uuid = str(_uuid.UUID(int=0))
    candidates = []
    if pattern is not None:
        shortest = pattern.format(i=0, n=1, uuid=zero_uuid)
        widest = pattern.format(i=_WIDEST_NUMBER, n=_WIDEST_NUMBER, uuid=zero_uuid)
        candidates.append(("filename_pattern", pattern, shortest + extension, widest + extension))
    if shard_prefix is not None:
        name = f"{shard_prefix}-00000-of-00001{extension}"
        candidates.append(("shard_prefix", shard_prefix, name, name))
    for option, value, example, widest in candidates:
        if "\x00" in value:
            raise ValueError(f"{option} {value!r} holds a NUL character, which no file name can hold")
        if is_hidden_name(example):
            raise ValueError(
                f"{option} {value!r} makes file names such as {example!r}, which readers skip as "
                f"hidden (names starting with '_' or '.'); start it with another character"
            )
        if component_too_long(widest):
            raise ValueError(
                f"{option} {value!r} makes file names of up to {len(widest.encode())} bytes, over the "
                f"{NAME_MAX_BYTES}-byte limit of a file name; use a shorter {option}"
            )
