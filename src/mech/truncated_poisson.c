/* Truncated Poisson subsampling of a Gaussian sum query (truncated_poisson
 * events, docs/mechanisms.md §3).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * D' = D plus the record x, |D'| = n.  Each record is kept with
 * probability q; a batch above max_batch = b records is cut to a uniformly
 * random subset of b.  Let K ~ Bin(n - 1, q) count the other records kept
 * and T = {K >= b}; T depends on the other records' coins only, the same
 * under D and D'.
 *  - Off T no batch is ever cut (K + 1 <= b): the mechanism given the
 *    other coins is Poisson subsampling of x at rate q, pair
 *    (q N(mu) + (1 - q) N(0), N(0)) (LT Thm 5.1, joint convexity over the
 *    other records' batch).
 *  - On T the batch always has b records.  By exchangeability of the other
 *    records, under D it is a uniform b-subset R of them; under D' it is
 *    such an R with probability 1 - q_T and, with probability q_T, x plus a
 *    uniform (b - 1)-subset, which is R with one uniform element replaced
 *    by x: the sum moves by g_x - g_r, of norm at most 2 sensitivity.
 *    Joint convexity over (R, replaced element) gives the pair
 *    ((1 - q_T) N(0) + q_T N(2 mu), N(0)), with
 *      q_T = P(x in the batch | T) = q E[b / (K + 1) | K >= b]
 *          = b P(Bin(n, q) > b) / (n P(T))
 *    (q P(K = k) / (k + 1) = P(Bin(n, q) = k + 1) / n).
 * D and D' are the p_T-mixtures of the two cases, so the pair that also
 * reveals T (dpa_pair_labelled) dominates both directions.  This is the
 * decomposition of dp_accounting's from_truncated_subsampled_gaussian_mechanism
 * (arXiv:2508.15089), derived here for the pair.
 *
 * The binomial tails: log pmf by Loader's saddle-point form (stirlerr and
 * bd0, "Fast and accurate computation of binomial probabilities", 2000; a
 * few ulps of long double), then a sum by the ratio recurrence away from
 * the mode, stopped when the geometric bound on the rest is below
 * TAIL_REL of the sum.  The tails enter the pair as mixture weights, so an
 * error e in p_T moves every delta by at most e (both parts' deltas lie in
 * [0, 1]); with e ~ 1e-18 p_T this is far below the pld method's own
 * rounding allowances (and the rdp bound is linear in the weights).
 */
#include <math.h>
#include <stdlib.h>
#include "mech/pair.h"
#include "num/num.h"

/* stop summing when the bound on the remaining terms is below this
 * fraction of the sum (long double keeps ~1e-19) */
#define TAIL_REL 1e-21L
/* relative error allowed for q_T before rounding it up (a few hundred
 * long double roundings) */
#define QT_REL 1e-16L

static const long double LN_2PI = 1.837877066409345483560659472811235279722794947275566825634L;

/* stirlerr(x) = log(x!) - log(sqrt(2 pi x) (x/e)^x), x >= 1 */
static long double stirlerr(long double x)
{
    if (x <= 35) return lgammal(x + 1) - (x + 0.5L) * logl(x) + x - 0.5L * LN_2PI;
    const long double S0 = 1.0L / 12, S1 = 1.0L / 360, S2 = 1.0L / 1260, S3 = 1.0L / 1680, S4 = 1.0L / 1188;
    long double xx = x * x;
    return (S0 - (S1 - (S2 - (S3 - S4 / xx) / xx) / xx) / xx) / x;
}

/* bd0(x, m) = x log(x / m) + m - x, without cancellation near x = m */
static long double bd0(long double x, long double m)
{
    if (fabsl(x - m) < 0.1L * (x + m)) {
        long double v = (x - m) / (x + m), s = (x - m) * v, ej = 2 * x * v;
        v *= v;
        for (int j = 1; j < 1000; j++) {
            ej *= v;
            long double s1 = s + ej / (2 * j + 1);
            if (s1 == s) return s1;
            s = s1;
        }
        return s;
    }
    return x * logl(x / m) + m - x;
}

