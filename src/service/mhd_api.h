/* libmicrohttpd, loaded when a service starts.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The service calls libmicrohttpd through this table of function pointers,
 * resolved with dlopen/dlsym by dpa_service_create, instead of linking it
 * into the library and the command: Debian's libmicrohttpd is built with
 * GnuTLS, and loading it (with GnuTLS, nettle, p11-kit, libidn2, gmp, ...)
 * and running their initializers cost every process about 8 ms at start-up
 * (measured on the development machine: an empty program starts in 0.8 ms,
 * linked with libmicrohttpd in 8.9 ms), ten times a whole `dpacct epsilon`
 * start, although only `dpacct serve` uses it.
 *
 * The build still needs the header (Debian: libmicrohttpd-dev) for the
 * types; at run time libmicrohttpd.so.12 (Debian: libmicrohttpd12) is needed
 * only by the service, and its absence is an error of dpa_service_create
 * with the reason. */
#ifndef DPA_SERVICE_MHD_API_H
#define DPA_SERVICE_MHD_API_H

#include <microhttpd.h>
#include "dpacct/status.h"

/* every libmicrohttpd function the service calls */
#define DPA_MHD_FUNCTIONS(X)                                                                      \
    X(MHD_start_daemon) X(MHD_stop_daemon) X(MHD_quiesce_daemon) X(MHD_get_daemon_info)           \
    X(MHD_lookup_connection_value) X(MHD_create_response_from_buffer) X(MHD_add_response_header)   \
    X(MHD_queue_response) X(MHD_destroy_response)

typedef struct dpa_mhd_api {
    void *handle; /* dlopen handle; NULL: not loaded */
#define DPA_MHD_MEMBER(f) __typeof__(f) *f;
    DPA_MHD_FUNCTIONS(DPA_MHD_MEMBER)
#undef DPA_MHD_MEMBER
} dpa_mhd_api;

/* Load libmicrohttpd into *api.  On failure *api is cleared and err names
 * the library and the loader's reason (DPA_EUNSUPPORTED). */
dpa_status dpa_mhd_load(dpa_mhd_api *api, dpa_error *err);
/* Drop the reference taken by dpa_mhd_load (a cleared api: no-op). */
void dpa_mhd_unload(dpa_mhd_api *api);

#endif
