# SPDX-License-Identifier: GPL-3.0-or-later
"""dp_accounting's pld/ test files through dpacct (issue 26, task PSPLD).

A recognizer module of bench/peer_suites.py (MODULES): cases(peers_dir, tally)
reads the literal cases of dp_accounting/pld/privacy_loss_mechanism_test.py,
privacy_loss_distribution_test.py, pld_privacy_accountant_test.py,
accountant_test.py, pld_pmf_test.py, common_test.py and test_util_test.py,
rebuilds each stated number as a dpacct computation and classifies it; the
tests whose numbers are not a privacy quantity of a mechanism are set aside
with the reason.  No code of the peer is imported or copied: only the
numbers of its decorators and test bodies are read (ast).  The recognizer of
privacy_loss_distribution_test.py is in peer_suites_dpa_pld_dist.py.

The peer's mechanisms map to dpacct specs as follows (peer on the left):
  LaplacePrivacyLoss(b, sensitivity s)        laplace {scale b, sensitivity s}
  GaussianPrivacyLoss(sd, s)                  gaussian {sigma sd, sensitivity s}
  DiscreteLaplacePrivacyLoss(a, s)            discrete_laplace {scale 1/a, s}
                                              (the peer's P(k) ~ exp(-a |k|))
  DiscreteGaussianPrivacyLoss(sigma, s)       discrete_gaussian {sigma, s}
  MixtureGaussianPrivacyLoss(sd, s_i, p_i)    mixture_of_gaussians
  sampling_prob q < 1                         poisson {rate q, event}
  randomized response (noise nu, k buckets)   randomized_response {p 1 - nu + nu/k, k}
and the adjacency types to the directions of dpacct's add_remove pair: the
peer's REMOVE has mu_upper the mechanism on the dataset with the record, as
dpacct's "remove" direction (P with the individual's data); ADD is "add".

Queries (each a certified bracket of dpacct's, the pld method at accuracy
1e-7 unless said):
  get_delta_for_epsilon  the direction's hockey-stick divergence: dpacct's
      per-direction upper bound and, where dpacct certifies no lower bound for
      that direction (the pld method lowers only the binding one), the lower
      bound through the other direction at -eps: H_x(Q||P) = 1 - x + x
      H_{1/x}(P||Q) (docs/loss_tail.md section 1).  "exact" when the bracket
      holds the peer's value within its assertAlmostEqual tolerance.
  privacy_loss(x) = l, inverse_privacy_loss(l) = x: the pointwise loss is a
      property of the pair, checked through the loss's survival function:
      the peer's loss is non-increasing in the output x, so P(L > l) <=
      P(X <= x) and P(X < x) <= P(L >= l), X ~ mu_upper; the output's CDF is
      computed here in closed form (erfc/exp of the noise law) and dpacct's
      loss_tail brackets P(L > l).  "exact" when both inequalities hold up to
      the peer's 7 places (1e-7 on l and x).
  the discretized PLDs of privacy_loss_distribution_test.py (pessimistic,
      optimistic, connect-the-dots, value_discretization_interval D): the
      pessimistic mass at index i is P(L in ((i-1)D, iD]), the optimistic
      one P(L in [iD, (i+1)D)), both brackets from loss_tail; the
      connect-the-dots mass at iD is fixed by the hockey-stick curve at
      (i-1)D, iD, (i+1)D, as the discrete measure's curve equals the true one
      at the grid points (Doroshenko et al. 2022, "Connect the dots", §3):
      m_i = e^{iD} (slope right - slope left) of h(x) = delta(log x), from
      dpacct's delta brackets.  The lowest and highest entries also hold the
      mass the peer's truncation moved there: they are checked against
      cumulative bounds ("consistent").
  from_privacy_parameters: the calibrated noise; "consistent" when dpacct's
      certified (add_remove, both directions) parameter is at least the
      peer's where the pair is symmetric, and dpacct's lower bound of the
      peer's direction at the peer's parameter (+1e-6 relative) meets the
      target (the peer's parameter is then not certified infeasible).
  true positive rate / GDP mu estimates: beta_at and gdp_mu.
"""
import ast
import ctypes
import math
import os

from peer_suites import call_name, classify, dp_accounting_importable

import dpacct
from dpacct import _lib

REL = os.path.join("dp_accounting", "pld")
ACC = 1e-7          # pld accuracy used for the exact rows
TOL7 = 0.5e-7       # assertAlmostEqual's default: 7 places
ENV = {"ADD": "add", "REM": "remove", "REP": "replace", "math": math, "inf": math.inf,
       "ADD_OR_REMOVE_ONE": "add_remove", "REPLACE_ONE": "replace_one",
       "REPLACE_SPECIAL": "replace_special", "dict": dict, "True": True, "False": False,
       "None": None}


