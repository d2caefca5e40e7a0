/* Operations on tradeoff functions: inverse, max, min (lower convex
 * envelope), symmetrizations (GDP Prop 2.1, Def F.1), subsampling C_p (GDP
 * Def 4.1 / eq 14), group privacy (GDP Thm 2.14), tensor products (GDP
 * Def 3.1, Cor 3.3, eq 13; RF Prop 12) and powers (binomial closed form).
 * Every result is a lower bound on the exact operation (docs/fdp.md §4-§5).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "fdp/fdp.h"

#define MU_MAX 1e8
/* group sizes and tensor powers accepted (tradeoff.h) */
#define GROUP_MAX ((unsigned long)1 << 20)
#define POWER_MAX 1000000000UL

static int closed_symmetric(const dpa_tf *f) { return f->kind != TF_PL; }
static int is_f0d(const dpa_tf *f) { return f->kind == TF_PURE && f->eps == 0; }

/* 1 - (1 - a)(1 - b) = a + b (1 - a), rounded up */
static double d_combine(double a, double b)
{
    if (a == 0) return b;
    if (b == 0) return a;
    double r = tf_up(a + tf_up(b * tf_up(1.0 - a)));
    return r < 1 ? r : 1.0;
}

static dpa_status opts_ok(const dpa_tf_opts *opt, dpa_error *err)
{
    return dpa_fdp_opts_check(opt, err);
}

static dpa_tf *cap_vertices(dpa_tf *g, const dpa_tf_opts *o, dpa_error *err)
{
    if (!g || g->kind != TF_PL || g->n <= o->max_vertices) return g;
    dpa_tf *c = dpa_fdp_pl_coarsen(g, o->max_vertices, err);
    dpa_tf_free(g);
    return c;
}

dpa_tf *dpa_tf_inverse(const dpa_tf *f, dpa_error *err)
{
    if (!f) {
        dpa_error_set(err, DPA_EINVAL, "tradeoff inverse: NULL curve");
        return NULL;
    }
    if (closed_symmetric(f)) return dpa_tf_copy(f, err);
    return dpa_fdp_pl_inverse(f, err);
}

/* envelope of the segment lines of a and b (b may be NULL), optionally with
 * the inverted lines of both */
static dpa_tf *lines_envelope(const dpa_tf *a, const dpa_tf *b, int with_inverse, dpa_error *err)
{
    size_t na = 0, nb = 0;
    tf_line *la = dpa_fdp_pl_lines(a, &na, err), *lb = NULL;
    if (!la) return NULL;
    if (b) {
        lb = dpa_fdp_pl_lines(b, &nb, err);
        if (!lb) {
            free(la);
            return NULL;
        }
    }
    size_t n = na + nb, tot = with_inverse ? 2 * n : n;
    tf_line *l = malloc((tot ? tot : 1) * sizeof *l);
    if (!l) {
        free(la);
        free(lb);
        dpa_error_set(err, DPA_ENOMEM, "tradeoff: out of memory (%zu lines)", tot);
        return NULL;
    }
    memcpy(l, la, na * sizeof *l);
    if (nb) memcpy(l + na, lb, nb * sizeof *l);
    if (with_inverse)
        for (size_t i = 0; i < n; i++) l[n + i] = dpa_fdp_line_inverse(&l[i]);
    free(la);
    free(lb);
    dpa_tf *r = dpa_fdp_envelope(l, tot, err);
    free(l);
    return r;
}

dpa_tf *dpa_tf_max(const dpa_tf *f, const dpa_tf *g, const dpa_tf_opts *opt, dpa_error *err)
{
    if (!f || !g) {
        dpa_error_set(err, DPA_EINVAL, "tradeoff max: NULL curve");
        return NULL;
    }
    if (opts_ok(opt, err)) return NULL;
    dpa_tf_opts o;
    dpa_fdp_opts_resolve(opt, &o);
    dpa_tf *F = dpa_fdp_as_pl(f, &o, err);
    if (!F) return NULL;
    dpa_tf *G = dpa_fdp_as_pl(g, &o, err);
    if (!G) {
        dpa_tf_free(F);
        return NULL;
    }
    /* max of convex curves = envelope of all their supporting lines */
    dpa_tf *r = lines_envelope(F, G, 0, err);
    dpa_tf_free(F);
    dpa_tf_free(G);
    return cap_vertices(r, &o, err);
}

