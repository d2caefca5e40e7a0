/* dpacct command-line front end: `dpacct curve` (whole guarantees as tables
 * or plots) and `dpacct renyi` (one Renyi divergence).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 *   curve --kind profile   delta(eps) bounds on an eps grid, per method
 *   curve --kind tradeoff  a certified lower bound on the tradeoff curve
 *                          beta(alpha) (the smallest type II error of a test
 *                          with type I error alpha), from each method's
 *                          upper profile (GDP Prop 2.12 via dpacct/tradeoff.h)
 *   curve --kind renyi     D_alpha of both directions on an alpha grid
 *
 * Every number is computed and checked before anything is written. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "plot.h"
#include "curve.h"

#define CURVE_POINTS 101
/* profile: the default eps range ends where the upper profile of the first
 * method falls to this delta (a plot down to 1e-10 shows every delta anyone
 * claims) */
#define PROFILE_END_DELTA 1e-10
/* renyi: default order range */
#define RENYI_FROM 1.05
#define RENYI_TO 64.0



void cli_curves_free(curves *cs)
{
    for (size_t i = 0; i < cs->nc; i++) {
        free(cs->c[i].x);
        free(cs->c[i].up);
        free(cs->c[i].lo);
    }
}

static int alloc_curve(curve *c, size_t n)
{
    c->x = calloc(n, sizeof *c->x);
    c->up = calloc(n, sizeof *c->up);
    c->lo = calloc(n, sizeof *c->lo);
    return c->x && c->up && c->lo ? 0 : -1;
}

/* Point i of n from `from` to `to`: evenly spaced, or evenly in log10 when
 * the x axis is logarithmic (then from > 0, checked by the callers). */
static double grid(const cli_args *a, double from, double to, size_t i, size_t n)
{
    if (i == 0) return from;
    if (i == n - 1) return to;
    double t = (double)i / (double)(n - 1);
    if (cli_curve_logx(a)) return exp(log(from) * (1 - t) + log(to) * t);
    return from * (1 - t) + to * t;
}

int cli_curve_logx(const cli_args *a)
{
    return a->log_scale_axes != CLI_LOG_DEFAULT && (a->log_scale_axes & CLI_LOG_X);
}

/* With a log x axis: the lower end of the range must be > 0. */
static int check_logx_from(const cli_args *a, double from)
{
    if (cli_curve_logx(a) && !(from > 0))
        return cli_fail(CLI_EXIT_USAGE, "curve: --log-scale x needs --from > 0 (log-spaced points), got %.17g", from);
    return CLI_EXIT_OK;
}

/* the lower end of the x range on a log axis when --from is not given: this
 * fraction of the upper end (four decades) */
#define LOGX_DEFAULT_SPAN 1e-4

/* The methods a curve is drawn for. */
static size_t methods_of(const cli_args *a, dpa_method *m)
{
    if (a->all_methods) {
        m[0] = DPA_METHOD_EXACT;
        m[1] = DPA_METHOD_PLD;
        m[2] = DPA_METHOD_PHI;
        m[3] = DPA_METHOD_RDP;
        m[4] = DPA_METHOD_CLT;
        m[5] = DPA_METHOD_GDP;
        return 6;
    }
    m[0] = a->opt.method;
    return 1;
}

/* ---- profile ---- */

