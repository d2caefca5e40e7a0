/* The PLD method's eps(delta) for several repetition counts of one leaf in
 * one pass (dpa_epsilon_counts, include/dpacct/accountant.h): the leaf is
 * discretized once on the grid of the largest count's query, a few blocks
 * of it are composed once, and each count is composed from the blocks.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Taken: a state of one plain leaf whose pair has no atoms (continuous
 * pairs: Gaussian, Poisson-subsampled Gaussian, ...) and no envelope,
 * after an eps query at delta on it (K-fold, K the leaf's count).  Its
 * binding direction db was composed upper and lower at step s, tail budget
 * tau, with the two-stage plan (Lc, m) of dpa_pld_two_stage_plan.
 *
 * Blocks.  Single stage (Lc = 1): one block, the leaf's grid measures
 * themselves.  Two stages: blocks of b = m, m/8, m/64, ..., 1 steps, each
 * the b-fold fine composition coarsened by Lc (dpa_pld_fine_power, the
 * function the accountant's two-stage build uses), with its additive
 * allowance per use.  A count c <= K is written c = sum_i d_i b_i (greedy
 * digits) and composed as prod_i block_i^{d_i} on the coarse grid: each
 * block is transformed once (dpa_powers_init, on the length of the widest
 * window of the counts), and each count's composition is
 * e^{sum_i d_i log X_i} inverted (dpa_powers_compose), with its own window
 * from the Chernoff bounds of its factors and its own a-posteriori
 * round-off allowance, as dpa_compose_flags would give them; where that
 * misses the target, the count is composed afresh by dpa_compose_flags.  Every block is a pessimistic
 * (optimistic) measure of its b-fold composition with the allowance added,
 * so by the composition lemma (docs/guarantees.md §3) the product brackets
 * the c-fold composition with the allowances summed over the d_i uses; the
 * relative round-off of the masses is counted as the two-stage build counts
 * it (DPA_PLD_DISC_REL per step, per use and per factor).  The bounds are
 * then evaluated exactly as a query evaluates its compositions
 * (dpa_pld_evaluate_epsilon: the same delta inversion, allowances and the
 * largest-loss cap of the c-fold set), so each bracket is certified as a
 * single-count query's.  A count whose bracket misses the accuracy target
 * (or is infinite) is left to the caller.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "pld/pld_acct.h"
#include "pld/pld_build.h"

#define MAX_BLOCKS 32
/* block sizes m, m / DIGIT_BASE, ...: a count uses at most K / m + (DIGIT_BASE - 1) per smaller block */
#define DIGIT_BASE 8

typedef struct blocks {
    int nb;
    double size[MAX_BLOCKS];              /* size[0] > ... > size[nb - 1] = 1 */
    dpa_grid_pmf g[2][2][MAX_BLOCKS];     /* [direction][kind][block] */
    double allow[2][2][MAX_BLOCKS];       /* additive allowance per use */
    int two_stage;
    unsigned mask;                        /* bits 2 d + k built */
    dpa_powers pw[4];                     /* kind 2 d + k's blocks transformed once */
    int pw_ok[4];
} blocks;

typedef struct counts_task {
    dpa_pld_acct *a;
    const blocks *B;
    const double *counts;
    double delta, tau, step;
    int db;
    dpa_result *out;
    unsigned char *done;
} counts_task;

static void blocks_free(blocks *B)
{
    for (int t = 0; t < 4; t++) dpa_powers_clear(&B->pw[t]);
    for (int d = 0; d < 2; d++)
        for (int k = 0; k < 2; k++)
            for (int i = 0; i < MAX_BLOCKS; i++) dpa_grid_pmf_free(&B->g[d][k][i]);
}

/* One fine block of blocks_build, run by a worker: kind todo[i / nb], block i % nb. */
typedef struct block_task {
    dpa_pld_acct *a;
    blocks *B;
    const dpa_pld_leaf_grid *g;
    long long Lc;
    double tau_f;
    int db, todo[4];
    int bad[4 * MAX_BLOCKS];
} block_task;

static void block_run(void *ctx, size_t i, int worker)
{
    block_task *b = ctx;
    blocks *B = b->B;
    int t = b->todo[i / (size_t)B->nb], j = (int)(i % (size_t)B->nb), d = t / 2, k = t % 2;
    unsigned cflags = d == b->db ? 0u : DPA_COMPOSE_ROUGH;
    b->bad[i] = dpa_pld_fine_power(b->a, &b->a->ws[worker], &b->g->pm[d][k], B->size[j], b->Lc, k, b->tau_f,
                                   b->g->allow[d][k], cflags, &B->g[d][k][j], &B->allow[d][k][j], NULL) != DPA_OK;
}

