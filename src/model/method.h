/* The interface every accounting method implements.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * This is the leaf model's half of the contract between the methods and the
 * accountant above them.  The accountant (src/acct/accountant.c) only
 * validates, picks and dispatches: it flattens the spec into distinct leaves
 * (src/model/leaves.h), asks each candidate method whether it can take them,
 * builds the chosen method's state and forwards the queries.  A method lives
 * in its own folder (src/exact, src/pld, src/phi, src/rdp, src/clt) and
 * exports one const table of these operations, declared in that folder's
 * internal header (no mutable global state: the tables are read-only).  The
 * helpers below (src/model/method.c) are what every method shares; nothing in
 * this folder knows a method.
 *
 * Contracts common to every method:
 *  - supports(): cheap (no large allocation), decides whether the method
 *    can evaluate the leaf set L under the options; DPA_EUNSUPPORTED with a
 *    message saying why and which method can, otherwise DPA_OK.
 *  - create(): builds the state for L.  L is lent: the accountant keeps it
 *    alive, unchanged, until destroy().  Errors: DPA_EUNSUPPORTED (as
 *    supports, for what only building reveals), DPA_ENOMEM, DPA_ENUMERIC.
 *  - epsilon()/delta(): arguments already validated (delta in (0, 1), eps
 *    finite); `out` already initialised by dpa_method_result_init (method id,
 *    binding "both", accuracy_met 1, certified 1, order NAN, empty note).
 *    The method fills upper/lower/per-direction bounds and whatever of the
 *    PLD grid fields applies, clears `certified` when its bracket rests on
 *    error estimates rather than proofs, and sets accuracy_met.
 *    `refine` (delta only): 0 asks to answer from what is already built
 *    (methods without builds ignore it).
 *  - profile(): optional (NULL: the accountant asks delta() per point).
 */
#ifndef DPA_METHOD_H
#define DPA_METHOD_H

#include <stddef.h>
#include "dpacct/accountant.h"
#include "model/leaves.h"

typedef struct dpa_method_ops {
    dpa_method id;
    dpa_status (*supports)(const dpa_leafset *L, const dpa_options *opt, dpa_error *err);
    dpa_status (*create)(const dpa_leafset *L, const dpa_options *opt, void **state, dpa_error *err);
    void (*destroy)(void *state);
    dpa_status (*epsilon)(void *state, double delta, dpa_result *out, dpa_error *err);
    dpa_status (*delta)(void *state, double eps, int refine, dpa_result *out, dpa_error *err);
    dpa_status (*profile)(void *state, const double *eps, size_t n, double *upper, double *lower,
                          dpa_error *err);
} dpa_method_ops;

/* Initialise a result for method m (see above). */
void dpa_method_result_init(dpa_result *r, dpa_method m);

/* The refusal every method but rdp gives for zcdp leaves (L->zcdp_path set):
 * DPA_EUNSUPPORTED naming the leaf's JSON path and method rdp. */
dpa_status dpa_method_refuse_zcdp(const dpa_leafset *L, const char *method, dpa_error *err);
/* The refusal every method but pld gives for random allocation (L->ra_path
 * set): DPA_EUNSUPPORTED naming its JSON path and method pld. */
dpa_status dpa_method_refuse_ra(const dpa_leafset *L, const char *method, dpa_error *err);

#endif
