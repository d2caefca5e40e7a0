/* Gaussian mechanism: pair N(s, sigma^2) vs N(0, sigma^2), mu = s/sigma.
 * The loss is W ~ N(mu^2/2, mu^2) under A and N(-mu^2/2, mu^2) under B
 * (MATH.md §5; LT Thm 2.4).  GDP mu leaves use the same pair.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include <stdlib.h>
#include "mech/pair.h"

dpa_pair *dpa_pair_gaussian(double mu, dpa_error *err)
{
    if (!(mu >= 0 && isfinite(mu))) {
        dpa_error_set(err, DPA_EINVAL, "gaussian: mu must be >= 0 and finite, got %g", mu);
        return NULL;
    }
    dpa_pair *p = calloc(1, sizeof *p);
    if (!p) {
        dpa_error_set(err, DPA_ENOMEM, "out of memory");
        return NULL;
    }
    p->symmetric = 1;
    if (mu == 0) {
        /* no information: the loss is 0 almost surely */
        p->kind = DPA_PAIR_ATOMS;
        p->atoms = malloc(sizeof *p->atoms);
        if (!p->atoms) {
            free(p);
            dpa_error_set(err, DPA_ENOMEM, "out of memory");
            return NULL;
        }
        p->atoms[0] = (dpa_atom){0.0, 0.0, 0.0};
        p->natoms = 1;
        p->lca = p->lcb = -INFINITY;
        return p;
    }
    p->kind = DPA_PAIR_GAUSSIAN;
    p->par[0] = mu;
    p->lca = p->lcb = 0.0;
    return p;
}
