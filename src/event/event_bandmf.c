/* dpacct — banded matrix factorization (DP-BandMF / DP-FTRL with a b-banded
 * lower-triangular Toeplitz strategy, docs/bandmf.md): the validation of a
 * run, the sensitivity of its strategy (column norms, truncated at the end
 * of the horizon) and its expansion into events dpacct accounts:
 *   cyclic Poisson participation (Choquette-Choo et al. 2023, arXiv
 *   2306.08153, the amplification theorem for b-banded strategies):
 *     repeat(ceil(n/b), poisson(q, gaussian(s, ||c||_2)));
 *   fixed participation, k times at least `sep` >= b apart (Choquette-Choo
 *   et al. 2022, arXiv 2211.06530; columns >= b apart have disjoint
 *   supports): the Gaussian mechanism with sensitivity
 *   sqrt(sum_l m_l c_l^2), written exactly as the composition of
 *   repeat(m_l, gaussian(s, |c_l|)) (GDP composition, Dong, Roth & Su
 *   2022, Cor. 3.3), so no square root is rounded.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "event_internal.h"

static int is_count(double v)
{
    return v >= 1 && v <= DPA_MAX_COUNT && v == floor(v);
}

/* The problem text "must be ..., got V" of field f, for every check. */
#define PROBLEM(...) (snprintf(problem, n, __VA_ARGS__), 1)

int dpa_ev_bandmf_problem(const double *c, size_t bands, double noise, double iterations, double rate,
                          double participations, double separation, dpa_bandmf_field *f, size_t *index,
                          char *problem, size_t n)
{
    *index = (size_t)-1;
    *f = DPA_BANDMF_COEFFICIENTS;
    if (!c || bands == 0)
        return PROBLEM("must not be empty (the first column of the strategy, c0 first)");
    if ((double)bands > DPA_BANDMF_MAX_BANDS)
        return PROBLEM("has %zu entries, more than %.17g", bands, (double)DPA_BANDMF_MAX_BANDS);
    for (size_t l = 0; l < bands; l++) {
        double a = fabs(c[l]);
        *index = l;
        if (l == 0 && !(c[0] > 0 && c[0] <= DPA_BANDMF_MAX_COEF))
            return PROBLEM("(the diagonal c0) must be > 0 and at most 1e100 (C must be invertible), got %.17g", c[0]);
        if (!isfinite(c[l]) || (a != 0 && (a < DPA_BANDMF_MIN_COEF || a > DPA_BANDMF_MAX_COEF)))
            return PROBLEM("must be 0 or finite with |c| in [1e-100, 1e100], got %.17g", c[l]);
    }
    *index = (size_t)-1;
    *f = DPA_BANDMF_NOISE;
    if (!(noise > 0) || !isfinite(noise))
        return PROBLEM("must be > 0 and finite, got %.17g", noise);
    *f = DPA_BANDMF_ITERATIONS;
    if (!is_count(iterations))
        return PROBLEM("must be an integer in [1, 1e15], got %.17g", iterations);
    if (rate != 0) {
        *f = DPA_BANDMF_RATE;
        if (!(rate > 0 && rate <= 1))
            return PROBLEM("must be in (0, 1], got %.17g", rate);
        *f = DPA_BANDMF_EPOCHS;
        if (participations != 0)
            return PROBLEM("must be 0 with poisson participation (the rate is given), got %.17g", participations);
        *f = DPA_BANDMF_SEPARATION;
        if (separation != 0)
            return PROBLEM("must be 0 with poisson participation (the groups are b apart), got %.17g", separation);
        *f = DPA_BANDMF_COEFFICIENTS;
        if ((double)bands > iterations)
            return PROBLEM("has %zu bands but iterations is %.17g: cyclic Poisson sampling splits the data into "
                           "b groups over n iterations, so b <= n", bands, iterations);
        return 0;
    }
    *f = DPA_BANDMF_EPOCHS;
    if (!is_count(participations))
        return PROBLEM("must be an integer in [1, 1e15], got %.17g", participations);
    *f = DPA_BANDMF_SEPARATION;
    if (separation != 0 && !(is_count(separation) && separation >= (double)bands))
        return PROBLEM("must be an integer >= the number of bands %zu (columns closer than b overlap, and "
                       "the sensitivity then depends on the signs), got %.17g", bands, separation);
    {
        double sep = separation != 0 ? separation : (double)bands;
        /* (k - 1) sep + 1 <= n: exact below 2^53, and far above n otherwise */
        *f = DPA_BANDMF_EPOCHS;
        if ((participations - 1) * sep + 1 > iterations)
            return PROBLEM("%.17g participations at least %.17g apart need (k - 1) sep + 1 = %.17g iterations, "
                           "more than iterations = %.17g", participations, sep, (participations - 1) * sep + 1,
                           iterations);
    }
    return 0;
}
#undef PROBLEM

