/* A durable, concurrent privacy-budget ledger.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * A ledger keeps, per protected unit (a dataset, a user, a device), a
 * privacy filter (dpacct/filter.h) and the history of every request made
 * against it.  Each request is one storage transaction that takes the
 * unit's write lock before reading its state, decides, records the decision
 * with the states before and after, and charges the budget: the decision
 * and its spend are atomic, so concurrent processes never both spend the
 * same remaining budget (no check-then-act race), and a process killed at
 * any moment leaves either the whole request or none of it.
 *
 * Storage sits behind an interface (src/ledger/store.h); the backend is
 * chosen by the location: a path is an SQLite database (WAL journal,
 * synchronous commits), a postgresql:// or postgres:// URI a PostgreSQL
 * database (row locks on the unit; available when built with libpq);
 * docs/ledger.md.
 *
 * Ownership: a dpa_ledger is used by one thread at a time (open one per
 * thread or process; many may use one database at once).  Strings returned
 * through char ** are malloc'ed and owned by the caller.
 * Errors: DPA_EINVAL for bad input (unknown unit, malformed spec or
 * configuration, a location that is not a ledger), DPA_EUNSUPPORTED for a
 * spec the unit's filter cannot account (the ledger is then unchanged),
 * DPA_ESTORAGE for a storage failure (the request is not recorded and not
 * charged), DPA_ENOMEM. */
#ifndef DPACCT_LEDGER_H
#define DPACCT_LEDGER_H

#include <stddef.h>
#include "dpacct/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dpa_ledger dpa_ledger;

typedef struct dpa_ledger_init_opts {
    /* The default filter configuration of new units (dpacct/filter.h JSON),
     * required. */
    const char *filter_config;
    /* 1: a request for a unit that does not exist creates it with the default
     * filter; 0 (default): it is refused as bad input. */
    int auto_units;
    /* Units created with the ledger, with the default filter (names as for
     * dpa_ledger_add_unit; NULL / 0 for none). */
    const char *const *units;
    size_t nunits;
} dpa_ledger_init_opts;

/* Create a new ledger at location (with opts->units), in one transaction:
 * on any error nothing is left there.  An SQLite ledger is built in a
 * temporary file beside the path (PATH.dpacct-tmp-XXXXXX) and linked to the
 * path when complete: a process killed meanwhile leaves nothing at the path
 * (at most that temporary file).  ":memory:" is refused (DPA_EINVAL).  DPA_EINVAL if something already
 * exists there, the filter configuration or a unit name is invalid, or a
 * unit is named twice; DPA_ESTORAGE if it cannot be created. */
dpa_status dpa_ledger_create(const char *location, const dpa_ledger_init_opts *opts,
                             dpa_error *err);
/* dpa_ledger_create with the secret key of the hash chain (HMAC-SHA-256;
 * key NULL / key_len 0: a plain SHA-256 chain, as dpa_ledger_create).  The
 * key is never stored in the ledger: every later writer and verify must
 * give it (dpa_ledger_open_keyed); docs/ledger.md. */
dpa_status dpa_ledger_create_keyed(const char *location, const dpa_ledger_init_opts *opts, const void *key,
                                   size_t key_len, dpa_error *err);

/* Open an existing ledger.  NULL and DPA_EINVAL if there is none at location
 * (it is never created implicitly), DPA_ESTORAGE on storage failure (a
 * corrupted SQLite file: with SQLite's message). */
dpa_ledger *dpa_ledger_open(const char *location, dpa_error *err);
/* Open an existing ledger for reading only (status, history, verify,
 * export): an SQLite file is opened read-only, so a mode 0444 file or one
 * on a read-only directory or mount can be read.  dpa_ledger_request and
 * dpa_ledger_add_unit on it return DPA_EINVAL. */
dpa_ledger *dpa_ledger_open_readonly(const char *location, dpa_error *err);
/* Open with the chain's secret key (key NULL / key_len 0: none), read-only
 * if readonly.  DPA_EINVAL if the key is not the ledger's, or if a ledger
 * whose chain is keyed is opened for writing without it (or a plain one
 * with a key). */
