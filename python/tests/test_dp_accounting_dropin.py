# SPDX-License-Identifier: GPL-3.0-or-later
"""dpacct.dp_accounting: dp_accounting's PrivacyAccountant over dpacct.

Without dp_accounting (a subprocess with only dpacct on the path): the
stand-in base.  With dp_accounting's source ($DPACCT_DP_ACCOUNTING or
/tmp/dpacct-peers/dp_accounting, bench/fetch-peers.sh; Debian's attrs,
numpy, scipy): real subclasses, the ledger as dp_accounting builds it,
calibrate_dp_mechanism, every DpEvent class of dp_event.py converted or
refused with a reason, and jax_privacy's accounting.py
($DPACCT_JAX_PRIVACY or /tmp/dpacct-peers/jax_privacy) driven with it.
Those parts skip when the sources are absent (CI has no network)."""
import importlib
import importlib.util
import inspect
import math
import os
import re
import subprocess
import sys
import types

import pytest

from conftest import CHECKOUT, PYDIR, needs_lib

DPA_PATH = os.environ.get("DPACCT_DP_ACCOUNTING", "/tmp/dpacct-peers/dp_accounting")
JAXP_PATH = os.environ.get("DPACCT_JAX_PRIVACY", "/tmp/dpacct-peers/jax_privacy")


def _real():
    if os.path.isdir(DPA_PATH) and DPA_PATH not in sys.path:
        sys.path.append(DPA_PATH)
    try:
        import dp_accounting  # noqa: F401
    except Exception:  # absent, or its dependencies are
        return None
    import dpacct.dp_accounting as mine
    if not mine.HAVE_DP_ACCOUNTING:  # imported before dp_accounting was on the path
        mine = importlib.reload(mine)
    return mine


MINE = _real()
needs_dpa = pytest.mark.skipif(MINE is None, reason="dp_accounting not importable (bench/fetch-peers.sh)")

STANDIN = r"""
import math, pickle, sys
import dpacct, dpacct.dp_accounting as d
from dpacct import events as ev
assert not d.HAVE_DP_ACCOUNTING and "dp_accounting" not in sys.modules
a = d.PLDAccountant()
assert a.ledger == ev.no_op() and a.get_epsilon(1e-5) == 0.0
step = ev.poisson(ev.gaussian(1.1), 256 / 60000)
assert a.compose(step, 14000) is a
a.compose(ev.repeat(step, 63)).compose(ev.no_op())
assert a.ledger == ev.repeat(step, 14063), a.ledger
print(repr(a.get_epsilon(1e-5)))
assert not a.supports(ev.sample(ev.gaussian(1), 100, 10))
r = d.DpacctAccountant(d.NeighboringRelation.REPLACE_ONE)
assert r.supports(ev.sample(ev.gaussian(1), 100, 10))
try:
    a.compose(ev.sample(ev.gaussian(1), 100, 10))
    raise SystemExit("composed")
except d.UnsupportedEventError as e:
    assert "replace" in str(e)
# REPLACE_SPECIAL (issue 26: formerly refused): add_remove for additive noise
s = d.PLDAccountant(d.NeighboringRelation.REPLACE_SPECIAL)
assert s.compose(ev.gaussian(1)).get_epsilon(1e-5) == d.PLDAccountant().compose(ev.gaussian(1)).get_epsilon(1e-5)
b = pickle.loads(pickle.dumps(a))
assert b.ledger == a.ledger and b.get_epsilon(1e-5) == a.get_epsilon(1e-5)
"""


@needs_lib
def test_stand_in_base_without_dp_accounting(cli):
    env = dict(os.environ, PYTHONPATH=PYDIR)
    p = subprocess.run([sys.executable, "-c", STANDIN], capture_output=True, text=True, env=env,
                       cwd=PYDIR)
    assert p.returncode == 0, p.stderr
    out = cli("dpsgd", "--dataset-size", 60000, "--batch-size", 256, "--epochs", 60,
              "--noise", 1.1, "--delta", 1e-5)
    assert float(p.stdout) == out["epsilon_upper"]


