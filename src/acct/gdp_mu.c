/* The smallest mu with the composition mu-GDP, certified (docs/fdp.md §8).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A pair is mu-GDP iff its privacy profile, in both directions (remove and
 * add), is at most delta_mu(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu -
 * mu/2) at every eps >= 0 (GDP Cor 2.13 with Prop 2.12: the eps < 0 half of
 * one direction is the eps > 0 half of the other).  delta_mu(eps) increases
 * in mu, so mu* = the smallest such mu is well defined, and everything here
 * compares certified brackets of delta_M (the accountant's queries; their
 * `upper` is the max over both directions) with certified brackets of
 * delta_mu (dpa_exact_delta), always on the safe side:
 *
 *  lower bound   at a point where delta_M(e) >= t (certified), every mu with
 *                delta_mu(e) < t fails; the largest mu whose UPPER
 *                evaluation of delta_mu(e) is below t is kept
 *                (down_mu_from), so the result is rounded down by
 *                construction.
 *  +inf          the composition's mass at +inf exceeds some d > 0 (an
 *                eps query at d answers lower = +inf): delta_M >= d for all
 *                eps while delta_mu -> 0, so mu* = +inf.
 *  Gaussian      the exact method on a composition of gaussian/gdp leaves:
 *                delta_M = delta_mu0 exactly (GDP Cor 3.3) and the bracket
 *                of mu0 follows from the profile brackets (upper_point).
 *  bounded loss  delta_M(E) = 0 certified (upper bound exactly 0) at some E:
 *                then delta_M = 0 on [E, inf), and on a grid 0 = e_0 < ... <
 *                e_n = E, delta_M(e_j) <= delta_mu(e_{j+1}) for every j
 *                proves delta_M <= delta_mu everywhere (both profiles are
 *                non-increasing).
 *
 * Only queries of the already-built accountant are used.  The lower-bound
 * points come from eps queries at a ladder of deltas (an eps query's lower
 * bound e at delta d gives delta_M(e) >= d, see below): a PLD accountant
 * answers those from the grid its first query built, where delta queries
 * at the same points would refine the grid each time.  The searches are
 * steered by a floating-point ESTIMATE of log delta_mu (log_delta_est), which
 * only decides where to look: every bound returned passed a certified test.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dpacct/accountant.h"
#include "acct/accountant_internal.h"
#include "exact/exact.h"
#include "num/num.h"

/* The ladder of deltas of the eps queries: 10^(-k/2), k = 1 .. LADDER_N
 * (0.32 down to 1e-8).  A PLD accountant answers them from the grid of its
 * first query and of the delta query at E_FAR (tail budget 1e-16), without
 * rebuilding, down to 1e-8 for the DP-SGD example (1e-9 would refine its
 * grid: +30 ms). */
#define LADDER_N 16
/* A finite eps beyond every finite loss of the library's pairs in practice
 * (counts <= 1e15 times per-step losses): delta_M there is the mass at +inf
 * (or at losses beyond it). */
#define E_FAR 1e300
/* Largest mu searched for: above it dpa_exact_delta treats the Gaussian as
 * the non-private pair (DPA_MU_NONPRIVATE, src/mech/pair.h); a lower bound
 * reaching it means mu* > MU_CAP. */
#define MU_CAP 1e150
/* Points of the grid of the bounded-loss certificate (intervals). */
#define GRID_N 1024
/* Refinement of that grid (the exact method's queries cost microseconds):
 * rounds that split
 * the intervals needing more than halfway from the lower bound to the
 * current upper bound (at most REFINE_MAX per round, GRID_MAX in all),
 * each roughly halving the upper bound's excess, until that excess is below
 * REFINE_GOAL relative, a round gains less than REFINE_STOP relative, or
 * after REFINE_ROUNDS rounds. */
#define GRID_MAX 8192
#define REFINE_ROUNDS 10
#define REFINE_MAX 512
#define REFINE_GOAL 1e-5
#define REFINE_REL 1e-7
#define REFINE_STOP 1e-7
/* lower_point skips a point whose estimated log delta_mu at the running
 * bound exceeds log t by this much (it could not raise the bound). */
#define LOWER_SKIP 1e-3
/* Bisections on mu stop at this relative width (the bracket of delta_mu
 * is ~2e-12 relative, so finer steps would not mean more). */
