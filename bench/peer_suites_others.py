# SPDX-License-Identifier: GPL-3.0-or-later
"""peer_suites recognizers (issue 26): dp_accounting's RDP and top-level
tests, prv_accountant, Opacus and autodp, run through dpacct (the RDP file's
in peer_suites_rdp.py, shared helpers in peer_suites_util.py).

cases(peers_dir, tally) reads the test files below from the peers' fetched
sources, rebuilds each stated expectation in dpacct (the Python binding) and
classifies it with peer_suites.classify / Tally.add, or sets the test aside
when its numbers are not a privacy quantity of a mechanism (the reason is
given).  Parameters and values are read from the files (decorator tables,
literal assignments, assertion arguments); which query a test makes is this
module's knowledge of the test.  Files:

  dp_accounting/dp_accounting/rdp/rdp_privacy_accountant_test.py
      (peer_suites_rdp.rdp_cases)
  dp_accounting/dp_accounting/{privacy_accountant_test, dp_event_test,
      mechanism_calibration_test, gaussian_mechanism_test}.py
  prv_accountant/tests/**, opacus/** tests, autodp/test/*.

Kinds: "exact" the peer's value is the exact one (dpacct's certified bracket
holds it within the peer's tolerance); "upper" an RDP/PRV/bound upper
estimate (consistent when at or above dpacct's lower bound); "estimate".
An RDP value above dpacct's certified upper is an RDP upper bound (sound,
looser): classified consistent with its excess printed (rdp_row).
"""
import ast
import math
import os
import sys

from peer_suites import Tally, classify, dp_accounting_importable
from peer_suites_rdp import rdp_cases
from peer_suites_util import (DPA_PKG, allclose_tol, asserts_of, assert_line, body_env, dpacct_module, err_text,
                              gauss_delta_hp, in_bracket, param_cases, rdp_bracket, rdp_row, test_functions)


# ------------------------------------- dp_accounting: top-level tests ---

def _dpa_top(src, tally):
    dpacct = dpacct_module()
    from dpacct import from_dp_event
    from dp_accounting import dp_event
    base = os.path.dirname(src)
    p = os.path.join(src, DPA_PKG, "privacy_accountant_test.py")
    if os.path.exists(p):
        _t, fns, _a = test_functions(p)
        rel = os.path.relpath(p, base)
        # the base class runs against each subclass's accountants: dpacct's
        # answer for the event (RDP's relations: add/remove, replace-one, special)
        qs = {"test_no_events": ([], [(1e-12, 0), (0, 0), (1, 0)], [(1e-12, 0), (0, 0), (math.inf, 0)]),
              "test_no_op": ([dp_event.NoOpDpEvent()], [(1e-12, 0), (0, 0), (1, 0)],
                             [(1e-12, 0), (0, 0), (math.inf, 0)]),
              "test_epsilon_delta_noop": ([dp_event.EpsilonDeltaDpEvent(epsilon=0, delta=0.0)],
                                          [(1e-12, 0), (0, 0), (1, 0)], []),
              "test_non_private": ([dp_event.NonPrivateDpEvent()], [(0.99, math.inf), (0, math.inf), (1, math.inf)],
                                   [(100, 1), (0, 1), (math.inf, 1)])}
        for name, (evs, eps_q, del_q) in qs.items():
            if name not in fns:
                continue
            fn = fns[name]
            tally.cover(p, name)
            spec = from_dp_event(dp_event.ComposedDpEvent(evs)) if evs else {"no_op": {}}
            acc = dpacct.Accountant(spec)
            where = "%s %s:%d" % (rel, name, assert_line(fn))
            for d, v in eps_q:
                if d >= 1:  # delta 1: every epsilon works; dpacct asks delta < 1
                    r = acc.epsilon(1 - 2 ** -53)
                    classify(tally, where, "upper", v, 0.0, r.lower, r.upper,
                             "epsilon(1) (dpacct at 1 - 2^-53, an upper bound of it)")
                    continue
                r = acc.epsilon(d)
                classify(tally, where, "exact", v, 0.0, r.lower, r.upper, "epsilon(%g) of %s" % (d, name[5:]))
            for e, v in del_q:
                r = acc.delta(min(e, 1e300))
                classify(tally, where, "exact", v, 0.0, r.lower, r.upper, "delta(%g) of %s" % (e, name[5:]))
    p = os.path.join(src, DPA_PKG, "dp_event_test.py")
    if os.path.exists(p):
        for name in test_functions(p)[1]:
            tally.set_aside(p, name, "event-object plumbing: DpEvents to and from named tuples (their "
                            "parameters round-trip); no privacy value")
    p = os.path.join(src, DPA_PKG, "mechanism_calibration_test.py")
    if os.path.exists(p):
        for name in test_functions(p)[1]:
            tally.set_aside(p, name, "the calibration search itself (bisection, bracket search) on toy "
                            "epsilon functions of a FakeAccountant (x, 4 - x, cos, ...): a numerical "
                            "utility, no mechanism (dpacct's calibrate: test_get_epsilon_gaussian_inverts_"
                            "get_sigma_gaussian below and docs/calibration.md)")
    p = os.path.join(src, DPA_PKG, "gaussian_mechanism_test.py")
    if os.path.exists(p):
        _gaussian_inversions(p, base, tally)


