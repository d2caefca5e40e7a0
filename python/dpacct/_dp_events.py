# dpacct Python binding: converting Google dp_accounting's DpEvent objects.
# SPDX-License-Identifier: GPL-3.0-or-later
"""from_dp_event: a dp_accounting DpEvent tree as a dpacct Event.

The objects are recognised by class name (and attribute names), so
dp_accounting need not be importable, and subclasses are recognised by the
names in their MRO.  Attribute names are those of dp_accounting 0.6
(dp_accounting/dp_event.py).  Conventions follow dp_accounting's own PLD
accountant where it treats a parameter value specially:

  NoOpDpEvent                      no_op
  NonPrivateDpEvent                non_private
  GaussianDpEvent(nm)              gaussian(sigma=nm); nm == 0: non_private
  LaplaceDpEvent(nm)               laplace(scale=nm);  nm == 0: non_private
  DiscreteLaplaceDpEvent(a, s)     discrete_laplace(scale=1/a, sensitivity=s)
                                   (pmf ~ exp(-a|x|)); a == 0: non_private
  DiscreteGaussianDpEvent(sigma, sensitivity, dimension)
                                   discrete_gaussian(sigma, sensitivity) when
                                   dimension is 1 or None (None: dpacct's pair
                                   is the univariate one; dimension > 1 is
                                   refused: the multivariate discrete Gaussian
                                   is not the univariate one)
  RandomizedResponseDpEvent(p, k)  randomized_response(epsilon, k) with
                                   e^eps = 1 + k (1 - p) / p, i.e. the true
                                   bucket with probability 1 - p + p/k;
                                   k == 1: no_op; p == 0: non_private
  EpsilonDeltaDpEvent(eps, delta)  approx(eps, delta)
  ZCDpEvent(rho, xi)               zcdp(rho, xi) ((xi, rho)-zCDP)
  MixtureOfGaussiansDpEvent(sd, c, p)
                                   mixture_of_gaussians(sd, c, p); a single
                                   sensitivity 0: no_op; sd == 0: non_private
  ExponentialMechanismDpEvent(eps) exponential_mechanism(eps) (eps-bounded
                                   range, as dp_accounting's RDP accountant; its
                                   PLD accountant uses the looser pure eps);
                                   eps == 0: no_op
  PermuteAndFlipDpEvent(eps)       permute_and_flip(eps), accounted as pure eps
                                   (dp_accounting uses the Laplace pair with
                                   scale 1/eps, which dpacct does not adopt: it
                                   is not shown to dominate the mechanism's
                                   worst case; pure eps does, as for any eps-DP
                                   mechanism); eps == 0: no_op
  SingleEpochTreeAggregationDpEvent(nm, step_counts)
                                   tree_aggregation(sigma=nm, steps=max(step_counts))
                                   (a scalar or a list: each record in at most
                                   one tree, so the deepest tree counts, as in
                                   dp_accounting); nm is relative to a node's
                                   sensitivity, so sensitivity 1; nm == 0:
                                   non_private; all step counts 0: no_op
  RepeatAndSelectDpEvent(e, mean, shape)
                                   repeat_and_select(e, mean, shape); shape = inf
                                   (dp_accounting's Poisson) is written without
                                   "shape" (dpacct's Poisson)
  TruncatedSubsampledGaussianDpEvent(dataset_size N, sampling_probability q,
                                   truncated_batch_size B, noise_multiplier nm)
                                   truncated_poisson(gaussian(nm), rate=q,
                                   max_batch=B, n=N) (N counts the record
                                   accounted, as dp_accounting's
                                   P(Binomial(N - 1, q) >= B)); q, B or N == 0:
                                   no_op; nm == 0: non_private
  SelfComposedDpEvent(e, count)    repeat(e, count); count == 0: no_op
  ComposedDpEvent(events)          compose(events); [] : no_op
  PoissonSampledDpEvent(q, e)      poisson(e, q); q == 0: no_op
  SampledWithoutReplacementDpEvent(n, m, e)
                                   sample(e, n, m)  (replace neighbouring)
  SampledWithReplacementDpEvent(n, m, e)
                                   sample_with_replacement(e, n, m)
  dp_accounting.DpEventBuilder     its build()

Refused with UnsupportedError naming the class: UnsupportedDpEvent and any
other class.  The library then checks each kind's neighbouring relation
(truncated_poisson and sample_with_replacement: add_remove only).
"""
import math
from typing import Any

