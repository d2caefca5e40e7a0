/* Laplace mechanism: pair Lap(0, b) vs Lap(s, b), eps0 = s/b (GDP Lemma A.6).
 * Under A the loss has atoms +eps0 (mass 1/2) and -eps0 (mass e^{-eps0}/2)
 * and a continuous part on (-eps0, eps0) (tails in pair.c).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include <stdlib.h>
#include "mech/pair.h"

#define LOG2 0.69314718055994530942

dpa_pair *dpa_pair_laplace(double scale, double sensitivity, dpa_error *err)
{
    if (!(scale > 0 && isfinite(scale)) || !(sensitivity > 0 && isfinite(sensitivity))) {
        dpa_error_set(err, DPA_EINVAL, "laplace: scale and sensitivity must be > 0 and finite");
        return NULL;
    }
    double e0 = sensitivity / scale;
    dpa_pair *p = dpa_pair_alloc(DPA_PAIR_LAPLACE, 2, err);
    if (!p) return NULL;
    p->par[0] = e0;
    p->atoms[0] = (dpa_atom){-e0, -e0 - LOG2, -LOG2};
    p->atoms[1] = (dpa_atom){e0, -LOG2, -e0 - LOG2};
    p->lca = p->lcb = log(-expm1(-e0)) - LOG2;
    p->symmetric = 1;
    return p;
}
