/* libpq, loaded when a PostgreSQL ledger is opened (see pq_api.h).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifdef DPA_HAVE_LIBPQ

#include <dlfcn.h>
#include <string.h>
#include "ledger/pq_api.h"
#include "num/dynlib.h"

/* the run-time name of libpq's ABI (Debian: libpq5), then the development
 * link, which names the same library on systems that ship only that */
static const char *const SONAMES[] = {"libpq.so.5", "libpq.so"};

dpa_status dpa_pq_load(dpa_pq_api *api, dpa_error *err)
{
    char why[256];
    memset(api, 0, sizeof *api);
    api->handle = dpa_dynlib_open(SONAMES, sizeof SONAMES / sizeof *SONAMES, why, sizeof why);
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
