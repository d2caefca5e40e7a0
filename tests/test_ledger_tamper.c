/* The ledger's tamper evidence (issue 21, item 2): one regression test per
 * kind of edit of the database behind the ledger's back (26 kinds), keyed
 * chains, and the upgrade of a format-1 ledger; on SQLite, and again on
 * PostgreSQL when DPA_TEST_PG_DIR names a running throwaway server of
 * tests/pg_server.sh (the CTest fixture of CMakeLists.txt starts one).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#include <errno.h>
#include <jansson.h>
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

/* ---- tampering: one regression test per kind (issue 21, item 2) ---- */

/* A kind of edit of the database behind the ledger's back; anchor = 1 if
 * only a verify against an anchor (the head of an earlier report) can see
 * it: the history cut back to a consistent earlier point. */
typedef struct tamper_kind {
    const char *name, *sql;
    int anchor;
} tamper_kind;

static const tamper_kind TAMPER_KINDS[] = {
    {"a decision flipped", "UPDATE dpacct_requests SET decision = 'rejected' WHERE id = 2", 0},
    {"spend erased from the current state", "UPDATE dpacct_units SET state = initial_state WHERE name = 'alice'", 0},
    {"a request deleted", "DELETE FROM dpacct_requests WHERE id = 2", 0},
    {"a counter changed", "UPDATE dpacct_units SET requests = requests + 1 WHERE name = 'alice'", 0},
    {"a spec edited", "UPDATE dpacct_requests SET spec = replace(spec, '0.2', '0.3') WHERE id = 1", 0},
    {"a unit's budget edited", "UPDATE dpacct_units SET filter = replace(filter, ':1}', ':100}') WHERE name = 'alice'", 0},
    {"the history deleted and the states reset",
     "DELETE FROM dpacct_requests; UPDATE dpacct_units SET state = initial_state, requests = 0, accepted = 0", 0},
    {"the history deleted, states and the chain's head reset",
     "DELETE FROM dpacct_requests; UPDATE dpacct_units SET state = initial_state, requests = 0, accepted = 0; "
     "UPDATE dpacct_meta SET value = '2 0 2 ' || (SELECT chain FROM dpacct_units WHERE name = 'bob') "
     "WHERE key = 'chain_head'; DELETE FROM dpacct_units WHERE chain_index > 2", 1},
    {"the last request cut off, its unit and the head rolled back",
     "DELETE FROM dpacct_requests WHERE id = 6; UPDATE dpacct_units SET requests = requests - 1 WHERE name = 'alice'; "
     "UPDATE dpacct_meta SET value = '9 5 4 ' || (SELECT chain FROM dpacct_requests WHERE id = 5) "
     "WHERE key = 'chain_head'", 1},
    {"request ids renumbered", "UPDATE dpacct_requests SET id = id + 100", 0},
    {"a garbage timestamp", "UPDATE dpacct_requests SET time = 'garbage' WHERE id = 3", 0},
    {"two requests reordered",
     "UPDATE dpacct_requests SET id = 1000 WHERE id = 1; UPDATE dpacct_requests SET id = 1 WHERE id = 3; "
     "UPDATE dpacct_requests SET id = 3 WHERE id = 1000", 0},
    {"a request inserted (a copy of a rejection)",
     "INSERT INTO dpacct_requests (id, unit, time, spec, decision, reason, state_before, state_after, chain) "
     "SELECT 7, unit, time, spec, decision, reason, state_before, state_after, chain FROM dpacct_requests WHERE id = 6; "
     "UPDATE dpacct_units SET requests = requests + 1 WHERE name = 'alice'", 0},
    {"a request moved to another unit", "UPDATE dpacct_requests SET unit = 'bob' WHERE id = 4 OR id = 1", 0},
    {"the default filter edited",
     "UPDATE dpacct_meta SET value = replace(value, ':1}', ':100}') WHERE key = 'default_filter'", 0},
    {"auto units switched on", "UPDATE dpacct_meta SET value = '1' WHERE key = 'auto_units'", 0},
    {"a unit deleted with its history",
     "DELETE FROM dpacct_requests WHERE unit = 'bob'; DELETE FROM dpacct_units WHERE name = 'bob'", 0},
    {"a unit inserted",
     "INSERT INTO dpacct_units (name, filter, initial_state, state, requests, accepted, created, chain_index, "
     "chain_after, chain) SELECT 'mallory', filter, initial_state, initial_state, 0, 0, created, 5, 6, chain "
     "FROM dpacct_units WHERE name = 'dave'", 0},
    {"a unit renamed", "UPDATE dpacct_units SET name = 'zed' WHERE name = 'dave'", 0},
    {"a reason edited", "UPDATE dpacct_requests SET reason = 'ok' WHERE id = 6", 0},
    {"a state_before edited", "UPDATE dpacct_requests SET state_before = state_after WHERE id = 2", 0},
    {"a chain link overwritten",
     "UPDATE dpacct_requests SET chain = CASE WHEN substr(chain, 1, 1) = '0' THEN '1' ELSE '0' END || "
     "substr(chain, 2) WHERE id = 3", 0},
    {"a unit's creation time edited", "UPDATE dpacct_units SET created = '2000-01-01' WHERE name = 'bob'", 0},
    {"two units' chain numbers swapped",
     "UPDATE dpacct_units SET chain_index = 99 WHERE name = 'alice'; UPDATE dpacct_units SET chain_index = 1 "
     "WHERE name = 'bob'; UPDATE dpacct_units SET chain_index = 2 WHERE name = 'alice'", 0},
    {"the chain's head deleted", "DELETE FROM dpacct_meta WHERE key = 'chain_head'", 0},
    {"the creation time of the ledger edited", "UPDATE dpacct_meta SET value = '2000' WHERE key = 'created'", 0},
};

