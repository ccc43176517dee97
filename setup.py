"""Build the C core, ``tfsql._native``. Everything else is declared in pyproject.toml."""

import sys

from setuptools import Extension, setup

if sys.platform == "win32":
    extra_compile_args = ["/O2"]
else:
    extra_compile_args = ["-O3", "-std=c99", "-fno-strict-aliasing", "-Wall"]

setup(
    ext_modules=[
        Extension(
            "tfsql._native",
            sources=["tfsql/_native.c"],
            extra_compile_args=extra_compile_args,
        )
    ]
)
