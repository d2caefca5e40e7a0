/* The exact method for compositions of (eps, delta)-DP steps (src/exact/exact_rr.h)
 * against references computed here in MPFR (192-bit binomial sums).
 *
 * Reference (ref_F): F(t) = E[(1 - e^{t - S})_+], S = eps (2Y - k),
 * Y ~ Bin(k, e^eps / (1 + e^eps)) (LT Cor 4.7), summed in MPFR from the mode
 * (log pmf by mpfr_lngamma, then the ratio recurrence; e^{t - S} by the
 * recurrence e^{-2 eps}) outward over the points with S > t, until the
 * remaining mass, bounded by the geometric series of the pmf ratio, is below
 * 2^-STOP of the sum; that bound is kept, so the true F lies in
 * [F_ref, F_ref + trunc].  delta(t) = 1 - P + P F(t), P = prod (1 - delta_j)^{k_j}.
 * Several distinct eps: an exact sum over the smaller binomials of ref_F of
 * the largest.  A check passes when lower <= F_ref part and
 * F_ref + trunc <= upper (so the true value is inside), and the bracket is
 * narrower than the stated tolerance.  eps(delta) brackets [lo, up] are
 * checked through the reference profile: delta_ref(up) <= delta (up is
 * feasible) and delta_ref(lo) > delta (lo is not), which is
 * lo < eps(delta) <= up since delta(t) is non-increasing.
 *
 * The sweep is smaller under the sanitizers (or with DPA_TEST_QUICK set) and
 * the MPFR check of 1e12 steps (about 2 s of reference sums) runs only in
 * the regular build.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <mpfr.h>
#include "dpacct/accountant.h"
#include "dpacct/event.h"
#include "exact/exact_rr.h"
#include "model/leaves.h"
#include "check.h"


#define PREC 192
#define N(a) (sizeof(a) / sizeof *(a))

static int quick;
static double worst_delta_gap, worst_eps_gap;

/* ------------------------------------------------------------------ */
/* compositions */

typedef struct leafspec { double eps, k, delta; } leafspec;

/* the exact method on leaves (eps_i, delta_i) x k_i; *c must be freed */
static void build(dpa_rr_comp *c, const leafspec *ls, size_t n)
{
    dpa_leaf v[8];
    double tot = 0;
    assert_true(n <= N(v));
    for (size_t i = 0; i < n; i++) {
        memset(&v[i], 0, sizeof v[i]);
        v[i].count = ls[i].k;
        v[i].mu = NAN;
        v[i].rr_eps = ls[i].eps;
        v[i].rr_delta = ls[i].delta;
        v[i].rate = NAN;
        tot += ls[i].k;
    }
    dpa_leafset L;
    memset(&L, 0, sizeof L);
    L.v = v;
    L.n = n;
    L.all_rr = 1;
    L.total_count = tot;
    memset(c, 0, sizeof *c);
    dpa_error err;
    if (!dpa_rr_applicable(&L)) fail_msg("dpa_rr_applicable refused the composition");
    if (dpa_rr_build(c, &L, &err) != DPA_OK) fail_msg("dpa_rr_build: %s", err.message);
}

static void describe(char *buf, size_t n, const leafspec *ls, size_t m)
{
    size_t o = 0;
    for (size_t i = 0; i < m && o < n; i++)
        o += (size_t)snprintf(buf + o, n - o, "%s%.17g x (%.17g, %.3g)", i ? " + " : "", ls[i].k, ls[i].eps, ls[i].delta);
}

/* ------------------------------------------------------------------ */
/* MPFR reference */

static int stop_bits = 130;

/* F(t) for one binomial: *F and a bound *tr on the omitted part */
static void ref_F(double k, double e, const mpfr_t t, mpfr_t F, mpfr_t tr)
{
    mpfr_t p, E, Em2, Ep2, w, f, r, term, S, tmp, w0, f0;
    mpfr_inits2(PREC, p, E, Em2, Ep2, w, f, r, term, S, tmp, w0, f0, (mpfr_ptr)0);
    mpfr_set_zero(F, 1);
    mpfr_set_zero(tr, 1);
    mpfr_set_d(E, e, MPFR_RNDN);
    mpfr_exp(E, E, MPFR_RNDN);
    mpfr_set_d(tmp, -2 * e, MPFR_RNDN);
    mpfr_exp(Em2, tmp, MPFR_RNDN);
    mpfr_set_d(tmp, 2 * e, MPFR_RNDN);
    mpfr_exp(Ep2, tmp, MPFR_RNDN);
    mpfr_add_ui(p, E, 1, MPFR_RNDN);
    mpfr_div(p, E, p, MPFR_RNDN); /* p = E / (1 + E) */
    /* first y with S(y) = e (2y - k) > t (exact comparisons) */
    double tg = mpfr_get_d(t, MPFR_RNDN);
    double ys = floor((tg / e + k) / 2) + 1;
    if (!(ys >= 0)) ys = 0;
    if (!(ys <= k + 1)) ys = k + 1;
#define SET_S(y) (mpfr_set_d(S, 2 * (y) - k, MPFR_RNDN), mpfr_mul_d(S, S, e, MPFR_RNDN))
    /* term = 1 - e^{t - S(y)}: from the recurrence f, or by expm1 of the
     * exact gap when it is near 0 (then 1 - f would cancel) */
#define FACTOR(y)                                                       \
    do {                                                                \
        mpfr_ui_sub(term, 1, f, MPFR_RNDN);                             \
        if (mpfr_cmp_d(term, 0x1p-60) < 0) {                            \
            SET_S(y);                                                   \
            mpfr_sub(term, t, S, MPFR_RNDN);                            \
            mpfr_expm1(term, term, MPFR_RNDN);                          \
            mpfr_neg(term, term, MPFR_RNDN);                            \
        }                                                               \
    } while (0)
    while (ys > 0 && (SET_S(ys - 1), mpfr_cmp(S, t) > 0)) ys--;
    while (ys <= k && (SET_S(ys), mpfr_cmp(S, t) <= 0)) ys++;
    if (ys > k) goto done;
    double md = floor((k + 1) * mpfr_get_d(p, MPFR_RNDN));
    if (md > k) md = k;
    double y0 = ys > md ? ys : md;
    /* pmf(y0) = exp(lgamma(k+1) - lgamma(y0+1) - lgamma(k-y0+1) + y0 log p + (k-y0) log q) */
    mpfr_set_d(tmp, k + 1, MPFR_RNDN);
    mpfr_lngamma(w0, tmp, MPFR_RNDN);
    mpfr_set_d(tmp, y0 + 1, MPFR_RNDN);
    mpfr_lngamma(tmp, tmp, MPFR_RNDN);
    mpfr_sub(w0, w0, tmp, MPFR_RNDN);
    mpfr_set_d(tmp, k - y0 + 1, MPFR_RNDN);
    mpfr_lngamma(tmp, tmp, MPFR_RNDN);
    mpfr_sub(w0, w0, tmp, MPFR_RNDN);
    mpfr_log(tmp, p, MPFR_RNDN);
    mpfr_mul_d(tmp, tmp, y0, MPFR_RNDN);
    mpfr_add(w0, w0, tmp, MPFR_RNDN);
    mpfr_add_ui(tmp, E, 1, MPFR_RNDN); /* log q = -log(1 + E), no cancellation */
    mpfr_log(tmp, tmp, MPFR_RNDN);
    mpfr_mul_d(tmp, tmp, -(k - y0), MPFR_RNDN);
    mpfr_add(w0, w0, tmp, MPFR_RNDN);
    mpfr_exp(w0, w0, MPFR_RNDN);
    SET_S(y0);
    mpfr_sub(f0, t, S, MPFR_RNDN);
    mpfr_exp(f0, f0, MPFR_RNDN);
    /* upward from y0 */
    mpfr_set(w, w0, MPFR_RNDN);
    mpfr_set(f, f0, MPFR_RNDN);
    for (double y = y0;; y++) {
        FACTOR(y);
        mpfr_mul(term, term, w, MPFR_RNDN);
        mpfr_add(F, F, term, MPFR_RNDN);
        if (y >= k) break;
        mpfr_set_d(r, k - y, MPFR_RNDN);
        mpfr_div_d(r, r, y + 1, MPFR_RNDN);
        mpfr_mul(r, r, E, MPFR_RNDN);
        if (y >= md && mpfr_cmp_ui(r, 1) < 0) {
            mpfr_ui_sub(tmp, 1, r, MPFR_RNDN);
            mpfr_div(tmp, r, tmp, MPFR_RNDN);
            mpfr_mul(tmp, tmp, w, MPFR_RNDN);
            mpfr_mul_2si(term, F, -stop_bits, MPFR_RNDN);
            if (mpfr_cmp(tmp, term) < 0) {
                mpfr_mul_d(tmp, tmp, 1.01, MPFR_RNDU);
                mpfr_add(tr, tr, tmp, MPFR_RNDU);
                break;
            }
        }
        mpfr_mul(w, w, r, MPFR_RNDN);
        mpfr_mul(f, f, Em2, MPFR_RNDN);
    }
    /* downward from y0 to ys */
    mpfr_set(w, w0, MPFR_RNDN);
    mpfr_set(f, f0, MPFR_RNDN);
    for (double y = y0; y > ys; y--) {
        mpfr_set_d(r, y, MPFR_RNDN); /* w(y-1) / w(y) = y / ((k - y + 1) E) */
        mpfr_div_d(r, r, k - y + 1, MPFR_RNDN);
        mpfr_div(r, r, E, MPFR_RNDN);
        if (y <= md && mpfr_cmp_ui(r, 1) < 0) {
            mpfr_ui_sub(tmp, 1, r, MPFR_RNDN);
            mpfr_div(tmp, r, tmp, MPFR_RNDN);
            mpfr_mul(tmp, tmp, w, MPFR_RNDN);
            mpfr_mul_2si(term, F, -stop_bits, MPFR_RNDN);
            if (mpfr_cmp(tmp, term) < 0) {
                mpfr_mul_d(tmp, tmp, 1.01, MPFR_RNDU);
                mpfr_add(tr, tr, tmp, MPFR_RNDU);
                break;
            }
        }
        mpfr_mul(w, w, r, MPFR_RNDN);
        mpfr_mul(f, f, Ep2, MPFR_RNDN);
        FACTOR(y - 1);
        mpfr_mul(term, term, w, MPFR_RNDN);
        mpfr_add(F, F, term, MPFR_RNDN);
    }
#undef SET_S
#undef FACTOR
done:
    mpfr_clears(p, E, Em2, Ep2, w, f, r, term, S, tmp, w0, f0, (mpfr_ptr)0);
}

/* pmf table of Bin(k, p(e)), y = 0..k (small k) */
static mpfr_t *pmf_table(double k, double e)
{
    size_t n = (size_t)k + 1;
    mpfr_t *v = malloc(n * sizeof *v);
    mpfr_t E, p, tmp;
    mpfr_inits2(PREC, E, p, tmp, (mpfr_ptr)0);
    mpfr_set_d(E, e, MPFR_RNDN);
    mpfr_exp(E, E, MPFR_RNDN);
    mpfr_add_ui(p, E, 1, MPFR_RNDN);
    mpfr_ui_div(p, 1, p, MPFR_RNDN); /* q = 1 / (1 + E) */
    for (size_t y = 0; y < n; y++) {
        mpfr_init2(v[y], PREC);
        if (y == 0) mpfr_pow_ui(v[0], p, (unsigned long)k, MPFR_RNDN);
        else { /* pmf(y) = pmf(y-1) (k - y + 1) / y * E */
            mpfr_mul_d(v[y], v[y - 1], k - (double)y + 1, MPFR_RNDN);
            mpfr_div_d(v[y], v[y], (double)y, MPFR_RNDN);
            mpfr_mul(v[y], v[y], E, MPFR_RNDN);
        }
    }
    mpfr_clears(E, p, tmp, (mpfr_ptr)0);
    return v;
}

/* P = prod (1 - delta_i)^{k_i} and, if Q is not NULL, Q = 1 - P (without
 * cancellation: -expm1(sum k_i log1p(-delta_i))) */
static void ref_keep2(const leafspec *ls, size_t n, mpfr_t P, mpfr_ptr Q)
{
    mpfr_t tmp, lk;
    mpfr_inits2(4 * PREC, tmp, lk, (mpfr_ptr)0);
    mpfr_set_zero(lk, 1);
    int full = 0;
    for (size_t i = 0; i < n; i++) {
        if (ls[i].delta >= 1) full = 1;
        if (!(ls[i].delta > 0) || full) continue;
        mpfr_set_d(tmp, -ls[i].delta, MPFR_RNDN);
        mpfr_log1p(tmp, tmp, MPFR_RNDN);
        mpfr_mul_d(tmp, tmp, ls[i].k, MPFR_RNDN);
        mpfr_add(lk, lk, tmp, MPFR_RNDN);
    }
    if (full) {
        mpfr_set_zero(P, 1);
        if (Q) mpfr_set_ui(Q, 1, MPFR_RNDN);
    } else {
        mpfr_exp(P, lk, MPFR_RNDN);
        if (Q) {
            mpfr_expm1(Q, lk, MPFR_RNDN);
            mpfr_neg(Q, Q, MPFR_RNDN);
        }
    }
    mpfr_clears(tmp, lk, (mpfr_ptr)0);
}

static void ref_keep(const leafspec *ls, size_t n, mpfr_t P) { ref_keep2(ls, n, P, NULL); }

/* delta(t) of the composition: [*v, *v + *tr] contains it.  Distinct eps
 * values are taken from the leaves; all but the one with the largest count
 * must have small counts (exact enumeration). */
