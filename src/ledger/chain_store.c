/* The ledger's hash chain in the store: the genesis of a new ledger, and a
 * new unit or request linked to the chain's head.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The head (meta "chain_head", chain.h) is read with lock_meta, which on a
 * server backend locks its row until commit: writers extend the chain one
 * at a time, for the few statements of a commit (the decision itself is not
 * under this lock), so the links are in commit order.  A request's id is the
 * head's last request id + 1, taken under the same lock, so request ids
 * follow the chain.
 *
 * A decision (dpa_ledger_chain_commit) is linked before its commit, on the
 * head its snapshot read, and committed by the store's commit_request in
 * one step that checks that the head has not moved (the same effect as the
 * lock, without a round trip to take it); if another request committed
 * meanwhile, the link is computed again on the new head (the decision,
 * which depends only on its unit, stands). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ledger/chain.h"
#include "ledger/ledger_internal.h"
#include "ledger/store.h"

dpa_status dpa_ledger_chain_start(dpa_store *s, const dpa_chain_key *key, const char *const meta[DPA_CHAIN_NMETA],
                                  dpa_error *err)
{
    const char *val[DPA_CHAIN_NMETA];
    char check[DPA_CHAIN_HEX] = "", head[200];
    dpa_chain_head h;
    dpa_status rc = DPA_OK;
    int keyed = key && key->len;
    if (keyed)
        rc = dpa_chain_key_check(key, check, err);
    for (int i = 0; i < DPA_CHAIN_NMETA; i++)
        val[i] = meta[i] ? meta[i] : "";
    val[5] = keyed ? "hmac-sha256" : "sha256";
    val[6] = check;
    /* "format" is the store's own (set by its create or upgrade) */
    for (int i = 1; rc == DPA_OK && i < DPA_CHAIN_NMETA; i++)
        rc = s->ops->set_meta(s, DPA_CHAIN_META_KEYS[i], val[i], err);
    memset(&h, 0, sizeof h);
    if (rc == DPA_OK)
        rc = dpa_chain_genesis(key, val, h.hash, err);
    dpa_chain_head_format(&h, head, sizeof head);
    if (rc == DPA_OK)
        rc = s->ops->set_meta(s, "chain_head", head, err);
    return rc;
}

static dpa_status bad_head(dpa_error *err)
{
    return dpa_error_set(err, DPA_ESTORAGE, "ledger: the chain's head in the metadata is missing or "
                         "malformed (run `dpacct ledger verify`)");
}

/* The head, locked. */
dpa_status dpa_ledger_chain_lock_head(dpa_store *s, dpa_chain_head *h, dpa_error *err)
{
    char *text = NULL;
    dpa_status rc = s->ops->lock_meta(s, "chain_head", &text, err);
    if (rc == DPA_OK && dpa_chain_head_parse(text, h) != 0)
        rc = bad_head(err);
    free(text);
    return rc;
}

dpa_status dpa_ledger_chain_store_head(dpa_store *s, const dpa_chain_head *h, dpa_error *err)
{
    char head[200];
    dpa_chain_head_format(h, head, sizeof head);
    return s->ops->set_meta(s, "chain_head", head, err);
}

dpa_status dpa_ledger_chain_unit(dpa_store *s, const dpa_chain_key *key, dpa_store_unit *u, dpa_error *err)
{
    dpa_chain_head h;
    char link[DPA_CHAIN_HEX];
    dpa_status rc = dpa_ledger_chain_lock_head(s, &h, err);
    if (rc != DPA_OK)
        return rc;
    u->chain_index = h.units + 1;
    u->chain_after = h.last_request;
    rc = dpa_chain_unit(key, h.hash, u, link, err);
    if (rc != DPA_OK)
        return rc;
    free(u->chain);
    u->chain = strdup(link);
    if (!u->chain)
        return dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
    rc = s->ops->insert_unit(s, u, err);
    if (rc != DPA_OK)
        return rc;
    h.units++;
    h.links++;
    memcpy(h.hash, link, sizeof h.hash);
    return dpa_ledger_chain_store_head(s, &h, err);
}

dpa_status dpa_ledger_chain_request(dpa_store *s, const dpa_chain_key *key, dpa_store_request *r,
                                    dpa_error *err)
{
    dpa_chain_head h;
    dpa_status rc = dpa_ledger_chain_lock_head(s, &h, err);
    if (rc == DPA_OK)
        rc = dpa_ledger_chain_append(s, key, &h, r, err);
    if (rc == DPA_OK)
        rc = dpa_ledger_chain_store_head(s, &h, err);
    return rc;
}

dpa_status dpa_ledger_chain_append(dpa_store *s, const dpa_chain_key *key, dpa_chain_head *hp,
                                   dpa_store_request *r, dpa_error *err)
{
    dpa_chain_head h = *hp;
    char link[DPA_CHAIN_HEX];
    char *saved = r->chain;
    dpa_status rc;
    if (r->id == 0)
        r->id = h.last_request + 1;
    else if (r->id <= h.last_request)
        return dpa_error_set(err, DPA_EINVAL, "ledger: request id %lld is not after the chain's last (%lld)",
                             r->id, h.last_request);
    rc = dpa_chain_request(key, h.hash, r, link, err);
    if (rc != DPA_OK)
        return rc;
    r->chain = link;
    rc = s->ops->append_request(s, r, err);
    r->chain = saved;
    if (rc != DPA_OK)
        return rc;
    h.last_request = r->id;
    h.links++;
    memcpy(h.hash, link, sizeof h.hash);
    *hp = h;
    return DPA_OK;
}

/* Attempts of a commit whose head moved each time (another unit's request
 * committed between the head's read and the commit). */
#define HEAD_MAX_ATTEMPTS 10000

dpa_status dpa_ledger_chain_commit(dpa_store *s, const dpa_chain_key *key, const dpa_store_unit *snap,
                                   dpa_store_request *r, const char *head, int *conflict, dpa_error *err)
{
    char *moved = NULL; /* the head the last attempt found */
    dpa_status rc = DPA_OK;
    *conflict = 0;
    for (int attempt = 0; attempt < HEAD_MAX_ATTEMPTS; attempt++) {
        dpa_chain_head h;
        dpa_store_commit c;
        char link[DPA_CHAIN_HEX], after[200];
        char *saved = r->chain, *now = NULL;
        if (!head || dpa_chain_head_parse(head, &h) != 0) {
            rc = bad_head(err);
            break;
        }
        r->id = h.last_request + 1;
        rc = dpa_chain_request(key, h.hash, r, link, err);
        if (rc != DPA_OK)
            break;
        h.last_request = r->id;
        h.links++;
        memcpy(h.hash, link, sizeof h.hash);
        dpa_chain_head_format(&h, after, sizeof after);
        r->chain = link;
        c.snap = snap;
        c.r = r;
        c.head_before = head;
        c.head_after = after;
        rc = s->ops->commit_request(s, &c, conflict, &now, err);
        r->chain = saved;
        free(moved);
        moved = now;
        head = now;
        if (rc != DPA_OK || *conflict != 2)
            break;
    }
    free(moved);
    if (rc == DPA_OK && *conflict == 2)
        rc = dpa_error_set(err, DPA_ESTORAGE, "ledger: the chain's head kept moving during %d attempts",
                           HEAD_MAX_ATTEMPTS);
    return rc;
}
