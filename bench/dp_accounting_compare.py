#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""dpacct's drop-in (dpacct.dp_accounting) beside dp_accounting's own accountants.

A few DpEvents are composed into dpacct.dp_accounting.PLDAccountant (the
certified bracket [lower, upper]; get_epsilon returns upper) and into
dp_accounting's PLDAccountant and RDPAccountant (estimates; RDP is an
upper bound), with the time of each.  Then calibrate_dp_mechanism drives
both PLD accountants on jax_privacy's DP-SGD example (noise multiplier for
epsilon 1 at delta 1e-6, 512 steps at q = 0.1).

Needs dp_accounting's source (bench/fetch-peers.sh: DIR/dp_accounting;
Debian's python3-numpy, -scipy, -attr, -absl, -typing-extensions); skips,
with a message and exit status 0, without it.

usage: python3 bench/dp_accounting_compare.py [--peers DIR]
  DIR default $DPACCT_PEERS_DIR, else /tmp/dpacct-peers.
"""
import argparse
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
if "DPACCT_LIBRARY" not in os.environ and os.path.exists(os.path.join(ROOT, "build", "libdpacct.so")):
    os.environ["DPACCT_LIBRARY"] = os.path.join(ROOT, "build", "libdpacct.so")


def cases(dpa):
    g = dpa.GaussianDpEvent
    return [
        ("dpsgd: 14063 x Poisson(256/60000) Gaussian(1.1)", 1e-5, "add_remove",
         dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(256 / 60000, g(1.1)), 14063)),
        ("1000 x Poisson(0.01) Gaussian(0.8)", 1e-6, "add_remove",
         dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.01, g(0.8)), 1000)),
        ("100 x Laplace(scale 20)", 1e-6, "add_remove",
         dpa.SelfComposedDpEvent(dpa.LaplaceDpEvent(20.0), 100)),
        ("50 x Gaussian(10) + 20 x RR(p 0.5, k 2)", 1e-6, "replace",
         dpa.ComposedDpEvent([dpa.SelfComposedDpEvent(g(10.0), 50),
                              dpa.SelfComposedDpEvent(dpa.RandomizedResponseDpEvent(0.5, 2), 20)])),
        ("200 x without replacement (10000, 100) Gaussian(1)", 1e-6, "replace",
         dpa.SelfComposedDpEvent(dpa.SampledWithoutReplacementDpEvent(10000, 100, g(1.0)), 200)),
    ]


def timed(make, event, delta):
    t = time.perf_counter()
    try:
        acc = make()
        acc.compose(event)
        eps = acc.get_epsilon(delta)
    except Exception as e:  # a peer refusing the event
        return None, "refused", time.perf_counter() - t
    return acc, eps, time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--peers", default=os.environ.get("DPACCT_PEERS_DIR", "/tmp/dpacct-peers"))
    args = ap.parse_args()
    path = os.path.join(args.peers, "dp_accounting")
    if os.path.isdir(path):
        sys.path.insert(0, path)
    try:
        import dp_accounting as dpa
    except Exception as e:
        print("dp_accounting_compare: skipped (dp_accounting not importable: %s: %s)"
              % (type(e).__name__, e))
        return
    from dpacct import dp_accounting as mine
    rel = {"add_remove": dpa.NeighboringRelation.ADD_OR_REMOVE_ONE,
           "replace": dpa.NeighboringRelation.REPLACE_ONE}
    print("%-62s %-6s %21s %9s %11s %9s %11s %9s"
          % ("event", "delta", "dpacct [lower, upper]", "ms", "dpa PLD", "ms", "dpa RDP", "ms"))
    for name, delta, nb, event in cases(dpa):
        r = rel[nb]
        acc, up, t_m = timed(lambda: mine.PLDAccountant(r), event, delta)
        if acc is None:
            mine_txt = "%21s" % up
        else:
            lo, up = acc.get_epsilon_bracket(delta)
            mine_txt = "[%9.6f, %9.6f]" % (lo, up)
        _, pld, t_p = timed(lambda: dpa.pld.PLDAccountant(r), event, delta)
        _, rdp, t_r = timed(lambda: dpa.rdp.RdpAccountant(neighboring_relation=r), event, delta)

        def fmt(x):
            return "%11.6f" % x if isinstance(x, float) and math.isfinite(x) else "%11s" % x[:11]

        print("%-62s %-6g %s %9.1f %s %9.1f %s %9.1f"
              % (name + " (" + nb + ")", delta, mine_txt, 1e3 * t_m, fmt(pld), 1e3 * t_p, fmt(rdp),
                 1e3 * t_r))

    def make_event(sigma):
        return dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.1, dpa.GaussianDpEvent(sigma)), 512)

    print("\ncalibrate_dp_mechanism: noise multiplier for epsilon 1 at delta 1e-6, 512 x Poisson(0.1)")
    for label, cls in (("dpacct.dp_accounting.PLDAccountant", mine.PLDAccountant),
                       ("dp_accounting.pld.PLDAccountant", dpa.pld.PLDAccountant)):
        t = time.perf_counter()
        sigma = dpa.calibrate_dp_mechanism(cls, make_event, 1.0, 1e-6)
        dt = time.perf_counter() - t
        check = mine.PLDAccountant().compose(make_event(sigma)).get_epsilon(1e-6)
        print("  %-36s sigma = %.6f  (%.2f s; dpacct's certified epsilon there: %.6f)"
              % (label, sigma, dt, check))


if __name__ == "__main__":
    main()
