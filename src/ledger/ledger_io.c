/* The ledger's export and import: a whole ledger as one JSON document, to
 * move it between backends (SQLite -> PostgreSQL) or to archive it.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The document keeps everything verbatim (metadata, units with their
 * initial and current states and counts, every request with its id, time,
 * spec text, decision and states), so the imported ledger replays (`verify`)
 * exactly like the original.  Import writes into a new, empty ledger in one
 * transaction: all or nothing. */
#include <jansson.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "dpacct/filter.h"
#include "dpacct/ledger.h"
#include "ledger/ledger_internal.h"

#define EXPORT_FORMAT "dpacct-ledger-export 1"

static const char *const META_KEYS[] = {"default_filter", "auto_units", "created", "dpacct_version"};

static dpa_status oom(dpa_error *err)
{
    return dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
}

typedef struct export_ctx {
    json_t *arr;
    int bad; /* a value JSON cannot hold (text that is not UTF-8): the export fails */
} export_ctx;

static void set_str(json_t *o, const char *key, const char *v, int *bad)
{
    json_t *j = json_string(v);
    if (!j || json_object_set_new(o, key, j) != 0)
        *bad = 1;
}

static int export_unit(void *vctx, const dpa_store_unit *u)
{
    export_ctx *c = vctx;
    json_t *o = json_object();
    set_str(o, "name", u->name, &c->bad);
    set_str(o, "filter", u->filter, &c->bad);
    set_str(o, "initial_state", u->initial_state, &c->bad);
    set_str(o, "state", u->state, &c->bad);
    json_object_set_new(o, "requests", json_integer(u->requests));
    json_object_set_new(o, "accepted", json_integer(u->accepted));
    set_str(o, "created", u->created, &c->bad);
    /* format 3, when not the default (an export of a ledger without them is unchanged) */
    if (u->tenant && strcmp(u->tenant, "default"))
        set_str(o, "tenant", u->tenant, &c->bad);
    if (u->period_seconds)
        json_object_set_new(o, "period_seconds", json_integer(u->period_seconds));
    if (u->lifecycle && strcmp(u->lifecycle, "active"))
        set_str(o, "lifecycle", u->lifecycle, &c->bad);
    if (u->generation)
        json_object_set_new(o, "generation", json_integer(u->generation));
    if (u->period_start && *u->period_start)
        set_str(o, "period_start", u->period_start, &c->bad);
    if (u->filter_now && *u->filter_now)
        set_str(o, "filter_now", u->filter_now, &c->bad);
    if (json_array_append_new(c->arr, o) != 0)
        c->bad = 1;
    return c->bad;
}

/* The tenants' and tokens' metadata rows (tenant.c). */
static int export_record(void *vctx, const char *key, const char *value)
{
    export_ctx *c = vctx;
    json_t *j = json_string(value);
    if (!j || json_object_set_new(c->arr, key, j) != 0)
        c->bad = 1;
    return c->bad;
}

static int export_request(void *vctx, const dpa_store_request *r)
{
    export_ctx *c = vctx;
    json_t *o = json_object();
    json_object_set_new(o, "id", json_integer(r->id));
    set_str(o, "unit", r->unit, &c->bad);
    set_str(o, "time", r->time, &c->bad);
    set_str(o, "spec", r->spec, &c->bad);
    set_str(o, "decision", r->accepted ? "accepted" : "rejected", &c->bad);
    set_str(o, "reason", r->reason, &c->bad);
    set_str(o, "state_before", r->state_before, &c->bad);
    set_str(o, "state_after", r->state_after, &c->bad);
    if (r->kind && strcmp(r->kind, "request"))
        set_str(o, "kind", r->kind, &c->bad);
    if (r->actor && strcmp(r->actor, "local"))
        set_str(o, "actor", r->actor, &c->bad);
    if (r->idem_key)
        set_str(o, "idempotency_key", r->idem_key, &c->bad);
    if (r->generation)
        json_object_set_new(o, "generation", json_integer(r->generation));
    if (r->ref)
        json_object_set_new(o, "reservation", json_integer(r->ref));
    if (json_array_append_new(c->arr, o) != 0)
        c->bad = 1;
    return c->bad;
}

