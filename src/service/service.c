/* The budget service's server object on libmicrohttpd: create (options,
 * ledger handles), start (the daemon with its thread pool, TLS, timeouts),
 * the connection callbacks (the body read up to the limit, the answer with
 * its headers, one log line per request), graceful stop, free.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "service_internal.h"

/* The state of one HTTP request across libmicrohttpd's calls. */
typedef struct conn_ctx {
    struct timespec t0;
    char *body;
    size_t len, cap;
    int too_large;
} conn_ctx;

static char *dup_or_null(const char *s, int *fail)
{
    char *d;
    if (!s)
        return NULL;
    d = strdup(s);
    if (!d)
        *fail = 1;
    return d;
}

static void free_strings(dpa_service *s)
{
    free((char *)s->o.ledger);
    free((char *)s->o.host);
    free((char *)s->o.cors_origin);
    free((char *)s->o.web_root);
    free(s->tls_cert);
    free(s->tls_key);
    if (s->key)
        memset(s->key, 0, s->o.key_len);
    free(s->key);
}

dpa_service *dpa_service_create(const dpa_service_opts *opts, dpa_error *err)
{
    dpa_service *s;
    dpa_ledger *committer;
    int fail = 0;
    if (!opts || !opts->ledger) {
        dpa_error_set(err, DPA_EINVAL, "ledger: a location is required");
        return NULL;
    }
    if (opts->port < 0 || opts->port > 65535) {
        dpa_error_set(err, DPA_EINVAL, "port: 0..65535, got %d", opts->port);
        return NULL;
    }
    if (opts->threads < 0 || opts->threads > 256) {
        dpa_error_set(err, DPA_EINVAL, "threads: 1..256, got %d", opts->threads);
        return NULL;
    }
    if (!opts->tls_cert_pem != !opts->tls_key_pem) {
        dpa_error_set(err, DPA_EINVAL, "tls: give both the certificate and its key, or neither");
        return NULL;
    }
    if (!(s = calloc(1, sizeof *s))) {
        dpa_error_set(err, DPA_ENOMEM, "out of memory");
        return NULL;
    }
    s->o = *opts;
    s->o.ledger = dup_or_null(opts->ledger, &fail);
    s->o.host = dup_or_null(opts->host ? opts->host : "127.0.0.1", &fail);
    s->o.cors_origin = dup_or_null(opts->cors_origin, &fail);
    s->o.web_root = dup_or_null(opts->web_root, &fail);
    s->tls_cert = dup_or_null(opts->tls_cert_pem, &fail);
    s->tls_key = dup_or_null(opts->tls_key_pem, &fail);
    s->o.tls_cert_pem = s->tls_cert;
    s->o.tls_key_pem = s->tls_key;
    if (opts->key && opts->key_len) {
        s->key = malloc(opts->key_len);
        if (s->key)
            memcpy(s->key, opts->key, opts->key_len);
        else
            fail = 1;
    }
    s->o.key = s->key;
    s->o.key_len = s->key ? opts->key_len : 0;
    if (!s->o.threads)
        s->o.threads = DPA_SERVICE_THREADS;
    if (!s->o.max_body)
        s->o.max_body = DPA_SERVICE_MAX_BODY;
    if (!s->o.timeout_seconds)
        s->o.timeout_seconds = DPA_SERVICE_TIMEOUT;
    s->port = -1;
    svc_tcache_init(&s->tenants);
    svc_authcache_init(&s->tokens);
    if (fail) {
        dpa_error_set(err, DPA_ENOMEM, "out of memory");
        goto fail_strings;
    }
    if (dpa_mhd_load(&s->mhd, err) != DPA_OK)
        goto fail_strings;
    if (!(committer = svc_ledger_open(&s->o, err)))
        goto fail_mhd;
    if (svc_pool_init(&s->pool, (size_t)(s->o.threads < DPA_SERVICE_LEDGER_HANDLES ? s->o.threads : DPA_SERVICE_LEDGER_HANDLES), &s->o, err) != DPA_OK)
        goto fail_committer;
    if (svc_queue_start(&s->queue, committer, err) != DPA_OK)
        goto fail_pool;
    return s;
fail_pool:
    svc_pool_clear(&s->pool);
fail_committer:
    dpa_ledger_close(committer);
fail_mhd:
    dpa_mhd_unload(&s->mhd);
fail_strings:
    svc_tcache_clear(&s->tenants);
    svc_authcache_clear(&s->tokens);
    free_strings(s);
    free(s);
    return NULL;
}

