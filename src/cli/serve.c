/* dpacct serve: the budget service (dpacct/service.h) on the command line:
 * the options (getopt_long, exact names only), the key and TLS files, the
 * log of requests on standard error, and a graceful stop on SIGINT/SIGTERM.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "ledger_cli.h"
#include "dpacct/service.h"

static const char serve_help[] =
    "Usage: dpacct serve --ledger PATH|URI [--listen ADDR:PORT] [OPTIONS]\n"
    "\n"
    "The budget service: the ledger (dpacct ledger) behind an HTTP JSON API\n"
    "(docs/service.md; the OpenAPI document is served at /openapi.json).  Every\n"
    "API call carries a bearer token made by `dpacct ledger token create`; each\n"
    "finished request is logged on standard error as one line \"METHOD PATH\n"
    "STATUS MICROSECONDS TOKEN_ID\" (never the token).  Decisions are\n"
    "group-committed: up to 64 queued requests in one durable transaction.\n"
    "Several serve processes may share one PostgreSQL ledger.  Runs until\n"
    "SIGINT or SIGTERM, then finishes the requests in flight and exits 0.\n"
    "\n"
    "Options:\n"
    "  --ledger L        the ledger: an SQLite file or a postgresql:// URI (required)\n"
    "  --listen A:P      the address and port to listen on (default 127.0.0.1:8080;\n"
    "                    port 0: any free port; IPv6 as [::1]:8080)\n"
    "  --threads N       worker threads, 1..256 (default 64); they share up to 16\n"
    "                    ledger connections (the group commit has one more)\n"
    "  --tls-cert FILE   serve HTTPS with this PEM certificate (chain) ...\n"
    "  --tls-key FILE    ... and its PEM private key (both or neither)\n"
    "  --cors-origin O   answer browsers of exactly this origin (CORS headers and\n"
    "                    preflight); default: no CORS headers\n"
    "  --max-body BYTES  refuse larger request bodies with 413 (default 1048576)\n"
    "  --timeout S       close a connection idle for S seconds (default 30)\n"
    "  --key-file FILE   the secret key of the ledger's hash chain (or the\n"
    "                    environment variable DPACCT_LEDGER_KEY)\n"
    "  --time-limit S    refuse a decision that takes longer than S seconds as too\n"
    "                    costly (default 5; 0: no limit)\n"
    "  --web-root DIR    serve the static files of DIR (the dashboard) under /\n"
    "  --metrics-token   /metrics answers only a bearer token of the tenant\n"
    "                    \"default\" (any role); default: no token needed\n"
    "  -h, --help        print this help and exit\n"
    "\n"
    "On start it prints \"dpacct serve: listening on URL\" on standard output.\n"
    "Exit status: 0 stopped by a signal, 2 bad options, 1 failure (the ledger\n"
    "cannot be opened, the address cannot be bound).\n"
    "\n"
    "Example:\n"
    "  dpacct ledger init budgets.db --filter gdp-residue --mu 1 --unit alice\n"
    "  dpacct ledger token create budgets.db --tenant default --role admin\n"
    "  dpacct serve --ledger budgets.db --listen 127.0.0.1:8080\n";

void cli_print_serve_help(void)
{
    fputs(serve_help, stdout);
}

static int serve_usage(const char *fmt, const char *arg)
{
    char msg[600];
    snprintf(msg, sizeof msg, fmt, arg);
    cli_fail(CLI_EXIT_USAGE, "serve: %s", msg);
    fputs("Try 'dpacct serve --help'.\n", stderr);
    return CLI_EXIT_USAGE;
}

enum { S_LEDGER = 256, S_LISTEN, S_THREADS, S_TLS_CERT, S_TLS_KEY, S_CORS, S_MAX_BODY, S_TIMEOUT, S_KEY_FILE,
       S_TIME_LIMIT, S_WEB_ROOT, S_METRICS_TOKEN, S_HELP };

static const struct option serve_options[] = {
    {"ledger", required_argument, NULL, S_LEDGER},
    {"listen", required_argument, NULL, S_LISTEN},
    {"threads", required_argument, NULL, S_THREADS},
    {"tls-cert", required_argument, NULL, S_TLS_CERT},
    {"tls-key", required_argument, NULL, S_TLS_KEY},
    {"cors-origin", required_argument, NULL, S_CORS},
    {"max-body", required_argument, NULL, S_MAX_BODY},
    {"timeout", required_argument, NULL, S_TIMEOUT},
    {"key-file", required_argument, NULL, S_KEY_FILE},
    {"time-limit", required_argument, NULL, S_TIME_LIMIT},
    {"web-root", required_argument, NULL, S_WEB_ROOT},
    {"metrics-token", no_argument, NULL, S_METRICS_TOKEN},
    {"help", no_argument, NULL, S_HELP},
    {NULL, 0, NULL, 0},
};

/* An integer option in [lo, hi]; 0 if it is not one. */
static int int_option(const char *v, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    *out = strtoll(v, &end, 10);
    return end != v && !*end && !errno && *out >= lo && *out <= hi;
}

