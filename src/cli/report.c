/* dpacct command-line front end: `dpacct report`, one self-contained HTML
 * page a person reads (inline SVG, no scripts, no network).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * Sections: eps at a ladder of deltas (the chosen method), the smallest
 * mu-GDP (its certified bracket), every method side by side at delta 1e-5,
 * what the tradeoff curve says about membership inference, the privacy
 * profile, the tradeoff curve against the diagonal, the Renyi curve where it
 * exists, and the spec. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "curve.h"

/* the delta ladder of the first table */
static const double LADDER[] = {1e-3, 1e-5, 1e-6, 1e-8, 1e-10};
#define NLADDER (sizeof LADDER / sizeof *LADDER)
/* false-positive rates at which the membership-inference bound is stated */
static const double FPR[] = {0.001, 0.01, 0.05, 0.1};
#define NFPR (sizeof FPR / sizeof *FPR)

typedef struct page {
    char *buf;
    size_t len, cap;
    int oom;
    int figures;  /* inline SVGs so far (their id prefix) */
} page;

static void put(page *p, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#include <stdarg.h>
static void put(page *p, const char *fmt, ...)
{
    if (p->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(p->buf ? p->buf + p->len : NULL, p->buf ? p->cap - p->len : 0, fmt, ap);
        va_end(ap);
        if (n < 0) {
            p->oom = 1;
            return;
        }
        if (p->buf && p->len + (size_t)n < p->cap) {
            p->len += (size_t)n;
            return;
        }
        size_t nc = p->cap ? 2 * p->cap : 65536;
        while (nc < p->len + (size_t)n + 1) nc *= 2;
        char *nb = realloc(p->buf, nc);
        if (!nb) {
            p->oom = 1;
            return;
        }
        p->buf = nb;
        p->cap = nc;
    }
}

/* text with &, <, > and " escaped */
static void put_escaped(page *p, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': put(p, "&amp;"); break;
        case '<': put(p, "&lt;"); break;
        case '>': put(p, "&gt;"); break;
        case '"': put(p, "&quot;"); break;
        default: put(p, "%c", *s);
        }
    }
}

