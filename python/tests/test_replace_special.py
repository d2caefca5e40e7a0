# SPDX-License-Identifier: GPL-3.0-or-later
"""The spec relation "replace_special" (dp_accounting's REPLACE_SPECIAL)
through the binding: randomized response against the special record's
uniform report (delta and D_A per direction against a brute force over the
k outputs), dp_accounting's RDP values of
rdp/rdp_privacy_accountant_test.py
test_compute_rdp_randomized_response_replace_special (np.allclose rtol 1e-4),
additive noise equal to add_remove, and dpacct.dp_accounting passing the
relation to the library."""
import math

import pytest

import dpacct
from dpacct import events as ev
from dpacct import dp_accounting as mine
from conftest import needs_lib


def masses(eps, k):
    d = math.exp(eps) + k - 1
    return [(math.exp(eps) / d, 1.0 / k)] + [(1.0 / d, 1.0 / k)] * (k - 1)  # (R(x), uniform)


def brute_delta(eps, k, t, add):
    return math.fsum(max(0.0, (b - math.exp(t) * a) if add else (a - math.exp(t) * b)) for a, b in masses(eps, k))


def brute_renyi(eps, k, order, add):
    return math.log(math.fsum((b ** order * a ** (1 - order)) if add else (a ** order * b ** (1 - order))
                              for a, b in masses(eps, k))) / (order - 1)


@needs_lib
@pytest.mark.parametrize("eps,k", [(1.0, 2), (1.0, 4), (0.3, 10), (4.0, 7)])
def test_rr_against_brute_force(eps, k):
    with dpacct.Accountant(ev.randomized_response(eps, k).with_neighboring("replace_special")) as acc:
        assert acc.neighboring == "replace_special"
        for t in (-0.5, 0.0, 0.4, 1.0):
            r = acc.delta(t)
            rem, add = brute_delta(eps, k, t, False), brute_delta(eps, k, t, True)
            assert r.lower <= max(rem, add) * (1 + 1e-12) + 1e-300 and max(rem, add) <= r.upper * (1 + 1e-12)
            assert r.upper_remove >= rem * (1 - 1e-12) and r.upper_add >= add * (1 - 1e-12)
        for order in (0.5, 2.0, 3.5):
            d = acc.renyi(order)
            for v, add in ((d.remove, False), (d.add, True)):
                ref = brute_renyi(eps, k, order, add)
                assert v.lower <= ref * (1 + 1e-12) + 1e-300 and ref <= v.upper * (1 + 1e-12) + 1e-300


@needs_lib
@pytest.mark.parametrize("p,k,want", [
    (0.3, 10, [1.5030552584146897, 1.7801182478869704, 1.9091969256833639, 1.9814516798923105, 1.9846954517418232]),
    (0.05, 20, [2.8985312222056674, 2.9615414620514047, 2.982908949957726, 2.994685471627712, 2.9952141594692665]),
    (0.01, 3, [3.851345343526459, 4.334924907685137, 4.503803908976894, 4.596895387863428, 4.601074578835478]),
])
def test_dp_accounting_rdp_values(p, k, want):
    eps = math.log((k * (1 - p) + p) / p)
    with dpacct.Accountant(ev.randomized_response(eps, k), neighboring="replace_special") as acc:
        for order, w in zip((1.5, 2.5, 5, 50, 100), want):
            d = acc.renyi(order)
            lo, up = max(d.remove.lower, d.add.lower), max(d.remove.upper, d.add.upper)
            assert lo <= w * (1 + 1e-4) and w <= up * (1 + 1e-4)


@needs_lib
def test_additive_noise_and_the_dp_accounting_layer():
    e = ev.repeat(ev.poisson(ev.gaussian(0.8), 0.05), 30)
    a = dpacct.Accountant(e).epsilon(1e-6)
    b = dpacct.Accountant(e, neighboring="replace_special").epsilon(1e-6)
    assert (a.lower, a.upper) == (b.lower, b.upper)
    acc = mine.PLDAccountant(mine.NeighboringRelation.REPLACE_SPECIAL)
    if mine.HAVE_DP_ACCOUNTING:  # drop-in mode: compose takes DpEvents (module docstring)
        from dp_accounting import dp_event
        acc.compose(dp_event.RandomizedResponseDpEvent(4 / (math.e + 3), 4))  # eps 1: nu = k / (e^eps + k - 1)
    else:
        acc.compose(ev.randomized_response(1.0, 4))
    assert acc.accountant.neighboring == "replace_special"
    ref = max(brute_delta(1.0, 4, 0.5, False), brute_delta(1.0, 4, 0.5, True))
    lo, up = acc.get_delta_bracket(0.5)
    assert lo <= ref * (1 + 1e-12) and ref <= up * (1 + 1e-12)
    with pytest.raises(dpacct.UnsupportedError, match="replace_special"):
        dpacct.Accountant(ev.poisson(ev.randomized_response(1.0), 0.1), neighboring="replace_special")
