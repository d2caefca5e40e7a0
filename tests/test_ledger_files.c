/* The ledger's files and messages (issue 21, item 5): a killed create or
 * import leaves nothing that blocks a retry; read-only opening on a
 * read-only mount; a corrupted SQLite file is a storage failure with
 * SQLite's message; ":memory:" is refused; no message holds a password of
 * the location (libpq's own included).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <errno.h>
#include <jansson.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "check.h"
#include "dpacct/ledger.h"

static char tmpdir[256];

static void make_tmpdir(void)
{
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/dpacct-lfiles-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(tmpdir))
        fail_msg("mkdtemp: %s", strerror(errno));
}

static void remove_tmpdir(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        print_error("could not remove %s\n", tmpdir);
}

#define CONFIG "{\"filter\": \"pure\", \"epsilon\": 100}"

/* A ledger at path with nunits units and nreq requests on the first. */
static void make_ledger(const char *path, size_t nunits, int nreq)
{
    char **names = calloc(nunits, sizeof *names);
    dpa_ledger_init_opts o = {CONFIG, 0, (const char *const *)names, nunits};
    dpa_error err;
    dpa_ledger *l;
    for (size_t i = 0; i < nunits; i++) {
        names[i] = malloc(16);
        snprintf(names[i], 16, "u%zu", i);
    }
    if (dpa_ledger_create(path, &o, &err) != DPA_OK)
        fail_msg("create %s: %s", path, err.message);
    for (size_t i = 0; i < nunits; i++)
        free(names[i]);
    free(names);
    l = dpa_ledger_open(path, &err);
    for (int i = 0; l && i < nreq; i++) {
        dpa_ledger_decision d;
        if (dpa_ledger_request(l, "u0", "{\"pure\": {\"epsilon\": 0.01}}", &d, &err) != DPA_OK)
            fail_msg("request: %s", err.message);
        dpa_ledger_decision_clear(&d);
    }
    dpa_ledger_close(l);
}

static int verifies(const char *path)
{
    dpa_error err;
    dpa_ledger *l = dpa_ledger_open_readonly(path, &err);
    char *report = NULL;
    int ok = 0;
    if (!l)
        return 0;
    if (dpa_ledger_verify(l, &ok, &report, &err) != DPA_OK)
        ok = 0;
    free(report);
    dpa_ledger_close(l);
    return ok;
}

/* SIGKILL of a create (what = 0) or an import (what = 1) at random moments:
 * afterwards the path holds nothing, or a whole ledger that verifies; a
 * retry at the path works when it holds nothing. */
static void kill_rounds(int what, const char *export_json)
{
    int nothing = 0, whole = 0;
    srand(4321 + what);
    for (int round = 0; round < 10; round++) {
        char path[300];
        pid_t pid;
        struct timespec ts = {0, (long)(1000000L * (1 + rand() % 40))};
        dpa_error err;
        snprintf(path, sizeof path, "%s/k%d-%d.db", tmpdir, what, round);
        pid = fork();
        if (pid == 0) {
            if (what == 0)
                make_ledger(path, 3000, 0);
            else if (dpa_ledger_import_json(path, export_json, &err) != DPA_OK)
                _exit(1);
            _exit(0);
        }
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        if (access(path, F_OK) == 0) {
            CHECK(verifies(path), "round %d: a killed %s left a ledger that does not verify", round,
                  what ? "import" : "create");
            whole++;
        } else {
            if (what == 0) {
                dpa_ledger_init_opts o = {CONFIG, 0, NULL, 0};
                CHECK(dpa_ledger_create(path, &o, &err) == DPA_OK, "retry of a killed create: %s", err.message);
            } else {
                CHECK(dpa_ledger_import_json(path, export_json, &err) == DPA_OK, "retry of a killed import: %s",
                      err.message);
            }
            CHECK(verifies(path), "the retry does not verify");
            nothing++;
        }
    }
    print_message("  %s: %d kills left nothing, %d a whole ledger\n", what ? "import" : "create", nothing, whole);
}

static void test_killed_create_import(void **state)
{
    char src[300];
    dpa_ledger *l;
    dpa_error err;
    char *json;
    (void)state;
    make_tmpdir();
    kill_rounds(0, NULL);
    snprintf(src, sizeof src, "%s/src.db", tmpdir);
    make_ledger(src, 50, 1500);
    l = dpa_ledger_open_readonly(src, &err);
    CHECK(l && dpa_ledger_export_json(l, &json, &err) == DPA_OK, "export: %s", err.message);
    dpa_ledger_close(l);
    kill_rounds(1, json);
    free(json);
    remove_tmpdir();
}

/* Read-only opening: status, history, verify and export of a ledger on a
 * read-only bind mount (tests run as root, for whom mode 0444 means
 * nothing; the mount is private to a child: unshare(CLONE_NEWNS)). */