/* lower convex envelope of min{F, G} for PL curves: on each interval
 * between consecutive vertices of F and G both are linear, so min{F, G} is
 * concave there and the chord of points below it stays below it; the lower
 * hull of those points is then the largest convex function below (R3). */
static dpa_tf *pl_min_env(const dpa_tf *F, const dpa_tf *G, dpa_error *err)
{
    size_t n = F->n + G->n;
    tf_pt *v = malloc(n * sizeof *v);
    if (!v) {
        dpa_error_set(err, DPA_ENOMEM, "tradeoff: out of memory (%zu points)", n);
        return NULL;
    }
    size_t i = 0, j = 0, m = 0;
    while (i < F->n || j < G->n) {
        tf_pt q;
        if (j >= G->n || (i < F->n && tf_cmpx(&F->v[i], &G->v[j]) <= 0)) q = F->v[i++];
        else q = G->v[j++];
        if (m > 0 && tf_cmpx(&v[m - 1], &q) == 0) continue;
        tf_pt fl, fh, gl, gh;
        dpa_fdp_eval_pt(F, &q, &fl, &fh);
        dpa_fdp_eval_pt(G, &q, &gl, &gh);
        const tf_pt *lo = tf_cmpy(&fl, &gl) <= 0 ? &fl : &gl;
        q.y = lo->y;
        q.cy = lo->cy;
        v[m++] = q;
    }
    m = dpa_fdp_normalize(v, m);
    return dpa_fdp_pl_take(v, m, err);
}

dpa_tf *dpa_tf_min(const dpa_tf *f, const dpa_tf *g, const dpa_tf_opts *opt, dpa_error *err)
{
    if (!f || !g) {
        dpa_error_set(err, DPA_EINVAL, "tradeoff min: NULL curve");
        return NULL;
    }
    if (opts_ok(opt, err)) return NULL;
    dpa_tf_opts o;
    dpa_fdp_opts_resolve(opt, &o);
    dpa_tf *F = dpa_fdp_as_pl(f, &o, err);
    if (!F) return NULL;
    dpa_tf *G = dpa_fdp_as_pl(g, &o, err);
    if (!G) {
        dpa_tf_free(F);
        return NULL;
    }
    dpa_tf *r = pl_min_env(F, G, err);
    dpa_tf_free(F);
    dpa_tf_free(G);
    return cap_vertices(r, &o, err);
}

dpa_tf *dpa_tf_symmetrize_max(const dpa_tf *f, const dpa_tf_opts *opt, dpa_error *err)
{
    if (!f) {
        dpa_error_set(err, DPA_EINVAL, "symmetrize_max: NULL curve");
        return NULL;
    }
    if (opts_ok(opt, err)) return NULL;
    if (closed_symmetric(f)) return dpa_tf_copy(f, err);
    dpa_tf_opts o;
    dpa_fdp_opts_resolve(opt, &o);
    /* max{f, f^-1}: the lines of f and their inverses (dpa_fdp_line_inverse) */
    return cap_vertices(lines_envelope(f, NULL, 1, err), &o, err);
}

dpa_tf *dpa_tf_symm(const dpa_tf *f, const dpa_tf_opts *opt, dpa_error *err)
{
    if (!f) {
        dpa_error_set(err, DPA_EINVAL, "symm: NULL curve");
        return NULL;
    }
    if (opts_ok(opt, err)) return NULL;
    if (closed_symmetric(f)) return dpa_tf_copy(f, err); /* Symm(f) = f for symmetric f */
    dpa_tf_opts o;
    dpa_fdp_opts_resolve(opt, &o);
    /* f_env: the segments steeper than -1 (exact test), then the supporting
     * line of slope -1 at the vertex x_bar where the slope passes -1 (GDP
     * proof of Prop F.2); Symm(f) = max{f_env, f_env^-1} in both of Def F.1's
     * cases */
    size_t n = f->n, k = 0;
    tf_line *l = malloc(2 * (n + 1) * sizeof *l);
    if (!l) {
        dpa_error_set(err, DPA_ENOMEM, "symm: out of memory");
        return NULL;
    }
    size_t m = 0;
    while (k + 1 < n && dpa_fdp_steeper_than_one(&f->v[k], &f->v[k + 1]) > 0) {
        l[m++] = dpa_fdp_seg_line(f, k);
        k++;
    }
    l[m].a = f->v[k];
    l[m].has_b = 0;
    l[m].s_lo = l[m].s_hi = 1.0;
    m++;
    for (size_t i = 0; i < m; i++) l[m + i] = dpa_fdp_line_inverse(&l[i]);
    dpa_tf *r = dpa_fdp_envelope(l, 2 * m, err);
    free(l);
    return cap_vertices(r, &o, err);
}

