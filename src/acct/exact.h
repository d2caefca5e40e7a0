/* Closed-form accountant for compositions of Gaussian mechanisms.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPA_EXACT_H
#define DPA_EXACT_H

/* delta(eps) of mu-GDP (a Gaussian with mu = sqrt(sum mu_i^2), MATH.md §5):
 *   delta = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2),
 * evaluated in log space, with [*lo, *up] covering the evaluation's
 * round-off (a relative bound 64 u / (1 - ratio) for the log-difference plus
 * the log Phi error).  mu >= 0, eps finite. */
void dpa_exact_delta(double mu, double eps, double *up, double *lo);

/* Smallest eps >= 0 with delta(eps) <= delta: *up is the smallest eps at
 * which the upper evaluation is <= delta, *lo the same for the lower one
 * (bisection to 1e-13 relative; *lo <= true <= *up).  delta in (0, 1). */
void dpa_exact_epsilon(double mu, double delta, double *up, double *lo);

#endif
