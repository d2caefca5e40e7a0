/* The tail of the privacy loss at a point, P(L > t) and P(L <= t), bracketed
 * from the accountant's delta brackets (docs/loss_tail.md).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * For a pair (P, Q), L = log dP/dQ under P and x = e^t > 0, the hockey-stick
 * curve h(x) = H_x(P || Q) = E_P (1 - x e^{-L})_+ is convex and
 * non-increasing, with right derivative -Q(L > log x) and left derivative
 * -Q(L >= log x), and
 *   S(t) = P(L > t) = h(x) + x Q(L > t)                    (docs/loss_tail.md §1).
 * Chords of a convex function bound its one-sided slopes, so for
 * w = x e^{-a} < x < y = x e^{b} (a, b > 0):
 *   S(t) <= (h(w) - e^{-a} h(x)) / (1 - e^{-a}),
 *   S(t) >= h(x) + (h(x) - h(y)) / (e^{b} - 1)             (§2).
 * With h bracketed, h_lo <= h <= h_hi, the upper bound takes h_hi(w) and
 * h_lo(x), the lower one h_lo(x) and h_hi(y); any a, b give valid bounds,
 * and the offsets only choose the tightest of DPA_LOSS_TAIL_OFFSETS each.
 * At t < 0 the direction's h comes from the other direction's at -t (LT
 * eq 7: H_x(P||Q) = 1 - x + x H_{1/x}(Q||P)), so every query is at eps >= 0. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "dpacct/accountant.h"
#include "num/num.h"

/* The offsets a, b (loss units): 2^-26 .. 2^5, doubling (the best offset
 * is about the square root of the delta brackets' width, docs/loss_tail.md
 * §3: 2^-26 suits widths near 1e-15). */
#define OFFSET_FIRST_LOG2 (-26)

/* Relative allowance of the floating-point evaluation of each bound: every
 * formula above is a few operations (exp, expm1, a product, a difference,
 * a quotient) on nonnegative terms, each correctly rounded or within 1 ulp
 * (glibc's exp, expm1), so the computed value is within 8 u of the exact
 * one relative to the sum of the terms' magnitudes; 16 u doubles that. */
#define ROUND_SLACK (16 * DPA_UNIT_ROUNDOFF)
/* An absolute allowance for underflow of the products (subnormal results
 * lose their relative accuracy; far below any probability that matters). */
#define TINY_SLACK 1e-300

typedef struct tail_state {
    dpa_accountant *a;
    int certified, lower_partial, accuracy_missed;
    dpa_method method;
} tail_state;

static double clamp01(double v)
{
    return v < 0 ? 0 : v > 1 ? 1 : v;
}

/* h_d(e^eps) bracketed, eps >= 0, d = 0 remove, 1 add. */
static dpa_status bracket_nonneg(tail_state *s, double eps, int d, double *hi, double *lo, dpa_error *err)
{
    dpa_result r;
    dpa_status st = dpa_accountant_delta(s->a, eps, &r, err);
    if (st != DPA_OK) return st;
    s->method = r.method;
    if (!r.certified) s->certified = 0;
    if (!r.accuracy_met) s->accuracy_missed = 1;
    double up_d = d == 0 ? r.upper_remove : r.upper_add, up_o = d == 0 ? r.upper_add : r.upper_remove;
    *hi = clamp01(up_d >= 0 && up_d <= r.upper ? up_d : r.upper);
    /* r.lower bounds the larger direction: it is direction d's when the
     * pair is symmetric, at eps = 0 (both directions are the total
     * variation distance), or when the other direction is certified below
     * it; otherwise the method's per-direction bound (0 if it has none) */
    double lo_d = d == 0 ? r.lower_remove : r.lower_add;
    if (r.binding == DPA_DIR_BOTH || eps == 0 || up_o < r.lower) {
        *lo = clamp01(r.lower);
    } else {
        *lo = clamp01(lo_d >= 0 ? lo_d : 0);
        if (r.method != DPA_METHOD_EXACT && r.method != DPA_METHOD_PLD) s->lower_partial = 1;
    }
    if (*lo > *hi) *lo = *hi;
    return DPA_OK;
}

