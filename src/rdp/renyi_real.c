/* The Rényi divergence of a composition at a real order: per leaf a
 * certified interval of its count-weighted share of D_A and a value (exact
 * closed forms, the RDP module's certified upper bounds, or the phi
 * module's quadrature); shares add (docs/rdp.md, "The Rényi divergence of a
 * composition"; src/rdp/renyi.c has the notation).
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "dpacct/renyi.h"
#include "model/leaves.h"
#include "mech/pair.h"
#include "num/num.h"
#include "rdp/rdp.h"
#include "rdp/renyi_internal.h"

#define U DPA_UNIT_ROUNDOFF

/* b - 1 for the certified upper bounds at orders A <= 1 of leaves without a
 * closed form: D_A <= D_1 <= D_b (monotonicity) and
 * D_A(P||Q) <= A/(1-A) D_b(Q||P) (convexity of log E between theta = -1 and
 * theta = -b; docs/rdp.md, "The Rényi divergence of a composition").  D_b
 * exceeds KL by about (b - 1) Var(W)/2, so 1e-3 keeps the bound within 0.1%
 * of a variance of the KL divergence,
 * while the RDP module's absolute round-off near order 1 (a few u (b+1)/(b-1)
 * ~ 1e-12, docs/rdp.md §6) stays negligible. */
#define RENYI_BETA_STEP 1e-3
/* KL lower bound for leaves without a closed form: KL >= D_{1-h}, whose
 * lower bound comes from the series' certified upper bound on log E(-h).
 * log E(-h) = -h KL + h^2 Var/2 + ..., so the bound is within h Var/2 of KL;
 * the series' absolute error (~1e-16 on log E) is amplified by only 1/h. */
#define RENYI_KL_H 1e-3

/* Largest order at which a bound-only leaf's RDP bound is asked for its
 * monotone envelope (the orders above A only tighten the bound; the RDP
 * accountant's default grid ends at 1e4) */
#define RENYI_BOUND_MAX_ORDER 1e6

/* ------------------------------------------------------------------ small helpers */

static double up(double x, double k) { return dpa_rdp_up(x, k); }
static double dn(double x, double k)
{
    if (!isfinite(x) || x == 0) return x;
    return x - k * U * fabs(x);
}

/* x/theta with the rounding pushed up (dir > 0) or down */
static double div_dir(double x, double theta, int dir)
{
    if (isnan(x)) return x;
    double q = x / theta;
    return dir > 0 ? up(q, 2) : dn(q, 2);
}

/* The lower quadrature of renyi_pg.c for a Poisson-subsampled Gaussian
 * pair (or its reversal) at A >= 1 in direction dir; 0 for other pairs */
static double pg_lower(const dpa_pair *p, double A, int dir)
{
    if (p->kind == DPA_PAIR_REVERSE) {
        p = p->base;
        dir = !dir;
    }
    if (p->kind != DPA_PAIR_POISSON || p->base->kind != DPA_PAIR_GAUSSIAN) return 0.0;
    return dpa_renyi_pg_lower(p->base->par[0], p->par[0], A, dir);
}

/* ------------------------------------------------------------------ real orders */

enum { CLS_EXACT = 0, CLS_UPPER = 1, CLS_EST = 2 };

typedef struct lres {
    double lo, hi, val; /* count-weighted share of D_A */
    int cls;
    int how;
} lres;

static void set_inf(lres *o, int how)
{
    o->lo = o->hi = o->val = INFINITY;
    o->cls = CLS_EXACT;
    o->how = how;
}

/* A discrete Gaussian leaf (plain, Poisson-subsampled, truncated; not under
 * sample) by the direct sum of renyi_dg_tail.c: log E in a certified bracket
 * at theta' (D_A = log E / theta); at A = 1, KL in [D_{1-h}, D_{1+h}]
 * (h = RENYI_KL_H, RENYI_BETA_STEP: D_A is non-decreasing in A).  Plain and
 * untruncated: the upper bound is also at most max(A, 1) s^2/(2 sigma^2)
 * (Canonne-Kamath-Steinke 2020, Prop 5; the bound the leaf had before).
 * Returns 1 with *o filled, 0 where the sum does not apply (the caller's
 * other paths), -1 where it would be too long and nothing else bounds the
 * leaf (subsampled or truncated; a plain one falls back to the bound above). */
