/* The service's unit options and paged reads: units with tenants and
 * periods, pages of units and of history entries.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A page is read in one consistent snapshot and holds at most `limit`
 * records after a cursor (a unit name, an entry id), with "next" the cursor
 * of the following page (null at the end): consecutive pages list every
 * record exactly once, also while requests are added (ids only grow). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dpacct/filter.h"
#include "ledger/ledger_internal.h"

static dpa_status oom(dpa_error *err)
{
    return dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
}

dpa_status dpa_ledger_add_unit_ex(dpa_ledger *l, const char *unit, const dpa_ledger_unit_opts *o, dpa_error *err)
{
    dpa_store_unit u;
    dpa_status rc;
    const char *tenant = o && o->tenant ? o->tenant : "default";
    const char *actor = o && o->actor ? o->actor : "local";
    char key[DPA_LEDGER_MAX_UNIT + 16], *t = NULL;
    if (!l)
        return dpa_error_set(err, DPA_EINVAL, "ledger: NULL ledger");
    if (l->readonly)
        return dpa_ledger_read_only(err);
    if (o && o->period_seconds < 0)
        return dpa_error_set(err, DPA_EINVAL, "ledger: period_seconds is >= 0 (0: no period)");
    if (!*actor || strlen(actor) > DPA_LEDGER_MAX_UNIT)
        return dpa_error_set(err, DPA_EINVAL, "ledger: an actor is 1..%d bytes", DPA_LEDGER_MAX_UNIT);
    rc = dpa_ledger_check_unit_name(unit, err);
    if (rc == DPA_OK)
        rc = dpa_ledger_check_unit_name(tenant, err);
    if (rc != DPA_OK)
        return rc;
    rc = dpa_ledger_new_unit_row(unit, o && o->filter_config ? o->filter_config : l->default_filter, &u, err);
    if (rc != DPA_OK)
        return rc;
    u.tenant = strdup(tenant);
    u.period_seconds = o ? o->period_seconds : 0;
    if (!u.tenant) {
        dpa_store_unit_clear(&u);
        return oom(err);
    }
    rc = l->store->ops->begin_write(l->store, err);
    if (rc == DPA_OK && strcmp(tenant, "default")) {
        snprintf(key, sizeof key, "tenant:%s", tenant);
        rc = l->store->ops->get_meta(l->store, key, &t, err);
        if (rc == DPA_OK && !t)
            rc = dpa_error_set(err, DPA_EINVAL, "ledger: unknown tenant \"%s\"", tenant);
        free(t);
        if (rc != DPA_OK)
            l->store->ops->rollback(l->store);
    }
    if (rc == DPA_OK)
        rc = dpa_ledger_chain_unit_commit(l, &u, err);
    dpa_store_unit_clear(&u);
    return rc;
}

dpa_status dpa_ledger_unit_tenant(dpa_ledger *l, const char *unit, char **tenant, dpa_error *err)
{
    dpa_store_unit u;
    int found = 0;
    dpa_status rc;
    if (tenant)
        *tenant = NULL;
    if (!l || !unit || !tenant)
        return dpa_error_set(err, DPA_EINVAL, "ledger: NULL argument");
    rc = l->store->ops->get_unit(l->store, unit, 0, &u, &found, err);
    if (rc == DPA_OK && !found)
        return dpa_error_set(err, DPA_EINVAL, "ledger: unknown unit \"%s\"", unit);
    if (rc == DPA_OK && !(*tenant = strdup(u.tenant ? u.tenant : "default")))
        rc = oom(err);
    dpa_store_unit_clear(&u);
    return rc;
}

static json_t *stored_json(const char *text)
{
    json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
    return v ? v : json_string(text);
}

typedef struct pending_ctx {
    dpa_ledger_charges L;
    int oom;
} pending_ctx;

static int pending_row(void *vctx, const dpa_store_request *r)
{
    pending_ctx *c = vctx;
    if (dpa_ledger_charges_note(&c->L, r) != 0) {
        c->oom = 1;
        return 1;
    }
    return 0;
}

/* The status object of a page (dpa_ledger_status_json's, and the
 * service's fields). */