/* h_d(e^eps) bracketed, any finite eps. */
static dpa_status bracket(tail_state *s, double eps, int d, double *hi, double *lo, dpa_error *err)
{
    if (eps >= 0) return bracket_nonneg(s, eps, d, hi, lo, err);
    double ho, lw;
    dpa_status st = bracket_nonneg(s, -eps, 1 - d, &ho, &lw, err);
    if (st != DPA_OK) return st;
    /* LT eq 7: h_d(x) = (1 - x) + x h_{1-d}(1/x), x = e^eps < 1: terms >= 0 */
    double om = -expm1(eps), x = exp(eps);
    *hi = clamp01((om + x * ho) * (1 + ROUND_SLACK) + TINY_SLACK);
    *lo = clamp01((om + x * lw) * (1 - ROUND_SLACK) - TINY_SLACK);
    return DPA_OK;
}

dpa_status dpa_accountant_loss_tail(dpa_accountant *a, double t, dpa_direction dir, dpa_loss_tail *out,
                                    dpa_error *err)
{
    if (!a || !out) return dpa_error_set(err, DPA_EINVAL, "loss tail: NULL argument");
    memset(out, 0, sizeof *out);
    out->t = t;
    out->direction = dir;
    out->sf_upper = out->cdf_upper = 1;
    if (!isfinite(t)) return dpa_error_set(err, DPA_EINVAL, "loss tail: t must be finite, got %g", t);
    if (dir != DPA_DIR_REMOVE && dir != DPA_DIR_ADD)
        return dpa_error_set(err, DPA_EINVAL, "loss tail: direction must be remove or add (the law of the loss "
                                              "depends on it), got %d", (int)dir);
    int d = dir == DPA_DIR_ADD;
    tail_state s = {a, 1, 0, 0, dpa_accountant_method(a)};
    double hx, lx;
    dpa_status st = bracket(&s, t, d, &hx, &lx, err);
    if (st != DPA_OK) return st;
    double up = 1, lo = lx * (1 - ROUND_SLACK);
    for (int k = 0; k < DPA_LOSS_TAIL_OFFSETS; k++) {
        double off = ldexp(1.0, OFFSET_FIRST_LOG2 + k);
        double hw, lw, hy, ly;
        if ((st = bracket(&s, t - off, d, &hw, &lw, err)) != DPA_OK) return st;
        if ((st = bracket(&s, t + off, d, &hy, &ly, err)) != DPA_OK) return st;
        /* upper: (h(w) - e^{-a} h(x)) / (1 - e^{-a}) with h_hi(w), h_lo(x) */
        double den = -expm1(-off), ea = exp(-off);
        double u = (hw - ea * lx) / den;
        u += ROUND_SLACK * (hw + lx) / den + TINY_SLACK;
        if (u < up) up = u;
        /* lower: h(x) + (h(x) - h(y)) / (e^b - 1) with h_lo(x), h_hi(y) */
        double em = expm1(off);
        double l = lx + (lx - hy) / em;
        l -= ROUND_SLACK * (lx + (lx + hy) / em) + TINY_SLACK;
        if (l > lo) lo = l;
    }
    out->sf_upper = clamp01(up);
    out->sf_lower = clamp01(lo);
    if (out->sf_lower > out->sf_upper) out->sf_lower = out->sf_upper; /* only from estimates */
    /* 1 - v is exact for v >= 1/2 (Sterbenz) and within u/2 otherwise */
    out->cdf_lower = clamp01(1 - out->sf_upper - DPA_UNIT_ROUNDOFF);
    out->cdf_upper = clamp01(1 - out->sf_lower + DPA_UNIT_ROUNDOFF);
    out->certified = s.certified;
    out->method = s.method;
    if (!s.certified)
        snprintf(out->note, sizeof out->note, "estimate: method %s's delta brackets are estimates, not bounds",
                 dpa_method_name(s.method));
    else if (s.method == DPA_METHOD_RDP)
        snprintf(out->note, sizeof out->note, "method rdp has no lower delta bounds: the bracket uses trivial ones and may be wide");
    else if (s.lower_partial)
        snprintf(out->note, sizeof out->note, "asymmetric pair: lower delta bounds used only where direction %s "
                                              "is the larger; the bracket may be wide",
                 dpa_direction_name(dir));
    else if (s.accuracy_missed)
        snprintf(out->note, sizeof out->note, "some delta queries missed the accuracy target (still certified)");
    return DPA_OK;
}
