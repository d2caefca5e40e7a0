/* A decision against a snapshot of a unit's state, under a time limit.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The ledger decides outside any lock (ledger.c commits the outcome with a
 * version check), so a slow decision delays only its own request.  A
 * decision that takes longer than the limit is abandoned: the request is
 * refused as too costly to decide and nothing is recorded or charged.  The
 * filter code cannot be interrupted, so the decision runs on the handle's
 * worker thread (kept between requests) on copies of its inputs; a worker
 * whose decision is abandoned finishes it in the background and then frees
 * the job and itself, and the handle's next decision starts a new worker.
 *
 * A decision known to be cheap runs in the caller's thread instead (the
 * hand-over to the worker and back cost about as much as the decision
 * itself): the filters pure, basic and zcdp charge a query by one walk of
 * its event tree with a closed form per node (src/filter/filter_cost.c,
 * linear in the spec's size; no accountant), so for a spec of at most
 * CHEAP_SPEC_BYTES bytes the decision takes microseconds.  It is still
 * timed, and refused like any other past the limit (nothing recorded). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "dpacct/filter.h"
#include "ledger/ledger_internal.h"

typedef struct decide_job {
    /* inputs (borrowed: the caller waits, or abandons only after copying) */
    char *config, *state;
    dpa_spec *spec;
    /* outputs */
    dpa_status rc;
    dpa_error err;
    dpa_filter_decision dec;
    char *after, *remaining;
} decide_job;

/* A handle's decision thread, kept between requests (starting a thread per
 * decision cost about 0.2 ms, more than a durable decision on a fast disk). */
struct dpa_ledger_worker {
    pthread_mutex_t mu;
    pthread_cond_t cv;   /* a job, a result or quit */
    decide_job *job;     /* the job to run (NULL: idle) */
    int done;            /* the job has run */
    int abandoned;       /* the handle let go: the worker frees everything when it ends */
    int quit;
};

static void job_free(decide_job *j)
{
    if (!j)
        return;
    free(j->config);
    free(j->state);
    dpa_spec_free(j->spec);
    free(j->after);
    free(j->remaining);
    free(j);
}

static void worker_free(dpa_ledger_worker *w)
{
    pthread_mutex_destroy(&w->mu);
    pthread_cond_destroy(&w->cv);
    free(w);
}

/* The largest spec (JSON bytes) whose decision under a walk filter is
 * cheap (a 64 KiB spec has at most a few thousand nodes: well under a
 * millisecond to walk). */
#define CHEAP_SPEC_BYTES 65536

/* 1 if filter f decides a query by a closed-form walk of its event tree. */
static int walk_filter(const dpa_filter *f)
{
    const char *name = dpa_filter_name(f);
    return name && (!strcmp(name, "pure") || !strcmp(name, "basic") || !strcmp(name, "zcdp"));
}

/* The decision itself (on whichever thread), on filter f (built from
 * j->config, taken and freed here) or, if f is NULL, on one built here. */
static void decide_now(decide_job *j, dpa_filter *f)
{
    if (!f)
        f = dpa_filter_new_json(j->config, &j->err);
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

static void *worker_main(void *arg)
{
    dpa_ledger_worker *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        decide_job *j;
        while (!w->quit && (!w->job || w->done))
            pthread_cond_wait(&w->cv, &w->mu);
        if (w->quit)
            break;
        j = w->job;
        pthread_mutex_unlock(&w->mu);
        decide_now(j, NULL);
        pthread_mutex_lock(&w->mu);
        w->done = 1;
        if (w->abandoned) {
            /* the handle gave up on this decision: nobody waits for it */
            job_free(j);
            break;
        }
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    worker_free(w);
    return NULL;
}

static dpa_ledger_worker *worker_start(void)
{
    dpa_ledger_worker *w = calloc(1, sizeof *w);
    pthread_t th;
    pthread_attr_t attr;
    int ok;
    if (!w)
        return NULL;
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    ok = pthread_create(&th, &attr, worker_main, w) == 0;
    pthread_attr_destroy(&attr);
    if (!ok) {
        worker_free(w);
        return NULL;
    }
    return w;
}

void dpa_ledger_worker_stop(dpa_ledger_worker *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->quit = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu); /* the worker frees itself */
}

