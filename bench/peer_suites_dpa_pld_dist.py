# SPDX-License-Identifier: GPL-3.0-or-later
"""dp_accounting's pld/privacy_loss_distribution_test.py through dpacct (issue
26, task PSPLD): the recognizer of its discretized PLDs, true positive rates
and GDP mu, called by peer_suites_dpa_pld.cases (whose docstring states the
mapping of mechanisms and directions).  Only the numbers of the peer's test
file are read (ast).

The pessimistic mass at index i (loss iD) is P(L in ((i-1)D, iD]), the
optimistic one P(L in [iD, (i+1)D)), both bracketed through loss_tail; the
connect-the-dots mass is fixed by the hockey-stick curve at (i-1)D, iD,
(i+1)D, as the discrete measure's curve equals the true one at the grid
points (Doroshenko et al. 2022, "Connect the dots", §3).

The mixture of Gaussians and the truncated Poisson-subsampled Gaussian
(task PS7): see the comments above check_mixture, truncated_matches and
truncated_dense for where the peer's cut puts the mass and which bound each
entry is held to; a disagreement is decided against a closed form
(mix_exact_entry).
"""
import ast
import math
from fractions import Fraction

from peer_suites import classify

from peer_suites_dpa_pld import (TOL7, accountant, body_keyword, body_positional, decorator_rows, dir_delta, mog_spec,
                                 raw_delta,
                                 functions, leaf, mech_spec, peer_file, tail)


# ------------------------------------------ privacy_loss_distribution_test ---

ETA = 1e-9  # P(L >= t) <= P(L > t - ETA): the left limit of the tail


def sf_ge(acc, t, d):
    """[lo, hi] on P(L >= t)."""
    return tail(acc, t, d)[0], tail(acc, t - ETA, d)[1]


def cell_mass(acc, d, D, i, mode):
    """[lo, hi] on the discretized mass at index i (loss iD)."""
    if mode == "pessimistic":  # P(L in ((i-1)D, iD])
        a, b = tail(acc, (i - 1) * D, d), tail(acc, i * D, d)
        return max(0.0, a[0] - b[1]), a[1] - b[0]
    if mode == "optimistic":   # P(L in [iD, (i+1)D))
        a, b = sf_ge(acc, i * D, d), sf_ge(acc, (i + 1) * D, d)
        return max(0.0, a[0] - b[1]), a[1] - b[0]
    # connect-the-dots: m_i = e^{iD} (slope right - slope left) of h(x) = H_x at x = e^{kD}
    h = [dir_delta(acc, k * D, d) for k in (i - 1, i, i + 1)]
    x = [math.exp(k * D) for k in (i - 1, i, i + 1)]
    right = ((h[2][0] - h[1][1]) / (x[2] - x[1]), (h[2][1] - h[1][0]) / (x[2] - x[1]))
    left = ((h[1][0] - h[0][1]) / (x[1] - x[0]), (h[1][1] - h[0][0]) / (x[1] - x[0]))
    e = x[1] * (1 + 1e-15)
    return max(0.0, (right[0] - left[1]) * x[1] - 1e-15), (right[1] - left[0]) * e + 1e-15


def check_pmf(tally, where, acc, d, D, pmf, mode, tol=TOL7):
    """Each entry of the peer's discretized PLD: interior entries "exact"
    against the mass's bracket; the lowest and highest entries (where the
    peer's truncation puts the tails) "consistent" when at most the mass of
    the losses below the next grid point (above the previous one)."""
    keys = sorted(k for k, v in pmf.items() if v > 0)
    if not keys:
        return
    for i in keys:
        m = pmf[i]
        w = "%s %s D=%g [%d]" % (where, d, D, i)
        if i in (keys[0], keys[-1]) and len(keys) > 1 or (len(keys) == 1):
            if i == keys[0]:
                bound = 1 - tail(acc, (i + 1) * D, d)[0] if mode != "pessimistic" else 1 - tail(acc, i * D, d)[0]
            else:
                bound = tail(acc, (i - 1) * D, d)[1] if mode != "optimistic" else sf_ge(acc, i * D, d)[1]
            ok = m <= bound + tol
            tally.add("consistent" if ok else "disagree", w,
                      "%s mass at the edge %g = %r <= the loss's mass beyond it %r (the peer's truncation "
                      "adds its tail here)" % (mode, i * D, m, bound))
            continue
        lo, hi = cell_mass(acc, d, D, i, mode)
        classify(tally, w, "exact", m, tol, lo, hi, "%s PLD mass at loss %g" % (mode, i * D))


