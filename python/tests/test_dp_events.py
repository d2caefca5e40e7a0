# SPDX-License-Identifier: GPL-3.0-or-later
"""from_dp_event on every event kind dpacct supports.

Fake classes carry dp_accounting's class and attribute names (the converter
duck-types by name); where the real dp_accounting is importable
($DPACCT_DP_ACCOUNTING or /tmp/dpacct-peers/dp_accounting, with Debian's
attrs, numpy, scipy, absl, mpmath) the same trees are built from its classes
too, and a few numbers are compared with its PLD accountant."""
import math
import os
import sys
from types import SimpleNamespace

import pytest

import dpacct
from dpacct import events as ev
from conftest import needs_lib


def fake(name, **attrs):
    cls = type(name, (), {})
    obj = cls()
    for k, v in attrs.items():
        setattr(obj, k, v)
    return obj


class FakeModule:
    """dp_accounting.dp_event's constructors, as fakes."""
    def __getattr__(self, name):
        fields = {
            "GaussianDpEvent": ["noise_multiplier"], "LaplaceDpEvent": ["noise_multiplier"],
            "DiscreteLaplaceDpEvent": ["noise_parameter", "sensitivity"],
            "DiscreteGaussianDpEvent": ["sigma", "sensitivity", "dimension"],
            "RandomizedResponseDpEvent": ["noise_parameter", "num_buckets"],
            "EpsilonDeltaDpEvent": ["epsilon", "delta"], "ZCDpEvent": ["rho", "xi"],
            "MixtureOfGaussiansDpEvent": ["standard_deviation", "sensitivities", "sampling_probs"],
            "ExponentialMechanismDpEvent": ["epsilon"], "PermuteAndFlipDpEvent": ["epsilon"],
            "SelfComposedDpEvent": ["event", "count"], "ComposedDpEvent": ["events"],
            "PoissonSampledDpEvent": ["sampling_probability", "event"],
            "SampledWithoutReplacementDpEvent": ["source_dataset_size", "sample_size", "event"],
            "SampledWithReplacementDpEvent": ["source_dataset_size", "sample_size", "event"],
            "NoOpDpEvent": [], "NonPrivateDpEvent": [], "UnsupportedDpEvent": [],
            "SingleEpochTreeAggregationDpEvent": ["noise_multiplier", "step_counts"],
            "RepeatAndSelectDpEvent": ["event", "mean", "shape"],
            "TruncatedSubsampledGaussianDpEvent": ["dataset_size", "sampling_probability",
                                                   "truncated_batch_size", "noise_multiplier"],
        }[name]
        defaults = {"DiscreteGaussianDpEvent": {"sensitivity": 1.0, "dimension": None},
                    "ZCDpEvent": {"xi": 0.0}}.get(name, {})

        def make(*args, **kw):
            vals = dict(defaults)
            vals.update(zip(fields, args))
            vals.update(kw)
            return fake(name, **vals)
        return make


def _real_module():
    path = os.environ.get("DPACCT_DP_ACCOUNTING", "/tmp/dpacct-peers/dp_accounting")
    if path and os.path.isdir(path) and path not in sys.path:
        sys.path.append(path)
    try:
        from dp_accounting import dp_event  # noqa: F401
        return dp_event
    except Exception:  # not installed, or its dependencies are missing
        return None


REAL = _real_module()
MODULES = [pytest.param(FakeModule(), id="fake")] + (
    [pytest.param(REAL, id="dp_accounting")] if REAL is not None else
    [pytest.param(None, id="dp_accounting", marks=pytest.mark.skip(reason="dp_accounting not importable"))])


