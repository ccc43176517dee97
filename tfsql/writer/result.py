"""What a write reports: `WriteResult` and its `WrittenFile` entries.

Callers read the files a write produced from here (path, path relative to the target,
partition values, number, rows, bytes) rather than parsing file names.

Examples
--------
>>> result = WriteResult("out", [WrittenFile("out/a=1/f-0.tfrecord", {"a": 1}, 3, 120, "a=1/f-0.tfrecord", 0)])
>>> result
WriteResult(1 file, 3 rows, 120 bytes in 'out')
>>> [(f.relative, f.index) for f in result.files]
[('a=1/f-0.tfrecord', 0)]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["WrittenFile", "WriteResult"]


@dataclass(frozen=True)
class WrittenFile:
    """One file `write_tfrecord` wrote.

    Attributes
    ----------
    path : str
        Where the file is after the commit (the target path joined with the file's
        relative path; a URL for non-local filesystems).
    partition : dict
        The partition values of the file's directory (empty without ``partition_by``).
    rows : int
        Records in the file.
    bytes : int
        Size of the file on disk (after compression).
    relative : str
        The file's path relative to the target directory (``"split=train/part-...``);
        the file's name for a single-file target.
    index : int
        The file's number in the write: ``{i}`` of its name (see `tfsql.naming`), the
        order in which files were started, or the shard index with ``num_shards``.
    """

    path: str
    partition: dict[str, Any]
    rows: int
    bytes: int
    relative: str = ""
    index: int = 0


@dataclass(frozen=True)
class WriteResult:
    """What `write_tfrecord` wrote.

    Attributes
    ----------
    path : str
        The target directory as given.
    files : list of WrittenFile
        Every data file written, in the order it was started.
    skipped : bool
        True when ``mode="ignore"`` found existing data and wrote nothing.
    """

    path: str
    files: list[WrittenFile] = field(default_factory=list)
    skipped: bool = False

    @property
    def rows(self) -> int:
        """Total records written."""
        return sum(f.rows for f in self.files)

    @property
    def bytes(self) -> int:
        """Total bytes written (on disk)."""
        return sum(f.bytes for f in self.files)

    @property
    def paths(self) -> list[str]:
        """The paths of the written files."""
        return [f.path for f in self.files]

    def __repr__(self) -> str:
        if self.skipped:
            return f"WriteResult(skipped: {self.path!r} already holds data, mode='ignore')"
        n = len(self.files)
        return (
            f"WriteResult({n} file{'' if n == 1 else 's'}, {self.rows:,} rows, {self.bytes:,} bytes in {self.path!r})"
        )
