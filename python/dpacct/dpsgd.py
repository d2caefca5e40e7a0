# dpacct Python binding: DP-SGD in the terms of Opacus and TF Privacy.
# SPDX-License-Identifier: GPL-3.0-or-later
"""DP-SGD: epochs, batch sizes and noise multipliers instead of specs.

A training run of T steps, each adding N(0, (noise_multiplier * C)^2) noise
to the sum of per-example gradients clipped to norm C, is

  sampling="poisson" (default; Opacus' and TF Privacy's analysis): every
      step trains on a Poisson subsample, each example kept independently
      with probability q = sample_rate = batch_size / dataset_size;
      add/remove neighbouring:
          repeat(T, poisson(q, gaussian(sigma=noise_multiplier)))
  sampling="without_replacement": every step trains on a batch of exactly
      batch_size examples drawn uniformly without replacement, independently
      of the other steps; replace-one neighbouring, where replacing one
      example moves the clipped sum by up to 2C:
          repeat(T, sample(n, B, gaussian(sigma=noise_multiplier, sensitivity=2)))
  sampling="random_allocation" (balls in bins): each example takes part in
      exactly one of the t = ceil(dataset_size / batch_size) steps of each
      epoch, chosen uniformly at random; add/remove neighbouring; whole epochs
      E, T = E * t:
          repeat(E, random_allocation(gaussian(sigma=noise_multiplier), t, 1))
  sampling="shuffle": one random permutation per epoch cut into batches of
      batch_size; replace-one neighbouring.  No single pair describes it:
      dpsgd_epsilon returns a certified bracket whose upper end assumes no
      amplification (each epoch one Gaussian release of sensitivity 2C,
      repeat(ceil(T / t), gaussian(sigma, sensitivity=2))) and whose lower
      end is the exact privacy of Chua et al.'s pair of datasets (random
      allocation of a shift 2C over the complete batches of each complete
      epoch); calibration meets the upper end.  dpsgd_event gives the upper
      end's event.

Step count: steps if given; otherwise T = ceil(epochs * dataset_size /
batch_size) (TF Privacy's convention), or ceil(epochs / sample_rate) when
only the rate is known, a quotient within 1e-9 (relative) of an integer
counting as that integer (so epochs=3, sample_rate=0.3 is 10 steps, not 11).
Opacus' get_noise_multiplier uses int(epochs / sample_rate) (rounding down):
pass steps= to reproduce it exactly.  The 60-epoch MNIST run (60000
examples, batch 256) is ceil(60 * 60000 / 256) = 14063 steps at
q = 256/60000.
"""
import math
from fractions import Fraction
from typing import Any, Optional

from . import events as ev
from .accountant import Accountant, calibrate
from ._errors import InvalidInputError, NumericError, OutOfMemoryError
from ._results import _Frozen, fmt_up, fmt_down, digits_for, fmt_near, EpsilonResult

__all__ = ["dpsgd_steps", "dpsgd_event", "dpsgd_epsilon", "get_noise_multiplier",
           "dpsgd_calibrate", "compute_dp_sgd_privacy", "compute_noise", "DpsgdPlan"]

SAMPLINGS = ("poisson", "without_replacement", "random_allocation", "shuffle")
_PER_EPOCH = ("random_allocation", "shuffle")
# Opacus accountant names -> dpacct methods ("prv" is a numerical PLD accountant)
_OPACUS_ACCOUNTANTS = {"rdp": "rdp", "prv": "pld", "gdp": "gdp", "pld": "pld"}


def _bad(msg):
    return InvalidInputError(msg, status=1)


def _snap_ceil(x):
    r = round(x)
    if abs(x - r) <= 1e-9 * max(1.0, abs(x)):
        return int(r)
    return int(math.ceil(x))


def _positive_int(x, name):
    if isinstance(x, bool) or int(x) != x or x < 1:
        raise _bad("%s: must be an integer >= 1, got %r" % (name, x))
    return int(x)


