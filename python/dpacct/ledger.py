# dpacct Python binding: the durable privacy-budget ledger.
# SPDX-License-Identifier: GPL-3.0-or-later
"""dpacct.Ledger: per-unit privacy filters and the history of every request,
in an SQLite file or a PostgreSQL database (include/dpacct/ledger.h;
docs/ledger.md).  The semantics are the command line's `dpacct ledger`:

    dpacct ledger init PATH ...        Ledger.create(PATH, "gdp-residue", mu=1, units=[...])
    dpacct ledger add-unit PATH ...    ledger.add_unit(unit, filter=None, **budget)
    dpacct ledger request PATH ...     ledger.request(unit, spec) -> LedgerDecision
    dpacct ledger status / history     ledger.status(unit=None), ledger.history(unit=None)
    dpacct ledger verify               ledger.verify() -> dict (report["ok"])
    dpacct ledger export / import      ledger.export(), Ledger.import_(location, export)

Outcomes of a request, as the CLI's exit statuses:
    exit 0, accepted       LedgerDecision with accepted True (charged, recorded)
    exit 3, rejected       LedgerDecision with accepted False (recorded, not charged)
    exit 2, bad input      InvalidInputError (unknown unit, malformed spec: InvalidSpecError)
                           or UnsupportedError (a spec the unit's filter cannot account);
                           the ledger is unchanged
    exit 1, failure        StorageError (the storage failed: nothing recorded or charged),
                           OutOfMemoryError

Every request is one durable transaction: many processes may use one ledger
at once.  A Ledger object is used by one thread at a time (calls are
serialized through the binding's lock); open one per thread or process.
A Ledger pickles as its location (the copy opens the same ledger).
"""
import ctypes
import json
import os
from typing import Any, Dict, Iterable, List, Optional, Union

from . import _lib
from ._errors import InvalidInputError
from ._results import _Frozen
from .filter import filter_config

__all__ = ["Ledger", "LedgerDecision", "MAX_UNIT"]

MAX_UNIT = 256  # bytes of a unit name (DPA_LEDGER_MAX_UNIT)


def _location(location: Any) -> bytes:
    if isinstance(location, os.PathLike):
        location = os.fspath(location)
    return _lib.c_string(location, "location")


def _unit(unit: Any) -> bytes:
    b = _lib.c_string(unit, "unit")
    if not b or len(b) > MAX_UNIT:
        raise InvalidInputError("unit=%r: must be 1 to %d bytes of UTF-8" % (unit, MAX_UNIT), status=1)
    return b


def _take_out(ptr: ctypes.c_void_p) -> str:
    return _lib.take_string(ptr.value)


class LedgerDecision(_Frozen):
    """The recorded decision on one request: accepted (True: charged),
    request_id, unit, reason (the filter's reason or remark, "" if none)
    and remaining (the unit's budget afterwards, a dict).  bool(decision)
    is accepted."""

    __slots__ = ("accepted", "request_id", "unit", "reason", "remaining")

    def __init__(self, **kw: Any) -> None:
        self._set(**kw)

    def __bool__(self) -> bool:
        return bool(self.accepted)

    def __repr__(self) -> str:
        s = "LedgerDecision(accepted=%r, request_id=%d, unit=%r" % (self.accepted, self.request_id, self.unit)
        if self.reason:
            s += ", reason=%r" % self.reason
        return s + ")"


