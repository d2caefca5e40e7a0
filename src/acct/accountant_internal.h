/* The accountant's internals that the other files of src/acct/ use.
 * SPDX-License-Identifier: GPL-3.0-or-later */
#ifndef DPA_ACCOUNTANT_INTERNAL_H
#define DPA_ACCOUNTANT_INTERNAL_H

#include "dpacct/accountant.h"
#include "model/leaves.h"

/* The flattened leaves of an accountant (owned by it; valid until it is
 * freed), for library code that needs the structure of the spec, not only
 * the answers (src/acct/gdp_mu.c).  a must not be NULL. */
const dpa_leafset *dpa_accountant_leafset(const dpa_accountant *a);

/* The accountant's method table and state (lent; valid until it is freed),
 * for the multi-count query of src/acct/epsilon_counts.c. */
const struct dpa_method_ops *dpa_accountant_ops(const dpa_accountant *a);
void *dpa_accountant_state(const dpa_accountant *a);

/* eps at delta = 0 of the composition L (src/acct/pure_dp.c,
 * docs/guarantees.md §3.16): the bracket of the largest privacy loss, +inf
 * when it is unbounded or +inf with positive probability; certified
 * whatever the method m (which only labels the result). */
dpa_status dpa_accountant_epsilon_pure(const dpa_leafset *L, dpa_method m, dpa_result *out, dpa_error *err);

#endif