def _gaussian_inversions(p, base, tally):
    """get_sigma_gaussian / get_epsilon_gaussian (Balle & Wang 2018's analytic
    Gaussian) invert each other: dpacct's calibrate of gaussian(sigma "?")
    at (eps, delta), then epsilon at that sigma; and epsilon at sigma then
    calibrate back."""
    dpacct = dpacct_module()
    import numpy as np
    _t, fns, _a = test_functions(p)
    rel = os.path.relpath(p, base)
    ns = {"np": np}
    for name in ("test_get_epsilon_gaussian_inverts_get_sigma_gaussian",
                 "test_get_sigma_gaussian_inverts_get_epsilon_gaussian"):
        if name not in fns:
            continue
        fn = fns[name]
        tally.cover(p, name)
        where = "%s %s:%d" % (rel, name, assert_line(fn))
        for cs in param_cases(fn, ns):
            d = cs["delta"]
            if name.startswith("test_get_epsilon"):
                e = cs["eps"]
                if not 0 < d < 1:
                    # delta 0: sigma inf (no finite Gaussian is pure DP), its eps 0;
                    # delta 1: sigma 0 is (0, 1)-DP: eps 0 either way
                    classify(tally, where, "exact", 0.0, 0.0, 0.0, 0.0,
                             "eps at delta %g (trivial: sigma %s)" % (d, "inf" if d == 0 else "0"))
                    continue
                # the exact sigma* with eps(sigma*) = e lies between calibrate's value (meets
                # e) and its nearest infeasible value (does not): eps decreasing in sigma, so
                # e is in [eps(value).lower, eps(infeasible).upper]
                try:
                    c = dpacct.calibrate({"gaussian": {"sigma": "?"}}, e, d, rel_tol=1e-12)
                    lo = dpacct.Accountant({"gaussian": {"sigma": c.value}}).epsilon(d).lower
                    hi = dpacct.Accountant({"gaussian": {"sigma": c.infeasible}}).epsilon(d).upper \
                        if c.infeasible is not None else math.inf
                except Exception as ex:
                    lo, hi = None, err_text(ex)
                classify(tally, where, "exact", e, allclose_tol(e, 1e-7, 0), lo, hi,
                         "epsilon at delta %g of the exact sigma for eps %g (between calibrate's value "
                         "and its nearest infeasible one)" % (d, e))
            else:
                s = cs["sigma"]
                if d == 0 or d == 1:
                    r = dpacct.Accountant({"gaussian": {"sigma": s}}).epsilon(0.0 if d == 0 else 1 - 2 ** -53)
                    classify(tally, where, "exact" if d == 0 else "upper", math.inf if d == 0 else 0.0, 0.0,
                             r.lower, r.upper, "epsilon of Gaussian %g at delta %g" % (s, d))
                    continue
                r = dpacct.Accountant({"gaussian": {"sigma": s}}).epsilon(d)
                if r.upper == 0:
                    classify(tally, where, "exact", 0.0, 0.0, r.lower, r.upper,
                             "epsilon of Gaussian %g at delta %g is 0 (the peer then only asserts sigma' <= sigma)" % (s, d))
                    continue
                try:
                    c = dpacct.calibrate({"gaussian": {"sigma": "?"}}, r.upper, d, rel_tol=1e-9)
                    lo, hi = c.value, c.value
                except Exception as ex:
                    lo, hi = None, err_text(ex)
                # calibrating to eps's upper bound returns a sigma at most s (s meets it), and
                # within the search's relative width plus eps's bracket width
                classify(tally, where, "estimate", s, 1e-6 * s + s * (r.upper - r.lower) / max(r.upper, 1e-300) * 10,
                         lo, hi, "sigma calibrated at (eps %r, delta %g) of Gaussian %g" % (r.upper, d, s))


