#!/usr/bin/env bash
# Tests of `dpacct serve` (the budget service, docs/service.md) with curl:
# every route and status code of the contract, idempotent retries,
# reservations, freeze, tenants, roles, the body limit, the idle timeout,
# CORS, TLS, tokens kept out of the log, the OpenAPI document, concurrent
# clients on one unit (exactly the budget's worth accepted), two servers on
# one PostgreSQL ledger, SIGTERM, and SIGKILL under load then restart (every
# accepted request id is in the history, verify passes).
# SPDX-License-Identifier: GPL-3.0-or-later
#
# usage: bash tests/service_test.sh PATH/TO/dpacct SOURCE_DIR
# The PostgreSQL part runs when DPA_TEST_PG_DIR / DPA_TEST_PG_SCRIPT name the
# throwaway server of tests/pg_server.sh (the CTest fixture "pg").
# Needs bash, coreutils, grep, curl, openssl and python3.
set -u

. "$(dirname "$0")/test_lib.sh"
test_setup service_test "$@"
SERVERS=()
cleanup() {
    local p
    for p in "${SERVERS[@]}"; do kill -9 "$p" 2>/dev/null; done
    rm -rf "$TMP"
}
trap cleanup EXIT

# start_server NAME ARGS...: `dpacct serve ARGS --listen 127.0.0.1:0` in the
# background; sets URL_<NAME>, PID_<NAME>; its stderr is $TMP/NAME.log.
start_server() {
    local name=$1 i url=""
    shift
    "$BIN" serve "$@" --listen 127.0.0.1:0 >"$TMP/$name.out" 2>"$TMP/$name.log" &
    local pid=$!
    SERVERS+=("$pid")
    for i in $(seq 100); do
        url=$(sed -n 's/^dpacct serve: listening on \([^ ]*\) .*/\1/p' "$TMP/$name.out")
        [ -n "$url" ] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    printf -v "URL_$name" '%s' "$url"
    printf -v "PID_$name" '%s' "$pid"
    [ -n "$url" ]
}

