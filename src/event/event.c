/* dpacct — event trees and specs: constructors, validation, copy, inspection.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Every domain check on an event parameter lives in this file: the table of
 * kinds (names, parameter slots, defaults), dpa_ev_param_domain (the domain of
 * each slot) and dpa_ev_check_value / dpa_ev_check_params (the checks and
 * their messages).  The public constructors prefix "kind: param " to the
 * problem text; the JSON reader (event_json.c) calls the same functions and
 * prefixes the JSON path instead, so both report the same domain in the same
 * words.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "event_internal.h"


/* Largest accepted integer sensitivity of the discrete mechanisms. */
#define DPA_MAX_DISCRETE_SENSITIVITY 1e6

/* One row per kind.  arity: 0 = leaf, 1 = exactly one child, -1 = >= 1 children.
 * optional[s]: 0 if the JSON form must give slot s, else its default
 * (1 for sensitivity, 2 for randomized_response's number of buckets k). */
typedef struct kind_info {
    const char *name;
    int nparams;
    const char *param[DPA_EV_MAX_PARAMS];
    double optional[DPA_EV_MAX_PARAMS];
    int arity;
} kind_info;

static const kind_info KINDS[] = {
    [DPA_EV_GAUSSIAN] = {"gaussian", 2, {"sigma", "sensitivity"}, {0, 1}, 0},
    [DPA_EV_LAPLACE] = {"laplace", 2, {"scale", "sensitivity"}, {0, 1}, 0},
    [DPA_EV_DISCRETE_LAPLACE] = {"discrete_laplace", 2, {"scale", "sensitivity"}, {0, 1}, 0},
    [DPA_EV_DISCRETE_GAUSSIAN] = {"discrete_gaussian", 2, {"sigma", "sensitivity"}, {0, 1}, 0},
    [DPA_EV_RANDOMIZED_RESPONSE] = {"randomized_response", 2, {"epsilon", "k"}, {0, 2}, 0},
    [DPA_EV_PURE] = {"pure", 1, {"epsilon", NULL}, {0, 0}, 0},
    [DPA_EV_APPROX] = {"approx", 2, {"epsilon", "delta"}, {0, 0}, 0},
    [DPA_EV_ZCDP] = {"zcdp", 1, {"rho", NULL}, {0, 0}, 0},
    [DPA_EV_GDP] = {"gdp", 1, {"mu", NULL}, {0, 0}, 0},
    [DPA_EV_COMPOSE] = {"compose", 0, {NULL, NULL}, {0, 0}, -1},
    [DPA_EV_REPEAT] = {"repeat", 1, {"count", NULL}, {0, 0}, 1},
    [DPA_EV_POISSON] = {"poisson", 1, {"rate", NULL}, {0, 0}, 1},
    [DPA_EV_SAMPLE] = {"sample", 2, {"n", "m"}, {0, 0}, 1},
    [DPA_EV_NO_OP] = {"no_op", 0, {NULL, NULL}, {0, 0}, 0},
    [DPA_EV_NON_PRIVATE] = {"non_private", 0, {NULL, NULL}, {0, 0}, 0},
    [DPA_EV_PRIVACY_LOSS] = {"privacy_loss", 0, {NULL, NULL}, {0, 0}, 0},
    [DPA_EV_PRIVACY_PROFILE] = {"privacy_profile", 0, {NULL, NULL}, {0, 0}, 0},
    [DPA_EV_MIXTURE_OF_GAUSSIANS] = {"mixture_of_gaussians", 1, {"sigma", NULL}, {0, 0}, 0},
    [DPA_EV_SAMPLE_WITH_REPLACEMENT] = {"sample_with_replacement", 2, {"n", "m"}, {0, 0}, 1},
    [DPA_EV_TRUNCATED_POISSON] = {"truncated_poisson", 3, {"rate", "max_batch", "n"}, {0, 0, 0}, 1},
    [DPA_EV_EXPONENTIAL_MECHANISM] = {"exponential_mechanism", 1, {"epsilon", NULL}, {0, 0}, 0},
    [DPA_EV_PERMUTE_AND_FLIP] = {"permute_and_flip", 1, {"epsilon", NULL}, {0, 0}, 0},
    [DPA_EV_REPORT_NOISY_MAX] = {"report_noisy_max", 2, {"epsilon", "noise"}, {0, 0}, 0},
    [DPA_EV_TREE_AGGREGATION] = {"tree_aggregation", 3, {"sigma", "steps", "sensitivity"}, {0, 0, 1}, 0},
    /* shape omitted: Poisson (DPA_REPSEL_POISSON) */
    [DPA_EV_REPEAT_AND_SELECT] = {"repeat_and_select", 2, {"mean", "shape"}, {0, DPA_REPSEL_POISSON}, 1},
    [DPA_EV_LAPLACE_SVT] = {"laplace_svt", 3, {"scale", "k", "c"}, {0, 0, 1}, 0},
    [DPA_EV_GAUSSIAN_SVT] = {"gaussian_svt", 3, {"sigma", "k", "c"}, {0, 0, 1}, 0},
};
#define NKINDS ((int)(sizeof KINDS / sizeof KINDS[0]))

