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

#endif
