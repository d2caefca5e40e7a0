# SPDX-License-Identifier: GPL-3.0-or-later
"""The whole API (issue 22, item 5): tradeoff curves and the f-DP operations
against closed forms (Dong, Roth & Su, "Gaussian differential privacy":
G_mu eq 6, Cor 2.13, Cor 3.3, Thm 2.14), calibration of any parameter, and
dpacct.Filter / dpacct.Ledger against the command line's `dpacct ledger`
(the same queries accepted, the same outcomes: exit 0 accepted, 3 rejected,
2 bad input, 1 failure)."""
import json
import math
import os
import pickle
import subprocess
import uuid
from statistics import NormalDist

import pytest

import dpacct
from dpacct import events as ev
from dpacct import tradeoff as tf
from conftest import needs_lib, needs_cli, CLI

N01 = NormalDist()


def G(mu, x):
    """G_mu(x) = Phi(Phi^{-1}(1 - x) - mu) (GDP eq 6)."""
    if x <= 0:
        return 1.0
    if x >= 1:
        return 0.0
    return N01.cdf(N01.inv_cdf(1 - x) - mu)


def gdp_delta(mu, eps):
    """GDP Cor 2.13."""
    return N01.cdf(-eps / mu + mu / 2) - math.exp(eps) * N01.cdf(-eps / mu - mu / 2)


XS = [0.0, 1e-6, 1e-3, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.999, 1.0]


# ------------------------------------------------------------------ tradeoff

@needs_lib
@pytest.mark.parametrize("mu", [0.3, 1.0, 2.5])
def test_gaussian_curve_is_g_mu(mu):
    f = tf.gaussian(mu)
    assert f.kind == "gaussian" and f.params["mu"] == mu
    for x in XS:
        y = f(x)
        lo, hi = f.eval_bounds(x)
        # statistics.NormalDist is the less accurate of the two (~1e-13 here)
        assert abs(y - G(mu, x)) <= 1e-11 * G(mu, x) + 1e-15
        assert lo <= y <= hi
    for e in (0.0, 0.5, 1.0, 3.0):
        d = f.delta(e)
        assert d >= gdp_delta(mu, e) - 1e-15 and d == pytest.approx(gdp_delta(mu, e), rel=1e-9, abs=1e-15)
        lo, hi = tf.gdp_delta(mu, e)
        assert lo <= d <= hi * (1 + 1e-12)
    assert f.is_symmetric() and f.symmetry_defect() == 0
    lo, hi = f.fixed_point()
    assert lo <= hi and G(mu, lo) >= lo - 1e-12 and G(mu, hi) <= hi + 1e-12


@needs_lib
def test_composing_gaussians_is_g_sqrt_sum():
    mus = [0.5, 1.2, 0.7]
    f = tf.compose(*[tf.gaussian(m) for m in mus])
    want = math.sqrt(sum(m * m for m in mus))
    assert f.kind == "gaussian" and f.params["mu"] == pytest.approx(want, rel=1e-14)
    assert f.params["mu"] >= want  # a lower curve: mu rounded up
    g = tf.gaussian(0.5) @ tf.gaussian(1.2)
    assert g.params["mu"] == pytest.approx(1.3, rel=1e-14)
    assert tf.gaussian(0.6).power(9).params["mu"] == pytest.approx(1.8, rel=1e-14)
    assert tf.gaussian(0.6).group(3).params["mu"] == pytest.approx(1.8, rel=1e-14)  # GDP Thm 2.14
    # piecewise factors compose as discrete pairs: a lower bound, close to G_sqrt2
    d = tf.gaussian(1).discretize(max_vertices=200, rel_tol=1e-3)
    c = d.compose(d)
    assert c.kind == "piecewise"
    c.check()
    for x in XS:
        assert c(x) <= G(math.sqrt(2), x) + 1e-15
        assert c(x) >= G(math.sqrt(2), x) - 2e-2


