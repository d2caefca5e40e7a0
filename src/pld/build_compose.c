/* The compositions of a PLD build: each direction and kind composed from
 * the leaves' grid measures on the worker threads (one task each, with its
 * own FFT workspace), in one stage or, for long repetitions, in two (fine
 * blocks coarsened, then composed).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "pld/pld_acct.h"
#include "pld/pld_build.h"

/* Two-stage composition of long repetitions: a leaf repeated k >= SPLIT_MIN
 * times is composed as (m-fold on the fine grid, coarsened by L)^r times the
 * (k - r m)-fold remainder, r = floor(k / m).  The coarse grid's error enters
 * r times instead of k times; with L = sqrt(m) / 2 it is about a quarter of
 * the fine grid's, while the FFT lengths shrink by about L.  SPLIT_MIN:
 * measured over Poisson-subsampled Gaussians (q 0.002-0.01, sigma 0.7-2)
 * on the 2-core development machine, two stages are faster from k ~ 4000 on
 * (k = 4100-14063: 5-45 % less whole-process time, the DP-SGD example
 * 16.6 -> 7.8 ms in the benchmark), slower at k = 2500 (+5-50 %).
 * Below SPLIT_ALWAYS, only for tail budgets tau >= SPLIT_TAU_MIN (eps
 * queries at delta >= 1e-6 at the default accuracy): the two stages carry
 * an additive round-off of ~1e-11 (each of the r blocks' FFT round-off),
 * which at delta ~ 1e-9 is a relative 1e-2 and stalls the refinement
 * (measured: gaps 2-4 times the single stage's, accuracy missed, 2-5 times
 * slower); above SPLIT_ALWAYS the single stage's FFT lengths are too large
 * to be the better choice at any delta. */
#define SPLIT_MIN 4096.0
#define SPLIT_ALWAYS 16384.0
#define SPLIT_TAU_MIN 1e-12
/* Block length about BLOCK_SQRT_FACTOR sqrt(k) (a power of two, or a divisor
 * of k near it): measured on the 1e6-step benchmark, 4 sqrt(k) took 0.19 s,
 * 8-16 sqrt(k) 0.10 s (the fine-stage window is set by the per-step loss's
 * tail, nearly independent of the block length, while the coarse stage
 * shrinks with L = sqrt(m) / 2), 64 sqrt(k) 0.21 s. */
#define BLOCK_SQRT_FACTOR 16.0

/* The largest gap between consecutive finite atoms of a pair with no
 * continuous part (0 if it has a continuous part or at most one finite
 * atom): the spacing of the lattice its repetitions live on. */
static double atom_gap(const dpa_pair *p)
{
    if (p->lca > -INFINITY || p->lcb > -INFINITY) return 0;
    double gap = 0, prev = NAN;
    for (size_t i = 0; i < p->natoms; i++) {
        double w = p->atoms[i].w;
        if (!isfinite(w)) continue;
        if (!isnan(prev)) gap = fmax(gap, w - prev);
        prev = w;
    }
    return gap;
}

/* Coarsening factor L (1: single stage) and block length m for a build at
 * grid step `step`.  The coarse stage re-discretizes each block's composed
 * measure on a grid L times wider (connect-the-dots / garbling of its
 * cells: sound for any measure).  It is tight when the block's measure is
 * dense at the coarse scale: always for pairs with a continuous part
 * (Laplace, Gaussian, subsampled Gaussian); for atom-only pairs when their
 * atoms are at most L steps apart, so the m-fold composition fills the
 * coarse cells.  Otherwise (sparse atom lattices, and composite leaves)
 * single stage, where the aligned fine grid keeps atoms exact. */
long long dpa_pld_two_stage_plan(const dpa_pld_acct *a, double step, double tau, double *m_out)
{
    const dpa_leafset *L = a->leaves;
    double kmin = INFINITY, gap = 0;
    for (size_t j = 0; j < L->n; j++) {
        kmin = fmin(kmin, L->v[j].count);
        if (!L->v[j].pair) return 1;
        gap = fmax(gap, atom_gap(L->v[j].pair));
    }
    if (!(kmin >= SPLIT_MIN) || (kmin < SPLIT_ALWAYS && !(tau >= SPLIT_TAU_MIN))) return 1;
    double m = exp2(floor(log2(fmin(BLOCK_SQRT_FACTOR * sqrt(kmin), kmin / 16))));
    long long Lc = (long long)floor(0.5 * sqrt(m));
    if (Lc < 2 || gap > (double)Lc * step) return 1;
    *m_out = m;
    return Lc;
}

/* Block length for a leaf repeated k times: a divisor of k in [m/2, m] if
 * there is one (no remainder to compose separately), else m. */
