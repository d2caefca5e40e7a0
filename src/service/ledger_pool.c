/* The budget service's pool of ledger handles: a dpa_ledger is used by one
 * thread at a time, so each worker thread borrows one for the length of a
 * request and gives it back (the committer keeps its own, commit_queue.c).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdlib.h>
#include "service_internal.h"

dpa_ledger *svc_ledger_open(const dpa_service_opts *o, dpa_error *err)
{
    dpa_ledger *l = dpa_ledger_open_keyed(o->ledger, 0, o->key, o->key_len, err);
    if (l && o->decision_limit >= 0 && dpa_ledger_set_decision_limit(l, o->decision_limit, err) != DPA_OK) {
        dpa_ledger_close(l);
        return NULL;
    }
    return l;
}

dpa_status svc_pool_init(svc_pool *p, size_t n, const dpa_service_opts *o, dpa_error *err)
{
    p->n = p->nfree = 0;
    p->all = calloc(n, sizeof *p->all);
    p->free_list = calloc(n, sizeof *p->free_list);
    if (!p->all || !p->free_list) {
        free(p->all);
        free(p->free_list);
        p->all = p->free_list = NULL;
        return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    for (; p->n < n; p->n++) {
        p->all[p->n] = svc_ledger_open(o, err);
        if (!p->all[p->n]) {
            svc_pool_clear(p);
            return err ? err->status : DPA_ESTORAGE;
        }
        p->free_list[p->nfree++] = p->all[p->n];
    }
    return DPA_OK;
}

dpa_ledger *svc_pool_get(svc_pool *p)
{
    dpa_ledger *l;
    pthread_mutex_lock(&p->mu);
    while (p->nfree == 0)
        pthread_cond_wait(&p->cv, &p->mu);
    l = p->free_list[--p->nfree];
    pthread_mutex_unlock(&p->mu);
    return l;
}

void svc_pool_put(svc_pool *p, dpa_ledger *l)
{
    if (!l)
        return;
    pthread_mutex_lock(&p->mu);
    p->free_list[p->nfree++] = l;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

void svc_pool_clear(svc_pool *p)
{
    size_t i;
    if (!p->all)
        return;
    for (i = 0; i < p->n; i++)
        dpa_ledger_close(p->all[i]);
    free(p->all);
    free(p->free_list);
    p->all = p->free_list = NULL;
    p->n = p->nfree = 0;
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
}
