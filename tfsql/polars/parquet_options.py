"""``scan_parquet``'s options, translated for TFRecord (used by :mod:`tfsql.polars.scan`).

Each function takes one family of Polars' Parquet options and either applies it to a
:class:`tfsql.Dataset` (or to what opens one) or raises a ``ValueError`` saying why
the option cannot mean anything for TFRecord. ``tests/integration/test_polars_options.py``
keeps the list of differences from the installed Polars' ``scan_parquet``.

Examples
--------
>>> reject_meaningless(parallel="auto", decryption=None)
>>> reject_meaningless(parallel="row_groups")
Traceback (most recent call last):
ValueError: parallel='row_groups' chooses how Parquet row groups or columns are read in parallel; TFRecord has neither: pass threads= (decode threads), parallel='auto' or 'none'
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import pyarrow as pa

from tfsql.errors import SchemaError

__all__ = [
    "reject_meaningless",
    "threads_for",
    "filesystem_for",
    "parse_hive_dates",
    "check_columns",
    "apply_overrides",
    "check_cast_options",
]


def reject_meaningless(**given: Any) -> None:
    """Raise for a Parquet option set to something TFRecord cannot do."""
    parallel = given.get("parallel", "auto")
    if parallel not in ("auto", "none"):
        raise ValueError(
            f"parallel={parallel!r} chooses how Parquet row groups or columns are read in parallel; "
            "TFRecord has neither: pass threads= (decode threads), parallel='auto' or 'none'"
        )
    if given.get("decryption") is not None:
        raise ValueError("decryption= decrypts Parquet modular encryption; TFRecord files are not encrypted")
    if given.get("use_pyarrow"):
        raise ValueError("use_pyarrow=True reads Parquet with pyarrow; for an Arrow table use tfsql.read_tfrecord")
    if given.get("pyarrow_options") is not None:
        raise ValueError(
            "pyarrow_options= goes to pyarrow's Parquet reader; TFRecord options are keywords of read_tfrecord"
        )
    if given.get("memory_map", True) is not True:
        raise ValueError(
            "memory_map= memory-maps Parquet files; tfsql streams TFRecord files, so only True (no effect) is accepted"
        )


def threads_for(threads: int | None, parallel: str, low_memory: bool) -> int | None:
    """Decode threads: ``parallel="none"`` and ``low_memory=True`` decode in the calling
    thread (one batch in flight), unless ``threads=`` says otherwise.

    >>> threads_for(None, "auto", False), threads_for(None, "none", False), threads_for(4, "auto", True)
    (None, 1, 4)
    """
    if threads is not None:
        return threads
    return 1 if parallel == "none" or low_memory else None


# Polars (object_store) credential and storage option names -> fsspec's, per protocol.
_FSSPEC_NAMES: dict[str, dict[str, str]] = {
    "s3": {
        "aws_access_key_id": "key",
        "aws_secret_access_key": "secret",
        "aws_session_token": "token",
        "aws_endpoint_url": "endpoint_url",
        "aws_endpoint": "endpoint_url",
    },
    "gs": {"google_service_account_path": "token", "google_service_account": "token", "bearer_token": "token"},
    "az": {
        "azure_storage_account_name": "account_name",
        "account_name": "account_name",
        "azure_storage_account_key": "account_key",
        "account_key": "account_key",
        "azure_storage_sas_token": "sas_token",
        "sas_token": "sas_token",
    },
}
_PROTOCOL_FAMILY = {
    "s3": "s3",
    "s3a": "s3",
    "gs": "gs",
    "gcs": "gs",
    "az": "az",
    "abfs": "az",
    "abfss": "az",
    "adl": "az",
}


def _fsspec_options(protocol: str, options: Mapping[str, Any]) -> dict[str, Any]:
    names = _FSSPEC_NAMES.get(_PROTOCOL_FAMILY.get(protocol, ""), {})
    out: dict[str, Any] = {}
    for key, value in options.items():
        if key in ("aws_region", "region") and _PROTOCOL_FAMILY.get(protocol) == "s3":
            out.setdefault("client_kwargs", {})["region_name"] = value
        else:
            out[names.get(key.lower(), key)] = value
    return out


def filesystem_for(
    source: Any,
    filesystem: Any,
    storage_options: Mapping[str, Any] | None,
    credential_provider: Callable[[], Any] | str | None,
) -> Any:
    """The fsspec filesystem for ``source`` built with ``storage_options`` and the
    credentials ``credential_provider()`` returns (None: let discovery choose).

    Option names are fsspec's (``key``, ``secret``, ``anon``...); Polars' object_store
    names for S3, GCS and Azure credentials (``aws_access_key_id``...) are translated.

    >>> fs = filesystem_for("memory://x", None, {"skip_instance_cache": True}, "auto")
    >>> type(fs).__name__
    'MemoryFileSystem'
    >>> filesystem_for("data/", None, None, "auto") is None
    True
    """
    if credential_provider not in (None, "auto") and not callable(credential_provider):
        raise TypeError(f"credential_provider must be a function, 'auto' or None, not {credential_provider!r}")
    if not storage_options and not callable(credential_provider):
        return filesystem
    if filesystem is not None:
        raise ValueError("pass either filesystem= or storage_options= / credential_provider=, not both")
    import fsspec

    first = source[0] if isinstance(source, (list, tuple)) and source else source
    protocol, _ = fsspec.core.split_protocol(str(first))
    if protocol in (None, "file", "local"):
        if storage_options:
            raise ValueError(
                "storage_options= configures a remote filesystem, but the source is a local path; "
                "pass a URL such as 's3://bucket/data' or drop storage_options"
            )
        return None  # credentials have no meaning for local files (as in Polars)
    options = _fsspec_options(protocol, storage_options or {})
    if callable(credential_provider):
        returned = credential_provider()
        credentials = returned[0] if isinstance(returned, tuple) else returned
        options.update(_fsspec_options(protocol, credentials))
    return fsspec.filesystem(protocol, **options)


def parse_hive_dates(ds: Any, hive_partitioning: bool | None, hive_schema: Any) -> Any:
    """``try_parse_hive_dates``: string partition columns whose every value is a date
    (``2024-01-01``) become date32, a datetime (``2024-01-01 10:00:00``) timestamp[us]."""
    import polars as pl

    from tfsql.partitioning import Partitioning

    given = set(hive_schema.keys() if hive_schema is not None else ())
    table = ds.partition_values
    types: dict[str, pa.DataType] = {}
    for field in ds.partition_schema:
        if field.name in given or not (pa.types.is_string(field.type) or pa.types.is_large_string(field.type)):
            continue  # (a column description types a Polars write's strings large_string)
        values = pl.Series(table.column(field.name)).drop_nulls()
        if values.is_empty():
            continue
        try:
            values.str.to_date("%Y-%m-%d", strict=True)
            types[field.name] = pa.date32()
            continue
        except Exception:
            pass
        try:
            parsed = values.str.to_datetime(strict=True, time_unit="us")
            if parsed.dtype == pl.Datetime("us"):
                types[field.name] = pa.timestamp("us")
        except Exception:
            pass
    if not types:
        return ds
    schema = {f.name: types.get(f.name, f.type) for f in ds.partition_schema}
    partitioning = Partitioning.discover(ds.discovered.files, hive_partitioning=hive_partitioning, hive_schema=schema)
    return ds.with_partitioning(partitioning)


def _sampled_features(ds: Any, infer_sample: int | None, infer_files: int | None, infer_bytes: int | None) -> set[str]:
    from tfsql.inference import sample_columns, sample_indices
    from tfsql.scanning import open_frame_reader

    found = ds.discovered
    listed = list(ds.file_indices)
    chosen = [listed[j] for j in sample_indices(len(listed), infer_files, [found.files[i].size for i in listed])]
    columns = sample_columns(
        [found.files[i].display() for i in chosen],
        lambda j: open_frame_reader(found, found.files[chosen[j]], ds.options),
        record_type=ds.options.record_code,
        infer_sample=infer_sample,
        infer_bytes=infer_bytes,
    )
    return {c.name for c in columns}


def check_columns(
    ds: Any,
    extra_columns: str,
    *,
    infer_sample: int | None,
    infer_files: int | None,
    infer_bytes: int | None,
) -> None:
    """``extra_columns`` for a user ``schema=``, judged on the records schema inference
    would sample: a sampled feature not in the schema is extra. (``missing_columns`` is a
    reading option, judged by :func:`tfsql.dataset` in every front end.)"""
    if extra_columns not in ("ignore", "raise"):
        raise ValueError(f"extra_columns must be 'ignore' or 'raise', not {extra_columns!r}")
    if extra_columns == "ignore" or ds.options.record_type == "bytes" or not ds.files:
        return
    seen = _sampled_features(ds, infer_sample, infer_files, infer_bytes)
    if not seen:
        return  # no records, or records without features: nothing to judge
    wanted = list(ds.data_schema.names)
    where = f"the sampled records of {len(ds.files)} file{'' if len(ds.files) == 1 else 's'} ({ds.files[0]}...)"
    extra = sorted(seen - set(wanted))
    if extra:
        raise SchemaError(
            f"the records hold features that schema= does not name: {', '.join(map(repr, extra))} "
            f"(in {where}); pass extra_columns='ignore' to read only the schema's features",
            feature=extra[0],
        )


def apply_overrides(ds: Any, overrides: pa.Schema | None) -> Any:
    """``schema_overrides``: the inferred schema with these columns' types replaced."""
    if overrides is None or not len(overrides):
        return ds
    data = ds.data_schema
    unknown = [name for name in overrides.names if name not in data.names]
    if unknown:
        raise ValueError(
            f"schema_overrides names {', '.join(map(repr, unknown))}, not a feature of the inferred schema "
            f"({', '.join(data.names)}); name partition columns in hive_schema="
        )
    fields = [overrides.field(f.name) if f.name in overrides.names else f for f in data]
    return ds.replace_schema(pa.schema(fields))