static int dg_leaf(const dpa_leaf *lf, double A, int dir, lres *o)
{
    double sigma = lf->par[0], s = lf->par[1], T = lf->rpar[2], q = isnan(lf->rate) ? 1.0 : lf->rate;
    if (lf->sample || !lf->pair || lf->pair->kind != DPA_PAIR_ATOMS || !(sigma >= 1e-6) || (T >= 0 && 2 * T < s) ||
        !(q > 0 && q <= 1))
        return 0;
    double ords[2] = {A == 1 ? 1 - RENYI_KL_H : A, 1 + RENYI_BETA_STEP}, dlo[2], dhi[2], dval[2];
    for (int i = 0; i < (A == 1 ? 2 : 1); i++) {
        double theta = ords[i] - 1, tp = dir ? -1 - theta : theta, el, eh;
        int r = dpa_renyi_dg_log_e(sigma, s, q, T, 0, tp, &el, &eh);
        if (r < 0) return q == 1 && T < 0 ? 0 : -1;
        if (r > 0 && A == 1) return 0;
        if (r > 0) { /* (E = +inf at A > 1: atoms with M1 = 0 < M2, e.g. a truncated one reversed) */
            set_inf(o, DPA_RENYI_H_INF);
            return 1;
        }
        dlo[i] = fmax(0.0, div_dir(theta > 0 ? el : eh, theta, -1));
        dhi[i] = div_dir(theta > 0 ? eh : el, theta, 1);
        dval[i] = 0.5 * (el + eh) / theta;
    }
    double lo = dlo[0], hi = A == 1 ? dhi[1] : dhi[0], val = A == 1 ? hi : fmin(fmax(dval[0], lo), hi);
    if (q == 1 && T < 0) {
        double r = s / sigma, z = fmax(A, 1.0) * (0.5 * r * r) * (1 + 6 * U); /* (as in leaf_real) */
        hi = fmin(hi, z);
        val = fmin(val, hi);
    }
    double k = lf->count;
    o->lo = dn(k * lo, 2);
    o->hi = up(k * hi, 2);
    o->val = fmin(fmax(k * val, o->lo), o->hi);
    o->cls = A == 1 ? CLS_UPPER : CLS_EXACT;
    o->how = DPA_RENYI_H_DGSUM | (A == 1 ? DPA_RENYI_H_BETA | DPA_RENYI_H_SERIES : 0);
    return 1;
}

