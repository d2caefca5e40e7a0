/* The Poisson-subsampled Gaussian under replace-one neighbours: a pair
 * from above (a privacy profile proven by advanced joint convexity) and a
 * pair from below (the antipodal instance, binned) (docs/sampling.md §5).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Setting (noise units): each record adds a vector of norm <= m (m = C /
 * sigma, C the clipping norm; the spec's replace-one sensitivity is 2C),
 * kept with probability q.  Neighbours D = S + {x}, D' = S + {x'}.  Given
 * the batch drawn from S (the same law under both) the outputs are
 *   P = (1-q) N(c, I) + q N(c + u, I),   Q = (1-q) N(c, I) + q N(c + v, I),
 * |u|, |v| <= m; the hockey-stick divergence is jointly convex and shift
 * invariant, so every step is bounded by the worst (u, v).
 *
 * Upper (dpa_pair_poisson_replace_upper).  Advanced joint convexity (Balle,
 * Barthe & Gaboardi 2018, "Privacy amplification by subsampling: tight
 * analyses via couplings and divergences", Thm 2; derived in full in
 * docs/sampling.md §5): for gamma >= 1, gamma' = 1 + q (gamma - 1),
 * beta = gamma'/gamma,
 *   H_gamma'(P || Q) = q H_gamma(N(u) || (1-beta) N(0) + beta N(v)),
 * and H_gamma is convex in its second argument, so with |u| <= m and
 * |u - v| <= 2m (H_gamma between two Gaussians grows with their distance)
 *   H_gamma'(P || Q) <= q [(1-beta) dG(eps; m) + beta dG(eps; 2m)],
 * dG(eps; mu) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (GDP Cor
 * 2.13), eps = log gamma.  Both directions (swap x, x').  The points of
 * that profile on a grid of eps become a pair through dpa_pair_profile.
 *
 * Lower (dpa_pair_poisson_replace_lower).  One instance: d = 1, u = m,
 * v = -m (antipodal), P = (1-q) N(0) + q N(m), Q = (1-q) N(0) + q N(-m);
 * its loss log p/q increases in the output y.  Binning y is a
 * post-processing, so the pair of bin masses has a smaller curve than the
 * instance, hence than the mechanism's worst case.  Masses come from
 * erfcl in long double (assumed within a few ulp, as in exact_rr.c); each
 * bin's P-mass is lowered and Q-mass raised by a bound on its error, which
 * only lowers the pair's curve.  dp_accounting's REPLACE_ONE pair for the
 * subsampled Gaussian is this instance (unbinned).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include "dpacct/event.h"
#include "mech/pair.h"

/* Grid of the upper profile: eps' = i * REPL_STEP ... up to where the bound
 * is below REPL_DELTA_FLOOR (or eps' reaches DPA_MAX_PROFILE_EPS). */
#define REPL_STEP 0.005
#define REPL_DELTA_FLOOR 1e-300
#define REPL_MAX_POINTS 200000
/* Bins of the lower pair: at most REPL_MAX_BINS over [-(m + 14), m + 14]. */
#define REPL_MAX_BINS 60000
#define REPL_BIN 0.002

/* relative error allowed on one long-double normal tail value: erfcl
 * (a few ulp), the argument's rounding (|x| times its relative error
 * 2^-63 times |x|, the slope of log Phi), generously */
static long double tail_err(long double x, long double scale)
{
    return 1e-17L + 4 * LDBL_EPSILON * (fabsl(x) + 1) * (scale + 1);
}

/* Phi(x) in long double */
static long double Phi(long double x) { return 0.5L * erfcl(-x / sqrtl(2.0L)); }

/* An upper bound on dG(eps; mu) = Phi(a) - e^eps Phi(a - mu), a = -eps/mu + mu/2 */
static long double dgauss_up(double eps, double mu)
{
    long double e = eps, m = mu, sc = e / m + m;
    long double a = -e / m + m / 2, b = a - m;
    long double A = Phi(a) * (1 + tail_err(a, sc)), B = expl(e) * Phi(b) * (1 - tail_err(b, sc) - 4 * LDBL_EPSILON * (e + 1));
    long double d = A - B;
    return d > 0 ? d : 0;
}

