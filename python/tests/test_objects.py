# SPDX-License-Identifier: GPL-3.0-or-later
"""Python objects behave (issue 22, item 4): pickle and deepcopy round trips,
docstrings and type hints on every public name, py.typed, numpy in and out of
vector queries, and hostile input refused with clear exceptions before the
library (or ctypes) could misread it."""
import copy
import inspect
import math
import os
import pickle
import time

import pytest

import dpacct
from dpacct import events as ev
from dpacct import tradeoff as tf
from conftest import needs_lib, PYDIR

try:
    import numpy as np
except ImportError:  # numpy is optional
    np = None
needs_numpy = pytest.mark.skipif(np is None, reason="numpy not installed")

DPSGD = ev.poisson(ev.gaussian(1.1), 256 / 60000) * 14063


def roundtrips(x):
    """pickle (every protocol), copy.copy and copy.deepcopy of x."""
    out = [pickle.loads(pickle.dumps(x, protocol=p)) for p in range(2, pickle.HIGHEST_PROTOCOL + 1)]
    return out + [copy.copy(x), copy.deepcopy(x)]


# ------------------------------------------------------------- documentation

def _public_modules():
    return [dpacct, dpacct.events, dpacct.tradeoff, dpacct.filter, dpacct.ledger, dpacct.accountant,
            dpacct.dpsgd, dpacct.compat, dpacct.client]


def _public_names():
    """(qualified name, object) of every public name: what the modules export
    in __all__, and the public methods and properties of the classes."""
    seen = set()
    for mod in _public_modules():
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            if id(obj) in seen or not (inspect.isclass(obj) or callable(obj) or inspect.ismodule(obj)):
                continue
            seen.add(id(obj))
            yield "%s.%s" % (mod.__name__, name), obj
            if inspect.isclass(obj):
                for k, v in vars(obj).items():
                    if k.startswith("_") or not (callable(v) or isinstance(v, (property, classmethod,
                                                                                 staticmethod))):
                        continue
                    yield "%s.%s.%s" % (mod.__name__, name, k), v


def test_every_public_name_has_a_docstring():
    missing = []
    for qual, obj in _public_names():
        f = obj.__func__ if isinstance(obj, (classmethod, staticmethod)) else obj
        doc = getattr(f, "__doc__", None) if not isinstance(f, property) else f.fget.__doc__
        if not (doc and doc.strip()):
            missing.append(qual)
    assert not missing, "no docstring: %s" % ", ".join(missing)


