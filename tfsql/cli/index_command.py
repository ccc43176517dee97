"""``tfsql index PATH...``: write the record offset index sidecar of each uncompressed
local TFRecord file (see :mod:`tfsql.record_index`); counts then read no record."""

from __future__ import annotations

import argparse
import os
import time

from tfsql.cli.console import Console
from tfsql.cli.errors import EXIT_OK
from tfsql.cli.inputs import _open_files
from tfsql.cli.options import dataset_options, given_or_default


def cmd_index(args: argparse.Namespace, console: Console) -> int:
    """Index every uncompressed local file PATH names; compressed files are skipped
    with a note (their records have no fixed offsets)."""
    from tfsql.framing import detect_compression
    from tfsql.record_index import index_path, write_index

    started = time.perf_counter()
    given = given_or_default(dataset_options(args), "compression")  # checked by the flag's spec
    files = records = 0
    for path in args.paths:
        for file in _open_files(path, args).files:
            if not os.path.isfile(file):
                raise ValueError(f"tfsql index writes sidecars beside local files; {file!r} is not one")
            with open(file, "rb") as f:
                compressed = detect_compression(f.read(12)) if given == "infer" else given
            if compressed is not None:
                console.note(f"skipped {file}: {compressed}-compressed files cannot be indexed")
                continue
            n = write_index(file)
            files += 1
            records += n
            if args.verbose:
                console.out(f"{n:,}  {index_path(file)}")
    console.summary(files=files, records=records, seconds=time.perf_counter() - started, verb="indexed")
    return EXIT_OK
