/* The privacy-budget ledger on each storage backend: creation, requests,
 * bad input leaving the ledger unchanged, verify (and tampering it
 * detects), concurrency of many processes, and SIGKILL of a writer at random
 * points; on PostgreSQL also an immediate-mode server stop mid-run.
 *
 * The suite runs on SQLite, and again on PostgreSQL when DPA_TEST_PG_DIR
 * names a running throwaway server of tests/pg_server.sh (the CTest fixture
 * of CMakeLists.txt starts one; DPA_TEST_PG_SCRIPT is the script's path).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <setjmp.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "check.h"
#include "dpacct/filter.h"
#include "dpacct/ledger.h"
#include "ledger_testlib.h"
#include "ledger/ledger_internal.h" /* the handle's decision thread (test_cheap_decisions_here) */


static void test_create_open(void **state)
{
    char path[300], junk[300];
    dpa_error err;
    dpa_ledger_init_opts o = {"{\"filter\": \"pure\", \"epsilon\": 1}", 0, NULL, 0};
    dpa_ledger_init_opts bad = {"{\"filter\": \"pure\", \"epsilon\": -1}", 0, NULL, 0};
    dpa_ledger_init_opts unknown = {"{\"filter\": \"nonsense\"}", 0, NULL, 0};
    FILE *f;
    (void)state;
    make_tmpdir();
    new_location(path, sizeof path, "a.db");
    CHECK(dpa_ledger_create(path, &bad, &err) == DPA_EINVAL, "negative budget accepted");
    if (!use_pg)
        CHECK(access(path, F_OK) != 0, "a refused configuration left a file");
    CHECK(dpa_ledger_create(path, &unknown, &err) == DPA_EINVAL, "unknown filter accepted");
    CHECK(dpa_ledger_create(path, NULL, &err) == DPA_EINVAL, "NULL options accepted");
    CHECK(dpa_ledger_open(path, &err) == NULL && err.status == DPA_EINVAL, "opened a missing ledger");
    CHECK(dpa_ledger_create(path, &o, &err) == DPA_OK, "create: %s", err.message);
    CHECK(dpa_ledger_create(path, &o, &err) == DPA_EINVAL, "an existing ledger was overwritten");
    if (use_pg) {
        /* a database without a ledger; a server that is not there */
        new_location(junk, sizeof junk, "");
        CHECK(dpa_ledger_open(junk, &err) == NULL && err.status == DPA_EINVAL, "opened an empty database: %s",
              err.message);
        CHECK(dpa_ledger_open("postgresql:///x?host=/nonexistent&port=1", &err) == NULL &&
              err.status == DPA_ESTORAGE, "no server: %s", err.message);
        goto done;
    }
    /* not a ledger: a text file, an SQLite database of something else */
    path_in_tmp(junk, sizeof junk, "junk.txt");
    f = fopen(junk, "w");
    fputs("hello\n", f);
    fclose(f);
    CHECK(dpa_ledger_open(junk, &err) == NULL && err.status == DPA_EINVAL, "opened a text file: %s",
          err.message);
    path_in_tmp(junk, sizeof junk, "other.db");
    {
        sqlite3 *db;
        sqlite3_open(junk, &db);
        sqlite3_exec(db, "CREATE TABLE t (x)", NULL, NULL, NULL);
        sqlite3_close(db);
    }
    CHECK(dpa_ledger_open(junk, &err) == NULL && err.status == DPA_EINVAL, "opened a foreign database");
#ifndef DPA_HAVE_LIBPQ
    CHECK(dpa_ledger_open("postgresql://localhost/x", &err) == NULL &&
          err.status == DPA_EUNSUPPORTED, "a server URI without the backend");
#endif
done:
    {
        dpa_ledger *l = open_ledger(path);
        CHECK(verify_ok(l, NULL), "an empty ledger does not verify");
        dpa_ledger_close(l);
    }
    remove_tmpdir();
}

