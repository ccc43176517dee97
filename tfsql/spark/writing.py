"""Writing with Spark: the write plan (made on the driver), the tasks that stage files
with :func:`tfsql.write_tfrecord`, and the driver's commit or abort.

Each task writes its rows under the hidden ``<target>/_temporary-spark-<job>/task-.../``
directory, naming its files as Spark does by passing ``write_tfrecord`` the
``filename_pattern`` ``part-<task:05d>-<job uuid>-c{i:03d}`` (tfsql adds the
``.tfrecord[.gz|.zz]`` extension), and reports the files :attr:`tfsql.WriteResult.files`
lists: no file name is parsed. When every task has succeeded, the driver moves the
files into place with tfsql's journaled commit (:func:`tfsql.commit.apply_commit`; an
overwrite removes the old data only then) and removes the staging directory when the
job aborts.

Writing options (:func:`tfsql.spark.writer_options`) apply per task: each task writes
its own files, rotating them at ``maxRecordsPerFile`` / ``maxBytesPerFile``. Two are
decided by the job as a whole:

- ``filenamePattern`` names the committed files: the driver numbers every file of the
  job ``{i}`` = 0, 1, ... in task order (and within a task in the order it started its
  files, across partition directories), ``{n}`` is the number of files of the job and
  ``{uuid}`` a fresh UUID per file, e.g. ``"train-{i:05d}-of-{n:05d}"``. With
  ``df.repartition(k)`` that gives exactly ``k`` files (one per task) when no task
  rotates files.
- ``numShards`` is not offered: Spark's partitions decide how many files there are, a
  task cannot move rows to another, so "exactly N files" cannot hold; use
  ``df.repartition(N)`` (one file per task) instead.

``save(path)`` always writes a directory, as Spark's own formats do, whatever the
path's name (``save("train.tfrecord")`` makes a directory ``train.tfrecord``, as
Spark-TFRecord does): tfsql's single-file rule (:mod:`tfsql.naming`) is for writers
outside Spark.

Examples
--------
>>> from pyspark.sql.types import StructType, StructField, LongType
>>> plan = plan_write({"path": "/tmp/out", "codec": "gzip"}, StructType([StructField("id", LongType())]), True)
>>> plan.options["compression"], task_pattern(plan, 3).startswith("part-00003-")
('gzip', True)
"""

from __future__ import annotations

import posixpath
import uuid
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping

import fsspec
import pyarrow as pa
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage
from pyspark.sql.types import ArrayType, BinaryType, StringType, StructType

import tfsql
from tfsql import description, locking
from tfsql.commit import apply_commit, data_entries, recover_locked, remove_quietly
from tfsql.errors import WriteConflictError
from tfsql.naming import (
    check_file_names,
    check_filename_pattern,
    check_pattern_compression,
    tfrecord_extension,
    format_filename,
    has_tfrecord_name,
)
from tfsql.options import WRITE_OPTIONS
from tfsql.record_index import index_path
from tfsql.spark.spark_options import target_path, writer_options
from tfsql.writer import check_write_options

__all__ = ["STAGING_PREFIX", "WritePlan", "plan_write", "task_pattern", "TaskFiles", "Writer"]

#: Writing options that only make sense for a directory of files.

STAGING_PREFIX = "_temporary-spark-"
"""Name prefix of a Spark job's staging directory (`tfsql.commit` leaves these alone)."""


@dataclass
class WritePlan:
    """Everything the tasks and the commit need, decided on the driver (picklable)."""

    target: str  # the output directory (absolute local path or URL)
    job_id: str
    overwrite: bool
    options: dict[str, Any]  # write_tfrecord keyword arguments of each task (no filename_pattern)
    filename_pattern: str | None  # names the committed files (None: Spark's part-... names)
    target_existed: bool
    empty_schema: pa.Schema | None = None  # what a write of no rows describes (None: nothing)

    @property
    def staging(self) -> str:
        return posixpath.join(self.target, STAGING_PREFIX + self.job_id)


def task_pattern(plan: WritePlan, task: int) -> str:
    """The ``filename_pattern`` task ``task`` writes with: Spark's ``part-<task>-<job>-c<i>``."""
    return f"part-{task:05d}-{plan.job_id}-c{{i:03d}}"


