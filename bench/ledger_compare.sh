#!/usr/bin/env bash
# Durable decisions per second of one bench_ledger case, for several builds
# of bench_ledger run in turn (round-robin, so that a change in the machine's
# load or the disk's fsync latency hits every build alike), and the median of
# each over the rounds (bench/README.md, "Ledger: the hash chain's cost").
#
# Usage: bash bench/ledger_compare.sh ROUNDS CASE N DEST BENCH_LEDGER...
#   ROUNDS  rounds (each runs every build once)
#   CASE    a case id of bench_ledger (e.g. pure)
#   N       decisions per run (bench_ledger -n)
#   DEST    a directory for SQLite databases, or pg:DIR for a throwaway
#           PostgreSQL server of tests/pg_server.sh started in DIR
# Prints one line per build: the median and every round's rate (one process).
# SPDX-License-Identifier: GPL-3.0-or-later
set -eu
rounds=${1:?ROUNDS} case=${2:?CASE} n=${3:?N} dest=${4:?DEST}
shift 4
pg_script=$(cd "$(dirname "$0")/.." && pwd)/tests/pg_server.sh
declare -A rates
for _ in $(seq "$rounds"); do
    for b in "$@"; do
        if [ "${dest#pg:}" != "$dest" ]; then
            out=$("$b" -c "$case" -n "$n" -p 1 -g "bash $pg_script uri ${dest#pg:}" 2>&1 || true)
        else
            out=$("$b" -c "$case" -n "$n" -p 1 "$dest" 2>&1 || true)
        fi
        rates[$b]="${rates[$b]:-} $(echo "$out" | awk -v c="$case" '$1 == c { print $4 }')"
    done
done
for b in "$@"; do
    # shellcheck disable=SC2086
    med=$(printf '%s\n' ${rates[$b]} | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    echo "$b: median $med /s, rounds:${rates[$b]}"
done
