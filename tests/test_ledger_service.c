/* The ledger's budget-service functions (issue 25, part A): idempotent
 * requests, batches, reservations, lifecycle, top-up, periods, tokens and
 * pages; on SQLite, and again on PostgreSQL when DPA_TEST_PG_DIR names a
 * running throwaway server of tests/pg_server.sh.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <jansson.h>
#include <sys/wait.h>
#include <time.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "check.h"
#include "dpacct/ledger.h"
#include "ledger_testlib.h"

static const char *const Q1 = "{\"pure\": {\"epsilon\": 0.25}}";
static const char *const Q2 = "{\"pure\": {\"epsilon\": 0.5}}";

static dpa_ledger *fresh(char *path, size_t n, const char *name)
{
    dpa_ledger *l;
    dpa_error err;
    new_location(path, n, name);
    create_ledger(path, "{\"filter\": \"pure\", \"epsilon\": 1}", 0);
    l = open_ledger(path);
    if (dpa_ledger_add_unit(l, "alice", NULL, &err) != DPA_OK || dpa_ledger_add_unit(l, "bob", NULL, &err) != DPA_OK)
        fail_msg("add units: %s", err.message);
    return l;
}

static char *status_of(dpa_ledger *l, const char *unit)
{
    dpa_error err;
    char *json = NULL;
    json_t *v, *u;
    char *state;
    if (dpa_ledger_status_json(l, unit, &json, &err) != DPA_OK)
        fail_msg("status: %s", err.message);
    v = json_loads(json, 0, NULL);
    u = json_array_get(json_object_get(v, "units"), 0);
    state = json_dumps(json_object_get(u, "remaining"), JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(v);
    free(json);
    return state;
}

static void test_idempotency(void **st)
{
    char path[300];
    dpa_ledger *l;
    dpa_ledger_request_opts o = {"tok_test", "key-1", 0};
    dpa_ledger_decision a, b;
    dpa_error err;
    (void)st;
    make_tmpdir();
    l = fresh(path, sizeof path, "idem.db");
    CHECK(dpa_ledger_request_ex(l, "alice", Q1, &o, &a, &err) == DPA_OK && a.accepted && !a.replayed &&
              !strcmp(a.status, "charged"), "first keyed request: %s", err.message);
    CHECK(dpa_ledger_request_ex(l, "alice", Q1, &o, &b, &err) == DPA_OK && b.replayed &&
              b.request_id == a.request_id && !strcmp(b.status, "charged"), "retry replays: %s", err.message);
    CHECK(history_length(l) == 1, "a retry charged again (%zu entries)", history_length(l));
    dpa_ledger_decision_clear(&a);
    dpa_ledger_decision_clear(&b);
    CHECK(dpa_ledger_request_ex(l, "alice", Q2, &o, &b, &err) == DPA_EINVAL &&
              strstr(err.message, "idempotency key reused with a different request"), "other spec: %s", err.message);
    /* the same key on another unit is another request */
    CHECK(dpa_ledger_request_ex(l, "bob", Q1, &o, &b, &err) == DPA_OK && !b.replayed, "key on bob");
    dpa_ledger_decision_clear(&b);
    /* concurrently from two processes with one key: one charge */
    {
        pid_t pid = fork();
        dpa_ledger_request_opts k = {NULL, "conc", 0};
        if (pid == 0) {
            dpa_ledger *m = dpa_ledger_open(path, &err);
            dpa_ledger_decision d;
            int rc = m && dpa_ledger_request_ex(m, "alice", Q1, &k, &d, &err) == DPA_OK ? 0 : 1;
            _exit(rc);
        }
        CHECK(dpa_ledger_request_ex(l, "alice", Q1, &k, &a, &err) == DPA_OK, "parent: %s", err.message);
        int wst = 0;
        waitpid(pid, &wst, 0);
        CHECK(WIFEXITED(wst) && WEXITSTATUS(wst) == 0, "child failed");
        dpa_ledger_decision_clear(&a);
        CHECK(history_length(l) == 3, "two processes with one key charged %zu times", history_length(l) - 2);
    }
    /* the actor is recorded and chained */
    CHECK(verify_ok(l, NULL), "verify after keyed requests");
    dpa_ledger_close(l);
    tamper(path, "UPDATE dpacct_requests SET actor = 'mallory' WHERE id = 1");
    l = open_ledger(path);
    CHECK(!verify_ok(l, NULL), "an edited actor was not detected");
    dpa_ledger_close(l);
    remove_tmpdir();
}