def cases(m):
    """(DpEvent, expected dpacct spec dict, neighboring) for every supported kind."""
    g = m.GaussianDpEvent(1.5)
    return [
        (m.NoOpDpEvent(), {"no_op": {}}, None),
        (m.NonPrivateDpEvent(), {"non_private": {}}, None),
        (g, {"gaussian": {"sigma": 1.5}}, None),
        (m.GaussianDpEvent(0), {"non_private": {}}, None),
        (m.LaplaceDpEvent(2.0), {"laplace": {"scale": 2.0}}, None),
        (m.LaplaceDpEvent(0.0), {"non_private": {}}, None),
        (m.DiscreteLaplaceDpEvent(0.5, 3), {"discrete_laplace": {"scale": 2.0, "sensitivity": 3}}, None),
        (m.DiscreteGaussianDpEvent(4.0, 2), {"discrete_gaussian": {"sigma": 4.0, "sensitivity": 2}}, None),
        (m.DiscreteGaussianDpEvent(4.0, 1, 1), {"discrete_gaussian": {"sigma": 4.0, "sensitivity": 1}}, None),
        (m.RandomizedResponseDpEvent(0.5, 2),
         {"randomized_response": {"epsilon": math.log1p(2 * 0.5 / 0.5)}}, "replace"),
        (m.RandomizedResponseDpEvent(0.25, 10),
         {"randomized_response": {"epsilon": math.log1p(10 * 0.75 / 0.25), "k": 10}}, "replace"),
        (m.RandomizedResponseDpEvent(0.3, 1), {"no_op": {}}, None),
        (m.RandomizedResponseDpEvent(0.0, 2), {"non_private": {}}, None),
        (m.EpsilonDeltaDpEvent(1.0, 1e-6), {"approx": {"epsilon": 1.0, "delta": 1e-6}}, None),
        (m.ZCDpEvent(0.1), {"zcdp": {"rho": 0.1}}, None),
        # (xi, rho)-zCDP (issue 26: formerly refused)
        (m.ZCDpEvent(0.1, 0.2), {"zcdp": {"rho": 0.1, "xi": 0.2}}, None),
        (m.MixtureOfGaussiansDpEvent(2.0, [0.0, 1.0], [0.5, 0.5]),
         {"mixture_of_gaussians": {"sigma": 2.0, "sensitivities": [0.0, 1.0], "probabilities": [0.5, 0.5]}},
         None),
        (m.MixtureOfGaussiansDpEvent(2.0, [0.0], [1.0]), {"no_op": {}}, None),
        (m.ExponentialMechanismDpEvent(0.7), {"exponential_mechanism": {"epsilon": 0.7}}, None),
        (m.ExponentialMechanismDpEvent(0.0), {"no_op": {}}, None),
        (m.PermuteAndFlipDpEvent(0.7), {"permute_and_flip": {"epsilon": 0.7}}, None),
        (m.PermuteAndFlipDpEvent(0.0), {"no_op": {}}, None),
        (m.SingleEpochTreeAggregationDpEvent(2.0, 7), {"tree_aggregation": {"sigma": 2.0, "steps": 7}}, None),
        (m.SingleEpochTreeAggregationDpEvent(2.0, [3, 9, 5]), {"tree_aggregation": {"sigma": 2.0, "steps": 9}},
         None),
        (m.SingleEpochTreeAggregationDpEvent(0.0, 7), {"non_private": {}}, None),
        (m.SingleEpochTreeAggregationDpEvent(2.0, [0, 0]), {"no_op": {}}, None),
        (m.RepeatAndSelectDpEvent(g, 3.0, 1.0),
         {"repeat_and_select": {"mean": 3.0, "shape": 1.0, "event": {"gaussian": {"sigma": 1.5}}}}, None),
        (m.RepeatAndSelectDpEvent(g, 3.0, math.inf),
         {"repeat_and_select": {"mean": 3.0, "event": {"gaussian": {"sigma": 1.5}}}}, None),
        (m.RepeatAndSelectDpEvent(m.SelfComposedDpEvent(m.PoissonSampledDpEvent(0.1, g), 4), 2.0, 0.0),
         {"repeat_and_select": {"mean": 2.0, "shape": 0.0, "event": {"repeat": {"count": 4, "event": {
             "poisson": {"rate": 0.1, "event": {"gaussian": {"sigma": 1.5}}}}}}}}, None),
        (m.TruncatedSubsampledGaussianDpEvent(1000, 0.01, 12, 1.5),
         {"truncated_poisson": {"rate": 0.01, "max_batch": 12, "n": 1000, "event": {"gaussian": {"sigma": 1.5}}}},
         None),
        (m.TruncatedSubsampledGaussianDpEvent(1000, 0.0, 12, 1.5), {"no_op": {}}, None),
        (m.TruncatedSubsampledGaussianDpEvent(1000, 0.01, 0, 1.5), {"no_op": {}}, None),
        (m.TruncatedSubsampledGaussianDpEvent(1000, 0.01, 12, 0.0), {"non_private": {}}, None),
        (m.SelfComposedDpEvent(g, 10), {"repeat": {"count": 10, "event": {"gaussian": {"sigma": 1.5}}}}, None),
        (m.SelfComposedDpEvent(g, 0), {"no_op": {}}, None),
        (m.ComposedDpEvent([g, m.LaplaceDpEvent(1.0)]),
         {"compose": [{"gaussian": {"sigma": 1.5}}, {"laplace": {"scale": 1.0}}]}, None),
        (m.ComposedDpEvent([]), {"no_op": {}}, None),
        (m.PoissonSampledDpEvent(0.01, g), {"poisson": {"rate": 0.01, "event": {"gaussian": {"sigma": 1.5}}}},
         None),
        (m.PoissonSampledDpEvent(0.0, g), {"no_op": {}}, None),
        (m.SampledWithoutReplacementDpEvent(1000, 10, g),
         {"sample": {"n": 1000, "m": 10, "event": {"gaussian": {"sigma": 1.5, "sensitivity": 2}}}}, "replace"),
        (m.SampledWithReplacementDpEvent(1000, 10, g),
         {"sample_with_replacement": {"n": 1000, "m": 10, "event": {"gaussian": {"sigma": 1.5}}}}, None),
        (m.SelfComposedDpEvent(m.ComposedDpEvent([m.PoissonSampledDpEvent(0.1, g), m.EpsilonDeltaDpEvent(0.1, 0)]), 5),
         {"repeat": {"count": 5, "event": {"compose": [
             {"poisson": {"rate": 0.1, "event": {"gaussian": {"sigma": 1.5}}}},
             {"approx": {"epsilon": 0.1, "delta": 0}}]}}}, None),
    ]


