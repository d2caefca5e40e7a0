/* Inversion of the composed characteristic function: Gil-Pelaez (CF Lemma
 * 17) and, independently, the Bromwich integral (LT eq 37).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Both evaluate the hockey-stick value of the composed *finite* law,
 *   H(x) = E_A[(1 - e^{x - W})_+ ; W finite],
 * for a composition whose every mixture term has a continuous factor (the
 * caller guarantees a smooth leaf, phi.h), from
 *   log M(r + it) = sum_i k_i (log M_i(r) + i t m_i(r) + psi_i(r; t)).
 *
 * Gil-Pelaez.  With F_A, F_B the (sub-probability) distribution functions of
 * W under A and B (B = e^{-W} A on the finite part), CF Lemma 17 in MATH.md
 * §2's sub-probability form gives A(W > x) = M(0)/2 + (1/pi) int_0^inf
 * Im[e^{-itx} M(it)]/t dt, and the same for B with M(it - 1); LT eq 20
 * (CF Lemma 18) combines them:
 *   H(x) = (M(0) - e^x M(-1))/2 + (1/pi) int_0^inf Im[e^{-itx}(M(it) - e^x M(it-1))]/t dt.
 * The integrand is smooth at t = 0 (its limit is finite), so plain
 * Gauss-Legendre panels on [0, T] are used; T is where an envelope of |M|
 * falls below e^{-46} of M(0) (TAIL_LOG).  The node set depends on the
 * query only through the number of panels (chosen from the oscillation
 * frequency |x - mean|), so psi of every leaf is cached per panel count:
 * a query then costs one sin and one exp per node.
 *
 * Bromwich.  LT Thm 3.3 / eq 37 for the finite part (MATH.md §2, c > 1 only):
 *   H(x) = (1/pi) int_0^inf Re[e^{-(lambda+iw)x} M(lambda+iw) / ((1+lambda+iw)(lambda+iw))] dw,
 * lambda = c - 1 > 0 chosen at the saddle point of
 * e^{-lambda x} M(lambda)/(lambda (1 + lambda)) (where the tilted mean is
 * x + 1/lambda + 1/(1 + lambda)): the integrand then hardly oscillates and
 * the result has a *relative* accuracy, where Gil-Pelaez's absolute error is
 * amplified by e^x (MATH.md §8).
 *
 * Error control (both): node doubling (every panel halved; the difference
 * estimates the coarse rule's error and is charged, times DPA_PHI_SAFETY,
 * to the fine rule), the truncation of [0, T] from the envelope, and a
 * first-order round-off bound carried from every leaf's psi.  A result is
 * "certified" when the doubling difference is small (ACCEPT_REL of the
 * value, or ACCEPT_ABS); otherwise panels are doubled up to MAX_PANELS. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "phi/phi.h"
#include "num/num.h"

#define U DPA_UNIT_ROUNDOFF
/* Integration range: |M(it)| / M(0) below e^{-46} ~ 1e-20 (relative to the
 * masses, ~1e4 times below the round-off of the result). */
#define TAIL_LOG (-46.0)
/* Envelope samples per octave and samples beyond T that must stay below
 * TAIL_LOG (a check of monotone decay). */
#define SCAN_PER_OCTAVE 4
#define SCAN_VERIFY 8
/* Give up when T exceeds this many standard deviations' reciprocal. */
#define SCAN_MAX_T_SD 1e7
/* Largest phase change of e^{-it(x - mean)} over one outer panel: 3 pi
 * (16-point Gauss-Legendre integrates e^{i theta} over 3 pi to ~1e-15; the
 * halved rule to ~1e-30). */
#define OUTER_PHASE (3 * M_PI)
/* Oscillation allowance for the spread of the law: 8 standard deviations. */
#define OSC_SD 8.0
/* Accept the doubling estimate when the coarse and fine rules agree to
 * this relative or absolute size. */