def test_public_functions_have_type_hints():
    missing = []
    for qual, obj in _public_names():
        f = obj.__func__ if isinstance(obj, (classmethod, staticmethod)) else obj
        if isinstance(f, property):
            f = f.fget
        if inspect.isclass(f) or inspect.ismodule(f) or not inspect.isfunction(f):
            continue
        ann = f.__annotations__
        params = [p for p in inspect.signature(f).parameters.values()
                  if p.name not in ("self", "cls") and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        if "return" not in ann or any(p.name not in ann for p in params if not p.name.startswith("_")):
            missing.append(qual)
    assert not missing, "incomplete type hints: %s" % ", ".join(missing)


def test_py_typed_is_shipped():
    assert os.path.exists(os.path.join(PYDIR, "dpacct", "py.typed"))
    with open(os.path.join(PYDIR, "pyproject.toml")) as f:
        assert '"py.typed"' in f.read()
    with open(os.path.join(PYDIR, "build_backend", "dpacct_wheel.py")) as f:
        assert 'name == "py.typed"' in f.read()


# ------------------------------------------------------------------ pickling

def test_events_pickle():
    for e in (DPSGD, ev.gaussian("?") * 3, ev.dpsgd(60000, 256, 1.1, epochs=60, sampling="without_replacement"),
              ev.compose(ev.laplace(1), ev.privacy_loss([0.1, -0.1], [0.5, 0.5]))):
        for c in roundtrips(e):
            assert c == e and c.neighboring == e.neighboring and c.to_json() == e.to_json()


@needs_lib
def test_results_pickle():
    acc = dpacct.Accountant(ev.gaussian(1) * 4)
    objs = [acc.epsilon(1e-5), acc.delta(1.0), acc.profile([0.5, 1.0]), acc.gdp_mu(), acc.renyi(2.0),
            acc.renyi(complex(1.5, 1)), acc.epsilon_curve([1e-5, 1e-6]), acc.renyi_curve([2, 4]),
            dpacct.calibrate(ev.gaussian("?") * 4, 1.0, 1e-5)]
    for r in objs:
        for c in roundtrips(r):
            assert c == r and repr(c) == repr(r)


@needs_lib
def test_accountant_pickles_as_spec_and_options():
    acc = dpacct.Accountant(DPSGD, "pld", accuracy=1e-3, max_grid=1 << 20)
    copies = roundtrips(acc)
    first = acc.epsilon(1e-5)
    for c in copies:
        assert c is not acc and c.spec == acc.spec and c.options == acc.options and c.method == "pld"
        assert c.epsilon(1e-5) == first  # same bracket, to the bit
    acc.close()


@needs_lib
def test_compat_accountant_pickles():
    pa = dpacct.PrivacyAccountant()
    pa.compose(ev.gaussian(1), 4)
    eps = pa.get_epsilon(1e-5)
    for c in roundtrips(pa):
        assert c.get_epsilon(1e-5) == eps


@needs_lib
def test_tradeoff_and_filter_pickle():
    f = tf.gaussian(1).subsample(0.1, max_vertices=1000).symm()
    for c in roundtrips(f):
        assert c.vertices()[0].__len__() == len(f)
        assert list(c.vertices()[1]) == list(f.vertices()[1])
    flt = dpacct.Filter("gdp-residue", mu=1)
    flt.request(ev.gaussian(2))
    for c in roundtrips(flt):
        assert c.state == flt.state and c.remaining == flt.remaining
        assert c.request(ev.gaussian(3)).accepted
    assert flt.remaining["mu"] == pytest.approx(math.sqrt(1 - 0.25))  # the copies did not charge it


@needs_lib
def test_filter_approximate_gdp():
    # the (mu, delta)-GDP budget G_1 (+) R_{0,1e-6} (docs/filters.md "Approximate GDP budgets"):
    # a (0, 5e-7) query spends delta by the product rule, mu untouched; the general residue
    # filter's form is the same filter; state and copies round-trip
    flt = dpacct.Filter("gdp-residue", mu=1, delta=1e-6)
    res = dpacct.Filter({"filter": "residue", "budget": {"tradeoff": {"mu": 1, "delta": 1e-6}}})
    assert res.config_json == flt.config_json and res.name == "gdp-residue"
    for f in (flt, res):
        d = f.request({"approx": {"epsilon": 0, "delta": 5e-7}})
        assert d.accepted and d.remaining["mu"] == 1
        assert 5.0000025e-7 * (1 - 1e-9) <= d.remaining["delta"] <= 5.00000250000125e-7
    assert flt.state == res.state and "delta_residue" in flt.state
    assert not flt.request({"approx": {"epsilon": 0.1, "delta": 6e-7}}).accepted
    for c in roundtrips(flt):
        assert c.state == flt.state and c.remaining == flt.remaining
    with pytest.raises(dpacct.InvalidInputError, match="/delta"):
        dpacct.Filter("gdp-residue", mu=1, delta=1)


@needs_lib
def test_filter_residue_curve_and_additive():
    # the general residue filter with an (eps, delta) budget and RF Alg 3 through Python
    # (docs/filters.md): decisions, state round trips, the guarantee reported
    res = dpacct.Filter({"filter": "residue", "budget": {"tradeoff": {"eps_delta": [[1, 1e-6], [2, 1e-9]]}}})
    assert res.name == "residue" and res.remaining["tradeoff"] == "the configured budget"
    d = res.request({"pure": {"epsilon": 0.3}})
    assert d.accepted and d.remaining["mu"] == pytest.approx(0.17484856, abs=1e-7)
    assert not res.request({"pure": {"epsilon": 0.3}}).accepted  # the GDP residue is smaller
    for c in roundtrips(res):
        assert c.state == res.state
    add = dpacct.Filter("additive-profile", epsilon=1, delta=1e-6, max_queries=100)
    d = add.request({"pure": {"epsilon": 0.3}})
    assert d.accepted and d.remaining["levels"][5] == 47 and d.remaining["queries_left"] == 99
    assert d.remaining["guarantee"]["epsilon"] == pytest.approx(4400)
    with pytest.raises(dpacct.InvalidInputError, match="/max_queries"):
        dpacct.Filter("additive-profile", epsilon=1, delta=1e-6)


# --------------------------------------------------------------------- numpy

@needs_lib
@needs_numpy
def test_numpy_in_and_out():
    acc = dpacct.Accountant(ev.gaussian(1) * 4)
    eps = np.array([[0.0, 0.5], [1.0, 2.0]])
    p = acc.profile(eps)
    assert isinstance(p.upper, np.ndarray) and p.upper.shape == (2, 2)
    c = acc.epsilon_curve(np.array([1e-3, 1e-5, 1e-7]))
    assert isinstance(c.upper, np.ndarray) and c.upper.shape == (3,) and np.all(np.diff(c.upper) > 0)
    assert c.upper[1] == acc.epsilon(1e-5).upper
    r = acc.renyi_curve(np.array([2.0, 8.0]))
    assert np.allclose(r.upper, [4 * 2 / 2, 4 * 8 / 2])  # 4 x G(sigma=1): D_A = 4 A / 2
    g = tf.gaussian(1)
    xs = np.linspace(0, 1, 5)
    assert isinstance(g(xs), np.ndarray) and g(xs).shape == (5,)
    assert isinstance(g.delta(np.array([0.0, 1.0])), np.ndarray)
    assert np.float64(0.5) and isinstance(g(np.float64(0.5)), float)
    a2 = dpacct.Accountant(ev.gaussian(np.float64(1.0)) * np.int64(4), max_grid=np.int64(1 << 20))
    assert a2.options["max_grid"] == 1 << 20


def test_lists_without_numpy(monkeypatch):
    import dpacct.accountant as am
    import dpacct.tradeoff as tm
    monkeypatch.setattr(am, "_np", None)
    monkeypatch.setattr(tm, "_np", None)
    try:
        acc = dpacct.Accountant(ev.gaussian(1) * 4)
    except dpacct.LibraryNotFoundError:
        pytest.skip("libdpacct not found")
    p = acc.profile([0.0, 1.0])
    assert isinstance(p.upper, list) and len(p.upper) == 2
    assert isinstance(acc.epsilon_curve([1e-5]).upper, list)
    assert isinstance(tf.gaussian(1)([0.1, 0.2]), list)


# ------------------------------------------------------------ hostile input

@needs_lib
@pytest.mark.parametrize("kw,value", [("max_grid", 2 ** 64 + 2048), ("max_grid", 2 ** 32 + 2048),
                                      ("max_grid", 5), ("max_grid", -1), ("threads", 2 ** 32 + 1),
                                      ("threads", -1), ("threads", 65)])
def test_integers_out_of_range(kw, value):
    with pytest.raises(dpacct.InvalidInputError) as e:
        dpacct.Accountant(ev.gaussian(1), **{kw: value})
    assert str(e.value).startswith("%s=%d: must be an integer in [" % (kw, value))


@needs_lib
def test_integers_out_of_range_elsewhere():
    with pytest.raises(dpacct.InvalidInputError, match=r"^k=18446744073709551617: "):
        tf.gaussian(1).group(2 ** 64 + 1)
    with pytest.raises(dpacct.InvalidInputError, match=r"^n="):
        tf.gaussian(1).power(2 ** 64 + 4)
    with pytest.raises(dpacct.InvalidInputError, match=r"^max_vertices="):
        tf.gaussian(1).discretize(max_vertices=2 ** 64 + 1000)
    with pytest.raises(dpacct.InvalidSpecError):  # the library: "too big integer", never wrapped
        dpacct.Accountant({"repeat": {"count": 2 ** 64 + 3, "event": {"gaussian": {"sigma": 1}}}})
    with pytest.raises(TypeError):
        dpacct.Accountant(ev.gaussian(1), threads=1.5)
    with pytest.raises(dpacct.InvalidInputError, match="too large"):
        dpacct.Accountant(ev.gaussian(1)).epsilon(10 ** 400)
    with pytest.raises(dpacct.InvalidInputError, match="too large"):
        tf.gaussian(10 ** 400)


@needs_lib
def test_nul_refused():
    with pytest.raises(dpacct.InvalidSpecError, match="NUL"):
        dpacct.Accountant('{"gaussian": {"sigma": 1}}\0{"gaussian": {"sigma": 100}}')
    with pytest.raises(dpacct.InvalidSpecError, match="NUL"):
        dpacct.calibrate('{"gaussian": {"sigma": "?"}}\0', 1.0, 1e-5)
    with pytest.raises(dpacct.InvalidInputError, match="NUL"):
        dpacct.Filter('{"filter": "pure", "epsilon": 1}\0')
    with pytest.raises(dpacct.InvalidInputError, match="NUL"):
        dpacct.Ledger("/tmp/x\0y")
    with pytest.raises(dpacct.InvalidSpecError):
        dpacct.Accountant({"gaus\0sian": {"sigma": 1}})


@needs_lib
@pytest.mark.parametrize("form", ["dict", "event", "compose", "text", "text+neighboring", "from_json"])
def test_deep_nesting_refused_fast(form):
    t0 = time.perf_counter()
    with pytest.raises(dpacct.InvalidSpecError, match="nested deeper|depth"):
        if form == "dict":
            d = {"gaussian": {"sigma": 1}}
            for _ in range(20000):
                d = {"repeat": {"count": 2, "event": d}}
            dpacct.Accountant(d)
        elif form == "compose":
            d = {"gaussian": {"sigma": 1}}
            for _ in range(20000):
                d = {"compose": [d]}
            dpacct.Accountant(d)
        elif form == "event":
            e = ev.gaussian(1)
            for _ in range(20000):
                e = ev.poisson(e, 0.5)
        else:
            n = 20000
            text = '{"repeat":{"count":2,"event":' * n + '{"gaussian":{"sigma":1}}' + "}}" * n
            if form == "text":
                dpacct.Accountant(text)
            elif form == "from_json":
                ev.from_json(text)
            else:  # neighboring= makes the binding parse the text itself
                dpacct.Accountant(text, neighboring="replace")
    assert time.perf_counter() - t0 < 2.0


@needs_lib
def test_depth_limit_is_the_librarys():
    e = ev.gaussian(1)
    for _ in range(255):
        e = ev.poisson(e, 0.9)
    assert e.depth == 256
    assert dpacct.canonical_spec(e)  # the library takes 256 levels
    with pytest.raises(dpacct.InvalidSpecError, match="256"):
        ev.poisson(e, 0.9)
    d = e.to_dict()
    assert dpacct.canonical_spec(d)
    with pytest.raises(dpacct.InvalidSpecError, match="256"):
        dpacct.canonical_spec({"repeat": {"count": 1, "event": d}})


@needs_lib
def test_non_finite_refused():
    acc = dpacct.Accountant(ev.gaussian(1))
    for bad in (math.nan, math.inf):
        with pytest.raises(dpacct.InvalidInputError):
            acc.epsilon(bad)
        with pytest.raises(dpacct.InvalidInputError):
            acc.delta(bad)
        with pytest.raises(dpacct.InvalidInputError):
            acc.profile([0.0, bad])
        with pytest.raises(dpacct.InvalidSpecError):
            ev.gaussian(bad)
        with pytest.raises(dpacct.InvalidSpecError):
            dpacct.Accountant({"gaussian": {"sigma": bad}})
        with pytest.raises(dpacct.InvalidInputError):
            tf.gaussian(bad)
        with pytest.raises(dpacct.InvalidInputError):
            tf.gaussian(1).delta(bad)
        with pytest.raises(dpacct.InvalidInputError):
            dpacct.Accountant(ev.gaussian(1), accuracy=bad)
        with pytest.raises(dpacct.InvalidInputError):
            dpacct.calibrate(ev.gaussian("?"), bad, 1e-5)
    with pytest.raises(dpacct.InvalidInputError):
        tf.gaussian(1)(math.nan)


@needs_lib
def test_messages_speak_python():
    with pytest.raises(dpacct.OutOfMemoryError) as e:
        dpacct.Accountant(ev.gaussian(1) * 10 ** 9, "pld", max_grid=1024).epsilon(1e-5)
    assert "max_grid=" in str(e.value) and "--" not in str(e.value)
    with pytest.raises(dpacct.InvalidInputError) as e:
        dpacct.Accountant(ev.gaussian(1), grid_step=5.0)
    assert str(e.value).startswith("grid_step= must be")
    assert dpacct._errors.python_message("use --method exact or a larger --max-grid") == \
        'use method="exact" or a larger max_grid='
