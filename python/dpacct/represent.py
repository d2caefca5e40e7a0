# dpacct Python binding: the representations of a composition.
# SPDX-License-Identifier: GPL-3.0-or-later
"""The privacy loss distribution (PLD), the characteristic function phi(t),
the privacy profile from the Renyi curve (LT §3) and the CLT quantities of
a spec, as arrays (numpy when installed, else lists).

    >>> import dpacct
    >>> g = {"repeat": {"count": 10, "event": {"gaussian": {"sigma": 3}}}}
    >>> d = dpacct.pld(g)
    >>> round(sum(d["upper"]["mass"]) + d["upper"]["inf"], 9)
    1.0

See docs/guarantees.md §3.17 (the PLD), docs/phi.md §9 (phi) and
docs/rdp.md §7 (the profile from the Renyi curve); the C functions are
dpa_accountant_pld, dpa_characteristic, dpa_lt_profile and
dpa_accountant_clt_info in include/dpacct/accountant.h.
"""
import ctypes
from typing import Any, Dict, Optional

from . import _lib
from ._errors import InvalidInputError
from .accountant import Accountant, _doubles_in, _doubles_out, _on_spec, _options, _DIRECTIONS

try:  # optional
    import numpy as _np
except ImportError:  # pragma: no cover - exercised where numpy is absent
    _np = None

__all__ = ["pld", "characteristic", "lt_profile", "clt_info"]

_DIR_CODES = {"remove": 1, "add": 2}


def _direction(direction):
    if direction not in _DIR_CODES:
        raise InvalidInputError("direction: must be 'remove' or 'add', got %r" % (direction,), status=1)
    return _DIR_CODES[direction]


def _array(values):
    return _np.array(values, dtype=_np.float64) if _np is not None else list(values)


def _measure(m, certified):
    n = m.n
    masses = _np.ctypeslib.as_array(m.mass, shape=(n,)).copy() if _np is not None and n else \
        [m.mass[i] for i in range(n)]
    losses = _array([(m.offset + i) * m.step for i in range(n)])
    return {"step": m.step, "offset": m.offset, "n": n, "loss": losses, "mass": masses, "inf": m.inf + 0.0,
            "tail_above": m.tail_above, "truncated_mass": m.tail_outside, "roundoff": m.roundoff,
            "rel_err": m.rel_err, "certified": certified}


def pld_of(acc: Accountant, direction: str = "remove") -> Dict[str, Any]:
    """The composed PLD of one direction of a pld accountant, on the finest
    grid its queries have used (see pld())."""
    code = _direction(direction)
    x = _lib.dpa_pld_export()
    err = _lib.new_error()
    with _lib.LOCK:
        st = acc._lib.dpa_accountant_pld(acc._live(), code, ctypes.byref(x), ctypes.byref(err))
        if st == 0:  # copy the lent masses before the lock is released
            out = {"direction": _DIRECTIONS.get(x.direction), "upper": _measure(x.upper, True),
                   "lower": _measure(x.lower, bool(x.lower_certified))}
    _lib.check(st, err)
    return out


def pld(spec: Any, direction: str = "remove", *, neighboring: Any = None, accuracy: Optional[float] = None,
        grid_step: Optional[float] = None, max_grid: Optional[int] = None,
        threads: Optional[int] = None) -> Dict[str, Any]:
    """The pld method's composed privacy loss distribution of one direction.

    Args:
        spec: a spec (docs/spec.md), as for Accountant.
        direction: "remove" (W = log dP/dQ under P) or "add" (the reversed
            pair); "both" in the result when the pair is symmetric.
        accuracy, grid_step, max_grid, threads: the pld options.

    Returns:
        {"direction", "upper", "lower"}: each measure a dict with "step",
        "offset", "n", "loss" (the grid losses (offset + i) * step), "mass"
        (non-negative masses), "inf" (the mass at +inf), "tail_above",
        "truncated_mass", "roundoff", "rel_err" and "certified".  The upper
        (pessimistic) measure's hockey-stick sum, times (1 + 2 n u +
        rel_err), plus tail_above and roundoff, bounds delta(eps) from above;
        the lower one's, times (1 - 2 n u - rel_err), minus truncated_mass
        and roundoff, from below (docs/guarantees.md §3.17).

    Raises:
        InvalidInputError, InvalidSpecError, UnsupportedError (zcdp leaves),
        OutOfMemoryError (a grid beyond max_grid).
    """
    with Accountant(spec, "pld", neighboring=neighboring, accuracy=accuracy, grid_step=grid_step,
                    max_grid=max_grid, threads=threads) as acc:
        return pld_of(acc, direction)


