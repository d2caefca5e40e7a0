# dpacct Python binding: the event builder.
# SPDX-License-Identifier: GPL-3.0-or-later
"""Build specs (docs/spec.md) with Python constructors instead of JSON.

    >>> from dpacct import events as ev
    >>> step = ev.poisson(ev.gaussian(1.1), rate=256 / 60000)
    >>> (step * 14063).to_dict()
    {'repeat': {'count': 14063, 'event': {'poisson': {'rate': 0.004266666666666667, 'event': {'gaussian': {'sigma': 1.1}}}}}}

An Event is immutable.  ``a + b`` composes (flattening nested compositions),
``e * k`` (or ``k * e``) repeats, and the combinators are also methods:
``e.repeat(k)``, ``e.poisson(rate)``, ``e.sample(n, m)``.  The string "?"
in place of a number makes a calibration template (dpacct.calibrate).

Values are checked here for type and finiteness only (a number, or "?");
domains are checked by the library when the spec is read, with the JSON path
of the offending value (InvalidSpecError.path).  Numbers are written with
Python's shortest round-trip repr, so the library reads exactly the double
given.

The neighbouring relation ("add_remove", the default, or "replace") belongs
to the whole spec: ``e.with_neighboring("replace")`` marks an event, the
mark passes up through combinators (conflicting marks are an error), and
``to_dict()`` writes it at the top level.
"""
import json
import math
import numbers
from typing import Any, Dict, Iterable, Optional, Tuple, Union

from ._errors import InvalidSpecError

__all__ = [
    "Event", "PLACEHOLDER", "gaussian", "laplace", "discrete_laplace", "discrete_gaussian",
    "randomized_response", "pure", "approx", "zcdp", "gdp", "no_op", "non_private",
    "privacy_loss", "privacy_profile", "tradeoff_curve", "mixture_of_gaussians", "exponential_mechanism",
    "permute_and_flip", "report_noisy_max", "tree_aggregation", "laplace_svt", "gaussian_svt",
    "dpsgd", "bandmf", "compose", "repeat", "poisson", "sample", "sample_with_replacement", "truncated_poisson",
    "random_allocation", "repeat_and_select", "from_dict", "from_json", "as_event", "check_nesting", "MAX_DEPTH",
]

PLACEHOLDER = "?"
# The library refuses events nested deeper than this (src/event/event_json_read.c,
# MAX_EVENT_DEPTH); the binding refuses them first, without recursion.
MAX_DEPTH = 256
NEIGHBORINGS = ("add_remove", "replace", "replace_special")

# kinds whose value is {"PARAMS..., "event": E}
_UNARY = {"repeat": ("count",), "poisson": ("rate",), "sample": ("n", "m"),
          "sample_with_replacement": ("n", "m"), "truncated_poisson": ("rate", "max_batch", "n"),
          "repeat_and_select": ("mean", "shape")}
RNM_NOISES = ("gumbel", "laplace", "exponential")


def _is_number(v):
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _num(kind, name, v, placeholder=True):
    """A parameter value: a finite real (int stays int), or "?"."""
    if placeholder and isinstance(v, str) and v == PLACEHOLDER:
        return v
    if hasattr(v, "item") and hasattr(v, "dtype") and getattr(v, "ndim", 0) == 0:
        v = v.item()  # numpy scalar or 0-d array
    if not _is_number(v):
        raise InvalidSpecError('%s: %s must be a number%s, got %s' % (
            kind, name, ' or "?"' if placeholder else "", _show(v)))
    if isinstance(v, numbers.Integral):
        return int(v)
    v = float(v)
    if not math.isfinite(v):
        raise InvalidSpecError("%s: %s must be finite, got %r" % (kind, name, v))
    return v


def _show(v):
    s = repr(v)
    return "%s %s" % (type(v).__name__, s if len(s) < 40 else s[:37] + "...")


def _array(kind, name, values):
    """A list of finite floats from a sequence or a numpy array."""
    if hasattr(values, "tolist") and hasattr(values, "dtype"):
        values = values.tolist()
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise InvalidSpecError("%s: %s must be a sequence of numbers, got %s" % (kind, name, _show(values)))
    out = []
    for i, v in enumerate(values):
        out.append(_num(kind, "%s[%d]" % (name, i), v, placeholder=False))
    return out


