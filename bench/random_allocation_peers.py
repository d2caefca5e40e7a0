#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Random allocation on the README run (docs/sampling.md §4): dpacct's certified bracket
and time against RA_PLD's gaussian_allocation_epsilon_range (Feldman & Shenfeld's PLD
accountant for random allocation, Python with numba).

usage: random_allocation_peers.py DPACCT_BINARY [RA_PLD_DIR] [DP_ACCOUNTING_DIR]

The README run: sigma 1.1, T = 235 steps per epoch, K = 1, 60 epochs, delta 1e-5.  dpacct
is run as a command (the whole process timed); RA_PLD, when RA_PLD_DIR (a checkout of
moshenfeld/RA_PLD) and its dependencies (numpy, scipy, numba, and dp_accounting from
DP_ACCOUNTING_DIR, default /tmp/dpacct-peers/dp_accounting) import, is timed in this
process, twice: its first call compiles its numba kernels (minutes), the second is its
steady cost.  Without them its rows say "skipped".  Prints one row per accountant:
eps upper, eps lower, width, seconds.

RA_PLD's default (adaptive refinement to ~10 % of eps) did not finish on the README run
in 90 minutes; with the environment variable RA_PLD_DISCRETIZATION=D1,D2,... it is run
instead at each fixed loss discretization D (its AllocationSchemeConfig, tail truncation
0.1 delta, the same split of delta as its own adaptive driver: upper at delta, lower at
0.9 delta), one PLD per direction, each timed (wall and CPU)."""
import json
import os
import subprocess
import sys
import time

SIGMA, T, K, EPOCHS, DELTA = 1.1, 235, 1, 60, 1e-5


def dpacct_row(binary):
    spec = {"repeat": {"count": EPOCHS, "event": {"random_allocation": {
        "steps": T, "selected": K, "event": {"gaussian": {"sigma": SIGMA}}}}}}
    t0 = time.perf_counter()
    out = subprocess.run([binary, "epsilon", "--json", "--delta", str(DELTA), json.dumps(spec)],
                         check=True, capture_output=True, text=True).stdout
    dt = time.perf_counter() - t0
    r = json.loads(out)
    return r["epsilon_upper"], r["epsilon_lower"], dt


def ra_pld_rows(ra_dir, dpa_dir):
    if not ra_dir or not os.path.isdir(ra_dir):
        return None, "RA_PLD not found"
    sys.path[:0] = [ra_dir, dpa_dir]
    try:
        from PLD_accounting.random_allocation_api import gaussian_allocation_epsilon_range
    except Exception as e:  # a missing dependency: say which
        return None, "RA_PLD does not import: %s" % e
    rows = []
    fixed = os.environ.get("RA_PLD_DISCRETIZATION")
    if fixed:
        from PLD_accounting.random_allocation_api import gaussian_allocation_PLD
        from PLD_accounting.types import AllocationSchemeConfig, PrivacyParams, BoundType
        p = PrivacyParams(sigma=SIGMA, num_steps=T, num_selected=K, num_epochs=EPOCHS, delta=DELTA)
        tail = 0.1 * DELTA
        for d in (float(x) for x in fixed.split(",")):
            cfg = AllocationSchemeConfig(loss_discretization=d, tail_truncation=tail)
            eps, wall, cpu = [], 0.0, 0.0
            for bt, at in ((BoundType.DOMINATES, DELTA), (BoundType.IS_DOMINATED, DELTA - tail)):
                t0, c0 = time.perf_counter(), time.process_time()
                pld = gaussian_allocation_PLD(params=p, config=cfg, bound_type=bt)
                eps.append(float(pld.get_epsilon_for_delta(at)))
                wall += time.perf_counter() - t0
                cpu += time.process_time() - c0
            rows.append(("RA_PLD (discretization %g)" % d, eps[0], eps[1], wall))
            print("  RA_PLD discretization %g: %.1f s CPU" % (d, cpu))
        return rows, ""
    for label in ("RA_PLD (first call, compiles)", "RA_PLD (second call)"):
        t0 = time.perf_counter()
        up, lo = gaussian_allocation_epsilon_range(DELTA, SIGMA, T, K, EPOCHS)
        rows.append((label, up, lo, time.perf_counter() - t0))
    return rows, ""


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = sys.argv[1]
    ra_dir = sys.argv[2] if len(sys.argv) > 2 else ""
    dpa_dir = sys.argv[3] if len(sys.argv) > 3 else "/tmp/dpacct-peers/dp_accounting"
    print("random allocation: sigma %g, T %d, K %d, %d epochs, delta %g" % (SIGMA, T, K, EPOCHS, DELTA))
    print("%-32s %10s %10s %10s %9s" % ("accountant", "eps upper", "eps lower", "width", "seconds"))
    up, lo, dt = dpacct_row(binary)
    print("%-32s %10.5f %10.5f %10.2e %9.3f" % ("dpacct (pld, certified)", up, lo, up - lo, dt))
    rows, why = ra_pld_rows(ra_dir, dpa_dir)
    if rows is None:
        print("%-32s skipped: %s" % ("RA_PLD", why))
        return
    for label, u, l, t in rows:
        print("%-32s %10.5f %10.5f %10.2e %9.3f" % (label, u, l, u - l, t))


if __name__ == "__main__":
    main()
