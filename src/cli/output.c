/* dpacct command-line front end: human-readable and JSON output.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Human output rounds every upper bound up and every lower bound down to the
 * digits shown (format.c).  JSON output is one compact object per run, built
 * completely before it is written; numbers are exact doubles (%.17g), +inf
 * (epsilon and gdp_mu bounds) is the string "inf". */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"

const char *cli_direction_word(dpa_direction d)
{
    return d == DPA_DIR_REMOVE ? "remove" : d == DPA_DIR_ADD ? "add" : "both";
}

/* ---------------------------------------------------------------- JSON --- */

/* A bound: a number, or "inf" for +infinity. */
static json_t *json_bound(double x)
{
    return isinf(x) && x > 0 ? json_string("inf") : json_real(x);
}

/* Set o[key] = v (stealing v); clears *ok if v is NULL or the set fails. */
static void put(json_t *o, const char *key, json_t *v, int *ok)
{
    if (!v || json_object_set_new(o, key, v) != 0)
        *ok = 0;
}

/* The spec's label (docs/spec.md, Labels) as "name". */
static void put_name(json_t *o, const cli_args *a, int *ok)
{
    if (o && a->spec_name[0]) {
        json_t *v = json_string(a->spec_name);
        if (!v || json_object_set_new(o, "name", v) != 0)
            *ok = 0;
    }
}

/* "spec: NAME" before human output of a labelled spec. */
static void print_name(const cli_args *a)
{
    if (a->spec_name[0])
        printf("spec: %s\n", a->spec_name);
}

/* Write o as one line and release it.  Nothing is written if o is incomplete. */
static int emit_json(json_t *o, int ok)
{
    char *text = ok && o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!text)
        return cli_fail(CLI_EXIT_FAIL, "out of memory while building the JSON output");
    puts(text);
    free(text);
    return CLI_EXIT_OK;
}

/* What phi and rdp add to a result: whether it is certified, the RDP
 * order and conversion, the method's note. */
static void put_method_fields(json_t *o, const cli_args *a, const dpa_result *r, int *ok)
{
    put(o, "certified", json_boolean(r->certified), ok);
    if (r->method == DPA_METHOD_RDP) {
        put(o, "rdp_order", isfinite(r->order) ? json_real(r->order) : json_null(), ok);
        put(o, "rdp_conversion", json_string(dpa_rdp_conv_name(a->opt.rdp_conversion)), ok);
    }
    if (r->note[0])
        put(o, "note", json_string(r->note), ok);
}

/* A mu-GDP bound: a number, or null for +infinity (JSON has no infinity;
 * the note and "source" say what an infinite bound means). */
/* mu bounds: +inf as the string "inf", as everywhere else */
static json_t *json_mu(double x)
{
    return json_bound(x);
}

static const char *gdp_mu_source_name(dpa_gdp_mu_source s)
{
    switch (s) {
    case DPA_GDP_MU_NONE: return "none";
    case DPA_GDP_MU_GAUSSIAN: return "gaussian";
    case DPA_GDP_MU_BOUNDED: return "bounded_loss";
    case DPA_GDP_MU_INFINITE: return "infinite";
    }
    return "?";
}

/* "gdp_mu": {"lower", "upper" (null: +inf), "certified" (the upper bound),
 * "source", "note"} */