/* The blocks of the kinds in B->mask (0 on success). */
static int blocks_build(dpa_pld_acct *a, const dpa_leaf *l, double step, double tau, int db, blocks *B)
{
    double m = 1;
    long long Lc = dpa_pld_two_stage_plan(a, step, tau, &m);
    double tau_leaf = fmax(0.25 * tau / fmax(1.0, l->count), 1e-300);
    dpa_pld_leaf_grid g;
    memset(&g, 0, sizeof g);
    if (dpa_pld_plain_leaf_grid(a, l->pair, step, tau_leaf, a->ndir, B->mask, a->nthreads, &g, NULL)) {
        dpa_pld_leaf_grid_free(&g);
        return 1;
    }
    int bad = 0;
    if (Lc <= 1) {
        B->nb = 1;
        B->size[0] = 1;
        for (int t = 0; t < 4; t++) {
            if (!(B->mask >> t & 1u)) continue;
            B->g[t / 2][t % 2][0] = g.pm[t / 2][t % 2];
            memset(&g.pm[t / 2][t % 2], 0, sizeof(dpa_grid_pmf));
            B->allow[t / 2][t % 2][0] = g.allow[t / 2][t % 2];
        }
    } else {
        B->two_stage = 1;
        B->nb = 0;
        for (double s = m; s >= 2 && B->nb < MAX_BLOCKS - 1; s = floor(s / DIGIT_BASE)) B->size[B->nb++] = s;
        B->size[B->nb++] = 1;
        double uses = floor(l->count / m) + (double)B->nb * DIGIT_BASE;
        block_task bt;
        memset(&bt, 0, sizeof bt);
        bt = (block_task){a, B, &g, Lc, tau / (4 * uses), db, {0}, {0}};
        size_t nt = 0;
        for (int t = 0; t < 4; t++)
            if (B->mask >> t & 1u) bt.todo[nt++] = t;
        dpa_parallel_for(nt * (size_t)B->nb, a->nthreads, block_run, &bt);
        for (size_t i = 0; i < nt * (size_t)B->nb; i++) bad |= bt.bad[i];
    }
    dpa_pld_leaf_grid_free(&g);
    return bad;
}

/* The digits of count cnt in the block sizes (greedy). */
static void digits_of(const blocks *B, double cnt, double *digit)
{
    double rem = cnt;
    for (int j = 0; j < B->nb; j++) {
        digit[j] = floor(rem / B->size[j]);
        rem -= digit[j] * B->size[j];
    }
}

/* Compose count cnt (digits) into t->comp and evaluate; 1 if the bracket is
 * finite and meets the accuracy target (then *r holds it).  fast: from the
 * kept transforms where there are (B->pw_ok), else dpa_compose_flags. */
static int count_eval(counts_task *c, dpa_pld_acct *t, double cnt, const double *digit, int fast, int worker,
                      dpa_result *r)
{
    dpa_pld_acct *a = c->a;
    const blocks *B = c->B;
    int ok = 1;
    for (int tk = 0; tk < 4 && ok; tk++) {
        if (!(B->mask >> tk & 1u)) continue;
        int d = tk / 2, k = tk % 2;
        dpa_factor fac[MAX_BLOCKS];
        size_t nf = 0;
        double allow = 0, uses = 0;
        for (int j = 0; j < B->nb; j++) {
            if (digit[j] <= 0) continue;
            fac[nf++] = (dpa_factor){&B->g[d][k][j], digit[j]};
            allow += digit[j] * B->allow[d][k][j];
            uses += digit[j];
        }
        dpa_composed *o = &t->comp[d][k];
        unsigned cflags = (!B->two_stage && d != c->db) ? DPA_COMPOSE_ROUGH : 0u;
        if (fast && B->pw_ok[tk])
            ok = dpa_powers_compose(a->fft, &B->pw[tk], &a->ws[worker], digit, c->tau, k, a->opt.max_grid, o, NULL) ==
                 DPA_OK;
        else
            ok = dpa_compose_flags(a->fft, &a->ws[worker], fac, nf, c->tau, k, a->opt.max_grid, cflags, o, NULL) ==
                 DPA_OK;
        if (!ok) break;
        if (B->two_stage) o->rel_err += DPA_PLD_DISC_REL * (uses + (double)nf);
        o->roundoff += allow;
        o->rel_err += DPA_PLD_DISC_REL * (cnt + 1);
        ok = dpa_composed_prepare(o, NULL) == DPA_OK;
        t->cstep[d][k] = c->step;
    }
    int good = 0;
    if (ok) {
        dpa_leaf lf = a->leaves->v[0];
        dpa_leafset ls = *a->leaves;
        lf.count = cnt;
        ls.v = &lf;
        ls.total_count = cnt;
        for (int d = 0; d < 2; d++) dpa_pld_set_range(&ls, d < a->ndir ? d : 0, &t->wmax[d], &t->infub[d]);
        dpa_method_result_init(r, DPA_METHOD_PLD);
        int raw_inf = dpa_pld_evaluate_epsilon(t, c->delta, r);
        double gap = r->upper - r->lower;
        good = !raw_inf && isfinite(r->upper) && gap <= a->opt.accuracy * fmax(1.0, r->upper);
    }
    for (int d = 0; d < 2; d++)
        for (int k = 0; k < 2; k++) dpa_composed_free(&t->comp[d][k]);
    memset(t->cstep, 0, sizeof t->cstep);
    return good;
}

