/* Piecewise-linear tradeoff curves: certified lines, upper envelopes,
 * normalization (exact lower convex hull), evaluation, discrete pairs
 * (RF Prop 12), inverse, f_{0,d} scaling and coarsening.  Rules R1-R3 and
 * the point representation are described in fdp.h; proofs in docs/fdp.md §5.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fdp/fdp.h"

/* Store a Y value (lower results: the stored Y is <= the value given, upper
 * results: >=).  v is y itself (is_c = 0) or c with Y = 1 - c (is_c = 1).
 * Upper results carry their non-primary double rounded to nearest: no
 * caller relies on its direction. */
void dpa_fdp_put_y(tf_pt *o, double v, int is_c, int upper)
{
    if (is_c) {
        if (upper && v < 0) v = 0; /* Y <= 1: an upper bound may be capped */
        if (v <= 0.5) {
            if (v < 0) v = 0; /* lower results have v >= 0 (a lower bound on a line <= 1) */
            o->cy = v;
            double y = 1.0 - v;
            if (!upper) y = tf_dn(y);
            o->y = y > 0.5 ? y : 0.5;
        } else {
            double y = 1.0 - v; /* exact for v in (1/2, 2] */
            if (v > 2) y = upper ? tf_up(y) : tf_dn(y);
            o->y = y;
            o->cy = upper ? 1.0 - y : tf_one_minus_up(y);
        }
    } else {
        if (v < 0.5) {
            o->y = v;
            o->cy = upper ? 1.0 - v : tf_one_minus_up(v);
        } else {
            if (v > 1) v = 1; /* only upper results exceed 1 (lines <= curves <= 1) */
            o->y = v;
            o->cy = 1.0 - v; /* exact for v in [1/2, 1] */
        }
    }
}

void dpa_fdp_line_eval(const tf_line *l, const tf_pt *q, int upper, tf_pt *out)
{
    const tf_pt *an = &l->a;
    double d = tf_dx(an, q); /* X_q - X_a, within TF_DIFF_REL */
    if (l->has_b) {
        double db = tf_dx(&l->b, q);
        if (fabs(db) < fabs(d)) {
            an = &l->b;
            d = db;
        }
    }
    double ad = fabs(d);
    double dhi = tf_raise(ad, 3), dlo = tf_lower(ad, 3);
    if (dlo < 0) dlo = 0;
    int down = d >= 0; /* the line descends from the anchor to q */
    /* |change of Y|: lower results take the largest drop or smallest rise */
    double ch;
    if (ad == 0) ch = 0;
    else if (down == !upper) ch = tf_raise(l->s_hi * dhi, 1);
    else ch = tf_lower(l->s_lo * dlo, 1);
    if (ch < 0) ch = 0;
    if (ch == 0) { /* the anchor's own value, exactly */
        out->y = an->y;
        out->cy = an->cy;
        return;
    }
    if (tf_yprim(an)) {
        double y = down ? an->y - ch : an->y + ch;
        y = upper ? tf_up(y) : tf_dn(y);
        dpa_fdp_put_y(out, y, 0, upper);
    } else {
        double c = down ? an->cy + ch : an->cy - ch;
        c = upper ? tf_dn(c) : tf_up(c);
        dpa_fdp_put_y(out, c, 1, upper);
    }
}

void dpa_fdp_seg_slope(const tf_pt *a, const tf_pt *b, double *s_lo, double *s_hi)
{
    double h = -tf_dy(a, b), w = tf_dx(a, b);
    if (!(h > 0) || !(w > 0)) {
        *s_lo = *s_hi = (h > 0) ? INFINITY : 0.0;
        return;
    }
    double s = h / w; /* two differences within TF_DIFF_REL, one division */
    *s_lo = tf_lower(s, 7);
    *s_hi = tf_raise(s, 7);
    if (*s_lo < 0) *s_lo = 0;
}

tf_line dpa_fdp_seg_line(const dpa_tf *f, size_t k)
{
    tf_line l;
    l.a = f->v[k];
    l.b = f->v[k + 1];
    l.has_b = 1;
    dpa_fdp_seg_slope(&f->v[k], &f->v[k + 1], &l.s_lo, &l.s_hi);
    return l;
}

