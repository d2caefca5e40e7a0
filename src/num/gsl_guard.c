/* Save GSL's error handler, switch it off around GSL calls, restore it.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * GSL's default handler aborts the process; the library never wants that,
 * and must not leave a caller's own handler replaced either.  GSL keeps the
 * handler in a process-global variable, so a guard is not thread safe (two
 * threads interleaving begin/end could restore each other's state). */
#include <gsl/gsl_errno.h>
#include "num/num.h"

dpa_gsl_guard dpa_gsl_guard_begin(void)
{
    dpa_gsl_guard g;
    g.saved = gsl_set_error_handler_off();
    return g;
}

void dpa_gsl_guard_end(dpa_gsl_guard g)
{
    gsl_set_error_handler(g.saved);
}
