/* dpacct ledger benchmark: decisions per second of each privacy filter,
 * in memory (the filter alone) and durable (one SQLite transaction per
 * decision, WAL, synchronous = FULL: each decision is on disk when it
 * returns), one process, and with several processes on one unit.
 *
 * Usage: bench_ledger [-n N] [-p PROCS] [-c CASE] [-g CMD] [DIR]
 *   -n N      decisions per case for the scalar filters (default 2000; the
 *             PLD-based filters do N/20)
 *   -c CASE   only the case CASE (a filter/query id of the table; repeated
 *             runs of one case compare builds: bench/README.md)
 *   -p PROCS  processes of the concurrent case (default 4)
 *   -g CMD    PostgreSQL instead of SQLite: `CMD NAME` prints the URI of a
 *             new empty database NAME (scripts/bench-ledger.sh passes
 *             "bash tests/pg_server.sh uri DIR" of a throwaway server)
 *   DIR       where the SQLite databases go (default $TMPDIR or /tmp); the
 *             disk under it sets the durable rate (fsync latency)
 * The target: >= 1000 durable decisions per second for the scalar
 * filters on this machine.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "dpacct/dpacct.h"

typedef struct lcase {
    const char *id;
    const char *config; /* budgets large enough that every request is accepted */
    const char *spec;
    int scalar;         /* 1: a scalar filter (target 1000/s durable) */
} lcase;

