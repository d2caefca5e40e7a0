#!/usr/bin/env bash
# Tests of the dpacct command-line front end.
# SPDX-License-Identifier: GPL-3.0-or-later
#
# usage: bash tests/cli_test.sh PATH/TO/dpacct SOURCE_DIR
# Prints "ok - NAME" / "not ok - NAME" per check and a final "N passed, M failed";
# exits 1 if any check failed.  Needs bash, coreutils, grep and python3.
set -u

. "$(dirname "$0")/test_lib.sh"
test_setup cli_test "$@"
# the FFT plan cache goes to the test's own directory, not the user's
export DPACCT_WISDOM=$TMP/wisdom

# ---------------------------------------------------------------- helpers --

out_has_all() { local w; for w in "$@"; do out_has "$w" || return 1; done; }
err_prefixed() { [ -s "$TMP/err" ] && grep -q '^dpacct: ' "$TMP/err"; }

# json EXPR: stdout is exactly one line holding one JSON object (no NaN or
# Infinity literals) and the Python expression EXPR is true of it (as d).
json() { json_line "$TMP/out" "$1" object; }
# human_brackets NAME REF: the human output's "NAME <= U" and "NAME >= L"
# lines satisfy L <= REF <= U.
human_brackets() {
    python3 - "$TMP/out" "$1" "$2" <<'EOF'
import re, sys
t, name, ref = open(sys.argv[1]).read(), sys.argv[2], float(sys.argv[3])
up = float(re.search(r"^%s <= (\S+)" % name, t, re.M).group(1))
lo = float(re.search(r"^%s >= (\S+)" % name, t, re.M).group(1))
sys.exit(0 if lo <= ref <= up else 1)
EOF
}
# human_outside_json FILE: the human epsilon bounds, read as exact decimals,
# lie outside the exact doubles of the JSON output saved in FILE.
human_outside_json() {
    python3 - "$TMP/out" "$1" <<'EOF'
import json, re, sys
from fractions import Fraction as F
t, d = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
up = re.search(r"^epsilon <= (\S+)", t, re.M).group(1)
lo = re.search(r"^epsilon >= (\S+)", t, re.M).group(1)
sys.exit(0 if F(up) >= F(d["epsilon_upper"]) and F(lo) <= F(d["epsilon_lower"]) else 1)
EOF
}
# json_get EXPR: print EXPR of the JSON on stdout (repr, for reuse as a number).
json_get() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(repr(eval(sys.argv[2])))' "$TMP/out" "$1" 2>/dev/null; }

# usage_error NAME ARGS...: exit 2, a "dpacct: " message, nothing on stdout.
usage_error() {
    local name=$1; shift
    run "$@"
    check "$name" eval 'rc_is 2 && err_prefixed && out_empty'
}

GAUSS='{"gaussian": {"sigma": 1}}'
DPSGD='{"repeat": {"count": 14063, "event": {"poisson": {"rate": 0.0042666667, "event": {"gaussian": {"sigma": 1.1}}}}}}'
printf '%s\n' "$GAUSS" >"$TMP/gauss.json"
printf '%s\n' "$DPSGD" >"$TMP/dpsgd.json"
# Reference values: the Gaussian closed form (LT Thm 2.4) at mu = 1, evaluated in high precision.
EPS_G1=4.37717809568122   # eps at delta = 1e-5
DELTA_G1=0.126936737506644 # delta at eps = 1

# ------------------------------------------------------------------- help --

run --help
check "--help exits 0 and names every command and option" eval 'rc_is 0 &&
    out_has_all epsilon delta profile calibrate --delta --epsilon --from --to --points \
                --tolerance --method --accuracy --grid-step --max-grid --json --version \
                --help Example'
run -h
check "-h prints the main help" eval 'rc_is 0 && out_has "Usage: dpacct"'
run --version
check "--version exits 0 and prints the version, and the library's" eval 'rc_is 0 && grep -Eq "^dpacct [0-9]+\.[0-9]+\.[0-9]+$" "$TMP/out" &&
    grep -Eq "^libdpacct [0-9]+\.[0-9]+\.[0-9]+ " "$TMP/out"'

common="--method --accuracy --grid-step --max-grid --json --help"
for spec in "epsilon:--delta" "delta:--epsilon" "profile:--from --to --points" \
            "calibrate:--epsilon --delta --tolerance"; do
    cmd=${spec%%:*}
    run "$cmd" --help
    check "$cmd --help exits 0 and names its options and an example" eval 'rc_is 0 &&
        out_has_all "Usage: dpacct $cmd" Example "dpacct $cmd " ${spec#*:} $common'
done
run epsilon --delta abc --help
check "CMD --help wins over bad options" eval 'rc_is 0 && out_has "Usage: dpacct epsilon"'

usage_error "no command is a usage error"
usage_error "unknown command is a usage error" frobnicate "$GAUSS"
usage_error "unknown top-level option is a usage error" --frobnicate

# --------------------------------------------------------------- epsilon --

run epsilon --delta 1e-5 --json "$GAUSS"
check "epsilon: Gaussian sigma 1 brackets $EPS_G1 with auto = exact" \
    json "d['query'] == 'epsilon' and d['epsilon_lower'] <= $EPS_G1 <= d['epsilon_upper'] and
          d['epsilon_upper'] - d['epsilon_lower'] < 1e-3 and d['method'] == 'exact' and
          d['delta'] == 1e-5 and d['accuracy_met'] is True"
check "epsilon --json has every documented field" \
    json "set(d) == {'query','delta','epsilon_upper','epsilon_lower','method','binding_direction',
          'epsilon_upper_remove','epsilon_upper_add','grid_step','grid_size','truncated_mass',
          'roundoff','accuracy_met','upper_source','certified'} and d['certified'] is True and
          d['binding_direction'] in ('remove','add','both') and
          d['upper_source'] in ('method','largest_finite_loss','dp_domination','chernoff')"
G_UP=$(json_get "d['epsilon_upper']")

run epsilon --delta 1e-5 --method pld --json "$GAUSS"
check "epsilon --method pld brackets $EPS_G1" \
    json "d['method'] == 'pld' and d['epsilon_lower'] <= $EPS_G1 <= d['epsilon_upper'] and
          d['epsilon_upper'] - d['epsilon_lower'] < 1e-3 and d['grid_step'] > 0 and d['grid_size'] > 0"

run epsilon --delta 1e-5 "$GAUSS"
check "epsilon human output: rounded bounds still bracket $EPS_G1" eval 'rc_is 0 &&
    human_brackets epsilon "$EPS_G1" && out_has "(certified upper bound; claim this)" &&
    out_has "at delta = 1e-05" && out_has "method: exact" && out_has "binding direction:"'

run epsilon --delta 1e-5 --method pld "$GAUSS"
check "epsilon human output for pld names grid step, FFT size, truncated mass, round-off" eval 'rc_is 0 &&
    out_has "method: pld (grid step" && out_has "FFT size" && out_has "truncated mass" &&
    out_has "round-off allowance"'

# Directed rounding: the printed upper bound is >= the exact double, the
# printed lower <= it (checked on a spec whose bounds are not short decimals).
run epsilon --delta 1e-6 --json '{"laplace": {"scale": 3}}'
cp "$TMP/out" "$TMP/lap.json"
run epsilon --delta 1e-6 '{"laplace": {"scale": 3}}'
check "human bounds are rounded outward from the JSON bounds" eval 'rc_is 0 &&
    human_outside_json "$TMP/lap.json"'

# ------------------------------------------------------------------ delta --

run delta --epsilon 1 --json "$GAUSS"
check "delta: Gaussian sigma 1 brackets $DELTA_G1" \
    json "d['query'] == 'delta' and d['epsilon'] == 1 and
          d['delta_lower'] <= $DELTA_G1 <= d['delta_upper'] and
          d['delta_upper'] - d['delta_lower'] < 1e-6 and
          {'delta_upper_remove','delta_upper_add','binding_direction','grid_step','roundoff'} <= set(d)"
run delta --epsilon 1 --method pld --json "$GAUSS"
check "delta --method pld brackets $DELTA_G1" \
    json "d['method'] == 'pld' and d['delta_lower'] <= $DELTA_G1 <= d['delta_upper']"
run delta --epsilon -1 --json "$GAUSS"
check "delta at a negative epsilon brackets 0.678817974886628" \
    json "d['delta_lower'] <= 0.678817974886628 <= d['delta_upper']"
run delta --epsilon 1 "$GAUSS"
check "delta human output" eval 'rc_is 0 && out_has "delta <= " && out_has "delta >= " &&
    out_has "at epsilon = 1"'