tf_line dpa_fdp_line_inverse(const tf_line *l)
{
    /* f >= Y_a - s (x - X_a) on [0,1] implies f^{-1}(y) >= X_a - (y - Y_a)/s
     * (f^{-1}(y) = inf{x: f(x) <= y}, and f(x) <= y forces the line <= y):
     * the swapped anchor with slope 1/s */
    tf_line r;
    r.a = tf_swap(l->a);
    r.b = tf_swap(l->b);
    r.has_b = l->has_b;
    r.s_lo = l->s_hi > 0 ? tf_dn(1.0 / l->s_hi) : INFINITY;
    r.s_hi = l->s_lo > 0 ? tf_up(1.0 / l->s_lo) : INFINITY;
    if (r.s_lo < 0) r.s_lo = 0;
    return r;
}

/* ---------- positions ---------- */

/* the point at X = X_a + off (any rounding: positions are free under R2);
 * clamped to [0, 1] */
static tf_pt pt_offset(const tf_pt *a, double off)
{
    tf_pt p = { 0, 1, 0, 1 };
    if (tf_xprim(a)) {
        double x = a->x + off;
        if (x < 0.5) tf_setx(&p, x > 0 ? x : 0.0);
        else {
            double c = ((0.5 - a->x) + 0.5) - off;
            tf_setcx(&p, c > 0 ? (c < 0.5 ? c : 0.5) : 0.0);
        }
    } else {
        double c = a->cx - off;
        if (c <= 0.5) tf_setcx(&p, c > 0 ? c : 0.0);
        else {
            double x = 1.0 - c;
            tf_setx(&p, x > 0 ? (x < 0.5 ? x : nextafter(0.5, 0)) : 0.0);
        }
    }
    return p;
}

static double mid_slope(const tf_line *l)
{
    if (isinf(l->s_hi)) return l->s_hi;
    return 0.5 * (l->s_lo + l->s_hi);
}

/* Intersection of a (steeper) and b: returns 0 if they are (nearly)
 * parallel.  Offsets are taken from the anchor nearer to the result. */
int dpa_fdp_isect(const tf_line *a, const tf_line *b, tf_pt *out)
{
    double sa = mid_slope(a), sb = mid_slope(b);
    double den = sa - sb;
    if (!(den > 1e-15 * sa) || !isfinite(sa)) return 0;
    /* the pair of anchors closest to each other (adjacent segments of one
     * curve share a vertex: then the intersection is that vertex) */
    const tf_pt *pa = &a->a, *pb = &b->a;
    double best = fabs(tf_dx(pa, pb));
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            if ((i && !a->has_b) || (j && !b->has_b)) continue;
            const tf_pt *u = i ? &a->b : &a->a, *w = j ? &b->b : &b->a;
            double dd = fabs(tf_dx(u, w));
            if (dd < best) {
                best = dd;
                pa = u;
                pb = w;
            }
        }
    double delta = tf_dx(pa, pb);        /* X_b - X_a */
    double h = -tf_dy(pa, pb);           /* Y_a - Y_b */
    double ta = (h - sb * delta) / den;  /* X - X_a */
    double tb = (h - sa * delta) / den;  /* X - X_b */
    if (!isfinite(ta) || !isfinite(tb)) return 0;
    *out = fabs(ta) <= fabs(tb) ? pt_offset(pa, ta) : pt_offset(pb, tb);
    return 1;
}

/* where line l reaches 0 (approximately), as a position; exact when an
 * anchor has Y = 0 */
static tf_pt line_root(const tf_line *l)
{
    if (tf_yprim(&l->a) && l->a.y == 0) return l->a;
    if (l->has_b && tf_yprim(&l->b) && l->b.y == 0) return l->b;
    double s = mid_slope(l);
    double Y = tf_yprim(&l->a) ? l->a.y : (0.5 - l->a.cy) + 0.5;
    double t = s > 0 ? Y / s : 1.0;
    return pt_offset(&l->a, t);
}

/* a position at or left of the root where the certified lower value of l
 * is >= 0, so that (pos, 0) lies below l (rule R2) */
