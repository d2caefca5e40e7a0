# SPDX-License-Identifier: GPL-3.0-or-later
"""Accountant.loss_tail: the bracket of P(L > t) against closed forms.

One Gaussian, sigma: L ~ N(mu^2/2, mu^2) under P with mu = 1/sigma (GDP
section 2); the Poisson(0.01)-subsampled Gaussian, sigma 1, remove direction:
L = log(1 - p + p e^{x - 1/2}) increasing in the output x, so P(L > t) =
(1 - p) Phi(-x_t) + p Phi(1 - x_t) with x_t = log((e^t - 1 + p) / p) + 1/2
(docs/loss_tail.md section 4; PRV's test_sf, microsoft/prv_accountant,
prv_accountant/tests/test_privacy_random_variables/test_poisson_subsampled_gaussian.py)."""
import math

import pytest

import dpacct

# math.erfc is within a few ulp: a bracket may miss the double reference by
# this much relative without missing the truth
REF_REL = 1e-14


def _sf(z):
    return 0.5 * math.erfc(z / math.sqrt(2))


def _inside(r, ref):
    s = REF_REL * ref + 1e-300
    c = REF_REL * (1 - ref) + 1e-300
    return (r["sf_lower"] <= ref + s and ref - s <= r["sf_upper"]
            and r["cdf_lower"] <= 1 - ref + c and 1 - ref - c <= r["cdf_upper"])


@pytest.mark.parametrize("sigma", [0.7, 2.0])
def test_gaussian(sigma):
    a = dpacct.Accountant({"gaussian": {"sigma": sigma}}, method="exact")
    mu = 1 / sigma
    for k in range(-6, 7):
        t = mu * mu / 2 + 0.5 * k * mu
        for d in ("remove", "add"):
            r = a.loss_tail(t, d)
            ref = _sf((t - mu * mu / 2) / mu)
            assert r["certified"] and _inside(r, ref), (t, d, r, ref)
            # exact delta brackets: the chord bracket is within ~1e-7
            assert r["sf_upper"] - r["sf_lower"] < 1e-6


def test_poisson_gaussian_prv_points():
    p = 0.01
    a = dpacct.Accountant({"poisson": {"rate": p, "event": {"gaussian": {"sigma": 1}}}})
    for t in (math.log1p(-p) - 1, 0.0, 0.5, 1.0):
        if t > math.log1p(-p):
            x = math.log(math.expm1(t) / p + 1) + 0.5
            ref = (1 - p) * _sf(x) + p * _sf(x - 1)
        else:
            ref = 1.0
        r = a.loss_tail(t)
        assert r["direction"] == "remove" and r["certified"] and _inside(r, ref), (t, r, ref)


def test_refusals():
    a = dpacct.Accountant({"gaussian": {"sigma": 1}})
    with pytest.raises(dpacct.InvalidInputError, match="t must be finite"):
        a.loss_tail(float("nan"))
    with pytest.raises(dpacct.InvalidInputError, match="direction"):
        a.loss_tail(0.0, "both")
