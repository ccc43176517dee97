"""Where the command's output goes: results on stdout; notes, progress bars and the
summary line (``3 files, 20,000 records, 1.9 MB in 0.41 s``) on stderr."""

from __future__ import annotations

import sys
from typing import Any


class Console:
    """Where the command's output goes.

    Results are printed to ``sys.stdout`` (looked up at each call, so redirection
    works); notes, progress bars and the summary line to ``sys.stderr`` unless quiet.
    Progress bars only appear when stderr is a terminal.
    """

    def __init__(self, *, quiet: bool = False) -> None:
        self.quiet = quiet

    def out(self, text: str = "") -> None:
        print(text, file=sys.stdout, flush=True)

    def note(self, text: str) -> None:
        if not self.quiet:
            print(text, file=sys.stderr, flush=True)

    def error(self, text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    @property
    def shows_progress(self) -> bool:
        return not self.quiet and _isatty(sys.stderr)

    @property
    def shows_query_progress(self) -> bool:
        """Whether DuckDB may draw its own progress bar: it prints it on stdout, so only
        when stdout is a terminal (never into a redirected result)."""
        return not self.quiet and _isatty(sys.stdout)

    def progress(self, **options: Any):
        """A tqdm progress bar on stderr, disabled when not on a terminal or quiet."""
        from tqdm import tqdm

        return tqdm(file=sys.stderr, disable=not self.shows_progress, leave=False, **options)

    def summary(
        self,
        *,
        files: int | None = None,
        records: int | None = None,
        nbytes: int | None = None,
        seconds: float,
        verb: str = "",
    ) -> None:
        """One line: ``[verb] 3 files, 20,000 records, 1.9 MB in 0.41 s``."""
        parts = []
        if files is not None:
            parts.append(f"{files:,} file{'' if files == 1 else 's'}")
        if records is not None:
            parts.append(f"{records:,} record{'' if records == 1 else 's'}")
        if nbytes is not None:
            parts.append(human_bytes(nbytes))
        prefix = f"{verb} " if verb else ""
        self.note(f"{prefix}{', '.join(parts)} in {seconds:.2f} s")


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def human_bytes(n: int) -> str:
    """``1908565`` -> ``'1.9 MB'`` (powers of 1000, as file managers show).

    Examples
    --------
    >>> human_bytes(512), human_bytes(1908565), human_bytes(3_200_000_000)
    ('512 B', '1.9 MB', '3.2 GB')
    """
    value = float(n)
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if value < 1000 or unit == "TB":
            return f"{int(value)} B" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")