static tf_pt safe_root(const tf_line *l, const tf_pt *left)
{
    tf_pt r = line_root(l), y;
    double step = 0;
    for (int i = 0; i < 200; i++) {
        dpa_fdp_line_eval(l, &r, 0, &y);
        if (tf_Y(&y) >= 0 && (tf_yprim(&y) ? y.y >= 0 : 1)) return r;
        double w = tf_dx(left, &r);
        if (!(w > 0)) return *left;
        step = step > 0 ? 2 * step : w * 4 * TF_U + DBL_TRUE_MIN;
        if (step >= w) return *left;
        r = pt_offset(&r, -step);
    }
    return *left;
}

/* ---------- normalization ---------- */

static int cmp_pt_x(const void *pa, const void *pb)
{
    return tf_cmpx(pa, pb);
}

size_t dpa_fdp_normalize(tf_pt *v, size_t n)
{
    if (n == 0) return 0;
    /* positions are monotone by construction; sort defensively (stable
     * enough: equal X are merged below) */
    int sorted = 1;
    for (size_t i = 1; i < n; i++)
        if (tf_cmpx(&v[i - 1], &v[i]) > 0) {
            sorted = 0;
            break;
        }
    if (!sorted) qsort(v, n, sizeof *v, cmp_pt_x);
    /* merge equal X (keep the lower Y), lower Y to be non-increasing, cut at
     * the first Y <= 0 (a negative Y is replaced by the zero crossing of its
     * incoming segment, moved left: R1) */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        tf_pt p = v[i];
        if (m > 0 && tf_cmpy(&p, &v[m - 1]) > 0) { p.y = v[m - 1].y; p.cy = v[m - 1].cy; }
        if (m > 0 && tf_cmpx(&p, &v[m - 1]) == 0) {
            v[m - 1].y = p.y;
            v[m - 1].cy = p.cy;
        } else {
            v[m++] = p;
        }
        tf_pt *q = &v[m - 1];
        if (tf_yprim(q) && q->y <= 0) {
            if (q->y < 0 && m >= 2) {
                /* the zero of the segment from a to q, or left of it: a
                 * steeper chord from a, below the segment (certified by the
                 * segment's own line) */
                tf_pt *a = &v[m - 2];
                tf_line seg = { 0 };
                seg.a = *a;
                seg.b = *q;
                seg.has_b = 1;
                dpa_fdp_seg_slope(a, q, &seg.s_lo, &seg.s_hi);
                tf_pt r = safe_root(&seg, a);
                if (tf_cmpx(&r, q) > 0) r = *q;
                *q = r;
                tf_sety(q, 0.0);
                if (tf_cmpx(q, a) == 0) {
                    m--;
                    tf_sety(&v[m - 1], 0.0);
                }
            } else {
                tf_sety(q, 0.0);
            }
            break;
        }
    }
    n = m;
    /* lower convex hull (monotone chain), exact predicate */
    m = 0;
    for (size_t i = 0; i < n; i++) {
        while (m >= 2 && dpa_fdp_below_chord(&v[m - 2], &v[m - 1], &v[i]) <= 0) m--;
        v[m++] = v[i];
    }
    return m;
}

/* ---------- envelope ---------- */

static int cmp_line_slope(const void *pa, const void *pb)
{
    double a = mid_slope(pa), b = mid_slope(pb);
    return (a < b) - (a > b); /* descending */
}

