/* The ledger's verify: replay every unit's history and check the hash chain.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Two independent checks over one consistent snapshot.  The replay runs
 * every unit's requests through a fresh filter from the unit's initial
 * state and compares each decision, each state before and after and the
 * stored current state and counts.  The chain (chain.h) recomputes every
 * link in commit order (the metadata, then units and requests as they were
 * added) and compares it with the stored one, so an edit, deletion,
 * insertion or reordering of any chained record breaks it; against an
 * anchor (a link number and hash from an earlier verify, kept elsewhere) it
 * also detects a history cut back to an earlier point (docs/ledger.md). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dpacct/event.h"
#include "dpacct/filter.h"
#include "dpacct/ledger.h"
#include "ledger/chain.h"
#include "ledger/ledger_internal.h"
#include "ledger/store.h"

/* Problems listed by verify before it stops listing (it still counts them). */
#define VERIFY_MAX_PROBLEMS 100

static dpa_status oom(dpa_error *err)
{
    return dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
}

typedef struct verify_ctx {
    dpa_filter *f;        /* replaying filter of the current unit */
    const char *unit;
    char *state;          /* the replayed state (the chain) */
    long long requests, accepted, last_id;
    /* format 3: what the entries other than requests change */
    char *config;              /* the configuration in force (top-ups) */
    const char *lifecycle;     /* "active" | "frozen" | "archived" */
    long long generation;
    dpa_ledger_charges charges; /* of the current generation (release) */
    json_t *problems;
    long long nproblems;
    dpa_status rc;        /* a failure of the replay itself (ENOMEM) */
    dpa_error *err;
} verify_ctx;

static void problem(verify_ctx *c, long long id, const char *what)
{
    c->nproblems++;
    if (json_array_size(c->problems) < VERIFY_MAX_PROBLEMS) {
        json_t *o = json_object();
        json_object_set_new(o, "unit", json_string(c->unit));
        if (id > 0)
            json_object_set_new(o, "request", json_integer(id));
        json_object_set_new(o, "problem", json_string(what));
        json_array_append_new(c->problems, o);
    }
}

static int verify_entry(verify_ctx *c, const dpa_store_request *r);

static int verify_request(void *vctx, const dpa_store_request *r)
{
    verify_ctx *c = vctx;
    dpa_error e;
    dpa_spec *spec;
    dpa_filter_decision dec;
    char msg[DPA_ERROR_MESSAGE_MAX + 96];
    char *after;

    if (r->id <= c->last_id)
        problem(c, r->id, "request ids out of order");
    c->last_id = r->id;
    if (strcmp(r->state_before, c->state))
        problem(c, r->id, "state_before differs from the state the previous request left");
    if (strcmp(r->kind, "roll") && r->generation != c->generation)
        problem(c, r->id, "the entry's generation differs from the unit's");
    if (dpa_ledger_charges_note(&c->charges, r) != 0) {
        c->rc = dpa_error_set(c->err, DPA_ENOMEM, "ledger: out of memory");
        return 1;
    }
    if (strcmp(r->kind, "request") && strcmp(r->kind, "reserve"))
        return verify_entry(c, r);
    if (!strcmp(c->lifecycle, "frozen") || !strcmp(c->lifecycle, "archived"))
        problem(c, r->id, "a request recorded while the unit was frozen or archived");
    c->requests++;
    c->accepted += r->accepted ? 1 : 0;
    spec = dpa_spec_from_json(r->spec, &e);
    if (!spec) {
        snprintf(msg, sizeof msg, "recorded spec does not parse: %s", e.message);
        problem(c, r->id, msg);
        /* go on from the recorded state, to check the rest of the chain */
        goto follow_record;
    }
    if (dpa_filter_request(c->f, spec, &dec, &e) != DPA_OK) {
        dpa_spec_free(spec);
        if (e.status == DPA_ENOMEM) {
            c->rc = dpa_error_set(c->err, DPA_ENOMEM, "ledger: out of memory");
            return 1;
        }
        snprintf(msg, sizeof msg, "replay refused the request: %s", e.message);
        problem(c, r->id, msg);
        goto follow_record;
    }
    dpa_spec_free(spec);
    if (dec.accepted != r->accepted)
        problem(c, r->id, dec.accepted ? "recorded as rejected, replay accepts"
                                       : "recorded as accepted, replay rejects");
    after = dpa_filter_state_json(c->f);
    if (!after) {
        c->rc = dpa_error_set(c->err, DPA_ENOMEM, "ledger: out of memory");
        return 1;
    }
    if (strcmp(after, r->state_after))
        problem(c, r->id, "state_after differs from the replayed state");
    free(c->state);
    c->state = after;
    if (dec.accepted == r->accepted && !strcmp(after, r->state_after))
        return 0;
follow_record:
    /* Continue from the recorded state_after so that one bad record is
     * reported once, not as a cascade. */
    if (dpa_filter_set_state_json(c->f, r->state_after, &e) != DPA_OK)
        problem(c, r->id, "recorded state_after does not load");
    free(c->state);
    c->state = strdup(r->state_after);
    if (!c->state) {
        c->rc = dpa_error_set(c->err, DPA_ENOMEM, "ledger: out of memory");
        return 1;
    }
    return 0;
}

