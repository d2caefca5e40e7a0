# SPDX-License-Identifier: GPL-3.0-or-later
"""dpacct.events.bandmf (the bandmf leaf, docs/bandmf.md): b = 1 is DP-SGD
with Poisson sampling (bit-identical bracket), fixed participation is the
Gaussian of the summed column norms (against a composition of Gaussians
with the same sensitivities), the JSON round trip, calibration of the noise,
and bad input named by field."""
import math

import pytest

import dpacct
from dpacct import events as ev
from conftest import needs_lib


def test_bandmf_event_dict():
    e = ev.bandmf([1, 0.5], 2.0, 100, rate=0.1)
    assert e.to_dict() == {"bandmf": {"coefficients": [1, 0.5], "noise_multiplier": 2.0, "iterations": 100,
                                      "participation": {"poisson": {"rate": 0.1}}}, "neighboring": "add_remove"}
    f = ev.bandmf([1, -0.5], 2, 100, epochs=3, separation=10)
    assert f.to_dict()["bandmf"]["participation"] == {"fixed": {"epochs": 3, "separation": 10}}
    assert ev.from_dict(f.to_dict()) == f
    assert ev.from_json(e.to_json()) == e


def test_bandmf_bad_input_python():
    with pytest.raises(dpacct.InvalidSpecError, match="exactly one of rate"):
        ev.bandmf([1], 1, 10)
    with pytest.raises(dpacct.InvalidSpecError, match="exactly one of rate"):
        ev.bandmf([1], 1, 10, rate=0.1, epochs=2)
    with pytest.raises(dpacct.InvalidSpecError, match="separation goes with epochs"):
        ev.bandmf([1], 1, 10, rate=0.1, separation=2)
    with pytest.raises(dpacct.InvalidSpecError, match=r"coefficients\[1\]"):
        ev.bandmf([1, float("nan")], 1, 10, rate=0.1)


@needs_lib
def test_bandmf_b1_is_dpsgd():
    a = dpacct.Accountant(ev.bandmf([1], 1.1, 500, rate=0.01), method="pld").epsilon(1e-5)
    b = dpacct.Accountant(ev.dpsgd(10000, 100, 1.1, steps=500), method="pld").epsilon(1e-5)
    assert (a.upper, a.lower) == (b.upper, b.lower)


@needs_lib
def test_bandmf_fixed_is_gaussian():
    # n = 5, b = 2, 3 participations 2 apart: columns 0, 2, 4 keep 2, 2, 1 entries
    a = dpacct.Accountant(ev.bandmf([3, 4], 7, 5, epochs=3), method="exact").epsilon(1e-6)
    g = dpacct.Accountant(ev.gaussian(7, sensitivity=3) * 3 + ev.gaussian(7, sensitivity=4) * 2,
                          method="exact").epsilon(1e-6)
    assert (a.upper, a.lower) == (g.upper, g.lower)
    # the closed form with mu = sqrt(59) / 7 lies in the bracket (1e-9 relative:
    # the double evaluation of erfc and exp here errs by far less, ~1e-13)
    mu = math.sqrt(59) / 7
    def delta(eps):
        return (0.5 * math.erfc((eps / mu - mu / 2) / math.sqrt(2))
                - math.exp(eps) * 0.5 * math.erfc((eps / mu + mu / 2) / math.sqrt(2)))
    assert delta(a.upper) <= 1e-6 * (1 + 1e-9) and delta(a.lower) >= 1e-6 * (1 - 1e-9)


@needs_lib
def test_bandmf_calibrate_and_errors():
    c = dpacct.calibrate(ev.bandmf([1, 0.5, 0.25], "?", 300, rate=0.05), epsilon=2, delta=1e-6)
    assert 0.3 < c.value < 5 and c.result.upper <= 2
    with pytest.raises(dpacct.InvalidSpecError) as err:
        dpacct.Accountant(ev.bandmf([1, 1, 1], 1, 2, rate=0.1))
    assert err.value.path == "/bandmf/coefficients"
    with pytest.raises(dpacct.InvalidSpecError) as err:
        dpacct.Accountant(ev.bandmf([1, 1], 1, 10, epochs=2, separation=1))
    assert err.value.path == "/bandmf/participation/fixed/separation"
