/* The PLD method's builds: grid measures of the leaves (each leaf's window
 * from its own tails and the query's), two-stage composition of long
 * repetitions, precomposition of atom leaves off the grid, groups of many
 * distinct leaves, worker threads; the compositions a query asks for.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pld/pld_acct.h"
#include "exact/exact.h"

/* Round-off of a grid measure's masses: relative errors of a few u (up to
 * ~|log mass| u far in the tails, where masses are negligible).  Masses
 * off by a relative e move every hockey-stick value by a relative e at most,
 * so a composition of K factors is off by a relative K e: the bounds carry a
 * factor (1 +- DISC_REL * K). */
#define DISC_REL (16 * DPA_UNIT_ROUNDOFF)
/* Initial grid step from an error model (a wrong guess only costs a
 * refinement), three of them (dpa_pld_initial_step).  A single distinct
 * mechanism with atoms repeated (Laplace, subsampled Laplace): gap ~ C k
 * step^2; 3 was fitted when it also served the continuous shape (DP-SGD in
 * one stage: C = 1.9). */
#define STEP_MODEL_C_REPEAT 3.0
/* The same for a single leaf with a continuous loss and no atoms, whose gap
 * goes as k step^2 / sqrt(eps) (dpa_pld_initial_step): measured C = 4.0,
 * 5 keeps a margin. */
#define STEP_MODEL_C_CONT 5.0
/* Sets of distinct leaves: gap ~ C K step^2 / sqrt(eps) fits them better
 * (dpa_pld_initial_step); 5 covers the measured 3.0-4.6. */
#define STEP_MODEL_C_SET 5.0
/* The coarsest first step (loss units). */
#define STEP_MAX 0.05
/* Atoms count as on a lattice b when w / b is within this of an integer. */
#define ATOM_LATTICE_TOL 1e-9

/* ---------------- loss range of a composition ---------------- */

void dpa_pld_leaf_range(const dpa_leaf *l, int d, double *wmax, double *inf)
{
    if (l->pair) {
        const dpa_pair *p = l->pair;
        double lo, hi;
        dpa_pair_loss_range(p, &lo, &hi);
        if (d == 0 || p->symmetric) {
            *wmax = hi;
            *inf = dpa_pair_inf_bound(p);
            /* pure/RR/approx leaves: the +inf mass is the leaf's delta itself */
            if (l->rr_delta >= 0) *inf = l->rr_delta;
            return;
        }
        if (!l->sample && l->rate < 1) {
            /* add direction of Poisson subsampling (Q, qP + (1-q)Q):
             * dQ/d(qP + (1-q)Q) <= 1/(1-q), no mass at +inf */
            *wmax = -log1p(-l->rate) * (1 + 8 * DPA_UNIT_ROUNDOFF);
            *inf = 0;
            return;
        }
        /* reversed: largest finite loss -lo, +inf mass = B's atom at -inf */
        *wmax = -lo;
        *inf = 0;
        for (size_t i = 0; i < p->natoms; i++)
            if (p->atoms[i].w == -INFINITY && p->atoms[i].lb > -INFINITY)
                *inf += exp(p->atoms[i].lb) * (1 + 4 * DPA_UNIT_ROUNDOFF * (fabs(p->atoms[i].lb) + 6));
        if (p->slack_lo > 0) *wmax = INFINITY; /* B-mass of omitted low atoms unknown */
        return;
    }
    /* composite: the inner composition's remove pair, subsampled */
    double wi, ii, q = l->rate;
    dpa_pld_set_range(l->inner, 0, &wi, &ii);
    double w0 = dpa_poisson_loss(q, wi);
    w0 += 8 * DPA_UNIT_ROUNDOFF * (fabs(w0) + 1e-300);
    if (l->sample) { /* symmetrized: [-max(w0, 0), max(w0, 0)], both directions */
        *wmax = fmax(w0, 0.0);
        *inf = q * ii * (1 + 4 * DPA_UNIT_ROUNDOFF);
    } else if (d == 0) {
        *wmax = w0;
        *inf = q * ii * (1 + 4 * DPA_UNIT_ROUNDOFF);
    } else {
        /* add direction (Q, qP + (1-q)Q): dQ/d(qP + (1-q)Q) <= 1/(1-q) */
        *wmax = -log1p(-q) * (1 + 8 * DPA_UNIT_ROUNDOFF);
        *inf = 0;
    }
}

/* The same for a composition: losses add, +inf masses compose as
 * 1 - prod (1 - inf_i)^{k_i}; both rounded up. */
void dpa_pld_set_range(const dpa_leafset *L, int d, double *wmax, double *inf)
{
    double w = 0, aw = 0, lk = 0;
    int full = 0;
    for (size_t i = 0; i < L->n; i++) {
        double wi, ii;
        dpa_pld_leaf_range(&L->v[i], d, &wi, &ii);
        w += L->v[i].count * wi;
        aw += L->v[i].count * fabs(wi);
        if (ii >= 1) full = 1;
        else lk += L->v[i].count * log1p(-ii);
    }
    /* each product and sum rounds: (n + 2) u relative of sum |.|, margin 4 */
    *wmax = isnan(w) ? INFINITY : w + 4 * ((double)L->n + 2) * DPA_UNIT_ROUNDOFF * aw;
    /* -expm1 and the log1p sum: a few u relative (log1p(-x) ~ -x) */
    *inf = full ? 1.0 : fmin(1.0, -expm1(lk) * (1 + 4 * ((double)L->n + 4) * DPA_UNIT_ROUNDOFF));
}

void dpa_pld_release(dpa_pld_acct *a)
{
    for (int d = 0; d < 2; d++)
        for (int k = 0; k < 2; k++) {
            dpa_composed_free(&a->comp[d][k]);
            memset(&a->comp[d][k], 0, sizeof a->comp[d][k]);
            a->cstep[d][k] = a->ctau[d][k] = 0;
            a->crough[d][k] = 0;
        }
    a->built = 0;
}

/* ---------------- builds ---------------- */

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
static long long two_stage_plan(const dpa_pld_acct *a, double step, double tau, double *m_out)
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

/* Cells c discretized; the measure of `kind` (0 upper, 1 lower) goes to
 * *out, the other is dropped; c is freed. */
static dpa_status keep_kind(dpa_cells *c, int kind, dpa_grid_pmf *out, dpa_error *err)
{
    dpa_grid_pmf other;
    dpa_status st = kind == 0 ? dpa_cells_discretize(c, out, &other, err) : dpa_cells_discretize(c, &other, out, err);
    if (!st) dpa_grid_pmf_free(&other);
    dpa_cells_free(c);
    return st;
}

/* The cnt-fold composition of fine grid measure g (upper if k = 0, lower if
 * k = 1), coarsened by Lc.  *allow: the fine stage's additive allowance on
 * delta (window tails, FFT round-off, discretization round-off and snapping
 * of cnt steps), to be counted once per use of the result. */
