"""TensorFlow Datasets metadata: ``features.json`` ↔ Arrow schema, and the files of a
TFDS-layout write.

Reading (`features_schema`). A TFDS version directory's ``features.json`` describes
each top-level feature; these become Arrow fields (other features are inferred from
the records as usual):

==============================  ====================================================
TFDS feature                     Arrow column
==============================  ====================================================
``Image`` (encoded PNG / JPEG)   ``binary`` (the encoded bytes, as stored)
``Text``                         ``string``
``ClassLabel``                   ``int64``; the class names (from ``{name}.labels.txt``
                                 or ``numClasses``) in the field metadata
                                 ``tfds.class_names`` (a JSON list)
``Tensor`` / ``Scalar``, shape   the dtype (``bool``, ints, ``float32``, ``float64``;
``()``                           ``string`` dtype → ``binary``)
``Tensor``, any other shape      ``list<dtype>`` (values flattened row-major)
==============================  ====================================================

Every such field also carries the feature's own JSON in the metadata key
``tfds.feature``, so a table read from TFDS writes back with the same features.

Writing (`write_tfrecord(..., tfds=name)`, COPY ``TFDS 'name'``, CLI ``--tfds``). Shards
``{name}-{split}.tfrecord-{i:05d}-of-{n:05d}``, ``dataset_info.json`` (name, version,
splits with their shard lengths and bytes, ``fileFormat: tfrecord``), ``features.json``
and ``{feature}.labels.txt`` for class labels. Features come from the field metadata
above when present, else from the Arrow type: integers, bool, floats and their lists
→ ``Tensor`` (shape ``()``, ``(n,)`` for ``fixed_size_list``, ``(None,)`` for lists);
``string`` → ``Text``; ``binary`` → ``Tensor(dtype=string)``; dates and timestamps →
``int64``. TFDS has no missing values: a null in a column of fixed shape (scalars,
``fixed_size_list``) is a `tfsql.SchemaError` naming the column and row (a null list
reads back in TFDS as an empty one).

Examples
--------
>>> import pyarrow as pa
>>> feature_of(pa.field("x", pa.list_(pa.float32())))["tensor"]
{'shape': {'dimensions': ['-1']}, 'dtype': 'float32', 'encoding': 'none'}
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

import fsspec
import pyarrow as pa
import pyarrow.compute as pc

from tfsql._codec import codec
from tfsql.errors import SchemaError

__all__ = [
    "FEATURE_KEY",
    "CLASS_NAMES_KEY",
    "features_schema",
    "apply_features",
    "feature_of",
    "features_json",
    "check_tfds_options",
    "tfds_options",
    "require_values",
    "shard_file_name",
    "stage_tfds_metadata",
    "dataset_version",
]

FEATURE_KEY = b"tfds.feature"
CLASS_NAMES_KEY = b"tfds.class_names"

_PREFIX = "tensorflow_datasets.core.features."
_TENSOR = _PREFIX + "tensor_feature.Tensor"
_TEXT = _PREFIX + "text_feature.Text"
_FEATURES_DICT = _PREFIX + "features_dict.FeaturesDict"
_FILEPATH_TEMPLATE = "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}"
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\Z")
_SPLIT = re.compile(r"^[A-Za-z0-9_]+\Z")
_VERSION = re.compile(r"^\d+\.\d+\.\d+\Z")

# --------------------------------------------------------------------------------------
# reading
# --------------------------------------------------------------------------------------


def features_schema(fs: fsspec.AbstractFileSystem, directory: str) -> tuple[pa.Schema, bool] | None:
    """The Arrow fields of the features ``directory/features.json`` describes, and
    whether it described all of them; None without a readable ``features.json``. Which
    type a feature reads as is the C core's rule (``tfsql/core/tfds_features.c``, shared
    with the DuckDB extension); this adds the field metadata."""
    try:
        with fs.open(posixpath.join(directory, "features.json"), "rb") as handle:
            data = handle.read()
        described = codec.tfds_features(data)
        document = json.loads(data) if described is not None else None
    except (FileNotFoundError, OSError, ValueError):
        return None
    if described is None or not isinstance(document, dict):
        return None
    features = document["featuresDict"]["features"]
    fields: dict[str, pa.Field] = {}
    typed, complete = described  # whether every feature is described is the core's rule
    for name, type_name, is_list, class_label in typed:
        if type_name is None:
            continue
        arrow = pa.type_for_alias(type_name)
        feature = features.get(name)
        metadata = {FEATURE_KEY: json.dumps(feature, sort_keys=True).encode()}
        if class_label and isinstance(feature, dict) and isinstance(feature.get("classLabel"), dict):
            names = _class_names(fs, directory, name, feature["classLabel"])
            if names is not None:
                metadata[CLASS_NAMES_KEY] = json.dumps(names).encode()
        fields[name] = pa.field(name, pa.list_(arrow) if is_list else arrow, metadata=metadata)
    return pa.schema(list(fields.values())), complete


def _class_names(fs, directory: str, name: str, class_label: dict) -> list[str] | None:
    try:
        with fs.open(posixpath.join(directory, f"{name}.labels.txt"), "rb") as handle:
            return [line for line in handle.read().decode("utf-8").splitlines() if line]
    except (FileNotFoundError, OSError, UnicodeDecodeError):
        pass
    if isinstance(class_label.get("names"), list):
        return [str(n) for n in class_label["names"]]
    try:
        return [str(i) for i in range(int(class_label["numClasses"]))]
    except (KeyError, TypeError, ValueError):
        return None


def apply_features(inferred: pa.Schema, described: pa.Schema) -> pa.Schema:
    """The inferred schema with every described feature's field in place of (or after)
    the inferred one."""
    typed_by, appended = codec.tfds_merge(inferred.names, described.names)  # the core's rule
    fields = [described.field(d) if d >= 0 else f for f, d in zip(inferred, typed_by)]
    return pa.schema(fields + [described.field(d) for d in appended])


# --------------------------------------------------------------------------------------
# writing
# --------------------------------------------------------------------------------------


def check_tfds_options(
    name: Any,
    *,
    partition_by: Sequence[str],
    mode: str,
    filename_pattern: Any,
    max_rows_per_file: Any,
    max_bytes_per_file: Any,
) -> None:
    """Raise ``ValueError`` for options a TFDS-layout write cannot honour."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"tfds must be a dataset name of letters, digits and _ such as 'my_dataset', got {name!r}")
    if len(partition_by) > 1:
        raise ValueError(f"with tfds, partition_by names the one split column, got {list(partition_by)}")
    if mode not in ("error", "overwrite", "ignore"):
        raise ValueError(
            f"tfds with mode={mode!r}: dataset_info.json describes every split, so a TFDS "
            "directory is written whole; use mode='error', 'overwrite' or 'ignore'"
        )
    for option, value in (
        ("filename_pattern", filename_pattern),
        ("max_rows_per_file", max_rows_per_file),
        ("max_bytes_per_file", max_bytes_per_file),
    ):
        if value is not None:
            raise ValueError(
                f"tfds names the shards {{name}}-{{split}}.tfrecord-{{i:05d}}-of-{{n:05d}}; "
                f"{option} cannot be combined with it (use num_shards)"
            )