# The exact Gaussian method at extreme epsilons: delta(1e300) is positive but
# below the smallest subnormal, delta(-1e300) = 1 - e^-1e300 (1 in double);
# never the trivial bracket [0, 1].
for spec in "$GAUSS" '{"gdp": {"mu": 1e-8}}' '{"gdp": {"mu": 1e8}}'; do
    run delta --epsilon 1e300 --json "$spec"
    check "delta at epsilon 1e300 is [0, 4.9e-324] ($spec)" \
        json "d['method'] == 'exact' and d['delta_lower'] == 0 and d['delta_upper'] == 5e-324"
    run delta --epsilon -1e300 --json "$spec"
    check "delta at epsilon -1e300 is [1 - tiny, 1] ($spec)" \
        json "d['delta_upper'] == 1 and 1 - 1e-14 <= d['delta_lower'] < 1"
done
run delta --epsilon 40 --json "$GAUSS"
check "delta at epsilon 40 (true value 1.2e-350) is [0, 4.9e-324]" \
    json "d['delta_lower'] == 0 and d['delta_upper'] == 5e-324"
run delta --epsilon 30 --json "$GAUSS"
check "delta at epsilon 30 brackets 4.709326318097e-193, 1e-11 wide" \
    json "d['delta_lower'] <= 4.709326318097e-193 * (1 + 1e-12) and
          d['delta_upper'] >= 4.709326318097e-193 * (1 - 1e-12) and
          d['delta_upper'] - d['delta_lower'] <= 1e-11 * d['delta_upper']"
run delta --epsilon -40 --json "$GAUSS"
check "delta at epsilon -40 is [1 - tiny, 1]" json "d['delta_upper'] == 1 and d['delta_lower'] >= 1 - 1e-14"

# Subnormal epsilons are finite numbers: accepted (strtod reports ERANGE for
# them); overflow and garbage are usage errors that say so.
for e in 1e-320 -1e-320 4.9e-324 0x1p-1074 2.2e-308; do
    run delta --epsilon "$e" --json "$GAUSS"
    check "delta --epsilon $e (subnormal) is accepted" \
        json "d['epsilon'] == (float.fromhex('$e') if '$e'.startswith('0x') else float('$e')) and
              d['delta_lower'] <= 0.382924922548026 <= d['delta_upper']"
done
run calibrate --epsilon 1e-320 --delta 0.5 '{"gaussian": {"sigma": "?"}}'
check "calibrate --epsilon 1e-320 is accepted" eval 'rc_is 0 && out_has "sigma = "'
run epsilon --delta 1e-320 --json "$GAUSS"
check "epsilon --delta 1e-320 (subnormal) is accepted" json "d['delta'] == 1e-320 and d['epsilon_upper'] > 38"
for e in 1e400 -1e400 1e309; do
    usage_error "--epsilon $e (overflow) is a usage error" delta --epsilon "$e" "$GAUSS"
    check "--epsilon $e message says it is beyond the range of a double" \
        eval 'err_has "\"$e\"" && err_has "beyond the range of a double"'
done
usage_error "--delta 1e-400 (rounds to 0) is a usage error" epsilon --delta 1e-400 "$GAUSS"
check "--delta 1e-400 message says it rounds to 0" err_has "rounds to 0 in double precision"
usage_error "--grid-step 1e-400 is not 0 (automatic): a usage error" epsilon --delta 1e-5 --grid-step 1e-400 "$GAUSS"
check "--grid-step 1e-400 message says it rounds to 0" err_has "rounds to 0 in double precision"
run delta --epsilon 1e-400 --json "$GAUSS"
check "delta --epsilon 1e-400 is read as 0 (in the domain)" json "d['epsilon'] == 0"
for e in 1e-320x x1e-320 1e-320e 0x inf -inf nan; do
    usage_error "--epsilon '$e' is a usage error" delta --epsilon "$e" "$GAUSS"
    check "--epsilon '$e' message names the value" err_has "must be a finite number, got \"$e\""
done

# ----------------------------------------------------------------- DP-SGD --

run epsilon --delta 1e-5 --json "$TMP/dpsgd.json"
check "DP-SGD (14063 x poisson 0.0042666667 x gaussian 1.1): finite bracket, pld, direction" \
    json "isinstance(d['epsilon_upper'], float) and isinstance(d['epsilon_lower'], float) and
          0 < d['epsilon_lower'] <= d['epsilon_upper'] < 100 and d['method'] == 'pld' and
          d['binding_direction'] in ('remove', 'add', 'both') and
          d['epsilon_upper'] == max(d['epsilon_upper_remove'], d['epsilon_upper_add'])"
DPSGD_UP=$(json_get "d['epsilon_upper']")
run epsilon --delta 1e-5 "$TMP/dpsgd.json"
check "DP-SGD human output names the binding direction" eval 'rc_is 0 &&
    grep -Eq "^binding direction: (remove \(add: |add \(remove: |both)" "$TMP/out"'
run epsilon --delta 1e-5 --accuracy 1e-8 --max-grid 1024 --json "$TMP/dpsgd.json"
check "an unreachable accuracy gives accuracy_met false and still a certified bracket" \
    json "d['accuracy_met'] is False and d['epsilon_lower'] <= d['epsilon_upper'] and
          d['epsilon_upper'] >= $DPSGD_UP and d['grid_size'] <= 1024"
run epsilon --delta 1e-5 --accuracy 1e-8 --max-grid 1024 "$TMP/dpsgd.json"
check "human output says \"accuracy target not met\"" eval 'rc_is 0 && out_has "accuracy target not met"'
usage_error "DP-SGD with --method exact is unsupported (exit 2)" \
    epsilon --delta 1e-5 --method exact "$TMP/dpsgd.json"

# ------------------------------------------------------------ SPEC input --

run epsilon --delta 1e-5 --json "$TMP/gauss.json"
check "SPEC from a file" json "d['epsilon_upper'] == $G_UP"
run_stdin "$TMP/gauss.json" epsilon --delta 1e-5 --json -
check "SPEC from standard input (-)" json "d['epsilon_upper'] == $G_UP"
run epsilon --delta 1e-5 --json "  $GAUSS"
check "inline SPEC with leading blanks" json "d['epsilon_upper'] == $G_UP"
run "$TMP/gauss.json" --json epsilon --delta=1e-5
check "the command comes first" eval 'rc_is 2'
run epsilon "$GAUSS" --json --delta=1e-5
check "options after SPEC and --opt=value" json "d['epsilon_upper'] == $G_UP"
run epsilon --delta 1e-5 --json -- "$TMP/gauss.json"
check "-- ends the options" json "d['epsilon_upper'] == $G_UP"
run epsilon --delta 1e-5 --accuracy 1e-3 --grid-step 1e-3 --max-grid 65536 --method pld \
    --json "$GAUSS"
check "--accuracy, --grid-step and --max-grid are accepted" \
    json "d['method'] == 'pld' and d['epsilon_lower'] <= $EPS_G1 <= d['epsilon_upper']"

# -------------------------------------------------------------- profile --

run profile --from 0 --to 2 --points 5 --json "$GAUSS"
check "profile: 5 evenly spaced points bracketing the Gaussian profile" \
    json "d['query'] == 'profile' and d['method'] == 'exact' and
          [p['epsilon'] for p in d['points']] == [0, 0.5, 1, 1.5, 2] and
          all(p['delta_lower'] <= p['delta_upper'] for p in d['points']) and
          all(p['delta_lower'] <= r <= p['delta_upper'] for p, r in zip(
              [d['points'][i] for i in (0, 1, 2, 4)],
              [0.382924922548026, 0.238421708134877, 0.126936737506644, 0.0209236358211137]))"
run profile --from -1 --to 1 "$GAUSS"
check "profile human table has 21 rows by default" eval 'rc_is 0 &&
    out_has "delta_upper" && [ "$(grep -cE "^-?[0-9]" "$TMP/out")" -eq 21 ]'
usage_error "profile --from >= --to is a usage error" profile --from 2 --to 1 "$GAUSS"
usage_error "profile --points 1 is a usage error" profile --from 0 --to 1 --points 1 "$GAUSS"
usage_error "profile without --to is a usage error" profile --from 0 "$GAUSS"

# ------------------------------------------------------------ calibrate --

run calibrate --epsilon 1 --delta 1e-5 --json '{"gaussian": {"sigma": "?"}}'
check "calibrate sigma: value > 0 and its epsilon_upper <= 1" \
    json "d['query'] == 'calibrate' and d['parameter'] == 'sigma' and
          d['path'] == '/gaussian/sigma' and d['value'] > 0 and d['epsilon_upper'] <= 1 and
          d['epsilon'] == 1 and d['delta'] == 1e-5 and
          (d['infeasible'] is None or d['infeasible'] < d['value']) and d['evaluations'] > 0"
