#!/usr/bin/env bash
# The short fault run of the budget service (bench/service_faults.sh in under a minute):
# 16 clients on their own units (epsilon budgets of 10, queries of 0.25: 40 accepted at
# most, so that units run out even on a slow machine) through a live `dpacct serve`, the
# server SIGKILLed and restarted mid-run; every acknowledged decision in the history with the same outcome,
# every charge acknowledged, no unit over its budget, `dpacct ledger verify` passing.
# SQLite, and PostgreSQL when its server binaries are installed (tests/pg_server.sh).
# SPDX-License-Identifier: GPL-3.0-or-later
#
# usage: bash tests/service_faults_test.sh PATH/TO/dpacct SOURCE_DIR
# Exit 77 (CTest: skipped) when `dpacct serve` is missing.
set -u

. "$(dirname "$0")/test_lib.sh"
test_setup service_faults_test "$@"

if ! "$BIN" serve --help >/dev/null 2>&1; then
    echo "ok - # SKIP $BIN has no serve command"
    exit 77
fi
backends=sqlite
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
    backends="sqlite postgresql"
fi
for b in $backends; do
    python3 "$SRC/bench/service_load.py" --dpacct "$BIN" --backend "$b" --clients 16 --seconds 8 \
        --kill-after 3 --budget 10 --strict-acks >"$TMP/out" 2>"$TMP/err"
    rc=$?
    sed 's/^/#   /' "$TMP/out"
    check "$b: SIGKILL and restart mid-load: no acknowledged decision lost or changed, no overspend, verify passes" rc_is 0
    check "$b: the server was killed and clients retried" out_has "server SIGKILLed"
    check "$b: units ran out of budget during the run (rejections happened)" \
        python3 -c "import sys; r=[l.split() for l in open('$TMP/out') if l.startswith('$b ')][0]; sys.exit(0 if int(r[8]) > 0 and int(r[7]) > 0 else 1)"
done
# the check can fail: one acknowledged outcome flipped in a client's log must be reported
python3 "$SRC/bench/service_load.py" --dpacct "$BIN" --backend sqlite --clients 4 --seconds 3 \
    --kill-after 1 --strict-acks --tamper-ack >"$TMP/out" 2>"$TMP/err"
rc=$?
check "a tampered acknowledgement is reported: exit 1, 'acknowledged ... history says'" \
    eval 'rc_is 1 && out_has "history says"'
finish