#define ACCEPT_REL 1e-3
#define ACCEPT_ABS 1e-13
#define MAX_PANELS (1 << 14)
#define MIN_PANELS 4
/* Panel-count levels cached by the Gil-Pelaez state: P_j = 4, 6, 8, 12,
 * 16, 24, ... (P_{j+2} = 2 P_j, so level j+2 is level j with every panel
 * halved: the doubling partner), at most 1.41 times the panels needed. */
#define GP_LEVELS 24


/* (s - x) rounded once */
static double dd_minus(dd s, double x)
{
    double t = s.hi - x;
    return t + s.lo;
}

/* ------------------------------------------------------------------ shared */

typedef struct side {
    double r;              /* tilt: 0 (A), -1 (B), lambda (Bromwich) */
    dpa_phi_tilt *tl;      /* one per leaf */
    double LM, var;        /* sum k log M_i(r), sum k var_i */
    dd MU;                 /* sum k mean_i */
} side;

static void side_free(side *s, size_t n)
{
    if (!s->tl) return;
    for (size_t i = 0; i < n; i++) dpa_phi_tilt_clear(&s->tl[i]);
    free(s->tl);
    s->tl = NULL;
}

/* (re)prepare every leaf of side s at tilt s->r for |t| <= tmax; sums */
static dpa_status side_prepare(const dpa_phi_comp *c, side *s, double tmax, dpa_error *err)
{
    if (!s->tl) {
        s->tl = calloc(c->nleaves ? c->nleaves : 1, sizeof *s->tl);
        if (!s->tl) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    }
    s->LM = 0;
    s->var = 0;
    s->MU = (dd){0, 0};
    for (size_t i = 0; i < c->nleaves; i++) {
        const dpa_phi_leaf *l = c->leaves[i];
        dpa_status st = dpa_phi_tilt_prepare(l, s->r, tmax, &s->tl[i], err);
        if (st) return st;
        s->LM += l->count * s->tl[i].logM;
        s->var += l->count * s->tl[i].var;
        if (s->tl[i].logM > -INFINITY) dd_add_prod(&s->MU, l->count, s->tl[i].mean);
    }
    return DPA_OK;
}

/* sum_i k_i psi_i(t) and its error bound */
static double complex side_psi(const dpa_phi_comp *c, const side *s, double t, double *err)
{
    double complex z = 0;
    double e = 0;
    for (size_t i = 0; i < c->nleaves; i++) {
        const dpa_phi_leaf *l = c->leaves[i];
        double ei;
        z += l->count * dpa_phi_psi(l, &s->tl[i], t, &ei);
        e += l->count * ei;
    }
    if (err) *err = e + 2 * U * cabs(z) * (double)c->nleaves;
    return z;
}

static double side_env(const dpa_phi_comp *c, const side *s, double t)
{
    double e = 0;
    for (size_t i = 0; i < c->nleaves; i++) e += c->leaves[i]->count * dpa_phi_log_env(c->leaves[i], &s->tl[i], t);
    return e;
}

/* Find the integration range T for the sides (all prepared): the first
 * sample t_j = t0 2^{j/4} from which SCAN_VERIFY further samples keep every
 * side's log envelope below TAIL_LOG; tail[s] estimates
 * int_T^inf e^{env_s(t)} / t^pw dt (relative to e^{LM_s}).  Tilts are
 * re-prepared when t passes their tmax.  Returns 1 when no such T is found
 * below SCAN_MAX_T_SD / sd (the characteristic function does not decay). */
