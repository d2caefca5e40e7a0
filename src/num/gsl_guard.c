/* Save GSL's error handler, switch it off around GSL calls, restore it.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * GSL's default handler aborts the process; the library never wants that,
 * and must not leave a caller's own handler replaced either.  GSL keeps the
 * handler in a process-global variable, so the guards of the library's own
 * worker threads are serialized by a lock (recursive: a guarded GSL call may
 * reach another guarded call).  The lock is the one piece of process-global
 * state of the library, and exists only because GSL's handler is global.
 * A caller's own threads that set GSL's handler while the library runs can
 * still race with it (documented in docs/architecture.md). */
#include <gsl/gsl_errno.h>
#include <pthread.h>
#include "num/num.h"

static pthread_mutex_t guard_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

dpa_gsl_guard dpa_gsl_guard_begin(void)
{
    dpa_gsl_guard g;
    pthread_mutex_lock(&guard_lock);
    g.saved = gsl_set_error_handler_off();
    return g;
}

void dpa_gsl_guard_end(dpa_gsl_guard g)
{
    gsl_set_error_handler(g.saved);
    pthread_mutex_unlock(&guard_lock);
}