int cli_curves_profile(const cli_args *a, const dpa_spec *spec, curves *cs)
{
    dpa_method ms[DPA_METHOD_COUNT];
    size_t nm = methods_of(a, ms), any = 0;
    double from = (a->given_from ? a->from : 0), to = a->given_to ? a->to : NAN;
    cs->n = a->given_points ? a->points : CURVE_POINTS;
    for (size_t k = 0; k < nm; k++) {
        curve *c = &cs->c[cs->nc++];
        dpa_options o = a->opt;
        dpa_error err;
        o.method = ms[k];
        dpa_error_clear(&err);
        dpa_accountant *acc = dpa_accountant_new(spec, &o, &err);
        if (!acc) {
            snprintf(c->why, sizeof c->why, "%s", err.message);
            c->method = ms[k];
            if (!a->all_methods) return cli_fail_status(err.status ? err.status : DPA_EINVAL, &err);
            continue;
        }
        c->method = dpa_accountant_method(acc);
        if (!isfinite(to)) {
            /* the range ends where this method's upper profile reaches
             * PROFILE_END_DELTA (then every other method's curve uses it) */
            dpa_result r;
            if (dpa_accountant_epsilon(acc, PROFILE_END_DELTA, &r, &err) != DPA_OK) {
                dpa_accountant_free(acc);
                if (!a->all_methods) return cli_fail_status(err.status, &err);
                snprintf(c->why, sizeof c->why, "%s", err.message);
                continue;
            }
            to = isfinite(r.upper) && r.upper > from ? fmax(r.upper * 1.05, from + 1e-3) : from + 10;
            if (cli_curve_logx(a) && !a->given_from) from = to * LOGX_DEFAULT_SPAN;
        }
        if (check_logx_from(a, from) != CLI_EXIT_OK) {
            dpa_accountant_free(acc);
            return CLI_EXIT_USAGE;
        }
        if (alloc_curve(c, cs->n)) {
            dpa_accountant_free(acc);
            return cli_fail(CLI_EXIT_FAIL, "out of memory");
        }
        for (size_t i = 0; i < cs->n; i++) c->x[i] = grid(a, from, to, i, cs->n);
        dpa_status st = dpa_accountant_profile(acc, c->x, cs->n, c->up, c->lo, &err);
        dpa_result r0;
        c->certified = 1;
        if (st == DPA_OK && dpa_accountant_delta(acc, c->x[0], &r0, &err) == DPA_OK) c->certified = r0.certified;
        dpa_accountant_free(acc);
        if (st != DPA_OK) {
            if (!a->all_methods) return cli_fail_status(st, &err);
            snprintf(c->why, sizeof c->why, "%s", err.message);
            continue;
        }
        for (size_t i = 0; i < cs->n; i++)
            if (!(c->lo[i] >= 0 && c->lo[i] <= c->up[i] && c->up[i] <= 1))
                return cli_library_bug("a profile point outside 0 <= lower <= upper <= 1");
        c->ok = 1;
        any = 1;
    }
    if (!any) {
        for (size_t i = 0; i < cs->nc; i++) cli_fail(CLI_EXIT_USAGE, "%s: %s", dpa_method_name(cs->c[i].method), cs->c[i].why);
        return CLI_EXIT_USAGE;
    }
    return CLI_EXIT_OK;
}

/* ---- tradeoff ---- */

/* The eps grid of the profile a tradeoff curve is built from: TRADEOFF_EPS
 * points from 0 to where the upper profile reaches TRADEOFF_END_DELTA (the
 * curve's lines there are within ~1e-12 of alpha = 0 and beta = 0), located
 * by the rdp method where it applies (tradeoff_end_rdp), else by the method
 * itself */
#define TRADEOFF_EPS 512
#define TRADEOFF_END_DELTA 1e-12
/* largest eps the tradeoff conversion takes (dpa_tf_from_accountant) */
#define TRADEOFF_EPS_MAX 700.0
/* absolute delta accuracy of the profile points (dpa_options.delta_abs) */
#define TRADEOFF_DELTA_ABS 1e-9

/* The end of the eps grid from the Renyi DP method: a certified upper bound
 * on eps(TRADEOFF_END_DELTA) in well under a millisecond, where a tight
 * method pays for a grid fine enough for delta 1e-12 (the PLD method on the
 * DP-SGD example: 0.6 s and 470 MB, mostly to find that 1e-12 is below its
 * floor).  An upper bound only widens the grid a little.  NAN when the rdp
 * method cannot take the spec or gives no finite bound. */
static double tradeoff_end_rdp(const dpa_spec *spec, const dpa_options *opt)
{
    dpa_options o = *opt;
    o.method = DPA_METHOD_RDP;
    dpa_error err;
    dpa_accountant *acc = dpa_accountant_new(spec, &o, &err);
    if (!acc) return NAN;
    dpa_result r;
    double e = NAN;
    if (dpa_accountant_epsilon(acc, TRADEOFF_END_DELTA, &r, &err) == DPA_OK && isfinite(r.upper)) e = r.upper;
    dpa_accountant_free(acc);
    return e;
}

/* 1 if a tradeoff operation was asked for (--subsample, --group,
 * --inverse, --symmetrize). */
static int has_tradeoff_ops(const cli_args *a)
{
    return a->subsample > 0 || a->group > 0 || a->tf_inverse || a->tf_symmetrize;
}

/* The operations asked for, applied to f in a fixed order: C_p (GDP Def
 * 4.1, Thm 4.2), group privacy 1 - (1 - f)^{o k} (GDP Thm 2.14), the
 * inverse f^{-1} (GDP eq 4), max{f, f^{-1}} (GDP Prop 2.1).  Each maps a
 * lower bound to a lower bound (each is monotone in f; include/dpacct/
 * tradeoff.h), so the result is a certified lower bound on the operation
 * applied to the spec's tradeoff function.  Takes f; NULL on error. */