def _check_neighboring(nb):
    if nb is None or nb in NEIGHBORINGS:
        return nb
    name = getattr(nb, "name", None)  # dp_accounting's NeighboringRelation
    if name == "ADD_OR_REMOVE_ONE":
        return "add_remove"
    if name == "REPLACE_ONE":
        return "replace"
    if name == "REPLACE_SPECIAL":
        return "replace_special"
    raise InvalidSpecError('/neighboring: must be "add_remove" or "replace", got %r (or "replace_special")' % (nb,))


def _merge_neighboring(children, kind):
    nb = None
    for c in children:
        if c.neighboring is not None:
            if nb is not None and nb != c.neighboring:
                raise InvalidSpecError("%s: children are marked with different neighbouring relations "
                                       "(%s and %s); a spec has one" % (kind, nb, c.neighboring))
            nb = c.neighboring
    return nb


class Event:
    """One node of an event tree: a kind, its parameters and its children.

    Build events with the module's functions; ``Event.from_dict`` reads any
    JSON event (kinds this module has no constructor for included: the
    library decides whether it knows them)."""

    __slots__ = ("kind", "params", "children", "neighboring", "depth")

    kind: str
    params: Dict[str, Any]
    children: Tuple["Event", ...]
    neighboring: Optional[str]
    depth: int

    def __init__(self, kind: str, params: Optional[Dict[str, Any]] = None,
                 children: Iterable["Event"] = (), neighboring: Optional[str] = None) -> None:
        children = tuple(children)
        for c in children:
            if not isinstance(c, Event):
                raise InvalidSpecError("%s: a child must be an Event, got %s" % (kind, _show(c)))
        depth = 1 + max((c.depth for c in children), default=0)
        if depth > MAX_DEPTH:
            raise InvalidSpecError("%s: events nested deeper than %d levels (the library's limit)"
                                   % (kind, MAX_DEPTH))
        object.__setattr__(self, "kind", str(kind))
        object.__setattr__(self, "params", dict(params or {}))
        object.__setattr__(self, "children", children)
        object.__setattr__(self, "neighboring", _check_neighboring(neighboring))
        object.__setattr__(self, "depth", depth)

    def __setattr__(self, name, value):
        raise AttributeError("Event is immutable")

    def __delattr__(self, name):
        raise AttributeError("Event is immutable")

    # ---- pickle and copy: rebuilt through the constructor ----
    def __reduce__(self):
        return (Event, (self.kind, self.params, self.children, self.neighboring))

    def __copy__(self) -> "Event":
        return self

    def __deepcopy__(self, memo) -> "Event":
        import copy
        return Event(self.kind, copy.deepcopy(self.params, memo),
                     tuple(copy.deepcopy(c, memo) for c in self.children), self.neighboring)

    # ---- JSON ----
    def to_dict(self, neighboring: Any = None) -> Dict[str, Any]:
        """The spec as a dict (the JSON form of docs/spec.md); "neighboring"
        is written when given here or marked on the event."""
        d = self._event_dict()
        nb = _check_neighboring(neighboring) or self.neighboring
        if nb is not None:
            d["neighboring"] = nb
        return d

    def _event_dict(self):
        if self.kind == "compose":
            return {"compose": [c._event_dict() for c in self.children]}
        body = dict(self.params)
        if self.kind in _UNARY or len(self.children) == 1:
            body["event"] = self.children[0]._event_dict()
        return {self.kind: body}

    def to_json(self, neighboring: Any = None, **kw: Any) -> str:
        """The spec as JSON text (json.dumps keyword arguments accepted)."""
        kw.setdefault("allow_nan", False)
        return json.dumps(self.to_dict(neighboring), **kw)

    # ---- combinators as operators and methods ----
    def __add__(self, other):
        other = as_event(other)
        left = list(self.children) if self.kind == "compose" else [self]
        right = list(other.children) if other.kind == "compose" else [other]
        return compose(*(left + right))

    def __radd__(self, other):
        if other == 0:  # sum(events)
            return self
        return as_event(other) + self

    def __mul__(self, count):
        if isinstance(count, Event) or isinstance(count, bool):
            return NotImplemented
        return repeat(self, count)

    __rmul__ = __mul__

    def repeat(self, count: Any) -> "Event":
        """`count` runs of this event, composed (also ``event * count``)."""
        return repeat(self, count)

    def poisson(self, rate: Any) -> "Event":
        """This event on a Poisson subsample of rate `rate`."""
        return poisson(self, rate)

    def sample(self, n: Any, m: Any) -> "Event":
        """This event on m of n records drawn without replacement."""
        return sample(self, n, m)

    def with_neighboring(self, neighboring: Any) -> "Event":
        """A copy marked with the spec's neighbouring relation."""
        return Event(self.kind, self.params, self.children, neighboring)

    # ---- comparison and display ----
    def __eq__(self, other):
        return isinstance(other, Event) and self.to_dict() == other.to_dict()

    def __hash__(self):
        return hash(json.dumps(self.to_dict(), sort_keys=True))

    def __repr__(self):
        if self.kind == "compose":
            inner = ", ".join(repr(c) for c in self.children)
        else:
            parts = [repr(c) for c in self.children]
            parts += ["%s=%s" % (k, _short(v)) for k, v in self.params.items()]
            inner = ", ".join(parts)
        s = "%s(%s)" % (self.kind, inner)
        if self.neighboring:
            s += ".with_neighboring(%r)" % self.neighboring
        return s

    # ---- reading ----
    @classmethod
    def from_dict(cls, d: Any) -> "Event":
        """An Event from the JSON form of an event or spec (a dict)."""
        return from_dict(d)