# ------------------------------------------------------------ specs ---

def leaf(kind, param, sens):
    """param "?" makes a calibration template (the discrete Laplace's scale
    is then the reciprocal of the peer's parameter)."""
    f = (lambda v: v) if param == "?" else float
    if kind == "laplace":
        return {"laplace": {"scale": f(param), "sensitivity": float(sens)}}
    if kind == "gaussian":
        return {"gaussian": {"sigma": f(param), "sensitivity": float(sens)}}
    if kind == "discrete_laplace":
        return {"discrete_laplace": {"scale": "?" if param == "?" else 1.0 / float(param),
                                     "sensitivity": int(sens)}}
    if kind == "discrete_gaussian":
        return {"discrete_gaussian": {"sigma": f(param), "sensitivity": int(sens)}}
    raise ValueError(kind)


def mech_spec(kind, param, sens, q, rel="add_remove"):
    """The spec of a peer mechanism; rel 'replace' doubles the sensitivity
    (the peer's REPLACE pair is mu(x + s) against mu(x - s))."""
    if rel == "replace":
        lf = leaf(kind, param, 2 * sens)
        return dict({"poisson": {"rate": q, "event": lf}} if q < 1 else lf, neighboring="replace")
    lf = leaf(kind, param, sens)
    return {"poisson": {"rate": q, "event": lf}} if q < 1 else lf


def mog_spec(sd, sens, probs):
    return {"mixture_of_gaussians": {"sigma": float(sd), "sensitivities": [float(s) for s in sens],
                                     "probabilities": [float(p) for p in probs]}}


_ACCS = {}


def accountant(spec, accuracy=ACC):
    key = (repr(spec), accuracy)
    if key not in _ACCS:
        _ACCS[key] = dpacct.Accountant(spec, accuracy=accuracy)
    return _ACCS[key]


def raw_delta(acc, eps):
    """dpa_accountant_delta's whole result (per-direction lower bounds)."""
    r = _lib.dpa_result()
    err = _lib.new_error()
    with _lib.LOCK:
        st = acc._lib.dpa_accountant_delta(acc._live(), float(eps), ctypes.byref(r), ctypes.byref(err))
    _lib.check(st, err)
    return r


# one double operation's relative rounding, widened for the few operations of
# the reflection 1 - x + x h (each bound moved outward by 4 ulp of its terms)
ROUND = 4 * 2.0 ** -52


def dir_delta(acc, eps, d):
    """[lo, hi] on H_{e^eps} of direction d ('remove' or 'add'), certified."""
    r = raw_delta(acc, eps)
    if r.binding == 0:  # symmetric pair
        return r.lower, r.upper
    hi = r.upper_remove if d == "remove" else r.upper_add
    lo = r.lower_remove if d == "remove" else r.lower_add
    if lo > 0 or hi == 0:
        return lo, hi
    # reflect through the other direction at -eps: H_x(Q||P) = 1 - x + x H_{1/x}(P||Q)
    o = raw_delta(acc, -eps)
    olo = o.lower_add if d == "remove" else o.lower_remove
    x = math.exp(eps)
    if eps > 700:
        return lo, hi
    xs = (x * (1 - ROUND), x * (1 + ROUND))  # exp within an ulp or two
    cand = [1 - xx + xx * olo for xx in xs]
    rlo = min(cand) - ROUND * (1 + 2 * x)
    return max(lo, rlo), hi


_TAILS = {}


def tail(acc, t, d):
    key = (id(acc), t, d)
    if key not in _TAILS:
        r = acc.loss_tail(t, d)
        _TAILS[key] = (r["sf_lower"], r["sf_upper"])
    return _TAILS[key]


# ------------------------------------------------ output distributions ---

def _phi(z):
    return 0.5 * math.erfc(-z / math.sqrt(2))


def noise_cdf(kind, param, x, strict=False):
    """P(N <= x) (P(N < x) when strict) of the noise law (centred at 0)."""
    if math.isinf(x):
        return 1.0 if x > 0 else 0.0
    if kind == "gaussian":
        return _phi(x / param)
    if kind == "laplace":
        return 0.5 * math.exp(x / param) if x < 0 else 1 - 0.5 * math.exp(-x / param)
    if kind == "discrete_laplace":  # P(k) = (1 - r)/(1 + r) r^|k|, r = e^-a
        k = math.floor(x)
        if strict and k == x:
            k -= 1
        r = math.exp(-param)
        return r ** (-k) / (1 + r) if k < 0 else 1 - r ** (k + 1) / (1 + r)
    if kind == "discrete_gaussian":
        k = math.floor(x)
        if strict and k == x:
            k -= 1
        lim = int(40 * param + 50)
        w = [math.exp(-j * j / (2 * param * param)) for j in range(-lim, lim + 1)]
        return sum(w[: max(0, min(len(w), k + lim + 1))]) / sum(w)
    raise ValueError(kind)


