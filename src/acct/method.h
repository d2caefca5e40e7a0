/* The interface every accounting method implements.
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The accountant (src/acct/accountant.c) only validates, picks and
 * dispatches: it flattens the spec into distinct leaves (src/acct/leaves.h),
 * asks each candidate method whether it can take them, builds the chosen
 * method's state and forwards the queries.  A method lives in its own folder
 * (src/exact, src/pld, src/phi, src/rdp) and exports one const table of
 * these operations (no mutable global state: the tables are read-only).
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
#include "acct/leaves.h"

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

extern const dpa_method_ops dpa_method_exact_ops; /* src/exact/method.c */
extern const dpa_method_ops dpa_method_pld_ops;   /* src/pld/method.c */
extern const dpa_method_ops dpa_method_phi_ops;   /* src/phi/phi_method.c */
extern const dpa_method_ops dpa_method_rdp_ops;   /* src/rdp/rdp_method.c */
extern const dpa_method_ops dpa_method_gdp_ops;   /* src/clt/clt_method.c */
extern const dpa_method_ops dpa_method_clt_ops;   /* src/clt/clt_method.c */

/* Initialise a result for method m (see above). */
void dpa_method_result_init(dpa_result *r, dpa_method m);

/* The refusal every method but rdp gives for zcdp leaves (L->zcdp_path set):
 * DPA_EUNSUPPORTED naming the leaf's JSON path and method rdp. */
dpa_status dpa_method_refuse_zcdp(const dpa_leafset *L, const char *method, dpa_error *err);

/* The flattened leaves of an accountant (owned by it; valid until it is
 * freed), for library code that needs the structure of the spec, not only
 * the answers (src/acct/gdp_mu.c).  a must not be NULL. */
struct dpa_accountant;
const dpa_leafset *dpa_accountant_leafset(const struct dpa_accountant *a);

#endif
