/* Helpers of the ledger's C tests (test_ledger.c, test_ledger_tamper.c):
 * a temporary directory, the backend under test (SQLite, or PostgreSQL on a
 * throwaway server of tests/pg_server.sh), ledgers and requests that fail
 * the test on an error, and edits of the database behind the ledger's back.
 * Include after <cmocka.h> and "check.h".
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPA_TESTS_LEDGER_TESTLIB_H
#define DPA_TESTS_LEDGER_TESTLIB_H

#include <errno.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "dpacct/ledger.h"

static char tmpdir[256];

static inline void make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/dpacct-ledger-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmpdir))
        fail_msg("mkdtemp: %s", strerror(errno));
}

static inline void remove_tmpdir(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        print_error("could not remove %s\n", tmpdir);
}

static inline void path_in_tmp(char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s", tmpdir, name);
}

/* The backend under test: 0 SQLite, 1 PostgreSQL. */
static int use_pg;
static const char *pg_dir, *pg_script;

/* Run `bash pg_server.sh ARGS` and return its first output line (or fail). */
static inline void pg_run(char *out, size_t n, const char *args)
{
    char cmd[2600];
    FILE *p;
    snprintf(cmd, sizeof cmd, "bash '%s' %s", pg_script, args);
    p = popen(cmd, "r");
    if (!p)
        fail_msg("popen %s", cmd);
    if (out) {
        if (!fgets(out, (int)n, p))
            out[0] = '\0';
        out[strcspn(out, "\n")] = '\0';
    }
    while (fgetc(p) != EOF)
        ;
    if (pclose(p) != 0)
        fail_msg("%s failed", cmd);
}

/* A fresh ledger location: a path in the test's directory (SQLite) or the
 * URI of a new empty database (PostgreSQL). */
static inline void new_location(char *buf, size_t n, const char *name)
{
    static int counter;
    char args[600];
    if (!use_pg) {
        path_in_tmp(buf, n, name);
        return;
    }
    snprintf(args, sizeof args, "uri '%s' dpacct_%d_%d", pg_dir, (int)getpid(), ++counter);
    pg_run(buf, n, args);
    if (strncmp(buf, "postgresql://", 13))
        fail_msg("no URI from pg_server.sh: %s", buf);
}

static inline void create_ledger(const char *path, const char *config, int auto_units)
{
    dpa_ledger_init_opts o = {config, auto_units, NULL, 0};
    dpa_error err;
    if (dpa_ledger_create(path, &o, &err) != DPA_OK)
        fail_msg("create %s: %s", path, err.message);
}

static inline dpa_ledger *open_ledger(const char *path)
{
    dpa_error err;
    dpa_ledger *l = dpa_ledger_open(path, &err);
    if (!l)
        fail_msg("open %s: %s", path, err.message);
    return l;
}

/* Number of recorded requests (history of every unit). */
static inline size_t history_length(dpa_ledger *l)
{
    dpa_error err;
    char *json;
    json_t *arr;
    size_t n;
    if (dpa_ledger_history_json(l, NULL, &json, &err) != DPA_OK)
        fail_msg("history: %s", err.message);
    arr = json_loads(json, 0, NULL);
    free(json);
    if (!json_is_array(arr))
        fail_msg("history is not a JSON array");
    n = json_array_size(arr);
    json_decref(arr);
    return n;
}

static inline int verify_ok(dpa_ledger *l, char **report_out)
{
    dpa_error err;
    char *report;
    int ok;
    if (dpa_ledger_verify(l, &ok, &report, &err) != DPA_OK)
        fail_msg("verify: %s", err.message);
    if (report_out)
        *report_out = report;
    else
        free(report);
    return ok;
}

/* 1 accepted, 0 rejected; fails the test on an error. */
static inline int request(dpa_ledger *l, const char *unit, const char *spec)
{
    dpa_ledger_decision d;
    dpa_error err;
    int acc;
    if (dpa_ledger_request(l, unit, spec, &d, &err) != DPA_OK)
        fail_msg("request %s for %s: %s", spec, unit, err.message);
    acc = d.accepted;
    dpa_ledger_decision_clear(&d);
    return acc;
}

/* Change the database behind the ledger's back. */
static inline void tamper(const char *path, const char *sql)
{
    sqlite3 *db;
    char *msg = NULL;
    if (use_pg) {
        char args[1200];
        snprintf(args, sizeof args, "sql '%s' '%s' \"%s\"", pg_dir, path, sql);
        pg_run(NULL, 0, args);
        return;
    }
    if (sqlite3_open(path, &db) != SQLITE_OK)
        fail_msg("sqlite3_open %s", path);
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("tamper %s: %s", sql, msg);
    sqlite3_close(db);
}

#endif
