/* The residue filters' configuration: the GDP residue filter with an
 * approximate-GDP budget and the general residue filter's budget forms
 * (RF Thm 1, Alg 1; docs/filters.md "The general residue filter").
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 *   {"filter": "gdp-residue", "mu": M, "delta": D}   budget G_M (+) R_{0,D}
 *   {"filter": "residue", "budget": {"tradeoff": {"mu": M, "delta": D}}}
 *       the same filter (its canonical configuration is the first form).
 * delta is optional (0: the mu-GDP budget G_M of RF Thm 5). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "filter/filter_config.h"

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

dpa_status dpa_f_parse_residue(dpa_filter *f, json_t *o, const char *name, dpa_error *err)
{
    dpa_status st;
    if (!strcmp(name, "gdp-residue")) {
        static const char *const k[] = {"filter", "mu", "delta", "report_delta", NULL};
        if ((st = dpa_f_check_keys(o, "", k, name, err)) || (st = parse_gdp_budget(f, o, "", err))) return st;
    } else {
        static const char *const k[] = {"filter", "budget", "report_delta", NULL};
        static const char *const kb[] = {"tradeoff", NULL};
        static const char *const kt[] = {"mu", "delta", NULL};
        if ((st = dpa_f_check_keys(o, "", k, name, err))) return st;
        json_t *b = json_object_get(o, "budget");
        if (!json_is_object(b))
            return dpa_error_set(err, DPA_EINVAL, "/budget: missing or not an object ({\"tradeoff\": {\"mu\": M, "
                                                  "\"delta\": D}})");
        if ((st = dpa_f_check_keys(b, "/budget", kb, name, err))) return st;
        json_t *t = json_object_get(b, "tradeoff");
        if (!json_is_object(t))
            return dpa_error_set(err, DPA_EINVAL, "/budget/tradeoff: missing or not an object ({\"mu\": M, \"delta\": D}: "
                                                  "the approximate-GDP tradeoff G_M (x) f_{0,D})");
        if ((st = dpa_f_check_keys(t, "/budget/tradeoff", kt, name, err)) ||
            (st = parse_gdp_budget(f, t, "/budget/tradeoff", err)))
            return st;
    }
    return dpa_f_get_num(o, "", "report_delta", 0, 0, 1, 1, &f->report_delta, err);
}
