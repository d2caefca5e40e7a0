# SPDX-License-Identifier: GPL-3.0-or-later
"""The truncated discrete Gaussian through the Python binding: the Event
builder's "truncation" key, errors naming the field, delta against a brute
force over the finite pair (both measures summed over the support), and one
of dp_accounting's expected values (pld/privacy_loss_mechanism_test.py,
test_discrete_gaussian_get_delta_for_epsilon: sigma 10, sensitivity 3,
truncation_bound 5, epsilon 1 -> 0.263672394)."""
import math

import pytest

import dpacct
from dpacct import events as ev
from conftest import needs_lib


def brute(sigma, s, t, eps):
    """max over directions of sum_o (A(o) - e^eps B(o))_+ (they coincide)."""
    w = {n: math.exp(-n * n / (2.0 * sigma * sigma)) for n in range(-t, t + 1)}
    z = math.fsum(w.values())
    a = {o: w.get(o - s, 0.0) / z for o in range(-t, t + s + 1)}
    b = {o: w.get(o, 0.0) / z for o in range(-t, t + s + 1)}
    return math.fsum(max(0.0, a[o] - math.exp(eps) * b[o]) for o in a)


def test_builder_writes_truncation():
    e = ev.discrete_gaussian(2, 3, truncation=7)
    assert e.to_dict() == {"discrete_gaussian": {"sigma": 2, "sensitivity": 3, "truncation": 7}}
    assert "truncation" not in str(ev.discrete_gaussian(2).to_dict())


@needs_lib
@pytest.mark.parametrize("sigma,s,t", [(1.0, 1, 2), (10.0, 3, 5), (2.0, 3, 2), (0.8, 1, 0), (3.0, 2, 9)])
@pytest.mark.parametrize("eps", [-1.0, 0.0, 0.5, 2.0])
def test_delta_brackets_brute_force(sigma, s, t, eps):
    r = dpacct.Accountant(ev.discrete_gaussian(sigma, s, truncation=t)).delta(eps)
    ref = brute(sigma, s, t, eps)
    assert r.lower <= ref * (1 + 1e-12) + 1e-300
    assert ref <= r.upper * (1 + 1e-12)


@needs_lib
def test_peer_value():
    r = dpacct.Accountant(ev.discrete_gaussian(10.0, 3, truncation=5)).delta(1.0)
    assert r.lower - 0.5e-7 <= 0.263672394 <= r.upper + 0.5e-7


@needs_lib
@pytest.mark.parametrize("t,msg", [(-1, "must be an integer >= 0"), (1.5, "must be an integer >= 0"),
                                   (10 ** 10, "must be an integer <= 1e+09")])
def test_bad_truncation_names_the_field(t, msg):
    with pytest.raises(dpacct.InvalidSpecError) as ei:
        dpacct.Accountant(ev.discrete_gaussian(1.0, truncation=t))
    assert "/discrete_gaussian/truncation" in str(ei.value) and msg in str(ei.value)