# ------------------------------------------------------- prv_accountant ---

_PRV_SET_ASIDE = {
    ("test_domain.py", None): "the peer's discretization domain (Domain: grid creation, alignment, shift): "
                              "grid arithmetic, no privacy value",
    ("test_composer.py", None): "the peer's composers (Fourier, convolution tree) convolving PMFs of normal "
                                "and binomial laws, checked by mean and variance: PMF arithmetic on a grid, "
                                "no mechanism",
    ("test_poisson_subsampled_gaussian.py", "test_safe_log"): "a numerical utility (the peer's safe log: "
                                                              "log(-1) nan, log(0) -inf, log(1) 0)",
    ("test_dpsgd.py", "test_robustness"): "asserts only that find_noise_multiplier emits no warning (the "
                                          "robustness of the peer's root search); no value of the mechanism "
                                          "is stated",
}


def _prv(src, tally):
    dpacct = dpacct_module()
    base = os.path.dirname(src)
    for root, _d, files in os.walk(os.path.join(src, "tests")):
        for f in sorted(files):
            if not (f.endswith(".py") and "test" in f):
                continue
            p = os.path.join(root, f)
            _t, fns, _a = test_functions(p)
            rel = os.path.relpath(p, base)
            for name, fn in fns.items():
                why = _PRV_SET_ASIDE.get((f, name)) or _PRV_SET_ASIDE.get((f, None))
                if why:
                    tally.set_aside(p, name, why)
                    continue
                where = "%s %s:%d" % (rel, name, assert_line(fn))
                h = _PRV_HANDLERS.get((f, name))
                if h is None:
                    continue
                tally.cover(p, name)
                try:
                    cases = param_cases(fn, {"np": __import__("numpy")})
                except Exception:
                    cases = []
                h(tally, where, fn, cases, dpacct)


def _prv_homogeneous(tally, where, fn, cases, dpacct):
    env = body_env(fn, {"np": __import__("numpy")})
    s = env["noise_multiplier"]
    for k in (9_999, 10_000):
        acc = dpacct.Accountant({"repeat": {"count": k, "event": {"gaussian": {"sigma": s}}}})
        for e in (1e-1, 1e0, 1e1, 1e2):
            ref = gauss_delta_hp(e, math.sqrt(k) / s)
            r = acc.delta(e)
            ok = in_bracket(ref, r.lower, r.upper)
            tally.add("exact" if ok else "disagree", where, "delta(%g) of %d Gaussians %g = mu-GDP's, mu = sqrt(k)/s "
                      "= %.12g (Decimal), dpacct [%r, %r]" % (e, k, s, ref, r.lower, r.upper))


