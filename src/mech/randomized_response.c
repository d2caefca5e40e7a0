/* Randomized response RR_{eps,delta}: the dominating pair of every
 * (eps, delta)-DP mechanism (LT Thm 4.5).  Loss +inf w.p. delta,
 * +eps w.p. (1-delta) e^eps/(1+e^eps), -eps w.p. (1-delta)/(1+e^eps) under A;
 * B is the mirror image.  Pure eps-DP is delta = 0 (LT Thm 4.5).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include <stdlib.h>
#include "mech/pair.h"

dpa_pair *dpa_pair_rr(double eps, double delta, dpa_error *err)
{
    if (!(eps >= 0 && isfinite(eps)) || !(delta >= 0 && delta <= 1)) {
        dpa_error_set(err, DPA_EINVAL, "randomized response: need eps >= 0 finite and delta in [0, 1], got eps=%g delta=%g", eps, delta);
        return NULL;
    }
    dpa_pair *p = dpa_pair_alloc(DPA_PAIR_ATOMS, 4, err);
    if (!p) return NULL;
    p->symmetric = 1;
    size_t k = 0;
    double l1d = log1p(-delta), ld = log(delta);
    if (delta > 0) p->atoms[k++] = (dpa_atom){-INFINITY, -INFINITY, ld};
    if (delta < 1) {
        if (eps == 0) {
            p->atoms[k++] = (dpa_atom){0.0, l1d, l1d};
        } else {
            double lhi = l1d - log1p(exp(-eps)); /* (1-d) e^eps/(1+e^eps) */
            double llo = l1d - log1p(exp(eps));  /* (1-d) /(1+e^eps) */
            p->atoms[k++] = (dpa_atom){-eps, llo, lhi};
            p->atoms[k++] = (dpa_atom){eps, lhi, llo};
        }
    }
    if (delta > 0) p->atoms[k++] = (dpa_atom){INFINITY, ld, -INFINITY};
    p->natoms = k;
    return p;
}

/* k-ary randomized response under REPLACE_SPECIAL (docs/spec.md): the report
 * on x, A = R(x) (x w.p. e^eps/(e^eps+k-1), each other bucket w.p.
 * 1/(e^eps+k-1)), against the report on the special record, B = uniform
 * (R of an input outside the k buckets reports a uniform bucket:
 * dp_accounting's RandomizedResponseDpEvent under REPLACE_SPECIAL, its
 * _randomized_response_rdp_replace_special).  With p = k/(e^eps+k-1):
 * loss log(k - (k-1) p) = log k + eps - log(e^eps+k-1) at x, log p =
 * log k - log(e^eps+k-1) at the k - 1 others.  Asymmetric. */
dpa_pair *dpa_pair_rr_special(double eps, double k, dpa_error *err)
{
    if (!(eps >= 0 && isfinite(eps)) || !(k >= 2 && k <= 1e15 && k == floor(k))) {
        dpa_error_set(err, DPA_EINVAL, "randomized response: need eps >= 0 finite and an integer k >= 2, got eps=%g k=%g",
                      eps, k);
        return NULL;
    }
    dpa_pair *p = dpa_pair_alloc(DPA_PAIR_ATOMS, 2, err);
    if (!p) return NULL;
    /* log of e^eps/(e^eps+k-1) and of (k-1)/(e^eps+k-1), without overflow */
    double lt = -log1p((k - 1) * exp(-eps)), lo = log(k - 1) + lt - eps, lk = log(k);
    /* B-masses: 1/k at x, (k-1)/k at the others */
    p->atoms[0] = (dpa_atom){lk + lt - eps, lo, log1p(-1 / k)};
    p->atoms[1] = (dpa_atom){lk + lt, lt, -lk};
    if (eps == 0) p->atoms[0].w = p->atoms[1].w = 0.0; /* the identity, exactly */
    p->symmetric = 0;
    return p;
}

dpa_pair *dpa_pair_rr_k(double eps, double k, dpa_error *err)
{
    if (!(eps >= 0 && isfinite(eps)) || !(k >= 2 && k <= 1e15 && k == floor(k))) {
        dpa_error_set(err, DPA_EINVAL, "randomized response: need eps >= 0 finite and an integer k >= 2, got eps=%g k=%g",
                      eps, k);
        return NULL;
    }
    if (k == 2 || eps == 0) return dpa_pair_rr(eps, 0.0, err);
    dpa_pair *p = dpa_pair_alloc(DPA_PAIR_ATOMS, 3, err);
    if (!p) return NULL;
    p->symmetric = 1;
    /* log of e^eps/(e^eps+k-1) and of 1/(e^eps+k-1), without overflow */
    double lt = -log1p((k - 1) * exp(-eps)), lo = lt - eps;
    double lz = log(k - 2) + lo; /* the k - 2 other buckets, same under both */
    p->atoms[0] = (dpa_atom){-eps, lo, lt};
    p->atoms[1] = (dpa_atom){0.0, lz, lz};
    p->atoms[2] = (dpa_atom){eps, lt, lo};
    p->natoms = 3;
    return p;
}