static dpa_tf *tradeoff_ops(const cli_args *a, dpa_tf *f, dpa_error *err)
{
    dpa_tf *g;
    if (f && a->subsample > 0) {
        g = dpa_tf_subsample(f, a->subsample, NULL, err);
        dpa_tf_free(f);
        f = g;
    }
    if (f && a->group > 0) {
        g = dpa_tf_group(f, (unsigned long)a->group, NULL, err);
        dpa_tf_free(f);
        f = g;
    }
    if (f && a->tf_inverse) {
        g = dpa_tf_inverse(f, err);
        dpa_tf_free(f);
        f = g;
    }
    if (f && a->tf_symmetrize) {
        g = dpa_tf_symmetrize_max(f, NULL, err);
        dpa_tf_free(f);
        f = g;
    }
    return f;
}

/* JSON: "operations": {"subsample", "group", "inverse", "symmetrize"} on o
 * when an operation was asked for (nothing otherwise); 1 on success. */
static int ops_json(const cli_args *a, json_t *o)
{
    if (!has_tradeoff_ops(a)) return 1;
    json_t *op = json_object();
    return op && !json_object_set_new(op, "subsample", a->subsample > 0 ? json_real(a->subsample) : json_null()) &&
           !json_object_set_new(op, "group", a->group > 0 ? json_integer((json_int_t)a->group) : json_null()) &&
           !json_object_set_new(op, "inverse", json_boolean(a->tf_inverse)) &&
           !json_object_set_new(op, "symmetrize", json_boolean(a->tf_symmetrize)) &&
           !json_object_set_new(o, "operations", op);
}

int cli_curves_tradeoff(const cli_args *a, const dpa_spec *spec, curves *cs)
{
    const double end_rdp = tradeoff_end_rdp(spec, &a->opt);
    dpa_method ms[DPA_METHOD_COUNT];
    size_t nm = methods_of(a, ms), any = 0;
    double from = a->given_from ? a->from : 0, to = a->given_to ? a->to : 1;
    if (a->given_at) from = to = a->at;
    if (!(from >= 0 && to <= 1)) return cli_fail(CLI_EXIT_USAGE, "curve: alpha must lie in [0, 1] (--from, --to)");
    if (cli_curve_logx(a) && !a->given_from && !a->given_at) from = to * LOGX_DEFAULT_SPAN;
    if (!a->given_at && check_logx_from(a, from) != CLI_EXIT_OK) return CLI_EXIT_USAGE;
    cs->n = a->given_at ? 1 : a->given_points ? a->points : CURVE_POINTS;
    for (size_t k = 0; k < nm; k++) {
        curve *c = &cs->c[cs->nc++];
        dpa_options o = a->opt;
        dpa_error err;
        o.method = ms[k];
        /* a curve value moves by at most the error of the delta it comes
         * from: 1e-9 absolute is far below what a plot or 6 digits show */
        o.delta_abs = fmax(o.delta_abs, TRADEOFF_DELTA_ABS);
        c->method = ms[k];
        dpa_error_clear(&err);
        dpa_accountant *acc = dpa_accountant_new(spec, &o, &err);
        dpa_tf *f = NULL;
        dpa_result r;
        if (acc) {
            c->method = dpa_accountant_method(acc);
            /* a delta below a method's numerical floor gives eps = inf:
             * step up (x100) to one it resolves */
            dpa_status st = DPA_OK;
            if (isfinite(end_rdp)) {
                /* the range from rdp; one cheap query for the method's flags */
                if ((st = dpa_accountant_epsilon(acc, 1e-6, &r, &err)) == DPA_OK) r.upper = end_rdp;
            } else {
                for (double d = TRADEOFF_END_DELTA; d <= 1e-6; d *= 100)
                    if ((st = dpa_accountant_epsilon(acc, d, &r, &err)) != DPA_OK || isfinite(r.upper)) break;
            }
            if (st == DPA_OK) {
                c->certified = r.certified;
                double emax = isfinite(r.upper) ? fmin(TRADEOFF_EPS_MAX, fmax(1e-3, r.upper * 1.05)) : TRADEOFF_EPS_MAX;
                f = tradeoff_ops(a, dpa_tf_from_accountant(acc, emax, TRADEOFF_EPS, NULL, &err), &err);
            }
            /* one point: its bracket from above too (docs/fdp.md §9) */
            double blo, bhi;
            c->at_hi = NAN;
            if (f && a->given_at && a->at > 0 && !has_tradeoff_ops(a) && dpa_tf_beta_at(acc, a->at, 0, &blo, &bhi, &err) == DPA_OK)
                c->at_hi = bhi;
            dpa_accountant_free(acc);
        }
        if (!f) {
            if (!a->all_methods) return cli_fail_status(err.status ? err.status : DPA_EINVAL, &err);
            snprintf(c->why, sizeof c->why, "%s", err.message);
            continue;
        }
        if (alloc_curve(c, cs->n)) {
            dpa_tf_free(f);
            return cli_fail(CLI_EXIT_FAIL, "out of memory");
        }
        for (size_t i = 0; i < cs->n; i++) {
            double lo, hi;
            c->x[i] = cs->n == 1 ? from : grid(a, from, to, i, cs->n);
            if (dpa_tf_eval_bounds(f, c->x[i], &lo, &hi, NULL, NULL, &err) != DPA_OK) {
                dpa_tf_free(f);
                return cli_fail_status(err.status, &err);
            }
            /* the represented curve is below the truth; its evaluation is
             * rounded down: lo */
            c->up[i] = lo;
            c->lo[i] = lo;
            if (!(lo >= 0 && lo <= 1 - c->x[i] + 1e-15))
                return cli_library_bug("a tradeoff value outside [0, 1 - alpha]");
        }
        dpa_tf_free(f);
        c->ok = 1;
        any = 1;
    }
    if (!any) {
        for (size_t i = 0; i < cs->nc; i++) cli_fail(CLI_EXIT_USAGE, "%s: %s", dpa_method_name(cs->c[i].method), cs->c[i].why);
        return CLI_EXIT_USAGE;
    }
    return CLI_EXIT_OK;
}

