/* The PLD method's builds: the compositions a query asks for (kept in the
 * state, pld_acct.h), each leaf set composed from its leaves' grid measures
 * (each leaf's window from its own tails and the query's), a composite
 * leaf through its inner composition on the same grid (recursively), groups
 * of many distinct leaves, the leaves discretized on the worker threads.
 * The grid measures of one leaf are made in leaf_grid.c, precompose.c and
 * subsampled.c, the compositions in build_compose.c (one or two stages),
 * the grid steps in step.c (pld_build.h).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pld/pld_acct.h"
#include "pld/pld_build.h"

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

static dpa_status compose_set(dpa_pld_acct *a, const dpa_leafset *L, double step, double tau, int nd, long long Lc,
                              double m, int prepare, unsigned mask, unsigned rough, dpa_composed (*out)[2],
                              dpa_error *err);

/* Grid measures of a random allocation leaf: the inner composition on the
 * same grid (both directions when it is asymmetric), mapped by
 * dpa_pld_ra_grid (docs/sampling.md §4), its directions and kinds on the
 * worker threads (each its own workspace; composite leaves are built in
 * the calling thread, so the workers are free).  The lower remove measure
 * is trimmed first: with a symmetric inner set the add direction reads it
 * too. */
typedef struct ra_task {
    dpa_pld_acct *a;
    dpa_composed (*ic)[2];
    int ind, nd;
    double T, step, tau_leaf;
    dpa_pld_leaf_grid *g;
    dpa_status st[4];
    dpa_error err[4];
} ra_task;

static void ra_task_run(void *ctx, size_t t, int worker)
{
    ra_task *r = ctx;
    int d = (int)(t / 2), k = (int)(t % 2);
    if (d >= r->nd) return;
    r->st[t] = dpa_pld_ra_grid(r->a, &r->a->ws[worker], &r->ic[d < r->ind ? d : 0][k], r->T, d, k, r->step,
                               r->tau_leaf, &r->g->pm[d][k], &r->g->allow[d][k], &r->err[t]);
}

static dpa_status ra_leaf_grid(dpa_pld_acct *a, const dpa_leaf *l, double step, double tau_leaf, int nd,
                               dpa_pld_leaf_grid *g, dpa_error *err)
{
    const dpa_leafset *in = l->inner;
    int ind = in->asymmetric ? 2 : 1;
    dpa_composed ic[2][2];
    memset(ic, 0, sizeof ic);
    dpa_status st = compose_set(a, in, step, tau_leaf, ind, 1, 1, 0, 0xFu, 0u, ic, err);
    if (!st) {
        dpa_pld_trim_lower_bmass(&ic[0][1]);
        ra_task r = {a, ic, ind, nd, l->ra_steps, step, tau_leaf, g, {DPA_OK, DPA_OK, DPA_OK, DPA_OK}, {{0}}};
        dpa_parallel_for(4, a->nthreads, ra_task_run, &r);
        for (int t = 0; t < 4 && !st; t++)
            if ((st = r.st[t]) && err) *err = r.err[t];
    }
    for (int d = 0; d < 2; d++)
        for (int k = 0; k < 2; k++) dpa_composed_free(&ic[d][k]);
    return st;
}

/* Grid measures of a composite leaf: the inner composition on the same grid
 * (remove direction, and for poisson the inner reversed direction too),
 * mapped through the subsampling (dpa_pld_subsampled_atoms; sample additionally
 * symmetrized), then discretized like any atom pair. */