/* No unescaping by libmicrohttpd: route.c decodes each path segment (so an
 * encoded "/" stays inside its segment) and reply.c each query value. */
static size_t no_unescape(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls;
    (void)c;
    return strlen(s);
}

static long micros_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long)((t.tv_sec - t0->tv_sec) * 1000000L + (t.tv_nsec - t0->tv_nsec) / 1000);
}

static void log_line(dpa_service *s, svc_req *r, const char *url, long us)
{
    char line[1200];
    if (!s->o.log)
        return;
    /* the URL path only (libmicrohttpd leaves the query out); never a header */
    snprintf(line, sizeof line, "%s %.900s %u %ld %s", r->method, url, r->status, us,
             r->authed ? r->who.token_id : "-");
    s->o.log(s->o.log_ctx, line);
}

static enum MHD_Result send_answer(dpa_service *s, struct MHD_Connection *c, svc_req *r, conn_ctx *x,
                                   const char *url)
{
    struct MHD_Response *resp;
    enum MHD_Result ret;
    resp = s->mhd.MHD_create_response_from_buffer(r->resp_len, r->resp ? r->resp : (char *)"",
                                           r->resp ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
    if (!resp) {
        free(r->resp);
        return MHD_NO;
    }
    r->resp = NULL;
    if (r->content_type && r->status != 204)
        s->mhd.MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->content_type);
    s->mhd.MHD_add_response_header(resp, "Cache-Control", "no-store");
    s->mhd.MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    if (r->is_static) /* the dashboard has no inline script or style */
        s->mhd.MHD_add_response_header(resp, "Content-Security-Policy",
                                "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                                "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'");
    if (r->www_auth)
        s->mhd.MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    if (r->extra_allow)
        s->mhd.MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, r->extra_allow);
    if (s->o.cors_origin) {
        s->mhd.MHD_add_response_header(resp, "Access-Control-Allow-Origin", s->o.cors_origin);
        s->mhd.MHD_add_response_header(resp, "Vary", "Origin");
        if (!strcmp(r->method, "OPTIONS")) {
            s->mhd.MHD_add_response_header(resp, "Access-Control-Allow-Methods",
                                    r->extra_allow ? r->extra_allow : "GET, POST");
            s->mhd.MHD_add_response_header(resp, "Access-Control-Allow-Headers",
                                    "Authorization, Content-Type, Idempotency-Key");
            s->mhd.MHD_add_response_header(resp, "Access-Control-Max-Age", "600");
        }
    }
    ret = s->mhd.MHD_queue_response(c, r->status, resp);
    s->mhd.MHD_destroy_response(resp);
    svc_metrics_http(&s->metrics, r->status);
    log_line(s, r, url, micros_since(&x->t0));
    return ret;
}

/* Route the request (or refuse its body) and queue the answer. */
static enum MHD_Result answer(dpa_service *s, struct MHD_Connection *c, conn_ctx *x, const char *url,
                              const char *method)
{
    svc_req r;
    enum MHD_Result ret;
    int i;
    memset(&r, 0, sizeof r);
    r.s = s;
    r.conn = c;
    r.method = method;
    r.body = x->body ? x->body : "";
    r.body_len = x->len;
    if (x->too_large)
        svc_error(&r, 413, "too_large", "the body exceeds the limit of %zu bytes", s->o.max_body);
    else
        svc_route(&r, url);
    ret = send_answer(s, c, &r, x, url);
    for (i = 0; i < r.nseg; i++)
        free(r.seg[i]);
    free(r.extra_allow);
    return ret;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    dpa_service *s = cls;
    conn_ctx *x = *con_cls;
    (void)version;
    if (!x) { /* the first call: the headers only */
        const char *cl = s->mhd.MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (!(x = calloc(1, sizeof *x)))
            return MHD_NO;
        clock_gettime(CLOCK_MONOTONIC, &x->t0);
        *con_cls = x;
        atomic_fetch_add(&s->active, 1);
        if (cl && strtoull(cl, NULL, 10) > s->o.max_body) {
            /* refused before its body is read (the connection is then closed) */
            x->too_large = 1;
            return answer(s, c, x, url, method);
        }
        return MHD_YES;
    }
    if (*upload_size) { /* a piece of the body */
        size_t n = *upload_size;
        *upload_size = 0;
        if (x->too_large || x->len + n > s->o.max_body) {
            x->too_large = 1; /* the rest is read and dropped; 413 at the end */
            return MHD_YES;
        }
        if (x->len + n + 1 > x->cap) {
            size_t cap = x->cap ? x->cap : 4096;
            char *b;
            while (cap < x->len + n + 1)
                cap *= 2;
            if (!(b = realloc(x->body, cap)))
                return MHD_NO;
            x->body = b;
            x->cap = cap;
        }
        memcpy(x->body + x->len, upload, n);
        x->len += n;
        x->body[x->len] = '\0';
        return MHD_YES;
    }
    return answer(s, c, x, url, method);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode t)
{
    dpa_service *s = cls;
    conn_ctx *x = *con_cls;
    (void)c;
    (void)t;
    if (!x)
        return;
    free(x->body);
    free(x);
    *con_cls = NULL;
    atomic_fetch_sub(&s->active, 1);
}

