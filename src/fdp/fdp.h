/* Internal interface of the tradeoff-function module (include/dpacct/tradeoff.h).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Representation (docs/fdp.md §5).
 *  - Closed forms: TF_GAUSS (G_mu), TF_PURE (f_{eps,0}), TF_LAPLACE, each
 *    decorated by d: the curve is g (x) f_{0,d}, i.e. (1-d) g(x/(1-d)) on
 *    [0, 1-d] and 0 after (GDP eq 13).  f_{eps,delta} is TF_PURE with d = delta.
 *  - TF_PL: a convex piecewise-linear curve given by vertices V_0 .. V_{n-1}
 *    with X_0 = 0 < X_1 < ... and Y_0 > Y_1 > ... > Y_{n-1} = 0; the curve is 0
 *    after V_{n-1}.  n = 1 is the zero curve (the non-private f = 0).
 *
 * Points (tf_pt).  A coordinate X in [0, 1] is stored as two doubles (x, cx):
 * when x < 1/2, X is x exactly and cx is 1 - x rounded UP; otherwise X is
 * 1 - cx exactly, cx <= 1/2, and x is max(1/2, 1 - cx rounded DOWN).  The
 * "primary" double (the smaller one) is the exact value; its complement is a
 * one-sided rounding in the direction that makes every use of it safe (x is
 * only ever used as a lower bound on X, cx as an upper bound on 1 - X).  Y
 * the same with (y, cy).  Both tails of a curve thus keep full relative
 * accuracy: f near 1 (x near 0, large eps) through cy, f near 0 (x near 1)
 * through cx.
 *
 * Soundness invariants (docs/fdp.md §5).  A stored curve is at most the
 * exact curve it stands for.  Constructions keep this by three rules:
 *  (R1) a vertex computed from sums may be moved down and left of the exact
 *       vertex (below-left): on each exact linear piece the computed chord
 *       then stays below the piece's line, which supports the convex curve;
 *  (R2) a vertex between two pieces lying on certified lower lines l1, l2
 *       (tf_line) may be placed anywhere in x if its y is at most
 *       min(l1(x), l2(x)) (the segment then lies below one of the lines);
 *  (R3) removing a vertex that is above the chord of its neighbours (lower
 *       convex hull) or lowering a vertex only lowers the curve.
 * Every stored PL curve is convex exactly (hull with an exact orientation
 * predicate, fdp_exact.c), so the line through any of its segments is a
 * supporting line.
 */
#ifndef DPA_FDP_H
#define DPA_FDP_H

#include <float.h>
#include <math.h>
#include <stddef.h>
#include "dpacct/tradeoff.h"
#include "num/num.h"

#define TF_U DPA_UNIT_ROUNDOFF

/* Error budget of an elementary function (exp, log, expm1, log1p): 4u
 * relative, i.e. 2 ulp; glibc documents these below 1 ulp.  Same budget as
 * src/exact/gaussian.c. */
#define TF_EPS_ELEM (4 * TF_U)
/* Error budget of dpa_log_ndtr relative to the log value: 16u (measured
 * below 3.6u against mpmath by tests/test_num.c; the exact method uses the
 * same budget, EPS_NDTR in src/exact/gaussian.c). */
#define TF_EPS_NDTR (16 * TF_U)
/* Relative error of a difference of two coordinates (tf_dx, tf_dy): one
 * rounding when both are stored on the same side, three when they straddle
 * 1/2 ((1/2 - x) + (1/2 - cx')); 2u covers both to first order, 3u with
 * slack for the second-order terms. */
#define TF_DIFF_REL (3 * TF_U)

typedef enum tf_kind { TF_PL = 0, TF_GAUSS = 1, TF_PURE = 2, TF_LAPLACE = 3 } tf_kind;

typedef struct tf_pt {
    double x, cx, y, cy;
} tf_pt;

struct dpa_tf {
    tf_kind kind;
    double mu;   /* TF_GAUSS, TF_LAPLACE */
    double eps;  /* TF_PURE */
    double d;    /* closed forms: tensored with f_{0,d} (0: none) */
    size_t n;    /* TF_PL: number of vertices (>= 1) */
    tf_pt *v;    /* TF_PL: vertices */
};

/* A certified lower line: the exact line through the anchor a (as stored,
 * an exact point) with slope -s for some s in [s_lo, s_hi] (0 <= s_lo <= s_hi)
 * lies below the curve it bounds on all of [0, 1].  dpa_fdp_line_eval evaluates
 * a bound on it that is valid for every such s.  A line through a segment
 * of a stored curve also knows the segment's other end b (has_b = 1), an
 * exact point on the same exact line: evaluation starts from the nearer of
 * the two (the error grows with the distance), and a root at b is exact. */
