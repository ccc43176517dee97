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

__all__ = ["TFSQLError", "CorruptRecordError", "SchemaError", "WriteConflictError"]


class TFSQLError(Exception):
    """Base class of every error tfsql raises about data."""


class CorruptRecordError(TFSQLError, ValueError):
    """A record is truncated, fails its CRC check, or is not a valid protobuf.

    Attributes
    ----------
    path : str or None
        The file holding the record.
    record_index : int or None
        0-based index of the record in its file.
    offset : int or None
        Byte offset of the record's header in the (decompressed) file.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        record_index: int | None = None,
        offset: int | None = None,
    ) -> None:
        super().__init__(message)
        self.path = path
        self.record_index = record_index
        self.offset = offset


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
    """

    def __init__(
        self,
        message: str,
        *,
        feature: str | None = None,
        path: str | None = None,
        record_index: int | None = None,
    ) -> None:
        super().__init__(message)
        self.feature = feature
        self.path = path
        self.record_index = record_index


class WriteConflictError(TFSQLError, FileExistsError):
    """A write found data its mode does not allow it to replace or add to: the target
    holds data and ``mode="error"``, or a file it would add already exists. Raised also
    when another writer committed to the target while this one was writing; the target
    is left as that writer committed it.

    Attributes
    ----------
    path : str or None
        The target directory (or the existing file).
    """

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path
