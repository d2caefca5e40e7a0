/* dpacct command-line front end: the figure of a set of curves (`curve`
 * plots, `report`'s drawings): series, legend labels with Greek letters,
 * axes, and the command line's figure options.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "curve.h"

void cli_curves_figure_multi(const curves *cs, size_t ns, const char *const *names, cli_figure *f, cli_series *se,
                             char (*labels)[CLI_SERIES_LABEL])
{
    memset(f, 0, sizeof *f);
    f->xmin = f->xmax = f->ymin = f->ymax = NAN;
    size_t n = 0;
    for (size_t j = 0; j < ns; j++) {
        char pre[80] = "";
        if (names) snprintf(pre, sizeof pre, "%s: ", names[j]);
        for (size_t k = 0; k < cs[j].nc; k++) {
            const curve *c = &cs[j].c[k];
            if (!c->ok) continue;
            /* one spec: the method's colour; several: one colour per curve */
            int color = names ? (int)n : (int)k;
            if (cs[j].kind == CLI_KIND_RENYI) {
                snprintf(labels[n], CLI_SERIES_LABEL, "%sremove: D\xce\xb1(P\xe2\x80\x96Q)%s", pre,
                         c->certified ? "" : " (estimate)");
                se[n] = (cli_series){labels[n], c->x, c->up, cs[j].n, 0, color, NULL, !c->certified};
                n++;
                snprintf(labels[n], CLI_SERIES_LABEL, "%sadd: D\xce\xb1(Q\xe2\x80\x96P)%s", pre,
                         c->certified ? "" : " (estimate)");
                se[n] = (cli_series){labels[n], c->x, c->lo, cs[j].n, 1, names ? color + 1 : 1, NULL, !c->certified};
                n++;
                continue;
            }
            int band = cs[j].kind == CLI_KIND_PROFILE && c->method != DPA_METHOD_RDP;
            snprintf(labels[n], CLI_SERIES_LABEL, "%s%s%s", pre, dpa_method_name(c->method),
                     !c->certified ? " (estimate)" : band ? " (bracket)" : "");
            se[n] = (cli_series){labels[n], c->x, c->up, cs[j].n, c->method == DPA_METHOD_RDP, color,
                                 band ? c->lo : NULL, !c->certified};
            n++;
        }
    }
    f->series = se;
    f->nseries = n;
    if (ns && cs[0].kind == CLI_KIND_PROFILE) {
        f->title = "Privacy profile";
        f->xlabel = "\xce\xb5";
        f->ylabel = "\xce\xb4(\xce\xb5)   (certified bounds)";
        f->logy = 1;
        /* down to 1e-12 at most: below that nothing is claimed */
        f->ymin = 1e-12;
    } else if (ns && cs[0].kind == CLI_KIND_TRADEOFF) {
        f->title = "Tradeoff curve (lower bound)";
        f->xlabel = "type I error \xce\xb1 (false positive rate of a membership test)";
        f->ylabel = "type II error \xce\xb2 \xe2\x89\xa5 curve";
        f->xmin = f->ymin = 0;
        f->xmax = f->ymax = 1;
        f->ref_label = "perfect privacy: \xce\xb2 = 1 \xe2\x88\x92 \xce\xb1";
        f->ref_x0 = 0;
        f->ref_y0 = 1;
        f->ref_x1 = 1;
        f->ref_y1 = 0;
    } else {
        f->title = "R\xc3\xa9nyi divergence";
        f->xlabel = "order \xce\xb1";
        f->ylabel = "D\xce\xb1   (certified upper bound)";
        f->logy = 1;
    }
}

void cli_curves_figure(const curves *cs, cli_figure *f, cli_series *se, char (*labels)[CLI_SERIES_LABEL])
{
    cli_curves_figure_multi(cs, 1, NULL, f, se, labels);
}

void cli_curves_figure_options(const cli_args *a, cli_figure *f)
{
    if (a->title) f->title = a->title;
    f->width = a->width;
    f->height = a->height;
    f->dpi = a->dpi;
    if (a->log_scale_axes != CLI_LOG_DEFAULT) {
        f->logx = (a->log_scale_axes & CLI_LOG_X) != 0;
        f->logy = (a->log_scale_axes & CLI_LOG_Y) != 0;
        /* a log axis starts where the data does, not at a fixed 0; a
         * linear profile axis starts at 0, not at the log axis's 1e-12 */
        if (f->logx && !(f->xmin > 0)) f->xmin = NAN;
        if (f->logy && !(f->ymin > 0)) f->ymin = NAN;
        if (!f->logy && f->ymin > 0) f->ymin = NAN;
    }
}