dpa_ledger *dpa_ledger_open_keyed(const char *location, int readonly, const void *key, size_t key_len,
                                  dpa_error *err);
void dpa_ledger_close(dpa_ledger *l);

/* Add a unit with a full budget: filter_config NULL for the ledger's default.
 * DPA_EINVAL if the unit exists or the name is empty, longer than
 * DPA_LEDGER_MAX_UNIT bytes, not valid UTF-8 or holds control characters,
 * or the configuration is invalid. */
#define DPA_LEDGER_MAX_UNIT 256
dpa_status dpa_ledger_add_unit(dpa_ledger *l, const char *unit, const char *filter_config,
                               dpa_error *err);

typedef struct dpa_ledger_decision {
    int accepted;          /* 1 accepted and charged, 0 rejected (recorded, not charged) */
    long long request_id;  /* the id of the recorded request */
    char reason[256];      /* the filter's reason or remark ("" if none) */
    char *remaining;       /* remaining budget after the decision, JSON
                            * (dpa_filter_remaining_json); caller frees */
    int replayed;          /* 1 if answered from an earlier request with the same
                            * idempotency key (nothing charged this time) */
    char status[16];       /* "charged" | "reserved" | "rejected" (a released
                            * reservation replayed: "released") */
    long long generation;  /* the unit's budget period (0 for a unit without
                            * periods; see dpa_ledger_unit_opts) */
} dpa_ledger_decision;

/* Decide on one request (spec: an event spec JSON, dpacct/event.h) for a
 * unit, record it and charge the unit's budget if accepted, in one durable
 * transaction.  The decision is computed on a snapshot of the unit's state
 * without any lock; the transaction commits it only if the unit is still in
 * that state (a version check) and otherwise decides again, so concurrent
 * requests never both spend the same budget and a slow decision delays only
 * itself.  Bad input (unknown unit, malformed spec, a spec the filter
 * cannot account) returns an error and leaves the ledger unchanged; so does
 * a storage failure.  When it returns DPA_OK the decision is committed
 * durably (synchronous commit). */
dpa_status dpa_ledger_request(dpa_ledger *l, const char *unit, const char *spec_json,
                              dpa_ledger_decision *out, dpa_error *err);

/* The time limit of one decision (default DPA_LEDGER_DECISION_LIMIT
 * seconds; 0: none).  A request whose decision takes longer is refused as
 * too costly to decide (DPA_EUNSUPPORTED, "too costly to decide"): nothing
 * is recorded or charged.  The decision is made outside any lock, so a slow
 * one never delays requests on other units (or on its own). */
#define DPA_LEDGER_DECISION_LIMIT 5.0
dpa_status dpa_ledger_set_decision_limit(dpa_ledger *l, double seconds, dpa_error *err);

/* Status as JSON: {"filter": {...}, "units": [{"unit", "filter", "requests",
 * "accepted", "remaining", "exhausted"}...]} for every unit, or for one unit
 * when unit is not NULL (DPA_EINVAL if unknown). */
dpa_status dpa_ledger_status_json(dpa_ledger *l, const char *unit, char **json, dpa_error *err);

/* History of a unit (all units if NULL) as a JSON array of requests in order:
 * {"id", "unit", "time", "spec", "decision", "reason", "state_before",
 * "state_after"} (states as JSON values). */
dpa_status dpa_ledger_history_json(dpa_ledger *l, const char *unit, char **json, dpa_error *err);

/* Replay every unit's history from its initial state with a fresh filter and
 * check each recorded decision, each state before and after (the chain), the
 * counts and the stored current state.  *ok = 1 if everything agrees;
 * *report (JSON: {"ok", "units", "requests", "problems": [...]}) says what
 * did not.  Reads one consistent snapshot. */
dpa_status dpa_ledger_verify(dpa_ledger *l, int *ok, char **report, dpa_error *err);
/* verify that also checks the hash chain against an anchor, the "head"
 * ("LINKS:HASH") of an earlier report kept outside the database: the chain
 * must still hold that link, so a history cut back or rolled back to an
 * earlier point is detected too (anchor NULL: dpa_ledger_verify).  The
 * report of both has "head" (the anchor to keep) and "keyed".  A keyed
 * ledger opened without its key: DPA_EINVAL. */