class Ledger:
    """An open ledger: Ledger(location) opens an existing one (a file path:
    SQLite; a postgresql:// or postgres:// URI: PostgreSQL).  It is never
    created implicitly: InvalidInputError if there is none (create it with
    Ledger.create).  StorageError when the storage fails.  Use as a context
    manager or call close()."""

    def __init__(self, location: Union[str, "os.PathLike[str]"]) -> None:
        self._p = None
        self._location = os.fspath(location) if isinstance(location, os.PathLike) else location
        loc = _location(location)
        err = _lib.new_error()
        with _lib.LOCK:
            p = _lib.load().dpa_ledger_open(loc, ctypes.byref(err))
        if not p:
            _lib.raise_error(1, err)
        self._p = p

    @classmethod
    def create(cls, location: Union[str, "os.PathLike[str]"], filter: Any = None, *,
               units: Iterable[str] = (), auto_units: bool = False, **budget: Any) -> "Ledger":
        """Create a new ledger at location and open it.  filter (with the
        budget as keywords) is the default filter of its units, as for
        dpacct.Filter: Ledger.create(path, "gdp-residue", mu=1, units=["a"]).
        auto_units: a request for an unknown unit creates it (else it is bad
        input).  All in one transaction: on error nothing is left there.
        InvalidInputError if something already exists there, the
        configuration or a unit name is invalid, or a unit is named twice."""
        config = filter_config(filter, **budget).encode("utf-8")
        names = [_unit(u) for u in units]
        if len(set(names)) != len(names):
            dup = [u for u in names if names.count(u) > 1][0]
            raise InvalidInputError('unit "%s" given twice' % dup.decode("utf-8"), status=1)
        arr = (ctypes.c_char_p * max(1, len(names)))(*names)
        o = _lib.dpa_ledger_init_opts()
        o.filter_config = config
        o.auto_units = 1 if auto_units else 0
        o.units = ctypes.cast(arr, ctypes.POINTER(ctypes.c_char_p)) if names else None
        o.nunits = len(names)
        err = _lib.new_error()
        with _lib.LOCK:
            st = _lib.load().dpa_ledger_create(_location(location), ctypes.byref(o), ctypes.byref(err))
        _lib.check(st, err)
        return cls(location)

    @classmethod
    def import_(cls, location: Union[str, "os.PathLike[str]"], export: Union[str, Dict[str, Any]]) -> "Ledger":
        """Create a new ledger at location holding exactly an export (the
        dict or JSON text of export()), replayed and checked first; then open
        it.  InvalidInputError if location holds a ledger or the export does
        not replay to its stored states (nothing is created)."""
        text = export if isinstance(export, str) else json.dumps(export)
        err = _lib.new_error()
        with _lib.LOCK:
            st = _lib.load().dpa_ledger_import_json(_location(location), _lib.c_string(text, "export"),
                                                    ctypes.byref(err))
        _lib.check(st, err)
        return cls(location)

    # ---- lifetime ----
    def close(self) -> None:
        """Close the connection (later calls raise ValueError)."""
        p = getattr(self, "_p", None)
        if p:
            with _lib.LOCK:
                _lib.load().dpa_ledger_close(p)
            self._p = None

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown
            pass

    def __enter__(self) -> "Ledger":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __reduce__(self):
        return (Ledger, (self._location,))

    def _live(self):
        if not self._p:
            raise ValueError("the ledger is closed")
        return self._p

    @property
    def location(self) -> str:
        """The location as it may be printed (a PostgreSQL password shown as ***)."""
        buf = ctypes.create_string_buffer(1024)
        _lib.load().dpa_ledger_location_display(_location(self._location), buf, len(buf))
        return buf.value.decode("utf-8", "replace")

    def __repr__(self) -> str:
        return "<dpacct.Ledger %s%s>" % (self.location, "" if self._p else " (closed)")

    # ---- operations ----
    def add_unit(self, unit: str, filter: Any = None, **budget: Any) -> None:
        """Add a unit with a full budget: the ledger's default filter, or the
        one given as for dpacct.Filter.  InvalidInputError if the unit exists
        or its name is empty, longer than 256 bytes or holds control
        characters."""
        config = filter_config(filter, **budget).encode("utf-8") if (filter is not None or budget) else None
        err = _lib.new_error()
        with _lib.LOCK:
            st = _lib.load().dpa_ledger_add_unit(self._live(), _unit(unit), config, ctypes.byref(err))
        _lib.check(st, err)

    def request(self, unit: str, spec: Any, *, neighboring: Any = None) -> LedgerDecision:
        """Decide on one request for a unit, record it and charge the budget
        if accepted, in one durable transaction.  Returns the LedgerDecision
        (accepted or rejected).  Raises InvalidInputError (unknown unit,
        malformed spec: InvalidSpecError), UnsupportedError (a spec the
        unit's filter cannot account) or StorageError; the ledger is then
        unchanged."""
        from .accountant import spec_json
        text = _lib.c_string(spec_json(spec, neighboring), "spec")
        d = _lib.dpa_ledger_decision()
        err = _lib.new_error()
        with _lib.LOCK:
            st = _lib.load().dpa_ledger_request(self._live(), _unit(unit), text, ctypes.byref(d),
                                                ctypes.byref(err))
        _lib.check(st, err)
        try:
            remaining = json.loads(ctypes.string_at(d.remaining).decode("utf-8")) if d.remaining else None
            return LedgerDecision(accepted=bool(d.accepted), request_id=int(d.request_id),
                                  unit=unit, reason=_lib.text(d.reason), remaining=remaining)
        finally:
            _lib.load().dpa_ledger_decision_clear(ctypes.byref(d))

    def _json_call(self, fn, *args):
        out = ctypes.c_void_p()
        err = _lib.new_error()
        with _lib.LOCK:
            st = fn(self._live(), *args, ctypes.byref(out), ctypes.byref(err))
        _lib.check(st, err)
        return json.loads(_take_out(out))

    def status(self, unit: Optional[str] = None) -> Dict[str, Any]:
        """{"filter": {...}, "units": [{"unit", "filter", "requests",
        "accepted", "remaining", "exhausted"}, ...]} for every unit, or for
        one (InvalidInputError if unknown)."""
        return self._json_call(_lib.load().dpa_ledger_status_json, None if unit is None else _unit(unit))

    def history(self, unit: Optional[str] = None) -> List[Dict[str, Any]]:
        """The requests of a unit (all units if None) in order: dicts with
        id, unit, time, spec, decision, reason, state_before, state_after."""
        return self._json_call(_lib.load().dpa_ledger_history_json, None if unit is None else _unit(unit))

    def verify(self) -> Dict[str, Any]:
        """Replay every unit's history with a fresh filter and check every
        recorded decision and state: the report {"ok", "units", "requests",
        "problems": [...]} (report["ok"] is True when all agree)."""
        ok = ctypes.c_int()
        out = ctypes.c_void_p()
        err = _lib.new_error()
        with _lib.LOCK:
            st = _lib.load().dpa_ledger_verify(self._live(), ctypes.byref(ok), ctypes.byref(out),
                                               ctypes.byref(err))
        _lib.check(st, err)
        report = json.loads(_take_out(out))
        report["ok"] = bool(ok.value)
        return report

    def export(self) -> Dict[str, Any]:
        """The whole ledger as one JSON document (a dict): a backup, or the
        input of Ledger.import_ on another location or backend."""
        return json.loads(self.export_json())

    def export_json(self) -> str:
        """export() as JSON text, verbatim from the library."""
        out = ctypes.c_void_p()
        err = _lib.new_error()
        with _lib.LOCK:
            st = _lib.load().dpa_ledger_export_json(self._live(), ctypes.byref(out), ctypes.byref(err))
        _lib.check(st, err)
        return _take_out(out)


for _c in (Ledger, LedgerDecision):
    _c.__module__ = "dpacct"
del _c
