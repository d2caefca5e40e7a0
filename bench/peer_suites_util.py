# SPDX-License-Identifier: GPL-3.0-or-later
"""Helpers of the peer_suites recognizer modules (peer_suites_rdp.py,
peer_suites_others.py; issue 26): reading a peer's test file (its test
functions, decorator parameter tables, literal assignments), the dpacct side
of an RDP expectation (the RDP at an order as a bracket; dp_accounting's
REPLACE_SPECIAL randomized response as two privacy_loss tables), the row
classifications for RDP values and asserted identities, and the references
computed apart from dpacct (log A of the subsampled Gaussian by quadrature,
the Gaussian's delta in 60-digit Decimal, the bounded-range class's KL).
python/tests/test_peer_values_others.py uses the references and the RDP
brackets."""
import ast
import itertools
import math

from peer_suites import classify, call_name

DPA_PKG = "dp_accounting"  # the package folder inside the fetched dp_accounting source


# ------------------------------------------------------------- parsing ---

def test_functions(path):
    """name -> FunctionDef of the test functions of a file (first of a name),
    and the class-level / module-level simple assignments as source."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    fns, assigns = {}, []
    for n in ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test"):
            fns.setdefault(n.name, n)
        if isinstance(n, (ast.Module, ast.ClassDef)):
            assigns += [s for s in n.body if isinstance(s, ast.Assign)]
    return tree, fns, assigns


def eval_node(node, ns):
    return eval(compile(ast.Expression(node), "<peer test>", "eval"), ns)


def namespace(assigns, ns):
    for s in assigns:
        try:
            v = eval_node(s.value, ns)
        except Exception:
            continue
        for t in s.targets:
            if isinstance(t, ast.Name):
                ns[t.id] = v
    return ns


def param_cases(fn, ns):
    """The parameter cases of a test: a list of dicts keyed by argument name,
    from absl parameters / named_parameters / product and pytest parametrize."""
    names = [a.arg for a in fn.args.args if a.arg != "self"]
    cases = None
    for d in fn.decorator_list:
        if not isinstance(d, ast.Call):
            continue
        k = call_name(d)
        if k in ("parameters", "named_parameters"):
            rows = []
            for a in d.args:
                v = eval_node(a, ns)
                vs = list(v) if isinstance(a, ast.GeneratorExp) else [v]
                for r in vs:
                    if isinstance(r, dict):
                        rows.append(dict(r))
                        continue
                    r = tuple(r) if isinstance(r, (tuple, list)) else (r,)
                    if k == "named_parameters":
                        r = r[1:]
                    rows.append(dict(zip(names, r)))
            cases = (cases or [{}])
            cases = [dict(c, **r) for c in cases for r in rows]
        elif k == "product":
            keys = [kw.arg for kw in d.keywords]
            vals = [list(eval_node(kw.value, ns)) for kw in d.keywords]
            rows = [dict(zip(keys, combo)) for combo in itertools.product(*vals)]
            cases = [dict(c, **r) for c in (cases or [{}]) for r in rows]
        elif k == "parametrize" and len(d.args) == 2:
            keys = [x.strip() for x in eval_node(d.args[0], ns).split(",")]
            rows = []
            for v in eval_node(d.args[1], ns):
                rows.append(dict(zip(keys, v if len(keys) > 1 else (v,))))
            cases = [dict(c, **r) for c in (cases or [{}]) for r in rows]
    return cases or []


def body_env(fn, ns):
    """The test body's simple assignments evaluated in order (what fails to
    evaluate, e.g. a call of the peer's code, is left out)."""
    env = dict(ns)
    for st in fn.body:
        if isinstance(st, ast.Assign) and len(st.targets) == 1:
            try:
                v = eval_node(st.value, env)
            except Exception:
                continue
            t = st.targets[0]
            if isinstance(t, ast.Name):
                env[t.id] = v
            elif isinstance(t, ast.Tuple) and isinstance(v, tuple) and len(v) == len(t.elts):
                for e, x in zip(t.elts, v):
                    if isinstance(e, ast.Name):
                        env[e.id] = x
    return env


def assert_line(fn, names=("assertAlmostEqual", "assertEqual", "assertTrue", "assertLess",
                     "assertLessEqual", "assertGreater", "assertGreaterEqual", "assert_allclose",
                     "assertSequenceAlmostEqual", "assertBetween", "approx")):
    for n in ast.walk(fn):
        if isinstance(n, ast.Call) and call_name(n) in names:
            return n.lineno
        if isinstance(n, ast.Assert):
            return n.lineno
    return fn.lineno


def asserts_of(fn, names):
    return [n for n in ast.walk(fn) if isinstance(n, ast.Call) and call_name(n) in names]


# ---------------------------------------------------------- dpacct side ---

def dpacct_module():
    import dpacct
    return dpacct


