/* Coarsening a composed grid measure onto a coarser grid (two-stage
 * composition of long repetitions).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A composed grid measure mu (masses at z_i = i * step) is itself the loss law
 * of a pair (A-masses mu_i, B-masses mu_i e^{-z_i}), so it can be cut into
 * cells of a grid L times coarser and discretized again: connect-the-dots of
 * an upper measure stays an upper measure, the garbling of a lower measure
 * stays a lower measure (discretize.c).  Fine atoms on coarse grid points sit
 * at the left end of their cell and are kept exactly.  B-masses are summed
 * relative to each cell's left end point, e^{-(z - Z_j)} in (e^{-L step}, 1],
 * so nothing overflows however negative the losses. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "pld/pld.h"

static long long floor_div(long long a, long long b)
{
    long long q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

dpa_status dpa_cells_from_composed(const dpa_composed *f, long long L, dpa_cells *c, dpa_error *err)
{
    memset(c, 0, sizeof *c);
    if (!f->mass || L < 1) return dpa_error_set(err, DPA_EINVAL, "coarsen: no masses or bad factor");
    long long clo = floor_div(f->lo, L), chi = floor_div(f->lo + (long long)f->n - 1, L) + 1;
    c->lo = clo;
    c->n = (size_t)(chi - clo) + 1;
    c->nc = c->n - 1;
    c->step = (double)L * f->step;
    c->inf_a = f->inf;
    size_t nc = c->nc;
    double *sa = calloc(nc, sizeof *sa), *sb = calloc(nc, sizeof *sb);
    double *ez = malloc((size_t)L * sizeof *ez);
    c->la = malloc(nc * sizeof *c->la);
    c->lb = malloc(nc * sizeof *c->lb);
    if (!sa || !sb || !ez || !c->la || !c->lb) {
        free(sa); free(sb); free(ez);
        dpa_cells_free(c);
        return dpa_error_set(err, DPA_ENOMEM, "out of memory (%zu coarse cells)", nc);
    }
    for (long long r = 0; r < L; r++) ez[r] = exp(-(double)r * f->step);
    for (size_t i = 0; i < f->n; i++) {
        double m = f->mass[i];
        if (!(m > 0)) continue;
        long long g = f->lo + (long long)i, cj = floor_div(g, L);
        size_t j = (size_t)(cj - clo);
        sa[j] += m;
        sb[j] += m * ez[g - cj * L];
    }
    for (size_t j = 0; j < nc; j++) {
        c->la[j] = log(sa[j]);
        /* B(C_j) = e^{-Z_j} sum m e^{-(z - Z_j)} */
        c->lb[j] = log(sb[j]) - (double)(clo + (long long)j) * c->step;
    }
    free(sa); free(sb); free(ez);
    return DPA_OK;
}
