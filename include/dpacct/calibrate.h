/* dpacct — calibration: the parameter value that meets a privacy target.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Given a template (a spec with one numeric parameter written "?", see
 * event.h), find
 *   - for a noise parameter (sigma, scale, and sample's population n): the smallest value,
 *   - for any other parameter (count, rate, m, epsilon, mu, ...): the largest value,
 * whose certified upper bound eps_upper(delta) is <= epsilon.
 * Integer parameters stay integers.  The search first brackets (geometric
 * growth from a starting point inside the domain, extrapolated by a power
 * law), then narrows the bracket by safeguarded interpolation until it is
 * narrower than `rel_tol` (relative) or is two adjacent integers, first with
 * a coarse accuracy (max(accuracy, 1e-2)) and then with the caller's (see
 * docs/calibration.md).  The value returned always satisfies the target (it
 * is the feasible end of the final bracket, certified by the evaluation
 * reported in at_value).
 */
#ifndef DPACCT_CALIBRATE_H
#define DPACCT_CALIBRATE_H

#include "accountant.h"
#include "event.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dpa_calibration {
    double value;          /* the calibrated parameter value */
    dpa_result at_value;   /* eps bounds (for `delta`) at that value */
    double infeasible;     /* the nearest value found not to meet the target (NAN if none: e.g. the whole domain is feasible) */
    int evaluations;       /* accountant evaluations used */
} dpa_calibration;

/* Domains: epsilon > 0 finite, delta in [0, 1) (0: pure DP, meaningful when
 * the template's events can be pure: laplace, pure, randomized_response, ...), rel_tol in [1e-12, 0.1]
 * (0 selects the default 1e-4).  opt may be NULL.
 * Errors: DPA_EINVAL for bad arguments; DPA_ENUMERIC ("no value of PARAM
 * meets the target") when even the most private end of the domain fails;
 * DPA_EUNSUPPORTED for method phi; with method gdp the value is the CLT
 * estimate's (out->at_value.certified = 0: not a guarantee); errors of the
 * accountant are passed through. */
dpa_status dpa_calibrate(const dpa_template *t, double epsilon, double delta,
                         const dpa_options *opt, double rel_tol,
                         dpa_calibration *out, dpa_error *err);

#ifdef __cplusplus
}
#endif
#endif
