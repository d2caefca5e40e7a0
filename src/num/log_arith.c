/* Log-space arithmetic: log(e^a + e^b), log(e^a - e^b), log(1 - e^a) and
 * log-sum-exp, all safe for -INFINITY (log 0) arguments.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Accuracy: each result is within a few ulp of the exact value of the
 * function at the (exact) double arguments; the only cancellation-prone
 * step, log(1 - e^a), uses the log1p/expm1 switch of Maechler (2012,
 * "Accurately computing log(1 - exp(-|a|))"). */
#include <math.h>
#include "num/num.h"

/* Switch point of log1mexp: for a > -ln 2, e^a > 1/2 and 1 - e^a cancels, so
 * compute -expm1(a) (exact to an ulp) and take its log; for a <= -ln 2,
 * e^a <= 1/2 and log1p(-e^a) is accurate.  -ln 2 is where both forms lose
 * the least (Maechler 2012). */
#define DPA_LOG1MEXP_SWITCH (-0.693147180559945309417232121458176568)

double dpa_log1mexp(double a)
{
    if (isnan(a) || a > 0.0)
        return NAN;
    if (a == 0.0)
        return -INFINITY;
    if (a > DPA_LOG1MEXP_SWITCH)
        return log(-expm1(a));
    return log1p(-exp(a));   /* a = -inf: log1p(-0) = -0.0 */
}

double dpa_log_add_exp(double a, double b)
{
    if (isnan(a) || isnan(b))
        return NAN;
    double hi = a > b ? a : b;
    double lo = a > b ? b : a;
    if (hi == -INFINITY || hi == INFINITY)
        return hi;           /* both -inf, or at least one +inf */
    return hi + log1p(exp(lo - hi));   /* lo = -inf: exp(-inf) = 0 */
}

double dpa_log_sub_exp(double a, double b)
{
    if (isnan(a) || isnan(b) || a < b)
        return NAN;
    if (b == -INFINITY)
        return a;
    if (a == b)
        return a == INFINITY ? NAN : -INFINITY;   /* inf - inf is undefined */
    if (a == INFINITY)
        return INFINITY;
    return a + dpa_log1mexp(b - a);
}

double dpa_log_sum_exp(const double *x, size_t n)
{
    if (n == 0)
        return -INFINITY;
    size_t imax = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(x[i]))
            return NAN;
        if (x[i] > x[imax])
            imax = i;
    }
    double m = x[imax];
    if (m == -INFINITY || m == INFINITY)
        return m;
    /* sum of e^{x_i - m} over i != imax (each <= 1), Neumaier-compensated,
     * then m + log1p(sum) so tiny contributions are not rounded away. */
    double s = 0.0, c = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (i == imax)
            continue;
        double t = exp(x[i] - m);
        double u = s + t;
        if (fabs(s) >= fabs(t))
            c += (s - u) + t;
        else
            c += (t - u) + s;
        s = u;
    }
    return m + log1p(s + c);
}

double dpa_log_sub_exp_clamped(double a, double b)
{
    if (!(a > b)) return -INFINITY;
    return dpa_log_sub_exp(a, b);
}
