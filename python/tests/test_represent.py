# SPDX-License-Identifier: GPL-3.0-or-later
"""dpacct.pld, characteristic, lt_profile, clt_info (python/dpacct/represent.py)
against independent computations: the Gaussian closed forms (delta of
mu-GDP, GDP Cor 2.13; phi(t) = exp(i t mu^2/2 - t^2 mu^2/2)), the delta
bracket recomputed here from the exported masses (docs/guarantees.md §3.17)
against Accountant.delta and the `dpacct delta` command, phi against the
transform of the exported PLD, and clt_info against the numbers
`dpacct epsilon --method gdp --json` prints.  Runs under pytest or alone
(python3 test_represent.py, with DPACCT_LIBRARY set)."""
import cmath
import json
import math
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
try:
    from conftest import needs_lib, CLI  # noqa: E402
except ImportError:  # pytest absent: run alone
    def needs_lib(f):
        return f
    CLI = os.environ.get("DPACCT_CLI")

import dpacct  # noqa: E402

U = 2.0 ** -53
GAUSS = {"repeat": {"count": 10, "event": {"gaussian": {"sigma": 3}}}}
MU = math.sqrt(10) / 3
SUBS = {"repeat": {"count": 30, "event": {"poisson": {"rate": 0.1, "event": {"gaussian": {"sigma": 1}}}}}}


def gauss_delta(mu, eps):
    phi = lambda x: 0.5 * math.erfc(-x / math.sqrt(2))  # noqa: E731
    return phi(-eps / mu + mu / 2) - math.exp(eps) * phi(-eps / mu - mu / 2)


def bracket(d, eps):
    """delta(eps) bracket from an exported PLD (the formula of accountant.h)."""
    out = []
    for k, name in enumerate(("upper", "lower")):
        m = d[name]
        s = math.fsum(w * -math.expm1(eps - z) for z, w in zip(m["loss"], m["mass"]) if z > eps) + m["inf"]
        f = 2 * m["n"] * U + m["rel_err"]
        out.append(s * (1 + f) + m["tail_above"] + m["roundoff"] if k == 0
                   else s * (1 - f) - m["truncated_mass"] - m["roundoff"])
    return out


@needs_lib
def test_pld_masses_and_brackets():
    for spec, dirs in ((GAUSS, ("remove",)), (SUBS, ("remove", "add"))):
        with dpacct.Accountant(spec, "pld") as acc:
            r = acc.delta(1.0)
            for direction in dirs:
                d = acc.pld(direction)
                for name in ("upper", "lower"):
                    m = d[name]
                    total = math.fsum(m["mass"]) + m["inf"]
                    # 1 within the truncated mass and the round-off allowance
                    assert abs(total - 1) <= m["truncated_mass"] + 4 * m["n"] * U + m["rel_err"] + m["roundoff"]
                    assert min(m["mass"]) >= 0 and len(m["loss"]) == m["n"]
                up, lo = bracket(d, 1.0)
                # the same grid as the query: the same bracket up to summation order
                q_up = r.upper if d["direction"] == "both" else (r.upper_remove if direction == "remove"
                                                                 else r.upper_add)
                assert abs(up - q_up) <= 1e-12 * q_up
                assert lo <= q_up
    d = dpacct.pld(GAUSS)
    for eps in (0.0, 0.5, 1.0, 2.0, 3.0):
        up, lo = bracket(d, eps)
        ref = gauss_delta(MU, eps)
        assert lo <= ref * (1 + 1e-13) and ref * (1 - 1e-13) <= up


@needs_lib
def test_pld_brackets_cli_delta():
    if not CLI:
        return
    d = dpacct.pld(GAUSS)
    out = subprocess.run([CLI, "delta", "--epsilon", "1", "--method", "pld", "--json", json.dumps(GAUSS)],
                         capture_output=True, text=True, check=True).stdout
    res = json.loads(out)
    res = res["results"][0] if "results" in res else res
    up, lo = bracket(d, 1.0)
    # both brackets hold the true delta: they intersect
    assert lo <= res["delta_upper"] and res["delta_lower"] <= up


