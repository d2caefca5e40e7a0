/* Evaluation of the heterogeneous bracket's laws (section 7): Psi_j, the
 * characteristic function on the window, and the sums of the functionals
 * (hockey stick, indicators, the tilted term) by a finite Fourier identity.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Evaluation by a finite Fourier sum.  Both laws are lattice laws of sums of
 *   independent two- or four-point variables: the characteristic function
 *   phi(w) = prod_t phi_t(w)^{k_t} (types t: distinct eps with their counts),
 *   phi_t = sum_c w_c (cos m_c w + i t_c sin m_c w), t_c = tanh(x_c / 2) of
 *   the component's loss x_c, is a product of closed forms.  On a window
 *   W = [s_lo, s_lo + N) (N odd) that holds all but tail <= 2 2^-64 of the
 *   mass (Chernoff bounds exp(K(lam) - lam x), K the log-MGF, computed with
 *   an upward margin), for any g with values in [0, 1] on W the periodized
 *   law A_N(r) = sum_k A(r + kN) gives exactly
 *     sum_W A_N g = (1/N) [G_0 + 2 sum_{j=1}^{(N-1)/2} Re(Psi_j conj(G_j))],
 *   Psi_j = phi(w_j) e^{-i w_j s_lo}, G_j = sum_{rho} g(rho) e^{i w_j rho},
 *   w_j = 2 pi j / N, and sum_Z A g differs from sum_W A_N g by at most the
 *   tail (both sums of g in [0, 1] over mass outside W).  The functionals
 *   are g = (1 - e^{t - sh})_+ (F), indicators of {s >= s0}, {s <= s1} and
 *   e^{t - sh} 1{s >= s0} (the tilted term; values in [0, c0], total
 *   variation <= 2 c0: its bounds scale by c0, 1.5 c0 for the dropped
 *   frequencies); their G_j are geometric sums in closed form:
 *     hockey stick: G_j = (w^r0 - 1)/(1 - w) - c0 (w^r0 - e^{-h n})/(1 - w e^{-h}),
 *     G_0 = n - c0 (1 - e^{-hn}) / (1 - e^{-h}),  c0 = e^{t - (s_lo + r0) h},
 *   r0 the first window index with (s_lo + r0) h > t, n = N - r0, w = e^{i w_j}.
 *   Every such g is monotone with values in [0, 1], so by Abel summation
 *   |G_j| <= 2 / |1 - w| <= N / j, and a frequency with |Psi_j| <= tau
 *   (2^-64) changes the sum by at most 2 tau / j: the dropped ones cost
 *   at most 2 tau (1 + ln((N - 1) / 2)) in all ("drop"); which frequencies
 *   are dropped: exact_rr_het_certify.c.
 *
 * Round-off.  Every complex quantity is carried with a bound on its error
 *   (cx: value and a bound on the modulus of the error), propagated through
 *   sums, products and quotients (the product's rounding <= sqrt(5) u |a||b|,
 *   covered by 3u of the 1-norms; a quotient's <= 8u |a| / |b|); angles come
 *   from exact integer residues (j m mod N in 128-bit arithmetic), so an
 *   argument carries 3u relative; sinl/cosl E_F each.  Factors with count
 *   k <= HET_POW_MAX are multiplied directly (relative error of the running
 *   product: k times the factor's, plus 2.25u per product); larger counts
 *   enter through log(phi_t) from phi_t - 1, computed without cancellation
 *   (cos x - 1 = -2 sin^2(x/2)) and with separate bounds on its two parts
 *   (dpa_cx_log1p_parts), times k.  The final sum carries its own a-posteriori
 *   bound.  The resulting absolute error in F is about 1e-16,
 *   so deltas well below ~1e-12 lose relative accuracy (the result's gap
 *   shows it); tails beyond the window use the Chernoff bounds directly.
 */
#include "exact/exact_rr_het_internal.h"

/* e^arg in long double, with *err >= its absolute error (expl's E_F plus
 * the rounding of arg, u |arg| + u) */
static long double exp_err(long double arg, long double *err)
{
    long double v = expl(arg);
    *err = (E_F + U * fabsl(arg) + U) * v;
    return v;
}

/* Psi_j (with its error bound) for the law at frequency j.  cm1, sn:
 * scratch of nm entries each (cos - 1 and sin of 2 pi j m / N per distinct
 * position) */