/* The state after r is its state_before (lifecycle, commit, top-up). */
static void same_state(verify_ctx *c, const dpa_store_request *r)
{
    if (strcmp(r->state_after, r->state_before))
        problem(c, r->id, "state_after differs from state_before in an entry that charges nothing");
}

/* Continue from the recorded state_after (reported once, not as a cascade). */
static int follow(verify_ctx *c, const dpa_store_request *r)
{
    dpa_error e;
    char *st = strdup(r->state_after);
    if (!st) {
        c->rc = dpa_error_set(c->err, DPA_ENOMEM, "ledger: out of memory");
        return 1;
    }
    free(c->state);
    c->state = st;
    if (dpa_filter_set_state_json(c->f, r->state_after, &e) != DPA_OK)
        problem(c, r->id, "recorded state_after does not load");
    return 0;
}

/* A history entry other than a request (format 3): reservations settled,
 * lifecycle, top-up, roll. */
static int verify_entry(verify_ctx *c, const dpa_store_request *r)
{
    const char *k = r->kind;
    dpa_error e;
    if (!strcmp(k, "commit") || !strcmp(k, "release")) {
        dpa_ledger_charge *ch = dpa_ledger_charges_find(&c->charges, r->ref);
        /* charges_note has just settled it: it must have been pending */
        if (!ch || !ch->reserve || ch->settled != (!strcmp(k, "commit") ? 1 : 2))
            problem(c, r->id, "settles a request that is not a pending reservation");
        if (!strcmp(k, "commit")) {
            same_state(c, r);
        } else {
            char *st = NULL;
            if (dpa_ledger_charges_replay(&c->charges, c->config, -1, &st, &e) != DPA_OK)
                problem(c, r->id, "the release's replay failed");
            else if (strcmp(st, r->state_after))
                problem(c, r->id, "state_after of the release differs from the replay without the reservation");
            free(st);
        }
        if (!strcmp(c->lifecycle, "archived"))
            problem(c, r->id, "a reservation settled on an archived unit");
    } else if (!strcmp(k, "freeze") || !strcmp(k, "unfreeze") || !strcmp(k, "archive")) {
        const char *from = c->lifecycle;
        int ok = !strcmp(k, "freeze") ? !strcmp(from, "active")
                 : !strcmp(k, "unfreeze") ? !strcmp(from, "frozen") : strcmp(from, "archived") != 0;
        if (!ok)
            problem(c, r->id, "a lifecycle transition that is not allowed");
        c->lifecycle = !strcmp(k, "freeze") ? "frozen" : !strcmp(k, "unfreeze") ? "active" : "archived";
        same_state(c, r);
    } else if (!strcmp(k, "topup")) {
        dpa_filter *g;
        if (!strcmp(c->lifecycle, "archived"))
            problem(c, r->id, "a top-up of an archived unit");
        if (dpa_ledger_topup_check(c->config, r->spec, &e) != DPA_OK)
            problem(c, r->id, "a top-up that breaks the rule (same kind, no budget parameter lower)");
        same_state(c, r);
        g = dpa_filter_new_json(r->spec, &e);
        if (!g || dpa_filter_set_state_json(g, r->state_after, &e) != DPA_OK) {
            problem(c, r->id, "the top-up's configuration does not load with the unit's state");
            dpa_filter_free(g);
        } else {
            char *cfg = strdup(r->spec);
            if (!cfg) {
                dpa_filter_free(g);
                c->rc = dpa_error_set(c->err, DPA_ENOMEM, "ledger: out of memory");
                return 1;
            }
            dpa_filter_free(c->f);
            c->f = g;
            free(c->config);
            c->config = cfg;
        }
    } else if (!strcmp(k, "roll")) {
        dpa_filter *fresh = dpa_filter_new_json(c->config, &e);
        char *st0 = fresh ? dpa_filter_state_json(fresh) : NULL;
        if (!st0 || strcmp(st0, r->state_after))
            problem(c, r->id, "a roll's state_after is not the full budget");
        if (r->generation <= c->generation)
            problem(c, r->id, "a roll that does not advance the generation");
        c->generation = r->generation;
        free(st0);
        dpa_filter_free(fresh);
    } else {
        problem(c, r->id, "an entry of an unknown kind");
    }
    return follow(c, r);
}

