#!/usr/bin/env bash
# Tests of `dpacct ledger` (the command-line front end of the privacy-budget
# ledger): the issue's session, exit statuses, JSON output, bad input leaving
# the ledger unchanged, concurrent CLI processes, and kill -9 of CLI writers.
# SPDX-License-Identifier: GPL-3.0-or-later
#
# usage: bash tests/ledger_test.sh PATH/TO/dpacct SOURCE_DIR
# Prints "ok - NAME" / "not ok - NAME" per check; exits 1 if any failed.
# Needs bash, coreutils, grep and python3.
set -u

. "$(dirname "$0")/test_lib.sh"
test_setup ledger_test "$@"
# json_is EXPR: python3 expression on the parsed stdout `j` is true
json_is() { python3 -c "import json,sys; j=json.load(open('$TMP/out')); sys.exit(0 if ($1) else 1)"; }
# history_count DB: number of recorded requests
history_count() { "$BIN" ledger history "$1" --json </dev/null | python3 -c "import json,sys; print(len(json.load(sys.stdin)))"; }

DB=$TMP/budgets.db

# ------------------------------------------------------ the issue's session --
run ledger init "$DB" --filter gdp-residue --mu 1 --unit alice
check "init: exit 0" rc_is 0
check "init: says created" out_has "created ledger"
run ledger init "$DB" --filter gdp-residue --mu 1
check "init over an existing ledger: exit 2" rc_is 2
check "init over an existing ledger: says why" err_has "already exists"

run ledger request "$DB" --unit alice --spec '{"pure": {"epsilon": 0.5}}'
check "request pure 0.5 vs mu 1: accepted, exit 0" rc_is 0
check "request: prints accepted" out_has "accepted"
run ledger request "$DB" --unit alice --spec '{"pure": {"epsilon": 0.5}}' --json
check "second request: accepted (the residue filter takes 3)" rc_is 0
check "request --json: accepted true and a remaining mu" json_is 'j["accepted"] is True and 0 < j["remaining"]["mu"] < 0.86'
run ledger request "$DB" --unit alice --spec '{"pure": {"epsilon": 0.5}}' --json
check "third request: accepted" rc_is 0
run ledger request "$DB" --unit alice --spec '{"pure": {"epsilon": 0.5}}' --json
check "fourth request: rejected, exit 3" rc_is 3
check "rejected --json: accepted false" json_is 'j["accepted"] is False'

# ------------------------------------------------------------- bad input --
n0=$(history_count "$DB")
run ledger request "$DB" --unit bob --spec '{"pure": {"epsilon": 0.1}}'
check "unknown unit: exit 2" rc_is 2
check "unknown unit: message" err_has 'unknown unit "bob"'
run ledger request "$DB" --unit alice --spec '{"pure": {"epsilon": "x"}}'
check "malformed spec: exit 2" rc_is 2
check "malformed spec: the JSON path" err_has "/pure/epsilon"
run ledger request "$DB" --unit alice
check "request without --spec: exit 2" rc_is 2
run ledger request "$TMP/none.db" --unit alice --spec '{"pure": {"epsilon": 0.1}}'
check "request on a missing ledger: exit 2" rc_is 2
check "request on a missing ledger: no file created" test ! -e "$TMP/none.db"
echo "not a database" >"$TMP/junk.db"
run ledger status "$TMP/junk.db"
check "status of a text file: exit 2" rc_is 2
run ledger frobnicate "$DB"
check "unknown subcommand: exit 2" rc_is 2
run ledger init "$TMP/x.db" --filter pure --epsilon -1
check "negative budget: exit 2" rc_is 2
check "negative budget: no file left" test ! -e "$TMP/x.db"
run ledger init "$TMP/x.db" --filter pure --epsilon abc
check "non-numeric budget: exit 2" rc_is 2
run ledger status "$DB" --spec '{}'
check "status takes no --spec: exit 2" rc_is 2
check "bad input left the history unchanged" [ "$(history_count "$DB")" = "$n0" ]

