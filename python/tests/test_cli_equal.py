# SPDX-License-Identifier: GPL-3.0-or-later
"""The binding returns exactly the doubles the dpacct command prints.

The command's --json output writes every double with 17 significant digits
(jansson's default), which reads back as the same double; each comparison
below uses a fresh accountant and the same sequence of queries as the
command (an epsilon query, then mu-GDP), because an accountant may reuse
grids of earlier queries."""
import math

import pytest

import dpacct
from dpacct import events as ev
from conftest import needs_cli

pytestmark = needs_cli

DPSGD = ('{"repeat": {"count": 14063, "event": {"poisson": {"rate": 0.0042666667, '
         '"event": {"gaussian": {"sigma": 1.1}}}}}}')
CASES = [
    # (spec JSON, method, CLI options, Accountant options)
    (DPSGD, "auto", [], {}),
    ('{"repeat": {"count": 1000, "event": {"gaussian": {"sigma": 50}}}}', "auto", [], {}),
    ('{"compose": [{"laplace": {"scale": 2}}, {"repeat": {"count": 10, "event": '
     '{"approx": {"epsilon": 0.1, "delta": 1e-8}}}}, {"randomized_response": {"p": 0.75}}]}',
     "auto", [], {}),
    ('{"compose": [{"repeat": {"count": 100, "event": {"poisson": {"rate": 0.01, "event": '
     '{"gaussian": {"sigma": 1.0}}}}}}, {"gdp": {"mu": 0.5}}, {"repeat": {"count": 3, "event": '
     '{"discrete_laplace": {"scale": 10, "sensitivity": 2}}}}]}', "pld",
     ["--accuracy", "1e-3"], {"accuracy": 1e-3}),
    ('{"compose": [{"zcdp": {"rho": 0.1}}, {"gaussian": {"sigma": 3}}]}', "auto", [], {}),
    (DPSGD, "rdp", ["--rdp-conversion", "improved"], {"rdp_conversion": "improved"}),
    (DPSGD, "phi", [], {}),
    (DPSGD, "gdp", [], {}),
    ('{"sample": {"n": 60000, "m": 256, "event": {"gaussian": {"sigma": 1.5, "sensitivity": 2}}}, '
     '"neighboring": "replace"}', "auto", [], {}),
    ('{"repeat": {"count": 50, "event": {"randomized_response": {"epsilon": 0.5, "k": 4}}}}',
     "auto", ["--grid-step", "1e-4"], {"grid_step": 1e-4}),
    ('{"compose": [{"pure": {"epsilon": 0.3}}, {"non_private": {}}]}', "auto", [], {}),
    ('{"privacy_loss": {"loss": [-1, 0.5, 2], "mass": [0.2, 0.5, 0.29]}}', "auto", [], {}),
]
# the kinds of docs/spec.md added after the cases above (one each)
NEW_KINDS = [
    ('{"repeat": {"count": 20, "event": {"exponential_mechanism": {"epsilon": 0.5}}}}', "auto", [], {}),
    ('{"repeat": {"count": 20, "event": {"permute_and_flip": {"epsilon": 0.5}}}}', "auto", [], {}),
    ('{"compose": [{"report_noisy_max": {"epsilon": 0.5, "noise": "gumbel"}}, '
     '{"report_noisy_max": {"epsilon": 0.3, "noise": "laplace"}}]}', "auto", [], {}),
    ('{"repeat": {"count": 5, "event": {"tree_aggregation": {"sigma": 3, "steps": 255}}}}', "auto", [], {}),
    ('{"repeat": {"count": 100, "event": {"truncated_poisson": {"rate": 0.01, "max_batch": 12, "n": 1000, '
     '"event": {"gaussian": {"sigma": 1}}}}}}', "auto", [], {}),
    ('{"repeat_and_select": {"mean": 4, "shape": 1, "event": {"repeat": {"count": 50, "event": '
     '{"poisson": {"rate": 0.05, "event": {"gaussian": {"sigma": 2}}}}}}}}', "auto", [], {}),
    ('{"compose": [{"laplace_svt": {"scale": 5, "k": 20, "c": 2}}, {"gaussian_svt": {"sigma": 4, "k": 10}}]}',
     "auto", [], {}),
    ('{"repeat": {"count": 10, "event": {"mixture_of_gaussians": {"sigma": 2, "sensitivities": [0, 0.5, 1], '
     '"probabilities": [0.5, 0.3, 0.2]}}}}', "auto", [], {}),
    ('{"repeat": {"count": 10, "event": {"sample_with_replacement": {"n": 1000, "m": 10, '
     '"event": {"gaussian": {"sigma": 1}}}}}}', "auto", [], {}),
    ('{"privacy_profile": {"epsilon": [0.5, 1, 2], "delta": [1e-3, 1e-5, 1e-8]}}', "auto", [], {}),
]
NEW_IDS = ["exponential-mechanism", "permute-and-flip", "report-noisy-max", "tree-aggregation",
           "truncated-poisson", "repeat-and-select", "svt", "mixture-of-gaussians", "sample-with-replacement",
           "privacy-profile"]