static dpa_status fine_power(dpa_pld_acct *a, dpa_compose_ws *ws, const dpa_grid_pmf *g, double cnt, long long Lc,
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
    return keep_kind(&cc, k, out, err);
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
            st = fine_power(a, ws, pm[j], m_j, Lc, k, tau_f, allow_leaf[j], cflags, &cp[nf], &al, err);
            if (st) goto out;
            fac[nf] = (dpa_factor){&cp[nf], r};
            nf++;
            allow += r * al;
            if (rem > 0) {
                st = fine_power(a, ws, pm[j], rem, Lc, k, tau_f, allow_leaf[j], cflags, &cp[nf], &al, err);
                if (st) goto out;
                fac[nf] = (dpa_factor){&cp[nf], 1};
                nf++;
                allow += al;
            }
        }
        st = dpa_compose(a->fft, ws, fac, nf, tau, k, a->opt.max_grid, out, err);
        if (st) goto out;
        /* the coarsened blocks' masses are rounded once more */
        out->rel_err += DISC_REL * (uses + (double)nf);
    }
    out->roundoff += allow;
    out->rel_err += DISC_REL * (L->total_count + (double)nl);
    if (prepare) st = dpa_composed_prepare(out, err);
out:
    for (size_t i = 0; cp && i < 2 * nl + 1; i++) dpa_grid_pmf_free(&cp[i]);
    free(cp);
    free(fac);
    return st;
}

/* The grid measures of one leaf in one build, [direction][kind 0 upper,
 * 1 lower], and the additive allowance of each per use: pointwise
 * h_true <= h_upper + allow[d][0] and h_true >= h_lower - allow[d][1]. */
typedef struct leaf_grid {
    dpa_grid_pmf pm[2][2];
    double allow[2][2];
    int pre;  /* pm is already the leaf's count-fold composition (precomposed_leaf_grid) */
} leaf_grid;

static dpa_status dpa_grid_pmf_copy(const dpa_grid_pmf *src, dpa_grid_pmf *dst, dpa_error *err)
{
    *dst = *src;
    dst->mass = malloc((src->n ? src->n : 1) * sizeof *dst->mass);
    if (!dst->mass) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    memcpy(dst->mass, src->mass, src->n * sizeof *dst->mass);
    return DPA_OK;
}

static void leaf_grid_free(leaf_grid *g)
{
    for (int d = 0; d < 2; d++)
        for (int k = 0; k < 2; k++) dpa_grid_pmf_free(&g->pm[d][k]);
}

static dpa_status compose_set(dpa_pld_acct *a, const dpa_leafset *L, double step, double tau, int nd, long long Lc,
                              double m, int prepare, unsigned mask, unsigned rough, dpa_composed (*out)[2],
                              dpa_error *err);

/* The measures of direction d (0 remove, 1 add: from the mirrored cells
 * unless the pair is symmetric) of a leaf's cells c. */
typedef struct disc_task {
    const dpa_cells *c;
    int symmetric;
    unsigned mask;       /* the build's kinds (bit 2 d + k): a direction without one is skipped */
    leaf_grid *g;
    dpa_status st[2];
    dpa_error err[2];
} disc_task;

static void disc_task_run(void *ctx, size_t d, int worker)
{
    disc_task *t = ctx;
    dpa_cells r;
    (void)worker;
    if (!(t->mask >> (2 * d) & 3u))
        return;
    if (d == 0 || t->symmetric) {
        t->st[d] = dpa_cells_discretize(t->c, &t->g->pm[d][0], &t->g->pm[d][1], &t->err[d]);
    } else if (!(t->st[d] = dpa_cells_reverse(t->c, &r, &t->err[d]))) {
        t->st[d] = dpa_cells_discretize(&r, &t->g->pm[d][0], &t->g->pm[d][1], &t->err[d]);
        dpa_cells_free(&r);
    }
}

/* Pessimistic/optimistic grid measures of a mechanism leaf, both directions
 * from one set of cells (the add direction from the mirrored cells).  The
 * two directions are independent: with threads > 1 (a build of one leaf,
 * where the leaves' own parallel loop has nothing else to run) they are
 * discretized in parallel (10^6 steps: 8.7 -> 5 ms). */
static dpa_status plain_leaf_grid(dpa_pld_acct *a, const dpa_pair *p, double step, double tau_leaf, int nd,
                                  unsigned mask, int threads, leaf_grid *g, dpa_error *err)
{
    dpa_cells c;
    dpa_status st = dpa_cells_build(p, step, tau_leaf, nd == 2, a->opt.max_grid, &c, err);
    if (st) return st;
    disc_task t = {&c, p->symmetric, mask, g, {DPA_OK, DPA_OK}, {{0}}};
    dpa_parallel_for((size_t)nd, threads, disc_task_run, &t);
    for (int d = 0; d < nd && !st; d++)
        if ((st = t.st[d]) && err) *err = t.err[d];
    /* snapped atoms moved by at most snap_shift in loss: h moves by at most
     * that much per factor */
    for (int d = 0; d < 2; d++) g->allow[d][0] = g->allow[d][1] = c.snap_shift;
    dpa_cells_free(&c);
    return st;
}

/* The atom pair of a subsampled composed measure (docs/sampling.md §3).
 * mu: the inner composition's grid measure (masses at z_i = (lo + i) step
 * plus mu->inf at +inf): for dir 0 the law of the inner loss L under P, for
 * dir 1 the law of L' = log(Q/P) under Q (the inner reversed composition).
 *   dir 0 (remove, (qP + (1-q)Q, Q)): atom w = log(q e^z + 1 - q) with
 *     A = m (q + (1-q) e^{-z}), B = m e^{-z}; +inf keeps A = q mu_inf; and
 *     the B-only mass beta = 1 - sum m e^{-z} (Q's mass where P = 0, taken
 *     as >= 0) gives an atom at log(1 - q) with A = (1-q) beta, B = beta.
 *     Then h_sub(x) = q h_mu((x - 1 + q)/q) for x > 1 - q and
 *     q mu(total) + (1 - q - x) max(1, sum m e^{-z}) below: monotone in h_mu.
 *   dir 1 (add, (Q, qP + (1-q)Q)): atom w = -log(q e^{-z} + 1 - q) with
 *     A = m, B = m e^{-w}; +inf of mu goes to -log(1 - q).  Then
 *     h_sub(x) = (1 - x(1-q)) h_mu(x q / (1 - x(1-q))) for x < 1/(1-q), else
 *     0: monotone in h_mu, for any measure mu.
 * *werr: sum over atoms of A-mass times the round-off bound of its w (an
 * atom moved by dw moves h by at most A dw); *bsum: sum m e^{-z}. */