static dpa_status leaf_real(const dpa_leaf *lf, double A, int dir, lres *o, dpa_error *err)
{
    double k = lf->count, theta = A - 1;
    dpa_status st;
    memset(o, 0, sizeof *o);
    if (lf->zcdp || lf->rdp_only) {
        /* a bound, not a pair (zcdp, repeat_and_select, the SVTs): upper =
         * the leaf's RDP bound as the rdp method composes it, lower = 0.
         * zcdp: D_A <= xi + rho A for A > 1 (Bun & Steinke 2016, Def 1.1),
         * and D_A <= D_1 <= inf_{b > 1} (xi + rho b) = xi + rho for A <= 1
         * (D_A is non-decreasing in A); rounded up: a product, a sum and the
         * count, 3 u relative each.  The others: the RDP accountant's
         * bounds (count included) at the orders b_j = max(A, 1 + 1e-3) r_j,
         * and the smallest of them: D_A <= D_b for every b >= A (D_A is
         * non-decreasing in A), and these bounds need not be (Papernot &
         * Steinke's grows as b falls to 1: dp_accounting takes the same
         * monotone envelope) */
        double h;
        if (lf->zcdp) {
            h = up(k * up(lf->par[1] + up(lf->par[0] * fmax(A, 1.0), 2), 2), 2);
        } else {
            static const double r[] = {1, 1.01, 1.1, 1.25, 1.5, 2, 3, 4, 6, 8, 12, 16, 24, 32, 64, 128, 256, 512};
            double b[sizeof r / sizeof r[0]], ub[sizeof r / sizeof r[0]], b0 = fmax(A, 1 + RENYI_BETA_STEP);
            size_t nb = 0;
            for (size_t j = 0; j < sizeof r / sizeof r[0]; j++)
                if (j == 0 || b0 * r[j] <= RENYI_BOUND_MAX_ORDER) b[nb++] = b0 * r[j];
            st = dpa_renyi_composite_upper(lf, b, nb, dir, ub, err);
            if (st) return st;
            h = INFINITY;
            for (size_t j = 0; j < nb; j++) h = fmin(h, ub[j]);
        }
        o->lo = 0;
        o->hi = o->val = h;
        o->cls = CLS_UPPER;
        o->how = DPA_RENYI_H_BOUND | DPA_RENYI_H_LOW0;
        return DPA_OK;
    }
    if (!lf->pair && !lf->inner) return dpa_renyi_unsupported_leaf(lf, err);
    if (A >= 1 && dpa_renyi_leaf_inf(lf, dir)) {
        set_inf(o, DPA_RENYI_H_INF);
        return DPA_OK;
    }
    if (!lf->pair) {
        /* composite leaf (a subsampled composition): certified upper bounds of
         * the RDP accountant, lower bound 0 */
        double b[1] = {A > 1 ? A : 1 + RENYI_BETA_STEP}, ud, uo = INFINITY;
        st = dpa_renyi_composite_upper(lf, b, 1, dir, &ud, err);
        if (!st && A < 1) st = dpa_renyi_composite_upper(lf, b, 1, !dir, &uo, err);
        if (st) return st;
        o->lo = 0;
        o->hi = A >= 1 ? ud : fmin(ud, up(A / (1 - A) * uo, 4));
        o->val = o->hi;
        o->cls = CLS_UPPER;
        o->how = DPA_RENYI_H_LOW0 | DPA_RENYI_H_COMP | (A > 1 ? DPA_RENYI_H_RDP : DPA_RENYI_H_BETA);
        return DPA_OK;
    }
    if (lf->kind == DPA_EV_DISCRETE_GAUSSIAN) {
        int r = dg_leaf(lf, A, dir, o);
        if (r > 0) return DPA_OK;
        if (r < 0)
            return dpa_error_set(err, DPA_EUNSUPPORTED,
                                 "renyi: discrete_gaussian (sigma %g, sensitivity %g) at order %g: the direct sum over "
                                 "its support would need more than 4e6 terms (about |A| s + 80 sigma); no certified "
                                 "value",
                                 lf->par[0], lf->par[1], A);
    }
    const dpa_pair *p = lf->pair;
    /* (an untruncated one: a truncated discrete Gaussian has mass at +inf and
     * is no zCDP; its atoms are its whole support or have A at +inf) */
    if (dpa_renyi_truncated(p) && lf->kind == DPA_EV_DISCRETE_GAUSSIAN && isnan(lf->rate) &&
        dpa_pair_log_inf(p) == -INFINITY) {
        /* the discrete Gaussian's atom list is truncated, so its divergence
         * is not computed; it is rho-zCDP, D_A <= A rho for A >= 1 with
         * rho = s^2 / (2 sigma^2) (Canonne-Kamath-Steinke 2020, Prop 5; par =
         * sigma, sensitivity), and D_A <= D_1 <= rho for A < 1 (D_A is
         * non-decreasing in A): a certified upper bound, the lower bound 0.
         * Rounded up: two products, a quotient and the order, 6 u relative */
        double r = lf->par[1] / lf->par[0], v = fmax(A, 1.0) * (0.5 * r * r) * (1 + 6 * U);
        o->lo = 0;
        o->hi = up(k * v, 2);
        o->val = o->hi;
        o->cls = CLS_UPPER;
        o->how = DPA_RENYI_H_LOW0 | DPA_RENYI_H_RDP; /* (the bound the rdp method uses) */
        return DPA_OK;
    }
    /* omitted atoms do not matter for A > 1 when A has mass at +inf */
    if (dpa_renyi_truncated(p) && !(A > 1 && dpa_pair_log_inf(p) > -INFINITY))
        return dpa_renyi_unsupported_leaf(lf, err);
    if (!dpa_renyi_bounded_kind(p)) {
        if (!dpa_renyi_upper_only_kind(p)) return dpa_renyi_unsupported_leaf(lf, err);
        if (!(A > 1))
            return dpa_error_set(err, DPA_EUNSUPPORTED,
                                 "renyi: a leaf of kind %s is supported at orders A > 1 only (the RDP module's "
                                 "certified upper bound); order %g has no certified value for it",
                                 dpa_renyi_pair_kind_name(p), A);
    }
    double lo, hi, val;
    int cls, how;
    if (A == 1) {
        if (dpa_renyi_closed_kind(p)) {
            double e, v = dpa_renyi_closed_kl(p, dir, &e);
            lo = fmax(0.0, v - e);
            hi = v + e;
            val = v;
            cls = CLS_EXACT;
            how = DPA_RENYI_H_CLOSED;
        } else {
            /* KL <= D_b; KL >= D_{1-h} >= log E'(-h)/(-h) with the series'
             * upper bound on log E' at theta' = -h (remove) or -1 + h (add) */
            st = dpa_rdp_divergence(p, 1 + RENYI_BETA_STEP, dir, &hi, err);
            if (st) return st;
            double lh;
            st = dpa_renyi_upper_log_e_mid(p, dir ? -1 + RENYI_KL_H : -RENYI_KL_H, &lh, err);
            if (st) return st;
            lo = fmax(0.0, div_dir(lh, -RENYI_KL_H, -1));
            how = DPA_RENYI_H_BETA | DPA_RENYI_H_SERIES;
            double lq = pg_lower(p, 1.0, dir);
            if (lq > lo) {
                lo = lq;
                how = (how & ~DPA_RENYI_H_SERIES) | DPA_RENYI_H_QUAD;
            }
            double lm, mean;
            dpa_error e2;
            if (dpa_renyi_phi_kind(p) && (st = dpa_renyi_phi_moments(p, dir, 0.0, &lm, &mean, &e2)) != DPA_ENUMERIC) {
                if (st) {
                    if (err) *err = e2;
                    return st;
                }
                val = fmin(fmax(mean, lo), hi);
                cls = CLS_EST;
                how |= DPA_RENYI_H_PHI;
            } else { /* no quadrature, or it could not converge: the bound */
                val = hi;
                cls = CLS_UPPER;
            }
        }
    } else {
        double tp = dir ? -1 - theta : theta; /* theta' of the remove pair */
        if (p->kind == DPA_PAIR_GAUSSIAN) {
            /* D_A = A mu^2/2 in both directions, for every A > 0 (MATH.md §5),
             * without forming theta (1 + theta) (no overflow at huge A) */
            double v = A * (0.5 * p->par[0] * p->par[0]);
            lo = dn(v, 4);
            hi = up(v, 4);
            val = v;
            cls = CLS_EXACT;
            how = DPA_RENYI_H_CLOSED;
        } else if (dpa_renyi_closed_kind(p)) {
            double e, v = dpa_renyi_closed_log_e(p, tp, &e);
            if (v == -INFINITY) { /* E = 0 (A < 1): mutually singular */
                set_inf(o, DPA_RENYI_H_SING);
                return DPA_OK;
            }
            if (theta > 0) {
                lo = div_dir(v - e, theta, -1);
                hi = div_dir(v + e, theta, 1);
            } else {
                lo = div_dir(v + e, theta, -1);
                hi = div_dir(v - e, theta, 1);
            }
            lo = fmax(lo, 0.0);
            val = v / theta;
            cls = CLS_EXACT;
            how = DPA_RENYI_H_CLOSED;
        } else if (A > 1) {
            double lh, ll;
            int bin;
            st = dpa_rdp_log_e(p, tp, &lh, err);
            if (!st) st = dpa_renyi_lower_log_e_out(p, tp, &ll, &bin, err);
            if (st) return st;
            hi = div_dir(lh, theta, 1);
            lo = fmax(0.0, div_dir(ll, theta, -1));
            val = hi;
            cls = CLS_UPPER;
            how = DPA_RENYI_H_RDP | (bin ? DPA_RENYI_H_BINOM : DPA_RENYI_H_LOW0);
            double lq = pg_lower(p, A, dir);
            if (lq > lo) {
                lo = lq;
                how = (how & ~(DPA_RENYI_H_BINOM | DPA_RENYI_H_LOW0)) | DPA_RENYI_H_QUAD;
            }
        } else {
            /* 0 < A < 1 */
            double lh;
            st = dpa_renyi_upper_log_e_mid(p, tp, &lh, err);
            if (st) return st;
            if (lh == -INFINITY) {
                set_inf(o, DPA_RENYI_H_SING);
                return DPA_OK;
            }
            lo = fmax(0.0, div_dir(lh, theta, -1));
            double ud, uo;
            st = dpa_rdp_divergence(p, 1 + RENYI_BETA_STEP, dir, &ud, err);
            if (!st) st = dpa_rdp_divergence(p, 1 + RENYI_BETA_STEP, !dir, &uo, err);
            if (st) return st;
            hi = fmin(ud, up(A / (1 - A) * uo, 4));
            how = DPA_RENYI_H_SERIES | DPA_RENYI_H_BETA;
            double lm, mean;
            dpa_error e2;
            if (dpa_renyi_phi_kind(p) && (st = dpa_renyi_phi_moments(p, dir, theta, &lm, &mean, &e2)) != DPA_ENUMERIC) {
                if (st) {
                    if (err) *err = e2;
                    return st;
                }
                val = fmin(fmax(lm / theta, lo), hi);
                how |= DPA_RENYI_H_PHI;
            } else {
                /* no quadrature (or it could not converge): the series-based
                 * bound, accurate but a bound from below */
                val = lo;
                how |= DPA_RENYI_H_SERVAL;
            }
            cls = CLS_EST;
        }
    }
    if (lf->kind == DPA_EV_EXPONENTIAL_MECHANISM) {
        /* the pair is the envelope of the eps-bounded-range class, attained
         * by no member: its divergence stays the upper bound (Blackwell
         * dominance), the lower bound is the best two-point member's
         * (renyi_br.c), or 0 under sample (replace-one) */
        lo = lf->sample ? 0.0 : dpa_renyi_br_lower(lf->par[0], isnan(lf->rate) ? 1.0 : lf->rate, A, dir, NULL);
        lo = fmin(lo, hi);
        if (cls == CLS_EXACT) {
            cls = CLS_UPPER;
            val = hi;
        }
        how = (how & ~DPA_RENYI_H_CLOSED) | (lf->sample ? DPA_RENYI_H_LOW0 : DPA_RENYI_H_BR);
    }
    /* counts: one rounding each way */
    o->lo = dn(k * lo, 2);
    o->hi = up(k * hi, 2);
    o->val = k * val;
    o->cls = cls;
    o->how = how;
    return DPA_OK;
}