int dpa_ledger_collect_unit(void *ctx, const dpa_store_unit *u)
{
    dpa_ledger_unit_list *L = ctx;
    dpa_store_unit *c;
    if (L->n == L->cap) {
        size_t cap = L->cap ? 2 * L->cap : 16;
        dpa_store_unit *p = realloc(L->u, cap * sizeof *p);
        if (!p) {
            L->oom = 1;
            return 1;
        }
        L->u = p;
        L->cap = cap;
    }
    c = &L->u[L->n];
    memset(c, 0, sizeof *c);
    c->name = strdup(u->name);
    c->filter = strdup(u->filter);
    c->initial_state = strdup(u->initial_state);
    c->state = strdup(u->state);
    c->created = strdup(u->created);
    c->requests = u->requests;
    c->accepted = u->accepted;
    c->chain_index = u->chain_index;
    c->chain_after = u->chain_after;
    c->chain = strdup(u->chain);
    c->tenant = strdup(u->tenant ? u->tenant : "default");
    c->period_seconds = u->period_seconds;
    c->lifecycle = strdup(u->lifecycle ? u->lifecycle : "active");
    c->generation = u->generation;
    c->period_start = strdup(u->period_start ? u->period_start : "");
    c->filter_now = strdup(u->filter_now ? u->filter_now : "");
    L->n++;
    if (!c->name || !c->filter || !c->initial_state || !c->state || !c->created || !c->chain || !c->tenant ||
        !c->lifecycle || !c->period_start || !c->filter_now) {
        L->oom = 1;
        return 1;
    }
    return 0;
}

typedef struct orphan_ctx {
    dpa_ledger_unit_list *units;
    verify_ctx *vc;
    long long total;
    /* the chain walk */
    const dpa_chain_key *key;
    dpa_store_unit **by_index; /* units in chain_index order */
    size_t next_unit;          /* the next of them to enter the chain */
    char prev[DPA_CHAIN_HEX];  /* the last link */
    long long links;           /* links after the genesis so far */
    long long anchor_links;    /* 0: no anchor */
    const char *anchor_hash;
    int anchor_seen;
    long long last_request;    /* the last request id seen */
} orphan_ctx;