const char *dpa_ev_bandmf_field_name(dpa_bandmf_field f)
{
    static const char *const names[] = {"coefficients", "noise_multiplier", "iterations", "rate", "epochs",
                                        "separation"};
    return names[f];
}

/* DPA_OK, or DPA_EINVAL "bandmf: FIELD: problem" in err. */
static dpa_status check(const double *c, size_t bands, double noise, double n, double rate, double k, double sep,
                        dpa_error *err)
{
    char problem[384];
    dpa_bandmf_field f;
    size_t i;
    if (!dpa_ev_bandmf_problem(c, bands, noise, n, rate, k, sep, &f, &i, problem, sizeof problem))
        return DPA_OK;
    if (i != (size_t)-1)
        return dpa_error_set(err, DPA_EINVAL, "bandmf: coefficients[%zu] %s", i, problem);
    return dpa_error_set(err, DPA_EINVAL, "bandmf: %s %s", dpa_ev_bandmf_field_name(f), problem);
}

/* m_l: the participations (of the earliest pattern 0, sep, 2 sep, ...) whose
 * column reaches row-offset l before the horizon n: #{i < k : i sep + l < n}
 * = min(k, ceil((n - l) / sep)) for l < n, else 0.  Exact: all below 2^53. */
static double band_count(size_t l, double n, double k, double sep)
{
    double m;
    if ((double)l >= n)
        return 0;
    m = floor((n - (double)l - 1) / sep) + 1; /* ceil((n - l)/sep); n - l - 1 < 2^53 exact, floor of the
                                                 quotient exact for integers below 2^53 */
    return m < k ? m : k;
}

/* sqrt(sum_l m_l c_l^2) rounded up (up = 1) or down (up = 0); m_l = 1 for
 * l < min(b, n) when k = 0 (one full column).  long double sum: every term
 * and partial sum is positive, so the relative error of the sum is at most
 * (b + 1) u_L (u_L = LDBL_EPSILON / 2, one rounding per square, product
 * and addition: 3 b u_L bounds it), sqrtl adds u_L; the bound is widened by
 * (3 b + 4) LDBL_EPSILON before the directed conversion to double.  A single
 * nonzero coefficient with m = 1 is exact. */
static double norm_dir(const double *c, size_t bands, double n, double k, double sep, int up)
{
    long double s = 0, r, slack;
    size_t nz = 0, last = 0;
    double d;
    for (size_t l = 0; l < bands; l++) {
        double m = k > 0 ? band_count(l, n, k, sep) : ((double)l < n ? 1 : 0);
        if (c[l] == 0 || m == 0)
            continue;
        nz++;
        last = l;
        s += (long double)m * ((long double)c[l] * (long double)c[l]);
    }
    if (nz == 1 && (k == 0 || band_count(last, n, k, sep) == 1))
        return fabs(c[last]);
    r = sqrtl(s);
    slack = (3.0L * (long double)bands + 4.0L) * LDBL_EPSILON;
    r = up ? r * (1 + slack) : r * (1 - slack);
    d = (double)r;
    if (up && (long double)d < r)
        d = nextafter(d, INFINITY);
    if (!up && (long double)d > r)
        d = nextafter(d, 0);
    return d;
}

