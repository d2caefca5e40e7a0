/* Privacy filters: configuration, state and dispatch (include/dpacct/filter.h).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * JSON configuration and state are read with jansson; every error names the
 * JSON path and the violated domain.  Configuration and state are written by
 * hand (filter_json.c: doubles with "%.17g", which round-trip exactly, no
 * -0; the decimal accumulators as strings), so the same configuration and
 * the same queries give byte-identical texts (the ledger's `verify`).  A
 * state never holds a non-finite number (budgets are finite, spends are
 * checked).  The remaining budget is in filter_remaining.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "filter/filter_internal.h"
#include "filter/filter_config.h"
#include "filter/filter_bcurve.h"

static const char *kind_name(dpa_filter_kind k)
{
    switch (k) {
    case DPA_F_PURE: return "pure";
    case DPA_F_BASIC: return "basic";
    case DPA_F_RDP: return "rdp";
    case DPA_F_ZCDP: return "zcdp";
    case DPA_F_GDP: return "gdp";
    case DPA_F_GDP_RESIDUE: return "gdp-residue";
    case DPA_F_NATURAL_GDP:
    case DPA_F_NATURAL_DELTA: return "natural";
    case DPA_F_NATURAL_APPROX: return "natural-approx";
    case DPA_F_ADDITIVE: return "additive-profile";
    }
    return "?";
}

/* the filter's name: its kind's, "residue" for a budget given as a curve */
static const char *fname(const dpa_filter *f) { return f->bcurve ? "residue" : kind_name(f->kind); }

const char *dpa_filter_name(const dpa_filter *f) { return f ? fname(f) : NULL; }

/* ---------------- configuration ---------------- */
/* Largest accepted budget value: far beyond any meaningful budget, small
 * enough that sums and squares of budgets stay finite. */
#define BUDGET_MAX 1e100
/* Largest capacity of natural-approx (RF Thm 9 grows with log k). */
#define MAX_QUERIES_MAX 1e12
/* Most orders of an rdp filter. */
#define ORDERS_MAX 1024
#define DEFAULT_REPORT_DELTA 1e-6

static dpa_status get_num(json_t *o, const char *key, int required, double lo, double hi, int lo_open, double *out,
                          dpa_error *err)
{
    return dpa_f_get_num(o, "", key, required, lo, hi, lo_open, out, err);
}

static dpa_status check_keys(json_t *o, const char *const *allowed, const char *fname, dpa_error *err)
{
    return dpa_f_check_keys(o, "", allowed, fname, err);
}

void dpa_filter_free(dpa_filter *f)
{
    if (!f) return;
    dpa_f_bcurve_free(f->bcurve);
    free(f->lev_eps);
    free(f->lev_budget);
    free(f->lev_spent);
    free(f->orders);
    free(f->rho);
    free(f->spent_rho);
    free(f->d_rho);
    for (size_t i = 0; i < f->nspecs; i++) free(f->specs[i]);
    free(f->specs);
    free(f);
}

static void reset_state(dpa_filter *f)
{
    f->accepted = 0;
    f->spent_eps = dpa_dec_int(0);
    f->keep = dpa_dec_int(1);
    for (size_t i = 0; f->spent_rho && i < f->norders; i++) f->spent_rho[i] = dpa_dec_int(0);
    f->has_res = 0;
    f->mu_res = 0;
    f->delta_res = dpa_dec_param(f->kind == DPA_F_GDP_RESIDUE ? f->delta : 0);
    f->mu2_spent = dpa_dec_int(0);
    for (size_t i = 0; i < f->nspecs; i++) free(f->specs[i]);
    f->nspecs = 0;
    f->last_delta = 0;
    f->nb = -1;
    for (size_t i = 0; f->lev_spent && i < f->nlev; i++) f->lev_spent[i] = dpa_dec_int(0);
}

