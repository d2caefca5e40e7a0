# dpacct Python binding: tradeoff curves (f-DP) and Gaussian DP.
# SPDX-License-Identifier: GPL-3.0-or-later
"""Tradeoff curves f = T(P, Q) and the f-DP operations (include/dpacct/tradeoff.h).

    >>> from dpacct import tradeoff as tf
    >>> f = tf.gaussian(0.5).compose(tf.gaussian(1.2))   # G_0.5 (x) G_1.2 = G_1.3
    >>> f.kind, round(f.params["mu"], 12)
    ('gaussian', 1.3)

A curve gives, for every type I error x in [0, 1], the smallest type II
error of a test of P against Q (Dong, Roth & Su, "Gaussian differential
privacy", Def 2.1); docs/fdp.md has the mathematics.  Direction of every
guarantee: every curve built here is a LOWER bound on the curve it stands
for (less privacy claimed), every delta an UPPER bound, every epsilon an
upper bound.

Curves are immutable.  Operations return new curves; ``opts`` keywords
(rel_tol, abs_tol, max_vertices, tail; tradeoff.h, dpa_tf_opts) control the
discretization of closed forms, None meaning the library's defaults.
A curve remembers how it was built and pickles (and deep-copies) as that
recipe, replayed on unpickling: the library is deterministic, so the copy
is the same curve (a curve from an accountant is replayed on a fresh
accountant of the same spec and options).
"""
import ctypes
import math
import numbers
from typing import Any, Dict, Optional, Tuple, Union

from . import _lib
from ._errors import InvalidInputError

try:  # optional
    import numpy as _np
except ImportError:  # pragma: no cover
    _np = None

__all__ = ["Tradeoff", "identity", "gaussian", "approx", "laplace", "randomized_response",
           "from_points", "lower_envelope", "from_eps_delta", "from_profile", "from_accountant",
           "compose", "gdp_delta", "gdp_epsilon", "gdp_mu_from_profile", "DIRECTIONS"]

# dpa_tf_dir: "qp" = H(Q||P) (GDP Prop 2.12), "pq" = H(P||Q), "both" = the max
DIRECTIONS = {"qp": 0, "pq": 1, "both": 2}
_KINDS = {0: "piecewise", 1: "gaussian", 2: "approx", 3: "laplace"}
_MAX_VERTICES = (8, 1 << 24)
ArrayLike = Any


# ------------------------------------------------------------- helpers ---

def _real(x: Any, name: str, finite: bool = True) -> float:
    if hasattr(x, "item") and hasattr(x, "dtype") and getattr(x, "ndim", 0) == 0:
        x = x.item()
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise TypeError("%s=: expected a real number, got %s" % (name, type(x).__name__))
    try:
        x = float(x)
    except OverflowError:  # an int beyond the doubles
        raise InvalidInputError("%s=%d: too large for a double" % (name, x), status=1) from None
    if finite and not math.isfinite(x):
        raise InvalidInputError("%s=%r: must be finite" % (name, x), status=1)
    return x


def _int(x: Any, name: str, lo: int, hi: int) -> int:
    from .accountant import int_in
    return int_in(x, name, lo, hi)


def _reals(values: Any, name: str) -> Tuple[float, ...]:
    if hasattr(values, "tolist") and hasattr(values, "dtype"):
        values = values.tolist()
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        values = [values]
    return tuple(_real(v, "%s[%d]" % (name, i)) for i, v in enumerate(values))


def _carray(vals):
    arr = (ctypes.c_double * max(1, len(vals)))(*vals)
    return ctypes.cast(arr, _lib.c_double_p), arr


def _direction(d: str) -> int:
    if d not in DIRECTIONS:
        raise InvalidInputError('direction=%r: must be "both", "qp" or "pq"' % (d,), status=1)
    return DIRECTIONS[d]