dpa_status dpa_ledger_verify_anchor(dpa_ledger *l, const char *anchor, int *ok, char **report,
                                    dpa_error *err);

/* Upgrade a ledger of format 1 (before the hash chain) in place, in one
 * transaction: its history is replayed first (verify's checks; a ledger
 * that does not replay is refused, DPA_EINVAL) and then chained, units
 * first, then requests in id order, with the key (NULL / 0: none).  Opening
 * a format-1 ledger otherwise fails with DPA_EINVAL naming this. */
dpa_status dpa_ledger_upgrade(const char *location, const void *key, size_t key_len, dpa_error *err);

/* The whole ledger (metadata, units, every request, verbatim) as one JSON
 * document ({"format": "dpacct-ledger-export 1", "meta", "units",
 * "requests"}), from one consistent snapshot: a backup, or the input of
 * dpa_ledger_import_json on another backend. */
dpa_status dpa_ledger_export_json(dpa_ledger *l, char **json, dpa_error *err);

/* Create a new ledger at location holding exactly the exported one (same
 * request ids), in one transaction.  DPA_EINVAL if location already holds a
 * ledger or the document is not an export (nothing is then left at an
 * SQLite location).  The history is replayed (dpa_ledger_verify's checks)
 * inside the transaction: an export that does not replay to its stored
 * states is refused (DPA_EINVAL) and nothing is created. */
dpa_status dpa_ledger_import_json(const char *location, const char *json, dpa_error *err);
/* Import with a chain key (the new ledger's chain is built anew, keyed). */
dpa_status dpa_ledger_import_json_keyed(const char *location, const char *json, const void *key,
                                        size_t key_len, dpa_error *err);

/* A location as it may be printed: a PostgreSQL URI with its password (in
 * the user information or a password= parameter in any case, also in a
 * malformed URI) replaced by "***"; a path as is.  Error messages of the
 * library never hold a password (libpq's are masked too).  Always NUL-terminated (truncated to n - 1 bytes). */
void dpa_ledger_location_display(const char *location, char *buf, size_t n);

/* ======================================================================
 * The budget service's functions (format 3; docs/ledger.md, docs/service.md)
 * ====================================================================== */

/* ---- tenants and tokens ---- */
/* Roles, ordered: each includes the ones below it. */
typedef enum dpa_ledger_role {
    DPA_LEDGER_ROLE_READ = 1,    /* status, history, verify of the tenant's units */
    DPA_LEDGER_ROLE_REQUEST = 2, /* + requests, commit, release */
    DPA_LEDGER_ROLE_ADMIN = 3    /* + create units, freeze, archive, top up, tokens of the tenant */
} dpa_ledger_role;
/* Tenant names: as unit names (1..DPA_LEDGER_MAX_UNIT bytes, UTF-8, no control chars).
 * Every ledger has the tenant "default" (units made by dpa_ledger_add_unit belong to it).
 * DPA_EINVAL if the name is invalid or the tenant exists.  actor NULL: "local".
 * Recorded in the hash chain. */
dpa_status dpa_ledger_add_tenant(dpa_ledger *l, const char *tenant, const char *actor, dpa_error *err);
/* A new bearer token for tenant with role: *token (malloc'ed) is the secret, returned once
 * and never stored (the ledger keeps its SHA-256 only; tokens are 256-bit random, so a plain
 * hash is enough); *token_id (malloc'ed) its public identity ("tok_" + 16 hex), the one
 * recorded as the actor of what it does.  label: free text for humans (may be NULL).
 * DPA_EINVAL for an unknown tenant or a role out of range.  Recorded in the chain. */
dpa_status dpa_ledger_token_create(dpa_ledger *l, const char *tenant, dpa_ledger_role role,
                                   const char *label, const char *actor, char **token,
                                   char **token_id, dpa_error *err);