SIGMA=$(json_get "d['value']")
run epsilon --delta 1e-5 --json "{\"gaussian\": {\"sigma\": $SIGMA}}"
check "the calibrated sigma re-checked with epsilon meets epsilon <= 1" json "d['epsilon_upper'] <= 1"
run calibrate --epsilon 1 --delta 1e-5 '{"gaussian": {"sigma": "?"}}'
check "calibrate human output" eval 'rc_is 0 && out_has "sigma = " &&
    out_has "smallest value meeting epsilon <= 1 at delta = 1e-05" && out_has "evaluations: "'
run calibrate --epsilon 2 --delta 1e-5 --json \
    '{"repeat": {"count": "?", "event": {"gaussian": {"sigma": 10}}}}'
check "calibrate a count gives an integer" \
    json "type(d['value']) is int and d['value'] >= 1 and d['parameter'] == 'count' and
          d['epsilon_upper'] <= 2 and (d['infeasible'] is None or d['infeasible'] == d['value'] + 1)"
run calibrate --epsilon 3 --delta 1e-5 --json \
    '{"repeat": {"count": 14063, "event": {"poisson": {"rate": 0.0042666667, "event": {"gaussian": {"sigma": "?"}}}}}}'
check "calibrate the DP-SGD noise multiplier (pld)" \
    json "d['method'] == 'pld' and d['epsilon_upper'] <= 3 and 0.5 < d['value'] < 2 and
          d['path'] == '/repeat/event/poisson/event/gaussian/sigma' and
          (d['infeasible'] is None or d['infeasible'] < d['value'])"
run calibrate --epsilon 1 --delta 1e-5 '{"repeat": {"count": "?", "event": {"pure": {"epsilon": 2}}}}'
check "calibrate with no feasible value fails with exit 1 and no output" \
    eval 'rc_is 1 && err_prefixed && out_empty && err_has "count"'
usage_error "calibrate without \"?\" is an error (exit 2)" \
    calibrate --epsilon 1 --delta 1e-5 "$GAUSS"
check "calibrate without \"?\" names the placeholder" err_has '"?"'
usage_error "calibrate without --delta is a usage error" \
    calibrate --epsilon 1 '{"gaussian": {"sigma": "?"}}'
usage_error "calibrate --epsilon 0 is a usage error" \
    calibrate --epsilon 0 --delta 1e-5 '{"gaussian": {"sigma": "?"}}'
usage_error "calibrate --tolerance 0.5 is a usage error" \
    calibrate --epsilon 1 --delta 1e-5 --tolerance 0.5 '{"gaussian": {"sigma": "?"}}'
usage_error "a \"?\" in an epsilon spec is an error" epsilon --delta 1e-5 '{"gaussian": {"sigma": "?"}}'

# ----------------------------------------------------------- approx leaf --

run epsilon --delta 0.05 --json '{"approx": {"epsilon": 1, "delta": 0.1}}'
check "approx (1, 0.1) at delta 0.05: epsilon is \"inf\"" \
    json "d['epsilon_upper'] == 'inf' and d['epsilon_lower'] == 'inf'"
run epsilon --delta 0.05 '{"approx": {"epsilon": 1, "delta": 0.1}}'
check "infinite epsilon in human output" eval 'rc_is 0 && out_has "epsilon <= inf"'
run epsilon --delta 0.2 --json '{"approx": {"epsilon": 1, "delta": 0.1}}'
check "approx (1, 0.1) at delta 0.2: finite epsilon" \
    json "isinstance(d['epsilon_upper'], float) and d['epsilon_lower'] <= d['epsilon_upper'] <= 1 + 1e-9"

# ---------------------------------------------------------------- errors --

usage_error "bad JSON: exit 2, message, empty stdout" epsilon --delta 1e-5 '{"gaussian": {"sigma": 1}'
run epsilon --delta 1e-5 --json '{"gaussian": }'
check "bad JSON with --json: exit 2, nothing on stdout, the error as JSON on stderr" eval 'rc_is 2 && out_empty &&
    python3 -c "import json, sys; e = json.load(open(sys.argv[1]))[\"error\"]; sys.exit(0 if e[\"exit_status\"] == 2 and
        e[\"message\"].startswith(\"JSON syntax error\") else 1)" "$TMP/err"'
usage_error "out-of-range rate is an error" epsilon --delta 1e-5 \
    '{"poisson": {"rate": 1.5, "event": {"gaussian": {"sigma": 1}}}}'
check "out-of-range rate message names /poisson/rate" err_has "/poisson/rate"
usage_error "unknown event kind is an error" delta --epsilon 1 '{"repeat": {"count": 2, "event": {"gausian": {"sigma": 1}}}}'
check "unknown event kind message names the path, the kind and the valid kinds" \
    eval 'err_has "dpacct: /repeat/event: unknown event kind \"gausian\" (expected gaussian, laplace, discrete_laplace, " &&
          err_has ", privacy_loss, " && ! err_has "neighboring"'
usage_error "unknown top-level event kind is an error" delta --epsilon 1 '{"gausian": {"sigma": 1}}'
check "at the top level the valid keys include neighboring" \
    eval 'err_has "unknown event kind \"gausian\" (expected gaussian, laplace, discrete_laplace, " &&
          err_has ", or the top-level key neighboring)"'

# Every JSON example of docs/spec.md is accepted: specs by an epsilon query,
# templates (with "?") by calibrate.
python3 - "$SRC/docs/spec.md" >"$TMP/spec_examples.txt" <<'EOF'
import json, re, sys
for b in re.findall(r"```json\n(.*?)```", open(sys.argv[1]).read(), re.S):
    print(json.dumps(json.loads(b)))
EOF
n_examples=0
while IFS= read -r example; do
    n_examples=$((n_examples + 1))
    case $example in
        *'"?"'*) run calibrate --epsilon 1 --delta 1e-5 --json "$example" ;;
        *) run epsilon --delta 1e-5 --json "$example" ;;
    esac
    check "docs/spec.md example $n_examples runs: ${example:0:60}..." eval 'rc_is 0 && json True'
done <"$TMP/spec_examples.txt"
check "docs/spec.md has JSON examples (found $n_examples)" eval '[ "$n_examples" -ge 5 ]'
usage_error "unknown option is a usage error" epsilon --delta 1e-5 --frobnicate "$GAUSS"
check "unknown option is named" err_has "--frobnicate"
usage_error "short unknown option is a usage error" epsilon --delta 1e-5 -x "$GAUSS"
usage_error "missing --delta is a usage error" epsilon "$GAUSS"
check "missing --delta is named" err_has "--delta"
usage_error "missing --epsilon is a usage error" delta "$GAUSS"
usage_error "--delta abc is an error" epsilon --delta abc "$GAUSS"
check "--delta abc message names option and value" eval 'err_has "--delta" && err_has "\"abc\""'
# (0 is accepted since --delta 0 asks for pure DP: tested below)
for bad in 1 nan inf -1e-5 "" "1e-5x" " 1e-5" 1e-400 0x; do
    usage_error "--delta '$bad' is an error" epsilon --delta "$bad" "$GAUSS"
done
usage_error "--delta without a value is an error" epsilon "$GAUSS" --delta
# --delta 0: pure DP, the largest privacy loss (docs/guarantees.md §3.16);
# dp_accounting pld/pld_privacy_accountant_test.py test_epsilon_basic: 3
for m in auto pld rdp; do
    run epsilon --delta 0 --method $m --json '{"compose": [{"pure": {"epsilon": 1}}, {"pure": {"epsilon": 2}}]}'
    check "epsilon at delta 0 of pure 1 and 2 is exactly 3 (method $m)" \
        json "d['epsilon_upper'] == 3 and d['epsilon_lower'] == 3 and d['certified']"
done
run epsilon --delta 0 --json "$GAUSS"
check "epsilon at delta 0 of a Gaussian is inf, said plainly" \
    json "d['epsilon_upper'] == 'inf' and d['epsilon_lower'] == 'inf' and 'not pure DP' in d['note']"
run epsilon --delta 0,1e-5 '{"laplace": {"scale": 4}}'
check "epsilon at delta 0 of laplace scale 4 is 0.25 (text, with a list)" \
    eval 'rc_is 0 && out_has "epsilon <= 0.25" && out_has "pure DP: the largest privacy loss"'
run epsilon --delta 0 --method all '{"compose": [{"pure": {"epsilon": 1}}, {"laplace": {"scale": 2}}]}'
check "--method all at delta 0: every method gives the same certified largest loss 1.5" \
    eval 'rc_is 0 && [ "$(grep -c "^[a-z]* *1.500000001 *1.499999999 .*certified bracket (pure DP" "$TMP/out")" -ge 4 ]'