def upper_cdf(kind, param, sens, q, d, x, strict=False):
    """P(X <= x) for X ~ mu_upper of direction d (REMOVE: the noise shifted
    left by the sensitivity with probability q; ADD: the noise)."""
    if d == "add":
        return noise_cdf(kind, param, x, strict)
    return q * noise_cdf(kind, param, x + sens, strict) + (1 - q) * noise_cdf(kind, param, x, strict)


def mog_upper_cdf(sd, sens, probs, d, x, strict=False):
    if d == "add":
        return noise_cdf("gaussian", sd, x)
    return sum(p * noise_cdf("gaussian", sd, x + s) for s, p in zip(sens, probs))


# ------------------------------------------------------------ parsing ---

def decorator_rows(fn, path):
    """The cases of a test's parameterized decorator, as dicts of its
    argument names (positional tuples mapped to the function's arguments)."""
    names = [a.arg for a in fn.args.args[1:]]
    defaults = dict(zip(names[len(names) - len(fn.args.defaults):],
                        [ast.literal_eval(d) if isinstance(d, ast.Constant) else None for d in fn.args.defaults]))
    out = []
    for dec in fn.decorator_list:
        if not (isinstance(dec, ast.Call) and call_name(dec) in ("parameters", "named_parameters")):
            continue
        for a in dec.args:
            try:
                v = eval(compile(ast.Expression(a), path, "eval"), {"__builtins__": {}}, ENV)
            except Exception:
                continue
            if isinstance(v, dict):
                row = dict(defaults, **v)
            else:
                if not isinstance(v, tuple):
                    v = (v,)
                row = dict(defaults, **dict(zip(names, v)))
            out.append((a.lineno, row))
    return out


def peer_file(src, name):
    """(path relative to the peer's root, absolute path or None) of a pld/ test file."""
    rel = os.path.join(REL, name)
    path = os.path.join(src, rel)
    return rel, (path if os.path.exists(path) else None)


def functions(path):
    tree = ast.parse(open(path, encoding="utf-8").read())
    return [fn for fn in ast.walk(tree) if isinstance(fn, ast.FunctionDef) and fn.name.startswith("test")]


def body_keyword(fn, name):
    """A literal keyword argument `name=` of a call in the test's body."""
    for n in ast.walk(fn):
        if isinstance(n, ast.Call):
            for k in n.keywords:
                if k.arg == name:
                    try:
                        return ast.literal_eval(k.value)
                    except ValueError:
                        pass
    return None


def body_positional(fn, callee, index):
    for n in ast.walk(fn):
        if isinstance(n, ast.Call) and call_name(n) == callee and len(n.args) > index:
            try:
                return ast.literal_eval(n.args[index])
            except ValueError:
                pass
    return None


# ------------------------------------------------------------- checks ---

def check_delta(tally, where, spec, d, eps, want, tol=TOL7, what=""):
    try:
        lo, hi = dir_delta(accountant(spec), eps, d)
    except Exception as e:
        return tally.add("inexpressible", where, "delta: %s: %s" % (type(e).__name__, e))
    ok = lo - tol <= want <= hi + tol
    tally.add("exact" if ok else "disagree", where, "delta(%g) %s of %s%s = %r, dpacct [%r, %r]"
              % (eps, d, spec, what, want, lo, hi))


def check_loss_point(tally, where, acc, d, x, l, cdf, tol=1e-7, what=""):
    """l = L(x) (or x the largest output with L >= l) for a loss that is
    non-increasing in x: sf(l) <= P(X <= x) and P(X < x) <= P(L >= l).
    cdf(x, strict) is P(X <= x) / P(X < x); tol the peer's 7 places, on l
    and on x (and relatively, 1e-7 |x|)."""
    tx = tol * max(1.0, abs(x)) if math.isfinite(x) else 0.0
    if math.isinf(l):
        # +inf: the outputs below x have mass under mu_upper only, P(X < x) <= P(L = inf);
        # -inf: x and above are outside mu_upper's support, P(X >= x) = 0
        if l > 0:
            p, bound = cdf(x - tx, True), tail(acc, 700.0, d)[1]
        else:
            p, bound = 1 - cdf(x + tx, True), 0.0
        ok = p <= bound + tol
        return tally.add("exact" if ok else "disagree", where, "L(%r) = %r (%s)%s: mass %r, bound %r"
                         % (x, l, d, what, p, bound))
    s_lo, _ = tail(acc, l + tol, d)
    _, s_hi = tail(acc, l - tol, d)
    up = cdf(x + tx, False)
    lo = cdf(x - tx, True)
    ok = s_lo <= up + 1e-12 and lo <= s_hi + 1e-12
    tally.add("exact" if ok else "disagree", where,
              "L(%r) = %r (%s)%s: P(L > l) in [%r, ...] vs P(X <= x) %r; P(X < x) %r vs P(L >= l) <= %r"
              % (x, l, d, what, s_lo, up, lo, s_hi))