/* f_p = p f + (1 - p) Id on the vertices of F, then (1, 0) (rule R1: X
 * exact, Y rounded down; f_p is linear between them) */
static dpa_tf *pl_mix_identity(const dpa_tf *F, double p, dpa_error *err)
{
    dpa_tf *g = dpa_fdp_alloc(TF_PL, F->n + 1, err);
    if (!g) return NULL;
    double omp_lo = tf_dn(1.0 - p), omp_hi = tf_up(1.0 - p);
    if (omp_lo < 0) omp_lo = 0;
    size_t m = 0;
    for (size_t i = 0; i < F->n; i++) {
        const tf_pt *v = &F->v[i];
        tf_pt r = *v;
        double cxl = tf_xprim(v) ? tf_one_minus_dn(v->x) : v->cx;
        double xh = tf_xprim(v) ? v->x : tf_one_minus_up(v->cx);
        /* Y_p = p Y + (1-p)(1-X), 1 - Y_p = p (1-Y) + (1-p) X */
        double yl = tf_dn(tf_dn(p * tf_y_lo(v)) + tf_dn(omp_lo * cxl));
        double cyh = tf_up(tf_up(p * v->cy) + tf_up(omp_hi * xh));
        dpa_fdp_set_y_lower(&r, yl, cyh);
        g->v[m++] = r;
    }
    if (tf_xprim(&F->v[F->n - 1]) || F->v[F->n - 1].cx > 0) {
        tf_pt e;
        tf_setcx(&e, 0.0);
        tf_sety(&e, 0.0);
        g->v[m++] = e;
    }
    g->n = dpa_fdp_normalize(g->v, m);
    return g;
}

dpa_tf *dpa_tf_subsample(const dpa_tf *f, double p, const dpa_tf_opts *opt, dpa_error *err)
{
    if (!f) {
        dpa_error_set(err, DPA_EINVAL, "subsample: NULL curve");
        return NULL;
    }
    if (!(p >= 0) || !(p <= 1)) {
        dpa_error_set(err, DPA_EINVAL, "subsample: p must be in [0, 1], got %g", p);
        return NULL;
    }
    if (opts_ok(opt, err)) return NULL;
    dpa_tf_opts o;
    dpa_fdp_opts_resolve(opt, &o);
    if (p == 0) return dpa_tf_identity(err); /* C_0(f) = Id */
    if (p == 1 && closed_symmetric(f)) return dpa_tf_copy(f, err);
    dpa_tf *F = dpa_fdp_as_pl(f, &o, err);
    if (!F) return NULL;
    dpa_tf *Fp = pl_mix_identity(F, p, err);
    dpa_tf_free(F);
    if (!Fp) return NULL;
    dpa_tf *Fi = dpa_fdp_pl_inverse(Fp, err);
    if (!Fi) {
        dpa_tf_free(Fp);
        return NULL;
    }
    /* C_p(f) = min{f_p, f_p^-1}** (GDP Def 4.1) */
    dpa_tf *r = pl_min_env(Fp, Fi, err);
    dpa_tf_free(Fp);
    dpa_tf_free(Fi);
    return cap_vertices(r, &o, err);
}

/* the point with X = 1 - Y_v */
static tf_pt one_minus_y(const tf_pt *v)
{
    tf_pt u = { 0, 1, 0, 1 };
    if (tf_yprim(v)) tf_setcx(&u, v->y);
    else tf_setx(&u, v->cy);
    return u;
}

/* h = F ^o G, h(x) = F(1 - G(x)) (GDP Appendix A, the operation behind
 * 1 - (1-f)^{o k}).  On each piece where G is on segment j and F on segment
 * i, h is the line L_ij(x) = F_i(1 - G_j(x)); every L_ij is a global lower
 * bound of h (F >= F_i, G >= G_j and F_i decreasing), so h is the envelope of
 * the L_ij met along the sweep. */
