/* libmicrohttpd, loaded when a service starts (see mhd_api.h).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <dlfcn.h>
#include <string.h>
#include "num/dynlib.h"
#include "service/mhd_api.h"

/* the run-time name of libmicrohttpd's ABI (Debian: libmicrohttpd12), then
 * the development link */
static const char *const SONAMES[] = {"libmicrohttpd.so.12", "libmicrohttpd.so"};

dpa_status dpa_mhd_load(dpa_mhd_api *api, dpa_error *err)
{
    char why[256];
    memset(api, 0, sizeof *api);
    api->handle = dpa_dynlib_open(SONAMES, sizeof SONAMES / sizeof *SONAMES, why, sizeof why);
    if (!api->handle)
        return dpa_error_set(err, DPA_EUNSUPPORTED,
                             "serve: the service needs libmicrohttpd at run time (%s); on Debian "
                             "install libmicrohttpd12", why);
#define DPA_MHD_RESOLVE(f)                                                                        \
    if (!(api->f = (__typeof__(api->f))dlsym(api->handle, #f))) {                                \
        dlclose(api->handle);                                                                     \
        memset(api, 0, sizeof *api);                                                              \
        return dpa_error_set(err, DPA_EUNSUPPORTED,                                               \
                             "serve: the libmicrohttpd found at run time lacks %s (too old)", #f); \
    }
    DPA_MHD_FUNCTIONS(DPA_MHD_RESOLVE)
#undef DPA_MHD_RESOLVE
    return DPA_OK;
}

void dpa_mhd_unload(dpa_mhd_api *api)
{
    if (api->handle)
        dlclose(api->handle);
    memset(api, 0, sizeof *api);
}