static void ref_delta(const leafspec *ls, size_t n, double t, mpfr_t v, mpfr_t tr)
{
    double ge[8], gk[8];
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(ls[i].eps > 0)) continue;
        size_t j = 0;
        while (j < m && ge[j] != ls[i].eps) j++;
        if (j == m) ge[m] = ls[i].eps, gk[m++] = 0;
        gk[j] += ls[i].k;
    }
    /* largest count last */
    for (size_t i = 0; m && i + 1 < m; i++)
        if (gk[i] > gk[m - 1]) {
            double a = ge[i], b = gk[i];
            ge[i] = ge[m - 1], gk[i] = gk[m - 1];
            ge[m - 1] = a, gk[m - 1] = b;
        }
    mpfr_t F, T, P, tt, Fi, Ti, S;
    mpfr_inits2(PREC, F, T, P, tt, Fi, Ti, S, (mpfr_ptr)0);
    mpfr_set_zero(F, 1);
    mpfr_set_zero(T, 1);
    if (m == 0) { /* F = (1 - e^t)_+ */
        if (t < 0) {
            mpfr_set_d(F, t, MPFR_RNDN);
            mpfr_expm1(F, F, MPFR_RNDN);
            mpfr_neg(F, F, MPFR_RNDN);
        }
    } else {
        mpfr_t *tab[8];
        for (size_t i = 0; i + 1 < m; i++) tab[i] = pmf_table(gk[i], ge[i]);
        size_t idx[8] = {0};
        for (;;) {
            /* weight and threshold of this outer point */
            mpfr_set_ui(P, 1, MPFR_RNDN);
            mpfr_set_d(tt, t, MPFR_RNDN);
            for (size_t i = 0; i + 1 < m; i++) {
                mpfr_mul(P, P, tab[i][idx[i]], MPFR_RNDN);
                mpfr_set_d(S, 2.0 * (double)idx[i] - gk[i], MPFR_RNDN);
                mpfr_mul_d(S, S, ge[i], MPFR_RNDN);
                mpfr_sub(tt, tt, S, MPFR_RNDN);
            }
            ref_F(gk[m - 1], ge[m - 1], tt, Fi, Ti);
            mpfr_mul(Fi, Fi, P, MPFR_RNDN);
            mpfr_add(F, F, Fi, MPFR_RNDN);
            mpfr_mul(Ti, Ti, P, MPFR_RNDU);
            mpfr_add(T, T, Ti, MPFR_RNDU);
            size_t i = 0;
            while (i + 1 < m && ++idx[i] > (size_t)gk[i]) idx[i++] = 0;
            if (i + 1 >= m) break;
        }
        for (size_t i = 0; i + 1 < m; i++) {
            for (size_t y = 0; y <= (size_t)gk[i]; y++) mpfr_clear(tab[i][y]);
            free(tab[i]);
        }
    }
    /* delta = (1 - P) + P F: no cancellation */
    ref_keep2(ls, n, P, tt);
    mpfr_mul(v, F, P, MPFR_RNDN);
    mpfr_add(v, v, tt, MPFR_RNDN);
    mpfr_mul(tr, T, P, MPFR_RNDU);
    mpfr_clears(F, T, P, tt, Fi, Ti, S, (mpfr_ptr)0);
}

/* 1 - P > delta ? (the true eps is infinite) */
static int ref_infinite(const leafspec *ls, size_t n, double delta)
{
    mpfr_t P;
    mpfr_init2(P, 4 * PREC);
    ref_keep(ls, n, P);
    mpfr_ui_sub(P, 1, P, MPFR_RNDN);
    int r = mpfr_cmp_d(P, delta) > 0;
    mpfr_clear(P);
    return r;
}

/* ------------------------------------------------------------------ */
/* checks */

/* The reference is v, the truth lies in [v - s, min(1, v + tr + s)], s =
 * 2^-170 |v| covering the MPFR sums' own round-off.  A bound is wrong if it
 * is provably on the wrong side of every point of that interval (its width,
 * ~1e-39 relative, is far below any error that matters). */
static void ref_range(mpfr_t v, mpfr_t tr, mpfr_t lo_, mpfr_t hi_)
{
    mpfr_t s;
    mpfr_init2(s, PREC);
    mpfr_mul_2si(s, v, -170, MPFR_RNDU);
    mpfr_abs(s, s, MPFR_RNDU);
    mpfr_sub(lo_, v, s, MPFR_RNDD);
    mpfr_add(hi_, v, tr, MPFR_RNDU);
    mpfr_add(hi_, hi_, s, MPFR_RNDU);
    if (mpfr_cmp_ui(hi_, 1) > 0) mpfr_set_ui(hi_, 1, MPFR_RNDN);
    mpfr_clear(s);
}

/* [lo, up] brackets delta(t) and is narrower than rel * up + abs */
static void check_delta(const char *what, const leafspec *ls, size_t n, double t, double lo, double up, double rel,
                        double abs_)
{
    mpfr_t v, tr, hi, rlo;
    mpfr_inits2(PREC, v, tr, hi, rlo, (mpfr_ptr)0);
    ref_delta(ls, n, t, v, tr);
    ref_range(v, tr, rlo, hi);
    CHECK(!isnan(lo) && !isnan(up) && lo >= 0 && up <= 1 && lo <= up, "%s: delta(%.17g) in [%.17g, %.17g]: malformed",
          what, t, lo, up);
    char rs[96];
    mpfr_snprintf(rs, sizeof rs, "%.20Rg (+%.3Rg)", v, tr);
    CHECK(mpfr_cmp_d(hi, lo) >= 0 && mpfr_cmp_d(rlo, up) <= 0,
          "BRACKET %s: delta(%.17g) in [%.17g, %.17g], reference %s", what, t, lo, up, rs);
    CHECK(up - lo <= rel * up + abs_, "WIDTH %s: delta(%.17g) in [%.17g, %.17g]: gap %.3g > %.3g", what, t, lo, up,
          up - lo, rel * up + abs_);
    if (up > 1e-290 && (up - lo) / up > worst_delta_gap) worst_delta_gap = (up - lo) / up;
    mpfr_clears(v, tr, hi, rlo, (mpfr_ptr)0);
}

/* [lo, up] brackets eps(delta) and is narrower than rel * max(1, up) */
static void check_eps(const char *what, const leafspec *ls, size_t n, double delta, double lo, double up, double rel)
{
    mpfr_t v, tr, hi, rlo;
    mpfr_inits2(PREC, v, tr, hi, rlo, (mpfr_ptr)0);
    CHECK(!isnan(lo) && !isnan(up) && lo >= 0 && lo <= up, "%s: eps(%.3g) in [%.17g, %.17g]: malformed", what, delta,
          lo, up);
    int inf_true = ref_infinite(ls, n, delta);
    if (isinf(lo)) CHECK(inf_true, "INFINITE %s: eps(%.3g) = inf, but 1 - P <= delta", what, delta);
    else if (isinf(up)) {
        /* only within the +inf mass's round-off */
        mpfr_t P;
        mpfr_init2(P, 4 * PREC);
        ref_keep(ls, n, P);
        mpfr_ui_sub(P, 1, P, MPFR_RNDN);
        mpfr_sub_d(P, P, delta, MPFR_RNDN);
        mpfr_abs(P, P, MPFR_RNDN);
        CHECK(mpfr_cmp_d(P, 1e-15 * delta) <= 0, "INFINITE %s: eps(%.3g) in [%.17g, inf] far from the +inf mass", what,
              delta, lo);
        mpfr_clear(P);
    } else {
        CHECK(!inf_true, "FINITE %s: eps(%.3g) in [%.17g, %.17g] but the true eps is infinite", what, delta, lo, up);
        ref_delta(ls, n, up, v, tr);
        ref_range(v, tr, rlo, hi);
        char rs[64];
        mpfr_snprintf(rs, sizeof rs, "%.20Rg", v);
        CHECK(mpfr_cmp_d(rlo, delta) <= 0, "BRACKET %s: eps(%.3g) upper %.17g infeasible: delta there %s", what,
              delta, up, rs);
        if (lo > 0) {
            ref_delta(ls, n, lo, v, tr);
            ref_range(v, tr, rlo, hi);
            mpfr_snprintf(rs, sizeof rs, "%.20Rg", v);
            CHECK(mpfr_cmp_d(hi, delta) > 0, "BRACKET %s: eps(%.3g) lower %.17g feasible: delta there %s", what,
                  delta, lo, rs);
        }
        CHECK(up - lo <= rel * fmax(1, up), "WIDTH %s: eps(%.3g) in [%.17g, %.17g]: gap %.3g", what, delta, lo, up,
              up - lo);
        if ((up - lo) / fmax(1, up) > worst_eps_gap) worst_eps_gap = (up - lo) / fmax(1, up);
    }
    mpfr_clears(v, tr, hi, rlo, (mpfr_ptr)0);
}

/* ------------------------------------------------------------------ */
/* glibc's long double functions within E_F = 4 ulp (the assumption of src/exact/exact_rr_internal.h) */


static void test_libm_ld(void **state)
{
    (void)state;
    mpfr_t x, y, d;
    mpfr_inits2(256, x, y, d, (mpfr_ptr)0);
    int n = quick ? 2000 : 20000;
    const char *names[] = {"expl", "expm1l", "log1pl", "logl", "sinhl", "tanhl"};
    double worst[6] = {0};
    for (int i = 0; i < n; i++) {
        long double a[6], r[6];
        a[0] = (long double)(test_unif() * 22000 - 11000) + (long double)test_unif() * 0x1p-20L;
        if (i % 2) a[0] = (long double)(test_unif() * 100 - 50);
        a[1] = -(long double)test_log_unif(1e-20, 50) * (i % 5 ? 1 : -0.02);
        a[2] = (long double)(i % 2 ? -test_log_unif(1e-20, 0.9999) : test_log_unif(1e-20, 1e6));
        a[3] = (long double)test_log_unif(1e-300, 1e300);
        a[4] = (long double)test_log_unif(1e-20, 1);
        a[5] = (long double)test_log_unif(1e-20, 30);
        r[0] = expl(a[0]); r[1] = expm1l(a[1]); r[2] = log1pl(a[2]);
        r[3] = logl(a[3]); r[4] = sinhl(a[4]); r[5] = tanhl(a[5]);
        for (int f = 0; f < 6; f++) {
            mpfr_set_ld(x, a[f], MPFR_RNDN);
            switch (f) {
            case 0: mpfr_exp(y, x, MPFR_RNDN); break;
            case 1: mpfr_expm1(y, x, MPFR_RNDN); break;
            case 2: mpfr_log1p(y, x, MPFR_RNDN); break;
            case 3: mpfr_log(y, x, MPFR_RNDN); break;
            case 4: mpfr_sinh(y, x, MPFR_RNDN); break;
            default: mpfr_tanh(y, x, MPFR_RNDN); break;
            }
            if (mpfr_zero_p(y) || mpfr_get_exp(y) < LDBL_MIN_EXP + 64) continue;
            mpfr_set_ld(d, r[f], MPFR_RNDN);
            mpfr_sub(d, d, y, MPFR_RNDN);
            mpfr_div(d, d, y, MPFR_RNDN);
            double rel = fabs(mpfr_get_d(d, MPFR_RNDN)) / (0.5 * LDBL_EPSILON); /* in units of u */
            if (rel > worst[f]) worst[f] = rel;
            CHECK(rel <= 8, "%s(%La) = %La: relative error %.3g u exceeds the assumed 8 u", names[f], a[f], r[f], rel);
        }
    }
    print_message("    long double libm: largest errors (u = 2^-64): expl %.2f, expm1l %.2f, log1pl %.2f, logl %.2f, "
                  "sinhl %.2f, tanhl %.2f\n", worst[0], worst[1], worst[2], worst[3], worst[4], worst[5]);
    mpfr_clears(x, y, d, (mpfr_ptr)0);
}

/* ------------------------------------------------------------------ */
/* the audit's reproductions, through the accountant (auto = exact) */

static dpa_accountant *acct(const char *json)
{
    dpa_error err;
    dpa_spec *s = dpa_spec_from_json(json, &err);
    if (!s) fail_msg("spec %s: %s", json, err.message);
    dpa_accountant *a = dpa_accountant_new(s, NULL, &err);
    dpa_spec_free(s);
    if (!a) fail_msg("accountant %s: %s", json, err.message);
    return a;
}

static void test_reproductions(void **state)
{
    (void)state;
    dpa_result r;
    dpa_error err;
    /* delta at eps 22329 of 4057 x RR(5.511): truth 1.184478216417127734e-5 */
    leafspec a[] = {{5.511, 4057, 0}};
    dpa_accountant *A = acct("{\"repeat\":{\"count\":4057,\"event\":{\"randomized_response\":{\"epsilon\":5.511}}}}");
    assert_int_equal(dpa_accountant_delta(A, 22329, &r, &err), DPA_OK);
    assert_int_equal(r.method, DPA_METHOD_EXACT);
    check_delta("4057 x RR(5.511)", a, 1, 22329, r.lower, r.upper, 1e-13, 0);
    CHECK(r.lower <= 1.184478216417127734e-5 && 1.184478216417127734e-5 <= r.upper * (1 + 1e-17),
          "4057 x RR(5.511): [%.17g, %.17g] misses the audit's 1.184478216417127734e-5", r.lower, r.upper);
    dpa_accountant_free(A);
    /* eps at delta 1e-6 of 4546 x approx(0.01061, 1e-12): truth 3.34991372780549468 */
    leafspec b[] = {{0.01061, 4546, 1e-12}};
    A = acct("{\"repeat\":{\"count\":4546,\"event\":{\"approx\":{\"epsilon\":0.01061,\"delta\":1e-12}}}}");
    assert_int_equal(dpa_accountant_epsilon(A, 1e-6, &r, &err), DPA_OK);
    check_eps("4546 x approx(0.01061, 1e-12)", b, 1, 1e-6, r.lower, r.upper, 1e-14);
    CHECK(r.lower <= 3.34991372780549468 && 3.34991372780549468 <= r.upper,
          "4546 x approx(0.01061, 1e-12): [%.17g, %.17g] misses the audit's 3.34991372780549468", r.lower, r.upper);
    dpa_accountant_free(A);
    /* delta at 52.78576676719909 of 120000 x approx(0.02, 1e-12): truth 9.99999999984845e-6 */
    leafspec c[] = {{0.02, 120000, 1e-12}};
    A = acct("{\"repeat\":{\"count\":120000,\"event\":{\"approx\":{\"epsilon\":0.02,\"delta\":1e-12}}}}");
    assert_int_equal(dpa_accountant_delta(A, 52.78576676719909, &r, &err), DPA_OK);
    check_delta("120000 x approx(0.02, 1e-12)", c, 1, 52.78576676719909, r.lower, r.upper, 1e-13, 0);
    CHECK(r.lower <= 9.99999999984845e-6 * (1 + 1e-14) && 9.99999999984845e-6 * (1 - 1e-14) <= r.upper,
          "120000 x approx(0.02, 1e-12): [%.17g, %.17g] misses the audit's 9.99999999984845e-6", r.lower, r.upper);
    dpa_accountant_free(A);
}

/* ------------------------------------------------------------------ */
/* Exact composition of (eps, delta)-DP steps (LT Thm 4.6 / Cor 4.7), high-precision values */