typedef struct tf_line {
    tf_pt a, b;
    double s_lo, s_hi;
    int has_b;
} tf_line;

/* ---------- one-sided rounding ---------- */
/* The exact result of one correctly rounded operation lies within one ulp:
 * nextafter away from the rounded value bounds it. */
static inline double tf_up(double v) { return nextafter(v, INFINITY); }
static inline double tf_dn(double v) { return nextafter(v, -INFINITY); }
/* v moved up (down) by k u |v| and one more ulp: bounds a value known to
 * relative accuracy k u after the rounding of this operation itself. */
static inline double tf_raise(double v, double k) { return tf_up(v + fabs(v) * (k * TF_U)); }
static inline double tf_lower(double v, double k) { return tf_dn(v - fabs(v) * (k * TF_U)); }
/* exp and log with the elementary-function budget, rounded outward */
static inline double tf_exp_up(double v) { return tf_raise(exp(v), 4) + DBL_TRUE_MIN; }
static inline double tf_exp_dn(double v)
{
    double e = tf_lower(exp(v), 4);
    return e > 0 ? e : 0.0;
}

/* ---------- points ---------- */
static inline int tf_xprim(const tf_pt *p) { return p->x < 0.5; }
static inline int tf_yprim(const tf_pt *p) { return p->y < 0.5; }
/* 1 - v rounded up (down) for v in [0, 1/2): 1 - fl(1 - v) is exact
 * (Sterbenz), so the rounding error's sign is known and the bound is tight */
static inline double tf_one_minus_up(double v)
{
    double c = 1.0 - v;
    return (1.0 - c) > v ? tf_up(c) : c;
}
/* 1 - c rounded down for c in [0, 1/2] (result >= 1/2) */
static inline double tf_one_minus_dn(double c)
{
    double x = 1.0 - c;
    return (1.0 - x) < c ? tf_dn(x) : x;
}
/* X = x exactly (x in [0, 1]) */
static inline void tf_setx(tf_pt *p, double x)
{
    p->x = x;
    p->cx = x < 0.5 ? tf_one_minus_up(x) : 1.0 - x;
}
/* X = 1 - c exactly (c in [0, 1]) */
static inline void tf_setcx(tf_pt *p, double c)
{
    if (c <= 0.5) {
        p->cx = c;
        double x = tf_one_minus_dn(c);
        p->x = x > 0.5 ? x : 0.5;
    } else {
        p->x = 1.0 - c; /* exact: c in (1/2, 1] (Sterbenz) */
        p->cx = c;
    }
}
static inline void tf_sety(tf_pt *p, double y)
{
    p->y = y;
    p->cy = y < 0.5 ? tf_one_minus_up(y) : 1.0 - y;
}
static inline void tf_setcy(tf_pt *p, double c)
{
    if (c <= 0.5) {
        p->cy = c;
        double y = tf_one_minus_dn(c);
        p->y = y > 0.5 ? y : 0.5;
    } else {
        p->y = 1.0 - c;
        p->cy = c;
    }
}
/* nearest doubles of X and Y */
static inline double tf_X(const tf_pt *p) { return tf_xprim(p) ? p->x : 1.0 - p->cx; }
static inline double tf_Y(const tf_pt *p) { return tf_yprim(p) ? p->y : 1.0 - p->cy; }
/* A lower bound on X as a double, an upper bound on 1 - X, etc. */
static inline double tf_x_lo(const tf_pt *p) { return tf_xprim(p) ? p->x : tf_one_minus_dn(p->cx); }
static inline double tf_cx_hi(const tf_pt *p) { return p->cx; }
static inline double tf_y_lo(const tf_pt *p) { return tf_yprim(p) ? p->y : tf_one_minus_dn(p->cy); }
static inline double tf_cy_hi(const tf_pt *p) { return p->cy; }

