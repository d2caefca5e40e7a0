/* A certified lower bound on D_A (A >= 1; KL at A = 1) of the
 * Poisson-subsampled Gaussian pair, both directions, by a lower quadrature
 * of a log-concave-in-pieces integrand, for dpa_renyi (docs/rdp.md, "The
 * Rényi divergence of a composition", "Lower bounds of the
 * Poisson-subsampled Gaussian").
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The pair: P = q N(mu, 1) + (1 - q) N(0, 1), Q = N(0, 1); with phi the
 * standard normal density and the likelihood ratio
 *     g(x) = 1 + y(x),   y(x) = q expm1(mu (x - x0)),   x0 = mu / 2,
 * E(A) = int phi g^c with c = A (remove, D_A(P||Q)) or c = 1 - A (add,
 * D_A(Q||P)) (MTZ19 §3; LT eq 8).  Since int phi y = 0,
 *     E - 1 = int phi(x) F(y(x)) dx,   F(y) = (1 + y)^c - 1 - c y >= 0
 * for c > 1 or c < 0 (convexity of (1 + y)^c), and at A = 1
 *     KL(P||Q) = int phi [(1 + y) log1p(y) - y],  KL(Q||P) = int phi [y - log1p(y)],
 * both integrands >= 0.  All terms are O(y^2) near x0: no cancellation
 * between them, so the bound keeps a relative accuracy at small rates.
 *
 * Shape.  As a function of u = log g, F(0) = 0 and F' = dF/du is
 * log-concave on u > 0 and on u < 0 (c e^u (e^{(c-1)u} - 1), u e^u, e^u - 1
 * up to sign: sums of a linear function and log|e^{bu} - 1| or log|u|), so
 * F = int_0^u F' is log-concave on each side (Prékopa), decreasing for
 * u < 0 and increasing for u > 0.  u(x) = log(1 - q + q e^{mu x - mu^2/2})
 * is convex and increasing in x.  Hence psi = log(phi F(y)):
 *  - x < x0: a concave non-increasing function of a convex one, plus
 *    -x^2/2: concave;
 *  - x > x0: psi'' = -1 + mu^2 [(log F)''(u) s^2 + (log F)'(u) s (1 - s)]
 *    with s = u' / mu = 1 - (1 - q)/g in (0, 1); (log F)'' <= 0 and
 *    (log F)' is decreasing, so on a cell [a, b]
 *        psi'' <= K = -1 + mu^2 (log F)'(u(a)) max_{[a,b]} s (1 - s).
 * On a cell, psi >= chord - max(K, 0) (x - a)(b - x)/2, so
 *     int_a^b e^psi >= (b - a) e^{psi(a)} (e^d - 1)/d e^{-max(K,0) (b-a)^2/8},
 * d = psi(b) - psi(a) (the exact integral of the chord's exponential).
 * The sum over cells of an interval (the rest is >= 0: dropped) is a lower
 * bound on E - 1 (on KL), hence D_A >= log1p(E - 1)/(A - 1).  The
 * interval (where psi is within RPG_SPAN of its maximum on a coarse scan)
 * and the steps (RPG_TOL) are heuristics: they set how tight, never
 * whether valid.
 *
 * Rounding: psi at each point is evaluated in long double with an absolute
 * error bound (the cancellation in F counted from the magnitudes of its
 * terms), subtracted before the chord; each cell's term within 16 ulp, the
 * sum within n ulp (long double), then rounded down to double.
 */
#include <float.h>
#include <math.h>
#include "mech/pair.h"
#include "num/num.h"
#include "rdp/renyi_internal.h"

#define LE LDBL_EPSILON
/* relative loss allowed per cell from the chord and the curvature factor
 * (the total's relative loss is at most the largest cell's: a weighted
 * mean): 1e-7 keeps the bound within ~1e-7 of the integral */
#define RPG_TOL 1e-7L
/* cells where psi is below its coarse maximum by more than this are
 * dropped (e^-45 ~ 3e-20 of the peak's cell each) */
#define RPG_SPAN 45.0L
/* coarse scan step for the interval (heuristic) */
#define RPG_SCAN 0.125L
/* smallest and largest step */
#define RPG_HMIN 1e-7L
#define RPG_HMAX 0.05L
/* at most this many cells (then the bound is still valid, less tight) */
#define RPG_MAXCELLS 400000

typedef struct pg {
    long double mu, q, c, x0;
    int kl; /* 0: power c; 1: KL remove; 2: KL add */
} pg;

/* one point: psi, its absolute error bound, y, (log F)'(u) = F'/F and
 * s (1 - s) */
typedef struct pt {
    long double x, psi, e, el, y, lfp, ss; /* el: relative error bound of F */
} pt;

/* log F(y) with an absolute error bound *el, and F'/F (derivative in
 * u = log1p(y)) into *lfp; -inf where F = 0 */
