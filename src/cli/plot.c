/* dpacct command-line front end: line charts (see plot.h), drawn on a
 * canvas (canvas.h): the layout, axes, series, bands and legend.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "canvas.h"
#include "plot.h"
#include "plot_render.h"

/* Margins, in points. */
#define ML 84.0  /* left: tick labels and the y label */
#define MR 24.0
#define MT 44.0  /* top: the title */
#define MB 64.0  /* bottom: tick labels and the x label */
#define FOOT 18.0

static const double palette[8][3] = {
    {0.12, 0.47, 0.71}, {0.84, 0.15, 0.16}, {0.17, 0.63, 0.17}, {0.58, 0.40, 0.74},
    {1.00, 0.50, 0.05}, {0.55, 0.34, 0.29}, {0.89, 0.47, 0.76}, {0.09, 0.75, 0.81},
};

typedef struct frame {
    double x0, x1, y0, y1;       /* data ranges (log10 units on a log axis) */
    double px0, px1, py0, py1;   /* plot area: left, right, top, bottom */
    int logx, logy;
    double w, h;                 /* the canvas */
} frame;

void cli_plot_size(const cli_figure *fig, double *w, double *h)
{
    *w = fig->width > 0 ? fig->width : CLI_PLOT_WIDTH;
    *h = fig->height > 0 ? fig->height : CLI_PLOT_HEIGHT;
}

/* a data value on an axis (log10 on a log axis); NAN if not drawable */
static double axis_value(int logscale, double v)
{
    if (!isfinite(v)) return NAN;
    if (logscale) return v > 0 ? log10(v) : NAN;
    return v;
}

static double fx(const frame *f, double x)
{
    x = axis_value(f->logx, x);
    return f->px0 + (x - f->x0) / (f->x1 - f->x0) * (f->px1 - f->px0);
}

static double fy(const frame *f, double y)
{
    y = axis_value(f->logy, y);
    return f->py1 - (y - f->y0) / (f->y1 - f->y0) * (f->py1 - f->py0);
}

