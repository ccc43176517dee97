"""The ``tfsql verify`` command: frame every record, check every CRC (and with
``--decode`` parse every record), and report each problem with its file, record index
and byte offset."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import time
import warnings
from dataclasses import dataclass
from typing import Any

from tfsql.cli.console import Console
from tfsql.cli.errors import EXIT_DATA, EXIT_OK
from tfsql.cli.inputs import _file_size, _open_dataset, _open_files
from tfsql.cli.options import dataset_options, given_or_default


@dataclass(frozen=True)
class Problem:
    """One corrupt record (or unreadable stretch) found by ``verify``."""

    path: str
    record_index: int | None
    offset: int | None
    message: str


def cmd_verify(args: argparse.Namespace, console: Console) -> int:
    """``tfsql verify PATH``: frame every record, check every CRC, report each problem."""
    from tfsql.errors import TFSQLError
    from tfsql.scanning import open_frame_reader

    started = time.perf_counter()
    ds = _open_files(args.path, args)
    files = [ds.discovered.files[i] for i in ds.file_indices]
    problems: list[Problem] = []

    def record(error) -> None:  # each corrupt record: noted, and reading goes on where framing allows
        message = str(error)
        if error.rest_of_file:
            message += "; the rest of the file cannot be framed"
        problems.append(Problem(error.path, error.record_index, error.offset, message))

    options = dataclasses.replace(ds.options, verify_checksums=True, on_corrupt=record)
    decoder = None
    if args.decode:
        decoder, problem = _verify_decoder(args)
        if problem is not None:
            problems.append(problem)
            console.out(f"CORRUPT {problem.message}")
            console.out("(no schema could be inferred, so the records are framed and CRC-checked, not decoded)")
    records = nbytes = 0
    with console.progress(total=len(files), unit=" files", desc="verify") as bar:
        for file in files:
            path = file.display()
            before = len(problems)
            nbytes += _file_size(path)
            try:
                with contextlib.closing(open_frame_reader(ds.discovered, file, options)) as reader:
                    for block in reader.blocks():
                        records += len(block)
                        if decoder is not None:
                            problems += _decode_problems(decoder, block)
            except TFSQLError as exc:  # e.g. a corrupt or truncated gzip stream
                problems.append(
                    Problem(path, getattr(exc, "record_index", None), getattr(exc, "offset", None), str(exc))
                )
            for problem in problems[before:]:
                bar.clear()
                console.out(f"CORRUPT {problem.message}")
            bar.update(1)
    seconds = time.perf_counter() - started
    bad_files = len({problem.path for problem in problems})
    if problems:
        console.out(
            f"FAILED: {len(problems)} problem{'' if len(problems) == 1 else 's'} in {bad_files} of "
            f"{len(files)} files ({records:,} good records)"
        )
    else:
        what = "framed, CRC-checked and decoded" if decoder is not None else "framed and CRC-checked"
        console.out(f"OK: {records:,} records in {len(files)} file{'' if len(files) == 1 else 's'} {what}")
    console.summary(files=len(files), records=records, nbytes=nbytes, seconds=seconds, verb="verified")
    return EXIT_DATA if problems else EXIT_OK


def _verify_decoder(args: argparse.Namespace) -> tuple[Any, Problem | None]:
    """A decoder of every column of the inferred schema, or the problem that stopped
    inference (a record in the inference sample that does not decode)."""
    from tfsql.decoding import BlockDecoder
    from tfsql.errors import TFSQLError
    from tfsql.options import record_code
    from tfsql.schema import column_specs

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # framing problems are reported by the check itself
            ds = _open_dataset(args.path, args, on_corrupt="skip")
            record_type = given_or_default(dataset_options(args), "record_type")
    except TFSQLError as exc:
        return None, Problem(
            getattr(exc, "path", None) or args.path,
            getattr(exc, "record_index", None),
            getattr(exc, "offset", None),
            str(exc),
        )
    code = record_code(record_type)
    return BlockDecoder(column_specs(ds.data_schema, code), code), None


def _decode_problems(decoder, block) -> list[Problem]:
    """Decode a block; when that fails, decode its records one by one to name each bad one."""
    from tfsql.errors import TFSQLError
    from tfsql.framing import RecordBlock

    try:
        decoder.decode(block)
        return []
    except TFSQLError:
        pass
    problems = []
    for i in range(len(block)):
        single = RecordBlock(
            block.buf,
            block.offsets[i : i + 1],
            block.lengths[i : i + 1],
            block.first_index + i,
            block.base_offset,
            block.path,
        )
        try:
            decoder.decode(single)
        except TFSQLError as exc:
            problems.append(Problem(block.path, block.first_index + i, block.record_offset(i), str(exc)))
    return problems