static void note_real(dpa_renyi_value *v, int how, int cls_max, double A)
{
    char *n = v->note;
    size_t sz = sizeof v->note;
    if (how & DPA_RENYI_H_INF) {
        snprintf(n, sz, "infinite: the composition has mass at loss +inf (e.g. approx with delta > 0), so D_A = +inf "
                        "for A >= 1");
        return;
    }
    if (how & DPA_RENYI_H_SING) {
        snprintf(n, sz, "infinite: the composed pair is mutually singular (E = 0)");
        return;
    }
    if (cls_max == CLS_EXACT) {
        snprintf(n, sz, (how & DPA_RENYI_H_DGSUM) ? "exact: closed forms and direct sums over the discrete Gaussian's "
                                                     "support (interval = round-off and certified tails)"
                                                   : "exact: closed forms (interval = round-off)");
        return;
    }
    if (how & DPA_RENYI_H_BOUND) {
        if (how & ~(DPA_RENYI_H_BOUND | DPA_RENYI_H_LOW0))
            snprintf(n, sz, "upper: the bound-only leaves' RDP bounds plus the others' upper bounds; lower: 0 for "
                            "the bound-only leaves (a bound, not a pair)");
        else
            snprintf(n, sz, "upper: the leaf's RDP bound; lower: 0, the leaf is a bound, not a pair");
        return;
    }
    const char *lowmsg = (how & DPA_RENYI_H_LOW0) ? "lower bound 0 for some leaves (none cheap)"
                         : (how & DPA_RENYI_H_BR) ? "lower: best member of the bounded-range class"
                         : (how & DPA_RENYI_H_QUAD) ? "lower: certified quadrature"
                         : (how & DPA_RENYI_H_BINOM) ? "lower: binomial expansion"
                         : (how & DPA_RENYI_H_SERIES) ? "lower: certified series"
                                            : "lower: closed forms";
    if (cls_max == CLS_UPPER) {
        if (!(how & (DPA_RENYI_H_RDP | DPA_RENYI_H_BETA | DPA_RENYI_H_COMP)))
            snprintf(n, sz, "certified upper bound (closed forms of the dominating pair); %s", lowmsg);
        else if (A > 1)
            snprintf(n, sz, "certified upper bound (RDP module); %s", lowmsg);
        else
            snprintf(n, sz, "certified upper bound via D_A <= D_%.4g%s; %s", 1 + RENYI_BETA_STEP,
                     (how & DPA_RENYI_H_COMP) ? " (subsampled composition: no estimate)" : "", lowmsg);
        return;
    }
    if (how & DPA_RENYI_H_PHI)
        snprintf(n, sz, "estimate: numerical quadrature (phi module); bounds certified (%s; upper loose: via D_%.4g)",
                 lowmsg, 1 + RENYI_BETA_STEP);
    else
        snprintf(n, sz, "estimate: the certified series lower bound (no quadrature for this leaf); upper loose: "
                        "via D_%.4g",
                 1 + RENYI_BETA_STEP);
}