# http METHOD URL TOKEN [BODY] [CURL ARGS...]: sets code, $TMP/out (body) and
# $TMP/hdr (headers).  TOKEN "-": no Authorization header.
http() {
    local method=$1 url=$2 token=$3 body=${4:-}
    shift 3
    [ $# -gt 0 ] && shift
    local args=(-s -S -X "$method" -D "$TMP/hdr" -o "$TMP/out" -w '%{http_code}' --max-time 30)
    [ "$token" != - ] && args+=(-H "Authorization: Bearer $token")
    [ -n "$body" ] && args+=(-H 'Content-Type: application/json' --data-binary "$body")
    code=$(curl "${args[@]}" "$@" "$url" 2>"$TMP/err")
    rc=$?
}
code_is() { [ "$code" = "$1" ]; }
# js EXPR: the Python expression on the answer's JSON body `j` is true
js() { python3 -c "import json,sys; j=json.load(open('$TMP/out')); sys.exit(0 if ($1) else 1)" 2>/dev/null; }
hdr_has() { grep -qi -- "^$1" "$TMP/hdr"; }
err_code() { js "j['error']['code'] == '$1'"; }
# token DB TENANT ROLE: a new token (stdout of `ledger token create`)
token() { "$BIN" ledger token create "$1" --tenant "$2" --role "$3" 2>/dev/null </dev/null | tail -n 1; }

DB=$TMP/svc.db
"$BIN" ledger init "$DB" --filter pure --epsilon 1 --unit alice --unit conc >/dev/null </dev/null
"$BIN" ledger tenant add "$DB" --tenant acme >/dev/null 2>&1 </dev/null
"$BIN" ledger add-unit "$DB" --unit acme-u --tenant acme >/dev/null 2>&1 </dev/null
ADMIN=$(token "$DB" default admin)
REQ=$(token "$DB" default request)
READ=$(token "$DB" default read)
ACME=$(token "$DB" acme admin)
check "tokens made by dpacct ledger token create" [ ${#ADMIN} -ge 32 ] && [ ${#REQ} -ge 32 ] && [ ${#READ} -ge 32 ] && [ ${#ACME} -ge 32 ]

check "serve starts on SQLite (port 0: a free port)" start_server A --ledger "$DB" --max-body 4096 --threads 4
U=$URL_A

# ------------------------------------------------------------ public routes --
http GET "$U/healthz" -
check "healthz: 200 ok, database ok" eval 'code_is 200 && js "j == {\"status\": \"ok\", \"database\": \"ok\"}"'
check "healthz: Content-Type application/json" hdr_has "Content-Type: application/json"
http GET "$U/openapi.json" -
check "openapi.json: 200, identical to docs/openapi.json" eval 'code_is 200 && cmp -s "$TMP/out" "$SRC/docs/openapi.json"'
# every route of the server's table is a path of the document and back
python3 - "$SRC/src/service/route.c" "$SRC/docs/openapi.json" >"$TMP/routes" <<'PY'
import json, re, sys
table = set(re.findall(r'\{"(GET|POST)", "([^"]+)", R_', open(sys.argv[1]).read()))
doc = json.load(open(sys.argv[2]))
documented = {(m.upper(), re.sub(r"\{[^}]+\}", "*", p)) for p, ops in doc["paths"].items() for m in ops}
print("missing from the document:", sorted(table - documented))
print("documented, not served:", sorted(documented - table))
print("routes:", len(table))
sys.exit(0 if table == documented and len(table) >= 17 else 1)
PY
check "every route served is in docs/openapi.json and every documented one is served" [ $? -eq 0 ]
# and the live server answers every documented route: public ones 200, the
# others 401 without a token (never 404 or 405)
python3 - "$SRC/docs/openapi.json" "$U" <<'PY'
import json, re, sys, urllib.request, urllib.error
doc = json.load(open(sys.argv[1]))
bad = []
for path, ops in doc["paths"].items():
    for method, op in ops.items():
        url = sys.argv[2] + re.sub(r"\{unit\}", "alice", re.sub(r"\{id\}", "1", path))
        req = urllib.request.Request(url, method=method.upper(), data=b"{}" if method == "post" else None)
        try:
            code = urllib.request.urlopen(req, timeout=30).status
        except urllib.error.HTTPError as e:
            code = e.code
        want = 200 if op.get("security") == [] else 401
        if code != want:
            bad.append((method, path, code))
print("answered otherwise:", bad)
sys.exit(1 if bad else 0)
PY
check "the server answers every path of docs/openapi.json (200 public, 401 without a token)" [ $? -eq 0 ]
if python3 -c "import openapi_spec_validator" 2>/dev/null; then
    check "docs/openapi.json is a valid OpenAPI 3.0 document" python3 -c "
import json, openapi_spec_validator as v; v.validate(json.load(open('$SRC/docs/openapi.json')))"
fi
http GET "$U/nowhere" -
check "unknown path: 404 not_found" eval 'code_is 404 && err_code not_found'
http DELETE "$U/v1/units" "$ADMIN"
check "wrong method: 405 with Allow" eval 'code_is 405 && hdr_has "Allow: GET, POST"'

# -------------------------------------------------------------------- auth --
http GET "$U/v1/whoami" -
check "no token: 401 unauthorized with WWW-Authenticate: Bearer" eval 'code_is 401 && err_code unauthorized && hdr_has "WWW-Authenticate: Bearer"'
http GET "$U/v1/whoami" "not-a-token-$ADMIN"
check "unknown token: 401" eval 'code_is 401 && err_code unauthorized'
http GET "$U/v1/whoami" "$READ"
check "whoami: tenant default, role read, a tok_ id" eval 'code_is 200 && js "j[\"tenant\"] == \"default\" and j[\"role\"] == \"read\" and j[\"token_id\"].startswith(\"tok_\")"'
READ_ID=$(python3 -c "import json; print(json.load(open('$TMP/out'))['token_id'])" 2>/dev/null)
REV=$(token "$DB" default read)
http GET "$U/v1/whoami" "$REV"
REV_ID=$(python3 -c "import json; print(json.load(open('$TMP/out'))['token_id'])" 2>/dev/null)
"$BIN" ledger token revoke "$DB" --id "$REV_ID" >/dev/null 2>&1 </dev/null
sleep 1.2 # a server keeps a token that authenticated for at most 1 s (token_cache.c)
http GET "$U/v1/whoami" "$REV"
check "a revoked token: 401 within a second" eval 'code_is 401 && err_code unauthorized'
http POST "$U/v1/units/alice/requests" - '{"spec": {"pure": {"epsilon": 0.1}}}'
check "unauthenticated write: 401" code_is 401
http POST "$U/v1/units/alice/requests" "$READ" '{"spec": {"pure": {"epsilon": 0.1}}}'
check "read token POST: 403 forbidden" eval 'code_is 403 && err_code forbidden'
http POST "$U/v1/units" "$REQ" '{"unit": "x1"}'
check "request token creating a unit: 403" code_is 403

# ------------------------------------------------------------------- units --
http GET "$U/v1/units" "$READ"
check "units: the tenant's units only (alice, conc; not acme-u)" eval 'code_is 200 && js "sorted(u[\"unit\"] for u in j[\"units\"]) == [\"alice\", \"conc\"] and j[\"next\"] is None"'
http GET "$U/v1/units?limit=1" "$READ"
check "units?limit=1: one unit and next" eval 'code_is 200 && js "len(j[\"units\"]) == 1 and j[\"next\"] == \"alice\""'
http GET "$U/v1/units?limit=1&after=alice" "$READ"
check "units?after=alice: conc" eval 'code_is 200 && js "[u[\"unit\"] for u in j[\"units\"]] == [\"conc\"]"'
http GET "$U/v1/units?limit=0" "$READ"
check "units?limit=0: 400 bad_input naming limit" eval 'code_is 400 && err_code bad_input && grep -q limit "$TMP/out"'
http POST "$U/v1/units" "$ADMIN" '{"unit": "bob", "filter": {"filter": "pure", "epsilon": 2}}'
check "create unit: 201 with its status" eval 'code_is 201 && js "j[\"unit\"] == \"bob\" and j[\"remaining\"][\"epsilon\"] == 2"'
http POST "$U/v1/units" "$ADMIN" '{"unit": "bob"}'
check "create an existing unit: 409 conflict" eval 'code_is 409 && err_code conflict'
http POST "$U/v1/units" "$ADMIN" '{"unit": "carl", "budget": 1}'
check "create with an unknown member: 400 naming it" eval 'code_is 400 && grep -q /budget "$TMP/out"'
http POST "$U/v1/units" "$ADMIN" '{"unit": '
check "malformed JSON body: 400 bad_input" eval 'code_is 400 && err_code bad_input'
http POST "$U/v1/units" "$ADMIN" '{"unit": "a%2Fb/c"}'
http GET "$U/v1/units/a%252Fb%2Fc" "$READ"
check "a unit name with / and % in it: reachable percent-encoded" eval 'code_is 200 && js "j[\"unit\"] == \"a%2Fb/c\""'
http GET "$U/v1/units/alice" "$READ"
check "unit status: 200, remaining epsilon 1" eval 'code_is 200 && js "j[\"unit\"] == \"alice\" and j[\"remaining\"][\"epsilon\"] == 1"'
http GET "$U/v1/units/nobody" "$READ"
check "unknown unit: 404 not_found" eval 'code_is 404 && err_code not_found'
http GET "$U/v1/units/acme-u" "$READ"
check "other tenant's unit: 404 (not 403)" eval 'code_is 404 && err_code not_found'
http GET "$U/v1/units/alice" "$ACME"
check "other tenant's token on alice: 404" code_is 404
http GET "$U/v1/units/acme-u" "$ACME"
check "acme's token on its own unit: 200" code_is 200

# ---------------------------------------------------------------- requests --
http POST "$U/v1/units/alice/requests" "$REQ" '{"spec": {"pure": {"epsilon": 0.25}}}' -H "Idempotency-Key: k-1"
check "request: 200 accepted, charged" eval 'code_is 200 && js "j[\"decision\"] == \"accepted\" and j[\"status\"] == \"charged\" and j[\"replayed\"] is False and j[\"remaining\"][\"epsilon\"] == 0.75"'
RID1=$(python3 -c "import json; print(json.load(open('$TMP/out'))['request_id'])" 2>/dev/null)
http POST "$U/v1/units/alice/requests" "$REQ" '{"spec": {"pure": {"epsilon": 0.25}}}' -H "Idempotency-Key: k-1"
check "same Idempotency-Key again: the original decision, replayed" eval "code_is 200 && js 'j[\"request_id\"] == $RID1 and j[\"replayed\"] is True'"
http GET "$U/v1/units/alice" "$READ"
check "idempotent retry: one charge (remaining 0.75, 1 request)" eval 'js "j[\"remaining\"][\"epsilon\"] == 0.75 and j[\"requests\"] == 1"'
http POST "$U/v1/units/alice/requests" "$REQ" '{"spec": {"pure": {"epsilon": 0.5}}}' -H "Idempotency-Key: k-1"
check "same key, another spec: 409 conflict" eval 'code_is 409 && err_code conflict'
http POST "$U/v1/units/alice/requests" "$REQ" '{"spec": {"pure": {"epsilon": 0.1}}}' -H "Idempotency-Key;"
check "empty Idempotency-Key: 400" code_is 400
http POST "$U/v1/units/alice/requests" "$REQ" '{"spec": {"pure": {"epsilon": "x"}}}'
check "bad spec: 400 bad_input with the JSON path" eval 'code_is 400 && err_code bad_input && grep -q /pure/epsilon "$TMP/out"'
http POST "$U/v1/units/alice/requests" "$REQ" '{"spec": {"gaussian": {"sigma": 1}}}'
check "spec the pure filter cannot account: 422" code_is 422
http POST "$U/v1/units/alice/requests" "$REQ" '{"reserve": true}'
check "no spec: 400 naming /spec" eval 'code_is 400 && grep -q /spec "$TMP/out"'
http POST "$U/v1/units/nobody/requests" "$REQ" '{"spec": {"pure": {"epsilon": 0.1}}}'
check "request on an unknown unit: 404" code_is 404
http POST "$U/v1/units/acme-u/requests" "$REQ" '{"spec": {"pure": {"epsilon": 0.1}}}'
check "request on another tenant's unit: 404" code_is 404
http POST "$U/v1/units/alice/requests" "$REQ" '{"spec": {"pure": {"epsilon": 0.9}}}'
check "rejected by the filter: 409 with the decision body" eval 'code_is 409 && js "j[\"decision\"] == \"rejected\" and j[\"status\"] == \"rejected\" and j[\"remaining\"][\"epsilon\"] == 0.75"'
big=$(python3 -c "print('{\"spec\": {\"pure\": {\"epsilon\": 0.1}}, \"pad\": \"' + 'x' * 5000 + '\"}')")
http POST "$U/v1/units/alice/requests" "$REQ" "$big"
check "body over --max-body: 413 too_large" eval 'code_is 413 && err_code too_large'

# ------------------------------------------------------------ reservations --
http POST "$U/v1/units/bob/requests" "$REQ" '{"spec": {"pure": {"epsilon": 0.5}}, "reserve": true}'
check "reserve: 200, status reserved" eval 'code_is 200 && js "j[\"status\"] == \"reserved\" and j[\"remaining\"][\"epsilon\"] == 1.5"'
RES1=$(python3 -c "import json; print(json.load(open('$TMP/out'))['request_id'])" 2>/dev/null)
http POST "$U/v1/units/bob/requests/$RES1/commit" "$REQ"
check "commit: 200 charged" eval "code_is 200 && js 'j == {\"request_id\": $RES1, \"status\": \"charged\"}'"
http POST "$U/v1/units/bob/requests/$RES1/commit" "$REQ"
check "commit again: 409 (not a pending reservation)" eval 'code_is 409 && err_code conflict'
http POST "$U/v1/units/bob/requests" "$REQ" '{"spec": {"pure": {"epsilon": 0.5}}, "reserve": true}'
RES2=$(python3 -c "import json; print(json.load(open('$TMP/out'))['request_id'])" 2>/dev/null)
http POST "$U/v1/units/bob/requests/$RES2/release" "$REQ"
check "release: 200 released, the charge given back" eval "code_is 200 && js 'j[\"request_id\"] == $RES2 and j[\"status\"] == \"released\" and j[\"remaining\"][\"epsilon\"] == 1.5'"
http POST "$U/v1/units/bob/requests/$RES2/release" "$REQ"
check "release again: 409" code_is 409
http POST "$U/v1/units/bob/requests/abc/commit" "$REQ"
check "a request id that is not a number: 400" code_is 400

# -------------------------------------------------------------- admin ops --
http POST "$U/v1/units/bob/freeze" "$REQ" '{"reason": "audit"}'
check "freeze with a request token: 403" code_is 403
http POST "$U/v1/units/bob/freeze" "$ADMIN" '{"reason": "audit"}'
check "freeze: 200, lifecycle frozen" eval 'code_is 200 && js "j[\"lifecycle\"] == \"frozen\""'
http POST "$U/v1/units/bob/requests" "$REQ" '{"spec": {"pure": {"epsilon": 0.1}}}'
check "request on a frozen unit: 423 frozen" eval 'code_is 423 && err_code frozen'
http GET "$U/v1/units/bob" "$READ"
check "a frozen unit's status stays readable" code_is 200
http POST "$U/v1/units/bob/unfreeze" "$ADMIN"
check "unfreeze (no body): 200 active" eval 'code_is 200 && js "j[\"lifecycle\"] == \"active\""'
http POST "$U/v1/units/bob/topup" "$ADMIN" '{"filter": {"filter": "pure", "epsilon": 3}, "reason": "new quarter"}'
check "topup: 200, remaining grows by 1 (2 -> 3, spent 0.5 kept)" eval 'code_is 200 && js "j[\"remaining\"][\"epsilon\"] == 2.5"'
http POST "$U/v1/units/bob/topup" "$ADMIN" '{"filter": {"filter": "pure", "epsilon": 1}}'
check "topup to a smaller budget: 400" eval 'code_is 400 && err_code bad_input'
http POST "$U/v1/units/bob/topup" "$ADMIN" '{"reason": "x"}'
check "topup without filter: 400 naming /filter" eval 'code_is 400 && grep -q /filter "$TMP/out"'
http POST "$U/v1/units/bob/archive" "$ADMIN" '{"reason": "done"}'
check "archive: 200 archived" eval 'code_is 200 && js "j[\"lifecycle\"] == \"archived\""'
http POST "$U/v1/units/bob/unfreeze" "$ADMIN"
check "unfreeze an archived unit: refused, 409 conflict" eval 'code_is 409 && err_code conflict'
http POST "$U/v1/units/bob/requests" "$REQ" '{"spec": {"pure": {"epsilon": 0.1}}}'
check "request on an archived unit: 423" code_is 423

# ---------------------------------------------------- history, verify, export --
http GET "$U/v1/units/alice/history" "$READ"
check "history: entries in id order, the request with its actor and key" eval 'code_is 200 && js "any(e[\"id\"] == $RID1 and e[\"idempotency_key\"] == \"k-1\" and e[\"actor\"].startswith(\"tok_\") for e in j[\"entries\"]) and [e[\"id\"] for e in j[\"entries\"]] == sorted(e[\"id\"] for e in j[\"entries\"])"'
check "history: each entry with the remaining budget after it (0.75 after k-1)" eval 'js "[e[\"remaining\"][\"epsilon\"] for e in j[\"entries\"] if e[\"id\"] == $RID1] == [0.75]"'
http GET "$U/v1/units/alice/history?limit=1" "$READ"
check "history?limit=1: one entry and next" eval 'code_is 200 && js "len(j[\"entries\"]) == 1 and j[\"next\"] is not None"'
http GET "$U/v1/units/alice/history?after=x" "$READ"
check "history?after=x: 400" code_is 400
http GET "$U/v1/units/acme-u/history" "$READ"
check "history of another tenant's unit: 404" code_is 404
http GET "$U/v1/verify" "$READ"
check "verify: 200 ok" eval 'code_is 200 && js "j[\"ok\"] is True and j[\"problems\"] == []"'
http GET "$U/v1/export" "$ADMIN"
check "export: 200, an export document" eval 'code_is 200 && js "j[\"format\"].startswith(\"dpacct-ledger-export\")"'
http GET "$U/v1/export" "$READ"
check "export with a read token: 403" code_is 403
http GET "$U/v1/export" "$ACME"
check "export by another tenant's admin: 403" eval 'code_is 403 && err_code forbidden'

# ------------------------------------------------------------ concurrency --
# burst NAME TOKEN URL1 URL2: 8 clients (odd ones on URL1, even ones on URL2)
# send 4 requests each on unit conc (pure epsilon 1) for epsilon 0.125 (exact
# in binary: exactly 8 fit); $TMP/NAME holds the 32 HTTP statuses
burst() {
    local name=$1 tok=$2 c u cl=()
    for c in 1 2 3 4 5 6 7 8; do
        u=$3; [ $((c % 2)) = 0 ] && u=$4
        (for i in 1 2 3 4; do
            curl -s -o /dev/null -w '%{http_code}\n' -X POST -H "Authorization: Bearer $tok" \
                --data-binary '{"spec": {"pure": {"epsilon": 0.125}}}' "$u/v1/units/conc/requests"
        done) >"$TMP/$name.$c" &
        cl+=($!)
    done
    wait "${cl[@]}"
    cat "$TMP/$name".? >"$TMP/$name"
    [ "$(grep -c "^200$" "$TMP/$name")" = 8 ] && [ "$(grep -c "^409$" "$TMP/$name")" = 24 ]
}
check "8 concurrent clients, 32 requests for a budget of 8: exactly 8 accepted" burst conc "$REQ" "$U" "$U"
http GET "$U/v1/verify" "$READ"
check "verify after the concurrent requests: ok" eval 'code_is 200 && js "j[\"ok\"] is True"'

# ---------------------------------------------------------------- metrics --
http GET "$U/metrics" -
check "metrics: 200 text/plain; version=0.0.4" eval 'code_is 200 && hdr_has "Content-Type: text/plain; version=0.0.4"'
check "metrics: dpacct_up 1" grep -qx "dpacct_up 1" "$TMP/out"
check "metrics: accepted decisions counted (1, its replay, 2 reservations, 8)" grep -qx 'dpacct_decisions_total{outcome="accepted"} 12' "$TMP/out"
check "metrics: the rejected ones (1 + 24)" grep -qx 'dpacct_decisions_total{outcome="rejected"} 25' "$TMP/out"
check "metrics: histogram count = accepted + rejected + decided errors" \
    eval 'awk "/^dpacct_decision_seconds_count/ {c=\$2} /^dpacct_decision_seconds_bucket\\{le=\"\\+Inf\"\\}/ {i=\$2} END {exit !(c == i && c >= 36)}" "$TMP/out"'
check "metrics: alice's remaining epsilon 0.75" grep -qx 'dpacct_unit_remaining{unit="alice",tenant="default",parameter="epsilon"} 0.75' "$TMP/out"
check "metrics: conc's remaining epsilon 0" grep -qx 'dpacct_unit_remaining{unit="conc",tenant="default",parameter="epsilon"} 0' "$TMP/out"
check "metrics: 404 answers counted" grep -q '^dpacct_http_requests_total{code="404"} [1-9]' "$TMP/out"

# ------------------------------------------------------------------ the log --
check "log: one line per request with method, path, status, microseconds, token id" \
    grep -qE "^GET /v1/whoami 200 [0-9]+ $READ_ID\$" "$TMP/A.log"
check "log: unauthenticated requests logged with token id -" grep -qE '^GET /healthz 200 [0-9]+ -$' "$TMP/A.log"
leaked=0
for t in "$ADMIN" "$REQ" "$READ" "$ACME"; do
    grep -qF -- "$t" "$TMP/A.log" && leaked=1
    grep -rqF -- "${t:0:16}" "$TMP/A.log" && leaked=1
done
check "no token (nor its first 16 characters) in the server's stderr" [ $leaked = 0 ]
check "no CORS header without --cors-origin" eval '! grep -qi "^Access-Control-Allow-Origin" "$TMP/hdr"'

# ------------------------------------------------------------------ SIGTERM --
kill -TERM "$PID_A"
wait "$PID_A"
check "SIGTERM: graceful stop, exit 0" [ $? = 0 ]
check "SIGTERM: says it stops" grep -q "stopping" "$TMP/A.log"

# --------------------------------------------------- CORS and the idle timeout --
check "serve with --cors-origin, --timeout 1 and --metrics-token" start_server B --ledger "$DB" --cors-origin https://app.example --timeout 1 --threads 2 --metrics-token
http GET "$URL_B/metrics" -
check "--metrics-token: /metrics without a token 401" code_is 401
http GET "$URL_B/metrics" "$ACME"
check "--metrics-token: another tenant's token 403" code_is 403
http GET "$URL_B/metrics" "$READ"
check "--metrics-token: a read token of tenant default 200" eval 'code_is 200 && grep -qx "dpacct_up 1" "$TMP/out"'
http GET "$URL_B/healthz" - "" -H "Origin: https://app.example"
check "CORS: Access-Control-Allow-Origin is exactly the origin given" eval 'grep -qi "^Access-Control-Allow-Origin: https://app.example\s*$" "$TMP/hdr"'
http OPTIONS "$URL_B/v1/units/alice/requests" - "" -H "Origin: https://app.example" -H "Access-Control-Request-Method: POST"
check "CORS preflight: 204 with methods and headers" eval 'code_is 204 && hdr_has "Access-Control-Allow-Methods: POST" && grep -qi "^Access-Control-Allow-Headers: .*Idempotency-Key" "$TMP/hdr"'
python3 - "${URL_B#http://}" <<'PY'
import socket, sys, time
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)))
s.settimeout(10)
t0 = time.time()
data = s.recv(1)          # the server closes the idle connection
sys.exit(0 if data == b"" and 0.5 < time.time() - t0 < 5 else 1)
PY
check "an idle connection is closed after --timeout (1 s)" [ $? = 0 ]
http GET "$URL_B/healthz" -
check "the server still answers after closing it" code_is 200
kill -TERM "$PID_B"; wait "$PID_B"
check "SIGTERM during keep-alive and timeouts: exit 0 (no sanitizer report)" [ $? = 0 ]

