# SPDX-License-Identifier: GPL-3.0-or-later
"""The Python API: the builder, errors, numpy, DP-SGD helpers."""
import json
import math

import pytest

import dpacct
from dpacct import events as ev
from conftest import needs_lib, needs_cli

try:
    import numpy as np  # noqa: F811
except ImportError:  # numpy is optional
    np = None
needs_numpy = pytest.mark.skipif(np is None, reason="numpy not installed")


# ---------------------------------------------------------------- builder ---

def test_builder_json_and_operators():
    g = ev.gaussian(1.1)
    step = ev.poisson(g, 0.01)
    assert (step * 3).to_dict() == {"repeat": {"count": 3, "event": {"poisson": {"rate": 0.01, "event": {"gaussian": {"sigma": 1.1}}}}}}
    assert 3 * step == step * 3 == step.repeat(3) == ev.repeat(step, 3)
    c = ev.pure(1) + ev.laplace(2) + ev.no_op()
    assert c.to_dict() == {"compose": [{"pure": {"epsilon": 1}}, {"laplace": {"scale": 2}}, {"no_op": {}}]}
    assert ev.compose([ev.pure(1), ev.pure(2)]) == ev.compose(ev.pure(1), ev.pure(2))
    assert sum([ev.pure(1), ev.pure(2)]) == ev.pure(1) + ev.pure(2)
    assert ev.randomized_response(p=0.75).to_dict() == {"randomized_response": {"p": 0.75}}
    assert ev.randomized_response(1.0, k=5).to_dict() == {"randomized_response": {"epsilon": 1.0, "k": 5}}
    assert ev.sample(ev.gaussian(2, sensitivity=2), 100, 10).with_neighboring("replace").to_dict() == {
        "sample": {"n": 100, "m": 10, "event": {"gaussian": {"sigma": 2, "sensitivity": 2}}},
        "neighboring": "replace"}
    assert "repeat(poisson(gaussian(sigma=1.1), rate=0.01), count=3)" == repr(step * 3)
    # round trip through JSON
    e = ev.compose(ev.zcdp(0.1), ev.gdp(0.5), ev.privacy_loss([0.1, 1], [0.5, 0.5]),
                   ev.privacy_profile([0, 1], [0.1, 0.01]), ev.non_private(),
                   ev.discrete_laplace(3, 2), ev.discrete_gaussian(4), ev.approx(1, 1e-6))
    assert ev.from_json(e.to_json()) == e
    assert ev.from_dict(json.loads(e.to_json(neighboring="replace"))).neighboring == "replace"


def test_builder_refuses_bad_values():
    with pytest.raises(dpacct.InvalidSpecError, match="gaussian: sigma must be a number"):
        ev.gaussian("big")
    with pytest.raises(dpacct.InvalidSpecError, match="finite"):
        ev.gaussian(float("nan"))
    with pytest.raises(dpacct.InvalidSpecError, match="loss\\[1\\]"):
        ev.privacy_loss([0.1, float("inf")], [0.5, 0.5])
    with pytest.raises(dpacct.InvalidSpecError):
        ev.randomized_response(1.0, p=0.7)
    with pytest.raises(dpacct.InvalidSpecError):
        ev.compose()
    with pytest.raises(dpacct.InvalidSpecError, match="different neighbouring"):
        ev.pure(1).with_neighboring("replace") + ev.pure(1).with_neighboring("add_remove")
    with pytest.raises(dpacct.InvalidSpecError):
        ev.gaussian(True)
    assert isinstance(dpacct.InvalidSpecError("x"), ValueError)


# ----------------------------------------------------------------- errors ---

@needs_lib
@pytest.mark.parametrize("spec,cls,path", [
    ('{"repeat": {"count": 10, "event": {"poisson": {"rate": 1.5, "event": {"gaussian": {"sigma": 1}}}}}}',
     dpacct.InvalidSpecError, "/repeat/event/poisson/rate"),
    ({"compose": [{"pure": {"epsilon": 1}}, {"gaussian": {"sigm": 1}}]}, dpacct.InvalidSpecError, "/compose/1/gaussian"),
    ({"gausian": {"sigma": 1}}, dpacct.InvalidSpecError, "/"),
    (ev.repeat(ev.gaussian(1), 2.5), dpacct.InvalidSpecError, "/repeat/count"),
    ('{"gaussian": {"sigma": 1, "sigma": 2}}', dpacct.InvalidSpecError, None),
    ({"gaussian": {"sigma": np.float64(-1.0) if np is not None else -1.0}}, dpacct.InvalidSpecError, "/gaussian/sigma"),
    ({"gaussian": {"sigma": float("nan")}}, dpacct.InvalidSpecError, "/gaussian/sigma"),
    ({"repeat": {"count": 2e15, "event": {"gaussian": {"sigma": 1}}}}, dpacct.InvalidSpecError, "/repeat/count"),
])
def test_spec_errors_carry_the_path(spec, cls, path):
    with pytest.raises(cls) as e:
        dpacct.Accountant(spec)
    assert e.value.path == path
    assert e.value.status == 1 and e.value.status_name == "DPA_EINVAL"
    assert isinstance(e.value, ValueError) and isinstance(e.value, dpacct.DpacctError)