dpa_status dpa_ledger_export_json(dpa_ledger *l, char **json, dpa_error *err)
{
    dpa_store *s;
    json_t *root, *meta, *units, *requests;
    dpa_status rc;
    if (!l || !json)
        return dpa_error_set(err, DPA_EINVAL, "ledger: NULL argument");
    *json = NULL;
    s = l->store;
    root = json_object();
    meta = json_object();
    units = json_array();
    requests = json_array();
    json_object_set_new(root, "format", json_string(EXPORT_FORMAT));
    json_object_set_new(root, "meta", meta);
    json_object_set_new(root, "units", units);
    json_object_set_new(root, "requests", requests);
    rc = s->ops->begin_read(s, err);
    for (size_t k = 0; rc == DPA_OK && k < sizeof META_KEYS / sizeof *META_KEYS; k++) {
        char *v = NULL;
        rc = s->ops->get_meta(s, META_KEYS[k], &v, err);
        if (rc == DPA_OK && v)
            json_object_set_new(meta, META_KEYS[k], json_string(v));
        free(v);
    }
    export_ctx cu = {units, 0}, cr = {requests, 0}, cm = {json_object(), 0};
    if (rc == DPA_OK)
        rc = s->ops->each_unit(s, NULL, export_unit, &cu, err);
    if (rc == DPA_OK)
        rc = s->ops->each_request(s, NULL, export_request, &cr, err);
    for (size_t k = 0; rc == DPA_OK && k < 3; k++)
        rc = s->ops->each_meta(s, (const char *const[]){"tenant:", "token:", "token_id:"}[k], export_record, &cm, err);
    s->ops->rollback(s);
    if (cm.arr && json_object_size(cm.arr))
        json_object_set(root, "records", cm.arr);
    json_decref(cm.arr);
    if (rc == DPA_OK && (cu.bad || cr.bad || cm.bad))
        rc = dpa_error_set(err, DPA_ESTORAGE, "ledger export: a stored text is not valid UTF-8 (or out of "
                           "memory); nothing was exported");
    if (rc == DPA_OK) {
        *json = json_dumps(root, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
        if (!*json)
            rc = oom(err);
    }
    json_decref(root);
    return rc;
}

/* The string member key of o, or NULL with err set. */
static const char *member(json_t *o, const char *what, size_t i, const char *key, dpa_error *err)
{
    const char *v = json_string_value(json_object_get(o, key));
    if (!v)
        dpa_error_set(err, DPA_EINVAL, "ledger import: /%s/%zu/%s: expected a string", what, i, key);
    return v;
}

static int integer_member(json_t *o, const char *what, size_t i, const char *key, long long *out,
                          dpa_error *err)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0) {
        dpa_error_set(err, DPA_EINVAL, "ledger import: /%s/%zu/%s: expected an integer >= 0", what, i, key);
        return -1;
    }
    *out = (long long)json_integer_value(v);
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Largest request id an import accepts: ids stay exact doubles and far from
 * the end of both backends' 64-bit sequences. */
#define IMPORT_MAX_ID 9007199254740992LL /* 2^53 */

/* Checks of the document before anything is written: metadata, unit names
 * (valid, distinct), counts, request ids (increasing), request units.
 * names: the sorted unit names (caller frees the array, not the strings). */
static dpa_status check_document(json_t *meta, json_t *units, json_t *requests, const char ***names,
                                 dpa_error *err)
{
    const char *df = json_string_value(json_object_get(meta, "default_filter"));
    const char *au = json_string_value(json_object_get(meta, "auto_units"));
    size_t nu = json_array_size(units), i;
    json_t *o;
    long long last = 0;
    dpa_filter *f;
    dpa_error e;
    *names = NULL;
    if (!(f = dpa_filter_new_json(df, &e)))
        return dpa_error_set(err, DPA_EINVAL, "ledger import: /meta/default_filter: %s", e.message);
    dpa_filter_free(f);
    if (strcmp(au, "0") && strcmp(au, "1"))
        return dpa_error_set(err, DPA_EINVAL, "ledger import: /meta/auto_units: \"0\" or \"1\"");
    *names = malloc((nu ? nu : 1) * sizeof **names);
    if (!*names)
        return oom(err);
    json_array_foreach(units, i, o) {
        const char *name = json_string_value(json_object_get(o, "name"));
        const char *cfg = json_string_value(json_object_get(o, "filter"));
        json_t *req = json_object_get(o, "requests"), *acc = json_object_get(o, "accepted");
        if (!name || dpa_ledger_check_unit_name(name, &e) != DPA_OK)
            return dpa_error_set(err, DPA_EINVAL, "ledger import: /units/%zu/name: %s", i,
                                 name ? e.message : "expected a string");
        if (!cfg || !(f = dpa_filter_new_json(cfg, &e)))
            return dpa_error_set(err, DPA_EINVAL, "ledger import: /units/%zu/filter: %s", i,
                                 cfg ? e.message : "expected a string");
        dpa_filter_free(f);
        if (json_is_integer(req) && json_is_integer(acc) && json_integer_value(acc) > json_integer_value(req))
            return dpa_error_set(err, DPA_EINVAL, "ledger import: /units/%zu: accepted > requests", i);
        (*names)[i] = name;
    }
    qsort(*names, nu, sizeof **names, cmp_str);
    for (i = 1; i < nu; i++)
        if (!strcmp((*names)[i - 1], (*names)[i]))
            return dpa_error_set(err, DPA_EINVAL, "ledger import: unit \"%s\" appears twice", (*names)[i]);
    json_array_foreach(requests, i, o) {
        json_t *id = json_object_get(o, "id");
        const char *unit = json_string_value(json_object_get(o, "unit"));
        if (!json_is_integer(id) || json_integer_value(id) <= last || json_integer_value(id) > IMPORT_MAX_ID)
            return dpa_error_set(err, DPA_EINVAL, "ledger import: /requests/%zu/id: integers increasing "
                                 "from 1 to 2^53 expected", i);
        last = json_integer_value(id);
        if (!unit || (*unit && !bsearch(&unit, *names, nu, sizeof **names, cmp_str)))
            return dpa_error_set(err, DPA_EINVAL, "ledger import: /requests/%zu/unit: not a unit of the export", i);
    }
    return DPA_OK;
}

