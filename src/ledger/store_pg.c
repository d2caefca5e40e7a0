/* The ledger's PostgreSQL backend, for budget services on many hosts.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The location is a libpq connection URI (postgresql://user@host/db or
 * postgres://...).  The ledger's tables (dpacct_meta, dpacct_units,
 * dpacct_requests) live in the connection's default schema.
 *
 * Isolation: row locks at READ COMMITTED.  A request decides on a
 * snapshot (pg_snapshot: one SELECT of the unit and the chain's head) and
 * commits in one statement of its own (pg_commit_request, COMMIT_SQL):
 * SELECT ... FOR UPDATE of the unit, then of the head, waits for any
 * transaction holding them and reads their latest committed versions; the
 * request row, the unit's new state and the new head are written only if
 * both are still as the decision saw them, so two decisions on one unit
 * never commit on the same remaining budget, and the chain is extended in
 * commit order.  Requests on different units decide in parallel and meet
 * only at the head, for one statement.  (SERIALIZABLE would also be
 * correct, but aborts conflicting transactions instead of queueing them.)
 * The two statements are prepared once per session: a decision costs two
 * round trips.  Units, imports and upgrades are transactions (BEGIN ...
 * COMMIT) that take the same locks in the same order.
 *
 * Durability: a commit (COMMIT, or the end of the commit statement) returns
 * after the server has flushed the transaction's WAL (synchronous_commit =
 * on, set for the session); a client killed before it leaves a transaction
 * the server rolls back; a server killed at any moment recovers every
 * committed transaction from its WAL on restart.  Request ids come from
 * the chain's head, under its lock, so they follow the chain. */
#include <stdlib.h>
#include <string.h>
#include "dpacct/ledger.h"
#include "ledger/store.h"

#ifndef DPA_HAVE_LIBPQ

dpa_status dpa_store_pg_create(const char *uri, dpa_store **out, dpa_error *err)
{
    (void)uri;
    *out = NULL;
    return dpa_error_set(err, DPA_EUNSUPPORTED,
                         "ledger: this dpacct was built without the PostgreSQL backend (libpq was not "
                         "found at build time; on Debian install libpq-dev and rebuild)");
}

dpa_status dpa_store_pg_open(const char *uri, int mode, dpa_store **out, dpa_error *err)
{
    (void)mode;
    return dpa_store_pg_create(uri, out, err);
}

#else

#include "ledger/ledger_internal.h"
#include "ledger/store_pg.h"
#include <stdio.h>


static const char SCHEMA[] =
    "CREATE TABLE dpacct_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE dpacct_units ("
    " name TEXT PRIMARY KEY,"
    " filter TEXT NOT NULL,"
    " initial_state TEXT NOT NULL,"
    " state TEXT NOT NULL,"
    " requests BIGINT NOT NULL DEFAULT 0 CHECK (requests >= 0),"
    " accepted BIGINT NOT NULL DEFAULT 0 CHECK (accepted >= 0 AND accepted <= requests),"
    " created TEXT NOT NULL,"
    " chain_index BIGINT NOT NULL DEFAULT 0,"
    " chain_after BIGINT NOT NULL DEFAULT 0,"
    " chain TEXT NOT NULL DEFAULT '',"
    " tenant TEXT NOT NULL DEFAULT 'default',"
    " period_seconds BIGINT NOT NULL DEFAULT 0,"
    " lifecycle TEXT NOT NULL DEFAULT 'active',"
    " generation BIGINT NOT NULL DEFAULT 0,"
    " period_start TEXT NOT NULL DEFAULT '',"
    " filter_now TEXT NOT NULL DEFAULT '');"
    "CREATE TABLE dpacct_requests ("
    " id BIGSERIAL PRIMARY KEY,"
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
    " generation BIGINT NOT NULL DEFAULT 0,"
    " ref BIGINT NOT NULL DEFAULT 0);"
    "CREATE INDEX dpacct_requests_unit ON dpacct_requests (unit, id);"
    "CREATE UNIQUE INDEX dpacct_requests_key ON dpacct_requests (unit, idem_key);";

/* The value of a metadata key by sql (a SELECT of one value, $1 the key). */
static dpa_status meta_query(pg_store *s, const char *sql, const char *key, char **value, const char *what,
                             dpa_error *err)
{
    const dpa_pq_api *pq = &s->pq;
    const char *v[1] = {key};
    PGresult *res = dpa_pg_params(s, sql, 1, v);
    dpa_status rc = DPA_OK;
    *value = NULL;
    if (pq->PQresultStatus(res) != PGRES_TUPLES_OK) {
        rc = dpa_pg_fail(s, res, err, what);
    } else if (pq->PQntuples(res) == 1) {
        *value = dpa_pg_dup_val(pq, res, 0, 0);
        if (!*value)
            rc = dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
    }
    pq->PQclear(res);
    return rc;
}

