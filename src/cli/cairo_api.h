/* dpacct command-line front end: cairo, loaded when a plot is drawn.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The plots call cairo through this table of function pointers, resolved
 * with dlopen/dlsym when a plot is drawn, instead of linking cairo into the
 * command: cairo brings some twenty shared objects (pixman, fontconfig,
 * freetype, X11, ...) whose loading cost every run about 1.8 ms of start-up
 * (measured on the development machine), an eighth of a DP-SGD accounting,
 * although only the PNG and PDF plots use it (SVG is written without it).  Building still needs cairo's headers
 * (Debian: libcairo2-dev); at run time libcairo.so.2 (Debian: libcairo2) is
 * needed only for plots, and its absence is the plot's error. */
#ifndef DPA_CLI_CAIRO_API_H
#define DPA_CLI_CAIRO_API_H

#include <cairo.h>
#include <cairo-pdf.h>
#include <stddef.h>

/* every cairo function the plots call */
#define CLI_CAIRO_FUNCTIONS(X)                                                                    \
    X(cairo_clip) X(cairo_close_path) X(cairo_create) X(cairo_destroy) X(cairo_fill)              \
    X(cairo_image_surface_create) X(cairo_line_to) X(cairo_move_to)                               \
    X(cairo_pdf_surface_create_for_stream) X(cairo_scale)                                         \
    X(cairo_paint) X(cairo_rectangle) X(cairo_restore) X(cairo_rotate) X(cairo_save)              \
    X(cairo_select_font_face) X(cairo_set_dash) X(cairo_set_font_size) X(cairo_set_line_width)    \
    X(cairo_set_source_rgb) X(cairo_set_source_rgba) X(cairo_show_text) X(cairo_status)           \
    X(cairo_status_to_string) X(cairo_stroke) X(cairo_surface_destroy) X(cairo_surface_finish)    \
    X(cairo_surface_status) X(cairo_surface_write_to_png_stream)                                  \
    X(cairo_text_extents) X(cairo_translate)

typedef struct cli_cairo {
    void *handle; /* dlopen handle; NULL: not loaded */
#define CLI_CAIRO_MEMBER(f) __typeof__(f) *f;
    CLI_CAIRO_FUNCTIONS(CLI_CAIRO_MEMBER)
#undef CLI_CAIRO_MEMBER
} cli_cairo;

/* Load cairo into *c.  Returns 0, or -1 with *c cleared and the reason (the
 * library's name and the loader's message) in msg. */
int cli_cairo_load(cli_cairo *c, char *msg, size_t msg_len);

/* Drop the reference taken by cli_cairo_load (c may be cleared: no-op). */
void cli_cairo_unload(cli_cairo *c);

#endif