DIST_ASIDE = {
    "test_from_two_probability_mass_functions": "the peer's PLD built from two literal log-PMFs (its "
        "discretization and truncation of hand-made distributions)",
    "test_compute_mixture": "the peer's mixture of two literal PLD objects (PMF arithmetic)",
    "test_init_errors": "arguments the peer's PLD class rejects (input validation)",
    "test_hockey_stick_basic": "hockey-stick of hand-made PMFs given as literal dictionaries (the peer's PMF class)",
    "test_hockey_stick_unequal_support": "hockey-stick of hand-made PMFs given as literal dictionaries "
        "(the peer's PMF class)",
    "test_composition": "composition of hand-made PLD objects from literal dictionaries (PMF arithmetic)",
    "test_composition_asymmetric_with_symmetric": "composition of hand-made PLD objects (PMF arithmetic)",
    "test_self_composition": "self-composition of a hand-made PLD object (PMF arithmetic)",
    "test_identity": "the identity PLD object (PMF plumbing)",
    "test_subsampled_gaussian_does_not_overflow": "no stated value (overflow check of the peer's code)",
    "test_mixture_gaussian_does_not_overflow": "no stated value (overflow check of the peer's code)",
    "test_truncated_gaussian_does_not_overflow": "no stated value (overflow check of the peer's code)",
    "test_discrete_gaussian_truncation": None,  # TDG's
}