# ---------------------------------------------- privacy_loss_mechanism ---

MECH_PREFIX = {"laplace": "laplace", "gaussian": "gaussian", "discrete_laplace": "discrete_laplace",
               "discrete_gaussian": "discrete_gaussian"}
PARAM = {"laplace": "parameter", "gaussian": "standard_deviation", "discrete_laplace": "parameter",
         "discrete_gaussian": "sigma"}

MECH_ASIDE = {
    "test_replace_adjacency_type_not_supported":
        "the peer's objects refusing the REPLACE adjacency type (an error raised; its numbers are the "
        "constructor's arguments)",
    "test_mu_upper_cdf": "the CDF of the mechanism's output law mu_upper at literal points (scipy's "
        "cdf of the noise mixture, the peer's building block of its PLD), not a privacy quantity",
    "test_mu_lower_log_cdf": "the log-CDF of the output law mu_lower at literal points (scipy's "
        "logcdf of the noise mixture), not a privacy quantity",
    "test_init_raises_error": "constructor arguments the peer rejects (input validation)",
    "test_connect_dots_bounds": "the peer's truncation bounds of the output range (x) and the losses "
        "at them, the support of its own discretization",
    "test_zero_sampling_probs_ignored": "the peer's handling of zero weights in its mixture arrays "
        "(one object against another at eps 1; no stated value)",
    "test_inverse_privacy_losses": "the peer's approximate vectorized inverse against its own "
        "privacy_loss at points of its truncation range (no stated value)",
    "test_privacy_loss_tail": "the peer's truncation of the output range at log_mass_truncation_bound "
        "and the tail masses it moves to the cut points (its own discretization), asserted against "
        "its own mu_upper_cdf",
}
for _k in MECH_PREFIX.values():
    MECH_ASIDE["test_%s_value_errors" % _k] = "parameters the peer rejects (input validation)"
    MECH_ASIDE["test_%s_from_privacy_parameters_value_errors" % _k] = \
        "privacy parameters the peer rejects (input validation)"
    MECH_ASIDE["test_%s_privacy_loss_value_errors" % _k] = "points where the peer's loss is " \
        "undefined (non-integer x for a discrete noise: an error raised)"
    MECH_ASIDE["test_%s_connect_dots_bounds" % _k] = "the peer's truncation bounds of the output " \
        "range (x, or the losses at its ends), the support of its own discretization"
    MECH_ASIDE["test_%s_privacy_loss_tail" % _k] = "the peer's truncation of the output range at " \
        "its tail_mass_truncation and the masses it moves to the cut points (its own discretization)"
MECH_ASIDE["test_discrete_gaussian_noise_cdf"] = "the CDF of the peer's truncated discrete Gaussian " \
    "noise at literal points (its building block), not a privacy quantity"
MECH_ASIDE["test_discrete_gaussian_std"] = "the standard deviation of the peer's truncated discrete " \
    "Gaussian noise (a utility figure), not a privacy quantity"
# the discrete Gaussian's tail/bounds tests (every row with a truncation_bound) assert the
# peer's own output-range truncation, as the other mechanisms' do: set aside alike; its
# get_delta rows are bench/peer_suites_tdg.py's