double dpa_bandmf_sensitivity(const double *c, size_t bands, double iterations, double participations,
                              double separation, int round_up)
{
    double sep = separation != 0 ? separation : (double)bands;
    if (!c || bands == 0 || !is_count(iterations) || (participations != 0 && !is_count(participations)) ||
        !is_count(sep))
        return NAN;
    return norm_dir(c, bands, iterations, participations, sep, round_up);
}

/* fixed participation: compose over l with c_l != 0 of
 * repeat(m_l, gaussian(s, |c_l|)); one child stays unwrapped. */
static dpa_event *expand_fixed(const double *c, size_t bands, double s, double n, double k, double sep,
                               dpa_error *err)
{
    dpa_event **ch = malloc(bands * sizeof *ch);
    size_t nc = 0;
    if (!ch) {
        dpa_error_set(err, DPA_ENOMEM, "bandmf: out of memory");
        return NULL;
    }
    for (size_t l = 0; l < bands; l++) {
        double m = band_count(l, n, k, sep);
        dpa_event *g;
        if (c[l] == 0 || m == 0)
            continue;
        g = dpa_event_gaussian(s, fabs(c[l]), err);
        if (g && m > 1)
            g = dpa_event_repeat(m, g, err);
        if (!g) {
            while (nc)
                dpa_event_free(ch[--nc]);
            free(ch);
            return NULL;
        }
        ch[nc++] = g;
    }
    {
        dpa_event *e = nc == 1 ? ch[0] : dpa_event_compose(ch, nc, err);
        free(ch);
        return e;
    }
}

/* rounds (>= 1) of poisson(q, gaussian(s, sens)), unwrapped when one. */
static dpa_event *poisson_rounds(double rounds, double q, double s, double sens, dpa_error *err)
{
    dpa_event *g = dpa_event_gaussian(s, sens, err), *e;
    if (!g)
        return NULL;
    e = dpa_event_poisson(q, g, err);
    return e && rounds > 1 ? dpa_event_repeat(rounds, e, err) : e;
}

dpa_event *dpa_event_bandmf(const double *coefficients, size_t bands, double noise, double iterations,
                            double rate, double participations, double separation, dpa_error *err)
{
    double sep = separation != 0 ? separation : (double)bands;
    if (check(coefficients, bands, noise, iterations, rate, participations, separation, err))
        return NULL;
    if (rate == 0)
        return expand_fixed(coefficients, bands, noise, iterations, participations, sep, err);
    /* b <= n: every column of group j's first ceil((n - j)/b) - 1 rounds is
     * whole; the theorem bounds every round by the largest column norm */
    return poisson_rounds(ceil(iterations / (double)bands), rate, noise,
                          norm_dir(coefficients, bands, iterations, 0, sep, 1), err);
}

dpa_event *dpa_event_bandmf_instance(const double *coefficients, size_t bands, double noise, double iterations,
                                     double rate, double participations, double separation, dpa_error *err)
{
    double b = (double)bands, r, tail;
    dpa_event *full, *last, *two[2];
    if (check(coefficients, bands, noise, iterations, rate, participations, separation, err))
        return NULL;
    if (rate == 0)
        return dpa_event_bandmf(coefficients, bands, noise, iterations, rate, participations, separation, err);
    /* group 0 (steps 0, b, 2b, ...): r = ceil(n/b) rounds; the last column
     * keeps its first tail = n - (r - 1) b coefficients */
    r = ceil(iterations / b);
    tail = iterations - (r - 1) * b;
    if (tail == b)
        return poisson_rounds(r, rate, noise, norm_dir(coefficients, bands, iterations, 0, b, 0), err);
    last = poisson_rounds(1, rate, noise, norm_dir(coefficients, (size_t)tail, tail, 0, b, 0), err);
    if (!last || r == 1)
        return last;
    full = poisson_rounds(r - 1, rate, noise, norm_dir(coefficients, bands, iterations, 0, b, 0), err);
    if (!full) {
        dpa_event_free(last);
        return NULL;
    }
    two[0] = full;
    two[1] = last;
    return dpa_event_compose(two, 2, err);
}
