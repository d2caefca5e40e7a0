/* dpacct command-line front end: running a command against the library.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Every number the library returns is checked before anything is printed:
 * a NaN, an infinity where none is allowed, or bounds in the wrong order are
 * library bugs and end the run with exit status 1 instead of being shown. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cli.h"

dpa_accountant *cli_make_accountant(const cli_args *a, const char *text, int *rc)
{
    dpa_error err;
    dpa_spec *spec;
    dpa_accountant *acc;

    dpa_error_clear(&err);
    spec = dpa_spec_from_json(text, &err);
    if (!spec) {
        *rc = cli_fail_status(DPA_EINVAL, &err);
        return NULL;
    }
    acc = dpa_accountant_new(spec, &a->opt, &err);
    dpa_spec_free(spec);
    if (!acc)
        *rc = cli_fail_status(DPA_EINVAL, &err);
    return acc;
}

/* epsilon --delta D1,D2,... / delta --epsilon E1,E2,...: the spec parsed
 * once, each value answered by an accountant of its own, exactly as a call
 * with that value alone would answer it (the PLD accountant refines its grid
 * in a query and keeps it, so on a shared accountant later answers would
 * depend on the earlier queries); everything is checked before anything is
 * printed. */
static int run_query(const cli_args *a, const char *text)
{
    int rc = CLI_EXIT_OK, eps_query = a->cmd == CLI_EPSILON, gdp = eps_query && a->gdp_mu;
    size_t n = a->nvalues;
    dpa_error err;
    dpa_status s = DPA_OK;
    dpa_result *res;
    dpa_gdp_mu *g;
    dpa_spec *spec;
    /* gdp and clt also print the CLT quantities (clt_out.c), through a copy
     * of the arguments that points at them */
    int clt = !a->all_methods && (a->opt.method == DPA_METHOD_GDP || a->opt.method == DPA_METHOD_CLT);
    cli_clt_out co;
    cli_args *ac = NULL;

    memset(&co, 0, sizeof co);
    dpa_error_clear(&err);
    spec = dpa_spec_from_json(text, &err);
    if (!spec)
        return cli_fail_status(DPA_EINVAL, &err);
    res = malloc(n * sizeof *res);
    g = malloc(n * sizeof *g);
    if (!res || !g) {
        free(res);
        free(g);
        dpa_spec_free(spec);
        return cli_fail(CLI_EXIT_FAIL, "out of memory");
    }
    for (size_t i = 0; i < n && s == DPA_OK; i++) {
        dpa_error_clear(&err);
        dpa_accountant *acc = dpa_accountant_new(spec, &a->opt, &err);
        if (!acc) {
            s = err.status != DPA_OK ? err.status : DPA_EINVAL;
            break;
        }
        cli_poison_result(&res[i]);
        dpa_error_clear(&err);
        s = eps_query ? dpa_accountant_epsilon(acc, a->values[i], &res[i], &err)
                      : dpa_accountant_delta(acc, a->values[i], &res[i], &err);
        /* with --gdp-mu, epsilon queries also report the smallest mu-GDP
         * (from the same accountant; a failure there is reported in its
         * note, not as an error of the query).  Asked for, not by default:
         * on a PLD grid its ladder of queries costs more than the epsilon
         * itself (DP-SGD: +20 ms, 10^6 steps: +670 ms) */
        if (s == DPA_OK && gdp) {
            dpa_error gerr;
            dpa_error_clear(&gerr);
            dpa_accountant_gdp_mu(acc, &g[i], &gerr);
        }
        if (s == DPA_OK && clt && i == 0)
            s = cli_clt_collect(a, acc, spec, &co, &err);
        dpa_accountant_free(acc);
    }
    dpa_spec_free(spec);
    if (s == DPA_OK && clt) {
        ac = malloc(sizeof *ac);
        if (!ac)
            s = dpa_error_set(&err, DPA_ENOMEM, "out of memory");
        else {
            *ac = *a;
            ac->clt = &co;
            a = ac;
        }
    }
    if (s != DPA_OK)
        rc = cli_fail_status(s, &err);
    for (size_t i = 0; i < n && rc == CLI_EXIT_OK; i++) {
        rc = cli_check_result(&res[i], eps_query);
        if (rc == CLI_EXIT_OK && gdp)
            rc = cli_check_gdp_mu(&g[i]);
    }
    if (rc == CLI_EXIT_OK)
        rc = cli_print_queries(a, res, n, gdp ? g : NULL);
    free(res);
    free(g);
    cli_clt_clear(&co);
    free(ac);
    return rc;
}

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* --method all: every method on the same query, side by side.  A method
 * that cannot take the spec is listed with its reason; the run fails only
 * if none can (exit 2 for refusals, 1 for failures). */
