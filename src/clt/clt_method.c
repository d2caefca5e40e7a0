/* Methods gdp (the central-limit approximation, GDP §3.2) and clt (the
 * Berry-Esseen envelope, GDP eq 10) behind the accountant interface
 * (src/model/method.h).  See docs/clt.md.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gdp: the composition is approximated by mu-GDP, mu from the moment
 *   functionals (dpa_clt_mu), and queried through the exact Gaussian
 *   profile (src/exact/exact.h), tensored with the f_{0,delta0} factor of
 *   approx leaves (GDP eq 13: delta = delta0 + (1 - delta0) delta_G).  An
 *   APPROXIMATION: it can under-state the privacy loss (it does for DP-SGD),
 *   so results carry certified = 0 and a note; the bracket is the
 *   evaluation error of mu and of the profile only.
 * clt: certified bounds from the Berry-Esseen envelope of each direction
 *   (dpa_clt_envelope_delta); eps queries search the envelope's profiles
 *   (upper: smallest eps whose certified upper delta meets the target;
 *   lower: largest eps whose certified lower delta still exceeds it).
 *   Loose (every upper delta is at least ~gamma), so accuracy_met is
 *   usually 0; upper = +inf where delta is below the envelope's floor.
 * Both take compositions of gaussian, gdp, pure, randomized_response,
 * approx and laplace leaves and of Poisson-subsampled or sampled
 * (without replacement) gaussian/gdp leaves; auto never picks them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/method.h"
#include "clt/clt.h"
#include "exact/exact.h"
#include "num/num.h"

#define U DPA_UNIT_ROUNDOFF
/* eps searches of the clt method stop when the bracket is below this
 * relative width (or 1e-12 absolute): far below any printed digit, and
 * each step costs a certified supremum. */
#define CLT_EPS_REL 1e-9
/* The largest eps searched: the envelope's upper delta is evaluated with
 * e^eps clamped there (clt_envelope.c), so beyond it nothing changes. */
#define CLT_EPS_MAX 700.0

typedef struct clt_state {
    dpa_clt_comp comp;
    double accuracy;
    int be;                 /* 1: method clt, 0: method gdp */
    double mu, mu_lo, mu_hi; /* gdp */
    double cor54;            /* the asymptotic mu (GDP Cor 5.4 / Bu et al.) when it applies, else NAN */
    double gamma;            /* dpa_clt_gamma_max: the Berry-Esseen distance, the regime test */
} clt_state;

static dpa_status supports_as(const dpa_leafset *L, const char *name, dpa_error *err)
{
    if (L->zcdp_path[0]) return dpa_method_refuse_zcdp(L, name, err);
    if (L->ra_path[0]) return dpa_method_refuse_ra(L, name, err);
    for (size_t i = 0; i < L->n; i++) {
        dpa_status st = dpa_clt_leaf_supported(&L->v[i], name, err);
        if (st) return st;
    }
    return DPA_OK;
}

static dpa_status gdp_supports(const dpa_leafset *L, const dpa_options *opt, dpa_error *err)
{
    (void)opt;
    return supports_as(L, "gdp", err);
}

static dpa_status clt_supports(const dpa_leafset *L, const dpa_options *opt, dpa_error *err)
{
    (void)opt;
    return supports_as(L, "clt", err);
}

static void clt_destroy(void *state) { free(state); }

static dpa_status create_as(const dpa_leafset *L, const dpa_options *opt, void **state, int be, dpa_error *err)
{
    dpa_status st = supports_as(L, be ? "clt" : "gdp", err);
    if (st) return st;
    clt_state *s = calloc(1, sizeof *s);
    size_t n = L->n;
    dpa_clt_leaf *lv = calloc(n ? n : 1, sizeof *lv);
    double *k = calloc(n ? n : 1, sizeof *k);
    if (!s || !lv || !k) {
        free(s);
        free(lv);
        free(k);
        return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n; i++) {
        k[i] = L->v[i].count;
        if ((st = dpa_clt_leaf_of(&L->v[i], &lv[i], err))) {
            free(s);
            free(lv);
            free(k);
            return st;
        }
    }
    dpa_clt_compose(lv, k, n, &s->comp);
    free(lv);
    free(k);
    s->accuracy = opt->accuracy;
    s->be = be;
    dpa_clt_mu(&s->comp.dir[0], &s->mu, &s->mu_lo, &s->mu_hi);
    s->cor54 = dpa_clt_cor54_mu(&s->comp);
    s->gamma = dpa_clt_gamma_max(&s->comp);
    *state = s;
    return DPA_OK;
}

static dpa_status gdp_create(const dpa_leafset *L, const dpa_options *opt, void **state, dpa_error *err)
{
    return create_as(L, opt, state, 0, err);
}