@needs_lib
def test_tradeoff_operations():
    f = tf.approx(1.0, 1e-3)
    assert f.kind == "approx" and f.params == {"eps": 1.0, "delta": 1e-3}
    for x in XS:  # GDP eq 5
        want = max(0.0, 1 - 1e-3 - math.e * x, math.exp(-1) * (1 - 1e-3 - x))
        assert f(x) <= want + 1e-15 and f(x) == pytest.approx(want, abs=1e-14)
    # subsampling f_{eps,0} with p: intercept 1 - p (e^eps - 1)/(e^eps + 1) (GDP eq 14/15, fdp.md)
    p = 0.2
    s = tf.approx(1.0).subsample(p)
    assert s(0.0) == pytest.approx(1.0)
    sym = s.symm()
    sym.check()
    assert sym.is_symmetric(1e-12)
    inv = s.inverse()
    assert inv.inverse()(0.3) == pytest.approx(s(0.3), abs=1e-15)
    mx = s.max(inv)
    assert all(mx(x) >= max(s(x), inv(x)) - 1e-15 for x in XS)
    mn = s.min(inv)
    assert all(mn(x) <= min(s(x), inv(x)) + 1e-15 for x in XS)
    assert s.symmetrize()(0.1) == pytest.approx(mx(0.1), abs=1e-15)
    # points and envelopes
    pts = tf.from_points([0.0, 0.2, 1.0], [0.6, 0.1, 0.0])
    assert len(pts) == 3 and list(pts.vertices()[1]) == [0.6, 0.1, 0.0]
    with pytest.raises(dpacct.InvalidInputError):
        tf.from_points([0.0, 0.5, 1.0], [1.0, 0.9, 0.0])  # above 1 - x
    env = tf.lower_envelope([0.0, 0.5, 1.0], [1.0, 0.9, 0.0])
    env.check()
    rr = tf.randomized_response(math.e / (1 + math.e), 1 / (1 + math.e))  # gives f_{1,0}
    assert rr(0.2) == pytest.approx(tf.approx(1.0)(0.2), abs=1e-12)
    ed = tf.from_eps_delta([0.5, 1.0], [0.1, 0.0])
    assert ed(0.0) == pytest.approx(1.0) and ed(0.5) <= 0.5
    assert tf.identity()(0.3) == pytest.approx(0.7)
    assert tf.laplace(1.0).epsilon(1e-9) <= 1.0 + 1e-12  # Laplace(b = s): pure 1-DP
    assert tf.gaussian(1.0).gdp_mu() == pytest.approx(1.0, rel=1e-9)
    assert tf.gdp_mu_from_profile([1.0], [gdp_delta(1.0, 1.0)]) == pytest.approx(1.0, rel=1e-6)
    lo, hi = tf.gdp_epsilon(1.0, 1e-5)
    assert lo <= tf.gaussian(1.0).epsilon(1e-5) <= hi * (1 + 1e-9)
    with pytest.raises(dpacct.InvalidInputError):
        tf.gaussian(1).delta(1.0, direction="sideways")
    with pytest.raises(TypeError):
        tf.Tradeoff()


@needs_lib
def test_tradeoff_from_accountant_and_profile():
    acc = dpacct.Accountant(ev.gaussian(2.0) * 4)  # 4 x G(sigma=2) is G_1
    f = tf.from_accountant(acc, eps_max=8, n=200)
    for x in XS:
        assert f(x) <= G(1.0, x) + 1e-9  # a lower bound on the true curve (to the bracket)
        assert f(x) >= G(1.0, x) - 2e-2
    prof = acc.profile([i * 0.1 for i in range(60)])
    g = tf.from_profile(list(prof.epsilon), list(prof.upper))
    assert g(0.1) <= G(1.0, 0.1) + 1e-9
    h = pickle.loads(pickle.dumps(f))  # replayed on a fresh accountant: the same curve
    assert list(h.vertices()[1]) == list(f.vertices()[1])


@needs_cli
def test_tradeoff_from_accountant_matches_cli_curve(cli, tmp_path):
    spec = {"repeat": {"count": 4, "event": {"gaussian": {"sigma": 2.0}}}}
    out = subprocess.run([CLI, "curve", "--kind", "tradeoff", "--format", "json", json.dumps(spec)],
                         capture_output=True, text=True, env=dict(os.environ, DPACCT_WISDOM="off"))
    if out.returncode != 0:
        pytest.skip("dpacct curve --kind tradeoff: %s" % out.stderr[:200])
    pts = json.loads(out.stdout)["curves"][0]["points"]
    assert len(pts) > 10
    f = tf.from_accountant(dpacct.Accountant(spec), eps_max=8, n=400)
    for p in pts:
        x, y = p["alpha"], p["beta_lower"]
        # both are certified lower bounds on G_1, from profiles on different grids
        assert y <= G(1.0, x) + 1e-9 and f(x) <= G(1.0, x) + 1e-9
        assert f(x) == pytest.approx(y, abs=2e-2)


