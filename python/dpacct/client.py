# dpacct.Client: a client of the budget service `dpacct serve` (docs/service.md), urllib only.
# SPDX-License-Identifier: GPL-3.0-or-later
"""A client of the budget service's HTTP API (`dpacct serve`, docs/service.md).

    >>> c = dpacct.Client("http://127.0.0.1:8080", token)       # doctest: +SKIP
    >>> d = c.request("alice", {"pure": {"epsilon": 0.5}})       # doctest: +SKIP
    >>> d.accepted, d.request_id, d.remaining                    # doctest: +SKIP

It needs only the Python standard library (urllib) and not libdpacct: the
service decides, the client only asks.  Every method maps to one route of the
API (or iterates its pages); an error answer raises `ServiceError` with the
HTTP status and the API's error code.

Retries.  `request` sends an `Idempotency-Key` header with every call: the
caller's, or a fresh random one (128 bits) per call.  When the connection
fails (refused, reset, timed out: the answer was lost, so the client cannot
know whether the server decided), the same request is sent again with the
same key, up to `retries` times.  That is safe by construction: the ledger
keeps every key with its unit's history, and a request whose key was already
used is answered with the original decision (`replayed` True) and charges
nothing, so a retried request is charged at most once, whichever attempt
reached the server.  The other writes (create_unit, commit, release, freeze,
topup, ...) are not retried (a second attempt of an applied one would answer
an error, not the original result); reads (GET) are retried.
"""
from __future__ import annotations

import http.client
import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, Mapping, Optional, Tuple, Union

__all__ = ["Client", "ServiceError", "Decision"]

JsonSpec = Union[str, Mapping[str, Any]]


class ServiceError(Exception):
    """An error answer of the service, or a service that could not be reached.

    Attributes: `status` (the HTTP status; 0 when no answer arrived), `code` (the API's
    error code: bad_input, unauthorized, forbidden, not_found, conflict, frozen, too_large,
    too_costly, storage, internal; "unreachable" when no answer arrived, "bad_answer"
    for an answer that is not the API's JSON), `message` (the API's message) and
    `body` (the parsed answer, or None)."""

    def __init__(self, status: int, code: str, message: str, body: Any = None):
        super().__init__("%s (HTTP %d): %s" % (code, status, message))
        self.status = status
        self.code = code
        self.message = message
        self.body = body

    def __reduce__(self):
        return (ServiceError, (self.status, self.code, self.message, self.body))


@dataclass(frozen=True)
class Decision:
    """The service's decision on one request (POST /v1/units/{unit}/requests).

    `decision` is "accepted" or "rejected"; `status` "charged", "reserved" or "rejected";
    `reason` the filter's reason; `remaining` the unit's remaining budget in the filter's
    terms (numbers as the API gives them); `replayed` True when the answer is the original
    decision of an earlier request with the same idempotency key (nothing was charged
    again); `idempotency_key` the key this call sent.  `bool(decision)` is `accepted`.
    Plain data: it pickles and compares by value."""

    request_id: int
    decision: str
    status: str
    reason: str
    remaining: Dict[str, Any] = field(default_factory=dict)
    replayed: bool = False
    generation: int = 0
    unit: str = ""
    idempotency_key: Optional[str] = None

    @property
    def accepted(self) -> bool:
        """True when the request was accepted (charged or reserved)."""
        return self.decision == "accepted"

    def __bool__(self) -> bool:
        return self.accepted

    @classmethod
    def from_json(cls, body: Mapping[str, Any], unit: str = "",
                  idempotency_key: Optional[str] = None) -> "Decision":
        """The decision of an API answer body; ServiceError if a field is missing."""
        try:
            return cls(request_id=int(body["request_id"]), decision=str(body["decision"]),
                       status=str(body["status"]), reason=str(body.get("reason") or ""),
                       remaining=dict(body.get("remaining") or {}),
                       replayed=bool(body.get("replayed", False)),
                       generation=int(body.get("generation") or 0), unit=unit,
                       idempotency_key=idempotency_key)
        except (KeyError, TypeError, ValueError) as e:
            raise ServiceError(200, "bad_answer", "not a decision: missing or bad %s" % e, body)