static dpa_status pg_get_meta(dpa_store *b, const char *key, char **value, dpa_error *err)
{
    return meta_query((pg_store *)b, "SELECT value FROM dpacct_meta WHERE key = $1", key, value,
                      "cannot read metadata", err);
}

static dpa_status pg_set_meta(dpa_store *b, const char *key, const char *value, dpa_error *err)
{
    pg_store *s = (pg_store *)b;
    const dpa_pq_api *pq = &s->pq;
    const char *v[2] = {key, value};
    PGresult *res = dpa_pg_params(s, "INSERT INTO dpacct_meta (key, value) VALUES ($1, $2) "
                                 "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value", 2, v);
    dpa_status rc = DPA_OK;
    if (pq->PQresultStatus(res) != PGRES_COMMAND_OK)
        rc = dpa_pg_fail(s, res, err, "cannot write metadata");
    pq->PQclear(res);
    return rc;
}

#define UNIT_COLS "name, filter, initial_state, state, requests, accepted, created, chain_index, chain_after, chain, " \
                  "tenant, period_seconds, lifecycle, generation, period_start, filter_now"
#define UNIT_NCOLS 16

static int read_unit(const dpa_pq_api *pq, PGresult *res, int row, dpa_store_unit *u)
{
    memset(u, 0, sizeof *u);
    u->name = dpa_pg_dup_val(pq, res, row, 0);
    u->filter = dpa_pg_dup_val(pq, res, row, 1);
    u->initial_state = dpa_pg_dup_val(pq, res, row, 2);
    u->state = dpa_pg_dup_val(pq, res, row, 3);
    u->requests = strtoll(pq->PQgetvalue(res, row, 4), NULL, 10);
    u->accepted = strtoll(pq->PQgetvalue(res, row, 5), NULL, 10);
    u->created = dpa_pg_dup_val(pq, res, row, 6);
    u->chain_index = strtoll(pq->PQgetvalue(res, row, 7), NULL, 10);
    u->chain_after = strtoll(pq->PQgetvalue(res, row, 8), NULL, 10);
    u->chain = dpa_pg_dup_val(pq, res, row, 9);
    u->tenant = dpa_pg_dup_val(pq, res, row, 10);
    u->period_seconds = strtoll(pq->PQgetvalue(res, row, 11), NULL, 10);
    u->lifecycle = dpa_pg_dup_val(pq, res, row, 12);
    u->generation = strtoll(pq->PQgetvalue(res, row, 13), NULL, 10);
    u->period_start = dpa_pg_dup_val(pq, res, row, 14);
    u->filter_now = dpa_pg_dup_val(pq, res, row, 15);
    if (!u->name || !u->filter || !u->initial_state || !u->state || !u->created || !u->chain || !u->tenant ||
        !u->lifecycle || !u->period_start || !u->filter_now) {
        dpa_store_unit_clear(u);
        return -1;
    }
    return 0;
}

static dpa_status pg_get_unit(dpa_store *b, const char *name, int lock, dpa_store_unit *out,
                              int *found, dpa_error *err)
{
    pg_store *s = (pg_store *)b;
    const dpa_pq_api *pq = &s->pq;
    const char *v[1] = {name};
    PGresult *res = dpa_pg_params(s, lock ? "SELECT " UNIT_COLS " FROM dpacct_units WHERE name = $1 FOR UPDATE"
                                      : "SELECT " UNIT_COLS " FROM dpacct_units WHERE name = $1", 1, v);
    dpa_status rc = DPA_OK;
    memset(out, 0, sizeof *out);
    *found = 0;
    if (pq->PQresultStatus(res) != PGRES_TUPLES_OK) {
        rc = dpa_pg_fail(s, res, err, "cannot read a unit");
    } else if (pq->PQntuples(res) == 1) {
        if (read_unit(pq, res, 0, out))
            rc = dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
        else
            *found = 1;
    }
    pq->PQclear(res);
    return rc;
}

