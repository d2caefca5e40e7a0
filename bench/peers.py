#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run the dpacct benchmark cases (bench/bench.c) through other accountants.

Peers (their sources are not part of dpacct; see bench/README.md to fetch them):

  dp_accounting.pld  Google dp_accounting, PLD accountant (PLDAccountant where it
                     takes the events, else the privacy_loss_distribution API)
  dp_accounting.rdp  Google dp_accounting, RdpAccountant
  prv_accountant     Microsoft prv_accountant, PRVAccountant
  autodp.rdp         autodp, RDP-based Mechanism API
  opacus.rdp         Opacus RDP analysis (opacus/accountants/analysis/rdp.py, loaded
                     on its own: needs numpy and scipy only, not torch)
  opacus.prv         Opacus PRVAccountant (imports the opacus package: needs torch)
  exact              closed form for compositions of finite-outcome pairs
                     (randomized response, pure, approx, optionally Poisson
                     subsampled); needs nothing but Python

Every (case, peer) job runs in its own Python process with a time limit; the
reported times exclude imports (they cover building the peer's objects,
composing and answering the query).  A peer whose source directory or Python
dependencies are missing is skipped with a message; the script still exits 0.

The cases come from the bench binary (--bench PATH: `bench --specs`) or, without
it, from the copy below, which must stay in step with bench/bench.c.
"""

import argparse
import json
import math
import os
import subprocess
import sys
import time

DEFAULT_PEERS_DIR = "/tmp/dpacct-peers"
PEERS = ["dp_accounting.pld", "dp_accounting.rdp", "prv_accountant", "autodp.rdp",
         "opacus.rdp", "opacus.prv", "exact"]

# ---------------------------------------------------------------- the cases


def _hetero(n, rate, step):
    return json.dumps({"compose": [
        {"poisson": {"rate": rate, "event": {"gaussian": {"sigma": 1 + step * i}}}}
        for i in range(n)]})


_MIXTURE21 = json.dumps({"compose": [
    {"repeat": {"count": 100, "event": {"gaussian": {"sigma": 40}}}},
    {"gaussian": {"sigma": 50, "sensitivity": 2}},
    {"repeat": {"count": 50, "event": {"laplace": {"scale": 400}}}},
    {"repeat": {"count": 3, "event": {"laplace": {"scale": 20, "sensitivity": 0.5}}}},
    {"repeat": {"count": 20, "event": {"discrete_laplace": {"scale": 100}}}},
    {"repeat": {"count": 5, "event": {"discrete_laplace": {"scale": 30, "sensitivity": 2}}}},
    {"repeat": {"count": 30, "event": {"discrete_gaussian": {"sigma": 30}}}},
    {"repeat": {"count": 10, "event": {"discrete_gaussian": {"sigma": 40, "sensitivity": 3}}}},
    {"repeat": {"count": 20, "event": {"randomized_response": {"epsilon": 0.05}}}},
    {"randomized_response": {"p": 0.55}},
    {"repeat": {"count": 10, "event": {"pure": {"epsilon": 0.02}}}},
    {"repeat": {"count": 10, "event": {"approx": {"epsilon": 0.05, "delta": 1e-9}}}},
    {"repeat": {"count": 10, "event": {"gdp": {"mu": 0.05}}}},
    {"repeat": {"count": 1000, "event": {"poisson": {"rate": 0.01, "event": {"gaussian": {"sigma": 1.5}}}}}},
    {"repeat": {"count": 3000, "event": {"poisson": {"rate": 0.001, "event": {"gaussian": {"sigma": 0.7}}}}}},
    {"repeat": {"count": 200, "event": {"poisson": {"rate": 0.02, "event": {"laplace": {"scale": 2}}}}}},
    {"repeat": {"count": 100, "event": {"poisson": {"rate": 0.02, "event": {"randomized_response": {"epsilon": 1}}}}}},
    {"repeat": {"count": 100, "event": {"poisson": {"rate": 0.1, "event": {"discrete_gaussian": {"sigma": 5}}}}}},
    {"repeat": {"count": 100, "event": {"poisson": {"rate": 0.03, "event": {"pure": {"epsilon": 0.5}}}}}},
    {"repeat": {"count": 50, "event": {"poisson": {"rate": 0.05, "event": {"discrete_laplace": {"scale": 2}}}}}},
    {"repeat": {"count": 100, "event": {"poisson": {"rate": 0.01, "event": {"approx": {"epsilon": 0.2, "delta": 1e-8}}}}}},
]})

_DPSGD = ('{"repeat": {"count": 14063, "event": {"poisson": {"rate": 0.0042666667, '
          '"event": {"gaussian": {"sigma": %s}}}}}}')

# (id, query, arg, target_eps, json): query "epsilon" (arg = delta), "delta"
# (arg = eps) or "calibrate" (arg = delta, target_eps = the eps target)
BUILTIN_CASES = [
    ("dpsgd", "epsilon", 1e-5, 0.0, _DPSGD % "1.1"),
    ("steps1e6", "epsilon", 1e-6, 0.0,
     '{"repeat": {"count": 1000000, "event": {"poisson": {"rate": 0.001, '
     '"event": {"gaussian": {"sigma": 0.8}}}}}}'),
    ("hetero1000", "epsilon", 1e-5, 0.0, _hetero(1000, 0.01, 0.001)),
    ("rr-delta", "delta", 42.97, 0.0,
     '{"repeat": {"count": 100, "event": {"poisson": {"rate": 0.1, '
     '"event": {"randomized_response": {"epsilon": 5}}}}}}'),
    ("rr-tiny", "epsilon", 1e-10, 0.0,
     '{"poisson": {"rate": 1e-9, "event": {"randomized_response": {"epsilon": 20}}}}'),
    ("laplace1e6", "epsilon", 1e-5, 0.0,
     '{"repeat": {"count": 1000000, "event": {"laplace": {"scale": 1000}}}}'),
    ("mixture21", "epsilon", 1e-6, 0.0, _MIXTURE21),
    ("calibrate", "calibrate", 1e-5, 1.0, _DPSGD % '"?"'),
    ("hetero100", "epsilon", 1e-5, 0.0, _hetero(100, 0.01, 0.01)),
]


def cases_from_bench(binary):
    out = subprocess.run([binary, "--specs"], check=True, capture_output=True, text=True).stdout
    cases = []
    for line in out.splitlines():
        cid, query, arg, target, spec = line.split("\t", 4)
        if query == "tradeoff":
            continue  # no peer draws a tradeoff curve from a composition
        cases.append((cid, query, float(arg), float(target), spec))
    return cases


# ------------------------------------------------------- spec -> flat items

class Unsupported(Exception):
    """The peer cannot evaluate this spec (reported as n/a)."""


def leaf_of(obj):
    """(kind, params) of a leaf event object; RR given by p is converted to epsilon."""
    (kind, params), = obj.items()
    params = dict(params)
    if kind == "randomized_response" and "p" in params:
        p = params.pop("p")
        params["epsilon"] = math.log(p / (1 - p))
    return kind, params


def flatten(obj, mult=1, rate=None, out=None):
    """A spec as a list of items [kind, params, rate (None: not subsampled), count],
    in spec order; `repeat` multiplies counts, `poisson` must wrap a leaf (or a
    repeat of a leaf, which is a repeat of subsampled leaves)."""
    if out is None:
        out = []
    obj = {k: v for k, v in obj.items() if k != "neighboring"}
    (kind, val), = obj.items()
    if kind == "compose":
        for e in val:
            flatten(e, mult, rate, out)
    elif kind == "repeat":
        flatten(val["event"], mult * int(val["count"]), rate, out)
    elif kind == "poisson":
        if rate is not None:
            raise Unsupported("nested subsampling")
        inner = val["event"]
        if "compose" in inner:
            raise Unsupported("subsampling of a composition")
        flatten(inner, mult, val["rate"], out)
    elif kind == "sample":
        raise Unsupported("sampling without replacement")
    else:
        k, params = leaf_of(obj)
        out.append([k, params, rate, mult])
    return out


def spec_items(spec_json):
    spec = json.loads(spec_json)
    if spec.get("neighboring", "add_remove") != "add_remove":
        raise Unsupported("replace-one neighbouring")
    return flatten(spec)


def instantiate(template_json, value):
    """The template with its "?" replaced by value."""
    def sub(x):
        if x == "?":
            return value
        if isinstance(x, dict):
            return {k: sub(v) for k, v in x.items()}
        if isinstance(x, list):
            return [sub(v) for v in x]
        return x
    return json.dumps(sub(json.loads(template_json)))


def rr_outcomes(eps, delta=0.0):
    """The (eps, delta) randomized-response pair (A, B) as a list of outcomes
    (mass under A, mass under B): the dominating pair of pure/approx DP and the
    pair of binary randomized response (delta = 0)."""
    pa = (1 - delta) / (1 + math.exp(-eps))
    pb = (1 - delta) / (1 + math.exp(eps))
    outs = [(pa, pb), (pb, pa)]
    if delta > 0:
        outs += [(delta, 0.0), (0.0, delta)]
    return outs


def subsample_outcomes(outs, q):
    """Poisson subsampling, remove direction: (q A + (1 - q) B, B)."""
    return [(q * a + (1 - q) * b, b) for a, b in outs]


def finite_pair(kind, params):
    if kind in ("randomized_response", "pure"):
        return rr_outcomes(params["epsilon"])
    if kind == "approx":
        return rr_outcomes(params["epsilon"], params["delta"])
    raise Unsupported("unsupported: " + kind)


# ---------------------------------------------------------------- the peers
# Each peer function takes (case, peers_dir) and returns a callable `run()` that
# does the work to be timed and returns a dict {value, lower?, upper?, note?}.


class Skip(Exception):
    """The peer's source or a Python dependency is missing."""