def dist_cases(src, tally):
    rel, path = peer_file(src, "privacy_loss_distribution_test.py")
    if path is None:
        return
    for fn in functions(path):
        name = fn.name
        if name in DIST_ASIDE:
            if DIST_ASIDE[name]:
                tally.set_aside(path, name, DIST_ASIDE[name])
            continue
        if name.endswith("_value_errors"):
            tally.set_aside(path, name, "parameters the peer rejects (input validation)")
            continue
        kind = next((k for k in ("discrete_laplace", "discrete_gaussian", "laplace", "mixture_gaussian",
                                 "truncated_gaussian", "gaussian", "randomized_response")
                     if name.startswith("test_%s_" % k)), None)
        if kind == "truncated_gaussian":
            (truncated_matches if name == "test_truncated_gaussian_matches_gaussian" else truncated_dense)(
                tally, path, rel, fn)
            continue
        rows = decorator_rows(fn, path)
        done = False
        for line, row in rows:
            where = "dp_accounting/%s:%d %s" % (rel, line, name)
            if kind == "randomized_response" and name.endswith(("_tpr", "_tpr_at_extreme_fprs", "_mu")):
                nu = row.get("noise_parameter", body_positional(fn, "from_randomized_response", 0))
                kb = row.get("num_buckets", body_positional(fn, "from_randomized_response", 1) or 2)
                acc = accountant({"randomized_response": {"p": 1 - nu + nu / kb, "k": kb}})
                if name.endswith("_mu"):
                    g = acc.gdp_mu()
                    ok = 0.99 * row["expected_mu"] <= g.upper and g.lower <= 1.01 * row["expected_mu"]
                    tally.add("consistent" if ok else "disagree", where, "GDP mu ~ %r (within 1%%), dpacct [%r, %r]"
                              % (row["expected_mu"], g.lower, g.upper))
                else:
                    fpr, tpr = row["fpr"], row["expected_tpr"]
                    blo, bhi = acc.beta_at(fpr)
                    classify(tally, where, "estimate", tpr, 1e-3 * tpr, 1 - bhi, 1 - blo,
                             "tpr(%g) = 1 - beta of RR(nu %g, k %d)" % (fpr, nu, kb))
                done = True
                continue
            if kind == "gaussian" and name in ("test_gaussian_gdp", "test_gaussian_tpr_at_extreme_fpr"):
                if name == "test_gaussian_gdp":
                    acc = accountant(leaf("gaussian", 1.0, row["mu"]))
                    g = acc.gdp_mu()
                    classify(tally, where, "estimate", row["mu"], 0.5e-3, g.lower, g.upper, "GDP mu")
                else:
                    acc = accountant(leaf("gaussian", 1.0, 1.0))
                    blo, bhi = acc.beta_at(row["fpr"])
                    classify(tally, where, "estimate", row["tpr"], 1e-3 * row["tpr"], 1 - bhi, 1 - blo,
                             "tpr(%g) = 1 - beta, Gaussian mu 1" % row["fpr"])
                done = True
                continue
            D = row.get("value_discretization_interval") or body_keyword(fn, "value_discretization_interval")
            cd = body_keyword(fn, "use_connect_dots")
            mode = "optimistic" if name.endswith("_optimistic") else "connect_dots" if (cd or cd is None and
                                                                                     "connect_dots" in name) \
                else "pessimistic"
            rel_nb = row.get("neighbor_rel", "add_remove")
            q = row.get("sampling_prob", body_keyword(fn, "sampling_prob") or 1.0)
            if kind == "randomized_response":
                nu = row.get("noise_parameter", body_positional(fn, "from_randomized_response", 0))
                kb = row.get("num_buckets", body_positional(fn, "from_randomized_response", 1))
                spec = {"randomized_response": {"p": 1 - nu + nu / kb, "k": kb}}
                if rel_nb == "replace_special":  # the report on x against the uniform report on the special record
                    spec["neighboring"] = "replace_special"
                pmfs = [("remove", row.get("expected_rounded_pmf"))]
            elif kind == "mixture_gaussian":
                sd = row.get("standard_deviation", body_keyword(fn, "standard_deviation"))
                sens = row.get("sensitivities", body_keyword(fn, "sensitivities"))
                probs = row.get("sampling_probs", body_keyword(fn, "sampling_probs"))
                try:
                    acc = accountant(mog_spec(sd, sens, probs))
                    for d in ("add", "remove"):
                        pmf = row.get("expected_rounded_pmf_%s" % d, row.get("expected_%s_pmf" % d))
                        check_mixture(tally, where, acc, d, D, pmf, mode, sd, sens, probs,
                                      row.get("expected_%s_infinity_mass" % d))
                except Exception as e:
                    tally.add("inexpressible", where, "%s: %s" % (type(e).__name__, e))
                done = True
                continue
            else:
                pname = {"laplace": "parameter", "discrete_laplace": "parameter", "gaussian": "standard_deviation",
                         "discrete_gaussian": "sigma"}[kind]
                callee = {"laplace": "from_laplace_mechanism", "discrete_laplace": "from_discrete_laplace_mechanism",
                          "gaussian": "from_gaussian_mechanism",
                          "discrete_gaussian": "from_discrete_gaussian_mechanism"}[kind]
                param = row.get(pname, body_positional(fn, callee, 0))
                sens = row.get("sensitivity", body_keyword(fn, "sensitivity") or 1)
                if rel_nb == "replace_one":
                    spec = mech_spec(kind, param, sens, q, "replace")
                else:
                    spec = mech_spec(kind, param, sens, q)
                tb = row.get("truncation_bound", body_keyword(fn, "truncation_bound"))
                if kind == "discrete_gaussian" and tb is not None:
                    # the peer's truncated discrete Gaussian (dpacct's "truncation" key)
                    dg = spec["poisson"]["event"] if "poisson" in spec else spec
                    dg["discrete_gaussian"]["truncation"] = int(tb)
                    if D is None:
                        D = 1e-4  # from_discrete_gaussian_mechanism's default interval
                if "expected_rounded_pmf_add" in row:
                    pmfs = [("add", row["expected_rounded_pmf_add"]), ("remove", row.get("expected_rounded_pmf_remove"))]
                    if pmfs[1][1] is None:
                        pmfs = [("remove", row["expected_rounded_pmf_add"])]  # symmetric
                else:
                    pmfs = [("remove", row.get("expected_rounded_pmf"))]
            if D is None:
                continue
            try:
                acc = accountant(spec)
                for d, pmf in pmfs:
                    if pmf:
                        check_pmf(tally, where, acc, d, D, pmf, mode)
            except Exception as e:
                tally.add("inexpressible", where, "%s: %s" % (type(e).__name__, e))
            done = True
        if done:
            tally.cover(path, name)


