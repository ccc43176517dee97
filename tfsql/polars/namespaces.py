"""Attaching tfsql to Polars: ``pl.scan_tfrecord``, ``pl.read_tfrecord`` and the
``.tfrecord`` namespaces of DataFrame and LazyFrame.

:func:`attach` sets the two functions on the ``polars`` module and registers
``DataFrame.tfrecord`` (:class:`TFRecordFrameNamespace`, ``write``) and
``LazyFrame.tfrecord`` (:class:`TFRecordLazyFrameNamespace`, ``sink``). It runs when
``tfsql.polars`` is imported and, through :mod:`tfsql._polars_hook`, whenever both
tfsql and Polars are imported, in either order.

Examples
--------
>>> import polars as pl, tfsql
>>> attach()
>>> pl.read_tfrecord is tfsql.polars.read_tfrecord, pl.DataFrame.tfrecord is TFRecordFrameNamespace
(True, True)
"""

from __future__ import annotations

import warnings
from typing import Any, Literal, overload

import polars as pl

from tfsql.polars.scan import read_tfrecord, scan_tfrecord
from tfsql.polars.sink import WRITE_CHUNK_ROWS, deferred, partition_target, sink_frame, write_frame
from tfsql.writer import WriteResult

__all__ = ["attach", "TFRecordFrameNamespace", "TFRecordLazyFrameNamespace"]

_PACKAGE = "tfsql.polars"


class TFRecordFrameNamespace:
    """``df.tfrecord``: ``df.tfrecord.write(path, **options)`` (see :func:`write_frame`).

    Examples
    --------
    >>> import tempfile, polars as pl, tfsql
    >>> path = tempfile.mkdtemp() + "/out"
    >>> pl.DataFrame({"x": [1, 2]}).tfrecord.write(path, compression="gzip").rows
    2
    """

    def __init__(self, df: pl.DataFrame) -> None:
        self._df = df

    def write(self, path: Any, **options: Any) -> WriteResult:
        """Write the frame as TFRecord files; options as :func:`tfsql.write_tfrecord`."""
        return write_frame(self._df, path, **options)


class TFRecordLazyFrameNamespace:
    """``lf.tfrecord``: ``lf.tfrecord.sink(path, **options)`` (see :func:`sink_frame`).

    Examples
    --------
    >>> import tempfile, polars as pl, tfsql
    >>> path = tempfile.mkdtemp() + "/out"
    >>> pl.LazyFrame({"x": [1, 2]}).tfrecord.sink(path, partition_by="x").rows
    2
    """

    def __init__(self, lf: pl.LazyFrame) -> None:
        self._lf = lf

    @overload
    def sink(self, path: Any, *, chunk_size: int = ..., lazy: Literal[False] = ..., **options: Any) -> WriteResult: ...

    @overload
    def sink(self, path: Any, *, chunk_size: int = ..., lazy: Literal[True], **options: Any) -> pl.LazyFrame: ...

    def sink(
        self, path: Any, *, chunk_size: int = WRITE_CHUNK_ROWS, lazy: bool = False, **options: Any
    ) -> WriteResult | pl.LazyFrame:
        """Stream the query's result into TFRecord files; options as :func:`tfsql.write_tfrecord`.

        ``path`` may be a ``pl.PartitionBy`` (see :mod:`tfsql.polars.sink`).
        ``lazy=True`` writes nothing now and returns a LazyFrame that writes when
        collected (alone or in ``pl.collect_all``) and lists the files written.
        """
        lf, target, options = partition_target(self._lf, path, options)
        if lazy:
            from tfsql.writer import check_write_options

            check_write_options(**options)
            return deferred(lambda: sink_frame(lf, target, chunk_size=chunk_size, **options))
        return sink_frame(lf, target, chunk_size=chunk_size, **options)


def attach() -> None:
    """Set ``polars.scan_tfrecord`` and ``polars.read_tfrecord`` and register the
    ``.tfrecord`` namespaces.

    Called when both tfsql and Polars are imported, in either order (see
    :mod:`tfsql._polars_hook`); calling it again does nothing.
    An attribute of the same name that another package put on Polars is left alone
    with a :class:`UserWarning` (use ``tfsql.scan_tfrecord`` / :func:`write_frame`
    then).

    Examples
    --------
    >>> import polars as pl, tfsql
    >>> attach()
    >>> pl.scan_tfrecord is tfsql.polars.scan_tfrecord
    True
    """
    for name, function in (("scan_tfrecord", scan_tfrecord), ("read_tfrecord", read_tfrecord)):
        existing = getattr(pl, name, None)
        if existing is None or _is_ours(existing):
            setattr(pl, name, function)
        else:
            warnings.warn(
                f"polars.{name} already exists (from {getattr(existing, '__module__', '?')}); "
                f"tfsql leaves it alone: use tfsql.polars.{name}",
                UserWarning,
                stacklevel=2,
            )
    _register(pl.DataFrame, "tfrecord", TFRecordFrameNamespace, pl.api.register_dataframe_namespace)
    _register(pl.LazyFrame, "tfrecord", TFRecordLazyFrameNamespace, pl.api.register_lazyframe_namespace)


def _is_ours(obj: Any) -> bool:
    # a reloaded tfsql.polars defines new objects with the same module and name
    module = getattr(obj, "__module__", None) or ""
    return module == _PACKAGE or module.startswith(_PACKAGE + ".")


def _register(cls: type, name: str, namespace: type, register: Any) -> None:
    existing = getattr(cls, name, None)
    if existing is None or _is_ours(existing):
        if existing is not namespace:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # "overriding existing custom namespace" (ours)
                register(name)(namespace)
        return
    warnings.warn(
        f"polars.{cls.__name__}.{name} already exists (from {getattr(existing, '__module__', '?')}); "
        f"tfsql leaves it alone: use tfsql.polars.{'write_frame' if cls is pl.DataFrame else 'sink_frame'}",
        UserWarning,
        stacklevel=3,
    )
