"""Pick the codec backend: the C core, or the pure-Python reference.

``TFSQL_PURE_PYTHON=1`` in the environment selects the reference implementation
(``tfsql._reference``, built on ``protobuf`` and ``crc32c``); otherwise the compiled
``tfsql._native`` is used. Both expose the API documented in ``tfsql/_native.pyi``.

Examples
--------
>>> from tfsql._codec import codec
>>> codec.masked_crc32c(b"") == 0xA282EAD8
True
"""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path


def load_codec(pure_python: bool | None = None) -> types.ModuleType:
    """Return the codec module; ``pure_python=None`` reads ``TFSQL_PURE_PYTHON``."""
    if pure_python is None:
        pure_python = os.environ.get("TFSQL_PURE_PYTHON", "") not in ("", "0")
    if pure_python:
        from tfsql import _reference

        return _reference
    try:
        from tfsql import _native
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(missing_native_message(Path(__file__).resolve().parent)) from exc
    return _native


def missing_native_message(package_dir: Path) -> str:
    """Why ``tfsql._native`` cannot be imported from ``package_dir``, and the command that
    fixes it.

    A checkout of the repository holds tfsql's sources without their compiled files
    until ``pip install -e .`` builds them in place. Python started in the checkout's
    root finds that ``tfsql/`` first (the current directory comes first on
    ``sys.path``), whatever ``pip install .`` put in site-packages.

    Examples
    --------
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> (root / "setup.py").write_text("")
    0
    >>> print(missing_native_message(root / "tfsql").replace(str(root), "ROOT"))  # doctest: +ELLIPSIS
    tfsql was imported from the source tree ROOT/tfsql, whose C extension tfsql._native is not built (Python searches the current directory first, so a checkout's root shadows an installed tfsql). Build it in place with: ... -m pip install -e ROOT
    """
    root = package_dir.parent
    if (root / "setup.py").is_file():
        return (
            f"tfsql was imported from the source tree {package_dir}, whose C extension "
            "tfsql._native is not built (Python searches the current directory first, so a checkout's "
            f"root shadows an installed tfsql). Build it in place with: {sys.executable} -m pip install -e {root}"
        )
    return (
        f"tfsql's C extension tfsql._native is missing from {package_dir}; reinstall tfsql "
        f"with: {sys.executable} -m pip install --force-reinstall tfsql (needs a C compiler), "
        "or set TFSQL_PURE_PYTHON=1 to use the slow pure-Python codec"
    )


codec = load_codec()