static dpa_status parse_orders(dpa_filter *f, json_t *o, dpa_error *err)
{
    json_t *r = json_object_get(o, "rho"), *a = json_object_get(o, "order");
    if (!r) return dpa_error_set(err, DPA_EINVAL, "/rho: missing (a number or an array of numbers)");
    if (!a) return dpa_error_set(err, DPA_EINVAL, "/order: missing (a number > 1 or an array of them)");
    if (json_is_array(r) != json_is_array(a))
        return dpa_error_set(err, DPA_EINVAL, "/order: must be an array exactly when /rho is");
    size_t n = json_is_array(r) ? json_array_size(r) : 1;
    if (json_is_array(r) && json_array_size(a) != n)
        return dpa_error_set(err, DPA_EINVAL, "/order: must have as many entries as /rho (%zu), got %zu", n,
                             json_array_size(a));
    if (n < 1 || n > ORDERS_MAX) return dpa_error_set(err, DPA_EINVAL, "/rho: must have 1 to %d entries", ORDERS_MAX);
    f->rdp_vector = json_is_array(r);
    f->norders = n;
    f->orders = malloc(n * sizeof *f->orders);
    f->rho = malloc(n * sizeof *f->rho);
    f->spent_rho = calloc(n, sizeof *f->spent_rho);
    if (!f->orders || !f->rho || !f->spent_rho) return dpa_error_set(err, DPA_ENOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        json_t *ri = f->rdp_vector ? json_array_get(r, i) : r, *ai = f->rdp_vector ? json_array_get(a, i) : a;
        char pr[32] = "", pa[32] = "";
        if (f->rdp_vector) {
            snprintf(pr, sizeof pr, "/%zu", i);
            snprintf(pa, sizeof pa, "/%zu", i);
        }
        if (!json_is_number(ri)) return dpa_error_set(err, DPA_EINVAL, "/rho%s: must be a number", pr);
        if (!json_is_number(ai)) return dpa_error_set(err, DPA_EINVAL, "/order%s: must be a number", pa);
        double rv = json_number_value(ri), av = json_number_value(ai);
        if (!(rv >= 0 && rv <= BUDGET_MAX))
            return dpa_error_set(err, DPA_EINVAL, "/rho%s: must be in [0, %g], got %.17g", pr, BUDGET_MAX, rv);
        if (!(av > 1 && av <= 1e6))
            return dpa_error_set(err, DPA_EINVAL, "/order%s: must be in (1, 1e6], got %.17g", pa, av);
        if (i > 0 && !(av > f->orders[i - 1]))
            return dpa_error_set(err, DPA_EINVAL, "/order%s: orders must be strictly increasing", pa);
        f->orders[i] = av;
        f->rho[i] = rv;
    }
    return DPA_OK;
}

