#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""dpacct's `rdp` and `phi` methods side by side with established RDP and
characteristic-function accountants, the tight PLD bracket as ground truth.

For every case: dpacct `--method pld` (the certified bracket [lower, upper]
that contains the true eps), `--method rdp` (default conversion, and
`--rdp-conversion classical` when the build accepts it), `--method phi`, and
the peers that can express the case:

  dp_accounting.rdp   Google dp_accounting RdpAccountant (default orders,
                      get_epsilon_and_optimal_order)
  opacus.rdp          Opacus accountants/analysis/rdp.py: compute_rdp +
                      get_privacy_spent, RDPAccountant.DEFAULT_ALPHAS
                      (loaded on its own: no torch); Gaussians only
  prv_accountant.rdp  Microsoft prv_accountant's RDP accountant
                      (other_accountants.RDP, each PRV's rdp())
  autodp.rdp          autodp Mechanisms (RDP), AmplificationBySampling
                      (Poisson, improved bound), Composition, get_approxDP
  autodp.phi          autodp's analytical Fourier accountant (the
                      characteristic-function method): phi-enabled Mechanisms,
                      AmplificationBySampling_pld (remove_only and add_only,
                      the max reported), ComposeAFA, approxDP
  exact               closed form for a repeated finite-outcome pair
                      (bench/peers.py's; randomized response here): a reference

Peer sources are found as bench/peers.py finds them (bench/fetch-peers.sh puts
them in $DPACCT_PEERS_DIR, default /tmp/dpacct-peers, or --peers-dir).  A peer
whose source or Python modules (numpy, scipy, ...) are missing is skipped with
a message.  Each (case, peer) job runs in its own interpreter under a time
limit; its time is the peer's compute (building its objects, composing,
answering the query), imports excluded, median over up to --reps repetitions.
dpacct is timed as whole-process wall time (median of 3 runs).

Verdicts: for RDP peers, "dpacct rdp tighter/equal/LOOSER by x%" (dpacct's
RDP must be at least as tight as every peer's RDP: an 'ATTENTION' line flags
any case where it is not); soundness: any value below the PLD lower bound is
"UNSOUND (below the tight lower bound)".

Run: python3 bench/methods_peers.py [--dpacct PATH] [--cases a,b] [--json]
"""

import argparse
import contextlib
import io
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import peers as P  # noqa: E402  (spec flattening, peer-source lookup, the closed form)

EQUAL_REL = 1e-7  # |dpacct - peer| <= EQUAL_REL * peer counts as "equal"

# ---------------------------------------------------------------- the cases


def _sg(count, rate, sigma):
    return {"repeat": {"count": count, "event": {"poisson": {"rate": rate, "event": {"gaussian": {"sigma": sigma}}}}}}


# (id, description, delta, spec); every spec is add/remove (the default)
CASES = [
    ("dpsgd", "DP-SGD: sigma 1.1, q 256/60000 (0.0042666667), 14063 steps", 1e-5,
     _sg(14063, 0.0042666667, 1.1)),
    ("steps1e6", "sigma 0.8, q 1e-3, 10^6 steps", 1e-6, _sg(1000000, 0.001, 0.8)),
    ("sg-sigma2", "sigma 2, q 0.01, 1000 steps", 1e-5, _sg(1000, 0.01, 2)),
    ("sg-sigma0.6", "sigma 0.6, q 0.1, 100 steps (small sigma: fractional orders, order grids)", 1e-5,
     _sg(100, 0.1, 0.6)),
    ("gaussian", "plain Gaussian sigma 5, one step (closed form)", 1e-6, {"gaussian": {"sigma": 5}}),
    ("rr500", "randomized response eps 1, 500 repetitions (true eps 320.8176)", 1e-6,
     {"repeat": {"count": 500, "event": {"randomized_response": {"epsilon": 1}}}}),
    ("laplace100", "Laplace scale 10, 100 steps", 1e-5,
     {"repeat": {"count": 100, "event": {"laplace": {"scale": 10}}}}),
    ("hetero2", "1000 steps sigma 1.1 q 0.01 + 500 steps sigma 2 q 0.02", 1e-5,
     {"compose": [_sg(1000, 0.01, 1.1), _sg(500, 0.02, 2)]}),
]
CASE_BY_ID = {c[0]: c for c in CASES}

# peer -> (family, description)
PEERS = {
    "dp_accounting.rdp": ("rdp", "Google dp_accounting RdpAccountant"),
    "opacus.rdp": ("rdp", "Opacus compute_rdp + get_privacy_spent"),
    "prv_accountant.rdp": ("rdp", "Microsoft prv_accountant other_accountants.RDP"),
    "autodp.rdp": ("rdp", "autodp RDP (Composition, get_approxDP)"),
    "autodp.phi": ("phi", "autodp analytical Fourier accountant (ComposeAFA)"),
    "exact": ("ref", "closed form (bench/peers.py), float64"),
}

# ------------------------------------------------------------ peer helpers


def _items(case):
    """[(kind, params, rate or None, count)] of the case's spec."""
    return [tuple(it) for it in P.spec_items(json.dumps(case[3]))]