def _opts_key(rel_tol=None, abs_tol=None, max_vertices=None, tail=None):
    """The options as a hashable tuple (None: defaults), checked."""
    if rel_tol is not None:
        rel_tol = _real(rel_tol, "rel_tol")
    if abs_tol is not None:
        abs_tol = _real(abs_tol, "abs_tol")
    if max_vertices is not None:
        max_vertices = _int(max_vertices, "max_vertices", *_MAX_VERTICES)
    if tail is not None:
        tail = _real(tail, "tail")
    return (rel_tol, abs_tol, max_vertices, tail)


def _copts(key):
    if key is None or key == (None, None, None, None):
        return None, None
    o = _lib.dpa_tf_opts()
    _lib.load().dpa_tf_opts_init(ctypes.byref(o))
    for name, v in zip(("rel_tol", "abs_tol", "max_vertices", "tail"), key):
        if v is not None:
            setattr(o, name, v)
    return ctypes.byref(o), o


def _vector(fn, x):
    """fn over a scalar (a float back) or over a sequence / array (an array
    back: numpy shaped like the input when numpy is installed, else a list)."""
    if isinstance(x, (numbers.Real,)) or (hasattr(x, "dtype") and getattr(x, "ndim", 1) == 0):
        return fn(x)
    if _np is not None:
        a = _np.asarray(x, dtype=_np.float64)
        out = _np.empty(a.shape, dtype=_np.float64)
        flat, o = a.reshape(-1), out.reshape(-1)
        for i in range(flat.size):
            o[i] = fn(float(flat[i]))
        return out
    return [fn(v) for v in x]


# ------------------------------------------------------- construction ---

def _build(recipe):
    """A new dpa_tf * from a recipe (tuple); the caller owns it."""
    lib = _lib.load()
    err = _lib.new_error()
    op, args = recipe[0], recipe[1:]
    kids = []
    try:
        with _lib.LOCK:
            if op == "identity":
                p = lib.dpa_tf_identity(ctypes.byref(err))
            elif op in ("gaussian", "laplace"):
                p = getattr(lib, "dpa_tf_" + op)(args[0], ctypes.byref(err))
            elif op in ("approx", "randomized_response"):
                p = getattr(lib, "dpa_tf_" + op)(args[0], args[1], ctypes.byref(err))
            elif op in ("from_points", "lower_envelope", "from_eps_delta"):
                xp, _kx = _carray(args[0])
                yp, _ky = _carray(args[1])
                if op == "from_points":
                    p = lib.dpa_tf_from_points(xp, yp, len(args[0]), args[2], ctypes.byref(err))
                else:
                    p = getattr(lib, "dpa_tf_" + op)(xp, yp, len(args[0]), ctypes.byref(err))
            elif op == "from_profile":
                xp, _kx = _carray(args[0])
                yp, _ky = _carray(args[1])
                o, _ko = _copts(args[3])
                p = lib.dpa_tf_from_profile(xp, yp, len(args[0]), args[2], o, ctypes.byref(err))
            elif op == "from_accountant":
                from .accountant import Accountant
                acc = Accountant(args[0], args[1], **dict(args[2]))
                try:
                    o, _ko = _copts(args[5])
                    p = lib.dpa_tf_from_accountant(acc._live(), args[3], args[4], o, ctypes.byref(err))
                finally:
                    acc.close()
            else:
                # operations on other curves: build the inputs first
                n_in = 2 if op in ("max", "min", "tensor") else 1
                kids = [_build(r) for r in args[:n_in]]
                rest = args[n_in:]
                if op == "inverse":
                    p = lib.dpa_tf_inverse(kids[0], ctypes.byref(err))
                elif n_in == 2:
                    o, _ko = _copts(rest[0])
                    p = getattr(lib, "dpa_tf_" + op)(kids[0], kids[1], o, ctypes.byref(err))
                elif op in ("symmetrize_max", "symm", "discretize"):
                    o, _ko = _copts(rest[0])
                    p = getattr(lib, "dpa_tf_" + op)(kids[0], o, ctypes.byref(err))
                elif op in ("subsample", "group", "tensor_power"):
                    o, _ko = _copts(rest[1])
                    p = getattr(lib, "dpa_tf_" + op)(kids[0], rest[0], o, ctypes.byref(err))
                else:
                    raise ValueError("unknown tradeoff recipe %r" % (op,))
    finally:
        for k in kids:
            lib.dpa_tf_free(k)
    if not p:
        _lib.raise_error(1, err)
    return p


