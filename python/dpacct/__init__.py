# dpacct Python binding.
# SPDX-License-Identifier: GPL-3.0-or-later
"""dpacct: certified differential-privacy accounting (Python binding of libdpacct).

    >>> import dpacct
    >>> from dpacct import events as ev
    >>> acc = dpacct.Accountant(ev.poisson(ev.gaussian(1.1), 256 / 60000) * 14063)
    >>> r = acc.epsilon(1e-5)        # EpsilonResult: claim r.upper

Every answer is an interval [lower, upper] containing the true value
(docs/guarantees.md).  See docs/python.md for the whole API.

The event builder (dpacct.events) and the dp_accounting converter work
without the shared library; everything else loads libdpacct.so on first
use ($DPACCT_LIBRARY, the source checkout's build/, then the system).
"""
from ._errors import (DpacctError, InvalidInputError, InvalidSpecError, UnsupportedError,
                      NumericError, OutOfMemoryError, DpacctIOError, StorageError,
                      LibraryNotFoundError, LibraryBugError)
from . import events
from .events import Event
from ._dp_events import from_dp_event
from ._results import (Result, EpsilonResult, DeltaResult, Profile, EpsilonCurve, RenyiCurve, GdpMu,
                       RenyiValue, RenyiResult, Calibration)
from .accountant import Accountant, calibrate, epsilon_counts, renyi, renyi_curve, canonical_spec, spec_json, METHODS
from . import tradeoff
from .tradeoff import Tradeoff
from .filter import Filter, FilterDecision
from .ledger import Ledger, LedgerDecision
from .dpsgd import (dpsgd_steps, dpsgd_event, dpsgd_epsilon, get_noise_multiplier, dpsgd_calibrate,
                    compute_dp_sgd_privacy, compute_noise, DpsgdPlan)
from .compat import PrivacyAccountant
from .represent import pld, characteristic, lt_profile, clt_info
from .client import Client, ServiceError, Decision

__version__ = "0.1.0"

__all__ = [
    "Accountant", "calibrate", "epsilon_counts", "renyi", "renyi_curve", "canonical_spec", "spec_json", "METHODS",
    "tradeoff", "Tradeoff", "Filter", "FilterDecision", "Ledger", "LedgerDecision",
    "events", "Event", "from_dp_event", "PrivacyAccountant",
    "dpsgd_steps", "dpsgd_event", "dpsgd_epsilon", "get_noise_multiplier", "dpsgd_calibrate",
    "compute_dp_sgd_privacy", "compute_noise", "DpsgdPlan",
    "pld", "characteristic", "lt_profile", "clt_info",
    "Result", "EpsilonResult", "DeltaResult", "Profile", "EpsilonCurve", "RenyiCurve", "GdpMu",
    "RenyiValue", "RenyiResult", "Calibration",
    "DpacctError", "InvalidInputError", "InvalidSpecError", "UnsupportedError", "NumericError",
    "OutOfMemoryError", "DpacctIOError", "StorageError", "LibraryNotFoundError", "LibraryBugError",
    "library_path", "load_library",
    "Client", "ServiceError", "Decision",
]


def library_path() -> str:
    """Where libdpacct was loaded from (loading it if needed)."""
    from . import _lib
    return _lib.library_path()


def load_library(path: "str | None" = None) -> str:
    """Load libdpacct now (from `path` if given); LibraryNotFoundError if it
    cannot be found.  Returns its path."""
    from . import _lib
    _lib.load(path)
    return _lib.library_path()


def __getattr__(name):
    """dpacct.opacus and dpacct.dp_accounting load on first use (they import
    their frameworks when present; `import dpacct` imports neither)."""
    if name in ("opacus", "dp_accounting"):
        import importlib
        return importlib.import_module("." + name, __name__)
    raise AttributeError("module 'dpacct' has no attribute %r" % name)
