/* The privacy-budget ledger: units, requests, status, history, verify.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Every request is decided on a snapshot of its unit, outside any lock
 * (decide.c), and recorded by one atomic write of the store (store.h:
 * commit_request) that checks the unit is unchanged, appends the request
 * with the states before and after and its link of the hash chain, and
 * stores the new state; a unit changed meanwhile sends the request round
 * again.  Nothing is charged without its recorded decision, so concurrent
 * processes and crashes cannot make the stored spend disagree with the
 * history (docs/ledger.md). */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include "dpacct/dpacct.h"
#include "dpacct/event.h"
#include "dpacct/filter.h"
#include "dpacct/ledger.h"
#include "ledger/chain.h"
#include "ledger/ledger_internal.h"
#include "ledger/store.h"

static int is_server_uri(const char *loc)
{
    return !strncmp(loc, "postgresql://", 13) || !strncmp(loc, "postgres://", 11);
}

dpa_status dpa_ledger_store_open(const char *loc, int mode, dpa_store **out, dpa_error *err)
{
    *out = NULL;
    if (!loc || !*loc)
        return dpa_error_set(err, DPA_EINVAL, "ledger: empty location");
    if (is_server_uri(loc))
        return mode == DPA_STORE_CREATE ? dpa_store_pg_create(loc, out, err) : dpa_store_pg_open(loc, mode, out, err);
    if (!strcmp(loc, ":memory:") || !strncmp(loc, "file::memory:", 13))
        return dpa_error_set(err, DPA_EINVAL, "ledger: \"%s\" is an in-memory SQLite database, which "
                             "vanishes when the process ends: a ledger needs a file path (or a "
                             "postgresql:// URI)", loc);
    return mode == DPA_STORE_CREATE ? dpa_store_sqlite_create(loc, out, err)
                                    : dpa_store_sqlite_open(loc, mode, out, err);
}





static dpa_status oom(dpa_error *err)
{
    return dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
}



dpa_status dpa_ledger_create(const char *location, const dpa_ledger_init_opts *opts, dpa_error *err)
{
    return dpa_ledger_create_keyed(location, opts, NULL, 0, err);
}

dpa_status dpa_ledger_create_keyed(const char *location, const dpa_ledger_init_opts *opts, const void *keydata,
                                   size_t key_len, dpa_error *err)
{
    dpa_filter *f;
    dpa_store *s;
    char *config;
    char now[40];
    dpa_status rc;

    if (!opts || !opts->filter_config)
        return dpa_error_set(err, DPA_EINVAL, "ledger: a default filter configuration is required");
    f = dpa_filter_new_json(opts->filter_config, err);
    if (!f)
        return err ? err->status : DPA_EINVAL;
    config = dpa_filter_config_json(f);
    dpa_filter_free(f);
    if (!config)
        return oom(err);
    rc = dpa_ledger_store_open(location, DPA_STORE_CREATE, &s, err);
    if (rc != DPA_OK) {
        free(config);
        return rc;
    }
    /* one transaction (opened by the store's create): metadata, the
     * chain's genesis and the initial units, so a ledger exists whole or not
     * at all */
    dpa_store_now(now);
    {
        const char *meta[DPA_CHAIN_NMETA] = {DPA_LEDGER_FORMAT, config, opts->auto_units ? "1" : "0", now,
                                             DPACCT_VERSION, NULL, NULL};
        dpa_chain_key key = {keydata, keydata ? key_len : 0, 0};
        rc = dpa_ledger_chain_start(s, &key, meta, err);
        for (size_t i = 0; rc == DPA_OK && i < opts->nunits; i++) {
            dpa_store_unit u;
            rc = dpa_ledger_check_unit_name(opts->units ? opts->units[i] : NULL, err);
            if (rc == DPA_OK)
                rc = dpa_ledger_new_unit_row(opts->units[i], config, &u, err);
            if (rc == DPA_OK) {
                rc = dpa_ledger_chain_unit(s, &key, &u, err);
                dpa_store_unit_clear(&u);
            }
        }
    }
    if (rc == DPA_OK)
        rc = s->ops->commit(s, err);
    else
        s->ops->rollback(s);
    s->ops->close(s); /* after a failure: nothing is left at location */
    free(config);
    return rc;
}

