/* dpacct command-line front end: the drawing surface the plots draw on.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * plot.c draws a figure through this small set of operations (paths,
 * strokes, fills, clipped regions and anchored text) so that one drawing
 * serves every format: cairo renders PNG and PDF (canvas_cairo.c), and SVG
 * is written directly (canvas_svg.c) so that its text stays text, with
 * real <text> elements a reader can search, copy and edit (cairo's SVG
 * surface turns every glyph into a path).  Coordinates are in points, y
 * down, origin top left. */
#ifndef DPA_CLI_CANVAS_H
#define DPA_CLI_CANVAS_H

#include <stddef.h>

typedef struct plot_canvas plot_canvas;

typedef struct plot_canvas_ops {
    void (*move_to)(plot_canvas *c, double x, double y);
    void (*line_to)(plot_canvas *c, double x, double y);
    void (*close_path)(plot_canvas *c);
    void (*rectangle)(plot_canvas *c, double x, double y, double w, double h);
    /* paint the current path (then cleared) with the current colour */
    void (*stroke)(plot_canvas *c);
    void (*fill)(plot_canvas *c);
    void (*set_color)(plot_canvas *c, double r, double g, double b, double alpha);
    /* line width and dash pattern (dash_on = 0: solid) */
    void (*set_line)(plot_canvas *c, double width, double dash_on, double dash_off);
    /* s (UTF-8) with its ink box placed so that the point (x, y) is at the
     * fraction (ax, ay) of the box: ax 0 left, 0.5 centre, 1 right; ay 0 top,
     * 0.5 middle.  vertical: rotated a quarter turn counter-clockwise about
     * (x, y) (a y-axis label). */
    void (*text)(plot_canvas *c, const char *s, double x, double y, double ax, double ay, double size, int bold,
                 int vertical);
    /* the advance width of s at that size */
    double (*text_width)(plot_canvas *c, const char *s, double size);
    /* restrict drawing to a rectangle until clip_end */
    void (*clip_begin)(plot_canvas *c, double x, double y, double w, double h);
    void (*clip_end)(plot_canvas *c);
} plot_canvas_ops;

struct plot_canvas {
    const plot_canvas_ops *ops;
};

#endif