/* a printed reference and half a unit of its last digit */
static int within(double lo, double up, const char *text)
{
    double v = strtod(text, NULL);
    const char *dot = strchr(text, '.'), *e = strpbrk(text, "eE");
    int nd = dot ? (int)((e ? e : text + strlen(text)) - dot - 1) : 0, ex = e ? atoi(e + 1) : 0;
    double s = 0.5 * pow(10.0, ex - nd) + 1e-15 * fabs(v);
    return lo <= v + s && v - s <= up;
}

static void test_reference_values(void **state)
{
    (void)state;
    char json[256], what[128];
    dpa_result r;
    dpa_error err;
    static const struct { int k; const char *eps; } rows[] = {
        {1, "0.0999981142092"}, {2, "0.199996444156"}, {5, "0.499976175798"}, {10, "0.999433832902"},
        {20, "1.79282997463"}, {50, "3.26413307878"}, {99, "5.56619977567"}, {100, "6.96961878374"},
    };
    for (size_t i = 0; i < N(rows); i++) {
        snprintf(json, sizeof json, "{\"repeat\":{\"count\":%d,\"event\":{\"approx\":{\"epsilon\":0.1,\"delta\":1e-8}}}}",
                 rows[i].k);
        dpa_accountant *a = acct(json);
        assert_int_equal(dpa_accountant_epsilon(a, 1e-6, &r, &err), DPA_OK);
        /* k = 100: delta 1e-6 exceeds the +inf mass by only 5e-15 relative, so
         * the eps there moves by 1e-12 with the 2e-23 by which the double
         * 1e-6 differs from the real 1e-6 (the listed value is for real
         * inputs; MPFR for the doubles: eps = 6.96961878374642): MPFR only */
        if (rows[i].k != 100)
            CHECK(within(r.lower, r.upper, rows[i].eps), "%s: eps(1e-6) in [%.17g, %.17g], reference %s", json, r.lower,
                  r.upper, rows[i].eps);
        leafspec l[] = {{0.1, rows[i].k, 1e-8}};
        snprintf(what, sizeof what, "%d x (0.1, 1e-8)", rows[i].k);
        check_eps(what, l, 1, 1e-6, r.lower, r.upper, 1e-9);
        dpa_accountant_free(a);
    }
    static const struct { int k; const char *eps; } rows2[] = {
        {10, "0.999994339916"}, {50, "3.77946575427"}, {99, "6.25609561629"}, {100, "7.95550572013"},
    };
    for (size_t i = 0; i < N(rows2); i++) {
        snprintf(json, sizeof json, "{\"repeat\":{\"count\":%d,\"event\":{\"approx\":{\"epsilon\":0.1,\"delta\":1e-10}}}}",
                 rows2[i].k);
        dpa_accountant *a = acct(json);
        assert_int_equal(dpa_accountant_epsilon(a, 1e-8, &r, &err), DPA_OK);
        /* k = 100: as above (delta 1e-8 exceeds the +inf mass by 5e-9
         * relative; the double 1e-8 is 2.1e-25 above the real one, which moves
         * eps by 2e-10): the listed 7.95550572013 is for real inputs, MPFR for
         * the doubles gives eps = 7.95550572035040 */
        CHECK(isfinite(r.upper) && (rows2[i].k == 100 || within(r.lower, r.upper, rows2[i].eps)),
              "%s: eps(1e-8) in [%.17g, %.17g], reference %s", json, r.lower, r.upper, rows2[i].eps);
        leafspec l[] = {{0.1, rows2[i].k, 1e-10}};
        snprintf(what, sizeof what, "%d x (0.1, 1e-10)", rows2[i].k);
        check_eps(what, l, 1, 1e-8, r.lower, r.upper, 1e-9);
        dpa_accountant_free(a);
    }
    /* profile at the Kairouz points.  The listed values are for the real
     * eps 0.1; the double 0.1 is 5.6e-18 larger, so 10 x 0.1 = 1 + 5.6e-17
     * and delta(1.0) exceeds the listed 9.99999955000001e-8 (the +inf mass)
     * by (1 - 1e-8)^10 p^10 (1 - e^{-5.6e-17}) = 8.8e-20: that point is
     * checked against the MPFR reference only. */
    static const struct { int k; double t; const char *d; } prof[] = {
        {2, 0.2, "1.9999999900000000e-8"}, {2, 0.0, "0.0499583939587124"}, {5, 0.3, "0.00722832289766739"},
        {5, 0.1, "0.0458483911385564"}, {10, 0.8, "0.000288333828790764"}, {10, 0.4, "0.0160802303851954"},
        {10, 1.0, NULL},
    };
    for (size_t i = 0; i < N(prof); i++) {
        leafspec l[] = {{0.1, prof[i].k, 1e-8}};
        dpa_rr_comp c;
        build(&c, l, 1);
        double up, lo;
        dpa_rr_delta(&c, prof[i].t, &up, &lo);
        snprintf(what, sizeof what, "%d x (0.1, 1e-8)", prof[i].k);
        if (prof[i].d)
            CHECK(within(lo, up, prof[i].d), "%s: delta(%g) in [%.17g, %.17g], reference %s", what, prof[i].t, lo, up,
                  prof[i].d);
        check_delta(what, l, 1, prof[i].t, lo, up, 1e-13, 0);
        dpa_rr_free(&c);
    }
    /* heterogeneous eps = (0.1, 0.5, 1.0), delta = (1e-6, 1e-5, 0): delta(0.3) */
    {
        leafspec l[] = {{0.1, 1, 1e-6}, {0.5, 1, 1e-5}, {1.0, 1, 0}};
        dpa_rr_comp c;
        build(&c, l, 3);
        double up, lo;
        dpa_rr_delta(&c, 0.3, &up, &lo);
        CHECK(within(lo, up, "0.368032583983433134"), "(0.1,1e-6)+(0.5,1e-5)+(1,0): delta(0.3) in [%.17g, %.17g]", lo, up);
        check_delta("(0.1,1e-6)+(0.5,1e-5)+(1,0)", l, 3, 0.3, lo, up, 1e-13, 0);
        dpa_rr_free(&c);
    }
    /* RR(1, 0.1) composed with RR(0.5, 0.05) */
    {
        leafspec l[] = {{1, 1, 0.1}, {0.5, 1, 0.05}};
        static const struct { double t; const char *d; } pts[] = {
            {-2, "0.884288332832696"}, {0, "0.540110169457308"}, {0.7, "0.359250334352719"}, {2, "0.14500000000000000"}};
        dpa_rr_comp c;
        build(&c, l, 2);
        for (size_t i = 0; i < N(pts); i++) {
            double up, lo;
            dpa_rr_delta(&c, pts[i].t, &up, &lo);
            CHECK(within(lo, up, pts[i].d), "RR(1,0.1)+RR(0.5,0.05): delta(%g) in [%.17g, %.17g], reference %s", pts[i].t,
                  lo, up, pts[i].d);
            check_delta("RR(1,0.1)+RR(0.5,0.05)", l, 2, pts[i].t, lo, up, 1e-13, 0);
        }
        dpa_rr_free(&c);
    }
}

/* ------------------------------------------------------------------ */
/* homogeneous sweep over counts 1..1e6 */

static void test_sweep(void **state)
{
    (void)state;
    static const double dls[] = {0, 1e-12, 1e-6};
    static const double qd[] = {1e-3, 1e-6, 1e-10, 1e-15};
    int ncase = quick ? 12 : 160;
    char what[160];
    clock_t t0 = clock();
    double worst_exact = 0;
    for (int c = 0; c < ncase; c++) {
        double k = c < 4 ? (double)(c + 1) : floor(test_log_unif(1, c % 6 == 0 ? 1e6 : 3e4));
        double e = c % 7 == 3 ? 0.25 * (1 + c % 8) : test_log_unif(1e-4, 10);
        double dl = dls[c % 3];
        /* keep e sqrt(k) moderate for the big counts (otherwise every delta
         * below is 0 or the +inf mass) */
        leafspec l[] = {{e, k, dl}};
        describe(what, sizeof what, l, 1);
        dpa_rr_comp cc;
        build(&cc, l, 1);
        double L = e * k, sd = 2 * e * sqrt(k * 0.25);
        double mean = e * k * tanh(e / 2);
        /* t: a lattice point near mean + 2 sd, a point between lattice points,
         * a negative t, the largest loss and beyond it */
        double yy = floor((fmin(L, mean + 2 * sd) / e + k) / 2);
        double ts[6];
        ts[0] = e * (2 * yy - k);
        ts[1] = e * (2 * yy - k + test_unif() * 2);
        ts[2] = -fmin(L, sd) * test_unif();
        ts[3] = fmax(0, mean - sd * test_unif());
        ts[4] = L;
        ts[5] = L * (1 + 1e-9) + 1;
        for (size_t j = 0; j < N(ts); j++) {
            double up, lo;
            dpa_rr_delta(&cc, ts[j], &up, &lo);
            check_delta(what, l, 1, ts[j], lo, up, 1e-12, 1e-300);
            if (j == 5) { /* beyond the largest loss only the +inf mass is left: exact */
                if (up - lo > worst_exact) worst_exact = up - lo;
                CHECK(up - lo <= 4.5e-16 * up + 5e-324, "%s: delta(%.17g) in [%.17g, %.17g], not exact", what, ts[j], lo,
                      up);
            }
        }
        for (size_t j = 0; j < N(qd); j++) {
            double up, lo;
            dpa_rr_epsilon(&cc, qd[j], &up, &lo);
            check_eps(what, l, 1, qd[j], lo, up, 1e-12);
        }
        dpa_rr_free(&cc);
    }
    print_message("    sweep: %d compositions in %.1f s, largest relative gaps: delta %.2g, eps %.2g\n", ncase,
                  (double)(clock() - t0) / CLOCKS_PER_SEC, worst_delta_gap, worst_eps_gap);
}

/* ------------------------------------------------------------------ */
/* heterogeneous compositions (2-3 distinct eps, small counts) */

static void test_heterogeneous(void **state)
{
    (void)state;
    static const leafspec sets[][3] = {
        {{0.1, 3, 1e-6}, {0.5, 5, 1e-5}, {1.0, 2, 0}},
        {{0.3, 40, 0}, {0.05, 60, 1e-9}, {0, 0, 0}},
        {{2.0, 4, 1e-3}, {0.01, 200, 0}, {0.7, 3, 1e-12}},
        {{1e-4, 30, 0}, {5.0, 6, 1e-8}, {0, 0, 0}},
        {{0.2, 12, 1e-7}, {0.2000001, 9, 1e-7}, {0.9, 1, 0.2}},
    };
    static const size_t ns[] = {3, 2, 3, 2, 3};
    char what[256];
    for (size_t s = 0; s < N(sets); s++) {
        size_t n = ns[s];
        describe(what, sizeof what, sets[s], n);
        dpa_rr_comp c;
        build(&c, sets[s], n);
        double L = 0;
        for (size_t i = 0; i < n; i++) L += sets[s][i].eps * sets[s][i].k;
        double ts[] = {-L - 1, -0.7 * L, -0.3, 0, 0.05 * L, 0.2 * L, 0.37 * L, 0.6 * L, L - 1e-9, L, 2 * L};
        for (size_t j = 0; j < N(ts); j++) {
            double up, lo;
            dpa_rr_delta(&c, ts[j], &up, &lo);
            check_delta(what, sets[s], n, ts[j], lo, up, 1e-12, 1e-300);
        }
        static const double qd[] = {0.3, 1e-3, 1e-6, 1e-10};
        for (size_t j = 0; j < N(qd); j++) {
            double up, lo;
            dpa_rr_epsilon(&c, qd[j], &up, &lo);
            check_eps(what, sets[s], n, qd[j], lo, up, 1e-12);
        }
        dpa_rr_free(&c);
    }
    /* a large inner count (blocked tables are not needed here, but the inner
     * sum is a table lookup) with small outer ones */
    {
        leafspec l[] = {{0.001, 1e6, 0}, {0.5, 2, 1e-9}, {1.5, 1, 0}};
        describe(what, sizeof what, l, 3);
        dpa_rr_comp c;
        build(&c, l, 3);
        double ts[] = {-1, 0, 1.5, 3.3, 5.2};
        for (size_t j = 0; j < N(ts); j++) {
            double up, lo;
            dpa_rr_delta(&c, ts[j], &up, &lo);
            check_delta(what, l, 3, ts[j], lo, up, 1e-12, 1e-300);
        }
        double up, lo;
        dpa_rr_epsilon(&c, 1e-6, &up, &lo);
        check_eps(what, l, 3, 1e-6, lo, up, 1e-12);
        dpa_rr_free(&c);
    }
}

/* ------------------------------------------------------------------ */
/* large counts */

/* delta_up and delta_lo non-increasing over a grid of t (a few ulps of slack) */
static void check_monotone(const char *what, const dpa_rr_comp *c, double t0, double t1)
{
    double pu = INFINITY, pl = INFINITY;
    for (int i = 0; i <= 40; i++) {
        double t = t0 + (t1 - t0) * i / 40.0, up, lo;
        dpa_rr_delta(c, t, &up, &lo);
        CHECK(!isnan(up) && !isnan(lo) && lo <= up, "%s: delta(%.17g) in [%.17g, %.17g]", what, t, lo, up);
        CHECK(up <= pu * (1 + 1e-15) && lo <= pl * (1 + 1e-15), "MONOTONE %s: delta(%.17g) in [%.17g, %.17g] above the "
              "previous [%.17g, %.17g]", what, t, lo, up, pl, pu);
        pu = up;
        pl = lo;
    }
}

