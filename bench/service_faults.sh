#!/usr/bin/env bash
# The budget service's fault run (issue 25, item 7): the load of bench/service_load.py (16
# clients, one unit each, budgets that run out) with `dpacct serve` SIGKILLed mid-run and
# restarted on the same ledger, on SQLite and on PostgreSQL.  Checks (service_load.py's
# docstring): every decision acknowledged to a client is in the history with the same id,
# key and outcome; every charged request was acknowledged; no unit accepted more than its
# budget allows; `dpacct ledger verify` passes.  Exit 0 when all hold.
# SPDX-License-Identifier: GPL-3.0-or-later
#
# usage: bash bench/service_faults.sh [PATH/TO/dpacct] [SECONDS] [KILL_AFTER]
#        (defaults: build/dpacct, 20 s, killed at 8 s; extra service_load.py options in
#        $SERVICE_LOAD_ARGS, e.g. "--threads 4 --serve-arg=--batch --serve-arg=64")
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bin=${1:-$here/../build/dpacct}
seconds=${2:-20}
kill_after=${3:-8}
# shellcheck disable=SC2086
exec python3 "$here/service_load.py" --dpacct "$bin" --backend both --seconds "$seconds" \
    --kill-after "$kill_after" --strict-acks ${SERVICE_LOAD_ARGS:-}