static void test_read_only_mount(void **state)
{
    char path[300];
    pid_t pid;
    int status;
    (void)state;
    make_tmpdir();
    snprintf(path, sizeof path, "%s/ro.db", tmpdir);
    make_ledger(path, 2, 5);
    pid = fork();
    if (pid == 0) {
        dpa_error err;
        dpa_ledger *l;
        dpa_ledger_decision d;
        char *json;
        int ok = 0;
        if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
            mount(tmpdir, tmpdir, NULL, MS_BIND, NULL) != 0 ||
            mount(NULL, tmpdir, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) != 0)
            _exit(77); /* not allowed here: skipped */
        if (access(path, W_OK) == 0 || errno != EROFS)
            _exit(2);
        l = dpa_ledger_open_readonly(path, &err);
        if (!l) {
            fprintf(stderr, "open_readonly: %s\n", err.message);
            _exit(3);
        }
        if (dpa_ledger_status_json(l, NULL, &json, &err) != DPA_OK)
            _exit(4);
        free(json);
        if (dpa_ledger_history_json(l, NULL, &json, &err) != DPA_OK)
            _exit(5);
        free(json);
        if (dpa_ledger_verify(l, &ok, &json, &err) != DPA_OK || !ok)
            _exit(6);
        free(json);
        if (dpa_ledger_export_json(l, &json, &err) != DPA_OK)
            _exit(7);
        free(json);
        if (dpa_ledger_request(l, "u0", "{\"pure\": {\"epsilon\": 0.01}}", &d, &err) != DPA_EINVAL)
            _exit(8);
        dpa_ledger_close(l);
        _exit(0);
    }
    waitpid(pid, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 77)
        print_message("  read-only mount: not allowed here, skipped\n");
    else
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "read-only ledger: step %d failed",
              WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    /* the read-only handles left nothing behind that changes the ledger */
    CHECK(verifies(path), "after read-only use");
    remove_tmpdir();
}

/* A corrupted SQLite file: DPA_ESTORAGE with SQLite's message. */
static void test_corrupted(void **state)
{
    char path[300];
    struct stat sb;
    FILE *f;
    char junk[3000];
    dpa_error err;
    dpa_ledger *l;
    char *json = NULL;
    int ok = 0;
    (void)state;
    make_tmpdir();
    snprintf(path, sizeof path, "%s/c.db", tmpdir);
    make_ledger(path, 2, 200);
    stat(path, &sb);
    memset(junk, 0xff, sizeof junk);
    f = fopen(path, "r+b");
    fseek(f, (long)sb.st_size - 4096 + 8, SEEK_SET);
    fwrite(junk, 1, sizeof junk, f);
    fclose(f);
    l = dpa_ledger_open_readonly(path, &err);
    CHECK(l != NULL, "open: %s", err.message);
    if (l) {
        dpa_status st = dpa_ledger_verify(l, &ok, &json, &err);
        CHECK(st == DPA_ESTORAGE, "verify of a corrupted file: status %d (%s)", (int)st, err.message);
        CHECK(strstr(err.message, "malformed") != NULL, "SQLite's message missing: %s", err.message);
        free(json);
        dpa_ledger_close(l);
    }
    remove_tmpdir();
}

static void test_memory_refused(void **state)
{
    dpa_ledger_init_opts o = {CONFIG, 0, NULL, 0};
    dpa_error err;
    (void)state;
    CHECK(dpa_ledger_create(":memory:", &o, &err) == DPA_EINVAL, "init :memory: accepted");
    CHECK(strstr(err.message, "in-memory") != NULL, "message: %s", err.message);
    CHECK(access(":memory:", F_OK) != 0, "a file named :memory: was created");
    CHECK(dpa_ledger_open(":memory:", &err) == NULL && err.status == DPA_EINVAL, "open :memory:");
}

/* Passwords: the display of the location and every error message. */
static void test_passwords_masked(void **state)
{
    static const char *const uris[] = {
        "postgresql://u:S3cretPW@[::1/db",
        "postgresql://u:S3c%ZZretPW@localhost/db",
        "postgresql://u@localhost/db?PASSWORD=S3cretPW",
        "postgresql://u@localhost/db?Password=S3cretPW&host=/nonexistent",
        "postgresql://u:S3cretPW@/db?host=/nonexistent&port=1",
        "postgres://u:S3cret%50W@/db?host=/nonexistent",
        "postgresql://u:S3cr/etPW@[::1/db",
        "postgresql://u@/db?host=/nonexistent&password=S3cretPW",
    };
    (void)state;
    for (size_t i = 0; i < sizeof uris / sizeof *uris; i++) {
        char shown[512];
        dpa_error err;
        dpa_ledger_init_opts o = {CONFIG, 0, NULL, 0};
        dpa_ledger_location_display(uris[i], shown, sizeof shown);
        CHECK(!strstr(shown, "S3c") && !strstr(shown, "etPW"), "display of %s: %s", uris[i], shown);
        CHECK(dpa_ledger_open(uris[i], &err) == NULL, "opened %s", uris[i]);
        CHECK(!strstr(err.message, "S3c") && !strstr(err.message, "etPW"), "open of %s: %s", uris[i],
              err.message);
        CHECK(dpa_ledger_create(uris[i], &o, &err) != DPA_OK, "created %s", uris[i]);
        CHECK(!strstr(err.message, "S3c") && !strstr(err.message, "etPW"), "create at %s: %s", uris[i],
              err.message);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_killed_create_import, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_only_mount, setup, teardown),
        cmocka_unit_test_setup_teardown(test_corrupted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_passwords_masked, setup, teardown),
    };
    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests_name("ledger files and messages", tests, NULL, NULL);
}