static void test_large_counts(void **state)
{
    (void)state;
    char what[128];
    double up, lo;
    clock_t t0;
    /* 1e6 x RR(0.001) at delta 1e-5 (PLD gave [4.3657, 4.3913]) and 1e-8 */
    {
        leafspec l[] = {{0.001, 1e6, 0}};
        dpa_rr_comp c;
        t0 = clock();
        build(&c, l, 1);
        dpa_rr_epsilon(&c, 1e-5, &up, &lo);
        print_message("    1e6 x RR(0.001): eps(1e-5) in [%.17g, %.17g] (%.3f s)\n", lo, up,
                      (double)(clock() - t0) / CLOCKS_PER_SEC);
        check_eps("1e6 x RR(0.001)", l, 1, 1e-5, lo, up, 1e-13);
        dpa_rr_epsilon(&c, 1e-8, &up, &lo);
        print_message("    1e6 x RR(0.001): eps(1e-8) in [%.17g, %.17g]\n", lo, up);
        check_eps("1e6 x RR(0.001)", l, 1, 1e-8, lo, up, 1e-13);
        check_monotone("1e6 x RR(0.001)", &c, -2, 8);
        dpa_rr_free(&c);
    }
    /* 1e8 x pure(1e-5) at delta 1e-5 and 1e-6 (PLD gave [0.3335, 0.3510]) */
    {
        leafspec l[] = {{1e-5, 1e8, 0}};
        dpa_rr_comp c;
        t0 = clock();
        build(&c, l, 1);
        dpa_rr_epsilon(&c, 1e-5, &up, &lo);
        print_message("    1e8 x pure(1e-5): eps(1e-5) in [%.17g, %.17g] (%.3f s)\n", lo, up,
                      (double)(clock() - t0) / CLOCKS_PER_SEC);
        stop_bits = 90;
        check_eps("1e8 x pure(1e-5)", l, 1, 1e-5, lo, up, 1e-12);
        dpa_rr_epsilon(&c, 1e-6, &up, &lo);
        check_eps("1e8 x pure(1e-5)", l, 1, 1e-6, lo, up, 1e-12);
        stop_bits = 130;
        check_monotone("1e8 x pure(1e-5)", &c, -0.1, 0.6);
        CHECK(!c.loose, "1e8 x pure(1e-5): loose");
        dpa_rr_free(&c);
    }
    /* 1e12 x pure(1) at delta 1e-6: blocked tables (window ~3.5e7 points) */
    {
        leafspec l[] = {{1, 1e12, 0}};
        dpa_rr_comp c;
        t0 = clock();
        build(&c, l, 1);
        dpa_rr_epsilon(&c, 1e-6, &up, &lo);
        double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
        print_message("    1e12 x pure(1): eps(1e-6) in [%.17g, %.17g] (%.3f s)\n", lo, up, secs);
        CHECK(!c.loose && isfinite(up) && up - lo <= 1e-13 * up, "1e12 x pure(1): eps(1e-6) in [%.17g, %.17g]", lo, up);
        snprintf(what, sizeof what, "1e12 x pure(1)");
        double mean = 1e12 * tanh(0.5), sd = 2 * sqrt(1e12 * 0.25 / cosh(0.5) / cosh(0.5));
        check_monotone(what, &c, mean - 3 * sd, mean + 6 * sd);
        if (!SANITIZED && !quick) {
            /* MPFR over the relevant part of the window (~3e6 terms per point) */
            stop_bits = 80;
            check_eps(what, l, 1, 1e-6, lo, up, 1e-13);
            dpa_rr_delta(&c, mean + 4.3 * sd, &up, &lo);
            check_delta(what, l, 1, mean + 4.3 * sd, lo, up, 1e-11, 0);
            stop_bits = 130;
        }
        dpa_rr_free(&c);
    }
    /* 1e15 x pure(1): the Chernoff fallback, certified but loose */
    {
        leafspec l[] = {{1, 1e15, 0}};
        dpa_rr_comp c;
        t0 = clock();
        build(&c, l, 1);
        dpa_rr_epsilon(&c, 1e-6, &up, &lo);
        print_message("    1e15 x pure(1) (loose = %d): eps(1e-6) in [%.17g, %.17g] (%.3f s)\n", c.loose, lo, up,
                      (double)(clock() - t0) / CLOCKS_PER_SEC);
        CHECK(c.loose, "1e15 x pure(1): not flagged loose");
        double mean = 1e15 * tanh(0.5), sd = 2 * sqrt(1e15 * 0.25 / cosh(0.5) / cosh(0.5));
        /* normal approximation of eps(1e-6): mean + ~4.5 sd; the bracket must be
         * around it and not absurdly wide */
        CHECK(lo > mean + 3 * sd && up < mean + 6 * sd && up - lo < 1e-6 * up, "1e15 x pure(1): eps(1e-6) in [%.17g, %.17g]",
              lo, up);
        double d_up, d_lo;
        dpa_rr_delta(&c, up, &d_up, &d_lo);
        CHECK(d_up <= 1e-6, "1e15 x pure(1): delta(%.17g) upper %.17g > 1e-6", up, d_up);
        dpa_rr_delta(&c, lo, &d_up, &d_lo);
        CHECK(d_lo > 1e-6, "1e15 x pure(1): delta(%.17g) lower %.17g <= 1e-6", lo, d_lo);
        check_monotone("1e15 x pure(1)", &c, mean - 2 * sd, mean + 8 * sd);
        /* symmetric: delta(-t) = 1 - e^{-t} + e^{-t} delta(t), both brackets
         * contain points of the same true profile */
        dpa_rr_delta(&c, -1, &d_up, &d_lo);
        CHECK(d_lo >= -expm1(-1.0) * (1 - 1e-15) && d_up <= 1, "1e15 x pure(1): delta(-1) in [%.17g, %.17g]", d_lo, d_up);
        dpa_rr_free(&c);
    }
}

/* ------------------------------------------------------------------ */
/* edge cases */

static void test_edges(void **state)
{
    (void)state;
    double up, lo;
    dpa_rr_comp c;
    /* a single (1, 1e-6) step at delta = 1e-6: the +inf mass exactly; eps is
     * the largest finite loss 1 */
    {
        leafspec l[] = {{1, 1, 1e-6}};
        build(&c, l, 1);
        dpa_rr_epsilon(&c, 1e-6, &up, &lo);
        CHECK(up == 1 && lo <= 1 && lo > 1 - 1e-9, "(1, 1e-6) at 1e-6: eps in [%.17g, %.17g], want 1", lo, up);
        dpa_rr_epsilon(&c, nextafter(1e-6, 0), &up, &lo);
        CHECK(isinf(up) && isinf(lo), "(1, 1e-6) just below 1e-6: eps in [%.17g, %.17g], want inf", lo, up);
        dpa_rr_epsilon(&c, nextafter(1e-6, 1), &up, &lo);
        CHECK(up <= 1 && lo > 0.99, "(1, 1e-6) just above 1e-6: eps in [%.17g, %.17g]", lo, up);
        check_eps("(1, 1e-6) x 1", l, 1, nextafter(1e-6, 1), lo, up, 1e-9);
        dpa_rr_delta(&c, 1, &up, &lo);
        CHECK(up == 1e-6 && lo == 1e-6, "(1, 1e-6): delta(1) in [%.17g, %.17g], want 1e-6", lo, up);
        dpa_rr_delta(&c, 1e300, &up, &lo);
        CHECK(up == 1e-6 && lo == 1e-6, "(1, 1e-6): delta(1e300) in [%.17g, %.17g], want 1e-6", lo, up);
        dpa_rr_delta(&c, -DBL_MAX, &up, &lo);
        /* 1 - (1 - 1e-6) e^t < 1: the largest double below 1 is the best lower bound */
        CHECK(up == 1 && lo == nextafter(1.0, 0), "(1, 1e-6): delta(-DBL_MAX) in [%.17g, %.17g]", lo, up);
        dpa_rr_free(&c);
    }
    /* several steps: delta at the +inf mass rounded either way */
    {
        leafspec l[] = {{0.3, 7, 1e-7}, {0.3, 5, 2e-7}};
        build(&c, l, 2);
        double im = -expm1(7 * log1p(-1e-7) + 5 * log1p(-2e-7));
        for (int s = -2; s <= 2; s++) {
            double dq = im;
            for (int i = 0; i < abs(s); i++) dq = nextafter(dq, s < 0 ? 0 : 1);
            dpa_rr_epsilon(&c, dq, &up, &lo);
            check_eps("7 x (0.3, 1e-7) + 5 x (0.3, 2e-7)", l, 2, dq, lo, up, 1e-9);
        }
        dpa_rr_free(&c);
    }
    /* no +inf mass: finite eps at every delta, at most the largest loss */
    {
        leafspec l[] = {{0.3, 50, 0}};
        build(&c, l, 1);
        static const double tiny[] = {0.5, 1e-8, 1e-14, 1e-300, 4.9e-324};
        for (size_t i = 0; i < N(tiny); i++) {
            dpa_rr_epsilon(&c, tiny[i], &up, &lo);
            CHECK(isfinite(up) && up <= 15 * (1 + 1e-15) && lo <= up, "50 x pure(0.3): eps(%g) in [%.17g, %.17g]", tiny[i],
                  lo, up);
            if (tiny[i] >= 1e-300) check_eps("50 x pure(0.3)", l, 1, tiny[i], lo, up, 1e-9);
        }
        dpa_rr_free(&c);
    }
    /* counts of 1, tiny and huge eps, leaf delta near 1 */
    static const leafspec one[] = {
        {1e-12, 1, 0}, {1e-12, 1000, 1e-12}, {1e-300, 1, 0}, {700, 1, 0}, {750, 3, 1e-9}, {1000, 1, 0},
        {12000, 2, 0}, {0.5, 1, 0.999999}, {2, 20, 0.9}, {5.0, 1, 0}, {30, 200, 0},
    };
    char what[128];
    for (size_t i = 0; i < N(one); i++) {
        describe(what, sizeof what, &one[i], 1);
        build(&c, &one[i], 1);
        double L = one[i].eps * one[i].k;
        double ts[] = {-DBL_MAX, -2 * L, -L, -0.5 * L, -1e-13, 0, 1e-13, 0.3 * L, L * (1 - 1e-15), L, DBL_MAX};
        for (size_t j = 0; j < N(ts); j++) {
            dpa_rr_delta(&c, ts[j], &up, &lo);
            if (fabs(ts[j]) < 1e300) check_delta(what, &one[i], 1, ts[j], lo, up, 1e-12, 1e-300);
            else CHECK(lo <= up && !isnan(lo), "%s: delta(%g) in [%g, %g]", what, ts[j], lo, up);
        }
        static const double qd[] = {0.5, 1e-3, 1e-9, 1e-200};
        for (size_t j = 0; j < N(qd); j++) {
            dpa_rr_epsilon(&c, qd[j], &up, &lo);
            check_eps(what, &one[i], 1, qd[j], lo, up, 1e-9);
        }
        dpa_rr_free(&c);
    }
    /* eps 0 leaves only enter the +inf mass */
    {
        leafspec l[] = {{0, 4, 1e-3}};
        build(&c, l, 1);
        dpa_rr_delta(&c, 0.5, &up, &lo);
        check_delta("4 x (0, 1e-3)", l, 1, 0.5, lo, up, 1e-15, 0);
        dpa_rr_delta(&c, -0.5, &up, &lo);
        check_delta("4 x (0, 1e-3)", l, 1, -0.5, lo, up, 1e-15, 0);
        dpa_rr_epsilon(&c, 0.01, &up, &lo);
        CHECK(up == 0 && lo == 0, "4 x (0, 1e-3): eps(0.01) in [%g, %g], want 0", lo, up);
        dpa_rr_free(&c);
    }
    /* extreme heterogeneous: pure(1e300) with RR(1e-300) */
    {
        leafspec l[] = {{1e300, 1, 0}, {1e-300, 1, 0}};
        build(&c, l, 2);
        static const double ts[] = {-DBL_MAX, -1e300, -746, 0, 746, 1e300, DBL_MAX};
        for (size_t j = 0; j < N(ts); j++) {
            dpa_rr_delta(&c, ts[j], &up, &lo);
            CHECK(!isnan(up) && !isnan(lo) && 0 <= lo && lo <= up && up <= 1, "pure(1e300)+RR(1e-300): delta(%g) in [%g, %g]",
                  ts[j], lo, up);
        }
        dpa_rr_epsilon(&c, 1e-5, &up, &lo);
        CHECK(!isnan(up) && !isnan(lo) && lo <= up, "pure(1e300)+RR(1e-300): eps in [%g, %g]", lo, up);
        dpa_rr_free(&c);
    }
}

/* ------------------------------------------------------------------ */
/* random compositions, thresholds next to lattice points (an ulp or 1e-9
 * below and above), more cases with DPA_TEST_STRESS=n */

static void test_random(void **state)
{
    (void)state;
    const char *env = getenv("DPA_TEST_STRESS");
    int ncase = env ? atoi(env) : quick ? 8 : 40;
    char what[256];
    for (int c = 0; c < ncase; c++) {
        leafspec l[3];
        size_t n = 1 + (size_t)(test_unif() * 3);
        if (n > 3) n = 3;
        for (size_t i = 0; i < n; i++) {
            l[i].eps = test_unif() < 0.2 ? 0.125 * (1 + floor(test_unif() * 16)) : test_log_unif(1e-5, 12);
            l[i].k = n == 1 ? floor(test_log_unif(1, 2e5)) : floor(test_log_unif(1, i == 0 ? 3000 : 25));
            double r = test_unif();
            l[i].delta = r < 0.4 ? 0 : r < 0.7 ? test_log_unif(1e-15, 1e-5) : r < 0.9 ? test_log_unif(1e-5, 0.1) : 1 - test_log_unif(1e-9, 0.5);
        }
        describe(what, sizeof what, l, n);
        dpa_rr_comp cc;
        build(&cc, l, n);
        double sd2 = 0;
        for (size_t i = 0; i < n; i++) sd2 += l[i].eps * l[i].eps * l[i].k;
        for (int j = 0; j < 10; j++) {
            /* a lattice point of the first eps, shifted by 0, +-1 ulp, +-1e-9 relative */
            const leafspec *f = &l[(size_t)(test_unif() * n) % n];
            double y = floor(test_unif() * (f->k + 1)), t = f->eps * (2 * y - f->k);
            if (j < 6) t = fmin(t, sqrt(sd2) * (2 + 4 * test_unif()));
            switch (j % 5) {
            case 1: t = nextafter(t, INFINITY); break;
            case 2: t = nextafter(t, -INFINITY); break;
            case 3: t *= 1 + 1e-9; break;
            case 4: t = t * (1 - 1e-9) - 1e-12; break;
            default: break;
            }
            double up, lo;
            dpa_rr_delta(&cc, t, &up, &lo);
            check_delta(what, l, n, t, lo, up, n == 1 ? 1e-11 : 1e-10, 1e-300);
        }
        static const double qd[] = {0.2, 1e-4, 1e-9, 1e-14};
        for (size_t j = 0; j < N(qd); j++) {
            double up, lo;
            dpa_rr_epsilon(&cc, qd[j], &up, &lo);
            check_eps(what, l, n, qd[j], lo, up, 1e-9);
        }
        dpa_rr_free(&cc);
    }
}

