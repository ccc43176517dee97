"""The dataset-prep SQL scripts shipped with the package (``tfsql/sql/*.sql``), which
``tfsql run NAME`` runs from any directory and ``tfsql run --list`` lists.

A ``tfsql run`` argument that names an existing file is that file; otherwise a name
such as ``split_train_test``, ``split_train_test.sql`` or ``sql/split_train_test.sql``
(the path the scripts had in the repository) is the packaged script of that name.

Examples
--------
>>> [name for name, _ in packaged_scripts()][:2]
['convert_to_tfrecord', 'deduplicate']
>>> resolve_script("sql/split_train_test.sql").name
'split_train_test.sql'
"""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

__all__ = ["packaged_scripts", "resolve_script", "script_listing"]


def _directory() -> Path:
    return Path(str(resources.files("tfsql") / "sql"))


def packaged_scripts() -> list[tuple[str, str]]:
    """``(name, first sentence of its header comment)`` of every packaged script, by name."""
    found = []
    for path in sorted(_directory().glob("*.sql")):
        words = []
        for line in path.read_text(encoding="utf-8").splitlines():
            text = line.removeprefix("--").strip()
            if not line.startswith("--") or not text:
                break
            words.append(text)
        sentence = " ".join(words)
        found.append((path.stem, sentence.split(". ")[0].rstrip(".") + "."))
    return found


def resolve_script(argument: str) -> Path:
    """The script ``tfsql run ARGUMENT`` runs; FileNotFoundError naming the packaged
    scripts when it is neither a file nor one of them."""
    if os.path.exists(argument):
        return Path(argument)
    name = Path(argument).name
    name = name[: -len(".sql")] if name.endswith(".sql") else name
    parent = Path(argument).parent.name
    if parent in ("", "sql"):
        candidate = _directory() / f"{name}.sql"
        if candidate.is_file():
            return candidate
    names = ", ".join(n for n, _ in packaged_scripts())
    raise FileNotFoundError(
        f"no such SQL script: {argument} (neither a file nor a script shipped with tfsql: {names}; "
        "tfsql run --list describes them)"
    )


def script_listing() -> str:
    """What ``tfsql run --list`` prints: each packaged script, what it does, and how to
    see its params."""
    scripts = packaged_scripts()
    width = max(len(n) for n, _ in scripts)
    lines = [f"{name:<{width}}  {what}" for name, what in scripts]
    lines.append("")
    lines.append(
        f"Run one with: tfsql run NAME --param name=value (its params are listed at the top of {_directory()}/NAME.sql)"
    )
    return "\n".join(lines)
