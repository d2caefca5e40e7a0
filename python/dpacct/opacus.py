# dpacct Python binding: an accountant for Opacus (pytorch/opacus).
# SPDX-License-Identifier: GPL-3.0-or-later
"""DpacctAccountant: Opacus' accountant interface (IAccountant) over dpacct.

Opacus' PrivacyEngine calls `step(noise_multiplier=, sample_rate=)` after
every optimizer step (through `get_optimizer_hook_fn`) and
`get_epsilon(delta)` when asked for the privacy spent.  This accountant
keeps Opacus' `history`, a list of (noise_multiplier, sample_rate,
num_steps) with consecutive equal steps merged, and accounts it as

    compose over the history of
        repeat(num_steps, poisson(sample_rate, gaussian(sigma=noise_multiplier)))

with add/remove neighbours: Poisson-subsampled Gaussian steps, the spec
`dpacct dpsgd --sampling poisson` builds (a history of one entry is exactly
that spec, so get_epsilon returns the upper bound `dpacct dpsgd` prints).
A step with noise_multiplier 0 is non-private (epsilon inf); one with
sample_rate 0 touches no record (no_op).

get_epsilon returns the certified upper bound (a float);
get_epsilon_bracket the certified (lower, upper) pair; epsilon_result the
whole EpsilonResult.  Results are cached per (history, delta), and the
dpacct Accountant of the current history is kept for further queries.

Per-epoch queries in one pass.  Opacus asks get_epsilon after every epoch
while the history is one (noise, rate) entry.  The first such query at k
steps is answered by the single-count accountant (the value `dpacct dpsgd`
prints), and one call of dpacct.epsilon_counts also evaluates the step
counts of the next HORIZON_EPOCHS epochs (predicted from the sample rate:
the counts j / rate, rounded as k is, for the epochs j after k's; multiples
of k when k is no whole number of epochs), which are cached: the next
per-epoch queries are answered from the cache as long as the history stays
that entry and its count is one of the predicted ones.  A cached answer is
a certified bracket within the same accuracy target, but from the one-pass
grid, so its numbers may differ (inside the brackets) from the single-count
query's.  epsilon_result(delta, exact=True) (and final_epsilon) always
asks the single-count accountant: use it for the final figure that must
equal `dpacct dpsgd`'s.

Samplers other than Poisson.  DpacctAccountant(sampling="random_allocation")
accounts each history entry as whole epochs of balls-in-bins sampling:
t = 1 / sample_rate steps per epoch (Opacus sets sample_rate to 1 /
len(data_loader)), each example in exactly one step of each epoch,
    repeat(ceil(n / t), random_allocation(gaussian(noise_multiplier), t, 1));
a partial epoch counts as a whole one in the upper bound (its outputs are
a prefix of the whole epoch's, a post-processing) and is left out of the
lower bound.  DpacctAccountant(sampling="shuffle", dataset_size=N) is for
Opacus' shuffled, non-Poisson data loaders (make_private(...,
poisson_sampling=False)): one permutation per epoch, batches of B = N * q
examples, replace-one neighbours; its bracket comes from two pairs: the
upper end with no amplification (each epoch touched one Gaussian of
sensitivity 2C), the lower end the exact privacy of Chua et al.'s pair of
datasets (docs/sampling.md, "Shuffled epochs").  No per-epoch look-ahead
for these two.

With Opacus importable (it needs torch) the class is a subclass of
opacus.accountants.IAccountant; without it, it has the same methods.
`register()` adds it to Opacus' registry under the name "dpacct", so that
PrivacyEngine(accountant="dpacct") and make_private_with_epsilon use it:

    from dpacct.opacus import DpacctAccountant, register
    register()
    engine = opacus.PrivacyEngine(accountant="dpacct")
    # or, on an existing engine: engine.accountant = DpacctAccountant()
"""
from collections import OrderedDict
from copy import deepcopy
import math
import numbers

from . import events as ev
from .accountant import Accountant, epsilon_counts
from ._errors import InvalidInputError, NumericError, OutOfMemoryError

try:  # Opacus imports torch; neither is needed here
    from opacus.accountants.accountant import IAccountant as _Base
    HAVE_OPACUS = True
except Exception:  # ImportError, or a broken torch install
    _Base = object
    HAVE_OPACUS = False