def _gauss_sigma(kind, p):
    """The noise multiplier of a Gaussian-type leaf, else None."""
    if kind == "gaussian":
        return p["sigma"] / p.get("sensitivity", 1)
    if kind == "gdp":
        return 1 / p["mu"]
    return None


def _laplace_b(kind, p):
    return p["scale"] / p.get("sensitivity", 1) if kind == "laplace" else None


def _rr_eps(kind, p):
    return p["epsilon"] if kind in ("randomized_response", "pure") else None


def _what(kind, q):
    return kind if q is None else "poisson-subsampled " + kind


def peer_dp_accounting_rdp(case, peers_dir):
    P._import_path(peers_dir, "dp_accounting", "dp_accounting", "differential-privacy/python/dp_accounting",
                   "python/dp_accounting")
    P._need("numpy", "scipy", "attr", "absl")
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant as rdp_mod

    events = []
    for kind, p, q, count in _items(case):
        s, b, e = _gauss_sigma(kind, p), _laplace_b(kind, p), _rr_eps(kind, p)
        if s is not None:
            ev = dp_event.GaussianDpEvent(s)
        elif b is not None and q is None:
            ev = dp_event.LaplaceDpEvent(b)
        elif e is not None and q is None:
            ev = dp_event.EpsilonDeltaDpEvent(e, 0.0)  # its RDP is randomized response's (M17 Prop 5)
        else:
            raise P.Unsupported("RdpAccountant does not take " + _what(kind, q))
        if q is not None:
            ev = dp_event.PoissonSampledDpEvent(q, ev)
        events.append((ev, count))
    delta = case[2]

    def run():
        acc = rdp_mod.RdpAccountant()
        for ev, count in events:
            acc.compose(ev, count)
        eps, order = acc.get_epsilon_and_optimal_order(delta)
        return {"value": eps, "order": float(order), "note": "default orders (%d)" % len(acc.orders)}
    return run


def peer_opacus_rdp(case, peers_dir):
    mod = P._opacus_rdp_module(peers_dir)
    g = []
    for kind, p, q, count in _items(case):
        s = _gauss_sigma(kind, p)
        if s is None:
            raise P.Unsupported("Opacus' RDP analysis takes Gaussians only, not " + _what(kind, q))
        g.append((1.0 if q is None else q, s, count))
    alphas = P.OPACUS_ALPHAS
    delta = case[2]

    def run():
        rdp = sum(mod.compute_rdp(q=q, noise_multiplier=s, steps=c, orders=alphas) for q, s, c in g)
        eps, alpha = mod.get_privacy_spent(orders=alphas, rdp=rdp, delta=delta)
        return {"value": float(eps), "order": float(alpha), "note": "DEFAULT_ALPHAS (%d)" % len(alphas)}
    return run


def peer_prv_accountant_rdp(case, peers_dir):
    P._import_path(peers_dir, "prv_accountant", "prv_accountant")
    P._need("numpy", "scipy")
    from prv_accountant import privacy_random_variables as prvs
    from prv_accountant.other_accountants import RDP

    made, notes = [], set()
    for kind, p, q, count in _items(case):
        s, b, e = _gauss_sigma(kind, p), _laplace_b(kind, p), _rr_eps(kind, p)
        if s is not None and q is None:
            made.append((lambda s=s: prvs.GaussianMechanism(s), count))
        elif s is not None:
            made.append((lambda s=s, q=q: prvs.PoissonSubsampledGaussianMechanism(q, s), count))
        elif b is not None and q is None:
            made.append((lambda b=b: prvs.LaplaceMechanism(1 / b), count))
        elif e is not None and q is None:
            notes.add("randomized response as its PureDPMechanism (rdp = (alpha-1) eps/alpha)")
            made.append((lambda e=e: prvs.PureDPMechanism(e), count))
        else:
            raise P.Unsupported("prv_accountant has no RDP for " + _what(kind, q))
    delta = case[2]

    def run():
        acc = RDP(prvs=[f() for f, c in made])
        lo, est, up = acc.compute_epsilon(delta=delta, num_self_compositions=[c for f, c in made])
        return {"value": float(up), "note": "; ".join(sorted(notes | {"default orders (%d)" % len(acc.orders)}))}
    return run


