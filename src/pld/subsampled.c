/* A composite leaf's subsampling on the grid: the atom pair of a
 * subsampled composed measure (docs/sampling.md §3), and the trimming of a
 * lower measure's B-mass.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "pld/pld_acct.h"
#include "pld/pld_build.h"

/* The atom pair of a subsampled composed measure (docs/sampling.md §3).
 * mu: the inner composition's grid measure (masses at z_i = (lo + i) step
 * plus mu->inf at +inf): for dir 0 the law of the inner loss L under P, for
 * dir 1 the law of L' = log(Q/P) under Q (the inner reversed composition).
 *   dir 0 (remove, (qP + (1-q)Q, Q)): atom w = log(q e^z + 1 - q) with
 *     A = m (q + (1-q) e^{-z}), B = m e^{-z}; +inf keeps A = q mu_inf; and
 *     the B-only mass beta = 1 - sum m e^{-z} (Q's mass where P = 0, taken
 *     as >= 0) gives an atom at log(1 - q) with A = (1-q) beta, B = beta.
 *     Then h_sub(x) = q h_mu((x - 1 + q)/q) for x > 1 - q and
 *     q mu(total) + (1 - q - x) max(1, sum m e^{-z}) below: monotone in h_mu.
 *   dir 1 (add, (Q, qP + (1-q)Q)): atom w = -log(q e^{-z} + 1 - q) with
 *     A = m, B = m e^{-w}; +inf of mu goes to -log(1 - q).  Then
 *     h_sub(x) = (1 - x(1-q)) h_mu(x q / (1 - x(1-q))) for x < 1/(1-q), else
 *     0: monotone in h_mu, for any measure mu.
 * *werr: sum over atoms of A-mass times the round-off bound of its w (an
 * atom moved by dw moves h by at most A dw); *bsum: sum m e^{-z}. */
dpa_pair *dpa_pld_subsampled_atoms(const dpa_composed *mu, double q, int dir, double *werr, long double *bsum,
                                   dpa_error *err)
{
    size_t cnt = 0;
    for (size_t i = 0; i < mu->n; i++) cnt += mu->mass[i] > 0;
    dpa_pair *p = dpa_pair_alloc(DPA_PAIR_ATOMS, cnt + 2, err);
    if (!p) return NULL;
    double lq = log(q), l1q = log1p(-q);
    long double bs = 0, we = 0;
    size_t k = 0;
    if (dir == 0) p->atoms[k++] = (dpa_atom){l1q, -INFINITY, -INFINITY}; /* B-only mass, set below */
    for (size_t i = 0; i < mu->n; i++) {
        double mi = mu->mass[i];
        if (!(mi > 0)) continue;
        double z = (double)(mu->lo + (long long)i) * mu->step, lm = log(mi);
        bs += (long double)mi * expl(-(long double)z);
        double w, la, lb;
        if (dir == 0) {
            w = dpa_poisson_loss(q, z); /* log(q e^z + 1 - q) */
            la = lm + dpa_log_add_exp(lq, l1q - z);
            lb = lm - z;
        } else {
            w = -dpa_poisson_loss(q, -z); /* -log(q e^{-z} + 1 - q) */
            la = lm;
            lb = lm - w;
        }
        /* w: log1p(q expm1(.)) is good to ~4 u relative, and the rounding
         * of z (u |z|) moves it by at most u |z| (|dw/dz| <= 1):
         * |dw| <= 4 u (|w| + |z| + 2) with margin */
        we += (long double)mi * 4 * DPA_UNIT_ROUNDOFF * (fabs(w) + fabs(z) + 2);
        p->atoms[k++] = (dpa_atom){w, la, lb};
    }
    if (mu->inf > 0) {
        if (dir == 0) p->atoms[k++] = (dpa_atom){INFINITY, lq + log(mu->inf), -INFINITY};
        else {
            p->atoms[k++] = (dpa_atom){-l1q, log(mu->inf), l1q + log(mu->inf)};
            if (q < 1) we += (long double)mu->inf * 4 * DPA_UNIT_ROUNDOFF * (fabs(l1q) + 1);
        }
    }
    if (dir == 0) {
        double beta = (double)(1.0L - bs);
        if (beta > 0) p->atoms[0] = (dpa_atom){l1q, l1q + log(beta), log(beta)};
        if (q < 1) we += (long double)fmax(beta, 0.0) * 4 * DPA_UNIT_ROUNDOFF * (fabs(l1q) + 1);
    }
    p->natoms = k;
    /* atoms sorted by w: the map is increasing in z; the B-only atom at
     * log(1 - q) lies below all others (w > log(1 - q) for finite z) and
     * +inf is last; drop an unused first slot */
    if (dir == 0 && p->atoms[0].la == -INFINITY) {
        memmove(p->atoms, p->atoms + 1, (k - 1) * sizeof *p->atoms);
        p->natoms = k - 1;
    }
    /* a map rounded into a tie or an inversion would break the sort
     * order the discretizer relies on: keep it non-decreasing */
    for (size_t i = 1; i < p->natoms; i++)
        if (p->atoms[i].w < p->atoms[i - 1].w) p->atoms[i].w = p->atoms[i - 1].w;
    p->symmetric = 0;
    *werr = (double)we * (1 + 1e-3);
    *bsum = bs;
    return p;
}

/* A lower measure whose implied B-mass sum m e^{-z} exceeds 1 (rounding
 * losses down raises it) would raise the subsampled h below x = 1 - q
 * (dpa_pld_subsampled_atoms); lowering masses only lowers h, so take the excess
 * off the lowest losses, where it costs the least A-mass. */
void dpa_pld_trim_lower_bmass(dpa_composed *mu)
{
    long double bs = 0;
    for (size_t i = 0; i < mu->n; i++)
        if (mu->mass[i] > 0) bs += (long double)mu->mass[i] * expl(-(long double)((double)(mu->lo + (long long)i) * mu->step));
    /* the long double sum is good to far better than 1e-15 relative: a
     * margin of 1e-15 keeps the trimmed sum at or below 1 */
    long double excess = bs - 1.0L + 1e-15L;
    for (size_t i = 0; i < mu->n && excess > 0; i++) {
        if (!(mu->mass[i] > 0)) continue;
        long double e = expl(-(long double)((double)(mu->lo + (long long)i) * mu->step));
        long double b = (long double)mu->mass[i] * e;
        if (b <= excess) {
            excess -= b;
            mu->mass[i] = 0;
        } else {
            mu->mass[i] = (double)(((long double)mu->mass[i] - excess / e) * (1 - 1e-15L));
            excess = 0;
        }
    }
}