# --------------------------------------------------------------------- TLS --
if openssl req -x509 -newkey rsa:2048 -nodes -keyout "$TMP/key.pem" -out "$TMP/cert.pem" -days 1 \
    -subj "/CN=localhost" -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" >/dev/null 2>&1; then
    check "serve with --tls-cert/--tls-key" start_server T --ledger "$DB" --tls-cert "$TMP/cert.pem" --tls-key "$TMP/key.pem" --threads 2
    check "TLS: the URL is https" eval '[ "${URL_T#https://}" != "$URL_T" ]'
    http GET "$URL_T/v1/whoami" "$READ" "" --cacert "$TMP/cert.pem"
    check "TLS: curl --cacert the self-signed certificate: 200" code_is 200
    http GET "${URL_T/https/http}/healthz" -
    check "TLS: plain HTTP on the TLS port gets no answer" eval '[ "$code" != 200 ]'
    kill -TERM "$PID_T"; wait "$PID_T"
    check "TLS server: exit 0 on SIGTERM" [ $? = 0 ]
else
    not_ok "openssl could not make a self-signed certificate"
fi
run serve --ledger "$DB" --tls-cert "$TMP/cert.pem"
check "--tls-cert without --tls-key: exit 2" rc_is 2
run serve --ledger "$DB" --listen nowhere
check "--listen without a port: exit 2" rc_is 2
run serve --listen 127.0.0.1:0
check "no --ledger: exit 2" rc_is 2
run serve --ledger "$TMP/none.db" --listen 127.0.0.1:0
check "a missing ledger: exit 2, not created" eval 'rc_is 2 && [ ! -e "$TMP/none.db" ]'