/* --at X: one line per method (or one JSON object). */
static int emit_at(const cli_args *a, const curves *cs)
{
    char v[CLI_NUM_BUF], x[CLI_NUM_BUF];
    cli_format_shortest(x, sizeof x, a->at);
    if (a->json || cs->nc > 1 || a->format == CLI_FORMAT_JSON) {
        json_t *o = json_object(), *arr = json_array();
        int ok = o && arr;
        ok = ok && !json_object_set_new(o, "kind", json_string("tradeoff")) &&
             !json_object_set_new(o, "alpha", json_real(a->at)) && ops_json(a, o);
        for (size_t k = 0; ok && k < cs->nc; k++) {
            const curve *c = &cs->c[k];
            json_t *m = json_object();
            ok = m && !json_object_set_new(m, "method", json_string(dpa_method_name(c->method))) &&
                 !json_object_set_new(m, "applicable", json_boolean(c->ok)) &&
                 (c->ok ? !json_object_set_new(m, "beta_lower", json_real(c->up[0])) &&
                              (isnan(c->at_hi) || !json_object_set_new(m, "beta_upper", json_real(c->at_hi))) &&
                              !json_object_set_new(m, "certified", json_boolean(c->certified))
                        : !json_object_set_new(m, "reason", json_string(c->why))) &&
                 !json_array_append_new(arr, m);
        }
        ok = ok && !json_object_set_new(o, "methods", arr);
        char *t = ok ? json_dumps(o, JSON_COMPACT) : NULL;
        json_decref(o);
        if (!t) return cli_fail(CLI_EXIT_FAIL, "out of memory while building the JSON output");
        puts(t);
        free(t);
        return CLI_EXIT_OK;
    }
    const curve *c = &cs->c[0];
    cli_format(v, sizeof v, c->up[0], 6, DPA_ROUND_DOWN);
    printf("beta >= %s   at alpha = %s   (%s)\n", v, x,
           c->certified ? "certified lower bound on the type II error" : "estimate, not certified");
    if (!isnan(c->at_hi)) {
        char h[CLI_NUM_BUF], pw[CLI_NUM_BUF];
        cli_format(h, sizeof h, c->at_hi, 6, DPA_ROUND_UP);
        cli_format(pw, sizeof pw, 1 - c->at_hi, 6, DPA_ROUND_DOWN);
        printf("beta <= %s   (upper bound%s: the most powerful test at this alpha has power 1 - beta >= %s)\n", h,
               c->certified ? "" : ", estimate", pw);
    }
    printf("method: %s\n", dpa_method_name(c->method));
    if (has_tradeoff_ops(a)) {
        char p[CLI_NUM_BUF];
        cli_format_shortest(p, sizeof p, a->subsample);
        printf("curve: the spec's tradeoff function");
        if (a->subsample > 0) printf(", subsampled with probability %s (C_p, GDP Thm 4.2)", p);
        if (a->group > 0) printf(", for groups of %zu (GDP Thm 2.14)", a->group);
        if (a->tf_inverse) printf(", inverted (GDP eq 4)");
        if (a->tf_symmetrize) printf(", symmetrized: max{f, f^-1} (GDP Prop 2.1)");
        printf("\n");
    }
    char perfect[CLI_NUM_BUF], who[64];
    cli_format(perfect, sizeof perfect, 1 - a->at, 6, DPA_ROUND_NEAREST);
    if (a->group > 1) snprintf(who, sizeof who, "datasets that differ in %zu records", a->group);
    else snprintf(who, sizeof who, "neighbouring datasets");
    printf("Every test of the %s (e.g. a membership-inference attack) with false-positive "
           "rate %s has a false-negative rate of at least %s; perfect privacy would be %s.\n", who, x, v, perfect);
    return CLI_EXIT_OK;
}