/* ------------------------------------------------------------------ */
/* Two-point pairs (dpa_rr_applicable_dir / dpa_rr_build_dir): Poisson-
 * subsampled RR in both directions, general two-point pairs, mixtures with
 * (eps, delta) leaves.
 *
 * Reference model (exact_rr.h): the finite losses are the stored atoms' w
 * (exact doubles), the A-probabilities the true ones: for a Poisson-
 * subsampled RR(eps) at rate q computed here in MPFR from q and eps
 * (remove direction a_hi = q p + (1 - q)(1 - p), a_lo = q (1 - p) + (1 - q) p,
 * p = e^eps / (1 + e^eps); add direction: the B-masses 1 - p at -w_hi and p
 * at -w_lo), for an explicitly built atom pair exp(la) exactly.
 * delta(t) = 1 - P + P F(t), F summed in MPFR with S(y) = y w_hi + (k - y) w_lo
 * exact (SPREC bits). */

#define SPREC 2240
#define RN MPFR_RNDN

typedef struct rgrp {
    double whi, wlo, k; /* whi == wlo: one point (p = 1, q = 0); approximations if !exact */
    mpfr_t p, q;        /* A-probabilities of whi and wlo */
    mpfr_t wh, wl;      /* the losses (SPREC bits) */
    int exact;          /* losses are the doubles whi, wlo: S(y) computed exactly */
} rgrp;

typedef struct rmodel {
    rgrp g[8];
    size_t ng;
    mpfr_t lk; /* sum_j k_j log(1 - A_j(+inf)) */
    int full;  /* some A_j(+inf) = 1 */
    int gen;   /* some factor is a two-point pair (losses with a representation range) */
    double dS; /* sum over two-point factors of k max |w| DPA_RR_LOSS_ULPS u_d */
} rmodel;

static void model_init(rmodel *M)
{
    M->ng = 0;
    M->full = 0;
    M->gen = 0;
    M->dS = 0;
    mpfr_init2(M->lk, 4 * PREC);
    mpfr_set_zero(M->lk, 1);
}

static void model_clear(rmodel *M)
{
    for (size_t i = 0; i < M->ng; i++) mpfr_clears(M->g[i].p, M->g[i].q, M->g[i].wh, M->g[i].wl, (mpfr_ptr)0);
    mpfr_clear(M->lk);
}

/* a factor with losses wh > wl (SPREC bits; exact: they are doubles) and
 * A-probabilities proportional to (ph, pl) */
static void model_add_m(rmodel *M, const mpfr_t wh, const mpfr_t wl, int exact, const mpfr_t ph, const mpfr_t pl,
                        double k)
{
    double whi = mpfr_get_d(wh, RN), wlo = mpfr_get_d(wl, RN);
    mpfr_t sm, p, q;
    mpfr_inits2(4 * PREC, sm, p, q, (mpfr_ptr)0);
    mpfr_add(sm, ph, pl, RN);
    mpfr_div(p, ph, sm, RN);
    mpfr_div(q, pl, sm, RN);
    size_t j = 0;
    while (j < M->ng && !(M->g[j].whi == whi && M->g[j].wlo == wlo && mpfr_equal_p(M->g[j].p, p))) j++;
    if (j < M->ng) M->g[j].k += k;
    else {
        assert_true(M->ng < N(M->g));
        rgrp *g = &M->g[M->ng++];
        g->whi = whi;
        g->wlo = wlo;
        g->k = k;
        g->exact = exact;
        mpfr_inits2(4 * PREC, g->p, g->q, (mpfr_ptr)0);
        mpfr_inits2(SPREC, g->wh, g->wl, (mpfr_ptr)0);
        mpfr_set(g->p, p, RN);
        mpfr_set(g->q, q, RN);
        mpfr_set(g->wh, wh, RN);
        mpfr_set(g->wl, wl, RN);
    }
    mpfr_clears(sm, p, q, (mpfr_ptr)0);
}

static void model_add(rmodel *M, double whi, double wlo, const mpfr_t ph, const mpfr_t pl, double k)
{
    mpfr_t a, b;
    mpfr_inits2(64, a, b, (mpfr_ptr)0);
    mpfr_set_d(a, whi, RN);
    mpfr_set_d(b, wlo, RN);
    model_add_m(M, a, b, 1, ph, pl, k);
    mpfr_clears(a, b, (mpfr_ptr)0);
}

/* k factors with A(+inf) = a */
static void model_inf(rmodel *M, const mpfr_t a, double k)
{
    if (mpfr_cmp_ui(a, 1) >= 0) {
        M->full = 1;
        return;
    }
    mpfr_t t;
    mpfr_init2(t, 4 * PREC);
    mpfr_neg(t, a, RN);
    mpfr_log1p(t, t, RN);
    mpfr_mul_d(t, t, k, RN);
    mpfr_add(M->lk, M->lk, t, RN);
    mpfr_clear(t);
}

/* k x RR(eps, delta) */
static void model_rr(rmodel *M, double eps, double delta, double k)
{
    mpfr_t a, b;
    mpfr_inits2(4 * PREC, a, b, (mpfr_ptr)0);
    if (delta > 0) {
        mpfr_set_d(a, delta, RN);
        model_inf(M, a, k);
    }
    if (eps > 0 && delta < 1) {
        mpfr_set_d(a, eps, RN);
        mpfr_exp(a, a, RN);
        mpfr_set_ui(b, 1, RN);
        model_add(M, eps, -eps, a, b, k);
    }
    mpfr_clears(a, b, (mpfr_ptr)0);
}

/* true masses of Poisson(q) RR(eps): m[0] = A(hi), m[1] = A(lo), m[2] =
 * B(hi) = 1/(1 + e^eps), m[3] = B(lo) = e^eps/(1 + e^eps) */
static void prr_masses(double q, double eps, mpfr_t m[4])
{
    mpfr_t E, pr, pq, Q, Q1;
    mpfr_inits2(4 * PREC, E, pr, pq, Q, Q1, (mpfr_ptr)0);
    mpfr_set_d(E, eps, RN);
    mpfr_exp(E, E, RN);
    mpfr_add_ui(pq, E, 1, RN);
    mpfr_div(pr, E, pq, RN);
    mpfr_ui_div(pq, 1, pq, RN);
    mpfr_set_d(Q, q, RN);
    mpfr_ui_sub(Q1, 1, Q, RN);
    mpfr_mul(m[0], Q, pr, RN);
    mpfr_fma(m[0], Q1, pq, m[0], RN);
    mpfr_mul(m[1], Q, pq, RN);
    mpfr_fma(m[1], Q1, pr, m[1], RN);
    mpfr_set(m[2], pq, RN);
    mpfr_set(m[3], pr, RN);
    mpfr_clears(E, pr, pq, Q, Q1, (mpfr_ptr)0);
}

/* k x Poisson(q) RR(eps) in direction dir: the losses of the stored pair
 * (atoms[0] = low, atoms[1] = high), the true masses */
static void model_prr(rmodel *M, const dpa_pair *P, double q, double eps, int dir, double k)
{
    mpfr_t m[4];
    for (int i = 0; i < 4; i++) mpfr_init2(m[i], 4 * PREC);
    prr_masses(q, eps, m);
    assert_int_equal(P->natoms, 2);
    M->gen = 1;
    M->dS += k * fmax(fabs(P->atoms[0].w), fabs(P->atoms[1].w)) * DPA_RR_LOSS_ULPS * 0x1p-53;
    if (dir == 0) model_add(M, P->atoms[1].w, P->atoms[0].w, m[0], m[1], k);
    else model_add(M, -P->atoms[0].w, -P->atoms[1].w, m[3], m[2], k);
    for (int i = 0; i < 4; i++) mpfr_clear(m[i]);
}

/* k x Poisson(q) RR(eps) in direction dir, the mathematical pair: losses
 * log1p(q expm1(+-eps)) and masses computed here */
static void model_prr_math(rmodel *M, double q, double eps, int dir, double k)
{
    mpfr_t m[4], wh, wl;
    for (int i = 0; i < 4; i++) mpfr_init2(m[i], 4 * PREC);
    mpfr_inits2(SPREC, wh, wl, (mpfr_ptr)0);
    prr_masses(q, eps, m);
    mpfr_set_d(wh, eps, RN);
    mpfr_expm1(wh, wh, RN);
    mpfr_mul_d(wh, wh, q, RN);
    mpfr_log1p(wh, wh, RN);
    mpfr_set_d(wl, -eps, RN);
    mpfr_expm1(wl, wl, RN);
    mpfr_mul_d(wl, wl, q, RN);
    mpfr_log1p(wl, wl, RN);
    M->gen = 1;
    if (dir == 0) model_add_m(M, wh, wl, 0, m[0], m[1], k);
    else {
        mpfr_neg(wh, wh, RN);
        mpfr_neg(wl, wl, RN);
        model_add_m(M, wl, wh, 0, m[3], m[2], k);
    }
    for (int i = 0; i < 4; i++) mpfr_clear(m[i]);
    mpfr_clears(wh, wl, (mpfr_ptr)0);
}

/* k x an explicit atom pair in direction dir: masses exp(la) exactly */
static void model_atoms(rmodel *M, const dpa_pair *P, int dir, double k)
{
    double fw[2] = {0, 0}, fl[2] = {0, 0};
    int nf = 0;
    mpfr_t a, b;
    mpfr_inits2(4 * PREC, a, b, (mpfr_ptr)0);
    M->gen = 1;
    for (size_t i = 0; i < P->natoms; i++) {
        const dpa_atom *at = &P->atoms[i];
        double w = dir ? -at->w : at->w, la = dir ? at->lb : at->la;
        if (la == -INFINITY || w == -INFINITY) continue;
        if (w == INFINITY) {
            mpfr_set_d(a, la, RN);
            mpfr_exp(a, a, RN);
            model_inf(M, a, k);
            continue;
        }
        assert_true(nf < 2);
        fw[nf] = w;
        fl[nf++] = la;
        if (fabs(w) * k * DPA_RR_LOSS_ULPS * 0x1p-53 > 0) M->dS += fabs(w) * k * DPA_RR_LOSS_ULPS * 0x1p-53;
    }
    if (nf == 1) {
        mpfr_set_ui(a, 1, RN);
        mpfr_set_zero(b, 1);
        model_add(M, fw[0], fw[0], a, b, k);
    } else if (nf == 2) {
        int h = fw[1] > fw[0];
        mpfr_set_d(a, fl[h], RN);
        mpfr_exp(a, a, RN);
        mpfr_set_d(b, fl[1 - h], RN);
        mpfr_exp(b, b, RN);
        model_add(M, fw[h], fw[1 - h], a, b, k);
    }
    mpfr_clears(a, b, (mpfr_ptr)0);
}

/* S(y) = y whi + (k - y) wlo, exact when g->exact */
static void S_at(mpfr_t S, const rgrp *g, double y)
{
    mpfr_t a;
    mpfr_init2(a, SPREC);
    int in = mpfr_mul_d(S, g->wh, y, RN);
    in |= mpfr_mul_d(a, g->wl, g->k - y, RN);
    in |= mpfr_add(S, S, a, RN);
    if (in && g->exact) fail_msg("S(y) not exact");
    mpfr_clear(a);
}

/* F(t) = sum_{S(y) > t} pmf(y) (1 - e^{t - S(y)}) for one group: *F and a
 * bound *tr on the omitted part (t exact, SPREC bits) */
static void ref_F2(const rgrp *g, const mpfr_t t, mpfr_t F, mpfr_t tr)
{
    mpfr_t S, x, w, r, term, tmp, w0;
    mpfr_inits2(SPREC, S, x, (mpfr_ptr)0);
    mpfr_inits2(PREC, w, r, term, tmp, w0, (mpfr_ptr)0);
    mpfr_set_zero(F, 1);
    mpfr_set_zero(tr, 1);
    double k = g->k;
#define TERM(y)                                  \
    do {                                         \
        S_at(S, g, (y));                         \
        if (mpfr_sub(x, t, S, RN) && g->exact) fail_msg("t - S(y) not exact"); \
        mpfr_expm1(term, x, RN);                 \
        mpfr_neg(term, term, RN);                \
    } while (0)
    if (mpfr_zero_p(g->q)) { /* all at y = k */
        S_at(S, g, k);
        if (mpfr_cmp(S, t) > 0) {
            TERM(k);
            mpfr_set(F, term, RN);
        }
        goto done;
    }
    double D = g->whi - g->wlo;
    double ys = floor((mpfr_get_d(t, RN) - k * g->wlo) / D) + 1;
    if (!(ys >= 0)) ys = 0;
    if (!(ys <= k + 1)) ys = k + 1;
    while (ys > 0 && (S_at(S, g, ys - 1), mpfr_cmp(S, t) > 0)) ys--;
    while (ys <= k && (S_at(S, g, ys), mpfr_cmp(S, t) <= 0)) ys++;
    if (ys > k) goto done;
    double md = floor((k + 1) * mpfr_get_d(g->p, RN));
    if (md > k) md = k;
    double y0 = ys > md ? ys : md;
    /* pmf(y0) */
    mpfr_set_d(tmp, k + 1, RN);
    mpfr_lngamma(w0, tmp, RN);
    mpfr_set_d(tmp, y0 + 1, RN);
    mpfr_lngamma(tmp, tmp, RN);
    mpfr_sub(w0, w0, tmp, RN);
    mpfr_set_d(tmp, k - y0 + 1, RN);
    mpfr_lngamma(tmp, tmp, RN);
    mpfr_sub(w0, w0, tmp, RN);
    mpfr_log(tmp, g->p, RN);
    mpfr_mul_d(tmp, tmp, y0, RN);
    mpfr_add(w0, w0, tmp, RN);
    mpfr_log(tmp, g->q, RN);
    mpfr_mul_d(tmp, tmp, k - y0, RN);
    mpfr_add(w0, w0, tmp, RN);
    mpfr_exp(w0, w0, RN);
    mpfr_set(w, w0, RN);
    for (double y = y0;; y++) {
        TERM(y);
        mpfr_mul(term, term, w, RN);
        mpfr_add(F, F, term, RN);
        if (y >= k) break;
        mpfr_set_d(r, k - y, RN);
        mpfr_div_d(r, r, y + 1, RN);
        mpfr_mul(r, r, g->p, RN);
        mpfr_div(r, r, g->q, RN);
        if (y >= md && mpfr_cmp_ui(r, 1) < 0) {
            mpfr_ui_sub(tmp, 1, r, RN);
            mpfr_div(tmp, r, tmp, RN);
            mpfr_mul(tmp, tmp, w, RN);
            mpfr_mul_2si(term, F, -stop_bits, RN);
            if (mpfr_cmp(tmp, term) < 0) {
                mpfr_mul_d(tmp, tmp, 1.01, MPFR_RNDU);
                mpfr_add(tr, tr, tmp, MPFR_RNDU);
                break;
            }
        }
        mpfr_mul(w, w, r, RN);
    }
    mpfr_set(w, w0, RN);
    for (double y = y0; y > ys; y--) {
        mpfr_set_d(r, y, RN); /* w(y-1) / w(y) = y q / ((k - y + 1) p) */
        mpfr_div_d(r, r, k - y + 1, RN);
        mpfr_mul(r, r, g->q, RN);
        mpfr_div(r, r, g->p, RN);
        if (y <= md && mpfr_cmp_ui(r, 1) < 0) {
            mpfr_ui_sub(tmp, 1, r, RN);
            mpfr_div(tmp, r, tmp, RN);
            mpfr_mul(tmp, tmp, w, RN);
            mpfr_mul_2si(term, F, -stop_bits, RN);
            if (mpfr_cmp(tmp, term) < 0) {
                mpfr_mul_d(tmp, tmp, 1.01, MPFR_RNDU);
                mpfr_add(tr, tr, tmp, MPFR_RNDU);
                break;
            }
        }
        mpfr_mul(w, w, r, RN);
        TERM(y - 1);
        mpfr_mul(term, term, w, RN);
        mpfr_add(F, F, term, RN);
    }
#undef TERM
done:
    mpfr_clears(S, x, (mpfr_ptr)0);
    mpfr_clears(w, r, term, tmp, w0, (mpfr_ptr)0);
}