def _lib_knows(kind):
    try:
        dpacct.canonical_spec({kind: {"n": 10, "m": 2, "event": {"gaussian": {"sigma": 1}}}}
                              if kind == "sample_with_replacement" else
                              {kind: {"sigma": 1, "sensitivities": [1], "probabilities": [1]}})
        return True
    except dpacct.InvalidSpecError as e:
        return "unknown event kind" not in str(e)


@pytest.mark.parametrize("m", MODULES)
def test_every_supported_kind(m):
    for dp, expected, nb in cases(m):
        got = dpacct.from_dp_event(dp)
        assert got.to_dict() == expected, type(dp).__name__
        assert got == ev.from_dict(expected)


@needs_lib
@pytest.mark.parametrize("m", MODULES)
def test_converted_specs_are_accepted_by_the_library(m):
    for dp, expected, nb in cases(m):
        kind = next(iter(expected))
        inner = expected[kind].get("event", {}) if isinstance(expected[kind], dict) else {}
        if kind in ("sample_with_replacement", "mixture_of_gaussians") and not _lib_knows(kind):
            continue  # a library built before these kinds
        spec = dpacct.from_dp_event(dp, neighboring=nb)
        canon = dpacct.canonical_spec(spec)
        assert ('"neighboring":"%s"' % (nb or "add_remove")) in canon
        if kind not in ("zcdp", "sample_with_replacement", "mixture_of_gaussians") and "zcdp" not in inner:
            with dpacct.Accountant(spec) as acc:
                r = acc.epsilon(1e-3)
                assert r.lower <= r.upper


