/* dpacct command-line front end: `dpacct tail`, the bracket of the privacy
 * loss's survival function P(L > t) and CDF at one point
 * (dpa_accountant_loss_tail, docs/loss_tail.md).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

static json_t *tail_json(const cli_args *a, const dpa_loss_tail *r)
{
    json_t *o = json_object();
    int ok = o != NULL;
    struct { const char *k; json_t *v; } kv[] = {
        {"method", json_string(dpa_method_name(r->method))},
        {"loss", json_real(r->t)},
        {"direction", json_string(dpa_direction_name(r->direction))},
        {"sf_upper", json_real(r->sf_upper)},
        {"sf_lower", json_real(r->sf_lower)},
        {"cdf_upper", json_real(r->cdf_upper)},
        {"cdf_lower", json_real(r->cdf_lower)},
        {"certified", json_boolean(r->certified)},
        {"note", json_string(r->note)},
    };
    for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++)
        if (!kv[i].v || !o || json_object_set_new(o, kv[i].k, kv[i].v) != 0) ok = 0;
    if (ok && a->spec_name[0]) ok = json_object_set_new(o, "name", json_string(a->spec_name)) == 0;
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static void print_pair(const char *name, double up, double lo)
{
    char us[CLI_NUM_BUF], ls[CLI_NUM_BUF];
    int digits = cli_digits_for(up, lo);
    cli_format(us, sizeof us, up, digits, DPA_ROUND_UP);
    cli_format(ls, sizeof ls, lo, digits, DPA_ROUND_DOWN);
    printf("%s in [%s, %s]\n", name, ls, us);
}

int cli_run_tail(const cli_args *a, const char *spec_text)
{
    int rc = CLI_EXIT_OK;
    dpa_accountant *acc = cli_make_accountant(a, spec_text, &rc);
    if (!acc) return rc;
    dpa_loss_tail r;
    dpa_error err;
    dpa_error_clear(&err);
    dpa_status s = dpa_accountant_loss_tail(acc, a->loss, a->direction, &r, &err);
    dpa_accountant_free(acc);
    if (s != DPA_OK) return cli_fail_status(s, &err);
    if (!(r.sf_lower >= 0 && r.sf_lower <= r.sf_upper && r.sf_upper <= 1 && r.cdf_lower >= 0 &&
          r.cdf_lower <= r.cdf_upper && r.cdf_upper <= 1))
        return cli_library_bug("loss tail: a bracket outside [0, 1] or reversed");
    if (a->json) {
        json_t *o = tail_json(a, &r);
        char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
        json_decref(o);
        if (!text) return cli_fail(CLI_EXIT_FAIL, "out of memory while building the JSON output");
        puts(text);
        free(text);
        return CLI_EXIT_OK;
    }
    if (a->spec_name[0]) printf("spec: %s\n", a->spec_name);
    char t[CLI_NUM_BUF];
    cli_format_shortest(t, sizeof t, a->loss);
    char name[2 * CLI_NUM_BUF];
    snprintf(name, sizeof name, "P(L > %s)", t);
    print_pair(name, r.sf_upper, r.sf_lower);
    snprintf(name, sizeof name, "P(L <= %s)", t);
    print_pair(name, r.cdf_upper, r.cdf_lower);
    printf("L = log dP/dQ under P, direction %s; method %s (%s)\n", dpa_direction_name(r.direction),
           dpa_method_name(r.method), r.certified ? "certified" : "estimate, not a bound");
    if (r.note[0]) printf("note: %s\n", r.note);
    return CLI_EXIT_OK;
}
