/* dpacct command-line front end: cairo, loaded when a plot is drawn (see
 * cairo_api.h).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include "cairo_api.h"
#include "num/dynlib.h"

/* the run-time name of cairo's ABI (Debian: libcairo2), then the
 * development link */
static const char *const SONAMES[] = {"libcairo.so.2", "libcairo.so"};

int cli_cairo_load(cli_cairo *c, char *msg, size_t msg_len)
{
    char why[256];
    memset(c, 0, sizeof *c);
    c->handle = dpa_dynlib_open(SONAMES, sizeof SONAMES / sizeof *SONAMES, why, sizeof why);
    if (!c->handle) {
        snprintf(msg, msg_len, "plots need cairo at run time (%s); on Debian install libcairo2", why);
        return -1;
    }
#define CLI_CAIRO_RESOLVE(f)                                                                      \
    if (!(c->f = (__typeof__(c->f))dlsym(c->handle, #f))) {                                       \
        dlclose(c->handle);                                                                       \
        memset(c, 0, sizeof *c);                                                                  \
        snprintf(msg, msg_len, "the cairo found at run time lacks %s (too old)", #f);             \
        return -1;                                                                                \
    }
    CLI_CAIRO_FUNCTIONS(CLI_CAIRO_RESOLVE)
#undef CLI_CAIRO_RESOLVE
    return 0;
}

void cli_cairo_unload(cli_cairo *c)
{
    if (c->handle)
        dlclose(c->handle);
    memset(c, 0, sizeof *c);
}
