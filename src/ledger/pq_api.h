/* libpq, loaded when a PostgreSQL ledger is opened.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The PostgreSQL backend calls libpq through this table of function
 * pointers, resolved with dlopen/dlsym when a connection is made, instead of
 * linking libpq into the library and the command.  libpq pulls in about
 * forty shared objects (OpenSSL, Kerberos, LDAP, GnuTLS, ...); loading and
 * relocating them cost every process about 3.6 ms at start-up (measured on
 * the development machine: an empty program linked with the library's other
 * dependencies starts in 1.3 ms, with libpq added in 4.9 ms), a quarter of a
 * whole DP-SGD accounting, although only ledgers on PostgreSQL use it.
 *
 * The build still needs libpq's header (Debian: libpq-dev) for the types;
 * at run time libpq.so.5 (Debian: libpq5) is needed only by PostgreSQL
 * ledgers, and its absence is an error of the open with the reason. */
#ifndef DPA_LEDGER_PQ_API_H
#define DPA_LEDGER_PQ_API_H

#include <libpq-fe.h>
#include "dpacct/status.h"

/* every libpq function the backend calls */
#define DPA_PQ_FUNCTIONS(X)                                                                       \
    X(PQclear) X(PQcmdStatus) X(PQcmdTuples) X(PQconnectdb) X(PQerrorMessage) X(PQexec)           \
    X(PQexecParams) X(PQexecPrepared) X(PQfinish) X(PQgetResult) X(PQgetisnull) X(PQgetvalue)     \
    X(PQntuples) X(PQprepare) X(PQreset) X(PQresultErrorField) X(PQresultErrorMessage)            \
    X(PQresultStatus) X(PQsendQueryParams) X(PQsetNoticeProcessor) X(PQsetSingleRowMode)          \
    X(PQstatus)

typedef struct dpa_pq_api {
    void *handle; /* dlopen handle; NULL: not loaded */
#define DPA_PQ_MEMBER(f) __typeof__(f) *f;
    DPA_PQ_FUNCTIONS(DPA_PQ_MEMBER)
#undef DPA_PQ_MEMBER
} dpa_pq_api;

/* Load libpq into *api (each open holds its own reference; the dynamic
 * loader maps the library once per process).  On failure *api is cleared
 * and err names the library and the loader's reason (DPA_EUNSUPPORTED). */
dpa_status dpa_pq_load(dpa_pq_api *api, dpa_error *err);

/* Drop the reference taken by dpa_pq_load (api may be cleared: no-op). */
void dpa_pq_unload(dpa_pq_api *api);

#endif