cx dpa_het_law_psi(const het_law *L, uint64_t j, cx *cm1, cx *sn)
{
    for (size_t i = 0; i < L->nm; i++)
        dpa_cx_cis_m1(dpa_het_mulmod(j, (uint64_t)L->mv[i], L->N), L->N, &cm1[i], &sn[i]);
    /* running product P (relative error exponent R), log part Lam */
    long double Pr = 1, Pi = 0, R = 0;
    cx Lam = {0, 0, 0};
    int degenerate = 0;
    for (size_t i = 0; i < L->nt; i++) {
        const het_type *ty = &L->ty[i];
        int nc = ty->w2 > 0 ? 2 : 1;
        /* ep = phi_t - 1 = sum_c w_c ((cos - 1) + i t_c sin), with separate
         * bounds on the errors of its parts (w exact, t_c E_F, products and
         * sums u each) */
        cx ep = {0, 0, 0};
        long double exr = 0, exi = 0;
        for (int cc = 0; cc < nc; cc++) {
            long double w = cc ? ty->w2 : 1 - ty->w2; /* exact */
            const cx *a = &cm1[ty->ix[cc]], *s = &sn[ty->ix[cc]];
            long double t = ty->t[cc];
            long double re = w * a->re, im = w * (t * s->re);
            ep.re += re;
            ep.im += im;
            exr += w * a->e + U * fabsl(re);
            exi += w * (fabsl(t) * s->e + (E_F + 4 * U) * fabsl(t * s->re));
        }
        exr = (exr + U * fabsl(ep.re)) * ERRSLACK;
        exi = (exi + U * fabsl(ep.im)) * ERRSLACK;
        ep.e = exr + exi;
        cx z = {1 + ep.re, ep.im, 0};
        z.e = ep.e + U * fabsl(z.re);
        long double zm = sqrtl(z.re * z.re + z.im * z.im);
        if (ty->k <= HET_POW_MAX) {
            long double zl = zm * (1 - 4 * U);
            if (!(zl > 64 * z.e) || degenerate) { degenerate = 1; continue; }
            /* z^k by binary powering, then into P */
            long double br = z.re, bi = z.im, rr = 1, ri = 0;
            unsigned long k = (unsigned long)ty->k;
            int mults = 0;
            if (k == 1) {
                rr = br;
                ri = bi;
                k = 0;
            }
            while (k) {
                if (k & 1) {
                    long double tr = rr * br - ri * bi;
                    ri = rr * bi + ri * br;
                    rr = tr;
                    mults++;
                }
                k >>= 1;
                if (k) {
                    long double tr = br * br - bi * bi;
                    bi = 2 * br * bi;
                    br = tr;
                    mults++;
                }
            }
            long double tr = Pr * rr - Pi * ri;
            Pi = Pr * ri + Pi * rr;
            Pr = tr;
            R += ty->k * (z.e / zl) + (mults + 1) * 2.25L * U;
            if (!(fabsl(Pr) + fabsl(Pi) > 0x1p-16000L)) degenerate = 1;
        } else {
            cx lg = dpa_cx_log1p_parts(ep.re, ep.im, exr, exi);
            if (!isfinite(lg.e) || degenerate) { degenerate = 1; continue; }
            cx kl = dpa_cx_scale(lg, (long double)ty->k, 0);
            Lam = dpa_cx_add(Lam, kl);
        }
    }
    /* the window shift e^{-i w_j s_lo} */
    uint64_t sl = (uint64_t)(L->s_lo >= 0 ? L->s_lo : -L->s_lo) % L->N;
    uint64_t rs = dpa_het_mulmod(j % L->N, sl, L->N);
    if (L->s_lo > 0 && rs) rs = L->N - rs; /* -s_lo */
    cx c1, s1;
    dpa_cx_cis_m1(rs, L->N, &c1, &s1);
    long double ar = Lam.im, red = remainderl(ar, 2 * PI_L);
    long double ang_err = U * (fabsl(ar) + 8) * 2;
    long double cE = expl(Lam.re), sa, ca;
    sincosl(red, &sa, &ca);
    /* e^{Lam} e^{-i w s_lo}: exp E_F + u |Lam.re|, the reduced angle
     * ang_err, sincos E_F each */
    long double er = cE * ca, ei = cE * sa;
    long double sr = 1 + c1.re, si = s1.re;
    long double qr = er * sr - ei * si, qi = er * si + ei * sr;
    long double pr = Pr * qr - Pi * qi, pi_ = Pr * qi + Pi * qr;
    R += Lam.e + E_F + U * fabsl(Lam.re) + ang_err + 2 * E_F + (c1.e + s1.e + U) + 4 * 2.25L * U;
    cx psi = {pr, pi_, 0};
    if (degenerate || !(R < 0.125L)) {
        /* no relative bound: 0, with |Psi_j| <= prod (|z| + e)^k as error */
        long double bnd = 0;
        for (size_t i = 0; i < L->nt; i++) {
            const het_type *ty = &L->ty[i];
            long double er = 0, re = 1, im = 0;
            for (int cc = 0; cc < (ty->w2 > 0 ? 2 : 1); cc++) {
                long double w = cc ? ty->w2 : 1 - ty->w2;
                const cx *a = &cm1[ty->ix[cc]], *s = &sn[ty->ix[cc]];
                re += w * a->re;
                im += w * ty->t[cc] * s->re;
                er += w * (a->e + s->e + E_F) + 4 * U;
            }
            long double zb = (sqrtl(re * re + im * im) + er * ERRSLACK) * (1 + 8 * U);
            bnd += ty->k * logl(fminl(1, zb));
        }
        psi.re = psi.im = 0;
        psi.e = fminl(1, expl(bnd) * (1 + 8 * E_F));
        return psi;
    }
    psi.e = sqrtl(pr * pr + pi_ * pi_) * (1 + 4 * U) * expm1l(R * ERRSLACK) * ERRSLACK + TINY;
    return psi;
}