def _short(v):
    if isinstance(v, list):
        if len(v) > 6:
            return "[%s, ... %d values]" % (", ".join(repr(x) for x in v[:3]), len(v))
        return repr(v)
    return repr(v)


# ---------------------------------------------------------------- leaves ---

def _leaf(kind, **params):
    return Event(kind, {k: _num(kind, k, v) for k, v in params.items() if v is not None})


def gaussian(sigma: Any, sensitivity: Any = None) -> Event:
    """The Gaussian mechanism: N(0, sigma^2) noise on a query of L2
    sensitivity `sensitivity` (default 1).  DP-SGD's noise multiplier is
    sigma with sensitivity 1 (the clipping norm)."""
    return _leaf("gaussian", sigma=sigma, sensitivity=sensitivity)


def laplace(scale: Any, sensitivity: Any = None) -> Event:
    """The Laplace mechanism: Laplace(scale) noise, L1 sensitivity (default 1)."""
    return _leaf("laplace", scale=scale, sensitivity=sensitivity)


def discrete_laplace(scale: Any, sensitivity: Any = None) -> Event:
    """Two-sided geometric noise, P(k) ~ exp(-|k|/scale); integer sensitivity."""
    return _leaf("discrete_laplace", scale=scale, sensitivity=sensitivity)


def discrete_gaussian(sigma: Any, sensitivity: Any = None, truncation: Any = None) -> Event:
    """Discrete Gaussian noise, P(k) ~ exp(-k^2/(2 sigma^2)); integer sensitivity.
    truncation T (an integer >= 0, default none): the noise conditioned on
    [-T, T] (dp_accounting's truncation_bound); part of the mass then has
    infinite privacy loss (docs/mechanisms.md, "Truncated discrete Gaussian")."""
    return _leaf("discrete_gaussian", sigma=sigma, sensitivity=sensitivity, truncation=truncation)


def randomized_response(epsilon: Optional[float] = None, k: Any = 2, p: Any = None) -> Event:
    """Randomized response over k buckets (default 2): the true bucket with
    probability p = e^eps / (e^eps + k - 1).  Give epsilon or p."""
    if (epsilon is None) == (p is None):
        raise InvalidSpecError('randomized_response: give exactly one of "epsilon" and "p"')
    kind = "randomized_response"
    params = {"epsilon": _num(kind, "epsilon", epsilon)} if p is None else {"p": _num(kind, "p", p)}
    kk = _num(kind, "k", k)
    if kk != 2:
        params["k"] = kk
    return Event(kind, params)


def pure(epsilon: float) -> Event:
    """A mechanism known only to be epsilon-DP."""
    return _leaf("pure", epsilon=epsilon)


def approx(epsilon: float, delta: float) -> Event:
    """A mechanism known only to be (epsilon, delta)-DP."""
    return _leaf("approx", epsilon=epsilon, delta=delta)


def zcdp(rho: Any, xi: Any = None) -> Event:
    """A mechanism known only to be (xi, rho)-zCDP: D_alpha <= xi + rho alpha
    for every alpha > 1 (Bun & Steinke 2016 Def 1.1; xi default 0, rho-zCDP).
    A Renyi bound: method rdp (and the rdp filter) only."""
    return _leaf("zcdp", rho=rho, xi=xi)