def _import_path(peers_dir, pkg, *subdirs):
    root = None
    for sub in subdirs:
        cand = os.path.join(peers_dir, sub)
        if os.path.isfile(os.path.join(cand, pkg, "__init__.py")):
            root = cand
            break
    if root is None:
        raise Skip("source not found (looked for %s)" %
                   ", ".join(os.path.join(peers_dir, s, pkg) for s in subdirs))
    sys.path.insert(0, root)
    return root


def _need(*modules):
    import importlib
    for m in modules:
        try:
            importlib.import_module(m)
        except ImportError as e:
            raise Skip("Python module %s missing (%s)" % (m, e))


# --- Google dp_accounting

def _dpa_event(items, dp_event):
    """A DpEvent for the items (whether an accountant takes it is its `supports`)."""
    events = []
    for kind, p, q, count in items:
        if kind == "gaussian":
            ev = dp_event.GaussianDpEvent(p["sigma"] / p.get("sensitivity", 1))
        elif kind == "gdp":
            ev = dp_event.GaussianDpEvent(1 / p["mu"])
        elif kind == "laplace":
            ev = dp_event.LaplaceDpEvent(p["scale"] / p.get("sensitivity", 1))
        elif kind == "discrete_laplace":
            ev = dp_event.DiscreteLaplaceDpEvent(1 / p["scale"], int(p.get("sensitivity", 1)))
        elif kind == "discrete_gaussian":
            ev = dp_event.DiscreteGaussianDpEvent(p["sigma"], p.get("sensitivity", 1), dimension=1)
        elif kind in ("randomized_response", "pure"):
            ev = dp_event.EpsilonDeltaDpEvent(p["epsilon"], 0.0)
        elif kind == "approx":
            ev = dp_event.EpsilonDeltaDpEvent(p["epsilon"], p["delta"])
        else:
            raise Unsupported("unsupported: " + kind)
        if q is not None:
            ev = dp_event.PoissonSampledDpEvent(q, ev)
        events.append(ev if count == 1 else dp_event.SelfComposedDpEvent(ev, count))
    return events[0] if len(events) == 1 else dp_event.ComposedDpEvent(events)


