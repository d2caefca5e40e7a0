/* Discretization of a pair's privacy loss onto a uniform grid, in the
 * pessimistic (upper-bounding) and optimistic (lower-bounding) directions.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Notation: grid points z_i = (lo + i) step, x_i = e^{z_i}, cells
 * C_i = (z_i, z_{i+1}].  For a pair (A, B) with loss W, the hockey-stick
 * curve h(x) = E_A[(1 - x e^{-W})_+] is convex in x with h'(x) = -B(W > log x).
 *
 * Pessimistic (connect-the-dots, Doroshenko et al. 2022): the mass of each
 * cell is split between its end points, b_i = (A(C_i) - x_i B(C_i)) / (1 - e^{-step})
 * to z_{i+1} and the rest to z_i.  This keeps A-mass and E_A[e^{-W}], matches
 * h at every grid point and is linear in between, so it lies above the convex h
 * (a chord).  Mass below the window goes up to z_0 (rounding losses up can
 * only raise h), mass above goes to +inf.
 *
 * Optimistic: a garbling of the pair onto the grid (build_opt below):
 * outputs are merged so that every merged output has likelihood ratio exactly
 * e^{z_i}.  Post-processing can only lower h (Blackwell), and merging keeps
 * A- and B-mass, so compositions lose O(k step^2), like connect-the-dots.
 * The merges sweep up from the bottom and down from the top (so atoms at
 * either end are balanced exactly); leftovers that cannot be balanced are
 * rounded down to the grid.
 *
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "pld/pld.h"

void dpa_grid_pmf_free(dpa_grid_pmf *g)
{
    if (!g) return;
    free(g->mass);
    g->mass = NULL;
    g->n = 0;
}

/* Adaptive cells: widths up to WIDE_MAX steps while max(A, B)(C) w^2 <=
 * WIDE_RHO (log: WIDE_LOG_RHO).  With a few thousand cells this adds at most
 * ~1e-3 step^2 to a step's discretization error, against ~step^2 / 6 from the
 * one-step cells holding the mass. */
#define WIDE_MAX 4096
#define WIDE_LOG_RHO (-11.512925464970229) /* log 1e-5 */
/* Largest grid index magnitude (2^52: exact in double and long long). */
#define GRID_INDEX_MAX 4503599627370496.0
/* Atoms this close (relative) to a grid point are snapped onto it: 64 ulp. */
#define ATOM_SNAP (64 * DPA_UNIT_ROUNDOFF)
/* A cell whose excess over its left end point is below this fraction of
 * its mass times the step holds (snapped) atoms at that point. */
#define LEFT_END_TOL 1e-12

void dpa_cells_free(dpa_cells *c)
{
    if (!c) return;
    free(c->la);
    free(c->lb);
    free(c->bk);
    c->la = c->lb = NULL;
    c->bk = NULL;
}

/* grid index and loss of cell end point j */
static long long cb(const dpa_cells *c, size_t j)
{
    return c->bk ? c->bk[j] : c->lo + (long long)j;
}

static double cz(const dpa_cells *c, size_t j)
{
    return (double)cb(c, j) * c->step;
}

/* Continuous part on adaptive cells: from the bottom of the window, each
 * cell is as wide as allowed (up to WIDE_MAX steps, widths at most doubling
 * from one cell to the next) with max(A, B)(C) w^2 <= WIDE_RHO.  One tail
 * evaluation per cell, plus one per halving and per doubling tried. */