from ._errors import UnsupportedError, InvalidSpecError
from . import events as ev

__all__ = ["from_dp_event", "is_dp_event", "neighboring_from"]

_UNSUPPORTED_WHY = {
    "UnsupportedDpEvent": "it stands for an operation with no DP description",
}


def _names(obj):
    return [c.__name__ for c in type(obj).__mro__]


def is_dp_event(obj):
    """True for an object whose class (or a base) is named like a dp_accounting
    DpEvent or DpEventBuilder."""
    return any(n.endswith("DpEvent") or n == "DpEventBuilder" for n in _names(obj))


def neighboring_from(rel):
    """dpacct's neighbouring name for a dp_accounting NeighboringRelation
    (by name), or for "add_remove" / "replace" / None."""
    if rel is None or rel in ("add_remove", "replace", "replace_special"):
        return rel
    name = getattr(rel, "name", rel)
    if name == "ADD_OR_REMOVE_ONE":
        return "add_remove"
    if name == "REPLACE_ONE":
        return "replace"
    if name == "REPLACE_SPECIAL":
        return "replace_special"  # add_remove with RR's special pair (replace_special below)
    raise InvalidSpecError('neighboring: expected "add_remove", "replace" or a dp_accounting '
                           "NeighboringRelation, got %r" % (rel,))


def from_dp_event(event: Any, neighboring: Any = None) -> Any:
    """A dpacct Event equivalent to the dp_accounting DpEvent `event`.

    neighboring: "add_remove", "replace" or a dp_accounting
    NeighboringRelation (ADD_OR_REMOVE_ONE, REPLACE_ONE): the relation of the
    accountant the event was meant for (dp_accounting keeps it on the
    accountant, not the event); written into the spec when given.  Under
    replace-one, and inside SampledWithoutReplacementDpEvent (a replace-one
    analysis), the Gaussian, Laplace and tree-aggregation leaves get
    sensitivity 2 (see replace_one_sensitivity): their noise is relative to a
    bound C on one record's value, and a replaced record moves a sum by 2C.
    Raises UnsupportedError (naming the class and its path in the tree) for
    events dpacct cannot account."""
    out = _convert(event, "")
    nb = neighboring_from(neighboring)
    if nb == "replace":
        out = replace_one_sensitivity(out)
    if nb == "replace_special":
        out, nb = replace_special(out), "add_remove"
    return out.with_neighboring(nb) if nb else out


def _special_rr(v: Any) -> Any:
    """randomized_response {epsilon, k} against the special input: a
    privacy_loss table (remove direction: P = R(x), Q = R(special) uniform)."""
    eps, k = float(v["epsilon"]), float(v.get("k", 2))
    p = k / (math.exp(eps) + k - 1.0)  # the probability of a uniform report
    if p >= 1.0:
        return {"no_op": {}}
    other = (k - 1.0) * p / k          # P-mass of the k - 1 other buckets (Q-mass (k-1)/k)
    return {"privacy_loss": {"loss": [math.log(p), math.log(k - (k - 1.0) * p)],
                             "mass": [other, 1.0 - other]}}


def _special(d: Any) -> Any:
    if isinstance(d, list):
        return [_special(x) for x in d]
    if not isinstance(d, dict):
        return d
    out = {}
    for k, v in d.items():
        if k == "randomized_response" and isinstance(v, dict) and "epsilon" in v:
            return dict(_special_rr(v), **{x: y for x, y in d.items() if x != k})
        out[k] = _special(v)
    return out


def replace_special(event: Any) -> Any:
    """`event` under dp_accounting's REPLACE_SPECIAL relation (a record is
    replaced by a special record "bot"), as a dpacct event under add_remove.
    For additive noise the special record adds 0, so replacing x by it is
    removing x: the event is unchanged (as dp_accounting's Gaussian, Laplace,
    Poisson-subsampled and tree-aggregation accountants treat it).  Randomized
    response on "bot" reports a uniform bucket: its pair is R(x) (the true
    bucket w.p. 1 - p + p/k) against the uniform law, asymmetric, written as
    a privacy_loss table with p = k / (e^eps + k - 1): losses log p (the
    other buckets) and log(k - (k-1) p) (the true one).  The table's doubles
    are the mechanism's to a few ulp (docs/python.md)."""
    return ev.from_dict(_special(event.to_dict()))


# DpEvents whose noise is relative to a bound C on each record's value in a sum
_SUM_LEAVES = ("gaussian", "laplace", "tree_aggregation")


