/* The ledger's storage interface (internal).
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A backend stores three things: metadata (key -> text: the format tag, the
 * default filter configuration, ...), units (name, filter configuration,
 * initial and current filter state, request counts) and the append-only
 * request history.  The ledger (ledger.c) decides each request on a
 * snapshot (the unit and the chain's head, read together without a lock)
 * and records it with commit_request, which checks that the unit and the
 * head are unchanged and then appends the request and stores the unit's
 * new state and the new head, in one atomic write; units, imports and
 * upgrades go through begin_write ... commit.  It relies on the backend for:
 *  - atomicity: a transaction is committed whole or not at all, also when
 *    the process is killed (the next open sees the state before it);
 *  - isolation of decisions: between get_unit(lock = 1) and commit no other
 *    transaction can change or lock that unit (SQLite: BEGIN IMMEDIATE takes
 *    the database's write lock; a server backend: SELECT ... FOR UPDATE or
 *    serializable isolation);
 *  - durability: commit returns only after the transaction is on stable
 *    storage (SQLite: synchronous = FULL in WAL mode).
 * begin_read gives a consistent snapshot for status, history and verify.
 *
 * All strings handed out (in dpa_store_unit, dpa_store_request, get_meta)
 * are malloc'ed and owned by the caller (dpa_store_unit_clear /
 * dpa_store_request_clear); strings passed in are borrowed. */
#ifndef DPA_LEDGER_STORE_H
#define DPA_LEDGER_STORE_H

#include "dpacct/status.h"

typedef struct dpa_store_unit {
    char *name;
    char *filter;         /* filter configuration JSON */
    char *initial_state;  /* filter state JSON when the unit was added */
    char *state;          /* current filter state JSON */
    long long requests;   /* recorded requests (accepted + rejected) */
    long long accepted;
    char *created;        /* UTC time, ISO 8601 */
    long long chain_index; /* the unit's number among the units (1, 2, ...) */
    long long chain_after; /* the last request id of the chain when it was added */
    char *chain;          /* the unit's link of the hash chain (chain.h), hex */
    /* format 3 (NULL in a struct written by the ledger: the default) */
    char *tenant;         /* immutable, chained; NULL: "default" */
    long long period_seconds; /* immutable, chained; 0: no period */
    char *lifecycle;      /* "active" | "frozen" | "archived" (NULL: active) */
    long long generation; /* the budget period's number (0, 1, ...) */
    char *period_start;   /* UTC time the current generation started ("" / NULL: created) */
    char *filter_now;     /* the configuration after top-ups ("" / NULL: filter) */
} dpa_store_unit;

/* The unit's configuration in force (filter_now after a top-up, else filter). */
const char *dpa_store_unit_config(const dpa_store_unit *u);

typedef struct dpa_store_request {
    long long id;         /* assigned by append_request, increasing */
    char *unit;
    char *time;           /* UTC time, ISO 8601 with microseconds */
    char *spec;           /* the request's spec JSON, as given */
    int accepted;
    char *reason;
    char *state_before, *state_after;
    char *chain;          /* the request's link of the hash chain (chain.h), hex */
    /* format 3: every entry of a unit's history, not only requests */
    char *kind;           /* "request" | "reserve" | "commit" | "release" | "freeze" |
                           * "unfreeze" | "archive" | "topup" | "roll" (NULL: request) */
    char *actor;          /* who (NULL: "local") */
    char *idem_key;       /* idempotency key (NULL: none) */
    long long generation; /* the unit's generation the entry belongs to */
    long long ref;        /* commit / release: the reservation's id; else 0 */
} dpa_store_request;

void dpa_store_unit_clear(dpa_store_unit *u);
void dpa_store_request_clear(dpa_store_request *r);

/* Callbacks of the iterators: return 0 to go on, non-zero to stop (the
 * iterator then returns DPA_OK). */
typedef int (*dpa_store_unit_fn)(void *ctx, const dpa_store_unit *u);
typedef int (*dpa_store_request_fn)(void *ctx, const dpa_store_request *r);

