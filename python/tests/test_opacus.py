# SPDX-License-Identifier: GPL-3.0-or-later
"""dpacct.opacus.DpacctAccountant against Opacus' IAccountant interface, without torch.

The interface is checked against Opacus' own source when it is present
($DPACCT_OPACUS or /tmp/dpacct-peers/opacus, the layout of bench/fetch-peers.sh):
the abstract methods of opacus/accountants/accountant.py are read with ast,
so torch is not needed.  The engine itself is exercised by
bench/opacus_epochs.py where torch is installed."""
import ast
import copy
import math
import os
import pickle
import subprocess
import sys
from types import SimpleNamespace

import pytest

import dpacct
from dpacct.opacus import DpacctAccountant, OpacusAccountant
from conftest import PYDIR, needs_cli, needs_lib, run_cli

Q = 256 / 60000
OPACUS = os.environ.get("DPACCT_OPACUS", "/tmp/dpacct-peers/opacus")
IFACE = os.path.join(OPACUS, "opacus", "accountants", "accountant.py")


def test_alias_and_mechanism():
    assert OpacusAccountant is DpacctAccountant
    assert DpacctAccountant.mechanism() == "dpacct" == DpacctAccountant().mechanism()


def test_history_merges_as_opacus():
    a = DpacctAccountant()
    assert len(a) == 0 and a.history == []
    for _ in range(3):
        a.step(noise_multiplier=1.1, sample_rate=0.01)
    a.step(noise_multiplier=1.0, sample_rate=0.01)
    a.step(noise_multiplier=1.1, sample_rate=0.01)
    a.step(noise_multiplier=1.1, sample_rate=0.01)
    assert a.history == [(1.1, 0.01, 3), (1.0, 0.01, 1), (1.1, 0.01, 2)]
    assert len(a) == 6
    with pytest.raises(ValueError):
        a.step(noise_multiplier=-1, sample_rate=0.01)
    with pytest.raises(ValueError):
        a.step(noise_multiplier=1, sample_rate=1.5)
    with pytest.raises(TypeError):
        a.step(1.0, 0.01)  # keyword-only, as Opacus
    assert len(a) == 6


def test_event_is_the_dpsgd_spec():
    a = DpacctAccountant()
    a.history = [(1.1, Q, 14063)]  # Opacus' get_noise_multiplier sets history directly
    assert a.event() == dpacct.dpsgd_event(1.1, sample_rate=Q, steps=14063)
    a.history = [(1.1, Q, 10), (0.0, Q, 1), (2.0, 0.0, 5)]
    d = a.event().to_dict()
    assert d["neighboring"] == "add_remove"
    assert [list(x)[0] for x in d["compose"]] == ["repeat", "repeat", "no_op"]


@needs_lib
@needs_cli
def test_14063_steps_equal_the_cli():
    a = DpacctAccountant()
    for _ in range(14063):
        a.step(noise_multiplier=1.1, sample_rate=Q)
    assert a.history == [(1.1, Q, 14063)] and len(a) == 14063
    out = run_cli("dpsgd", "--dataset-size", 60000, "--batch-size", 256, "--epochs", 60,
                  "--noise", 1.1, "--delta", 1e-5)
    assert out["steps"] == 14063
    assert a.get_epsilon(1e-5) == out["epsilon_upper"]
    assert a.get_epsilon_bracket(1e-5) == (out["epsilon_lower"], out["epsilon_upper"])
    r = a.epsilon_result(1e-5)
    assert r.certified and r.upper == out["epsilon_upper"]
    assert a.epsilon_result(1e-5) is r  # cached per (history, delta)


@needs_lib
@needs_cli
def test_per_epoch_pass_brackets_the_single_count_queries():
    """The README run epoch by epoch: the first get_epsilon evaluates the
    next 64 epochs in one pass; every later per-epoch answer comes from that
    pass, brackets the single-count accountant's and meets the accuracy
    target; final_epsilon is `dpacct dpsgd`'s value."""
    a = DpacctAccountant()
    done = 0
    for e in range(1, 61):
        target = dpacct.dpsgd_steps(epochs=e, dataset_size=60000, batch_size=256)
        while done < target:
            a.step(noise_multiplier=1.1, sample_rate=Q)
            done += 1
        r = a.epsilon_result(1e-5)
        assert r.certified and r.accuracy_met and r.upper - r.lower <= 1e-4 * max(1.0, r.upper)
        if e > 1:  # answered from the pass of the first epoch's query
            assert a._ahead[(1.1, Q, 1e-5)][target] is r
        if e in (1, 2, 17, 60):
            ref = dpacct.Accountant(a.event()).epsilon(1e-5)
            assert r.lower <= ref.upper and ref.lower <= r.upper
    out = run_cli("dpsgd", "--dataset-size", 60000, "--batch-size", 256, "--epochs", 60,
                  "--noise", 1.1, "--delta", 1e-5)
    lo, up = a.get_epsilon_bracket(1e-5)
    assert lo <= out["epsilon_upper"] and out["epsilon_lower"] <= up
    assert a.final_epsilon(1e-5) == out["epsilon_upper"]
    assert a.epsilon_result(1e-5, exact=True).lower == out["epsilon_lower"]