@pytest.mark.parametrize("m", MODULES)
def test_unsupported_kinds_name_the_class(m):
    g = m.GaussianDpEvent(1.0)
    bad = [m.UnsupportedDpEvent(), m.DiscreteGaussianDpEvent(1.0, 1, 5),
           m.RepeatAndSelectDpEvent(m.UnsupportedDpEvent(), 2.0, 1.0)]
    for b in bad:
        with pytest.raises(dpacct.UnsupportedError) as e:
            dpacct.from_dp_event(b)
        assert type(b).__name__ in str(e.value) or "UnsupportedDpEvent" in str(e.value)
    # nested: the path names the enclosing classes
    with pytest.raises(dpacct.UnsupportedError) as e:
        dpacct.from_dp_event(m.ComposedDpEvent([g, m.SelfComposedDpEvent(m.UnsupportedDpEvent(), 2)]))
    assert e.value.path == "/ComposedDpEvent/events/1/SelfComposedDpEvent/event"
    assert "UnsupportedDpEvent" in str(e.value)


def test_unknown_class_and_missing_attribute():
    with pytest.raises(dpacct.UnsupportedError, match="FancyNewDpEvent"):
        dpacct.from_dp_event(fake("FancyNewDpEvent", x=1))
    with pytest.raises(dpacct.InvalidSpecError, match="noise_multiplier"):
        dpacct.from_dp_event(fake("GaussianDpEvent"))
    # subclasses are recognised through their bases' names
    Base = type("GaussianDpEvent", (), {})
    Sub = type("MyGaussian", (Base,), {})
    s = Sub()
    s.noise_multiplier = 2.0
    assert dpacct.from_dp_event(s).to_dict() == {"gaussian": {"sigma": 2.0}}


def test_neighboring_relation_by_name():
    rel = SimpleNamespace(name="REPLACE_ONE")
    e = dpacct.from_dp_event(fake("GaussianDpEvent", noise_multiplier=1.0), neighboring=rel)
    assert e.to_dict()["neighboring"] == "replace"
    # noise relative to C on one record: a replaced record moves the sum by 2C
    assert e.to_dict()["gaussian"] == {"sigma": 1.0, "sensitivity": 2}
    e1 = dpacct.from_dp_event(fake("GaussianDpEvent", noise_multiplier=1.0), neighboring="add_remove")
    assert "sensitivity" not in str(e1.to_dict())
    # REPLACE_SPECIAL (issue 26: formerly refused): add_remove (test_replace_special)
    e2 = dpacct.from_dp_event(fake("GaussianDpEvent", noise_multiplier=1.0),
                              neighboring=SimpleNamespace(name="REPLACE_SPECIAL"))
    assert e2.to_dict() == dict(e1.to_dict(), neighboring="add_remove")


@needs_lib
def test_accountant_takes_dp_events_directly_and_the_compat_accountant():
    m = FakeModule()
    step = m.PoissonSampledDpEvent(0.01, m.GaussianDpEvent(1.0))
    a = dpacct.Accountant(m.SelfComposedDpEvent(step, 100))
    b = dpacct.Accountant(ev.poisson(ev.gaussian(1.0), 0.01) * 100)
    assert a.epsilon(1e-5) == b.epsilon(1e-5)
    pa = dpacct.PrivacyAccountant()
    assert pa.get_epsilon(1e-5) == 0
    pa.compose(step, 100)
    assert pa.supports(step) and not pa.supports(m.UnsupportedDpEvent())
    assert pa.get_epsilon(1e-5) == dpacct.Accountant(ev.poisson(ev.gaussian(1.0), 0.01) * 100).epsilon(1e-5).upper
    with pytest.raises(dpacct.UnsupportedError):
        pa.compose(m.UnsupportedDpEvent())