def _dpa_pld_items(items, pld_mod, common):
    """The composed PLD of the items through the privacy_loss_distribution API."""
    PLD = pld_mod
    total = None
    for kind, p, q, count in items:
        s = 1.0 if q is None else q
        sens = p.get("sensitivity", 1)
        if kind == "gaussian":
            one = PLD.from_gaussian_mechanism(p["sigma"], sensitivity=sens, sampling_prob=s)
        elif kind == "gdp":
            one = PLD.from_gaussian_mechanism(1 / p["mu"], sampling_prob=s)
        elif kind == "laplace":
            one = PLD.from_laplace_mechanism(p["scale"], sensitivity=sens, sampling_prob=s)
        elif kind == "discrete_laplace":
            one = PLD.from_discrete_laplace_mechanism(1 / p["scale"], sensitivity=int(sens), sampling_prob=s)
        elif kind == "discrete_gaussian":
            one = PLD.from_discrete_gaussian_mechanism(p["sigma"], sensitivity=int(sens), sampling_prob=s)
        elif kind in ("randomized_response", "pure", "approx"):
            if q is None:
                one = PLD.from_privacy_parameters(common.DifferentialPrivacyParameters(
                    p["epsilon"], p.get("delta", 0.0)))
            else:
                outs = subsample_outcomes(finite_pair(kind, p), q)
                lg = lambda x: math.log(x) if x > 0 else -math.inf
                upper = {i: lg(a) for i, (a, b) in enumerate(outs) if a > 0}
                lower = {i: lg(b) for i, (a, b) in enumerate(outs) if b > 0}
                one = PLD.from_two_probability_mass_functions(lower, upper, symmetric=False)
        else:
            raise Unsupported("unsupported: " + kind)
        if count > 1:
            one = one.self_compose(count)
        total = one if total is None else total.compose(one)
    return total


