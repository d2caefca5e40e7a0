/* The upgrade of a format-1 ledger (no hash chain) to the current format.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * One write transaction: add the chain's columns, write the genesis from
 * the stored metadata, rewrite every unit (in name order, before any
 * request) and every request (in id order) with its link, set the format
 * tag, and verify (the replay as before, and the new chain) before the
 * commit: a ledger that does not replay is refused, since chaining it would
 * vouch for tampering already there.
 *
 * The filters' states changed format with the chain (exact budgets kept as
 * decimals, docs/filters.md), so the stored states of a format-1 ledger are
 * first written anew (restate): each unit's history is replayed as it was
 * recorded with the current filter.  A recorded acceptance must be accepted
 * again (the current filters only spend less: their budgets are exact where
 * the earlier ones rounded); a recorded rejection leaves the state as it was,
 * and one that the current filter would accept (a query that an earlier
 * rounding refused) stops the upgrade with its request id: verify, which
 * replays decisions, could not vouch for it. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include "dpacct/filter.h"
#include "dpacct/ledger.h"
#include "ledger/chain.h"
#include "ledger/ledger_internal.h"
#include "ledger/store.h"

typedef struct upgrade_ctx {
    dpa_store_request *r;
    size_t n, cap;
    int oom;
} upgrade_ctx;

static char *dup(const char *s, int *oom)
{
    char *d = strdup(s ? s : "");
    if (!d)
        *oom = 1;
    return d;
}

static int take_request(void *vctx, const dpa_store_request *r)
{
    upgrade_ctx *c = vctx;
    dpa_store_request *d;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 64;
        dpa_store_request *p = realloc(c->r, cap * sizeof *p);
        if (!p) {
            c->oom = 1;
            return 1;
        }
        c->r = p;
        c->cap = cap;
    }
    d = &c->r[c->n++];
    memset(d, 0, sizeof *d);
    d->id = r->id;
    d->accepted = r->accepted;
    d->unit = dup(r->unit, &c->oom);
    d->time = dup(r->time, &c->oom);
    d->spec = dup(r->spec, &c->oom);
    d->reason = dup(r->reason, &c->oom);
    d->state_before = dup(r->state_before, &c->oom);
    d->state_after = dup(r->state_after, &c->oom);
    return c->oom;
}

/* Replay (and, after the chaining, the chain): DPA_EINVAL with the first
 * problem if the ledger does not verify. */
static dpa_status must_verify(dpa_store *s, const dpa_chain_key *key, const char *when, dpa_error *err)
{
    int ok = 0;
    char *report = NULL;
    dpa_status rc = dpa_ledger_verify_store(s, key, NULL, &ok, &report, err);
    if (rc == DPA_OK && !ok) {
        json_t *rep = json_loads(report, 0, NULL);
        json_t *p0 = json_array_get(json_object_get(rep, "problems"), 0);
        rc = dpa_error_set(err, DPA_EINVAL, "ledger upgrade: %s (unit \"%s\": %s); nothing was changed", when,
                           p0 ? json_string_value(json_object_get(p0, "unit")) : "?",
                           p0 ? json_string_value(json_object_get(p0, "problem")) : "?");
        json_decref(rep);
    }
    free(report);
    return rc;
}

/* *slot (a malloc'd state) replaced by f's state; 0 if out of memory. */
static int put_state(char **slot, const dpa_filter *f)
{
    char *st = dpa_filter_state_json(f);
    if (!st)
        return 0;
    free(*slot);
    *slot = st;
    return 1;
}

/* One unit's states written anew by replaying its recorded history (see the
 * top of this file). */
