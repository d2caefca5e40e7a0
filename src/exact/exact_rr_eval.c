/* Evaluation of the window sums of an (eps, delta) composition: one
 * binomial on a lattice cell (dist_eval) and the recursion over several
 * distinct factors (dpa_rr_outer).  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * 2. Evaluation on a lattice cell (dist_eval).  For x with
 *    S(s - 1) <= x < S(s), S(y) = eps (2y - k) (two-point: y w_hi + (k - y) w_lo),
 *    u = x - S(s) in [-2 eps, 0) (two-point: [-D, 0)):
 *      V(x) = sum_{y >= s} w(y) (1 - e^{x - S(y)})
 *           = w(s) (-expm1(u)) + [A(s + 1) - e^u E2 G(s + 1)].
 *    The bracket's terms have factors >= 1 - E2, so its cancellation is
 *    bounded, and the first term, which alone is small just below a lattice
 *    point, keeps full relative accuracy through expm1.  The cell is found
 *    with exact signs: dpa_rr_xmab (an error-free product and sum) gives x - S(y)
 *    with its exact sign and a relative error <= u (1 + 4u) =: grel.  For a
 *    two-point factor x - y w_hi - (k - y) w_lo needs two products: gen_gap
 *    forms them and the first two sums error-free (Dekker, TwoSum) and
 *    certifies the rounded rest (relative error <= u (1 + 2^-9)); within
 *    ~1e-16 relative of a lattice point it falls back to exact_sum, an exact
 *    integer sum rounded towards zero (relative error < 2u): grel = 2u, and
 *    locate bisects with exact signs when the first guess is off by more
 *    than a few cells.  Hence -expm1l(u) has relative error <= E_F + 2 grel,
 *    expl(u) <= E_F + 2 grel |u|,
 *    and each product/difference adds u of its result; the a-posteriori
 *    bound is summed in dist_eval.  When that bound exceeds 1e-14 of V (tiny
 *    eps: the relative error is ~ c1 / eps), one eps sums the terms directly
 *    instead (each positive; at most 32768 of them, the rest bounded by the
 *    geometric series).  Then
 *      F_win = V / Z_true in [V_lo / Z_hi, V_hi / Z_lo],   F in [F_win, F_win + T / Z_lo].
 *
 * 3. Several distinct eps (dpa_rr_outer): a recursion over the windows of all but
 *    the largest-window binomial, which is evaluated by dist_eval at the
 *    remaining threshold x = t - sum eps_i (2 y_i - k_i) (two-point:
 *    y w_hi + (k - y) w_lo, two products and a sum).  x is rounded (its
 *    error dx is tracked: u per product, sum and difference), and V is
 *    non-increasing in x, so V(x_true) lies in [V_lo(x + dx), V_hi(x - dx)]
 *    (both points rounded outwards).  The weights' product has relative error
 *    sum theta_i + u per product; sums of positive terms add u of each
 *    partial sum.  Mass outside any window is at most sum_i T_i / Z_i, added
 *    to the upper bound (union bound; the integrand is in [0, 1]).
 */
#include "exact/exact_rr_internal.h"

/* one eps: sum the terms directly when the table form's error bound exceeds
 * DIRECT_REL of the value (at most DIRECT_MAX terms) */
#define DIRECT_REL 1e-14L
#define DIRECT_MAX 32768

/* Add w (relative error <= th) in front of the suffix sums (section 1). */
static void acc_add(acc *s, const dpa_rr_dist *d, long double w, long double th)
{
    long double wt = w * th;
    s->A += w;
    s->Ae += wt + U * s->A;
    s->H = w + d->E2 * s->H;
    s->He = d->E2 * s->He + wt + (2 * U + d->e2r) * s->H;
}

/* weight at y (bk = 1 only: every point is a checkpoint) */
static long double dist_w(const dpa_rr_dist *d, double y)
{
    return y >= d->md ? d->up[(size_t)(y - d->md)].w : d->dn[(size_t)(d->md - y) - 1].w;
}

/* section 2: enclosure [*vlo, *vhi] of V(x) = sum_{window} w(y) (1 - e^{x - S(y)})_+
 * (weights relative to w(md) = 1), x exact */
