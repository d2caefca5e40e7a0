/* Discrete Gaussian mechanism: pair N_Z(s, sigma^2) vs N_Z(0, sigma^2),
 * pmf proportional to exp(-(o - c)^2 / (2 sigma^2)) on the integers.
 * Loss at o: (2 o s - s^2) / (2 sigma^2).  Atoms are enumerated for
 * o in [-K sigma - 1, s + K sigma + 1] with K = 12; the omitted mass on each
 * side is below 1e-30 (sum_{o >= K sigma} e^{-o^2/(2 sigma^2)} / Z <=
 * e^{-K^2/2} + Phibar(K) < 6e-32 since Z >= max(1, sqrt(2 pi) sigma (1 - tiny))),
 * recorded as slack and pushed to the safe side by the discretizer.
 *
 * The truncated discrete Gaussian (dp_accounting's truncation_bound T): the
 * noise conditioned on [-T, T], pmf exp(-n^2/(2 sigma^2)) / Z_T with
 * Z_T = sum_{|n| <= T} exp(-n^2/(2 sigma^2)).  A = law of s + noise on
 * [s - T, s + T], B = law of the noise on [-T, T] (docs/mechanisms.md,
 * "Truncated discrete Gaussian"):
 *   o in [s - T, T]      (both supports): loss (2 o s - s^2) / (2 sigma^2), as untruncated;
 *   o in (T, s + T]      (A only): loss +inf, A-mass sum_{n = max(T - s + 1, -T)}^{T} pmf(n);
 *   o in [-T, s - T)     (B only): loss -inf, B-mass the same sum (reflection n -> -n).
 * 2T < s: the supports are disjoint (every atom infinite): the non-private
 * pair.  The pair is symmetric: o -> s - o maps A onto B and B onto A and
 * the loss at o onto minus the loss at s - o, so (A, B) and (B, A) have the
 * same loss law.  The finite atoms are enumerated on the untruncated window
 * above intersected with [s - T, T]; when T exceeds the window, the omitted
 * A-mass on each side is at most the untruncated bound times Z / Z_T, and
 * Z_T >= Z (1 - 1e-30), so still below 1e-30 (slack); the infinite atoms
 * are summed in log space whatever T is (no underflow to 0).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include <stdlib.h>
#include "mech/pair.h"
#include "num/num.h"
#include "dpacct/event.h"

#define DG_K 12.0
#define DG_SLACK 1e-30
#define DG_V2_MIN 1e-290

/* log sum_{o in Z} exp(-o^2 / (2 s^2)). For s >= 1 by Poisson summation,
 * Z = sqrt(2 pi) s (1 + 2 sum_k exp(-2 pi^2 s^2 k^2)), whose correction is
 * below 6e-9 and computed exactly; else by direct summation (|o| <= 40 s + 2
 * leaves less than e^{-800}). */
static double log_normalizer(double s)
{
    if (s >= 1.0) {
        double c = 0;
        for (int k = 1; k <= 3; k++) c += exp(-2.0 * M_PI * M_PI * s * s * k * k);
        return 0.5 * log(2.0 * M_PI) + log(s) + log1p(2.0 * c);
    }
    double sum = 1.0;
    int lim = (int)ceil(40.0 * s) + 2;
    for (int o = 1; o <= lim; o++) sum += 2.0 * exp(-(double)o * o / (2.0 * s * s));
    return log(sum);
}

dpa_pair *dpa_pair_discrete_gaussian(double sigma, double sensitivity, dpa_error *err)
{
    if (!(sigma > 0 && sigma <= DPA_MAX_DISCRETE_GAUSSIAN_SIGMA) ||
        !(sensitivity >= 1 && sensitivity <= 1e6 && sensitivity == floor(sensitivity))) {
        dpa_error_set(err, DPA_EINVAL, "discrete_gaussian: need 0 < sigma <= %g and integer sensitivity in [1, 1e6]",
                      DPA_MAX_DISCRETE_GAUSSIAN_SIGMA);
        return NULL;
    }
    double s = sensitivity, v2 = 2.0 * sigma * sigma;
    /* sigma so small that 2 sigma^2 (nearly) underflows: every atom but o = s
     * has P-mass below e^{-1e290}; the pair is the non-private one to double
     * precision (and computing it would form 0/0) */
    if (!(v2 >= DG_V2_MIN)) return dpa_pair_nonprivate(err);
    double omin = floor(-DG_K * sigma) - 1, omax = ceil(s + DG_K * sigma) + 1;
    size_t n = (size_t)(omax - omin) + 1;
    dpa_pair *p = dpa_pair_alloc(DPA_PAIR_ATOMS, n, err);
    if (!p) return NULL;
    double lz = log_normalizer(sigma);
    for (size_t i = 0; i < n; i++) {
        double o = omin + (double)i;
        p->atoms[i] = (dpa_atom){(2.0 * o * s - s * s) / v2, -(o - s) * (o - s) / v2 - lz, -o * o / v2 - lz};
    }
    p->slack_hi = p->slack_lo = DG_SLACK;
    p->symmetric = 1;
    return p;
}

