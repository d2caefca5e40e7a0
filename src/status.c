/* Status codes and error messages.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdarg.h>
#include <stdio.h>
#include "dpacct/status.h"

const char *dpa_status_string(dpa_status status)
{
    switch (status) {
    case DPA_OK: return "ok";
    case DPA_EINVAL: return "invalid input";
    case DPA_EUNSUPPORTED: return "unsupported";
    case DPA_ENOMEM: return "out of memory";
    case DPA_ENUMERIC: return "numerical failure";
    case DPA_EIO: return "i/o error";
    case DPA_ESTORAGE: return "storage failure";
    }
    return "unknown status";
}

dpa_status dpa_error_set(dpa_error *err, dpa_status status, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->status = status;
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return status;
}

void dpa_error_clear(dpa_error *err)
{
    if (err) {
        err->status = DPA_OK;
        err->message[0] = '\0';
    }
}