def rdp_bracket(spec, order):
    """(lower, upper) of the RDP at `order`: the larger of the two directions'
    Renyi divergences (order inf: the pure epsilon, largest privacy loss)."""
    dpacct = dpacct_module()
    if math.isinf(order):
        r = dpacct.Accountant(spec).epsilon(0.0)
        return r.lower, r.upper
    r = dpacct.renyi(spec, order)
    return max(r.remove.lower, r.add.lower), max(r.remove.upper, r.add.upper)


def renyi_remove(spec, order):
    r = dpacct_module().renyi(spec, order)
    return r.remove.lower, r.remove.upper


def rr_special_interop(p, k):
    """dp_accounting's RandomizedResponseDpEvent(p, k) under REPLACE_SPECIAL
    through the interop (dpacct.from_dp_event): a spec dict."""
    from dpacct import from_dp_event
    from dp_accounting import dp_event, privacy_accountant as pa
    return from_dp_event(dp_event.RandomizedResponseDpEvent(p, k),
                         pa.NeighboringRelation.REPLACE_SPECIAL).to_dict()


def special_tables(d):
    """The REPLACE_SPECIAL randomized-response pair (R(x) against the uniform
    report), given as the interop's privacy_loss table d (remove direction),
    and the reversed table (U against R(x)): losses negated, masses the
    table's Q-masses mass * e^-loss.  Each table's remove-direction
    divergence is one direction of the pair."""
    if "privacy_loss" not in d:
        return d, d
    t = d["privacy_loss"]
    rev = {"privacy_loss": {"loss": [-x for x in t["loss"]],
                            "mass": [m * math.exp(-x) for x, m in zip(t["loss"], t["mass"])]}}
    return {"privacy_loss": t}, rev


_BIG_ORDER = 1e8


def nudged_renyi(table, order):
    """The table's remove-direction D_A, bracketed.  A table's masses sum to 1
    only up to rounding (2^-52), and a shortfall is read as a phantom atom at
    loss +inf (docs/spec.md, privacy_loss) that makes D_A +inf; then the
    largest mass is raised by one ulp (up to 4 times) until the sum is read
    as 1: the pair changes by ~1e-16 of mass, far below the peers'
    tolerances (rtol 1e-4, 7 places).  Returns (lower, upper, ulps)."""
    dpacct = dpacct_module()
    t = {"loss": list(table["privacy_loss"]["loss"]), "mass": list(table["privacy_loss"]["mass"])}
    i = max(range(len(t["mass"])), key=lambda j: t["mass"][j])
    for ulps in range(5):
        r = dpacct.renyi({"privacy_loss": t}, order).remove
        if math.isfinite(r.upper):
            break
        t["mass"][i] = math.nextafter(t["mass"][i], 2.0)
    return r.lower, r.upper, ulps


def special_renyi(d, order):
    """RDP of RR under REPLACE_SPECIAL (d: rr_special_interop's spec): the
    larger of the pair's two directions, each the remove direction of one
    table (special_tables, nudged_renyi).  Order inf: D_A at A = 1e8, and
    D_inf <= D_A + log(1/m)/(A-1) with m >= e^-50 the smallest mass of the
    pair (D_A <= D_inf always)."""
    a, b = special_tables(d)
    if "privacy_loss" not in a:
        return rdp_bracket(a, order)
    o = _BIG_ORDER if math.isinf(order) else order
    l1, h1, _u = nudged_renyi(a, o)
    l2, h2, _u = nudged_renyi(b, o)
    slack = 50.0 / (o - 1) if math.isinf(order) else 0.0
    return max(l1, l2), max(h1, h2) + slack


def rdp_row(tally, where, what, v, tol, lo, hi):
    """An RDP accountant's value: exact when inside dpacct's bracket (within
    tol); above it, an RDP upper bound (sound, looser: consistent, excess
    shown); below the certified lower bound: disagree."""
    if lo is None:
        return classify(tally, where, "exact", v, tol, None, hi, what)
    if math.isinf(v):
        tol = 0.0
    if lo - tol <= v <= hi + tol or (math.isinf(v) and math.isinf(hi)):
        return classify(tally, where, "exact", v, tol, lo, hi, what)
    if v > hi:
        return tally.add("consistent", where, "%s ~ %r: an RDP upper bound %.3g%% above dpacct's certified "
                         "upper; dpacct [%r, %r]" % (what, v, 100 * (v / hi - 1) if hi > 0 else float("inf"),
                                                     lo, hi))
    return classify(tally, where, "exact", v, tol, lo, hi, what)


def same_row(tally, where, what, a, b, tol):
    """An identity the peer asserts (two of its quantities equal): 'exact'
    when dpacct's brackets of both sides overlap within tol."""
    lo = max(a[0], b[0]) - tol
    hi = min(a[1], b[1]) + tol
    ok = lo <= hi or (math.isinf(a[0]) and math.isinf(b[0]))
    tally.add("exact" if ok else "disagree", where, "%s: dpacct [%r, %r] and [%r, %r]" % (what, a[0], a[1], b[0], b[1]))


def err_text(e):
    return "%s: %s" % (type(e).__name__, e)


def allclose_tol(v, rtol=1e-5, atol=1e-8):
    return atol + rtol * abs(v)