static const lcase cases[] = {
    {"pure", "{\"filter\": \"pure\", \"epsilon\": 1e9}", "{\"pure\": {\"epsilon\": 0.01}}", 1},
    {"basic", "{\"filter\": \"basic\", \"epsilon\": 1e9, \"delta\": 0.5}",
     "{\"approx\": {\"epsilon\": 0.01, \"delta\": 1e-12}}", 1},
    {"rdp", "{\"filter\": \"rdp\", \"rho\": 1e9, \"order\": 8}", "{\"gaussian\": {\"sigma\": 10}}", 1},
    {"rdp-vector", "{\"filter\": \"rdp\", \"rho\": [1e9, 1e9, 1e9, 1e9, 1e9], \"order\": [2, 4, 8, 16, 32]}",
     "{\"gaussian\": {\"sigma\": 10}}", 1},
    {"zcdp", "{\"filter\": \"zcdp\", \"rho\": 1e9}", "{\"gaussian\": {\"sigma\": 10}}", 1},
    {"gdp", "{\"filter\": \"gdp\", \"mu\": 1e6}", "{\"gaussian\": {\"sigma\": 10}}", 1},
    {"gdp-residue/gaussian", "{\"filter\": \"gdp-residue\", \"mu\": 1e3}", "{\"gaussian\": {\"sigma\": 10}}", 0},
    {"gdp-residue/pure", "{\"filter\": \"gdp-residue\", \"mu\": 1e3}", "{\"pure\": {\"epsilon\": 0.1}}", 0},
    {"gdp-residue/subsampled-gaussian", "{\"filter\": \"gdp-residue\", \"mu\": 1e3}",
     "{\"poisson\": {\"rate\": 0.01, \"event\": {\"gaussian\": {\"sigma\": 1}}}}", 0},
    {"natural/gdp", "{\"filter\": \"natural\", \"mu\": 1e3}", "{\"gdp\": {\"mu\": 0.1}}", 0},
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* In-memory decisions per second (the filter alone), or -1 on error. */
static double memory_rate(const lcase *c, int n)
{
    dpa_error err;
    dpa_filter *f = dpa_filter_new_json(c->config, &err);
    dpa_spec *s = dpa_spec_from_json(c->spec, &err);
    double t0, dt;
    if (!f || !s) {
        fprintf(stderr, "%s: %s\n", c->id, err.message);
        dpa_filter_free(f);
        dpa_spec_free(s);
        return -1;
    }
    t0 = now_s();
    for (int i = 0; i < n; i++) {
        dpa_filter_decision d;
        if (dpa_filter_request(f, s, &d, &err) != DPA_OK || !d.accepted) {
            fprintf(stderr, "%s: %s\n", c->id, d.accepted ? err.message : d.reason);
            n = -1;
            break;
        }
    }
    dt = now_s() - t0;
    dpa_filter_free(f);
    dpa_spec_free(s);
    return n < 0 ? -1 : n / dt;
}

/* n durable requests at unit u of the ledger at path; 0 or -1. */
static int requests(const char *path, const lcase *c, int n)
{
    dpa_error err;
    dpa_ledger *l = dpa_ledger_open(path, &err);
    if (!l) {
        fprintf(stderr, "%s: %s\n", c->id, err.message);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        dpa_ledger_decision d;
        if (dpa_ledger_request(l, "u", c->spec, &d, &err) != DPA_OK) {
            fprintf(stderr, "%s: %s\n", c->id, err.message);
            dpa_ledger_close(l);
            return -1;
        }
        dpa_ledger_decision_clear(&d);
    }
    dpa_ledger_close(l);
    return 0;
}

static const char *pg_cmd; /* -g */

/* 1 if id names a case */
static int cases_run(const char *id)
{
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
        if (!strcmp(cases[k].id, id))
            return 1;
    return 0;
}

static int fresh_ledger(const char *dir, const lcase *c, int k, char *path, size_t np)
{
    dpa_ledger_init_opts o = {c->config, 0, NULL, 0};
    dpa_error err;
    dpa_ledger *l;
    static int serial;
    if (pg_cmd) {
        char cmd[1024];
        FILE *p;
        snprintf(cmd, sizeof cmd, "%s bench_%d_%d_%d", pg_cmd, (int)getpid(), k, ++serial);
        p = popen(cmd, "r");
        if (!p || !fgets(path, (int)np, p)) {
            fprintf(stderr, "%s: no URI from: %s\n", c->id, cmd);
            if (p)
                pclose(p);
            return -1;
        }
        pclose(p);
        path[strcspn(path, "\n")] = '\0';
    } else {
        snprintf(path, np, "%s/dpacct-bench-ledger-%d-%d.db", dir, (int)getpid(), k);
    }
    if (dpa_ledger_create(path, &o, &err) != DPA_OK) {
        fprintf(stderr, "%s: %s\n", c->id, err.message);
        return -1;
    }
    l = dpa_ledger_open(path, &err);
    if (!l || dpa_ledger_add_unit(l, "u", NULL, &err) != DPA_OK) {
        fprintf(stderr, "%s: %s\n", c->id, err.message);
        dpa_ledger_close(l);
        return -1;
    }
    dpa_ledger_close(l);
    return 0;
}

static void remove_ledger(const char *path)
{
    char p[600];
    if (pg_cmd)
        return; /* the throwaway server goes as a whole */
    unlink(path);
    snprintf(p, sizeof p, "%s-wal", path);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", path);
    unlink(p);
}

int main(int argc, char **argv)
{
    int n = 2000, procs = 4, opt, fails = 0;
    const char *only = NULL;
    const char *dir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    while ((opt = getopt(argc, argv, "n:p:c:g:h")) != -1) {
        if (opt == 'n')
            n = atoi(optarg);
        else if (opt == 'g')
            pg_cmd = optarg;
        else if (opt == 'c')
            only = optarg;
        else if (opt == 'p')
            procs = atoi(optarg);
        else {
            fprintf(stderr, "usage: bench_ledger [-n N] [-p PROCS] [-c CASE] [-g CMD] [DIR]\n");
            return opt == 'h' ? 0 : 2;
        }
    }
    if (optind < argc)
        dir = argv[optind];
    if (n < 20 || procs < 1 || procs > 64) {
        fprintf(stderr, "bench_ledger: -n >= 20 and 1 <= -p <= 64\n");
        return 2;
    }
    if (only && !cases_run(only)) {
        fprintf(stderr, "bench_ledger: no case %s\n", only);
        return 2;
    }
    printf("backend: %s\n", pg_cmd ? "PostgreSQL (throwaway local server, Unix socket)" : "SQLite (WAL, synchronous = FULL)");
    printf("%-34s %8s %14s %14s %16s  %s\n", "filter/query", "decisions", "memory /s", "durable /s",
           "durable /s", "goal");
    printf("%-34s %8s %14s %14s %16s\n", "", "", "(filter only)", "(1 process)", "");
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const lcase *c = &cases[k];
        int m = c->scalar ? n : n / 20;
        char path[512];
        double mem, dur = -1, conc = -1, t0;
        if (only && strcmp(only, c->id))
            continue;
        mem = memory_rate(c, m);
        if (mem > 0 && fresh_ledger(dir, c, (int)k, path, sizeof path) == 0) {
            t0 = now_s();
            if (requests(path, c, m) == 0)
                dur = m / (now_s() - t0);
            remove_ledger(path);
        }
        /* procs processes, m requests in all, on one unit */
        if (dur > 0 && fresh_ledger(dir, c, (int)k, path, sizeof path) == 0) {
            int each = m / procs, bad = 0;
            t0 = now_s();
            for (int p = 0; p < procs; p++) {
                pid_t pid = fork();
                if (pid == 0)
                    _exit(requests(path, c, each) == 0 ? 0 : 1);
            }
            for (int p = 0; p < procs; p++) {
                int st;
                wait(&st);
                bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
            }
            if (!bad)
                conc = each * procs / (now_s() - t0);
            remove_ledger(path);
        }
        {
            char conc_s[40];
            int pass = dur >= 1000;
            snprintf(conc_s, sizeof conc_s, "%.0f (%d procs)", conc, procs);
            printf("%-34s %8d %14.0f %14.0f %16s  %s\n", c->id, m, mem, dur, conc > 0 ? conc_s : "failed",
                   c->scalar ? (pass ? "1000/s PASS" : "1000/s FAIL") : "-");
            if (mem < 0 || dur < 0 || conc < 0 || (c->scalar && !pass))
                fails++;
        }
        fflush(stdout);
    }
    return fails ? 1 : 0;
}
