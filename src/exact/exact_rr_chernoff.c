/* The Chernoff fallback of the (eps, delta) method: certified bounds on
 * F(t) for one eps with a count too large for the tables.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * 6. Cost.  A window has ~ 2 * 39 sqrt(k p q) points (TAU); the build walks
 *    it once; one delta evaluation costs O(bk) for one eps (twice both with
 *    two-point factors: c and c->rep_lo).  A single RR eps
 *    whose window would exceed 2^27 points (k ~ 1e13 and more) uses the
 *    Chernoff fallback (`loose`, exact_rr.h): for lam > 0,
 *    (1 - e^{t - s})_+ <= e^{lam (s - t)} lam^lam / (1 + lam)^(1 + lam) (the
 *    maximum over s > t), so F(t) <= exp(k kappa(lam) - lam t + lam log lam
 *    - (1 + lam) log(1 + lam)), kappa(lam) = log E[e^{lam S_1}]
 *    = log cosh(lam eps) + log1p(tanh(eps/2) tanh(lam eps)), evaluated in
 *    long double with its error bound (E_F per function, u per operation,
 *    doubled) added to the exponent, minimised over lam by golden section
 *    (any lam is valid).  Lower bound: the larger of a partial lattice sum
 *    (at most 2^14 terms from the first point above t, or from 2^13 below
 *    the mode; the first pmf bounded below by Stirling's formula with
 *    Robbins' remainder bounds and Loader's deviance form, including the
 *    effect of p's rounding; then the ratio recurrence rounded down) and
 *    1 - P(S <= t) - e^t P(S < -t) with Chernoff bounds on both tails
 *    (kappa(-lam) = kappa(lam - 1): the pair is symmetric).  For t < 0,
 *    F(t) = 1 - e^t + e^t F(-t) (symmetry).
 */
#include "exact/exact_rr_internal.h"

#define PI2L 6.283185307179586476925286766559005768L
/* Chernoff fallback: lattice terms summed for the lower bound */
#define CH_TERMS 16384

/* log cosh x, x >= 0 (x = lam eps, itself rounded: relative u) */
static long double lcosh(long double x, long double *err)
{
    long double v;
    if (x < 0.5L) {
        long double sh = sinhl(0.5L * x);
        v = log1pl(2 * sh * sh);
        *err = (3 * E_F + 6 * U) * v;
    } else {
        v = x - LN2L + log1pl(expl(-2 * x));
        *err = (2 * E_F + 4 * U) * (x + 1);
    }
    *err += 2 * U * x * fminl(1, x);
    return v;
}

/* kappa(lam) = log E_A[e^{lam S_1}] for one step, lam >= -1/2:
 * log cosh(lam eps) + log1p(tanh(eps/2) tanh(lam eps)) */
static long double kappa(const dpa_rr_dist *d, long double lam, long double *err)
{
    long double x = fabsl(lam) * d->eps, el;
    long double v = lcosh(x, &el);
    long double a = d->th * tanhl(x), ra = 2 * E_F + 3 * U, L2;
    if (lam >= 0) {
        L2 = log1pl(a);
        el += (3 * E_F + 4 * U) * L2;
    } else {
        L2 = log1pl(-a);
        el += E_F * fabsl(L2) + ra * a / (1 - a) * (1 + 4 * U);
    }
    v += L2;
    *err = el + U * fabsl(v);
    return v;
}

/* log of a Chernoff bound, allowance included:
 * mode 0: F(t) <= E[e^{lam S}] e^{-lam t} lam^lam / (1 + lam)^(1 + lam)
 * mode 1: P(S <= t) <= E[e^{-lam S}] e^{lam t}
 * mode 2: P(S < -t) <= E[e^{-lam S}] e^{-lam t} */
static long double chern_log(const dpa_rr_dist *d, int mode, long double t, long double lam)
{
    long double ek, kk;
    if (mode == 0) kk = kappa(d, lam, &ek);
    else if (lam <= 0.5L) kk = kappa(d, -lam, &ek);
    else kk = kappa(d, lam - 1, &ek); /* kappa(-lam) = kappa(lam - 1) (symmetric pair); lam - 1 exact */
    long double A1 = d->k * kk, A2 = lam * t, A3 = 0, A4 = 0;
    long double e = d->k * ek + U * fabsl(A1) + U * fabsl(A2);
    if (mode == 0) {
        A3 = lam * logl(lam);
        A4 = (1 + lam) * log1pl(lam);
        e += (E_F + 2 * U) * fabsl(A3) + (E_F + 3 * U) * fabsl(A4);
    }
    long double v = A1 + (mode == 1 ? A2 : -A2) + A3 - A4;
    e += 3 * U * (fabsl(A1) + fabsl(A2) + fabsl(A3) + fabsl(A4));
    return v + 2 * e;
}

/* minimum over lam > 0 (golden section on log lam; any lam is valid) */
static long double chern_min(const dpa_rr_dist *d, int mode, long double t)
{
    const long double gr = 0.6180339887498948482L;
    long double a = -60, b = 40, best = INFINITY;
    long double x1 = b - gr * (b - a), x2 = a + gr * (b - a);
    long double f1 = chern_log(d, mode, t, expl(x1)), f2 = chern_log(d, mode, t, expl(x2));
    for (int i = 0; i < 100; i++) {
        if (!(f1 > f2)) { /* keep [a, x2] */
            b = x2; x2 = x1; f2 = f1;
            x1 = b - gr * (b - a);
            f1 = chern_log(d, mode, t, expl(x1));
        } else {
            a = x1; x1 = x2; f1 = f2;
            x2 = a + gr * (b - a);
            f2 = chern_log(d, mode, t, expl(x2));
        }
        if (f1 < best) best = f1;
        if (f2 < best) best = f2;
    }
    return best;
}