# --------------------------------------------------------------- calibration

@needs_lib
@pytest.mark.parametrize("template,param,role", [
    (ev.poisson(ev.gaussian("?"), 0.01) * 1000, "sigma", "noise"),
    (ev.poisson(ev.gaussian(1.0), "?") * 1000, "rate", "budget"),
    (ev.poisson(ev.gaussian(1.0), 0.01).repeat("?"), "count", "budget"),
    (ev.laplace("?") * 10, "scale", "noise"),
    (ev.compose(ev.gaussian(3.0), ev.approx("?", 1e-7)), "epsilon", "budget"),
    (ev.dpsgd(60000, 256, 1.1, epochs="?"), "epochs", "budget"),
])
def test_calibrate_any_parameter(template, param, role):
    c = dpacct.calibrate(template, 2.0, 1e-5, rel_tol=1e-3)
    assert c.parameter == param and c.role == role
    assert c.result.upper <= 2.0
    # the calibrated spec meets the target; the infeasible neighbour does not
    assert dpacct.Accountant(c.spec).epsilon(1e-5).upper <= 2.0 + 1e-9
    if c.infeasible is not None:
        assert (c.infeasible < c.value) if role == "noise" else (c.infeasible > c.value)


# ----------------------------------------------------------- filter, ledger

QUERIES = [ev.gaussian(2.0), ev.gaussian(3.0), ev.gaussian(1.0), ev.gaussian(4.0), ev.gaussian(10.0),
           ev.poisson(ev.gaussian(1.0), 0.1) * 10, ev.gaussian(2.0), ev.laplace(5.0), ev.gaussian(1.5)]
CONFIGS = [{"filter": "gdp-residue", "mu": 1.0}, {"filter": "gdp", "mu": 1.0},
           {"filter": "zcdp", "rho": 0.5}, {"filter": "basic", "epsilon": 3.0, "delta": 1e-5}]


def _cli_ledger(*args):
    return subprocess.run([CLI, "ledger"] + [str(a) for a in args], capture_output=True, text=True,
                          env=dict(os.environ, DPACCT_WISDOM="off"), timeout=300)


@needs_cli
@pytest.mark.parametrize("config", CONFIGS, ids=[c["filter"] for c in CONFIGS])
def test_filter_and_ledger_accept_what_the_cli_accepts(config, tmp_path):
    db_cli, db_py = str(tmp_path / "cli.db"), str(tmp_path / "py.db")
    r = _cli_ledger("init", db_cli, "--config", json.dumps(config), "--unit", "u")
    assert r.returncode == 0, r.stderr
    flt = dpacct.Filter(config)
    led = dpacct.Ledger.create(db_py, config, units=["u"])
    for q in QUERIES:
        r = _cli_ledger("request", db_cli, "--unit", "u", "--spec", q.to_json(), "--json")
        if r.returncode == 2:  # bad input: the same error from Python, nothing charged
            with pytest.raises((dpacct.InvalidInputError, dpacct.UnsupportedError)):
                flt.request(q)
            with pytest.raises((dpacct.InvalidInputError, dpacct.UnsupportedError)):
                led.request("u", q)
            continue
        assert r.returncode in (0, 3), r.stderr
        cli_out = json.loads(r.stdout)
        d = flt.request(q)
        ld = led.request("u", q)
        assert d.accepted == ld.accepted == (r.returncode == 0) == cli_out["accepted"]
        assert d.reason == ld.reason == cli_out["reason"]
        assert d.remaining == ld.remaining == cli_out["remaining"]
        assert ld.request_id == cli_out["request"]
    assert led.verify()["ok"]
    st = json.loads(_cli_ledger("status", db_cli, "--json").stdout)
    assert st["units"][0]["remaining"] == led.status()["units"][0]["remaining"] == flt.remaining
    assert led.status("u")["units"][0]["requests"] == len(led.history("u"))
    led.close()


