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

/* Free the strings of a decision (not the struct).  NULL-safe. */
void dpa_ledger_decision_clear(dpa_ledger_decision *d);

#ifdef __cplusplus
}
#endif
#endif
