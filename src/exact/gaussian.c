/* Closed-form accountant for compositions of Gaussians (see exact.h).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The profile of mu-GDP (GDP Cor 2.13; LT Thm 2.4 and its footnote 5 for
 * eps < 0) is
 *
 *   delta(eps) = Phi(xa) - e^eps Phi(xb),   xa = mu/2 - eps/mu,  xb = xa - mu.
 *
 * Evaluated as written it cancels catastrophically (e^eps Phi(xb) ~ Phi(xa)
 * when mu is small or eps is far in the tail; eps + log Phi(xb) when mu is
 * large), so it is rewritten without differences of large or nearly equal
 * terms.  With the Mills ratio R(x) = Phi(x)/phi(x) = int_0^inf e^{xt - t^2/2} dt
 * and the identity e^eps phi(xb) = phi(xa) (xb^2 - xa^2 = 2 eps):
 *
 *   delta(eps) = phi(xa) (R(xa) - R(xb)) = Phi(xa) (1 - R(xb)/R(xa)).      (1)
 *
 * Every derivative of R is positive (R^(n)(x) = int t^n e^{xt - t^2/2} dt),
 * so R is increasing and so is R' (this drives the quadrature below).
 *
 * Reductions.
 *  - eps < 0: the profile of the (symmetric) Gaussian pair satisfies the
 *    reversal identity (LT eq 7) delta(eps) = 1 - e^eps + e^eps delta(-eps), a
 *    sum of two non-negative terms: no cancellation, and delta(-1e300) is
 *    [1 - 13u, 1].  As delta decreases, the lower bound of delta(-eps) is
 *    also one of delta(eps).
 *  - eps >= 0: F(x) = phi(x)(R(x) - R(x - mu)) is delta at xa = x, and delta
 *    decreases in eps while xa decreases in eps, so F is increasing.  xa is
 *    computed with a relative error below 4u (sa_enclosure), and
 *    delta in [lower F(xa_lo), upper F(xa_hi)]: the round-off of the
 *    argument costs two evaluations instead of an error analysis.
 *
 * F at a double x (gauss_f) takes one of three routes:
 *  T  x <= -10: R(xa) - R(xb) by the difference of the asymptotic series,
 *     computed term by term from p = 1/|xa|, q = 1/|xb| without cancellation
 *     (p - q = mu p q exactly); no underflow of intermediate terms (phi(xa)
 *     is carried as 2^k * m).
 *  D  otherwise, the right-hand form of (1), with log R(xa) and log R(xb)
 *     evaluated separately; used when the ratio r = R(xb)/R(xa) is at most
 *     1/2, so 1 - r loses at most a factor 2 of relative accuracy.
 *  Q  otherwise (x <= 1 and mu small enough for r > 1/2): R(xa) - R(xb) =
 *     int_{xb}^{xa} R'(t) dt by composite Gauss-Legendre (5 points, a lower
 *     bound since R' has a positive 10th derivative) and Gauss-Lobatto
 *     (6 points, an upper bound for the same reason), panels doubled until
 *     the two agree to 8u or stop converging (round-off); both bounds stay
 *     valid whatever the panel count.
 *     Intersected with route D's bracket.
 *
 * Error allowances.  u = 2^-53.  Each elementary function is budgeted at
 * 4u (2 ulp; glibc's exp, log, expm1, log1p are documented below 1 ulp), a
 * rounded constant at u, every operation at u.  dpa_ndtr (Phi through a
 * corrected erfc) and dpa_log_ndtr are budgeted at EPS_NDTR = 16u relative
 * (measured: dpa_log_ndtr below 4e-16 = 3.6u by test_num against mpmath,
 * dpa_ndtr below 3.3u on (-10, 10] by test_exact_gauss against MPFR).
 * grow(v, k) and shrink(v, k) move v outward by at least k u relative after
 * their own rounding, and one or two DBL_TRUE_MIN are added or subtracted
 * at the end to cover results that underflow into subnormals, where
 * relative bounds mean nothing.  The measured width of the bracket
 * (test_exact_gauss, mu in [1e-8, 1e8], |eps| up to 1e300) is below
 * about 2e-12 relative for every delta >= DBL_MIN; the part of it that comes
 * from the argument, about 8u |xa| (|xa| + 2), is of the size of the
 * condition number of delta in eps. */
