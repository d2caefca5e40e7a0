#!/usr/bin/env bash
# The dashboard (web/) against a live `dpacct serve`, in headless Chromium: a fresh SQLite
# ledger with units of two filters and some requests made through the API; the pages
# (units, paged; one unit's history and chart; verify) dumped with --dump-dom and every
# number on them compared with the API's own text; a refused token; the token form, the
# URL and sessionStorage driven through the DevTools protocol; a screenshot saved to
# BUILD/dashboard.png (a PNG of the window's size, not blank).
# SPDX-License-Identifier: GPL-3.0-or-later
#
# usage: bash tests/dashboard_test.sh PATH/TO/dpacct SOURCE_DIR
# Exit 77 (CTest: skipped) with the reason when Chromium or `dpacct serve` is missing
# (scripts/deps.sh installs Debian's chromium).  Needs bash, curl and python3.
set -u

. "$(dirname "$0")/test_lib.sh"
test_setup dashboard_test "$@"

CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$CHROMIUM" ]; then
    echo "ok - # SKIP no chromium on PATH (Debian: apt-get install chromium; scripts/deps.sh)"
    exit 77
fi
if ! "$BIN" serve --help >/dev/null 2>&1; then
    echo "ok - # SKIP $BIN has no serve command"
    exit 77
fi
SHOT=$(dirname "$BIN")/dashboard.png
WIN_W=1280
WIN_H=900

DB=$TMP/ledger.db
run ledger init "$DB" --filter gdp-residue --mu 1 --unit alice --unit bob --unit carol
check "init: a ledger with three gdp-residue units" rc_is 0
run ledger add-unit "$DB" --unit dave --filter basic --epsilon 1 --delta 1e-6
check "add-unit: a basic-filter unit" rc_is 0
"$BIN" ledger token create "$DB" --tenant default --role read --label dashboard >"$TMP/read.tok" 2>"$TMP/err"
check "token create: a read token" test -s "$TMP/read.tok"
"$BIN" ledger token create "$DB" --tenant default --role request --label writer >"$TMP/req.tok" 2>"$TMP/err"
check "token create: a request token" test -s "$TMP/req.tok"
READ=$(cat "$TMP/read.tok")
REQ=$(cat "$TMP/req.tok")

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
BASE=http://127.0.0.1:$PORT
"$BIN" serve --ledger "$DB" --listen "127.0.0.1:$PORT" --web-root "$SRC/web" >"$TMP/serve.out" 2>"$TMP/serve.log" &
SERVE=$!
trap 'kill "$SERVE" 2>/dev/null; wait "$SERVE" 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 1 200); do
    curl -fs "$BASE/healthz" >/dev/null 2>&1 && break
    sleep 0.05
done
check "serve: healthy" curl -fs "$BASE/healthz" -o /dev/null