/* ---- renyi ---- */

int cli_curves_renyi(const cli_args *a, const dpa_spec *spec, curves *cs)
{
    double from = a->given_from ? a->from : RENYI_FROM, to = a->given_to ? a->to : RENYI_TO;
    if (!(from > 0)) return cli_fail(CLI_EXIT_USAGE, "--from: Renyi orders must be > 0, got %.17g", from);
    cs->n = a->given_points ? a->points : CURVE_POINTS;
    curve *c = &cs->c[cs->nc++];
    c->method = DPA_METHOD_RDP;
    c->certified = 1;
    if (alloc_curve(c, cs->n)) return cli_fail(CLI_EXIT_FAIL, "out of memory");
    for (size_t i = 0; i < cs->n; i++) {
        dpa_error err;
        dpa_renyi_result r;
        c->x[i] = grid(a, from, to, i, cs->n);
        dpa_error_clear(&err);
        dpa_status st = dpa_renyi(spec, c->x[i], 0, &r, &err);
        if (st != DPA_OK) return cli_fail_status(st, &err);
        /* the certified upper bounds (an estimate where upper is unknown) */
        c->up[i] = isfinite(r.remove.upper) ? r.remove.upper : r.remove.re;
        c->lo[i] = isfinite(r.add.upper) ? r.add.upper : r.add.re;
        if (!r.remove.certified || !r.add.certified) c->certified = 0;
        if (isnan(c->up[i]) || isnan(c->lo[i])) return cli_library_bug("a NaN Renyi divergence");
    }
    c->ok = 1;
    return CLI_EXIT_OK;
}

/* ---- output ---- */

static const char *x_name(int kind)
{
    return kind == CLI_KIND_PROFILE ? "epsilon" : kind == CLI_KIND_TRADEOFF ? "alpha" : "order";
}

static const char *up_name(int kind)
{
    return kind == CLI_KIND_PROFILE ? "delta_upper" : kind == CLI_KIND_TRADEOFF ? "beta_lower" : "remove";
}

static const char *lo_name(int kind)
{
    return kind == CLI_KIND_PROFILE ? "delta_lower" : kind == CLI_KIND_TRADEOFF ? NULL : "add";
}

static int write_text(const cli_args *a, const char *text)
{
    FILE *fp = a->output && strcmp(a->output, "-") ? fopen(a->output, "w") : stdout;
    if (!fp) return cli_fail(CLI_EXIT_FAIL, "cannot open %s for writing", a->output);
    int bad = fputs(text, fp) < 0;
    bad |= fp == stdout ? fflush(fp) != 0 : fclose(fp) != 0;
    return bad ? cli_fail(CLI_EXIT_FAIL, "error writing %s", fp == stdout ? "to standard output" : a->output)
               : CLI_EXIT_OK;
}

/* s as a CSV field and a comma (quoted, with doubled quotes, if it holds
 * a comma or a quote); returns the bytes written (labels are < 64 bytes:
 * at most 130) */
static size_t csv_field(char *out, size_t cap, const char *s)
{
    size_t n = 0;
    int quote = strpbrk(s, ",\"") != NULL;
    if (cap < 2 * strlen(s) + 4) return 0;
    if (quote) out[n++] = '"';
    for (; *s; s++) {
        if (*s == '"') out[n++] = '"';
        out[n++] = *s;
    }
    if (quote) out[n++] = '"';
    out[n++] = ',';
    out[n] = '\0';
    return n;
}

/* CSV: "method,x,upper[,lower]" rows; with several SPECs a first column
 * "spec" holds each row's label (labels of plain text, no commas: --label
 * splits at commas, and spec names with commas or quotes are quoted). */
static int emit_csv(const cli_args *a, const curves *cs, size_t ns, char (*labels)[64])
{
    size_t cap = 256, len = 0;
    for (size_t j = 0; j < ns; j++) cap += cs[j].nc * cs[j].n * 160;
    char *buf = malloc(cap);
    if (!buf) return cli_fail(CLI_EXIT_FAIL, "out of memory");
    const char *ln = lo_name(cs[0].kind);
    len += (size_t)snprintf(buf + len, cap - len, "%smethod,%s,%s%s%s\n", ns > 1 ? "spec," : "", x_name(cs[0].kind),
                            up_name(cs[0].kind), ln ? "," : "", ln ? ln : "");
    for (size_t j = 0; j < ns; j++)
        for (size_t k = 0; k < cs[j].nc; k++) {
            const curve *c = &cs[j].c[k];
            if (!c->ok) continue;
            for (size_t i = 0; i < cs[j].n; i++) {
                if (ns > 1) len += csv_field(buf + len, cap - len, labels[j]);
                len += (size_t)snprintf(buf + len, cap - len, "%s,%.17g,%.17g", dpa_method_name(c->method), c->x[i],
                                        c->up[i]);
                if (ln) len += (size_t)snprintf(buf + len, cap - len, ",%.17g", c->lo[i]);
                len += (size_t)snprintf(buf + len, cap - len, "\n");
            }
        }
    int rc = write_text(a, buf);
    free(buf);
    return rc;
}