# ------------------------------------------------------- with dp_accounting ---

@needs_dpa
@needs_lib
def test_real_subclass_ledger_and_numbers(cli):
    import dp_accounting as dpa
    a = MINE.PLDAccountant()
    assert isinstance(a, dpa.PrivacyAccountant)
    assert isinstance(MINE.RDPAccountant(), dpa.PrivacyAccountant)
    assert a.neighboring_relation is dpa.NeighboringRelation.ADD_OR_REMOVE_ONE
    assert a.ledger == dpa.NoOpDpEvent() and a.get_epsilon(1e-5) == 0.0
    step = dpa.PoissonSampledDpEvent(256 / 60000, dpa.GaussianDpEvent(1.1))
    ref = dpa.pld.PLDAccountant()
    for acc in (a, ref):
        acc.compose(step, 14000).compose(dpa.SelfComposedDpEvent(step, 63)).compose(dpa.NoOpDpEvent())
    assert a.ledger == ref.ledger == dpa.SelfComposedDpEvent(step, 14063)
    out = cli("dpsgd", "--dataset-size", 60000, "--batch-size", 256, "--epochs", 60,
              "--noise", 1.1, "--delta", 1e-5)
    assert a.get_epsilon(1e-5) == out["epsilon_upper"]
    assert a.get_epsilon_bracket(1e-5) == (out["epsilon_lower"], out["epsilon_upper"])
    d = a.get_delta(2.0)
    lo, up = a.get_delta_bracket(2.0)
    assert lo <= d == up
    # dp_accounting's own PLD (an estimate) lies near the certified bracket
    assert abs(ref.get_epsilon(1e-5) - out["epsilon_upper"]) < 0.02
    rdp = MINE.RDPAccountant(orders=[2, 3]).compose(step, 14063)
    assert rdp.get_epsilon(1e-5) >= out["epsilon_upper"]


@needs_dpa
@needs_lib
def test_neighbouring_relations_and_unsupported():
    import dp_accounting as dpa
    wor = dpa.SampledWithoutReplacementDpEvent(1000, 10, dpa.GaussianDpEvent(1.0))
    add_remove = MINE.PLDAccountant()
    replace = MINE.PLDAccountant(dpa.NeighboringRelation.REPLACE_ONE)
    assert replace.neighboring_relation is dpa.NeighboringRelation.REPLACE_ONE
    assert replace.supports(wor) and not add_remove.supports(wor)
    with pytest.raises(dpa.UnsupportedEventError, match="replace"):
        add_remove.compose(wor)
    assert add_remove.ledger == dpa.NoOpDpEvent()  # nothing composed on failure
    assert 0 < replace.compose(wor, 5).get_epsilon(1e-6) < math.inf
    # REPLACE_SPECIAL (issue 26: formerly refused): randomized response against the
    # special record; pld/pld_privacy_accountant_test.py test_randomized_response:
    # noise (4 - e)/3, 4 buckets is 1-DP (delta(1) = 0 to 7 places)
    special = MINE.PLDAccountant(dpa.NeighboringRelation.REPLACE_SPECIAL)
    special.compose(dpa.RandomizedResponseDpEvent((4 - math.e) / 3, 4))
    assert special.get_delta(1.0) < 5e-8 and special.get_delta(0.9) > 0.01
    # replace-one: a Gaussian sum of values of norm <= C moves by 2C (dp_accounting's PLD agrees)
    import dpacct
    from dpacct import events as ev
    g50 = dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(10.0), 50)
    mine = MINE.PLDAccountant(dpa.NeighboringRelation.REPLACE_ONE).compose(g50).get_epsilon_bracket(1e-6)
    two = dpacct.Accountant(ev.repeat(ev.gaussian(10.0, sensitivity=2), 50), "pld",
                            neighboring="replace").epsilon(1e-6)
    assert mine == (two.lower, two.upper)
    theirs = dpa.pld.PLDAccountant(dpa.NeighboringRelation.REPLACE_ONE).compose(g50).get_epsilon(1e-6)
    assert two.lower * (1 - 1e-3) <= theirs <= two.upper * 1.02
    with pytest.raises(TypeError):
        add_remove.compose("not a DpEvent")  # dp_accounting's check
    old = MINE.PLDAccountant()
    old._compose(dpa.GaussianDpEvent(1.0), 2)  # dp_accounting's former abstract method
    assert old.get_epsilon(1e-5) == MINE.PLDAccountant().compose(dpa.GaussianDpEvent(1.0), 2).get_epsilon(1e-5)


