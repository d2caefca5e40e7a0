/* dpacct command-line front end: the representation kinds of `dpacct curve`
 * (docs/cli.md, "curve"):
 *   --kind pld  the pld method's composed grid measures, upper and lower, of
 *               each direction (dpa_accountant_pld)
 *   --kind phi  the characteristic function of the privacy loss on a t grid,
 *               both directions (dpa_characteristic)
 *   --kind lt   the privacy profile from the Renyi curve: the inverse Laplace
 *               transform of LT eq 37 (an estimate) and the rdp conversion (a
 *               certified bound) on an epsilon grid (dpa_lt_profile)
 * Tables only (csv or json).  The PLD's masses are written as they are
 * read from the accountant, row by row, never collected into one string:
 * a grid of millions of points costs no more memory than the accountant's.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "curve.h"

/* phi: the default t range */
#define PHI_FROM 0.0
#define PHI_TO 10.0
/* lt: the default eps range ends where the rdp bound reaches this delta */
#define LT_END_DELTA 1e-10
#define LT_TO_FALLBACK 10.0

/* The kind's methods: pld takes auto or pld, phi and lt none. */
static int check_method(const cli_args *a, const char *kind, int pld)
{
    if (a->all_methods || (a->opt.method != DPA_METHOD_AUTO && !(pld && a->opt.method == DPA_METHOD_PLD)))
        return cli_fail(CLI_EXIT_USAGE, "curve: --kind %s %s", kind,
                        pld ? "is the pld method's (--method pld or auto)"
                            : "does not take --method (it is computed by the phi module; lt's bound by the rdp method)");
    return CLI_EXIT_OK;
}

/* A number: %.17g, "inf"/"-inf" as JSON strings (json) or plain, NaN as
 * null (json) or an empty CSV field. */
static void put_num(FILE *fp, double x, int json)
{
    if (isnan(x)) fputs(json ? "null" : "", fp);
    else if (isinf(x)) fputs(json ? (x > 0 ? "\"inf\"" : "\"-inf\"") : (x > 0 ? "inf" : "-inf"), fp);
    else fprintf(fp, "%.17g", x + 0.0); /* -0 -> 0 */
}

static void put_json_string(FILE *fp, const char *s)
{
    fputc('"', fp);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fprintf(fp, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) fprintf(fp, "\\u%04x", (unsigned)(unsigned char)*s);
        else fputc(*s, fp);
    }
    fputc('"', fp);
}

static FILE *open_out(const cli_args *a)
{
    return a->output && strcmp(a->output, "-") ? fopen(a->output, "w") : stdout;
}

static int close_out(const cli_args *a, FILE *fp)
{
    int bad = ferror(fp);
    bad |= fp == stdout ? fflush(fp) != 0 : fclose(fp) != 0;
    return bad ? cli_fail(CLI_EXIT_FAIL, "error writing %s", fp == stdout ? "to standard output" : a->output)
               : CLI_EXIT_OK;
}

/* Point i of n from `from` to `to`, evenly spaced. */
static double lin(double from, double to, size_t i, size_t n)
{
    if (i == 0) return from;
    if (i == n - 1) return to;
    double t = (double)i / (double)(n - 1);
    return from * (1 - t) + to * t;
}

/* ---- pld ---- */