static int kind_valid(dpa_event_kind k)
{
    return (int)k >= 0 && (int)k < NKINDS;
}

/* ---- kind table accessors ---- */

/* "gaussian", ...; NULL for an invalid kind. */
const char *dpa_ev_kind_name(dpa_event_kind k)
{
    return kind_valid(k) ? KINDS[k].name : NULL;
}

/* 1 and *k set if name is a kind's JSON name, else 0. */
int dpa_ev_kind_from_name(const char *name, dpa_event_kind *k)
{
    for (int i = 0; i < NKINDS; i++) {
        if (strcmp(KINDS[i].name, name) == 0) {
            *k = (dpa_event_kind)i;
            return 1;
        }
    }
    return 0;
}

/* Number of numeric parameter slots of kind k (0 for compose). */
int dpa_ev_num_params(dpa_event_kind k)
{
    return kind_valid(k) ? KINDS[k].nparams : 0;
}

/* 0 for leaves, 1 for repeat/poisson/sample, -1 for compose (>= 1 children). */
int dpa_ev_arity(dpa_event_kind k)
{
    return kind_valid(k) ? KINDS[k].arity : 0;
}

/* Name of slot `slot` of kind k; NULL if there is no such slot. */
const char *dpa_ev_param_name(dpa_event_kind k, int slot)
{
    if (!kind_valid(k) || slot < 0 || slot >= KINDS[k].nparams)
        return NULL;
    return KINDS[k].param[slot];
}

/* 1 and *def set if slot may be omitted in JSON, else 0. */
int dpa_ev_param_default(dpa_event_kind k, int slot, double *def)
{
    if (!dpa_ev_param_name(k, slot) || !KINDS[k].optional[slot])
        return 0;
    *def = KINDS[k].optional[slot];
    return 1;
}

/* ---- domains ---- */

static void set_range(dpa_param_info *d, double lo, int lo_open, double hi, int hi_open)
{
    d->lo = lo;
    d->lo_open = lo_open;
    d->hi = hi;
    d->hi_open = hi_open;
}

static void set_int_range(dpa_param_info *d, double lo, double hi)
{
    d->is_integer = 1;
    set_range(d, lo, 0, hi, 0);
}

/* Sample: n in [1, MAX_COUNT], m in [1, MAX_COUNT]; with sibling values known,
 * n >= m and m <= n (used for template domains). */
static void sample_domain(int slot, const double *sib, dpa_param_info *d)
{
    set_int_range(d, 1, DPA_MAX_COUNT);
    if (!sib)
        return;
    if (slot == 0 && isfinite(sib[1]) && sib[1] > d->lo)
        d->lo = sib[1];
    if (slot == 1 && isfinite(sib[0]) && sib[0] < d->hi)
        d->hi = sib[0];
}

