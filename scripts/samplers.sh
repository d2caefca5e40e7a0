#!/usr/bin/env bash
# The README's DP-SGD run (60000 examples, batch 256, 60 epochs, noise
# multiplier 1.1) at delta 1e-5 under each batch sampler, side by side: the
# certified bracket `dpacct dpsgd --sampling S` prints and what it certifies
# (docs/training.md).  Usage: scripts/samplers.sh [DPACCT_BINARY] [DELTA]
# SPDX-License-Identifier: GPL-3.0-or-later
set -eu
BIN=${1:-build/dpacct}
DELTA=${2:-1e-5}
RUN="--dataset-size 60000 --batch-size 256 --epochs 60 --noise 1.1 --delta $DELTA"
printf '%-20s %-10s %-7s %-18s %s\n' sampling neighbours steps "epsilon bracket" "what the bracket is"
for s in poisson without_replacement random_allocation shuffle; do
    # shellcheck disable=SC2086
    "$BIN" dpsgd $RUN --sampling "$s" --json | python3 -c '
import json, sys
from decimal import Decimal, ROUND_CEILING, ROUND_FLOOR
d = json.load(sys.stdin)
q = Decimal("0.0001")  # upper bound rounded up, lower bound down, exactly
up = Decimal(d["epsilon_upper"]).quantize(q, ROUND_CEILING)
lo = Decimal(d["epsilon_lower"]).quantize(q, ROUND_FLOOR)
what = {
    "poisson": "both ends certified for the exact pair",
    "without_replacement": "both ends certified for the exact pair",
    "random_allocation": "both ends certified for the exact pair",
    "shuffle": "upper: no amplification; lower: one pair of datasets",
}[d["sampling"]]
print("%-20s %-10s %-7d %-18s %s" % (d["sampling"], d["neighboring"].replace("add_remove", "add/remove"),
      d["steps"], "[%s, %s]" % (lo, up), what))
'
done