def peer_dp_accounting_pld(case, peers_dir):
    _import_path(peers_dir, "dp_accounting", "dp_accounting", "differential-privacy/python/dp_accounting",
                 "python/dp_accounting")
    _need("numpy", "scipy", "attr")
    from dp_accounting import dp_event, mechanism_calibration
    from dp_accounting.pld import pld_privacy_accountant, privacy_loss_distribution, common
    cid, query, arg, target, spec = case

    if query == "calibrate":
        spec_items(instantiate(spec, 1.0))  # n/a early if unsupported

        def run():
            make = lambda v: _dpa_event(spec_items(instantiate(spec, v)), dp_event)
            v = mechanism_calibration.calibrate_dp_mechanism(
                pld_privacy_accountant.PLDAccountant, make, target, arg, tol=1e-4)
            return {"value": v, "note": "PLDAccountant + calibrate_dp_mechanism, tol 1e-4"}
        return run

    items = spec_items(spec)
    use_accountant = pld_privacy_accountant.PLDAccountant().supports(_dpa_event(items, dp_event))

    def run():
        if use_accountant:
            acc = pld_privacy_accountant.PLDAccountant()
            acc.compose(_dpa_event(items, dp_event))
            v = acc.get_epsilon(arg) if query == "epsilon" else acc.get_delta(arg)
            return {"value": v, "note": "PLDAccountant (interval 1e-4)"}
        pld = _dpa_pld_items(items, privacy_loss_distribution, common)
        v = pld.get_epsilon_for_delta(arg) if query == "epsilon" else pld.get_delta_for_epsilon(arg)
        return {"value": v, "note": "privacy_loss_distribution API (interval 1e-4)"}
    return run


def peer_dp_accounting_rdp(case, peers_dir):
    _import_path(peers_dir, "dp_accounting", "dp_accounting", "differential-privacy/python/dp_accounting",
                 "python/dp_accounting")
    _need("numpy", "scipy", "attr", "absl")
    from dp_accounting import dp_event, mechanism_calibration
    from dp_accounting.rdp import rdp_privacy_accountant
    RDP = rdp_privacy_accountant.RdpAccountant
    cid, query, arg, target, spec = case
    probe = spec if query != "calibrate" else instantiate(spec, 1.0)
    ev = _dpa_event(spec_items(probe), dp_event)
    if not RDP().supports(ev):
        bad = sorted({("poisson-subsampled " if it[2] is not None else "") + it[0] for it in spec_items(probe)
                      if not RDP().supports(_dpa_event([it], dp_event))})
        raise Unsupported("RdpAccountant does not take %s" % (", ".join(bad) or "this event"))
    if query == "calibrate":
        def run():
            make = lambda v: _dpa_event(spec_items(instantiate(spec, v)), dp_event)
            v = mechanism_calibration.calibrate_dp_mechanism(RDP, make, target, arg, tol=1e-4)
            return {"value": v, "note": "calibrate_dp_mechanism, tol 1e-4"}
        return run

    def run():
        acc = RDP()
        acc.compose(_dpa_event(spec_items(spec), dp_event))
        v = acc.get_epsilon(arg) if query == "epsilon" else acc.get_delta(arg)
        return {"value": v}
    return run


# --- Microsoft prv_accountant