static void pld_measure(FILE *fp, const char *dir, const char *which, const dpa_pld_measure *m, int certified,
                        int json)
{
    if (json) {
        fprintf(fp, "\"%s\":{\"step\":", which);
        put_num(fp, m->step, 1);
        fprintf(fp, ",\"offset\":%lld,\"n\":%zu,\"inf\":", m->offset, m->n);
        put_num(fp, m->inf, 1);
        fputs(",\"tail_above\":", fp);
        put_num(fp, m->tail_above, 1);
        fputs(",\"truncated_mass\":", fp);
        put_num(fp, m->tail_outside, 1);
        fputs(",\"roundoff\":", fp);
        put_num(fp, m->roundoff, 1);
        fputs(",\"rel_err\":", fp);
        put_num(fp, m->rel_err, 1);
        fprintf(fp, ",\"certified\":%s,\"mass\":[", certified ? "true" : "false");
        for (size_t i = 0; i < m->n; i++) {
            if (i) fputc(',', fp);
            put_num(fp, m->mass[i], 1);
        }
        fputs("]}", fp);
        return;
    }
    fprintf(fp, "# %s %s: step=%.17g offset=%lld n=%zu inf=%.17g tail_above=%.17g truncated_mass=%.17g "
                "roundoff=%.17g rel_err=%.17g certified=%s\n",
            dir, which, m->step, m->offset, m->n, m->inf + 0.0, m->tail_above, m->tail_outside, m->roundoff, m->rel_err,
            certified ? "true" : "false");
    for (size_t i = 0; i < m->n; i++)
        fprintf(fp, "%s,%s,%lld,%.17g,%.17g\n", dir, which, m->offset + (long long)i,
                (double)(m->offset + (long long)i) * m->step, m->mass[i] + 0.0);
    fprintf(fp, "%s,%s,,inf,%.17g\n", dir, which, m->inf + 0.0);
}

static int run_pld(const cli_args *a, const dpa_spec *spec, int json)
{
    if (check_method(a, "pld", 1) != CLI_EXIT_OK) return CLI_EXIT_USAGE;
    dpa_options o = a->opt;
    o.method = DPA_METHOD_PLD;
    dpa_error err;
    dpa_error_clear(&err);
    dpa_accountant *acc = dpa_accountant_new(spec, &o, &err);
    if (!acc) return cli_fail_status(err.status ? err.status : DPA_EINVAL, &err);
    dpa_pld_export x[2];
    int nd = 0;
    dpa_direction dirs[2] = {DPA_DIR_REMOVE, DPA_DIR_ADD};
    if (a->given_direction) dirs[0] = a->direction;
    /* every direction asked for is composed before anything is written
     * (a composition may move the grid of the other: the export keeps the
     * finest step, so the second export is made, then the first again) */
    for (int pass = 0; pass < 2; pass++)
        for (nd = 0; nd < (a->given_direction ? 1 : 2); nd++) {
            dpa_status st = dpa_accountant_pld(acc, dirs[nd], &x[nd], &err);
            if (st) {
                dpa_accountant_free(acc);
                return cli_fail_status(st, &err);
            }
            if (x[nd].direction == DPA_DIR_BOTH) {
                nd++;
                break;
            }
        }
    for (int d = 0; d < nd; d++)
        for (int k = 0; k < 2; k++) {
            const dpa_pld_measure *m = k ? &x[d].lower : &x[d].upper;
            for (size_t i = 0; i < m->n; i++)
                if (!(m->mass[i] >= 0) || !isfinite(m->mass[i])) {
                    dpa_accountant_free(acc);
                    return cli_library_bug("a PLD mass that is negative or not finite");
                }
        }
    FILE *fp = open_out(a);
    if (!fp) {
        dpa_accountant_free(acc);
        return cli_fail(CLI_EXIT_FAIL, "cannot open %s for writing", a->output);
    }
    if (json) fputs("{\"kind\":\"pld\",\"method\":\"pld\",\"directions\":[", fp);
    else fputs("direction,measure,index,loss,mass\n", fp);
    for (int d = 0; d < nd; d++) {
        const char *dn = cli_direction_word(x[d].direction);
        if (json) fprintf(fp, "%s{\"direction\":\"%s\",", d ? "," : "", dn);
        pld_measure(fp, dn, "upper", &x[d].upper, 1, json);
        if (json) fputc(',', fp);
        pld_measure(fp, dn, "lower", &x[d].lower, x[d].lower_certified, json);
        if (json) fputc('}', fp);
    }
    if (json) fputs("]}\n", fp);
    dpa_accountant_free(acc);
    return close_out(a, fp);
}

/* ---- phi ---- */

