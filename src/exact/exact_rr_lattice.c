/* The lattice of one factor of an (eps, delta) composition: the weight
 * ratios of the recurrence, the exact-sign gap x - S(y) between a threshold
 * and a lattice point (error-free products and sums, an exact integer sum
 * when they cannot certify the sign), and the cell of a threshold.  Used by
 * the evaluation (sections 2, 3), the closed forms (section 4) and the
 * Chernoff fallback (section 6).  SPDX-License-Identifier: GPL-3.0-or-later */
#include <limits.h>
#include <string.h>
#include "exact/exact_rr_internal.h"

/* w(y + 1) / w(y) and w(z - 1) / w(z); the same expressions everywhere */
long double dpa_rr_ratio_up(const dpa_rr_dist *d, double y)
{
    return ((long double)(d->k - y) * d->E) / ((long double)y + 1);
}

long double dpa_rr_ratio_dn(const dpa_rr_dist *d, double z)
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
long double dpa_rr_xmab(long double x, long double a, long double b)
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
 * a b = *p + *e (Dekker/Veltkamp as in dpa_rr_xmab), a + b = *s + *e (TwoSum). */
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
long double dpa_rr_gap(const dpa_rr_dist *d, long double x, double y)
{
    if (!d->gen) return dpa_rr_xmab(x, (long double)d->eps, 2.0L * y - (long double)d->k);
    return gen_gap(x, (long double)d->whi, (long double)y, (long double)d->wlo, (long double)d->k - (long double)y);
}

/* The first y in [lo, hi] with S(y) > x (x < S(hi) required), by exact signs */
double dpa_rr_locate(const dpa_rr_dist *d, long double x)
{
    if (!d->gen) {
        long double gs = floorl((x / d->eps + d->k) * 0.5L) + 1;
        double s = !(gs > d->lo) ? d->lo : !(gs < d->hi) ? d->hi : (double)gs;
        while (s > d->lo && dpa_rr_gap(d, x, s - 1) < 0) s -= 1;
        while (!(dpa_rr_gap(d, x, s) < 0)) s += 1; /* ends at hi at the latest */
        return s;
    }
    /* S(y) = k w_lo + y D: a guess, a few exact steps, else bisection */
    long double gs = d->D > 0 ? floorl((x - (long double)d->k * d->wlo) / d->D) + 1 : d->hi;
    double s = !(gs > d->lo) ? d->lo : !(gs < d->hi) ? d->hi : (double)gs;
    int n = 0, ok = 1;
    while (s > d->lo && dpa_rr_gap(d, x, s - 1) < 0) {
        s -= 1;
        if (++n > 4) { ok = 0; break; }
    }
    if (ok)
        while (!(dpa_rr_gap(d, x, s) < 0)) {
            s += 1;
            if (++n > 4) { ok = 0; break; }
        }
    if (ok) return s;
    /* invariant: S(b) > x; S(a) <= x or a = lo - 1 */
    double a = d->lo - 1, b = d->hi;
    while (b - a > 1) {
        double mid = floor(0.5 * (a + b));
        if (dpa_rr_gap(d, x, mid) < 0) b = mid;
        else a = mid;
    }
    return b;
}