# ------------------------------------- mixture of Gaussians, truncated Poisson ---
# (task PS7) Where the peer's cut goes, read from its pld code:
# pessimistic (privacy buckets): the noise x is cut to [lower_x, upper_x]; the
# mass below lower_x (loss above L(lower_x) = b) goes to the infinity mass, the
# mass above upper_x (loss below L(upper_x) = a) to the cell holding a (the loss
# is decreasing in x).  So with F(t) = P(L <= t), c_up = F(a), c_lo = 1 - F(b):
#   entry i = [F(min(iD, b)) - F(max((i-1)D, a))]^+ + [(i-1)D < a <= iD] c_up.
# For the ADD pair x ~ N(0, s) and lower_x = -upper_x = Phi^-1(t) s with t =
# 0.5 exp(log_mass_truncation_bound) (= Phi(-0.9) in these tests): c_up = c_lo = t.
# For REMOVE x ~ sum p_j N(-s_j, s): upper_x = -Phi^-1(t) s, c_up = sum p_j
# Phi(Phi^-1(t) - s_j / s); lower_x is a binary search's left end within 1e-4 of
# the t-quantile, so c_lo is in [t - 1e-4 / (s sqrt(2 pi)), t].
# connect-the-dots: on the grid n_lo..n_hi (the peer's keys) every entry is a
# fixed combination of the true hockey-stick values delta_j = H_{e^{jD}}
# (Doroshenko et al. 2022, the fixed-gap formulas): lowest 1 - delta_lo +
# (delta_lo+1 - delta_lo) / (e^D - 1), highest (delta_n-1 - delta_n) / (1 - e^-D),
# infinity mass delta_n, interior as cell_mass.

MIX_TAIL = 0.5 * math.exp(math.log(2) + math.log(0.5 * math.erfc(0.9 / math.sqrt(2))))  # Phi(-0.9)


def _phi(z):
    return 0.5 * math.erfc(-z / math.sqrt(2))


def _mix_cuts(d, sd, sens, probs):
    """[lo, hi] on c_up and c_lo (see above); the erfc values carry ~1e-16."""
    t, z = MIX_TAIL, -0.9  # Phi^-1(t) for the tests' bound log 2 + log Phi(-0.9)
    if d == "add":
        return (t, t), (t, t)
    cu = sum(p * _phi(z - s / sd) for s, p in zip(sens, probs))
    return (cu - 1e-15, cu + 1e-15), (t - 1e-4 / (sd * math.sqrt(2 * math.pi)), t)


SEC = 3e-4  # the secant step in eps of mix_tail


def mix_tail(acc, t, d):
    """[lo, hi] on P(L > t): loss_tail's bracket (loose for a mixture) cut by
    the hockey-stick curve's secants.  h(x) = H_x is convex and decreasing
    with h'(x+) = -Q(L > log x), so P(L > t) = h(x) - x h'(x+) at x = e^t
    and the secants over [x e^-SEC, x] and [x, x e^SEC] bound h'(x+)."""
    lo, hi = tail(acc, t, d)
    x, xm, xp = math.exp(t), math.exp(t - SEC), math.exp(t + SEC)
    hm, h0, hp = (dir_delta(acc, e, d) for e in (t - SEC, t, t + SEC))
    left_lo = (h0[0] - hm[1]) / (x - xm)      # left secant <= h'(x-) <= h'(x+)
    right_hi = (hp[1] - h0[0]) / (xp - x)     # h'(x+) <= right secant
    slo = h0[0] - x * right_hi * (1 - 1e-12) - 1e-15
    shi = h0[1] - x * left_lo * (1 + 1e-12) + 1e-15
    return max(lo, slo), min(hi, shi)