static dpa_status composite_leaf_grid(dpa_pld_acct *a, const dpa_leaf *l, double step, double tau_leaf, int nd,
                                      dpa_pld_leaf_grid *g, dpa_error *err)
{
    if (l->ra_steps > 0) return ra_leaf_grid(a, l, step, tau_leaf, nd, g, err);
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
            if (d == 0 && k == 1) dpa_pld_trim_lower_bmass(mu);
            /* the inner measure's bounds as an additive allowance: h <= total
             * mass bounds the relative part */
            double tot = mu->inf;
            for (size_t i = 0; i < mu->n; i++) tot += mu->mass[i];
            double ain = (k == 0 ? mu->tail_above : mu->tail_outside) + mu->roundoff + mu->rel_err * tot * (1 + 1e-3);
            double werr;
            long double bsum;
            dpa_pair *p = dpa_pld_subsampled_atoms(mu, q, d, &werr, &bsum, err);
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
            st = dpa_pld_pair_kind_grid(a, p, step, tau_leaf, k, &g->pm[d][k], &snap, err);
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

/* Discretization of the plain leaves of a range, run by the workers
 * (composite leaves are done first, by the caller: their inner
 * compositions use the workers themselves). */
typedef struct leaf_task {
    dpa_pld_acct *a;
    const dpa_leaf *v;   /* the range's leaves */
    dpa_pld_leaf_grid *g;
    double step, tau_leaf;
    int nd;
    unsigned mask;
    int pre_ok;          /* precomposition allowed (single-stage builds) */
    int inner_threads;   /* threads for the two directions of one leaf */
    dpa_status *st;
    dpa_error *err;
} leaf_task;

/* Free the grid measures a build does not compose (mask bits 2 d + k). */
static void drop_unused(dpa_pld_leaf_grid *g, unsigned mask)
{
    for (int t = 0; t < 4; t++)
        if (!(mask >> t & 1u)) dpa_grid_pmf_free(&g->pm[t / 2][t % 2]);
}

static void leaf_task_run(void *ctx, size_t i, int worker)
{
    leaf_task *t = ctx;
    (void)worker;
    if (t->v[i].inner) return;
    if (t->pre_ok && dpa_pld_wants_precomposition(&t->v[i], t->step))
        t->st[i] = dpa_pld_precomposed_leaf_grid(t->a, &t->a->ws[worker], &t->v[i], t->step, t->tau_leaf, t->nd,
                                                 t->mask, &t->g[i], &t->err[i]);
    else
        t->st[i] = dpa_pld_plain_leaf_grid(t->a, t->v[i].pair, t->step, t->tau_leaf, t->nd, t->mask, t->inner_threads,
                                   &t->g[i], &t->err[i]);
    drop_unused(&t->g[i], t->mask);
}

/* Grid measures g[0 .. n) of leaves v[0 .. n) (composite leaves first, in
 * this thread; then the plain ones on the workers). */
static dpa_status leaf_grids(dpa_pld_acct *a, const dpa_leaf *v, size_t n, double step, double tau_leaf, int nd,
                             unsigned mask, int pre_ok, dpa_pld_leaf_grid *g, dpa_error *err)
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
    /* random allocation with K > 1 (docs/sampling.md §4): its 1-of-T' leaves
     * bound it from above only, the binned-maximum leaf from below only; the
     * other kind of each is the identity (mass 1 at loss 0, h = (1 - x)_+,
     * below every pair's curve and neutral in a composition) */
    for (size_t j = 0; j < n && !st; j++) {
        int k = v[j].ra_upper_only == 2 ? 1 : v[j].ra_lower_only ? 0 : -1;
        for (int d = 0; d < nd && k >= 0 && !st; d++) {
            if (!(mask >> (2 * d + k) & 1u)) continue;
            dpa_grid_pmf *pm = &g[j].pm[d][k];
            dpa_grid_pmf_free(pm);
            pm->mass = malloc(sizeof *pm->mass);
            if (!pm->mass) st = dpa_error_set(err, DPA_ENOMEM, "out of memory");
            else {
                pm->mass[0] = 1;
                pm->lo = 0;
                pm->n = 1;
                pm->step = step;
                pm->inf = 0;
                g[j].allow[d][k] = 0;
            }
        }
    }
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
    dpa_pld_leaf_grid *gg = calloc(ng, sizeof *gg);
    /* two groups at a time: their leaves' grids in one parallel loop, their
     * up to 2 x 3 compositions in another (one group's three compositions
     * on two threads would leave one idle a third of the time) */
    dpa_pld_leaf_grid *g = calloc(2 * GROUP_SIZE, sizeof *g);
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
        dpa_pld_leaf_grid *gs[2];
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
        if (!st) st = dpa_pld_compose_sets(a, npair, subs, gs, tau_g, nd, 1, 1, 0, mask, rough, outs, err);
        for (size_t j = 0; j < nall; j++) dpa_pld_leaf_grid_free(&g[j]);
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
    if (!st) st = dpa_pld_compose_leaves(a, &gl, gg, tau, nd, 1, 1, prepare, mask, rough, out, err);
out:
    if (gg)
        for (size_t gi = 0; gi < ng; gi++) dpa_pld_leaf_grid_free(&gg[gi]);
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
    dpa_pld_leaf_grid *g = calloc(nl ? nl : 1, sizeof *g);
    if (!g) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    dpa_status st = leaf_grids(a, L->v, nl, step, tau_leaf, nd, mask, Lc <= 1, g, err);
    if (!st) st = dpa_pld_compose_leaves(a, L, g, tau, nd, Lc, m, prepare, mask, rough, out, err);
    for (size_t j = 0; j < nl; j++) dpa_pld_leaf_grid_free(&g[j]);
    free(g);
    return st;
}

/* Compose the kinds in mask (bit 2 d + k) at (step, tau), replacing them
 * only on success (a failed build keeps the previous compositions). */
static dpa_status build(dpa_pld_acct *a, unsigned mask, unsigned rough, double step, double tau, dpa_error *err)
{
    double m = 1;
    long long Lc = dpa_pld_two_stage_plan(a, step, tau, &m);
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