def peer_prv_accountant(case, peers_dir, eps_error=0.01):
    _import_path(peers_dir, "prv_accountant", "prv_accountant")
    _need("numpy", "scipy")
    import prv_accountant as pa
    from prv_accountant import privacy_random_variables as prvs_mod
    cid, query, arg, target, spec = case
    if query == "calibrate":
        raise Unsupported("no calibration API")
    if query != "epsilon":
        raise Unsupported("delta queries not wired up (delta_error needs a scale)")
    items = spec_items(spec)
    notes = set()

    def prv_of(kind, p, q):
        if q is None:
            if kind == "gaussian":
                return prvs_mod.GaussianMechanism(p["sigma"] / p.get("sensitivity", 1))
            if kind == "gdp":
                return prvs_mod.GaussianMechanism(1 / p["mu"])
            if kind == "laplace":
                return prvs_mod.LaplaceMechanism(p.get("sensitivity", 1) / p["scale"])
            if kind in ("randomized_response", "pure"):
                return prvs_mod.PureDPMechanism(p["epsilon"])
            if kind == "approx":
                return prvs_mod.ApproximateDPMechanism(p["epsilon"], p["delta"])
        elif kind in ("gaussian", "gdp"):
            notes.add("Poisson-subsampled Gaussian: remove direction only")
            sigma = 1 / p["mu"] if kind == "gdp" else p["sigma"] / p.get("sensitivity", 1)
            return prvs_mod.PoissonSubsampledGaussianMechanism(q, sigma)
        raise Unsupported("unsupported: " + (kind if q is None else "poisson-subsampled " + kind))

    prv_args = [(prv_of(k, p, q), c) for k, p, q, c in items]

    def run():
        prvs = [a for a, c in prv_args]
        counts = [c for a, c in prv_args]
        acc = pa.PRVAccountant(prvs=prvs, max_self_compositions=counts, eps_error=eps_error,
                               delta_error=arg / 1000)
        lo, est, up = acc.compute_epsilon(delta=arg, num_self_compositions=counts)
        note = "; ".join(sorted(notes | {"eps_error %g, delta_error delta/1000" % eps_error}))
        return {"value": est, "lower": lo, "upper": up, "note": note}
    return run


# --- autodp

def peer_autodp_rdp(case, peers_dir):
    _import_path(peers_dir, "autodp", "autodp")
    _need("numpy", "scipy")
    import warnings
    warnings.simplefilter("ignore")
    from autodp import mechanism_zoo as mz, transformer_zoo as tz
    cid, query, arg, target, spec = case
    if query == "calibrate":
        raise Unsupported("calibration not wired up")
    items = spec_items(spec)

    def mech_of(kind, p, q):
        if kind == "gaussian":
            m = mz.GaussianMechanism(sigma=p["sigma"] / p.get("sensitivity", 1))
        elif kind == "gdp":
            m = mz.GaussianMechanism(sigma=1 / p["mu"])
        elif kind == "laplace":
            m = mz.LaplaceMechanism(b=p["scale"] / p.get("sensitivity", 1))
        elif kind == "randomized_response":
            m = mz.RandresponseMechanism(p=1 / (1 + math.exp(-p["epsilon"])))
        elif kind == "pure":
            m = mz.PureDP_Mechanism(eps=p["epsilon"])
        elif kind == "discrete_gaussian":
            m = mz.DiscreteGaussianMechanism(sigma=p["sigma"] / p.get("sensitivity", 1))
        else:
            raise Unsupported("unsupported: " + kind)
        if q is not None:
            m = tz.AmplificationBySampling(PoissonSampling=True)(m, q, improved_bound_flag=kind in ("gaussian", "gdp"))
        return m

    for k, p, q, c in items:  # n/a before timing
        mech_of(k, p, q)

    def run():
        mechs = [mech_of(k, p, q) for k, p, q, c in items]
        counts = [c for k, p, q, c in items]
        m = tz.Composition()(mechs, counts)
        v = m.get_approxDP(arg) if query == "epsilon" else m.get_approx_delta(arg)
        return {"value": v}
    return run


# --- Opacus

def _opacus_rdp_module(peers_dir):
    import importlib.util
    for sub in ("opacus",):
        f = os.path.join(peers_dir, sub, "opacus", "accountants", "analysis", "rdp.py")
        if os.path.isfile(f):
            _need("numpy", "scipy")
            spec = importlib.util.spec_from_file_location("opacus_rdp_analysis", f)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            return mod
    raise Skip("source not found (looked for %s)" % os.path.join(peers_dir, "opacus", "opacus"))