#include <float.h>
#include <math.h>
#include "exact/exact.h"
#include "num/num.h"
#include "mech/pair.h"

#define U DPA_UNIT_ROUNDOFF
/* relative error budget of dpa_ndtr and dpa_log_ndtr (see the header) */
#define EPS_NDTR (16 * U)
/* Bisection stops at this relative width of the eps bracket. */
#define EPS_REL_TOL 1e-13
/* Route T below this x; the asymptotic series of R, R' and of the
 * difference converge to below u/16 of their first term for |x| >= 10 (the
 * smallest term, about e^{-x^2/2}, is 4e-22 of the first at |x| = 10). */
#define TAIL_X (-10.0)
/* beyond this |xa| (x <= -39) delta <= Phi(-39) < DBL_TRUE_MIN */
#define UNDERFLOW_S 39.0
#define SERIES_MAX_TERMS 80
/* route Q: at most this many panels (a power of 2) */
#define QUAD_MAX_PANELS 512

static const double SQRT_2PI = 2.50662827463100050241576528481104525;
static const double INV_SQRT_2PI = 0.398942280401432677939946059934381868;
/* Cody-Waite split of ln 2 (fdlibm): LN2_HI has 32 significant bits, so
 * k * LN2_HI is exact for |k| < 2^21 */
static const double LN2_HI = 6.93147180369123816490e-01;
static const double LN2_LO = 1.90821492927058770002e-10;
static const double INV_LN2 = 1.44269504088896338700e+00;

/* v (1 + k u) and v (1 - k u) for v of either sign, rounded outward: the
 * product and the sum each lose at most u relative, covered by the extra 3u. */
static double grow(double v, double k)
{
    return v + fabs(v) * ((k + 3) * U);
}

static double shrink(double v, double k)
{
    return v - fabs(v) * ((k + 3) * U);
}

/* ---------- the Mills ratio and its derivative ---------- */

/* The asymptotic series at x = -s, s >= 10 (deriv 0: R, deriv 1: R'):
 *   R(-s)  = sum_k (-1)^k (2k-1)!! / s^{2k+1},
 *   R'(-s) = sum_k (-1)^k (2k+1)!! / s^{2k+2}.
 * Writing R^(d)(-s) = int t^d e^{-st} e^{-t^2/2} dt and expanding e^{-y},
 * y = t^2/2, with its alternating Taylor remainder (sign (-1)^n, size at
 * most y^n/n!) shows that the error of the first n terms has the sign of,
 * and is at most, the first omitted term.  *val is the sum, *err bounds its
 * truncation and round-off: 1/s^2 costs 2u, each term 4u more than the
 * previous (the factor (2k+-1) z and the product round, z carries 2u), each
 * addition u of the partial sum. */
static void mills_series(double s, int deriv, double *val, double *err)
{
    double z = 1.0 / (s * s);
    double t = deriv ? z : 1.0 / s;
    double sum = t, e = t * 3 * U;
    for (int k = 1;; k++) {
        t *= (2.0 * k - 1.0 + deriv * 2.0) * z;
        if (t < sum * (U / 16) || k > SERIES_MAX_TERMS) break;
        sum += (k & 1) ? -t : t;
        e += t * (4.0 * k + 3) * U + fabs(sum) * U;
    }
    *val = sum;
    /* t: the first omitted term, itself within (4k + 3)u */
    *err = e + 1.001 * t;
}

/* e^{x^2/2} with x^2 split exactly (H + L = x^2, fma): e^{H/2} e^{L/2}; H/2 and
 * L/2 are exact, so the result is within 2 exp errors and a product: 9u.
 * Only called for |x| <= 10. */
static double exp_half_sq(double x)
{
    double h = x * x, l = fma(x, x, -h);
    return exp(0.5 * h) * exp(0.5 * l);
}

/* R(x) for -10 < x <= 10: Phi(x) sqrt(2 pi) e^{x^2/2}.  Relative error at
 * most EPS_NDTR + 12u (dpa_ndtr, the constant, exp_half_sq, two products). */