@needs_dpa
@needs_lib
def test_calibrate_dp_mechanism_drives_it():
    import dp_accounting as dpa
    import dpacct
    from dpacct import events as ev

    def make_event(sigma):
        return dpa.SelfComposedDpEvent(dpa.PoissonSampledDpEvent(0.1, dpa.GaussianDpEvent(sigma)), 512)

    sigma = dpa.calibrate_dp_mechanism(MINE.PLDAccountant, make_event, 1.0, 1e-6)
    assert MINE.PLDAccountant().compose(make_event(sigma)).get_epsilon(1e-6) <= 1.0
    ours = dpacct.calibrate(ev.repeat(ev.poisson(ev.gaussian("?"), 0.1), 512), 1.0, 1e-6, "pld")
    assert abs(sigma - ours.value) < 1e-3 * ours.value
    assert round(sigma, 2) == 9.66  # jax_privacy's docstring, with dp_accounting's PLD


# every class of dp_accounting/dp_event.py: (args, accountant's relation, accepted?)
def _table(de):
    g = de.GaussianDpEvent(1.0)
    return {
        "NoOpDpEvent": [((), "add_remove", True)],
        "NonPrivateDpEvent": [((), "add_remove", True)],
        "UnsupportedDpEvent": [((), "add_remove", False)],
        "RandomizedResponseDpEvent": [((0.5, 4), "replace", True)],
        "EpsilonDeltaDpEvent": [((1.0, 1e-7), "add_remove", True)],
        "GaussianDpEvent": [((1.0,), "add_remove", True)],
        "LaplaceDpEvent": [((2.0,), "add_remove", True)],
        "DiscreteLaplaceDpEvent": [((0.5, 1), "add_remove", True)],
        "DiscreteGaussianDpEvent": [((3.0,), "add_remove", True), ((3.0, 1.0, 4), "add_remove", False)],
        "SelfComposedDpEvent": [((g, 3), "add_remove", True)],
        "ComposedDpEvent": [(([g, de.LaplaceDpEvent(3.0)],), "add_remove", True),
                            (([g, de.UnsupportedDpEvent()],), "add_remove", False)],
        "PoissonSampledDpEvent": [((0.1, g), "add_remove", True)],
        "SampledWithReplacementDpEvent": [((1000, 10, g), "add_remove", True),
                                          ((1000, 10, g), "replace", False)],
        "SampledWithoutReplacementDpEvent": [((1000, 10, g), "replace", True),
                                             ((1000, 10, g), "add_remove", False)],
        "SingleEpochTreeAggregationDpEvent": [((2.0, [8, 4]), "add_remove", True)],
        "RepeatAndSelectDpEvent": [((g, 3.0, math.inf), "add_remove", True)],
        "MixtureOfGaussiansDpEvent": [((2.0, [0.0, 1.0], [0.5, 0.5]), "add_remove", True)],
        "ZCDpEvent": [((0.1,), "add_remove", True), ((0.1, 0.5), "add_remove", True)],  # xi: issue 26
        "ExponentialMechanismDpEvent": [((1.0,), "add_remove", True)],
        "PermuteAndFlipDpEvent": [((1.0,), "add_remove", True)],
        "TruncatedSubsampledGaussianDpEvent": [((1000, 0.01, 20, 1.0), "add_remove", True)],
    }