static dpa_status adaptive_cells(const dpa_pair *p, dpa_cells *c, long long hi, dpa_error *err)
{
    size_t cap = 1024, nc = 0;
    long long *bk = malloc((cap + 1) * sizeof *bk);
    double *la = malloc(cap * sizeof *la), *lb = malloc(cap * sizeof *lb);
    if (!bk || !la || !lb) goto nomem;
    double half_a = p->lca - M_LN2, half_b = p->lcb - M_LN2, step = c->step;
    double prev[4], cur[4];
    long long pos = c->lo, w = 1;
    dpa_pair_ctail(p, (double)pos * step, prev);
    c->left_a += exp(prev[1]);
    c->left_b += exp(prev[3]);
    bk[0] = pos;
    while (pos < hi) {
        /* try the previous width first; double it only when the criterion
         * holds with room for the mass to double (one tail evaluation per
         * cell where the widths settle, as in the bulk, instead of a failed
         * doubling each time) */
        long long wt = w < hi - pos ? w : hi - pos;
        double a, b, crit;
        for (;;) {
            dpa_pair_ctail(p, (double)(pos + wt) * step, cur);
            a = (prev[0] <= half_a) ? dpa_log_sub_exp_clamped(prev[0], cur[0]) : dpa_log_sub_exp_clamped(cur[1], prev[1]);
            b = (prev[2] <= half_b) ? dpa_log_sub_exp_clamped(prev[2], cur[2]) : dpa_log_sub_exp_clamped(cur[3], prev[3]);
            crit = fmax(a, b) + 2 * log((double)wt);
            if (wt == 1 || crit <= WIDE_LOG_RHO) break;
            wt /= 2;
        }
        if (crit <= WIDE_LOG_RHO - 3 * M_LN2 && wt == w && 2 * wt <= WIDE_MAX && 2 * wt <= hi - pos) {
            double c2[4], a2, b2;
            dpa_pair_ctail(p, (double)(pos + 2 * wt) * step, c2);
            a2 = (prev[0] <= half_a) ? dpa_log_sub_exp_clamped(prev[0], c2[0]) : dpa_log_sub_exp_clamped(c2[1], prev[1]);
            b2 = (prev[2] <= half_b) ? dpa_log_sub_exp_clamped(prev[2], c2[2]) : dpa_log_sub_exp_clamped(c2[3], prev[3]);
            if (fmax(a2, b2) + 2 * log((double)(2 * wt)) <= WIDE_LOG_RHO) {
                wt *= 2;
                a = a2;
                b = b2;
                memcpy(cur, c2, sizeof c2);
            }
        }
        if (nc == cap) {
            cap *= 2;
            long long *nb = realloc(bk, (cap + 1) * sizeof *bk);
            if (nb) bk = nb;
            double *na = realloc(la, cap * sizeof *la);
            if (na) la = na;
            double *nl = realloc(lb, cap * sizeof *lb);
            if (nl) lb = nl;
            if (!nb || !na || !nl) goto nomem;
        }
        la[nc] = a;
        lb[nc] = b;
        pos += wt;
        bk[++nc] = pos;
        w = wt;
        memcpy(prev, cur, sizeof prev);
    }
    c->right_a += exp(prev[0]);
    c->right_b += exp(prev[2]);
    c->bk = bk;
    c->la = la;
    c->lb = lb;
    c->nc = nc;
    return DPA_OK;
nomem:
    free(bk);
    free(la);
    free(lb);
    return dpa_error_set(err, DPA_ENOMEM, "out of memory (grid cells)");
}

/* Add e^l to the running sum e^m s (s >= 1 once anything was added). */
static void run_add(double *m, double *s, double l)
{
    if (l == -INFINITY) return;
    if (l <= *m) {
        *s += exp(l - *m);
    } else {
        *s = *s * exp(*m - l) + 1;
        *m = l;
    }
}

/* 1 if p is a Gaussian mixture, or a transform of one. */
static int has_mixture(const dpa_pair *p)
{
    for (; p; p = p->base)
        if (p->kind == DPA_PAIR_MIXGAUSS)
            return 1;
    return 0;
}

