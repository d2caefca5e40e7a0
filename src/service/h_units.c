/* The budget service's unit handlers: who am I, the tenant's units (paged),
 * a unit's status, and creating a unit.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "service_internal.h"

void svc_h_whoami(svc_req *r, dpa_ledger *l)
{
    if (!svc_auth(r, l, DPA_LEDGER_ROLE_READ))
        return;
    svc_json(r, 200, json_pack("{s:s,s:s,s:s}", "token_id", r->who.token_id, "tenant", r->who.tenant, "role",
                               svc_role_name(r->who.role)));
}

/* A paging limit: the "limit" query parameter in 1..1000 (default 100);
 * -1 with the 400 answer made. */
int svc_limit(svc_req *r)
{
    char *v = svc_query(r, "limit"), *end;
    long n = 100;
    if (v) {
        errno = 0;
        n = strtol(v, &end, 10);
        if (end == v || *end || errno || n < 1 || n > 1000) {
            svc_error(r, 400, "bad_input", "limit: an integer in 1..1000, got \"%s\"", v);
            free(v);
            return -1;
        }
        free(v);
    }
    return (int)n;
}

void svc_h_units_list(svc_req *r, dpa_ledger *l)
{
    char *after, *json = NULL;
    dpa_error err = {0};
    int limit;
    if (!svc_auth(r, l, DPA_LEDGER_ROLE_READ) || (limit = svc_limit(r)) < 0)
        return;
    after = svc_query(r, "after");
    if (dpa_ledger_units_page_json(l, r->who.tenant, after, limit, &json, &err) != DPA_OK)
        svc_ledger_error(r, &err);
    else
        svc_json_text(r, 200, json);
    free(after);
    free(json);
}

/* The unit's object in its tenant's units pages (which carry the lifecycle,
 * generation, period and reservations), or NULL. */
static json_t *unit_in_pages(dpa_ledger *l, const char *tenant, const char *unit, dpa_error *e)
{
    char *after = NULL;
    for (;;) {
        char *json = NULL;
        json_t *page, *u, *next, *found = NULL;
        size_t i;
        if (dpa_ledger_units_page_json(l, tenant, after, 1000, &json, e) != DPA_OK) {
            free(after);
            return NULL;
        }
        page = json_loads(json, 0, NULL);
        free(json);
        json_array_foreach(json_object_get(page, "units"), i, u) {
            const char *name = json_string_value(json_object_get(u, "unit"));
            if (name && !strcmp(name, unit)) {
                found = json_incref(u);
                break;
            }
        }
        next = json_object_get(page, "next");
        free(after);
        after = !found && json_is_string(next) ? strdup(json_string_value(next)) : NULL;
        json_decref(page);
        if (found || !after)
            return found;
    }
}

json_t *svc_unit_status(dpa_ledger *l, const char *unit, dpa_error *e)
{
    char *json = NULL, *tenant = NULL;
    json_t *all, *u;
    if (dpa_ledger_status_json(l, unit, &json, e) != DPA_OK)
        return NULL;
    all = json_loads(json, 0, NULL);
    free(json);
    u = json_incref(json_array_get(json_object_get(all, "units"), 0));
    json_decref(all);
    if (u && !json_object_get(u, "lifecycle")) {
        /* the status lacks the fields of part A's pages: take the page's object */
        json_t *p = dpa_ledger_unit_tenant(l, unit, &tenant, e) == DPA_OK ? unit_in_pages(l, tenant, unit, e) : NULL;
        free(tenant);
        if (p) {
            json_decref(u);
            u = p;
        }
    }
    if (!u) {
        dpa_error_set(e, DPA_ESTORAGE, "the status of unit \"%s\" could not be read", unit);
        return NULL;
    }
    return u;
}

void svc_h_unit_get(svc_req *r, dpa_ledger *l, const char *unit)
{
    dpa_error err = {0};
    json_t *u;
    if (!svc_auth(r, l, DPA_LEDGER_ROLE_READ) || !svc_unit_visible(r, l, unit))
        return;
    u = svc_unit_status(l, unit, &err);
    if (u)
        svc_json(r, 200, u);
    else
        svc_ledger_error(r, &err);
}

/* Members of body other than the allowed ones: 400 naming the first; 0. */
int svc_known_keys(svc_req *r, json_t *body, const char *const *keys)
{
    const char *k;
    json_t *v;
    json_object_foreach(body, k, v) {
        size_t i;
        for (i = 0; keys[i] && strcmp(keys[i], k); i++)
            ;
        if (!keys[i]) {
            svc_error(r, 400, "bad_input", "/%s: unknown member of the body", k);
            return 0;
        }
    }
    return 1;
}

/* The optional "filter" member as JSON text (malloc'ed), *ok 0 (400 made) if
 * it is not an object. */
char *svc_filter_member(svc_req *r, json_t *body, int required, int *ok)
{
    json_t *f = json_object_get(body, "filter");
    *ok = 1;
    if (!f && !required)
        return NULL;
    if (!json_is_object(f)) {
        svc_error(r, 400, "bad_input", "/filter: %s", f ? "must be an object (a filter configuration, docs/filters.md)"
                                                        : "required (a filter configuration, docs/filters.md)");
        *ok = 0;
        return NULL;
    }
    return json_dumps(f, JSON_COMPACT);
}

void svc_h_units_create(svc_req *r, dpa_ledger *l)
{
    static const char *const keys[] = {"unit", "filter", "period_seconds", NULL};
    dpa_ledger_unit_opts o = {0};
    dpa_error err = {0};
    json_t *body, *name, *period, *u;
    char *filter = NULL;
    int ok;
    if (!svc_auth(r, l, DPA_LEDGER_ROLE_ADMIN) || !(body = svc_body_object(r)))
        return;
    if (!svc_known_keys(r, body, keys))
        goto done;
    name = json_object_get(body, "unit");
    if (!json_is_string(name)) {
        svc_error(r, 400, "bad_input", "/unit: %s", name ? "must be a string" : "required");
        goto done;
    }
    period = json_object_get(body, "period_seconds");
    if (period && (!json_is_integer(period) || json_integer_value(period) < 0)) {
        svc_error(r, 400, "bad_input", "/period_seconds: must be an integer >= 0");
        goto done;
    }
    filter = svc_filter_member(r, body, 0, &ok);
    if (!ok)
        goto done;
    o.tenant = r->who.tenant;
    o.filter_config = filter;
    o.period_seconds = period ? (long long)json_integer_value(period) : 0;
    o.actor = r->who.token_id;
    if (dpa_ledger_add_unit_ex(l, json_string_value(name), &o, &err) != DPA_OK) {
        svc_ledger_error(r, &err);
        goto done;
    }
    u = svc_unit_status(l, json_string_value(name), &err);
    if (u)
        svc_json(r, 201, u);
    else
        svc_ledger_error(r, &err);
done:
    free(filter);
    json_decref(body);
}