def mechanism_cases(src, tally):
    rel, path = peer_file(src, "privacy_loss_mechanism_test.py")
    if path is None:
        return
    for fn in functions(path):
        name = fn.name
        if name in MECH_ASIDE:
            # the DiscreteGaussian tail/bounds tests with truncation_bound rows are left to TDG
            tally.set_aside(path, name, MECH_ASIDE[name])
            continue
        kind = next((k for k in ("discrete_laplace", "discrete_gaussian", "laplace", "gaussian")
                     if name.startswith("test_%s_" % k)), "mog")
        rows = decorator_rows(fn, path)
        for line, row in rows:
            where = "dp_accounting/%s:%d %s" % (rel, line, name)
            if row.get("truncation_bound") is not None:
                continue  # the truncated discrete Gaussian: task TDG
            d = row.get("adjacency_type", "remove")
            q = row.get("sampling_prob", 1.0)
            sens = row.get("sensitivity", 1)
            if kind == "mog":
                sd, ss, ps = row["standard_deviation"], row["sensitivities"], row["sampling_probs"]
                spec = mog_spec(sd, ss, ps)
                cdf = (lambda x, strict, ss=ss, ps=ps, sd=sd, d=d: mog_upper_cdf(sd, ss, ps, d, x, strict))
            else:
                param = row.get(PARAM[kind])
                spec = mech_spec(kind, param, sens, q) if param is not None else None
                cdf = (lambda x, strict, kind=kind, param=param, sens=sens, q=q, d=d:
                       upper_cdf(kind, param, sens, q, d, x, strict))
            if d == "replace":
                if "get_delta" in name or "from_privacy" in name:
                    continue  # bench/peer_suites.py's dp_accounting_replace_cases
                spec = mech_spec(kind, param, sens, q, "replace")
                if q < 1:
                    # dpacct's replace pair of the subsampled mechanism is the
                    # peer's up to a shift of the output; its loss_tail is
                    # slow at q < 1 (a two-sided pld build per chord point)
                    pass
                d = "remove"
            elif "get_delta_for_epsilon" in name:
                eps, want = row.get("epsilon", row.get("epsilon_values")), \
                    row.get("expected_delta", row.get("expected_delta_values"))
                pts = list(zip(eps, want)) if isinstance(eps, list) else [(eps, want)]
                for e, v in pts:
                    check_delta(tally, where, spec, d, e, v)
                tally.cover(path, name)
            if name.endswith("inverse_privacy_loss"):
                l, x = row["privacy_loss"], row["expected_x"]
                try:
                    acc = accountant(spec, None)
                    check_loss_point(tally, where, acc, d, x, l, cdf, what=" (inverse)")
                except Exception as e:
                    tally.add("inexpressible", where, "loss_tail: %s: %s" % (type(e).__name__, e))
                tally.cover(path, name)
            elif name.endswith("_privacy_loss") or name == "test_privacy_loss":
                x, l = row["x"], row["expected_privacy_loss"]
                try:
                    acc = accountant(spec, None)
                    check_loss_point(tally, where, acc, d, x, l, cdf)
                except Exception as e:
                    tally.add("inexpressible", where, "loss_tail: %s: %s" % (type(e).__name__, e))
                tally.cover(path, name)
            elif name.endswith("from_privacy_parameters"):
                pkey = next(k for k in row if k.startswith("expected_"))
                places = body_keyword(fn, "places") or body_positional(fn, "assertAlmostEqual", 2) or 7
                check_calibration(tally, where, kind, row, d, row[pkey], places)
                tally.cover(path, name)


def check_calibration(tally, where, kind, row, d, want, places):
    """The peer's parameter achieves (eps, delta) in its direction: dpacct's
    certified lower bound on that direction's delta, at the peer's value
    moved by its assertion's tolerance towards more noise, is at most delta
    (the value is then not certified infeasible).  dpacct's own calibration
    (both directions, certified) is shown beside it."""
    q, sens, eps, delta = row["sampling_prob"], row["sensitivity"], row["epsilon"], row["delta"]
    tol = 0.5 * 10.0 ** -places
    # the noise grows with the parameter except the discrete Laplace's (1/scale)
    moved = want - tol if kind == "discrete_laplace" else want + tol
    try:
        lo, _ = dir_delta(accountant(mech_spec(kind, moved, sens, q)), eps, d)
        cal = dpacct.calibrate(mech_spec(kind, "?", sens, q), eps, delta)
        mine = 1.0 / cal.value if kind == "discrete_laplace" else cal.value
    except Exception as e:
        return tally.add("inexpressible", where, "calibration: %s: %s" % (type(e).__name__, e))
    ok = lo <= delta
    tally.add("consistent" if ok else "disagree", where,
              "%s parameter ~ %r (%s, s %g, q %g, eps %g, delta %g): dpacct's lower delta of %s at %r: %r; "
              "dpacct's certified calibration (both directions) %r"
              % (kind, want, d, sens, q, eps, delta, d, moved, lo, mine))


# ------------------------------------------------------- accountant_test ---

