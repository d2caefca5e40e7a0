/* dpacct command-line front end: what `--method gdp` and `--method clt` print
 * besides the result: the composition's CLT quantities (mu, kl, kappa2,
 * kbar3, gamma; docs/clt.md §3-§5) and, for gdp, whether the estimate lies in
 * the CLT regime and method auto's certified bracket at the same value, so
 * that the estimate's error is measured, not guessed (docs/clt.md §4).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

/* The regime threshold of dpa_clt_info.clt_regime (accountant.h). */
#define CLT_REGIME_GAMMA 0.05

void cli_clt_clear(cli_clt_out *c)
{
    free(c->check);
    c->check = NULL;
}

dpa_status cli_clt_collect(const cli_args *a, const dpa_accountant *acc, const dpa_spec *spec,
                           cli_clt_out *c, dpa_error *err)
{
    memset(c, 0, sizeof *c);
    c->n = a->nvalues;
    dpa_status st = dpa_accountant_clt_info(acc, &c->info, err);
    if (st || dpa_accountant_method(acc) != DPA_METHOD_GDP) return st;
    /* the check: method auto at every value; any failure only drops it */
    dpa_options o = a->opt;
    o.method = DPA_METHOD_AUTO;
    dpa_error e2;
    dpa_error_clear(&e2);
    dpa_accountant *chk = dpa_accountant_new(spec, &o, &e2);
    dpa_result *r = chk ? malloc(c->n * sizeof *r) : NULL;
    int ok = r != NULL;
    for (size_t i = 0; ok && i < c->n; i++) {
        ok = (a->cmd == CLI_DELTA ? dpa_accountant_delta(chk, a->values[i], &r[i], &e2)
                                  : dpa_accountant_epsilon(chk, a->values[i], &r[i], &e2)) == DPA_OK &&
             r[i].certified;
    }
    if (ok) {
        c->check = r;
        c->check_method = dpa_accountant_method(chk);
    } else {
        free(r);
    }
    dpa_accountant_free(chk);
    return DPA_OK;
}

size_t cli_value_index(const cli_args *a, double at)
{
    for (size_t i = 0; i < a->nvalues; i++)
        if (a->values[i] == at) return i;
    return 0;
}

static void print_dir(const dpa_clt_info *c, int d)
{
    printf("kl = %.6g, kappa2 = %.6g, kbar3 <= %.6g, gamma = %.4g", c->kl[d], c->kappa2[d], c->kbar3[d],
           c->gamma[d]);
    if (c->gamma_envelope[d] < c->gamma[d]) printf(" (i.i.d. constants: %.4g)", c->gamma_envelope[d]);
}

void cli_clt_human(const cli_args *a, size_t i, const dpa_result *r)
{
    const cli_clt_out *o = a->clt;
    if (!o) return;
    const dpa_clt_info *c = &o->info;
    int eps = a->cmd != CLI_DELTA;
    printf("CLT: mu = %.6g (evaluated in [%.6g, %.6g])", c->mu, c->mu_lower, c->mu_upper);
    if (!isnan(c->limit_mu)) printf(", its T -> inf limit %.6g", c->limit_mu);
    fputs("; ", stdout);
    if (c->symmetric) {
        print_dir(c, 0);
    } else {
        fputs("remove: ", stdout);
        print_dir(c, 0);
        fputs("; add: ", stdout);
        print_dir(c, 1);
    }
    putchar('\n');
    if (r->method != DPA_METHOD_GDP) return;
    double g = fmax(c->gamma[0], c->gamma[1]);
    double d = eps ? a->values[i] : r->upper;
    if (!c->clt_regime)
        printf("warning: outside the CLT regime (Berry-Esseen gamma = %.3g > %g, docs/clt.md §4): this estimate "
               "was measured up to 16 times below the truth in this regime; do not use it as a bound\n",
               g, CLT_REGIME_GAMMA);
    else if (d < g)
        printf("warning: delta is below the Berry-Esseen gamma = %.3g: the CLT does not control this tail "
               "(measured up to 1.4 times below the truth inside the regime, docs/clt.md §4)\n",
               g);
    if (!o->check) return;
    const dpa_result *k = &o->check[i];
    char lo[CLI_NUM_BUF], up[CLI_NUM_BUF];
    int digits = cli_digits_for(k->upper, k->lower);
    cli_format(up, sizeof up, k->upper, digits, DPA_ROUND_UP);
    cli_format(lo, sizeof lo, k->lower, digits, DPA_ROUND_DOWN);
    printf("check: method auto (%s) certifies %s in [%s, %s]", dpa_method_name(k->method), eps ? "epsilon" : "delta",
           lo, up);
    if (r->upper < k->lower)
        printf(": this estimate is %.3g times below the certified lower bound\n",
               r->upper > 0 ? k->lower / r->upper : INFINITY);
    else if (r->upper <= k->upper)
        puts(": this estimate lies inside the certified bracket");
    else
        puts(": this estimate lies above the certified upper bound");
}

static json_t *num(double x)
{
    if (isnan(x)) return json_null();
    return isinf(x) && x > 0 ? json_string("inf") : json_real(x);
}

static json_t *pair(const double v[2])
{
    json_t *arr = json_array();
    if (arr && (json_array_append_new(arr, num(v[0])) || json_array_append_new(arr, num(v[1])))) {
        json_decref(arr);
        return NULL;
    }
    return arr;
}

static void set(json_t *o, const char *key, json_t *v, int *ok)
{
    if (!v || !o || json_object_set_new(o, key, v) != 0) *ok = 0;
}

json_t *cli_clt_json(const cli_args *a, size_t i, const dpa_result *r)
{
    const cli_clt_out *o = a->clt;
    const dpa_clt_info *c = &o->info;
    json_t *j = json_object();
    int ok = j != NULL;
    set(j, "mu", num(c->mu), &ok);
    set(j, "mu_lower", num(c->mu_lower), &ok);
    set(j, "mu_upper", num(c->mu_upper), &ok);
    set(j, "limit_mu", num(c->limit_mu), &ok);
    set(j, "kl", pair(c->kl), &ok);
    set(j, "kappa2", pair(c->kappa2), &ok);
    set(j, "kbar3", pair(c->kbar3), &ok);
    set(j, "gamma", pair(c->gamma), &ok);
    set(j, "gamma_envelope", pair(c->gamma_envelope), &ok);
    set(j, "clt_regime", json_boolean(c->clt_regime), &ok);
    if (r->method == DPA_METHOD_GDP && o->check) {
        const dpa_result *k = &o->check[i];
        json_t *cj = json_object();
        set(cj, "method", json_string(dpa_method_name(k->method)), &ok);
        set(cj, "lower", num(k->lower), &ok);
        set(cj, "upper", num(k->upper), &ok);
        /* how many times the estimate is below the certified lower bound (<= 1: it is not) */
        set(cj, "ratio", num(r->upper > 0 ? k->lower / r->upper : k->lower > 0 ? INFINITY : 1), &ok);
        set(j, "check", cj, &ok);
    }
    if (!ok) {
        json_decref(j);
        return NULL;
    }
    return j;
}