static dpa_status pg_insert_unit(dpa_store *b, const dpa_store_unit *u, dpa_error *err)
{
    pg_store *s = (pg_store *)b;
    const dpa_pq_api *pq = &s->pq;
    char req[32], acc[32], idx[32], after[32], per[32], gen[32];
    const char *v[16];
    PGresult *res;
    dpa_status rc = DPA_OK;
    snprintf(per, sizeof per, "%lld", u->period_seconds);
    snprintf(gen, sizeof gen, "%lld", u->generation);
    v[10] = u->tenant ? u->tenant : "default"; v[11] = per; v[12] = u->lifecycle ? u->lifecycle : "active";
    v[13] = gen; v[14] = u->period_start ? u->period_start : ""; v[15] = u->filter_now ? u->filter_now : "";
    snprintf(req, sizeof req, "%lld", u->requests);
    snprintf(acc, sizeof acc, "%lld", u->accepted);
    snprintf(idx, sizeof idx, "%lld", u->chain_index);
    snprintf(after, sizeof after, "%lld", u->chain_after);
    v[0] = u->name; v[1] = u->filter; v[2] = u->initial_state; v[3] = u->state;
    v[4] = req; v[5] = acc; v[6] = u->created; v[7] = idx; v[8] = after; v[9] = u->chain ? u->chain : "";
    res = dpa_pg_params(s, "INSERT INTO dpacct_units (" UNIT_COLS ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, "
                       "$11, $12, $13, $14, $15, $16) ON CONFLICT (name) DO NOTHING", 16, v);
    if (pq->PQresultStatus(res) != PGRES_COMMAND_OK)
        rc = dpa_pg_fail(s, res, err, "cannot add a unit");
    else if (strcmp(pq->PQcmdTuples(res), "1"))
        rc = dpa_error_set(err, DPA_EINVAL, "ledger: unit \"%s\" already exists", u->name);
    pq->PQclear(res);
    return rc;
}

static dpa_status pg_update_unit(dpa_store *b, const dpa_store_unit *u, dpa_error *err)
{
    pg_store *s = (pg_store *)b;
    const dpa_pq_api *pq = &s->pq;
    char req[32], acc[32], gen[32];
    const char *v[8];
    PGresult *res;
    dpa_status rc = DPA_OK;
    snprintf(req, sizeof req, "%lld", u->requests);
    snprintf(acc, sizeof acc, "%lld", u->accepted);
    snprintf(gen, sizeof gen, "%lld", u->generation);
    v[0] = u->name; v[1] = u->state; v[2] = req; v[3] = acc;
    v[4] = u->lifecycle ? u->lifecycle : "active"; v[5] = gen; v[6] = u->period_start ? u->period_start : "";
    v[7] = u->filter_now ? u->filter_now : "";
    res = dpa_pg_params(s, "UPDATE dpacct_units SET state = $2, requests = $3, accepted = $4, lifecycle = $5, "
                       "generation = $6, period_start = $7, filter_now = $8 WHERE name = $1", 8, v);
    if (pq->PQresultStatus(res) != PGRES_COMMAND_OK)
        rc = dpa_pg_fail(s, res, err, "cannot update a unit");
    else if (strcmp(pq->PQcmdTuples(res), "1"))
        rc = dpa_error_set(err, DPA_ESTORAGE, "ledger: unit \"%s\" vanished during a request", u->name);
    pq->PQclear(res);
    return rc;
}

static dpa_status pg_append_request(dpa_store *b, dpa_store_request *r, dpa_error *err)
{
    pg_store *s = (pg_store *)b;
    const dpa_pq_api *pq = &s->pq;
    char idbuf[32], gen[32], ref[32];
    const char *v[14];
    PGresult *res;
    dpa_status rc = DPA_OK;
    int with_id = r->id > 0;
    v[0] = r->unit; v[1] = r->time; v[2] = r->spec; v[3] = r->accepted ? "accepted" : "rejected";
    v[4] = r->reason ? r->reason : ""; v[5] = r->state_before; v[6] = r->state_after;
    v[7] = r->chain ? r->chain : "";
    snprintf(gen, sizeof gen, "%lld", r->generation);
    snprintf(ref, sizeof ref, "%lld", r->ref);
    v[8] = r->kind ? r->kind : "request"; v[9] = r->actor ? r->actor : "local";
    v[10] = r->idem_key && *r->idem_key ? r->idem_key : NULL; v[11] = gen; v[12] = ref;
    snprintf(idbuf, sizeof idbuf, "%lld", r->id);
    v[13] = idbuf;
    res = with_id
              ? dpa_pg_params(s, "INSERT INTO dpacct_requests (unit, time, spec, decision, reason, state_before, "
                             "state_after, chain, kind, actor, idem_key, generation, ref, id) VALUES ($1, $2, $3, "
                             "$4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id", 14, v)
              : dpa_pg_params(s, "INSERT INTO dpacct_requests (unit, time, spec, decision, reason, state_before, "
                             "state_after, chain, kind, actor, idem_key, generation, ref) VALUES ($1, $2, $3, $4, "
                             "$5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING id", 13, v);
    if (pq->PQresultStatus(res) != PGRES_TUPLES_OK || pq->PQntuples(res) != 1)
        rc = !strcmp(dpa_pg_sqlstate(pq, res), "23505") && v[10]
                 ? dpa_error_set(err, DPA_EINVAL, "ledger: idempotency key already used for unit \"%s\"", r->unit)
                 : dpa_pg_fail(s, res, err, "cannot record the request");
    else
        r->id = strtoll(pq->PQgetvalue(res, 0, 0), NULL, 10);
    pq->PQclear(res);
    /* ids come from the chain's head (chain_store.c), not from the column's
     * sequence, which therefore needs no advancing after explicit ids */
    return rc;
}