dpa_filter *dpa_filter_new_json(const char *config, dpa_error *err)
{
    dpa_error_clear(err);
    if (!config) {
        dpa_error_set(err, DPA_EINVAL, "filter configuration: NULL");
        return NULL;
    }
    json_error_t je;
    json_t *o = json_loads(config, JSON_REJECT_DUPLICATES, &je);
    if (!o) {
        dpa_error_set(err, DPA_EINVAL, "filter configuration: invalid JSON at line %d column %d: %s", je.line, je.column,
                      je.text);
        return NULL;
    }
    dpa_filter *f = calloc(1, sizeof *f);
    dpa_status st = DPA_OK;
    if (!f) {
        st = dpa_error_set(err, DPA_ENOMEM, "out of memory");
        goto out;
    }
    f->report_delta = DEFAULT_REPORT_DELTA;
    f->nb = -1;
    if (!json_is_object(o)) {
        st = dpa_error_set(err, DPA_EINVAL, "filter configuration: must be a JSON object");
        goto out;
    }
    json_t *fn = json_object_get(o, "filter");
    if (!json_is_string(fn)) {
        st = dpa_error_set(err, DPA_EINVAL, "/filter: missing or not a string (one of pure, basic, rdp, zcdp, gdp, "
                                            "gdp-residue, residue, natural, natural-approx, additive-profile)");
        goto out;
    }
    const char *name = json_string_value(fn);
    if (!strcmp(name, "pure")) {
        static const char *const k[] = {"filter", "epsilon", NULL};
        f->kind = DPA_F_PURE;
        if ((st = check_keys(o, k, name, err)) || (st = get_num(o, "epsilon", 1, 0, BUDGET_MAX, 0, &f->eps, err))) goto out;
    } else if (!strcmp(name, "basic")) {
        static const char *const k[] = {"filter", "epsilon", "delta", NULL};
        f->kind = DPA_F_BASIC;
        if ((st = check_keys(o, k, name, err)) || (st = get_num(o, "epsilon", 1, 0, BUDGET_MAX, 0, &f->eps, err)) ||
            (st = get_num(o, "delta", 1, 0, 1, 0, &f->delta, err)))
            goto out;
        if (!(f->delta < 1)) {
            st = dpa_error_set(err, DPA_EINVAL, "/delta: must be in [0, 1), got 1");
            goto out;
        }
    } else if (!strcmp(name, "rdp")) {
        static const char *const k[] = {"filter", "rho", "order", "report_delta", NULL};
        f->kind = DPA_F_RDP;
        if ((st = check_keys(o, k, name, err)) || (st = parse_orders(f, o, err)) ||
            (st = get_num(o, "report_delta", 0, 0, 1, 1, &f->report_delta, err)))
            goto out;
    } else if (!strcmp(name, "zcdp")) {
        static const char *const k[] = {"filter", "rho", "report_delta", NULL};
        f->kind = DPA_F_ZCDP;
        f->norders = 1;
        f->rho = malloc(sizeof *f->rho);
        f->spent_rho = calloc(1, sizeof *f->spent_rho);
        if (!f->rho || !f->spent_rho) {
            st = dpa_error_set(err, DPA_ENOMEM, "out of memory");
            goto out;
        }
        if ((st = check_keys(o, k, name, err)) || (st = get_num(o, "rho", 1, 0, BUDGET_MAX, 0, &f->rho[0], err)) ||
            (st = get_num(o, "report_delta", 0, 0, 1, 1, &f->report_delta, err)))
            goto out;
    } else if (!strcmp(name, "gdp")) {
        static const char *const k[] = {"filter", "mu", "report_delta", NULL};
        f->kind = DPA_F_GDP;
        if ((st = check_keys(o, k, name, err)) || (st = get_num(o, "mu", 1, 0, 1e6, 0, &f->mu, err)) ||
            (st = get_num(o, "report_delta", 0, 0, 1, 1, &f->report_delta, err)))
            goto out;
    } else if (!strcmp(name, "gdp-residue") || !strcmp(name, "residue")) {
        /* gdp-residue {"mu": M, "delta": D} (D optional: the approximate-GDP
         * budget G_M (+) R_{0,D}), or the general residue filter's form
         * {"budget": {"tradeoff": {...}}} (filter_budget.c) */
        f->kind = DPA_F_GDP_RESIDUE;
        if ((st = dpa_f_parse_residue(f, o, name, err))) goto out;
    } else if (!strcmp(name, "natural")) {
        static const char *const k[] = {"filter", "mu", "delta", "report_delta", NULL};
        if ((st = check_keys(o, k, name, err))) goto out;
        int hm = json_object_get(o, "mu") != NULL, hd = json_object_get(o, "delta") != NULL;
        if (hm == hd) {
            st = dpa_error_set(err, DPA_EINVAL,
                               "/mu: the natural filter takes exactly one budget: {\"mu\": M} (GDP queries, RF Cor 5) "
                               "or {\"delta\": D} ((0, delta) queries, RF Cor 6)");
            goto out;
        }
        if (hm) {
            f->kind = DPA_F_NATURAL_GDP;
            if ((st = get_num(o, "mu", 1, 0, 1e6, 0, &f->mu, err)) ||
                (st = get_num(o, "report_delta", 0, 0, 1, 1, &f->report_delta, err)))
                goto out;
        } else {
            f->kind = DPA_F_NATURAL_DELTA;
            if (json_object_get(o, "report_delta")) {
                st = dpa_error_set(err, DPA_EINVAL, "/report_delta: not used with a delta budget");
                goto out;
            }
            if ((st = get_num(o, "delta", 1, 0, 1, 0, &f->delta, err))) goto out;
            if (!(f->delta < 1)) {
                st = dpa_error_set(err, DPA_EINVAL, "/delta: must be in [0, 1), got 1");
                goto out;
            }
        }
    } else if (!strcmp(name, "natural-approx")) {
        static const char *const k[] = {"filter", "epsilon", "delta", "allow_degraded", "max_queries", NULL};
        f->kind = DPA_F_NATURAL_APPROX;
        if ((st = check_keys(o, k, name, err))) goto out;
        json_t *ad = json_object_get(o, "allow_degraded");
        if (!json_is_true(ad)) {
            st = dpa_error_set(err, DPA_EINVAL,
                               "/allow_degraded: must be true: the natural (eps, delta) filter is not free (RF Cor 1, "
                               "3); it only guarantees the degraded bound of RF Thm 9.  Use \"basic\" for a free "
                               "(eps, delta) filter");
            goto out;
        }
        if ((st = get_num(o, "epsilon", 1, 0, BUDGET_MAX, 1, &f->eps, err)) ||
            (st = get_num(o, "delta", 1, 0, 0.25, 1, &f->delta, err)) ||
            (st = get_num(o, "max_queries", 1, 1, MAX_QUERIES_MAX, 0, &f->max_queries, err)))
            goto out;
        if (!(f->delta < 0.25)) {
            st = dpa_error_set(err, DPA_EINVAL, "/delta: must be in (0, 0.25) (RF Thm 9), got %.17g", f->delta);
            goto out;
        }
        if (f->max_queries != floor(f->max_queries)) {
            st = dpa_error_set(err, DPA_EINVAL, "/max_queries: must be an integer, got %.17g", f->max_queries);
            goto out;
        }
    } else if (!strcmp(name, "additive-profile")) {
        static const char *const k[] = {"filter", "epsilon", "delta", "max_queries", NULL};
        f->kind = DPA_F_ADDITIVE;
        if ((st = check_keys(o, k, name, err)) || (st = get_num(o, "epsilon", 1, 0, 100, 1, &f->eps, err)) ||
            (st = get_num(o, "delta", 1, 0, 0.25, 1, &f->delta, err)) ||
            (st = get_num(o, "max_queries", 1, 1, 1e5, 0, &f->max_queries, err)))
            goto out;
        if (!(f->delta < 0.25)) {
            st = dpa_error_set(err, DPA_EINVAL, "/delta: must be in (0, 0.25) (RF Thm 15), got %.17g", f->delta);
            goto out;
        }
        if (f->max_queries != floor(f->max_queries)) {
            st = dpa_error_set(err, DPA_EINVAL, "/max_queries: must be an integer, got %.17g", f->max_queries);
            goto out;
        }
        if ((st = dpa_f_additive_setup(f, err))) goto out;
    } else {
        st = dpa_error_set(err, DPA_EINVAL,
                           "/filter: unknown filter \"%s\" (one of pure, basic, rdp, zcdp, gdp, gdp-residue, residue, "
                           "natural, natural-approx, additive-profile)", name);
        goto out;
    }
    /* the budgets as the decimals written (docs/filters.md, "Exact budgets") */
    f->d_eps = dpa_dec_param(f->eps);
    f->d_keep = dpa_dec_sub(dpa_dec_int(1), dpa_dec_param(f->delta), 0); /* exact: D has <= 17 digits */
    f->d_mu2 = dpa_dec_mul(dpa_dec_param(f->mu), dpa_dec_param(f->mu), 0); /* exact */
    if (f->norders) {
        if (!(f->d_rho = malloc(f->norders * sizeof *f->d_rho))) {
            st = dpa_error_set(err, DPA_ENOMEM, "out of memory");
            goto out;
        }
        for (size_t i = 0; i < f->norders; i++) f->d_rho[i] = dpa_dec_param(f->rho[i]);
    }
    reset_state(f);
out:
    json_decref(o);
    if (st) {
        dpa_filter_free(f);
        return NULL;
    }
    return f;
}

