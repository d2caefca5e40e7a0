/* The charges of a unit's current budget period, for releasing a reservation.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Releasing a reservation removes its charge: the unit's state becomes the
 * full budget charged again with every other accepted request and
 * reservation of the current generation, in history order (a roll starts a
 * generation with the full budget; a released reservation stays out).
 * Removing a charge only leaves more budget, so every other charge is
 * accepted again.  The ledger (entries.c) and verify (verify.c) compute the
 * same replay, so verify checks a release's state_after exactly.  Top-up
 * keeps the spent state of the filters it allows (docs/ledger.md), and the
 * replay uses the configuration in force. */
#include <stdlib.h>
#include <string.h>
#include "dpacct/event.h"
#include "dpacct/filter.h"
#include "ledger/ledger_internal.h"

static int is(const char *kind, const char *what)
{
    return !strcmp(kind ? kind : "request", what);
}

int dpa_ledger_charges_note(dpa_ledger_charges *L, const dpa_store_request *r)
{
    if (is(r->kind, "roll")) {
        for (size_t i = 0; i < L->n; i++)
            free(L->c[i].spec);
        L->n = 0;
        return 0;
    }
    if (is(r->kind, "commit") || is(r->kind, "release")) {
        dpa_ledger_charge *c = dpa_ledger_charges_find(L, r->ref);
        if (c && c->reserve && c->settled == 0)
            c->settled = is(r->kind, "commit") ? 1 : 2;
        return 0;
    }
    if (!(is(r->kind, "request") || is(r->kind, "reserve")) || !r->accepted)
        return 0;
    if (L->n == L->cap) {
        size_t cap = L->cap ? 2 * L->cap : 16;
        dpa_ledger_charge *p = realloc(L->c, cap * sizeof *p);
        if (!p)
            return -1;
        L->c = p;
        L->cap = cap;
    }
    L->c[L->n].id = r->id;
    L->c[L->n].spec = strdup(r->spec);
    L->c[L->n].reserve = is(r->kind, "reserve");
    L->c[L->n].settled = 0;
    if (!L->c[L->n].spec)
        return -1;
    L->n++;
    return 0;
}

dpa_ledger_charge *dpa_ledger_charges_find(dpa_ledger_charges *L, long long id)
{
    for (size_t i = 0; i < L->n; i++)
        if (L->c[i].id == id)
            return &L->c[i];
    return NULL;
}

long long dpa_ledger_charges_pending(const dpa_ledger_charges *L)
{
    long long n = 0;
    for (size_t i = 0; i < L->n; i++)
        n += L->c[i].reserve && L->c[i].settled == 0;
    return n;
}

dpa_status dpa_ledger_charges_replay(const dpa_ledger_charges *L, const char *config, long long without,
                                     char **state, dpa_error *err)
{
    dpa_filter *f = dpa_filter_new_json(config, err);
    dpa_status rc = f ? DPA_OK : (err ? err->status : DPA_EINVAL);
    *state = NULL;
    for (size_t i = 0; rc == DPA_OK && i < L->n; i++) {
        dpa_filter_decision d;
        dpa_spec *q;
        if (L->c[i].id == without || L->c[i].settled == 2)
            continue;
        q = dpa_spec_from_json(L->c[i].spec, err);
        if (!q) {
            rc = err ? err->status : DPA_EINVAL;
            break;
        }
        rc = dpa_filter_request(f, q, &d, err);
        dpa_spec_free(q);
    }
    if (rc == DPA_OK && !(*state = dpa_filter_state_json(f)))
        rc = dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
    dpa_filter_free(f);
    return rc;
}

void dpa_ledger_charges_clear(dpa_ledger_charges *L)
{
    for (size_t i = 0; i < L->n; i++)
        free(L->c[i].spec);
    free(L->c);
    memset(L, 0, sizeof *L);
}