/* x log(x / M) + M - x with an absolute error bound (M > 0, x >= 1);
 * NaN outside |x/M - 1| <= 1/4 (the caller then gives up) */
static long double bd0(long double x, long double M, long double *err)
{
    /* M phi(v), phi(v) = (1 + v) log1p(v) - v = sum_{n >= 2} (-v)^n / (n (n - 1)):
     * v carries 2u relative (phi'(v) v / phi(v) <= 2.2: ~5u), each of the
     * < 60 terms and partial sums a few u (96 u of sum |terms| covers all),
     * the rest after a term below 2^-70 of the sum is below 2^-66 of it */
    long double v = (x - M) / M;
    if (!(fabsl(v) <= 0.25L)) return NAN;
    long double s = 0, p = v * v, sa = 0;
    for (int n = 2; n < 200; n++, p *= -v) {
        long double term = p / ((long double)n * (n - 1));
        s += term;
        sa += fabsl(term);
        if (fabsl(term) < 0x1p-70L * fabsl(s)) break;
    }
    long double r = M * s;
    *err = M * (96 * U * sa + 0x1p-66L * fabsl(s)) + U * fabsl(r);
    return r;
}

/* certified lower bound on pmf(y) of Bin(k, p), 1 <= y <= k (Stirling with
 * Robbins' bounds 1/(12n + 1) < log n! - log(sqrt(2 pi n) (n/e)^n) < 1/(12n)) */
static long double pmf_lo(const dpa_rr_dist *d, double y)
{
    long double k = d->k;
    if (y >= d->k) { /* p^k = exp(-k log1p(e^{-eps})) */
        long double l = k * log1pl(expl(-(long double)d->eps));
        return expl(-l - (3 * E_F + 2 * U) * l) * (1 - 2 * E_F);
    }
    long double p = 1 / (1 + expl(-(long double)d->eps));
    long double Mp = k * p, Mq = k - Mp; /* Mq exact (Sterbenz: Mp >= k/2) */
    if (!(Mq > 0) || !(Mp > 0)) return 0;
    long double eta = (E_F + 3 * U) * ERRSLACK; /* |Mp/k - p| <= eta p */
    long double e1, e2;
    long double b = bd0(y, Mp, &e1) + bd0(k - y, Mq, &e2);
    long double arg = k / (PI2L * ((long double)y * (k - y)));
    long double lg = 0.5L * logl(arg);
    long double e3 = 0.5L * (E_F * fabsl(logl(arg)) + 5 * U);
    long double r1 = 1 / (12 * k + 1), r2 = 1 / (12 * (long double)y), r3 = 1 / (12 * (k - y));
    long double Rlo = r1 - r2 - r3, e4 = 3 * U * (r1 + r2 + r3);
    long double qp = Mq / k;
    long double dp = (fabsl(y - Mp) * eta / qp + k * eta * eta * (1 + (1 / qp) * (1 / qp))) * 1.1L;
    if (isnan(b)) return 0; /* far from the mode: no bound needed there */
    long double L = -b + lg + Rlo;
    long double eL = e1 + e2 + e3 + e4 + dp + 4 * U * (fabsl(b) + fabsl(lg) + fabsl(Rlo));
    return expl(L - eL * ERRSLACK) * (1 - 2 * E_F);
}

/* lower bound on F(t), t >= 0: the first CH_TERMS lattice terms above t */
static long double chern_lattice_lo(const dpa_rr_dist *d, long double t)
{
    long double gs = floorl((t / d->eps + d->k) * 0.5L) + 1;
    if (!(gs <= d->k)) return 0;
    double s = gs < 1 ? 1 : (double)gs;
    while (s > 1 && dpa_rr_gap(d, t, s - 1) < 0) s -= 1;
    while (s <= d->k && !(dpa_rr_gap(d, t, s) < 0)) s += 1;
    if (s > d->k) return 0;
    /* any subset of the points with S > t gives a lower bound: start no
     * lower than half the terms below the mode */
    double md = floor((d->k + 1) / (1 + exp(-d->eps))) - CH_TERMS / 2;
    if (s < md) s = md;
    long double w = pmf_lo(d, s), sum = 0, es = 0;
    for (int j = 0; j < CH_TERMS && s <= d->k; j++, s += 1) {
        long double X = -expm1l(dpa_rr_gap(d, t, s));
        long double term = w * X * (1 - 2 * E_F - 8 * U);
        sum += term;
        es += U * sum;
        if (s >= d->k) break;
        long double r = dpa_rr_ratio_up(d, s);
        if (r < 1 && w * r / (1 - r) < 0x1p-70L * sum) break;
        w *= r * (1 - 2 * d->c1); /* r: 2u + E_F, two products: u each */
    }
    long double v = sum - es * ERRSLACK;
    return v > 0 ? v : 0;
}

/* F bounds (t >= 0) in the fallback */
void dpa_rr_chern_F(const dpa_rr_dist *d, long double t, long double *fhi, long double *flo)
{
    long double m0 = chern_min(d, 0, t);
    *fhi = m0 >= 0 ? 1 : fminl(1, expl(m0) * (1 + 2 * E_F));
    long double m1 = chern_min(d, 1, t), m2 = chern_min(d, 2, t);
    long double l2 = t + m2;
    l2 += U * (fabsl(t) + fabsl(m2));
    long double c = 1 - expl(m1) * (1 + 2 * E_F) - expl(l2) * (1 + 2 * E_F);
    c -= 4 * U;
    long double lat = chern_lattice_lo(d, t);
    *flo = fmaxl(0, fmaxl(c, lat));
}