static void test_requests(void **state)
{
    char path[300];
    dpa_ledger *l;
    dpa_error err;
    dpa_ledger_decision d;
    size_t n;
    char *json;
    (void)state;
    make_tmpdir();
    new_location(path, sizeof path, "r.db");
    create_ledger(path, "{\"filter\": \"pure\", \"epsilon\": 1}", 0);
    l = open_ledger(path);
    CHECK(dpa_ledger_add_unit(l, "alice", NULL, &err) == DPA_OK, "add alice: %s", err.message);
    CHECK(dpa_ledger_add_unit(l, "alice", NULL, &err) == DPA_EINVAL, "alice added twice");
    CHECK(dpa_ledger_add_unit(l, "", NULL, &err) == DPA_EINVAL, "empty unit name");
    CHECK(dpa_ledger_add_unit(l, "a\nb", NULL, &err) == DPA_EINVAL, "control character in a name");
    CHECK(dpa_ledger_add_unit(l, "bob", "{\"filter\": \"pure\", \"epsilon\": 2}", &err) == DPA_OK,
          "bob with his own budget: %s", err.message);
    CHECK(request(l, "alice", "{\"pure\": {\"epsilon\": 0.4}}") == 1, "first 0.4 rejected");
    CHECK(request(l, "alice", "{\"pure\": {\"epsilon\": 0.4}}") == 1, "second 0.4 rejected");
    CHECK(request(l, "alice", "{\"pure\": {\"epsilon\": 0.4}}") == 0, "third 0.4 accepted (1.2 > 1)");
    CHECK(request(l, "bob", "{\"pure\": {\"epsilon\": 0.4}}") == 1, "bob's budget is his own");
    n = history_length(l);
    CHECK(n == 4, "history has %zu requests, expected 4 (rejections are recorded)", n);
    /* bad input: an error, nothing recorded */
    CHECK(dpa_ledger_request(l, "carol", "{\"pure\": {\"epsilon\": 0.1}}", &d, &err) == DPA_EINVAL,
          "unknown unit accepted");
    CHECK(dpa_ledger_request(l, "alice", "{\"pure\": {\"epsilon\": -1}}", &d, &err) == DPA_EINVAL,
          "negative epsilon accepted");
    CHECK(dpa_ledger_request(l, "alice", "{\"pure\": ", &d, &err) == DPA_EINVAL, "truncated JSON accepted");
    CHECK(dpa_ledger_request(l, "alice", "{\"approx\": {\"epsilon\": 0.1, \"delta\": 1e-6}}", &d, &err) ==
          DPA_EUNSUPPORTED, "an approx query under a pure filter: %s", err.message);
    CHECK(dpa_ledger_request(l, NULL, "{}", &d, &err) == DPA_EINVAL, "NULL unit");
    CHECK(history_length(l) == 4, "bad input changed the history");
    dpa_ledger_close(l);
    /* the state survives reopening */
    l = open_ledger(path);
    CHECK(request(l, "alice", "{\"pure\": {\"epsilon\": 0.1}}") == 1, "0.1 after reopening rejected");
    CHECK(dpa_ledger_status_json(l, "alice", &json, &err) == DPA_OK, "status: %s", err.message);
    if (json) {
        json_t *root = json_loads(json, 0, NULL);
        json_t *u = json_array_get(json_object_get(root, "units"), 0);
        CHECK(json_integer_value(json_object_get(u, "requests")) == 4, "alice's request count");
        CHECK(json_integer_value(json_object_get(u, "accepted")) == 3, "alice's accepted count");
        json_decref(root);
        free(json);
    }
    CHECK(dpa_ledger_status_json(l, "nobody", &json, &err) == DPA_EINVAL, "status of an unknown unit");
    CHECK(dpa_ledger_history_json(l, "nobody", &json, &err) == DPA_EINVAL, "history of an unknown unit");
    CHECK(verify_ok(l, NULL), "a consistent ledger does not verify");
    dpa_ledger_close(l);
    remove_tmpdir();
}