static dpa_status restate_unit(dpa_store_unit *u, upgrade_ctx *c, dpa_error *err)
{
    dpa_status rc = DPA_OK;
    dpa_filter *f = dpa_filter_new_json(u->filter, err);
    if (!f)
        return err ? err->status : DPA_EINVAL;
    if (!put_state(&u->initial_state, f))
        rc = dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
    for (size_t i = 0; rc == DPA_OK && i < c->n; i++) {
        dpa_store_request *r = &c->r[i];
        dpa_filter *g;
        dpa_spec *q;
        dpa_filter_decision d;
        if (strcmp(r->unit, u->name))
            continue;
        if (!put_state(&r->state_before, f)) {
            rc = dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
            break;
        }
        q = dpa_spec_from_json(r->spec, err);
        g = q ? dpa_filter_copy(f, err) : NULL;
        rc = g ? dpa_filter_request(g, q, &d, err) : (err ? err->status : DPA_EINVAL);
        dpa_spec_free(q);
        if (rc == DPA_OK && r->accepted && !d.accepted)
            rc = dpa_error_set(err, DPA_EINVAL, "ledger upgrade: request %lld (unit \"%s\") was accepted and "
                               "the current filter rejects it (%s); nothing was changed", r->id, u->name, d.reason);
        else if (rc == DPA_OK && !r->accepted && d.accepted)
            rc = dpa_error_set(err, DPA_EINVAL, "ledger upgrade: request %lld (unit \"%s\") was rejected and the "
                               "current filter, whose budgets are exact, would accept it: its history cannot be "
                               "replayed as recorded; keep the version that wrote it for this ledger; nothing was "
                               "changed", r->id, u->name);
        if (rc == DPA_OK && r->accepted) {
            dpa_filter *t = f;
            f = g;
            g = t;
        }
        dpa_filter_free(g);
        if (rc == DPA_OK && !put_state(&r->state_after, f))
            rc = dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
    }
    if (rc == DPA_OK && !put_state(&u->state, f))
        rc = dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
    dpa_filter_free(f);
    return rc;
}

dpa_status dpa_ledger_upgrade(const char *location, const void *keydata, size_t key_len, dpa_error *err)
{
    dpa_chain_key key = {keydata, keydata ? key_len : 0};
    dpa_store *s;
    upgrade_ctx c;
    dpa_ledger_unit_list units = {0};
    char *format = NULL;
    const char *meta_keys[4] = {"default_filter", "auto_units", "created", "dpacct_version"};
    char *mv[DPA_CHAIN_NMETA] = {0};
    dpa_status rc = dpa_ledger_store_open(location, DPA_STORE_UPGRADE, &s, err);
    if (rc != DPA_OK)
        return rc;
    memset(&c, 0, sizeof c);
    rc = s->ops->begin_write(s, err);
    if (rc == DPA_OK)
        rc = s->ops->get_meta(s, "format", &format, err);
    if (rc == DPA_OK && !dpa_store_format_upgradable(format))
        rc = dpa_error_set(err, DPA_EINVAL, "ledger upgrade: the ledger is of format \"%s\", not \"%s\" or "
                           "\"%s\": nothing to upgrade", format ? format : "?", DPA_LEDGER_FORMAT_1,
                           DPA_LEDGER_FORMAT_2);
    if (rc == DPA_OK)
        rc = s->ops->upgrade_tables(s, strcmp(format, DPA_LEDGER_FORMAT_1) ? 2 : 1, err);
    /* the replay alone first: the chain columns are empty */
    if (rc == DPA_OK)
        rc = s->ops->each_unit(s, NULL, dpa_ledger_collect_unit, &units, err);
    if (rc == DPA_OK)
        rc = s->ops->each_request(s, NULL, take_request, &c, err);
    if (rc == DPA_OK && (c.oom || units.oom))
        rc = dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
    for (size_t i = 0; rc == DPA_OK && i < units.n; i++)
        rc = restate_unit(&units.u[i], &c, err);
    for (int i = 0; rc == DPA_OK && i < 4; i++)
        rc = s->ops->get_meta(s, meta_keys[i], &mv[i + 1], err);
    if (rc == DPA_OK) {
        mv[0] = strdup(DPA_LEDGER_FORMAT);
        rc = s->ops->set_meta(s, "format", DPA_LEDGER_FORMAT, err);
    }
    if (rc == DPA_OK)
        rc = dpa_ledger_chain_start(s, &key, (const char *const *)mv, err);
    /* rewrite the rows with their links: delete and re-insert in chain order */
    if (rc == DPA_OK)
        rc = s->ops->delete_all(s, err);
    for (size_t i = 0; rc == DPA_OK && i < units.n; i++)
        rc = dpa_ledger_chain_unit(s, &key, &units.u[i], err);
    for (size_t i = 0; rc == DPA_OK && i < c.n; i++)
        rc = dpa_ledger_chain_request(s, &key, &c.r[i], err);
    if (rc == DPA_OK)
        rc = must_verify(s, &key, "the upgraded ledger does not verify", err);
    if (rc == DPA_OK)
        rc = s->ops->commit(s, err);
    else
        s->ops->rollback(s);
    s->ops->close(s);
    for (size_t i = 0; i < c.n; i++)
        dpa_store_request_clear(&c.r[i]);
    for (size_t i = 0; i < units.n; i++)
        dpa_store_unit_clear(&units.u[i]);
    free(c.r);
    free(units.u);
    for (int i = 0; i < DPA_CHAIN_NMETA; i++)
        free(mv[i]);
    free(format);
    return rc;
}
