"""Opening a dataset: :func:`dataset` finds the files (discovery, TFDS/TFX layouts,
hive partitions), checks the reading options against :mod:`tfsql.options` and resolves
the schema (given, described by TFDS ``features.json``, or inferred from a sample),
giving a :class:`~tfsql.arrow_dataset.Dataset`.

Examples
--------
>>> import tempfile, pyarrow as pa, pyarrow.compute as pc, tfsql
>>> out = tempfile.mkdtemp()
>>> _ = tfsql.write_tfrecord(pa.table({"x": [1, 2, 3], "split": ["a", "b", "a"]}), out, partition_by=["split"])
>>> ds = tfsql.dataset(out)
>>> ds.schema
x: int64
split: string
>>> ds.to_table(filter=pc.field("split") == "a").column("x").to_pylist()
[1, 3]
>>> ds.count_rows()
3
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import pyarrow as pa

from tfsql import scanning
from tfsql._bulk import gc_paused
from tfsql._codec import codec

# generated: dataset imports (from tfsql/options.py by python -m tfsql.option_header --write)
from tfsql.option_values import Lists, MissingColumns, OnCorrupt, ReadCompression, RecordType

# end generated: dataset imports
from tfsql.arrow_dataset import Dataset
from tfsql.description import Description, written_description
from tfsql.discovery import Discovered, discover
from tfsql.errors import SchemaError
from tfsql.framing import FrameReader
from tfsql.inference import SampledColumn, infer_data_schema, missing_columns
from tfsql.layouts import Layout, layout_of
from tfsql.messages import RAW_SCHEMA, render
from tfsql.options import ReadOptions
from tfsql.partitioning import Partitioning
from tfsql.schema import RAW_COLUMN, column_specs, normalize_schema
from tfsql.tfds import apply_features, features_schema

__all__ = ["dataset"]

_DEFAULT = ReadOptions()  # the defaults of the parameters below


def dataset(
    source: Any,
    *,
    # generated: dataset parameters (from tfsql/options.py by python -m tfsql.option_header --write)
    schema: pa.Schema | Mapping[str, Any] | None = _DEFAULT.schema,
    record_type: RecordType = _DEFAULT.record_type,
    compression: ReadCompression = _DEFAULT.compression,
    verify_checksums: bool = _DEFAULT.verify_checksums,
    on_corrupt: OnCorrupt = _DEFAULT.on_corrupt,
    hive_partitioning: bool | None = _DEFAULT.hive_partitioning,
    hive_schema: pa.Schema | Mapping[str, Any] | None = _DEFAULT.hive_schema,
    include_file_paths: str | None = _DEFAULT.include_file_paths,
    infer_sample: int | None = _DEFAULT.infer_sample,
    infer_files: int | None = _DEFAULT.infer_files,
    infer_bytes: int | None = _DEFAULT.infer_bytes,
    lists: Lists = _DEFAULT.lists,
    missing_columns: MissingColumns = _DEFAULT.missing_columns,
    filesystem: Any = _DEFAULT.filesystem,
    glob: bool = _DEFAULT.glob,
    batch_size: int = _DEFAULT.batch_size,
    batch_bytes: int = _DEFAULT.batch_bytes,
    threads: int | None = _DEFAULT.threads,
    max_record_bytes: int = _DEFAULT.max_record_bytes,
    split_bytes: int | None = _DEFAULT.split_bytes,
    hidden_file_prefix: str | Sequence[str] | None = _DEFAULT.hidden_file_prefix,
    # end generated: dataset parameters
) -> Dataset:
    """Open TFRecord files as a dataset: discovered, partitioned, schema resolved.

    Parameters
    ----------
    source : str, path, or list of them
        Files, directories (read recursively), globs (``*``, ``?``, ``[...]``, ``**``)
        and fsspec URLs (``s3://``, ``gs://``, ``memory://``...). Hidden and bookkeeping
        files (``_*``, ``.*``, ``_SUCCESS``, ``*.crc``) are skipped. TFDS dataset
        directories (their JSON metadata is skipped, the schema comes from
        ``features.json``) and TFX ``Split-<name>/`` directories get a ``split``
        column that prunes like a partition column (:mod:`tfsql.layouts`).
    .. generated: dataset docs (from tfsql/options.py by python -m tfsql.option_header --write)
    schema : pyarrow.Schema or dict of name -> pyarrow type, optional
        Skip inference: read these columns, cast (range-checked) to these types.
        ``list<list<...>>`` columns read SequenceExample feature lists.
    record_type : {"example", "sequence_example", "bytes"}
        Spark-TFRecord's ``"Example"``, ``"SequenceExample"``, ``"ByteArray"`` work too.
        ``"bytes"`` reads each record as one binary column ``record``.
    compression : {"infer", None, "gzip", "zlib"}
        ``"infer"`` detects gzip and zlib by their magic bytes, per file.
    verify_checksums : bool
        Check each record's data CRC (the length CRC is always checked).
    on_corrupt : {"raise", "skip"} or callable
        ``"skip"`` drops records whose data CRC fails (and the rest of a file after a
        bad length or truncation) with a warning for each; a callable is called with
        each :class:`~tfsql.errors.CorruptRecordError` instead of the warning.
    hive_partitioning : bool or None
        None discovers ``key=value`` directories; False ignores them; True requires
        them.
    hive_schema : pyarrow.Schema or dict, optional
        Types of partition columns (default: int64 when every value is an integer, else
        string).
    include_file_paths : str, optional
        Add a string column of this name holding each row's file.
    infer_sample : int or None
        Inference reads the first ``infer_sample`` records of each sampled file (None:
        all). See :mod:`tfsql.inference`.
    infer_files : int or None
        Inference samples up to ``infer_files`` files, spread over the list (None: all).
    infer_bytes : int or None
        A file's inference sample also ends once it holds this many record bytes
        (default 4 MiB; None: no byte bound; ignored with ``infer_sample=None``).
    lists : {"auto", "always"}
        ``"always"`` infers list columns even where every record holds one value.
    missing_columns : {"raise", "insert"}
        A ``schema=`` column that none of the records inference would sample holds
        raises a :class:`~tfsql.errors.SchemaError` naming it (a misspelt name; a column
        the dataset's ``features.json`` names is none, and reads as null); ``"insert"``
        reads it as null.
    filesystem : fsspec filesystem, optional
        For plain paths on another filesystem.
    glob : bool
        False treats ``*?[`` in paths literally.
    batch_size : int
        Rows per batch at most.
    batch_bytes : int
        Bytes per batch at most, of both the records read and the Arrow columns decoded
        from them (a batch of many columns holds fewer rows).
    threads : int, optional
        Decode threads (default: cores, at most 8); 1 decodes in the calling thread.
    max_record_bytes : int
        A record whose header claims more bytes (default 2 GiB) is reported as corrupt
        (:class:`~tfsql.errors.CorruptRecordError`) before memory is allocated for it.
    split_bytes : int or None
        With several threads, an uncompressed file of at least twice this size is read
        as byte ranges of this size on several threads at once (see :mod:`tfsql.splits`;
        output order is kept). None (the default): a local file of 4 MiB or more is
        still read by the decode threads in pieces of about a batch, smaller ones a
        batch at a time.
    hidden_file_prefix : str or list of str, optional
        Also skip files found in directories or by globs whose name starts with one of
        these prefixes.
    .. end generated: dataset docs

    Returns
    -------
    Dataset

    Examples
    --------
    >>> import tempfile, pyarrow as pa, tfsql
    >>> path = tempfile.mkdtemp()
    >>> _ = tfsql.write_tfrecord(pa.table({"id": [1, 2], "emb": [[0.5, 1.0], [2.0]]}), path)
    >>> tfsql.dataset(path).schema.types  # as written (the column description)
    [DataType(int64), ListType(list<item: double>)]
    >>> tfsql.dataset(path, schema={"id": pa.int8()}).to_table().to_pylist()
    [{'id': 1}, {'id': 2}]
    """
    # Every parameter is a ReadOptions field: the spec checks and normalises them.
    options = ReadOptions(
        # generated: dataset options (from tfsql/options.py by python -m tfsql.option_header --write)
        schema=schema,
        record_type=record_type,
        compression=compression,
        verify_checksums=verify_checksums,
        on_corrupt=on_corrupt,
        hive_partitioning=hive_partitioning,
        hive_schema=hive_schema,
        include_file_paths=include_file_paths,
        infer_sample=infer_sample,
        infer_files=infer_files,
        infer_bytes=infer_bytes,
        lists=lists,
        missing_columns=missing_columns,
        filesystem=filesystem,
        glob=glob,
        batch_size=batch_size,
        batch_bytes=batch_bytes,
        threads=threads,
        max_record_bytes=max_record_bytes,
        split_bytes=split_bytes,
        hidden_file_prefix=hidden_file_prefix,
        # end generated: dataset options
    )
    return open_dataset(source, options)


def open_dataset(source: Any, options: ReadOptions, *, hive_rule: str = "root") -> Dataset:
    """Open a dataset with checked options; `hive_rule` says which directories give hive
    columns: ``"root"`` (below the named root, as Polars' ``scan_parquet``, the rule of
    `dataset`) or ``"path"`` (every directory of each file's path, as DuckDB's
    ``read_parquet``: the rule of the DuckDB front ends). See `tfsql.partitioning`."""
    found = discover(
        source,
        filesystem=options.filesystem,
        glob=options.glob,
        hidden_file_prefix=options.hidden_file_prefix,
        infer_files=options.infer_files,
    )
    layout = layout_of(found)
    hive_schema = options.hive_schema if layout is None else layout.without_split(options.hive_schema)
    written = written_description(found) if layout is None else None
    partitioning = Partitioning.discover(
        found.files, hive_partitioning=options.hive_partitioning, hive_schema=hive_schema, hive_rule=hive_rule
    )
    if written is not None:
        partitioning = _written_partitions(found, written, partitioning, hive_rule, options, hive_schema)
    user_schema = normalize_schema(options.schema)
    code = options.record_code
    sampled: list[SampledColumn] = []
    if code == codec.RAW:
        data_schema = user_schema if user_schema is not None else pa.schema([pa.field(RAW_COLUMN, pa.binary())])
        if len(data_schema) != 1:
            raise SchemaError(render(RAW_SCHEMA["count"], count=len(data_schema)))
    elif user_schema is not None:
        data_schema = user_schema
        if options.missing_columns == "raise":
            _check_missing(found, user_schema, options, _described_names(found, layout, written))
    elif written is not None:
        data_schema = written.data_schema
    elif (described := _tfds_features(found, layout)) is not None and described[1]:
        data_schema = described[0]
    else:
        paths, open_reader = _sample_plan(found, options)
        with gc_paused():  # a record of a million features: a million columns
            data_schema, sampled = infer_data_schema(
                paths,
                open_reader,
                record_type=code,
                infer_sample=options.infer_sample,
                lists=options.lists,
                infer_bytes=options.infer_bytes,
            )
        if described is not None:
            data_schema = apply_features(data_schema, described[0])
    if layout is not None:
        partitioning = layout.add_split_column(partitioning, data_schema)
    specs = column_specs(data_schema, code)  # validate early: unsupported types, lists of lists
    # Features inference saw without a kind were reported then (they carry no values);
    # the scan does not report them again as missing from the sample.
    kindless = {(c.location, c.name) for c in sampled if c.kind == codec.KIND_NONE}
    return Dataset(
        found,
        partitioning,
        data_schema,
        options,
        schema_inferred=user_schema is None,
        reported_unknown=kindless,
        specs=specs,
    )


def _sample_plan(found: Discovered, options: ReadOptions) -> tuple[list[str], Callable[[int], FrameReader]]:
    """The files inference samples (the core's plan) and how to open the i-th."""
    chosen = found.picks
    # through the module, so that a test spying on the files a scan opens sees these
    return [found.files[i].display() for i in chosen], lambda j: scanning.open_frame_reader(
        found, found.files[chosen[j]], options
    )


def _check_missing(found: Discovered, user_schema: pa.Schema, options: ReadOptions, described: list[str]) -> None:
    """``missing_columns="raise"``: a ``schema=`` column that none of the records
    inference would sample holds, and that the dataset's description does not name, is
    an error naming it (judged by the C core). The sample's corrupt records are left to
    the scan to report (once): the core's sample loop reads it tolerantly."""
    paths, open_reader = _sample_plan(found, options)
    missing = missing_columns(
        paths,
        open_reader,
        list(user_schema.names),
        record_type=options.record_code,
        infer_sample=options.infer_sample,
        infer_bytes=options.infer_bytes,
        described=described,
    )
    if missing is not None:
        raise missing


def _described_names(found: Discovered, layout: Layout | None, written: Description | None) -> list[str]:
    """The columns the dataset's own description names: a tfsql writer's
    ``features.json``, or a TFDS directory's."""
    if written is not None:
        return list(written.data_schema.names)
    described = _tfds_features(found, layout)
    return list(described[0].names) if described is not None else []


def _written_partitions(
    found: Discovered,
    written: Description,
    partitioning: Partitioning | None,
    hive_rule: str,
    options: ReadOptions,
    hive_schema: Any,
) -> Partitioning | None:
    """The hive columns typed as the description types them (a write's ``partition_by``
    columns: ``"007"`` stays a string); when no file sits in a ``key=value`` directory
    (a write of no rows, whose one empty file is in the root), null columns. Which column
    takes which type is the core's rule (``codec.written_partitions``)."""
    schema = written.partition_schema
    typed_by, nulls = codec.written_partitions(
        hive_schema is not None,
        options.hive_partitioning is False,
        partitioning.names if partitioning is not None else [],
        schema.names,
    )
    if nulls:
        fields = [schema.field(d) for d in range(nulls)]
        rows = len(found.files)
        null_schema = pa.schema(fields)
        arrays = [pa.nulls(rows, f.type) for f in fields]
        return Partitioning(schema=null_schema, values=pa.Table.from_arrays(arrays, schema=null_schema))
    if partitioning is None:
        return None
    typed = pa.schema([schema.field(d) for d in typed_by if d >= 0])
    if all(partitioning.schema.field(f.name).type == f.type for f in typed):
        return partitioning
    return Partitioning.discover(found.files, hive_schema=typed, hive_rule=hive_rule)


def _tfds_features(found: Discovered, layout: Layout | None) -> tuple[pa.Schema, bool] | None:
    """The columns a TFDS directory's ``features.json`` describes (see `tfsql.tfds`)."""
    if layout is None or layout.kind != "tfds" or found.tfds_dir is None:
        return None
    return features_schema(found.filesystem, found.tfds_dir)
