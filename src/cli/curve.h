/* dpacct command-line front end: curves shared by `curve` and `report`.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPA_CLI_CURVE_H
#define DPA_CLI_CURVE_H

#include "cli.h"
#include "plot.h"

typedef struct curve {
    dpa_method method;
    int ok;
    char why[512];
    int certified;
    double *x, *up, *lo;    /* n points; for renyi: up = remove, lo = add (upper bounds) */
    double at_hi;           /* tradeoff --at: upper bound on beta there (dpa_tf_beta_at) */
} curve;

typedef struct curves {
    int kind;
    size_t n;               /* points per curve */
    curve c[DPA_METHOD_COUNT];
    size_t nc;
} curves;

/* Compute the curves of one kind for the methods of a (a->all_methods: every
 * method, refusals kept with their reason); returns an exit status (after
 * printing the error).  cs must be zeroed; free with cli_curves_free. */
int cli_curves_profile(const cli_args *a, const dpa_spec *spec, curves *cs);
int cli_curves_tradeoff(const cli_args *a, const dpa_spec *spec, curves *cs);
int cli_curves_renyi(const cli_args *a, const dpa_spec *spec, curves *cs);
void cli_curves_free(curves *cs);
/* curve_figure.c */
/* the longest legend label of a series */
#define CLI_SERIES_LABEL 96
/* The figure of cs: se needs 2 * DPA_METHOD_COUNT series, labels as many. */
void cli_curves_figure(const curves *cs, cli_figure *f, cli_series *se, char (*labels)[CLI_SERIES_LABEL]);
/* The figure of ns sets of curves of one kind on one plot, their legend
 * entries prefixed with names[j] (NULL: one set, no prefix): se needs
 * ns * 2 * DPA_METHOD_COUNT series, labels as many. */
void cli_curves_figure_multi(const curves *cs, size_t ns, const char *const *names, cli_figure *f, cli_series *se,
                             char (*labels)[CLI_SERIES_LABEL]);
/* The command line's title, size, resolution and log axes applied to f. */
void cli_curves_figure_options(const cli_args *a, cli_figure *f);

/* curve.c: 1 if the x axis is logarithmic (--log-scale x or xy) */
int cli_curve_logx(const cli_args *a);
/* curve.c: the output format (CLI_FORMAT_*): --format, else --json, else
 * from -o's extension, else csv */
int cli_curve_format(const cli_args *a);

/* curve_rep.c: `curve --kind pld|phi|lt` (tables of the representations;
 * one SPEC) in the format fmt (CLI_FORMAT_*: csv or json, else an error) */
int cli_run_curve_rep(const cli_args *a, const char *text, int fmt);

/* report.c */
int cli_run_report(const cli_args *a, const char *spec_text);

#endif