dpa_tf *dpa_fdp_envelope(tf_line *lines, size_t n, dpa_error *err)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        tf_line *l = &lines[i];
        if (l->s_hi > 0 && isfinite(l->s_lo) && isfinite(l->s_hi) && l->s_lo <= l->s_hi &&
            !isnan(l->a.x) && !isnan(l->a.y))
            lines[m++] = *l;
    }
    n = m;
    tf_pt *v = malloc((n + 2) * sizeof *v);
    tf_line *st = malloc((n + 1) * sizeof *st);
    tf_pt *start = malloc((n + 1) * sizeof *start);
    if (!v || !st || !start) {
        free(v);
        free(st);
        free(start);
        dpa_error_set(err, DPA_ENOMEM, "tradeoff: out of memory (envelope of %zu lines)", n);
        return NULL;
    }
    qsort(lines, n, sizeof *lines, cmp_line_slope);
    tf_pt zero = { 0, 1, 0, 1 };
    size_t k = 0; /* stack size */
    for (size_t i = 0; i < n; i++) {
        tf_line *L = &lines[i];
        int keep = 1;
        while (k > 0) {
            tf_line *T = &st[k - 1];
            tf_pt xi;
            if (!dpa_fdp_isect(T, L, &xi)) {
                /* (nearly) parallel: keep the higher one at L's anchor */
                tf_pt yt, yl;
                dpa_fdp_line_eval(T, &L->a, 0, &yt);
                dpa_fdp_line_eval(L, &L->a, 0, &yl);
                if (tf_cmpy(&yl, &yt) > 0) {
                    k--;
                    continue;
                }
                keep = 0;
                break;
            }
            if (tf_cmpx(&xi, &zero) <= 0) { /* L above T on all of [0, 1] */
                k--;
                continue;
            }
            if (k >= 2 && tf_cmpx(&xi, &start[k - 1]) <= 0) {
                k--;
                continue;
            }
            /* L only overtakes T where T is already below 0: useless */
            tf_pt rt = line_root(T);
            if (tf_cmpx(&xi, &rt) >= 0) keep = 0;
            else start[k] = xi;
            break;
        }
        if (!keep) continue;
        if (k == 0) start[0] = zero;
        st[k++] = *L;
    }
    size_t nv = 0;
    if (k == 0) {
        v[nv++] = (tf_pt){ 0, 1, 0, 1 }; /* the zero curve */
    } else {
        /* drop leading lines whose value at 0 is below 0 everywhere */
        tf_pt y0;
        dpa_fdp_line_eval(&st[0], &zero, 0, &y0);
        v[0] = zero;
        v[0].y = y0.y;
        v[0].cy = y0.cy;
        nv = 1;
        if (!(tf_Y(&y0) > 0)) {
            tf_sety(&v[0], 0.0);
            k = 0;
        }
        for (size_t j = 1; j < k; j++) {
            tf_pt p = start[j], ya, yb;
            dpa_fdp_line_eval(&st[j - 1], &p, 0, &ya);
            dpa_fdp_line_eval(&st[j], &p, 0, &yb);
            const tf_pt *lo = tf_cmpy(&ya, &yb) <= 0 ? &ya : &yb;
            p.y = lo->y;
            p.cy = lo->cy;
            v[nv++] = p;
        }
        /* the last line's zero; if it is not right of the last vertex, the
         * last line is useless there: drop it and try the previous one */
        while (k > 0) {
            tf_pt r = safe_root(&st[k - 1], &v[nv - 1]);
            if (tf_cmpx(&r, &v[nv - 1]) > 0) {
                tf_sety(&r, 0.0);
                v[nv++] = r;
                break;
            }
            if (nv == 1) { /* root at X = 0 */
                tf_sety(&v[0], 0.0);
                break;
            }
            nv--;
            k--;
        }
    }
    free(st);
    free(start);
    nv = dpa_fdp_normalize(v, nv);
    tf_pt *vv = realloc(v, nv * sizeof *v);
    return dpa_fdp_pl_take(vv ? vv : v, nv, err);
}

/* ---------- evaluation ---------- */

void dpa_fdp_pl_eval(const dpa_tf *f, const tf_pt *q, tf_pt *lo, tf_pt *hi)
{
    size_t n = f->n;
    tf_pt zero = { 0, 1, 0, 1 };
    if (n <= 1 || tf_cmpx(q, &f->v[n - 1]) >= 0) {
        lo->y = hi->y = 0;
        lo->cy = hi->cy = 1;
        return;
    }
    /* largest k with X_k <= X_q */
    size_t a = 0, b = n - 1;
    while (b - a > 1) {
        size_t mid = a + (b - a) / 2;
        if (tf_cmpx(&f->v[mid], q) <= 0) a = mid;
        else b = mid;
    }
    if (tf_cmpx(&f->v[a], q) == 0) {
        lo->y = hi->y = f->v[a].y;
        lo->cy = hi->cy = f->v[a].cy;
        return;
    }
    tf_line l = { 0 };
    l.a = f->v[a];
    l.b = f->v[b];
    l.has_b = 1;
    dpa_fdp_seg_slope(&f->v[a], &f->v[b], &l.s_lo, &l.s_hi);
    dpa_fdp_line_eval(&l, q, 0, lo);
    dpa_fdp_line_eval(&l, q, 1, hi);
    /* the curve lies between the segment's end values */
    if (tf_cmpy(lo, &f->v[b]) < 0) { lo->y = f->v[b].y; lo->cy = f->v[b].cy; }
    if (tf_cmpy(hi, &f->v[a]) > 0) { hi->y = f->v[a].y; hi->cy = f->v[a].cy; }
    (void)zero;
}

