/* libpq, loaded when a PostgreSQL ledger is opened (see pq_api.h).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifdef DPA_HAVE_LIBPQ

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include "ledger/pq_api.h"

/* the run-time name of libpq's ABI (Debian: libpq5), then the development
 * link, which names the same library on systems that ship only that */
/* RTLD_NODELETE: the library stays mapped after the last reference is
 * dropped, as a linked library would; its dependencies register exit
 * handlers and thread-local destructors that must not outlive their code */
static const char *const SONAMES[] = {"libpq.so.5", "libpq.so"};

dpa_status dpa_pq_load(dpa_pq_api *api, dpa_error *err)
{
    /* the loader's message of the first attempt, copied: the next dlopen
     * frees the string dlerror returned */
    char why[256] = "not found";
    size_t i;
    memset(api, 0, sizeof *api);
    for (i = 0; i < sizeof SONAMES / sizeof *SONAMES && !api->handle; i++) {
        api->handle = dlopen(SONAMES[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (!api->handle && i == 0) {
            const char *e = dlerror();
            if (e)
                snprintf(why, sizeof why, "%s", e);
        }
    }
    if (!api->handle)
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "ledger: PostgreSQL ledgers need libpq at run time (%s); on Debian "
                             "install libpq5", why);
#define DPA_PQ_RESOLVE(f)                                                                         \
    if (!(api->f = (__typeof__(api->f))dlsym(api->handle, #f))) {                                 \
        dlclose(api->handle);                                                                     \
        memset(api, 0, sizeof *api);                                                              \
        return dpa_error_set(err, DPA_EUNSUPPORTED,                                               \
                             "ledger: the libpq found at run time lacks %s (too old)", #f);        \
    }
    DPA_PQ_FUNCTIONS(DPA_PQ_RESOLVE)
#undef DPA_PQ_RESOLVE
    return DPA_OK;
}

void dpa_pq_unload(dpa_pq_api *api)
{
    if (api->handle)
        dlclose(api->handle);
    memset(api, 0, sizeof *api);
}

#else
/* ISO C wants a translation unit to declare something */
typedef int dpa_pq_api_unused;
#endif