static dpa_tf *pl_hat_compose(const dpa_tf *F, const dpa_tf *G, dpa_error *err)
{
    size_t nF = F->n, nG = G->n;
    if (nF < 2 || nG < 2) { /* F = 0 or G = 0: h = F(1 - G) = 0 (F(1) = 0) */
        dpa_tf *z = dpa_fdp_alloc(TF_PL, 1, err);
        if (z) z->v[0] = (tf_pt){ 0, 1, 0, 1 };
        return z;
    }
    tf_line *l = malloc((nF + nG) * sizeof *l);
    if (!l) {
        dpa_error_set(err, DPA_ENOMEM, "group: out of memory");
        return NULL;
    }
    size_t m = 0;
    tf_pt u0 = one_minus_y(&G->v[0]);
    /* F segment containing u0 */
    size_t i = 0;
    while (i + 1 < nF && tf_cmpx(&F->v[i + 1], &u0) <= 0) i++;
    size_t j = 0;
    while (i + 1 < nF && j + 1 < nG) {
        tf_line fi = dpa_fdp_seg_line(F, i), gj = dpa_fdp_seg_line(G, j);
        tf_pt uj = one_minus_y(&G->v[j]), yv;
        dpa_fdp_line_eval(&fi, &uj, 0, &yv);
        tf_line L = { 0 };
        L.a = G->v[j];
        L.a.y = yv.y;
        L.a.cy = yv.cy;
        L.s_lo = tf_dn(fi.s_lo * gj.s_lo);
        L.s_hi = tf_up(fi.s_hi * gj.s_hi);
        l[m++] = L;
        tf_pt un = one_minus_y(&G->v[j + 1]);
        int c = tf_cmpx(&un, &F->v[i + 1]);
        if (c <= 0) j++;
        if (c >= 0) i++;
    }
    dpa_tf *r = dpa_fdp_envelope(l, m, err);
    free(l);
    return r;
}

dpa_tf *dpa_tf_group(const dpa_tf *f, unsigned long k, const dpa_tf_opts *opt, dpa_error *err)
{
    if (!f) {
        dpa_error_set(err, DPA_EINVAL, "group: NULL curve");
        return NULL;
    }
    if (k < 1 || k > GROUP_MAX) {
        dpa_error_set(err, DPA_EINVAL, "group: k must be in [1, 2^20], got %lu", k);
        return NULL;
    }
    if (opts_ok(opt, err)) return NULL;
    dpa_tf_opts o;
    dpa_fdp_opts_resolve(opt, &o);
    if (k == 1) return dpa_tf_copy(f, err);
    if (f->kind == TF_GAUSS && f->d == 0) {
        /* G_mu ^o G_mu' = G_{mu + mu'} (GDP proof of Thm 2.14) */
        double mu = tf_up(f->mu * (double)k);
        if (mu > MU_MAX) mu = MU_MAX;
        return dpa_tf_gaussian(mu, err);
    }
    if (is_f0d(f)) {
        /* f_{0,d}(1 - f_{0,d}(x)) = max{0, 1 - 2d - x}: f_{0, min(1, k d)} */
        double d = tf_up(f->d * (double)k);
        return dpa_tf_approx(0.0, d < 1 ? d : 1.0, err);
    }
    dpa_tf *F = dpa_fdp_as_pl(f, &o, err);
    if (!F) return NULL;
    dpa_tf *h = dpa_tf_copy(F, err);
    for (unsigned long t = 1; h && t < k; t++) {
        dpa_tf *nh = pl_hat_compose(F, h, err);
        dpa_tf_free(h);
        h = cap_vertices(nh, &o, err);
    }
    dpa_tf_free(F);
    return h;
}

/* ---------- tensor products ---------- */

static dpa_tf *with_d(const dpa_tf *f, double d, dpa_error *err)
{
    if (f->kind == TF_PL) return dpa_fdp_pl_scale(f, d, err);
    dpa_tf *g = dpa_tf_copy(f, err);
    if (g) g->d = d_combine(f->d, d);
    return g;
}

