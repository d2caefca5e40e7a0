/* The Rényi divergence of a discrete Gaussian leaf (plain, Poisson-subsampled,
 * truncated) at real orders by a direct sum over the integers with a
 * certified geometric bound on the tails beyond the sum, for dpa_renyi
 * (docs/rdp.md, "Discrete Gaussian leaves"; src/rdp/renyi.c has the notation).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The leaf's remove pair is (M1, M2) = (q A + (1 - q) B, B) (q = 1: plain),
 * B = N_Z(0, sigma^2) conditioned on [-T, T] (T = +inf: untruncated),
 * A = the same noise shifted by s.  Both normalize by one constant Z_T, and
 * on the common support [s - T, T] (all of Z untruncated) A(o)/B(o) = e^{L(o)},
 * L(o) = (2 o s - s^2) / (2 sigma^2).  With b(o) = e^{-o^2/(2 sigma^2)} and
 *   g(o) = (1 - q) + q e^{L(o)}  (o >= s - T),   g(o) = 1 - q  (o < s - T),
 * E(theta) = sum_{o in [-T, T]} M2^{-theta} M1^{1+theta} = S(gamma) / S(0),
 *   S(gamma) = sum_{o in [-T, T]} b(o) g(o)^gamma,   gamma = 1 + theta,
 * for every real gamma (the atoms of M1 outside [-T, T] carry M2 = 0: loss
 * +inf, whose share is +inf for gamma > 1 (the caller's case) and 0 below).
 * S(gamma) is summed over o in [M, N] and the rest bounded by (derivation in
 * docs/rdp.md): with t(o) = b(o) g(o)^gamma,
 *   o >= N + 1 (N >= s):  t(o+1)/t(o) <= r_hi = e^{(2 gamma+ s - (2N + 3)) / (2 sigma^2)},
 *   o <= M - 1 (M <= 0):  t(o-1)/t(o) <= r_lo = e^{(2 gamma- s + 2M - 3) / (2 sigma^2)},
 * (gamma+ = max(gamma, 0), gamma- = max(-gamma, 0); gamma- enters only for q = 1),
 * because log g grows by at most 2s/(2 sigma^2) per step and never falls;
 * so the tails are at most t(N+1)/(1 - r_hi) and t(M-1)/(1 - r_lo), except
 * for gamma < 0 and q < 1, where g >= 1 - q gives t(o) <= b(o) (1 - q)^gamma
 * below M and b's own ratio.  gamma < 0 with q = 1 and T finite: the atoms
 * below s - T have A = 0 under B: E = +inf.
 */
#include <math.h>
#include "dpacct/event.h"
#include "num/num.h"
#include "rdp/rdp.h"

#define U DPA_UNIT_ROUNDOFF

/* Half-width of the summed range around the modes, in sigmas: the first
 * omitted term is below e^{-40^2/2} = e^{-800} of the largest (the tail
 * bound then adds nothing visible; it is certified whatever the width). */
#define DG_WIDTH 40.0
/* Most terms summed (a few tenths of a second); beyond it the order or sigma
 * is too large for the direct sum and the caller falls back (plain: zCDP). */
#define DG_MAX_TERMS 4e6

typedef struct dgpar {
    double v2, s, q, lq, l1q, T, gamma; /* T < 0: untruncated */
    int cond; /* both measures conditioned on [s - T, T]: terms below s - T are 0 */
} dgpar;

/* log t(o) (computed) and an absolute error bound *e on it; -INFINITY for a
 * zero term.  Error model: o^2, 2 o s, s^2 exact (integers below 2^26) or
 * within u; each quotient by v2 (itself within u of 2 sigma^2) within 2u;
 * dpa_log_add_exp within 4u (|args| + 1); the product with gamma and the
 * sum within u each; 8u per unit of magnitude covers them. */
static double log_term(const dgpar *d, double o, double *e)
{
    double lb = -(o * o) / d->v2, lg = 0, mag = 0;
    if (d->cond && o < d->s - d->T) return -INFINITY;
    if (d->gamma != 0) {
        if (d->T >= 0 && o < d->s - d->T) {
            if (d->cond) return -INFINITY;
            if (d->q == 1) return d->gamma > 0 ? -INFINITY : INFINITY;
            lg = d->l1q;
        } else {
            double L = (2.0 * o * d->s - d->s * d->s) / d->v2;
            lg = d->q == 1 ? L : dpa_log_add_exp(d->lq + L, d->l1q);
            mag = (2.0 * fabs(o) * d->s + d->s * d->s) / d->v2 + (d->q == 1 ? 0 : fabs(d->lq) + fabs(d->l1q) + 2);
        }
    }
    double l = lb + d->gamma * lg;
    *e = 8 * U * (fabs(lb) + fabs(d->gamma) * (fabs(lg) + mag) + 1);
    return l;
}

/* A certified bracket [*lo, *hi] on log S(gamma); returns 1 if S = +inf,
 * -1 if the range needs more than DG_MAX_TERMS terms, 0 otherwise. */
