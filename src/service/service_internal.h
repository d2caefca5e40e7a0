/* The budget service's internal declarations: the server object, one HTTP
 * exchange, and what crosses the files of src/service/.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPA_SERVICE_INTERNAL_H
#define DPA_SERVICE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <jansson.h>
#include "dpacct/ledger.h"
#include "dpacct/service.h"
#include "service/mhd_api.h"

/* ---- ledger_pool.c: ledger handles for the worker threads ---- */
typedef struct svc_pool {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    dpa_ledger **free_list; /* handles not lent */
    size_t nfree, n;
    dpa_ledger **all;
} svc_pool;
dpa_status svc_pool_init(svc_pool *p, size_t n, const dpa_service_opts *o, dpa_error *err);
/* Borrow a handle (waits while all are lent); give it back with svc_pool_put. */
dpa_ledger *svc_pool_get(svc_pool *p);
void svc_pool_put(svc_pool *p, dpa_ledger *l);
void svc_pool_clear(svc_pool *p);
/* Open one handle as the options say (key, decision limit). */
dpa_ledger *svc_ledger_open(const dpa_service_opts *o, dpa_error *err);

/* ---- commit_queue.c: group commit of decisions ---- */
typedef struct svc_job {
    dpa_ledger_batch_item item;
    int done;
    pthread_cond_t cv;      /* the caller's own condition variable */
    struct svc_job *next;
} svc_job;
typedef struct svc_queue {
    pthread_mutex_t mu;
    pthread_cond_t cv;      /* the committer waits here for work */
    svc_job *head, *tail;
    int stopping, started;
    pthread_t thread;
    dpa_ledger *ledger;     /* the committer's own handle */
    atomic_llong batches, batched; /* batches run, items decided in them */
} svc_queue;
dpa_status svc_queue_start(svc_queue *q, dpa_ledger *l, dpa_error *err);
/* Queue job->item and wait until the committer has decided it (its st,
 * out and err are then filled). */
void svc_queue_decide(svc_queue *q, svc_job *job);
void svc_queue_stop(svc_queue *q);

/* ---- metrics.c ---- */
enum { SVC_OUT_ACCEPTED, SVC_OUT_REJECTED, SVC_OUT_BAD_INPUT, SVC_OUT_ERROR, SVC_OUT_N };
#define SVC_LAT_BUCKETS 14
#define SVC_CODES 16
typedef struct svc_metrics {
    atomic_llong decisions[SVC_OUT_N];
    atomic_llong http[SVC_CODES]; /* by svc_code_index */
    atomic_llong lat_bucket[SVC_LAT_BUCKETS]; /* non-cumulative counts */
    atomic_llong lat_sum_ns, lat_count;
} svc_metrics;
void svc_metrics_decision(svc_metrics *m, int outcome, double seconds);
void svc_metrics_http(svc_metrics *m, unsigned code);
/* The Prometheus text (malloc'ed) with the group commit's counts of q and
 * the units' remaining budgets read on l. */
char *svc_metrics_text(svc_metrics *m, svc_queue *q, dpa_ledger *l);

/* ---- tenant_cache.c: units' tenants (immutable), kept once read ---- */
#define SVC_TCACHE_SLOTS 8192
typedef struct svc_tcache {
    pthread_mutex_t mu;
    char *unit[SVC_TCACHE_SLOTS], *tenant[SVC_TCACHE_SLOTS];
    size_t n;
} svc_tcache;
void svc_tcache_init(svc_tcache *c);
void svc_tcache_clear(svc_tcache *c);
/* 1 and the unit's tenant in tenant[0..n) if cached; 0 if not. */
int svc_tcache_get(svc_tcache *c, const char *unit, char *tenant, size_t n);
void svc_tcache_put(svc_tcache *c, const char *unit, const char *tenant);

/* ---- token_cache.c: tokens that authenticated, kept SVC_AUTH_TTL_NS ---- */
#define SVC_AUTH_SLOTS 1024
#define SVC_AUTH_TTL_NS 1000000000LL /* 1 s: the longest a revocation waits */
typedef struct svc_authcache {
    pthread_mutex_t mu;
    char *token[SVC_AUTH_SLOTS];
    dpa_ledger_identity who[SVC_AUTH_SLOTS];
    long long expires[SVC_AUTH_SLOTS]; /* CLOCK_MONOTONIC, ns */
} svc_authcache;
void svc_authcache_init(svc_authcache *c);
void svc_authcache_clear(svc_authcache *c);
/* 1 and *who if token authenticated less than SVC_AUTH_TTL_NS ago; 0 if not. */
int svc_authcache_get(svc_authcache *c, const char *token, dpa_ledger_identity *who);
void svc_authcache_put(svc_authcache *c, const char *token, const dpa_ledger_identity *who);

/* ---- the server ---- */
struct dpa_service {
    dpa_service_opts o;     /* strings owned (copied) */
    unsigned char *key;
    char *tls_cert, *tls_key;
    dpa_mhd_api mhd;        /* libmicrohttpd, loaded by dpa_service_create */
    struct MHD_Daemon *daemon;
    svc_pool pool;
    svc_queue queue;
    svc_metrics metrics;
    svc_tcache tenants;
    svc_authcache tokens;
    atomic_int active;      /* requests in flight */
    int port, stopped;
};