dpa_status dpa_cells_build(const dpa_pair *p, double step, double tau, int both, size_t max_points,
                           dpa_cells *c, dpa_error *err)
{
    memset(c, 0, sizeof *c);
    if (!(step > 0) || !(tau > 0)) return dpa_error_set(err, DPA_EINVAL, "discretize: bad step or tau");
    double tlo, thi;
    dpa_error e2;
    dpa_status st = dpa_pair_support(p, tau, both, &tlo, &thi, &e2);
    if (st && st != DPA_ENUMERIC) {
        if (err) *err = e2;
        return st;
    }
    /* A support that cannot be bounded (a component of a mixture whose loss
     * is near mu^2/2 = 5e15) or does not fit the grid: the window is cut to
     * [-H, H] around 0, the largest the grid holds.  This is sound: the mass
     * above the window is the right tail (at +inf in the pessimistic
     * measure, at the last point in the optimistic one), the mass below it
     * the left tail (rounded up to the first point, or dropped); only the
     * accuracy of losses far from 0 is given up (docs/mechanisms.md §2). */
    /* Where the support cannot be bounded at all, or (Gaussian mixtures
     * only: a component far beyond the others) is wider than the grid.  For
     * other pairs a bounded support wider than the grid stays an error, which
     * the callers answer with a coarser step (a cut window at a fine step
     * would turn a refinement into a useless bound). */
    {
        double h = fmin(DPA_GRID_LOSS_MAX, 0.5 * ((double)max_points - 4) * step);
        if (st || (has_mixture(p) && !(floor(thi / step) - ceil(tlo / step) + 4 <= (double)max_points))) {
            if (st) {
                tlo = -h;
                thi = h;
            }
            tlo = fmax(tlo, -h);
            thi = fmin(thi, h);
            if (tlo > thi) { /* the whole support beyond one end */
                if (tlo >= h) tlo = thi = h;
                else tlo = thi = -h;
            }
        }
    }
    double flo = floor(tlo / step), fhi = ceil(thi / step);
    /* the end points, as computed below ((lo + i) * step in floating point),
     * must enclose the support: an atom an ulp above the last point would
     * otherwise be treated as mass above the window */
    while (flo * step > tlo) flo -= 1;
    while (fhi * step < thi) fhi += 1;
    fhi += 1; /* a snapped top atom needs a cell above its grid point */
    if (fhi <= flo) fhi = flo + 1;
    /* grid indices must be exact integers in double and in long long */
    if (!(fabs(flo) < GRID_INDEX_MAX && fabs(fhi) < GRID_INDEX_MAX))
        return dpa_error_set(err, DPA_ENOMEM,
                             "privacy losses in [%g, %g] are too large for grid step %g; use a larger grid step",
                             tlo, thi, step);
    if (!(fhi - flo + 1 <= (double)max_points))
        return dpa_error_set(err, DPA_ENOMEM,
                             "a mechanism's privacy loss spans [%g, %g], which needs %.3g grid points at step %g (limit %zu); "
                             "use a larger grid step or a lower accuracy",
                             tlo, thi, fhi - flo + 1, step, max_points);
    c->lo = (long long)flo;
    c->n = (size_t)(fhi - flo) + 1;
    c->step = step;
    c->slack_lo = p->slack_lo;
    c->slack_hi = p->slack_hi;
    if (p->natoms == 0 && (p->lca > -INFINITY || p->lcb > -INFINITY))
        return adaptive_cells(p, c, (long long)fhi, err);
    size_t nc = c->n - 1;
    c->nc = nc;
    c->la = malloc(nc * sizeof *c->la);
    c->lb = malloc(nc * sizeof *c->lb);
    if (!c->la || !c->lb) {
        dpa_cells_free(c);
        return dpa_error_set(err, DPA_ENOMEM, "out of memory (%zu grid cells)", nc);
    }
    for (size_t i = 0; i < nc; i++) c->la[i] = c->lb[i] = -INFINITY;

    if (p->lca > -INFINITY || p->lcb > -INFINITY) {
        /* Difference the tail on the side where it is small, so that cells
         * far in either tail keep their relative accuracy. */
        double half_a = p->lca - M_LN2, half_b = p->lcb - M_LN2;
        double prev[4], cur[4];
        dpa_pair_ctail(p, (double)c->lo * step, prev);
        c->left_a += exp(prev[1]);
        c->left_b += exp(prev[3]);
        for (size_t i = 0; i < nc; i++) {
            dpa_pair_ctail(p, (double)(c->lo + (long long)i + 1) * step, cur);
            c->la[i] = (prev[0] <= half_a) ? dpa_log_sub_exp_clamped(prev[0], cur[0]) : dpa_log_sub_exp_clamped(cur[1], prev[1]);
            c->lb[i] = (prev[2] <= half_b) ? dpa_log_sub_exp_clamped(prev[2], cur[2]) : dpa_log_sub_exp_clamped(cur[3], prev[3]);
            memcpy(prev, cur, sizeof prev);
        }
        c->right_a += exp(prev[0]);
        c->right_b += exp(prev[2]);
    }
    double z0 = (double)c->lo * step, zn = (double)(c->lo + (long long)nc) * step;
    /* atoms of one cell (consecutive: atoms are sorted) are summed relative
     * to the largest log mass of the run, one exp per atom and one log per
     * run, then added to the cell */
    size_t run = (size_t)-1;
    double ma = -INFINITY, sa = 0, mb = -INFINITY, sb = 0;
    for (size_t k = 0; k < p->natoms; k++) {
        const dpa_atom *a = &p->atoms[k];
        if (a->w == INFINITY) {
            c->inf_a += exp(a->la);
            c->inf_rel = fmax(c->inf_rel, 4 * DPA_UNIT_ROUNDOFF * (fabs(a->la) + 4));
            continue;
        }
        if (a->w == -INFINITY) {
            c->ninf_b += exp(a->lb);
            c->inf_rel = fmax(c->inf_rel, 4 * DPA_UNIT_ROUNDOFF * (fabs(a->lb) + 4));
            continue;
        }
        /* an atom within ATOM_SNAP relative of a grid point is that grid
         * point (the grid product itself is only accurate to an ulp): it is
         * put at the left end of the cell above it, where both
         * discretizations keep it exactly */
        double r = a->w / step, g = round(r), fi;
        int snapped = fabs(r - g) <= ATOM_SNAP * fmax(1.0, fabs(g)) &&
                      g >= (double)c->lo && g < (double)(c->lo + (long long)nc);
        if (snapped) {
            fi = g - (double)c->lo;
            c->snap_shift = fmax(c->snap_shift, fabs(r - g) * step + ATOM_SNAP * fabs(a->w));
        } else {
            if (a->w <= z0) { c->left_a += exp(a->la); c->left_b += exp(a->lb); continue; }
            if (a->w > zn) { c->right_a += exp(a->la); c->right_b += exp(a->lb); continue; }
            fi = ceil(r) - (double)c->lo - 1.0;
        }
        size_t i = fi < 0 ? 0 : (fi > (double)(nc - 1) ? nc - 1 : (size_t)fi);
        if (i != run) {
            if (run != (size_t)-1) {
                c->la[run] = dpa_log_add_exp(c->la[run], ma + log(sa));
                c->lb[run] = dpa_log_add_exp(c->lb[run], mb + log(sb));
            }
            run = i;
            ma = mb = -INFINITY;
            sa = sb = 0;
        }
        run_add(&ma, &sa, a->la);
        run_add(&mb, &sb, a->lb);
    }
    if (run != (size_t)-1) {
        c->la[run] = dpa_log_add_exp(c->la[run], ma + log(sa));
        c->lb[run] = dpa_log_add_exp(c->lb[run], mb + log(sb));
    }
    return DPA_OK;
}

