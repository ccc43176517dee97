"""Attach tfsql to Polars whenever Polars is imported, before or after tfsql.

``import tfsql`` must not import Polars (it takes a quarter of a second), yet
``pl.scan_tfrecord``, ``pl.read_tfrecord`` and the ``.tfrecord`` namespaces must exist
in every process that imported both. :func:`install` therefore

- attaches at once when Polars is already imported;
- otherwise puts a finder at the front of ``sys.meta_path`` that answers nothing
  itself: when ``polars`` is about to be imported it asks the other finders for the
  module's spec and wraps that spec's loader's ``exec_module``, so that the moment
  Polars has finished executing, :func:`tfsql.polars.attach` runs. The finder removes
  itself then. The loader object stays the same (``importlib.resources`` and tools
  that look at ``module.__loader__`` see Polars' own loader).

A failure to attach (an unsupported Polars, say) never breaks ``import polars``: it
becomes a :class:`UserWarning`.

Examples
--------
>>> import subprocess, sys
>>> code = "import tfsql, sys; print('polars' in sys.modules); import polars as pl; print(callable(pl.scan_tfrecord))"
>>> subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.split()
['False', 'True']
"""

from __future__ import annotations

import sys
import threading
import warnings
from types import ModuleType
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec

__all__ = ["install", "PolarsFinder"]

_lock = threading.Lock()


def install() -> None:
    """Attach to Polars now if it is imported, else when it is (idempotent)."""
    polars = sys.modules.get("polars")
    if polars is not None and hasattr(polars, "LazyFrame"):
        _attach()
        return
    with _lock:
        if not any(isinstance(f, PolarsFinder) for f in sys.meta_path):
            sys.meta_path.insert(0, PolarsFinder())


def _attach() -> None:
    module = sys.modules.get("tfsql.polars")
    if module is not None and not hasattr(module, "attach"):
        return  # tfsql.polars is importing polars: it attaches when it has finished
    try:
        from tfsql.polars import attach

        attach()
    except Exception as exc:  # never break the user's import of polars
        warnings.warn(
            f"tfsql could not attach to Polars ({type(exc).__name__}: {exc}); "
            "pl.scan_tfrecord is unavailable, use tfsql.scan_tfrecord",
            UserWarning,
            stacklevel=3,
        )


class PolarsFinder:
    """A meta path finder (``importlib.abc.MetaPathFinder`` protocol, not subclassed to keep
    ``import tfsql`` light) that runs :func:`tfsql.polars.attach` right after Polars loads."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != "polars":
            return None
        spec = None
        for finder in sys.meta_path:
            if finder is self or isinstance(finder, PolarsFinder):
                continue
            find = getattr(finder, "find_spec", None)
            if find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        _wrap_exec_module(spec.loader, self)
        return spec


def _wrap_exec_module(loader: Any, finder: PolarsFinder) -> None:
    original = loader.exec_module

    def exec_module(module: ModuleType) -> None:
        original(module)
        try:
            del loader.exec_module  # back to the class's method
        except AttributeError:
            pass
        with _lock:
            if finder in sys.meta_path:
                sys.meta_path.remove(finder)
        _attach()

    loader.exec_module = exec_module