/* ---------- discrete pairs ---------- */

static int cmp_atom_key(const void *pa, const void *pb)
{
    const tf_atom *a = pa, *b = pb;
    return (a->key < b->key) - (a->key > b->key); /* descending */
}

/* the point with X bounded by x_lo <= X and 1 - X <= cx_hi (below-left: the
 * stored X is <= the exact one) */
void dpa_fdp_set_x_lower(tf_pt *p, double x_lo, double cx_hi)
{
    if (x_lo < 0.5) tf_setx(p, x_lo > 0 ? x_lo : 0.0);
    else if (cx_hi <= 0.5) tf_setcx(p, cx_hi);
    else tf_setcx(p, 0.5);
}

void dpa_fdp_set_y_lower(tf_pt *p, double y_lo, double cy_hi)
{
    if (y_lo < 0.5) tf_sety(p, y_lo > 0 ? y_lo : 0.0);
    else if (cy_hi <= 0.5) tf_setcy(p, cy_hi);
    else tf_setcy(p, 0.5);
}

dpa_tf *dpa_fdp_from_atoms(tf_atom *at, size_t n, double q0_hi, double pinf_hi, dpa_error *err)
{
    /* degenerate atoms (a mass that underflowed or vanished): their masses
     * move to the extreme outcomes (Q-mass to {P = 0}, P-mass to {Q = 0}),
     * which makes the pair less private (the original pair is a garbling of
     * the new one) and the curve lower */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        tf_atom *a = &at[i];
        if (a->p > 0 && a->q > 0 && isfinite(a->key) && isfinite(a->p) && isfinite(a->q)) {
            at[m++] = *a;
        } else {
            if (a->q > 0) q0_hi = tf_up(q0_hi + tf_raise(a->q * (1 + a->rel), 2)) ;
            if (a->p > 0) pinf_hi = tf_up(pinf_hi + tf_raise(a->p * (1 + a->rel), 2));
            q0_hi = tf_up(q0_hi + DBL_TRUE_MIN);
            pinf_hi = tf_up(pinf_hi + DBL_TRUE_MIN);
        }
    }
    n = m;
    qsort(at, n, sizeof *at, cmp_atom_key);
    /* groups of overlapping key intervals */
    size_t *gs = malloc((n + 1) * sizeof *gs);
    double *glo = malloc((n + 1) * sizeof *glo), *ghi = malloc((n + 1) * sizeof *ghi);
    /* per group: P and Q sums, lower and upper */
    double *plo = malloc((n + 1) * sizeof *plo), *phi = malloc((n + 1) * sizeof *phi);
    double *qlo = malloc((n + 1) * sizeof *qlo), *qhi = malloc((n + 1) * sizeof *qhi);
    tf_pt *v = malloc((2 * n + 2) * sizeof *v);
    tf_pt *vx = malloc((n + 1) * sizeof *vx);
    if (!gs || !glo || !ghi || !plo || !phi || !qlo || !qhi || !v || !vx) {
        free(gs); free(glo); free(ghi); free(plo); free(phi); free(qlo); free(qhi); free(v);
        free(vx);
        dpa_error_set(err, DPA_ENOMEM, "tradeoff: out of memory (%zu atoms)", n);
        return NULL;
    }
    size_t ng = 0;
    for (size_t i = 0; i < n; i++) {
        tf_atom *a = &at[i];
        double lo = a->key - a->kerr, hi = a->key + a->kerr;
        double pl = tf_lower(a->p * (1 - a->rel), 2), ph = tf_raise(a->p * (1 + a->rel), 2);
        double ql = tf_lower(a->q * (1 - a->rel), 2), qh = tf_raise(a->q * (1 + a->rel), 2);
        if (pl < 0) pl = 0;
        if (ql < 0) ql = 0;
        if (ng > 0 && hi >= glo[ng - 1]) {
            size_t g = ng - 1;
            if (lo < glo[g]) glo[g] = lo;
            if (hi > ghi[g]) ghi[g] = hi;
            plo[g] = tf_dn(plo[g] + pl);
            phi[g] = tf_up(phi[g] + ph);
            qlo[g] = tf_dn(qlo[g] + ql);
            qhi[g] = tf_up(qhi[g] + qh);
            gs[g]++;
        } else {
            glo[ng] = lo;
            ghi[ng] = hi;
            plo[ng] = pl;
            phi[ng] = ph;
            qlo[ng] = ql;
            qhi[ng] = qh;
            gs[ng] = 1;
            ng++;
        }
    }
    /* vertex j (j = 0..ng) after the first j groups:
     *   X in [sum_{g<j} plo, 1 - pinf - sum_{g>=j} phi], Y likewise (R1) */
    {
        double sx = 0, sy = q0_hi;
        for (size_t j = 0; j <= ng; j++) {
            vx[j].x = sx;
            vx[j].cy = sy;
            if (j < ng) {
                sx = tf_dn(sx + plo[j]);
                sy = tf_up(sy + qhi[j]);
            }
        }
        double scx = pinf_hi, sqy = 0;
        for (size_t j = ng + 1; j-- > 0;) {
            vx[j].cx = scx;
            vx[j].y = sqy;
            if (j > 0) {
                scx = tf_up(scx + phi[j - 1]);
                sqy = tf_dn(sqy + qlo[j - 1]);
            }
        }
        for (size_t j = 0; j <= ng; j++) {
            tf_pt p;
            double xl = vx[j].x, cxh = vx[j].cx, yl = vx[j].y, cyh = vx[j].cy;
            if (j == 0) tf_setx(&p, 0.0);
            else dpa_fdp_set_x_lower(&p, xl, cxh);
            if (j == ng) tf_sety(&p, 0.0);
            else dpa_fdp_set_y_lower(&p, yl, cyh);
            vx[j] = p;
        }
    }
    size_t nv = 0;
    v[nv++] = vx[0];
    for (size_t g = 0; g < ng; g++) {
        if (gs[g] > 1 && ghi[g] > glo[g]) {
            /* a group of near-ties: its exact vertices are unknown, but the
             * curve on [A, B] lies above the lines from A with the steepest
             * possible slope and from B with the flattest (every earlier atom
             * is steeper, every later one flatter): their intersection is a
             * safe middle vertex (R2) */
            tf_line la = { 0 }, lb = { 0 };
            la.a = vx[g];
            la.s_lo = la.s_hi = tf_exp_up(ghi[g]);
            lb.a = vx[g + 1];
            lb.s_lo = lb.s_hi = tf_exp_dn(glo[g]);
            tf_pt mpos;
            if (dpa_fdp_isect(&la, &lb, &mpos)) {
                if (tf_cmpx(&mpos, &vx[g]) < 0) mpos = vx[g];
                if (tf_cmpx(&mpos, &vx[g + 1]) > 0) mpos = vx[g + 1];
                tf_pt ya, yb;
                dpa_fdp_line_eval(&la, &mpos, 0, &ya);
                dpa_fdp_line_eval(&lb, &mpos, 0, &yb);
                const tf_pt *lo = tf_cmpy(&ya, &yb) <= 0 ? &ya : &yb;
                mpos.y = lo->y;
                mpos.cy = lo->cy;
                if (!(tf_yprim(&mpos) && mpos.y < 0)) v[nv++] = mpos;
                else {
                    /* the lines cross below 0: the curve may be 0 from the
                     * first line's root on */
                    tf_pt r = safe_root(&la, &vx[g]);
                    tf_sety(&r, 0.0);
                    v[nv++] = r;
                }
            } else {
                /* parallel within rounding: A lowered to the line from B */
                tf_pt yb;
                dpa_fdp_line_eval(&lb, &vx[g], 0, &yb);
                if (tf_cmpy(&yb, &v[nv - 1]) < 0) {
                    v[nv - 1].y = yb.y;
                    v[nv - 1].cy = yb.cy;
                }
            }
        }
        v[nv++] = vx[g + 1];
    }
    free(gs); free(glo); free(ghi); free(plo); free(phi); free(qlo); free(qhi); free(vx);
    nv = dpa_fdp_normalize(v, nv);
    tf_pt *vv = realloc(v, nv * sizeof *v);
    return dpa_fdp_pl_take(vv ? vv : v, nv, err);
}