def gdp(mu: Any) -> Event:
    """A mechanism known only to be mu-GDP."""
    return _leaf("gdp", mu=mu)


def no_op() -> Event:
    """A step that reveals nothing (dp_accounting's NoOpDpEvent)."""
    return Event("no_op")


def non_private() -> Event:
    """A step with no privacy at all: eps = inf (NonPrivateDpEvent)."""
    return Event("non_private")


def privacy_loss(losses: Any, masses: Any) -> Event:
    """A mechanism given by its privacy loss distribution (remove direction):
    losses log(dP/dQ) with their masses under P; 1 - sum(masses) is at +inf."""
    loss = _array("privacy_loss", "loss", losses)
    mass = _array("privacy_loss", "mass", masses)
    return Event("privacy_loss", {"loss": loss, "mass": mass})


def privacy_profile(epsilons: Any, deltas: Any) -> Event:
    """A mechanism known to be (epsilons[i], deltas[i])-DP for every i."""
    return Event("privacy_profile", {"epsilon": _array("privacy_profile", "epsilon", epsilons),
                                     "delta": _array("privacy_profile", "delta", deltas)})


def tradeoff_curve(alphas: Any, betas: Any) -> Event:
    """A mechanism known to be f-DP for every ordered pair of neighbours,
    f the lower convex envelope of the points (alphas[i], betas[i]) (type I,
    type II errors; completed by (0, beta at the smallest alpha) and (1, 0)).
    Accounted as max{f, f^-1} (GDP Prop 2.1; docs/fdp.md §11).  Points
    sampled on a curved tradeoff function stand for its chords (above it)."""
    a = _array("tradeoff_curve", "alpha", alphas)
    b = _array("tradeoff_curve", "beta", betas)
    if len(a) != len(b):
        raise InvalidSpecError("tradeoff_curve: alpha has %d entries and beta %d: they must have the same length"
                               % (len(a), len(b)))
    return Event("tradeoff_curve", {"points": [[x, y] for x, y in zip(a, b)]})


def mixture_of_gaussians(sigma: Any, sensitivities: Any, probabilities: Any) -> Event:
    """A Gaussian mechanism whose sensitivity is c_i with probability p_i
    (dp_accounting's MixtureOfGaussiansDpEvent)."""
    return Event("mixture_of_gaussians", {
        "sigma": _num("mixture_of_gaussians", "sigma", sigma),
        "sensitivities": _array("mixture_of_gaussians", "sensitivities", sensitivities),
        "probabilities": _array("mixture_of_gaussians", "probabilities", probabilities)})


def exponential_mechanism(epsilon: float) -> Event:
    """The exponential mechanism with privacy parameter epsilon (candidates
    weighted by exp(epsilon u / (2 Delta))), accounted as an epsilon-bounded
    range mechanism (dp_accounting's ExponentialMechanismDpEvent)."""
    return _leaf("exponential_mechanism", epsilon=epsilon)


def permute_and_flip(epsilon: float) -> Event:
    """Permute-and-flip (McKenna & Sheldon 2020): epsilon-DP, accounted as
    pure epsilon (dp_accounting's PermuteAndFlipDpEvent)."""
    return _leaf("permute_and_flip", epsilon=epsilon)


def report_noisy_max(epsilon: float, noise: Any) -> Event:
    """Report-noisy-max with privacy parameter epsilon (not the noise scale)
    and noise "gumbel" (the exponential mechanism), "laplace" (epsilon-DP) or
    "exponential" (permute-and-flip)."""
    if not isinstance(noise, str) or noise not in RNM_NOISES:
        raise InvalidSpecError('report_noisy_max: noise must be "gumbel", "laplace" or "exponential", got %s'
                               % _show(noise))
    return Event("report_noisy_max", {"epsilon": _num("report_noisy_max", "epsilon", epsilon), "noise": noise})


def tree_aggregation(sigma: Any, steps: Any, sensitivity: Any = None) -> Event:
    """DP-FTRL's tree aggregation over `steps` steps with N(0, sigma^2) noise
    on every node, each record in at most one step: the Gaussian mechanism
    with mu = sqrt(ceil(log2(steps + 1))) sensitivity / sigma
    (dp_accounting's SingleEpochTreeAggregationDpEvent)."""
    return _leaf("tree_aggregation", sigma=sigma, steps=steps, sensitivity=sensitivity)