def _cmp(acc, d, t, level):
    """-1 if F(t) < level[0], +1 if F(t) > level[1] (certified), else None."""
    lo, hi = mix_tail(acc, t, d)
    if 1 - lo < level[0]:
        return -1
    if 1 - hi > level[1]:
        return 1
    return None


def _pess_entry(acc, d, D, i, cu, cl):
    """[lo, hi] on the peer's pessimistic entry i under its cut, or None when
    dpacct's brackets cannot place the cut points against the cell edges."""
    l, u = (i - 1) * D, i * D
    top_level = (1 - cl[1], 1 - cl[0])  # F(b)
    cu_b, cl_b = _cmp(acc, d, u, top_level), _cmp(acc, d, l, cu)
    ua, lb = _cmp(acc, d, u, cu), _cmp(acc, d, l, top_level)
    if None in (cu_b, cl_b, ua, lb):
        return None
    if ua < 0 or lb > 0:  # the cell lies below a or above b
        top, bot = (0.0, 0.0), (0.0, 0.0)
    else:
        tu = mix_tail(acc, u, d)
        top = (1 - tu[1], 1 - tu[0]) if cu_b < 0 else top_level
        tl = mix_tail(acc, l, d)
        bot = (1 - tl[1], 1 - tl[0]) if cl_b > 0 else cu
    lo, hi = max(0.0, top[0] - bot[1]), max(0.0, top[1] - bot[0])
    if cl_b < 0 and ua > 0:  # (i-1)D < a <= iD: the cut mass above upper_x lands here
        lo, hi = lo + cu[0], hi + cu[1]
    return lo, hi


def check_mixture(tally, where, acc, d, D, pmf, mode, sd, sens, probs, inf_mass=None, tol=TOL7):
    keys = sorted(pmf)

    def judge(w, kind, i, lo, hi, what):
        m = pmf[i]
        ex = mix_exact_entry(d, D, i, mode, keys, sd, sens, probs)
        # a wide bracket is cut by the closed form (REMOVE's c_lo: the nominal t, within 4e-5)
        if lo - tol <= m <= hi + tol and (kind == "exact" or abs(ex - m) <= 1e-4 + tol):
            return classify(tally, w, kind, m, tol, lo, hi, what)
        ok = lo - 1e-9 <= ex <= hi + 1e-9 and abs(ex - m) > tol
        why = (" the peer's value comes from value_discretization_interval=1 passed as an int: its loss grid "
               "is then an integer array and the x cut-offs computed into it are cast to integers (with 1.0 "
               "the peer gives the exact value)" if isinstance(D, int) else "")
        tally.add("disagree", w, "%s = %r, dpacct [%r, %r]; %s (closed form %.9f).%s" % (
            what, m, lo, hi, "decided: dpacct right" if ok else "NOT decided", ex, why))
    if mode == "pessimistic":
        cu, cl = _mix_cuts(d, sd, sens, probs)
        for i in keys:
            w = "%s %s D=%g [%d]" % (where, d, D, i)
            b = _pess_entry(acc, d, D, i, cu, cl)
            if b is None:  # a correct inequality: the cell's mass moved by at most the cut masses
                lo, hi = cell_mass(acc, d, D, i, "pessimistic")
                b = (max(0.0, lo - cl[1] - cu[1]), hi + cu[1])
                judge(w, "estimate", i, b[0], b[1],
                      "pessimistic mass at %g, within the cell's mass -/+ the cut masses" % (i * D))
            elif b[1] - b[0] > 1e-6:  # c_lo known to the peer's binary search only
                judge(w, "estimate", i, b[0], b[1],
                      "pessimistic mass at %g under the peer's cut (c_lo within its search's 1e-4)" % (i * D))
            else:
                judge(w, "exact", i, b[0], b[1], "pessimistic mass at %g under the peer's cut" % (i * D))
        return
    lo_k, hi_k = keys[0], keys[-1]
    dl = {k: dir_delta(acc, k * D, d) for k in range(lo_k - 1, hi_k + 2)}
    for i in keys:
        w = "%s %s D=%g [%d]" % (where, d, D, i)
        if i == lo_k:
            a, b = dl[i], dl[i + 1]
            k = 1 / math.expm1(D)
            lo, hi = 1 - a[1] + (b[0] - a[1]) * k * (1 + 1e-15), 1 - a[0] + (b[1] - a[0]) * k * (1 - 1e-15)
        elif i == hi_k:
            a, b = dl[i - 1], dl[i]
            k = 1 / -math.expm1(-D)
            lo, hi = (a[0] - b[1]) * k * (1 - 1e-15), (a[1] - b[0]) * k * (1 + 1e-15)
        else:
            lo, hi = cell_mass(acc, d, D, i, mode)
        judge(w, "exact", i, max(0.0, lo), hi + 1e-15,
              "connect-the-dots mass at %g (grid %d..%d)" % (i * D, lo_k, hi_k))
    if inf_mass is not None:
        a = dl[hi_k]
        classify(tally, "%s %s D=%g [inf]" % (where, d, D), "exact", inf_mass, tol, a[0], a[1],
                 "connect-the-dots infinity mass = delta at %g" % (hi_k * D))