/* The reversed pair (B, A) has loss -W: cells mirror, A and B swap.  An atom
 * at a grid point lands on the closed end of its mirrored cell; the split and
 * excess formulas are exact for atoms at either end, so nothing is lost. */
dpa_status dpa_cells_reverse(const dpa_cells *c, dpa_cells *out, dpa_error *err)
{
    memset(out, 0, sizeof *out);
    size_t nc = c->nc;
    out->n = c->n;
    out->nc = nc;
    out->step = c->step;
    out->lo = -(c->lo + (long long)c->n - 1);
    out->la = malloc(nc * sizeof *out->la);
    out->lb = malloc(nc * sizeof *out->lb);
    if (c->bk) out->bk = malloc((nc + 1) * sizeof *out->bk);
    if (!out->la || !out->lb || (c->bk && !out->bk)) {
        dpa_cells_free(out);
        return dpa_error_set(err, DPA_ENOMEM, "out of memory (%zu grid cells)", nc);
    }
    for (size_t i = 0; i < nc; i++) {
        out->la[i] = c->lb[nc - 1 - i];
        out->lb[i] = c->la[nc - 1 - i];
    }
    if (c->bk)
        for (size_t j = 0; j <= nc; j++) out->bk[j] = -c->bk[nc - j];
    out->left_a = c->right_b;
    out->left_b = c->right_a;
    out->right_a = c->left_b;
    out->right_b = c->left_a;
    out->inf_a = c->ninf_b;
    out->ninf_b = c->inf_a;
    out->inf_rel = c->inf_rel;
    out->slack_lo = c->slack_hi;
    out->slack_hi = c->slack_lo;
    out->snap_shift = c->snap_shift;
    return DPA_OK;
}