static dpa_pair *subsampled_atoms(const dpa_composed *mu, double q, int dir, double *werr, long double *bsum,
                                  dpa_error *err)
{
    size_t cnt = 0;
    for (size_t i = 0; i < mu->n; i++) cnt += mu->mass[i] > 0;
    dpa_pair *p = dpa_pair_alloc(DPA_PAIR_ATOMS, cnt + 2, err);
    if (!p) return NULL;
    double lq = log(q), l1q = log1p(-q);
    long double bs = 0, we = 0;
    size_t k = 0;
    if (dir == 0) p->atoms[k++] = (dpa_atom){l1q, -INFINITY, -INFINITY}; /* B-only mass, set below */
    for (size_t i = 0; i < mu->n; i++) {
        double mi = mu->mass[i];
        if (!(mi > 0)) continue;
        double z = (double)(mu->lo + (long long)i) * mu->step, lm = log(mi);
        bs += (long double)mi * expl(-(long double)z);
        double w, la, lb;
        if (dir == 0) {
            w = dpa_poisson_loss(q, z); /* log(q e^z + 1 - q) */
            la = lm + dpa_log_add_exp(lq, l1q - z);
            lb = lm - z;
        } else {
            w = -dpa_poisson_loss(q, -z); /* -log(q e^{-z} + 1 - q) */
            la = lm;
            lb = lm - w;
        }
        /* w: log1p(q expm1(.)) is good to ~4 u relative, and the rounding
         * of z (u |z|) moves it by at most u |z| (|dw/dz| <= 1):
         * |dw| <= 4 u (|w| + |z| + 2) with margin */
        we += (long double)mi * 4 * DPA_UNIT_ROUNDOFF * (fabs(w) + fabs(z) + 2);
        p->atoms[k++] = (dpa_atom){w, la, lb};
    }
    if (mu->inf > 0) {
        if (dir == 0) p->atoms[k++] = (dpa_atom){INFINITY, lq + log(mu->inf), -INFINITY};
        else {
            p->atoms[k++] = (dpa_atom){-l1q, log(mu->inf), l1q + log(mu->inf)};
            if (q < 1) we += (long double)mu->inf * 4 * DPA_UNIT_ROUNDOFF * (fabs(l1q) + 1);
        }
    }
    if (dir == 0) {
        double beta = (double)(1.0L - bs);
        if (beta > 0) p->atoms[0] = (dpa_atom){l1q, l1q + log(beta), log(beta)};
        if (q < 1) we += (long double)fmax(beta, 0.0) * 4 * DPA_UNIT_ROUNDOFF * (fabs(l1q) + 1);
    }
    p->natoms = k;
    /* atoms sorted by w: the map is increasing in z; the B-only atom at
     * log(1 - q) lies below all others (w > log(1 - q) for finite z) and
     * +inf is last; drop an unused first slot */
    if (dir == 0 && p->atoms[0].la == -INFINITY) {
        memmove(p->atoms, p->atoms + 1, (k - 1) * sizeof *p->atoms);
        p->natoms = k - 1;
    }
    /* a map rounded into a tie or an inversion would break the sort
     * order the discretizer relies on: keep it non-decreasing */
    for (size_t i = 1; i < p->natoms; i++)
        if (p->atoms[i].w < p->atoms[i - 1].w) p->atoms[i].w = p->atoms[i - 1].w;
    p->symmetric = 0;
    *werr = (double)we * (1 + 1e-3);
    *bsum = bs;
    return p;
}

/* A lower measure whose implied B-mass sum m e^{-z} exceeds 1 (rounding
 * losses down raises it) would raise the subsampled h below x = 1 - q
 * (subsampled_atoms); lowering masses only lowers h, so take the excess
 * off the lowest losses, where it costs the least A-mass. */
static void trim_lower_bmass(dpa_composed *mu)
{
    long double bs = 0;
    for (size_t i = 0; i < mu->n; i++)
        if (mu->mass[i] > 0) bs += (long double)mu->mass[i] * expl(-(long double)((double)(mu->lo + (long long)i) * mu->step));
    /* the long double sum is good to far better than 1e-15 relative: a
     * margin of 1e-15 keeps the trimmed sum at or below 1 */
    long double excess = bs - 1.0L + 1e-15L;
    for (size_t i = 0; i < mu->n && excess > 0; i++) {
        if (!(mu->mass[i] > 0)) continue;
        long double e = expl(-(long double)((double)(mu->lo + (long long)i) * mu->step));
        long double b = (long double)mu->mass[i] * e;
        if (b <= excess) {
            excess -= b;
            mu->mass[i] = 0;
        } else {
            mu->mass[i] = (double)(((long double)mu->mass[i] - excess / e) * (1 - 1e-15L));
            excess = 0;
        }
    }
}

/* The measure of one kind of pair p (freed here) at the common step, with
 * the snapping shift of its atoms in *snap. */
static dpa_status pair_kind_grid(dpa_pld_acct *a, dpa_pair *p, double step, double tau_leaf, int kind,
                                 dpa_grid_pmf *out, double *snap, dpa_error *err)
{
    dpa_cells c;
    dpa_status st = dpa_cells_build(p, step, tau_leaf, 0, a->opt.max_grid, &c, err);
    dpa_pair_free(p);
    if (st) return st;
    *snap = c.snap_shift;
    return keep_kind(&c, kind, out, err);
}

/* Grid measures of a composite leaf: the inner composition on the same grid
 * (remove direction, and for poisson the inner reversed direction too),
 * mapped through the subsampling (subsampled_atoms; sample additionally
 * symmetrized), then discretized like any atom pair. */
static dpa_status composite_leaf_grid(dpa_pld_acct *a, const dpa_leaf *l, double step, double tau_leaf, int nd,
                                      leaf_grid *g, dpa_error *err)
{
    const dpa_leafset *in = l->inner;
    int ind = (!l->sample && in->asymmetric) ? 2 : 1; /* inner directions composed */
    dpa_composed ic[2][2];
    memset(ic, 0, sizeof ic);
    dpa_status st = compose_set(a, in, step, tau_leaf, ind, 1, 1, 0, 0xFu, 0u, ic, err);
    if (st) return st;
    double q = l->rate;
    int od = l->sample ? 1 : 2; /* directions of the leaf's own pair */
    for (int d = 0; d < od && !st; d++) {
        for (int k = 0; k < 2 && !st; k++) {
            dpa_composed *mu = &ic[d < ind ? d : 0][k];
            if (d == 0 && k == 1) trim_lower_bmass(mu);
            /* the inner measure's bounds as an additive allowance: h <= total
             * mass bounds the relative part */
            double tot = mu->inf;
            for (size_t i = 0; i < mu->n; i++) tot += mu->mass[i];
            double ain = (k == 0 ? mu->tail_above : mu->tail_outside) + mu->roundoff + mu->rel_err * tot * (1 + 1e-3);
            double werr;
            long double bsum;
            dpa_pair *p = subsampled_atoms(mu, q, d, &werr, &bsum, err);
            if (!p) { st = err ? err->status : DPA_ENOMEM; break; }
            double al = werr;
            if (d == 0) {
                al += q * ain;
                /* lower: B's total above 1 raises h below x = 1 - q
                 * (trimmed above: only round-off is left) */
                if (k == 1 && bsum > 1.0L) al += (double)(bsum - 1.0L) * (1 + 1e-3);
            } else {
                al += ain;
            }
            if (l->sample) {
                /* S(x) = 1 - x + x h_R(1/x) below x = 1 needs the atom at 0
                 * of mass 1 - A(W > 0) - B(W > 0) >= 0 (docs/sampling.md);
                 * clamping it lowers S by the excess, and its round-off
                 * moves S by a few u */
                double tl[2];
                dpa_pair_tail_gt(p, 0.0, tl);
                double excess = exp(tl[0]) + exp(tl[1]) - 1.0;
                al += 8 * DPA_UNIT_ROUNDOFF + (k == 0 && excess > 0 ? excess * (1 + 1e-3) : 0);
                p = dpa_pair_symmetrize(p, err);
                if (!p) { st = err ? err->status : DPA_ENOMEM; break; }
            }
            double snap = 0;
            st = pair_kind_grid(a, p, step, tau_leaf, k, &g->pm[d][k], &snap, err);
            g->allow[d][k] = al + snap;
        }
    }
    for (int d = 0; d < 2; d++)
        for (int k = 0; k < 2; k++) dpa_composed_free(&ic[d][k]);
    if (st) return st;
    if (nd == 2 && od == 1) { /* symmetric: the add direction is the same */
        for (int k = 0; k < 2 && !st; k++) {
            st = dpa_grid_pmf_copy(&g->pm[0][k], &g->pm[1][k], err);
            g->allow[1][k] = g->allow[0][k];
        }
    }
    return st;
}

