"""No tfsql module reads another object's private attributes: front ends and helpers go
through public seams (`Dataset.discovered`, `Scanner.file_indices`,
`tfsql.discovery.resolve_path`...), so a reader can follow every use by name.

The check walks every module's syntax tree for ``<expr>._name`` where ``<expr>`` is not
``self`` / ``cls``. The exceptions below are listed with their reason."""

from __future__ import annotations

import ast
from pathlib import Path

import tfsql

PACKAGE = Path(tfsql.__file__).resolve().parent

ALLOWED = {
    # third-party objects whose private methods have no public equivalent
    ("discovery.py", "_strip_protocol"): "fsspec: a file system's own path of a URL",
    ("polars/sink.py", "_from_pyexpr"): "Polars: an expression from the plan's sink key",
    ("cli/interrupt.py", "_exit"): "os._exit, the process exit after Ctrl-C",
    ("decoding.py", "_import_from_c"): "pyarrow: a batch from the core's struct ArrowArray with a pa.Schema "
    "(the capsule form would export and import every field of a wide schema again)",
    # a named tuple's own API (its underscore keeps it apart from the field names)
    ("casting.py", "_replace"): "ColumnSpec._replace, the NamedTuple method",
    # two classes of one module that work as one
    ("compressing.py", "_executor"): "CompressedStream uses its CompressionPool",
    ("compressing.py", "_reserve"): "CompressedStream uses its CompressionPool",
    ("compressing.py", "_release"): "CompressedStream uses its CompressionPool",
    # an object's own class
    ("scanning.py", "_limit"): "Scanner.head limits its own copy",
    # the pure-Python reference codec, kept apart from the package on purpose
    ("_reference/encoding.py", "_items"): "the reference's own column class",
}


def _private_reads(path: Path) -> list[tuple[str, int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        name = node.attr
        if not name.startswith("_") or name.startswith("__"):
            continue
        if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            continue
        found.append((path.relative_to(PACKAGE).as_posix(), node.lineno, name))
    return found


def test_no_module_reads_another_objects_private_attributes():
    reads = [read for path in sorted(PACKAGE.rglob("*.py")) for read in _private_reads(path)]
    unexpected = [f"tfsql/{file}:{line}: ._{name[1:]}" for file, line, name in reads if (file, name) not in ALLOWED]
    assert unexpected == []


def test_the_exceptions_are_still_needed():
    reads = {(file, name) for path in sorted(PACKAGE.rglob("*.py")) for file, _, name in _private_reads(path)}
    assert set(ALLOWED) - reads == set()


def test_scanner_file_indices_are_the_pruned_files(tmp_path):
    import pyarrow as pa
    import pyarrow.compute as pc

    tfsql.write_tfrecord(pa.table({"p": [1, 2, 3], "x": [4, 5, 6]}), str(tmp_path / "d"), partition_by="p")
    data = tfsql.dataset(str(tmp_path / "d"))
    scanner = data.scanner(filter=pc.field("p") >= 2)
    assert [data.discovered.files[i].display() for i in scanner.file_indices] == scanner.files
    assert [f.rsplit("/", 2)[1] for f in scanner.files] == ["p=2", "p=3"]
