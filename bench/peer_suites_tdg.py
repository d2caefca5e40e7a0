#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""dp_accounting's truncated discrete Gaussian expectations run through dpacct
(issue 26; the lead calls cases() from bench/peer_suites.py's main()).

Recognized (dp_accounting/pld/privacy_loss_mechanism_test.py):
  test_discrete_gaussian_get_delta_for_epsilon and its _vectorized twin: one
    DiscreteGaussianPrivacyLoss(sigma, sensitivity, truncation_bound T,
    sampling_prob q, ADD or REMOVE) and delta(epsilon) to 7 places (48
    numbers).  dpacct: {"discrete_gaussian": {..., "truncation": T}} (under
    {"poisson": {"rate": q}} when q < 1; its remove direction is the peer's
    REMOVE, its add direction the peer's ADD, docs/mechanisms.md §8).  The
    peer's value is the mechanism's exact delta: "exact" when dpacct's
    certified bracket (the larger direction) holds it within the 7 places; for
    the smaller direction of a q < 1 row dpacct's per-direction value is an
    upper bound only, so "consistent" when it is within the 7 places plus the
    query's bracket width of the peer's value (and never below it by more).
  test_discrete_gaussian_from_privacy_parameters: sigma found by the peer's
    search (3 places) for (epsilon, delta) with its default truncation
    ceil(11.6 sigma) and REMOVE (the peer always searches REMOVE, which binds
    for epsilon > 0), 15 numbers.  "consistent" when dpacct's certified
    sigma for truncation ceil(11.6 sd) is at least sd - 5e-4 and, at sd + 1e-3
    with its own truncation ceil(11.6 (sd + 1e-3)), dpacct's certified remove
    delta meets the target (the peer's sigma, rounded up, is certified).
    With T fixed delta is not monotone in sigma, and calibrate's search from
    sigma = 1 can miss a feasible region of small sigma (epsilon 16, sd 0.306):
    then "consistent" when dpacct certifies sd - 1e-3 infeasible and sd + 1e-3
    feasible.
dp_accounting/pld/privacy_loss_distribution_test.py:
  test_discrete_gaussian_truncation: the pessimistic PLD of sigma 1,
    sensitivity 1, truncation 2 and 3 (grid 1e-4: the losses +-0.5, +-1.5,
    +-2.5 lie on it, so the masses are exact) and its infinity mass, 7 places
    (12 numbers): "exact" when dpacct's certified P(L > w - 1/4) - P(L > w +
    1/4) bracket (Accountant.loss_tail) holds each mass, P(L > 100) the
    infinity mass.
Skips (no error) when the source is absent.

usage: python3 bench/peer_suites_tdg.py [--peers DIR] [--verbose]
"""
import ast
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from peer_suites import Tally, call_name, classify  # noqa: E402  (sets up dpacct's path)

TOL = 0.5e-7  # assertAlmostEqual's default 7 places
MECH = os.path.join("dp_accounting", "pld", "privacy_loss_mechanism_test.py")
DIST = os.path.join("dp_accounting", "pld", "privacy_loss_distribution_test.py")


def _dg(sigma, s, t, q):
    leaf = {"discrete_gaussian": {"sigma": sigma, "sensitivity": s, "truncation": t}}
    return {"poisson": {"rate": q, "event": leaf}} if q < 1 else leaf


def _rows(fn, path):
    env = {"ADD": "ADD", "REM": "REM", "math": math}
    for d in fn.decorator_list:
        if isinstance(d, ast.Call) and call_name(d) == "parameters":
            for a in d.args:
                try:
                    yield a.lineno, eval(compile(ast.Expression(a), path, "eval"), {"__builtins__": {}}, env)
                except Exception:
                    continue


def _cover(tally, path, name):
    cover = getattr(tally, "cover", None)
    if cover:
        cover(path, name)


def _delta_rows(dpacct, tally, fn, path, rel):
    for line, row in _rows(fn, path):
        sd, s, t, q, adj, eps, want = row
        where = "dp_accounting/%s:%d %s" % (rel, line, fn.name)
        pts = list(zip(eps, want)) if isinstance(eps, list) else [(eps, want)]
        for e, v in pts:
            what = "delta(%g) of sigma %g, s %g, T %g, q %g, %s" % (e, sd, s, t, q, adj)
            try:
                with dpacct.Accountant(_dg(sd, s, t, q)) as acc:
                    r = acc.delta(e)
            except Exception as ex:
                classify(tally, where, "exact", v, TOL, None, "%s: %s" % (type(ex).__name__, ex), what)
                continue
            mine = r.upper_remove if adj == "REM" else r.upper_add
            if mine == r.upper or q == 1:  # this direction binds: the bracket is its own
                classify(tally, where, "exact", v, TOL, r.lower, r.upper, what)
                continue
            ok = v <= mine + TOL and mine - v <= TOL + (r.upper - r.lower)
            tally.add("consistent" if ok else "disagree", where,
                      "%s = %r, dpacct's %s upper bound %r (bracket width %.1e)"
                      % (what, v, "remove" if adj == "REM" else "add", mine, r.upper - r.lower))


def _calibration_rows(dpacct, tally, fn, path, rel):
    for line, row in _rows(fn, path):
        s, q, adj, eps, delta, sd = row
        where = "dp_accounting/%s:%d %s" % (rel, line, fn.name)
        what = "sigma ~ %r (s %g, q %g, %s, eps %g, delta %g)" % (sd, s, q, adj, eps, delta)
        try:
            up, down = sd + 1e-3, sd - 1e-3
            with dpacct.Accountant(_dg(up, s, math.ceil(11.6 * up), q)) as acc:
                rem = acc.delta(eps).upper_remove
            try:
                cal = dpacct.calibrate(_dg("?", s, math.ceil(11.6 * sd), q), eps, delta)
            except dpacct.DpacctError as ex:
                # with T fixed, delta is not monotone in sigma (it tends to
                # s / (2T + 1)): the search from sigma = 1 may miss a feasible
                # region of small sigma.  Then the two-point check: the peer's
                # sigma - 1e-3 is certified infeasible (dpacct's lower bound
                # of the binding direction exceeds the target), + 1e-3 feasible.
                with dpacct.Accountant(_dg(down, s, math.ceil(11.6 * down), q)) as acc:
                    lo = acc.delta(eps).lower
                ok = rem <= delta < lo
                tally.add("consistent" if ok else "disagree", where,
                          "%s: dpacct's calibrate refused (%s); delta at -1e-3 >= %r, at +1e-3 <= %r"
                          % (what, str(ex).split(":")[0], lo, rem))
                continue
        except Exception as ex:
            classify(tally, where, "estimate", sd, 0, None, "%s: %s" % (type(ex).__name__, ex), "sigma")
            continue
        ok = cal.value >= sd - 5e-4 and rem <= delta
        tally.add("consistent" if ok else "disagree", where,
                  "%s: dpacct certified %r, remove delta at +1e-3 %r" % (what, cal.value, rem))


def _pmf_rows(dpacct, tally, fn, path, rel):
    for line, row in _rows(fn, path):
        t, pmf, inf_mass = row
        where = "dp_accounting/%s:%d %s" % (rel, line, fn.name)
        try:
            with dpacct.Accountant(_dg(1.0, 1, t, 1.0), "pld") as acc:
                for k, v in sorted(pmf.items()):
                    w = k * 1e-4
                    a, b = acc.loss_tail(w - 0.25), acc.loss_tail(w + 0.25)
                    classify(tally, where, "exact", v, TOL, a["sf_lower"] - b["sf_upper"],
                             a["sf_upper"] - b["sf_lower"], "PLD mass at %g (T %d)" % (w, t))
                z = acc.loss_tail(100.0)
                classify(tally, where, "exact", inf_mass, TOL, z["sf_lower"], z["sf_upper"],
                         "PLD infinity mass (T %d)" % t)
        except Exception as ex:
            classify(tally, where, "exact", inf_mass, TOL, None, "%s: %s" % (type(ex).__name__, ex), "PLD")


def cases(peers_dir, tally):
    """Run the truncated discrete Gaussian expectations found under
    peers_dir (the directory holding dp_accounting/, e.g.
    /tmp/dpacct-peers/dp_accounting) into tally; nothing if absent."""
    import dpacct
    if os.path.isdir(os.path.join(peers_dir, "dp_accounting", "dp_accounting")):
        peers_dir = os.path.join(peers_dir, "dp_accounting")  # the --peers directory of peer_suites.py
    handlers = {
        MECH: {"test_discrete_gaussian_get_delta_for_epsilon": _delta_rows,
               "test_discrete_gaussian_get_delta_for_epsilon_vectorized": _delta_rows,
               "test_discrete_gaussian_from_privacy_parameters": _calibration_rows},
        DIST: {"test_discrete_gaussian_truncation": _pmf_rows},
    }
    for rel, fns in handlers.items():
        path = os.path.abspath(os.path.join(peers_dir, rel))
        if not os.path.exists(path):
            continue
        tree = ast.parse(open(path, encoding="utf-8").read())
        for fn in ast.walk(tree):
            if isinstance(fn, ast.FunctionDef) and fn.name in fns:
                fns[fn.name](dpacct, tally, fn, path, rel)
                _cover(tally, path, fn.name)


def main():
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--peers", default=os.environ.get("DPACCT_PEERS_DIR", "/tmp/dpacct-peers"))
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    src = os.path.join(a.peers, "dp_accounting")
    if not os.path.isdir(src):
        print("peer_suites_tdg: skipped (no dp_accounting source under %s)" % a.peers)
        return 0
    tally = Tally(a.verbose)
    cases(src, tally)
    for cls in ("exact", "consistent", "disagree", "inexpressible"):
        print("  %-13s %d" % (cls, tally.counts.get(cls, 0)))
    return 1 if tally.counts.get("disagree") else 0


if __name__ == "__main__":
    sys.exit(main())