#define MU_REL_TOL 1e-13
/* The bisection for the bounded-loss grid stops at this relative width:
 * the grid's own slack is far larger. */
#define GRID_MU_REL_TOL 1e-9

static void set_note(dpa_gdp_mu *out, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#include <stdarg.h>
static void set_note(dpa_gdp_mu *out, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out->note, sizeof out->note, fmt, ap);
    va_end(ap);
}

/* Certified bracket of delta_mu(e): *lo <= delta_mu(e) <= *up. */
static void gauss_bracket(double mu, double e, double *up, double *lo)
{
    dpa_exact_delta(mu, e, up, lo);
}

/* An ESTIMATE of log delta_mu(e), e >= 0, in double precision from
 * log Phi (no underflow): steers the searches (which intervals to split,
 * which to check first, which points may raise the lower bound); it never
 * decides a bound. */
static double log_delta_est(double mu, double e)
{
    if (!(mu > 0)) return -INFINITY;
    double xa = 0.5 * mu - e / mu, xb = xa - mu;
    double la = dpa_log_ndtr(xa), r = e + dpa_log_ndtr(xb) - la;
    return r < 0 ? la + dpa_log1mexp(r) : -INFINITY;
}

/* Certified predicates on delta_mu(e) (both monotone in mu for the true
 * delta_mu; the searches below only ever return a value at which the
 * predicate was evaluated and held):
 *   below(mu):   upper delta_mu(e) <  t, so delta_mu'(e) < t for all mu' <= mu;
 *   reaches(mu): lower delta_mu(e) >= t (strict: > t), so delta_mu'(e) >= t
 *                (> t) for all mu' >= mu. */
static int below(double mu, double e, double t)
{
    double up, lo;
    gauss_bracket(mu, e, &up, &lo);
    return up < t;
}

static int reaches(double mu, double e, double t, int strict)
{
    double up, lo;
    gauss_bracket(mu, e, &up, &lo);
    return strict ? lo > t : lo >= t;
}

/* First step of the galloping searches, relative to the start (the bracket
 * of delta_mu is ~2e-12 relative: smaller steps cannot tell mu apart). */
#define GALLOP_REL 1e-12
#define GALLOP_MIN 1e-9

/* Bisection of [*a, *b] to relative width tol, keeping *b on the side
 * where the test holds ("hi": !below for reaches_side = -1, reaches with
 * strict = reaches_side otherwise) and *a on the other; every end returned
 * was evaluated. */
static void bisect(double *a, double *b, double e, double t, int reaches_side, double tol)
{
    for (int it = 0; it < 200 && *b - *a > tol * *b; it++) {
        double m = 0.5 * (*a + *b);
        if (m <= *a || m >= *b) break;
        int hi = reaches_side < 0 ? !below(m, e, t) : reaches(m, e, t, reaches_side);
        if (hi) *b = m;
        else *a = m;
    }
}

/* The largest mu in [a0, MU_CAP] found with below(mu), given below(a0):
 * galloping up from a0 (a point that improves the running bound a little
 * costs a few evaluations), then bisection to MU_REL_TOL.  Rounded down by
 * construction. */
static double down_mu_from(double a0, double e, double t)
{
    double a = a0, b, step = fmax(GALLOP_MIN, GALLOP_REL * a0);
    for (;;) {
        b = fmin(a + step, MU_CAP);
        if (!below(b, e, t)) break;
        a = b;
        if (a >= MU_CAP) return MU_CAP;
        step *= 4;
    }
    bisect(&a, &b, e, t, -1, MU_REL_TOL);
    return a;
}

/* The smallest mu in (a0, MU_CAP] found with reaches(mu), given that a0
 * does not (or a0 = 0); +INFINITY if MU_CAP does not reach.  Rounded up by
 * construction. */
static double up_mu_from(double a0, double e, double t, int strict, double tol)
{
    double a = a0, b, step = fmax(GALLOP_MIN, GALLOP_REL * a0);
    for (;;) {
        b = fmin(a + step, MU_CAP);
        if (reaches(b, e, t, strict)) break;
        if (b >= MU_CAP) return INFINITY;
        a = b;
        step *= 4;
    }
    bisect(&a, &b, e, t, strict, tol);
    return b;
}

/* Raise *lower with the point delta_M(e) >= t: if delta_mu(e) < t is
 * certified for mu, the composition is not mu-GDP, so mu* > mu. */
