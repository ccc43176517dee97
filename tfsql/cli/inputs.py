"""Opening a command's input (a dataset or its raw files) from its ``--record-type``
and ``--compression`` options; file sizes for summary lines."""

from __future__ import annotations

import argparse
import os
from typing import Any


def _dataset_options(args: argparse.Namespace) -> dict[str, Any]:
    compression = getattr(args, "input_compression", None) or getattr(args, "compression", "infer")
    options = {
        "record_type": args.record_type,
        "compression": None if compression == "none" else compression,
    }
    if getattr(args, "schema", None) is not None:
        options["schema"] = args.schema
    return options


def _open_dataset(path: str, args: argparse.Namespace, **extra: Any):
    import tfsql

    return tfsql.dataset(path, **_dataset_options(args), **extra)


def _open_files(path: str, args: argparse.Namespace):
    """The dataset's files without inferring a schema (raw records): count, verify."""
    import tfsql

    options = _dataset_options(args)
    options["record_type"] = "bytes"
    return tfsql.dataset(path, **options)


def _file_size(path: str) -> int:
    if os.path.exists(path):
        return os.path.getsize(path)
    import fsspec

    fs, inner = fsspec.core.url_to_fs(path)
    return int(fs.size(inner))