def laplace_svt(scale: Any, k: Any, c: Any = None) -> Event:
    """The sparse vector technique with Laplace noise of scale `scale`: at most
    c (default 1) "above threshold" answers among at most k queries (a Renyi
    bound: method rdp only)."""
    return _leaf("laplace_svt", scale=scale, k=k, c=c)


def gaussian_svt(sigma: Any, k: Any, c: Any = None) -> Event:
    """The sparse vector technique with Gaussian noise of standard deviation
    sigma (a Renyi bound: method rdp only)."""
    return _leaf("gaussian_svt", sigma=sigma, k=k, c=c)


def dpsgd(dataset_size: Any, batch_size: Any, noise: Any, *, epochs: Any = None, steps: Any = None,
          sampling: str = 'poisson') -> Event:
    """A DP-SGD run as one event (docs/spec.md, the dpsgd leaf): exactly one
    of epochs (T = ceil(epochs N / B)) and steps; noise the noise multiplier;
    sampling "poisson" (add_remove), "without_replacement" (replace) or
    "random_allocation" (add_remove; whole epochs of ceil(N / B) steps,
    docs/training.md); the event is marked with its neighbouring relation.
    "?" is allowed for noise, steps or epochs.  Shuffling has no single pair
    (dpacct.dpsgd_epsilon(..., sampling="shuffle") gives its bracket)."""
    k = "dpsgd"
    if (epochs is None) == (steps is None):
        raise InvalidSpecError("dpsgd: give exactly one of epochs and steps")
    if sampling not in ("poisson", "without_replacement", "random_allocation"):
        raise InvalidSpecError('dpsgd: sampling must be "poisson", "without_replacement" or "random_allocation", '
                               'got %s%s' % (_show(sampling), " (shuffling has no single pair: "
                                             "dpacct.dpsgd_epsilon(sampling=\"shuffle\") gives its bracket)"
                                             if sampling == "shuffle" else ""))
    params = {"dataset_size": _num(k, "dataset_size", dataset_size, placeholder=False),
              "batch_size": _num(k, "batch_size", batch_size, placeholder=False)}
    if epochs is not None:
        params["epochs"] = _num(k, "epochs", epochs)
    else:
        params["steps"] = _num(k, "steps", steps)
    params["noise"] = _num(k, "noise", noise)
    params["sampling"] = sampling
    return Event(k, params, (), "replace" if sampling == "without_replacement" else "add_remove")


def bandmf(coefficients: Any, noise_multiplier: Any, iterations: Any, *, rate: Any = None, epochs: Any = None,
           separation: Any = None) -> Event:
    """Banded matrix factorization (DP-BandMF / DP-FTRL; docs/bandmf.md, the
    bandmf leaf of docs/spec.md): `iterations` steps releasing C X + Z, C the
    lower-triangular Toeplitz strategy with first column `coefficients`
    (c0 > 0, then any signs; b = len(coefficients) bands), X the gradients
    clipped to norm 1, Z Gaussian of standard deviation noise_multiplier
    (add/remove neighbours).  Exactly one participation:

    - rate=q: cyclic Poisson sampling over b groups (Choquette-Choo et al.
      2023): ceil(n / b) Poisson(q)-subsampled Gaussians of sensitivity
      ||c||_2 (jax_privacy's amplified_bandmf_event with the given C in
      place of its max-column-norm-1 normalization); needs b <= n;
    - epochs=k (separation=m >= b, default b): at most k participations at
      least m apart; one Gaussian of sensitivity sqrt(sum of the squared
      norms of the columns 0, m, 2m, ..., truncated at step n).

    "?" is allowed for noise_multiplier and rate (dpacct.calibrate)."""
    k = "bandmf"
    if (rate is None) == (epochs is None):
        raise InvalidSpecError("bandmf: give exactly one of rate (cyclic Poisson) and epochs (fixed participation)")
    if rate is not None and separation is not None:
        raise InvalidSpecError("bandmf: separation goes with epochs (fixed participation)")
    if rate is not None:
        part = {"poisson": {"rate": _num(k, "rate", rate)}}
    else:
        fixed = {"epochs": _num(k, "epochs", epochs, placeholder=False)}
        if separation is not None:
            fixed["separation"] = _num(k, "separation", separation, placeholder=False)
        part = {"fixed": fixed}
    return Event(k, {"coefficients": _array(k, "coefficients", coefficients),
                     "noise_multiplier": _num(k, "noise_multiplier", noise_multiplier),
                     "iterations": _num(k, "iterations", iterations, placeholder=False),
                     "participation": part}, (), "add_remove")