static void test_auto_units(void **state)
{
    char path[300];
    dpa_ledger *l;
    (void)state;
    make_tmpdir();
    new_location(path, sizeof path, "u.db");
    create_ledger(path, "{\"filter\": \"pure\", \"epsilon\": 1}", 1);
    l = open_ledger(path);
    CHECK(request(l, "dave", "{\"pure\": {\"epsilon\": 0.6}}") == 1, "auto unit's first request");
    CHECK(request(l, "dave", "{\"pure\": {\"epsilon\": 0.6}}") == 0, "auto unit's budget not charged");
    CHECK(history_length(l) == 2, "history");
    CHECK(verify_ok(l, NULL), "verify");
    dpa_ledger_close(l);
    remove_tmpdir();
}

static void test_verify_detects(void **state)
{
    static const char *const attacks[] = {
        /* a decision flipped: accepted recorded as rejected */
        "UPDATE dpacct_requests SET decision = 'rejected' WHERE id = 2",
        /* spend erased from the current state */
        "UPDATE dpacct_units SET state = initial_state WHERE name = 'alice'",
        /* a request removed from the history (the chain breaks) */
        "DELETE FROM dpacct_requests WHERE id = 1",
        /* a counter changed */
        "UPDATE dpacct_units SET requests = requests + 1 WHERE name = 'alice'",
        /* a larger spec recorded than was charged */
        "UPDATE dpacct_requests SET spec = replace(spec, '0.2', '0.3') WHERE id = 1",
    };
    (void)state;
    for (size_t k = 0; k < sizeof attacks / sizeof *attacks; k++) {
        char path[300], *report = NULL;
        dpa_ledger *l;
        make_tmpdir();
        new_location(path, sizeof path, "v.db");
        create_ledger(path, "{\"filter\": \"pure\", \"epsilon\": 1}", 0);
        l = open_ledger(path);
        dpa_ledger_add_unit(l, "alice", NULL, NULL);
        request(l, "alice", "{\"pure\": {\"epsilon\": 0.2}}");
        request(l, "alice", "{\"pure\": {\"epsilon\": 0.2}}");
        request(l, "alice", "{\"pure\": {\"epsilon\": 0.2}}");
        CHECK(verify_ok(l, NULL), "before tampering");
        dpa_ledger_close(l);
        tamper(path, attacks[k]);
        l = open_ledger(path);
        CHECK(!verify_ok(l, &report), "verify missed: %s", attacks[k]);
        if (report && k == 0)
            CHECK(strstr(report, "recorded as rejected") != NULL, "report: %s", report);
        free(report);
        dpa_ledger_close(l);
        remove_tmpdir();
    }
}


/* ---- decisions outside the lock (issue 21, item 1) ---- */

/* The slow decision: a huge repeat of tiny pure queries under the
 * GDP residue filter (about two minutes before the residue search was
 * sped up). */