/* Fill dom (name, role, integrality, range; path left empty) for slot `slot`
 * of kind k.  sibling: NULL for the slot's own domain; else the kind's
 * parameter values, used for the cross constraint m <= n of sample.
 * Unbounded above is written hi = DBL_MAX, closed (every finite value). */
void dpa_ev_param_domain(dpa_event_kind k, int slot, const double *sibling,
                         dpa_param_info *dom)
{
    const char *name = dpa_ev_param_name(k, slot);
    memset(dom, 0, sizeof *dom);
    if (!name)
        return;
    snprintf(dom->name, sizeof dom->name, "%s", name);
    /* larger sigma, scale or population n (a smaller sampling rate m/n) is
     * more private */
    dom->role = (!strcmp(name, "sigma") || !strcmp(name, "scale") || !strcmp(name, "n")) ? DPA_ROLE_NOISE
                                                                                        : DPA_ROLE_BUDGET;
    set_range(dom, 0, 0, DBL_MAX, 0);
    switch (k) {
    case DPA_EV_GAUSSIAN:
    case DPA_EV_LAPLACE:
    case DPA_EV_MIXTURE_OF_GAUSSIANS:
        dom->lo_open = 1;
        break;
    case DPA_EV_SAMPLE_WITH_REPLACEMENT: /* m may exceed n */
        set_int_range(dom, 1, DPA_MAX_COUNT);
        break;
    case DPA_EV_TRUNCATED_POISSON:
        /* rate in (0, 1]; max_batch and n integers (n: the dataset's size,
         * the record included); the bound is monotone in none of them
         * (docs/spec.md), so none can be calibrated (event_json.c) */
        if (slot == 0)
            set_range(dom, 0, 1, 1, 0);
        else
            set_int_range(dom, 1, DPA_MAX_TRUNC_N);
        dom->role = slot == 1 ? DPA_ROLE_NOISE : DPA_ROLE_BUDGET;
        break;
    case DPA_EV_REPORT_NOISY_MAX:
        if (slot == 1) /* the noise's code (a string in JSON) */
            set_int_range(dom, DPA_RNM_GUMBEL, DPA_RNM_EXPONENTIAL);
        break;
    case DPA_EV_REPEAT_AND_SELECT:
        if (slot == 0) /* mean >= 1 */
            set_range(dom, 1, 0, DBL_MAX, 0);
        break; /* shape >= 0 (the Poisson sentinel is checked apart) */
    case DPA_EV_LAPLACE_SVT:
    case DPA_EV_GAUSSIAN_SVT:
        if (slot == 0)
            dom->lo_open = 1;
        else
            set_int_range(dom, 1, DPA_MAX_COUNT);
        break;
    case DPA_EV_TREE_AGGREGATION:
        if (slot == 1) {
            set_int_range(dom, 1, DPA_MAX_COUNT);
        } else {
            dom->lo_open = 1;
            if (slot == 2)
                dom->role = DPA_ROLE_BUDGET;
        }
        break;
    case DPA_EV_DISCRETE_LAPLACE:
    case DPA_EV_DISCRETE_GAUSSIAN:
        if (slot == 1)
            set_int_range(dom, 1, DPA_MAX_DISCRETE_SENSITIVITY);
        else if (k == DPA_EV_DISCRETE_GAUSSIAN)
            set_range(dom, 0, 1, DPA_MAX_DISCRETE_GAUSSIAN_SIGMA, 0);
        else
            dom->lo_open = 1;
        break;
    case DPA_EV_APPROX:
        if (slot == 1)
            set_range(dom, 0, 0, 1, 0);
        break;
    case DPA_EV_RANDOMIZED_RESPONSE:
        if (slot == 1) { /* buckets: more of them at a fixed eps is more private */
            set_int_range(dom, 2, DPA_MAX_RR_BUCKETS);
            dom->role = DPA_ROLE_NOISE;
        }
        break;
    case DPA_EV_REPEAT:
        set_int_range(dom, 1, DPA_MAX_COUNT);
        break;
    case DPA_EV_POISSON:
        set_range(dom, 0, 1, 1, 0);
        break;
    case DPA_EV_SAMPLE:
        sample_domain(slot, sibling, dom);
        break;
    default: /* pure, zcdp, gdp: [0, inf) */
        break;
    }
}