# ----------------------------------------------------------- combinators ---

def as_event(x: Any) -> Event:
    """An Event from an Event, a dict / JSON text of an event, or a
    dp_accounting DpEvent (duck-typed by class name)."""
    if isinstance(x, Event):
        return x
    if isinstance(x, dict):
        return from_dict(x)
    if isinstance(x, (str, bytes)):
        return from_json(x)
    from ._dp_events import is_dp_event, from_dp_event
    if is_dp_event(x):
        return from_dp_event(x)
    raise InvalidSpecError("expected an event (dpacct.events.Event, a dict, JSON text or a "
                           "dp_accounting DpEvent), got %s" % _show(x))


def compose(*events: Any) -> Event:
    """Events run one after another on the same data: compose(a, b, c) or
    compose([a, b, c])."""
    if len(events) == 1 and not isinstance(events[0], (Event, dict, str, bytes)) \
            and hasattr(events[0], "__iter__"):
        events = tuple(events[0])
    children = [as_event(e) for e in events]
    if not children:
        raise InvalidSpecError("compose: needs at least one child event")
    return Event("compose", {}, children, _merge_neighboring(children, "compose"))


def repeat(event: Any, count: Any) -> Event:
    """`count` runs of the same event, composed (also ``event * count``)."""
    ev = as_event(event)
    return Event("repeat", {"count": _num("repeat", "count", count)}, [ev], ev.neighboring)


def poisson(event: Any, rate: Any) -> Event:
    """The event on a Poisson subsample (each record kept with probability
    `rate`); add_remove neighbouring."""
    ev = as_event(event)
    return Event("poisson", {"rate": _num("poisson", "rate", rate)}, [ev], ev.neighboring)


def sample(event: Any, n: Any, m: Any) -> Event:
    """The event on a uniformly random subset of m of the n records
    (sampling without replacement; the spec must use "replace" neighbouring,
    and the event's parameters describe it under replace-one)."""
    ev = as_event(event)
    return Event("sample", {"n": _num("sample", "n", n), "m": _num("sample", "m", m)}, [ev],
                 ev.neighboring)


def sample_with_replacement(event: Any, n: Any, m: Any) -> Event:
    """A batch of m records drawn with replacement from n (a gaussian or gdp
    event; add_remove neighbouring)."""
    ev = as_event(event)
    return Event("sample_with_replacement", {"n": _num("sample_with_replacement", "n", n),
                                             "m": _num("sample_with_replacement", "m", m)},
                 [ev], ev.neighboring)


def truncated_poisson(event: Any, rate: Any, max_batch: Any, n: Any) -> Event:
    """Poisson subsampling with rate `rate` of n records (n counts the record
    accounted), a batch of more than max_batch records cut to a random subset
    of max_batch; the event (gaussian or gdp) is the sum over the batch
    (dp_accounting's TruncatedSubsampledGaussianDpEvent; add_remove only)."""
    ev = as_event(event)
    k = "truncated_poisson"
    return Event(k, {"rate": _num(k, "rate", rate), "max_batch": _num(k, "max_batch", max_batch),
                     "n": _num(k, "n", n)}, [ev], ev.neighboring)


def random_allocation(event: Any, steps: Any, selected: Any = 1) -> Event:
    """One epoch of `steps` steps in which the accounted record takes part in
    exactly `selected` of them, chosen uniformly at random (selected=1: balls
    in bins), each step running `event` on its batch; add_remove
    neighbouring; epochs by repeat (docs/sampling.md)."""
    ev = as_event(event)
    k = "random_allocation"
    return Event(k, {"steps": _num(k, "steps", steps), "selected": _num(k, "selected", selected)}, [ev],
                 ev.neighboring)


def repeat_and_select(event: Any, mean: Any, shape: Any = None) -> Event:
    """The event run K times (K random with mean `mean` >= 1) and only the best
    run released (Papernot & Steinke 2022): K truncated negative binomial with
    `shape` (1: geometric, 0: logarithmic), or Poisson when shape is None or
    inf (dp_accounting's shape=inf).  A Renyi bound: method rdp only."""
    ev = as_event(event)
    k = "repeat_and_select"
    params = {"mean": _num(k, "mean", mean)}
    if shape is not None and not (isinstance(shape, numbers.Real) and not isinstance(shape, bool)
                                  and math.isinf(shape) and shape > 0):
        params["shape"] = _num(k, "shape", shape)
    return Event(k, params, [ev], ev.neighboring)