tf_atom *dpa_fdp_pl_atoms(const dpa_tf *f, size_t *n, double *q0, double *q0_rel, double *pinf,
                          double *pinf_rel, dpa_error *err)
{
    size_t m = f->n > 1 ? f->n - 1 : 0;
    tf_atom *a = malloc((m ? m : 1) * sizeof *a);
    if (!a) {
        dpa_error_set(err, DPA_ENOMEM, "tradeoff: out of memory (%zu atoms)", m);
        return NULL;
    }
    for (size_t k = 0; k < m; k++) {
        double p = tf_dx(&f->v[k], &f->v[k + 1]), q = -tf_dy(&f->v[k], &f->v[k + 1]);
        a[k].p = p;
        a[k].q = q;
        a[k].rel = TF_DIFF_REL;
        if (p > 0 && q > 0) {
            double lq = log(q), lp = log(p);
            a[k].key = lq - lp;
            /* log of a value within rel: +-1.01 rel; log itself: 4u; the
             * subtraction: u */
            a[k].kerr = 2.02 * TF_DIFF_REL + TF_EPS_ELEM * (fabs(lq) + fabs(lp)) +
                        2 * TF_U * fabs(a[k].key) + 1e-300;
        } else {
            a[k].key = NAN;
            a[k].kerr = 0;
        }
    }
    const tf_pt *v0 = &f->v[0], *vl = &f->v[f->n - 1];
    /* q0 = 1 - Y_0, pinf = 1 - X_last */
    if (!tf_yprim(v0)) { *q0 = v0->cy; *q0_rel = 0; }
    else { *q0 = 1.0 - v0->y; *q0_rel = TF_U; }
    if (!tf_xprim(vl)) { *pinf = vl->cx; *pinf_rel = 0; }
    else { *pinf = 1.0 - vl->x; *pinf_rel = TF_U; }
    *n = m;
    return a;
}

