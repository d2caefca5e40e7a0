# dpacct Python binding: accountants for Google's dp_accounting interface.
# SPDX-License-Identifier: GPL-3.0-or-later
"""dp_accounting's PrivacyAccountant over dpacct: drop-in accountants.

    import dp_accounting
    from dpacct.dp_accounting import PLDAccountant

    acc = PLDAccountant()                                  # was dp_accounting.pld.PLDAccountant()
    acc.compose(dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.1)), 1000)
    acc.get_epsilon(1e-5)                                  # the certified upper bound (a float)
    dp_accounting.calibrate_dp_mechanism(PLDAccountant, make_event, 1.0, 1e-5)

When dp_accounting is importable the classes here are real subclasses of
dp_accounting.PrivacyAccountant: compose() checks the event with
_maybe_compose(event, count, False), adds it to the ledger (a
DpEventBuilder: `ledger` is the composed DpEvent, NoOpDpEvent when empty,
as dp_accounting builds it) and composes it; supports(event) is the check
alone.  Without dp_accounting a stand-in base with the same methods is
used, NeighboringRelation and UnsupportedEventError are stand-ins of the
same names, and events may be dpacct Events or objects named like
DpEvents; the ledger is then a dpacct Event built the same way.

Events are converted by dpacct.from_dp_event (every DpEvent class of
dp_accounting converts or is refused with a reason: docs/frameworks.md);
the accountant's neighbouring relation is ADD_OR_REMOVE_ONE (default),
REPLACE_ONE or REPLACE_SPECIAL (the library's "replace_special": the
add/remove analysis, randomized response against the special record's
uniform report; docs/spec.md).  Under REPLACE_ONE,
GaussianDpEvent, LaplaceDpEvent and SingleEpochTreeAggregationDpEvent
(noise relative to a bound C on each summed value's norm) are accounted
with sensitivity 2 (C to C' moves the sum by up to 2C), as dp_accounting's
PLD accountant does for the Gaussian.  An event whose
kind the library analyses only under the other relation (for example
SampledWithoutReplacementDpEvent under add/remove) is unsupported.

  DpacctAccountant(neighboring_relation, *, method="auto", **options)
      method: any dpacct method; "auto" picks the tightest certified one
  PLDAccountant(neighboring_relation, value_discretization_interval=None, **options)
      method "pld"; value_discretization_interval, if given, is the fixed
      grid step (dpacct's grid_step; by default dpacct sizes its grid for
      its accuracy target)
  RDPAccountant (alias RdpAccountant, dp_accounting's spelling)
      (orders=None, neighboring_relation, **options)
      method "rdp" (dpacct's own orders; `orders` is accepted and ignored)

get_epsilon / get_delta return the certified upper bound (a float);
get_epsilon_bracket / get_delta_bracket the (lower, upper) pair;
epsilon_result / delta_result the whole Result.
"""
import enum

from . import events as ev
from ._dp_events import from_dp_event, neighboring_from, replace_one_sensitivity
from ._errors import DpacctError, LibraryNotFoundError

try:
    import dp_accounting as _dpa
    from dp_accounting import dp_event as _dp_event
    from dp_accounting import privacy_accountant as _pa
    HAVE_DP_ACCOUNTING = True
except ImportError:
    _dpa = None
    HAVE_DP_ACCOUNTING = False

__all__ = ["DpacctAccountant", "PLDAccountant", "RDPAccountant", "RdpAccountant", "NeighboringRelation",
           "UnsupportedEventError", "HAVE_DP_ACCOUNTING"]


if HAVE_DP_ACCOUNTING:
    _Base = _pa.PrivacyAccountant
    NeighboringRelation = _pa.NeighboringRelation
    UnsupportedEventError = _pa.UnsupportedEventError
    _ErrorDetails = _pa.PrivacyAccountant.CompositionErrorDetails