static void test_batch(void **st)
{
    char p1[300], p2[300];
    (void)st;
    make_tmpdir();
    for (size_t n = 1; n <= 64; n = n < 4 ? n + 1 : n * 4) {
        char n1[32], n2[32];
        dpa_ledger *a, *b;
        snprintf(n1, sizeof n1, "b1-%zu.db", n);
        snprintf(n2, sizeof n2, "b2-%zu.db", n);
        a = fresh(p1, sizeof p1, n1);
        b = fresh(p2, sizeof p2, n2);
        dpa_ledger_batch_item *it = calloc(n, sizeof *it);
        dpa_error err;
        for (size_t i = 0; i < n; i++) {
            it[i].unit = i % 3 == 0 ? "bob" : "alice";
            it[i].spec_json = i % 2 ? Q1 : Q2;
        }
        CHECK(dpa_ledger_request_batch(a, it, n, &err) == DPA_OK, "batch of %zu: %s", n, err.message);
        for (size_t i = 0; i < n; i++) {
            dpa_ledger_decision d;
            CHECK(dpa_ledger_request(b, it[i].unit, it[i].spec_json, &d, &err) == DPA_OK, "single");
            CHECK(it[i].st == DPA_OK && d.accepted == it[i].out.accepted && d.request_id == it[i].out.request_id &&
                      !strcmp(d.remaining, it[i].out.remaining),
                  "batch item %zu of %zu differs from the single request", i, n);
            dpa_ledger_decision_clear(&d);
            dpa_ledger_decision_clear(&it[i].out);
        }
        for (int u = 0; u < 2; u++) {
            char *x = status_of(a, u ? "bob" : "alice"), *y = status_of(b, u ? "bob" : "alice");
            CHECK(!strcmp(x, y), "states differ after a batch of %zu", n);
            free(x);
            free(y);
        }
        CHECK(verify_ok(a, NULL), "verify after a batch of %zu", n);
        dpa_ledger_close(a);
        dpa_ledger_close(b);
        free(it);
    }
    /* a failing item leaves the others committed */
    {
        dpa_ledger *a = fresh(p1, sizeof p1, "b3.db");
        dpa_ledger_batch_item it[3];
        dpa_error err;
        memset(it, 0, sizeof it);
        it[0].unit = "alice"; it[0].spec_json = Q1;
        it[1].unit = "nobody"; it[1].spec_json = Q1;
        it[2].unit = "bob"; it[2].spec_json = "{\"pure\": ";
        CHECK(dpa_ledger_request_batch(a, it, 3, &err) == DPA_OK, "batch with bad items");
        CHECK(it[0].st == DPA_OK && it[1].st == DPA_EINVAL && strstr(it[1].err.message, "unknown unit") &&
                  it[2].st == DPA_EINVAL, "item statuses %d %d %d", it[0].st, it[1].st, it[2].st);
        CHECK(history_length(a) == 1, "the good item was not committed alone");
        dpa_ledger_decision_clear(&it[0].out);
        dpa_ledger_close(a);
        if (!use_pg) {
            /* a storage failure in the middle of a batch records nothing of it */
            tamper(p1, "CREATE TRIGGER boom BEFORE INSERT ON dpacct_requests WHEN NEW.spec LIKE '%0.125%' "
                       "BEGIN SELECT RAISE(ABORT, 'injected failure'); END");
            a = open_ledger(p1);
            memset(it, 0, sizeof it);
            it[0].unit = "alice"; it[0].spec_json = Q1;
            it[1].unit = "bob"; it[1].spec_json = "{\"pure\": {\"epsilon\": 0.125}}";
            it[2].unit = "alice"; it[2].spec_json = Q1;
            CHECK(dpa_ledger_request_batch(a, it, 3, &err) == DPA_ESTORAGE && it[0].st == DPA_ESTORAGE &&
                      it[2].st == DPA_ESTORAGE && it[0].out.remaining == NULL, "a failing storage: %d", it[0].st);
            CHECK(history_length(a) == 1, "a failed batch recorded %zu entries", history_length(a) - 1);
            CHECK(verify_ok(a, NULL), "verify after a failed batch");
            dpa_ledger_close(a);
        }
    }
    remove_tmpdir();
}

