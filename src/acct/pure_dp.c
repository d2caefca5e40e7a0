/* epsilon at delta = 0 (pure DP) of a composition: the essential supremum
 * of its privacy loss, from the leaves' loss ranges (docs/guarantees.md
 * §3.16), whatever the method.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * delta(eps) = A(W > eps) - e^eps B(W > eps) is 0 exactly when eps is at
 * least the essential supremum of W under A (the loss's largest value, +inf
 * when W = +inf has positive A-mass).  Under composition W is a sum of
 * independent leaf losses, so its supremum is the sum of the leaves'
 * (counted with multiplicity) and it is finite exactly when every leaf's is:
 * eps(0) = sum_i k_i sup W_i, or +inf.  Each direction separately; the
 * result is the larger.  Every leaf's supremum is >= 0 (if W < 0 A-a.s.
 * then A(finite) < B(finite) = 1 and A has mass at +inf), so a leaf whose
 * supremum we cannot bound below contributes 0 to the lower bound. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "acct/accountant_internal.h"
#include "model/method.h"
#include "num/num.h"
#include "pld/pld_acct.h"

/* An upper bound on the infimum of the finite-or-not loss of pair p (remove
 * direction): -inf when B has mass where A has none or the loss is
 * unbounded below (Gaussian), +inf when nothing is known. */
static double pair_inf_upper(const dpa_pair *p)
{
    double hi = INFINITY;
    for (size_t i = 0; i < p->natoms; i++) {
        const dpa_atom *a = &p->atoms[i];
        if (a->w == -INFINITY && a->lb > -INFINITY) return -INFINITY;
        if (isfinite(a->w) && (a->la > -INFINITY || a->lb > -INFINITY)) hi = fmin(hi, a->w);
    }
    if (p->kind == DPA_PAIR_GAUSSIAN) return -INFINITY;
    if (p->kind == DPA_PAIR_LAPLACE) return fmin(hi, -p->par[0]);
    return p->kind == DPA_PAIR_ATOMS ? hi : INFINITY;
}

/* The add direction of Poisson subsampling, the pair (B, qA + (1 - q)B):
 * its loss -log(q e^W + 1 - q) is decreasing in the base loss W, so its
 * supremum is -log(q e^m + 1 - q) at the base's infimum m (-log(1 - q) when
 * m = -inf). */
static double poisson_add_sup(double q, double m)
{
    return m == -INFINITY ? -log1p(-q) : -log1p(q * expm1(m));
}

/* A lower bound on the supremum of the loss of pair p in direction d (0:
 * remove, the pair as stored; 1: add, the reversed pair), or 0 when none is
 * known.  Listed atoms are attained values; a Gaussian part is unbounded;
 * Laplace's continuous part reaches eps0 = par[0] in both directions. */
static double pair_sup_lower(const dpa_pair *p, int d)
{
    double lo = 0;
    for (size_t i = 0; i < p->natoms; i++) {
        const dpa_atom *a = &p->atoms[i];
        if (d == 0 && a->w == INFINITY && a->la > -INFINITY) return INFINITY;
        if (d == 1 && a->w == -INFINITY && a->lb > -INFINITY) return INFINITY;
        if (!isfinite(a->w) || (a->la == -INFINITY && a->lb == -INFINITY)) continue;
        lo = fmax(lo, d ? -a->w : a->w);
    }
    switch (p->kind) {
    case DPA_PAIR_GAUSSIAN: return INFINITY;
    case DPA_PAIR_LAPLACE: return fmax(lo, p->par[0]);
    case DPA_PAIR_REVERSE: return fmax(lo, pair_sup_lower(p->base, !d));
    case DPA_PAIR_MIXGAUSS: return d == 0 ? INFINITY : lo; /* largest mu > 0: unbounded above */
    case DPA_PAIR_POISSON:
        /* remove direction: W_q = log(q e^W + 1 - q) is increasing in W */
        if (d == 0) {
            double b = pair_sup_lower(p->base, 0);
            return fmax(lo, isinf(b) ? b : dpa_poisson_loss(p->par[0], b));
        } else {
            double m = pair_inf_upper(p->base); /* m above the infimum: a value below the sup */
            return m == INFINITY ? lo : fmax(lo, poisson_add_sup(p->par[0], m));
        }
    default: return lo; /* the continuous part's supremum is not known: >= 0 */
    }
}

/* Whether a leaf set (at any depth) holds a Renyi-only or zcdp leaf, which
 * has no pair. */
static int has_pairless(const dpa_leafset *L)
{
    for (size_t i = 0; i < L->n; i++) {
        const dpa_leaf *l = &L->v[i];
        if (l->zcdp || l->rdp_only || (!l->pair && (!l->inner || has_pairless(l->inner)))) return 1;
    }
    return 0;
}

/* sum_i k_i x_i bounded both ways: *up >= the exact sum >= *lo.  The
 * rounding errors of each product and each addition are formed exactly
 * (fma; Knuth's two-sum), so an exactly representable sum (pure eps of 1
 * and 2: 3) is returned as is; otherwise the bracket is widened by the sum
 * of their magnitudes, itself rounded up (n + 2 roundings of the
 * nonnegative sum: a factor 1 + 4(n + 2)u covers them). */
static void sum_bounded(const double *k, const double *x, size_t n, double *up, double *lo)
{
    double s = 0, e = 0;
    for (size_t i = 0; i < n; i++) {
        double p = k[i] * x[i];
        double pe = fma(k[i], x[i], -p);
        double t = s + p;
        double z = t - s;
        double se = (s - (t - z)) + (p - z);
        s = t;
        e += fabs(pe) + fabs(se);
    }
    if (e == 0) {
        *up = *lo = s;
        return;
    }
    e *= 1 + 4 * ((double)n + 2) * DPA_UNIT_ROUNDOFF;
    *up = nextafter(s + e, INFINITY);
    *lo = nextafter(s - e, -INFINITY);
}

