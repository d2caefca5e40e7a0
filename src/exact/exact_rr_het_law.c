/* The two lattice laws of the heterogeneous bracket (section 7): the
 * dominating revealed-coin mixture and the garbled (dominated) law, with
 * the tilted garbled B-law; their log-MGFs, windows and Chernoff tails.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The composition of k_j copies of RR_{eps_j} (j over the distinct eps > 0;
 * the delta_i enter P as in section 4) has F(t) = E_A[(1 - e^{t - S})_+].
 * On the lattice h Z (h a power of 2):
 *
 * Upper pair (domination).  Let a = floor(eps / h) h, b = a + h.  The
 *   "revealed coin" mixture Mix = (1 - lam) RR_a (+) lam RR_b (the coin is
 *   part of the output, with the same law under A and B) has outputs
 *   (coin, sign); forgetting the coin maps it onto RR_eps exactly when
 *   (1 - lam) p_a + lam p_b = p_eps (p_x = e^x / (1 + e^x)): then the
 *   A-mass of "+" is p_eps and its B-mass (1 - lam) q_a + lam q_b = q_eps.
 *   So RR_eps is a post-processing (garbling) of Mix and, by data
 *   processing, H_alpha(RR_eps) <= H_alpha(Mix) for every alpha >= 0; a
 *   larger lam only moves mixture weight from RR_a to RR_b, of which RR_a is
 *   a garbling (LT Thm 4.5), so any lam' >= lam works.  Applied to every
 *   coordinate, the garbling maps the product of the mixtures onto the
 *   product of the RR steps, so the composition of the mixtures bounds F
 *   from above.  Every mixture output has likelihood ratio e^{+-a} or
 *   e^{+-b}, so its loss is h times the lattice sum S_up of the components'
 *   positions (+-m or +-(m + 1)).
 *     lam = (p_eps - p_a) / (p_b - p_a)
 *         = sinh(d/2) / sinh(h/2) e^{(h - d)/2} (1 + e^{-b}) / (1 + e^{-eps}),
 *   d = eps - a (exact), computed with relative error <= 5 E_F + 6u,
 *   enlarged by 5 E_F + 8u and rounded up to a multiple of 2^-60 (so that
 *   1 - lam is exact).  eps on the lattice (d = 0) keeps RR_a itself.
 *
 * Lower pair (garbling).  Output only S_lo = sum over the steps of
 *   mhat X, X = +-1 the RR step's sign and mhat an integer near eps / h
 *   (the nearest; in runs of epsilons sharing floor(eps / h) with
 *   HET_DITHER_K or more steps in all, floor or floor + 1 by error
 *   diffusion, dpa_het_law_types): a function of the true composition's output, so
 *   the pair of its laws (A_lo, B_lo) is dominated (data processing) and,
 *   for every s0,
 *     F(t) >= A_lo(S_lo >= s0) - e^t B_lo(S_lo >= s0).
 *   The best s0 is searched (a pattern search; the bound is unimodal in
 *   s0); any s0 is valid.  The second term is evaluated under the tilted
 *   law B_1(s) = B_lo(s) e^{hs} / M, M = E_B[e^{h S_lo}] =
 *   prod (cosh(mhat h - eps/2) / cosh(eps/2))^k, a product law again (each
 *   sign +1 with probability (1 + tanh(mhat h - eps/2)) / 2):
 *   e^t B_lo(S_lo >= s0) = M E_{B_1}[e^{t - h S} 1{S >= s0}], a functional
 *   of size F itself, so no factor e^t multiplies the evaluation error.
 */
#include <stdlib.h>
#include <string.h>
#include "exact/exact_rr_het_internal.h"

/* lattice positions stay below 2^61 in magnitude (sums in int64) */
#define HET_POS_MAX 0x1p61
/* step counts from which a run of epsilons with one floor(eps / h) is
 * dithered between two positions in the garbled laws */
#define HET_DITHER_K 64

void dpa_het_law_free(het_law *L)
{
    free(L->ty);
    free(L->mv);
    free(L->sig);
    memset(L, 0, sizeof *L);
}

/* 1 - tanh(x)^2 = 1 / cosh(x)^2 = 4 e^{-2x} / (1 + e^{-2x})^2 (x >= 0),
 * rounded down (a few E_F) */
static long double one_minus_t2(long double x)
{
    long double e = expl(-2 * fabsl(x)), d = 1 + e;
    return 4 * e / (d * d) * (1 - 8 * E_F);
}