static void test_reservation_lifecycle(void **st)
{
    char path[300];
    dpa_ledger *l;
    dpa_ledger_request_opts r = {"svc", NULL, 1};
    dpa_ledger_decision d, e;
    dpa_error err;
    char *before, *after;
    (void)st;
    make_tmpdir();
    l = fresh(path, sizeof path, "res.db");
    CHECK(request(l, "alice", Q1) == 1, "plain request");
    before = status_of(l, "alice");
    CHECK(dpa_ledger_request_ex(l, "alice", Q2, &r, &d, &err) == DPA_OK && d.accepted &&
              !strcmp(d.status, "reserved"), "reserve: %s", err.message);
    CHECK(request(l, "alice", Q1) == 1, "a request after the reservation");
    CHECK(dpa_ledger_reservation(l, "alice", d.request_id, "release", "svc", &err) == DPA_OK, "release: %s",
          err.message);
    after = status_of(l, "alice");
    /* released: only the two plain requests of 0.25 remain charged */
    CHECK(request(l, "bob", Q1) == 1 && request(l, "bob", Q1) == 1, "bob");
    {
        char *bob = status_of(l, "bob");
        CHECK(!strcmp(after, bob), "release did not restore the state: %s vs %s", after, bob);
        free(bob);
    }
    CHECK(strcmp(before, after), "state unchanged by the later request");
    CHECK(dpa_ledger_reservation(l, "alice", d.request_id, "release", "svc", &err) == DPA_EINVAL,
          "release twice accepted");
    CHECK(dpa_ledger_reservation(l, "alice", d.request_id, "commit", "svc", &err) == DPA_EINVAL,
          "commit after release accepted");
    dpa_ledger_decision_clear(&d);
    CHECK(dpa_ledger_request_ex(l, "alice", Q1, &r, &e, &err) == DPA_OK, "reserve 2");
    CHECK(dpa_ledger_reservation(l, "alice", e.request_id, "commit", NULL, &err) == DPA_OK, "commit: %s",
          err.message);
    dpa_ledger_decision_clear(&e);
    CHECK(verify_ok(l, NULL), "verify after reservations");
    free(before);
    free(after);
    /* lifecycle */
    CHECK(dpa_ledger_unit_lifecycle(l, "bob", "freeze", "admin", "audit", &err) == DPA_OK, "freeze");
    CHECK(dpa_ledger_request(l, "bob", Q1, &d, &err) == DPA_EINVAL && strstr(err.message, "frozen"),
          "a frozen unit accepted a request: %s", err.message);
    CHECK(dpa_ledger_unit_lifecycle(l, "bob", "unfreeze", "admin", NULL, &err) == DPA_OK, "unfreeze");
    CHECK(request(l, "bob", Q1) == 1, "request after unfreeze");
    CHECK(dpa_ledger_unit_lifecycle(l, "bob", "archive", "admin", "done", &err) == DPA_OK, "archive");
    CHECK(dpa_ledger_unit_lifecycle(l, "bob", "unfreeze", "admin", NULL, &err) == DPA_EINVAL, "unarchived");
    CHECK(dpa_ledger_unit_topup(l, "bob", "{\"filter\": \"pure\", \"epsilon\": 5}", NULL, NULL, &err) ==
              DPA_EINVAL, "archived topped up");
    CHECK(dpa_ledger_request_ex(l, "bob", Q1, NULL, &d, &err) == DPA_EINVAL && strstr(err.message, "archived"),
          "archived accepted a request");
    /* top-up */
    CHECK(dpa_ledger_unit_topup(l, "alice", "{\"filter\": \"pure\", \"epsilon\": 0.5}", NULL, NULL, &err) ==
              DPA_EINVAL, "a lower budget accepted");
    CHECK(dpa_ledger_unit_topup(l, "alice", "{\"filter\": \"zcdp\", \"rho\": 5}", NULL, NULL, &err) == DPA_EINVAL,
          "another kind accepted");
    /* alice spent 0.25 + 0.25 + 0.25 (the released 0.5 not): 0.5 more does not fit in 1 */
    CHECK(request(l, "alice", Q2) == 0, "alice's 0.5 should be refused before the top-up");
    CHECK(dpa_ledger_unit_topup(l, "alice", "{\"filter\": \"pure\", \"epsilon\": 2}", "admin", "more", &err) ==
              DPA_OK, "top-up: %s", err.message);
    CHECK(request(l, "alice", Q2) == 1, "the top-up did not raise the remaining budget");
    CHECK(verify_ok(l, NULL), "verify after lifecycle and top-up");
    /* export and import keep every entry kind, and the import verifies */
    {
        char *doc = NULL, *doc2 = NULL, p2[300];
        dpa_ledger *m;
        CHECK(dpa_ledger_export_json(l, &doc, &err) == DPA_OK, "export: %s", err.message);
        new_location(p2, sizeof p2, "res-copy.db");
        CHECK(dpa_ledger_import_json(p2, doc, &err) == DPA_OK, "import: %s", err.message);
        m = open_ledger(p2);
        CHECK(verify_ok(m, NULL) && history_length(m) == history_length(l), "the import");
        CHECK(dpa_ledger_export_json(m, &doc2, &err) == DPA_OK && !strcmp(doc, doc2), "export of the import differs");
        CHECK(dpa_ledger_request(m, "bob", Q1, &d, &err) == DPA_EINVAL && strstr(err.message, "archived"),
              "the import lost the archive");
        dpa_ledger_close(m);
        free(doc);
        free(doc2);
    }
    dpa_ledger_close(l);
    remove_tmpdir();
}