typedef struct dpa_store dpa_store;
struct dpa_store_commit;
typedef struct dpa_store_ops {
    const char *name; /* "sqlite", "postgresql" */
    void (*close)(dpa_store *s);
    dpa_status (*begin_write)(dpa_store *s, dpa_error *err);
    dpa_status (*begin_read)(dpa_store *s, dpa_error *err);
    dpa_status (*commit)(dpa_store *s, dpa_error *err);
    void (*rollback)(dpa_store *s);
    /* *value = NULL if the key is absent. */
    dpa_status (*get_meta)(dpa_store *s, const char *key, char **value, dpa_error *err);
    dpa_status (*set_meta)(dpa_store *s, const char *key, const char *value, dpa_error *err);
    /* get_meta that, in a write transaction, also locks the key's row until
     * commit or rollback (the chain's head: one writer extends it at a time). */
    dpa_status (*lock_meta)(dpa_store *s, const char *key, char **value, dpa_error *err);
    /* Upgrade the tables of format `from` (1 or 2) to DPA_LEDGER_FORMAT (1:
     * the chain columns; both: format 3's columns), in the caller's write
     * transaction. */
    dpa_status (*upgrade_tables)(dpa_store *s, int from, dpa_error *err);
    /* Delete every request and unit (the upgrade rewrites them chained). */
    dpa_status (*delete_all)(dpa_store *s, dpa_error *err);
    /* *found = 0 (out zeroed) if there is no such unit; lock = 1 inside a
     * write transaction locks the unit until commit or rollback. */
    dpa_status (*get_unit)(dpa_store *s, const char *name, int lock, dpa_store_unit *out,
                           int *found, dpa_error *err);
    /* DPA_EINVAL if the unit exists. */
    dpa_status (*insert_unit)(dpa_store *s, const dpa_store_unit *u, dpa_error *err);
    /* Sets state, requests, accepted, lifecycle, generation, period_start
     * and filter_now of the unit u->name. */
    dpa_status (*update_unit)(dpa_store *s, const dpa_store_unit *u, dpa_error *err);
    /* Appends r: r->id = 0 assigns the next id (and sets r->id); r->id > 0
     * keeps that id (import of a ledger), DPA_ESTORAGE if it is taken. */
    dpa_status (*append_request)(dpa_store *s, dpa_store_request *r, dpa_error *err);
    /* Units in name order (one unit if name != NULL). */
    dpa_status (*each_unit)(dpa_store *s, const char *name, dpa_store_unit_fn fn, void *ctx,
                            dpa_error *err);
    /* Requests in id order (of one unit if unit != NULL). */
    dpa_status (*each_request)(dpa_store *s, const char *unit, dpa_store_request_fn fn,
                               void *ctx, dpa_error *err);
    /* The decision path (ledger.c), outside any transaction of the caller.
     * snapshot: one unit (*found = 0, out zeroed, if there is none) and the
     * chain's head (*head, NULL if absent), read together in one consistent
     * read that takes no lock. */
    dpa_status (*snapshot)(dpa_store *s, const char *name, dpa_store_unit *out, int *found, char **head,
                           dpa_error *err);
    /* commit_request: c (below) in one atomic, durable write: if the unit
     * is still as in c->snap (request count, state and configuration: the
     * version check) and the head still c->head_before, append c->r, set
     * the unit's state to c->r->state_after with one more request (and one
     * more accepted if c->r->accepted) and the head to c->head_after, and
     * *conflict = 0; otherwise nothing is written and *conflict = 1 if the
     * unit changed or vanished (decide again), 2 if only the head moved
     * (*head = the current head, malloc'ed: link again). */
    dpa_status (*commit_request)(dpa_store *s, const struct dpa_store_commit *c, int *conflict, char **head,
                                 dpa_error *err);
    /* Format 3.  One history entry of unit: by idempotency key (key != NULL)
     * or by id; *found = 0 if none. */
    dpa_status (*get_request)(dpa_store *s, const char *unit, long long id, const char *key,
                              dpa_store_request *out, int *found, dpa_error *err);
    /* Metadata rows whose key starts with prefix, in key order (tenants and
     * tokens live there): fn(ctx, key, value), non-zero to stop. */
    dpa_status (*each_meta)(dpa_store *s, const char *prefix, int (*fn)(void *ctx, const char *key,
                            const char *value), void *ctx, dpa_error *err);
} dpa_store_ops;