dpa_tf *dpa_fdp_pl_inverse(const dpa_tf *f, dpa_error *err)
{
    dpa_tf *g = dpa_fdp_alloc(TF_PL, f->n, err);
    if (!g) return NULL;
    for (size_t i = 0; i < f->n; i++) g->v[i] = tf_swap(f->v[f->n - 1 - i]);
    return g;
}

dpa_tf *dpa_fdp_pl_scale(const dpa_tf *f, double d, dpa_error *err)
{
    if (d <= 0) {
        dpa_tf *g = dpa_fdp_alloc(TF_PL, f->n, err);
        if (g) memcpy(g->v, f->v, f->n * sizeof *f->v);
        return g;
    }
    dpa_tf *g = dpa_fdp_alloc(TF_PL, f->n, err);
    if (!g) return NULL;
    double omd_lo = tf_dn(1.0 - d), omd_hi = tf_up(1.0 - d);
    if (d >= 1) omd_lo = omd_hi = 0;
    for (size_t i = 0; i < f->n; i++) {
        const tf_pt *p = &f->v[i];
        tf_pt r;
        /* X' = (1-d) X, 1 - X' = d + (1-d)(1 - X): X' rounded down */
        double xl = tf_dn(omd_lo * tf_x_lo(p));
        double cxh = tf_up(d + tf_up(omd_hi * p->cx));
        if (i == 0) tf_setx(&r, 0.0);
        else dpa_fdp_set_x_lower(&r, xl, cxh);
        double yl = tf_dn(omd_lo * tf_y_lo(p));
        double cyh = tf_up(d + tf_up(omd_hi * p->cy));
        if (i == f->n - 1) tf_sety(&r, 0.0);
        else dpa_fdp_set_y_lower(&r, yl, cyh);
        g->v[i] = r;
    }
    g->n = dpa_fdp_normalize(g->v, g->n);
    return g;
}