int dpa_het_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_type_m(const void *a, const void *b)
{
    const het_type *x = a, *y = b;
    int64_t mx = x->w2 > 0 ? x->m[1] : x->m[0], my = y->w2 > 0 ? y->m[1] : y->m[0];
    return (mx > my) - (mx < my); /* ascending largest position */
}

/* the types of the upper (which 0), garbled (1) or tilted garbled B (2,
 * section 7: sign +1 with probability (1 + tanh(mhat h - eps/2)) / 2) law
 * at step h;
 * DPA_ENOMEM, or DPA_EUNSUPPORTED when positions would leave int64 */
dpa_status dpa_het_law_types(het_law *L, const dpa_rr_het *c, long double h, int which)
{
    L->h = h;
    L->ty = calloc(2 * (c->m ? c->m : 1), sizeof *L->ty);
    L->mv = malloc(2 * (c->m ? c->m : 1) * sizeof *L->mv);
    if (!L->ty || !L->mv) return DPA_ENOMEM;
    size_t n = 0, nm = 0;
    long double Mx = 0, mean = 0, var = 0;
    int run_dither = 0;
    double run_T = 0;
    for (size_t i = 0, part = 0; i < c->m; part ? (i++, part = 0) : (part = 1)) {
        long double eps = c->eps[i], q = eps / h; /* exact: h is a power of 2 */
        het_type *ty = &L->ty[n];
        ty->k = c->k[i];
        ty->eps = c->eps[i];
        if (which == 0) {
            if (part) continue; /* one type per eps */
            long double a = floorl(q), d = eps - a * h; /* d exact */
            if (!(a < HET_POS_MAX)) return DPA_EUNSUPPORTED;
            ty->m[0] = (int64_t)a;
            ty->t[0] = tanhl(a * h / 2);
            ty->ot[0] = one_minus_t2(a * h / 2);
            if (d > 0) {
                long double b = (a + 1) * h;
                long double lam = sinhl(d / 2) / sinhl(h / 2) * expl((h - d) / 2) * (1 + expl(-b)) / (1 + expl(-eps));
                lam *= 1 + 5 * E_F + 8 * U;
                lam = ceill(lam * 0x1p60L) * 0x1p-60L;
                /* all weight on RR_b (which dominates RR_eps, LT Thm 4.5)
                 * when lam >= 1, and when lam is not a number (sinh and
                 * exp of h/2 out of range give 0 * inf): never drop the
                 * step */
                if (!(lam < 1)) {
                    ty->m[0] = (int64_t)a + 1;
                    ty->t[0] = tanhl(b / 2);
                    ty->ot[0] = one_minus_t2(b / 2);
                } else {
                    ty->w2 = lam;
                    ty->m[1] = (int64_t)a + 1;
                    ty->t[1] = tanhl(b / 2);
                    ty->ot[1] = one_minus_t2(b / 2);
                }
            }
        } else {
            /* the garbling: each step's sign times a position near eps / h,
             * the nearest one, except in runs of epsilons with the same
             * floor(eps / h) and HET_DITHER_K or more steps in all: there the
             * steps are split between floor and floor + 1 by error diffusion
             * (type i sends round(T_i) - round(T_{i-1}) of its k_i steps up,
             * T_i the running sum of k f over the run, f the fractions), so
             * that they do not all share one sublattice (whose exact
             * resonances would make every multiple of pi / mhat a
             * significant frequency); residuals stay below h */
            long double mh, fl = floorl(q), f = q - fl;
            if (part == 0 && (i == 0 || floorl(c->eps[i - 1] / h) != fl)) { /* a new run */
                double K = 0;
                for (size_t j = i; j < c->m && floorl(c->eps[j] / h) == fl; j++) K += c->k[j];
                run_dither = K >= HET_DITHER_K;
                run_T = 0;
            }
            if (run_dither) {
                double Tp = run_T, T = Tp + c->k[i] * (double)f, k2 = nearbyint(T) - nearbyint(Tp);
                if (k2 < 0) k2 = 0;
                if (k2 > c->k[i]) k2 = c->k[i];
                if (part) run_T = T;
                mh = fl + part;
                ty->k = part ? k2 : c->k[i] - k2;
            } else {
                if (part) continue;
                mh = floorl(q + 0.5L);
            }
            if (mh == 0 || ty->k == 0) continue; /* the garbling forgets these steps */
            if (!(mh < HET_POS_MAX)) return DPA_EUNSUPPORTED;
            ty->m[0] = (int64_t)mh;
            ty->r = eps - mh * h; /* exact */
            /* B_1: mhat h - eps/2 = eps/2 - r, > 0 as mhat >= 1 */
            long double x = which == 1 ? eps / 2 : eps / 2 - ty->r;
            ty->t[0] = tanhl(x);
            ty->ot[0] = one_minus_t2(x);
        }
        int nc = ty->w2 > 0 ? 2 : 1;
        long double m1 = 0, m2 = 0, mmax = 0;
        for (int cc = 0; cc < nc; cc++) {
            long double w = cc ? ty->w2 : 1 - ty->w2, mm = (long double)ty->m[cc];
            m1 += w * ty->t[cc] * mm;
            m2 += w * mm * mm;
            if (mm > mmax) mmax = mm;
            L->mv[nm++] = ty->m[cc];
        }
        mean += ty->k * m1;
        var += ty->k * (m2 - m1 * m1);
        Mx += ty->k * mmax;
        n++;
    }
    if (!(Mx < HET_POS_MAX)) return DPA_EUNSUPPORTED;
    L->nt = n;
    L->mean = mean;
    L->var = var;
    L->Mx = Mx;
    /* distinct positions, and each component's index among them */
    qsort(L->mv, nm, sizeof *L->mv, dpa_het_cmp_i64);
    size_t u = 0;
    for (size_t i = 0; i < nm; i++)
        if (!u || L->mv[u - 1] != L->mv[i]) L->mv[u++] = L->mv[i];
    L->nm = u;
    qsort(L->ty, n, sizeof *L->ty, cmp_type_m);
    for (size_t i = 0; i < n; i++)
        for (int cc = 0; cc < (L->ty[i].w2 > 0 ? 2 : 1); cc++) {
            int64_t key = L->ty[i].m[cc];
            const int64_t *f = bsearch(&key, L->mv, u, sizeof *L->mv, dpa_het_cmp_i64);
            L->ty[i].ix[cc] = (size_t)(f - L->mv);
        }
    L->eh = expl(-h);
    L->em = -expm1l(-h);
    return DPA_OK;
}

