/* One distinct factor of an (eps, delta) composition as a binomial's
 * window: its parameters and its checkpoint tables of suffix sums, with
 * their error bounds.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * 1. One binomial Bin(k, p), p = e^eps / (1 + e^eps) (dpa_rr_dist_build).
 *    Weights w(y) relative to w(md) = 1 at md ~ (k + 1) p, by the ratio
 *    recurrence (no lgamma of huge arguments):
 *      w(y + 1) = w(y) * ((k - y) E) / (y + 1),   w(y - 1) = w(y) * y / ((k - y + 1) E),
 *    E = expl(eps).  k - y, y + 1 are exact (integers < 2^53); each step has
 *    three roundings and uses E once: the computed weight is
 *    w(y) prod (1 + e_i), |e_i| <= 3u + E_F, so after n = |y - md| steps its
 *    relative error is at most theta(y) = n c1, c1 = (3u + E_F)(1 + 2^-20)
 *    (the factor covers (1 + x)^n - 1 <= n x (1 + n x) for n x <= 2^-30;
 *    n <= 2^28).  Walk outwards from md until the next weight is below
 *    TAU = 2^-1120 and the ratio, rounded up, rb < 1: the true ratios
 *    decrease away from the mode, so the weight beyond the window's end is
 *    at most w(end) (1 + theta) rb / (1 - rb) (geometric series); T is the
 *    sum of both ends' bounds (0 at y = 0 or y = k).  pmf(y) = w(y) / Z_true,
 *    Z_true = (window sum) + (weight outside) in [Z - Zerr, Z + Zerr + T].
 *
 *    Suffix sums, with E2 = e^{-2 eps}: A(y) = sum_{y' >= y} w(y'),
 *    G(y) = sum_{y' >= y} w(y') E2^{y' - y} (Horner: G(y) = w(y) + E2 G(y + 1)),
 *    stored at checkpoints every bk points (bk = 1 up to 2^18 window points,
 *    so the tables stay below 16 MB; larger windows, up to 2^27 points,
 *    keep every bk-th point and walk at most bk steps per query).
 *    Error of one step (acc_add, used by the queries), all terms positive:
 *      A' = fl(A + w):           |err A'| <= |err A| + w theta + u A'
 *      H' = fl(w + fl(E2~ H)):   |err H'| <= E2 |err H| + w theta + (2u + E_F) H'
 *    (the (1 + O(E_F)) factors on the propagated terms compound to at most
 *    1 + 2^-31 over 2^28 steps; they and the rounding of the error sums
 *    themselves are covered by the factor ERRSLACK = 1 + 2^-20 applied where
 *    the bounds are used).  The build bounds a block of nb points at once
 *    (block_combine: theta of its farthest point, u nb A, (2u + E_F) nb H;
 *    E2^i H_i <= H for the Horner partial sums), so its inner loop is a
 *    division, three products and two sums per point; blocks combine with
 *    E2b = expl(-2 eps bk) (argument exact: 53-bit eps times an 11-bit bk).
 *
 * 1b. Two-point factors (dist_params, atoms_fac, shift_losses).  The
 *    weights use the ratio E = p / (1 - p) = A(w_hi) / A(w_lo) in place of
 *    e^eps and the lattice step D = w_hi - w_lo in place of 2 eps
 *    (E2 = e^{-D}, E2b = e^{-D bk}).  D is rounded (u D), so E2 carries
 *    E_F + u D relative (e2r; E2b: E_F + 2u D bk, e2br), used wherever the
 *    RR analysis has E_F for E2; for D > 11400 E2 underflows and TINY covers
 *    it as above.  The per-step compounding stays within the ERRSLACK
 *    factor: the error propagated j steps is multiplied by E2^j, which is
 *    below 2^-16000 once j D > 11100, so j (E_F + u D) <= 2^28 E_F + 11100 u.
 *    The pair is known only up to the representation of its atoms
 *    (exact_rr.h): the true masses within DPA_RR_REP_ULPS u_d (1 + |la|) of
 *    exp(la) (relative), the true losses within DPA_RR_LOSS_ULPS u_d |w| of
 *    w.  Rather than carry these as errors (they would enter every weight
 *    n times and be amplified by the cancellation ~ 1/D of the table form),
 *    the bounds use monotonicity: F(t) = E[(1 - e^{t - S})_+] is
 *    non-decreasing in every p_i (Bin(k, p) increases stochastically in p
 *    and S increases in every Y_i) and in every loss (S increases
 *    pointwise).  So the composition is built twice: with every two-point
 *    ratio and both losses at the top of their ranges (c itself: upper
 *    bounds) and at the bottom (c->rep_lo: lower bounds).  The ratio:
 *    log E* lies within eta = rep(la_hi) + rep(la_lo) of la_hi - la_lo,
 *    which is within u |dl| of dl = fl(la_hi - la_lo); E = expl(dl +- m),
 *    m = (eta + 4u |dl| + 4u eta)(1 + 2^-20), covers both and the rounding
 *    of the argument, so E has relative error E_F with respect to a ratio on
 *    the correct side of E* (eE = E_F, c1 = C1 as for RR).  The losses:
 *    shift_one moves w by more than DPA_RR_LOSS_ULPS u_d |w| to a double
 *    (fl(w +- dw), then one more ulp outwards), so the shifted losses are
 *    exact doubles and the cell location stays error-free.  Two atoms
 *    closer than 64 u_d of the larger loss are refused (the shifted losses
 *    must stay ordered).  A factor with one finite atom has p = 1 (E = +inf,
 *    a one-point window {k}); A(+inf) = exp(la_inf) enters P (section 4).
 */
