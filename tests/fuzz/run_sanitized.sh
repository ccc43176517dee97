#!/bin/sh
# Run the differential fuzzer against a copy of the C core built with AddressSanitizer
# and UndefinedBehaviorSanitizer (see README.md). Arguments go to fuzz_decoder.py.
#
#   sh tests/fuzz/run_sanitized.sh --seed 1 --count 100000
#
# Needs gcc (or clang: CC=clang) and the Python that has tfsql's dependencies
# (PYTHON, default: python3). The sanitized build lives in a scratch directory
# (TFSQL_ASAN_DIR, default: a new temporary directory), never in the source tree.
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
python=${PYTHON:-python3}
case $python in */*) python=$(cd "$(dirname "$python")" && pwd)/$(basename "$python") ;; esac # the run cds away
cc=${CC:-gcc}
scratch=${TFSQL_ASAN_DIR:-$(mktemp -d)}
if [ ! -f "$scratch/tfsql/_native_module.c" ]; then
    mkdir -p "$scratch"
    (cd "$here" && git ls-files -z tfsql tests/fuzz tests/wire.py tests/data/tensorflow | xargs -0 -I{} cp -P --parents {} "$scratch")
fi
sanitize="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -g -O1"
(cd "$scratch" && CC=$cc CFLAGS="$sanitize" LDFLAGS="-fsanitize=address,undefined" \
    "$python" -c "
import glob
from setuptools import Extension, setup
sources = sorted(glob.glob('tfsql/core/*.c')) + sorted(glob.glob('tfsql/_native_*.c'))
setup(script_args=['build_ext', '--inplace', '-q'],
      ext_modules=[Extension('tfsql._native', sources, include_dirs=['tfsql/core'],
                             extra_compile_args=['-std=c99', '-fno-strict-aliasing'])])" >/dev/null)
asan=$($cc -print-file-name=libasan.so)
cd "$scratch"
ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:halt_on_error=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
LD_PRELOAD="$asan" PYTHONPATH="$scratch" exec "$python" tests/fuzz/fuzz_decoder.py "$@"
