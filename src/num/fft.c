/* Real FFTs of arbitrary length through FFTW with a small per-object plan
 * cache.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Plans are created with FFTW_ESTIMATE (cheap, no timing runs, deterministic)
 * on scratch buffers that are freed right after planning, and are executed
 * with fftw_execute_dft_r2c / fftw_execute_dft_c2r on the caller's arrays.
 * FFTW requires those arrays to have the alignment of the planning buffers
 * and to be out of place like them, so callers must pass distinct arrays from
 * dpa_fft_alloc_real / dpa_fft_alloc_complex (fftw_malloc); misaligned or
 * aliased arrays are rejected with DPA_EINVAL.
 *
 * fftw_cleanup is never called: FFTW's planner state is process-global and
 * may be in use by other code in the process.
 *
 * Plan cache on disk (dpa_options.fft_cache_dir): a length is first planned
 * with FFTW_WISDOM_ONLY, which succeeds at no planning cost when the
 * process already has wisdom for it (an earlier accountant, a loaded file);
 * otherwise the length's file "<dir>/fftw-<n>" is imported and the
 * wisdom-only planning tried again; only then is the length planned, and
 * the process's wisdom saved as that file.  A process thus reads only the
 * files of the lengths it uses (about 0.5 ms each) instead of one file with
 * every length ever planned (1.5 ms per 100 KB), and never serializes its
 * wisdom unless it planned something.  A length's file holds the process's
 * wisdom when that length was planned, so it may hold other lengths' plans
 * too (those of the same process).
 *
 * Planning, importing and exporting wisdom touch FFTW's process-global
 * planner, which is not thread safe: dpacct does all three under one
 * process-wide lock (planner_lock), so its own accountants may plan from
 * several threads at once.  That lock, which guards FFTW's state rather
 * than any of dpacct's, is the library's one piece of process-wide state
 * besides the GSL handler guard. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dpacct/wisdom.h"
#include "num/num.h"

/* Number of cached (n, r2c, c2r) plan pairs.  An accountant uses only a few
 * lengths (one per grid size), so 8 covers them; beyond that the oldest entry
 * is replaced (round robin), which only costs a cheap FFTW_ESTIMATE replan. */
#define DPA_FFT_CACHE_SIZE 8
/* Largest length dpa_fft_good_size handles: 2^40 doubles are 8 TiB, far
 * beyond any grid the library builds; the bound keeps the search in 64-bit
 * integers with no overflow. */
#define DPA_FFT_MAX_GOOD_SIZE ((uint64_t)1 << 40)

typedef struct {
    size_t n;            /* 0: empty slot */
    fftw_plan r2c;
    fftw_plan c2r;
} dpa_fft_entry;

struct dpa_fft {
    dpa_fft_entry e[DPA_FFT_CACHE_SIZE];
    size_t next;         /* slot to replace when all are in use */
    fftw_plan *retired;  /* replaced plans, destroyed by dpa_fft_free */
    size_t nretired;
    char *cache_dir;     /* plan cache directory (owned copy), or NULL */
    /* guards e and next: the worker threads of one accountant share the
     * cache (plans are only executed outside the lock, and FFTW's
     * new-array execute is thread safe) */
    pthread_mutex_t lock;
};

/* Serializes dpacct's use of FFTW's planner (plan creation and
 * destruction, wisdom import and export) across threads and accountants. */
static pthread_mutex_t planner_lock = PTHREAD_MUTEX_INITIALIZER;

static void destroy_plan(fftw_plan p)
{
    if (!p)
        return;
    pthread_mutex_lock(&planner_lock);
    fftw_destroy_plan(p);
    pthread_mutex_unlock(&planner_lock);
}

dpa_fft *dpa_fft_new(const char *cache_dir)
{
    dpa_fft *f = calloc(1, sizeof(dpa_fft));
    if (!f)
        return NULL;
    if ((cache_dir && *cache_dir && !(f->cache_dir = strdup(cache_dir))) || pthread_mutex_init(&f->lock, NULL) != 0) {
        free(f->cache_dir);
        free(f);
        return NULL;
    }
    return f;
}

static void entry_clear(dpa_fft_entry *e)
{
    destroy_plan(e->r2c);
    destroy_plan(e->c2r);
    e->n = 0;
    e->r2c = e->c2r = NULL;
}

void dpa_fft_free(dpa_fft *f)
{
    if (!f)
        return;
    for (size_t i = 0; i < DPA_FFT_CACHE_SIZE; i++)
        entry_clear(&f->e[i]);
    for (size_t i = 0; i < f->nretired; i++)
        destroy_plan(f->retired[i]);
    free(f->retired);
    free(f->cache_dir);
    pthread_mutex_destroy(&f->lock);
    free(f);
}

size_t dpa_fft_good_size(size_t n)
{
    uint64_t target = n;
    if (target > DPA_FFT_MAX_GOOD_SIZE)
        return 0;
    if (target < 2)
        target = 2;
    /* best so far: the smallest power of two >= target (<= 2^40). */
    uint64_t best = 2;
    while (best < target)
        best *= 2;
    /* every candidate is 2 * 3^b 5^c 7^d * 2^a' with the odd part < best */
    for (uint64_t p7 = 1; p7 < best; p7 *= 7)
        for (uint64_t p5 = p7; p5 < best; p5 *= 5)
            for (uint64_t p3 = p5; p3 < best; p3 *= 3) {
                uint64_t m = 2 * p3;
                while (m < target)
                    m *= 2;
                if (m < best)
                    best = m;
            }
    if (best > SIZE_MAX)
        return 0;
    return (size_t)best;
}