/* Count i: compose, evaluate, keep if certified and accurate (from the
 * kept transforms first; where that misses the target, composed afresh,
 * with the accurate low-frequency path of the binding direction). */
static void count_run(void *ctx, size_t i, int worker)
{
    counts_task *c = ctx;
    double cnt = c->counts[i], digit[MAX_BLOCKS];
    digits_of(c->B, cnt, digit);
    dpa_pld_acct *t = malloc(sizeof *t);
    if (!t) return;
    *t = *c->a; /* shallow: only ndir, comp, cstep, wmax and infub are read */
    memset(t->comp, 0, sizeof t->comp);
    memset(t->cstep, 0, sizeof t->cstep);
    dpa_result r;
    if (count_eval(c, t, cnt, digit, 1, worker, &r) || count_eval(c, t, cnt, digit, 0, worker, &r)) {
        c->out[i] = r;
        c->done[i] = 1;
    }
    free(t);
}

void dpa_pld_epsilon_counts(void *state, const double *counts, size_t n, double delta, dpa_result *out,
                            unsigned char *done)
{
    dpa_pld_acct *a = state;
    const dpa_leafset *L = a->leaves;
    if (L->n != 1 || !L->v[0].pair || L->v[0].inner || L->v[0].pair->natoms > 0 || a->envelope_lower || !a->built)
        return;
    dpa_result rk;
    dpa_method_result_init(&rk, DPA_METHOD_PLD);
    dpa_pld_evaluate_epsilon(a, delta, &rk);
    int db = (a->ndir == 2 && rk.binding == DPA_DIR_ADD) ? 1 : 0;
    double step = a->cstep[db][0], tau = a->ctau[db][0];
    if (!(step > 0) || a->cstep[db][1] != step || a->ctau[db][1] != tau || a->crough[db][0] || a->crough[db][1])
        return;
    blocks *B = calloc(1, sizeof *B);
    if (!B) return;
    B->mask = 3u << (2 * db);
    if (a->ndir == 2) B->mask |= 1u << (2 * (1 - db));
    size_t left = 0;
    for (size_t i = 0; i < n; i++) left += !done[i] && counts[i] <= L->v[0].count;
    if (left && blocks_build(a, &L->v[0], step, tau, db, B) == 0) {
        /* the transform length: the widest window of the counts' compositions */
        double *ks = malloc((n + 1) * MAX_BLOCKS * sizeof *ks);
        size_t nk = 0;
        for (size_t i = 0; ks && i < n; i++)
            if (!done[i] && counts[i] <= L->v[0].count) digits_of(B, counts[i], ks + (nk++) * (size_t)B->nb);
        for (int t = 0; ks && t < 4; t++) {
            if (!(B->mask >> t & 1u)) continue;
            const dpa_grid_pmf *gp[MAX_BLOCKS];
            for (int j = 0; j < B->nb; j++) gp[j] = &B->g[t / 2][t % 2][j];
            B->pw_ok[t] = dpa_powers_init(a->fft, &a->ws[0], gp, (size_t)B->nb, ks, nk, tau, t % 2, a->opt.max_grid,
                                          &B->pw[t], NULL) == DPA_OK;
        }
        free(ks);
        counts_task c = {a, B, counts, delta, tau, step, db, out, done};
        size_t *idx = malloc((n ? n : 1) * sizeof *idx);
        double *cs = malloc((n ? n : 1) * sizeof *cs);
        dpa_result *rs = malloc((n ? n : 1) * sizeof *rs);
        unsigned char *ds = calloc(n ? n : 1, 1);
        if (idx && cs && rs && ds) {
            size_t m = 0;
            for (size_t i = 0; i < n; i++)
                if (!done[i] && counts[i] <= L->v[0].count) {
                    idx[m] = i;
                    cs[m++] = counts[i];
                }
            c.counts = cs;
            c.out = rs;
            c.done = ds;
            dpa_parallel_for(m, a->nthreads, count_run, &c);
            for (size_t j = 0; j < m; j++)
                if (ds[j]) {
                    out[idx[j]] = rs[j];
                    done[idx[j]] = 1;
                }
        }
        free(idx);
        free(cs);
        free(rs);
        free(ds);
    }
    blocks_free(B);
    free(B);
}