#include <stdlib.h>
#include "exact/exact_rr_internal.h"

static int grow(dpa_rr_ckpt **p, size_t *cap, size_t need)
{
    if (need < *cap) return 0;
    size_t nc = *cap * 2 > need + 1 ? *cap * 2 : need + 1;
    dpa_rr_ckpt *q = realloc(*p, nc * sizeof *q);
    if (!q) return -1;
    *p = q;
    *cap = nc;
    return 0;
}

static void set_ck(dpa_rr_ckpt *ck, long double w, const acc *a)
{
    ck->w = w;
    ck->A = a->A;
    ck->G = a->H;
    ck->Ae = dpa_ld_up(a->Ae);
    ck->Ge = dpa_ld_up(a->He);
}

/* Error bounds of a block of nb weights summed from 0 (section 1, per
 * block): the rounding of nb additions is at most u times the sum of the
 * partial sums, <= u nb A; for the Horner sum each step's (2u + E_F) H_i is
 * carried down multiplied by E2^i, and E2^i H_i <= H, so <= (2u + E_F) nb H;
 * the weights' errors are at most theta_max (the block's farthest point from
 * md) of each term.  Then the block is put in front of the suffix sums from
 * its end (A, G, Ae, Ge): A' = Ab + A, G' = Hb + E2b G. */
static void block_combine(const dpa_rr_dist *d, long double Ab, long double Hb, long double nb, long double thmax,
                          acc *s)
{
    long double Abe = (thmax + U * nb) * Ab, Hbe = (thmax + (2 * U + d->e2r) * nb) * Hb;
    s->A = Ab + s->A;
    s->Ae = Abe + s->Ae + U * s->A;
    s->H = Hb + d->E2b * s->H;
    s->He = Hbe + d->E2b * s->He + (2 * U + d->e2br) * s->H;
}

/* the parameters of one factor (section 1; RR exactly as before).  side:
 * +1 / -1 puts a two-point factor's ratio at the top / bottom of its
 * representation range (section 1b) */
static void dist_params(dpa_rr_dist *d, const grp *g, int side)
{
    d->gen = g->gen;
    d->k = g->k;
    d->whi = g->whi;
    d->wlo = g->wlo;
    d->eE = d->e2r = d->e2br = E_F;
    d->c1 = C1;
    if (!g->gen) {
        long double e = g->eps;
        d->eps = g->eps;
        d->D = 2 * e;
        d->E = expl(e);
        d->E2 = expl(-2 * e);
        d->grel = U;
        d->th = tanhl(0.5L * e);
        return;
    }
    /* two-point factor (section 1b) */
    d->eps = NAN;
    d->th = NAN;
    long double D = (long double)g->whi - (long double)g->wlo; /* >= 0; error <= u D */
    d->D = D;
    if (isinf(g->lalo)) d->E = INFINITY; /* one finite atom: p = 1, a one-point window */
    else {
        /* log r* within eta of la_hi - la_lo (exact), which is within u |dl|
         * of dl; the shifted argument a is rounded (u |a|): with the margin
         * below, side (a - log r*) >= 0, and E = expl(a) has error E_F */
        long double dl = (long double)g->lahi - (long double)g->lalo;
        long double eta = dpa_rr_rep_err(g->lahi) + dpa_rr_rep_err(g->lalo);
        long double m = (eta + 4 * U * fabsl(dl) + 4 * U * eta) * ERRSLACK;
        d->E = expl(dl + (side > 0 ? m : -m));
    }
    d->E2 = expl(-D);
    d->e2r = (E_F + U * fminl(D, 11400)) * ERRSLACK;
    d->e2br = d->e2r;
    d->grel = 2 * U;
}