def _gaussian_items(items):
    out = []
    for kind, p, q, count in items:
        if kind == "gaussian":
            out.append((1.0 if q is None else q, p["sigma"] / p.get("sensitivity", 1), count))
        elif kind == "gdp":
            out.append((1.0 if q is None else q, 1 / p["mu"], count))
        else:
            raise Unsupported("unsupported: " + kind)
    return out


OPACUS_ALPHAS = [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))  # RDPAccountant.DEFAULT_ALPHAS


def peer_opacus_rdp(case, peers_dir):
    mod = _opacus_rdp_module(peers_dir)
    cid, query, arg, target, spec = case
    if query != "epsilon":
        raise Unsupported("only eps queries (get_privacy_spent)")
    g = _gaussian_items(spec_items(spec))

    def run():
        rdp = sum(mod.compute_rdp(q=q, noise_multiplier=s, steps=c, orders=OPACUS_ALPHAS) for q, s, c in g)
        eps, alpha = mod.get_privacy_spent(orders=OPACUS_ALPHAS, rdp=rdp, delta=arg)
        return {"value": float(eps), "note": "best alpha %g" % alpha}
    return run


def peer_opacus_prv(case, peers_dir):
    _import_path(peers_dir, "opacus", "opacus")
    _need("numpy", "scipy", "torch")
    try:
        from opacus.accountants import PRVAccountant
        from opacus.accountants.utils import get_noise_multiplier
    except Exception as e:  # torch too old for this opacus, ...
        raise Skip("opacus does not import (%s: %s)" % (type(e).__name__, e))
    cid, query, arg, target, spec = case
    if query == "calibrate":
        (q, s, c), = _gaussian_items(spec_items(instantiate(spec, 1.0)))

        def run():
            v = get_noise_multiplier(target_epsilon=target, target_delta=arg, sample_rate=q, steps=c,
                                     accountant="prv", epsilon_tolerance=0.01)
            return {"value": v, "note": "get_noise_multiplier(accountant='prv'), epsilon_tolerance 0.01"}
        return run
    if query != "epsilon":
        raise Unsupported("only eps queries")
    g = _gaussian_items(spec_items(spec))

    def run():
        acc = PRVAccountant()
        acc.history = [(s, q, c) for q, s, c in g]
        return {"value": float(acc.get_epsilon(delta=arg)), "note": "eps_error 0.01 (default)"}
    return run


# --- exact: k-fold composition of one finite-outcome pair

def _log_multinomial(k, ns):
    return math.lgamma(k + 1) - sum(math.lgamma(n + 1) for n in ns)


def _compositions(k, m):
    """All (n_1, ..., n_m) >= 0 summing to k."""
    if m == 1:
        yield (k,)
        return
    for n in range(k + 1):
        for rest in _compositions(k - n, m - 1):
            yield (n,) + rest


class ExactPair:
    """delta(eps) of the k-fold composition of a pair given by outcomes (a, b)."""

    def __init__(self, outs, k, max_terms=2_000_000):
        top = math.fsum(a for a, b in outs if b == 0)  # A-mass at loss +inf
        fin = [(math.log(a), math.log(b)) for a, b in outs if a > 0 and b > 0]
        if math.comb(k + len(fin) - 1, max(len(fin) - 1, 0)) > max_terms:
            raise Unsupported("too many lattice points for the exact sum")
        self.top = -math.expm1(k * math.log1p(-top)) if top < 1 else 1.0
        self.terms = []
        for ns in _compositions(k, len(fin)):
            lc = _log_multinomial(k, ns)
            self.terms.append((lc + sum(n * la for n, (la, lb) in zip(ns, fin)),
                               lc + sum(n * lb for n, (la, lb) in zip(ns, fin))))
        self.max_loss = max((la - lb for la, lb in self.terms), default=0.0)

    def delta(self, eps):
        return self.top + math.fsum(math.exp(la) - math.exp(lb + eps)
                                    for la, lb in self.terms if la > lb + eps)

    def epsilon(self, delta):
        if self.top > delta:
            return math.inf
        if self.delta(0.0) <= delta:
            return 0.0
        lo, hi = 0.0, self.max_loss
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if self.delta(mid) > delta:
                lo = mid
            else:
                hi = mid
            if hi - lo <= 1e-15 * hi:
                break
        return hi