dpa_ledger *dpa_ledger_open(const char *location, dpa_error *err)
{
    return dpa_ledger_open_keyed(location, 0, NULL, 0, err);
}

dpa_ledger *dpa_ledger_open_readonly(const char *location, dpa_error *err)
{
    return dpa_ledger_open_keyed(location, 1, NULL, 0, err);
}

/* The key against the ledger's chain kind and key check: a writer needs the
 * key of a keyed ledger and no key for a plain one; a wrong key is refused. */
static dpa_status check_key(dpa_ledger *l, dpa_error *err)
{
    char *kind = NULL, *check = NULL;
    char mine[DPA_CHAIN_HEX];
    dpa_chain_key key = {l->key, l->key_len, 0};
    dpa_status rc = l->store->ops->get_meta(l->store, "chain", &kind, err);
    int keyed;
    if (rc == DPA_OK)
        rc = l->store->ops->get_meta(l->store, "key_check", &check, err);
    keyed = kind && !strcmp(kind, "hmac-sha256");
    if (rc == DPA_OK && keyed && l->key_len) {
        rc = dpa_chain_key_check(&key, mine, err);
        if (rc == DPA_OK && (!check || strcmp(check, mine)))
            rc = dpa_error_set(err, DPA_EINVAL, "ledger: wrong key (it is not the key of this ledger)");
    } else if (rc == DPA_OK && keyed && !l->readonly) {
        rc = dpa_error_set(err, DPA_EINVAL, "ledger: this ledger's chain is keyed (HMAC-SHA-256): requests "
                           "need its key (--key-file FILE or DPACCT_LEDGER_KEY)");
    } else if (rc == DPA_OK && !keyed && l->key_len) {
        rc = dpa_error_set(err, DPA_EINVAL, "ledger: this ledger has no key (its chain is plain SHA-256): "
                           "open it without one");
    }
    free(kind);
    free(check);
    return rc;
}

dpa_ledger *dpa_ledger_open_keyed(const char *location, int readonly, const void *key, size_t key_len,
                                  dpa_error *err)
{
    dpa_ledger *l = calloc(1, sizeof *l);
    char *auto_units = NULL;
    dpa_status rc;
    if (!l) {
        oom(err);
        return NULL;
    }
    l->readonly = readonly;
    l->decision_limit = DPA_LEDGER_DECISION_LIMIT;
    if (key && key_len) {
        l->key = malloc(key_len);
        if (!l->key) {
            free(l);
            oom(err);
            return NULL;
        }
        memcpy(l->key, key, key_len);
        l->key_len = key_len;
    }
    rc = dpa_ledger_store_open(location, readonly ? DPA_STORE_READ : DPA_STORE_WRITE, &l->store, err);
    if (rc == DPA_OK)
        rc = l->store->ops->get_meta(l->store, "default_filter", &l->default_filter, err);
    if (rc == DPA_OK)
        rc = l->store->ops->get_meta(l->store, "auto_units", &auto_units, err);
    if (rc == DPA_OK && (!l->default_filter || !auto_units))
    {
        char shown[512];
        dpa_ledger_location_display(location, shown, sizeof shown);
        rc = dpa_error_set(err, DPA_ESTORAGE, "ledger: %s has no default filter (an incomplete ledger)",
                           shown);
    }
    if (rc == DPA_OK)
        rc = check_key(l, err);
    if (rc != DPA_OK) {
        free(auto_units);
        dpa_ledger_close(l);
        return NULL;
    }
    l->auto_units = !strcmp(auto_units, "1");
    free(auto_units);
    return l;
}