/* One direction: upper and lower bounds on eps(0), and the path-free reason
 * when it is +inf. */
static dpa_status direction(const dpa_leafset *L, int d, double *up, double *lo, dpa_error *err)
{
    double stack_k[16], stack_u[16], stack_l[16];
    double *k = stack_k, *u = stack_u, *l = stack_l;
    double *heap = NULL;
    if (L->n > 16) {
        heap = malloc(3 * L->n * sizeof *heap);
        if (!heap) return dpa_error_set(err, DPA_ENOMEM, "epsilon at delta 0: out of memory");
        k = heap;
        u = heap + L->n;
        l = heap + 2 * L->n;
    }
    int upinf = 0, loinf = 0;
    for (size_t i = 0; i < L->n; i++) {
        const dpa_leaf *f = &L->v[i];
        k[i] = f->count;
        if (f->zcdp || f->rdp_only || (!f->pair && (!f->inner || has_pairless(f->inner)))) {
            /* a zCDP guarantee bounds no pure epsilon (the Gaussian meets
             * it); the Renyi-only leaves have no loss law to read */
            u[i] = INFINITY;
            l[i] = f->zcdp ? INFINITY : 0;
        } else if (!isnan(f->rr_eps) && isnan(f->rate)) {
            /* (eps, delta)-DP leaf: its pair is RR_{eps, delta}, loss +-eps
             * and +inf with mass delta, exactly */
            u[i] = l[i] = f->rr_delta > 0 ? INFINITY : f->rr_eps;
        } else if (f->pair && f->pair->kind == DPA_PAIR_ATOMS && f->pair->slack_hi == 0 && f->pair->slack_lo == 0) {
            /* atoms only, none omitted: the largest listed loss is the
             * supremum; a stored value may be its rounded computation (a
             * mapped atom): 8u either side covers it (a few roundings) */
            double s = pair_sup_lower(f->pair, d);
            u[i] = isinf(s) ? s : s + 8 * DPA_UNIT_ROUNDOFF * s;
            l[i] = isinf(s) ? s : s - 8 * DPA_UNIT_ROUNDOFF * s;
        } else {
            double wmax, inf;
            dpa_pld_leaf_range(f, d, &wmax, &inf);
            u[i] = inf > 0 ? INFINITY : wmax;
            const dpa_pair *p = f->pair;
            if (d == 1 && p && p->kind == DPA_PAIR_POISSON && !f->sample && p->base->slack_lo == 0) {
                /* the add direction of Poisson subsampling: the base's loss
                 * range bounds its infimum from below (rounded outwards),
                 * -inf atoms included (a listed atom at -inf with B-mass) */
                double blo, bhi;
                dpa_pair_loss_range(p->base, &blo, &bhi);
                if (pair_inf_upper(p->base) == -INFINITY) blo = -INFINITY;
                double v = poisson_add_sup(p->par[0], blo);
                u[i] = fmin(u[i], v + 8 * DPA_UNIT_ROUNDOFF * v); /* log1p, expm1: a few ulp */
            }
            /* a stored loss value may be its rounded computation (eps0 =
             * sensitivity / scale, a mapped atom): 8u below it is below
             * the true value (the constructors round a few times) */
            l[i] = f->pair ? pair_sup_lower(f->pair, d) : 0;
            if (isfinite(l[i])) l[i] -= 8 * DPA_UNIT_ROUNDOFF * l[i];
        }
        if (u[i] == INFINITY) upinf = 1;
        if (l[i] == INFINITY) loinf = 1;
    }
    if (upinf) {
        for (size_t i = 0; i < L->n; i++) u[i] = 0;
    }
    if (loinf) {
        for (size_t i = 0; i < L->n; i++) l[i] = 0;
    }
    double su, sl, tu, tl;
    sum_bounded(k, u, L->n, &su, &sl);
    sum_bounded(k, l, L->n, &tu, &tl);
    *up = upinf ? INFINITY : su;
    *lo = loinf ? INFINITY : fmax(0.0, tl);
    free(heap);
    return DPA_OK;
}

dpa_status dpa_accountant_epsilon_pure(const dpa_leafset *L, dpa_method m, dpa_result *out, dpa_error *err)
{
    dpa_method_result_init(out, m);
    out->certified = 1; /* read from the leaves' loss laws, not from the method */
    out->upper_source = DPA_SOURCE_MAX_LOSS;
    double ur, lr, ua = 0, la = 0;
    dpa_status st = direction(L, 0, &ur, &lr, err);
    if (st) return st;
    if (L->asymmetric) {
        st = direction(L, 1, &ua, &la, err);
        if (st) return st;
    } else {
        ua = ur;
        la = lr;
    }
    out->upper_remove = ur;
    out->upper_add = ua;
    out->upper = fmax(ur, ua);
    out->lower = fmax(lr, la);
    out->binding = !L->asymmetric ? DPA_DIR_BOTH : (ur >= ua ? DPA_DIR_REMOVE : DPA_DIR_ADD);
    if (out->upper == INFINITY && out->lower == INFINITY)
        snprintf(out->note, sizeof out->note,
                 "eps at delta 0 is +inf: the privacy loss is unbounded or +inf with positive "
                 "probability (the composition is not pure DP)");
    else if (out->upper == INFINITY)
        snprintf(out->note, sizeof out->note,
                 "eps at delta 0: no finite bound on the largest privacy loss is known for some step "
                 "(upper +inf)");
    else
        snprintf(out->note, sizeof out->note,
                 "eps at delta 0 (pure DP): the largest privacy loss, summed over the steps");
    return DPA_OK;
}