char *dpa_filter_config_json(const dpa_filter *f)
{
    if (!f) return NULL;
    dpa_f_sb b = {0};
    dpa_f_sb_add(&b, "{\"filter\":\"%s\"", fname(f));
    if (f->bcurve) {
        dpa_f_bcurve_json(&b, f->bcurve);
        dpa_f_sb_add(&b, ",\"report_delta\":");
        dpa_f_sb_num(&b, f->report_delta);
        dpa_f_sb_add(&b, "}");
        return dpa_f_sb_done(&b);
    }
    switch (f->kind) {
    case DPA_F_PURE:
        dpa_f_sb_add(&b, ",\"epsilon\":");
        dpa_f_sb_num(&b, f->eps);
        break;
    case DPA_F_BASIC:
        dpa_f_sb_add(&b, ",\"epsilon\":");
        dpa_f_sb_num(&b, f->eps);
        dpa_f_sb_add(&b, ",\"delta\":");
        dpa_f_sb_num(&b, f->delta);
        break;
    case DPA_F_RDP:
        if (f->rdp_vector) {
            dpa_f_sb_add(&b, ",\"rho\":[");
            for (size_t i = 0; i < f->norders; i++) {
                if (i) dpa_f_sb_add(&b, ",");
                dpa_f_sb_num(&b, f->rho[i]);
            }
            dpa_f_sb_add(&b, "],\"order\":[");
            for (size_t i = 0; i < f->norders; i++) {
                if (i) dpa_f_sb_add(&b, ",");
                dpa_f_sb_num(&b, f->orders[i]);
            }
            dpa_f_sb_add(&b, "]");
        } else {
            dpa_f_sb_add(&b, ",\"rho\":");
            dpa_f_sb_num(&b, f->rho[0]);
            dpa_f_sb_add(&b, ",\"order\":");
            dpa_f_sb_num(&b, f->orders[0]);
        }
        dpa_f_sb_add(&b, ",\"report_delta\":");
        dpa_f_sb_num(&b, f->report_delta);
        break;
    case DPA_F_ZCDP:
        dpa_f_sb_add(&b, ",\"rho\":");
        dpa_f_sb_num(&b, f->rho[0]);
        dpa_f_sb_add(&b, ",\"report_delta\":");
        dpa_f_sb_num(&b, f->report_delta);
        break;
    case DPA_F_GDP:
    case DPA_F_GDP_RESIDUE:
    case DPA_F_NATURAL_GDP:
        dpa_f_sb_add(&b, ",\"mu\":");
        dpa_f_sb_num(&b, f->mu);
        if (f->kind == DPA_F_GDP_RESIDUE && f->delta > 0) {
            dpa_f_sb_add(&b, ",\"delta\":");
            dpa_f_sb_num(&b, f->delta);
        }
        dpa_f_sb_add(&b, ",\"report_delta\":");
        dpa_f_sb_num(&b, f->report_delta);
        break;
    case DPA_F_NATURAL_DELTA:
        dpa_f_sb_add(&b, ",\"delta\":");
        dpa_f_sb_num(&b, f->delta);
        break;
    case DPA_F_NATURAL_APPROX:
    case DPA_F_ADDITIVE:
        dpa_f_sb_add(&b, ",\"epsilon\":");
        dpa_f_sb_num(&b, f->eps);
        dpa_f_sb_add(&b, ",\"delta\":");
        dpa_f_sb_num(&b, f->delta);
        dpa_f_sb_add(&b, "%s,\"max_queries\":", f->kind == DPA_F_ADDITIVE ? "" : ",\"allow_degraded\":true");
        dpa_f_sb_num(&b, f->max_queries);
        break;
    }
    dpa_f_sb_add(&b, "}");
    return dpa_f_sb_done(&b);
}