static int run_phi(const cli_args *a, const dpa_spec *spec, int json)
{
    if (check_method(a, "phi", 0) != CLI_EXIT_OK) return CLI_EXIT_USAGE;
    double from = a->given_from ? a->from : PHI_FROM, to = a->given_to ? a->to : PHI_TO;
    if (!(from < to)) return cli_fail(CLI_EXIT_USAGE, "curve: --from must be less than --to, got %.17g and %.17g", from, to);
    size_t n = a->given_points ? a->points : 101;
    double *buf = calloc(7 * n, sizeof *buf);
    if (!buf) return cli_fail(CLI_EXIT_FAIL, "out of memory");
    double *t = buf, *v[2][3] = {{buf + n, buf + 2 * n, buf + 3 * n}, {buf + 4 * n, buf + 5 * n, buf + 6 * n}};
    for (size_t i = 0; i < n; i++) t[i] = lin(from, to, i, n);
    int cert[2];
    dpa_error err;
    dpa_error_clear(&err);
    for (int d = 0; d < 2; d++) {
        dpa_status st = dpa_characteristic(spec, d ? DPA_DIR_ADD : DPA_DIR_REMOVE, t, n, v[d][0], v[d][1], v[d][2],
                                           &cert[d], &err);
        if (st) {
            free(buf);
            return cli_fail_status(st, &err);
        }
    }
    FILE *fp = open_out(a);
    if (!fp) {
        free(buf);
        return cli_fail(CLI_EXIT_FAIL, "cannot open %s for writing", a->output);
    }
    static const char *const dn[2] = {"remove", "add"};
    if (json) fprintf(fp, "{\"kind\":\"phi\",\"certified\":%s,\"points\":[", cert[0] && cert[1] ? "true" : "false");
    else fputs("t,re_remove,im_remove,error_remove,re_add,im_add,error_add,error_certified\n", fp);
    for (size_t i = 0; i < n; i++) {
        if (json) fprintf(fp, "%s{\"t\":", i ? "," : "");
        put_num(fp, t[i], json);
        for (int d = 0; d < 2; d++) {
            static const char *const f[3] = {"re", "im", "error"};
            if (json) fprintf(fp, ",\"%s\":{", dn[d]);
            for (int k = 0; k < 3; k++) {
                if (json) fprintf(fp, "%s\"%s\":", k ? "," : "", f[k]);
                else fputc(',', fp);
                put_num(fp, v[d][k][i], json);
            }
            if (json) fputc('}', fp);
        }
        if (!json) fputs(cert[0] && cert[1] ? ",true" : ",false", fp);
        fputs(json ? "}" : "\n", fp);
    }
    if (json) fputs("]}\n", fp);
    free(buf);
    return close_out(a, fp);
}

/* ---- lt ---- */

/* the end of the default eps range: the rdp bound's eps at LT_END_DELTA */
static double lt_end(const cli_args *a, const dpa_spec *spec, double from)
{
    dpa_options o = a->opt;
    o.method = DPA_METHOD_RDP;
    dpa_error err;
    dpa_accountant *acc = dpa_accountant_new(spec, &o, &err);
    double e = NAN;
    dpa_result r;
    if (acc && dpa_accountant_epsilon(acc, LT_END_DELTA, &r, &err) == DPA_OK && isfinite(r.upper)) e = r.upper;
    dpa_accountant_free(acc);
    return isfinite(e) && e > from ? e : from + LT_TO_FALLBACK;
}

