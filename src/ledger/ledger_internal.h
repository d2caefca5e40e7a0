/* The ledger's handle, shared by its sources (internal).
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPA_LEDGER_INTERNAL_H
#define DPA_LEDGER_INTERNAL_H

#include "dpacct/ledger.h"
#include "ledger/store.h"

struct dpa_ledger {
    dpa_store *store;
    char *default_filter; /* canonical configuration */
    int auto_units;
    int readonly;         /* opened by dpa_ledger_open_readonly */
};

/* The backend of a location: a postgresql:// or postgres:// URI is
 * PostgreSQL, anything else an SQLite path (":memory:" refused).  mode:
 * DPA_STORE_CREATE makes a new one (store.h), DPA_STORE_WRITE opens it for
 * requests, DPA_STORE_READ read-only. */
enum { DPA_STORE_READ, DPA_STORE_WRITE, DPA_STORE_CREATE };
dpa_status dpa_ledger_store_open(const char *loc, int mode, dpa_store **out, dpa_error *err);

/* msg with every password of the PostgreSQL URI uri (user information,
 * password= in any case, raw and percent-decoded) replaced by "***", into
 * out (NUL-terminated, truncated to n - 1 bytes).  libpq's own messages may
 * quote the URI or a part of it. */
void dpa_ledger_mask_secrets(const char *uri, const char *msg, char *out, size_t n);
/* 1 if s is valid UTF-8 (no overlongs, surrogates or code points > 10FFFF). */
int dpa_ledger_utf8_valid(const char *s);
/* The unit-name rules of dpa_ledger_add_unit. */
dpa_status dpa_ledger_check_unit_name(const char *unit, dpa_error *err);
/* Replay every unit's history inside the caller's transaction (verify's
 * work; *problems_found counts what did not agree, *report as verify's). */
dpa_status dpa_ledger_verify_store(dpa_store *s, int *ok, char **report, dpa_error *err);

#endif
