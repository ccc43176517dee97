"""``tfsql recover PATH``: finish or undo a write that crashed, remove dead writers' leftovers."""

from __future__ import annotations

import argparse

from tfsql.cli.console import Console
from tfsql.cli.errors import EXIT_OK


def cmd_recover(args: argparse.Namespace, console: Console) -> int:
    """Run :func:`tfsql.recover` on the target and print what it did (one line)."""
    import tfsql

    console.out(str(tfsql.recover(args.path)))
    return EXIT_OK
