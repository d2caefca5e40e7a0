/* Composition of grid measures on one final grid with FFTW.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * 1. Window: the finite part of the composition is a sum of independent
 *    terms; its mass above U is at most exp(sum_j k_j log M_j(lam) - lam U) for
 *    any lam > 0 (Chernoff), M_j the (sub-probability) moment generating
 *    function of factor j, computed exactly from its grid masses.  U (and L,
 *    with lam < 0) are the smallest such ends over a few lam around the
 *    Gaussian-optimal sqrt(2 log(1/tau) / variance).
 * 2. Transforms: each factor is folded modulo N around its own centre c_j and
 *    transformed once (r2c).  Repeats enter as k_j log X_j(f), so the cost does
 *    not depend on k_j.  For large k_j the low frequencies, where |X|^k is not
 *    negligible, need 1 - X to relative accuracy: there X is recomputed as the
 *    direct sum of its bulk (within BULK_HALF points of the centre, where
 *    e^{-i theta d} - 1 is formed with sines) plus the FFT of the small tail.
 * 3. The product exp(sum_j k_j log X_j) is inverted (c2r) and read back into
 *    the window [lo, lo + N); circular wrap-around moves at most the mass
 *    outside the window, which the caller adds to the error budget.
 */
#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include "pld/pld.h"

/* C11's CMPLX is missing from some toolchains (clang with older glibc) */
#ifndef CMPLX
#define CMPLX(x, y) __builtin_complex((double)(x), (double)(y))
#endif

/* Repeat counts from which the accurate low-frequency path is used: below it
 * k * (FFT relative error ~ 1e-15) is negligible next to any delta of interest. */
#define ACCURATE_MIN_COUNT 32.0
/* Frequencies with k |log |X|| below this are "important" (|X|^k > e^{-25},
 * about 1.4e-11) and get the accurate path; elsewhere the FFT's relative
 * error, amplified k times, multiplies a value below 1.4e-11 and is counted
 * in the round-off allowance. */
#define IMPORTANT_LOG 25.0
/* At most this many frequencies per factor get the accurate path. */
#define IMPORTANT_MAX 8192
/* A frequency whose accumulated log-magnitude falls below this is set to 0
 * and skipped from then on: all such frequencies together move a delta by at
 * most N e^{DEAD_LOG} (about 1e-20 for N = 1e6), which is added to the
 * round-off allowance. */
#define DEAD_LOG (-60.0)
#define DEAD_P2 7.667648073722e-53 /* e^{2 DEAD_LOG} */
/* The directly summed bulk leaves at most this fraction of the mass to the
 * FFT, whose absolute error is then ~1e-3 u per frequency. */
#define BULK_TAIL 1e-3
/* Exact sin/cos anchors in the direct bulk sum, every this many points: the
 * angle-addition drift between anchors enters the round-off allowance
 * (ACCURATE_DRIFT); at 32 it was the largest part of the allowance of long
 * Laplace compositions, at 8 it is not (4 gains little). */
#define ANCHOR_EVERY 8
/* Relative error (in u) of each term of the accurate path's direct sums:
 * the angle-addition sines and cosines drift by about 2 u per step from
 * their anchor (at most ANCHOR_EVERY steps), their squares and products by
 * twice that, plus the products and additions themselves. */
#define ACCURATE_DRIFT (4.0 * ANCHOR_EVERY + 8.0)
/* Half width (grid points) of the bulk summed directly. */
#define BULK_HALF 2048
/* Chernoff parameters tried: lam0 * 2^r for r in [LO, HI] by STEP (a
 * factor 4 apart: the window end is within a few percent of the optimum). */
#define LAMBDA_SCAN_LO (-7)
#define LAMBDA_SCAN_HI 1
#define LAMBDA_SCAN_STEP 2
/* the fixed scan covers lam = 2^(r + SHIFT) for the same r: 2^-1 .. 2^7 */
#define LAMBDA_FIXED_SHIFT 6
/* A third scan, only when the first two leave a window above max_n:
 * lam0 2^r for r = HEAVY_LO .. SCAN_LO - 1.  A sum of T heavy-tailed terms
 * bounded by W_max (the lattice of random allocation's W = e^z,
 * docs/sampling.md §4) has its Chernoff optimum near lam = log(1/tau) / (a
 * few W_max), far below the Gaussian lam0: there the window is the sum's
 * mean plus a few W_max instead of T W_max.  Cases whose window fits after
 * the first two scans never reach it (their windows are unchanged). */
#define LAMBDA_HEAVY_LO (-41)
/* Unit round-off and the constant of the a-posteriori round-off allowance
 * (per frequency: C u (log2 N + sum_j (k_j |log X_j| + 1)) relative error,
 * C covering the FFT's normwise constant and the complex log/exp). */
#define ROUNDOFF_C 8.0

