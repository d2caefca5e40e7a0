# dpacct Python binding: privacy filters.
# SPDX-License-Identifier: GPL-3.0-or-later
"""dpacct.Filter: an online privacy budget for adaptively chosen queries
(include/dpacct/filter.h; docs/filters.md).

    >>> import dpacct
    >>> from dpacct import events as ev
    >>> f = dpacct.Filter("gdp-residue", mu=1)
    >>> f.request(ev.gaussian(2)).accepted
    True

A filter decides, before each query runs, whether running it keeps the
whole interaction within the budget against every adaptive analyst
(Regehr et al., "Privacy filters and residues").  An accepted query is
charged; a rejected one is not.  request() returns a FilterDecision
(accepted or rejected: both are normal outcomes); a query the filter
cannot account raises UnsupportedError, a malformed one InvalidSpecError,
and the filter is then unchanged.

Filters and their budgets (keyword arguments, or the JSON configuration as
a dict or text): "pure" (epsilon), "basic" (epsilon, delta), "rdp" (rho,
order; lists for a vector of orders), "zcdp" (rho), "gdp" (mu),
"gdp-residue" (mu, optional delta: the (mu, delta)-GDP budget), "natural"
(mu or delta), "natural-approx" (epsilon, delta, allow_degraded=True,
max_queries), "additive-profile" (epsilon, delta, max_queries: RF Alg 3) and
"residue" (budget={"tradeoff": {"eps_delta": [[eps, delta], ...]}} or
{"points": [[alpha, beta], ...]} or {"mu": M, "delta": D}: the general
residue filter, docs/filters.md); every filter but additive-profile also
takes report_delta (default 1e-6).
"""
import ctypes
import json
from typing import Any, Dict, Optional, Union

from . import _lib
from ._errors import InvalidInputError
from ._results import _Frozen

__all__ = ["Filter", "FilterDecision", "filter_config", "FILTERS"]

FILTERS = ("pure", "basic", "rdp", "zcdp", "gdp", "gdp-residue", "residue", "natural", "natural-approx",
           "additive-profile")


def filter_config(config: Any = None, **budget: Any) -> str:
    """The JSON configuration text of a filter: config is a filter name
    ("gdp-residue") with the budget as keywords (mu=1), a dict
    ({"filter": "gdp-residue", "mu": 1}), JSON text of one, or a Filter
    (its configuration)."""
    if isinstance(config, Filter):
        if budget:
            raise InvalidInputError("filter: a Filter takes no budget keywords", status=1)
        return config.config_json
    if isinstance(config, bytes):
        config = config.decode("utf-8")
    if isinstance(config, str) and config.lstrip().startswith("{"):
        if budget:
            raise InvalidInputError("filter: give the configuration as JSON or as keywords, not both",
                                    status=1)
        _lib.c_string(config, "filter")
        return config
    if isinstance(config, dict):
        if budget:
            raise InvalidInputError("filter: give the configuration as a dict or as keywords, not both",
                                    status=1)
        d = dict(config)
    elif isinstance(config, str):
        d = {"filter": config}
        d.update(budget)
    elif config is None:
        raise InvalidInputError("filter: give the filter's name (%s) and its budget" % ", ".join(FILTERS),
                                status=1)
    else:
        raise TypeError("filter: expected a name, a dict, JSON text or a Filter, got %s"
                        % type(config).__name__)
    from .accountant import _jsonable
    text = json.dumps(_jsonable(d, ""), allow_nan=False)
    _lib.c_string(text, "filter")
    return text


def _take(ptr) -> str:
    return _lib.take_string(ptr)


class FilterDecision(_Frozen):
    """A filter's answer to one query: accepted (True: charged; False: the
    state is unchanged), reason (why rejected, or a remark on the charge;
    "" if none) and remaining (the budget left afterwards, a dict in the
    filter's terms).  bool(decision) is accepted."""

    __slots__ = ("accepted", "reason", "remaining")

    def __init__(self, **kw: Any) -> None:
        self._set(**kw)

    def __bool__(self) -> bool:
        return bool(self.accepted)

    def __repr__(self) -> str:
        s = "FilterDecision(accepted=%r" % self.accepted
        if self.reason:
            s += ", reason=%r" % self.reason
        return s + ")"