/* Rows of a SELECT one at a time (single-row mode: a long history is not
 * loaded into memory at once).  row(ctx, res) returns non-zero to stop; the
 * remaining rows are then drained. */
static dpa_status each_row(pg_store *s, const char *sql, int n, const char *const *vals,
                           int (*row)(void *ctx, PGresult *res), void *ctx, const char *what,
                           dpa_error *err)
{
    const dpa_pq_api *pq = &s->pq;
    PGresult *res;
    dpa_status rc = DPA_OK;
    int stop = 0;
    if (!pq->PQsendQueryParams(s->conn, sql, n, NULL, vals, NULL, NULL, 0) || !pq->PQsetSingleRowMode(s->conn))
        return dpa_pg_fail(s, NULL, err, what);
    while ((res = pq->PQgetResult(s->conn)) != NULL) {
        ExecStatusType st = pq->PQresultStatus(res);
        if (st == PGRES_SINGLE_TUPLE) {
            if (!stop && rc == DPA_OK)
                stop = row(ctx, res);
        } else if (st != PGRES_TUPLES_OK && rc == DPA_OK) {
            rc = dpa_pg_fail(s, res, err, what);
        }
        pq->PQclear(res);
    }
    return rc;
}

typedef struct unit_iter {
    const dpa_pq_api *pq;
    dpa_store_unit_fn fn;
    void *ctx;
    int oom;
} unit_iter;

static int unit_row(void *vctx, PGresult *res)
{
    unit_iter *it = vctx;
    const dpa_pq_api *pq = it->pq;
    dpa_store_unit u;
    int stop;
    if (read_unit(pq, res, 0, &u)) {
        it->oom = 1;
        return 1;
    }
    stop = it->fn(it->ctx, &u);
    dpa_store_unit_clear(&u);
    return stop;
}

static dpa_status pg_each_unit(dpa_store *b, const char *name, dpa_store_unit_fn fn, void *ctx,
                               dpa_error *err)
{
    pg_store *s = (pg_store *)b;
    const dpa_pq_api *pq = &s->pq;
    unit_iter it = {pq, fn, ctx, 0};
    const char *v[1] = {name};
    dpa_status rc = each_row(s, name ? "SELECT " UNIT_COLS " FROM dpacct_units WHERE name = $1"
                                     : "SELECT " UNIT_COLS " FROM dpacct_units ORDER BY name",
                             name ? 1 : 0, name ? v : NULL, unit_row, &it, "cannot read the units", err);
    if (rc == DPA_OK && it.oom)
        rc = dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
    return rc;
}

#define REQ_COLS "id, unit, time, spec, decision, reason, state_before, state_after, chain, kind, actor, " \
                 "idem_key, generation, ref"

typedef struct req_iter {
    const dpa_pq_api *pq;
    dpa_store_request_fn fn;
    void *ctx;
    int oom;
} req_iter;

static int read_request(const dpa_pq_api *pq, PGresult *res, dpa_store_request *r)
{
    memset(r, 0, sizeof *r);
    r->id = strtoll(pq->PQgetvalue(res, 0, 0), NULL, 10);
    r->unit = dpa_pg_dup_val(pq, res, 0, 1);
    r->time = dpa_pg_dup_val(pq, res, 0, 2);
    r->spec = dpa_pg_dup_val(pq, res, 0, 3);
    r->accepted = !strcmp(pq->PQgetvalue(res, 0, 4), "accepted");
    r->reason = dpa_pg_dup_val(pq, res, 0, 5);
    r->state_before = dpa_pg_dup_val(pq, res, 0, 6);
    r->state_after = dpa_pg_dup_val(pq, res, 0, 7);
    r->chain = dpa_pg_dup_val(pq, res, 0, 8);
    r->kind = dpa_pg_dup_val(pq, res, 0, 9);
    r->actor = dpa_pg_dup_val(pq, res, 0, 10);
    r->idem_key = pq->PQgetisnull(res, 0, 11) ? NULL : dpa_pg_dup_val(pq, res, 0, 11);
    r->generation = strtoll(pq->PQgetvalue(res, 0, 12), NULL, 10);
    r->ref = strtoll(pq->PQgetvalue(res, 0, 13), NULL, 10);
    if (!r->unit || !r->time || !r->spec || !r->reason || !r->state_before || !r->state_after || !r->chain ||
        !r->kind || !r->actor || (!pq->PQgetisnull(res, 0, 11) && !r->idem_key)) {
        dpa_store_request_clear(r);
        return -1;
    }
    return 0;
}