/* pmf table y = 0..k of one group (small k) */
static mpfr_t *pmf_table2(const rgrp *g)
{
    size_t n = (size_t)g->k + 1;
    mpfr_t *v = malloc(n * sizeof *v);
    for (size_t y = 0; y < n; y++) {
        mpfr_init2(v[y], PREC);
        if (mpfr_zero_p(g->q)) mpfr_set_ui(v[y], y + 1 == n, RN);
        else if (y == 0) mpfr_pow_ui(v[0], g->q, (unsigned long)g->k, RN);
        else {
            mpfr_mul_d(v[y], v[y - 1], g->k - (double)y + 1, RN);
            mpfr_div_d(v[y], v[y], (double)y, RN);
            mpfr_mul(v[y], v[y], g->p, RN);
            mpfr_div(v[y], v[y], g->q, RN);
        }
    }
    return v;
}

/* delta(t) of the model: [*v, *v + *tr] contains it.  All groups but the
 * one with the largest count must have small counts (enumerated). */
static void ref_delta2(const rmodel *M, double t, mpfr_t v, mpfr_t tr)
{
    if (M->full) {
        mpfr_set_ui(v, 1, RN);
        mpfr_set_zero(tr, 1);
        return;
    }
    mpfr_t F, T, Fi, Ti, Pw, P, Q, tt, S;
    mpfr_inits2(PREC, F, T, Fi, Ti, Pw, (mpfr_ptr)0);
    mpfr_inits2(4 * PREC, P, Q, (mpfr_ptr)0);
    mpfr_inits2(SPREC, tt, S, (mpfr_ptr)0);
    mpfr_set_zero(F, 1);
    mpfr_set_zero(T, 1);
    size_t m = M->ng, ord[8];
    for (size_t i = 0; i < m; i++) ord[i] = i;
    for (size_t i = 0; i + 1 < m; i++) /* largest count last */
        if (M->g[ord[i]].k > M->g[ord[m - 1]].k) {
            size_t a = ord[i];
            ord[i] = ord[m - 1];
            ord[m - 1] = a;
        }
    if (m == 0) {
        if (t < 0) {
            mpfr_set_d(F, t, RN);
            mpfr_expm1(F, F, RN);
            mpfr_neg(F, F, RN);
        }
    } else {
        mpfr_t *tab[8];
        size_t idx[8] = {0};
        for (size_t i = 0; i + 1 < m; i++) tab[i] = pmf_table2(&M->g[ord[i]]);
        for (;;) {
            mpfr_set_ui(Pw, 1, RN);
            mpfr_set_d(tt, t, RN);
            for (size_t i = 0; i + 1 < m; i++) {
                mpfr_mul(Pw, Pw, tab[i][idx[i]], RN);
                S_at(S, &M->g[ord[i]], (double)idx[i]);
                if (mpfr_sub(tt, tt, S, RN) && M->g[ord[i]].exact) fail_msg("threshold not exact");
            }
            if (!mpfr_zero_p(Pw)) {
                ref_F2(&M->g[ord[m - 1]], tt, Fi, Ti);
                mpfr_mul(Fi, Fi, Pw, RN);
                mpfr_add(F, F, Fi, RN);
                mpfr_mul(Ti, Ti, Pw, MPFR_RNDU);
                mpfr_add(T, T, Ti, MPFR_RNDU);
            }
            size_t i = 0;
            while (i + 1 < m && ++idx[i] > (size_t)M->g[ord[i]].k) idx[i++] = 0;
            if (i + 1 >= m) break;
        }
        for (size_t i = 0; i + 1 < m; i++) {
            for (size_t y = 0; y <= (size_t)M->g[ord[i]].k; y++) mpfr_clear(tab[i][y]);
            free(tab[i]);
        }
    }
    mpfr_exp(P, M->lk, RN);
    mpfr_expm1(Q, M->lk, RN);
    mpfr_neg(Q, Q, RN);
    mpfr_mul(v, F, P, RN);
    mpfr_add(v, v, Q, RN);
    mpfr_mul(tr, T, P, MPFR_RNDU);
    mpfr_clears(F, T, Fi, Ti, Pw, P, Q, tt, S, (mpfr_ptr)0);
}

static double worst2_delta, worst2_eps;

static void check_delta2(const char *what, const rmodel *M, double t, double lo, double up, double rel, double abs_)
{
    mpfr_t v, tr, hi, rlo;
    mpfr_inits2(PREC, v, tr, hi, rlo, (mpfr_ptr)0);
    ref_delta2(M, t, v, tr);
    ref_range(v, tr, rlo, hi);
    CHECK(!isnan(lo) && !isnan(up) && lo >= 0 && up <= 1 && lo <= up, "%s: delta(%.17g) in [%.17g, %.17g]: malformed",
          what, t, lo, up);
    char rs[96];
    mpfr_snprintf(rs, sizeof rs, "%.20Rg (+%.3Rg)", v, tr);
    CHECK(mpfr_cmp_d(hi, lo) >= 0 && mpfr_cmp_d(rlo, up) <= 0,
          "BRACKET %s: delta(%.17g) in [%.17g, %.17g], reference %s", what, t, lo, up, rs);
    double allow = rel * up + abs_;
    if (up - lo > allow && M->dS > 0) {
        /* the losses' representation ranges (exact_rr.h) move S by up to dS:
         * allow the variation of the profile over t -+ 2 dS as well */
        mpfr_t v2;
        mpfr_init2(v2, PREC);
        ref_delta2(M, t - 2 * M->dS, v2, tr);
        ref_delta2(M, t + 2 * M->dS, v, tr);
        mpfr_sub(v2, v2, v, RN);
        allow += mpfr_get_d(v2, MPFR_RNDU);
        mpfr_clear(v2);
    }
    CHECK(up - lo <= allow, "WIDTH %s: delta(%.17g) in [%.17g, %.17g]: gap %.3g > %.3g", what, t, lo, up, up - lo,
          allow);
    if (rel < 1 && up > 1e-290 && (up - lo) / up > worst2_delta) worst2_delta = (up - lo) / up;
    mpfr_clears(v, tr, hi, rlo, (mpfr_ptr)0);
}

static void check_eps2(const char *what, const rmodel *M, double delta, double lo, double up, double rel)
{
    mpfr_t v, tr, hi, rlo, Q;
    mpfr_inits2(PREC, v, tr, hi, rlo, (mpfr_ptr)0);
    mpfr_init2(Q, 4 * PREC);
    if (M->full) mpfr_set_ui(Q, 1, RN);
    else {
        mpfr_expm1(Q, M->lk, RN);
        mpfr_neg(Q, Q, RN);
    }
    int inf_true = mpfr_cmp_d(Q, delta) > 0;
    CHECK(!isnan(lo) && !isnan(up) && lo >= 0 && lo <= up, "%s: eps(%.3g) in [%.17g, %.17g]: malformed", what, delta,
          lo, up);
    if (isinf(lo)) CHECK(inf_true, "INFINITE %s: eps(%.3g) = inf, but 1 - P <= delta", what, delta);
    else if (isinf(up)) {
        mpfr_sub_d(Q, Q, delta, RN);
        mpfr_abs(Q, Q, RN);
        CHECK(mpfr_cmp_d(Q, 1e-15 * delta) <= 0, "INFINITE %s: eps(%.3g) in [%.17g, inf] far from the +inf mass", what,
              delta, lo);
    } else {
        CHECK(!inf_true, "FINITE %s: eps(%.3g) in [%.17g, %.17g] but the true eps is infinite", what, delta, lo, up);
        char rs[64];
        ref_delta2(M, up, v, tr);
        ref_range(v, tr, rlo, hi);
        mpfr_snprintf(rs, sizeof rs, "%.20Rg", v);
        CHECK(mpfr_cmp_d(rlo, delta) <= 0, "BRACKET %s: eps(%.3g) upper %.17g infeasible: delta there %s", what, delta,
              up, rs);
        if (lo > 0) {
            ref_delta2(M, lo, v, tr);
            ref_range(v, tr, rlo, hi);
            mpfr_snprintf(rs, sizeof rs, "%.20Rg", v);
            CHECK(mpfr_cmp_d(hi, delta) > 0, "BRACKET %s: eps(%.3g) lower %.17g feasible: delta there %s", what, delta,
                  lo, rs);
        }
        CHECK(up - lo <= rel * fmax(1, up), "WIDTH %s: eps(%.3g) in [%.17g, %.17g]: gap %.3g", what, delta, lo, up,
              up - lo);
        if ((up - lo) / fmax(1, up) > worst2_eps) worst2_eps = (up - lo) / fmax(1, up);
    }
    mpfr_clears(v, tr, hi, rlo, Q, (mpfr_ptr)0);
}

/* the leaf set of a JSON spec (the pairs the library builds) */
static void leaves_of(const char *json, dpa_leafset *L)
{
    dpa_error err;
    dpa_spec *s = dpa_spec_from_json(json, &err);
    if (!s) fail_msg("spec %s: %s", json, err.message);
    if (dpa_leaves_build(s, L, &err) != DPA_OK) fail_msg("leaves %s: %s", json, err.message);
    dpa_spec_free(s);
}

static void build_dir(dpa_rr_comp *c, const dpa_leafset *L, int dir, const char *what)
{
    dpa_error err;
    memset(c, 0, sizeof *c);
    if (!dpa_rr_applicable_dir(L)) fail_msg("%s: dpa_rr_applicable_dir refused", what);
    if (dpa_rr_build_dir(c, L, dir, &err) != DPA_OK) fail_msg("%s: dpa_rr_build_dir(%d): %s", what, dir, err.message);
}

/* delta queries around the largest group of M (lattice points, an ulp off,
 * between lattice points, negative t, the largest loss and beyond) and eps
 * queries, checked against the model */
static void check_queries2(const char *what, const dpa_rr_comp *c, const rmodel *M, const rmodel *Mm, double drel,
                           double erel);

static void check_queries(const char *what, const dpa_rr_comp *c, const rmodel *M, double drel, double erel)
{
    check_queries2(what, c, M, NULL, drel, erel);
}

/* ... and, if Mm is not NULL, the brackets contain Mm's values too (the
 * mathematical pair of the stored one, within the representation ranges) */
static void check_queries2(const char *what, const dpa_rr_comp *c, const rmodel *M, const rmodel *Mm, double drel,
                           double erel)
{
    double L = 0, mean = 0, var = 0;
    int gen = M->gen;
    const rgrp *big = &M->g[0];
    for (size_t i = 0; i < M->ng; i++) {
        const rgrp *g = &M->g[i];
        double p = mpfr_get_d(g->p, RN), D = g->whi - g->wlo;
        L += g->k * g->whi;
        mean += g->k * (g->wlo + p * D);
        var += g->k * p * (1 - p) * D * D;
        if (g->k > big->k) big = g;
    }
    double sd = sqrt(var), ts[12];
    int nt = 0;
    if (M->ng) {
        double p = mpfr_get_d(big->p, RN), D = big->whi - big->wlo, k = big->k;
        double y = floor(fmin(k, k * p + 2 * sqrt(k * p * (1 - p)) + 1));
        double tl = y * big->whi + (k - y) * big->wlo; /* nearest double of a lattice point (alone) */
        ts[nt++] = tl;
        ts[nt++] = nextafter(tl, INFINITY);
        ts[nt++] = nextafter(tl, -INFINITY);
        ts[nt++] = tl - D * test_unif();
        ts[nt++] = mean + sd * (2 * test_unif() - 1);
        ts[nt++] = mean + 3 * sd;
        ts[nt++] = -fabs(mean) - sd * test_unif();
        ts[nt++] = 0;
        ts[nt++] = L;
        /* an ulp below the largest loss: one group's cell is located
         * exactly; several groups' thresholds are rounded (~u L), which is
         * large relative to the distance to the largest loss */
        ts[nt++] = M->ng == 1 ? nextafter(L, -INFINITY) : L - 1e-4 * (1 + fabs(L));
        ts[nt++] = L * (1 + 1e-9) + 1e-300;
    } else ts[nt++] = 0;
    for (int j = 0; j < nt; j++) {
        double up, lo;
        dpa_rr_delta(c, ts[j], &up, &lo);
        /* within an ulp of the largest loss, several groups' rounded
         * thresholds leave no relative accuracy, nor do the two-point
         * losses' representation ranges (exact_rr.h): bracket only */
        int top = (M->ng > 1 && ts[j] == L) || (gen && fabs(ts[j] - L) <= 1e-12 * fabs(L));
        check_delta2(what, M, ts[j], lo, up, top ? 1 : drel, 1e-300);
        if (Mm) check_delta2(what, Mm, ts[j], lo, up, 1, 1);
    }
    static const double qd[] = {1e-3, 1e-6, 1e-10, 1e-15};
    for (size_t j = 0; j < N(qd); j++) {
        double up, lo;
        dpa_rr_epsilon(c, qd[j], &up, &lo);
        check_eps2(what, M, qd[j], lo, up, erel);
        if (Mm) check_eps2(what, Mm, qd[j], lo, up, 1);
    }
}

/* |la - log m| in units of u_d (1 + |la|) */
static double rep_units(double la, const mpfr_t m)
{
    mpfr_t l;
    mpfr_init2(l, 4 * PREC);
    mpfr_log(l, m, RN);
    mpfr_sub_d(l, l, la, RN);
    double r = fabs(mpfr_get_d(l, RN)) / (0x1p-53 * (1 + fabs(la)));
    mpfr_clear(l);
    return r;
}