/* Revoke a token for good (DPA_EINVAL if unknown or already revoked).  Recorded. */
dpa_status dpa_ledger_token_revoke(dpa_ledger *l, const char *token_id, const char *actor,
                                   dpa_error *err);
/* JSON array [{"id","tenant","role":"read|request|admin","label","created","revoked":bool}] of
 * a tenant's tokens (all tenants if NULL); never the secret or its hash. */
dpa_status dpa_ledger_token_list_json(dpa_ledger *l, const char *tenant, char **json, dpa_error *err);
typedef struct dpa_ledger_identity {
    char token_id[32];
    char tenant[DPA_LEDGER_MAX_UNIT + 1];
    dpa_ledger_role role;
} dpa_ledger_identity;
/* Who a bearer token is: DPA_OK and *who; DPA_EINVAL with
 * the message "unknown or revoked token" for a token that is not valid (compare hashes in
 * constant time).  Cheap: one indexed read. */
dpa_status dpa_ledger_authenticate(dpa_ledger *l, const char *token, dpa_ledger_identity *who,
                                   dpa_error *err);

/* ---- units ---- */
typedef struct dpa_ledger_unit_opts {
    const char *tenant;        /* NULL: "default" */
    const char *filter_config; /* NULL: the ledger's default */
    long long period_seconds;  /* 0: no period; > 0: the budget renews every period (below) */
    const char *actor;         /* NULL: "local" */
} dpa_ledger_unit_opts;
/* Unit names stay unique in the whole ledger (a unit belongs to one tenant; another
 * tenant's token gets "unknown unit").  o NULL: all defaults (dpa_ledger_add_unit).
 * DPA_EINVAL as dpa_ledger_add_unit, or for an unknown tenant or a negative period. */
dpa_status dpa_ledger_add_unit_ex(dpa_ledger *l, const char *unit, const dpa_ledger_unit_opts *o,
                                  dpa_error *err);
/* The unit's tenant (*tenant malloc'ed) or DPA_EINVAL "unknown unit". */
dpa_status dpa_ledger_unit_tenant(dpa_ledger *l, const char *unit, char **tenant, dpa_error *err);
/* Lifecycle, each recorded (chain, history) with actor and reason:
 * "freeze": requests refused ("unit is frozen") until "unfreeze"; status/history readable;
 * "archive": permanently read-only (cannot be unfrozen or topped up).
 * DPA_EINVAL for an unknown unit or a transition that is not allowed.
 * actor NULL: "local"; reason NULL: "". */
dpa_status dpa_ledger_unit_lifecycle(dpa_ledger *l, const char *unit, const char *op /* "freeze" |
                                     "unfreeze" | "archive" */, const char *actor, const char *reason,
                                     dpa_error *err);
/* Top up: replace the unit's filter configuration by one of the same filter kind with a
 * budget at least as large in every parameter (else DPA_EINVAL saying which), keeping the
 * spent state; recorded.  Refused (DPA_EINVAL, with the reason) for a filter kind whose
 * state depends on its budget (docs/ledger.md "Top-up"). */
dpa_status dpa_ledger_unit_topup(dpa_ledger *l, const char *unit, const char *filter_config,
                                 const char *actor, const char *reason, dpa_error *err);
/* Periods: a unit with period_seconds P renews its budget at created + k*P (k = 1, 2, ...):
 * the first request (or status read that writes, or explicit dpa_ledger_unit_roll) after such
 * a boundary starts a new generation with the initial state; the old generation's history is
 * kept (each history entry and status carry "generation").  Rolling is a recorded event.
 * dpa_ledger_unit_roll: roll now if a boundary has passed (DPA_OK and nothing recorded if
 * none has; DPA_EINVAL for an unknown unit).  Test hook: the environment variable
 * DPACCT_LEDGER_NOW (seconds since the epoch), read on each call, replaces the clock for
 * the period arithmetic. */
dpa_status dpa_ledger_unit_roll(dpa_ledger *l, const char *unit, const char *actor, dpa_error *err);