static double block_length(double k, double m)
{
    for (double d = m; d >= 0.5 * m && d >= 2 && m - d < 4096; d--)
        if (fmod(k, d) == 0) return d;
    return m;
}

/* (declared in pld_build.h) */
dpa_status dpa_pld_fine_power(dpa_pld_acct *a, dpa_compose_ws *ws, const dpa_grid_pmf *g, double cnt, long long Lc,
                              int k, double tau_f, double leaf_allow, unsigned cflags, dpa_grid_pmf *out, double *allow,
                              dpa_error *err)
{
    dpa_factor f = {g, cnt};
    dpa_composed cm;
    dpa_status st = dpa_compose_flags(a->fft, ws, &f, 1, tau_f, k, a->opt.max_grid, cflags | DPA_COMPOSE_LENT, &cm, err);
    if (st) return st;
    *allow = (k == 0 ? cm.tail_above : cm.tail_outside) + cm.roundoff + cnt * leaf_allow;
    dpa_cells cc;
    st = dpa_cells_from_composed(&cm, Lc, &cc, err);
    dpa_composed_free(&cm);
    if (st) return st;
    return dpa_pld_keep_kind(&cc, k, out, err);
}

/* Compose measure kind k (0 upper, 1 lower) of one direction from the
 * leaves' grid measures pm (one per leaf of L) with their per-use additive
 * allowances allow[], single or two-stage; prepare: build the query tables
 * (the top level), else keep the masses (inner compositions). */
static dpa_status compose_dir(dpa_pld_acct *a, dpa_compose_ws *ws, const dpa_leafset *L, dpa_grid_pmf *const *pm,
                              const double *allow_leaf, const double *cnt, double tau, long long Lc, double m, int k,
                              int prepare, unsigned cflags, dpa_composed *out, dpa_error *err)
{
    size_t nl = L->n;
    dpa_factor *fac = calloc(2 * nl + 1, sizeof *fac);
    dpa_grid_pmf *cp = calloc(2 * nl + 1, sizeof *cp);
    dpa_status st = DPA_OK;
    double allow = 0, allow_all = 0;
    size_t nf = 0;
    if (!fac || !cp) { st = dpa_error_set(err, DPA_ENOMEM, "out of memory"); goto out; }
    for (size_t j = 0; j < nl; j++) allow_all += cnt[j] * allow_leaf[j];
    if (Lc <= 1) {
        for (size_t j = 0; j < nl; j++) fac[nf++] = (dpa_factor){pm[j], cnt[j]};
        st = dpa_compose_flags(a->fft, ws, fac, nf, tau, k, a->opt.max_grid, cflags, out, err);
        if (st) goto out;
        allow = allow_all;
    } else {
        double uses = 0;
        for (size_t j = 0; j < nl; j++) uses += floor(cnt[j] / block_length(cnt[j], m)) + 1;
        double tau_f = tau / (4 * uses);
        for (size_t j = 0; j < nl; j++) {
            double k_j = cnt[j], m_j = block_length(k_j, m);
            double r = floor(k_j / m_j), rem = k_j - r * m_j, al;
            st = dpa_pld_fine_power(a, ws, pm[j], m_j, Lc, k, tau_f, allow_leaf[j], cflags, &cp[nf], &al, err);
            if (st) goto out;
            fac[nf] = (dpa_factor){&cp[nf], r};
            nf++;
            allow += r * al;
            if (rem > 0) {
                st = dpa_pld_fine_power(a, ws, pm[j], rem, Lc, k, tau_f, allow_leaf[j], cflags, &cp[nf], &al, err);
                if (st) goto out;
                fac[nf] = (dpa_factor){&cp[nf], 1};
                nf++;
                allow += al;
            }
        }
        st = dpa_compose(a->fft, ws, fac, nf, tau, k, a->opt.max_grid, out, err);
        if (st) goto out;
        /* the coarsened blocks' masses are rounded once more */
        out->rel_err += DPA_PLD_DISC_REL * (uses + (double)nf);
    }
    out->roundoff += allow;
    out->rel_err += DPA_PLD_DISC_REL * (L->total_count + (double)nl);
    if (prepare) st = dpa_composed_prepare(out, err);
out:
    for (size_t i = 0; cp && i < 2 * nl + 1; i++) dpa_grid_pmf_free(&cp[i]);
    free(cp);
    free(fac);
    return st;
}

/* One composition of a build, run by a worker: direction t / 2, kind t % 2. */
typedef struct compose_task {
    dpa_pld_acct *a;
    const dpa_leafset *L;
    dpa_pld_leaf_grid *g;
    double tau;
    long long Lc;
    double m;
    int prepare;
    dpa_composed (*out)[2];
    int todo[4];         /* 2 d + k of each task */
    unsigned rough;      /* bits 2 d + k composed with DPA_COMPOSE_ROUGH */
    dpa_status st[4];
    dpa_error err[4];
} compose_task;