def tfds_options(options: Any, schema: pa.Schema | None, root: str) -> Any:
    """The writer options of a TFDS write once the input schema is known: the split
    column (``partition_by``, default ``split`` when present) and one shard per split
    unless ``num_shards`` says otherwise."""
    partition_by = options.partition_by
    if not partition_by and schema is not None and "split" in schema.names:
        partition_by = ("split",)
    for column in partition_by:
        if schema is not None and column in schema.names:
            t = schema.field(column).type
            if not (
                pa.types.is_string(t)
                or pa.types.is_large_string(t)
                or (pa.types.is_dictionary(t) and pa.types.is_string(t.value_type))
            ):
                raise SchemaError(
                    f"the split column {column!r} must hold strings such as 'train', not {t}", feature=column
                )
    return replace(options, partition_by=tuple(partition_by), num_shards=options.num_shards or 1)


def dataset_version(root: str) -> str:
    """The TFDS version of a dataset directory: its last component when it looks like
    ``1.0.0``, else ``1.0.0``.

    >>> dataset_version("/data/mnist/3.0.1"), dataset_version("/data/mnist")
    ('3.0.1', '1.0.0')
    """
    last = posixpath.basename(root.rstrip("/"))
    return last if _VERSION.match(last) else "1.0.0"


def require_values(
    batches: Iterator[pa.RecordBatch], schema: pa.Schema | None, split_columns: Sequence[str]
) -> Iterator[pa.RecordBatch]:
    """Pass `batches` through, raising `tfsql.SchemaError` at the first null in a column
    TFDS parses with a fixed shape (anything but a variable-length list)."""

    if schema is None:
        yield from batches
        return
    fixed = [f.name for f in schema if f.name not in split_columns and not _variable_length(f.type)]
    row_base = 0
    for batch in batches:
        for name in fixed:
            column = batch.column(name)
            if column.null_count:
                row = row_base + int(pc.index(column.is_null(), True).as_py())
                raise SchemaError(
                    f"column {name!r} is null in input row {row}; a TFDS feature of fixed shape needs a "
                    "value in every row: fill the nulls (coalesce / fill_null) or drop those rows",
                    feature=name,
                    record_index=row,
                )
        row_base += batch.num_rows
        yield batch


