/* Closed-form accountant for compositions of Gaussian mechanisms.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPA_EXACT_H
#define DPA_EXACT_H

#include <stddef.h>
#include "model/method.h"

/* delta(eps) of mu-GDP (GDP Cor 2.13; a composition of Gaussians with
 * mu_i = s_i/sigma_i is mu-GDP with mu = sqrt(sum mu_i^2), GDP Cor 3.3):
 *   delta = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2),
 * certified: *lo <= delta <= *up for the exact doubles mu and eps.  Every
 * finite eps and every mu >= 0 are accepted (mu > DPA_MU_NONPRIVATE: the
 * non-private pair, delta = 1).  The evaluation never subtracts nearly
 * equal quantities (see exact.c): the bracket is within about 2e-12
 * relative of the truth wherever delta >= DBL_MIN (the argument's
 * round-off, ~8u |xa| (|xa| + 2), dominates); below that *up is at most a
 * few subnormal steps above the truth, e.g. [0, DBL_TRUE_MIN] at
 * eps = 1e300; for eps -> -inf the bracket is [1 - 13u, 1].  delta is
 * increasing in mu: a caller that knows mu only within [mu_lo, mu_hi]
 * takes *up at mu_hi and *lo at mu_lo (see dpa_exact_total_mu). */
void dpa_exact_delta(double mu, double eps, double *up, double *lo);

/* Smallest eps >= 0 with delta(eps) <= delta: *up is the smallest eps at
 * which the upper evaluation is <= delta, *lo the same for the lower one
 * (bisection to 1e-13 relative; *lo <= true <= *up).  delta in (0, 1).
 * eps is increasing in mu (take *up at mu_hi and *lo at mu_lo). */
void dpa_exact_epsilon(double mu, double delta, double *up, double *lo);

/* Enclosure [*lo, *hi] of mu = sqrt(sum_i k[i] mu[i]^2) over n terms
 * (k[i] >= 0 counts, mu[i] >= 0), without overflow or underflow of the
 * squares (each term is scaled by a power of 2 near the largest mu[i]).
 * Each mu[i] may itself carry a relative error of at most mu_rel (0 if
 * exact, e.g. a gdp leaf; u for sensitivity/sigma) plus half a subnormal
 * step if it underflowed.  *hi >= the true mu >= *lo >= 0; both are within
 * mu_rel + (n + 20) u relative of it when no mu[i] is subnormal. */
void dpa_exact_total_mu(const double *k, const double *mu, size_t n, double mu_rel, double *lo,
                        double *hi);

/* The method table of the exact method (src/exact/method.c), which the accountant dispatches to. */
extern const dpa_method_ops dpa_method_exact_ops;

#endif