static json_t *json_gdp_mu(const dpa_gdp_mu *g)
{
    json_t *o = json_object();
    int ok = o != NULL;
    put(o, "lower", json_mu(g->lower), &ok);
    put(o, "upper", json_mu(g->upper), &ok);
    put(o, "certified", json_boolean(g->certified_upper), &ok);
    put(o, "source", json_string(gdp_mu_source_name(g->source)), &ok);
    put(o, "note", json_string(g->note), &ok);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

int cli_emit_json(json_t *o, int ok)
{
    return emit_json(o, ok);
}

json_t *cli_json_query(const cli_args *a, double at, const dpa_result *r, const dpa_gdp_mu *g)
{
    int eps = a->cmd != CLI_DELTA, ok = 1;
    const char *q = eps ? "epsilon" : "delta";
    char key[32];
    json_t *o = json_object();

    put(o, "query", json_string(q), &ok);
    put(o, eps ? "delta" : "epsilon", json_real(at), &ok);
    snprintf(key, sizeof key, "%s_upper", q);
    put(o, key, json_bound(r->upper), &ok);
    snprintf(key, sizeof key, "%s_lower", q);
    put(o, key, json_bound(r->lower), &ok);
    put(o, "method", json_string(dpa_method_name(r->method)), &ok);
    put(o, "binding_direction", json_string(cli_direction_word(r->binding)), &ok);
    snprintf(key, sizeof key, "%s_upper_remove", q);
    put(o, key, json_bound(r->upper_remove), &ok);
    snprintf(key, sizeof key, "%s_upper_add", q);
    put(o, key, json_bound(r->upper_add), &ok);
    put(o, "grid_step", json_real(r->grid_step), &ok);
    put(o, "grid_size", json_integer((json_int_t)r->grid_size), &ok);
    put(o, "truncated_mass", json_real(r->truncated_mass), &ok);
    put(o, "roundoff", json_real(r->roundoff), &ok);
    put(o, "accuracy_met", json_boolean(r->accuracy_met), &ok);
    put(o, "upper_source", json_string(dpa_bound_source_name(r->upper_source)), &ok);
    put_method_fields(o, a, r, &ok);
    if (g)
        put(o, "gdp_mu", json_gdp_mu(g), &ok);
    if (a->clt)
        put(o, "clt", cli_clt_json(a, cli_value_index(a, at), r), &ok);
    if (!ok || !o) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static int json_query(const cli_args *a, const dpa_result *r, const dpa_gdp_mu *g)
{
    json_t *o = cli_json_query(a, a->cmd == CLI_DELTA ? a->epsilon : a->delta, r, g);
    int ok = o != NULL;
    put_name(o, a, &ok);
    return emit_json(o, ok);
}

/* {"results": [one object per value]} */
static int json_queries(const cli_args *a, const dpa_result *r, size_t n, const dpa_gdp_mu *g)
{
    /* g: one per value, or NULL */
    json_t *o = json_object(), *arr = json_array();
    int ok = o && arr;
    for (size_t i = 0; ok && i < n; i++) {
        json_t *q = cli_json_query(a, a->values[i], &r[i], g ? &g[i] : NULL);
        if (!q || json_array_append_new(arr, q) != 0)
            ok = 0;
    }
    put_name(o, a, &ok);
    put(o, "results", arr, &ok);
    return emit_json(o, ok && o);
}

/* ----------------------------------------------------------------- CSV --- */

/* An exact double (shortest round trip), "inf" for +infinity. */
static void csv_number(double x)
{
    char buf[CLI_NUM_BUF];
    cli_format_shortest(buf, sizeof buf, x);
    fputs(buf, stdout);
}

/* method,delta,epsilon_upper,epsilon_lower,binding_direction,epsilon_upper_remove,
 * epsilon_upper_add,upper_source,certified,accuracy_met (for delta queries the
 * two names swapped) */
static int csv_queries(const cli_args *a, const dpa_result *r, size_t n)
{
    int eps = a->cmd != CLI_DELTA;
    const char *q = eps ? "epsilon" : "delta", *at = eps ? "delta" : "epsilon";
    printf("method,%s,%s_upper,%s_lower,binding_direction,%s_upper_remove,%s_upper_add,"
           "upper_source,certified,accuracy_met\n", at, q, q, q, q);
    for (size_t i = 0; i < n; i++) {
        printf("%s,", dpa_method_name(r[i].method));
        csv_number(a->values[i]);
        putchar(',');
        csv_number(r[i].upper);
        putchar(',');
        csv_number(r[i].lower);
        printf(",%s,", cli_direction_word(r[i].binding));
        csv_number(r[i].upper_remove);
        putchar(',');
        csv_number(r[i].upper_add);
        printf(",%s,%s,%s\n", dpa_bound_source_name(r[i].upper_source), r[i].certified ? "true" : "false",
               r[i].accuracy_met ? "true" : "false");
    }
    return CLI_EXIT_OK;
}

/* method,epsilon,delta_upper,delta_lower (as dpacct curve --format csv) */
static int csv_profile(const cli_profile_out *p)
{
    puts("method,epsilon,delta_upper,delta_lower");
    for (size_t i = 0; i < p->n; i++) {
        printf("%s,", dpa_method_name(p->method));
        csv_number(p->eps[i]);
        putchar(',');
        csv_number(p->upper[i]);
        putchar(',');
        csv_number(p->lower[i]);
        putchar('\n');
    }
    return CLI_EXIT_OK;
}

static json_t *json_point(double eps, double up, double lo)
{
    json_t *o = json_object();
    int ok = o != NULL;
    put(o, "epsilon", json_real(eps), &ok);
    put(o, "delta_upper", json_real(up), &ok);
    put(o, "delta_lower", json_real(lo), &ok);
    if (!ok) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static int json_profile(const cli_args *a, const cli_profile_out *p)
{
    json_t *o = json_object(), *pts = json_array();
    int ok = pts != NULL;

    for (size_t i = 0; ok && i < p->n; i++) {
        json_t *pt = json_point(p->eps[i], p->upper[i], p->lower[i]);
        if (!pt || json_array_append_new(pts, pt) != 0)
            ok = 0;
    }
    put(o, "query", json_string("profile"), &ok);
    put(o, "method", json_string(dpa_method_name(p->method)), &ok);
    if (a->log_scale)
        put(o, "spacing", json_string("log"), &ok);
    put(o, "points", pts, &ok);
    put_name(o, a, &ok);
    return emit_json(o, ok && o);
}

/* A parameter value: an integer for integer parameters, else a real;
 * null for NaN ("none"). */
static json_t *json_param_value(const dpa_param_info *info, double x)
{
    if (isnan(x))
        return json_null();
    if (info->is_integer && fabs(x) < 9e15)
        return json_integer((json_int_t)x);
    return json_real(x);
}

static int json_calibration(const cli_args *a, const dpa_param_info *info,
                            const dpa_calibration *c)
{
    json_t *o = json_object();
    int ok = 1;

    put(o, "query", json_string("calibrate"), &ok);
    put(o, "parameter", json_string(info->name), &ok);
    put(o, "path", json_string(info->path), &ok);
    put(o, "value", json_param_value(info, c->value), &ok);
    put(o, "epsilon", json_real(a->epsilon), &ok);
    put(o, "delta", json_real(a->delta), &ok);
    put(o, "epsilon_upper", json_bound(c->at_value.upper), &ok);
    put(o, "epsilon_lower", json_bound(c->at_value.lower), &ok);
    put(o, "infeasible", json_param_value(info, c->infeasible), &ok);
    put(o, "evaluations", json_integer(c->evaluations), &ok);
    put(o, "method", json_string(dpa_method_name(c->at_value.method)), &ok);
    put(o, "accuracy_met", json_boolean(c->at_value.accuracy_met), &ok);
    if (!c->at_value.certified) /* (the gdp method's estimate; certified values keep the old keys) */
        put(o, "certified", json_false(), &ok);
    put_name(o, a, &ok);
    return emit_json(o, ok && o);
}

/* --------------------------------------------------------------- human --- */

static void print_method(const dpa_result *r)
{
    if (r->method == DPA_METHOD_EXACT) {
        /* the exact method sets a grid step only for its lattice bracket
         * of heterogeneous epsilons, whose note says so */
        if (r->grid_step > 0) printf("method: exact (%s)\n", r->note);
        else puts("method: exact (closed form)");
        return;
    }
    if (r->method == DPA_METHOD_PHI) {
        printf("method: phi (characteristic function; NOT certified: %s)\n", r->note);
        return;
    }
    if (r->method == DPA_METHOD_GDP) {
        printf("method: gdp (NOT certified: %s)\n", r->note);
        return;
    }
    if (r->method == DPA_METHOD_CLT) {
        printf("method: clt (%s)\n", r->note[0] ? r->note : "Berry-Esseen envelope, GDP eq 10");
        return;
    }
    if (r->method == DPA_METHOD_RDP) {
        char ord[CLI_NUM_BUF];
        if (isnan(r->order)) {
            /* no order attains the bound: every order gives +inf (delta at
             * most the (eps, delta) steps' extra delta), or every order gives
             * the same value (identical distributions: D_alpha = 0) */
            printf("method: rdp (%s; %s)\n",
                   isinf(r->upper) ? "no Renyi order gives a finite bound" : "the same bound at every Renyi order",
                   r->note);
            return;
        }
        cli_format(ord, sizeof ord, r->order, 6, DPA_ROUND_NEAREST);
        printf("method: rdp (Renyi DP at order %s; %s)\n", ord, r->note);
        return;
    }
    if (r->grid_size == 0) {
        printf("method: %s (no grid could be built for this spec; see the note below)\n", dpa_method_name(r->method));
        return;
    }
    printf("method: %s (grid step %.1e, FFT size %zu, truncated mass %.1e, "
           "round-off allowance %.1e)\n", dpa_method_name(r->method), r->grid_step,
           r->grid_size, r->truncated_mass, r->roundoff);
}

static void print_binding(const dpa_result *r, int digits)
{
    char other[CLI_NUM_BUF];
    if (r->binding == DPA_DIR_BOTH) {
        puts("binding direction: both (symmetric)");
        return;
    }
    cli_format(other, sizeof other,
               r->binding == DPA_DIR_REMOVE ? r->upper_add : r->upper_remove,
               digits, DPA_ROUND_UP);
    printf("binding direction: %s (%s: %s)\n", cli_direction_word(r->binding),
           r->binding == DPA_DIR_REMOVE ? "add" : "remove", other);
}

static void print_source(const cli_args *a, const dpa_result *r)
{
    int eps = a->cmd != CLI_DELTA;
    switch (r->upper_source) {
    case DPA_SOURCE_METHOD: return;
    case DPA_SOURCE_MAX_LOSS:
        printf("note: the upper bound is the composition's largest finite privacy loss (%s), "
               "which the method's own bound does not beat here%s\n",
               eps ? "eps <= that loss once delta covers the mass at +inf"
                   : "beyond it delta is at most the mass at +inf",
               r->method == DPA_METHOD_PLD ? " (delta is below the PLD method's floating-point floor)" : "");
        return;
    case DPA_SOURCE_CHERNOFF:
        puts("note: the count is too large to sum the exact (eps, delta) composition term by term; "
             "the upper bound is a certified Chernoff bound (docs/guarantees.md §2.2)");
        return;
    case DPA_SOURCE_RDP: return; /* the note (accountant.c) says which method answered and why */
    case DPA_SOURCE_DOMINATION:
        printf("note: the upper bound treats every step as the randomized-response pair of its own "
               "(eps_i, delta_i)-DP guarantee, eps_i its largest finite loss (LT Thm 4.5), composed "
               "exactly (LT Thm 4.6): certified but loose, used because the %s method %s\n",
               dpa_method_name(r->method),
               r->grid_size == 0 ? "could not build its grid here" : "certified a larger bound here");
        return;
    }
}

static void print_accuracy(const dpa_result *r)
{
    if (r->accuracy_met) return;
    if (r->method == DPA_METHOD_RDP) {
        puts("note: Renyi DP bounds eps from above only; the lower bound shown is the trivial one "
             "(--method pld or exact give a tight bracket)");
        return;
    }
    if (r->method == DPA_METHOD_PHI) {
        puts("note: accuracy target not met: the quadrature error estimates leave a wider bracket");
        return;
    }
    if (r->method == DPA_METHOD_CLT) {
        puts("note: the Berry-Esseen envelope is wide for this composition (few or heavy-tailed steps); "
             "the bounds are still certified (--method pld gives a tight bracket)");
        return;
    }
    if (r->method == DPA_METHOD_GDP) return;
    if (r->upper_source != DPA_SOURCE_METHOD) {
        puts("note: accuracy target not met; the bounds are still certified");
        return;
    }
    if (isinf(r->upper) && !isinf(r->lower))
        printf("note: accuracy target not met: delta exceeds the composition's +inf mass by less "
               "than this method's floating-point allowance, so no finite upper bound can be "
               "certified here (%s)\n",
               r->method == DPA_METHOD_EXACT ? "a slightly larger delta gives one"
                                             : "a larger delta gives one; so does --method rdp (which auto falls back to), or exact where it applies");
    else
        puts("note: accuracy target not met (the grid could not be refined enough, or the "
             "floating-point allowance dominates the gap; try a larger --max-grid or a looser "
             "--accuracy); the bounds are still certified, only wider than requested");
}

/* "NAME <= U   (NOTE)" and "NAME >= L   (lower bound; gap G)"; inf_why:
 * what an infinite lower bound means. */
static void print_bounds_why(const char *name, double up, double lo, const char *note, const char *inf_why)
{
    char us[CLI_NUM_BUF], ls[CLI_NUM_BUF], gap[CLI_NUM_BUF];
    int digits = cli_digits_for(up, lo), w;

    cli_format(us, sizeof us, up, digits, DPA_ROUND_UP);
    cli_format(ls, sizeof ls, lo, digits, DPA_ROUND_DOWN);
    w = (int)(strlen(us) > strlen(ls) ? strlen(us) : strlen(ls));
    printf("%s <= %-*s   (%s)\n", name, w, us, note);
    if (isinf(lo)) {
        printf("%s >= %-*s   (lower bound: %s)\n", name, w, ls, inf_why);
        return;
    }
    cli_format(gap, sizeof gap, up - lo, 2, DPA_ROUND_UP);
    printf("%s >= %-*s   (lower bound; gap %s)\n", name, w, ls, gap);
}

static void print_bounds(const char *name, double up, double lo, const char *note)
{
    print_bounds_why(name, up, lo, note, "the privacy loss is +inf with probability >= delta");
}

/* epsilon at delta 0 (pure DP), which every method answers from the steps'
 * loss laws (src/acct/pure_dp.c): no grid, order or method estimate. */
static void print_pure_method(dpa_method m)
{
    printf("method: %s (pure DP: the largest privacy loss, read from the steps' loss laws)\n", dpa_method_name(m));
}

static void human_pure(const dpa_result *r)
{
    print_bounds_why("epsilon", r->upper, r->lower,
                     r->certified ? "certified upper bound; claim this"
                                  : "estimated upper bound, not certified: do not claim it",
                     "the privacy loss is unbounded or +inf with positive probability");
    puts("at delta = 0");
    print_pure_method(r->method);
    print_binding(r, cli_digits_for(r->upper, r->lower));
    if (r->note[0]) printf("note: %s\n", r->note);
}

/* One line on the smallest mu-GDP (GDP Def 2.4), bounds rounded outward.
 * Nothing for the methods that give no bound on it (phi, gdp, rdp). */
static void print_gdp_mu(const dpa_result *r, const dpa_gdp_mu *g)
{
    char us[CLI_NUM_BUF], ls[CLI_NUM_BUF];
    if (r->method == DPA_METHOD_PHI || r->method == DPA_METHOD_GDP || r->method == DPA_METHOD_RDP)
        return;
    if (g->source == DPA_GDP_MU_INFINITE) {
        printf("mu-GDP: no finite mu (certified: the loss is +inf with positive probability)\n");
        return;
    }
    if (g->certified_upper) {
        int digits = cli_digits_for(g->upper, g->lower);
        cli_format(us, sizeof us, g->upper, digits, DPA_ROUND_UP);
        cli_format(ls, sizeof ls, g->lower, digits, DPA_ROUND_DOWN);
        printf("mu-GDP: mu <= %s (certified; smallest mu >= %s; %s)\n", us, ls,
               g->source == DPA_GDP_MU_GAUSSIAN ? "exact for a composition of Gaussians"
                                                : "bounded privacy loss, checked on a grid");
        return;
    }
    cli_format(ls, sizeof ls, g->lower, 5, DPA_ROUND_DOWN);
    /* the full reason is in --json's gdp_mu.note and in the report */
    printf("mu-GDP: mu >= %s (lower bound only: no certified upper bound for this composition; "
           "gdp_mu.note in --json --gdp-mu says why)\n",
           ls);
}

static void human_query(const cli_args *a, double value, const dpa_result *r, const dpa_gdp_mu *g,
                        const char *extra)
{
    int eps = a->cmd != CLI_DELTA;
    char at[CLI_NUM_BUF];

    if (eps && value == 0) {
        human_pure(r);
        if (extra) fputs(extra, stdout);
        return;
    }
    print_bounds(eps ? "epsilon" : "delta", r->upper, r->lower,
                 r->certified ? "certified upper bound; claim this"
                              : "estimated upper bound, not certified: do not claim it");
    cli_format_shortest(at, sizeof at, value);
    printf("at %s = %s\n", eps ? "delta" : "epsilon", at);
    if (extra)
        fputs(extra, stdout);
    print_method(r);
    print_binding(r, cli_digits_for(r->upper, r->lower));
    print_source(a, r);
    print_accuracy(r);
    cli_clt_human(a, cli_value_index(a, value), r);
    /* notes the method lines above do not show (e.g. a non_private step) */
    if ((r->method == DPA_METHOD_PLD || (r->method == DPA_METHOD_EXACT && !(r->grid_step > 0))) && r->note[0])
        printf("note: %s\n", r->note);
    if (g)
        print_gdp_mu(r, g);
}

void cli_human_epsilon(const cli_args *a, double at, const dpa_result *r, const dpa_gdp_mu *g,
                       const char *extra)
{
    human_query(a, at, r, g, extra);
}

void cli_human_bounds(const char *name, double up, double lo, const char *note)
{
    print_bounds(name, up, lo, note);
}

void cli_human_method(const dpa_result *r)
{
    print_method(r);
}

void cli_human_accuracy(const dpa_result *r)
{
    print_accuracy(r);
}

#define PROFILE_DIGITS 6

static int human_profile(const cli_args *a, const cli_profile_out *p)
{
    char e[CLI_NUM_BUF], u[CLI_NUM_BUF], l[CLI_NUM_BUF], f[CLI_NUM_BUF], t[CLI_NUM_BUF];
    int w = (int)strlen("epsilon");

    for (size_t i = 0; i < p->n; i++) {
        cli_format_shortest(e, sizeof e, p->eps[i]);
        if ((int)strlen(e) > w)
            w = (int)strlen(e);
    }
    cli_format_shortest(f, sizeof f, a->from);
    cli_format_shortest(t, sizeof t, a->to);
    printf("privacy profile: delta(epsilon) at %zu %spoints from %s to %s\n", p->n,
           a->log_scale ? "log-spaced " : "", f, t);
    printf("method: %s\n", dpa_method_name(p->method));
    printf("%-*s   %-14s   %s\n", w, "epsilon", "delta_upper", "delta_lower");
    for (size_t i = 0; i < p->n; i++) {
        cli_format_shortest(e, sizeof e, p->eps[i]);
        cli_format(u, sizeof u, p->upper[i], PROFILE_DIGITS, DPA_ROUND_UP);
        cli_format(l, sizeof l, p->lower[i], PROFILE_DIGITS, DPA_ROUND_DOWN);
        printf("%-*s   %-14s   %s\n", w, e, u, l);
    }
    return CLI_EXIT_OK;
}

/* A calibrated parameter value rounded toward `dir`; integers exactly. */
static void format_param(char *buf, size_t n, const dpa_param_info *info, double x,
                         double tol, int dir)
{
    int digits = (int)ceil(-log10(tol)) + 1;
    if (info->is_integer && fabs(x) < 9e15) {
        snprintf(buf, n, "%.0f", x);
        return;
    }
    cli_format(buf, n, x, digits < 5 ? 5 : digits, dir);
}

static int human_calibration(const cli_args *a, const dpa_param_info *info,
                             const dpa_calibration *c)
{
    int noise = info->role == DPA_ROLE_NOISE;
    int safe = noise ? DPA_ROUND_UP : DPA_ROUND_DOWN;
    char v[CLI_NUM_BUF], e[CLI_NUM_BUF], d[CLI_NUM_BUF], x[CLI_NUM_BUF];

    format_param(v, sizeof v, info, c->value, a->tolerance, safe);
    cli_format_shortest(e, sizeof e, a->epsilon);
    cli_format_shortest(d, sizeof d, a->delta);
    if (c->at_value.certified) {
        printf("%s = %s   (%s value meeting epsilon <= %s at delta = %s)\n", info->name, v,
               noise ? "smallest" : "largest", e, d);
    } else { /* the gdp method: the CLT estimate */
        printf("%s = %s   (estimate, NOT certified: %s value whose %s estimate of epsilon is <= %s at "
               "delta = %s; do not claim it)\n", info->name, v, noise ? "smallest" : "largest",
               dpa_method_name(c->at_value.method), e, d);
    }
    printf("parameter: %s\n", info->path);
    print_bounds("epsilon", c->at_value.upper, c->at_value.lower,
                 c->at_value.certified ? "certified upper bound at this value"
                                       : "estimate at this value, not certified");
    if (isnan(c->infeasible)) {
        puts("nearest infeasible value: none found (the whole domain meets the target)");
    } else {
        format_param(x, sizeof x, info, c->infeasible, a->tolerance, -safe);
        printf("nearest infeasible value: %s\n", x);
    }
    printf("evaluations: %d\n", c->evaluations);
    if (a->delta == 0) {
        print_pure_method(c->at_value.method);
        return CLI_EXIT_OK;
    }
    print_method(&c->at_value);
    print_accuracy(&c->at_value);
    return CLI_EXIT_OK;
}

/* ------------------------------------------------------ --method all --- */

static int json_methods(const cli_args *a, const cli_method_row *rows, size_t n)
{
    int eps = a->cmd == CLI_EPSILON, ok = 1;
    const char *q = eps ? "epsilon" : "delta";
    char key[32];
    json_t *o = json_object(), *arr = json_array();

    ok = o && arr;
    put(o, "query", json_string(q), &ok);
    put(o, eps ? "delta" : "epsilon", json_real(eps ? a->delta : a->epsilon), &ok);
    for (size_t i = 0; ok && i < n; i++) {
        const dpa_result *r = &rows[i].result;
        json_t *m = json_object();
        int mok = m != NULL;
        put(m, "method", json_string(dpa_method_name(rows[i].method)), &mok);
        put(m, "applicable", json_boolean(rows[i].ok), &mok);
        if (rows[i].ok) {
            snprintf(key, sizeof key, "%s_upper", q);
            put(m, key, json_bound(r->upper), &mok);
            snprintf(key, sizeof key, "%s_lower", q);
            put(m, key, json_bound(r->lower), &mok);
            put(m, "binding_direction", json_string(cli_direction_word(r->binding)), &mok);
            put(m, "accuracy_met", json_boolean(r->accuracy_met), &mok);
            put_method_fields(m, a, r, &mok);
        } else {
            put(m, "reason", json_string(rows[i].why), &mok);
        }
        put(m, "seconds", json_real(rows[i].seconds), &mok);
        if (!mok || json_array_append_new(arr, m) != 0) {
            if (!mok) json_decref(m);
            ok = 0;
        }
    }
    put(o, "methods", arr, &ok);
    put_name(o, a, &ok);
    return emit_json(o, ok && o);
}

static int human_methods(const cli_args *a, const cli_method_row *rows, size_t n)
{
    int eps = a->cmd == CLI_EPSILON;
    char at[CLI_NUM_BUF], us[CLI_NUM_BUF], ls[CLI_NUM_BUF];

    cli_format_shortest(at, sizeof at, eps ? a->delta : a->epsilon);
    printf("%s at %s = %s, every method:\n", eps ? "epsilon" : "delta", eps ? "delta" : "epsilon", at);
    printf("%-6s  %-14s  %-14s  %9s  %s\n", "method", "upper", "lower", "time", "");
    for (size_t i = 0; i < n; i++) {
        const dpa_result *r = &rows[i].result;
        const char *name = dpa_method_name(rows[i].method);
        if (!rows[i].ok) {
            printf("%-6s  not applicable: %s\n", name, rows[i].why);
            continue;
        }
        int digits = cli_digits_for(r->upper, r->lower);
        cli_format(us, sizeof us, r->upper, digits, DPA_ROUND_UP);
        cli_format(ls, sizeof ls, r->lower, digits, DPA_ROUND_DOWN);
        char tm[32];
        snprintf(tm, sizeof tm, "%.1f ms", 1e3 * rows[i].seconds);
        /* eps at delta 0 is read from the leaves by every method alike */
        int pure = a->cmd == CLI_EPSILON && r->upper_source == DPA_SOURCE_MAX_LOSS && a->delta == 0;
        const char *what = pure                          ? "certified bracket (pure DP: the largest loss)"
                           : r->method == DPA_METHOD_PHI ? "estimate, not certified"
                           : r->method == DPA_METHOD_GDP ? "CLT approximation, not a bound"
                           : r->method == DPA_METHOD_RDP ? "certified upper bound only"
                           : r->method == DPA_METHOD_CLT ? "certified bracket (Berry-Esseen)"
                                                         : "certified bracket";
        printf("%-6s  %-14s  %-14s  %9s  %s", name, us, ls, tm, what);
        if (r->method == DPA_METHOD_RDP && !pure) {
            char ord[CLI_NUM_BUF];
            cli_format(ord, sizeof ord, r->order, 6, DPA_ROUND_NEAREST);
            printf(" (order %s, %s conversion)", ord, dpa_rdp_conv_name(a->opt.rdp_conversion));
        }
        if (!r->accuracy_met && r->method != DPA_METHOD_RDP && r->method != DPA_METHOD_GDP)
            printf("; accuracy target not met");
        putchar('\n');
    }
    puts("Claim a certified upper bound: the smallest one above (the time column includes "
         "building each method's accountant).");
    return CLI_EXIT_OK;
}

int cli_print_methods(const cli_args *a, const cli_method_row *rows, size_t n)
{
    if (a->json)
        return json_methods(a, rows, n);
    print_name(a);
    return human_methods(a, rows, n);
}

/* ------------------------------------------------------------- entries --- */

int cli_print_query(const cli_args *a, const dpa_result *r, const dpa_gdp_mu *g)
{
    if (a->json)
        return json_query(a, r, g);
    if (a->format == CLI_FORMAT_CSV)
        return csv_queries(a, r, 1);
    print_name(a);
    human_query(a, a->cmd == CLI_DELTA ? a->epsilon : a->delta, r, g, NULL);
    return CLI_EXIT_OK;
}

int cli_print_queries(const cli_args *a, const dpa_result *r, size_t n, const dpa_gdp_mu *g)
{
    if (n == 1)
        return cli_print_query(a, r, g);
    if (a->json)
        return json_queries(a, r, n, g);
    if (a->format == CLI_FORMAT_CSV)
        return csv_queries(a, r, n);
    print_name(a);
    for (size_t i = 0; i < n; i++) {
        if (i)
            putchar('\n');
        human_query(a, a->values[i], &r[i], g ? &g[i] : NULL, NULL);
    }
    return CLI_EXIT_OK;
}

int cli_print_profile(const cli_args *a, const cli_profile_out *p)
{
    if (a->json)
        return json_profile(a, p);
    if (a->format == CLI_FORMAT_CSV)
        return csv_profile(p);
    print_name(a);
    return human_profile(a, p);
}

int cli_print_calibration(const cli_args *a, const dpa_param_info *info,
                          const dpa_calibration *c)
{
    if (a->json)
        return json_calibration(a, info, c);
    print_name(a);
    return human_calibration(a, info, c);
}
