/* Exact geometric predicates on tradeoff-curve vertices (see fdp.h).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A coordinate is x (one double) or 1 - cx (two doubles), so a difference of
 * two coordinates is an exact sum of at most four doubles and a product of
 * two differences an exact sum of at most 32 (each product of two doubles
 * split by TwoProduct with fma: p + e = a b exactly unless e underflows).
 * The sign of such a sum is found exactly by Shewchuk's Grow-Expansion
 * (Shewchuk 1997, "Adaptive precision floating-point arithmetic and fast
 * robust geometric predicates", §2.3): the components come out
 * non-overlapping and increasing in magnitude, so the last non-zero one
 * carries the sign.  A floating-point filter decides the easy cases first. */
#include <math.h>
#include "fdp/fdp.h"

#define EXP_MAX 80

/* s + e = a + b exactly (Knuth's TwoSum) */
static void two_sum(double a, double b, double *s, double *e)
{
    double x = a + b, bv = x - a, av = x - bv;
    *s = x;
    *e = (a - av) + (b - bv);
}

/* sign of sum t[0..n-1], exactly */
static int exp_sign(const double *t, size_t n)
{
    double e[EXP_MAX];
    size_t m = 0;
    for (size_t i = 0; i < n && m < EXP_MAX; i++) {
        double q = t[i];
        if (q == 0.0) continue;
        for (size_t j = 0; j < m; j++) {
            double s, h;
            two_sum(q, e[j], &s, &h);
            e[j] = h;
            q = s;
        }
        e[m++] = q;
    }
    for (size_t j = m; j-- > 0;)
        if (e[j] != 0.0) return e[j] > 0 ? 1 : -1;
    return 0;
}

/* the terms of the coordinate difference (b - a), v the primary value */
static size_t diff_terms(double va, double ca, double vb, double cb, double *t)
{
    size_t k = 0;
    if (va < 0.5) t[k++] = -va;
    else { t[k++] = -1.0; t[k++] = ca; }
    if (vb < 0.5) t[k++] = vb;
    else { t[k++] = 1.0; t[k++] = -cb; }
    return k;
}

/* append the exact terms of sign * (sum a) * (sum b) to out */
static size_t prod_terms(const double *a, size_t na, const double *b, size_t nb, double sign,
                         double *out, size_t k)
{
    for (size_t i = 0; i < na; i++)
        for (size_t j = 0; j < nb; j++) {
            double p = a[i] * b[j];
            double e = fma(a[i], b[j], -p);
            out[k++] = sign * p;
            if (e != 0.0) out[k++] = sign * e;
        }
    return k;
}

int dpa_fdp_below_chord(const tf_pt *a, const tf_pt *b, const tf_pt *c)
{
    /* ha = Y_a - Y_b, w2 = X_c - X_b, hb = Y_b - Y_c, w1 = X_b - X_a */
    double ha = -tf_dy(a, b), hb = -tf_dy(b, c);
    double w1 = tf_dx(a, b), w2 = tf_dx(b, c);
    double p1 = ha * w2, p2 = hb * w1;
    /* each factor within TF_DIFF_REL, each product one more rounding */
    double bound = (2 * TF_DIFF_REL + 2 * TF_U) * (fabs(p1) + fabs(p2));
    double diff = p1 - p2;
    if (fabs(diff) > bound + 4 * DBL_MIN) return diff > 0 ? 1 : -1;
    double tha[4], thb[4], tw1[4], tw2[4], terms[2 * 2 * 4 * 4 + 4];
    /* ha = Y_a - Y_b = -(Y_b - Y_a) */
    size_t nha = diff_terms(b->y, b->cy, a->y, a->cy, tha);
    size_t nhb = diff_terms(c->y, c->cy, b->y, b->cy, thb);
    size_t nw1 = diff_terms(a->x, a->cx, b->x, b->cx, tw1);
    size_t nw2 = diff_terms(b->x, b->cx, c->x, c->cx, tw2);
    size_t k = prod_terms(tha, nha, tw2, nw2, 1.0, terms, 0);
    k = prod_terms(thb, nhb, tw1, nw1, -1.0, terms, k);
    return exp_sign(terms, k);
}

int dpa_fdp_steeper_than_one(const tf_pt *a, const tf_pt *b)
{
    double h = -tf_dy(a, b), w = tf_dx(a, b);
    double diff = h - w, bound = TF_DIFF_REL * (fabs(h) + fabs(w)) + TF_U * fabs(diff);
    if (fabs(diff) > bound + DBL_MIN) return diff > 0 ? 1 : -1;
    double t[8];
    size_t k = diff_terms(b->y, b->cy, a->y, a->cy, t);   /* Y_a - Y_b */
    double tw[4];
    size_t nw = diff_terms(a->x, a->cx, b->x, b->cx, tw); /* X_b - X_a */
    for (size_t i = 0; i < nw; i++) t[k++] = -tw[i];
    return exp_sign(t, k);
}

int dpa_fdp_cmp_sum(const tf_pt *a, const tf_pt *b)
{
    /* (X_a - X_b) + (Y_a - Y_b) */
    double t[8];
    size_t k = diff_terms(b->x, b->cx, a->x, a->cx, t);
    k += diff_terms(b->y, b->cy, a->y, a->cy, t + k);
    return exp_sign(t, k);
}
