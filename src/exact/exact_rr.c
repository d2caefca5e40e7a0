/* Closed-form accountant for compositions of (eps, delta)-DP steps
 * (exact_rr.h).  SPDX-License-Identifier: GPL-3.0-or-later
 *
 * LT Thm 4.6 (unrolled) / LT Cor 4.7: the composition of k_i copies of
 * RR_{eps_i, delta_i} has loss +inf with probability 1 - P,
 * P = prod_j (1 - delta_j)^{k_j}, and otherwise S = sum_i eps_i (2 Y_i - k_i)
 * with independent Y_i ~ Bin(k_i, p_i), p_i = e^{eps_i} / (1 + e^{eps_i}):
 *
 *   delta(t) = 1 - P + P F(t),  F(t) = sum_{y: S(y) > t} pmf(y) (1 - e^{t - S(y)}).
 *
 * The same holds for "two-point" factors (section 1b): pairs whose loss
 * takes two finite values w_hi > w_lo plus +inf (A-mass only) and -inf
 * (B-mass only), e.g. a Poisson-subsampled pure/RR step in either direction.
 * Their k-fold composition has S = Y w_hi + (k - Y) w_lo, Y ~ Bin(k, p),
 * p = A(w_hi) / (A(w_hi) + A(w_lo)), and A(+inf) enters P; RR is the case
 * w = +-eps, p = e^eps / (1 + e^eps), and stays on its own code path
 * (bit-identical results to the RR-only version).
 *
 * Every reported bound is certified: each floating-point operation below
 * carries an explicit error bound, derived here, and the bounds are pushed
 * outwards by them.  Notation: u = 2^-64 (unit round-off of the x87 long
 * double; LDBL_EPSILON / 2 in general), E_F = 8 u = 4 ulp, the error bound
 * assumed for glibc's long double expl, expm1l, log1pl, logl, sinhl, tanhl
 * (glibc's libm-test-ulps lists at most 1-4 ulp for them on x86-64, in every
 * rounding mode; tests/test_exact_rr.c measures them against MPFR).  Basic
 * operations (+ - * /) are correctly rounded: relative error <= u.
 *
 * 1. One binomial Bin(k, p), p = e^eps / (1 + e^eps) (dist_build).
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
 *
 * 2. Evaluation on a lattice cell (dist_eval).  For x with
 *    S(s - 1) <= x < S(s), S(y) = eps (2y - k) (two-point: y w_hi + (k - y) w_lo),
 *    u = x - S(s) in [-2 eps, 0) (two-point: [-D, 0)):
 *      V(x) = sum_{y >= s} w(y) (1 - e^{x - S(y)})
 *           = w(s) (-expm1(u)) + [A(s + 1) - e^u E2 G(s + 1)].
 *    The bracket's terms have factors >= 1 - E2, so its cancellation is
 *    bounded, and the first term, which alone is small just below a lattice
 *    point, keeps full relative accuracy through expm1.  The cell is found
 *    with exact signs: xmab (an error-free product and sum) gives x - S(y)
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
 * 3. Several distinct eps (outer): a recursion over the windows of all but
 *    the largest-window binomial, which is evaluated by dist_eval at the
 *    remaining threshold x = t - sum eps_i (2 y_i - k_i) (two-point:
 *    y w_hi + (k - y) w_lo, two products and a sum).  x is rounded (its
 *    error dx is tracked: u per product, sum and difference), and V is
 *    non-increasing in x, so V(x_true) lies in [V_lo(x + dx), V_hi(x - dx)]
 *    (both points rounded outwards).  The weights' product has relative error
 *    sum theta_i + u per product; sums of positive terms add u of each
 *    partial sum.  Mass outside any window is at most sum_i T_i / Z_i, added
 *    to the upper bound (union bound; the integrand is in [0, 1]).
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
 *
 * 5. eps(delta): a bracketing search (dpa_bisect, then steps to adjacent
 *    doubles) on the certified evaluations, compared with delta without
 *    rounding their sums (sum3: TwoSum with a bound on the rest): the upper end has delta_up <= delta (so eps <= it), the lower
 *    end delta_lo > delta (so eps > it, delta being non-increasing).  +inf
 *    for both only when delta < the lower end of the +inf mass.
 *
 * 6. Cost.  A window has ~ 2 * 39 sqrt(k p q) points (TAU); the build walks
 *    it once; one delta evaluation costs O(bk) for one eps (twice both with
 *    two-point factors: c and c->rep_lo).  A single RR eps
 *    whose window would exceed 2^27 points (k ~ 1e13 and more) uses the
 *    Chernoff fallback (`loose`, exact_rr.h): for lam > 0,
 *    (1 - e^{t - s})_+ <= e^{lam (s - t)} lam^lam / (1 + lam)^(1 + lam) (the
 *    maximum over s > t), so F(t) <= exp(k kappa(lam) - lam t + lam log lam
 *    - (1 + lam) log(1 + lam)), kappa(lam) = log E[e^{lam S_1}]
 *    = log cosh(lam eps) + log1p(tanh(eps/2) tanh(lam eps)), evaluated in
 *    long double with its error bound (E_F per function, u per operation,
 *    doubled) added to the exponent, minimised over lam by golden section
 *    (any lam is valid).  Lower bound: the larger of a partial lattice sum
 *    (at most 2^14 terms from the first point above t, or from 2^13 below
 *    the mode; the first pmf bounded below by Stirling's formula with
 *    Robbins' remainder bounds and Loader's deviance form, including the
 *    effect of p's rounding; then the ratio recurrence rounded down) and
 *    1 - P(S <= t) - e^t P(S < -t) with Chernoff bounds on both tails
 *    (kappa(-lam) = kappa(lam - 1): the pair is symmetric).  For t < 0,
 *    F(t) = 1 - e^t + e^t F(-t) (symmetry).
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "exact/exact_rr.h"
#include "model/leaves.h"
#include "num/num.h"

#if LDBL_MANT_DIG < 64 || LDBL_MIN_EXP > -16300
#error "exact_rr.c needs a long double with at least 64 mantissa bits and a 15-bit exponent"
#endif

#define U (0.5L * LDBL_EPSILON)
#define E_F (8 * U)
#define ERRSLACK (1 + 0x1p-20L)
#define C1 ((3 * U + E_F) * ERRSLACK)
#define TAU 0x1p-1120L
#define TINY 0x1p-16000L
#define LN2L 0.693147180559945309417232121458176568L
#define PI2L 6.283185307179586476925286766559005768L
/* checkpoints per binomial (64 bytes each: 16 MB) */
#define MAX_CKPT ((double)(1 << 18))
/* window points summed at build time, per composition */
#define MAX_STEPS ((double)(1 << 27))
#define MAX_BK 1024
/* the window edge estimate: log(TAU) minus a margin, so that it covers the
 * real window */
#define EST_DROP (1120 * 0.6931471805599453 + 24)
/* eps(delta) bracket: relative width of about two ulps */
#define EPS_XTOL_REL 4.5e-16
/* one eps: sum the terms directly when the table form's error bound exceeds
 * DIRECT_REL of the value (at most DIRECT_MAX terms) */
#define DIRECT_REL 1e-14L
#define DIRECT_MAX 32768
/* Chernoff fallback: lattice terms summed for the lower bound */
#define CH_TERMS 16384

/* ---------------- helpers ---------------- */

/* e^arg in long double, with *err >= its absolute error (expl's E_F plus
 * the rounding of arg, u |arg| + u) */
static long double exp_err(long double arg, long double *err)
{
    long double v = expl(arg);
    *err = (E_F + U * fabsl(arg) + U) * v;
    return v;
}

/* w(y + 1) / w(y) and w(z - 1) / w(z); the same expressions everywhere */
static long double ratio_up(const dpa_rr_dist *d, double y)
{
    return ((long double)(d->k - y) * d->E) / ((long double)y + 1);
}

static long double ratio_dn(const dpa_rr_dist *d, double z)
{
    return (long double)z / ((long double)(d->k - z + 1) * d->E);
}

/* x - a b with the exact sign and relative error <= u (1 + 4u) (no fmal:
 * glibc's long double fmal switches the rounding mode, which costs more than
 * the rest of an evaluation).  Dekker's product with Veltkamp's split
 * (C = 2^32 + 1 for the 64-bit significand) gives a b = hi + lo exactly;
 * TwoSum gives x - hi = s + r exactly.  If x and hi are within a factor 2
 * (same sign), s is exact (Sterbenz), r = 0 and the result fl(s - lo) is
 * x - a b correctly rounded.  Otherwise |x - hi| >= |hi| / 2, so
 * |r - lo| <= u |s| + u |hi| <= 3.01 u |s|: the sign is that of s, and the
 * two roundings of s + fl(r - lo) cost at most u (1 + 4u) relative.  (Round
 * to nearest, no overflow or underflow; ISO C mode, so no contraction.) */
static long double xmab(long double x, long double a, long double b)
{
    const long double C = 0x1p32L + 1;
    long double p = a * b;
    long double t = C * a, ah = t - (t - a), al = a - ah;
    t = C * b;
    long double bh = t - (t - b), bl = b - bh;
    long double lo = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
    long double sm = x - p, bb = sm - x, r = (x - (sm - bb)) + (-p - bb);
    return sm + (r - lo);
}

/* Error-free transformations (round to nearest, no overflow or underflow):
 * a b = *p + *e (Dekker/Veltkamp as in xmab), a + b = *s + *e (TwoSum). */
static void two_prod(long double a, long double b, long double *p, long double *e)
{
    const long double C = 0x1p32L + 1;
    long double pp = a * b;
    long double t = C * a, ah = t - (t - a), al = a - ah;
    t = C * b;
    long double bh = t - (t - b), bl = b - bh;
    *p = pp;
    *e = ((ah * bh - pp) + ah * bl + al * bh) + al * bl;
}

static void two_sum(long double a, long double b, long double *s, long double *e)
{
    long double ss = a + b, bb = ss - a;
    *s = ss;
    *e = (a - (ss - bb)) + (b - bb);
}

/* The exact sum of n <= 8 long doubles, rounded towards zero to 64 bits:
 * the sign is exact, the relative error below 2^-63 = 2u, and an exact 0 is
 * returned as 0.  A two's-complement integer in units of the smallest
 * term's last bit (at most 33000 bits for the long double exponent range);
 * used only when gen_gap's fast path cannot certify its result. */
#define XS_LIMBS 520
static long double exact_sum(const long double *v, int n)
{
    uint64_t L[XS_LIMBS];
    uint64_t mm[8];
    int ee[8], neg[8], emin = INT_MAX, emax = INT_MIN, nz = 0;
    for (int i = 0; i < n; i++) {
        ee[i] = INT_MIN;
        if (v[i] == 0) continue;
        int ex;
        long double f = frexpl(fabsl(v[i]), &ex); /* |v| = f 2^ex, f in [1/2, 1) */
        mm[i] = (uint64_t)ldexpl(f, 64);       /* exact: 64-bit significand */
        ee[i] = ex - 64;                        /* |v| = mm 2^ee */
        neg[i] = v[i] < 0;
        if (ee[i] < emin) emin = ee[i];
        if (ee[i] > emax) emax = ee[i];
        nz++;
    }
    if (!nz) return 0;
    int nl = (emax - emin + 64 + 8) / 64 + 2;
    if (nl > XS_LIMBS) nl = XS_LIMBS; /* not reached: long double exponents span < 32900 bits */
    memset(L, 0, (size_t)nl * sizeof *L);
    for (int i = 0; i < n; i++) {
        if (ee[i] == INT_MIN) continue;
        int sh = ee[i] - emin, li = sh / 64, off = sh % 64;
        uint64_t lo = mm[i] << off, hi = off ? mm[i] >> (64 - off) : 0;
        if (!neg[i]) {
            uint64_t c;
            L[li] += lo;
            c = L[li] < lo;
            uint64_t add = hi + c; /* hi < 2^63 when off > 0, so no overflow */
            for (int j = li + 1; j < nl && add; j++) {
                L[j] += add;
                add = L[j] < add;
            }
        } else {
            uint64_t b = L[li] < lo;
            L[li] -= lo;
            uint64_t sub = hi + b;
            for (int j = li + 1; j < nl && sub; j++) {
                uint64_t bj = L[j] < sub;
                L[j] -= sub;
                sub = bj;
            }
        }
    }
    int sgn = (L[nl - 1] >> 63) != 0;
    if (sgn) { /* negate */
        uint64_t c = 1;
        for (int j = 0; j < nl; j++) {
            L[j] = ~L[j] + c;
            c = c && L[j] == 0;
        }
    }
    int top = nl - 1;
    while (top >= 0 && L[top] == 0) top--;
    if (top < 0) return 0;
    int hb = 63;
    while (!((L[top] >> hb) & 1)) hb--;
    /* the 64 bits from the highest set bit down (truncated) */
    uint64_t m = L[top] << (63 - hb);
    if (hb < 63 && top > 0) m |= L[top - 1] >> (hb + 1);
    long double r = ldexpl((long double)m, top * 64 + hb - 63 + emin);
    return sgn ? -r : r;
}

/* x - (a1 b1 + a2 b2): sign exact, relative error <= 2u.  Fast path: the
 * products and the first two sums are error-free (two_prod, two_sum), so
 * x - a1 b1 - a2 b2 = s2 + C exactly, C = r1 + r2 - e1 - e2; C is summed
 * with error <= gamma_3 sum |.| <= 3.01 u sig, sig = |r1| + |r2| + |e1| + |e2|
 * (computed sig within 3.01u of the true one), and v = fl(s2 + c) adds
 * u |v|.  When 3.02 sig <= 2^-10 |v| the error is <= u (1 + 2^-10) |v|, so
 * the sign of v is exact and the relative error <= u (1 + 2^-9).  Otherwise
 * (x within ~1e-16 relative of a lattice point, or an exact tie) the exact
 * sum. */
static long double gen_gap(long double x, long double a1, long double b1, long double a2, long double b2)
{
    long double p1, e1, p2, e2, s1, r1, s2, r2;
    two_prod(a1, b1, &p1, &e1);
    two_prod(a2, b2, &p2, &e2);
    two_sum(x, -p1, &s1, &r1);
    two_sum(s1, -p2, &s2, &r2);
    long double c = ((r1 + r2) - e1) - e2;
    long double v = s2 + c;
    long double sig = (fabsl(r1) + fabsl(r2)) + (fabsl(e1) + fabsl(e2));
    if (3.02L * sig <= 0x1p-10L * fabsl(v)) return v;
    long double t[5] = {x, -p1, -e1, -p2, -e2};
    return exact_sum(t, 5);
}

/* x - S(y), S(y) = eps (2y - k) (RR) or y w_hi + (k - y) w_lo: sign exact,
 * relative error <= d->grel (RR: u (1 + 4u); general: 2u) */
static long double gap(const dpa_rr_dist *d, long double x, double y)
{
    if (!d->gen) return xmab(x, (long double)d->eps, 2.0L * y - (long double)d->k);
    return gen_gap(x, (long double)d->whi, (long double)y, (long double)d->wlo, (long double)d->k - (long double)y);
}