/* log P(Bin(N, q) = x), 0 < q < 1 */
static long double log_pmf(long double N, long double q, long double x)
{
    if (x == 0) return N * log1pl(-q);
    if (x == N) return N * logl(q);
    long double lc = stirlerr(N) - stirlerr(x) - stirlerr(N - x) - bd0(x, N * q) - bd0(N - x, N * (1 - q));
    long double lf = LN_2PI + logl(x) + log1pl(-x / N);
    return lc - 0.5L * lf;
}

/* P(Bin(N, q) >= k), 0 < q < 1; *terms counts the terms summed */
static dpa_status tail_ge(long double N, long double q, long double k, long double *out, dpa_error *err)
{
    if (k <= 0) { *out = 1; return DPA_OK; }
    if (k > N) { *out = 0; return DPA_OK; }
    long double odds = q / (1 - q), s = 0, t;
    double terms = 0;
    if (k > N * q) { /* the upper tail directly: ratios below 1, decreasing */
        t = expl(log_pmf(N, q, k));
        for (long double j = k;; j++) {
            s += t;
            if (j >= N) break;
            long double r = (N - j) / (j + 1) * odds;
            t *= r;
            if (t / (1 - r) <= TAIL_REL * s || t == 0) break;
            if (++terms > DPA_TRUNC_MAX_TERMS) goto toomany;
        }
        *out = s;
        return DPA_OK;
    }
    /* 1 - P(X <= k - 1), summed downwards from k - 1 (below the mean) */
    t = expl(log_pmf(N, q, k - 1));
    for (long double j = k - 1;; j--) {
        s += t;
        if (j <= 0) break;
        long double r = j / (N - j + 1) / odds;
        t *= r;
        if (t / (1 - r) <= TAIL_REL * s || t == 0) break;
        if (++terms > DPA_TRUNC_MAX_TERMS) goto toomany;
    }
    *out = s >= 1 ? 0 : 1 - s;
    return DPA_OK;
toomany:
    return dpa_error_set(err, DPA_EUNSUPPORTED,
                         "truncated_poisson: the binomial tails of n = %.17Lg, rate = %.17Lg need more than %g "
                         "terms; not supported",
                         N, q, DPA_TRUNC_MAX_TERMS);
}

dpa_status dpa_truncation_probs(double q, double max_batch, double n, long double *pt, long double *qt,
                                dpa_error *err)
{
    long double b = max_batch, N = n, s2;
    *pt = *qt = 0;
    if (q == 1) { /* every record kept: the batch has n records */
        if (N - 1 >= b) {
            *pt = 1;
            *qt = b / N;
        }
        return DPA_OK;
    }
    dpa_status st = tail_ge(N - 1, q, b, pt, err);
    if (st || *pt == 0) return st;
    st = tail_ge(N, q, b + 1, &s2, err);
    if (st) return st;
    *qt = b * s2 / (N * *pt);
    if (*qt > q) *qt = q; /* q_T < q b / (b + 1) exactly; rounding only */
    return DPA_OK;
}

dpa_pair *dpa_pair_truncated_poisson(double q, double max_batch, double n, double mu, dpa_error *err)
{
    long double pt, qt;
    if (!(q > 0 && q <= 1) || !(mu > 0)) {
        dpa_error_set(err, DPA_EINVAL, "truncated_poisson: rate in (0, 1] and mu > 0 needed, got %g and %g", q, mu);
        return NULL;
    }
    if (dpa_truncation_probs(q, max_batch, n, &pt, &qt, err)) return NULL;
    if (pt == 0) return dpa_pair_poisson(dpa_pair_gaussian(mu, err), q, err);
    /* q_T rounded up: the subsampled pair is monotone in its rate */
    double qtu = fmin(1.0, dpa_ld_up(qt * (1 + QT_REL)));
    dpa_pair *parts[2];
    double w[2];
    size_t k = 0;
    if (pt < 1) {
        parts[k] = dpa_pair_poisson(dpa_pair_gaussian(mu, err), q, err);
        w[k++] = (double)(1 - pt);
    }
    parts[k] = dpa_pair_poisson(dpa_pair_gaussian(2 * mu, err), qtu, err);
    w[k++] = (double)pt;
    if (w[k - 1] == 0 || (k == 2 && w[0] == 0)) { /* a weight below the double range */
        size_t keep = w[0] == 0 ? k - 1 : 0;
        dpa_pair_free(parts[1 - keep]);
        parts[0] = parts[keep];
        w[0] = 1;
        k = 1;
    }
    return dpa_pair_labelled(parts, w, k, err);
}
