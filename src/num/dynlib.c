/* Shared libraries loaded on demand (see dynlib.h).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <dlfcn.h>
#include <stdio.h>
#include "num/dynlib.h"

void *dpa_dynlib_open(const char *const *sonames, size_t n, char *why, size_t why_len)
{
    void *h = NULL;
    snprintf(why, why_len, "not found");
    for (size_t i = 0; i < n && !h; i++) {
        h = dlopen(sonames[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (!h && i == 0) {
            const char *e = dlerror();
            if (e)
                snprintf(why, why_len, "%s", e);
        }
    }
    return h;
}