void dpa_composed_free(dpa_composed *c)
{
    if (!c) return;
    if (!c->borrowed) free(c->mass);
    c->borrowed = 0;
    free(c->D);
    free(c->E);
    c->mass = c->D = c->E = NULL;
}

typedef struct fstat {
    double total, mean, var;
    long double total_ld;   /* the total, summed in long double */
    size_t first, last;   /* nonzero range of the pmf */
    long long centre;     /* grid index of the folding centre */
} fstat;

static void factor_stats(const dpa_grid_pmf *g, fstat *s)
{
    memset(s, 0, sizeof *s);
    size_t first = g->n, last = 0;
    /* long double: the total enters 1 - X(0) of the accurate path, which
     * the k-th power amplifies k times */
    long double t = 0, m1 = 0;
    for (size_t i = 0; i < g->n; i++) {
        double m = g->mass[i];
        if (m > 0) {
            if (first == g->n) first = i;
            last = i;
            t += m;
            m1 += (long double)m * (long double)i;
        }
    }
    s->total = (double)t;
    s->total_ld = t;
    if (t <= 0) return;
    double mean = (double)(m1 / t), var = 0;
    for (size_t i = first; i <= last; i++) {
        double d = (double)i - mean;
        var += g->mass[i] * d * d;
    }
    s->first = first;
    s->last = last;
    s->mean = (mean + (double)g->lo) * g->step;
    s->var = var / t * g->step * g->step;
    s->centre = g->lo + (long long)llround(mean);
}

/* Upper bound on log M(lam) = log sum m_i e^{lam z_i}, computed from the end
 * the exponent grows towards so nothing overflows; the relative error of the
 * running products is covered by a slack of n u.  Four interleaved running
 * products (stepping by r^4) keep the loop off one multiply's latency. */
static double log_mgf(const dpa_grid_pmf *g, const fstat *s, double lam)
{
    double step = g->step;
    size_t n = s->last - s->first + 1;
    const double *m = g->mass + s->first;
    int down = lam > 0; /* sum from the top: terms e^{-lam (z_last - z_i)} <= 1 */
    double r = exp(-fabs(lam) * step), r2 = r * r, r4 = r2 * r2;
    double t0 = 1.0, t1 = r, t2 = r2, t3 = r2 * r, a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        if (down) {
            a0 += m[n - 1 - i] * t0;
            a1 += m[n - 2 - i] * t1;
            a2 += m[n - 3 - i] * t2;
            a3 += m[n - 4 - i] * t3;
        } else {
            a0 += m[i] * t0;
            a1 += m[i + 1] * t1;
            a2 += m[i + 2] * t2;
            a3 += m[i + 3] * t3;
        }
        t0 *= r4;
        t1 *= r4;
        t2 *= r4;
        t3 *= r4;
    }
    for (double t = t0; i < n; i++) {
        a0 += (down ? m[n - 1 - i] : m[i]) * t;
        t *= r;
    }
    double acc = (a0 + a1) + (a2 + a3);
    double zref = (double)(g->lo + (long long)(down ? s->last : s->first)) * step;
    /* running products: ~ (i/4 + 3) roundings each, relative: 2 n u covers them */
    return lam * zref + log(acc) + (double)(n + 8) * 2 * DPA_UNIT_ROUNDOFF;
}

/* FFT length for a window of n points: the smallest m * 2^b >= n with m in
 * {8, 9, 10, 12, 14} (7-smooth, at most 20% above n).  The coarse set makes
 * the windows of the four compositions of an accountant (two directions,
 * upper and lower) share one length, so FFTW plans once per accountant. */
static size_t plan_size(size_t n)
{
    static const size_t mult[] = {8, 9, 10, 12, 14};
    size_t base = 2;
    while (16 * base < n) base *= 2;
    for (;;) {
        for (size_t i = 0; i < sizeof mult / sizeof *mult; i++)
            if (mult[i] * base >= n) return mult[i] * base;
        base *= 2;
    }
}

static long long mod_ll(long long a, long long n)
{
    long long r = a % n;
    return r < 0 ? r + n : r;
}

/* Fold masses m[first..last] of grid measure g into buf (length N, all
 * zero) at positions (lo + i - centre) mod N, skipping [skip_lo, skip_hi]
 * (empty if skip_lo > skip_hi); returns their sum in long double.  One
 * division for the start, then an index that wraps. */
static long double fold(double *buf, size_t N, const dpa_grid_pmf *g, size_t first, size_t last, long long centre,
                        size_t skip_lo, size_t skip_hi)
{
    long double sum = 0;
    size_t idx = (size_t)mod_ll(g->lo + (long long)first - centre, (long long)N);
    for (size_t i = first; i <= last; i++) {
        if (i < skip_lo || i > skip_hi) {
            buf[idx] += g->mass[i];
            sum += g->mass[i];
        }
        if (++idx == N) idx = 0;
    }
    return sum;
}

/* Zero what fold wrote (support of first..last from the same start), or
 * all of buf when the support covers it. */