#define SLOW_SPEC "{\"repeat\": {\"count\": 1e15, \"event\": {\"pure\": {\"epsilon\": 1e-300}}}}"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void test_decide_outside_lock(void **state)
{
    char path[300];
    dpa_ledger *l;
    dpa_error err;
    dpa_ledger_decision d;
    pid_t pid;
    double t0, dt;
    (void)state;
    make_tmpdir();
    new_location(path, sizeof path, "slow.db");
    create_ledger(path, "{\"filter\": \"gdp-residue\", \"mu\": 1}", 0);
    l = open_ledger(path);
    dpa_ledger_add_unit(l, "slow", NULL, NULL);
    dpa_ledger_add_unit(l, "fast", NULL, NULL);
    /* a decision past the limit: refused as too costly, nothing recorded */
    CHECK(dpa_ledger_set_decision_limit(l, 1e-6, &err) == DPA_OK, "limit");
    CHECK(dpa_ledger_request(l, "fast", "{\"pure\": {\"epsilon\": 0.1}}", &d, &err) == DPA_EUNSUPPORTED &&
          strstr(err.message, "too costly to decide"), "a decision past the limit: %s", err.message);
    CHECK(history_length(l) == 0, "a refused decision was recorded");
    CHECK(dpa_ledger_set_decision_limit(l, -1, &err) == DPA_EINVAL, "a negative limit");
    dpa_ledger_set_decision_limit(l, DPA_LEDGER_DECISION_LIMIT, &err);
    /* a slow decision without a limit in another process delays no one */
    pid = fork();
    if (pid == 0) {
        dpa_ledger *w = dpa_ledger_open(path, &err);
        if (w && dpa_ledger_set_decision_limit(w, 0, &err) == DPA_OK)
            dpa_ledger_request(w, "slow", SLOW_SPEC, &d, &err);
        _exit(0);
    }
    nanosleep(&(struct timespec){0, 300000000L}, NULL);
    t0 = now_s();
    CHECK(request(l, "fast", "{\"pure\": {\"epsilon\": 0.1}}") == 1, "the fast unit's request");
    CHECK(request(l, "slow", "{\"pure\": {\"epsilon\": 0.1}}") == 1, "the slow unit's other request");
    dt = now_s() - t0;
    print_message("  two requests while a slow decision runs: %.3f s\n", dt);
    CHECK(dt < 3.0, "requests waited %.1f s for a slow decision", dt);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    /* the same slow decision with a limit: refused after it, nothing charged */
    CHECK(dpa_ledger_set_decision_limit(l, 0.5, &err) == DPA_OK, "limit 0.5 s");
    t0 = now_s();
    {
        dpa_status st = dpa_ledger_request(l, "slow", SLOW_SPEC, &d, &err);
        dt = now_s() - t0;
        if (st == DPA_OK) {
            print_message("  the slow spec decided in %.3f s (no longer slow)\n", dt);
            dpa_ledger_decision_clear(&d);
        } else {
            CHECK(st == DPA_EUNSUPPORTED && strstr(err.message, "too costly"), "slow spec: %s", err.message);
            CHECK(dt < 2.0, "refused after %.1f s, the limit is 0.5 s", dt);
            CHECK(history_length(l) == 2, "the refused slow request was recorded");
        }
    }
    CHECK(verify_ok(l, NULL), "verify");
    dpa_ledger_close(l);
    remove_tmpdir();
}

/* Cheap decisions (the filters pure, basic and zcdp on a spec of at most
 * 64 KiB) run in the caller's thread under a limit: no decision thread is
 * started; they are still refused past the limit, nothing recorded; a
 * costly filter's decision, or a long spec's, goes to the thread. */
