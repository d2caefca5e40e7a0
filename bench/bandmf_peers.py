#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Amplified BandMF (cyclic Poisson participation, docs/bandmf.md): dpacct beside
jax_privacy's amplified_bandmf_event accounted by dp_accounting's PLD accountant.

For each run (64 bands of jax_privacy's default strategy, the coefficients of
(1 - x)^(-1/2) normalized to column norm 1, so both noise multipliers mean the
same): dpacct's bracket and time through `dpacct bandmf --json` (the whole
command: the leaf's upper bound, the attained instance's lower bound), the
bandmf leaf's own bracket through the Python binding, and the peer's epsilon
and time.

jax_privacy needs jax, which Debian lacks: when `jax_privacy.accounting` cannot
be imported, the event is built as its documented definition says
(accounting.py, amplified_bandmf_event: dpsgd_event(noise_multiplier,
sampling_prob, iterations=ceil(iterations / num_bands)), i.e.
SelfComposedDpEvent(PoissonSampledDpEvent(q, GaussianDpEvent(z)), ceil(n/b)))
and accounted with dp_accounting's PLD accountant directly; the output says
which.  Needs dp_accounting's source (bench/fetch-peers.sh: DIR/dp_accounting;
Debian's python3-numpy, -scipy, -attr, -absl); skips, with a message and exit
status 0, without it.

usage: /usr/bin/python3 bench/bandmf_peers.py [--peers DIR] [--dpacct BIN]
  DIR default $DPACCT_PEERS_DIR, else /tmp/dpacct-peers; BIN default build/dpacct.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
if "DPACCT_LIBRARY" not in os.environ and os.path.exists(os.path.join(ROOT, "build", "libdpacct.so")):
    os.environ["DPACCT_LIBRARY"] = os.path.join(ROOT, "build", "libdpacct.so")

# (bands, iterations, rate, noise multiplier, delta)
RUNS = [(64, 2000, 0.05, 1.0, 1e-6), (64, 2048, 0.05, 1.0, 1e-6), (16, 1000, 0.01, 0.8, 1e-5)]


def sqrt_coefficients(b):
    """`dpacct bandmf --bands b`: binom(2l, l) / 4^l, divided by the L2 norm
    (the same recurrence and order of operations as src/cli/bandmf.c)."""
    c = [1.0]
    for l in range(1, b):
        c.append(c[-1] * float(2 * l - 1) / float(2 * l))
    norm = math.sqrt(sum(x * x for x in c))
    return [x / norm for x in c]


def peer_event(dpa, z, n, b, q):
    """jax_privacy's amplified_bandmf_event, imported or rebuilt."""
    try:
        from jax_privacy import accounting as jpa
        return jpa.amplified_bandmf_event(z, n, num_bands=b, sampling_prob=q), "jax_privacy.amplified_bandmf_event"
    except Exception:  # jax missing: its documented definition
        return (dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(q, dpa.GaussianDpEvent(z)), math.ceil(n / b)),
                "rebuilt as jax_privacy documents it (jax_privacy not importable)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--peers", default=os.environ.get("DPACCT_PEERS_DIR", "/tmp/dpacct-peers"))
    ap.add_argument("--dpacct", default=os.path.join(ROOT, "build", "dpacct"))
    args = ap.parse_args()
    for sub in ("dp_accounting", "jax_privacy"):
        path = os.path.join(args.peers, sub)
        if os.path.isdir(path):
            sys.path.insert(0, path)
    try:
        import dp_accounting as dpa
    except Exception as e:
        print("bandmf_peers: skipped (dp_accounting not importable: %s: %s)" % (type(e).__name__, e))
        return
    import dpacct
    from dpacct import events as ev

    print("%-30s %-24s %7s %-24s %11s %7s" % ("run (b, n, q, z, delta)", "dpacct bandmf [lo, up]", "s",
                                              "leaf [lo, up]", "peer eps", "s"))
    sources = set()
    for b, n, q, z, delta in RUNS:
        t = time.perf_counter()
        out = subprocess.run([args.dpacct, "bandmf", "--bands", str(b), "--noise", repr(z), "--iterations", str(n),
                              "--rate", repr(q), "--delta", repr(delta), "--json"],
                             capture_output=True, text=True, check=True).stdout
        t_cli = time.perf_counter() - t
        cli = json.loads(out)
        leaf = dpacct.Accountant(ev.bandmf(sqrt_coefficients(b), z, n, rate=q), method="pld").epsilon(delta)
        event, source = peer_event(dpa, z, n, b, q)
        sources.add(source)
        t = time.perf_counter()
        acc = dpa.pld.PLDAccountant(dpa.NeighboringRelation.ADD_OR_REMOVE_ONE)
        acc.compose(event)
        peer = acc.get_epsilon(delta)
        t_peer = time.perf_counter() - t
        print("%-30s [%9.6f, %9.6f] %7.3f [%9.6f, %9.6f] %11.6f %7.3f"
              % ("(%d, %d, %g, %g, %g)" % (b, n, q, z, delta), cli["epsilon_lower"], cli["epsilon_upper"], t_cli,
                 leaf.lower, leaf.upper, peer, t_peer))
    print("\npeer event: %s; accounted by dp_accounting.pld.PLDAccountant (an estimate, not a bound)"
          % "; ".join(sorted(sources)))
    print("dpacct bandmf: the whole command (process start included); its lower bound is the attained instance's,")
    print("below the leaf's when b does not divide n (docs/bandmf.md section 3).")


if __name__ == "__main__":
    main()
