/* The ledger's SQLite backend.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * One database file per ledger, in WAL mode with synchronous = FULL: a
 * commit returns after its WAL frames are fsync'ed, so a committed decision
 * survives a crash of the process or of the machine, and a transaction cut
 * short by kill -9 is rolled back when the database is next opened.  Many
 * processes may use one database: begin_write is BEGIN IMMEDIATE, which
 * takes the database's single write lock before the unit is read, so two
 * requests never decide on the same state; readers (status, history,
 * verify) see a consistent snapshot and do not block writers.  A writer that
 * finds the lock held waits (busy timeout DPA_SQLITE_BUSY_MS) and then fails
 * with DPA_ESTORAGE, never deciding on stale data. */
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "ledger/store_sqlite.h"

static const char SCHEMA[] =
    "CREATE TABLE dpacct_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE dpacct_units ("
    " name TEXT PRIMARY KEY,"
    " filter TEXT NOT NULL,"
    " initial_state TEXT NOT NULL,"
    " state TEXT NOT NULL,"
    " requests INTEGER NOT NULL DEFAULT 0 CHECK (requests >= 0),"
    " accepted INTEGER NOT NULL DEFAULT 0 CHECK (accepted >= 0 AND accepted <= requests),"
    " created TEXT NOT NULL,"
    " chain_index INTEGER NOT NULL DEFAULT 0,"
    " chain_after INTEGER NOT NULL DEFAULT 0,"
    " chain TEXT NOT NULL DEFAULT '',"
    " tenant TEXT NOT NULL DEFAULT 'default',"
    " period_seconds INTEGER NOT NULL DEFAULT 0,"
    " lifecycle TEXT NOT NULL DEFAULT 'active',"
    " generation INTEGER NOT NULL DEFAULT 0,"
    " period_start TEXT NOT NULL DEFAULT '',"
    " filter_now TEXT NOT NULL DEFAULT '');"
    "CREATE TABLE dpacct_requests ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " unit TEXT NOT NULL," /* a unit's name, or "" for a tenant or token entry */
    " time TEXT NOT NULL,"
    " spec TEXT NOT NULL,"
    " decision TEXT NOT NULL CHECK (decision IN ('accepted', 'rejected')),"
    " reason TEXT NOT NULL,"
    " state_before TEXT NOT NULL,"
    " state_after TEXT NOT NULL,"
    " chain TEXT NOT NULL DEFAULT '',"
    " kind TEXT NOT NULL DEFAULT 'request',"
    " actor TEXT NOT NULL DEFAULT 'local',"
    " idem_key TEXT,"
    " generation INTEGER NOT NULL DEFAULT 0,"
    " ref INTEGER NOT NULL DEFAULT 0);"
    "CREATE INDEX dpacct_requests_unit ON dpacct_requests (unit, id);"
    "CREATE UNIQUE INDEX dpacct_requests_key ON dpacct_requests (unit, idem_key);";

static void sq_close(dpa_store *b)
{
    sqlite_store *s = (sqlite_store *)b;
    if (!s)
        return;
    if (s->in_txn)
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    dpa_sq_drop_cache(s);
    sqlite3_close(s->db);
    /* a create that was not committed leaves nothing behind */
    if (s->tmp_path)
        dpa_store_sqlite_unlink(s->tmp_path);
    free(s->tmp_path);
    free(s->final_path);
    free(s);
}

/* fsync the directory holding path (a rename or link in it is then durable). */
static void sync_dir(const char *path)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY) : -1;
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
    free(dir);
}

/* Publish a committed new ledger: close its connection (which checkpoints
 * the WAL into the file and removes it), then give the temporary file its
 * final name with link(2), which fails rather than replace a file created
 * there meanwhile, and drop the temporary name.  Before the link nothing
 * exists at the final path; after it, the whole ledger does. */