static void lower_point(double *lower, double e, double t)
{
    if (!(t > 0) || !(e >= 0) || !isfinite(e)) return;
    /* a point the estimate puts well inside the running bound is skipped */
    if (*lower > 0 && log_delta_est(*lower, e) > log(t) + LOWER_SKIP) return;
    if (!below(*lower, e, t)) return; /* cannot beat the running bound */
    double m = down_mu_from(*lower, e, t);
    if (m > *lower) *lower = m;
}

/* The smallest mu in [0, b0] found with reaches(mu), given reaches(b0):
 * galloping down from b0, then bisection.  Rounded up by construction. */
static double up_mu_down_from(double b0, double e, double t, int strict)
{
    double b = b0, a, step = fmax(GALLOP_MIN, GALLOP_REL * b0);
    for (;;) {
        a = b - step;
        if (a <= 0) {
            a = 0;
            if (reaches(0.0, e, t, strict)) return 0.0;
            break;
        }
        if (!reaches(a, e, t, strict)) break;
        b = a;
        step *= 4;
    }
    bisect(&a, &b, e, t, strict, MU_REL_TOL);
    return b;
}

/* Lower *gauss_up with the point delta_M(e) <= u (Gaussian case only): if
 * the composition is exactly mu0-GDP, delta_mu0(e) <= u < delta_mu(e) for
 * every mu with reaches(mu, strict), so mu0 < mu. */
static void upper_point(double *gauss_up, double e, double u)
{
    if (!(e >= 0) || !isfinite(e) || !(u >= 0) || !(u < 1)) return;
    if (!isfinite(*gauss_up)) {
        *gauss_up = up_mu_from(0.0, e, u, 1, MU_REL_TOL);
        return;
    }
    if (reaches(*gauss_up, e, u, 1)) *gauss_up = up_mu_down_from(*gauss_up, e, u, 1);
}

/* Range [j, k] of grid intervals, checked at once: with Umax the largest
 * U[i] there, delta_mu(e_{k+1}) >= Umax certifies all of them (delta_mu is
 * non-increasing in eps, so delta_mu(e_{i+1}) >= delta_mu(e_{k+1})).  When
 * that fails the range is halved; a single failing interval raises M to its
 * own smallest passing mu.  Returns the new M (+INFINITY if above MU_CAP). */
static double grid_range(double M, const double *e, const double *U, size_t j, size_t k)
{
    if (!isfinite(M)) return M;
    double umax = 0;
    for (size_t i = j; i <= k; i++) umax = fmax(umax, U[i]);
    if (umax <= 0 || reaches(M, e[k + 1], umax, 0)) return M;
    if (j == k) return up_mu_from(M, e[j + 1], U[j], 0, GRID_MU_REL_TOL);
    size_t mid = j + (k - j) / 2;
    M = grid_range(M, e, U, j, mid);
    return grid_range(M, e, U, mid + 1, k);
}

/* The smallest mu found passing the grid certificate: delta_M(e_j) <= U[j]
 * (j < n) and delta_M = 0 from e_n on; mu passes if for every j < n,
 * delta_mu(e_{j+1}) >= U[j] is certified, and then the composition is
 * mu-GDP: on [e_j, e_{j+1}], delta_M(eps) <= delta_M(e_j) <= U[j] <=
 * delta_mu(e_{j+1}) <= delta_mu(eps).  The result is the max over the
 * intervals of each one's own smallest passing mu (the true delta_mu
 * increases in mu, so the max passes every interval), found from `start`
 * (<= mu*, e.g. a lower bound): first the interval the estimate says binds
 * at `ref`, then every interval by grid_range.  +INFINITY if some interval
 * needs more than MU_CAP. */
static double grid_mu(double start, double ref, const double *e, const double *U, size_t n)
{
    double M = start, worst = -INFINITY;
    size_t first = n;
    for (size_t j = 0; j < n; j++) {
        if (!(U[j] > 0)) continue;
        double g = log(U[j]) - log_delta_est(ref, e[j + 1]);
        if (g > worst) {
            worst = g;
            first = j;
        }
    }
    if (first < n) M = grid_range(M, e, U, first, first);
    return n ? grid_range(M, e, U, 0, n - 1) : M;
}

/* A delta query; `certified` cleared when the result is not a proof. */
static dpa_status query_delta(dpa_accountant *a, double e, dpa_result *r, int *certified, dpa_error *err)
{
    dpa_status st = dpa_accountant_delta(a, e, r, err);
    if (st == DPA_OK && !r->certified) *certified = 0;
    return st;
}