run calibrate --epsilon 1 --delta 0 --json '{"repeat": {"count": 10, "event": {"laplace": {"scale": "?"}}}}'
check "calibration at delta 0: 10 Laplace steps need scale >= 10" \
    json "10 <= d['value'] <= 10.01 and d['epsilon_upper'] <= 1"
usage_error "--epsilon nan is an error" delta --epsilon nan "$GAUSS"
usage_error "--epsilon 1e999 is an error" delta --epsilon 1e999 "$GAUSS"
usage_error "--delta given twice is an error" epsilon --delta 1e-5 --delta 1e-6 "$GAUSS"
usage_error "an option of another command is an error" epsilon --delta 1e-5 --epsilon 1 "$GAUSS"
usage_error "--json=1 is an error" epsilon --delta 1e-5 --json=1 "$GAUSS"
usage_error "--method bogus is an error" epsilon --delta 1e-5 --method bogus "$GAUSS"
check "--method bogus message names the value" err_has '"bogus"'
usage_error "--accuracy 2 is an error" epsilon --delta 1e-5 --accuracy 2 "$GAUSS"
usage_error "--grid-step 1e-9 is an error" epsilon --delta 1e-5 --grid-step 1e-9 "$GAUSS"
usage_error "--max-grid 100 is an error" epsilon --delta 1e-5 --max-grid 100 "$GAUSS"
usage_error "--max-grid -5 is an error" epsilon --delta 1e-5 --max-grid -5 "$GAUSS"
usage_error "--points 2.5 is an error" profile --from 0 --to 1 --points 2.5 "$GAUSS"
usage_error "nonexistent SPEC file is an error" epsilon --delta 1e-5 "$TMP/no/such.json"
check "nonexistent SPEC file is named" err_has "$TMP/no/such.json"
usage_error "a directory as SPEC is an error" epsilon --delta 1e-5 "$TMP"
printf '{"gaussian": {"sigma": 1}}\0garbage' >"$TMP/nul.json"
usage_error "a SPEC with a NUL byte is an error" epsilon --delta 1e-5 "$TMP/nul.json"
: >"$TMP/empty.json"
usage_error "an empty SPEC is an error" epsilon --delta 1e-5 "$TMP/empty.json"
usage_error "zcdp leaf is refused by pld (exit 2)" epsilon --delta 1e-5 --method pld '{"zcdp": {"rho": 0.1}}'
check "zcdp message names the leaf and method rdp" err_has "/zcdp: method pld cannot take zcdp leaves"
check "zcdp message says which method can" err_has "use method rdp"
usage_error "subsampled zcdp is refused by every method (exit 2)" epsilon --delta 1e-5 \
    '{"poisson": {"rate": 0.1, "event": {"zcdp": {"rho": 0.1}}}}'
check "subsampled zcdp names the leaf" err_has "/poisson/event/zcdp"
usage_error "--method all is for epsilon and delta only" profile --from 0 --to 1 --method all "$GAUSS"
usage_error "--method bogus lists the methods" epsilon --delta 1e-5 --method bogus "$GAUSS"
check "--method bogus message" err_has "auto, exact, pld, phi, rdp, clt, gdp or all"
usage_error "--rdp-conversion bogus" epsilon --delta 1e-5 --method rdp --rdp-conversion bogus "$GAUSS"
usage_error "calibrate --method phi is refused" calibrate --epsilon 1 --delta 1e-5 --method phi \
    '{"gaussian": {"sigma": "?"}}'
check "calibrate --method phi says why" err_has "not certified"
usage_error "two SPECs is a usage error" epsilon --delta 1e-5 "$GAUSS" "$TMP/gauss.json"
usage_error "missing SPEC is a usage error" epsilon --delta 1e-5
printf 'not json' >"$TMP/bad.json"
run_stdin "$TMP/bad.json" epsilon --delta 1e-5 -
check "bad spec on stdin is an error" eval 'rc_is 2 && err_prefixed && out_empty'

# ------------------------------------------------------ FFT plan cache --
SUB='{"repeat": {"count": 500, "event": {"poisson": {"rate": 0.02, "event": {"gaussian": {"sigma": 1}}}}}}'
rm -rf "$TMP/wisdom"
run epsilon --delta 1e-5 --json "$SUB"; cp "$TMP/out" "$TMP/first"
check "a PLD run writes the plan cache: one file per FFT length" eval 'rc_is 0 && n=$(ls "$TMP/wisdom" | grep -c "^fftw-[0-9]*$") && [ "$n" -ge 1 ] && [ -s "$TMP/wisdom/$(ls "$TMP/wisdom" | head -1)" ]'
ls -l --time-style=+%s.%N "$TMP/wisdom" >"$TMP/cache1"
run epsilon --delta 1e-5 --json "$SUB"
check "results are the same with the plan cache" cmp -s "$TMP/out" "$TMP/first"
ls -l --time-style=+%s.%N "$TMP/wisdom" >"$TMP/cache2"
check "a run with every length cached writes nothing" cmp -s "$TMP/cache1" "$TMP/cache2"
for f in "$TMP"/wisdom/fftw-*; do printf 'garbage' >"$f"; done
run epsilon --delta 1e-5 --json "$SUB"
check "a corrupt plan cache is ignored" eval 'rc_is 0 && cmp -s "$TMP/out" "$TMP/first"'
DPACCT_WISDOM=off "$BIN" epsilon --delta 1e-5 --json "$SUB" </dev/null >"$TMP/out" 2>"$TMP/err"; rc=$?
check "DPACCT_WISDOM=off runs without the cache" eval 'rc_is 0 && cmp -s "$TMP/out" "$TMP/first"'
DPACCT_WISDOM=$TMP/first/w "$BIN" epsilon --delta 1e-5 --json "$SUB" </dev/null >"$TMP/out" 2>"$TMP/err"; rc=$?
check "an unwritable cache path only costs speed" eval 'rc_is 0 && cmp -s "$TMP/out" "$TMP/first" && [ ! -s "$TMP/err" ]'
run epsilon --delta 1e-5 --threads 1 --json "$SUB"
check "--threads 1 gives the same result" cmp -s "$TMP/out" "$TMP/first"
usage_error "--threads 65 is a usage error" epsilon --delta 1e-5 --threads 65 "$SUB"

# ------------------------------------------------------------ methods --
# Every method on one spec: pld's certified bracket is the reference; phi's
# estimate must fall inside it (to its own width), rdp's upper bound must not
# be below pld's lower bound.
SG='{"repeat": {"count": 1000, "event": {"poisson": {"rate": 0.01, "event": {"gaussian": {"sigma": 1}}}}}}'
run epsilon --delta 1e-5 --method all --json "$SG"
check "--method all lists six methods" \
    json "[m['method'] for m in d['methods']] == ['exact','pld','phi','rdp','clt','gdp'] and d['query'] == 'epsilon'"
check "--method all: exact says why and which method can" \
    json "not d['methods'][0]['applicable'] and 'use method pld' in d['methods'][0]['reason']"
check "--method all: phi agrees with pld, rdp is above it" \
    json "(lambda p, f, r: p['certified'] and not f['certified'] and r['certified'] and
          p['epsilon_lower'] - 1e-6 <= f['epsilon_upper'] and f['epsilon_lower'] <= p['epsilon_upper'] + 1e-6 and
          r['epsilon_upper'] >= p['epsilon_lower'] and r['rdp_order'] > 1 and r['epsilon_lower'] == 0 and
          all(m['seconds'] >= 0 for m in d['methods']))(d['methods'][1], d['methods'][2], d['methods'][3])"
run epsilon --delta 1e-5 --method all "$SG"
check "--method all human table" \
    eval 'rc_is 0 && out_has_all "pld " "certified bracket" "estimate, not certified" "certified upper bound only (order" "not applicable:"'
run delta --epsilon 2 --method rdp --json "$SG"
check "delta --method rdp: upper only, with its order" \
    json "d['method'] == 'rdp' and d['delta_lower'] == 0 and 0 < d['delta_upper'] < 1 and d['rdp_order'] > 1 and
          d['rdp_conversion'] == 'optimal' and d['certified'] is True and 'upper bound only' in d['note']"
run epsilon --delta 1e-5 --method phi "$SG"
check "phi human output says it is not certified" \
    eval 'rc_is 0 && out_has_all "estimated upper bound, not certified" "method: phi"'
run epsilon --delta 1e-5 --method rdp "$SG"
check "rdp human output names the order" eval 'rc_is 0 && out_has "method: rdp (Renyi DP at order"'