static dpa_status unit_object(dpa_store *s, const dpa_store_unit *u, json_t **out, dpa_error *err)
{
    dpa_filter *f = dpa_ledger_load_filter(dpa_store_unit_config(u), u->state, u->name, err);
    pending_ctx pc;
    char *rem;
    json_t *o;
    dpa_status rc;
    *out = NULL;
    if (!f)
        return err ? err->status : DPA_ESTORAGE;
    memset(&pc, 0, sizeof pc);
    rc = s->ops->each_request(s, u->name, pending_row, &pc, err);
    if (rc == DPA_OK && pc.oom)
        rc = oom(err);
    rem = dpa_filter_remaining_json(f);
    o = json_object();
    if (rc == DPA_OK && (!rem || !o))
        rc = oom(err);
    if (rc == DPA_OK) {
        json_object_set_new(o, "unit", json_string(u->name));
        json_object_set_new(o, "filter", stored_json(dpa_store_unit_config(u)));
        json_object_set_new(o, "requests", json_integer(u->requests));
        json_object_set_new(o, "accepted", json_integer(u->accepted));
        json_object_set_new(o, "rejected", json_integer(u->requests - u->accepted));
        json_object_set_new(o, "remaining", stored_json(rem));
        json_object_set_new(o, "exhausted", json_boolean(dpa_filter_exhausted(f)));
        json_object_set_new(o, "created", json_string(u->created));
        json_object_set_new(o, "tenant", json_string(u->tenant ? u->tenant : "default"));
        json_object_set_new(o, "lifecycle", json_string(u->lifecycle ? u->lifecycle : "active"));
        json_object_set_new(o, "generation", json_integer(u->generation));
        json_object_set_new(o, "period_seconds", json_integer(u->period_seconds));
        json_object_set_new(o, "reserved", json_integer(dpa_ledger_charges_pending(&pc.L)));
        *out = o;
        o = NULL;
    }
    json_decref(o);
    free(rem);
    dpa_filter_free(f);
    dpa_ledger_charges_clear(&pc.L);
    return rc;
}

static dpa_status check_limit(int limit, dpa_error *err)
{
    if (limit < 1 || limit > 1000)
        return dpa_error_set(err, DPA_EINVAL, "ledger: a page's limit is 1..1000, got %d", limit);
    return DPA_OK;
}

static dpa_status dump(json_t *root, char **json, dpa_error *err)
{
    *json = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    return *json ? DPA_OK : oom(err);
}

dpa_status dpa_ledger_units_page_json(dpa_ledger *l, const char *tenant, const char *after, int limit, char **json,
                                      dpa_error *err)
{
    dpa_ledger_unit_list units = {0};
    json_t *arr = json_array(), *root = json_object();
    dpa_status rc;
    size_t taken = 0;
    int more = 0;
    if (json)
        *json = NULL;
    if (!l || !json || !arr || !root) {
        json_decref(arr);
        json_decref(root);
        return dpa_error_set(err, DPA_EINVAL, "ledger: NULL argument");
    }
    rc = check_limit(limit, err);
    if (rc == DPA_OK)
        rc = l->store->ops->begin_read(l->store, err);
    if (rc != DPA_OK) {
        json_decref(arr);
        json_decref(root);
        return rc;
    }
    rc = l->store->ops->each_unit(l->store, NULL, dpa_ledger_collect_unit, &units, err);
    if (rc == DPA_OK && units.oom)
        rc = oom(err);
    for (size_t i = 0; rc == DPA_OK && i < units.n; i++) {
        dpa_store_unit *u = &units.u[i];
        json_t *o;
        if ((tenant && strcmp(u->tenant, tenant)) || (after && strcmp(u->name, after) <= 0))
            continue;
        if (taken == (size_t)limit) {
            more = 1;
            break;
        }
        rc = unit_object(l->store, u, &o, err);
        if (rc == DPA_OK) {
            json_array_append_new(arr, o);
            taken++;
        }
    }
    l->store->ops->rollback(l->store);
    if (rc == DPA_OK) {
        /* next: the last listed unit when more follow (units are in name order) */
        json_t *last = more ? json_object_get(json_array_get(arr, taken - 1), "unit") : NULL;
        json_object_set_new(root, "next", last ? json_copy(last) : json_null());
        json_object_set_new(root, "units", arr);
        arr = NULL;
        rc = dump(root, json, err);
        root = NULL;
    }
    json_decref(arr);
    json_decref(root);
    for (size_t k = 0; k < units.n; k++)
        dpa_store_unit_clear(&units.u[k]);
    free(units.u);
    return rc;
}