/* RF Prop 12 on the discrete pairs behind two PL curves */
static dpa_tf *pl_tensor(const dpa_tf *F, const dpa_tf *G, dpa_error *err)
{
    size_t na, nb;
    double q0a, q0ar, pia, piar, q0b, q0br, pib, pibr;
    tf_atom *a = dpa_fdp_pl_atoms(F, &na, &q0a, &q0ar, &pia, &piar, err);
    if (!a) return NULL;
    tf_atom *b = dpa_fdp_pl_atoms(G, &nb, &q0b, &q0br, &pib, &pibr, err);
    if (!b) {
        free(a);
        return NULL;
    }
    size_t n = na * nb;
    tf_atom *c = malloc((n ? n : 1) * sizeof *c);
    if (!c) {
        free(a);
        free(b);
        dpa_error_set(err, DPA_ENOMEM, "tensor: out of memory (%zu atoms)", n);
        return NULL;
    }
    size_t m = 0;
    for (size_t i = 0; i < na; i++)
        for (size_t j = 0; j < nb; j++) {
            tf_atom *x = &a[i], *y = &b[j], *z = &c[m++];
            z->p = x->p * y->p;
            z->q = x->q * y->q;
            z->rel = x->rel + y->rel + 2 * TF_U;
            z->key = x->key + y->key;
            z->kerr = x->kerr + y->kerr + 2 * TF_U * fabs(z->key) + 1e-300;
        }
    /* Q-mass where P = 0: 1 - (1 - q0a)(1 - q0b); P-mass where Q = 0 likewise */
    double qa = tf_raise(q0a * (1 + q0ar), 1), qb = tf_raise(q0b * (1 + q0br), 1);
    double pa = tf_raise(pia * (1 + piar), 1), pb = tf_raise(pib * (1 + pibr), 1);
    double q0 = d_combine(qa, qb), pinf = d_combine(pa, pb);
    free(a);
    free(b);
    dpa_tf *r = dpa_fdp_from_atoms(c, m, q0, pinf, err);
    free(c);
    return r;
}

static dpa_tf *tensor_pl_capped(const dpa_tf *F, const dpa_tf *G, const dpa_tf_opts *o,
                                dpa_error *err)
{
    /* each factor at most min(DPA_TF_TENSOR_SIDE, max_vertices) vertices */
    size_t cap = DPA_TF_TENSOR_SIDE < o->max_vertices ? DPA_TF_TENSOR_SIDE : o->max_vertices;
    dpa_tf *Fc = NULL, *Gc = NULL, *r;
    if (F->n > cap && !(Fc = dpa_fdp_pl_coarsen(F, cap, err))) return NULL;
    if (G->n > cap && !(Gc = dpa_fdp_pl_coarsen(G, cap, err))) {
        dpa_tf_free(Fc);
        return NULL;
    }
    r = pl_tensor(Fc ? Fc : F, Gc ? Gc : G, err);
    dpa_tf_free(Fc);
    dpa_tf_free(Gc);
    return cap_vertices(r, o, err);
}

dpa_tf *dpa_tf_tensor(const dpa_tf *f, const dpa_tf *g, const dpa_tf_opts *opt, dpa_error *err)
{
    if (!f || !g) {
        dpa_error_set(err, DPA_EINVAL, "tensor: NULL curve");
        return NULL;
    }
    if (opts_ok(opt, err)) return NULL;
    dpa_tf_opts o;
    dpa_fdp_opts_resolve(opt, &o);
    if (f->kind == TF_GAUSS && g->kind == TF_GAUSS) {
        /* G_a (x) G_b = G_sqrt(a^2 + b^2) (GDP Cor 3.3); rounded up */
        double mu = tf_raise(hypot(f->mu, g->mu), 2);
        dpa_tf *r = dpa_tf_gaussian(mu < MU_MAX ? mu : MU_MAX, err);
        if (r) r->d = d_combine(f->d, g->d);
        return r;
    }
    if (is_f0d(g)) return with_d(f, g->d, err); /* GDP eq 13 */
    if (is_f0d(f)) return with_d(g, f->d, err);
    /* decorations commute: (f (x) f0d) (x) (g (x) f0e) = (f (x) g) (x) f0{d+e-de} */
    double d = d_combine(f->kind == TF_PL ? 0 : f->d, g->kind == TF_PL ? 0 : g->d);
    dpa_tf fb = *f, gb = *g;
    if (fb.kind != TF_PL) fb.d = 0;
    if (gb.kind != TF_PL) gb.d = 0;
    dpa_tf_opts ot = o; /* closed forms: discretized to the factor budget */
    if (ot.max_vertices > DPA_TF_TENSOR_SIDE) ot.max_vertices = DPA_TF_TENSOR_SIDE;
    if (ot.abs_tol < DPA_TF_TENSOR_ABS_TOL) ot.abs_tol = DPA_TF_TENSOR_ABS_TOL;
    dpa_tf *F = dpa_fdp_as_pl(&fb, &ot, err);
    if (!F) return NULL;
    dpa_tf *G = dpa_fdp_as_pl(&gb, &ot, err);
    if (!G) {
        dpa_tf_free(F);
        return NULL;
    }
    dpa_tf *r = tensor_pl_capped(F, G, &o, err);
    dpa_tf_free(F);
    dpa_tf_free(G);
    if (r && d > 0) {
        dpa_tf *s = dpa_fdp_pl_scale(r, d, err);
        dpa_tf_free(r);
        r = s;
    }
    return r;
}