def peer_exact(case, peers_dir):
    cid, query, arg, target, spec = case
    if query == "calibrate":
        raise Unsupported("no calibration")
    items = spec_items(spec)
    if len(items) != 1:
        raise Unsupported("only one (repeated) mechanism")
    kind, p, q, k = items[0]
    outs = finite_pair(kind, p)

    def run():
        pairs = [outs] if q is None else [subsample_outcomes(outs, q), [(b, a) for a, b in subsample_outcomes(outs, q)]]
        vals = []
        for o in pairs:
            ep = ExactPair(o, k)
            vals.append(ep.epsilon(arg) if query == "epsilon" else ep.delta(arg))
        note = "closed form (float64, log-space sum)"
        if len(vals) == 2:
            note += "; remove %.10g, add %.10g" % (vals[0], vals[1])
        return {"value": max(vals), "note": note}
    return run


PEER_FUNCS = {
    "dp_accounting.pld": peer_dp_accounting_pld,
    "dp_accounting.rdp": peer_dp_accounting_rdp,
    "prv_accountant": peer_prv_accountant,
    "autodp.rdp": peer_autodp_rdp,
    "opacus.rdp": peer_opacus_rdp,
    "opacus.prv": peer_opacus_prv,
    "exact": peer_exact,
}

# ------------------------------------------------------------------ worker