/* Connect-the-dots split of cell i of width `step` (loss units): mass to the
 * right end point (b) given A(C_i) = e^{la}, B(C_i) = e^{lb}; the rest stays
 * at the left end point. */
static double split_right(double la, double lb, double zi, double step, double A)
{
    if (A == 0) return 0;
    double x = zi + lb - la;            /* <= 0 in exact arithmetic */
    if (x > 0) x = 0;
    double bp = A * -expm1(x);          /* B_i = A(C_i) - x_i B(C_i) */
    double b = bp / -expm1(-step);
    if (!(b >= 0)) b = 0;
    if (b > A) b = A;
    return b;
}

static dpa_status pmf_alloc(dpa_grid_pmf *g, const dpa_cells *c, dpa_error *err)
{
    g->lo = c->lo;
    g->n = c->n;
    g->step = c->step;
    g->inf = 0;
    g->mass = calloc(c->n, sizeof *g->mass);
    if (!g->mass) return dpa_error_set(err, DPA_ENOMEM, "out of memory (%zu grid points)", c->n);
    return DPA_OK;
}

/* Excess of a portion with log masses (la, lb) relative to the grid loss z:
 * A - e^z B = A (1 - e^{z + lb - la}), positive when the portion's losses
 * exceed z.  Computed with expm1 so that portions whose loss is within a grid
 * step of z keep their relative accuracy. */
static double excess(double A, double la, double lb, double z)
{
    if (A == 0) return 0;
    if (lb == -INFINITY) return A;
    return A * -expm1(z + lb - la);
}

/* Optimistic grid measure by garbling (see the file comment).
 *
 * Up-sweep (from the bottom): grid point t holds an "open bin" whose losses
 * lie below z_t (negative excess) and pulls proportional portions of the next
 * cells (positive excess relative to z_t) until the excess is 0, i.e. the
 * merged outputs have likelihood ratio exactly e^{z_t}; the rest of the last
 * cell pulled opens the bin of the next point.  Down-sweep (from the top):
 * the mirror image, bins with losses above z_t pulling cells below.  The two
 * sweeps meet at a cell of small mass in the middle of the distribution; the
 * up-sweep's open bin then pulls from the down-sweep's.  Merging outputs is
 * post-processing of the pair, so the result is dominated by it, and it keeps
 * A- and B-mass (second-order accurate).  What cannot be balanced is placed at
 * the highest grid point not above its loss (rounding losses down only lowers
 * the hockey-stick curve). */
typedef struct bin { size_t t; double A, E; } bin;

/* Per-cell quantities shared by the candidates: A-mass and the excess of the
 * whole cell relative to its left (>= 0) and right (<= 0) end points. */
typedef struct cellx { double *A, *eL, *eR; } cellx;

/* excess of cell m relative to grid point t: the precomputed values for
 * t = m, m + 1, else computed */
