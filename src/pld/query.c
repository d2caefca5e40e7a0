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
    /* the tables are filled lazily from the top (extend): a query touches
     * only the part above its eps, so the rest is never computed nor
     * faulted in */
    c->D = malloc(n * sizeof *c->D);
    c->E = malloc(n * sizeof *c->E);
    if (!c->D || !c->E) {
        free(c->D);
        free(c->E);
        c->D = c->E = NULL;
        return dpa_error_set(err, DPA_ENOMEM, "out of memory (%zu points)", n);
    }
    c->ed = exp(-c->step);
    c->omed = -expm1(-c->step);
    c->D[n - 1] = 0;
    c->E[n - 1] = 0;
    c->ready = n - 1;
    c->mass0 = c->mass[0];
    return DPA_OK;
}

/* Make D[j], E[j] valid for j >= m (the recurrences from the top). */
static void extend(dpa_composed *c, size_t m)
{
    if (m >= c->ready) return;
    double *D = c->D, *E = c->E, ed = c->ed, omed = c->omed;
    const double *ms = c->mass;
    for (size_t j = c->ready; j > m; j--) {
        E[j - 1] = ed * (E[j] + ms[j]);
        D[j - 1] = D[j] + omed * (ms[j] + E[j]);
    }
    c->ready = m;
}

double dpa_composed_delta(dpa_composed *c, double eps)
{
    double z0 = (double)c->lo * c->step;
    double fm = floor(eps / c->step) - (double)c->lo;
    if (fm >= (double)(c->n - 1)) return c->inf;
    if (fm < 0) {
        /* below the window every mass contributes: T - e^{eps - z0} (c_0 + E_0) */
        extend(c, 0);
        double T = c->mass0 + c->D[0] + c->E[0];
        double v = T - exp(eps - z0) * (c->mass0 + c->E[0]);
        return c->inf + (v > 0 ? v : 0);
    }
    size_t m = (size_t)fm;
    extend(c, m);
    double zm = (double)(c->lo + (long long)m) * c->step;
    double v = c->D[m] - expm1(eps - zm) * c->E[m];
    return c->inf + (v > 0 ? v : 0);
}

double dpa_composed_epsilon(dpa_composed *c, double target)
{
    double t = target - c->inf;
    if (!(t > 0)) return INFINITY;
    size_t n = c->n;
    /* D is non-increasing: find the first m with D[m] <= t, extending the
     * tables downwards (in doubling chunks) until D exceeds t or the
     * window ends */
    for (size_t chunk = 1024; c->ready > 0 && c->D[c->ready] <= t; chunk *= 2)
        extend(c, c->ready > chunk ? c->ready - chunk : 0);
    size_t lo = c->ready, hi = n - 1;   /* D[n-1] = 0 <= t */
    if (c->D[lo] <= t) { /* lo = 0: below the window */
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