static void test_cheap_decisions_here(void **state)
{
    char path[300];
    dpa_ledger *l;
    dpa_error err;
    dpa_ledger_decision d;
    char *big;
    size_t n = 0, cap = 80000;
    (void)state;
    make_tmpdir();
    new_location(path, sizeof path, "cheap.db");
    create_ledger(path, "{\"filter\": \"pure\", \"epsilon\": 10}", 0);
    l = open_ledger(path);
    CHECK(dpa_ledger_add_unit(l, "p", NULL, &err) == DPA_OK, "unit p");
    CHECK(dpa_ledger_add_unit(l, "b", "{\"filter\": \"basic\", \"epsilon\": 10, \"delta\": 1e-3}", &err) == DPA_OK,
          "unit b");
    CHECK(dpa_ledger_add_unit(l, "z", "{\"filter\": \"zcdp\", \"rho\": 10}", &err) == DPA_OK, "unit z");
    CHECK(dpa_ledger_add_unit(l, "g", "{\"filter\": \"gdp-residue\", \"mu\": 10}", &err) == DPA_OK, "unit g");
    CHECK(request(l, "p", "{\"pure\": {\"epsilon\": 0.25}}") == 1, "pure");
    CHECK(request(l, "b", "{\"approx\": {\"epsilon\": 0.25, \"delta\": 1e-6}}") == 1, "basic");
    CHECK(request(l, "z", "{\"gaussian\": {\"sigma\": 2}}") == 1, "zcdp");
    CHECK(l->worker == NULL, "a cheap decision under the default limit started the decision thread");
    /* past the limit (1 ns: any decision takes longer): refused, nothing recorded */
    CHECK(dpa_ledger_set_decision_limit(l, 1e-9, &err) == DPA_OK, "limit");
    CHECK(dpa_ledger_request(l, "p", "{\"pure\": {\"epsilon\": 0.25}}", &d, &err) == DPA_EUNSUPPORTED &&
          strstr(err.message, "too costly to decide"), "a cheap decision past the limit: %s", err.message);
    CHECK(history_length(l) == 3, "a refused decision was recorded");
    CHECK(l->worker == NULL, "a cheap decision past the limit started the decision thread");
    dpa_ledger_set_decision_limit(l, DPA_LEDGER_DECISION_LIMIT, &err);
    /* a spec over 64 KiB: on the thread */
    big = malloc(cap);
    CHECK(big != NULL, "malloc");
    n += (size_t)snprintf(big + n, cap - n, "{\"compose\": [");
    for (int i = 0; n + 40 < cap; i++)
        n += (size_t)snprintf(big + n, cap - n, "%s{\"pure\": {\"epsilon\": 1e-9}}", i ? ", " : "");
    snprintf(big + n, cap - n, "]}");
    CHECK(request(l, "p", big) == 1, "a long spec");
    CHECK(l->worker != NULL, "a long spec was decided without the thread");
    dpa_ledger_worker_stop(l->worker);
    l->worker = NULL;
    free(big);
    /* a filter whose decisions may be costly: on the thread */
    CHECK(request(l, "g", "{\"pure\": {\"epsilon\": 0.1}}") == 1, "gdp-residue");
    CHECK(l->worker != NULL, "a gdp-residue decision was made without the thread");
    CHECK(history_length(l) == 5, "history");
    CHECK(verify_ok(l, NULL), "verify");
    dpa_ledger_close(l);
    remove_tmpdir();
}

/* ---- many processes ---- */

/* SQLite: 8 processes x 200 requests (issue 9); PostgreSQL: 16 x 500 (issue 11);
 * fewer under the sanitizers */
#define CONC_PROCS (use_pg ? 16 : 8)
#define CONC_EACH (use_pg ? (SANITIZED ? 100 : 500) : (SANITIZED ? 60 : 200))

/* Child: CONC_EACH requests at `unit` (or at units u0..u3 in turn when
 * unit is NULL); writes its accepted count to fd; exits 0, or 1 on an error. */
static void conc_child(const char *path, const char *unit, const char *spec, int fd)
{
    dpa_error err;
    dpa_ledger *l = dpa_ledger_open(path, &err);
    int accepted = 0;
    if (!l)
        _exit(1);
    for (int i = 0; i < CONC_EACH; i++) {
        char name[16];
        dpa_ledger_decision d;
        snprintf(name, sizeof name, "u%d", (i + (int)getpid()) % 4);
        if (dpa_ledger_request(l, unit ? unit : name, spec, &d, &err) != DPA_OK) {
            fprintf(stderr, "child request: %s\n", err.message);
            _exit(1);
        }
        accepted += d.accepted;
        dpa_ledger_decision_clear(&d);
    }
    dpa_ledger_close(l);
    if (write(fd, &accepted, sizeof accepted) != (ssize_t)sizeof accepted)
        _exit(1);
    _exit(0);
}

static long long unit_accepted(dpa_ledger *l, const char *unit)
{
    dpa_error err;
    char *json;
    long long n;
    json_t *root;
    if (dpa_ledger_status_json(l, unit, &json, &err) != DPA_OK)
        fail_msg("status: %s", err.message);
    root = json_loads(json, 0, NULL);
    free(json);
    n = json_integer_value(json_object_get(json_array_get(json_object_get(root, "units"), 0), "accepted"));
    json_decref(root);
    return n;
}