def _dict_rows(fn):
    """The dicts of a named_parameters decorator, read without evaluating the
    peer's calls: literals as values, an attribute as its name, a call as the
    dict of its literal keywords."""
    out = []
    for dec in fn.decorator_list:
        for a in getattr(dec, "args", []):
            if not isinstance(a, ast.Dict):
                continue
            row = {}
            for k, v in zip(a.keys, a.values):
                if isinstance(v, ast.Attribute):
                    row[k.value] = v.attr
                elif isinstance(v, ast.Call):
                    row[k.value] = {kw.arg: (kw.value.attr if isinstance(kw.value, ast.Attribute)
                                             else ast.literal_eval(kw.value)) for kw in v.keywords}
                else:
                    row[k.value] = ast.literal_eval(v)
            out.append((a.lineno, row))
    return out


REL = {"ADD_OR_REMOVE_ONE": "add_remove", "REPLACE_ONE": "replace", "REPLACE_SPECIAL": "replace_special"}
EPS_GRID = (0.0, 0.5, 1.0, 2.0)


def trunc_spec(q, b, n, sd):
    return {"truncated_poisson": {"rate": float(q), "max_batch": int(b), "n": int(n),
                                  "event": {"gaussian": {"sigma": float(sd), "sensitivity": 1.0}}}}