#define EPS_R (EPS_NDTR + 12 * U)
static double mills_mid(double x)
{
    return dpa_ndtr(x) * SQRT_2PI * exp_half_sq(x);
}

/* log R(x) for any finite x, with an absolute error bound. */
static void log_mills(double x, double *val, double *err)
{
    if (x <= TAIL_X) {
        double v, e;
        mills_series(-x, 0, &v, &e);
        *val = log(v);
        /* relative error e/v of v becomes (1.01 e/v) in the log (e/v < 1e-14),
         * the log itself 4u of its value */
        *err = 1.01 * (e / v) + 4 * U * fabs(*val);
    } else if (x <= 0) {
        *val = log(mills_mid(x));
        *err = 1.01 * EPS_R + 4 * U * fabs(*val);
    } else {
        /* log Phi(x) + x^2/2 + log sqrt(2 pi): log Phi in (-0.7, 0] with
         * relative error EPS_NDTR; x^2/2 to 1.5u (the square and the
         * sums); the constant u/2; three additions u each */
        double lp = dpa_log_ndtr(x), q = 0.5 * (x * x);
        *val = (lp + 0.918938533204672741780329736405617640) + q;
        *err = EPS_NDTR * fabs(lp) + 6 * U * (q + fabs(lp) + 1);
    }
}

/* R'(x) for x <= 10, with an absolute error bound.  For -10 < x <= 10,
 * R' = 1 + x R: the product and the sum cost 2u, and the error of R is
 * multiplied by |x| R (which is up to 100 |R'| near x = -10). */
static void mills_deriv(double x, double *val, double *err)
{
    if (x <= TAIL_X) {
        mills_series(-x, 1, val, err);
        return;
    }
    double r = mills_mid(x);
    double xr = fabs(x) * r;
    *val = 1.0 + x * r;
    *err = xr * (EPS_R + 2 * U) + 2 * U * fabs(*val);
}

/* ---------- the three routes for F(x) = phi(x) (R(x) - R(x - mu)) ---------- */

/* Route T, x <= -10, s = -x:
 *   R(-s) - R(-sb) = sum_k (-1)^k (2k-1)!! (p^{2k+1} - q^{2k+1})
 *                  = (p - q) E,  E = sum_k (-1)^k (2k-1)!! P_{2k},
 * p = 1/s, q = 1/sb, sb = s + mu, P_n = sum_{j=0}^n p^j q^{n-j} (all terms
 * positive), and p - q = mu p q exactly.  The remainder of the difference
 * series is int (e^{-st} - e^{-sb t}) rho_n(t) dt with the same alternating
 * Taylor remainder rho_n as in mills_series and e^{-st} - e^{-sb t} >= 0,
 * so it is again bounded by the first omitted term.  E >= 1 - 3/s^2 >= 0.97.
 *   F = 2^k m mu q p E / sqrt(2 pi),  phi(x) sqrt(2 pi) = e^{-s^2/2} = 2^k m.
 * Round-off: sb costs u, q 2u more; p^n and P_n about 3u per step (the
 * budget (12k + 6)u per term T_k is generous); e^{-s^2/2}: s^2 = H + L
 * exactly, -H/2 - k ln 2 is exact (Sterbenz, k ln2_hi exact), k ln2_lo and
 * the sums add below 2u |r| + 1e-22, exp(r) 4u, so m is within 8u; the
 * products m (mu q) p E / sqrt(2pi): 4 products, mu q 3u, p u, constant u:
 * 17u plus E's bound; ldexp is exact unless the result is subnormal (then
 * within DBL_TRUE_MIN / 2, and the bounds move one subnormal step out). */
