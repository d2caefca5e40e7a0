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
};

/* The backend of a location: a postgresql:// or postgres:// URI is
 * PostgreSQL, anything else an SQLite path.  create = 1 makes a new one. */
dpa_status dpa_ledger_store_open(const char *loc, int create, dpa_store **out, dpa_error *err);

/* Remove what a rolled-back create left at location (an SQLite file). */
void dpa_ledger_discard(const char *location);
/* 1 if s is valid UTF-8 (no overlongs, surrogates or code points > 10FFFF). */
int dpa_ledger_utf8_valid(const char *s);
/* The unit-name rules of dpa_ledger_add_unit. */
dpa_status dpa_ledger_check_unit_name(const char *unit, dpa_error *err);
/* Replay every unit's history inside the caller's transaction (verify's
 * work; *problems_found counts what did not agree, *report as verify's). */
dpa_status dpa_ledger_verify_store(dpa_store *s, int *ok, char **report, dpa_error *err);

#endif
