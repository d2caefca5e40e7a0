# dpacct Python binding: a drop-in for dp_accounting's PrivacyAccountant.
# SPDX-License-Identifier: GPL-3.0-or-later
"""PrivacyAccountant: dp_accounting's accountant interface over dpacct.

Code written for dp_accounting switches in one line:

    accountant = dp_accounting.pld.PLDAccountant()     # before
    accountant = dpacct.PrivacyAccountant()            # after
    accountant.compose(event)                          # DpEvents, unchanged
    eps = accountant.get_epsilon(target_delta=1e-5)    # a float: the certified upper bound
"""
from typing import Any, List, Optional, Tuple

from .accountant import Accountant
from ._results import EpsilonResult, DeltaResult
from ._dp_events import from_dp_event, neighboring_from, replace_one_sensitivity, replace_special
from . import events as ev
from ._errors import DpacctError

__all__ = ["PrivacyAccountant"]


class PrivacyAccountant:
    """compose(event, count=1), get_epsilon(target_delta),
    get_delta(target_epsilon), supports(event), ledger; plus
    epsilon_result / delta_result for the whole bracket and .accountant for
    the dpacct Accountant of what was composed.

    neighboring_relation: dp_accounting's NeighboringRelation
    (ADD_OR_REMOVE_ONE, the default, or REPLACE_ONE) or "add_remove" /
    "replace".  method and the keyword options are Accountant's."""

    def __init__(self, neighboring_relation=None, method="auto", **options):
        self._nb = neighboring_from(neighboring_relation) or "add_remove"
        # REPLACE_SPECIAL: add_remove, randomized response against the special record
        self._special = self._nb == "replace_special"
        if self._special:
            self._nb = "add_remove"
        self._method = method
        self._options = options
        self._events = []   # dpacct Events
        self._ledger = []   # what was composed, as given
        self._acc = None

    @property
    def neighboring_relation(self) -> str:
        """The neighbouring relation: "add_remove" or "replace"."""
        return self._nb

    @property
    def ledger(self) -> List[Any]:
        """The events composed so far, as given (DpEvents stay DpEvents)."""
        return list(self._ledger)

    def supports(self, event: Any) -> bool:
        """True if the event converts to a dpacct event (the method may still
        refuse it: that is reported by get_epsilon)."""
        try:
            ev.as_event(event) if isinstance(event, (dict, str, ev.Event)) else from_dp_event(event)
            return True
        except DpacctError:
            return False

    def compose(self, event: Any, count: Any = 1) -> "PrivacyAccountant":
        """Add `count` runs of `event` (a DpEvent, an Event or a spec dict);
        returns self.  UnsupportedError for events dpacct cannot account."""
        if isinstance(event, (dict, str, ev.Event)):
            e = ev.as_event(event)
        else:
            # a DpEvent's sums move by 2C under replace-one (replace_one_sensitivity)
            e = from_dp_event(event)
            if self._nb == "replace":
                e = replace_one_sensitivity(e)
            if self._special:
                e = replace_special(e)
        if count != 1:
            e = ev.repeat(e, count)
        self._events.append(e)
        self._ledger.append((event, count))
        if self._acc is not None:
            self._acc.close()
        self._acc = None
        return self

    @property
    def event(self) -> ev.Event:
        """Everything composed so far as one Event (no_op if nothing)."""
        if not self._events:
            return ev.no_op()
        if len(self._events) == 1:
            return self._events[0]
        return ev.compose(self._events)

    @property
    def accountant(self) -> Accountant:
        """The dpacct Accountant of everything composed so far (built on first
        use, rebuilt after compose)."""
        if self._acc is None:
            self._acc = Accountant(self.event.with_neighboring(None), self._method,
                                   neighboring=self._nb, **self._options)
        return self._acc

    def epsilon_result(self, target_delta: float) -> EpsilonResult:
        """The whole epsilon bracket at target_delta (an EpsilonResult)."""
        return self.accountant.epsilon(target_delta)

    def delta_result(self, target_epsilon: float) -> DeltaResult:
        """The whole delta bracket at target_epsilon (a DeltaResult)."""
        return self.accountant.delta(target_epsilon)

    def get_epsilon(self, target_delta: float) -> float:
        """The certified upper bound on epsilon at target_delta (a float; inf
        for a non-private composition)."""
        return self.epsilon_result(target_delta).upper

    def get_delta(self, target_epsilon: float) -> float:
        """The certified upper bound on delta at target_epsilon (a float)."""
        return self.delta_result(target_epsilon).upper
