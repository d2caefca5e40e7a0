# dpacct Python binding: accountants, calibration, Renyi divergences.
# SPDX-License-Identifier: GPL-3.0-or-later
"""Accountant(spec).epsilon(delta) and friends over libdpacct (ctypes)."""
import ctypes
import json
import math
import numbers

from . import _lib
from ._errors import InvalidInputError, InvalidSpecError, LibraryBugError
from ._results import (EpsilonResult, DeltaResult, Profile, EpsilonCurve, RenyiCurve, GdpMu, RenyiValue,
                       RenyiResult, Calibration)
from typing import Any, Dict, List, Optional, Tuple, Union
from . import events as _events

try:  # optional
    import numpy as _np
except ImportError:  # pragma: no cover - exercised where numpy is absent
    _np = None

__all__ = ["Accountant", "calibrate", "epsilon_counts", "renyi", "renyi_curve", "spec_json", "canonical_spec", "METHODS"]

METHODS = ("auto", "pld", "exact", "phi", "rdp", "gdp", "clt")
_METHOD_NAMES = {i: n for i, n in enumerate(METHODS)}
_DIRECTIONS = {0: "both", 1: "remove", 2: "add"}
_SOURCES = {0: "method", 1: "largest_finite_loss", 2: "dp_domination", 3: "chernoff", 4: "rdp"}
_GDP_MU_SOURCES = {0: "none", 1: "gaussian", 2: "bounded_loss", 3: "infinite"}
_UNCERTIFIED_METHODS = ("phi", "gdp")  # accountant.h: their results carry certified = 0


# ------------------------------------------------------------ spec text ---

def _jsonable(x, path):
    """x with numpy values, tuples and Events turned into JSON types; a
    non-finite number is an InvalidSpecError naming its path."""
    if isinstance(x, _events.Event):
        return x.to_dict()
    if isinstance(x, dict):
        out = {}
        for k, v in x.items():
            if not isinstance(k, str):
                raise InvalidSpecError("%s: object keys must be strings, got %r" % (path or "/", k))
            out[k] = _jsonable(v, "%s/%s" % (path, k))
        return out
    if isinstance(x, (str, bool)) or x is None:
        return x
    if _np is not None and isinstance(x, _np.ndarray):
        x = x.tolist()
    if isinstance(x, (list, tuple)):
        return [_jsonable(v, "%s/%d" % (path, i)) for i, v in enumerate(x)]
    if hasattr(x, "item") and hasattr(x, "dtype"):  # numpy scalar
        x = x.item()
    if isinstance(x, numbers.Integral):
        return int(x)
    if isinstance(x, numbers.Real):
        v = float(x)
        if not math.isfinite(v):
            raise InvalidSpecError("%s: must be finite, got %r" % (path or "/", v))
        return v
    from ._dp_events import is_dp_event, from_dp_event
    if is_dp_event(x):
        return from_dp_event(x).to_dict()
    raise InvalidSpecError("%s: cannot be written as JSON: %s" % (path or "/", type(x).__name__))