def truncated_matches(tally, path, rel, fn):
    """The peer asserts its truncated PLD equals from_gaussian_mechanism's at
    the extremes; dpacct's side: the truncated_poisson leaf's certified delta
    against the Gaussian spec the peer names, at EPS_GRID.  B >= N: the same
    mechanism (exact when the brackets overlap); under REPLACE_ONE /
    REPLACE_SPECIAL (truncated_poisson is add_remove only) the mechanism with
    B >= N is the Poisson-subsampled Gaussian, accounted as poisson(gaussian)
    under that relation.  B < N with Q = 1: every batch is cut to B, the peer's
    REPLACE_ONE Gaussian (sensitivity 2) is its stated upper bound, so dpacct's
    truncated lower bound must not exceed the replace spec's upper bound."""
    for line, row in _dict_rows(fn):
        where = "dp_accounting/%s:%d %s[%s]" % (rel, line, fn.name, row.get("testcase_name", ""))
        n, q, b, sd = row["dataset_size"], row["sampling_probability"], row["truncated_batch_size"], \
            row["noise_multiplier"]
        g = row["gaussian_pld"]
        gq, gs = g.get("sampling_prob", 1.0), g.get("sensitivity", 1.0)
        grel = REL[g.get("neighboring_relation", "ADD_OR_REMOVE_ONE")]
        if grel == "replace":
            gspec = mech_spec("gaussian", g["standard_deviation"], gs, gq, "replace")
        else:
            gspec = mech_spec("gaussian", g["standard_deviation"], gs, gq)
            if grel == "replace_special":
                gspec["neighboring"] = "replace_special"
        nrel = REL[row["neighboring_relation"]]
        if nrel == "add_remove":
            mine = trunc_spec(q, b, n, sd)
        else:  # B >= N: poisson(gaussian) under the row's relation
            assert b >= n
            mine = mech_spec("gaussian", sd, 1.0, q, "replace") if nrel == "replace" else \
                dict(mech_spec("gaussian", sd, 1.0, q), neighboring="replace_special")
        try:
            a1, a2 = accountant(mine), accountant(gspec)
            for eps in EPS_GRID:
                r1, r2 = raw_delta(a1, eps), raw_delta(a2, eps)
                w = "%s eps=%g" % (where, eps)
                if b >= n:
                    ok = r1.lower <= r2.upper + 1e-12 and r2.lower <= r1.upper + 1e-12
                    tally.add("exact" if ok else "disagree", w,
                              "delta of %s [%r, %r] = delta of %s [%r, %r] (the peer's equality)"
                              % (list(mine)[0], r1.lower, r1.upper, list(gspec)[0], r2.lower, r2.upper))
                else:
                    ok = r1.lower <= r2.upper + 1e-12
                    tally.add("consistent" if ok else "disagree", w,
                              "truncated_poisson delta [%r, %r] <= the peer's REPLACE_ONE Gaussian (q %g, "
                              "sensitivity %g) [%r, %r] (a pessimistic PLD)" % (r1.lower, r1.upper, gq, gs,
                                                                              r2.lower, r2.upper))
        except Exception as e:
            tally.add("inexpressible", where, "%s: %s" % (type(e).__name__, e))
    tally.cover(path, fn.name)


def truncated_dense(tally, path, rel, fn):
    """The peer's truncated PLD for B < N is the mixture (weight p_T) of two
    discretized Gaussian PLDs, the truncated part a REPLACE_ONE upper bound:
    a pessimistic PLD.  Each entry index j is checked through the hockey stick
    the peer's dense PMF gives at loss jD (infinity mass 1 - sum of the
    entries): at least a certified lower bound on the truncated mechanism's
    delta at eps = jD (what a pessimistic PLD implies), from the two parts of
    the labelled mixture that dpacct's truncated_poisson leaf accounts."""
    mode = "connect_dots" if fn.name.endswith("connect_dots") else "pessimistic"
    for line, row in decorator_rows(fn, path) or _dict_rows(fn):
        where = "dp_accounting/%s:%d %s[%s]" % (rel, line, fn.name, row.get("testcase_name", ""))
        q, b, n, sd = row["sampling_probability"], row["truncated_batch_size"], row["dataset_size"], \
            row["standard_deviation"]
        acc = accountant(trunc_spec(q, b, n, sd))
        # the truncated_poisson leaf's delta has no lower bound: take the labelled
        # mixture's parts (docs/mechanisms.md §3), delta = (1 - p_T) delta(q, mu) +
        # p_T delta(q_T, 2 mu), p_T = P(Bin(N-1, q) >= B), q_T = B P(Bin(N, q) > B) / (N p_T)
        # (exact fractions; q_T rounded down for the lower bound, up for the upper)
        fq = Fraction(q)
        p_t = sum(math.comb(n - 1, k) * fq ** k * (1 - fq) ** (n - 1 - k) for k in range(b, n))
        q_t = b * sum(math.comb(n, k) * fq ** k * (1 - fq) ** (n - k) for k in range(b + 1, n + 1)) / (n * p_t)
        part1 = accountant(mech_spec("gaussian", sd, 1.0, q))
        part2 = [accountant(mech_spec("gaussian", sd, 2.0, float(q_t) * f)) for f in (1 - 1e-15, 1 + 1e-15)]
        pt = float(p_t)
        for d in ("remove", "add"):
            probs, l0 = row["expected_%s_probs" % d], row["expected_%s_lower_loss" % d]
            inf = max(0.0, 1 - math.fsum(probs))
            for k in range(len(probs)):
                eps = (l0 + k) * 1.0
                h = inf + math.fsum(p * -math.expm1(eps - (l0 + m)) for m, p in enumerate(probs) if l0 + m > eps)
                a, b_lo, b_hi = dir_delta(part1, eps, d), dir_delta(part2[0], eps, d), dir_delta(part2[1], eps, d)
                lo = max(0.0, ((1 - pt) * a[0] + pt * b_lo[0]) * (1 - 1e-15) - 1e-15)
                hi = min(dir_delta(acc, eps, d)[1], ((1 - pt) * a[1] + pt * b_hi[1]) * (1 + 1e-15) + 1e-15)
                classify(tally, "%s %s [%d]" % (where, d, l0 + k), "upper", h, 1e-7, lo, hi,
                         "%s PLD's delta at eps %g (entries through index %d)" % (mode, eps, l0 + k))
    tally.cover(path, fn.name)