/* ---- checks ---- */

/* Shortest "%.Ng" form of v that reads back as v (nan/inf as such). */
static void fmt_num(double v, char *buf, size_t n)
{
    for (int prec = 6; prec <= 17; prec++) {
        snprintf(buf, n, "%.*g", prec, v);
        if (!isfinite(v) || strtod(buf, NULL) == v)
            return;
    }
}

static int in_range(const dpa_param_info *d, double v)
{
    if (!isfinite(v))
        return 0;
    if (d->lo_open ? !(v > d->lo) : !(v >= d->lo))
        return 0;
    if (d->hi_open ? !(v < d->hi) : !(v <= d->hi))
        return 0;
    return !d->is_integer || v == floor(v);
}

/* Integer domains: say which end (or integrality) is violated. */
static void integer_problem(const dpa_param_info *d, double v, const char *got,
                            char *problem, size_t n)
{
    char bound[32];
    if (isnan(v) || v < d->lo || (isfinite(v) && v != floor(v))) {
        fmt_num(d->lo, bound, sizeof bound);
        snprintf(problem, n, "must be an integer >= %s, got %s", bound, got);
    } else {
        fmt_num(d->hi, bound, sizeof bound);
        snprintf(problem, n, "must be an integer <= %s, got %s", bound, got);
    }
}

/* 0 if v lies in dom; else 1 and problem = "must be ..., got V" (no subject:
 * the caller prefixes the parameter name or the JSON path). */
int dpa_ev_check_value(const dpa_param_info *dom, double v, char *problem, size_t n)
{
    char got[32], lo[32], hi[32];
    if (in_range(dom, v))
        return 0;
    fmt_num(v, got, sizeof got);
    if (dom->is_integer) {
        integer_problem(dom, v, got, problem, n);
        return 1;
    }
    fmt_num(dom->lo, lo, sizeof lo);
    if (dom->hi >= DBL_MAX) {
        snprintf(problem, n, "must be %s %s and finite, got %s",
                 dom->lo_open ? ">" : ">=", lo, got);
    } else {
        fmt_num(dom->hi, hi, sizeof hi);
        snprintf(problem, n, "must be in %c%s, %s%c, got %s", dom->lo_open ? '(' : '[',
                 lo, hi, dom->hi_open ? ')' : ']', got);
    }
    return 1;
}

/* 0 if every parameter of kind k (values p[0..nparams-1]) is in its domain,
 * including cross constraints (sample: m <= n).  Else 1, *bad_slot = the
 * first offending slot, problem as for dpa_ev_check_value. */