/* The first y in [lo, hi] with S(y) > x (x < S(hi) required), by exact signs */
static double locate(const dpa_rr_dist *d, long double x)
{
    if (!d->gen) {
        long double gs = floorl((x / d->eps + d->k) * 0.5L) + 1;
        double s = !(gs > d->lo) ? d->lo : !(gs < d->hi) ? d->hi : (double)gs;
        while (s > d->lo && gap(d, x, s - 1) < 0) s -= 1;
        while (!(gap(d, x, s) < 0)) s += 1; /* ends at hi at the latest */
        return s;
    }
    /* S(y) = k w_lo + y D: a guess, a few exact steps, else bisection */
    long double gs = d->D > 0 ? floorl((x - (long double)d->k * d->wlo) / d->D) + 1 : d->hi;
    double s = !(gs > d->lo) ? d->lo : !(gs < d->hi) ? d->hi : (double)gs;
    int n = 0, ok = 1;
    while (s > d->lo && gap(d, x, s - 1) < 0) {
        s -= 1;
        if (++n > 4) { ok = 0; break; }
    }
    if (ok)
        while (!(gap(d, x, s) < 0)) {
            s += 1;
            if (++n > 4) { ok = 0; break; }
        }
    if (ok) return s;
    /* invariant: S(b) > x; S(a) <= x or a = lo - 1 */
    double a = d->lo - 1, b = d->hi;
    while (b - a > 1) {
        double mid = floor(0.5 * (a + b));
        if (gap(d, x, mid) < 0) b = mid;
        else a = mid;
    }
    return b;
}

typedef struct acc { long double A, H, Ae, He; } acc;

/* Add w (relative error <= th) in front of the suffix sums (section 1). */
static void acc_add(acc *s, const dpa_rr_dist *d, long double w, long double th)
{
    long double wt = w * th;
    s->A += w;
    s->Ae += wt + U * s->A;
    s->H = w + d->E2 * s->H;
    s->He = d->E2 * s->He + wt + (2 * U + d->e2r) * s->H;
}

/* ---------------- window estimate (sizing only) ---------------- */

/* x log(x / M) + M - x (M > 0, x >= 0), for sizing: plain double */
static double bd0d(double x, double M)
{
    if (x == 0) return M;
    double v = (x - M) / M;
    if (fabs(v) < 0.01) {
        double s = 0, p = v * v;
        for (int n = 2; n < 12; n++, p *= -v) s += p / (n * (n - 1.0));
        return M * s;
    }
    return M * ((1 + v) * log1p(v) - v);
}

typedef struct est_ctx { double k, Mp, Mq, ref; } est_ctx;

/* approximate log pmf(y) (Stirling, without constants) */
static double est_logpmf(const est_ctx *c, double y)
{
    double v = -(bd0d(y, c->Mp) + bd0d(c->k - y, c->Mq));
    if (y > 0 && y < c->k) v -= 0.5 * log(y * ((c->k - y) / c->k));
    return v;
}

/* Mode and window estimate [*lo, *hi] of Bin(k, p), e = log(p / (1 - p))
 * (RR: eps); conservative (the real window is at most a few points wider
 * only when k is tiny). */
static void window_est(double k, double e, double *md, double *lo, double *hi)
{
    double q = 1 / (1 + exp(e)), p = 1 / (1 + exp(-e));
    double m = floor((k + 1) * p);
    if (m > k) m = k;
    *md = m;
    if (k <= 64) { *lo = 0; *hi = k; return; }
    if (!(q > 0)) { *lo = fmax(0, k - 2); *hi = k; return; }
    est_ctx c = {k, k * p, k * q, 0};
    double ref = est_logpmf(&c, m);
    double a, b;
    /* upper edge */
    if (ref - est_logpmf(&c, k) <= EST_DROP) *hi = k;
    else {
        a = m; b = k; /* f(a) high, f(b) low */
        while (b - a > 1) {
            double mid = floor(0.5 * (a + b));
            if (ref - est_logpmf(&c, mid) <= EST_DROP) a = mid; else b = mid;
        }
        *hi = fmin(k, b + 2);
    }
    if (ref - est_logpmf(&c, 0) <= EST_DROP) *lo = 0;
    else {
        a = 0; b = m;
        while (b - a > 1) {
            double mid = floor(0.5 * (a + b));
            if (ref - est_logpmf(&c, mid) <= EST_DROP) b = mid; else a = mid;
        }
        *lo = fmax(0, a - 2);
    }
}

/* ---------------- leaves as factors, grouping ---------------- */

/* One leaf as a factor of the composition, in one direction. */
typedef struct fac {
    int kind;                    /* 0: (eps, delta) leaf, 1: atom-only two-point pair */
    double k;                    /* count */
    double eps, delta;           /* kind 0 */
    int nfin;                    /* kind 1: finite atoms with mass (0, 1 or 2) */
    double whi, wlo, lahi, lalo; /* kind 1; nfin 1: wlo = whi, lalo = -inf (p = 1) */
    double lainf;                /* kind 1: log A(+inf), -inf if none */
} fac;

/* relative bound on the representation error of a stored log mass la
 * (exp(la) vs the true mass; e^eta - 1 <= eta (1 + 2^-20) for eta < 2^-20) */
static long double rep_err(double la)
{
    if (isinf(la)) return 0;
    return (long double)DPA_RR_REP_ULPS * 0x1p-53L * (1 + fabsl((long double)la)) * ERRSLACK;
}

/* kind 1 from an atom-only pair in direction dir; 0 if outside the domain */
static int atoms_fac(const dpa_pair *p, int dir, fac *f)
{
    if (!p || p->kind != DPA_PAIR_ATOMS || p->lca != -INFINITY || p->lcb != -INFINITY || p->slack_hi != 0 ||
        p->slack_lo != 0)
        return 0;
    double fw[2], fl[2];
    int nf = 0, ninf = 0;
    f->kind = 1;
    f->lainf = -INFINITY;
    for (size_t i = 0; i < p->natoms; i++) {
        const dpa_atom *at = &p->atoms[i];
        double w = dir ? -at->w : at->w, la = dir ? at->lb : at->la, lb = dir ? at->la : at->lb;
        if (isnan(w) || isnan(la) || isnan(lb)) return 0;
        if (w == INFINITY) {
            if (lb != -INFINITY) return 0;
            if (la != -INFINITY) {
                if (ninf++) return 0;
                f->lainf = la;
            }
        } else if (w == -INFINITY) {
            if (la != -INFINITY) return 0;
        } else {
            if (la == -INFINITY && lb == -INFINITY) continue;
            if (la == -INFINITY || lb == -INFINITY || nf == 2 || !(fabs(w) <= 1e300)) return 0;
            fw[nf] = w;
            fl[nf++] = la;
        }
    }
    f->nfin = nf;
    if (nf == 0) return f->lainf == 0; /* all of A at +inf */
    if (nf == 1) {
        f->whi = f->wlo = fw[0];
        f->lahi = fl[0];
        f->lalo = -INFINITY;
        return 1;
    }
    /* distinct beyond the losses' representation ranges (section 1b) */
    if (!(fabs(fw[0] - fw[1]) > 64 * 0x1p-53 * fmax(fabs(fw[0]), fabs(fw[1])))) return 0;
    int h = fw[1] > fw[0];
    f->whi = fw[h];
    f->lahi = fl[h];
    f->wlo = fw[1 - h];
    f->lalo = fl[1 - h];
    return 1;
}

/* The leaves as factors in direction dir (atoms_ok: two-point pairs
 * allowed); *valid = 0 if some leaf is outside the domain.  NULL only when
 * out of memory. */
static fac *collect(const dpa_leafset *L, int dir, int atoms_ok, int *valid)
{
    fac *f = malloc((L->n ? L->n : 1) * sizeof *f);
    if (!f) return NULL;
    *valid = atoms_ok || L->all_rr;
    for (size_t i = 0; i < L->n; i++) {
        const dpa_leaf *l = &L->v[i];
        double k = l->count;
        memset(&f[i], 0, sizeof f[i]);
        f[i].k = k;
        if (!(k >= 1 && isfinite(k))) *valid = 0;
        if (!atoms_ok || !isnan(l->rr_eps)) {
            double e = l->rr_eps, dl = l->rr_delta;
            f[i].kind = 0;
            f[i].eps = e;
            f[i].delta = dl;
            if (!(e >= 0 && isfinite(e) && dl >= 0 && dl <= 1)) *valid = 0;
        } else if (l->inner || l->kind == DPA_EV_PRIVACY_LOSS || l->kind == DPA_EV_PRIVACY_PROFILE || !atoms_fac(l->pair, dir, &f[i]) || k != floor(k)) {
            /* (privacy_loss tables: their masses are data, not the
             * representation of a known pair within DPA_RR_REP_ULPS: the
             * PLD method composes them as given) */
            *valid = 0;
        }
    }
    return f;
}

typedef struct grp {
    int gen;                          /* 0: RR, 1: two-point */
    double eps, whi, wlo, lahi, lalo; /* RR: eps (whi = eps, wlo = -eps) */
    double whi0, wlo0;                /* two-point: the stored losses (before shift_losses) */
    double lam;                       /* log(p / (1 - p)) (sizing) */
    double k, elo, ehi, md;
} grp;

static int cmp_grp(const void *a, const void *b)
{
    double wa = ((const grp *)a)->ehi - ((const grp *)a)->elo, wb = ((const grp *)b)->ehi - ((const grp *)b)->elo;
    return (wa > wb) - (wa < wb);
}

/* the grouping key of factor f (0 if it is no factor: eps 0, no finite atom) */
static int group_key(const fac *f, grp *key)
{
    memset(key, 0, sizeof *key);
    if (f->kind == 0) {
        double e = f->eps;
        if (!(e > 0 && isfinite(e))) return 0;
        key->gen = 0;
        key->eps = key->whi = key->lam = e;
        key->wlo = -e;
    } else {
        if (f->nfin == 0) return 0;
        key->gen = 1;
        key->eps = NAN;
        key->whi = key->whi0 = f->whi;
        key->wlo = key->wlo0 = f->wlo;
        key->lahi = f->lahi;
        key->lalo = f->lalo;
        key->lam = f->nfin == 1 ? INFINITY : f->lahi - f->lalo;
    }
    return 1;
}

/* the order of keys (0 iff equal in the sense of ==; no NaN among the
 * compared fields), ties by position */
typedef struct gkey { grp key; size_t i; } gkey;

static int dcmp(double a, double b) { return (a > b) - (a < b); }

static int cmp_gkey(const void *pa, const void *pb)
{
    const gkey *a = pa, *b = pb;
    int c = (a->key.gen > b->key.gen) - (a->key.gen < b->key.gen);
    if (!c) {
        if (a->key.gen) {
            c = dcmp(a->key.whi, b->key.whi);
            if (!c) c = dcmp(a->key.wlo, b->key.wlo);
            if (!c) c = dcmp(a->key.lahi, b->key.lahi);
            if (!c) c = dcmp(a->key.lalo, b->key.lalo);
        } else c = dcmp(a->key.eps, b->key.eps);
    }
    if (!c) c = (a->i > b->i) - (a->i < b->i);
    return c;
}

/* the groups by linear search: in the order of their first factor, the
 * counts summed in factor order */
static size_t group_linear(const fac *f, size_t n, grp *g)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        grp key;
        if (!group_key(&f[i], &key)) continue;
        size_t j = 0;
        while (j < m && !(g[j].gen == key.gen &&
                          (key.gen ? g[j].whi == key.whi && g[j].wlo == key.wlo && g[j].lahi == key.lahi &&
                                         g[j].lalo == key.lalo
                                   : g[j].eps == key.eps)))
            j++;
        if (j == m) g[m++] = key;
        g[j].k += f[i].k;
    }
    return m;
}

/* the same groups, the same order and the same sums, with the duplicates
 * found by sorting (O(n log n)); -1 when out of memory */
static long long group_sorted(const fac *f, size_t n, grp *g)
{
    gkey *ks = malloc((n ? n : 1) * sizeof *ks);
    size_t *rep = malloc((n ? n : 1) * sizeof *rep), *gid = malloc((n ? n : 1) * sizeof *gid);
    grp *keyof = malloc((n ? n : 1) * sizeof *keyof);
    long long m = -1;
    if (ks && rep && gid && keyof) {
        size_t nv = 0;
        for (size_t i = 0; i < n; i++) {
            rep[i] = SIZE_MAX;
            if (group_key(&f[i], &keyof[i])) ks[nv].key = keyof[i], ks[nv++].i = i;
        }
        qsort(ks, nv, sizeof *ks, cmp_gkey);
        /* rep[i]: the first factor with i's key */
        for (size_t a = 0; a < nv;) {
            size_t b = a + 1;
            gkey x = ks[a];
            x.i = 0;
            for (; b < nv; b++) {
                gkey y = ks[b];
                y.i = 0;
                if (cmp_gkey(&x, &y)) break;
            }
            for (size_t c = a; c < b; c++) rep[ks[c].i] = ks[a].i;
            a = b;
        }
        m = 0;
        for (size_t i = 0; i < n; i++) {
            if (rep[i] == SIZE_MAX) continue;
            if (rep[i] == i) {
                gid[i] = (size_t)m;
                g[m++] = keyof[i];
            } else gid[i] = gid[rep[i]];
            g[gid[i]].k += f[i].k;
        }
    }
    free(ks);
    free(rep);
    free(gid);
    free(keyof);
    return m;
}

/* Distinct eps > 0 and distinct two-point factors with total counts, sorted
 * by window size (largest last).  Returns m. */
static size_t group(const fac *f, size_t n, grp *g)
{
    long long ms = n > 64 ? group_sorted(f, n, g) : -1;
    size_t m = ms >= 0 ? (size_t)ms : group_linear(f, n, g);
    for (size_t j = 0; j < m; j++) window_est(g[j].k, g[j].lam, &g[j].md, &g[j].elo, &g[j].ehi);
    qsort(g, m, sizeof *g, cmp_grp);
    return m;
}

static double bk_of(const grp *g)
{
    return fmax(1.0, ceil((g->ehi - g->elo + 1) / MAX_CKPT));
}

/* 0: not applicable, 1: tables, 2: Chernoff fallback (one eps, RR only) */
static int plan(const grp *g, size_t m)
{
    double steps = 0;
    for (size_t j = 0; j < m; j++) steps += g[j].ehi - g[j].elo + 1;
    if (m <= 1) return steps <= MAX_STEPS ? 1 : !g[0].gen ? 2 : 0;
    if (!(steps <= MAX_STEPS)) return 0;
    double cost = bk_of(&g[m - 1]);
    for (size_t j = 0; j + 1 < m; j++) cost *= g[j].ehi - g[j].elo + 1;
    return cost <= DPA_RR_MAX_LATTICE;
}

/* plan of L in direction dir (0 when outside the domain or out of memory) */
static int plan_of(const dpa_leafset *L, int dir, int atoms_ok)
{
    int valid, pl = 0;
    fac *f = collect(L, dir, atoms_ok, &valid);
    grp *g = malloc((L->n ? L->n : 1) * sizeof *g);
    if (f && g && valid) pl = plan(g, group(f, L->n, g));
    free(f);
    free(g);
    return pl;
}

