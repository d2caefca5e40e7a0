/* delta(t) of an (eps, delta) composition: the closed forms, the +inf mass
 * 1 - P, F(t) from the window sums or the Chernoff fallback, and
 * dpa_rr_delta.  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * 4. Closed forms: F(t) = 0 for t >= L = sum eps_i k_i (the largest finite
 *    loss; two-point: sum w_hi,i k_i, an upper bound by upward steps, or
 *    the exact sign of t - k w_hi for one factor) and, for RR factors only
 *    (sym), F(t) = 1 - e^t for t <= -L (all S >= t and E_A[e^{-S}] = 1) and
 *    F(t) >= 1 - e^t, delta(t) >= 1 - e^t: two-point factors are valid
 *    pairs only up to their representation, so neither is used there.
 *    Two-point +inf masses: A(+inf) = expl(la_inf) within
 *    (E_F + 4u + rep(la_inf)) relative, log(1 - A(+inf)) between log1pl of
 *    the two ends (E_F, u per product), summed into an interval for lk
 *    together with the RR part below.  The RR +inf mass 1 - P = -expm1(lk),
 *    lk = sum k_j log1p(-delta_j) in long double: |err lk| <= (E_F + (n + 2) u) |lk|
 *    (n leaves; same-sign terms), so 1 - P carries E_F + 4u relative plus
 *    e^{lk} |err lk| absolute (d/dx expm1 = e^x), P carries E_F + |err lk|
 *    relative; for a single step with delta > 0, 1 - P = delta exactly.
 *    delta = (1 - P) + P F with upper/lower ends of each, then rounded to
 *    double outwards.  Underflow: every weight in a window is >= TAU, far
 *    above LDBL_MIN; products that underflow (e^u, E2 for eps > 5677, ratios
 *    for eps > 11356) lose at most 2^-16300 of normalized mass in total, which
 *    TINY = 2^-16000 added to every upper bound covers.
 *
 *    Final combinations (a handful of roundings each) get a factor 1 +- 8u.
 */
#include "exact/exact_rr_internal.h"

/* [*flo, *fhi] contains F(t) = E[(1 - e^{t - S})_+] */
static void F_bounds(const dpa_rr_comp *c, double t, long double *fhi, long double *flo)
{
    long double X = -expm1l((long double)t); /* 1 - e^t */
    long double Xlo = X > 0 ? X * (1 - E_F - 4 * U) : 0, Xhi = X > 0 ? X * (1 + E_F + 4 * U) : 0;
    int beyond, below;
    if (isinf(t)) beyond = t > 0, below = t < 0;
    else if (c->m == 0) beyond = t >= 0, below = t <= 0;
    else if (c->m == 1 && !c->d[0].gen) {
        beyond = dpa_rr_xmab(t, c->d[0].eps, c->d[0].k) >= 0;  /* t >= eps k (exact sign) */
        below = dpa_rr_xmab(t, -c->d[0].eps, c->d[0].k) <= 0;  /* t <= -eps k */
    } else if (c->m == 1) {
        beyond = !(dpa_rr_gap(&c->d[0], t, c->d[0].k) < 0); /* t >= k w_hi (exact sign) */
        below = 0;
    } else {
        beyond = t >= c->Lrest[0];
        below = c->sym && -(long double)t >= c->Lrest[0];
    }
    if (beyond) { *fhi = *flo = 0; return; }
    if (below) { *fhi = fminl(1, Xhi); *flo = Xlo; return; }
    if (c->loose) {
        const dpa_rr_dist *d = &c->d[0];
        if (t >= 0) dpa_rr_chern_F(d, t, fhi, flo);
        else {
            /* symmetric pair: F(t) = 1 - e^t + e^t F(-t) */
            long double h, l, Et = expl((long double)t);
            dpa_rr_chern_F(d, -(long double)t, &h, &l);
            *fhi = (Xhi + Et * (1 + E_F + 4 * U) * h) * (1 + 8 * U);
            *flo = (Xlo + Et * (1 - E_F - 4 * U) * l) * (1 - 8 * U);
        }
    } else {
        long double vh, vl, zlo = 1, zhi = 1, tails = 0;
        dpa_rr_outer(c, 0, t, 0, &vh, &vl);
        for (size_t i = 0; i < c->m; i++) {
            const dpa_rr_dist *d = &c->d[i];
            long double zl = (d->Z - d->Zerr) * (1 - 4 * U), zh = (d->Z + d->Zerr + d->T) * (1 + 4 * U);
            zlo *= zl;
            zhi *= zh;
            tails += d->T / zl;
        }
        zlo *= 1 - 4 * (long double)c->m * U;
        zhi *= 1 + 4 * (long double)c->m * U;
        /* a few roundings in each: 8u covers them */
        *fhi = (vh / zlo + tails) * (1 + 8 * U) + TINY;
        *flo = vl / zhi * (1 - 8 * U);
    }
    if (!(*fhi <= 1)) *fhi = 1;
    if (!(*flo >= 0)) *flo = 0;
    if (c->sym && t < 0 && *flo < Xlo) *flo = Xlo; /* F >= 1 - e^t (E[e^{-S}] = 1) */
    if (*flo > *fhi) *flo = *fhi;
}