def _autodp_import(peers_dir):
    P._import_path(peers_dir, "autodp", "autodp")
    P._need("numpy", "scipy")
    import warnings
    warnings.simplefilter("ignore")


def peer_autodp_rdp(case, peers_dir):
    _autodp_import(peers_dir)
    from autodp import mechanism_zoo as mz, transformer_zoo as tz
    items = _items(case)

    def mech_of(kind, p, q):
        s, b, e = _gauss_sigma(kind, p), _laplace_b(kind, p), _rr_eps(kind, p)
        if s is not None:
            m = mz.GaussianMechanism(sigma=s)
        elif b is not None:
            m = mz.LaplaceMechanism(b=b)
        elif e is not None:
            m = mz.RandresponseMechanism(p=1 / (1 + math.exp(-e)))
        else:
            raise P.Unsupported("not wired up: " + kind)
        if q is not None:
            if s is None:
                raise P.Unsupported("not wired up: " + _what(kind, q))
            m = tz.AmplificationBySampling(PoissonSampling=True)(m, q, improved_bound_flag=True)
        return m

    for kind, p, q, c in items:  # n/a before timing
        mech_of(kind, p, q)
    delta = case[2]

    def run():
        # Composition keeps only the RDP curve (not the Gaussian's analytic approxDP)
        m = tz.Composition()([mech_of(k, p, q) for k, p, q, c in items], [c for k, p, q, c in items])
        return {"value": float(m.get_approxDP(delta)), "note": "BBGHS conversion, Brent over real alpha"}
    return run


AUTODP_PHI_CAP = math.log(100.0)  # cdf_to_approxdp bisects e^eps in [0, 100]


def peer_autodp_phi(case, peers_dir):
    _autodp_import(peers_dir)
    from autodp import mechanism_zoo as mz, transformer_zoo as tz
    items = _items(case)
    subsampled = any(q is not None for k, p, q, c in items)

    def mech_of(kind, p, q, neighboring):
        s, b, e = _gauss_sigma(kind, p), _laplace_b(kind, p), _rr_eps(kind, p)
        if s is not None:
            m = mz.GaussianMechanism(s, phi_off=False, RDP_off=True, approxDP_off=True)
        elif b is not None and q is None:
            m = mz.LaplaceMechanism(b=b, phi_off=False, RDP_off=True)
        elif e is not None and q is None:
            m = mz.RandresponseMechanism(p=1 / (1 + math.exp(-e)), phi_off=False, RDP_off=True)
        else:
            raise P.Unsupported("no phi function for " + _what(kind, q))
        if q is not None:
            m = tz.AmplificationBySampling_pld(PoissonSampling=True, neighboring=neighboring)(m, q)
        return m

    for kind, p, q, c in items:
        mech_of(kind, p, q, "remove_only")
    # the pairs without subsampling are symmetric: one direction is the answer
    directions = ["remove_only", "add_only"] if subsampled else ["symmetric"]
    delta = case[2]

    def run():
        vals, steps = {}, 0
        for d in directions:
            m = tz.ComposeAFA()([mech_of(k, p, q, d) for k, p, q, c in items], [c for k, p, q, c in items])
            out = io.StringIO()
            err = None
            with contextlib.redirect_stdout(out):  # its bisection prints every step
                try:
                    v = m.approxDP(delta)
                except Exception as e:  # noqa: BLE001
                    err = e
            log = out.getvalue()
            steps += log.count("current delta")
            if "no solution found" in log:
                raise RuntimeError("%s: no eps found: its bisection searches e^eps in [0, 100], i.e. eps <= "
                                   "ln 100 = %.4f" % (d, AUTODP_PHI_CAP))
            if err is not None:
                raise err
            vals[d] = float(v)
        note = "n_quad 700; %d bisection steps" % steps
        if max(vals.values()) >= AUTODP_PHI_CAP - 0.01:
            note += "; at its search cap eps = ln 100"
        if len(vals) == 2:
            note += "; remove %.6g, add %.6g" % (vals["remove_only"], vals["add_only"])
        return {"value": max(vals.values()), "note": note}
    return run


def peer_exact(case, peers_dir):
    items = _items(case)
    if len(items) != 1 or items[0][0] not in ("randomized_response", "pure", "approx"):
        raise P.Unsupported("only a repeated finite-outcome pair")
    return P.peer_exact(("", "epsilon", case[2], 0.0, json.dumps(case[3])), peers_dir)