dpa_status dpa_renyi_eval_real(const dpa_leafset *L, double A, int dir, dpa_renyi_value *v,
                               dpa_error *err)
{
    double slo = 0, shi = 0, sval = 0;
    int how = 0, cls_max = CLS_EXACT;
    for (size_t i = 0; i < L->n; i++) {
        lres r;
        dpa_status st = leaf_real(&L->v[i], A, dir, &r, err);
        if (st) return st;
        how |= r.how;
        if (r.cls > cls_max) cls_max = r.cls;
        slo += r.lo;
        shi += r.hi;
        sval += r.val;
    }
    if (how & (DPA_RENYI_H_INF | DPA_RENYI_H_SING)) {
        v->re = v->lower = v->upper = INFINITY;
        v->log_e_re = A > 1 ? INFINITY : (A < 1 ? -INFINITY : NAN);
        v->log_e_im = 0;
        v->exists = 0;
        v->certified = 1;
        v->tight = 1;
        note_real(v, how, cls_max, A);
        return DPA_OK;
    }
    double nterm = (double)L->n + 2; /* summation of non-negative terms */
    v->lower = fmax(0.0, dn(slo, nterm));
    v->upper = up(shi, nterm);
    /* certified non-exact results report the upper bound itself */
    v->re = cls_max == CLS_UPPER ? v->upper : fmin(fmax(sval, v->lower), v->upper);
    v->im = 0;
    v->log_e_re = A == 1 ? 0.0 : v->re * (A - 1);
    v->log_e_im = 0;
    v->exists = isfinite(v->re);
    v->certified = cls_max != CLS_EST;
    v->tight = v->upper - v->lower <= DPA_RENYI_TIGHT * v->upper;
    note_real(v, how, cls_max, A);
    if (!v->exists)
        snprintf(v->note, sizeof v->note, "no finite bound at this order (a leaf's certified upper bound is +inf)");
    return DPA_OK;
}
