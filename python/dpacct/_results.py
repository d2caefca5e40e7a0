# dpacct Python binding: result objects.
# SPDX-License-Identifier: GPL-3.0-or-later
"""Small immutable result objects with readable reprs.

Displayed numbers use directed rounding like the command line: an upper
bound is rounded up and a lower bound down, so the repr never claims more
than the bound; the attributes hold the exact doubles.
"""
import decimal
import math

__all__ = ["Result", "EpsilonResult", "DeltaResult", "Profile", "EpsilonCurve", "RenyiCurve", "GdpMu",
           "RenyiValue", "RenyiResult", "Calibration", "fmt_up", "fmt_down"]


def _fmt(x, digits, rounding):
    if x is None:
        return "None"
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "0"
    ctx = decimal.Context(prec=digits, rounding=rounding)
    d = ctx.create_decimal(x)  # exact value of the double, then rounded once
    # %g of the nearest double to d shows d's digits exactly (digits <= 17)
    return "%.*g" % (digits, float(d))


def fmt_up(x, digits=5):
    return _fmt(x, digits, decimal.ROUND_CEILING)


def fmt_down(x, digits=5):
    return _fmt(x, digits, decimal.ROUND_FLOOR)


def fmt_near(x, digits=5):
    return _fmt(x, digits, decimal.ROUND_HALF_EVEN)


def digits_for(upper, lower):
    """Significant digits that show the bracket's width (the CLI's rule)."""
    if not (math.isfinite(upper) and math.isfinite(lower)) or upper == 0:
        return 5
    r = (upper - lower) / abs(upper)
    if not r > 1e-10:
        return 10
    p = math.ceil(-math.log10(r))
    return min(10, max(5, p))


class _Frozen:
    __slots__ = ()

    def __setattr__(self, name, value):
        raise AttributeError("%s is immutable" % type(self).__name__)

    def _set(self, **kw):
        for k, v in kw.items():
            object.__setattr__(self, k, v)

    def _fields(self):
        out = []
        for c in reversed(type(self).__mro__):
            out.extend(getattr(c, "__slots__", ()))
        return out

    def as_dict(self):
        """The fields as a plain dict."""
        return {k: getattr(self, k) for k in self._fields()}

    def __eq__(self, other):
        if type(self) is not type(other):
            return False
        a, b = self.as_dict(), other.as_dict()
        return all(_same(a[k], b[k]) for k in a)

    # pickle, copy and deepcopy rebuild from the fields
    def __reduce__(self):
        return (_restore, (type(self), self.as_dict()))

    __hash__ = None


def _restore(cls, fields):
    obj = cls.__new__(cls)
    obj._set(**fields)
    return obj


def _same(a, b):
    """Equality that also compares numpy arrays (element-wise, all equal)."""
    if hasattr(a, "shape") or hasattr(b, "shape"):
        return _flat(a) == _flat(b) and getattr(a, "shape", None) == getattr(b, "shape", None)
    return a == b


class Result(_Frozen):
    """A certified bracket lower <= true value <= upper for one query.

    Fields: query ("epsilon" or "delta"), at (the delta, resp. epsilon,
    queried), upper, lower, method (the method used: "exact", "pld", ...),
    certified (True: both bounds proven; False: estimates, e.g. method phi
    or gdp), binding ("both", "remove" or "add"), upper_remove, upper_add,
    grid_step, grid_size, truncated_mass, roundoff (the PLD error budget;
    0 for exact), accuracy_met, upper_source ("method",
    "largest_finite_loss", "dp_domination", "chernoff", "rdp"), order (the Renyi
    order of an rdp bound, else None), note (the method's remark, "" if none).
    float(result) is the upper bound: the value to claim."""

    __slots__ = ("query", "at", "upper", "lower", "method", "certified", "binding",
                 "upper_remove", "upper_add", "grid_step", "grid_size", "truncated_mass",
                 "roundoff", "accuracy_met", "upper_source", "order", "note")

    def __init__(self, **kw):
        self._set(**kw)

    @property
    def gap(self) -> float:
        """upper - lower: how much the bracket leaves on the table."""
        return self.upper - self.lower

    def __float__(self):
        return float(self.upper)

    def __repr__(self):
        d = digits_for(self.upper, self.lower)
        other = "delta" if self.query == "epsilon" else "epsilon"
        s = "%s(upper=%s, lower=%s, %s=%s, method=%r, certified=%r" % (
            type(self).__name__, fmt_up(self.upper, d), fmt_down(self.lower, d), other,
            fmt_near(self.at, 6), self.method, self.certified)
        if self.note:
            s += ", note=%r" % self.note
        return s + ")"

    def __str__(self):
        d = digits_for(self.upper, self.lower)
        other = "delta" if self.query == "epsilon" else "epsilon"
        kind = "certified upper bound" if self.certified else "estimate, not certified"
        return "%s <= %s (%s), >= %s, at %s = %s [%s]" % (
            self.query, fmt_up(self.upper, d), kind, fmt_down(self.lower, d), other,
            fmt_near(self.at, 6), self.method)


