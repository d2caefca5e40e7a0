/* Shared libraries loaded on demand (dlopen), for the optional dependencies
 * that only some runs use (libpq: src/ledger/pq_api.c; cairo:
 * src/cli/cairo_api.c).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPA_NUM_DYNLIB_H
#define DPA_NUM_DYNLIB_H

#include <stddef.h>

/* dlopen the first of sonames[0 .. n) that loads (RTLD_NOW | RTLD_LOCAL |
 * RTLD_NODELETE: the library stays mapped after dlclose, as a linked one
 * would, since its dependencies register exit handlers and thread-local
 * destructors that must not outlive their code).  NULL if none loads, with
 * the loader's message of the first attempt copied into why (size
 * why_len; the next dlopen frees the string dlerror returned). */
void *dpa_dynlib_open(const char *const *sonames, size_t n, char *why, size_t why_len);

#endif