# zcdp: accounted by rdp, picked by auto.  rho-zCDP with the classical
# conversion minimized over real orders is rho + 2 sqrt(rho log(1/delta))
# (Bun & Steinke 2016, Prop 1.3); the optimal conversion is tighter.
ZC='{"repeat": {"count": 10, "event": {"zcdp": {"rho": 0.01}}}}'
ZREF=$(python3 -c 'import math; r=0.1; print(repr(r + 2*math.sqrt(r*math.log(1e5))))')
run epsilon --delta 1e-5 --json "$ZC"
check "auto picks rdp for zcdp leaves" json "d['method'] == 'rdp' and d['epsilon_upper'] <= $ZREF"
run epsilon --delta 1e-5 --rdp-conversion classical --json "$ZC"
check "zcdp, classical conversion: rho + 2 sqrt(rho log(1/delta))" \
    json "$ZREF <= d['epsilon_upper'] <= $ZREF * (1 + 1e-6) and d['rdp_conversion'] == 'classical'"
run epsilon --delta 1e-5 --json '{"compose": [{"zcdp": {"rho": 0.1}}, {"gaussian": {"sigma": 3}}]}'
check "zcdp composes with a Gaussian (rho adds 1/(2 sigma^2))" \
    json "d['method'] == 'rdp' and d['epsilon_upper'] <= $(python3 -c 'import math; r=0.1+1/18; print(repr(r + 2*math.sqrt(r*math.log(1e5))))')"

# -------------------------------------------------------------- curves --
run curve --points 5 "$SG"
check "curve: CSV profile, 5 points, brackets in order" eval 'rc_is 0 && [ "$(head -1 "$TMP/out")" = "method,epsilon,delta_upper,delta_lower" ] && [ "$(wc -l <"$TMP/out")" -eq 6 ] &&
    python3 -c "