static int run_all(const cli_args *a, const char *text)
{
    static const dpa_method methods[] = {DPA_METHOD_EXACT, DPA_METHOD_PLD, DPA_METHOD_PHI,
                                         DPA_METHOD_RDP,   DPA_METHOD_CLT, DPA_METHOD_GDP};
    enum { NM = sizeof methods / sizeof *methods };
    cli_method_row rows[NM];
    int eps_query = a->cmd == CLI_EPSILON, any = 0, worst = CLI_EXIT_USAGE;
    dpa_error err;

    dpa_error_clear(&err);
    dpa_spec *spec = dpa_spec_from_json(text, &err);
    if (!spec)
        return cli_fail_status(DPA_EINVAL, &err);
    for (size_t i = 0; i < NM; i++) {
        cli_method_row *row = &rows[i];
        dpa_options o = a->opt;
        memset(row, 0, sizeof *row);
        row->method = o.method = methods[i];
        dpa_error_clear(&err);
        double t0 = now_seconds();
        dpa_accountant *acc = dpa_accountant_new(spec, &o, &err);
        dpa_status s = acc ? DPA_OK : (err.status ? err.status : DPA_EINVAL);
        cli_poison_result(&row->result);
        if (acc) {
            s = eps_query ? dpa_accountant_epsilon(acc, a->delta, &row->result, &err)
                          : dpa_accountant_delta(acc, a->epsilon, &row->result, &err);
            dpa_accountant_free(acc);
        }
        row->seconds = now_seconds() - t0;
        if (s != DPA_OK) {
            snprintf(row->why, sizeof row->why, "%s", err.message[0] ? err.message : dpa_status_string(s));
            if (cli_exit_for(s) != CLI_EXIT_USAGE)
                worst = CLI_EXIT_FAIL;
            continue;
        }
        int rc = cli_check_result(&row->result, eps_query);
        if (rc != CLI_EXIT_OK) {
            dpa_spec_free(spec);
            return rc;
        }
        row->ok = any = 1;
    }
    dpa_spec_free(spec);
    if (!any) {
        for (size_t i = 0; i < NM; i++)
            cli_fail(worst, "%s: %s", dpa_method_name(rows[i].method), rows[i].why);
        return worst;
    }
    return cli_print_methods(a, rows, NM);
}

/* The i-th of n evenly spaced points from `from` to `to` (both included).
 * The weighted-sum form gives the nearest double to the exact point when
 * the ends are short decimals (0, 2, 21 points -> 0.1, 0.2, ...). */
static double grid_point(double from, double to, size_t i, size_t n)
{
    double k = (double)(n - 1), x = (from * (double)(n - 1 - i) + to * (double)i) / k;
    if (i == 0)
        return from;
    if (i == n - 1)
        return to;
    if (!isfinite(x)) { /* huge ends: avoid the overflowing products */
        double t = (double)i / k;
        x = from * (1 - t) + to * t;
    }
    return x;
}

/* The i-th of n log-spaced points from `from` to `to` (both > 0, both
 * included): 10 to the evenly spaced points between their decimal logs (so
 * decades land on powers of ten: 0.01 to 10 in 4 points is 0.01, 0.1, 1, 10). */
static double log_grid_point(double from, double to, size_t i, size_t n)
{
    if (i == 0)
        return from;
    if (i == n - 1)
        return to;
    return pow(10, grid_point(log10(from), log10(to), i, n));
}

/* The method used for the profile: the profile call reports no method, so
 * for --method auto ask one delta query (at the first point) which one it
 * uses. */
static int profile_method(const cli_args *a, dpa_accountant *acc, double eps0, dpa_method *m)
{
    dpa_error err;
    dpa_result r;
    dpa_status s;

    if (a->opt.method != DPA_METHOD_AUTO) {
        *m = a->opt.method;
        return CLI_EXIT_OK;
    }
    cli_poison_result(&r);
    dpa_error_clear(&err);
    s = dpa_accountant_delta(acc, eps0, &r, &err);
    if (s != DPA_OK)
        return cli_fail_status(s, &err);
    if (!cli_method_ok(r.method))
        return cli_library_bug("no method");
    *m = r.method;
    return CLI_EXIT_OK;
}