PEER_FUNCS = {
    "dp_accounting.rdp": peer_dp_accounting_rdp,
    "opacus.rdp": peer_opacus_rdp,
    "prv_accountant.rdp": peer_prv_accountant_rdp,
    "autodp.rdp": peer_autodp_rdp,
    "autodp.phi": peer_autodp_phi,
    "exact": peer_exact,
}


def worker(job):
    """Run one (case, peer) job; print one JSON line."""
    case = CASE_BY_ID[job["case"]]
    res = {"case": case[0], "peer": job["peer"]}
    try:
        run = PEER_FUNCS[job["peer"]](case, job["peers_dir"])
        times, spent, out = [], 0.0, None
        while len(times) < job["reps"]:
            t0 = time.perf_counter()
            out = run()
            times.append(time.perf_counter() - t0)
            spent += times[-1]
            if spent >= job["budget"]:
                break
        res.update(status="ok", ms=1e3 * statistics.median(times), reps=len(times), **out)
        res["value"] = float(res["value"])
    except P.Skip as e:
        res.update(status="skip", note=str(e))
    except P.Unsupported as e:
        res.update(status="n/a", note=str(e))
    except Exception as e:  # noqa: BLE001  (the peer failed on this case)
        res.update(status="error", note="%s: %s" % (type(e).__name__, e))
    print(json.dumps(res), flush=True)


# ----------------------------------------------------------------- dpacct


def default_dpacct():
    for d in ("build-bench", "build"):
        f = os.path.join(ROOT, d, "dpacct")
        if os.access(f, os.X_OK):
            return f
    return os.path.join(ROOT, "build-bench", "dpacct")


def _num(x):
    """A JSON number or dpacct's "inf" string as a float (None stays None)."""
    return None if x is None else float(x)


def run_dpacct(binary, case, method, extra=(), reps=3, timeout=600):
    """One dpacct configuration on a case: {status, upper, lower, ms, order, certified, note, raw}."""
    cmd = [binary, "epsilon", "--method", method, "--delta", repr(case[2]), "--json"] + list(extra) + \
          [json.dumps(case[3])]
    times, r = [], {}
    for _ in range(reps):
        t0 = time.perf_counter()
        try:
            cp = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"status": "timeout", "note": "no answer within %g s" % timeout}
        except OSError as e:
            return {"status": "error", "note": str(e)}
        times.append(time.perf_counter() - t0)
        msg = (cp.stderr.strip().splitlines() or cp.stdout.strip().splitlines() or [""])[-1]
        msg = re.sub(r"^dpacct:\s*", "", msg)
        if cp.returncode == 2:
            return {"status": "refused", "note": msg, "ms": 1e3 * times[-1]}
        if cp.returncode != 0:
            return {"status": "error", "note": "exit status %d: %s" % (cp.returncode, msg)}
        try:
            raw = json.loads(cp.stdout)
        except ValueError:
            return {"status": "error", "note": "output is not JSON: %r" % cp.stdout[:200]}
        r = {"status": "ok", "raw": raw, "upper": _num(raw.get("epsilon_upper")),
             "lower": _num(raw.get("epsilon_lower")), "method_used": raw.get("method")}
        if "rdp_order" in raw:
            r["order"] = _num(raw["rdp_order"])
        if "certified" in raw:
            r["certified"] = raw["certified"]
        notes = []
        if raw.get("method") and raw.get("method") != method:
            notes.append("method " + str(raw["method"]))
        if raw.get("method") == "rdp":  # lower bound trivial, accuracy not applicable: say the conversion
            if raw.get("rdp_conversion"):
                notes.append("conversion " + str(raw["rdp_conversion"]))
        else:
            if raw.get("accuracy_met") is False:
                notes.append("accuracy not met")
            if raw.get("note"):
                notes.append(str(raw["note"]))
        if raw.get("upper_source") not in (None, "method"):
            notes.append("upper from " + str(raw["upper_source"]))
        r["note"] = "; ".join(notes)
    r["ms"] = 1e3 * statistics.median(times)
    return r