def two_sided(tally, where, spec_of, target_eps, target_delta, want, tol, what, pessimistic=False):
    """want is the smallest noise meeting (eps, delta), to tol: "exact" when
    dpacct proves the true value within want +- tol (delta at want - tol is
    certified >= target and at want + tol certified <= target), "consistent"
    when it cannot decide (brackets across the target), else "disagree".
    pessimistic: the peer's value comes from a pessimistic PLD, which may
    ask for more noise than needed: more than want + tol is then
    "consistent" too (only a value below the true one, infeasible, is a
    disagreement)."""
    try:
        below = accountant(spec_of(want - tol)).delta(target_eps) if want - tol > 0 else None
        above = accountant(spec_of(want + tol)).delta(target_eps)
    except Exception as e:
        return tally.add("inexpressible", where, "%s: %s: %s" % (what, type(e).__name__, e))
    lo_ok = below is None or below.lower >= target_delta
    hi_ok = above.upper <= target_delta
    lo_bad = below is not None and below.upper < target_delta
    hi_bad = above.lower > target_delta
    cls = "exact" if lo_ok and hi_ok else "disagree" if (lo_bad and not pessimistic) or hi_bad else "consistent"
    tally.add(cls, where, "%s ~ %r +- %g: delta(%g) at -tol %s, at +tol [%r, %r] vs %g"
              % (what, want, tol, target_eps, None if below is None else (below.lower, below.upper),
                 above.lower, above.upper, target_delta))


def accountant_test_cases(src, tally):
    rel, path = peer_file(src, "accountant_test.py")
    if path is None:
        return
    for fn in functions(path):
        name = fn.name
        for line, row in decorator_rows(fn, path):
            where = "dp_accounting/%s:%d %s[%s]" % (rel, line, name, row.get("testcase_name", ""))
            eps, delta, k = row.get("epsilon"), row.get("delta"), row.get("num_queries")
            s = row.get("sensitivity", 1)
            if name in ("test_get_smallest_laplace_noise", "test_get_smallest_discrete_laplace_noise"):
                disc = "discrete" in name
                want, tol = row["expected_parameter"], (1e-3 if disc else 0.1)
                t = {"repeat": {"count": k, "event": leaf("discrete_laplace" if disc else "laplace", "?", s)}}
                try:
                    c = dpacct.calibrate(t, eps, delta).value
                    c = 1.0 / c if disc else c
                except Exception as e:
                    classify(tally, where, "estimate", want, tol, None, "%s: %s" % (type(e).__name__, e), "noise")
                    continue
                # the peer searches its PLD to a parameter tolerance: an estimate
                classify(tally, where, "estimate", want, tol, c, c,
                         "%s noise for (%g, %g) over %d queries" % ("discrete Laplace parameter" if disc else
                                                                 "Laplace scale", eps, delta, k))
            elif name in ("test_get_smallest_gaussian_noise", "test_get_smallest_subsampled_gaussian_noise"):
                q = row.get("sampling_prob", 1.0)
                spec_of = (lambda sd, s=s, q=q, k=k: {"repeat": {"count": k, "event": mech_spec("gaussian", sd, s, q)}})
                two_sided(tally, where, spec_of, eps, delta, row["expected_std"], TOL7,
                          "Gaussian sigma over %d queries (s %g, q %g)" % (k, s, q), pessimistic=q < 1)
            elif name == "test_advanced_composition":
                want = row["expected_total_epsilon"]
                if want is None:
                    continue
                td = row["total_delta"]
                spec = {"repeat": {"count": k, "event": {"approx": {"epsilon": eps, "delta": delta}}}}
                r = accountant(spec).epsilon(td)
                # advanced composition (Dwork, Rothblum & Vadhan 2010) bounds the
                # optimal composition from above
                classify(tally, where, "upper", want, TOL7, r.lower, r.upper,
                         "advanced composition eps of %d x (%g, %g) at delta %g (an upper bound)"
                         % (k, eps, delta, td))
            elif name == "test_get_smallest_epsilon_from_advanced_composition":
                want = row["expected_epsilon"]
                if want is None:
                    continue
                te, td = row["total_epsilon"], row["total_delta"]
                spec = {"repeat": {"count": k, "event": {"approx": {"epsilon": want, "delta": delta}}}}
                r = accountant(spec).delta(te)
                ok = r.lower <= td + 1e-12
                tally.add("consistent" if ok else "disagree", where,
                          "per-query eps ~ %r for (%g, %g) over %d queries (delta %g each): the optimal "
                          "composition's delta at it [%r, %r] <= %g" % (want, te, td, k, delta, r.lower, r.upper, td))
            else:
                continue
            tally.cover(path, name)


# --------------------------------------------- pld_privacy_accountant_test ---

class Bracketed(float):
    """A dpacct answer standing in the peer's test body: the midpoint, with
    the certified bracket and what it answers."""

    def __new__(cls, lo, hi, what, kind="exact"):
        v = float.__new__(cls, hi if math.isinf(hi) else 0.5 * (lo + hi))
        v.lo, v.hi, v.what, v.kind = lo, hi, what, kind
        return v