def _prv_heterogeneous(tally, where, fn, cases, dpacct):
    spec = {"compose": [{"repeat": {"count": 50, "event": {"gaussian": {"sigma": 10.0}}}},
                        {"repeat": {"count": 50, "event": {"gaussian": {"sigma": 5.0}}}}]}
    ref = gauss_delta_hp(4.0, math.sqrt(50 * 10 ** -2 + 50 * 5 ** -2))
    r = dpacct.Accountant(spec).delta(4.0)
    tally.add("exact" if in_bracket(ref, r.lower, r.upper) else "disagree", where,
              "delta(4) of 50 Gaussians 10 and 50 of 5 = %.12g (Decimal), dpacct [%r, %r]" % (ref, r.lower, r.upper))


def _psg(q, s, k):
    return {"repeat": {"count": k, "event": {"poisson": {"rate": q, "event": {"gaussian": {"sigma": s}}}}}}


def _prv_invariance(tally, where, fn, cases, dpacct):
    env = body_env(fn, {})
    q, s, d = env["sampling_probability"], env["noise_multiplier"], env["target_delta"]
    r = dpacct.Accountant(_psg(q, s, 4900)).epsilon(d)
    # the peer asserts its eps_upper does not move (rel 1e-3) with max_self_compositions,
    # its own discretization's size; dpacct's answer has no such parameter: its one
    # bracket is consistent with the claim when narrower than 1e-3 relative
    w = (r.upper - r.lower) / r.upper
    what = "epsilon(%g) of Poisson(%g, Gaussian %g) x 4900 within 1e-3 relative" % (d, q, s)
    if w <= 1e-3:
        tally.add("consistent", where, "%s: dpacct [%r, %r] (relative width %.2g)" % (what, r.lower, r.upper, w))
    else:
        classify(tally, where, "estimate", r.upper, 0.0, None, "dpacct's bracket is wider (%.2g)" % w, what)


def _prv_inverse_curve(tally, where, fn, cases, dpacct):
    finite = fn.name.endswith("finite")
    spec = _psg(1e-3, 1.0, 100) if finite else \
        {"repeat": {"count": 100, "event": {"approx": {"epsilon": 0.01, "delta": 1e-8}}}}
    acc = dpacct.Accountant(spec)
    for cs in cases:
        d = cs["delta"]
        r = acc.epsilon(d)
        lo, hi = acc.delta(r.upper).lower, acc.delta(r.lower).upper
        classify(tally, where, "exact", d, 0.0, lo, hi, "delta(epsilon(%g)) = %g (%s), certified: delta at the "
                 "ends of epsilon's bracket" % (d, d, "Poisson(1e-3, Gaussian 1) x 100" if finite else
                                                "(0.01, 1e-8) x 100"))


def _prv_dpsgd_inverse(tally, where, fn, cases, dpacct):
    env = body_env(fn, {})
    q, k, e, d = env["sampling_probability"], env["max_steps"], env["target_epsilon"], env["target_delta"]
    c = dpacct.calibrate(_psg(q, "?", k), e, d)
    r = dpacct.Accountant(_psg(q, c.value, k)).epsilon(d)
    classify(tally, where, "estimate", e, env["eps_error"], r.lower, r.upper,
             "epsilon(%g) at the noise calibrated to %g (Poisson(%g) x %d): sigma %r" % (d, e, q, k, c.value))