def dpacct_case(binary, case, reps):
    """dpacct's rows for a case: truth (pld, else exact), rdp (default, classical), phi."""
    rows = []
    pld = run_dpacct(binary, case, "pld", reps=reps)
    truth = None
    rows.append(dict(pld, tool="dpacct pld", family="pld"))
    if pld["status"] == "ok" and pld.get("lower") is not None:
        truth = {"lower": pld["lower"], "upper": pld["upper"], "source": "dpacct pld"}
    else:
        ex = run_dpacct(binary, case, "exact", reps=reps)
        rows.append(dict(ex, tool="dpacct exact", family="pld"))
        if ex["status"] == "ok" and ex.get("lower") is not None:
            truth = {"lower": ex["lower"], "upper": ex["upper"], "source": "dpacct exact"}
    rdp = run_dpacct(binary, case, "rdp", reps=reps)
    rows.append(dict(rdp, tool="dpacct rdp", family="rdp", main=True))
    if rdp["status"] == "ok":
        cl = run_dpacct(binary, case, "rdp", ["--rdp-conversion", "classical"], reps=reps)
        if cl["status"] == "refused":  # the default ran, so the option is what was refused
            cl = {"status": "n/a", "note": "--rdp-conversion not accepted by this build (%s)" % cl["note"]}
        rows.append(dict(cl, tool="dpacct rdp classical", family="rdp"))
    rows.append(dict(run_dpacct(binary, case, "phi", reps=reps), tool="dpacct phi", family="phi", main=True))
    for r in rows:
        r.pop("raw", None)
    return rows, truth


# -------------------------------------------------------------------- main


def pick_python(requested):
    """The interpreter for the peer jobs: the requested one, else this one if it
    has numpy and scipy, else Debian's /usr/bin/python3 if that has them."""
    if requested:
        return requested
    cands = [sys.executable] + ([] if sys.executable == "/usr/bin/python3" else ["/usr/bin/python3"])
    for py in cands:
        try:
            if subprocess.run([py, "-c", "import numpy, scipy"], capture_output=True, timeout=60).returncode == 0:
                return py
        except (OSError, subprocess.TimeoutExpired):
            pass
    return sys.executable


def peer_versions(peers_dir):
    """Version strings of the peers' sources (read from their files; no imports)."""
    def read(*parts):
        try:
            with open(os.path.join(peers_dir, *parts)) as f:
                return f.read()
        except OSError:
            return None

    def git(sub):
        d = os.path.join(peers_dir, sub)
        if os.path.exists(os.path.join(d, ".git")):
            cp = subprocess.run(["git", "-C", d, "log", "-1", "--format=%h %cs"], capture_output=True, text=True)
            if cp.returncode == 0:
                return " (git %s)" % cp.stdout.strip()
        return ""
    out = {}
    t = read("dp_accounting", "VERSION")
    if t is not None:
        out["dp_accounting"] = t.strip().splitlines()[-1].strip() + git("dp_accounting")
    t = read("opacus", "opacus", "version.py")
    m = t and re.search(r"__version__\s*=\s*['\"]([^'\"]+)", t)
    if m:
        out["opacus"] = m.group(1) + git("opacus")
    for name, pat in (("autodp", r"version\s*=\s*['\"]([^'\"]+)"), ("prv_accountant", r"version\s*=\s*['\"]([^'\"]+)")):
        t = read(name, "setup.py")
        m = t and re.search(pat, t)
        if m:
            out[name] = m.group(1) + git(name)
    return out


def fmt(x, digits=8):
    if x is None:
        return ""
    if isinstance(x, float) and (math.isinf(x) or math.isnan(x)):
        return str(x)
    if isinstance(x, bool):
        return str(x).lower()
    return "%.*g" % (digits, x)


def fmt_ms(ms):
    if ms is None:
        return ""
    return "%.0f" % ms if ms >= 1000 else "%.3g" % ms


def pct(a, b):
    """|a - b| / b in percent, formatted."""
    return "%.3g%%" % (100.0 * abs(a - b) / abs(b)) if b else "inf%"


def compare(mine, theirs):
    """'tighter', 'equal' or 'LOOSER' of mine against theirs, and the relative difference text."""
    if abs(mine - theirs) <= EQUAL_REL * abs(theirs):
        return "equal", ""
    return ("tighter" if mine < theirs else "LOOSER"), pct(mine, theirs)