/* One HTTP exchange as the handlers see it. */
typedef struct svc_req {
    dpa_service *s;
    struct MHD_Connection *conn;
    const char *method;
    char *seg[8];           /* the path's segments, percent-decoded */
    int nseg;
    const char *body;       /* NUL-terminated, may be empty */
    size_t body_len;
    dpa_ledger_identity who;
    int authed;
    /* the answer */
    unsigned status;
    char *resp;             /* body (malloc'ed) */
    size_t resp_len;
    const char *content_type;
    int www_auth;           /* add WWW-Authenticate: Bearer */
    int is_static;          /* a file of the web root: add the Content-Security-Policy */
    char *extra_allow;      /* preflight */
} svc_req;

/* ---- reply.c: answers and error bodies ---- */
/* Error codes of the contract: bad_input unauthorized forbidden not_found
 * conflict frozen too_large too_costly storage internal. */
void svc_error(svc_req *r, unsigned status, const char *code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Answer status with the JSON value j (stolen; NULL: internal error). */
void svc_json(svc_req *r, unsigned status, json_t *j);
/* Answer status with a JSON text (copied). */
void svc_json_text(svc_req *r, unsigned status, const char *text);
/* The HTTP answer of a library error (status and message). */
void svc_ledger_error(svc_req *r, const dpa_error *e);
/* The JSON body parsed as an object: NULL (and the 400 answer made) if it is not. */
json_t *svc_body_object(svc_req *r);
/* s[0..n) percent-decoded ('+' as space if plus_is_space), malloc'ed;
 * NULL if it decodes to a NUL byte or on allocation failure. */
char *svc_percent_decode(const char *s, size_t n, int plus_is_space);
/* A request header (as sent) or NULL. */
const char *svc_header(svc_req *r, const char *name);
/* A query parameter, percent-decoded (malloc'ed) or NULL. */
char *svc_query(svc_req *r, const char *name);

/* ---- auth.c ---- */
/* Authenticate the bearer token with at least role; 0 (answer made: 401/403) if not. */
int svc_auth(svc_req *r, dpa_ledger *l, dpa_ledger_role role);
/* The unit exists and belongs to the caller's tenant; 0 (404 made) if not. */
int svc_unit_visible(svc_req *r, dpa_ledger *l, const char *unit);
const char *svc_role_name(dpa_ledger_role role);

/* ---- route.c ---- */
/* Split the URL into r->seg (decoded) and dispatch; always answers. */
void svc_route(svc_req *r, const char *url);

/* ---- the handlers: h_units.c, h_requests.c, h_admin.c, h_read.c, h_tenants.c ---- */
void svc_h_whoami(svc_req *r, dpa_ledger *l);
void svc_h_units_list(svc_req *r, dpa_ledger *l);
void svc_h_units_create(svc_req *r, dpa_ledger *l);
void svc_h_unit_get(svc_req *r, dpa_ledger *l, const char *unit);
/* The unit's status object (of its units page) as JSON, or NULL with *e. */
json_t *svc_unit_status(dpa_ledger *l, const char *unit, dpa_error *e);
/* Helpers of the handlers (h_units.c): the "limit" query parameter (1..1000,
 * default 100; -1 with 400 made), a body's members limited to keys (0 with
 * 400 made), its "filter" member as JSON text (*ok 0 with 400 made). */
int svc_limit(svc_req *r);
int svc_known_keys(svc_req *r, json_t *body, const char *const *keys);
char *svc_filter_member(svc_req *r, json_t *body, int required, int *ok);
void svc_h_request(svc_req *r, const char *unit);
void svc_h_settle(svc_req *r, dpa_ledger *l, const char *unit, const char *id, const char *op);
void svc_h_lifecycle(svc_req *r, dpa_ledger *l, const char *unit, const char *op);
void svc_h_topup(svc_req *r, dpa_ledger *l, const char *unit);
void svc_h_history(svc_req *r, dpa_ledger *l, const char *unit);
void svc_h_verify(svc_req *r, dpa_ledger *l);
void svc_h_export(svc_req *r, dpa_ledger *l);
/* h_tenants.c: tenants and tokens (role admin). */
void svc_h_tenants_list(svc_req *r, dpa_ledger *l);
void svc_h_tenants_create(svc_req *r, dpa_ledger *l);
void svc_h_tokens_list(svc_req *r, dpa_ledger *l);
void svc_h_tokens_create(svc_req *r, dpa_ledger *l);
void svc_h_token_revoke(svc_req *r, dpa_ledger *l, const char *id);

/* ---- openapi.c, static_files.c ---- */
const char *svc_openapi_json(void);
/* Answer a GET of a file of the web root (path: the URL path); 0 if the
 * web root has no such file (nothing answered). */
int svc_static(svc_req *r, const char *path);

#endif