void dpa_ledger_close(dpa_ledger *l)
{
    if (!l)
        return;
    if (l->store)
        l->store->ops->close(l->store);
    dpa_ledger_worker_stop(l->worker);
    free(l->default_filter);
    if (l->key) {
        memset(l->key, 0, l->key_len);
        free(l->key);
    }
    free(l);
}

void dpa_ledger_decision_clear(dpa_ledger_decision *d)
{
    if (!d)
        return;
    free(d->remaining);
    d->remaining = NULL;
}


dpa_status dpa_ledger_add_unit(dpa_ledger *l, const char *unit, const char *filter_config,
                               dpa_error *err)
{
    dpa_store_unit u;
    dpa_status rc;
    if (!l)
        return dpa_error_set(err, DPA_EINVAL, "ledger: NULL ledger");
    if (l->readonly)
        return dpa_ledger_read_only(err);
    rc = dpa_ledger_check_unit_name(unit, err);
    if (rc != DPA_OK)
        return rc;
    rc = dpa_ledger_new_unit_row(unit, filter_config ? filter_config : l->default_filter, &u, err);
    if (rc != DPA_OK)
        return rc;
    rc = l->store->ops->begin_write(l->store, err);
    if (rc == DPA_OK)
        rc = dpa_ledger_chain_unit_commit(l, &u, err);
    dpa_store_unit_clear(&u);
    return rc;
}

dpa_status dpa_ledger_chain_unit_commit(dpa_ledger *l, dpa_store_unit *u, dpa_error *err)
{
    dpa_chain_key key = {l->key, l->key_len, 0};
    dpa_status rc = dpa_ledger_chain_unit(l->store, &key, u, err);
    if (rc == DPA_OK)
        rc = l->store->ops->commit(l->store, err);
    else
        l->store->ops->rollback(l->store);
    return rc;
}

/* Attempts of one request before it gives up (each lost attempt means
 * another request on the unit committed meanwhile). */
#define REQUEST_MAX_ATTEMPTS 10000

/* The request of a decision made on snapshot snap (borrowed fields). */
static void request_row(dpa_store_request *r, const dpa_store_unit *snap, const char *spec_json,
                        const dpa_filter_decision *dec, char *after, char now[40])
{
    memset(r, 0, sizeof *r);
    dpa_store_now(now);
    r->unit = snap->name;
    r->time = now;
    r->spec = (char *)spec_json;
    r->accepted = dec->accepted;
    r->reason = (char *)dec->reason;
    r->state_before = snap->state;
    r->state_after = after;
    r->generation = snap->generation;
}

/* The commit of an auto unit's first request, decided on the new unit's
 * row snap: in one write transaction, the unit (unless another request
 * created it meanwhile: *conflict = 1, nothing written), the request and
 * the unit's new state. */
static dpa_status commit_new_unit(dpa_ledger *l, dpa_store_unit *snap, const char *spec_json,
                                  const dpa_filter_decision *dec, char *after, long long *id, int *conflict,
                                  dpa_error *err)
{
    dpa_store *s = l->store;
    dpa_chain_key key = {l->key, l->key_len, 0};
    dpa_store_unit cur;
    dpa_store_request r;
    char now[40];
    int found = 0;
    dpa_status rc = s->ops->begin_write(s, err);
    *conflict = 0;
    memset(&cur, 0, sizeof cur);
    if (rc != DPA_OK)
        return rc;
    rc = s->ops->get_unit(s, snap->name, 1, &cur, &found, err);
    if (rc == DPA_OK && found)
        *conflict = 1;
    if (rc == DPA_OK && !*conflict) {
        rc = dpa_ledger_chain_unit(s, &key, snap, err);
        if (rc == DPA_EINVAL) /* created meanwhile (a server backend): try again */
            *conflict = 1;
    }
    if (rc == DPA_OK && !*conflict) {
        request_row(&r, snap, spec_json, dec, after, now);
        rc = dpa_ledger_chain_request(s, &key, &r, err);
        if (rc == DPA_OK) {
            char *before = snap->state;
            snap->state = after;
            snap->requests += 1;
            snap->accepted += dec->accepted ? 1 : 0;
            rc = s->ops->update_unit(s, snap, err);
            snap->state = before;
        }
        *id = r.id;
    }
    if (rc == DPA_OK && !*conflict)
        rc = s->ops->commit(s, err);
    else
        s->ops->rollback(s);
    if (*conflict)
        rc = DPA_OK;
    dpa_store_unit_clear(&cur);
    return rc;
}