tf_line *dpa_fdp_pl_lines(const dpa_tf *f, size_t *n, dpa_error *err)
{
    size_t m = f->n > 1 ? f->n - 1 : 0;
    tf_line *l = malloc((m ? m : 1) * sizeof *l);
    if (!l) {
        dpa_error_set(err, DPA_ENOMEM, "tradeoff: out of memory (%zu lines)", m);
        return NULL;
    }
    for (size_t k = 0; k < m; k++) l[k] = dpa_fdp_seg_line(f, k);
    *n = m;
    return l;
}

/* ---------- coarsening ---------- */

typedef struct cost_ix { double c; size_t k; } cost_ix;

static int cmp_cost(const void *pa, const void *pb)
{
    const cost_ix *a = pa, *b = pb;
    return (a->c > b->c) - (a->c < b->c);
}

/* relative cost of dropping segment k (0 < k < n-2) of f: the gap between
 * the new vertex (intersection of the neighbours' lines) and segment k,
 * relative to the smaller of Y and 1 - Y there */
static double drop_cost(const dpa_tf *f, size_t k)
{
    tf_line l0 = dpa_fdp_seg_line(f, k - 1), l2 = dpa_fdp_seg_line(f, k + 1), l1 = dpa_fdp_seg_line(f, k);
    tf_pt w;
    if (!dpa_fdp_isect(&l0, &l2, &w)) return 0.0;
    tf_pt ya, yb, yo;
    dpa_fdp_line_eval(&l0, &w, 0, &ya);
    dpa_fdp_line_eval(&l2, &w, 0, &yb);
    dpa_fdp_line_eval(&l1, &w, 1, &yo);
    const tf_pt *yn = tf_cmpy(&ya, &yb) <= 0 ? &ya : &yb;
    double gap = tf_dy(yn, &yo);
    double scale = tf_yprim(yn) ? yn->y : yn->cy;
    if (!(gap > 0)) return 0.0;
    return gap / (fabs(scale) + 1e-300);
}

dpa_tf *dpa_fdp_pl_coarsen(const dpa_tf *f, size_t nmax, dpa_error *err)
{
    if (nmax < 4) nmax = 4;
    dpa_tf *cur = dpa_fdp_alloc(TF_PL, f->n, err);
    if (!cur) return NULL;
    memcpy(cur->v, f->v, f->n * sizeof *f->v);
    while (cur->n > nmax) {
        size_t nseg = cur->n - 1;
        size_t ninner = nseg >= 3 ? nseg - 2 : 0;
        if (ninner == 0) break;
        cost_ix *c = malloc(ninner * sizeof *c);
        unsigned char *drop = calloc(nseg, 1);
        if (!c || !drop) {
            free(c);
            free(drop);
            dpa_tf_free(cur);
            dpa_error_set(err, DPA_ENOMEM, "tradeoff: out of memory (coarsening)");
            return NULL;
        }
        for (size_t k = 1; k + 1 < nseg; k++) {
            c[k - 1].c = drop_cost(cur, k);
            c[k - 1].k = k;
        }
        qsort(c, ninner, sizeof *c, cmp_cost);
        size_t want = cur->n - nmax, per_pass = ninner / 3 + 1;
        if (want > per_pass) want = per_pass;
        size_t got = 0;
        for (size_t i = 0; i < ninner && got < want; i++) {
            size_t k = c[i].k;
            if (drop[k - 1] || drop[k + 1]) continue;
            drop[k] = 1;
            got++;
        }
        size_t nl = 0;
        tf_line *l = malloc(nseg * sizeof *l);
        if (!l) {
            free(c);
            free(drop);
            dpa_tf_free(cur);
            dpa_error_set(err, DPA_ENOMEM, "tradeoff: out of memory (coarsening)");
            return NULL;
        }
        for (size_t k = 0; k < nseg; k++)
            if (!drop[k]) l[nl++] = dpa_fdp_seg_line(cur, k);
        free(c);
        free(drop);
        dpa_tf *next = dpa_fdp_envelope(l, nl, err);
        free(l);
        dpa_tf_free(cur);
        if (!next) return NULL;
        if (got == 0) return next;
        cur = next;
    }
    return cur;
}
