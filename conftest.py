"""Test collection rules shared by every test directory.

``tfsql/spark/`` imports pyspark by design (it is the optional Spark extra), so its
doctests are collected only when pyspark is installed.
"""

import importlib.util

collect_ignore = []
if importlib.util.find_spec("pyspark") is None:
    collect_ignore.append("tfsql/spark")
