/* Gaussian mechanism: pair N(s, sigma^2) vs N(0, sigma^2), mu = s/sigma.
 * The loss is W ~ N(mu^2/2, mu^2) under A and N(-mu^2/2, mu^2) under B
 * (LT Thm 2.4).  GDP mu leaves use the same pair.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include <stdlib.h>
#include "mech/pair.h"

dpa_pair *dpa_pair_gaussian(double mu, dpa_error *err)
{
    if (!(mu >= 0)) {
        dpa_error_set(err, DPA_EINVAL, "gaussian: mu = sensitivity/sigma must be >= 0, got %g", mu);
        return NULL;
    }
    if (mu > DPA_MU_NONPRIVATE) return dpa_pair_nonprivate(err);
    /* mu = 0: no information, the loss is 0 almost surely */
    dpa_pair *p = dpa_pair_alloc(mu == 0 ? DPA_PAIR_ATOMS : DPA_PAIR_GAUSSIAN, mu == 0 ? 1 : 0, err);
    if (!p) return NULL;
    p->symmetric = 1;
    if (mu == 0) {
        p->atoms[0] = (dpa_atom){0.0, 0.0, 0.0};
        return p;
    }
    p->par[0] = mu;
    p->lca = p->lcb = 0.0;
    return p;
}
