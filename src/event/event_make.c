/* dpacct — event constructors: dpa_ev_make behind every public constructor
 * of a kind with numeric parameters, and the constructors of the table kinds
 * (privacy_loss, privacy_profile, mixture_of_gaussians).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Parameters are checked by event_kinds.c (dpa_ev_check_params); a violated
 * domain is reported as "kind: param must be ..., got V".
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "event_internal.h"

/* ---- construction ---- */

static void free_children(dpa_event *const *children, size_t n)
{
    if (!children)
        return;
    for (size_t i = 0; i < n; i++)
        dpa_event_free(children[i]);
}

/* DPA_OK if nchild children (all non-NULL) suit kind k; else sets err. */
static dpa_status check_children(dpa_event_kind k, dpa_event *const *children,
                                 size_t nchild, dpa_error *err)
{
    int arity = dpa_ev_arity(k);
    if (arity == -1 && nchild == 0)
        return dpa_error_set(err, DPA_EINVAL, "compose: needs at least one child event");
    if (arity >= 0 && nchild != (size_t)arity)
        return dpa_error_set(err, DPA_EINVAL, "%s: takes %d child events, got %zu",
                             dpa_ev_kind_name(k), arity, nchild);
    if (nchild > 0 && !children)
        return dpa_error_set(err, DPA_EINVAL, "%s: child array is NULL", dpa_ev_kind_name(k));
    for (size_t i = 0; i < nchild; i++) {
        if (!children[i])
            return arity == 1
                ? dpa_error_set(err, DPA_EINVAL, "%s: child event is NULL", dpa_ev_kind_name(k))
                : dpa_error_set(err, DPA_EINVAL, "compose: child %zu is NULL", i);
    }
    return DPA_OK;
}

/* Allocate an event of kind k with already validated parameters. */
static dpa_event *alloc_event(dpa_event_kind k, const double *p,
                              dpa_event *const *children, size_t nchild)
{
    dpa_event *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    if (nchild > 0) {
        if (nchild > SIZE_MAX / sizeof *e->child ||
            !(e->child = malloc(nchild * sizeof *e->child))) {
            free(e);
            return NULL;
        }
        memcpy(e->child, children, nchild * sizeof *e->child);
    }
    e->kind = k;
    e->nchild = nchild;
    for (int s = 0; s < dpa_ev_num_params(k); s++)
        e->p[s] = p[s] == 0 ? 0.0 : p[s]; /* no -0: canonical serialization */
    return e;
}

/* The one constructor behind all public ones.  p holds the kind's parameters
 * in slot order (may be NULL for compose).  Takes ownership of the children in
 * every case.  Errors: DPA_EINVAL "kind: param must be ..., got V", wrong
 * number of / NULL children; DPA_ENOMEM. */
dpa_event *dpa_ev_make(dpa_event_kind k, const double *p,
                       dpa_event *const *children, size_t nchild, dpa_error *err)
{
    char problem[256];
    int bad;
    dpa_event *e;
    if (!dpa_ev_kind_name(k)) { /* not a kind */
        free_children(children, nchild);
        dpa_error_set(err, DPA_EINVAL, "event: unknown kind %d", (int)k);
        return NULL;
    }
    if (k == DPA_EV_PRIVACY_LOSS || k == DPA_EV_PRIVACY_PROFILE || k == DPA_EV_MIXTURE_OF_GAUSSIANS) {
        /* tables: only through their constructors */
        free_children(children, nchild);
        dpa_error_set(err, DPA_EINVAL, "%s: build it with dpa_event_%s (it needs a table)", dpa_ev_kind_name(k),
                      dpa_ev_kind_name(k));
        return NULL;
    }
    if (dpa_ev_num_params(k) > 0 && dpa_ev_check_params(k, p, &bad, problem, sizeof problem)) {
        free_children(children, nchild);
        dpa_error_set(err, DPA_EINVAL, "%s: %s %s", dpa_ev_kind_name(k), dpa_ev_param_name(k, bad), problem);
        return NULL;
    }
    if (check_children(k, children, nchild, err) != DPA_OK) {
        free_children(children, nchild);
        return NULL;
    }
    e = alloc_event(k, p, children, nchild);
    if (!e) {
        free_children(children, nchild);
        dpa_error_set(err, DPA_ENOMEM, "%s: out of memory", dpa_ev_kind_name(k));
    }
    return e;
}

static dpa_event *make_leaf(dpa_event_kind k, double a, double b, dpa_error *err)
{
    const double p[DPA_EV_MAX_PARAMS] = {a, b, 0, 0};
    return dpa_ev_make(k, p, NULL, 0, err);
}

