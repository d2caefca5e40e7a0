/* A decision against a snapshot of a unit's state, under a time limit.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The ledger decides outside any lock (ledger.c commits the outcome with a
 * version check), so a slow decision delays only its own request.  A
 * decision that takes longer than the limit is abandoned: the request is
 * refused as too costly to decide and nothing is recorded or charged.  The
 * filter code cannot be interrupted, so the decision runs on a worker
 * thread that owns copies of its inputs; an abandoned worker finishes in
 * the background and frees its job itself (the last of caller and worker to
 * let go frees it). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "dpacct/filter.h"
#include "ledger/ledger_internal.h"

typedef struct decide_job {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int refs;          /* 2 while both hold it */
    int done;
    /* inputs (owned) */
    char *config, *state;
    dpa_spec *spec;
    /* outputs */
    dpa_status rc;
    dpa_error err;
    dpa_filter_decision dec;
    char *after, *remaining;
} decide_job;

static void job_release(decide_job *j)
{
    int last;
    pthread_mutex_lock(&j->mu);
    last = --j->refs == 0;
    pthread_mutex_unlock(&j->mu);
    if (!last)
        return;
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->cv);
    free(j->config);
    free(j->state);
    dpa_spec_free(j->spec);
    free(j->after);
    free(j->remaining);
    free(j);
}

/* The decision itself (on whichever thread). */
static void decide_now(decide_job *j)
{
    dpa_filter *f = dpa_filter_new_json(j->config, &j->err);
    j->rc = DPA_OK;
    if (!f) {
        j->rc = j->err.status == DPA_ENOMEM ? DPA_ENOMEM : DPA_ESTORAGE;
        return;
    }
    if (dpa_filter_set_state_json(f, j->state, &j->err) != DPA_OK)
        j->rc = j->err.status == DPA_ENOMEM ? DPA_ENOMEM : DPA_ESTORAGE;
    if (j->rc == DPA_OK)
        j->rc = dpa_filter_request(f, j->spec, &j->dec, &j->err);
    if (j->rc == DPA_OK) {
        j->after = dpa_filter_state_json(f);
        j->remaining = dpa_filter_remaining_json(f);
        if (!j->after || !j->remaining)
            j->rc = dpa_error_set(&j->err, DPA_ENOMEM, "ledger: out of memory");
    }
    dpa_filter_free(f);
}

static void *worker(void *arg)
{
    decide_job *j = arg;
    decide_now(j);
    pthread_mutex_lock(&j->mu);
    j->done = 1;
    pthread_cond_signal(&j->cv);
    pthread_mutex_unlock(&j->mu);
    job_release(j);
    return NULL;
}

dpa_status dpa_ledger_decide(const char *config, const char *state, const dpa_spec *spec, double limit_s,
                             const char *unit, dpa_filter_decision *dec, char **after, char **remaining,
                             dpa_error *err)
{
    decide_job *j = calloc(1, sizeof *j);
    pthread_t th;
    pthread_attr_t attr;
    int finished;
    dpa_status rc;
    *after = *remaining = NULL;
    if (!j)
        return dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
    pthread_mutex_init(&j->mu, NULL);
    pthread_cond_init(&j->cv, NULL);
    j->refs = 1;
    j->config = strdup(config);
    j->state = strdup(state);
    j->spec = dpa_spec_copy(spec);
    if (!j->config || !j->state || !j->spec) {
        job_release(j);
        return dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
    }
    if (!(limit_s > 0)) {
        decide_now(j);
        finished = 1;
    } else {
        j->refs = 2;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&th, &attr, worker, j) != 0) {
            j->refs = 1;
            decide_now(j); /* no thread: decide here, without the limit */
        } else {
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_sec += (time_t)limit_s;
            until.tv_nsec += (long)((limit_s - (double)(time_t)limit_s) * 1e9);
            if (until.tv_nsec >= 1000000000L) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000L;
            }
            pthread_mutex_lock(&j->mu);
            while (!j->done && pthread_cond_timedwait(&j->cv, &j->mu, &until) != ETIMEDOUT)
                ;
            pthread_mutex_unlock(&j->mu);
        }
        pthread_attr_destroy(&attr);
        pthread_mutex_lock(&j->mu);
        finished = j->done || j->refs == 1;
        pthread_mutex_unlock(&j->mu);
    }
    if (!finished) {
        job_release(j); /* the worker frees it when it ends */
        return dpa_error_set(err, DPA_EUNSUPPORTED, "ledger: too costly to decide: the decision for unit \"%s\" "
                             "took longer than the limit of %g s; refused, nothing was recorded or charged "
                             "(raise the limit, or split the request)", unit, limit_s);
    }
    rc = j->rc;
    if (rc != DPA_OK) {
        if (err) {
            *err = j->err;
            if (rc == DPA_ESTORAGE)
                dpa_error_set(err, DPA_ESTORAGE, "ledger: stored filter or state of unit \"%s\" does not load: %s",
                              unit, j->err.message);
        }
    } else {
        *dec = j->dec;
        *after = j->after;
        *remaining = j->remaining;
        j->after = j->remaining = NULL;
    }
    job_release(j);
    return rc;
}
