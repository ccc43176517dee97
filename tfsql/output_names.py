"""What the writer may name a file or directory, so that its own reader reads it back.

Rules (checked before anything is written):

- A file name (from ``filename_pattern`` or ``shard_prefix``) that the reader's
  hidden-file rule skips (``_*``, ``.*``: see `tfsql.discovery.is_hidden_name`) is
  rejected: the write would report rows that no read returns.
- A name holding NUL, or longer than `NAME_MAX_BYTES` bytes of UTF-8 (the limit of a
  path component on Linux, macOS and Windows filesystems), is rejected. Partition
  directories (`tfsql.partitioning.partition_path`) follow the same length rule; their
  other hazards (a hidden-looking key such as ``..``, a value ending in ``.crc``, NUL,
  the text ``__HIVE_DEFAULT_PARTITION__``) are escaped so that they read back exactly.

Examples
--------
>>> check_file_names("part_{i}", None, ".tfrecord")
>>> check_file_names("_part_{i}", None, ".tfrecord")
Traceback (most recent call last):
ValueError: filename_pattern '_part_{i}' makes file names such as '_part_0.tfrecord', which readers skip as hidden (names starting with '_' or '.'); start it with another character
"""

from __future__ import annotations

import uuid

from tfsql.discovery import is_hidden_name

__all__ = ["NAME_MAX_BYTES", "check_file_names", "component_too_long"]

#: The longest path component, in bytes of UTF-8, that the writer creates.
NAME_MAX_BYTES = 255
_WIDEST_NUMBER = "9" * 12  # file numbers of {i} never get wider in practice


def component_too_long(name: str) -> bool:
    """True when ``name`` is over `NAME_MAX_BYTES` bytes of UTF-8."""
    return len(name.encode("utf-8", "surrogatepass")) > NAME_MAX_BYTES


def check_file_names(pattern: str | None, shard_prefix: str | None, extension: str) -> None:
    """Raise ``ValueError`` when ``filename_pattern`` or ``shard_prefix`` would make file
    names the reader hides or the filesystem refuses (NUL, over the length limit)."""
    candidates = []
    if pattern is not None:
        shortest = pattern.replace("{i}", "0").replace("{uuid}", str(uuid.UUID(int=0)))
        widest = pattern.replace("{i}", _WIDEST_NUMBER).replace("{uuid}", str(uuid.UUID(int=0)))
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
                f"hidden (names starting with '_' or '.'); start it with another character")
        if component_too_long(widest):
            raise ValueError(
                f"{option} {value!r} makes file names of up to {len(widest.encode())} bytes, over the "
                f"{NAME_MAX_BYTES}-byte limit of a file name; use a shorter {option}")
