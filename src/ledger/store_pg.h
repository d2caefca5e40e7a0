/* The PostgreSQL backend's connection, shared by its sources (internal):
 * store_pg_conn.c (connection, errors, transactions), store_pg.c (the
 * ledger's tables and statements).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPA_LEDGER_STORE_PG_H
#define DPA_LEDGER_STORE_PG_H

#include "ledger/pq_api.h"
#include "ledger/store.h"

typedef struct pg_store {
    dpa_store base;
    dpa_pq_api pq; /* libpq, loaded by pg_connect */
    PGconn *conn;
    int in_txn;
    int prepared; /* the decision path's statements are prepared on conn */
    char *uri; /* the location, to mask its passwords in libpq's messages */
} pg_store;

/* Error of a failed result (res may be NULL: a connection-level failure),
 * with the location's passwords masked: DPA_ESTORAGE. */
dpa_status dpa_pg_fail(pg_store *s, PGresult *res, dpa_error *err, const char *what);
/* The result's SQLSTATE ("" if none). */
const char *dpa_pg_sqlstate(const dpa_pq_api *pq, PGresult *res);
/* A command without results; a statement with text parameters. */
dpa_status dpa_pg_cmd(pg_store *s, const char *sql, const char *what, dpa_error *err);
PGresult *dpa_pg_params(pg_store *s, const char *sql, int n, const char *const *vals);
/* A copy of a value (malloc'ed; "" for NULL). */
char *dpa_pg_dup_val(const dpa_pq_api *pq, PGresult *res, int row, int col);
/* One reconnection and the session settings again. */
dpa_status dpa_pg_reconnect(pg_store *s, dpa_error *err);
/* The store's transaction operations (store.h). */
void dpa_pg_close(dpa_store *b);
dpa_status dpa_pg_begin_write(dpa_store *b, dpa_error *err);
dpa_status dpa_pg_begin_read(dpa_store *b, dpa_error *err);
dpa_status dpa_pg_commit(dpa_store *b, dpa_error *err);
void dpa_pg_rollback(dpa_store *b);
/* A new connection to uri with the session settings, as a store of ops. */
dpa_status dpa_pg_connect(const char *uri, const dpa_store_ops *ops, pg_store **out, dpa_error *err);

#endif