def _from_recipe(recipe) -> "Tradeoff":
    return Tradeoff._wrap(_build(recipe), recipe)


class Tradeoff:
    """A tradeoff function f: [0, 1] -> [0, 1] (convex, non-increasing,
    f(x) <= 1 - x), held by the library.  Build one with this module's
    functions (gaussian, approx, laplace, from_points, from_accountant, ...)
    or an operation on another curve.  ``f(x)`` evaluates (a lower bound on
    the represented curve; x a number or an array)."""

    __slots__ = ("_p", "_recipe", "__weakref__")

    def __init__(self, *a: Any, **kw: Any) -> None:
        raise TypeError("build a Tradeoff with dpacct.tradeoff.gaussian(), approx(), from_points(), ...")

    @classmethod
    def _wrap(cls, ptr, recipe) -> "Tradeoff":
        obj = object.__new__(cls)
        obj._p = ptr
        obj._recipe = recipe
        return obj

    def __del__(self):
        p = getattr(self, "_p", None)
        if p:
            try:
                _lib.load().dpa_tf_free(p)
            except Exception:  # interpreter shutdown
                pass
            self._p = None

    def __reduce__(self):
        return (_from_recipe, (self._recipe,))

    def __copy__(self) -> "Tradeoff":
        return self  # immutable

    def __deepcopy__(self, memo) -> "Tradeoff":
        return _from_recipe(self._recipe)

    def _op(self, *recipe_tail) -> "Tradeoff":
        """A new curve from an operation whose first input is this curve.  The
        live C objects are used directly; the recipe records the operation."""
        lib = _lib.load()
        err = _lib.new_error()
        op = recipe_tail[0]
        with _lib.LOCK:
            if op == "inverse":
                p = lib.dpa_tf_inverse(self._p, ctypes.byref(err))
                recipe = ("inverse", self._recipe)
            elif op in ("max", "min", "tensor"):
                other, key = recipe_tail[1], recipe_tail[2]
                o, _k = _copts(key)
                p = getattr(lib, "dpa_tf_" + op)(self._p, other._p, o, ctypes.byref(err))
                recipe = (op, self._recipe, other._recipe, key)
            elif op in ("symmetrize_max", "symm", "discretize"):
                key = recipe_tail[1]
                o, _k = _copts(key)
                p = getattr(lib, "dpa_tf_" + op)(self._p, o, ctypes.byref(err))
                recipe = (op, self._recipe, key)
            else:  # subsample, group, tensor_power
                arg, key = recipe_tail[1], recipe_tail[2]
                o, _k = _copts(key)
                p = getattr(lib, "dpa_tf_" + op)(self._p, arg, o, ctypes.byref(err))
                recipe = (op, self._recipe, arg, key)
        if not p:
            _lib.raise_error(1, err)
        return Tradeoff._wrap(p, recipe)

    # ---- inspection ----
    @property
    def kind(self) -> str:
        """"piecewise", "gaussian", "approx" or "laplace"."""
        return _KINDS[_lib.load().dpa_tf_get_kind(self._p)]

    @property
    def params(self) -> Dict[str, float]:
        """A closed form's parameters {"mu"|"eps": ..., "delta": ...} (delta:
        the curve is tensored with f_{0,delta}); {} for a piecewise curve."""
        if self.kind == "piecewise":
            return {}
        mu, eps, d = ctypes.c_double(), ctypes.c_double(), ctypes.c_double()
        err = _lib.new_error()
        _lib.check(_lib.load().dpa_tf_params(self._p, ctypes.byref(mu), ctypes.byref(eps),
                                             ctypes.byref(d), ctypes.byref(err)), err)
        out = {"mu": mu.value, "eps": eps.value, "delta": d.value}
        return {k: v for k, v in out.items() if not math.isnan(v)}

    def vertices(self) -> Tuple[Any, Any]:
        """(x, y) of a piecewise-linear curve's vertices (nearest doubles of
        the exact vertices; numpy arrays when numpy is installed); empty for a
        closed form (use discretize() first)."""
        lib = _lib.load()
        n = lib.dpa_tf_vertices(self._p, None, None, None, None, 0)
        xs = (ctypes.c_double * max(1, n))()
        ys = (ctypes.c_double * max(1, n))()
        lib.dpa_tf_vertices(self._p, xs, None, ys, None, n)
        x, y = list(xs)[:n], list(ys)[:n]
        if _np is not None:
            return _np.array(x), _np.array(y)
        return x, y

    def __len__(self) -> int:
        """The number of vertices (0 for a closed form)."""
        return int(_lib.load().dpa_tf_vertices(self._p, None, None, None, None, 0))

    def __repr__(self) -> str:
        k = self.kind
        if k == "piecewise":
            return "<dpacct.Tradeoff piecewise, %d vertices>" % len(self)
        return "<dpacct.Tradeoff %s %s>" % (k, ", ".join("%s=%r" % kv for kv in self.params.items()))

    # ---- evaluation ----
    def _eval1(self, x):
        x = _real(x, "x", finite=False)
        y = ctypes.c_double()
        err = _lib.new_error()
        _lib.check(_lib.load().dpa_tf_eval(self._p, x, ctypes.byref(y), ctypes.byref(err)), err)
        return y.value

    def __call__(self, x: ArrayLike) -> Any:
        """A lower bound on f(x) for x in [0, 1] (a number, or an array of
        them: an array back).  InvalidInputError outside [0, 1] or NaN."""
        return _vector(self._eval1, x)

    def eval_bounds(self, x: float) -> Tuple[float, float]:
        """(lo, hi) with lo <= f(x) <= hi for the represented curve."""
        x = _real(x, "x", finite=False)
        lo, hi = ctypes.c_double(), ctypes.c_double()
        err = _lib.new_error()
        _lib.check(_lib.load().dpa_tf_eval_bounds(self._p, x, ctypes.byref(lo), ctypes.byref(hi),
                                                  None, None, ctypes.byref(err)), err)
        return lo.value, hi.value

    def delta(self, epsilon: ArrayLike, direction: str = "both") -> Any:
        """An upper bound on delta(epsilon) of the curve's privacy profile
        (direction "qp": H_{e^eps}(Q||P) = 1 + f*(-e^eps); "pq": H(P||Q);
        "both": the max).  epsilon finite (an array gives an array)."""
        dr = _direction(direction)

        def one(e):
            e = _real(e, "epsilon")
            out = ctypes.c_double()
            err = _lib.new_error()
            _lib.check(_lib.load().dpa_tf_delta(self._p, e, dr, ctypes.byref(out), ctypes.byref(err)), err)
            return out.value
        return _vector(one, epsilon)

    def epsilon(self, delta: ArrayLike, direction: str = "both") -> Any:
        """An upper bound on the smallest epsilon >= 0 with delta(epsilon) <=
        delta (inf when none is finite); delta in (0, 1), or an array."""
        dr = _direction(direction)

        def one(d):
            d = _real(d, "delta")
            out = ctypes.c_double()
            err = _lib.new_error()
            _lib.check(_lib.load().dpa_tf_epsilon(self._p, d, dr, ctypes.byref(out), ctypes.byref(err)), err)
            return out.value
        return _vector(one, delta)

    def check(self, tol: float = 0.0) -> None:
        """Raise InvalidInputError (naming the property, vertex and size of
        the violation) unless the curve is a valid tradeoff function within
        tol (GDP Prop 2.2); curves built here always are at tol = 0."""
        err = _lib.new_error()
        _lib.check(_lib.load().dpa_tf_check(self._p, _real(tol, "tol"), ctypes.byref(err)), err)

    def symmetry_defect(self) -> float:
        """An upper bound on sup_x |f(x) - f^{-1}(x)| (0: symmetric)."""
        out = ctypes.c_double()
        err = _lib.new_error()
        _lib.check(_lib.load().dpa_tf_symmetry_defect(self._p, ctypes.byref(out), ctypes.byref(err)), err)
        return out.value

    def is_symmetric(self, tol: float = 0.0) -> bool:
        """True if f = f^{-1} within tol (GDP Prop 2.1)."""
        return bool(_lib.load().dpa_tf_is_symmetric(self._p, _real(tol, "tol")))

    def fixed_point(self) -> Tuple[float, float]:
        """(lo, hi) bracketing the fixed point x* = f(x*)."""
        lo, hi = ctypes.c_double(), ctypes.c_double()
        err = _lib.new_error()
        _lib.check(_lib.load().dpa_tf_fixed_point(self._p, ctypes.byref(lo), ctypes.byref(hi),
                                                  ctypes.byref(err)), err)
        return lo.value, hi.value

    def gdp_mu(self, **opts: Any) -> float:
        """An upper bound on the smallest mu with G_mu <= f (f is mu-GDP); inf
        for a discretized curve with an infinite slope at 0 (ask it of
        closed forms or exact curves: tradeoff.h, dpa_tf_gdp_mu)."""
        out = ctypes.c_double()
        err = _lib.new_error()
        o, _k = _copts(_opts_key(**opts))
        with _lib.LOCK:
            st = _lib.load().dpa_tf_gdp_mu(self._p, o, ctypes.byref(out), ctypes.byref(err))
        _lib.check(st, err)
        return out.value

    # ---- operations (each a new curve, a lower bound on the exact result) ----
    def inverse(self) -> "Tradeoff":
        """f^{-1} (GDP eq 4): T(P, Q)^{-1} = T(Q, P)."""
        return self._op("inverse")

    def max(self, other: "Tradeoff", **opts: Any) -> "Tradeoff":
        """max{f, g}."""
        return self._op("max", _check_tf(other), _opts_key(**opts))

    def min(self, other: "Tradeoff", **opts: Any) -> "Tradeoff":
        """The lower convex envelope of min{f, g} (f-DP or g-DP, unknown which)."""
        return self._op("min", _check_tf(other), _opts_key(**opts))

    def symmetrize(self, **opts: Any) -> "Tradeoff":
        """max{f, f^{-1}} (GDP Prop 2.1): valid when f bounds every ordered
        pair of neighbours."""
        return self._op("symmetrize_max", _opts_key(**opts))

    def symm(self, **opts: Any) -> "Tradeoff":
        """Symm(f) (GDP Def F.1, Prop F.2): the symmetrization for a curve of
        one direction (e.g. from subsampling); <= symmetrize()."""
        return self._op("symm", _opts_key(**opts))

    def subsample(self, p: float, **opts: Any) -> "Tradeoff":
        """C_p(f) (GDP Thm 4.2): the mechanism run on m of n records drawn
        without replacement, p = m/n in [0, 1]."""
        return self._op("subsample", _real(p, "p"), _opts_key(**opts))

    def group(self, k: int, **opts: Any) -> "Tradeoff":
        """Group privacy for groups of k (1 <= k <= 2^20; GDP Thm 2.14):
        G_mu gives G_{k mu}."""
        return self._op("group", _int(k, "k", 1, 1 << 20), _opts_key(**opts))

    def compose(self, other: "Tradeoff", **opts: Any) -> "Tradeoff":
        """The tensor product f (x) g (GDP Thm 3.2): composing an f-DP and a
        g-DP mechanism.  G_a (x) G_b = G_sqrt(a^2 + b^2) exactly."""
        return self._op("tensor", _check_tf(other), _opts_key(**opts))

    tensor = compose

    def __matmul__(self, other: "Tradeoff") -> "Tradeoff":
        """f @ g is f.compose(g)."""
        if not isinstance(other, Tradeoff):
            return NotImplemented
        return self.compose(other)

    def power(self, n: int, **opts: Any) -> "Tradeoff":
        """f composed with itself n times (1 <= n <= 10^9): G_mu gives
        G_{sqrt(n) mu}."""
        return self._op("tensor_power", _int(n, "n", 1, 10 ** 9), _opts_key(**opts))

    def discretize(self, **opts: Any) -> "Tradeoff":
        """A piecewise-linear curve below f (closed forms replaced by
        supporting lines, large curves coarsened)."""
        return self._op("discretize", _opts_key(**opts))