/* The stored log masses and losses of Poisson-subsampled RR pairs against
 * MPFR: the representation errors assumed by src/exact/exact_rr.h (DPA_RR_REP_ULPS,
 * DPA_RR_LOSS_ULPS) hold (losses: for rates up to 0.9; above, the loss map
 * log1p(q expm1(w)) cancels for w << 0 and the largest error is printed). */
static void test_pair_representation(void **state)
{
    (void)state;
    double worst = 0, worstw = 0, worstw1 = 0;
    mpfr_t m[4], w, d;
    for (int i = 0; i < 4; i++) mpfr_init2(m[i], 4 * PREC);
    mpfr_inits2(4 * PREC, w, d, (mpfr_ptr)0);
    int n = quick ? 500 : 5000;
    for (int c = 0; c < n; c++) {
        double q = c % 3 ? test_log_unif(1e-12, 0.9) : 1 - test_log_unif(1e-9, 0.5), eps = test_log_unif(1e-6, 700);
        dpa_error err;
        dpa_pair *P = dpa_pair_poisson(dpa_pair_rr(eps, 0, &err), q, &err);
        assert_non_null(P);
        assert_int_equal(P->natoms, 2);
        prr_masses(q, eps, m);
        double r[4] = {rep_units(P->atoms[1].la, m[0]), rep_units(P->atoms[0].la, m[1]),
                       rep_units(P->atoms[1].lb, m[2]), rep_units(P->atoms[0].lb, m[3])};
        for (int i = 0; i < 4; i++) {
            if (r[i] > worst) worst = r[i];
            CHECK(r[i] <= DPA_RR_REP_ULPS, "Poisson(%.17g) RR(%.17g): stored log mass %d off by %.3g u (1 + |la|)", q, eps,
                  i, r[i]);
        }
        /* the losses: log1p(q expm1(+-eps)) */
        for (int i = 0; i < 2; i++) {
            mpfr_set_d(w, i ? eps : -eps, RN);
            mpfr_expm1(w, w, RN);
            mpfr_mul_d(w, w, q, RN);
            mpfr_log1p(w, w, RN);
            mpfr_sub_d(d, w, P->atoms[i].w, RN);
            mpfr_div(d, d, w, RN);
            double rw = fabs(mpfr_get_d(d, RN)) / 0x1p-53;
            if (q <= 0.9) {
                if (rw > worstw) worstw = rw;
                CHECK(rw <= DPA_RR_LOSS_ULPS, "Poisson(%.17g) RR(%.17g): stored loss %.17g off by %.3g u_d relative", q,
                      eps, P->atoms[i].w, rw);
            } else if (rw > worstw1) worstw1 = rw;
        }
        dpa_pair_free(P);
    }
    for (int i = 0; i < 4; i++) mpfr_clear(m[i]);
    mpfr_clears(w, d, (mpfr_ptr)0);
    print_message("    Poisson RR pairs: largest log-mass error %.2f u_d (1 + |la|) (assumed %d), largest loss error "
                  "%.2f u_d |w| for rates <= 0.9 (assumed %d); %.3g u_d |w| for rates in (0.9, 1)\n",
                  worst, DPA_RR_REP_ULPS, worstw, DPA_RR_LOSS_ULPS, worstw1);
}

/* Poisson-subsampled RR, rates 1e-9..0.9, eps 0.01..20, counts 1..1e6, both
 * directions, built through the JSON path */
static void test_poisson_rr(void **state)
{
    (void)state;
    int ncase = quick ? 8 : 40;
    char json[512], what[256];
    clock_t t0 = clock();
    for (int c = 0; c < ncase; c++) {
        double q = test_log_unif(1e-9, 0.9), eps = test_log_unif(0.01, 20);
        double k = c < 3 ? (double)(1 + 2 * c) : floor(test_log_unif(1, c % 5 == 0 ? 1e6 : 3e4));
        if (c == 3) q = 0.9, eps = 20;
        if (c == 4) q = 1e-9, eps = 0.01;
        snprintf(json, sizeof json,
                 "{\"repeat\":{\"count\":%.17g,\"event\":{\"poisson\":{\"rate\":%.17g,\"event\":"
                 "{\"randomized_response\":{\"epsilon\":%.17g}}}}}}",
                 k, q, eps);
        dpa_leafset L;
        leaves_of(json, &L);
        assert_int_equal(L.n, 1);
        for (int dir = 0; dir < 2; dir++) {
            snprintf(what, sizeof what, "%.17g x Poisson(%.3g) RR(%.3g) dir %d", k, q, eps, dir);
            dpa_rr_comp cc;
            build_dir(&cc, &L, dir, what);
            rmodel M, Mm;
            model_init(&M);
            model_init(&Mm);
            model_prr(&M, L.v[0].pair, q, eps, dir, k);
            model_prr_math(&Mm, q, eps, dir, k);
            check_queries2(what, &cc, &M, &Mm, 1e-10, 1e-11);
            model_clear(&M);
            model_clear(&Mm);
            dpa_rr_free(&cc);
        }
        dpa_leaves_free(&L);
    }
    print_message("    Poisson RR: %d compositions x 2 directions in %.1f s, largest relative gaps: delta %.2g, eps %.2g\n",
                  ncase, (double)(clock() - t0) / CLOCKS_PER_SEC, worst2_delta, worst2_eps);
}

/* an atom pair from finite atoms (w, a, b) (w ascending) and the +inf /
 * -inf masses; masses given linearly, stored as logs */
static dpa_pair *mk_pair(const double *w, const double *a, const double *b, int n, double ainf, double bninf)
{
    dpa_error err;
    dpa_pair *P = dpa_pair_alloc(DPA_PAIR_ATOMS, (size_t)n + 2, &err);
    assert_non_null(P);
    size_t j = 0;
    if (bninf > 0) P->atoms[j++] = (dpa_atom){-INFINITY, -INFINITY, log(bninf)};
    for (int i = 0; i < n; i++) P->atoms[j++] = (dpa_atom){w[i], log(a[i]), log(b[i])};
    if (ainf > 0) P->atoms[j++] = (dpa_atom){INFINITY, log(ainf), -INFINITY};
    P->natoms = j;
    return P;
}

/* a random consistent two-point pair: type 0: w_lo < 0 < w_hi (no inf
 * atoms), 1: 0 <= w_lo < w_hi (B has mass at -inf), 2: w_lo < w_hi <= 0 (A
 * has mass at +inf); nice: losses on a dyadic lattice (exact ties) */
static dpa_pair *rand_pair(int type, int nice)
{
    double w[2], a[2], b[2], ainf = 0, bninf = 0;
    if (type == 0) {
        w[1] = nice ? 0.75 : test_log_unif(1e-4, 8);
        w[0] = nice ? -0.25 : -test_log_unif(1e-4, 8);
        double X = expm1(-w[0]), Y = -expm1(-w[1]);
        a[1] = X / (X + Y);
        a[0] = Y / (X + Y);
    } else if (type == 1) {
        w[0] = nice ? 0.5 : test_log_unif(1e-3, 2);
        w[1] = nice ? 1.5 : w[0] + test_log_unif(1e-3, 3);
        a[1] = 0.05 + 0.9 * test_unif();
        a[0] = 1 - a[1];
        bninf = 1 - a[0] * exp(-w[0]) - a[1] * exp(-w[1]);
    } else {
        w[1] = nice ? -0.5 : -test_log_unif(1e-3, 2);
        w[0] = nice ? -1.5 : w[1] - test_log_unif(1e-3, 3);
        b[1] = 0.05 + 0.9 * test_unif();
        b[0] = 1 - b[1];
        a[0] = b[0] * exp(w[0]);
        a[1] = b[1] * exp(w[1]);
        ainf = 1 - a[0] - a[1];
    }
    if (type != 2) b[0] = a[0] * exp(-w[0]), b[1] = a[1] * exp(-w[1]);
    return mk_pair(w, a, b, 2, ainf, bninf);
}

static void set_atom_leaf(dpa_leaf *v, dpa_pair *P, double k)
{
    memset(v, 0, sizeof *v);
    v->pair = P;
    v->count = k;
    v->mu = v->rr_eps = v->rr_delta = v->rate = NAN;
}

/* general two-point pairs, alone and composed (explicit atom lists) */
static void test_two_point_general(void **state)
{
    (void)state;
    int ncase = quick ? 10 : 48;
    char what[256];
    for (int c = 0; c < ncase; c++) {
        int n = c % 4 == 3 ? 2 + (int)(test_unif() * 2) : 1;
        dpa_leaf v[3];
        for (int i = 0; i < n; i++) {
            double k = n == 1 ? floor(test_log_unif(1, c % 8 == 0 ? 1e6 : 3e4)) : floor(test_log_unif(1, i == 0 ? 2000 : 20));
            set_atom_leaf(&v[i], rand_pair((c + i) % 3, c % 6 == 1), k);
        }
        dpa_leafset L;
        memset(&L, 0, sizeof L);
        L.v = v;
        L.n = (size_t)n;
        L.asymmetric = 1;
        for (int dir = 0; dir < 2; dir++) {
            int o = snprintf(what, sizeof what, "dir %d:", dir);
            for (int i = 0; i < n; i++) {
                const dpa_pair *P = v[i].pair;
                o += snprintf(what + o, sizeof what - (size_t)o, " %g x [", v[i].count);
                for (size_t j = 0; j < P->natoms && o < 200; j++)
                    o += snprintf(what + o, sizeof what - (size_t)o, "(%.4g %.4g %.4g)", P->atoms[j].w, P->atoms[j].la,
                                  P->atoms[j].lb);
                o += snprintf(what + o, sizeof what - (size_t)o, "]");
            }
            dpa_rr_comp cc;
            build_dir(&cc, &L, dir, what);
            rmodel M;
            model_init(&M);
            for (int i = 0; i < n; i++) model_atoms(&M, v[i].pair, dir, v[i].count);
            check_queries(what, &cc, &M, n == 1 ? 1e-10 : 1e-9, 1e-10);
            model_clear(&M);
            dpa_rr_free(&cc);
        }
        for (int i = 0; i < n; i++) dpa_pair_free(v[i].pair);
    }
    /* one finite atom: Poisson(0.3) of the non-private pair (A: 0.3 at +inf,
     * 0.7 at log 0.7; B: 1 at log 0.7) */
    {
        double w[1] = {log(0.7)}, a[1] = {0.7}, b[1] = {1};
        dpa_leaf v[1];
        set_atom_leaf(&v[0], mk_pair(w, a, b, 1, 0.3, 0), 7);
        dpa_leafset L;
        memset(&L, 0, sizeof L);
        L.v = v;
        L.n = 1;
        for (int dir = 0; dir < 2; dir++) {
            snprintf(what, sizeof what, "7 x Poisson(0.3) of non-private, dir %d", dir);
            dpa_rr_comp cc;
            build_dir(&cc, &L, dir, what);
            rmodel M;
            model_init(&M);
            model_atoms(&M, v[0].pair, dir, 7);
            check_queries(what, &cc, &M, 1e-12, 1e-12);
            model_clear(&M);
            dpa_rr_free(&cc);
        }
        dpa_pair_free(v[0].pair);
    }
    print_message("    two-point pairs: largest relative gaps: delta %.2g, eps %.2g\n", worst2_delta, worst2_eps);
}

/* RR given as an atom pair (general path) against the RR path */
static void test_two_point_rr_consistency(void **state)
{
    (void)state;
    for (int c = 0; c < (quick ? 6 : 30); c++) {
        double eps = test_log_unif(1e-3, 10), k = floor(test_log_unif(1, 1e5)), dl = c % 3 == 0 ? 1e-7 : 0;
        dpa_error err;
        dpa_leaf v[1];
        set_atom_leaf(&v[0], dpa_pair_rr(eps, dl, &err), k);
        dpa_leafset L;
        memset(&L, 0, sizeof L);
        L.v = v;
        L.n = 1;
        dpa_leaf r[1];
        memset(r, 0, sizeof r);
        r[0].count = k;
        r[0].mu = r[0].rate = NAN;
        r[0].rr_eps = eps;
        r[0].rr_delta = dl;
        dpa_leafset R;
        memset(&R, 0, sizeof R);
        R.v = r;
        R.n = 1;
        R.all_rr = 1;
        char what[128];
        snprintf(what, sizeof what, "%.17g x RR(%.17g, %g) as atoms", k, eps, dl);
        dpa_rr_comp ca, cr;
        build_dir(&ca, &L, 0, what);
        build_dir(&cr, &R, 0, what);
        CHECK(ca.m == 1 && ca.d[0].gen && cr.m == 1 && !cr.d[0].gen, "%s: wrong paths", what);
        rmodel M;
        model_init(&M);
        model_atoms(&M, v[0].pair, 0, k);
        check_queries(what, &ca, &M, 1e-10, 1e-11);
        model_clear(&M);
        /* both brackets contain (nearly) the same truth: they overlap */
        double sd = 2 * eps * sqrt(k * 0.25), mean = eps * k * tanh(eps / 2);
        for (int j = 0; j < 8; j++) {
            double t = mean + sd * (4 * test_unif() - 1), au, al, ru, rl;
            dpa_rr_delta(&ca, t, &au, &al);
            dpa_rr_delta(&cr, t, &ru, &rl);
            CHECK(al <= ru * (1 + 1e-12) && rl <= au * (1 + 1e-12), "%s: delta(%.17g): atoms [%.17g, %.17g], RR [%.17g, %.17g]",
                  what, t, al, au, rl, ru);
        }
        dpa_rr_free(&ca);
        dpa_rr_free(&cr);
        dpa_pair_free(v[0].pair);
    }
}

/* subsampled RR composed with plain RR / approx leaves and with another
 * subsampled RR (JSON) */