static dpa_status sq_publish(sqlite_store *s, dpa_error *err)
{
    dpa_status rc = DPA_OK;
    int fd;
    dpa_sq_drop_cache(s);
    if (sqlite3_close(s->db) != SQLITE_OK)
        return dpa_sq_fail(s, err, "cannot close the new ledger");
    s->db = NULL;
    fd = open(s->tmp_path, O_RDONLY);
    if (fd < 0 || fsync(fd) != 0)
        rc = dpa_error_set(err, DPA_ESTORAGE, "ledger: cannot sync %s: %s", s->tmp_path, strerror(errno));
    if (fd >= 0)
        close(fd);
    if (rc == DPA_OK && link(s->tmp_path, s->final_path) != 0)
        rc = errno == EEXIST
                 ? dpa_error_set(err, DPA_EINVAL, "ledger: %s already exists (created meanwhile by "
                                 "another process; a ledger is never overwritten)", s->final_path)
                 : dpa_error_set(err, DPA_ESTORAGE, "ledger: cannot create %s: %s", s->final_path,
                                 strerror(errno));
    dpa_store_sqlite_unlink(s->tmp_path);
    free(s->tmp_path);
    s->tmp_path = NULL;
    if (rc == DPA_OK)
        sync_dir(s->final_path);
    return rc;
}

static dpa_status sq_begin_write(dpa_store *b, dpa_error *err)
{
    sqlite_store *s = (sqlite_store *)b;
    dpa_status st = dpa_sq_exec(s, "BEGIN IMMEDIATE", "cannot start a write transaction", err);
    if (st == DPA_OK)
        s->in_txn = 1;
    return st;
}

static dpa_status sq_begin_read(dpa_store *b, dpa_error *err)
{
    sqlite_store *s = (sqlite_store *)b;
    dpa_status st = dpa_sq_exec(s, "BEGIN DEFERRED", "cannot start a read transaction", err);
    if (st == DPA_OK)
        s->in_txn = 1;
    return st;
}

static dpa_status sq_commit(dpa_store *b, dpa_error *err)
{
    sqlite_store *s = (sqlite_store *)b;
    dpa_status st = dpa_sq_exec(s, "COMMIT", "commit failed", err);
    if (st != DPA_OK) {
        /* nothing of the transaction was kept */
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    }
    s->in_txn = 0;
    if (st == DPA_OK && s->tmp_path)
        st = sq_publish(s, err);
    return st;
}

static void sq_rollback(dpa_store *b)
{
    sqlite_store *s = (sqlite_store *)b;
    if (s->in_txn)
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    s->in_txn = 0;
}

static dpa_status sq_get_meta(dpa_store *b, const char *key, char **value, dpa_error *err)
{
    sqlite_store *s = (sqlite_store *)b;
    sqlite3_stmt *st;
    dpa_status rc = dpa_sq_prepare(s, "SELECT value FROM dpacct_meta WHERE key = ?1", &st, err);
    int step;
    *value = NULL;
    if (rc != DPA_OK)
        return rc;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        *value = dpa_sq_dup_col(st, 0);
        if (!*value)
            rc = dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
    } else if (step != SQLITE_DONE) {
        rc = dpa_sq_fail(s, err, "cannot read metadata");
    }
    dpa_sq_release(s, st);
    return rc;
}

static dpa_status sq_set_meta(dpa_store *b, const char *key, const char *value, dpa_error *err)
{
    sqlite_store *s = (sqlite_store *)b;
    sqlite3_stmt *st;
    dpa_status rc = dpa_sq_prepare(s, "INSERT OR REPLACE INTO dpacct_meta (key, value) VALUES (?1, ?2)", &st, err);
    if (rc != DPA_OK)
        return rc;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE)
        rc = dpa_sq_fail(s, err, "cannot write metadata");
    dpa_sq_release(s, st);
    return rc;
}

#define UNIT_COLS "name, filter, initial_state, state, requests, accepted, created, chain_index, chain_after, chain, " \
                  "tenant, period_seconds, lifecycle, generation, period_start, filter_now"