/* One link more: compare the recomputed link with the stored one (the
 * stored one is followed either way, so one altered record is reported
 * once). */
static void chain_step(orphan_ctx *c, const char *computed, const char *stored, const char *unit, long long id,
                       const char *what)
{
    c->links++;
    if (strcmp(computed, stored)) {
        c->vc->unit = unit;
        problem(c->vc, id, what);
    }
    snprintf(c->prev, sizeof c->prev, "%.64s", stored);
    if (c->anchor_links == c->links) {
        c->anchor_seen = 1;
        if (strcmp(stored, c->anchor_hash) || strcmp(computed, c->anchor_hash)) {
            c->vc->unit = "";
            problem(c->vc, 0, "the chain differs from the anchor at its link: the history up to the anchor "
                              "was rewritten");
        }
    }
}

/* The units that entered the chain before request id `before` (all when
 * before < 0). */
static void chain_units(orphan_ctx *c, long long before)
{
    while (c->next_unit < c->units->n &&
           (before < 0 || c->by_index[c->next_unit]->chain_after < before)) {
        dpa_store_unit *u = c->by_index[c->next_unit++];
        char h[DPA_CHAIN_HEX];
        dpa_error e;
        if (dpa_chain_unit(c->key, c->prev, u, h, &e) != DPA_OK) {
            c->vc->rc = e.status;
            return;
        }
        chain_step(c, h, u->chain, u->name, 0, "the unit's chain link differs: its name, filter "
                   "configuration, initial state or creation was changed, or units were inserted, removed "
                   "or reordered");
    }
}