int dpa_ev_check_params(dpa_event_kind k, const double *p, int *bad_slot,
                        char *problem, size_t n)
{
    dpa_param_info d;
    for (int s = 0; s < dpa_ev_num_params(k); s++) {
        if (k == DPA_EV_REPEAT_AND_SELECT && s == 1 && p[s] == DPA_REPSEL_POISSON)
            continue; /* Poisson: the sentinel (the JSON reader refuses it written) */
        dpa_ev_param_domain(k, s, NULL, &d);
        if (dpa_ev_check_value(&d, p[s], problem, n)) {
            *bad_slot = s;
            return 1;
        }
    }
    if ((k == DPA_EV_LAPLACE_SVT || k == DPA_EV_GAUSSIAN_SVT) && p[2] > p[1]) {
        char kv[32], cv[32];
        fmt_num(p[1], kv, sizeof kv);
        fmt_num(p[2], cv, sizeof cv);
        snprintf(problem, n, "must be an integer <= k (%s), got %s", kv, cv);
        *bad_slot = 2;
        return 1;
    }
    if (k == DPA_EV_SAMPLE && p[1] > p[0]) {
        char nv[32], mv[32];
        fmt_num(p[0], nv, sizeof nv);
        fmt_num(p[1], mv, sizeof mv);
        snprintf(problem, n, "must be an integer <= n (%s), got %s", nv, mv);
        *bad_slot = 1;
        return 1;
    }
    return 0;
}

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
    int arity = KINDS[k].arity;
    if (arity == -1 && nchild == 0)
        return dpa_error_set(err, DPA_EINVAL, "compose: needs at least one child event");
    if (arity >= 0 && nchild != (size_t)arity)
        return dpa_error_set(err, DPA_EINVAL, "%s: takes %d child events, got %zu",
                             KINDS[k].name, arity, nchild);
    if (nchild > 0 && !children)
        return dpa_error_set(err, DPA_EINVAL, "%s: child array is NULL", KINDS[k].name);
    for (size_t i = 0; i < nchild; i++) {
        if (!children[i])
            return arity == 1
                ? dpa_error_set(err, DPA_EINVAL, "%s: child event is NULL", KINDS[k].name)
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
    for (int s = 0; s < KINDS[k].nparams; s++)
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
    if (!kind_valid(k)) {
        free_children(children, nchild);
        dpa_error_set(err, DPA_EINVAL, "event: unknown kind %d", (int)k);
        return NULL;
    }
    if (k == DPA_EV_PRIVACY_LOSS || k == DPA_EV_PRIVACY_PROFILE || k == DPA_EV_MIXTURE_OF_GAUSSIANS) {
        /* tables: only through their constructors */
        free_children(children, nchild);
        dpa_error_set(err, DPA_EINVAL, "%s: build it with dpa_event_%s (it needs a table)", KINDS[k].name,
                      KINDS[k].name);
        return NULL;
    }
    if (KINDS[k].nparams > 0 && dpa_ev_check_params(k, p, &bad, problem, sizeof problem)) {
        free_children(children, nchild);
        dpa_error_set(err, DPA_EINVAL, "%s: %s %s", KINDS[k].name, KINDS[k].param[bad], problem);
        return NULL;
    }
    if (check_children(k, children, nchild, err) != DPA_OK) {
        free_children(children, nchild);
        return NULL;
    }
    e = alloc_event(k, p, children, nchild);
    if (!e) {
        free_children(children, nchild);
        dpa_error_set(err, DPA_ENOMEM, "%s: out of memory", KINDS[k].name);
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
    return make_leaf(DPA_EV_DISCRETE_GAUSSIAN, sigma, sensitivity, err);
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

/* ---- copy / free ---- */

static char *dup_name(const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    if (c)
        memcpy(c, s, n);
    return c;
}

dpa_event *dpa_event_copy(const dpa_event *e)
{
    dpa_event *c;
    if (!e)
        return NULL;
    c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->kind = e->kind;
    memcpy(c->p, e->p, sizeof c->p);
    if (e->name && !(c->name = dup_name(e->name))) {
        free(c);
        return NULL;
    }
    if (e->dpsgd) {
        if (!(c->dpsgd = malloc(sizeof *c->dpsgd))) {
            free(c->name);
            free(c);
            return NULL;
        }
        *c->dpsgd = *e->dpsgd;
    }
    if (e->ndata) {
        if (!(c->data = malloc(e->ndata * sizeof *c->data))) {
            free(c->name);
            free(c->dpsgd);
            free(c);
            return NULL;
        }
        memcpy(c->data, e->data, e->ndata * sizeof *c->data);
        c->ndata = e->ndata;
    }
    if (e->nchild > 0) {
        c->child = calloc(e->nchild, sizeof *c->child);
        if (!c->child) {
            free(c->data);
            free(c->name);
            free(c->dpsgd);
            free(c);
            return NULL;
        }
    }
    /* nchild counts the copies made so far: a partial copy frees cleanly. */
    for (size_t i = 0; i < e->nchild; i++, c->nchild++) {
        c->child[i] = dpa_event_copy(e->child[i]);
        if (!c->child[i]) {
            dpa_event_free(c);
            return NULL;
        }
    }
    return c;
}

void dpa_event_free(dpa_event *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->nchild; i++)
        dpa_event_free(e->child[i]);
    free(e->child);
    free(e->data);
    free(e->name);
    free(e->dpsgd);
    free(e);
}

/* ---- labels ---- */

int dpa_ev_name_problem(const char *name, char *problem, size_t n)
{
    size_t len = strlen(name);
    if (len == 0) {
        snprintf(problem, n, "must be a non-empty string");
        return 1;
    }
    if (len > DPA_EVENT_NAME_MAX) {
        snprintf(problem, n, "must be at most %d bytes, got %zu", DPA_EVENT_NAME_MAX, len);
        return 1;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)name[i];
        if (ch < 0x20 || ch == 0x7f) {
            snprintf(problem, n, "must not contain control characters (byte %zu is 0x%02x)", i, ch);
            return 1;
        }
    }
    return 0;
}

