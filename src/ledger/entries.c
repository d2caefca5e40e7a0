/* The service's history entries, each written in one write transaction:
 * requests with options and in batches (group commit), reservations,
 * lifecycle, top-up and the period roll.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Unlike dpa_ledger_request (decided on a snapshot and committed with a
 * version check), these decide under the unit's lock inside one write
 * transaction: begin_write, lock every unit involved in name order, then
 * the chain's head (the order of every writer: no deadlock), decide, append
 * the entries and commit once.  A batch of n requests therefore costs one
 * durable commit (one fsync) instead of n: the chain's head is one row, so
 * one commit per decision caps a ledger at the disk's fsync rate. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "dpacct/event.h"
#include "dpacct/filter.h"
#include "ledger/ledger_internal.h"

static dpa_status oom(dpa_error *err)
{
    return dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
}

/* One write transaction of entries.  The chain's head is locked and read
 * once (at the first entry) and stored once (tx_finish); the entries are
 * linked as they come and written together (tx_flush: before anything reads
 * the history, and at the end), and each unit is written once: on a server
 * backend a batch costs a few statements (the store's lock_units,
 * append_requests and update_units), not a few per entry. */
typedef struct entry_tx {
    dpa_ledger *l;
    dpa_chain_key key;
    dpa_chain_head head;
    int have_head;
    dpa_store_unit **dirty; /* units with new entries (borrowed) */
    size_t ndirty, cap;
    dpa_store_request *pending; /* linked, not yet written (owned) */
    size_t npending, cappending;
} entry_tx;

static void tx_init(entry_tx *t, dpa_ledger *l)
{
    memset(t, 0, sizeof *t);
    t->l = l;
    t->key.data = l->key;
    t->key.len = l->key_len;
}

/* Write the pending entries (one statement where the store has one). */
static dpa_status tx_flush(entry_tx *t, dpa_error *err)
{
    dpa_store *s = t->l->store;
    dpa_status rc = DPA_OK;
    if (t->npending == 0)
        return DPA_OK;
    if (s->ops->append_requests) {
        dpa_store_request **p = malloc(t->npending * sizeof *p);
        if (!p)
            rc = oom(err);
        for (size_t i = 0; rc == DPA_OK && i < t->npending; i++)
            p[i] = &t->pending[i];
        if (rc == DPA_OK)
            rc = s->ops->append_requests(s, p, t->npending, err);
        free(p);
    } else {
        for (size_t i = 0; rc == DPA_OK && i < t->npending; i++)
            rc = s->ops->append_request(s, &t->pending[i], err);
    }
    for (size_t i = 0; i < t->npending; i++)
        dpa_store_request_clear(&t->pending[i]);
    t->npending = 0;
    return rc;
}

/* The entries, the head and the units written, before the commit (rc: the
 * transaction's status so far); frees t's lists. */
static dpa_status tx_finish(entry_tx *t, dpa_status rc, dpa_error *err)
{
    dpa_store *s = t->l->store;
    if (rc == DPA_OK)
        rc = tx_flush(t, err);
    if (rc == DPA_OK && t->have_head)
        rc = dpa_ledger_chain_store_head(s, &t->head, err);
    if (rc == DPA_OK && t->ndirty && s->ops->update_units)
        rc = s->ops->update_units(s, t->dirty, t->ndirty, err);
    for (size_t i = 0; rc == DPA_OK && !s->ops->update_units && i < t->ndirty; i++)
        rc = s->ops->update_unit(s, t->dirty[i], err);
    for (size_t i = 0; i < t->npending; i++)
        dpa_store_request_clear(&t->pending[i]);
    free(t->pending);
    free(t->dirty);
    t->pending = NULL;
    t->dirty = NULL;
    t->ndirty = t->cap = t->npending = t->cappending = 0;
    return rc;
}

static dpa_status mark_dirty(entry_tx *t, dpa_store_unit *u, dpa_error *err)
{
    for (size_t i = 0; i < t->ndirty; i++)
        if (t->dirty[i] == u)
            return DPA_OK;
    if (t->ndirty == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 8;
        dpa_store_unit **p = realloc(t->dirty, cap * sizeof *p);
        if (!p)
            return oom(err);
        t->dirty = p;
        t->cap = cap;
    }
    t->dirty[t->ndirty++] = u;
    return DPA_OK;
}

