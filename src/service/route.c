/* The budget service's routing: the URL path split into percent-decoded
 * segments (a unit name may hold any byte but NUL, "/" written %2F), the
 * table of routes (method and pattern; "*" matches one segment), and the
 * dispatch to the handlers with a ledger handle borrowed from the pool.
 * tests/service_test.sh checks that every pattern of the table is a path of
 * docs/openapi.json.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>
#include "service_internal.h"

typedef enum {
    R_HEALTHZ, R_METRICS, R_OPENAPI, R_WHOAMI, R_UNITS_LIST, R_UNITS_CREATE, R_UNIT_GET, R_REQUEST,
    R_COMMIT, R_RELEASE, R_FREEZE, R_UNFREEZE, R_ARCHIVE, R_TOPUP, R_HISTORY, R_VERIFY, R_EXPORT,
    R_TENANTS_LIST, R_TENANTS_CREATE, R_TOKENS_LIST, R_TOKENS_CREATE, R_TOKEN_REVOKE
} route_id;

static const struct route {
    const char *method, *pattern;
    route_id id;
} routes[] = {
    {"GET", "/healthz", R_HEALTHZ},
    {"GET", "/metrics", R_METRICS},
    {"GET", "/openapi.json", R_OPENAPI},
    {"GET", "/v1/whoami", R_WHOAMI},
    {"GET", "/v1/units", R_UNITS_LIST},
    {"POST", "/v1/units", R_UNITS_CREATE},
    {"GET", "/v1/units/*", R_UNIT_GET},
    {"POST", "/v1/units/*/requests", R_REQUEST},
    {"POST", "/v1/units/*/requests/*/commit", R_COMMIT},
    {"POST", "/v1/units/*/requests/*/release", R_RELEASE},
    {"POST", "/v1/units/*/freeze", R_FREEZE},
    {"POST", "/v1/units/*/unfreeze", R_UNFREEZE},
    {"POST", "/v1/units/*/archive", R_ARCHIVE},
    {"POST", "/v1/units/*/topup", R_TOPUP},
    {"GET", "/v1/units/*/history", R_HISTORY},
    {"GET", "/v1/verify", R_VERIFY},
    {"GET", "/v1/export", R_EXPORT},
    {"GET", "/v1/tenants", R_TENANTS_LIST},
    {"POST", "/v1/tenants", R_TENANTS_CREATE},
    {"GET", "/v1/tokens", R_TOKENS_LIST},
    {"POST", "/v1/tokens", R_TOKENS_CREATE},
    {"POST", "/v1/tokens/*/revoke", R_TOKEN_REVOKE},
};
#define NROUTES (sizeof routes / sizeof routes[0])

/* Split url into decoded segments; 0 if it has too many or a bad one. */
static int split(svc_req *r, const char *url)
{
    const char *p = url;
    if (*p == '/')
        p++;
    r->nseg = 0;
    while (*p) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (r->nseg == (int)(sizeof r->seg / sizeof r->seg[0]))
            return 0;
        r->seg[r->nseg] = svc_percent_decode(p, n, 0);
        if (!r->seg[r->nseg])
            return 0;
        r->nseg++;
        p += n;
        if (*p == '/')
            p++;
    }
    return 1;
}

/* Does the pattern match the segments?  *wild: the segments "*" took. */
static int match(const char *pattern, svc_req *r, const char **wild)
{
    const char *p = pattern + 1;
    int i = 0, w = 0;
    while (*p) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (i >= r->nseg)
            return 0;
        if (n == 1 && *p == '*') {
            if (!r->seg[i][0])
                return 0;
            wild[w++] = r->seg[i];
        } else if (strlen(r->seg[i]) != n || memcmp(r->seg[i], p, n))
            return 0;
        i++;
        p += n;
        if (*p == '/')
            p++;
    }
    return i == r->nseg;
}

static void healthz(svc_req *r, dpa_ledger *l)
{
    dpa_error err = {0};
    if (dpa_ledger_ping(l, &err) == DPA_OK)
        svc_json(r, 200, json_pack("{s:s,s:s}", "status", "ok", "database", "ok"));
    else
        svc_json(r, 503, json_pack("{s:s,s:s}", "status", "unavailable", "database", err.message));
}

static void metrics(svc_req *r, dpa_ledger *l)
{
    char *text;
    if (r->s->o.metrics_auth) { /* every tenant's units are in it: tenant "default" only */
        if (!svc_auth(r, l, DPA_LEDGER_ROLE_READ))
            return;
        if (strcmp(r->who.tenant, "default") != 0) {
            svc_error(r, 403, "forbidden", "the metrics cover the whole ledger: a token of the tenant \"default\" is needed");
            return;
        }
    }
    text = svc_metrics_text(&r->s->metrics, &r->s->queue, l);
    if (!text) {
        svc_error(r, 500, "internal", "out of memory");
        return;
    }
    free(r->resp);
    r->status = 200;
    r->resp = text;
    r->resp_len = strlen(text);
    r->content_type = "text/plain; version=0.0.4";
}

