/* A mechanism known only by points of its privacy profile
 * (privacy_profile events, docs/spec.md, docs/mechanisms.md §1): the atoms
 * pair whose profile is the convex envelope of the points.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A mechanism that is (eps_i, delta_i)-DP for every i (both directions)
 * has tradeoff function at least f = max_i f_{eps_i, delta_i} (GDP Prop 2.8),
 * a symmetric piecewise-linear tradeoff.  In s = e^eps its profile
 * E(s) = sup_x (1 - f(x) - s x) is the concave conjugate of 1 - f, a min of
 * lines, hence the lower convex hull (made non-increasing by a ray to the
 * right) of the points
 *     (e^{eps_i}, delta_i)                      (line 1 - delta_i - e^eps x of f_i),
 *     (e^{-eps_i}, 1 - e^{-eps_i}(1 - delta_i))  (its mirror, e^-eps (1 - delta_i - x)),
 *     (0, 1)                                    (f >= 0).
 * An atoms pair with B-masses b_j at losses w_j (s_j = e^{w_j}) and A-mass
 * r at +inf has profile D(s) = r + sum_j b_j (s_j - s)_+, piecewise linear
 * in s with a kink at each s_j.  So the envelope is the profile of the pair
 * with an atom at each hull vertex (loss +-eps_i, exact) whose B-mass is the
 * vertex's slope change, and r = min_i delta_i.
 *
 * Soundness in floating point: the masses are not taken from slope
 * differences but built from the largest s down so that D(s_{k+1}) >=
 * d_{k+1} at every next vertex, with every stored A-mass rounded up and
 * B-mass rounded down (each atom's a - s b only grows).  Since D is linear
 * between chosen vertices and E lies below every chord of the points, D >= E
 * everywhere, whichever near-collinear points the long-double hull keeps.
 * The pair is marked symmetric: the points are assumed to hold in both
 * directions (the usual meaning of (eps, delta)-DP), f is symmetric, and a
 * pair with D >= E dominates both directions (T(A, B) = T(B, A)^{-1} <= f).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include "mech/pair.h"

typedef struct pt {
    long double s, d; /* s = e^w, profile value d */
    double w;         /* loss of the atom at this vertex */
} pt;

static int cmp_s(const void *x, const void *y)
{
    long double a = ((const pt *)x)->s, b = ((const pt *)y)->s;
    return (a > b) - (a < b);
}

/* (b - a) x (c - a) > 0: c turns left of a -> b (lower hull keeps it). */
static int left_turn(const pt *a, const pt *b, const pt *c)
{
    long double cr = (b->s - a->s) * (c->d - a->d) - (b->d - a->d) * (c->s - a->s);
    return cr > 0;
}

dpa_pair *dpa_pair_profile(const double *eps, const double *delta, size_t n, dpa_error *err)
{
    if (!eps || !delta || n == 0) {
        dpa_error_set(err, DPA_EINVAL, "privacy_profile: need at least one (epsilon, delta) point");
        return NULL;
    }
    /* the vertex of the rightmost hull point: the smallest eps of min delta */
    size_t i1 = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(eps[i] >= 0 && eps[i] <= 700 && delta[i] >= 0 && delta[i] <= 1)) {
            dpa_error_set(err, DPA_EINVAL, "privacy_profile: point %zu (%g, %g) outside [0, 700] x [0, 1]", i, eps[i],
                          delta[i]);
            return NULL;
        }
        if (delta[i] < delta[i1] || (delta[i] == delta[i1] && eps[i] < eps[i1])) i1 = i;
    }
    pt *v = malloc((2 * n + 2) * sizeof *v);
    if (!v) {
        dpa_error_set(err, DPA_ENOMEM, "privacy_profile: out of memory");
        return NULL;
    }
    /* candidates with s <= s_1, ascending s: (0, 1), mirrors, points */
    size_t m = 0;
    v[m++] = (pt){0.0L, 1.0L, -INFINITY};
    for (size_t i = 0; i < n; i++) {
        long double t = expl(-(long double)eps[i]);
        if (eps[i] > 0) v[m++] = (pt){t, 1 - t + t * delta[i], -eps[i]};
        if (eps[i] < eps[i1]) v[m++] = (pt){1 / t, delta[i], eps[i]};
    }
    v[m++] = (pt){expl((long double)eps[i1]), delta[i1], eps[i1]};
    qsort(v, m, sizeof *v, cmp_s);
    /* lower hull (monotone chain; equal s: the lower d wins by the turn test,
     * a point of equal s and d is dropped as collinear) */
    size_t h = 0;
    for (size_t i = 0; i < m; i++) {
        while (h >= 2 && !left_turn(&v[h - 2], &v[h - 1], &v[i])) h--;
        if (h == 1 && v[i].s == v[0].s) continue; /* s = 0 only once */
        v[h++] = v[i];
    }
    /* v[0] = (0, 1) ... v[h-1] = vertex 1; atoms at v[h-1] .. v[1] */
    dpa_pair *p = dpa_pair_alloc(DPA_PAIR_ATOMS, h + 1, err);
    if (!p) {
        free(v);
        return NULL;
    }
    const long double d1 = v[h - 1].d;
    long double sb = 0, sa = 0; /* sums of the stored B-masses and of b_j s_j */
    size_t k = 0;
    dpa_atom *at = malloc((h + 1) * sizeof *at);
    if (!at) {
        free(v);
        dpa_pair_free(p);
        dpa_error_set(err, DPA_ENOMEM, "privacy_profile: out of memory");
        return NULL;
    }
    for (size_t j = h - 1; j >= 1; j--) {
        const pt *cur = &v[j], *nxt = &v[j - 1];
        /* D(s_next) = d1 + sa - s_next sb + b (s_cur - s_next) >= d_next */
        long double need = nxt->d - d1 - sa + nxt->s * sb;
        long double b = need / (cur->s - nxt->s);
        if (!(b > 0)) continue;
        /* a = b s rounded up twice over (long double, then the double log) */
        long double a = b * cur->s * (1 + 0x1p-58L);
        double la = nextafter((double)logl(a), INFINITY);
        double lb = nextafter((double)((long double)la - cur->w), -INFINITY);
        at[k++] = (dpa_atom){cur->w, la, lb};
        long double bs = expl((long double)lb);
        sb += bs;
        sa += bs * cur->s;
    }
    free(v);
    /* ascending: B's remainder at -inf, the atoms (built descending), r at +inf */
    size_t q = 0;
    long double rb = 1 - sb;
    if (rb > 0) p->atoms[q++] = (dpa_atom){-INFINITY, -INFINITY, (double)logl(rb)};
    for (size_t j = k; j-- > 0;) p->atoms[q++] = at[j];
    /* r = min delta at +inf, its log rounded up (the profile for eps at or
     * above the rightmost vertex is r alone: rounded to nearest it fell
     * below the envelope by up to u |log r| relative) */
    if (d1 > 0) p->atoms[q++] = (dpa_atom){INFINITY, nextafter((double)logl(d1), INFINITY), -INFINITY};
    free(at);
    p->natoms = q;
    p->symmetric = 1;
    return p;
}