static int request_row(void *vctx, PGresult *res)
{
    req_iter *it = vctx;
    const dpa_pq_api *pq = it->pq;
    dpa_store_request r;
    int stop;
    if (read_request(pq, res, &r)) {
        it->oom = 1;
        return 1;
    }
    stop = it->fn(it->ctx, &r);
    dpa_store_request_clear(&r);
    return stop;
}

static dpa_status pg_each_request(dpa_store *b, const char *unit, dpa_store_request_fn fn,
                                  void *ctx, dpa_error *err)
{
    pg_store *s = (pg_store *)b;
    const dpa_pq_api *pq = &s->pq;
    req_iter it = {pq, fn, ctx, 0};
    const char *v[1] = {unit};
    dpa_status rc = each_row(s, unit ? "SELECT " REQ_COLS " FROM dpacct_requests WHERE unit = $1 ORDER BY id"
                                     : "SELECT " REQ_COLS " FROM dpacct_requests ORDER BY id",
                             unit ? 1 : 0, unit ? v : NULL, request_row, &it, "cannot read the history", err);
    if (rc == DPA_OK && it.oom)
        rc = dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
    return rc;
}

static dpa_status pg_get_request(dpa_store *b, const char *unit, long long id, const char *key,
                                 dpa_store_request *out, int *found, dpa_error *err)
{
    pg_store *s = (pg_store *)b;
    const dpa_pq_api *pq = &s->pq;
    char idbuf[32];
    const char *v[2];
    PGresult *res;
    dpa_status rc = DPA_OK;
    snprintf(idbuf, sizeof idbuf, "%lld", id);
    v[0] = unit;
    v[1] = key ? key : idbuf;
    res = dpa_pg_params(s, key ? "SELECT " REQ_COLS " FROM dpacct_requests WHERE unit = $1 AND idem_key = $2"
                           : "SELECT " REQ_COLS " FROM dpacct_requests WHERE unit = $1 AND id = $2::bigint", 2, v);
    memset(out, 0, sizeof *out);
    *found = 0;
    if (pq->PQresultStatus(res) != PGRES_TUPLES_OK)
        rc = dpa_pg_fail(s, res, err, "cannot read the history");
    else if (pq->PQntuples(res) == 1) {
        if (read_request(pq, res, out))
            rc = dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
        else
            *found = 1;
    }
    pq->PQclear(res);
    return rc;
}

typedef struct meta_iter {
    const dpa_pq_api *pq;
    int (*fn)(void *, const char *, const char *);
    void *ctx;
} meta_iter;

static int meta_row(void *vctx, PGresult *res)
{
    meta_iter *it = vctx;
    return it->fn(it->ctx, it->pq->PQgetvalue(res, 0, 0), it->pq->PQgetvalue(res, 0, 1));
}

static dpa_status pg_each_meta(dpa_store *b, const char *prefix, int (*fn)(void *, const char *, const char *),
                               void *ctx, dpa_error *err)
{
    pg_store *s = (pg_store *)b;
    meta_iter it = {&s->pq, fn, ctx};
    const char *v[1] = {prefix};
    return each_row(s, "SELECT key, value FROM dpacct_meta WHERE left(key, length($1)) = $1 ORDER BY key", 1, v,
                    meta_row, &it, "cannot read the metadata", err);
}

static dpa_status pg_lock_meta(dpa_store *b, const char *key, char **value, dpa_error *err)
{
    return meta_query((pg_store *)b, "SELECT value FROM dpacct_meta WHERE key = $1 FOR UPDATE", key, value,
                      "cannot lock the chain's head", err);
}

static dpa_status pg_upgrade_tables(dpa_store *b, int from, dpa_error *err)
{
    pg_store *s = (pg_store *)b;
    dpa_status rc = dpa_pg_cmd(s, "LOCK TABLE dpacct_meta, dpacct_units, dpacct_requests IN EXCLUSIVE MODE",
                           "cannot lock the tables", err);
    for (size_t i = 0; from < 2 && rc == DPA_OK && i < sizeof DPA_STORE_UPGRADE_SQL / sizeof *DPA_STORE_UPGRADE_SQL; i++)
        rc = dpa_pg_cmd(s, DPA_STORE_UPGRADE_SQL[i], "cannot upgrade the tables", err);
    /* format 3 has no foreign key from the entries to the units (tenant and
     * token entries have the unit "") */
    if (rc == DPA_OK)
        rc = dpa_pg_cmd(s, "ALTER TABLE dpacct_requests DROP CONSTRAINT IF EXISTS dpacct_requests_unit_fkey",
                    "cannot upgrade the tables", err);
    for (size_t i = 0; rc == DPA_OK && i < DPA_STORE_UPGRADE3_N; i++) {
        const char *q = DPA_STORE_UPGRADE3_SQL[i], *at = strstr(q, "ADD COLUMN ");
        char sql[300];
        if (at) /* a column already there is kept */
            snprintf(sql, sizeof sql, "%.*sADD COLUMN IF NOT EXISTS %s", (int)(at - q), q, at + 11);
        else
            snprintf(sql, sizeof sql, "%s", q);
        rc = dpa_pg_cmd(s, sql, "cannot upgrade the tables", err);
    }
    return rc;
}

