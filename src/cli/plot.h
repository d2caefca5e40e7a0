/* dpacct command-line front end: line charts (SVG, PNG, PDF).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * One figure: axes with "nice" ticks (1, 2, 5 x 10^k; decades on a log
 * axis, x or y), axis labels, a title, a legend, any number of polyline
 * series, an optional shaded band between two series (a certified
 * bracket), and an optional reference line.  Drawing never fails on odd
 * data: non-finite points break a line, points outside the axes are
 * clipped.  PNG and PDF are rendered by cairo; SVG is written directly with
 * its text as <text> elements (canvas.h). */
#ifndef DPA_CLI_PLOT_H
#define DPA_CLI_PLOT_H

#include <stddef.h>

typedef enum cli_plot_format { CLI_PLOT_SVG = 0, CLI_PLOT_PNG = 1, CLI_PLOT_PDF = 2 } cli_plot_format;

/* the default size of a figure, in points (1/72 inch), and the PNG resolution */
#define CLI_PLOT_WIDTH 760.0
#define CLI_PLOT_HEIGHT 500.0
#define CLI_PLOT_DPI 72.0
/* the accepted ranges of --width/--height (points) and --dpi */
#define CLI_PLOT_MIN_SIZE 200.0
#define CLI_PLOT_MAX_SIZE 5000.0
#define CLI_PLOT_MIN_DPI 36.0
#define CLI_PLOT_MAX_DPI 1200.0

typedef struct cli_series {
    const char *label;    /* legend text; NULL: not in the legend */
    const double *x, *y;  /* n points (borrowed) */
    size_t n;
    int dashed;
    int color;            /* palette index (0..7) */
    /* fill the band between this series and `band_lo` (same x, n points), in a
     * light tint of the color; NULL: no band */
    const double *band_lo;
    /* an estimate, not a certified bound: drawn first, so that every
     * certified curve lies on top of the estimates */
    int estimate;
} cli_series;

typedef struct cli_figure {
    const char *title, *xlabel, *ylabel;
    int logx, logy;       /* log10 axes (values <= 0 are not drawn) */
    /* size in points and PNG resolution in dots per inch (0: the defaults
     * above); a PNG is width * dpi / 72 by height * dpi / 72 pixels */
    double width, height, dpi;
    /* reference line from (x0, y0) to (x1, y1) in data coordinates, drawn
     * grey and dashed with its own legend entry; ref_label NULL: none */
    const char *ref_label;
    double ref_x0, ref_y0, ref_x1, ref_y1;
    /* axis ranges; NAN: from the data (y from the finite positive values on
     * a log axis) */
    double xmin, xmax, ymin, ymax;
    const cli_series *series;
    size_t nseries;
    const char *footnote; /* small text under the plot; NULL: none */
} cli_figure;

/* Draw f to path ("-": standard output) in the given format.  Returns 0, or
 * -1 with a message in msg (msg_len bytes) on a cairo or I/O error. */
int cli_plot_write(const cli_figure *f, cli_plot_format fmt, const char *path, char *msg, size_t msg_len);

/* Draw f as SVG into a malloc'ed, NUL-terminated string (*out; caller
 * frees).  Returns 0, or -1 with a message. */
int cli_plot_svg_string(const cli_figure *f, char **out, char *msg, size_t msg_len);

#endif