const char *dpa_event_get_name(const dpa_event *e)
{
    return e ? e->name : NULL;
}

dpa_status dpa_event_set_name(dpa_event *e, const char *name, dpa_error *err)
{
    char problem[128];
    if (!e)
        return dpa_error_set(err, DPA_EINVAL, "event name: NULL event");
    if (name && dpa_ev_name_problem(name, problem, sizeof problem))
        return dpa_error_set(err, DPA_EINVAL, "event name: %s", problem);
    char *c = NULL;
    if (name && !(c = dup_name(name)))
        return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    free(e->name);
    e->name = c;
    return DPA_OK;
}

/* ---- inspection ---- */

dpa_event_kind dpa_event_get_kind(const dpa_event *e)
{
    return e ? e->kind : DPA_EV_GAUSSIAN; /* NULL: documented as meaningless */
}

size_t dpa_event_num_children(const dpa_event *e)
{
    return e ? e->nchild : 0;
}

const dpa_event *dpa_event_child(const dpa_event *e, size_t i)
{
    return (e && i < e->nchild) ? e->child[i] : NULL;
}

dpa_status dpa_event_get_param(const dpa_event *e, const char *name, double *value)
{
    if (!e || !name || !value || !kind_valid(e->kind))
        return DPA_EINVAL;
    for (int s = 0; s < KINDS[e->kind].nparams; s++) {
        if (strcmp(KINDS[e->kind].param[s], name) == 0) {
            *value = e->p[s];
            return DPA_OK;
        }
    }
    return DPA_EINVAL;
}

/* ---- dpsgd runs ---- */

#if defined(__SIZEOF_INT128__)
__extension__ typedef unsigned __int128 dpa_u128;

/* ceil(epochs n / b) with the 1e-9 snap, exactly (also the CLI's `dpacct
 * dpsgd` step count, through dpa_dpsgd_steps). */
static unsigned long long dpsgd_steps_u(double epochs, unsigned long long n, unsigned long long b,
                                        unsigned long long max)
{
    int k;
    double m = frexp(epochs, &k);
    unsigned long long odd;
    dpa_u128 p, d, q, r, near, dist, scale;
    if (!(epochs > 0) || !isfinite(epochs) || n == 0 || b == 0)
        return 0;
    if (epochs * (double)n / (double)b > 2.0 * (double)max)
        return 0;
    odd = (unsigned long long)ldexp(m, 53);
    k -= 53;
    while (!(odd & 1)) {
        odd >>= 1;
        k++;
    }
    p = (dpa_u128)odd * n;
    d = b;
    if (k > 0) {
        p <<= k;
    } else if (k < 0) {
        int bits = 0;
        for (unsigned long long v = b; v; v >>= 1)
            bits++;
        if (bits - k > 127)
            return 1;
        d <<= -k;
    }
    q = p / d;
    r = p % d;
    if (2 * r < d) {
        near = q;
        dist = r;
    } else {
        near = q + 1;
        dist = d - r;
    }
    scale = (p > d ? p : d) / 1000000000u;
    if (dist <= scale)
        q = near;
    else if (r != 0)
        q += 1;
    if (q < 1)
        q = 1;
    return q > max ? 0 : (unsigned long long)q;
}
#else
static unsigned long long dpsgd_steps_u(double epochs, unsigned long long n, unsigned long long b,
                                        unsigned long long max)
{
    long double x = (long double)epochs * (long double)n / (long double)b, r = roundl(x);
    if (!(x > 0) || x > (long double)max + 1)
        return 0;
    if (fabsl(x - r) <= 1e-9L * (x > 1 ? x : 1))
        x = r;
    else
        x = ceill(x);
    if (x < 1)
        x = 1;
    return x > (long double)max ? 0 : (unsigned long long)x;
}
#endif