/* need: 1 the upper parts, 2 the lower ones, 3 both */
void dpa_rr_delta_parts(const dpa_rr_comp *c, double t, int need, dparts *p)
{
    long double fhi = 1, flo = 0, h, l;
    /* F is non-decreasing in every p_i and every loss: the upper bound from
     * the composition at the top of the representation ranges, the lower
     * one from the bottom (section 1b) */
    if (!c->rep_lo) F_bounds(c, t, &fhi, &flo);
    else {
        if (need & 1) F_bounds(c, t, &fhi, &l);
        if (need & 2) F_bounds(c->rep_lo, t, &h, &flo);
    }
    p->inf_up = c->inf_up;
    p->inf_lo = c->inf_lo;
    p->y_up = fhi > 0 ? c->keep_up * fhi * (1 + 4 * U) : 0;
    p->y_lo = flo > 0 ? c->keep_lo * flo * (1 - 4 * U) : 0;
    /* delta >= 1 - e^t holds for every pair, but a two-point factor is a pair
     * only up to the representation of its masses: RR compositions only */
    p->fl_ = c->sym && t < 0 ? -expm1l((long double)t) * (1 - E_F - 4 * U) : 0;
}

/* delta(t) in [*dl, *du] (long double) */
static void delta_ld(const dpa_rr_comp *c, double t, long double *du, long double *dl)
{
    dparts p;
    dpa_rr_delta_parts(c, t, 3, &p);
    long double u_ = p.y_up > 0 ? (p.inf_up + p.y_up) * (1 + 4 * U) : p.inf_up;
    long double l_ = p.y_lo > 0 ? (p.inf_lo + p.y_lo) * (1 - 4 * U) : p.inf_lo;
    *du = fminl(1, u_);
    *dl = fmaxl(0, fmaxl(l_, p.fl_));
}


void dpa_rr_delta(const dpa_rr_comp *c, double t, double *up, double *lo)
{
    if (isnan(t)) { *up = 1; *lo = 0; return; }
    long double du, dl;
    delta_ld(c, t, &du, &dl);
    *up = dpa_ld_up(du);
    *lo = dpa_ld_dn(dl);
    if (*lo > *up) *lo = *up;
    *lo += 0.0;
}

/* section 4: the +inf mass */
void dpa_rr_inf_mass(dpa_rr_comp *c, const fac *f, size_t nf)
{
    long double lk = 0, alo = 0, ahi = 0;
    size_t n = 0, ones = 0, na = 0;
    int full = 0;
    double single = 0;
    for (size_t i = 0; i < nf; i++) {
        double k = f[i].k;
        if (f[i].kind == 1) { /* A(+inf) = exp(lainf) within dpa_rr_rep_err */
            if (f[i].nfin == 0) full = 1;
            if (f[i].lainf == -INFINITY) continue;
            na++;
            long double a = expl((long double)f[i].lainf), ea = (E_F + 4 * U + dpa_rr_rep_err(f[i].lainf)) * ERRSLACK;
            long double aup = a * (1 + ea), adn = a * (1 - ea);
            /* log(1 - A(+inf)) in [l1, l2] (log1pl: E_F; the product and
             * the scaling: u each) */
            long double l1 = aup >= 1 ? -INFINITY : log1pl(-aup), l2 = adn >= 1 ? -INFINITY : log1pl(-adn);
            alo += (long double)k * l1 * (1 + E_F + 2 * U);
            ahi += (long double)k * l2 * (1 - E_F - 2 * U);
            continue;
        }
        double dl = f[i].delta;
        if (!(dl > 0)) continue;
        n++;
        if (dl >= 1) full = 1;
        else lk += (long double)k * log1pl(-(long double)dl);
        if (k == 1) ones++, single = dl;
    }
    if (full) {
        c->inf_lo = c->inf_up = 1;
        c->keep_lo = c->keep_up = 0;
    } else if (na > 0) {
        /* lk within elk (below), the atoms' part in [alo, ahi] (same-sign
         * sums: (na + 2) u), the two sums: 4u */
        long double elk = (E_F + ((long double)n + 2) * U) * fabsl(lk) * ERRSLACK;
        long double LKlo = (lk - elk + alo * (1 + ((long double)na + 2) * U)) * (1 + 4 * U);
        long double LKhi = (lk + elk + ahi * (1 - ((long double)na + 2) * U)) * (1 - 4 * U);
        if (!(LKhi <= 0)) LKhi = 0;
        c->inf_lo = fmaxl(0, -expm1l(LKhi) * (1 - E_F - 4 * U));
        c->inf_up = fminl(1, -expm1l(LKlo) * (1 + E_F + 4 * U));
        c->keep_lo = fmaxl(0, expl(LKlo) * (1 - E_F - 4 * U));
        c->keep_up = fminl(1, expl(LKhi) * (1 + E_F + 4 * U));
    } else if (n == 0) {
        c->inf_lo = c->inf_up = 0;
        c->keep_lo = c->keep_up = 1;
    } else if (n == 1 && ones == 1) { /* one step: 1 - P = delta exactly */
        c->inf_lo = c->inf_up = single;
        long double kp = 1 - (long double)single;
        c->keep_lo = kp * (1 - 4 * U);
        c->keep_up = kp * (1 + 4 * U);
    } else {
        long double elk = (E_F + ((long double)n + 2) * U) * fabsl(lk) * ERRSLACK;
        long double im = -expm1l(lk);
        long double ei = (E_F + 4 * U) * im + expl(lk + elk) * elk * (1 + E_F);
        c->inf_lo = fmaxl(0, im - ei);
        c->inf_up = fminl(1, im + ei);
        long double kp = expl(lk), ek = (E_F + 4 * U + elk * (1 + elk)) * ERRSLACK;
        c->keep_lo = fmaxl(0, kp * (1 - ek));
        c->keep_up = fminl(1, kp * (1 + ek));
    }
}
