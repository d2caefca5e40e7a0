/* dpacct command-line front end: the SVG canvas.  The figure is written as
 * SVG elements directly (paths, rectangles, clip paths and <text> in the
 * DejaVu Sans the PNG and PDF renderings use), so that its text stays text.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plot_render.h"

#define FONT_FAMILY "DejaVu Sans, Verdana, sans-serif"
/* The advance of one character as a fraction of the font size, for the
 * legend box's width: DejaVu Sans's widest lower-case and digit advances are
 * about 0.64 em, its average over English text about 0.55 em; 0.6 keeps
 * the box around its text without measuring the font */
#define SVG_EM_ADVANCE 0.6

typedef struct svg_canvas {
    plot_canvas base;
    char *buf;
    size_t len, cap;
    int failed;
    char path[1 << 16]; /* the current path's "d" (a longer path is split) */
    size_t plen;
    double cx, cy;      /* the current point */
    double r, g, b, a;
    double width, on, off;
    int clips;          /* clip paths defined so far */
} svg_canvas;

static void out(svg_canvas *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void out(svg_canvas *s, const char *fmt, ...)
{
    va_list ap;
    if (s->failed) return;
    for (;;) {
        va_start(ap, fmt);
        int n = vsnprintf(s->buf + s->len, s->cap - s->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            s->failed = 1;
            return;
        }
        if ((size_t)n < s->cap - s->len) {
            s->len += (size_t)n;
            return;
        }
        size_t nc = s->cap ? 2 * s->cap : 65536;
        while (nc < s->len + (size_t)n + 1) nc *= 2;
        char *nb = realloc(s->buf, nc);
        if (!nb) {
            s->failed = 1;
            return;
        }
        s->buf = nb;
        s->cap = nc;
    }
}

/* t with the characters XML reserves escaped */
static void escaped(svg_canvas *s, const char *t)
{
    for (const char *p = t; *p; p++) {
        if (*p == '&') out(s, "&amp;");
        else if (*p == '<') out(s, "&lt;");
        else if (*p == '>') out(s, "&gt;");
        else if (*p == '"') out(s, "&quot;");
        else out(s, "%c", *p);
    }
}

static void color_attr(svg_canvas *s, const char *what)
{
    out(s, " %s=\"rgb(%d,%d,%d)\"", what, (int)(s->r * 255 + 0.5), (int)(s->g * 255 + 0.5), (int)(s->b * 255 + 0.5));
    if (s->a < 1) out(s, " %s-opacity=\"%.3g\"", what, s->a);
}

static void path_add(svg_canvas *s, char op, double x, double y)
{
    char seg[64];
    int n = op == 'Z' ? snprintf(seg, sizeof seg, "Z") : snprintf(seg, sizeof seg, "%c%.2f %.2f", op, x, y);
    if (n < 0 || (size_t)n + 1 >= sizeof s->path) return;
    if (s->plen + (size_t)n + 2 >= sizeof s->path) {
        /* too long for one element: end it here, go on from the current point */
        out(s, "<path d=\"%s\" fill=\"none\"", s->path);
        color_attr(s, "stroke");
        out(s, " stroke-width=\"%.3g\"/>\n", s->width);
        s->plen = (size_t)snprintf(s->path, sizeof s->path, "M%.2f %.2f", s->cx, s->cy);
    }
    memcpy(s->path + s->plen, seg, (size_t)n + 1);
    s->plen += (size_t)n;
    if (op != 'Z') {
        s->cx = x;
        s->cy = y;
    }
}

static void svg_move_to(plot_canvas *c, double x, double y) { path_add((svg_canvas *)c, 'M', x, y); }
static void svg_line_to(plot_canvas *c, double x, double y) { path_add((svg_canvas *)c, 'L', x, y); }
static void svg_close_path(plot_canvas *c) { path_add((svg_canvas *)c, 'Z', 0, 0); }

static void svg_rectangle(plot_canvas *c, double x, double y, double w, double h)
{
    path_add((svg_canvas *)c, 'M', x, y);
    path_add((svg_canvas *)c, 'L', x + w, y);
    path_add((svg_canvas *)c, 'L', x + w, y + h);
    path_add((svg_canvas *)c, 'L', x, y + h);
    path_add((svg_canvas *)c, 'Z', 0, 0);
}

static void svg_stroke(plot_canvas *c)
{
    svg_canvas *s = (svg_canvas *)c;
    if (s->plen) {
        out(s, "<path d=\"%s\" fill=\"none\"", s->path);
        color_attr(s, "stroke");
        out(s, " stroke-width=\"%.3g\" stroke-linejoin=\"round\"", s->width);
        if (s->on > 0) out(s, " stroke-dasharray=\"%.3g %.3g\"", s->on, s->off);
        out(s, "/>\n");
    }
    s->plen = 0;
    s->path[0] = '\0';
}

static void svg_fill(plot_canvas *c)
{
    svg_canvas *s = (svg_canvas *)c;
    if (s->plen) {
        out(s, "<path d=\"%s\"", s->path);
        color_attr(s, "fill");
        out(s, " stroke=\"none\"/>\n");
    }
    s->plen = 0;
    s->path[0] = '\0';
}

static void svg_set_color(plot_canvas *c, double r, double g, double b, double a)
{
    svg_canvas *s = (svg_canvas *)c;
    s->r = r;
    s->g = g;
    s->b = b;
    s->a = a;
}

static void svg_set_line(plot_canvas *c, double width, double on, double off)
{
    svg_canvas *s = (svg_canvas *)c;
    s->width = width;
    s->on = on;
    s->off = off;
}

static void svg_text(plot_canvas *c, const char *t, double x, double y, double ax, double ay, double size, int bold,
                     int vertical)
{
    svg_canvas *s = (svg_canvas *)c;
    out(s, "<text x=\"%.2f\" y=\"%.2f\" font-family=\"%s\" font-size=\"%.3g\"", x, y, FONT_FAMILY, size);
    if (bold) out(s, " font-weight=\"bold\"");
    out(s, " text-anchor=\"%s\" dominant-baseline=\"%s\"", ax < 0.25 ? "start" : ax > 0.75 ? "end" : "middle",
        ay < 0.25 ? "hanging" : "central");
    if (vertical) out(s, " transform=\"rotate(-90 %.2f %.2f)\"", x, y);
    color_attr(s, "fill");
    out(s, ">");
    escaped(s, t);
    out(s, "</text>\n");
}

static double svg_text_width(plot_canvas *c, const char *t, double size)
{
    (void)c;
    size_t chars = 0;
    for (const unsigned char *p = (const unsigned char *)t; *p; p++)
        chars += (*p & 0xC0) != 0x80; /* UTF-8: count the lead bytes */
    return (double)chars * SVG_EM_ADVANCE * size;
}

static void svg_clip_begin(plot_canvas *c, double x, double y, double w, double h)
{
    svg_canvas *s = (svg_canvas *)c;
    s->clips++;
    out(s, "<clipPath id=\"clip%d\"><rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/></clipPath>\n",
        s->clips, x, y, w, h);
    out(s, "<g clip-path=\"url(#clip%d)\">\n", s->clips);
}

static void svg_clip_end(plot_canvas *c)
{
    out((svg_canvas *)c, "</g>\n");
}

static const plot_canvas_ops SVG_OPS = {
    svg_move_to, svg_line_to, svg_close_path, svg_rectangle, svg_stroke, svg_fill, svg_set_color,
    svg_set_line, svg_text, svg_text_width, svg_clip_begin, svg_clip_end,
};

int cli_plot_svg_render(const cli_figure *fig, char **res, size_t *len, char *msg, size_t msg_len)
{
    svg_canvas *s = calloc(1, sizeof *s);
    double w, h;
    *res = NULL;
    if (!s) {
        snprintf(msg, msg_len, "drawing the plot failed: out of memory");
        return -1;
    }
    s->base.ops = &SVG_OPS;
    s->a = s->width = 1;
    cli_plot_size(fig, &w, &h);
    out(s, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    out(s, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%gpt\" height=\"%gpt\" viewBox=\"0 0 %g %g\">\n", w, h,
        w, h);
    if (fig->title) {
        out(s, "<title>");
        escaped(s, fig->title);
        out(s, "</title>\n");
    }
    cli_plot_draw(&s->base, fig);
    out(s, "</svg>\n");
    if (s->failed) {
        free(s->buf);
        free(s);
        snprintf(msg, msg_len, "drawing the plot failed: out of memory");
        return -1;
    }
    *res = s->buf;
    *len = s->len;
    free(s);
    return 0;
}