static int find_T(const dpa_phi_comp *c, side *sd_, int ns, double sd, int pw, double *T, double *tail, dpa_error *err,
                  dpa_status *st)
{
    double t0 = 0.5 / sd, f = exp2(1.0 / SCAN_PER_OCTAVE);
    *st = DPA_OK;
    int run = 0;
    double tstart = 0;
    for (int j = 0;; j++) {
        double t = t0 * pow(f, j);
        if (t > SCAN_MAX_T_SD / sd) return 1;
        for (int s = 0; s < ns; s++)
            if (t > sd_[s].tl[0].tmax && c->nleaves) {
                double tm = fmax(2 * t, 2 * sd_[s].tl[0].tmax);
                *st = side_prepare(c, &sd_[s], tm, err);
                if (*st == DPA_ENUMERIC) *st = DPA_OK; /* too costly: not certified */
                if (*st) return 1;
            }
        double em = -INFINITY;
        for (int s = 0; s < ns; s++) em = fmax(em, side_env(c, &sd_[s], t));
        if (em <= TAIL_LOG) {
            if (run == 0) tstart = t;
            if (++run > SCAN_VERIFY) break;
        } else {
            run = 0;
        }
    }
    *T = tstart;
    /* tail: left Riemann sums on the samples (an upper bound if the envelope
     * is non-increasing), plus the last sample's value over 14 octaves of
     * log t (pw = 1; e^{env}/t for pw = 2): beyond 1e6 T is ignored */
    for (int s = 0; s < ns; s++) {
        double sum = 0, t = tstart, e = 0;
        for (int j = 0; j < SCAN_VERIFY; j++) {
            double tn = t * f;
            e = exp(side_env(c, &sd_[s], t));
            sum += e * (tn - t) / pow(t, pw);
            t = tn;
        }
        e = exp(side_env(c, &sd_[s], t));
        sum += pw == 1 ? e * 14.0 : e / t;
        tail[s] = sum / M_PI;
    }
    return 0;
}

/* ------------------------------------------------------------------ Gil-Pelaez */

typedef struct nodeset {
    size_t n;
    double *t, *wt;           /* node, weight / (pi t) */
    double complex *pa, *pb;  /* sum k psi at the node, sides A and B */
    double *ea, *eb;          /* their error bounds */
} nodeset;

struct dpa_phi_gp {
    dpa_phi_comp c;
    side s[2];                /* r = 0 (A), r = -1 (B) */
    double sd, T, tail[2];
    int zero;                 /* no finite mass: H = 0 */
    int scan_failed;
    double gx[DPA_PHI_GL_N], gw[DPA_PHI_GL_N];
    nodeset *lev[GP_LEVELS];  /* level j: MIN_PANELS << j panels */
};

static void nodeset_free(nodeset *ns)
{
    if (!ns) return;
    free(ns->t);
    free(ns->wt);
    free(ns->pa);
    free(ns->pb);
    free(ns->ea);
    free(ns->eb);
    free(ns);
}

void dpa_phi_gp_free(dpa_phi_gp *g)
{
    if (!g) return;
    side_free(&g->s[0], g->c.nleaves);
    side_free(&g->s[1], g->c.nleaves);
    for (int j = 0; j < GP_LEVELS; j++) nodeset_free(g->lev[j]);
    free(g);
}

double dpa_phi_gp_sd(const dpa_phi_gp *g) { return g->sd; }

double dpa_phi_gp_range(const dpa_phi_gp *g, double tail[2])
{
    if (tail) {
        tail[0] = g->tail[0];
        tail[1] = g->tail[1];
    }
    return g->scan_failed ? 0 : g->T;
}


