#!/usr/bin/env bash
# Install what is missing, build and run every test: once in Release and once
# under AddressSanitizer + UndefinedBehaviorSanitizer.
# SPDX-License-Identifier: GPL-3.0-or-later
set -eu
cd "$(dirname "$0")/.."
bash scripts/deps.sh
jobs="$(nproc)"
echo "== Release build and tests"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$jobs" >/dev/null
(cd build && ctest --output-on-failure -j"$jobs")
echo "== Python package (python/, against the Release build)"
# Debian's interpreter (python3-pytest, python3-numpy); not under the
# sanitizers: ctypes cannot load an ASan-instrumented library
DPACCT_LIBRARY="$PWD/build/libdpacct.so" DPACCT_CLI="$PWD/build/dpacct" \
    /usr/bin/python3 -m pytest -q -p no:cacheprovider python/tests
echo "== AddressSanitizer + UndefinedBehaviorSanitizer build and tests"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DDPA_SANITIZE=ON -DDPA_BUILD_BENCH=OFF >/dev/null
cmake --build build-asan -j"$jobs" >/dev/null
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
# fontconfig's process-lifetime caches are not dpacct's leaks (tests/lsan.supp)
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp"
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
(cd build-asan && ctest --output-on-failure -j"$jobs")
