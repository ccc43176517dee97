"""Test collection rules shared by every test directory.

``tfsql/spark/`` imports pyspark by design (it is the optional Spark extra), so its
doctests are collected only when pyspark is installed; likewise the PyTorch and Grain
adapters of ``tfsql/loader/`` (the ``torch`` and ``grain`` extras).
"""

import importlib.util

collect_ignore = []
if importlib.util.find_spec("pyspark") is None:
    collect_ignore.append("tfsql/spark")
if importlib.util.find_spec("torch") is None:
    collect_ignore.append("tfsql/loader/torch.py")
if importlib.util.find_spec("grain") is None:
    collect_ignore.append("tfsql/loader/grain.py")
