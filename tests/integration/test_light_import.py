"""``import tfsql`` is light, and Polars gets tfsql's API whichever is imported first.

Each case runs in a fresh interpreter: what is imported is a property of the process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

HEAVY = ("polars", "duckdb", "pyspark", "pyarrow.compute", "pyarrow.dataset", "numpy", "fsspec")


def _run(code: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_import_tfsql_imports_no_engine():
    out = _run(f"import sys, json, tfsql\nprint(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))")
    assert out == []


def test_lazy_attributes_resolve_to_the_submodules():
    out = _run(
        "import sys, json, tfsql\n"
        "import tfsql.arrow_dataset, tfsql.scanning\n"
        "from tfsql.opening import dataset\n"
        "from tfsql.reading import read_tfrecord\n"
        "from tfsql.writer import write_tfrecord\n"
        "ok = [tfsql.dataset is dataset, tfsql.read_tfrecord is read_tfrecord, tfsql.write_tfrecord is write_tfrecord]\n"
        "print(json.dumps(ok + ['duckdb' in sys.modules, callable(tfsql.connect), 'duckdb' in sys.modules]))"
    )
    assert out == [True, True, True, False, True, True]


def test_unknown_attribute_is_an_attribute_error():
    out = _run("import json, tfsql\ntry:\n    tfsql.nope\nexcept AttributeError as e:\n    print(json.dumps(str(e)))")
    assert out == "module 'tfsql' has no attribute 'nope'"


_CHECK_ATTACHED = (
    "print(json.dumps([pl.scan_tfrecord is tfsql.polars.scan_tfrecord,"
    " pl.read_tfrecord is tfsql.polars.read_tfrecord,"
    " pl.DataFrame.tfrecord is tfsql.polars.TFRecordFrameNamespace,"
    " pl.LazyFrame.tfrecord is tfsql.polars.TFRecordLazyFrameNamespace,"
    " pl.LazyFrame({'x': [1]}).tfrecord.__class__.__name__]))"
)


@pytest.mark.parametrize(
    "imports",
    [
        "import polars as pl\nimport tfsql",  # Polars first
        "import tfsql\nimport polars as pl",  # tfsql first: the import hook attaches
        "import tfsql\nfrom polars import DataFrame\nimport polars as pl",  # Polars imported by a from-import
        "import tfsql\nimport polars.io\nimport polars as pl",  # a submodule first
    ],
)
def test_polars_is_attached_in_either_import_order(imports):
    out = _run(f"import json\n{imports}\nimport tfsql.polars\n{_CHECK_ATTACHED}")
    assert out == [True, True, True, True, "TFRecordLazyFrameNamespace"]


def test_the_hook_leaves_polars_loader_and_meta_path_as_they_were():
    out = _run(
        "import sys, json, tfsql\n"
        "from tfsql._polars_hook import PolarsFinder\n"
        "before = any(isinstance(f, PolarsFinder) for f in sys.meta_path)\n"
        "import polars\n"
        "after = any(isinstance(f, PolarsFinder) for f in sys.meta_path)\n"
        "loader = polars.__spec__.loader\n"
        "print(json.dumps([before, after, 'exec_module' in vars(loader), type(loader).__name__]))"
    )
    assert out == [True, False, False, "SourceFileLoader"]


def test_a_failing_attach_warns_and_polars_still_imports():
    out = _run(
        "import sys, json, types, warnings, tfsql\n"
        "fake = types.ModuleType('tfsql.polars')\n"
        "def attach():\n    raise RuntimeError('unsupported polars')\n"
        "fake.attach = attach\n"
        "sys.modules['tfsql.polars'] = fake\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    import polars\n"
        "print(json.dumps([polars.DataFrame({'a': [1]}).height, hasattr(polars, 'scan_tfrecord'),"
        " [str(w.message) for w in caught if 'tfsql' in str(w.message)]]))"
    )
    assert out == [
        1,
        False,
        [
            "tfsql could not attach to Polars (RuntimeError: unsupported polars); "
            "pl.scan_tfrecord is unavailable, use tfsql.scan_tfrecord"
        ],
    ]
