"""``Literal`` types of tfsql's string options, for type checkers and readers of signatures.

Examples
--------
>>> from typing import get_args
>>> get_args(Mode)
('error', 'append', 'overwrite', 'overwrite_partitions', 'ignore')
"""

from __future__ import annotations

from typing import Callable, Literal, Union

__all__ = ["RecordType", "ReadCompression", "WriteCompression", "Mode", "OnCorrupt", "Lists"]

#: ``record_type=``: tfsql's names and Spark-TFRecord's.
RecordType = Literal["example", "sequence_example", "bytes", "Example", "SequenceExample", "ByteArray"]

#: ``compression=`` when reading: ``"infer"`` detects gzip and zlib per file.
ReadCompression = Union[Literal["infer", "gzip", "zlib", "none"], None]

#: ``compression=`` when writing.
WriteCompression = Union[Literal["gzip", "zlib", "none"], None]

#: ``mode=`` of :func:`tfsql.write_tfrecord`.
Mode = Literal["error", "append", "overwrite", "overwrite_partitions", "ignore"]

#: ``on_corrupt=``: raise, skip with a warning, or call a function with each
#: :class:`tfsql.CorruptRecordError`.
OnCorrupt = Union[Literal["raise", "skip"], Callable[[Exception], object]]

#: ``lists=`` of schema inference.
Lists = Literal["auto", "always"]