/* The commit of a decision made on snapshot snap (the store's
 * commit_request: the version check, the request linked to the chain's
 * head the snapshot read, and the unit's new state in one atomic write).
 * *conflict = 1 (and nothing written) if the unit changed meanwhile. */
static dpa_status commit_decision(dpa_ledger *l, dpa_store_unit *snap, const char *head, const char *spec_json,
                                  const dpa_filter_decision *dec, char *after, long long *id, int *conflict,
                                  dpa_error *err)
{
    dpa_chain_key key = {l->key, l->key_len, 0};
    dpa_store_request r;
    char now[40];
    dpa_status rc;
    request_row(&r, snap, spec_json, dec, after, now);
    rc = dpa_ledger_chain_commit(l->store, &key, snap, &r, head, conflict, err);
    *id = r.id;
    return rc;
}

/* A snapshot of the unit and the chain's head (one read without a lock;
 * on a server backend it also reconnects a handle whose server
 * restarted), or the row of a new auto unit (*is_new = 1, *head NULL). */
static dpa_status snapshot(dpa_ledger *l, const char *unit, dpa_store_unit *snap, char **head, int *is_new,
                           dpa_error *err)
{
    dpa_store *s = l->store;
    int found = 0;
    dpa_status rc = s->ops->snapshot(s, unit, snap, &found, head, err);
    *is_new = 0;
    if (rc != DPA_OK || found)
        return rc;
    if (!l->auto_units)
        return dpa_error_set(err, DPA_EINVAL, "ledger: unknown unit \"%s\" (add it with `dpacct "
                             "ledger add-unit`, or create the ledger with --auto-units)", unit);
    *is_new = 1;
    return dpa_ledger_new_unit_row(unit, l->default_filter, snap, err);
}