static void test_periods_pages(void **st)
{
    char path[300];
    dpa_ledger *l;
    dpa_ledger_unit_opts uo = {NULL, NULL, 3600, "admin"};
    dpa_ledger_decision d;
    dpa_error err;
    char *json;
    (void)st;
    make_tmpdir();
    l = fresh(path, sizeof path, "per.db");
    setenv("DPACCT_LEDGER_NOW", "", 1);
    CHECK(dpa_ledger_add_unit_ex(l, "daily", &uo, &err) == DPA_OK, "add with period: %s", err.message);
    CHECK(request(l, "daily", Q2) == 1 && request(l, "daily", Q2) == 1 && request(l, "daily", Q1) == 0,
          "the first period's budget");
    {
        char now[40];
        snprintf(now, sizeof now, "%ld", (long)time(NULL) + 3700);
        setenv("DPACCT_LEDGER_NOW", now, 1);
    }
    CHECK(dpa_ledger_request_ex(l, "daily", Q1, NULL, &d, &err) == DPA_OK && d.accepted && d.generation == 1,
          "after the boundary: accepted in generation 1 (%s)", err.message);
    dpa_ledger_decision_clear(&d);
    unsetenv("DPACCT_LEDGER_NOW");
    CHECK(verify_ok(l, NULL), "verify after a roll");
    /* tenants, tokens */
    {
        char *tok = NULL, *id = NULL;
        dpa_ledger_identity who;
        CHECK(dpa_ledger_add_tenant(l, "acme", "admin", &err) == DPA_OK, "tenant: %s", err.message);
        CHECK(dpa_ledger_token_create(l, "acme", DPA_LEDGER_ROLE_REQUEST, "ci", "admin", &tok, &id, &err) == DPA_OK,
              "token: %s", err.message);
        CHECK(dpa_ledger_authenticate(l, tok, &who, &err) == DPA_OK && !strcmp(who.tenant, "acme") &&
                  who.role == DPA_LEDGER_ROLE_REQUEST && !strcmp(who.token_id, id), "authenticate");
        {
            char wrong[80];
            snprintf(wrong, sizeof wrong, "%s", tok);
            wrong[10] = wrong[10] == 'a' ? 'b' : 'a';
            CHECK(dpa_ledger_authenticate(l, wrong, &who, &err) == DPA_EINVAL &&
                      !strcmp(err.message, "unknown or revoked token"), "a wrong token accepted");
        }
        if (!use_pg) { /* the database holds no secret */
            FILE *f = fopen(path, "rb");
            char *buf = malloc(1 << 22);
            size_t n = f ? fread(buf, 1, (1 << 22) - 1, f) : 0;
            buf[n] = 0;
            CHECK(f && memmem(buf, n, tok + 4, 64) == NULL, "the token is in the database file");
            if (f)
                fclose(f);
            free(buf);
        }
        CHECK(dpa_ledger_token_revoke(l, id, "admin", &err) == DPA_OK, "revoke");
        CHECK(dpa_ledger_authenticate(l, tok, &who, &err) == DPA_EINVAL, "a revoked token accepted");
        CHECK(dpa_ledger_token_list_json(l, "acme", &json, &err) == DPA_OK && strstr(json, "\"revoked\": true") &&
                  !strstr(json, "hash"), "token list");
        free(json);
        uo.tenant = "acme";
        uo.period_seconds = 0;
        CHECK(dpa_ledger_add_unit_ex(l, "acme-1", &uo, &err) == DPA_OK, "unit of acme");
        uo.tenant = "nope";
        CHECK(dpa_ledger_add_unit_ex(l, "x", &uo, &err) == DPA_EINVAL, "unit of an unknown tenant");
        free(tok);
        free(id);
    }
    /* pages: every entry exactly once */
    for (int lim = 1; lim <= 4; lim++) {
        long long after = 0, seen = 0, last = 0;
        for (;;) {
            json_t *v, *e;
            size_t i;
            CHECK(dpa_ledger_history_page_json(l, NULL, after, NULL, NULL, lim, &json, &err) == DPA_OK, "page");
            v = json_loads(json, 0, NULL);
            free(json);
            json_array_foreach(json_object_get(v, "entries"), i, e) {
                long long id = json_integer_value(json_object_get(e, "id"));
                CHECK(id > last, "entries out of order or repeated");
                last = id;
                seen++;
            }
            e = json_object_get(v, "next");
            after = json_is_integer(e) ? json_integer_value(e) : -1;
            json_decref(v);
            if (after < 0)
                break;
        }
        CHECK((size_t)seen == history_length(l), "pages of %d listed %lld of %zu", lim, seen, history_length(l));
    }
    {
        json_t *v;
        CHECK(dpa_ledger_units_page_json(l, NULL, NULL, 2, &json, &err) == DPA_OK, "units page");
        v = json_loads(json, 0, NULL);
        CHECK(json_array_size(json_object_get(v, "units")) == 2 &&
                  !strcmp(json_string_value(json_object_get(v, "next")), "alice"), "units page 1: %s", json);
        json_decref(v);
        free(json);
        CHECK(dpa_ledger_units_page_json(l, "acme", NULL, 10, &json, &err) == DPA_OK && strstr(json, "acme-1") &&
                  !strstr(json, "\"alice\""), "tenant page");
        free(json);
    }
    CHECK(dpa_ledger_ping(l, &err) == DPA_OK, "ping");
    CHECK(verify_ok(l, NULL), "verify with tenants and tokens");
    {
        /* an export keeps them: the import verifies, and the revoked token stays revoked */
        char *doc = NULL, p2[300];
        dpa_ledger *m;
        CHECK(dpa_ledger_export_json(l, &doc, &err) == DPA_OK, "export");
        new_location(p2, sizeof p2, "per-copy.db");
        CHECK(dpa_ledger_import_json(p2, doc, &err) == DPA_OK, "import with tokens: %s", err.message);
        m = open_ledger(p2);
        CHECK(verify_ok(m, NULL), "the import with tokens does not verify");
        CHECK(dpa_ledger_token_list_json(m, NULL, &json, &err) == DPA_OK && strstr(json, "\"revoked\": true"),
              "the import lost the revocation");
        free(json);
        dpa_ledger_close(m);
        free(doc);
    }
    dpa_ledger_close(l);
    /* a token record edited behind the ledger's back (a role raised, the revocation undone) */
    tamper(path, "UPDATE dpacct_meta SET value = replace(value, 'true', 'false') WHERE key LIKE 'token:%'");
    l = open_ledger(path);
    CHECK(!verify_ok(l, NULL), "an undone revocation was not detected");
    dpa_ledger_close(l);
    remove_tmpdir();
}