/* log sum_{n = a}^{b} exp(-n^2 / v2) for integers a <= b (|a|, |b| <= 1e9 + 1e6),
 * in long double from the largest term (at the n of least |n|) outwards; a
 * side stops once its term is below 2^-140 of the sum (the terms beyond then
 * add less than 2^-140 (1 + v2 / 2) < 1e-31 relative for sigma <= 1e5: far
 * below the 2^-64 rounding of the sum). */
static double log_sum_sq(double a, double b, double v2)
{
    double m = a > 0 ? a : b < 0 ? b : 0; /* least |n| in [a, b] */
    long double lv2 = v2, m2 = (long double)m * m, sum = 1.0L;
    for (int side = -1; side <= 1; side += 2) {
        for (double n = m + side; n >= a && n <= b; n += side) {
            long double t = expl(-((long double)n * n - m2) / lv2);
            sum += t;
            if (t < 0x1p-140L * sum) break;
        }
    }
    return (double)(logl(sum) - m2 / lv2);
}

dpa_pair *dpa_pair_discrete_gaussian_truncated(double sigma, double sensitivity, double truncation, dpa_error *err)
{
    if (truncation == DPA_DG_UNTRUNCATED) return dpa_pair_discrete_gaussian(sigma, sensitivity, err);
    if (!(truncation >= 0 && truncation <= DPA_MAX_DG_TRUNCATION && truncation == floor(truncation))) {
        dpa_error_set(err, DPA_EINVAL, "discrete_gaussian: truncation must be an integer in [0, %g], got %g",
                      DPA_MAX_DG_TRUNCATION, truncation);
        return NULL;
    }
    dpa_pair *u = dpa_pair_discrete_gaussian(sigma, sensitivity, err); /* checks sigma, sensitivity */
    if (!u) return NULL;
    double s = sensitivity, T = truncation, v2 = 2.0 * sigma * sigma;
    if (!(v2 >= DG_V2_MIN)) return u; /* no noise: non-private already */
    dpa_pair_free(u);
    if (2 * T < s) return dpa_pair_nonprivate(err); /* disjoint supports */
    double lz = log_sum_sq(-T, T, v2);
    /* the finite atoms: [s - T, T] within the untruncated window */
    double wlo = floor(-DG_K * sigma) - 1, whi = ceil(s + DG_K * sigma) + 1;
    double olo = fmax(s - T, wlo), ohi = fmin(T, whi);
    size_t nfin = ohi >= olo ? (size_t)(ohi - olo) + 1 : 0;
    dpa_pair *p = dpa_pair_alloc(DPA_PAIR_ATOMS, nfin + 2, err);
    if (!p) return NULL;
    /* the infinite atoms: noise n in [max(T - s + 1, -T), T] */
    double linf = log_sum_sq(fmax(T - s + 1, -T), T, v2) - lz;
    p->atoms[0] = (dpa_atom){-INFINITY, -INFINITY, linf};
    for (size_t i = 0; i < nfin; i++) {
        double o = olo + (double)i;
        p->atoms[i + 1] = (dpa_atom){(2.0 * o * s - s * s) / v2, -(o - s) * (o - s) / v2 - lz, -o * o / v2 - lz};
    }
    p->atoms[nfin + 1] = (dpa_atom){INFINITY, linf, -INFINITY};
    p->slack_lo = olo > s - T ? DG_SLACK : 0;
    p->slack_hi = ohi < T ? DG_SLACK : 0;
    p->symmetric = 1;
    return p;
}