__all__ = ["DpacctAccountant", "OpacusAccountant", "register", "MECHANISM", "HAVE_OPACUS", "SAMPLINGS"]

SAMPLINGS = ("poisson", "random_allocation", "shuffle")

MECHANISM = "dpacct"
# Epochs' worth of step counts one get_epsilon call evaluates ahead (module
# docstring): 64 covers the usual training runs with one pass, whose cost
# grows about linearly in the number of counts (~2 ms CPU each for DP-SGD).
HORIZON_EPOCHS = 64


def _rate(x, name):
    if hasattr(x, "item") and getattr(x, "ndim", 0) == 0:
        x = x.item()  # numpy or torch scalar
    if isinstance(x, bool) or not isinstance(x, numbers.Real) or not math.isfinite(x):
        raise InvalidInputError("%s: expected a finite real number, got %r" % (name, x), status=1)
    return float(x)


def _future_counts(k, q, horizon):
    """The step counts at the ends of the `horizon` epochs after the one k
    steps end, an epoch being 1/q steps, rounded as k is (up, down or to
    nearest); multiples of k when k is no rounded whole number of epochs."""
    def at(j):
        x = j / q
        r = round(x)
        return float(r) if abs(x - r) <= 1e-9 * x else x
    m = round(k * q)
    if m >= 1:
        for f in (math.ceil, math.floor, round):
            if int(f(at(m))) == k:
                out = [int(f(at(j))) for j in range(m + 1, m + horizon + 1)]
                return sorted(set(c for c in out if k < c <= 1e15))
    return [k * j for j in range(2, horizon + 2) if k * j <= 1e15]