# requests through the API: alice 3 accepted then 1 rejected (the residue filter takes three
# pure 0.5 queries from mu 1), bob 1, dave 2 approx queries, carol none
post() { curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $REQ" \
    -H 'Content-Type: application/json' -d "{\"spec\": $2}" "$BASE/v1/units/$1/requests"; }
codes=""
for _ in 1 2 3 4; do codes="$codes $(post alice '{"pure": {"epsilon": 0.5}}')"; done
codes="$codes $(post bob '{"pure": {"epsilon": 0.25}}')"
codes="$codes $(post dave '{"approx": {"epsilon": 0.3, "delta": 1e-7}}')"
codes="$codes $(post dave '{"approx": {"epsilon": 0.2, "delta": 2e-7}}')"
check "requests through the API: 200 200 200 409 200 200 200 (got$codes)" test "$codes" = " 200 200 200 409 200 200 200"

# page URL -> DOM (the token in the fragment, read by app.js and removed from the URL)
dom() {
    timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars \
        --user-data-dir="$TMP/chromium" --window-size=$WIN_W,$WIN_H --virtual-time-budget=15000 \
        --dump-dom "$1" 2>>"$TMP/chromium.log"
}
dom "$BASE/#token=$READ" >"$TMP/units.html"
dom "$BASE/#token=$READ&limit=2" >"$TMP/units-p1.html"
dom "$BASE/#token=$READ&view=units&limit=2&after=bob" >"$TMP/units-p2.html"
dom "$BASE/index.html#token=$READ&unit=alice" >"$TMP/alice.html"
dom "$BASE/#token=$READ&unit=dave" >"$TMP/dave.html"
dom "$BASE/#token=$READ&view=verify" >"$TMP/verify.html"
dom "$BASE/#token=not-a-token&unit=alice" >"$TMP/refused.html"

# compare: every number on the pages is the API's text for it
cmp_pages() {
    python3 - "$BASE" "$READ" "$TMP" "$1" <<'PY'
import json, sys, urllib.request
from html.parser import HTMLParser

base, token, tmp, what = sys.argv[1:]

class Num(str):
    """A JSON number as its source text: the page must print exactly this."""

def api(path, auth=True):
    req = urllib.request.Request(base + path, headers={"Authorization": "Bearer " + token} if auth else {})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read().decode(), parse_float=Num, parse_int=Num)

def leaves(x, prefix=""):
    if isinstance(x, Num):
        yield prefix, str(x)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from leaves(v, "%s[%d]" % (prefix, i))
    elif isinstance(x, dict):
        for k, v in x.items():
            yield from leaves(v, prefix + "." + k if prefix else k)

class Page(HTMLParser):
    """Spans of class num with their data-* attributes and text; the body's data-state."""
    def __init__(self):
        super().__init__()
        self.nums, self.stack, self.attrs, self.text = [], [], {}, []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body":
            self.attrs["body"] = a
        if tag in ("p", "section", "tr", "a", "figure", "svg") and "id" in a:
            self.attrs[a["id"]] = a
        self.stack.append((tag, a, len(self.text)))
    def handle_endtag(self, tag):
        while self.stack:
            t, a, start = self.stack.pop()
            if t == tag:
                if t == "span" and "num" in a.get("class", ""):
                    self.nums.append((a, "".join(self.text[start:])))
                return
    def handle_data(self, d):
        self.text.append(d)

def page(name):
    p = Page()
    html = open("%s/%s.html" % (tmp, name)).read()
    p.feed(html)
    p.html = html
    return p

fails = []
def expect(cond, msg):
    if not cond:
        fails.append(msg)

def ready(p, name):
    expect(p.attrs.get("body", {}).get("data-state") == "ready",
           "%s: page state %r, not ready" % (name, p.attrs.get("body", {}).get("data-state")))
    expect(token not in p.html, "%s: the token is in the DOM" % name)

def unit_numbers(p, unit, scope=None):
    got = {}
    for a, text in p.nums:
        if a.get("data-unit") == unit and (scope is None or a.get("data-scope") == scope):
            got[a.get("data-key") or "field:" + a.get("data-field", "?")] = text
    return got

def expect_unit(p, name, u, scope=None):
    got = unit_numbers(p, u["unit"], scope)
    want = {k: v for k, v in leaves(u["remaining"])}
    for f in ("requests", "accepted", "rejected", "reserved", "generation"):
        if f in u:
            want["field:" + f] = u[f]
    expect(want, "%s: the API gave no numbers for %s" % (name, u["unit"]))
    for k, v in want.items():
        expect(got.get(k) == v, "%s: unit %s %s: page %r, API %r" % (name, u["unit"], k, got.get(k), v))

if what == "units":
    p = page("units")
    ready(p, "units")
    units = api("/v1/units?limit=20")["units"]
    expect([u["unit"] for u in units] == ["alice", "bob", "carol", "dave"], "API units %r" % units)
    for u in units:
        expect_unit(p, "units", u)
        for k, v in leaves(u["filter"]):
            expect("%s %s" % (k, v) in p.html, "units: filter of %s: no %r on the page" % (u["unit"], "%s %s" % (k, v)))
    shown = sorted({a["data-unit"] for a, _ in p.nums if "data-unit" in a})
    expect(shown == ["alice", "bob", "carol", "dave"], "units page shows %r" % shown)
    p1, p2 = page("units-p1"), page("units-p2")
    ready(p1, "units page 1")
    ready(p2, "units page 2")
    s1 = sorted({a["data-unit"] for a, _ in p1.nums if "data-unit" in a})
    s2 = sorted({a["data-unit"] for a, _ in p2.nums if "data-unit" in a})
    expect(s1 == ["alice", "bob"] and s2 == ["carol", "dave"], "pages of 2: %r then %r" % (s1, s2))
    nxt = p1.attrs.get("next-page", {}).get("href", "")
    expect("after=bob" in nxt, "page 1's next link %r" % nxt)
    expect("next-page" not in p2.attrs, "page 2 (the last) has a next link")
elif what == "history":
    for name in ("alice", "dave"):
        p = page(name)
        ready(p, name)
        u = api("/v1/units/" + name)
        expect_unit(p, name, u, scope="status")
        entries = api("/v1/units/%s/history?limit=1000" % name)["entries"]
        reqs = [e for e in entries if e.get("kind", "request") in ("request", "reserve")]
        expect(len(reqs) == {"alice": 4, "dave": 2}[name], "%s: %d requests in the API's history" % (name, len(reqs)))
        rows = {a["data-entry"] for a, _ in p.nums if "data-entry" in a}
        expect(rows == {str(e["id"]) for e in entries}, "%s: page rows %r, API ids %r"
               % (name, sorted(rows), [e["id"] for e in entries]))
        charted = 0
        for e in entries:
            rem = e.get("remaining") or (e["decision"].get("remaining") if isinstance(e.get("decision"), dict) else None)
            got = {a["data-key"]: t for a, t in p.nums if a.get("data-entry") == str(e["id"]) and "data-key" in a}
            for k, v in leaves(rem or {}):
                if k in got:
                    charted += 1
                    expect(got[k] == v, "%s: entry %s %s: page %r, API %r" % (name, e["id"], k, got[k], v))
        params = {"alice": ["mu"], "dave": ["epsilon", "delta"]}[name]
        for k in params:
            expect('<figure data-param="%s"' % k in p.html, "%s: no chart of %s" % (name, k))
            b = [t for a, t in p.nums if a.get("data-budget") == k]
            expect(b == [v for kk, v in leaves(u["filter"]) if kk == k],
                   "%s: budget of %s on the page %r, API filter %r" % (name, k, b, u["filter"]))
        with_rem = [e for e in entries if e.get("remaining")]
        if with_rem:
            expect(charted >= len(params) * len(reqs),
                   "%s: only %d remaining numbers of the history entries on the page" % (name, charted))
            # per chart: the creation point and one after each entry
            expect(p.html.count('class="dot"') >= len(params) * (len(reqs) + 1),
                   "%s: the charts have too few points" % name)
        else:
            # the API's entries carry no remaining: the page says so and charts the current point
            print("#   NOTE %s: the API's history entries carry no \"remaining\"; only the current point is charted" % name)
            expect("carry no remaining budget" in p.html, "%s: no note that only the current point is charted" % name)
            expect(p.html.count('class="dot"') == 2 * len(params), "%s: not two points per chart" % name)
elif what == "verify":
    p = page("verify")
    ready(p, "verify")
    rep = api("/v1/verify")
    st = p.attrs.get("verify-status", {})
    expect(rep["ok"] is True and st.get("data-ok") == "true", "verify: API ok %r, page %r" % (rep["ok"], st))
    h = api("/healthz", auth=False)
    expect("Service: %s, database: %s" % (h["status"], h["database"]) in p.html, "verify: health line")
elif what == "refused":
    p = page("refused")
    expect(p.attrs.get("body", {}).get("data-state") == "login", "refused token: state %r"
           % p.attrs.get("body", {}).get("data-state"))
    expect("The token was refused" in p.html, "refused token: no message")
    expect("not-a-token" not in p.html, "refused token: the token is in the DOM")
for f in fails:
    print("#   " + f)
sys.exit(1 if fails else 0)
PY
}
check "units page: every remaining number and count equals the API's; pages of 2 with a next link" cmp_pages units
check "unit pages (gdp-residue, basic): status, history rows, remaining after each entry, budgets, charts" cmp_pages history
check "verify page: ok as the API says, health line" cmp_pages verify
check "a refused token: back to the token form with a message, token not shown" cmp_pages refused

