#!/usr/bin/env python3
# The budget service under load: durable decisions per second through `dpacct serve`, and the
# same load with the server SIGKILLed and restarted (bench/README.md, "The budget service").
# SPDX-License-Identifier: GPL-3.0-or-later
"""The budget service under load (issue 25, item 7).

For each backend (a fresh SQLite file; a throwaway PostgreSQL server made by
tests/pg_server.sh), it creates a ledger with one unit per client and an admin token,
starts `dpacct serve` on a free local port, and runs CLIENTS client processes (each one
keep-alive http.client connection, its own unit) that send POST /v1/units/{unit}/requests
as fast as answers come back, for SECONDS.  Every answered decision (200 accepted, 409
rejected) is durable: the server answers only after the ledger committed it.  It prints
decisions/s and the p50 / p99 latency of one decision as a client sees it.

--kill-after S (the fault run): S seconds into the load the server is SIGKILLed and
started again on the same port and ledger.  A client whose connection fails sends the
same request again with the same Idempotency-Key until it is answered (the service
answers a key already decided with its original decision).  Each client logs every
acknowledged decision (unit, key, request id, outcome); afterwards the check asserts
that every acknowledged decision is in the unit's history (GET .../history) with the
same id, key and outcome, that no unit accepted more than its budget allows (and its
remaining budget is not negative), that every accepted history entry was acknowledged
(with --strict-acks: none is charged that no client was told about, which holds here
because clients retry until answered), and that `dpacct ledger verify` passes.  Exit
status 0 when every check holds, 1 otherwise.
"""
import argparse
import http.client
import json
import multiprocessing as mp
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(HERE)

# The queries: pure epsilon COST from a pure budget.  Exact in decimal (the pure filter
# keeps its spend exactly), so the most a unit can accept is BUDGET / COST exactly.
COST = 0.25
LOAD_BUDGET = 1e9          # the load run never exhausts a unit
FAULT_BUDGET = 50.0        # the fault run does: at most 200 accepted per unit


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, **kw)