@needs_lib
def test_other_errors():
    with pytest.raises(dpacct.UnsupportedError) as e:
        dpacct.Accountant({"zcdp": {"rho": 0.1}}, method="pld")
    assert e.value.path == "/zcdp" and "method rdp" in e.value.reason and e.value.status == 2
    # poisson under replace: bracketed over one gaussian (issue 26), refused otherwise
    with pytest.raises(dpacct.UnsupportedError):
        dpacct.Accountant({"poisson": {"rate": 0.1, "event": {"laplace": {"scale": 1}}}},
                          neighboring="replace")
    with pytest.raises(dpacct.UnsupportedError, match="replace-one"):
        dpacct.Accountant({"poisson": {"rate": 0.1, "event": {"gaussian": {"sigma": 1}}}},
                          neighboring="replace", method="rdp")
    acc = dpacct.Accountant({"gaussian": {"sigma": 1}})
    # (delta 0 is pure DP, accepted: test_epsilon_at_delta_zero_and_poisson_rate_zero)
    for bad in (1, -0.5, -5e-324, float("nan")):
        with pytest.raises(dpacct.InvalidInputError):
            acc.epsilon(bad)
    with pytest.raises(TypeError):
        acc.epsilon("0.1")
    with pytest.raises(dpacct.InvalidInputError, match="method"):
        dpacct.Accountant({"gaussian": {"sigma": 1}}, method="magic")
    with pytest.raises(dpacct.InvalidInputError):
        dpacct.Accountant({"gaussian": {"sigma": 1}}, accuracy=5)
    with pytest.raises(TypeError):
        dpacct.Accountant({"gaussian": {"sigma": 1}}, acuracy=1e-3)
    with pytest.raises(dpacct.NumericError, match="no value of sigma"):
        dpacct.calibrate({"compose": [{"pure": {"epsilon": 5}}, {"gaussian": {"sigma": "?"}}]}, 1, 1e-5)
    with pytest.raises(dpacct.InvalidSpecError, match="placeholder"):
        dpacct.calibrate({"gaussian": {"sigma": 1}}, 1, 1e-5)
    with pytest.raises(dpacct.InvalidSpecError, match="only allowed in a calibration template"):
        dpacct.Accountant(ev.gaussian("?"))
    with pytest.raises(dpacct.InvalidInputError):
        acc.renyi("2j")
    acc.close()
    with pytest.raises(ValueError, match="closed"):
        acc.epsilon(1e-5)


# ------------------------------------------------------------ accountant ---

@needs_lib
def test_results_and_accountant_properties():
    with dpacct.Accountant(ev.gaussian(1.0) * 4) as acc:
        assert acc.method == "exact" and acc.neighboring == "add_remove"
        assert acc.spec == {"repeat": {"count": 4, "event": {"gaussian": {"sigma": 1, "sensitivity": 1}}},
                            "neighboring": "add_remove"}
        assert acc.options["method"] == "auto" and acc.options["accuracy"] == 1e-4
        r = acc.epsilon(1e-5)
        assert isinstance(r, dpacct.EpsilonResult) and r.certified and r.lower <= r.upper
        assert float(r) == r.upper and r.gap == r.upper - r.lower
        assert repr(r).startswith("EpsilonResult(upper=") and "method='exact'" in repr(r)
        rs = acc.epsilon([1e-5, 1e-6])
        assert [x.at for x in rs] == [1e-5, 1e-6] and rs[0] == r
        d = acc.delta(1.0)
        assert isinstance(d, dpacct.DeltaResult) and d.query == "delta" and d.at == 1.0
        p = acc.profile([0.0, 1.0, 2.0])
        assert list(p.upper) == [acc.delta(e).upper for e in (0.0, 1.0, 2.0)] or p.method == "exact"
        assert isinstance(p.upper, list) if np is None else isinstance(p.upper, np.ndarray)
        mu = acc.gdp_mu()
        assert mu.lower <= 2.0 <= mu.upper and mu.source == "gaussian"
        rr = acc.renyi(2)
        assert abs(rr.remove.value - 2 * 4 / 2) < 1e-12 and rr.symmetric
        rc = acc.renyi(1.5 + 1j)
        assert isinstance(rc.remove.value, complex) and rc.binding is None
    with dpacct.Accountant(ev.pure(1) + ev.non_private()) as acc:
        r = acc.epsilon(1e-5)
        assert r.upper == math.inf and "non-private" in r.note