static void put_bound(page *p, double x, int dir)
{
    char b[CLI_NUM_BUF];
    cli_format(b, sizeof b, x, 6, dir);
    put(p, "%s", b);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The smallest mu with the composition mu-GDP (GDP Def 2.4), from the
 * ladder's accountant: its certified bracket and how it was obtained. */
static void section_gdp_mu(page *p, dpa_accountant *acc)
{
    dpa_gdp_mu g;
    dpa_error err;
    dpa_error_clear(&err);
    dpa_accountant_gdp_mu(acc, &g, &err);
    put(p, "<h2>Gaussian differential privacy</h2>\n<p>The smallest mu such that the composition is mu-GDP "
           "(its privacy profile below that of two unit-variance Gaussians mu apart, in both directions): ");
    if (g.source == DPA_GDP_MU_INFINITE) {
        put(p, "<b>none</b> (no finite mu; certified).");
    } else if (g.certified_upper) {
        char us[CLI_NUM_BUF], ls[CLI_NUM_BUF];
        int digits = cli_digits_for(g.upper, g.lower);
        cli_format(us, sizeof us, g.upper, digits, DPA_ROUND_UP);
        cli_format(ls, sizeof ls, g.lower, digits, DPA_ROUND_DOWN);
        put(p, "<b>mu &le; %s</b> (certified; claim this), mu &ge; %s.", us, ls);
    } else {
        put(p, "mu &ge; ");
        put_bound(p, g.lower, DPA_ROUND_DOWN);
        put(p, " (lower bound only: <b>no certified upper bound</b>).");
    }
    put(p, "</p>\n<p class=\"na\">");
    put_escaped(p, g.note);
    put(p, "</p>\n");
}

static void section_ladder(page *p, const cli_args *a, const dpa_spec *spec)
{
    dpa_error err;
    dpa_accountant *acc = dpa_accountant_new(spec, &a->opt, &err);
    put(p, "<h2>Epsilon at standard deltas</h2>\n");
    if (!acc) {
        put(p, "<p class=\"bad\">");
        put_escaped(p, err.message);
        put(p, "</p>\n");
        return;
    }
    put(p, "<p>Method: <b>%s</b>. Claim the upper bound; the lower bound shows how much is left on "
           "the table.</p>\n<table><tr><th>delta</th><th>epsilon &le; (claim)</th><th>epsilon &ge;</th>"
           "<th>certified</th></tr>\n", dpa_method_name(dpa_accountant_method(acc)));
    for (size_t i = 0; i < NLADDER; i++) {
        dpa_result r;
        put(p, "<tr><td>%g</td>", LADDER[i]);
        if (dpa_accountant_epsilon(acc, LADDER[i], &r, &err) != DPA_OK) {
            put(p, "<td colspan=\"3\" class=\"bad\">");
            put_escaped(p, err.message);
            put(p, "</td></tr>\n");
            continue;
        }
        put(p, "<td><b>");
        put_bound(p, r.upper, DPA_ROUND_UP);
        put(p, "</b></td><td>");
        put_bound(p, r.lower, DPA_ROUND_DOWN);
        put(p, "</td><td>%s</td></tr>\n", r.certified ? "yes" : "no (estimate)");
    }
    put(p, "</table>\n");
    section_gdp_mu(p, acc);
    dpa_accountant_free(acc);
}

static void section_methods(page *p, const cli_args *a, const dpa_spec *spec)
{
    static const dpa_method ms[] = {DPA_METHOD_EXACT, DPA_METHOD_PLD, DPA_METHOD_PHI,
                                    DPA_METHOD_RDP,   DPA_METHOD_CLT, DPA_METHOD_GDP};
    put(p, "<h2>Every method at delta = 1e-5</h2>\n<table><tr><th>method</th><th>epsilon &le;</th>"
           "<th>epsilon &ge;</th><th>kind of result</th><th>time</th></tr>\n");
    for (size_t i = 0; i < sizeof ms / sizeof *ms; i++) {
        dpa_options o = a->opt;
        dpa_error err;
        dpa_result r;
        o.method = ms[i];
        double t0 = now_s();
        dpa_accountant *acc = dpa_accountant_new(spec, &o, &err);
        dpa_status st = acc ? dpa_accountant_epsilon(acc, 1e-5, &r, &err) : err.status;
        double dt = now_s() - t0;
        dpa_accountant_free(acc);
        put(p, "<tr><td>%s</td>", dpa_method_name(ms[i]));
        if (st != DPA_OK) {
            put(p, "<td colspan=\"4\" class=\"na\">not applicable: ");
            put_escaped(p, err.message);
            put(p, "</td></tr>\n");
            continue;
        }
        put(p, "<td>");
        put_bound(p, r.upper, DPA_ROUND_UP);
        put(p, "</td><td>");
        put_bound(p, r.lower, DPA_ROUND_DOWN);
        const char *kind = ms[i] == DPA_METHOD_PHI   ? "estimate, not certified"
                           : ms[i] == DPA_METHOD_GDP ? "CLT approximation, not a bound"
                           : ms[i] == DPA_METHOD_RDP ? "certified upper bound only"
                                                     : "certified bracket";
        put(p, "</td><td>%s</td><td>%.1f ms</td></tr>\n", kind, 1e3 * dt);
    }
    put(p, "</table>\n");
}

/* The membership-inference statement from the tradeoff lower bound: at
 * false-positive rate x every test has true-positive rate <= 1 - f(x). */
static void section_mia(page *p, const curves *tc)
{
    put(p, "<h2>Membership inference</h2>\n");
    const curve *c = tc->nc && tc->c[0].ok ? &tc->c[0] : NULL;
    if (!c) {
        put(p, "<p class=\"na\">No tradeoff curve (see the table above).</p>\n");
        return;
    }
    /* between grid points x_i < x < x_{i+1}, beta(x) >= beta(x_{i+1}) (beta
     * is non-increasing): the advantage 1 - x - beta(x) is at most
     * 1 - x_i - beta(x_{i+1}), a certified bound from the grid */
    double adv = 0;
    for (size_t i = 0; i + 1 < tc->n; i++) adv = fmax(adv, 1 - c->x[i] - c->up[i + 1]);
    put(p, "<p>Any test that tells whether one person's data was used (a membership-inference "
           "attack), with false-positive rate alpha, has a true-positive rate of at most 1 &minus; "
           "beta(alpha) below (method %s; %s).</p>\n<table><tr><th>false-positive rate</th>"
           "<th>true-positive rate &le;</th></tr>\n",
        dpa_method_name(c->method), c->certified ? "certified" : "an estimate");
    for (size_t k = 0; k < NFPR; k++) {
        /* the first grid point at or above FPR[k]: beta is non-increasing,
         * so its value there is a lower bound on beta(FPR[k]) */
        size_t best = tc->n - 1;
        for (size_t i = tc->n; i-- > 0;)
            if (c->x[i] >= FPR[k]) best = i;
        put(p, "<tr><td>%g</td><td>", FPR[k]);
        put_bound(p, fmin(1.0, 1 - c->up[best]), DPA_ROUND_UP);
        put(p, "</td></tr>\n");
    }
    put(p, "</table>\n<p>Largest advantage of any such test (true-positive minus false-positive rate): at "
           "most ");
    put_bound(p, adv, DPA_ROUND_UP);
    put(p, " (perfect privacy: 0).</p>\n");
}

static void put_svg(page *p, const curves *cs)
{
    cli_series se[2 * DPA_METHOD_COUNT];
    char labels[2 * DPA_METHOD_COUNT][CLI_SERIES_LABEL];
    cli_figure f;
    char msg[256], *svg = NULL;
    cli_curves_figure(cs, &f, se, labels);
    p->figures++;
    if (cli_plot_svg_string(&f, &svg, msg, sizeof msg)) {
        put(p, "<p class=\"bad\">");
        put_escaped(p, msg);
        put(p, "</p>\n");
        return;
    }
    /* inline: drop the XML declaration, and prefix every id (cairo numbers
     * its glyph and clip ids from 0 in each drawing: several drawings in one
     * page would share them and show each other's glyphs) */
    const char *s = strstr(svg, "<svg");
    put(p, "<div class=\"fig\">");
    for (s = s ? s : svg; *s;) {
        static const char *const refs[] = {"id=\"", "href=\"#", "url(#"};
        size_t k = 0, m = 0;
        for (; k < 3; k++)
            if (!strncmp(s, refs[k], m = strlen(refs[k]))) break;
        if (k < 3) {
            put(p, "%.*sf%d-", (int)m, s, p->figures);
            s += m;
        } else {
            put(p, "%c", *s++);
        }
    }
    put(p, "</div>\n");
    free(svg);
}

int cli_run_report(const cli_args *a, const char *text)
{
    dpa_error err;
    dpa_error_clear(&err);
    dpa_spec *spec = dpa_spec_from_json(text, &err);
    if (!spec) return cli_fail_status(DPA_EINVAL, &err);
    page p = {0};
    put(&p, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>dpacct privacy report</title>\n"
            "<style>body{font-family:'DejaVu Sans',sans-serif;max-width:900px;margin:2em auto;color:#222}"
            "table{border-collapse:collapse;margin:0.5em 0}td,th{border:1px solid #bbb;padding:4px 10px;"
            "text-align:left}th{background:#eee}.na{color:#777}.bad{color:#b00}pre{background:#f6f6f6;"
            "padding:8px;white-space:pre-wrap;word-break:break-all}.fig svg{max-width:100%%;height:auto}"
            "</style></head><body>\n<h1>Privacy report</h1>\n<p>Made by dpacct %s. Every number is a "
            "certified bound unless the table says otherwise; upper bounds are rounded up and lower "
            "bounds down.</p>\n", DPACCT_VERSION);
    section_ladder(&p, a, spec);
    section_methods(&p, a, spec);
    /* the curves: the chosen method for tradeoff, every method for the profile */
    cli_args b = *a;
    curves prof, trade, ren;
    memset(&prof, 0, sizeof prof);
    memset(&trade, 0, sizeof trade);
    memset(&ren, 0, sizeof ren);
    prof.kind = CLI_KIND_PROFILE;
    trade.kind = CLI_KIND_TRADEOFF;
    ren.kind = CLI_KIND_RENYI;
    b.all_methods = 0;
    b.given_from = b.given_to = b.given_at = 0;
    /* alpha on a 1/1000 grid: the false-positive rates of the table are grid points */
    b.given_points = 1;
    b.points = 1001;
    int rt = cli_curves_tradeoff(&b, spec, &trade);
    if (rt == CLI_EXIT_OK) section_mia(&p, &trade);
    b.all_methods = 1;
    put(&p, "<h2>Privacy profile</h2>\n<p>delta(epsilon) of every method that applies; the tight methods' "
            "certified brackets are shaded (often thinner than the line).</p>\n");
    if (cli_curves_profile(&b, spec, &prof) == CLI_EXIT_OK) put_svg(&p, &prof);
    put(&p, "<h2>Tradeoff curve</h2>\n<p>A certified lower bound on the type II error of any test at each "
            "type I error; the diagonal is perfect privacy.</p>\n");
    if (rt == CLI_EXIT_OK) put_svg(&p, &trade);
    put(&p, "<h2>R&eacute;nyi divergence</h2>\n");
    if (cli_curves_renyi(&b, spec, &ren) == CLI_EXIT_OK) put_svg(&p, &ren);
    else put(&p, "<p class=\"na\">Not available for this spec (see the message on standard error).</p>\n");
    char *json = dpa_spec_to_json(spec);
    put(&p, "<h2>Spec</h2>\n<pre>");
    if (json) put_escaped(&p, json);
    put(&p, "</pre>\n</body></html>\n");
    free(json);
    cli_curves_free(&prof);
    cli_curves_free(&trade);
    cli_curves_free(&ren);
    dpa_spec_free(spec);
    if (p.oom) {
        free(p.buf);
        return cli_fail(CLI_EXIT_FAIL, "out of memory while building the report");
    }
    FILE *fp = a->output && strcmp(a->output, "-") ? fopen(a->output, "w") : stdout;
    if (!fp) {
        free(p.buf);
        return cli_fail(CLI_EXIT_FAIL, "cannot open %s for writing", a->output);
    }
    int bad = fwrite(p.buf, 1, p.len, fp) != p.len;
    bad |= fp == stdout ? fflush(fp) != 0 : fclose(fp) != 0;
    free(p.buf);
    return bad ? cli_fail(CLI_EXIT_FAIL, "error writing the report") : CLI_EXIT_OK;
}
