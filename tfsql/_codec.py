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
import types


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
        raise ImportError(
            "tfsql's C extension tfsql._native is not built; reinstall with "
            "`pip install .` (needs a C compiler), or set TFSQL_PURE_PYTHON=1 to use "
            "the slow pure-Python codec"
        ) from exc
    return _native


codec = load_codec()