static int read_unit(sqlite3_stmt *st, dpa_store_unit *u)
{
    memset(u, 0, sizeof *u);
    u->name = dpa_sq_dup_col(st, 0);
    u->filter = dpa_sq_dup_col(st, 1);
    u->initial_state = dpa_sq_dup_col(st, 2);
    u->state = dpa_sq_dup_col(st, 3);
    u->requests = sqlite3_column_int64(st, 4);
    u->accepted = sqlite3_column_int64(st, 5);
    u->created = dpa_sq_dup_col(st, 6);
    u->chain_index = sqlite3_column_int64(st, 7);
    u->chain_after = sqlite3_column_int64(st, 8);
    u->chain = dpa_sq_dup_col(st, 9);
    u->tenant = dpa_sq_dup_col(st, 10);
    u->period_seconds = sqlite3_column_int64(st, 11);
    u->lifecycle = dpa_sq_dup_col(st, 12);
    u->generation = sqlite3_column_int64(st, 13);
    u->period_start = dpa_sq_dup_col(st, 14);
    u->filter_now = dpa_sq_dup_col(st, 15);
    if (!u->name || !u->filter || !u->initial_state || !u->state || !u->created || !u->chain || !u->tenant ||
        !u->lifecycle || !u->period_start || !u->filter_now) {
        dpa_store_unit_clear(u);
        return -1;
    }
    return 0;
}

/* lock: the write transaction of begin_write already holds the database's
 * only write lock, which covers every unit. */
static dpa_status sq_get_unit(dpa_store *b, const char *name, int lock, dpa_store_unit *out,
                              int *found, dpa_error *err)
{
    sqlite_store *s = (sqlite_store *)b;
    sqlite3_stmt *st;
    dpa_status rc = dpa_sq_prepare(s, "SELECT " UNIT_COLS " FROM dpacct_units WHERE name = ?1", &st, err);
    int step;
    (void)lock;
    memset(out, 0, sizeof *out);
    *found = 0;
    if (rc != DPA_OK)
        return rc;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        if (read_unit(st, out))
            rc = dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
        else
            *found = 1;
    } else if (step != SQLITE_DONE) {
        rc = dpa_sq_fail(s, err, "cannot read a unit");
    }
    dpa_sq_release(s, st);
    return rc;
}

static dpa_status sq_insert_unit(dpa_store *b, const dpa_store_unit *u, dpa_error *err)
{
    sqlite_store *s = (sqlite_store *)b;
    sqlite3_stmt *st;
    dpa_status rc = dpa_sq_prepare(s, "INSERT INTO dpacct_units (" UNIT_COLS ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
                               "?11, ?12, ?13, ?14, ?15, ?16)", &st, err);
    int step;
    if (rc != DPA_OK)
        return rc;
    sqlite3_bind_text(st, 1, u->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, u->filter, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, u->initial_state, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, u->state, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 5, u->requests);
    sqlite3_bind_int64(st, 6, u->accepted);
    sqlite3_bind_text(st, 7, u->created, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 8, u->chain_index);
    sqlite3_bind_int64(st, 9, u->chain_after);
    sqlite3_bind_text(st, 10, u->chain ? u->chain : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 11, u->tenant ? u->tenant : "default", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 12, u->period_seconds);
    sqlite3_bind_text(st, 13, u->lifecycle ? u->lifecycle : "active", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 14, u->generation);
    sqlite3_bind_text(st, 15, u->period_start ? u->period_start : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 16, u->filter_now ? u->filter_now : "", -1, SQLITE_STATIC);
    step = sqlite3_step(st);
    if (step != SQLITE_DONE) {
        if ((sqlite3_extended_errcode(s->db) & 0xff) == SQLITE_CONSTRAINT)
            rc = dpa_error_set(err, DPA_EINVAL, "ledger: unit \"%s\" already exists", u->name);
        else
            rc = dpa_sq_fail(s, err, "cannot add a unit");
    }
    dpa_sq_release(s, st);
    return rc;
}

