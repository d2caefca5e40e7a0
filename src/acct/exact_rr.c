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
 * 2. Evaluation on a lattice cell (dist_eval).  For x with
 *    S(s - 1) <= x < S(s), S(y) = eps (2y - k), u = x - S(s) in [-2 eps, 0):
 *      V(x) = sum_{y >= s} w(y) (1 - e^{x - S(y)})
 *           = w(s) (-expm1(u)) + [A(s + 1) - e^u E2 G(s + 1)].
 *    The bracket's terms have factors >= 1 - E2, so its cancellation is
 *    bounded, and the first term, which alone is small just below a lattice
 *    point, keeps full relative accuracy through expm1.  The cell is found
 *    with exact signs: xmab (an error-free product and sum) gives x - S(y)
 *    with its exact sign and a relative error <= u (1 + 4u).  Hence
 *    -expm1l(u) has relative error <= E_F + 2u, expl(u) <= E_F + 2u |u|,
 *    and each product/difference adds u of its result; the a-posteriori
 *    bound is summed in dist_eval.  When that bound exceeds 1e-14 of V (tiny
 *    eps: the relative error is ~ c1 / eps), one eps sums the terms directly
 *    instead (each positive; at most 32768 of them, the rest bounded by the
 *    geometric series).  Then
 *      F_win = V / Z_true in [V_lo / Z_hi, V_hi / Z_lo],   F in [F_win, F_win + T / Z_lo].
 *
 * 3. Several distinct eps (outer): a recursion over the windows of all but
 *    the largest-window binomial, which is evaluated by dist_eval at the
 *    remaining threshold x = t - sum eps_i (2 y_i - k_i).  x is rounded (its
 *    error dx is tracked: u per product and difference), and V is
 *    non-increasing in x, so V(x_true) lies in [V_lo(x + dx), V_hi(x - dx)]
 *    (both points rounded outwards).  The weights' product has relative error
 *    sum theta_i + u per product; sums of positive terms add u of each
 *    partial sum.  Mass outside any window is at most sum_i T_i / Z_i, added
 *    to the upper bound (union bound; the integrand is in [0, 1]).
 *
 * 4. Closed forms: F(t) = 0 for t >= L = sum eps_i k_i (the largest finite
 *    loss) and F(t) = 1 - e^t for t <= -L (all S >= t and E_A[e^{-S}] = 1).
 *    F(t) >= 1 - e^t always.  The +inf mass 1 - P = -expm1(lk),
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
 *    it once; one delta evaluation costs O(bk) for one eps.  A single eps
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
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "acct/exact_rr.h"
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

/* x - S(y), S(y) = eps (2y - k): sign exact, relative error <= u (1 + 4u) */
static long double gap(const dpa_rr_dist *d, long double x, double y)
{
    return xmab(x, (long double)d->eps, 2.0L * y - (long double)d->k);
}

typedef struct acc { long double A, H, Ae, He; } acc;