/* Append an entry of unit *u (locked, current) and store the unit's new
 * state (after: NULL keeps it); counts move for request / reserve. */
static dpa_status append_entry(entry_tx *t, dpa_store_unit *u, const char *kind, const char *spec, int accepted,
                               const char *reason, const char *after, const char *actor, const char *idem_key,
                               long long ref, long long *id, dpa_error *err)
{
    dpa_store_request r;
    char now[40];
    dpa_status rc;
    int counts = !strcmp(kind, "request") || !strcmp(kind, "reserve");
    memset(&r, 0, sizeof r);
    dpa_store_now(now);
    r.unit = u->name;
    r.time = now;
    r.spec = (char *)spec;
    r.accepted = accepted;
    r.reason = (char *)(reason ? reason : "");
    r.state_before = u->state;
    r.state_after = (char *)(after ? after : u->state);
    r.kind = (char *)kind;
    r.actor = (char *)(actor ? actor : "local");
    r.idem_key = (char *)idem_key;
    r.generation = u->generation;
    r.ref = ref;
    if (!t->have_head) {
        rc = dpa_ledger_chain_lock_head(t->l->store, &t->head, err);
        if (rc != DPA_OK)
            return rc;
        t->have_head = 1;
    }
    {
        char link[DPA_CHAIN_HEX];
        dpa_chain_head h = t->head;
        rc = dpa_ledger_chain_next(&t->key, &h, &r, link, err);
        if (rc != DPA_OK)
            return rc;
        if (t->npending == t->cappending) {
            size_t cap = t->cappending ? 2 * t->cappending : 16;
            dpa_store_request *p = realloc(t->pending, cap * sizeof *p);
            if (!p)
                return oom(err);
            t->pending = p;
            t->cappending = cap;
        }
        r.chain = link;
        if (dpa_store_request_dup(&t->pending[t->npending], &r) != 0)
            return oom(err);
        t->npending++;
        t->head = h;
    }
    if (id)
        *id = r.id;
    if (after && after != u->state) {
        char *copy = strdup(after);
        if (!copy)
            return oom(err);
        free(u->state);
        u->state = copy;
    }
    if (counts) {
        u->requests++;
        u->accepted += accepted ? 1 : 0;
    }
    return mark_dirty(t, u, err);
}

static int lifecycle_is(const dpa_store_unit *u, const char *what)
{
    return !strcmp(u->lifecycle && *u->lifecycle ? u->lifecycle : "active", what);
}

static dpa_status set_str(char **slot, const char *v, dpa_error *err)
{
    char *c = strdup(v);
    if (!c)
        return oom(err);
    free(*slot);
    *slot = c;
    return DPA_OK;
}

/* The period roll of *u if a boundary passed (recorded: kind "roll"). */
static dpa_status roll_if_due(entry_tx *t, dpa_store_unit *u, const char *actor, int *rolled, dpa_error *err)
{
    double created, now = dpa_ledger_now_seconds();
    long long gen;
    char start[40], spec[120], *fresh;
    dpa_filter *f;
    dpa_status rc;
    if (rolled)
        *rolled = 0;
    if (u->period_seconds <= 0 || lifecycle_is(u, "archived"))
        return DPA_OK;
    created = dpa_ledger_time_seconds(u->created);
    if (created < 0)
        return dpa_error_set(err, DPA_ESTORAGE, "ledger: unit \"%s\": malformed creation time", u->name);
    gen = (long long)((now - created) / (double)u->period_seconds);
    if (gen <= u->generation)
        return DPA_OK;
    f = dpa_ledger_load_filter(dpa_store_unit_config(u), NULL, u->name, err);
    if (!f)
        return err ? err->status : DPA_ESTORAGE;
    fresh = dpa_filter_state_json(f);
    dpa_filter_free(f);
    if (!fresh)
        return oom(err);
    dpa_ledger_format_time(created + (double)gen * (double)u->period_seconds, start);
    snprintf(spec, sizeof spec, "{\"generation\": %lld, \"period_start\": \"%s\"}", gen, start);
    /* the roll entry belongs to the new generation */
    u->generation = gen;
    rc = set_str(&u->period_start, start, err);
    if (rc == DPA_OK)
        rc = append_entry(t, u, "roll", spec, 1, "", fresh, actor, NULL, 0, NULL, err);
    free(fresh);
    if (rc == DPA_OK && rolled)
        *rolled = 1;
    return rc;
}