/* f_{eps,0}^{(x) n} = T(Bin(n, a), Bin(n, 1-a)), a = 1/(1 + e^eps) (GDP
 * §3 / Kairouz et al. 2017): outcome k has likelihood ratio exactly
 * e^{(2k-n) eps}.  The binomial weights come from the ratio recurrence
 * w_{k+1}/w_k = (n-k)/(k+1) e^{-+eps}, walked out from each mode, with the
 * error of every step accumulated (4u for the log, one rounding each for the
 * ratio and the sum), and normalized by their sum. */
static int binom_logw(unsigned long n, double eps, int sign, double *lw, double *le)
{
    double a = 1.0 / (1.0 + exp(sign > 0 ? eps : -eps)); /* P(success) */
    unsigned long m = (unsigned long)floor(((double)n + 1) * a);
    if (m > n) m = n;
    lw[m] = 0;
    le[m] = 0;
    double step_shift = sign > 0 ? -eps : eps;
    for (unsigned long k = m; k < n; k++) {
        double r = (double)(n - k) / (double)(k + 1), lr = log(r);
        lw[k + 1] = lw[k] + lr + step_shift;
        le[k + 1] = le[k] + TF_U + TF_EPS_ELEM * fabs(lr) + 2 * TF_U * (fabs(lw[k + 1]) + eps);
    }
    for (unsigned long k = m; k > 0; k--) {
        double r = (double)(n - k + 1) / (double)k, lr = log(r);
        lw[k - 1] = lw[k] - lr - step_shift;
        le[k - 1] = le[k] + TF_U + TF_EPS_ELEM * fabs(lr) + 2 * TF_U * (fabs(lw[k - 1]) + eps);
    }
    return 1;
}

static dpa_tf *pure_power(double eps, unsigned long n, dpa_error *err)
{
    size_t N = (size_t)n + 1;
    double *lp = malloc(N * sizeof *lp), *ep = malloc(N * sizeof *ep);
    double *lq = malloc(N * sizeof *lq), *eq = malloc(N * sizeof *eq);
    tf_atom *at = malloc(N * sizeof *at);
    if (!lp || !ep || !lq || !eq || !at) {
        free(lp); free(ep); free(lq); free(eq); free(at);
        dpa_error_set(err, DPA_ENOMEM, "tensor_power: out of memory (%zu atoms)", N);
        return NULL;
    }
    /* P = Bin(n, a): success probability a = 1/(1+e^eps); Q = Bin(n, 1-a) */
    binom_logw(n, eps, +1, lp, ep);
    binom_logw(n, eps, -1, lq, eq);
    /* normalizers: sum of e^{lw}, with its relative error */
    double sp = 0, sq = 0, spe = 0, sqe = 0;
    for (size_t k = 0; k < N; k++) {
        double wp = exp(lp[k]), wq = exp(lq[k]);
        sp += wp;
        sq += wq;
        spe += wp * (ep[k] + 2 * TF_U);
        sqe += wq * (eq[k] + 2 * TF_U);
    }
    double rp = spe / sp + (double)N * TF_U, rq = sqe / sq + (double)N * TF_U;
    double lsp = log(sp), lsq = log(sq);
    for (size_t k = 0; k < N; k++) {
        tf_atom *z = &at[k];
        z->p = exp(lp[k] - lsp);
        z->q = exp(lq[k] - lsq);
        /* relative error of each mass: its weight, the normalizer, the two
         * exps and logs */
        double e1 = ep[k] + rp + 2 * TF_EPS_ELEM * (1 + fabs(lp[k] - lsp));
        double e2 = eq[k] + rq + 2 * TF_EPS_ELEM * (1 + fabs(lq[k] - lsq));
        z->rel = 1.01 * (e1 > e2 ? e1 : e2);
        z->key = (2.0 * (double)k - (double)n) * eps; /* exact ratio, one rounding */
        z->kerr = 2 * TF_U * fabs(z->key) + 1e-300;
    }
    free(lp); free(ep); free(lq); free(eq);
    dpa_tf *r = dpa_fdp_from_atoms(at, N, 0.0, 0.0, err);
    free(at);
    return r;
}