static json_t *num(double x)
{
    return isinf(x) ? json_string(x > 0 ? "inf" : "-inf") : json_real(x);
}

/* The "curves" array of one spec. */
static json_t *curves_json(const curves *cs)
{
    json_t *arr = json_array();
    int ok = arr != NULL;
    const char *ln = lo_name(cs->kind);
    for (size_t k = 0; ok && k < cs->nc; k++) {
        const curve *c = &cs->c[k];
        json_t *m = json_object(), *pts = json_array();
        ok = m && pts;
        ok = ok && !json_object_set_new(m, "method", json_string(dpa_method_name(c->method)));
        ok = ok && !json_object_set_new(m, "applicable", json_boolean(c->ok));
        if (c->ok) {
            ok = ok && !json_object_set_new(m, "certified", json_boolean(c->certified));
            for (size_t i = 0; ok && i < cs->n; i++) {
                json_t *p = json_object();
                ok = p && !json_object_set_new(p, x_name(cs->kind), num(c->x[i])) &&
                     !json_object_set_new(p, up_name(cs->kind), num(c->up[i])) &&
                     (!ln || !json_object_set_new(p, ln, num(c->lo[i]))) && !json_array_append_new(pts, p);
            }
            ok = ok && !json_object_set_new(m, "points", pts);
        } else {
            json_decref(pts);
            ok = ok && !json_object_set_new(m, "reason", json_string(c->why));
        }
        ok = ok && !json_array_append_new(arr, m);
    }
    if (!ok) {
        json_decref(arr);
        return NULL;
    }
    return arr;
}

/* JSON: {"kind", "curves"} for one SPEC; {"kind", "specs": [{"label",
 * "curves"}]} for several. */
static int emit_json(const cli_args *a, const curves *cs, size_t ns, char (*labels)[64])
{
    static const char *const kinds[] = {"profile", "tradeoff", "renyi"};
    json_t *o = json_object();
    int ok = o && !json_object_set_new(o, "kind", json_string(kinds[cs[0].kind])) &&
             (cs[0].kind != CLI_KIND_TRADEOFF || ops_json(a, o));
    if (ns == 1) {
        json_t *arr = curves_json(&cs[0]);
        ok = ok && arr && !json_object_set_new(o, "curves", arr);
    } else {
        json_t *specs = json_array();
        ok = ok && specs && !json_object_set_new(o, "specs", specs);
        for (size_t j = 0; ok && j < ns; j++) {
            json_t *e = json_object(), *arr = curves_json(&cs[j]);
            ok = e && arr && !json_object_set_new(e, "label", json_string(labels[j])) &&
                 !json_object_set_new(e, "curves", arr) && !json_array_append_new(specs, e);
        }
    }
    char *text = ok ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    if (!text) return cli_fail(CLI_EXIT_FAIL, "out of memory while building the JSON output");
    size_t n = strlen(text);
    char *line = malloc(n + 2);
    if (!line) {
        free(text);
        return cli_fail(CLI_EXIT_FAIL, "out of memory");
    }
    memcpy(line, text, n);
    memcpy(line + n, "\n", 2);
    free(text);
    int rc = write_text(a, line);
    free(line);
    return rc;
}

static int emit_plot(const cli_args *a, const curves *cs, size_t ns, char (*labels)[64], cli_plot_format fmt)
{
    cli_series se[CLI_MAX_SPECS * 2 * DPA_METHOD_COUNT];
    char slabels[CLI_MAX_SPECS * 2 * DPA_METHOD_COUNT][CLI_SERIES_LABEL];
    const char *names[CLI_MAX_SPECS];
    cli_figure f;
    char msg[256];
    for (size_t j = 0; j < ns; j++) names[j] = labels[j];
    cli_curves_figure_multi(cs, ns, ns > 1 ? names : NULL, &f, se, slabels);
    cli_curves_figure_options(a, &f);
    if (cli_plot_write(&f, fmt, a->output ? a->output : "-", msg, sizeof msg)) return cli_fail(CLI_EXIT_FAIL, "%s", msg);
    return CLI_EXIT_OK;
}