@dataclass
class TaskFiles(WriterCommitMessage):
    """What one task staged: paths relative to its task directory (= final relative paths
    unless ``filenamePattern`` renames them)."""

    task: int
    task_dir: str
    files: list[str] = field(default_factory=list)
    rows: int = 0


def _spelled(name: str) -> str:
    """A writing option's name in Spark (from the spec)."""
    return WRITE_OPTIONS[name].spelled("spark") or name


def _check_schema(schema: StructType, options: dict[str, Any]) -> None:
    partition_by = list(options["partition_by"])
    names = schema.fieldNames()
    missing = [c for c in partition_by if c not in names]
    if missing:
        raise ValueError(
            f"option {_spelled('partition_by')} names {missing[0]!r}, which is not a column; the columns are {', '.join(names)}"
        )
    record_type = options["record_type"]
    if record_type == "example":
        for f in schema.fields:
            if isinstance(f.dataType, ArrayType) and isinstance(f.dataType.elementType, ArrayType):
                raise ValueError(
                    f"column {f.name!r} is {f.dataType.simpleString()}: arrays of arrays are "
                    f'SequenceExample feature lists; write with .option("{_spelled("record_type")}", '
                    '"SequenceExample")'
                )
    if record_type == "bytes":
        data = [f for f in schema.fields if f.name not in partition_by]
        if len(data) != 1 or not isinstance(data[0].dataType, (BinaryType, StringType)):
            raise ValueError(
                f"{_spelled('record_type')} ByteArray writes one binary column as the records; the data has "
                f"columns {', '.join(f.name for f in data) or '(none)'} besides {_spelled('partition_by')}"
            )


def plan_write(options: Mapping[str, str], schema: StructType, overwrite: bool) -> WritePlan:
    """Parse and check the write's options and target on the driver, before any task runs."""
    opts = writer_options(options)
    raw, target = target_path(options)
    _check_schema(schema, opts)
    pattern = opts.pop("filename_pattern")
    if pattern is not None:
        check_filename_pattern(pattern, shards=True)  # {n}: the number of files of the job
        check_file_names(pattern, None, ".tfrecord")
        check_pattern_compression(
            pattern,
            opts["compression"],
            option=_spelled("filename_pattern"),
            compression_option=_spelled("compression"),
        )
    fs, root = fsspec.core.url_to_fs(target)
    if fs.isfile(root):
        raise ValueError(
            f"{raw!r} is a file; Spark's save(path) writes a directory of part files: "
            "remove the file or name another path"
        )
    check_write_options(**opts)
    return WritePlan(
        target=target,
        job_id=str(uuid.uuid4()),
        overwrite=bool(overwrite),
        options=opts,
        filename_pattern=pattern,
        target_existed=fs.exists(root),
        empty_schema=_arrow_schema(schema) if opts["record_type"] != "bytes" else None,
    )


def _arrow_schema(schema: StructType) -> pa.Schema | None:
    """The Arrow schema of a Spark write (what a write of no rows describes), None when a
    column has no Arrow type tfsql writes."""
    import pyspark.sql.pandas.types as pandas_types

    try:
        return pandas_types.to_arrow_schema(schema, timezone="UTC")  # the batches' time zone
    except (TypeError, ValueError, NotImplementedError, AssertionError):
        return None


