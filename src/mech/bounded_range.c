/* An epsilon-bounded-range mechanism (exponential_mechanism events,
 * docs/mechanisms.md §4).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * M is eps-BR (Durfee & Rogers 2019) when for every pair of
 * neighbours the privacy loss takes values in an interval [-t eps,
 * (1 - t) eps] for some t in [0, 1] (t may depend on the pair).  For a
 * loss law on [a, a + eps] with E_B[e^W] = 1, H_s = E_B[(e^W - s)_+] is a
 * convex function of e^W, maximised by the law on the two end points
 * (Dong, Durfee & Rogers 2020): the pair P_t with A-mass
 *     p_t = (1 - e^{-t eps}) / (1 - e^{-eps})   at loss (1 - t) eps
 * and the rest at -t eps.  For 0 <= e' < (1 - t) eps its profile is
 *     H(t) = p_t (1 - e^{e' - (1 - t) eps})
 *          = (1 - e^{-t eps}) (1 - e^{e' - eps + t eps}) / (1 - e^{-eps}),
 * whose derivative in t vanishes where e^{-2 t eps} = e^{e' - eps}, so
 *     sup_t H = (1 - e^{-(eps - e')/2})^2 / (1 - e^{-eps})    (0 <= e' <= eps)
 * at t* = (eps - e') / (2 eps) (the k = 1 case of DDR 2020; e' = 0 gives
 * tanh(eps / 4)).  The family {P_t} is closed under reversal (P_t reversed
 * is P_{1-t}), so this envelope bounds both directions.
 *
 * The pair: the envelope E(s) is convex in s = e^{e'} (a sup of profiles),
 * so its chords lie above it: the points (e'_j, E(e'_j)) with E rounded up,
 * given to dpa_pair_profile (whose pair's profile is the convex hull of the
 * points, >= every chord of E), make a symmetric atoms pair that dominates
 * both directions.  The points are uniform in e' with step h =
 * eps / (DPA_BR_POINTS - 1); between two of them the chord exceeds E by at
 * most (s h)^2 max E_ss / 8 with E_ss = s^{-3/2} e^{-eps/2} / (2 (1 - e^{-eps})),
 * i.e. by at most h^2 / (16 (1 - e^{-eps})) (s <= e^eps): 1e-9 at eps = 0.3,
 * 1.5e-6 at eps = 10 (absolute; the mirrored points of the add direction
 * likewise).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include "dpacct/event.h"
#include "mech/pair.h"
#include "num/num.h"

/* the relative error of the long double evaluation (a few roundings of
 * expm1l/logl), allowed for before rounding up */
#define BR_EVAL_REL (64 * LDBL_EPSILON)
/* margin above E given to dpa_pair_profile, so that the pair's profile as
 * evaluated in double (sums of up to 2 DPA_BR_POINTS atoms, ~2u each:
 * 1e-12 relative at most) stays above E as well, not only in exact
 * arithmetic */
#define BR_MARGIN_REL 4e-12L

long double dpa_br_log_delta(double eps, double e1)
{
    if (!(e1 < eps)) return -INFINITY;
    long double x = ((long double)eps - e1) / 2;
    long double l = 2 * logl(-expm1l(-x)) - logl(-expm1l(-(long double)eps));
    return l + BR_EVAL_REL;
}

dpa_pair *dpa_pair_bounded_range(double eps, dpa_error *err)
{
    if (!(eps >= 0 && isfinite(eps))) {
        dpa_error_set(err, DPA_EINVAL, "exponential_mechanism: epsilon must be >= 0 and finite, got %g", eps);
        return NULL;
    }
    if (eps > DPA_MAX_PROFILE_EPS) return dpa_pair_rr(eps, 0.0, err);
    if (eps == 0) return dpa_pair_rr(0.0, 0.0, err);
    const int n = DPA_BR_POINTS;
    double *e = malloc(2 * (size_t)n * sizeof *e), *d = e ? e + n : NULL;
    if (!e) {
        dpa_error_set(err, DPA_ENOMEM, "exponential_mechanism: out of memory");
        return NULL;
    }
    long double h = (long double)eps / (n - 1);
    int k = 0;
    for (int j = 0; j < n - 1; j++) {
        double ej = (double)(j * h); /* any point will do: E is evaluated at it */
        if (k && ej <= e[k - 1]) continue;
        if (!(ej < eps)) break;
        e[k] = ej;
        d[k++] = fmin(1.0, dpa_ld_up(expl(dpa_br_log_delta(eps, ej)) * (1 + BR_MARGIN_REL)));
    }
    e[k] = eps; /* eps-DP: delta(eps) = 0 */
    d[k++] = 0;
    dpa_pair *p = dpa_pair_profile(e, d, (size_t)k, err);
    free(e);
    return p;
}