static void route_tail(double x, double mu, double *lo, double *up)
{
    double s = -x;
    if (s >= UNDERFLOW_S) {
        /* delta <= Phi(-s) <= phi(s)/s < DBL_TRUE_MIN for s >= 38.5 */
        *lo = 0;
        *up = DBL_TRUE_MIN;
        return;
    }
    double sb = s + mu;
    double p = 1.0 / s, q = 1.0 / sb;
    double pn = 1, Pn = 1, E = 1, e = 0, dfact = 1, t;
    for (int k = 1;; k++) {
        pn *= p;
        Pn = pn + q * Pn;
        pn *= p;
        Pn = pn + q * Pn;
        dfact *= 2.0 * k - 1.0;
        t = dfact * Pn;
        if (t < U / 16 || k > SERIES_MAX_TERMS) break;
        E += (k & 1) ? -t : t;
        e += t * (12.0 * k + 6) * U + E * U;
    }
    e += 1.001 * t;                        /* first omitted term */
    double h = s * s, l = fma(s, s, -h);
    double y = -0.5 * h;
    int k = (int)nearbyint(y * INV_LN2);
    double r = ((y - k * LN2_HI) - k * LN2_LO) - 0.5 * l;
    double m = exp(r);
    double core = m * (mu * q) * p * INV_SQRT_2PI;
    double vlo = shrink(core * (E - e), 17 + 8), vup = grow(core * (E + e), 17 + 8);
    /* ldexp rounds to nearest where the result is subnormal (error at most
     * DBL_TRUE_MIN / 2): one subnormal step outward covers it */
    double rlo = ldexp(vlo, k), rup = ldexp(vup, k);
    *lo = rlo < DBL_MIN ? fmax(0.0, rlo - DBL_TRUE_MIN) : rlo;
    *up = rup < DBL_MIN ? rup + DBL_TRUE_MIN : rup;
}

/* Route D, any x > -10: F = Phi(x) (1 - r), r = e^{lb - la}, la = log R(x),
 * lb = log R(xb), xb = x - mu rounded (|error| <= u |xb|; log R has slope
 * g = (log R)' with |xb| g(xb) <= 1 for xb <= 0 by the Mills-ratio bound
 * R(-s) > 2/(s + sqrt(s^2 + 4)), and g(xb) <= 0.8 + xb for xb > 0).
 * *rhi is the upper bound of r (route Q is used when it exceeds 1/2). */
static void route_direct(double x, double mu, double *lo, double *up, double *rhi)
{
    double xb = x - mu;
    double la, ea, lb, eb;
    log_mills(x, &la, &ea);
    log_mills(xb, &lb, &eb);
    double eargb = 1.01 * U * (xb <= 0 ? 1.0 : xb * (0.8 + xb));
    double d = lb - la;
    /* the difference and the sums d +- dd round by u of their size each */
    double dd = (ea + eb + eargb) * (1 + 1e-6) + 3 * U * (fabs(la) + fabs(lb));
    double dhi = d + dd, dlo = d - dd;
    *rhi = exp(dhi) * (1 + 4 * U);
    double omr_lo = -expm1(dhi), omr_hi = -expm1(dlo); /* bounds of 1 - r, 4u each */
    double P = dpa_ndtr(x);
    *lo = omr_lo > 0 ? fmax(0.0, shrink(P * omr_lo, 16 + 4 + 1 + 1) - 2 * DBL_TRUE_MIN) : 0.0;
    *up = fmin(1.0, grow(fmin(P, 1.0) * fmin(omr_hi, 1.0), 16 + 4 + 1 + 1) + 2 * DBL_TRUE_MIN);
}

/* Gauss-Legendre (5 points) and Gauss-Lobatto (6 points) on [0, 1]: node
 * offsets a = (1 - xi)/2 from the right end of a panel and half weights
 * (mpmath, 30 digits, rounded: error u relative). */
static const double GL_A[5] = {0.046910077030668004, 0.23076534494715845, 0.5,
                               0.7692346550528415, 0.953089922969332};
static const double GL_W[5] = {0.11846344252809454, 0.23931433524968324, 0.28444444444444444,
                               0.23931433524968324, 0.11846344252809454};
static const double LB_A[6] = {0.0, 0.11747233803526766, 0.3573842417596775,
                               0.6426157582403226, 0.8825276619647323, 1.0};
static const double LB_W[6] = {0.03333333333333333, 0.1892374781489235, 0.2774291885177432,
                               0.2774291885177432, 0.1892374781489235, 0.03333333333333333};