dpa_pair *dpa_pair_poisson_replace_upper(double q, double m, dpa_error *err)
{
    if (!(q > 0 && q < 1 && m > 0 && m <= 1e6)) {
        dpa_error_set(err, DPA_EINVAL, "replace-one Poisson Gaussian: q %g, mu %g out of domain", q, m);
        return NULL;
    }
    size_t cap = 1024, n = 0;
    double *eps = malloc(cap * sizeof *eps), *del = malloc(cap * sizeof *del);
    if (!eps || !del) goto oom;
    for (size_t i = 0; i < REPL_MAX_POINTS; i++) {
        double ep = (double)i * REPL_STEP; /* the target eps' (point chosen by its eps) */
        /* eps of the inner divergence: any double; eps' is then derived
         * from it and rounded up (a larger eps' keeps the claim true) */
        double e = ep == 0 ? 0 : log1p(expm1(ep) / q);
        long double g = expl((long double)e), gp = 1 + (long double)q * (g - 1);
        double epc = e == 0 ? 0 : (double)logl(gp);
        epc = e == 0 ? 0 : nextafter(epc + 8 * DBL_EPSILON * fabs(epc), INFINITY);
        if (!(epc <= DPA_MAX_PROFILE_EPS)) break;
        /* beta = gamma'/gamma rounded up (the bound grows with beta) */
        long double beta = fminl(1, gp / g * (1 + 4 * LDBL_EPSILON));
        long double d1 = dgauss_up(e, m), d2 = dgauss_up(e, 2 * m);
        long double d = (long double)q * ((1 - beta) * d1 + beta * d2) * (1 + 8 * LDBL_EPSILON);
        double dd = nextafter((double)d, INFINITY);
        if (dd > 1) dd = 1;
        if (n == cap) {
            cap *= 2;
            double *ne = realloc(eps, cap * sizeof *eps), *nd = realloc(del, cap * sizeof *del);
            if (ne) eps = ne;
            if (nd) del = nd;
            if (!ne || !nd) goto oom;
        }
        eps[n] = epc;
        del[n++] = dd;
        if (dd < REPL_DELTA_FLOOR) break;
    }
    dpa_pair *p = dpa_pair_profile(eps, del, n, err);
    free(eps);
    free(del);
    return p;
oom:
    free(eps);
    free(del);
    dpa_error_set(err, DPA_ENOMEM, "out of memory");
    return NULL;
}

/* Phi(c1) - Phi(c0), c0 < c1 (c0 = -inf, c1 = +inf allowed), from the
 * tail nearer to the interval, and a bound on its absolute error */
static long double mass(long double c0, long double c1, long double *e)
{
    long double r, s;
    if (c0 >= 0) { /* upper tails */
        long double t0 = Phi(-c0), t1 = isinf(c1) ? 0 : Phi(-c1);
        r = t0 - t1;
        s = t0 + t1;
    } else if (c1 <= 0) {
        long double t1 = Phi(c1), t0 = isinf(c0) ? 0 : Phi(c0);
        r = t1 - t0;
        s = t0 + t1;
    } else {
        long double t0 = isinf(c0) ? 0 : Phi(c0), t1 = isinf(c1) ? 0 : Phi(-c1);
        r = 1 - t0 - t1;
        s = 1 + t0 + t1;
    }
    long double sc = fabsl(isinf(c0) ? 0 : c0) + fabsl(isinf(c1) ? 0 : c1);
    *e = s * tail_err(sc, sc) + 4 * LDBL_EPSILON * s;
    return r > 0 ? r : 0;
}

dpa_pair *dpa_pair_poisson_replace_lower(double q, double m, dpa_error *err)
{
    if (!(q > 0 && q < 1 && m > 0 && m <= 1e6)) {
        dpa_error_set(err, DPA_EINVAL, "replace-one Poisson Gaussian: q %g, mu %g out of domain", q, m);
        return NULL;
    }
    double R = m + 14, h = fmax(REPL_BIN, 2 * R / REPL_MAX_BINS);
    size_t nb = (size_t)ceil(2 * R / h); /* inner bins; plus the two unbounded ends */
    dpa_pair *p = dpa_pair_alloc(DPA_PAIR_ATOMS, nb + 2, err);
    if (!p) return NULL;
    const long double lq = q, lm = m;
    size_t na = 0;
    for (size_t i = 0; i <= nb + 1; i++) {
        /* edges symmetric about 0: c_i = -R + (i - 1) h, the last inner edge R */
        long double c0 = i == 0 ? -INFINITY : i == 1 ? -(long double)R : -(long double)R + (long double)(i - 1) * h;
        long double c1 = i == nb + 1 ? INFINITY : i == nb ? (long double)R : -(long double)R + (long double)i * h;
        if (i == nb + 1) c0 = R;
        long double e0, ep, en;
        long double m0 = mass(c0, c1, &e0), mp = mass(c0 - lm, c1 - lm, &ep), mn = mass(c0 + lm, c1 + lm, &en);
        long double a = (1 - lq) * m0 + lq * mp, b = (1 - lq) * m0 + lq * mn;
        long double ea = ((1 - lq) * e0 + lq * ep) * (1 + 8 * LDBL_EPSILON) + 8 * LDBL_EPSILON * a;
        long double eb = ((1 - lq) * e0 + lq * en) * (1 + 8 * LDBL_EPSILON) + 8 * LDBL_EPSILON * b;
        a -= ea; /* A down, B up: the pair's curve only drops */
        b += eb;
        if (!(a > 0)) continue;
        double la = nextafter((double)logl(a), -INFINITY), lb = nextafter((double)logl(b), INFINITY);
        p->atoms[na++] = (dpa_atom){la - lb, la, lb};
    }
    p->natoms = na;
    /* the loss increases with y: sorted but for rounding */
    dpa_pair_sort_atoms(p);
    /* (Q, P) is the image of (P, Q) under y -> -y, so both directions have
     * one curve, which this binned pair stays below (any binning is a
     * post-processing) */
    p->symmetric = 1;
    return p;
}