static void run_concurrent(const char *config, const char *spec, int many_units)
{
    char path[300], serial_path[300];
    dpa_ledger *l;
    int fds[2];
    long long serial = 0, total = 0;
    int nunits = many_units ? 4 : 1;
    make_tmpdir();
    new_location(path, sizeof path, "c.db");
    new_location(serial_path, sizeof serial_path, "s.db");
    create_ledger(path, config, 0);
    create_ledger(serial_path, config, 0);
    /* the serial answer: the same requests one after another */
    l = open_ledger(serial_path);
    dpa_ledger_add_unit(l, "u0", NULL, NULL);
    for (int i = 0; i < CONC_PROCS * CONC_EACH / nunits; i++)
        serial += request(l, "u0", spec);
    dpa_ledger_close(l);
    l = open_ledger(path);
    for (int u = 0; u < nunits; u++) {
        char name[16];
        snprintf(name, sizeof name, "u%d", u);
        dpa_ledger_add_unit(l, name, NULL, NULL);
    }
    dpa_ledger_close(l);
    if (pipe(fds))
        fail_msg("pipe");
    for (int p = 0; p < CONC_PROCS; p++) {
        pid_t pid = fork();
        if (pid < 0)
            fail_msg("fork");
        if (pid == 0) {
            close(fds[0]);
            conc_child(path, many_units ? NULL : "u0", spec, fds[1]);
        }
    }
    close(fds[1]);
    for (int p = 0; p < CONC_PROCS; p++) {
        int status;
        wait(&status);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a child failed (status %d)", status);
    }
    for (int p = 0; p < CONC_PROCS; p++) {
        int a;
        if (read(fds[0], &a, sizeof a) == (ssize_t)sizeof a)
            total += a;
    }
    close(fds[0]);
    l = open_ledger(path);
    {
        long long stored = 0;
        for (int u = 0; u < nunits; u++) {
            char name[16];
            long long n;
            snprintf(name, sizeof name, "u%d", u);
            n = unit_accepted(l, name);
            stored += n;
            /* each unit saw exactly CONC_PROCS * CONC_EACH / nunits requests only
             * in the single-unit case; with many units, each at most that many */
            if (!many_units)
                CHECK(n == serial, "unit %s accepted %lld, a serial run accepts %lld", name, n, serial);
            else
                CHECK(n <= serial, "unit %s accepted %lld > the serial %lld", name, n, serial);
        }
        CHECK(stored == total, "children counted %lld acceptances, the ledger stores %lld", total, stored);
    }
    CHECK(history_length(l) == (size_t)(CONC_PROCS * CONC_EACH), "history length %zu",
          history_length(l));
    CHECK(verify_ok(l, NULL), "verify after concurrent requests");
    dpa_ledger_close(l);
    remove_tmpdir();
}

static void test_concurrent_pure(void **state)
{
    char config[100];
    (void)state;
    /* budget for about 40% of the requests: the boundary is crossed while all
     * processes compete */
    snprintf(config, sizeof config, "{\"filter\": \"pure\", \"epsilon\": %g}",
             0.4 * 0.01 * CONC_PROCS * CONC_EACH);
    run_concurrent(config, "{\"pure\": {\"epsilon\": 0.01}}", 0);
}

static void test_concurrent_many_units(void **state)
{
    char config[100];
    (void)state;
    snprintf(config, sizeof config, "{\"filter\": \"pure\", \"epsilon\": %g}",
             0.4 * 0.01 * CONC_PROCS * CONC_EACH / 4);
    run_concurrent(config, "{\"pure\": {\"epsilon\": 0.01}}", 1);
}

static void test_concurrent_basic(void **state)
{
    (void)state;
    run_concurrent("{\"filter\": \"basic\", \"epsilon\": 100, \"delta\": 1e-4}",
                   "{\"approx\": {\"epsilon\": 0.01, \"delta\": 3e-7}}", 0);
}