@needs_lib
def test_ledger_outcomes(tmp_path):
    path = tmp_path / "l.db"
    with dpacct.Ledger.create(path, "gdp-residue", mu=1, units=["alice"]) as led:
        d = led.request("alice", ev.gaussian(2))
        assert d and d.accepted and d.request_id == 1 and d.remaining["mu"] == pytest.approx(math.sqrt(0.75))
        d = led.request("alice", ev.gaussian(0.5))
        assert not d and "rejected" in d.reason  # recorded, not charged
        with pytest.raises(dpacct.InvalidInputError, match='unknown unit "bob".*Ledger.add_unit()'):
            led.request("bob", ev.gaussian(2))
        with pytest.raises(dpacct.InvalidSpecError):
            led.request("alice", {"gaussian": {"sigma": -1}})
        led.add_unit("bob", "pure", epsilon=1.0)
        with pytest.raises(dpacct.UnsupportedError):
            led.request("bob", ev.gaussian(1.0))  # a pure filter cannot account a Gaussian
        with pytest.raises(dpacct.InvalidInputError):
            led.add_unit("bob")
        with pytest.raises(dpacct.InvalidInputError):
            led.add_unit("x" * 300)
        assert len(led.history()) == 2 and led.verify()["ok"]
        export = led.export()
        assert export["format"].startswith("dpacct-ledger-export")
        again = pickle.loads(pickle.dumps(led))
        assert again.status() == led.status()
        again.close()
    with pytest.raises(ValueError):
        led.status()
    with pytest.raises(dpacct.InvalidInputError, match="already exists"):
        dpacct.Ledger.create(path, "pure", epsilon=1)
    with pytest.raises(dpacct.InvalidInputError, match="Ledger.create"):
        dpacct.Ledger(tmp_path / "missing.db")
    with pytest.raises(dpacct.StorageError):
        dpacct.Ledger.create(tmp_path / "no" / "such" / "dir.db", "pure", epsilon=1)
    with pytest.raises(dpacct.InvalidInputError, match="given twice"):
        dpacct.Ledger.create(tmp_path / "t.db", "pure", epsilon=1, units=["a", "a"])
    copy = dpacct.Ledger.import_(tmp_path / "copy.db", export)
    assert copy.verify()["ok"] and len(copy.history()) == 2
    with dpacct.Ledger.create(tmp_path / "auto.db", "zcdp", rho=1, auto_units=True) as auto:
        assert auto.request("new", ev.gaussian(2)).accepted


def _pg_uri():
    d, script = os.environ.get("DPA_TEST_PG_DIR"), os.environ.get("DPA_TEST_PG_SCRIPT")
    if not (d and script):
        return None
    r = subprocess.run(["bash", script, "uri", d, "pyledger_%s" % uuid.uuid4().hex[:12]],
                       capture_output=True, text=True, timeout=120)
    return r.stdout.strip() if r.returncode == 0 and r.stdout.strip() else None


@needs_lib
def test_ledger_on_postgresql():
    uri = _pg_uri()
    if uri is None:
        pytest.skip("no PostgreSQL server (DPA_TEST_PG_DIR and DPA_TEST_PG_SCRIPT unset, see tests/pg_server.sh)")
    with dpacct.Ledger.create(uri, "gdp-residue", mu=1, units=["a"]) as led:
        assert led.request("a", ev.gaussian(2)).accepted
        assert not led.request("a", ev.gaussian(0.5)).accepted
        assert led.verify()["ok"]
        with pytest.raises(dpacct.InvalidInputError):
            dpacct.Ledger.create(uri, "pure", epsilon=1)


@needs_lib
def test_filter_api():
    f = dpacct.Filter("rdp", rho=[1.0, 2.0], order=[2.0, 8.0])
    assert f.name == "rdp" and f.config["order"] == [2.0, 8.0]
    assert dpacct.Filter(f.config_json).config == f.config
    assert dpacct.Filter(f).config == f.config
    assert f.request(ev.gaussian(3.0)).accepted
    g = f.copy()
    g.request(ev.gaussian(3.0))
    assert g.state != f.state
    g.set_state(f.state)
    assert g.state == f.state
    with pytest.raises(dpacct.InvalidInputError):
        dpacct.Filter("pure", epsilon=-1)
    with pytest.raises(dpacct.InvalidInputError):
        dpacct.Filter()
    with pytest.raises(dpacct.UnsupportedError):
        dpacct.Filter("gdp", mu=1).request(ev.approx(1.0, 1e-6))
    z = dpacct.Filter("zcdp", rho=0.5)
    assert z.request(ev.gaussian(1.0001)).accepted  # rho = 1/(2 sigma^2), just under 1/2
    assert not z.exhausted and not z.request(ev.gaussian(10.0)).accepted  # 0.005 > 1e-4 left
    assert z.request(ev.gaussian(100.0)).accepted  # 5e-5 fits