/* compensated (TwoSum) accumulation of non-negative terms: the total
 * s + c is within (2u + 2 n u^2) of the exact sum */
typedef struct ksum { double s, c; } ksum;
static void ksum_add(ksum *k, double v)
{
    double t = k->s + v;
    double bp = t - k->s;
    k->c += (k->s - (t - bp)) + (v - bp);
    k->s = t;
}

/* One composite rule over [x - mu, x] with P panels (P a power of 2, so
 * mu/P is exact unless subnormal): the mean of R' over the interval,
 * sum_j sum_i w_i R'(x - (mu/P)(j + a_i)) / P, with every node moved
 * outward (dir +1: up, -1: down) by twice its error bound, so that, R'
 * being increasing, the value at the moved node is on the safe side of the
 * value at the exact node.  Node error: a_i (u a_i), j + a_i (u (j+1)), the
 * product with mu/P (u), the subtraction (u |node|): at most
 * 2u |node| + 5u mu + 2 DBL_TRUE_MIN; moving by twice that survives the
 * rounding of the move.  *val: the sum over values minus (dir -1) or plus
 * (dir +1) their error bounds, within 2u + 2 n u^2 from the compensated
 * sum and 2u per term (weight, product); *raw: the same without the error
 * bounds (used for the refinement test). */
static void quad_rule(double x, double mu, int P, const double *A, const double *W, int n, int dir,
                      double *val, double *raw)
{
    double w = mu / P;
    ksum sv = {0, 0}, sr = {0, 0};
    for (int j = 0; j < P; j++) {
        for (int i = 0; i < n; i++) {
            double node = x - w * (j + A[i]);
            double enode = 2 * U * fabs(node) + 5 * U * mu + 2 * DBL_TRUE_MIN;
            node += dir * 2 * enode;
            double f, fe;
            mills_deriv(node, &f, &fe);
            ksum_add(&sv, W[i] * (f + dir * fe));
            ksum_add(&sr, W[i] * f);
        }
    }
    *val = (sv.s + sv.c) / P;
    *raw = (sr.s + sr.c) / P;
}

/* Route Q, x <= 1: F = phi(x) mu mean(R'), the mean bracketed by the two
 * rules (see the header).  phi(x) = e^{-x^2/2}/sqrt(2 pi) with x^2 = H + L
 * exact: two exps, two products, the constant: 11u. */
static void route_quad(double x, double mu, double *lo, double *up)
{
    double glo, gr, lup, lr, prev = INFINITY;
    for (int P = 1;; P *= 2) {
        quad_rule(x, mu, P, GL_A, GL_W, 5, -1, &glo, &gr);
        quad_rule(x, mu, P, LB_A, LB_W, 6, +1, &lup, &lr);
        /* refine while the rules' gap (which shrinks ~2^10 per doubling)
         * dominates: stop at 8u, below the evaluation allowances, when it
         * no longer shrinks (round-off), or at the panel limit */
        double gap = lr - gr;
        if (gap <= 8 * U * gr || gap <= (lup - lr) + (gr - glo) || gap > 0.25 * prev ||
            P >= QUAD_MAX_PANELS)
            break;
        prev = gap;
    }
    double h = x * x, l = fma(x, x, -h);
    double phi = exp(-0.5 * h) * exp(-0.5 * l) * INV_SQRT_2PI;
    /* rules: 2u sum + 2u per term + 1e-12 * u for the n u^2 term */
    *lo = fmax(0.0, shrink(phi * fmax(glo, 0.0) * mu, 11 + 5 + 2) - 2 * DBL_TRUE_MIN);
    *up = grow(phi * lup * mu, 11 + 5 + 2) + 2 * DBL_TRUE_MIN;
}

/* Bounds of F(x) = phi(x) (R(x) - R(x - mu)) at the double x. */
static void gauss_f(double x, double mu, double *lo, double *up)
{
    if (x <= TAIL_X) {
        route_tail(x, mu, lo, up);
        return;
    }
    double rhi;
    route_direct(x, mu, lo, up, &rhi);
    /* route Q only where D cancels; it needs x <= 1 (R' grows like e^{x^2/2}
     * beyond) and is never chosen for large mu (r > 1/2 needs mu < ~14) */
    if (rhi <= 0.5 || x > 1 || mu > 64) return;
    double qlo, qup;
    route_quad(x, mu, &qlo, &qup);
    if (qlo > *lo) *lo = qlo;
    if (qup < *up) *up = qup;
}