else:
    class NeighboringRelation(enum.Enum):
        """Stand-in for dp_accounting.NeighboringRelation (same names)."""
        ADD_OR_REMOVE_ONE = 1
        REPLACE_ONE = 2
        REPLACE_SPECIAL = 3

    class UnsupportedEventError(Exception):
        """Stand-in for dp_accounting.UnsupportedEventError."""

    class _ErrorDetails:
        """Stand-in for PrivacyAccountant.CompositionErrorDetails."""
        __slots__ = ("invalid_event", "error_message")

        def __init__(self, invalid_event, error_message):
            self.invalid_event = invalid_event
            self.error_message = error_message

    class _EventBuilder:
        """dp_accounting's DpEventBuilder for dpacct Events: consecutive
        equal events merge, a repeat is unrolled into its count, nothing
        composed is no_op, one event is itself."""

        def __init__(self):
            self._counts = []

        def compose(self, event, count=1):
            if isinstance(count, bool) or not isinstance(count, int):
                raise TypeError("`count` must be an integer. Found %s." % type(count))
            if count < 1:
                raise ValueError("`count` must be positive. Found %d." % count)
            if event.kind == "no_op":
                return
            if event.kind == "repeat":
                return self.compose(event.children[0], count * int(event.params["count"]))
            if self._counts and self._counts[-1][0] == event:
                self._counts[-1] = (event, self._counts[-1][1] + count)
            else:
                self._counts.append((event, count))

        def build(self):
            parts = [e if n == 1 else ev.repeat(e, n) for e, n in self._counts]
            if not parts:
                return ev.no_op()
            return parts[0] if len(parts) == 1 else ev.compose(parts)

    class _Base:
        """Stand-in for dp_accounting.PrivacyAccountant (same methods)."""

        def __init__(self, neighboring_relation):
            self._neighboring_relation = neighboring_relation
            self._ledger = _EventBuilder()

        @property
        def neighboring_relation(self):
            return self._neighboring_relation

        def supports(self, event):
            return self._maybe_compose(event, 0, False) is None

        def compose(self, event, count=1):
            err = self._maybe_compose(event, count, False)
            if err:
                raise UnsupportedEventError("Unsupported event: %r. Error: [%s] caused by subevent %r."
                                            % (event, err.error_message, err.invalid_event))
            self._ledger.compose(_as_dpacct(event), count)
            self._maybe_compose(event, count, True)
            return self

        @property
        def ledger(self):
            return self._ledger.build()

        def get_delta(self, target_epsilon):
            raise NotImplementedError()


_ADD_REMOVE = NeighboringRelation.ADD_OR_REMOVE_ONE


def _as_dpacct(event, nb="add_remove"):
    """event as a dpacct Event for an accountant of relation nb.  DpEvents
    go through from_dp_event; under replace-one, the leaves on sums get
    sensitivity 2 (_dp_events.replace_one_sensitivity says why).  dpacct
    Events are taken as they are."""
    if isinstance(event, (ev.Event, dict, str)):
        return ev.as_event(event)
    out = from_dp_event(event)
    # replace_special: the library's relation (the accountant is built with it)
    return replace_one_sensitivity(out) if nb == "replace" else out