/* 1 - w and 1 - w e^{-h} at frequency j (w = e^{2 pi i j / N}) */
void dpa_het_law_om(const het_law *L, uint64_t j, cx *om1, cx *om1h)
{
    cx cm, sn;
    dpa_cx_cis_m1(j, L->N, &cm, &sn); /* cos w - 1, sin w */
    om1->re = -cm.re;
    om1->im = -sn.re;
    om1->e = cm.e + sn.e;
    /* 1 - e^{-h} w = (-expm1(-h) cos w - (cos w - 1)) - i e^{-h} sin w */
    cx cw = {1 + cm.re, 0, cm.e + U * fabsl(1 + cm.re)};
    cx a = dpa_cx_scale(cw, L->em, E_F * L->em);
    cx b = {-cm.re, 0, cm.e};
    cx re = dpa_cx_add(a, b);
    cx im = dpa_cx_scale(sn, -L->eh, E_F * L->eh);
    om1h->re = re.re;
    om1h->im = im.re;
    om1h->e = re.e + im.e;
}

/* Enclosure [*lo, *hi] of sum_{s in Z} A(s) g(s) for the law's A and the
 * functional g (kind 0: (1 - e^{x - s h})_+, x = t; kind 1: 1{s >= x};
 * kind 2: 1{s <= x}; kind 3: e^{t - s h} 1{s >= x}; x in loss units for
 * kind 0, lattice units for the others).  The window sum by the Fourier
 * identity (the top of this file), then the dropped frequencies (drop) and the
 * mass outside the window (tail), scaled by the functional's size: kinds
 * 0-2 are monotone with values in [0, 1]; kind 3 has values in [0, c0] and
 * total variation <= 2 c0, so its G_j are at most 1.5 c0 N / j (Abel). */