# -------------------------------------------------- status, history, verify --
run ledger status "$DB" --json
check "status --json: one unit, 4 requests, 3 accepted" \
    json_is 'j["units"][0]["unit"] == "alice" and j["units"][0]["requests"] == 4 and j["units"][0]["accepted"] == 3'
run ledger status "$DB" --unit alice
check "status: human text" out_has "requests: 4 (accepted 3, rejected 1)"
run ledger history "$DB" --unit alice --json
check "history --json: 4 requests with states before and after" \
    json_is 'len(j) == 4 and all("state_before" in r and "state_after" in r for r in j) and j[3]["decision"] == "rejected" and j[3]["state_before"] == j[3]["state_after"]'
run ledger verify "$DB"
check "verify: exit 0" rc_is 0
check "verify: ok" out_has "ok: 1 units, 4 requests replayed"

# a pure-DP ledger with its own unit added later
P=$TMP/pure.db
run ledger init "$P" --filter pure --epsilon 1
check "init pure: exit 0" rc_is 0
run ledger add-unit "$P" --unit carol
check "add-unit: exit 0" rc_is 0
run ledger add-unit "$P" --unit carol
check "add-unit twice: exit 2" rc_is 2
run ledger add-unit "$P" --unit dave --filter pure --epsilon 3
check "add-unit with its own budget: exit 0" rc_is 0
for i in 1 2 3; do run ledger request "$P" --unit dave --spec '{"pure": {"epsilon": 0.9}}'; done
check "dave's own budget of 3 takes three 0.9 requests" rc_is 0
run ledger request "$P" --unit carol --spec '{"pure": {"epsilon": 0.9}}'
run ledger request "$P" --unit carol --spec '{"pure": {"epsilon": 0.9}}'
check "carol's default budget of 1 takes one" rc_is 3
n1=$(history_count "$P")
run ledger request "$P" --unit carol --spec '{"gaussian": {"sigma": 1}}'
check "a spec the pure filter cannot account (Gaussian): exit 2" rc_is 2
check "the unaccountable spec: nothing recorded" [ "$(history_count "$P")" = "$n1" ]

# ---------------------------------------- concurrent CLI processes, one unit --
C=$TMP/conc.db
S=$TMP/serial.db
"$BIN" ledger init "$C" --filter pure --epsilon 0.5 --unit u >/dev/null
"$BIN" ledger init "$S" --filter pure --epsilon 0.5 --unit u >/dev/null
serial=0
for i in $(seq 1 80); do
    "$BIN" ledger request "$S" --unit u --spec '{"pure": {"epsilon": 0.01}}' >/dev/null 2>&1 && serial=$((serial + 1))
done
for p in $(seq 1 8); do
    (for i in $(seq 1 10); do
        "$BIN" ledger request "$C" --unit u --spec '{"pure": {"epsilon": 0.01}}' >/dev/null 2>>"$TMP/conc_err"
        echo $? >>"$TMP/conc_rc.$p"
    done) &
done
wait
acc=$(cat "$TMP"/conc_rc.* | grep -c '^0$')
bad=$(cat "$TMP"/conc_rc.* | grep -vc '^[03]$')
check "8 CLI processes x 10 requests: no failures" [ "$bad" -eq 0 ]
check "8 CLI processes: accepted $acc = serial $serial" [ "$acc" -eq "$serial" ]
run ledger verify "$C"
check "verify after concurrent CLI requests" rc_is 0

# ----------------------------------------------------- kill -9 of CLI writers --
K=$TMP/kill.db
"$BIN" ledger init "$K" --filter pure --epsilon 1000 --unit u >/dev/null
for round in 1 2 3 4 5 6; do
    (while :; do
        # builtins only after the request: nothing else to kill mid-way
        out=$("$BIN" ledger request "$K" --unit u --spec '{"pure": {"epsilon": 0.001}}' 2>/dev/null) &&
            [[ $out =~ request\ ([0-9]+) ]] && echo "${BASH_REMATCH[1]}" >>"$TMP/acked"
    done) &
    writer=$!
    sleep 0.$((RANDOM % 5 + 1))
    pkill -KILL -P "$writer" 2>/dev/null
    kill -KILL "$writer" 2>/dev/null
    wait "$writer" 2>/dev/null