class DpacctAccountant(_Base):
    """Opacus' IAccountant with dpacct's certified bounds (module docstring).

    method: the dpacct method ("auto", the default, is what `dpacct dpsgd`
    uses); options: Accountant's keyword options (accuracy, grid_step, ...).
    """

    def __init__(self, *, method="auto", sampling="poisson", dataset_size=None, **options):
        if sampling not in SAMPLINGS:
            raise InvalidInputError("sampling: must be one of %s, got %r" % (", ".join(SAMPLINGS), sampling),
                                    status=1)
        if sampling == "shuffle" and (isinstance(dataset_size, bool) or not isinstance(dataset_size, numbers.Integral)
                                      or dataset_size < 1):
            raise InvalidInputError('sampling="shuffle": give dataset_size, the number of examples (an integer '
                                    '>= 1), got %r' % (dataset_size,), status=1)
        self.history = []  # (noise_multiplier, sample_rate, num_steps), as Opacus keeps it
        self._sampling = sampling
        self._n = None if dataset_size is None else int(dataset_size)
        self._method = method
        self._options = dict(options)
        self._key = None   # the history the accountant below accounts
        self._acc = None
        self._results = {}  # (history, delta) -> EpsilonResult
        self._ahead = {}    # (noise, rate, delta) -> {steps: EpsilonResult} from one pass

    # ---- Opacus' interface ----
    def step(self, *, noise_multiplier, sample_rate):
        """Record one optimizer step (merged with the previous one when both
        values are the same, as Opacus' accountants do)."""
        nm = _rate(noise_multiplier, "noise_multiplier")
        q = _rate(sample_rate, "sample_rate")
        if nm < 0:
            raise InvalidInputError("noise_multiplier: must be >= 0, got %r" % nm, status=1)
        if not 0 <= q <= 1:
            raise InvalidInputError("sample_rate: must be in [0, 1], got %r" % q, status=1)
        if self.history and self.history[-1][0] == nm and self.history[-1][1] == q:
            last = self.history[-1]
            self.history[-1] = (last[0], last[1], last[2] + 1)
        else:
            self.history.append((nm, q, 1))

    def __len__(self):
        """Number of optimizer steps taken so far."""
        return sum(int(n) for _, _, n in self.history)

    @classmethod
    def mechanism(cls):
        """The name under which `register()` registers this class: "dpacct"."""
        return MECHANISM

    def get_epsilon(self, delta, *args, **kwargs):
        """The certified upper bound on epsilon at `delta` (a float: 0.0
        before the first step, inf after a non-private one); per-epoch
        calls on a one-entry history are answered from one pass (module
        docstring; final_epsilon gives the single-count value).  Other
        arguments Opacus passes to its own accountants (alphas, eps_error,
        ...) are accepted and ignored: the bound is certified whatever they
        are."""
        del args, kwargs
        return self.epsilon_result(delta).upper

    def get_epsilon_bracket(self, delta):
        """(lower, upper): certified bounds on the epsilon at `delta`."""
        r = self.epsilon_result(delta)
        return (r.lower, r.upper)

    def get_optimizer_hook_fn(self, sample_rate):
        """The hook Opacus attaches to its DPOptimizer: one step at the
        optimizer's noise multiplier and at sample_rate times the number of
        accumulated iterations (as Opacus' IAccountant does)."""
        def hook_fn(optim):
            self.step(noise_multiplier=optim.noise_multiplier,
                      sample_rate=sample_rate * optim.accumulated_iterations)
        return hook_fn

    def state_dict(self, destination=None):
        """{"history": ..., "mechanism": "dpacct"} (Opacus' layout)."""
        if destination is None:
            destination = OrderedDict()
        destination["history"] = deepcopy(self.history)
        destination["mechanism"] = self.mechanism()
        return destination

    def load_state_dict(self, state_dict):
        """Restore the history of state_dict(); ValueError (Opacus' choice)
        for an empty dict, a missing key or another mechanism's state."""
        if not state_dict:
            raise ValueError("state dict is either None or empty and hence cannot be loaded "
                             "into Privacy Accountant.")
        for key in ("history", "mechanism"):
            if key not in state_dict:
                raise ValueError("state_dict does not have the key `%s`. Cannot be loaded into "
                                 "Privacy Accountant." % key)
        if state_dict["mechanism"] != self.mechanism():
            raise ValueError("state_dict of %s cannot be loaded into Privacy Accountant with "
                             "mechanism %s" % (state_dict["mechanism"], self.mechanism()))
        history = []
        for i, entry in enumerate(state_dict["history"]):
            try:
                nm, q, n = entry
            except (TypeError, ValueError):
                raise ValueError("history[%d]: expected (noise_multiplier, sample_rate, num_steps), "
                                 "got %r" % (i, entry)) from None
            if isinstance(n, bool) or int(n) != n or n < 0:
                raise ValueError("history[%d]: num_steps must be an integer >= 0, got %r" % (i, n))
            history.append((_rate(nm, "noise_multiplier"), _rate(q, "sample_rate"), int(n)))
        self.history = history

    # ---- dpacct's additions ----
    def event(self, lower=False):
        """The history as a dpacct Event: with add/remove neighbours (replace
        for shuffle).  lower: the event whose lower bound is the bracket's
        (random_allocation: whole epochs only; shuffle: Chua et al.'s pair)."""
        nb = "replace" if self._sampling == "shuffle" and not lower else "add_remove"
        parts = [self._entry(nm, q, n, lower) for nm, q, n in self.history]
        if not parts:
            return ev.no_op().with_neighboring(nb)
        one = parts[0] if len(parts) == 1 else ev.compose(parts)
        return one.with_neighboring(nb)

    @staticmethod
    def _epoch_steps(q):
        """Steps per epoch at sample rate q: 1 / q, a quotient within 1e-9 of
        an integer taken as that integer, else rounded up."""
        x = 1.0 / q
        r = round(x)
        return int(r) if abs(x - r) <= 1e-9 * x else int(math.ceil(x))

    def _entry(self, nm, q, n, lower=False):
        n = int(n)
        if n == 0 or q == 0:
            return ev.no_op()
        if self._sampling == "poisson":
            step = ev.non_private() if nm == 0 else ev.poisson(ev.gaussian(nm), q)
            return ev.repeat(step, n)
        t = self._epoch_steps(q)
        epochs = n // t if lower else -(-n // t)
        if epochs == 0:
            return ev.no_op()
        if nm == 0:
            return ev.repeat(ev.non_private(), epochs)
        if self._sampling == "random_allocation":
            return ev.repeat(ev.random_allocation(ev.gaussian(nm), t, 1), epochs)
        if not lower:  # shuffle, upper end: no amplification
            return ev.repeat(ev.gaussian(nm, sensitivity=2), epochs)
        from .dpsgd import _shuffle_epoch_lower
        b = max(1, round(q * self._n))  # shuffle's batch size
        return ev.repeat(_shuffle_epoch_lower(nm, self._n, b), epochs)

    def epsilon_result(self, delta, exact=False):
        """The EpsilonResult (certified bracket and details) at `delta`.
        exact: always the single-count accountant's result (the value
        `dpacct dpsgd` gives), never one from the per-epoch pass (module
        docstring)."""
        d = _rate(delta, "delta")
        key = tuple(tuple(h) for h in self.history)
        hit = self._results.get((key, d))
        if hit is not None:
            return hit
        if not exact and len(key) == 1:
            nm, q, k = key[0]
            ahead = self._ahead.get((nm, q, d))
            if ahead is not None and int(k) in ahead:
                return ahead[int(k)]
        if key != self._key:
            self.close()
            self._results = {}
            self._acc = Accountant(self.event(), self._method, **self._options)
            self._key = key
        r = self._acc.epsilon(d)
        if self._sampling != "poisson":
            r = self._with_lower(r, d)
        self._results[(key, d)] = r
        if len(key) == 1 and self._sampling == "poisson":
            self._look_ahead(key[0], d)
        return r

    def _with_lower(self, r, d):
        """r with the lower end of the lower event (module docstring) when it
        differs from the accounted one."""
        from .dpsgd import _shuffle_lower_result
        low_ev = self.event(lower=True)
        if low_ev == self.event():
            return r
        low, why = _shuffle_lower_result(low_ev, d, self._method, self._options)
        f = r.as_dict()
        if low is None:
            f.update(lower=0.0, note="lower 0: the lower-bound pair was not computed (%s)" % why)
            return type(r)(**f)
        if not low.lower <= r.upper:
            raise NumericError("internal error: a lower bound above the upper bound")
        f.update(lower=low.lower, certified=r.certified and low.certified,
                 note=("shuffle bracket: upper with no amplification, lower from Chua et al.'s pair of datasets"
                       if self._sampling == "shuffle" else "random allocation: a partial epoch counts as a whole "
                       "one in the upper bound and is left out of the lower"))
        return type(r)(**f)

    def final_epsilon(self, delta):
        """The certified upper bound of the single-count accountant (equal
        to `dpacct dpsgd`'s for a one-entry history): get_epsilon without
        the per-epoch pass."""
        return self.epsilon_result(delta, exact=True).upper

    def _look_ahead(self, entry, d):
        """Evaluate the counts of the next HORIZON_EPOCHS epochs of a
        one-entry history (nm, q, k) in one pass and cache them."""
        nm, q, k = entry
        k = int(k)
        if nm == 0 or q == 0 or k == 0:
            return
        counts = _future_counts(k, q, HORIZON_EPOCHS)
        if not counts:
            return
        try:
            rs = epsilon_counts(ev.poisson(ev.gaussian(nm), q), counts, d, self._method,
                                neighboring="add_remove", **self._options)
        except (OutOfMemoryError, NumericError):  # a far count too large: no look-ahead
            return
        self._ahead = {(nm, q, d): dict(zip(counts, rs))}

    def close(self):
        """Free the dpacct Accountant kept for the current history."""
        if self._acc is not None:
            self._acc.close()
        self._acc = None
        self._key = None

    def __getstate__(self):
        return {"history": list(self.history), "method": self._method, "options": self._options,
                "sampling": self._sampling, "dataset_size": self._n}

    def __setstate__(self, state):
        self.__init__(method=state["method"], sampling=state.get("sampling", "poisson"),
                      dataset_size=state.get("dataset_size"), **state["options"])
        self.history = list(state["history"])

    def __repr__(self):
        return "DpacctAccountant(steps=%d, history=%r)" % (len(self), self.history)


OpacusAccountant = DpacctAccountant


def register(force=True):
    """Register DpacctAccountant in Opacus' accountant registry under
    "dpacct", its mechanism() (needs Opacus), so that
    PrivacyEngine(accountant="dpacct") and make_private_with_epsilon use it.
    Returns the class."""
    from opacus.accountants import register_accountant
    register_accountant(MECHANISM, DpacctAccountant, force=force)
    return DpacctAccountant
