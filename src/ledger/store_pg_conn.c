/* The PostgreSQL backend's connection: connecting (libpq loaded at run
 * time, src/ledger/pq_api.c), reconnecting after a server restart, errors
 * with the location's passwords masked, and the transactions (BEGIN at READ
 * COMMITTED for writers, REPEATABLE READ READ ONLY for readers, COMMIT
 * checked).  The tables and statements are store_pg.c's.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifdef DPA_HAVE_LIBPQ
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dpacct/ledger.h"
#include "ledger/ledger_internal.h"
#include "ledger/store_pg.h"

/* Error of a failed result (res may be NULL: connection-level failure). */
dpa_status dpa_pg_fail(pg_store *s, PGresult *res, dpa_error *err, const char *what)
{
    const dpa_pq_api *pq = &s->pq;
    const char *msg = res ? pq->PQresultErrorMessage(res) : NULL;
    char buf[400];
    size_t n;
    if (!msg || !*msg)
        msg = pq->PQerrorMessage(s->conn);
    dpa_ledger_mask_secrets(s->uri, msg && *msg ? msg : "unknown error", buf, sizeof buf);
    n = strlen(buf);
    while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
        buf[--n] = '\0';
    return dpa_error_set(err, DPA_ESTORAGE, "ledger: %s: %s", what, buf);
}

const char *dpa_pg_sqlstate(const dpa_pq_api *pq, PGresult *res)
{
    const char *c = res ? pq->PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
    return c ? c : "";
}

/* Run a command without results. */
dpa_status dpa_pg_cmd(pg_store *s, const char *sql, const char *what, dpa_error *err)
{
    const dpa_pq_api *pq = &s->pq;
    PGresult *res = pq->PQexec(s->conn, sql);
    dpa_status rc = DPA_OK;
    if (pq->PQresultStatus(res) != PGRES_COMMAND_OK)
        rc = dpa_pg_fail(s, res, err, what);
    pq->PQclear(res);
    return rc;
}

PGresult *dpa_pg_params(pg_store *s, const char *sql, int n, const char *const *vals)
{
    const dpa_pq_api *pq = &s->pq;
    return pq->PQexecParams(s->conn, sql, n, NULL, vals, NULL, NULL, 0);
}

char *dpa_pg_dup_val(const dpa_pq_api *pq, PGresult *res, int row, int col)
{
    const char *v = pq->PQgetvalue(res, row, col);
    return strdup(v ? v : "");
}

void dpa_pg_close(dpa_store *b)
{
    pg_store *s = (pg_store *)b;
    const dpa_pq_api *pq;
    if (!s)
        return;
    pq = &s->pq;
    if (s->in_txn && pq->PQstatus(s->conn) == CONNECTION_OK)
        pq->PQclear(pq->PQexec(s->conn, "ROLLBACK"));
    pq->PQfinish(s->conn);
    dpa_pq_unload(&s->pq);
    free(s->uri);
    free(s);
}

static dpa_status pg_session(pg_store *s, dpa_error *err);

/* One reconnection (PQreset) and the session settings again. */
dpa_status dpa_pg_reconnect(pg_store *s, dpa_error *err)
{
    const dpa_pq_api *pq = &s->pq;
    pq->PQreset(s->conn);
    s->prepared = 0; /* a new session has none */
    if (pq->PQstatus(s->conn) != CONNECTION_OK)
        return dpa_pg_fail(s, NULL, err, "the connection to the server is lost");
    return pg_session(s, err);
}

static dpa_status pg_begin(pg_store *s, const char *sql, dpa_error *err)
{
    const dpa_pq_api *pq = &s->pq;
    dpa_status rc;
    /* the server went away (restart, network): the connection shows it
     * only when a command fails; BEGIN changes nothing, so a failed BEGIN
     * on a broken connection is retried once after reconnecting, and a
     * long-lived handle survives a server restart */
    if (pq->PQstatus(s->conn) == CONNECTION_BAD && (rc = dpa_pg_reconnect(s, err)) != DPA_OK)
        return rc;
    {
        PGresult *res = pq->PQexec(s->conn, sql);
        /* a failure without an SQLSTATE is the connection's, not the
         * server's answer */
        int lost = pq->PQresultStatus(res) != PGRES_COMMAND_OK &&
                   (pq->PQstatus(s->conn) == CONNECTION_BAD || !*dpa_pg_sqlstate(pq, res));
        rc = pq->PQresultStatus(res) == PGRES_COMMAND_OK ? DPA_OK : dpa_pg_fail(s, res, err, "cannot start a transaction");
        pq->PQclear(res);
        if (rc != DPA_OK && lost) {
            if ((rc = dpa_pg_reconnect(s, err)) != DPA_OK)
                return rc;
            rc = dpa_pg_cmd(s, sql, "cannot start a transaction", err);
        }
    }
    if (rc == DPA_OK)
        s->in_txn = 1;
    return rc;
}

