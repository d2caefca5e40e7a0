# SPDX-License-Identifier: GPL-3.0-or-later
"""dpacct.Client against a live `dpacct serve` started here on a fresh SQLite ledger
(skipped when the dpacct command lacks serve): every method against the API's own
answers and the ledger's semantics (the gdp-residue filter takes three pure 0.5 queries
from mu 1; the basic filter's remaining is budget minus the sum), idempotent retries
through a proxy that drops the first answer (charged once), errors with their status and
code, paging, pickling."""
import json
import os
import pickle
import socket
import subprocess
import threading
import time
import urllib.request

import pytest

import dpacct
from dpacct import Client, Decision, ServiceError
from conftest import CLI


def _has_serve():
    if not CLI:
        return False
    try:
        return subprocess.run([CLI, "serve", "--help"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


pytestmark = pytest.mark.skipif(not _has_serve(), reason="the dpacct command has no serve (or none found)")

PURE = {"pure": {"epsilon": 0.5}}


def _free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _token(db, role, tenant="default"):
    out = subprocess.run([CLI, "ledger", "token", "create", db, "--tenant", tenant, "--role", role],
                         check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True).stdout.split()
    assert len(out) == 1
    return out[0]


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    d = tmp_path_factory.mktemp("svc")
    db = str(d / "ledger.db")
    subprocess.run([CLI, "ledger", "init", db, "--filter", "gdp-residue", "--mu", "1", "--unit", "alice",
                    "--unit", "bob"], check=True, stdout=subprocess.DEVNULL)
    toks = {r: _token(db, r) for r in ("read", "request", "admin")}
    port = _free_port()
    log = open(str(d / "serve.log"), "w")
    proc = subprocess.Popen([CLI, "serve", "--ledger", db, "--listen", "127.0.0.1:%d" % port],
                            stdout=log, stderr=log)
    url = "http://127.0.0.1:%d" % port
    for _ in range(400):
        try:
            with urllib.request.urlopen(url + "/healthz", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            time.sleep(0.05)
    else:
        proc.kill()
        pytest.fail("dpacct serve did not become healthy")
    yield {"url": url, "port": port, "db": db, "tokens": toks, "log": str(d / "serve.log")}
    proc.terminate()
    proc.wait(timeout=30)
    log.close()


def admin(s):
    return Client(s["url"], s["tokens"]["admin"], timeout=30)


def page_unit(c, name):
    """The unit's object in the units pages (which carry "reserved" and "lifecycle")."""
    return next(u for u in c.units() if u["unit"] == name)


def test_health_metrics_whoami(service):
    c = Client(service["url"], None)
    assert c.healthz() == {"status": "ok", "database": "ok"}
    m = c.metrics()
    assert "dpacct_up 1" in m.splitlines()
    for role, tok in service["tokens"].items():
        w = Client(service["url"], tok).whoami()
        assert w["tenant"] == "default" and w["role"] == role and w["token_id"].startswith("tok_")
    assert service["tokens"]["admin"] not in repr(admin(service))


def test_requests_decisions_and_remaining(service):
    c = admin(service)
    c.create_unit("carol", filter={"filter": "gdp-residue", "mu": 1})
    ds = [c.request("carol", PURE) for _ in range(4)]
    assert [d.decision for d in ds] == ["accepted"] * 3 + ["rejected"]
    assert [d.status for d in ds] == ["charged"] * 3 + ["rejected"]
    assert [bool(d) for d in ds] == [True, True, True, False]
    ids = [d.request_id for d in ds]
    assert ids == sorted(ids) and len(set(ids)) == 4
    assert ds[3].reason and not ds[0].reason
    mus = [d.remaining["mu"] for d in ds[:3]]
    assert 1 > mus[0] > mus[1] > mus[2] >= 0
    assert ds[3].remaining == ds[2].remaining
    st = c.unit("carol")
    assert st["remaining"] == ds[3].remaining
    assert (st["requests"], st["accepted"], st["rejected"]) == (4, 3, 1)
    # the same numbers as the ledger's own command reads from the file
    cli = json.loads(subprocess.run([CLI, "ledger", "status", service["db"], "--unit", "carol", "--json"],
                                    check=True, stdout=subprocess.PIPE, universal_newlines=True).stdout)
    assert cli["units"][0]["remaining"]["mu"] == st["remaining"]["mu"]
    # a spec as JSON text is the same request
    d = c.request("carol", json.dumps(PURE))
    assert d.decision == "rejected"


def test_basic_filter_remaining_is_budget_minus_sum(service):
    c = admin(service)
    c.create_unit("dave", filter={"filter": "basic", "epsilon": 1, "delta": 1e-6})
    d1 = c.request("dave", {"approx": {"epsilon": 0.25, "delta": 1e-7}})
    d2 = c.request("dave", {"approx": {"epsilon": 0.5, "delta": 2e-7}})
    assert d1 and d2
    assert d2.remaining["epsilon"] == pytest.approx(0.25, abs=1e-12)
    assert d2.remaining["delta"] == pytest.approx(7e-7, rel=1e-9)
    d3 = c.request("dave", {"approx": {"epsilon": 0.5, "delta": 0}})
    assert not d3 and d3.remaining == d2.remaining


def test_idempotency_key_replays(service):
    c = admin(service)
    d1 = c.request("alice", PURE, idempotency_key="key-alice-1")
    before = c.unit("alice")
    d2 = c.request("alice", PURE, idempotency_key="key-alice-1")
    after = c.unit("alice")
    assert d2.replayed and not d1.replayed
    assert (d2.request_id, d2.decision, d2.remaining) == (d1.request_id, d1.decision, d1.remaining)
    assert after["requests"] == before["requests"] and after["remaining"] == before["remaining"]
    with pytest.raises(ServiceError) as e:
        c.request("alice", {"pure": {"epsilon": 0.1}}, idempotency_key="key-alice-1")
    assert e.value.status in (400, 409, 422) and "idempotency" in e.value.message
    # automatic keys: two calls are two requests
    k1, k2 = c.request("bob", PURE).idempotency_key, c.request("bob", PURE).idempotency_key
    assert k1 and k2 and k1 != k2


class DropFirstAnswer:
    """A TCP proxy to the service that forwards the first connection's request, waits for
    the answer, and closes the client's connection without passing it on (a lost answer);
    later connections are forwarded both ways."""

    def __init__(self, port):
        self.target = port
        self.lsock = socket.socket()
        self.lsock.bind(("127.0.0.1", 0))
        self.lsock.listen(8)
        self.port = self.lsock.getsockname()[1]
        self.n = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                c, _ = self.lsock.accept()
            except OSError:
                return
            self.n += 1
            threading.Thread(target=self._one, args=(c, self.n == 1), daemon=True).start()

    def _one(self, c, drop):
        s = socket.create_connection(("127.0.0.1", self.target))
        if drop:
            data = c.recv(65536)
            s.sendall(data)
            s.recv(65536)          # the answer: the server decided and committed
            time.sleep(0.05)
            c.close()
            s.close()
            return

        def pump(a, b):
            try:
                while True:
                    x = a.recv(65536)
                    if not x:
                        break
                    b.sendall(x)
            except OSError:
                pass
            for z in (a, b):
                try:
                    z.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        threading.Thread(target=pump, args=(s, c), daemon=True).start()
        pump(c, s)

    def close(self):
        self.lsock.close()


def test_lost_answer_is_retried_with_the_same_key_and_charged_once(service):
    c = admin(service)
    c.create_unit("erin", filter={"filter": "gdp-residue", "mu": 1})
    proxy = DropFirstAnswer(service["port"])
    try:
        pc = Client("http://127.0.0.1:%d" % proxy.port, service["tokens"]["request"], timeout=10,
                    retries=3, backoff=0.05)
        d = pc.request("erin", PURE)
    finally:
        proxy.close()
    assert proxy.n >= 2, "the request was not sent again"
    assert d.replayed and d.decision == "accepted"
    st = c.unit("erin")
    assert (st["requests"], st["accepted"]) == (1, 1)
    hist = list(c.history("erin"))
    reqs = [e for e in hist if e.get("kind", "request") == "request"]
    assert len(reqs) == 1 and reqs[0]["id"] == d.request_id
    assert reqs[0].get("idempotency_key", d.idempotency_key) == d.idempotency_key


def test_reserve_commit_release(service):
    c = admin(service)
    c.create_unit("fay", filter={"filter": "basic", "epsilon": 1, "delta": 1e-6})
    fresh = c.unit("fay")["remaining"]
    r1 = c.request("fay", {"approx": {"epsilon": 0.25, "delta": 0}}, reserve=True)
    assert r1.status == "reserved" and r1.accepted
    assert page_unit(c, "fay")["reserved"] == 1
    assert c.commit("fay", r1.request_id) == {"request_id": r1.request_id, "status": "charged"}
    with pytest.raises(ServiceError) as e:
        c.commit("fay", r1.request_id)
    assert e.value.status == 409
    r2 = c.request("fay", {"approx": {"epsilon": 0.5, "delta": 0}}, reserve=True)
    assert r2.remaining["epsilon"] == pytest.approx(0.25, abs=1e-12)
    rel = c.release("fay", r2.request_id)
    assert rel["status"] == "released" and rel["remaining"]["epsilon"] == pytest.approx(0.75, abs=1e-12)
    assert page_unit(c, "fay")["reserved"] == 0
    assert fresh["epsilon"] == 1


def test_lifecycle_and_topup(service):
    c = admin(service)
    c.create_unit("gus", filter={"filter": "basic", "epsilon": 1, "delta": 1e-6})
    assert c.freeze("gus", reason="audit")["unit"] == "gus" and page_unit(c, "gus")["lifecycle"] == "frozen"
    with pytest.raises(ServiceError) as e:
        c.request("gus", PURE)
    assert (e.value.status, e.value.code) == (423, "frozen")
    assert c.unfreeze("gus")["unit"] == "gus" and page_unit(c, "gus")["lifecycle"] == "active"
    assert c.request("gus", {"pure": {"epsilon": 1}})
    assert not c.request("gus", {"pure": {"epsilon": 0.5}})
    st = c.topup("gus", {"filter": "basic", "epsilon": 2, "delta": 1e-6}, reason="new quarter")
    assert st["remaining"]["epsilon"] == pytest.approx(1, abs=1e-12)
    assert c.request("gus", {"pure": {"epsilon": 0.5}})
    with pytest.raises(ServiceError) as e:
        c.topup("gus", {"filter": "basic", "epsilon": 0.5, "delta": 1e-6})
    assert e.value.status in (400, 409, 422)
    assert c.archive("gus")["unit"] == "gus" and page_unit(c, "gus")["lifecycle"] == "archived"
    with pytest.raises(ServiceError) as e:
        c.unfreeze("gus")
    assert e.value.status in (400, 409, 423)


def test_errors_have_status_and_code(service):
    c = admin(service)
    with pytest.raises(ServiceError) as e:
        c.request("alice", {"gausian": {"sigma": 1}})
    assert (e.value.status, e.value.code) == (400, "bad_input") and "gausian" in e.value.message
    with pytest.raises(ServiceError) as e:
        c.request("nobody", PURE)
    assert (e.value.status, e.value.code) == (404, "not_found")
    with pytest.raises(ServiceError) as e:
        c.create_unit("alice")
    assert (e.value.status, e.value.code) == (409, "conflict")
    with pytest.raises(ServiceError) as e:
        Client(service["url"], "not-a-token").whoami()
    assert (e.value.status, e.value.code) == (401, "unauthorized")
    with pytest.raises(ServiceError) as e:
        Client(service["url"], service["tokens"]["read"]).request("alice", PURE)
    assert (e.value.status, e.value.code) == (403, "forbidden")
    with pytest.raises(ServiceError) as e:
        Client(service["url"], service["tokens"]["request"]).create_unit("zed")
    assert e.value.status == 403
    with pytest.raises(ServiceError) as e:
        Client("http://127.0.0.1:%d" % _free_port(), "x", timeout=2, retries=1, backoff=0.01).whoami()
    assert (e.value.status, e.value.code) == (0, "unreachable")
    err = pickle.loads(pickle.dumps(e.value))
    assert (err.status, err.code, err.message) == (0, "unreachable", e.value.message)
    with pytest.raises(ValueError):
        c.request("alice", "{not json")
    with pytest.raises(ValueError):
        Client("ftp://x", "t")


def test_paging_units_and_history(service):
    c = admin(service)
    for i in range(5):
        c.create_unit("page%02d" % i)
    names = [u["unit"] for u in c.units(page_size=2)]
    assert names == sorted(names)
    assert {"alice", "bob", "page00", "page04"} <= set(names)
    api_names = [u["unit"] for u in c.units(page_size=1000)]
    assert names == api_names
    for _ in range(5):
        c.request("page00", {"pure": {"epsilon": 0.01}})
    h2 = list(c.history("page00", page_size=2))
    h = list(c.history("page00", page_size=1000))
    assert h2 == h and len([e for e in h if e.get("kind", "request") == "request"]) == 5
    ids = [e["id"] for e in h]
    assert ids == sorted(ids)
    after = list(c.history("page00", after=ids[-3]))
    assert [e["id"] for e in after] == ids[-2:]
    assert list(c.history("page00", since="2999-01-01T00:00:00Z")) == []
    assert list(c.history("page00", until="2000-01-01T00:00:00Z")) == []
    assert [e["id"] for e in c.history("page00", since="2000-01-01T00:00:00Z")] == ids


def test_verify_export_and_pickle(service):
    c = admin(service)
    rep = c.verify()
    assert rep["ok"] is True and rep["problems"] == []
    ex = c.export()
    assert isinstance(ex, dict) and ex
    with pytest.raises(ServiceError) as e:
        Client(service["url"], service["tokens"]["read"]).export()
    assert e.value.status == 403
    d = c.request("bob", PURE)
    for p in range(2, pickle.HIGHEST_PROTOCOL + 1):
        assert pickle.loads(pickle.dumps(d, protocol=p)) == d
    assert isinstance(d, Decision) and dpacct.Decision is Decision