/* ---- requests ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The remaining budget of config in state (malloc'ed). */
static char *remaining_of(const char *config, const char *state, const char *unit, dpa_error *err)
{
    dpa_filter *f = dpa_ledger_load_filter(config, state, unit, err);
    char *rem = f ? dpa_filter_remaining_json(f) : NULL;
    dpa_filter_free(f);
    return rem;
}

/* The reservation status of entry id of unit: 0 pending, 1 committed, 2 released. */
static dpa_status settled_of(dpa_store *s, const char *unit, long long id, int *settled, dpa_error *err);

/* An idempotent retry: the recorded entry r answers. */
static dpa_status replay(dpa_store *s, const dpa_store_unit *u, const dpa_store_request *r, const char *spec_json,
                         int reserve, dpa_ledger_decision *out, dpa_error *err)
{
    int settled = 0;
    dpa_status rc;
    if (!(!strcmp(r->kind, "request") || !strcmp(r->kind, "reserve")) || strcmp(r->spec, spec_json) ||
        (!strcmp(r->kind, "reserve")) != (reserve != 0))
        return dpa_error_set(err, DPA_EINVAL, "ledger: idempotency key reused with a different request");
    out->accepted = r->accepted;
    out->request_id = r->id;
    snprintf(out->reason, sizeof out->reason, "%s", r->reason);
    out->replayed = 1;
    out->generation = r->generation;
    out->remaining = remaining_of(dpa_store_unit_config(u), r->state_after, u->name, err);
    if (!out->remaining)
        return err && err->status != DPA_OK ? err->status : oom(err);
    if (!r->accepted) {
        snprintf(out->status, sizeof out->status, "rejected");
        return DPA_OK;
    }
    if (strcmp(r->kind, "reserve")) {
        snprintf(out->status, sizeof out->status, "charged");
        return DPA_OK;
    }
    rc = settled_of(s, u->name, r->id, &settled, err);
    snprintf(out->status, sizeof out->status, "%s", settled == 0 ? "reserved" : settled == 1 ? "charged" : "released");
    return rc;
}

typedef struct settle_ctx {
    long long id;
    int settled;
} settle_ctx;

static int settle_row(void *vctx, const dpa_store_request *r)
{
    settle_ctx *c = vctx;
    if (r->ref == c->id && (!strcmp(r->kind, "commit") || !strcmp(r->kind, "release")))
        c->settled = !strcmp(r->kind, "commit") ? 1 : 2;
    return 0;
}

static dpa_status settled_of(dpa_store *s, const char *unit, long long id, int *settled, dpa_error *err)
{
    settle_ctx c = {id, 0};
    dpa_status rc = s->ops->each_request(s, unit, settle_row, &c, err);
    *settled = c.settled;
    return rc;
}

/* Input checks of one item (nothing read or written). */
static dpa_status check_item(dpa_ledger_batch_item *it, dpa_spec **spec)
{
    dpa_error *e = &it->err;
    const char *k = it->opts.idempotency_key;
    dpa_status rc = dpa_ledger_check_unit_name(it->unit, e);
    *spec = NULL;
    if (rc != DPA_OK)
        return rc;
    if (!it->spec_json)
        return dpa_error_set(e, DPA_EINVAL, "ledger: NULL spec");
    if (k && (!*k || strlen(k) > 200))
        return dpa_error_set(e, DPA_EINVAL, "ledger: an idempotency key is 1..200 bytes");
    if (it->opts.actor && (!*it->opts.actor || strlen(it->opts.actor) > DPA_LEDGER_MAX_UNIT))
        return dpa_error_set(e, DPA_EINVAL, "ledger: an actor is 1..%d bytes", DPA_LEDGER_MAX_UNIT);
    *spec = dpa_spec_from_json(it->spec_json, e);
    return *spec ? DPA_OK : e->status;
}

