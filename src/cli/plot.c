/* dpacct command-line front end: line charts with cairo (see plot.h).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cairo_api.h"
#include "plot.h"

/* Canvas and plot area, in points (SVG) / pixels (PNG). */
#define W 760.0
#define H 500.0
#define ML 84.0  /* left margin: tick labels and the y label */
#define MR 24.0
#define MT 44.0  /* title */
#define MB 64.0  /* tick labels and the x label */
#define FOOT 18.0
#define FONT "DejaVu Sans"

static const double palette[8][3] = {
    {0.12, 0.47, 0.71}, {0.84, 0.15, 0.16}, {0.17, 0.63, 0.17}, {0.58, 0.40, 0.74},
    {1.00, 0.50, 0.05}, {0.55, 0.34, 0.29}, {0.89, 0.47, 0.76}, {0.09, 0.75, 0.81},
};

typedef struct frame {
    double x0, x1, y0, y1;       /* data ranges (y in log10 units on a log axis) */
    double px0, px1, py0, py1;   /* plot area: left, right, top, bottom */
    int logy;
} frame;

static double fx(const frame *f, double x)
{
    return f->px0 + (x - f->x0) / (f->x1 - f->x0) * (f->px1 - f->px0);
}

/* y in data units (not yet logged); NAN if not drawable */
static double fy(const frame *f, double y)
{
    if (f->logy) {
        if (!(y > 0)) return NAN;
        y = log10(y);
    }
    return f->py1 - (y - f->y0) / (f->y1 - f->y0) * (f->py1 - f->py0);
}