class StandInAccountant:
    """dpacct's PLDAccountant behind the peer's accountant calls: each query
    returns a Bracketed.  get_true_positive_rates(fpr) = 1 - beta(fpr)
    (beta_at); get_gdp_parameter_estimate() = gdp_mu (both estimates of the
    peer: its values are compared within its stated tolerance)."""

    def __init__(self, mine, rel=None):
        self.acc = mine.PLDAccountant() if rel is None else mine.PLDAccountant(rel)

    def compose(self, event, count=1):
        self.acc.compose(event, count)
        return self

    def get_delta(self, eps):
        lo, hi = self.acc.get_delta_bracket(eps)
        return Bracketed(lo, hi, "get_delta(%r)" % eps)

    def get_epsilon(self, delta):
        lo, hi = self.acc.get_epsilon_bracket(delta)
        return Bracketed(lo, hi, "get_epsilon(%r)" % delta)

    def get_true_positive_rates(self, fpr, **_):
        blo, bhi = self.acc.accountant.beta_at(float(fpr))
        return Bracketed(1 - bhi, 1 - blo, "tpr(%r) = 1 - beta" % fpr, "estimate")

    def get_gdp_parameter_estimate(self, **_):
        g = self.acc.accountant.gdp_mu()
        return Bracketed(g.lower, g.upper, "GDP mu", "estimate")


# Disagreements decided (kept as tests in python/tests/test_peer_values_dp_accounting_pld.py):
# PoissonSampledDpEvent(q, zero-noise event): the peer answers as for a
# non-private event (delta(1) = 1, tpr = 1).  With probability 1 - q the
# record is not used: in the remove direction P = (1 - q) Q + q R with R
# singular to Q, so H_x(P||Q) = q + ((1 - q) - x)_+ = q at x = e, and the add
# direction's H_e(Q||P) = (1 - e (1 - q))_+ = 0; delta(1) = q = 0.1 exactly.
# A test at false positive rate a has power at most a + delta(0) = a + q
# (delta(0) = q, the total variation): 0.2 at a = 0.1, not 1.  dpacct is right.
ZERO_NOISE_SUBSAMPLED = "decided: q = 0.1 subsampling of a zero-noise event; exact delta(1) = q = 0.1 " \
    "(R singular to Q: H_e(P||Q) = q, H_e(Q||P) = 0) and power <= fpr + q = 0.2: dpacct is right, the " \
    "peer treats the subsampled event as non-private"


class Recorder:
    """The peer test's `self`: its assertions classify the Bracketed values.
    estimates_only: the function's get_delta/get_epsilon asserts are
    bench/peer_suites.py's (dp_accounting_cases); only its true positive
    rate and GDP asserts are run here."""

    def __init__(self, tally, where_fmt, path, estimates_only=False, note=""):
        self.tally, self.where_fmt, self.path = tally, where_fmt, path
        self.estimates_only, self.note = estimates_only, note

    def _check(self, a, b, tol, exact_call):
        import sys
        line = sys._getframe(2).f_lineno
        mine, want = (a, b) if isinstance(a, Bracketed) else (b, a)
        if not isinstance(mine, Bracketed) or want is None:
            return
        if self.estimates_only and mine.what.startswith("get_"):
            return
        where = self.where_fmt % line
        if isinstance(want, Bracketed):
            # permute-and-flip against Laplace(1/eps): the peer uses the
            # Laplace pair for permute-and-flip, dpacct the pure eps pair
            # (docs/python.md: every eps-DP mechanism meets it); dpacct's
            # value is then at least the Laplace one
            ok = mine.hi >= want.lo - tol
            return self.tally.add("consistent" if ok else "disagree", where,
                                  "%s [%r, %r] (dpacct: the pure eps pair, an upper bound) vs the peer's "
                                  "Laplace pair, %s [%r, %r]" % (mine.what, mine.lo, mine.hi, want.what,
                                                                 want.lo, want.hi))
        v = float(want)
        inside = mine.lo - tol <= v <= mine.hi + tol or (math.isinf(v) and math.isinf(mine.hi))
        if inside or self.note:
            return classify(self.tally, where, "exact" if exact_call or mine.kind == "exact" else "estimate",
                            v, tol, mine.lo, mine.hi, mine.what + (" (%s)" % self.note if self.note else ""))
        if mine.what.startswith("get_"):
            # the peer's PLD accountant is pessimistic: its delta and epsilon
            # are upper estimates
            return classify(self.tally, where, "upper", v, tol, mine.lo, mine.hi,
                            mine.what + " (the peer's pessimistic PLD: an upper estimate)")
        classify(self.tally, where, "estimate", v, tol, mine.lo, mine.hi, mine.what)

    def assertEqual(self, a, b, msg=None):
        self._check(a, b, 0.0, True)

    def assertAlmostEqual(self, a, b, places=None, msg=None, delta=None):
        tol = delta if delta is not None else 0.5 * 10.0 ** -(7 if places is None else places)
        self._check(a, b, tol, False)

    def __getattr__(self, name):
        return lambda *a, **k: None