static int log_s(const dgpar *d, double *lo, double *hi)
{
    /* gm enters the lower ratio (q = 1 only); the range reaches the modes,
     * which lie within [-gamma- s, gamma+ s] */
    double sg = d->s, gp = fmax(d->gamma, 0), gm = d->q == 1 ? fmax(-d->gamma, 0) : 0;
    double sig = sqrt(d->v2 / 2);
    if (d->gamma < 0 && d->q == 1 && d->T >= 0 && !d->cond) return 1;
    double N = ceil(fmax(sg, gp * sg + DG_WIDTH * sig)) + 1;
    double M = floor(-fmax(-d->gamma, 0) * sg - DG_WIDTH * sig) - 1;
    int tail_hi = 1, tail_lo = 1;
    if (d->T >= 0 && N >= d->T) N = d->T, tail_hi = 0;
    if (d->T >= 0 && M <= -d->T) M = -d->T, tail_lo = 0;
    if (!(N - M + 1 <= DG_MAX_TERMS)) return -1;
    /* pass 1: the largest term */
    double m = -INFINITY, emax = 0;
    for (double o = M; o <= N; o++) {
        double e, l = log_term(d, o, &e);
        if (l == INFINITY) return 1;
        if (l > m) m = l;
    }
    if (m == -INFINITY) return -1; /* (disjoint supports: the caller's cases exclude it) */
    /* pass 2: the sum scaled by e^{-m} and its error, in long double
     * (2^-64 per addition).  A term's computed e^{l - m} is within e_o of the
     * true one in log: e (log_term), u |l - m| (the subtraction; m is exact
     * as the scale), u (exp); so the sum is within sum_o t_o (e^{e_o} - 1)
     * <= (1 + 2 emax) sum_o t_o e_o of the true one (e_o <= emax <= 1). */
    long double sum = 0, esum = 0;
    for (double o = M; o <= N; o++) {
        double e, l = log_term(d, o, &e);
        if (l == -INFINITY) continue;
        double t = exp(l - m), eo = e + U * fabs(l - m) + U;
        sum += t;
        esum += (long double)t * eo;
        if (eo > emax) emax = eo;
    }
    if (!(emax <= 1)) return -1;
    /* the tails, upper bounds scaled by e^{-m}; each ratio's exponent is
     * negative by the choice of N and M (by 80 sigma at least); rounded up
     * by 4u of its magnitude, the exp and the quotient by 8u */
    double tails = 0;
    if (tail_hi) {
        double x = (2 * gp * sg - (2 * N + 3)) / d->v2;
        x += 4 * U * (fabs(x) + 1);
        double e, l = log_term(d, N + 1, &e);
        if (!(x < 0)) return -1;
        if (l > -INFINITY) tails += exp(l + e - m) / -expm1(x) * (1 + 8 * U);
    }
    if (tail_lo) {
        double e, l;
        double x = (2 * gm * sg + 2 * M - 3) / d->v2;
        if (d->gamma < 0 && d->q < 1) { /* g >= 1 - q: t <= b (1 - q)^gamma, b's ratio */
            x = (2 * M - 3) / d->v2;
            l = -((M - 1) * (M - 1)) / d->v2 + d->gamma * d->l1q;
            e = 8 * U * (fabs(l) + 1);
        } else {
            l = log_term(d, M - 1, &e);
        }
        x += 4 * U * (fabs(x) + 1);
        if (!(x < 0)) return -1;
        if (l > -INFINITY) tails += exp(l + e - m) / -expm1(x) * (1 + 8 * U);
    }
    /* the relative error of the sum: the terms' (esum (1 + 2 emax)), the
     * n additions (n 2^-64, with a factor 2 for the error sum's own), the
     * log, the final additions within 2u of their magnitudes */
    double n = N - M + 1;
    double rel = (double)(esum / sum) * (1 + 2 * emax) + n * 0x1p-62;
    double ls = (double)logl(sum);
    double all = 2 * U * (fabs(m) + fabs(ls) + 1) + 2 * U;
    *lo = m + ls + log1p(-rel) * (1 + 2 * U) - all;
    *hi = m + ls + log1p(rel + (double)((long double)tails / sum)) * (1 + 2 * U) + all;
    return 0;
}

int dpa_renyi_dg_log_e(double sigma, double s, double q, double T, int cond, double theta, double *lo, double *hi)
{
    dgpar d = {2.0 * sigma * sigma, s, q, log(q), log1p(-q), T, 1 + theta, cond && T >= 0 && q == 1};
    dgpar z = d;
    z.gamma = 0;
    double a0, a1, b0, b1;
    int r = log_s(&d, &a0, &a1);
    if (r) {
        *lo = *hi = INFINITY;
        return r;
    }
    r = log_s(&z, &b0, &b1);
    if (r) return -1;
    *lo = (a0 - b1) - 2 * U * (fabs(a0) + fabs(b1));
    *hi = (a1 - b0) + 2 * U * (fabs(a1) + fabs(b0));
    return 0;
}