@needs_lib
def test_characteristic_gaussian_and_pld():
    ts = [-6 + 0.25 * i for i in range(49)]
    for direction in ("remove", "add"):
        c = dpacct.characteristic(GAUSS, ts, direction)
        assert c["certified"]
        for t, v, e in zip(ts, c["phi"], c["error"]):
            ref = cmath.exp(1j * t * MU * MU / 2 - t * t * MU * MU / 2)
            assert abs(v - ref) <= e + 1e-15 * abs(ref) + 1e-300
            assert e <= 1e-13
    # subsampled Gaussian: quadrature (an estimate) against the PLD's transform,
    # which differs by at most |t| step (each loss moved by <= one step)
    d = dpacct.pld(SUBS, "add")
    c = dpacct.characteristic(SUBS, [0.5, 2.0, -3.0], "add")
    assert not c["certified"]
    for t, v in zip(c["t"], c["phi"]):
        for name in ("upper", "lower"):
            m = d[name]
            f = sum(w * cmath.exp(1j * t * z) for z, w in zip(m["loss"], m["mass"]))
            assert abs(f - v) <= abs(t) * m["step"] + 1e-9


@needs_lib
def test_lt_profile():
    eps = [0.0, 0.5, 1.0, 2.0, 3.0, 4.0]
    r = dpacct.lt_profile(GAUSS, eps)
    assert r["has_estimate"] and r["has_bound"]
    with dpacct.Accountant(GAUSS, "pld") as acc:
        for i, e in enumerate(eps):
            ref = gauss_delta(MU, e)
            # the Bromwich estimate: within 1e-9 relative for Gaussians (tests/test_represent.c)
            assert abs(r["estimate"][i] - ref) <= 1e-9 * ref + 1e-15
            assert r["bound"][i] >= acc.delta(e).lower
    r = dpacct.lt_profile({"randomized_response": {"epsilon": 1}}, [0.5])
    assert not r["has_estimate"] and r["has_bound"] and "LT eq 37" in r["estimate_note"]
    assert math.isnan(r["estimate"][0])


@needs_lib
def test_clt_info_matches_cli():
    spec = {"repeat": {"count": 100, "event": {"poisson": {"rate": 0.01, "event": {"gaussian": {"sigma": 1}}}}}}
    c = dpacct.clt_info(spec)
    assert c["mu_lower"] <= c["mu"] <= c["mu_upper"] and not c["symmetric"]
    assert c["kl"]["remove"] > 0 and c["kappa2"]["add"] > 0 and c["kbar3"]["remove"] > 0
    g = dpacct.clt_info(GAUSS, "clt")
    assert abs(g["mu"] - MU) <= 1e-12 and g["gamma"]["remove"] == 0
    assert abs(g["kl"]["remove"] - MU * MU / 2) <= 1e-12
    if CLI:
        out = subprocess.run([CLI, "epsilon", "--delta", "1e-5", "--method", "gdp", "--json", json.dumps(spec)],
                             capture_output=True, text=True, check=True).stdout
        clt = json.loads(out)
        clt = clt.get("clt") or clt["results"][0]["clt"]
        assert abs(clt["mu"] - c["mu"]) <= 1e-12 * c["mu"]


@needs_lib
def test_refusals():
    for call, kind in ((lambda: dpacct.pld(GAUSS, "sideways"), dpacct.InvalidInputError),
                       (lambda: dpacct.characteristic(GAUSS, [float("nan")]), dpacct.InvalidInputError),
                       (lambda: dpacct.characteristic({"zcdp": {"rho": 1}}, [1.0]), dpacct.UnsupportedError),
                       (lambda: dpacct.lt_profile(GAUSS, [float("inf")]), dpacct.InvalidInputError),
                       (lambda: dpacct.clt_info(GAUSS, "pld"), dpacct.InvalidInputError),
                       (lambda: dpacct.Accountant(GAUSS, "exact").pld(), dpacct.UnsupportedError)):
        try:
            call()
        except kind:
            pass
        else:
            raise AssertionError("no %s" % kind.__name__)


if __name__ == "__main__":
    for name, fn in sorted(globals().items()):
        if name.startswith("test_") and callable(fn):
            fn()
            print("ok", name)
