# SPDX-License-Identifier: GPL-3.0-or-later
"""Values from dp_accounting's pld/ test files, kept as regression tests of
dpacct (issue 26; bench/peer_suites_dpa_pld.py classifies all of them).

Each row: the peer's number, its source file and test name, the dpacct spec
and query.  Where the peer's value is exact, dpacct's certified bracket must
hold it within the peer's stated tolerance; where it is a pessimistic
estimate (an upper bound) it must lie at or above dpacct's lower bound; the
disagreement rows keep the exact value, computed here in closed form, and
check that dpacct brackets it while the peer's number is outside.  No code
of the peer is imported: the tests run without its sources.
"""
import math

import pytest

import dpacct

ACC = 1e-7        # pld accuracy: delta brackets of ~1e-9 for these one-step specs
TOL7 = 0.5e-7     # assertAlmostEqual's default tolerance (7 places)

MECH = "dp_accounting/pld/privacy_loss_mechanism_test.py"
ACCT = "dp_accounting/pld/pld_privacy_accountant_test.py"
AT = "dp_accounting/pld/accountant_test.py"


def lap(b, s):
    return {"laplace": {"scale": b, "sensitivity": s}}


def dlap(a, s):  # the peer's parameter a: P(k) ~ exp(-a |k|)
    return {"discrete_laplace": {"scale": 1.0 / a, "sensitivity": s}}


def gauss(sd, s):
    return {"gaussian": {"sigma": sd, "sensitivity": s}}


def pois(q, e):
    return {"poisson": {"rate": q, "event": e}}


# (value, source, test, spec, epsilon): delta(epsilon) of a symmetric pair, or
# of a subsampled one in its binding (larger) direction, which is
# Accountant.delta's bracket.  The peer states it to 7 places (TOL7).
DELTAS = [
    (0.0, MECH, "test_laplace_get_delta_for_epsilon", lap(1.0, 1.0), 1.0),
    (0.52763345, MECH, "test_laplace_get_delta_for_epsilon", lap(2.0, 4.0), 0.5),
    (0.39346934, MECH, "test_laplace_get_delta_for_epsilon", lap(1.0, 1.0), 0.0),
    (0.86466472, MECH, "test_laplace_get_delta_for_epsilon", lap(1.0, 1.0), -2.0),
    (0.7134952031, MECH, "test_laplace_get_delta_for_epsilon_vectorized", lap(2.0, 4.0), -0.5),
    (0.4039564635032081, MECH, "test_laplace_get_delta_for_epsilon (REMOVE)", pois(0.8, lap(2.0, 4.0)), 0.5),
    (0.12693674, MECH, "test_gaussian_get_delta_for_epsilon_vectorized (ADD)", gauss(1.0, 1.0), 1.0),
    (0.86749642, MECH, "test_gaussian_get_delta_for_epsilon_vectorized (ADD)", gauss(1.0, 1.0), -2.0),
    (0.020923636, MECH, "test_gaussian_get_delta_for_epsilon_vectorized (ADD)", gauss(1.0, 1.0), 2.0),
    (0.54202002, MECH, "test_discrete_laplace_get_delta_for_epsilon", dlap(0.5, 4), 0.5),
    (0.72222110, MECH, "test_discrete_laplace_get_delta_for_epsilon", dlap(0.5, 4), -0.5),
    (0.39346934, MECH, "test_discrete_laplace_get_delta_for_epsilon", dlap(0.5, 4), 1.0),
    (0.77686984, MECH, "test_discrete_laplace_get_delta_for_epsilon_vectorized", dlap(0.5, 4), -1.0),
    (0.3523838505224567, MECH, "test_discrete_laplace_get_delta_for_epsilon (REMOVE)", pois(0.7, dlap(0.5, 4)), 0.5),
    (0.15768284088654105, MECH, "test_get_delta_for_epsilon[mixture_gaussian_remove_1]",
     {"mixture_of_gaussians": {"sigma": 1.0, "sensitivities": [0.0, 1.0, 2.0],
                               "probabilities": [0.2, 0.6, 0.2]}}, 1.0),
]


@pytest.mark.parametrize("value,source,test,spec,eps", DELTAS)
def test_delta_brackets_the_peer_value(value, source, test, spec, eps):
    r = dpacct.Accountant(spec, accuracy=ACC).delta(eps)
    assert r.certified
    assert r.lower - TOL7 <= value <= r.upper + TOL7, (source, test, r.lower, r.upper)


def _phi(z):
    return 0.5 * math.erfc(-z / math.sqrt(2))


# (x, L(x), source, test, sd, s): the Gaussian's pointwise loss, REMOVE
# direction (mu_upper = N(-s, sd^2)), checked through the loss's tail: L is
# decreasing in x, so P(L > L(x)) = P(X < x) = Phi((x + s)/sd), which
# dpacct's loss_tail (exact method) must bracket within the 7 places of L.
LOSS_POINTS = [
    (4.0, -4.5, MECH, "test_gaussian_privacy_loss", 1.0, 1.0),
    (-4.0, 3.5, MECH, "test_gaussian_privacy_loss", 1.0, 1.0),
    (1.0, -4.0, MECH, "test_gaussian_privacy_loss", 1.0, 2.0),
    (16.0, -4.5, MECH, "test_gaussian_privacy_loss", 4.0, 4.0),
    (7.0, -4.0, MECH, "test_gaussian_privacy_loss", 7.0, 14.0),
]


