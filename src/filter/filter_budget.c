/* The residue filters' configuration: the GDP residue filter with an
 * approximate-GDP budget and the general residue filter's budget forms
 * (RF Thm 1, Alg 1; docs/filters.md "The general residue filter").
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 *   {"filter": "gdp-residue", "mu": M, "delta": D}   budget G_M (+) R_{0,D}
 *   {"filter": "residue", "budget": {"tradeoff": {"mu": M, "delta": D}}}
 *       the same filter (its canonical configuration is the first form).
 *   {"filter": "residue", "budget": {"tradeoff": {"points": [[alpha, beta], ...]}}}
 *   {"filter": "residue", "budget": {"tradeoff": {"eps_delta": [[eps, delta], ...]}}}
 *       a budget given as a tradeoff curve (filter_bcurve.c): the points as
 *       the tradeoff_curve leaf reads them, or the (eps, delta) guarantees
 *       the whole interaction must keep at once.
 * delta is optional (0: the mu-GDP budget G_M of RF Thm 5). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include "filter/filter_config.h"
#include "filter/filter_bcurve.h"

/* Largest budget mu (as the gdp filters). */
#define MU_MAX 1e6

dpa_status dpa_f_get_num(json_t *o, const char *prefix, const char *key, int required, double lo, double hi, int lo_open,
                         double *out, dpa_error *err)
{
    json_t *v = json_object_get(o, key);
    if (!v) {
        if (required) return dpa_error_set(err, DPA_EINVAL, "%s/%s: missing (a number)", prefix, key);
        return DPA_OK;
    }
    if (!json_is_number(v)) return dpa_error_set(err, DPA_EINVAL, "%s/%s: must be a number", prefix, key);
    double x = json_number_value(v);
    if (!isfinite(x) || (lo_open ? !(x > lo) : !(x >= lo)) || !(x <= hi))
        return dpa_error_set(err, DPA_EINVAL, "%s/%s: must be in %s%g, %g], got %.17g", prefix, key, lo_open ? "(" : "[",
                             lo, hi, x);
    *out = x;
    return DPA_OK;
}

dpa_status dpa_f_check_keys(json_t *o, const char *prefix, const char *const *allowed, const char *fname, dpa_error *err)
{
    const char *key;
    json_t *v;
    json_object_foreach(o, key, v)
    {
        int ok = 0;
        for (const char *const *a = allowed; *a; a++)
            if (!strcmp(*a, key)) ok = 1;
        if (!ok) return dpa_error_set(err, DPA_EINVAL, "%s/%s: unknown key for filter \"%s\"", prefix, key, fname);
    }
    return DPA_OK;
}

/* {"mu": M, "delta": D} at prefix: the approximate-GDP budget. */
static dpa_status parse_gdp_budget(dpa_filter *f, json_t *o, const char *prefix, dpa_error *err)
{
    dpa_status st;
    f->delta = 0;
    if ((st = dpa_f_get_num(o, prefix, "mu", 1, 0, MU_MAX, 0, &f->mu, err)) ||
        (st = dpa_f_get_num(o, prefix, "delta", 0, 0, 1, 0, &f->delta, err)))
        return st;
    if (!(f->delta < 1)) return dpa_error_set(err, DPA_EINVAL, "%s/delta: must be in [0, 1), got 1", prefix);
    f->delta += 0.0; /* never -0 */
    return DPA_OK;
}

