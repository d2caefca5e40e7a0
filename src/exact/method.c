/* The exact method: closed forms, no discretization.  Compositions of
 * Gaussian/GDP leaves (mu = sqrt(sum k mu_i^2), GDP Cor 3.3, evaluated by
 * src/exact/gaussian.c), of pure/randomized_response/approx leaves (the
 * LT Thm 4.6 lattice sum, src/exact/exact_rr*.c) and of Poisson-subsampled
 * pure/randomized_response leaves (two-point pairs, both directions).
 * The bracket's width is evaluation round-off, except for (eps, delta)
 * compositions whose distinct epsilons are too many for the lattice sum:
 * those get the certified bracket of exact_rr_het.c (section 7) (a dominating and
 * a dominated lattice pair, refined until the bracket is within
 * min(accuracy, DPA_RR_HET_REL) relative; docs/guarantees.md §2.4).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/method.h"
#include "exact/exact.h"
#include "exact/exact_rr.h"
#include "num/num.h"

typedef struct exact_state {
    double accuracy, delta_abs; /* dpa_options.accuracy, .delta_abs */
    double mu, mu_lo;   /* Gaussian: total mu enclosed in [mu_lo, mu] */
    int rr;             /* 0 Gaussian, 1 (eps, delta) lattice sum, 2 two-point pairs (both directions),
                         * 3 heterogeneous (eps, delta) bracket */
    dpa_rr_comp c[2];   /* rr: c[0]; two-point: remove, add */
    dpa_rr_het *het;    /* rr 3 */
} exact_state;

/* which form applies: 0 Gaussian, 1 lattice sum, 2 two-point, 3
 * heterogeneous (eps, delta) bracket, -1 none */
static int form_of(const dpa_leafset *L)
{
    if (L->zcdp_path[0] || L->ra_path[0]) return -1;
    if (L->all_gaussian) return 0;
    if (L->all_rr) return dpa_rr_applicable(L) ? 1 : dpa_rr_het_applicable(L) ? 3 : -1;
    return dpa_rr_applicable_dir(L) ? 2 : -1;
}

/* Whether method auto should take the heterogeneous bracket (form 3) or
 * leave the composition to the PLD grid.  The bracket's cost is set by its
 * spectrum: every lattice frequency whose modulus is not certified below
 * 2^-64 is evaluated, and the modulus of the composed characteristic
 * function is at least prod_i tanh(eps_i/2)^{k_i} (each RR factor's is at
 * least |p - q| = tanh(eps/2)), so with
 *   spread = sum_i k_i log(1/tanh(eps_i/2))
 * small (few steps with large epsilons) every frequency is significant and
 * a build takes seconds; the PLD grid's cost grows with the number of
 * distinct leaves instead (one grid each).  Measured on this machine
 * (eps(1e-6), Release, CLI): 20-60 steps with spread 14-170 take 0.8-3.5 s
 * here and 0.13-0.9 s on the grid; 100 distinct steps (spread 238) 1.9 s
 * here, 3.8 s on the grid; 200-10^4 distinct steps (spread >= 860) 0.1-0.6 s
 * here, 12-72 s (and 1.6 GB) on the grid; 3 epsilons x 10^5 (spread 2e6)
 * 2.3 s here to 3.5e-7, the grid 1.3 s to a bracket 11 wide.  Hence: the
 * bracket when the spectrum can decay (spread >= 100) and either the grid
 * would hold many distinct leaves (>= 64) or the spread is large (>= 1000).
 * --method exact always takes it. */
#define HET_AUTO_MIN_SPREAD 100
#define HET_AUTO_MIN_DISTINCT 64
#define HET_AUTO_LARGE_SPREAD 1000
static int het_auto_ok(const dpa_leafset *L)
{
    double spread = 0;
    size_t distinct = 0;
    for (size_t i = 0; i < L->n; i++) {
        double e = L->v[i].rr_eps;
        if (!(e > 0)) continue;
        distinct++;
        /* log(1/tanh(e/2)) = log(coth(e/2)) = log1p(2/expm1(e)) */
        spread += L->v[i].count * log1p(2 / expm1(e));
    }
    return spread >= HET_AUTO_MIN_SPREAD && (distinct >= HET_AUTO_MIN_DISTINCT || spread >= HET_AUTO_LARGE_SPREAD);
}

static dpa_status exact_supports(const dpa_leafset *L, const dpa_options *opt, dpa_error *err)
{
    if (L->zcdp_path[0]) return dpa_method_refuse_zcdp(L, "exact", err);
    if (L->ra_path[0]) return dpa_method_refuse_ra(L, "exact", err);
    int f = form_of(L);
    if (f == 3 && opt && opt->method == DPA_METHOD_AUTO && !het_auto_ok(L))
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "method exact: a few (eps, delta) steps with large, distinct epsilons: method auto "
                             "evaluates them on the PLD grid (faster here; --method exact gives the lattice bracket)");
    if (f >= 0) return DPA_OK;
    return dpa_error_set(err, DPA_EUNSUPPORTED,
                         L->all_rr ? "method exact: this composition of (eps, delta) steps has an epsilon above "
                                     "1e3 among several distinct ones; method auto evaluates it on the PLD grid"
                                   : "method exact applies to compositions of gaussian/gdp leaves, of "
                                     "pure/randomized_response/approx leaves, or of Poisson-subsampled "
                                     "pure/randomized_response leaves; use method pld (any spec) or phi");
}