# -- the independent computation that decides the disagreements (closed form) --
# The mixture's loss is decreasing in x; with x*(t) the point where L = t
# (bisection in double precision, ~1e-13): ADD  P(L > t) = Phi(x*/s),
# Q(L > t) = sum p_j Phi((x* - s_j)/s); REMOVE  P(L > t) = sum p_j Phi((x* + s_j)/s),
# Q(L > t) = Phi(x*/s); delta(eps) = P(L > eps) - e^eps Q(L > eps).

def _mix_loss(d, x, sd, sens, probs):
    v = sd * sd
    if d == "add":
        return -math.log(math.fsum(p * math.exp((2 * s * x - s * s) / (2 * v)) for s, p in zip(sens, probs)))
    return math.log(math.fsum(p * math.exp((-2 * s * x - s * s) / (2 * v)) for s, p in zip(sens, probs)))


def _mix_pq(d, t, sd, sens, probs):
    """(P(L > t), Q(L > t)) in closed form."""
    lo, hi = -30.0 * sd - max(sens), 30.0 * sd + max(sens)
    if _mix_loss(d, lo, sd, sens, probs) <= t:
        xs = -math.inf
    elif _mix_loss(d, hi, sd, sens, probs) > t:
        xs = math.inf
    else:
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if _mix_loss(d, mid, sd, sens, probs) > t:
                lo = mid
            else:
                hi = mid
        xs = lo
    if d == "add":
        return _phi(xs / sd), math.fsum(p * _phi((xs - s) / sd) for s, p in zip(sens, probs))
    return math.fsum(p * _phi((xs + s) / sd) for s, p in zip(sens, probs)), _phi(xs / sd)


def mix_exact_entry(d, D, i, mode, keys, sd, sens, probs):
    """The entry the peer's algorithm gives on exact inputs (closed form)."""
    if mode == "pessimistic":
        (cu, _), (_, cl) = _mix_cuts(d, sd, sens, probs)  # c_lo: the nominal t (REMOVE: within 4e-5)
        F = lambda t: 1 - _mix_pq(d, t, sd, sens, probs)[0]
        l, u = (i - 1) * D, i * D
        b_top = min(F(u), 1 - cl)
        bot = max(F(l), cu)
        m = max(0.0, b_top - bot)
        if F(l) < cu <= F(u):
            m += cu
        return m
    dl = lambda k: (lambda pq: pq[0] - math.exp(k * D) * pq[1])(_mix_pq(d, k * D, sd, sens, probs))
    if i == keys[0]:
        return 1 - dl(i) + (dl(i + 1) - dl(i)) / math.expm1(D)
    if i == keys[-1]:
        return (dl(i - 1) - dl(i)) / -math.expm1(-D)
    return ((dl(i + 1) - dl(i)) - math.exp(D) * (dl(i) - dl(i - 1))) / math.expm1(D)
