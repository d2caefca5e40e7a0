/* The ledger's handle, shared by its sources (internal).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPA_LEDGER_INTERNAL_H
#define DPA_LEDGER_INTERNAL_H

#include "dpacct/ledger.h"
#include "dpacct/event.h"
#include "dpacct/filter.h"
#include "ledger/chain.h"
#include "ledger/store.h"

struct dpa_ledger {
    dpa_store *store;
    char *default_filter; /* canonical configuration */
    int auto_units;
    int readonly;         /* opened by dpa_ledger_open_readonly */
    double decision_limit; /* seconds; 0: none */
    struct dpa_ledger_worker *worker; /* the decision thread (decide.c), or NULL */
    unsigned char *key;   /* the chain's secret key (NULL: none) */
    size_t key_len;
};

/* The backend of a location: a postgresql:// or postgres:// URI is
 * PostgreSQL, anything else an SQLite path (":memory:" refused).  mode:
 * DPA_STORE_CREATE makes a new one (store.h), DPA_STORE_WRITE opens it for
 * requests, DPA_STORE_READ read-only, DPA_STORE_UPGRADE also format 1. */
dpa_status dpa_ledger_store_open(const char *loc, int mode, dpa_store **out, dpa_error *err);

/* Decide spec (spec_bytes: the length of its JSON) on a filter of
 * configuration config in state state (a snapshot), within limit_s seconds
 * (0: no limit) on *worker (started when NULL; set to NULL when a decision
 * is abandoned), or in this thread when the decision is known to be cheap:
 * *dec, and the state and remaining budget after it (malloc'ed).  Past the
 * limit: DPA_EUNSUPPORTED ("too costly to decide"), nothing decided
 * (decide.c). */
typedef struct dpa_ledger_worker dpa_ledger_worker;
dpa_status dpa_ledger_decide(dpa_ledger_worker **worker, const char *config, const char *state,
                             const dpa_spec *spec, size_t spec_bytes, double limit_s, const char *unit,
                             dpa_filter_decision *dec, char **after, char **remaining, dpa_error *err);
/* End a handle's decision thread (NULL: no-op). */
void dpa_ledger_worker_stop(dpa_ledger_worker *w);

/* msg with every password of the PostgreSQL URI uri (user information,
 * password= in any case, raw and percent-decoded) replaced by "***", into
 * out (NUL-terminated, truncated to n - 1 bytes).  libpq's own messages may
 * quote the URI or a part of it. */
void dpa_ledger_mask_secrets(const char *uri, const char *msg, char *out, size_t n);
/* 1 if s is valid UTF-8 (no overlongs, surrogates or code points > 10FFFF). */
int dpa_ledger_utf8_valid(const char *s);
/* The unit-name rules of dpa_ledger_add_unit. */
dpa_status dpa_ledger_check_unit_name(const char *unit, dpa_error *err);
/* A copy of units (each_unit's callback dpa_ledger_collect_unit appends a
 * deep copy of each; oom = 1 if one failed). */
typedef struct dpa_ledger_unit_list {
    dpa_store_unit *u;
    size_t n, cap;
    int oom;
} dpa_ledger_unit_list;
int dpa_ledger_collect_unit(void *ctx, const dpa_store_unit *u);

/* Replay every unit's history and check the chain inside the caller's
 * transaction (verify.c; anchor NULL or "LINKS:HASH"; *report as verify's). */
dpa_status dpa_ledger_verify_store(dpa_store *s, const dpa_chain_key *key, const char *anchor, int *ok,
                                   char **report, dpa_error *err);
/* Write a new ledger's metadata (meta[i] the values of DPA_CHAIN_META_KEYS
 * but "chain" and "key_check", which this sets from key) and its chain's
 * genesis, in the caller's write transaction. */
dpa_status dpa_ledger_chain_start(dpa_store *s, const dpa_chain_key *key, const char *const meta[DPA_CHAIN_NMETA],
                                  dpa_error *err);
/* Link a new unit (sets u->chain_index, chain_after, chain) or request
 * (r->id = 0: the next id; sets r->id and r->chain) into the chain, under
 * the head's lock, and store it; in the caller's write transaction. */
dpa_status dpa_ledger_chain_unit(dpa_store *s, const dpa_chain_key *key, dpa_store_unit *u, dpa_error *err);
/* dpa_ledger_chain_unit with the ledger's key inside the caller's open write
 * transaction, then commit it (or roll it back on failure): the end of
 * adding a unit (ledger.c, page.c). */