/* Merge k sorted new points (ne, nU, nL) into the grid e, U, L of n + 1
 * points (room for n + k + 1), in place from the end. */
static void merge_points(double *e, double *U, double *L, size_t n, const double *ne, const double *nU,
                         const double *nL, size_t k)
{
    for (size_t i = n + k + 1, j = n + 1, q = k; i-- > 0;) {
        if (q > 0 && (j == 0 || ne[q - 1] > e[j - 1])) {
            q--;
            e[i] = ne[q];
            U[i] = nU[q];
            L[i] = nL[q];
        } else {
            j--;
            e[i] = e[j];
            U[i] = U[j];
            L[i] = L[j];
        }
    }
}

/* The bounded-loss case: delta_M(E_FAR) = 0 is certified.  Finds E (upper
 * delta 0 from E on), fills the grid and computes the smallest mu passing
 * the grid certificate; fills out and sets *done on success, else sets the
 * note.  Only for the exact method: every grid point is a delta query
 * (microseconds), then the binding intervals are split round after round
 * (on the PLD grid each query may refine the grid: seconds, see the caller). */
static dpa_status bounded_case(dpa_accountant *a, dpa_gdp_mu *out, int *certified, int *done, dpa_error *err)
{
    dpa_result r;
    dpa_status st;
    *done = 0;
    if ((st = query_delta(a, 0.0, &r, certified, err))) return st;
    lower_point(&out->lower, 0.0, r.lower);
    if (r.upper <= 0) { /* delta_M(0) = 0: the two distributions are equal */
        out->lower = out->upper = 0;
        out->certified_upper = 1;
        out->source = DPA_GDP_MU_BOUNDED;
        set_note(out, "the composition is perfectly private (delta(0) = 0): 0-GDP");
        *done = 1;
        return DPA_OK;
    }

    /* E: the smallest eps found with upper delta 0, between lo (upper > 0)
     * and hi (upper = 0): walk down from E_FAR (square roots down to 1e8,
     * then steps of 2^(1/4), 2 below 1), then halve */
    double lo = 0, hi = E_FAR;
    for (int it = 0; it < 400 && lo == 0 && hi > 1e-300; it++) {
        double m = hi > 1e8 ? sqrt(hi) : hi > 1 ? hi / 1.189207115002721 : 0.5 * hi;
        if ((st = query_delta(a, m, &r, certified, err))) return st;
        if (r.upper <= 0) {
            hi = m;
        } else {
            lo = m;
            lower_point(&out->lower, m, r.lower);
        }
    }
    for (int it = 0; it < 100 && lo > 0 && hi - lo > 1e-6 * hi; it++) {
        double m = 0.5 * (lo + hi);
        if (!(m > lo && m < hi)) break;
        if ((st = query_delta(a, m, &r, certified, err))) return st;
        if (r.upper <= 0) {
            hi = m;
        } else {
            lo = m;
            lower_point(&out->lower, m, r.lower);
        }
    }
    double E = hi;

    size_t n = GRID_N, cap = GRID_MAX;
    double *e = malloc((cap + 1) * sizeof *e), *U = malloc((cap + 1) * sizeof *U),
           *L = malloc((cap + 1) * sizeof *L), *ne = malloc((cap + 1) * sizeof *ne),
           *nU = malloc((cap + 1) * sizeof *nU), *nL = malloc((cap + 1) * sizeof *nL);
    if (!e || !U || !L || !ne || !nU || !nL) {
        st = dpa_error_set(err, DPA_ENOMEM, "gdp_mu: out of memory");
        goto done;
    }
    for (size_t j = 0; j <= n; j++) e[j] = j == n ? E : E * ((double)j / (double)n);
    if ((st = dpa_accountant_profile(a, e, n + 1, U, L, err))) goto done;
    U[n] = 0; /* delta_M(E) = 0 certified above */
    for (size_t j = 0; j <= n; j++) lower_point(&out->lower, e[j], L[j]);
    double b = grid_mu(out->lower, out->lower, e, U, n);
    for (int round = 0; isfinite(b) && b - out->lower > REFINE_GOAL * b && round < REFINE_ROUNDS; round++) {
        /* intervals that need more than the target, halfway from the lower
         * bound to b: split them (the grid's slack is first order in the
         * step, so a round roughly halves b's excess over mu*) */
        double target = b - fmax(REFINE_REL * b, 0.5 * (b - out->lower));
        size_t k = 0;
        for (size_t j = 0; j < n && k < REFINE_MAX && n + k < cap; j++)
            if (U[j] > 0 && log(U[j]) > log_delta_est(target, e[j + 1]) && e[j + 1] - e[j] > 1e-12 * E)
                ne[k++] = 0.5 * (e[j] + e[j + 1]);
        if (k == 0) break;
        if ((st = dpa_accountant_profile(a, ne, k, nU, nL, err))) goto done;
        for (size_t i = 0; i < k; i++) lower_point(&out->lower, ne[i], nL[i]);
        merge_points(e, U, L, n, ne, nU, nL, k);
        n += k;
        double b2 = grid_mu(out->lower, target, e, U, n);
        int gain = b2 < b * (1 - REFINE_STOP);
        if (b2 < b) b = b2; /* both are certified */
        if (!gain) break;
    }
    if (isfinite(b)) {
        out->upper = b;
        out->certified_upper = 1;
        out->source = DPA_GDP_MU_BOUNDED;
        set_note(out,
                     "privacy loss bounded (delta = 0 from eps = %.6g on): the profile is below G_mu's on a grid of "
                     "%zu points up to there (GDP Cor 2.13)",
                     E, n + 1);
        *done = 1;
    } else {
        set_note(out, "no certified upper bound: the privacy loss is bounded (delta = 0 from eps = %.6g on), but "
                      "no mu up to %g passes the grid check", E, MU_CAP);
    }
done:
    free(e);
    free(U);
    free(L);
    free(ne);
    free(nU);
    free(nL);
    return st;
}