# -------------------------------------------------------- a keyed ledger, IPv6 --
printf 'a secret chain key\n' >"$TMP/chain.key"
"$BIN" ledger init "$TMP/keyed.db" --filter pure --epsilon 1 --unit u --key-file "$TMP/chain.key" >/dev/null </dev/null
KREQ=$("$BIN" ledger token create "$TMP/keyed.db" --tenant default --role request --key-file "$TMP/chain.key" 2>/dev/null </dev/null)
run serve --ledger "$TMP/keyed.db" --listen 127.0.0.1:0
check "a keyed ledger without --key-file: refused, exit 2" rc_is 2
check "serve --key-file on a keyed ledger" start_server KY --ledger "$TMP/keyed.db" --key-file "$TMP/chain.key" --threads 2
http POST "$URL_KY/v1/units/u/requests" "$KREQ" '{"spec": {"pure": {"epsilon": 0.5}}}'
check "keyed ledger: a request accepted" code_is 200
http GET "$URL_KY/v1/verify" "$KREQ"
check "keyed ledger: verify ok and keyed" eval 'code_is 200 && js "j[\"ok\"] is True and j[\"keyed\"] is True"'
kill -TERM "$PID_KY"; wait "$PID_KY"
if python3 -c "import socket; socket.socket(socket.AF_INET6).bind(('::1', 0))" 2>/dev/null; then
    "$BIN" serve --ledger "$DB" --listen '[::1]:0' >"$TMP/v6.out" 2>"$TMP/v6.log" &
    V6=$!
    SERVERS+=("$V6")
    for i in $(seq 100); do grep -q listening "$TMP/v6.out" && break; sleep 0.05; done
    check "IPv6: listening on [::1]" grep -q 'listening on http://\[::1\]:' "$TMP/v6.out"
    http GET "$(sed -n 's/.*listening on \([^ ]*\) .*/\1/p' "$TMP/v6.out")/healthz" -
    check "IPv6: healthz 200" code_is 200
    kill -TERM "$V6"; wait "$V6"