def pld_accountant_cases(src, tally):
    """Runs each test body's statements with the peer's events (its dp_event
    module, as bench/peer_suites.py does) and dpacct's accountant in place of
    the peer's: every get_delta / get_epsilon / true positive rate / GDP mu
    the body asserts is classified against dpacct's bracket."""
    rel, path = peer_file(src, "pld_privacy_accountant_test.py")
    if path is None:
        return
    if not dp_accounting_importable(src, "peer_suites_dpa_pld"):
        return
    from dp_accounting import dp_event, privacy_accountant
    from dpacct import dp_accounting as mine
    import numpy as np
    aside = {
        "test_composition_errors_for_neighboring_relation": "events the peer's accountant refuses under a "
            "neighbouring relation (an error raised; its numbers are the events' arguments)",
        "test_non_positive_composition_value_error": "composition counts the peer rejects (input validation)",
    }

    class NS:
        pass
    ppa = NS()
    ppa.NeighborRel = privacy_accountant.NeighboringRelation
    ppa.PLDAccountant = lambda rel=None, *a, **k: StandInAccountant(mine, rel)
    base = {"dp_event": dp_event, "math": math, "np": np, "pld_privacy_accountant": ppa,
            "privacy_accountant": privacy_accountant}
    covered = set(tally.covered)  # bench/peer_suites.py's dp_accounting_cases ran before
    tree = ast.parse(open(path, encoding="utf-8").read())
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef) or not fn.name.startswith("test"):
            continue
        if fn.name in aside:
            tally.set_aside(path, fn.name, aside[fn.name])
            continue
        names = [a.arg for a in fn.args.args[1:]]
        rows = []
        for dec in fn.decorator_list:
            if isinstance(dec, ast.Call) and call_name(dec) in ("parameters", "named_parameters"):
                for a in dec.args:
                    try:
                        v = eval(compile(ast.Expression(a), path, "eval"), dict(base))
                    except Exception:
                        continue
                    if call_name(dec) == "named_parameters" and isinstance(v, tuple):
                        v = v[1:]
                    v = v if isinstance(v, tuple) else (v,)
                    rows.append((a.lineno, dict(zip(names, v))))
        if not fn.decorator_list:
            rows = [(fn.lineno, {})]
        if not rows:
            continue
        before = sum(tally.counts.values())
        for line, row in rows:
            where = "dp_accounting/%s:%%d %s (case at line %d)" % (rel, fn.name, line)
            ev = row.get("event")
            zero = isinstance(ev, dp_event.PoissonSampledDpEvent) and ev.sampling_probability > 0 and \
                getattr(ev.event, "noise_multiplier", 1) == 0
            rec = Recorder(tally, where, path, estimates_only=(os.path.abspath(path), fn.name) in covered,
                           note=ZERO_NOISE_SUBSAMPLED if zero else "")
            env = dict(base, self=rec, **row)
            for st in fn.body:
                if isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant):
                    continue
                try:
                    exec(compile(ast.Module(body=[st], type_ignores=[]), path, "exec"), env)
                except Exception:
                    continue  # a statement on the peer's internals: skipped
        if sum(tally.counts.values()) > before:
            tally.cover(path, fn.name)


# ------------------------------------------------------ set aside whole ---

WHOLE_FILES = {
    "common_test.py": "the peer's numerical utilities (binary search for a monotone function's "
        "inverse, convolution and self-convolution of loss dictionaries with truncation, "
        "log(a e^b + c), log sinh, asinh exp, dictionary truncation) and its privacy-parameter "
        "object's input validation",
    "test_util_test.py": "the peer's test helpers (dictionary containment and almost-equality, "
        "almost-greater-equal) on literal dictionaries",
    "pld_pmf_test.py": "the peer's PMF class on hand-made arrays (its hockey-stick and inverse on "
        "literal loss/mass arrays, composition, self-composition, dense/sparse conversion, "
        "connect-the-dots construction from literal profiles, mixtures, truncation), not a "
        "mechanism's privacy quantity",
}


def set_aside_files(src, tally):
    for f, reason in WHOLE_FILES.items():
        path = os.path.join(src, REL, f)
        if os.path.exists(path):
            for fn in functions(path):
                tally.set_aside(path, fn.name, reason)


def cases(peers_dir, tally):
    src = os.path.join(peers_dir, "dp_accounting")
    if not os.path.isdir(os.path.join(src, REL)):
        return
    mechanism_cases(src, tally)
    set_aside_files(src, tally)
    accountant_test_cases(src, tally)
    pld_accountant_cases(src, tally)
    from peer_suites_dpa_pld_dist import dist_cases  # it imports this module's helpers
    dist_cases(src, tally)