# ---------------------------------------------------------------- reading ---

def check_nesting(obj: Any, limit: int = MAX_DEPTH) -> None:
    """Refuse (InvalidSpecError) a dict/list structure nested deeper than a
    spec of `limit` events can be, before anything recursive or quadratic
    touches it.  An event level is two containers ({"kind": {"event": ...}}
    or {"compose": [...]}), plus one for a parameter array.  Iterative:
    a dict nested 20,000 levels is refused in microseconds per level."""
    max_containers = 2 * limit + 1
    stack = [(obj, 1)]
    seen = 0
    while stack:
        x, d = stack.pop()
        if isinstance(x, Event):
            d += 2 * x.depth - 1
            if d > max_containers:
                raise InvalidSpecError("/: events nested deeper than %d levels (the library's limit)"
                                       % limit)
            continue
        if isinstance(x, dict):
            vals = x.values()
        elif isinstance(x, (list, tuple)):
            vals = x
        else:
            continue
        if d > max_containers:
            raise InvalidSpecError("/: the spec nests objects and arrays %d+ levels deep: events "
                                   "nested deeper than %d levels (the library's limit)" % (d, limit))
        seen += 1
        if seen > 10_000_000:
            raise InvalidSpecError("/: the spec has more than 10^7 objects and arrays")
        for v in vals:
            if isinstance(v, (dict, list, tuple, Event)):
                stack.append((v, d + 1))

def from_dict(d: Any, _path: str = "", _top: bool = True) -> Event:
    """An Event from the JSON form of an event or spec (a dict)."""
    if isinstance(d, Event):
        return d
    if _top:
        check_nesting(d)
    if not isinstance(d, dict):
        raise InvalidSpecError("%s: expected an event object, got %s" % (_path or "/", _show(d)))
    nb = None
    keys = list(d.keys())
    if _top and "neighboring" in d:
        nb = d["neighboring"]
        keys.remove("neighboring")
    if len(keys) != 1:
        raise InvalidSpecError("%s: expected exactly one event key, found %d%s" % (
            _path or "/", len(keys), (": " + ", ".join('"%s"' % k for k in keys)) if keys else ""))
    kind = keys[0]
    body = d[kind]
    here = _path + "/" + kind
    if kind == "compose":
        if isinstance(body, dict) or isinstance(body, (str, bytes)) or not hasattr(body, "__iter__"):
            raise InvalidSpecError("%s: expected an array of events, got %s" % (here, _show(body)))
        children = [from_dict(c, "%s/%d" % (here, i), False) for i, c in enumerate(body)]
        return Event("compose", {}, children, nb)
    if not isinstance(body, dict):
        raise InvalidSpecError("%s: expected an object, got %s" % (here, _show(body)))
    params, children = {}, []
    for k, v in body.items():
        if k == "event":
            children.append(from_dict(v, here + "/event", False))
        elif isinstance(v, (list, tuple)) or (hasattr(v, "tolist") and getattr(v, "ndim", 0) > 0):
            params[k] = _array(here, k, v)
        elif isinstance(v, str):
            params[k] = v  # "?" (or an error the library will name)
        elif isinstance(v, dict) and kind == "bandmf" and k == "participation":
            params[k] = {pk: ({kk: vv if isinstance(vv, str) else _num(here + "/participation/" + pk, kk, vv)
                               for kk, vv in pv.items()} if isinstance(pv, dict) else pv)
                         for pk, pv in v.items()}  # checked by the library, with paths
        else:
            params[k] = _num(here, k, v)
    return Event(kind, params, children, nb)


def from_json(text: Union[str, bytes]) -> Event:
    """An Event from JSON text (of an event or a spec)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8")
    try:
        d = json.loads(text)
    except ValueError as e:
        raise InvalidSpecError("JSON syntax error: %s" % e) from None
    except RecursionError:  # Python's parser recurses per level
        raise InvalidSpecError("/: events nested deeper than %d levels (the library's limit)" % MAX_DEPTH) from None
    return from_dict(d)