dpa_status dpa_ledger_request(dpa_ledger *l, const char *unit, const char *spec_json,
                              dpa_ledger_decision *out, dpa_error *err)
{
    dpa_spec *spec;
    dpa_filter_decision dec;
    long long id = 0;
    int attempt;
    dpa_status rc;

    if (out)
        memset(out, 0, sizeof *out);
    if (!l || !out || !spec_json)
        return dpa_error_set(err, DPA_EINVAL, "ledger: NULL argument");
    if (l->readonly)
        return dpa_ledger_read_only(err);
    rc = dpa_ledger_check_unit_name(unit, err);
    if (rc != DPA_OK)
        return rc;
    /* Validate the spec before anything else. */
    spec = dpa_spec_from_json(spec_json, err);
    if (!spec)
        return err ? err->status : DPA_EINVAL;
    /* Decide on a snapshot, outside any lock, then commit with a version
     * check; another request on the unit committing meanwhile sends this
     * one round again (docs/ledger.md). */
    for (attempt = 0; attempt < REQUEST_MAX_ATTEMPTS; attempt++) {
        dpa_store_unit snap;
        char *after = NULL, *remaining = NULL, *head = NULL;
        int is_new = 0, conflict = 0;
        memset(&snap, 0, sizeof snap);
        rc = snapshot(l, unit, &snap, &head, &is_new, err);
        if (rc == DPA_OK && (snap.period_seconds > 0 || (snap.lifecycle && strcmp(snap.lifecycle, "active")))) {
            /* a unit with periods (the roll) or not active: the transactional path */
            dpa_store_unit_clear(&snap);
            free(head);
            dpa_spec_free(spec);
            return dpa_ledger_request_ex(l, unit, spec_json, NULL, out, err);
        }
        if (rc == DPA_OK)
            rc = dpa_ledger_decide(&l->worker, dpa_store_unit_config(&snap), snap.state, spec, strlen(spec_json), l->decision_limit,
                                   unit, &dec, &after, &remaining, err);
        if (rc == DPA_OK)
            rc = is_new ? commit_new_unit(l, &snap, spec_json, &dec, after, &id, &conflict, err)
                        : commit_decision(l, &snap, head, spec_json, &dec, after, &id, &conflict, err);
        dpa_store_unit_clear(&snap);
        free(head);
        free(after);
        if (rc == DPA_OK && !conflict) {
            out->accepted = dec.accepted;
            out->request_id = id;
            memcpy(out->reason, dec.reason, sizeof out->reason);
            out->reason[sizeof out->reason - 1] = '\0';
            out->remaining = remaining;
            snprintf(out->status, sizeof out->status, "%s", dec.accepted ? "charged" : "rejected");
            break;
        }
        free(remaining);
        if (rc != DPA_OK)
            break;
    }
    if (attempt == REQUEST_MAX_ATTEMPTS)
        rc = dpa_error_set(err, DPA_ESTORAGE, "ledger: unit \"%s\" kept changing during %d attempts", unit,
                           REQUEST_MAX_ATTEMPTS);
    dpa_spec_free(spec);
    return rc;
}

dpa_status dpa_ledger_set_decision_limit(dpa_ledger *l, double seconds, dpa_error *err)
{
    if (!l || !(seconds >= 0) || seconds > 1e6)
        return dpa_error_set(err, DPA_EINVAL, "ledger: a decision time limit is in [0, 1e6] seconds (0: none)");
    l->decision_limit = seconds;
    return DPA_OK;
}

/* ---- status and history ---- */

/* JSON value of a stored JSON text (a string holding the text if it does
 * not parse, so that nothing stored is hidden). */
static json_t *stored_json(const char *text)
{
    json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
    return v ? v : json_string(text);
}

typedef struct status_ctx {
    json_t *units;
    dpa_status rc;
    dpa_error *err;
} status_ctx;

static int status_unit(void *vctx, const dpa_store_unit *u)
{
    status_ctx *c = vctx;
    dpa_filter *f = dpa_ledger_load_filter(dpa_store_unit_config(u), u->state, u->name, c->err);
    json_t *o;
    char *rem;
    if (!f) {
        c->rc = c->err ? c->err->status : DPA_ESTORAGE;
        return 1;
    }
    rem = dpa_filter_remaining_json(f);
    o = json_object();
    if (!rem || !o) {
        free(rem);
        json_decref(o);
        dpa_filter_free(f);
        c->rc = oom(c->err);
        return 1;
    }
    json_object_set_new(o, "unit", json_string(u->name));
    json_object_set_new(o, "filter", stored_json(dpa_store_unit_config(u)));
    json_object_set_new(o, "requests", json_integer(u->requests));
    json_object_set_new(o, "accepted", json_integer(u->accepted));
    json_object_set_new(o, "rejected", json_integer(u->requests - u->accepted));
    json_object_set_new(o, "remaining", stored_json(rem));
    json_object_set_new(o, "exhausted", json_boolean(dpa_filter_exhausted(f)));
    json_object_set_new(o, "created", json_string(u->created));
    json_array_append_new(c->units, o);
    free(rem);
    dpa_filter_free(f);
    return 0;
}