static void exact_destroy(void *state)
{
    exact_state *s = state;
    if (!s) return;
    dpa_rr_free(&s->c[0]);
    dpa_rr_free(&s->c[1]);
    dpa_rr_het_free(s->het);
    free(s);
}

static dpa_status exact_create(const dpa_leafset *L, const dpa_options *opt, void **state, dpa_error *err)
{
    dpa_status st = exact_supports(L, opt, err);
    if (st) return st;
    exact_state *s = calloc(1, sizeof *s);
    if (!s) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    s->accuracy = opt->accuracy;
    s->delta_abs = opt->delta_abs;
    s->rr = form_of(L);
    if (s->rr == 0) {
        /* mu = sqrt(sum k mu_i^2) enclosed without underflow; each mu_i is
         * sensitivity/sigma, rounded (u relative) */
        size_t n = L->n;
        double *k = malloc((n ? n : 1) * sizeof *k), *m = malloc((n ? n : 1) * sizeof *m);
        if (!k || !m) {
            free(k);
            free(m);
            exact_destroy(s);
            return dpa_error_set(err, DPA_ENOMEM, "out of memory");
        }
        for (size_t i = 0; i < n; i++) {
            k[i] = L->v[i].count;
            m[i] = L->v[i].mu;
        }
        dpa_exact_total_mu(k, m, n, DPA_UNIT_ROUNDOFF, &s->mu_lo, &s->mu);
        free(k);
        free(m);
    } else if (s->rr == 3) {
        /* the bracket aims at DPA_RR_HET_REL, or the accuracy option if tighter */
        if ((st = dpa_rr_het_new(L, fmin(opt->accuracy, DPA_RR_HET_REL), &s->het, err))) {
            exact_destroy(s);
            return st;
        }
    } else if (s->rr == 2) {
        if ((st = dpa_rr_build_dir(&s->c[0], L, 0, err)) || (st = dpa_rr_build_dir(&s->c[1], L, 1, err))) {
            exact_destroy(s);
            return st;
        }
    } else if ((st = dpa_rr_build(&s->c[0], L, err))) {
        exact_destroy(s);
        return st;
    }
    *state = s;
    return DPA_OK;
}

/* Bounds of the query: eps(delta) (is_eps, x = delta) or delta(eps). */
static void evaluate(exact_state *s, int is_eps, double x, dpa_result *out)
{
    if (s->rr && s->rr != 3 && s->c[0].loose) out->upper_source = DPA_SOURCE_CHERNOFF;
    if (s->rr == 3) {
        if (is_eps) dpa_rr_het_epsilon(s->het, x, &out->upper, &out->lower);
        else dpa_rr_het_delta(s->het, x, &out->upper, &out->lower);
        out->upper_remove = out->upper_add = out->upper;
        /* the lattice the bracket was certified on */
        out->grid_step = dpa_rr_het_step(s->het);
        snprintf(out->note, sizeof out->note,
                 "heterogeneous epsilons: bracket from a dominating and a dominated pair on the lattice %.3g Z",
                 out->grid_step);
    } else if (s->rr == 2) {
        /* both directions, the max reported */
        double up[2], lo[2];
        for (int d = 0; d < 2; d++) {
            if (is_eps) dpa_rr_epsilon(&s->c[d], x, &up[d], &lo[d]);
            else dpa_rr_delta(&s->c[d], x, &up[d], &lo[d]);
        }
        out->upper_remove = up[0];
        out->upper_add = up[1];
        out->binding = up[0] >= up[1] ? DPA_DIR_REMOVE : DPA_DIR_ADD;
        out->upper = fmax(up[0], up[1]);
        out->lower = fmax(lo[0], lo[1]);
        out->lower_remove = lo[0];
        out->lower_add = lo[1];
    } else {
        if (s->rr == 1) {
            if (is_eps) dpa_rr_epsilon(&s->c[0], x, &out->upper, &out->lower);
            else dpa_rr_delta(&s->c[0], x, &out->upper, &out->lower);
        } else {
            /* eps and delta increase with mu: upper at mu, lower at mu_lo */
            double t;
            if (is_eps) {
                dpa_exact_epsilon(s->mu, x, &out->upper, &t);
                dpa_exact_epsilon(s->mu_lo, x, &t, &out->lower);
            } else {
                dpa_exact_delta(s->mu, x, &out->upper, &t);
                dpa_exact_delta(s->mu_lo, x, &t, &out->lower);
            }
        }
        out->upper_remove = out->upper_add = out->upper;
    }
    out->lower += 0.0; /* -0 -> +0 */
}

static dpa_status exact_epsilon(void *state, double delta, dpa_result *out, dpa_error *err)
{
    (void)err;
    exact_state *s = state;
    evaluate(s, 1, delta, out);
    /* within a few ulp of the +inf mass even the closed form cannot decide
     * finiteness; for huge mu its evaluation error can exceed the target */
    if (isinf(out->upper) ? !isinf(out->lower) : out->upper - out->lower > s->accuracy * fmax(1.0, out->upper))
        out->accuracy_met = 0;
    return DPA_OK;
}

static dpa_status exact_delta(void *state, double eps, int refine, dpa_result *out, dpa_error *err)
{
    (void)err;
    (void)refine;
    exact_state *s = state;
    evaluate(s, 0, eps, out);
    if (out->upper - out->lower > s->accuracy * out->upper + s->delta_abs) out->accuracy_met = 0;
    return DPA_OK;
}

const dpa_method_ops dpa_method_exact_ops = {
    DPA_METHOD_EXACT, exact_supports, exact_create, exact_destroy, exact_epsilon, exact_delta, NULL,
};