dpa_filter *dpa_filter_copy(const dpa_filter *f, dpa_error *err)
{
    if (!f) {
        dpa_error_set(err, DPA_EINVAL, "dpa_filter_copy: NULL filter");
        return NULL;
    }
    char *c = dpa_filter_config_json(f), *s = dpa_filter_state_json(f);
    dpa_filter *g = NULL;
    if (!c || !s) dpa_error_set(err, DPA_ENOMEM, "out of memory");
    else if ((g = dpa_filter_new_json(c, err)) && dpa_filter_set_state_json(g, s, err)) {
        dpa_filter_free(g);
        g = NULL;
    }
    free(c);
    free(s);
    return g;
}

/* ---------------- state ---------------- */
char *dpa_filter_state_json(const dpa_filter *f)
{
    if (!f) return NULL;
    dpa_f_sb b = {0};
    dpa_f_sb_add(&b, "{\"filter\":\"%s\",\"accepted\":%.17g", fname(f), f->accepted);
    switch (f->kind) {
    case DPA_F_PURE:
        dpa_f_sb_dec(&b, "spent_epsilon", f->spent_eps);
        break;
    case DPA_F_BASIC:
    case DPA_F_NATURAL_DELTA:
        if (f->kind == DPA_F_BASIC) dpa_f_sb_dec(&b, "spent_epsilon", f->spent_eps);
        dpa_f_sb_dec(&b, "keep", f->keep);
        break;
    case DPA_F_RDP:
    case DPA_F_ZCDP:
        dpa_f_sb_add(&b, ",\"spent_rho\":[");
        for (size_t i = 0; i < f->norders; i++) dpa_f_sb_dec(&b, i ? "," : "", f->spent_rho[i]);
        dpa_f_sb_add(&b, "]");
        break;
    case DPA_F_GDP:
    case DPA_F_GDP_RESIDUE:
        if (f->has_res) {
            dpa_f_sb_add(&b, ",\"mu_residue\":");
            dpa_f_sb_num(&b, f->mu_res);
        }
        if (f->kind == DPA_F_GDP_RESIDUE && (f->bcurve ? f->has_res : f->delta > 0)) dpa_f_sb_dec(&b, "delta_residue", f->delta_res);
        dpa_f_sb_dec(&b, "mu_squared_spent", f->mu2_spent);
        break;
    case DPA_F_NATURAL_GDP:
        dpa_f_sb_dec(&b, "mu_squared_spent", f->mu2_spent);
        break;
    case DPA_F_ADDITIVE:
        dpa_f_sb_add(&b, ",\"spent\":[");
        for (size_t i = 0; i < f->nlev; i++) dpa_f_sb_dec(&b, i ? "," : "", f->lev_spent[i]);
        dpa_f_sb_add(&b, "]");
        break;
    case DPA_F_NATURAL_APPROX: {
        dpa_f_sb_add(&b, ",\"delta_at_epsilon\":");
        dpa_f_sb_num(&b, f->last_delta);
        dpa_f_sb_add(&b, ",\"queries\":[");
        for (size_t i = 0; i < f->nspecs; i++) {
            json_t *str = json_string(f->specs[i]);
            char *t = str ? json_dumps(str, JSON_ENCODE_ANY) : NULL;
            if (!t) b.bad = 1;
            else dpa_f_sb_add(&b, "%s%s", i ? "," : "", t);
            free(t);
            json_decref(str);
        }
        dpa_f_sb_add(&b, "]");
        break;
    }
    }
    dpa_f_sb_add(&b, "}");
    return dpa_f_sb_done(&b);
}

static dpa_status state_num(json_t *o, const char *key, double lo, double hi, double *out, dpa_error *err)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_number(v)) return dpa_error_set(err, DPA_EINVAL, "state /%s: missing or not a number", key);
    double x = json_number_value(v);
    if (!(x >= lo && x <= hi)) return dpa_error_set(err, DPA_EINVAL, "state /%s: must be in [%g, %g], got %.17g", key, lo, hi, x);
    *out = x;
    return DPA_OK;
}

/* A decimal of the state: a string (exact, as written by
 * dpa_filter_state_json) or, from states written before exact budgets, a
 * number (its exact value rounded toward less budget: up > 0 for an
 * amount spent).  Checked to lie in [lo, hi]. */