static double cell_excess(const dpa_cells *c, const cellx *x, size_t m, size_t t)
{
    if (t == m) return x->eL[m];
    if (t == m + 1) return x->eR[m];
    return excess(x->A[m], c->la[m], c->lb[m], cz(c, t));
}

/* grid-point (measure) index of cell end point t */
static size_t mi(const dpa_cells *c, size_t t)
{
    return (size_t)(cb(c, t) - c->lo);
}

static void place_below(const dpa_cells *c, dpa_grid_pmf *opt, const bin *b)
{
    if (!(b->A > 0)) return;
    if (b->E >= 0) { opt->mass[mi(c, b->t)] += b->A; return; }
    double d = -log1p(-b->E / b->A);        /* loss - z_t < 0 */
    double idx = (double)mi(c, b->t) + floor(d / c->step);
    if (idx >= 0) opt->mass[(size_t)idx] += b->A; /* else dropped */
}

/* meeting cell: the cell of least A-mass among those between the 5% and
 * 95% points of the cells' A-mass (a dense cell there would leave a large
 * unbalanced remainder) */
static size_t meeting_cell(const dpa_cells *c, const cellx *x)
{
    size_t nc = c->nc, lo = 0, hi = nc - 1;
    double tot = 0, cum = 0;
    for (size_t m = 0; m < nc; m++) tot += x->A[m];
    for (size_t m = 0; m < nc; m++) {
        cum += x->A[m];
        if (cum < 0.05 * tot) lo = m + 1;
        if (cum <= 0.95 * tot) hi = m + 1;
    }
    if (hi >= nc) hi = nc - 1;
    if (lo > hi) lo = hi;
    size_t best = lo;
    for (size_t m = lo; m <= hi; m++)
        if (c->la[m] < c->la[best]) best = m;
    return best;
}

/* One candidate: cells 0..s up-swept, s+1..nc-1 down-swept (s = -1: all
 * down; s = nc - 1: all up).  opt->mass must be zero on entry. */
static void build_opt_at(const dpa_cells *c, const cellx *x, dpa_grid_pmf *opt, long s)
{
    size_t nc = c->nc;
#define Z(i) cz(c, (i))
#define M(t) opt->mass[mi(c, (t))]
#define W(m) ((double)(cb(c, (m) + 1) - cb(c, (m))) * c->step)
    /* ---- down-sweep over cells nc-1 .. s+1, seeded by the right tail ---- */
    bin hi = {nc, 0, 0};
    if (c->right_a > 0) {
        hi.A = c->right_a;
        hi.E = fmax(0.0, excess(c->right_a, log(c->right_a), log(c->right_b), Z(nc)));
    }
    for (size_t m = nc; m-- > (size_t)(s + 1);) {
        double A = x->A[m];
        if (A == 0) continue;
        if (x->eL[m] <= LEFT_END_TOL * W(m) * A) { M(m) += A; continue; }
        if (hi.A > 0 && hi.E > 0) {
            double e = cell_excess(c, x, m, hi.t); /* <= 0 */
            if (hi.E + e > 0) { hi.A += A; hi.E += e; continue; }
            double th = hi.E / -e;
            M(hi.t) += hi.A + th * A;
            A *= 1 - th;
            hi.E = fmax(0.0, (1 - th) * x->eL[m]);
        } else {
            if (hi.A > 0) M(hi.t) += hi.A; /* balanced exactly */
            hi.E = fmax(0.0, x->eL[m]);
        }
        hi.t = m;
        hi.A = A;
    }
    /* ---- up-sweep over cells 0 .. s, seeded by the left tail ---- */
    bin lo = {0, 0, 0};
    if (c->left_a > 0) {
        lo.A = c->left_a;
        lo.E = fmin(0.0, excess(c->left_a, log(c->left_a), log(c->left_b), Z(0)));
    }
    for (long mm = 0; mm <= s; mm++) {
        size_t m = (size_t)mm;
        double A = x->A[m];
        if (A == 0) continue;
        if (x->eL[m] <= LEFT_END_TOL * W(m) * A) { M(m) += A; continue; }
        if (lo.A > 0 && lo.E < 0) {
            double e = cell_excess(c, x, m, lo.t); /* >= 0 */
            if (lo.E + e < 0) { lo.A += A; lo.E += e; continue; }
            double th = -lo.E / e;
            M(lo.t) += lo.A + th * A;
            A *= 1 - th;
            lo.E = fmin(0.0, (1 - th) * x->eR[m]);
        } else {
            if (lo.A > 0) M(lo.t) += lo.A;
            lo.E = fmin(0.0, x->eR[m]);
        }
        lo.t = m + 1;
        lo.A = A;
    }
    /* ---- the up-sweep's open bin pulls from the down-sweep's ---- */
    if (lo.A > 0 && lo.E < 0 && hi.A > 0) {
        /* hi's loss is >= z_{hi.t} >= z_{lo.t}; B_hi = (A_hi - E_hi) e^{-z_hi} */
        double e = hi.A - (hi.A - hi.E) * exp(Z(lo.t) - Z(hi.t));
        if (e > 0 && lo.E + e >= 0) {
            double th = -lo.E / e;
            M(lo.t) += lo.A + th * hi.A;
            hi.A *= 1 - th;
            hi.E *= 1 - th;
            lo.A = 0;
        } else {
            lo.A += hi.A;   /* absorb all: the merged loss is below z_{lo.t} */
            lo.E += e;
            hi.A = 0;
        }
    }
    place_below(c, opt, &lo);
    place_below(c, opt, &hi);
    opt->inf = c->inf_a * (1 - c->inf_rel); /* rounded down (dpa_cells.inf_rel) */
#undef Z
#undef M
#undef W
}