def _variable_length(t: pa.DataType) -> bool:
    return (
        pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_list_view(t) or pa.types.is_large_list_view(t)
    )


def shard_file_name(name: str, split: Any, index: int, count: int) -> str:
    """``{name}-{split}.tfrecord-{index:05d}-of-{count:05d}``, checking the split name.

    Examples
    --------
    >>> shard_file_name("mnist", "train", 3, 16)
    'mnist-train.tfrecord-00003-of-00016'
    """
    if not isinstance(split, str) or not _SPLIT.match(split):
        raise ValueError(
            f"TFDS split names are letters, digits and _ (such as 'train'), got {split!r}; fix the split column"
        )
    return f"{name}-{split}.tfrecord-{index:05d}-of-{count:05d}"


def feature_of(field: pa.Field) -> dict:
    """The ``features.json`` entry of one Arrow column (see the module docstring)."""
    if field.metadata and FEATURE_KEY in field.metadata:
        return json.loads(field.metadata[FEATURE_KEY])
    t = field.type
    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return {"pythonClassName": _TEXT, "text": {}}
    dimensions: list[str] = []
    if pa.types.is_fixed_size_list(t):
        dimensions, t = [str(t.list_size)], t.value_type
    elif pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_list_view(t) or pa.types.is_large_list_view(t):
        dimensions, t = ["-1"], t.value_type
    dtype = _dtype_of(field.name, t)
    return {
        "pythonClassName": _TENSOR,
        "tensor": {"shape": {"dimensions": dimensions} if dimensions else {}, "dtype": dtype, "encoding": "none"},
    }


def _dtype_of(name: str, t: pa.DataType) -> str:
    if pa.types.is_boolean(t):
        return "bool"
    if pa.types.is_integer(t):
        return "int64" if str(t) == "uint64" else str(t)
    if pa.types.is_floating(t) or pa.types.is_decimal(t):
        return "float64" if pa.types.is_float64(t) else "float32"
    if pa.types.is_temporal(t):
        return "int64"
    if (
        pa.types.is_string(t)
        or pa.types.is_large_string(t)
        or pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
        or pa.types.is_fixed_size_binary(t)
        or pa.types.is_string_view(t)
        or pa.types.is_binary_view(t)
    ):
        return "string"
    raise SchemaError(f"column {name!r} of type {t} has no TFDS feature description", feature=name)


def features_json(schema: pa.Schema) -> dict:
    """The ``features.json`` document of the columns of `schema`."""
    return {"featuresDict": {"features": {f.name: feature_of(f) for f in schema}}, "pythonClassName": _FEATURES_DICT}


def stage_tfds_metadata(
    fs: fsspec.AbstractFileSystem,
    staging: str,
    options: Any,
    schema: pa.Schema,
    files: Sequence[tuple[str, dict, int, int]],
    version: str = "1.0.0",
) -> list[str]:
    """Write ``dataset_info.json``, ``features.json`` and the class label files into
    `staging`; return their names. `files` holds ``(name, partition, rows, bytes)`` of
    every staged shard, in shard order within each split."""
    splits: dict[str, dict] = {}
    for name, partition, rows, size in files:
        split = next(iter(partition.values())) if partition else "train"
        entry = splits.setdefault(
            split, {"filepathTemplate": _FILEPATH_TEMPLATE, "name": split, "numBytes": 0, "shardLengths": []}
        )
        entry["numBytes"] += size
        entry["shardLengths"].append(str(rows))
    for entry in splits.values():
        entry["numBytes"] = str(entry["numBytes"])
    info = {
        "description": f"{options.tfds}, written by tfsql",
        "fileFormat": "tfrecord",
        "moduleName": "tfsql",
        "name": options.tfds,
        "splits": list(splits.values()),
        "version": version,
    }
    documents = {"dataset_info.json": info, "features.json": features_json(schema)}
    written = []
    for name, document in documents.items():
        with fs.open(posixpath.join(staging, name), "wb") as handle:
            handle.write((json.dumps(document, indent=2, sort_keys=True) + "\n").encode())
        written.append(name)
    for field in schema:
        if field.metadata and CLASS_NAMES_KEY in field.metadata:
            names = json.loads(field.metadata[CLASS_NAMES_KEY])
            label_file = f"{field.name}.labels.txt"
            with fs.open(posixpath.join(staging, label_file), "wb") as handle:
                handle.write("".join(f"{n}\n" for n in names).encode())
            written.append(label_file)
    return written