def check_cast_options(cast_options: Any, schema: pa.Schema) -> None:
    """``cast_options``: TFRecord stores int64, float32 and bytes; ``schema=`` types
    other than those are casts, which ``integer_cast`` / ``float_cast`` may forbid
    (``None``, the default, allows every range-checked cast)."""
    if cast_options is None:
        return
    import polars as pl

    if not isinstance(cast_options, pl.ScanCastOptions):
        raise TypeError(f"cast_options must be a polars.ScanCastOptions or None, not {type(cast_options).__name__}")

    def allowed(option: Any) -> set[str]:
        return {option} if isinstance(option, str) else set(option)

    floats = allowed(cast_options.float_cast)
    for field in schema:
        base = (
            field.type.value_type
            if pa.types.is_list(field.type) or pa.types.is_fixed_size_list(field.type)
            else field.type
        )
        # int64 is the widest signed integer: no integer_cast setting allows another type
        if pa.types.is_integer(base) and base != pa.int64():
            raise SchemaError(
                f"column {field.name!r}: TFRecord stores int64, and cast_options (integer_cast="
                f"{cast_options.integer_cast!r}) forbids casting it to {base}; drop cast_options or read it as Int64",
                feature=field.name,
            )
        if pa.types.is_floating(base) and base != pa.float32():
            if base == pa.float64() and "upcast" in floats:
                continue
            raise SchemaError(
                f"column {field.name!r}: TFRecord stores float32, and cast_options forbids casting it to {base} "
                "(float_cast); pass float_cast='upcast' or read it as Float32",
                feature=field.name,
            )