def evaluate(rows, truth):
    """Fill in the verdict and soundness columns; return ATTENTION lines."""
    attention = []
    main = {r["family"]: r for r in rows if r.get("main")}
    for r in rows:
        v = r.get("upper") if r.get("status") == "ok" else None
        if r["tool"] in ("dpacct pld", "dpacct exact"):
            r["verdict"] = "ground truth" if truth and truth["source"] == r["tool"] else ""
            r["soundness"] = "-"
            continue
        if v is None:
            r.setdefault("soundness", "")
            continue
        if truth is None:
            r["soundness"] = "? (no ground truth)"
        elif v < truth["lower"]:
            r["soundness"] = "UNSOUND (below the tight lower bound)"
            if r["tool"].startswith("dpacct"):
                attention.append("ATTENTION: %s eps %s is below the PLD lower bound %s (unsound)"
                                 % (r["tool"], fmt(v, 10), fmt(truth["lower"], 10)))
        else:
            r["soundness"] = "ok"
        if truth is not None and r["tool"] not in ("dpacct pld", "dpacct exact"):
            r["over"] = "+%s" % pct(v, truth["upper"]) if v >= truth["upper"] else "-%s" % pct(v, truth["upper"])
        fam = r["family"]
        if r.get("peer") and fam in ("rdp", "phi"):
            ref = main.get(fam)
            if ref is None or ref.get("status") == "skip":
                r["verdict"] = "dpacct not run"
                continue
            if ref.get("status") != "ok":
                r["verdict"] = "dpacct %s %s" % (fam, ref["status"])
                if fam == "rdp":
                    attention.append("ATTENTION: dpacct rdp gave no answer (%s) where %s did"
                                     % (ref["status"], r["tool"]))
                continue
            word, by = compare(ref["upper"], v)
            if fam == "phi" and word == "LOOSER":
                word = "looser"
            r["verdict"] = "dpacct %s %s%s" % (fam, word, " by " + by if by else "")
            if r.get("soundness", "").startswith("UNSOUND"):
                r["verdict"] += " (peer unsound)"
            r["cmp"] = word.lower()
            if fam == "rdp" and word == "LOOSER":
                line = ("ATTENTION: dpacct rdp %s is LOOSER than %s %s by %s"
                        % (fmt(ref["upper"], 10), r["tool"], fmt(v, 10), by))
                if r.get("soundness", "").startswith("UNSOUND"):
                    line += " (the peer's value is below the tight lower bound: the peer is wrong)"
                attention.append(line)
    return attention


