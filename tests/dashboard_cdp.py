#!/usr/bin/env python3
# The dashboard driven like a user through the Chrome DevTools protocol (a minimal websocket
# client, Python standard library only), for tests/dashboard_test.sh.
# SPDX-License-Identifier: GPL-3.0-or-later
"""usage: dashboard_cdp.py CHROMIUM PROFILE_DIR BASE_URL TOKEN

Opens BASE_URL/#token=TOKEN&unit=alice in headless Chromium and checks, by evaluating
JavaScript in the page: the token left the URL (location.href) at once and is in
sessionStorage; "Forget token" empties sessionStorage and shows the token form; a token
typed into the form and submitted shows the units (the token is not in the DOM or URL);
clicking a unit's link opens its page.  Prints "ok - ..." / "not ok - ..." lines; exit 1
if any check failed."""
import base64
import json
import os
import re
import socket
import struct
import subprocess
import sys
import time
import urllib.request


class WebSocket:
    """Just enough of RFC 6455 for the DevTools protocol: text frames, client masking."""

    def __init__(self, url):
        m = re.match(r"ws://([^/:]+):(\d+)(/.*)", url)
        self.sock = socket.create_connection((m.group(1), int(m.group(2))), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(("GET %s HTTP/1.1\r\nHost: %s:%s\r\nUpgrade: websocket\r\n"
                           "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
                           "Sec-WebSocket-Version: 13\r\n\r\n" % (m.group(3), m.group(1), m.group(2), key)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += self.sock.recv(1)
        if b" 101 " not in head.split(b"\r\n", 1)[0]:
            raise RuntimeError("websocket handshake refused: %r" % head[:200])

    def send(self, text):
        data = text.encode()
        mask = os.urandom(4)
        n = len(data)
        hdr = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else
                               bytes([0x80 | 126]) + struct.pack(">H", n) if n < 65536 else
                               bytes([0x80 | 127]) + struct.pack(">Q", n))
        self.sock.sendall(hdr + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            if not chunk:
                raise RuntimeError("websocket closed")
            buf += chunk
        return buf

    def recv(self):
        msg = b""
        while True:
            b0, b1 = self._exact(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._exact(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._exact(8))[0]
            payload = self._exact(n)
            if b0 & 0x0F in (0x1, 0x0):
                msg += payload
                if b0 & 0x80:
                    return msg.decode()


class Page:
    def __init__(self, ws):
        self.ws = ws
        self.n = 0

    def call(self, method, **params):
        self.n += 1
        self.ws.send(json.dumps({"id": self.n, "method": method, "params": params}))
        while True:
            m = json.loads(self.ws.recv())
            if m.get("id") == self.n:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m["result"]

    def eval(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError("%s: %s" % (expr, r["exceptionDetails"].get("text")))
        return r["result"].get("value")

    def wait_state(self, states, timeout=30.0):
        end = time.time() + timeout
        s = None
        while time.time() < end:
            # before the page has loaded there is no body (or another document)
            s = self.eval("document.body && document.getElementById('view') ? "
                          "document.body.getAttribute('data-state') : null")
            if s in states:
                return s
            time.sleep(0.1)
        return s


def main():
    chromium, profile, base, token = sys.argv[1:5]
    proc = subprocess.Popen([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                             "--user-data-dir=" + profile, "--remote-debugging-port=0",
                             "--window-size=1280,900", base + "/#token=" + token + "&unit=alice"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    fails = 0

    def check(name, cond):
        nonlocal fails
        print(("ok - " if cond else "not ok - ") + name)
        fails += 0 if cond else 1

    try:
        port = None
        end = time.time() + 60
        while port is None and time.time() < end:
            line = proc.stderr.readline().decode(errors="replace")
            m = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            if m:
                port = int(m.group(1))
            elif not line and proc.poll() is not None:
                break
        if port is None:
            print("not ok - chromium's DevTools endpoint did not come up")
            return 1
        pages = []
        for _ in range(100):
            with urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port, timeout=10) as r:
                pages = [p for p in json.load(r) if p.get("type") == "page"]
            if pages:
                break
            time.sleep(0.1)
        page = Page(WebSocket(pages[0]["webSocketDebuggerUrl"]))
        check("the unit page from a #token= link becomes ready", page.wait_state(("ready",)) == "ready")
        href = page.eval("location.href")
        check("the token left the URL (now %s)" % href.replace(token, "<TOKEN>"),
              token not in href and href.endswith("#unit=alice"))
        check("the token is in sessionStorage", page.eval("sessionStorage.getItem('dpacct.token')") == token)
        check("the unit's page shows its title",
              page.eval("document.getElementById('view-title').textContent") == "Unit alice")
        page.eval("document.getElementById('forget').click()")
        check("Forget token: the token form, sessionStorage empty",
              page.wait_state(("login",)) == "login" and
              page.eval("sessionStorage.getItem('dpacct.token')") is None and
              page.eval("document.getElementById('login').hidden") is False)
        page.eval("location.hash = 'view=units'")
        page.eval("document.getElementById('token-input').value = %s;"
                  "document.getElementById('token-form').requestSubmit()" % json.dumps(token))
        check("a token typed into the form: the units page", page.wait_state(("ready",)) == "ready" and
              page.eval("document.querySelectorAll('#units-table tbody tr').length") >= 1)
        check("the typed token is kept in sessionStorage, not in the DOM or the URL",
              page.eval("sessionStorage.getItem('dpacct.token')") == token and
              token not in page.eval("document.documentElement.outerHTML") and
              token not in page.eval("location.href"))
        page.eval("document.querySelector('#units-table tbody a').click()")
        time.sleep(0.2)
        check("clicking a unit opens its page", page.wait_state(("ready",)) == "ready" and
              page.eval("document.getElementById('view-title').textContent").startswith("Unit "))
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