static dpa_event *make_unary(dpa_event_kind k, double a, double b, dpa_event *child,
                             dpa_error *err)
{
    const double p[DPA_EV_MAX_PARAMS] = {a, b, 0, 0};
    return dpa_ev_make(k, p, &child, 1, err);
}

dpa_event *dpa_event_gaussian(double sigma, double sensitivity, dpa_error *err)
{
    return make_leaf(DPA_EV_GAUSSIAN, sigma, sensitivity, err);
}

dpa_event *dpa_event_laplace(double scale, double sensitivity, dpa_error *err)
{
    return make_leaf(DPA_EV_LAPLACE, scale, sensitivity, err);
}

dpa_event *dpa_event_discrete_laplace(double scale, double sensitivity, dpa_error *err)
{
    return make_leaf(DPA_EV_DISCRETE_LAPLACE, scale, sensitivity, err);
}

dpa_event *dpa_event_discrete_gaussian(double sigma, double sensitivity, dpa_error *err)
{
    return dpa_event_discrete_gaussian_truncated(sigma, sensitivity, DPA_DG_UNTRUNCATED, err);
}

dpa_event *dpa_event_discrete_gaussian_truncated(double sigma, double sensitivity, double truncation,
                                                 dpa_error *err)
{
    const double p[DPA_EV_MAX_PARAMS] = {sigma, sensitivity, truncation, 0};
    return dpa_ev_make(DPA_EV_DISCRETE_GAUSSIAN, p, NULL, 0, err);
}

dpa_event *dpa_event_randomized_response(double epsilon, dpa_error *err)
{
    return make_leaf(DPA_EV_RANDOMIZED_RESPONSE, epsilon, 2, err);
}

dpa_event *dpa_event_randomized_response_k(double epsilon, double k, dpa_error *err)
{
    return make_leaf(DPA_EV_RANDOMIZED_RESPONSE, epsilon, k, err);
}

dpa_event *dpa_event_pure(double epsilon, dpa_error *err)
{
    return make_leaf(DPA_EV_PURE, epsilon, 0, err);
}

dpa_event *dpa_event_approx(double epsilon, double delta, dpa_error *err)
{
    return make_leaf(DPA_EV_APPROX, epsilon, delta, err);
}

dpa_event *dpa_event_zcdp(double rho, dpa_error *err)
{
    return make_leaf(DPA_EV_ZCDP, rho, 0, err);
}

dpa_event *dpa_event_zcdp_xi(double rho, double xi, dpa_error *err)
{
    return make_leaf(DPA_EV_ZCDP, rho, xi, err);
}

dpa_event *dpa_event_gdp(double mu, dpa_error *err)
{
    return make_leaf(DPA_EV_GDP, mu, 0, err);
}

dpa_event *dpa_event_compose(dpa_event *const *children, size_t n, dpa_error *err)
{
    return dpa_ev_make(DPA_EV_COMPOSE, NULL, children, n, err);
}

dpa_event *dpa_event_repeat(double count, dpa_event *child, dpa_error *err)
{
    return make_unary(DPA_EV_REPEAT, count, 0, child, err);
}

dpa_event *dpa_event_poisson(double rate, dpa_event *child, dpa_error *err)
{
    return make_unary(DPA_EV_POISSON, rate, 0, child, err);
}

dpa_event *dpa_event_sample(double n, double m, dpa_event *child, dpa_error *err)
{
    return make_unary(DPA_EV_SAMPLE, n, m, child, err);
}

dpa_event *dpa_event_random_allocation(double steps, double selected, dpa_event *child, dpa_error *err)
{
    return make_unary(DPA_EV_RANDOM_ALLOCATION, steps, selected, child, err);
}

dpa_event *dpa_event_sample_with_replacement(double n, double m, dpa_event *child, dpa_error *err)
{
    return make_unary(DPA_EV_SAMPLE_WITH_REPLACEMENT, n, m, child, err);
}

dpa_event *dpa_event_truncated_poisson(double rate, double max_batch, double n, dpa_event *child, dpa_error *err)
{
    const double p[DPA_EV_MAX_PARAMS] = {rate, max_batch, n, 0};
    return dpa_ev_make(DPA_EV_TRUNCATED_POISSON, p, &child, 1, err);
}

dpa_event *dpa_event_exponential_mechanism(double epsilon, dpa_error *err)
{
    return make_leaf(DPA_EV_EXPONENTIAL_MECHANISM, epsilon, 0, err);
}

dpa_event *dpa_event_permute_and_flip(double epsilon, dpa_error *err)
{
    return make_leaf(DPA_EV_PERMUTE_AND_FLIP, epsilon, 0, err);
}

dpa_event *dpa_event_report_noisy_max(double epsilon, dpa_rnm_noise noise, dpa_error *err)
{
    return make_leaf(DPA_EV_REPORT_NOISY_MAX, epsilon, (double)noise, err);
}