# ------------------------------------------------------------------ numpy ---

@needs_lib
@needs_numpy
def test_numpy_everywhere():
    spec = {"repeat": {"count": np.int64(100),
                       "event": {"poisson": {"rate": np.float64(0.01), "event": {"gaussian": {"sigma": np.float32(1.5)}}}}}}
    acc = dpacct.Accountant(spec)
    assert acc.spec["repeat"]["count"] == 100
    eps = np.linspace(0, 3, 12).reshape(3, 4)
    p = acc.profile(eps)
    assert p.upper.shape == (3, 4) and p.lower.shape == (3, 4) and np.all(p.lower <= p.upper)
    assert np.all(np.diff(p.upper.ravel()) <= 0)
    assert (p.epsilon == eps).all()
    one = acc.profile(np.float64(1.0))
    assert len(one) == 1
    rs = acc.epsilon(np.array([1e-5, 1e-6]))
    assert len(rs) == 2 and rs[1].upper > rs[0].upper
    assert acc.epsilon(np.float64(1e-5)) == acc.epsilon(1e-5)
    e = ev.privacy_loss(np.array([-1.0, 0.5, 2.0]), np.array([0.2, 0.5, 0.29]))
    assert e.to_dict()["privacy_loss"]["loss"] == [-1.0, 0.5, 2.0]
    assert dpacct.Accountant(e).epsilon(0.05).upper > 0
    tm = dpacct.calibrate(ev.repeat(ev.gaussian("?"), np.int32(10)), np.float64(1.0), np.float64(1e-5))
    assert tm.value > 0


# ------------------------------------------------------------------ DP-SGD ---

def test_step_convention():
    assert dpacct.dpsgd_steps(epochs=60, dataset_size=60000, batch_size=256) == 14063
    assert dpacct.dpsgd_steps(epochs=1, dataset_size=1000, batch_size=100) == 10
    assert dpacct.dpsgd_steps(epochs=0.5, dataset_size=1001, batch_size=100) == 6
    assert dpacct.dpsgd_steps(epochs=3, sample_rate=0.3) == 10  # 3 / 0.3 = 10.000000000000002
    assert dpacct.dpsgd_steps(epochs=60, sample_rate=256 / 60000) == 14063
    e = dpacct.dpsgd_event(1.1, epochs=60, dataset_size=60000, batch_size=256)
    assert e.to_dict() == {"repeat": {"count": 14063, "event": {"poisson": {"rate": 256 / 60000, "event": {"gaussian": {"sigma": 1.1}}}}},
                           "neighboring": "add_remove"}
    w = dpacct.dpsgd_event(1.1, steps=10, dataset_size=60000, batch_size=256, sampling="without_replacement")
    assert w.to_dict() == {"repeat": {"count": 10, "event": {"sample": {"n": 60000, "m": 256, "event": {"gaussian": {"sigma": 1.1, "sensitivity": 2}}}}},
                           "neighboring": "replace"}
    with pytest.raises(dpacct.InvalidInputError):
        dpacct.dpsgd_event(1.0, epochs=1, steps=10, sample_rate=0.1)
    with pytest.raises(dpacct.InvalidInputError):
        dpacct.dpsgd_event(1.0, epochs=1, sample_rate=0.1, dataset_size=100, batch_size=20)


@needs_lib
def test_dpsgd_front_ends_agree():
    kw = dict(dataset_size=60000, batch_size=256, epochs=60)
    r = dpacct.dpsgd_epsilon(noise_multiplier=1.1, delta=1e-5, **kw)
    same = dpacct.Accountant(ev.poisson(ev.gaussian(1.1), 256 / 60000) * 14063).epsilon(1e-5)
    assert r == same
    assert dpacct.dpsgd_epsilon(noise_multiplier=1.1, target_delta=1e-5, sample_rate=256 / 60000, steps=14063) == same
    eps, order = dpacct.compute_dp_sgd_privacy(n=60000, batch_size=256, noise_multiplier=1.1, epochs=60, delta=1e-5)
    assert eps == same.upper and math.isnan(order)
    eps_rdp, order = dpacct.compute_dp_sgd_privacy(60000, 256, 1.1, 60, 1e-5, method="rdp")
    assert eps_rdp >= eps and order > 1
    assert dpacct.dpsgd_epsilon(noise_multiplier=1.1, delta=1e-5, accountant="rdp", **kw).upper == eps_rdp
    sigma = dpacct.get_noise_multiplier(target_epsilon=1.0, target_delta=1e-5, sample_rate=256 / 60000, epochs=60)
    assert dpacct.dpsgd_epsilon(noise_multiplier=sigma, delta=1e-5, **kw).upper <= 1.0
    assert sigma == dpacct.compute_noise(60000, 256, 1.0, 60, 1e-5)
    plan = dpacct.dpsgd_calibrate(target_epsilon=8, target_delta=1e-5, solve="epochs", noise_multiplier=1.1,
                                  dataset_size=60000, batch_size=256)
    assert plan.result.upper <= 8 and plan.whole_epochs == (plan.steps * 256) // 60000
    assert dpacct.dpsgd_steps(epochs=plan.whole_epochs, dataset_size=60000, batch_size=256) <= plan.steps
    assert dpacct.dpsgd_steps(epochs=plan.whole_epochs + 1, dataset_size=60000, batch_size=256) > plan.steps