def _check_tf(x):
    if not isinstance(x, Tradeoff):
        raise TypeError("expected a dpacct.tradeoff.Tradeoff, got %s" % type(x).__name__)
    return x


# -------------------------------------------------------- constructors ---

def identity() -> Tradeoff:
    """Id(x) = 1 - x: perfect privacy."""
    return _from_recipe(("identity",))


def gaussian(mu: float) -> Tradeoff:
    """G_mu(x) = Phi(Phi^{-1}(1 - x) - mu) (GDP eq 6), mu in [0, 1e8]."""
    return _from_recipe(("gaussian", _real(mu, "mu")))


def approx(epsilon: float, delta: float = 0.0) -> Tradeoff:
    """f_{eps,delta}, the curve of (eps, delta)-DP (GDP eq 5); eps in [0, 700],
    delta in [0, 1]."""
    return _from_recipe(("approx", _real(epsilon, "epsilon"), _real(delta, "delta")))


def laplace(mu: float) -> Tradeoff:
    """T(Lap(0, 1), Lap(mu, 1)) (GDP Lemma A.6): the Laplace mechanism with
    sensitivity s and scale b has mu = s / b; mu in [0, 700]."""
    return _from_recipe(("laplace", _real(mu, "mu")))


def randomized_response(p: float, q: float) -> Tradeoff:
    """T(P, Q) for P = (p, 1 - p), Q = (q, 1 - q); p, q in [0, 1]."""
    return _from_recipe(("randomized_response", _real(p, "p"), _real(q, "q")))


