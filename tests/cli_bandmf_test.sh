#!/usr/bin/env bash
# Tests of `dpacct bandmf` (src/cli/bandmf.c, docs/bandmf.md): b = 1 is
# `dpacct dpsgd` with Poisson sampling (the same upper bound), fixed
# participation is the bandmf spec leaf read by `dpacct epsilon` (the same
# bracket), the Poisson bracket's lower bound is the attained instance's
# (below the leaf's when b does not divide n), --json fields, calibration
# of the noise, help, and errors (exit 2, the option or field named).
# SPDX-License-Identifier: GPL-3.0-or-later
#
# usage: bash tests/cli_bandmf_test.sh PATH/TO/dpacct SOURCE_DIR
set -u

. "$(dirname "$0")/test_lib.sh"
test_setup cli_bandmf_test "$@"
export DPACCT_WISDOM=$TMP/wisdom

json() { json_line "$TMP/out" "$1"; }
usage_error() {
    local name=$1 want=$2; shift 2
    run "$@"
    check "$name" eval 'rc_is 2 && [ ! -s "$TMP/out" ] && grep -q "^dpacct: " "$TMP/err" && err_has "$want"'
}

# b = 1: DP-SGD (q = 100/10000 = 0.01, 500 steps, noise 1.1)
run bandmf --coefficients 1 --noise 1.1 --iterations 500 --rate 0.01 --delta 1e-5 --json
cp "$TMP/out" "$TMP/b1"
run dpsgd --dataset-size 10000 --batch-size 100 --steps 500 --noise 1.1 --delta 1e-5 --json
check "b = 1: the upper bound of dpacct dpsgd" python3 -c '
import json, sys
a = json.load(open(sys.argv[1])); b = json.loads(open(sys.argv[2]).read().splitlines()[0])
assert a["epsilon_upper"] == b["epsilon_upper"], (a, b)
assert a["epsilon_lower"] <= a["epsilon_upper"] and a["rounds"] == 500 and a["sensitivity_upper"] == 1
' "$TMP/b1" "$TMP/out"

# fixed participation: the leaf's bracket, exactly
SPEC='{"bandmf": {"coefficients": [1, -0.5, 0.25], "noise_multiplier": 2, "iterations": 100, "participation": {"fixed": {"epochs": 4}}}}'
run epsilon --delta 1e-5 --json "$SPEC"
cp "$TMP/out" "$TMP/leaf"
run bandmf --coefficients 1,-0.5,0.25 --noise 2 --iterations 100 --epochs 4 --delta 1e-5 --json
check "fixed: the bracket of the spec leaf" python3 -c '
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
assert a["epsilon_upper"] == b["epsilon_upper"] and a["epsilon_lower"] == b["epsilon_lower"], (a, b)
assert a["separation"] == 3 and a["epochs"] == 4 and a["method"] == "exact"
assert abs(a["sensitivity_upper"] - 4 ** 0.5 * (1 + 0.25 + 0.0625) ** 0.5) < 1e-12
' "$TMP/out" "$TMP/leaf"

# Poisson with b not dividing n: the upper bound is the leaf's, the lower
# bound (the attained instance: 3 full rounds and one of c0 only) below the leaf's
SPEC='{"bandmf": {"coefficients": [1, 0.5], "noise_multiplier": 1, "iterations": 7, "participation": {"poisson": {"rate": 0.2}}}}'
run epsilon --delta 1e-6 --json "$SPEC"
cp "$TMP/out" "$TMP/leaf"
run bandmf --coefficients 1,0.5 --noise 1 --iterations 7 --rate 0.2 --delta 1e-6 --json
check "poisson: leaf's upper, instance's lower" python3 -c '
import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
assert a["epsilon_upper"] == b["epsilon_upper"] and a["epsilon_lower"] < b["epsilon_lower"], (a, b)
assert a["rounds"] == 4 and a["participation"] == "poisson"
' "$TMP/out" "$TMP/leaf"

# human output
run bandmf --bands 4 --noise 1 --iterations 40 --rate 0.1 --delta 1e-6
check "human output" eval 'rc_is 0 && out_has "(certified upper bound; claim this)" && out_has "BandMF: 4 bands, 40 iterations" && out_has "10 rounds of a Poisson-subsampled Gaussian"'

# calibration: the noise meets the target
run bandmf --bands 8 --iterations 200 --rate 0.05 --delta 1e-6 --epsilon 1.5 --json
check "calibration" json 'd["calibrated"] == "noise_multiplier" and d["epsilon_upper"] <= 1.5 and 0.5 < d["noise_multiplier"] < 5'

# help
run bandmf --help
check "help" eval 'rc_is 0 && out_has "Usage: dpacct bandmf"'
run help bandmf
check "dpacct help bandmf" eval 'rc_is 0 && out_has "--separation M"'

# errors
usage_error "no strategy" "--coefficients" bandmf --noise 1 --iterations 10 --rate 0.1 --delta 1e-5
usage_error "both participations" "--rate" bandmf --coefficients 1 --noise 1 --iterations 10 --rate 0.1 --epochs 2 --delta 1e-5
usage_error "bad coefficient list" "--coefficients" bandmf --coefficients 1,x --noise 1 --iterations 10 --rate 0.1 --delta 1e-5
usage_error "no delta" "--delta" bandmf --coefficients 1 --noise 1 --iterations 10 --rate 0.1
usage_error "c0 <= 0" "coefficients/0" bandmf --coefficients 0,1 --noise 1 --iterations 10 --rate 0.1 --delta 1e-5
usage_error "b > n" "b <= n" bandmf --coefficients 1,1,1 --noise 1 --iterations 2 --rate 0.1 --delta 1e-5
usage_error "separation < b" "separation" bandmf --coefficients 1,1,1 --noise 1 --iterations 20 --epochs 2 --separation 2 --delta 1e-5
usage_error "too many participations" "epochs" bandmf --coefficients 1,1 --noise 1 --iterations 5 --epochs 4 --delta 1e-5
usage_error "non-integer iterations" "iterations" bandmf --coefficients 1 --noise 1 --iterations 10.5 --rate 0.1 --delta 1e-5
usage_error "rate > 1" "rate" bandmf --coefficients 1 --noise 1 --iterations 10 --rate 1.5 --delta 1e-5
usage_error "unknown option" "--bogus" bandmf --coefficients 1 --noise 1 --bogus 1 --iterations 10 --rate 0.1 --delta 1e-5
usage_error "abbreviated option" "--nois" bandmf --coefficients 1 --nois 1 --iterations 10 --rate 0.1 --delta 1e-5
run bandmf --coefficients 0 --noise 1 --iterations 10 --rate 0.1 --delta 1e-5 --json
check "JSON error" eval 'rc_is 2 && [ ! -s "$TMP/out" ] && json_line "$TMP/err" "d[\"error\"][\"exit_status\"] == 2"'

finish