int dpa_rr_applicable(const dpa_leafset *L)
{
    if (!L || !L->all_rr) return 0;
    return plan_of(L, 0, 0) > 0;
}

int dpa_rr_applicable_dir(const dpa_leafset *L)
{
    if (!L) return 0;
    return plan_of(L, 0, 1) > 0 && plan_of(L, 1, 1) > 0;
}

/* ---------------- building one binomial's tables ---------------- */

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
        long double eta = rep_err(g->lahi) + rep_err(g->lalo);
        long double m = (eta + 4 * U * fabsl(dl) + 4 * U * eta) * ERRSLACK;
        d->E = expl(dl + (side > 0 ? m : -m));
    }
    d->E2 = expl(-D);
    d->e2r = (E_F + U * fminl(D, 11400)) * ERRSLACK;
    d->e2br = d->e2r;
    d->grel = 2 * U;
}

/* section 1 */
static dpa_status dist_build(dpa_rr_dist *d, const grp *g, int side, double *budget, dpa_error *err)
{
    double k = g->k;
    dist_params(d, g, side);
    d->bk = bk_of(g);
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

/* weight at y (bk = 1 only: every point is a checkpoint) */
static long double dist_w(const dpa_rr_dist *d, double y)
{
    return y >= d->md ? d->up[(size_t)(y - d->md)].w : d->dn[(size_t)(d->md - y) - 1].w;
}

/* section 2: enclosure [*vlo, *vhi] of V(x) = sum_{window} w(y) (1 - e^{x - S(y)})_+
 * (weights relative to w(md) = 1), x exact */
static void dist_eval(const dpa_rr_dist *d, long double x, int direct, long double *vhi, long double *vlo)
{
    if (!(gap(d, x, d->hi) < 0)) { *vhi = *vlo = 0; return; }
    double s = locate(d, x);
    long double u = gap(d, x, s);
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
        for (long long i = 1; i < nb; i++) buf[i] = buf[i - 1] * ratio_up(d, c0 + (double)(i - 1));
        for (double y = end; y > s; y -= 1) acc_add(&a, d, buf[(long long)(y - c0)], (y - d->md) * d->c1);
        ws = buf[(long long)(s - c0)];
    } else {
        long long j = ((long long)(d->md - s) + (long long)d->bk - 1) / (long long)d->bk - 1;
        const dpa_rr_ckpt *ck = j ? &d->dn[j - 1] : &d->up[0];
        double c0 = d->md - (double)j * d->bk;
        a = (acc){ck->A, ck->G, ck->Ae, ck->Ge};
        long double w = ck->w;
        for (double y = c0 - 1;; y -= 1) {
            w *= ratio_dn(d, y + 1);
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
            long double term = w * -expm1l(gap(d, x, y));
            sum += term;
            es += term * (d->gen ? th + rX + U : th + E_F + 3 * U) + U * sum;
            if (y >= d->hi) { rem = 0; break; }
            if (y > d->md) {
                long double rb = ratio_up(d, y) * rinc;
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
static void outer(const dpa_rr_comp *c, size_t i, long double x, long double dx, long double *vhi, long double *vlo)
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
        outer(c, i + 1, xn, dxn, &h, &l);
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

/* ---------------- Chernoff fallback (one eps, huge count) ---------------- */

/* log cosh x, x >= 0 (x = lam eps, itself rounded: relative u) */
static long double lcosh(long double x, long double *err)
{
    long double v;
    if (x < 0.5L) {
        long double sh = sinhl(0.5L * x);
        v = log1pl(2 * sh * sh);
        *err = (3 * E_F + 6 * U) * v;
    } else {
        v = x - LN2L + log1pl(expl(-2 * x));
        *err = (2 * E_F + 4 * U) * (x + 1);
    }
    *err += 2 * U * x * fminl(1, x);
    return v;
}

/* kappa(lam) = log E_A[e^{lam S_1}] for one step, lam >= -1/2:
 * log cosh(lam eps) + log1p(tanh(eps/2) tanh(lam eps)) */
static long double kappa(const dpa_rr_dist *d, long double lam, long double *err)
{
    long double x = fabsl(lam) * d->eps, el;
    long double v = lcosh(x, &el);
    long double a = d->th * tanhl(x), ra = 2 * E_F + 3 * U, L2;
    if (lam >= 0) {
        L2 = log1pl(a);
        el += (3 * E_F + 4 * U) * L2;
    } else {
        L2 = log1pl(-a);
        el += E_F * fabsl(L2) + ra * a / (1 - a) * (1 + 4 * U);
    }
    v += L2;
    *err = el + U * fabsl(v);
    return v;
}

/* log of a Chernoff bound, allowance included:
 * mode 0: F(t) <= E[e^{lam S}] e^{-lam t} lam^lam / (1 + lam)^(1 + lam)
 * mode 1: P(S <= t) <= E[e^{-lam S}] e^{lam t}
 * mode 2: P(S < -t) <= E[e^{-lam S}] e^{-lam t} */
static long double chern_log(const dpa_rr_dist *d, int mode, long double t, long double lam)
{
    long double ek, kk;
    if (mode == 0) kk = kappa(d, lam, &ek);
    else if (lam <= 0.5L) kk = kappa(d, -lam, &ek);
    else kk = kappa(d, lam - 1, &ek); /* kappa(-lam) = kappa(lam - 1) (symmetric pair); lam - 1 exact */
    long double A1 = d->k * kk, A2 = lam * t, A3 = 0, A4 = 0;
    long double e = d->k * ek + U * fabsl(A1) + U * fabsl(A2);
    if (mode == 0) {
        A3 = lam * logl(lam);
        A4 = (1 + lam) * log1pl(lam);
        e += (E_F + 2 * U) * fabsl(A3) + (E_F + 3 * U) * fabsl(A4);
    }
    long double v = A1 + (mode == 1 ? A2 : -A2) + A3 - A4;
    e += 3 * U * (fabsl(A1) + fabsl(A2) + fabsl(A3) + fabsl(A4));
    return v + 2 * e;
}

/* minimum over lam > 0 (golden section on log lam; any lam is valid) */
static long double chern_min(const dpa_rr_dist *d, int mode, long double t)
{
    const long double gr = 0.6180339887498948482L;
    long double a = -60, b = 40, best = INFINITY;
    long double x1 = b - gr * (b - a), x2 = a + gr * (b - a);
    long double f1 = chern_log(d, mode, t, expl(x1)), f2 = chern_log(d, mode, t, expl(x2));
    for (int i = 0; i < 100; i++) {
        if (!(f1 > f2)) { /* keep [a, x2] */
            b = x2; x2 = x1; f2 = f1;
            x1 = b - gr * (b - a);
            f1 = chern_log(d, mode, t, expl(x1));
        } else {
            a = x1; x1 = x2; f1 = f2;
            x2 = a + gr * (b - a);
            f2 = chern_log(d, mode, t, expl(x2));
        }
        if (f1 < best) best = f1;
        if (f2 < best) best = f2;
    }
    return best;
}

/* x log(x / M) + M - x with an absolute error bound (M > 0, x >= 1);
 * NaN outside |x/M - 1| <= 1/4 (the caller then gives up) */
static long double bd0(long double x, long double M, long double *err)
{
    /* M phi(v), phi(v) = (1 + v) log1p(v) - v = sum_{n >= 2} (-v)^n / (n (n - 1)):
     * v carries 2u relative (phi'(v) v / phi(v) <= 2.2: ~5u), each of the
     * < 60 terms and partial sums a few u (96 u of sum |terms| covers all),
     * the rest after a term below 2^-70 of the sum is below 2^-66 of it */
    long double v = (x - M) / M;
    if (!(fabsl(v) <= 0.25L)) return NAN;
    long double s = 0, p = v * v, sa = 0;
    for (int n = 2; n < 200; n++, p *= -v) {
        long double term = p / ((long double)n * (n - 1));
        s += term;
        sa += fabsl(term);
        if (fabsl(term) < 0x1p-70L * fabsl(s)) break;
    }
    long double r = M * s;
    *err = M * (96 * U * sa + 0x1p-66L * fabsl(s)) + U * fabsl(r);
    return r;
}

/* certified lower bound on pmf(y) of Bin(k, p), 1 <= y <= k (Stirling with
 * Robbins' bounds 1/(12n + 1) < log n! - log(sqrt(2 pi n) (n/e)^n) < 1/(12n)) */
static long double pmf_lo(const dpa_rr_dist *d, double y)
{
    long double k = d->k;
    if (y >= d->k) { /* p^k = exp(-k log1p(e^{-eps})) */
        long double l = k * log1pl(expl(-(long double)d->eps));
        return expl(-l - (3 * E_F + 2 * U) * l) * (1 - 2 * E_F);
    }
    long double p = 1 / (1 + expl(-(long double)d->eps));
    long double Mp = k * p, Mq = k - Mp; /* Mq exact (Sterbenz: Mp >= k/2) */
    if (!(Mq > 0) || !(Mp > 0)) return 0;
    long double eta = (E_F + 3 * U) * ERRSLACK; /* |Mp/k - p| <= eta p */
    long double e1, e2;
    long double b = bd0(y, Mp, &e1) + bd0(k - y, Mq, &e2);
    long double arg = k / (PI2L * ((long double)y * (k - y)));
    long double lg = 0.5L * logl(arg);
    long double e3 = 0.5L * (E_F * fabsl(logl(arg)) + 5 * U);
    long double r1 = 1 / (12 * k + 1), r2 = 1 / (12 * (long double)y), r3 = 1 / (12 * (k - y));
    long double Rlo = r1 - r2 - r3, e4 = 3 * U * (r1 + r2 + r3);
    long double qp = Mq / k;
    long double dp = (fabsl(y - Mp) * eta / qp + k * eta * eta * (1 + (1 / qp) * (1 / qp))) * 1.1L;
    if (isnan(b)) return 0; /* far from the mode: no bound needed there */
    long double L = -b + lg + Rlo;
    long double eL = e1 + e2 + e3 + e4 + dp + 4 * U * (fabsl(b) + fabsl(lg) + fabsl(Rlo));
    return expl(L - eL * ERRSLACK) * (1 - 2 * E_F);
}

/* lower bound on F(t), t >= 0: the first CH_TERMS lattice terms above t */
static long double chern_lattice_lo(const dpa_rr_dist *d, long double t)
{
    long double gs = floorl((t / d->eps + d->k) * 0.5L) + 1;
    if (!(gs <= d->k)) return 0;
    double s = gs < 1 ? 1 : (double)gs;
    while (s > 1 && gap(d, t, s - 1) < 0) s -= 1;
    while (s <= d->k && !(gap(d, t, s) < 0)) s += 1;
    if (s > d->k) return 0;
    /* any subset of the points with S > t gives a lower bound: start no
     * lower than half the terms below the mode */
    double md = floor((d->k + 1) / (1 + exp(-d->eps))) - CH_TERMS / 2;
    if (s < md) s = md;
    long double w = pmf_lo(d, s), sum = 0, es = 0;
    for (int j = 0; j < CH_TERMS && s <= d->k; j++, s += 1) {
        long double X = -expm1l(gap(d, t, s));
        long double term = w * X * (1 - 2 * E_F - 8 * U);
        sum += term;
        es += U * sum;
        if (s >= d->k) break;
        long double r = ratio_up(d, s);
        if (r < 1 && w * r / (1 - r) < 0x1p-70L * sum) break;
        w *= r * (1 - 2 * d->c1); /* r: 2u + E_F, two products: u each */
    }
    long double v = sum - es * ERRSLACK;
    return v > 0 ? v : 0;
}

/* F bounds (t >= 0) in the fallback */
static void chern_F(const dpa_rr_dist *d, long double t, long double *fhi, long double *flo)
{
    long double m0 = chern_min(d, 0, t);
    *fhi = m0 >= 0 ? 1 : fminl(1, expl(m0) * (1 + 2 * E_F));
    long double m1 = chern_min(d, 1, t), m2 = chern_min(d, 2, t);
    long double l2 = t + m2;
    l2 += U * (fabsl(t) + fabsl(m2));
    long double c = 1 - expl(m1) * (1 + 2 * E_F) - expl(l2) * (1 + 2 * E_F);
    c -= 4 * U;
    long double lat = chern_lattice_lo(d, t);
    *flo = fmaxl(0, fmaxl(c, lat));
}

/* ---------------- F(t) and delta(t) ---------------- */

/* [*flo, *fhi] contains F(t) = E[(1 - e^{t - S})_+] */
static void F_bounds(const dpa_rr_comp *c, double t, long double *fhi, long double *flo)
{
    long double X = -expm1l((long double)t); /* 1 - e^t */
    long double Xlo = X > 0 ? X * (1 - E_F - 4 * U) : 0, Xhi = X > 0 ? X * (1 + E_F + 4 * U) : 0;
    int beyond, below;
    if (isinf(t)) beyond = t > 0, below = t < 0;
    else if (c->m == 0) beyond = t >= 0, below = t <= 0;
    else if (c->m == 1 && !c->d[0].gen) {
        beyond = xmab(t, c->d[0].eps, c->d[0].k) >= 0;  /* t >= eps k (exact sign) */
        below = xmab(t, -c->d[0].eps, c->d[0].k) <= 0;  /* t <= -eps k */
    } else if (c->m == 1) {
        beyond = !(gap(&c->d[0], t, c->d[0].k) < 0); /* t >= k w_hi (exact sign) */
        below = 0;
    } else {
        beyond = t >= c->Lrest[0];
        below = c->sym && -(long double)t >= c->Lrest[0];
    }
    if (beyond) { *fhi = *flo = 0; return; }
    if (below) { *fhi = fminl(1, Xhi); *flo = Xlo; return; }
    if (c->loose) {
        const dpa_rr_dist *d = &c->d[0];
        if (t >= 0) chern_F(d, t, fhi, flo);
        else {
            /* symmetric pair: F(t) = 1 - e^t + e^t F(-t) */
            long double h, l, Et = expl((long double)t);
            chern_F(d, -(long double)t, &h, &l);
            *fhi = (Xhi + Et * (1 + E_F + 4 * U) * h) * (1 + 8 * U);
            *flo = (Xlo + Et * (1 - E_F - 4 * U) * l) * (1 - 8 * U);
        }
    } else {
        long double vh, vl, zlo = 1, zhi = 1, tails = 0;
        outer(c, 0, t, 0, &vh, &vl);
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

/* delta(t) in [inf_lo + y_lo, inf_up + y_up] (exact sums of the long
 * doubles), and delta(t) >= fl_ (1 - e^t for t < 0, else 0) */
typedef struct dparts { long double inf_up, y_up, inf_lo, y_lo, fl_; } dparts;

/* need: 1 the upper parts, 2 the lower ones, 3 both */
static void delta_parts(const dpa_rr_comp *c, double t, int need, dparts *p)
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
    delta_parts(c, t, 3, &p);
    long double u_ = p.y_up > 0 ? (p.inf_up + p.y_up) * (1 + 4 * U) : p.inf_up;
    long double l_ = p.y_lo > 0 ? (p.inf_lo + p.y_lo) * (1 - 4 * U) : p.inf_lo;
    *du = fminl(1, u_);
    *dl = fmaxl(0, fmaxl(l_, p.fl_));
}

/* a + b - c with an error bound *err: TwoSum(a, -c) = s1 + e1 and
 * TwoSum(s1, b) = s2 + e2 are exact, so a + b - c = s2 + e1 + e2 and the two
 * remaining roundings cost at most u^2 (|s1| + |s2|) (1 + u) + u |r| */
static long double sum3(long double a, long double b, long double c, long double *err)
{
    long double s1 = a - c, z = s1 - a, e1 = (a - (s1 - z)) + (-c - z);
    long double s2 = s1 + b;
    z = s2 - s1;
    long double e2 = (s1 - (s2 - z)) + (b - z);
    long double r = s2 + (e1 + e2);
    *err = 2 * U * U * (fabsl(s1) + fabsl(s2)) + 2 * U * fabsl(r);
    return r;
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

/* ---------------- eps(delta) ---------------- */

typedef struct sctx { const dpa_rr_comp *c; double target; int side; } sctx;

/* side 0: delta_up(t) - target (< 0: t >= eps certified);
 * side 1: delta_lo(t) - target (> 0: t < eps certified) */
static double g_side(double t, void *p)
{
    const sctx *s = p;
    dparts d;
    delta_parts(s->c, t, s->side ? 2 : 1, &d);
    /* compared with the target without rounding the bounds: near the +inf
     * mass, delta exceeds it by a tiny P F, which an ulp of the sum would
     * swamp; the sign is certified by sum3's error bound */
    long double v, e;
    if (s->side == 0) {
        v = sum3(d.inf_up, d.y_up, s->target, &e) + e;
    } else {
        v = sum3(d.inf_lo, d.y_lo, s->target, &e) - e;
        long double f = d.fl_ - s->target; /* sign exact */
        if (f > v) v = f;
    }
    if (v > 0) return fmax((double)v, DBL_MIN);
    return fmin((double)v, -DBL_MIN); /* no exact zeros: dpa_bisect keeps strict signs */
}

static double solve(const dpa_rr_comp *c, double target, int side)
{
    sctx s = {c, target, side};
    double tmax = fmin(c->tmax, DBL_MAX);
    if (g_side(0.0, &s) <= 0) return 0.0;
    if (g_side(tmax, &s) > 0) return INFINITY; /* side 1: delta > 1 - P >= ... > target everywhere */
    double a, b;
    if (dpa_bisect(g_side, &s, 0.0, tmax, 0.0, EPS_XTOL_REL, &a, &b)) return side ? 0.0 : tmax;
    /* the search stops within two ulps: step to adjacent doubles where the
     * certified evaluation allows it (a few evaluations) */
    for (int i = 0; i < 4; i++) {
        double n = side ? nextafter(a, INFINITY) : nextafter(b, 0.0);
        if (!(n > a && n < b)) break;
        double v = g_side(n, &s);
        if (side ? !(v > 0) : !(v <= 0)) break;
        if (side) a = n;
        else b = n;
    }
    return side ? a : b;
}

void dpa_rr_epsilon(const dpa_rr_comp *c, double delta, double *up, double *lo)
{
    if (!(delta >= 0) || (long double)delta < c->inf_lo) { /* certainly below the +inf mass */
        *up = *lo = INFINITY;
        return;
    }
    *up = solve(c, delta, 0);
    *lo = solve(c, delta, 1);
    if (*lo > *up) *lo = *up;
    *lo += 0.0;
}

/* ---------------- build / free ---------------- */

void dpa_rr_free(dpa_rr_comp *c)
{
    if (!c) return;
    if (c->d)
        for (size_t i = 0; i < c->m; i++) {
            free(c->d[i].up);
            free(c->d[i].dn);
        }
    free(c->d);
    free(c->Lrest);
    if (c->rep_lo) {
        dpa_rr_free(c->rep_lo);
        free(c->rep_lo);
    }
    memset(c, 0, sizeof *c);
}

/* section 4: the +inf mass */
static void inf_mass(dpa_rr_comp *c, const fac *f, size_t nf)
{
    long double lk = 0, alo = 0, ahi = 0;
    size_t n = 0, ones = 0, na = 0;
    int full = 0;
    double single = 0;
    for (size_t i = 0; i < nf; i++) {
        double k = f[i].k;
        if (f[i].kind == 1) { /* A(+inf) = exp(lainf) within rep_err */
            if (f[i].nfin == 0) full = 1;
            if (f[i].lainf == -INFINITY) continue;
            na++;
            long double a = expl((long double)f[i].lainf), ea = (E_F + 4 * U + rep_err(f[i].lainf)) * ERRSLACK;
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

/* the tables of groups g[0..m-1] (pl: plan) with two-point ratios at side
 * +1 / -1 of their ranges; the +inf mass from the factors f */
static dpa_status build_one(dpa_rr_comp *c, const fac *f, size_t nf, const grp *g, size_t m, int pl, int side,
                            dpa_error *err)
{
    inf_mass(c, f, nf);
    c->m = m;
    c->sym = 1;
    for (size_t i = 0; i < m; i++)
        if (g[i].gen) c->sym = 0;
    c->d = calloc(m ? m : 1, sizeof *c->d);
    c->Lrest = calloc(m + 1, sizeof *c->Lrest);
    if (!c->d || !c->Lrest) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    if (c->sym) {
        /* Lrest[i] >= sum_{j >= i} eps_j k_j: the product, the sum and the
         * scaling each round (relative u): (1 - u)^3 (1 + 4u) > 1 */
        for (size_t i = m; i-- > 0;)
            c->Lrest[i] = (c->Lrest[i + 1] + (long double)g[i].eps * g[i].k) * (1 + 4 * U);
    } else {
        /* Lrest[i] >= sum_{j >= i} w_hi,j k_j (any signs): each rounded
         * result moved up by an ulp */
        for (size_t i = m; i-- > 0;) {
            long double p = nextafterl((long double)g[i].whi * g[i].k, INFINITY);
            c->Lrest[i] = nextafterl(c->Lrest[i + 1] + p, INFINITY);
        }
    }
    c->tmax = fmax(0, dpa_ld_up(c->Lrest[0]));
    c->loose = pl == 2;
    dpa_status st = DPA_OK;
    double budget = 2 * MAX_STEPS;
    for (size_t i = 0; i < m && !st; i++) {
        dpa_rr_dist *d = &c->d[i];
        if (c->loose) { /* one RR eps (plan) */
            d->eps = g[i].eps;
            d->whi = g[i].eps;
            d->wlo = -g[i].eps;
            d->k = g[i].k;
            d->E = expl((long double)d->eps);
            d->th = tanhl(0.5L * d->eps);
            d->c1 = C1;
            d->grel = U;
        } else st = dist_build(d, &g[i], side, &budget, err);
    }
    return st;
}

/* the two-point losses moved to the top (side 1) or the bottom (side -1) of
 * their representation ranges |w_true - w| <= DPA_RR_LOSS_ULPS u_d |w|:
 * dw = fl(|w| c) >= |w| c (1 - u), fl(w +- dw) is within half an ulp of
 * w +- dw, and the next double beyond it is beyond w +- |w| c (u dw is far
 * below half an ulp) */
static double shift_one(double w, int side)
{
    double dw = fabs(w) * (DPA_RR_LOSS_ULPS * 0x1p-53 * (1 + 0x1p-20));
    if (dw == 0) return w;
    return side > 0 ? nextafter(w + dw, INFINITY) : nextafter(w - dw, -INFINITY);
}

static void shift_losses(grp *g, size_t m, int side)
{
    for (size_t i = 0; i < m; i++) {
        if (!g[i].gen) continue;
        g[i].whi = shift_one(g[i].whi0, side);
        g[i].wlo = shift_one(g[i].wlo0, side);
    }
}

static dpa_status build(dpa_rr_comp *c, const dpa_leafset *L, int dir, int atoms_ok, dpa_error *err)
{
    int valid;
    fac *f = collect(L, dir, atoms_ok, &valid);
    grp *g = malloc((L->n ? L->n : 1) * sizeof *g);
    if (!f || !g) {
        free(f);
        free(g);
        return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    }
    size_t m = valid ? group(f, L->n, g) : 0;
    int pl = valid ? plan(g, m) : 0;
    dpa_status st;
    if (!pl) st = dpa_error_set(err, DPA_EUNSUPPORTED, "exact method: this composition is outside the method's "
                                                        "limits; use method pld");
    else {
        /* two-point ratios with a representation error: upper bounds at the
         * top of every range (c), lower bounds at the bottom (c->rep_lo) */
        int rep = 0;
        for (size_t i = 0; i < m; i++)
            if (g[i].gen) rep = 1;
        if (rep) shift_losses(g, m, 1);
        st = build_one(c, f, L->n, g, m, pl, 1, err);
        if (!st && rep) {
            shift_losses(g, m, -1);
            c->rep_lo = calloc(1, sizeof *c->rep_lo);
            st = c->rep_lo ? build_one(c->rep_lo, f, L->n, g, m, pl, -1, err)
                           : dpa_error_set(err, DPA_ENOMEM, "out of memory");
        }
    }
    free(f);
    free(g);
    return st;
}

dpa_status dpa_rr_build(dpa_rr_comp *c, const dpa_leafset *L, dpa_error *err)
{
    return build(c, L, 0, 0, err);
}

dpa_status dpa_rr_build_dir(dpa_rr_comp *c, const dpa_leafset *L, int dir, dpa_error *err)
{
    if (dir != 0 && dir != 1) return dpa_error_set(err, DPA_EINVAL, "exact method: direction must be 0 or 1");
    return build(c, L, dir, 1, err);
}

/* ====================================================================== *
 * 7. Heterogeneous epsilons (dpa_rr_het, exact_rr.h): a certified bracket *
 *    from two lattice pairs, one dominating and one dominated.            *
 * ====================================================================== *
 *
 * The composition of k_j copies of RR_{eps_j} (j over the distinct eps > 0;
 * the delta_i enter P as in section 4) has F(t) = E_A[(1 - e^{t - S})_+].
 * On the lattice h Z (h a power of 2):
 *
 * Upper pair (domination).  Let a = floor(eps / h) h, b = a + h.  The
 *   "revealed coin" mixture Mix = (1 - lam) RR_a (+) lam RR_b (the coin is
 *   part of the output, with the same law under A and B) has outputs
 *   (coin, sign); forgetting the coin maps it onto RR_eps exactly when
 *   (1 - lam) p_a + lam p_b = p_eps (p_x = e^x / (1 + e^x)): then the
 *   A-mass of "+" is p_eps and its B-mass (1 - lam) q_a + lam q_b = q_eps.
 *   So RR_eps is a post-processing (garbling) of Mix and, by data
 *   processing, H_alpha(RR_eps) <= H_alpha(Mix) for every alpha >= 0; a
 *   larger lam only moves mixture weight from RR_a to RR_b, of which RR_a is
 *   a garbling (LT Thm 4.5), so any lam' >= lam works.  Applied to every
 *   coordinate, the garbling maps the product of the mixtures onto the
 *   product of the RR steps, so the composition of the mixtures bounds F
 *   from above.  Every mixture output has likelihood ratio e^{+-a} or
 *   e^{+-b}, so its loss is h times the lattice sum S_up of the components'
 *   positions (+-m or +-(m + 1)).
 *     lam = (p_eps - p_a) / (p_b - p_a)
 *         = sinh(d/2) / sinh(h/2) e^{(h - d)/2} (1 + e^{-b}) / (1 + e^{-eps}),
 *   d = eps - a (exact), computed with relative error <= 5 E_F + 6u,
 *   enlarged by 5 E_F + 8u and rounded up to a multiple of 2^-60 (so that
 *   1 - lam is exact).  eps on the lattice (d = 0) keeps RR_a itself.
 *
 * Lower pair (garbling).  Output only S_lo = sum over the steps of
 *   mhat X, X = +-1 the RR step's sign and mhat an integer near eps / h
 *   (the nearest; in runs of epsilons sharing floor(eps / h) with
 *   HET_DITHER_K or more steps in all, floor or floor + 1 by error
 *   diffusion, law_types): a function of the true composition's output, so
 *   the pair of its laws (A_lo, B_lo) is dominated (data processing) and,
 *   for every s0,
 *     F(t) >= A_lo(S_lo >= s0) - e^t B_lo(S_lo >= s0).
 *   The best s0 is searched (a pattern search; the bound is unimodal in
 *   s0); any s0 is valid.  The second term is evaluated under the tilted
 *   law B_1(s) = B_lo(s) e^{hs} / M, M = E_B[e^{h S_lo}] =
 *   prod (cosh(mhat h - eps/2) / cosh(eps/2))^k, a product law again (each
 *   sign +1 with probability (1 + tanh(mhat h - eps/2)) / 2):
 *   e^t B_lo(S_lo >= s0) = M E_{B_1}[e^{t - h S} 1{S >= s0}], a functional
 *   of size F itself, so no factor e^t multiplies the evaluation error.
 *
 * Both bounds are second order in h: the mixture adds about h^2 lam (1 - lam)
 *   of loss variance per step, the garbling loses the conditional spread of
 *   the residual sum of (eps - mhat h) X, about h^2 / 12 per step (h^2 / 4
 *   dithered); the eps bracket is about (v_up + v_lo) (1 + z / sd) / 2 for
 *   variances v and a Gaussian-like composition with standard deviation sd
 *   (z ~ 4.75 at delta 1e-6), the relative delta bracket (1 + z / sd) times
 *   that, so h is chosen from that estimate and reduced (a posteriori) until
 *   the bracket meets the target (DPA_RR_HET_REL or the accuracy option).
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
 *   at most 2 tau (1 + ln((N - 1) / 2)) in all ("drop").  |Psi_j| is
 *   bounded over whole intervals of j by the exact suprema of the two-point
 *   moduli |cos x + i t sin x|^2 = 1 - (1 - t^2) sin^2 x over the interval
 *   in two stages.  First, by concavity (Jensen for sqrt, 1 - x <= e^{-x}),
 *     log |Psi(w)| <= -(1/4) sum_c W_c (1 - cos(2 w m_c)) = -(V - D(w)) / 4,
 *   W_c = k_t w_c (1 - t_c^2) summed per position into V_m, V = sum V_m,
 *   D(w) = sum_m V_m cos(2 w m): a trigonometric polynomial, sampled at
 *   w_l = pi l / M by one radix-2 FFT of size M (error <= 32 u log2(M)
 *   sqrt(M) V, Higham Thm 24.2 with accurate twiddles) and bounded between
 *   samples by |D'| <= 2 sum_m m V_m; M is chosen so that this slack is at
 *   most V / 4.  Then every lattice frequency in a sample interval that
 *   this does not certify goes to the exact suprema of the two-point moduli
 *   |cos x + i t sin x|^2 = 1 - (1 - t^2) sin^2 x over intervals of j (the
 *   minimum of sin^2 over a range of x, from exact integer phases),
 *   |phi_t| <= sum_c w_c |phi_c|, halving failing intervals down to single
 *   frequencies, which are then evaluated ("significant"): the main lobe
 *   near j = 0 (about 28 frequencies for any count, as the window spans
 *   about 19 standard deviations), the lattice parity peak near j = N/2 and
 *   any resonances.
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
 *   (log1p_parts), times k.  The final sum carries its own a-posteriori
 *   bound.  The resulting absolute error in F is about 1e-16,
 *   so deltas well below ~1e-12 lose relative accuracy (the result's gap
 *   shows it); tails beyond the window use the Chernoff bounds directly.
 */

#define PI_L 3.141592653589793238462643383279502884L
/* dropped frequencies: |Psi_j| certified below 2^-64; per-tail mass left
 * outside a window: 2^-64 (both enter the bounds as at most ~2^-58 in
 * all, far below the ~1e-16 evaluation floor of the Fourier sum; smaller
 * values only widen the window and the main lobe) */
#define HET_LOG_TAU (-64 * LN2L)
#define HET_LOG_TAUW (-64 * LN2L)
/* windows with at most this many frequencies j >= 1 are summed over all of them */
#define HET_DIRECT_J 2048
/* counts up to this are raised to their power by products, larger ones
 * enter through their logarithm (relative error k times the factor's) */
#define HET_POW_MAX 64
/* budget of elementary evaluations (type x frequency or type x interval)
 * per lattice build, about 1 s; a build that needs more is refused and a
 * coarser lattice kept */
#define HET_WORK_MAX 1e8
/* the FFT of the certification bound: at most 2^21 samples (32 MB) */
#define HET_FFT_MAX (1u << 21)
/* significant frequencies per law (every evaluation of a bound costs one
 * term per significant frequency, and an eps query some hundreds of
 * evaluations): a law that needs more is refused and a coarser lattice
 * used */
#define HET_SIG_MAX (1u << 15)
/* lattice positions stay below 2^61 in magnitude (sums in int64) */
#define HET_POS_MAX 0x1p61
/* the largest eps the heterogeneous method takes.  Above about 2000 the
 * lattice step it settles on (thousands) leaves a useless bracket, and
 * near 8000 the step reached 2^15, where the mixture weight of law_types
 * overflowed to NaN (0 * inf) and the large step dropped out of the
 * dominating law (upper bound 0 for a delta near 1; found by an
 * independent lattice oracle, fixed there too); larger epsilons go to PLD */
#define HET_EPS_MAX 1e3
/* step counts from which a run of epsilons with one floor(eps / h) is
 * dithered between two positions in the garbled laws */
#define HET_DITHER_K 64
/* refinements of the lattice per query */
#define HET_REFINE_MAX 6
/* Chernoff table for tails beyond the window: lam_i = lam* 4^i */
#define HET_NLAM 3

__extension__ typedef unsigned __int128 het_u128;

/* a complex value and a bound e on the modulus of its error */
typedef struct cx { long double re, im, e; } cx;

static long double cx_l1(cx a) { return fabsl(a.re) + fabsl(a.im); }

static cx cx_add(cx a, cx b)
{
    cx r = {a.re + b.re, a.im + b.im, 0};
    r.e = a.e + b.e + U * cx_l1(r);
    return r;
}

static cx cx_sub(cx a, cx b)
{
    cx r = {a.re - b.re, a.im - b.im, 0};
    r.e = a.e + b.e + U * cx_l1(r);
    return r;
}

/* a times a real s with absolute error es */
static cx cx_scale(cx a, long double s, long double es)
{
    cx r = {a.re * s, a.im * s, 0};
    r.e = fabsl(s) * a.e + es * (cx_l1(a) + a.e) + U * cx_l1(r);
    return r;
}

/* a / b: the true quotient is within (da + |q| db) / (|b| - db) of a / b;
 * rounding <= 8u |a| / |b|
 * (|b| >= max(|re|, |im|)); e = inf when b's error reaches its modulus */
static cx cx_div(cx a, cx b)
{
    long double d = b.re * b.re + b.im * b.im;
    cx q = {(a.re * b.re + a.im * b.im) / d, (a.im * b.re - a.re * b.im) / d, 0};
    long double bl = fmaxl(fabsl(b.re), fabsl(b.im));
    if (!(bl > 2 * b.e) || !(d > 0)) {
        q.re = q.im = 0;
        q.e = INFINITY;
        return q;
    }
    q.e = (a.e + cx_l1(q) * b.e) / (bl - b.e) + 8 * U * cx_l1(a) / bl;
    return q;
}

/* residue (a b) mod n, a, b >= 0, n > 0 */
static uint64_t mulmod(uint64_t a, uint64_t b, uint64_t n)
{
    return (uint64_t)(((het_u128)a * b) % n);
}

/* For the phase 2 pi r / n (0 <= r < n, n odd, n < 2^62): cos - 1 and sin,
 * from the half angle x = pi r' / n, r' = r reduced to [-(n-1)/2, (n-1)/2]:
 * cos(2x) - 1 = -2 sin^2 x, sin(2x) = 2 sin x cos x.  x is taken to
 * y = x - q pi/2, |y| <= pi/4, q in {-1, 0, 1}, by the exact integer
 * d = 2 r' - q n (y = pi d / (2n): one constant and two roundings, 3.01u
 * relative), so sinl and cosl stay off glibc's slow argument reduction;
 * sin y and cos y each carry E_F + 3.01u |y tan y| <= E_F + 3u relative,
 * hence so do sin x and cos x (they are +-sin y, +-cos y). */
static void cis_m1(uint64_t r, uint64_t n, cx *cm1, cx *sn)
{
    int64_t rr = r > n / 2 ? -(int64_t)(n - r) : (int64_t)r;
    int q = 0;
    if (4 * (het_u128)(rr < 0 ? -rr : rr) > n) q = rr < 0 ? -1 : 1;
    int64_t d = 2 * rr - (int64_t)q * (int64_t)n;
    long double y = (PI_L * (long double)d) / (2 * (long double)n), sy, cy, s, c;
    sincosl(y, &sy, &cy);
    if (q == 0) s = sy, c = cy;
    else if (q == 1) s = cy, c = -sy;
    else s = -cy, c = sy;
    long double as = fabsl(s), ac = fabsl(c);
    long double ds = (E_F + 4 * U) * as, dc = (E_F + 4 * U) * ac;
    cm1->re = -2 * (s * s);
    cm1->im = 0;
    cm1->e = 2 * (2 * as * ds + ds * ds) + U * fabsl(cm1->re);
    sn->re = 2 * (s * c);
    sn->im = 0;
    sn->e = 2 * (ds * ac + as * dc + ds * dc) + U * fabsl(sn->re);
}

/* One type of a lattice law: count k, one or two components (positions m_c,
 * t_c = tanh of half the component's loss, weights 1 - w2 and w2). */
typedef struct het_type {
    double k;
    long double w2;  /* 0: one component; a multiple of 2^-60, so 1 - w2 is exact */
    int64_t m[2];
    long double t[2], ot[2]; /* t_c (E_F relative), 1 - t_c^2 (rounded down) */
    size_t ix[2];    /* indices into the law's table of distinct positions */
    double eps;      /* the step's epsilon */
    long double r;   /* garbled laws: eps - m[0] h (exact) */
} het_type;

/* a significant frequency: Psi_j, 1 - w, 1 - w e^{-h} (w = e^{2 pi i j / N}) */
typedef struct het_sig {
    uint64_t j;
    cx psi, om1, om1h;
} het_sig;

typedef struct het_law {
    long double h;
    size_t nt;
    het_type *ty;
    size_t nm;
    int64_t *mv;               /* distinct positions, ascending */
    long double mean, var;     /* of S (lattice units; double accuracy, sizing) */
    long double Mx;            /* |S| <= Mx (the largest position sum) */
    int64_t s_lo;
    uint64_t N;                /* window [s_lo, s_lo + N), N odd */
    long double tail;          /* >= A(S outside the window) */
    long double drop;          /* >= (2/N) sum over dropped j of |Psi_j| |G_j| */
    size_t ns;
    het_sig *sig;
    long double lam[HET_NLAM], Kp[HET_NLAM], Km[HET_NLAM]; /* certified K(+-lam) upper bounds */
    long double eh, em;        /* e^{-h}, -expm1(-h) (E_F each) */
} het_law;

struct dpa_rr_het {
    size_t m;                   /* distinct eps > 0 */
    double *eps, *k;
    double ntot, emax;
    long double inf_lo, inf_up, keep_lo, keep_up; /* the +inf mass and P (section 4) */
    long double L;              /* >= the largest finite loss sum eps k */
    double mu, sd;              /* mean and sd of the loss (sizing) */
    double rel;                 /* target relative bracket */
    double h;                   /* the current lattice (0: none) */
    double hmin;                /* no finer lattice than this (positions, budget) */
    het_law up, lo, lb;         /* dominating, garbled A, tilted garbled B (B_1) */
    long double lmb;            /* >= log M, M = E_B[e^{h S_lo}] (the tilt's normalizer) */
    long double s0off;          /* the last best threshold s0 minus ceil(t / h) (a search hint) */
};

/* In-place radix-2 FFT of length n = 2^p (forward, e^{-2 pi i k j / n}),
 * double precision, twiddles from a table of sin/cos (1 ulp). */
static int fft_r2(double *re, double *im, size_t n)
{
    double *tw = malloc(n * sizeof *tw); /* cos, sin of 2 pi k / n, k < n/2 */
    if (!tw) return -1;
    for (size_t k = 0; k < n / 2; k++) {
        double a = 6.283185307179586 * ((double)k / (double)n);
        tw[2 * k] = cos(a);
        tw[2 * k + 1] = -sin(a);
    }
    for (size_t i = 1, j = 0; i < n; i++) {
        size_t bit = n >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j ^= bit;
        if (i < j) {
            double t = re[i]; re[i] = re[j]; re[j] = t;
            t = im[i]; im[i] = im[j]; im[j] = t;
        }
    }
    for (size_t len = 2; len <= n; len <<= 1) {
        size_t half = len / 2, step = n / len;
        for (size_t i = 0; i < n; i += len)
            for (size_t k = 0; k < half; k++) {
                double wr = tw[2 * k * step], wi = tw[2 * k * step + 1];
                double xr = re[i + k + half], xi = im[i + k + half];
                double tr = xr * wr - xi * wi, ti = xr * wi + xi * wr;
                re[i + k + half] = re[i + k] - tr;
                im[i + k + half] = im[i + k] - ti;
                re[i + k] += tr;
                im[i + k] += ti;
            }
    }
    free(tw);
    return 0;
}

static void law_free(het_law *L)
{
    free(L->ty);
    free(L->mv);
    free(L->sig);
    memset(L, 0, sizeof *L);
}

/* 1 - tanh(x)^2 = 1 / cosh(x)^2 = 4 e^{-2x} / (1 + e^{-2x})^2 (x >= 0),
 * rounded down (a few E_F) */
static long double one_minus_t2(long double x)
{
    long double e = expl(-2 * fabsl(x)), d = 1 + e;
    return 4 * e / (d * d) * (1 - 8 * E_F);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_type_m(const void *a, const void *b)
{
    const het_type *x = a, *y = b;
    int64_t mx = x->w2 > 0 ? x->m[1] : x->m[0], my = y->w2 > 0 ? y->m[1] : y->m[0];
    return (mx > my) - (mx < my); /* ascending largest position */
}

/* the types of the upper (which 0), garbled (1) or tilted garbled B (2,
 * section 7: sign +1 with probability (1 + tanh(mhat h - eps/2)) / 2) law
 * at step h;
 * DPA_ENOMEM, or DPA_EUNSUPPORTED when positions would leave int64 */
static dpa_status law_types(het_law *L, const dpa_rr_het *c, long double h, int which)
{
    L->h = h;
    L->ty = calloc(2 * (c->m ? c->m : 1), sizeof *L->ty);
    L->mv = malloc(2 * (c->m ? c->m : 1) * sizeof *L->mv);
    if (!L->ty || !L->mv) return DPA_ENOMEM;
    size_t n = 0, nm = 0;
    long double Mx = 0, mean = 0, var = 0;
    int run_dither = 0;
    double run_T = 0;
    for (size_t i = 0, part = 0; i < c->m; part ? (i++, part = 0) : (part = 1)) {
        long double eps = c->eps[i], q = eps / h; /* exact: h is a power of 2 */
        het_type *ty = &L->ty[n];
        ty->k = c->k[i];
        ty->eps = c->eps[i];
        if (which == 0) {
            if (part) continue; /* one type per eps */
            long double a = floorl(q), d = eps - a * h; /* d exact */
            if (!(a < HET_POS_MAX)) return DPA_EUNSUPPORTED;
            ty->m[0] = (int64_t)a;
            ty->t[0] = tanhl(a * h / 2);
            ty->ot[0] = one_minus_t2(a * h / 2);
            if (d > 0) {
                long double b = (a + 1) * h;
                long double lam = sinhl(d / 2) / sinhl(h / 2) * expl((h - d) / 2) * (1 + expl(-b)) / (1 + expl(-eps));
                lam *= 1 + 5 * E_F + 8 * U;
                lam = ceill(lam * 0x1p60L) * 0x1p-60L;
                /* all weight on RR_b (which dominates RR_eps, LT Thm 4.5)
                 * when lam >= 1, and when lam is not a number (sinh and
                 * exp of h/2 out of range give 0 * inf): never drop the
                 * step */
                if (!(lam < 1)) {
                    ty->m[0] = (int64_t)a + 1;
                    ty->t[0] = tanhl(b / 2);
                    ty->ot[0] = one_minus_t2(b / 2);
                } else {
                    ty->w2 = lam;
                    ty->m[1] = (int64_t)a + 1;
                    ty->t[1] = tanhl(b / 2);
                    ty->ot[1] = one_minus_t2(b / 2);
                }
            }
        } else {
            /* the garbling: each step's sign times a position near eps / h,
             * the nearest one, except in runs of epsilons with the same
             * floor(eps / h) and HET_DITHER_K or more steps in all: there the
             * steps are split between floor and floor + 1 by error diffusion
             * (type i sends round(T_i) - round(T_{i-1}) of its k_i steps up,
             * T_i the running sum of k f over the run, f the fractions), so
             * that they do not all share one sublattice (whose exact
             * resonances would make every multiple of pi / mhat a
             * significant frequency); residuals stay below h */
            long double mh, fl = floorl(q), f = q - fl;
            if (part == 0 && (i == 0 || floorl(c->eps[i - 1] / h) != fl)) { /* a new run */
                double K = 0;
                for (size_t j = i; j < c->m && floorl(c->eps[j] / h) == fl; j++) K += c->k[j];
                run_dither = K >= HET_DITHER_K;
                run_T = 0;
            }
            if (run_dither) {
                double Tp = run_T, T = Tp + c->k[i] * (double)f, k2 = nearbyint(T) - nearbyint(Tp);
                if (k2 < 0) k2 = 0;
                if (k2 > c->k[i]) k2 = c->k[i];
                if (part) run_T = T;
                mh = fl + part;
                ty->k = part ? k2 : c->k[i] - k2;
            } else {
                if (part) continue;
                mh = floorl(q + 0.5L);
            }
            if (mh == 0 || ty->k == 0) continue; /* the garbling forgets these steps */
            if (!(mh < HET_POS_MAX)) return DPA_EUNSUPPORTED;
            ty->m[0] = (int64_t)mh;
            ty->r = eps - mh * h; /* exact */
            /* B_1: mhat h - eps/2 = eps/2 - r, > 0 as mhat >= 1 */
            long double x = which == 1 ? eps / 2 : eps / 2 - ty->r;
            ty->t[0] = tanhl(x);
            ty->ot[0] = one_minus_t2(x);
        }
        int nc = ty->w2 > 0 ? 2 : 1;
        long double m1 = 0, m2 = 0, mmax = 0;
        for (int cc = 0; cc < nc; cc++) {
            long double w = cc ? ty->w2 : 1 - ty->w2, mm = (long double)ty->m[cc];
            m1 += w * ty->t[cc] * mm;
            m2 += w * mm * mm;
            if (mm > mmax) mmax = mm;
            L->mv[nm++] = ty->m[cc];
        }
        mean += ty->k * m1;
        var += ty->k * (m2 - m1 * m1);
        Mx += ty->k * mmax;
        n++;
    }
    if (!(Mx < HET_POS_MAX)) return DPA_EUNSUPPORTED;
    L->nt = n;
    L->mean = mean;
    L->var = var;
    L->Mx = Mx;
    /* distinct positions, and each component's index among them */
    qsort(L->mv, nm, sizeof *L->mv, cmp_i64);
    size_t u = 0;
    for (size_t i = 0; i < nm; i++)
        if (!u || L->mv[u - 1] != L->mv[i]) L->mv[u++] = L->mv[i];
    L->nm = u;
    qsort(L->ty, n, sizeof *L->ty, cmp_type_m);
    for (size_t i = 0; i < n; i++)
        for (int cc = 0; cc < (L->ty[i].w2 > 0 ? 2 : 1); cc++) {
            int64_t key = L->ty[i].m[cc];
            const int64_t *f = bsearch(&key, L->mv, u, sizeof *L->mv, cmp_i64);
            L->ty[i].ix[cc] = (size_t)(f - L->mv);
        }
    L->eh = expl(-h);
    L->em = -expm1l(-h);
    return DPA_OK;
}

/* log M_c(lam) = log(p e^{lam m} + q e^{-lam m}), p = (1 + t)/2, without
 * overflow (double: sizing) */
static double logm_comp_d(double lam, double m, double t)
{
    double a = lam * m;
    if (a >= 0) return a + log(0.5 * (1 + t) + 0.5 * (1 - t) * exp(-2 * a));
    return -a + log(0.5 * (1 - t) + 0.5 * (1 + t) * exp(2 * a));
}

/* K(lam) = log E[e^{lam S}] (double, sizing) */
static double logmgf_d(const het_law *L, double lam)
{
    double K = 0;
    for (size_t i = 0; i < L->nt; i++) {
        const het_type *ty = &L->ty[i];
        double k0 = logm_comp_d(lam, (double)ty->m[0], (double)ty->t[0]);
        if (ty->w2 > 0) {
            double k1 = logm_comp_d(lam, (double)ty->m[1], (double)ty->t[1]);
            double w2 = (double)ty->w2, w1 = 1 - w2;
            double mx = fmax(k0, k1);
            k0 = mx + log(w1 * exp(k0 - mx) + w2 * exp(k1 - mx));
        }
        K += ty->k * k0;
    }
    return K;
}

/* an upper bound on K(lam) (long double): each type's log-MGF is computed
 * to a few E_F of |lam m| + 2 (a handful of operations on terms of at most
 * that size); 16 E_F of it, and (nt + 2) u of the sum of |k K_t|, cover the
 * rounding */
static long double logmgf_up(const het_law *L, long double lam)
{
    long double K = 0, err = 0, sabs = 0;
    for (size_t i = 0; i < L->nt; i++) {
        const het_type *ty = &L->ty[i];
        int nc = ty->w2 > 0 ? 2 : 1;
        long double kc[2], amax = 0;
        for (int cc = 0; cc < nc; cc++) {
            long double a = lam * (long double)ty->m[cc], t = ty->t[cc];
            kc[cc] = a >= 0 ? a + logl(0.5L * (1 + t) + 0.5L * (1 - t) * expl(-2 * a))
                            : -a + logl(0.5L * (1 - t) + 0.5L * (1 + t) * expl(2 * a));
            if (fabsl(a) > amax) amax = fabsl(a);
        }
        long double kt = kc[0];
        if (nc == 2) {
            long double mx = fmaxl(kc[0], kc[1]);
            kt = mx + logl((1 - ty->w2) * expl(kc[0] - mx) + ty->w2 * expl(kc[1] - mx));
        }
        K += ty->k * kt;
        sabs += ty->k * fabsl(kt);
        err += ty->k * 16 * E_F * (fabsl(kt) + amax + 2);
    }
    return K + (err + ((long double)L->nt + 2) * U * sabs) * ERRSLACK;
}

/* min over lam > 0 of (K(sg lam) + c) / lam (golden section on log lam
 * around the Gaussian optimum sqrt(2c) / sd; the function is
 * quasi-convex, and any lam gives a valid bound: the search only sizes the
 * window); returns the minimizing lam */
static double win_lam(const het_law *L, int sg, double c)
{
    double sd = sqrt(fmax((double)L->var, 1e-300)), l0 = log(sqrt(2 * c) / sd);
    double a = l0 - 3, b = l0 + 3;
    const double gr = 0.6180339887498949;
    double x1 = b - gr * (b - a), x2 = a + gr * (b - a);
    double f1 = (logmgf_d(L, sg * exp(x1)) + c) / exp(x1), f2 = (logmgf_d(L, sg * exp(x2)) + c) / exp(x2);
    for (int i = 0; i < 14; i++) {
        if (!(f1 > f2)) {
            b = x2; x2 = x1; f2 = f1;
            x1 = b - gr * (b - a);
            f1 = (logmgf_d(L, sg * exp(x1)) + c) / exp(x1);
        } else {
            a = x1; x1 = x2; f1 = f2;
            x2 = a + gr * (b - a);
            f2 = (logmgf_d(L, sg * exp(x2)) + c) / exp(x2);
        }
    }
    return exp(0.5 * (a + b));
}

/* the window: [s_lo, s_hi] with each tail beyond it <= 2^-64 by a
 * certified Chernoff bound (A(S >= x) <= exp(K(lam) - lam x)), clipped to
 * [-Mx, Mx] (nothing beyond); N odd; the Chernoff table for queries beyond */
static dpa_status law_window(het_law *L)
{
    long double c = -HET_LOG_TAUW;
    double lp = win_lam(L, 1, (double)c), lm = win_lam(L, -1, (double)c);
    long double xhi = ceill((logmgf_up(L, lp) + c) / lp * (1 + 2 * U)) + 1;
    long double xlo = -ceill((logmgf_up(L, -(long double)lm) + c) / lm * (1 + 2 * U)) - 1;
    long double tail = 0;
    if (xhi >= L->Mx) xhi = L->Mx;
    else tail += expl(HET_LOG_TAUW);
    if (xlo <= -L->Mx) xlo = -L->Mx;
    else tail += expl(HET_LOG_TAUW);
    if (!(xhi >= xlo)) xhi = xlo; /* not reached: the window holds the mean */
    long double n = xhi - xlo + 1;
    if (fmodl(n, 2) == 0) n += 1;
    if (!(n < 0x1p62L)) return DPA_EUNSUPPORTED;
    L->s_lo = (int64_t)xlo;
    L->N = (uint64_t)n;
    L->tail = tail * (1 + 8 * E_F);
    for (int i = 0; i < HET_NLAM; i++) {
        L->lam[i] = lp * exp2l((long double)(2 * i));
        L->Kp[i] = logmgf_up(L, L->lam[i]);
        L->Km[i] = logmgf_up(L, -L->lam[i]);
    }
    return DPA_OK;
}

/* upper bounds on A(S >= x) (up = 1) or A(S <= x) (up = 0), x in lattice
 * units, from the Chernoff table (1 when it gives nothing) */
static long double law_chern(const het_law *L, long double x, int up)
{
    long double best = 0;
    for (int i = 0; i < HET_NLAM; i++) {
        long double v = up ? L->Kp[i] - L->lam[i] * x : L->Km[i] + L->lam[i] * x;
        v += U * (fabsl(L->lam[i] * x) + fabsl(v)) * 4;
        if (v < best) best = v;
    }
    return fminl(1, expl(best) * (1 + 2 * E_F));
}

/* min over real j in [j1, j2] of sin^2(2 pi j m / N) (m >= 0), from the
 * exact residues of 2 j m mod N (sin^2(pi x) is unimodal on (0, 1), so the
 * minimum is at an end unless [2 j1 m, 2 j2 m] / N holds an integer);
 * double, rounded down by 2^-40 relative */
static double min_sin2(uint64_t j1, uint64_t j2, uint64_t m, uint64_t N)
{
    if (m == 0) return 0;
    uint64_t r1, r2;
    if (j2 < (UINT64_C(1) << 31) && m < (UINT64_C(1) << 31)) { /* 2 j m < 2^63 */
        uint64_t A = 2 * j1 * m, B = 2 * j2 * m;
        if (A / N != B / N) return 0;
        r1 = A % N;
        r2 = B % N;
    } else {
        het_u128 A = (het_u128)j1 * (2 * (het_u128)m), B = (het_u128)j2 * (2 * (het_u128)m);
        het_u128 q1 = A / N, q2 = B / N;
        if (q2 != q1) return 0;
        r1 = (uint64_t)(A - q1 * N);
        r2 = (uint64_t)(B - q2 * N);
    }
    if (r1 == 0) return 0;
    uint64_t a1 = r1 > N - r1 ? N - r1 : r1, a2 = r2 > N - r2 ? N - r2 : r2;
    uint64_t a = a1 < a2 ? a1 : a2;
    double s = sin(3.141592653589793 * ((double)a / (double)N));
    return s * s * (1 - 0x1p-40);
}

/* an upper bound on log sup_{j in [j1, j2]} |Psi_j| (<= 0), stopping as
 * soon as it is below stop; *work counts the type evaluations.  Each
 * component: |cos x + i t sin x|^2 = 1 - (1 - t^2) sin^2 x; a type:
 * |phi_t| <= (1 - w2) |phi_1| + w2 |phi_2|; |Psi| <= prod sup|phi_t|^k.
 * Double precision with relative margins of 2^-40 per quantity; the bounds
 * of types with counts up to HET_POW_MAX are raised to their power by
 * repeated squaring and multiplied (each product rounded: the running
 * product is scaled up by 2^-40 per step), the others enter as k log b;
 * the logs (<= 0) are scaled towards 0 by 2^-30. */
static double sup_log(const het_law *L, uint64_t j1, uint64_t j2, double stop, double *work)
{
    double acc = 0, prod = 1, lim = exp(stop) * (1 - 0x1p-20);
    int64_t cm[2] = {-1, -1}; /* the last two positions and their min sin^2 (types sorted by position) */
    double cs[2] = {0, 0};
    for (size_t i = 0; i < L->nt; i++) {
        const het_type *ty = &L->ty[i];
        int nc = ty->w2 > 0 ? 2 : 1;
        double b = 0;
        for (int cc = 0; cc < nc; cc++) {
            int64_t m = ty->m[cc];
            double s2;
            if (m == cm[0]) s2 = cs[0];
            else if (m == cm[1]) s2 = cs[1];
            else {
                s2 = min_sin2(j1, j2, (uint64_t)m, L->N);
                cm[0] = cm[1];
                cs[0] = cs[1];
                cm[1] = m;
                cs[1] = s2;
            }
            double v = 1 - (double)ty->ot[cc] * (1 - 0x1p-40) * s2;
            double bc = sqrt(v > 0 ? v : 0) * (1 + 0x1p-40);
            b += (cc ? (double)ty->w2 : (double)(1 - ty->w2)) * bc;
        }
        b *= 1 + 0x1p-40;
        *work += 1;
        if (b >= 1) continue;
        if (ty->k <= HET_POW_MAX) { /* b^k by repeated squaring: <= 12 roundings */
            double bk = 1, bb = b;
            for (unsigned long k = (unsigned long)ty->k; k; k >>= 1) {
                if (k & 1) bk *= bb;
                bb *= bb;
            }
            prod *= bk * (1 + 0x1p-40);
        } else {
            acc += ty->k * (log(b) * (1 - 0x1p-30));
            lim = exp((stop - acc) * (1 - 0x1p-30)) * (1 - 0x1p-20);
        }
        if (prod < 0x1p-900) { /* renormalize into the log */
            acc += log(prod) * (1 - 0x1p-30);
            prod = 1;
            lim = exp((stop - acc) * (1 - 0x1p-30)) * (1 - 0x1p-20);
        }
        if (prod <= lim) return stop;
    }
    return (acc + log(prod) * (1 - 0x1p-30)) * (1 - 0x1p-30);
}

/* log(z), z = 1 + x + i y, from x, y with error bounds ex, ey (separate
 * bounds for the two parts: the imaginary part of z is often far smaller
 * than the real one).  The real part: 0.5 log1p(2x + x^2 + y^2) where
 * |z| >= 1/2, else 0.5 log(|z|^2), |z|^2 formed from c = 1 + x (one more
 * rounding, ec = ex + u |c|).  The imaginary part atan2(y, c): a
 * perturbation (dy, dc) turns z by at most (|c| dy + |y| dc) / |z|^2 to
 * first order, plus 2 ((dc + dy) / zl)^2 (zl = |z| - dc - dy), modulo 2 pi
 * (which is all the caller needs: it exponentiates integer multiples).
 * Returns the value with e bounding the modulus of its error (INFINITY when
 * the errors reach |z|). */
static cx log1p_parts(long double x, long double y, long double ex, long double ey)
{
    cx r = {0, 0, INFINITY};
    long double c = 1 + x, ec = ex + U * fabsl(c);
    long double P2 = c * c + y * y, zm = sqrtl(P2) * (1 - 4 * U), zl = zm - ec - ey;
    if (!(zl > 0)) return r;
    long double ere;
    if (P2 >= 0.25L) {
        long double s = 2 * x + (x * x + y * y);
        long double ds = 2 * ex * (1 + fabsl(x)) + ex * ex + 2 * fabsl(y) * ey + ey * ey +
                         4 * U * (2 * fabsl(x) + x * x + y * y);
        if (!(1 + s - ds > 0)) return r;
        r.re = 0.5L * log1pl(s);
        ere = 0.5L * ds / (1 + s - ds) + (E_F + U) * fabsl(r.re);
    } else {
        long double dP = 2 * fabsl(c) * ec + ec * ec + 2 * fabsl(y) * ey + ey * ey + 3 * U * P2;
        if (!(P2 - dP > 0)) return r;
        r.re = 0.5L * logl(P2);
        ere = 0.5L * dP / (P2 - dP) + (E_F + U) * fabsl(r.re);
    }
    r.im = atan2l(y, c);
    long double q = (ec + ey) / zl;
    long double eim = (fabsl(c) * ey + fabsl(y) * ec) / (zl * zl) + 2 * q * q + (E_F + U) * fabsl(r.im);
    r.e = (ere + eim) * ERRSLACK;
    return r;
}

/* Psi_j (with its error bound) for the law at frequency j.  cm1, sn:
 * scratch of nm entries each (cos - 1 and sin of 2 pi j m / N per distinct
 * position) */
static cx law_psi(const het_law *L, uint64_t j, cx *cm1, cx *sn)
{
    for (size_t i = 0; i < L->nm; i++) cis_m1(mulmod(j, (uint64_t)L->mv[i], L->N), L->N, &cm1[i], &sn[i]);
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
            cx lg = log1p_parts(ep.re, ep.im, exr, exi);
            if (!isfinite(lg.e) || degenerate) { degenerate = 1; continue; }
            cx kl = cx_scale(lg, (long double)ty->k, 0);
            Lam = cx_add(Lam, kl);
        }
    }
    /* the window shift e^{-i w_j s_lo} */
    uint64_t sl = (uint64_t)(L->s_lo >= 0 ? L->s_lo : -L->s_lo) % L->N;
    uint64_t rs = mulmod(j % L->N, sl, L->N);
    if (L->s_lo > 0 && rs) rs = L->N - rs; /* -s_lo */
    cx c1, s1;
    cis_m1(rs, L->N, &c1, &s1);
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
static void law_om(const het_law *L, uint64_t j, cx *om1, cx *om1h)
{
    cx cm, sn;
    cis_m1(j, L->N, &cm, &sn); /* cos w - 1, sin w */
    om1->re = -cm.re;
    om1->im = -sn.re;
    om1->e = cm.e + sn.e;
    /* 1 - e^{-h} w = (-expm1(-h) cos w - (cos w - 1)) - i e^{-h} sin w */
    cx cw = {1 + cm.re, 0, cm.e + U * fabsl(1 + cm.re)};
    cx a = cx_scale(cw, L->em, E_F * L->em);
    cx b = {-cm.re, 0, cm.e};
    cx re = cx_add(a, b);
    cx im = cx_scale(sn, -L->eh, E_F * L->eh);
    om1h->re = re.re;
    om1h->im = im.re;
    om1h->e = re.e + im.e;
}

typedef struct het_iv { uint64_t a, b; } het_iv;

typedef struct ivlist { het_iv *v; size_t n, cap; } ivlist;

static int iv_push(ivlist *l, uint64_t a, uint64_t b)
{
    if (l->n && l->v[l->n - 1].b + 1 >= a) { /* merge with the previous range */
        if (b > l->v[l->n - 1].b) l->v[l->n - 1].b = b;
        return 0;
    }
    if (l->n == l->cap) {
        size_t nc = l->cap ? 2 * l->cap : 64;
        het_iv *q = realloc(l->v, nc * sizeof *q);
        if (!q) return -1;
        l->v = q;
        l->cap = nc;
    }
    l->v[l->n++] = (het_iv){a, b};
    return 0;
}

/* Stage 1 of the certification (section 7): the ranges of j in [1, jmax]
 * that the bound log|Psi(w)| <= -(V - D(w)) / 4 does not certify below
 * tau, D sampled by an FFT; all of [1, jmax] when V is too small for it to
 * certify anything.  -1 when out of memory. */
static int dbound_ranges(const het_law *L, uint64_t jmax, ivlist *out)
{
    const double need = -4 * (double)HET_LOG_TAU;
    double *V = calloc(L->nm ? L->nm : 1, sizeof *V);
    if (!V) return -1;
    for (size_t i = 0; i < L->nt; i++) {
        const het_type *ty = &L->ty[i];
        for (int cc = 0; cc < (ty->w2 > 0 ? 2 : 1); cc++) {
            double w = cc ? (double)ty->w2 : (double)(1 - ty->w2);
            V[ty->ix[cc]] += ty->k * w * (double)ty->ot[cc] * (1 - 0x1p-40);
        }
    }
    /* the sums rounded down / up: nm + nt additions of positive terms */
    double Vs = 0, M1 = 0, adj = ((double)L->nm + (double)L->nt + 4) * 0x1p-53;
    for (size_t i = 0; i < L->nm; i++) {
        V[i] *= 1 - adj;
        Vs += V[i];
        M1 += (double)L->mv[i] * V[i];
    }
    Vs *= 1 - adj;
    M1 *= 1 + adj;
    int ret = 0;
    if (!(Vs > 2 * need)) {
        free(V);
        return iv_push(out, 1, jmax);
    }
    /* M: slack pi M1 / M <= (Vs - need) / 4 */
    double want = 3.141592653589793 * M1 / ((Vs - need) / 4);
    size_t M = 1024;
    while (M < want && M < HET_FFT_MAX) M *= 2;
    double *re = calloc(M, sizeof *re), *im = calloc(M, sizeof *im);
    if (!re || !im) {
        free(V);
        free(re);
        free(im);
        return -1;
    }
    for (size_t i = 0; i < L->nm; i++) re[(uint64_t)L->mv[i] % M] += V[i];
    if (fft_r2(re, im, M)) ret = -1;
    else {
        /* |D'| <= 2 M1: within pi / (2M) of a sample D moves by at most
         * pi M1 / M; the FFT (and the folding) err by at most
         * 32 u log2(M) sqrt(M) Vs + (nm) u Vs */
        int lg = 0;
        while (((size_t)1 << lg) < M) lg++;
        double slack = 3.141592653589793 * M1 / (double)M * (1 + 0x1p-40) +
                       (32.0 * lg * sqrt((double)M) + (double)L->nm + 8) * 0x1p-53 * Vs;
        for (size_t l = 0; l <= M && !ret; l++) {
            double D = re[l % M];
            if (Vs - (D + slack) >= need * (1 + 0x1p-40)) continue;
            /* j with 2 pi j / N in [pi (2l - 1) / 2M, pi (2l + 1) / 2M]:
             * 4 M j in [(2l - 1) N, (2l + 1) N] */
            het_u128 den = (het_u128)4 * M;
            het_u128 lo = l == 0 ? 0 : ((het_u128)(2 * l - 1) * L->N + den - 1) / den;
            het_u128 hi = ((het_u128)(2 * l + 1) * L->N) / den;
            if (lo < 1) lo = 1;
            if (hi > jmax) hi = jmax;
            if (lo <= hi && iv_push(out, (uint64_t)lo, (uint64_t)hi)) ret = -1;
        }
    }
    free(V);
    free(re);
    free(im);
    return ret;
}

/* the significant frequencies of the law (certification of the others) and
 * their Psi_j; DPA_EUNSUPPORTED when the work budget or HET_SIG_MAX is
 * exceeded, DPA_ENOMEM */
static dpa_status law_freqs(het_law *L, double *work)
{
    uint64_t jmax = (L->N - 1) / 2;
    size_t cap = 64, ns = 0;
    uint64_t *sj = malloc(cap * sizeof *sj);
    if (!sj) return DPA_ENOMEM;
    dpa_status st = DPA_OK;
    L->drop = 0;
    if (jmax <= HET_DIRECT_J) {
        for (uint64_t j = 1; j <= jmax; j++) {
            if (ns == cap) {
                uint64_t *q = realloc(sj, 2 * cap * sizeof *q);
                if (!q) { free(sj); return DPA_ENOMEM; }
                sj = q;
                cap *= 2;
            }
            sj[ns++] = j;
        }
    } else if (L->nt > 0) {
        ivlist rg = {NULL, 0, 0};
        if (dbound_ranges(L, jmax, &rg)) {
            free(rg.v);
            free(sj);
            return DPA_ENOMEM;
        }
        /* stage 2 on what is left: intervals over which the phase of the
         * 256th smallest position moves by at most pi / 8 */
        size_t ir = L->nt < 256 ? L->nt - 1 : 255;
        const het_type *tr = &L->ty[ir];
        uint64_t mref = (uint64_t)(tr->w2 > 0 ? tr->m[1] : tr->m[0]);
        uint64_t w = (uint64_t)((long double)L->N / (16 * (long double)(mref ? mref : 1)));
        if (w < 1) w = 1;
        size_t scap = 256, sn_ = 0;
        het_iv *stk = malloc(scap * sizeof *stk);
        if (!stk) st = DPA_ENOMEM;
        for (size_t r = 0; r < rg.n && !st; r++) {
            uint64_t a0 = rg.v[r].a, b0 = rg.v[r].b;
            for (uint64_t a = a0; a <= b0 && !st; a += w) {
                uint64_t b = b0 - a < w ? b0 : a + w - 1;
                stk[sn_++] = (het_iv){a, b};
                while (sn_ > 0 && !st) {
                    het_iv iv = stk[--sn_];
                    double lb = sup_log(L, iv.a, iv.b, (double)HET_LOG_TAU, work);
                    if (*work > HET_WORK_MAX) { st = DPA_EUNSUPPORTED; break; }
                    if (lb <= (double)HET_LOG_TAU) continue;
                    if (iv.b - iv.a < 4) { /* a few: evaluate them all rather than halve */
                        for (uint64_t j = iv.a; j <= iv.b && !st; j++) {
                            if (ns == cap) {
                                uint64_t *s3 = realloc(sj, 2 * cap * sizeof *s3);
                                if (!s3) { st = DPA_ENOMEM; break; }
                                sj = s3;
                                cap *= 2;
                            }
                            sj[ns++] = j;
                            if (ns > HET_SIG_MAX) st = DPA_EUNSUPPORTED;
                        }
                        if (st) break;
                        continue;
                    }
                    if (sn_ + 2 > scap) {
                        het_iv *s2 = realloc(stk, 2 * scap * sizeof *s2);
                        if (!s2) { st = DPA_ENOMEM; break; }
                        stk = s2;
                        scap *= 2;
                    }
                    uint64_t mid = iv.a + (iv.b - iv.a) / 2;
                    stk[sn_++] = (het_iv){mid + 1, iv.b};
                    stk[sn_++] = (het_iv){iv.a, mid};
                }
                if (b == b0) break;
            }
        }
        free(stk);
        free(rg.v);
        /* sum_{j = 1}^{jmax} 1/j <= 1 + ln jmax */
        L->drop = 2 * expl(HET_LOG_TAU) * (1 + logl((long double)jmax)) * (1 + 8 * E_F);
    }
    if (!st) *work += (double)ns * (double)L->nt;
    if (!st && *work > HET_WORK_MAX) st = DPA_EUNSUPPORTED;
    if (st) { free(sj); return st; }
    /* sort (intervals were processed in ascending order, but keep it safe) */
    qsort(sj, ns, sizeof *sj, cmp_i64); /* values < 2^62: the signed comparison is fine */
    L->sig = malloc((ns ? ns : 1) * sizeof *L->sig);
    cx *cm1 = malloc((L->nm ? L->nm : 1) * sizeof *cm1), *sn = malloc((L->nm ? L->nm : 1) * sizeof *sn);
    if (!L->sig || !cm1 || !sn) {
        free(sj);
        free(cm1);
        free(sn);
        return DPA_ENOMEM;
    }
    for (size_t i = 0; i < ns; i++) {
        het_sig *g = &L->sig[i];
        g->j = sj[i];
        g->psi = law_psi(L, g->j, cm1, sn);
        law_om(L, g->j, &g->om1, &g->om1h);
    }
    L->ns = ns;
    free(sj);
    free(cm1);
    free(sn);
    return DPA_OK;
}

/* Enclosure [*lo, *hi] of sum_{s in Z} A(s) g(s) for the law's A and the
 * functional g (kind 0: (1 - e^{x - s h})_+, x = t; kind 1: 1{s >= x};
 * kind 2: 1{s <= x}; kind 3: e^{t - s h} 1{s >= x}; x in loss units for
 * kind 0, lattice units for the others).  The window sum by the Fourier
 * identity (section 7 header), then the dropped frequencies (drop) and the
 * mass outside the window (tail), scaled by the functional's size: kinds
 * 0-2 are monotone with values in [0, 1]; kind 3 has values in [0, c0] and
 * total variation <= 2 c0, so its G_j are at most 1.5 c0 N / j (Abel). */
static void law_sum(const het_law *L, int kind, long double x, double t, long double *hi, long double *lo)
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
            cis_m1(mulmod(g->j, ri, L->N), L->N, &cm, &sn);
            cx num = {cm.re, sn.re, cm.e + sn.e}; /* w^{r} - 1 */
            cx G = cx_div(num, g->om1);
            if (kind == 2) G.re = -G.re, G.im = -G.im;
            else if (kind == 0 || kind == 3) {
                /* c0 (w^{r0} - e^{-hn}) / (1 - w e^{-h}) */
                cx nb = {num.re + eh_n, num.im, num.e + E_F * eh_n + U * fabsl(num.re + eh_n)};
                cx B = cx_div(nb, g->om1h);
                B = cx_scale(B, c0, c0e);
                G = kind == 0 ? cx_sub(G, B) : B;
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
        if (x >= top) *hi = fminl(*hi, law_chern(L, floorl(x / L->h) + 1, 1));
    } else if (kind == 1 || kind == 3) {
        if (x >= s_lo + Nl) *hi = fminl(*hi, gout * law_chern(L, x, 1));
    } else if (x < s_lo) *hi = fminl(*hi, law_chern(L, x, 0));
    if (*hi > gout) *hi = gout;
    if (!(*lo > 0)) *lo = 0;
}

/* F bounds from the two laws (need: 1 upper, 2 lower, 3 both) */
static void het_F(dpa_rr_het *c, double t, int need, long double *fhi, long double *flo)
{
    long double X = -expm1l((long double)t);
    long double Xlo = X > 0 ? X * (1 - E_F - 4 * U) : 0, Xhi = X > 0 ? X * (1 + E_F + 4 * U) : 0;
    *fhi = 1;
    *flo = 0;
    if (t >= c->L) { *fhi = *flo = 0; return; }
    if (-(long double)t >= c->L) { *fhi = fminl(1, Xhi); *flo = Xlo; return; }
    if (need & 1) {
        long double h, l;
        law_sum(&c->up, 0, t, t, &h, &l);
        *fhi = h;
    }
    if (need & 2) {
        /* max over s0 of A_lo(S >= s0) - e^t B_lo(S >= s0), the second term
         * M E_{B_1}[e^{t - hS} 1{S >= s0}] (golden section on integers
         * around t / h, then the last few) */
        const het_law *L = &c->lo;
        long double Mup = expl(c->lmb) * (1 + E_F + U);
        long double sc = ceill((long double)t / L->h);
#define HET_LB(s0, out)                                                      \
        do {                                                                 \
            long double xh_, xl_, yh_, yl_;                                  \
            law_sum(L, 1, (s0), t, &xh_, &xl_);                              \
            law_sum(&c->lb, 3, (s0), t, &yh_, &yl_);                         \
            (out) = xl_ - Mup * yh_;                                         \
            (out) -= U * fabsl(out) * 2 + U * Mup * yh_ * 2;                 \
        } while (0)
        /* LB(s0) is unimodal (the garbled likelihood ratio increases in s0):
         * a pattern search from the last optimum's offset, steps doubling
         * while they improve, then halving; any s0 gives a valid bound */
        long double s = sc, best, v;
        HET_LB(s, best);
        if (c->s0off != 0) { /* the hint, if it starts better */
            HET_LB(sc + c->s0off, v);
            if (v > best) best = v, s = sc + c->s0off;
        }
        long double step = 1;
        int dir = 0;
        for (int it = 0; it < 200 && step >= 1; it++) {
            if (!dir) {
                HET_LB(s + 1, v);
                if (v > best) dir = 1;
                else {
                    HET_LB(s - 1, v);
                    if (v > best) dir = -1;
                    else break;
                }
                best = v;
                s += dir;
                continue;
            }
            HET_LB(s + dir * step, v);
            if (v > best) {
                best = v;
                s += dir * step;
                step *= 2;
            } else {
                step = floorl(step / 2);
                if (step < 1) { /* the neighbours: maybe the other side now */
                    step = 1;
                    HET_LB(s - dir, v);
                    if (v > best) {
                        best = v;
                        s -= dir;
                        dir = -dir;
                        continue;
                    }
                    break;
                }
            }
        }
#undef HET_LB
        /* remember the offset where the bound is informative */
        c->s0off = best > 0 && fabsl(s - sc) < 1e6L ? s - sc : 0;
        *flo = fmaxl(0, best);
        if (t < 0 && *flo < Xlo) *flo = Xlo; /* F >= 1 - e^t (a pair) */
    }
    if (!(*fhi <= 1)) *fhi = 1;
    if (*flo > *fhi) *flo = *fhi;
}

static void het_parts(dpa_rr_het *c, double t, int need, dparts *p)
{
    long double fhi = 1, flo = 0;
    het_F(c, t, need, &fhi, &flo);
    p->inf_up = c->inf_up;
    p->inf_lo = c->inf_lo;
    p->y_up = fhi > 0 ? c->keep_up * fhi * (1 + 4 * U) : 0;
    p->y_lo = flo > 0 ? c->keep_lo * flo * (1 - 4 * U) : 0;
    p->fl_ = t < 0 ? -expm1l((long double)t) * (1 - E_F - 4 * U) : 0;
}

static void het_delta_now(dpa_rr_het *c, double t, double *up, double *lo)
{
    dparts p;
    het_parts(c, t, 3, &p);
    long double u_ = p.y_up > 0 ? (p.inf_up + p.y_up) * (1 + 4 * U) : p.inf_up;
    long double l_ = p.y_lo > 0 ? (p.inf_lo + p.y_lo) * (1 - 4 * U) : p.inf_lo;
    *up = dpa_ld_up(fminl(1, u_));
    *lo = dpa_ld_dn(fmaxl(0, fmaxl(l_, p.fl_)));
    if (*lo > *up) *lo = *up;
    *lo += 0.0;
}

typedef struct hctx { dpa_rr_het *c; double target; int side; } hctx;

static double het_g(double t, void *pp)
{
    const hctx *s = pp;
    dparts d;
    het_parts(s->c, t, s->side ? 2 : 1, &d);
    long double v, e;
    if (s->side == 0) v = sum3(d.inf_up, d.y_up, s->target, &e) + e;
    else {
        v = sum3(d.inf_lo, d.y_lo, s->target, &e) - e;
        long double f = d.fl_ - s->target;
        if (f > v) v = f;
    }
    if (v > 0) return fmax((double)v, DBL_MIN);
    return fmin((double)v, -DBL_MIN);
}

/* the search stops at 1e-3 of the target width (at most 1e-10 relative):
 * the bracket's own width is of the order of the target */
static double het_solve(dpa_rr_het *c, double target, int side)
{
    hctx s = {c, target, side};
    double tmax = fmin(dpa_ld_up(c->L), DBL_MAX);
    if (het_g(0.0, &s) <= 0) return 0.0;
    if (het_g(tmax, &s) > 0) return INFINITY;
    double a, b;
    if (dpa_bisect(het_g, &s, 0.0, tmax, 0.0, fmax(EPS_XTOL_REL, fmin(1e-10, 1e-3 * c->rel)), &a, &b))
        return side ? 0.0 : tmax;
    return side ? a : b;
}

/* ---------------- building and refining ---------------- */

/* the eps bracket estimate of section 7 for step h: (v_up + v_lo)/2
 * (1 + z/sd), z = 4.75 (delta ~ 1e-6); the relative delta bracket is about
 * (1 + z/sd) times it */
static double het_width_est(const dpa_rr_het *c, double h)
{
    double v = 0;
    for (size_t i = 0; i < c->m; i++) {
        double q = c->eps[i] / h, f = q - floor(q), r = q - floor(q + 0.5);
        double g = fmax(f * (1 - f), r * r); /* the garbling's residual variance (nearest or dithered) */
        v += c->k[i] * (f * (1 - f) + g) * h * h;
    }
    return 0.5 * v * (1 + 4.75 / fmax(c->sd, 1e-300));
}

/* build both laws at step h into c (replacing the old ones only on success) */
/* >= log M, M = E_B[e^{h S_lo}] = prod_t (cosh(eps/2 - r) / cosh(eps/2))^k,
 * r = eps - mhat h (exact): each factor is 1 + z, z = 2 sinh^2(r/2) -
 * tanh(eps/2) sinh r (cosh(b - r) / cosh b = cosh r - tanh b sinh r), both
 * terms within E_F + 4u of themselves; log1p adds E_F */
static long double log_tilt(const het_law *lb)
{
    long double s = 0, e = 0, sa = 0;
    for (size_t i = 0; i < lb->nt; i++) {
        const het_type *ty = &lb->ty[i];
        long double eps = ty->eps, r = ty->r, sh2 = sinhl(r / 2), a = 2 * sh2 * sh2, b = tanhl(eps / 2) * sinhl(r);
        long double z = a - b, ez = (E_F + 4 * U) * (fabsl(a) + fabsl(b)) + U * fabsl(z);
        long double l = log1pl(z), el = ez / (1 + z - ez) + (E_F + U) * fabsl(l);
        s += ty->k * l;
        sa += ty->k * fabsl(l);
        e += ty->k * el;
    }
    return s + (e + ((long double)lb->nt + 2) * U * sa) * ERRSLACK;
}

/* build the three laws at step h into c (replacing the old ones only on
 * success) */
static dpa_status het_build_at(dpa_rr_het *c, double h)
{
    het_law up, lo, lb;
    memset(&up, 0, sizeof up);
    memset(&lo, 0, sizeof lo);
    memset(&lb, 0, sizeof lb);
    double work = 0;
    dpa_status st = law_types(&up, c, h, 0);
    if (!st) st = law_types(&lo, c, h, 1);
    if (!st) st = law_types(&lb, c, h, 2);
    if (!st) st = law_window(&up);
    if (!st) st = law_window(&lo);
    if (!st) st = law_window(&lb);
    if (!st) st = law_freqs(&up, &work);
    if (!st) st = law_freqs(&lo, &work);
    if (!st) st = law_freqs(&lb, &work);
    if (st) {
        law_free(&up);
        law_free(&lo);
        law_free(&lb);
        return st;
    }
    law_free(&c->up);
    law_free(&c->lo);
    law_free(&c->lb);
    c->up = up;
    c->lo = lo;
    c->lb = lb;
    c->lmb = log_tilt(&c->lb);
    c->h = h;
    return DPA_OK;
}

/* the largest power of 2 not above x */
static double pow2_floor(double x)
{
    int e;
    frexp(x, &e);
    return ldexp(1.0, e - 1);
}

/* refine to step hn (a power of 2 below c->h); 0 on success */
static int het_refine(dpa_rr_het *c, double hn)
{
    if (!(hn >= c->hmin) || !(hn < c->h)) return -1;
    dpa_status st = het_build_at(c, hn);
    if (st == DPA_EUNSUPPORTED) c->hmin = 2 * hn; /* too costly: nothing finer */
    return st ? -1 : 0;
}

/* the next step for a bracket of width w against the target tg: the gap
 * scales like h^2 */
static double het_next_h(double h, double w, double tg)
{
    double f = sqrt(tg / w) * 0.7;
    if (!(f < 0.5)) f = 0.5;
    if (f < 1.0 / 64) f = 1.0 / 64;
    return pow2_floor(h * f);
}

void dpa_rr_het_epsilon(dpa_rr_het *c, double delta, double *up, double *lo)
{
    if (!(delta >= 0) || (long double)delta < c->inf_lo) {
        *up = *lo = INFINITY;
        return;
    }
    double pw = INFINITY;
    for (int it = 0;; it++) {
        *up = het_solve(c, delta, 0);
        *lo = het_solve(c, delta, 1);
        if (*lo > *up) *lo = *up;
        *lo += 0.0;
        if (isinf(*up) && isinf(*lo)) return;
        double w = *up - *lo, tg = c->rel * fmax(1.0, *up);
        if (w <= tg || it >= HET_REFINE_MAX || !(w < pw / 1.5)) return;
        pw = w;
        if (isinf(w)) return;
        if (het_refine(c, het_next_h(c->h, w, tg))) return;
    }
}

void dpa_rr_het_delta(dpa_rr_het *c, double t, double *up, double *lo)
{
    if (isnan(t)) { *up = 1; *lo = 0; return; }
    double pw = INFINITY;
    for (int it = 0;; it++) {
        het_delta_now(c, t, up, lo);
        double w = *up - *lo, tg = c->rel * *up + 1e-14;
        if (w <= tg || it >= HET_REFINE_MAX || !(w < pw / 1.5)) return;
        pw = w;
        if (het_refine(c, het_next_h(c->h, w, tg))) return;
    }
}

double dpa_rr_het_step(const dpa_rr_het *c)
{
    return c ? c->h : 0;
}

void dpa_rr_het_free(dpa_rr_het *c)
{
    if (!c) return;
    free(c->eps);
    free(c->k);
    law_free(&c->up);
    law_free(&c->lo);
    law_free(&c->lb);
    free(c);
}

/* the leaves as (distinct eps, count) and the +inf mass; 0 if outside the
 * domain (see dpa_rr_het_applicable) */
static int het_domain(const dpa_leafset *L)
{
    if (!L || !L->all_rr || L->zcdp_path[0]) return 0;
    int any = 0;
    for (size_t i = 0; i < L->n; i++) {
        const dpa_leaf *l = &L->v[i];
        double e = l->rr_eps, d = l->rr_delta, k = l->count;
        if (!(e >= 0 && e <= HET_EPS_MAX && d >= 0 && d <= 1 && k >= 1 && k <= DPA_MAX_COUNT && k == floor(k)))
            return 0;
        if (e > 0) any = 1;
    }
    return any;
}

int dpa_rr_het_applicable(const dpa_leafset *L)
{
    return het_domain(L);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

dpa_status dpa_rr_het_new(const dpa_leafset *L, double rel, dpa_rr_het **out, dpa_error *err)
{
    *out = NULL;
    if (!het_domain(L)) return dpa_error_set(err, DPA_EUNSUPPORTED, "exact method: this composition is outside "
                                                                  "the heterogeneous (eps, delta) method's domain");
    dpa_rr_het *c = calloc(1, sizeof *c);
    double *e = malloc(2 * L->n * sizeof *e);
    int valid;
    fac *f = collect(L, 0, 0, &valid);
    if (!c || !e || !f) {
        free(c);
        free(e);
        free(f);
        return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    }
    /* distinct eps > 0 with total counts (pairs (eps, k) sorted by eps) */
    size_t n = 0;
    for (size_t i = 0; i < L->n; i++)
        if (L->v[i].rr_eps > 0) {
            e[2 * n] = L->v[i].rr_eps;
            e[2 * n + 1] = L->v[i].count;
            n++;
        }
    qsort(e, n, 2 * sizeof *e, cmp_d);
    c->eps = malloc((n ? n : 1) * sizeof *c->eps);
    c->k = malloc((n ? n : 1) * sizeof *c->k);
    if (!c->eps || !c->k) {
        free(e);
        free(f);
        dpa_rr_het_free(c);
        return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    }
    size_t m = 0;
    long double Lsum = 0, mu = 0, var = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && c->eps[m - 1] == e[2 * i]) c->k[m - 1] += e[2 * i + 1];
        else {
            c->eps[m] = e[2 * i];
            c->k[m] = e[2 * i + 1];
            m++;
        }
    }
    c->m = m;
    for (size_t i = 0; i < m; i++) {
        long double ep = c->eps[i], th = tanhl(ep / 2);
        Lsum = (Lsum + ep * c->k[i]) * (1 + 4 * U);
        mu += c->k[i] * ep * th;
        var += c->k[i] * ep * ep * (1 - th * th);
        c->ntot += c->k[i];
        if (c->eps[i] > c->emax) c->emax = c->eps[i];
    }
    c->L = Lsum;
    c->mu = (double)mu;
    c->sd = sqrt((double)var);
    /* the +inf mass exactly as for the lattice method (section 4) */
    dpa_rr_comp tmp;
    memset(&tmp, 0, sizeof tmp);
    inf_mass(&tmp, f, L->n);
    c->inf_lo = tmp.inf_lo;
    c->inf_up = tmp.inf_up;
    c->keep_lo = tmp.keep_lo;
    c->keep_up = tmp.keep_up;
    free(e);
    free(f);
    c->rel = rel > 0 ? rel : DPA_RR_HET_REL;
    /* the finest step: positions below 2^61 with room */
    c->hmin = pow2_floor((double)(c->L / 0x1p56L)) * 2;
    if (!(c->hmin > 0)) c->hmin = 0x1p-1000;
    /* the first step from the estimate at delta ~ 1e-6, for eps and for
     * delta queries (the cost of a build hardly depends on h), then coarser
     * while a build is refused for its cost */
    double epsest = fmin((double)c->L, c->mu + 4.75 * c->sd);
    double tg = 0.5 * c->rel * fmin(fmax(1.0, epsest), 1 / (1 + 4.75 / fmax(c->sd, 1e-300)));
    double h = pow2_floor(fmax(2 * c->emax, 1e-300)) * 2;
    while (h / 2 >= c->hmin && het_width_est(c, h) > tg) h /= 2;
    if (h < c->hmin) h = c->hmin;
    dpa_status st;
    for (;;) {
        st = het_build_at(c, h);
        if (st != DPA_EUNSUPPORTED || h > 4 * c->emax + 1) break;
        c->hmin = 2 * h;
        h *= 2;
    }
    if (st) {
        dpa_rr_het_free(c);
        return dpa_error_set(err, st, st == DPA_ENOMEM ? "out of memory"
                                                        : "exact method: no lattice fits this composition");
    }
    *out = c;
    return DPA_OK;
}
