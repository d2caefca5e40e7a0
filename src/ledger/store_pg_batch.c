/* The PostgreSQL backend's batch statements: a batch's entries in one
 * multi-row INSERT and its units in one UPDATE ... FROM (VALUES ...), so a
 * group commit costs a fixed handful of round trips whatever its size.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifdef DPA_HAVE_LIBPQ
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ledger/store_pg.h"

/* SQL text with room to grow (malloc'ed; NULL once out of memory). */
typedef struct sqlbuf {
    char *p;
    size_t n, cap;
    int failed;
} sqlbuf;

static void sql_add(sqlbuf *b, const char *text)
{
    size_t k = strlen(text);
    if (b->failed)
        return;
    if (b->n + k + 1 > b->cap) {
        size_t cap = 2 * (b->n + k + 1) + 256;
        char *p = realloc(b->p, cap);
        if (!p) {
            free(b->p);
            b->p = NULL;
            b->failed = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, text, k + 1);
    b->n += k;
}

char *dpa_pg_text_array(const char *const *names, size_t n)
{
    sqlbuf b = {0};
    sql_add(&b, "{");
    for (size_t i = 0; i < n; i++) {
        sql_add(&b, i ? ",\"" : "\"");
        for (const char *c = names[i]; *c; c++) {
            char ch[3] = {0};
            ch[0] = *c == '"' || *c == '\\' ? '\\' : *c;
            ch[1] = *c == '"' || *c == '\\' ? *c : '\0';
            sql_add(&b, ch);
        }
        sql_add(&b, "\"");
    }
    sql_add(&b, "}");
    return b.p;
}

/* One row's parameters: vals[0..ncol) (num: room for three numbers' text). */
typedef void (*row_fn)(const void *row, const char **vals, char num[3][32]);

/* head, then n rows of ncol parameters ($k with casts[c]), then tail; run,
 * expecting n rows changed. */
static dpa_status batch_statement(pg_store *s, const char *head, const char *tail, int ncol,
                                  const char *const *casts, const void *const *rows, size_t n, row_fn fill,
                                  const char *what, dpa_error *err)
{
    const dpa_pq_api *pq = &s->pq;
    sqlbuf q = {0};
    const char **v = calloc(n * (size_t)ncol + 1, sizeof *v);
    char (*num)[3][32] = calloc(n + 1, sizeof *num);
    dpa_status rc = DPA_OK;
    if (!v || !num)
        rc = dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
    sql_add(&q, head);
    for (size_t i = 0; rc == DPA_OK && i < n; i++) {
        char one[40];
        fill(rows[i], v + i * (size_t)ncol, num[i]);
        sql_add(&q, i ? ", (" : "(");
        for (int c = 0; c < ncol; c++) {
            snprintf(one, sizeof one, "%s$%zu%s", c ? ", " : "", i * (size_t)ncol + (size_t)c + 1, casts[c]);
            sql_add(&q, one);
        }
        sql_add(&q, ")");
    }
    sql_add(&q, tail);
    if (rc == DPA_OK && q.failed)
        rc = dpa_error_set(err, DPA_ENOMEM, "ledger: out of memory");
    if (rc == DPA_OK) {
        PGresult *res = dpa_pg_params(s, q.p, (int)(n * (size_t)ncol), v);
        char want[32];
        snprintf(want, sizeof want, "%zu", n);
        if (pq->PQresultStatus(res) != PGRES_COMMAND_OK)
            rc = dpa_pg_fail(s, res, err, what);
        else if (strcmp(pq->PQcmdTuples(res), want))
            rc = dpa_error_set(err, DPA_ESTORAGE, "ledger: %s: %s rows of %zu", what, pq->PQcmdTuples(res), n);
        pq->PQclear(res);
    }
    free(q.p);
    free(v);
    free(num);
    return rc;
}

static void request_vals(const void *row, const char **w, char num[3][32])
{
    const dpa_store_request *r = row;
    snprintf(num[0], 32, "%lld", r->id);
    snprintf(num[1], 32, "%lld", r->generation);
    snprintf(num[2], 32, "%lld", r->ref);
    w[0] = num[0]; w[1] = r->unit; w[2] = r->time; w[3] = r->spec;
    w[4] = r->accepted ? "accepted" : "rejected"; w[5] = r->reason ? r->reason : "";
    w[6] = r->state_before; w[7] = r->state_after; w[8] = r->chain ? r->chain : "";
    w[9] = r->kind ? r->kind : "request"; w[10] = r->actor ? r->actor : "local";
    w[11] = r->idem_key && *r->idem_key ? r->idem_key : NULL;
    w[12] = num[1]; w[13] = num[2];
}

dpa_status dpa_pg_append_requests(dpa_store *b, dpa_store_request *const *r, size_t n, dpa_error *err)
{
    static const char *const casts[14] = {"::bigint", "", "", "", "", "", "", "", "", "", "", "",
                                          "::bigint", "::bigint"};
    return batch_statement((pg_store *)b,
                           "INSERT INTO dpacct_requests (id, unit, time, spec, decision, reason, state_before, "
                           "state_after, chain, kind, actor, idem_key, generation, ref) VALUES ", "", 14, casts,
                           (const void *const *)r, n, request_vals, "cannot record the batch", err);
}

static void unit_vals(const void *row, const char **w, char num[3][32])
{
    const dpa_store_unit *u = row;
    snprintf(num[0], 32, "%lld", u->requests);
    snprintf(num[1], 32, "%lld", u->accepted);
    snprintf(num[2], 32, "%lld", u->generation);
    w[0] = u->name; w[1] = u->state; w[2] = num[0]; w[3] = num[1];
    w[4] = u->lifecycle ? u->lifecycle : "active"; w[5] = num[2];
    w[6] = u->period_start ? u->period_start : ""; w[7] = u->filter_now ? u->filter_now : "";
}

dpa_status dpa_pg_update_units(dpa_store *b, dpa_store_unit *const *u, size_t n, dpa_error *err)
{
    static const char *const casts[8] = {"::text", "::text", "::bigint", "::bigint", "::text", "::bigint",
                                         "::text", "::text"};
    return batch_statement((pg_store *)b,
                           "UPDATE dpacct_units AS u SET state = v.state, requests = v.requests, accepted = "
                           "v.accepted, lifecycle = v.lifecycle, generation = v.generation, period_start = "
                           "v.period_start, filter_now = v.filter_now FROM (VALUES ",
                           ") AS v(name, state, requests, accepted, lifecycle, generation, period_start, "
                           "filter_now) WHERE u.name = v.name", 8, casts, (const void *const *)u, n, unit_vals,
                           "cannot update the batch's units", err);
}
#else
/* without libpq: store_pg.c's stubs explain it */
typedef int dpa_store_pg_batch_unused;
#endif
