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
 * W under A and B (B = e^{-W} A on the finite part), CF Lemma 17 in its
 * sub-probability form (docs/phi.md) gives A(W > x) = M(0)/2 + (1/pi) int_0^inf
 * Im[e^{-itx} M(it)]/t dt, and the same for B with M(it - 1); LT eq 20
 * (CF Lemma 18) combines them:
 *   H(x) = (M(0) - e^x M(-1))/2 + (1/pi) int_0^inf Im[e^{-itx}(M(it) - e^x M(it-1))]/t dt.
 * The integrand is smooth at t = 0 (its limit is finite), so plain
 * Gauss-Legendre panels on [0, T] are used; T is where an envelope of |M|
 * falls below e^{-46} of M(0) (TAIL_LOG).  The node set depends on the
 * query only through the number of panels (chosen from the oscillation
 * frequency |x - mean|), so psi of every leaf is cached per panel count,
 * with everything at a node that does not depend on x (e^{LM + Re psi}, the
 * expm1 of its error bound): a query then costs one sine per node and side.
 * Each leaf's two tilts (r = 0 and r = -1) share their points and are
 * evaluated with one sine per point (dpa_phi_psi_pair), and a composition's
 * reversal (the add direction) reuses the same node sets: its moment
 * function is M(-1 - z), so its sides are the complex conjugates of sides
 * B and A (dpa_phi_gp_H with mirror = 1).
 *
 * Bromwich.  LT Thm 3.3 / eq 37 for the finite part (docs/phi.md, c > 1 only):
 *   H(x) = (1/pi) int_0^inf Re[e^{-(lambda+iw)x} M(lambda+iw) / ((1+lambda+iw)(lambda+iw))] dw,
 * lambda = c - 1 > 0 chosen at the saddle point of
 * e^{-lambda x} M(lambda)/(lambda (1 + lambda)) (where the tilted mean is
 * x + 1/lambda + 1/(1 + lambda)): the integrand then hardly oscillates and
 * the result has a *relative* accuracy, where Gil-Pelaez's absolute error is
 * amplified by e^x (docs/phi.md).
 *
 * Error control (both): node doubling (every panel halved; the difference
 * estimates the coarse rule's error and is charged, times DPA_PHI_SAFETY,
 * to the fine rule), the truncation of [0, T] from the envelope, and a
 * first-order round-off bound carried from every leaf's psi (all sums
 * compensated, phi.h's dpa_phi_ks, so the summation terms are rigorous to
 * first order).  A result is
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
/* Oscillation allowance for the spread of the law: 4 standard deviations.
 * The integrand's frequencies are x - W for W in the law's support; those
 * within |x - mean| + OSC_SD sd get at most OUTER_PHASE per coarse panel,
 * those within 2 OSC_SD sd at most 2 OUTER_PHASE = 6 pi, where 16-point
 * Gauss-Legendre still integrates e^{i theta} to ~1e-9 (its error for a
 * phase span S is about (S/4)^32 / 32!), on the law's mass beyond 4 sd; the
 * halved (fine) rule has half these spans.  The doubling test decides in
 * any case: this only sets the first panel count tried. */
#define OSC_SD 4.0
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

/* (re)prepare every leaf of the ns sides s[0..ns) (ns 1 or 2) at their
 * tilts s[j].r for |t| <= tmax, and their sums.  With two sides each leaf's
 * two tilts share their points (dpa_phi_tilt_prepare_pair), so side_psi2
 * evaluates both with one sine per point. */