static void dispatch(svc_req *r, route_id id, const char **w)
{
    svc_pool *pool = &r->s->pool;
    dpa_ledger *l;
    if (id == R_OPENAPI) { /* verbatim: the bytes of docs/openapi.json */
        free(r->resp);
        r->resp = strdup(svc_openapi_json());
        r->resp_len = r->resp ? strlen(r->resp) : 0;
        r->status = r->resp ? 200 : 500;
        r->content_type = "application/json";
        return;
    }
    if (id == R_REQUEST) { /* borrows and returns its handle itself */
        svc_h_request(r, w[0]);
        return;
    }
    l = svc_pool_get(pool);
    switch (id) {
    case R_HEALTHZ: healthz(r, l); break;
    case R_METRICS: metrics(r, l); break;
    case R_WHOAMI: svc_h_whoami(r, l); break;
    case R_UNITS_LIST: svc_h_units_list(r, l); break;
    case R_UNITS_CREATE: svc_h_units_create(r, l); break;
    case R_UNIT_GET: svc_h_unit_get(r, l, w[0]); break;
    case R_COMMIT: svc_h_settle(r, l, w[0], w[1], "commit"); break;
    case R_RELEASE: svc_h_settle(r, l, w[0], w[1], "release"); break;
    case R_FREEZE: svc_h_lifecycle(r, l, w[0], "freeze"); break;
    case R_UNFREEZE: svc_h_lifecycle(r, l, w[0], "unfreeze"); break;
    case R_ARCHIVE: svc_h_lifecycle(r, l, w[0], "archive"); break;
    case R_TOPUP: svc_h_topup(r, l, w[0]); break;
    case R_HISTORY: svc_h_history(r, l, w[0]); break;
    case R_VERIFY: svc_h_verify(r, l); break;
    case R_EXPORT: svc_h_export(r, l); break;
    case R_TENANTS_LIST: svc_h_tenants_list(r, l); break;
    case R_TENANTS_CREATE: svc_h_tenants_create(r, l); break;
    case R_TOKENS_LIST: svc_h_tokens_list(r, l); break;
    case R_TOKENS_CREATE: svc_h_tokens_create(r, l); break;
    case R_TOKEN_REVOKE: svc_h_token_revoke(r, l, w[0]); break;
    default: svc_error(r, 500, "internal", "no handler"); break;
    }
    svc_pool_put(pool, l);
}

/* The methods allowed on the path (comma-separated), "" if none. */
static void allowed_methods(svc_req *r, char *buf, size_t n)
{
    const char *w[4];
    size_t i;
    buf[0] = '\0';
    for (i = 0; i < NROUTES; i++)
        if (match(routes[i].pattern, r, w) && !strstr(buf, routes[i].method)) {
            if (buf[0])
                strncat(buf, ", ", n - strlen(buf) - 1);
            strncat(buf, routes[i].method, n - strlen(buf) - 1);
        }
}

void svc_route(svc_req *r, const char *url)
{
    const char *w[4];
    char allow[64];
    size_t i;
    if (!split(r, url)) {
        svc_error(r, 404, "not_found", "no such path");
        return;
    }
    if (!strcmp(r->method, "OPTIONS")) { /* a CORS preflight (headers: service.c) */
        allowed_methods(r, allow, sizeof allow);
        free(r->resp);
        r->resp = NULL;
        r->resp_len = 0;
        r->status = allow[0] ? 204 : 404;
        r->extra_allow = strdup(allow[0] ? allow : "GET");
        return;
    }
    for (i = 0; i < NROUTES; i++)
        if ((!strcmp(routes[i].method, r->method) ||
             (!strcmp(r->method, "HEAD") && !strcmp(routes[i].method, "GET"))) && /* HEAD: GET's headers */
            match(routes[i].pattern, r, w)) {
            dispatch(r, routes[i].id, w);
            return;
        }
    if ((!strcmp(r->method, "GET") || !strcmp(r->method, "HEAD")) && r->s->o.web_root && !(r->nseg > 0 && !strcmp(r->seg[0], "v1")) &&
        svc_static(r, url))
        return;
    allowed_methods(r, allow, sizeof allow);
    if (allow[0]) {
        svc_error(r, 405, "bad_input", "%s is not allowed here (allowed: %s)", r->method, allow);
        r->extra_allow = strdup(allow);
    } else
        svc_error(r, 404, "not_found", "no such path");
}
