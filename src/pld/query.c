/* Hockey-stick queries on a composed grid measure.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * With masses c_m at z_m = (lo + m) step, for eps in [z_m, z_{m+1}):
 *   delta(eps) = inf + D_m - expm1(eps - z_m) E_m,
 *   D_m = sum_{j>m} c_j (1 - e^{z_m - z_j}),  E_m = sum_{j>m} c_j e^{z_m - z_j}.
 * Both follow from the top by recurrences of positive terms,
 *   E_{m-1} = e^{-step} (E_m + c_m),  D_{m-1} = D_m + (1 - e^{-step}) (c_m + E_m),
 * so small deltas keep their relative accuracy (no 1 - e^{...} cancellation,
 * no overflow of e^{z}).  eps(delta) inverts the same closed form exactly. */
#include <math.h>
#include <stdlib.h>
#include "pld/pld.h"

dpa_status dpa_composed_prepare(dpa_composed *c, dpa_error *err)
{
    size_t n = c->n;
    if (!c->mass || n == 0 || c->borrowed)
        return dpa_error_set(err, DPA_EINVAL, "prepare: no masses of its own (already prepared, or lent)");
    free(c->D);
    free(c->E);
    c->D = NULL;
    c->E = malloc(n * sizeof *c->E);
    if (!c->E) return dpa_error_set(err, DPA_ENOMEM, "out of memory (%zu points)", n);
    /* D takes the place of mass (read each mass before its slot is
     * overwritten): one array less to allocate and fault in */
    double *D = c->mass, *E = c->E;
    double ed = exp(-c->step), omed = -expm1(-c->step);
    double cm = D[n - 1];
    D[n - 1] = 0;
    E[n - 1] = 0;
    for (size_t m = n - 1; m > 0; m--) {
        double next = D[m - 1];
        E[m - 1] = ed * (E[m] + cm);
        D[m - 1] = D[m] + omed * (cm + E[m]);
        cm = next;
    }
    c->mass0 = cm;
    c->D = D;
    c->mass = NULL;
    return DPA_OK;
}

double dpa_composed_delta(const dpa_composed *c, double eps)
{
    double z0 = (double)c->lo * c->step;
    double fm = floor(eps / c->step) - (double)c->lo;
    if (fm >= (double)(c->n - 1)) return c->inf;
    if (fm < 0) {
        /* below the window every mass contributes: T - e^{eps - z0} (c_0 + E_0) */
        double T = c->mass0 + c->D[0] + c->E[0];
        double v = T - exp(eps - z0) * (c->mass0 + c->E[0]);
        return c->inf + (v > 0 ? v : 0);
    }
    size_t m = (size_t)fm;
    double zm = (double)(c->lo + (long long)m) * c->step;
    double v = c->D[m] - expm1(eps - zm) * c->E[m];
    return c->inf + (v > 0 ? v : 0);
}

double dpa_composed_epsilon(const dpa_composed *c, double target)
{
    double t = target - c->inf;
    if (!(t > 0)) return INFINITY;
    size_t n = c->n;
    /* D is non-increasing: find the first m with D[m] <= t */
    size_t lo = 0, hi = n - 1;   /* D[n-1] = 0 <= t */
    if (c->D[0] <= t) {
        double T = c->mass0 + c->D[0] + c->E[0];
        double z0 = (double)c->lo * c->step;
        if (T <= t) return -INFINITY;
        double s = c->mass0 + c->E[0];
        double e = z0 + log((T - t) / s);
        return e < z0 ? e : z0;
    }
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->D[mid] <= t) hi = mid;
        else lo = mid;
    }
    /* solution in [z_lo, z_hi], hi = lo + 1: D[lo] - expm1(e - z_lo) E[lo] = t */
    double zl = (double)(c->lo + (long long)lo) * c->step;
    double e = (c->E[lo] > 0) ? zl + log1p((c->D[lo] - t) / c->E[lo]) : zl;
    double zh = zl + c->step;
    return e > zh ? zh : e;
}