def _no_duplicates(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise InvalidSpecError("JSON syntax error: duplicate object key %r" % k)
        d[k] = v
    return d


def spec_json(spec: Any, neighboring: Any = None) -> str:
    """The JSON text the library is given for `spec`: a dict (the JSON form,
    numpy values allowed), JSON text (passed on unchanged unless
    `neighboring` is given), an events.Event, or a dp_accounting DpEvent."""
    from ._dp_events import is_dp_event, from_dp_event, neighboring_from, replace_one_sensitivity
    # dp_accounting's REPLACE_SPECIAL is the library's "replace_special" (docs/spec.md)
    nb = neighboring_from(neighboring)
    if isinstance(spec, bytes):
        spec = spec.decode("utf-8")
    if isinstance(spec, str):
        if "\0" in spec:
            raise InvalidSpecError("spec text contains a NUL character at offset %d (the library would "
                                   "read only the text before it)" % spec.index("\0"))
        if nb is None:
            return spec
        try:
            spec = json.loads(spec, object_pairs_hook=_no_duplicates)
        except ValueError as e:
            if isinstance(e, InvalidSpecError):
                raise
            raise InvalidSpecError("JSON syntax error: %s" % e) from None
        except RecursionError:
            raise InvalidSpecError("/: events nested deeper than %d levels (the library's limit)"
                                   % _events.MAX_DEPTH) from None
    if is_dp_event(spec):
        try:
            spec = from_dp_event(spec)
            if nb == "replace":  # a DpEvent's sums move by 2C under replace-one
                spec = replace_one_sensitivity(spec)
        except RecursionError:
            raise InvalidSpecError("the DpEvent is nested deeper than the library's limit of %d events"
                                   % _events.MAX_DEPTH) from None
    if isinstance(spec, dict):
        _events.check_nesting(spec)
    if isinstance(spec, _events.Event):
        d = spec.to_dict()
    elif isinstance(spec, dict):
        d = _jsonable(spec, "")
    else:
        raise InvalidSpecError("expected a spec: a dict, JSON text, a dpacct.events.Event or a "
                               "dp_accounting DpEvent, got %s" % type(spec).__name__)
    if nb is not None:
        if d.get("neighboring", nb) != nb:
            raise InvalidSpecError('/neighboring: the spec says "%s" but neighboring=%r was given'
                                   % (d["neighboring"], nb))
        d = dict(d)
        d["neighboring"] = nb
    return json.dumps(d, allow_nan=False)


def _parse_spec(text):
    lib = _lib.load()
    err = _lib.new_error()
    with _lib.LOCK:
        p = lib.dpa_spec_from_json(_lib.c_string(text, "spec"), ctypes.byref(err))
    if not p:
        _lib.raise_error(1, err, InvalidSpecError)
    return p


def _spec_to_json(p):
    lib = _lib.load()
    with _lib.LOCK:
        return _lib.take_string(lib.dpa_spec_to_json(p))


def canonical_spec(spec: Any, neighboring: Any = None) -> str:
    """The library's canonical JSON of a spec (every default written, numbers
    as %.17g); raises InvalidSpecError with the JSON path if it is invalid."""
    return _on_spec(spec, neighboring, _spec_to_json)


# -------------------------------------------------------------- options ---

def _options(method, accuracy=None, delta_abs=None, grid_step=None, max_grid=None, threads=None,
             rdp_conversion=None):
    lib = _lib.load()
    opt = _lib.dpa_options()
    lib.dpa_options_init(ctypes.byref(opt))
    if method is not None:
        m = ctypes.c_int()
        err = _lib.new_error()
        name = str(method)
        if lib.dpa_method_parse(name.encode(), ctypes.byref(m), ctypes.byref(err)) != 0:
            raise InvalidInputError("method: must be one of %s, got %r" % (", ".join(METHODS), method),
                                    status=1)
        opt.method = m.value
    if accuracy is not None:
        opt.accuracy = _real(accuracy, "accuracy")
    if delta_abs is not None:
        opt.delta_abs = _real(delta_abs, "delta_abs")
    if grid_step is not None:
        opt.grid_step = _real(grid_step, "grid_step")
    if max_grid is not None:
        opt.max_grid = int_in(max_grid, "max_grid", MAX_GRID_MIN, MAX_GRID_MAX)
    if threads is not None:
        opt.threads = int_in(threads, "threads", 0, THREADS_MAX)
    if rdp_conversion is not None:
        c = ctypes.c_int()
        err = _lib.new_error()
        if lib.dpa_rdp_conv_parse(str(rdp_conversion).encode(), ctypes.byref(c), ctypes.byref(err)) != 0:
            raise InvalidInputError("rdp_conversion: must be optimal, improved or classical, got %r"
                                    % (rdp_conversion,), status=1)
        opt.rdp_conversion = c.value
    return opt


def _options_dict(opt):
    return {"method": _METHOD_NAMES.get(opt.method), "accuracy": opt.accuracy,
            "delta_abs": opt.delta_abs, "grid_step": opt.grid_step, "max_grid": opt.max_grid,
            "threads": opt.threads,
            "rdp_conversion": _lib.text(_lib.load().dpa_rdp_conv_name(opt.rdp_conversion))}


def _real(x, name):
    if hasattr(x, "item") and hasattr(x, "dtype") and getattr(x, "ndim", 0) == 0:
        x = x.item()
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise TypeError("%s: expected a real number, got %s" % (name, type(x).__name__))
    try:
        return float(x)
    except OverflowError:  # an int beyond the doubles
        raise InvalidInputError("%s=%d: too large for a double" % (name, x), status=1) from None


# Domains of dpa_options' integer fields (accountant.h), checked here before
# ctypes would silently cut a Python int to the C type's width.
MAX_GRID_MIN, MAX_GRID_MAX = 1 << 10, 1 << 26
THREADS_MAX = 64


def int_in(x, name, lo, hi):
    """x as an int in [lo, hi]: TypeError for a non-integer, InvalidInputError
    (naming ``name=``) outside the range."""
    if hasattr(x, "item") and hasattr(x, "dtype") and getattr(x, "ndim", 0) == 0:
        x = x.item()
    if isinstance(x, bool) or not isinstance(x, numbers.Integral):
        raise TypeError("%s=: expected an integer, got %s" % (name, type(x).__name__))
    x = int(x)
    if not lo <= x <= hi:
        raise InvalidInputError("%s=%d: must be an integer in [%d, %d]" % (name, x, lo, hi), status=1)
    return x


def _is_scalar(x):
    """Numbers, numpy scalars, and anything not iterable (left to _real to refuse)."""
    if isinstance(x, (numbers.Number, str, bytes)):
        return True
    if hasattr(x, "dtype"):
        return getattr(x, "ndim", 1) == 0
    return not hasattr(x, "__iter__")


# -------------------------------------------------------------- results ---

def _result(cls, query, at, r):
    """A Result from a dpa_result, checked like the CLI checks it."""
    eps_query = query == "epsilon"

    def bound_ok(x):
        return math.isfinite(x) or (eps_query and x == math.inf)

    if not (bound_ok(r.upper) and bound_ok(r.lower) and bound_ok(r.upper_remove)
            and bound_ok(r.upper_add)):
        raise LibraryBugError("the library returned an invalid bound (%r, %r); this is a bug, "
                              "please report it" % (r.lower, r.upper))
    if not r.lower <= r.upper:
        raise LibraryBugError("the library returned a lower bound above the upper bound")
    method = _METHOD_NAMES.get(r.method)
    if method in (None, "auto") or r.binding not in _DIRECTIONS or r.certified not in (0, 1):
        raise LibraryBugError("the library returned a result without method, direction or "
                              "certification flag")
    return cls(query=query, at=at, upper=r.upper, lower=r.lower, method=method,
               certified=bool(r.certified), binding=_DIRECTIONS[r.binding],
               upper_remove=r.upper_remove, upper_add=r.upper_add, grid_step=r.grid_step,
               grid_size=int(r.grid_size), truncated_mass=r.truncated_mass,
               roundoff=r.roundoff, accuracy_met=bool(r.accuracy_met),
               upper_source=_SOURCES.get(r.upper_source, str(r.upper_source)),
               order=None if math.isnan(r.order) else r.order, note=_lib.text(r.note))


def _doubles_in(values, name):
    """(ctypes array or numpy array, keepalive, shape, n) of finite-checked doubles."""
    if _np is not None:
        try:
            a = _np.ascontiguousarray(_np.asarray(values, dtype=_np.float64))
        except (TypeError, ValueError) as e:
            raise TypeError("%s: expected numbers, %s" % (name, e)) from None
        shape = a.shape
        flat = a.reshape(-1)
        return flat, flat.ctypes.data_as(_lib.c_double_p), shape, flat.size
    vals = [_real(v, name) for v in values]
    arr = (ctypes.c_double * max(1, len(vals)))(*vals)
    return arr, ctypes.cast(arr, _lib.c_double_p), (len(vals),), len(vals)


def _doubles_out(n):
    if _np is not None:
        a = _np.empty(n, dtype=_np.float64)
        return a, a.ctypes.data_as(_lib.c_double_p)
    arr = (ctypes.c_double * max(1, n))()
    return arr, ctypes.cast(arr, _lib.c_double_p)


def _shaped(buf, shape, n):
    if _np is not None:
        return buf.reshape(shape)
    return [buf[i] for i in range(n)]


# ----------------------------------------------------------- Accountant ---

class Accountant:
    """An accountant for one spec, built once and asked many queries.

    spec: a dict in the JSON form of docs/spec.md, JSON text, an
    events.Event, or a dp_accounting DpEvent (converted by from_dp_event).
    method: "auto" (the tightest certified method that applies), "exact",
    "pld", "phi", "rdp", "gdp" or "clt" (accountant.h says what each does).
    neighboring: "add_remove" or "replace" (also a dp_accounting
    NeighboringRelation), overriding the spec's default.  Options (see
    dpa_options in accountant.h): accuracy (default 1e-4), delta_abs (1e-14),
    grid_step (0: automatic), max_grid (4194304), threads (0: up to 4),
    rdp_conversion ("optimal", "improved", "classical").

    Queries return certified brackets (Result objects): claim `.upper`.  An
    accountant may reuse grids an earlier query built, so the same query on
    a fresh accountant can give a slightly different (equally certified)
    bracket.  Calls are serialized process-wide (FFTW's planner is global).
    Use as a context manager or call close() to free the C objects early.
    """

    def __init__(self, spec: Any, method: str = "auto", *, neighboring: Any = None,
                 accuracy: Optional[float] = None, delta_abs: Optional[float] = None,
                 grid_step: Optional[float] = None, max_grid: Optional[int] = None,
                 threads: Optional[int] = None, rdp_conversion: Optional[str] = None) -> None:
        self._acc = None
        self._spec = None
        lib = _lib.load()
        self._lib = lib
        text = spec_json(spec, neighboring)
        self._opt = _options(method, accuracy, delta_abs, grid_step, max_grid, threads,
                             rdp_conversion)
        self._args = (method, {k: v for k, v in (
            ("accuracy", accuracy), ("delta_abs", delta_abs), ("grid_step", grid_step),
            ("max_grid", max_grid), ("threads", threads), ("rdp_conversion", rdp_conversion))
            if v is not None})
        self._spec = _parse_spec(text)
        err = _lib.new_error()
        with _lib.LOCK:
            self._acc = lib.dpa_accountant_new(self._spec, ctypes.byref(self._opt), ctypes.byref(err))
        if not self._acc:
            self.close()
            _lib.raise_error(1, err)

    # ---- lifetime ----
    def close(self) -> None:
        """Free the C accountant and spec (queries afterwards raise)."""
        lib = getattr(self, "_lib", None)
        if lib is None:
            return
        with _lib.LOCK:
            if getattr(self, "_acc", None):
                lib.dpa_accountant_free(self._acc)
                self._acc = None
            if getattr(self, "_spec", None):
                lib.dpa_spec_free(self._spec)
                self._spec = None

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass

    def __enter__(self) -> "Accountant":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ---- pickle, copy, deepcopy: a new accountant of the same spec and options ----
    def __reduce__(self):
        """An accountant pickles as its canonical spec and the options it was
        built with; the copy is a fresh accountant (it answers a query as this
        one would have before its first query: the same bracket)."""
        return (_restore_accountant, (self.spec_json, self._args[0], dict(self._args[1])))

    def _live(self):
        if not self._acc:
            raise ValueError("the accountant is closed")
        return self._acc

    # ---- description ----
    @property
    def method(self) -> str:
        """The method in use ("auto" resolved to the one chosen)."""
        return _METHOD_NAMES[self._lib.dpa_accountant_method(self._live())]

    @property
    def spec(self) -> Dict[str, Any]:
        """The spec as the library read it (canonical, a dict)."""
        return json.loads(self.spec_json)

    @property
    def spec_json(self) -> str:
        """The library's canonical JSON of the spec."""
        self._live()
        return _spec_to_json(self._spec)

    @property
    def neighboring(self) -> str:
        """The spec's neighbouring relation: "add_remove" or "replace"."""
        return ("add_remove", "replace", "replace_special")[self._lib.dpa_spec_neighboring(self._spec)]

    @property
    def options(self) -> Dict[str, Any]:
        """The dpa_options in use (a dict; method as asked, e.g. "auto")."""
        return _options_dict(self._opt)

    def __repr__(self):
        if not self._acc:
            return "<dpacct.Accountant (closed)>"
        s = self.spec_json
        if len(s) > 100:
            s = s[:97] + "..."
        return "<dpacct.Accountant method=%r spec=%s>" % (self.method, s)

    # ---- queries ----
    def epsilon(self, delta: float) -> Union[EpsilonResult, List[EpsilonResult]]:
        """The smallest epsilon with delta(epsilon) <= delta, bracketed
        (EpsilonResult).  delta in [0, 1): at 0, the largest privacy loss
        (pure DP; inf when the loss is unbounded).  A sequence or array of deltas
        gives a list of results."""
        if not _is_scalar(delta):
            return [self.epsilon(d) for d in _iter_values(delta)]
        d = _real(delta, "delta")
        r = _lib.dpa_result()
        err = _lib.new_error()
        with _lib.LOCK:
            st = self._lib.dpa_accountant_epsilon(self._live(), d, ctypes.byref(r), ctypes.byref(err))
        _lib.check(st, err)
        return _result(EpsilonResult, "epsilon", d, r)

    def delta(self, epsilon: float) -> Union[DeltaResult, List[DeltaResult]]:
        """delta(epsilon) = H_{e^epsilon}, bracketed (DeltaResult); any finite
        epsilon.  A sequence or array gives a list of results (profile() is
        the faster way to many points)."""
        if not _is_scalar(epsilon):
            return [self.delta(e) for e in _iter_values(epsilon)]
        e = _real(epsilon, "epsilon")
        r = _lib.dpa_result()
        err = _lib.new_error()
        with _lib.LOCK:
            st = self._lib.dpa_accountant_delta(self._live(), e, ctypes.byref(r), ctypes.byref(err))
        _lib.check(st, err)
        return _result(DeltaResult, "delta", e, r)

    def profile(self, epsilons: Any) -> Profile:
        """The privacy profile at the given epsilons (finite): a Profile with
        arrays epsilon, upper, lower (numpy arrays shaped like the input when
        numpy is installed)."""
        if _is_scalar(epsilons):
            epsilons = [epsilons]
        keep, ptr, shape, n = _doubles_in(epsilons, "epsilons")
        up, up_p = _doubles_out(n)
        lo, lo_p = _doubles_out(n)
        err = _lib.new_error()
        if n:
            with _lib.LOCK:
                st = self._lib.dpa_accountant_profile(self._live(), ptr, n, up_p, lo_p, ctypes.byref(err))
            _lib.check(st, err)
        for i in range(n):
            if not (math.isfinite(up[i]) and math.isfinite(lo[i]) and lo[i] <= up[i]):
                raise LibraryBugError("the library returned an invalid profile bracket at epsilon %r"
                                      % (keep[i],))
        method = self.method
        eps_out = keep.reshape(shape).copy() if _np is not None else [keep[i] for i in range(n)]
        return Profile(epsilon=eps_out, upper=_shaped(up, shape, n), lower=_shaped(lo, shape, n),
                       method=method, certified=method not in _UNCERTIFIED_METHODS)

    def epsilon_curve(self, deltas: Any) -> EpsilonCurve:
        """epsilon at several deltas (a sequence or numpy array, each in
        (0, 1)): an EpsilonCurve with arrays delta, upper, lower shaped like
        the input (numpy arrays when numpy is installed, else lists)."""
        if _is_scalar(deltas):
            deltas = [deltas]
        keep, _ptr, shape, n = _doubles_in(deltas, "deltas")
        vals = [float(keep[i]) for i in range(n)]
        res = [self.epsilon(d) for d in vals]
        up, lo = [r.upper for r in res], [r.lower for r in res]
        method = res[0].method if res else self.method
        certified = all(r.certified for r in res) if res else method not in _UNCERTIFIED_METHODS
        return EpsilonCurve(delta=_array_like(vals, shape), upper=_array_like(up, shape),
                            lower=_array_like(lo, shape), method=method, certified=certified)

    def renyi_curve(self, orders: Any) -> RenyiCurve:
        """Renyi divergences at several real orders (> 0; a sequence or numpy
        array): a RenyiCurve of arrays shaped like the input."""
        self._live()
        return _renyi_curve(self._spec, orders)

    def gdp_mu(self) -> GdpMu:
        """The smallest mu for which the composition is mu-GDP, bracketed (GdpMu)."""
        g = _lib.dpa_gdp_mu()
        err = _lib.new_error()
        with _lib.LOCK:
            st = self._lib.dpa_accountant_gdp_mu(self._live(), ctypes.byref(g), ctypes.byref(err))
        _lib.check(st, err)
        return GdpMu(lower=g.lower, upper=g.upper, certified_upper=bool(g.certified_upper),
                     source=_GDP_MU_SOURCES.get(g.source, str(g.source)), note=_lib.text(g.note))

    def loss_tail(self, t: float, direction: str = "remove") -> Dict[str, Any]:
        """The privacy loss L = log dP/dQ under P at t, bracketed: a dict
        with sf_lower <= P(L > t) <= sf_upper and cdf_lower <= P(L <= t) <=
        cdf_upper, certified (False under phi and gdp: estimates), method
        and note.  direction: "remove" (P with the individual's data) or
        "add" (the reversed pair).  See dpa_accountant_loss_tail in
        dpacct/accountant.h and docs/loss_tail.md."""
        x = _real(t, "t")
        dirs = {"remove": 1, "add": 2}
        if direction not in dirs:
            raise InvalidInputError("direction: must be 'remove' or 'add', got %r" % (direction,), status=1)
        r = _lib.dpa_loss_tail()
        err = _lib.new_error()
        with _lib.LOCK:
            st = self._lib.dpa_accountant_loss_tail(self._live(), x, dirs[direction], ctypes.byref(r),
                                                    ctypes.byref(err))
        _lib.check(st, err)
        return {"t": r.t, "direction": direction, "sf_lower": r.sf_lower, "sf_upper": r.sf_upper,
                "cdf_lower": r.cdf_lower, "cdf_upper": r.cdf_upper, "certified": bool(r.certified),
                "method": _METHOD_NAMES.get(r.method),
                "note": _lib.text(r.note)}

    def pld(self, direction: str = "remove") -> Dict[str, Any]:
        """The composed PLD of one direction (method pld only), on the finest
        grid this accountant's queries have used: see dpacct.pld."""
        from .represent import pld_of
        return pld_of(self, direction)

    def beta_at(self, alpha: float, tol: float = 0.0) -> Tuple[float, float]:
        """The tradeoff function at one point, bracketed: (lower, upper) on
        beta(alpha), the smallest type II error of a test with type I error
        alpha, as the privacy profile implies it (GDP Prop 2.12; the pair's
        own tradeoff function for a symmetric pair).  The largest power
        1 - beta lies in [1 - upper, 1 - lower].  alpha in (0, 1]; tol the
        bracket width sought (0: 1e-9; the method's accuracy may bound it).
        Certified as the accountant's method is (phi, gdp: estimates).
        See dpa_tf_beta_at in dpacct/tradeoff.h and docs/fdp.md section 9."""
        a = _real(alpha, "alpha")
        t = _real(tol, "tol")
        lo, hi = ctypes.c_double(), ctypes.c_double()
        err = _lib.new_error()
        with _lib.LOCK:
            st = self._lib.dpa_tf_beta_at(self._live(), a, t, ctypes.byref(lo), ctypes.byref(hi), ctypes.byref(err))
        _lib.check(st, err)
        return (lo.value, hi.value)

    def renyi(self, order: Any) -> RenyiResult:
        """The Renyi divergence of order `order` (real > 0, complex with real
        part > 0, or text like "1.5+2i") in both directions (RenyiResult)."""
        self._live()
        return _renyi(self._spec, order)


def _restore_accountant(spec_text, method, options):
    return Accountant(spec_text, method, **options)


def _array_like(values, shape):
    if _np is not None:
        return _np.asarray(values, dtype=_np.float64).reshape(shape)
    return list(values)


def _renyi_curve(spec_ptr, orders):
    if _is_scalar(orders):
        orders = [orders]
    keep, _ptr, shape, n = _doubles_in(orders, "orders")
    vals = [float(keep[i]) for i in range(n)]
    for i, a in enumerate(vals):
        if not (math.isfinite(a) and a > 0):
            raise InvalidInputError("orders[%d]: must be a finite real > 0, got %r" % (i, a), status=1)
    rs = [_renyi(spec_ptr, a) for a in vals]
    ru = [r.remove.upper for r in rs]
    au = [r.add.upper for r in rs]
    return RenyiCurve(order=_array_like(vals, shape), upper=_array_like([max(a, b) for a, b in zip(ru, au)], shape),
                      remove_upper=_array_like(ru, shape),
                      remove_lower=_array_like([r.remove.lower for r in rs], shape),
                      add_upper=_array_like(au, shape),
                      add_lower=_array_like([r.add.lower for r in rs], shape),
                      certified=[bool(r.remove.certified and r.add.certified) for r in rs])


def renyi_curve(spec: Any, orders: Any, *, neighboring: Any = None) -> RenyiCurve:
    """Renyi divergences of a spec at several real orders (see
    Accountant.renyi_curve); no accountant is built."""
    return _on_spec(spec, neighboring, lambda p: _renyi_curve(p, orders))


def _on_spec(spec, neighboring, fn):
    """fn(the library's spec pointer) on a spec parsed for this call, freed after."""
    p = _parse_spec(spec_json(spec, neighboring))
    try:
        return fn(p)
    finally:
        with _lib.LOCK:
            _lib.load().dpa_spec_free(p)


def _iter_values(x):
    if hasattr(x, "ravel"):
        return x.ravel().tolist()
    return list(x)


# ------------------------------------------------------- epsilon_counts ---

def epsilon_counts(step: Any, counts: Any, delta: float, method: str = "auto", *, neighboring: Any = None,
                   accuracy: Optional[float] = None, delta_abs: Optional[float] = None,
                   grid_step: Optional[float] = None, max_grid: Optional[int] = None,
                   threads: Optional[int] = None,
                   rdp_conversion: Optional[str] = None) -> List[EpsilonResult]:
    """epsilon(delta) of `step` repeated counts[i] times, for every i, in one
    pass (dpa_epsilon_counts in accountant.h).

    Args:
        step: the repeated step, in any form Accountant takes.
        counts: integers in [1, 1e15] (a sequence or numpy array, any order,
            repeats allowed).
        delta: in (0, 1).
        method, neighboring and the options: as for Accountant.
    Returns:
        A list of EpsilonResult, one per count, in the order of `counts`:
        each a certified bracket of the eps of repeat(counts[i], step), as
        Accountant(repeat(counts[i], step)).epsilon(delta) certifies it, and
        within the accuracy target wherever that query's is; the largest
        count's result is that query's (the same numbers).
    Raises:
        InvalidInputError: empty counts, a count that is not an integer in
            [1, 1e15], delta outside (0, 1), an invalid step or option.
    """
    opt = _options(method, accuracy, delta_abs, grid_step, max_grid, threads, rdp_conversion)
    if _is_scalar(counts):
        counts = [counts]
    keep, ptr, _shape, n = _doubles_in(counts, "counts")
    d = _real(delta, "delta")

    def run(p):
        lib = _lib.load()
        out = (_lib.dpa_result * max(1, n))()
        err = _lib.new_error()
        with _lib.LOCK:
            st = lib.dpa_epsilon_counts(p, ptr, n, d, ctypes.byref(opt), out, ctypes.byref(err))
        _lib.check(st, err)
        return [_result(EpsilonResult, "epsilon", d, out[i]) for i in range(n)]

    result = _on_spec(step, neighboring, run)
    del keep
    return result


# ---------------------------------------------------------------- renyi ---

def _order(order):
    if isinstance(order, (str, bytes)):
        lib = _lib.load()
        re_, im_ = ctypes.c_double(), ctypes.c_double()
        err = _lib.new_error()
        s = order.encode() if isinstance(order, str) else order
        st = lib.dpa_renyi_parse_order(s, ctypes.byref(re_), ctypes.byref(im_), ctypes.byref(err))
        _lib.check(st, err)
        return re_.value, im_.value
    if hasattr(order, "item") and hasattr(order, "dtype"):
        order = order.item()
    if isinstance(order, complex):
        return order.real, order.imag
    return _real(order, "order"), 0.0


def _renyi_value(v, real):
    if real:
        value = v.re
    else:
        value = None if math.isnan(v.re) else complex(v.re, v.im)
    log_e = v.log_e_re if real else (None if math.isnan(v.log_e_re) else complex(v.log_e_re, v.log_e_im))
    return RenyiValue(value=value, lower=v.lower if real else None, upper=v.upper if real else None,
                      log_e=log_e, exists=bool(v.exists), certified=bool(v.certified),
                      tight=bool(v.tight), note=_lib.text(v.note))


def _renyi(spec_ptr, order):
    re_, im_ = _order(order)
    lib = _lib.load()
    out = _lib.dpa_renyi_result()
    err = _lib.new_error()
    with _lib.LOCK:
        st = lib.dpa_renyi(spec_ptr, re_, im_, ctypes.byref(out), ctypes.byref(err))
    _lib.check(st, err)
    real = im_ == 0
    return RenyiResult(order=re_ if real else complex(re_, im_), symmetric=bool(out.symmetric),
                       remove=_renyi_value(out.remove, real), add=_renyi_value(out.add, real),
                       binding=_DIRECTIONS.get(out.binding) if real else None)


def renyi(spec: Any, order: Any, *, neighboring: Any = None) -> RenyiResult:
    """The Renyi divergence of a spec at one order (see Accountant.renyi)."""
    return _on_spec(spec, neighboring, lambda p: _renyi(p, order))


# ------------------------------------------------------------ calibrate ---

def calibrate(template: Any, epsilon: float, delta: float, method: str = 'auto', *, neighboring: Any = None,
              rel_tol: Optional[float] = None, accuracy: Optional[float] = None,
              delta_abs: Optional[float] = None, grid_step: Optional[float] = None,
              max_grid: Optional[int] = None, threads: Optional[int] = None,
              rdp_conversion: Optional[str] = None) -> Calibration:
    """The value of the template's one "?" parameter that meets the target
    epsilon at delta (docs/calibration.md): the smallest noise (sigma, scale,
    sample's n) or the largest budget (count, rate, epsilon, ...) whose
    certified epsilon upper bound is <= epsilon.  template: like Accountant's
    spec, with exactly one number written "?".  rel_tol: relative width of
    the final search bracket, in [1e-12, 0.1] (default 1e-4).  Returns a
    Calibration; NumericError when no value meets the target."""
    lib = _lib.load()
    text = spec_json(template, neighboring)
    opt = _options(method, accuracy, delta_abs, grid_step, max_grid, threads, rdp_conversion)
    err = _lib.new_error()
    with _lib.LOCK:
        t = lib.dpa_template_from_json(_lib.c_string(text, "template"), ctypes.byref(err))
    if not t:
        _lib.raise_error(1, err, InvalidSpecError)
    try:
        info = lib.dpa_template_param(t).contents
        out = _lib.dpa_calibration()
        eps, dl = _real(epsilon, "epsilon"), _real(delta, "delta")
        tol = 0.0 if rel_tol is None else _real(rel_tol, "rel_tol")
        with _lib.LOCK:
            st = lib.dpa_calibrate(t, eps, dl, ctypes.byref(opt), tol, ctypes.byref(out),
                                   ctypes.byref(err))
        _lib.check(st, err)
        res = _result(EpsilonResult, "epsilon", dl, out.at_value)
        if not math.isfinite(out.value) or not res.upper <= eps:
            raise LibraryBugError("the library returned a calibrated value that does not meet the target")
        integer = bool(info.is_integer)
        value = int(out.value) if integer else out.value
        inf = None if math.isnan(out.infeasible) else (int(out.infeasible) if integer else out.infeasible)
        with _lib.LOCK:
            sp = lib.dpa_template_instantiate(t, out.value, ctypes.byref(err))
        if not sp:
            _lib.raise_error(1, err)
        try:
            spec = json.loads(_spec_to_json(sp))
        finally:
            with _lib.LOCK:
                lib.dpa_spec_free(sp)
        return Calibration(value=value, parameter=_lib.text(info.name), path=_lib.text(info.path),
                           role="noise" if info.role == 0 else "budget", is_integer=integer,
                           domain=(info.lo, info.hi, bool(info.lo_open), bool(info.hi_open)),
                           epsilon=eps, delta=dl, result=res, infeasible=inf,
                           evaluations=int(out.evaluations), spec=spec)
    finally:
        with _lib.LOCK:
            lib.dpa_template_free(t)