static int is_count(double v)
{
    return v >= 1 && v <= DPA_MAX_COUNT && v == floor(v);
}

double dpa_dpsgd_steps(double epochs, double dataset_size, double batch_size)
{
    if (!is_count(dataset_size) || !is_count(batch_size))
        return 0;
    return (double)dpsgd_steps_u(epochs, (unsigned long long)dataset_size, (unsigned long long)batch_size,
                                 (unsigned long long)DPA_MAX_COUNT);
}

dpa_event *dpa_ev_dpsgd_expand(const dpa_ev_dpsgd *d, dpa_error *err)
{
    double t = d->epochs > 0 ? dpa_dpsgd_steps(d->epochs, d->n, d->b) : d->steps;
    dpa_event *g, *step, *e;
    if (!(t >= 1)) {
        dpa_error_set(err, DPA_EINVAL,
                      "dpsgd: epochs %.17g of %.17g examples in batches of %.17g is more than %.17g steps",
                      d->epochs, d->n, d->b, DPA_MAX_COUNT);
        return NULL;
    }
    g = dpa_event_gaussian(d->noise, d->wor ? 2 : 1, err);
    if (!g)
        return NULL;
    step = d->wor ? dpa_event_sample(d->n, d->b, g, err) : dpa_event_poisson(d->b / d->n, g, err);
    if (!step)
        return NULL;
    e = dpa_event_repeat(t, step, err);
    if (!e)
        return NULL;
    if (!(e->dpsgd = malloc(sizeof *e->dpsgd))) {
        dpa_event_free(e);
        dpa_error_set(err, DPA_ENOMEM, "dpsgd: out of memory");
        return NULL;
    }
    *e->dpsgd = *d;
    return e;
}

dpa_event *dpa_event_dpsgd(double dataset_size, double batch_size, double epochs, double steps, double noise,
                           dpa_dpsgd_sampling sampling, dpa_error *err)
{
    dpa_ev_dpsgd d = {dataset_size, batch_size, epochs, steps, noise, sampling == DPA_DPSGD_WITHOUT_REPLACEMENT};
    if (!is_count(dataset_size))
        return dpa_error_set(err, DPA_EINVAL, "dpsgd: dataset_size must be an integer in [1, 1e15], got %.17g",
                             dataset_size), NULL;
    if (!is_count(batch_size) || batch_size > dataset_size)
        return dpa_error_set(err, DPA_EINVAL,
                             "dpsgd: batch_size must be an integer in [1, dataset_size = %.17g], got %.17g",
                             dataset_size, batch_size), NULL;
    if ((epochs != 0) == (steps != 0))
        return dpa_error_set(err, DPA_EINVAL, "dpsgd: give exactly one of epochs and steps (the other 0)"), NULL;
    if (epochs != 0 && !(epochs > 0 && isfinite(epochs)))
        return dpa_error_set(err, DPA_EINVAL, "dpsgd: epochs must be > 0 and finite, got %.17g", epochs), NULL;
    if (steps != 0 && !is_count(steps))
        return dpa_error_set(err, DPA_EINVAL, "dpsgd: steps must be an integer in [1, 1e15], got %.17g", steps),
               NULL;
    if (!(noise > 0 && isfinite(noise)))
        return dpa_error_set(err, DPA_EINVAL, "dpsgd: noise must be > 0 and finite, got %.17g", noise), NULL;
    if (sampling != DPA_DPSGD_POISSON && sampling != DPA_DPSGD_WITHOUT_REPLACEMENT)
        return dpa_error_set(err, DPA_EINVAL, "dpsgd: unknown sampling %d", (int)sampling), NULL;
    return dpa_ev_dpsgd_expand(&d, err);
}