/* One composition of a build, run by a worker: direction t / 2, kind t % 2. */
typedef struct compose_task {
    dpa_pld_acct *a;
    const dpa_leafset *L;
    leaf_grid *g;
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

/* Several independent compose_leaves calls as one parallel loop: the tasks
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
static dpa_status compose_sets(dpa_pld_acct *a, size_t nsets, const dpa_leafset *const *L, leaf_grid *const *g,
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
static dpa_status compose_leaves(dpa_pld_acct *a, const dpa_leafset *L, leaf_grid *g, double tau, int nd,
                                 long long Lc, double m, int prepare, unsigned mask, unsigned rough,
                                 dpa_composed (*out)[2], dpa_error *err)
{
    const dpa_leafset *Ls[1] = {L};
    leaf_grid *gs[1] = {g};
    dpa_composed (*outs[1])[2] = {out};
    return compose_sets(a, 1, Ls, gs, tau, nd, Lc, m, prepare, mask, rough, outs, err);
}

/* ---------------- precomposition of atom leaves off the grid ----------------
 *
 * An atom that is not on the common grid costs first-order accuracy each
 * time it is discretized (docs/guarantees.md §3.13): k factors of a leaf
 * whose atoms miss the grid lose k times that.  Such a leaf (count >= 2)
 * is composed k-fold first on a grid of its own, PRE_L times finer and
 * aligned with its atoms where they lie on a lattice (atom-only pairs are
 * shifted so their lowest atom sits on a grid point: the lattice's offset
 * then only moves the composition as a whole, by k c), and the composed law
 * is discretized once onto the common grid like any atom pair.  The
 * first-order loss is then paid once per leaf, not once per factor
 * (mixtures of many distinct atom mechanisms).  Upper stays upper and lower
 * stays lower at every stage; every stage's allowance is carried. */

/* The own grid is at least this many times finer than the common one.
 * Measured on the 21-mechanism mixture (whose Poisson-subsampled Laplace
 * and discrete Gaussian leaves are precomposed): 16 -> 8 halves those
 * grids, 222 -> 145 ms for the whole command, the bracket 2.78e-4 -> 2.85e-4
 * wide (accuracy 1e-4 met either way); 4 is slower again (the first build
 * misses the target and the refined one is finer). */
#define PRE_L 8

/* Every finite atom of p (within the grid range) on the grid of spacing step. */
static int atoms_on_grid(const dpa_pair *p, double step)
{
    for (size_t i = 0; i < p->natoms; i++) {
        double w = p->atoms[i].w;
        if (!isfinite(w) || fabs(w) > DPA_GRID_LOSS_MAX || p->atoms[i].la == -INFINITY) continue;
        double r = w / step;
        if (fabs(r - round(r)) > ATOM_LATTICE_TOL * fmax(1.0, fabs(r))) return 0;
    }
    return 1;
}

static int wants_precomposition(const dpa_leaf *l, double step)
{
    return l->pair && l->pair->natoms > 0 && l->count >= 2 && !atoms_on_grid(l->pair, step);
}

static int atom_cmp(const void *x, const void *y)
{
    double a = ((const dpa_atom *)x)->w, b = ((const dpa_atom *)y)->w;
    return (a > b) - (a < b);
}

/* x an integer multiple of y (within the atom-lattice tolerance) */
static int is_multiple(double x, double y)
{
    double r = x / y;
    return isfinite(r) && fabs(r - round(r)) <= ATOM_LATTICE_TOL * fmax(1.0, fabs(r));
}

/* The lattice c + b Z holding every finite atom of p with mass (b = 0: at
 * most one such atom); 0 if there is none. */
static int atom_lattice_of(const dpa_pair *p, double *c, double *b)
{
    double lo = INFINITY, gap = INFINITY, prev = NAN;
    for (size_t i = 0; i < p->natoms; i++) {
        double w = p->atoms[i].w;
        if (!isfinite(w) || p->atoms[i].la == -INFINITY) continue;
        if (!isnan(prev) && w - prev > 0) gap = fmin(gap, w - prev);
        lo = fmin(lo, w);
        prev = w;
    }
    if (!isfinite(lo)) return 0;
    *c = lo;
    *b = isfinite(gap) ? gap : 0;
    if (*b == 0) return 1;
    for (size_t i = 0; i < p->natoms; i++) {
        double w = p->atoms[i].w;
        if (!isfinite(w) || p->atoms[i].la == -INFINITY) continue;
        double r = (w - lo) / *b;
        if (fabs(r - round(r)) > ATOM_LATTICE_TOL * fmax(1.0, r)) return 0;
    }
    return 1;
}

/* p's atoms shifted by -c (A-masses kept, B-masses recomputed): same A-law
 * of the loss, moved; NULL + err on failure. */
static dpa_pair *shifted_atoms(const dpa_pair *p, double c, dpa_error *err)
{
    dpa_pair *q = dpa_pair_alloc(DPA_PAIR_ATOMS, p->natoms, err);
    if (!q) return NULL;
    for (size_t i = 0; i < p->natoms; i++) {
        dpa_atom at = p->atoms[i];
        if (isfinite(at.w)) {
            at.w -= c;
            at.lb = at.la - at.w;
        }
        q->atoms[i] = at;
    }
    q->slack_hi = p->slack_hi;
    q->slack_lo = p->slack_lo;
    return q;
}

/* The A-law of a composed fine measure as an atom pair, moved back by
 * shift: atoms at z_i + shift with A-mass m_i (B-mass m_i e^{-w}), +inf with
 * mass inf.  *werr: sum of A-mass times the rounding of each w (an atom
 * moved by dw moves h by at most its A-mass times dw). */
static dpa_pair *composed_atoms(const dpa_composed *cm, double shift, double *werr, dpa_error *err)
{
    size_t cnt = cm->inf > 0;
    for (size_t i = 0; i < cm->n; i++) cnt += cm->mass[i] > 0;
    dpa_pair *p = dpa_pair_alloc(DPA_PAIR_ATOMS, cnt ? cnt : 1, err);
    if (!p) return NULL;
    size_t k = 0;
    long double we = 0;
    for (size_t i = 0; i < cm->n; i++) {
        double m = cm->mass[i];
        if (!(m > 0)) continue;
        double z = (double)(cm->lo + (long long)i) * cm->step, w = z + shift, lm = log(m);
        /* z and the sum each round by u relative */
        we += (long double)m * 2 * DPA_UNIT_ROUNDOFF * (fabs(z) + fabs(shift) + fabs(w));
        p->atoms[k++] = (dpa_atom){w, lm, lm - w};
    }
    if (cm->inf > 0) p->atoms[k++] = (dpa_atom){INFINITY, log(cm->inf), -INFINITY};
    p->natoms = k;
    /* w is increasing in i; keep it non-decreasing after rounding */
    for (size_t i = 1; i < k; i++)
        if (p->atoms[i].w < p->atoms[i - 1].w) p->atoms[i].w = p->atoms[i - 1].w;
    *werr = (double)we * (1 + 1e-3);
    return p;
}

/* Few finite atoms: the k-fold composition enumerated exactly, if it has at
 * most PRE_EXACT_MAX atoms (multinomial over at most PRE_EXACT_ATOMS finite
 * atoms). */
#define PRE_EXACT_ATOMS 4
#define PRE_EXACT_MAX 200000.0

/* Number of multisets of size k from m kinds, C(k + m - 1, m - 1) (as a double). */
static double multisets(double k, size_t m)
{
    double r = 1;
    for (size_t i = 1; i < m; i++) r = r * (k + (double)i) / (double)i;
    return r;
}

/* The k-fold composition of atom pair p (the A-law of the summed loss),
 * enumerated: atoms sum_i n_i w_i with A-mass multinomial(k; n) prod a_i^n_i
 * over the m finite atoms, and +inf with 1 - (1 - a_inf)^k.  Atoms with mass
 * below drop are left out: for an upper measure (kind 0) their mass goes to
 * +inf, for a lower one it is dropped (both only move h the safe way).
 * *allow: h may differ from the exact composition's by the rounding of the
 * losses and of the log masses (each atom's mass times its error). */
static dpa_pair *exact_power_atoms(const dpa_pair *p, double k, int kind, double drop, double *allow,
                                   dpa_error *err)
{
    double w[PRE_EXACT_ATOMS], la[PRE_EXACT_ATOMS], ainf = 0;
    size_t m = 0;
    for (size_t i = 0; i < p->natoms; i++) {
        const dpa_atom *t = &p->atoms[i];
        if (t->la == -INFINITY) continue;
        if (t->w == INFINITY) { ainf += exp(t->la); continue; }
        w[m] = t->w;
        la[m++] = t->la;
    }
    double n_atoms = m ? multisets(k, m) : 0;
    dpa_pair *q = dpa_pair_alloc(DPA_PAIR_ATOMS, (size_t)n_atoms + 1, err);
    if (!q) return NULL;
    int sg;
    double lgk = lgamma_r(k + 1, &sg), ldrop = log(drop), dropped = 0;
    long double e = 0;
    size_t nq = 0;
    int n[PRE_EXACT_ATOMS] = {0};
    /* odometer over n_1..n_{m-1} with n_0 = k - sum */
    for (;;) {
        double rest = k, lm = lgk, lerr = fabs(lgk) + 1, wsum = 0, wabs = 0;
        for (size_t i = 1; i < m; i++) rest -= n[i];
        if (rest >= 0 && m) {
            for (size_t i = 0; i < m; i++) {
                double ni = i ? (double)n[i] : rest, lg = lgamma_r(ni + 1, &sg);
                lm += ni * la[i] - lg;
                lerr += fabs(lg) + ni * fabs(la[i]) + 1;
                wsum += ni * w[i];
                wabs += ni * fabs(w[i]);
            }
            double mass = exp(lm);
            /* lgamma and the products: a few u relative of each term */
            double merr = 16 * DPA_UNIT_ROUNDOFF * lerr;
            if (lm < ldrop) {
                dropped += mass * (1 + merr);
            } else {
                q->atoms[nq++] = (dpa_atom){wsum, lm, lm - wsum};
                e += (long double)mass * (merr + 2 * (double)(m + 1) * DPA_UNIT_ROUNDOFF * wabs) * (1 + merr);
            }
        }
        /* next n */
        size_t i = 1;
        while (i < m && (n[i]++, rest - 1 < 0 || (double)n[i] > k)) {
            n[i] = 0;
            rest = k;
            for (size_t j = 1; j < m; j++) rest -= n[j];
            i++;
        }
        if (i >= m) break;
    }
    /* the finite masses leave (1 - a_inf)^k: +inf gets the rest */
    double inf = ainf > 0 ? -expm1(k * log1p(-fmin(ainf, 1.0))) : 0;
    if (kind == 0) inf = fmin(1.0, (inf + dropped) * (1 + 8 * DPA_UNIT_ROUNDOFF));
    else inf *= 1 - 8 * DPA_UNIT_ROUNDOFF * (k + 2);
    if (inf > 0) q->atoms[nq++] = (dpa_atom){INFINITY, log(inf), -INFINITY};
    q->natoms = nq;
    /* sort by loss (the enumeration order is not monotone) */
    qsort(q->atoms, nq, sizeof *q->atoms, atom_cmp);
    *allow = (double)e;
    return q;
}

static dpa_status precomposed_leaf_grid(dpa_pld_acct *a, dpa_compose_ws *ws, const dpa_leaf *l, double step,
                                        double tau_leaf, int nd, unsigned mask, leaf_grid *g, dpa_error *err)
{
    const dpa_pair *p0 = l->pair;
    double k = l->count;
    dpa_status st = DPA_OK;
    g->pre = 1;
    for (int d = 0; d < nd && !st; d++) {
        if (!(mask >> (2 * d) & 3u)) continue;
        /* the pair of direction d */
        dpa_pair *pd = NULL;
        if (d == 0 || p0->symmetric) {
            pd = dpa_pair_copy(p0, err);
        } else {
            dpa_pair *cp = dpa_pair_copy(p0, err);
            pd = cp ? dpa_pair_reverse(cp, err) : NULL;
        }
        if (!pd) return err ? err->status : DPA_ENOMEM;
        size_t mfin = 0;
        for (size_t i = 0; i < pd->natoms; i++) mfin += isfinite(pd->atoms[i].w) && pd->atoms[i].la > -INFINITY;
        if (pd->lca == -INFINITY && pd->lcb == -INFINITY && pd->slack_hi == 0 && pd->slack_lo == 0 &&
            mfin <= PRE_EXACT_ATOMS && multisets(k, mfin) <= PRE_EXACT_MAX) {
            /* few atoms: the composition exactly, then one discretization */
            for (int kind = 0; kind < 2 && !st; kind++) {
                if (!(mask >> (2 * d + kind) & 1u)) continue;
                double al;
                dpa_pair *ap = exact_power_atoms(pd, k, kind, tau_leaf * 1e-3 / fmax(1.0, multisets(k, mfin)), &al, err);
                if (!ap) { st = err ? err->status : DPA_ENOMEM; break; }
                double snap = 0;
                st = pair_kind_grid(a, ap, step, tau_leaf, kind, &g->pm[d][kind], &snap, err);
                g->allow[d][kind] = al + snap;
            }
            dpa_pair_free(pd);
            continue;
        }
        /* its own grid: aligned with its atom lattice where it has one */
        double c = 0, b = 0, shift = 0, fine = step / PRE_L, base = 0;
        int atoms_only = pd->lca == -INFINITY && pd->lcb == -INFINITY;
        if (atom_lattice_of(pd, &c, &b)) {
            if (atoms_only) {
                /* shift the lowest atom to 0: the lattice is then b Z */
                base = b;
                if (c != 0) {
                    dpa_pair *q = shifted_atoms(pd, c, err);
                    dpa_pair_free(pd);
                    if (!(pd = q)) return err ? err->status : DPA_ENOMEM;
                    shift = k * c;
                }
            } else if (b > 0 && is_multiple(c, b)) {
                base = b;          /* atoms on b Z */
            } else if (c != 0 && is_multiple(b, c)) {
                base = fabs(c);    /* e.g. Laplace: -eps0, eps0 on eps0 Z */
            }
        }
        if (base > 0) fine = atoms_only ? base : base / ceil(base / fine * (1 - 1e-12));
        dpa_cells cf;
        st = dpa_cells_build(pd, fine, tau_leaf, 0, a->opt.max_grid, &cf, err);
        dpa_pair_free(pd);
        if (st) break;
        dpa_grid_pmf fp[2];
        st = dpa_cells_discretize(&cf, &fp[0], &fp[1], err);
        double snap_f = cf.snap_shift;
        dpa_cells_free(&cf);
        for (int kind = 0; kind < 2 && !st; kind++) {
            if (!(mask >> (2 * d + kind) & 1u)) continue;
            dpa_factor f = {&fp[kind], k};
            dpa_composed cm;
            st = dpa_compose_flags(a->fft, ws, &f, 1, tau_leaf, kind, a->opt.max_grid, DPA_COMPOSE_LENT, &cm, err);
            if (st) break;
            double tot = cm.inf;
            for (size_t i = 0; i < cm.n; i++) tot += cm.mass[i];
            /* the fine composition's bounds as an additive allowance (h <=
             * its total mass for the relative parts) */
            double al = (kind == 0 ? cm.tail_above : cm.tail_outside) + cm.roundoff + k * snap_f +
                        (cm.rel_err + DISC_REL * (k + 1)) * tot * (1 + 1e-3);
            double werr = 0, snap = 0;
            if (base == 0) {
                /* the own grid is exactly PRE_L times finer: cut the
                 * composition into the common grid's cells directly (as the
                 * two-stage coarsening does; its masses round once more) */
                dpa_cells cc;
                st = dpa_cells_from_composed(&cm, PRE_L, &cc, err);
                al += DISC_REL * tot * (1 + 1e-3);
                dpa_composed_free(&cm);
                if (st) break;
                st = keep_kind(&cc, kind, &g->pm[d][kind], err);
            } else {
                dpa_pair *ap = composed_atoms(&cm, shift, &werr, err);
                dpa_composed_free(&cm);
                if (!ap) { st = err ? err->status : DPA_ENOMEM; break; }
                st = pair_kind_grid(a, ap, step, tau_leaf, kind, &g->pm[d][kind], &snap, err);
            }
            g->allow[d][kind] = al + werr + snap;
        }
        dpa_grid_pmf_free(&fp[0]);
        dpa_grid_pmf_free(&fp[1]);
    }
    return st;
}

/* Discretization of the plain leaves of a range, run by the workers
 * (composite leaves are done first, by the caller: their inner
 * compositions use the workers themselves). */
typedef struct leaf_task {
    dpa_pld_acct *a;
    const dpa_leaf *v;   /* the range's leaves */
    leaf_grid *g;
    double step, tau_leaf;
    int nd;
    unsigned mask;
    int pre_ok;          /* precomposition allowed (single-stage builds) */
    int inner_threads;   /* threads for the two directions of one leaf */
    dpa_status *st;
    dpa_error *err;
} leaf_task;

/* Free the grid measures a build does not compose (mask bits 2 d + k). */
static void drop_unused(leaf_grid *g, unsigned mask)
{
    for (int t = 0; t < 4; t++)
        if (!(mask >> t & 1u)) dpa_grid_pmf_free(&g->pm[t / 2][t % 2]);
}

static void leaf_task_run(void *ctx, size_t i, int worker)
{
    leaf_task *t = ctx;
    (void)worker;
    if (t->v[i].inner) return;
    if (t->pre_ok && wants_precomposition(&t->v[i], t->step))
        t->st[i] = precomposed_leaf_grid(t->a, &t->a->ws[worker], &t->v[i], t->step, t->tau_leaf, t->nd, t->mask,
                                         &t->g[i], &t->err[i]);
    else
        t->st[i] = plain_leaf_grid(t->a, t->v[i].pair, t->step, t->tau_leaf, t->nd, t->mask, t->inner_threads,
                                   &t->g[i], &t->err[i]);
    drop_unused(&t->g[i], t->mask);
}

/* Grid measures g[0 .. n) of leaves v[0 .. n) (composite leaves first, in
 * this thread; then the plain ones on the workers). */
static dpa_status leaf_grids(dpa_pld_acct *a, const dpa_leaf *v, size_t n, double step, double tau_leaf, int nd,
                             unsigned mask, int pre_ok, leaf_grid *g, dpa_error *err)
{
    dpa_status st = DPA_OK;
    for (size_t j = 0; j < n && !st; j++)
        if (v[j].inner) {
            st = composite_leaf_grid(a, &v[j], step, tau_leaf, nd, &g[j], err);
            if (!st) drop_unused(&g[j], mask);
        }
    if (st) return st;
    dpa_status *sts = calloc(n ? n : 1, sizeof *sts);
    dpa_error *errs = calloc(n ? n : 1, sizeof *errs);
    if (!sts || !errs) {
        free(sts);
        free(errs);
        return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    }
    /* one leaf: its two directions in parallel instead */
    leaf_task lt = {a, v, g, step, tau_leaf, nd, mask, pre_ok, n == 1 ? a->nthreads : 1, sts, errs};
    dpa_parallel_for(n, a->nthreads, leaf_task_run, &lt);
    for (size_t j = 0; j < n && !st; j++)
        if ((st = sts[j]) && err) *err = errs[j];
    free(sts);
    free(errs);
    return st;
}

/* Sets of more than GROUP_MIN distinct leaves are composed in groups of
 * GROUP_SIZE consecutive leaves: each group on its own (narrower) window,
 * then the groups' measures on the final one.  Only one group's leaf grids
 * are held at a time (1000 distinct subsampled Gaussians: ~350 MB held
 * otherwise), and the final window scan sees a few dozen factors instead of
 * hundreds.  Each group's measure is a sound upper (lower) measure of the
 * group with the group's allowances as an additive allowance per use.
 * Measured on 1000 distinct subsampled Gaussians (2 cores): groups of 16
 * 0.94 s, 32 0.53 s, 64 0.48 s, 128 0.52 s and more memory. */
#define GROUP_MIN 64
#define GROUP_SIZE 64

static dpa_status grouped_set(dpa_pld_acct *a, const dpa_leafset *L, double step, double tau, int nd, int prepare,
                              unsigned mask, unsigned rough, dpa_composed (*out)[2], dpa_error *err)
{
    size_t nl = L->n, ng = (nl + GROUP_SIZE - 1) / GROUP_SIZE;
    double tau_leaf = fmax(0.25 * tau / fmax(1.0, L->total_count), 1e-300);
    /* every group's window: all groups together move at most tau/4 */
    double tau_g = fmax(0.125 * tau / (double)ng, 1e-300);
    dpa_leafset gl;
    memset(&gl, 0, sizeof gl);
    gl.v = calloc(ng, sizeof *gl.v);
    leaf_grid *gg = calloc(ng, sizeof *gg);
    /* two groups at a time: their leaves' grids in one parallel loop, their
     * up to 2 x 3 compositions in another (one group's three compositions
     * on two threads would leave one idle a third of the time) */
    leaf_grid *g = calloc(2 * GROUP_SIZE, sizeof *g);
    dpa_status st = DPA_OK;
    if (!gl.v || !gg || !g) {
        st = dpa_error_set(err, DPA_ENOMEM, "out of memory");
        goto out;
    }
    gl.n = ng;
    gl.total_count = (double)ng;
    gl.asymmetric = L->asymmetric;
    for (size_t gi = 0; gi < ng && !st; gi += 2) {
        size_t npair = ng - gi < 2 ? ng - gi : 2, j0 = gi * GROUP_SIZE, nall = 0;
        dpa_leafset sub[2];
        const dpa_leafset *subs[2];
        leaf_grid *gs[2];
        dpa_composed tmp[2][2][2];
        dpa_composed (*outs[2])[2];
        memset(sub, 0, sizeof sub);
        memset(tmp, 0, sizeof tmp);
        for (size_t k = 0; k < npair; k++) {
            size_t jk = j0 + k * GROUP_SIZE, n = nl - jk < GROUP_SIZE ? nl - jk : GROUP_SIZE;
            sub[k].v = L->v + jk;
            sub[k].n = n;
            sub[k].asymmetric = L->asymmetric;
            for (size_t j = 0; j < n; j++) sub[k].total_count += sub[k].v[j].count;
            subs[k] = &sub[k];
            gs[k] = g + k * GROUP_SIZE;
            outs[k] = tmp[k];
            nall += n;
        }
        memset(g, 0, 2 * GROUP_SIZE * sizeof *g);
        st = leaf_grids(a, L->v + j0, nall, step, tau_leaf, nd, mask, 1, g, err);
        if (!st) st = compose_sets(a, npair, subs, gs, tau_g, nd, 1, 1, 0, mask, rough, outs, err);
        for (size_t j = 0; j < nall; j++) leaf_grid_free(&g[j]);
        if (st) break;
        for (size_t k = 0; k < npair; k++) {
            size_t gk = gi + k;
            for (int t = 0; t < 4; t++) {
                if (!(mask >> t & 1u) || t / 2 >= nd) continue;
                dpa_composed *c = &tmp[k][t / 2][t % 2];
                double tot = c->inf;
                for (size_t i = 0; i < c->n; i++) tot += c->mass[i];
                /* the group's bounds as an additive allowance: its relative part
                 * times h <= total mass */
                gg[gk].allow[t / 2][t % 2] =
                    (t % 2 == 0 ? c->tail_above : c->tail_outside) + c->roundoff + c->rel_err * tot * (1 + 1e-3);
                gg[gk].pm[t / 2][t % 2] = (dpa_grid_pmf){c->lo, c->n, c->step, c->mass, c->inf};
                c->mass = NULL;
                dpa_composed_free(c);
            }
            gl.v[gk].count = 1;
            gl.v[gk].mu = gl.v[gk].rr_eps = gl.v[gk].rr_delta = gl.v[gk].rate = NAN;
        }
    }
    if (!st) st = compose_leaves(a, &gl, gg, tau, nd, 1, 1, prepare, mask, rough, out, err);
out:
    if (gg)
        for (size_t gi = 0; gi < ng; gi++) leaf_grid_free(&gg[gi]);
    free(gg);
    free(g);
    free(gl.v);
    return st;
}

/* Compose leaf set L at (step, tau) into out[d][k] for d < nd directions
 * (d = 1: the reversed pairs) and the kinds in mask (bit 2 d + k; out[d][k]
 * of other bits is left alone). */
static dpa_status compose_set(dpa_pld_acct *a, const dpa_leafset *L, double step, double tau, int nd, long long Lc,
                              double m, int prepare, unsigned mask, unsigned rough, dpa_composed (*out)[2],
                              dpa_error *err)
{
    size_t nl = L->n;
    if (Lc <= 1 && nl > GROUP_MIN) return grouped_set(a, L, step, tau, nd, prepare, mask, rough, out, err);
    /* leaf truncation: all leaves together move at most tau/4 */
    double tau_leaf = fmax(0.25 * tau / fmax(1.0, L->total_count), 1e-300);
    leaf_grid *g = calloc(nl ? nl : 1, sizeof *g);
    if (!g) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    dpa_status st = leaf_grids(a, L->v, nl, step, tau_leaf, nd, mask, Lc <= 1, g, err);
    if (!st) st = compose_leaves(a, L, g, tau, nd, Lc, m, prepare, mask, rough, out, err);
    for (size_t j = 0; j < nl; j++) leaf_grid_free(&g[j]);
    free(g);
    return st;
}

/* Compose the kinds in mask (bit 2 d + k) at (step, tau), replacing them
 * only on success (a failed build keeps the previous compositions). */
static dpa_status build(dpa_pld_acct *a, unsigned mask, unsigned rough, double step, double tau, dpa_error *err)
{
    double m = 1;
    long long Lc = two_stage_plan(a, step, tau, &m);
    dpa_composed tmp[2][2];
    memset(tmp, 0, sizeof tmp);
    dpa_status st = compose_set(a, a->leaves, step, tau, a->ndir, Lc, m, 1, mask, rough, tmp, err);
    if (st) return st;
    for (int t = 0; t < 4; t++) {
        if (!(mask >> t & 1u)) continue;
        dpa_composed_free(&a->comp[t / 2][t % 2]);
        a->comp[t / 2][t % 2] = tmp[t / 2][t % 2];
        a->cstep[t / 2][t % 2] = step;
        a->ctau[t / 2][t % 2] = tau;
        a->crough[t / 2][t % 2] = (rough >> t) & 1;
    }
    /* later queries start from the finest grid built so far */
    if (!a->built || step < a->step) a->step = step;
    if (!a->built || tau < a->tau) a->tau = tau;
    a->built = 1;
    return DPA_OK;
}

/* Atom lattice of the composition: the spacing b of the atom-only leaf with
 * the largest count whose finite atoms are all integer multiples of b (RR,
 * pure, approx, discrete Laplace, Laplace); 0 if there is none.  A grid step dividing
 * b puts those atoms on grid points, where both discretizations are exact;
 * off the grid an atom costs first-order accuracy. */
static double atom_lattice(const dpa_pld_acct *a)
{
    double best_b = 0, best_k = 0;
    for (size_t i = 0; i < a->leaves->n; i++) {
        const dpa_pair *p = a->leaves->v[i].pair;
        if (!p || !p->natoms || a->leaves->v[i].count <= best_k) continue;
        double b = INFINITY;
        for (size_t j = 0; j < p->natoms; j++) {
            double w = fabs(p->atoms[j].w);
            if (isfinite(w) && w > 0 && p->atoms[j].la > -INFINITY && w < b) b = w;
        }
        if (!isfinite(b)) continue;
        int ok = 1;
        for (size_t j = 0; j < p->natoms && ok; j++) {
            double w = p->atoms[j].w;
            if (!isfinite(w)) continue;
            double r = w / b;
            ok = fabs(r - round(r)) <= ATOM_LATTICE_TOL * fmax(1.0, fabs(r));
        }
        if (ok) { best_b = b; best_k = a->leaves->v[i].count; }
    }
    return best_b;
}

/* The largest step <= step that divides the atom lattice (if any). */
double dpa_pld_align_step(const dpa_pld_acct *a, double step)
{
    if (a->opt.grid_step > 0) return step;
    double b = atom_lattice(a);
    if (!(b > 0)) return step;
    return b / ceil(b / step * (1 - 1e-12));
}

/* A rough loss variance of a leaf set (a scale, not a bound): composite
 * leaves as Poisson subsampling of their inner composition. */
static double set_var_estimate(const dpa_leafset *L)
{
    double v = 0;
    for (size_t i = 0; i < L->n; i++) {
        const dpa_leaf *l = &L->v[i];
        double vi = l->pair ? dpa_pair_var_estimate(l->pair)
                            : l->rate * l->rate * expm1(fmin(set_var_estimate(l->inner), 50.0));
        v += l->count * vi;
    }
    return v;
}

/* A Gaussian-DP estimate of eps(delta) for the composition (mu^2 = sum of
 * loss variances): only used to size the first grid. */
double dpa_pld_eps_estimate(const dpa_pld_acct *a, double delta)
{
    double v = set_var_estimate(a->leaves);
    double up, lo;
    dpa_exact_epsilon(sqrt(v), delta, &up, &lo);
    return isfinite(up) ? up : 1.0;
}

/* First grid step at the target gap accuracy * max(1, eps), from the error
 * model of the composition's shape: C k step^2 (one repeated leaf with
 * atoms), C k step^2 / sqrt(eps) (one repeated continuous leaf; eps held at
 * >= 1), C K step^2 / sqrt(eps) (several distinct leaves). */
double dpa_pld_initial_step(const dpa_pld_acct *a, double acc, double eps)
{
    if (a->opt.grid_step > 0) return a->opt.grid_step;
    double k = fmax(1.0, a->leaves->total_count);
    double s;
    if (a->leaves->n == 1 && a->leaves->v[0].pair) {
        const dpa_pair *p = a->leaves->v[0].pair;
        int atoms = 0;
        for (size_t i = 0; i < p->natoms; i++) atoms |= isfinite(p->atoms[i].w);
        /* a continuous loss (subsampled Gaussians): the gap goes as
         * k step^2 / sqrt(eps), like the sets' below (measured C = 4.0 on
         * the DP-SGD example, eps 2.4, and on 10^6 steps, eps 10.7: with
         * k step^2 alone one constant cannot fit both, 2.6 and 1.2); with
         * atoms (Laplace, RR-like) the k step^2 model.  Fitted at eps >= 1:
         * below, the factor is held at its eps = 1 value (delta queries at
         * eps near 0 would otherwise get grids up to 5 times finer than
         * they need: DP-SGD's delta(0), 1.8 M points instead of 0.26 M) */
        double e = fmin(fmax(eps, 1.0), 1e3);
        s = atoms ? sqrt(acc * fmax(1.0, eps) / (STEP_MODEL_C_REPEAT * k))
                  : sqrt(acc * fmax(1.0, eps) * sqrt(e) / (STEP_MODEL_C_CONT * k));
    } else {
        /* several distinct leaves: measured gap ~ C' K step^2 / sqrt(eps)
         * with C' = 3.0-4.6 on subsampled Gaussian sets at delta 1e-5
         * (1000 distinct: 3.4, 100 distinct: 3.65); STEP_MODEL_C_SET keeps
         * a margin */
        double e = fmin(fmax(eps, 1e-3), 1e3);
        s = sqrt(acc * fmax(1.0, eps) * sqrt(e) / (STEP_MODEL_C_SET * k));
    }
    return dpa_pld_align_step(a, fmin(STEP_MAX, fmax(DPA_PLD_STEP_MIN, s)));
}

/* comp[d][k] exists at (step, tau) or finer */
int dpa_pld_have(const dpa_pld_acct *a, int d, int k, double step, double tau)
{
    return a->cstep[d][k] > 0 && a->cstep[d][k] <= step && a->ctau[d][k] <= tau;
}

/* the same, and composed with the accurate path (what the binding
 * direction needs) */
int dpa_pld_have_exact(const dpa_pld_acct *a, int d, int k, double step, double tau)
{
    return dpa_pld_have(a, d, k, step, tau) && !a->crough[d][k];
}

/* The bits of mask (2 d + k) not present at (step, tau); bits of rough
 * may be present as rough compositions. */
static unsigned missing(const dpa_pld_acct *a, unsigned mask, unsigned rough, double step, double tau)
{
    unsigned need = 0;
    for (int t = 0; t < 4; t++)
        if ((mask >> t & 1u) && !((rough >> t & 1u) ? dpa_pld_have : dpa_pld_have_exact)(a, t / 2, t % 2, step, tau)) need |= 1u << t;
    return need;
}

dpa_status dpa_pld_ensure(dpa_pld_acct *a, unsigned mask, unsigned rough, double step, double tau, double *used,
                          dpa_error *err)
{
    unsigned need = missing(a, mask, rough, step, tau);
    *used = step;
    if (!need) return DPA_OK;
    for (int i = 0; i < 40; i++) {
        dpa_status st = build(a, need, rough & need, step, tau, err);
        *used = step;
        if (st != DPA_ENOMEM || a->opt.grid_step > 0 || step * 2 > 1.0) return st;
        /* coarsen; alignment to the atom lattice cannot go past its spacing */
        double next = dpa_pld_align_step(a, step * 2);
        step = next > step ? next : step * 2;
    }
    return dpa_error_set(err, DPA_ENOMEM, "no grid step fits the grid limit");
}

/* The kinds of mask at (*step, tau): a refinement builds exactly at *step
 * what is missing (a grid that does not fit is an error, and the caller
 * keeps its last build); otherwise ensure, which may coarsen *step to fit. */
dpa_status dpa_pld_obtain(dpa_pld_acct *a, unsigned mask, unsigned rough, double *step, double tau, int refining,
                          dpa_error *err)
{
    if (!refining) return dpa_pld_ensure(a, mask, rough, *step, tau, step, err);
    unsigned need = missing(a, mask, rough, *step, tau);
    return need ? build(a, need, rough & need, *step, tau, err) : DPA_OK;
}