static dpa_status sq_update_unit(dpa_store *b, const dpa_store_unit *u, dpa_error *err)
{
    sqlite_store *s = (sqlite_store *)b;
    sqlite3_stmt *st;
    dpa_status rc = dpa_sq_prepare(s, "UPDATE dpacct_units SET state = ?2, requests = ?3, accepted = ?4, lifecycle = ?5, "
                               "generation = ?6, period_start = ?7, filter_now = ?8 WHERE name = ?1", &st, err);
    if (rc != DPA_OK)
        return rc;
    sqlite3_bind_text(st, 1, u->name, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, u->state, -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 3, u->requests);
    sqlite3_bind_int64(st, 4, u->accepted);
    sqlite3_bind_text(st, 5, u->lifecycle ? u->lifecycle : "active", -1, SQLITE_STATIC);
    sqlite3_bind_int64(st, 6, u->generation);
    sqlite3_bind_text(st, 7, u->period_start ? u->period_start : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 8, u->filter_now ? u->filter_now : "", -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE)
        rc = dpa_sq_fail(s, err, "cannot update a unit");
    else if (sqlite3_changes(s->db) != 1)
        rc = dpa_error_set(err, DPA_ESTORAGE, "ledger: unit \"%s\" vanished during a request", u->name);
    dpa_sq_release(s, st);
    return rc;
}

static dpa_status sq_append_request(dpa_store *b, dpa_store_request *r, dpa_error *err)
{
    sqlite_store *s = (sqlite_store *)b;
    sqlite3_stmt *st;
    dpa_status rc = dpa_sq_prepare(s, "INSERT INTO dpacct_requests (unit, time, spec, decision, reason, state_before, "
                               "state_after, id, chain, kind, actor, idem_key, generation, ref) VALUES (?1, ?2, "
                               "?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)", &st, err);
    if (rc != DPA_OK)
        return rc;
    if (r->id > 0)
        sqlite3_bind_int64(st, 8, r->id);
    else
        sqlite3_bind_null(st, 8); /* the next id */
    sqlite3_bind_text(st, 1, r->unit, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, r->time, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 3, r->spec, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 4, r->accepted ? "accepted" : "rejected", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 5, r->reason ? r->reason : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 6, r->state_before, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 7, r->state_after, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 9, r->chain ? r->chain : "", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 10, r->kind ? r->kind : "request", -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 11, r->actor ? r->actor : "local", -1, SQLITE_STATIC);
    if (r->idem_key && *r->idem_key)
        sqlite3_bind_text(st, 12, r->idem_key, -1, SQLITE_STATIC);
    else
        sqlite3_bind_null(st, 12);
    sqlite3_bind_int64(st, 13, r->generation);
    sqlite3_bind_int64(st, 14, r->ref);
    if (sqlite3_step(st) != SQLITE_DONE)
        rc = (sqlite3_extended_errcode(s->db) & 0xff) == SQLITE_CONSTRAINT && r->idem_key
                 ? dpa_error_set(err, DPA_EINVAL, "ledger: idempotency key already used for unit \"%s\"", r->unit)
                 : dpa_sq_fail(s, err, "cannot record the request");
    else
        r->id = (long long)sqlite3_last_insert_rowid(s->db);
    dpa_sq_release(s, st);
    return rc;
}

static dpa_status sq_each_unit(dpa_store *b, const char *name, dpa_store_unit_fn fn, void *ctx,
                               dpa_error *err)
{
    sqlite_store *s = (sqlite_store *)b;
    sqlite3_stmt *st;
    dpa_status rc = dpa_sq_prepare(s, name ? "SELECT " UNIT_COLS " FROM dpacct_units WHERE name = ?1"
                                    : "SELECT " UNIT_COLS " FROM dpacct_units ORDER BY name", &st, err);
    int step;
    if (rc != DPA_OK)
        return rc;
    if (name)
        sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        dpa_store_unit u;
        int stop;
        if (read_unit(st, &u)) {
            rc = dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
            break;
        }
        stop = fn(ctx, &u);
        dpa_store_unit_clear(&u);
        if (stop)
            break;
    }
    if (rc == DPA_OK && step != SQLITE_ROW && step != SQLITE_DONE)
        rc = dpa_sq_fail(s, err, "cannot read the units");
    dpa_sq_release(s, st);
    return rc;
}

#define REQ_COLS "id, unit, time, spec, decision, reason, state_before, state_after, chain, kind, actor, " \
                 "idem_key, generation, ref"