static dpa_status pg_delete_all(dpa_store *b, dpa_error *err)
{
    return dpa_pg_cmd((pg_store *)b, "DELETE FROM dpacct_requests; DELETE FROM dpacct_units",
                  "cannot rewrite the tables", err);
}

/* ---- the decision path: one statement to read, one to commit ---- */

/* The unit and the chain's head in one statement (one snapshot). */
static const char SNAPSHOT_SQL[] =
    "SELECT " UNIT_COLS ", (SELECT value FROM dpacct_meta WHERE key = 'chain_head') FROM dpacct_units "
    "WHERE name = $1";

/* A decision's commit, one statement in autocommit (its own transaction,
 * committed and flushed before the answer: synchronous_commit = on).  u
 * locks the unit, then h the head (h waits for u: the order of every
 * writer); FOR UPDATE waits for a transaction holding the row and then
 * reads its latest committed version, so ok holds a row only if both are
 * still as the decision saw them.  The writes all depend on ok: all three
 * happen, or none.  The answer: rows written (3 or 0), whether the unit is
 * unchanged, the current head.
 * $1 unit, $2 requests, $3 state (before), $4 filter, $5 head before,
 * $6 head after, $7 id, $8 time, $9 spec, $10 decision, $11 reason,
 * $12 state after, $13 link, $14 accepted (0 or 1), $15 generation, $16 actor, $17 idempotency key,
 * $18 kind ("request" / "reserve").  The unit must also be active and of that generation;
 * $4 is the configuration in force (filter_now after a top-up). */
static const char COMMIT_SQL[] =
    "WITH u AS (SELECT requests, state, CASE WHEN filter_now = '' THEN filter ELSE filter_now END AS filter,"
    "  generation, lifecycle FROM dpacct_units WHERE name = $1::text FOR UPDATE),"
    " h AS (SELECT value FROM dpacct_meta WHERE key = 'chain_head' AND (SELECT count(*) FROM u) >= 0"
    "  FOR UPDATE),"
    " ok AS (SELECT 1 FROM u, h WHERE u.requests = $2::bigint AND u.state = $3::text AND u.filter = $4::text"
    "  AND u.generation = $15::bigint AND u.lifecycle = 'active' AND h.value = $5::text),"
    " wr AS (INSERT INTO dpacct_requests (id, unit, time, spec, decision, reason, state_before, state_after,"
    "  chain, generation, actor, idem_key, kind) SELECT $7::bigint, $1::text, $8::text, $9::text, $10::text,"
    "  $11::text, $3::text, $12::text, $13::text, $15::bigint, $16::text, $17::text, $18::text FROM ok RETURNING 1),"
    " wu AS (UPDATE dpacct_units SET state = $12::text, requests = $2::bigint + 1,"
    "  accepted = accepted + $14::bigint WHERE name = $1::text AND EXISTS (SELECT 1 FROM ok) RETURNING 1),"
    " wh AS (UPDATE dpacct_meta SET value = $6::text WHERE key = 'chain_head' AND EXISTS (SELECT 1 FROM ok)"
    "  RETURNING 1)"
    " SELECT (SELECT count(*) FROM wr) + (SELECT count(*) FROM wu) + (SELECT count(*) FROM wh),"
    " (SELECT requests = $2::bigint AND state = $3::text AND filter = $4::text AND generation = $15::bigint"
    "  AND lifecycle = 'active' FROM u), (SELECT value FROM h)";

/* A lost connection: a failure without an SQLSTATE, or a bad connection. */
static int pg_lost(const dpa_pq_api *pq, PGconn *conn, PGresult *res)
{
    return pq->PQresultStatus(res) != PGRES_TUPLES_OK &&
           (pq->PQstatus(conn) == CONNECTION_BAD || !*dpa_pg_sqlstate(pq, res));
}

/* The two statements, prepared once per session (the server plans them
 * once; each use sends only the parameters). */