static int run_lt(const cli_args *a, const dpa_spec *spec, int json)
{
    if (check_method(a, "lt", 0) != CLI_EXIT_OK) return CLI_EXIT_USAGE;
    double from = a->given_from ? a->from : 0, to = a->given_to ? a->to : lt_end(a, spec, from);
    if (!(from < to)) return cli_fail(CLI_EXIT_USAGE, "curve: --from must be less than --to, got %.17g and %.17g", from, to);
    size_t n = a->given_points ? a->points : 101;
    double *eps = calloc(n, sizeof *eps);
    dpa_lt_point *p = calloc(n, sizeof *p);
    if (!eps || !p) {
        free(eps);
        free(p);
        return cli_fail(CLI_EXIT_FAIL, "out of memory");
    }
    for (size_t i = 0; i < n; i++) eps[i] = lin(from, to, i, n);
    dpa_lt_info info;
    dpa_error err;
    dpa_error_clear(&err);
    dpa_status st = dpa_lt_profile(spec, &a->opt, eps, n, p, &info, &err);
    free(eps);
    if (st) {
        free(p);
        return cli_fail_status(st, &err);
    }
    for (size_t i = 0; i < n; i++)
        if ((info.has_estimate && isnan(p[i].estimate)) || (info.has_bound && isnan(p[i].bound))) {
            free(p);
            return cli_library_bug("a NaN profile value");
        }
    /* the CSV cannot say why a column is empty: standard error does */
    if (!json) {
        if (!info.has_estimate) fprintf(stderr, "dpacct: note: no delta_estimate: %s\n", info.estimate_note);
        if (!info.has_bound) fprintf(stderr, "dpacct: note: no delta_bound: %s\n", info.bound_note);
    }
    FILE *fp = open_out(a);
    if (!fp) {
        free(p);
        return cli_fail(CLI_EXIT_FAIL, "cannot open %s for writing", a->output);
    }
    if (json) {
        fprintf(fp, "{\"kind\":\"lt\",\"estimate\":{\"available\":%s,\"what\":\"the inverse Laplace transform of LT eq "
                    "37 (Bromwich integral over complex Renyi orders): an estimate, not certified\",\"note\":",
                info.has_estimate ? "true" : "false");
        put_json_string(fp, info.estimate_note);
        fprintf(fp, "},\"bound\":{\"available\":%s,\"what\":\"the rdp method's conversion (%s): a certified upper "
                    "bound\",\"note\":",
                info.has_bound ? "true" : "false", dpa_rdp_conv_name(a->opt.rdp_conversion));
        put_json_string(fp, info.bound_note);
        fputs("},\"points\":[", fp);
    } else {
        fputs("epsilon,delta_estimate,estimate_error,estimate_remove,estimate_add,delta_bound\n", fp);
    }
    for (size_t i = 0; i < n; i++) {
        const dpa_lt_point *q = &p[i];
        double f[6] = {q->eps, q->estimate, q->error_estimate, q->estimate_remove, q->estimate_add,
                       info.has_bound ? q->bound : NAN};
        static const char *const k[6] = {"epsilon", "delta_estimate", "estimate_error", "estimate_remove",
                                         "estimate_add", "delta_bound"};
        if (json) fputs(i ? ",{" : "{", fp);
        for (int j = 0; j < 6; j++) {
            if (json) fprintf(fp, "%s\"%s\":", j ? "," : "", k[j]);
            else if (j) fputc(',', fp);
            put_num(fp, f[j], json);
        }
        fputs(json ? "}" : "\n", fp);
    }
    if (json) fputs("]}\n", fp);
    free(p);
    return close_out(a, fp);
}

int cli_run_curve_rep(const cli_args *a, const char *text, int fmt)
{
    if (fmt != CLI_FORMAT_CSV && fmt != CLI_FORMAT_JSON)
        return cli_fail(CLI_EXIT_USAGE, "curve: --kind %s is a table: --format csv or json",
                        a->kind == CLI_KIND_PLD ? "pld" : a->kind == CLI_KIND_PHI ? "phi" : "lt");
    dpa_error err;
    dpa_error_clear(&err);
    dpa_spec *spec = dpa_spec_from_json(text, &err);
    if (!spec) return cli_fail_status(DPA_EINVAL, &err);
    int json = fmt == CLI_FORMAT_JSON;
    int rc = a->kind == CLI_KIND_PLD   ? run_pld(a, spec, json)
             : a->kind == CLI_KIND_PHI ? run_phi(a, spec, json)
                                       : run_lt(a, spec, json);
    dpa_spec_free(spec);
    return rc;
}