/* A "nice" tick step near range / target: 1, 2 or 5 times a power of ten. */
static double nice_step(double range, double target)
{
    double raw = range / target, p = pow(10, floor(log10(raw))), m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

static void data_ranges(const cli_figure *fig, frame *f)
{
    double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
    for (size_t s = 0; s < fig->nseries; s++) {
        const cli_series *se = &fig->series[s];
        for (size_t i = 0; i < se->n; i++) {
            double x = se->x[i];
            for (int b = 0; b < (se->band_lo ? 2 : 1); b++) {
                double y = b ? se->band_lo[i] : se->y[i];
                if (!isfinite(x) || !isfinite(y) || (fig->logy && !(y > 0))) continue;
                if (fig->logy) y = log10(y);
                xmin = fmin(xmin, x);
                xmax = fmax(xmax, x);
                ymin = fmin(ymin, y);
                ymax = fmax(ymax, y);
            }
        }
    }
    if (!isfinite(xmin)) { xmin = 0; xmax = 1; }
    if (!isfinite(ymin)) { ymin = fig->logy ? -10 : 0; ymax = fig->logy ? 0 : 1; }
    if (isfinite(fig->xmin)) xmin = fig->xmin;
    if (isfinite(fig->xmax)) xmax = fig->xmax;
    if (isfinite(fig->ymin)) ymin = fig->logy ? log10(fig->ymin) : fig->ymin;
    if (isfinite(fig->ymax)) ymax = fig->logy ? log10(fig->ymax) : fig->ymax;
    if (fig->logy) { /* whole decades */
        ymin = floor(ymin);
        ymax = ceil(ymax);
    }
    if (!(xmax > xmin)) { xmin -= 0.5; xmax += 0.5; }
    if (!(ymax > ymin)) { ymin -= fig->logy ? 1 : 0.5; ymax += fig->logy ? 1 : 0.5; }
    f->x0 = xmin;
    f->x1 = xmax;
    f->y0 = ymin;
    f->y1 = ymax;
    f->logy = fig->logy;
    f->px0 = ML;
    f->px1 = W - MR;
    f->py0 = MT;
    f->py1 = H - MB - (fig->footnote ? FOOT : 0);
}

static void set_color(const cli_cairo *cx, cairo_t *cr, int c, double alpha)
{
    const double *p = palette[((c % 8) + 8) % 8];
    cx->cairo_set_source_rgba(cr, p[0], p[1], p[2], alpha);
}

static void text_at(const cli_cairo *cx, cairo_t *cr, const char *s, double x, double y, double ax, double ay)
{
    cairo_text_extents_t e;
    cx->cairo_text_extents(cr, s, &e);
    cx->cairo_move_to(cr, x - ax * e.width - e.x_bearing, y - ay * e.height - e.y_bearing);
    cx->cairo_show_text(cr, s);
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

static void draw_axes(const cli_cairo *cx, cairo_t *cr, const cli_figure *fig, const frame *f)
{
    char buf[64];
    cx->cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cx->cairo_set_font_size(cr, 12);
    cx->cairo_set_line_width(cr, 1);
    /* x ticks and grid */
    double sx = nice_step(f->x1 - f->x0, 6);
    for (double t = ceil(f->x0 / sx - 1e-9) * sx; t <= f->x1 + 1e-9 * sx; t += sx) {
        double X = fx(f, t);
        cx->cairo_set_source_rgb(cr, 0.9, 0.9, 0.9);
        cx->cairo_move_to(cr, X, f->py0);
        cx->cairo_line_to(cr, X, f->py1);
        cx->cairo_stroke(cr);
        cx->cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
        tick_label(buf, sizeof buf, t);
        text_at(cx, cr, buf, X, f->py1 + 8, 0.5, 0);
    }
    /* y ticks and grid: decades on a log axis (at most ~8 labels) */
    double sy = f->logy ? fmax(1.0, ceil((f->y1 - f->y0) / 8)) : nice_step(f->y1 - f->y0, 6);
    for (double t = ceil(f->y0 / sy - 1e-9) * sy; t <= f->y1 + 1e-9 * sy; t += sy) {
        double Y = f->py1 - (t - f->y0) / (f->y1 - f->y0) * (f->py1 - f->py0);
        cx->cairo_set_source_rgb(cr, 0.9, 0.9, 0.9);
        cx->cairo_move_to(cr, f->px0, Y);
        cx->cairo_line_to(cr, f->px1, Y);
        cx->cairo_stroke(cr);
        cx->cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
        if (f->logy) snprintf(buf, sizeof buf, "1e%d", (int)lround(t));
        else tick_label(buf, sizeof buf, t);
        if (f->logy && lround(t) == 0) snprintf(buf, sizeof buf, "1");
        text_at(cx, cr, buf, f->px0 - 8, Y, 1, 0.5);
    }
    /* frame */
    cx->cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    cx->cairo_rectangle(cr, f->px0, f->py0, f->px1 - f->px0, f->py1 - f->py0);
    cx->cairo_stroke(cr);
    /* labels and title */
    cx->cairo_set_font_size(cr, 13);
    if (fig->xlabel) text_at(cx, cr, fig->xlabel, (f->px0 + f->px1) / 2, f->py1 + 30, 0.5, 0);
    if (fig->ylabel) {
        cx->cairo_save(cr);
        cx->cairo_translate(cr, 18, (f->py0 + f->py1) / 2);
        cx->cairo_rotate(cr, -M_PI / 2);
        text_at(cx, cr, fig->ylabel, 0, 0, 0.5, 0.5);
        cx->cairo_restore(cr);
    }
    if (fig->title) {
        cx->cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_BOLD);
        cx->cairo_set_font_size(cr, 15);
        text_at(cx, cr, fig->title, W / 2, 14, 0.5, 0);
        cx->cairo_select_font_face(cr, FONT, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    }
    if (fig->footnote) {
        cx->cairo_set_font_size(cr, 10);
        cx->cairo_set_source_rgb(cr, 0.35, 0.35, 0.35);
        text_at(cx, cr, fig->footnote, f->px0, H - FOOT + 2, 0, 0);
    }
}

/* A polyline through the drawable points of (x, y), broken at the others. */
static void polyline(const cli_cairo *cx, cairo_t *cr, const frame *f, const double *x, const double *y, size_t n)
{
    int pen = 0;
    for (size_t i = 0; i < n; i++) {
        double X = isfinite(x[i]) ? fx(f, x[i]) : NAN, Y = isfinite(y[i]) ? fy(f, y[i]) : NAN;
        if (!isfinite(X) || !isfinite(Y)) {
            pen = 0;
            continue;
        }
        if (pen) cx->cairo_line_to(cr, X, Y);
        else cx->cairo_move_to(cr, X, Y);
        pen = 1;
    }
}

static void draw_series(const cli_cairo *cx, cairo_t *cr, const cli_figure *fig, const frame *f)
{
    cx->cairo_save(cr);
    cx->cairo_rectangle(cr, f->px0, f->py0, f->px1 - f->px0, f->py1 - f->py0);
    cx->cairo_clip(cr);
    if (fig->ref_label) {
        double dash[] = {6, 4};
        cx->cairo_set_source_rgb(cr, 0.45, 0.45, 0.45);
        cx->cairo_set_dash(cr, dash, 2, 0);
        cx->cairo_set_line_width(cr, 1.2);
        double xs[2] = {fig->ref_x0, fig->ref_x1}, ys[2] = {fig->ref_y0, fig->ref_y1};
        polyline(cx, cr, f, xs, ys, 2);
        cx->cairo_stroke(cr);
        cx->cairo_set_dash(cr, NULL, 0, 0);
    }
    for (size_t s = 0; s < fig->nseries; s++) {
        const cli_series *se = &fig->series[s];
        if (!se->band_lo) continue;
        /* the band: upper points forward, lower points back, where both draw */
        size_t i = 0;
        while (i < se->n) {
            size_t j = i;
            while (j < se->n && isfinite(fy(f, se->y[j])) && isfinite(fy(f, se->band_lo[j])) && isfinite(se->x[j])) j++;
            if (j > i + 1) {
                cx->cairo_move_to(cr, fx(f, se->x[i]), fy(f, se->y[i]));
                for (size_t k = i + 1; k < j; k++) cx->cairo_line_to(cr, fx(f, se->x[k]), fy(f, se->y[k]));
                for (size_t k = j; k-- > i;) cx->cairo_line_to(cr, fx(f, se->x[k]), fy(f, se->band_lo[k]));
                cx->cairo_close_path(cr);
                set_color(cx, cr, se->color, 0.18);
                cx->cairo_fill(cr);
            }
            i = j + 1;
        }
    }
    for (size_t s = 0; s < fig->nseries; s++) {
        const cli_series *se = &fig->series[s];
        double dash[] = {7, 4};
        cx->cairo_set_dash(cr, se->dashed ? dash : NULL, se->dashed ? 2 : 0, 0);
        cx->cairo_set_line_width(cr, 2);
        set_color(cx, cr, se->color, 1);
        polyline(cx, cr, f, se->x, se->y, se->n);
        cx->cairo_stroke(cr);
    }
    cx->cairo_set_dash(cr, NULL, 0, 0);
    cx->cairo_restore(cr);
}

static void draw_legend(const cli_cairo *cx, cairo_t *cr, const cli_figure *fig, const frame *f)
{
    size_t n = fig->ref_label ? 1 : 0;
    double wmax = 0;
    cx->cairo_set_font_size(cr, 12);
    for (size_t s = 0; s <= fig->nseries; s++) {
        const char *l = s < fig->nseries ? fig->series[s].label : fig->ref_label;
        if (!l) continue;
        if (s < fig->nseries) n++;
        cairo_text_extents_t e;
        cx->cairo_text_extents(cr, l, &e);
        wmax = fmax(wmax, e.x_advance);
    }
    if (!n) return;
    double lh = 18, bw = wmax + 48, bh = n * lh + 10, bx = f->px1 - bw - 10, by = f->py0 + 10;
    cx->cairo_set_source_rgba(cr, 1, 1, 1, 0.9);
    cx->cairo_rectangle(cr, bx, by, bw, bh);
    cx->cairo_fill_preserve(cr);
    cx->cairo_set_source_rgb(cr, 0.6, 0.6, 0.6);
    cx->cairo_set_line_width(cr, 1);
    cx->cairo_stroke(cr);
    double y = by + 5 + lh / 2;
    for (size_t s = 0; s <= fig->nseries; s++) {
        int ref = s == fig->nseries;
        const char *l = ref ? fig->ref_label : fig->series[s].label;
        if (!l) continue;
        double dash[] = {6, 4};
        int dashed = ref || fig->series[s].dashed;
        cx->cairo_set_dash(cr, dashed ? dash : NULL, dashed ? 2 : 0, 0);
        cx->cairo_set_line_width(cr, ref ? 1.2 : 2);
        if (ref) cx->cairo_set_source_rgb(cr, 0.45, 0.45, 0.45);
        else set_color(cx, cr, fig->series[s].color, 1);
        cx->cairo_move_to(cr, bx + 8, y);
        cx->cairo_line_to(cr, bx + 36, y);
        cx->cairo_stroke(cr);
        cx->cairo_set_dash(cr, NULL, 0, 0);
        cx->cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
        text_at(cx, cr, l, bx + 42, y, 0, 0.5);
        y += lh;
    }
}

static void draw(const cli_cairo *cx, cairo_t *cr, const cli_figure *fig)
{
    frame f;
    data_ranges(fig, &f);
    cx->cairo_set_source_rgb(cr, 1, 1, 1);
    cx->cairo_paint(cr);
    draw_axes(cx, cr, fig, &f);
    draw_series(cx, cr, fig, &f);
    draw_legend(cx, cr, fig, &f);
}

/* ---- output ---- */

typedef struct sink {
    FILE *fp;           /* file output, or */
    char *buf;          /* memory output */
    size_t len, cap;
    int failed;
} sink;

static cairo_status_t sink_write(void *closure, const unsigned char *data, unsigned int length)
{
    sink *s = closure;
    if (s->fp) {
        if (fwrite(data, 1, length, s->fp) != length) s->failed = 1;
        return s->failed ? CAIRO_STATUS_WRITE_ERROR : CAIRO_STATUS_SUCCESS;
    }
    if (s->len + length + 1 > s->cap) {
        size_t nc = s->cap ? 2 * s->cap : 65536;
        while (nc < s->len + length + 1) nc *= 2;
        char *nb = realloc(s->buf, nc);
        if (!nb) {
            s->failed = 1;
            return CAIRO_STATUS_NO_MEMORY;
        }
        s->buf = nb;
        s->cap = nc;
    }
    memcpy(s->buf + s->len, data, length);
    s->len += length;
    s->buf[s->len] = '\0';
    return CAIRO_STATUS_SUCCESS;
}

static int render(const cli_cairo *cx, const cli_figure *fig, cli_plot_format fmt, sink *out, char *msg,
                  size_t msg_len)
{
    cairo_surface_t *surf = fmt == CLI_PLOT_SVG ? cx->cairo_svg_surface_create_for_stream(sink_write, out, W, H)
                                                : cx->cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)W, (int)H);
    cairo_status_t st = cx->cairo_surface_status(surf);
    if (st == CAIRO_STATUS_SUCCESS) {
        cairo_t *cr = cx->cairo_create(surf);
        draw(cx, cr, fig);
        st = cx->cairo_status(cr);
        cx->cairo_destroy(cr);
        if (st == CAIRO_STATUS_SUCCESS && fmt == CLI_PLOT_PNG)
            st = cx->cairo_surface_write_to_png_stream(surf, sink_write, out);
        cx->cairo_surface_finish(surf);
        if (st == CAIRO_STATUS_SUCCESS) st = cx->cairo_surface_status(surf);
    }
    cx->cairo_surface_destroy(surf);
    if (st != CAIRO_STATUS_SUCCESS || out->failed) {
        snprintf(msg, msg_len, "drawing the plot failed: %s",
                 out->failed ? "write error" : cx->cairo_status_to_string(st));
        return -1;
    }
    return 0;
}