def test_dpsgd_leaf_builder():
    e = ev.dpsgd(60000, 256, 1.1, epochs=60)
    assert e.to_dict() == {"dpsgd": {"dataset_size": 60000, "batch_size": 256, "epochs": 60, "noise": 1.1,
                                     "sampling": "poisson"}, "neighboring": "add_remove"}
    w = ev.dpsgd(1000, 10, "?", steps=5, sampling="without_replacement")
    assert w.neighboring == "replace" and w.to_dict()["dpsgd"]["noise"] == "?"
    with pytest.raises(dpacct.InvalidSpecError):
        ev.dpsgd(60000, 256, 1.1)
    with pytest.raises(dpacct.InvalidSpecError):
        ev.dpsgd(60000, 256, 1.1, epochs=1, sampling="shuffle")


@needs_lib
def test_dpsgd_leaf_equals_the_expanded_run():
    leaf = ev.dpsgd(60000, 256, 1.1, epochs=60)
    same = dpacct.Accountant(ev.poisson(ev.gaussian(1.1), 256 / 60000) * 14063).epsilon(1e-5)
    assert dpacct.Accountant(leaf).epsilon(1e-5) == same
    assert dpacct.dpsgd_epsilon(noise_multiplier=1.1, delta=1e-5, dataset_size=60000, batch_size=256,
                                epochs=60) == same
    both = dpacct.Accountant(leaf + ev.gaussian(20)).epsilon(1e-5)
    assert both.upper > same.upper


@needs_cli
def test_noise_multiplier_equals_cli_calibration(cli):
    tmpl = dpacct.dpsgd_event("?", epochs=60, dataset_size=60000, batch_size=256)
    j = cli("calibrate", "--epsilon", 1, "--delta", 1e-5, tmpl.to_json())
    assert dpacct.get_noise_multiplier(target_epsilon=1, target_delta=1e-5, dataset_size=60000,
                                       batch_size=256, epochs=60) == j["value"]


@needs_lib
def test_epsilon_at_delta_zero_and_poisson_rate_zero():
    # dp_accounting pld/pld_privacy_accountant_test.py, test_epsilon_basic:
    # EpsilonDelta(1, 0) and (2, 0) composed give get_epsilon(0.0) == 3.0
    # (docs/guarantees.md §3.16)
    for method in ("auto", "pld", "rdp"):
        a = dpacct.Accountant({"compose": [{"pure": {"epsilon": 1}}, {"pure": {"epsilon": 2}}]}, method=method)
        r = a.epsilon(0)
        assert (r.lower, r.upper, r.certified) == (3.0, 3.0, True)
    r = dpacct.Accountant({"gaussian": {"sigma": 2}}).epsilon(0)
    assert r.upper == math.inf and r.lower == math.inf and "not pure DP" in r.note
    with pytest.raises(dpacct.InvalidInputError, match=r"delta must be in \[0, 1\)"):
        dpacct.Accountant({"pure": {"epsilon": 1}}).epsilon(-0.1)
    # a Poisson event of rate 0 is the no-op, named in the note (sample m = 0 too)
    r = dpacct.Accountant({"compose": [{"laplace": {"scale": 4}},
                                       {"poisson": {"rate": 0, "event": {"gaussian": {"sigma": 1}}}}]}).epsilon(0)
    assert r.lower <= 0.25 <= r.upper and r.upper - r.lower < 1e-15
    assert "sampling rate 0 at /compose/1/poisson" in r.note


@needs_lib
def test_beta_at_brackets_the_gaussian_tradeoff():
    # G_1(0.1) = Phi(Phi^-1(0.9) - 1) = 0.610856308354639 (GDP Def 2.7); docs/fdp.md §9
    lo, hi = dpacct.Accountant({"gaussian": {"sigma": 1}}).beta_at(0.1)
    assert lo <= 0.610856308354639 <= hi and hi - lo < 1e-5
    with pytest.raises(dpacct.InvalidInputError, match=r"alpha must be in \(0, 1\]"):
        dpacct.Accountant({"gaussian": {"sigma": 1}}).beta_at(0)