def _prv_truncated(tally, where, fn, cases, dpacct):
    # PrivacyRandomVariableTruncated(Poisson(p, Gaussian 0.2), t in [-134.4, 134.4]).mean() > 1e-4:
    # the mean of the privacy loss under P is KL = Renyi order 1 (remove); the
    # truncation to |t| <= 134.4 moves it by the tail mass beyond, below 1e-100 here
    p = 0.00011878424327013022
    r = dpacct.renyi({"poisson": {"rate": p, "event": {"gaussian": {"sigma": 0.2}}}}, 1.0)
    ok = r.remove.lower > 1e-4
    tally.add("exact" if ok else ("consistent" if r.remove.upper > 1e-4 else "disagree"), where,
              "E[L] (KL, remove) of Poisson(%r, Gaussian 0.2) > 1e-4: dpacct [%r, %r]" % (p, r.remove.lower, r.remove.upper))


def _prv_laplace_norm(tally, where, fn, cases, dpacct):
    """E[e^-Y] = int e^-t F(t) dt over [-50, 50] ~ 1 for the Laplace PRV
    (Y the loss under P, F its CDF): bracketed from dpacct's loss_tail CDF
    brackets on a grid, F increasing and e^-t decreasing on each cell."""
    for cs in cases:
        mu = cs["mu"]  # prv_accountant's LaplaceMechanism(mu): loss in [-mu, mu], scale 1/mu
        acc = dpacct.Accountant({"laplace": {"scale": 1.0 / mu}})
        n = 400
        ts = [-mu + 2 * mu * i / n for i in range(n + 1)]
        cdf = [acc.loss_tail(t, "remove") for t in ts]
        lo = hi = 0.0
        for i in range(n):
            a, b = ts[i], ts[i + 1]
            w = b - a
            lo += w * math.exp(-b) * cdf[i]["cdf_lower"]
            hi += w * math.exp(-a) * cdf[i + 1]["cdf_upper"]
        # beyond mu F = 1: int_mu^50 e^-t dt; below -mu F = 0
        tail = math.exp(-mu) - math.exp(-50.0)
        classify(tally, where, "estimate", 1.0, 1e-6, lo + tail, hi + tail,
                 "int_{-50}^{50} e^-t F(t) dt of Laplace mu %g (peer: approx 1, rel 1e-6)" % mu)


def _prv_laplace_advanced(tally, where, fn, cases, dpacct):
    for cs in cases:
        mu, k, d = cs["mu"], cs["num_comp"], cs["delta"]
        r = dpacct.Accountant({"repeat": {"count": k, "event": {"laplace": {"scale": 1.0 / mu}}}}).epsilon(d)
        bound = mu * k * math.sqrt(2 * math.log(1 / d)) + 0.1
        classify(tally, where, "upper", bound, 0.0, r.lower, r.upper,
                 "epsilon(%g) of %d Laplace (eps %g) < the peer's bound %g" % (d, k, mu, bound))


def _prv_approx_advanced(tally, where, fn, cases, dpacct):
    for cs in cases:
        e, d, dp, k = cs["epsilon"], cs["delta"], cs["delta_prime"], cs["num_comp"]
        dt = k * d + dp
        r = dpacct.Accountant({"repeat": {"count": k, "event": {"approx": {"epsilon": e, "delta": d}}}}).epsilon(dt)
        sc = e * math.sqrt(2 * k * math.log(1 / dp)) + k * k * e * math.expm1(e) / (math.exp(e) + 1)
        classify(tally, where, "upper", sc, 0.0, r.lower, r.upper,
                 "epsilon(%g) of %d x (%g, %g): the peer's lower estimate < strong composition %g" % (dt, k, e, d, sc))


def _prv_normalised(tally, where, fn, cases, dpacct):
    acc = dpacct.Accountant({"poisson": {"rate": 1e-2, "event": {"gaussian": {"sigma": 1.0}}}})
    a, b = acc.loss_tail(10.0, "remove"), acc.loss_tail(-10.0, "remove")
    classify(tally, where, "estimate", 1.0, 1e-10, a["cdf_lower"] - b["cdf_upper"], a["cdf_upper"] - b["cdf_lower"],
             "P(-10 < L <= 10) of Poisson(0.01, Gaussian 1)")