/* ---- crashes ---- */

#define CRASH_ROUNDS (SANITIZED ? 8 : 20)

/* The acceptances a writer reported (request ids). */
typedef struct acked_list {
    long long *id;
    size_t n, cap;
} acked_list;

/* Fork a writer that requests pure 0.001 at alice forever and writes the id
 * of each committed acceptance to the pipe; a failed request ends it (exit
 * status 0 if end_on_failure, else 1). */
static pid_t start_writer(const char *path, int fds[2], int end_on_failure)
{
    pid_t pid;
    if (pipe(fds))
        fail_msg("pipe");
    pid = fork();
    if (pid == 0) {
        dpa_error err;
        dpa_ledger *w = dpa_ledger_open(path, &err);
        close(fds[0]);
        if (!w)
            _exit(1);
        for (;;) {
            dpa_ledger_decision d;
            if (dpa_ledger_request(w, "alice", "{\"pure\": {\"epsilon\": 0.001}}", &d, &err) != DPA_OK)
                _exit(end_on_failure ? 0 : 1);
            if (d.accepted && write(fds[1], &d.request_id, sizeof d.request_id) < 0)
                _exit(1);
            dpa_ledger_decision_clear(&d);
        }
    }
    close(fds[1]);
    return pid;
}

/* Read the ids a (finished) writer reported into a. */
static void collect_acked(int fd, acked_list *a)
{
    long long id;
    while (read(fd, &id, sizeof id) == (ssize_t)sizeof id) {
        if (a->n == a->cap) {
            a->cap = a->cap ? 2 * a->cap : 256;
            a->id = realloc(a->id, a->cap * sizeof *a->id);
        }
        a->id[a->n++] = id;
    }
    close(fd);
}

/* verify passes and every acknowledged acceptance is recorded as accepted
 * in alice's history (what: the crashes, for messages). */
static void check_acked(const char *path, const acked_list *a, const char *what)
{
    dpa_ledger *l = open_ledger(path);
    dpa_error err;
    char *json;
    json_t *arr, *r;
    size_t i, found = 0;
    CHECK(verify_ok(l, NULL), "verify after %s", what);
    CHECK(dpa_ledger_history_json(l, "alice", &json, &err) == DPA_OK, "history");
    arr = json_loads(json, 0, NULL);
    free(json);
    for (size_t k = 0; k < a->n; k++) {
        int ok = 0;
        json_array_foreach(arr, i, r) {
            if (json_integer_value(json_object_get(r, "id")) == a->id[k] &&
                !strcmp(json_string_value(json_object_get(r, "decision")), "accepted")) {
                ok = 1;
                break;
            }
        }
        found += (size_t)ok;
        CHECK(ok, "acknowledged request %lld missing after %s", a->id[k], what);
    }
    print_message("  %zu acknowledged acceptances over %s, %zu recorded requests\n", a->n, what,
                  json_array_size(arr));
    CHECK(found == a->n, "%zu of %zu acknowledged acceptances lost", a->n - found, a->n);
    CHECK(a->n > 0, "the writer never got to commit");
    json_decref(arr);
    dpa_ledger_close(l);
}

static void test_crash(void **state)
{
    char path[300], what[64];
    dpa_ledger *l;
    acked_list acked = {0};
    (void)state;
    make_tmpdir();
    new_location(path, sizeof path, "k.db");
    create_ledger(path, "{\"filter\": \"pure\", \"epsilon\": 1e6}", 0);
    l = open_ledger(path);
    dpa_ledger_add_unit(l, "alice", NULL, NULL);
    dpa_ledger_close(l);
    srand(12345);
    for (int round = 0; round < CRASH_ROUNDS; round++) {
        int fds[2];
        pid_t pid = start_writer(path, fds, 0);
        struct timespec ts = {0, (long)(1000000L * (2 + rand() % 60))};
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        collect_acked(fds[0], &acked);
    }
    snprintf(what, sizeof what, "%d kills", CRASH_ROUNDS);
    check_acked(path, &acked, what);
    free(acked.id);
    remove_tmpdir();
}