static dpa_status clt_create(const dpa_leafset *L, const dpa_options *opt, void **state, dpa_error *err)
{
    return create_as(L, opt, state, 1, err);
}

/* ------------------------------------------------------------ gdp --- */

/* The asymptotic mu's source: GDP Cor 5.4 (sampling without replacement)
 * or Bu, Dong, Long, Su 2020 (Poisson subsampling, mu = q sqrt(T (e^{1/sigma^2} - 1))). */
static const char *limit_label(const dpa_clt_comp *c)
{
    if (c->n_poisson && c->n_sample) return "Cor 5.4 + Bu et al.";
    return c->n_poisson ? "Bu et al." : "Cor 5.4";
}

/* The note of a gdp result; `delta` the queried or returned delta.  The
 * regime tag (docs/clt.md §4): outside the CLT regime (gamma above
 * DPA_CLT_REGIME_GAMMA) the estimate was measured up to 16x below the
 * truth; inside it, a delta below gamma is still a tail Berry-Esseen does
 * not control (measured up to 1.4x below). */
static void gdp_note(const clt_state *s, double delta, dpa_result *out)
{
    out->certified = 0;
    size_t cap = sizeof out->note;
    int n = snprintf(out->note, cap,
                     "CLT approximation (GDP Thm 3.4): not a bound; may under-state the privacy loss; mu = %.6g",
                     s->mu);
    if (!isnan(s->cor54) && n > 0 && (size_t)n < cap)
        n += snprintf(out->note + n, cap - (size_t)n, " (%s: %.6g)", limit_label(&s->comp), s->cor54);
    if (n <= 0 || (size_t)n >= cap) return;
    if (s->gamma > DPA_CLT_REGIME_GAMMA)
        snprintf(out->note + n, cap - (size_t)n, "; outside CLT regime (gamma %.3g)", s->gamma);
    else if (delta < s->gamma)
        snprintf(out->note + n, cap - (size_t)n, "; delta < gamma %.3g: tail uncontrolled", s->gamma);
}

void dpa_clt_state_info(const void *state, dpa_clt_info *out)
{
    const clt_state *s = state;
    const dpa_clt_comp *c = &s->comp;
    memset(out, 0, sizeof *out);
    out->mu = s->mu;
    out->mu_lower = s->mu_lo;
    out->mu_upper = s->mu_hi;
    for (int d = 0; d < 2; d++) {
        const dpa_clt_dir *dr = &c->dir[c->symmetric ? 0 : d];
        out->kl[d] = dr->x.m;
        out->kappa2[d] = dr->x.kappa2;
        out->kbar3[d] = dr->x.r_hi;
        out->gamma[d] = dr->identity || dr->gauss ? 0 : fmax(dr->gamma_x, dr->gamma_y);
        out->gamma_envelope[d] = dr->identity || dr->gauss ? 0 : fmax(dr->gamma_env_x, dr->gamma_env_y);
    }
    out->limit_mu = s->cor54;
    out->symmetric = c->symmetric;
    out->clt_regime = s->gamma <= DPA_CLT_REGIME_GAMMA;
}

static dpa_status gdp_epsilon(void *state, double delta, dpa_result *out, dpa_error *err)
{
    (void)err;
    clt_state *s = state;
    const dpa_clt_comp *c = &s->comp;
    gdp_note(s, delta, out);
    /* delta0 + (1 - delta0) delta_G(eps) <= delta  <=>  delta_G(eps) <= delta' */
    double d_min = c->delta0_hi > 0 ? (delta - c->delta0_hi) / (1 - c->delta0_hi) : delta;
    double d_max = c->delta0_lo > 0 ? (delta - c->delta0_lo) / (1 - c->delta0_lo) : delta;
    if (c->delta0_hi > 0) d_min -= 4 * U * fabs(d_min) + 2 * U;
    if (c->delta0_lo > 0) d_max += 4 * U * fabs(d_max) + 2 * U;
    double t;
    if (!(d_min > 0)) out->upper = INFINITY;
    else dpa_exact_epsilon(s->mu_hi, fmin(d_min, 1 - U), &out->upper, &t);
    if (!(d_max > 0)) out->lower = INFINITY;
    else if (d_max >= 1) out->lower = 0;
    else dpa_exact_epsilon(s->mu_lo, d_max, &t, &out->lower);
    if (out->lower > out->upper) out->lower = out->upper;
    out->lower += 0.0;
    out->upper_remove = out->upper_add = out->upper;
    out->binding = DPA_DIR_BOTH;
    if (isinf(out->upper) ? !isinf(out->lower) : out->upper - out->lower > s->accuracy * fmax(1.0, out->upper))
        out->accuracy_met = 0;
    return DPA_OK;
}

