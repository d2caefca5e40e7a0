/* Discrete Laplace mechanism: pmf p(o) = tanh(1/(2b)) e^{-|o|/b} on the
 * integers; pair DLap(0, b) vs DLap(s, b) for integer sensitivity s.
 * Loss (|o - s| - |o|)/b: +s/b for o <= 0, -s/b for o >= s, (s - 2o)/b
 * in between; s + 1 atoms, masses in closed form.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include <stdlib.h>
#include "mech/pair.h"

dpa_pair *dpa_pair_discrete_laplace(double scale, double sensitivity, dpa_error *err)
{
    if (!(scale > 0 && isfinite(scale)) || !(sensitivity >= 1 && sensitivity <= 1e6 &&
                                             sensitivity == floor(sensitivity))) {
        dpa_error_set(err, DPA_EINVAL, "discrete_laplace: need scale > 0 and integer sensitivity in [1, 1e6]");
        return NULL;
    }
    size_t s = (size_t)sensitivity;
    double ib = 1.0 / scale;
    double lend = -log1p(exp(-ib));               /* log P(o <= 0) = log 1/(1+e^{-1/b}) */
    double lc = log(-expm1(-ib)) - log1p(exp(-ib)); /* log tanh(1/(2b)) */
    dpa_pair *p = dpa_pair_alloc(DPA_PAIR_ATOMS, s + 1, err);
    if (!p) return NULL;
    p->symmetric = 1;
    double e0 = (double)s * ib;
    size_t k = 0;
    p->atoms[k++] = (dpa_atom){-e0, lend - e0, lend};
    for (size_t o = s - 1; o >= 1; o--) {
        double od = (double)o;
        p->atoms[k++] = (dpa_atom){((double)s - 2 * od) * ib, lc - od * ib, lc - ((double)s - od) * ib};
    }
    p->atoms[k++] = (dpa_atom){e0, lend, lend - e0};
    p->natoms = k;
    return p;
}