/* Find (or, for an auto-units ledger, add) the locked unit of an item among
 * units[0..n). */
static dpa_store_unit *unit_of(dpa_store_unit *units, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (units[i].name && !strcmp(units[i].name, name))
            return &units[i];
    return NULL;
}

/* Decide and record one item on its locked unit u.  Item-level problems go
 * to it->st / it->err (nothing recorded for it); the return is a storage
 * failure of the whole transaction. */
static dpa_status do_item(entry_tx *t, dpa_ledger_batch_item *it, const dpa_spec *spec, dpa_store_unit *u)
{
    dpa_store *s = t->l->store;
    const char *actor = it->opts.actor ? it->opts.actor : "local";
    const char *kind = it->opts.reserve ? "reserve" : "request";
    dpa_filter_decision dec;
    char *after = NULL, *remaining = NULL;
    dpa_status rc;
    long long id = 0;
    if (lifecycle_is(u, "frozen") || lifecycle_is(u, "archived")) {
        it->st = dpa_error_set(&it->err, DPA_EINVAL, "ledger: unit \"%s\" is %s", u->name,
                               lifecycle_is(u, "frozen") ? "frozen" : "archived");
        return DPA_OK;
    }
    rc = roll_if_due(t, u, actor, NULL, &it->err);
    if (rc != DPA_OK)
        return rc;
    if (it->opts.idempotency_key) {
        dpa_store_request prev;
        int found = 0;
        rc = tx_flush(t, &it->err); /* the batch's earlier entries may hold the key */
        if (rc == DPA_OK)
            rc = s->ops->get_request(s, u->name, 0, it->opts.idempotency_key, &prev, &found, &it->err);
        if (rc != DPA_OK)
            return rc;
        if (found) {
            it->st = replay(s, u, &prev, it->spec_json, it->opts.reserve, &it->out, &it->err);
            dpa_store_request_clear(&prev);
            if (it->st == DPA_ESTORAGE || it->st == DPA_ENOMEM)
                return it->st;
            return DPA_OK;
        }
    }
    rc = dpa_ledger_decide(&t->l->worker, dpa_store_unit_config(u), u->state, spec, strlen(it->spec_json),
                           t->l->decision_limit, u->name, &dec, &after, &remaining, &it->err);
    if (rc == DPA_ESTORAGE || rc == DPA_ENOMEM)
        return rc;
    if (rc != DPA_OK) {
        it->st = rc;
        return DPA_OK;
    }
    rc = append_entry(t, u, kind, it->spec_json, dec.accepted, dec.reason, dec.accepted ? after : NULL, actor,
                      it->opts.idempotency_key, 0, &id, &it->err);
    free(after);
    if (rc != DPA_OK) {
        free(remaining);
        return rc;
    }
    it->out.accepted = dec.accepted;
    it->out.request_id = id;
    snprintf(it->out.reason, sizeof it->out.reason, "%s", dec.reason);
    it->out.remaining = remaining;
    it->out.replayed = 0;
    snprintf(it->out.status, sizeof it->out.status, "%s",
             !dec.accepted ? "rejected" : it->opts.reserve ? "reserved" : "charged");
    it->out.generation = u->generation;
    it->st = DPA_OK;
    return DPA_OK;
}