dpa_event *dpa_event_repeat_and_select(double mean, double shape, dpa_event *child, dpa_error *err)
{
    return make_unary(DPA_EV_REPEAT_AND_SELECT, mean, shape, child, err);
}

dpa_event *dpa_event_laplace_svt(double scale, double k, double c, dpa_error *err)
{
    const double p[DPA_EV_MAX_PARAMS] = {scale, k, c, 0};
    return dpa_ev_make(DPA_EV_LAPLACE_SVT, p, NULL, 0, err);
}

dpa_event *dpa_event_gaussian_svt(double sigma, double k, double c, dpa_error *err)
{
    const double p[DPA_EV_MAX_PARAMS] = {sigma, k, c, 0};
    return dpa_ev_make(DPA_EV_GAUSSIAN_SVT, p, NULL, 0, err);
}

dpa_event *dpa_event_tree_aggregation(double sigma, double steps, double sensitivity, dpa_error *err)
{
    const double p[DPA_EV_MAX_PARAMS] = {sigma, steps, sensitivity, 0};
    return dpa_ev_make(DPA_EV_TREE_AGGREGATION, p, NULL, 0, err);
}

dpa_event *dpa_event_no_op(dpa_error *err)
{
    return make_leaf(DPA_EV_NO_OP, 0, 0, err);
}

dpa_event *dpa_event_non_private(dpa_error *err)
{
    return make_leaf(DPA_EV_NON_PRIVATE, 0, 0, err);
}

/* (loss, mass) pairs sorted by loss (privacy_loss tables) */
typedef struct lm { double l, m; } lm;
static int cmp_lm(const void *a, const void *b)
{
    double x = ((const lm *)a)->l, y = ((const lm *)b)->l;
    return (x > y) - (x < y);
}

/* An event of `kind` (parameters p, or none) holding the k points of v as
 * its data (first the k l's, then the k m's); v is freed in every case. */
static dpa_event *data_event(dpa_event_kind kind, const double *p, lm *v, size_t k, dpa_error *err)
{
    dpa_event *e = alloc_event(kind, p, NULL, 0);
    double *d = e ? malloc(2 * k * sizeof *d) : NULL;
    if (!d) {
        free(e);
        free(v);
        dpa_error_set(err, DPA_ENOMEM, "%s: out of memory", dpa_ev_kind_name(kind));
        return NULL;
    }
    for (size_t i = 0; i < k; i++) {
        d[i] = v[i].l;
        d[k + i] = v[i].m;
    }
    free(v);
    e->data = d;
    e->ndata = 2 * k;
    return e;
}

dpa_event *dpa_event_privacy_loss(const double *loss, const double *mass, size_t n, dpa_error *err)
{
    if (!loss || !mass || n == 0 || n > DPA_MAX_TABLE_POINTS) {
        dpa_error_set(err, DPA_EINVAL, "privacy_loss: need 1 to %d points (loss and mass arrays of equal length)",
                      DPA_MAX_TABLE_POINTS);
        return NULL;
    }
    lm *v = malloc(n * sizeof *v);
    if (!v) {
        dpa_error_set(err, DPA_ENOMEM, "privacy_loss: out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        if (!(fabs(loss[i]) <= DPA_MAX_TABLE_LOSS)) {
            free(v);
            dpa_error_set(err, DPA_EINVAL, "privacy_loss: loss[%zu] must be finite with |loss| <= %g, got %g", i,
                          DPA_MAX_TABLE_LOSS, loss[i]);
            return NULL;
        }
        if (!(mass[i] >= 0 && mass[i] <= 1)) {
            free(v);
            dpa_error_set(err, DPA_EINVAL, "privacy_loss: mass[%zu] must be in [0, 1], got %g", i, mass[i]);
            return NULL;
        }
        v[i] = (lm){loss[i] == 0 ? 0.0 : loss[i], mass[i]};
    }
    qsort(v, n, sizeof *v, cmp_lm);
    /* merge equal losses; the sums of P's and Q's masses (Q: m e^-l) */
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k && v[k - 1].l == v[i].l) v[k - 1].m += v[i].m;
        else v[k++] = v[i];
    }
    long double sp = 0, sq = 0;
    for (size_t i = 0; i < k; i++) {
        sp += v[i].m;
        sq += v[i].m * expl(-(long double)v[i].l);
    }
    long double slack = (long double)(k + 1) * DPA_TABLE_SUM_SLACK;
    if (!(sp <= 1 + slack) || !(sq <= 1 + slack)) {
        free(v);
        dpa_error_set(err, DPA_EINVAL,
                      "privacy_loss: not a privacy loss distribution: the masses sum to %.17Lg and mass * e^-loss "
                      "(the second distribution's) to %.17Lg; both must be at most 1 up to rounding (%.3Lg; "
                      "renormalize the table)",
                      sp, sq, slack);
        return NULL;
    }
    return data_event(DPA_EV_PRIVACY_LOSS, NULL, v, k, err);
}