static int check_profile(const cli_profile_out *p)
{
    for (size_t i = 0; i < p->n; i++) {
        if (!isfinite(p->upper[i]) || !isfinite(p->lower[i]))
            return cli_library_bug(isnan(p->upper[i]) || isnan(p->lower[i])
                               ? "a NaN delta bound" : "an infinite delta bound");
        if (!(p->lower[i] <= p->upper[i]))
            return cli_library_bug("a lower bound above the upper bound");
    }
    return CLI_EXIT_OK;
}

static int profile_compute(const cli_args *a, dpa_accountant *acc, double *eps, double *up,
                           double *lo)
{
    cli_profile_out p = {a->points, eps, up, lo, DPA_METHOD_AUTO};
    dpa_error err;
    dpa_status s;
    int rc;

    for (size_t i = 0; i < a->points; i++) {
        eps[i] = a->log_scale ? log_grid_point(a->from, a->to, i, a->points)
                              : grid_point(a->from, a->to, i, a->points);
        up[i] = lo[i] = NAN;
    }
    dpa_error_clear(&err);
    s = dpa_accountant_profile(acc, eps, a->points, up, lo, &err);
    if (s != DPA_OK)
        return cli_fail_status(s, &err);
    rc = check_profile(&p);
    if (rc == CLI_EXIT_OK)
        rc = profile_method(a, acc, eps[0], &p.method);
    return rc != CLI_EXIT_OK ? rc : cli_print_profile(a, &p);
}

static int run_profile(const cli_args *a, const char *text)
{
    int rc = CLI_EXIT_OK;
    dpa_accountant *acc = cli_make_accountant(a, text, &rc);
    double *eps, *up, *lo;

    if (!acc)
        return rc;
    eps = malloc(a->points * sizeof *eps);
    up = malloc(a->points * sizeof *up);
    lo = malloc(a->points * sizeof *lo);
    if (eps && up && lo)
        rc = profile_compute(a, acc, eps, up, lo);
    else
        rc = cli_fail(CLI_EXIT_FAIL, "out of memory for %zu profile points", a->points);
    free(eps);
    free(up);
    free(lo);
    dpa_accountant_free(acc);
    return rc;
}

static int check_calibration(const cli_args *a, const dpa_calibration *c)
{
    int rc = cli_check_result(&c->at_value, 1);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (!isfinite(c->value))
        return cli_library_bug("a non-finite calibrated value");
    if (isinf(c->infeasible))
        return cli_library_bug("an infinite infeasible value");
    if (!(c->at_value.upper <= a->epsilon))
        return cli_library_bug("a calibrated value that does not meet the target");
    if (c->evaluations < 0)
        return cli_library_bug("a negative evaluation count");
    return CLI_EXIT_OK;
}

static int run_calibrate(const cli_args *a, const char *text)
{
    dpa_error err;
    dpa_template *t;
    dpa_param_info info;
    dpa_calibration c;
    dpa_status s;
    int rc;

    dpa_error_clear(&err);
    t = dpa_template_from_json(text, &err);
    if (!t)
        return cli_fail_status(DPA_EINVAL, &err);
    info = *dpa_template_param(t);
    memset(&c, 0, sizeof c);
    cli_poison_result(&c.at_value);
    c.value = NAN;
    c.infeasible = -HUGE_VAL; /* NAN is a legitimate "none"; -inf is never */
    c.evaluations = -1;
    s = dpa_calibrate(t, a->epsilon, a->delta, &a->opt, a->tolerance, &c, &err);
    dpa_template_free(t);
    if (s != DPA_OK)
        return cli_fail_status(s, &err);
    rc = check_calibration(a, &c);
    return rc != CLI_EXIT_OK ? rc : cli_print_calibration(a, &info, &c);
}

int cli_run(const cli_args *a, const char *spec_text)
{
    switch (a->cmd) {
    case CLI_EPSILON:
    case CLI_DELTA:
        return a->all_methods ? run_all(a, spec_text) : run_query(a, spec_text);
    case CLI_PROFILE:
        return run_profile(a, spec_text);
    case CLI_CALIBRATE:
        return run_calibrate(a, spec_text);
    default:
        return cli_fail(CLI_EXIT_FAIL, "internal error: no such command");
    }
}