static void unfold(double *buf, size_t N, const dpa_grid_pmf *g, size_t first, size_t last, long long centre)
{
    size_t len = last - first + 1;
    if (len >= N) {
        memset(buf, 0, N * sizeof *buf);
        return;
    }
    size_t idx = (size_t)mod_ll(g->lo + (long long)first - centre, (long long)N);
    size_t head = N - idx < len ? N - idx : len;
    memset(buf + idx, 0, head * sizeof *buf);
    if (head < len) memset(buf, 0, (len - head) * sizeof *buf);
}

/* log(1 + z) for complex z, accurate when |z| is small. */
static double complex clog1p(double complex z)
{
    double x = creal(z), y = cimag(z);
    double re = 0.5 * log1p(2 * x + x * x + y * y);
    double im = atan2(y, 1 + x);
    return CMPLX(re, im);
}

void dpa_compose_ws_free(dpa_compose_ws *ws)
{
    if (!ws) return;
    free(ws->errsum);
    fftw_free(ws->buf);
    fftw_free(ws->X);
    fftw_free(ws->Xt);
    fftw_free(ws->acc);
    fftw_free(ws->prod);
    memset(ws, 0, sizeof *ws);
}

/* Make the workspace hold FFT length n. */
/* Fault in the pages of a large fresh array in one system call (Linux
 * MADV_POPULATE_WRITE) instead of one page fault per 4 KiB page on first
 * touch; a kernel without it, or any failure, just leaves the faults to
 * happen as usual. */