dpa_status dpa_pg_begin_write(dpa_store *b, dpa_error *err)
{
    return pg_begin((pg_store *)b, "BEGIN ISOLATION LEVEL READ COMMITTED", err);
}

dpa_status dpa_pg_begin_read(dpa_store *b, dpa_error *err)
{
    /* one snapshot for the whole read */
    return pg_begin((pg_store *)b, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", err);
}

dpa_status dpa_pg_commit(dpa_store *b, dpa_error *err)
{
    pg_store *s = (pg_store *)b;
    const dpa_pq_api *pq = &s->pq;
    PGresult *res = pq->PQexec(s->conn, "COMMIT");
    dpa_status rc = DPA_OK;
    /* COMMIT of an aborted transaction reports ROLLBACK as its command tag;
     * a COMMIT whose answer is lost (the connection dropped) may or may not
     * have been applied */
    if (pq->PQresultStatus(res) != PGRES_COMMAND_OK || strcmp(pq->PQcmdStatus(res), "COMMIT"))
        rc = pq->PQresultStatus(res) == PGRES_COMMAND_OK
                 ? dpa_error_set(err, DPA_ESTORAGE, "ledger: the transaction was rolled back")
                 : dpa_pg_fail(s, res, err, pq->PQstatus(s->conn) == CONNECTION_BAD
                                            ? "commit failed; the outcome is unknown (see the history)"
                                            : "commit failed (nothing was recorded)");
    pq->PQclear(res);
    s->in_txn = 0;
    return rc;
}

void dpa_pg_rollback(dpa_store *b)
{
    pg_store *s = (pg_store *)b;
    const dpa_pq_api *pq = &s->pq;
    if (s->in_txn)
        pq->PQclear(pq->PQexec(s->conn, "ROLLBACK"));
    s->in_txn = 0;
}

/* Session settings: durable commits whatever the server's default; quiet
 * notices.  Again after a reconnection. */
static dpa_status pg_session(pg_store *s, dpa_error *err)
{
    return dpa_pg_cmd(s, "SET synchronous_commit = on; SET client_min_messages = warning",
                  "cannot configure the session", err);
}

/* Server notices (e.g. "terminating connection due to administrator
 * command") are not the library's to print: failures reach the caller as
 * errors. */
static void quiet_notice(void *arg, const char *message)
{
    (void)arg;
    (void)message;
}

dpa_status dpa_pg_connect(const char *uri, const dpa_store_ops *ops, pg_store **out, dpa_error *err)
{
    pg_store *s = calloc(1, sizeof *s);
    const dpa_pq_api *pq;
    dpa_status rc;
    char shown[300];
    *out = NULL;
    if (!s)
        return dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
    pq = &s->pq;
    s->base.ops = ops;
    if ((rc = dpa_pq_load(&s->pq, err)) != DPA_OK) {
        free(s);
        return rc;
    }
    s->conn = pq->PQconnectdb(uri);
    if (!s->conn || pq->PQstatus(s->conn) != CONNECTION_OK) {
        char msg[300];
        size_t k;
        /* libpq's message may quote the URI or a part of it */
        dpa_ledger_mask_secrets(uri, s->conn ? pq->PQerrorMessage(s->conn) : "out of memory", msg, sizeof msg);
        k = strlen(msg);
        while (k && (msg[k - 1] == '\n' || msg[k - 1] == ' '))
            msg[--k] = '\0';
        dpa_ledger_location_display(uri, shown, sizeof shown);
        rc = dpa_error_set(err, DPA_ESTORAGE, "ledger: cannot connect to %s: %s", shown, msg);
        pq->PQfinish(s->conn);
        dpa_pq_unload(&s->pq);
        free(s);
        return rc;
    }
    pq->PQsetNoticeProcessor(s->conn, quiet_notice, NULL);
    s->uri = strdup(uri);
    rc = s->uri ? pg_session(s, err) : dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
    if (rc != DPA_OK) {
        dpa_pg_close(&s->base);
        return rc;
    }
    *out = s;
    return DPA_OK;
}

#else
/* without libpq: store_pg.c's stubs explain it */
typedef int dpa_store_pg_conn_unused;
#endif
