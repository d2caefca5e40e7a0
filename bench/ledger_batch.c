/* dpacct ledger group-commit benchmark: durable decisions per second of
 * dpa_ledger_request_batch for batch sizes 1, 16 and 64 (one transaction,
 * one commit per batch), against dpa_ledger_request (one commit per
 * decision), on SQLite and on PostgreSQL.
 *
 * Usage: ledger_batch [-n N] [-u UNITS] [-g CMD] [DIR]
 *   -n N      decisions per case (default 2048)
 *   -u UNITS  distinct units the decisions go to, round robin (default 16:
 *             the service's concurrent clients on distinct units)
 *   -g CMD    PostgreSQL instead of SQLite: `CMD NAME` prints the URI of a
 *             new empty database NAME (bash tests/pg_server.sh uri DIR)
 *   DIR       where the SQLite databases go (default $TMPDIR or /tmp)
 * Each decision is durable when its batch returns (SQLite synchronous =
 * FULL in WAL mode; PostgreSQL synchronous_commit = on): the chain's head is
 * one row, so one commit per decision caps a ledger at the disk's fsync
 * rate, and a batch shares one fsync among its decisions.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "dpacct/dpacct.h"

static const char CONFIG[] = "{\"filter\": \"pure\", \"epsilon\": 1e9}";
static const char SPEC[] = "{\"pure\": {\"epsilon\": 0.01}}";

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A new ledger with units u0..u{units-1}: its location in loc. */
static int make_ledger(const char *pg_cmd, const char *dir, const char *name, int units, char *loc, size_t n)
{
    dpa_ledger_init_opts o = {CONFIG, 0, NULL, 0};
    dpa_error err;
    dpa_ledger *l;
    if (pg_cmd) {
        char cmd[1200];
        FILE *p;
        snprintf(cmd, sizeof cmd, "%s %s_%d", pg_cmd, name, (int)getpid());
        p = popen(cmd, "r");
        if (!p || !fgets(loc, (int)n, p)) {
            if (p)
                pclose(p);
            fprintf(stderr, "no URI from %s\n", cmd);
            return -1;
        }
        pclose(p);
        loc[strcspn(loc, "\n")] = '\0';
    } else {
        snprintf(loc, n, "%s/dpacct-batch-%d-%s.db", dir, (int)getpid(), name);
    }
    if (dpa_ledger_create(loc, &o, &err) != DPA_OK || !(l = dpa_ledger_open(loc, &err))) {
        fprintf(stderr, "create %s: %s\n", name, err.message);
        return -1;
    }
    for (int i = 0; i < units; i++) {
        char u[32];
        snprintf(u, sizeof u, "u%d", i);
        if (dpa_ledger_add_unit(l, u, NULL, &err) != DPA_OK) {
            fprintf(stderr, "add unit: %s\n", err.message);
            dpa_ledger_close(l);
            return -1;
        }
    }
    dpa_ledger_close(l);
    return 0;
}

static void drop(const char *pg_cmd, const char *loc)
{
    if (!pg_cmd) {
        char side[700];
        unlink(loc);
        snprintf(side, sizeof side, "%s-wal", loc);
        unlink(side);
        snprintf(side, sizeof side, "%s-shm", loc);
        unlink(side);
    }
}

/* Durable decisions per second with batches of `batch` (0: dpa_ledger_request). */
static double rate(const char *pg_cmd, const char *dir, int batch, int n, int units)
{
    char loc[600], name[32];
    dpa_ledger *l;
    dpa_error err;
    dpa_ledger_batch_item *it;
    char (*unit)[32];
    double t0, t;
    int done = 0;
    snprintf(name, sizeof name, "b%d", batch);
    if (make_ledger(pg_cmd, dir, name, units, loc, sizeof loc) != 0 || !(l = dpa_ledger_open(loc, &err)))
        return -1;
    it = calloc((size_t)(batch ? batch : 1), sizeof *it);
    unit = calloc((size_t)units, sizeof *unit);
    for (int i = 0; i < units; i++)
        snprintf(unit[i], sizeof unit[i], "u%d", i);
    t0 = now_s();
    while (done < n) {
        if (batch == 0) {
            dpa_ledger_decision d;
            if (dpa_ledger_request(l, unit[done % units], SPEC, &d, &err) != DPA_OK || !d.accepted) {
                fprintf(stderr, "request: %s\n", err.message);
                break;
            }
            dpa_ledger_decision_clear(&d);
            done++;
            continue;
        }
        for (int i = 0; i < batch; i++) {
            memset(&it[i], 0, sizeof it[i]);
            it[i].unit = unit[(done + i) % units];
            it[i].spec_json = SPEC;
        }
        if (dpa_ledger_request_batch(l, it, (size_t)batch, &err) != DPA_OK) {
            fprintf(stderr, "batch: %s\n", err.message);
            break;
        }
        for (int i = 0; i < batch; i++) {
            if (it[i].st != DPA_OK || !it[i].out.accepted)
                fprintf(stderr, "item: %s\n", it[i].err.message);
            dpa_ledger_decision_clear(&it[i].out);
        }
        done += batch;
    }
    t = now_s() - t0;
    {
        int ok = 0;
        char *report = NULL;
        if (dpa_ledger_verify(l, &ok, &report, &err) != DPA_OK || !ok)
            fprintf(stderr, "verify failed after the case: %s\n", report ? report : err.message);
        free(report);
    }
    dpa_ledger_close(l);
    drop(pg_cmd, loc);
    free(it);
    free(unit);
    return done ? done / t : -1;
}

int main(int argc, char **argv)
{
    int n = 2048, units = 16, opt;
    const char *pg_cmd = NULL, *dir = getenv("TMPDIR");
    static const int batches[] = {0, 1, 16, 64};
    while ((opt = getopt(argc, argv, "n:u:g:")) != -1) {
        if (opt == 'n')
            n = atoi(optarg);
        else if (opt == 'u')
            units = atoi(optarg);
        else if (opt == 'g')
            pg_cmd = optarg;
        else {
            fprintf(stderr, "usage: ledger_batch [-n N] [-u UNITS] [-g CMD] [DIR]\n");
            return 2;
        }
    }
    if (optind < argc)
        dir = argv[optind];
    if (!dir || !*dir)
        dir = "/tmp";
    if (n < 64 || units < 1) {
        fprintf(stderr, "ledger_batch: -n is at least 64 and -u at least 1\n");
        return 2;
    }
    printf("%s, %d durable decisions over %d units (pure filter)\n", pg_cmd ? "PostgreSQL" : "SQLite", n, units);
    printf("%-28s %14s\n", "mode", "decisions/s");
    for (size_t i = 0; i < sizeof batches / sizeof *batches; i++) {
        double r = rate(pg_cmd, dir, batches[i], n, units);
        char label[40];
        if (batches[i] == 0)
            snprintf(label, sizeof label, "dpa_ledger_request");
        else
            snprintf(label, sizeof label, "request_batch, batch %d", batches[i]);
        if (r < 0)
            printf("%-28s %14s\n", label, "failed");
        else
            printf("%-28s %14.0f\n", label, r);
    }
    return 0;
}