dpa_status dpa_ledger_request_batch(dpa_ledger *l, dpa_ledger_batch_item *items, size_t n, dpa_error *err)
{
    entry_tx t;
    dpa_spec **specs;
    const char **names;
    dpa_store_unit *units;
    size_t nnames = 0;
    dpa_status rc = DPA_OK;
    if (!l || (!items && n))
        return dpa_error_set(err, DPA_EINVAL, "ledger: NULL argument");
    if (l->readonly)
        return dpa_ledger_read_only(err);
    if (n == 0)
        return DPA_OK;
    specs = calloc(n, sizeof *specs);
    names = calloc(n, sizeof *names);
    units = calloc(n, sizeof *units);
    if (!specs || !names || !units) {
        free(specs);
        free(names);
        free(units);
        return oom(err);
    }
    for (size_t i = 0; i < n; i++) {
        memset(&items[i].out, 0, sizeof items[i].out);
        dpa_error_clear(&items[i].err);
        items[i].st = check_item(&items[i], &specs[i]);
        if (items[i].st == DPA_OK)
            names[nnames++] = items[i].unit;
    }
    /* lock the units in name order, then the head (chain_request): the order
     * of every writer */
    qsort(names, nnames, sizeof *names, cmp_str);
    tx_init(&t, l);
    rc = l->store->ops->begin_write(l->store, err);
    {
        size_t nuniq = 0, k = 0;
        for (size_t i = 0; i < nnames; i++) /* distinct, in name order */
            if (i == 0 || strcmp(names[i], names[i - 1]))
                names[nuniq++] = names[i];
        if (rc == DPA_OK && nuniq && l->store->ops->lock_units) {
            rc = l->store->ops->lock_units(l->store, names, nuniq, units, &k, err);
        } else {
            for (size_t i = 0; rc == DPA_OK && i < nuniq; i++) {
                int found = 0;
                rc = l->store->ops->get_unit(l->store, names[i], 1, &units[k], &found, err);
                k += found;
            }
        }
        /* an auto-units ledger: the missing ones created (after the locks, before the head's) */
        for (size_t i = 0; rc == DPA_OK && l->auto_units && i < nuniq; i++)
            if (!unit_of(units, k, names[i])) {
                rc = dpa_ledger_new_unit_row(names[i], l->default_filter, &units[k], err);
                if (rc == DPA_OK)
                    rc = dpa_ledger_chain_unit(l->store, &t.key, &units[k], err);
                k += rc == DPA_OK;
            }
    }
    for (size_t i = 0; rc == DPA_OK && i < n; i++) {
        dpa_store_unit *u;
        if (items[i].st != DPA_OK)
            continue;
        u = unit_of(units, n, items[i].unit);
        if (!u)
            items[i].st = dpa_error_set(&items[i].err, DPA_EINVAL, "ledger: unknown unit \"%s\"", items[i].unit);
        else
            rc = do_item(&t, &items[i], specs[i], u);
    }
    rc = tx_finish(&t, rc, err);
    if (rc == DPA_OK)
        rc = l->store->ops->commit(l->store, err);
    else
        l->store->ops->rollback(l->store);
    for (size_t i = 0; i < n; i++) {
        dpa_spec_free(specs[i]);
        dpa_store_unit_clear(&units[i]);
        if (rc != DPA_OK) {
            free(items[i].out.remaining); /* dpa_ledger_decision_clear, without a call up to ledger.c */
            memset(&items[i].out, 0, sizeof items[i].out);
            items[i].st = rc;
            items[i].err = err ? *err : items[i].err;
            if (!err)
                dpa_error_set(&items[i].err, rc, "ledger: the batch's transaction failed");
        }
    }
    free(specs);
    free(names);
    free(units);
    return rc;
}

dpa_status dpa_ledger_request_ex(dpa_ledger *l, const char *unit, const char *spec_json,
                                 const dpa_ledger_request_opts *o, dpa_ledger_decision *out, dpa_error *err)
{
    dpa_ledger_batch_item it;
    dpa_status rc;
    if (out)
        memset(out, 0, sizeof *out);
    if (!l || !out)
        return dpa_error_set(err, DPA_EINVAL, "ledger: NULL argument");
    memset(&it, 0, sizeof it);
    it.unit = unit;
    it.spec_json = spec_json;
    if (o)
        it.opts = *o;
    rc = dpa_ledger_request_batch(l, &it, 1, err);
    if (rc != DPA_OK)
        return rc;
    if (it.st != DPA_OK) {
        if (err)
            *err = it.err;
        return it.st;
    }
    *out = it.out;
    return DPA_OK;
}

/* ---- one-unit entries: reservations, lifecycle, top-up, roll ---- */