@needs_lib
@pytest.mark.skipif(REAL is None, reason="dp_accounting not importable")
def test_real_dp_accounting_builder_and_numbers():
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant
    d = REAL
    builder = dp_accounting.DpEventBuilder()
    builder.compose(d.PoissonSampledDpEvent(0.01, d.GaussianDpEvent(1.0)), 1000)
    builder.compose(d.LaplaceDpEvent(5.0))
    event = builder.build()
    assert dpacct.from_dp_event(builder) == dpacct.from_dp_event(event)
    theirs = pld_privacy_accountant.PLDAccountant()
    theirs.compose(event)
    ours = dpacct.PrivacyAccountant()
    ours.compose(event)
    r = ours.epsilon_result(1e-6)
    # dp_accounting's pessimistic PLD estimate lands in or just above our certified bracket
    assert r.lower * (1 - 1e-3) <= theirs.get_epsilon(1e-6) <= r.upper * 1.02
    pa = dpacct.PrivacyAccountant(dp_accounting.NeighboringRelation.REPLACE_ONE)
    pa.compose(d.RandomizedResponseDpEvent(0.5, 4), 3)
    th = pld_privacy_accountant.PLDAccountant(dp_accounting.NeighboringRelation.REPLACE_ONE)
    # three separate compose calls: dp_accounting 0.6's PLDAccountant drops the count of a
    # RandomizedResponseDpEvent (compose(e, 3) and SelfComposedDpEvent(e, 3) give one step)
    for _ in range(3):
        th.compose(d.RandomizedResponseDpEvent(0.5, 4))
    r = pa.epsilon_result(1e-3)
    assert r.lower * (1 - 1e-3) <= th.get_epsilon(1e-3) <= r.upper * 1.02



@pytest.mark.parametrize("m", MODULES)
def test_tree_aggregation_empty_step_counts(m):
    with pytest.raises(dpacct.InvalidSpecError, match="step_counts"):
        dpacct.from_dp_event(m.SingleEpochTreeAggregationDpEvent(1.0, []))


@needs_lib
def test_new_kinds_refused_where_dpacct_refuses_them():
    m = FakeModule()
    # truncated Poisson subsampling: add_remove only (dp_accounting's PLD also takes replace,
    # through its REPLACE_ONE bound for the truncated part; dpacct refuses naming the relation)
    spec = dpacct.from_dp_event(m.TruncatedSubsampledGaussianDpEvent(100, 0.1, 10, 1.0), neighboring="replace")
    with pytest.raises((dpacct.InvalidSpecError, dpacct.UnsupportedError)):
        dpacct.Accountant(spec).epsilon(1e-5)
    # repeat-and-select is a Renyi bound: the pld method refuses it naming rdp
    rs = dpacct.from_dp_event(m.RepeatAndSelectDpEvent(m.GaussianDpEvent(3.0), 2.0, 1.0))
    with pytest.raises(dpacct.UnsupportedError, match="rdp"):
        dpacct.Accountant(rs, "pld").epsilon(1e-5)


def _rdp(d, nb, *events):
    from dp_accounting.rdp import rdp_privacy_accountant as rdpa
    acc = rdpa.RdpAccountant(neighboring_relation=nb) if nb is not None else rdpa.RdpAccountant()
    for e in events:
        acc.compose(e)
    return acc