/* The tampering test's ledger: units alice and bob; alice 0.2 x 3 (ids 1-3),
 * bob 0.3 (4); units carol and dave added; carol 0.1 (5); alice 0.5 (6,
 * rejected).  *anchor: the head of its verify report. */
static void tamper_ledger(const char *path, const void *key, size_t key_len, char *anchor, size_t n)
{
    const char *const units[] = {"alice", "bob"};
    dpa_ledger_init_opts o = {"{\"filter\": \"pure\", \"epsilon\": 1}", 0, units, 2};
    dpa_error err;
    dpa_ledger *l;
    char *report = NULL;
    int ok = 0;
    if (dpa_ledger_create_keyed(path, &o, key, key_len, &err) != DPA_OK)
        fail_msg("create: %s", err.message);
    l = dpa_ledger_open_keyed(path, 0, key, key_len, &err);
    if (!l)
        fail_msg("open: %s", err.message);
    for (int i = 0; i < 3; i++)
        request(l, "alice", "{\"pure\": {\"epsilon\": 0.2}}");
    request(l, "bob", "{\"pure\": {\"epsilon\": 0.3}}");
    dpa_ledger_add_unit(l, "carol", NULL, NULL);
    dpa_ledger_add_unit(l, "dave", NULL, NULL);
    request(l, "carol", "{\"pure\": {\"epsilon\": 0.1}}");
    CHECK(request(l, "alice", "{\"pure\": {\"epsilon\": 0.5}}") == 0, "the sixth request is a rejection");
    CHECK(dpa_ledger_verify(l, &ok, &report, &err) == DPA_OK && ok, "before tampering: %s", report);
    if (report) {
        json_t *r = json_loads(report, 0, NULL);
        snprintf(anchor, n, "%s", json_string_value(json_object_get(r, "head")));
        json_decref(r);
    }
    free(report);
    dpa_ledger_close(l);
}