int cli_plot_write(const cli_figure *fig, cli_plot_format fmt, const char *path, char *msg, size_t msg_len)
{
    sink s = {0};
    cli_cairo cx;
    int to_stdout = !strcmp(path, "-");
    /* cairo first: a missing cairo must not leave the file truncated */
    if (cli_cairo_load(&cx, msg, msg_len))
        return -1;
    s.fp = to_stdout ? stdout : fopen(path, "wb");
    if (!s.fp) {
        snprintf(msg, msg_len, "cannot open %s for writing", path);
        cli_cairo_unload(&cx);
        return -1;
    }
    int rc = render(&cx, fig, fmt, &s, msg, msg_len);
    cli_cairo_unload(&cx);
    if (to_stdout) {
        if (fflush(stdout) != 0 && rc == 0) {
            snprintf(msg, msg_len, "error writing to standard output");
            rc = -1;
        }
    } else if (fclose(s.fp) != 0 && rc == 0) {
        snprintf(msg, msg_len, "error writing %s", path);
        rc = -1;
    }
    return rc;
}

int cli_plot_svg_string(const cli_figure *fig, char **out, char *msg, size_t msg_len)
{
    sink s = {0};
    cli_cairo cx;
    if (cli_cairo_load(&cx, msg, msg_len)) {
        *out = NULL;
        return -1;
    }
    int rc = render(&cx, fig, CLI_PLOT_SVG, &s, msg, msg_len);
    cli_cairo_unload(&cx);
    if (rc) {
        free(s.buf);
        *out = NULL;
        return rc;
    }
    *out = s.buf;
    return 0;
}
