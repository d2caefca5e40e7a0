/* The SQLite backend's connection and statements, shared by its sources
 * (internal): store_sqlite_stmt.c (errors, statements kept prepared),
 * store_sqlite.c (the ledger's tables, files and operations).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPA_LEDGER_STORE_SQLITE_H
#define DPA_LEDGER_STORE_SQLITE_H

#include <sqlite3.h>
#include "ledger/store.h"

/* How long a request waits for another process's transaction to finish.
 * Requests hold the lock for one decision (well under a second for the
 * scalar filters, seconds at most for PLD-based ones), so a minute means a
 * stuck process, not a busy ledger. */
#define DPA_SQLITE_BUSY_MS 60000

/* Statements kept prepared per connection (prepare/release). */
#define SQ_CACHE 24

typedef struct sqlite_store {
    dpa_store base;
    sqlite3 *db;
    int in_txn;
    /* a ledger being created: built in the temporary file tmp_path and
     * published at final_path by its commit (NULL otherwise) */
    char *tmp_path, *final_path;
    /* statements prepared once per connection (a request runs about ten;
     * parsing them anew cost about a third of a request's CPU time) */
    struct sq_cached {
        const char *sql; /* the statement's text (a literal: compared by address) */
        sqlite3_stmt *st;
        int busy;        /* handed out and not yet released */
    } cache[SQ_CACHE];
} sqlite_store;

/* The error of the connection's last failure (busy, not a database,
 * corrupt, or SQLite's message): DPA_ESTORAGE or DPA_EINVAL. */
dpa_status dpa_sq_fail(sqlite_store *s, dpa_error *err, const char *what);
/* Run sql (no results). */
dpa_status dpa_sq_exec(sqlite_store *s, const char *sql, const char *what, dpa_error *err);
/* A copy of a column's text (malloc'ed; "" for NULL), NULL if out of memory. */
char *dpa_sq_dup_col(sqlite3_stmt *st, int i);
/* The statement of sql (a string literal), kept prepared in s->cache when a
 * slot is free; give it back with dpa_sq_release (reset for its next use, or
 * finalized); dpa_sq_drop_cache finalizes them all (before closing). */
dpa_status dpa_sq_prepare(sqlite_store *s, const char *sql, sqlite3_stmt **st, dpa_error *err);
void dpa_sq_release(sqlite_store *s, sqlite3_stmt *st);
void dpa_sq_drop_cache(sqlite_store *s);

#endif