static void compose_task_run(void *ctx, size_t i, int worker)
{
    compose_task *c = ctx;
    size_t t = i;
    int d = c->todo[i] / 2, k = c->todo[i] % 2;
    size_t nl = c->L->n;
    dpa_grid_pmf **sel = calloc(nl ? nl : 1, sizeof *sel);
    double *allow = calloc(nl ? nl : 1, sizeof *allow), *cnt = calloc(nl ? nl : 1, sizeof *cnt);
    if (!sel || !allow || !cnt) {
        c->st[t] = dpa_error_set(&c->err[t], DPA_ENOMEM, "out of memory");
    } else {
        for (size_t j = 0; j < nl; j++) {
            sel[j] = &c->g[j].pm[d][k];
            allow[j] = c->g[j].allow[d][k];
            cnt[j] = c->g[j].pre ? 1.0 : c->L->v[j].count;
        }
        unsigned cflags = (c->rough >> c->todo[i] & 1u) ? DPA_COMPOSE_ROUGH : 0u;
        c->st[t] = compose_dir(c->a, &c->a->ws[worker], c->L, sel, allow, cnt, c->tau, c->Lc, c->m, k, c->prepare,
                               cflags, &c->out[d][k], &c->err[t]);
    }
    free(sel);
    free(allow);
    free(cnt);
}

/* Several independent dpa_pld_compose_leaves calls as one parallel loop: the tasks
 * of every set on the accountant's workers together (a set has at most 4
 * tasks, fewer than the workers can balance: 3 tasks on 2 threads leave one
 * idle a third of the time). */
typedef struct compose_batch {
    compose_task *ct;
    size_t nsets;
    size_t ntasks[2];
} compose_batch;

static void compose_batch_run(void *ctx, size_t i, int worker)
{
    compose_batch *b = ctx;
    size_t k = 0;
    while (i >= b->ntasks[k]) i -= b->ntasks[k++];
    compose_task_run(&b->ct[k], i, worker);
}

/* Compose, for each of nsets (1 or 2) sets, the leaves' grid measures g[s]
 * (one per leaf of L[s]) into out[s][d][k] for the bits of mask (2 d + k,
 * d < nd): the compositions are independent, one task each on the
 * accountant's workers (each with its own FFT workspace).  On failure no
 * out[s][d][k] of mask is left allocated. */
dpa_status dpa_pld_compose_sets(dpa_pld_acct *a, size_t nsets, const dpa_leafset *const *L, dpa_pld_leaf_grid *const *g,
                                double tau, int nd, long long Lc, double m, int prepare, unsigned mask,
                                unsigned rough, dpa_composed (*const *out)[2], dpa_error *err)
{
    compose_task ct[2];
    compose_batch b = {ct, nsets, {0, 0}};
    dpa_status st = DPA_OK;
    for (size_t k = 0; k < nsets; k++) {
        ct[k] = (compose_task){a, L[k], g[k], tau, Lc, m, prepare, out[k], {0}, rough, {DPA_OK}, {{0}}};
        for (int t = 0; t < 2 * nd; t++)
            if (mask >> t & 1u) ct[k].todo[b.ntasks[k]++] = t;
    }
    dpa_parallel_for(b.ntasks[0] + (nsets > 1 ? b.ntasks[1] : 0), a->nthreads, compose_batch_run, &b);
    for (size_t k = 0; k < nsets; k++)
        for (size_t i = 0; i < b.ntasks[k]; i++)
            if (ct[k].st[i] && !st) {
                st = ct[k].st[i];
                if (err) *err = ct[k].err[i];
            }
    if (st)
        for (size_t k = 0; k < nsets; k++)
            for (size_t i = 0; i < b.ntasks[k]; i++) dpa_composed_free(&out[k][ct[k].todo[i] / 2][ct[k].todo[i] % 2]);
    return st;
}

/* Compose the leaves' grid measures g (one per leaf of L) into out[d][k]
 * for the bits of mask (2 d + k, d < nd). */
dpa_status dpa_pld_compose_leaves(dpa_pld_acct *a, const dpa_leafset *L, dpa_pld_leaf_grid *g, double tau, int nd,
                                  long long Lc, double m, int prepare, unsigned mask, unsigned rough,
                                  dpa_composed (*out)[2], dpa_error *err)
{
    const dpa_leafset *Ls[1] = {L};
    dpa_pld_leaf_grid *gs[1] = {g};
    dpa_composed (*outs[1])[2] = {out};
    return dpa_pld_compose_sets(a, 1, Ls, gs, tau, nd, Lc, m, prepare, mask, rough, outs, err);
}