dpa_status dpa_service_start(dpa_service *s, dpa_error *err)
{
    struct sockaddr_in a4;
    struct sockaddr_in6 a6;
    struct sockaddr *addr;
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC | MHD_USE_EPOLL;
    const union MHD_DaemonInfo *info;
    memset(&a4, 0, sizeof a4);
    memset(&a6, 0, sizeof a6);
    if (inet_pton(AF_INET, s->o.host, &a4.sin_addr) == 1) {
        a4.sin_family = AF_INET;
        a4.sin_port = htons((uint16_t)s->o.port);
        addr = (struct sockaddr *)&a4;
    } else if (inet_pton(AF_INET6, s->o.host, &a6.sin6_addr) == 1) {
        a6.sin6_family = AF_INET6;
        a6.sin6_port = htons((uint16_t)s->o.port);
        addr = (struct sockaddr *)&a6;
        flags |= MHD_USE_IPv6;
    } else
        return dpa_error_set(err, DPA_EINVAL, "listen: \"%s\" is not an IPv4 or IPv6 address", s->o.host);
    if (s->tls_cert)
        flags |= MHD_USE_TLS;
    if (s->tls_cert)
        s->daemon = s->mhd.MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR, addr,
                                     MHD_OPTION_THREAD_POOL_SIZE, (unsigned)s->o.threads,
                                     MHD_OPTION_CONNECTION_TIMEOUT, s->o.timeout_seconds,
                                     MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
                                     MHD_OPTION_UNESCAPE_CALLBACK, no_unescape, NULL,
                                     MHD_OPTION_HTTPS_MEM_CERT, s->tls_cert, MHD_OPTION_HTTPS_MEM_KEY,
                                     s->tls_key, MHD_OPTION_END);
    else
        s->daemon = s->mhd.MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR, addr,
                                     MHD_OPTION_THREAD_POOL_SIZE, (unsigned)s->o.threads,
                                     MHD_OPTION_CONNECTION_TIMEOUT, s->o.timeout_seconds,
                                     MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
                                     MHD_OPTION_UNESCAPE_CALLBACK, no_unescape, NULL, MHD_OPTION_END);
    if (!s->daemon)
        return dpa_error_set(err, DPA_EIO, "cannot listen on %s port %d%s", s->o.host, s->o.port,
                             s->tls_cert ? " (or the TLS certificate or key was refused)" : " (in use?)");
    info = s->mhd.MHD_get_daemon_info(s->daemon, MHD_DAEMON_INFO_BIND_PORT);
    s->port = info ? (int)info->port : s->o.port;
    return DPA_OK;
}

int dpa_service_port(const dpa_service *s)
{
    return s && s->daemon ? s->port : -1;
}

void dpa_service_stop(dpa_service *s)
{
    struct timespec pause = {0, 10 * 1000 * 1000};
    long waited = 0;
    MHD_socket listen_fd;
    if (!s || !s->daemon)
        return;
    /* stop accepting; the requests in flight finish (at most the timeout) */
    listen_fd = s->mhd.MHD_quiesce_daemon(s->daemon);
    while (atomic_load(&s->active) > 0 && waited < 100L * s->o.timeout_seconds) {
        nanosleep(&pause, NULL);
        waited++;
    }
    s->mhd.MHD_stop_daemon(s->daemon);
    if (listen_fd != MHD_INVALID_SOCKET) /* quiesce handed the listening socket to us */
        close(listen_fd);
    s->daemon = NULL;
}

void dpa_service_free(dpa_service *s)
{
    if (!s)
        return;
    dpa_service_stop(s);
    svc_queue_stop(&s->queue);
    svc_pool_clear(&s->pool);
    dpa_mhd_unload(&s->mhd);
    svc_tcache_clear(&s->tenants);
    svc_authcache_clear(&s->tokens);
    free_strings(s);
    free(s);
}