dpa_status dpa_ledger_import_json(const char *location, const char *json, dpa_error *err)
{
    return dpa_ledger_import_json_keyed(location, json, NULL, 0, err);
}

dpa_status dpa_ledger_import_json_keyed(const char *location, const char *json, const void *keydata,
                                        size_t key_len, dpa_error *err)
{
    dpa_chain_key key = {keydata, keydata ? key_len : 0};
    json_error_t je;
    json_t *root, *meta, *units, *requests, *o;
    const char **names = NULL;
    dpa_store *s = NULL;
    dpa_status rc = DPA_OK;
    size_t i;

    if (!location || !json)
        return dpa_error_set(err, DPA_EINVAL, "ledger import: NULL argument");
    root = json_loads(json, JSON_REJECT_DUPLICATES, &je);
    if (!root)
        return dpa_error_set(err, DPA_EINVAL, "ledger import: not JSON (line %d: %s)", je.line, je.text);
    meta = json_object_get(root, "meta");
    units = json_object_get(root, "units");
    requests = json_object_get(root, "requests");
    if (!json_is_string(json_object_get(root, "format")) ||
        strcmp(json_string_value(json_object_get(root, "format")), EXPORT_FORMAT) ||
        !json_is_object(meta) || !json_is_array(units) || !json_is_array(requests) ||
        !json_is_string(json_object_get(meta, "default_filter")) ||
        !json_is_string(json_object_get(meta, "auto_units"))) {
        json_decref(root);
        return dpa_error_set(err, DPA_EINVAL, "ledger import: not a dpacct ledger export (\"format\": \"%s\" "
                             "with meta, units and requests)", EXPORT_FORMAT);
    }
    rc = check_document(meta, units, requests, &names, err);
    free(names);
    if (rc != DPA_OK) {
        json_decref(root);
        return rc;
    }
    /* the store's create leaves its write transaction open: everything
     * below, the replay included, commits together or not at all */
    rc = dpa_ledger_store_open(location, DPA_STORE_CREATE, &s, err);
    if (rc != DPA_OK) {
        json_decref(root);
        return rc;
    }
    /* the chain is built anew, in the export's order (units, then requests
     * by id), after the export's own checks and with the replay below */
    {
        const char *mv[DPA_CHAIN_NMETA] = {DPA_LEDGER_FORMAT, NULL, NULL, NULL, NULL, NULL, NULL};
        for (size_t k = 0; k < sizeof META_KEYS / sizeof *META_KEYS; k++)
            mv[k + 1] = json_string_value(json_object_get(meta, META_KEYS[k]));
        rc = dpa_ledger_chain_start(s, &key, mv, err);
    }
    json_array_foreach(units, i, o) {
        dpa_store_unit u;
        if (rc != DPA_OK)
            break;
        memset(&u, 0, sizeof u);
        if (!(u.name = (char *)member(o, "units", i, "name", err)) ||
            !(u.filter = (char *)member(o, "units", i, "filter", err)) ||
            !(u.initial_state = (char *)member(o, "units", i, "initial_state", err)) ||
            !(u.state = (char *)member(o, "units", i, "state", err)) ||
            !(u.created = (char *)member(o, "units", i, "created", err)) ||
            integer_member(o, "units", i, "requests", &u.requests, err) ||
            integer_member(o, "units", i, "accepted", &u.accepted, err)) {
            rc = DPA_EINVAL;
            break;
        }
        u.chain = NULL;
        {
            json_t *ps = json_object_get(o, "period_seconds"), *g = json_object_get(o, "generation");
            u.tenant = (char *)json_string_value(json_object_get(o, "tenant"));
            u.lifecycle = (char *)json_string_value(json_object_get(o, "lifecycle"));
            u.period_start = (char *)json_string_value(json_object_get(o, "period_start"));
            u.filter_now = (char *)json_string_value(json_object_get(o, "filter_now"));
            u.period_seconds = json_is_integer(ps) ? (long long)json_integer_value(ps) : 0;
            u.generation = json_is_integer(g) ? (long long)json_integer_value(g) : 0;
            if (u.tenant && dpa_ledger_check_unit_name(u.tenant, err) != DPA_OK) {
                rc = DPA_EINVAL;
                break;
            }
        }
        rc = dpa_ledger_chain_unit(s, &key, &u, err);
        free(u.chain);
    }
    json_array_foreach(requests, i, o) {
        dpa_store_request r;
        const char *decision;
        if (rc != DPA_OK)
            break;
        memset(&r, 0, sizeof r);
        if (integer_member(o, "requests", i, "id", &r.id, err) ||
            !(r.unit = (char *)member(o, "requests", i, "unit", err)) ||
            !(r.time = (char *)member(o, "requests", i, "time", err)) ||
            !(r.spec = (char *)member(o, "requests", i, "spec", err)) ||
            !(decision = member(o, "requests", i, "decision", err)) ||
            !(r.reason = (char *)member(o, "requests", i, "reason", err)) ||
            !(r.state_before = (char *)member(o, "requests", i, "state_before", err)) ||
            !(r.state_after = (char *)member(o, "requests", i, "state_after", err))) {
            rc = DPA_EINVAL;
            break;
        }
        if (strcmp(decision, "accepted") && strcmp(decision, "rejected")) {
            rc = dpa_error_set(err, DPA_EINVAL, "ledger import: /requests/%zu/decision: \"accepted\" or "
                               "\"rejected\"", i);
            break;
        }
        r.accepted = !strcmp(decision, "accepted");
        {
            json_t *g = json_object_get(o, "generation"), *ref = json_object_get(o, "reservation");
            r.kind = (char *)json_string_value(json_object_get(o, "kind"));
            r.actor = (char *)json_string_value(json_object_get(o, "actor"));
            r.idem_key = (char *)json_string_value(json_object_get(o, "idempotency_key"));
            r.generation = json_is_integer(g) ? (long long)json_integer_value(g) : 0;
            r.ref = json_is_integer(ref) ? (long long)json_integer_value(ref) : 0;
        }
        rc = dpa_ledger_chain_request(s, &key, &r, err);
    }
    {
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(root, "records"), k, v) {
            if (rc != DPA_OK)
                break;
            if (!json_is_string(v) || (strncmp(k, "tenant:", 7) && strncmp(k, "token:", 6) &&
                                       strncmp(k, "token_id:", 9)))
                rc = dpa_error_set(err, DPA_EINVAL, "ledger import: /records/%s: a tenant or token record "
                                   "(a string) expected", k);
            else
                rc = s->ops->set_meta(s, k, json_string_value(v), err);
        }
    }
    if (rc == DPA_OK) {
        /* an import is only as good as its replay: a ledger whose history
         * does not yield its states (an edited export could hand back spent
         * budget) is never committed */
        int ok = 0;
        char *report = NULL;
        rc = dpa_ledger_verify_store(s, &key, NULL, &ok, &report, err);
        if (rc == DPA_OK && !ok) {
            json_t *rep = json_loads(report, 0, NULL);
            json_t *p0 = json_array_get(json_object_get(rep, "problems"), 0);
            rc = dpa_error_set(err, DPA_EINVAL, "ledger import: the export does not replay (unit \"%s\"%s: %s); "
                               "nothing was imported",
                               p0 ? json_string_value(json_object_get(p0, "unit")) : "?",
                               json_object_get(p0, "request") ? ", a request" : "",
                               p0 ? json_string_value(json_object_get(p0, "problem")) : "?");
            json_decref(rep);
        }
        free(report);
    }
    if (rc == DPA_OK)
        rc = s->ops->commit(s, err);
    else
        s->ops->rollback(s);
    s->ops->close(s); /* after a failure: nothing is left at location */
    json_decref(root);
    return rc;
}