IDS = ["dpsgd", "gaussians-exact", "laplace-approx-rr", "mixed-pld", "zcdp-rdp", "dpsgd-rdp-improved",
       "dpsgd-phi", "dpsgd-gdp", "sample-replace", "kary-rr", "non-private", "privacy-loss"]

FIELDS = ["upper", "lower", "upper_remove", "upper_add", "grid_step", "grid_size", "truncated_mass",
          "roundoff", "accuracy_met", "upper_source", "method", "binding", "certified"]


def same(a, b):
    """Equal as doubles (bit for bit: -0.0 and 0.0 differ), or both NaN."""
    if isinstance(a, float) or isinstance(b, float):
        a, b = float(a), float(b)
        if math.isnan(a) and math.isnan(b):
            return True
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return a == b


def check_result(q, r, j):
    keys = {"upper": q + "_upper", "lower": q + "_lower", "upper_remove": q + "_upper_remove",
            "upper_add": q + "_upper_add", "binding": "binding_direction"}
    for f in FIELDS:
        assert same(getattr(r, f), j[keys.get(f, f)]), (f, getattr(r, f), j[keys.get(f, f)])
    assert r.note == j.get("note", "")
    if r.method == "rdp":
        assert same(r.order if r.order is not None else float("nan"),
                    j["rdp_order"] if j["rdp_order"] is not None else float("nan"))


def method_args(method, cli_opts):
    return ["--method", method] + cli_opts


@pytest.mark.parametrize("spec,method,cli_opts,opts", CASES, ids=IDS)
def test_epsilon_and_gdp_mu(cli, spec, method, cli_opts, opts):
    j = cli("epsilon", "--delta", "1e-5", "--gdp-mu", *method_args(method, cli_opts), spec)
    with dpacct.Accountant(spec, method, **opts) as acc:
        r = acc.epsilon(1e-5)
        check_result("epsilon", r, j)
        assert r.at == j["delta"]
        g = acc.gdp_mu()
    jg = j["gdp_mu"]
    assert same(g.lower, jg["lower"]) and same(g.upper, jg["upper"])
    assert g.certified_upper == jg["certified"] and g.source == jg["source"] and g.note == jg["note"]


@pytest.mark.parametrize("spec,method,cli_opts,opts", CASES, ids=IDS)
def test_delta(cli, spec, method, cli_opts, opts):
    j = cli("delta", "--epsilon", "0.7", *method_args(method, cli_opts), spec)
    with dpacct.Accountant(spec, method, **opts) as acc:
        check_result("delta", acc.delta(0.7), j)


@pytest.mark.parametrize("spec,method,cli_opts,opts", CASES[:4] + CASES[6:7], ids=IDS[:4] + IDS[6:7])
def test_profile(cli, spec, method, cli_opts, opts):
    j = cli("profile", "--from", "0", "--to", "3", "--points", "13", *method_args(method, cli_opts), spec)
    eps = [p["epsilon"] for p in j["points"]]
    with dpacct.Accountant(spec, method, **opts) as acc:
        prof = acc.profile(eps)
    assert prof.method == j["method"]
    assert len(prof) == len(eps)
    for (e, up, lo), p in zip(prof, j["points"]):
        assert same(e, p["epsilon"]) and same(up, p["delta_upper"]) and same(lo, p["delta_lower"])


CALIBRATIONS = [
    ('{"repeat": {"count": 14063, "event": {"poisson": {"rate": 0.0042666667, '
     '"event": {"gaussian": {"sigma": "?"}}}}}}', 1, 1e-5, []),
    ('{"repeat": {"count": "?", "event": {"poisson": {"rate": 0.004, "event": '
     '{"gaussian": {"sigma": 1.0}}}}}}', 8, 1e-5, []),
    ('{"repeat": {"count": 200, "event": {"laplace": {"scale": "?"}}}}', 2, 1e-6,
     ["--tolerance", "1e-6"]),
]


@pytest.mark.parametrize("tmpl,eps,delta,extra", CALIBRATIONS, ids=["sigma", "count", "laplace-scale"])
def test_calibrate(cli, tmpl, eps, delta, extra):
    j = cli("calibrate", "--epsilon", eps, "--delta", delta, *extra, tmpl)
    tol = float(extra[1]) if extra else None
    c = dpacct.calibrate(tmpl, eps, delta, rel_tol=tol)
    assert c.parameter == j["parameter"] and c.path == j["path"]
    assert same(c.value, j["value"]) and type(c.value) is type(j["value"])
    assert same(c.result.upper, j["epsilon_upper"]) and same(c.result.lower, j["epsilon_lower"])
    assert (c.infeasible is None and j["infeasible"] is None) or same(c.infeasible, j["infeasible"])
    assert c.evaluations == j["evaluations"] and c.result.method == j["method"]
    assert c.result.accuracy_met == j["accuracy_met"]
    assert c.result.upper <= eps