@needs_dpa
@needs_lib
def test_every_dp_event_class_converts_or_is_refused_with_a_reason():
    from dp_accounting import dp_event as de
    classes = {n for n, c in vars(de).items()
               if inspect.isclass(c) and issubclass(c, de.DpEvent) and c is not de.DpEvent}
    table = _table(de)
    assert classes == set(table), "dp_event.py changed: %s" % sorted(classes ^ set(table))
    rel = {"add_remove": MINE.NeighboringRelation.ADD_OR_REMOVE_ONE,
           "replace": MINE.NeighboringRelation.REPLACE_ONE}
    for name, cases in sorted(table.items()):
        for args, nb, accepted in cases:
            event = getattr(de, name)(*args)
            acc = MINE.DpacctAccountant(rel[nb])
            assert acc.supports(event) == accepted, (name, args, nb)
            if accepted:
                eps = acc.compose(event).get_epsilon(1e-6)
                assert eps >= 0 and (eps < math.inf) == (name != "NonPrivateDpEvent"), (name, eps)
            else:
                with pytest.raises(MINE.UnsupportedEventError) as exc:
                    acc.compose(event)
                # the reason: "is not supported: <why>" or the library's own explanation
                assert re.search(r"not supported: \w|analysed under|dimension|xi", str(exc.value)), \
                    str(exc.value)


def test_docs_table_names_every_class():
    """docs/frameworks.md's conversion table has a row per class from_dp_event knows."""
    from dpacct import _dp_events
    doc = os.path.join(CHECKOUT, "docs", "frameworks.md")
    if not os.path.exists(doc):
        pytest.skip("docs/frameworks.md not present (installed package)")
    text = open(doc, encoding="utf-8").read()
    for name in _dp_events.SUPPORTED_CLASSES + _dp_events.UNSUPPORTED_CLASSES:
        assert "| `%s`" % name in text, name


# ----------------------------------------------------------- jax_privacy ---