def characteristic(spec: Any, t: Any, direction: str = "remove", *, neighboring: Any = None) -> Dict[str, Any]:
    """phi(t) = E[e^{i t W}; W finite] of the composition's privacy loss W.

    Args:
        spec: a spec (docs/spec.md).
        t: finite reals (a scalar or a sequence).
        direction: "remove" or "add".

    Returns:
        {"t", "phi" (complex values), "error" (a bound on |computed - true|),
        "certified"}: certified is False when a step is evaluated by
        quadrature (Poisson-subsampled Gaussian or Laplace: the error is then
        the quadrature's estimate, docs/phi.md §9).

    Raises:
        InvalidInputError (a non-finite t), UnsupportedError (leaves the phi
        module does not take), NumericError.
    """
    code = _direction(direction)
    vals, ptr, shape, n = _doubles_in([t] if isinstance(t, (int, float)) else t, "t")
    if n == 0:
        raise InvalidInputError("t: no points", status=1)
    re, pre = _doubles_out(n)
    im, pim = _doubles_out(n)
    er, per = _doubles_out(n)
    cert = ctypes.c_int()

    def run(p):
        err = _lib.new_error()
        with _lib.LOCK:
            st = _lib.load().dpa_characteristic(p, code, ptr, n, pre, pim, per, ctypes.byref(cert),
                                                ctypes.byref(err))
        _lib.check(st, err)

    _on_spec(spec, neighboring, run)
    if _np is not None:
        phi = _np.asarray(re) + 1j * _np.asarray(im)
        return {"t": _np.asarray(vals, dtype=_np.float64).copy(), "phi": phi, "error": _np.asarray(er),
                "certified": bool(cert.value)}
    return {"t": [vals[i] for i in range(n)], "phi": [complex(re[i], im[i]) for i in range(n)],
            "error": [er[i] for i in range(n)], "certified": bool(cert.value)}


def lt_profile(spec: Any, epsilons: Any, *, neighboring: Any = None,
               rdp_conversion: Optional[str] = None) -> Dict[str, Any]:
    """The privacy profile from the Renyi curve (LT §3).

    Args:
        spec: a spec (docs/spec.md).
        epsilons: finite reals.
        rdp_conversion: the rdp method's conversion for the bound.

    Returns:
        {"epsilon", "estimate", "estimate_error", "estimate_remove",
        "estimate_add", "bound", "has_estimate", "has_bound",
        "estimate_note", "bound_note"}: "estimate" is the inverse Laplace
        transform of LT eq 37 (Bromwich integral over complex Renyi orders,
        an ESTIMATE, NaN where there is none), "bound" the rdp method's
        certified upper bound on delta(eps).

    Raises:
        InvalidInputError (a non-finite epsilon), UnsupportedError (neither
        exists).
    """
    vals, ptr, shape, n = _doubles_in([epsilons] if isinstance(epsilons, (int, float)) else epsilons, "epsilons")
    if n == 0:
        raise InvalidInputError("epsilons: no points", status=1)
    opt = _options(None, rdp_conversion=rdp_conversion)
    pts = (_lib.dpa_lt_point * n)()
    info = _lib.dpa_lt_info()

    def run(p):
        err = _lib.new_error()
        with _lib.LOCK:
            st = _lib.load().dpa_lt_profile(p, ctypes.byref(opt), ptr, n, pts, ctypes.byref(info),
                                            ctypes.byref(err))
        _lib.check(st, err)

    _on_spec(spec, neighboring, run)
    col = lambda f: _array([getattr(pts[i], f) for i in range(n)])  # noqa: E731
    return {"epsilon": col("eps"), "estimate": col("estimate"), "estimate_error": col("error_estimate"),
            "estimate_remove": col("estimate_remove"), "estimate_add": col("estimate_add"),
            "bound": col("bound"), "has_estimate": bool(info.has_estimate), "has_bound": bool(info.has_bound),
            "estimate_note": _lib.text(info.estimate_note), "bound_note": _lib.text(info.bound_note)}


def clt_info(spec: Any, method: str = "gdp", *, neighboring: Any = None) -> Dict[str, Any]:
    """The central-limit quantities that `dpacct epsilon --method gdp|clt`
    prints (docs/clt.md §3-§5): mu (the CLT's, and its enclosure
    mu_lower/mu_upper), and per direction ("remove", "add") kl, kappa2,
    kbar3 (the certified upper bound on the centred third absolute moment
    Berry-Esseen uses), gamma and gamma_envelope; limit_mu (NaN unless a
    subsampled Gaussian), symmetric, clt_regime.

    Args:
        spec: a spec (docs/spec.md).
        method: "gdp" or "clt" (the same quantities).

    Raises:
        InvalidInputError (another method), UnsupportedError (leaves the gdp
        and clt methods do not take).
    """
    if method not in ("gdp", "clt"):
        raise InvalidInputError("method: must be 'gdp' or 'clt', got %r" % (method,), status=1)
    with Accountant(spec, method, neighboring=neighboring) as acc:
        c = _lib.dpa_clt_info()
        err = _lib.new_error()
        with _lib.LOCK:
            st = acc._lib.dpa_accountant_clt_info(acc._live(), ctypes.byref(c), ctypes.byref(err))
        _lib.check(st, err)
    per = lambda a: {"remove": a[0], "add": a[1]}  # noqa: E731
    return {"mu": c.mu, "mu_lower": c.mu_lower, "mu_upper": c.mu_upper, "kl": per(c.kl),
            "kappa2": per(c.kappa2), "kbar3": per(c.kbar3), "gamma": per(c.gamma),
            "gamma_envelope": per(c.gamma_envelope), "limit_mu": c.limit_mu, "symmetric": bool(c.symmetric),
            "clt_regime": bool(c.clt_regime)}