static int read_request(sqlite3_stmt *st, dpa_store_request *r)
{
    char *decision = dpa_sq_dup_col(st, 4);
    memset(r, 0, sizeof *r);
    r->id = sqlite3_column_int64(st, 0);
    r->unit = dpa_sq_dup_col(st, 1);
    r->time = dpa_sq_dup_col(st, 2);
    r->spec = dpa_sq_dup_col(st, 3);
    r->reason = dpa_sq_dup_col(st, 5);
    r->state_before = dpa_sq_dup_col(st, 6);
    r->state_after = dpa_sq_dup_col(st, 7);
    r->chain = dpa_sq_dup_col(st, 8);
    r->kind = dpa_sq_dup_col(st, 9);
    r->actor = dpa_sq_dup_col(st, 10);
    r->idem_key = sqlite3_column_type(st, 11) == SQLITE_NULL ? NULL : dpa_sq_dup_col(st, 11);
    r->generation = sqlite3_column_int64(st, 12);
    r->ref = sqlite3_column_int64(st, 13);
    if (!decision || !r->unit || !r->time || !r->spec || !r->reason || !r->state_before || !r->state_after ||
        !r->chain || !r->kind || !r->actor || (sqlite3_column_type(st, 11) != SQLITE_NULL && !r->idem_key)) {
        free(decision);
        dpa_store_request_clear(r);
        return -1;
    }
    r->accepted = !strcmp(decision, "accepted");
    free(decision);
    return 0;
}

static dpa_status sq_get_request(dpa_store *b, const char *unit, long long id, const char *key,
                                 dpa_store_request *out, int *found, dpa_error *err)
{
    sqlite_store *s = (sqlite_store *)b;
    sqlite3_stmt *st;
    dpa_status rc = dpa_sq_prepare(s, key ? "SELECT " REQ_COLS " FROM dpacct_requests WHERE unit = ?1 AND idem_key = ?2"
                                   : "SELECT " REQ_COLS " FROM dpacct_requests WHERE unit = ?1 AND id = ?3", &st, err);
    int step;
    memset(out, 0, sizeof *out);
    *found = 0;
    if (rc != DPA_OK)
        return rc;
    sqlite3_bind_text(st, 1, unit, -1, SQLITE_STATIC);
    if (key)
        sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
    else
        sqlite3_bind_int64(st, 3, id);
    step = sqlite3_step(st);
    if (step == SQLITE_ROW) {
        if (read_request(st, out))
            rc = dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
        else
            *found = 1;
    } else if (step != SQLITE_DONE) {
        rc = dpa_sq_fail(s, err, "cannot read the history");
    }
    dpa_sq_release(s, st);
    return rc;
}

static dpa_status sq_each_meta(dpa_store *b, const char *prefix, int (*fn)(void *, const char *, const char *),
                               void *ctx, dpa_error *err)
{
    sqlite_store *s = (sqlite_store *)b;
    sqlite3_stmt *st;
    dpa_status rc = dpa_sq_prepare(s, "SELECT key, value FROM dpacct_meta WHERE substr(key, 1, length(?1)) = ?1 "
                               "ORDER BY key", &st, err);
    int step;
    if (rc != DPA_OK)
        return rc;
    sqlite3_bind_text(st, 1, prefix, -1, SQLITE_STATIC);
    while ((step = sqlite3_step(st)) == SQLITE_ROW)
        if (fn(ctx, (const char *)sqlite3_column_text(st, 0), (const char *)sqlite3_column_text(st, 1)))
            break;
    if (step != SQLITE_ROW && step != SQLITE_DONE)
        rc = dpa_sq_fail(s, err, "cannot read the metadata");
    dpa_sq_release(s, st);
    return rc;
}

static dpa_status sq_each_request(dpa_store *b, const char *unit, dpa_store_request_fn fn,
                                  void *ctx, dpa_error *err)
{
    sqlite_store *s = (sqlite_store *)b;
    sqlite3_stmt *st;
    dpa_status rc = dpa_sq_prepare(s, unit ? "SELECT " REQ_COLS " FROM dpacct_requests WHERE unit = ?1 ORDER BY id"
                                    : "SELECT " REQ_COLS " FROM dpacct_requests ORDER BY id", &st, err);
    int step;
    if (rc != DPA_OK)
        return rc;
    if (unit)
        sqlite3_bind_text(st, 1, unit, -1, SQLITE_STATIC);
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        dpa_store_request r;
        int stop;
        if (read_request(st, &r)) {
            rc = dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
            break;
        }
        stop = fn(ctx, &r);
        dpa_store_request_clear(&r);
        if (stop)
            break;
    }
    if (rc == DPA_OK && step != SQLITE_ROW && step != SQLITE_DONE)
        rc = dpa_sq_fail(s, err, "cannot read the history");
    dpa_sq_release(s, st);
    return rc;
}