def _rss_mb():
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def worker(job):
    """Run one (case, peer) job; print one JSON line."""
    case = tuple(job["case"])
    res = {"case": case[0], "peer": job["peer"]}
    try:
        run = PEER_FUNCS[job["peer"]](case, job["peers_dir"])
        res["import_mb"] = _rss_mb()
        times = []
        spent = 0.0
        while len(times) < job["reps"]:
            t0 = time.perf_counter()
            out = run()
            times.append(time.perf_counter() - t0)
            spent += times[-1]
            if spent >= job["budget"]:
                break
        first = times[0]
        times.sort()
        n = len(times)
        med = times[n // 2] if n % 2 else 0.5 * (times[n // 2 - 1] + times[n // 2])
        res.update(status="ok", first_ms=1e3 * first, median_ms=1e3 * med, reps=n, peak_mb=_rss_mb(), **out)
    except Skip as e:
        res.update(status="skip", note=str(e))
    except Unsupported as e:
        res.update(status="n/a", note=str(e))
    except Exception as e:  # the peer failed on this case
        res.update(status="error", note="%s: %s" % (type(e).__name__, e))
    for k in ("value", "lower", "upper"):
        if k in res and res[k] is not None:
            res[k] = float(res[k])
    print(json.dumps(res), flush=True)


# -------------------------------------------------------------------- main


def fmt(x, digits=10):
    if x is None:
        return ""
    if isinstance(x, float) and (math.isinf(x) or math.isnan(x)):
        return str(x)
    return "%.*g" % (digits, x)


def main():
    ap = argparse.ArgumentParser(
        description="Run the dpacct benchmark cases through other accountants (peers).",
        epilog="Peers: " + ", ".join(PEERS) + ".  Missing peers are skipped (exit status 0).")
    ap.add_argument("cases", nargs="*", help="case ids, numbers or id substrings (default: all)")
    ap.add_argument("--peers-dir", default=os.environ.get("DPACCT_PEERS_DIR", DEFAULT_PEERS_DIR),
                    help="directory holding the peers' sources (default: $DPACCT_PEERS_DIR or %s)" % DEFAULT_PEERS_DIR)
    ap.add_argument("--peers", default=",".join(PEERS), help="comma-separated peers to run (default: all)")
    ap.add_argument("--bench", help="path of the bench binary: take the cases from `bench --specs`")
    ap.add_argument("--timeout", type=float, default=float(os.environ.get("DPACCT_PEERS_TIMEOUT", 300)),
                    help="seconds per (case, peer) job, imports included (default 300; "
                         "dp_accounting.pld on hetero1000 needs about 170 s)")
    ap.add_argument("--skip", action="append", default=[],
                    help="CASE:PEER to skip (repeatable), e.g. hetero1000:dp_accounting.pld")
    ap.add_argument("--reps", type=int, default=3, help="repetitions per job (median reported; default 3)")
    ap.add_argument("--budget", type=float, default=10.0,
                    help="stop repeating a job after this many seconds (default 10)")
    ap.add_argument("--tsv", help="also write the results as tab-separated values to this file")
    ap.add_argument("--python", default=sys.executable, help="interpreter for the jobs (default: this one)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.worker:
        worker(json.loads(sys.stdin.read() if args.worker == "-" else args.worker))
        return 0

    cases = BUILTIN_CASES
    if args.bench:
        try:
            cases = cases_from_bench(args.bench)
        except (OSError, subprocess.CalledProcessError, ValueError) as e:
            print("peers.py: cannot read the cases from %s (%s); using the built-in copy" % (args.bench, e),
                  file=sys.stderr)
        else:
            mine = {c[0]: c for c in BUILTIN_CASES}
            for c in cases:
                b = mine.get(c[0])
                if b is None or b[1:4] != c[1:4] or json.loads(b[4]) != json.loads(c[4]):
                    print("peers.py: note: case %s differs from the built-in copy (using bench's)" % c[0],
                          file=sys.stderr)
    if args.cases:
        chosen = []
        for sel in args.cases:
            hit = [c for i, c in enumerate(cases) if sel == str(i + 1) or sel == c[0]] or \
                  [c for c in cases if sel in c[0]]
            if not hit:
                print("peers.py: no case matches %r" % sel, file=sys.stderr)
                return 2
            chosen += [c for c in hit if c not in chosen]
        cases = chosen
    peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    for p in peers:
        if p not in PEER_FUNCS:
            print("peers.py: unknown peer %r (known: %s)" % (p, ", ".join(PEERS)), file=sys.stderr)
            return 2
    skips = set(args.skip)

    print("peers dir: %s%s" % (args.peers_dir, "" if os.path.isdir(args.peers_dir) else " (missing: only "
                                                   "'exact' can run)"))
    print("times exclude imports; first = first repetition, median over reps; peak MB includes the "
          "interpreter and imports\n")
    rows = []
    hdr = "| case | query | peer | status | value | lower | upper | first (ms) | median (ms) | reps | peak (MB) | note |"
    print(hdr)
    print("|" + "---|" * (hdr.count("|") - 1))
    for case in cases:
        cid, query, arg, target = case[:4]
        qlabel = ("eps @ delta=%g" % arg if query == "epsilon" else
                  "delta @ eps=%g" % arg if query == "delta" else "? for eps<=%g @ delta=%g" % (target, arg))
        for peer in peers:
            if "%s:%s" % (cid, peer) in skips:
                r = {"case": cid, "peer": peer, "status": "skip", "note": "skipped (--skip)"}
            else:
                job = {"case": list(case), "peer": peer, "peers_dir": args.peers_dir, "reps": args.reps,
                       "budget": args.budget}
                try:
                    # the job on stdin: a 10^4-leaf spec exceeds the argument size limit
                    cp = subprocess.run([args.python, os.path.abspath(__file__), "--worker", "-"],
                                        input=json.dumps(job), capture_output=True, text=True,
                                        timeout=args.timeout)
                    lines = [l for l in cp.stdout.splitlines() if l.startswith("{")]
                    if lines:
                        r = json.loads(lines[-1])
                    else:
                        err = (cp.stderr.strip().splitlines() or ["no output"])[-1]
                        r = {"case": cid, "peer": peer, "status": "error",
                             "note": "exit status %d: %s" % (cp.returncode, err)}
                except subprocess.TimeoutExpired:
                    r = {"case": cid, "peer": peer, "status": "timeout",
                         "note": "no answer within %g s (--timeout)" % args.timeout}
            r["query"] = query
            r["arg"] = arg
            rows.append(r)
            print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                cid, qlabel, peer, r["status"], fmt(r.get("value")), fmt(r.get("lower")), fmt(r.get("upper")),
                fmt(r.get("first_ms"), 4), fmt(r.get("median_ms"), 4), r.get("reps", ""),
                fmt(r.get("peak_mb"), 4), r.get("note", "")), flush=True)
    if args.tsv:
        cols = ["case", "query", "arg", "peer", "status", "value", "lower", "upper", "first_ms", "median_ms",
                "reps", "peak_mb", "note"]
        with open(args.tsv, "w") as f:
            f.write("\t".join(cols) + "\n")
            for r in rows:
                f.write("\t".join(("%.17g" % r[c]) if isinstance(r.get(c), float) else
                                  str(r.get(c, "")).replace("\t", " ") for c in cols) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
