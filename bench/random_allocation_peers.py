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
eps upper, eps lower, width, seconds."""
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
