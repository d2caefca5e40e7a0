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
#include "acct/leaves.h"
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

static double ld_up(long double x)
{
    if (isnan(x)) return INFINITY;
    double d = (double)x;
    if ((long double)d < x) d = nextafter(d, INFINITY);
    return d;
}

static double ld_dn(long double x)
{
    if (isnan(x)) return -INFINITY;
    double d = (double)x;
    if ((long double)d > x) d = nextafter(d, -INFINITY);
    return d;
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
        } else if (l->inner || !atoms_fac(l->pair, dir, &f[i]) || k != floor(k)) {
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

/* Distinct eps > 0 and distinct two-point factors with total counts, sorted
 * by window size (largest last).  Returns m. */
static size_t group(const fac *f, size_t n, grp *g)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        grp key;
        memset(&key, 0, sizeof key);
        if (f[i].kind == 0) {
            double e = f[i].eps;
            if (!(e > 0 && isfinite(e))) continue;
            key.gen = 0;
            key.eps = key.whi = key.lam = e;
            key.wlo = -e;
        } else {
            if (f[i].nfin == 0) continue;
            key.gen = 1;
            key.eps = NAN;
            key.whi = key.whi0 = f[i].whi;
            key.wlo = key.wlo0 = f[i].wlo;
            key.lahi = f[i].lahi;
            key.lalo = f[i].lalo;
            key.lam = f[i].nfin == 1 ? INFINITY : f[i].lahi - f[i].lalo;
        }
        size_t j = 0;
        while (j < m && !(g[j].gen == key.gen &&
                          (key.gen ? g[j].whi == key.whi && g[j].wlo == key.wlo && g[j].lahi == key.lahi &&
                                         g[j].lalo == key.lalo
                                   : g[j].eps == key.eps)))
            j++;
        if (j == m) g[m++] = key;
        g[j].k += f[i].k;
    }
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
    ck->Ae = ld_up(a->Ae);
    ck->Ge = ld_up(a->He);
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
        d->up[j].Ae = ld_up((thmax + U * nb) * Ab);
        d->up[j].Ge = ld_up((thmax + (2 * U + d->e2r) * nb) * Hb);
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
        c->Ae = ld_up(Ae);
        c->Ge = ld_up(Ge);
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
    *up = ld_up(du);
    *lo = ld_dn(dl);
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
    c->tmax = fmax(0, ld_up(c->Lrest[0]));
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