/* log M_c(lam) = log(p e^{lam m} + q e^{-lam m}), p = (1 + t)/2, without
 * overflow (double: sizing) */
static double logm_comp_d(double lam, double m, double t)
{
    double a = lam * m;
    if (a >= 0) return a + log(0.5 * (1 + t) + 0.5 * (1 - t) * exp(-2 * a));
    return -a + log(0.5 * (1 - t) + 0.5 * (1 + t) * exp(2 * a));
}

/* K(lam) = log E[e^{lam S}] (double, sizing) */
static double logmgf_d(const het_law *L, double lam)
{
    double K = 0;
    for (size_t i = 0; i < L->nt; i++) {
        const het_type *ty = &L->ty[i];
        double k0 = logm_comp_d(lam, (double)ty->m[0], (double)ty->t[0]);
        if (ty->w2 > 0) {
            double k1 = logm_comp_d(lam, (double)ty->m[1], (double)ty->t[1]);
            double w2 = (double)ty->w2, w1 = 1 - w2;
            double mx = fmax(k0, k1);
            k0 = mx + log(w1 * exp(k0 - mx) + w2 * exp(k1 - mx));
        }
        K += ty->k * k0;
    }
    return K;
}

/* an upper bound on K(lam) (long double): each type's log-MGF is computed
 * to a few E_F of |lam m| + 2 (a handful of operations on terms of at most
 * that size); 16 E_F of it, and (nt + 2) u of the sum of |k K_t|, cover the
 * rounding */
