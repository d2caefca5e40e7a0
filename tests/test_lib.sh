# Shared scaffolding of the shell tests (tests/*_test.sh), sourced by them;
# not a test itself.  Needs bash, coreutils, grep and python3.
# SPDX-License-Identifier: GPL-3.0-or-later

# test_setup NAME BIN SRC: BIN and SRC made absolute, TMP a fresh directory
# removed at exit, the counters at 0.
test_setup() {
    local name=$1
    BIN=${2:?usage: $name.sh DPACCT_BINARY SOURCE_DIR}
    SRC=${3:-$PWD}
    case $BIN in /*) ;; *) BIN=$PWD/$BIN ;; esac
    case $SRC in /*) ;; *) SRC=$PWD/$SRC ;; esac
    TMP=$(mktemp -d "${TMPDIR:-/tmp}/dpacct_$name.XXXXXX") || exit 1
    trap 'rm -rf "$TMP"' EXIT
    pass=0
    fail=0
    rc=0
}

ok() { pass=$((pass + 1)); echo "ok - $1"; }
not_ok() {
    fail=$((fail + 1))
    echo "not ok - $1"
    echo "#   exit status $rc; stdout: $(head -c 600 "$TMP/out" | tr '\n' ' ')"
    echo "#   stderr: $(head -c 400 "$TMP/err" | tr '\n' ' ')"
}
# check NAME COMMAND...: ok if COMMAND succeeds.
check() { local name=$1; shift; if "$@"; then ok "$name"; else not_ok "$name"; fi; }

# run ARGS...: run dpacct with stdin from /dev/null; sets rc, $TMP/out, $TMP/err.
run() { "$BIN" "$@" </dev/null >"$TMP/out" 2>"$TMP/err"; rc=$?; }
# run_stdin FILE ARGS...: the same with stdin from FILE.
run_stdin() { local in=$1; shift; "$BIN" "$@" <"$in" >"$TMP/out" 2>"$TMP/err"; rc=$?; }

rc_is() { [ "$rc" -eq "$1" ]; }
out_empty() { [ ! -s "$TMP/out" ]; }
out_has() { grep -q -F -- "$1" "$TMP/out"; }
err_has() { grep -q -F -- "$1" "$TMP/err"; }

# json_line FILE EXPR [object]: FILE is exactly one line holding one JSON
# document (no NaN or Infinity literals; with "object", a JSON object) and
# the Python expression EXPR is true of it (as d).
json_line() {
    python3 - "$1" "$2" "${3:-}" <<'PY'
import json, math, sys
def no_constant(name):
    raise ValueError("non-JSON constant " + name)
try:
    text = open(sys.argv[1]).read()
    assert text.endswith("\n") and text.count("\n") == 1, "not exactly one line"
    d = json.loads(text, parse_constant=no_constant)
    if sys.argv[3] == "object":
        assert isinstance(d, dict), "not an object"
    ok = eval("(" + sys.argv[2] + ")", {"d": d, "math": math})
except Exception as e:
    print("#   json check failed:", repr(e))
    ok = False
sys.exit(0 if ok else 1)
PY
}

# finish: the summary line; the exit status of the test.
finish() {
    echo "$pass passed, $fail failed"
    [ "$fail" -eq 0 ]
}