dpa_tf *dpa_tf_tensor_power(const dpa_tf *f, unsigned long n, const dpa_tf_opts *opt,
                            dpa_error *err)
{
    if (!f) {
        dpa_error_set(err, DPA_EINVAL, "tensor_power: NULL curve");
        return NULL;
    }
    if (n < 1 || n > POWER_MAX) {
        dpa_error_set(err, DPA_EINVAL, "tensor_power: n must be in [1, 1e9], got %lu", n);
        return NULL;
    }
    if (opts_ok(opt, err)) return NULL;
    dpa_tf_opts o;
    dpa_fdp_opts_resolve(opt, &o);
    if (n == 1) return dpa_tf_copy(f, err);
    /* the f_{0,d} part: 1 - (1 - d)^n, rounded up */
    double dn = 0;
    if (f->kind != TF_PL && f->d > 0) {
        if (f->d >= 1) dn = 1;
        else {
            double t = tf_lower((double)n * log1p(-f->d), 6);
            dn = tf_raise(-expm1(t), 4);
            if (dn > 1) dn = 1;
        }
    }
    if (f->kind == TF_GAUSS) {
        double mu = tf_raise(f->mu * sqrt((double)n), 3);
        dpa_tf *r = dpa_tf_gaussian(mu < MU_MAX ? mu : MU_MAX, err);
        if (r) r->d = dn;
        return r;
    }
    dpa_tf *r = NULL;
    if (f->kind == TF_PURE && (f->eps == 0 || (size_t)n + 1 <= TF_MAX_ATOMS)) {
        if (f->eps == 0) return dpa_tf_approx(0.0, dn, err);
        r = pure_power(f->eps, n, err);
    } else {
        /* repeated squaring of the PL form, coarsened to opt's size */
        dpa_tf fb = *f;
        if (fb.kind != TF_PL) fb.d = 0;
        dpa_tf_opts ot = o;
        if (ot.max_vertices > DPA_TF_TENSOR_SIDE) ot.max_vertices = DPA_TF_TENSOR_SIDE;
        if (ot.abs_tol < DPA_TF_TENSOR_ABS_TOL) ot.abs_tol = DPA_TF_TENSOR_ABS_TOL;
        dpa_tf *base = dpa_fdp_as_pl(&fb, &ot, err);
        if (!base) return NULL;
        unsigned long e = n;
        while (base) {
            if (e & 1) {
                if (!r) r = dpa_tf_copy(base, err);
                else {
                    dpa_tf *t = tensor_pl_capped(r, base, &o, err);
                    dpa_tf_free(r);
                    r = t;
                }
                if (!r) break;
            }
            e >>= 1;
            if (!e) break;
            dpa_tf *b2 = tensor_pl_capped(base, base, &o, err);
            dpa_tf_free(base);
            base = b2;
        }
        dpa_tf_free(base);
        if (!r) return NULL;
    }
    r = cap_vertices(r, &o, err);
    if (r && dn > 0) {
        dpa_tf *s = dpa_fdp_pl_scale(r, dn, err);
        dpa_tf_free(r);
        r = s;
    }
    return r;
}

dpa_tf *dpa_tf_discretize(const dpa_tf *f, const dpa_tf_opts *opt, dpa_error *err)
{
    if (!f) {
        dpa_error_set(err, DPA_EINVAL, "discretize: NULL curve");
        return NULL;
    }
    if (opts_ok(opt, err)) return NULL;
    dpa_tf_opts o;
    dpa_fdp_opts_resolve(opt, &o);
    return cap_vertices(dpa_fdp_as_pl(f, &o, err), &o, err);
}
