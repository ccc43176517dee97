"""Opening a command's input (a dataset or its raw files) from its reading options;
file sizes for summary lines."""

from __future__ import annotations

import argparse
import os
from typing import Any

from tfsql.cli.options import dataset_options


def _open_dataset(path: str, args: argparse.Namespace, **extra: Any):
    """``tfsql.dataset(path)`` with the reading options given (``extra`` overrides them)."""
    import tfsql

    return tfsql.dataset(path, **{**dataset_options(args), **extra})


def _open_files(path: str, args: argparse.Namespace):
    """The dataset's files without inferring a schema (raw records): count, verify."""
    options = dataset_options(args)
    options.pop("schema", None)  # raw records have one column, whatever --schema says
    options["record_type"] = "bytes"
    import tfsql

    return tfsql.dataset(path, **options)


def _file_size(path: str) -> int:
    if os.path.exists(path):
        return os.path.getsize(path)
    import fsspec

    fs, inner = fsspec.core.url_to_fs(path)
    return int(fs.size(inner))