def _q_hp(x):
    """P(N(0,1) > x) in Decimal (60 digits): the Maclaurin series of erf for
    |x| <= 5 (terms below 10^6, so ~50 digits survive), the continued
    fraction of the Mills ratio phi(x)/Q(x) = x + 1/(x + 2/(x + ...)),
    600 levels, for x > 5 (converged far beyond 1e-40 there)."""
    from decimal import Decimal as D, localcontext
    with localcontext() as c:
        c.prec = 60
        x = D(repr(float(x))) if not isinstance(x, D) else x
        if x < -5:
            return 1 - _q_hp(-x)
        pi = D("3.14159265358979323846264338327950288419716939937510582097494459")
        if x <= 5:
            z = x / D(2).sqrt()
            term, total, n = z, z, 0
            while True:
                n += 1
                term = -term * z * z / n
                add = term / (2 * n + 1)
                total += add
                if abs(add) < D(10) ** -58:
                    break
            erf = 2 / pi.sqrt() * total
            return (1 - erf) / 2
        f = D(0)
        for k in range(600, 0, -1):
            f = D(k) / (x + f)
        return (-(x * x) / 2).exp() / (2 * pi).sqrt() / (x + f)


def gauss_delta_hp(eps, mu):
    """delta(eps) of mu-GDP, Q(eps/mu - mu/2) - e^eps Q(eps/mu + mu/2), in
    60-digit Decimal (the two terms may cancel: eps 23 at mu 1 keeps 2 of 16
    digits in doubles); returned as a Decimal."""
    from decimal import Decimal as D, localcontext
    with localcontext() as c:
        c.prec = 60
        e, m = D(repr(float(eps))), D(repr(float(mu)))
        return _q_hp(e / m - m / 2) - e.exp() * _q_hp(e / m + m / 2)


def in_bracket(ref, lo, hi):
    """ref (a Decimal) inside [lo, hi] (doubles), compared exactly."""
    from decimal import Decimal as D
    return D(lo) <= ref <= D(hi)


# --------------------------------------------- independent quadratures ---

def log_a_quadrature(q, sigma, alpha):
    """log A_alpha = log E_{N(0,s^2)}[((1-q) + q e^{(2x-1)/(2s^2)})^alpha]
    (Mironov, Talwar & Zhang 2019, Sec. 3.3: (alpha-1) times the remove
    direction's Renyi divergence of the Poisson-subsampled Gaussian), by the
    trapezoid rule on [-40s, alpha + 40s] with step s/400: the integrand is
    analytic and Gaussian-like (its mass lies within ~40 s of 0 and of
    alpha), where the trapezoid rule converges geometrically.  Summed in log
    space; where A is near 1 (log A < 1e-3) A - 1 is integrated directly,
    phi(x) expm1(alpha log1p(q expm1((2x-1)/(2s^2)))), so that log1p keeps
    the relative accuracy of a small log A: 1e-12 relative against
    scipy.integrate.quad at q 0.01, s 2.5, alpha 1.5, 2.5, 5, and 2e-12
    against the exact binomial sum at q 1e-6, s 1, alpha 27 (the sum's
    rounding relative to a log A of 9e-10); the callers allow 1e-10."""
    import numpy as np
    s = float(sigma)
    h = s / 400.0
    x = np.arange(-40 * s, max(alpha, 1.0) + 40 * s, h)
    u = (2 * x - 1) / (2 * s * s)
    lg = -x * x / (2 * s * s) - math.log(s * math.sqrt(2 * math.pi)) + \
        alpha * np.logaddexp(math.log1p(-q) if q < 1 else -np.inf, math.log(q) + u)
    m = lg.max()
    log_a = float(m + math.log(np.exp(lg - m).sum() * h))
    if log_a < 1e-3 and q < 1:
        with np.errstate(over="ignore", invalid="ignore"):
            f = np.exp(-x * x / (2 * s * s)) / (s * math.sqrt(2 * math.pi)) * \
                np.expm1(alpha * np.log1p(q * np.expm1(u)))
        f = np.where(np.isfinite(f), f, 0.0)
        log_a = math.log1p(float(f.sum() * h))
    return log_a


def br_kl_sup(e):
    """sup over t in [0, 1] of KL(P_t || Q_t) of the E-bounded-range class
    (Dong, Durfee & Rogers 2020: the two-point pairs P_t, mass p_t =
    (1 - e^{-tE}) / (1 - e^{-E}) at loss (1-t)E, the rest at -tE):
    KL = p_t (1-t) E - (1 - p_t) t E, concave in t; golden-section search to
    1e-12 in t (the value then to ~1e-20)."""
    def kl(t):
        p = -math.expm1(-t * e) / -math.expm1(-e)
        return p * (1 - t) * e - (1 - p) * t * e
    a, b = 0.0, 1.0
    g = (math.sqrt(5) - 1) / 2
    while b - a > 1e-12:
        c, d = b - g * (b - a), a + g * (b - a)
        if kl(c) < kl(d):
            a = c
        else:
            b = d
    return kl((a + b) / 2)