dpa_phi_gp *dpa_phi_gp_new(const dpa_phi_comp *c, dpa_error *err)
{
    dpa_phi_gp *g = calloc(1, sizeof *g);
    if (!g) {
        dpa_error_set(err, DPA_ENOMEM, "out of memory");
        return NULL;
    }
    g->c = *c;
    g->s[0].r = 0;
    g->s[1].r = -1;
    if (dpa_phi_gl(g->gx, g->gw, err)) goto fail;
    for (int s = 0; s < 2; s++)
        if (side_prepare(c, &g->s[s], -1, err)) goto fail;
    if (g->s[0].LM == -INFINITY || g->s[1].LM == -INFINITY) {
        g->zero = 1; /* (a finite A-mass of 0 makes the B-mass 0 too) */
        return g;
    }
    g->sd = sqrt(fmax(g->s[0].var, g->s[1].var));
    if (!(g->sd > 0) || !isfinite(g->sd)) {
        dpa_error_set(err, DPA_ENUMERIC, "phi: the composed privacy loss has no spread (sd = %g)", g->sd);
        goto fail;
    }
    /* first guess of the range for the inner rules: 12 sd^-1 (a Gaussian
     * composition's |M| is e^{-72} there); find_T extends it */
    dpa_status st;
    for (int s = 0; s < 2; s++) {
        st = side_prepare(c, &g->s[s], 12.0 / g->sd, err);
        if (st == DPA_ENUMERIC) { /* the inner rules cannot be certified: not certified */
            g->scan_failed = 1;
            return g;
        }
        if (st) goto fail;
    }
    if (find_T(c, g->s, 2, g->sd, 1, &g->T, g->tail, err, &st)) {
        if (st) goto fail;
        g->scan_failed = 1;
        return g;
    }
    /* the inner rules must cover [0, T]; rules designed for a much larger
     * range (the scan's guesses) cost more points: rebuild those */
    for (int s = 0; s < 2; s++)
        if (g->s[s].tl[0].tmax < g->T || g->s[s].tl[0].tmax > 1.25 * g->T) {
            st = side_prepare(c, &g->s[s], g->T, err);
            if (st == DPA_ENUMERIC) {
                g->scan_failed = 1;
                return g;
            }
            if (st) goto fail;
        }
    return g;
fail:
    dpa_phi_gp_free(g);
    return NULL;
}

static size_t gp_panels(int j)
{
    return (j % 2 == 0) ? (size_t)MIN_PANELS << (j / 2) : (size_t)(3 * MIN_PANELS / 2) << (j / 2);
}

static nodeset *gp_level(dpa_phi_gp *g, int j, dpa_error *err)
{
    if (g->lev[j]) return g->lev[j];
    size_t P = gp_panels(j), n = P * DPA_PHI_GL_N;
    nodeset *ns = calloc(1, sizeof *ns);
    if (!ns) goto nomem;
    ns->n = n;
    ns->t = malloc(n * sizeof *ns->t);
    ns->wt = malloc(n * sizeof *ns->wt);
    ns->pa = malloc(n * sizeof *ns->pa);
    ns->pb = malloc(n * sizeof *ns->pb);
    ns->ea = malloc(n * sizeof *ns->ea);
    ns->eb = malloc(n * sizeof *ns->eb);
    if (!ns->t || !ns->wt || !ns->pa || !ns->pb || !ns->ea || !ns->eb) goto nomem;
    double h = g->T / (double)P;
    for (size_t p = 0; p < P; p++)
        for (int i = 0; i < DPA_PHI_GL_N; i++) {
            size_t k = p * DPA_PHI_GL_N + i;
            double t = h * ((double)p + 0.5 + 0.5 * g->gx[i]);
            ns->t[k] = t;
            ns->wt[k] = 0.5 * h * g->gw[i] / (M_PI * t);
            ns->pa[k] = side_psi(&g->c, &g->s[0], t, &ns->ea[k]);
            ns->pb[k] = side_psi(&g->c, &g->s[1], t, &ns->eb[k]);
        }
    g->lev[j] = ns;
    return ns;
nomem:
    nodeset_free(ns);
    dpa_error_set(err, DPA_ENOMEM, "out of memory");
    return NULL;
}

