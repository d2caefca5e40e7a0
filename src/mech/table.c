/* A mechanism given by its privacy loss distribution as a table
 * (privacy_loss events, docs/spec.md): the atoms-only pair of the table,
 * with the remainders of both distributions at +-inf.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include <stdlib.h>
#include "mech/pair.h"

/* Neumaier-compensated sum (long double) of x[i] * e^-l[i] (l NULL: of x). */
static long double sum_masses(const double *x, const double *l, size_t n)
{
    long double s = 0, c = 0;
    for (size_t i = 0; i < n; i++) {
        long double v = l ? x[i] * expl(-(long double)l[i]) : x[i], t = s + v;
        c += fabsl(s) >= fabsl(v) ? (s - t) + v : (v - t) + s;
        s = t;
    }
    return s + c;
}

dpa_pair *dpa_pair_table(const double *loss, const double *mass, size_t n, dpa_error *err)
{
    dpa_pair *p = dpa_pair_alloc(DPA_PAIR_ATOMS, n + 2, err);
    if (!p) return NULL;
    /* Each distribution's remainder 1 - sum.  A sum within TABLE_ONE of 1
     * is taken as 1 (the table is a distribution up to the rounding of the
     * masses); beyond it the remainder, enlarged by TABLE_ONE (which bounds
     * the compensated sums' error: about n u_ld^2 plus the e^-l rounding,
     * n 2^-63), is an atom: A's at +inf (the table's documented meaning;
     * the conservative place), B's at -inf (never in H_a(A || B); in the
     * add direction, the reversal, it is the +inf atom). */
    const long double TABLE_ONE = (long double)(n + 1) * 0x1p-60L;
    long double ra = 1 - sum_masses(mass, NULL, n), rb = 1 - sum_masses(mass, loss, n);
    size_t k = 0;
    if (rb > TABLE_ONE) p->atoms[k++] = (dpa_atom){-INFINITY, -INFINITY, (double)logl(rb + TABLE_ONE)};
    for (size_t i = 0; i < n; i++) {
        if (!(mass[i] > 0)) continue;
        double la = log(mass[i]);
        p->atoms[k++] = (dpa_atom){loss[i], la, la - loss[i]};
    }
    if (ra > TABLE_ONE) p->atoms[k++] = (dpa_atom){INFINITY, (double)logl(ra + TABLE_ONE), -INFINITY};
    p->natoms = k;
    /* symmetric: the reversal (-w, lb, la) is the same list */
    int sym = 1;
    for (size_t i = 0; i < k && sym; i++) {
        const dpa_atom *a = &p->atoms[i], *r = &p->atoms[k - 1 - i];
        sym = a->w == -r->w && a->la == r->lb && a->lb == r->la;
    }
    p->symmetric = sym;
    return p;
}