_PRV_HANDLERS = {
    ("test_accountant.py", "test_gaussian_mechanism_analytic_homogeneous"): _prv_homogeneous,
    ("test_accountant.py", "test_gaussian_mechanism_analytic_heterogeneous"): _prv_heterogeneous,
    ("test_accountant.py", "test_invariance_max_compositions"): _prv_invariance,
    ("test_discrete_privacy_random_variable.py", "test_inverse_privacy_curve_finite"): _prv_inverse_curve,
    ("test_discrete_privacy_random_variable.py", "test_inverse_privacy_curve_infinite"): _prv_inverse_curve,
    ("test_dpsgd.py", "test_inverse"): _prv_dpsgd_inverse,
    ("test_prv_truncated.py", "test_robustness"): _prv_truncated,
    ("test_laplace.py", "test_normalisation"): _prv_laplace_norm,
    ("test_laplace.py", "test_advanced_composition"): _prv_laplace_advanced,
    ("test_approximate_dp.py", "test_advanced_composition"): _prv_approx_advanced,
    ("test_poisson_subsampled_gaussian.py", "test_normalised"): _prv_normalised,
}


# --------------------------------------------------------------- opacus ---

_OPACUS_TRAINING = {
    "test_benchmark_layer.py": "benchmark tooling: memory and runtime of a layer's forward/backward",
    "test_layers.py": "benchmark tooling: moving layers to a device",
    "test_utils.py": "benchmark tooling: result paths, saving results, peak-memory counters",
    "distributed_poisson_test.py": "the distributed Poisson sampler's batch sizes and lengths (data loading)",
    "poisson_test.py": "the Poisson sampler's batch sizes and lengths (data loading; the rate's accounting "
                       "is accountants_test's)",
    "dpdataloader_test.py": "the data loader's collate function (tensor shapes, classes)",
    "grad_sample_module_fast_gradient_clipping_test.py": "per-sample gradient norms and weight updates of "
                                                         "fast gradient clipping (training code)",
    "grad_sample_module_test.py": "zeroing of per-sample gradients (training code)",
    "conv2d_test.py": "per-sample gradients of a dilated convolution (training code)",
    "gradient_accumulation_test.py": "per-sample gradient accumulation over virtual steps (training code)",
    "module_validator_test.py": "the module validator and fixer (which layers are DP-compatible)",
    "multigpu_adaptive_clipping_test.py": "gradients of adaptive clipping across GPUs (training code)",
    "multigpu_gradcheck_test.py": "gradients across GPUs (training code)",
    "grad_clip_scheduler_test.py": "the clipping-norm scheduler's values per step (a schedule, not a "
                                   "privacy quantity)",
    "noise_scheduler_test.py": "the noise scheduler's noise multiplier per step (a schedule; the "
                               "accounting of a history of multipliers is accountants_test's)",
    "batch_norm_test.py": "the validator's verdict on batch-norm layers",
    "gru_test.py": "the validator's verdict on GRU layers",
    "instance_norm_test.py": "the validator's verdict on instance-norm layers",
    "lstm_test.py": "the validator's verdict on LSTM layers",
    "multihead_attention_test.py": "the validator's verdict on attention layers",
}
_OPACUS_ENGINE_TRAINING = {
    "test_flat_clipping": "per-sample gradient clipping to a flat norm (gradient values)",
    "test_per_layer_clipping": "per-layer gradient clipping (gradient values)",
    "test_sample_grad_aggregation": "the aggregated gradient equals the sum of per-sample gradients",
    "test_generate_noise_in_secure_mode": "the secure-mode noise sampler's arithmetic on a mocked "
                                          "torch.normal (sampling code, not a privacy value)",
}