/* Wait for the worker's job until the deadline: 1 done, 0 timed out. */
static int wait_done(dpa_ledger_worker *w, double limit_s)
{
    struct timespec until;
    int done;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += (time_t)limit_s;
    until.tv_nsec += (long)((limit_s - (double)(time_t)limit_s) * 1e9);
    if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&w->mu);
    while (!w->done && pthread_cond_timedwait(&w->cv, &w->mu, &until) != ETIMEDOUT)
        ;
    done = w->done;
    if (!done)
        w->abandoned = 1; /* under the lock: the worker frees job and itself when it ends */
    pthread_mutex_unlock(&w->mu);
    return done;
}

static double seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static dpa_status too_costly(const char *unit, double limit_s, dpa_error *err)
{
    return dpa_error_set(err, DPA_EUNSUPPORTED, "ledger: too costly to decide: the decision for unit \"%s\" "
                         "took longer than the limit of %g s; refused, nothing was recorded or charged (raise "
                         "the limit, or split the request)", unit, limit_s);
}

/* Decide j in this thread (f: its filter, or NULL); past limit_s (> 0)
 * the decision is dropped. */
static dpa_status decide_here(decide_job *j, dpa_filter *f, double limit_s, const char *unit, dpa_error *err)
{
    double t0 = seconds();
    decide_now(j, f);
    if (limit_s > 0 && seconds() - t0 > limit_s)
        return too_costly(unit, limit_s, err);
    return DPA_OK;
}

dpa_status dpa_ledger_decide(dpa_ledger_worker **wp, const char *config, const char *state, const dpa_spec *spec,
                             size_t spec_bytes, double limit_s, const char *unit, dpa_filter_decision *dec,
                             char **after, char **remaining, dpa_error *err)
{
    decide_job *j = calloc(1, sizeof *j);
    dpa_ledger_worker *w = NULL;
    dpa_filter *f = NULL;
    dpa_status rc = DPA_OK;
    *after = *remaining = NULL;
    if (!j)
        return dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
    if (limit_s > 0 && spec_bytes <= CHEAP_SPEC_BYTES) {
        f = dpa_filter_new_json(config, &j->err);
        if (f && !walk_filter(f)) {
            dpa_filter_free(f);
            f = NULL;
        }
    }
    if (limit_s <= 0 || f) {
        /* no limit, or a cheap decision: here, on the caller's inputs */
        j->config = (char *)config;
        j->state = (char *)state;
        j->spec = (dpa_spec *)spec;
        rc = decide_here(j, f, limit_s, unit, err);
        j->config = j->state = NULL;
        j->spec = NULL;
    } else {
        j->config = strdup(config);
        j->state = strdup(state);
        j->spec = dpa_spec_copy(spec);
        if (!j->config || !j->state || !j->spec) {
            job_free(j);
            return dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
        }
        if (!*wp)
            *wp = worker_start();
        w = *wp;
        if (!w) {
            rc = decide_here(j, NULL, limit_s, unit, err); /* no thread: here */
        } else {
            pthread_mutex_lock(&w->mu);
            w->job = j;
            w->done = 0;
            pthread_cond_broadcast(&w->cv);
            pthread_mutex_unlock(&w->mu);
            if (!wait_done(w, limit_s)) {
                *wp = NULL; /* the next decision starts a new worker */
                return too_costly(unit, limit_s, err);
            }
            pthread_mutex_lock(&w->mu);
            w->job = NULL;
            pthread_mutex_unlock(&w->mu);
        }
    }
    if (rc == DPA_OK && j->rc != DPA_OK) {
        rc = j->rc;
        if (err) {
            *err = j->err;
            if (rc == DPA_ESTORAGE)
                dpa_error_set(err, DPA_ESTORAGE, "ledger: stored filter or state of unit \"%s\" does not load: %s",
                              unit, j->err.message);
        }
    } else if (rc == DPA_OK) {
        *dec = j->dec;
        *after = j->after;
        *remaining = j->remaining;
        j->after = j->remaining = NULL;
    }
    job_free(j);
    return rc;
}