def dpsgd_steps(*, epochs: Any, dataset_size: Any = None, batch_size: Any = None, sample_rate: Any = None) -> int:
    """The number of steps of `epochs` epochs (see the module docstring)."""
    if not (isinstance(epochs, (int, float)) or hasattr(epochs, "dtype")) or not epochs > 0:
        raise _bad("epochs: must be > 0, got %r" % (epochs,))
    if dataset_size is not None and batch_size is not None:
        n = _positive_int(dataset_size, "dataset_size")
        b = _positive_int(batch_size, "batch_size")
        x = Fraction(float(epochs)) * n / b  # exact
        r = round(x)
        if abs(x - r) <= Fraction(1, 10 ** 9) * max(1, x):
            return max(1, int(r))
        return max(1, int(math.ceil(x)))
    if sample_rate is None:
        raise _bad("epochs: give dataset_size and batch_size, or sample_rate, to count the steps")
    return max(1, _snap_ceil(float(epochs) / float(sample_rate)))


def _setup(noise_multiplier, sample_rate, steps, epochs, dataset_size, batch_size, sampling):
    """(event, q, T, n, B) for a DP-SGD run."""
    if sampling not in SAMPLINGS:
        raise _bad("sampling: must be one of %s, got %r" % (", ".join(SAMPLINGS), sampling))
    n = None if dataset_size is None else _positive_int(dataset_size, "dataset_size")
    b = None if batch_size is None else _positive_int(batch_size, "batch_size")
    if (n is None) != (b is None) and sample_rate is None:
        raise _bad("give dataset_size and batch_size together (or sample_rate)")
    q = sample_rate
    if n is not None and b is not None:
        if b > n:
            raise _bad("batch_size: must be <= dataset_size (%d), got %d" % (n, b))
        q_nb = b / n
        if q is not None and not math.isclose(float(q), q_nb, rel_tol=1e-12):
            raise _bad("sample_rate %r disagrees with batch_size / dataset_size = %r" % (q, q_nb))
        q = q_nb
    if q is None:
        raise _bad("give sample_rate, or dataset_size and batch_size")
    if (steps is None) == (epochs is None):
        raise _bad("give exactly one of steps and epochs")
    unit = 1
    if sampling in _PER_EPOCH:
        if n is None:
            raise _bad('sampling="%s" needs dataset_size and batch_size' % sampling)
        unit = -(-n // b)  # steps per epoch: ceil(n / b)
    if steps is None:
        if sampling in _PER_EPOCH:
            if epochs != "?" and (not epochs > 0 or float(epochs) != math.floor(float(epochs))):
                raise _bad('epochs: sampling="%s" takes whole epochs, got %r' % (sampling, epochs))
            t = epochs if epochs == "?" else int(epochs) * unit
        else:
            t = dpsgd_steps(epochs=epochs, dataset_size=n, batch_size=b, sample_rate=q)
    else:
        t = steps if isinstance(steps, str) else _positive_int(steps, "steps")
        if sampling == "random_allocation" and not isinstance(t, str) and t % unit:
            raise _bad('steps: sampling="random_allocation" takes whole epochs: a multiple of '
                       'ceil(dataset_size / batch_size) = %d, got %d' % (unit, t))
    count = t if isinstance(t, str) or unit == 1 else -(-t // unit)
    if sampling == "poisson":
        step = ev.poisson(ev.gaussian(noise_multiplier), q)
        nb = "add_remove"
    elif sampling == "random_allocation":
        step = ev.random_allocation(ev.gaussian(noise_multiplier), unit, 1)
        nb = "add_remove"
    elif sampling == "shuffle":
        step = ev.gaussian(noise_multiplier, sensitivity=2)
        nb = "replace"
    else:
        if n is None:
            raise _bad('sampling="without_replacement" needs dataset_size and batch_size')
        step = ev.sample(ev.gaussian(noise_multiplier, sensitivity=2), n, b)
        nb = "replace"
    return ev.repeat(step, count).with_neighboring(nb), q, t, n, b


def _shuffle_lower_event(noise_multiplier, t, n, b):
    """Chua et al.'s pair for shuffling (docs/sampling.md): random allocation
    of a shift 2C over the floor(n / b) complete batches of each complete
    epoch, the partial batch's output left out (a post-processing: Poisson
    at rate floor(n / b) * b / n); None when no epoch is complete."""
    epochs = t // -(-n // b)
    if epochs == 0:
        return None
    return ev.repeat(_shuffle_epoch_lower(noise_multiplier, n, b), epochs).with_neighboring("add_remove")


def _shuffle_epoch_lower(noise_multiplier, n, b):
    """One epoch of Chua et al.'s pair (_shuffle_lower_event): random
    allocation of a shift 2C over the floor(n / b) complete batches, under
    Poisson at rate floor(n / b) * b / n when a batch is partial."""
    full = n // b
    ra = ev.random_allocation(ev.gaussian(noise_multiplier, sensitivity=2), full, 1)
    return ra if full * b == n else ev.poisson(ra, full * b / n)


def _shuffle_lower_result(low_ev, delta, method, options):
    """The lower-bound pair's EpsilonResult; (None, reason) if it does not fit
    the grid limits."""
    try:
        with Accountant(low_ev, method, **options) as acc:
            return acc.epsilon(delta), None
    except (OutOfMemoryError, NumericError) as e:
        return None, str(e)


def _with_shuffle_lower(result, noise_multiplier, t, n, b, method, **options):
    """result (the no-amplification upper end) with the lower end of Chua et
    al.'s pair: shuffle's bracket (docs/training.md).  The lower end is 0,
    said in the note, when no epoch is complete or the pair cannot be
    computed within the grid limits."""
    low_ev = _shuffle_lower_event(noise_multiplier, t, n, b)
    fields = result.as_dict()
    why = "no complete epoch"
    lower, certified = 0.0, result.certified
    if low_ev is not None:
        low, why = _shuffle_lower_result(low_ev, result.at, method, options)
        if low is not None:
            if not low.lower <= result.upper:
                raise RuntimeError("internal error: a shuffle lower bound above its upper bound")
            lower, certified = low.lower, result.certified and low.certified
    note = ("shuffle bracket: upper with no amplification, lower from Chua et al.'s pair of datasets "
            "(docs/training.md)") if why is None else \
        "shuffle: upper with no amplification; lower 0, its pair not computed (%s)" % why
    fields.update(lower=lower, certified=certified, note=note)
    return type(result)(**fields)


def dpsgd_event(noise_multiplier: Any, *, sample_rate: Any = None, steps: Any = None, epochs: Any = None,
                dataset_size: Any = None, batch_size: Any = None, sampling: str = 'poisson') -> ev.Event:
    """The spec of a DP-SGD run as an events.Event (composable with other
    events; "?" for noise_multiplier or steps makes a template)."""
    return _setup(noise_multiplier, sample_rate, steps, epochs, dataset_size, batch_size, sampling)[0]


def _method(accountant, method):
    if accountant is not None and method is not None:
        raise _bad("give accountant (Opacus' name) or method, not both")
    if accountant is not None:
        try:
            return _OPACUS_ACCOUNTANTS[accountant]
        except KeyError:
            raise _bad("accountant: must be one of %s, got %r"
                       % (", ".join(sorted(_OPACUS_ACCOUNTANTS)), accountant)) from None
    return method or "auto"


def _one(a, b, names):
    if a is not None and b is not None and a != b:
        raise _bad("give %s or %s, not both" % names)
    return a if a is not None else b


def dpsgd_epsilon(*, noise_multiplier: Any, delta: Optional[float] = None, target_delta: Optional[float] = None,
                  sample_rate: Any = None, steps: Any = None, epochs: Any = None, dataset_size: Any = None,
                  n: Any = None, batch_size: Any = None, sampling: str = 'poisson', accountant: Any = None,
                  method: Optional[str] = None, **options: Any) -> EpsilonResult:
    """Epsilon of a DP-SGD run at `delta` (alias target_delta): an
    EpsilonResult (claim .upper).  Give sample_rate, or dataset_size (alias
    n) and batch_size; and steps or epochs.  accountant: Opacus' names
    ("rdp", "prv" = pld, "gdp"), or method: a dpacct method (default auto).
    Other keywords are Accountant options (accuracy, ...)."""
    d = _one(delta, target_delta, ("delta", "target_delta"))
    if d is None:
        raise _bad("give delta (or target_delta)")
    event, _, t, n_, b = _setup(noise_multiplier, sample_rate, steps, epochs,
                                _one(dataset_size, n, ("dataset_size", "n")), batch_size, sampling)
    m = _method(accountant, method)
    with Accountant(event, m, **options) as acc:
        r = acc.epsilon(d)
    if sampling == "shuffle":
        r = _with_shuffle_lower(r, noise_multiplier, t, n_, b, m, **options)
    return r


def get_noise_multiplier(*, target_epsilon: float, target_delta: float, sample_rate: Any = None,
                         epochs: Any = None, steps: Any = None, accountant: Any = None,
                         epsilon_tolerance: Any = None, dataset_size: Any = None, batch_size: Any = None,
                         sampling: str = 'poisson', method: Optional[str] = None, rel_tol: Optional[float] = None,
                         **options: Any) -> float:
    """Opacus' get_noise_multiplier: the smallest noise multiplier whose
    certified epsilon at target_delta is <= target_epsilon (a float).
    epsilon_tolerance is accepted for compatibility and ignored: the search
    stops when the noise multiplier is known to rel_tol (default 1e-4,
    relative), and the value returned always meets the target.  Note the
    step count: see the module docstring (Opacus rounds epochs / sample_rate
    down)."""
    del epsilon_tolerance
    return dpsgd_calibrate(target_epsilon=target_epsilon, target_delta=target_delta,
                           solve="noise_multiplier", sample_rate=sample_rate, epochs=epochs,
                           steps=steps, dataset_size=dataset_size, batch_size=batch_size,
                           sampling=sampling, accountant=accountant, method=method,
                           rel_tol=rel_tol, **options).noise_multiplier


class DpsgdPlan(_Frozen):
    """A calibrated DP-SGD run: noise_multiplier, sample_rate, steps, epochs
    (steps * sample_rate, fractional), whole_epochs (the most whole epochs
    whose step count fits in steps), dataset_size, batch_size, sampling,
    solved (which was calibrated), result (EpsilonResult of the run at the
    target delta) and calibration (the library's Calibration)."""

    __slots__ = ("noise_multiplier", "sample_rate", "steps", "epochs", "whole_epochs",
                 "dataset_size", "batch_size", "sampling", "solved", "result", "calibration")

    def __init__(self, **kw):
        self._set(**kw)

    def __repr__(self):
        d = digits_for(self.result.upper, self.result.lower)
        return ("DpsgdPlan(solved=%r, noise_multiplier=%s, sample_rate=%s, steps=%d, epochs=%s, "
                "epsilon<=%s at delta=%s)" % (
                    self.solved, fmt_up(self.noise_multiplier, 6),
                    fmt_down(self.sample_rate, 6) if self.solved == "sample_rate" else fmt_near(self.sample_rate, 6),
                    self.steps, fmt_down(self.epochs, 6), fmt_up(self.result.upper, d),
                    fmt_near(self.result.at, 6)))


def dpsgd_calibrate(*, target_epsilon: float, target_delta: float, solve: str = 'noise_multiplier',
                    noise_multiplier: Any = None, sample_rate: Any = None, epochs: Any = None,
                    steps: Any = None, dataset_size: Any = None, batch_size: Any = None,
                    sampling: str = 'poisson', accountant: Any = None, method: Optional[str] = None,
                    rel_tol: Optional[float] = None, **options: Any) -> "DpsgdPlan":
    """Calibrate one quantity of a DP-SGD run to meet target_epsilon at
    target_delta (certified), returning a DpsgdPlan:
      solve="noise_multiplier": the smallest noise multiplier (give steps or epochs);
      solve="steps" or "epochs": the most steps (give noise_multiplier);
          epochs are reported as steps * sample_rate and as whole_epochs;
      solve="sample_rate": the largest Poisson rate (give noise_multiplier
          and steps: with epochs fixed the step count would move with it)."""
    m = _method(accountant, method)
    n = dataset_size
    if solve == "noise_multiplier":
        if noise_multiplier is not None:
            raise _bad('solve="noise_multiplier": do not give noise_multiplier')
        tmpl, q, t, n, b = _setup("?", sample_rate, steps, epochs, n, batch_size, sampling)
    elif solve in ("steps", "epochs"):
        if noise_multiplier is None or steps is not None or epochs is not None:
            raise _bad('solve="%s": give noise_multiplier and neither steps nor epochs' % solve)
        tmpl, q, t, n, b = _setup(noise_multiplier, sample_rate, "?", None, n, batch_size, sampling)
    elif solve == "sample_rate":
        if sampling != "poisson" or noise_multiplier is None or steps is None or batch_size is not None:
            raise _bad('solve="sample_rate": Poisson sampling, give noise_multiplier and steps '
                       '(and no batch_size)')
        t = _positive_int(steps, "steps")
        tmpl = ev.repeat(ev.poisson(ev.gaussian(noise_multiplier), "?"), t).with_neighboring("add_remove")
        q, b = None, None
    else:
        raise _bad("solve: must be noise_multiplier, steps, epochs or sample_rate, got %r" % (solve,))
    cal = calibrate(tmpl, target_epsilon, target_delta, m, rel_tol=rel_tol, **options)
    nm = cal.value if solve == "noise_multiplier" else noise_multiplier
    if solve in ("steps", "epochs"):
        t = cal.value * (-(-n // b) if sampling in _PER_EPOCH else 1)
    result = cal.result
    if sampling == "shuffle":
        result = _with_shuffle_lower(result, nm, t, n, b, m, **options)
    if solve == "sample_rate":
        q = cal.value
        if n is not None:
            b = int(math.floor(q * n))  # expected batch size, rounded down (more private)
    if n is not None and b is not None:
        epochs_f = t * b / n
        whole = (t * b) // n
    else:
        epochs_f = t * q
        whole = int(math.floor(epochs_f + 1e-9 * max(1.0, epochs_f)))
    return DpsgdPlan(noise_multiplier=nm, sample_rate=q, steps=t, epochs=epochs_f, whole_epochs=whole,
                     dataset_size=n, batch_size=b, sampling=sampling, solved=solve,
                     result=result, calibration=cal)


# ---------------------------------------------------------- TF Privacy ---

def compute_dp_sgd_privacy(n: Any, batch_size: Any, noise_multiplier: Any, epochs: Any, delta: float,
                           method: str = 'auto', **options: Any) -> float:
    """TF Privacy's compute_dp_sgd_privacy(n, batch_size, noise_multiplier,
    epochs, delta) -> (eps, opt_order): here eps is dpacct's certified upper
    bound (Poisson sampling at q = batch_size / n, ceil(epochs * n /
    batch_size) steps) and opt_order the Renyi order when method="rdp"
    (NaN otherwise).  dpsgd_epsilon gives the whole bracket."""
    r = dpsgd_epsilon(noise_multiplier=noise_multiplier, delta=delta, epochs=epochs, dataset_size=n,
                      batch_size=batch_size, method=method, **options)
    return r.upper, (r.order if r.order is not None else float("nan"))


def compute_noise(n: Any, batch_size: Any, target_epsilon: float, epochs: Any, delta: float,
                  noise_lbd: Any = None, method: str = 'auto', **options: Any) -> float:
    """TF Privacy's compute_noise(n, batch_size, target_epsilon, epochs,
    delta, noise_lbd) -> noise multiplier (noise_lbd is ignored: the search
    needs no lower end)."""
    del noise_lbd
    return dpsgd_calibrate(target_epsilon=target_epsilon, target_delta=delta, solve="noise_multiplier",
                           epochs=epochs, dataset_size=n, batch_size=batch_size, method=method,
                           **options).noise_multiplier