dpa_event *dpa_event_privacy_profile(const double *epsilon, const double *delta, size_t n, dpa_error *err)
{
    if (!epsilon || !delta || n == 0 || n > DPA_MAX_TABLE_POINTS) {
        dpa_error_set(err, DPA_EINVAL,
                      "privacy_profile: need 1 to %d points (epsilon and delta arrays of equal length)",
                      DPA_MAX_TABLE_POINTS);
        return NULL;
    }
    lm *v = malloc(n * sizeof *v);
    if (!v) {
        dpa_error_set(err, DPA_ENOMEM, "privacy_profile: out of memory");
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const char *bad = !(epsilon[i] >= 0 && epsilon[i] <= DPA_MAX_PROFILE_EPS) ? "epsilon"
                          : !(delta[i] >= 0 && delta[i] <= 1)                     ? "delta"
                                                                                  : NULL;
        if (bad) {
            free(v);
            if (bad[0] == 'e')
                dpa_error_set(err, DPA_EINVAL, "privacy_profile: epsilon[%zu] must be in [0, %g], got %g", i,
                              DPA_MAX_PROFILE_EPS, epsilon[i]);
            else
                dpa_error_set(err, DPA_EINVAL, "privacy_profile: delta[%zu] must be in [0, 1], got %g", i, delta[i]);
            return NULL;
        }
        v[i] = (lm){epsilon[i] == 0 ? 0.0 : epsilon[i], delta[i] == 0 ? 0.0 : delta[i]};
    }
    qsort(v, n, sizeof *v, cmp_lm);
    size_t k = 0; /* equal epsilons: the smallest delta (the strongest guarantee) */
    for (size_t i = 0; i < n; i++) {
        if (k && v[k - 1].l == v[i].l) v[k - 1].m = fmin(v[k - 1].m, v[i].m);
        else v[k++] = v[i];
    }
    return data_event(DPA_EV_PRIVACY_PROFILE, NULL, v, k, err);
}

dpa_event *dpa_event_mixture_of_gaussians(double sigma, const double *sensitivities, const double *probabilities,
                                          size_t n, dpa_error *err)
{
    if (!(sigma > 0 && isfinite(sigma))) {
        dpa_error_set(err, DPA_EINVAL, "mixture_of_gaussians: sigma must be > 0 and finite, got %g", sigma);
        return NULL;
    }
    if (!sensitivities || !probabilities || n == 0 || n > DPA_MAX_MIXTURE_COMPONENTS) {
        dpa_error_set(err, DPA_EINVAL,
                      "mixture_of_gaussians: need 1 to %d components (sensitivities and probabilities of equal length)",
                      DPA_MAX_MIXTURE_COMPONENTS);
        return NULL;
    }
    lm *v = malloc(n * sizeof *v);
    if (!v) {
        dpa_error_set(err, DPA_ENOMEM, "mixture_of_gaussians: out of memory");
        return NULL;
    }
    long double sp = 0;
    for (size_t i = 0; i < n; i++) {
        if (!(sensitivities[i] >= 0 && isfinite(sensitivities[i]))) {
            free(v);
            dpa_error_set(err, DPA_EINVAL, "mixture_of_gaussians: sensitivities[%zu] must be >= 0 and finite, got %g", i,
                          sensitivities[i]);
            return NULL;
        }
        if (!(probabilities[i] >= 0 && probabilities[i] <= 1)) {
            free(v);
            dpa_error_set(err, DPA_EINVAL, "mixture_of_gaussians: probabilities[%zu] must be in [0, 1], got %g", i,
                          probabilities[i]);
            return NULL;
        }
        sp += probabilities[i];
        v[i] = (lm){sensitivities[i] == 0 ? 0.0 : sensitivities[i], probabilities[i]};
    }
    long double slack = (long double)(n + 1) * DPA_TABLE_SUM_SLACK;
    if (!(fabsl(sp - 1) <= slack)) {
        free(v);
        dpa_error_set(err, DPA_EINVAL,
                      "mixture_of_gaussians: the probabilities sum to %.17Lg; they must sum to 1 up to rounding (%.3Lg)",
                      sp, slack);
        return NULL;
    }
    qsort(v, n, sizeof *v, cmp_lm);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k && v[k - 1].l == v[i].l) v[k - 1].m += v[i].m;
        else v[k++] = v[i];
    }
    const double p[DPA_EV_MAX_PARAMS] = {sigma, 0, 0, 0};
    return data_event(DPA_EV_MIXTURE_OF_GAUSSIANS, p, v, k, err);
}