fi

# ------------------------------------------------- SIGKILL under load, restart --
# kill_under_load DB NAME: 8 clients on distinct units k1..k8 print the ids of
# their accepted requests; the server is killed with SIGKILL meanwhile and
# restarted; every printed id must be in the history and verify must pass.
kill_under_load() {
    local db=$1 name=$2 c cl=()
    start_server "$name" --ledger "$db" --threads 8 || return 1
    local url pid
    url=$(eval echo "\$URL_$name")
    pid=$(eval echo "\$PID_$name")
    for c in 1 2 3 4 5 6 7 8; do
        # a body is kept only when curl got all of it (-f: a 200)
        (while curl -s -f -X POST -H "Authorization: Bearer $4" --max-time 5 -o "$TMP/$name.body.$c" \
            --data-binary '{"spec": {"pure": {"epsilon": 0.001}}}' "$url/v1/units/k$c/requests"; do
            cat "$TMP/$name.body.$c" >>"$TMP/$name.bodies.$c"; echo >>"$TMP/$name.bodies.$c"
        done) 2>/dev/null &
        cl+=($!)
    done
    sleep 1.5
    kill -9 "$pid"
    wait "$pid" "${cl[@]}"
    start_server "${name}2" --ledger "$db" --threads 2 || return 1
    url=$(eval echo "\$URL_${name}2")
    cat "$TMP/$name".bodies.* | python3 -c "
import json, sys
for line in sys.stdin:
    if line.strip():
        print(json.loads(line)['request_id'])" | sort >"$TMP/$name.ids"
    : >"$TMP/$name.hist"
    for c in 1 2 3 4 5 6 7 8; do
        http GET "$url/v1/units/k$c/history?limit=1000" "$3"
        python3 -c "import json; [print(e['id']) for e in json.load(open('$TMP/out'))['entries'] if e['kind'] == 'request']" >>"$TMP/$name.hist"
    done
    sort "$TMP/$name.hist" -o "$TMP/$name.hist"
    N_IDS=$(wc -l <"$TMP/$name.ids")
    MISSING=$(comm -23 "$TMP/$name.ids" "$TMP/$name.hist" | wc -l)
    http GET "$url/v1/verify" "$3"
    VERIFY_OK=$(js 'j["ok"] is True' && echo 1 || echo 0)
    pid=$(eval echo "\$PID_${name}2")
    kill -TERM "$pid"
    wait "$pid"
    RESTART_EXIT=$?
}
for c in 1 2 3 4 5 6 7 8; do "$BIN" ledger add-unit "$DB" --unit "k$c" --filter pure --epsilon 1000 >/dev/null 2>&1 </dev/null; done
kill_under_load "$DB" K "$READ" "$REQ"
check "SIGKILL under load (SQLite): clients saw accepted requests" [ "${N_IDS:-0}" -gt 8 ]
check "SIGKILL under load (SQLite): every accepted id is in the history" [ "${MISSING:-1}" = 0 ]
check "SIGKILL under load (SQLite): verify ok after the restart" [ "${VERIFY_OK:-0}" = 1 ]
check "SIGKILL under load (SQLite): the restarted server exits 0" [ "${RESTART_EXIT:-1}" = 0 ]
echo "# SQLite: $N_IDS requests accepted before the SIGKILL"