class DpacctAccountant(_Base):
    """A dp_accounting PrivacyAccountant whose answers are dpacct's
    certified bounds (module docstring).

    neighboring_relation: NeighboringRelation.ADD_OR_REMOVE_ONE (default),
    REPLACE_ONE or REPLACE_SPECIAL (the library's "replace_special": add_remove,
    with randomized response against the special record).  method: a dpacct
    method ("auto" by default); options: Accountant's keyword options.
    """

    _default_method = "auto"

    def __init__(self, neighboring_relation=_ADD_REMOVE, *, method=None, **options):
        # "add_remove", "replace" or "replace_special", the library's relation
        self._nb = neighboring_from(neighboring_relation) or "add_remove"
        super().__init__(neighboring_relation if self._nb == "replace_special" else
                         _ADD_REMOVE if self._nb == "add_remove" else NeighboringRelation.REPLACE_ONE)
        self._method = method or self._default_method
        self._options = dict(options)
        self._events = []  # [(dpacct Event, count)], consecutive equal events merged
        self._checked = set()  # events the library took already (no new check per step)
        self._acc = None

    # ---- dp_accounting's interface ----
    def _maybe_compose(self, event, count, do_compose):
        """None if `event` converts to a dpacct spec the library accepts
        under this accountant's relation (composed `count` times when
        do_compose), else CompositionErrorDetails saying why."""
        try:
            e = _as_dpacct(event, self._nb)
            if e not in self._checked:
                _check_spec(e, self._nb, self._method, self._options)
                if len(self._checked) > 256:
                    self._checked.clear()
                self._checked.add(e)
        except DpacctError as exc:
            return _ErrorDetails(invalid_event=event, error_message=str(exc))
        if do_compose and count != 0:
            self._add(e, count)
            self._drop()
        return None

    def _add(self, e, count):
        # as DpEventBuilder: a repeat is unrolled, equal neighbours merge, so that
        # composing one step T times is the spec repeat(step, T)
        while e.kind == "repeat" and isinstance(e.params.get("count"), int):
            e, count = e.children[0], count * int(e.params["count"])
        if e.kind == "no_op":
            return
        if self._events and self._events[-1][0] == e:
            self._events[-1] = (e, self._events[-1][1] + count)
        else:
            self._events.append((e, count))

    def _compose(self, event, count=1):
        """dp_accounting's former abstract method: compose without the
        ledger (UnsupportedEventError if the event is not supported)."""
        err = self._maybe_compose(event, count, False)
        if err:
            raise UnsupportedEventError(err.error_message)
        self._maybe_compose(event, count, True)

    def get_epsilon(self, target_delta):
        """The certified upper bound on epsilon at target_delta (a float;
        inf when no finite epsilon holds, e.g. after a NonPrivateDpEvent)."""
        return self.epsilon_result(target_delta).upper

    def get_delta(self, target_epsilon):
        """The certified upper bound on delta at target_epsilon (a float)."""
        return self.delta_result(target_epsilon).upper

    # ---- dpacct's additions ----
    def get_epsilon_bracket(self, target_delta):
        """(lower, upper): certified bounds on epsilon at target_delta."""
        r = self.epsilon_result(target_delta)
        return (r.lower, r.upper)

    def get_delta_bracket(self, target_epsilon):
        """(lower, upper): certified bounds on delta at target_epsilon."""
        r = self.delta_result(target_epsilon)
        return (r.lower, r.upper)

    def epsilon_result(self, target_delta):
        """The EpsilonResult (bracket and details) at target_delta."""
        return self.accountant.epsilon(target_delta)

    def delta_result(self, target_epsilon):
        """The DeltaResult (bracket and details) at target_epsilon."""
        return self.accountant.delta(target_epsilon)

    @property
    def event(self):
        """Everything composed so far as one dpacct Event (no_op if nothing)."""
        parts = [e if n == 1 else ev.repeat(e, n) for e, n in self._events]
        if not parts:
            return ev.no_op()
        return parts[0] if len(parts) == 1 else ev.compose(parts)

    @property
    def accountant(self):
        """The dpacct Accountant of what was composed (kept until the next compose)."""
        if self._acc is None:
            from .accountant import Accountant
            self._acc = Accountant(self.event, self._method, neighboring=self._nb, **self._options)
        return self._acc

    def _drop(self):
        if self._acc is not None:
            self._acc.close()
        self._acc = None

    def close(self):
        """Free the dpacct Accountant kept for the composition."""
        self._drop()

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_acc"] = None  # rebuilt on the next query
        state["_checked"] = None
        state["_events"] = [(e.to_dict(), n) for e, n in self._events]
        if not HAVE_DP_ACCOUNTING:
            state["_ledger"] = [(e.to_dict(), n) for e, n in self._ledger._counts]
        return state

    def __setstate__(self, state):
        state = dict(state)
        state["_events"] = [(ev.from_dict(d), n) for d, n in state["_events"]]
        state["_checked"] = set()
        if not HAVE_DP_ACCOUNTING:
            builder = _EventBuilder()
            builder._counts = [(ev.from_dict(d), n) for d, n in state["_ledger"]]
            state["_ledger"] = builder
        self.__dict__.update(state)

    def __repr__(self):
        return "%s(neighboring=%r, method=%r, events=%d)" % (type(self).__name__, self._nb,
                                                              self._method, len(self._events))


class PLDAccountant(DpacctAccountant):
    """dp_accounting.pld.PLDAccountant's signature, dpacct's PLD method.
    value_discretization_interval: None (default: dpacct sizes the grid for
    its accuracy) or a fixed grid step (dpacct's grid_step option)."""

    _default_method = "pld"

    def __init__(self, neighboring_relation=_ADD_REMOVE, value_discretization_interval=None, **options):
        if value_discretization_interval is not None:
            options.setdefault("grid_step", value_discretization_interval)
        super().__init__(neighboring_relation, **options)


class RDPAccountant(DpacctAccountant):
    """dp_accounting.rdp.RDPAccountant's signature, dpacct's RDP method
    (upper bounds only; the orders are dpacct's own, `orders` is ignored)."""

    _default_method = "rdp"

    def __init__(self, orders=None, neighboring_relation=_ADD_REMOVE, **options):
        del orders
        super().__init__(neighboring_relation, **options)


RdpAccountant = RDPAccountant  # dp_accounting's spelling (dp_accounting.rdp.RdpAccountant)


def _check_spec(event, nb, method, options):
    """Let the library take the event under relation nb and the method (it
    refuses kinds analysed under the other relation, and leaves the method
    cannot handle); skipped when the library is absent (get_epsilon will
    say so).  Building an accountant does no accounting yet."""
    from .accountant import Accountant
    try:
        Accountant(event.with_neighboring(None), method, neighboring=nb, **options).close()
    except LibraryNotFoundError:
        pass