@pytest.mark.parametrize("order", ["2", "0.5", "1", "1.5+2i"])
def test_renyi(cli, order):
    spec = ('{"compose": [{"repeat": {"count": 10, "event": {"poisson": {"rate": 0.1, "event": '
            '{"gaussian": {"sigma": 2}}}}}}, {"laplace": {"scale": 3}}]}')
    j = cli("renyi", "--order", order, spec)
    r = dpacct.renyi(spec, order)
    real = "i" not in order
    assert same(r.order.real if not real else r.order, j["order_re"])
    for d in ("remove", "add"):
        v, jv = getattr(r, d), j[d]
        assert v.exists == jv["exists"] and v.certified == jv["certified"] and v.note == jv["note"]
        if real:
            assert same(v.value, jv["value"]) and same(v.lower, jv["lower"]) and same(v.upper, jv["upper"])
        else:
            assert same(v.value.real, jv["value"]) and same(v.value.imag, jv["value_im"])
    if real:
        assert r.binding == j["binding_direction"]


@pytest.mark.parametrize("spec, order, upper, lower_min, note", [
    # a bound, not a pair: the leaf's RDP bound above, 0 below (issue 24)
    ('{"zcdp": {"rho": 0.5}}', "2", 1.0, 0.0, "upper: the leaf's RDP bound; lower: 0, the leaf is a bound, not a pair"),
    ('{"zcdp": {"rho": 0.5}}', "0.5", 0.5, 0.0, "upper: the leaf's RDP bound; lower: 0, the leaf is a bound, not a pair"),
    # the bounded-range class: dp_accounting's KL 0.123301561 inside, the envelope's above
    ('{"exponential_mechanism": {"epsilon": 1}}', "1", 0.16395343362718767, 0.1233015614,
     "certified upper bound (closed forms of the dominating pair); lower: best member of the bounded-range class"),
])
def test_renyi_bounds(cli, spec, order, upper, lower_min, note):
    j = cli("renyi", "--order", order, spec)
    r = dpacct.renyi(spec, order)
    for d in ("remove", "add"):
        v, jv = getattr(r, d), j[d]
        assert v.note == jv["note"] == note
        assert same(v.lower, jv["lower"]) and same(v.upper, jv["upper"])
        assert abs(v.upper - upper) <= 1e-14 * upper and v.upper >= upper
        assert lower_min <= v.lower <= 0.123301561 + 1e-9 if lower_min else v.lower == 0


def test_builder_and_text_give_the_same_bits(cli):
    """An Event writes each double in its shortest round-trip form, so the
    library reads the very value given in Python."""
    e = ev.poisson(ev.gaussian(1.1), 256 / 60000) * 14063
    j = cli("epsilon", "--delta", "1e-5", e.to_json())
    with dpacct.Accountant(e) as acc:
        check_result("epsilon", acc.epsilon(1e-5), j)


@pytest.mark.parametrize("spec,method,cli_opts,opts", NEW_KINDS, ids=NEW_IDS)
def test_new_kinds_epsilon_and_gdp_mu(cli, spec, method, cli_opts, opts):
    test_epsilon_and_gdp_mu(cli, spec, method, cli_opts, opts)


@pytest.mark.parametrize("spec,method,cli_opts,opts", NEW_KINDS, ids=NEW_IDS)
def test_new_kinds_delta(cli, spec, method, cli_opts, opts):
    test_delta(cli, spec, method, cli_opts, opts)


@pytest.mark.parametrize("spec,method,cli_opts,opts", NEW_KINDS, ids=NEW_IDS)
def test_new_kinds_builder(spec, method, cli_opts, opts):
    """The builder's constructors write these specs (same canonical form)."""
    built = {
        "exponential-mechanism": ev.exponential_mechanism(0.5) * 20,
        "permute-and-flip": ev.permute_and_flip(0.5) * 20,
        "report-noisy-max": ev.report_noisy_max(0.5, "gumbel") + ev.report_noisy_max(0.3, "laplace"),
        "tree-aggregation": ev.tree_aggregation(3, 255) * 5,
        "truncated-poisson": ev.truncated_poisson(ev.gaussian(1), rate=0.01, max_batch=12, n=1000) * 100,
        "repeat-and-select": ev.repeat_and_select(ev.poisson(ev.gaussian(2), 0.05) * 50, mean=4, shape=1),
        "svt": ev.laplace_svt(5, 20, c=2) + ev.gaussian_svt(4, 10),
        "mixture-of-gaussians": ev.mixture_of_gaussians(2, [0, 0.5, 1], [0.5, 0.3, 0.2]) * 10,
        "sample-with-replacement": ev.sample_with_replacement(ev.gaussian(1), 1000, 10) * 10,
        "privacy-profile": ev.privacy_profile([0.5, 1, 2], [1e-3, 1e-5, 1e-8]),
    }[NEW_IDS[[c[0] for c in NEW_KINDS].index(spec)]]
    assert dpacct.canonical_spec(built) == dpacct.canonical_spec(spec)