/* begin_write, the unit locked (*u), its roll if due. */
static dpa_status begin_unit(entry_tx *t, dpa_ledger *l, const char *unit, const char *actor, dpa_store_unit *u,
                             dpa_error *err)
{
    int found = 0;
    dpa_status rc;
    memset(u, 0, sizeof *u);
    if (!l)
        return dpa_error_set(err, DPA_EINVAL, "ledger: NULL ledger");
    if (l->readonly)
        return dpa_ledger_read_only(err);
    rc = dpa_ledger_check_unit_name(unit, err);
    if (rc == DPA_OK && actor && (!*actor || strlen(actor) > DPA_LEDGER_MAX_UNIT))
        rc = dpa_error_set(err, DPA_EINVAL, "ledger: an actor is 1..%d bytes", DPA_LEDGER_MAX_UNIT);
    if (rc != DPA_OK)
        return rc;
    tx_init(t, l);
    rc = l->store->ops->begin_write(l->store, err);
    if (rc != DPA_OK)
        return rc;
    rc = l->store->ops->get_unit(l->store, unit, 1, u, &found, err);
    if (rc == DPA_OK && !found)
        rc = dpa_error_set(err, DPA_EINVAL, "ledger: unknown unit \"%s\"", unit);
    if (rc == DPA_OK && !lifecycle_is(u, "frozen"))
        rc = roll_if_due(t, u, actor, NULL, err);
    if (rc != DPA_OK) {
        (void)tx_finish(t, rc, err); /* frees the lists only */
        l->store->ops->rollback(l->store);
        dpa_store_unit_clear(u);
    }
    return rc;
}

/* Commit when rc is DPA_OK, else roll back; the unit freed. */
static dpa_status end_unit(entry_tx *t, dpa_ledger *l, dpa_store_unit *u, dpa_status rc, dpa_error *err)
{
    rc = tx_finish(t, rc, err);
    if (rc == DPA_OK)
        rc = l->store->ops->commit(l->store, err);
    else
        l->store->ops->rollback(l->store);
    dpa_store_unit_clear(u);
    return rc;
}

typedef struct charges_ctx {
    dpa_ledger_charges L;
    int oom;
} charges_ctx;

static int charge_row(void *vctx, const dpa_store_request *r)
{
    charges_ctx *c = vctx;
    if (dpa_ledger_charges_note(&c->L, r) != 0) {
        c->oom = 1;
        return 1;
    }
    return 0;
}

dpa_status dpa_ledger_reservation(dpa_ledger *l, const char *unit, long long request_id, const char *op,
                                  const char *actor, dpa_error *err)
{
    entry_tx t;
    dpa_store_unit u;
    charges_ctx c;
    dpa_ledger_charge *ch;
    char *after = NULL;
    int release;
    dpa_status rc;
    if (!op || (strcmp(op, "commit") && strcmp(op, "release")))
        return dpa_error_set(err, DPA_EINVAL, "ledger: a reservation is settled by \"commit\" or \"release\"");
    release = !strcmp(op, "release");
    rc = begin_unit(&t, l, unit, actor, &u, err);
    if (rc != DPA_OK)
        return rc;
    memset(&c, 0, sizeof c);
    if (lifecycle_is(&u, "archived"))
        rc = dpa_error_set(err, DPA_EINVAL, "ledger: unit \"%s\" is archived", unit);
    if (rc == DPA_OK)
        rc = tx_flush(&t, err); /* a roll just linked */
    if (rc == DPA_OK)
        rc = l->store->ops->each_request(l->store, unit, charge_row, &c, err);
    if (rc == DPA_OK && c.oom)
        rc = oom(err);
    ch = rc == DPA_OK ? dpa_ledger_charges_find(&c.L, request_id) : NULL;
    if (rc == DPA_OK && (!ch || !ch->reserve || ch->settled != 0))
        rc = dpa_error_set(err, DPA_EINVAL, "ledger: request %lld is not a pending reservation of unit \"%s\"",
                           request_id, unit);
    if (rc == DPA_OK && release)
        rc = dpa_ledger_charges_replay(&c.L, dpa_store_unit_config(&u), request_id, &after, err);
    if (rc == DPA_OK)
        rc = append_entry(&t, &u, op, "null", 1, "", after, actor, NULL, request_id, NULL, err);
    free(after);
    dpa_ledger_charges_clear(&c.L);
    return end_unit(&t, l, &u, rc, err);
}