void dpa_het_law_sum(const het_law *L, int kind, long double x, double t, long double *hi, long double *lo)
{
    long double Nl = (long double)L->N, s_lo = (long double)L->s_lo;
    long double r0 = 0, c0 = 0, c0e = 0, n = 0;
    cx T0;          /* the j = 0 term (G_0) */
    int none = 0;   /* g vanishes on the window */
    if (kind == 0) {
        long double r = floorl(x / L->h) + 1; /* first lattice point with r h > x */
        r0 = r <= s_lo ? 0 : r - s_lo;
        c0 = exp_err(x - (s_lo + r0) * L->h, &c0e); /* the argument is in (-h, 0] when r > s_lo */
        if (r0 >= Nl) none = 1;
        else {
            n = Nl - r0;
            /* G_0 = n - c0 (1 - e^{-hn}) / (1 - e^{-h}) */
            long double q = expm1l(-L->h * n) / expm1l(-L->h), v = c0 * q;
            T0.re = n - v;
            T0.im = 0;
            T0.e = c0e * q + (3 * E_F + 4 * U) * v + U * fabsl(T0.re);
        }
    } else if (kind == 1) {
        r0 = x - s_lo;
        if (r0 < 0) r0 = 0;
        if (r0 >= Nl) none = 1;
        else T0 = (cx){Nl - r0, 0, 0};
    } else if (kind == 3) {
        r0 = x - s_lo;
        if (r0 < 0) r0 = 0; /* the whole window; g up to e^{t - xh} below it */
        c0 = exp_err((long double)t - (s_lo + r0) * L->h, &c0e);
        if (r0 >= Nl) none = 1;
        else {
            /* G_0 = c0 (1 - e^{-hn}) / (1 - e^{-h}) */
            n = Nl - r0;
            long double q = expm1l(-L->h * n) / expm1l(-L->h), v = c0 * q;
            T0 = (cx){v, 0, c0e * q + (3 * E_F + 4 * U) * v};
        }
    } else {
        r0 = x - s_lo; /* the last index kept */
        if (r0 >= Nl) r0 = Nl - 1;
        if (r0 < 0) none = 1;
        else T0 = (cx){r0 + 1, 0, 0};
    }
    long double C = 0, E = 0;
    if (!none) {
        /* kind 2: sum_{rho <= r0} w^rho = -(w^{r0 + 1} - 1) / (1 - w) */
        uint64_t ri = (uint64_t)(kind == 2 ? r0 + 1 : r0);
        long double eh_n = kind == 0 || kind == 3 ? -expm1l(-L->h * n) : 0; /* 1 - e^{-hn} */
        long double S = 0, Sabs = 0, Se = 0;
        for (size_t i = 0; i < L->ns; i++) {
            const het_sig *g = &L->sig[i];
            cx cm, sn;
            dpa_cx_cis_m1(dpa_het_mulmod(g->j, ri, L->N), L->N, &cm, &sn);
            cx num = {cm.re, sn.re, cm.e + sn.e}; /* w^{r} - 1 */
            cx G = dpa_cx_div(num, g->om1);
            if (kind == 2) G.re = -G.re, G.im = -G.im;
            else if (kind == 0 || kind == 3) {
                /* c0 (w^{r0} - e^{-hn}) / (1 - w e^{-h}) */
                cx nb = {num.re + eh_n, num.im, num.e + E_F * eh_n + U * fabsl(num.re + eh_n)};
                cx B = dpa_cx_div(nb, g->om1h);
                B = dpa_cx_scale(B, c0, c0e);
                G = kind == 0 ? dpa_cx_sub(G, B) : B;
            }
            if (!isfinite(G.e)) { S = 0; Se = INFINITY; break; }
            long double tr = g->psi.re * G.re + g->psi.im * G.im;
            long double ab = fabsl(g->psi.re * G.re) + fabsl(g->psi.im * G.im);
            S += tr;
            Sabs += ab;
            Se += cx_l1(g->psi) * G.e + g->psi.e * (cx_l1(G) + G.e) + 2 * U * ab;
        }
        /* the partial sums: u of the running |sum| each, <= ns u Sabs */
        Se += (long double)L->ns * U * Sabs;
        long double tot = T0.re + 2 * S;
        C = tot / Nl;
        E = ((T0.e + 2 * Se + 2 * U * (fabsl(T0.re) + 2 * fabsl(S))) / Nl + U * fabsl(C)) * ERRSLACK;
    }
    /* the largest value of g: on the window (Abel, the dropped frequencies)
     * and outside it (the tail) */
    long double gmax = 1, gout = 1;
    if (kind == 3) {
        gmax = c0 * (1 + E_F + 2 * U);
        long double a2 = (long double)t - x * L->h; /* e^{t - xh} >= g everywhere */
        gout = fmaxl(gmax, expl(a2) * (1 + E_F + U * fabsl(a2) + U));
    }
    long double extra = (gout * L->tail + (kind == 3 ? 1.5L * gmax : 1) * L->drop) * ERRSLACK;
    *hi = C + E + extra;
    *lo = C - E - extra;
    /* beyond the window: the Chernoff table */
    if (kind == 0) {
        long double top = (s_lo + Nl) * L->h; /* above every window point */
        if (x >= top) *hi = fminl(*hi, dpa_het_law_chern(L, floorl(x / L->h) + 1, 1));
    } else if (kind == 1 || kind == 3) {
        if (x >= s_lo + Nl) *hi = fminl(*hi, gout * dpa_het_law_chern(L, x, 1));
    } else if (x < s_lo) *hi = fminl(*hi, dpa_het_law_chern(L, x, 0));
    if (*hi > gout) *hi = gout;
    if (!(*lo > 0)) *lo = 0;
}