/* ADDR:PORT (IPv6 in brackets) into host (malloc'ed) and port; 0 if malformed. */
static int split_listen(const char *v, char **host, int *port)
{
    const char *colon;
    long long p;
    size_t n;
    if (v[0] == '[') {
        const char *close = strchr(v, ']');
        if (!close || close[1] != ':')
            return 0;
        colon = close + 1;
        v++;
        n = (size_t)(close - v);
    } else {
        colon = strrchr(v, ':');
        if (!colon)
            return 0;
        n = (size_t)(colon - v);
    }
    if (!int_option(colon + 1, 0, 65535, &p) || n == 0)
        return 0;
    *host = strndup(v, n);
    *port = (int)p;
    return *host != NULL;
}

/* The whole of a (PEM) file, malloc'ed and NUL-terminated; NULL if unreadable. */
static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t n = 0, cap = 0;
    if (!f)
        return NULL;
    for (;;) {
        if (n + 4097 > cap) {
            char *b = realloc(buf, cap = cap ? 2 * cap : 8192);
            if (!b || cap > (1 << 24)) {
                free(b ? b : buf);
                fclose(f);
                return NULL;
            }
            buf = b;
        }
        size_t got = fread(buf + n, 1, 4096, f);
        n += got;
        if (got < 4096)
            break;
    }
    fclose(f);
    buf[n] = '\0';
    return buf;
}

static void log_stderr(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "%s\n", line); /* one call: lines of concurrent requests do not mix */
}

typedef struct serve_args {
    const char *ledger, *listen, *tls_cert, *tls_key, *cors, *key_file, *web_root;
    long long threads, max_body, timeout;
    double time_limit;
    int metrics_token;
} serve_args;

static int parse(int argc, char **argv, serve_args *a)
{
    memset(a, 0, sizeof *a);
    a->listen = "127.0.0.1:8080";
    a->time_limit = -1;
    opterr = 0;
    optind = 0;
    for (;;) {
        int c = getopt_long(argc - 1, argv + 1, ":", serve_options, NULL);
        const char *v = optarg;
        char *end;
        if (c == -1)
            break;
        switch (c) {
        case S_LEDGER: a->ledger = v; break;
        case S_LISTEN: a->listen = v; break;
        case S_TLS_CERT: a->tls_cert = v; break;
        case S_TLS_KEY: a->tls_key = v; break;
        case S_CORS: a->cors = v; break;
        case S_KEY_FILE: a->key_file = v; break;
        case S_WEB_ROOT: a->web_root = v; break;
        case S_METRICS_TOKEN: a->metrics_token = 1; break;
        case S_THREADS:
            if (!int_option(v, 1, 256, &a->threads))
                return serve_usage("--threads: an integer in 1..256, got \"%s\"", v);
            break;
        case S_MAX_BODY:
            if (!int_option(v, 1, INT_MAX, &a->max_body))
                return serve_usage("--max-body: a number of bytes in 1..2147483647, got \"%s\"", v);
            break;
        case S_TIMEOUT:
            if (!int_option(v, 1, 86400, &a->timeout))
                return serve_usage("--timeout: seconds in 1..86400, got \"%s\"", v);
            break;
        case S_TIME_LIMIT:
            errno = 0;
            a->time_limit = strtod(v, &end);
            if (end == v || *end || errno || !(a->time_limit >= 0 && a->time_limit <= 1e6))
                return serve_usage("--time-limit: seconds in [0, 1e6] (0: no limit), got \"%s\"", v);
            break;
        case ':':
            return serve_usage("%s needs a value", argv[optind]);
        default:
            return serve_usage("unknown option %s", argv[optind]);
        }
    }
    if (optind + 1 < argc)
        return serve_usage("unexpected argument \"%s\"", argv[optind + 1]);
    if (!a->ledger)
        return serve_usage("%s", "--ledger is required (an SQLite file or a postgresql:// URI)");
    if (!a->tls_cert != !a->tls_key)
        return serve_usage("%s", "--tls-cert and --tls-key go together");
    return CLI_EXIT_OK;
}