class Writer(DataSourceArrowWriter):
    """Tasks stage files with ``tfsql.write_tfrecord``; the driver commits or aborts."""

    def __init__(self, plan: WritePlan) -> None:
        self.plan = plan

    def write(self, iterator: Iterator[pa.RecordBatch]) -> TaskFiles:
        from pyspark import TaskContext

        plan = self.plan
        context = TaskContext.get()
        task = context.partitionId() if context is not None else 0
        attempt = context.taskAttemptId() if context is not None else uuid.uuid4().int % 10**9
        task_dir = posixpath.join(plan.staging, f"task-{task:05d}-{attempt}")
        first = next(iterator, None)
        if first is None:
            return TaskFiles(task, task_dir)

        def batches() -> Iterator[pa.RecordBatch]:
            yield first
            yield from iterator

        options = dict(plan.options)
        result = tfsql.write_tfrecord(
            batches(), task_dir, mode="overwrite", filename_pattern=task_pattern(plan, task), **options
        )
        staged = [written.relative for written in result.files]
        return TaskFiles(task, task_dir, staged, result.rows)

    def _staged(self, messages: list[TaskFiles | None]) -> list[tuple[str, str]]:
        """(staged path, final relative path) of every file, in task order; then, with
        ``index``, of each file's index sidecar (named after its file's final name)."""
        files = self._staged_files(messages)
        if not self.plan.options.get("index"):
            return files
        return files + [(index_path(source), index_path(relative)) for source, relative in files]

    def _staged_files(self, messages: list[TaskFiles | None]) -> list[tuple[str, str]]:
        """(staged path, final relative path) of every data file, in task order."""
        files: list[tuple[str, str]] = []
        for message in sorted((m for m in messages if m is not None), key=lambda m: m.task):
            _, task_root = fsspec.core.url_to_fs(message.task_dir)
            files.extend((posixpath.join(task_root, relative), relative) for relative in message.files)
        pattern = self.plan.filename_pattern
        if pattern is None:
            return files
        renamed = []
        for i, (source, relative) in enumerate(files):
            directory = posixpath.dirname(relative)
            name = format_filename(pattern, i, len(files))
            if not has_tfrecord_name(name):  # the writer's rule: the extension the task's file got
                name += tfrecord_extension(self.plan.options["compression"])
            renamed.append((source, posixpath.join(directory, name) if directory else name))
        return renamed

    def _description(self, messages: list[TaskFiles | None], fs: Any, staging: str) -> list[tuple[str, str]]:
        """The column description to commit (`tfsql.description`): the one the first task
        that wrote staged; with no rows, one empty file and its description written here
        from the Spark schema. [] when there is none (raw records)."""
        wrote = sorted((m for m in messages if m is not None and m.files), key=lambda m: m.task)
        if not wrote and self.plan.empty_schema is not None:
            task_dir = posixpath.join(self.plan.staging, "task-empty")
            result = tfsql.write_tfrecord(
                self.plan.empty_schema.empty_table(),
                task_dir,
                mode="overwrite",
                filename_pattern=task_pattern(self.plan, 0),
                **self.plan.options,
            )
            wrote = [TaskFiles(0, task_dir, [w.relative for w in result.files])]
            messages[:] = wrote
        for message in wrote:
            _, task_root = fsspec.core.url_to_fs(message.task_dir)
            source = posixpath.join(task_root, description.NAME)
            if fs.exists(source):
                return [(source, description.NAME)]
        return []

    def commit(self, messages: list[TaskFiles | None]) -> None:  # type: ignore[override]  # our tasks' messages
        plan = self.plan
        fs, root = fsspec.core.url_to_fs(plan.target)
        staging = posixpath.join(root, posixpath.basename(plan.staging))
        try:
            messages = list(messages)
            described = self._description(messages, fs, staging)
            with locking.target_lock(fs, root):
                recover_locked(fs, root, keep=[posixpath.basename(staging)], display=plan.target)
                replaced = data_entries(fs, root) if plan.overwrite else []
                if described and not plan.overwrite and data_entries(fs, root):
                    existing = description.read(fs, root)
                    with fs.open(described[0][0], "rb") as handle:
                        given = description.Description.parse(handle.read())
                    if existing is not None and given is not None:
                        description.check_append(existing, given, plan.target)
                    described = []  # the target's own stays (or it has none)
                new = self._staged(messages) + described
                for _, relative in new:
                    if not plan.overwrite and fs.exists(posixpath.join(root, relative)):
                        raise WriteConflictError(
                            f"{posixpath.join(root, relative)} already exists; the write was rolled back",
                            path=posixpath.join(root, relative),
                        )
                apply_commit(fs, root, job="spark-" + plan.job_id, new=new, replaced=replaced)
        finally:
            remove_quietly(fs, staging)

    def abort(self, messages: list[TaskFiles | None]) -> None:  # type: ignore[override]  # our tasks' messages
        plan = self.plan
        fs, root = fsspec.core.url_to_fs(plan.target)
        remove_quietly(fs, posixpath.join(root, posixpath.basename(plan.staging)))
        if not plan.target_existed:
            try:
                if fs.exists(root) and not fs.ls(root, detail=False):
                    fs.rmdir(root)
            except Exception:  # pragma: no cover - cleanup must not mask the failure
                pass