static dpa_status gdp_delta(void *state, double eps, int refine, dpa_result *out, dpa_error *err)
{
    (void)err;
    (void)refine;
    clt_state *s = state;
    double up, lo, t;
    dpa_exact_delta(s->mu_hi, eps, &up, &t);
    dpa_exact_delta(s->mu_lo, eps, &t, &lo);
    out->upper = dpa_clt_with_delta0(s->comp.delta0_hi, up, +1);
    out->lower = dpa_clt_with_delta0(s->comp.delta0_lo, lo, -1);
    gdp_note(s, out->upper, out);
    out->upper_remove = out->upper_add = out->upper;
    out->binding = DPA_DIR_BOTH;
    if (out->upper - out->lower > s->accuracy * out->upper + 1e-14) out->accuracy_met = 0;
    return DPA_OK;
}

/* ------------------------------------------------------------ clt --- */

static void clt_note(const clt_state *s, dpa_result *out)
{
    const dpa_clt_dir *d = s->comp.dir;
    if (d[0].identity || (d[0].gauss && d[1].gauss)) {
        snprintf(out->note, sizeof out->note, "exact: the composition is Gaussian (gamma = 0)");
    } else if (s->comp.symmetric) {
        snprintf(out->note, sizeof out->note, "Berry-Esseen envelope (GDP eq 10), gamma = %.4g: certified but loose",
                 d[0].gamma_env_x);
    } else {
        snprintf(out->note, sizeof out->note,
                 "Berry-Esseen envelope (GDP eq 10), gamma under A/B = %.4g/%.4g: certified but loose",
                 d[0].gamma_env_x, d[0].gamma_env_y);
    }
}

/* Where the envelope is vacuous, say so plainly (replaces the note):
 * the smallest delta it can certify at any eps (its floor, the upper delta
 * at eps = CLT_EPS_MAX) or, for delta queries, that it certifies nothing
 * below 1. */
static void clt_vacuous(const clt_state *s, double floor_delta, int eps_query, dpa_result *out)
{
    double g = 0;
    for (int d = 0; d < (s->comp.symmetric ? 1 : 2); d++)
        g = fmax(g, fmax(s->comp.dir[d].gamma_env_x, s->comp.dir[d].gamma_env_y));
    if (eps_query)
        snprintf(out->note, sizeof out->note,
                 "Berry-Esseen envelope vacuous here: gamma = %.4g, no delta below %.4g is certified at any eps "
                 "(use pld)",
                 g, floor_delta);
    else
        snprintf(out->note, sizeof out->note,
                 "Berry-Esseen envelope vacuous here: gamma = %.4g, it certifies only delta <= 1 (use pld)", g);
}

/* The certified upper delta of direction d at eps, delta0 included. */
static double dir_up(const clt_state *s, int d, double eps)
{
    double up, lo;
    dpa_clt_envelope_delta(&s->comp.dir[d], eps, &up, &lo);
    return dpa_clt_with_delta0(s->comp.delta0_hi, up, +1);
}

static double dir_lo(const clt_state *s, int d, double eps)
{
    double up, lo;
    dpa_clt_envelope_delta(&s->comp.dir[d], eps, &up, &lo);
    return dpa_clt_with_delta0(s->comp.delta0_lo, lo, -1);
}

/* A Gaussian or identity direction: the exact eps of delta0 (x) G_mu,
 * mu in [sqrt(V_lo), sqrt(V_hi)] (0 for the identity); dir > 0 the upper
 * bound, dir < 0 the lower. */
static double eps_closed(const clt_state *s, int d, double delta, int dir)
{
    const dpa_clt_comp *c = &s->comp;
    const dpa_clt_dir *dr = &c->dir[d];
    double d0 = dir > 0 ? c->delta0_hi : c->delta0_lo;
    double dd = d0 > 0 ? (delta - d0) / (1 - d0) : delta;
    if (d0 > 0) dd += (dir > 0 ? -1 : 1) * (4 * U * fabs(dd) + 2 * U);
    if (!(dd > 0)) return INFINITY;
    if (dd >= 1 || dr->identity) return 0;
    double mu = dir > 0 ? sqrt(dr->x.v_hi) * (1 + 2 * U) : sqrt(dr->x.v_lo) * (1 - 2 * U), up, lo;
    dpa_exact_epsilon(mu, dd, &up, &lo);
    return dir > 0 ? up : lo;
}

/* Smallest eps >= 0 (to CLT_EPS_REL) whose certified upper delta is <= delta:
 * +inf if none up to CLT_EPS_MAX. The returned point satisfies the test. */