@needs_lib
@pytest.mark.skipif(REAL is None, reason="dp_accounting not importable")
def test_real_dp_accounting_new_kinds():
    """Numbers against dp_accounting's own accountants, each where its
    analysis is the same as dpacct's (or a documented bound of it)."""
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant
    d = REAL
    NR = dp_accounting.NeighboringRelation
    delta = 1e-6

    # tree aggregation: both are the Gaussian mechanism with mu = sqrt(depth)/nm.
    # dp_accounting's RDP accountant requires REPLACE_SPECIAL (a node's sensitivity
    # is 1 either way); dpacct's exact Gaussian eps is below its RDP conversion,
    # dpacct's rdp method close to it.
    t = d.SelfComposedDpEvent(d.SingleEpochTreeAggregationDpEvent(3.0, [100, 255]), 20)
    theirs = _rdp(d, NR.REPLACE_SPECIAL, t).get_epsilon(delta)
    exact = dpacct.Accountant(dpacct.from_dp_event(t)).epsilon(delta)
    rdp = dpacct.Accountant(dpacct.from_dp_event(t), "rdp").epsilon(delta)
    assert exact.upper <= theirs and rdp.upper <= theirs * 1.001
    assert rdp.upper >= theirs * 0.97  # the same curve, another order grid / conversion
    # mu = sqrt(20 * 8) / 3 exactly
    mu = math.sqrt(20 * 8) / 3
    g = dpacct.Accountant(ev.gdp(mu)).epsilon(delta)
    assert abs(exact.upper - g.upper) <= 1e-9 * g.upper

    # repeat-and-select: the same Renyi bounds (Papernot & Steinke Thm 2, Thm 6)
    for shape in (1.0, 0.0, 2.5, math.inf):
        rs = d.RepeatAndSelectDpEvent(d.SelfComposedDpEvent(d.PoissonSampledDpEvent(0.05, d.GaussianDpEvent(2.0)), 50),
                                      4.0, shape)
        theirs = _rdp(d, None, rs).get_epsilon(delta)
        ours = dpacct.Accountant(dpacct.from_dp_event(rs), "rdp").epsilon(delta)
        assert ours.certified and ours.upper <= theirs * 1.02 and ours.upper >= theirs * 0.9, (shape, ours, theirs)

    # truncated Poisson subsampling: the same decomposition (dp_accounting's
    # compute_mixture of the rate-q Gaussian and the doubled-sensitivity part);
    # dp_accounting's pessimistic PLD lands in or just above our bracket
    tr = d.SelfComposedDpEvent(d.TruncatedSubsampledGaussianDpEvent(1000, 0.01, 12, 1.0), 100)
    th = pld_privacy_accountant.PLDAccountant()
    th.compose(tr)
    theirs = th.get_epsilon(delta)
    ours = dpacct.Accountant(dpacct.from_dp_event(tr)).epsilon(delta)
    assert ours.lower * (1 - 1e-3) <= theirs <= ours.upper * 1.02, (ours, theirs)

    # exponential mechanism: dp_accounting's PLD treats it as pure eps (an upper
    # bound); dpacct's bounded-range pair is below it, and below its RDP accountant
    em = d.SelfComposedDpEvent(d.ExponentialMechanismDpEvent(0.5), 30)
    th = pld_privacy_accountant.PLDAccountant()
    th.compose(em)
    ours = dpacct.Accountant(dpacct.from_dp_event(em)).epsilon(delta)
    assert ours.upper < th.get_epsilon(delta)
    # thirty separate compose calls: dp_accounting's RdpAccountant drops the count of an
    # ExponentialMechanismDpEvent (SelfComposedDpEvent(e, 30) is accounted as one step)
    # dpacct's rdp method uses the same zCDP bound eps^2/8 (capped at eps): equal up to the
    # order grid.  (Here pld, on the worst-case envelope pair, is above the Renyi bound: the
    # envelope is not itself bounded range, so it composes worse than any one BR pair.)
    theirs = _rdp(d, None, *[d.ExponentialMechanismDpEvent(0.5)] * 30).get_epsilon(delta)
    ours_rdp = dpacct.Accountant(dpacct.from_dp_event(em), "rdp").epsilon(delta)
    assert theirs * 0.99 <= ours_rdp.upper <= theirs * 1.01, (ours_rdp, theirs)
    pure = dpacct.Accountant(ev.pure(0.5) * 30).epsilon(delta)
    assert abs(pure.upper - th.get_epsilon(delta)) <= 0.02 * pure.upper

    # permute-and-flip: dpacct charges pure eps, dp_accounting the Laplace pair
    # (scale 1/eps), which is below pure eps: dpacct's value is the larger
    pf = d.SelfComposedDpEvent(d.PermuteAndFlipDpEvent(0.5), 30)
    th = pld_privacy_accountant.PLDAccountant()
    th.compose(pf)
    ours = dpacct.Accountant(dpacct.from_dp_event(pf)).epsilon(delta)
    assert ours.upper == pure.upper
    assert ours.lower >= th.get_epsilon(delta) * (1 - 1e-3)