class EpsilonResult(Result):
    """Bounds on the smallest epsilon with delta(epsilon) <= at (a delta)."""
    __slots__ = ()


class DeltaResult(Result):
    """Bounds on delta(epsilon) = H_{e^epsilon} at `at` (an epsilon)."""
    __slots__ = ()


class Profile(_Frozen):
    """The privacy profile at given epsilons: upper[i] >= delta(epsilon[i])
    >= lower[i].  Arrays are numpy arrays when numpy is installed (shaped
    like the input), else lists.  method: the method used; certified: False
    for the estimates (phi, gdp).  Iterating yields (epsilon, upper, lower)."""

    __slots__ = ("epsilon", "upper", "lower", "method", "certified")

    def __init__(self, **kw):
        self._set(**kw)

    def __len__(self):
        return len(self.epsilon)

    def __iter__(self):
        return iter(zip(_flat(self.epsilon), _flat(self.upper), _flat(self.lower)))

    def __eq__(self, other):
        return type(self) is type(other) and list(self) == list(other) and \
            (self.method, self.certified) == (other.method, other.certified)

    def __repr__(self):
        return _points_repr("Profile", "points, method=%r, certified=%r" % (self.method, self.certified),
                            list(self), "eps %s: delta <= %s", 4)


def _points_repr(name, what, pts, fmt, digits):
    """'NAME(n WHAT: x0: y0, x1: y1, ..., xn: yn)' with at most four points
    shown, x to the nearest and y rounded up."""
    show = pts if len(pts) <= 4 else pts[:2] + [None] + pts[-1:]
    body = ", ".join("..." if p is None else fmt % (fmt_near(p[0], 6), fmt_up(p[1], digits)) for p in show)
    return "%s(%d %s: %s)" % (name, len(pts), what, body)


def _flat(a):
    if hasattr(a, "ravel"):
        return a.ravel().tolist()
    return list(a)


class EpsilonCurve(_Frozen):
    """epsilon(delta) at several deltas, bracketed: lower[i] <= eps(delta[i])
    <= upper[i] (upper may be inf).  Arrays are numpy arrays shaped like the
    input when numpy is installed, else lists.  method, certified as in
    Result.  Iterating yields (delta, upper, lower)."""

    __slots__ = ("delta", "upper", "lower", "method", "certified")

    def __init__(self, **kw):
        self._set(**kw)

    def __len__(self):
        return len(_flat(self.delta))

    def __iter__(self):
        return iter(zip(_flat(self.delta), _flat(self.upper), _flat(self.lower)))

    def __repr__(self):
        return _points_repr("EpsilonCurve", "points, method=%r, certified=%r" % (self.method, self.certified),
                            list(self), "delta %s: eps <= %s", 6)