static long double logmgf_up(const het_law *L, long double lam)
{
    long double K = 0, err = 0, sabs = 0;
    for (size_t i = 0; i < L->nt; i++) {
        const het_type *ty = &L->ty[i];
        int nc = ty->w2 > 0 ? 2 : 1;
        long double kc[2], amax = 0;
        for (int cc = 0; cc < nc; cc++) {
            long double a = lam * (long double)ty->m[cc], t = ty->t[cc];
            kc[cc] = a >= 0 ? a + logl(0.5L * (1 + t) + 0.5L * (1 - t) * expl(-2 * a))
                            : -a + logl(0.5L * (1 - t) + 0.5L * (1 + t) * expl(2 * a));
            if (fabsl(a) > amax) amax = fabsl(a);
        }
        long double kt = kc[0];
        if (nc == 2) {
            long double mx = fmaxl(kc[0], kc[1]);
            kt = mx + logl((1 - ty->w2) * expl(kc[0] - mx) + ty->w2 * expl(kc[1] - mx));
        }
        K += ty->k * kt;
        sabs += ty->k * fabsl(kt);
        err += ty->k * 16 * E_F * (fabsl(kt) + amax + 2);
    }
    return K + (err + ((long double)L->nt + 2) * U * sabs) * ERRSLACK;
}

/* min over lam > 0 of (K(sg lam) + c) / lam (golden section on log lam
 * around the Gaussian optimum sqrt(2c) / sd; the function is
 * quasi-convex, and any lam gives a valid bound: the search only sizes the
 * window); returns the minimizing lam */
static double win_lam(const het_law *L, int sg, double c)
{
    double sd = sqrt(fmax((double)L->var, 1e-300)), l0 = log(sqrt(2 * c) / sd);
    double a = l0 - 3, b = l0 + 3;
    const double gr = 0.6180339887498949;
    double x1 = b - gr * (b - a), x2 = a + gr * (b - a);
    double f1 = (logmgf_d(L, sg * exp(x1)) + c) / exp(x1), f2 = (logmgf_d(L, sg * exp(x2)) + c) / exp(x2);
    for (int i = 0; i < 14; i++) {
        if (!(f1 > f2)) {
            b = x2; x2 = x1; f2 = f1;
            x1 = b - gr * (b - a);
            f1 = (logmgf_d(L, sg * exp(x1)) + c) / exp(x1);
        } else {
            a = x1; x1 = x2; f1 = f2;
            x2 = a + gr * (b - a);
            f2 = (logmgf_d(L, sg * exp(x2)) + c) / exp(x2);
        }
    }
    return exp(0.5 * (a + b));
}

/* the window: [s_lo, s_hi] with each tail beyond it <= 2^-64 by a
 * certified Chernoff bound (A(S >= x) <= exp(K(lam) - lam x)), clipped to
 * [-Mx, Mx] (nothing beyond); N odd; the Chernoff table for queries beyond */
dpa_status dpa_het_law_window(het_law *L)
{
    long double c = -HET_LOG_TAUW;
    double lp = win_lam(L, 1, (double)c), lm = win_lam(L, -1, (double)c);
    long double xhi = ceill((logmgf_up(L, lp) + c) / lp * (1 + 2 * U)) + 1;
    long double xlo = -ceill((logmgf_up(L, -(long double)lm) + c) / lm * (1 + 2 * U)) - 1;
    long double tail = 0;
    if (xhi >= L->Mx) xhi = L->Mx;
    else tail += expl(HET_LOG_TAUW);
    if (xlo <= -L->Mx) xlo = -L->Mx;
    else tail += expl(HET_LOG_TAUW);
    if (!(xhi >= xlo)) xhi = xlo; /* not reached: the window holds the mean */
    long double n = xhi - xlo + 1;
    if (fmodl(n, 2) == 0) n += 1;
    if (!(n < 0x1p62L)) return DPA_EUNSUPPORTED;
    L->s_lo = (int64_t)xlo;
    L->N = (uint64_t)n;
    L->tail = tail * (1 + 8 * E_F);
    for (int i = 0; i < HET_NLAM; i++) {
        L->lam[i] = lp * exp2l((long double)(2 * i));
        L->Kp[i] = logmgf_up(L, L->lam[i]);
        L->Km[i] = logmgf_up(L, -L->lam[i]);
    }
    return DPA_OK;
}

/* upper bounds on A(S >= x) (up = 1) or A(S <= x) (up = 0), x in lattice
 * units, from the Chernoff table (1 when it gives nothing) */
long double dpa_het_law_chern(const het_law *L, long double x, int up)
{
    long double best = 0;
    for (int i = 0; i < HET_NLAM; i++) {
        long double v = up ? L->Kp[i] - L->lam[i] * x : L->Km[i] + L->lam[i] * x;
        v += U * (fabsl(L->lam[i] * x) + fabsl(v)) * 4;
        if (v < best) best = v;
    }
    return fminl(1, expl(best) * (1 + 2 * E_F));
}