static void dist_eval(const dpa_rr_dist *d, long double x, int direct, long double *vhi, long double *vlo)
{
    if (!(dpa_rr_gap(d, x, d->hi) < 0)) { *vhi = *vlo = 0; return; }
    double s = dpa_rr_locate(d, x);
    long double u = dpa_rr_gap(d, x, s);
    acc a = {0, 0, 0, 0};
    long double ws;
    if (s >= d->md) {
        long long j = (long long)(s - d->md) / (long long)d->bk;
        double c0 = d->md + (double)j * d->bk, end = d->hi;
        if ((size_t)j + 1 < d->nup) {
            const dpa_rr_ckpt *n = &d->up[j + 1];
            a = (acc){n->A, n->G, n->Ae, n->Ge};
            end = c0 + d->bk - 1;
        }
        long double buf[MAX_BK];
        long long nb = (long long)(end - c0) + 1;
        buf[0] = d->up[j].w;
        for (long long i = 1; i < nb; i++) buf[i] = buf[i - 1] * dpa_rr_ratio_up(d, c0 + (double)(i - 1));
        for (double y = end; y > s; y -= 1) acc_add(&a, d, buf[(long long)(y - c0)], (y - d->md) * d->c1);
        ws = buf[(long long)(s - c0)];
    } else {
        long long j = ((long long)(d->md - s) + (long long)d->bk - 1) / (long long)d->bk - 1;
        const dpa_rr_ckpt *ck = j ? &d->dn[j - 1] : &d->up[0];
        double c0 = d->md - (double)j * d->bk;
        a = (acc){ck->A, ck->G, ck->Ae, ck->Ge};
        long double w = ck->w;
        for (double y = c0 - 1;; y -= 1) {
            w *= dpa_rr_ratio_dn(d, y + 1);
            if (y == s) break;
            acc_add(&a, d, w, (d->md - y) * d->c1);
        }
        ws = w;
    }
    long double th = fabsl((long double)s - d->md) * d->c1;
    long double X = -expm1l(u), Eu = expl(u);
    long double rX = E_F + 2 * d->grel, rE = E_F + 2 * d->grel * fabsl(u);
    long double G1 = d->E2 * a.H;
    long double eG1 = (U + d->e2r) * G1 + d->E2 * a.He;
    long double Q = Eu * G1;
    long double eQ = (U + rE) * Q + Eu * eG1;
    long double R = a.A - Q;
    long double eR = U * fabsl(R) + a.Ae + eQ;
    long double T1 = ws * X;
    long double eT1 = (U + rX + th) * T1;
    long double V = T1 + R;
    long double e = (U * fabsl(V) + eT1 + eR) * ERRSLACK;
    if (direct && e > DIRECT_REL * V && d->bk == 1) {
        /* the table form cancels (relative error ~ c1 / eps for tiny eps):
         * sum the terms directly, each positive: -expm1l of an argument with
         * relative error grel: rX = E_F + 2 grel, the product u, the weight
         * theta.  Past the mode, once the geometric bound of the rest
         * (terms <= weights, true ratios <= rb) is below 2^-70 of the sum,
         * stop and count that bound as error.  At most DIRECT_MAX terms,
         * else the table result stands. */
        long double sum = 0, es = 0, rem = -1;
        const long double rinc = (1 + 2 * U + d->eE) * ERRSLACK;
        int n = 0;
        for (double y = s; y <= d->hi && n < DIRECT_MAX; y += 1, n++) {
            long double w = dist_w(d, y), th = fabsl((long double)y - d->md) * d->c1;
            long double term = w * -expm1l(dpa_rr_gap(d, x, y));
            sum += term;
            es += term * (d->gen ? th + rX + U : th + E_F + 3 * U) + U * sum;
            if (y >= d->hi) { rem = 0; break; }
            if (y > d->md) {
                long double rb = dpa_rr_ratio_up(d, y) * rinc;
                if (rb < 1) {
                    long double b = w * (1 + th) * rb / (1 - rb) * (1 + 4 * U);
                    if (b < 0x1p-70L * sum) { rem = b; break; }
                }
            }
        }
        if (rem >= 0) {
            V = sum;
            e = (es + rem) * ERRSLACK;
        }
    }
    *vhi = V + e;
    *vlo = V - e;
}

/* section 3: enclosure of the window sum over dists i..m-1 at threshold x,
 * whose true value lies within dx of x */
void dpa_rr_outer(const dpa_rr_comp *c, size_t i, long double x, long double dx, long double *vhi, long double *vlo)
{
    const dpa_rr_dist *d = &c->d[i];
    if (i + 1 == c->m) {
        if (dx == 0) dist_eval(d, x, c->m == 1, vhi, vlo);
        else {
            long double h, l, dummy;
            dist_eval(d, nextafterl(x - dx, -INFINITY), 0, &h, &dummy);
            dist_eval(d, nextafterl(x + dx, INFINITY), 0, &dummy, &l);
            *vhi = h;
            *vlo = l;
        }
        if (!(*vlo > 0)) *vlo = 0;
        return;
    }
    long double sh = 0, sl = 0, eh = 0, el = 0, Lr = c->Lrest[i + 1];
    Lr += 4 * U * fabsl(Lr);
    for (double y = d->hi; y >= d->lo; y -= 1) {
        long double xn, dxn;
        if (!d->gen) {
            long double s = (long double)d->eps * (2.0L * y - (long double)d->k);
            xn = x - s;
            dxn = (dx + U * fabsl(s) + U * fabsl(xn)) * (1 + 4 * U);
        } else {
            /* y w_hi and (k - y) w_lo (integers exact), their sum, x - it:
             * u of each */
            long double p1 = (long double)y * d->whi, p2 = ((long double)d->k - (long double)y) * d->wlo;
            long double s = p1 + p2;
            xn = x - s;
            dxn = (dx + U * (fabsl(p1) + fabsl(p2) + fabsl(s)) + U * fabsl(xn)) * (1 + 4 * U);
        }
        /* every remaining loss is <= Lrest[i + 1]: no contribution */
        long double xl = xn - dxn;
        if (xl - 2 * U * fabsl(xl) >= Lr) continue;
        long double h, l;
        dpa_rr_outer(c, i + 1, xn, dxn, &h, &l);
        long double w = dist_w(d, y), th = fabsl((long double)y - d->md) * d->c1;
        long double th_ = w * h, tl = w * l;
        sh += th_;
        eh += (U + th) * th_ + U * sh;
        sl += tl;
        el += (U + th) * tl + U * sl;
    }
    *vhi = sh + eh * ERRSLACK;
    *vlo = sl - el * ERRSLACK;
    if (!(*vlo > 0)) *vlo = 0;
}
