/* The budget service: the ledger (dpacct/ledger.h) behind an HTTP JSON API.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A dpa_service listens on one address (HTTP, or HTTPS with a certificate),
 * authenticates every API call by a bearer token of the ledger
 * (dpa_ledger_authenticate), and answers the routes of docs/service.md
 * (the OpenAPI document docs/openapi.json, also served at /openapi.json).
 * Requests for decisions are group-committed: the server's worker threads
 * queue them and one committer decides up to DPA_SERVICE_BATCH_MAX queued
 * requests in one dpa_ledger_request_batch call (one durable transaction).
 *
 * Lifetime: dpa_service_create (opens the ledger, checks the options),
 * dpa_service_start (binds and serves on its own threads), dpa_service_stop
 * (stops accepting, finishes the requests in flight), dpa_service_free.
 * One thread drives these four calls; the service's own threads never call
 * back except through opts.log.  The library never prints: each finished
 * HTTP request is handed to opts.log as one line "METHOD PATH STATUS
 * MICROSECONDS TOKEN_ID" (token id "-" when none; never the token).
 * Errors: DPA_EINVAL for bad options (naming the option), DPA_EIO for an
 * address that cannot be bound or TLS material that is refused, and the
 * ledger's own errors when it cannot be opened. */
#ifndef DPACCT_SERVICE_H
#define DPACCT_SERVICE_H

#include <stddef.h>
#include "dpacct/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DPA_SERVICE_BATCH_MAX 64            /* decisions per group commit */
#define DPA_SERVICE_MAX_BODY (1024 * 1024)  /* default body limit, bytes */
#define DPA_SERVICE_TIMEOUT 30              /* default idle connection timeout, seconds */
/* Default worker threads.  A worker waits while its decision is in a group
 * commit, and libmicrohttpd's thread pool gives each thread a share of the
 * connections, so two busy connections on one thread take turns: with as
 * many threads as clients a batch held about 1.4 decisions and PostgreSQL
 * ran 676 decisions/s for 16 clients; with 64 threads, 6.2 and 1427/s
 * (bench/service_load.py; docs/service.md). */
#define DPA_SERVICE_THREADS 64
/* Ledger handles the workers share for reads and snapshots (at most this
 * many, or threads if fewer; the committer has its own): what bounds the
 * server's database connections, so several servers fit one PostgreSQL. */
#define DPA_SERVICE_LEDGER_HANDLES 16

typedef struct dpa_service dpa_service;

typedef struct dpa_service_opts {
    const char *ledger;          /* the ledger's location (a path or postgresql:// URI), required */
    const void *key;             /* the hash chain's key (NULL / key_len 0: none) */
    size_t key_len;
    const char *host;            /* address to bind (IPv4 or IPv6 literal); NULL: 127.0.0.1 */
    int port;                    /* 0..65535; 0: any free port (dpa_service_port tells which) */
    int threads;                 /* worker threads, 1..256; 0: DPA_SERVICE_THREADS; they share
                                  * min(threads, DPA_SERVICE_LEDGER_HANDLES) ledger handles */
    size_t max_body;             /* request body limit in bytes (larger: 413); 0: default */
    unsigned timeout_seconds;    /* idle connection timeout; 0: DPA_SERVICE_TIMEOUT */
    double decision_limit;       /* seconds per decision (dpa_ledger_set_decision_limit);
                                  * < 0: the ledger's default */
    const char *tls_cert_pem;    /* PEM text of the certificate chain and of its key: */
    const char *tls_key_pem;     /* both or neither (HTTPS when both are given) */
    const char *cors_origin;     /* NULL: no CORS headers; else this exact origin */
    const char *web_root;        /* NULL: none; else static files served under "/" */
    int metrics_auth;            /* 1: /metrics (the whole ledger's figures) needs a bearer
                                  * token of the tenant "default", any role; 0: public */
    /* one line per finished HTTP request (no newline), from the worker
     * threads (calls may run concurrently); NULL: no log */
    void (*log)(void *ctx, const char *line);
    void *log_ctx;
} dpa_service_opts;

/* Check the options and open the ledger (a handle per thread, the committer's
 * first): NULL and *err when an option is out of its domain, the TLS material is
 * incomplete, or the ledger cannot be opened.  opts and its strings are copied. */
dpa_service *dpa_service_create(const dpa_service_opts *opts, dpa_error *err);
/* Bind and serve (returns at once; the service runs on its own threads).
 * DPA_EIO if the address cannot be bound or the TLS material is refused. */
dpa_status dpa_service_start(dpa_service *s, dpa_error *err);
/* The port bound (after dpa_service_start), or -1. */
int dpa_service_port(const dpa_service *s);
/* Stop accepting connections, let the requests in flight finish (at most
 * the timeout), then stop the threads.  Idempotent; NULL-safe. */
void dpa_service_stop(dpa_service *s);
/* Stop if needed and free everything.  NULL-safe. */
void dpa_service_free(dpa_service *s);

#ifdef __cplusplus
}
#endif
#endif