int cli_run_serve(int argc, char **argv)
{
    serve_args a;
    ledger_args la;
    dpa_service_opts o = {0};
    dpa_service *s = NULL;
    dpa_error err = {0};
    unsigned char *key = NULL;
    char *host = NULL, *cert = NULL, *tls_key = NULL;
    char shown[512];
    sigset_t sigs;
    int rc, sig;
    if ((rc = parse(argc, argv, &a)) != CLI_EXIT_OK)
        return rc;
    if (!split_listen(a.listen, &host, &o.port))
        return serve_usage("--listen: ADDR:PORT (e.g. 127.0.0.1:8080 or [::1]:8080), got \"%s\"", a.listen);
    if (a.tls_cert && (!(cert = read_file(a.tls_cert)) || !(tls_key = read_file(a.tls_key)))) {
        rc = serve_usage("cannot read the TLS file \"%s\"", cert ? a.tls_key : a.tls_cert);
        goto done;
    }
    memset(&la, 0, sizeof la); /* the key as `dpacct ledger` reads it: --key-file or DPACCT_LEDGER_KEY */
    la.key_file = a.key_file;
    if ((rc = cli_ledger_key(&la, &key, &o.key_len)) != CLI_EXIT_OK)
        goto done;
    o.ledger = a.ledger;
    o.key = key;
    o.host = host;
    o.threads = (int)a.threads;
    o.max_body = (size_t)a.max_body;
    o.timeout_seconds = (unsigned)a.timeout;
    o.decision_limit = a.time_limit;
    o.tls_cert_pem = cert;
    o.tls_key_pem = tls_key;
    o.cors_origin = a.cors;
    o.web_root = a.web_root;
    o.metrics_auth = a.metrics_token;
    o.log = log_stderr;
    /* the service's threads inherit the blocked signals: only sigwait below takes them */
    sigemptyset(&sigs);
    sigaddset(&sigs, SIGINT);
    sigaddset(&sigs, SIGTERM);
    sigaddset(&sigs, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &sigs, NULL);
    s = dpa_service_create(&o, &err);
    if (!s || dpa_service_start(s, &err) != DPA_OK) {
        rc = cli_fail_lib(&err);
        goto done;
    }
    dpa_ledger_location_display(a.ledger, shown, sizeof shown);
    printf("dpacct serve: listening on %s://%s%s%s:%d (ledger %s)\n", cert ? "https" : "http",
           strchr(host, ':') ? "[" : "", host, strchr(host, ':') ? "]" : "", dpa_service_port(s), shown);
    fflush(stdout);
    sigdelset(&sigs, SIGPIPE);
    do
        rc = sigwait(&sigs, &sig);
    while (rc != 0);
    fprintf(stderr, "dpacct serve: %s: stopping (finishing the requests in flight)\n",
            sig == SIGINT ? "SIGINT" : "SIGTERM");
    dpa_service_stop(s);
    rc = CLI_EXIT_OK;
done:
    dpa_service_free(s);
    if (key)
        memset(key, 0, o.key_len);
    free(key);
    free(host);
    free(cert);
    if (tls_key)
        memset(tls_key, 0, strlen(tls_key));
    free(tls_key);
    return rc;
}