static double eps_upper(const clt_state *s, int d, double delta)
{
    if (s->comp.dir[d].gauss || s->comp.dir[d].identity) return eps_closed(s, d, delta, +1);
    if (dir_up(s, d, 0) <= delta) return 0;
    if (dir_up(s, d, CLT_EPS_MAX) > delta) return INFINITY;
    double fail = 0, pass = 0.25;
    while (pass < CLT_EPS_MAX && dir_up(s, d, pass) > delta) {
        fail = pass;
        pass = fmin(2 * pass, CLT_EPS_MAX);
    }
    while (pass - fail > fmax(1e-12, CLT_EPS_REL * pass)) {
        double mid = fail + (pass - fail) / 2;
        if (dir_up(s, d, mid) <= delta) pass = mid;
        else fail = mid;
    }
    return pass;
}

/* Largest eps (to CLT_EPS_REL) whose certified lower delta still exceeds
 * delta (the true eps is above it); 0 if delta_lo(0) <= delta. */
static double eps_lower(const clt_state *s, int d, double delta)
{
    if (s->comp.dir[d].gauss || s->comp.dir[d].identity) return eps_closed(s, d, delta, -1);
    if (!(dir_lo(s, d, 0) > delta)) return 0;
    double fail = 0, pass = 0.25; /* here "fail" keeps delta_lo > delta */
    while (pass < CLT_EPS_MAX && dir_lo(s, d, pass) > delta) {
        fail = pass;
        pass = fmin(2 * pass, CLT_EPS_MAX);
    }
    if (dir_lo(s, d, pass) > delta) return pass;
    while (pass - fail > fmax(1e-12, CLT_EPS_REL * pass)) {
        double mid = fail + (pass - fail) / 2;
        if (dir_lo(s, d, mid) > delta) fail = mid;
        else pass = mid;
    }
    return fail;
}

static void clt_combine(const clt_state *s, const double up[2], const double lo[2], dpa_result *out)
{
    if (s->comp.symmetric) {
        out->upper = out->upper_remove = out->upper_add = up[0];
        out->lower = lo[0];
        out->binding = DPA_DIR_BOTH;
    } else {
        out->upper_remove = up[0];
        out->upper_add = up[1];
        out->upper = fmax(up[0], up[1]);
        out->lower = fmax(lo[0], lo[1]);
        out->binding = up[0] >= up[1] ? DPA_DIR_REMOVE : DPA_DIR_ADD;
    }
    if (out->lower > out->upper) out->lower = out->upper;
    out->lower += 0.0;
}

static dpa_status clt_epsilon(void *state, double delta, dpa_result *out, dpa_error *err)
{
    (void)err;
    clt_state *s = state;
    clt_note(s, out);
    double up[2] = {0, 0}, lo[2] = {0, 0};
    int nd = s->comp.symmetric ? 1 : 2;
    for (int d = 0; d < nd; d++) {
        up[d] = eps_upper(s, d, delta);
        lo[d] = eps_lower(s, d, delta);
    }
    clt_combine(s, up, lo, out);
    if (isinf(out->upper) && !isinf(out->lower)) {
        double f = 0;
        for (int d = 0; d < nd; d++) f = fmax(f, dir_up(s, d, CLT_EPS_MAX));
        clt_vacuous(s, f, 1, out);
    }
    if (isinf(out->upper) ? !isinf(out->lower) : out->upper - out->lower > s->accuracy * fmax(1.0, out->upper))
        out->accuracy_met = 0;
    return DPA_OK;
}

static dpa_status clt_delta(void *state, double eps, int refine, dpa_result *out, dpa_error *err)
{
    (void)err;
    (void)refine;
    clt_state *s = state;
    clt_note(s, out);
    double up[2] = {0, 0}, lo[2] = {0, 0};
    int nd = s->comp.symmetric ? 1 : 2;
    for (int d = 0; d < nd; d++) {
        double u, l;
        dpa_clt_envelope_delta(&s->comp.dir[d], eps, &u, &l);
        up[d] = dpa_clt_with_delta0(s->comp.delta0_hi, u, +1);
        lo[d] = dpa_clt_with_delta0(s->comp.delta0_lo, l, -1);
    }
    clt_combine(s, up, lo, out);
    if (out->upper >= 1) clt_vacuous(s, 1, 0, out);
    if (out->upper - out->lower > s->accuracy * out->upper + 1e-14) out->accuracy_met = 0;
    return DPA_OK;
}

const dpa_method_ops dpa_method_gdp_ops = {
    DPA_METHOD_GDP, gdp_supports, gdp_create, clt_destroy, gdp_epsilon, gdp_delta, NULL,
};

const dpa_method_ops dpa_method_clt_ops = {
    DPA_METHOD_CLT, clt_supports, clt_create, clt_destroy, clt_epsilon, clt_delta, NULL,
};