/* Seconds of an ISO 8601 UTC bound ("YYYY-MM-DDTHH:MM:SS[.frac]Z"); -1 if malformed. */
static double bound_seconds(const char *iso)
{
    char buf[40];
    int y, mo, d, h, mi, used = 0;
    double sec;
    if (strlen(iso) >= 34 || sscanf(iso, "%4d-%2d-%2dT%2d:%2d:%lf%n", &y, &mo, &d, &h, &mi, &sec, &used) != 6 ||
        strcmp(iso + used, "Z") || sec < 0 || sec >= 61)
        return -1;
    snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ", y, mo, d, h, mi, (int)sec,
             (int)((sec - (int)sec) * 1e6));
    return dpa_ledger_time_seconds(buf);
}

typedef struct hist_ctx {
    long long after;
    double since, until; /* < 0: unbounded */
    int limit, more;
    json_t *arr;
} hist_ctx;

static int hist_row(void *vctx, const dpa_store_request *r)
{
    hist_ctx *c = vctx;
    double t;
    json_t *o;
    if (r->id <= c->after || !r->unit[0]) /* tenant and token entries are not a unit's history */
        return 0;
    t = dpa_ledger_time_seconds(r->time);
    if ((c->since >= 0 && t < c->since) || (c->until >= 0 && t >= c->until))
        return 0;
    if (json_array_size(c->arr) == (size_t)c->limit) {
        c->more = 1;
        return 1;
    }
    o = json_object();
    json_object_set_new(o, "id", json_integer(r->id));
    json_object_set_new(o, "unit", json_string(r->unit));
    json_object_set_new(o, "time", json_string(r->time));
    json_object_set_new(o, "kind", json_string(r->kind));
    json_object_set_new(o, "actor", json_string(r->actor));
    json_object_set_new(o, "idempotency_key", r->idem_key ? json_string(r->idem_key) : json_null());
    json_object_set_new(o, "generation", json_integer(r->generation));
    json_object_set_new(o, "spec", stored_json(r->spec));
    json_object_set_new(o, "decision", json_string(r->accepted ? "accepted" : "rejected"));
    json_object_set_new(o, "reason", json_string(r->reason));
    if (r->ref)
        json_object_set_new(o, "reservation", json_integer(r->ref));
    json_object_set_new(o, "state_before", stored_json(r->state_before));
    json_object_set_new(o, "state_after", stored_json(r->state_after));
    json_array_append_new(c->arr, o);
    return 0;
}

dpa_status dpa_ledger_history_page_json(dpa_ledger *l, const char *unit, long long after_id, const char *since,
                                        const char *until, int limit, char **json, dpa_error *err)
{
    hist_ctx c;
    json_t *root;
    dpa_status rc;
    size_t n;
    if (json)
        *json = NULL;
    if (!l || !json)
        return dpa_error_set(err, DPA_EINVAL, "ledger: NULL argument");
    rc = check_limit(limit, err);
    if (rc != DPA_OK)
        return rc;
    memset(&c, 0, sizeof c);
    c.after = after_id;
    c.limit = limit;
    c.since = since ? bound_seconds(since) : -1;
    c.until = until ? bound_seconds(until) : -1;
    if ((since && c.since < 0) || (until && c.until < 0))
        return dpa_error_set(err, DPA_EINVAL, "ledger: \"%s\" is not an ISO 8601 UTC time "
                             "(YYYY-MM-DDTHH:MM:SS[.fraction]Z)", since && c.since < 0 ? since : until);
    if (unit) {
        char *t = NULL;
        rc = dpa_ledger_unit_tenant(l, unit, &t, err);
        free(t);
        if (rc != DPA_OK)
            return rc;
    }
    c.arr = json_array();
    root = json_object();
    if (!c.arr || !root) {
        json_decref(c.arr);
        json_decref(root);
        return oom(err);
    }
    rc = l->store->ops->begin_read(l->store, err);
    if (rc == DPA_OK)
        rc = l->store->ops->each_request(l->store, unit, hist_row, &c, err);
    l->store->ops->rollback(l->store);
    if (rc != DPA_OK) {
        json_decref(c.arr);
        json_decref(root);
        return rc;
    }
    n = json_array_size(c.arr);
    json_object_set_new(root, "entries", c.arr);
    json_object_set_new(root, "next", c.more && n ? json_integer(json_integer_value(json_object_get(
                                                        json_array_get(c.arr, n - 1), "id")))
                                                  : json_null());
    return dump(root, json, err);
}