/* sum_i h(e^{z_i}) over the grid and one point below it: the area under the hockey-stick curve in
 * loss coordinates.  It is monotone in the order that matters (if
 * h_1 <= h_2 pointwise, the area is smaller), so among valid candidates the
 * largest area is the least lossy; unlike E[Z] it is not raised by dropping
 * mass with negative loss.  Same positive-term recurrence as query.c. */
static double hockey_area(const dpa_grid_pmf *g)
{
    /* sum_{m=-1}^{n-2} D_m = sum_j c_j f(j + 1), f(K) = sum_{t=1}^K (1 - e^{-t step})
     * = K - ed (1 - ed^K) / omed: two sums without a serial recurrence
     * (four interleaved running powers).  The difference of the two sums
     * loses a few digits; the area only ranks candidates that are all
     * valid, so that costs at most a slightly worse choice, never soundness. */
    double ed = exp(-g->step), omed = -expm1(-g->step);
    double e4 = ed * ed * ed * ed, p[4] = {ed, ed * ed, ed * ed * ed, e4};
    double s1[4] = {0, 0, 0, 0}, s2[4] = {0, 0, 0, 0};
    size_t n = g->n, j = 0;
    for (; j + 4 <= n; j += 4) {
        for (int r = 0; r < 4; r++) {
            double c = g->mass[j + r];
            s1[r] += c * (double)(j + r + 1);
            s2[r] += c * (1 - p[r]); /* c (1 - ed^{j+r+1}) */
            p[r] *= e4;
        }
    }
    for (double pw = p[0]; j < n; j++) {
        s1[0] += g->mass[j] * (double)(j + 1);
        s2[0] += g->mass[j] * (1 - pw);
        pw *= ed;
    }
    return (s1[0] + s1[1] + s1[2] + s1[3]) - ed / omed * (s2[0] + s2[1] + s2[2] + s2[3]);
}

/* Candidate marker: round every loss down to the grid instead of merging. */
#define ROUND_DOWN (-2L)

/* Rounding down: each cell's A-mass at its left end point, the right tail at
 * the last point, the left tail dropped.  First-order accurate, but never
 * degenerate: on grids much coarser than the loss distribution all merges
 * collapse to one point and this candidate wins. */