dpa_status dpa_ledger_unit_lifecycle(dpa_ledger *l, const char *unit, const char *op, const char *actor,
                                     const char *reason, dpa_error *err)
{
    entry_tx t;
    dpa_store_unit u;
    const char *to;
    dpa_status rc;
    if (!op || !(!strcmp(op, "freeze") || !strcmp(op, "unfreeze") || !strcmp(op, "archive")))
        return dpa_error_set(err, DPA_EINVAL, "ledger: a lifecycle operation is \"freeze\", \"unfreeze\" or "
                             "\"archive\"");
    if (reason && strlen(reason) > 1000)
        return dpa_error_set(err, DPA_EINVAL, "ledger: a reason is at most 1000 bytes");
    rc = begin_unit(&t, l, unit, actor, &u, err);
    if (rc != DPA_OK)
        return rc;
    to = !strcmp(op, "freeze") ? "frozen" : !strcmp(op, "unfreeze") ? "active" : "archived";
    if (lifecycle_is(&u, "archived"))
        rc = dpa_error_set(err, DPA_EINVAL, "ledger: unit \"%s\" is archived (for good): it cannot be %s",
                           unit, !strcmp(op, "archive") ? "archived again" : !strcmp(op, "freeze") ? "frozen"
                                                                                                   : "unfrozen");
    else if (!strcmp(op, "freeze") && lifecycle_is(&u, "frozen"))
        rc = dpa_error_set(err, DPA_EINVAL, "ledger: unit \"%s\" is already frozen", unit);
    else if (!strcmp(op, "unfreeze") && !lifecycle_is(&u, "frozen"))
        rc = dpa_error_set(err, DPA_EINVAL, "ledger: unit \"%s\" is not frozen", unit);
    if (rc == DPA_OK)
        rc = set_str(&u.lifecycle, to, err);
    if (rc == DPA_OK)
        rc = append_entry(&t, &u, op, "null", 1, reason, NULL, actor, NULL, 0, NULL, err);
    return end_unit(&t, l, &u, rc, err);
}

dpa_status dpa_ledger_unit_topup(dpa_ledger *l, const char *unit, const char *filter_config, const char *actor,
                                 const char *reason, dpa_error *err)
{
    entry_tx t;
    dpa_store_unit u;
    dpa_filter *f;
    char *canon = NULL;
    dpa_status rc;
    if (!filter_config)
        return dpa_error_set(err, DPA_EINVAL, "ledger: a top-up needs the new filter configuration");
    if (reason && strlen(reason) > 1000)
        return dpa_error_set(err, DPA_EINVAL, "ledger: a reason is at most 1000 bytes");
    f = dpa_filter_new_json(filter_config, err);
    if (!f)
        return err ? err->status : DPA_EINVAL;
    canon = dpa_filter_config_json(f);
    dpa_filter_free(f);
    if (!canon)
        return oom(err);
    rc = begin_unit(&t, l, unit, actor, &u, err);
    if (rc != DPA_OK) {
        free(canon);
        return rc;
    }
    if (lifecycle_is(&u, "archived"))
        rc = dpa_error_set(err, DPA_EINVAL, "ledger: unit \"%s\" is archived (for good): it cannot be topped up",
                           unit);
    if (rc == DPA_OK)
        rc = dpa_ledger_topup_check(dpa_store_unit_config(&u), canon, err);
    if (rc == DPA_OK) { /* the spent state must load under the new budget */
        dpa_filter *g = dpa_ledger_load_filter(canon, u.state, unit, err);
        rc = g ? DPA_OK : (err ? err->status : DPA_EINVAL);
        dpa_filter_free(g);
    }
    if (rc == DPA_OK)
        rc = set_str(&u.filter_now, canon, err);
    if (rc == DPA_OK)
        rc = append_entry(&t, &u, "topup", canon, 1, reason, NULL, actor, NULL, 0, NULL, err);
    free(canon);
    return end_unit(&t, l, &u, rc, err);
}