static int count_request(void *vctx, const dpa_store_request *r)
{
    orphan_ctx *c = vctx;
    /* the units come in name order (each_unit): binary search */
    size_t lo = 0, hi = c->units->n;
    int known = 0;
    while (lo < hi && !known) {
        size_t mid = lo + (hi - lo) / 2;
        int cmp = strcmp(c->units->u[mid].name, r->unit);
        if (cmp == 0)
            known = 1;
        else if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    c->total++;
    {
        int record = !strcmp(r->kind, "tenant") || !strcmp(r->kind, "token") || !strcmp(r->kind, "revoke");
        if (record != (r->unit[0] == '\0')) {
            c->vc->unit = r->unit;
            problem(c->vc, r->id, record ? "a tenant or token entry of a unit" : "an entry without a unit");
        } else if (!known && !record) {
            c->vc->unit = r->unit;
            problem(c->vc, r->id, "request of a unit that does not exist");
        }
    }
    chain_units(c, r->id);
    c->last_request = r->id;
    {
        char h[DPA_CHAIN_HEX];
        dpa_error e;
        if (dpa_chain_request(c->key, c->prev, r, h, &e) != DPA_OK) {
            c->vc->rc = e.status;
            return 1;
        }
        chain_step(c, h, r->chain, r->unit, r->id, "the request's chain link differs: it was changed, or "
                   "requests were inserted, removed, renumbered or reordered before it");
    }
    return c->vc->rc != DPA_OK;
}

/* ---- tenants and tokens: their records replayed from their entries ---- */

typedef struct records_ctx {
    verify_ctx *vc;
    json_t *want; /* key -> value, from the entries */
    json_t *seen; /* keys found in the metadata */
} records_ctx;

static int record_entry(void *vctx, const dpa_store_request *r)
{
    records_ctx *c = vctx;
    json_t *spec = json_loads(r->spec, 0, NULL), *set = json_object_get(spec, "set"), *v;
    const char *k;
    if (!json_is_object(set)) {
        c->vc->unit = "";
        problem(c->vc, r->id, "a tenant or token entry whose spec is not {\"set\": {...}}");
    }
    json_object_foreach(set, k, v)
        json_object_set(c->want, k, v);
    json_decref(spec);
    return 0;
}

static int record_row(void *vctx, const char *key, const char *value)
{
    records_ctx *c = vctx;
    const char *want = json_string_value(json_object_get(c->want, key));
    json_object_set_new(c->seen, key, json_true());
    if (!want || strcmp(want, value)) {
        char msg[DPA_LEDGER_MAX_UNIT + 120];
        snprintf(msg, sizeof msg, "the record %.*s differs from its chained history (edited or inserted)",
                 DPA_LEDGER_MAX_UNIT, key);
        c->vc->unit = "";
        problem(c->vc, 0, msg);
    }
    return 0;
}

/* Every tenant and token record (metadata) equals what its entries set,
 * and every record they set exists. */
static dpa_status verify_records(dpa_store *store, verify_ctx *vc, dpa_error *err)
{
    records_ctx c = {vc, json_object(), json_object()};
    static const char *const PREFIXES[] = {"tenant:", "token:", "token_id:"};
    const char *k;
    json_t *v;
    dpa_status rc = c.want && c.seen ? store->ops->each_request(store, "", record_entry, &c, err) : oom(err);
    for (size_t i = 0; rc == DPA_OK && i < sizeof PREFIXES / sizeof *PREFIXES; i++)
        rc = store->ops->each_meta(store, PREFIXES[i], record_row, &c, err);
    if (rc == DPA_OK)
        json_object_foreach(c.want, k, v)
            if (!json_object_get(c.seen, k)) {
                char msg[DPA_LEDGER_MAX_UNIT + 120];
                snprintf(msg, sizeof msg, "the record %.*s of the chained history is missing (deleted)",
                         DPA_LEDGER_MAX_UNIT, k);
                vc->unit = "";
                problem(vc, 0, msg);
            }
    json_decref(c.want);
    json_decref(c.seen);
    return rc;
}

static int by_chain_index(const void *a, const void *b)
{
    const dpa_store_unit *x = *(dpa_store_unit *const *)a, *y = *(dpa_store_unit *const *)b;
    return x->chain_index < y->chain_index ? -1 : x->chain_index > y->chain_index;
}

/* The genesis link from the stored metadata, and the key's agreement with
 * it: DPA_EINVAL for a keyed ledger verified without its key or with
 * another key. */
static dpa_status chain_genesis(dpa_store *store, const dpa_chain_key *key, char out[DPA_CHAIN_HEX],
                                char **head, dpa_error *err)
{
    char *val[DPA_CHAIN_NMETA] = {0};
    dpa_status rc = DPA_OK;
    char check[DPA_CHAIN_HEX];
    int i;
    for (i = 0; rc == DPA_OK && i < DPA_CHAIN_NMETA; i++)
        rc = store->ops->get_meta(store, DPA_CHAIN_META_KEYS[i], &val[i], err);
    if (rc == DPA_OK)
        rc = store->ops->get_meta(store, "chain_head", head, err);
    if (rc == DPA_OK && val[5] && !strcmp(val[5], "hmac-sha256") && !(key && key->len))
        rc = dpa_error_set(err, DPA_EINVAL, "ledger: this ledger's chain is keyed (HMAC-SHA-256): verify needs "
                           "its key (--key-file FILE or DPACCT_LEDGER_KEY)");
    if (rc == DPA_OK && key && key->len) {
        rc = dpa_chain_key_check(key, check, err);
        if (rc == DPA_OK && val[5] && !strcmp(val[5], "hmac-sha256") && val[6] && strcmp(val[6], check))
            rc = dpa_error_set(err, DPA_EINVAL, "ledger: wrong key (it is not the key of this ledger)");
    }
    if (rc == DPA_OK)
        rc = dpa_chain_genesis(key, (const char *const *)val, out, err);
    for (i = 0; i < DPA_CHAIN_NMETA; i++)
        free(val[i]);
    return rc;
}

dpa_status dpa_ledger_verify(dpa_ledger *l, int *ok, char **report, dpa_error *err)
{
    return dpa_ledger_verify_anchor(l, NULL, ok, report, err);
}

dpa_status dpa_ledger_verify_anchor(dpa_ledger *l, const char *anchor, int *ok, char **report, dpa_error *err)
{
    dpa_status rc;
    dpa_chain_key key;
    if (!l || !ok || !report)
        return dpa_error_set(err, DPA_EINVAL, "ledger: NULL argument");
    *ok = 0;
    *report = NULL;
    key.data = l->key;
    key.len = l->key_len;
    rc = l->store->ops->begin_read(l->store, err);
    if (rc != DPA_OK)
        return rc;
    rc = dpa_ledger_verify_store(l->store, &key, anchor, ok, report, err);
    l->store->ops->rollback(l->store);
    return rc;
}

dpa_status dpa_ledger_verify_store(dpa_store *store, const dpa_chain_key *key, const char *anchor, int *ok,
                                   char **report, dpa_error *err)
{
    char genesis[DPA_CHAIN_HEX], anchor_hash[DPA_CHAIN_HEX] = "";
    char *stored_head = NULL;
    long long anchor_links = 0;
    dpa_ledger_unit_list units = {0};
    verify_ctx c;
    orphan_ctx oc;
    dpa_status rc;
    json_t *root;
    char *root_text;
    size_t nunits;
    *ok = 0;
    *report = NULL;
    if (anchor) {
        int used = 0;
        if (sscanf(anchor, "%lld:%64[0-9a-f]%n", &anchor_links, anchor_hash, &used) != 2 || anchor[used] ||
            anchor_links < 1 || strlen(anchor_hash) != 64)
            return dpa_error_set(err, DPA_EINVAL, "ledger: an anchor is LINKS:HASH (\"head\" of an earlier "
                                 "verify report), got \"%s\"", anchor);
    }
    rc = chain_genesis(store, key, genesis, &stored_head, err);
    if (rc != DPA_OK) {
        free(stored_head); /* read before the key check that failed */
        return rc;
    }
    memset(&c, 0, sizeof c);
    c.problems = json_array();
    c.err = err;
    rc = store->ops->each_unit(store, NULL, dpa_ledger_collect_unit, &units, err);
    if (rc == DPA_OK && units.oom)
        rc = oom(err);
    for (size_t i = 0; rc == DPA_OK && i < units.n; i++) {
        dpa_store_unit *u = &units.u[i];
        dpa_error e;
        char *canon;
        c.unit = u->name;
        c.requests = c.accepted = c.last_id = 0;
        c.lifecycle = "active";
        c.generation = 0;
        free(c.config);
        c.config = strdup(u->filter);
        if (!c.config) {
            rc = oom(err);
            break;
        }
        c.f = dpa_filter_new_json(u->filter, &e);
        if (!c.f) {
            problem(&c, 0, "stored filter configuration does not load");
            continue;
        }
        if (dpa_filter_set_state_json(c.f, u->initial_state, &e) != DPA_OK) {
            problem(&c, 0, "stored initial state does not load");
            dpa_filter_free(c.f);
            continue;
        }
        /* a unit starts with a full budget: its initial state is the fresh one */
        {
            dpa_filter *fresh = dpa_filter_new_json(u->filter, &e);
            char *st0 = fresh ? dpa_filter_state_json(fresh) : NULL;
            if (!st0 || strcmp(st0, u->initial_state))
                problem(&c, 0, "initial state is not the full budget of the unit's filter");
            free(st0);
            dpa_filter_free(fresh);
        }
        canon = dpa_filter_config_json(c.f);
        if (canon && strcmp(canon, u->filter))
            problem(&c, 0, "stored filter configuration is not canonical");
        free(canon);
        c.state = strdup(u->initial_state);
        if (!c.state) {
            rc = oom(err);
            dpa_filter_free(c.f);
            break;
        }
        rc = store->ops->each_request(store, u->name, verify_request, &c, err);
        if (rc == DPA_OK)
            rc = c.rc;
        if (rc == DPA_OK) {
            if (strcmp(c.state, u->state))
                problem(&c, 0, "stored current state differs from the replayed history");
            if (c.requests != u->requests || c.accepted != u->accepted)
                problem(&c, 0, "stored request counts differ from the history");
            if (strcmp(c.lifecycle, u->lifecycle) || c.generation != u->generation ||
                strcmp(c.config, dpa_store_unit_config(u)))
                problem(&c, 0, "stored lifecycle, generation or configuration differs from the history");
        }
        dpa_ledger_charges_clear(&c.charges);
        free(c.state);
        c.state = NULL;
        dpa_filter_free(c.f);
        c.f = NULL;
    }
    memset(&oc, 0, sizeof oc);
    oc.units = &units;
    oc.vc = &c;
    oc.key = key;
    oc.anchor_links = anchor_links;
    oc.anchor_hash = anchor_hash;
    memcpy(oc.prev, genesis, sizeof oc.prev);
    oc.by_index = malloc((units.n ? units.n : 1) * sizeof *oc.by_index);
    if (rc == DPA_OK && !oc.by_index)
        rc = oom(err);
    if (rc == DPA_OK) {
        for (size_t i = 0; i < units.n; i++)
            oc.by_index[i] = &units.u[i];
        qsort(oc.by_index, units.n, sizeof *oc.by_index, by_chain_index);
        for (size_t i = 0; i < units.n; i++)
            if (oc.by_index[i]->chain_index != (long long)i + 1) {
                c.unit = oc.by_index[i]->name;
                problem(&c, 0, "unit numbers are not 1, 2, ...: units were inserted or removed");
                break;
            }
        c.rc = DPA_OK;
        rc = store->ops->each_request(store, NULL, count_request, &oc, err);
    }
    if (rc == DPA_OK)
        chain_units(&oc, -1);
    if (rc == DPA_OK)
        rc = verify_records(store, &c, err);
    if (rc == DPA_OK)
        rc = c.rc;
    if (rc == DPA_OK) {
        dpa_chain_head h, stored;
        h.links = oc.links;
        h.last_request = oc.last_request;
        h.units = (long long)units.n;
        memcpy(h.hash, oc.prev, sizeof h.hash);
        c.unit = "";
        if (dpa_chain_head_parse(stored_head, &stored) != 0 || stored.links != h.links ||
            stored.last_request != h.last_request || stored.units != h.units || strcmp(stored.hash, h.hash))
            problem(&c, 0, "the chain's head in the metadata differs from the chain: records were removed "
                           "at its end, or the head was edited");
        if (anchor_links && !oc.anchor_seen)
            problem(&c, 0, "the chain is shorter than the anchor: history was removed or rolled back");
    }
    free(oc.by_index);
    free(stored_head);
    free(c.config);
    dpa_ledger_charges_clear(&c.charges);
    nunits = units.n;
    for (size_t i = 0; i < units.n; i++)
        dpa_store_unit_clear(&units.u[i]);
    free(units.u);
    if (rc != DPA_OK) {
        json_decref(c.problems);
        return rc;
    }
    *ok = c.nproblems == 0;
    root = json_object();
    json_object_set_new(root, "ok", json_boolean(*ok));
    json_object_set_new(root, "units", json_integer((json_int_t)nunits));
    json_object_set_new(root, "requests", json_integer(oc.total));
    json_object_set_new(root, "problems_found", json_integer(c.nproblems));
    json_object_set_new(root, "problems", c.problems);
    {
        char head[100];
        snprintf(head, sizeof head, "%lld:%s", oc.links, oc.prev);
        json_object_set_new(root, "head", json_string(head));
        json_object_set_new(root, "keyed", json_boolean(key && key->len));
    }
    root_text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    *report = root_text;
    return root_text ? DPA_OK : oom(err);
}