/* One decision's commit (commit_request). */
typedef struct dpa_store_commit {
    const dpa_store_unit *snap;   /* the unit as decided on */
    const dpa_store_request *r;   /* every field set (id, chain; state_before = snap->state) */
    const char *head_before;      /* the head r->chain was linked on */
    const char *head_after;       /* the head with r */
} dpa_store_commit;

/* snapshot and commit_request from the other operations, in a read and a
 * write transaction (store.c; the SQLite backend's, where a statement costs
 * no round trip). */
dpa_status dpa_store_snapshot_tx(dpa_store *s, const char *name, dpa_store_unit *out, int *found, char **head,
                                 dpa_error *err);
dpa_status dpa_store_commit_request_tx(dpa_store *s, const dpa_store_commit *c, int *conflict, char **head,
                                       dpa_error *err);

struct dpa_store {
    const dpa_store_ops *ops;
};

/* The format tag of the ledgers this version writes (meta "format"). */
#define DPA_LEDGER_FORMAT "dpacct-ledger 3"
/* The format before tenants, lifecycle and the service's history kinds. */
#define DPA_LEDGER_FORMAT_2 "dpacct-ledger 2"
/* The format before the hash chain (upgraded by dpa_ledger_upgrade). */
#define DPA_LEDGER_FORMAT_1 "dpacct-ledger 1"

/* 1 if format is one dpa_ledger_upgrade upgrades (1 or 2). */
int dpa_store_format_upgradable(const char *format);
/* DPA_OK if format (the stored tag) is DPA_LEDGER_FORMAT; otherwise
 * DPA_EINVAL saying what the location holds (shown: the location as it may
 * be printed). */
dpa_status dpa_store_check_format(const char *format, const char *shown, dpa_error *err);
/* The columns the chain adds to the tables of format 1 (one statement each). */
extern const char *const DPA_STORE_UPGRADE_SQL[4];
/* What format 3 adds to the tables of format 2 (one statement each; a
 * column already there is kept: the backends skip it). */
#define DPA_STORE_UPGRADE3_N 12
extern const char *const DPA_STORE_UPGRADE3_SQL[DPA_STORE_UPGRADE3_N];

/* ---- backends ---- */
/* create: a new, empty ledger (tables and the format tag) with its write
 * transaction still OPEN: the caller adds the metadata and whatever else
 * belongs to the new ledger and commits, which makes it appear whole, or
 * rolls back or closes, which leaves nothing: a ledger exists whole or not
 * at all, also when the process is killed. */
/* SQLite (store_sqlite.c).  create: DPA_EINVAL if the path exists; the
 * ledger is built in a temporary file beside it and linked to the path by
 * the commit.  open: readonly = 1 opens the file read-only (status,
 * history, verify, export: a mode 0444 file, a read-only directory or
 * mount); DPA_ESTORAGE with SQLite's message for a corrupted file. */
dpa_status dpa_store_sqlite_create(const char *path, dpa_store **out, dpa_error *err);
/* Remove an SQLite database file and its -wal and -shm files. */
void dpa_store_sqlite_unlink(const char *path);
/* mode: DPA_STORE_READ, DPA_STORE_WRITE, DPA_STORE_UPGRADE (accepts
 * formats 1 and 2 too). */
enum { DPA_STORE_READ, DPA_STORE_WRITE, DPA_STORE_CREATE, DPA_STORE_UPGRADE };
dpa_status dpa_store_sqlite_open(const char *path, int mode, dpa_store **out, dpa_error *err);
/* PostgreSQL (store_pg.c), location a libpq URI.  create: DPA_EINVAL if the
 * database already holds a ledger.  Without libpq at build time both return
 * DPA_EUNSUPPORTED with the reason. */
dpa_status dpa_store_pg_create(const char *uri, dpa_store **out, dpa_error *err);
dpa_status dpa_store_pg_open(const char *uri, int mode, dpa_store **out, dpa_error *err);

/* The current UTC time as ISO 8601 with microseconds ("2026-11-23T17:45:01.123456Z"). */
void dpa_store_now(char buf[40]);

#endif