static PGresult *pg_prepare(pg_store *s)
{
    const dpa_pq_api *pq = &s->pq;
    PGresult *res;
    if (s->prepared)
        return NULL;
    res = pq->PQprepare(s->conn, "dpacct_snapshot", SNAPSHOT_SQL, 0, NULL);
    if (pq->PQresultStatus(res) == PGRES_COMMAND_OK) {
        pq->PQclear(res);
        res = pq->PQprepare(s->conn, "dpacct_commit", COMMIT_SQL, 0, NULL);
    }
    if (pq->PQresultStatus(res) != PGRES_COMMAND_OK)
        return res;
    pq->PQclear(res);
    s->prepared = 1;
    return NULL;
}

/* Run a prepared statement of the decision path, preparing first if
 * needed.  retry = 1: a statement that changes nothing, run again once after
 * a reconnection if the connection was lost (the server restarted), so a
 * long-lived handle survives a restart.  Returns the result (NULL only
 * when the connection is lost: dpa_pg_fail reports the connection's error). */
static PGresult *pg_run(pg_store *s, const char *name, int n, const char *const *vals, int retry)
{
    const dpa_pq_api *pq = &s->pq;
    for (int attempt = 0;; attempt++) {
        PGresult *res = NULL;
        dpa_error ignored;
        if (pq->PQstatus(s->conn) == CONNECTION_BAD && dpa_pg_reconnect(s, &ignored) != DPA_OK)
            return NULL; /* dpa_pg_fail reports the connection's error */
        res = pg_prepare(s);
        if (!res)
            res = pq->PQexecPrepared(s->conn, name, n, vals, NULL, NULL, 0);
        if (!retry || attempt > 0 || !pg_lost(pq, s->conn, res))
            return res;
        pq->PQclear(res);
        if (dpa_pg_reconnect(s, &ignored) != DPA_OK)
            return NULL;
    }
}

static dpa_status pg_snapshot(dpa_store *b, const char *name, dpa_store_unit *out, int *found, char **head,
                              dpa_error *err)
{
    pg_store *s = (pg_store *)b;
    const dpa_pq_api *pq = &s->pq;
    const char *v[1] = {name};
    PGresult *res = pg_run(s, "dpacct_snapshot", 1, v, 1);
    dpa_status rc = DPA_OK;
    memset(out, 0, sizeof *out);
    *found = 0;
    *head = NULL;
    if (pq->PQresultStatus(res) != PGRES_TUPLES_OK) {
        rc = dpa_pg_fail(s, res, err, "cannot read a unit");
    } else if (pq->PQntuples(res) == 1) {
        if (read_unit(pq, res, 0, out) != 0 ||
            (!pq->PQgetisnull(res, 0, UNIT_NCOLS) && !(*head = dpa_pg_dup_val(pq, res, 0, UNIT_NCOLS)))) {
            dpa_store_unit_clear(out);
            rc = dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
        } else {
            *found = 1;
        }
    }
    pq->PQclear(res);
    return rc;
}

static dpa_status pg_commit_request(dpa_store *b, const dpa_store_commit *c, int *conflict, char **head,
                                    dpa_error *err)
{
    pg_store *s = (pg_store *)b;
    const dpa_pq_api *pq = &s->pq;
    const dpa_store_request *r = c->r;
    char req[32], id[32], gen[32];
    const char *v[18];
    PGresult *res;
    dpa_status rc = DPA_OK;
    *conflict = 0;
    *head = NULL;
    if (s->in_txn) /* the statement must be its own transaction */
        return dpa_error_set(err, DPA_ESTORAGE, "ledger: a request's commit inside an open transaction");
    snprintf(req, sizeof req, "%lld", c->snap->requests);
    snprintf(id, sizeof id, "%lld", r->id);
    snprintf(gen, sizeof gen, "%lld", c->snap->generation);
    v[14] = gen; v[15] = r->actor ? r->actor : "local"; v[16] = r->idem_key && *r->idem_key ? r->idem_key : NULL;
    v[17] = r->kind ? r->kind : "request";
    v[0] = c->snap->name; v[1] = req; v[2] = c->snap->state; v[3] = dpa_store_unit_config(c->snap);
    v[4] = c->head_before; v[5] = c->head_after; v[6] = id; v[7] = r->time; v[8] = r->spec;
    v[9] = r->accepted ? "accepted" : "rejected"; v[10] = r->reason ? r->reason : "";
    v[11] = r->state_after; v[12] = r->chain; v[13] = r->accepted ? "1" : "0";
    /* a write: never run twice (a lost answer may have been committed) */
    res = pg_run(s, "dpacct_commit", 18, v, 0);
    if (pq->PQresultStatus(res) != PGRES_TUPLES_OK || pq->PQntuples(res) != 1) {
        rc = dpa_pg_fail(s, res, err, pg_lost(pq, s->conn, res)
                                      ? "commit failed; the outcome is unknown (see the history)"
                                      : "commit failed (nothing was recorded)");
    } else if (!strcmp(pq->PQgetvalue(res, 0, 0), "3")) {
        *conflict = 0;
    } else if (!strcmp(pq->PQgetvalue(res, 0, 0), "0")) {
        /* the unit changed or vanished: decide again; else the head moved */
        *conflict = strcmp(pq->PQgetvalue(res, 0, 1), "t") ? 1 : 2;
        if (*conflict == 2 && !pq->PQgetisnull(res, 0, 2) && !(*head = dpa_pg_dup_val(pq, res, 0, 2)))
            rc = dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
    } else {
        rc = dpa_error_set(err, DPA_ESTORAGE, "ledger: a request's commit wrote %s of its 3 rows",
                           pq->PQgetvalue(res, 0, 0));
    }
    pq->PQclear(res);
    return rc;
}

