/* A tiny fork-join task runner over POSIX threads.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Workers take task indices from a shared atomic counter, so uneven tasks
 * balance themselves; the calling thread works too.  No state outlives a
 * call (no pool, no globals). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>
#include "num/num.h"


typedef struct run {
    atomic_size_t next;
    size_t n;
    void (*fn)(void *ctx, size_t task, int worker);
    void *ctx;
} run;

typedef struct worker {
    run *r;
    int id;
} worker;

static void *work(void *arg)
{
    worker *w = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&w->r->next, 1);
        if (i >= w->r->n) break;
        w->r->fn(w->r->ctx, i, w->id);
    }
    return NULL;
}

int dpa_threads_default(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1) n = 1;
    return n > DPA_THREADS_MAX ? DPA_THREADS_MAX : (int)n;
}

void dpa_parallel_for(size_t ntasks, int nthreads, void (*fn)(void *ctx, size_t task, int worker), void *ctx)
{
    if (nthreads > DPA_THREADS_MAX) nthreads = DPA_THREADS_MAX;
    if ((size_t)nthreads > ntasks) nthreads = (int)ntasks;
    run r;
    atomic_init(&r.next, 0);
    r.n = ntasks;
    r.fn = fn;
    r.ctx = ctx;
    pthread_t th[DPA_THREADS_MAX];
    worker wk[DPA_THREADS_MAX];
    int started = 0;
    for (int t = 1; t < nthreads; t++) {
        wk[t] = (worker){&r, t};
        if (pthread_create(&th[t], NULL, work, &wk[t]) != 0) break; /* fewer workers: still correct */
        started = t;
    }
    wk[0] = (worker){&r, 0};
    work(&wk[0]);
    for (int t = 1; t <= started; t++) pthread_join(th[t], NULL);
}
