/* The budget service's reading handlers over the whole history: a unit's
 * history (paged), verify (the whole ledger; another tenant's units' problems
 * only counted for a tenant other than "default") and export (the whole ledger,
 * for an admin of the tenant "default" only).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "dpacct/filter.h"
#include "service_internal.h"

/* Each entry of a history page gains "remaining": the remaining budget of
 * its state_after (dpa_filter_remaining_json, as in decisions and status)
 * under the unit's current filter configuration (so after a top-up the
 * earlier entries show the new budget), null for an entry without a filter
 * state.  The page is answered as it is if the configuration cannot be read. */
static void add_remaining(dpa_ledger *l, const char *unit, json_t *page)
{
    dpa_error err = {0};
    json_t *u = svc_unit_status(l, unit, &err), *e;
    char *config = u ? json_dumps(json_object_get(u, "filter"), JSON_COMPACT) : NULL;
    dpa_filter *f = config ? dpa_filter_new_json(config, &err) : NULL;
    size_t i;
    json_decref(u);
    free(config);
    if (!f)
        return;
    json_array_foreach(json_object_get(page, "entries"), i, e) {
        json_t *after = json_object_get(e, "state_after"), *rem = NULL;
        char *state = json_is_object(after) ? json_dumps(after, JSON_COMPACT) : NULL;
        if (state && dpa_filter_set_state_json(f, state, &err) == DPA_OK) {
            char *text = dpa_filter_remaining_json(f);
            rem = text ? json_loads(text, 0, NULL) : NULL;
            free(text);
        }
        free(state);
        json_object_set_new(e, "remaining", rem ? rem : json_null());
    }
    dpa_filter_free(f);
}

void svc_h_history(svc_req *r, dpa_ledger *l, const char *unit)
{
    char *after = NULL, *since = NULL, *until = NULL, *json = NULL, *end;
    long long after_id = 0;
    dpa_error err = {0};
    int limit;
    if (!svc_auth(r, l, DPA_LEDGER_ROLE_READ) || !svc_unit_visible(r, l, unit) || (limit = svc_limit(r)) < 0)
        return;
    after = svc_query(r, "after");
    if (after) {
        errno = 0;
        after_id = strtoll(after, &end, 10);
        if (end == after || *end || errno || after_id < 0) {
            svc_error(r, 400, "bad_input", "after: a request id (an integer >= 0), got \"%s\"", after);
            goto done;
        }
    }
    since = svc_query(r, "since");
    until = svc_query(r, "until");
    if (dpa_ledger_history_page_json(l, unit, after_id, since, until, limit, &json, &err) != DPA_OK)
        svc_ledger_error(r, &err);
    else {
        json_t *page = json_loads(json, 0, NULL);
        if (page) {
            add_remaining(l, unit, page);
            svc_json(r, 200, page);
        } else
            svc_json_text(r, 200, json);
    }
done:
    free(after);
    free(since);
    free(until);
    free(json);
}

/* verify for a tenant other than "default": the problems naming another
 * tenant's unit (or a unit whose tenant cannot be read) are removed and
 * counted in "problems_elsewhere", so no other tenant's unit name is shown;
 * "ok" and "problems_found" stay those of the whole ledger. */
static void scope_problems(svc_req *r, dpa_ledger *l, const char *report)
{
    json_t *rep = json_loads(report, JSON_DECODE_ANY, NULL), *probs, *kept, *p;
    long long elsewhere = 0;
    size_t i;
    if (!rep) {
        svc_error(r, 500, "internal", "verify report unreadable");
        return;
    }
    probs = json_object_get(rep, "problems");
    kept = json_array();
    json_array_foreach(probs, i, p) {
        const char *unit = json_string_value(json_object_get(p, "unit"));
        char *tenant = NULL, cached[DPA_LEDGER_MAX_UNIT + 1];
        dpa_error err = {0};
        int mine = 0;
        if (!unit)
            mine = 1; /* names no unit */
        else if (svc_tcache_get(&r->s->tenants, unit, cached, sizeof cached))
            mine = !strcmp(cached, r->who.tenant);
        else if (dpa_ledger_unit_tenant(l, unit, &tenant, &err) == DPA_OK)
            mine = !strcmp(tenant, r->who.tenant);
        free(tenant);
        if (mine)
            json_array_append(kept, p);
        else
            elsewhere++;
    }
    json_object_set_new(rep, "problems", kept);
    json_object_set_new(rep, "problems_elsewhere", json_integer(elsewhere));
    svc_json(r, 200, rep);
}

void svc_h_verify(svc_req *r, dpa_ledger *l)
{
    char *report = NULL;
    dpa_error err = {0};
    int ok = 0;
    if (!svc_auth(r, l, DPA_LEDGER_ROLE_READ))
        return;
    if (dpa_ledger_verify(l, &ok, &report, &err) != DPA_OK)
        svc_ledger_error(r, &err);
    else if (strcmp(r->who.tenant, "default") != 0)
        scope_problems(r, l, report);
    else
        svc_json_text(r, 200, report);
    free(report);
}

void svc_h_export(svc_req *r, dpa_ledger *l)
{
    char *json = NULL;
    dpa_error err = {0};
    if (!svc_auth(r, l, DPA_LEDGER_ROLE_ADMIN))
        return;
    if (strcmp(r->who.tenant, "default") != 0) {
        svc_error(r, 403, "forbidden", "export holds the whole ledger: only an admin of the tenant \"default\" may read it");
        return;
    }
    if (dpa_ledger_export_json(l, &json, &err) != DPA_OK)
        svc_ledger_error(r, &err);
    else
        svc_json_text(r, 200, json);
    free(json);
}