/* ---- requests ---- */
typedef struct dpa_ledger_request_opts {
    const char *actor;           /* recorded in the chained history; NULL: "local" */
    const char *idempotency_key; /* NULL: none.  1..200 bytes.  A request with a key already
                                  * used for this unit returns the original decision with
                                  * replayed = 1 and charges nothing; the same key with another
                                  * spec is DPA_EINVAL "idempotency key reused with a different
                                  * request". Keys are kept with the history (forever). */
    int reserve;                 /* 1: an accepted request is charged as a reservation
                                  * (status "reserved") to be committed or released */
} dpa_ledger_request_opts;
/* dpa_ledger_request with options (o NULL: dpa_ledger_request).  A frozen or archived unit
 * refuses it (DPA_EINVAL "unit is frozen" / "unit is archived"), nothing recorded. */
dpa_status dpa_ledger_request_ex(dpa_ledger *l, const char *unit, const char *spec_json,
                                 const dpa_ledger_request_opts *o, dpa_ledger_decision *out,
                                 dpa_error *err);
/* Many requests, decided in order (a later request on the same unit sees the earlier ones'
 * charges) and committed in ONE durable transaction (one fsync): the service's group commit.
 * Each item has its own status in st[i] (bad input for one item does not fail the others,
 * it is simply not recorded); the function's own return is DPA_OK unless the storage failed
 * (then nothing is recorded and every st[i] is that error).  Free each item's out with
 * dpa_ledger_decision_clear. */
typedef struct dpa_ledger_batch_item {
    const char *unit, *spec_json;
    dpa_ledger_request_opts opts;
    dpa_ledger_decision out;     /* filled when st == DPA_OK */
    dpa_status st;
    dpa_error err;
} dpa_ledger_batch_item;
dpa_status dpa_ledger_request_batch(dpa_ledger *l, dpa_ledger_batch_item *items, size_t n,
                                    dpa_error *err);
/* Settle a reservation (request_id of a "reserved" request of unit):
 * commit: it becomes "charged" for good.  release: its charge is removed (the unit's state
 * becomes the replay of its history without it).  Release is allowed only while nothing of
 * the query's result was released to the analyst: the caller asserts that by calling it;
 * docs/ledger.md says why a release after any output would break the filter's guarantee.
 * DPA_EINVAL if the request is not a pending reservation of that unit.  Recorded. */
dpa_status dpa_ledger_reservation(dpa_ledger *l, const char *unit, long long request_id,
                                  const char *op /* "commit" | "release" */, const char *actor,
                                  dpa_error *err);

/* ---- reading, paged ---- */
/* Units of a tenant (all if NULL) in name order after `after` (NULL: from the start), at most
 * limit (1..1000): {"units": [ status objects as dpa_ledger_status_json's, each with
 * "tenant", "lifecycle": "active|frozen|archived", "generation", "period_seconds",
 * "reserved" (count of pending reservations) ], "next": NAME or null}. */
dpa_status dpa_ledger_units_page_json(dpa_ledger *l, const char *tenant, const char *after,
                                      int limit, char **json, dpa_error *err);
/* History entries of a unit (all units if NULL) with id > after_id, time >= since and
 * time < until (ISO 8601 UTC; NULL: unbounded), at most limit (1..1000), in id order:
 * {"entries": [ {"id","unit","time","kind":"request|reserve|commit|release|freeze|unfreeze|
 * archive|topup|roll|add-unit","actor","idempotency_key","generation","spec","decision",
 * "reason","state_before","state_after"} ], "next": ID or null}. */
dpa_status dpa_ledger_history_page_json(dpa_ledger *l, const char *unit, long long after_id,
                                        const char *since, const char *until, int limit,
                                        char **json, dpa_error *err);
/* A cheap liveness check of the storage (one round trip / one read). */
dpa_status dpa_ledger_ping(dpa_ledger *l, dpa_error *err);

/* Free the strings of a decision (not the struct).  NULL-safe. */
void dpa_ledger_decision_clear(dpa_ledger_decision *d);

#ifdef __cplusplus
}
#endif
#endif