static void test_tamper_kinds(void **state)
{
    size_t nk = sizeof TAMPER_KINDS / sizeof *TAMPER_KINDS;
    (void)state;
    CHECK(nk >= 18, "only %zu kinds", nk);
    for (size_t k = 0; k < nk; k++) {
        char path[300], anchor[100] = "", *report = NULL;
        dpa_ledger *l;
        dpa_error err;
        int ok = 1;
        make_tmpdir();
        new_location(path, sizeof path, "t.db");
        tamper_ledger(path, NULL, 0, anchor, sizeof anchor);
        tamper(path, TAMPER_KINDS[k].sql);
        l = dpa_ledger_open_readonly(path, &err);
        if (l) {
            dpa_status st = dpa_ledger_verify_anchor(l, anchor, &ok, &report, &err);
            CHECK(st != DPA_OK || !ok, "verify with the anchor missed: %s", TAMPER_KINDS[k].name);
            free(report);
            report = NULL;
            if (!TAMPER_KINDS[k].anchor) {
                st = dpa_ledger_verify(l, &ok, &report, &err);
                CHECK(st != DPA_OK || !ok, "verify missed: %s", TAMPER_KINDS[k].name);
                free(report);
            }
            dpa_ledger_close(l);
        } /* else: the edit made it unopenable, which is detection too */
        remove_tmpdir();
    }
    print_message("  %zu kinds of tampering detected\n", nk);
}

/* With a key: verify and writers need it, a wrong one is refused, and a
 * ledger rebuilt without it (an export imported anew: a valid plain SHA-256
 * chain) fails verify with the key. */
static void test_tamper_keyed(void **state)
{
    static const char key[] = "a secret key of the operator", wrong[] = "another key";
    char path[300], copy[300], anchor[100], *json = NULL, *report = NULL;
    dpa_ledger *l;
    dpa_error err;
    int ok = 1;
    (void)state;
    make_tmpdir();
    new_location(path, sizeof path, "k.db");
    tamper_ledger(path, key, sizeof key - 1, anchor, sizeof anchor);
    CHECK(dpa_ledger_open(path, &err) == NULL && err.status == DPA_EINVAL, "opened for writing without the key");
    CHECK(dpa_ledger_open_keyed(path, 1, wrong, sizeof wrong - 1, &err) == NULL, "a wrong key accepted");
    l = dpa_ledger_open_readonly(path, &err);
    CHECK(l != NULL, "read-only without the key: %s", err.message);
    if (l) {
        CHECK(dpa_ledger_verify(l, &ok, &report, &err) == DPA_EINVAL, "verify without the key");
        CHECK(dpa_ledger_export_json(l, &json, &err) == DPA_OK, "export: %s", err.message);
        dpa_ledger_close(l);
    }
    /* the attacker rebuilds the ledger without the key (here from its own
     * export, which an edit would change only in content): a valid plain
     * SHA-256 chain over the whole history */
    if (json) {
        new_location(copy, sizeof copy, "forged.db");
        CHECK(dpa_ledger_import_json(copy, json, &err) == DPA_OK, "the forged import: %s", err.message);
        l = dpa_ledger_open_keyed(copy, 1, key, sizeof key - 1, &err);
        if (l) {
            dpa_status st = dpa_ledger_verify(l, &ok, &report, &err);
            CHECK(st != DPA_OK || !ok, "a ledger rebuilt without the key passes verify with the key");
            free(report);
            dpa_ledger_close(l);
        }
        free(json);
    }
    /* an edit and the key: detected as without one */
    tamper(path, TAMPER_KINDS[5].sql);
    l = dpa_ledger_open_keyed(path, 1, key, sizeof key - 1, &err);
    CHECK(l != NULL, "open with the key: %s", err.message);
    if (l) {
        CHECK(dpa_ledger_verify_anchor(l, anchor, &ok, &report, &err) == DPA_OK && !ok, "keyed: budget edit missed");
        free(report);
        dpa_ledger_close(l);
    }
    remove_tmpdir();
}

/* Back to format 1: the chain's metadata and links gone (as an old ledger),
 * and the filter states in another spelling (a trailing space: format-1
 * ledgers stored their states in an earlier format), which the upgrade
 * writes anew by replaying the recorded history. */