double *dpa_fft_alloc_real(size_t n)
{
    if (n == 0 || n > SIZE_MAX / sizeof(double))
        return NULL;
    return fftw_malloc(n * sizeof(double));
}

fftw_complex *dpa_fft_alloc_complex(size_t n)
{
    if (n == 0 || n > SIZE_MAX / sizeof(fftw_complex))
        return NULL;
    return fftw_malloc(n * sizeof(fftw_complex));
}

/* Find or create the plans for length n; NULL if planning failed. */
static dpa_fft_entry *get_entry(dpa_fft *f, size_t n)
{
    for (size_t i = 0; i < DPA_FFT_CACHE_SIZE; i++)
        if (f->e[i].n == n)
            return &f->e[i];
    double *r = dpa_fft_alloc_real(n);
    fftw_complex *c = dpa_fft_alloc_complex(n / 2 + 1);
    fftw_plan r2c = NULL, c2r = NULL;
    char path[4200];
    int have_path = f->cache_dir && snprintf(path, sizeof path, "%s/fftw-%zu", f->cache_dir, n) < (int)sizeof path;
    pthread_mutex_lock(&planner_lock);
    if (r && c) {
        fftw_iodim64 dim = { .n = (ptrdiff_t)n, .is = 1, .os = 1 };
        /* with a cache: from wisdom only (the process's, then the length's
         * file), before planning for real */
        for (int attempt = f->cache_dir ? 0 : 2; attempt < 3 && !(r2c && c2r); attempt++) {
            unsigned only = attempt < 2 ? FFTW_WISDOM_ONLY : 0;
            if (attempt == 1 && !(have_path && dpa_wisdom_load(path, NULL) == DPA_OK))
                continue;
            if (r2c)
                fftw_destroy_plan(r2c);
            if (c2r)
                fftw_destroy_plan(c2r);
            r2c = fftw_plan_guru64_dft_r2c(1, &dim, 0, NULL, r, c, FFTW_ESTIMATE | FFTW_PRESERVE_INPUT | only);
            c2r = fftw_plan_guru64_dft_c2r(1, &dim, 0, NULL, c, r, FFTW_ESTIMATE | FFTW_DESTROY_INPUT | only);
            /* planned afresh: keep it for the next process (a failed write
             * only costs speed) */
            if (attempt == 2 && have_path && r2c && c2r)
                dpa_wisdom_save(path, NULL);
        }
    }
    if (!r2c || !c2r) {
        if (r2c)
            fftw_destroy_plan(r2c);
        if (c2r)
            fftw_destroy_plan(c2r);
        r2c = c2r = NULL;
    }
    pthread_mutex_unlock(&planner_lock);
    fftw_free(r);
    fftw_free(c);
    if (!r2c || !c2r)
        return NULL;
    /* reuse an empty slot if any, else replace round robin */
    dpa_fft_entry *e = NULL;
    for (size_t i = 0; i < DPA_FFT_CACHE_SIZE && !e; i++)
        if (f->e[i].n == 0)
            e = &f->e[i];
    if (!e) {
        /* another thread may still be executing the replaced plans: retire
         * them (destroyed by dpa_fft_free; at most two per grid length, and
         * an accountant uses few lengths) */
        dpa_fft_entry *old = &f->e[f->next];
        fftw_plan *rt = realloc(f->retired, (f->nretired + 2) * sizeof *rt);
        if (!rt) {
            destroy_plan(r2c);
            destroy_plan(c2r);
            return NULL;
        }
        f->retired = rt;
        rt[f->nretired++] = old->r2c;
        rt[f->nretired++] = old->c2r;
        old->r2c = old->c2r = NULL;
        old->n = 0;
        e = old;
        f->next = (f->next + 1) % DPA_FFT_CACHE_SIZE;
    }
    e->n = n;
    e->r2c = r2c;
    e->c2r = c2r;
    return e;
}

/* Common argument checks: n in range, arrays present, distinct and with
 * fftw_malloc alignment (what the cached plans were made for). */
static dpa_status check_args(const dpa_fft *f, size_t n, void *a, void *b)
{
    if (!f || !a || !b || n == 0 || a == b || n > (size_t)PTRDIFF_MAX / sizeof(fftw_complex))
        return DPA_EINVAL;
    if (fftw_alignment_of(a) != 0 || fftw_alignment_of(b) != 0)
        return DPA_EINVAL;
    return DPA_OK;
}

/* Checked arguments and the cached plans for length n, copied out under
 * the lock (*st set; 0 on failure). */
static int entry_for(dpa_fft *f, size_t n, void *a, void *b, dpa_fft_entry *out, dpa_status *st)
{
    *st = check_args(f, n, a, b);
    if (*st != DPA_OK)
        return 0;
    pthread_mutex_lock(&f->lock);
    dpa_fft_entry *e = get_entry(f, n);
    if (e)
        *out = *e;
    pthread_mutex_unlock(&f->lock);
    if (!e)
        *st = DPA_ENOMEM;
    return e != NULL;
}

dpa_status dpa_fft_r2c(dpa_fft *f, size_t n, double *in, fftw_complex *out)
{
    dpa_status st;
    dpa_fft_entry e;
    if (entry_for(f, n, in, out, &e, &st))
        fftw_execute_dft_r2c(e.r2c, in, out);
    return st;
}

dpa_status dpa_fft_c2r(dpa_fft *f, size_t n, fftw_complex *in, double *out)
{
    dpa_status st;
    dpa_fft_entry e;
    if (entry_for(f, n, in, out, &e, &st))
        fftw_execute_dft_c2r(e.c2r, in, out);
    return st;
}
