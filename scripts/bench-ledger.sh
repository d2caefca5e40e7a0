#!/usr/bin/env bash
# The ledger benchmark (bench/bench_ledger.c) on both backends: SQLite in
# $TMPDIR (or /tmp), and PostgreSQL on a throwaway local server
# (tests/pg_server.sh) when its binaries are installed.  Builds build-bench/.
# Usage: bash scripts/bench-ledger.sh [bench_ledger options, e.g. -n 4000 -p 8]
# SPDX-License-Identifier: GPL-3.0-or-later
set -eu
cd "$(dirname "$0")/.."
cmake -S . -B build-bench -DCMAKE_BUILD_TYPE=Release -DDPA_BUILD_TESTS=OFF >/dev/null
cmake --build build-bench -j"$(nproc)" --target bench_ledger >/dev/null
build-bench/bench_ledger "$@" || true
echo
if ls -d /usr/lib/postgresql/*/bin >/dev/null 2>&1; then
    dir=/tmp/dpacct-pg-bench-$$
    trap 'bash tests/pg_server.sh stop "$dir"' EXIT
    bash tests/pg_server.sh start "$dir" >/dev/null
    build-bench/bench_ledger -g "bash $PWD/tests/pg_server.sh uri $dir" "$@" || true
else
    echo "PostgreSQL: not installed (apt-get install postgresql), skipped"
fi