static void build_round_down(const dpa_cells *c, const cellx *x, dpa_grid_pmf *opt)
{
    for (size_t m = 0; m < c->nc; m++) opt->mass[mi(c, m)] += x->A[m];
    opt->mass[c->n - 1] += c->right_a;
    opt->inf = c->inf_a * (1 - c->inf_rel); /* rounded down (dpa_cells.inf_rel) */
}

/* The optimistic measure: the best of two meeting points (all up; a light
 * cell in the middle, up below it and down above it) and plain rounding down.
 * An atom at the bottom of the support is balanced exactly by the up-sweep,
 * one at the top by the down-sweep. */
static dpa_status build_opt(const dpa_cells *c, dpa_grid_pmf *opt, dpa_error *err)
{
    size_t nc = c->nc;
    cellx x = {malloc(nc * sizeof(double)), malloc(nc * sizeof(double)), malloc(nc * sizeof(double))};
    double *best = malloc(c->n * sizeof *best);
    dpa_status st = DPA_OK;
    if (!x.A || !x.eL || !x.eR || !best) {
        st = dpa_error_set(err, DPA_ENOMEM, "out of memory (%zu grid points)", c->n);
        goto out;
    }
    for (size_t m = 0; m < nc; m++) {
        x.A[m] = exp(c->la[m]);
        x.eL[m] = excess(x.A[m], c->la[m], c->lb[m], cz(c, m));
        x.eR[m] = excess(x.A[m], c->la[m], c->lb[m], cz(c, m + 1));
    }
    long cand[3] = {(long)nc - 1, (long)meeting_cell(c, &x), ROUND_DOWN};
    double best_mean = -INFINITY;
    for (int k = 0; k < 3; k++) {
        if (k > 0 && cand[k] == cand[k - 1]) continue;
        memset(opt->mass, 0, c->n * sizeof *opt->mass);
        if (cand[k] == ROUND_DOWN) build_round_down(c, &x, opt);
        else build_opt_at(c, &x, opt, cand[k]);
        double m = hockey_area(opt);
        if (m > best_mean) {
            best_mean = m;
            memcpy(best, opt->mass, c->n * sizeof *best);
        }
    }
    memcpy(opt->mass, best, c->n * sizeof *best);
out:
    free(x.A);
    free(x.eL);
    free(x.eR);
    free(best);
    return st;
}

dpa_status dpa_cells_discretize(const dpa_cells *c, dpa_grid_pmf *pess, dpa_grid_pmf *opt, dpa_error *err)
{
    memset(pess, 0, sizeof *pess);
    memset(opt, 0, sizeof *opt);
    dpa_status st;
    if ((st = pmf_alloc(pess, c, err)) || (st = pmf_alloc(opt, c, err))) goto fail;
    double *core = pess->mass;
    for (size_t i = 0; i < c->nc; i++) {
        double A = exp(c->la[i]);
        double b = split_right(c->la[i], c->lb[i], cz(c, i), cz(c, i + 1) - cz(c, i), A);
        core[mi(c, i)] += A - b;
        core[mi(c, i + 1)] += b;
    }
    if ((st = build_opt(c, opt, err))) goto fail;
    /* pessimistic: the right tail goes to +inf, the left tail is rounded up
     * to the first point, truncation slack is moved to the safe side */
    core[0] += c->left_a + c->slack_lo;
    pess->inf = c->inf_a * (1 + c->inf_rel) + c->right_a + c->slack_hi;
    return DPA_OK;
fail:
    dpa_grid_pmf_free(pess);
    dpa_grid_pmf_free(opt);
    return st;
}

dpa_status dpa_discretize(const dpa_pair *p, double step, double tau, size_t max_points,
                          dpa_grid_pmf *pess, dpa_grid_pmf *opt, dpa_error *err)
{
    dpa_cells c;
    dpa_status st = dpa_cells_build(p, step, tau, 0, max_points, &c, err);
    if (st) return st;
    st = dpa_cells_discretize(&c, pess, opt, err);
    dpa_cells_free(&c);
    return st;
}