/* section 1 */
dpa_status dpa_rr_dist_build(dpa_rr_dist *d, const grp *g, int side, double *budget, dpa_error *err)
{
    double k = g->k;
    dist_params(d, g, side);
    d->bk = dpa_rr_bk_of(g);
    if (d->bk > MAX_BK) return dpa_error_set(err, DPA_ENOMEM, "exact method: window too large");
    if (!g->gen) d->E2b = expl(-2 * (long double)g->eps * (long double)d->bk);
    else {
        long double a = d->D * (long double)d->bk; /* error <= 2u D bk with D's */
        d->E2b = expl(-a);
        d->e2br = (E_F + 2 * U * fminl(a, 11400)) * ERRSLACK;
    }
    double md = g->md;
    d->md = md;
    long long bk = (long long)d->bk;
    size_t cap_up = (size_t)(fmax(0, g->ehi - md) / d->bk) + 4, cap_dn = (size_t)(fmax(0, md - g->elo) / d->bk) + 4;
    d->up = malloc(cap_up * sizeof *d->up);
    d->dn = malloc(cap_dn * sizeof *d->dn);
    if (!d->up || !d->dn) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    long double buf[MAX_BK];
    long double T_hi = 0, T_lo = 0, E = d->E, E2 = d->E2;
    const long double rinc = (1 + 2 * U + d->eE) * ERRSLACK; /* true ratio <= computed * rinc */
    /* upper side: blocks [md + j bk, md + (j + 1) bk - 1]; k - y and y + 1
     * are kept as exact long double counters */
    long double w = 1, ky = (long double)k - md, y1 = (long double)md + 1;
    size_t j = 0;
    long long nb = 0;
    for (;; j++) {
        if (grow(&d->up, &cap_up, j)) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
        d->up[j].w = w;
        nb = 0;
        int stop = 0;
        for (;;) {
            buf[nb++] = w;
            if (ky <= 0) { stop = 1; break; }
            long double r = (ky * E) / y1;
            if (w * r < TAU) {
                long double rb = r * rinc;
                if (rb < 1) {
                    T_hi = w * (1 + (y1 - 1 - md) * d->c1) * rb / (1 - rb) * (1 + 4 * U) * ERRSLACK;
                    stop = 1;
                    break;
                }
            }
            w *= r;
            ky -= 1;
            y1 += 1;
            if (nb == bk) break;
        }
        if ((*budget -= (double)nb) < 0) return dpa_error_set(err, DPA_ENOMEM, "exact method: window larger than estimated");
        long double Ab = buf[nb - 1], Hb = buf[nb - 1];
        for (long long i = nb - 2; i >= 0; i--) {
            Ab += buf[i];
            Hb = buf[i] + E2 * Hb;
        }
        /* the block's sums, without a successor yet */
        d->up[j].A = Ab;
        d->up[j].G = Hb;
        long double thmax = ((long double)(j * (size_t)bk) + (long double)(nb - 1)) * d->c1;
        d->up[j].Ae = dpa_ld_up((thmax + U * nb) * Ab);
        d->up[j].Ge = dpa_ld_up((thmax + (2 * U + d->e2r) * nb) * Hb);
        if (stop) break;
    }
    d->nup = j + 1;
    d->hi = md + (double)j * d->bk + (double)(nb - 1);
    /* combine the blocks from the top: A(c_j) = Ab_j + A(c_{j+1}),
     * G(c_j) = Gb_j + E2b G(c_{j+1}) */
    for (size_t i = d->nup - 1; i-- > 0;) {
        dpa_rr_ckpt *c = &d->up[i], *n = &d->up[i + 1];
        long double A = c->A + n->A;
        long double Ae = (long double)c->Ae + n->Ae + U * A;
        long double G = c->G + d->E2b * n->G;
        long double Ge = d->E2b * n->Ge + (long double)c->Ge + (2 * U + d->e2br) * G;
        c->A = A;
        c->G = G;
        c->Ae = dpa_ld_up(Ae);
        c->Ge = dpa_ld_up(Ge);
    }
    /* lower side: walk down from md in blocks ending at the checkpoints
     * md - (j + 1) bk; each block's Horner sum runs downwards as we walk */
    acc s = {d->up[0].A, d->up[0].G, d->up[0].Ae, d->up[0].Ge};
    long double Ab = 0, Hb = 0, z = md, kz = (long double)k - md + 1; /* exact counters y, k - y + 1 */
    w = 1;
    j = 0;
    nb = 0;
    double y = md;
    for (;;) {
        if (y <= 0) break;
        /* w(y - 1) / w(y) = y / ((k - y + 1) E) */
        long double r = z / (kz * E);
        if (w * r < TAU) {
            long double rb = r * rinc;
            if (rb < 1) {
                T_lo = w * (1 + (md - y) * d->c1) * rb / (1 - rb) * (1 + 4 * U) * ERRSLACK;
                break;
            }
        }
        w *= r;
        y -= 1;
        z -= 1;
        kz += 1;
        nb++;
        Ab += w;
        Hb = w + E2 * Hb;
        if (nb == bk) {
            if (grow(&d->dn, &cap_dn, j)) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
            if ((*budget -= (double)nb) < 0)
                return dpa_error_set(err, DPA_ENOMEM, "exact method: window larger than estimated");
            block_combine(d, Ab, Hb, (long double)nb, (md - y) * d->c1, &s);
            set_ck(&d->dn[j++], w, &s);
            Ab = Hb = 0;
            nb = 0;
        }
    }
    d->ndn = j;
    d->lo = y;
    if (nb > 0) { /* a partial last block: only its total matters */
        long double Abe = ((md - y) * d->c1 + U * nb) * Ab;
        s.A = Ab + s.A;
        s.Ae = Abe + s.Ae + U * s.A;
    }
    d->Z = s.A;
    d->Zerr = s.Ae * ERRSLACK;
    d->T = (T_lo + T_hi) * (1 + 2 * U);
    return DPA_OK;
}