static dpa_status state_dec(json_t *v, const char *key, int up, dpa_dec lo, dpa_dec hi, dpa_dec *out, dpa_error *err)
{
    dpa_dec x;
    if (json_is_string(v)) {
        if (!dpa_dec_parse(json_string_value(v), &x))
            return dpa_error_set(err, DPA_EINVAL, "state %s: not a decimal number of at most 36 digits", key);
    } else if (json_is_number(v) && json_number_value(v) >= 0 && isfinite(json_number_value(v))) {
        x = dpa_dec_from_double(json_number_value(v), up);
    } else {
        return dpa_error_set(err, DPA_EINVAL, "state %s: missing, or not a decimal string or a number >= 0", key);
    }
    if (dpa_dec_cmp(x, lo) < 0 || dpa_dec_cmp(x, hi) > 0) {
        char a[DPA_DEC_STRLEN], b[DPA_DEC_STRLEN], c[DPA_DEC_STRLEN];
        dpa_dec_str(lo, a), dpa_dec_str(hi, b), dpa_dec_str(x, c);
        return dpa_error_set(err, DPA_EINVAL, "state %s: must be in [%s, %s], got %s", key, a, b, c);
    }
    *out = x;
    return DPA_OK;
}

/* A state key of the current format or its name before exact budgets
 * (old: a double whose meaning differs, converted by the caller). */
static json_t *state_key(json_t *o, const char *key, const char *old, int *is_old)
{
    json_t *v = json_object_get(o, key);
    *is_old = 0;
    if (!v && old && (v = json_object_get(o, old))) *is_old = 1;
    return v;
}

dpa_status dpa_f_natural_restore(dpa_filter *f, json_t *queries, dpa_error *err);