static const dpa_store_ops PG_OPS = {
    "postgresql", dpa_pg_close, dpa_pg_begin_write, dpa_pg_begin_read, dpa_pg_commit, dpa_pg_rollback,
    pg_get_meta, pg_set_meta, pg_lock_meta, pg_upgrade_tables, pg_delete_all, pg_get_unit, pg_insert_unit, pg_update_unit,
    pg_append_request, pg_each_unit, pg_each_request, pg_snapshot, pg_commit_request,
    pg_get_request, pg_each_meta,
};

dpa_status dpa_store_pg_create(const char *uri, dpa_store **out, dpa_error *err)
{
    pg_store *s;
    const dpa_pq_api *pq;
    dpa_status rc;
    PGresult *res;
    *out = NULL;
    rc = dpa_pg_connect(uri, &PG_OPS, &s, err);
    if (rc != DPA_OK)
        return rc;
    pq = &s->pq;
    rc = dpa_pg_begin_write(&s->base, err);
    if (rc != DPA_OK) {
        dpa_pg_close(&s->base);
        return rc;
    }
    res = pq->PQexec(s->conn, SCHEMA);
    if (pq->PQresultStatus(res) != PGRES_COMMAND_OK) {
        /* duplicate_table, or a concurrent create's unique_violation in the catalog */
        if (!strcmp(dpa_pg_sqlstate(pq, res), "42P07") || !strcmp(dpa_pg_sqlstate(pq, res), "23505"))
            rc = dpa_error_set(err, DPA_EINVAL, "ledger: the database already holds a dpacct ledger "
                               "(a ledger is never overwritten)");
        else
            rc = dpa_pg_fail(s, res, err, "cannot create the tables");
    }
    pq->PQclear(res);
    if (rc == DPA_OK)
        rc = pg_set_meta(&s->base, "format", DPA_LEDGER_FORMAT, err);
    if (rc != DPA_OK) {
        dpa_pg_rollback(&s->base);
        dpa_pg_close(&s->base);
        return rc;
    }
    /* the write transaction stays open (tables included: PostgreSQL's DDL
     * is transactional): the caller fills the ledger and commits */
    *out = &s->base;
    return DPA_OK;
}

dpa_status dpa_store_pg_open(const char *uri, int mode, dpa_store **out, dpa_error *err)
{
    pg_store *s;
    const dpa_pq_api *pq;
    dpa_status rc;
    char *format = NULL;
    PGresult *res;
    *out = NULL;
    rc = dpa_pg_connect(uri, &PG_OPS, &s, err);
    if (rc != DPA_OK)
        return rc;
    pq = &s->pq;
    res = pq->PQexec(s->conn, "SELECT value FROM dpacct_meta WHERE key = 'format'");
    if (pq->PQresultStatus(res) != PGRES_TUPLES_OK) {
        rc = !strcmp(dpa_pg_sqlstate(pq, res), "42P01") /* undefined_table */
                 ? dpa_error_set(err, DPA_EINVAL, "ledger: the database holds no dpacct ledger (create "
                                 "one with `dpacct ledger init`)")
                 : dpa_pg_fail(s, res, err, "cannot read metadata");
    } else if (!(mode == DPA_STORE_UPGRADE && pq->PQntuples(res) == 1 &&
                 dpa_store_format_upgradable(pq->PQgetvalue(res, 0, 0)))) {
        rc = dpa_store_check_format(pq->PQntuples(res) == 1 ? pq->PQgetvalue(res, 0, 0) : NULL, "the database",
                                    err);
    }
    pq->PQclear(res);
    free(format);
    if (rc != DPA_OK) {
        dpa_pg_close(&s->base);
        return rc;
    }
    *out = &s->base;
    return DPA_OK;
}

#endif
