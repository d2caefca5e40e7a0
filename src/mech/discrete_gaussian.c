/* Discrete Gaussian mechanism: pair N_Z(s, sigma^2) vs N_Z(0, sigma^2),
 * pmf proportional to exp(-(o - c)^2 / (2 sigma^2)) on the integers.
 * Loss at o: (2 o s - s^2) / (2 sigma^2).  Atoms are enumerated for
 * o in [-K sigma - 1, s + K sigma + 1] with K = 12; the omitted mass on each
 * side is below 1e-30 (sum_{o >= K sigma} e^{-o^2/(2 sigma^2)} / Z <=
 * e^{-K^2/2} + Phibar(K) < 6e-32 since Z >= max(1, sqrt(2 pi) sigma (1 - tiny))),
 * recorded as slack and pushed to the safe side by the discretizer.
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