def _opacus(src, tally):
    dpacct = dpacct_module()
    base = os.path.dirname(src)
    from peer_suites import inventory
    for root, _d, files in os.walk(src):
        for f in sorted(files):
            p = os.path.join(root, f)
            if not (f.endswith(".py") and "test" in f):
                continue
            names = sorted({fn for fn, _l, _v, _k in inventory(p)})
            rel = os.path.relpath(p, base)
            for name in names:
                if f in _OPACUS_TRAINING:
                    tally.set_aside(p, name, _OPACUS_TRAINING[f])
                elif f == "privacy_engine_test.py" and name in _OPACUS_ENGINE_TRAINING:
                    tally.set_aside(p, name, _OPACUS_ENGINE_TRAINING[name])
                elif f == "privacy_engine_test.py" and name == "test_make_private_with_epsilon":
                    tally.cover(p, name)
                    _opacus_make_private(tally, p, rel, name, dpacct)
                elif f == "privacy_engine_test.py" and name == "test_noise_level":
                    tally.set_aside(p, name, "a Monte Carlo check of the optimizer's noise generation (the drawn "
                                    "noise's squared norm against steps n sigma^2 lr^2 / B^2 within 15%): training "
                                    "code; dpacct accounts a given sigma and draws no noise (the accounting of the "
                                    "same steps: test_make_private_with_epsilon's row)")
                elif f == "accountants_test.py" and name == "test_accountant_load_state_dict":
                    tally.cover(p, name)
                    _, fns, _a = test_functions(p)
                    env = body_env(fns[name], {"int": int})
                    q, s, k = env["sample_rate"], env["noise_multiplier"], env["steps"]
                    v = next(ast.literal_eval(n.args[1]) for n in asserts_of(fns[name], ("assertAlmostEqual",)))
                    r = dpacct.Accountant(_psg(q, s, k)).epsilon(1e-5)
                    classify(tally, "%s %s" % (rel, name), "upper", v, 0.0, r.lower, r.upper,
                             "epsilon(1e-5) of Poisson(%g, Gaussian %g) x %d after a state_dict round trip "
                             "(Opacus' RDP: an upper bound)" % (q, s, k))