class Filter:
    """A privacy filter with its budget: Filter("gdp-residue", mu=1),
    Filter({"filter": "basic", "epsilon": 1, "delta": 1e-6}) or
    Filter('{"filter": "zcdp", "rho": 0.5}').

    InvalidInputError (with the JSON path) for a configuration out of its
    domain.  Filters pickle and deep-copy with their state (what has been
    spent); copy() also gives an independent filter."""

    def __init__(self, config: Any = None, **budget: Any) -> None:
        self._p = None
        lib = _lib.load()
        text = filter_config(config, **budget)
        err = _lib.new_error()
        with _lib.LOCK:
            p = lib.dpa_filter_new_json(text.encode("utf-8"), ctypes.byref(err))
        if not p:
            _lib.raise_error(1, err)
        self._p = p

    @classmethod
    def _wrap(cls, p) -> "Filter":
        obj = cls.__new__(cls)
        obj._p = p
        return obj

    def __del__(self):
        p = getattr(self, "_p", None)
        if p:
            try:
                _lib.load().dpa_filter_free(p)
            except Exception:  # interpreter shutdown
                pass
            self._p = None

    # ---- description ----
    @property
    def name(self) -> str:
        """The filter's name ("gdp-residue", ...)."""
        return _lib.text(_lib.load().dpa_filter_name(self._p))

    @property
    def config_json(self) -> str:
        """The canonical configuration (JSON text)."""
        return _take(_lib.load().dpa_filter_config_json(self._p))

    @property
    def config(self) -> Dict[str, Any]:
        """The canonical configuration (a dict)."""
        return json.loads(self.config_json)

    @property
    def state(self) -> Dict[str, Any]:
        """What has been spent, as a dict that set_state() restores exactly."""
        with _lib.LOCK:
            return json.loads(_take(_lib.load().dpa_filter_state_json(self._p)))

    def set_state(self, state: Union[Dict[str, Any], str]) -> None:
        """Restore a state taken from a filter of the same configuration
        (InvalidInputError, the filter unchanged, if it does not fit)."""
        text = state if isinstance(state, str) else json.dumps(state)
        err = _lib.new_error()
        with _lib.LOCK:
            st = _lib.load().dpa_filter_set_state_json(self._p, _lib.c_string(text, "state"),
                                                       ctypes.byref(err))
        _lib.check(st, err)

    @property
    def remaining(self) -> Dict[str, Any]:
        """The remaining budget in the filter's terms ({"mu": 0.86}, ...),
        with "as_epsilon_delta" where meaningful."""
        with _lib.LOCK:
            return json.loads(_take(_lib.load().dpa_filter_remaining_json(self._p)))

    @property
    def exhausted(self) -> bool:
        """True when only free queries can still be accepted."""
        return bool(_lib.load().dpa_filter_exhausted(self._p))

    def __repr__(self) -> str:
        return "<dpacct.Filter %s remaining=%s>" % (self.name, json.dumps(self.remaining))

    # ---- copies ----
    def copy(self) -> "Filter":
        """An independent filter with the same configuration and state."""
        err = _lib.new_error()
        with _lib.LOCK:
            p = _lib.load().dpa_filter_copy(self._p, ctypes.byref(err))
        if not p:
            _lib.raise_error(3, err)
        return Filter._wrap(p)

    def __copy__(self) -> "Filter":
        return self.copy()

    def __deepcopy__(self, memo) -> "Filter":
        return self.copy()

    def __reduce__(self):
        return (_restore_filter, (self.config_json, json.dumps(self.state)))

    # ---- requests ----
    def request(self, spec: Any, *, neighboring: Any = None) -> FilterDecision:
        """Decide on one query (a spec: an Event, a dict, JSON text or a
        DpEvent) and charge it if accepted.  Returns a FilterDecision.
        Raises UnsupportedError for a query this filter cannot account (e.g.
        an approx query under "gdp"), InvalidSpecError for a malformed spec;
        the state is then unchanged."""
        from .accountant import _parse_spec, spec_json
        sp = _parse_spec(spec_json(spec, neighboring))
        lib = _lib.load()
        out = _lib.dpa_filter_decision()
        err = _lib.new_error()
        try:
            with _lib.LOCK:
                st = lib.dpa_filter_request(self._p, sp, ctypes.byref(out), ctypes.byref(err))
        finally:
            with _lib.LOCK:
                lib.dpa_spec_free(sp)
        _lib.check(st, err)
        return FilterDecision(accepted=bool(out.accepted), reason=_lib.text(out.reason),
                              remaining=self.remaining)


def _restore_filter(config: str, state: str) -> Filter:
    f = Filter(config)
    f.set_state(state)
    return f


for _c in (Filter, FilterDecision):
    _c.__module__ = "dpacct"
del _c