static void to_format_1(const char *path)
{
    tamper(path, use_pg ? "UPDATE dpacct_meta SET value = 'dpacct-ledger 1' WHERE key = 'format'; "
                          "DELETE FROM dpacct_meta WHERE key IN ('chain', 'key_check', 'chain_head'); "
                          "ALTER TABLE dpacct_units DROP COLUMN chain_index, DROP COLUMN chain_after, DROP COLUMN chain; "
                          "ALTER TABLE dpacct_requests DROP COLUMN chain"
                        : "UPDATE dpacct_meta SET value = 'dpacct-ledger 1' WHERE key = 'format'; "
                          "DELETE FROM dpacct_meta WHERE key IN ('chain', 'key_check', 'chain_head'); "
                          "ALTER TABLE dpacct_units DROP COLUMN chain_index; ALTER TABLE dpacct_units DROP COLUMN chain_after; "
                          "ALTER TABLE dpacct_units DROP COLUMN chain; ALTER TABLE dpacct_requests DROP COLUMN chain");
    tamper(path, "UPDATE dpacct_units SET initial_state = initial_state || ' ', state = state || ' '; "
                 "UPDATE dpacct_requests SET state_before = state_before || ' ', state_after = state_after || ' '");
}

/* A ledger of format 1 (before the chain): refused with instructions, then
 * upgraded in place (its states written anew) and verified; tampering after
 * that is detected.  A recorded rejection that the current filter would
 * accept stops the upgrade, naming the request. */
static void test_upgrade(void **state)
{
    char path[300], path2[300], anchor[100];
    dpa_ledger *l;
    dpa_error err;
    (void)state;
    make_tmpdir();
    new_location(path, sizeof path, "old.db");
    tamper_ledger(path, NULL, 0, anchor, sizeof anchor);
    to_format_1(path);
    CHECK(dpa_ledger_open(path, &err) == NULL && err.status == DPA_EINVAL && strstr(err.message, "upgrade"),
          "a format-1 ledger: %s", err.message);
    CHECK(dpa_ledger_upgrade(path, NULL, 0, &err) == DPA_OK, "upgrade: %s", err.message);
    CHECK(dpa_ledger_upgrade(path, NULL, 0, &err) == DPA_EINVAL, "upgraded twice");
    l = open_ledger(path);
    CHECK(verify_ok(l, NULL), "the upgraded ledger does not verify");
    CHECK(request(l, "alice", "{\"pure\": {\"epsilon\": 0.1}}") == 1, "a request after the upgrade");
    CHECK(verify_ok(l, NULL), "a request after the upgrade breaks verify");
    dpa_ledger_close(l);
    tamper(path, TAMPER_KINDS[5].sql);
    l = open_ledger(path);
    CHECK(!verify_ok(l, NULL), "tampering after the upgrade missed");
    dpa_ledger_close(l);
    /* request 6 (alice, 0.5 after 0.6: rejected) made 0.3, which fits */
    new_location(path2, sizeof path2, "old2.db");
    tamper_ledger(path2, NULL, 0, anchor, sizeof anchor);
    to_format_1(path2);
    tamper(path2, "UPDATE dpacct_requests SET spec = replace(spec, '0.5', '0.3') WHERE id = 6");
    CHECK(dpa_ledger_upgrade(path2, NULL, 0, &err) == DPA_EINVAL && strstr(err.message, "request 6") &&
              strstr(err.message, "would accept"), "a rejection the filter would accept now: %s", err.message);
    remove_tmpdir();
}


int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_tamper_kinds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_tamper_keyed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_upgrade, setup, teardown),
    };
    int rc;
    signal(SIGPIPE, SIG_IGN);
    use_pg = 0;
    rc = cmocka_run_group_tests_name("ledger tampering on SQLite", tests, NULL, NULL);
    pg_dir = getenv("DPA_TEST_PG_DIR");
    pg_script = getenv("DPA_TEST_PG_SCRIPT");
    if (pg_dir && *pg_dir && pg_script && *pg_script) {
        use_pg = 1;
        rc |= cmocka_run_group_tests_name("ledger tampering on PostgreSQL", tests, NULL, NULL);
    } else {
        print_message("ledger tampering on PostgreSQL: not run (DPA_TEST_PG_DIR and DPA_TEST_PG_SCRIPT unset)\n");
        if (getenv("DPA_TEST_REQUIRE_PG")) {
            print_error("DPA_TEST_REQUIRE_PG is set but no server was given\n");
            rc = 1;
        }
    }
    return rc;
}
