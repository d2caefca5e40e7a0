/* The budget service's group commit.  One fsync per decision would cap a
 * ledger at a few hundred decisions per second (the hash chain's head is
 * one row, so commits are serialized); instead the worker threads queue
 * their decisions and one committer thread drains up to
 * DPA_SERVICE_BATCH_MAX of them into one dpa_ledger_request_batch call (one
 * transaction, one fsync).  No lock is held while a batch is decided: the
 * queue's mutex guards only the list, and the batch runs on the committer's
 * own dpa_ledger.  Each caller waits on its own condition variable, signalled
 * when its item is decided.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdlib.h>
#include <string.h>
#include "service_internal.h"

static void *committer(void *arg)
{
    svc_queue *q = arg;
    svc_job *jobs[DPA_SERVICE_BATCH_MAX];
    dpa_ledger_batch_item items[DPA_SERVICE_BATCH_MAX];
    for (;;) {
        size_t n = 0, i;
        dpa_error err = {0};
        dpa_status st;
        pthread_mutex_lock(&q->mu);
        while (!q->head && !q->stopping)
            pthread_cond_wait(&q->cv, &q->mu);
        if (!q->head) { /* stopping and nothing left */
            pthread_mutex_unlock(&q->mu);
            return NULL;
        }
        while (q->head && n < DPA_SERVICE_BATCH_MAX) {
            jobs[n++] = q->head;
            q->head = q->head->next;
        }
        if (!q->head)
            q->tail = NULL;
        pthread_mutex_unlock(&q->mu);

        for (i = 0; i < n; i++)
            items[i] = jobs[i]->item;
        st = dpa_ledger_request_batch(q->ledger, items, n, &err);
        atomic_fetch_add(&q->batches, 1);
        atomic_fetch_add(&q->batched, (long long)n);
        pthread_mutex_lock(&q->mu);
        for (i = 0; i < n; i++) {
            jobs[i]->item = items[i];
            if (st != DPA_OK && jobs[i]->item.st == DPA_OK) { /* the storage failed: nothing recorded */
                jobs[i]->item.st = st;
                jobs[i]->item.err = err;
            }
            jobs[i]->done = 1;
            pthread_cond_signal(&jobs[i]->cv);
        }
        pthread_mutex_unlock(&q->mu);
    }
}

dpa_status svc_queue_start(svc_queue *q, dpa_ledger *l, dpa_error *err)
{
    memset(q, 0, sizeof *q);
    q->ledger = l;
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->cv, NULL);
    if (pthread_create(&q->thread, NULL, committer, q) != 0) {
        pthread_mutex_destroy(&q->mu);
        pthread_cond_destroy(&q->cv);
        return dpa_error_set(err, DPA_ENOMEM, "cannot start the committer thread");
    }
    q->started = 1;
    return DPA_OK;
}

void svc_queue_decide(svc_queue *q, svc_job *job)
{
    pthread_cond_init(&job->cv, NULL);
    job->done = 0;
    job->next = NULL;
    pthread_mutex_lock(&q->mu);
    if (q->tail)
        q->tail->next = job;
    else
        q->head = job;
    q->tail = job;
    pthread_cond_signal(&q->cv);
    while (!job->done)
        pthread_cond_wait(&job->cv, &q->mu);
    pthread_mutex_unlock(&q->mu);
    pthread_cond_destroy(&job->cv);
}

void svc_queue_stop(svc_queue *q)
{
    if (!q->started)
        return;
    pthread_mutex_lock(&q->mu);
    q->stopping = 1;
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->mu);
    pthread_join(q->thread, NULL);
    pthread_mutex_destroy(&q->mu);
    pthread_cond_destroy(&q->cv);
    dpa_ledger_close(q->ledger);
    q->ledger = NULL;
    q->started = 0;
}