def _opacus_make_private(tally, p, rel, name, dpacct):
    """make_private_with_epsilon(target 2, delta 1e-5, 2 epochs) on the base
    test's data (DATA_SIZE 512, BATCH_SIZE 64: sample rate 1/8, 16 steps),
    then get_epsilon(1e-5) ~ 2 to 2 places (Opacus' default PRV accountant).
    dpacct: calibrate sigma to (2, 1e-5), its certified epsilon bracket at
    that sigma against 2 +- 0.005."""
    tree = ast.parse(open(p, encoding="utf-8").read())
    size, batch = 512, 64
    for n in ast.walk(tree):
        if isinstance(n, ast.FunctionDef) and n.name == "setUp":
            env = {}
            for st in ast.walk(n):
                if isinstance(st, ast.Assign) and isinstance(st.targets[0], ast.Attribute):
                    try:
                        env[st.targets[0].attr] = ast.literal_eval(st.value)
                    except ValueError:
                        pass
            size, batch = env.get("DATA_SIZE", size), env.get("BATCH_SIZE", batch)
            break
    fn = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name)
    env = body_env(fn, {})
    e, d, ep = env["target_eps"], env["target_delta"], env["epochs"]
    q, k = batch / size, ep * (size // batch)
    c = dpacct.calibrate(_psg(q, "?", k), e, d)
    r = dpacct.Accountant(_psg(q, c.value, k)).epsilon(d)
    classify(tally, "%s %s:%d" % (rel, name, assert_line(fn)), "estimate", e, 0.005, r.lower, r.upper,
             "epsilon(%g) after calibrating to %g (Poisson(%g) x %d): sigma %r" % (d, e, q, k, c.value))


# --------------------------------------------------------------- autodp ---

def _autodp(src, tally):
    dpacct = dpacct_module()
    base = os.path.dirname(src)
    p = os.path.join(src, "test", "unit_test_dp_sgd_poisson_sampling_add_remove.py")
    if os.path.exists(p):
        tree = ast.parse(open(p, encoding="utf-8").read())
        rows = []
        for n in tree.body:
            if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "params" for t in n.targets):
                rows = ast.literal_eval(n.value)
        tally.cover(p, "test_RDP_values_lowerbound")
        rel = os.path.relpath(p, base)
        cache = {}
        for r in rows:
            q, s, k, o, v = r["q"], r["sigma"], r["steps"], r["order"], r["tfp_rdp_value"]
            key = (q, s, o)
            if key not in cache:
                one = {"no_op": {}} if q == 0 else {"gaussian": {"sigma": s}} if q == 1 else \
                    {"poisson": {"rate": q, "event": {"gaussian": {"sigma": s}}}}
                cache[key] = rdp_bracket(one, o)
            lo, hi = cache[key]
            lo, hi = lo * k, hi * k  # RDP adds up over steps (the spec's repeat gives the same)
            where = "%s test_RDP_values_lowerbound[q %g, s %g, T %d, A %g]" % (rel, q, s, k, o)
            sub = Tally(False)
            rdp_row(sub, where, "TF Privacy's RDP(%g) of Poisson(%g, Gaussian %g) x %d" % (o, q, s, k),
                     v, allclose_tol(v, 1e-9, 1e-12), lo, hi)
            tally.add(*sub.rows[0])
    p = os.path.join(src, "test", "unit_test_calibrator.py")
    if os.path.exists(p):
        tally.cover(p, "test_single_para")
        rel = os.path.relpath(p, base)
        sigmas = sorted({int(1.6 ** i) for i in range(int(math.floor(math.log(100, 1.6))) + 1)})
        for s in sigmas:
            for d in (1e-3, 1e-4, 1e-5, 1e-6):
                for coeff in (None, 1, 10, 100, 1000):
                    ev = {"gaussian": {"sigma": s}} if coeff is None else \
                        {"repeat": {"count": coeff, "event": {"gaussian": {"sigma": s}}}}
                    e = dpacct.Accountant(ev).epsilon(d)
                    tmpl = {"gaussian": {"sigma": "?"}} if coeff is None else \
                        {"repeat": {"count": coeff, "event": {"gaussian": {"sigma": "?"}}}}
                    try:
                        c = dpacct.calibrate(tmpl, e.upper, d, rel_tol=1e-6)
                        lo, hi = c.value, c.value
                    except Exception as ex:
                        lo, hi = None, err_text(ex)
                    # autodp asserts its calibrated sigma >= 0.99 sigma (sigma meets the Gaussian's
                    # own eps): dpacct's calibration of the same target, at least 0.99 sigma and
                    # at most sigma up to the search's relative width (1e-6)
                    where = "%s test_single_para[s %d, d %g%s]" % (
                        rel, s, d, "" if coeff is None else ", %d steps" % coeff)
                    what = "sigma calibrated to the Gaussian's own eps %r >= 0.99 s" % e.upper
                    if lo is None:
                        classify(tally, where, "estimate", s, 0.0, None, hi, what)
                    else:
                        ok = 0.99 * s <= lo <= s * (1 + 2e-6)
                        tally.add("consistent" if ok else "disagree", where, "%s: dpacct %r" % (what, lo))


# ----------------------------------------------------------------- entry ---

def cases(peers_dir, tally):
    src = os.path.join(peers_dir, "dp_accounting")
    if os.path.isdir(src) and dp_accounting_importable(src, "peer_suites_others"):
        rdp_cases(src, tally)
        _dpa_top(src, tally)
    src = os.path.join(peers_dir, "prv_accountant")
    if os.path.isdir(src):
        _prv(src, tally)
    src = os.path.join(peers_dir, "opacus")
    if os.path.isdir(src):
        _opacus(src, tally)
    src = os.path.join(peers_dir, "autodp")
    if os.path.isdir(src):
        _autodp(src, tally)