def _sensitivity_2(d: Any) -> Any:
    if isinstance(d, list):
        return [_sensitivity_2(x) for x in d]
    if not isinstance(d, dict):
        return d
    out = {}
    for k, v in d.items():
        if k in _SUM_LEAVES and isinstance(v, dict) and "sensitivity" not in v:
            v = dict(v, sensitivity=2)
        out[k] = _sensitivity_2(v)
    return out


def replace_one_sensitivity(event: Any) -> Any:
    """`event` (a converted DpEvent) as dpacct must read it under replace-one
    neighbours.  dp_accounting's GaussianDpEvent, LaplaceDpEvent and
    SingleEpochTreeAggregationDpEvent add noise relative to a bound C on each
    record's contribution to a sum; replacing one record moves the sum by up
    to 2C, and a dpacct leaf's sensitivity is the change between neighbours
    of the spec's relation, so those leaves get sensitivity 2 (as
    dp_accounting's PLD accountant under REPLACE_ONE, and as `dpacct dpsgd
    --sampling without_replacement`).  Leaves that state a sensitivity keep it."""
    return ev.from_dict(_sensitivity_2(event.to_dict()))


def _attr(obj, name, path, cls):
    try:
        return getattr(obj, name)
    except AttributeError:
        raise InvalidSpecError("%s: %s has no attribute %r (not a dp_accounting %s?)"
                               % (path or "/", cls, name, cls)) from None


def _convert(e, path):
    if isinstance(e, ev.Event):
        return e
    names = _names(e)
    known = next((n for n in names if n in _CONVERTERS or n in _UNSUPPORTED_WHY
                  or n == "DpEventBuilder"), None)
    cls = type(e).__name__
    if known == "DpEventBuilder":
        return _convert(e.build(), path)
    if known is None or known in _UNSUPPORTED_WHY:
        why = _UNSUPPORTED_WHY.get(known, "dpacct has no equivalent event kind")
        raise UnsupportedError("%s: %s is not supported: %s" % (path or "/", cls, why),
                               path=path or "/")
    here = "%s/%s" % (path, cls)
    return _CONVERTERS[known](e, here, cls, lambda name: _attr(e, name, here, cls))


def _is_zero(x):
    return x == 0


def _gaussian(e, here, cls, a):
    nm = a("noise_multiplier")
    return ev.non_private() if _is_zero(nm) else ev.gaussian(nm)


def _laplace(e, here, cls, a):
    nm = a("noise_multiplier")
    return ev.non_private() if _is_zero(nm) else ev.laplace(nm)


def _discrete_laplace(e, here, cls, a):
    p, s = a("noise_parameter"), a("sensitivity")
    if _is_zero(p):
        return ev.non_private()
    return ev.discrete_laplace(1.0 / float(p), s)


def _discrete_gaussian(e, here, cls, a):
    dim = getattr(e, "dimension", None)
    if dim is not None and dim != 1:
        raise UnsupportedError("%s: %s with dimension %r is not supported: dpacct's discrete_gaussian "
                               "is univariate (dimension 1 or None)" % (here, cls, dim), path=here)
    # dp_accounting's DiscreteGaussianDpEvent has no truncation_bound (only its
    # PLD class DiscreteGaussianPrivacyLoss does); an event that carries one is
    # the truncated noise
    return ev.discrete_gaussian(a("sigma"), getattr(e, "sensitivity", 1), getattr(e, "truncation_bound", None))


def _randomized_response(e, here, cls, a):
    p, k = a("noise_parameter"), a("num_buckets")
    if k == 1:
        return ev.no_op()
    if _is_zero(p):
        return ev.non_private()
    p, kf = float(p), float(k)
    # true bucket w.p. 1 - p + p/k, each other w.p. p/k:
    # e^eps = (1 - p + p/k) / (p/k) = 1 + k (1 - p) / p
    eps = math.log1p(kf * (1.0 - p) / p) if 0 < p <= 1 else p  # bad p: let the library say why
    return ev.randomized_response(eps, k=k)


def _epsilon_delta(e, here, cls, a):
    return ev.approx(a("epsilon"), a("delta"))


def _zcdp(e, here, cls, a):
    xi = getattr(e, "xi", 0.0)
    return ev.zcdp(a("rho"), xi=a("xi") if xi else None)


