"""The error hierarchy.

Caller mistakes raise builtins (``TypeError``, ``ValueError``, ``FileNotFoundError``);
problems in the data raise these classes. Every message says what is wrong, where
(file, record index, byte offset, feature, column) and what to do.

Examples
--------
>>> import tfsql
>>> issubclass(tfsql.CorruptRecordError, tfsql.TFSQLError)
True
>>> issubclass(tfsql.CorruptRecordError, ValueError)
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tfsql import messages

__all__ = [
    "TFSQLError",
    "CorruptRecordError",
    "SchemaError",
    "FileChangedError",
    "WriteConflictError",
    "NoDataError",
    "OptionError",
    "StaleIndexWarning",
]


class TFSQLError(Exception):
    """Base class of every error tfsql raises about data."""


class StaleIndexWarning(UserWarning):
    """An index sidecar (``.<name>.idx``, :mod:`tfsql.record_index`) does not match its
    file and was ignored: the record headers were walked instead."""


class CorruptRecordError(TFSQLError, ValueError):
    """A record is truncated, fails its CRC check, or is not a valid protobuf.

    The fields say what and where; the message is composed from them here, and only
    here, so every reader (Python, DuckDB, Polars, Spark, the CLI) words a corruption
    the same way. ``record_index`` always counts from the start of the file (or of the
    byte range a split reads, whose ``path`` then names the range).

    Attributes
    ----------
    reason : str
        What is wrong: one of :data:`CorruptRecordError.REASONS` (or a free text, for
        callers that have no record to point at).
    path : str or None
        The file holding the record.
    record_index : int or None
        0-based index of the record in its file.
    offset : int or None
        Byte offset of the record's header in the (decompressed) file.
    rest_of_file : bool
        Whether skipping this corruption skips the rest of the file (a bad length or a
        truncated end after which no record can be found).
    skipped_to : int or None
        Where reading resumed after skipping a bad length: the offset of the next record
        whose CRCs check (the bytes from ``offset`` up to it were skipped).
    length : int or None
        The payload length the record's header claims (``"too_long"``, ``"past_end"``).
    limit : int or None
        ``max_record_bytes`` (``"too_long"``), or the bytes the file holds from the
        record's start (``"truncated"``, ``"past_end"``).
    compression : str or None
        The stream's compression (``"stream_truncated"``, ``"stream_corrupt"``).
    record_type : str or None
        The record type the record was read as (``"malformed"``).
    detail : str or None
        Further detail from the decoder or decompressor.
    suggest_skip : bool
        End the message with how to skip the record (``on_corrupt='skip'``).

    Examples
    --------
    >>> str(CorruptRecordError("data_crc", path="f.tfrecord", record_index=3, offset=120))
    'data CRC mismatch in f.tfrecord, record 3 at byte 120: the record is corrupt'
    >>> err = CorruptRecordError("length_crc", path="f", record_index=0, offset=0, rest_of_file=True,
    ...                          suggest_skip=True)
    >>> print(err)  # doctest: +NORMALIZE_WHITESPACE
    length CRC mismatch in f, record 0 at byte 0: the file is corrupt; at byte 0 this usually
    means the file is not a TFRecord file (or is compressed: pass compression=) (pass
    on_corrupt='skip' to skip it and the bytes up to the next record whose CRCs check)
    >>> err.skipped_message().split("; ")[-1]
    "skipped the rest of the file (on_corrupt='skip')"
    >>> CorruptRecordError("length_crc", path="f", record_index=2, offset=20, skipped_to=90).skipped_message()
    "length CRC mismatch in f, record 2 at byte 20: the file is corrupt; skipped bytes 20-90, up to the next record whose CRCs check (on_corrupt='skip')"
    """

    #: The reasons the message composer knows, with their wording (:mod:`tfsql.messages`).
    REASONS: dict[str, str] = messages.CORRUPT

    def __init__(
        self,
        reason: str,
        *,
        path: str | None = None,
        record_index: int | None = None,
        offset: int | None = None,
        rest_of_file: bool = False,
        length: int | None = None,
        limit: int | None = None,
        compression: str | None = None,
        record_type: str | None = None,
        detail: str | None = None,
        suggest_skip: bool = False,
        skipped_to: int | None = None,
    ) -> None:
        self.reason = reason
        self.path = path
        self.record_index = record_index
        self.offset = offset
        self.rest_of_file = rest_of_file
        self.length = length
        self.limit = limit
        self.compression = compression
        self.record_type = record_type
        self.detail = detail
        self.suggest_skip = suggest_skip
        self.skipped_to = skipped_to
        super().__init__(self._compose())

    def _where(self) -> str:
        return _where(self.path, self.record_index, self.offset)

    def _base(self, dialect: str) -> str:
        template = messages.CORRUPT.get(self.reason)
        if template is None:
            return self.reason
        hint = ""
        if self.offset == 0:
            from tfsql.sniffing import not_tfrecord_hint  # (imports the codec, which imports this)

            hint = not_tfrecord_hint(self.path, dialect)
        detail = self.detail or ""
        if self.reason == "malformed" and detail:
            detail = messages.render(messages.MALFORMED_DETAIL, dialect, detail=detail)
        return messages.render(
            template,
            dialect,
            where=self._where(),
            hint=hint,
            path=self.path,
            length=self.length,
            limit=self.limit,
            compression=self.compression,
            record_type=self.record_type,
            detail=detail,
        )

    def message(self, dialect: str = "python") -> str:
        """The message, its advice spelled for ``dialect`` (``"python"`` or ``"sql"``:
        :data:`tfsql.messages.DIALECTS`); ``str(error)`` is the Python one.

        >>> CorruptRecordError("data_crc", path="f", record_index=0, offset=4, suggest_skip=True).message("sql")
        "data CRC mismatch in f, record 0 at byte 4: the record is corrupt (add on_corrupt := 'skip' or ignore_errors := true to the tfrecord_scan call to skip it)"
        """
        message = self._base(dialect)
        if self.suggest_skip:
            rest = messages.SKIP_REST if self.rest_of_file else ""
            message += messages.render(messages.SKIP_ADVICE, dialect, rest=rest)
        return message

    def _compose(self) -> str:
        return self.message("python")

    def skipped_message(self, dialect: str = "python") -> str:
        """The warning of ``on_corrupt='skip'``: what is wrong and what was skipped."""
        if self.skipped_to is not None:
            what = "range"
        else:
            what = "rest_of_file" if self.rest_of_file else "record"
        what_text = messages.render(
            messages.SKIPPED_WHAT[what], dialect, offset=self.offset, skipped_to=self.skipped_to
        )
        return messages.render(messages.SKIPPED, dialect, message=self._base(dialect), what=what_text)

    def __reduce__(self) -> Any:
        fields = {
            name: getattr(self, name)
            for name in (
                "path",
                "record_index",
                "offset",
                "rest_of_file",
                "length",
                "limit",
                "compression",
                "record_type",
                "detail",
                "suggest_skip",
                "skipped_to",
            )
        }
        return (_rebuild_corrupt, (self.reason, fields))


def _where(path: str | None, record_index: int | None, offset: int | None) -> str:
    """``path, record i at byte n``: where a record is, as far as it is known."""
    where = str(path)
    if record_index is not None:
        where += messages.render(messages.WHERE_RECORD, record_index=record_index)
    if offset is not None:
        where += messages.render(messages.WHERE_OFFSET, offset=offset)
    return where


def _rebuild_corrupt(reason: str, fields: dict) -> CorruptRecordError:
    return CorruptRecordError(reason, **fields)


class SchemaError(TFSQLError, ValueError):
    """The data does not fit the schema (kind conflict, several values in a scalar
    column, a value out of range of the requested type, an unsupported Arrow type).

    Attributes
    ----------
    feature : str or None
        The feature or column concerned.
    path : str or None
        The file, when the error comes from reading.
    record_index : int or None
        0-based index of the record in its file, when known.
    reason : str or None
        For an error met while decoding (`from_reason`): one of
        :data:`tfsql.messages.SCHEMA`'s keys; for the schema inference's refusal
        (`from_inference`): one of :data:`tfsql.messages.INFER`'s keys.
    offset : int or None
        Byte offset of the record, when known.

    Examples
    --------
    >>> err = SchemaError.from_reason("not_scalar", feature="x", path="f", record_index=2, offset=40)
    >>> print(err)  # doctest: +NORMALIZE_WHITESPACE
    feature 'x' holds several values in f, record 2 at byte 40, but column 'x' is a scalar because no
    sampled record had more than one; pass lists='always', a list type in schema=, or a larger infer_sample
    """

    def __init__(
        self,
        message: str,
        *,
        feature: str | None = None,
        path: str | None = None,
        record_index: int | None = None,
        worded: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.feature = feature
        self.path = path
        self.record_index = record_index
        self.reason: str | None = None
        self.offset: int | None = None
        self.found: str | None = None
        self.expected: str | None = None
        self._worded = dict(worded or {})  # dialect -> message, when worded by the C core

    @classmethod
    def from_reason(
        cls,
        reason: str,
        *,
        feature: str,
        path: str | None,
        record_index: int | None,
        offset: int | None,
        found: str | None = None,
        expected: str | None = None,
    ) -> SchemaError:
        """The error of a value met while decoding, worded by :data:`tfsql.messages.SCHEMA`
        from its fields (``found`` / ``expected``: the kinds, for ``"kind_mismatch"``)."""
        error = cls("", feature=feature, path=path, record_index=record_index)
        error.reason, error.offset, error.found, error.expected = reason, offset, found, expected
        error.args = (error.message("python"),)
        return error

    @classmethod
    def from_inference(
        cls,
        reason: str,
        worded: Mapping[str, str],
        *,
        feature: str | None,
        path: str | None,
        record_index: int | None,
        offset: int | None,
    ) -> SchemaError:
        """The schema inference's refusal of its sample (``reason``: one of
        :data:`tfsql.messages.INFER`'s keys), as the C core worded it for each dialect
        it was asked in (``worded``: dialect -> message, the first the error's text; its
        wording has fields, such as the kinds and where each was first seen, that the
        error does not carry).

        >>> err = SchemaError.from_inference("kind_conflict", {"python": "pass schema=", "sql": "pass schema :="},
        ...                                  feature="x", path=None, record_index=None, offset=None)
        >>> str(err), err.message("sql"), err.reason
        ('pass schema=', 'pass schema :=', 'kind_conflict')
        """
        error = cls(next(iter(worded.values())), feature=feature, path=path, record_index=record_index, worded=worded)
        error.reason, error.offset = reason, offset
        return error

    def message(self, dialect: str = "python") -> str:
        """The message, its advice spelled for ``dialect`` (:data:`tfsql.messages.DIALECTS`)."""
        if self._worded:
            return self._worded.get(dialect, str(self))
        if self.reason is None:
            return str(self)
        return messages.render(
            messages.SCHEMA[self.reason],
            dialect,
            feature=self.feature,
            where=_where(self.path, self.record_index, self.offset),
            found=self.found,
            expected=self.expected,
        )


class FileChangedError(TFSQLError, OSError):
    """A file changed while it was read: it shrank, grew, was modified in place, replaced
    by another file or deleted after the scan listed it. The rows read so far are not a
    consistent picture of any version of the file, so the read stops; reading it again
    sees its new content.

    Attributes
    ----------
    path : str or None
        The file.

    Examples
    --------
    >>> str(FileChangedError("size", path="a.tfrecord", before=10, after=4))
    'a.tfrecord changed while it was read: its size went from 10 to 4 bytes; read it again'
    """

    def __init__(self, what: str, *, path: str | None = None, before: int | None = None, after: int | None = None):
        self.what = what
        self.path = path
        self.before = before
        self.after = after
        change = messages.render(messages.FILE_CHANGED_WHAT[what], before=before, after=after)
        super().__init__(messages.render(messages.FILE_CHANGED, path=path, change=change))

    def __reduce__(self) -> Any:
        return (_rebuild_changed, (self.what, self.path, self.before, self.after))


def _rebuild_changed(what: str, path: str | None, before: int | None, after: int | None) -> FileChangedError:
    return FileChangedError(what, path=path, before=before, after=after)


class WriteConflictError(TFSQLError, FileExistsError):
    """A write found data its mode does not allow it to replace or add to: the target
    holds data and ``mode="error"``, or a file it would add already exists. Raised also
    when another writer committed to the target while this one was writing; the target
    is left as that writer committed it.

    Attributes
    ----------
    path : str or None
        The target directory (or the existing file).
    reason : str or None
        What was found: ``"target_exists"`` (a single-file target exists),
        ``"target_holds_data"`` (a directory target holds data), ``"file_exists"`` (a
        file the write would add exists), ``"committed_meanwhile"`` (another writer
        committed while this one wrote), ``"staging_removed"`` (another writer removed
        this one's staged files); front ends word their advice from it.
    """

    def __init__(self, message: str, *, path: str | None = None, reason: str | None = None) -> None:
        super().__init__(message)
        self.path = path
        self.reason = reason


class NoDataError(TFSQLError, FileNotFoundError):
    """A source names no data file: a directory that is empty or holds only hidden files,
    or a glob matching nothing (as DuckDB's ``read_parquet`` and Polars'
    ``scan_parquet`` refuse them). The message names the source item.

    Examples
    --------
    >>> import tempfile, tfsql
    >>> try:
    ...     tfsql.read_tfrecord(tempfile.mkdtemp())
    ... except tfsql.NoDataError as err:
    ...     print(str(err).split(":")[0])
    no files found in the directory '...'
    """

    def __init__(self, *args: Any, pattern: str | None = None) -> None:
        super().__init__(*args)
        self.pattern = pattern

    @classmethod
    def no_match(cls, pattern: str) -> NoDataError:
        """A glob that matches nothing (`tfsql.messages.NO_MATCH`).

        >>> NoDataError.no_match("d/*.tfrecord").message("sql")
        "no files match the pattern 'd/*.tfrecord'; check the pattern (pass glob := false to read a path containing *, ? or [ literally)"
        """
        error = cls(messages.render(messages.NO_MATCH, "python", pattern=repr(pattern)), pattern=pattern)
        return error

    @classmethod
    def empty_directory(cls, directory: str) -> NoDataError:
        """A directory that holds no data file (`tfsql.messages.NO_FILES_IN_DIRECTORY`).

        >>> print(NoDataError.empty_directory("d"))
        no files found in the directory 'd': it is empty or holds only hidden files (names starting with . or _); check the path
        """
        return cls(messages.render(messages.NO_FILES_IN_DIRECTORY, "python", directory=repr(directory)))

    def message(self, dialect: str = "python") -> str:
        """The message, its advice spelled for ``dialect`` (:data:`tfsql.messages.DIALECTS`)."""
        if self.pattern is None:
            return str(self)
        return messages.render(messages.NO_MATCH, dialect, pattern=repr(self.pattern))


class OptionError(ValueError):
    """An option value is not accepted (:mod:`tfsql.options`); the message names the
    option as the caller spelled it and the values it takes.

    >>> from tfsql.options import ReadOptions
    >>> ReadOptions(threads=0)
    Traceback (most recent call last):
    tfsql.errors.OptionError: threads must be a positive integer, not 0
    """