# -------------------------------------------------------------- PostgreSQL --
# ------------------------------------------------------ tenants and tokens --
# (h_tenants.c) on a ledger of its own: tenants default and zeta with a unit
# each, an admin token of each.
TDB=$TMP/tenants.db
"$BIN" ledger init "$TDB" --filter pure --epsilon 1 --unit tu-default >/dev/null </dev/null
"$BIN" ledger tenant add "$TDB" --tenant zeta >/dev/null 2>&1 </dev/null
"$BIN" ledger add-unit "$TDB" --unit tu-zeta --tenant zeta >/dev/null 2>&1 </dev/null
TADM=$(token "$TDB" default admin)
ZADM=$(token "$TDB" zeta admin)
TREAD=$(token "$TDB" default read)
check "serve on the tenants ledger" start_server T --ledger "$TDB" --threads 2
T=$URL_T
http GET "$T/v1/tenants" -
check "GET /v1/tenants without a token: 401" eval 'code_is 401 && err_code unauthorized'
http GET "$T/v1/tenants" "$TREAD"
check "GET /v1/tenants with a read token: 403" eval 'code_is 403 && err_code forbidden'
http GET "$T/v1/tenants" "$TADM"
check "GET /v1/tenants, admin of default: every tenant" eval 'code_is 200 && js "j == {\"tenants\": [\"default\", \"zeta\"]}"'
http GET "$T/v1/tenants" "$ZADM"
check "GET /v1/tenants, admin of zeta: its own only" eval 'code_is 200 && js "j == {\"tenants\": [\"zeta\"]}"'
http POST "$T/v1/tenants" "$TADM" '{"tenant": "omega"}'
check "POST /v1/tenants: 201" eval 'code_is 201 && js "j == {\"tenant\": \"omega\"}"'
http POST "$T/v1/tenants" "$TADM" '{"tenant": "omega"}'
check "POST /v1/tenants again: 409 conflict" eval 'code_is 409 && err_code conflict'
http POST "$T/v1/tenants" "$TADM" '{"tenant": ""}'
check "POST /v1/tenants, an empty name: 400" eval 'code_is 400 && err_code bad_input'
http POST "$T/v1/tenants" "$TADM" '{"tenant": 7}'
check "POST /v1/tenants, a number: 400 naming /tenant" eval 'code_is 400 && err_code bad_input && js "\"/tenant\" in j[\"error\"][\"message\"]"'
http POST "$T/v1/tenants" "$TADM" '{"tenant": "x", "color": 1}'
check "POST /v1/tenants, an unknown member: 400" eval 'code_is 400 && err_code bad_input'
http POST "$T/v1/tenants" "$ZADM" '{"tenant": "psi"}'
check "POST /v1/tenants by an admin of zeta: 403" eval 'code_is 403 && err_code forbidden'
TADM_ID=$("$BIN" ledger token list "$TDB" --json 2>/dev/null </dev/null | python3 -c "
import json,sys; print([t['id'] for t in json.load(sys.stdin) if t['tenant']=='default' and t['role']=='admin'][0])" 2>/dev/null)
http GET "$T/v1/tokens" "$TADM"
check "GET /v1/tokens: default's 2 tokens, no secret, no hash" eval 'code_is 200 && js "len(j[\"tokens\"]) == 2 and all(t[\"tenant\"] == \"default\" and set(t) <= {\"id\",\"tenant\",\"role\",\"label\",\"created\",\"revoked\"} for t in j[\"tokens\"])" && ! grep -q -- "$TADM" "$TMP/out"'
http POST "$T/v1/tokens" "$ZADM" '{"role": "request", "label": "z-req"}'
check "POST /v1/tokens by zeta's admin: 201, a secret, tenant zeta, role request" eval 'code_is 201 && js "len(j[\"token\"]) >= 32 and j[\"id\"].startswith(\"tok_\") and j[\"tenant\"] == \"zeta\" and j[\"role\"] == \"request\""'
ZNEW=$(python3 -c "import json; print(json.load(open('$TMP/out'))['token'])" 2>/dev/null)
ZNEW_ID=$(python3 -c "import json; print(json.load(open('$TMP/out'))['id'])" 2>/dev/null)
http GET "$T/v1/whoami" "$ZNEW"
check "a token created over HTTP works (whoami: zeta, request)" eval 'code_is 200 && js "j[\"tenant\"] == \"zeta\" and j[\"role\"] == \"request\" and j[\"token_id\"] == \"$ZNEW_ID\""'
http POST "$T/v1/units/tu-zeta/requests" "$ZNEW" '{"spec": {"pure": {"epsilon": 0.25}}}'
check "a token created over HTTP makes a request on its tenant's unit" eval 'code_is 200 && js "j[\"decision\"] == \"accepted\""'
http GET "$T/v1/tokens" "$ZADM"
check "GET /v1/tokens by zeta's admin: zeta's tokens only, with the label" eval 'code_is 200 && js "sorted(t[\"tenant\"] for t in j[\"tokens\"]) == [\"zeta\", \"zeta\"] and \"z-req\" in [t[\"label\"] for t in j[\"tokens\"]]"'
http POST "$T/v1/tokens" "$ZADM" '{"role": "read", "tenant": "default"}'
check "POST /v1/tokens for another tenant by zeta's admin: 403" eval 'code_is 403 && err_code forbidden'
http POST "$T/v1/tokens" "$TADM" '{"role": "read", "tenant": "omega"}'
check "POST /v1/tokens for omega by default's admin: 201" eval 'code_is 201 && js "j[\"tenant\"] == \"omega\" and j[\"role\"] == \"read\""'
OMEGA=$(python3 -c "import json; print(json.load(open('$TMP/out'))['token'])" 2>/dev/null)
http POST "$T/v1/tokens" "$TADM" '{"role": "root"}'
check "POST /v1/tokens, a bad role: 400 naming /role" eval 'code_is 400 && err_code bad_input && js "\"/role\" in j[\"error\"][\"message\"]"'
http POST "$T/v1/tokens" "$TADM" '{"label": "x"}'
check "POST /v1/tokens without a role: 400" eval 'code_is 400 && err_code bad_input'
http POST "$T/v1/tokens" "$TADM" '{"role": "read", "tenant": "nobody"}'
check "POST /v1/tokens for an unknown tenant: 400" eval 'code_is 400 && err_code bad_input'
http POST "$T/v1/tokens" "$TREAD" '{"role": "read"}'
check "POST /v1/tokens with a read token: 403" eval 'code_is 403 && err_code forbidden'
http GET "$T/v1/tenants" "$TADM"
check "GET /v1/tenants lists omega once it has a token" eval 'code_is 200 && js "j == {\"tenants\": [\"default\", \"omega\", \"zeta\"]}"'
http POST "$T/v1/tokens/$TADM_ID/revoke" "$ZADM"
check "revoke another tenant's token by zeta's admin: 404" eval 'code_is 404 && err_code not_found'
http POST "$T/v1/tokens/tok_0000000000000000/revoke" "$TADM"
check "revoke an unknown token: 404" eval 'code_is 404 && err_code not_found'
http POST "$T/v1/tokens/$ZNEW_ID/revoke" "$ZADM"
check "revoke by the token's tenant's admin: 200" eval 'code_is 200 && js "j[\"id\"] == \"$ZNEW_ID\" and j[\"revoked\"] is True"'
http POST "$T/v1/tokens/$ZNEW_ID/revoke" "$TADM"
check "revoke again (by default's admin): 409" eval 'code_is 409 && err_code conflict'
sleep 1.2 # the token cache keeps a token for at most 1 s (token_cache.c)
http GET "$T/v1/whoami" "$ZNEW"
check "a token revoked over HTTP: 401 after the cache's second" eval 'code_is 401 && err_code unauthorized'
http GET "$T/v1/tokens" "$ZADM"
check "GET /v1/tokens shows it revoked" eval 'code_is 200 && js "[t[\"revoked\"] for t in j[\"tokens\"] if t[\"id\"] == \"$ZNEW_ID\"] == [True]"'
leaked=0
for t in "$ZNEW" "$OMEGA" "$TADM" "$ZADM"; do grep -qF -- "${t:0:16}" "$TMP/T.log" && leaked=1; done
check "no secret made over HTTP (nor its first 16 characters) in the server's stderr" eval '[ $leaked = 0 ] && [ -n "$ZNEW" ] && [ -n "$OMEGA" ]'
# verify, scoped: a budget edited in the database under both units
python3 -c "
import sqlite3; c=sqlite3.connect('$TDB')
c.execute(\"UPDATE dpacct_units SET filter=replace(filter, ':1}', ':100}')\"); c.commit()"
http GET "$T/v1/verify" "$TADM"
check "verify by default: both units' problems" eval 'code_is 200 && js "j[\"ok\"] is False and {p[\"unit\"] for p in j[\"problems\"]} == {\"tu-default\", \"tu-zeta\"} and \"problems_elsewhere\" not in j"'
NDEF=$(python3 -c "import json; print(sum(p['unit'] == 'tu-default' for p in json.load(open('$TMP/out'))['problems']))" 2>/dev/null)
http GET "$T/v1/verify" "$ZADM"
check "verify by zeta: its unit's problems only, the others counted" eval 'code_is 200 && js "j[\"ok\"] is False and {p[\"unit\"] for p in j[\"problems\"]} == {\"tu-zeta\"} and j[\"problems_elsewhere\"] == ${NDEF:-0} > 0" && ! grep -q tu-default "$TMP/out"'
kill -TERM "$PID_T"; wait "$PID_T"

if [ -n "${DPA_TEST_PG_DIR:-}" ] && [ -n "${DPA_TEST_PG_SCRIPT:-}" ]; then
    PG=$(bash "$DPA_TEST_PG_SCRIPT" uri "$DPA_TEST_PG_DIR" "svc_$$")
    "$BIN" ledger init "$PG" --filter pure --epsilon 1 --unit conc >/dev/null </dev/null
    for c in 1 2 3 4 5 6 7 8; do "$BIN" ledger add-unit "$PG" --unit "k$c" --filter pure --epsilon 1000 >/dev/null 2>&1 </dev/null; done
    PREQ=$(token "$PG" default request)
    PREAD=$(token "$PG" default read)
    check "serve on PostgreSQL: two processes on one ledger" eval 'start_server P1 --ledger "$PG" --threads 4 && start_server P2 --ledger "$PG" --threads 4'
    http GET "$URL_P1/healthz" -
    check "PostgreSQL: healthz ok" eval 'code_is 200 && js "j[\"database\"] == \"ok\""'
    http POST "$URL_P1/v1/units/k1/requests" "$PREQ" '{"spec": {"pure": {"epsilon": 0.5}}}' -H "Idempotency-Key: pg-1"
    RIDP=$(python3 -c "import json; print(json.load(open('$TMP/out'))['request_id'])" 2>/dev/null)
    http POST "$URL_P2/v1/units/k1/requests" "$PREQ" '{"spec": {"pure": {"epsilon": 0.5}}}' -H "Idempotency-Key: pg-1"
    check "PostgreSQL: a retry through the other server is replayed" eval "code_is 200 && js 'j[\"request_id\"] == $RIDP and j[\"replayed\"] is True'"
    check "PostgreSQL, two servers, 8 clients, 32 requests for a budget of 8: exactly 8 accepted" \
        burst pconc "$PREQ" "$URL_P1" "$URL_P2"
    http GET "$URL_P2/v1/verify" "$PREAD"
    check "PostgreSQL: verify ok" eval 'code_is 200 && js "j[\"ok\"] is True"'
    kill -TERM "$PID_P1" "$PID_P2"
    wait "$PID_P1"; st1=$?
    wait "$PID_P2"; st2=$?
    check "PostgreSQL: both servers exit 0 on SIGTERM" [ "$st1$st2" = 00 ]
    kill_under_load "$PG" PK "$PREAD" "$PREQ"
    check "SIGKILL under load (PostgreSQL): every accepted id is in the history" eval '[ "${N_IDS:-0}" -gt 8 ] && [ "${MISSING:-1}" = 0 ]'
    check "SIGKILL under load (PostgreSQL): verify ok after the restart" [ "${VERIFY_OK:-0}" = 1 ]
    echo "# PostgreSQL: $N_IDS requests accepted before the SIGKILL"
elif [ -n "${DPA_TEST_REQUIRE_PG:-}" ]; then
    not_ok "PostgreSQL required (DPA_TEST_REQUIRE_PG) but DPA_TEST_PG_DIR is not set"
fi

finish