/* the write transaction (BEGIN IMMEDIATE) already holds the only write lock */
static dpa_status sq_lock_meta(dpa_store *b, const char *key, char **value, dpa_error *err)
{
    return sq_get_meta(b, key, value, err);
}

static dpa_status sq_upgrade_tables(dpa_store *b, int from, dpa_error *err)
{
    sqlite_store *s = (sqlite_store *)b;
    dpa_status rc = DPA_OK;
    for (size_t i = 0; from < 2 && rc == DPA_OK && i < sizeof DPA_STORE_UPGRADE_SQL / sizeof *DPA_STORE_UPGRADE_SQL; i++)
        rc = dpa_sq_exec(s, DPA_STORE_UPGRADE_SQL[i], "cannot upgrade the tables", err);
    /* format 3 has no foreign key from the entries to the units (tenant and
     * token entries have the unit ""): SQLite drops a constraint by
     * rebuilding the table (its rows are rewritten by the upgrade anyway) */
    if (rc == DPA_OK)
        rc = dpa_sq_exec(s, "ALTER TABLE dpacct_requests RENAME TO dpacct_requests_old;"
                        "DROP INDEX IF EXISTS dpacct_requests_unit;"
                        "DROP INDEX IF EXISTS dpacct_requests_key;"
                        "CREATE TABLE dpacct_requests ("
                        " id INTEGER PRIMARY KEY AUTOINCREMENT, unit TEXT NOT NULL, time TEXT NOT NULL,"
                        " spec TEXT NOT NULL,"
                        " decision TEXT NOT NULL CHECK (decision IN ('accepted', 'rejected')),"
                        " reason TEXT NOT NULL, state_before TEXT NOT NULL, state_after TEXT NOT NULL,"
                        " chain TEXT NOT NULL DEFAULT '');"
                        "INSERT INTO dpacct_requests (id, unit, time, spec, decision, reason, state_before,"
                        " state_after) SELECT id, unit, time, spec, decision, reason, state_before, state_after"
                        " FROM dpacct_requests_old;"
                        "DROP TABLE dpacct_requests_old;"
                        "CREATE INDEX dpacct_requests_unit ON dpacct_requests (unit, id);",
                     "cannot upgrade the tables", err);
    for (size_t i = 0; rc == DPA_OK && i < DPA_STORE_UPGRADE3_N; i++)
        if (sqlite3_exec(s->db, DPA_STORE_UPGRADE3_SQL[i], NULL, NULL, NULL) != SQLITE_OK &&
            strncmp(sqlite3_errmsg(s->db), "duplicate column name", 21))
            rc = dpa_sq_fail(s, err, "cannot upgrade the tables");
    return rc;
}

static dpa_status sq_delete_all(dpa_store *b, dpa_error *err)
{
    return dpa_sq_exec((sqlite_store *)b, "DELETE FROM dpacct_requests; DELETE FROM dpacct_units",
                   "cannot rewrite the tables", err);
}

static const dpa_store_ops SQLITE_OPS = {
    "sqlite", sq_close, sq_begin_write, sq_begin_read, sq_commit, sq_rollback,
    sq_get_meta, sq_set_meta, sq_lock_meta, sq_upgrade_tables, sq_delete_all, sq_get_unit, sq_insert_unit, sq_update_unit,
    sq_append_request, sq_each_unit, sq_each_request, dpa_store_snapshot_tx, dpa_store_commit_request_tx,
    sq_get_request, sq_each_meta,
};