def test_replace_one_doubles_the_sums_sensitivity_everywhere():
    # GaussianDpEvent(2) under REPLACE_ONE: the sum moves by 2C, mu = 2/2 = 1,
    # the same bracket as a gaussian of sigma 1 (sensitivity 1) in every front end
    g = fake("GaussianDpEvent", noise_multiplier=2.0)
    rel = SimpleNamespace(name="REPLACE_ONE")
    with dpacct.Accountant({"gaussian": {"sigma": 1.0}, "neighboring": "replace"}) as a:
        ref = a.epsilon(1e-5)
    pa = dpacct.PrivacyAccountant(rel)
    pa.compose(g)
    r1 = pa.epsilon_result(1e-5)
    with dpacct.Accountant(g, neighboring="replace") as a:
        r2 = a.epsilon(1e-5)
    with dpacct.Accountant(dpacct.from_dp_event(g, neighboring=rel)) as a:
        r3 = a.epsilon(1e-5)
    for r in (r1, r2, r3):
        assert (r.lower, r.upper) == (ref.lower, ref.upper)


@needs_lib
@pytest.mark.parametrize("m", MODULES)
def test_replace_special(m):
    """dp_accounting's REPLACE_SPECIAL (a record replaced by a special record):
    add_remove for additive noise, randomized response against the uniform
    report.  Values from dp_accounting/pld/pld_privacy_accountant_test.py
    test_randomized_response: noise (4 - e)/3 with 4 buckets and e^-1 with 2
    are exactly 1-DP there (delta(1) = 0 to 7 places)."""
    for p, k in (((4 - math.e) / 3, 4), (math.exp(-1), 2)):
        e = dpacct.from_dp_event(m.RandomizedResponseDpEvent(p, k), "REPLACE_SPECIAL")
        d = e.to_dict()
        assert d["neighboring"] == "add_remove" and "privacy_loss" in d
        with dpacct.Accountant(e) as acc:
            r = acc.delta(1.0)
            assert r.lower <= 0 + 1e-15 and r.upper <= 5e-8
            r = acc.epsilon(1e-12)
            assert r.lower <= 1.0 <= r.upper and r.upper - 1 < 1e-12
            # the add direction (uniform against R(x)) is the binding one below eps 1
            r = acc.delta(0.5)
            assert r.upper > 0.01
    # zero noise: non-private; one bucket: no-op (test_randomized_response_with_*)
    assert dpacct.from_dp_event(m.RandomizedResponseDpEvent(0.0, 3), "REPLACE_SPECIAL").to_dict()["non_private"] == {}
    assert "no_op" in dpacct.from_dp_event(m.RandomizedResponseDpEvent(0.3, 1), "REPLACE_SPECIAL").to_dict()
    # additive noise: the add_remove spec itself
    g = m.PoissonSampledDpEvent(0.1, m.GaussianDpEvent(1.0))
    assert dpacct.from_dp_event(g, "REPLACE_SPECIAL").to_dict() == dpacct.from_dp_event(g, "ADD_OR_REMOVE_ONE").to_dict()