def from_points(x: ArrayLike, y: ArrayLike, tol: float = 0.0) -> Tradeoff:
    """The piecewise-linear curve through (x[i], y[i]), the caller's LOWER
    bound (0 = x[0] < ... <= 1, y[-1] = 0, a tradeoff function within tol;
    violations within tol are repaired downwards)."""
    xs, ys = _reals(x, "x"), _reals(y, "y")
    _same_len(xs, ys)
    return _from_recipe(("from_points", xs, ys, _real(tol, "tol")))


def lower_envelope(x: ArrayLike, y: ArrayLike) -> Tradeoff:
    """The largest tradeoff function below the points' interpolation."""
    xs, ys = _reals(x, "x"), _reals(y, "y")
    _same_len(xs, ys)
    return _from_recipe(("lower_envelope", xs, ys))


def from_eps_delta(epsilons: ArrayLike, deltas: ArrayLike) -> Tradeoff:
    """sup_i f_{eps_i, delta_i} (GDP Prop 2.8): a mechanism (eps_i, delta_i)-DP
    for every i."""
    es, ds = _reals(epsilons, "epsilons"), _reals(deltas, "deltas")
    _same_len(es, ds)
    return _from_recipe(("from_eps_delta", es, ds))


def from_profile(epsilons: ArrayLike, delta_upper: ArrayLike, direction: str = "both",
                 **opts: Any) -> Tradeoff:
    """A lower bound on T(P, Q) from upper bounds delta_upper[i] >=
    delta(epsilons[i]) of its privacy profile (GDP Prop 2.8, 2.12)."""
    es, ds = _reals(epsilons, "epsilons"), _reals(delta_upper, "delta_upper")
    _same_len(es, ds)
    return _from_recipe(("from_profile", es, ds, _direction(direction), _opts_key(**opts)))