static void prefault(void *p, size_t bytes)
{
#ifdef MADV_POPULATE_WRITE
    if (!p || bytes < ((size_t)1 << 20)) return;
    uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095, e = ((uintptr_t)p + bytes) & ~(uintptr_t)4095;
    if (e > a) (void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
#else
    (void)p;
    (void)bytes;
#endif
}

static dpa_status ws_reserve(dpa_compose_ws *ws, size_t n, dpa_error *err)
{
    if (ws->cap >= n) return DPA_OK;
    dpa_compose_ws_free(ws);
    size_t nh = n / 2 + 1;
    ws->buf = dpa_fft_alloc_real(n);
    ws->X = dpa_fft_alloc_complex(nh);
    prefault(ws->buf, n * sizeof *ws->buf);
    prefault(ws->X, nh * sizeof *ws->X);
    if (!ws->buf || !ws->X) {
        dpa_compose_ws_free(ws);
        return dpa_error_set(err, DPA_ENOMEM, "out of memory (FFT length %zu)", n);
    }
    ws->cap = n;
    return DPA_OK;
}

/* The optional arrays (log accumulators of several factors, products of
 * single factors, tails of repeated ones), allocated at the workspace's
 * length on first use. */
static fftw_complex *ws_optional(dpa_compose_ws *ws, fftw_complex **slot, dpa_error *err)
{
    if (!*slot && !(*slot = dpa_fft_alloc_complex(ws->cap / 2 + 1)))
        dpa_error_set(err, DPA_ENOMEM, "out of memory (FFT length %zu)", ws->cap);
    else if (*slot)
        prefault(*slot, (ws->cap / 2 + 1) * sizeof **slot);
    return *slot;
}

static double *ws_errsum(dpa_compose_ws *ws, dpa_error *err)
{
    if (!ws->errsum && !(ws->errsum = malloc((ws->cap / 2 + 1) * sizeof *ws->errsum)))
        dpa_error_set(err, DPA_ENOMEM, "out of memory (FFT length %zu)", ws->cap);
    return ws->errsum;
}

/* a[from .. to) reversed in place */
static void reverse(double *a, size_t from, size_t to)
{
    while (to > from + 1) {
        double t = a[from];
        a[from++] = a[--to];
        a[to] = t;
    }
}

/* Step 1 of the top comment for factors f with statistics st (filled
 * here): out->inf, and unless some factor has no finite mass (*zero_out)
 * the window's first grid index out->lo, its length *len_out (points),
 * the Chernoff ends lu[0], lu[1] (loss units) and the tails the window
 * leaves (out->tail_above, out->tail_outside). */
static dpa_status compose_window(const dpa_factor *f, size_t nf, fstat *st, double tail_tau, int lower, size_t max_n,
                                 dpa_composed *out, double *len_out, double *lu, int *zero_out, dpa_error *err)
{
    double step = f[0].pmf->step;
    /* +inf masses compose exactly: with factor totals T_j = fin_j + inf_j,
     * the composition has T^k = prod T_j^{k_j} in all and prod fin_j^{k_j}
     * finite, so inf = T^k (1 - prod (1 - inf_j / T_j)^{k_j}); T_j is 1 up to
     * round-off and dropped mass */
    double logtot = 0, logkeep = 0, mean = 0, var = 0, zmin = 0, zmax = 0;
    int zero = 0;
    for (size_t j = 0; j < nf; j++) {
        const dpa_grid_pmf *g = f[j].pmf;
        factor_stats(g, &st[j]);
        double T = st[j].total + g->inf;
        if (T > 0) {
            /* a lower measure must not overstate the +inf mass: a factor
             * total above 1 (FFT round-off in a coarsened block) only
             * inflates it, so the lower side uses totals capped at 1 */
            double Tc = lower ? fmax(T, 1.0) : T;
            if (!lower) logtot += f[j].count * log(T);
            logkeep += f[j].count * log1p(-fmin(g->inf / Tc, 1.0));
        }
        if (st[j].total <= 0) { zero = 1; continue; }
        mean += f[j].count * st[j].mean;
        var += f[j].count * st[j].var;
        zmin += f[j].count * (double)(g->lo + (long long)st[j].first) * step;
        zmax += f[j].count * (double)(g->lo + (long long)st[j].last) * step;
    }
    out->inf = exp(logtot) * -expm1(logkeep);
    *zero_out = zero;
    if (zero) return DPA_OK;

    /* ---- window from Chernoff bounds ---- */
    double ltau = log(tail_tau), L = zmin, U = zmax;
    double tail_hi = 0, tail_lo = 0;
    if (var > 0) {
        /* U(lam) = (sum_j k_j log M_j(lam) - log tau) / lam is quasi-convex in
         * lam; scan lam0 * 2^r (lam0 Gaussian-optimal), heavy right tails
         * want much smaller lam than the variance suggests.  When the variance
         * says little (a near-degenerate measure with a far, tiny tail), the
         * window can still be wide: then scan lam = 2^r in loss units too. */
        double lam0 = sqrt(-2.0 * ltau / var);
        double bestU = INFINITY, bestL = -INFINITY;
        for (int pass = 0; pass < 3; pass++) {
            int lo = pass < 2 ? LAMBDA_SCAN_LO : LAMBDA_HEAVY_LO, hi = pass < 2 ? LAMBDA_SCAN_HI : LAMBDA_SCAN_LO - 1;
            for (int r = lo; r <= hi; r += LAMBDA_SCAN_STEP) {
                double lam = (pass == 1 ? 1.0 : lam0) * ldexp(1.0, pass == 1 ? r + LAMBDA_FIXED_SHIFT : r);
                double su = 0, sl = 0;
                for (size_t j = 0; j < nf; j++) {
                    su += f[j].count * log_mgf(f[j].pmf, &st[j], lam);
                    sl += f[j].count * log_mgf(f[j].pmf, &st[j], -lam);
                }
                bestU = fmin(bestU, (su - ltau) / lam);
                bestL = fmax(bestL, -(sl - ltau) / lam);
            }
            if (fmin(bestU, zmax) - fmax(bestL, zmin) <= (double)max_n * step) break;
        }
        if (bestU < U) { U = bestU; tail_hi = tail_tau; }
        if (bestL > L) { L = bestL; tail_lo = tail_tau; }
        if (U < mean) U = mean;
        if (L > mean) L = mean;
    }
    double flo = floor(L / step), fhi = ceil(U / step);
    if (!(fabs(flo) < 4e18 && fabs(fhi) < 4e18))
        return dpa_error_set(err, DPA_ENOMEM, "composed privacy loss range [%g, %g] is too wide for grid step %g", L, U, step);
    *len_out = fhi - flo + 1;
    lu[0] = L;
    lu[1] = U;
    out->lo = (long long)flo;
    out->tail_above = tail_hi;
    out->tail_outside = tail_hi + tail_lo;
    return DPA_OK;
}

dpa_status dpa_compose(dpa_fft *fft, dpa_compose_ws *ws, const dpa_factor *f, size_t nf, double tail_tau,
                       int lower, size_t max_n, dpa_composed *out, dpa_error *err)
{
    return dpa_compose_flags(fft, ws, f, nf, tail_tau, lower, max_n, 0, out, err);
}

dpa_status dpa_compose_flags(dpa_fft *fft, dpa_compose_ws *ws, const dpa_factor *f, size_t nf, double tail_tau,
                             int lower, size_t max_n, unsigned flags, dpa_composed *out, dpa_error *err)
{
    int lend = (flags & DPA_COMPOSE_LENT) != 0;
    memset(out, 0, sizeof *out);
    if (nf == 0) return dpa_error_set(err, DPA_EINVAL, "compose: no factors");
    double step = f[0].pmf->step;
    out->step = step;
    fstat *st = calloc(nf, sizeof *st);
    if (!st) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    dpa_status rc = DPA_OK;
    double *buf = NULL, *errsum = NULL;
    fftw_complex *X = NULL, *Xt = NULL, *acc = NULL, *prod = NULL;

    int zero = 0;
    double len = 0, lu[2] = {0, 0};
    if ((rc = compose_window(f, nf, st, tail_tau, lower, max_n, out, &len, lu, &zero, err))) goto done;
    if (zero) {
        /* some factor has no finite mass: the composition is all at +inf */
        out->lo = 0;
        out->n = 2;
        out->mass = calloc(2, sizeof *out->mass);
        if (!out->mass) rc = dpa_error_set(err, DPA_ENOMEM, "out of memory");
        goto done;
    }
    size_t N = (len <= (double)max_n) ? plan_size((size_t)len) : 0;
    if (N > max_n && len <= (double)max_n) N = dpa_fft_good_size((size_t)len);
    if (N == 0 || N > max_n) {
        rc = dpa_error_set(err, DPA_ENOMEM,
                           "the composed privacy loss spans [%g, %g]: %.3g grid points at step %g exceed the limit of %zu; "
                           "use a larger grid step, a lower accuracy or a larger --max-grid",
                           lu[0], lu[1], len, step, max_n);
        goto done;
    }
    if (N < 2) N = 2;
    out->n = N;

    size_t nh = N / 2 + 1;
    if ((rc = ws_reserve(ws, N, err))) goto done;
    buf = ws->buf;
    X = ws->X;
    /* factors with count 1 multiply into prod (cheap); repeated factors add
     * k log X into acc; the transform of the composition is prod * e^{acc}.
     * One repeated factor (lean): e^{k log X} is formed frequency by
     * frequency into X itself, with its round-off, and neither acc nor the
     * error counts are stored (less memory to fault in) */
    int any_single = 0, any_accurate = 0, lean = (nf == 1 && f[0].count != 1);
    for (size_t j = 0; j < nf; j++) {
        any_single |= (f[j].count == 1);
        any_accurate |= (f[j].count >= ACCURATE_MIN_COUNT && !(flags & DPA_COMPOSE_ROUGH));
    }
    if ((any_single && !(prod = ws_optional(ws, &ws->prod, err))) ||
        (any_accurate && !(Xt = ws_optional(ws, &ws->Xt, err))) ||
        (!lean && (!(acc = ws_optional(ws, &ws->acc, err)) || !(errsum = ws_errsum(ws, err))))) {
        rc = DPA_ENOMEM;
        goto done;
    }
    for (size_t k = 0; !lean && k < nh; k++) {
        acc[k] = 0;
        errsum[k] = 0;
        if (prod) prod[k] = 1;
    }
    double lg = log2((double)N), r2 = 0;

    long long Cmod = 0;
    memset(buf, 0, N * sizeof *buf);
    for (size_t j = 0; j < nf; j++) {
        const dpa_grid_pmf *g = f[j].pmf;
        const fstat *s = &st[j];
        double k = f[j].count;
        /* buf holds the previous factor's fold (all of it, or its tails) */
        if (j > 0) unfold(buf, N, f[j - 1].pmf, st[j - 1].first, st[j - 1].last, st[j - 1].centre);
        fold(buf, N, g, s->first, s->last, s->centre, 1, 0);
        if ((rc = dpa_fft_r2c(fft, N, buf, X))) { dpa_error_set(err, rc, "FFT failed (length %zu)", N); goto done; }
        Cmod = mod_ll(Cmod + mod_ll((long long)fmod(k, (double)N), (long long)N) *
                                 mod_ll(s->centre, (long long)N), (long long)N);

        int accurate = (k >= ACCURATE_MIN_COUNT && !(flags & DPA_COMPOSE_ROUGH));
        long double tail_sum = 0;
        size_t bfirst = s->first, blast = s->last;
        if (accurate) {
            /* bulk = the smallest window around the centre holding all but
             * BULK_TAIL of the mass (at most BULK_HALF points each side);
             * the rest is transformed by FFT */
            long long ci = s->centre - g->lo;
            long long bf = ci, bl = ci;
            double inside = (ci >= (long long)s->first && ci <= (long long)s->last) ? g->mass[ci] : 0;
            while (inside < (1 - BULK_TAIL) * s->total && bl - ci < BULK_HALF) {
                if (bf > (long long)s->first) inside += g->mass[--bf];
                if (bl < (long long)s->last) inside += g->mass[++bl];
                if (bf <= (long long)s->first && bl >= (long long)s->last) break;
            }
            bfirst = (bf > (long long)s->first) ? (size_t)bf : s->first;
            blast = (bl < (long long)s->last) ? (size_t)bl : s->last;
            unfold(buf, N, g, s->first, s->last, s->centre);
            tail_sum = fold(buf, N, g, s->first, s->last, s->centre, bfirst, blast);
            if ((rc = dpa_fft_r2c(fft, N, buf, Xt))) { dpa_error_set(err, rc, "FFT failed (length %zu)", N); goto done; }
        }
        double tail_mass = (double)tail_sum;
        double deficit = (double)(1.0L - s->total_ld); /* +inf mass and anything dropped */
        size_t nimp = 0;
        if (k == 1) {
            for (size_t q = 0; q < nh; q++) {
                if (creal(acc[q]) < DEAD_LOG) continue;
                prod[q] *= X[q];
                errsum[q] += 2.0 + lg;
                double p2 = creal(prod[q]) * creal(prod[q]) + cimag(prod[q]) * cimag(prod[q]);
                if (p2 < DEAD_P2) acc[q] = CMPLX(-INFINITY, 0.0);
            }
            continue;
        }
        for (size_t q = 0; q < nh; q++) {
            double complex aq = lean ? 0 : acc[q];
            double eq = lean ? 0 : errsum[q];
            if (creal(aq) < DEAD_LOG) continue; /* product already underflows to 0 */
            double complex x = X[q];
            double a2 = creal(x) * creal(x) + cimag(x) * cimag(x);
            if (a2 == 0 || k * 0.5 * log(a2) < DEAD_LOG) {
                if (lean) X[q] = 0;
                else acc[q] = CMPLX(-INFINITY, 0.0);
                continue;
            }
            double complex lx;
            if (!accurate) {
                lx = clog(x);
                aq += k * lx;
                eq += k * (cabs(lx) + lg) + 1.0;
            } else if (nimp < IMPORTANT_MAX && k * -0.5 * log(a2) < IMPORTANT_LOG) {
                nimp++;
                /* sin and cos of h d, h = theta / 2, by angle addition from
                 * exact anchors every ANCHOR_EVERY points (|h d| < pi / 2
                 * here, so every term is positive: ~2 u per step) */
                double th = 2.0 * M_PI * (double)q / (double)N, re = 0, im = 0, sabs = 0;
                double h = 0.5 * th, sh1, ch1, sh = 0, ch = 1;
                sincos(h, &sh1, &ch1);
                for (size_t i = bfirst; i <= blast; i++) {
                    double d = (double)(g->lo + (long long)i - s->centre);
                    if ((i - bfirst) % ANCHOR_EVERY == 0) {
                        sincos(h * d, &sh, &ch);
                    } else {
                        double ns = sh * ch1 + ch * sh1;
                        ch = ch * ch1 - sh * sh1;
                        sh = ns;
                    }
                    re -= 2.0 * g->mass[i] * sh * sh;
                    im -= 2.0 * g->mass[i] * sh * ch;
                    sabs += g->mass[i] * (2.0 * sh * sh + 2.0 * fabs(sh * ch));
                }
                double complex z = CMPLX(re - deficit - tail_mass, im) + Xt[q];
                lx = clog1p(z);
                aq += k * lx;
                /* absolute error of z: the drifting sines and cosines
                 * (ACCURATE_DRIFT u relative per term, on the terms'
                 * magnitudes sabs), the tails' FFT (u log2 N of their mass),
                 * the last additions; log1p divides it by |1 + z| and adds a
                 * few u of |lx|.  eq counts errors in units of ROUNDOFF_C u. */
                double dz = DPA_UNIT_ROUNDOFF * (ACCURATE_DRIFT * sabs + (lg + 4) * tail_mass +
                                                 4 * (fabs(re) + fabs(im) + deficit) + 2 * cabs(z));
                double onez = cabs(1.0 + z);
                eq += k * (dz / (onez > 0.5 ? onez : 0.5) + 4 * DPA_UNIT_ROUNDOFF * cabs(lx)) /
                          (ROUNDOFF_C * DPA_UNIT_ROUNDOFF) + 1.0;
            } else {
                /* the FFT's error in X, relative ~ u log2 N, grows k-fold */
                lx = clog(x);
                aq += k * lx;
                eq += k * (cabs(lx) + lg) + 1.0;
            }
            if (!lean) {
                acc[q] = aq;
                errsum[q] = eq;
                continue;
            }
            /* lean: the composition's transform at q, and its round-off
             * (as in the general case below) */
            double complex y = (creal(aq) < DEAD_LOG) ? 0 : cexp(CMPLX(creal(aq), remainder(cimag(aq), 2 * M_PI)));
            double w = (q == 0 || 2 * q == N) ? 1.0 : 2.0;
            double e = cabs(y) * ROUNDOFF_C * DPA_UNIT_ROUNDOFF * (lg + eq);
            r2 += w * e * e;
            X[q] = y;
        }
    }

    /* ---- back to the loss domain ---- */
    /* Round-off: FFTs are normwise stable, |dPsi_q| <= C u (log2 N + e_q) |Psi_q|
     * with e_q the accumulated error count of frequency q; the inverse
     * transform divided by N maps an L2 error ||dPsi|| to ||dPsi|| / sqrt(N),
     * and a hockey-stick value sum_m w_m y_m with 0 <= w_m <= 1 moves by at
     * most sqrt(N) times that: |d delta| <= ||dPsi||_2 (over all N
     * frequencies, i.e. twice the half spectrum). */
    for (size_t q = 0; !lean && q < nh; q++) {
        double complex a = acc[q];
        double complex y = (creal(a) < DEAD_LOG) ? 0
                         : (prod ? prod[q] : 1) * cexp(CMPLX(creal(a), remainder(cimag(a), 2 * M_PI)));
        double w = (q == 0 || 2 * q == N) ? 1.0 : 2.0;
        double e = cabs(y) * ROUNDOFF_C * DPA_UNIT_ROUNDOFF * (lg + errsum[q]);
        r2 += w * e * e;
        X[q] = y;
    }
    double roundoff = sqrt(r2) + (double)N * exp(DEAD_LOG);
    if ((rc = dpa_fft_c2r(fft, N, X, buf))) { dpa_error_set(err, rc, "FFT failed (length %zu)", N); goto done; }
    double invN = 1.0 / (double)N, clamped = 0;
    size_t shift = (size_t)mod_ll(mod_ll(out->lo, (long long)N) - Cmod, (long long)N);
    if (lend) {
        /* the result stays in the workspace: scale and clamp, then rotate
         * left by shift in place (three reversals) */
        for (size_t m = 0; m < N; m++) {
            double v = buf[m] * invN;
            if (v < 0) { clamped -= v; v = 0; }
            buf[m] = v;
        }
        reverse(buf, 0, shift);
        reverse(buf, shift, N);
        reverse(buf, 0, N);
        out->mass = buf;
        out->borrowed = 1;
    } else {
        out->mass = malloc(N * sizeof *out->mass);
        if (!out->mass) { rc = dpa_error_set(err, DPA_ENOMEM, "out of memory"); goto done; }
        prefault(out->mass, N * sizeof *out->mass);
        for (size_t m = 0, i = shift; m < N; m++) {
            double v = buf[i] * invN;
            if (v < 0) { clamped -= v; v = 0; }
            out->mass[m] = v;
            if (++i == N) i = 0;
        }
    }
    out->roundoff = roundoff + clamped;
done:
    free(st);
    if (rc) dpa_composed_free(out);
    return rc;
}

/* ---------------- powers of a few factors on one transform ---------------- */

dpa_status dpa_powers_init(dpa_fft *fft, dpa_compose_ws *ws, const dpa_grid_pmf *const *g, size_t nf,
                           const double *ks, size_t nk, double tail_tau, int lower, size_t max_n, dpa_powers *p,
                           dpa_error *err)
{
    memset(p, 0, sizeof *p);
    if (nf == 0 || nf > DPA_POWERS_MAX) return dpa_error_set(err, DPA_EINVAL, "powers: 1 to %d factors", DPA_POWERS_MAX);
    dpa_factor f[DPA_POWERS_MAX];
    fstat st[DPA_POWERS_MAX];
    double len = 0;
    dpa_status rc = DPA_OK;
    for (size_t i = 0; i < nk; i++) {
        size_t nu = 0;
        for (size_t j = 0; j < nf; j++)
            if (ks[i * nf + j] > 0) f[nu++] = (dpa_factor){g[j], ks[i * nf + j]};
        if (nu == 0) continue;
        dpa_composed w;
        memset(&w, 0, sizeof w);
        double li = 0, lu[2];
        int zero = 0;
        if ((rc = compose_window(f, nu, st, tail_tau, lower, max_n, &w, &li, lu, &zero, err))) return rc;
        if (!zero) len = fmax(len, li);
    }
    for (size_t j = 0; j < nf; j++) factor_stats(g[j], &st[j]);
    if (!(len >= 1 && len <= (double)max_n))
        return dpa_error_set(err, DPA_ENOMEM, "powers: no window of at most %zu points", max_n);
    size_t N = plan_size((size_t)len);
    if (N > max_n) N = dpa_fft_good_size((size_t)len);
    if (N > max_n) return dpa_error_set(err, DPA_ENOMEM, "powers: no window of at most %zu points", max_n);
    if (N < 2) N = 2;
    size_t nh = N / 2 + 1;
    if ((double)nf * (double)nh > DPA_POWERS_MAX_VALUES)
        return dpa_error_set(err, DPA_ENOMEM, "powers: %zu transforms of length %zu are more than kept", nf, N);
    p->lx = malloc(nf * nh * sizeof *p->lx);
    p->la = malloc(nf * nh * sizeof *p->la);
    if (!p->lx || !p->la) {
        dpa_powers_clear(p);
        return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    }
    if ((rc = ws_reserve(ws, N, err))) { dpa_powers_clear(p); return rc; }
    p->nf = nf;
    p->N = N;
    memset(ws->buf, 0, N * sizeof *ws->buf);
    for (size_t j = 0; j < nf; j++) {
        p->g[j] = g[j];
        p->centre[j] = st[j].centre;
        if (st[j].total <= 0) { /* no finite mass: compositions using it are all at +inf (compose_window) */
            for (size_t q = 0; q < nh; q++) {
                p->lx[j * nh + q] = CMPLX(-INFINITY, 0.0);
                p->la[j * nh + q] = INFINITY;
            }
            continue;
        }
        fold(ws->buf, N, g[j], st[j].first, st[j].last, st[j].centre, 1, 0);
        if ((rc = dpa_fft_r2c(fft, N, ws->buf, ws->X))) {
            dpa_powers_clear(p);
            return dpa_error_set(err, rc, "FFT failed (length %zu)", N);
        }
        unfold(ws->buf, N, g[j], st[j].first, st[j].last, st[j].centre);
        for (size_t q = 0; q < nh; q++) {
            double complex x = ws->X[q];
            p->lx[j * nh + q] = (creal(x) == 0 && cimag(x) == 0) ? CMPLX(-INFINITY, 0.0) : clog(x);
            p->la[j * nh + q] = cabs(p->lx[j * nh + q]);
        }
    }
    return DPA_OK;
}

void dpa_powers_clear(dpa_powers *p)
{
    free(p->lx);
    free(p->la);
    memset(p, 0, sizeof *p);
}

/* As dpa_compose_flags with DPA_COMPOSE_ROUGH on the factors g_j repeated
 * k[j] times (k[j] = 0: not used), from the kept logarithms: the same
 * window (step 1), the same round-off count per frequency (k_j (|log X_j| +
 * log2 N) + 1 for each factor used; the transforms X_j are the FFTs that
 * dpa_compose_flags would compute at this length), the same dead
 * frequencies, read back into the window the same way. */
dpa_status dpa_powers_compose(dpa_fft *fft, const dpa_powers *p, dpa_compose_ws *ws, const double *k, double tail_tau,
                              int lower, size_t max_n, dpa_composed *out, dpa_error *err)
{
    memset(out, 0, sizeof *out);
    dpa_factor f[DPA_POWERS_MAX];
    fstat st[DPA_POWERS_MAX];
    size_t used[DPA_POWERS_MAX], nu = 0, N = p->N, nh = N / 2 + 1;
    for (size_t j = 0; j < p->nf; j++)
        if (k[j] > 0) {
            used[nu] = j;
            f[nu++] = (dpa_factor){p->g[j], k[j]};
        }
    if (nu == 0) return dpa_error_set(err, DPA_EINVAL, "compose: no factors");
    double step = f[0].pmf->step, len = 0, lu[2];
    out->step = step;
    int zero = 0;
    dpa_status rc = compose_window(f, nu, st, tail_tau, lower, max_n, out, &len, lu, &zero, err);
    if (rc) return rc;
    if (zero) {
        out->lo = 0;
        out->n = 2;
        out->mass = calloc(2, sizeof *out->mass);
        return out->mass ? DPA_OK : dpa_error_set(err, DPA_ENOMEM, "out of memory");
    }
    if (!(len <= (double)N))
        return dpa_error_set(err, DPA_ENOMEM, "powers: a window of %.3g points exceeds the length %zu", len, N);
    if ((rc = ws_reserve(ws, N, err))) return rc;
    out->n = N;
    double lg = log2((double)N), r2 = 0;
    long long Cmod = 0;
    for (size_t u = 0; u < nu; u++)
        Cmod = mod_ll(Cmod + mod_ll((long long)fmod(f[u].count, (double)N), (long long)N) *
                                 mod_ll(p->centre[used[u]], (long long)N), (long long)N);
    fftw_complex *X = ws->X;
    for (size_t q = 0; q < nh; q++) {
        double complex aq = 0;
        double eq = 0;
        int dead = 0;
        for (size_t u = 0; u < nu && !dead; u++) {
            double complex lx = p->lx[used[u] * nh + q];
            double kk = f[u].count;
            if (kk * creal(lx) < DEAD_LOG) { dead = 1; break; }
            aq += kk * lx;
            eq += kk * (p->la[used[u] * nh + q] + lg) + 1.0;
            if (creal(aq) < DEAD_LOG) dead = 1;
        }
        double complex y = dead ? 0 : cexp(CMPLX(creal(aq), remainder(cimag(aq), 2 * M_PI)));
        double w = (q == 0 || 2 * q == N) ? 1.0 : 2.0;
        double e = cabs(y) * ROUNDOFF_C * DPA_UNIT_ROUNDOFF * (lg + eq);
        r2 += w * e * e;
        X[q] = y;
    }
    double roundoff = sqrt(r2) + (double)N * exp(DEAD_LOG);
    if ((rc = dpa_fft_c2r(fft, N, X, ws->buf))) return dpa_error_set(err, rc, "FFT failed (length %zu)", N);
    double invN = 1.0 / (double)N, clamped = 0;
    size_t shift = (size_t)mod_ll(mod_ll(out->lo, (long long)N) - Cmod, (long long)N);
    out->mass = malloc(N * sizeof *out->mass);
    if (!out->mass) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    for (size_t m = 0, i = shift; m < N; m++) {
        double v = ws->buf[i] * invN;
        if (v < 0) { clamped -= v; v = 0; }
        out->mass[m] = v;
        if (++i == N) i = 0;
    }
    out->roundoff = roundoff + clamped;
    return DPA_OK;
}