def print_case(idx, case, truth, rows, attention):
    cid, desc, delta, spec = case
    print("\n## %d. %s: %s; eps at delta %g" % (idx, cid, desc, delta))
    print("spec: %s" % json.dumps(spec))
    if truth:
        print("ground truth (%s): eps in [%s, %s]"
              % (truth["source"], fmt(truth["lower"], 10), fmt(truth["upper"], 10)))
    else:
        print("ground truth: none (dpacct pld/exact gave no bracket)")
    print()
    hdr = "| tool | eps upper | eps lower | vs PLD upper | time (ms) | order / note | verdict | soundness |"
    print(hdr)
    print("|" + "---|" * (hdr.count("|") - 1))
    for r in rows:
        if r.get("status") == "ok":
            up, lo = fmt(r.get("upper")), fmt(r.get("lower")) if r["family"] in ("pld", "phi") else ""
        else:
            up, lo = r.get("status", ""), ""
        note = []
        if r.get("order") is not None:
            note.append("alpha %s" % fmt(r["order"], 6))
        if r.get("certified") is not None:
            note.append("certified: %s" % ("true" if r["certified"] else "false"))
        if r.get("note"):
            note.append(("refused: " if r.get("status") == "refused" else "") + r["note"])
        if r.get("reps") and r.get("reps") > 1:
            note.append("median of %d" % r["reps"])
        print("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["tool"], up, lo, r.get("over", ""), fmt_ms(r.get("ms")) if r.get("status") == "ok" else "",
            "; ".join(note).replace("|", "/"), r.get("verdict", ""), r.get("soundness", "")))
    for a in attention:
        print(a)
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser(
        description="dpacct --method rdp / phi next to established RDP and characteristic-function "
                    "accountants, with the PLD bracket as ground truth.",
        epilog="Cases: " + ", ".join(c[0] for c in CASES) + ".  Peers: " + ", ".join(PEERS) +
               ".  Missing peers are skipped; the exit status is 0 unless --strict.")
    ap.add_argument("--dpacct", help="the dpacct binary (default: build-bench/dpacct, then build/dpacct "
                                     "under the repository root)")
    ap.add_argument("--cases", help="comma-separated case ids or numbers (default: all)")
    ap.add_argument("--peers", default=",".join(PEERS), help="comma-separated peers (default: all)")
    ap.add_argument("--peers-dir", default=os.environ.get("DPACCT_PEERS_DIR", P.DEFAULT_PEERS_DIR),
                    help="the peers' sources (default: $DPACCT_PEERS_DIR or %s; bench/fetch-peers.sh)"
                         % P.DEFAULT_PEERS_DIR)
    ap.add_argument("--python", help="interpreter for the peer jobs (default: this one if it has numpy and "
                                     "scipy, else /usr/bin/python3 if that has them)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per (case, peer) job (default 600)")
    ap.add_argument("--reps", type=int, default=3, help="peer repetitions, median reported (default 3)")
    ap.add_argument("--budget", type=float, default=10.0,
                    help="stop repeating a peer job after this many seconds (default 10)")
    ap.add_argument("--dpacct-reps", type=int, default=3, help="dpacct runs per configuration (default 3)")
    ap.add_argument("--no-dpacct", action="store_true", help="run the peers only")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the tables")
    ap.add_argument("--strict", action="store_true", help="exit 1 when there is an ATTENTION line")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.worker:
        worker(json.loads(args.worker))
        return 0

    cases = CASES
    if args.cases:
        cases = []
        for sel in (s.strip() for s in args.cases.split(",") if s.strip()):
            hit = [c for i, c in enumerate(CASES) if sel in (c[0], str(i + 1))]
            if not hit:
                print("methods_peers.py: no case %r (known: %s)" % (sel, ", ".join(c[0] for c in CASES)),
                      file=sys.stderr)
                return 2
            cases += [c for c in hit if c not in cases]
    peers = [p.strip() for p in args.peers.split(",") if p.strip()]
    for p in peers:
        if p not in PEER_FUNCS:
            print("methods_peers.py: unknown peer %r (known: %s)" % (p, ", ".join(PEERS)), file=sys.stderr)
            return 2

    binary = None
    dpacct_msg = "not run (--no-dpacct)"
    if not args.no_dpacct:
        binary = args.dpacct or default_dpacct()
        if not os.access(binary, os.X_OK):
            dpacct_msg = "not found: %s (build it, or --dpacct PATH)" % binary
            binary = None
        else:
            cp = subprocess.run([binary, "--version"], capture_output=True, text=True)
            dpacct_msg = "%s (%s)" % (binary, (cp.stdout.strip().splitlines() or ["?"])[0])
    python = pick_python(args.python)
    versions = peer_versions(args.peers_dir)

    header = {
        "dpacct": dpacct_msg,
        "peers_dir": args.peers_dir + ("" if os.path.isdir(args.peers_dir) else " (missing)"),
        "peer_versions": versions,
        "python": python,
    }
    if not args.json:
        print("# dpacct rdp / phi vs peer accountants")
        print("dpacct: %s" % dpacct_msg)
        print("peers dir: %s; versions: %s" % (header["peers_dir"],
                                                ", ".join("%s %s" % kv for kv in sorted(versions.items())) or "none"))
        print("peer jobs: %s; peer times exclude imports (median of up to %d reps); dpacct times are "
              "whole-process wall time (median of %d)" % (python, args.reps, args.dpacct_reps))
        sys.stdout.flush()

    results, all_attention = [], []
    for idx, case in enumerate(cases, 1):
        number = CASES.index(case) + 1
        rows, truth = ([], None)
        if binary:
            rows, truth = dpacct_case(binary, case, args.dpacct_reps)
        else:
            rows.append({"tool": "dpacct", "family": "pld", "status": "skip", "note": dpacct_msg})
        for peer in peers:
            job = {"case": case[0], "peer": peer, "peers_dir": args.peers_dir, "reps": args.reps,
                   "budget": args.budget}
            try:
                cp = subprocess.run([python, os.path.abspath(__file__), "--worker", json.dumps(job)],
                                    capture_output=True, text=True, timeout=args.timeout)
                lines = [ln for ln in cp.stdout.splitlines() if ln.startswith("{")]
                if lines:
                    r = json.loads(lines[-1])
                else:
                    err = (cp.stderr.strip().splitlines() or ["no output"])[-1]
                    r = {"status": "error", "note": "exit status %d: %s" % (cp.returncode, err)}
            except subprocess.TimeoutExpired:
                r = {"status": "timeout", "note": "no answer within %g s (--timeout)" % args.timeout}
            r.pop("case", None)
            if r.get("status") == "ok":
                r["upper"] = r.pop("value")
            r.update(tool=peer, peer=True, family=PEERS[peer][0])
            rows.append(r)
        attention = evaluate(rows, truth)
        all_attention += ["%s: %s" % (case[0], a) for a in attention]
        results.append({"case": case[0], "number": number, "description": case[1], "delta": case[2],
                        "spec": case[3], "truth": truth, "rows": rows, "attention": attention})
        if not args.json:
            print_case(number, case, truth, rows, attention)

    summary = summarize(results)
    if args.json:
        print(json.dumps(_finite(dict(header, cases=results, summary=summary, attention=all_attention)), indent=1))
    else:
        print_summary(results, summary, all_attention)
    return 1 if (args.strict and all_attention) else 0