def from_accountant(accountant: Any, eps_max: float = 10.0, n: int = 1000, **opts: Any) -> Tradeoff:
    """The tradeoff curve of an Accountant's spec, from its certified profile
    at n points of [0, eps_max] (eps_max in (0, 700], n in [2, 10^6]): the
    spec is f-DP.  The curve is computed on a fresh accountant of the same
    spec and options (so that it pickles by replaying)."""
    from .accountant import Accountant
    if not isinstance(accountant, Accountant):
        raise TypeError("accountant: expected a dpacct.Accountant, got %s" % type(accountant).__name__)
    method, options = accountant._args
    recipe = ("from_accountant", accountant.spec_json, method, tuple(sorted(options.items())),
              _real(eps_max, "eps_max"), _int(n, "n", 2, 10 ** 6), _opts_key(**opts))
    return _from_recipe(recipe)


def compose(*curves: Tradeoff, **opts: Any) -> Tradeoff:
    """f_1 (x) f_2 (x) ... (x) f_k, left to right."""
    if len(curves) == 1 and not isinstance(curves[0], Tradeoff):
        curves = tuple(curves[0])
    if not curves:
        raise InvalidInputError("compose: needs at least one curve", status=1)
    out = _check_tf(curves[0])
    for c in curves[1:]:
        out = out.compose(c, **opts)
    return out