static void test_two_point_mixtures(void **state)
{
    (void)state;
    char json[1024], what[1100];
    for (int c = 0; c < (quick ? 4 : 16); c++) {
        double q = test_log_unif(1e-6, 0.9), e1 = test_log_unif(0.05, 8), k1 = floor(test_log_unif(1, c % 4 == 0 ? 1e5 : 2000));
        double e2 = test_log_unif(0.05, 3), k2 = 1 + floor(test_unif() * 6);
        double e3 = test_log_unif(0.05, 2), d3 = c % 2 ? test_log_unif(1e-12, 1e-5) : 0.02, k3 = 1 + floor(test_unif() * 3);
        double q4 = test_log_unif(1e-4, 0.5), e4 = test_log_unif(0.1, 5), k4 = 1 + floor(test_unif() * 4);
        int with4 = c % 3 == 2;
        snprintf(json, sizeof json,
                 "{\"compose\":[{\"repeat\":{\"count\":%.17g,\"event\":{\"poisson\":{\"rate\":%.17g,\"event\":"
                 "{\"randomized_response\":{\"epsilon\":%.17g}}}}}},"
                 "{\"repeat\":{\"count\":%.17g,\"event\":{\"randomized_response\":{\"epsilon\":%.17g}}}},"
                 "{\"repeat\":{\"count\":%.17g,\"event\":{\"approx\":{\"epsilon\":%.17g,\"delta\":%.17g}}}}%s",
                 k1, q, e1, k2, e2, k3, e3, d3, with4 ? "," : "]}");
        if (with4) {
            size_t o = strlen(json);
            snprintf(json + o, sizeof json - o,
                     "{\"repeat\":{\"count\":%.17g,\"event\":{\"poisson\":{\"rate\":%.17g,\"event\":"
                     "{\"pure\":{\"epsilon\":%.17g}}}}}}]}",
                     k4, q4, e4);
        }
        dpa_leafset L;
        leaves_of(json, &L);
        for (int dir = 0; dir < 2; dir++) {
            snprintf(what, sizeof what, "%s dir %d", json, dir);
            dpa_rr_comp cc;
            build_dir(&cc, &L, dir, what);
            rmodel M;
            model_init(&M);
            for (size_t i = 0; i < L.n; i++) {
                const dpa_leaf *l = &L.v[i];
                if (!isnan(l->rr_eps)) model_rr(&M, l->rr_eps, l->rr_delta, l->count);
                else if (l->rate == q) model_prr(&M, l->pair, q, e1, dir, l->count);
                else model_prr(&M, l->pair, q4, e4, dir, l->count);
            }
            check_queries(what, &cc, &M, 1e-9, 1e-10);
            model_clear(&M);
            dpa_rr_free(&cc);
        }
        dpa_leaves_free(&L);
    }
}

/* the API: applicability, RR-only sets unchanged, synthetic leaves, limits */
static void test_two_point_api(void **state)
{
    (void)state;
    static const struct { const char *json; int ok; } cases[] = {
        {"{\"poisson\":{\"rate\":0.1,\"event\":{\"randomized_response\":{\"epsilon\":5}}}}", 1},
        {"{\"poisson\":{\"rate\":0.5,\"event\":{\"poisson\":{\"rate\":0.2,\"event\":{\"pure\":{\"epsilon\":3}}}}}}", 1},
        {"{\"poisson\":{\"rate\":0.1,\"event\":{\"approx\":{\"epsilon\":0,\"delta\":1e-6}}}}", 1},
        {"{\"poisson\":{\"rate\":0.1,\"event\":{\"pure\":{\"epsilon\":0}}}}", 1},
        {"{\"repeat\":{\"count\":1e15,\"event\":{\"pure\":{\"epsilon\":1}}}}", 1},
        {"{\"poisson\":{\"rate\":0.1,\"event\":{\"approx\":{\"epsilon\":1,\"delta\":1e-6}}}}", 0}, /* 3 finite atoms */
        {"{\"poisson\":{\"rate\":0.1,\"event\":{\"compose\":[{\"pure\":{\"epsilon\":1}},{\"pure\":{\"epsilon\":2}}]}}}", 0},
        {"{\"compose\":[{\"poisson\":{\"rate\":0.1,\"event\":{\"pure\":{\"epsilon\":1}}}},{\"gaussian\":{\"sigma\":1}}]}", 0},
        {"{\"poisson\":{\"rate\":0.1,\"event\":{\"laplace\":{\"scale\":1}}}}", 0},
        {"{\"neighboring\":\"replace\",\"sample\":{\"n\":100,\"m\":10,\"event\":{\"randomized_response\":{\"epsilon\":1}}}}", 0},
        {"{\"repeat\":{\"count\":1e15,\"event\":{\"poisson\":{\"rate\":0.5,\"event\":{\"pure\":{\"epsilon\":1}}}}}}", 0},
        {"{\"compose\":[{\"repeat\":{\"count\":1e8,\"event\":{\"poisson\":{\"rate\":0.5,\"event\":{\"pure\":{\"epsilon\":1}}}}}},"
         "{\"repeat\":{\"count\":1e8,\"event\":{\"poisson\":{\"rate\":0.3,\"event\":{\"pure\":{\"epsilon\":1}}}}}}]}", 0},
    };
    for (size_t i = 0; i < N(cases); i++) {
        dpa_leafset L;
        leaves_of(cases[i].json, &L);
        int ok = dpa_rr_applicable_dir(&L);
        CHECK(ok == cases[i].ok, "%s: dpa_rr_applicable_dir = %d, want %d", cases[i].json, ok, cases[i].ok);
        dpa_rr_comp c;
        dpa_error err;
        memset(&c, 0, sizeof c);
        dpa_status st = dpa_rr_build_dir(&c, &L, 0, &err);
        CHECK((st == DPA_OK) == ok, "%s: dpa_rr_build_dir status %d", cases[i].json, (int)st);
        if (!ok) CHECK(st == DPA_EUNSUPPORTED || st == DPA_ENOMEM, "%s: status %d", cases[i].json, (int)st);
        dpa_rr_free(&c);
        if (ok) { /* a profile that makes sense */
            for (int dir = 0; dir < 2; dir++) {
                memset(&c, 0, sizeof c);
                assert_int_equal(dpa_rr_build_dir(&c, &L, dir, &err), DPA_OK);
                double up, lo;
                dpa_rr_delta(&c, 0.5, &up, &lo);
                CHECK(!isnan(up) && !isnan(lo) && 0 <= lo && lo <= up && up <= 1, "%s dir %d: delta(0.5) in [%g, %g]",
                      cases[i].json, dir, lo, up);
                dpa_rr_epsilon(&c, 1e-6, &up, &lo);
                CHECK(!isnan(up) && !isnan(lo) && lo <= up, "%s dir %d: eps(1e-6) in [%g, %g]", cases[i].json, dir, lo, up);
                dpa_rr_free(&c);
            }
        }
        memset(&c, 0, sizeof c);
        CHECK(dpa_rr_build_dir(&c, &L, 2, &err) == DPA_EINVAL, "dir 2 accepted");
        dpa_rr_free(&c);
        dpa_leaves_free(&L);
    }
    /* RR-only sets: both directions give exactly the old results; synthetic
     * leaves (pair == NULL) as the accountant's domination fallback builds */
    for (int c = 0; c < 20; c++) {
        dpa_leaf v[3];
        size_t n = 1 + (size_t)(test_unif() * 3) % 3;
        for (size_t i = 0; i < n; i++) {
            memset(&v[i], 0, sizeof v[i]);
            v[i].count = floor(test_log_unif(1, i ? 30 : 1e5));
            v[i].mu = v[i].rate = NAN;
            v[i].rr_eps = c % 5 == 4 && i == 0 ? 0 : test_log_unif(1e-3, 5);
            v[i].rr_delta = test_unif() < 0.5 ? 0 : test_log_unif(1e-12, 1e-3);
        }
        dpa_leafset L;
        memset(&L, 0, sizeof L);
        L.v = v;
        L.n = n;
        L.all_rr = 1;
        if (!dpa_rr_applicable(&L)) continue;
        CHECK(dpa_rr_applicable_dir(&L), "RR set refused by dpa_rr_applicable_dir");
        dpa_rr_comp a, b[2];
        dpa_error err;
        memset(&a, 0, sizeof a);
        assert_int_equal(dpa_rr_build(&a, &L, &err), DPA_OK);
        for (int dir = 0; dir < 2; dir++) {
            memset(&b[dir], 0, sizeof b[dir]);
            assert_int_equal(dpa_rr_build_dir(&b[dir], &L, dir, &err), DPA_OK);
        }
        for (int j = 0; j < 6; j++) {
            double t = test_log_unif(1e-3, 20) * (j % 2 ? 1 : -0.2), au, al, bu, bl;
            dpa_rr_delta(&a, t, &au, &al);
            for (int dir = 0; dir < 2; dir++) {
                dpa_rr_delta(&b[dir], t, &bu, &bl);
                CHECK(au == bu && al == bl, "RR set dir %d: delta(%g) differs", dir, t);
            }
            dpa_rr_epsilon(&a, 1e-6, &au, &al);
            dpa_rr_epsilon(&b[1], 1e-6, &bu, &bl);
            CHECK(au == bu && al == bl, "RR set: eps(1e-6) differs");
        }
        dpa_rr_free(&a);
        dpa_rr_free(&b[0]);
        dpa_rr_free(&b[1]);
    }
}

/* blocked tables (window above 2^18 points): 1e8 x Poisson(0.5) pure(1) */
static void test_two_point_large(void **state)
{
    (void)state;
    const char *json = "{\"repeat\":{\"count\":1e8,\"event\":{\"poisson\":{\"rate\":0.5,\"event\":"
                       "{\"pure\":{\"epsilon\":1}}}}}}";
    dpa_leafset L;
    leaves_of(json, &L);
    for (int dir = 0; dir < 2; dir++) {
        clock_t t0 = clock();
        dpa_rr_comp c;
        build_dir(&c, &L, dir, json);
        double up, lo;
        dpa_rr_epsilon(&c, 1e-6, &up, &lo);
        double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
        print_message("    1e8 x Poisson(0.5) pure(1) dir %d: bk %g, eps(1e-6) in [%.17g, %.17g] (%.3f s)\n", dir,
                      c.d[0].bk, lo, up, secs);
        CHECK(c.d[0].bk > 1, "1e8 x Poisson(0.5) pure(1): not blocked");
        CHECK(isfinite(up) && up - lo <= 1e-12 * up, "1e8 x Poisson(0.5) pure(1) dir %d: eps(1e-6) in [%.17g, %.17g]",
              dir, lo, up);
        const rgrp *g;
        rmodel M;
        model_init(&M);
        model_prr(&M, L.v[0].pair, 0.5, 1, dir, 1e8);
        g = &M.g[0];
        double p = mpfr_get_d(g->p, RN), D = g->whi - g->wlo;
        double mean = 1e8 * (g->wlo + p * D), sd = D * sqrt(1e8 * p * (1 - p));
        double pu = INFINITY, pl = INFINITY;
        for (int i = 0; i <= 40; i++) { /* monotone */
            double t = mean + sd * (-3 + 9 * i / 40.0), du, dl;
            dpa_rr_delta(&c, t, &du, &dl);
            CHECK(!isnan(du) && dl <= du && du <= pu * (1 + 1e-15) && dl <= pl * (1 + 1e-15),
                  "MONOTONE 1e8 x Poisson(0.5) pure(1): delta(%.17g) in [%.17g, %.17g]", t, dl, du);
            pu = du;
            pl = dl;
        }
        if (!SANITIZED && !quick) {
            stop_bits = 80;
            check_eps2(json, &M, 1e-6, lo, up, 1e-12);
            double t = mean + 4.2 * sd, du, dl;
            dpa_rr_delta(&c, t, &du, &dl);
            check_delta2(json, &M, t, dl, du, 1e-10, 0);
            stop_bits = 130;
        }
        model_clear(&M);
        dpa_rr_free(&c);
    }
    dpa_leaves_free(&L);
}

/* the two motivating specs (the PLD grid took 34 s / 570 MB and seconds) */
static void test_two_point_timing(void **state)
{
    (void)state;
    static const struct { const char *json; int is_eps; double x; double q, eps, k, tol; } cases[] = {
        {"{\"repeat\":{\"count\":100,\"event\":{\"poisson\":{\"rate\":0.1,\"event\":{\"randomized_response\":"
         "{\"epsilon\":5}}}}}}", 0, 42.97, 0.1, 5, 100, 1e-12},
        {"{\"poisson\":{\"rate\":1e-9,\"event\":{\"randomized_response\":{\"epsilon\":20}}}}", 1, 1e-12, 1e-9, 20, 1, 1e-15},
        {"{\"repeat\":{\"count\":1000000,\"event\":{\"poisson\":{\"rate\":0.01,\"event\":{\"randomized_response\":"
         "{\"epsilon\":2}}}}}}", 1, 1e-6, 0.01, 2, 1e6, 1e-12},
    };
    for (size_t i = 0; i < N(cases); i++) {
        clock_t t0 = clock();
        dpa_leafset L;
        leaves_of(cases[i].json, &L);
        double up[2], lo[2];
        dpa_rr_comp c[2];
        for (int dir = 0; dir < 2; dir++) {
            build_dir(&c[dir], &L, dir, cases[i].json);
            if (cases[i].is_eps) dpa_rr_epsilon(&c[dir], cases[i].x, &up[dir], &lo[dir]);
            else dpa_rr_delta(&c[dir], cases[i].x, &up[dir], &lo[dir]);
        }
        double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
        print_message("    %s: %s(%g) in [%.17g, %.17g] (remove [%.17g, %.17g], add [%.17g, %.17g]; %.4f s)\n",
                      cases[i].json, cases[i].is_eps ? "eps" : "delta", cases[i].x, fmax(lo[0], lo[1]), fmax(up[0], up[1]),
                      lo[0], up[0], lo[1], up[1], secs);
        for (int dir = 0; dir < 2; dir++) {
            rmodel M;
            model_init(&M);
            model_prr(&M, L.v[0].pair, cases[i].q, cases[i].eps, dir, cases[i].k);
            if (cases[i].is_eps) check_eps2(cases[i].json, &M, cases[i].x, lo[dir], up[dir], cases[i].tol);
            else check_delta2(cases[i].json, &M, cases[i].x, lo[dir], up[dir], cases[i].tol, 1e-300);
            model_clear(&M);
            dpa_rr_free(&c[dir]);
        }
        dpa_leaves_free(&L);
    }
}

int main(void)
{
    quick = SANITIZED || getenv("DPA_TEST_QUICK") != NULL;
    test_seed_from_env();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_libm_ld, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reproductions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reference_values, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sweep, setup, teardown),
        cmocka_unit_test_setup_teardown(test_heterogeneous, setup, teardown),
        cmocka_unit_test_setup_teardown(test_random, setup, teardown),
        cmocka_unit_test_setup_teardown(test_large_counts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_edges, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pair_representation, setup, teardown),
        cmocka_unit_test_setup_teardown(test_poisson_rr, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_point_general, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_point_rr_consistency, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_point_mixtures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_point_api, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_point_timing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_point_large, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