/* the Gil-Pelaez sum on one node set: value and round-off bound */
static double gp_sum(const dpa_phi_gp *g, const nodeset *ns, double x, double *rerr)
{
    double ma = dd_minus(g->s[0].MU, x), mb = dd_minus(g->s[1].MU, x);
    double la = g->s[0].LM, lb = g->s[1].LM + x;
    double sa = 0, sb = 0, ra = 0, rb = 0, aa = 0, ab = 0;
    for (size_t k = 0; k < ns->n; k++) {
        double t = ns->t[k], w = ns->wt[k];
        double tha = t * ma + cimag(ns->pa[k]), thb = t * mb + cimag(ns->pb[k]);
        double fa = w * exp(la + creal(ns->pa[k])), fb = w * exp(lb + creal(ns->pb[k]));
        double va = fa * sin(tha), vb = fb * sin(thb);
        sa += va;
        sb += vb;
        /* |delta e^{psi}| <= |e^psi| (e^{err} - 1); the phase to u (|theta| + 4) */
        ra += fa * (expm1(ns->ea[k]) + U * (fabs(tha) + 4));
        rb += fb * (expm1(ns->eb[k]) + U * (fabs(thb) + 4));
        aa += fabs(va);
        ab += fabs(vb);
    }
    double half = 0.5 * (exp(la) - exp(lb));
    *rerr = ra + rb + (double)ns->n * U * (aa + ab) + 2 * U * (exp(la) + exp(lb));
    return half + sa - sb;
}

dpa_status dpa_phi_gp_H(dpa_phi_gp *g, double x, dpa_phi_inv *out, dpa_error *err)
{
    memset(out, 0, sizeof *out);
    if (g->zero) {
        out->certified = 1;
        return DPA_OK;
    }
    if (g->scan_failed || g->s[1].LM + x > 700) return DPA_OK; /* not certified */
    double om = fmax(fabs(dd_minus(g->s[0].MU, x)), fabs(dd_minus(g->s[1].MU, x))) + OSC_SD * g->sd;
    double need = g->T * om / OUTER_PHASE;
    int j = 0;
    while (j + 2 < GP_LEVELS && (double)gp_panels(j) < need) j++;
    for (; j + 2 < GP_LEVELS && gp_panels(j + 2) <= MAX_PANELS; j++) {
        nodeset *c = gp_level(g, j, err), *f = c ? gp_level(g, j + 2, err) : NULL;
        if (!f) return err ? err->status : DPA_ENOMEM;
        double rc, rf;
        double vc = gp_sum(g, c, x, &rc), vf = gp_sum(g, f, x, &rf);
        double d = fabs(vf - vc);
        out->value = vf;
        out->quad_err = DPA_PHI_SAFETY * d;
        out->round_err = rf;
        out->trunc_err = exp(g->s[0].LM) * g->tail[0] + exp(g->s[1].LM + x) * g->tail[1];
        out->nodes = c->n + f->n;
        if (d <= ACCEPT_REL * fabs(vf) + ACCEPT_ABS * (1 + exp(x)) + rc + rf) {
            out->certified = 1;
            return DPA_OK;
        }
    }
    return DPA_OK; /* doubling never settled: not certified */
}

/* ------------------------------------------------------------------ Bromwich */

/* derivative of the saddle objective: MU(lambda) - x - 1/lambda - 1/(1+lambda) */
static dpa_status saddle_g(const dpa_phi_comp *c, side *s, double lam, double x, double *g, dpa_error *err)
{
    s->r = lam;
    dpa_status st = side_prepare(c, s, -1, err);
    if (st) return st;
    *g = dd_minus(s->MU, x) - 1 / lam - 1 / (1 + lam);
    return DPA_OK;
}