/* Enclosure of s = -xa = eps/mu - mu/2 for eps >= 0: returns 0 and
 * [*slo, *shi], or 1 when s is +inf or >= UNDERFLOW_S for sure.
 * With mu = m 2^e (m in [1, 2)) and eps' = eps 4^-e: where eps' is in
 * [m^2/4, m^2] (the only place where the subtraction cancels; eps' is then
 * exact, a normal number near 1), m^2 = M + Ml exactly (fma), eps' - M/2 is
 * exact (Sterbenz), and s = 2^e (eps' - M/2 - Ml/2)/m has two roundings
 * (2u).  Elsewhere (eps' above m^2 or below m^2/4, including an eps' that
 * over- or underflows) eps/mu and mu/2 differ by a factor 2 at least, so
 * s = eps/mu - mu/2 directly is within 3u (eps/mu overflows only if s does).
 * A subnormal eps/mu, mu/2 or 2^e s costs at most DBL_TRUE_MIN absolute. */
static int sa_enclosure(double mu, double eps, double *slo, double *shi)
{
    int e = ilogb(mu);
    double m = scalbn(mu, -e), ep = scalbn(eps, -2 * e);
    double M = m * m, Ml = fma(m, m, -M);
    double s;
    if (ep >= 0.25 * M && ep <= M)
        s = scalbn(((ep - 0.5 * M) - 0.5 * Ml) / m, e);
    else
        s = eps / mu - 0.5 * mu;
    if (!(s < INFINITY)) return 1;
    *slo = shrink(s, 4) - 2 * DBL_TRUE_MIN;
    *shi = grow(s, 4) + 2 * DBL_TRUE_MIN;
    return *slo >= UNDERFLOW_S;
}

/* delta(eps) for eps >= 0 and 0 < mu <= DPA_MU_NONPRIVATE */
static void delta_nonneg(double mu, double eps, double *up, double *lo)
{
    double slo, shi, l1, u1, l2, u2;
    if (sa_enclosure(mu, eps, &slo, &shi)) {
        *lo = 0;
        *up = DBL_TRUE_MIN;
        return;
    }
    gauss_f(-shi, mu, &l1, &u1);  /* F(xa_lo): its lower bound */
    if (slo == shi) {
        l2 = l1;
        u2 = u1;
    } else {
        gauss_f(-slo, mu, &l2, &u2);  /* F(xa_hi): its upper bound */
    }
    (void)u1;
    (void)l2;
    /* delta > 0 for finite eps: never report 0 as the upper bound */
    *up = fmin(1.0, fmax(u2, DBL_TRUE_MIN));
    *lo = fmin(fmax(l1, 0.0), *up);
}

void dpa_exact_delta(double mu, double eps, double *up, double *lo)
{
    if (mu > DPA_MU_NONPRIVATE) { /* non-private limit (pair.h) */
        *up = *lo = 1.0;
        return;
    }
    if (mu == 0) {
        double v = eps < 0 ? -expm1(eps) : 0.0;
        *up = *lo = v;
        return;
    }
    if (!(eps < 0)) {
        delta_nonneg(mu, eps, up, lo);
        return;
    }
    /* reversal: delta(eps) = (1 - e^eps) + e^eps delta(-eps); expm1 and exp
     * 4u each, the product and the sum u each */
    double pu, pl;
    delta_nonneg(mu, -eps, &pu, &pl);
    double a = -expm1(eps), b = exp(eps);
    *lo = fmax(0.0, shrink(a + b * pl, 10) - 2 * DBL_TRUE_MIN);
    if (pl > *lo) *lo = pl; /* delta is decreasing: delta(eps) >= delta(-eps) */
    *up = fmin(1.0, grow(a + b * pu, 10) + 2 * DBL_TRUE_MIN);
}