/* A "nice" tick step near range / target: 1, 2 or 5 times a power of ten. */
static double nice_step(double range, double target)
{
    double raw = range / target, p = pow(10, floor(log10(raw))), m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

/* One axis's range from the data (lo, hi: NAN if none) and the figure's
 * fixed ends (NAN: from the data). */
static void axis_range(double dlo, double dhi, double flo, double fhi, int logscale, double empty_lo, double empty_hi,
                       double *lo, double *hi)
{
    if (!isfinite(dlo)) {
        dlo = empty_lo;
        dhi = empty_hi;
    }
    if (isfinite(flo)) dlo = logscale ? (flo > 0 ? log10(flo) : dlo) : flo;
    if (isfinite(fhi)) dhi = logscale ? (fhi > 0 ? log10(fhi) : dhi) : fhi;
    if (logscale) { /* whole decades */
        dlo = floor(dlo);
        dhi = ceil(dhi);
    }
    if (!(dhi > dlo)) {
        dlo -= logscale ? 1 : 0.5;
        dhi += logscale ? 1 : 0.5;
    }
    *lo = dlo;
    *hi = dhi;
}

static void data_ranges(const cli_figure *fig, frame *f)
{
    double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
    for (size_t s = 0; s < fig->nseries; s++) {
        const cli_series *se = &fig->series[s];
        for (size_t i = 0; i < se->n; i++) {
            double x = axis_value(fig->logx, se->x[i]);
            for (int b = 0; b < (se->band_lo ? 2 : 1); b++) {
                double y = axis_value(fig->logy, b ? se->band_lo[i] : se->y[i]);
                if (!isfinite(x) || !isfinite(y)) continue;
                xmin = fmin(xmin, x);
                xmax = fmax(xmax, x);
                ymin = fmin(ymin, y);
                ymax = fmax(ymax, y);
            }
        }
    }
    if (!isfinite(xmin)) xmin = xmax = NAN;
    if (!isfinite(ymin)) ymin = ymax = NAN;
    axis_range(xmin, xmax, fig->xmin, fig->xmax, fig->logx, fig->logx ? -1 : 0, fig->logx ? 0 : 1, &f->x0, &f->x1);
    axis_range(ymin, ymax, fig->ymin, fig->ymax, fig->logy, fig->logy ? -10 : 0, fig->logy ? 0 : 1, &f->y0, &f->y1);
    f->logx = fig->logx;
    f->logy = fig->logy;
    cli_plot_size(fig, &f->w, &f->h);
    f->px0 = ML;
    f->px1 = f->w - MR;
    f->py0 = MT;
    f->py1 = f->h - MB - (fig->footnote ? FOOT : 0);
}

static void set_color(plot_canvas *c, int k, double alpha)
{
    const double *p = palette[((k % 8) + 8) % 8];
    c->ops->set_color(c, p[0], p[1], p[2], alpha);
}

static void grey(plot_canvas *c, double v)
{
    c->ops->set_color(c, v, v, v, 1);
}

static void line(plot_canvas *c, double x0, double y0, double x1, double y1)
{
    c->ops->move_to(c, x0, y0);
    c->ops->line_to(c, x1, y1);
    c->ops->stroke(c);
}

/* Tick label: %g, with "1e-05" shortened to "1e-5". */
static void tick_label(char *buf, size_t n, double v)
{
    if (fabs(v) < 1e-12) v = 0;
    snprintf(buf, n, "%g", v);
    char *e = strchr(buf, 'e');
    if (e) {
        char sign = e[1];
        char *d = e + 2;
        while (*d == '0' && d[1]) d++;
        char tmp[32];
        snprintf(tmp, sizeof tmp, "%s", d);
        snprintf(e, n - (size_t)(e - buf), "e%s%s", sign == '-' ? "-" : "", tmp);
    }
}

/* The label of tick t of an axis (t in log10 units on a log axis). */
static void axis_tick_label(char *buf, size_t n, int logscale, double t)
{
    if (!logscale) tick_label(buf, n, t);
    else if (lround(t) == 0) snprintf(buf, n, "1");
    else snprintf(buf, n, "1e%ld", lround(t));
}

/* Tick spacing: decades on a log axis (at most ~8 labels), else nice. */
static double tick_step(int logscale, double lo, double hi, double target)
{
    return logscale ? fmax(1.0, ceil((hi - lo) / 8)) : nice_step(hi - lo, target);
}

static void draw_axes(plot_canvas *c, const cli_figure *fig, const frame *f)
{
    char buf[64];
    c->ops->set_line(c, 1, 0, 0);
    double sx = tick_step(f->logx, f->x0, f->x1, 6);
    for (double t = ceil(f->x0 / sx - 1e-9) * sx; t <= f->x1 + 1e-9 * sx; t += sx) {
        double X = f->px0 + (t - f->x0) / (f->x1 - f->x0) * (f->px1 - f->px0);
        grey(c, 0.9);
        line(c, X, f->py0, X, f->py1);
        grey(c, 0.2);
        axis_tick_label(buf, sizeof buf, f->logx, t);
        c->ops->text(c, buf, X, f->py1 + 8, 0.5, 0, 12, 0, 0);
    }
    double sy = tick_step(f->logy, f->y0, f->y1, 6);
    for (double t = ceil(f->y0 / sy - 1e-9) * sy; t <= f->y1 + 1e-9 * sy; t += sy) {
        double Y = f->py1 - (t - f->y0) / (f->y1 - f->y0) * (f->py1 - f->py0);
        grey(c, 0.9);
        line(c, f->px0, Y, f->px1, Y);
        grey(c, 0.2);
        axis_tick_label(buf, sizeof buf, f->logy, t);
        c->ops->text(c, buf, f->px0 - 8, Y, 1, 0.5, 12, 0, 0);
    }
    grey(c, 0.2);
    c->ops->rectangle(c, f->px0, f->py0, f->px1 - f->px0, f->py1 - f->py0);
    c->ops->stroke(c);
    if (fig->xlabel) c->ops->text(c, fig->xlabel, (f->px0 + f->px1) / 2, f->py1 + 30, 0.5, 0, 13, 0, 0);
    if (fig->ylabel) c->ops->text(c, fig->ylabel, 18, (f->py0 + f->py1) / 2, 0.5, 0.5, 13, 0, 1);
    if (fig->title) c->ops->text(c, fig->title, f->w / 2, 14, 0.5, 0, 15, 1, 0);
    if (fig->footnote) {
        grey(c, 0.35);
        c->ops->text(c, fig->footnote, f->px0, f->h - FOOT + 2, 0, 0, 10, 0, 0);
    }
}

/* A polyline through the drawable points of (x, y), broken at the others. */
static void polyline(plot_canvas *c, const frame *f, const double *x, const double *y, size_t n)
{
    int pen = 0;
    for (size_t i = 0; i < n; i++) {
        double X = fx(f, x[i]), Y = fy(f, y[i]);
        if (!isfinite(X) || !isfinite(Y)) {
            pen = 0;
            continue;
        }
        if (pen) c->ops->line_to(c, X, Y);
        else c->ops->move_to(c, X, Y);
        pen = 1;
    }
}

/* The band between se->y and se->band_lo, where both draw. */
static void draw_band(plot_canvas *c, const frame *f, const cli_series *se)
{
    size_t i = 0;
    while (i < se->n) {
        size_t j = i;
        while (j < se->n && isfinite(fx(f, se->x[j])) && isfinite(fy(f, se->y[j])) && isfinite(fy(f, se->band_lo[j])))
            j++;
        if (j > i + 1) {
            c->ops->move_to(c, fx(f, se->x[i]), fy(f, se->y[i]));
            for (size_t k = i + 1; k < j; k++) c->ops->line_to(c, fx(f, se->x[k]), fy(f, se->y[k]));
            for (size_t k = j; k-- > i;) c->ops->line_to(c, fx(f, se->x[k]), fy(f, se->band_lo[k]));
            c->ops->close_path(c);
            set_color(c, se->color, 0.18);
            c->ops->fill(c);
        }
        i = j + 1;
    }
}

static void draw_series(plot_canvas *c, const cli_figure *fig, const frame *f)
{
    c->ops->clip_begin(c, f->px0, f->py0, f->px1 - f->px0, f->py1 - f->py0);
    if (fig->ref_label) {
        grey(c, 0.45);
        c->ops->set_line(c, 1.2, 6, 4);
        double xs[2] = {fig->ref_x0, fig->ref_x1}, ys[2] = {fig->ref_y0, fig->ref_y1};
        polyline(c, f, xs, ys, 2);
        c->ops->stroke(c);
    }
    /* estimates first, then certified curves on top of them; bands below
     * every line */
    for (int pass = 0; pass < 2; pass++)
        for (size_t s = 0; s < fig->nseries; s++) {
            const cli_series *se = &fig->series[s];
            if (se->band_lo && (se->estimate != 0) == (pass == 0)) draw_band(c, f, se);
        }
    for (int pass = 0; pass < 2; pass++)
        for (size_t s = 0; s < fig->nseries; s++) {
            const cli_series *se = &fig->series[s];
            if ((se->estimate != 0) != (pass == 0)) continue;
            c->ops->set_line(c, 2, se->dashed ? 7 : 0, 4);
            set_color(c, se->color, 1);
            polyline(c, f, se->x, se->y, se->n);
            c->ops->stroke(c);
        }
    c->ops->set_line(c, 1, 0, 0);
    c->ops->clip_end(c);
}

static void draw_legend(plot_canvas *c, const cli_figure *fig, const frame *f)
{
    size_t n = fig->ref_label ? 1 : 0;
    double wmax = 0;
    for (size_t s = 0; s <= fig->nseries; s++) {
        const char *l = s < fig->nseries ? fig->series[s].label : fig->ref_label;
        if (!l) continue;
        if (s < fig->nseries) n++;
        wmax = fmax(wmax, c->ops->text_width(c, l, 12));
    }
    if (!n) return;
    double lh = 18, bw = wmax + 48, bh = (double)n * lh + 10, bx = f->px1 - bw - 10, by = f->py0 + 10;
    c->ops->set_color(c, 1, 1, 1, 0.9);
    c->ops->rectangle(c, bx, by, bw, bh);
    c->ops->fill(c);
    grey(c, 0.6);
    c->ops->set_line(c, 1, 0, 0);
    c->ops->rectangle(c, bx, by, bw, bh);
    c->ops->stroke(c);
    double y = by + 5 + lh / 2;
    for (size_t s = 0; s <= fig->nseries; s++) {
        int ref = s == fig->nseries;
        const char *l = ref ? fig->ref_label : fig->series[s].label;
        if (!l) continue;
        int dashed = ref || fig->series[s].dashed;
        c->ops->set_line(c, ref ? 1.2 : 2, dashed ? 6 : 0, 4);
        if (ref) grey(c, 0.45);
        else set_color(c, fig->series[s].color, 1);
        line(c, bx + 8, y, bx + 36, y);
        c->ops->set_line(c, 1, 0, 0);
        grey(c, 0.1);
        c->ops->text(c, l, bx + 42, y, 0, 0.5, 12, 0, 0);
        y += lh;
    }
}

void cli_plot_draw(plot_canvas *c, const cli_figure *fig)
{
    frame f;
    data_ranges(fig, &f);
    c->ops->set_color(c, 1, 1, 1, 1);
    c->ops->rectangle(c, 0, 0, f.w, f.h);
    c->ops->fill(c);
    draw_axes(c, fig, &f);
    draw_series(c, fig, &f);
    draw_legend(c, fig, &f);
}