@pytest.mark.parametrize("x,loss,source,test,sd,s", LOSS_POINTS)
def test_pointwise_loss_through_the_tail(x, loss, source, test, sd, s):
    acc = dpacct.Accountant(gauss(sd, s))
    want = _phi((x + s) / sd)
    # the peer's L to 7 places: the tail at L +- 1e-7 brackets it (density of
    # L under P is at most 1/(mu sqrt(2 pi)), mu = s/sd >= 1 here)
    above = acc.loss_tail(loss + 1e-7, "remove")
    below = acc.loss_tail(loss - 1e-7, "remove")
    assert above["certified"] and below["certified"]
    assert above["sf_lower"] <= want <= below["sf_upper"], (source, test)
    # and a wrong loss (off by 1e-3) is caught
    assert not acc.loss_tail(loss + 1e-3, "remove")["sf_upper"] >= want


def test_accountant_values():
    """pld_privacy_accountant_test.py values dpacct brackets (peer's tolerances)."""
    r = dpacct.Accountant({"repeat": {"count": 3, "event": gauss(math.sqrt(3), 1.0)}}).delta(1.0)
    assert r.lower - 1e-3 <= 0.126936 <= r.upper + 1e-3   # test_gaussian_basic
    assert r.upper - r.lower < 1e-6
    r = dpacct.Accountant({"repeat": {"count": 3, "event": pois(0.2, gauss(0.5, 1.0))}}).delta(1.0)
    assert r.lower - 1e-3 <= 0.15594 <= r.upper + 1e-3    # test_poisson_subsampled_gaussian
    r = dpacct.Accountant({"compose": [{"approx": {"epsilon": 1.0, "delta": 0.1}},
                                       {"approx": {"epsilon": 2.0, "delta": 0.2}}]}).delta(3.0)
    assert r.lower <= 0.28 <= r.upper                     # test_epsilon_delta_basic (assertEqual)
    r = dpacct.Accountant({"compose": [{"pure": {"epsilon": 1.0}}, {"pure": {"epsilon": 2.0}}]}).epsilon(0.0)
    assert r.lower <= 3.0 <= r.upper                      # test_epsilon_basic


def test_zero_noise_subsampled_disagreement_decided():
    """test_additive_noise_mechanisms_with_zero_noise_multiplier: the peer
    answers delta(1) = 1 and tpr(0.1) = 1 for PoissonSampledDpEvent(0.1,
    GaussianDpEvent(0)).  Exactly: P = 0.9 Q + 0.1 R with R singular to Q
    (remove direction), H_e(P||Q) = 0.1 and H_e(Q||P) = (1 - 0.9 e)_+ = 0, so
    delta(1) = 0.1; and every test's power at false positive rate a is at
    most a + delta(0) = a + 0.1.  dpacct is right; the peer is not."""
    acc = dpacct.Accountant(pois(0.1, {"non_private": {}}))
    exact = 0.1
    r = acc.delta(1.0)
    assert r.lower <= exact <= r.upper and r.upper < 1.0
    blo, bhi = acc.beta_at(0.1)
    assert 1 - bhi <= 0.1 + exact + 1e-12   # power at most fpr + q, far from the peer's 1
    assert 1 - blo < 1.0


def test_gaussian_calibration_exact():
    """accountant_test.py test_get_smallest_gaussian_noise: sigma = 1/3 and 10
    (sensitivity 1, one query; sensitivity 6, 25 queries) for (1, 0.78760074):
    delta at sigma - 5e-8 is certified above the target, at sigma + 5e-8 below."""
    for sd, s, k in ((1.0 / 3, 1.0, 1), (10.0, 6.0, 25)):
        def d(x):
            return dpacct.Accountant({"repeat": {"count": k, "event": gauss(x, s)}}).delta(1.0)
        assert d(sd - TOL7).lower >= 0.78760074
        assert d(sd + TOL7).upper <= 0.78760074


def test_advanced_composition_is_an_upper_bound():
    """accountant_test.py test_advanced_composition: 22 and 20 for 30 (1,
    0.001)-DP steps at total delta 0.06 and 0.1 (Dwork, Rothblum & Vadhan's
    theorem) are upper bounds: dpacct's certified epsilon of the composition
    is at most them."""
    acc = dpacct.Accountant({"repeat": {"count": 30, "event": {"approx": {"epsilon": 1.0, "delta": 0.001}}}})
    for total_delta, peer in ((0.06, 22.0), (0.1, 20.0)):
        r = acc.epsilon(total_delta)
        assert r.upper <= peer


# ---- task PS7: mixture of Gaussians (connect-the-dots) and truncated Gaussian ----
PLDT = "dp_accounting/pld/privacy_loss_distribution_test.py"