static long double pg_logf(const pg *s, long double y, long double *el, long double *lfp)
{
    long double L = log1pl(y), f, mag, fp, c = s->c;
    if (s->kl == 0) fp = c * (1 + y) * expm1l((c - 1) * L);
    else if (s->kl == 1) fp = (1 + y) * L;
    else fp = y;
    if (s->kl == 0 && c * L > 64) {
        /* F = e^{cL} (1 - (1 + c y) e^{-cL}), (1 + c y) e^{-cL} < e^{-60} */
        long double r = (1 + c * y) * expl(-c * L);
        long double lf = c * L + log1pl(-r);
        *el = 8 * LE * (fabsl(c * L) + 2);
        *lfp = c * (-expm1l(-(c - 1) * L)) / (1 - r); /* F'/F = c (1 - e^{-(c-1)u}) / (1 - r) */
        return lf;
    }
    if (fabsl(y) <= 0.5L / (fabsl(c) + 2)) {
        /* the series sum_{k>=2} a_k y^k, terms falling by at least 1/2
         * each (|y| (|c| + 2) <= 1/2), summed until below LE 1e-3 of the sum */
        long double ak = 0, term, sum = 0, yk = y;
        mag = 0;
        for (int k = 2; k < 200; k++) {
            yk *= y;
            if (s->kl == 0) ak = k == 2 ? c * (c - 1) / 2 : ak * (c - (k - 1)) / k;
            else if (s->kl == 1) ak = ((k & 1) ? -1.0L : 1.0L) / ((long double)k * (k - 1));
            else ak = ((k & 1) ? -1.0L : 1.0L) / k;
            term = ak * yk;
            sum += term;
            mag += fabsl(term);
            if (fabsl(term) <= LE * 1e-3L * fabsl(sum)) break;
        }
        f = sum;
        mag *= 2; /* the truncated tail is below the last term: counted twice */
    } else if (s->kl == 0) {
        long double e = expm1l(c * L);
        f = e - c * y;
        mag = fabsl(e) + (1 + e) * fabsl(c * L) + fabsl(c * y);
    } else if (s->kl == 1) {
        f = (1 + y) * L - y;
        mag = fabsl((1 + y) * L) + fabsl(y) + (1 + y);
    } else {
        f = y - L;
        mag = fabsl(y) + fabsl(L) + 1;
    }
    if (!(f > 0)) {
        *el = 0;
        *lfp = INFINITY;
        return -INFINITY;
    }
    *lfp = fp / f;
    *el = 16 * LE * mag / f;
    return logl(f);
}

/* the point x: psi(x) = log(phi(x) F(y(x))) with its absolute error bound
 * (psi = -inf at x0) */
static void pg_point(const pg *s, long double x, pt *o)
{
    long double z = s->mu * (x - s->x0);
    long double y = s->q * expm1l(z), el, lfp;
    long double lf = pg_logf(s, y, &el, &lfp);
    long double sv = (s->q + y) / (1 + y); /* s = 1 - (1-q)/(1+y) */
    o->x = x;
    o->y = y;
    o->lfp = lfp;
    o->ss = sv * (1 - sv);
    o->el = el;
    if (lf == -INFINITY) {
        o->psi = -INFINITY;
        o->e = 0;
        return;
    }
    /* y within 8 LE (2 + |z|) relative (z's rounding moved through
     * expm1), moving log F by |y F_y| / F times that; F' = (1 + y) F_y, so
     * |y F_y| / F = |F'/F| |y| / (1 + y) <= |F'/F| max(1, q/(1 - q))
     * (y > -q); counted twice; the rest: the log of phi */
    long double ry = 8 * LE * (2 + fabsl(z));
    o->e = el + 2 * ry * (fabsl(lfp) * fmaxl(1, s->q / (1 - s->q)) + 1) + 8 * LE * (x * x / 2 + fabsl(lf) + 2);
    o->psi = -x * x / 2 - 0.91893853320467274178L + lf;
}

/* J(d) = int_0^1 e^{d v} v (1 - v) dv, a lower bound (relative 1e-18) */
static long double pg_j(long double d)
{
    if (fabsl(d) <= 2) {
        /* sum_k d^k / (k! (k + 2) (k + 3)) */
        long double t = 1, sum = 0;
        for (int k = 0; k < 60; k++) {
            sum += t / ((k + 2.0L) * (k + 3.0L));
            t *= d / (k + 1);
        }
        return sum * (1 - 64 * LE);
    }
    long double r = (expl(d) * (d - 2) + d + 2) / (d * d * d);
    return r * (1 - 64 * LE * (1 + fabsl(d)));
}