typedef struct solve_ctx { double mu, target; int side; } solve_ctx;

/* f(eps) = delta_side(eps) - target, but never 0: an evaluation equal to the
 * target counts as feasible (-DBL_MIN).  The bounds are constant on long
 * stretches where they are clamped (an upper bound of DBL_TRUE_MIN beyond
 * |xa| = 39, for instance), and dpa_bisect would return any exact zero it
 * meets as the root; this way the search finds the first feasible eps, and
 * the infeasible end of the lower search has lower bound > target strictly. */
static double excess_delta(double eps, void *ctx)
{
    const solve_ctx *c = ctx;
    double up, lo;
    dpa_exact_delta(c->mu, eps, &up, &lo);
    double v = (c->side ? lo : up) - c->target;
    return v == 0 ? -DBL_MIN : v;
}

/* smallest eps >= 0 with delta_side(eps) <= target (side 0: upper
 * evaluation, 1: lower evaluation): scan up from 0 for the first sign change,
 * then bisect; the infeasible end is a lower bound on the true eps, the
 * feasible end an upper bound */
static double solve(double mu, double target, int side)
{
    solve_ctx c = {mu, target, side};
    if (excess_delta(0.0, &c) <= 0) return 0.0;
    double a, b, lo, hi;
    if (dpa_scan_bracket(excess_delta, &c, 0.0, 0.5 * mu * mu + mu + 1, +1, 0.0, 1e300, &a, &b) ||
        dpa_bisect(excess_delta, &c, a, b, 0.0, EPS_REL_TOL, &lo, &hi))
        return side ? 0.0 : INFINITY; /* cannot happen for finite mu: delta -> 0 */
    return side ? lo : hi;
}

void dpa_exact_epsilon(double mu, double delta, double *up, double *lo)
{
    if (mu > DPA_MU_NONPRIVATE) {
        *up = *lo = INFINITY;
        return;
    }
    if (mu == 0) {
        *up = *lo = 0;
        return;
    }
    *up = solve(mu, delta, 0);
    *lo = solve(mu, delta, 1);
}

/* Enclosure of sqrt(sum k_i mu_i^2) (see exact.h).  Each mu_i is widened to
 * [mu_i (1 - mu_rel) - h, mu_i (1 + mu_rel) + h], h = DBL_TRUE_MIN/2 if
 * mu_rel > 0 (a quotient that underflowed), then scaled by 2^-e, e the
 * exponent of the largest upper end, so the largest scaled term is in
 * [1, 2) and the sum S >= 1: the squares and products round by u each, the
 * n additions of non-negative terms by n u in all, and a scaled term that
 * underflows changes S by less than k DBL_TRUE_MIN, far below u S; the
 * square root halves S's relative error and adds u; scaling back is exact
 * unless it underflows (then DBL_TRUE_MIN covers it) or overflows (+inf). */
void dpa_exact_total_mu(const double *k, const double *mu, size_t n, double mu_rel, double *lo,
                        double *hi)
{
    double h = mu_rel > 0 ? 0.5 * DBL_TRUE_MIN : 0.0, top = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(k[i] > 0)) continue;
        if (isinf(mu[i])) {
            *lo = *hi = INFINITY;
            return;
        }
        double t = grow(mu[i], mu_rel / U) + h;
        if (t > top) top = t;
    }
    if (top == 0) {
        *lo = *hi = 0;
        return;
    }
    int e = ilogb(top);
    double shi = 0, slo = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(k[i] > 0)) continue;
        double qh = scalbn(grow(mu[i], mu_rel / U) + h, -e);
        double ql = scalbn(fmax(0.0, shrink(mu[i], mu_rel / U) - h), -e);
        shi += k[i] * (qh * qh);
        slo += k[i] * (ql * ql);
    }
    double nn = (double)n;
    *hi = scalbn(grow(sqrt(grow(shi, nn + 4)), 1), e) + DBL_TRUE_MIN;
    *lo = fmax(0.0, scalbn(shrink(sqrt(fmax(0.0, shrink(slo, nn + 4))), 1), e) - DBL_TRUE_MIN);
}