/* Open path (flags: SQLITE_OPEN_*) and set the connection's pragmas. */
static dpa_status sq_connect(const char *path, int flags, sqlite_store **out, dpa_error *err)
{
    sqlite_store *s = calloc(1, sizeof *s);
    dpa_status rc;
    if (!s)
        return dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
    s->base.ops = &SQLITE_OPS;
    if (sqlite3_open_v2(path, &s->db, flags | SQLITE_OPEN_FULLMUTEX, NULL) != SQLITE_OK) {
        rc = dpa_error_set(err, DPA_ESTORAGE, "ledger: cannot open %s: %s", path,
                           s->db ? sqlite3_errmsg(s->db) : "out of memory");
        sqlite3_close(s->db);
        free(s);
        return rc;
    }
    sqlite3_busy_timeout(s->db, DPA_SQLITE_BUSY_MS);
    if (flags & SQLITE_OPEN_READONLY) {
        *out = s; /* a reader writes nothing: no pragmas (they would open the WAL) */
        return DPA_OK;
    }
    /* synchronous = FULL: in WAL mode every commit is fsync'ed (NORMAL would
     * let the last commits roll back after a power loss). */
    rc = dpa_sq_exec(s, "PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;",
                 "cannot configure the connection", err);
    if (rc != DPA_OK) {
        sq_close(&s->base);
        return rc;
    }
    *out = s;
    return DPA_OK;
}

dpa_status dpa_store_sqlite_create(const char *path, dpa_store **out, dpa_error *err)
{
    sqlite_store *s;
    dpa_status rc;
    struct stat sb;
    char *tmp;
    int fd;
    *out = NULL;
    /* Fail early if the path is taken; the publishing link(2) checks again. */
    if (lstat(path, &sb) == 0)
        return dpa_error_set(err, DPA_EINVAL, "ledger: %s already exists (a ledger is never "
                             "overwritten; remove it first or choose another path)", path);
    /* Built in a temporary file next to it and published by the commit
     * (sq_publish): a process killed before then leaves at most a stray
     * PATH.dpacct-tmp-XXXXXX, never a stub at PATH that blocks a retry. */
    tmp = malloc(strlen(path) + 20);
    if (!tmp)
        return dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
    sprintf(tmp, "%s.dpacct-tmp-XXXXXX", path);
    fd = mkstemp(tmp);
    if (fd < 0) {
        rc = dpa_error_set(err, DPA_ESTORAGE, "ledger: cannot create %s: %s", path, strerror(errno));
        free(tmp);
        return rc;
    }
    fchmod(fd, 0644);
    close(fd);
    rc = sq_connect(tmp, SQLITE_OPEN_READWRITE, &s, err);
    if (rc != DPA_OK) {
        dpa_store_sqlite_unlink(tmp);
        free(tmp);
        return rc;
    }
    s->tmp_path = tmp;
    s->final_path = strdup(path);
    if (!s->final_path) {
        sq_close(&s->base);
        return dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
    }
    /* WAL persists in the file: every later connection uses it. */
    rc = dpa_sq_exec(s, "PRAGMA journal_mode = WAL", "cannot switch to WAL mode", err);
    if (rc == DPA_OK)
        rc = sq_begin_write(&s->base, err);
    if (rc == DPA_OK)
        rc = dpa_sq_exec(s, SCHEMA, "cannot create the tables", err);
    if (rc == DPA_OK)
        rc = sq_set_meta(&s->base, "format", DPA_LEDGER_FORMAT, err);
    if (rc != DPA_OK) {
        sq_close(&s->base); /* removes the temporary file */
        return rc;
    }
    /* the write transaction stays open: the caller fills the ledger and
     * commits, so a ledger exists whole or not at all */
    *out = &s->base;
    return DPA_OK;
}

void dpa_store_sqlite_unlink(const char *path)
{
    size_t n = strlen(path) + 5;
    char *side = malloc(n);
    unlink(path);
    if (!side)
        return;
    snprintf(side, n, "%s-wal", path);
    unlink(side);
    snprintf(side, n, "%s-shm", path);
    unlink(side);
    free(side);
}

/* Read the format tag.  Not an SQLite file, or no ledger tables: not a
 * ledger (DPA_EINVAL); anything else (corruption, I/O): DPA_ESTORAGE with
 * SQLite's message. */
