/* dpacct — the table of event kinds, the domain of every parameter, and the
 * checks with their messages.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Every domain check on an event parameter lives in this file: the table of
 * kinds (names, parameter slots, defaults), dpa_ev_param_domain (the domain of
 * each slot), dpa_ev_check_value / dpa_ev_check_params (the checks and their
 * messages) and dpa_ev_name_problem (labels).  The public constructors
 * (event_make.c) prefix "kind: param " to the problem text; the JSON reader
 * (event_json_*.c) calls the same functions and prefixes the JSON path
 * instead, so both report the same domain in the same words.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "event_internal.h"

/* Largest accepted integer sensitivity of the discrete mechanisms. */
#define DPA_MAX_DISCRETE_SENSITIVITY 1e6

/* One row per kind.  arity: 0 = leaf, 1 = exactly one child, -1 = >= 1 children.
 * optional[s]: 0 if the JSON form must give slot s, else its default
 * (1 for sensitivity, 2 for randomized_response's number of buckets k).
 * zero_default: bit s set if slot s may be omitted with the default 0
 * (zcdp's xi), which optional[] cannot say. */
typedef struct kind_info {
    const char *name;
    int nparams;
    const char *param[DPA_EV_MAX_PARAMS];
    double optional[DPA_EV_MAX_PARAMS];
    int arity;
    unsigned zero_default;
} kind_info;

static const kind_info KINDS[] = {
    [DPA_EV_GAUSSIAN] = {"gaussian", 2, {"sigma", "sensitivity"}, {0, 1}, 0},
    [DPA_EV_LAPLACE] = {"laplace", 2, {"scale", "sensitivity"}, {0, 1}, 0},
    [DPA_EV_DISCRETE_LAPLACE] = {"discrete_laplace", 2, {"scale", "sensitivity"}, {0, 1}, 0},
    /* truncation omitted: the untruncated noise (DPA_DG_UNTRUNCATED) */
    [DPA_EV_DISCRETE_GAUSSIAN] = {"discrete_gaussian", 3, {"sigma", "sensitivity", "truncation"},
                                  {0, 1, DPA_DG_UNTRUNCATED}, 0},
    [DPA_EV_RANDOMIZED_RESPONSE] = {"randomized_response", 2, {"epsilon", "k"}, {0, 2}, 0},
    [DPA_EV_PURE] = {"pure", 1, {"epsilon", NULL}, {0, 0}, 0},
    [DPA_EV_APPROX] = {"approx", 2, {"epsilon", "delta"}, {0, 0}, 0},
    /* (xi, rho)-zCDP (Bun & Steinke 2016 Def 1.1): D_alpha <= xi + rho alpha */
    [DPA_EV_ZCDP] = {"zcdp", 2, {"rho", "xi"}, {0, 0}, 0, 1u << 1},
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
    [DPA_EV_RANDOM_ALLOCATION] = {"random_allocation", 2, {"steps", "selected"}, {0, 0}, 1},
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
    if (!dpa_ev_param_name(k, slot) || (!KINDS[k].optional[slot] && !(KINDS[k].zero_default >> slot & 1u)))
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
    set_int_range(d, slot == 1 ? 0 : 1, DPA_MAX_COUNT); /* m = 0: the no-op */
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
         * (docs/spec.md), so none can be calibrated (event_json_read.c) */
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
        else if (slot == 2) /* truncation (the sentinel is checked apart) */
            set_int_range(dom, 0, DPA_MAX_DG_TRUNCATION);
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
    case DPA_EV_POISSON: /* rate 0 is the no-op (no record is ever sampled) */
        set_range(dom, 0, 0, 1, 0);
        break;
    case DPA_EV_SAMPLE:
        sample_domain(slot, sibling, dom);
        break;
    case DPA_EV_RANDOM_ALLOCATION:
        /* more steps for the same selected count is more private; with
         * sibling values known, selected <= steps */
        set_int_range(dom, 1, DPA_MAX_RA_STEPS);
        dom->role = slot == 0 ? DPA_ROLE_NOISE : DPA_ROLE_BUDGET;
        if (sibling && slot == 0 && isfinite(sibling[1]) && sibling[1] > dom->lo) dom->lo = sibling[1];
        if (sibling && slot == 1 && isfinite(sibling[0]) && sibling[0] < dom->hi) dom->hi = sibling[0];
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
        if (k == DPA_EV_DISCRETE_GAUSSIAN && s == 2 && p[s] == DPA_DG_UNTRUNCATED)
            continue; /* untruncated: the sentinel (likewise) */
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
    /* sample: m <= n; random_allocation: selected <= steps (slot 1 <= slot 0) */
    if ((k == DPA_EV_SAMPLE || k == DPA_EV_RANDOM_ALLOCATION) && p[1] > p[0]) {
        char nv[32], mv[32];
        fmt_num(p[0], nv, sizeof nv);
        fmt_num(p[1], mv, sizeof mv);
        snprintf(problem, n, "must be an integer <= %s (%s), got %s", dpa_ev_param_name(k, 0), nv, mv);
        *bad_slot = 1;
        return 1;
    }
    return 0;
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