/* Add w (relative error <= th) in front of the suffix sums (section 1). */
static void acc_add(acc *s, long double E2, long double w, long double th)
{
    long double wt = w * th;
    s->A += w;
    s->Ae += wt + U * s->A;
    s->H = w + E2 * s->H;
    s->He = E2 * s->He + wt + (2 * U + E_F) * s->H;
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

/* Mode and window estimate [*lo, *hi] of Bin(k, p(eps)); conservative
 * (the real window is at most a few points wider only when k is tiny). */
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

/* ---------------- grouping ---------------- */

typedef struct grp { double eps, k, elo, ehi, md; } grp;

static int cmp_grp(const void *a, const void *b)
{
    double wa = ((const grp *)a)->ehi - ((const grp *)a)->elo, wb = ((const grp *)b)->ehi - ((const grp *)b)->elo;
    return (wa > wb) - (wa < wb);
}

/* Distinct eps > 0 with total counts, sorted by window size (largest last);
 * *valid = 0 if some leaf is outside the method's domain.  Returns m. */
static size_t group(const dpa_leafset *L, grp *g, int *valid)
{
    size_t m = 0;
    *valid = L->all_rr;
    for (size_t i = 0; i < L->n; i++) {
        double e = L->v[i].rr_eps, dl = L->v[i].rr_delta, k = L->v[i].count;
        if (!(e >= 0 && isfinite(e) && dl >= 0 && dl <= 1 && k >= 1 && isfinite(k))) *valid = 0;
        if (!(e > 0 && isfinite(e))) continue;
        size_t j = 0;
        while (j < m && g[j].eps != e) j++;
        if (j == m) g[m++] = (grp){e, 0, 0, 0, 0};
        g[j].k += k;
    }
    for (size_t j = 0; j < m; j++) window_est(g[j].k, g[j].eps, &g[j].md, &g[j].elo, &g[j].ehi);
    qsort(g, m, sizeof *g, cmp_grp);
    return m;
}

static double bk_of(const grp *g)
{
    return fmax(1.0, ceil((g->ehi - g->elo + 1) / MAX_CKPT));
}

/* 0: not applicable, 1: tables, 2: Chernoff fallback (one eps) */
static int plan(const grp *g, size_t m)
{
    double steps = 0;
    for (size_t j = 0; j < m; j++) steps += g[j].ehi - g[j].elo + 1;
    if (m <= 1) return steps <= MAX_STEPS ? 1 : 2;
    if (!(steps <= MAX_STEPS)) return 0;
    double cost = bk_of(&g[m - 1]);
    for (size_t j = 0; j + 1 < m; j++) cost *= g[j].ehi - g[j].elo + 1;
    return cost <= DPA_RR_MAX_LATTICE;
}

int dpa_rr_applicable(const dpa_leafset *L)
{
    if (!L || !L->all_rr) return 0;
    grp *g = malloc((L->n ? L->n : 1) * sizeof *g);
    if (!g) return 0;
    int valid;
    size_t m = group(L, g, &valid);
    int ok = valid && plan(g, m) > 0;
    free(g);
    return ok;
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
    long double Abe = (thmax + U * nb) * Ab, Hbe = (thmax + (2 * U + E_F) * nb) * Hb;
    s->A = Ab + s->A;
    s->Ae = Abe + s->Ae + U * s->A;
    s->H = Hb + d->E2b * s->H;
    s->He = Hbe + d->E2b * s->He + (2 * U + E_F) * s->H;
}

/* section 1 */
static dpa_status dist_build(dpa_rr_dist *d, const grp *g, double *budget, dpa_error *err)
{
    long double e = g->eps;
    double k = g->k;
    d->eps = g->eps;
    d->k = k;
    d->E = expl(e);
    d->E2 = expl(-2 * e);
    d->th = tanhl(0.5L * e);
    d->bk = bk_of(g);
    if (d->bk > MAX_BK) return dpa_error_set(err, DPA_ENOMEM, "exact method: window too large");
    d->E2b = expl(-2 * e * (long double)d->bk);
    d->c1 = C1;
    double md = g->md;
    d->md = md;
    long long bk = (long long)d->bk;
    size_t cap_up = (size_t)(fmax(0, g->ehi - md) / d->bk) + 4, cap_dn = (size_t)(fmax(0, md - g->elo) / d->bk) + 4;
    d->up = malloc(cap_up * sizeof *d->up);
    d->dn = malloc(cap_dn * sizeof *d->dn);
    if (!d->up || !d->dn) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    long double buf[MAX_BK];
    long double T_hi = 0, T_lo = 0, E = d->E, E2 = d->E2;
    const long double rinc = (1 + 2 * U + E_F) * ERRSLACK; /* true ratio <= computed * rinc */
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
        d->up[j].Ge = ld_up((thmax + (2 * U + E_F) * nb) * Hb);
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
        long double Ge = d->E2b * n->Ge + (long double)c->Ge + (2 * U + E_F) * G;
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
    long double gs = floorl((x / d->eps + d->k) * 0.5L) + 1;
    double s = !(gs > d->lo) ? d->lo : !(gs < d->hi) ? d->hi : (double)gs;
    while (s > d->lo && gap(d, x, s - 1) < 0) s -= 1;
    while (!(gap(d, x, s) < 0)) s += 1; /* ends at hi at the latest */
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
        for (double y = end; y > s; y -= 1) acc_add(&a, d->E2, buf[(long long)(y - c0)], (y - d->md) * d->c1);
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
            acc_add(&a, d->E2, w, (d->md - y) * d->c1);
        }
        ws = w;
    }
    long double th = fabsl((long double)s - d->md) * d->c1;
    long double X = -expm1l(u), Eu = expl(u);
    long double rX = E_F + 2 * U, rE = E_F + 2 * U * fabsl(u);
    long double G1 = d->E2 * a.H;
    long double eG1 = (U + E_F) * G1 + d->E2 * a.He;
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
         * relative error u (1 + 4u): E_F + 2u, the product u, the weight
         * theta.  Past the mode, once the geometric bound of the rest
         * (terms <= weights, true ratios <= rb) is below 2^-70 of the sum,
         * stop and count that bound as error.  At most DIRECT_MAX terms,
         * else the table result stands. */
        long double sum = 0, es = 0, rem = -1;
        const long double rinc = (1 + 2 * U + E_F) * ERRSLACK;
        int n = 0;
        for (double y = s; y <= d->hi && n < DIRECT_MAX; y += 1, n++) {
            long double w = dist_w(d, y), th = fabsl((long double)y - d->md) * d->c1;
            long double term = w * -expm1l(gap(d, x, y));
            sum += term;
            es += term * (th + E_F + 3 * U) + U * sum;
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
    long double sh = 0, sl = 0, eh = 0, el = 0, Lr = c->Lrest[i + 1] * (1 + 4 * U);
    for (double y = d->hi; y >= d->lo; y -= 1) {
        long double s = (long double)d->eps * (2.0L * y - (long double)d->k);
        long double xn = x - s;
        long double dxn = (dx + U * fabsl(s) + U * fabsl(xn)) * (1 + 4 * U);
        /* every remaining loss is <= Lrest[i + 1]: no contribution */
        if (xn - dxn >= Lr) continue;
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
    else if (c->m == 1) {
        beyond = xmab(t, c->d[0].eps, c->d[0].k) >= 0;  /* t >= eps k (exact sign) */
        below = xmab(t, -c->d[0].eps, c->d[0].k) <= 0;  /* t <= -eps k */
    } else {
        beyond = t >= c->Lrest[0];
        below = -(long double)t >= c->Lrest[0];
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
    if (t < 0 && *flo < Xlo) *flo = Xlo; /* F >= 1 - e^t */
    if (*flo > *fhi) *flo = *fhi;
}

/* delta(t) in [inf_lo + y_lo, inf_up + y_up] (exact sums of the long
 * doubles), and delta(t) >= fl_ (1 - e^t for t < 0, else 0) */
typedef struct dparts { long double inf_up, y_up, inf_lo, y_lo, fl_; } dparts;

static void delta_parts(const dpa_rr_comp *c, double t, dparts *p)
{
    long double fhi, flo;
    F_bounds(c, t, &fhi, &flo);
    p->inf_up = c->inf_up;
    p->inf_lo = c->inf_lo;
    p->y_up = fhi > 0 ? c->keep_up * fhi * (1 + 4 * U) : 0;
    p->y_lo = flo > 0 ? c->keep_lo * flo * (1 - 4 * U) : 0;
    p->fl_ = t < 0 ? -expm1l((long double)t) * (1 - E_F - 4 * U) : 0;
}

/* delta(t) in [*dl, *du] (long double) */
static void delta_ld(const dpa_rr_comp *c, double t, long double *du, long double *dl)
{
    dparts p;
    delta_parts(c, t, &p);
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
    delta_parts(s->c, t, &d);
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
    memset(c, 0, sizeof *c);
}

/* section 4: the +inf mass */
static void inf_mass(dpa_rr_comp *c, const dpa_leafset *L)
{
    long double lk = 0;
    size_t n = 0, ones = 0;
    int full = 0;
    double single = 0;
    for (size_t i = 0; i < L->n; i++) {
        double dl = L->v[i].rr_delta, k = L->v[i].count;
        if (!(dl > 0)) continue;
        n++;
        if (dl >= 1) full = 1;
        else lk += (long double)k * log1pl(-(long double)dl);
        if (k == 1) ones++, single = dl;
    }
    if (n == 0) {
        c->inf_lo = c->inf_up = 0;
        c->keep_lo = c->keep_up = 1;
    } else if (full) {
        c->inf_lo = c->inf_up = 1;
        c->keep_lo = c->keep_up = 0;
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

dpa_status dpa_rr_build(dpa_rr_comp *c, const dpa_leafset *L, dpa_error *err)
{
    grp *g = malloc((L->n ? L->n : 1) * sizeof *g);
    if (!g) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    int valid;
    size_t m = group(L, g, &valid);
    int pl = valid ? plan(g, m) : 0;
    if (!pl) {
        free(g);
        return dpa_error_set(err, DPA_EUNSUPPORTED, "exact method: this composition of (eps, delta) steps "
                                                    "is outside the method's limits; use method pld");
    }
    inf_mass(c, L);
    c->m = m;
    c->d = calloc(m ? m : 1, sizeof *c->d);
    c->Lrest = calloc(m + 1, sizeof *c->Lrest);
    if (!c->d || !c->Lrest) {
        free(g);
        return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    }
    /* Lrest[i] >= sum_{j >= i} eps_j k_j: the product, the sum and the
     * scaling each round (relative u): (1 - u)^3 (1 + 4u) > 1 */
    for (size_t i = m; i-- > 0;)
        c->Lrest[i] = (c->Lrest[i + 1] + (long double)g[i].eps * g[i].k) * (1 + 4 * U);
    c->tmax = ld_up(c->Lrest[0]);
    c->loose = pl == 2;
    dpa_status st = DPA_OK;
    double budget = 2 * MAX_STEPS;
    for (size_t i = 0; i < m && !st; i++) {
        dpa_rr_dist *d = &c->d[i];
        if (c->loose) {
            d->eps = g[i].eps;
            d->k = g[i].k;
            d->E = expl((long double)d->eps);
            d->th = tanhl(0.5L * d->eps);
            d->c1 = C1;
        } else st = dist_build(d, &g[i], &budget, err);
    }
    free(g);
    return st;
}