static dpa_status read_format(sqlite_store *s, const char *path, char **format, dpa_error *err)
{
    sqlite3_stmt *st;
    int step, code;
    dpa_status rc = DPA_OK;
    *format = NULL;
    if (sqlite3_prepare_v2(s->db, "SELECT value FROM dpacct_meta WHERE key = 'format'", -1, &st, NULL) ==
        SQLITE_OK) {
        step = sqlite3_step(st);
        if (step == SQLITE_ROW) {
            *format = dpa_sq_dup_col(st, 0);
            if (!*format)
                rc = dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
        } else if (step != SQLITE_DONE) {
            rc = dpa_sq_fail(s, err, "cannot read the ledger's metadata");
        }
        sqlite3_finalize(st);
        return rc;
    }
    code = sqlite3_extended_errcode(s->db) & 0xff;
    if (code == SQLITE_NOTADB || code == SQLITE_ERROR) /* not SQLite; "no such table" */
        return dpa_error_set(err, DPA_EINVAL, "ledger: %s is not a dpacct ledger", path);
    return dpa_sq_fail(s, err, "cannot read the ledger's metadata");
}

/* 1 if the -wal file of path exists. */
static int has_wal(const char *path)
{
    size_t n = strlen(path) + 5;
    char *wal = malloc(n);
    int yes;
    if (!wal)
        return 1;
    snprintf(wal, n, "%s-wal", path);
    yes = access(wal, F_OK) == 0;
    free(wal);
    return yes;
}

/* Read-only connection.  WAL readers need the -shm file; where it cannot
 * be created (a read-only directory or mount) and no -wal file exists (every
 * commit is then in the database file), the file is opened as immutable:
 * nothing can write it there. */
static dpa_status sq_connect_readonly(const char *path, sqlite_store **out, dpa_error *err)
{
    dpa_status rc = sq_connect(path, SQLITE_OPEN_READONLY, out, err);
    char *format = NULL;
    dpa_error e;
    char *uri;
    if (rc != DPA_OK)
        return rc;
    if (read_format(*out, path, &format, &e) == DPA_OK || has_wal(path) ||
        ((sqlite3_extended_errcode((*out)->db) & 0xff) != SQLITE_CANTOPEN &&
         (sqlite3_extended_errcode((*out)->db) & 0xff) != SQLITE_READONLY)) {
        free(format);
        return DPA_OK; /* read_format reports the failure again, if any */
    }
    sq_close(&(*out)->base);
    *out = NULL;
    uri = sqlite3_mprintf("file:%q?immutable=1", path);
    for (char *p = uri ? uri + 5 : NULL; p && *p && *p != '?'; p++)
        if (*p == '#' || *p == '%') { /* not expressible without encoding: give up */
            sqlite3_free(uri);
            uri = NULL;
            break;
        }
    if (!uri)
        return sq_connect(path, SQLITE_OPEN_READONLY, out, err);
    rc = sq_connect(uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, out, err);
    sqlite3_free(uri);
    return rc;
}

dpa_status dpa_store_sqlite_open(const char *path, int mode, dpa_store **out, dpa_error *err)
{
    sqlite_store *s;
    dpa_status rc;
    char *format = NULL;
    struct stat sb;
    *out = NULL;
    if (stat(path, &sb) != 0)
        return dpa_error_set(err, DPA_EINVAL, "ledger: %s: %s (create one with `dpacct ledger init`)",
                             path, strerror(errno));
    if (S_ISDIR(sb.st_mode))
        return dpa_error_set(err, DPA_EINVAL, "ledger: %s is a directory, not a ledger", path);
    rc = mode == DPA_STORE_READ ? sq_connect_readonly(path, &s, err) : sq_connect(path, SQLITE_OPEN_READWRITE, &s, err);
    if (rc != DPA_OK)
        return rc;
    rc = read_format(s, path, &format, err);
    if (rc == DPA_OK && !format)
        rc = dpa_error_set(err, DPA_EINVAL, "ledger: %s is not a dpacct ledger", path);
    if (rc == DPA_OK && !(mode == DPA_STORE_UPGRADE && dpa_store_format_upgradable(format)))
        rc = dpa_store_check_format(format, path, err);
    free(format);
    if (rc != DPA_OK) {
        sq_close(&s->base);
        return rc;
    }
    *out = &s->base;
    return DPA_OK;
}