done
run ledger verify "$K"
check "verify after kill -9 of writers" rc_is 0
run ledger history "$K" --json
missing=$(python3 -c "
import json
h = {r['id'] for r in json.load(open('$TMP/out')) if r['decision'] == 'accepted'}
acked = [int(x) for x in open('$TMP/acked').read().split()] if __import__('os').path.exists('$TMP/acked') else []
print(sum(1 for a in acked if a not in h))")
check "every acknowledged acceptance is in the history" [ "$missing" = 0 ]

# ----------------------------------------------- export, import, PostgreSQL --
run ledger export "$P"
check "export: exit 0" rc_is 0
check "export: the format and every request" json_is 'j["format"] == "dpacct-ledger-export 1" and len(j["requests"]) == 5'
cp "$TMP/out" "$TMP/export.json"
run ledger import "$TMP/copy.db" --from "$TMP/export.json"
check "import into a new SQLite ledger: exit 0, verified" rc_is 0
check "import: says verify ok" out_has "verify: ok"
run ledger import "$TMP/copy.db" --from "$TMP/export.json"
check "import over an existing ledger: exit 2" rc_is 2
run ledger import "$TMP/bad.db" --from '{"format": "nope"}'
check "import of a non-export: exit 2" rc_is 2
check "import of a non-export: no file left" test ! -e "$TMP/bad.db"
run ledger request "$TMP/copy.db" --unit dave --spec '{"pure": {"epsilon": 0.9}}'
check "the imported ledger keeps dave's spend (3 x 0.9 of 3)" rc_is 3

# an edited export (alice's spend erased) must not import: it does not replay
python3 - "$TMP/export.json" "$TMP/reset.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for u in d["units"]:
    u["state"] = u["initial_state"]
json.dump(d, open(sys.argv[2], "w"))
PY
run ledger import "$TMP/reset.db" --from "$TMP/reset.json"
check "import of an export whose states do not replay: exit 2" rc_is 2
check "import of an export whose states do not replay: says so" err_has "does not replay"
check "import of an export whose states do not replay: nothing left" test ! -e "$TMP/reset.db"
python3 - "$TMP/export.json" "$TMP/dup.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["requests"][1]["id"] = d["requests"][0]["id"]
json.dump(d, open(sys.argv[2], "w"))
PY
run ledger import "$TMP/dup.db" --from "$TMP/dup.json"
check "import with a duplicated request id: exit 2, nothing left" eval 'rc_is 2 && test ! -e "$TMP/dup.db"'
run ledger request "$P" --unit $'x\xffy' --spec '{"pure": {"epsilon": 0.1}}'
check "a unit name that is not UTF-8: exit 2" rc_is 2
run ledger init "$TMP/u.db" --filter pure --epsilon 1 --unit alice --unit ''
check "init with a bad unit: exit 2 and no ledger left" eval 'rc_is 2 && test ! -e "$TMP/u.db"'
run ledger init "$TMP/u.db" --filter pure --epsilon 1 --unit alice --unit alice
check "init with a unit twice: exit 2 and no ledger left" eval 'rc_is 2 && test ! -e "$TMP/u.db"'
run ledger init "$TMP/na.db" --filter natural-approx --epsilon 1 --delta 1e-3 --allow-degraded --max-queries 10 --unit a
check "natural-approx from the command line (--max-queries)" rc_is 0

# ------------------------------------ files, messages, keys (issue 21) --
run ledger import "$TMP/z.db" --from /dev/zero
check "import --from /dev/zero: refused at once, exit 2, nothing left" eval 'rc_is 2 && test ! -e "$TMP/z.db"'
run ledger init :memory: --filter pure --epsilon 1
check "init :memory:: exit 2, says in-memory, no file" eval 'rc_is 2 && err_has "in-memory" && test ! -e ":memory:"'
for uri in 'postgresql://u:S3cretPW@[::1/db' 'postgresql://u:S3c%ZZretPW@localhost/db' \
    'postgresql://u@localhost/db?PASSWORD=S3cretPW'; do
    run ledger status "$uri"
    check "a malformed URI: the password is in no message ($uri)" eval '! grep -q S3c "$TMP/out" "$TMP/err"'
done
# a killed init leaves nothing that blocks the retry
for round in 1 2 3 4 5; do
    units=(); for i in $(seq 1 200); do units+=(--unit "u$i"); done
    "$BIN" ledger init "$TMP/ki.db" --filter pure --epsilon 1 "${units[@]}" >/dev/null 2>&1 &
    sleep 0.0$((RANDOM % 9))
    kill -KILL $! 2>/dev/null; wait $! 2>/dev/null
    if [ -e "$TMP/ki.db" ]; then
        run ledger verify "$TMP/ki.db"
        check "killed init $round: a whole ledger" rc_is 0
    else
        run ledger init "$TMP/ki.db" --filter pure --epsilon 1
        check "killed init $round: the retry works" rc_is 0
    fi
    rm -f "$TMP/ki.db"
done
# a corrupted file: a storage failure (exit 1) with SQLite's message
cp "$K" "$TMP/corrupt.db"
python3 -c "
import os; p='$TMP/corrupt.db'; n=os.path.getsize(p)
f=open(p,'r+b'); f.seek(n-4096+8); f.write(b'\xff'*3000); f.close()"
run ledger verify "$TMP/corrupt.db"
check "verify of a corrupted file: exit 1 with SQLite's message" eval 'rc_is 1 && err_has "malformed"'
# read-only: mode 0444 for a non-root user, and a read-only mount
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 && runuser -u nobody -- true 2>/dev/null; then
    RO=$(mktemp -d) && cp "$P" "$RO/ro.db" && chmod 444 "$RO/ro.db" && chmod 755 "$RO"
    for sub in status history verify export; do
        runuser -u nobody -- "$BIN" ledger $sub "$RO/ro.db" >"$TMP/out" 2>"$TMP/err"; rc=$?
        check "$sub of a mode 0444 ledger as a non-root user" rc_is 0
    done
    rm -rf "$RO"
fi
if unshare -m true 2>/dev/null; then
    RO=$(mktemp -d) && cp "$P" "$RO/ro.db"
    for sub in status history verify export; do
        unshare -m sh -c 'mount --bind -o ro "$1" "$1" && exec "$2" ledger "$3" "$1/ro.db"' sh "$RO" "$BIN" $sub \
            >"$TMP/out" 2>"$TMP/err"; rc=$?
        check "$sub of a ledger on a read-only mount" rc_is 0
    done
    rm -rf "$RO"
fi
# the hash chain's key, the anchor, the time limit
printf 'a secret\n' >"$TMP/key"
run ledger init "$TMP/keyed.db" --filter pure --epsilon 1 --unit a --key-file "$TMP/key"
check "init with a key" rc_is 0
run ledger request "$TMP/keyed.db" --unit a --spec '{"pure": {"epsilon": 0.25}}'
check "a keyed ledger refuses a writer without the key (exit 2)" eval 'rc_is 2 && err_has "keyed"'
run ledger request "$TMP/keyed.db" --unit a --spec '{"pure": {"epsilon": 0.25}}' --key-file "$TMP/key"
check "a request with the key" rc_is 0
DPACCT_LEDGER_KEY='a secret' "$BIN" ledger verify "$TMP/keyed.db" --json >"$TMP/out" 2>"$TMP/err"; rc=$?
check "verify with the key from the environment" eval 'rc_is 0 && json_is "j[\"ok\"] and j[\"keyed\"]"'
head=$(python3 -c "import json; print(json.load(open('$TMP/out'))['head'])")
run ledger verify "$TMP/keyed.db" --key-file "$TMP/key" --anchor "$head"
check "verify against an anchor" rc_is 0
python3 -c "
import sqlite3; c=sqlite3.connect('$TMP/keyed.db')
c.execute(\"UPDATE dpacct_units SET filter=replace(filter, ':1}', ':100}')\"); c.commit()"
run ledger verify "$TMP/keyed.db" --key-file "$TMP/key" --anchor "$head"
check "verify detects a budget edited in the database" eval 'rc_is 1 && out_has "INCONSISTENT"'
# an exponential-mechanism query under gdp-residue takes about a second to
# decide (its bounded-range pair against G_mu), far past a 1 ms limit
run ledger init "$TMP/slow.db" --filter gdp-residue --mu 1 --unit u
run ledger request "$TMP/slow.db" --unit u --spec '{"exponential_mechanism": {"epsilon": 0.5}}' --time-limit 0.001
check "a decision past --time-limit: exit 2, too costly" eval 'rc_is 2 && err_has "too costly to decide"'
run ledger history "$TMP/slow.db" --unit u
check "a decision past --time-limit: nothing recorded" eval 'rc_is 0 && out_has "no requests"'

# libpq is loaded when a PostgreSQL ledger is opened: without it (hidden in a
# private mount namespace, where that is allowed: root, as in CI) such a
# location is refused with the library's name, and SQLite ledgers still work
PQ_LIB=$(ldconfig -p 2>/dev/null | awk '/libpq\.so\.5 /{print $NF; exit}')
if [ -n "$PQ_LIB" ] && unshare -m true 2>/dev/null; then
    unshare -m sh -c 'mount --bind /dev/null "$1" && exec "$2" ledger status postgresql://nobody@localhost/none' sh \
        "$PQ_LIB" "$BIN" >"$TMP/out" 2>"$TMP/err"; rc=$?
    check "without libpq a PostgreSQL location is refused, naming the library" \
        eval '[ $rc -ne 0 ] && [ $rc -ne 3 ] && err_has "PostgreSQL ledgers need libpq at run time" && err_has "libpq5"'
    unshare -m sh -c 'mount --bind /dev/null "$1" && exec "$2" ledger status "$3"' sh "$PQ_LIB" "$BIN" "$DB" \
        >"$TMP/out" 2>"$TMP/err"; rc=$?
    check "without libpq SQLite ledgers work" rc_is 0
fi

if [ -n "${DPA_TEST_PG_DIR:-}" ] && [ -n "${DPA_TEST_PG_SCRIPT:-}" ]; then
    PGP=$(bash "$DPA_TEST_PG_SCRIPT" uri "$DPA_TEST_PG_DIR" "cli_$$_3")
    run ledger init "$PGP&password=s3cr3t" --filter pure --epsilon 1
    check "PostgreSQL: a password in the URI is never printed" eval 'rc_is 0 && ! grep -q s3cr3t "$TMP/out" "$TMP/err" && out_has "password=***"'
    run ledger import "$PGP" --from "$TMP/export.json"
    check "PostgreSQL: import into a database that holds a ledger: exit 2" rc_is 2
    PGR=$(bash "$DPA_TEST_PG_SCRIPT" uri "$DPA_TEST_PG_DIR" "cli_$$_4")
    run ledger import "$PGR" --from "$TMP/reset.json"
    check "PostgreSQL: a non-replaying import leaves no tables (a valid import then works)" \
        eval 'rc_is 2 && "$BIN" ledger import "$PGR" --from "$TMP/export.json" >/dev/null 2>&1'
    PGU=$(bash "$DPA_TEST_PG_SCRIPT" uri "$DPA_TEST_PG_DIR" "cli_$$_1")
    run ledger init "$PGU" --filter gdp-residue --mu 1 --unit alice
    check "PostgreSQL: init" rc_is 0
    for i in 1 2 3; do run ledger request "$PGU" --unit alice --spec '{"pure": {"epsilon": 0.5}}'; done
    check "PostgreSQL: three pure 0.5 accepted under mu 1 (residue filter)" rc_is 0
    run ledger request "$PGU" --unit alice --spec '{"pure": {"epsilon": 0.5}}'
    check "PostgreSQL: the fourth rejected, exit 3" rc_is 3
    run ledger request "$PGU" --unit nobody --spec '{"pure": {"epsilon": 0.5}}'
    check "PostgreSQL: unknown unit, exit 2" rc_is 2
    run ledger verify "$PGU"
    check "PostgreSQL: verify" rc_is 0
    PGM=$(bash "$DPA_TEST_PG_SCRIPT" uri "$DPA_TEST_PG_DIR" "cli_$$_2")
    run ledger import "$PGM" --from "$TMP/export.json"
    check "migration SQLite -> PostgreSQL: import verified" rc_is 0
    run ledger export "$PGM"
    check "migration: the PostgreSQL export equals the SQLite one" \
        python3 -c "import json; a=json.load(open('$TMP/export.json')); b=json.load(open('$TMP/out')); exit(0 if a==b else 1)"
    run ledger request "$PGM" --unit carol --spec '{"pure": {"epsilon": 0.05}}' --json
    check "migration: the next request id follows the imported ones" json_is 'j["request"] == 6'
    run ledger init "postgresql:///nodb?host=$TMP/nosuchdir&port=1&user=x" --filter pure --epsilon 1
    check "PostgreSQL: no server, exit 1" rc_is 1
    check "PostgreSQL: no server, says cannot connect" err_has "cannot connect"
fi

# ------------------------------------------- the budget service's commands --
SV=$TMP/service.db
run ledger init "$SV" --filter pure --epsilon 1 --unit alice
run ledger tenant add "$SV" --tenant acme
check "tenant add: exit 0" rc_is 0
run ledger tenant add "$SV" --tenant acme
check "tenant add twice: exit 2, says so" eval 'rc_is 2 && err_has "already exists"'
run ledger token create "$SV" --tenant acme --role request --label ci
check "token create: the token alone on stdout, the id on stderr" \
    eval 'rc_is 0 && grep -Eqx "dpa_[0-9a-f]{64}" "$TMP/out" && [ "$(wc -l <"$TMP/out")" -eq 1 ] && err_has "token id: tok_"'
TOKEN=$(cat "$TMP/out")
TOKID=$(grep -o "tok_[0-9a-f]*" "$TMP/err")
check "the database holds no token" eval '! grep -qaF "${TOKEN#dpa_}" "$SV"'
run ledger token list "$SV" --json
check "token list: the id, never the secret or its hash" \
    eval 'json_is "j[0][\"id\"] == \"$TOKID\" and j[0][\"revoked\"] is False" && ! out_has "$TOKEN" && ! out_has "hash"'
run ledger token create "$SV" --tenant nobody --role read
check "token of an unknown tenant: exit 2" rc_is 2
run ledger token create "$SV" --tenant acme --role root
check "token with a bad role: exit 2" rc_is 2
run ledger token revoke "$SV" --id "$TOKID"
check "token revoke: exit 0" rc_is 0
run ledger token revoke "$SV" --id "$TOKID"
check "token revoke twice: exit 2" rc_is 2
run ledger add-unit "$SV" --unit daily --tenant acme --period 3600
check "add-unit --tenant --period: exit 0" rc_is 0
run ledger request "$SV" --unit alice --spec '{"pure": {"epsilon": 0.25}}' --idempotency-key k1 --json
check "keyed request: charged" json_is 'j["status"] == "charged" and j["replayed"] is False'
R1=$(python3 -c "import json; print(json.load(open('$TMP/out'))['request'])")
run ledger request "$SV" --unit alice --spec '{"pure": {"epsilon": 0.25}}' --idempotency-key k1 --json
check "keyed retry: replayed, same request" json_is "j['replayed'] is True and j['request'] == $R1 and j['remaining']['epsilon'] == 0.75"
run ledger request "$SV" --unit alice --spec '{"pure": {"epsilon": 0.5}}' --idempotency-key k1
check "key reused with another spec: exit 2" eval 'rc_is 2 && err_has "idempotency key reused"'
run ledger request "$SV" --unit alice --spec '{"pure": {"epsilon": 0.5}}' --reserve --json
check "reserve: status reserved" json_is 'j["status"] == "reserved"'
RES=$(python3 -c "import json; print(json.load(open('$TMP/out'))['request'])")
run ledger release "$SV" --unit alice --request "$RES"
check "release: exit 0" rc_is 0
run ledger release "$SV" --unit alice --request "$RES"
check "release twice: exit 2" rc_is 2
run ledger status "$SV" --unit alice --json
check "release restored the budget" json_is 'j["units"][0]["remaining"]["epsilon"] == 0.75'
run ledger freeze "$SV" --unit alice --reason audit
run ledger request "$SV" --unit alice --spec '{"pure": {"epsilon": 0.1}}'
check "a frozen unit refuses requests: exit 2" eval 'rc_is 2 && err_has "frozen"'
run ledger unfreeze "$SV" --unit alice
run ledger topup "$SV" --unit alice --filter pure --epsilon 0.5
check "topup to a lower budget: exit 2" eval 'rc_is 2 && err_has "cannot lower"'
run ledger topup "$SV" --unit alice --filter pure --epsilon 3 --reason more
check "topup: exit 0" rc_is 0
run ledger archive "$SV" --unit alice
run ledger unfreeze "$SV" --unit alice
check "archive is final: exit 2" rc_is 2
run ledger history "$SV" --unit alice --limit 2 --after "$R1"
check "history page: two entries after the first request and a next cursor" \
    json_is "[e['id'] for e in j['entries']] == [$RES, $RES + 1] and j['next'] == $RES + 1 and j['entries'][0]['kind'] == 'reserve' and j['entries'][1]['kind'] == 'release'"
run ledger freeze "$SV" --unit alice --period 3
check "an option of another subcommand: exit 2" eval 'rc_is 2 && err_has "takes no --period"'
run ledger verify "$SV"
check "verify after the service's commands" rc_is 0

# libcrypto is loaded when a link of the hash chain is computed: without it
# (hidden in a private mount namespace, where that is allowed: root, as in CI)
# a ledger cannot be created, the message names the library, nothing is left
# behind, and everything but ledgers works
CRYPTO_LIB=$(ldconfig -p 2>/dev/null | awk '/libcrypto\.so\.3 /{print $NF; exit}')
if [ -n "$CRYPTO_LIB" ] && unshare -m true 2>/dev/null; then
    unshare -m sh -c 'mount --bind /dev/null "$1" && exec "$2" ledger init "$3" --filter pure --epsilon 1 --unit a' \
        sh "$CRYPTO_LIB" "$BIN" "$TMP/nocrypto.db" </dev/null >"$TMP/out" 2>"$TMP/err"; rc=$?
    check "without libcrypto init fails, names the library, leaves no file" \
        eval 'rc_is 1 && err_has "needs libcrypto at run time" && err_has "libssl3" && [ ! -e "$TMP/nocrypto.db" ]'
    unshare -m sh -c 'mount --bind /dev/null "$1" && exec "$2" epsilon --delta 1e-5 "$3"' \
        sh "$CRYPTO_LIB" "$BIN" '{"gaussian": {"sigma": 1}}' </dev/null >"$TMP/out" 2>"$TMP/err"; rc=$?
    check "without libcrypto everything but ledgers works" eval 'rc_is 0 && out_has "epsilon <="'
fi

finish