/* A budget curve from the array of pairs at /budget/tradeoff/<key>. */
static dpa_status parse_curve(dpa_filter *f, json_t *arr, const char *key, dpa_error *err)
{
    size_t n = json_is_array(arr) ? json_array_size(arr) : 0;
    if (n == 0)
        return dpa_error_set(err, DPA_EINVAL, "/budget/tradeoff/%s: must be a non-empty array of pairs [%s]", key,
                             strcmp(key, "points") ? "eps, delta" : "alpha, beta");
    if (n > DPA_MAX_TRADEOFF_POINTS)
        return dpa_error_set(err, DPA_EINVAL, "/budget/tradeoff/%s: at most %d pairs, got %zu", key, DPA_MAX_TRADEOFF_POINTS, n);
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    dpa_status st = DPA_OK;
    if (!x || !y) st = dpa_error_set(err, DPA_ENOMEM, "out of memory");
    for (size_t i = 0; i < n && !st; i++) {
        json_t *p = json_array_get(arr, i);
        if (!json_is_array(p) || json_array_size(p) != 2 || !json_is_number(json_array_get(p, 0)) ||
            !json_is_number(json_array_get(p, 1)))
            st = dpa_error_set(err, DPA_EINVAL, "/budget/tradeoff/%s/%zu: must be a pair of numbers", key, i);
        else
            x[i] = json_number_value(json_array_get(p, 0)), y[i] = json_number_value(json_array_get(p, 1));
    }
    if (!st && !(f->bcurve = dpa_f_bcurve_new(x, y, n, strcmp(key, "points") != 0, err))) st = err ? err->status : DPA_EINVAL;
    free(x);
    free(y);
    return st;
}

void dpa_f_bcurve_json(dpa_f_sb *b, const struct dpa_f_bcurve *c)
{
    dpa_f_sb_add(b, ",\"budget\":{\"tradeoff\":{\"%s\":[", c->eps_delta ? "eps_delta" : "points");
    for (size_t i = 0; i < c->npts; i++) {
        dpa_f_sb_add(b, "%s[", i ? "," : "");
        dpa_f_sb_num(b, c->px[i]);
        dpa_f_sb_add(b, ",");
        dpa_f_sb_num(b, c->py[i]);
        dpa_f_sb_add(b, "]");
    }
    dpa_f_sb_add(b, "]}}");
}

dpa_status dpa_f_parse_residue(dpa_filter *f, json_t *o, const char *name, dpa_error *err)
{
    dpa_status st;
    if (!strcmp(name, "gdp-residue")) {
        static const char *const k[] = {"filter", "mu", "delta", "report_delta", NULL};
        if ((st = dpa_f_check_keys(o, "", k, name, err)) || (st = parse_gdp_budget(f, o, "", err))) return st;
    } else {
        static const char *const k[] = {"filter", "budget", "report_delta", NULL};
        static const char *const kb[] = {"tradeoff", NULL};
        static const char *const kt[] = {"mu", "delta", "points", "eps_delta", NULL};
        if ((st = dpa_f_check_keys(o, "", k, name, err))) return st;
        json_t *b = json_object_get(o, "budget");
        if (!json_is_object(b))
            return dpa_error_set(err, DPA_EINVAL, "/budget: missing or not an object ({\"tradeoff\": {\"mu\": M, "
                                                  "\"delta\": D}})");
        if ((st = dpa_f_check_keys(b, "/budget", kb, name, err))) return st;
        json_t *t = json_object_get(b, "tradeoff");
        if (!json_is_object(t))
            return dpa_error_set(err, DPA_EINVAL, "/budget/tradeoff: missing or not an object ({\"mu\": M, \"delta\": D}, "
                                                  "{\"points\": [[alpha, beta], ...]} or {\"eps_delta\": [[eps, delta], ...]})");
        if ((st = dpa_f_check_keys(t, "/budget/tradeoff", kt, name, err))) return st;
        json_t *pts = json_object_get(t, "points"), *ed = json_object_get(t, "eps_delta");
        int forms = (pts != NULL) + (ed != NULL) + (json_object_get(t, "mu") != NULL || json_object_get(t, "delta") != NULL);
        if (forms != 1)
            return dpa_error_set(err, DPA_EINVAL, "/budget/tradeoff: exactly one of {\"mu\": M, \"delta\": D}, "
                                                  "{\"points\": [[alpha, beta], ...]} or {\"eps_delta\": [[eps, delta], ...]}");
        if (pts || ed) {
            if ((st = parse_curve(f, pts ? pts : ed, pts ? "points" : "eps_delta", err))) return st;
            f->mu = 0;
            f->delta = dpa_f_bcurve_floor(f->bcurve); /* the residue's delta starts below the budget's */
        } else if ((st = parse_gdp_budget(f, t, "/budget/tradeoff", err))) {
            return st;
        }
    }
    return dpa_f_get_num(o, "", "report_delta", 0, 0, 1, 1, &f->report_delta, err);
}
