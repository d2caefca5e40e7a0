/* The SQLite backend's statements: errors of the connection, statements
 * kept prepared per connection (a request runs about ten; parsing them anew
 * cost about a third of a request's CPU time), column texts copied.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdlib.h>
#include <string.h>
#include "ledger/store_sqlite.h"

dpa_status dpa_sq_fail(sqlite_store *s, dpa_error *err, const char *what)
{
    int code = sqlite3_extended_errcode(s->db);
    if ((code & 0xff) == SQLITE_BUSY || (code & 0xff) == SQLITE_LOCKED)
        return dpa_error_set(err, DPA_ESTORAGE,
                             "ledger: %s: the database stayed locked by another process for %d s",
                             what, DPA_SQLITE_BUSY_MS / 1000);
    if ((code & 0xff) == SQLITE_NOTADB)
        return dpa_error_set(err, DPA_EINVAL, "ledger: %s: the file is not a dpacct ledger "
                             "(not an SQLite database)", what);
    if ((code & 0xff) == SQLITE_CORRUPT)
        return dpa_error_set(err, DPA_ESTORAGE, "ledger: %s: the database is corrupted (SQLite: %s); "
                             "restore it from a backup or an export", what, sqlite3_errmsg(s->db));
    return dpa_error_set(err, DPA_ESTORAGE, "ledger: %s: %s", what, sqlite3_errmsg(s->db));
}

dpa_status dpa_sq_exec(sqlite_store *s, const char *sql, const char *what, dpa_error *err)
{
    if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return dpa_sq_fail(s, err, what);
    return DPA_OK;
}

char *dpa_sq_dup_col(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    size_t n = (size_t)sqlite3_column_bytes(st, i);
    char *p = malloc(n + 1);
    if (!p)
        return NULL;
    if (t)
        memcpy(p, t, n);
    p[n] = '\0';
    return p;
}

/* The statement of sql (a string literal), kept prepared in s->cache
 * when a slot is free; give it back with release. */
dpa_status dpa_sq_prepare(sqlite_store *s, const char *sql, sqlite3_stmt **st, dpa_error *err)
{
    struct sq_cached *slot = NULL;
    for (int i = 0; i < SQ_CACHE; i++) {
        struct sq_cached *c = &s->cache[i];
        if (c->sql == sql && !c->busy) {
            c->busy = 1;
            *st = c->st;
            return DPA_OK;
        }
        if (!c->sql && !slot)
            slot = c;
    }
    if (sqlite3_prepare_v3(s->db, sql, -1, slot ? SQLITE_PREPARE_PERSISTENT : 0, st, NULL) != SQLITE_OK)
        return dpa_sq_fail(s, err, "cannot prepare a statement");
    if (slot) {
        slot->sql = sql;
        slot->st = *st;
        slot->busy = 1;
    }
    return DPA_OK;
}

/* Done with a statement of prepare: reset for its next use, or finalized. */
void dpa_sq_release(sqlite_store *s, sqlite3_stmt *st)
{
    for (int i = 0; i < SQ_CACHE; i++)
        if (s->cache[i].st == st && s->cache[i].busy) {
            sqlite3_reset(st);
            sqlite3_clear_bindings(st);
            s->cache[i].busy = 0;
            return;
        }
    sqlite3_finalize(st);
}

/* Finalize the kept statements (before the connection closes). */
void dpa_sq_drop_cache(sqlite_store *s)
{
    for (int i = 0; i < SQ_CACHE; i++) {
        sqlite3_finalize(s->cache[i].st);
        memset(&s->cache[i], 0, sizeof s->cache[i]);
    }
}