class Backend:
    """A fresh ledger location: an SQLite file, or a database of a throwaway PostgreSQL."""

    def __init__(self, kind, workdir):
        self.kind = kind
        self.workdir = workdir
        self.pgdir = None
        if kind == "sqlite":
            self.location = os.path.join(workdir, "ledger.db")
        else:
            # Unix socket paths are limited to ~100 bytes: a short directory of its own
            self.pgdir = tempfile.mkdtemp(prefix="dpa-svc-pg-", dir="/tmp")
            script = os.path.join(CHECKOUT, "tests", "pg_server.sh")
            run(["bash", script, "start", self.pgdir])
            self.location = run(["bash", script, "uri", self.pgdir, "svcbench"]).stdout.strip()

    def cpu(self):
        """CPU seconds used so far by the PostgreSQL server (0 for SQLite)."""
        if not self.pgdir:
            return 0.0
        try:
            with open(os.path.join(self.pgdir, "data", "postmaster.pid")) as f:
                return tree_cpu(int(f.readline()))
        except (OSError, ValueError):
            return 0.0

    def close(self):
        if self.pgdir:
            subprocess.run(["bash", os.path.join(CHECKOUT, "tests", "pg_server.sh"), "stop", self.pgdir],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            shutil.rmtree(self.pgdir, ignore_errors=True)


TICK = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid, children=False):
    """CPU seconds (user + system) of a process from /proc (with children: also those of
    its children it has waited for); 0 if it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    t = int(fields[11]) + int(fields[12])
    if children:
        t += int(fields[13]) + int(fields[14])
    return t / TICK


def tree_cpu(root):
    """CPU seconds of a process, its live children, and the children it has reaped (the
    PostgreSQL server: the postmaster, its backends and background workers)."""
    total = proc_cpu(root, children=True)
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if ppid == root:
                total += proc_cpu(int(d))
    return total


def make_ledger(dpacct, location, units, budget):
    """The ledger with its units (pure filter, epsilon budget) and an admin token."""
    cmd = [dpacct, "ledger", "init", location, "--filter", "pure", "--epsilon", repr(budget)]
    for u in units:
        cmd += ["--unit", u]
    run(cmd)
    out = run([dpacct, "ledger", "token", "create", location, "--tenant", "default",
               "--role", "admin", "--label", "service_load"]).stdout.split()
    if len(out) != 1:
        raise SystemExit("service_load: `ledger token create` printed %d words, not one token" % len(out))
    return out[0]


class Server:
    """`dpacct serve` on 127.0.0.1:port; its log (one line per request) in workdir."""

    def __init__(self, dpacct, location, port, workdir, threads, extra):
        self.cmd = [dpacct, "serve", "--ledger", location, "--listen", "127.0.0.1:%d" % port]
        if threads:
            self.cmd += ["--threads", str(threads)]
        self.cmd += extra
        self.port = port
        self.logpath = os.path.join(workdir, "serve.log")
        self.proc = None
        self.starts = 0

    def start(self, wait=60.0):
        self.starts += 1
        log = open(self.logpath, "a")
        log.write("== start %d: %s\n" % (self.starts, " ".join(self.cmd)))
        log.flush()
        self.proc = subprocess.Popen(self.cmd, stdout=log, stderr=log)
        log.close()
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit("service_load: dpacct serve exited with %d (log: %s)"
                                 % (self.proc.returncode, self.logpath))
            try:
                c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                c.request("GET", "/healthz")
                r = c.getresponse()
                r.read()
                c.close()
                if r.status == 200:
                    return
            except (OSError, http.client.HTTPException):
                pass
            time.sleep(0.05)
        raise SystemExit("service_load: dpacct serve not healthy after %g s (log: %s)" % (wait, self.logpath))

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def client(idx, port, token, unit, start_at, stop_at, give_up_at, logpath, out):
    """One client: decisions on its unit from start_at to stop_at over one keep-alive
    connection; a failed connection is reopened and the same request (same key) sent
    again until answered or give_up_at.  Puts its counts and latencies on `out`."""
    path = "/v1/units/%s/requests" % urllib.parse.quote(unit, safe="")
    body = json.dumps({"spec": {"pure": {"epsilon": COST}}}).encode()
    hdr = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
    lat, counts, retries, unacked = [], {}, 0, 0
    log = open(logpath, "w")
    conn = None
    n = 0
    while time.time() < start_at:
        time.sleep(0.001)
    while time.time() < stop_at:
        n += 1
        key = "load-%s-%d-%d" % (unit, os.getpid(), n)
        hdr["Idempotency-Key"] = key
        t0 = time.perf_counter()
        while True:
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
                conn.request("POST", path, body, hdr)
                r = conn.getresponse()
                data = r.read()
                if r.getheader("Connection", "").lower() == "close":
                    conn.close()
                    conn = None
                break
            except (OSError, http.client.HTTPException):
                if conn is not None:
                    conn.close()
                conn = None
                retries += 1
                if time.time() > give_up_at:
                    r = None
                    break
                time.sleep(0.02)
        if r is None:
            unacked += 1
            break
        dt = time.perf_counter() - t0
        code = r.status
        counts[code] = counts.get(code, 0) + 1
        if code in (200, 409):
            try:
                d = json.loads(data)
                log.write(json.dumps({"unit": unit, "key": key, "request_id": d["request_id"],
                                      "decision": d["decision"], "replayed": d.get("replayed", False)}) + "\n")
                lat.append(dt)
            except (ValueError, KeyError):
                counts["bad_body"] = counts.get("bad_body", 0) + 1
        else:
            log.write(json.dumps({"unit": unit, "key": key, "http": code, "body": data.decode("utf-8", "replace")[:300]}) + "\n")
    log.close()
    if conn is not None:
        conn.close()
    t = os.times()
    out.put({"idx": idx, "lat": lat, "counts": {str(k): v for k, v in counts.items()},
             "retries": retries, "unacked": unacked, "cpu": t.user + t.system})


def percentile(sorted_xs, p):
    if not sorted_xs:
        return float("nan")
    i = min(len(sorted_xs) - 1, max(0, int(round(p / 100.0 * len(sorted_xs) + 0.5)) - 1))
    return sorted_xs[i]


def api_get(port, token, path):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    c.request("GET", path, headers={"Authorization": "Bearer " + token})
    r = c.getresponse()
    data = r.read()
    c.close()
    if r.status != 200:
        raise SystemExit("service_load: GET %s answered %d: %s" % (path, r.status, data[:300]))
    return json.loads(data)


def history(port, token, unit):
    out, after = [], None
    while True:
        q = {"limit": 1000}
        if after is not None:
            q["after"] = after
        page = api_get(port, token, "/v1/units/%s/history?%s" % (urllib.parse.quote(unit, safe=""),
                                                                 urllib.parse.urlencode(q)))
        out += page["entries"]
        after = page.get("next")
        if after is None:
            return out


def check(port, token, units, logs, budget, dpacct, location, strict_acks):
    """The fault run's checks; returns a list of problems (empty: all hold)."""
    problems = []
    max_accepted = int(budget / COST)
    acks = {}
    for lp in logs:
        with open(lp) as f:
            for line in f:
                a = json.loads(line)
                if "request_id" in a:
                    acks[(a["unit"], a["key"])] = a
    for u in units:
        entries = [e for e in history(port, token, u) if e.get("kind", "request") == "request"]
        by_id = {int(e["id"]): e for e in entries}
        mine = {k: a for k, a in acks.items() if k[0] == u}
        for (_, key), a in mine.items():
            e = by_id.get(int(a["request_id"]))
            if e is None:
                problems.append("%s: acknowledged request %s (key %s, %s) is not in the history"
                                % (u, a["request_id"], key, a["decision"]))
                continue
            dec = e["decision"]["decision"] if isinstance(e["decision"], dict) else e["decision"]
            if dec != a["decision"] or e.get("idempotency_key", key) != key:
                problems.append("%s: request %s acknowledged %s (key %s), history says %s (key %s)"
                                % (u, a["request_id"], a["decision"], key, dec, e.get("idempotency_key")))
        accepted = [e for e in entries
                    if (e["decision"]["decision"] if isinstance(e["decision"], dict) else e["decision"]) == "accepted"]
        if len(accepted) > max_accepted:
            problems.append("%s: %d accepted requests of cost %g, budget %g allows %d"
                            % (u, len(accepted), COST, budget, max_accepted))
        st = api_get(port, token, "/v1/units/" + urllib.parse.quote(u, safe=""))
        eps = st.get("remaining", {}).get("epsilon")
        if eps is None or eps < 0 or abs(eps - (budget - COST * len(accepted))) > 1e-9 * budget:
            problems.append("%s: remaining epsilon %r, expected %g - %g * %d accepted"
                            % (u, eps, budget, COST, len(accepted)))
        if strict_acks:
            acked_ids = {int(a["request_id"]) for a in mine.values()}
            for e in accepted:
                if int(e["id"]) not in acked_ids:
                    problems.append("%s: request %s was charged but no client was answered for it"
                                    % (u, e["id"]))
    return problems