/* exact comparisons of the X (Y) coordinates: -1, 0, 1 */
static inline int tf_cmpx(const tf_pt *a, const tf_pt *b)
{
    int pa = tf_xprim(a), pb = tf_xprim(b);
    if (pa && pb) return (a->x > b->x) - (a->x < b->x);
    if (!pa && !pb) return (a->cx < b->cx) - (a->cx > b->cx);
    return pa ? -1 : 1;
}
static inline int tf_cmpy(const tf_pt *a, const tf_pt *b)
{
    int pa = tf_yprim(a), pb = tf_yprim(b);
    if (pa && pb) return (a->y > b->y) - (a->y < b->y);
    if (!pa && !pb) return (a->cy < b->cy) - (a->cy > b->cy);
    return pa ? -1 : 1;
}
/* X_b - X_a and Y_b - Y_a with relative error at most TF_DIFF_REL */
static inline double tf_diff(double va, double ca, double vb, double cb)
{
    int pa = va < 0.5, pb = vb < 0.5;
    if (pa && pb) return vb - va;
    if (!pa && !pb) return ca - cb;
    if (pa) return (0.5 - va) + (0.5 - cb);
    return -((0.5 - vb) + (0.5 - ca));
}
static inline double tf_dx(const tf_pt *a, const tf_pt *b) { return tf_diff(a->x, a->cx, b->x, b->cx); }
static inline double tf_dy(const tf_pt *a, const tf_pt *b) { return tf_diff(a->y, a->cy, b->y, b->cy); }
/* swap the roles of X and Y (the inverse function's point) */
static inline tf_pt tf_swap(tf_pt p)
{
    tf_pt q = { p.y, p.cy, p.x, p.cx };
    return q;
}

/* ---------- exact predicates (fdp_exact.c) ---------- */
/* Sign of (Y_a - Y_b)(X_c - X_b) - (Y_b - Y_c)(X_b - X_a): > 0 iff b lies
 * strictly below the chord from a to c (for X_a < X_b < X_c).  Exact (a
 * floating-point filter, then expansion arithmetic) except that terms
 * below the underflow threshold may be lost (an error below 2^-1074 in the
 * products). */
int dpa_fdp_below_chord(const tf_pt *a, const tf_pt *b, const tf_pt *c);
/* Sign of (Y_a - Y_b) - (X_b - X_a): > 0 iff the segment from a to b is
 * steeper than slope -1.  Exact. */
int dpa_fdp_steeper_than_one(const tf_pt *a, const tf_pt *b);
/* Sign of (X_a + Y_a) - (X_b + Y_b).  Exact. */
int dpa_fdp_cmp_sum(const tf_pt *a, const tf_pt *b);

/* ---------- the object and its options (fdp_object.c) ---------- */
/* a curve of the given kind with room for n vertices (mu, eps NaN, d 0) */
dpa_tf *dpa_fdp_alloc(tf_kind kind, size_t n, dpa_error *err);
/* a PL curve taking ownership of v[0..n-1] (malloc'd; freed on failure) */
dpa_tf *dpa_fdp_pl_take(tf_pt *v, size_t n, dpa_error *err);
/* *out = *in, or the defaults when in is NULL */
void dpa_fdp_opts_resolve(const dpa_tf_opts *in, dpa_tf_opts *out);
/* the domain of every option (NULL: the defaults, valid) */
dpa_status dpa_fdp_opts_check(const dpa_tf_opts *o, dpa_error *err);

/* ---------- piecewise-linear machinery (fdp_pl.c) ---------- */
/* lower (upper) bound on the line at X_q as a point's Y (x fields ignored) */
void dpa_fdp_line_eval(const tf_line *l, const tf_pt *q, int upper, tf_pt *out);
/* Store a value as a point's Y: v is Y itself (is_c = 0) or 1 - Y (is_c = 1);
 * lower results (upper = 0) store a Y <= the given one, upper results >=. */
void dpa_fdp_put_y(tf_pt *o, double v, int is_c, int upper);
/* a point's X (Y) from a lower bound on it and an upper bound on its
 * complement: the stored value is <= the exact one (rule R1) */
void dpa_fdp_set_x_lower(tf_pt *p, double x_lo, double cx_hi);
void dpa_fdp_set_y_lower(tf_pt *p, double y_lo, double cy_hi);
/* intersection of line a (the steeper) with b, as a position (X only);
 * 0 if they are parallel within rounding */
int dpa_fdp_isect(const tf_line *a, const tf_line *b, tf_pt *out);
/* slope interval of the segment from a to b (X_a < X_b, Y_a >= Y_b) */
void dpa_fdp_seg_slope(const tf_pt *a, const tf_pt *b, double *s_lo, double *s_hi);
/* the line of segment k of a PL curve (through V_k and V_{k+1}) */
tf_line dpa_fdp_seg_line(const dpa_tf *f, size_t k);
/* the line swapped into the inverse function's coordinates */
tf_line dpa_fdp_line_inverse(const tf_line *l);
/* Upper envelope of max(0, lines) on [0, 1] as a PL curve (rule R2), then
 * normalized.  Takes no ownership; the lines are reordered. */