/* The format: --format, else --json, else from -o's extension, else csv. */
int cli_curve_format(const cli_args *a)
{
    if (a->format != CLI_FORMAT_DEFAULT) return a->format;
    if (a->json) return CLI_FORMAT_JSON;
    const char *dot = a->output ? strrchr(a->output, '.') : NULL;
    if (dot && !strcmp(dot, ".svg")) return CLI_FORMAT_SVG;
    if (dot && !strcmp(dot, ".png")) return CLI_FORMAT_PNG;
    if (dot && !strcmp(dot, ".pdf")) return CLI_FORMAT_PDF;
    if (dot && !strcmp(dot, ".json")) return CLI_FORMAT_JSON;
    return CLI_FORMAT_CSV;
}

/* The legend label of SPEC j: --label, else the spec's "name", else the
 * file's name, else "spec J" (inline JSON, standard input). */
static void spec_label(const cli_args *a, size_t j, const char *text, char *out, size_t n)
{
    char name[64];
    const char *arg = a->specs[j], *slash = strrchr(arg, '/');
    cli_spec_name(text, name, sizeof name);
    if (a->nlabels) snprintf(out, n, "%s", a->labels[j]);
    else if (name[0]) snprintf(out, n, "%s", name);
    else if (strcmp(arg, "-") && arg[strspn(arg, " \t\r\n")] != '{') snprintf(out, n, "%s", slash ? slash + 1 : arg);
    else snprintf(out, n, "spec %zu", j + 1);
}

/* The curves of one spec. */
static int curves_of(const cli_args *a, const char *text, curves *cs)
{
    dpa_error err;
    dpa_error_clear(&err);
    dpa_spec *spec = dpa_spec_from_json(text, &err);
    if (!spec) return cli_fail_status(DPA_EINVAL, &err);
    cs->kind = a->kind;
    int rc = a->kind == CLI_KIND_RENYI     ? cli_curves_renyi(a, spec, cs)
             : a->kind == CLI_KIND_PROFILE ? cli_curves_profile(a, spec, cs)
                                           : cli_curves_tradeoff(a, spec, cs);
    dpa_spec_free(spec);
    return rc;
}

int cli_run_curve(const cli_args *a, const char *text)
{
    int fmt = cli_curve_format(a), rc = CLI_EXIT_OK;
    if (a->kind >= CLI_KIND_PLD) return cli_run_curve_rep(a, text, fmt);
    if ((fmt == CLI_FORMAT_PNG || fmt == CLI_FORMAT_PDF) && !a->output)
        return cli_fail(CLI_EXIT_USAGE, "curve: %s output needs -o FILE (binary data is not written to a terminal)",
                        fmt == CLI_FORMAT_PNG ? "PNG" : "PDF");
    if (a->nspecs > 1 && a->given_at) return cli_fail(CLI_EXIT_USAGE, "curve: --at takes one SPEC");
    curves *cs = calloc(CLI_MAX_SPECS, sizeof *cs); /* several KB each: not on the stack */
    char labels[CLI_MAX_SPECS][64];
    size_t ns = a->nspecs ? a->nspecs : 1, done = 0;
    if (!cs) return cli_fail(CLI_EXIT_FAIL, "out of memory");
    for (size_t j = 0; j < ns && rc == CLI_EXIT_OK; j++, done++) {
        const char *t = text;
        char *to_free = NULL;
        if (j > 0 && (rc = cli_read_spec(a->specs[j], &t, &to_free)) != CLI_EXIT_OK) break;
        if (a->nspecs) spec_label(a, j, t, labels[j], sizeof labels[j]);
        else snprintf(labels[j], sizeof labels[j], "spec 1");
        rc = curves_of(a, t, &cs[j]);
        free(to_free);
    }
    if (rc == CLI_EXIT_OK && a->given_at) {
        rc = emit_at(a, &cs[0]);
    } else if (rc == CLI_EXIT_OK) {
        if (fmt == CLI_FORMAT_CSV) rc = emit_csv(a, cs, ns, labels);
        else if (fmt == CLI_FORMAT_JSON) rc = emit_json(a, cs, ns, labels);
        else rc = emit_plot(a, cs, ns, labels,
                            fmt == CLI_FORMAT_SVG ? CLI_PLOT_SVG : fmt == CLI_FORMAT_PNG ? CLI_PLOT_PNG : CLI_PLOT_PDF);
    }
    for (size_t j = 0; j < done; j++) cli_curves_free(&cs[j]);
    free(cs);
    return rc;
}

/* ---- renyi ---- */