def _spec_value(spec: JsonSpec) -> Any:
    """A spec given as JSON text or as a dict, as the JSON value the API takes."""
    if isinstance(spec, str):
        try:
            return json.loads(spec)
        except ValueError as e:
            raise ValueError("spec: not JSON (%s)" % e) from None
    if isinstance(spec, Mapping):
        return dict(spec)
    raise TypeError("spec: a dict or JSON text, not %s" % type(spec).__name__)


def _q(name: str) -> str:
    """A unit name as one path segment."""
    if not isinstance(name, str) or not name:
        raise ValueError("unit: a non-empty string")
    return urllib.parse.quote(name, safe="")


class Client:
    """A client of one `dpacct serve` at `base_url` (e.g. "http://127.0.0.1:8080") with a
    bearer `token` (None for the unauthenticated routes only: healthz, metrics).

    Args:
        base_url: the service's scheme, host and port (a path prefix is kept).
        token: the bearer token (`dpacct ledger token create`); never logged or printed
            (it is not in the repr).
        timeout: seconds to wait for each answer.
        retries: how many times a call whose connection failed is sent again (requests
            with the same idempotency key, reads as they are).
        backoff: seconds before the first retry, doubled at each next one.
    """

    def __init__(self, base_url: str, token: Optional[str] = None, timeout: float = 30.0,
                 retries: int = 3, backoff: float = 0.1):
        if not isinstance(base_url, str) or not base_url.startswith(("http://", "https://")):
            raise ValueError("base_url: an http:// or https:// URL")
        if timeout is None or not timeout > 0:
            raise ValueError("timeout: a positive number of seconds")
        if not isinstance(retries, int) or retries < 0:
            raise ValueError("retries: an integer >= 0")
        self.base_url = base_url.rstrip("/")
        self.timeout = float(timeout)
        self.retries = retries
        self.backoff = float(backoff)
        self._token = token

    def __repr__(self) -> str:
        return "Client(%r)" % self.base_url

    # ------------------------------------------------------------ transport

    def _send(self, method: str, path: str, body: Any = None,
              query: Optional[Mapping[str, Any]] = None, headers: Optional[Mapping[str, str]] = None,
              retry: bool = False, raw: bool = False) -> Tuple[int, Any]:
        """One call: (status, parsed JSON body or text when raw).  Error answers (>= 400)
        are returned, not raised; a connection failure is retried when `retry`, then
        raised as ServiceError(0, "unreachable")."""
        url = self.base_url + path
        if query:
            q = {k: v for k, v in query.items() if v is not None}
            if q:
                url += "?" + urllib.parse.urlencode(q)
        hdr = {"Accept": "application/json"}
        if self._token is not None:
            hdr["Authorization"] = "Bearer " + self._token
        data = None
        if body is not None:
            data = json.dumps(body).encode("utf-8")
            hdr["Content-Type"] = "application/json"
        if headers:
            hdr.update(headers)
        attempts = 1 + (self.retries if retry else 0)
        delay = self.backoff
        for attempt in range(attempts):
            req = urllib.request.Request(url, data=data, headers=hdr, method=method)
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    status, text = resp.status, resp.read()
                    ctype = resp.headers.get("Content-Type", "")
            except urllib.error.HTTPError as e:
                status, text = e.code, e.read()
                ctype = e.headers.get("Content-Type", "") if e.headers else ""
            except (urllib.error.URLError, ConnectionError, socket.timeout, TimeoutError,
                    http.client.HTTPException) as e:
                if attempt + 1 < attempts:
                    time.sleep(delay)
                    delay *= 2
                    continue
                reason = getattr(e, "reason", e)
                raise ServiceError(0, "unreachable", "%s %s: %s" % (method, url, reason)) from None
            if raw and status < 400:
                return status, text.decode("utf-8")
            try:
                parsed = json.loads(text.decode("utf-8")) if text else None
            except ValueError:
                if "json" in ctype or status < 400:
                    raise ServiceError(status, "bad_answer", "the answer is not JSON") from None
                parsed = None
            return status, parsed
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    def _raise(status: int, body: Any) -> None:
        err = body.get("error") if isinstance(body, dict) else None
        if isinstance(err, dict):
            raise ServiceError(status, str(err.get("code", "")), str(err.get("message", "")), body)
        raise ServiceError(status, "bad_answer", "HTTP %d without an error object" % status, body)

    def _call(self, method: str, path: str, body: Any = None,
              query: Optional[Mapping[str, Any]] = None, ok: Tuple[int, ...] = (200,)) -> Any:
        status, parsed = self._send(method, path, body, query, retry=(method == "GET"))
        if status not in ok:
            self._raise(status, parsed)
        return parsed

    # ------------------------------------------------------------ unauthenticated

    def healthz(self) -> Dict[str, Any]:
        """GET /healthz: {"status": "ok", "database": "ok"}; a service whose database does
        not answer gives 503, raised as ServiceError with code "unavailable" and the
        answer in `body`."""
        status, parsed = self._send("GET", "/healthz", retry=True)
        if status == 200 and isinstance(parsed, dict):
            return parsed
        if status == 503 and isinstance(parsed, dict):
            raise ServiceError(503, "unavailable", json.dumps(parsed), parsed)
        self._raise(status, parsed)
        return {}  # pragma: no cover

    def metrics(self) -> str:
        """GET /metrics: the Prometheus text (format 0.0.4)."""
        status, text = self._send("GET", "/metrics", retry=True, raw=True)
        if status != 200:
            self._raise(status, text)
        return text

    # ------------------------------------------------------------ reading

    def whoami(self) -> Dict[str, Any]:
        """GET /v1/whoami: {"token_id", "tenant", "role"} of this client's token."""
        return self._call("GET", "/v1/whoami")

    def units(self, page_size: int = 100) -> Iterator[Dict[str, Any]]:
        """Every unit of the token's tenant (status objects, in name order), fetching pages
        of `page_size` (1..1000) from GET /v1/units as the iteration goes."""
        after = None
        while True:
            page = self._call("GET", "/v1/units", query={"after": after, "limit": page_size})
            for u in page.get("units", []):
                yield u
            after = page.get("next")
            if after is None:
                return

    def unit(self, unit: str) -> Dict[str, Any]:
        """GET /v1/units/{unit}: the unit's status object."""
        return self._call("GET", "/v1/units/" + _q(unit))

    def history(self, unit: str, since: Optional[str] = None, until: Optional[str] = None,
                after: int = 0, page_size: int = 100) -> Iterator[Dict[str, Any]]:
        """The unit's history entries with id > after, time >= since and < until (ISO 8601
        UTC, None: unbounded), in id order, fetching pages of `page_size` from
        GET /v1/units/{unit}/history."""
        path = "/v1/units/" + _q(unit) + "/history"
        cursor: Optional[int] = after or None
        while True:
            page = self._call("GET", path, query={"after": cursor, "since": since, "until": until,
                                                  "limit": page_size})
            for e in page.get("entries", []):
                yield e
            nxt = page.get("next")
            if nxt is None:
                return
            cursor = int(nxt)

    def verify(self) -> Dict[str, Any]:
        """GET /v1/verify: the verify report of the whole ledger ("ok", "problems", "head")."""
        return self._call("GET", "/v1/verify")

    def export(self) -> Dict[str, Any]:
        """GET /v1/export: the whole ledger's export document (admin of tenant "default")."""
        return self._call("GET", "/v1/export")

    # ------------------------------------------------------------ requests

    def request(self, unit: str, spec: JsonSpec, reserve: bool = False,
                idempotency_key: Optional[str] = None) -> Decision:
        """Ask for one query on `unit` (POST /v1/units/{unit}/requests).

        Args:
            unit: the unit's name.
            spec: the query's event spec (docs/spec.md), a dict or JSON text.
            reserve: True to charge an accepted request as a reservation, to `commit` or
                `release` later.
            idempotency_key: 1..200 printable ASCII characters; None: a fresh random key
                for this call.  Retries after a lost answer reuse it (module docstring).

        Returns:
            The Decision: accepted (HTTP 200) or rejected by the filter (HTTP 409, the
            same body); neither raises.

        Raises:
            ServiceError: bad spec (400 bad_input), a spec the filter cannot account (422),
            too costly to decide (422 too_costly), frozen or archived unit (423 frozen),
            unknown unit (404), a key reused with another spec, storage failure, ...
        """
        body: Dict[str, Any] = {"spec": _spec_value(spec)}
        if reserve:
            body["reserve"] = True
        key = idempotency_key if idempotency_key is not None else "py-" + uuid.uuid4().hex
        status, parsed = self._send("POST", "/v1/units/" + _q(unit) + "/requests", body,
                                    headers={"Idempotency-Key": key}, retry=True)
        if status in (200, 409) and isinstance(parsed, dict) and "decision" in parsed:
            return Decision.from_json(parsed, unit=unit, idempotency_key=key)
        self._raise(status, parsed)
        raise AssertionError("unreachable")  # pragma: no cover

    def commit(self, unit: str, request_id: int) -> Dict[str, Any]:
        """Commit a reservation: {"request_id", "status": "charged"}; 409 if it is not a
        pending reservation of the unit."""
        return self._call("POST", "/v1/units/%s/requests/%d/commit" % (_q(unit), int(request_id)),
                          body={})

    def release(self, unit: str, request_id: int) -> Dict[str, Any]:
        """Release a reservation (only while nothing of the query's result was released
        to the analyst, docs/ledger.md): {"request_id", "status": "released", "remaining"}."""
        return self._call("POST", "/v1/units/%s/requests/%d/release" % (_q(unit), int(request_id)),
                          body={})

    # ------------------------------------------------------------ administration

    def create_unit(self, unit: str, filter: Optional[Mapping[str, Any]] = None,
                    period_seconds: Optional[int] = None) -> Dict[str, Any]:
        """POST /v1/units (admin): a new unit of the token's tenant with the filter
        configuration `filter` (docs/filters.md; None: the ledger's default) and a budget
        period; returns its status object.  ServiceError 409 if it exists."""
        body: Dict[str, Any] = {"unit": unit}
        if filter is not None:
            body["filter"] = dict(filter)
        if period_seconds is not None:
            body["period_seconds"] = int(period_seconds)
        return self._call("POST", "/v1/units", body=body, ok=(200, 201))

    def _lifecycle(self, unit: str, op: str, reason: Optional[str]) -> Dict[str, Any]:
        body = {"reason": reason} if reason is not None else {}
        return self._call("POST", "/v1/units/%s/%s" % (_q(unit), op), body=body)

    def freeze(self, unit: str, reason: Optional[str] = None) -> Dict[str, Any]:
        """Refuse the unit's requests until `unfreeze` (admin); its status object."""
        return self._lifecycle(unit, "freeze", reason)

    def unfreeze(self, unit: str, reason: Optional[str] = None) -> Dict[str, Any]:
        """Accept the unit's requests again (admin); its status object."""
        return self._lifecycle(unit, "unfreeze", reason)

    def archive(self, unit: str, reason: Optional[str] = None) -> Dict[str, Any]:
        """Make the unit read-only for good (admin); its status object."""
        return self._lifecycle(unit, "archive", reason)

    def topup(self, unit: str, filter: Mapping[str, Any], reason: Optional[str] = None) -> Dict[str, Any]:
        """Replace the unit's budget by `filter` (same filter kind, every parameter at least
        as large), keeping what was spent (admin); its status object."""
        body: Dict[str, Any] = {"filter": dict(filter)}
        if reason is not None:
            body["reason"] = reason
        return self._call("POST", "/v1/units/%s/topup" % _q(unit), body=body)

