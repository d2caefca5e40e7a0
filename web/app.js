// The budget service's dashboard: units with their remaining budgets (paged), one unit's
// history with a spent-versus-budget chart (inline SVG drawn here), the verify status.
// Plain JavaScript, no framework, no inline handlers (CSP-friendly).  The token comes from
// the form or from the URL fragment (#token=...&unit=u1, removed from the URL at once) and
// is kept in sessionStorage.  Numbers are printed as the API gives them: the JSON is parsed
// keeping each number's source text (ApiNumber), so nothing is re-rounded for display.
// SPDX-License-Identifier: GPL-3.0-or-later
"use strict";

(function () {
  var TOKEN_KEY = "dpacct.token";
  var PAGE = 20;            // units per page unless the fragment says limit=N
  var HISTORY_PAGES = 50;   // at most 50 pages of 1000 history entries are charted
  var SVGNS = "http://www.w3.org/2000/svg";

  // ------------------------------------------------------------------ numbers

  // A JSON number with its source text: arithmetic through valueOf, display through toString.
  function ApiNumber(value, source) { this.value = value; this.source = source; }
  ApiNumber.prototype.valueOf = function () { return this.value; };
  ApiNumber.prototype.toString = function () { return this.source; };
  ApiNumber.prototype.toJSON = function () { return this.value; };

  function isNum(x) { return x instanceof ApiNumber || typeof x === "number"; }

  // JSON.parse keeping the source of numbers (the reviver's context.source, Chromium 114+ and
  // Firefox 135+); elsewhere the shortest round-trip text of the double.
  function parseJson(text) {
    return JSON.parse(text, function (key, value, context) {
      if (typeof value !== "number") return value;
      var src = context && typeof context.source === "string" ? context.source : String(value);
      return new ApiNumber(value, src);
    });
  }

  // Numeric leaves of a JSON object as [path, number]: {"rho": [1, 2]} -> rho[0], rho[1].
  function numericLeaves(obj, prefix, out) {
    out = out || [];
    if (isNum(obj)) { out.push([prefix, obj]); return out; }
    if (Array.isArray(obj)) {
      obj.forEach(function (v, i) { numericLeaves(v, prefix + "[" + i + "]", out); });
    } else if (obj && typeof obj === "object") {
      Object.keys(obj).forEach(function (k) { numericLeaves(obj[k], prefix ? prefix + "." + k : k, out); });
    }
    return out;
  }

  // ------------------------------------------------------------------ DOM helpers

  function el(tag, attrs, children) {
    var e = document.createElement(tag);
    setAttrs(e, attrs);
    append(e, children);
    return e;
  }
  function svg(tag, attrs, children) {
    var e = document.createElementNS(SVGNS, tag);
    setAttrs(e, attrs);
    append(e, children);
    return e;
  }
  function setAttrs(e, attrs) {
    Object.keys(attrs || {}).forEach(function (k) {
      if (attrs[k] !== null && attrs[k] !== undefined) e.setAttribute(k, String(attrs[k]));
    });
  }
  function append(e, children) {
    if (children === null || children === undefined) return;
    if (!Array.isArray(children)) children = [children];
    children.forEach(function (c) {
      if (c === null || c === undefined) return;
      e.appendChild(typeof c === "object" && c.nodeType ? c : document.createTextNode(String(c)));
    });
  }
  function numSpan(value, attrs) {
    var a = attrs || {};
    a["class"] = "num";
    return el("span", a, String(value));
  }
  function $(id) { return document.getElementById(id); }

  // ------------------------------------------------------------------ state and API

  function fragment() { return new URLSearchParams(location.hash.replace(/^#/, "")); }

  // A token in the fragment goes to sessionStorage and leaves the URL (and the history).
  function takeTokenFromFragment() {
    var f = fragment();
    if (!f.has("token")) return;
    sessionStorage.setItem(TOKEN_KEY, f.get("token"));
    f.delete("token");
    var rest = f.toString();
    history.replaceState(null, "", location.pathname + location.search + (rest ? "#" + rest : ""));
  }
  function token() { return sessionStorage.getItem(TOKEN_KEY); }

  function ApiError(status, code, message) { this.status = status; this.code = code; this.message = message; }

  function api(path, auth) {
    var headers = { "Accept": "application/json" };
    if (auth !== false) headers["Authorization"] = "Bearer " + token();
    return fetch(path, { headers: headers, credentials: "omit", cache: "no-store" }).then(function (r) {
      return r.text().then(function (text) {
        var body = null;
        try { body = text ? parseJson(text) : null; } catch (e) { body = null; }
        if (!r.ok && !(r.status === 503 && body)) {
          var err = body && body.error ? body.error : {};
          throw new ApiError(r.status, err.code || "http_" + r.status, err.message || r.statusText);
        }
        return body;
      });
    });
  }

  function showError(e) {
    var p = $("error");
    if (e instanceof ApiError && e.status === 401) {
      sessionStorage.removeItem(TOKEN_KEY);
      p.textContent = "The token was refused (" + e.message + "): enter another.";
      p.hidden = false;
      showLogin();
      return;
    } else if (e instanceof ApiError) {
      p.textContent = "Error " + e.status + " (" + e.code + "): " + e.message;
    } else {
      p.textContent = "Error: " + (e && e.message ? e.message : String(e));
    }
    p.hidden = false;
    document.body.setAttribute("data-state", "error");
  }

  function showLogin() {
    $("login").hidden = false;
    $("forget").hidden = true;
    $("who").textContent = "";
    clear($("view"));
    document.body.setAttribute("data-state", "login");
    $("token-input").focus();
  }
  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); }

  // ------------------------------------------------------------------ views

  function remainingList(remaining, attrs) {
    var ul = el("ul", { "class": "remaining" });
    numericLeaves(remaining, "").forEach(function (kv) {
      var a = Object.assign({ "data-key": kv[0] }, attrs);
      ul.appendChild(el("li", null, [kv[0] + " = ", numSpan(kv[1], a)]));
    });
    return ul;
  }

  function filterText(f) {
    if (!f || typeof f !== "object") return "";
    return numericLeaves(f, "").map(function (kv) { return kv[0] + " " + String(kv[1]); })
      .reduce(function (s, t) { return s + ", " + t; }, String(f.filter || ""));
  }

  function unitLink(name) {
    return el("a", { href: "#" + new URLSearchParams({ unit: name }).toString() }, name);
  }

  function renderUnits(view, f) {
    var limit = Math.max(1, Math.min(1000, parseInt(f.get("limit") || PAGE, 10) || PAGE));
    var q = new URLSearchParams({ limit: String(limit) });
    if (f.get("after")) q.set("after", f.get("after"));
    return api("/v1/units?" + q.toString()).then(function (page) {
      var units = page.units || [];
      var table = el("table", { id: "units-table" }, [
        el("caption", null, "Units" + (f.get("after") ? " after " + f.get("after") : "") + " (" + units.length + " on this page)"),
        el("thead", null, el("tr", null, ["Unit", "Tenant", "State", "Filter (budget)", "Requests",
          "Accepted", "Rejected", "Reserved", "Generation", "Remaining", "Exhausted"]
          .map(function (h) { return el("th", { scope: "col" }, h); })))]);
      var tbody = el("tbody");
      units.forEach(function (u) {
        var name = String(u.unit);
        var a = { "data-unit": name };
        tbody.appendChild(el("tr", { "data-unit": name }, [
          el("th", { scope: "row" }, unitLink(name)),
          el("td", null, u.tenant === undefined ? "" : String(u.tenant)),
          el("td", null, u.lifecycle === undefined ? "" : String(u.lifecycle)),
          el("td", null, filterText(u.filter)),
          el("td", { "class": "n" }, numSpan(u.requests, Object.assign({ "data-field": "requests" }, a))),
          el("td", { "class": "n" }, numSpan(u.accepted, Object.assign({ "data-field": "accepted" }, a))),
          el("td", { "class": "n" }, numSpan(u.rejected, Object.assign({ "data-field": "rejected" }, a))),
          el("td", { "class": "n" }, u.reserved === undefined ? "" : numSpan(u.reserved, Object.assign({ "data-field": "reserved" }, a))),
          el("td", { "class": "n" }, u.generation === undefined ? "" : numSpan(u.generation, Object.assign({ "data-field": "generation" }, a))),
          el("td", null, remainingList(u.remaining, a)),
          el("td", null, u.exhausted ? "yes" : "no")]));
      });
      table.appendChild(tbody);
      view.appendChild(el("h2", { id: "view-title" }, "Units and remaining budgets"));
      view.appendChild(table);
      var pager = el("nav", { "class": "pager", "aria-label": "Pages of units" });
      if (f.get("after")) pager.appendChild(el("a", { href: "#view=units&limit=" + limit, id: "first-page" }, "First page"));
      if (page.next !== null && page.next !== undefined) {
        pager.appendChild(el("a", { id: "next-page",
          href: "#" + new URLSearchParams({ view: "units", limit: String(limit), after: String(page.next) }).toString() },
          "Next page"));
      }
      view.appendChild(pager);
    });
  }

  // Every history entry of a unit (pages of 1000, at most HISTORY_PAGES of them).
  function fetchHistory(unit) {
    var entries = [];
    function next(after, n) {
      var q = new URLSearchParams({ limit: "1000" });
      if (after !== null) q.set("after", String(after));
      return api("/v1/units/" + encodeURIComponent(unit) + "/history?" + q.toString()).then(function (page) {
        Array.prototype.push.apply(entries, page.entries || []);
        if (page.next === null || page.next === undefined || n + 1 >= HISTORY_PAGES) {
          return { entries: entries, complete: page.next === null || page.next === undefined };
        }
        return next(page.next, n + 1);
      });
    }
    return next(null, 0);
  }

  // The remaining budget after an entry, as the API gives it.
  function entryRemaining(e) {
    if (e.remaining && typeof e.remaining === "object") return e.remaining;
    if (e.decision && typeof e.decision === "object" && e.decision.remaining) return e.decision.remaining;
    return null;
  }

  // The charted parameters: numeric leaves of the filter configuration that the remaining
  // budget also has (the budget's own terms; not the as_epsilon_delta view, not rdp's orders).
  function chartedParameters(filter, remaining) {
    var budget = {};
    numericLeaves(filter || {}, "").forEach(function (kv) { budget[kv[0]] = kv[1]; });
    return numericLeaves(remaining || {}, "").filter(function (kv) {
      return budget[kv[0]] !== undefined && kv[0].indexOf("as_epsilon_delta") !== 0 && !/^order(\[|$)/.test(kv[0]);
    }).map(function (kv) { return { key: kv[0], budget: budget[kv[0]] }; });
  }

  // Short tick labels (axes only; the table below the chart has the exact numbers).
  function tick(x) { return Math.abs(x) < 1e-3 && x !== 0 ? x.toExponential(1) : String(+x.toPrecision(3)); }

  // One spent-versus-budget chart: spent = budget - remaining after each entry, a step line
  // over time, and the budget as a dashed line.
  function chart(param, points, unit) {
    var W = 640, H = 240, L = 64, R = 16, T = 16, B = 40;
    var budget = +param.budget;
    var ymax = points.reduce(function (m, p) { return Math.max(m, p.spent); }, budget) || 1;
    var t0 = points.length ? points[0].t : 0, t1 = points.length ? points[points.length - 1].t : 1;
    if (t1 <= t0) t1 = t0 + 1;
    function X(t) { return L + (W - L - R) * (t - t0) / (t1 - t0); }
    function Y(v) { return T + (H - T - B) * (1 - v / ymax); }
    var titleId = "chart-title-" + param.key.replace(/[^A-Za-z0-9]/g, "_");
    var descId = titleId + "-desc";
    var last = points.length ? points[points.length - 1].spent : 0;
    var g = svg("svg", { "class": "chart", viewBox: "0 0 " + W + " " + H, width: W, height: H, role: "img",
      "aria-labelledby": titleId + " " + descId, "data-param": param.key }, [
      svg("title", { id: titleId }, "Spent " + param.key + " of unit " + unit + " over time"),
      svg("desc", { id: descId }, points.length + " points; budget " + String(param.budget) +
        "; spent now " + String(last))]);
    for (var i = 0; i <= 4; i++) {
      var v = ymax * i / 4;
      g.appendChild(svg("line", { "class": "grid", x1: L, x2: W - R, y1: Y(v), y2: Y(v) }));
      g.appendChild(svg("text", { x: L - 6, y: Y(v) + 4, "text-anchor": "end" }, tick(v)));
    }
    g.appendChild(svg("line", { "class": "axis", x1: L, x2: L, y1: T, y2: H - B }));
    g.appendChild(svg("line", { "class": "axis", x1: L, x2: W - R, y1: H - B, y2: H - B }));
    g.appendChild(svg("line", { "class": "budget", x1: L, x2: W - R, y1: Y(budget), y2: Y(budget) }));
    g.appendChild(svg("text", { x: W - R, y: Y(budget) - 4, "text-anchor": "end" }, "budget " + String(param.budget)));
    if (points.length) {
      var d = "M" + X(points[0].t) + " " + Y(0);
      points.forEach(function (p) { d += " H" + X(p.t) + " V" + Y(p.spent); });
      g.appendChild(svg("path", { "class": "spent", d: d }));
      points.forEach(function (p) {
        g.appendChild(svg("circle", { "class": "dot", cx: X(p.t), cy: Y(p.spent), r: 3 }));
      });
      g.appendChild(svg("text", { x: L, y: H - B + 16 }, new Date(t0).toISOString().replace(".000", "")));
      g.appendChild(svg("text", { x: W - R, y: H - B + 16, "text-anchor": "end" }, new Date(t1).toISOString().replace(".000", "")));
    }
    g.appendChild(svg("text", { x: (L + W - R) / 2, y: H - 6, "text-anchor": "middle" }, "time (UTC)"));
    return el("figure", { "data-param": param.key }, [
      el("figcaption", null, ["Spent ", param.key, " versus the budget ", numSpan(param.budget, { "data-budget": param.key })]), g]);
  }

  function renderUnit(view, name) {
    var path = "/v1/units/" + encodeURIComponent(name);
    return Promise.all([api(path), fetchHistory(name)]).then(function (res) {
      var u = res[0], hist = res[1];
      var a = { "data-unit": name };
      view.appendChild(el("h2", { id: "view-title" }, ["Unit ", name]));
      var dl = el("dl", { "class": "status", id: "unit-status" });
      [["Tenant", "tenant"], ["State", "lifecycle"], ["Filter (budget)", "filter"],
        ["Generation", "generation"], ["Period (s)", "period_seconds"], ["Requests", "requests"],
        ["Accepted", "accepted"], ["Rejected", "rejected"], ["Reserved", "reserved"],
        ["Exhausted", "exhausted"], ["Created", "created"]].forEach(function (kv) {
        var v = u[kv[1]];
        if (v === undefined || v === null) return;
        if (kv[1] === "filter") v = filterText(v);
        if (kv[1] === "exhausted") v = v ? "yes" : "no";
        dl.appendChild(el("dt", null, kv[0]));
        dl.appendChild(el("dd", null, isNum(v) ? numSpan(v, Object.assign({ "data-field": kv[1], "data-scope": "status" }, a)) : String(v)));
      });
      dl.appendChild(el("dt", null, "Remaining"));
      dl.appendChild(el("dd", null, remainingList(u.remaining, Object.assign({ "data-scope": "status" }, a))));
      view.appendChild(dl);

      var params = chartedParameters(u.filter, u.remaining);
      var charted = hist.entries.filter(function (e) { return entryRemaining(e) && e.time; });
      // the start (nothing spent at creation) and a point after each entry with a remaining
      var series = params.map(function (p) {
        var pts = [];
        var created = Date.parse(u.created);
        if (!isNaN(created)) pts.push({ t: created, spent: 0 });
        charted.forEach(function (e) {
          var r = {};
          numericLeaves(entryRemaining(e), "").forEach(function (kv) { r[kv[0]] = kv[1]; });
          if (r[p.key] !== undefined) pts.push({ t: Date.parse(e.time), spent: +p.budget - +r[p.key] });
        });
        if (!charted.length) {
          var now = {};
          numericLeaves(u.remaining, "").forEach(function (kv) { now[kv[0]] = kv[1]; });
          pts.push({ t: Date.now(), spent: +p.budget - +now[p.key] });
        }
        return { param: p, points: pts };
      });
      view.appendChild(el("h3", null, "Spent versus budget"));
      if (!charted.length && hist.entries.length) {
        view.appendChild(el("p", { "class": "note" }, "The history entries carry no remaining budget: only the current point is charted."));
      }
      series.forEach(function (s) { view.appendChild(chart(s.param, s.points, name)); });

      var keys = params.map(function (p) { return p.key; });
      var table = el("table", { id: "history-table" }, [
        el("caption", null, "History (" + hist.entries.length + " entries" + (hist.complete ? "" : ", the first ones only") + ")"),
        el("thead", null, el("tr", null, ["Id", "Time", "Kind", "Actor", "Decision", "Reason"].concat(
          keys.map(function (k) { return "Remaining " + k; }), keys.map(function (k) { return "Spent " + k; }))
          .map(function (h) { return el("th", { scope: "col" }, h); })))]);
      var tbody = el("tbody");
      hist.entries.forEach(function (e) {
        var rem = {};
        numericLeaves(entryRemaining(e) || {}, "").forEach(function (kv) { rem[kv[0]] = kv[1]; });
        var decision = e.decision && typeof e.decision === "object" ? e.decision.decision : e.decision;
        var ea = { "data-entry": String(e.id) };
        tbody.appendChild(el("tr", ea, [
          el("td", { "class": "n" }, numSpan(e.id, Object.assign({ "data-field": "id" }, ea))),
          el("td", null, e.time === undefined ? "" : String(e.time)),
          el("td", null, e.kind === undefined ? "request" : String(e.kind)),
          el("td", null, e.actor === undefined ? "" : String(e.actor)),
          el("td", null, decision === undefined || decision === null ? "" : String(decision)),
          el("td", null, e.reason ? String(e.reason) : "")].concat(
          keys.map(function (k) {
            return el("td", { "class": "n" }, rem[k] === undefined ? "" : numSpan(rem[k], Object.assign({ "data-key": k }, ea)));
          }),
          keys.map(function (k, i) {
            var p = params[i];
            return el("td", { "class": "n" }, rem[k] === undefined ? "" : String(+p.budget - +rem[k]));
          }))));
      });
      table.appendChild(tbody);
      view.appendChild(table);
      view.appendChild(el("p", { "class": "note" }, "Spent = budget − remaining, per parameter of the unit's filter, " +
        "computed here in double precision; the remaining budgets are the API's numbers as printed by the service. " +
        "Epsilon, delta and rho add up over queries; mu does not (Gaussian DP composes as the root of the sum of " +
        "squares), so for mu this difference shows how much of the budget's mu is gone, not a sum of the queries' mu."));
      view.appendChild(el("p", null, el("a", { href: "#view=units" }, "All units")));
    });
  }

  function renderVerify(view) {
    view.appendChild(el("h2", { id: "view-title" }, "Ledger verification"));
    view.appendChild(el("p", { "class": "note", id: "verify-wait" }, "Replaying the whole ledger…"));
    return api("/v1/verify").then(function (rep) {
      view.removeChild($("verify-wait"));
      var ok = rep.ok === true;
      view.appendChild(el("p", { id: "verify-status", "data-ok": String(ok), "class": ok ? "ok" : "bad" },
        ok ? "Verified: the history replays to the stored state and the hash chain holds."
           : "Verification FAILED."));
      var dl = el("dl", { "class": "status", id: "verify-report" });
      Object.keys(rep).forEach(function (k) {
        if (k === "problems" || k === "ok") return;
        var v = rep[k];
        dl.appendChild(el("dt", null, k));
        dl.appendChild(el("dd", null, isNum(v) ? numSpan(v, { "data-field": k }) :
          (v && typeof v === "object" ? JSON.stringify(v) : String(v))));
      });
      view.appendChild(dl);
      var problems = Array.isArray(rep.problems) ? rep.problems : [];
      view.appendChild(el("h3", null, "Problems (" + problems.length + ")"));
      var ul = el("ul", { id: "verify-problems" });
      problems.forEach(function (p) { ul.appendChild(el("li", null, typeof p === "object" ? JSON.stringify(p) : String(p))); });
      view.appendChild(ul);
    });
  }

  // ------------------------------------------------------------------ routing

  function render() {
    takeTokenFromFragment();
    var view = $("view");
    clear(view);
    $("error").hidden = true;
    if (!token()) { showLogin(); return Promise.resolve(); }
    $("login").hidden = true;
    $("forget").hidden = false;
    document.body.setAttribute("data-state", "loading");
    var f = fragment();
    var p;
    if (f.get("unit")) {
      p = renderUnit(view, f.get("unit"));
      document.title = "dpacct budgets: " + f.get("unit");
    } else if (f.get("view") === "verify") {
      p = renderVerify(view);
      document.title = "dpacct budgets: verify";
    } else {
      p = renderUnits(view, f);
      document.title = "dpacct budgets";
    }
    var who = api("/v1/whoami").then(function (w) {
      $("who").textContent = "Token " + w.token_id + " (tenant " + w.tenant + ", role " + w.role + ")";
    });
    return Promise.all([p, who]).then(function () {
      document.body.setAttribute("data-state", "ready");
    }, showError);
  }

  function health() {
    return api("/healthz", false).then(function (h) {
      $("health").textContent = "Service: " + (h.status || "?") + ", database: " + (h.database || "?");
    }, function (e) {
      $("health").textContent = "Service: unreachable (" + (e.message || e) + ")";
    });
  }

  function start() {
    $("token-form").addEventListener("submit", function (ev) {
      ev.preventDefault();
      var v = $("token-input").value.trim();
      if (!v) return;
      sessionStorage.setItem(TOKEN_KEY, v);
      $("token-input").value = "";
      render();
    });
    $("forget").addEventListener("click", function () {
      sessionStorage.removeItem(TOKEN_KEY);
      showLogin();
    });
    window.addEventListener("hashchange", render);
    health();
    render();
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