def _finite(x):
    """x with infinite and NaN floats as the strings "inf", "-inf", "nan" (strict JSON)."""
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if isinstance(x, dict):
        return {k: _finite(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_finite(v) for v in x]
    return x


def summarize(results):
    s = {"rdp_vs_peers": {"tighter": 0, "equal": 0, "looser": 0, "looser_than_unsound": 0},
         "phi_vs_autodp": {}, "unsound": [], "skipped": {}, "dpacct_refused": []}
    for res in results:
        for r in res["rows"]:
            if r.get("peer") and r.get("cmp"):
                if r["family"] == "rdp":
                    s["rdp_vs_peers"][r["cmp"]] += 1
                    if r["cmp"] == "looser" and r.get("soundness", "").startswith("UNSOUND"):
                        s["rdp_vs_peers"]["looser_than_unsound"] += 1
                else:
                    key = r["cmp"] + (" (peer unsound)" if r.get("soundness", "").startswith("UNSOUND") else "")
                    s["phi_vs_autodp"][key] = s["phi_vs_autodp"].get(key, 0) + 1
            if r.get("soundness", "").startswith("UNSOUND"):
                s["unsound"].append({"case": res["case"], "tool": r["tool"], "value": r["upper"],
                                     "tight_lower": res["truth"]["lower"]})
            if r.get("peer") and r.get("status") in ("skip", "n/a", "error", "timeout") and \
                    not (r["family"] == "ref" and r["status"] == "n/a"):
                s["skipped"].setdefault(r["tool"], []).append("%s: %s (%s)" % (res["case"], r["status"],
                                                                                r.get("note", "")))
            if r["tool"].startswith("dpacct") and r.get("status") not in ("ok", None):
                s["dpacct_refused"].append("%s: %s %s: %s" % (res["case"], r["tool"], r["status"], r.get("note", "")))
    return s


def print_summary(results, s, attention):
    print("\n## Summary\n")
    hdr = "| case | PLD bracket | dpacct rdp | best peer RDP | dpacct phi | autodp phi |"
    print(hdr)
    print("|" + "---|" * (hdr.count("|") - 1))
    for res in results:
        rows = {r["tool"]: r for r in res["rows"]}
        t = res["truth"]

        def val(name):
            r = rows.get(name)
            if r is None:
                return ""
            if r.get("status") != "ok":
                return r.get("status", "")
            v = fmt(r["upper"])
            return v + (" UNSOUND" if r.get("soundness", "").startswith("UNSOUND") else "")
        peer_rdp = [r for r in res["rows"] if r.get("peer") and r["family"] == "rdp" and r.get("status") == "ok"]
        sound = [r for r in peer_rdp if not r.get("soundness", "").startswith("UNSOUND")]
        best = min(sound or peer_rdp, key=lambda r: r["upper"]) if peer_rdp else None
        print("| %s | %s | %s | %s | %s | %s |" % (
            res["case"], "[%s, %s]" % (fmt(t["lower"]), fmt(t["upper"])) if t else "",
            val("dpacct rdp"), "%s (%s)%s" % (fmt(best["upper"]), best["tool"], "" if best in sound else " UNSOUND")
            if best else "",
            val("dpacct phi"), val("autodp.phi")))
    c = s["rdp_vs_peers"]
    print("\ndpacct rdp against the RDP peers' answers: tighter %d, equal %d, LOOSER %d%s"
          % (c["tighter"], c["equal"], c["looser"],
             " (%d of them against a peer value below the tight lower bound)" % c["looser_than_unsound"]
             if c["looser_than_unsound"] else ""))
    if s["phi_vs_autodp"]:
        print("dpacct phi against autodp.phi: "
              + ", ".join("%s %d" % kv for kv in sorted(s["phi_vs_autodp"].items())))
    if s["unsound"]:
        print("values below the tight lower bound (UNSOUND):")
        for u in s["unsound"]:
            print("  %s: %s eps %s < lower %s" % (u["case"], u["tool"], fmt(u["value"], 10), fmt(u["tight_lower"], 10)))
    else:
        print("no value below the tight lower bound")
    if s["dpacct_refused"]:
        print("dpacct configurations without an answer:")
        for line in s["dpacct_refused"]:
            print("  " + line)
    if s["skipped"]:
        print("peer jobs without an answer:")
        for tool, lines in sorted(s["skipped"].items()):
            for line in lines:
                print("  %s %s" % (tool, line))
    if attention:
        print()
        for a in attention:
            print(a)
    elif c["tighter"] + c["equal"] + c["looser"]:
        print("no ATTENTION: dpacct rdp is at least as tight as every peer's RDP answer")
    else:
        print("no ATTENTION (no dpacct rdp answer was compared with a peer's)")


if __name__ == "__main__":
    sys.exit(main())