dpa_status dpa_ledger_unit_roll(dpa_ledger *l, const char *unit, const char *actor, dpa_error *err)
{
    entry_tx t;
    dpa_store_unit u;
    dpa_status rc = begin_unit(&t, l, unit, actor, &u, err);
    if (rc != DPA_OK)
        return rc;
    return end_unit(&t, l, &u, DPA_OK, err);
}

/* ---- top-up rule ---- */

/* The filters whose state is what they spent (sums, products of the
 * queries' costs; src/filter/filter_scalar.c, filter_gdp.c): a larger budget
 * leaves the spent state meaningful.  gdp-residue keeps the remaining mu
 * (RF Thm 5) and the natural filters a residue of the budget (RF Alg 2): their
 * state depends on the budget, so a top-up is refused for them. */
static const char *const TOPUP_KINDS[] = {"pure", "basic", "rdp", "zcdp", "gdp"};

/* Each number of `a` at most the matching one of `b` (arrays elementwise;
 * other values equal). */
static int not_smaller(json_t *a, json_t *b, const char *name, dpa_error *err)
{
    if (json_is_number(a) && json_is_number(b)) {
        if (json_number_value(b) < json_number_value(a)) {
            dpa_error_set(err, DPA_EINVAL, "ledger: a top-up cannot lower \"%s\" (%.17g -> %.17g)", name,
                          json_number_value(a), json_number_value(b));
            return 0;
        }
        return 1;
    }
    if (json_is_array(a) && json_is_array(b) && json_array_size(a) == json_array_size(b)) {
        for (size_t i = 0; i < json_array_size(a); i++)
            if (!not_smaller(json_array_get(a, i), json_array_get(b, i), name, err))
                return 0;
        return 1;
    }
    dpa_error_set(err, DPA_EINVAL, "ledger: a top-up keeps \"%s\" of the same shape", name);
    return 0;
}

dpa_status dpa_ledger_topup_check(const char *old_config, const char *new_config, dpa_error *err)
{
    json_t *a = json_loads(old_config, 0, NULL), *b = json_loads(new_config, 0, NULL);
    const char *ka = json_string_value(json_object_get(a, "filter"));
    const char *kb = json_string_value(json_object_get(b, "filter"));
    const char *name;
    json_t *v;
    dpa_status rc = DPA_OK;
    int allowed = 0;
    if (!a || !b || !ka || !kb)
        rc = dpa_error_set(err, DPA_EINVAL, "ledger: a top-up needs two filter configurations");
    else if (strcmp(ka, kb))
        rc = dpa_error_set(err, DPA_EINVAL, "ledger: a top-up keeps the filter kind (\"%s\", not \"%s\")", ka, kb);
    for (size_t i = 0; rc == DPA_OK && i < sizeof TOPUP_KINDS / sizeof *TOPUP_KINDS; i++)
        allowed |= !strcmp(ka, TOPUP_KINDS[i]);
    if (rc == DPA_OK && !allowed)
        rc = dpa_error_set(err, DPA_EINVAL, "ledger: a \"%s\" filter cannot be topped up: its state depends on its "
                           "budget (it keeps what remains, not what was spent), so a larger budget would not "
                           "carry the spent part over (docs/ledger.md, \"Top-up\")", ka);
    if (rc == DPA_OK)
        json_object_foreach(a, name, v) {
            json_t *w = json_object_get(b, name);
            if (!strcmp(name, "filter"))
                continue;
            if (!w) {
                rc = dpa_error_set(err, DPA_EINVAL, "ledger: a top-up keeps \"%s\"", name);
                break;
            }
            if (!strcmp(name, "order") || !strcmp(name, "report_delta")) {
                if (!json_equal(v, w)) {
                    rc = dpa_error_set(err, DPA_EINVAL, "ledger: a top-up keeps \"%s\" unchanged", name);
                    break;
                }
                continue;
            }
            if (!not_smaller(v, w, name, err)) {
                rc = DPA_EINVAL;
                break;
            }
        }
    if (rc == DPA_OK && json_object_size(b) != json_object_size(a))
        rc = dpa_error_set(err, DPA_EINVAL, "ledger: a top-up keeps the configuration's parameters");
    json_decref(a);
    json_decref(b);
    return rc;
}