def _same_len(a, b):
    if len(a) != len(b) or not a:
        raise InvalidInputError("the two arrays must have the same length >= 1, got %d and %d"
                                % (len(a), len(b)), status=1)


# ----------------------------------------------------------- Gaussian DP ---

def gdp_delta(mu: float, epsilon: float) -> Tuple[float, float]:
    """(lo, hi) bracketing delta(eps) of mu-GDP (GDP Cor 2.13)."""
    lo, hi = ctypes.c_double(), ctypes.c_double()
    err = _lib.new_error()
    _lib.check(_lib.load().dpa_tf_gdp_delta(_real(mu, "mu"), _real(epsilon, "epsilon"), ctypes.byref(lo),
                                            ctypes.byref(hi), ctypes.byref(err)), err)
    return lo.value, hi.value


def gdp_epsilon(mu: float, delta: float) -> Tuple[float, float]:
    """(lo, hi) bracketing the smallest eps >= 0 with delta_mu(eps) <= delta."""
    lo, hi = ctypes.c_double(), ctypes.c_double()
    err = _lib.new_error()
    _lib.check(_lib.load().dpa_tf_gdp_epsilon(_real(mu, "mu"), _real(delta, "delta"), ctypes.byref(lo),
                                              ctypes.byref(hi), ctypes.byref(err)), err)
    return lo.value, hi.value


def gdp_mu_from_profile(epsilons: ArrayLike, deltas: ArrayLike) -> float:
    """The smallest mu whose GDP profile reaches deltas[i] at epsilons[i]
    (bounded above): a necessary condition for mu-GDP, not a proof."""
    es, ds = _reals(epsilons, "epsilons"), _reals(deltas, "deltas")
    _same_len(es, ds)
    ep, _k1 = _carray(es)
    dp, _k2 = _carray(ds)
    out = ctypes.c_double()
    err = _lib.new_error()
    _lib.check(_lib.load().dpa_tf_gdp_mu_from_profile(ep, dp, len(es), ctypes.byref(out),
                                                      ctypes.byref(err)), err)
    return out.value


Tradeoff.__module__ = "dpacct.tradeoff"