dpa_status dpa_filter_set_state_json(dpa_filter *f, const char *state, dpa_error *err)
{
    dpa_error_clear(err);
    if (!f || !state) return dpa_error_set(err, DPA_EINVAL, "dpa_filter_set_state_json: NULL argument");
    json_error_t je;
    json_t *o = json_loads(state, JSON_REJECT_DUPLICATES, &je);
    if (!o) return dpa_error_set(err, DPA_EINVAL, "state: invalid JSON at line %d column %d: %s", je.line, je.column, je.text);
    dpa_status st = DPA_OK;
    /* parse into a scratch copy: the filter is unchanged on error */
    dpa_filter t = *f;
    dpa_dec *rho = NULL, zero = dpa_dec_int(0), one = dpa_dec_int(1);
    json_t *v;
    int old;
    if (!json_is_object(o)) {
        st = dpa_error_set(err, DPA_EINVAL, "state: must be a JSON object");
        goto out;
    }
    json_t *fn = json_object_get(o, "filter");
    if (!json_is_string(fn) || strcmp(json_string_value(fn), fname(f))) {
        st = dpa_error_set(err, DPA_EINVAL, "state /filter: must be \"%s\" (the filter's configuration)", fname(f));
        goto out;
    }
    /* the current keys, then those of states written before exact budgets */
    const char *keys_pure[] = {"filter", "accepted", "spent_epsilon", NULL},
               *keys_basic[] = {"filter", "accepted", "spent_epsilon", "keep", "log_keep", NULL},
               *keys_nd[] = {"filter", "accepted", "keep", "log_keep", NULL},
               *keys_rho[] = {"filter", "accepted", "spent_rho", NULL},
               *keys_mu[] = {"filter", "accepted", "mu_squared_spent", "mu_residue", "mu_remaining", "delta_residue", NULL},
               *keys_ng[] = {"filter", "accepted", "mu_squared_spent", "mu_spent", NULL},
               *keys_na[] = {"filter", "accepted", "delta_at_epsilon", "queries", NULL},
               *keys_ad[] = {"filter", "accepted", "spent", NULL};
    const char *const *keys = f->kind == DPA_F_PURE ? keys_pure : f->kind == DPA_F_BASIC ? keys_basic
                              : f->kind == DPA_F_NATURAL_DELTA                           ? keys_nd
                              : (f->kind == DPA_F_RDP || f->kind == DPA_F_ZCDP)          ? keys_rho
                              : (f->kind == DPA_F_GDP || f->kind == DPA_F_GDP_RESIDUE)   ? keys_mu
                              : f->kind == DPA_F_NATURAL_GDP                             ? keys_ng
                              : f->kind == DPA_F_ADDITIVE                                ? keys_ad
                                                                                         : keys_na;
    {
        const char *key;
        json_object_foreach(o, key, v)
        {
            int ok = 0;
            for (const char *const *a = keys; *a; a++)
                if (!strcmp(*a, key)) ok = 1;
            if (!ok) {
                st = dpa_error_set(err, DPA_EINVAL, "state /%s: unknown key for filter \"%s\"", key, fname(f));
                goto out;
            }
        }
    }
    if ((st = state_num(o, "accepted", 0, 9e15, &t.accepted, err))) goto out;
    if (t.accepted != floor(t.accepted)) {
        st = dpa_error_set(err, DPA_EINVAL, "state /accepted: must be an integer");
        goto out;
    }
    if (json_object_size(o) != (size_t)(3 + (f->kind == DPA_F_BASIC || f->kind == DPA_F_NATURAL_APPROX ||
                                         json_object_get(o, "mu_residue") != NULL) +
                                        (json_object_get(o, "delta_residue") != NULL))) {
        st = dpa_error_set(err, DPA_EINVAL, "state: must have the keys of filter \"%s\" once each", fname(f));
        goto out;
    }
    switch (f->kind) {
    case DPA_F_PURE:
        st = state_dec(json_object_get(o, "spent_epsilon"), "/spent_epsilon", 1, zero, f->d_eps, &t.spent_eps, err);
        break;
    case DPA_F_BASIC:
        if ((st = state_dec(json_object_get(o, "spent_epsilon"), "/spent_epsilon", 1, zero, f->d_eps, &t.spent_eps, err)))
            break;
        /* fallthrough */
    case DPA_F_NATURAL_DELTA:
        v = state_key(o, "keep", "log_keep", &old);
        if (old) { /* log(1 - delta), rounded down: keep = exp of it, rounded down */
            double lk = json_is_number(v) ? json_number_value(v) : NAN;
            if (!(lk <= 0 && lk >= -1e300)) {
                st = dpa_error_set(err, DPA_EINVAL, "state /log_keep: must be a number <= 0");
                break;
            }
            t.keep = lk == 0 ? dpa_dec_int(1) : dpa_dec_from_double(exp(lk) * (1 - 1e-15), 0);
            if (dpa_dec_cmp(t.keep, f->d_keep) < 0) st = dpa_error_set(err, DPA_EINVAL, "state /log_keep: beyond the budget's delta");
        } else {
            st = state_dec(v, "/keep", 0, f->d_keep, one, &t.keep, err);
        }
        break;
    case DPA_F_RDP:
    case DPA_F_ZCDP: {
        json_t *a = json_object_get(o, "spent_rho");
        if (!json_is_array(a) || json_array_size(a) != f->norders) {
            st = dpa_error_set(err, DPA_EINVAL, "state /spent_rho: must be an array of %zu numbers", f->norders);
            break;
        }
        rho = malloc(f->norders * sizeof *rho);
        if (!rho) {
            st = dpa_error_set(err, DPA_ENOMEM, "out of memory");
            break;
        }
        for (size_t i = 0; i < f->norders && !st; i++) {
            char k[40];
            snprintf(k, sizeof k, "/spent_rho/%zu", i);
            st = state_dec(json_array_get(a, i), k, 1, zero, f->d_rho[i], &rho[i], err);
        }
        break;
    }
    case DPA_F_GDP:
    case DPA_F_GDP_RESIDUE:
        /* approximate GDP: the residue's delta, in [0, D], present exactly when D > 0 */
        v = json_object_get(o, "delta_residue");
        if ((v != NULL) != (f->kind == DPA_F_GDP_RESIDUE &&
                            (f->bcurve ? json_object_get(o, "mu_residue") != NULL : f->delta > 0))) {
            st = dpa_error_set(err, DPA_EINVAL, "state /delta_residue: %s",
                               v ? (f->bcurve ? "only with mu_residue" : "only with a delta budget") : "missing (a number)");
            break;
        }
        if (v && (st = state_dec(v, "/delta_residue", 0, zero, f->bcurve ? dpa_dec_int(1) : dpa_dec_param(f->delta),
                                 &t.delta_res, err)))
            break;
        v = state_key(o, "mu_squared_spent", "mu_remaining", &old);
        if (old) { /* the remaining mu (a double): the base, nothing spent since */
            double x = json_is_number(v) ? json_number_value(v) : NAN;
            if (!(x >= 0 && x <= f->mu)) {
                st = dpa_error_set(err, DPA_EINVAL, "state /mu_remaining: must be a number in [0, %.17g]", f->mu);
                break;
            }
            t.has_res = x < f->mu;
            t.mu_res = t.has_res ? x : 0;
            t.mu2_spent = zero;
            break;
        }
        if ((v = json_object_get(o, "mu_residue"))) {
            double x = json_is_number(v) ? json_number_value(v) : NAN;
            double mx = f->bcurve ? 1e6 : f->mu; /* a curve's residues: at most CURVE_MU_MAX (filter_dominance.c) */
            if (!(x >= 0 && x < mx)) {
                st = dpa_error_set(err, DPA_EINVAL, "state /mu_residue: must be a number in [0, %.17g)", mx);
                break;
            }
            t.has_res = 1;
            t.mu_res = x + 0.0;
        } else {
            t.has_res = 0;
            t.mu_res = 0;
        }
        if ((st = state_dec(json_object_get(o, "mu_squared_spent"), "/mu_squared_spent", 1, zero,
                            f->bcurve ? dpa_dec_param(1e12) : f->d_mu2, &t.mu2_spent, err))) /* a curve: checked below */
            break;
        dpa_dec base = t.has_res ? dpa_dec_from_double(t.mu_res, 1) : dpa_dec_int(0);
        if (dpa_dec_cmp(t.mu2_spent, t.has_res ? dpa_dec_mul(base, base, 1) : f->d_mu2) > 0)
            st = dpa_error_set(err, DPA_EINVAL, "state /mu_squared_spent: beyond the remaining budget");
        break;
    case DPA_F_NATURAL_GDP:
        v = state_key(o, "mu_squared_spent", "mu_spent", &old);
        if (old) { /* the spent mu: its square rounded up */
            dpa_dec m;
            if (!(st = state_dec(v, "/mu_spent", 1, zero, dpa_dec_from_double(f->mu, 1), &m, err))) {
                t.mu2_spent = dpa_dec_mul(m, m, 1);
                if (dpa_dec_cmp(t.mu2_spent, f->d_mu2) > 0) st = dpa_error_set(err, DPA_EINVAL, "state /mu_spent: beyond the budget");
            }
        } else {
            st = state_dec(v, "/mu_squared_spent", 1, zero, f->d_mu2, &t.mu2_spent, err);
        }
        break;
    case DPA_F_ADDITIVE: {
        json_t *a = json_object_get(o, "spent");
        if (!json_is_array(a) || json_array_size(a) != f->nlev) {
            st = dpa_error_set(err, DPA_EINVAL, "state /spent: must be an array of %zu decimals (the levels)", f->nlev);
            break;
        }
        if (t.accepted > f->max_queries) {
            st = dpa_error_set(err, DPA_EINVAL, "state /accepted: beyond max_queries");
            break;
        }
        rho = malloc(f->nlev * sizeof *rho);
        if (!rho) {
            st = dpa_error_set(err, DPA_ENOMEM, "out of memory");
            break;
        }
        for (size_t i = 0; i < f->nlev && !st; i++) {
            char k[40];
            snprintf(k, sizeof k, "/spent/%zu", i);
            st = state_dec(json_array_get(a, i), k, 1, zero, f->lev_budget[i], &rho[i], err);
        }
        break;
    }
    case DPA_F_NATURAL_APPROX: {
        if ((st = state_num(o, "delta_at_epsilon", 0, f->delta, &t.last_delta, err))) break;
        t.last_delta += 0.0; /* never -0 */
        json_t *q = json_object_get(o, "queries");
        if (!json_is_array(q) || (double)json_array_size(q) != t.accepted) {
            st = dpa_error_set(err, DPA_EINVAL, "state /queries: must be an array of the %.17g accepted queries", t.accepted);
            break;
        }
        /* restores specs into f itself after validation (it validates all first) */
        dpa_filter scratch = *f;
        scratch.specs = NULL;
        scratch.nspecs = scratch.capspecs = 0;
        if ((st = dpa_f_natural_restore(&scratch, q, err))) break;
        for (size_t i = 0; i < f->nspecs; i++) free(f->specs[i]);
        free(f->specs);
        t.specs = scratch.specs;
        t.nspecs = scratch.nspecs;
        t.capspecs = scratch.capspecs;
        t.nb = scratch.nb;
        break;
    }
    }
    if (st) goto out;
    if (rho && f->kind == DPA_F_ADDITIVE) memcpy(f->lev_spent, rho, f->nlev * sizeof *rho);
    else if (rho) memcpy(f->spent_rho, rho, f->norders * sizeof *rho);
    t.spent_rho = f->spent_rho;
    *f = t;
out:
    free(rho);
    json_decref(o);
    return st;
}

/* ---------------- decisions ---------------- */
dpa_status dpa_filter_request(dpa_filter *f, const dpa_spec *query, dpa_filter_decision *out, dpa_error *err)
{
    dpa_error_clear(err);
    if (!f || !query || !out) return dpa_error_set(err, DPA_EINVAL, "dpa_filter_request: NULL argument");
    out->accepted = 0;
    out->reason[0] = 0;
    switch (f->kind) {
    case DPA_F_PURE:
    case DPA_F_BASIC:
    case DPA_F_RDP:
    case DPA_F_ZCDP:
        return dpa_f_request_scalar(f, query, out, err);
    case DPA_F_GDP:
    case DPA_F_GDP_RESIDUE:
        return dpa_f_request_gdp(f, query, out, err);
    case DPA_F_ADDITIVE:
        return dpa_f_request_additive(f, query, out, err);
    default:
        return dpa_f_request_natural(f, query, out, err);
    }
}