/* A format-2 ledger (the chain without format 3's columns) upgraded. */
static void test_upgrade2(void **st)
{
    char path[300];
    dpa_ledger *l;
    dpa_error err;
    (void)st;
    make_tmpdir();
    l = fresh(path, sizeof path, "up2.db");
    CHECK(request(l, "alice", Q1) == 1 && request(l, "bob", Q2) == 1, "requests");
    dpa_ledger_close(l);
    tamper(path, use_pg ? "UPDATE dpacct_meta SET value = 'dpacct-ledger 2' WHERE key = 'format'; "
                          "ALTER TABLE dpacct_units DROP COLUMN tenant, DROP COLUMN lifecycle; "
                          "ALTER TABLE dpacct_requests DROP COLUMN kind, DROP COLUMN actor"
                        : "UPDATE dpacct_meta SET value = 'dpacct-ledger 2' WHERE key = 'format'; "
                          "ALTER TABLE dpacct_units DROP COLUMN tenant; ALTER TABLE dpacct_units DROP COLUMN lifecycle;"
                          "ALTER TABLE dpacct_requests DROP COLUMN kind; ALTER TABLE dpacct_requests DROP COLUMN actor");
    CHECK(dpa_ledger_open(path, &err) == NULL && strstr(err.message, "format 2"), "format 2 opened: %s",
          err.message);
    CHECK(dpa_ledger_upgrade(path, NULL, 0, &err) == DPA_OK, "upgrade 2 -> 3: %s", err.message);
    l = open_ledger(path);
    CHECK(verify_ok(l, NULL) && history_length(l) == 2, "the upgraded ledger");
    CHECK(request(l, "alice", Q1) == 1 && verify_ok(l, NULL), "a request after the upgrade");
    dpa_ledger_close(l);
    remove_tmpdir();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_idempotency, setup, teardown),
        cmocka_unit_test_setup_teardown(test_batch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reservation_lifecycle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_periods_pages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_upgrade2, setup, teardown),
    };
    int rc;
    signal(SIGPIPE, SIG_IGN);
    use_pg = 0;
    rc = cmocka_run_group_tests_name("ledger service on SQLite", tests, NULL, NULL);
    pg_dir = getenv("DPA_TEST_PG_DIR");
    pg_script = getenv("DPA_TEST_PG_SCRIPT");
    if (pg_dir && *pg_dir && pg_script && *pg_script) {
        use_pg = 1;
        rc |= cmocka_run_group_tests_name("ledger service on PostgreSQL", tests, NULL, NULL);
    }
    return rc;
}