import csv,sys
rows=list(csv.DictReader(open(sys.argv[1])))
assert all(r[\"method\"]==\"pld\" and 0<=float(r[\"delta_lower\"])<=float(r[\"delta_upper\"])<=1 for r in rows)
d=[float(r[\"delta_upper\"]) for r in rows]; assert all(a>=b for a,b in zip(d,d[1:]))
" "$TMP/out"'
run curve --points 4 --from 0 --to 3 --json "$SG"
check "curve --json: profile points match delta queries" \
    json "d['kind'] == 'profile' and len(d['curves']) == 1 and d['curves'][0]['method'] == 'pld' and
          [p['epsilon'] for p in d['curves'][0]['points']] == [0, 1, 2, 3] and
          all(p['delta_lower'] <= p['delta_upper'] for p in d['curves'][0]['points'])"
D2=$(json_get "d['curves'][0]['points'][2]['delta_upper']")
run delta --epsilon 2 --json "$SG"
check "curve point at eps 2 brackets the delta query's bracket" \
    json "d['delta_lower'] <= $D2 and abs(d['delta_upper'] - $D2) <= 1e-4 * $D2"
"$BIN" curve --method all -o "$TMP/p.svg" --points 11 "$SG" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "curve -o x.svg writes an SVG with a legend per method" eval 'rc_is 0 && out_empty && grep -q "<svg" "$TMP/p.svg" && [ $(grep -c "<path" "$TMP/p.svg") -gt 10 ]'
"$BIN" curve --kind renyi --points 11 -o "$TMP/r.png" "$SG" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "curve --kind renyi -o x.png writes a PNG" eval 'rc_is 0 && [ "$(head -c 8 "$TMP/r.png" | od -An -tx1 | tr -d " ")" = "89504e470d0a1a0a" ]'
usage_error "curve: PNG needs -o" curve --format png "$SG"
usage_error "curve: bad --kind" curve --kind bogus "$SG"
usage_error "curve: --at is for tradeoff only" curve --kind profile --at 0.1 "$SG"
usage_error "curve: --at outside [0, 1]" curve --kind tradeoff --at 1.5 "$SG"
run curve -o /nonexistent/dir/x.svg "$SG"
check "curve: unwritable -o is exit 1" eval 'rc_is 1 && err_prefixed'

# --------------------------------------------------------------- renyi --
# Gaussian mu = 1: D_A = A mu^2 / 2 for every order, complex ones included
# (the continuation of a polynomial is itself).
run renyi --order 2 --json "$GAUSS"
check "renyi order 2 of a Gaussian brackets 1" \
    json "d['query'] == 'renyi' and d['remove']['lower'] <= 1 <= d['remove']['upper'] and
          d['remove']['upper'] - d['remove']['lower'] <= 1e-12 and d['binding_direction'] == 'both'"
run renyi --order 1.5+2i --json "$GAUSS"
check "renyi at a complex order: A mu^2 / 2" \
    json "abs(d['remove']['value'] - 0.75) <= 1e-12 and abs(d['remove']['value_im'] - 1.0) <= 1e-12 and
          d['order_re'] == 1.5 and d['order_im'] == 2"
run renyi --order 0.5 "$GAUSS"
check "renyi human output" eval 'rc_is 0 && out_has "remove: D(P||Q) <= 0.25"'
run renyi --order 2 --json '{"approx": {"epsilon": 1, "delta": 1e-6}}'
check "renyi: mass at +inf makes D_2 infinite" json "d['remove']['exists'] is False and d['remove']['value'] == 'inf'"
usage_error "renyi --order 0" renyi --order 0 "$GAUSS"
usage_error "renyi --order 2i (real part 0)" renyi --order 2i "$GAUSS"
usage_error "renyi --order abc" renyi --order abc "$GAUSS"
usage_error "renyi needs --order" renyi "$GAUSS"
usage_error "renyi takes no --method" renyi --order 2 --method pld "$GAUSS"

# G_1(0.1) = Phi(Phi^-1(0.9) - 1) = 0.610856308354639 (mu = 1): the curve is a
# lower bound, close to it.
run curve --kind tradeoff --at 0.1 --json "$GAUSS"
check "tradeoff --at 0.1 of mu = 1 is just below G_1(0.1)" \
    json "d['kind'] == 'tradeoff' and d['alpha'] == 0.1 and
          0.6108 <= d['methods'][0]['beta_lower'] <= 0.610856308354639 and d['methods'][0]['certified'] is True"
run curve --kind tradeoff --at 0.1 "$GAUSS"
check "tradeoff --at human output" eval 'rc_is 0 && out_has "beta >= 0.6108" && out_has "certified lower bound on the type II error"'
check "tradeoff --at: beta_upper above G_1(0.1), within 1e-5 (docs/fdp.md §9)" eval 'out_has "beta <= 0.6108" && out_has "power 1 - beta >= 0.3891"'
run curve --kind tradeoff --at 0.1 --json "$GAUSS"
check "tradeoff --at JSON: G_1(0.1) = 0.610856308354639 in [beta_lower, beta_upper]" \
    json "d['methods'][0]['beta_lower'] <= 0.610856308354639 <= d['methods'][0]['beta_upper'] <= 0.61087"
# f-DP operations (docs/fdp.md §11.2): G_1 for groups of 3 is G_3, G_3(0.1) =
# Phi(Phi^-1(0.9) - 3) = 0.0428574...; C_0.2(G_1)(0.1) = 0.2 G_1(0.1) + 0.8 * 0.9 =
# 0.842171261670928 (0.1 is below the fixed point 0.3085 of G_1: GDP eq 14)
run curve --kind tradeoff --at 0.1 --json --group 3 "$GAUSS"
check "tradeoff --group 3 of mu = 1 is just below G_3(0.1), no beta_upper" \
    json "0.0428570 <= d['methods'][0]['beta_lower'] <= 0.04285747 and 'beta_upper' not in d['methods'][0]"
run curve --kind tradeoff --at 0.1 --json --subsample 0.2 "$GAUSS"
check "tradeoff --subsample 0.2 of mu = 1 is just below C_p(G_1)(0.1)" \
    json "0.8421705 <= d['methods'][0]['beta_lower'] <= 0.842171261670928 and
          d['operations'] == {'subsample': 0.2, 'group': None, 'inverse': False, 'symmetrize': False}"
run curve --kind tradeoff --at 0.05 --group 2 '{"pure": {"epsilon": 1}}'
check "tradeoff --group 2 human output names the operation and the group" eval 'rc_is 0 && out_has "beta >= 0.630547" &&
    out_has "for groups of 2 (GDP Thm 2.14)" && out_has "datasets that differ in 2 records"'
usage_error "curve: --group is for tradeoff only" curve --kind profile --group 2 "$GAUSS"
usage_error "curve: --group 0" curve --kind tradeoff --group 0 "$GAUSS"
usage_error "curve: --subsample 0" curve --kind tradeoff --subsample 0 "$GAUSS"
usage_error "curve: --subsample 1.5" curve --kind tradeoff --subsample 1.5 "$GAUSS"
usage_error "curve: --inverse takes no value" curve --kind tradeoff --inverse=1 "$GAUSS"
# the tradeoff_curve leaf (docs/fdp.md §11.1): refusals at the JSON path
run delta --epsilon 1 '{"tradeoff_curve": {"points": [[0, 1], [0.5, 0.7]]}}'
check "tradeoff_curve above the diagonal: refused at its path" eval 'rc_is 2 && err_prefixed &&
    grep -q "/tradeoff_curve/points: point 1: beta" "$TMP/err"'
run delta --epsilon 1 --json '{"tradeoff_curve": {"points": [[0, 1], [1, 0]]}}'
check "tradeoff_curve of the diagonal 1 - alpha: delta 0 (up to the pld round-off allowance)" json "d['delta_upper'] <= 1e-12"
run curve --kind tradeoff --points 11 "$SG"
check "tradeoff CSV: below 1 - alpha, non-increasing" eval 'rc_is 0 && [ "$(head -1 "$TMP/out")" = "method,alpha,beta_lower" ] &&
    python3 -c "
import csv,sys
rows=list(csv.DictReader(open(sys.argv[1])))
a=[float(r[\"alpha\"]) for r in rows]; b=[float(r[\"beta_lower\"]) for r in rows]
assert len(rows)==11 and all(0<=y<=1-x+1e-15 for x,y in zip(a,b)) and all(p>=q for p,q in zip(b,b[1:])) and b[0]>0.9
" "$TMP/out"'
"$BIN" curve --kind tradeoff --method all --points 21 -o "$TMP/t.svg" "$SG" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "tradeoff plot with every method and the diagonal" eval 'rc_is 0 && grep -q "<svg" "$TMP/t.svg"'
# cairo is loaded when a plot is drawn: without it (hidden in a private mount
# namespace, where that is allowed: root, as in CI) a plot is an error that
# names the library, and the output file is left as it was
CAIRO_LIB=$(ldconfig -p 2>/dev/null | awk '/libcairo\.so\.2 /{print $NF; exit}')
if [ -n "$CAIRO_LIB" ] && unshare -m true 2>/dev/null; then
    for ext in png pdf; do
        echo keep >"$TMP/keep.$ext"
        unshare -m sh -c 'mount --bind /dev/null "$1" && exec "$2" curve -o "$3" "$4"' sh "$CAIRO_LIB" "$BIN" "$TMP/keep.$ext" "$GAUSS" \
            >"$TMP/out" 2>"$TMP/err"; rc=$?
        check "without cairo a $ext plot fails, names the library, leaves the file" \
            eval 'rc_is 1 && err_has "plots need cairo at run time" && err_has "libcairo2" && [ "$(cat "$TMP/keep.$ext")" = keep ]'
    done
    unshare -m sh -c 'mount --bind /dev/null "$1" && exec "$2" curve -o "$3" "$4"' sh "$CAIRO_LIB" "$BIN" "$TMP/nocairo.svg" "$GAUSS" \
        >"$TMP/out" 2>"$TMP/err"; rc=$?
    check "without cairo an SVG plot is still written (SVG is written directly)" \
        eval 'rc_is 0 && grep -q "<text" "$TMP/nocairo.svg"'
    unshare -m sh -c 'mount --bind /dev/null "$1" && exec "$2" epsilon --delta 1e-5 "$3"' sh "$CAIRO_LIB" "$BIN" "$GAUSS" \
        >"$TMP/out" 2>"$TMP/err"; rc=$?
    check "without cairo everything but plots works" eval 'rc_is 0 && out_has "epsilon <="'
fi

# gdp (CLT approximation, not certified) and clt (Berry-Esseen, certified)
PURE='{"repeat": {"count": 2000, "event": {"pure": {"epsilon": 0.05}}}}'
run delta --epsilon 3 --method exact --json "$PURE"
EXD=$(json_get "d['delta_upper']"); EXL=$(json_get "d['delta_lower']")
run delta --epsilon 3 --method clt --json "$PURE"
check "clt brackets the exact delta of 2000 pure steps" \
    json "d['method'] == 'clt' and d['certified'] is True and d['delta_lower'] <= $EXL and d['delta_upper'] >= $EXD"
run delta --epsilon 3 --method gdp --json "$PURE"
check "gdp is labelled an approximation and lands near the exact value" \
    json "d['method'] == 'gdp' and d['certified'] is False and 'not a bound' in d['note'] and
          abs(d['delta_upper'] - $EXD) <= 0.05 * $EXD"
# calibrate --method gdp: the CLT estimate (Opacus' get_noise_multiplier with
# accountant="gdp", opacus/tests/accountants_test.py test_get_noise_multiplier_gdp,
# which uses GDP Cor 5.4's mu and gets 1.3232; the gdp method uses Thm 3.4's),
# labelled an estimate; its value and the nearest infeasible one straddle
# the target under the same method's epsilon query
OPG='{"repeat":{"count":2250,"event":{"poisson":{"rate":0.04,"event":{"gaussian":{"sigma":"?"}}}}}}'
run calibrate --epsilon 8 --delta 1e-5 --method gdp --json "$OPG"
check "calibrate --method gdp is an estimate, labelled so" \
    json "d['method'] == 'gdp' and d['certified'] is False and d['epsilon_upper'] <= 8 and 1.2 < d['value'] < 1.4"
GVAL=$(json_get "d['value']"); GINF=$(json_get "d['infeasible']")
for pair in "$GVAL le" "$GINF gt"; do
    set -- $pair
    run epsilon --delta 1e-5 --method gdp --json "${OPG/'"?"'/$1}"
    check "gdp calibration: epsilon at sigma $1 is $2 8" \
        json "(d['epsilon_upper'] <= 8) == ('$2' == 'le')"
done
run calibrate --epsilon 8 --delta 1e-5 --method gdp "$OPG"
check "calibrate --method gdp text says NOT certified" eval 'rc_is 0 && out_has "estimate, NOT certified"'
usage_error "calibrate --method phi is refused" calibrate --epsilon 1 --delta 1e-5 --method phi \
    '{"gaussian": {"sigma": "?"}}'

# -------------------------------------------------------------- report --
"$BIN" report -o "$TMP/r.html" "$SG" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "report: one self-contained HTML page with every section" eval 'rc_is 0 && out_empty &&
    grep -q "<!DOCTYPE html>" "$TMP/r.html" && [ $(grep -c "<svg" "$TMP/r.html") -ge 3 ] &&
    ! grep -qi "<script" "$TMP/r.html" && ! grep -q "http://\|https://" <(grep -v "www.w3.org" "$TMP/r.html") &&
    grep -q "Epsilon at standard deltas" "$TMP/r.html" && grep -q "Every method at delta = 1e-5" "$TMP/r.html" &&
    grep -q "Membership inference" "$TMP/r.html" && grep -q "Tradeoff curve" "$TMP/r.html"'
run report "$GAUSS"
check "report to standard output" eval 'rc_is 0 && out_has "<h1>Privacy report</h1>" && out_has "&quot;gaussian&quot;"'
usage_error "report: bad spec" report '{"gaussian": {"sigma": -1}}'

if [ -w /dev/full ]; then
    "$BIN" epsilon --delta 1e-5 "$GAUSS" >/dev/full 2>"$TMP/err"; rc=$?
    : >"$TMP/out"
    check "a write error on stdout is exit 1" eval 'rc_is 1 && err_prefixed'
fi

# ------------------------------------------------------------- gdp_mu --
G3='{"compose": [{"repeat": {"count": 3, "event": {"gaussian": {"sigma": 2}}}}, {"gdp": {"mu": 0.5}}]}'
# epsilon --gdp-mu --json reports the smallest mu-GDP: {"lower", "upper" ("inf" for
# +inf, as for the epsilon bounds), "certified", "source", "note"}, numbers never NaN, lower <= upper.
run epsilon --delta 1e-5 "$G3"
check "without --gdp-mu: no mu-GDP line" eval 'rc_is 0 && out_has "epsilon <=" && ! out_has "mu-GDP"'
run epsilon --delta 1e-5 --json "$G3"
check "without --gdp-mu: no gdp_mu in --json" json "'gdp_mu' not in d and d['certified'] is True"
run epsilon --delta 1e-5,1e-6 --gdp-mu --json "$G3"
check "--gdp-mu with several deltas: a gdp_mu per result" json "len(d['results']) == 2 and all(r['gdp_mu']['certified'] for r in d['results'])"
run delta --epsilon 1 --gdp-mu "$GAUSS"
check "--gdp-mu does not apply to delta" eval 'rc_is 2 && err_has "--gdp-mu does not apply"'
gdp_ok() {
    json "set(d['gdp_mu']) == {'lower','upper','certified','source','note'} and
          isinstance(d['gdp_mu']['certified'], bool) and isinstance(d['gdp_mu']['note'], str) and
          d['gdp_mu']['note'] != '' and d['gdp_mu']['source'] in ('none','gaussian','bounded_loss','infinite') and
          (d['gdp_mu']['lower'] == 'inf' or d['gdp_mu']['upper'] == 'inf' or
           0 <= d['gdp_mu']['lower'] <= d['gdp_mu']['upper']) and ($1)"
}
run epsilon --delta 1e-5 --gdp-mu --json "$TMP/dpsgd.json"
check "gdp_mu of DP-SGD: a finite lower bound, no certified upper bound ("inf")" \
    gdp_ok "isinstance(d['gdp_mu']['lower'], float) and 0.5 < d['gdp_mu']['lower'] < 0.7 and
            d['gdp_mu']['upper'] == 'inf' and d['gdp_mu']['certified'] is False and
            d['gdp_mu']['source'] == 'none' and '--method gdp' in d['gdp_mu']['note']"
run epsilon --delta 1e-5 --gdp-mu "$TMP/dpsgd.json"
check "gdp_mu human line for DP-SGD: lower bound only" eval 'rc_is 0 && grep -q "^mu-GDP: mu >= 0\.5[0-9]* (lower bound only: " "$TMP/out"'
run epsilon --delta 1e-5 --gdp-mu --json "$G3"
check "gdp_mu of Gaussians: [lower, upper] encloses sqrt(3/4 + 1/4) = 1, certified" \
    gdp_ok "d['gdp_mu']['lower'] <= 1 <= d['gdp_mu']['upper'] and d['gdp_mu']['upper'] - d['gdp_mu']['lower'] < 1e-10 and
            d['gdp_mu']['certified'] is True and d['gdp_mu']['source'] == 'gaussian'"
run epsilon --delta 1e-5 --gdp-mu "$G3"
check "gdp_mu human line for Gaussians: certified, rounded outward" \
    eval 'rc_is 0 && grep -Eq "^mu-GDP: mu <= 1(\.0*1)? \(certified; smallest mu >= (1|0\.9+) *;" "$TMP/out"'
run epsilon --delta 1e-5 --gdp-mu --json '{"pure": {"epsilon": 0.5}}'
check "gdp_mu of one pure step brackets 2 Phi^-1(1/(1+e^-0.5)) = 0.6238925921" \
    gdp_ok "d['gdp_mu']['lower'] <= 0.6238925921 <= d['gdp_mu']['upper'] < 0.6239 and d['gdp_mu']['certified'] is True and
            d['gdp_mu']['source'] == 'bounded_loss'"
run epsilon --delta 1e-5 --gdp-mu --json '{"approx": {"epsilon": 1, "delta": 1e-9}}'
check "gdp_mu with a mass at +inf: no finite mu ("inf", "inf"), certified" \
    gdp_ok "d['gdp_mu']['lower'] == 'inf' and d['gdp_mu']['upper'] == 'inf' and d['gdp_mu']['certified'] is True and
            d['gdp_mu']['source'] == 'infinite'"
run epsilon --delta 1e-5 --gdp-mu --method phi --json "$GAUSS"
check "gdp_mu under phi: no bound (estimates only)" \
    gdp_ok "d['gdp_mu']['lower'] == 0 and d['gdp_mu']['upper'] == 'inf' and d['gdp_mu']['certified'] is False"
run epsilon --delta 1e-5 --method all "$TMP/dpsgd.json"
check "--method all prints no gdp_mu line" eval 'rc_is 0 && out_has "every method" && ! out_has "mu-GDP"'
run epsilon --delta 1e-5 --gdp-mu --method all "$TMP/dpsgd.json"
check "--gdp-mu with --method all is a usage error" eval 'rc_is 2 && err_has "--gdp-mu takes one method"'
run epsilon --delta 1e-5 --gdp-mu --format csv "$G3"
check "--gdp-mu with --format csv is a usage error" eval 'rc_is 2 && err_has "--gdp-mu has no CSV form"'
run delta --epsilon 1 --json "$GAUSS"
check "delta --json has no gdp_mu" json "'gdp_mu' not in d"
"$BIN" report -o "$TMP/r2.html" "$G3" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "report: the Gaussian DP section with the certified bracket" eval 'rc_is 0 &&
    grep -q "<h2>Gaussian differential privacy</h2>" "$TMP/r2.html" && grep -q "mu &le; 1" "$TMP/r2.html"'

# ---------------------------------------------------------------- labels --
NAMED='{"name": "pretraining", "repeat": {"count": 100, "event": {"gaussian": {"sigma": 10}}}}'
run epsilon --delta 1e-5 "$NAMED"
check "a labelled spec: the label echoed in text" eval 'rc_is 0 && out_has "spec: pretraining"'
run epsilon --delta 1e-5 --json '{"repeat": {"count": 100, "event": {"gaussian": {"sigma": 10}}}}'
unlabelled=$(python3 -c "import json; print(repr(json.load(open('$TMP/out'))['epsilon_upper']))")
run epsilon --delta 1e-5 --json "$NAMED"
check "a labelled spec: \"name\" in JSON, the same bounds as unlabelled" \
    json "d['name'] == 'pretraining' and d['epsilon_upper'] == $unlabelled"
run epsilon --delta 1e-5 '{"compose": [{"name": "fine-tune", "repeat": {"count": 0.5, "event": {"gaussian": {"sigma": 1}}}}]}'
check "a labelled event on an error path" eval 'rc_is 2 && grep -q "(\"fine-tune\")" "$TMP/err"'
run epsilon --delta 1e-5 '{"name": "", "gaussian": {"sigma": 1}}'
check "an empty label is refused with its path" eval 'rc_is 2 && grep -q "/name" "$TMP/err"'
run profile --from 0 --to 1 --points 3 --json '{"name": "x", "pure": {"epsilon": 1}}'
check "profile --json echoes the label" json "d['name'] == 'x'"

# ------------------------------------------------------- auto fallback --
PG='{"poisson": {"rate": 0.01, "event": {"gaussian": {"sigma": 1}}}}'
run epsilon --delta 1e-16 --json "$PG"
check "auto below pld's floor: a finite upper bound from rdp, said in JSON (true eps 3.30074)" \
    json "d['upper_source'] == 'rdp' and d['method'] == 'pld' and d['epsilon_lower'] <= 3.30073 and 3.30074 <= d['epsilon_upper'] < 3.7 and 'method rdp' in d['note']"
run epsilon --delta 1e-16 "$PG"
check "auto below pld's floor: the text says rdp answered" eval 'rc_is 0 && out_has "upper bound from method rdp" && ! out_has "epsilon <= inf"'
run epsilon --delta 1e-16 --method pld "$PG"
check "--method pld below its floor: +inf, says why and what to use" eval 'rc_is 0 && out_has "epsilon <= inf" &&
    out_has "floating-point allowance" && out_has "--method rdp"'

# ------------------------------------------------- gdp/clt quantities --
SR='{"repeat": {"count": 100, "event": {"poisson": {"rate": 0.001, "event": {"gaussian": {"sigma": 0.8}}}}}}'
run epsilon --delta 1e-8 --method gdp "$SR"
check "gdp outside the CLT regime: warning, CLT quantities and auto's certified check in text" eval 'rc_is 0 &&
    out_has "warning: outside the CLT regime (Berry-Esseen gamma = 0.704 > 0.05" && out_has "CLT: mu = 0.0193002" &&
    out_has "check: method auto (pld) certifies epsilon in [0.68445, 0.68455]: this estimate is 7.76 times below"'
run epsilon --delta 1e-8 --method gdp --json "$SR"
check "gdp --json: the clt object (kl, kappa2, kbar3, gamma, mu, limit, regime, check)" \
    json "d['clt']['clt_regime'] is False and d['clt']['gamma'][0] > 0.7 and abs(d['clt']['mu'] - 0.0193002) < 1e-7 and abs(d['clt']['limit_mu'] - 0.0194184) < 1e-7 and len(d['clt']['kl']) == 2 and d['clt']['check']['method'] == 'pld' and 7.7 < d['clt']['check']['ratio'] < 7.8 and d['clt']['check']['lower'] > d['epsilon_upper']"
run epsilon --delta 1e-5 --method clt --json "$SR"
check "clt --json: the clt object, no check" json "'check' not in d['clt'] and d['clt']['kbar3'][0] > 0 and d['clt']['kappa2'][0] > d['clt']['kl'][0] ** 2"
run epsilon --delta 1e-5 --method pld --json "$SR"
check "pld --json has no clt object" json "'clt' not in d"

run epsilon --delta 1e-5 --method gdp --json '{"no_op": {}}'
check "gdp check of an identity: estimate and bound 0, ratio 1" json "d['clt']['check']['ratio'] == 1 and d['epsilon_upper'] == 0"

# ------------------------------------------------------ loss tail (tail) --
# P(L > t) of one Gaussian, sigma 1: L ~ N(1/2, 1), P(L > 0.5) = 1/2 exactly;
# of the Poisson(0.01)-subsampled Gaussian, sigma 1, at t = 1: 2.42495e-8
# (docs/loss_tail.md §4, PRV's test_sf point t = 1)
run tail --loss 0.5 '{"gaussian": {"sigma": 1}}'
check "tail: the Gaussian's P(L > 0.5) = 1/2 bracketed, certified" eval 'rc_is 0 &&
    out_has "P(L > 0.5) in [0.4999999, 0.5000001]" && out_has "P(L <= 0.5) in [0.4999999, 0.5000001]" && out_has "(certified)"'
run tail --loss 1 --json "$PG"
check "tail --json: subsampled Gaussian at t = 1 (remove) brackets 2.42495013e-8" \
    json "d['direction'] == 'remove' and d['sf_lower'] <= 2.42495013e-8 <= d['sf_upper'] and d['sf_upper'] - d['sf_lower'] < 1e-8 and d['certified'] is True and abs(d['cdf_lower'] + d['sf_upper'] - 1) < 1e-15"
run tail --loss -0.5 --direction add --json "$PG"
check "tail --direction add at t = -0.5 brackets 0.99999861864" \
    json "d['direction'] == 'add' and d['sf_lower'] <= 0.9999986186406 <= d['sf_upper'] and d['sf_upper'] - d['sf_lower'] < 1e-7"
usage_error "tail without --loss" tail '{"gaussian": {"sigma": 1}}'
usage_error "tail --loss nan" tail --loss nan '{"gaussian": {"sigma": 1}}'
usage_error "tail --direction both" tail --loss 0 --direction both '{"gaussian": {"sigma": 1}}'

# ------------------------------------- representations (curve --kind pld|phi|lt) --
# delta of mu-GDP at mu = 1 (GDP Cor 2.13): delta(1) = Phi(-1/2) - e Phi(-3/2) = 0.126936737507445
run curve --kind pld "$GAUSS"
check "curve --kind pld: each measure's masses sum to 1 within its allowance; the bracket from the rows holds delta(1) of mu = 1" \
    eval 'rc_is 0 && python3 - "$TMP/out" <<'"'"'EOF'"'"'
import math, re, sys
meta, rows = {}, {}
for line in open(sys.argv[1]):
    if line.startswith("#"):
        k = tuple(line[2:line.index(":")].split())
        meta[k] = {a: b for a, b in (f.split("=") for f in line[line.index(":") + 1:].split())}
    elif not line.startswith("direction"):
        d, m, i, z, w = line.strip().split(",")
        rows.setdefault((d, m), []).append((float(z), float(w)))
assert set(meta) == {("both", "upper"), ("both", "lower")}, meta
ref, U = 0.126936737507445, 2.0 ** -53
for k, m in meta.items():
    n = int(m["n"]); pts = rows[k]
    assert len(pts) == n + 1 and pts[-1][0] == math.inf and float(m["inf"]) == pts[-1][1]
    tot = math.fsum(w for _, w in pts)
    assert abs(tot - 1) <= float(m["truncated_mass"]) + 4 * n * U + float(m["rel_err"]) + float(m["roundoff"]), tot
    s = math.fsum(w * -math.expm1(1 - z) for z, w in pts if z > 1)
    f = 2 * n * U + float(m["rel_err"])
    if k[1] == "upper": assert s * (1 + f) + float(m["tail_above"]) + float(m["roundoff"]) >= ref
    else: assert s * (1 - f) - float(m["truncated_mass"]) - float(m["roundoff"]) <= ref
EOF'
run curve --kind pld --json "$PG"
check "curve --kind pld --json: both directions of a subsampled Gaussian, masses as many as n" \
    json "[x['direction'] for x in d['directions']] == ['remove', 'add'] and all(len(x[k]['mass']) == x[k]['n'] and x[k]['certified'] for x in d['directions'] for k in ('upper', 'lower'))"
run curve --kind pld --direction add --json "$PG"
check "curve --kind pld --direction add: one direction" json "[x['direction'] for x in d['directions']] == ['add']"
# phi(t) of mu = 1: exp(i t/2 - t^2/2); at t = 1: 0.532280730215, 0.290786288212
run curve --kind phi --from 0 --to 1 --points 2 "$GAUSS"
check "curve --kind phi: the Gaussian's phi(1) within its certified error" eval 'rc_is 0 && python3 - "$TMP/out" <<'"'"'EOF'"'"'
import sys
lines = open(sys.argv[1]).read().split("\n")
assert lines[0] == "t,re_remove,im_remove,error_remove,re_add,im_add,error_add,error_certified"
t, re_, im, e, re2, im2, e2, c = lines[2].split(",")
assert t == "1" and c == "true" and float(e) < 1e-14
assert abs(float(re_) - 0.532280730215) < 1e-12 and abs(float(im) - 0.290786288212) < 1e-12 and (re_, im) == (re2, im2)
EOF'
run curve --kind lt --from 0 --to 2 --points 3 --json "$GAUSS"
check "curve --kind lt: the estimate (labelled) is delta of mu = 1, the bound certified above it" \
    json "d['kind'] == 'lt' and 'estimate' in d['estimate']['what'] and 'certified upper bound' in d['bound']['what'] and
          abs(d['points'][1]['delta_estimate'] - 0.126936737507445) < 1e-12 and
          all(p['delta_bound'] >= p['delta_estimate'] for p in d['points']) and
          not any('upper' in k or 'lower' in k for k in d['points'][0])"
run curve --kind lt --points 3 --json '{"randomized_response": {"epsilon": 1}}'
check "curve --kind lt of atoms: no estimate (null, with the reason), the bound" \
    json "d['estimate']['available'] is False and 'LT eq 37' in d['estimate']['note'] and d['points'][0]['delta_estimate'] is None and d['bound']['available'] is True"
usage_error "curve --kind pld --format svg" curve --kind pld --format svg "$GAUSS"
usage_error "curve --kind pld --from" curve --kind pld --from 1 "$GAUSS"
usage_error "curve --kind pld --method exact" curve --kind pld --method exact "$GAUSS"
usage_error "curve --kind phi --method pld" curve --kind phi --method pld "$GAUSS"
usage_error "curve --kind lt with two SPECs" curve --kind lt "$GAUSS" "$GAUSS"
usage_error "curve --direction with --kind profile" curve --direction add "$GAUSS"
usage_error "curve --kind bogus" curve --kind bogus "$GAUSS"
usage_error "curve --kind phi --title (a figure option)" curve --kind phi --title T "$GAUSS"
run curve --kind phi '{"zcdp": {"rho": 1}}'
check "curve --kind phi of zcdp: refused, naming rdp" eval '! rc_is 0 && err_prefixed && grep -q rdp "$TMP/err" && out_empty'
# ------------------------------------------- rdp: bounds no order attains --
# delta below an (eps, delta) step's own delta: +inf at every order (the
# text said "order nan"); identities: 0 at every order (the CLI called the
# missing order a library bug)
run epsilon --delta 1e-6 --method rdp '{"approx": {"epsilon": 1, "delta": 1e-3}}'
check "rdp: delta below the extra delta: +inf, no order, no nan" eval 'rc_is 0 &&
    out_has "epsilon <= inf" && out_has "method: rdp (no Renyi order gives a finite bound; " && ! grep -qi nan "$TMP/out"'
run epsilon --delta 1e-6 --method rdp '{"no_op": {}}'
check "rdp: identities: eps 0 at every order, exit 0" eval 'rc_is 0 && out_has "epsilon <= 0 " &&
    out_has "method: rdp (the same bound at every Renyi order; identical distributions" && ! grep -qi nan "$TMP/out"'
run delta --epsilon -0.5 --method rdp --json '{"pure": {"epsilon": 0}}'
check "rdp --json: identities at eps -0.5: delta 1 - e^-0.5, order null" \
    json "d['rdp_order'] is None and abs(d['delta_upper'] - 0.3934693402873666) < 1e-15 and d['delta_lower'] == d['delta_upper']"

finish
