/* Long double complex values carried with a bound on the modulus of their
 * error (sums, real scalings, quotients, log(1 + z)), exact phases
 * 2 pi r / n from integer residues, and an in-place radix-2 FFT; the
 * numerics of the heterogeneous bracket (section 7; its round-off
 * analysis: exact_rr_het_fourier.c).  SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdlib.h>
#include "exact/exact_rr_het_internal.h"

cx dpa_cx_add(cx a, cx b)
{
    cx r = {a.re + b.re, a.im + b.im, 0};
    r.e = a.e + b.e + U * cx_l1(r);
    return r;
}

cx dpa_cx_sub(cx a, cx b)
{
    cx r = {a.re - b.re, a.im - b.im, 0};
    r.e = a.e + b.e + U * cx_l1(r);
    return r;
}

/* a times a real s with absolute error es */
cx dpa_cx_scale(cx a, long double s, long double es)
{
    cx r = {a.re * s, a.im * s, 0};
    r.e = fabsl(s) * a.e + es * (cx_l1(a) + a.e) + U * cx_l1(r);
    return r;
}

/* a / b: the true quotient is within (da + |q| db) / (|b| - db) of a / b;
 * rounding <= 8u |a| / |b|
 * (|b| >= max(|re|, |im|)); e = inf when b's error reaches its modulus */
cx dpa_cx_div(cx a, cx b)
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
uint64_t dpa_het_mulmod(uint64_t a, uint64_t b, uint64_t n)
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
void dpa_cx_cis_m1(uint64_t r, uint64_t n, cx *cm1, cx *sn)
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

/* In-place radix-2 FFT of length n = 2^p (forward, e^{-2 pi i k j / n}),
 * double precision, twiddles from a table of sin/cos (1 ulp). */
int dpa_het_fft_r2(double *re, double *im, size_t n)
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
cx dpa_cx_log1p_parts(long double x, long double y, long double ex, long double ey)
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