static dpa_status sides_prepare(const dpa_phi_comp *c, side *s, int ns, double tmax, dpa_error *err)
{
    for (int j = 0; j < ns; j++) {
        if (!s[j].tl) {
            s[j].tl = calloc(c->nleaves ? c->nleaves : 1, sizeof *s[j].tl);
            if (!s[j].tl) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
        }
        s[j].LM = 0;
        s[j].var = 0;
        s[j].MU = (dd){0, 0};
    }
    for (size_t i = 0; i < c->nleaves; i++) {
        const dpa_phi_leaf *l = c->leaves[i];
        dpa_status st = ns == 2 ? dpa_phi_tilt_prepare_pair(l, s[0].r, s[1].r, tmax, &s[0].tl[i], &s[1].tl[i], err)
                                : dpa_phi_tilt_prepare(l, s[0].r, tmax, &s[0].tl[i], err);
        if (st) return st;
        for (int j = 0; j < ns; j++) {
            const dpa_phi_tilt *tl = &s[j].tl[i];
            s[j].LM += l->count * tl->logM;
            s[j].var += l->count * tl->var;
            if (tl->logM > -INFINITY) dd_add_prod(&s[j].MU, l->count, tl->mean);
        }
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

/* the same for two sides prepared together (sides_prepare with ns = 2) */
static void side_psi2(const dpa_phi_comp *c, const side *s, double t, double complex z[2], double e[2])
{
    z[0] = z[1] = 0;
    double e0 = 0, e1 = 0;
    for (size_t i = 0; i < c->nleaves; i++) {
        const dpa_phi_leaf *l = c->leaves[i];
        double complex p0, p1;
        double q0, q1;
        dpa_phi_psi_pair(l, &s[0].tl[i], &s[1].tl[i], t, &p0, &q0, &p1, &q1);
        z[0] += l->count * p0;
        z[1] += l->count * p1;
        e0 += l->count * q0;
        e1 += l->count * q1;
    }
    e[0] = e0 + 2 * U * cabs(z[0]) * (double)c->nleaves;
    e[1] = e1 + 2 * U * cabs(z[1]) * (double)c->nleaves;
}

/* log envelope of every side at t (ns 1 or 2, as prepared by sides_prepare) */
static void side_env(const dpa_phi_comp *c, const side *s, int ns, double t, double env[2])
{
    env[0] = env[1] = 0;
    for (size_t i = 0; i < c->nleaves; i++) {
        const dpa_phi_leaf *l = c->leaves[i];
        double e0, e1 = 0;
        if (ns == 2) dpa_phi_log_env_pair(l, &s[0].tl[i], &s[1].tl[i], t, &e0, &e1);
        else e0 = dpa_phi_log_env(l, &s[0].tl[i], t);
        env[0] += l->count * e0;
        env[1] += l->count * e1;
    }
}

/* Find the integration range T for the sides (all prepared): the first
 * sample t_j = t0 2^{j/4} from which SCAN_VERIFY further samples keep every
 * side's log envelope below TAIL_LOG; tail[s] estimates
 * int_T^inf e^{env_s(t)} / t^pw dt (relative to e^{LM_s}).  Tilts are
 * re-prepared when t passes their tmax.  Returns 1 when no such T is found
 * below SCAN_MAX_T_SD / sd (the characteristic function does not decay). */
/* find_T's rules kept aside (see there): dropped */
static void find_T_drop(const dpa_phi_comp *c, side *keep, int ns, int *kept)
{
    if (!*kept) return;
    for (int s = 0; s < ns; s++) side_free(&keep[s], c->nleaves);
    *kept = 0;
}

/* give the sides new, empty tilt arrays (their old ones are in keep),
 * carrying over the cached trimmed ranges */
static dpa_status sides_fresh(const dpa_phi_comp *c, side *s, const side *keep, int ns, dpa_error *err)
{
    for (int j = 0; j < ns; j++) {
        s[j].tl = calloc(c->nleaves ? c->nleaves : 1, sizeof *s[j].tl);
        if (!s[j].tl) {
            for (int i = 0; i < j; i++) {
                free(s[i].tl);
                s[i].tl = NULL;
            }
            return dpa_error_set(err, DPA_ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < c->nleaves; i++) {
            dpa_phi_tilt *d = &s[j].tl[i];
            const dpa_phi_tilt *o = &keep[j].tl[i];
            d->trim_leaf = o->trim_leaf;
            d->trim_r = o->trim_r;
            d->trim_a = o->trim_a;
            d->trim_b = o->trim_b;
            memcpy(d->trim_key, o->trim_key, sizeof d->trim_key);
        }
    }
    return DPA_OK;
}

static int find_T(const dpa_phi_comp *c, side *sd_, int ns, double sd, int pw, double *T, double *tail, dpa_error *err,
                  dpa_status *st)
{
    double t0 = 0.5 / sd, f = exp2(1.0 / SCAN_PER_OCTAVE);
    *st = DPA_OK;
    int run = 0, kept = 0;
    double tstart = 0, runt[SCAN_VERIFY + 1], runv[SCAN_VERIFY + 1][2];
    side keep[2];
    for (int j = 0;; j++) {
        double t = t0 * pow(f, j);
        if (t > SCAN_MAX_T_SD / sd) {
            find_T_drop(c, keep, ns, &kept);
            return 1;
        }
        if (c->nleaves && t > sd_[0].tl[0].tmax) {
            double tm = fmax(2 * t, 2 * sd_[0].tl[0].tmax);
            if (run > 0) {
                /* in a verification run every remaining sample (up to
                 * tstart f^SCAN_VERIFY) needs the rule: prepare for all of
                 * them; the current rules cover [0, tstart], so they are
                 * kept aside for the inversion if this run succeeds */
                tm = fmax(tm, tstart * pow(f, SCAN_VERIFY + 1));
                if (!kept && sd_[0].tl[0].tmax >= tstart) {
                    for (int s = 0; s < ns; s++) keep[s] = sd_[s];
                    kept = 1;
                    *st = sides_fresh(c, sd_, keep, ns, err);
                    if (*st) {
                        find_T_drop(c, keep, ns, &kept);
                        return 1;
                    }
                }
            }
            *st = sides_prepare(c, sd_, ns, tm, err);
            if (*st == DPA_ENUMERIC) *st = DPA_OK; /* too costly: not certified */
            if (*st) {
                find_T_drop(c, keep, ns, &kept);
                return 1;
            }
        }
        double env[2];
        side_env(c, sd_, ns, t, env);
        double em = ns == 2 ? fmax(env[0], env[1]) : env[0];
        if (em <= TAIL_LOG) {
            if (run == 0) tstart = t;
            runt[run] = t;
            runv[run][0] = env[0];
            runv[run][1] = env[1];
            if (++run > SCAN_VERIFY) break;
        } else {
            run = 0;
            find_T_drop(c, keep, ns, &kept); /* kept for a run that failed */
        }
    }
    *T = tstart;
    if (kept) { /* the rules from before this run: back in place */
        for (int s = 0; s < ns; s++) {
            side_free(&sd_[s], c->nleaves);
            sd_[s] = keep[s];
        }
    }
    /* tail: left Riemann sums on the run's samples (an upper bound if the
     * envelope is non-increasing), plus the last sample's value over 14
     * octaves of log t (pw = 1; e^{env}/t for pw = 2): beyond 1e6 T is
     * ignored */
    for (int s = 0; s < ns; s++) {
        double sum = 0;
        for (int j = 0; j < SCAN_VERIFY; j++) sum += exp(runv[j][s]) * (runt[j + 1] - runt[j]) / pow(runt[j], pw);
        double e = exp(runv[SCAN_VERIFY][s]), t = runt[SCAN_VERIFY];
        sum += pw == 1 ? e * 14.0 : e / t;
        tail[s] = sum / M_PI;
    }
    return 0;
}

/* ------------------------------------------------------------------ Gil-Pelaez */

/* One outer node set (a panel count): per node the quantities that do not
 * depend on x, so that a query costs one sine per node and side.  Side A
 * (r = 0) and B (r = -1) of the composition as built. */
typedef struct nodeset {
    size_t n;
    double *t, *wt;           /* node, weight / (pi t) */
    double *f[2];             /* wt e^{LM + Re psi} per side (0 on underflow) */
    double *l[2];             /* LM + Re psi per side (log of f / wt) */
    double *im[2];            /* Im psi per side */
    double *em[2];            /* expm1 of the psi error bound per side */
} nodeset;

struct dpa_phi_gp {
    dpa_phi_comp c;
    side s[2];                /* r = 0 (A), r = -1 (B) */
    double sd, T, tail[2];
    int zero;                 /* no finite mass: H = 0 */
    int scan_failed;
    double gx[DPA_PHI_GL_N], gw[DPA_PHI_GL_N];
    nodeset *lev[GP_LEVELS];  /* level j: gp_panels(j) panels */
};

static void nodeset_free(nodeset *ns)
{
    if (!ns) return;
    free(ns->t);
    free(ns->wt);
    for (int j = 0; j < 2; j++) {
        free(ns->f[j]);
        free(ns->l[j]);
        free(ns->im[j]);
        free(ns->em[j]);
    }
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

void dpa_phi_gp_moments(const dpa_phi_gp *g, int mirror, double logm[2], double mean[2], double var[2])
{
    /* mirror: side A' is side B reflected (W -> -W), side B' is side A reflected */
    for (int j = 0; j < 2; j++) {
        const side *s = &g->s[mirror ? 1 - j : j];
        logm[j] = s->LM;
        mean[j] = mirror ? -(s->MU.hi + s->MU.lo) : s->MU.hi + s->MU.lo;
        var[j] = s->var;
    }
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
    if (sides_prepare(c, g->s, 2, -1, err)) goto fail;
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
    dpa_status st = sides_prepare(c, g->s, 2, 12.0 / g->sd, err);
    if (st == DPA_ENUMERIC) { /* the inner rules cannot be certified: not certified */
        g->scan_failed = 1;
        return g;
    }
    if (st) goto fail;
    if (find_T(c, g->s, 2, g->sd, 1, &g->T, g->tail, err, &st)) {
        if (st) goto fail;
        g->scan_failed = 1;
        return g;
    }
    /* the inner rules must cover [0, T]; rules designed for a much larger
     * range (the scan's guesses) cost more points: rebuild those */
    if (c->nleaves && (g->s[0].tl[0].tmax < g->T || g->s[0].tl[0].tmax > 1.25 * g->T)) {
        st = sides_prepare(c, g->s, 2, g->T, err);
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
    int bad = !ns->t || !ns->wt;
    for (int s = 0; s < 2; s++) {
        ns->f[s] = malloc(n * sizeof *ns->f[s]);
        ns->l[s] = malloc(n * sizeof *ns->l[s]);
        ns->im[s] = malloc(n * sizeof *ns->im[s]);
        ns->em[s] = malloc(n * sizeof *ns->em[s]);
        bad = bad || !ns->f[s] || !ns->l[s] || !ns->im[s] || !ns->em[s];
    }
    if (bad) goto nomem;
    double h = g->T / (double)P;
    for (size_t p = 0; p < P; p++)
        for (int i = 0; i < DPA_PHI_GL_N; i++) {
            size_t k = p * DPA_PHI_GL_N + i;
            double t = h * ((double)p + 0.5 + 0.5 * g->gx[i]);
            double complex z[2];
            double e[2];
            side_psi2(&g->c, g->s, t, z, e);
            ns->t[k] = t;
            ns->wt[k] = 0.5 * h * g->gw[i] / (M_PI * t);
            for (int s = 0; s < 2; s++) {
                ns->l[s][k] = g->s[s].LM + creal(z[s]);
                ns->f[s][k] = ns->wt[k] * exp(ns->l[s][k]);
                ns->im[s][k] = cimag(z[s]);
                ns->em[s][k] = expm1(e[s]);
            }
        }
    g->lev[j] = ns;
    return ns;
nomem:
    nodeset_free(ns);
    dpa_error_set(err, DPA_ENOMEM, "out of memory");
    return NULL;
}

/* The oriented view of the two sides for a query: mirror = 0 is the
 * composition as built; mirror = 1 its reversal (the add direction of a
 * remove-direction composition): M'(z) = M(-1 - z), so side A' at t is the
 * complex conjugate of side B at t, and side B' that of side A. */
typedef struct view {
    int src[2];     /* source side of A' and B' */
    double sg;      /* +1, or -1 for the conjugate */
    double LM[2];   /* log masses of A' and B' */
    double m[2];    /* MU' - x: sg * (MU_src - sg x) */
} view;

static view gp_view(const dpa_phi_gp *g, int mirror, double x)
{
    view v;
    v.sg = mirror ? -1.0 : 1.0;
    for (int j = 0; j < 2; j++) {
        v.src[j] = mirror ? 1 - j : j;
        v.LM[j] = g->s[v.src[j]].LM;
        v.m[j] = v.sg * dd_minus(g->s[v.src[j]].MU, v.sg * x);
    }
    return v;
}

/* |log f| beyond which the e^x factor is applied inside the exponential
 * (no overflow of e^x, no loss of an underflowed f) */
#define EXP_SPLIT 600.0

/* the Gil-Pelaez sum on one node set: value and round-off bound */
static double gp_sum(const nodeset *ns, const view *v, double x, double *rerr)
{
    const int a = v->src[0], b = v->src[1];
    const double sg = v->sg, ma = v->m[0], mb = v->m[1];
    const double *fa = ns->f[a], *fb = ns->f[b], *lb = ns->l[b], *ia = ns->im[a], *ib = ns->im[b];
    const double *ea = ns->em[a], *eb = ns->em[b];
    double ex = exp(x);
    int split = fabs(x) > EXP_SPLIT;
    dpa_phi_ks sa = {0, 0}, sb = {0, 0};
    double ra = 0, rb = 0, aa = 0, ab = 0;
    for (size_t k = 0; k < ns->n; k++) {
        double t = ns->t[k];
        double tha = t * ma + sg * ia[k], thb = t * mb + sg * ib[k];
        /* B' carries e^x: wt e^{l + x}, as e^x times the stored wt e^l (2u
         * more than one exp, in the 8u below) unless that could under- or
         * overflow */
        double fbx = (split || lb[k] < -EXP_SPLIT) ? ns->wt[k] * exp(lb[k] + x) : ex * fb[k];
        double va = fa[k] * sin(tha), vb = fbx * sin(thb);
        dpa_phi_ks_add(&sa, va);
        dpa_phi_ks_add(&sb, vb);
        /* |delta e^psi| <= |e^psi| (e^{err} - 1); the phase to u (|theta| + 4),
         * the magnitude to 4u (8u with the e^x factor) */
        ra += fa[k] * (ea[k] + U * (fabs(tha) + 4));
        rb += fbx * (eb[k] + U * (fabs(thb) + 8));
        aa += fabs(va);
        ab += fabs(vb);
    }
    double la = v->LM[0], lbx = v->LM[1] + x;
    double half = 0.5 * (exp(la) - exp(lbx));
    /* the compensated sums: (2u + 2n u^2) sum |terms| (dpa_phi_ks); the
     * final combination: 2u of its parts */
    double n = (double)ns->n;
    *rerr = ra + rb + (2 * U + 2 * n * U * U) * (aa + ab) + 2 * U * (exp(la) + exp(lbx) + fabs(sa.s) + fabs(sb.s));
    return half + sa.s - sb.s;
}

/* panel count needed at x: the phase of e^{-it(x - mean)} (plus OSC_SD sd of
 * spread) changes by at most OUTER_PHASE per panel */
static double gp_need(const dpa_phi_gp *g, const view *v)
{
    return g->T * (fmax(fabs(v->m[0]), fabs(v->m[1])) + OSC_SD * g->sd) / OUTER_PHASE;
}

dpa_status dpa_phi_gp_H(dpa_phi_gp *g, double x, int mirror, double xlev, dpa_phi_inv *out, dpa_error *err)
{
    memset(out, 0, sizeof *out);
    if (g->zero) {
        out->certified = 1;
        return DPA_OK;
    }
    view v = gp_view(g, mirror, x);
    if (g->scan_failed || v.LM[1] + x > 700) return DPA_OK; /* not certified */
    double need = gp_need(g, &v);
    if (isfinite(xlev)) {
        view vl = gp_view(g, mirror, xlev);
        need = fmax(need, gp_need(g, &vl));
    }
    int j = 0;
    while (j + 2 < GP_LEVELS && (double)gp_panels(j) < need) j++;
    for (; j + 2 < GP_LEVELS && gp_panels(j + 2) <= MAX_PANELS; j++) {
        nodeset *c = gp_level(g, j, err), *f = c ? gp_level(g, j + 2, err) : NULL;
        if (!f) return err ? err->status : DPA_ENOMEM;
        double rc, rf;
        double vc = gp_sum(c, &v, x, &rc), vf = gp_sum(f, &v, x, &rf);
        double d = fabs(vf - vc);
        out->value = vf;
        out->quad_err = DPA_PHI_SAFETY * d;
        out->round_err = rf;
        out->trunc_err = exp(v.LM[0]) * g->tail[v.src[0]] + exp(v.LM[1] + x) * g->tail[v.src[1]];
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
    dpa_status st = sides_prepare(c, s, 1, -1, err);
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
    if ((st = sides_prepare(c, &s, 1, 12.0 / sd, err))) goto done;
    double W, tail;
    if (find_T(c, &s, 1, sd, 2, &W, &tail, err, &st)) goto done;
    if (s.tl && c->nleaves && (s.tl[0].tmax < W || s.tl[0].tmax > 1.25 * W))
        if ((st = sides_prepare(c, &s, 1, W, err))) goto done;
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