int dpa_event_is_dpsgd(const dpa_event *e)
{
    return e && e->dpsgd != NULL;
}

/* The first dpsgd run in e whose sampling needs the other neighbouring
 * relation than nb: its path ("/compose/1/dpsgd") in path[n], 1; else 0. */
static int dpsgd_mismatch(const dpa_event *e, dpa_neighboring nb, char *path, size_t n, size_t len)
{
    if (e->dpsgd) {
        if (e->dpsgd->wor != (nb == DPA_REPLACE)) {
            snprintf(path + len, n - len, "/dpsgd");
            return 1;
        }
        return 0; /* its subtree is the expansion */
    }
    for (size_t i = 0; i < e->nchild; i++) {
        size_t l = len;
        if (e->kind == DPA_EV_COMPOSE)
            l += (size_t)snprintf(path + len, n - len, "/compose/%zu", i);
        else
            l += (size_t)snprintf(path + len, n - len, "/%s/event", KINDS[e->kind].name);
        if (l >= n)
            l = n - 1;
        if (dpsgd_mismatch(e->child[i], nb, path, n, l))
            return 1;
    }
    return 0;
}

/* ---- specs ---- */

dpa_spec *dpa_spec_new(dpa_event *root, dpa_neighboring nb, dpa_error *err)
{
    dpa_spec *s;
    if (!root) {
        dpa_error_set(err, DPA_EINVAL, "spec: root event is NULL");
        return NULL;
    }
    if (nb != DPA_ADD_REMOVE && nb != DPA_REPLACE) {
        dpa_event_free(root);
        dpa_error_set(err, DPA_EINVAL,
                      "spec: neighboring must be DPA_ADD_REMOVE or DPA_REPLACE, got %d", (int)nb);
        return NULL;
    }
    {
        char path[512] = "";
        if (dpsgd_mismatch(root, nb, path, sizeof path, 0)) {
            int wor = nb == DPA_ADD_REMOVE;
            dpa_event_free(root);
            dpa_error_set(err, DPA_EINVAL,
                          "%s: a dpsgd run with sampling \"%s\" is accounted under %s neighbouring, but the spec "
                          "is \"%s\" (a spec has one neighbouring relation)",
                          path, wor ? "without_replacement" : "poisson", wor ? "replace" : "add_remove",
                          nb == DPA_REPLACE ? "replace" : "add_remove");
            return NULL;
        }
    }
    s = malloc(sizeof *s);
    if (!s) {
        dpa_event_free(root);
        dpa_error_set(err, DPA_ENOMEM, "spec: out of memory");
        return NULL;
    }
    s->root = root;
    s->nb = nb;
    return s;
}

dpa_spec *dpa_spec_copy(const dpa_spec *s)
{
    dpa_spec *c;
    if (!s)
        return NULL;
    c = malloc(sizeof *c);
    if (!c)
        return NULL;
    c->nb = s->nb;
    c->root = dpa_event_copy(s->root);
    if (!c->root) {
        free(c);
        return NULL;
    }
    return c;
}

void dpa_spec_free(dpa_spec *s)
{
    if (!s)
        return;
    dpa_event_free(s->root);
    free(s);
}

const dpa_event *dpa_spec_root(const dpa_spec *s)
{
    return s ? s->root : NULL;
}

dpa_neighboring dpa_spec_neighboring(const dpa_spec *s)
{
    return s ? s->nb : DPA_ADD_REMOVE;
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
        dpa_error_set(err, DPA_ENOMEM, "%s: out of memory", KINDS[kind].name);
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