def _jax_privacy_accounting():
    """jax_privacy/accounting.py loaded without jax: its only package import,
    _validate (which imports jax), is replaced by a stand-in of the two checks
    it uses."""
    path = os.path.join(JAXP_PATH, "jax_privacy", "accounting.py")
    if MINE is None or not os.path.exists(path):
        return None
    pkg = types.ModuleType("_jaxp_standin")
    pkg.__path__ = []
    val = types.ModuleType("_jaxp_standin._validate")

    def non_negative(**kw):
        for k, v in kw.items():
            if v < 0:
                raise ValueError("%s must be non-negative" % k)

    def in_range(lo, hi, **kw):
        for k, v in kw.items():
            if not lo <= v <= hi:
                raise ValueError("%s must be in [%s, %s]" % (k, lo, hi))

    val.non_negative, val.in_range = non_negative, in_range
    sys.modules.setdefault("_jaxp_standin", pkg)
    sys.modules.setdefault("_jaxp_standin._validate", val)
    pkg._validate = val
    spec = importlib.util.spec_from_file_location("_jaxp_standin.accounting", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@needs_dpa
@needs_lib
def test_jax_privacy_accounting_with_dpacct():
    acc_mod = _jax_privacy_accounting()
    if acc_mod is None:
        pytest.skip("jax_privacy's source not present (bench/fetch-peers.sh)")
    import dp_accounting as dpa
    # its docstring's three examples, with dpacct's accountant in place of dp_accounting's
    event = acc_mod.dpsgd_event(noise_multiplier=3, iterations=512, sampling_prob=0.1)
    eps = MINE.PLDAccountant().compose(event).get_epsilon(target_delta=1e-6)
    assert round(eps, 2) == 3.77
    sigma = dpa.calibrate_dp_mechanism(
        MINE.PLDAccountant, lambda s: acc_mod.dpsgd_event(s, 512, sampling_prob=0.1),
        target_epsilon=1.0, target_delta=1e-6)
    assert round(sigma, 2) == 9.66
    steps = dpa.calibrate_dp_mechanism(
        MINE.PLDAccountant, lambda t: acc_mod.dpsgd_event(3.0, t, sampling_prob=0.1),
        target_epsilon=2.0, target_delta=1e-6, discrete=True,
        bracket_interval=dpa.LowerEndpointAndGuess(1, 128))
    assert steps in (154, 155)  # certified: never more steps than the estimate's 155
    # execution_plan's AccountantFn: Callable[[NeighboringRelation], PrivacyAccountant]
    fixed = acc_mod.fixed_dpsgd_event(noise_multiplier=2.0, iterations=100, dataset_size=10000,
                                      batch_size=100, replace=False)
    acc = MINE.PLDAccountant(dpa.NeighboringRelation.REPLACE_ONE)
    assert 0 < acc.compose(fixed).get_epsilon(1e-6) < math.inf
    trunc = acc_mod.truncated_dpsgd_event(noise_multiplier=2.0, iterations=100, num_examples=10000,
                                          sampling_prob=0.01, truncated_batch_size=150)
    assert 0 < MINE.PLDAccountant().compose(trunc).get_epsilon(1e-6) < math.inf


# ------------------------------------------------------------ the docs ---

def _pycon_blocks(path):
    """(line, needs dp_accounting?, text) of each ```pycon block."""
    lines = open(path, encoding="utf-8").read().split("\n")
    out, i = [], 0
    while i < len(lines):
        if lines[i].strip() == "```pycon":
            needs = i > 0 and "doctest: needs dp_accounting" in lines[i - 1]
            j = lines.index("```", i + 1)
            out.append((i + 1, needs, "\n".join(lines[i + 1:j]) + "\n"))
            i = j
        i += 1
    return out


@needs_lib
def test_frameworks_md_sessions():
    """docs/frameworks.md's Python sessions, replayed with doctest (the output shown is
    real); the dp_accounting one where dp_accounting is importable."""
    import doctest
    doc = os.path.join(CHECKOUT, "docs", "frameworks.md")
    if not os.path.exists(doc):
        pytest.skip("docs/frameworks.md not present (installed package)")
    blocks = _pycon_blocks(doc)
    assert len(blocks) >= 2
    ran = 0
    for line, needs, text in blocks:
        if needs and MINE is None:
            continue
        test = doctest.DocTestParser().get_doctest(text, {}, "frameworks.md:%d" % line, doc, line)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        runner.run(test)
        assert runner.failures == 0, "docs/frameworks.md:%d" % line
        ran += 1
    assert ran >= 1


@needs_dpa
@needs_lib
def test_per_step_compose_pickle_and_copy():
    import copy
    import pickle
    import dp_accounting as dpa
    step = dpa.PoissonSampledDpEvent(0.01, dpa.GaussianDpEvent(1.0))
    a = MINE.PLDAccountant()
    for _ in range(300):  # per-step accounting: merged into repeat(step, 300), checked once
        a.compose(step)
    b = MINE.PLDAccountant().compose(step, 300)
    assert a.event == b.event and a.ledger == b.ledger == dpa.SelfComposedDpEvent(step, 300)
    assert a.get_epsilon(1e-5) == b.get_epsilon(1e-5)
    assert MINE.RdpAccountant is MINE.RDPAccountant
    for c in (pickle.loads(pickle.dumps(a)), copy.deepcopy(a)):
        assert isinstance(c, dpa.PrivacyAccountant) and c.ledger == a.ledger
        assert c.get_epsilon(1e-5) == a.get_epsilon(1e-5)
        c.compose(step)
        assert c.ledger == dpa.SelfComposedDpEvent(step, 301) and a.ledger.count == 300