def _gauss_delta(eps, mu):
    """The Gaussian's hockey stick in closed form (Balle & Wang 2018, Thm 8)."""
    return _phi(-eps / mu + mu / 2) - math.exp(eps) * _phi(-eps / mu - mu / 2)


def _cd_entry(dl, D, i, lo_k, hi_k):
    """Connect-the-dots mass at index i on the grid lo_k..hi_k from the hockey
    stick dl(k) at kD (Doroshenko et al. 2022, fixed-gap formulas)."""
    if i == lo_k:
        return 1 - dl(i) + (dl(i + 1) - dl(i)) / math.expm1(D)
    if i == hi_k:
        return (dl(i - 1) - dl(i)) / -math.expm1(-D)
    return ((dl(i + 1) - dl(i)) - math.exp(D) * (dl(i) - dl(i - 1))) / math.expm1(D)


# test_mixture_gaussian_varying_standard_deviation_and_sensitivity_connect_dots
# [gaussian_1] (sigma 1, sensitivities [1], probabilities [1]): the peer's add
# PMF on grid -1..2 with D = 1 given as an int.  Decided: the exact connect-the-
# dots masses (closed form) differ; the peer's come from its integer-typed grid
# (its x cut-offs are cast to integers; with D = 1.0 it gives the exact masses).
CD_GAUSS1 = [(-1, 0.158655254), (0, 0.341344746), (1, 0.391270256), (2, 0.108729744)]


def test_mixture_connect_dots_int_grid_disagreement_decided():
    spec = {"mixture_of_gaussians": {"sigma": 1.0, "sensitivities": [1.0], "probabilities": [1.0]}}
    acc = dpacct.Accountant(spec, accuracy=ACC)
    br = {k: acc.delta(float(k)) for k in range(-1, 3)}
    for i, peer in CD_GAUSS1:
        exact = _cd_entry(lambda k: _gauss_delta(k, 1.0), 1.0, i, -1, 2)
        # dpacct's bracket of the same combination, linear in the four deltas:
        # its extremes are at the corners of their brackets
        cands = []
        for pick in range(16):
            v = {k: (br[k].lower if pick >> (k + 1) & 1 else br[k].upper) for k in range(-1, 3)}
            cands.append(_cd_entry(lambda k: v[k], 1.0, i, -1, 2))
        lo, hi = min(cands) - 1e-12, max(cands) + 1e-12
        assert lo <= exact <= hi, (PLDT, i, lo, exact, hi)
        assert abs(peer - exact) > 100 * TOL7, (PLDT, i, peer, exact)  # the peer's value is off


# test_mixture_gaussian_discretization_connect_dots[discretization_0.5]: the
# remove direction's infinity mass is the hockey stick at the grid's top, 4 D = 2
# (the binding direction there): exact, to 7 places.
def test_mixture_connect_dots_infinity_mass():
    spec = {"mixture_of_gaussians": {"sigma": 1.0, "sensitivities": [0.0, 1.0, 2.0],
                                     "probabilities": [0.2, 0.6, 0.2]}}
    r = dpacct.Accountant(spec, accuracy=ACC).delta(2.0)
    assert r.lower - TOL7 <= 0.058450414 <= r.upper + TOL7, (PLDT, r.lower, r.upper)


# test_truncated_gaussian_matches_gaussian: with B >= N the truncated_poisson
# leaf is poisson over the child (the peer's equality), at several eps.
@pytest.mark.parametrize("q,b,n,other", [
    (0.1, 1000, 1000, pois(0.1, gauss(1.0, 1.0))),   # [never_truncate]
    (1.0, 1000, 1000, gauss(1.0, 1.0)),              # [no_sampling_or_truncation]
])
def test_truncated_matches_poisson(q, b, n, other):
    t = {"truncated_poisson": {"rate": q, "max_batch": b, "n": n, "event": gauss(1.0, 1.0)}}
    a1, a2 = dpacct.Accountant(t, accuracy=ACC), dpacct.Accountant(other, accuracy=ACC)
    for eps in (0.0, 0.5, 1.0, 2.0):
        r1, r2 = a1.delta(eps), a2.delta(eps)
        assert r1.upper >= r2.lower - 1e-12 and r2.upper >= r1.lower - 1e-12, (PLDT, q, eps)
        if q == 1.0:
            assert r1.lower <= _gauss_delta(eps, 1.0) <= r1.upper


def test_truncated_always_below_the_peers_replace_bound():
    """[always_truncate] (Q 1, B 100, N 1000): the peer's PLD is its REPLACE_ONE
    Gaussian (q 0.1, sensitivity 2: mu(x + 2) against mu(x - 2)), an upper bound."""
    t = {"truncated_poisson": {"rate": 1.0, "max_batch": 100, "n": 1000, "event": gauss(1.0, 1.0)}}
    rep = dict(pois(0.1, gauss(1.0, 4.0)), neighboring="replace")
    a1, a2 = dpacct.Accountant(t, accuracy=ACC), dpacct.Accountant(rep, accuracy=ACC)
    for eps in (0.0, 0.5, 1.0, 2.0):
        assert a1.delta(eps).upper <= a2.delta(eps).upper + 1e-12