class RenyiCurve(_Frozen):
    """Renyi divergences at several real orders: for each order A[i],
    remove_lower[i] <= D_A(P||Q) <= remove_upper[i] and add_lower[i] <=
    D_A(Q||P) <= add_upper[i] (inf where the divergence is infinite);
    upper[i] = max(remove_upper[i], add_upper[i]), the bound an RDP claim
    uses.  certified[i] is True when both directions' bounds are proven.
    Arrays are numpy arrays shaped like the input when numpy is installed,
    else lists."""

    __slots__ = ("order", "upper", "remove_upper", "remove_lower", "add_upper", "add_lower",
                 "certified")

    def __init__(self, **kw):
        self._set(**kw)

    def __len__(self):
        return len(_flat(self.order))

    def __iter__(self):
        return iter(zip(_flat(self.order), _flat(self.upper)))

    def __repr__(self):
        return _points_repr("RenyiCurve", "orders", list(self), "order %s: D <= %s", 6)


class GdpMu(_Frozen):
    """The smallest mu with the composition mu-GDP, bracketed: lower <= mu*
    <= upper; upper is +inf unless certified_upper.  source: "none",
    "gaussian", "bounded_loss" or "infinite"; note says how."""

    __slots__ = ("lower", "upper", "certified_upper", "source", "note")

    def __init__(self, **kw):
        self._set(**kw)

    def __repr__(self):
        return "GdpMu(upper=%s, lower=%s, certified_upper=%r, source=%r)" % (
            fmt_up(self.upper, 6), fmt_down(self.lower, 6), self.certified_upper, self.source)


class RenyiValue(_Frozen):
    """One direction of a Renyi divergence: value (float for a real order,
    complex for a complex one; None when it does not exist), lower and
    upper (certified, real orders; None for complex), log_e ((A-1) D_A),
    exists, certified (value proven), tight, note."""

    __slots__ = ("value", "lower", "upper", "log_e", "exists", "certified", "tight", "note")

    def __init__(self, **kw):
        self._set(**kw)

    def __repr__(self):
        if isinstance(self.value, complex):
            im = self.value.imag
            v = "%s %s %si" % (fmt_near(self.value.real, 12), "-" if im < 0 else "+",
                               fmt_near(abs(im), 12))
            return "RenyiValue(value=%s, certified=%r)" % (v, self.certified)
        return "RenyiValue(upper=%s, lower=%s, certified=%r)" % (
            fmt_up(self.upper, 10), fmt_down(self.lower, 10), self.certified)


class RenyiResult(_Frozen):
    """D_A of the composition in both directions: remove = D_A(P||Q), add =
    D_A(Q||P) (RenyiValue each); order (float or complex), symmetric, binding
    ("both", "remove", "add"; None for complex orders)."""

    __slots__ = ("order", "symmetric", "remove", "add", "binding")

    def __init__(self, **kw):
        self._set(**kw)

    def __repr__(self):
        return "RenyiResult(order=%r, binding=%r, remove=%r, add=%r)" % (
            self.order, self.binding, self.remove, self.add)


class Calibration(_Frozen):
    """A calibrated parameter value.  value (int for integer parameters) meets
    the target: its certified epsilon upper bound at `delta` is <= `epsilon`
    (result is that evaluation, an EpsilonResult).  parameter and path name
    the "?"; role is "noise" (smallest value found) or "budget" (largest);
    infeasible is the nearest value found not to meet the target (None if
    none); evaluations counts accountant builds; spec is the template with
    the value filled in (a dict).  float(calibration) is the value."""

    __slots__ = ("value", "parameter", "path", "role", "is_integer", "domain", "epsilon",
                 "delta", "result", "infeasible", "evaluations", "spec")

    def __init__(self, **kw):
        self._set(**kw)

    def __float__(self):
        return float(self.value)

    def __int__(self):
        return int(self.value)

    def __repr__(self):
        v = str(self.value) if self.is_integer else (
            fmt_up(self.value, 6) if self.role == "noise" else fmt_down(self.value, 6))
        d = digits_for(self.result.upper, self.result.lower)
        return "Calibration(%s=%s, epsilon<=%s at delta=%s, path=%r, evaluations=%d)" % (
            self.parameter, v, fmt_up(self.result.upper, d), fmt_near(self.delta, 6),
            self.path, self.evaluations)