static json_t *renyi_json_value(const dpa_renyi_value *v, int real)
{
    json_t *o = json_object();
    if (!o) return NULL;
    int bad = 0;
    bad |= json_object_set_new(o, "exists", json_boolean(v->exists));
    if (v->exists || real) {
        bad |= json_object_set_new(o, "value", isnan(v->re) ? json_null() : num(v->re));
        if (!real) bad |= json_object_set_new(o, "value_im", isnan(v->im) ? json_null() : num(v->im));
        if (real) {
            bad |= json_object_set_new(o, "lower", isnan(v->lower) ? json_null() : num(v->lower));
            bad |= json_object_set_new(o, "upper", isnan(v->upper) ? json_null() : num(v->upper));
        }
    }
    bad |= json_object_set_new(o, "certified", json_boolean(v->certified));
    bad |= json_object_set_new(o, "note", json_string(v->note));
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* "D(P||Q) <= U   (NOTE)" lines of one direction. */
static void renyi_human_value(const char *name, const dpa_renyi_value *v, int real)
{
    char u[CLI_NUM_BUF], l[CLI_NUM_BUF], re[CLI_NUM_BUF], im[CLI_NUM_BUF];
    if (!v->exists) {
        printf("%s: %s   (%s)\n", name, real ? "inf" : "does not exist", v->note);
        return;
    }
    if (real) {
        int digits = cli_digits_for(v->upper, v->lower);
        cli_format(u, sizeof u, v->upper, digits, DPA_ROUND_UP);
        cli_format(l, sizeof l, v->lower, digits, DPA_ROUND_DOWN);
        printf("%s <= %s   (certified upper bound)\n", name, u);
        printf("%*s >= %s   (certified lower bound)\n", (int)strlen(name), "", l);
        if (!v->certified) {
            cli_format(re, sizeof re, v->re, 10, DPA_ROUND_NEAREST);
            printf("%*s ~= %s   (estimate: %s)\n", (int)strlen(name), "", re, v->note);
        } else if (v->note[0]) {
            printf("%*s    (%s)\n", (int)strlen(name), "", v->note);
        }
        return;
    }
    cli_format(re, sizeof re, v->re, 12, DPA_ROUND_NEAREST);
    cli_format(im, sizeof im, fabs(v->im), 12, DPA_ROUND_NEAREST);
    printf("%s = %s %c %si   (%s%s%s)\n", name, re, v->im < 0 ? '-' : '+', im, v->certified ? "exact up to round-off" : "estimate",
           v->note[0] ? ": " : "", v->note);
}

int cli_run_renyi(const cli_args *a, const char *text)
{
    dpa_error err;
    dpa_error_clear(&err);
    dpa_spec *spec = dpa_spec_from_json(text, &err);
    if (!spec) return cli_fail_status(DPA_EINVAL, &err);
    dpa_renyi_result r;
    dpa_status st = dpa_renyi(spec, a->order_re, a->order_im, &r, &err);
    dpa_spec_free(spec);
    if (st != DPA_OK) return cli_fail_status(st, &err);
    int real = a->order_im == 0;
    const dpa_renyi_value *v[2] = {&r.remove, &r.add};
    for (int d = 0; d < 2; d++) {
        if (real && v[d]->exists && (isnan(v[d]->upper) || isnan(v[d]->lower) || v[d]->lower > v[d]->upper))
            return cli_library_bug("an invalid Renyi bracket");
        if (v[d]->exists && (isnan(v[d]->re) || (!real && isnan(v[d]->im))))
            return cli_library_bug("a NaN Renyi divergence");
        if (!memchr(v[d]->note, '\0', sizeof v[d]->note)) return cli_library_bug("an unterminated note");
    }
    if (a->json) {
        json_t *o = json_object();
        int ok = o != NULL;
        ok = ok && !json_object_set_new(o, "query", json_string("renyi"));
        ok = ok && !json_object_set_new(o, "order", json_string(a->order_text));
        ok = ok && !json_object_set_new(o, "order_re", json_real(a->order_re));
        ok = ok && !json_object_set_new(o, "order_im", json_real(a->order_im));
        json_t *rm = renyi_json_value(&r.remove, real), *ad = renyi_json_value(&r.add, real);
        ok = ok && rm && !json_object_set_new(o, "remove", rm);
        ok = ok && ad && !json_object_set_new(o, "add", ad);
        if (real)
            ok = ok && !json_object_set_new(o, "binding_direction",
                                            json_string(cli_direction_word((dpa_direction)r.binding)));
        char *out = ok ? json_dumps(o, JSON_COMPACT) : NULL;
        json_decref(o);
        if (!out) return cli_fail(CLI_EXIT_FAIL, "out of memory while building the JSON output");
        puts(out);
        free(out);
        return CLI_EXIT_OK;
    }
    printf("Renyi divergence of order %s of the composition:\n", a->order_text);
    renyi_human_value("remove: D(P||Q)", &r.remove, real);
    if (r.symmetric) puts("add: D(Q||P) is the same (symmetric composition)");
    else renyi_human_value("add:    D(Q||P)", &r.add, real);
    return CLI_EXIT_OK;
}