static dpa_status unit_exists(dpa_store *s, const char *unit, dpa_error *err)
{
    dpa_store_unit u;
    int found;
    dpa_status rc = s->ops->get_unit(s, unit, 0, &u, &found, err);
    dpa_store_unit_clear(&u);
    if (rc == DPA_OK && !found)
        rc = dpa_error_set(err, DPA_EINVAL, "ledger: unknown unit \"%s\"", unit);
    return rc;
}

static dpa_status dump(json_t *v, char **json, dpa_error *err)
{
    *json = json_dumps(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
    json_decref(v);
    return *json ? DPA_OK : oom(err);
}

dpa_status dpa_ledger_status_json(dpa_ledger *l, const char *unit, char **json, dpa_error *err)
{
    status_ctx c;
    json_t *root;
    dpa_status rc;
    if (!l || !json)
        return dpa_error_set(err, DPA_EINVAL, "ledger: NULL argument");
    *json = NULL;
    rc = l->store->ops->begin_read(l->store, err);
    if (rc != DPA_OK)
        return rc;
    if (unit)
        rc = unit_exists(l->store, unit, err);
    c.units = json_array();
    c.rc = DPA_OK;
    c.err = err;
    if (rc == DPA_OK)
        rc = l->store->ops->each_unit(l->store, unit, status_unit, &c, err);
    if (rc == DPA_OK)
        rc = c.rc;
    l->store->ops->rollback(l->store);
    if (rc != DPA_OK) {
        json_decref(c.units);
        return rc;
    }
    root = json_object();
    json_object_set_new(root, "default_filter", stored_json(l->default_filter));
    json_object_set_new(root, "auto_units", json_boolean(l->auto_units));
    json_object_set_new(root, "units", c.units);
    return dump(root, json, err);
}

static json_t *request_json(const dpa_store_request *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "id", json_integer(r->id));
    json_object_set_new(o, "unit", json_string(r->unit));
    json_object_set_new(o, "time", json_string(r->time));
    json_object_set_new(o, "spec", stored_json(r->spec));
    json_object_set_new(o, "decision", json_string(r->accepted ? "accepted" : "rejected"));
    json_object_set_new(o, "reason", json_string(r->reason));
    json_object_set_new(o, "state_before", stored_json(r->state_before));
    json_object_set_new(o, "state_after", stored_json(r->state_after));
    /* format 3's fields when not the default (a plain history is unchanged) */
    if (r->kind && strcmp(r->kind, "request"))
        json_object_set_new(o, "kind", json_string(r->kind));
    if (r->actor && strcmp(r->actor, "local"))
        json_object_set_new(o, "actor", json_string(r->actor));
    if (r->idem_key)
        json_object_set_new(o, "idempotency_key", json_string(r->idem_key));
    if (r->generation)
        json_object_set_new(o, "generation", json_integer(r->generation));
    if (r->ref)
        json_object_set_new(o, "reservation", json_integer(r->ref));
    return o;
}

static int history_request(void *ctx, const dpa_store_request *r)
{
    if (!r->unit[0]) /* a tenant or token entry: not a unit's history */
        return 0;
    json_array_append_new((json_t *)ctx, request_json(r));
    return 0;
}

dpa_status dpa_ledger_history_json(dpa_ledger *l, const char *unit, char **json, dpa_error *err)
{
    json_t *arr;
    dpa_status rc;
    if (!l || !json)
        return dpa_error_set(err, DPA_EINVAL, "ledger: NULL argument");
    *json = NULL;
    rc = l->store->ops->begin_read(l->store, err);
    if (rc != DPA_OK)
        return rc;
    if (unit)
        rc = unit_exists(l->store, unit, err);
    arr = json_array();
    if (rc == DPA_OK)
        rc = l->store->ops->each_request(l->store, unit, history_request, arr, err);
    l->store->ops->rollback(l->store);
    if (rc != DPA_OK) {
        json_decref(arr);
        return rc;
    }
    return dump(arr, json, err);
}

