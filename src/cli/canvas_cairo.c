/* dpacct command-line front end: the cairo canvas (PNG and PDF) and the
 * plot's output functions (plot.h): cairo is loaded only for PNG and PDF.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cairo_api.h"
#include "plot_render.h"

#define FONT "DejaVu Sans"

typedef struct cairo_canvas {
    plot_canvas base;
    const cli_cairo *cx;
    cairo_t *cr;
} cairo_canvas;

#define CX(c) (((cairo_canvas *)(c))->cx)
#define CR(c) (((cairo_canvas *)(c))->cr)

static void cc_move_to(plot_canvas *c, double x, double y) { CX(c)->cairo_move_to(CR(c), x, y); }
static void cc_line_to(plot_canvas *c, double x, double y) { CX(c)->cairo_line_to(CR(c), x, y); }
static void cc_close_path(plot_canvas *c) { CX(c)->cairo_close_path(CR(c)); }
static void cc_rectangle(plot_canvas *c, double x, double y, double w, double h)
{
    CX(c)->cairo_rectangle(CR(c), x, y, w, h);
}
static void cc_stroke(plot_canvas *c) { CX(c)->cairo_stroke(CR(c)); }
static void cc_fill(plot_canvas *c) { CX(c)->cairo_fill(CR(c)); }
static void cc_set_color(plot_canvas *c, double r, double g, double b, double a)
{
    CX(c)->cairo_set_source_rgba(CR(c), r, g, b, a);
}

static void cc_set_line(plot_canvas *c, double width, double on, double off)
{
    double dash[2] = {on, off};
    CX(c)->cairo_set_line_width(CR(c), width);
    CX(c)->cairo_set_dash(CR(c), on > 0 ? dash : NULL, on > 0 ? 2 : 0, 0);
}

static void font(plot_canvas *c, double size, int bold)
{
    CX(c)->cairo_select_font_face(CR(c), FONT, CAIRO_FONT_SLANT_NORMAL,
                                  bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    CX(c)->cairo_set_font_size(CR(c), size);
}

static void cc_text(plot_canvas *c, const char *s, double x, double y, double ax, double ay, double size, int bold,
                    int vertical)
{
    const cli_cairo *cx = CX(c);
    cairo_t *cr = CR(c);
    cairo_text_extents_t e;
    font(c, size, bold);
    cx->cairo_text_extents(cr, s, &e);
    cx->cairo_save(cr);
    cx->cairo_translate(cr, x, y);
    if (vertical) cx->cairo_rotate(cr, -M_PI / 2);
    cx->cairo_move_to(cr, -ax * e.width - e.x_bearing, -ay * e.height - e.y_bearing);
    cx->cairo_show_text(cr, s);
    cx->cairo_restore(cr);
}

static double cc_text_width(plot_canvas *c, const char *s, double size)
{
    cairo_text_extents_t e;
    font(c, size, 0);
    CX(c)->cairo_text_extents(CR(c), s, &e);
    return e.x_advance;
}

static void cc_clip_begin(plot_canvas *c, double x, double y, double w, double h)
{
    CX(c)->cairo_save(CR(c));
    CX(c)->cairo_rectangle(CR(c), x, y, w, h);
    CX(c)->cairo_clip(CR(c));
}

static void cc_clip_end(plot_canvas *c) { CX(c)->cairo_restore(CR(c)); }

static const plot_canvas_ops CAIRO_OPS = {
    cc_move_to, cc_line_to, cc_close_path, cc_rectangle, cc_stroke, cc_fill, cc_set_color,
    cc_set_line, cc_text, cc_text_width, cc_clip_begin, cc_clip_end,
};

/* ---- output ---- */

typedef struct sink {
    FILE *fp;
    int failed;
} sink;

static cairo_status_t sink_write(void *closure, const unsigned char *data, unsigned int length)
{
    sink *s = closure;
    if (fwrite(data, 1, length, s->fp) != length) s->failed = 1;
    return s->failed ? CAIRO_STATUS_WRITE_ERROR : CAIRO_STATUS_SUCCESS;
}

/* PNG (pixels = points * dpi / 72) or PDF (points) through cairo. */
static int render_cairo(const cli_cairo *cx, const cli_figure *fig, cli_plot_format fmt, sink *out, char *msg,
                        size_t msg_len)
{
    double w, h, scale = fmt == CLI_PLOT_PNG ? (fig->dpi > 0 ? fig->dpi : CLI_PLOT_DPI) / 72.0 : 1.0;
    cli_plot_size(fig, &w, &h);
    cairo_surface_t *surf =
        fmt == CLI_PLOT_PDF
            ? cx->cairo_pdf_surface_create_for_stream(sink_write, out, w, h)
            : cx->cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)ceil(w * scale), (int)ceil(h * scale));
    cairo_status_t st = cx->cairo_surface_status(surf);
    if (st == CAIRO_STATUS_SUCCESS) {
        cairo_canvas c = {{&CAIRO_OPS}, cx, cx->cairo_create(surf)};
        cx->cairo_scale(c.cr, scale, scale);
        cli_plot_draw(&c.base, fig);
        st = cx->cairo_status(c.cr);
        cx->cairo_destroy(c.cr);
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
    char *svg = NULL;
    size_t svg_len = 0;
    int to_stdout = !strcmp(path, "-"), rc;
    /* draw first (SVG) or load cairo first (PNG, PDF): a failure must not
     * leave the file truncated */
    if (fmt == CLI_PLOT_SVG ? cli_plot_svg_render(fig, &svg, &svg_len, msg, msg_len)
                            : cli_cairo_load(&cx, msg, msg_len))
        return -1;
    s.fp = to_stdout ? stdout : fopen(path, "wb");
    if (!s.fp) {
        snprintf(msg, msg_len, "cannot open %s for writing", path);
        if (fmt == CLI_PLOT_SVG) free(svg);
        else cli_cairo_unload(&cx);
        return -1;
    }
    if (fmt == CLI_PLOT_SVG) {
        rc = fwrite(svg, 1, svg_len, s.fp) == svg_len ? 0 : -1;
        if (rc) snprintf(msg, msg_len, "drawing the plot failed: write error");
        free(svg);
    } else {
        rc = render_cairo(&cx, fig, fmt, &s, msg, msg_len);
        cli_cairo_unload(&cx);
    }
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
    size_t len;
    return cli_plot_svg_render(fig, out, &len, msg, msg_len);
}