/* PostgreSQL: the server stopped in immediate mode (no shutdown checkpoint,
 * as a crash) while a writer runs, then restarted: every acceptance the
 * writer saw is there and verify passes. */
static void test_server_crash(void **state)
{
    char path[600], args[700];
    dpa_ledger *l;
    acked_list acked = {0};
    (void)state;
    make_tmpdir();
    new_location(path, sizeof path, "");
    create_ledger(path, "{\"filter\": \"pure\", \"epsilon\": 1e6}", 0);
    l = open_ledger(path);
    dpa_ledger_add_unit(l, "alice", NULL, NULL);
    dpa_ledger_close(l);
    /* a long-lived handle, open across the crashes: it must reconnect */
    dpa_ledger *keep = open_ledger(path);
    CHECK(request(keep, "alice", "{\"pure\": {\"epsilon\": 0.001}}") == 1, "before the crashes");
    for (int round = 0; round < 2; round++) {
        int fds[2];
        pid_t pid = start_writer(path, fds, 1);
        struct timespec ts = {0, 300000000L};
        nanosleep(&ts, NULL);
        snprintf(args, sizeof args, "stop-immediate '%s'", pg_dir);
        pg_run(NULL, 0, args);
        waitpid(pid, NULL, 0);
        collect_acked(fds[0], &acked);
        snprintf(args, sizeof args, "restart '%s'", pg_dir);
        pg_run(NULL, 0, args);
    }
    {
        dpa_ledger_decision d;
        dpa_error err;
        CHECK(dpa_ledger_request(keep, "alice", "{\"pure\": {\"epsilon\": 0.001}}", &d, &err) == DPA_OK,
              "a handle opened before the server crashes does not reconnect: %s", err.message);
        dpa_ledger_decision_clear(&d);
        dpa_ledger_close(keep);
    }
    check_acked(path, &acked, "2 server crashes");
    free(acked.id);
    remove_tmpdir();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_create_open, setup, teardown),
        cmocka_unit_test_setup_teardown(test_requests, setup, teardown),
        cmocka_unit_test_setup_teardown(test_auto_units, setup, teardown),
        cmocka_unit_test_setup_teardown(test_verify_detects, setup, teardown),
        cmocka_unit_test_setup_teardown(test_decide_outside_lock, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cheap_decisions_here, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_pure, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_many_units, setup, teardown),
        cmocka_unit_test_setup_teardown(test_concurrent_basic, setup, teardown),
        cmocka_unit_test_setup_teardown(test_crash, setup, teardown),
    };
    const struct CMUnitTest pg_only[] = {
        cmocka_unit_test_setup_teardown(test_server_crash, setup, teardown),
    };
    int rc;
    signal(SIGPIPE, SIG_IGN);
    use_pg = 0;
    rc = cmocka_run_group_tests_name("ledger on SQLite", tests, NULL, NULL);
    pg_dir = getenv("DPA_TEST_PG_DIR");
    pg_script = getenv("DPA_TEST_PG_SCRIPT");
    if (pg_dir && *pg_dir && pg_script && *pg_script) {
        use_pg = 1;
        rc |= cmocka_run_group_tests_name("ledger on PostgreSQL", tests, NULL, NULL);
        rc |= cmocka_run_group_tests_name("PostgreSQL server crash", pg_only, NULL, NULL);
    } else {
        print_message("ledger on PostgreSQL: not run (DPA_TEST_PG_DIR and DPA_TEST_PG_SCRIPT unset)\n");
#ifdef DPA_HAVE_LIBPQ
        if (getenv("DPA_TEST_REQUIRE_PG")) {
            print_error("DPA_TEST_REQUIRE_PG is set but no server was given\n");
            rc = 1;
        }
#endif
    }
    return rc;
}
