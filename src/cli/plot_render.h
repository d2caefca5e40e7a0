/* dpacct command-line front end: what the plot's drawing (plot.c) and its
 * renderers (canvas_cairo.c, canvas_svg.c) share.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPA_CLI_PLOT_RENDER_H
#define DPA_CLI_PLOT_RENDER_H

#include "canvas.h"
#include "plot.h"

/* The figure's size in points (the defaults of plot.h where not set). */
void cli_plot_size(const cli_figure *fig, double *w, double *h);
/* Draw fig on c (never fails: a canvas keeps its own error state). */
void cli_plot_draw(plot_canvas *c, const cli_figure *fig);

/* canvas_svg.c: fig as an SVG document, malloc'ed and NUL-terminated in
 * *out.  Returns 0, or -1 with a message (out of memory). */
int cli_plot_svg_render(const cli_figure *fig, char **out, size_t *len, char *msg, size_t msg_len);

#endif