dpa_status dpa_ledger_chain_unit_commit(dpa_ledger *l, dpa_store_unit *u, dpa_error *err);
dpa_status dpa_ledger_chain_request(dpa_store *s, const dpa_chain_key *key, dpa_store_request *r,
                                    dpa_error *err);
/* The pieces of chain_request for many entries in one transaction (a
 * batch): lock and read the head once, append each entry on the head kept
 * in *h (advanced), store the head once before the commit. */
dpa_status dpa_ledger_chain_lock_head(dpa_store *s, dpa_chain_head *h, dpa_error *err);
dpa_status dpa_ledger_chain_append(dpa_store *s, const dpa_chain_key *key, dpa_chain_head *h,
                                   dpa_store_request *r, dpa_error *err);
dpa_status dpa_ledger_chain_store_head(dpa_store *s, const dpa_chain_head *h, dpa_error *err);
/* chain_append without the store: r's id (if 0) and link on *h, *h advanced. */
dpa_status dpa_ledger_chain_next(const dpa_chain_key *key, dpa_chain_head *h, dpa_store_request *r,
                                 char link[DPA_CHAIN_HEX], dpa_error *err);
/* Commit a decision made on the snapshot snap, whose read found the chain's
 * head head: r (every field but id and chain) linked on that head and
 * recorded by the store's commit_request, linked again on the new head each
 * time the head moved; sets r->id.  *conflict = 1 (nothing written) if the
 * unit changed meanwhile: decide again.  Outside any transaction. */
dpa_status dpa_ledger_chain_commit(dpa_store *s, const dpa_chain_key *key, const dpa_store_unit *snap,
                                   dpa_store_request *r, const char *head, int *conflict, dpa_error *err);

/* ---- format 3: the service's history (entries.c, charges.c, tenant.c) ---- */

/* load_filter of ledger.c: configuration and state (NULL: full budget); a
 * stored one that does not load is DPA_ESTORAGE. */
dpa_filter *dpa_ledger_load_filter(const char *config, const char *state, const char *unit, dpa_error *err);
/* A new unit's row (canonical configuration, full-budget state, now). */
dpa_status dpa_ledger_new_unit_row(const char *unit, const char *config, dpa_store_unit *u, dpa_error *err);
dpa_status dpa_ledger_read_only(dpa_error *err);
/* The period clock: DPACCT_LEDGER_NOW (seconds since the epoch; a test
 * hook read on each call) or the real time. */
double dpa_ledger_now_seconds(void);
/* Seconds since the epoch of a stored ISO 8601 UTC time; -1 if malformed. */
double dpa_ledger_time_seconds(const char *iso);
/* t (seconds since the epoch, >= 0) as "YYYY-MM-DDTHH:MM:SS.uuuuuuZ" in buf. */
void dpa_ledger_format_time(double t, char buf[40]);

/* The accepted charges of a unit's current generation, in history order
 * (release replays them without the released one; verify the same). */
typedef struct dpa_ledger_charge {
    long long id;
    char *spec;
    int reserve;  /* 1 for a reservation */
    int settled;  /* reservations: 0 pending, 1 committed, 2 released */
} dpa_ledger_charge;
typedef struct dpa_ledger_charges {
    dpa_ledger_charge *c;
    size_t n, cap;
} dpa_ledger_charges;
/* Follow one history entry of the unit (in id order): a roll empties the
 * list, an accepted request or reservation joins it, a commit or release
 * settles its reservation.  -1 if out of memory. */
int dpa_ledger_charges_note(dpa_ledger_charges *L, const dpa_store_request *r);
dpa_ledger_charge *dpa_ledger_charges_find(dpa_ledger_charges *L, long long id);
/* Pending reservations. */
long long dpa_ledger_charges_pending(const dpa_ledger_charges *L);
/* *state (malloc'ed): the full budget of config charged with every charge
 * but the released ones and `without`, in order. */
dpa_status dpa_ledger_charges_replay(const dpa_ledger_charges *L, const char *config, long long without,
                                     char **state, dpa_error *err);
void dpa_ledger_charges_clear(dpa_ledger_charges *L);
/* "" for the filter kinds whose state is what they spent (a top-up keeps it
 * valid), else why a top-up is refused; then the rule "same kind, every
 * budget parameter at least as large" (DPA_EINVAL naming the parameter). */
dpa_status dpa_ledger_topup_check(const char *old_config, const char *new_config, dpa_error *err);

#endif