# interaction, through the DevTools protocol (tests/dashboard_cdp.py): the token out of the
# URL and into sessionStorage, "Forget token", a token typed into the form, a unit's link
python3 "$SRC/tests/dashboard_cdp.py" "$CHROMIUM" "$TMP/chromium-cdp" "$BASE" "$READ" >"$TMP/cdp.out" 2>&1
rc=$?
sed 's/^/#   /' "$TMP/cdp.out"
check "driven like a user (DevTools protocol): token out of the URL into sessionStorage, forget, the form, a unit link" rc_is 0

# the screenshot: a PNG of the window's size, not blank (decoded with zlib: more than one
# colour, and at least 1% of the pixels differ from the most common one)
rm -f "$SHOT"
timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars \
    --user-data-dir="$TMP/chromium" --window-size=$WIN_W,$WIN_H --virtual-time-budget=15000 \
    --screenshot="$SHOT" "$BASE/#token=$READ&unit=alice" >>"$TMP/chromium.log" 2>&1
png_ok() {
    python3 - "$SHOT" "$WIN_W" "$WIN_H" <<'PY'
import struct, sys, zlib
path, W, H = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
data = open(path, "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, hdr = 8, b"", None
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        hdr = struct.unpack(">IIBBBBB", body)
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
w, h, depth, ctype = hdr[:4]
assert (w, h) == (W, H), "size %dx%d, window %dx%d" % (w, h, W, H)
assert depth == 8 and ctype in (2, 6), "colour type %d depth %d" % (ctype, depth)
bpp = 3 if ctype == 2 else 4
raw = zlib.decompress(idat)
stride = w * bpp
prev = bytearray(stride)
counts = {}
for y in range(h):
    f = raw[y * (stride + 1)]
    line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
    for i in range(stride):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if f == 1: line[i] = (line[i] + a) & 255
        elif f == 2: line[i] = (line[i] + b) & 255
        elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for x in range(0, stride, bpp):
        px = bytes(line[x:x + 3])
        counts[px] = counts.get(px, 0) + 1
    prev = line
top = max(counts.values())
print("#   %d colours, %.1f%% not the background" % (len(counts), 100.0 * (1 - top / (w * h))))
sys.exit(0 if len(counts) > 16 and top < 0.99 * w * h else 1)
PY
}
check "screenshot $SHOT: a PNG of ${WIN_W}x$WIN_H, not blank" png_ok

finish