/* mu* = +inf, proven by an eps query at d answering lower = +inf. */
static void set_infinite(dpa_gdp_mu *out, double d)
{
    out->lower = out->upper = INFINITY;
    out->certified_upper = 1;
    out->source = DPA_GDP_MU_INFINITE;
    set_note(out, "the privacy loss is +inf with probability > %.2g (e.g. an approx step with delta > 0): the "
                  "profile never falls below that, while every mu-GDP profile tends to 0",
             d);
}

dpa_status dpa_accountant_gdp_mu(dpa_accountant *a, dpa_gdp_mu *out, dpa_error *err)
{
    if (!out) return dpa_error_set(err, DPA_EINVAL, "gdp_mu: NULL output");
    memset(out, 0, sizeof *out);
    out->lower = 0;
    out->upper = INFINITY;
    out->certified_upper = 0;
    out->source = DPA_GDP_MU_NONE;
    if (!a) return dpa_error_set(err, DPA_EINVAL, "gdp_mu: NULL accountant");
    dpa_method m = dpa_accountant_method(a);
    const char *mname = dpa_method_name(m);
    dpa_result r, far;
    dpa_status st;
    int certified = 1;
    if (m == DPA_METHOD_PHI || m == DPA_METHOD_GDP) {
        set_note(out, "method %s gives estimates, not certified bounds: no bound on mu (methods exact and pld "
                      "certify it; --method gdp is the CLT approximation)", mname);
        return DPA_OK;
    }
    if (m == DPA_METHOD_RDP) {
        set_note(out, "method rdp bounds delta from above only: no bound on mu (methods exact and pld certify it)");
        return DPA_OK;
    }

    /* 0. far out: delta_M(E_FAR) is the mass at +inf (or beyond E_FAR).
     * Asked first: for a PLD accountant its tail budget (1e-16) also serves
     * the eps queries of the ladder, which then need no rebuild. */
    if ((st = query_delta(a, E_FAR, &far, &certified, err))) goto fail;

    /* 1. eps queries at the ladder of deltas.  An eps query's lower bound
     * e > 0 at delta d is a lower-profile point: the true eps(d) =
     * inf{eps >= 0 : delta_M(eps) <= d} is >= e, delta_M > d on [0, eps(d))
     * and delta_M is continuous, so delta_M(e) >= d.  Its upper bound e' is
     * an upper-profile point, delta_M(e') <= d.  lower = +inf proves that
     * the mass at +inf exceeds d (accountant.h). */
    double gauss_up = INFINITY, pts_e[LADDER_N], pts_u[LADDER_N];
    size_t npts = 0;
    for (int k = 1; k <= LADDER_N; k++) {
        double d = pow(10.0, -0.5 * k);
        if ((st = dpa_accountant_epsilon(a, d, &r, err))) goto fail;
        if (!r.certified) certified = 0;
        if (!certified) break;
        if (isinf(r.lower)) {
            set_infinite(out, d);
            return DPA_OK;
        }
        if (r.lower > 0) lower_point(&out->lower, r.lower, d);
        if (isfinite(r.upper)) {
            pts_e[npts] = r.upper;
            pts_u[npts++] = d;
        }
    }
    if (!certified) { /* not expected of exact, pld or clt; never claim from it */
        out->lower = 0;
        set_note(out, "method %s returned a bound that is not certified: no bound on mu", mname);
        return DPA_OK;
    }

    /* 2. mass at +inf smaller than the ladder's deltas, or beyond E_FAR */
    if (far.lower > 0) {
        double d = 0.5 * far.lower;
        if (d > 0 && d < 1) {
            if ((st = dpa_accountant_epsilon(a, d, &r, err))) goto fail;
            if (r.certified && isinf(r.lower)) {
                set_infinite(out, d);
                return DPA_OK;
            }
        }
        lower_point(&out->lower, E_FAR, far.lower);
        set_note(out, "no certified upper bound: the privacy loss exceeds %g with probability >= %.2g", E_FAR,
                 far.lower);
        return DPA_OK;
    }

    /* 3. bounded loss: an upper bound of exactly 0 at E_FAR.  Only the exact
     * and pld methods are taken at their word there: their 0 is a statement
     * about the support (beyond the largest finite loss), where a bound
     * evaluated in floating point could have underflowed. */
    if (far.upper <= 0 && m == DPA_METHOD_PLD) {
        /* the grid argument needs delta queries across the whole profile,
         * each of which may refine a PLD grid: seconds for atoms off the
         * lattice (50 subsampled Laplace steps: 7 s), too much to add to
         * every eps query; the exact method answers them in microseconds */
        set_note(out, "no certified upper bound computed: the loss is bounded, but the grid argument over the "
                      "whole profile is left to method exact (which takes pure, randomized-response and "
                      "Poisson-subsampled pure/RR compositions); on the PLD grid it would cost seconds");
        return DPA_OK;
    }
    if (far.upper <= 0 && m == DPA_METHOD_EXACT) {
        int done;
        if ((st = bounded_case(a, out, &certified, &done, err))) goto fail;
        if (done && (!certified || !(out->lower <= out->upper))) {
            /* never expected: an uncertified profile point, or a lower bound
             * above the certified upper one (one of them would be wrong) */
            out->upper = INFINITY;
            out->certified_upper = 0;
            out->source = DPA_GDP_MU_NONE;
            set_note(out, "no certified upper bound (inconsistent profile bounds from method %s)", mname);
        }
        return DPA_OK;
    }

    /* 4. the exact method on a composition of Gaussian/GDP leaves (read
     * from the accountant's leaves): exactly mu0-GDP (GDP Cor 3.3).  mu0
     * lies below every mu whose delta_mu exceeds an upper-profile point and
     * above the lower bound; an empty intersection would refute the premise,
     * and then nothing is claimed. */
    if (m == DPA_METHOD_EXACT && dpa_accountant_leafset(a)->all_gaussian) {
        for (size_t i = 0; i < npts; i++) upper_point(&gauss_up, pts_e[i], pts_u[i]);
        if (isfinite(gauss_up) && out->lower <= gauss_up) {
            out->upper = gauss_up;
            out->certified_upper = 1;
            out->source = DPA_GDP_MU_GAUSSIAN;
            set_note(out, "a composition of Gaussian mechanisms is exactly mu-GDP (GDP Cor 3.3); the bracket is the "
                          "closed form's round-off");
            return DPA_OK;
        }
    }

    set_note(out, "no certified upper bound: the privacy loss is unbounded and not exactly Gaussian (e.g. "
                  "subsampled Gaussian steps), so its tail cannot be checked at finitely many points; --method "
                  "gdp gives the CLT approximation, not a bound");
    return DPA_OK;

fail:
    out->lower = 0;
    out->upper = INFINITY;
    out->certified_upper = 0;
    out->source = DPA_GDP_MU_NONE;
    set_note(out, "no bound on mu: %s", err ? err->message : dpa_status_string(st));
    return st;
}