def flip_first_ack(logs):
    """--tamper-ack: the first acknowledged decision's outcome flipped in its client's log,
    so that the check must report it (a check of the check)."""
    for lp in logs:
        with open(lp) as f:
            lines = f.readlines()
        for i, line in enumerate(lines):
            a = json.loads(line)
            if "decision" in a:
                a["decision"] = "rejected" if a["decision"] == "accepted" else "accepted"
                lines[i] = json.dumps(a) + "\n"
                with open(lp, "w") as f:
                    f.writelines(lines)
                return


def mean_batch(port):
    """Decisions per group commit since the server's (last) start, from /metrics (None if
    the server does not say)."""
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        c.request("GET", "/metrics")
        text = c.getresponse().read().decode()
        c.close()
    except (OSError, http.client.HTTPException):
        return None
    v = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] in ("dpacct_commit_batches_total", "dpacct_commit_batched_total"):
            v[parts[0]] = float(parts[1])
    if v.get("dpacct_commit_batches_total"):
        return v["dpacct_commit_batched_total"] / v["dpacct_commit_batches_total"]
    return None


def verify(dpacct, location):
    r = subprocess.run([dpacct, "ledger", "verify", location], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, universal_newlines=True)
    return r.returncode, r.stdout.strip()


def one_backend(args, kind):
    workdir = tempfile.mkdtemp(prefix="dpa-svc-%s-" % kind)
    backend = Backend(kind, workdir)
    server = None
    try:
        units = ["u%02d" % i for i in range(args.clients)]
        budget = args.budget or (FAULT_BUDGET if args.kill_after else LOAD_BUDGET)
        token = make_ledger(args.dpacct, backend.location, units, budget)
        port = free_port()
        server = Server(args.dpacct, backend.location, port, workdir, args.threads, args.serve_arg)
        server.start()
        db_cpu0 = backend.cpu()
        ctx = mp.get_context("fork")
        out = ctx.Queue()
        start_at = time.time() + 0.5
        stop_at = start_at + args.seconds
        logs = [os.path.join(workdir, "client-%02d.log" % i) for i in range(args.clients)]
        procs = [ctx.Process(target=client, args=(i, port, token, units[i], start_at, stop_at,
                                                   stop_at + 60, logs[i], out))
                 for i in range(args.clients)]
        for p in procs:
            p.start()
        kill_t = None
        if args.kill_after:
            time.sleep(max(0.0, start_at + args.kill_after - time.time()))
            server.kill()
            kill_t = time.time() - start_at
            time.sleep(args.down)
            server.start()
        results = [out.get() for _ in procs]
        for p in procs:
            p.join()
        lat = sorted(x for r in results for x in r["lat"])
        counts = {}
        for r in results:
            for k, v in r["counts"].items():
                counts[k] = counts.get(k, 0) + v
        res = {"backend": kind, "clients": args.clients, "seconds": args.seconds,
               "threads": args.threads, "serve_args": " ".join(args.serve_arg),
               "decisions": len(lat), "decisions_per_s": len(lat) / args.seconds,
               "p50_ms": 1e3 * percentile(lat, 50), "p99_ms": 1e3 * percentile(lat, 99),
               "accepted": counts.get("200", 0), "rejected": counts.get("409", 0),
               "other": {k: v for k, v in counts.items() if k not in ("200", "409")},
               "retries": sum(r["retries"] for r in results),
               "unacked": sum(r["unacked"] for r in results), "killed_at_s": kill_t}
        if args.tamper_ack:
            flip_first_ack(logs)
        if args.kill_after:
            res["problems"] = check(port, token, units, logs, budget, args.dpacct, backend.location,
                                    args.strict_acks)
            if res["unacked"]:
                res["problems"].append("%d requests were never answered" % res["unacked"])
            if res["other"]:
                res["problems"].append("answers other than 200/409: %s" % res["other"])
        res["mean_batch"] = mean_batch(port)
        serve_cpu = proc_cpu(server.proc.pid)
        server.stop()
        server = None
        time.sleep(0.5)  # the database's backends exit and are reaped
        if lat and not args.kill_after:
            n = float(len(lat))
            res["cpu_ms_per_decision"] = {
                "serve": 1e3 * serve_cpu / n, "database": 1e3 * (backend.cpu() - db_cpu0) / n,
                "clients": 1e3 * sum(r["cpu"] for r in results) / n}
        rc, text = verify(args.dpacct, backend.location)
        res["verify"] = "ok" if rc == 0 else "FAILED: " + text[-500:]
        if args.kill_after and rc != 0:
            res["problems"].append("ledger verify failed: " + text[-500:])
        if args.keep:
            res["workdir"] = workdir
        return res
    finally:
        if server is not None:
            server.stop()
        backend.close()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dpacct", default=os.path.join(CHECKOUT, "build", "dpacct"),
                    help="the dpacct command (default: build/dpacct of this checkout)")
    ap.add_argument("--backend", choices=["sqlite", "postgresql", "both"], default="both")
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--threads", type=int, default=0, help="serve --threads (0: the server's default)")
    ap.add_argument("--serve-arg", action="append", default=[],
                    help="one more argument for dpacct serve (repeatable), e.g. its batch setting")
    ap.add_argument("--kill-after", type=float, default=0.0,
                    help="SIGKILL the server this many seconds into the load and restart it (the fault run)")
    ap.add_argument("--down", type=float, default=0.5, help="seconds the killed server stays down")
    ap.add_argument("--budget", type=float, default=0.0,
                    help="each unit's epsilon budget (queries cost %g; default %g, in the fault run %g)"
                    % (COST, LOAD_BUDGET, FAULT_BUDGET))
    ap.add_argument("--strict-acks", action="store_true",
                    help="also fail when an accepted history entry was acknowledged to no client")
    ap.add_argument("--tamper-ack", action="store_true",
                    help="flip one logged acknowledgement before the check (which must then fail)")
    ap.add_argument("--keep", action="store_true", help="keep the work directory (logs, SQLite ledger)")
    ap.add_argument("--json", action="store_true", help="one JSON object per backend")
    args = ap.parse_args()
    if args.clients < 1 or args.seconds <= 0:
        ap.error("--clients >= 1 and --seconds > 0")
    if args.kill_after and not 0 < args.kill_after < args.seconds:
        ap.error("--kill-after must be inside (0, --seconds)")
    kinds = ["sqlite", "postgresql"] if args.backend == "both" else [args.backend]
    failed = False
    if not args.json:
        print("%-10s %7s %7s %9s %11s %8s %8s %8s %8s %7s  %s" % (
            "backend", "clients", "seconds", "decisions", "decisions/s", "p50 ms", "p99 ms",
            "accepted", "rejected", "retries", "verify"))
    for kind in kinds:
        res = one_backend(args, kind)
        if args.json:
            print(json.dumps(res))
        else:
            print("%-10s %7d %7g %9d %11.0f %8.2f %8.2f %8d %8d %7d  %s" % (
                kind, res["clients"], res["seconds"], res["decisions"], res["decisions_per_s"],
                res["p50_ms"], res["p99_ms"], res["accepted"], res["rejected"], res["retries"],
                res["verify"]))
            if res.get("cpu_ms_per_decision"):
                c = res["cpu_ms_per_decision"]
                print("  %s: CPU per decision: serve %.3f ms, database server %.3f ms, clients %.3f ms"
                      % (kind, c["serve"], c["database"], c["clients"]))
            if res["mean_batch"] is not None:
                print("  %s: %.1f decisions per group commit on average (serve's /metrics)"
                      % (kind, res["mean_batch"]))
            if res["other"]:
                print("  other answers: %s" % res["other"])
            if res.get("killed_at_s") is not None:
                print("  server SIGKILLed at %.2f s and restarted; %s" % (
                    res["killed_at_s"], "every check holds" if not res["problems"] else
                    "%d problems:" % len(res["problems"])))
            for p in res.get("problems", [])[:20]:
                print("  PROBLEM: " + p)
        sys.stdout.flush()
        failed = failed or bool(res.get("problems")) or res["verify"] != "ok"
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