dpa_tf *dpa_fdp_envelope(tf_line *lines, size_t n, dpa_error *err);
/* Normalize a vertex list in place: sorted strictly by X, Y lowered to be
 * non-increasing, cut at the first Y = 0, lower convex hull (R3).  Returns
 * the new count (>= 1).  v[0] must have X = 0. */
size_t dpa_fdp_normalize(tf_pt *v, size_t n);
/* PL evaluation at X_q: *lo <= curve <= *hi, as points' Y fields. */
void dpa_fdp_pl_eval(const dpa_tf *f, const tf_pt *q, tf_pt *lo, tf_pt *hi);
/* An atom of a discrete pair: masses p, q > 0 with relative error bounds,
 * and the log likelihood ratio key = log(q/p) with an absolute error bound. */
typedef struct tf_atom {
    double p, q;       /* nearest values */
    double rel;        /* |p - P| <= rel P, |q - Q| <= rel Q (exact P, Q) */
    double key, kerr;  /* |key - log(Q/P)| <= kerr */
} tf_atom;
/* The tradeoff curve of a discrete pair (RF Prop 12, GDP Def 2.1 by
 * Neyman-Pearson): atoms in any order (sorted here), q0 = Q-mass where P = 0,
 * pinf = P-mass where Q = 0, given as upper bounds (q0_hi, pinf_hi); the exact
 * masses sum to 1 on each side.  Near-ties of the key are grouped and
 * bounded by their extreme slopes.  atoms is reordered. */
dpa_tf *dpa_fdp_from_atoms(tf_atom *atoms, size_t n, double q0_hi, double pinf_hi, dpa_error *err);
/* the atoms of a PL curve's segments (n - 1 of them) and its q0, pinf */
tf_atom *dpa_fdp_pl_atoms(const dpa_tf *f, size_t *n, double *q0, double *q0_rel, double *pinf,
                          double *pinf_rel, dpa_error *err);
/* PL inverse (exact) */
dpa_tf *dpa_fdp_pl_inverse(const dpa_tf *f, dpa_error *err);
/* PL curve (x) f_{0,d} (GDP eq 13), d in [0, 1], rounded down */
dpa_tf *dpa_fdp_pl_scale(const dpa_tf *f, double d, dpa_error *err);
/* at most nmax vertices by dropping segments (R2 with the neighbours' lines) */
dpa_tf *dpa_fdp_pl_coarsen(const dpa_tf *f, size_t nmax, dpa_error *err);
/* the lines of all segments of a PL curve (n - 1 of them), malloc'd */
tf_line *dpa_fdp_pl_lines(const dpa_tf *f, size_t *n, dpa_error *err);

/* ---------- closed forms (fdp_closed.c) ---------- */
/* bounds on the closed form (with its d) at X_q, as points' Y fields */
void dpa_fdp_closed_eval(const dpa_tf *f, const tf_pt *q, tf_pt *lo, tf_pt *hi);
/* upper bound on delta(eps) of the closed form (symmetric: one direction) */
double dpa_fdp_closed_delta(const dpa_tf *f, double eps);
/* PL lower bound of a closed form per opt (d applied exactly) */
dpa_tf *dpa_fdp_closed_discretize(const dpa_tf *f, const dpa_tf_opts *opt, dpa_error *err);
/* Bracket of Phi^{-1}(p), p in [0, 1]: Phi(lo) <= p <= Phi(hi), checked with
 * dpa_log_ndtr and its budget (dpa_ndtri's value moved outward until the
 * check passes). */
void dpa_fdp_ndtri_bracket(double p, double *lo, double *hi);
/* The supporting line implied by one point of a profile (delta an upper
 * bound): QP: f(x) >= 1 - delta - e^eps x (anchor (0, 1 - delta));
 * PQ: f(x) >= e^-eps (1 - delta - x) (anchor (1 - delta, 0)).  delta < 1. */
void dpa_fdp_qp_line(double eps, double delta, tf_line *l);
void dpa_fdp_pq_line(double eps, double delta, tf_line *l);

/* Largest number of atoms of a discrete pair built at once (tensor products,
 * binomials): 2^21 atoms of 40 bytes are 80 MB; DPA_TF_TENSOR_SIDE^2 fits. */
#define TF_MAX_ATOMS ((size_t)1 << 21)

/* ---------- any curve (fdp_tf.c) ---------- */
/* the PL form of any curve: a copy for PL, a discretization for closed forms */
dpa_tf *dpa_fdp_as_pl(const dpa_tf *f, const dpa_tf_opts *opt, dpa_error *err);
/* lower and upper bounds at X_q for any curve */
void dpa_fdp_eval_pt(const dpa_tf *f, const tf_pt *q, tf_pt *lo, tf_pt *hi);

#endif