def _mixture(e, here, cls, a):
    sd, c, p = a("standard_deviation"), list(a("sensitivities")), list(a("sampling_probs"))
    if len(c) == 1 and c[0] == 0:
        return ev.no_op()
    if _is_zero(sd):
        return ev.non_private()
    return ev.mixture_of_gaussians(sd, c, p)


def _exponential(e, here, cls, a):
    eps = a("epsilon")
    return ev.no_op() if _is_zero(eps) else ev.exponential_mechanism(eps)


def _permute_and_flip(e, here, cls, a):
    eps = a("epsilon")
    return ev.no_op() if _is_zero(eps) else ev.permute_and_flip(eps)


def _tree_aggregation(e, here, cls, a):
    nm, steps = a("noise_multiplier"), a("step_counts")
    if hasattr(steps, "tolist") and hasattr(steps, "dtype"):
        steps = steps.tolist()
    if isinstance(steps, (list, tuple)):
        if not steps:
            raise InvalidSpecError("%s: step_counts must be a non-empty list or a scalar, got []" % here)
        steps = max(steps)
    if _is_zero(nm):
        return ev.non_private()
    if _is_zero(steps):
        return ev.no_op()  # no step: no node involves any record
    return ev.tree_aggregation(nm, steps)


def _repeat_and_select(e, here, cls, a):
    mean, shape = a("mean"), a("shape")
    return ev.repeat_and_select(_convert(a("event"), here + "/event"), mean, shape)


def _truncated_subsampled_gaussian(e, here, cls, a):
    n, q, b, nm = a("dataset_size"), a("sampling_probability"), a("truncated_batch_size"), a("noise_multiplier")
    if _is_zero(q) or _is_zero(b) or _is_zero(n):
        return ev.no_op()
    if _is_zero(nm):
        return ev.non_private()
    return ev.truncated_poisson(ev.gaussian(nm), q, b, n)


def _self_composed(e, here, cls, a):
    count = a("count")
    if count == 0:
        return ev.no_op()
    return ev.repeat(_convert(a("event"), here + "/event"), count)


def _composed(e, here, cls, a):
    events = list(a("events"))
    if not events:
        return ev.no_op()
    return ev.compose([_convert(x, "%s/events/%d" % (here, i)) for i, x in enumerate(events)])


def _poisson(e, here, cls, a):
    q = a("sampling_probability")
    if _is_zero(q):
        return ev.no_op()
    return ev.poisson(_convert(a("event"), here + "/event"), q)


def _without_replacement(e, here, cls, a):
    # sampling without replacement is a replace-one analysis: the sampled sums
    # move by up to 2C when a record is replaced (replace_one_sensitivity)
    inner = replace_one_sensitivity(_convert(a("event"), here + "/event"))
    return ev.sample(inner, a("source_dataset_size"), a("sample_size"))


def _with_replacement(e, here, cls, a):
    return ev.sample_with_replacement(_convert(a("event"), here + "/event"),
                                      a("source_dataset_size"), a("sample_size"))


def _no_op(e, here, cls, a):
    return ev.no_op()


def _non_private(e, here, cls, a):
    return ev.non_private()


_CONVERTERS = {
    "NoOpDpEvent": _no_op,
    "NonPrivateDpEvent": _non_private,
    "GaussianDpEvent": _gaussian,
    "LaplaceDpEvent": _laplace,
    "DiscreteLaplaceDpEvent": _discrete_laplace,
    "DiscreteGaussianDpEvent": _discrete_gaussian,
    "RandomizedResponseDpEvent": _randomized_response,
    "EpsilonDeltaDpEvent": _epsilon_delta,
    "ZCDpEvent": _zcdp,
    "MixtureOfGaussiansDpEvent": _mixture,
    "ExponentialMechanismDpEvent": _exponential,
    "PermuteAndFlipDpEvent": _permute_and_flip,
    "SelfComposedDpEvent": _self_composed,
    "ComposedDpEvent": _composed,
    "PoissonSampledDpEvent": _poisson,
    "SampledWithoutReplacementDpEvent": _without_replacement,
    "SampledWithReplacementDpEvent": _with_replacement,
    "SingleEpochTreeAggregationDpEvent": _tree_aggregation,
    "RepeatAndSelectDpEvent": _repeat_and_select,
    "TruncatedSubsampledGaussianDpEvent": _truncated_subsampled_gaussian,
}

SUPPORTED_CLASSES = tuple(sorted(_CONVERTERS))
UNSUPPORTED_CLASSES = tuple(sorted(_UNSUPPORTED_WHY))