dpa_status dpa_phi_bromwich_H(const dpa_phi_comp *c, double x, dpa_phi_inv *out, dpa_error *err)
{
    memset(out, 0, sizeof *out);
    side s;
    memset(&s, 0, sizeof s);
    double gx[DPA_PHI_GL_N], gw[DPA_PHI_GL_N];
    dpa_status st = dpa_phi_gl(gx, gw, err);
    if (st) return st;
    /* the saddle point: g increasing in lambda (log M convex, -log lambda
     * convex dominates -log(1 + lambda)); bisection on log lambda to 1e-3
     * relative (any lambda > 0 is correct; the saddle only conditions) */
    double lo = 1e-6, hi = 1, g;
    if ((st = saddle_g(c, &s, lo, x, &g, err))) goto done;
    if (s.LM == -INFINITY) { /* no finite mass */
        out->certified = 1;
        goto done;
    }
    if (g >= 0) hi = lo;
    else {
        for (int i = 0; i < 60; i++) {
            if ((st = saddle_g(c, &s, hi, x, &g, err))) goto done;
            if (g > 0 || !isfinite(s.LM)) break;
            lo = hi;
            hi *= 2;
        }
        while (hi / lo > 1.001) {
            double mid = sqrt(lo * hi);
            if ((st = saddle_g(c, &s, mid, x, &g, err))) goto done;
            if (g > 0) hi = mid;
            else lo = mid;
        }
    }
    double lam = hi;
    if ((st = saddle_g(c, &s, lam, x, &g, err))) goto done;
    if (!isfinite(s.LM)) goto done; /* not certified */
    double sd = sqrt(s.var);
    if (!(sd > 0)) {
        st = dpa_error_set(err, DPA_ENUMERIC, "phi: the tilted privacy loss has no spread");
        goto done;
    }
    out->lambda = lam;
    if ((st = side_prepare(c, &s, 12.0 / sd, err))) goto done;
    double W, tail;
    if (find_T(c, &s, 1, sd, 2, &W, &tail, err, &st)) goto done;
    if (s.tl && c->nleaves && (s.tl[0].tmax < W || s.tl[0].tmax > 1.25 * W))
        if ((st = side_prepare(c, &s, W, err))) goto done;
    double E0 = s.LM - lam * x, mx = dd_minus(s.MU, x);
    double h = fmin(OUTER_PHASE / (fabs(mx) + OSC_SD * sd), W / MIN_PANELS);
    out->trunc_err = exp(E0) * tail;
    /* panels: geometric from lambda/2 near 0 (the factor 1/(lambda + iw) has
     * a pole at distance lambda), then width h; level 0 and its halving */
    double vals[2] = {0, 0}, rerr[2] = {0, 0};
    size_t nodes = 0;
    for (int lev = 0; lev < 8; lev++) {
        for (int f = 0; f < 2; f++) {
            double v = 0, re = 0, av = 0, a = 0, w0 = fmin(0.5 * lam, h);
            size_t np = 0;
            while (a < W) {
                double b = a == 0 ? w0 : fmin(a + h, 2 * a);
                if (b > W) b = W;
                int parts = 1 << (lev + f);
                for (int pp = 0; pp < parts; pp++) {
                    double pa = a + (b - a) * pp / parts, pb = a + (b - a) * (pp + 1) / parts;
                    double mid = 0.5 * (pa + pb), half = 0.5 * (pb - pa);
                    for (int i = 0; i < DPA_PHI_GL_N; i++) {
                        double w = mid + half * gx[i], e;
                        double complex ps = side_psi(c, &s, w, &e);
                        double complex den = (1 + lam + I * w) * (lam + I * w);
                        double th = w * mx + cimag(ps);
                        double mag = exp(E0 + creal(ps)) / cabs(den);
                        double ph = th - carg(den);
                        double wt = half * gw[i] / M_PI;
                        double term = wt * mag * cos(ph);
                        v += term;
                        av += fabs(term);
                        re += wt * mag * (expm1(e) + U * (fabs(th) + 8));
                        np++;
                    }
                }
                a = b;
                if (np > (size_t)MAX_PANELS * DPA_PHI_GL_N * 4) break;
            }
            vals[f] = v;
            rerr[f] = re + (double)np * U * av;
            nodes += np;
        }
        double d = fabs(vals[1] - vals[0]);
        out->value = vals[1];
        out->quad_err = DPA_PHI_SAFETY * d;
        out->round_err = rerr[1];
        out->nodes = nodes;
        if (d <= ACCEPT_REL * fabs(vals[1]) + rerr[0] + rerr[1] + 1e-300) {
            out->certified = 1;
            break;
        }
    }
done:
    side_free(&s, c->nleaves);
    if (st == DPA_ENUMERIC) { /* a cost cap or an unconverged inner rule: not certified */
        out->certified = 0;
        st = DPA_OK;
    }
    return st;
}