def test_future_counts():
    from dpacct.opacus import _future_counts
    assert _future_counts(235, Q, 3) == [469, 704, 938]        # ceil(j / q), as dpsgd_steps
    assert _future_counts(234, Q, 2) == [468, 703]             # floor(j / q)
    assert _future_counts(40, 0.025, 2) == [80, 120]           # 1 / q whole
    assert _future_counts(100, Q, 2) == [200, 300]             # no whole epoch: multiples


@needs_lib
def test_epsilon_counts():
    step = dpacct.events.poisson(dpacct.events.gaussian(1.1), Q)
    rs = dpacct.epsilon_counts(step, [235, 1, 469], 1e-5)
    assert [r.query for r in rs] == ["epsilon"] * 3
    for k, r in zip([235, 1, 469], rs):
        ref = dpacct.Accountant(dpacct.events.repeat(step, k)).epsilon(1e-5)
        assert r.lower <= ref.upper and ref.lower <= r.upper and r.certified
    assert rs[2].upper == dpacct.Accountant(dpacct.events.repeat(step, 469)).epsilon(1e-5).upper
    for counts, delta in (([], 1e-5), ([0], 1e-5), ([2.5], 1e-5), ([2e15], 1e-5), ([3], 1.5), ([3], 0)):
        with pytest.raises(dpacct.InvalidInputError):
            dpacct.epsilon_counts(step, counts, delta)


@needs_lib
def test_queries_follow_the_history():
    a = DpacctAccountant()
    assert a.get_epsilon(1e-5) == 0.0
    a.step(noise_multiplier=1.0, sample_rate=0.01)
    e1 = a.get_epsilon(1e-5)
    a.step(noise_multiplier=1.0, sample_rate=0.01)
    e2 = a.get_epsilon(1e-5, alphas=[2, 3], eps_error=0.01)  # Opacus' kwargs, ignored
    lo, up = a.get_epsilon_bracket(1e-5)
    assert 0 < e1 < e2 == up and lo <= up
    a.step(noise_multiplier=0.0, sample_rate=0.01)
    assert a.get_epsilon(1e-5) == math.inf


def test_optimizer_hook_as_opacus():
    a = DpacctAccountant()
    hook = a.get_optimizer_hook_fn(sample_rate=0.01)
    optim = SimpleNamespace(noise_multiplier=1.3, accumulated_iterations=2)
    hook(optim)
    hook(optim)
    assert a.history == [(1.3, 0.02, 2)]


def test_state_dict_round_trip():
    a = DpacctAccountant()
    a.history = [(1.1, 0.01, 7), (1.2, 0.02, 3)]
    sd = a.state_dict()
    assert list(sd) == ["history", "mechanism"] and sd["mechanism"] == "dpacct"
    sd["history"].append((9.0, 0.5, 1))  # a copy, as Opacus'
    assert len(a.history) == 2
    b = DpacctAccountant()
    b.load_state_dict({"history": [[1.1, 0.01, 7], [1.2, 0.02, 3]], "mechanism": "dpacct"})
    assert b.history == a.history and len(b) == 10
    for bad in ({}, None, {"history": []}, {"mechanism": "dpacct"},
                {"history": [], "mechanism": "rdp"}, {"history": [(1, 2)], "mechanism": "dpacct"},
                {"history": [(1, 0.1, -1)], "mechanism": "dpacct"}):
        with pytest.raises(ValueError):
            b.load_state_dict(bad)
    assert b.history == a.history
    dest = {}
    assert a.state_dict(dest) is dest and dest["history"] == a.history


@needs_lib
def test_pickle_and_copy():
    a = DpacctAccountant(accuracy=1e-3)
    a.history = [(1.1, 0.01, 100)]
    e = a.get_epsilon(1e-5)
    for b in (pickle.loads(pickle.dumps(a)), copy.deepcopy(a)):
        assert b.history == a.history and b.get_epsilon(1e-5) == e


def test_import_dpacct_imports_no_framework():
    code = ("import sys, dpacct; assert 'torch' not in sys.modules and 'opacus' not in sys.modules "
            "and 'dp_accounting' not in sys.modules; dpacct.opacus; print(dpacct.opacus.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=PYDIR), check=True)
    assert out.stdout.strip() == "dpacct.opacus"


def _abstract_methods(path):
    """Names of the @abc.abstractmethod methods of class IAccountant in path,
    and the other public methods it defines."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "IAccountant")
    abstract, other = {}, {}
    for f in cls.body:
        if isinstance(f, ast.FunctionDef):
            is_abs = any("abstractmethod" in ast.unparse(d) for d in f.decorator_list)
            (abstract if is_abs else other)[f.name] = f
    return abstract, other


@pytest.mark.skipif(not os.path.exists(IFACE), reason="Opacus' source not present (bench/fetch-peers.sh)")
def test_against_opacus_iaccountant_source():
    abstract, other = _abstract_methods(IFACE)
    assert {"__init__", "step", "get_epsilon", "__len__", "mechanism"} <= set(abstract)
    for name, f in list(abstract.items()) + list(other.items()):
        mine = getattr(DpacctAccountant, name)
        assert callable(mine), name
        # keyword-only arguments of Opacus' signature are keyword-only here too
        for kw in f.args.kwonlyargs:
            import inspect
            p = inspect.signature(mine).parameters
            assert kw.arg in p and p[kw.arg].kind is inspect.Parameter.KEYWORD_ONLY, (name, kw.arg)
    assert "history" in ast.unparse(abstract["__init__"])
    assert isinstance(DpacctAccountant.__dict__["mechanism"], classmethod)