/* log of a lower bound on int_lo^hi phi F (M: a shift, near the maximum) */
static long double pg_integrate(const pg *s, long double lo, long double hi, long double M)
{
    long double sum = 0, h = 1e-3L, curv = -1; /* curv: running estimate of psi'' */
    long double slope0 = 0, w0 = 1;
    int have_slope = 0;
    long n = 0;
    pt a, b;
    pg_point(s, lo, &a);
    while (a.x < hi && n < RPG_MAXCELLS) {
        long double xb = a.x + h;
        if (a.x < s->x0 && xb > s->x0) xb = s->x0; /* x0 a cell end */
        if (xb > hi) xb = hi;
        pg_point(s, xb, &b);
        long double w = b.x - a.x, kb = -1;
        if (isfinite(a.psi) && isfinite(b.psi)) {
            if (a.x >= s->x0) {
                /* psi'' <= Kb = -1 + mu^2 (log F)'(u(a)) max s(1-s); F'/F
                 * allowed 1e-12 + its own errors, s(1-s) 1e-15 */
                long double ssm = fmaxl(a.ss, b.ss);
                long double qa = (s->q + a.y) / (1 + a.y), qb = (s->q + b.y) / (1 + b.y);
                if (qa <= 0.5L && qb >= 0.5L) ssm = 0.25L;
                long double lfp = fabsl(a.lfp) * (1 + 2 * a.el + 1e-12L) + 1e-300L;
                kb = -1 + s->mu * s->mu * lfp * (ssm + 1e-15L);
            }
            /* psi >= chord - Kb (x - a)(b - x)/2 */
            long double la = a.psi - a.e, lb = b.psi - b.e, d = lb - la;
            long double e1 = fabsl(d) < 1e-6L ? 1 + d / 2 + d * d / 6 - fabsl(d * d * d) : expm1l(d) / d;
            long double base = w * expl(la - M) * e1, t;
            if (kb > 0) t = base * expl(-kb * w * w / 8);
            else t = base + (-kb / 2) * w * w * w * expl(la - M) * pg_j(d); /* e^v >= 1 + v */
            /* the cell's few roundings, and la - M's rounding moved through exp */
            sum += t * (1 - 32 * LE - 2 * LE * (fabsl(la) + fabsl(M)));
            n++;
            /* the next step (heuristic): psi'' from the chord slopes, the
             * loss per cell about (Kb - psi'') w^2 / 12 */
            long double slope = (b.psi - a.psi) / w;
            if (have_slope) curv = (slope - slope0) / ((w + w0) / 2);
            slope0 = slope;
            w0 = w;
            have_slope = 1;
        } else {
            have_slope = 0;
        }
        long double gap = fmaxl(kb - curv, 1e-2L);
        long double hn = sqrtl(12 * RPG_TOL / gap);
        h = fminl(fminl(fmaxl(hn, RPG_HMIN), RPG_HMAX), 2 * w);
        a = b;
    }
    sum *= 1 - (n + 8) * LE;
    if (!(sum > 0)) return -INFINITY;
    long double ls = logl(sum);
    return M + ls - 4 * LE * (fabsl(M) + fabsl(ls) + 1);
}

/* Certified lower bound on D_A (A >= 1) of the Poisson(q)-subsampled
 * Gaussian (mu) in direction dir; 0 when nothing better is found. */
double dpa_renyi_pg_lower(double mu, double q, double A, int dir)
{
    if (!(mu > 0 && isfinite(mu) && q > 0 && q < 1 && A >= 1 && isfinite(A))) return 0.0;
    pg s = {mu, q, dir ? 1 - (long double)A : A, (long double)mu / 2, A == 1 ? (dir ? 2 : 1) : 0};
    if (A > 1 && s.c > 1 && s.c - 1 < 1e-12L) return 0.0;
    if (dir && 1 - s.c != (long double)A) return 0.0; /* c = 1 - A not exact (A > 2^11 with a fraction) */
    /* the interval: a coarse scan of psi (heuristic) */
    long double cm = s.c * s.mu;
    long double lo = -12 + fminl(0, cm) - 1, hi = 12 + fmaxl(s.x0, cm) + 1;
    if (s.kl == 1) hi += s.mu;
    long n = (long)((hi - lo) / RPG_SCAN) + 1;
    if (n > 200000) return 0.0;
    long double M = -INFINITY;
    pt p;
    for (long i = 0; i <= n; i++) {
        pg_point(&s, lo + i * RPG_SCAN, &p);
        if (p.psi > M) M = p.psi;
    }
    if (!isfinite(M)) return 0.0;
    long double a = hi, b = lo;
    for (long i = 0; i <= n; i++) {
        pg_point(&s, lo + i * RPG_SCAN, &p);
        if (p.psi >= M - RPG_SPAN) {
            a = fminl(a, p.x - RPG_SCAN);
            b = fmaxl(b, p.x + RPG_SCAN);
        }
    }
    long double le = pg_integrate(&s, a, b, M); /* log of the lower bound on E - 1 (KL) */
    if (!isfinite(le)) return 0.0;
    if (A == 1) return fmax(0.0, dpa_ld_dn(expl(le)));
    /* log E >= log1p(E - 1) */
    long double lE = le > 40 ? le + log1pl(expl(-le)) : log1pl(expl(le));
    lE *= 1 - 4 * LE;
    return fmax(0.0, dpa_ld_dn(lE / ((long double)A - 1) * (1 - 2 * LE)));
}
